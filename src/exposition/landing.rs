//! The landing page at `/`: "is it working?" answered per log and per engine, then the
//! settings in force and the build. A browser (which asks for `text/html`) gets HTML with a
//! few lines of embedded CSS and no external asset, since inference hosts often reach no CDN;
//! curl and scripts get the same tables as aligned plain text.
//!
//! The page is gathered under the state lock into [`Page`] (plain data) and rendered after
//! the lock is released: `table` writes the tables in either format, `charts` each seen
//! engine's last hour ([`crate::state::history`]).

mod charts;
mod table;

use std::fmt::Write as _;
use std::sync::Arc;

use crate::catalog::{agent, HistogramView, Metric};
use crate::engines::parts::liveness::Status;
use crate::engines::{self, EngineVisitor, LandingCell, Registered};
use crate::log_settings::LogSettings;
use crate::printable::escape_controls;
use crate::samples::{LabelSet, SampleSink, SampleSource};
use crate::source::LogSpec;
use crate::state::{LogState, State, UNRECOGNISED_AFTER_LINES};
use charts::Chart;
use table::{escape, html_table, text_table, tone_class, Cell, Table, Tone};

/// Everything the page says, as data.
pub struct Page {
    telemetry_path: String,
    summary: Vec<Cell>,
    warnings: Vec<String>,
    tables: Vec<Table>,
}

/// "12 s ago", or what to say when there is no time.
fn age(now: f64, at: Option<f64>, none: &str) -> String {
    match at {
        Some(at) if now >= at => format!("{} ago", duration((now - at).round() as u64)),
        Some(_) => "just now".to_string(),
        None => none.to_string(),
    }
}

/// How long ago a line of `log` stamped `at` was written, on the log's own timeline (whatever
/// zone it writes), or, for a stamp ahead of the agent's clock at `now`, that it is: "in 5 min
/// (stamped ahead of this host's clock)", never "just now".
fn line_age(log: &LogState, now: f64, at: Option<f64>, none: &str) -> String {
    match at {
        Some(at) if at - now >= AHEAD_SLACK_SECONDS => format!(
            "in {} (stamped ahead of this host's clock)",
            duration((at - now).round() as u64)
        ),
        _ => age(log.log_now(now), at, none),
    }
}

/// How far ahead of the agent's clock a stamp may be and still be read as "now": a writer's
/// clock a moment ahead, a stamp rounded up.
const AHEAD_SLACK_SECONDS: f64 = 2.0;

/// Seconds as `45 s`, `12 min`, `3 h 5 min` or `4 d 2 h`.
pub fn duration(seconds: u64) -> String {
    match seconds {
        s if s < 120 => format!("{s} s"),
        s if s < 3600 => format!("{} min", s / 60),
        s if s < 86_400 => format!("{} h {} min", s / 3600, s % 3600 / 60),
        s => format!("{} d {} h", s / 86_400, s % 86_400 / 3600),
    }
}

fn status_cell(status: Status) -> Cell {
    let tone = match status {
        Status::Up => Tone::Good,
        Status::Idle => Tone::Quiet,
        Status::Down(_) => Tone::Bad,
    };
    let text = match status {
        Status::Down(_) => format!("down ({})", status.as_str()),
        _ => status.as_str().to_string(),
    };
    Cell::toned(text, tone)
}

/// Whether a log is open, and if not, why.
fn file_cell(log: &LogState, now: f64) -> Cell {
    if log.io.open {
        Cell::toned("open", Tone::Good)
    } else if let Some(gone) = log.gone_since {
        Cell::toned(
            format!(
                "gone {} (its series go after --log-expiry)",
                age(now, Some(gone), "")
            ),
            Tone::Quiet,
        )
    } else if log.io.open_errors > 0 {
        Cell::toned(
            format!(
                "cannot open it ({} attempts; the agent's log says why and the fix)",
                log.io.open_errors
            ),
            Tone::Bad,
        )
    } else {
        Cell::toned("waiting for the file to appear", Tone::Quiet)
    }
}

/// One followed file's row of the Logs table.
fn log_row(state: &State, log: &LogState, sources: &[LogSettings], now: f64) -> Vec<Cell> {
    let grammars: Vec<String> = log
        .parsed
        .iter()
        .map(|g| format!("{} {}", g.grammar, g.lines))
        .collect();
    let rejected: u64 = log.rejected.iter().map(|(_, n)| n).sum();
    let skipped: u64 = log.io.skipped().iter().map(|(_, n)| n).sum();
    vec![
        Cell::code(log.label.to_string()),
        Cell::plain(zone_shown(log, sources)),
        file_cell(log, now),
        Cell::plain(log.io.offset.to_string()),
        Cell::plain(log.io.lines_read.to_string()),
        Cell::plain(grammars.join(", ")),
        Cell::toned(
            rejected.to_string(),
            if rejected > 0 { Tone::Bad } else { Tone::Plain },
        ),
        Cell::plain(skipped.to_string()),
        Cell::plain(line_age(log, now, log.latest_line_at, "none yet")),
        Cell::plain(log.model_name_shown(&state.settings)),
    ]
}

/// The zone a log's times are read in, and the offset learned from its live lines if any.
fn zone_shown(log: &LogState, sources: &[LogSettings]) -> String {
    let mut zone = sources
        .iter()
        .find(|l| l.spec == log.source)
        .map_or("", |l| l.timezone.name())
        .to_string();
    if log.clock.is_auto() && log.clock.correction() != 0.0 {
        let _ = write!(
            zone,
            "; learned: the log's times are {:+.2} h off",
            log.clock.correction() / 3600.0
        );
    }
    zone
}

/// The Logs table: a row per followed file, and one per glob that matches no file yet.
fn log_table(state: &State, sources: &[LogSettings], now: f64) -> Table {
    let mut rows: Vec<Vec<Cell>> = state
        .shown_logs()
        .map(|log| log_row(state, log, sources, now))
        .collect();
    for source in sources {
        let is_glob = matches!(source.spec, LogSpec::Glob(_));
        if is_glob && !state.iter_logs().any(|log| log.source == source.spec) {
            let mut row = vec![
                Cell::code(source.given.clone()),
                Cell::plain(source.timezone.name()),
                Cell::toned("no file matches yet (watched)", Tone::Quiet),
            ];
            row.resize_with(10, || Cell::plain(""));
            rows.push(row);
        }
    }
    let headers = vec![
        "log",
        "time zone",
        "file",
        "offset (bytes)",
        "lines read",
        "records parsed",
        "rejected",
        "skipped",
        LAST_LINE_PARSED,
        "model",
    ];
    Table::new("Logs", headers, rows).or_else("No log is followed.")
}

/// The Logs table's column for the newest line any grammar recognised (a stats line, a start-up
/// line, a request); an engine's table says when its own last stats line was written.
const LAST_LINE_PARSED: &str = "last line parsed";

/// A section per engine seen (a unit in a shown log): its table and its last hour; then one
/// line naming the engines read but not seen.
fn engine_tables(state: &State, now: f64) -> Vec<Table> {
    let mut tables = EngineTables {
        state,
        now,
        tables: Vec::new(),
        unseen: Vec::new(),
    };
    engines::for_each_engine(&mut tables);
    let mut sections = tables.tables;
    if !tables.unseen.is_empty() {
        let names = tables.unseen.join(", ");
        let note = if sections.is_empty() {
            format!("llmtail reads {names}: none seen in these logs yet.")
        } else {
            format!("Also read: {names}: none seen in these logs.")
        };
        sections.push(Table::new("Other engines", Vec::new(), Vec::new()).or_else(note));
    }
    sections
}

/// Each engine's table: its units, one row each, in [`engines::for_each_engine`] order.
struct EngineTables<'a> {
    state: &'a State,
    now: f64,
    tables: Vec<Table>,
    /// The engines no shown log has a unit of.
    unseen: Vec<&'static str>,
}

impl EngineVisitor for EngineTables<'_> {
    fn visit<E: Registered>(&mut self) {
        let mut rows = Vec::new();
        for log in self.state.shown_logs() {
            let engine = log.engine::<E>();
            for cells in engine.landing_rows(&log.view(), &self.state.settings) {
                let mut row = vec![Cell::code(log.label.to_string())];
                row.extend(
                    cells
                        .into_iter()
                        .map(|cell| landing_cell(cell, log, self.now)),
                );
                rows.push(row);
            }
        }
        if rows.is_empty() {
            self.unseen.push(E::DISPLAY_NAME);
            return;
        }
        let mut headers = vec!["log"];
        headers.extend(E::LANDING.headers);
        let ring = self.state.history.ring(E::INDEX);
        let charts = Chart::gather(ring, E::CHARTED, self.now);
        self.tables
            .push(Table::new(E::LANDING.title, headers, rows).with_charts(charts));
    }
}

fn landing_cell(cell: LandingCell, log: &LogState, now: f64) -> Cell {
    match cell {
        LandingCell::Text(text) => Cell::plain(text),
        LandingCell::Status(status) => status_cell(status),
        LandingCell::Age { at, none } => Cell::plain(line_age(log, now, at, none)),
    }
}

/// What the page shows of the settings in force: the logs as given, and each setting as a user
/// would type it (`crate::settings_shown` writes them from the configuration).
#[derive(Debug, Clone, Default)]
pub struct SettingsShown {
    pub telemetry_path: String,
    pub logs: Vec<LogSettings>,
    /// `(setting, value)`, in the order shown; the last reload's row goes after the first two.
    pub rows: Vec<(&'static str, String)>,
}

/// The settings in force, and the last reload.
fn settings_table(
    shown: &SettingsShown,
    reload: Option<&(f64, Result<String, String>)>,
    now: f64,
) -> Table {
    let reload = match reload {
        None => {
            "none since start-up (SIGHUP or POST /-/reload reads the config file again)".to_string()
        }
        Some((at, Ok(summary))) => format!("{}: {summary}", age(now, Some(*at), "")),
        Some((at, Err(why))) => format!(
            "{}: refused, the running configuration stays: {why}",
            age(now, Some(*at), "")
        ),
    };
    let mut rows: Vec<(&str, String)> = shown.rows.clone();
    rows.insert(rows.len().min(2), ("last reload", reload));
    let rows = rows
        .into_iter()
        .map(|(name, value)| vec![Cell::code(name), Cell::plain(value)])
        .collect();
    Table::new("Settings in force", vec!["setting", "value"], rows)
}

/// The remote-write receivers' counters, read from the sources' series as any output reads
/// them (`llmtail_remote_write_*{url}`), so the page needs no remote-write type.
#[derive(Default)]
struct ReceiverCounts {
    /// The column of the family being read, when it is one the table shows.
    column: Option<usize>,
    /// Each receiver's URL, and its samples sent, failed, dropped and queued.
    receivers: Vec<(String, [u64; 4])>,
}

/// The families of the receiver table's columns, in order.
const RECEIVER_COLUMNS: [&Metric; 4] = [
    &agent::REMOTE_WRITE_SAMPLES_SENT,
    &agent::REMOTE_WRITE_SAMPLES_FAILED,
    &agent::REMOTE_WRITE_SAMPLES_DROPPED,
    &agent::REMOTE_WRITE_QUEUE_SAMPLES,
];

impl SampleSink for ReceiverCounts {
    fn family(&mut self, metric: &'static Metric) {
        self.column = RECEIVER_COLUMNS.iter().position(|m| m.name == metric.name);
    }

    fn sample(
        &mut self,
        _name: &str,
        _suffix: &str,
        first: Option<(&str, &str)>,
        common: &LabelSet,
        value: f64,
    ) {
        let Some(column) = self.column else {
            return;
        };
        let mut labels = first.into_iter().chain(common.pairs());
        let Some((_, url)) = labels.find(|(name, _)| *name == "url") else {
            return;
        };
        let index = match self.receivers.iter().position(|(known, _)| known == url) {
            Some(index) => index,
            None => {
                self.receivers.push((url.to_string(), [0; 4]));
                self.receivers.len() - 1
            }
        };
        self.receivers[index].1[column] = value as u64;
    }

    fn histogram(&mut self, _name: &str, _common: &LabelSet, _histogram: &HistogramView<'_>) {}
}

/// One row per remote-write receiver: its counters, dropped samples in red.
fn remote_write_table(sources: &[Arc<dyn SampleSource + Send + Sync>]) -> Option<Table> {
    let mut counts = ReceiverCounts::default();
    for source in sources {
        source.samples(&mut counts);
    }
    if counts.receivers.is_empty() {
        return None;
    }
    let rows = counts
        .receivers
        .into_iter()
        .map(|(url, [sent, failed, dropped, queued])| {
            let tone = if dropped > 0 { Tone::Bad } else { Tone::Good };
            vec![
                Cell::code(url),
                Cell::plain(sent.to_string()),
                Cell::plain(failed.to_string()),
                Cell::toned(dropped.to_string(), tone),
                Cell::plain(queued.to_string()),
            ]
        })
        .collect();
    Some(Table::new(
        "Remote write (samples pushed)",
        vec!["receiver", "sent", "failed (retried)", "dropped", "queued"],
        rows,
    ))
}

fn build_table() -> Table {
    let row = vec![
        Cell::plain(env!("CARGO_PKG_VERSION")),
        Cell::plain(format!(
            "{}-{}",
            std::env::consts::ARCH,
            std::env::consts::OS
        )),
        Cell::code("llmtail_build_info"),
    ];
    Table::new("Build", vec!["version", "target", "metrics"], vec![row])
}

/// One sentence per kind of thing followed: how many are well, how many not.
fn summary(state: &State, caught_up: bool) -> Vec<Cell> {
    let logs: Vec<&LogState> = state.shown_logs().collect();
    let open = logs.iter().filter(|l| l.io.open).count();
    let unreadable = state.not_open().len();
    let statuses: Vec<Status> = logs
        .iter()
        .flat_map(|l| l.engines.iter().flat_map(|e| e.statuses()))
        .collect();
    let up = statuses.iter().filter(|s| **s == Status::Up).count();
    let idle = statuses.iter().filter(|s| **s == Status::Idle).count();
    let down = statuses.iter().filter(|s| s.is_down()).count();
    let mut cells = vec![Cell::toned(
        format!("{open} of {} log files open", logs.len()),
        if open == logs.len() && !logs.is_empty() {
            Tone::Good
        } else {
            Tone::Plain
        },
    )];
    if unreadable > 0 {
        cells.push(Cell::toned(
            format!("{unreadable} cannot be opened"),
            Tone::Bad,
        ));
    }
    cells.push(Cell::toned(
        format!("{up} engines up, {idle} idle, {down} down"),
        if down > 0 { Tone::Bad } else { Tone::Good },
    ));
    if !caught_up {
        cells.push(Cell::toned(
            "still reading what the logs held at start-up",
            Tone::Quiet,
        ));
    }
    cells
}

/// The warning for a log whose times read a zone's offset from the agent's clock.
fn zone_offset_warning(log: &LogState, sources: &[LogSettings], now: f64) -> Option<String> {
    let offset = log.clock.zone_offset()?;
    let zone = sources
        .iter()
        .find(|l| l.spec == log.source)?
        .timezone
        .clone();
    let writer_zone = crate::timezone::zone_explaining(offset, zone.zone(), now);
    let advice = crate::pipeline::zone_offset_advice(offset, zone.name(), &writer_zone);
    Some(format!("{}: {}", log.label, advice.replace("\n  ", ". ")))
}

/// Warnings a user must act on.
fn warnings(state: &State, sources: &[LogSettings], now: f64) -> Vec<String> {
    // First what keeps the agent from being ready: a log it cannot read says nothing at all.
    let mut warnings: Vec<String> = state.not_open().iter().map(|n| n.to_string()).collect();
    for log in state.shown_logs() {
        if log.nothing_recognised_in(UNRECOGNISED_AFTER_LINES) {
            warnings.push(log.nothing_recognised_warning());
        }
        warnings.extend(zone_offset_warning(log, sources, now));
        for warning in log.engines.iter().flat_map(|e| e.warnings()) {
            warnings.push(format!("{}: {warning}", log.label));
        }
        let rejected: u64 = log.rejected.iter().map(|(_, n)| n).sum();
        if rejected > 0 {
            warnings.push(format!(
                "{}: {rejected} records looked like an engine's stats but were rejected (a \
                 changed format, a cut-off line, or an impossible value); the agent's log quotes \
                 them.",
                log.label
            ));
        }
    }
    warnings
}

impl Page {
    /// Gathers the page from the state (judged at `now`) and the settings in force.
    pub fn gather(state: &State, settings: &SettingsShown, now: f64) -> Page {
        let reload = state
            .config_reload
            .as_ref()
            .and_then(|r| r.last_reload.as_ref());
        Page {
            telemetry_path: settings.telemetry_path.clone(),
            summary: summary(state, state.caught_up),
            warnings: warnings(state, &settings.logs, now),
            tables: vec![log_table(state, &settings.logs, now)]
                .into_iter()
                .chain(engine_tables(state, now))
                .chain([settings_table(settings, reload, now), build_table()])
                .collect(),
        }
    }

    /// Adds how the pushes to each remote-write receiver fare, as `sources` count them,
    /// before the settings (nothing without receivers).
    pub fn with_receivers(mut self, sources: &[Arc<dyn SampleSource + Send + Sync>]) -> Page {
        if let Some(table) = remote_write_table(sources) {
            let settings = self.tables.len().saturating_sub(2);
            self.tables.insert(settings, table);
        }
        self
    }

    pub fn html(&self) -> String {
        let path = escape(&self.telemetry_path);
        let mut out = String::new();
        let _ = write!(
            out,
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width\"><title>llmtail</title>\n\
             <style>{CSS}{}</style></head><body>\n<h1>llmtail <small>{}</small></h1>\n\
             <p>Follows the logs of LLM inference engines and serves their stats as Prometheus \
             metrics: <a href=\"{path}\">{path}</a> &middot; <a href=\"/-/healthy\">/-/healthy</a> \
             &middot; <a href=\"/-/ready\">/-/ready</a></p>\n<p class=\"summary\">",
            charts::CSS,
            env!("CARGO_PKG_VERSION")
        );
        for cell in &self.summary {
            let _ = write!(
                out,
                "<span class=\"{}\">{}</span> ",
                tone_class(cell.tone),
                escape(&cell.text)
            );
        }
        out.push_str("</p>\n");
        for warning in &self.warnings {
            let _ = writeln!(
                out,
                "<p class=\"warning\"><strong>{}</strong></p>",
                escape(warning)
            );
        }
        for table in &self.tables {
            html_table(&mut out, table);
        }
        out.push_str("</body></html>\n");
        out
    }

    pub fn text(&self) -> String {
        let mut out = format!(
            "llmtail {}: metrics at {}, health at /-/healthy and /-/ready\n",
            env!("CARGO_PKG_VERSION"),
            escape_controls(&self.telemetry_path)
        );
        let summary: Vec<_> = self
            .summary
            .iter()
            .map(|c| escape_controls(&c.text))
            .collect();
        let _ = writeln!(out, "{}.", summary.join("; "));
        for warning in &self.warnings {
            let _ = writeln!(out, "\nWARNING {}", escape_controls(warning));
        }
        for table in &self.tables {
            text_table(&mut out, table);
        }
        out
    }
}

const CSS: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}\
h1 small{font-weight:normal;color:#777}h2{margin-top:1.6em;font-size:1.15em}\
table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}\
th{background:#f2f2f2}code{font-size:13px;white-space:nowrap}.good{color:#16702e;font-weight:600}\
.bad{color:#b3261e;font-weight:600}.quiet{color:#777}.summary span{margin-right:1.2em}\
.warning{background:#fff4e5;border-left:4px solid #e8a33d;padding:.4em .8em}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_a_person_says_them() {
        assert_eq!(duration(45), "45 s");
        assert_eq!(duration(720), "12 min");
        assert_eq!(duration(3 * 3600 + 300), "3 h 5 min");
        assert_eq!(duration(4 * 86_400 + 7200), "4 d 2 h");
    }
}
