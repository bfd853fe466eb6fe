//! SGLang's series: one row per series, each logging scheduler of a log its own label set
//! (`model_name`, `dp_rank`, `pp_rank`, `tp_rank`, `log` and the constant labels), as SGLang's
//! own `SchedulerMetricsCollector` labels them (`python/sglang/srt/metrics/collector.py`).

use super::SglangScheduler;
use crate::catalog::{engine_metric, liveness_metric, Row};
use crate::engines::parts::liveness::overdue;

/// Every SGLang series, in exposition order: SGLang's own names where the line means what its
/// collector's series means, then what only the log has.
pub static SGLANG: &[Row<SglangScheduler>] = &[
    engine_metric!("sglang:num_running_reqs", Gauge, "The number of running requests.",
        "decode and prefill lines `#running-req: N` (the mixed prefill label's too); 0 once the scheduler is idle (3 intervals without a line, none due)", |r| r.running),
    engine_metric!("sglang:num_queue_reqs", Gauge, "The number of requests in the waiting queue.",
        "decode and prefill lines `#queue-req: N` (0.1.14 prefill: `#remaining_req: N`)", |r| r.queue),
    engine_metric!("sglang:num_used_tokens", Gauge, "The number of used tokens.",
        "`#token: N`; SWA hybrid decode lines: the larger of `#full token` and `#swa token`; SSM hybrid: `#full token` (SGLang's collector; mamba slots are no tokens); not from HiSparse `#gpu token`, another pool; 0 once the scheduler is idle, as SGLang republishes it", |r| r.used_tokens),
    engine_metric!("sglang:token_usage", Gauge, "The token usage.",
        "`token usage: x`, a fraction; SWA hybrid: the larger of `full token usage` and `swa token usage` (and `mamba usage` with both); SSM hybrid: `full token usage` on lines with a trailing `, ` (to 0.5.8), the larger of it and `mamba usage` once a prefill line printed `#pending-token` (0.5.11+), else absent (0.5.9 and 0.5.10 weigh the pools differently, and their lines are alike); not from HiSparse `gpu token usage`, another pool; 0 once the scheduler is idle, as SGLang republishes it", |r| r.token_usage),
    engine_metric!("sglang:swa_token_usage", Gauge, "The token usage for SWA layers.",
        "`swa token usage: x` (SWA hybrid models, 0.4.10+); absent once the scheduler is idle (SGLang republishes it while idle from 0.5.12 only, and the lines do not tell the releases apart)", |r| r.swa_token_usage),
    engine_metric!("sglang:mamba_usage", Gauge, "The token usage for Mamba layers.",
        "`mamba usage: x` (SSM hybrid models, 0.5.3.post3+); absent once the scheduler is idle (as `sglang:swa_token_usage`)", |r| r.mamba_usage),
    engine_metric!("sglang:gen_throughput", Gauge, "The generation throughput (token/s).",
        "decode line `gen throughput (token/s): x`", |r| r.gen_throughput),
    engine_metric!("sglang:spec_accept_length", Gauge, "The average acceptance length of speculative decoding.",
        "decode line `accept len: x` (0.4.2+)", |r| r.spec_accept_length),
    engine_metric!("sglang:spec_accept_rate", Gauge, "The average acceptance rate of speculative decoding (`accepted tokens / total draft tokens` in batch).",
        "decode line `accept rate: x` (0.5.3.post3+)", |r| r.spec_accept_rate),
    engine_metric!("sglang:num_prefill_prealloc_queue_reqs", Gauge, "The number of requests in the prefill prealloc queue.",
        "PD prefill line `#bootstrap-req` (0.5.12+), `#prealloc-req` (0.5.3-0.5.11), `#unbootstrapped-req` (0.4.6-0.5.2)", |r| r.prefill_prealloc_queue),
    engine_metric!("sglang:num_prefill_inflight_queue_reqs", Gauge, "The number of requests in the prefill inflight queue.",
        "PD prefill line `#inflight-req` (0.5.3+), `#transferring-req` (0.4.6-0.5.2)", |r| r.prefill_inflight_queue),
    engine_metric!("sglang:num_decode_prealloc_queue_reqs", Gauge, "The number of requests in the decode prealloc queue.",
        "PD decode line `#prealloc-req`", |r| r.decode_prealloc_queue),
    engine_metric!("sglang:num_decode_transfer_queue_reqs", Gauge, "The number of requests in the decode transfer queue.",
        "PD decode line `#transfer-req`", |r| r.decode_transfer_queue),
    engine_metric!("sglang:max_total_num_tokens", Gauge, "Maximum total number of tokens in the KV cache pool.",
        "start-up line `max_total_num_tokens=N, ...`", |r| r.max_total_num_tokens),
    engine_metric!("sglang:num_retracted_requests", Counter, "Total number of retracted requests.",
        "sum of `#retracted_reqs: N` of `KV cache pool is full. Retract requests.` (0.4.7+) and `Decode out of memory happened.` (to 0.4.6) lines", |r| r.retracted_requests),
    engine_metric!("llmtail_sglang_max_running_requests", Gauge, "The most requests the scheduler runs at once.",
        "start-up line `..., max_running_requests=N, ...`", |r| r.max_running_requests),
    engine_metric!("llmtail_sglang_prefill_tokens", Counter, "Prompt tokens computed by prefill batches (the uncached part).",
        "sum of the prefill lines' `#new-token: N` (0.1.14 `#new_token`)", |r| r.prefill_tokens),
    engine_metric!("llmtail_sglang_prefill_cached_tokens", Counter, "Prompt tokens of prefill batches found in the prefix cache.",
        "sum of the prefill lines' `#cached-token: N` (0.1.14 `#cached_token`)", |r| r.prefill_cached_tokens),
    engine_metric!("llmtail_sglang_prefill_requests", Counter, "Requests (or chunks of one) that entered a prefill batch.",
        "sum of the prefill lines' `#new-seq: N` (0.1.14 `#seq`)", |r| r.prefill_seqs),
    engine_metric!("llmtail_sglang_prefill_cache_hit_rate", Gauge, "The last prefill batch's prefix-cache hit rate: its cached tokens over all its tokens.",
        "the last prefill line's `#cached-token` / (`#new-token` + `#cached-token`) (0.1.14 `#cached_token`, `#new_token`); not `sglang:cache_hit_rate`, which SGLang also sets back to 0 at each decode line up to 0.5.19 (not from 0.5.20), a difference the lines do not show", |r| r.prefill_cache_hit_rate),
    engine_metric!("llmtail_sglang_last_batch_graph", Gauge, "1 when the last decode batch ran as a captured device graph (CUDA, NPU, CPU or MUSA), else 0.",
        "decode line `cuda graph: True|False` (`npu`, `cpu`, `musa graph` on other devices); not `sglang:is_cuda_graph`, which SGLang declares but never sets (0 in every release checked, 0.5.8 to 0.5.23)", |r| r.last_batch_graph),
    engine_metric!("llmtail_sglang_generation_tokens", Counter, "Tokens generated, from the decode lines' throughput.",
        "sum of `gen throughput (token/s)` x the time since the scheduler's previous decode line (SGLang's own window for it; the first line adds nothing; head times have 1 s resolution unless SGLANG_LOG_MS=1)", |r| r.generation_tokens),
    liveness_metric!("llmtail_sglang_scheduler_up", Gauge, "1 while the scheduler is alive; 0 when its last line showed queued requests and no line came for 3 intervals (the last gap after such a line, at least 10 s). Its gauges are not exported while it is 0.",
        "batch lines (1); silence after a line with queued requests (0)", |r| Some(r.up())),
    liveness_metric!("llmtail_sglang_scheduler_overdue", Gauge, "1 while the scheduler is down because its last line showed queued requests and no line came for 3 intervals: it stopped logging with work in hand (killed, hung). 0 while it is up or idle.",
        "the time since the scheduler's last line, against its last busy gap", |r| Some(overdue(r.status))),
    liveness_metric!("llmtail_sglang_scheduler_last_line_timestamp_seconds", Gauge, "When the scheduler's last batch line was written.",
        "the `[%Y-%m-%d %H:%M:%S{.ms} ranks]` head (local time, read in the log's zone)", |r| r.last_line_at),
];

#[cfg(test)]
mod tests {
    use super::SGLANG;

    /// SGLang's collector declares these, but what it sets them to is not what a log can show:
    /// `sglang:is_cuda_graph` is never set (always 0), `sglang:cache_hit_rate` is reset by the
    /// decode reports of some releases and not others, which print the same lines.
    #[test]
    fn gauges_whose_native_meaning_the_log_cannot_show_are_not_under_sglang_names() {
        let names: Vec<&str> = SGLANG.iter().map(|row| row.metric.name).collect();
        assert!(!names.contains(&"sglang:is_cuda_graph"));
        assert!(!names.contains(&"sglang:cache_hit_rate"));
        assert!(names.contains(&"llmtail_sglang_last_batch_graph"));
        assert!(names.contains(&"llmtail_sglang_prefill_cache_hit_rate"));
    }
}
