//! How the binary behaves as an exporter is expected to: a start-up it cannot make exits 2
//! with the input and the fix, and output piped to a reader that has gone (`| head`) ends it
//! quietly, never with a panic.

use std::process::{Command, Output, Stdio};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/replay/vllm-0.8.4-v1-tp2.log"
);

fn llmtail() -> Command {
    Command::new(env!("CARGO_BIN_EXE_llmtail"))
}

/// A pipe whose reader is already gone: every write to it fails with `EPIPE`, as a write to
/// `| head` does once `head` has read its lines and exited.
fn closed_pipe() -> std::io::PipeWriter {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    writer
}

/// A port already in use exited 1, where a start-up error exits 2 (and the unit's
/// `RestartPreventExitStatus=2` keeps systemd from retrying every 2 s).
#[test]
fn a_port_already_in_use_stops_start_up_with_exit_code_2_and_the_fix() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let out = llmtail()
        .args(["--log", FIXTURE, "--web.listen-address", &address])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "cannot listen on {address} (--web.listen-address)"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("fix: another process listens on port"),
        "{stderr}"
    );
}

fn assert_no_panic(out: &Output, expected_code: i32) {
    assert_eq!(out.status.code(), Some(expected_code), "{out:?}");
}

/// `llmtail --config bad.toml --one-shot 2>&1 | head` panicked (exit 101): the error went to
/// a closed stderr through `eprintln!`.
#[test]
fn a_start_up_error_written_to_a_closed_stderr_still_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("bad.toml");
    std::fs::write(&config, "[web]\nlisten_adress = 1\n").unwrap();
    let out = llmtail()
        .args(["--config", config.to_str().unwrap(), "--one-shot"])
        .stdout(closed_pipe())
        .stderr(closed_pipe())
        .output()
        .unwrap();
    assert_no_panic(&out, 2);
}

/// `llmtail --one-shot --log F 2>&1 | head -1` panicked (exit 101) once the log lines found
/// stderr closed.
#[test]
fn a_one_shot_whose_stdout_and_stderr_are_closed_stops_quietly() {
    let out = llmtail()
        .args(["--one-shot", "--log", FIXTURE])
        .stdout(closed_pipe())
        .stderr(closed_pipe())
        .output()
        .unwrap();
    assert_no_panic(&out, 0);
}

/// `llmtail --one-shot --log F | head -1` exited 1 with "cannot write the metrics to stdout":
/// a reader that has what it wanted is no failure, as `cat` and ripgrep have it.
#[test]
fn a_one_shot_whose_stdout_is_closed_stops_quietly() {
    let out = llmtail()
        .args(["--one-shot", "--log", FIXTURE])
        .stdout(closed_pipe())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_no_panic(&out, 0);
    assert!(!stderr.contains("llmtail: "), "{stderr}");
}

/// The start-up log printed `address=Some(127.0.0.1:3913)`: log fields are plain values.
#[test]
fn the_start_up_log_prints_plain_values() {
    let mut command = llmtail();
    command.args(["--log", FIXTURE]);
    let mut agent = crate::support::process::AgentProcess::spawn(command);
    let addr = agent.addr;
    assert!(crate::support::agent::eventually(|| {
        crate::support::agent::http_get(addr, "/-/ready", None).is_ok_and(|r| r.status == 200)
    }));
    let (status, _) = agent.terminate();
    assert!(status.is_some_and(|s| s.success()));
    let stderr = agent.stderr.all();
    let serving = stderr
        .lines()
        .find(|l| l.contains("serving metrics"))
        .unwrap_or_else(|| panic!("no start-up line:\n{stderr}"));
    assert!(serving.contains(&format!("address={addr} ")), "{serving}");
    for debug_form in ["=Some(", "=None", "=Path(", "=\""] {
        assert!(!stderr.contains(debug_form), "{debug_form}:\n{stderr}");
    }
}
