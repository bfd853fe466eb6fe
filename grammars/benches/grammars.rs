//! Per-line cost of each grammar and of the dispatch in front of them.
//!
//! Every bench checks its answer once before timing (a bench of a parser that quietly
//! returns `None` measures nothing) and reports bytes/s: the agent's budget is in bytes,
//! since a line of 20 KB costs the prefilter two hundred times a line of 100 B.
//!
//! `cargo bench -p llmtail-grammars --bench grammars`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use llmtail_grammars::llamacpp::LlamacppRecord;
use llmtail_grammars::lmdeploy::LmdeployRecord;
use llmtail_grammars::ollama::OllamaRecord;
use llmtail_grammars::sglang::SglangRecord;
use llmtail_grammars::tgi::TgiRecord;
use llmtail_grammars::trtllm::TrtllmRecord;
use llmtail_grammars::vllm::VllmRecord;
use llmtail_grammars::{has_anchor, parse, records, Outcome, Parsed, Record};

/// A check on a parsed line: true when the grammar read what the line says.
type Check = fn(&Parsed<'_>) -> bool;

const V1_STATS: &str = "(APIServer pid=812) INFO 11-22 13:25:01 [loggers.py:257] Engine 000: Avg prompt throughput: 1245.3 tokens/s, Avg generation throughput: 312.8 tokens/s, Running: 14 reqs, Waiting: 2 reqs, GPU KV cache usage: 63.1%, Prefix cache hit rate: 41.7%";
const V0_STATS: &str = "INFO 06-05 14:09:39 metrics.py:341] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 32.1 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.1%, CPU KV cache usage: 0.0%.";
const SPEC: &str = "(APIServer pid=1) INFO 08-27 19:03:26 [metrics.py:87] SpecDecoding metrics: Draft acceptance rate: 56.3%, Mean acceptance length: 2.69, Accepted: 846 tokens, Drafted: 1503 tokens, Per-position acceptance rate: 0.780, 0.550, 0.360";
const KV_SIZE: &str = "(EngineCore_0 pid=274) INFO 08-27 19:02:50 [kv_cache_utils.py:849] GPU KV cache size: 418,528 tokens";
const TRITON: &str = r#"I0510 07:57:30.770724 21661 model_instance_state.cc:840] {"Active Request Count":1,"Iteration Counter":2,"Max Request Count":1,"Runtime CPU Memory Usage":500,"Runtime GPU Memory Usage":396380909,"Runtime Pinned Memory Usage":1073766777,"Timestamp":"05-10-2024 07:57:30","Context Requests":0,"Generation Requests":1,"MicroBatch ID":0,"Paused Requests":0,"Scheduled Requests":1,"Total Context Tokens":0,"Free KV cache blocks":39,"Max KV cache blocks":40,"Tokens per KV cache block":64,"Used KV cache blocks":1}"#;
const ITERATION_STATS: &str = r#"[TensorRT-LLM][INFO] {"cpuMemUsage":68172,"gpuMemUsage":36100332423,"inflightBatchingStats":{"avgNumDecodedTokensPerIter":1.0,"microBatchId":0,"numContextRequests":0,"numCtxTokens":0,"numGenRequests":1,"numPausedRequests":0,"numScheduledRequests":1},"iter":60,"iterLatencyMS":13.021209,"kvCacheStats":{"allocNewBlocks":3,"allocTotalBlocks":3,"cacheHitRate":0.0,"freeNumBlocks":22952,"maxNumBlocks":22955,"missedBlocks":2,"reusedBlocks":0,"tokensPerBlock":32,"usedNumBlocks":3},"maxBatchSizeRuntime":256,"maxBatchSizeStatic":2048,"maxBatchSizeTunerRecommended":256,"maxNumActiveRequests":2048,"maxNumTokensRuntime":8192,"maxNumTokensStatic":8192,"maxNumTokensTunerRecommended":0,"newActiveRequestsQueueLatencyMS":0.0,"numActiveRequests":1,"numCompletedRequests":0,"numNewActiveRequests":0,"numQueuedRequests":0,"pinnedMemUsage":2952841216,"specDecodingStats":null,"staticBatchingStats":null,"timestamp":"07-25-2025 16:54:34.140189"}"#;
const ITER_LOG: &str = "[04/28/2025-09:56:44] [TRT-LLM] [I] iter = 198, global_rank = 0, rank = 0, currank_total_requests = 0/0, elapsed_time = 0.005060911178588867s, timestamp = 2025-04-28 09:56:44, states = {'num_ctx_requests': 0, 'num_ctx_tokens': 0, 'num_generation_tokens': 16}";
const TGI_SUCCESS: &str = r#"2024-02-14T06:49:51.437631Z  INFO generate{parameters=GenerateParameters { best_of: None, temperature: None, repetition_penalty: None, frequency_penalty: None, top_k: None, top_p: None, typical_p: None, do_sample: false, max_new_tokens: Some(14), return_full_text: None, stop: [], truncate: None, watermark: false, details: false, decoder_input_details: false, seed: None, top_n_tokens: None } total_time="611.286748ms" validation_time="754.5µs" queue_time="127.337µs" inference_time="610.405028ms" time_per_token="43.600359ms" seed="None"}: text_generation_router::server: router/src/server.rs:299: Success"#;
const TGI_JSON: &str = r#"{"timestamp":"2025-02-11T08:30:00.010203Z","level":"INFO","message":"Success","target":"text_generation_router::server","filename":"router/src/server.rs","line_number":1344,"span":{"inference_time":"812.4µs","queue_time":"20.1µs","seed":"Some(3)","time_per_token":"812.4µs","total_time":"1.403882ms","validation_time":"561.042µs","name":"chat_completions"},"spans":[{"inference_time":"812.4µs","queue_time":"20.1µs","seed":"Some(3)","time_per_token":"812.4µs","total_time":"1.403882ms","validation_time":"561.042µs","name":"chat_completions"}]}"#;
/// A TGI router line that is no record: every TGI line holds the anchor.
const TGI_CONNECTED: &str =
    "2024-02-14T06:49:40.621798Z  INFO text_generation_router: router/src/main.rs:326: Connected";

const LLAMACPP_EVAL: &str = "5.27.453.097 I slot print_timing: id  0 | task 160 |        eval time =    5729.20 ms /    96 tokens (   60.31 ms per token,    16.58 tokens per second)";
const LLAMACPP_JSON: &str = r#"{"tid":"14964","timestamp":1717067386,"level":"INFO","function":"print_timings","line":321,"msg":"prompt eval time     =    2684.39 ms /    27 tokens (   99.42 ms per token,    10.06 tokens per second)","id_slot":0,"id_task":19,"t_prompt_processing":2684.386,"n_prompt_tokens_processed":27,"t_token":99.4217037037037,"n_tokens_second":10.058166001461787}"#;
const SGLANG_DECODE: &str = "[2025-11-11 04:06:27 DP0 TP0] Decode batch, #running-req: 48, #token: 61000, token usage: 0.52, accept len: 2.40, accept rate: 0.62, cuda graph: True, gen throughput (token/s): 3020.15, #queue-req: 5, ";
const SGLANG_PREFILL: &str = "[2026-07-21 15:00:13 TP0 EP0] Prefill batch, #new-seq: 5, #new-token: 16384, #cached-token: 4096, token usage: 0.36, #running-req: 40, #queue-req: 7, #pending-token: 52000, cuda graph: False, input throughput (token/s): 31250.40";
const LMDEPLOY_STATS: &str = "[2026-03-10 09:00:20 DP3] Avg thr (in/out): 0.0 / 912.8 tokens/s, Server (succeeded/failed/routed/waiting): 131 / 2 / 36 / 0, Engine (running/waiting): 36 / 0, KV cache: 51.0%, Prefix cache hit rate: 38.9%, ";
const LMDEPLOY_0_10_STATS: &str = "[2025-09-18 11:02:40 DP0] Avg prompt throughput: 1536.4 tokens/s, Avg generation throughput: 212.7 tokens/s, Finished: 118 reqs, Unfinished: 14 reqs, Running: 12 reqs, Waiting: 2 reqs, GPU KV cache usage: 37.5%";

const OLLAMA_GIN: &str =
    r#"[GIN] 2025/09/11 - 00:42:16 | 200 |      697.23µs |      172.17.0.2 | GET      "/api/tags""#;
/// A line the first stage stops at (`unner`) that no grammar reads: what Ollama's runner anchors
/// cost the lines around them.
const OLLAMA_WAITING: &str = r#"time=2025-09-11T00:42:50.484+02:00 level=INFO source=server.go:1250 msg="waiting for llama runner to start responding""#;

const ACCESS: &str = r#"(APIServer pid=812) INFO:     10.12.0.5:52000 - "POST /v1/chat/completions HTTP/1.1" 200 OK"#;

/// A request log line of about `len` bytes; with `near_miss` its prompt holds an anchor.
fn request_line(len: usize, near_miss: bool) -> String {
    let mut line = String::from("(APIServer pid=812) INFO 11-22 13:25:01 [logger.py:41] Received request chatcmpl-5f3a: prompt: '<|im_start|>user\\n");
    if near_miss {
        line.push_str("why does my server print Running: 3 reqs and then stop? ");
    }
    let words = [
        "summarize ",
        "the ",
        "following ",
        "document ",
        "café ",
        "数据 ",
        "with ",
        "tokens ",
    ];
    let mut i = 0;
    while line.len() < len {
        line.push_str(words[i % words.len()]);
        i += 1;
    }
    line.push_str("', params: SamplingParams(n=1, temperature=0.7), lora_request: None.");
    line
}

fn grammars(c: &mut Criterion) {
    let cases: &[(&str, &str, Check)] = &[
        ("vllm_v1_stats", V1_STATS, |p| {
            matches!(&p.record, Record::Vllm(VllmRecord::Stats(s))
                if s.running == Some(14) && s.waiting == Some(2) && s.engine == Some(0))
        }),
        ("vllm_v0_stats", V0_STATS, |p| {
            matches!(&p.record, Record::Vllm(VllmRecord::Stats(s))
                if s.running == Some(1) && s.swapped == Some(0) && s.pending == Some(0))
        }),
        (
            "vllm_spec_decoding",
            SPEC,
            |p| matches!(&p.record, Record::Vllm(VllmRecord::SpecDecoding(s)) if s.accepted_tokens == 846),
        ),
        (
            "vllm_kv_cache_size",
            KV_SIZE,
            |p| matches!(&p.record, Record::Vllm(VllmRecord::KvCacheSize(k)) if k.tokens == 418_528),
        ),
        ("trtllm_triton_json", TRITON, |p| {
            matches!(&p.record, Record::Trtllm(TrtllmRecord::Iteration(it))
                if it.iteration == Some(2) && it.active_requests == Some(1))
        }),
        ("trtllm_iteration_stats", ITERATION_STATS, |p| {
            matches!(&p.record, Record::Trtllm(TrtllmRecord::Iteration(it))
                if it.iteration == Some(60) && it.max_active_requests == Some(2048))
        }),
        (
            "trtllm_iter_log",
            ITER_LOG,
            |p| matches!(&p.record, Record::Trtllm(TrtllmRecord::Iteration(it)) if it.iteration == Some(198)),
        ),
        ("llamacpp_timing", LLAMACPP_EVAL, |p| {
            matches!(&p.record, Record::Llamacpp(LlamacppRecord::Eval(e))
                if e.tokens == 96 && e.origin.slot == Some(0))
        }),
        ("llamacpp_server_log_json", LLAMACPP_JSON, |p| {
            matches!(&p.record, Record::Llamacpp(LlamacppRecord::PromptEval(e))
                if e.tokens == 27 && e.time_ms == 2684.386)
        }),
        // vLLM's grammar is asked first and gives these lines up: the cost includes that.
        ("lmdeploy_stats", LMDEPLOY_STATS, |p| {
            matches!(&p.record, Record::Lmdeploy(LmdeployRecord::Stats(s))
                if s.dp_rank == 3 && s.running == 36 && s.api_routed == Some(36))
        }),
        ("lmdeploy_0_10_stats", LMDEPLOY_0_10_STATS, |p| {
            matches!(&p.record, Record::Lmdeploy(LmdeployRecord::Stats(s))
                if s.running == 12 && s.unfinished == Some(14))
        }),
        ("sglang_decode", SGLANG_DECODE, |p| {
            matches!(&p.record, Record::Sglang(SglangRecord::Decode { ranks, stats })
                if ranks.dp_rank == Some(0) && stats.running_reqs == 48 && stats.queue_reqs == 5)
        }),
        ("sglang_prefill", SGLANG_PREFILL, |p| {
            matches!(&p.record, Record::Sglang(SglangRecord::Prefill { stats, .. })
                if stats.new_tokens == 16384 && stats.pending_tokens == Some(52000))
        }),
        ("tgi_success_text", TGI_SUCCESS, |p| {
            matches!(&p.record, Record::Tgi(TgiRecord::Request(r))
                if r.total_ns == 611_286_748 && r.time_per_token_ns == 43_600_359)
        }),
        ("tgi_success_json", TGI_JSON, |p| {
            matches!(&p.record, Record::Tgi(TgiRecord::Request(r))
                if r.span == "chat_completions" && r.validation_ns == 561_042)
        }),
        ("ollama_gin", OLLAMA_GIN, |p| {
            matches!(&p.record, Record::Ollama(OllamaRecord::Request(r))
                if r.status == 200 && r.path == "/api/tags")
        }),
    ];
    let mut group = c.benchmark_group("grammar");
    for &(name, line, check) in cases {
        let parsed = parse(line).unwrap_or_else(|| panic!("{name}: no record"));
        assert!(check(&parsed), "{name}: wrong answer {parsed:?}");
        group.throughput(Throughput::Bytes(line.len() as u64));
        group.bench_function(name, |b| b.iter(|| parse(black_box(line))));
    }
    group.finish();
}

fn dispatch(c: &mut Criterion) {
    let near_miss = request_line(2000, true);
    let plain_miss_2k = request_line(2000, false);
    let plain_miss_20k = request_line(20_000, false);
    let cases: &[(&str, &str, bool)] = &[
        ("match_v1_stats", V1_STATS, true),
        ("match_tgi_success", TGI_SUCCESS, true),
        ("near_miss_tgi_connected", TGI_CONNECTED, false),
        ("plain_miss_ollama_runner_word", OLLAMA_WAITING, false),
        ("near_miss_request_2k", &near_miss, false),
        ("plain_miss_access", ACCESS, false),
        ("plain_miss_request_2k", &plain_miss_2k, false),
        ("plain_miss_request_20k", &plain_miss_20k, false),
    ];
    let mut group = c.benchmark_group("dispatch");
    for &(name, line, matches) in cases {
        assert_eq!(parse(line).is_some(), matches, "{name}");
        // The near miss passes the prefilter and is rejected by the grammar.
        assert_eq!(
            has_anchor(line.as_bytes()),
            matches || name.starts_with("near"),
            "{name}"
        );
        group.throughput(Throughput::Bytes(line.len() as u64));
        group.bench_function(name, |b| b.iter(|| parse(black_box(line))));
    }
    group.finish();
}

/// The agent's path, [`records`]: what finding every record of a line costs on a line of one
/// record, and on lines of several.
fn records_per_line(c: &mut Criterion) {
    let glued = format!("{V1_STATS}{V1_STATS}");
    let body = ITERATION_STATS.trim_start_matches("[TensorRT-LLM][INFO] ");
    let dump = format!("[{body},{body}]");
    let near_miss = request_line(2000, true);
    let cases: [(&str, &str, usize); 4] = [
        ("one_v1_stats", V1_STATS, 1),
        ("two_glued_v1_stats", &glued, 2),
        ("metrics_dump_two_records", &dump, 2),
        ("near_miss_request_2k", &near_miss, 0),
    ];
    let mut group = c.benchmark_group("records");
    for (name, line, parsed) in cases {
        let count = records(line)
            .filter(|o| matches!(o, Outcome::Parsed(_)))
            .count();
        assert_eq!(count, parsed, "{name}");
        group.throughput(Throughput::Bytes(line.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| records(black_box(line)).for_each(|o| drop(black_box(o))))
        });
    }
    group.finish();
}

criterion_group!(benches, grammars, dispatch, records_per_line);
criterion_main!(benches);
