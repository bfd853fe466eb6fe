//! Scrape cost: rendering `/metrics` for about 10,000 series (target: under 5 ms), in both
//! formats, from a state built the way the pipeline builds it (vLLM stats lines applied to
//! engines of many logs). Checks the answer: the series count and one value.
//!
//! `cargo bench --bench scrape`

use std::sync::{Arc, Mutex};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use llmtail::engines::parts::caps::{SeriesGuard, DEFAULT_MAX_SERIES};
use llmtail::engines::parts::pacing::StatsInterval;
use llmtail::exposition::render::{render, Format};
use llmtail::state::{LogState, State, StateSettings};

/// Logs x engines: each engine has every vLLM series a V1 line with spec decoding gives.
const LOGS: usize = 51;
const ENGINES: usize = 8;
/// A second after the lines were written: every engine is up.
const NOW: f64 = 2.0;

fn state() -> Arc<Mutex<State>> {
    let mut state = State::new(StateSettings {
        stats_interval: StatsInterval::Auto,
        model_name: None,
        constant_labels: vec![("instance_group".into(), "a".into())],
        series: SeriesGuard {
            max_series: DEFAULT_MAX_SERIES,
        },
        log_expiry: llmtail::source::DEFAULT_LOG_EXPIRY.as_secs_f64(),
    });
    for log in 0..LOGS {
        let mut log_state = LogState::new(
            Arc::from(format!("/var/log/vllm/gpu{log}.log")),
            llmtail::source::LogSpec::Glob("/var/log/vllm/*.log".into()),
            Vec::new(),
            None,
            None,
        );
        for engine in 0..ENGINES {
            let stats = format!(
                "(APIServer pid=1) INFO 11-22 13:25:01 [loggers.py:257] Engine {engine:03}: Avg prompt throughput: 1245.3 tokens/s, Avg generation throughput: 312.8 tokens/s, Running: 14 reqs, Waiting: 2 reqs, Deferred: 1 reqs, KV fetch: 1 waiting to start, 2 in progress, 3 completed waiting, Preemptions: 2, GPU KV cache usage: 63.1%, Prefix cache hit rate: 41.7%, External prefix cache hit rate: 3.0%, MM cache hit rate: 1.0%"
            );
            let spec = "(APIServer pid=1) INFO 11-22 13:25:01 [metrics.py:120] SpecDecoding metrics: Mean acceptance length: 2.50, Accepted throughput: 10.00 tokens/s, Drafted throughput: 20.00 tokens/s, Accepted: 100 tokens, Drafted: 200 tokens, Per-position acceptance rate: 0.600, 0.400, 0.300, Avg Draft acceptance rate: 50.0%";
            for line in [stats.as_str(), spec] {
                let parsed = llmtail_grammars::parse(line).expect("a stats line");
                log_state.apply(&parsed, Some(1.0), 1.0, &state.settings, &mut state.series);
            }
        }
        state.insert_log(log, log_state);
    }
    // As the reader's side judges before a scrape reads.
    state.judge(NOW);
    Arc::new(Mutex::new(state))
}

fn scrape(c: &mut Criterion) {
    let state = state();
    let series = render(&state, &[], Format::Text004)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .count();
    assert!(series >= 10_000, "{series} series");
    assert!(render(&state, &[], Format::OpenMetrics).contains(
        "vllm:num_requests_running{engine=\"7\",model_name=\"\",log=\"/var/log/vllm/gpu50.log\",instance_group=\"a\"} 14.0"
    ));
    // The body's bytes as the throughput: benches/table.sh reads them from criterion's
    // benchmark.json beside the time.
    let mut group = c.benchmark_group(format!("scrape_{series}_series"));
    for (name, format) in [
        ("text_0_0_4", Format::Text004),
        ("openmetrics", Format::OpenMetrics),
    ] {
        let bytes = render(&state, &[], format).len() as u64;
        group.throughput(Throughput::Bytes(bytes));
        group.bench_function(name, |b| b.iter(|| render(&state, &[], format)));
    }
    group.finish();
}

criterion_group!(benches, scrape);
criterion_main!(benches);
