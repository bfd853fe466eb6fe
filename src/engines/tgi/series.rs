//! TGI's and TEI's series, under their own names (TGI `router/src/server.rs`, TEI
//! `router/src/lib.rs` and `router/src/prometheus.rs`), rebuilt from the `Success` events and
//! the capacity line. Only what a log rebuilds exactly is here: TGI's own counters and
//! histograms that no event carries (`tgi_request_count`, `tgi_request_failure`,
//! `tgi_request_input_length`, `tgi_request_generated_tokens`, the batch and queue gauges) are
//! not, nor TEI's `te_request_success` (its `method` label is not in the event) and
//! `te_request_duration` (TEI observes a second `start_time.elapsed()`, later than the one it
//! logs).

use super::TgiRouter;
use crate::catalog::{Kind, Metric, Reading, Row};

macro_rules! tgi_histogram {
    ($name:literal, $help:literal, $source:literal, $read:expr) => {
        Row {
            metric: Metric {
                name: $name,
                kind: Kind::Histogram,
                help: $help,
                labels: "`le`",
                source: $source,
            },
            read: Reading::Histogram($read),
            while_down: false,
        }
    };
}

/// Every TGI and TEI series, in exposition order.
pub static TGI: &[Row<TgiRouter>] = &[
    // TGI's exporter (metrics-exporter-prometheus) writes its counters without `_total`:
    // typed as a gauge here so the sample name stays TGI's own (as Triton's counters are).
    Row {
        metric: Metric {
            name: "tgi_request_success",
            kind: Kind::Gauge,
            help: "Number of successful requests (a running count; TGI types it as a counter).",
            labels: "",
            source: "each TGI or LoRAX `Success` event (text or JSON)",
        },
        read: Reading::One(|r| r.requests),
        while_down: true,
    },
    tgi_histogram!(
        "tgi_request_duration",
        "Request duration",
        "`Success` event `total_time` (Rust `Duration` Debug, exact to the ns)",
        |r| r.tgi(|r| &r.request_duration)
    ),
    tgi_histogram!(
        "tgi_request_validation_duration",
        "Request validation duration",
        "`Success` event `validation_time`",
        |r| r.tgi(|r| &r.validation_duration)
    ),
    tgi_histogram!(
        "tgi_request_queue_duration",
        "Request queue duration",
        "`Success` event `queue_time`",
        |r| r.tgi(|r| &r.queue_duration)
    ),
    tgi_histogram!(
        "tgi_request_inference_duration",
        "Request inference duration",
        "`Success` event `inference_time`",
        |r| r.tgi(|r| &r.inference_duration)
    ),
    tgi_histogram!(
        "tgi_request_mean_time_per_token_duration",
        "Mean time per token per request",
        "`Success` event `time_per_token`",
        |r| r.tgi(|r| &r.mean_time_per_token_duration)
    ),
    Row {
        metric: Metric {
            name: "tgi_batch_max_total_tokens",
            kind: Kind::Gauge,
            help: "Maximum total tokens of a batch, as the router set it after warm-up.",
            labels: "",
            source: "`Setting max batch total tokens to N`",
        },
        read: Reading::One(|r| r.max_batch_total_tokens),
        while_down: true,
    },
    tgi_histogram!(
        "te_request_tokenization_duration",
        "Request tokenization duration",
        "TEI `Success` event `tokenization_time`",
        |r| r.tei(|r| &r.tei_tokenization_duration)
    ),
    tgi_histogram!(
        "te_request_queue_duration",
        "Request queue duration",
        "TEI `Success` event `queue_time`",
        |r| r.tei(|r| &r.tei_queue_duration)
    ),
    tgi_histogram!(
        "te_request_inference_duration",
        "Request inference duration",
        "TEI `Success` event `inference_time`",
        |r| r.tei(|r| &r.tei_inference_duration)
    ),
];
