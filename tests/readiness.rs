//! `/-/ready` tells the truth: 503 while a log given cannot be opened, with the path, why and
//! the fix on one line each, and 200 once every log is open and read. A log in which no line
//! is one llmtail reads says so, serving and `--one-shot` alike.

use std::process::Command;

use crate::support::agent::{eventually, http_get, RunningAgent, TESTS_NOW};
use crate::support::process::AgentProcess;
use crate::support::writer::append_lines as append;

const STATS_LINE: &str = "(APIServer pid=812) INFO 11-22 13:25:01 [loggers.py:257] Engine 000: Avg prompt throughput: 1245.3 tokens/s, Avg generation throughput: 312.8 tokens/s, Running: 14 reqs, Waiting: 2 reqs, GPU KV cache usage: 63.1%, Prefix cache hit rate: 41.7%";

/// The body of `/-/ready` once it answers `status` with a body that `says` holds of.
fn ready_when(agent: &RunningAgent, status: u16, says: impl Fn(&str) -> bool) -> String {
    let mut body = String::new();
    let answered = eventually(|| {
        agent.get("/-/ready").is_ok_and(|r| {
            body = r.body;
            r.status == status && says(&body)
        })
    });
    assert!(
        answered,
        "/-/ready never answered {status} as expected; last:\n{body}"
    );
    body
}

/// A typo'd `--log` answered 200 "Ready" forever: readiness only waited for the logs that
/// existed to be read.
#[test]
fn a_log_that_does_not_exist_keeps_the_agent_unready_and_says_which_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let read = dir.path().join("vllm.log");
    append(&read, &[STATS_LINE]);
    let typo = dir.path().join("vlm.log");
    let glob = format!("{}/*.txt", dir.path().display());
    let agent = RunningAgent::launch(
        &[
            "--log",
            read.to_str().unwrap(),
            "--log",
            typo.to_str().unwrap(),
            "--log",
            &glob,
        ],
        TESTS_NOW,
    );

    let body = ready_when(&agent, 503, |body| {
        body.contains("vlm.log") && body.contains("*.txt")
    });
    let lines: Vec<&str> = body.lines().collect();
    assert!(
        lines.contains(&format!("{}: does not exist; fix: check the path; it is waited for and read when it appears", typo.display()).as_str()),
        "{body}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&format!("{glob}: matches no file; fix: check the pattern"))),
        "{body}"
    );
    assert!(!body.contains(read.to_str().unwrap()), "{body}");
    let page = http_get(agent.addr, "/", None).unwrap().body;
    let first_warning = page.lines().find(|l| l.starts_with("WARNING"));
    assert_eq!(
        first_warning,
        Some(format!("WARNING {}: does not exist; fix: check the path; it is waited for and read when it appears", typo.display()).as_str()),
        "{page}"
    );

    append(&typo, &[STATS_LINE]);
    let body = ready_when(&agent, 503, |body| !body.contains("vlm.log"));
    assert!(body.contains("*.txt: matches no file"), "{body}");
    append(&dir.path().join("a.txt"), &[STATS_LINE]);
    assert_eq!(ready_when(&agent, 200, |_| true), "Ready\n");
}

/// A typo'd `--log` was one INFO line among the start-up's.
#[test]
fn a_log_that_does_not_exist_is_a_warning_at_start_up() {
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("vlm.log");
    let mut agent = AgentProcess::spawn(AgentProcess::command(&["--log", typo.to_str().unwrap()]));
    let addr = agent.addr;
    assert!(eventually(
        || http_get(addr, "/-/ready", None).is_ok_and(|r| r.status == 503)
    ));
    let (status, _) = agent.terminate();
    assert!(status.is_some_and(|s| s.success()));
    let stderr = agent.stderr.all();
    let warning = stderr
        .lines()
        .find(|l| l.contains("WARN") && l.contains(typo.to_str().unwrap()))
        .unwrap_or_else(|| panic!("no warning names {}:\n{stderr}", typo.display()));
    assert!(
        warning.contains("does not exist") && warning.contains("waited for"),
        "{warning}"
    );
}

/// Lines that are not an engine's, however many: as many as the serving warning waits for.
fn lines_of_another_program(log: &std::path::Path, count: usize) {
    let lines: Vec<String> = (0..count)
        .map(|i| format!("2026-11-22 13:20:01 nginx: GET /healthz {i} 200"))
        .collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    append(log, &lines);
}

/// A log of another program (or an engine with its stats logging off) gave no hint: a counter
/// of unmatched lines, nothing on the landing page.
#[test]
fn a_log_with_ten_thousand_lines_and_none_recognised_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("app.log");
    lines_of_another_program(&log, 9_999);
    let agent = RunningAgent::start(&["--log", log.to_str().unwrap()]);
    let page = http_get(agent.addr, "/", None).unwrap().body;
    assert!(!page.contains("none recognised"), "{page}");

    lines_of_another_program(&log, 1);
    let mut page = String::new();
    assert!(
        eventually(|| {
            page = http_get(agent.addr, "/", None).unwrap().body;
            page.contains("10000 lines read and none recognised")
        }),
        "{page}"
    );
    assert!(
        page.contains("vLLM") && page.contains("SGLang") && page.contains("docs/REFERENCE.md"),
        "{page}"
    );
}

/// `--one-shot` on a log with no line llmtail reads exited 0 with an unmatched counter and no
/// word of why every engine series was missing.
#[test]
fn a_one_shot_over_a_log_with_nothing_recognised_says_so_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("app.log");
    lines_of_another_program(&log, 3);
    let out = Command::new(env!("CARGO_BIN_EXE_llmtail"))
        .args(["--one-shot", "--log", log.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("3 lines read and none recognised") && stderr.contains("docs/REFERENCE.md"),
        "{stderr}"
    );

    let engine_log = dir.path().join("vllm.log");
    append(&engine_log, &[STATS_LINE]);
    lines_of_another_program(&engine_log, 3);
    let out = Command::new(env!("CARGO_BIN_EXE_llmtail"))
        .args(["--one-shot", "--log", engine_log.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("none recognised"), "{stderr}");
}
