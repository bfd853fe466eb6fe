//! A log's clock against the agent's. Engines stamp their lines with their own clock in their
//! own zone; the agent judges them by when their lines arrive. These tests run the mess real
//! hosts have: a container logging in UTC while the agent's host is in Tokyo or New York (the
//! agent a real process with `TZ` set, the lines stamped by the real clock as they are
//! written), every line printed twice, a one-second stats interval, and every shipped fixture
//! appended live line by line.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use jiff::tz::TimeZone;
use jiff::Timestamp;

use crate::support::agent::{eventually, expect_sample, http_get, sample, RunningAgent};
use crate::support::process::AgentProcess;
use crate::support::writer::append_lines;

/// A vLLM V1 stats line with requests running (so the next line is due), stamped `head`
/// (`MM-DD HH:MM:SS`).
fn busy_stats_line(head: &str) -> String {
    format!(
        "(APIServer pid=812) INFO {head} [loggers.py:257] Engine 000: Avg prompt throughput: \
         12.0 tokens/s, Avg generation throughput: 100.0 tokens/s, Running: 3 reqs, Waiting: 0 \
         reqs, GPU KV cache usage: 4.0%, Prefix cache hit rate: 0.0%"
    )
}

/// The real clock now, as a container logging in UTC prints it in a vLLM head.
fn utc_head_now() -> String {
    TimeZone::UTC
        .to_datetime(Timestamp::now())
        .strftime("%m-%d %H:%M:%S")
        .to_string()
}

/// The agent as a process of its own, with `TZ` set, once ready.
fn agent_in_zone(tz: &str, log: &Path, extra: &[&str]) -> AgentProcess {
    let mut command = AgentProcess::command(&["--log", log.to_str().unwrap()]);
    command.env("TZ", tz).args(extra).stdout(Stdio::null());
    let agent = AgentProcess::spawn(command);
    assert!(
        eventually(|| http_get(agent.addr, "/-/ready", None).is_ok_and(|r| r.status == 200)),
        "the agent never became ready"
    );
    agent
}

/// What an agent in zone `tz` showed of a vLLM writing a stats line a second, stamped in UTC,
/// and then falling silent with requests running.
struct Observed {
    /// `llmtail_vllm_engine_up` after each line was read.
    up_at_each_line: Vec<f64>,
    /// From the last line's write until `llmtail_vllm_engine_overdue` read 1.
    silence_until_overdue: Duration,
    metrics_before_silence: String,
    /// The landing page (plain text) before the silence.
    landing: String,
    stderr: String,
}

const LINES: usize = 6;

fn a_utc_engine_seen_from(tz: &str, extra: &[&str]) -> Observed {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    std::fs::write(&log, "").unwrap();
    let agent = agent_in_zone(tz, &log, extra);
    let mut up_at_each_line = Vec::new();
    let mut written_at = Instant::now();
    for n in 1..=LINES {
        // At the start of a second, so that consecutive lines are stamped a second apart.
        let into_second = Timestamp::now().subsec_nanosecond();
        std::thread::sleep(Duration::from_nanos(
            1_000_000_000 - into_second as u64 + 50_000_000,
        ));
        append_lines(&log, &[&busy_stats_line(&utc_head_now())]);
        written_at = Instant::now();
        let mut metrics = String::new();
        let parsed = eventually(|| {
            metrics = agent.metrics();
            sample(
                &metrics,
                "llmtail_lines_parsed_total",
                &[("grammar", "vllm_stats")],
            ) == Some(n as f64)
        });
        assert!(parsed, "line {n} was never read:\n{metrics}");
        up_at_each_line.push(expect_sample(&metrics, "llmtail_vllm_engine_up", &[]));
    }
    let metrics_before_silence = agent.metrics();
    let landing = http_get(agent.addr, "/", None).unwrap().body;
    let overdue =
        eventually(|| sample(&agent.metrics(), "llmtail_vllm_engine_overdue", &[]) == Some(1.0));
    let silence_until_overdue = written_at.elapsed();
    assert!(overdue, "never overdue:\n{}", agent.metrics());
    Observed {
        up_at_each_line,
        silence_until_overdue,
        metrics_before_silence,
        landing,
        stderr: agent.stderr.text(),
    }
}

/// Three intervals of one second, plus the second the stamps round to, plus a scrape's slack.
fn assert_overdue_in_three_intervals(observed: &Observed) {
    let silence = observed.silence_until_overdue.as_secs_f64();
    assert!(
        (2.9..=6.0).contains(&silence),
        "overdue after {silence:.2} s of silence (three 1 s intervals)"
    );
}

fn offset(metrics: &str) -> f64 {
    expect_sample(metrics, "llmtail_log_time_offset_seconds", &[])
}

#[test]
fn a_utc_log_on_a_tokyo_host_is_up_at_every_line_told_and_overdue_three_intervals_after_it_stops() {
    let observed = a_utc_engine_seen_from("Asia/Tokyo", &[]);
    assert_eq!(observed.up_at_each_line, vec![1.0; LINES]);
    assert_overdue_in_three_intervals(&observed);
    // The stamps read as Tokyo time are 9 h behind the agent's clock.
    let offset = offset(&observed.metrics_before_silence);
    assert!((offset + 9.0 * 3600.0).abs() < 5.0, "offset {offset}");
    assert!(
        observed.stderr.contains("writes them in UTC")
            && observed.stderr.contains("fix: --log-timezone UTC"),
        "no warning naming the zone and the fix:\n{}",
        observed.stderr
    );
    assert!(
        observed.landing.contains("WARNING") && observed.landing.contains("writes them in UTC"),
        "the landing page does not say it:\n{}",
        observed.landing
    );
}

#[test]
fn a_utc_log_on_a_new_york_host_is_not_kept_up_by_stamps_that_read_as_future() {
    let observed = a_utc_engine_seen_from("America/New_York", &[]);
    assert_eq!(observed.up_at_each_line, vec![1.0; LINES]);
    assert_overdue_in_three_intervals(&observed);
    let new_york = TimeZone::get("America/New_York").unwrap();
    let behind_utc = -new_york.to_offset(Timestamp::now()).seconds();
    let offset = offset(&observed.metrics_before_silence);
    assert!(
        (offset - f64::from(behind_utc)).abs() < 5.0,
        "offset {offset}, expected {behind_utc}"
    );
    assert!(
        observed.stderr.contains("writes them in UTC"),
        "{}",
        observed.stderr
    );
}

#[test]
fn log_timezone_auto_learns_a_utc_log_on_a_tokyo_host_and_reads_its_times_right() {
    let observed = a_utc_engine_seen_from("Asia/Tokyo", &["--log-timezone", "auto"]);
    assert_eq!(observed.up_at_each_line, vec![1.0; LINES]);
    assert_overdue_in_three_intervals(&observed);
    let metrics = &observed.metrics_before_silence;
    let offset = offset(metrics);
    assert!(offset.abs() < 5.0, "offset after learning: {offset}");
    let now = Timestamp::now().as_second() as f64;
    let last = expect_sample(
        metrics,
        "llmtail_last_parsed_timestamp_seconds",
        &[("grammar", "vllm_stats")],
    );
    assert!(
        (now - last).abs() < 30.0,
        "last line read at {last}, now {now}"
    );
    assert!(
        !observed.stderr.contains("writes them in"),
        "auto left an offset to warn about:\n{}",
        observed.stderr
    );
    assert!(
        observed
            .landing
            .contains("learned: the log's times are -9.00 h off"),
        "the landing page does not say what auto learned:\n{}",
        observed.landing
    );
}

/// 2026-11-22T13:25:00Z, when the in-process tests' lines begin.
const T0: f64 = 1_795_353_900.0;

/// A busy stats line stamped `at` (UTC).
fn busy_line_at(at: f64) -> String {
    let head = TimeZone::UTC
        .to_datetime(Timestamp::from_second(at as i64).unwrap())
        .strftime("%m-%d %H:%M:%S")
        .to_string();
    busy_stats_line(&head)
}

/// Appends `lines` at agent time `now` and waits until the agent has read `total` lines.
fn arrive(agent: &RunningAgent, log: &Path, now: f64, lines: &[&str], total: usize) -> String {
    agent.clock.set(now);
    append_lines(log, lines);
    agent.wait_for(&format!("{total} lines read"), |m| {
        sample(m, "llmtail_lines_read_total", &[]) == Some(total as f64)
    })
}

#[test]
fn every_line_printed_twice_keeps_the_engine_up_and_counts_tokens_once() {
    let dir = tempfile::tempdir().unwrap();
    let (doubled, once) = (dir.path().join("doubled.log"), dir.path().join("once.log"));
    std::fs::write(&doubled, "").unwrap();
    let agent = RunningAgent::start_at(&["--log", doubled.to_str().unwrap()], T0);
    let lines: Vec<String> = (0..12)
        .map(|k| busy_line_at(T0 + 10.0 * f64::from(k)))
        .collect();
    for (k, line) in lines.iter().enumerate() {
        let at = T0 + 10.0 * k as f64;
        // Half an interval after the pair: a 10 s interval collapsed to 1 s would make it 5
        // intervals late.
        let metrics = arrive(&agent, &doubled, at + 5.0, &[line, line], 2 * (k + 1));
        assert_eq!(
            expect_sample(&metrics, "llmtail_vllm_engine_up", &[]),
            1.0,
            "line {k}"
        );
    }
    let metrics = agent.metrics();
    std::fs::write(&once, lines.join("\n") + "\n").unwrap();
    let written_once = crate::replay::one_shot(&[
        "llmtail".into(),
        "--log".into(),
        once.display().to_string(),
        "--one-shot".into(),
        "--log-timezone".into(),
        "UTC".into(),
    ]);
    for counter in [
        "vllm:generation_tokens_total",
        "vllm:prompt_tokens_by_source_total",
    ] {
        assert_eq!(
            expect_sample(&metrics, counter, &[]),
            expect_sample(&written_once, counter, &[]),
            "{counter}"
        );
    }
    assert_eq!(
        expect_sample(
            &metrics,
            "llmtail_records_repeated_total",
            &[("grammar", "vllm_stats")]
        ),
        12.0
    );
}

#[test]
fn a_one_second_interval_is_learned_and_a_silent_engine_is_down_within_four_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    std::fs::write(&log, "").unwrap();
    let agent = RunningAgent::start_at(&["--log", log.to_str().unwrap()], T0);
    let last = T0 + 7.0;
    for k in 0..8 {
        let at = T0 + f64::from(k);
        arrive(&agent, &log, at, &[&busy_line_at(at)], k as usize + 1);
    }
    // A line no engine wrote breaks no silence; the agent judges the log as it reads it.
    let metrics = arrive(&agent, &log, last + 3.0, &["not a stats line"], 9);
    assert_eq!(
        expect_sample(&metrics, "llmtail_vllm_engine_up", &[]),
        1.0,
        "3 s of silence is three 1 s intervals, not more"
    );
    agent.clock.set(last + 4.0);
    agent.wait_for("4 s of silence with requests running", |m| {
        sample(m, "llmtail_vllm_engine_overdue", &[]) == Some(1.0)
    });
}

#[test]
fn lines_stamped_days_ago_appended_to_a_followed_log_are_served() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    std::fs::write(&log, "").unwrap();
    let agent = RunningAgent::start_at(&["--log", log.to_str().unwrap()], T0);
    let three_days_ago = T0 - 3.0 * 86_400.0;
    for k in 0..4 {
        let metrics = arrive(
            &agent,
            &log,
            T0 + f64::from(k),
            &[&busy_line_at(three_days_ago + 10.0 * f64::from(k))],
            k as usize + 1,
        );
        assert_eq!(
            expect_sample(&metrics, "vllm:num_requests_running", &[]),
            3.0
        );
    }
}

/// The exposition less what only a serving agent has (the offset it measured, the open file,
/// the reload), and with the `log` label taken out, sorted: what an engine's lines served.
fn served(exposition: &str) -> Vec<String> {
    let mut samples: Vec<String> = exposition
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter(|l| {
            ![
                "llmtail_build_info",
                "llmtail_config_",
                "llmtail_log_open",
                // Where the reader stands: it reports offsets as it reads, not per line.
                "llmtail_log_offset_bytes",
                "llmtail_log_time_offset_seconds",
                "llmtail_last_parsed_timestamp_seconds",
            ]
            .iter()
            .any(|p| l.starts_with(p))
        })
        .map(without_log_label)
        .collect();
    samples.sort();
    samples
}

fn without_log_label(sample: &str) -> String {
    let Some(start) = sample.find("log=\"") else {
        return sample.to_string();
    };
    let end = start + 5 + sample[start + 5..].find('"').unwrap() + 1;
    let rest = sample[end..].strip_prefix(',').unwrap_or(&sample[end..]);
    format!("{}{}", &sample[..start], rest)
}

/// Each fixture read live, a line at a time, at checkpoints through it: what the agent serves is
/// what `--one-shot` serves of the same prefix.
#[test]
fn every_fixture_appended_live_line_by_line_serves_what_one_shot_of_the_prefix_serves() {
    let mut failures = Vec::new();
    for fixture in crate::replay::replay_logs() {
        if let Err(failure) = appended_live_serves_the_one_shot(&fixture) {
            failures.push(failure);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The one-shot's clock: as the replay goldens read their yearless times.
const REPLAY_NOW: f64 = 1_798_718_400.0;

fn appended_live_serves_the_one_shot(fixture: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(fixture).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let dir = tempfile::tempdir().unwrap();
    let (live, prefix) = (dir.path().join("live.log"), dir.path().join("prefix.log"));
    std::fs::write(&live, "").unwrap();
    let agent = RunningAgent::start_at(&["--log", live.to_str().unwrap()], REPLAY_NOW);
    let checkpoints = [
        lines.len() / 4,
        lines.len() / 2,
        3 * lines.len() / 4,
        lines.len(),
    ];
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&live)
        .unwrap();
    for (n, line) in lines.iter().enumerate() {
        // One write per line: the reader sees the log grow a line at a time.
        file.write_all(format!("{line}\n").as_bytes()).unwrap();
        file.flush().unwrap();
        let read = n + 1;
        if !checkpoints.contains(&read) || read == 0 {
            continue;
        }
        let served_live = served(&agent.wait_for(&format!("{read} lines read"), |m| {
            sample(m, "llmtail_lines_read_total", &[]) == Some(read as f64)
        }));
        std::fs::write(&prefix, lines[..read].join("\n") + "\n").unwrap();
        let one_shot = served(&crate::replay::one_shot(&[
            "llmtail".into(),
            "--log".into(),
            prefix.display().to_string(),
            "--one-shot".into(),
            "--log-timezone".into(),
            "UTC".into(),
        ]));
        if served_live != one_shot {
            let missing: Vec<_> = one_shot
                .iter()
                .filter(|l| !served_live.contains(l))
                .collect();
            let extra: Vec<_> = served_live
                .iter()
                .filter(|l| !one_shot.contains(l))
                .collect();
            return Err(format!(
                "{} after {read} lines:\n  one-shot only: {missing:?}\n  live only: {extra:?}",
                fixture.display()
            ));
        }
    }
    Ok(())
}

#[test]
fn one_shot_with_log_timezone_auto_reads_the_local_zone_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    append_lines(&log, &[&busy_line_at(T0)]);
    let out = Command::new(env!("CARGO_BIN_EXE_llmtail"))
        .env("TZ", "Asia/Tokyo")
        .args([
            "--one-shot",
            "--log",
            log.to_str().unwrap(),
            "--log-timezone",
            "auto",
        ])
        .output()
        .expect("run llmtail");
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--log-timezone auto reads this log's times in the agent's own zone")
            && stderr.contains("Asia/Tokyo"),
        "{stderr}"
    );
    // Read as Tokyo time: 9 h before the UTC instant the head names.
    let metrics = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        sample(
            &metrics,
            "llmtail_last_parsed_timestamp_seconds",
            &[("grammar", "vllm_stats")]
        ),
        Some(T0 - 9.0 * 3600.0)
    );
}
