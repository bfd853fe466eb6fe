//! State: what the logs have said so far, per log and per engine.
//!
//! The pipeline applies each parsed record here; the exposition reads it on a scrape. The
//! state is a pure function of the lines applied (their order and timestamps), which is what
//! makes `--from start` rebuild exactly what a long-running agent would show. The one part that
//! is not, [`history`], is what the agent served over the last hour on its own clock, for the
//! landing page's charts; nothing else reads it.

#[cfg(test)]
mod cost;
pub mod history;
pub mod log_clock;
pub mod readiness;
pub mod repeats;

use std::sync::Arc;

use llmtail_grammars::Parsed;
use serde::{Deserialize, Serialize};

use crate::engines::parts::caps::{Refused, SeriesGuard};
use crate::engines::{
    self, EngineSetup, EngineStates, EngineVisitor, LogContext, LogView, Registered,
};
use crate::source::{LogSpec, SkipReason};
use history::History;
use log_clock::LogClock;
pub use readiness::{CannotOpen, GivenLog, NotOpen, UNRECOGNISED_AFTER_LINES};
use repeats::RecentRecords;

pub use crate::engines::parts::settings::StateSettings;

/// How the configuration was loaded (serving only), as Prometheus says of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigReload {
    /// The last load (start-up or reload) succeeded.
    pub successful: bool,
    /// When (clock seconds) the configuration in force was loaded.
    pub last_success_at: f64,
    /// The last reload, when there was one: when, and what changed or why nothing did.
    pub last_reload: Option<(f64, Result<String, String>)>,
}

impl ConfigReload {
    pub fn loaded_at(at: f64) -> ConfigReload {
        ConfigReload {
            successful: true,
            last_success_at: at,
            last_reload: None,
        }
    }

    pub fn note(&mut self, at: f64, outcome: Result<String, String>) {
        self.successful = outcome.is_ok();
        if self.successful {
            self.last_success_at = at;
        }
        self.last_reload = Some((at, outcome));
    }
}

/// Everything a scrape shows.
#[derive(Debug)]
pub struct State {
    pub settings: StateSettings,
    /// Serving only: how the configuration was loaded.
    pub config_reload: Option<ConfigReload>,
    /// Indexed by `LogId`.
    pub logs: Vec<Option<LogState>>,
    /// The logs given (`--log`, `[[log]]`), as the user wrote them: a glob that matches
    /// nothing is in no [`LogState`].
    pub given_logs: Vec<GivenLog>,
    /// Every file that existed at start-up has been read to its end once.
    pub caught_up: bool,
    /// The series every log's engines and ranks cost, against `--max-series`.
    pub series: usize,
    /// Each engine's last hour, for the landing page's charts.
    pub history: History,
}

/// How often each grammar matched in one log, and when it last did.
#[derive(Debug, Clone, PartialEq)]
pub struct GrammarCount {
    pub grammar: &'static str,
    pub lines: u64,
    pub last_timestamp: f64,
}

/// What the reader did with one log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LogIo {
    /// Not saved: whether the file is open is the reader's to say after a restart.
    #[serde(skip)]
    pub open: bool,
    pub offset: u64,
    pub rotations: u64,
    pub truncations: u64,
    pub open_errors: u64,
    pub lines_read: u64,
    pub lines_unmatched: u64,
    pub skipped_too_long: u64,
    pub skipped_truncated_partial: u64,
    pub skipped_invalid_envelope: u64,
}

impl LogIo {
    pub fn count_skip(&mut self, reason: SkipReason) {
        match reason {
            SkipReason::TooLong => self.skipped_too_long += 1,
            SkipReason::TruncatedPartial => self.skipped_truncated_partial += 1,
        }
    }

    /// `(reason label, count)` for every reason.
    pub fn skipped(&self) -> [(&'static str, u64); 3] {
        [
            (SkipReason::TooLong.as_str(), self.skipped_too_long),
            (
                SkipReason::TruncatedPartial.as_str(),
                self.skipped_truncated_partial,
            ),
            ("invalid_envelope", self.skipped_invalid_envelope),
        ]
    }
}

/// One followed file (a path, or one match of a glob).
#[derive(Debug, Clone)]
pub struct LogState {
    /// The path as given or matched: the `log` label.
    pub label: Arc<str>,
    /// Which `--log` (or `[[log]]`) it is followed for.
    pub source: LogSpec,
    /// Labels from the config file's `[[log]]` entry for this source.
    pub labels: Vec<(String, String)>,
    /// Labels its `path_labels` took from this file's path (none when the path did not match).
    /// On every series of the file, the agent's own per-log ones too.
    pub path_labels: Vec<(String, String)>,
    /// The `[[log]]` entry's model name, before `--model-name`.
    pub model_name: Option<String>,
    pub io: LogIo,
    /// Why the path does not open, until it does: what `/-/ready` and the landing page say.
    pub cannot_open: Option<CannotOpen>,
    /// The log was said to hold no line llmtail reads ([`UNRECOGNISED_AFTER_LINES`]).
    pub told_nothing_recognised: bool,
    pub parsed: Vec<GrammarCount>,
    /// Per grammar, lines that were its engine's record but were rejected (cut off, changed,
    /// or carrying a value the engine cannot print).
    pub rejected: Vec<(&'static str, u64)>,
    /// Records refused by a cap ([`caps`], `--max-series`).
    pub series_refused: u64,
    /// Per grammar, records that repeated a recent record exactly ([`repeats`]): not applied.
    pub repeated: Vec<(&'static str, u64)>,
    /// Records dated before a record the log held earlier.
    pub out_of_order: u64,
    /// Records whose time fell in a DST fold's repeated hour and was read as its second pass,
    /// so that the log's time runs on (for `llmtail replay`'s summary).
    pub dst_second_pass: u64,
    /// The latest time a parsed line of this log carried.
    pub latest_line_at: Option<f64>,
    /// How the log's clock stands against the agent's: what liveness is judged by.
    pub clock: LogClock,
    /// The last records, to tell a line printed twice.
    pub recent: RecentRecords,
    /// Found by a glob: once gone past `--log-expiry`, the log is forgotten altogether (a glob
    /// over dated names would otherwise keep every file it ever matched).
    pub from_glob: bool,
    /// When (clock seconds) the path stopped naming any file, with everything read and closed.
    pub gone_since: Option<f64>,
    /// Gone for longer than `--log-expiry`: its series are not shown (a named path comes back
    /// to the same counters; see [`State::forget_expired`]).
    pub expired: bool,
    /// What the lines said, one state per engine.
    pub engines: EngineStates,
}

impl LogState {
    /// `vllm_version`: `--vllm-version` or the entry's `vllm_version`, for a log whose own
    /// version line is gone.
    pub fn new(
        label: Arc<str>,
        source: LogSpec,
        labels: Vec<(String, String)>,
        model_name: Option<String>,
        vllm_version: Option<&str>,
    ) -> Self {
        LogState {
            label,
            source,
            labels,
            path_labels: Vec::new(),
            model_name,
            io: LogIo::default(),
            cannot_open: None,
            told_nothing_recognised: false,
            parsed: Vec::new(),
            rejected: Vec::new(),
            series_refused: 0,
            repeated: Vec::new(),
            out_of_order: 0,
            dst_second_pass: 0,
            latest_line_at: None,
            clock: LogClock::default(),
            recent: RecentRecords::default(),
            from_glob: false,
            gone_since: None,
            expired: false,
            engines: EngineStates::new(&EngineSetup { vllm_version }),
        }
    }

    /// This log's state of engine `E`.
    pub fn engine<E: Registered>(&self) -> &E {
        self.engines.get()
    }

    /// This log's state of engine `E`, to change.
    pub fn engine_mut<E: Registered>(&mut self) -> &mut E {
        self.engines.get_mut()
    }

    /// What the log's engines need to know of it, to label and show their units.
    pub fn view(&self) -> LogView<'_> {
        LogView {
            label: &self.label,
            model_name: self.model_name.as_deref(),
        }
    }

    /// A reload's settings for this log's engines.
    pub fn reconfigure_engines(&mut self, setup: &EngineSetup<'_>) {
        for engine in self.engines.iter_mut() {
            engine.reconfigure(setup);
        }
    }

    /// The model the landing page shows for this log: the first its lines name, else the
    /// `[[log]]` entry's, else `--model-name`.
    pub fn model_name_shown<'a>(&'a self, settings: &'a StateSettings) -> &'a str {
        self.engines
            .iter()
            .find_map(|e| e.model_name())
            .or(self.model_name.as_deref())
            .or(settings.model_name.as_deref())
            .unwrap_or("")
    }

    /// Counts a record of `grammar` that repeated a recent one; returns how many of this log
    /// repeated one.
    pub fn count_repeat(&mut self, grammar: &'static str) -> u64 {
        match self.repeated.iter_mut().find(|(g, _)| *g == grammar) {
            Some((_, records)) => *records += 1,
            None => self.repeated.push((grammar, 1)),
        }
        self.repeated.iter().map(|(_, records)| records).sum()
    }

    /// The log's own present at agent time `now` ([`LogClock::log_now`]): what its engines are
    /// judged at, and what the ages of its lines are measured from.
    pub fn log_now(&self, now: f64) -> f64 {
        self.clock.log_now(now)
    }

    /// Judges this log's engines at agent time `now`, at the log's own present
    /// ([`LogState::log_now`]): silence is measured on the agent's clock since the log was last
    /// heard from, whatever zone or clock its stamps were written in.
    pub fn judge(&mut self, now: f64, settings: &StateSettings) {
        let log_now = self.log_now(now);
        for engine in self.engines.iter_mut() {
            engine.judge(log_now, settings);
        }
    }

    /// Counts a line `grammar` rejected; returns how many lines of this log have been rejected.
    pub fn reject(&mut self, grammar: &'static str) -> u64 {
        match self.rejected.iter_mut().find(|(g, _)| *g == grammar) {
            Some((_, lines)) => *lines += 1,
            None => self.rejected.push((grammar, 1)),
        }
        self.rejected.iter().map(|(_, lines)| lines).sum()
    }

    /// What this log's engines and ranks cost against `--max-series`.
    pub fn series(&self) -> usize {
        self.engines.series()
    }

    /// Applies one parsed line. `line_time` is when the line says it was written (record head
    /// or envelope, seconds since the epoch); `read_time` is the clock when it was read, used
    /// only for `llmtail_last_parsed_timestamp_seconds` when the line has no time. `series` is
    /// what all logs' engines and ranks cost ([`State::series`]), kept up to date here.
    /// Returns the index in `engines` of the engine whose record it was (a replay writes that
    /// engine's series after it).
    pub fn apply(
        &mut self,
        parsed: &Parsed<'_>,
        line_time: Option<f64>,
        read_time: f64,
        settings: &StateSettings,
        series: &mut usize,
    ) -> usize {
        let at = line_time.unwrap_or(read_time);
        let grammar = parsed.record.grammar();
        match self.parsed.iter_mut().find(|g| g.grammar == grammar) {
            Some(count) => {
                count.lines += 1;
                count.last_timestamp = at;
            }
            None => self.parsed.push(GrammarCount {
                grammar,
                lines: 1,
                last_timestamp: at,
            }),
        }
        if let Some(t) = line_time {
            self.latest_line_at = Some(self.latest_line_at.map_or(t, |l| l.max(t)));
        }
        let log = LogContext {
            settings,
            series: *series,
            label: &self.label,
        };
        let applied = self.engines.apply(parsed, line_time, &log);
        // A model change clears engines: the count goes down as well as up.
        *series = (*series + applied.series_after).saturating_sub(applied.series_before);
        if let Err(refused) = applied.outcome {
            self.refuse(refused, &settings.series);
        }
        applied.engine
    }

    /// Counts a refused record; the first of a log is logged (later ones are the same story).
    fn refuse(&mut self, refused: Refused, guard: &SeriesGuard) {
        self.series_refused += 1;
        if self.series_refused == 1 {
            tracing::warn!(
                log = %self.label,
                refused = refused.what(),
                cap = refused.cap(guard),
                "a record would create series past a cap; not created (counted in llmtail_series_refused_total, logged once per log)"
            );
        }
    }
}

impl State {
    pub fn new(settings: StateSettings) -> Self {
        State {
            settings,
            config_reload: None,
            logs: Vec::new(),
            given_logs: Vec::new(),
            caught_up: false,
            series: 0,
            history: History::default(),
        }
    }

    /// The state of a log, created on first sight.
    pub fn log_mut(&mut self, index: usize) -> Option<&mut LogState> {
        self.logs.get_mut(index).and_then(Option::as_mut)
    }

    pub fn insert_log(&mut self, index: usize, log: LogState) {
        if self.logs.len() <= index {
            self.logs.resize_with(index + 1, || None);
        }
        self.logs[index] = Some(log);
        // A restored log brings its engines; a replaced one takes its own away.
        self.count_series();
    }

    /// What every log's engines and ranks cost, counted again after logs came or went.
    pub fn count_series(&mut self) {
        self.series = self.iter_logs().map(LogState::series).sum();
    }

    pub fn iter_logs(&self) -> impl Iterator<Item = &LogState> {
        self.logs.iter().flatten()
    }

    /// The logs a scrape shows: all but those gone past `--log-expiry`.
    pub fn shown_logs(&self) -> impl Iterator<Item = &LogState> {
        self.iter_logs().filter(|log| !log.expired)
    }

    /// The index of the log labelled `label`, if there is one.
    pub fn find_log(&self, label: &str) -> Option<usize> {
        self.logs
            .iter()
            .position(|log| log.as_ref().is_some_and(|log| *log.label == *label))
    }

    /// Takes the log at `index` out of the state (it moves to another index).
    pub fn take_log(&mut self, index: usize) -> Option<LogState> {
        self.logs.get_mut(index).and_then(Option::take)
    }

    /// Judges which logs are gone past `--log-expiry` at agent time `now`, then every engine's
    /// liveness: what a scrape shows, brought up to date where the state is written (the
    /// pipeline's tick, or before a one-shot prints).
    pub fn judge(&mut self, now: f64) {
        self.forget_expired(now);
        self.judge_liveness(now);
    }

    /// Marks the logs gone for `--log-expiry` at agent time `now` as expired: a glob's are
    /// forgotten (their indices returned, so that whoever reads into them lets go too), a named
    /// path's hidden until it comes back.
    pub fn forget_expired(&mut self, now: f64) -> Vec<usize> {
        let expiry = self.settings.log_expiry;
        let mut forgotten = Vec::new();
        for (index, slot) in self.logs.iter_mut().enumerate() {
            let Some(log) = slot else {
                continue;
            };
            log.expired = log.gone_since.is_some_and(|gone| now - gone >= expiry);
            if log.expired && log.from_glob {
                tracing::info!(log = %log.label, "a file matched by a glob is gone for longer than --log-expiry; its series are dropped");
                *slot = None;
                forgotten.push(index);
            }
        }
        if !forgotten.is_empty() {
            self.count_series();
        }
        forgotten
    }

    /// Judges every engine's liveness at agent time `now`.
    pub fn judge_liveness(&mut self, now: f64) {
        for log in self.logs.iter_mut().flatten() {
            log.judge(now, &self.settings);
        }
    }

    /// Samples every engine's charted gauges into its last hour at agent time `now` (the
    /// judging tick's; see [`history`]). Nothing before the backlog is read: what a log held
    /// shows only through the state it leaves.
    pub fn sample_history(&mut self, now: f64) {
        if !self.caught_up {
            return;
        }
        let mut sampler = HistorySampler {
            logs: &self.logs,
            history: &mut self.history,
            now,
        };
        engines::for_each_engine(&mut sampler);
    }

    /// The latest line time of any log: "now" for a one-shot reading, which shows the logs as
    /// they stood when their last line was written.
    pub fn latest_line_at(&self) -> Option<f64> {
        self.iter_logs()
            .filter_map(|l| l.latest_line_at)
            .reduce(f64::max)
    }
}

/// One sample of every engine that has a unit in a shown log: its charted gauges, combined over
/// its logs.
struct HistorySampler<'a> {
    logs: &'a [Option<LogState>],
    history: &'a mut History,
    now: f64,
}

impl EngineVisitor for HistorySampler<'_> {
    fn visit<E: Registered>(&mut self) {
        // An engine that charts nothing keeps no ring.
        if E::CHARTED.iter().all(Option::is_none) {
            return;
        }
        let mut seen = false;
        let mut values = [None; 4];
        for log in self.logs.iter().flatten().filter(|log| !log.expired) {
            let engine = log.engine::<E>();
            if engine.unit_count() == 0 {
                continue;
            }
            seen = true;
            let charted = engines::Charted::ALL;
            for ((value, new), quantity) in
                values.iter_mut().zip(engine.charted_values()).zip(charted)
            {
                if let Some(new) = new {
                    *value = Some(value.map_or(new, |v: f64| quantity.combine(v, new)));
                }
            }
        }
        if seen {
            self.history.note(E::INDEX, self.now, values);
        }
    }
}
