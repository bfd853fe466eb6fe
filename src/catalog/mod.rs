//! The one list of every series llmtail exports: name, type, help, and where the value
//! comes from. The exposition walks it to render `/metrics`, and the series table of docs/REFERENCE.md
//! is rendered from it (a test keeps the two equal), so a name is written exactly once.
//!
//! Names are vLLM's and Triton's own wherever the engine exports the same meaning, so
//! existing dashboards and alerts work unchanged; everything else is `llmtail_`.

/// The Prometheus metric type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Gauge,
    /// Rendered with the `_total` suffix; `name` is the family name without it.
    Counter,
    Histogram,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
            Kind::Histogram => "histogram",
        }
    }
}

/// One metric family.
#[derive(Debug, Clone, Copy)]
pub struct Metric {
    /// The family name (for counters without `_total`).
    pub name: &'static str,
    pub kind: Kind,
    pub help: &'static str,
    /// Labels besides the common ones of its group, for the reference page.
    pub labels: &'static str,
    /// Which line and field the value comes from, for the reference page.
    pub source: &'static str,
}

impl Metric {
    /// The name a sample carries: counters end in `_total`.
    pub fn sample_name(&self) -> String {
        match self.kind {
            Kind::Counter => format!("{}_total", self.name),
            _ => self.name.to_string(),
        }
    }
}

/// How to read one series out of an engine's unit (a vLLM engine, a TensorRT-LLM rank).
pub enum Reading<T: 'static> {
    One(fn(&T) -> Option<f64>),
    /// Several samples that differ by one extra label (`label`, value).
    Labelled(&'static str, fn(&T) -> Vec<(String, f64)>),
    /// The same, with label values the code names (Triton's families: one sample per type).
    LabelledStatic(&'static str, fn(&T) -> Vec<(&'static str, f64)>),
    /// At most one sample with one extra label, read without allocating (a replay reads
    /// every row after each record).
    LabelledOne(&'static str, for<'a> fn(&'a T) -> Option<(&'a str, f64)>),
    Histogram(fn(&T) -> HistogramView<'_>),
}

/// A classic Prometheus histogram as the exposition reads it.
#[derive(Debug, Clone, Copy)]
pub struct HistogramView<'a> {
    /// The upper bounds, without `+Inf`.
    pub bounds: &'a [f64],
    /// Counts per bucket alone (not cumulative), `+Inf` last; empty before the first
    /// observation.
    pub counts: &'a [u64],
    pub sum: f64,
    pub count: u64,
    /// How `le` is written: [`LeFormat::Display`] for an engine's own family, so the label
    /// values are the strings the engine's exporter writes.
    pub le: LeFormat,
}

/// How a histogram's `le` label values are spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeFormat {
    /// The shortest digits that read back as the bound, `.0` on whole numbers (`1.0`, `2.5`):
    /// llmtail's own histograms.
    Shortest,
    /// Rust's `Display` of the bound, as `metrics-exporter-prometheus` writes it (TGI's and
    /// TEI's exporter): no exponent (`0.000015000000000000002`), no `.0` on whole numbers.
    Display,
}

impl<T> Clone for Reading<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Reading<T> {}

/// One series of an engine: its family, how to read it, and whether it shows while the unit
/// is down. Every engine's catalog table is a list of these, and one row loop renders them all.
pub struct Row<T: 'static> {
    pub metric: Metric,
    pub read: Reading<T>,
    /// Exported while the unit is down too. Gauges are not: the engines' own go stale when
    /// their `/metrics` stops answering. Counters and histograms keep their values, and the
    /// liveness series say why.
    pub while_down: bool,
}

impl<T> Row<T> {
    /// Whether the series is exported for a unit that is down.
    pub fn shown_while_down(&self) -> bool {
        self.while_down || self.metric.kind != Kind::Gauge
    }

    /// The label this row adds to its unit's, if any.
    pub fn extra_label(&self) -> Option<&'static str> {
        match self.read {
            Reading::Labelled(label, _)
            | Reading::LabelledStatic(label, _)
            | Reading::LabelledOne(label, _) => Some(label),
            Reading::One(_) | Reading::Histogram(..) => None,
        }
    }
}

/// One row of an engine's table that reads one value: `engine_metric!(name, Kind, help,
/// source, read)`, or with `while_down` last.
macro_rules! engine_metric {
    ($name:literal, $kind:ident, $help:literal, $source:literal, $read:expr) => {
        $crate::catalog::engine_metric!($name, $kind, $help, $source, $read, false)
    };
    ($name:literal, $kind:ident, $help:literal, $source:literal, $read:expr, $while_down:expr) => {
        $crate::catalog::Row {
            metric: $crate::catalog::Metric {
                name: $name,
                kind: $crate::catalog::Kind::$kind,
                help: $help,
                labels: "",
                source: $source,
            },
            read: $crate::catalog::Reading::One($read),
            while_down: $while_down,
        }
    };
}
pub(crate) use engine_metric;

/// A series about the engine's liveness, exported whether it is up or down.
macro_rules! liveness_metric {
    ($name:literal, $kind:ident, $help:literal, $source:literal, $read:expr) => {
        $crate::catalog::engine_metric!($name, $kind, $help, $source, $read, true)
    };
}
pub(crate) use liveness_metric;

/// Series about llmtail itself, per followed log.
pub mod agent {
    use super::{Kind, Metric};

    pub const LINES_READ: Metric = Metric {
        name: "llmtail_lines_read",
        kind: Kind::Counter,
        help: "Lines read from the log.",
        labels: "`log`",
        source: "every complete line (one, however many records it holds)",
    };
    pub const LINES_PARSED: Metric = Metric {
        name: "llmtail_lines_parsed",
        kind: Kind::Counter,
        help: "Records a grammar recognised (a line holding several, glued or a JSON dump, counts each).",
        labels: "`log`, `grammar`",
        source: "every record a line yielded: one per record head in the line, one per JSON iteration object",
    };
    pub const LINES_UNMATCHED: Metric = Metric {
        name: "llmtail_lines_unmatched",
        kind: Kind::Counter,
        help:
            "Lines no grammar recognised (most lines of a log: they are counted, never an error).",
        labels: "`log`",
        source: "every line that yielded no record, parsed or rejected",
    };
    pub const LINES_REJECTED: Metric = Metric {
        name: "llmtail_lines_rejected",
        kind: Kind::Counter,
        help: "Records that looked like an engine's own but were rejected whole: cut off, in a changed format, or carrying a value the engine cannot print (each record of a line counts).",
        labels: "`log`, `grammar` (the record the line started as)",
        source: "a record whose message starts as an engine's stats, spec-decoding, prefix-cache or iteration record and does not parse, or parses to an impossible value (negative or non-finite, a usage over 100%)",
    };
    pub const RECORDS_REPEATED: Metric = Metric {
        name: "llmtail_records_repeated",
        kind: Kind::Counter,
        help: "Records that repeated one of the log's last records exactly (same text, stamped in the same second): a log handler configured twice prints every line twice. Not applied: they add nothing to any counter.",
        labels: "`log`, `grammar`",
        source: "a record equal to one of the log's last four records of its grammar, stamped within a second of it",
    };
    pub const LINES_OUT_OF_ORDER: Metric = Metric {
        name: "llmtail_lines_out_of_order",
        kind: Kind::Counter,
        help: "Records dated before a record the log held earlier (two writers, a copied-in line, a clock set back). `llmtail replay` writes them at the earlier record's time, so that no counter goes back in time.",
        labels: "`log`",
        source: "a record whose time is before the latest time of its log",
    };
    pub const LOG_TIME_OFFSET: Metric = Metric {
        name: "llmtail_log_time_offset_seconds",
        kind: Kind::Gauge,
        help: "How far the times the log's lines print are from the agent's clock when they arrive: the median of (stamp - arrival) over the last 31 live records (negative: the stamps read as past). A whole number of quarter hours means a zone read wrongly (see --log-timezone). Serving only, once 3 live records came.",
        labels: "`log`",
        source: "live records, after the start-up catch-up (with --log-timezone auto: after the learned offset is taken off)",
    };
    pub const SERIES_REFUSED: Metric = Metric {
        name: "llmtail_series_refused",
        kind: Kind::Counter,
        help: "Records dropped because they would have made series past a cap (logged once per log): a per-log cap of an engine's units or draft positions (the rest of that line is kept; llmtail --help lists the caps), or a new unit past --max-series.",
        labels: "`log`",
        source: "a record naming an engine, rank or process the caps leave no room for",
    };
    pub const LINES_SKIPPED: Metric = Metric {
        name: "llmtail_lines_skipped",
        kind: Kind::Counter,
        help: "Lines dropped before parsing (too_long, truncated_partial), and lines read as plain text because they were not in the log's detected envelope (invalid_envelope: not dropped).",
        labels: "`log`, `reason` (`too_long`, `truncated_partial`, `invalid_envelope`)",
        source: "the reader; the envelope decoder (a line outside the detected envelope, e.g. a KServe line in a Docker log, parsed as plain text)",
    };
    pub const LAST_PARSED_TIMESTAMP: Metric = Metric { name: "llmtail_last_parsed_timestamp_seconds", kind: Kind::Gauge,
        help: "Timestamp of the last line a grammar recognised (the line's own time; a time printed without a zone is read in the log's zone, --log-timezone).", labels: "`log`, `grammar`", source: "record head or envelope time" };
    pub const ROTATIONS: Metric = Metric {
        name: "llmtail_log_rotations",
        kind: Kind::Counter,
        help: "Times the path came to name another file (the old one was drained first).",
        labels: "`log`",
        source: "the reader",
    };
    pub const TRUNCATIONS: Metric = Metric {
        name: "llmtail_log_truncations",
        kind: Kind::Counter,
        help: "Times the file was truncated and read again from its start.",
        labels: "`log`",
        source: "the reader",
    };
    pub const OPEN_ERRORS: Metric = Metric {
        name: "llmtail_log_open_errors",
        kind: Kind::Counter,
        help: "Failed attempts to open the log (retried with backoff).",
        labels: "`log`",
        source: "the reader",
    };
    pub const OPEN: Metric = Metric {
        name: "llmtail_log_open",
        kind: Kind::Gauge,
        help: "1 while the log is open.",
        labels: "`log`",
        source: "the reader",
    };
    pub const OFFSET: Metric = Metric {
        name: "llmtail_log_offset_bytes",
        kind: Kind::Gauge,
        help: "Bytes read so far in the file the path names now.",
        labels: "`log`",
        source: "the reader",
    };
    pub const CONFIG_LAST_RELOAD_SUCCESSFUL: Metric = Metric {
        name: "llmtail_config_last_reload_successful",
        kind: Kind::Gauge,
        help: "Whether the last configuration load (start-up, SIGHUP or /-/reload) succeeded; 0 means the config file has a mistake and the previous configuration is in force.",
        labels: "",
        source: "the agent, serving (not in --one-shot)",
    };
    pub const CONFIG_LAST_RELOAD_SUCCESS_TIMESTAMP: Metric = Metric {
        name: "llmtail_config_last_reload_success_timestamp_seconds",
        kind: Kind::Gauge,
        help: "When the configuration in force was loaded.",
        labels: "",
        source: "the agent, serving (not in --one-shot)",
    };
    pub const BUILD_INFO: Metric = Metric {
        name: "llmtail_build_info",
        kind: Kind::Gauge,
        help: "Always 1; the labels say which llmtail this is.",
        labels: "`version`",
        source: "the binary",
    };

    pub const REMOTE_WRITE_SAMPLES_SENT: Metric = Metric {
        name: "llmtail_remote_write_samples_sent",
        kind: Kind::Counter,
        help: "Samples a remote-write receiver accepted (answered 2xx).",
        labels: "`url`",
        source: "each --remote-write.url or [[remote_write]] receiver",
    };
    pub const REMOTE_WRITE_SAMPLES_FAILED: Metric = Metric {
        name: "llmtail_remote_write_samples_failed",
        kind: Kind::Counter,
        help: "Samples in remote-write requests that failed and are retried (a network error, a timeout, 5xx or 429); each failed attempt counts its samples.",
        labels: "`url`",
        source: "each remote-write receiver",
    };
    pub const REMOTE_WRITE_SAMPLES_DROPPED: Metric = Metric {
        name: "llmtail_remote_write_samples_dropped",
        kind: Kind::Counter,
        help: "Samples that will never reach the receiver: refused with a 4xx other than 429, pushed out of a full queue (oldest first), or still queued when the agent stopped.",
        labels: "`url`",
        source: "each remote-write receiver",
    };
    pub const REMOTE_WRITE_QUEUE_SAMPLES: Metric = Metric {
        name: "llmtail_remote_write_queue_samples",
        kind: Kind::Gauge,
        help: "Samples waiting to be sent, the request in flight included (a queue holds 100000 samples, or four rounds when a round is bigger, up to 2000000).",
        labels: "`url`",
        source: "each remote-write receiver",
    };

    /// The remote-write queues' series, in exposition order (after all the others).
    pub const REMOTE_WRITE: &[Metric] = &[
        REMOTE_WRITE_SAMPLES_SENT,
        REMOTE_WRITE_SAMPLES_FAILED,
        REMOTE_WRITE_SAMPLES_DROPPED,
        REMOTE_WRITE_QUEUE_SAMPLES,
    ];

    /// In exposition order.
    pub const ALL: &[Metric] = &[
        LINES_READ,
        LINES_PARSED,
        LINES_UNMATCHED,
        LINES_REJECTED,
        RECORDS_REPEATED,
        LINES_OUT_OF_ORDER,
        SERIES_REFUSED,
        LINES_SKIPPED,
        LOG_TIME_OFFSET,
        LAST_PARSED_TIMESTAMP,
        ROTATIONS,
        TRUNCATIONS,
        OPEN_ERRORS,
        OPEN,
        OFFSET,
        CONFIG_LAST_RELOAD_SUCCESSFUL,
        CONFIG_LAST_RELOAD_SUCCESS_TIMESTAMP,
        BUILD_INFO,
        REMOTE_WRITE_SAMPLES_SENT,
        REMOTE_WRITE_SAMPLES_FAILED,
        REMOTE_WRITE_SAMPLES_DROPPED,
        REMOTE_WRITE_QUEUE_SAMPLES,
    ];
}

/// Prometheus' metric-name grammar, `[a-zA-Z_:][a-zA-Z0-9_:]*`: the exposition writes names as
/// they are, so the catalog's test checks every one.
pub fn is_valid_metric_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_' || b == b':')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':')
}

/// Prometheus' label-name grammar, `[a-zA-Z_][a-zA-Z0-9_]*`, without the reserved `__` prefix.
pub fn is_valid_label_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !name.starts_with("__")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_names_follow_the_grammar() {
        assert!(is_valid_label_name("instance_group"));
        assert!(!is_valid_label_name("__name__"));
        assert!(!is_valid_label_name("9x"));
        assert!(!is_valid_label_name("a-b"));
    }
}
