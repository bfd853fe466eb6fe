//! `llmtail replay`: whole logs in, Prometheus history out. The logs go through the agent's
//! own pipeline (reader, envelope, grammar, state), read from their first byte as
//! `--one-shot` reads them; after each record an engine takes, the series of what the record
//! changed (exactly what a scrape at that moment would show of it) are taken into a
//! [`History`] at the record's time. Once every log is read, the history is written as
//! OpenMetrics text for `promtool tsdb create-blocks-from openmetrics`.
//!
//! What a record changed: the one unit it is about (a vLLM stats line: its engine), or every
//! unit of its engine (a start-up line). The other units, whose values stand, are written
//! again once their last samples are 15 s old ([`history::UNIT_REWRITTEN_AFTER_MS`]), so
//! that a unit that went quiet keeps counters as dense as a scrape's, and its liveness
//! judged. So a query at any line's time sees every series as that line left it, and a
//! DP engine's lines write only that engine's series: on a log whose two engines print in
//! turn, half the samples, and half the time.
//!
//! Only the engine a record changed is rendered, into per-series buffers: rendering the whole
//! state as text after every stats line would cost a scrape per line.

pub mod args;
pub mod history;
pub mod out;
pub mod progress;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::Context;

use crate::clock::Clock;
use crate::config::Settings;
use crate::pipeline::{new_state, Applied, Pipeline, Reading, RecordObserver};
use crate::samples::{self, UnitLabelSets};
use crate::source::{Reader, SourceOptions};
use crate::state::{LogState, StateSettings};
use args::Window;
pub use history::History;

/// What a replay took in and wrote, for the summary on stderr.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    pub lines: u64,
    pub bytes: u64,
    /// Records placed at their time and written.
    pub records: u64,
    /// Records without any time: they changed the state, but could not be placed.
    pub unplaced: u64,
    /// Records outside `--since`/`--until`: they changed the state, nothing was written.
    pub outside_window: u64,
    /// Records dated before an earlier record of their log: written at that record's time.
    pub out_of_order: u64,
    /// Records in a DST fold's repeated hour, read as its second pass to keep time running on.
    pub dst_second_pass: u64,
    /// Records dated before 1970: refused (Prometheus's blocks cannot hold them).
    pub before_1970: u64,
    pub samples: usize,
    pub series: usize,
    /// How many times the history, larger than its memory budget, was spilled to a
    /// temporary file.
    pub spills: usize,
    /// The first and last time written (seconds since the epoch).
    pub span: Option<(f64, f64)>,
    pub seconds: f64,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let span = match self.span {
            Some((first, last)) => format!("{} to {}", utc(first), utc(last)),
            None => "nothing".to_string(),
        };
        let per_second = |n: f64| n / self.seconds.max(1e-9);
        write!(
            f,
            "llmtail replay: {} lines ({:.1} MB) in {:.2} s ({:.0} MB/s, {:.0} lines/s); {} records written, {} samples in {} series, {}",
            self.lines,
            self.bytes as f64 / 1e6,
            self.seconds,
            per_second(self.bytes as f64) / 1e6,
            per_second(self.lines as f64),
            self.records,
            self.samples,
            self.series,
            span,
        )?;
        if self.unplaced > 0 {
            write!(
                f,
                "; {} records left out: their lines carry no time",
                self.unplaced
            )?;
        }
        if self.outside_window > 0 {
            write!(
                f,
                "; {} records outside --since/--until (counted, not written)",
                self.outside_window
            )?;
        }
        if self.out_of_order > 0 {
            write!(
                f,
                "; {} records dated before an earlier line of their log, written at that line's time",
                self.out_of_order
            )?;
        }
        if self.dst_second_pass > 0 {
            write!(
                f,
                "; {} records in a DST fold's repeated hour read with the later offset",
                self.dst_second_pass
            )?;
        }
        if self.spills > 0 {
            write!(
                f,
                "; the history, larger than memory, spilled {} times to temporary files",
                self.spills
            )?;
        }
        if self.before_1970 > 0 {
            write!(
                f,
                "; {} records dated before 1970 refused (not written)",
                self.before_1970
            )?;
        }
        Ok(())
    }
}

/// Seconds since the epoch as an RFC 3339 UTC time.
fn utc(seconds: f64) -> String {
    jiff::Timestamp::from_millisecond((seconds * 1000.0).round() as i64)
        .map_or_else(|_| format!("{seconds}"), |t| t.to_string())
}

/// The replay's side of the pipeline: takes the series of the units each record changed.
struct Recorder {
    history: History,
    /// The units' label sets of each engine written, by its index in the history.
    label_sets: Vec<UnitLabelSets>,
    /// The units (and, as `None`, the per-log series) to write after the record at hand.
    due: Vec<Option<usize>>,
    window: Window,
    summary: Summary,
}

impl RecordObserver for Arc<Mutex<Recorder>> {
    fn applied(&mut self, log: &mut LogState, applied: Applied, settings: &StateSettings) {
        let mut recorder = self.lock().unwrap_or_else(|e| e.into_inner());
        let Some(time) = applied.line_time else {
            recorder.summary.unplaced += 1;
            return;
        };
        if time < 0.0 {
            recorder.summary.before_1970 += 1;
            if recorder.summary.before_1970 == 1 {
                tracing::warn!(
                    log = %log.label,
                    "a record is dated before 1970, which Prometheus's blocks cannot hold; refused (and every later one, counted in the summary)\n  fix: check the log's times and --log-timezone"
                );
            }
            return;
        }
        let Some(state) = log.engines.nth_mut(applied.engine) else {
            return;
        };
        // As a scrape at the line's time would: an engine judged down shows no gauges.
        state.judge(time, settings);
        let units = (state.unit_count(), applied.unit);
        if !recorder.window.contains(time) {
            recorder.summary.outside_window += 1;
            return;
        }
        let recorder = &mut *recorder;
        recorder.summary.records += 1;
        recorder.summary.span = Some(match recorder.summary.span {
            Some((first, last)) => (first.min(time), last.max(time)),
            None => (time, time),
        });
        let history = &mut recorder.history;
        let group = history.begin(&log.label, applied.engine, time, units, &mut recorder.due);
        if group == recorder.label_sets.len() {
            recorder.label_sets.push(UnitLabelSets::default());
        }
        let sets = &mut recorder.label_sets[group];
        sets.stale |= applied.unit.is_none();
        samples::unit_samples(history, settings, log, applied.engine, &recorder.due, sets);
        history.end();
    }
}

/// Whether every log can be read (a file that opens, a glob with a match), as `--one-shot`
/// asks: a history of nothing would say nothing of why.
pub fn check_inputs(settings: &Settings) -> anyhow::Result<()> {
    for log in &settings.logs {
        crate::run::check_readable(&log.spec, &log.given)?;
    }
    Ok(())
}

/// Replays the logs `settings` name into `out`; `progress` draws a bar on stderr.
pub fn replay(
    settings: &Settings,
    window: Window,
    clock: Clock,
    out: &mut dyn Write,
    progress: bool,
) -> anyhow::Result<Summary> {
    replay_within(
        settings,
        window,
        clock,
        out,
        progress,
        history::MEMORY_BUDGET,
    )
}

/// [`replay`], holding at most `memory_budget` bytes of samples in memory: tests set it small
/// to make a small log spill.
#[doc(hidden)]
pub fn replay_within(
    settings: &Settings,
    window: Window,
    clock: Clock,
    out: &mut dyn Write,
    progress: bool,
    memory_budget: usize,
) -> anyhow::Result<Summary> {
    let started = Instant::now();
    check_inputs(settings)?;
    let recorder = Arc::new(Mutex::new(Recorder {
        history: History::with_memory_budget(memory_budget),
        label_sets: Vec::new(),
        due: Vec::new(),
        window,
        summary: Summary::default(),
    }));
    let state = new_state(settings);
    crate::run::say_auto_zones_read_locally(settings, "llmtail replay");
    let mut pipeline = Pipeline::new(settings, Arc::clone(&state), clock)
        .reading(Reading::Replay)
        .with_observer(Box::new(Arc::clone(&recorder)));
    let options = SourceOptions {
        max_line_bytes: settings.max_line_bytes,
        ..SourceOptions::default()
    };
    let specs: Vec<_> = settings.logs.iter().map(|l| l.spec.clone()).collect();
    let reader = Reader::new(specs.clone(), options).context("cannot read the logs")?;
    let mut bar = progress::Progress::new(&specs, Arc::clone(&state), &mut pipeline, progress);
    reader.read_to_end(&mut bar);
    bar.finish();
    drop(pipeline);
    let recorder = Arc::into_inner(recorder)
        .context("the replay's recorder is still in use")?
        .into_inner()
        .unwrap_or_else(|e| e.into_inner());
    let mut summary = recorder.summary;
    {
        let state = state.lock().unwrap_or_else(|e| e.into_inner());
        summary.lines = state.iter_logs().map(|l| l.io.lines_read).sum();
        summary.out_of_order = state.iter_logs().map(|l| l.out_of_order).sum();
        summary.dst_second_pass = state.iter_logs().map(|l| l.dst_second_pass).sum();
        summary.bytes = state.iter_logs().map(|l| l.io.offset).sum();
    }
    summary.series = recorder.history.series_count();
    summary.spills = recorder.history.spills();
    summary.samples = recorder
        .history
        .write(out)
        .context("cannot write the OpenMetrics text")?;
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}
