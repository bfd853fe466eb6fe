//! The agent's own series: per log, what it read, parsed, rejected and skipped, and where it
//! is in the file; each engine's per-log series (`Engine::log_series`); then the whole
//! agent's (the last configuration load, the build). Written through the same [`SampleSink`]
//! as the engines' series, after them, so every output carries them alike.

use crate::catalog::{agent, Metric};
use crate::state::{LogState, State};

use super::{total_suffix, LabelSet, SampleSink};

/// The agent's own series of `state`, a family at a time.
pub(super) fn samples(state: &State, out: &mut impl SampleSink) {
    let logs: Vec<_> = state
        .shown_logs()
        .map(|log| (LabelSet::new(agent_labels(log)), log))
        .collect();
    per_log_series(out, &logs);
    let engine_series = logs.iter().map(|(labels, log)| {
        let series = log.engines.iter().flat_map(|e| e.log_series()).collect();
        (labels, series)
    });
    engine_log_series(out, engine_series);
    let none = LabelSet::default();
    if let Some(reload) = &state.config_reload {
        let successful = f64::from(u8::from(reload.successful));
        out.family(&agent::CONFIG_LAST_RELOAD_SUCCESSFUL);
        out.sample(
            agent::CONFIG_LAST_RELOAD_SUCCESSFUL.name,
            "",
            None,
            &none,
            successful,
        );
        let at = reload.last_success_at;
        out.family(&agent::CONFIG_LAST_RELOAD_SUCCESS_TIMESTAMP);
        out.sample(
            agent::CONFIG_LAST_RELOAD_SUCCESS_TIMESTAMP.name,
            "",
            None,
            &none,
            at,
        );
    }
    out.family(&agent::BUILD_INFO);
    let version = LabelSet::new([("version", env!("CARGO_PKG_VERSION"))]);
    out.sample(agent::BUILD_INFO.name, "", None, &version, 1.0);
}

/// What the agent did with each log: the families of [`agent`] that are per log.
fn per_log_series(out: &mut impl SampleSink, logs: &[(LabelSet, &LogState)]) {
    per_log(out, &agent::LINES_READ, logs, |l| l.io.lines_read as f64);
    per_log_labelled(out, &agent::LINES_PARSED, logs, "grammar", |l| {
        l.parsed
            .iter()
            .map(|g| (g.grammar, g.lines as f64))
            .collect()
    });
    per_log(out, &agent::LINES_UNMATCHED, logs, |l| {
        l.io.lines_unmatched as f64
    });
    per_log_labelled(out, &agent::LINES_REJECTED, logs, "grammar", |l| {
        l.rejected
            .iter()
            .map(|(grammar, lines)| (*grammar, *lines as f64))
            .collect()
    });
    per_log_labelled(out, &agent::RECORDS_REPEATED, logs, "grammar", |l| {
        l.repeated
            .iter()
            .map(|(grammar, records)| (*grammar, *records as f64))
            .collect()
    });
    per_log(out, &agent::LINES_OUT_OF_ORDER, logs, |l| {
        l.out_of_order as f64
    });
    per_log(out, &agent::SERIES_REFUSED, logs, |l| {
        l.series_refused as f64
    });
    per_log_labelled(out, &agent::LINES_SKIPPED, logs, "reason", |l| {
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
    per_log(out, &agent::LOG_TIME_OFFSET, &offsets, |l| {
        l.clock.offset().unwrap_or(0.0)
    });
    per_log_labelled(out, &agent::LAST_PARSED_TIMESTAMP, logs, "grammar", |l| {
        l.parsed
            .iter()
            .map(|g| (g.grammar, g.last_timestamp))
            .collect()
    });
    per_log(out, &agent::ROTATIONS, logs, |l| l.io.rotations as f64);
    per_log(out, &agent::TRUNCATIONS, logs, |l| l.io.truncations as f64);
    per_log(out, &agent::OPEN_ERRORS, logs, |l| l.io.open_errors as f64);
    per_log(
        out,
        &agent::OPEN,
        logs,
        |l| if l.io.open { 1.0 } else { 0.0 },
    );
    per_log(out, &agent::OFFSET, logs, |l| l.io.offset as f64);
}

/// A family of one sample per log (nothing without logs).
fn per_log(
    out: &mut impl SampleSink,
    metric: &'static Metric,
    logs: &[(LabelSet, &LogState)],
    read: impl Fn(&LogState) -> f64,
) {
    if logs.is_empty() {
        return;
    }
    out.family(metric);
    for (labels, log) in logs {
        out.sample(metric.name, total_suffix(metric), None, labels, read(log));
    }
}

/// A per-log family with one more label, written after the log's.
fn per_log_labelled(
    out: &mut impl SampleSink,
    metric: &'static Metric,
    logs: &[(LabelSet, &LogState)],
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
    out.family(metric);
    let mut labels = LabelSet::default();
    for (common, label_value, value) in values {
        labels.copy_from(common);
        labels.push(label, label_value);
        out.sample(metric.name, total_suffix(metric), None, &labels, value);
    }
}

/// Engines' per-log series ([`crate::engines::Engine::log_series`]) of some logs, each
/// with its label set, a family at a time.
pub(super) fn engine_log_series<'a>(
    out: &mut impl SampleSink,
    logs: impl IntoIterator<Item = (&'a LabelSet, Vec<(&'static Metric, f64)>)>,
) {
    let mut families: Vec<(&'static Metric, Vec<(&LabelSet, f64)>)> = Vec::new();
    for (labels, series) in logs {
        for (metric, value) in series {
            match families.iter_mut().find(|(m, _)| m.name == metric.name) {
                Some((_, samples)) => samples.push((labels, value)),
                None => families.push((metric, vec![(labels, value)])),
            }
        }
    }
    for (metric, samples) in families {
        out.family(metric);
        for (labels, value) in samples {
            out.sample(metric.name, total_suffix(metric), None, labels, value);
        }
    }
}

/// The labels of the agent's own series of a log: `log`, and those its path gave.
pub(super) fn agent_labels(log: &LogState) -> impl Iterator<Item = (&str, &str)> {
    let path = log
        .path_labels
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()));
    std::iter::once(("log", &*log.label)).chain(path)
}
