//! Restarts neither count a line twice nor reset a counter: with `--from start` the same file
//! rebuilds the same state; with `--state-file` the agent resumes where it stopped, even when
//! the log was rotated (or rotated and removed) while it was down.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use crate::support::agent::{eventually, sample, RunningAgent};

/// A V1 stats line; line `n` prints `Running: n reqs` and 10 tokens/s of prompt throughput
/// ten seconds after line `n - 1`, so every line adds exactly 100 prompt tokens.
fn stats_line(n: u32) -> String {
    let seconds = 10 * n;
    format!(
        "(APIServer pid=1) INFO 11-22 {:02}:{:02}:{:02} [loggers.py:257] Engine 000: Avg prompt throughput: 10.0 tokens/s, Avg generation throughput: 1.0 tokens/s, Running: {n} reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%",
        10 + seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

fn append(path: &Path, lines: std::ops::RangeInclusive<u32>) {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    for n in lines {
        writeln!(file, "{}", stats_line(n)).unwrap();
    }
}

/// When line `n` was written (UTC): 2026-11-22 10:00:00 + 10 n seconds.
fn time_of(n: u32) -> f64 {
    1_795_341_600.0 + 10.0 * f64::from(n)
}

/// `(lines read, prompt tokens)` once the agent shows line `last`, a second after it was
/// written. (The lines name no version, so their prompt tokens are vLLM 0.16+'s
/// locally computed ones.)
fn counters_at(agent: &RunningAgent, log: &Path, last: u32) -> (f64, f64) {
    let label = log.to_str().unwrap();
    agent.clock.set(time_of(last) + 1.0);
    let metrics = agent.wait_for(&format!("line {last}"), |m| {
        sample(m, "vllm:num_requests_running", &[("log", label)]) == Some(f64::from(last))
    });
    let read = sample(&metrics, "llmtail_lines_read_total", &[("log", label)]).unwrap();
    let tokens = sample(
        &metrics,
        "vllm:prompt_tokens_by_source_total",
        &[("log", label), ("source", "local_compute")],
    )
    .unwrap();
    (read, tokens)
}

/// A log and a state file in a temp dir, and the flags that name them.
struct WithStateFile {
    dir: tempfile::TempDir,
    log: std::path::PathBuf,
    state: std::path::PathBuf,
}

impl WithStateFile {
    fn new() -> WithStateFile {
        let dir = tempfile::tempdir().unwrap();
        let (log, state) = (dir.path().join("vllm.log"), dir.path().join("state.json"));
        WithStateFile { dir, log, state }
    }

    fn flags(&self) -> [&str; 4] {
        [
            "--log",
            self.log.to_str().unwrap(),
            "--state-file",
            self.state.to_str().unwrap(),
        ]
    }

    /// Lines 1..=20 read by an agent that then stops (and saves its state).
    fn first_run(&self) {
        append(&self.log, 1..=20);
        let agent = RunningAgent::start(&self.flags());
        assert_eq!(counters_at(&agent, &self.log, 20), (20.0, 2000.0));
        agent.stop().unwrap();
        assert!(self.state.exists(), "the state file is written at shutdown");
    }
}

#[test]
fn restarting_on_the_same_file_rebuilds_the_same_counters() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    append(&log, 1..=20);
    let first = RunningAgent::start(&["--log", log.to_str().unwrap()]);
    let before = counters_at(&first, &log, 20);
    first.stop().unwrap();
    let second = RunningAgent::start(&["--log", log.to_str().unwrap()]);
    assert_eq!(counters_at(&second, &log, 20), before);
    assert_eq!(before, (20.0, 2000.0));
}

#[test]
fn with_a_state_file_a_restart_goes_on_from_where_it_stopped() {
    let setup = WithStateFile::new();
    setup.first_run();
    append(&setup.log, 21..=30);
    let second = RunningAgent::start(&setup.flags());
    assert_eq!(
        counters_at(&second, &setup.log, 30),
        (30.0, 3000.0),
        "each line counted once"
    );
}

#[test]
fn a_log_rotated_while_the_agent_was_down_is_finished_before_the_new_one() {
    let setup = WithStateFile::new();
    setup.first_run();
    // While the agent is down: more lines, then a rename rotation and a new file.
    append(&setup.log, 21..=25);
    std::fs::rename(&setup.log, setup.dir.path().join("vllm.log.1")).unwrap();
    append(&setup.log, 26..=30);
    let second = RunningAgent::start(&setup.flags());
    assert_eq!(
        counters_at(&second, &setup.log, 30),
        (30.0, 3000.0),
        "each line counted once"
    );
    let metrics = second.metrics();
    assert_eq!(
        sample(&metrics, "llmtail_log_rotations_total", &[]),
        Some(1.0)
    );
}

#[test]
fn a_log_rotated_and_removed_while_down_loses_only_what_was_written_after_the_stop() {
    let setup = WithStateFile::new();
    setup.first_run();
    append(&setup.log, 21..=25);
    std::fs::remove_file(&setup.log).unwrap();
    append(&setup.log, 26..=30);
    let second = RunningAgent::start(&setup.flags());
    // Lines 21-25 are gone with their file; the counters go on from 20, they do not reset.
    assert_eq!(counters_at(&second, &setup.log, 30), (25.0, 2500.0));
}

#[test]
fn a_log_truncated_and_rewritten_while_down_is_read_again_from_its_start() {
    let setup = WithStateFile::new();
    setup.first_run();
    // copytruncate while the agent is down, then new lines of exactly the same lengths: the
    // saved offset lands on a line boundary of the new content, and only the file's first
    // bytes tell that it is not the content the offset was saved in.
    let rewritten: String = (1..=40)
        .map(|n| stats_line(n).replace("Waiting: 0", "Waiting: 1") + "\n")
        .collect();
    std::fs::write(&setup.log, rewritten).unwrap();
    let second = RunningAgent::start_at(&setup.flags(), time_of(40) + 1.0);
    let metrics = second.wait_for("line 40", |m| {
        sample(m, "vllm:num_requests_running", &[]) == Some(40.0)
    });
    assert_eq!(
        sample(&metrics, "llmtail_lines_read_total", &[]),
        Some(60.0),
        "20 before, 40 after"
    );
    assert_eq!(
        sample(&metrics, "vllm:num_requests_waiting", &[]),
        Some(1.0)
    );
}

#[test]
fn a_restart_in_the_middle_of_a_rotation_reads_nothing_twice() {
    let dir = tempfile::tempdir().unwrap();
    let (log, state) = (dir.path().join("vllm.log"), dir.path().join("state.json"));
    let flags = [
        "--log",
        log.to_str().unwrap(),
        "--state-file",
        state.to_str().unwrap(),
    ];
    append(&log, 1..=20);
    let agent = RunningAgent::start(&flags);
    counters_at(&agent, &log, 20);
    // The rotation happens while the agent runs; it stops before the old file's grace ends.
    std::fs::rename(&log, dir.path().join("vllm.log.1")).unwrap();
    append(&log, 21..=30);
    counters_at(&agent, &log, 30);
    agent.stop().unwrap();

    let again = RunningAgent::start(&flags);
    append(&log, 31..=32);
    let (read, tokens) = counters_at(&again, &log, 32);
    assert_eq!((read, tokens), (32.0, 3200.0));
}

#[test]
fn a_state_file_that_is_not_ours_is_ignored_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let (log, state) = (dir.path().join("vllm.log"), dir.path().join("state.json"));
    std::fs::write(&state, "garbage").unwrap();
    append(&log, 1..=3);
    let agent = RunningAgent::start(&[
        "--log",
        log.to_str().unwrap(),
        "--state-file",
        state.to_str().unwrap(),
    ]);
    assert_eq!(counters_at(&agent, &log, 3), (3.0, 300.0));
    agent.stop().unwrap();
    assert!(
        std::fs::read_to_string(&state).unwrap().starts_with('{'),
        "replaced by a real state file"
    );
}

/// The state file was written only when more lines came, so
/// after a burst and a quiet spell a `kill -9` restarted from before the burst (and a rotation
/// while down lost what followed the stale position). It is written a few seconds after the
/// last lines, with the agent still running.
#[test]
fn the_state_file_is_saved_after_the_last_lines_without_waiting_for_more() {
    let setup = WithStateFile::new();
    append(&setup.log, 1..=20);
    let agent = RunningAgent::start(&setup.flags());
    counters_at(&agent, &setup.log, 20);
    let saved_lines = || -> Option<u64> {
        let text = std::fs::read_to_string(&setup.state).ok()?;
        let json: serde_json::Value = serde_json::from_str(&text).ok()?;
        json["logs"][0]["io"]["lines_read"].as_u64()
    };
    let waited =
        crate::support::tail::wait_until(llmtail::pipeline::CHECKPOINT_INTERVAL * 3, || {
            saved_lines() == Some(20)
        });
    assert!(waited, "the state file says {:?} lines", saved_lines());
    agent.stop().unwrap();
}

/// Two agents given one `--state-file` saved their counters over each other's, and after a
/// rotation one resumed from the other's positions (a counter fell from 100 to 10). The second
/// now stops at start-up, naming the first and the fix, and leaves the file alone.
#[test]
fn a_second_agent_on_the_same_state_file_exits_2_naming_the_holder() {
    let setup = WithStateFile::new();
    append(&setup.log, 1..=20);
    let first = RunningAgent::start(&setup.flags());
    assert_eq!(counters_at(&first, &setup.log, 20), (20.0, 2000.0));

    let mut second = std::process::Command::new(env!("CARGO_BIN_EXE_llmtail"))
        .args(setup.flags())
        .args(["--web.listen-address", "127.0.0.1:0"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let exited = eventually(|| second.try_wait().unwrap().is_some());
    if !exited {
        let _ = second.kill();
    }
    let output = second.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        exited,
        "a second agent runs on the same state file: {stderr}"
    );
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let holder = format!(
        "--state-file {}: another llmtail (pid {}) uses it",
        setup.state.display(),
        std::process::id()
    );
    assert!(stderr.contains(&holder), "{stderr}");
    assert!(
        stderr.contains("fix: give each agent a state file of its own, e.g. --state-file"),
        "{stderr}"
    );

    first.stop().unwrap();
    let again = RunningAgent::start(&setup.flags());
    append(&setup.log, 21..=22);
    assert_eq!(counters_at(&again, &setup.log, 22), (22.0, 2200.0));
}
