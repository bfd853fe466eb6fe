//! The soak: an engine logs numbered lines at a steady rate (10,000 lines/s for 60 s by
//! default) while real `logrotate` rotates its log again and again, first with `create` (the
//! engine reopens a moment later, as on SIGHUP), then with `copytruncate` (the engine keeps
//! its append handle). Ignored by default; `.ci/run` runs it against the release binary it
//! packages, with a bounded time:
//!
//! ```sh
//! cargo build --release
//! LLMTAIL_SOAK_AGENT=target/release/llmtail LLMTAIL_SOAK_SECONDS=60 \
//!   cargo test --test integration soak -- --ignored --nocapture
//! ```
//!
//! Two followers read the same log. The agent's own reader (`llmtail::source::Reader`, with
//! the agent's options) feeds a sink that keeps the number of every line, which is the
//! line-by-line check: every number exactly once, except what copytruncate loses, and those
//! only from its window. The whole agent (its binary, as a process) follows it too and must
//! count every rotation and truncation, skip nothing and garble nothing. Its lines cannot be
//! listed one by one from `/metrics`, and its copytruncate losses race on their own, so its
//! loss is checked against the windows' total and reported next to the reader's.
//!
//! Knobs: `LLMTAIL_SOAK_SECONDS` (60), `LLMTAIL_SOAK_RATE` (lines/s, 10000),
//! `LLMTAIL_SOAK_ROTATIONS` (of each kind, 20), `LLMTAIL_SOAK_AGENT` (the agent's binary; the
//! one built with the tests by default). The test binary itself may be unoptimised: its reader
//! keeps up at 10,000 lines/s (caught up within a few ms of the last line on 2 busy cores).

use std::time::{Duration, Instant};

use crate::support::agent::{sample, DEADLINE};
use crate::support::process::AgentProcess;
use crate::support::tail::wait_until;
use crate::support::writer::{
    first_number_in, numbers_in, sum_to, Logrotate, NumberTail, PacedWriter,
};

/// How long the engine goes on writing to the renamed file before it reopens its log.
const REOPEN_AFTER: Duration = Duration::from_millis(100);

fn knob(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(value) => value
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value} is not a whole number")),
        Err(_) => default,
    }
}

/// The agent's binary following the soak's log, as a process of its own: the one
/// `LLMTAIL_SOAK_AGENT` names (`.ci/run` gives the release binary it packages), else the one
/// built with these tests.
fn agent(args: &[&str]) -> AgentProcess {
    let mut command = match std::env::var_os("LLMTAIL_SOAK_AGENT") {
        Some(binary) => std::process::Command::new(binary),
        None => std::process::Command::new(env!("CARGO_BIN_EXE_llmtail")),
    };
    command.args(args).args(["--log-timezone", "UTC"]);
    AgentProcess::start(command)
}

/// One copytruncate: the last line in logrotate's copy and the last line written before its
/// truncate. Lines after `copied` up to `cut` are in neither file.
#[derive(Debug, Clone, Copy)]
struct Window {
    copied: u64,
    cut: u64,
}

#[test]
#[ignore = "a minute of load: run by .ci/run with --ignored"]
fn soak_rotation_under_load() {
    let seconds = knob("LLMTAIL_SOAK_SECONDS", 60);
    let rate = knob("LLMTAIL_SOAK_RATE", 10_000);
    let rotations = knob("LLMTAIL_SOAK_ROTATIONS", 20);
    assert!(seconds > 0 && rate > 0 && rotations > 0);

    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("app.log");
    // There before the agent starts: it is ready once every log it is given is open.
    std::fs::write(&log, "").unwrap();
    let label = log.to_str().unwrap().to_string();
    let agent = agent(&["--log", &label]);
    let tail = NumberTail::start(&log);
    let create = Logrotate::new(dir.path(), "create", &log, &["create"]);
    let copytruncate = Logrotate::new(dir.path(), "copytruncate", &log, &["copytruncate"]);

    // The schedule: 2 x `rotations` evenly spaced over the run, with a stretch of plain
    // writing before the first and after the last. This (test) thread is the rotator.
    let total_time = Duration::from_secs(seconds);
    let spacing = total_time / (2 * rotations as u32 + 1);
    let writer = PacedWriter::spawn(&log, rate);
    let started = Instant::now();
    let mut rotator_time = Duration::ZERO;
    let at = |k: u64| started + spacing * (k as u32 + 1);

    for k in 0..rotations {
        sleep_until(at(k));
        rotator_time += create.run();
        std::thread::sleep(REOPEN_AFTER);
        writer.reopen();
    }
    let create_phase_end = writer.written();

    let mut windows = Vec::new();
    for k in rotations..2 * rotations {
        sleep_until(at(k));
        rotator_time += copytruncate.run();
        let copy = numbers_in(&dir.path().join("app.log.1"));
        let copied = *copy.last().expect("logrotate copied lines");
        let mut first = None;
        assert!(
            wait_until(DEADLINE, || {
                first = first_number_in(&log);
                first.is_some()
            }),
            "no line after the truncate"
        );
        windows.push(Window {
            copied,
            cut: first.unwrap() - 1,
        });
    }
    sleep_until(started + total_time);
    let behind = writer.max_behind();
    let (total, wrote_for) = writer.stop();
    let stopped = Instant::now();

    // Both followers must reach the last line; lines are read in order, so then everything
    // that will ever arrive has.
    assert!(
        wait_until(DEADLINE, || tail.numbers().max() == total),
        "the reader never read line {total}"
    );
    let reader_lag = stopped.elapsed();
    let metrics = agent.wait_for(&format!("line {total}"), |m| {
        sample(m, "vllm:num_requests_running", &[("log", &label)]) == Some(total as f64)
    });
    let agent_lag = stopped.elapsed();
    let numbers = tail.stop();

    // The reader, line by line.
    let mut seen = vec![0u32; total as usize + 1];
    for &n in &numbers.numbers {
        assert!(n >= 1 && n <= total, "line {n} was never written");
        seen[n as usize] += 1;
    }
    let duplicated: Vec<u64> = (1..=total).filter(|&n| seen[n as usize] > 1).collect();
    let missing: Vec<u64> = (1..=total).filter(|&n| seen[n as usize] == 0).collect();
    let lost_in_create = missing.iter().filter(|&&n| n <= create_phase_end).count();
    let outside_windows: Vec<u64> = missing
        .iter()
        .copied()
        .filter(|&n| !windows.iter().any(|w| w.copied < n && n <= w.cut))
        .collect();
    let window_lines: u64 = windows.iter().map(|w| w.cut - w.copied).sum();
    let widest = windows.iter().map(|w| w.cut - w.copied).max().unwrap_or(0);

    // The agent, by its counters.
    let get = |name: &str, extra: &[(&str, &str)]| {
        let mut labels = vec![("log", label.as_str())];
        labels.extend_from_slice(extra);
        sample(&metrics, name, &labels).unwrap_or(0.0) as u64
    };
    let agent_read = get("llmtail_lines_read_total", &[]);
    let agent_parsed = get("llmtail_lines_parsed_total", &[("grammar", "vllm_stats")]);
    let agent_rotations = get("llmtail_log_rotations_total", &[]);
    let agent_truncations = get("llmtail_log_truncations_total", &[]);
    let agent_skipped: Vec<u64> = ["too_long", "truncated_partial", "invalid_envelope"]
        .iter()
        .map(|reason| get("llmtail_lines_skipped_total", &[("reason", reason)]))
        .collect();

    let held = total as f64 / wrote_for.as_secs_f64();
    println!(
        "soak: {total} lines in {:.1} s at {rate}/s asked: {held:.0} lines/s held (writer at most \
         {} lines behind its schedule), followers caught up {} ms (reader) and {} ms (agent) \
         after the last line; create x{rotations}: {lost_in_create} lost, {} duplicated; \
         copytruncate x{rotations}: reader lost {} lines, agent lost {} lines, logrotate's \
         copies missed {window_lines} (lines written between a copy and its truncate; widest \
         {widest}); logrotate ran {:.0} ms on average",
        wrote_for.as_secs_f64(),
        behind,
        reader_lag.as_millis(),
        agent_lag.as_millis(),
        duplicated.len(),
        missing.len() - lost_in_create,
        total.saturating_sub(agent_read),
        rotator_time.as_secs_f64() * 1000.0 / (2 * rotations) as f64,
    );
    println!("soak: copytruncate windows (copied, cut): {windows:?}");

    assert!(duplicated.is_empty(), "lines read twice: {duplicated:?}");
    assert_eq!(lost_in_create, 0, "lost around create: {missing:?}");
    assert!(
        outside_windows.is_empty(),
        "lost outside copytruncate's windows: {outside_windows:?}"
    );
    assert_eq!(numbers.garbled, 0, "lines without a number");
    assert_eq!(
        (numbers.rotations, numbers.truncations),
        (rotations, rotations)
    );
    assert_eq!(numbers.skipped_too_long, 0);

    assert_eq!((agent_rotations, agent_truncations), (rotations, rotations));
    assert_eq!(agent_parsed, agent_read, "garbled lines in the agent");
    assert_eq!(agent_skipped[0], 0, "too long");
    assert_eq!(agent_skipped[2], 0, "invalid envelope");
    assert!(
        agent_read <= total,
        "the agent read {agent_read} of {total}"
    );
    assert!(
        total - agent_read <= window_lines,
        "the agent lost {} lines, more than copytruncate's windows hold ({window_lines})",
        total - agent_read
    );
}

/// Sleeps until `when` (the rotator's schedule).
fn sleep_until(when: Instant) {
    std::thread::sleep(when.saturating_duration_since(Instant::now()));
}

/// The soak over a glob of dated names: `*.log` while logrotate's `dateext` turns `app.log`
/// into `app-<date>.log` (a new match of the glob, holding lines already read) again and
/// again, and the agent is stopped and started again with `--state-file` in the middle, while
/// the engine goes on writing and one more rotation happens. Every line must be counted once
/// over all labels: the count of lines and the sum of their numbers
/// (`vllm:num_preemptions_total`, line n adds n) both match what was written.
#[test]
#[ignore = "load: run by .ci/run with --ignored"]
fn soak_dated_rotation_under_a_glob_across_a_restart() {
    let seconds = knob("LLMTAIL_SOAK_SECONDS", 60).div_ceil(2);
    let rate = knob("LLMTAIL_SOAK_RATE", 10_000);
    let rotations = knob("LLMTAIL_SOAK_ROTATIONS", 20);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("app.log");
    // There before the agent starts: it is ready once its glob matches a file.
    std::fs::write(&log, "").unwrap();
    let pattern = format!("{}/*.log", dir.path().display());
    let state = dir.path().join("state.json");
    let flags = [
        "--log",
        pattern.as_str(),
        "--state-file",
        state.to_str().unwrap(),
    ];
    // A name per second: rotations are spaced more than a second apart. Old dated files are
    // kept, so that what the agent had not read when it stopped is still there to read.
    let dateext = Logrotate::new(
        dir.path(),
        "dateext",
        &log,
        &[
            "create",
            "dateext",
            "dateformat -%Y%m%d%H%M%S",
            "extension .log",
            "rotate 1000",
        ],
    );
    let spacing =
        (Duration::from_secs(seconds) / (rotations as u32 + 1)).max(Duration::from_millis(1100));

    let mut agent = Some(agent(&flags));
    let writer = PacedWriter::spawn(&log, rate);
    let started = Instant::now();
    for k in 0..rotations {
        sleep_until(started + spacing * (k as u32 + 1));
        if k == rotations / 2 {
            // Stopped (the state is saved), a rotation while it is down, started again.
            let (stopped, _) = agent.take().unwrap().terminate();
            assert!(stopped.is_some_and(|s| s.success()), "{stopped:?}");
            dateext.run();
            std::thread::sleep(REOPEN_AFTER);
            writer.reopen();
            agent = Some(self::agent(&flags));
            continue;
        }
        dateext.run();
        std::thread::sleep(REOPEN_AFTER);
        writer.reopen();
    }
    sleep_until(started + spacing * (rotations as u32 + 1));
    let (total, _) = writer.stop();
    let agent = agent.unwrap();

    let summed = |metrics: &str, name: &str| -> u64 {
        metrics
            .lines()
            .filter(|l| l.starts_with(&format!("{name}{{")))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>() as u64
    };
    let label = log.to_str().unwrap();
    let metrics = agent.wait_for(&format!("line {total}"), |m| {
        sample(m, "vllm:num_requests_running", &[("log", label)]) == Some(total as f64)
    });
    // Lines are read in order within a file, but a dated file the agent found under its own
    // name may still be read after the last line: wait for the count to settle.
    let mut last = (0, 0);
    assert!(wait_until(DEADLINE, || {
        let metrics = agent.metrics();
        let now = (
            summed(&metrics, "llmtail_lines_read_total"),
            summed(&metrics, "vllm:num_preemptions_total"),
        );
        let settled = now == last && now.0 >= total;
        last = now;
        settled
    }));
    let dated = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("app-"))
        .count();
    println!(
        "soak (dated names under a glob, a restart): {total} lines, {dated} dated files, \
         {} lines counted, the sum of their numbers {} (written: {}); log labels: {}",
        last.0,
        last.1,
        sum_to(total),
        metrics.matches("llmtail_lines_read_total{").count(),
    );
    assert_eq!(last.0, total, "lines counted over all labels");
    assert_eq!(last.1, sum_to(total), "every line once");
}
