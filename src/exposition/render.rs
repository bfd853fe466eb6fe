//! Rendering the state as Prometheus exposition text: OpenMetrics 1.0 for scrapers that ask
//! for it (Prometheus 2 and 3 do), the classic text format 0.0.4 otherwise. The two differ only
//! in the metadata lines: 0.0.4 names a counter's HELP and TYPE after its `_total` sample and has
//! no `# EOF` (Prometheus 3 rejects a body whose Content-Type does not match what it parses).
//!
//! The text is one [`SampleSink`] of the sample model ([`crate::samples`]): the same samples a
//! push sends and a replay keeps, written as they come.
//!
//! Written directly rather than through prometheus-client: with its `Collector`, one label
//! vector per sample and a rewrite of the OpenMetrics text into 0.0.4, 10,099 series took
//! 7.3 ms to render (`cargo bench --bench scrape`), over the 5 ms a scrape may take. Here the
//! labels common to a log's or an engine's series are escaped once per scrape, and every
//! sample is one append to one `String`.

use std::fmt::Write;
use std::sync::{Arc, Mutex};

use crate::catalog::{HistogramView, Kind, Metric};
use crate::samples::{self, push_escaped, push_le, push_value, LabelSet, SampleSink, SampleSource};
use crate::state::State;

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

/// Renders everything a scrape shows in `format`: the state's series, liveness as the reader's
/// side last judged it, then those of `sources` (the remote-write queues').
pub fn render(
    state: &Arc<Mutex<State>>,
    sources: &[Arc<dyn SampleSource + Send + Sync>],
    format: Format,
) -> String {
    render_after(state, sources, format, 0)
}

/// [`render`], into room made once for a body about as long as the last one (`last_len`
/// bytes): grown from 64 KB, a body of 5 MB was copied seven times on the way.
pub fn render_after(
    state: &Arc<Mutex<State>>,
    sources: &[Arc<dyn SampleSource + Send + Sync>],
    format: Format,
    last_len: usize,
) -> String {
    // A poisoned lock means a reader thread panicked mid-batch; the numbers are still the best
    // we have, and a scrape must not fail because of it.
    let state = state.lock().unwrap_or_else(|e| e.into_inner());
    // An eighth more: the agent's own counters grow by a few digits between scrapes.
    let room = (last_len + last_len / 8).max(64 * 1024);
    let mut out = Exposition {
        out: String::with_capacity(room),
        format,
    };
    samples::all_samples(&state, sources, &mut out);
    if format == Format::OpenMetrics {
        out.out.push_str("# EOF\n");
    }
    out.out
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

/// A sample's series, `name[suffix]{first,common}`: its text up to the value. A series
/// without any label is written without braces.
pub fn push_series(
    out: &mut String,
    name: &str,
    suffix: &str,
    first: Option<(&str, &str)>,
    common: &str,
) {
    out.push_str(name);
    out.push_str(suffix);
    if first.is_none() && common.is_empty() {
        return;
    }
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

/// The text being written, and which format it is in.
struct Exposition {
    out: String,
    format: Format,
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
        common: &LabelSet,
        value: f64,
    ) {
        let out = &mut self.out;
        push_series(out, name, suffix, first, common.text());
        out.push(' ');
        push_value(out, value);
        out.push('\n');
    }

    fn histogram(&mut self, name: &str, common: &LabelSet, histogram: &HistogramView<'_>) {
        let common = common.text();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::agent;
    use crate::state::StateSettings;

    /// A source of one family of one sample, as the remote-write queues are.
    struct OneReceiver;

    impl SampleSource for OneReceiver {
        fn samples(&self, out: &mut dyn SampleSink) {
            let metric = &agent::REMOTE_WRITE_QUEUE_SAMPLES;
            out.family(metric);
            let url = Some(("url", "http://p:9090/api/v1/write"));
            out.sample(metric.name, "", url, &LabelSet::default(), 3.0);
        }
    }

    #[test]
    fn the_sources_series_follow_the_states_and_come_before_the_eof() {
        let state = Arc::new(Mutex::new(State::new(StateSettings {
            stats_interval: crate::engines::parts::pacing::StatsInterval::Auto,
            model_name: None,
            constant_labels: Vec::new(),
            series: crate::engines::parts::caps::SeriesGuard { max_series: 100 },
            log_expiry: 60.0,
        })));
        let sources: [Arc<dyn SampleSource + Send + Sync>; 1] = [Arc::new(OneReceiver)];
        let open_metrics = render(&state, &sources, Format::OpenMetrics);
        let build_info = format!(
            "llmtail_build_info{{version=\"{}\"}} 1.0\n",
            env!("CARGO_PKG_VERSION")
        );
        let (_, after_build_info) = open_metrics.split_once(&build_info).unwrap();
        let header = family_header(&agent::REMOTE_WRITE_QUEUE_SAMPLES, Format::OpenMetrics);
        assert_eq!(
            after_build_info,
            format!("{header}llmtail_remote_write_queue_samples{{url=\"http://p:9090/api/v1/write\"}} 3.0\n# EOF\n")
        );
        let text = render(&state, &sources, Format::Text004);
        assert!(
            text.ends_with(
                "llmtail_remote_write_queue_samples{url=\"http://p:9090/api/v1/write\"} 3.0\n"
            ),
            "{text}"
        );
    }

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
    fn text_004_names_counters_by_their_samples_and_open_metrics_by_their_family() {
        let metric = &<crate::engines::vllm::State as crate::engines::Engine>::TABLE
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
