//! Label values a log makes up are bounded. 100k `Engine NNN:` values made
//! 900k series, 100k TensorRT-LLM ranks 4.1M, and 30k Triton pids took 77 s to ingest (their
//! slots were searched linearly under the state lock). Each log is driven through the one-shot
//! pipeline, as a user would test a log; what the caps refuse is counted, never created.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use crate::support::agent::sample;

/// Writes `lines` to `path` and reads it with `--one-shot` and `flags`.
fn one_shot(path: &Path, lines: impl Iterator<Item = String>, flags: &[&str]) -> String {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for line in lines {
        writeln!(file, "{line}").unwrap();
    }
    file.into_inner().unwrap().sync_all().unwrap();
    let mut argv = vec!["llmtail", "--log", path.to_str().unwrap(), "--one-shot"];
    argv.extend_from_slice(flags);
    let started = Instant::now();
    let metrics = crate::replay::one_shot(&argv.iter().map(|a| a.to_string()).collect::<Vec<_>>());
    // Not asserted on (speed targets live in benchmarks): shown with --nocapture.
    eprintln!("{}: one-shot took {:?}", path.display(), started.elapsed());
    metrics
}

/// Distinct values of `label` among `name`'s samples.
fn label_values(metrics: &str, name: &str, label: &str) -> usize {
    let prefix = format!("{name}{{");
    let key = format!("{label}=\"");
    let mut values: Vec<&str> = metrics
        .lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .filter_map(|l| l.split_once(&key).map(|(_, rest)| rest))
        .filter_map(|rest| rest.split_once('"').map(|(value, _)| value))
        .collect();
    values.sort_unstable();
    values.dedup();
    values.len()
}

fn refused(metrics: &str) -> f64 {
    sample(metrics, "llmtail_series_refused_total", &[]).expect("llmtail_series_refused_total")
}

fn vllm_line(engine: usize) -> String {
    format!("(APIServer pid=812) INFO 11-22 13:25:01 [loggers.py:257] Engine {engine:03}: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 5.0%, Prefix cache hit rate: 0.0%")
}

#[test]
fn a_hundred_thousand_vllm_engine_indexes_make_at_most_the_cap_of_engines() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = one_shot(
        &dir.path().join("vllm.log"),
        (0..100_000).map(vllm_line),
        &[],
    );
    assert_eq!(
        label_values(&metrics, "vllm:num_requests_running", "engine"),
        1024
    );
    assert_eq!(refused(&metrics), (100_000 - 1024) as f64);
    assert_eq!(
        sample(
            &metrics,
            "llmtail_lines_parsed_total",
            &[("grammar", "vllm_stats")]
        ),
        Some(100_000.0),
        "a refused line is still a parsed line"
    );
}

#[test]
fn a_hundred_thousand_tensorrt_llm_ranks_make_at_most_the_cap_of_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let line = |rank: usize| {
        format!("[10/21/2025-23:24:47] [TRT-LLM] [RANK {rank}] [I] iter = 0, global_rank = {rank}, rank = {rank}, currank_total_requests = 1/2, host_step_time = 15.2ms, prev_device_step_time = N/A, timestamp = 2025-10-21 23:24:47, num_scheduled_requests: 1, states = {{'num_ctx_requests': 1, 'num_ctx_tokens': 812, 'num_generation_tokens': 0}}")
    };
    // 4,096 ranks of TRT-LLM's every series pass the default --max-series: lift it to see
    // the cap per log.
    let metrics = one_shot(
        &dir.path().join("trtllm.log"),
        (0..100_000).map(line),
        &["--max-series", "1000000"],
    );
    assert_eq!(
        label_values(&metrics, "llmtail_trtllm_iterations_total", "rank"),
        4096
    );
    assert_eq!(refused(&metrics), (100_000 - 4096) as f64);
}

#[test]
fn thirty_thousand_triton_pids_take_at_most_the_cap_of_slots() {
    let dir = tempfile::tempdir().unwrap();
    // Every process writes in the same second: none is a restart of a silent one.
    let line = |i: usize| {
        format!(
            r#"I0611 09:14:00.770724 {pid} model_instance_state.cc:1428] "{{\"Active Request Count\":1,\"Iteration Counter\":0,\"Max Request Count\":8,\"Timestamp\":\"06-11-2025 09:14:00.000000\",\"Scheduled Requests\":1}}""#,
            pid = 100_000 + i
        )
    };
    let metrics = one_shot(&dir.path().join("triton.log"), (0..30_000).map(line), &[]);
    assert_eq!(
        label_values(&metrics, "llmtail_trtllm_iterations_total", "rank"),
        256
    );
    assert_eq!(refused(&metrics), (30_000 - 256) as f64);
}

#[test]
fn per_position_rates_past_the_cap_are_dropped_and_the_rest_of_the_line_kept() {
    let dir = tempfile::tempdir().unwrap();
    let rates = vec!["0.500"; 1000].join(", ");
    let spec = format!("(APIServer pid=812) INFO 11-22 13:25:01 [metrics.py:120] SpecDecoding metrics: Mean acceptance length: 2.50, Accepted throughput: 10.00 tokens/s, Drafted throughput: 20.00 tokens/s, Accepted: 100 tokens, Drafted: 200 tokens, Per-position acceptance rate: {rates}, Avg Draft acceptance rate: 50.0%");
    let metrics = one_shot(
        &dir.path().join("vllm.log"),
        [vllm_line(0), spec].into_iter(),
        &[],
    );
    let name = "llmtail_vllm_spec_decode_acceptance_rate_per_position";
    assert_eq!(label_values(&metrics, name, "position"), 64);
    assert_eq!(
        sample(&metrics, "vllm:spec_decode_num_accepted_tokens_total", &[]),
        Some(100.0)
    );
    assert_eq!(refused(&metrics), 1.0);
}

#[test]
fn max_series_refuses_engines_past_its_value() {
    let dir = tempfile::tempdir().unwrap();
    let three_engines = (3
        * <llmtail::engines::vllm::VllmLog as llmtail::engines::Engine>::series_per_unit())
    .to_string();
    let metrics = one_shot(
        &dir.path().join("vllm.log"),
        (0..10).chain(0..10).map(vllm_line),
        &["--max-series", &three_engines],
    );
    assert_eq!(
        label_values(&metrics, "vllm:num_requests_running", "engine"),
        3
    );
    assert_eq!(refused(&metrics), 14.0, "7 engines refused, twice each");
}
