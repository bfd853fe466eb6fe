//! Every grammar is linear in the line's length: a 1 MiB line built to hit a grammar's worst
//! case costs at most 10 times a real stats line per byte (a stats line
//! whose values held `: ` but no `, ` took the 0.7.1 missing-comma path once per field, 1.3 s
//! for 1 MiB). So does splitting a line into its records: a line full of
//! record heads, glued records or JSON objects, within 20 times (a record every few bytes).

use std::time::{Duration, Instant};

const REAL: &str = "(APIServer pid=812) INFO 11-22 13:25:01 [loggers.py:257] Engine 000: Avg prompt throughput: 1245.3 tokens/s, Avg generation throughput: 312.8 tokens/s, Running: 14 reqs, Waiting: 2 reqs, GPU KV cache usage: 63.1%, Prefix cache hit rate: 41.7%";

/// Nanoseconds per byte to parse `line`, best of a few rounds of `repeat` parses.
fn cost_per_byte(line: &str, repeat: usize) -> f64 {
    cost_per_byte_of(line, repeat, |line| {
        std::hint::black_box(llmtail_grammars::parse(line));
    })
}

/// Nanoseconds per byte to read every record of `line`, as the agent does.
fn records_cost_per_byte(line: &str, repeat: usize) -> f64 {
    cost_per_byte_of(line, repeat, |line| {
        for outcome in llmtail_grammars::records(line) {
            std::hint::black_box(outcome);
        }
    })
}

fn cost_per_byte_of(line: &str, repeat: usize, read: impl Fn(&str)) -> f64 {
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let start = Instant::now();
        for _ in 0..repeat {
            read(std::hint::black_box(line));
        }
        best = best.min(start.elapsed());
    }
    best.as_nanos() as f64 / (line.len() * repeat) as f64
}

const VLLM_HEAD: &str = "(APIServer pid=812) INFO 11-22 13:25:01 [loggers.py:257] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 1.0 tokens/s, Running: 1 reqs, Waiting: 2 reqs ";
const TRITON_HEAD: &str =
    "I0510 07:57:36.770990 21661 model_instance_state.cc:840] {\"Active Request Count\":8,";
const TGI_HEAD: &str =
    "2024-02-14T06:49:51.437631Z  INFO generate{parameters=GenerateParameters { ";
const LMDEPLOY_HEAD: &str = "[2026-03-10 09:00:10 DP0] Avg thr (in/out): 1.0 / 2.0 tokens/s, ";
/// The most places a message may begin behind a head no grammar knows: a `] ` every two bytes,
/// as far as a head reaches (see `foreign::MAX_HEAD`).
const FOREIGN_HEADS: &str = "] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ] ";
const ITER_LOG_HEAD: &str =
    "[TRT-LLM] [I] iter = 7, global_rank = 0, rank = 0, currank_total_requests = 0/0, ";

/// `head`, then `unit` repeated up to about 1 MiB.
fn adversarial(head: &str, unit: &str) -> String {
    let mut line = String::from(head);
    while line.len() < 1 << 20 {
        line.push_str(unit);
    }
    line
}

#[test]
fn a_megabyte_line_costs_at_most_ten_real_lines_per_byte() {
    let real = cost_per_byte(REAL, 4_000);
    for (head, unit) in [
        // LMDeploy: grouped parts, keyless parts after a skipped one, brackets and compose bars.
        (LMDEPLOY_HEAD, "Foo (a/b/c): 1 / 2 / 3, "),
        (LMDEPLOY_HEAD, "Foo: 1, x, "),
        (LMDEPLOY_HEAD, "a | [2026-03-10 09:00:10 DP0] / "),
        // Values with `: ` and no `, `: the 0.7.1 missing-comma path.
        (VLLM_HEAD, "GPU KV cache usage: 7.8% "),
        (VLLM_HEAD, "a: b "),
        (VLLM_HEAD, "Foo: 1 x "),
        // Parts without `: ` after `, `: continuation of the previous field.
        (VLLM_HEAD, ", 0.5"),
        (VLLM_HEAD, ", x: y z"),
        // Triton's JSON with a million keys, nested braces; the PyTorch iteration line.
        (TRITON_HEAD, "\"Iteration Counter\":1,"),
        (TRITON_HEAD, "{\"a\":["),
        (ITER_LOG_HEAD, "states = {'num_ctx_requests': 1, "),
        (ITER_LOG_HEAD, "x = 1, "),
        // TGI: targets everywhere, times without a level, timings, open quotes, literal escapes.
        (TGI_HEAD, "}: text_generation_router::server: r.rs:1: "),
        (
            TGI_HEAD,
            "2024-02-14T06:49:51.437631Z x text_embeddings_router ",
        ),
        (TGI_HEAD, "total_time=\"1s\" {parameters= lorax_router"),
        (TGI_HEAD, "x=\"#033[1;2 _router"),
        // llama-server: a slot head before endless bodies, key=value pairs that never end,
        // a server_log() record never closed, continuation lines glued.
        (
            "5.27.453.094 I slot print_timing: id  0 | task 1 | ",
            "draft acceptance = ",
        ),
        ("slot ", "a: id 1 | task 1 |"),
        (
            "INFO [ print_timings] prompt eval time = 1 ms / 1 tokens | ",
            "xid_slot=id_slot=",
        ),
        (
            "{\"level\":\"INFO\",\"function\":\"print_timings\",\"msg\":\"",
            "prompt eval time = 1 ms / ",
        ),
        (
            "",
            "       eval time =    319.58 ms /    10 tokens (   31.96 ms per token, ",
        ),
        // Messages behind heads no grammar knows: each place one may begin is read, and readers
        // that look through the whole message (preemption counts, lifecycle phrases) would be
        // quadratic were those places not bounded.
        (FOREIGN_HEADS, "api_server_count more than 1 Running: "),
        (FOREIGN_HEADS, "x is preempted by RUNNING: "),
        (FOREIGN_HEADS, "iter = #running-req: slot "),
    ] {
        let line = adversarial(head, unit);
        let cost = cost_per_byte(&line, 1);
        eprintln!(
            "{unit:?}: {cost:.2} ns/byte, real {real:.2}, parsed {}",
            llmtail_grammars::parse(&line).is_some()
        );
        assert!(
            cost <= 10.0 * real.max(1.0),
            "{unit:?} x {}: {cost:.1} ns/byte against {real:.1} for a real stats line",
            line.len() / unit.len()
        );
    }
}

#[test]
fn a_megabyte_line_of_heads_glued_records_or_objects_costs_at_most_ten_real_lines_per_byte() {
    let real = records_cost_per_byte(REAL, 4_000);
    for (head, unit) in [
        // Whole records glued: every one is read.
        (REAL, REAL),
        // Heads after an anchor, with and without a record after each.
        (VLLM_HEAD, "INFO 01-01 00:00:00 [f.py:1] "),
        (VLLM_HEAD, "INFO 01-01 00:00:00 [f.py:1] Running: "),
        (
            VLLM_HEAD,
            "(a pid=1) (b pid=2) INFO 01-01 00:00:00 [f.py:1] Running: 1 reqs",
        ),
        (VLLM_HEAD, "(((((a pid=1)INFO 01-01 00:00:00 [f.py:1] "),
        (
            VLLM_HEAD,
            "INFO 01-01 00:00:00 [aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        ),
        (ITER_LOG_HEAD, "[TRT-LLM] [I] iter = 7, global_rank = 0, "),
        (
            ITER_LOG_HEAD,
            "I0101 00:00:00.000001 1 f.cc:1] [TensorRT-LLM][INFO] ",
        ),
        (ITER_LOG_HEAD, "[TensorRT-LLM]["),
        // JSON: a `/metrics` dump of tiny records, objects without an anchor, braces never closed.
        ("[", r#"{"iterLatencyMS":1},"#),
        (
            "[",
            r#"{"iter":1,"iterLatencyMS":1,"numActiveRequests":2},"#,
        ),
        (TRITON_HEAD, r#"{"a":1},"#),
        (TRITON_HEAD, "{"),
        (TRITON_HEAD, r#"}{\"Active Request Count\":1"#),
        // TGI events glued, and JSON events nested without end.
        (
            TGI_HEAD,
            "2024-02-14T06:49:51.437631Z  INFO chat_completions{total_time=\"1s\" validation_time=\"1µs\" queue_time=\"1µs\" inference_time=\"1s\" time_per_token=\"1ms\"}: text_generation_router::server: r.rs:1: Success",
        ),
        (
            r#"{"timestamp":"2024-03-09T05:08:19.961136Z","level":"INFO","message":"Success","target":"text_generation_router","span":"#,
            r#"{"total_time":"#,
        ),
    ] {
        let line = adversarial(head, unit);
        let cost = records_cost_per_byte(&line, 1);
        eprintln!(
            "{unit:?}: {cost:.2} ns/byte, real {real:.2}, records {}",
            llmtail_grammars::records(&line).count()
        );
        // 50, not 10: a line that is all tiny records pays the dispatch per record, 27,000 of
        // them in a MiB, while the real line is a V1 stats line, read in one pass since its
        // known fields are (15 ns a byte, 39 before). TensorRT-LLM's iteration-log records
        // glued by the MiB cost the 340 ns a byte they did, now 23 times the real line (25 on
        // a loaded machine). What this guards against, a search repeated per record, costs
        // thousands of times.
        assert!(
            cost <= 50.0 * real.max(1.0),
            "{unit:?} x {}: {cost:.1} ns/byte against {real:.1} for a real stats line",
            line.len() / unit.len()
        );
    }
}
