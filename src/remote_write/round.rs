//! One round's remote-write series, filled from the sample model: a [`SampleSink`] that turns
//! each sample a scrape would show into a protobuf series (same name, labels and value), and
//! each family's HELP and TYPE into metadata, so that what is pushed is exactly what a scrape
//! returns, without writing the text and reading it back.
//!
//! A series' labels are `__name__` (the sample's name, `_total`, `_sum`, `_bucket` and all),
//! then its labels as the exposition orders them, then the `--label`s it lacks (as
//! Prometheus' `external_labels`: a series' own label wins, and no label is written twice),
//! sorted by name as the protocol asks.

use crate::catalog::{HistogramView, Metric};
use crate::samples::{push_le, LabelSet, SampleSink};

use super::prompb::{Label, MetricMetadata, MetricType, Sample, TimeSeries};

/// One round of samples, ready to be cut into requests.
#[derive(Debug, Default, PartialEq)]
pub struct Round {
    pub series: Vec<TimeSeries>,
    pub metadata: Vec<MetricMetadata>,
}

/// Fills a [`Round`]: every sample stamped `timestamp_ms`, with the `external` labels it lacks.
pub struct RoundSink<'a> {
    external: &'a [(String, String)],
    timestamp_ms: i64,
    round: Round,
    /// A histogram bound spelled as its `le` label.
    le: String,
}

impl<'a> RoundSink<'a> {
    pub fn new(external: &'a [(String, String)], timestamp_ms: i64) -> RoundSink<'a> {
        RoundSink {
            external,
            timestamp_ms,
            round: Round::default(),
            le: String::new(),
        }
    }

    pub fn finish(self) -> Round {
        self.round
    }

    /// Adds one series of one sample: `__name__` is `name` and `suffix`, then `first` and
    /// `common`'s labels.
    fn push(
        &mut self,
        (name, suffix): (&str, &str),
        first: Option<(&str, &str)>,
        common: &LabelSet,
        value: f64,
    ) {
        let mut labels = Vec::with_capacity(2 + common.pairs().size_hint().0);
        labels.push(label("__name__", &format!("{name}{suffix}")));
        labels.extend(
            first
                .into_iter()
                .chain(common.pairs())
                .map(|(n, v)| label(n, v)),
        );
        for (name, value) in self.external {
            if !labels.iter().any(|l| l.name == *name) {
                labels.push(label(name, value));
            }
        }
        labels.sort_by(|a, b| a.name.cmp(&b.name));
        // A NaN of the state is an ordinary one: any other bit pattern could read as a
        // staleness marker.
        let value = if value.is_nan() { f64::NAN } else { value };
        self.round.series.push(TimeSeries {
            labels,
            samples: vec![Sample {
                value,
                timestamp: self.timestamp_ms,
            }],
        });
    }
}

fn label(name: &str, value: &str) -> Label {
    Label {
        name: name.to_string(),
        value: value.to_string(),
    }
}

impl SampleSink for RoundSink<'_> {
    /// One metadata entry per family (named as OpenMetrics names it, without `_total`); a
    /// family met again at once is the same entry.
    fn family(&mut self, metric: &'static Metric) {
        let r#type = MetricType::from_exposition(metric.kind.as_str()) as i32;
        let metadata = &mut self.round.metadata;
        match metadata.last_mut() {
            Some(last) if last.metric_family_name == metric.name => {
                last.help = metric.help.to_string();
                last.r#type = r#type;
            }
            _ => metadata.push(MetricMetadata {
                r#type,
                metric_family_name: metric.name.to_string(),
                help: metric.help.to_string(),
                unit: String::new(),
            }),
        }
    }

    fn sample(
        &mut self,
        name: &str,
        suffix: &str,
        first: Option<(&str, &str)>,
        common: &LabelSet,
        value: f64,
    ) {
        self.push((name, suffix), first, common, value);
    }

    /// `_sum`, `_count`, then each cumulative `_bucket` with its `le` spelled as a scrape
    /// spells it.
    fn histogram(&mut self, name: &str, common: &LabelSet, histogram: &HistogramView<'_>) {
        self.push((name, "_sum"), None, common, histogram.sum);
        self.push((name, "_count"), None, common, histogram.count as f64);
        let mut cumulative = 0;
        let bounds = histogram.bounds.iter().copied().chain([f64::INFINITY]);
        let counts = histogram.counts.iter().copied().chain(std::iter::repeat(0));
        for (bound, count) in bounds.zip(counts) {
            cumulative += count;
            let mut le = std::mem::take(&mut self.le);
            le.clear();
            push_le(&mut le, bound, histogram.le);
            let first = Some(("le", le.as_str()));
            self.push((name, "_bucket"), first, common, cumulative as f64);
            self.le = le;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{agent, LeFormat};

    fn labels(series: &TimeSeries) -> Vec<(&str, &str)> {
        series
            .labels
            .iter()
            .map(|l| (l.name.as_str(), l.value.as_str()))
            .collect()
    }

    fn round(fill: impl FnOnce(&mut RoundSink<'_>), external: &[(String, String)]) -> Round {
        let mut sink = RoundSink::new(external, 1_000);
        fill(&mut sink);
        sink.finish()
    }

    #[test]
    fn a_sample_keeps_its_name_labels_and_value_with_labels_sorted() {
        let common = LabelSet::new([("model_name", "qwen3-8b"), ("log", "/var/log/vllm.log")]);
        let round = round(
            |sink| {
                let first = Some(("engine", "0"));
                sink.sample("vllm:num_requests_running", "", first, &common, 14.0);
            },
            &[],
        );
        assert_eq!(round.series.len(), 1);
        assert_eq!(
            labels(&round.series[0]),
            [
                ("__name__", "vllm:num_requests_running"),
                ("engine", "0"),
                ("log", "/var/log/vllm.log"),
                ("model_name", "qwen3-8b"),
            ]
        );
        assert_eq!(
            round.series[0].samples,
            [Sample {
                value: 14.0,
                timestamp: 1_000
            }]
        );
    }

    #[test]
    fn label_values_are_pushed_as_they_are_not_as_the_exposition_escapes_them() {
        let common = LabelSet::new([("log", "C:\\logs\\a \"b\"\nc")]);
        let round = round(
            |sink| sink.sample("llmtail_lines_read", "_total", None, &common, 3.0),
            &[],
        );
        assert_eq!(
            labels(&round.series[0]),
            [
                ("__name__", "llmtail_lines_read_total"),
                ("log", "C:\\logs\\a \"b\"\nc")
            ]
        );
    }

    #[test]
    fn special_values_are_kept_and_any_nan_is_an_ordinary_one() {
        let none = LabelSet::default();
        let odd_nan = f64::from_bits(super::super::staleness::STALE_NAN);
        let round = round(
            |sink| {
                for value in [odd_nan, f64::INFINITY, f64::NEG_INFINITY, 2.0] {
                    sink.sample("a", "", None, &none, value);
                }
            },
            &[],
        );
        let values: Vec<f64> = round.series.iter().map(|s| s.samples[0].value).collect();
        assert_eq!(values[0].to_bits(), f64::NAN.to_bits());
        assert_eq!(values[1..], [f64::INFINITY, f64::NEG_INFINITY, 2.0]);
        assert_eq!(labels(&round.series[3]), [("__name__", "a")]);
    }

    /// As Prometheus' external_labels: added where missing, never over a series' own value,
    /// never twice.
    #[test]
    fn external_labels_go_on_every_series_that_lacks_them() {
        let external = [
            ("instance".to_string(), "gpu-host-1".to_string()),
            ("gpu".to_string(), "all".to_string()),
        ];
        let version = LabelSet::new([("version", "0.1.0")]);
        let engine = LabelSet::new([("engine", "0"), ("gpu", "0")]);
        let round = round(
            |sink| {
                sink.sample("llmtail_build_info", "", None, &version, 1.0);
                sink.sample("vllm:num_requests_running", "", None, &engine, 1.0);
            },
            &external,
        );
        assert_eq!(
            labels(&round.series[0]),
            [
                ("__name__", "llmtail_build_info"),
                ("gpu", "all"),
                ("instance", "gpu-host-1"),
                ("version", "0.1.0"),
            ]
        );
        assert_eq!(
            labels(&round.series[1]),
            [
                ("__name__", "vllm:num_requests_running"),
                ("engine", "0"),
                ("gpu", "0"),
                ("instance", "gpu-host-1"),
            ]
        );
    }

    #[test]
    fn help_and_type_become_one_metadata_entry_per_family() {
        let round = round(
            |sink| {
                sink.family(&agent::LINES_READ);
                sink.family(&agent::LINES_READ);
                sink.family(&agent::BUILD_INFO);
            },
            &[],
        );
        assert_eq!(
            round.metadata,
            [
                MetricMetadata {
                    r#type: MetricType::Counter as i32,
                    metric_family_name: agent::LINES_READ.name.into(),
                    help: agent::LINES_READ.help.into(),
                    unit: String::new(),
                },
                MetricMetadata {
                    r#type: MetricType::from_exposition(agent::BUILD_INFO.kind.as_str()) as i32,
                    metric_family_name: agent::BUILD_INFO.name.into(),
                    help: agent::BUILD_INFO.help.into(),
                    unit: String::new(),
                }
            ]
        );
    }

    #[test]
    fn a_histogram_is_its_sum_count_and_cumulative_buckets_up_to_inf() {
        let common = LabelSet::new([("engine", "0")]);
        let histogram = HistogramView {
            sum: 1.5,
            count: 3,
            bounds: &[0.5, 1.0],
            counts: &[1, 2],
            le: LeFormat::Display,
        };
        let round = round(|sink| sink.histogram("x", &common, &histogram), &[]);
        let read: Vec<(Vec<(&str, &str)>, f64)> = round
            .series
            .iter()
            .map(|s| (labels(s), s.samples[0].value))
            .collect();
        let name = |n| ("__name__", n);
        assert_eq!(
            read,
            [
                (vec![name("x_sum"), ("engine", "0")], 1.5),
                (vec![name("x_count"), ("engine", "0")], 3.0),
                (vec![name("x_bucket"), ("engine", "0"), ("le", "0.5")], 1.0),
                (vec![name("x_bucket"), ("engine", "0"), ("le", "1")], 3.0),
                (vec![name("x_bucket"), ("engine", "0"), ("le", "+Inf")], 3.0),
            ]
        );
    }
}
