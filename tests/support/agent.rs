//! Running the agent in-process on `127.0.0.1:0`, scraping it, and reading samples.

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use clap::Parser;
use llmtail::cli::Cli;
use llmtail::clock::Clock;
use llmtail::config::Settings;

/// What time it is for an agent under test, unless the test says otherwise:
/// 2026-11-22T13:25:05Z, a few seconds after the `11-22 13:25:01` lines the tests write, so
/// an engine whose last line is that one is up. (The system clock would make every engine in
/// these fixed-date lines overdue, hence down.)
pub const TESTS_NOW: f64 = 1_795_353_905.0;

/// An agent's clock that the test sets: time passes when the test says so.
#[derive(Clone)]
pub struct TestClock(std::sync::Arc<std::sync::atomic::AtomicU64>);

impl TestClock {
    pub fn at(seconds: f64) -> TestClock {
        TestClock(std::sync::Arc::new(std::sync::atomic::AtomicU64::new(
            seconds.to_bits(),
        )))
    }

    pub fn set(&self, seconds: f64) {
        self.0
            .store(seconds.to_bits(), std::sync::atomic::Ordering::SeqCst);
    }

    fn clock(&self) -> Clock {
        let now = self.0.clone();
        Clock::new(move || f64::from_bits(now.load(std::sync::atomic::Ordering::SeqCst)))
    }
}

/// How long any condition in these tests may take before the test fails.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// Polls `condition` until it holds or [`DEADLINE`] passes; returns whether it held.
pub fn eventually(mut condition: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < DEADLINE {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    condition()
}

/// Scrapes with `scrape` until `condition` holds on the exposition; panics with the last one
/// otherwise, saying what was waited for.
pub fn wait_for_metrics(
    what: &str,
    mut scrape: impl FnMut() -> String,
    mut condition: impl FnMut(&str) -> bool,
) -> String {
    let mut last = String::new();
    let held = eventually(|| {
        last = scrape();
        condition(&last)
    });
    assert!(
        held,
        "waited {DEADLINE:?} for {what}; last /metrics:\n{last}"
    );
    last
}

/// An HTTP response, as much of it as the tests look at.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub content_type: String,
    /// The status line and headers, as sent.
    pub head: String,
    pub body: String,
}

impl Response {
    /// The value of header `name` (any case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// A minimal HTTP/1.1 GET: enough for our own server, no client crate needed.
pub fn http_get(addr: SocketAddr, path: &str, accept: Option<&str>) -> std::io::Result<Response> {
    let accept = accept
        .map(|a| format!("Accept: {a}\r\n"))
        .unwrap_or_default();
    http_request(addr, "GET", path, &accept)
}

/// A minimal HTTP/1.1 POST without a body (the lifecycle endpoints take none).
pub fn http_post(addr: SocketAddr, path: &str) -> std::io::Result<Response> {
    http_request(addr, "POST", path, "Content-Length: 0\r\n")
}

/// A GET with basic auth from the loopback address `source` (127.0.0.2, ...), as a client on
/// another host would send it.
pub fn http_get_from(
    source: IpAddr,
    addr: SocketAddr,
    path: &str,
    (user, password): (&str, &str),
) -> std::io::Result<Response> {
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    let stream = connect_from(source, addr)?;
    request_on(
        stream,
        addr,
        "GET",
        path,
        &format!("Authorization: Basic {encoded}\r\n"),
    )
}

/// Sends `method path` with `headers` (each ended by CRLF) and reads the whole response.
fn http_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &str,
) -> std::io::Result<Response> {
    let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    request_on(stream, addr, method, path, headers)
}

fn request_on(
    mut stream: TcpStream,
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &str,
) -> std::io::Result<Response> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{headers}Connection: close\r\n\r\n"
    )?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    Ok(parse_response(&raw))
}

/// Reads a whole HTTP/1.1 response (the connection closed after it).
pub fn parse_response(raw: &[u8]) -> Response {
    let text = String::from_utf8_lossy(raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let content_type = head
        .lines()
        .find_map(|l| {
            l.strip_prefix("content-type: ")
                .or_else(|| l.strip_prefix("Content-Type: "))
        })
        .unwrap_or("")
        .to_string();
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_string()
    };
    Response {
        status,
        content_type,
        head: head.to_string(),
        body,
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// The value of the sample `name` whose labels include all of `labels`.
pub fn sample(metrics: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    metrics
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let (series_name, series_labels) = match series.split_once('{') {
                Some((n, rest)) => (n, rest.trim_end_matches('}')),
                None => (series, ""),
            };
            if series_name != name {
                return None;
            }
            let all = labels
                .iter()
                .all(|(k, v)| series_labels.contains(&format!("{k}=\"{v}\"")));
            all.then(|| value.parse().ok()).flatten()
        })
}

/// [`sample`], for a sample that must be there: panics with the whole exposition if not.
pub fn expect_sample(metrics: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    sample(metrics, name, labels).unwrap_or_else(|| panic!("no {name} {labels:?} in:\n{metrics}"))
}

/// A TCP connection to `addr` from `source`, any address of 127.0.0.0/8: how a test stands in
/// for clients on other hosts.
pub fn connect_from(source: IpAddr, addr: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
    socket.bind(&SocketAddr::new(source, 0).into())?;
    socket.connect_timeout(&addr.into(), Duration::from_secs(5))?;
    Ok(socket.into())
}

/// A program on the `PATH`, if it is installed.
pub fn on_path(name: &str) -> Option<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// The agent, serving on an ephemeral loopback port until dropped.
pub struct RunningAgent {
    pub addr: SocketAddr,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<anyhow::Result<()>>>,
    /// What time it is for the agent.
    pub clock: TestClock,
    /// The web configuration it serves with (`--web.config.file`), to reload.
    pub web_config: std::sync::Arc<llmtail::exposition::web_config::WebConfigHandle>,
}

impl RunningAgent {
    /// Starts the agent with these flags (`--web.listen-address` is chosen here), at
    /// [`TESTS_NOW`].
    pub fn start(args: &[&str]) -> RunningAgent {
        RunningAgent::start_at(args, TESTS_NOW)
    }

    /// Starts the agent with these flags, its clock at `now` (seconds since the epoch).
    /// Times without a zone are read as UTC unless the test says otherwise: the tests' lines and
    /// clocks are in UTC, whatever the machine's zone.
    pub fn start_at(args: &[&str], now: f64) -> RunningAgent {
        let agent = RunningAgent::launch(args, now);
        assert!(
            eventually(|| agent.get("/-/ready").is_ok_and(|r| r.status == 200)),
            "the agent never became ready"
        );
        agent
    }

    /// Starts the agent without waiting for it to answer plain HTTP (over TLS it never will):
    /// the caller polls in its own way.
    pub fn launch(args: &[&str], now: f64) -> RunningAgent {
        let mut argv = vec!["llmtail"];
        argv.extend_from_slice(args);
        if !args.contains(&"--log-timezone") {
            argv.extend_from_slice(&["--log-timezone", "UTC"]);
        }
        let settings = Settings::from_cli(Cli::try_parse_from(argv).expect("flags parse"))
            .expect("settings are valid");
        let web_config = std::sync::Arc::clone(&settings.web_config);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let test_clock = TestClock::at(now);
        let clock = test_clock.clock();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener)?;
                llmtail::run::serve_on(&settings, listener, clock, async {
                    let _ = rx.await;
                })
                .await
            })
        });
        RunningAgent {
            addr,
            shutdown: Some(tx),
            thread: Some(thread),
            clock: test_clock,
            web_config,
        }
    }

    pub fn get(&self, path: &str) -> std::io::Result<Response> {
        http_get(self.addr, path, None)
    }

    pub fn post(&self, path: &str) -> std::io::Result<Response> {
        http_post(self.addr, path)
    }

    /// Whether the agent has stopped (`serve_on` returned).
    pub fn has_stopped(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    pub fn metrics(&self) -> String {
        self.get("/metrics").map(|r| r.body).unwrap_or_default()
    }

    /// Polls `/metrics` until `condition` holds; panics with the last exposition otherwise.
    pub fn wait_for(&self, what: &str, condition: impl FnMut(&str) -> bool) -> String {
        wait_for_metrics(what, || self.metrics(), condition)
    }

    /// Stops the agent and fails the test unless it stops within the deadline: nothing it
    /// did (`after`) may leave it waiting on a blocked read or a running check.
    pub fn stops_promptly(self, after: &str) {
        let stopping = std::thread::spawn(move || self.stop());
        assert!(
            eventually(|| stopping.is_finished()),
            "the agent did not stop after {after}"
        );
        stopping.join().unwrap().unwrap();
    }

    /// Stops the agent and returns what `serve_on` returned.
    pub fn stop(mut self) -> anyhow::Result<()> {
        self.shutdown.take().map(|tx| tx.send(()));
        self.thread
            .take()
            .expect("running")
            .join()
            .expect("agent thread panicked")
    }
}

impl Drop for RunningAgent {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
