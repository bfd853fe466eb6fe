//! No client can take `/metrics` away: idle connections, a client that sends half a header,
//! and SIGTERM while they hang on.

use std::io::Write;
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::agent::{eventually, http_get};
use crate::support::process::AgentProcess;

/// Starts the agent on an empty log with `flags`; returns it (not waited for: it has only
/// said where it serves) and its address.
pub(crate) fn spawn_agent(
    flags: &[&str],
) -> (AgentProcess, std::net::SocketAddr, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    std::fs::write(&log, "").unwrap();
    let mut command = AgentProcess::command(&["--log", log.to_str().unwrap()]);
    command.args(flags);
    let agent = AgentProcess::spawn(command);
    let addr = agent.addr;
    (agent, addr, dir)
}

/// [`spawn_agent`], once it is ready.
fn start_agent(flags: &[&str]) -> (AgentProcess, std::net::SocketAddr, tempfile::TempDir) {
    let (agent, addr, dir) = spawn_agent(flags);
    assert!(
        eventually(|| http_get(addr, "/-/ready", None).is_ok_and(|r| r.status == 200)),
        "never ready"
    );
    (agent, addr, dir)
}

/// Connections that each send one byte and stall took
/// every place (a place was taken once a client spoke), and a scraper waited behind them past
/// Prometheus' 10 s timeout; past the cap on waiting connections it was refused outright.
#[test]
fn clients_that_send_a_byte_and_stall_neither_hold_places_nor_lock_scrapers_out() {
    rlimit::increase_nofile_limit(u64::MAX).unwrap();
    // Two places, so 128 open connections at most: 200 stalled ones fill it.
    let (_agent, addr, _dir) = start_agent(&["--web.max-connections", "2"]);
    let stalled: Vec<TcpStream> = (0..200)
        .filter_map(|_| {
            let mut stream = TcpStream::connect(addr).ok()?;
            stream.write_all(b"G").ok()?;
            Some(stream)
        })
        .collect();
    for _ in 0..5 {
        let asked = Instant::now();
        let response = http_get(addr, "/metrics", None);
        assert!(
            response.as_ref().is_ok_and(|r| r.status == 200),
            "/metrics under {} stalled clients: {:?}",
            stalled.len(),
            response.map(|r| r.status)
        );
        assert!(
            asked.elapsed() < Duration::from_secs(2),
            "{:?}",
            asked.elapsed()
        );
    }
    drop(stalled);
}

#[test]
fn a_thousand_idle_connections_and_a_half_header_neither_block_metrics_nor_sigterm() {
    // The test itself holds 1,100 connections: raise its own descriptor limit, as the agent does.
    rlimit::increase_nofile_limit(u64::MAX).unwrap();
    let (mut agent, addr, _dir) = start_agent(&[]);

    let idle: Vec<TcpStream> = (0..1_100)
        .filter_map(|_| TcpStream::connect(addr).ok())
        .collect();
    assert!(
        idle.len() >= 1_000,
        "only {} connections opened",
        idle.len()
    );
    let mut half = TcpStream::connect(addr).unwrap();
    half.write_all(b"GET /metrics HTTP/1.1\r\nHost: llmtail\r\n")
        .unwrap();

    let asked = Instant::now();
    assert!(
        eventually(|| http_get(addr, "/metrics", None).is_ok_and(|r| r.status == 200)),
        "/metrics did not answer while {} connections were idle",
        idle.len()
    );
    eprintln!(
        "/metrics answered {:?} after the idle connections opened",
        asked.elapsed()
    );

    let (status, took) = agent.terminate();
    assert!(
        status.is_some_and(|s| s.success()) && took < Duration::from_secs(5),
        "SIGTERM took {took:?} with the connections still open (status {status:?})"
    );
    drop((idle, half));
}

/// SIGHUP (what logrotate scripts send meaning "reload")
/// ended the agent with its default action, without saving the state file.
#[test]
fn sighup_does_not_stop_the_agent() {
    // Spawned once it says it serves: its handlers are installed before it does.
    let (mut agent, addr, _dir) = spawn_agent(&[]);
    let hup = Command::new("kill")
        .args(["-HUP", &agent.child.id().to_string()])
        .status()
        .unwrap();
    assert!(hup.success());
    // The agent says it handled the signal; the default action would have ended it instead.
    assert!(
        agent.stderr.wait_for("SIGHUP").is_some(),
        "{}",
        agent.stderr.text()
    );
    assert!(
        agent.child.try_wait().unwrap().is_none(),
        "the agent exited"
    );
    assert!(http_get(addr, "/metrics", None).is_ok_and(|r| r.status == 200));
}
