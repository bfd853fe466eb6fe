//! The one iteration record that formats A (Triton JSON), B (camelCase `IterationStats`)
//! and C (PyTorch `iter = N, ...`) all fill.
//!
//! A field means the same thing whichever format filled it; units are in the names. Every
//! field is `None` when the line did not print it (or printed `N/A`, or printed a value of
//! the wrong type). Which format wrote it is in [`Iteration::format`], because a few values
//! differ in scope between producers (see the field docs).

use serde::Serialize;

use crate::LogTime;

/// Which producer wrote the iteration line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// A: Triton C++ backend verbose JSON with readable keys (`"Active Request Count"`).
    #[default]
    TritonJson,
    /// B: camelCase `IterationStats` JSON (gptManagerBenchmark, `--iteration_log`, `/metrics`).
    IterationStats,
    /// C: PyTorch backend `print_iter_log` text line.
    IterLog,
}

/// In-flight (IFB) or static (V1) batching: decides which Triton metric family the batch
/// fields belong to (`nv_trt_llm_inflight_batcher_metrics` or `nv_trt_llm_v1_metrics`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Batching {
    Inflight,
    Static,
}

/// One executor iteration.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Iteration {
    pub format: Format,
    /// MPI global rank: C's `global_rank`, else the logger head's `[RANK n]`/`[MPI_Rank n]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    /// C's `rank = R` (rank within the executor's mapping; usually equals `rank`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dist_rank: Option<u32>,
    /// The process id in the Triton log head (A): distinguishes Triton instances in one stream.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Iteration counter (`Iteration Counter`, `iter`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iteration: Option<u64>,
    /// The stats' own end-of-iteration time (`Timestamp`, `timestamp`), local time, with year.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<LogTime>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batching: Option<Batching>,

    /// Active (scheduled or paused) requests: `Active Request Count`, `numActiveRequests`, C V6 `num_active`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_requests: Option<u64>,
    /// `Max Request Count`, `maxNumActiveRequests`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_active_requests: Option<u64>,
    /// Requests scheduled this iteration: `Scheduled Requests`, `numScheduledRequests`, C `num_scheduled_requests`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduled_requests: Option<u64>,
    /// Context-phase requests this iteration: `Context Requests`, `numContextRequests`, C `states.num_ctx_requests`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_requests: Option<u64>,
    /// Generation-phase requests (IFB): `Generation Requests`, `numGenRequests`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation_requests: Option<u64>,
    /// `Paused Requests`, `numPausedRequests`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused_requests: Option<u64>,
    /// A's `Waiting Requests` (v0.18+): active minus scheduled. Not printed by B or C.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_requests: Option<u64>,
    /// Requests in the queue, not yet active: `numQueuedRequests` (B only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queued_requests: Option<u64>,
    /// Requests completed in this iteration: `numCompletedRequests` (B only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed_requests: Option<u64>,
    /// Requests that became active this iteration: `numNewActiveRequests` (B only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_active_requests: Option<u64>,
    /// Sum (not mean) of the queue time of the newly active requests, ms: `newActiveRequestsQueueLatencyMS`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_active_requests_queue_latency_ms: Option<f64>,
    /// C V6 `num_fetched`: requests fetched from the queue in this iteration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetched_requests: Option<u64>,
    /// C V6 `num_dummy`: dummy (padding / attention-DP) requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dummy_requests: Option<u64>,
    /// C V6 `num_unscheduled`: active requests not scheduled this iteration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unscheduled_requests: Option<u64>,
    /// C `currank_total_requests = a/b`: a, requests fetched on this rank since start (cumulative).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank_fetched_requests_total: Option<u64>,
    /// C `currank_total_requests = a/b`: b, requests fetched on all ranks since start (cumulative).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetched_requests_total: Option<u64>,
    /// `MicroBatch ID`, `microBatchId` (IFB).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub micro_batch_id: Option<u64>,

    /// Context (prefill) tokens this iteration: `Total Context Tokens`, `numCtxTokens`, C `states.num_ctx_tokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<u64>,
    /// Generation tokens this iteration: static batching's `Total Generation Tokens`/`numGenTokens`,
    /// C `states.num_generation_tokens` (which includes CUDA-graph padding).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation_tokens: Option<u64>,
    /// Static batching's `Empty Generation Slots`, `emptyGenSlots`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub empty_generation_slots: Option<u64>,
    /// C V5+ `states.cached_kv_tokens`: KV tokens already cached for the scheduled requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_kv_tokens: Option<u64>,
    /// C V5 `cached_kv_len` (optional field of PR #14734).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_kv_len: Option<u64>,
    /// `avgNumDecodedTokensPerIter` (IFB; above 1 with speculative decoding).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub avg_decoded_tokens_per_iter: Option<f64>,

    /// `Runtime CPU Memory Usage`, `cpuMemUsage`, bytes (PyTorch backend: always 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_mem_usage_bytes: Option<u64>,
    /// `Runtime GPU Memory Usage`, `gpuMemUsage`, bytes (PyTorch backend: whole-device used memory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_mem_usage_bytes: Option<u64>,
    /// `Runtime Pinned Memory Usage`, `pinnedMemUsage`, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pinned_mem_usage_bytes: Option<u64>,

    /// `Max KV cache blocks`, `kvCacheStats.maxNumBlocks`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_max_blocks: Option<u64>,
    /// `Free KV cache blocks`, `freeNumBlocks`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_free_blocks: Option<u64>,
    /// `Used KV cache blocks`, `usedNumBlocks`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_used_blocks: Option<u64>,
    /// `Tokens per KV cache block`, `tokensPerBlock`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_tokens_per_block: Option<u64>,
    /// `Reused KV cache blocks`, `reusedBlocks`: cumulative since start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_reused_blocks: Option<u64>,
    /// `missedBlocks`: cumulative since start (B only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_missed_blocks: Option<u64>,
    /// `allocNewBlocks`: cumulative since start (B only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_alloc_new_blocks: Option<u64>,
    /// `allocTotalBlocks`: cumulative since start (B only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_alloc_total_blocks: Option<u64>,
    /// `cacheHitRate` = reused / (reused + missed), a fraction 0..1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_cache_hit_rate: Option<f64>,
    /// Fraction 0..1 of KV blocks in use: A's `Fraction used KV cache blocks`, C V4+ `kv_cache_util`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_used_fraction: Option<f64>,
    /// A v0.15+ `KV cache transfer time`, ms, summed over disaggregated requests completed since the last poll.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_cache_transfer_ms: Option<f64>,
    /// A v0.15+ `Request count`: the requests summed in `kv_cache_transfer_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_cache_transfer_requests: Option<u64>,

    /// Iteration latency, ms: B `iterLatencyMS` (or `hostStepTimeMS` without it), C V3+
    /// `host_step_time`, C V1-V2 `elapsed_time` (printed in seconds, converted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iter_latency_ms: Option<f64>,
    /// GPU time of the previous step, ms: C V3+ `prev_device_step_time`, `/metrics` `prevDeviceStepTimeMS`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prev_device_step_time_ms: Option<f64>,

    /// `maxBatchSizeStatic`: configured max batch size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_batch_size_static: Option<u64>,
    /// `maxBatchSizeRuntime`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_batch_size_runtime: Option<u64>,
    /// `maxBatchSizeTunerRecommended`: the dynamic batch tuner's recommendation (0 while the
    /// tuner is off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_batch_size_tuner_recommended: Option<u64>,
    /// `maxNumTokensStatic`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_num_tokens_static: Option<u64>,
    /// `maxNumTokensRuntime`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_num_tokens_runtime: Option<u64>,
    /// `maxNumTokensTunerRecommended` (0 while the tuner is off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_num_tokens_tuner_recommended: Option<u64>,

    /// `specDecodingStats.numDraftTokens` this iteration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec_draft_tokens: Option<u64>,
    /// `specDecodingStats.numAcceptedTokens` this iteration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec_accepted_tokens: Option<u64>,
    /// `specDecodingStats.numRequestsWithDraftTokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec_requests_with_draft_tokens: Option<u64>,
    /// `specDecodingStats.acceptanceLength` (tokens per step per request).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec_acceptance_length: Option<f64>,
    /// `specDecodingStats.draftOverhead` (ratio).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec_draft_overhead: Option<f64>,
    /// `specDecodingStats.iterLatencyMS`: draft time, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec_iter_latency_ms: Option<f64>,
}
