//! llama-server's series: one row per series, each slot of a log (of a router child, in router
//! mode) its own label set (`log`, `port`, `slot` and the constant labels).
//!
//! The four counters and the busy gauge keep llama-server's own names and help: its
//! `/metrics` sums the same per-request figures `print_timings()` prints (see
//! `state::llamacpp`). Ours per slot; `sum without (slot)` is the server's own.

use super::LlamacppSlot;
use super::{PROMPT_EVAL_BUCKETS, TIME_PER_OUTPUT_TOKEN_BUCKETS};
use crate::catalog::{engine_metric, Kind, LeFormat, Metric, Reading, Row};

/// Every llama-server series, in exposition order.
pub static LLAMACPP: &[Row<LlamacppSlot>] = &[
    engine_metric!("llamacpp:prompt_tokens", Counter, "Number of prompt tokens processed.",
        "sum of `prompt eval time = T ms / N tokens`: N, prompt tokens computed (cache hits left out, as natively); 2024 JSON `n_prompt_tokens_processed`",
        |s| Some(s.prompt_tokens)),
    engine_metric!("llamacpp:prompt_seconds", Counter, "Prompt process time",
        "sum of `prompt eval time = T ms`: T / 1000; 2024 JSON `t_prompt_processing`",
        |s| Some(s.prompt_seconds)),
    engine_metric!("llamacpp:tokens_predicted", Counter, "Number of generation tokens processed.",
        "sum of `eval time = T ms / N tokens` (`runs` in 2023, `generation eval time` in 2024): N; 2024 JSON `n_decoded`",
        |s| Some(s.tokens_predicted)),
    engine_metric!("llamacpp:tokens_predicted_seconds", Counter, "Predict process time",
        "sum of `eval time = T ms`: T / 1000; 2024 JSON `t_token_generation`",
        |s| Some(s.tokens_predicted_seconds)),
    engine_metric!("llamacpp:requests_processing", Gauge, "Number of requests processing.",
        "1 from `processing task` (2023 `slot N is processing`, 2024 `slot is processing task`) or a progress line until `stop processing` (`slot N released`, `slot released`) or `all slots are idle`, else 0; per slot",
        |s| Some(s.requests_processing())),
    Row {
        metric: Metric { name: "llmtail_llamacpp_prompt_eval_seconds", kind: Kind::Histogram,
            help: "Prompt processing time of each request.", labels: "`le`",
            source: "each `prompt eval time = T ms`: T / 1000" },
        read: Reading::Histogram(|s| s.prompt_eval_seconds.view(&PROMPT_EVAL_BUCKETS, LeFormat::Shortest)),
        while_down: false,
    },
    Row {
        metric: Metric { name: "llmtail_llamacpp_time_per_output_token_seconds", kind: Kind::Histogram,
            help: "Time per generated token of each request.", labels: "`le`",
            source: "each `eval time = ... (x ms per token, ...)`: x / 1000 (else T / N); none for a request that generated nothing" },
        read: Reading::Histogram(|s| s.time_per_output_token_seconds.view(&TIME_PER_OUTPUT_TOKEN_BUCKETS, LeFormat::Shortest)),
        while_down: false,
    },
    engine_metric!("llmtail_llamacpp_draft_accepted_tokens", Counter, "Speculative decoding: draft tokens the target model accepted.",
        "sum of `draft acceptance[ rate] = r (a accepted / g generated)`: a",
        |s| s.draft_accepted_tokens),
    engine_metric!("llmtail_llamacpp_draft_generated_tokens", Counter, "Speculative decoding: draft tokens generated (and checked).",
        "sum of `draft acceptance[ rate] = r (a accepted / g generated)`: g",
        |s| s.draft_generated_tokens),
];
