//! LMDeploy's series: one row per series, each data-parallel rank (`DPn` in the line) of a log
//! its own label set (`model_name`, `engine`, `log` and the constant labels), as LMDeploy's own
//! `PrometheusStatLogger` labels them (`model_name`, `engine` = the DP rank).

use super::LmdeployRank;
use crate::catalog::{engine_metric, liveness_metric, Kind, Metric, Reading, Row};
use crate::engines::parts::liveness::overdue;

/// Every LMDeploy series, in exposition order: LMDeploy's own names first
/// (`lmdeploy/metrics/loggers.py`), then what only the log has.
pub static LMDEPLOY: &[Row<LmdeployRank>] = &[
    engine_metric!("lmdeploy:num_requests_running", Gauge, "Number of requests in model execution batches.",
        "stats line `Engine (running/waiting): r / w` (0.13+), `Running: N reqs` (0.9.2-0.12)", |r| r.running),
    engine_metric!("lmdeploy:num_requests_waiting", Gauge, "Number of requests waiting to be processed.",
        "stats line `Engine (running/waiting): r / w` (0.13+), `Waiting: N reqs` (0.9.2-0.12)", |r| r.waiting),
    engine_metric!("lmdeploy:gpu_cache_usage_perc", Gauge, "GPU KV-cache usage. 1 means 100 percent usage.",
        "stats line `KV cache: X%` (0.13+), `GPU KV cache usage: X%` (0.9.2-0.12), / 100", |r| r.kv_cache_usage),
    engine_metric!("lmdeploy:prefix_cache_hit_rate", Gauge, "Prefix caching hit rate. 1 means every prompt block hit.",
        "stats line `Prefix cache hit rate: X%` / 100 (0.12+; from 0.13 printed only when not 0, so absent is 0)", |r| r.prefix_cache_hit_rate),
    engine_metric!("lmdeploy:external_prefix_cache_hit_rate", Gauge, "External prefix cache hit rate. 1 means every query hit.",
        "stats line `External prefix cache hit rate: X%` / 100 (development branch after 0.18)", |r| r.external_prefix_cache_hit_rate),
    engine_metric!("lmdeploy:num_requests_finished", Gauge, "Number of current finished requests.",
        "stats line `Finished: N reqs` (0.9.2-0.12): finished since the server started", |r| r.finished),
    engine_metric!("lmdeploy:num_requests_unfinished", Gauge, "Number of current unfinished requests.",
        "stats line `Unfinished: N reqs` (0.9.2-0.12)", |r| r.unfinished),
    engine_metric!("lmdeploy:num_requests_succeeded", Gauge, "Number of current succeeded requests.",
        "stats line `Server (succeeded/failed/routed/waiting)`, `succeeded` (0.13+): succeeded since the server started", |r| r.succeeded),
    engine_metric!("lmdeploy:num_requests_failed", Gauge, "Number of current failed requests.",
        "stats line `Server (succeeded/failed/routed/waiting)`, `failed` (0.13+): failed since the server started", |r| r.failed),
    engine_metric!("lmdeploy:num_api_requests_routed", Gauge, "Number of requests routed to request handles.",
        "stats line `Server (...)` / `API server (...)`, `routed`", |r| r.api_routed),
    engine_metric!("lmdeploy:num_api_requests_waiting", Gauge, "Number of requests waiting for free request handles.",
        "stats line `Server (...)` / `API server (...)`, `waiting`", |r| r.api_waiting),
    engine_metric!("llmtail_lmdeploy_num_requests_completed", Gauge, "Requests completed since the server started (the development form of PR #4297).",
        "stats line `API server (completed/routed/waiting)`, `completed`", |r| r.completed),
    engine_metric!("llmtail_lmdeploy_prompt_throughput_tokens_per_second", Gauge, "Average prefill throughput in tokens/s over the last interval.",
        "stats line `Avg thr (in/out): in / out tokens/s` (0.13+), `Avg prompt throughput: X tokens/s` (0.9.2-0.12)", |r| r.prompt_throughput),
    engine_metric!("llmtail_lmdeploy_generation_throughput_tokens_per_second", Gauge, "Average generation throughput in tokens/s over the last interval.",
        "stats line `Avg thr (in/out): in / out tokens/s` (0.13+), `Avg generation throughput: X tokens/s` (0.9.2-0.12)", |r| r.generation_throughput),
    engine_metric!("lmdeploy:prompt_tokens", Counter, "Number of prefill tokens processed.",
        "sum of the prompt throughput x the window the line covers: LMDeploy's fixed 10 s interval plus the logging loop's lateness learned from the line times (a line never covers the silence before it: windows without tokens print nothing)", |r| r.prompt_tokens),
    engine_metric!("lmdeploy:generation_tokens", Counter, "Number of generation tokens processed.",
        "sum of the generation throughput x the window the line covers (as `lmdeploy:prompt_tokens`)", |r| r.generation_tokens),
    engine_metric!("lmdeploy:spec_decode_num_accepted_tokens", Counter, "Number of speculative decoding accepted tokens.",
        "sum of `SpecDecoding metrics: ... Accepted: N tokens` (per interval)", |r| r.spec_accepted_tokens),
    engine_metric!("lmdeploy:spec_decode_num_draft_tokens", Counter, "Number of speculative decoding draft tokens.",
        "sum of `SpecDecoding metrics: ... Drafted: N tokens` (per interval)", |r| r.spec_draft_tokens),
    engine_metric!("lmdeploy:spec_decode_mean_accept_rate", Gauge, "Mean speculative decoding acceptance rate. 1 means 100 percent accepted.",
        "`lmdeploy:spec_decode_num_accepted_tokens_total` / `lmdeploy:spec_decode_num_draft_tokens_total`, as LMDeploy's exporter computes it", LmdeployRank::spec_mean_accept_rate),
    engine_metric!("llmtail_lmdeploy_spec_decode_mean_acceptance_length", Gauge, "Mean tokens per speculative step in the last interval that drafted (1 + accepted per draft).",
        "`SpecDecoding metrics: ... Mean acceptance length: X`", |r| r.spec_mean_acceptance_length),
    Row {
        metric: Metric {
            name: "llmtail_lmdeploy_spec_decode_acceptance_rate_per_position",
            kind: Kind::Gauge,
            help: "Accepted tokens per draft at each draft position in the last interval that drafted.",
            labels: "`position` (0-based)",
            source: "`SpecDecoding metrics: ... Per-position acceptance rate: a, b, ...`",
        },
        read: Reading::Labelled("position", |r| {
            r.spec_per_position.iter().enumerate().map(|(i, v)| (i.to_string(), *v)).collect()
        }),
        while_down: false,
    },
    engine_metric!("llmtail_lmdeploy_mm_preprocess_seconds", Gauge, "Average multimodal preprocessing time per request in the last interval.",
        "stats line `Avg MM preprocess: X s/req` (development branch after 0.18)", |r| r.mm_preprocess_seconds),
    liveness_metric!("llmtail_lmdeploy_engine_up", Gauge, "1 while the rank is alive; 0 when its last stats line showed running or waiting requests and no line came for 3 intervals (30 s). Its gauges are not exported while it is 0.",
        "stats lines (1); silence after a line with work in hand (0)", |r| Some(r.up())),
    liveness_metric!("llmtail_lmdeploy_engine_overdue", Gauge, "1 while the rank is down because its last stats line showed running or waiting requests and no line came for 3 intervals: it stopped logging with work in hand (killed, hung). 0 while it is up or idle.",
        "the time since the rank's last stats line, against LMDeploy's 10 s interval", |r| Some(overdue(r.status))),
    liveness_metric!("llmtail_lmdeploy_engine_last_line_timestamp_seconds", Gauge, "When the rank's last stats line was written.",
        "the `[%Y-%m-%d %H:%M:%S DPn]` head (local time, read in the log's zone)", |r| r.pacing.last_line_at()),
];
