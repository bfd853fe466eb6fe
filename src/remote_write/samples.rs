//! From the exposition to remote-write series: the OpenMetrics text that a scrape of the agent
//! returns, read back into labelled samples, so that what is pushed is exactly what a scrape
//! returns (same names, labels and values; HELP and TYPE become metadata).
//!
//! This reads what `exposition::render` writes and nothing more general: a family's `# HELP`
//! and `# TYPE`, samples `name{label="value",...} value` (values escaped `\\`, `\"`, `\n`;
//! values as Rust prints them, `NaN`, `+Inf`, `-Inf`), no timestamps, no exemplars. Reading
//! the rendered text, rather than walking the state a second way, keeps one source of truth
//! for names and labels.

use super::prompb::{Label, MetricMetadata, MetricType, Sample, TimeSeries};

/// One round of samples, ready to be cut into requests.
#[derive(Debug, Default, PartialEq)]
pub struct Round {
    pub series: Vec<TimeSeries>,
    pub metadata: Vec<MetricMetadata>,
    /// Lines that did not read as a sample: a mismatch between this reader and the renderer,
    /// which the unit tests over every replay golden are there to prevent.
    pub unreadable: Vec<String>,
}

/// Reads an exposition into series stamped `timestamp_ms`, each with the `external` labels
/// it does not carry already (as Prometheus' `external_labels`: a series' own label wins, and
/// no label is written twice).
pub fn read(exposition: &str, external: &[(String, String)], timestamp_ms: i64) -> Round {
    let mut round = Round::default();
    for line in exposition.lines() {
        if let Some(comment) = line.strip_prefix("# ") {
            note_metadata(comment, &mut round.metadata);
            continue;
        }
        if line.is_empty() {
            continue;
        }
        match sample(line) {
            Some((mut labels, value)) => {
                for (name, value) in external {
                    if !labels.iter().any(|l| l.name == *name) {
                        labels.push(Label {
                            name: name.clone(),
                            value: value.clone(),
                        });
                    }
                }
                labels.sort_by(|a, b| a.name.cmp(&b.name));
                round.series.push(TimeSeries {
                    labels,
                    samples: vec![Sample {
                        value,
                        timestamp: timestamp_ms,
                    }],
                });
            }
            None => round.unreadable.push(line.to_string()),
        }
    }
    round
}

/// `HELP name text` or `TYPE name kind` (OpenMetrics names the family, without `_total`).
fn note_metadata(comment: &str, metadata: &mut Vec<MetricMetadata>) {
    let Some((keyword, rest)) = comment.split_once(' ') else {
        return; // `# EOF`
    };
    let (name, text) = rest.split_once(' ').unwrap_or((rest, ""));
    let family = match metadata.last_mut() {
        Some(last) if last.metric_family_name == name => last,
        _ => {
            metadata.push(MetricMetadata {
                metric_family_name: name.to_string(),
                ..MetricMetadata::default()
            });
            metadata.last_mut().expect("just pushed")
        }
    };
    match keyword {
        "HELP" => family.help = text.to_string(),
        "TYPE" => family.r#type = MetricType::from_exposition(text) as i32,
        _ => {}
    }
}

/// `name{labels} value` or `name value`: the labels with `__name__` first, and the value.
fn sample(line: &str) -> Option<(Vec<Label>, f64)> {
    let name_end = line.find(['{', ' '])?;
    let name = &line[..name_end];
    let mut labels = vec![Label {
        name: "__name__".into(),
        value: name.to_string(),
    }];
    let mut rest = &line[name_end..];
    if let Some(inside) = rest.strip_prefix('{') {
        rest = label_pairs(inside, &mut labels)?;
    }
    let value = value(rest.strip_prefix(' ')?)?;
    Some((labels, value))
}

/// Reads `a="x",b="y"}` into `labels`; returns what follows the `}`.
fn label_pairs<'a>(mut rest: &'a str, labels: &mut Vec<Label>) -> Option<&'a str> {
    loop {
        if let Some(after) = rest.strip_prefix('}') {
            return Some(after);
        }
        let (name, after) = rest.split_once("=\"")?;
        let (value, after) = quoted(after)?;
        labels.push(Label {
            name: name.to_string(),
            value,
        });
        rest = after.strip_prefix(',').unwrap_or(after);
    }
}

/// A label value up to its closing quote, unescaped; and what follows the quote.
fn quoted(text: &str) -> Option<(String, &str)> {
    let mut value = String::new();
    let mut chars = text.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '"' => return Some((value, &text[at + 1..])),
            '\\' => match chars.next()?.1 {
                'n' => value.push('\n'),
                escaped => value.push(escaped), // `\\` and `\"`
            },
            c => value.push(c),
        }
    }
    None
}

/// A sample value as the renderer spells it: digits, `NaN`, `+Inf` or `-Inf`.
fn value(text: &str) -> Option<f64> {
    match text {
        "NaN" => Some(f64::NAN),
        "+Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        _ => text.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(series: &TimeSeries) -> Vec<(&str, &str)> {
        series
            .labels
            .iter()
            .map(|l| (l.name.as_str(), l.value.as_str()))
            .collect()
    }

    #[test]
    fn a_sample_keeps_its_name_labels_and_value_with_labels_sorted() {
        let round = read(
            "vllm:num_requests_running{engine=\"0\",model_name=\"qwen3-8b\",log=\"/var/log/vllm.log\"} 14.0\n",
            &[],
            1_000,
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
    fn escaped_label_values_are_read_back_as_written_before_escaping() {
        let round = read(
            "llmtail_lines_read_total{log=\"C:\\\\logs\\\\a \\\"b\\\"\\nc\"} 3.0\n",
            &[],
            0,
        );
        assert_eq!(
            labels(&round.series[0])[1],
            ("log", "C:\\logs\\a \"b\"\nc"),
            "{round:?}"
        );
    }

    #[test]
    fn special_values_and_unlabelled_samples_are_read() {
        let round = read(
            "a NaN\nb{x=\"1\"} +Inf\nc -Inf\nd{le=\"0.5\",x=\"}\"} 2\n",
            &[],
            0,
        );
        let values: Vec<f64> = round.series.iter().map(|s| s.samples[0].value).collect();
        assert!(values[0].is_nan());
        assert_eq!(values[1..], [f64::INFINITY, f64::NEG_INFINITY, 2.0]);
        assert_eq!(labels(&round.series[3])[1..], [("le", "0.5"), ("x", "}")]);
        assert!(round.unreadable.is_empty());
    }

    /// As Prometheus' external_labels: added where missing, never over a series' own value,
    /// never twice.
    #[test]
    fn external_labels_go_on_every_series_that_lacks_them() {
        let external = [
            ("instance".to_string(), "gpu-host-1".to_string()),
            ("gpu".to_string(), "all".to_string()),
        ];
        let round = read(
            "llmtail_build_info{version=\"0.1.0\"} 1.0\nvllm:num_requests_running{engine=\"0\",gpu=\"0\"} 1.0\n",
            &external,
            0,
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
        let round = read(
            "# HELP vllm:generation_tokens Number of generation tokens processed.\n# TYPE vllm:generation_tokens counter\nvllm:generation_tokens_total{engine=\"0\"} 3.0\n# EOF\n",
            &[],
            0,
        );
        assert_eq!(
            round.metadata,
            [MetricMetadata {
                r#type: MetricType::Counter as i32,
                metric_family_name: "vllm:generation_tokens".into(),
                help: "Number of generation tokens processed.".into(),
                unit: String::new(),
            }]
        );
        assert_eq!(round.series.len(), 1);
    }

    /// Every sample line of every replay golden (what the renderer writes for each engine)
    /// reads back into the same name, labels and value.
    #[test]
    fn every_replay_golden_reads_back_whole() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/replay");
        let mut goldens = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "prom") {
                continue;
            }
            goldens += 1;
            let text = std::fs::read_to_string(&path).unwrap();
            let round = read(&text, &[], 0);
            assert!(
                round.unreadable.is_empty(),
                "{path:?}: {:?}",
                round.unreadable
            );
            let samples = text.lines().filter(|l| !l.starts_with('#')).count();
            assert_eq!(round.series.len(), samples, "{path:?}");
            for (line, series) in text
                .lines()
                .filter(|l| !l.starts_with('#'))
                .zip(&round.series)
            {
                let name = &series
                    .labels
                    .iter()
                    .find(|l| l.name == "__name__")
                    .unwrap()
                    .value;
                assert!(line.starts_with(name.as_str()), "{line}");
                for label in series.labels.iter().filter(|l| l.name != "__name__") {
                    let mut escaped = String::new();
                    crate::exposition::render::push_escaped(&mut escaped, &label.value);
                    assert!(
                        line.contains(&format!("{}=\"{escaped}\"", label.name)),
                        "{line}"
                    );
                }
                let written = line.rsplit_once(' ').unwrap().1;
                let read_back = series.samples[0].value;
                assert_eq!(
                    value(written).map(f64::to_bits),
                    Some(read_back.to_bits()),
                    "{line}"
                );
            }
        }
        assert!(goldens > 10, "the replay goldens are in {dir}");
    }
}
