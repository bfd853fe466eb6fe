//! Format B: the camelCase `IterationStats` JSON of `JsonSerialization::toJsonStr`.
//!
//! nlohmann's object is a `std::map`, so keys come out sorted at every level, compact, with
//! `null` for an empty `std::optional` (`"specDecodingStats":null`, `"staticBatchingStats":null`).
//! It reaches a log as gptManagerBenchmark's `[TensorRT-LLM][INFO] {...}`
//! (`--log_iteration_data`), and a file as whole lines: `trtllm-bench --iteration_log` writes
//! one record per line, and a saved `trtllm-serve` `/metrics` dump holds the same records
//! (the PyTorch backend's adds `hostStepTimeMS`, `prevDeviceStepTimeMS`). A dump saved as a
//! JSON array with one record on a line is read too (see `mod.rs`).
//!
//! The PyTorch backend fills both `inflightBatchingStats` and an all-zero
//! `staticBatchingStats`; in-flight wins when both are objects.

use std::borrow::Cow;

use super::clock;
use super::iteration::{Batching, Format, Iteration};
use crate::lex::loose::Loose;

type Entries<'a, 'b> = &'a [(Cow<'b, str>, Loose<'b>)];

/// Reads an `IterationStats` object; `None` when it has no `iter`, so request-stats records
/// (`{"iter":N,"requestStats":[...]}` has no other stats) and unrelated JSON are not taken.
pub fn read(entries: Entries<'_, '_>) -> Option<Iteration> {
    let mut it = Iteration {
        format: Format::IterationStats,
        ..Iteration::default()
    };
    let mut inflight = None;
    let mut static_batching = None;
    let mut host_step_ms = None;
    let mut known = 0usize;
    for (key, value) in entries {
        let count = value.as_u64();
        known += 1;
        match key.as_ref() {
            "cpuMemUsage" => it.cpu_mem_usage_bytes = count,
            "gpuMemUsage" => it.gpu_mem_usage_bytes = count,
            "pinnedMemUsage" => it.pinned_mem_usage_bytes = count,
            "iter" => it.iteration = count,
            "iterLatencyMS" => it.iter_latency_ms = value.as_f64(),
            "hostStepTimeMS" => host_step_ms = value.as_f64(),
            "prevDeviceStepTimeMS" => it.prev_device_step_time_ms = value.as_f64(),
            "timestamp" => it.timestamp = value.as_str().and_then(clock::stats_timestamp),
            "maxBatchSizeStatic" => it.max_batch_size_static = count,
            "maxBatchSizeRuntime" => it.max_batch_size_runtime = count,
            "maxNumTokensStatic" => it.max_num_tokens_static = count,
            "maxNumTokensRuntime" => it.max_num_tokens_runtime = count,
            "maxBatchSizeTunerRecommended" => it.max_batch_size_tuner_recommended = count,
            "maxNumTokensTunerRecommended" => it.max_num_tokens_tuner_recommended = count,
            "maxNumActiveRequests" => it.max_active_requests = count,
            "newActiveRequestsQueueLatencyMS" => {
                it.new_active_requests_queue_latency_ms = value.as_f64()
            }
            "numActiveRequests" => it.active_requests = count,
            "numCompletedRequests" => it.completed_requests = count,
            "numNewActiveRequests" => it.new_active_requests = count,
            "numQueuedRequests" => it.queued_requests = count,
            "inflightBatchingStats" => inflight = value.as_map(),
            "staticBatchingStats" => static_batching = value.as_map(),
            "kvCacheStats" => {
                if let Some(kv) = value.as_map() {
                    read_kv(kv, &mut it);
                }
            }
            "specDecodingStats" => {
                if let Some(spec) = value.as_map() {
                    read_spec(spec, &mut it);
                }
            }
            _ => known -= 1,
        }
    }
    it.iteration?;
    if known < 2 {
        return None;
    }
    if it.iter_latency_ms.is_none() {
        it.iter_latency_ms = host_step_ms;
    }
    if let Some(ifb) = inflight {
        it.batching = Some(Batching::Inflight);
        for (key, value) in ifb {
            let count = value.as_u64();
            match key.as_ref() {
                "avgNumDecodedTokensPerIter" => it.avg_decoded_tokens_per_iter = value.as_f64(),
                "microBatchId" => it.micro_batch_id = count,
                "numContextRequests" => it.context_requests = count,
                "numCtxTokens" => it.context_tokens = count,
                "numGenRequests" => it.generation_requests = count,
                "numPausedRequests" => it.paused_requests = count,
                "numScheduledRequests" => it.scheduled_requests = count,
                _ => {}
            }
        }
    } else if let Some(sb) = static_batching {
        it.batching = Some(Batching::Static);
        for (key, value) in sb {
            let count = value.as_u64();
            match key.as_ref() {
                "emptyGenSlots" => it.empty_generation_slots = count,
                "numContextRequests" => it.context_requests = count,
                "numCtxTokens" => it.context_tokens = count,
                "numGenTokens" => it.generation_tokens = count,
                "numScheduledRequests" => it.scheduled_requests = count,
                _ => {}
            }
        }
    }
    Some(it)
}

fn read_kv(kv: Entries<'_, '_>, it: &mut Iteration) {
    for (key, value) in kv {
        let count = value.as_u64();
        match key.as_ref() {
            "allocNewBlocks" => it.kv_alloc_new_blocks = count,
            "allocTotalBlocks" => it.kv_alloc_total_blocks = count,
            "cacheHitRate" => it.kv_cache_hit_rate = value.as_f64(),
            "freeNumBlocks" => it.kv_free_blocks = count,
            "maxNumBlocks" => it.kv_max_blocks = count,
            "missedBlocks" => it.kv_missed_blocks = count,
            "reusedBlocks" => it.kv_reused_blocks = count,
            "tokensPerBlock" => it.kv_tokens_per_block = count,
            "usedNumBlocks" => it.kv_used_blocks = count,
            _ => {}
        }
    }
}

fn read_spec(spec: Entries<'_, '_>, it: &mut Iteration) {
    for (key, value) in spec {
        match key.as_ref() {
            "acceptanceLength" => it.spec_acceptance_length = value.as_f64(),
            "draftOverhead" => it.spec_draft_overhead = value.as_f64(),
            "iterLatencyMS" => it.spec_iter_latency_ms = value.as_f64(),
            "numAcceptedTokens" => it.spec_accepted_tokens = value.as_u64(),
            "numDraftTokens" => it.spec_draft_tokens = value.as_u64(),
            "numRequestsWithDraftTokens" => it.spec_requests_with_draft_tokens = value.as_u64(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lex::loose::object;

    #[test]
    fn pytorch_record_prefers_inflight_over_zero_static() {
        let map = object(r#"{"cpuMemUsage":0,"inflightBatchingStats":{"numScheduledRequests":4},"iter":5,"staticBatchingStats":{"numScheduledRequests":0,"numGenTokens":0}}"#).unwrap();
        let it = read(&map).unwrap();
        assert_eq!(
            (it.batching, it.scheduled_requests, it.generation_tokens),
            (Some(Batching::Inflight), Some(4), None)
        );
    }

    #[test]
    fn request_stats_and_bare_objects_are_not_iterations() {
        assert!(read(&object(r#"{"iter":5,"requestStats":[]}"#).unwrap()).is_none());
        assert!(read(&object(r#"{"cpuMemUsage":0}"#).unwrap()).is_none());
    }

    #[test]
    fn spec_decoding_and_host_step_fallback() {
        let map = object(r#"{"hostStepTimeMS":4.5,"iter":1,"specDecodingStats":{"acceptanceLength":2.5,"numAcceptedTokens":6,"numDraftTokens":9}}"#).unwrap();
        let it = read(&map).unwrap();
        assert_eq!(
            (
                it.iter_latency_ms,
                it.spec_accepted_tokens,
                it.spec_acceptance_length
            ),
            (Some(4.5), Some(6), Some(2.5))
        );
    }
}
