//! When a line was written: a time without a zone is read in the log's zone, and a time
//! without a year in the year that puts it closest before now, line by line.

use std::path::Path;

use clap::Parser;
use llmtail::cli::Cli;
use llmtail::config::Settings;
use llmtail::pipeline::Clock;

use crate::support::agent::sample;

/// 2027-01-01T00:00:00Z.
const NEW_YEAR_2027: f64 = 1_798_761_600.0;

const CONFIG: &str = "(EngineCore_DP0 pid=276) INFO 12-31 23:59:50 [core.py:93] Initializing a V1 LLM engine (v0.14.0) with config: model='/models/qwen3-8b', served_model_name=qwen3-8b";
const STATS: &str = "(APIServer pid=812) INFO 01-01 00:00:10 [loggers.py:257] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 1.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%";

/// `llmtail --one-shot` in-process, with the clock at `now`.
fn one_shot_at(now: f64, args: &[&str]) -> String {
    let mut argv = vec!["llmtail", "--one-shot"];
    argv.extend_from_slice(args);
    let settings = Settings::from_cli(Cli::try_parse_from(argv).expect("flags parse"))
        .expect("valid settings");
    let mut out = Vec::new();
    llmtail::run::one_shot(&settings, Clock::fixed(now), &mut out).expect("one-shot run");
    String::from_utf8(out).expect("utf-8 exposition")
}

fn write_lines(path: &Path, lines: &[&str]) {
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

/// When the last line of `grammar` was written, as the exposition says.
fn written_at(metrics: &str, grammar: &str) -> Option<f64> {
    sample(
        metrics,
        "llmtail_last_parsed_timestamp_seconds",
        &[("grammar", grammar)],
    )
}

#[test]
fn a_syslog_log_read_in_january_puts_dec_31_and_jan_1_on_consecutive_days() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.journal");
    write_lines(
        &log,
        &[
            &format!("Dec 31 23:59:50 gpu1 vllm[812]: {CONFIG}"),
            &format!("Jan  1 00:00:10 gpu1 vllm[812]: {STATS}"),
        ],
    );
    let metrics = one_shot_at(
        NEW_YEAR_2027 + 60.0,
        &["--log", log.to_str().unwrap(), "--envelope", "journald"],
    );
    assert_eq!(
        written_at(&metrics, "vllm_config"),
        Some(NEW_YEAR_2027 - 10.0),
        "Dec 31 is 2026's"
    );
    assert_eq!(
        written_at(&metrics, "vllm_stats"),
        Some(NEW_YEAR_2027 + 10.0),
        "Jan 1 is 2027's"
    );
}
