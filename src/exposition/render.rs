//! Rendering the state as Prometheus exposition text.
//!
//! prometheus-client encodes OpenMetrics; Prometheus' classic text format 0.0.4 differs only
//! in that a counter's HELP and TYPE name the `_total` sample, there is no `# EOF` and no
//! `# UNIT`. So we encode once and rewrite those lines for scrapers that ask for 0.0.4
//! (Prometheus 3 rejects a body whose Content-Type does not match what it parses).

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use crate::catalog::{agent, Kind, Metric, Reading, TrtllmReading, TRTLLM, VLLM_ENGINE};
use crate::state::trtllm::Histogram;
use crate::state::{LogState, State};

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

/// Renders the state in `format`.
pub fn render(state: &Arc<Mutex<State>>, format: Format) -> String {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(StateCollector(state.clone())));
    let mut out = String::with_capacity(16 * 1024);
    prometheus_client::encoding::text::encode(&mut out, &registry)
        .expect("writing to a String cannot fail");
    match format {
        Format::OpenMetrics => out,
        Format::Text004 => to_text_004(&out),
    }
}

/// Rewrites OpenMetrics text as Prometheus text format 0.0.4.
fn to_text_004(open_metrics: &str) -> String {
    let mut out = String::with_capacity(open_metrics.len());
    let mut lines = open_metrics.lines().peekable();
    while let Some(line) = lines.next() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        if let Some(help) = line.strip_prefix("# HELP ") {
            let name = help.split(' ').next().unwrap_or("");
            if lines
                .peek()
                .is_some_and(|next| *next == format!("# TYPE {name} counter"))
            {
                let text = &help[name.len()..];
                out.push_str(&format!(
                    "# HELP {name}_total{text}\n# TYPE {name}_total counter\n"
                ));
                lines.next();
                continue;
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[derive(Debug)]
struct StateCollector(Arc<Mutex<State>>);

type Labels<'a> = Vec<(Cow<'a, str>, Cow<'a, str>)>;

fn metric_type(kind: Kind) -> MetricType {
    match kind {
        Kind::Gauge => MetricType::Gauge,
        Kind::Counter => MetricType::Counter,
        Kind::Histogram => MetricType::Histogram,
    }
}

/// Writes one family, or nothing when it has no samples.
fn family(
    encoder: &mut DescriptorEncoder<'_>,
    metric: &Metric,
    samples: &[(Labels<'_>, f64)],
) -> Result<(), std::fmt::Error> {
    if samples.is_empty() {
        return Ok(());
    }
    let mut metric_encoder =
        encoder.encode_descriptor(metric.name, metric.help, None, metric_type(metric.kind))?;
    for (labels, value) in samples {
        let mut sample = metric_encoder.encode_family(labels)?;
        match metric.kind {
            Kind::Counter => sample.encode_counter::<NoLabelSet, f64, f64>(value, None)?,
            _ => sample.encode_gauge(value)?,
        }
    }
    Ok(())
}

/// Writes one histogram family, or nothing when no executor has observed a value.
fn histogram_family(
    encoder: &mut DescriptorEncoder<'_>,
    metric: &Metric,
    samples: &[(Labels<'_>, &Histogram)],
) -> Result<(), std::fmt::Error> {
    if samples.iter().all(|(_, h)| h.count == 0) {
        return Ok(());
    }
    let mut metric_encoder =
        encoder.encode_descriptor(metric.name, metric.help, None, MetricType::Histogram)?;
    for (labels, histogram) in samples.iter().filter(|(_, h)| h.count > 0) {
        let mut sample = metric_encoder.encode_family(labels)?;
        sample.encode_histogram::<NoLabelSet>(
            histogram.sum,
            histogram.count,
            &histogram.buckets(),
            None,
        )?;
    }
    Ok(())
}

/// Adds the log's own labels (config file) and the `--label`s, none overriding a label
/// llmtail sets.
fn with_log_labels<'a>(mut labels: Labels<'a>, state: &'a State, log: &'a LogState) -> Labels<'a> {
    for (name, value) in log.labels.iter().chain(&state.settings.constant_labels) {
        if !labels.iter().any(|(n, _)| n == name) {
            labels.push((Cow::Borrowed(name), Cow::Borrowed(value)));
        }
    }
    labels
}

/// The common labels of a log's TensorRT-LLM series.
fn trtllm_labels<'a>(state: &'a State, log: &'a LogState, rank: &'a str) -> Labels<'a> {
    let (model, version) = log.trtllm_model(&state.settings);
    let labels: Labels<'a> = vec![
        (Cow::Borrowed("model"), Cow::Borrowed(model)),
        (Cow::Borrowed("version"), Cow::Borrowed(version)),
        (Cow::Borrowed("log"), Cow::Borrowed(&*log.label)),
        (Cow::Borrowed("rank"), Cow::Borrowed(rank)),
    ];
    with_log_labels(labels, state, log)
}

/// The common labels of a log's vLLM engine series.
fn engine_labels<'a>(state: &'a State, log: &'a LogState, engine: String) -> Labels<'a> {
    let labels: Labels<'a> = vec![
        (Cow::Borrowed("engine"), Cow::Owned(engine)),
        (
            Cow::Borrowed("model_name"),
            Cow::Borrowed(log.vllm_model_name(&state.settings)),
        ),
        (Cow::Borrowed("log"), Cow::Borrowed(&*log.label)),
    ];
    with_log_labels(labels, state, log)
}

impl Collector for StateCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        // A poisoned lock means a reader thread panicked mid-batch; the numbers are still the
        // best we have, and a scrape must not fail because of it.
        let state = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let state = &*state;

        for row in VLLM_ENGINE {
            let mut samples = Vec::new();
            for log in state.iter_logs() {
                for (key, engine) in &log.vllm.engines {
                    match row.read {
                        Reading::One(read) => {
                            if let Some(value) = read(engine) {
                                samples.push((engine_labels(state, log, key.label()), value));
                            }
                        }
                        Reading::Labelled(name, read) => {
                            for (value_label, value) in read(engine) {
                                let mut labels = engine_labels(state, log, key.label());
                                labels.insert(1, (Cow::Borrowed(name), Cow::Owned(value_label)));
                                samples.push((labels, value));
                            }
                        }
                    }
                }
            }
            family(&mut encoder, &row.metric, &samples)?;
        }

        for row in TRTLLM {
            let mut samples = Vec::new();
            let mut histograms = Vec::new();
            for log in state.iter_logs() {
                for (rank, executor) in &log.trtllm.ranks {
                    match row.read {
                        TrtllmReading::One(read) => {
                            if let Some(value) = read(executor) {
                                samples.push((trtllm_labels(state, log, rank), value));
                            }
                        }
                        TrtllmReading::Labelled(name, read) => {
                            for (kind, value) in read(executor) {
                                let mut labels = trtllm_labels(state, log, rank);
                                labels.insert(0, (Cow::Borrowed(name), Cow::Borrowed(kind)));
                                samples.push((labels, value));
                            }
                        }
                        TrtllmReading::Histogram(read) => {
                            histograms.push((trtllm_labels(state, log, rank), read(executor)))
                        }
                    }
                }
            }
            family(&mut encoder, &row.metric, &samples)?;
            if row.metric.kind == Kind::Histogram {
                histogram_family(&mut encoder, &row.metric, &histograms)?;
            }
        }

        let per_log = |read: &dyn Fn(&LogState) -> f64| -> Vec<(Labels<'_>, f64)> {
            state
                .iter_logs()
                .map(|log| {
                    (
                        vec![(Cow::Borrowed("log"), Cow::Borrowed(&*log.label))],
                        read(log),
                    )
                })
                .collect()
        };
        family(
            &mut encoder,
            &agent::LINES_READ,
            &per_log(&|l| l.io.lines_read as f64),
        )?;
        let mut parsed = Vec::new();
        let mut last = Vec::new();
        for log in state.iter_logs() {
            for g in &log.parsed {
                let labels: Labels<'_> = vec![
                    (Cow::Borrowed("log"), Cow::Borrowed(&*log.label)),
                    (Cow::Borrowed("grammar"), Cow::Borrowed(g.grammar)),
                ];
                parsed.push((labels.clone(), g.lines as f64));
                last.push((labels, g.last_timestamp));
            }
        }
        family(&mut encoder, &agent::LINES_PARSED, &parsed)?;
        family(
            &mut encoder,
            &agent::LINES_UNMATCHED,
            &per_log(&|l| l.io.lines_unmatched as f64),
        )?;
        let mut skipped = Vec::new();
        for log in state.iter_logs() {
            for (reason, count) in log.io.skipped() {
                let labels: Labels<'_> = vec![
                    (Cow::Borrowed("log"), Cow::Borrowed(&*log.label)),
                    (Cow::Borrowed("reason"), Cow::Borrowed(reason)),
                ];
                skipped.push((labels, count as f64));
            }
        }
        family(&mut encoder, &agent::LINES_SKIPPED, &skipped)?;
        family(&mut encoder, &agent::LAST_PARSED_TIMESTAMP, &last)?;
        family(
            &mut encoder,
            &agent::ROTATIONS,
            &per_log(&|l| l.io.rotations as f64),
        )?;
        family(
            &mut encoder,
            &agent::TRUNCATIONS,
            &per_log(&|l| l.io.truncations as f64),
        )?;
        family(
            &mut encoder,
            &agent::OPEN_ERRORS,
            &per_log(&|l| l.io.open_errors as f64),
        )?;
        family(
            &mut encoder,
            &agent::OPEN,
            &per_log(&|l| if l.io.open { 1.0 } else { 0.0 }),
        )?;
        family(
            &mut encoder,
            &agent::OFFSET,
            &per_log(&|l| l.io.offset as f64),
        )?;
        let version: Labels<'_> = vec![(
            Cow::Borrowed("version"),
            Cow::Borrowed(env!("CARGO_PKG_VERSION")),
        )];
        family(&mut encoder, &agent::BUILD_INFO, &[(version, 1.0)])?;
        Ok(())
    }
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
    fn text_004_names_counters_by_their_samples() {
        let open_metrics = "# HELP vllm:prompt_tokens Number of prefill tokens processed.\n# TYPE vllm:prompt_tokens counter\nvllm:prompt_tokens_total{engine=\"0\"} 10.0\n# HELP g A gauge.\n# TYPE g gauge\ng 1.0\n# EOF\n";
        assert_eq!(
            to_text_004(open_metrics),
            "# HELP vllm:prompt_tokens_total Number of prefill tokens processed.\n# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total{engine=\"0\"} 10.0\n# HELP g A gauge.\n# TYPE g gauge\ng 1.0\n"
        );
    }
}
