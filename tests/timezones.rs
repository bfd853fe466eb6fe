//! When a line was written: a time without a zone is read in the log's zone, and a time
//! without a year in the year that puts it closest before now, line by line.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use clap::Parser;
use jiff::tz::{self, TimeZone};
use jiff::Timestamp;
use llmtail::cli::Cli;
use llmtail::clock::Clock;
use llmtail::config::Settings;

use crate::support::agent::sample;

/// 2027-01-01T00:00:00Z.
const NEW_YEAR_2027: f64 = 1_798_761_600.0;
/// 2026-11-22T13:25:01Z, and the same wall-clock time in Tokyo (UTC+9 all year).
const NOV_22_13_25_01_UTC: f64 = 1_795_353_901.0;
const NOV_22_13_25_01_TOKYO: f64 = NOV_22_13_25_01_UTC - 9.0 * 3600.0;

const CONFIG: &str = "(EngineCore_DP0 pid=276) INFO 12-31 23:59:50 [core.py:93] Initializing a V1 LLM engine (v0.14.0) with config: model='/models/qwen3-8b', served_model_name=qwen3-8b";
const STATS: &str = "(APIServer pid=812) INFO 01-01 00:00:10 [loggers.py:257] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 1.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%";

/// A vLLM stats line whose head says `at` (`MM-DD HH:MM:SS`, no year, no zone).
fn stats_line(at: &str) -> String {
    format!("(APIServer pid=812) INFO {at} [loggers.py:257] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 1.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%")
}

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
        &[
            "--log",
            log.to_str().unwrap(),
            "--envelope",
            "journald",
            "--log-timezone",
            "UTC",
        ],
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

#[test]
fn log_timezone_reads_a_vllm_head_in_the_writers_zone() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    write_lines(&log, &[&stats_line("11-22 13:25:01")]);
    let path = log.to_str().unwrap();
    let now = NOV_22_13_25_01_UTC + 3600.0;
    let tokyo = one_shot_at(now, &["--log", path, "--log-timezone", "Asia/Tokyo"]);
    assert_eq!(
        written_at(&tokyo, "vllm_stats"),
        Some(NOV_22_13_25_01_TOKYO)
    );
    let utc = one_shot_at(now, &["--log", path, "--log-timezone", "UTC"]);
    assert_eq!(written_at(&utc, "vllm_stats"), Some(NOV_22_13_25_01_UTC));
}

#[test]
fn a_logs_own_timezone_beats_the_global_one() {
    let dir = tempfile::tempdir().unwrap();
    let (tokyo, utc) = (dir.path().join("tokyo.log"), dir.path().join("utc.log"));
    write_lines(&tokyo, &[&stats_line("11-22 13:25:01")]);
    write_lines(&utc, &[&stats_line("11-22 13:25:01")]);
    let config = dir.path().join("llmtail.toml");
    let toml = format!(
        "log_timezone = \"UTC\"\n[[log]]\npath = {:?}\ntimezone = \"Asia/Tokyo\"\n[[log]]\npath = {:?}\n",
        tokyo.to_str().unwrap(),
        utc.to_str().unwrap()
    );
    std::fs::write(&config, toml).unwrap();
    let metrics = one_shot_at(
        NOV_22_13_25_01_UTC + 3600.0,
        &["--config", config.to_str().unwrap()],
    );
    let at = |log: &Path| {
        sample(
            &metrics,
            "llmtail_last_parsed_timestamp_seconds",
            &[("log", log.to_str().unwrap())],
        )
    };
    assert_eq!(at(&tokyo), Some(NOV_22_13_25_01_TOKYO));
    assert_eq!(at(&utc), Some(NOV_22_13_25_01_UTC));
}

fn llmtail(args: &[&str], tz: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_llmtail"));
    command.args(args).stdin(Stdio::null());
    match tz {
        Some(tz) => command.env("TZ", tz),
        None => command.env_remove("TZ"),
    };
    command.output().unwrap()
}

#[test]
fn without_log_timezone_the_agent_reads_times_in_its_own_tz() {
    // A line vLLM in Tokyo wrote an hour ago, read by the real binary against the real clock.
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let written = Timestamp::from_second(now as i64 - 3600).unwrap();
    let tokyo_wall_clock = TimeZone::fixed(tz::offset(9))
        .to_datetime(written)
        .strftime("%m-%d %H:%M:%S")
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    write_lines(&log, &[&stats_line(&tokyo_wall_clock)]);
    let args = ["--log", log.to_str().unwrap(), "--one-shot"];

    let in_tokyo = llmtail(&args, Some("Asia/Tokyo"));
    assert!(in_tokyo.status.success(), "{in_tokyo:?}");
    let metrics = String::from_utf8(in_tokyo.stdout).unwrap();
    assert_eq!(
        written_at(&metrics, "vllm_stats"),
        Some(written.as_second() as f64)
    );

    let in_utc = llmtail(&args, Some("UTC"));
    let metrics = String::from_utf8(in_utc.stdout).unwrap();
    assert_eq!(
        written_at(&metrics, "vllm_stats"),
        Some(written.as_second() as f64 + 9.0 * 3600.0),
        "a Tokyo line read as UTC is 9 h in the future"
    );
}

#[test]
fn an_unknown_zone_stops_start_up_with_exit_code_2_and_the_fix() {
    let out = llmtail(
        &["--log", "/var/log/vllm.log", "--log-timezone", "Asia/Tokio"],
        Some("UTC"),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--log-timezone: \"Asia/Tokio\" is not a time zone"),
        "{stderr}"
    );
    assert!(
        stderr.contains("fix: use an IANA name such as Asia/Tokyo"),
        "{stderr}"
    );
}

/// SGLang's `[HH:MM:SS]` head prints no date: the time is read on the day the line arrives, in
/// the log's zone (here the day of the one-shot's clock), not dropped.
#[test]
fn a_time_of_day_without_a_date_is_read_on_the_day_the_line_arrives() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("sglang.log");
    write_lines(
        &log,
        &["[22:24:58] Decode batch, #running-req: 6, #token: 5120, token usage: 0.02, cuda graph: True, gen throughput (token/s): 412.36, #queue-req: 0, "],
    );
    // 13:25:01 UTC is 22:25:01 in Tokyo: the line was printed three seconds before.
    let metrics = one_shot_at(
        NOV_22_13_25_01_UTC,
        &[
            "--log",
            log.to_str().unwrap(),
            "--log-timezone",
            "Asia/Tokyo",
        ],
    );
    assert_eq!(
        written_at(&metrics, "sglang_decode"),
        Some(NOV_22_13_25_01_UTC - 3.0)
    );
}
