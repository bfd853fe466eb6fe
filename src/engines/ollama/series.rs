//! Ollama's series. Ollama exports no metrics, so every name is llmtail's own. Each route
//! (`method`, `path`) of a log is a label set of the HTTP families; the runner series are one
//! per log.

use super::{OllamaRoute, REQUEST_BUCKETS};
use crate::catalog::{Kind, LeFormat, Metric, Reading, Row};

/// The HTTP series of one route, in exposition order.
pub static OLLAMA_ROUTE: &[Row<OllamaRoute>] = &[
    Row {
        metric: Metric {
            name: "llmtail_ollama_http_requests",
            kind: Kind::Counter,
            help: "HTTP requests Ollama answered, by route and status.",
            labels: "`status`",
            source: "gin access line (one per request): its status, method and path",
        },
        read: Reading::Labelled("status", OllamaRoute::requests_by_status),
        while_down: true,
    },
    Row {
        metric: Metric {
            name: "llmtail_ollama_http_request_duration_seconds",
            kind: Kind::Histogram,
            help: "Time Ollama took to answer a request (a streamed answer until its last token), by route.",
            labels: "`le` (5 ms to 30 min)",
            source: "gin access line latency (`971.777µs`, `4.709180529s`, `1m43s`: whole seconds above a minute)",
        },
        read: Reading::Histogram(|r| r.duration_seconds.view(&REQUEST_BUCKETS, LeFormat::Shortest)),
        while_down: true,
    },
];

pub const OLLAMA_RUNNER_LOAD_SECONDS: Metric = Metric {
    name: "llmtail_ollama_runner_load_seconds",
    kind: Kind::Gauge,
    help: "How long the last model load took, until its runner answered (a last value: loads are minutes or hours apart).",
    labels: "`log`",
    source: "`llama runner started in X seconds`",
};

pub const OLLAMA_RUNNER_LOADS: Metric = Metric {
    name: "llmtail_ollama_runner_loads",
    kind: Kind::Counter,
    help: "Model loads that finished (runner started lines).",
    labels: "`log`",
    source: "`llama runner started in X seconds`",
};

pub const OLLAMA_LOADED_RUNNERS: Metric = Metric {
    name: "llmtail_ollama_loaded_runners",
    kind: Kind::Gauge,
    help: "Runners (loaded models) the scheduler held after its last load; Ollama logs no count when a model is unloaded.",
    labels: "`log`",
    source: "`msg=\"loaded runners\" count=N`",
};

/// Ollama's per-log series, in exposition order.
pub static OLLAMA_LOG: &[Metric] = &[
    OLLAMA_RUNNER_LOAD_SECONDS,
    OLLAMA_RUNNER_LOADS,
    OLLAMA_LOADED_RUNNERS,
];
