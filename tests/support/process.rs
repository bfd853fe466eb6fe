//! Servers run as processes of their own (the agent's binary, Prometheus), each on a port it
//! binds itself: `127.0.0.1:0`, the address it got read from its own log line. A port found
//! free and then handed to a process is free only until someone else binds it, and the tests
//! run many at a time.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};

use super::agent::DEADLINE;

/// A child's standard error, read line by line on a thread of its own as it is written (the
/// child never blocks on a full pipe), kept for the test to wait on and read.
pub struct Stderr {
    shared: Arc<(Mutex<Lines>, Condvar)>,
    /// The line after the last one [`Stderr::wait_for`] found.
    next: usize,
}

#[derive(Default)]
struct Lines {
    lines: Vec<String>,
    closed: bool,
}

impl Stderr {
    /// Takes `child`'s piped stderr and reads it until the child closes it.
    pub fn of(child: &mut Child) -> Stderr {
        let pipe = child.stderr.take().expect("stderr piped");
        let shared = Arc::new((Mutex::new(Lines::default()), Condvar::new()));
        let writer = Arc::clone(&shared);
        std::thread::spawn(move || {
            let (lines, changed) = &*writer;
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                lines.lock().unwrap().lines.push(line);
                changed.notify_all();
            }
            lines.lock().unwrap().closed = true;
            changed.notify_all();
        });
        Stderr { shared, next: 0 }
    }

    /// The next line containing `text` after the last one found, once written; `None` if
    /// none comes within [`DEADLINE`] or the child closes its stderr first.
    pub fn wait_for(&mut self, text: &str) -> Option<String> {
        let (lines, changed) = &*self.shared;
        let mut guard = lines.lock().unwrap();
        let give_up = std::time::Instant::now() + DEADLINE;
        loop {
            if let Some(found) = guard.lines[self.next..]
                .iter()
                .position(|l| l.contains(text))
            {
                self.next += found + 1;
                return Some(guard.lines[self.next - 1].clone());
            }
            self.next = guard.lines.len();
            let left = give_up.saturating_duration_since(std::time::Instant::now());
            if guard.closed || left.is_zero() {
                return None;
            }
            guard = changed.wait_timeout(guard, left).unwrap().0;
        }
    }

    /// Everything written so far.
    pub fn text(&self) -> String {
        let lines = self.shared.0.lock().unwrap();
        lines.lines.iter().map(|l| format!("{l}\n")).collect()
    }

    /// Everything, once the child has closed its stderr (it exited), or after [`DEADLINE`].
    pub fn all(&self) -> String {
        let (lines, changed) = &*self.shared;
        let guard = lines.lock().unwrap();
        let _closed = changed
            .wait_timeout_while(guard, DEADLINE, |l| !l.closed)
            .unwrap();
        drop(_closed);
        self.text()
    }
}

/// The address after `address=` in `line`, in either of the forms the agent and Prometheus
/// log it (`address=127.0.0.1:40123`, `address=Some(127.0.0.1:40123)`).
fn address_in(line: &str) -> Option<SocketAddr> {
    let value = line.split("address=").nth(1)?.split_whitespace().next()?;
    let value = value.strip_prefix("Some(").unwrap_or(value);
    value.trim_end_matches(')').trim_matches('"').parse().ok()
}

/// Spawns `command` (a server told to listen on `127.0.0.1:0`) with its stderr piped, and
/// waits for the line containing `listening` that says where it listens. Panics with its
/// stderr if it says nothing of the kind.
pub fn spawn_listening(mut command: Command, listening: &str) -> (Child, SocketAddr, Stderr) {
    let mut child = command
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    let mut stderr = Stderr::of(&mut child);
    let Some(addr) = stderr.wait_for(listening).as_deref().and_then(address_in) else {
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "{command:?} never said where it listens (\"{listening}\"):\n{}",
            stderr.all()
        );
    };
    (child, addr, stderr)
}

/// The agent's own binary, serving on a port it bound: `--web.listen-address 127.0.0.1:0`
/// is added to `command`'s flags (so it must name none). Killed when dropped.
pub struct AgentProcess {
    pub child: Child,
    pub addr: SocketAddr,
    pub stderr: Stderr,
}

impl AgentProcess {
    /// `llmtail` with `args` (and `--web.listen-address 127.0.0.1:0`).
    pub fn command(args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_llmtail"));
        command.args(args);
        command
    }

    /// [`AgentProcess::spawn`], once `/-/ready` answers 200.
    pub fn start(command: Command) -> AgentProcess {
        let agent = AgentProcess::spawn(command);
        assert!(
            super::agent::eventually(|| super::agent::http_get(agent.addr, "/-/ready", None)
                .is_ok_and(|r| r.status == 200)),
            "the agent never became ready:\n{}",
            agent.stderr.text()
        );
        agent
    }

    /// Starts `command` and waits for the agent to say where it serves; not for it to be
    /// ready.
    pub fn spawn(mut command: Command) -> AgentProcess {
        command.args(["--web.listen-address", "127.0.0.1:0"]);
        let (child, addr, stderr) = spawn_listening(command, "serving metrics");
        AgentProcess {
            child,
            addr,
            stderr,
        }
    }

    /// Its `/metrics` body (empty if it does not answer).
    pub fn metrics(&self) -> String {
        super::agent::http_get(self.addr, "/metrics", None)
            .map(|r| r.body)
            .unwrap_or_default()
    }

    /// Polls `/metrics` until `condition` holds; panics with the last exposition otherwise.
    pub fn wait_for(&self, what: &str, condition: impl FnMut(&str) -> bool) -> String {
        super::agent::wait_for_metrics(what, || self.metrics(), condition)
    }

    /// Sends SIGTERM and waits (up to [`DEADLINE`]) for the agent to exit: how it exited, if
    /// it did, and how long that took.
    pub fn terminate(&mut self) -> (Option<std::process::ExitStatus>, std::time::Duration) {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let stopping = std::time::Instant::now();
        let mut status = None;
        super::agent::eventually(|| {
            status = self.child.try_wait().unwrap();
            status.is_some()
        });
        (status, stopping.elapsed())
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A loopback port held by a socket that is bound but not listening: connections to it are
/// refused, as to a server that is down, and no one else is given it. A server told to listen
/// on it later can (both sides set `SO_REUSEADDR`, which Linux allows while neither listens:
/// Go's listeners, hence Prometheus, always set it): the test drops this once it does.
pub struct HeldPort {
    socket: socket2::Socket,
    pub addr: SocketAddr,
}

impl HeldPort {
    pub fn new() -> HeldPort {
        use socket2::{Domain, Socket, Type};
        let socket = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
        socket.set_reuse_address(true).unwrap();
        socket
            .bind(&SocketAddr::from(([127, 0, 0, 1], 0)).into())
            .unwrap();
        let addr = socket.local_addr().unwrap().as_socket().unwrap();
        HeldPort { socket, addr }
    }
}
