//! The pipeline: the [`Sink`] the source feeds. For each line it runs the remaining stages,
//! envelope -> grammar -> state, under one lock per batch of lines.

use std::cell::Cell;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use jiff::tz::TimeZone;
use llmtail_grammars::{LogAnchors, LogTime, Outcome, Parsed};

use crate::checkpoint::{Checkpoint, FilePosition, SavedLog, VERSION};
use crate::config::{LogSettings, Settings};
use crate::envelope::{Decoded, Decoder, EnvelopeKind};
use crate::path_labels::PathLabels;
use crate::service::ServiceManager;
use crate::source::{FileId, KnownFiles, Lines, LogId, LogSpec, Sink, SkipReason, TailEvent};
use crate::state::engine::EngineSetup;
use crate::state::log_clock::LogClock;
use crate::state::{LogState, State, StateSettings};
use crate::timezone::{resolve_in_order, zone_explaining, Resolved};

/// Where "now" comes from: the wall clock, or a fixed time in tests and goldens.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> f64 + Send + Sync>);

impl Clock {
    /// A clock reading `now` (seconds since the epoch) each time it is asked.
    pub fn new(now: impl Fn() -> f64 + Send + Sync + 'static) -> Clock {
        Clock(Arc::new(now))
    }

    /// The system clock, read once at start and then advanced by the monotonic clock: silence
    /// is measured on it (how long since a log's last line arrived), and a wall clock that NTP
    /// or an operator steps would make an engine look silent for the size of the step.
    pub fn system() -> Clock {
        let started = Instant::now();
        let wall_at_start = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        Clock(Arc::new(move || {
            wall_at_start + started.elapsed().as_secs_f64()
        }))
    }

    pub fn fixed(seconds: f64) -> Clock {
        Clock(Arc::new(move || seconds))
    }

    pub fn now(&self) -> f64 {
        (self.0)()
    }
}

/// How one followed file's lines are read: its envelope, and the zone of times without one.
struct LogInput {
    decoder: Decoder,
    zone: TimeZone,
    /// The zone's name, for what the agent says of an offset.
    zone_name: String,
    /// The log's own first stage: every engine's anchors until its engine is known, then that
    /// engine's and the others' start-up lines'.
    anchors: LogAnchors,
}

impl LogInput {
    fn new(source: Option<&LogSettings>, max_line_bytes: usize) -> LogInput {
        let (envelope, zone, zone_name) = match source {
            Some(source) => (
                source.envelope,
                source.timezone.zone().clone(),
                source.timezone.name().to_string(),
            ),
            None => (EnvelopeKind::Auto, TimeZone::UTC, "UTC".to_string()),
        };
        LogInput {
            decoder: Decoder::new(envelope, max_line_bytes),
            zone,
            zone_name,
            anchors: LogAnchors::new(),
        }
    }

    /// A reload's zone and envelope. The decoder is kept when the envelope stays, so that
    /// what it detected, and a line it holds half of, are not lost.
    fn reconfigure(&mut self, source: &LogSettings, max_line_bytes: usize) {
        self.zone = source.timezone.zone().clone();
        self.zone_name = source.timezone.name().to_string();
        if self.decoder.configured() != source.envelope {
            self.decoder = Decoder::new(source.envelope, max_line_bytes);
        }
    }
}

/// How often the state file is rewritten while lines flow.
pub const CHECKPOINT_INTERVAL: Duration = Duration::from_secs(5);

/// `--state-file`: what was restored at start-up, and where and when to save.
struct StateFile {
    path: PathBuf,
    restored: Option<Checkpoint>,
    /// The reader's registry of files read, saved with the state.
    known: KnownFiles,
    last_saved: Instant,
    /// Lines or events came since the last save.
    changed: bool,
}

/// A configuration reloaded while serving, on its way to the reader's thread.
pub struct Reconfiguration {
    pub settings: Arc<Settings>,
    /// Told once the pipeline has taken it (the reader then follows its logs).
    pub taken: Option<tokio::sync::oneshot::Sender<()>>,
}

/// Envelope, grammar and state for every followed file.
pub struct Pipeline {
    state: Arc<Mutex<State>>,
    /// Each `--log` (or `[[log]]`): what applies to the files it names.
    sources: Vec<LogSettings>,
    /// Reloaded configurations, newest last.
    reconfigurations: Option<std::sync::mpsc::Receiver<Reconfiguration>>,
    inputs: Vec<Option<LogInput>>,
    /// Per log: the file being read and the offset after the last line applied to the state.
    positions: Vec<Option<(FileId, u64)>>,
    state_file: Option<StateFile>,
    max_line_bytes: usize,
    clock: Clock,
    /// systemd's `Type=notify` and watchdog, when serving.
    service: Option<ServiceManager>,
    /// `llmtail replay`: told of every record applied.
    observer: Option<Box<dyn RecordObserver>>,
    reading: Reading,
}

/// What the pipeline reads for, which decides how records are dated and engines judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// `--one-shot`: the logs as they stood when written, judged by their stamps alone.
    Stamps,
    /// Serving: once the catch-up has read what the logs held, a record is a sign of life at
    /// the moment it is read ([`crate::state::log_clock`]).
    Following,
    /// `llmtail replay`: by stamps, and a log's times never run backwards (a record dated
    /// before the previous one is placed at the previous one's time).
    Replay,
}

/// Where the log's first stage first matches in raw bytes (a batch of plain-text lines).
/// Lossy UTF-8 decoding only replaces bytes that are not ASCII and the anchors are ASCII, so a
/// line without a match here yields nothing once decoded either. ANSI colour codes need no
/// stripping first: engines colour the record head (process, level, date, file), never the
/// message text the anchors are taken from. (Looking for ESC in every line before the anchor
/// search cost a tenth of a one-shot run.)
fn first_anchor(anchors: LogAnchors, raw: &[u8]) -> Option<usize> {
    anchors.first_anchor(raw)
}

/// How much of a rejected line a warning quotes.
const QUOTED_CHARS: usize = 200;

/// `text` cut after `chars` characters (on a character boundary).
fn cut(text: &str, chars: usize) -> &str {
    text.char_indices()
        .nth(chars)
        .map_or(text, |(at, _)| &text[..at])
}

/// Counts a record `grammar` rejected in `line`. The 1st, 2nd, 4th, 8th... of a log is logged,
/// as skips are: a changed engine format rejects every stats line.
fn reject(log_state: &mut LogState, grammar: &'static str, line: &str) {
    let rejected = log_state.reject(grammar);
    if rejected.is_power_of_two() {
        tracing::warn!(
            log = %log_state.label,
            grammar,
            rejected_so_far = rejected,
            line = cut(line, QUOTED_CHARS),
            "a line looks like the engine's record but was rejected (cut off, a changed format, or an impossible value)"
        );
    }
}

/// Takes the envelope off a raw line: the engine's message and the envelope's time for it, or
/// `None` for the first part of a split line (held until its last part comes). A line outside
/// the detected envelope is read as plain text, and counted.
fn decode<'a>(
    decoder: &'a mut Decoder,
    raw: &'a [u8],
    log_state: &mut LogState,
) -> Option<(std::borrow::Cow<'a, str>, Option<LogTime>)> {
    // Before decoding, which borrows the decoder: a line is outside an envelope only once one
    // was detected, so this is the envelope it was measured against.
    let envelope = decoder.kind();
    match decoder.decode(raw) {
        Decoded::Message { text, time } => Some((text, time)),
        Decoded::Partial => None,
        Decoded::Outside { text } => {
            // Counted under its old name (`invalid_envelope`): the series is kept.
            log_state.io.skipped_invalid_envelope += 1;
            let outside = log_state.io.skipped_invalid_envelope;
            if outside.is_power_of_two() {
                tracing::info!(
                    log = %log_state.label,
                    envelope = envelope.as_str(),
                    outside_so_far = outside,
                    line = cut(&text, QUOTED_CHARS),
                    "a line is not in this log's envelope; read as plain text (see --envelope)"
                );
            }
            Some((text, None))
        }
    }
}

/// Told of every record a log's engine took, once the state holds it (`llmtail replay`
/// writes the series that engine shows at that moment). `unit` is the only unit of the engine
/// the record changed, when it changed only one
/// ([`EngineState::record_unit`](crate::state::engine::EngineState::record_unit)); `line_time` is
/// when the record says it was written, if it says.
pub trait RecordObserver: Send {
    fn applied(&mut self, log: &mut LogState, applied: Applied, settings: &StateSettings);
}

/// A record a log's engine took, as [`RecordObserver::applied`] is told of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Applied {
    /// The engine's index in the log's `engines`.
    pub engine: usize,
    pub unit: Option<usize>,
    pub line_time: Option<f64>,
}

/// How the records of one batch are dated: the pipeline's [`Reading`], whether the catch-up is
/// over, and the agent's clock.
struct Dating {
    reading: Reading,
    caught_up: bool,
    now: f64,
}

impl Dating {
    /// The time a record is applied at, from `raw`, the time its line says (`None` when it says
    /// none); tells the log's clock ([`LogClock`](crate::state::log_clock::LogClock)) that the
    /// log was heard from, and counts a record dated before an earlier one.
    fn date(&self, raw: Option<f64>, log: &mut LogState) -> Option<f64> {
        let time = match (self.reading, self.caught_up) {
            (Reading::Following, true) => log.clock.heard_live(self.now, raw),
            (Reading::Following, false) => {
                let time = raw.map(|t| t - log.clock.correction());
                if let Some(t) = time {
                    log.clock.heard_backlog(self.now, t);
                }
                time
            }
            (Reading::Stamps | Reading::Replay, _) => raw,
        }?;
        match log.latest_line_at {
            Some(latest) if time < latest => {
                log.out_of_order += 1;
                // A history's counters must not go back in time: Prometheus reads a counter
                // that decreases from one sample to the next as a reset.
                Some(if self.reading == Reading::Replay {
                    latest
                } else {
                    time
                })
            }
            _ => Some(time),
        }
    }
}

/// Applies every record of one message to its log's state; `raw_time` says when its line says
/// a record was written (given the log's previous time), `dating` turns that into the time it is
/// applied at. A line can hold several records (glued by two writers, a `/metrics` dump): each
/// is counted in `lines_parsed`/`lines_rejected`, while `lines_read` and `lines_unmatched` stay
/// counts of physical lines. A record that repeats a recent one ([`crate::state::repeats`]) is
/// counted as such and not applied. Returns whether the line held any record.
#[allow(clippy::too_many_arguments)]
fn apply_records(
    text: &str,
    anchors: &mut LogAnchors,
    raw_time: impl Fn(&Parsed<'_>, Option<f64>) -> Option<Resolved>,
    dating: &Dating,
    log_state: &mut LogState,
    settings: &StateSettings,
    series: &mut usize,
    mut observer: Option<&mut (dyn RecordObserver + 'static)>,
) -> bool {
    let mut any_record = false;
    let mut ordinal = 0u32;
    anchors.each_record(text, |outcome| match outcome {
        Outcome::Parsed(parsed) => {
            any_record = true;
            let raw = raw_time(parsed, log_state.latest_line_at);
            if raw.is_some_and(|r| r.second_pass) {
                log_state.dst_second_pass += 1;
            }
            let line_time = dating.date(raw.map(|r| r.at), log_state);
            let grammar = parsed.record.grammar();
            ordinal += 1;
            if log_state
                .recent
                .is_repeat(grammar, ordinal, line_time, text)
            {
                log_state.count_repeat(grammar);
                return;
            }
            let taken_by = log_state.apply(parsed, line_time, dating.now, settings, series);
            if let (Some(engine), Some(observer)) = (taken_by, observer.as_deref_mut()) {
                let unit = log_state.engines[engine].record_unit(parsed);
                let applied = Applied {
                    engine,
                    unit,
                    line_time,
                };
                observer.applied(log_state, applied, settings);
            }
        }
        Outcome::Rejected { grammar } => {
            any_record = true;
            reject(log_state, grammar, text);
        }
        Outcome::Unmatched => {}
    });
    any_record
}

/// Warns once per log when its times read a whole number of quarter hours (at least half an
/// hour) from the agent's clock: the engine writes them in another zone than they are read in.
fn warn_of_zone_offset(log_state: &mut LogState, input: &LogInput, now: f64) {
    let Some(offset) = log_state.clock.zone_offset_to_warn() else {
        return;
    };
    let writer_zone = zone_explaining(offset, &input.zone, now);
    tracing::warn!(
        log = %log_state.label,
        offset_seconds = offset,
        read_in = %input.zone_name,
        "{}",
        zone_offset_advice(offset, &input.zone_name, &writer_zone)
    );
}

/// What the agent says of a log whose times read `offset` seconds from its clock: the offset,
/// the zone that would explain it, and the fix.
pub fn zone_offset_advice(offset: f64, read_in: &str, writer_zone: &str) -> String {
    let direction = if offset < 0.0 { "behind" } else { "ahead of" };
    let hours = offset.abs() / 3600.0;
    let fix = if writer_zone.starts_with("UTC+") || writer_zone.starts_with("UTC-") {
        "--log-timezone auto (or the timezone of that [[log]] entry) to learn it".to_string()
    } else {
        format!("--log-timezone {writer_zone} (or --log-timezone auto)")
    };
    format!(
        "the log's times read {hours:.2} h {direction} the agent's clock: its engine most likely \
         writes them in {writer_zone}, while they are read in {read_in}; liveness is judged on the \
         agent's clock regardless, but the history's times are off by that much\n  fix: {fix}"
    )
}

/// When the file at `path` was last written, on the agent's clock at `now` (which reads the
/// system clock through the monotonic one: the two are compared as they stand now).
fn modified_at(path: &str, now: f64) -> Option<f64> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let ago = SystemTime::now().duration_since(modified).ok()?;
    Some(now - ago.as_secs_f64())
}

/// The labels the `path_labels` of a file's log (`source`) take from the file's `path`: none
/// without `path_labels`, `Err` with the regex when it does not match. Run once per file, when
/// it is discovered (and at a reload), never per line.
fn labels_from_path<'a>(
    source: Option<&'a LogSettings>,
    path: &str,
) -> Result<Vec<(String, String)>, &'a PathLabels> {
    match source.and_then(|s| s.path_labels.as_ref()) {
        Some(path_labels) => path_labels.labels(path).ok_or(path_labels),
        None => Ok(Vec::new()),
    }
}

/// The state a pipeline built from `settings` starts with.
pub fn new_state(settings: &Settings) -> Arc<Mutex<State>> {
    Arc::new(Mutex::new(State::new(state_settings(settings))))
}

/// What of `settings` shapes how records become series.
fn state_settings(settings: &Settings) -> StateSettings {
    StateSettings {
        stats_interval: settings.vllm_stats_interval,
        model_name: settings.model_name.clone(),
        constant_labels: settings.labels.clone(),
        series: crate::catalog::series_guard(settings.max_series),
        log_expiry: settings.log_expiry.as_secs_f64(),
    }
}

impl Pipeline {
    pub fn new(settings: &Settings, state: Arc<Mutex<State>>, clock: Clock) -> Pipeline {
        Pipeline {
            state,
            sources: settings.logs.clone(),
            reconfigurations: None,
            inputs: Vec::new(),
            positions: Vec::new(),
            state_file: None,
            max_line_bytes: settings.max_line_bytes,
            clock,
            service: None,
            observer: None,
            reading: Reading::Stamps,
        }
    }

    /// How records are dated and engines judged (by stamps unless told otherwise).
    pub fn reading(mut self, reading: Reading) -> Pipeline {
        self.reading = reading;
        self
    }

    /// Tells `observer` of every record applied, after applying it.
    pub fn with_observer(mut self, observer: Box<dyn RecordObserver>) -> Pipeline {
        self.observer = Some(observer);
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Saves the state to `path` as lines flow and at [`Pipeline::finish`], after restoring the
    /// counters of `restored` into the logs it names as they are discovered. `known` is the
    /// reader's registry of files read ([`crate::source::Reader::known_files`]), saved with it.
    pub fn with_state_file(
        mut self,
        path: PathBuf,
        restored: Option<Checkpoint>,
        known: KnownFiles,
    ) -> Pipeline {
        self.state_file = Some(StateFile {
            path,
            restored,
            known,
            last_saved: Instant::now(),
            changed: false,
        });
        self
    }

    /// Takes reloaded configurations from `reconfigurations` (serving only).
    pub fn with_reconfigurations(
        mut self,
        reconfigurations: std::sync::mpsc::Receiver<Reconfiguration>,
    ) -> Pipeline {
        self.reconfigurations = Some(reconfigurations);
        self
    }

    /// Tells systemd when the logs' existing content is read, and pings its watchdog from
    /// the reader's loop (serving only).
    pub fn with_service_manager(mut self, service: ServiceManager) -> Pipeline {
        self.service = Some(service);
        self
    }

    /// Writes the state file once more (the reader has stopped: every position is final).
    pub fn finish(&mut self) {
        if let Some(service) = &self.service {
            service.stopping();
        }
        self.save_checkpoint();
    }

    /// The state and the positions it corresponds to, as the state file keeps them.
    fn checkpoint(&self) -> Checkpoint {
        let state = self.lock();
        let logs = state
            .logs
            .iter()
            .enumerate()
            .filter_map(|(i, log)| {
                let log = log.as_ref()?;
                let position = self
                    .positions
                    .get(i)
                    .copied()
                    .flatten()
                    .map(|(file, offset)| FilePosition { file, offset });
                Some(SavedLog::capture(log, position))
            })
            .collect();
        Checkpoint {
            version: VERSION,
            logs,
            files: self
                .state_file
                .as_ref()
                .map(|f| f.known.saved())
                .unwrap_or_default(),
        }
    }

    fn save_checkpoint(&mut self) {
        if self.state_file.is_none() {
            return;
        }
        let checkpoint = self.checkpoint();
        let Some(state_file) = &mut self.state_file else {
            return;
        };
        state_file.last_saved = Instant::now();
        state_file.changed = false;
        if let Err(e) = checkpoint.save(&state_file.path) {
            tracing::warn!("{e}");
        }
    }
}

impl Pipeline {
    /// A file is followed from now on under `label`: its input, and its state. The state is
    /// that of an earlier file of the same label if one is kept (a path that came back: one
    /// log, one set of series), else what the state file saved of it, else new.
    fn discover(&mut self, index: usize, label: Arc<str>, source: LogSpec) {
        let input = LogInput::new(
            self.sources.iter().find(|s| s.spec == source),
            self.max_line_bytes,
        );
        if self.inputs.len() <= index {
            self.inputs.resize_with(index + 1, || None);
        }
        if self.positions.len() <= index {
            self.positions.resize(index + 1, None);
        }
        self.positions[index] = None;
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let earlier = state.find_log(&label).filter(|&at| at != index);
        let log_state = match earlier.and_then(|at| state.take_log(at)) {
            Some(earlier) => {
                tracing::info!(log = %label, "a log that was gone is back; its counters go on");
                earlier
            }
            None => self.new_log_state(label, source),
        };
        state.insert_log(index, log_state);
        // Logs moved (above) or forgotten by a scrape (a glob's files gone past --log-expiry)
        // need no input any more.
        for (input, log) in self.inputs.iter_mut().zip(&state.logs) {
            if log.is_none() {
                *input = None;
            }
        }
        drop(state);
        self.inputs[index] = Some(input);
    }

    /// A log's state as it starts: empty, or with what the state file saved of it.
    fn new_log_state(&self, label: Arc<str>, source: LogSpec) -> LogState {
        let settings = self.sources.iter().find(|s| s.spec == source);
        let from_glob = matches!(source, LogSpec::Glob(_));
        let mut log_state = LogState::new(
            label.clone(),
            source,
            settings.map(|s| s.labels.clone()).unwrap_or_default(),
            settings.and_then(|s| s.model_name.clone()),
            settings.and_then(|s| s.vllm_version.as_deref()),
        );
        log_state.from_glob = from_glob;
        log_state.clock = LogClock::new(settings.is_some_and(|s| s.timezone.is_auto()));
        log_state.path_labels = labels_from_path(settings, &label).unwrap_or_else(|path_labels| {
            tracing::info!(
                log = %label,
                path_labels = path_labels.pattern(),
                "the path does not match path_labels: its series have no labels from it"
            );
            Vec::new()
        });
        if let Some(saved) = self
            .state_file
            .as_ref()
            .and_then(|f| f.restored.as_ref()?.log(&label))
        {
            saved.restore_into(&mut log_state);
            tracing::info!(log = %label, "restored counters from the state file");
        }
        log_state
    }

    /// Takes a reloaded configuration: the logs no longer given are dropped with their series,
    /// those that stay take their entry's labels, model name, version, zone and envelope, and
    /// keep their counters; the settings every log shares are replaced.
    fn reconfigure(&mut self, settings: &Settings) {
        self.sources.clone_from(&settings.logs);
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.settings = state_settings(settings);
        for (index, slot) in state.logs.iter_mut().enumerate() {
            let Some(log) = slot else {
                continue;
            };
            let source = self.sources.iter().find(|s| s.spec == log.source);
            match source {
                Some(source) => {
                    log.labels.clone_from(&source.labels);
                    log.path_labels =
                        labels_from_path(Some(source), &log.label).unwrap_or_default();
                    log.model_name.clone_from(&source.model_name);
                    log.clock.set_auto(source.timezone.is_auto());
                    log.reconfigure_engines(&EngineSetup {
                        vllm_version: source.vllm_version.as_deref(),
                    });
                    if let Some(Some(input)) = self.inputs.get_mut(index) {
                        input.reconfigure(source, self.max_line_bytes);
                    }
                }
                // Stdin is read for as long as it lasts: it cannot be given again.
                None if log.source == LogSpec::Stdin => {}
                None => {
                    tracing::info!(log = %log.label, "dropped with its series (configuration reloaded)");
                    *slot = None;
                    if let Some(input) = self.inputs.get_mut(index) {
                        *input = None;
                    }
                    if let Some(position) = self.positions.get_mut(index) {
                        *position = None;
                    }
                }
            }
        }
        state.count_series();
    }

    /// Counts what happened to a file in its log's state.
    fn count(&mut self, index: usize, event: TailEvent) {
        let now = self.clock.now();
        let mut state = self.lock();
        let Some(log_state) = state.log_mut(index) else {
            return;
        };
        let io = &mut log_state.io;
        match event {
            TailEvent::Discovered { .. } => {}
            TailEvent::Opened(_) => {
                io.open = true;
                log_state.gone_since = None;
                log_state.expired = false;
            }
            TailEvent::Gone => log_state.gone_since = Some(now),
            TailEvent::Closed => io.open = false,
            TailEvent::Rotated => io.rotations += 1,
            TailEvent::Truncated => io.truncations += 1,
            TailEvent::OpenFailed(_) => io.open_errors += 1,
            TailEvent::Skipped(reason) => {
                io.count_skip(reason);
                let total = io.skipped_too_long + io.skipped_truncated_partial;
                // The 1st, 2nd, 4th, 8th... skip of a log is logged; all are counted.
                if total.is_power_of_two() {
                    let why = match reason {
                        SkipReason::TooLong => "a line longer than --max-line-bytes was skipped",
                        SkipReason::TruncatedPartial => {
                            "an unterminated line was dropped (file truncated, rotated away or closed)"
                        }
                    };
                    tracing::warn!(log = %log_state.label, skipped_so_far = total, "{why}");
                }
            }
            TailEvent::Offset(offset) => io.offset = offset,
        }
    }

    /// Saves the state file if something changed and the last save is old enough.
    fn maybe_save(&mut self) {
        let due = self
            .state_file
            .as_ref()
            .is_some_and(|f| f.changed && f.last_saved.elapsed() >= CHECKPOINT_INTERVAL);
        if due {
            self.save_checkpoint();
        }
    }

    /// Notes that the state (or a position) changed since the last save.
    fn note_change(&mut self) {
        if let Some(state_file) = &mut self.state_file {
            state_file.changed = true;
        }
    }
}

impl Sink for Pipeline {
    fn lines(&mut self, log: LogId, lines: &mut Lines<'_>) {
        let index = log.0 as usize;
        self.note_change();
        let now = self.clock.now();
        let mut guard = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let state = &mut *guard;
        let State {
            logs,
            settings: state_settings,
            series,
            caught_up,
            ..
        } = state;
        let dating = Dating {
            reading: self.reading,
            caught_up: *caught_up,
            now,
        };
        let (
            Some(Some(LogInput {
                decoder,
                zone,
                anchors: log_anchors,
                ..
            })),
            Some(Some(log_state)),
        ) = (self.inputs.get_mut(index), logs.get_mut(index))
        else {
            tracing::warn!(
                log = log.0,
                "lines from a log that was never announced; dropped"
            );
            return;
        };
        let plain = decoder.is_plain();
        // Nine lines in ten hold no anchor: in a plain-text log, judge them on their raw bytes,
        // with one anchor search over the whole batch, before UTF-8 validation and parsing.
        // The log's first stage as it is after the last line read: a record may change it (the
        // splitter searches afresh after each flagged line, the only lines that can).
        let first_stage = Cell::new(*log_anchors);
        let anchors: &dyn Fn(&[u8]) -> Option<usize> = if plain {
            &|raw: &[u8]| first_anchor(first_stage.get(), raw)
        } else {
            &|_: &[u8]| Some(0)
        };
        while let Some((raw, may_parse)) = lines.next_flagged(anchors) {
            log_state.io.lines_read += 1;
            if !may_parse {
                log_state.io.lines_unmatched += 1;
                continue;
            }
            let Some((text, envelope_time)) = decode(decoder, raw, log_state) else {
                continue;
            };
            let time = |parsed: &Parsed<'_>, previous: Option<f64>| {
                // Per record, in this log's zone: a syslog log read across New Year changes
                // year between two lines. The envelope's time wins over the head's.
                let resolve = |t: LogTime| resolve_in_order(&t, zone, now, previous);
                envelope_time
                    .and_then(resolve)
                    .or_else(|| parsed.time.and_then(resolve))
            };
            let observer = self.observer.as_deref_mut();
            let any_record = apply_records(
                &text,
                log_anchors,
                time,
                &dating,
                log_state,
                state_settings,
                series,
                observer,
            );
            first_stage.set(*log_anchors);
            if !any_record {
                log_state.io.lines_unmatched += 1;
            }
        }
        if let Some(Some(input)) = self.inputs.get(index) {
            warn_of_zone_offset(log_state, input, now);
        }
    }

    fn event(&mut self, log: LogId, event: TailEvent) {
        let index = log.0 as usize;
        self.note_change();
        match event {
            TailEvent::Discovered { label, source } => self.discover(index, label, source),
            TailEvent::Offset(offset) => {
                if let Some(Some((_, at))) = self.positions.get_mut(index) {
                    *at = offset;
                }
                self.count(index, TailEvent::Offset(offset));
                // Only here, after an offset, do the state and the saved position agree: every
                // line before the offset is applied, none after it.
                self.maybe_save();
            }
            TailEvent::Opened(file) => {
                if let Some(slot) = self.positions.get_mut(index) {
                    *slot = file.map(|f| (f, 0));
                }
                self.count(index, TailEvent::Opened(file));
            }
            event => self.count(index, event),
        }
    }

    /// Saves the state a while after the last lines, not only when more lines come: a
    /// `kill -9` after a burst then a quiet hour lost the whole burst (and a rotation while
    /// down lost what followed the stale position).
    fn tick(&mut self) {
        self.maybe_save();
        if let Some(service) = &mut self.service {
            service.tick();
        }
    }

    fn new_specs(&mut self) -> Option<Vec<LogSpec>> {
        let receiver = self.reconfigurations.as_ref()?;
        // Only the newest counts when reloads came faster than a round of checks.
        let newest = std::iter::from_fn(|| receiver.try_recv().ok()).last()?;
        self.reconfigure(&newest.settings);
        if let Some(taken) = newest.taken {
            let _ = taken.send(());
        }
        Some(
            newest
                .settings
                .logs
                .iter()
                .map(|l| l.spec.clone())
                .collect(),
        )
    }

    fn caught_up(&mut self) {
        let now = self.clock.now();
        let mut state = self.lock();
        state.caught_up = true;
        if self.reading == Reading::Following {
            for log in state.logs.iter_mut().flatten() {
                let modified = modified_at(&log.label, now);
                log.clock.caught_up(now, modified, log.latest_line_at);
            }
        }
        drop(state);
        tracing::info!("read what the logs held at start-up");
        if let Some(service) = &self.service {
            service.ready();
        }
    }
}
