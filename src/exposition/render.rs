//! Rendering the state as Prometheus exposition text: OpenMetrics 1.0 for scrapers that ask
//! for it (Prometheus 2 and 3 do), the classic text format 0.0.4 otherwise. The two differ only
//! in the metadata lines: 0.0.4 names a counter's HELP and TYPE after its `_total` sample and has
//! no `# EOF` (Prometheus 3 rejects a body whose Content-Type does not match what it parses).
//!
//! Written directly rather than through prometheus-client: with its `Collector`, one label
//! vector per sample and a rewrite of the OpenMetrics text into 0.0.4, 10,099 series took
//! 7.3 ms to render (`cargo bench --bench scrape`), over the 5 ms a scrape may take. Here the
//! labels common to a log's or an engine's series are escaped once per scrape, and every
//! sample is one append to one `String`.

use std::fmt::Write;
use std::sync::{Arc, Mutex};

use crate::catalog::{agent, HistogramView, Kind, LeFormat, Metric, Reading, Row};
use crate::engines::{self, Engine, EngineVisitor, Registered, UnitLabels};

use crate::engines::parts::liveness::Status;
use crate::state::{LogState, State, StateSettings};

/// The two text formats we serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    OpenMetrics,
    Text004,
}

impl Format {
    pub fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Format::Text004 => "text/plain; version=0.0.4; charset=utf-8",
        }
    }

    /// Picks the format from an `Accept` header: OpenMetrics when the scraper prefers it
    /// (Prometheus 2.x and 3.x ask for it first), text 0.0.4 otherwise (curl, old scrapers).
    pub fn negotiate(accept: Option<&str>) -> Format {
        let Some(accept) = accept else {
            return Format::Text004;
        };
        let mut best_open_metrics: f32 = 0.0;
        let mut best_text: f32 = 0.0;
        for range in accept.split(',') {
            let mut parts = range.split(';').map(str::trim);
            let media = parts.next().unwrap_or("").to_ascii_lowercase();
            let q = parts
                .find_map(|p| p.strip_prefix("q="))
                .and_then(|q| q.parse::<f32>().ok())
                .unwrap_or(1.0);
            match media.as_str() {
                "application/openmetrics-text" => best_open_metrics = best_open_metrics.max(q),
                "text/plain" | "*/*" | "text/*" => best_text = best_text.max(q),
                _ => {}
            }
        }
        if best_open_metrics > 0.0 && best_open_metrics >= best_text {
            Format::OpenMetrics
        } else {
            Format::Text004
        }
    }
}

/// Renders the state in `format`, liveness as the reader's side last judged it.
pub fn render(state: &Arc<Mutex<State>>, format: Format, _now: f64) -> String {
    // A poisoned lock means a reader thread panicked mid-batch; the numbers are still the best
    // we have, and a scrape must not fail because of it.
    let state = state.lock().unwrap_or_else(|e| e.into_inner());
    let mut out = Exposition {
        out: String::with_capacity(64 * 1024),
        format,
    };
    out.state(&state);
    if format == Format::OpenMetrics {
        out.out.push_str("# EOF\n");
    }
    out.out
}

/// Appends a label value with the exposition's escapes (`\\`, `\"`, `\n`).
pub(crate) fn push_escaped(out: &mut String, value: &str) {
    // memchr3: `contains` with a set of chars tests them one char at a time, and a replay
    // escapes every unit's labels after every stats line.
    if memchr::memchr3(b'\\', b'"', b'\n', value.as_bytes()).is_none() {
        out.push_str(value);
        return;
    }
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// `name="value",...` for a label set, escaped, without braces.
fn label_set<'a>(labels: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    // Room for most label sets at once: grown from empty, a set was copied five times.
    let mut out = String::with_capacity(128);
    push_label_set(&mut out, labels);
    out
}

/// [`label_set`] onto the end of `out`, which must be empty or end a label.
fn push_label_set<'a>(out: &mut String, labels: impl IntoIterator<Item = (&'a str, &'a str)>) {
    for (name, value) in labels {
        if !out.is_empty() {
            out.push(',');
        }
        out.push_str(name);
        out.push_str("=\"");
        push_escaped(out, value);
        out.push('"');
    }
}

/// `# HELP` and `# TYPE` for a family, in `format`.
fn push_family_header(out: &mut String, metric: &Metric, format: Format) {
    let total = if metric.kind == Kind::Counter && format == Format::Text004 {
        "_total"
    } else {
        ""
    };
    let _ = write!(
        out,
        "# HELP {name}{total} {help}\n# TYPE {name}{total} {kind}\n",
        name = metric.name,
        help = metric.help,
        kind = metric.kind.as_str()
    );
}

/// `# HELP` and `# TYPE` for a family, in `format`.
pub fn family_header(metric: &Metric, format: Format) -> String {
    let mut out = String::new();
    push_family_header(&mut out, metric, format);
    out
}

/// A sample's series, `name[suffix]{first,common}`: its text up to the value.
pub fn push_series(
    out: &mut String,
    name: &str,
    suffix: &str,
    first: Option<(&str, &str)>,
    common: &str,
) {
    out.push_str(name);
    out.push_str(suffix);
    out.push('{');
    if let Some((label, label_value)) = first {
        out.push_str(label);
        out.push_str("=\"");
        push_escaped(out, label_value);
        out.push('"');
        if !common.is_empty() {
            out.push(',');
        }
    }
    out.push_str(common);
    out.push('}');
}

/// A histogram bucket's `le` value, as `le` says to spell it.
pub fn push_le(out: &mut String, bound: f64, le: LeFormat) {
    match le {
        LeFormat::Display if bound.is_finite() => {
            let _ = write!(out, "{bound}");
        }
        _ => push_value(out, bound),
    }
}

/// A sample value as both formats spell it.
pub fn push_value(out: &mut String, value: f64) {
    if value.is_nan() {
        out.push_str("NaN");
    } else if value.is_infinite() {
        out.push_str(if value > 0.0 { "+Inf" } else { "-Inf" });
    } else {
        // Debug gives the shortest digits that read back as the same double, with `.0` on whole
        // numbers and an exponent only for very large or small ones.
        let _ = write!(out, "{value:?}");
    }
}

/// The text being written, and which format it is in.
struct Exposition {
    out: String,
    format: Format,
}

/// Where rendered samples go: the exposition text ([`render`]), or a replay's per-series
/// history (`crate::backfill`). One row loop ([`rows`]) feeds both, so a replayed series is
/// exactly the series a scrape shows.
pub trait SampleSink {
    /// A family starts (`# HELP`, `# TYPE`); its samples follow.
    fn family(&mut self, metric: &'static Metric);
    /// One sample: `name[suffix]{first,common} value`.
    fn sample(
        &mut self,
        name: &str,
        suffix: &str,
        first: Option<(&str, &str)>,
        common: &str,
        value: f64,
    );
    /// A classic histogram's `_sum`, `_count` and cumulative `_bucket`s.
    fn histogram(&mut self, name: &str, common: &str, histogram: &HistogramView<'_>);
    /// The samples that follow are of the engine's unit `index` ([`Engine::units`] order), or,
    /// with `None`, its per-log series, and pass one label set, the same text each time (a
    /// replay's history compares it once per unit). Only [`unit_samples`] says so; a scrape
    /// does not.
    fn unit(&mut self, _index: Option<usize>) {}
}

impl SampleSink for Exposition {
    /// `# HELP` and `# TYPE` for a family.
    fn family(&mut self, metric: &'static Metric) {
        push_family_header(&mut self.out, metric, self.format);
    }

    /// One sample: `name[suffix]{first,common} value`.
    fn sample(
        &mut self,
        name: &str,
        suffix: &str,
        first: Option<(&str, &str)>,
        common: &str,
        value: f64,
    ) {
        let out = &mut self.out;
        push_series(out, name, suffix, first, common);
        out.push(' ');
        push_value(out, value);
        out.push('\n');
    }

    fn histogram(&mut self, name: &str, common: &str, histogram: &HistogramView<'_>) {
        let mut buf = String::new();
        let _ = write!(self.out, "{name}_sum{{{common}}} ");
        push_value(&mut self.out, histogram.sum);
        let _ = writeln!(self.out, "\n{name}_count{{{common}}} {}", histogram.count);
        let mut cumulative = 0;
        let bounds = histogram.bounds.iter().copied().chain([f64::INFINITY]);
        let counts = histogram.counts.iter().copied().chain(std::iter::repeat(0));
        for (bound, count) in bounds.zip(counts) {
            cumulative += count;
            buf.clear();
            push_le(&mut buf, bound, histogram.le);
            let _ = writeln!(
                self.out,
                "{name}_bucket{{le=\"{buf}\",{common}}} {cumulative}"
            );
        }
    }
}

impl Exposition {
    /// A family of one sample without labels.
    fn unlabelled(&mut self, metric: &'static Metric, value: f64) {
        self.family(metric);
        self.out.push_str(metric.name);
        self.out.push(' ');
        push_value(&mut self.out, value);
        self.out.push('\n');
    }

    fn state(&mut self, state: &State) {
        let logs: Vec<_> = state
            .shown_logs()
            .map(|log| (label_set(agent_labels(log)), log))
            .collect();
        engines::for_each_engine(&mut EngineRows { out: self, state });

        self.per_log(&agent::LINES_READ, &logs, |l| l.io.lines_read as f64);
        self.per_log_labelled(&agent::LINES_PARSED, &logs, "grammar", |l| {
            l.parsed
                .iter()
                .map(|g| (g.grammar, g.lines as f64))
                .collect()
        });
        self.per_log(&agent::LINES_UNMATCHED, &logs, |l| {
            l.io.lines_unmatched as f64
        });
        self.per_log_labelled(&agent::LINES_REJECTED, &logs, "grammar", |l| {
            l.rejected
                .iter()
                .map(|(grammar, lines)| (*grammar, *lines as f64))
                .collect()
        });
        self.per_log_labelled(&agent::RECORDS_REPEATED, &logs, "grammar", |l| {
            l.repeated
                .iter()
                .map(|(grammar, records)| (*grammar, *records as f64))
                .collect()
        });
        self.per_log(&agent::LINES_OUT_OF_ORDER, &logs, |l| l.out_of_order as f64);
        self.per_log(&agent::SERIES_REFUSED, &logs, |l| l.series_refused as f64);
        self.per_log_labelled(&agent::LINES_SKIPPED, &logs, "reason", |l| {
            l.io.skipped()
                .iter()
                .map(|(reason, n)| (*reason, *n as f64))
                .collect()
        });
        let offsets: Vec<_> = logs
            .iter()
            .filter(|(_, log)| log.clock.offset().is_some())
            .cloned()
            .collect();
        self.per_log(&agent::LOG_TIME_OFFSET, &offsets, |l| {
            l.clock.offset().unwrap_or(0.0)
        });
        self.per_log_labelled(&agent::LAST_PARSED_TIMESTAMP, &logs, "grammar", |l| {
            l.parsed
                .iter()
                .map(|g| (g.grammar, g.last_timestamp))
                .collect()
        });
        self.per_log(&agent::ROTATIONS, &logs, |l| l.io.rotations as f64);
        self.per_log(&agent::TRUNCATIONS, &logs, |l| l.io.truncations as f64);
        self.per_log(&agent::OPEN_ERRORS, &logs, |l| l.io.open_errors as f64);
        self.per_log(&agent::OPEN, &logs, |l| if l.io.open { 1.0 } else { 0.0 });
        self.per_log(&agent::OFFSET, &logs, |l| l.io.offset as f64);
        self.engine_log_series(&logs);
        if let Some(reload) = &state.config_reload {
            let successful = f64::from(u8::from(reload.successful));
            self.unlabelled(&agent::CONFIG_LAST_RELOAD_SUCCESSFUL, successful);
            let at = reload.last_success_at;
            self.unlabelled(&agent::CONFIG_LAST_RELOAD_SUCCESS_TIMESTAMP, at);
        }
        self.family(&agent::BUILD_INFO);
        let version = label_set([("version", env!("CARGO_PKG_VERSION"))]);
        self.sample(agent::BUILD_INFO.name, "", None, &version, 1.0);
    }

    /// Every engine's per-log series ([`Engine::log_series`]), a family at a time.
    fn engine_log_series(&mut self, logs: &[(String, &LogState)]) {
        let mut families: Vec<(&'static Metric, Vec<(&String, f64)>)> = Vec::new();
        for (common, log) in logs {
            for (metric, value) in log.engines.iter().flat_map(|e| e.log_series()) {
                match families.iter_mut().find(|(m, _)| m.name == metric.name) {
                    Some((_, samples)) => samples.push((common, value)),
                    None => families.push((metric, vec![(common, value)])),
                }
            }
        }
        for (metric, samples) in families {
            self.family(metric);
            let suffix = if metric.kind == Kind::Counter {
                "_total"
            } else {
                ""
            };
            for (common, value) in samples {
                self.sample(metric.name, suffix, None, common, value);
            }
        }
    }

    fn per_log(
        &mut self,
        metric: &'static Metric,
        logs: &[(String, &LogState)],
        read: impl Fn(&LogState) -> f64,
    ) {
        if logs.is_empty() {
            return;
        }
        self.family(metric);
        let suffix = if metric.kind == Kind::Counter {
            "_total"
        } else {
            ""
        };
        for (common, log) in logs {
            self.sample(metric.name, suffix, None, common, read(log));
        }
    }

    /// A per-log family with one more label, written after `log` as the agent's series are.
    fn per_log_labelled(
        &mut self,
        metric: &'static Metric,
        logs: &[(String, &LogState)],
        label: &str,
        read: impl Fn(&LogState) -> Vec<(&'static str, f64)>,
    ) {
        let values: Vec<_> = logs
            .iter()
            .flat_map(|(common, log)| read(log).into_iter().map(move |(v, x)| (common, v, x)))
            .collect();
        if values.is_empty() {
            return;
        }
        self.family(metric);
        let suffix = if metric.kind == Kind::Counter {
            "_total"
        } else {
            ""
        };
        let mut labels = String::new();
        for (common, label_value, value) in values {
            labels.clear();
            labels.push_str(common);
            labels.push(',');
            labels.push_str(label);
            labels.push_str("=\"");
            push_escaped(&mut labels, label_value);
            labels.push('"');
            self.sample(metric.name, suffix, None, &labels, value);
        }
    }
}

/// One engine's catalog table over its units (labels written once, escaped), in row
/// order: a family appears only when some unit has a value for it.
fn rows<T, L: AsRef<str>>(
    out: &mut impl SampleSink,
    table: &'static [Row<T>],
    units: &[(L, &T)],
    status: fn(&T) -> Status,
) {
    for row in table {
        let suffix = total_suffix(&row.metric);
        let name = row.metric.name;
        // The family's header goes before its first sample, if it has one. Nothing is
        // collected first: a replay renders an engine after every stats line, and a
        // collection per row was most of that cost.
        let mut family = PendingFamily {
            metric: &row.metric,
            started: false,
        };
        let shown = units
            .iter()
            .filter(|(_, unit)| row.shown_while_down() || !status(unit).is_down());
        for (common, unit) in shown {
            let common = common.as_ref();
            match row.read {
                Reading::One(read) => {
                    if let Some(value) = read(unit) {
                        family.start(out);
                        out.sample(name, suffix, None, common, value);
                    }
                }
                Reading::Labelled(label, read) => {
                    for (label_value, value) in read(unit) {
                        family.start(out);
                        out.sample(name, suffix, Some((label, &label_value)), common, value);
                    }
                }
                Reading::LabelledStatic(label, read) => {
                    for (label_value, value) in read(unit) {
                        family.start(out);
                        out.sample(name, suffix, Some((label, label_value)), common, value);
                    }
                }
                Reading::LabelledOne(label, read) => {
                    if let Some((label_value, value)) = read(unit) {
                        family.start(out);
                        out.sample(name, suffix, Some((label, label_value)), common, value);
                    }
                }
                Reading::Histogram(read) => {
                    let histogram = read(unit);
                    if histogram.count > 0 {
                        family.start(out);
                        out.histogram(name, common, &histogram);
                    }
                }
            }
        }
    }
}

/// A family whose header is written once, before its first sample.
struct PendingFamily {
    metric: &'static Metric,
    started: bool,
}

impl PendingFamily {
    fn start(&mut self, out: &mut impl SampleSink) {
        if !self.started {
            out.family(self.metric);
            self.started = true;
        }
    }
}

/// Renders each engine's rows over the units of every shown log, in [`engines::for_each_engine`]
/// order.
struct EngineRows<'a> {
    out: &'a mut Exposition,
    state: &'a State,
}

impl EngineVisitor for EngineRows<'_> {
    fn visit<E: Registered>(&mut self) {
        let settings = &self.state.settings;
        let mut units = Vec::new();
        for log in self.state.shown_logs() {
            push_units::<E>(&mut units, settings, log);
        }
        rows(self.out, E::TABLE, &units, E::status);
    }
}

/// Each unit of `log`'s engine `E` with its label set (written once, escaped).
fn push_units<'a, E: Registered>(
    units: &mut Vec<(String, &'a E::Unit)>,
    settings: &'a StateSettings,
    log: &'a LogState,
) {
    let engine = log.engine::<E>();
    let own = own_labels::<E>(settings, log);
    for (labels, unit) in engine.labelled_units(&log.view(), settings) {
        debug_assert!(
            labels.iter().all(|(name, _)| E::UNIT_LABELS.contains(name)),
            "{}: a unit label missing from UNIT_LABELS, so not reserved",
            E::NAME
        );
        let pairs = labels.iter().map(|(n, v)| (*n, v.as_str()));
        units.push((label_set(pairs.chain(own.iter().copied())), unit));
    }
}

/// The log's own labels that go after its units' of engine `E`: less the names the engine's
/// units set (a config cannot name them: they are reserved; this keeps a scrape valid whatever
/// got through).
fn own_labels<'a, E: Engine>(
    settings: &'a StateSettings,
    log: &'a LogState,
) -> Vec<(&'a str, &'a str)> {
    let mut own = log_labels(settings, log);
    own.retain(|(name, _)| !E::UNIT_LABELS.contains(name));
    own
}

/// The label sets of one engine's units in one log, kept between a replay's records: made
/// again only when a unit's labels may have changed (a model named, an engine added). Asking
/// the engine for its units' labels after every record was a tenth of a replay.
#[derive(Default)]
pub struct UnitLabelSets {
    /// Whether the units' labels must be asked again: the record may have changed them.
    pub stale: bool,
    /// The log's own labels they were made with.
    own: Vec<(String, String)>,
    /// Each unit's labels, and its label set written out.
    units: Vec<(UnitLabels, String)>,
    /// The label set of the log's per-log series.
    agent: String,
}

impl UnitLabelSets {
    /// Brings the sets up to `units` (each with its labels) and `own` (the log's labels).
    fn update<T>(&mut self, units: &mut [(UnitLabels, &T)], own: &[(&str, &str)]) {
        let same_own = self.own.len() == own.len()
            && self
                .own
                .iter()
                .zip(own)
                .all(|((n, v), (on, ov))| n == on && v == ov);
        if !same_own {
            self.own = own
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect();
            self.units.clear();
        }
        self.units.truncate(units.len());
        for (index, (labels, _)) in units.iter_mut().enumerate() {
            if self
                .units
                .get(index)
                .is_some_and(|(known, _)| known == labels)
            {
                continue;
            }
            let pairs = labels.iter().map(|(n, v)| (*n, v.as_str()));
            let text = label_set(pairs.chain(own.iter().copied()));
            let labels = std::mem::take(labels);
            match self.units.get_mut(index) {
                Some(known) => *known = (labels, text),
                None => self.units.push((labels, text)),
            }
        }
    }
}

/// Some series of one engine of one log, as a scrape would show them now: for each unit
/// `Some(index)` of `selected` ([`Engine::units`] order), `out.unit(Some(index))` and its rows;
/// for `None`, `out.unit(None)` and the engine's per-log series. Liveness is as last judged.
/// A replay calls this after each record, for what the record changed.
pub fn unit_samples(
    out: &mut impl SampleSink,
    settings: &StateSettings,
    log: &LogState,
    engine: usize,
    selected: &[Option<usize>],
    sets: &mut UnitLabelSets,
) {
    let Some(state) = log.engines.nth(engine) else {
        return;
    };
    if selected.iter().any(Option::is_some) {
        engines::for_each_engine(&mut SomeUnits {
            out: &mut *out,
            settings,
            log,
            name: state.name(),
            selected,
            sets: &mut *sets,
        });
    }
    if !selected.contains(&None) {
        return;
    }
    let series = state.log_series();
    if series.is_empty() {
        return;
    }
    out.unit(None);
    sets.agent.clear();
    push_label_set(&mut sets.agent, agent_labels(log));
    for (metric, value) in series {
        out.family(metric);
        out.sample(metric.name, total_suffix(metric), None, &sets.agent, value);
    }
}

/// Renders the rows of the engine named `name` over some of one log's units.
struct SomeUnits<'a, S> {
    out: &'a mut S,
    settings: &'a StateSettings,
    log: &'a LogState,
    name: &'static str,
    selected: &'a [Option<usize>],
    sets: &'a mut UnitLabelSets,
}

impl<S: SampleSink> EngineVisitor for SomeUnits<'_, S> {
    fn visit<E: Registered>(&mut self) {
        if E::NAME != self.name {
            return;
        }
        let engine = self.log.engine::<E>();
        // A record that changed one unit (and so no unit's labels: Engine::record_unit)
        // leaves the label sets as they were.
        if self.sets.stale || self.sets.units.len() != engine.unit_count() {
            let mut labelled = engine.labelled_units(&self.log.view(), self.settings);
            let own = own_labels::<E>(self.settings, self.log);
            self.sets.update(&mut labelled, &own);
            self.sets.stale = false;
        }
        for &index in self.selected.iter().flatten() {
            let (Some(unit), Some((_, labels))) =
                (engine.nth_unit(index), self.sets.units.get(index))
            else {
                continue;
            };
            self.out.unit(Some(index));
            rows(self.out, E::TABLE, &[(labels.as_str(), unit)], E::status);
        }
    }
}

/// `_total` for a counter's samples, nothing for the others.
fn total_suffix(metric: &Metric) -> &'static str {
    if metric.kind == Kind::Counter {
        "_total"
    } else {
        ""
    }
}

/// The labels of the agent's own series of a log: `log`, and those its path gave.
fn agent_labels(log: &LogState) -> impl Iterator<Item = (&str, &str)> {
    let path = log
        .path_labels
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()));
    std::iter::once(("log", &*log.label)).chain(path)
}

/// A log's own labels: its `[[log]] labels`, those its path gave, then the global ones it does
/// not override. Written both ways, `{gpu="0",gpu="all"}` makes Prometheus reject the whole
/// scrape. (A capture of `path_labels` named like a label of either table is refused at
/// start-up, so only the entry's and the global labels can meet here.)
fn log_labels<'a>(settings: &'a StateSettings, log: &'a LogState) -> Vec<(&'a str, &'a str)> {
    let global = settings
        .constant_labels
        .iter()
        .filter(|(name, _)| !log.labels.iter().any(|(own, _)| own == name));
    log.labels
        .iter()
        .chain(&log.path_labels)
        .chain(global)
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_2_and_3_get_open_metrics_and_curl_gets_text() {
        let prometheus_2 = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        let prometheus_3 = "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1";
        assert_eq!(Format::negotiate(Some(prometheus_2)), Format::OpenMetrics);
        assert_eq!(Format::negotiate(Some(prometheus_3)), Format::OpenMetrics);
        assert_eq!(Format::negotiate(Some("*/*")), Format::Text004);
        assert_eq!(
            Format::negotiate(Some("text/plain;version=0.0.4")),
            Format::Text004
        );
        assert_eq!(Format::negotiate(None), Format::Text004);
    }

    #[test]
    fn label_values_are_escaped_and_values_spelled_as_prometheus_reads_them() {
        let mut out = String::new();
        push_escaped(&mut out, "a\\b\"c\nd");
        assert_eq!(out, "a\\\\b\\\"c\\nd");
        for (value, text) in [
            (14.0, "14.0"),
            (0.631, "0.631"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "+Inf"),
            (-f64::INFINITY, "-Inf"),
        ] {
            let mut out = String::new();
            push_value(&mut out, value);
            assert_eq!(out, text);
        }
    }

    #[test]
    fn text_004_names_counters_by_their_samples_and_open_metrics_by_their_family() {
        let metric = &<crate::engines::vllm::State as Engine>::TABLE
            .iter()
            .find(|m| m.metric.name == "vllm:generation_tokens")
            .unwrap()
            .metric;
        let mut text = Exposition {
            out: String::new(),
            format: Format::Text004,
        };
        text.family(metric);
        assert_eq!(text.out, "# HELP vllm:generation_tokens_total Number of generation tokens processed.\n# TYPE vllm:generation_tokens_total counter\n");
        let mut open = Exposition {
            out: String::new(),
            format: Format::OpenMetrics,
        };
        open.family(metric);
        assert_eq!(open.out, "# HELP vllm:generation_tokens Number of generation tokens processed.\n# TYPE vllm:generation_tokens counter\n");
    }
}
