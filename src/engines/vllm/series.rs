//! vLLM's series: one row per series, each engine (`Engine NNN:`) of a log its own label set
//! (`engine`, `model_name`, `log` and the constant labels).

use super::VllmEngine;
use crate::catalog::{engine_metric, liveness_metric, Kind, Metric, Reading, Row};
use crate::engines::parts::liveness::overdue;

/// Every vLLM engine series, in exposition order.
pub static VLLM_ENGINE: &[Row<VllmEngine>] = &[
    engine_metric!("vllm:num_requests_running", Gauge, "Number of requests currently running on GPU.",
        "stats line `Running: N reqs`", |e| e.running),
    engine_metric!("vllm:num_requests_waiting", Gauge, "Number of requests waiting to be processed.",
        "stats line `Waiting: N reqs` (V1), `Pending: N reqs` (V0)", |e| e.waiting),
    engine_metric!("vllm:num_requests_swapped", Gauge, "Number of requests swapped to CPU.",
        "V0 stats line `Swapped: N reqs`", |e| e.swapped),
    engine_metric!("vllm:kv_cache_usage_perc", Gauge, "KV-cache usage. 1 means 100 percent usage.",
        "stats line `<DEVICE> KV cache usage: X%` / 100 (GPU, XPU, NPU, CPU, TPU, HPU...)", |e| e.kv_cache_usage),
    engine_metric!("vllm:gpu_cache_usage_perc", Gauge, "GPU KV-cache usage. 1 means 100 percent usage (the pre-0.10 name of vllm:kv_cache_usage_perc).",
        "same value as `vllm:kv_cache_usage_perc`", |e| e.kv_cache_usage),
    engine_metric!("vllm:cpu_cache_usage_perc", Gauge, "CPU KV-cache (swap space) usage. 1 means 100 percent usage.",
        "V0 stats line `CPU KV cache usage: X%` / 100", |e| e.cpu_cache_usage),
    engine_metric!("vllm:gpu_prefix_cache_hit_rate", Gauge, "GPU prefix cache block hit rate.",
        "V1 stats line `Prefix cache hit rate: X%` / 100; V0 line `Prefix cache hit rate: GPU: X%, ...`", |e| e.gpu_prefix_cache_hit_rate),
    engine_metric!("vllm:cpu_prefix_cache_hit_rate", Gauge, "CPU prefix cache block hit rate.",
        "V0 line `Prefix cache hit rate: ..., CPU: Y%` / 100", |e| e.cpu_prefix_cache_hit_rate),
    engine_metric!("vllm:avg_prompt_throughput_toks_per_s", Gauge, "Average prefill throughput in tokens/s.",
        "stats line `Avg prompt throughput: X tokens/s`", |e| e.prompt_throughput),
    engine_metric!("vllm:avg_generation_throughput_toks_per_s", Gauge, "Average generation throughput in tokens/s.",
        "stats line `Avg generation throughput: X tokens/s`", |e| e.generation_throughput),
    engine_metric!("vllm:prompt_tokens", Counter, "Number of prefill tokens processed (every prompt token: V0, and V1 up to 0.15).",
        "sum of `Avg prompt throughput` x the window it covers (below), where the line counts every prompt token: V0 and V1 up to 0.15.x", |e| e.prompt_tokens),
    Row {
        metric: Metric {
            name: "vllm:prompt_tokens_by_source",
            kind: Kind::Counter,
            help: "Number of prompt tokens by source (local_compute: computed by this engine, prefix-cache hits and transferred KV left out).",
            labels: "`source`: `local_compute`",
            source: "sum of `Avg prompt throughput` x the window it covers, where the line counts only the prompt tokens computed locally: V1 0.16.0+ and V1 lines of unknown version",
        },
        read: Reading::LabelledOne("source", |e| {
            e.prompt_tokens_local_compute.map(|v| ("local_compute", v))
        }),
        while_down: false,
    },
    engine_metric!("vllm:generation_tokens", Counter, "Number of generation tokens processed.",
        "sum of `Avg generation throughput` x the window it covers: the interval (learned or `--vllm-stats-interval`) plus the logging loop's lateness learned from the line times; the gap for V0 and for a late line; since the start-up line for the first line of a run", |e| e.generation_tokens),
    engine_metric!("vllm:num_preemptions", Counter, "Cumulative number of preemptions from the engine.",
        "sum of `Preemptions: N` (V1 0.11.1+); V0 warnings `total_num_cumulative_preemption=N`", |e| e.preemptions()),
    engine_metric!("vllm:spec_decode_draft_acceptance_rate", Gauge, "Speculative token acceptance rate.",
        "`SpecDecoding metrics: ... Avg Draft acceptance rate: X%` / 100 (or `Draft acceptance rate`, V0 as a fraction)", |e| e.spec_acceptance_rate),
    engine_metric!("vllm:spec_decode_efficiency", Gauge, "Speculative decoding system efficiency.",
        "V0 `Speculative metrics: ... System efficiency: X`", |e| e.spec_efficiency),
    engine_metric!("vllm:spec_decode_num_accepted_tokens", Counter, "Number of accepted speculative tokens.",
        "sum of `SpecDecoding metrics: ... Accepted: N tokens`; V0 `Number of accepted tokens` (a running total)", |e| e.spec_accepted_tokens),
    engine_metric!("vllm:spec_decode_num_draft_tokens", Counter, "Number of draft tokens.",
        "sum of `SpecDecoding metrics: ... Drafted: N tokens`; V0 `Number of draft tokens` (a running total)", |e| e.spec_draft_tokens),
    engine_metric!("vllm:spec_decode_num_emitted_tokens", Counter, "Number of emitted tokens.",
        "V0 `Speculative metrics: ... Number of emitted tokens: N` (a running total)", |e| e.spec_emitted_tokens),
    engine_metric!("llmtail_vllm_spec_decode_mean_acceptance_length", Gauge, "Mean number of tokens emitted per speculative step (1 + accepted per draft).",
        "`SpecDecoding metrics: Mean acceptance length: X`", |e| e.spec_mean_acceptance_length),
    Row {
        metric: Metric {
            name: "llmtail_vllm_spec_decode_acceptance_rate_per_position",
            kind: Kind::Gauge,
            help: "Speculative token acceptance rate at each draft position.",
            labels: "`position` (0-based)",
            source: "`SpecDecoding metrics: ... Per-position acceptance rate: a, b, ...`",
        },
        read: Reading::Labelled("position", |e| {
            // A position without a sample (`nan`) has no series; the others keep theirs.
            e.spec_per_position.iter().enumerate().filter_map(|(i, v)| Some((i.to_string(), (*v)?))).collect()
        }),
        while_down: false,
    },
    engine_metric!("llmtail_vllm_num_requests_deferred", Gauge, "Waiting requests deferred by LoRA budget, KV transfer or blocked status (included in waiting).",
        "stats line `Deferred: N reqs` (0.20+; printed only when non-zero, so absent after a first one means 0)", |e| e.deferred),
    Row {
        metric: Metric {
            name: "llmtail_vllm_kv_fetch_requests",
            kind: Kind::Gauge,
            help: "Requests loading remote KV cache, by stage.",
            labels: "`stage`: `waiting_to_start`, `in_progress`, `completed_waiting`",
            source: "stats line `KV fetch: a waiting to start, b in progress, c completed waiting` (0.32+; absent after a first one means 0)",
        },
        read: Reading::Labelled("stage", |e| match e.kv_fetch {
            Some([a, b, c]) => vec![
                ("waiting_to_start".to_string(), a),
                ("in_progress".to_string(), b),
                ("completed_waiting".to_string(), c),
            ],
            None => Vec::new(),
        }),
        while_down: false,
    },
    engine_metric!("llmtail_vllm_corrupted_requests", Gauge, "Requests with NaNs in logits in the last interval (VLLM_COMPUTE_NANS_IN_LOGITS=1).",
        "stats line `Corrupted: N reqs`", |e| e.corrupted),
    engine_metric!("llmtail_vllm_external_prefix_cache_hit_rate", Gauge, "External (KV connector) prefix cache hit rate.",
        "stats line `External prefix cache hit rate: X%` / 100", |e| e.external_prefix_cache_hit_rate),
    engine_metric!("llmtail_vllm_mm_cache_hit_rate", Gauge, "Multimodal processor cache hit rate.",
        "stats line `MM cache hit rate: X%` / 100", |e| e.mm_cache_hit_rate),
    engine_metric!("llmtail_vllm_kv_cache_capacity_tokens", Gauge, "KV cache capacity in tokens.",
        "startup `<DEVICE> KV cache size: N tokens`", |e| e.kv_cache_capacity_tokens),
    engine_metric!("llmtail_vllm_max_concurrency", Gauge, "Maximum concurrency for max_model_len tokens per request.",
        "startup `Maximum concurrency for N tokens per request: X.XXx`", |e| e.max_concurrency),
    engine_metric!("llmtail_vllm_gpu_blocks", Gauge, "Number of KV cache blocks on the accelerator.",
        "startup `# GPU blocks: N` (any device word), `num_gpu_blocks is: N`", |e| e.gpu_blocks),
    engine_metric!("llmtail_vllm_cpu_blocks", Gauge, "Number of CPU swap-space KV cache blocks.",
        "startup `# GPU blocks: N, # CPU blocks: M`", |e| e.cpu_blocks),
    engine_metric!("llmtail_vllm_iterations", Counter, "Scheduler steps (dummy data-parallel steps excluded).",
        "`Iteration(N): ...` lines (--enable-logging-iteration-details)", |e| e.iterations),
    engine_metric!("llmtail_vllm_iteration_context_tokens", Counter, "Prefill tokens scheduled, summed over steps.",
        "`Iteration(N): ..., B context tokens, ...`", |e| e.iteration_context_tokens),
    engine_metric!("llmtail_vllm_iteration_generation_tokens", Counter, "Generation tokens scheduled, summed over steps.",
        "`Iteration(N): ..., D generation tokens, ...`", |e| e.iteration_generation_tokens),
    liveness_metric!("llmtail_vllm_engine_up", Gauge, "1 while the engine is alive; 0 after a shutdown or crash line, or when a stats line it was due to print is 3 intervals late. Its gauges are not exported while it is 0.",
        "start-up and stats lines (1); shutdown, crash and overdue lines (0)", |e| Some(e.up())),
    liveness_metric!("llmtail_vllm_engine_overdue", Gauge, "1 while the engine is down because a stats line it was due to print is 3 intervals late: its last line showed running or waiting requests (or it is a vLLM that prints idle lines too, before 0.8.5, V0 before 0.6.5), so it stopped logging with work in hand (killed, hung, out of memory). 0 while it is up or idle, and after a shutdown or crash line.",
        "the time since the engine's last stats line, against its interval", |e| Some(overdue(e.status))),
    liveness_metric!("llmtail_vllm_engine_starts", Counter, "Start-ups of the engine seen in the log.",
        "engine config line, `Supported tasks:` (the lines of one start-up count once)", |e| Some(e.starts as f64)),
    liveness_metric!("llmtail_vllm_engine_last_line_timestamp_seconds", Gauge, "When the engine's last stats line was written.",
        "record head or envelope time", |e| e.pacing.last_line_at()),
    Row {
        metric: Metric {
            name: "llmtail_vllm_info",
            kind: Kind::Gauge,
            help: "Always 1; the version label says which vLLM wrote the log (unknown when neither the log nor --vllm-version says).",
            labels: "`version`",
            source: "the engine config line `Initializing a V1 LLM engine (vX) with config: ...`; else `--vllm-version`",
        },
        read: Reading::LabelledOne("version", |e| Some((e.version_label.as_str(), 1.0))),
        while_down: true,
    },
];

/// Per log: vLLM said it prints no stats lines.
pub const VLLM_STATS_LOGGING_DISABLED: Metric = Metric {
    name: "llmtail_vllm_stats_logging_disabled",
    kind: Kind::Gauge,
    help: "1 when vLLM said it prints no stats lines (several API servers, the data-parallel default; fix: vllm serve --api-server-count 1).",
    labels: "`log`",
    source: "`AsyncLLM created with api_server_count more than 1; disabling stats logging ...`",
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Reading;

    #[test]
    fn a_position_without_a_sample_has_no_series_and_the_others_keep_theirs() {
        let metric = VLLM_ENGINE
            .iter()
            .find(|m| m.metric.name == "llmtail_vllm_spec_decode_acceptance_rate_per_position")
            .unwrap();
        let Reading::Labelled("position", read) = metric.read else {
            panic!("per-position rates are labelled by position");
        };
        let engine = VllmEngine {
            spec_per_position: vec![Some(0.333), None, Some(0.182)],
            ..VllmEngine::default()
        };
        assert_eq!(
            read(&engine),
            [("0".to_string(), 0.333), ("2".to_string(), 0.182)]
        );
    }
}
