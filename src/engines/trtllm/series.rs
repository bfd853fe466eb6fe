//! TensorRT-LLM's and Triton's series: one row per series, each rank (or Triton process slot)
//! of a log its own label set (`model`, `version`, `log`, `rank` and the constant labels).

use super::{TrtllmRank, LATENCY_BUCKETS};
use crate::catalog::{Kind, LeFormat, Metric, Reading, Row};
use crate::engines::parts::liveness::overdue;

macro_rules! trtllm_family {
    ($name:literal, $kind:ident, $label:literal, $labels:literal, $help:literal, $source:literal, $read:expr) => {
        Row {
            metric: Metric {
                name: $name,
                kind: Kind::$kind,
                help: $help,
                labels: $labels,
                source: $source,
            },
            read: Reading::LabelledStatic($label, $read),
            while_down: false,
        }
    };
}

macro_rules! trtllm_metric {
    ($name:literal, $kind:ident, $help:literal, $source:literal, $read:expr) => {
        Row {
            metric: Metric {
                name: $name,
                kind: Kind::$kind,
                help: $help,
                labels: "",
                source: $source,
            },
            read: Reading::One($read),
            while_down: false,
        }
    };
}

/// Every TensorRT-LLM series, in exposition order: Triton's families first (the last
/// iteration, as Triton's exporter shows it), then what only the log has.
pub static TRTLLM: &[Row<TrtllmRank>] = &[
    trtllm_family!("nv_trt_llm_request_metrics", Gauge, "request_type",
        "`request_type`: `active`, `max`, `scheduled`, `context`, `waiting`",
        "TRT LLM request metrics",
        "Triton JSON `Active Request Count`, `Max Request Count`, `Scheduled Requests`, `Context Requests`, `Waiting Requests` (else active - scheduled); IterationStats `numActiveRequests`, `maxNumActiveRequests`, `inflightBatchingStats.numScheduledRequests`/`numContextRequests`; iter log `num_scheduled_requests`, `states.num_ctx_requests`, `num_active`",
        TrtllmRank::request_metrics),
    trtllm_family!("nv_trt_llm_runtime_memory_metrics", Gauge, "memory_type",
        "`memory_type`: `cpu`, `gpu`, `pinned`",
        "TRT LLM runtime memory metrics",
        "`Runtime CPU/GPU/Pinned Memory Usage`; `cpuMemUsage`, `gpuMemUsage`, `pinnedMemUsage` (bytes)",
        TrtllmRank::memory_metrics),
    trtllm_family!("nv_trt_llm_kv_cache_block_metrics", Gauge, "kv_cache_block_type",
        "`kv_cache_block_type`: `max`, `free`, `used`, `tokens_per`, `reused`, `fraction`",
        "TRT LLM KV cache block metrics",
        "`Max/Free/Used KV cache blocks`, `Tokens per KV cache block`, `Reused KV cache blocks`, `Fraction used KV cache blocks` (else used / max); `kvCacheStats.*`; iter log `kv_cache_util` as `fraction`",
        TrtllmRank::kv_block_metrics),
    trtllm_family!("nv_trt_llm_inflight_batcher_metrics", Gauge, "inflight_batcher_specific_metric",
        "`inflight_batcher_specific_metric`: `total_context_tokens`, `generation_requests`, `micro_batch_id`, `paused_requests`",
        "TRT LLM inflight batcher metrics",
        "`Total Context Tokens`, `Generation Requests`, `MicroBatch ID`, `Paused Requests`; `inflightBatchingStats.*`; iter log `states.num_ctx_tokens`",
        TrtllmRank::inflight_batcher_metrics),
    trtllm_family!("nv_trt_llm_v1_metrics", Gauge, "v1_specific_metric",
        "`v1_specific_metric`: `total_context_tokens`, `total_generation_tokens`, `empty_generation_slots`",
        "TRT LLM v1-specific metrics",
        "static batching records: `Total Context Tokens`, `Total Generation Tokens`, `Empty Generation Slots`; `staticBatchingStats.*`",
        TrtllmRank::v1_metrics),
    trtllm_family!("nv_trt_llm_general_metrics", Gauge, "general_type",
        "`general_type`: `iteration_counter`, `timestamp` (microseconds since the epoch: the stats' local time read in the log's zone, as Triton's `mktime` reads it; the zone is learned from a record with a local time, and taken as UTC until then)",
        "General TRT LLM metrics",
        "`Iteration Counter`, `Timestamp`; `iter`, `timestamp`; iter log `iter`",
        TrtllmRank::general_metrics),
    // Triton exports this family as a prometheus-cpp counter, whose samples carry no `_total`:
    // typed as a gauge here so the sample name stays Triton's own.
    trtllm_family!("nv_trt_llm_disaggregated_serving_metrics", Gauge, "disaggregated_serving_type",
        "`disaggregated_serving_type`: `kv_cache_transfer_ms`, `request_count`",
        "TRT LLM disaggregated serving metrics (a running sum; Triton types it as a counter)",
        "running sum of `KV cache transfer time` and `Request count` (Triton JSON, v0.15+)",
        TrtllmRank::disaggregated_serving_metrics),
    trtllm_metric!("llmtail_trtllm_iterations", Counter, "Executor iterations logged.",
        "every iteration line (formats A, B, C)", |r| Some(r.iterations)),
    Row {
        metric: Metric { name: "llmtail_trtllm_iteration_seconds", kind: Kind::Histogram,
            help: "Iteration latency.", labels: "`le`",
            source: "IterationStats `iterLatencyMS`; iter log `host_step_time` (V3+) or `elapsed_time` (V1-V2)" },
        read: Reading::Histogram(|r| r.iteration_seconds.view(&LATENCY_BUCKETS, LeFormat::Shortest)),
        while_down: false,
    },
    Row {
        metric: Metric { name: "llmtail_trtllm_device_step_seconds", kind: Kind::Histogram,
            help: "Device time of the previous step.", labels: "`le`",
            source: "iter log `prev_device_step_time` (ms)" },
        read: Reading::Histogram(|r| r.device_step_seconds.view(&LATENCY_BUCKETS, LeFormat::Shortest)),
        while_down: false,
    },
    trtllm_metric!("llmtail_trtllm_completed_requests", Counter, "Requests completed.",
        "sum of IterationStats `numCompletedRequests`", |r| r.completed_requests),
    trtllm_metric!("llmtail_trtllm_queued_requests", Gauge, "Requests queued, not yet active.",
        "IterationStats `numQueuedRequests`", TrtllmRank::queued_requests),
    trtllm_metric!("llmtail_trtllm_context_tokens", Counter, "Context (prefill) tokens scheduled, summed over iterations.",
        "sum of `Total Context Tokens`, `numCtxTokens`, iter log `states.num_ctx_tokens`", |r| r.context_tokens),
    trtllm_metric!("llmtail_trtllm_kv_cache_reused_blocks", Counter, "KV cache blocks reused (prefix hits).",
        "`Reused KV cache blocks`, `kvCacheStats.reusedBlocks` (running totals, followed across restarts)",
        |r| r.kv_reused_blocks.map(|c| c.value())),
    trtllm_metric!("llmtail_trtllm_kv_cache_missed_blocks", Counter, "KV cache blocks missed.",
        "`kvCacheStats.missedBlocks` (a running total)", |r| r.kv_missed_blocks.map(|c| c.value())),
    trtllm_metric!("llmtail_trtllm_kv_cache_hit_rate", Gauge, "KV cache block hit rate, reused / (reused + missed).",
        "`kvCacheStats.cacheHitRate`", TrtllmRank::kv_cache_hit_rate),
    trtllm_metric!("llmtail_trtllm_kv_cache_capacity_tokens", Gauge, "KV cache capacity in tokens.",
        "startup `Using N tokens in paged KV cache`, `[MemUsageChange] ... (N)`, else primary blocks x tokens per block; the last line wins",
        TrtllmRank::kv_cache_capacity_tokens),
    trtllm_metric!("llmtail_trtllm_spec_decode_draft_tokens", Counter, "Draft tokens proposed.",
        "sum of `specDecodingStats.numDraftTokens`", |r| r.spec_draft_tokens),
    trtllm_metric!("llmtail_trtllm_spec_decode_accepted_tokens", Counter, "Draft tokens accepted.",
        "sum of `specDecodingStats.numAcceptedTokens`", |r| r.spec_accepted_tokens),
    trtllm_metric!("llmtail_trtllm_spec_decode_acceptance_length", Gauge, "Mean tokens per step with speculative decoding.",
        "`specDecodingStats.acceptanceLength`", TrtllmRank::spec_acceptance_length),
    trtllm_metric!("llmtail_trtllm_new_active_requests", Counter, "Requests that became active (left the queue for the batch).",
        "sum of IterationStats `numNewActiveRequests`", |r| r.new_active_requests),
    trtllm_metric!("llmtail_trtllm_new_request_queue_latency_seconds", Gauge, "Mean time in the queue of the requests the last iteration that activated any activated.",
        "IterationStats `newActiveRequestsQueueLatencyMS` (a sum over those requests) / `numNewActiveRequests`, in seconds",
        |r| r.new_request_queue_latency_seconds),
    trtllm_metric!("llmtail_trtllm_avg_decoded_tokens_per_iteration", Gauge, "Mean tokens decoded per request in the last iteration (above 1 with speculative decoding).",
        "IterationStats `inflightBatchingStats.avgNumDecodedTokensPerIter`", TrtllmRank::avg_decoded_tokens_per_iteration),
    trtllm_family!("llmtail_trtllm_max_batch_size", Gauge, "kind", "`kind`: `static`, `runtime`, `tuner_recommended`",
        "Maximum batch size: configured, in force, and the dynamic batch tuner's recommendation (0 while the tuner is off).",
        "IterationStats `maxBatchSizeStatic`, `maxBatchSizeRuntime`, `maxBatchSizeTunerRecommended`", TrtllmRank::max_batch_size),
    trtllm_family!("llmtail_trtllm_max_num_tokens", Gauge, "kind", "`kind`: `static`, `runtime`, `tuner_recommended`",
        "Maximum tokens per iteration: configured, in force, and the dynamic batch tuner's recommendation (0 while the tuner is off).",
        "IterationStats `maxNumTokensStatic`, `maxNumTokensRuntime`, `maxNumTokensTunerRecommended`", TrtllmRank::max_num_tokens),
    trtllm_metric!("llmtail_trtllm_kv_cache_alloc_total_blocks", Counter, "KV cache blocks handed out (new or reused).",
        "`kvCacheStats.allocTotalBlocks` (a running total, followed across restarts)", |r| r.kv_alloc_total_blocks.map(|c| c.value())),
    trtllm_metric!("llmtail_trtllm_kv_cache_alloc_new_blocks", Counter, "KV cache blocks handed out empty (not a reused prefix).",
        "`kvCacheStats.allocNewBlocks` (a running total, followed across restarts)", |r| r.kv_alloc_new_blocks.map(|c| c.value())),
    Row {
        metric: Metric { name: "llmtail_trtllm_engine_up", kind: Kind::Gauge,
            help: "1 while the executor is alive; 0 after Triton's signal line, or when requests were active and no iteration came for 60 s. Its gauges are not exported while it is 0.",
            labels: "",
            source: "identity and iteration lines (1); Triton `Signal (N) received.` (0: 2 and 15 shut down, others crash); silence after a record with active requests (formats A and B)" },
        read: Reading::One(|r| Some(r.up())),
        while_down: true,
    },
    Row {
        metric: Metric { name: "llmtail_trtllm_engine_overdue", kind: Kind::Gauge,
            help: "1 while the executor is down because its last iteration record had active requests and no iteration came for 60 s since: it stopped with work in hand (killed, hung). 0 while it is up or idle, and after Triton's signal line.",
            labels: "",
            source: "the time since the last iteration record with active requests (formats A and B)" },
        read: Reading::One(|r| Some(overdue(r.status))),
        while_down: true,
    },
];
