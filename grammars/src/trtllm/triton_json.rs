//! Format A: the Triton C++ backend's per-iteration JSON, logged at `--log-verbose=1`.
//!
//! Era 1 (backend v0.5.0-v0.9.0): the closed-source GptManager wrote the JSON, keys sorted,
//! `Timestamp` without microseconds, static-batching models with `Total Generation Tokens` and
//! `Empty Generation Slots` in place of `Generation Requests` and `MicroBatch ID`.
//! Era 2 (v0.10.0+): `WaitForStats()` in `model_instance_state.cc` concatenates the keys in a
//! fixed order; v0.13.0 added `Reused KV cache blocks`, v0.15.0 `KV cache transfer time` and
//! `Request count`, v0.18.0 `Waiting Requests` and `Fraction used KV cache blocks`. An engine
//! without KV cache prints no KV keys. Since Triton 24.05 the whole message is a JSON string
//! literal; the caller unescapes it before it gets here.
//!
//! Key order is never relied on and unknown keys are skipped, so a key added later only needs
//! a line here to be read.

use std::borrow::Cow;

use super::clock;
use super::iteration::{Batching, Format, Iteration};
use crate::lex::loose::Loose;

/// The key every record of both eras starts with.
pub const FIRST_KEY: &str = "Active Request Count";

/// True when the object is a Triton stats record.
pub fn is_triton(entries: &[(Cow<'_, str>, Loose<'_>)]) -> bool {
    entries
        .iter()
        .any(|(k, _)| k == FIRST_KEY || k == "Iteration Counter")
}

/// Reads a Triton stats object into an iteration record.
pub fn read(entries: &[(Cow<'_, str>, Loose<'_>)]) -> Iteration {
    let mut it = Iteration {
        format: Format::TritonJson,
        ..Iteration::default()
    };
    for (key, value) in entries {
        let count = value.as_u64();
        match key.as_ref() {
            "Active Request Count" => it.active_requests = count,
            "Iteration Counter" => it.iteration = count,
            "Max Request Count" => it.max_active_requests = count,
            "Runtime CPU Memory Usage" => it.cpu_mem_usage_bytes = count,
            "Runtime GPU Memory Usage" => it.gpu_mem_usage_bytes = count,
            "Runtime Pinned Memory Usage" => it.pinned_mem_usage_bytes = count,
            "Timestamp" => it.timestamp = value.as_str().and_then(clock::stats_timestamp),
            "Context Requests" => it.context_requests = count,
            "Scheduled Requests" => it.scheduled_requests = count,
            "Total Context Tokens" => it.context_tokens = count,
            "Waiting Requests" => it.waiting_requests = count,
            "Generation Requests" => {
                it.generation_requests = count;
                it.batching = Some(Batching::Inflight);
            }
            "MicroBatch ID" => {
                it.micro_batch_id = count;
                it.batching = Some(Batching::Inflight);
            }
            "Paused Requests" => {
                it.paused_requests = count;
                it.batching = Some(Batching::Inflight);
            }
            "Total Generation Tokens" => {
                it.generation_tokens = count;
                it.batching = Some(Batching::Static);
            }
            "Empty Generation Slots" => {
                it.empty_generation_slots = count;
                it.batching = Some(Batching::Static);
            }
            "Free KV cache blocks" => it.kv_free_blocks = count,
            "Max KV cache blocks" => it.kv_max_blocks = count,
            "Tokens per KV cache block" => it.kv_tokens_per_block = count,
            "Used KV cache blocks" => it.kv_used_blocks = count,
            "Reused KV cache blocks" => it.kv_reused_blocks = count,
            "Fraction used KV cache blocks" => it.kv_used_fraction = value.as_f64(),
            "KV cache transfer time" => it.kv_cache_transfer_ms = value.as_f64(),
            "Request count" => it.kv_cache_transfer_requests = count,
            _ => {}
        }
    }
    it
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lex::loose::object;

    #[test]
    fn reads_era_2_with_every_key() {
        let map = object(r#"{"Active Request Count":3,"Iteration Counter":9,"Max Request Count":8,"Runtime CPU Memory Usage":1,"Runtime GPU Memory Usage":2,"Runtime Pinned Memory Usage":4,"Timestamp":"01-23-2025 04:45:44.972719","Context Requests":1,"Generation Requests":2,"MicroBatch ID":0,"Paused Requests":0,"Scheduled Requests":3,"Total Context Tokens":10,"Waiting Requests":0,"Free KV cache blocks":30,"Max KV cache blocks":40,"Tokens per KV cache block":64,"Used KV cache blocks":10,"Reused KV cache blocks":2,"Fraction used KV cache blocks":0.250000,"KV cache transfer time":0.000000,"Request count":0,"Future key":7}"#).unwrap();
        assert!(is_triton(&map));
        let it = read(&map);
        assert_eq!(it.batching, Some(Batching::Inflight));
        assert_eq!(
            (
                it.active_requests,
                it.kv_used_fraction,
                it.kv_cache_transfer_ms
            ),
            (Some(3), Some(0.25), Some(0.0))
        );
        assert_eq!(
            it.timestamp.unwrap().to_string(),
            "2025-01-23 04:45:44.972719"
        );
    }

    #[test]
    fn static_batching_and_missing_kv() {
        let map = object(r#"{"Active Request Count":1,"Context Requests":1,"Empty Generation Slots":3,"Iteration Counter":0,"Total Generation Tokens":5}"#).unwrap();
        let it = read(&map);
        assert_eq!(it.batching, Some(Batching::Static));
        assert_eq!(
            (
                it.generation_tokens,
                it.empty_generation_slots,
                it.kv_max_blocks
            ),
            (Some(5), Some(3), None)
        );
    }
}
