//! The one list of every series llmtail exports: name, type, help, and where the value
//! comes from. The exposition walks it to render `/metrics`, and the README's metric table
//! is rendered from it (a test keeps the two equal), so a name is written exactly once.
//!
//! Names are vLLM's and Triton's own wherever the engine exports the same meaning, so
//! existing dashboards and alerts work unchanged; everything else is `llmtail_`.

use crate::state::trtllm::{Histogram, TrtllmRank};
use crate::state::vllm::VllmEngine;

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
    /// Labels besides the common ones of its group, for the README.
    pub labels: &'static str,
    /// Which line and field the value comes from, for the README.
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

/// How to read one vLLM engine series out of the engine's state.
#[derive(Clone, Copy)]
pub enum Reading {
    One(fn(&VllmEngine) -> Option<f64>),
    /// Several samples that differ by one extra label (`label`, value).
    Labelled(&'static str, fn(&VllmEngine) -> Vec<(String, f64)>),
}

/// A vLLM engine series: labels `engine`, `model_name`, `log` and the constant labels.
#[derive(Clone, Copy)]
pub struct EngineMetric {
    pub metric: Metric,
    pub read: Reading,
    /// Exported while the engine is down too. Gauges are not: vLLM's own go stale when its
    /// `/metrics` stops answering. Counters keep their values, and the liveness series say why.
    pub while_down: bool,
}

impl EngineMetric {
    /// Whether the series is exported for an engine that is down.
    pub fn shown_while_down(&self) -> bool {
        self.while_down || self.metric.kind == Kind::Counter
    }
}

macro_rules! engine_metric {
    ($name:literal, $kind:ident, $help:literal, $source:literal, $read:expr) => {
        engine_metric!($name, $kind, $help, $source, $read, false)
    };
    ($name:literal, $kind:ident, $help:literal, $source:literal, $read:expr, $while_down:expr) => {
        EngineMetric {
            metric: Metric {
                name: $name,
                kind: Kind::$kind,
                help: $help,
                labels: "",
                source: $source,
            },
            read: Reading::One($read),
            while_down: $while_down,
        }
    };
}

/// A series about the engine's liveness, exported whether it is up or down.
macro_rules! liveness_metric {
    ($name:literal, $kind:ident, $help:literal, $source:literal, $read:expr) => {
        engine_metric!($name, $kind, $help, $source, $read, true)
    };
}

/// Every vLLM engine series, in exposition order.
pub static VLLM_ENGINE: &[EngineMetric] = &[
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
    EngineMetric {
        metric: Metric {
            name: "vllm:prompt_tokens_by_source",
            kind: Kind::Counter,
            help: "Number of prompt tokens by source (local_compute: computed by this engine, prefix-cache hits and transferred KV left out).",
            labels: "`source`: `local_compute`",
            source: "sum of `Avg prompt throughput` x the window it covers, where the line counts only the prompt tokens computed locally: V1 0.16.0+ and V1 lines of unknown version",
        },
        read: Reading::Labelled("source", |e| {
            e.prompt_tokens_local_compute
                .map(|v| vec![("local_compute".to_string(), v)])
                .unwrap_or_default()
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
    EngineMetric {
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
    EngineMetric {
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
    EngineMetric {
        metric: Metric {
            name: "llmtail_vllm_info",
            kind: Kind::Gauge,
            help: "Always 1; the version label says which vLLM wrote the log (unknown when neither the log nor --vllm-version says).",
            labels: "`version`",
            source: "the engine config line `Initializing a V1 LLM engine (vX) with config: ...`; else `--vllm-version`",
        },
        read: Reading::Labelled("version", |e| vec![(e.version_label.clone(), 1.0)]),
        while_down: true,
    },
];

/// How to read one TensorRT-LLM series out of an executor's state.
#[derive(Clone, Copy)]
pub enum TrtllmReading {
    One(fn(&TrtllmRank) -> Option<f64>),
    /// Triton's families: one sample per type, the type in `label`.
    Labelled(&'static str, fn(&TrtllmRank) -> Vec<(&'static str, f64)>),
    Histogram(fn(&TrtllmRank) -> &Histogram),
}

/// A TensorRT-LLM series: labels `model`, `version`, `log`, `rank` and the constant labels.
#[derive(Clone, Copy)]
pub struct TrtllmMetric {
    pub metric: Metric,
    pub read: TrtllmReading,
    /// Exported while the executor is down too (gauges are not, as for vLLM engines).
    pub while_down: bool,
}

impl TrtllmMetric {
    /// Whether the series is exported for an executor that is down.
    pub fn shown_while_down(&self) -> bool {
        self.while_down || self.metric.kind != Kind::Gauge
    }
}

macro_rules! trtllm_family {
    ($name:literal, $kind:ident, $label:literal, $labels:literal, $help:literal, $source:literal, $read:expr) => {
        TrtllmMetric {
            metric: Metric {
                name: $name,
                kind: Kind::$kind,
                help: $help,
                labels: $labels,
                source: $source,
            },
            read: TrtllmReading::Labelled($label, $read),
            while_down: false,
        }
    };
}

macro_rules! trtllm_metric {
    ($name:literal, $kind:ident, $help:literal, $source:literal, $read:expr) => {
        TrtllmMetric {
            metric: Metric {
                name: $name,
                kind: Kind::$kind,
                help: $help,
                labels: "",
                source: $source,
            },
            read: TrtllmReading::One($read),
            while_down: false,
        }
    };
}

/// Every TensorRT-LLM series, in exposition order: Triton's families first (the last
/// iteration, as Triton's exporter shows it), then what only the log has.
pub static TRTLLM: &[TrtllmMetric] = &[
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
        "`general_type`: `iteration_counter`, `timestamp` (microseconds since the epoch)",
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
    TrtllmMetric {
        metric: Metric { name: "llmtail_trtllm_iteration_seconds", kind: Kind::Histogram,
            help: "Iteration latency.", labels: "`le`",
            source: "IterationStats `iterLatencyMS`; iter log `host_step_time` (V3+) or `elapsed_time` (V1-V2)" },
        read: TrtllmReading::Histogram(|r| &r.iteration_seconds),
        while_down: false,
    },
    TrtllmMetric {
        metric: Metric { name: "llmtail_trtllm_device_step_seconds", kind: Kind::Histogram,
            help: "Device time of the previous step.", labels: "`le`",
            source: "iter log `prev_device_step_time` (ms)" },
        read: TrtllmReading::Histogram(|r| &r.device_step_seconds),
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
    TrtllmMetric {
        metric: Metric { name: "llmtail_trtllm_engine_up", kind: Kind::Gauge,
            help: "1 while the executor is alive; 0 after Triton's signal line, or when requests were active and no iteration came for 60 s. Its gauges are not exported while it is 0.",
            labels: "",
            source: "identity and iteration lines (1); Triton `Signal (N) received.` (0: 2 and 15 shut down, others crash); silence after a record with active requests (formats A and B)" },
        read: TrtllmReading::One(|r| Some(r.up())),
        while_down: true,
    },
    TrtllmMetric {
        metric: Metric { name: "llmtail_trtllm_engine_overdue", kind: Kind::Gauge,
            help: "1 while the executor is down because its last iteration record had active requests and no iteration came for 60 s since: it stopped with work in hand (killed, hung). 0 while it is up or idle, and after Triton's signal line.",
            labels: "",
            source: "the time since the last iteration record with active requests (formats A and B)" },
        read: TrtllmReading::One(|r| Some(overdue(r.status))),
        while_down: true,
    },
];

/// 1 for an engine that stopped logging while a line was due, else 0: what tells a silent
/// engine with work in hand from one that shut down, crashed or is idle, which
/// `llmtail_*_engine_up` cannot.
fn overdue(status: crate::state::liveness::Status) -> f64 {
    use crate::state::liveness::{DownReason, Status};
    if status == Status::Down(DownReason::Overdue) {
        1.0
    } else {
        0.0
    }
}

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
    pub const SERIES_REFUSED: Metric = Metric {
        name: "llmtail_series_refused",
        kind: Kind::Counter,
        help: "Records dropped because they would have made series past a cap (logged once per log): more than 1024 vLLM engine indexes, 4096 TensorRT-LLM ranks or 256 Triton process slots in one log, more than 64 draft positions (the rest of that line is kept), or a new engine or rank past --max-series.",
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
    pub const VLLM_STATS_LOGGING_DISABLED: Metric = Metric {
        name: "llmtail_vllm_stats_logging_disabled",
        kind: Kind::Gauge,
        help: "1 when vLLM said it prints no stats lines (several API servers, the data-parallel default; fix: vllm serve --api-server-count 1).",
        labels: "`log`",
        source: "`AsyncLLM created with api_server_count more than 1; disabling stats logging ...`",
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

    /// In exposition order.
    pub const ALL: &[Metric] = &[
        LINES_READ,
        LINES_PARSED,
        LINES_UNMATCHED,
        LINES_REJECTED,
        SERIES_REFUSED,
        LINES_SKIPPED,
        LAST_PARSED_TIMESTAMP,
        ROTATIONS,
        TRUNCATIONS,
        OPEN_ERRORS,
        OPEN,
        OFFSET,
        VLLM_STATS_LOGGING_DISABLED,
        CONFIG_LAST_RELOAD_SUCCESSFUL,
        CONFIG_LAST_RELOAD_SUCCESS_TIMESTAMP,
        BUILD_INFO,
    ];
}

/// What one vLLM engine costs against `--max-series`: a series per catalog row (a labelled row
/// counted once: its samples are few, or capped as the draft positions are).
pub fn series_per_vllm_engine() -> usize {
    VLLM_ENGINE.len()
}

/// What one TensorRT-LLM rank costs against `--max-series`: a series per row, a histogram's
/// buckets, `+Inf`, sum and count.
pub fn series_per_trtllm_rank() -> usize {
    TRTLLM
        .iter()
        .map(|row| match row.read {
            TrtllmReading::Histogram(_) => crate::state::trtllm::LATENCY_BUCKETS.len() + 3,
            TrtllmReading::One(_) | TrtllmReading::Labelled(..) => 1,
        })
        .sum()
}

/// `--max-series` with what each engine and rank costs against it.
pub fn series_guard(max_series: usize) -> crate::state::SeriesGuard {
    crate::state::SeriesGuard {
        max_series,
        per_vllm_engine: series_per_vllm_engine(),
        per_trtllm_rank: series_per_trtllm_rank(),
    }
}

/// Every metric family, for validation and the README.
pub fn all_metrics() -> Vec<Metric> {
    VLLM_ENGINE
        .iter()
        .map(|m| m.metric)
        .chain(TRTLLM.iter().map(|m| m.metric))
        .chain(agent::ALL.iter().copied())
        .collect()
}

/// The README's metric table, rendered from this catalog.
pub fn markdown_table() -> String {
    let mut out = String::new();
    out.push_str("Every `vllm:`/`llmtail_vllm_` series has the labels `engine`, `model_name`, `log` and the `--label`s; \
        every `nv_trt_llm_`/`llmtail_trtllm_` series has `model`, `version`, `log`, `rank` and the `--label`s.\n\n");
    out.push_str("| metric | type | extra labels | from |\n|---|---|---|---|\n");
    for m in all_metrics() {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            m.sample_name(),
            m.kind.as_str(),
            m.labels,
            m.source
        ));
    }
    out
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

    /// Found by the second break-it run: `--label request_type=x` was accepted and written
    /// next to the family's own `request_type`, and promtool rejected the whole scrape
    /// ("duplicate label names"). Every label a series gets from llmtail is reserved.
    #[test]
    fn every_label_llmtail_sets_is_reserved() {
        let vllm = VLLM_ENGINE.iter().filter_map(|m| match m.read {
            Reading::Labelled(label, _) => Some(label),
            Reading::One(_) => None,
        });
        let trtllm = TRTLLM.iter().filter_map(|m| match m.read {
            TrtllmReading::Labelled(label, _) => Some(label),
            _ => None,
        });
        for label in vllm.chain(trtllm) {
            assert!(
                crate::config::RESERVED_LABELS.contains(&label),
                "{label} is set by llmtail but a --label may take it"
            );
        }
    }

    /// What `llmtail_*_engine_overdue` tells that `llmtail_*_engine_up` cannot: the replay golden
    /// `vllm-0.14.1-dp2-one-engine-overdue` shows it on a whole log.
    #[test]
    fn overdue_is_one_only_for_an_engine_that_stopped_logging_with_a_line_due() {
        use crate::state::liveness::{DownReason, Status};
        assert_eq!(overdue(Status::Down(DownReason::Overdue)), 1.0);
        for status in [
            Status::Up,
            Status::Idle,
            Status::Down(DownReason::Shutdown),
            Status::Down(DownReason::Crash),
        ] {
            assert_eq!(overdue(status), 0.0, "{status:?}");
        }
    }

    #[test]
    fn a_position_without_a_sample_has_no_series_and_the_others_keep_theirs() {
        let metric = VLLM_ENGINE
            .iter()
            .find(|m| m.metric.name == "llmtail_vllm_spec_decode_acceptance_rate_per_position")
            .unwrap();
        let Reading::Labelled("position", read) = metric.read else {
            panic!("per-position rates are labelled by position");
        };
        let mut engine = VllmEngine::default();
        engine.spec_per_position = vec![Some(0.333), None, Some(0.182)];
        assert_eq!(
            read(&engine),
            [("0".to_string(), 0.333), ("2".to_string(), 0.182)]
        );
    }

    #[test]
    fn every_name_is_a_valid_prometheus_name_and_unique() {
        let mut seen = std::collections::HashSet::new();
        for m in all_metrics() {
            assert!(is_valid_metric_name(m.name), "{}", m.name);
            assert!(
                !m.name.ends_with("_total"),
                "{}: counters are named without _total",
                m.name
            );
            assert!(seen.insert(m.name), "{} twice", m.name);
            assert!(!m.help.is_empty() && !m.help.contains('\n') && !m.help.contains('\\'));
        }
    }

    #[test]
    fn vllm_names_are_vllms_own_or_ours() {
        for m in VLLM_ENGINE {
            assert!(
                m.metric.name.starts_with("vllm:") || m.metric.name.starts_with("llmtail_vllm_"),
                "{}",
                m.metric.name
            );
        }
    }

    #[test]
    fn trtllm_names_are_tritons_own_or_ours() {
        for m in TRTLLM {
            assert!(
                m.metric.name.starts_with("nv_trt_llm_")
                    || m.metric.name.starts_with("llmtail_trtllm_"),
                "{}",
                m.metric.name
            );
        }
    }

    #[test]
    fn label_names_follow_the_grammar() {
        assert!(is_valid_label_name("instance_group"));
        assert!(!is_valid_label_name("__name__"));
        assert!(!is_valid_label_name("9x"));
        assert!(!is_valid_label_name("a-b"));
    }
}

#[cfg(test)]
mod readme {
    /// The README's metric table is this catalog. `LLMTAIL_BLESS=1` rewrites it.
    #[test]
    fn the_readme_metric_table_is_rendered_from_the_catalog() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
        let readme = std::fs::read_to_string(path).unwrap();
        let (begin, end) = ("<!-- metrics:begin -->\n", "<!-- metrics:end -->");
        let start = readme
            .find(begin)
            .expect("README has the metrics:begin marker")
            + begin.len();
        let stop = readme.find(end).expect("README has the metrics:end marker");
        let table = super::markdown_table();
        if std::env::var_os("LLMTAIL_BLESS").is_some_and(|v| v == "1") {
            std::fs::write(
                path,
                format!("{}{}{}", &readme[..start], table, &readme[stop..]),
            )
            .unwrap();
            return;
        }
        assert_eq!(
            &readme[start..stop],
            table,
            "README metric table is stale: run LLMTAIL_BLESS=1 cargo test --lib readme"
        );
    }
}
