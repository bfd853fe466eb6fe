//! Push: the agent sends its series to a real Prometheus started with
//! `--web.enable-remote-write-receiver`, as from a host that cannot be scraped. What arrives is
//! what a scrape returns, a receiver that is down for a while loses nothing the queue holds,
//! and a receiver that refuses a push (4xx) is not asked again.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};

use crate::prometheus::{encode, tool, Prometheus};
use crate::support::agent::{eventually, sample, RunningAgent};
use crate::support::process::HeldPort;
use crate::support::writer::append_lines;

const FIXTURE: &str = "fixtures/replay/vllm-0.14.1-dp2-engines.log";

/// The fixture log, copied where the test may append to it.
fn fixture_copy(dir: &tempfile::TempDir) -> String {
    let log = dir.path().join("vllm.log");
    std::fs::copy(FIXTURE, &log).unwrap();
    log.to_str().unwrap().to_string()
}

fn write_url(addr: SocketAddr) -> String {
    format!("http://{addr}/api/v1/write")
}

/// The agent following `log` and pushing to `url` every `interval`, with `more` flags.
fn pushing(log: &str, url: &str, interval: &str, more: &[&str]) -> RunningAgent {
    let mut args = vec![
        "--log",
        log,
        "--remote-write.url",
        url,
        "--remote-write.interval",
        interval,
    ];
    args.extend_from_slice(more);
    RunningAgent::start(&args)
}

/// The agent's own value of a counter of the queue for `url`.
fn queue_counter(agent: &RunningAgent, name: &str, url: &str) -> Option<f64> {
    sample(&agent.metrics(), name, &[("url", url)])
}

#[test]
fn pushed_series_read_back_from_prometheus_with_the_values_a_scrape_returns() {
    let Some(prometheus) = tool("prometheus") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = fixture_copy(&dir);
    let receiver = Prometheus::receiving(&prometheus);
    let url = write_url(receiver.addr);
    let agent = pushing(&log, &url, "1s", &["--label", "instance=gpu-host-1"]);

    // The values the replay golden holds, and the agent's own scrape, arrive as they are.
    let engine_0 = "{engine=\"0\",model_name=\"qwen3-30b\",instance=\"gpu-host-1\"}";
    receiver.wait_for(&format!("vllm:prompt_tokens_total{engine_0}"), 98828.5);
    receiver.wait_for(&format!("vllm:generation_tokens_total{engine_0}"), 30202.4);
    receiver.wait_for(&format!("vllm:num_preemptions_total{engine_0}"), 3.0);
    let scraped = agent.metrics();
    for (name, labels) in [
        ("vllm:generation_tokens_total", &[("engine", "1")][..]),
        ("llmtail_vllm_engine_up", &[("engine", "1")]),
        ("llmtail_lines_read_total", &[]),
        ("llmtail_lines_parsed_total", &[("grammar", "vllm_stats")]),
        ("llmtail_log_offset_bytes", &[]),
    ] {
        let value = sample(&scraped, name, labels).unwrap_or_else(|| panic!("{name}"));
        let selector: Vec<String> = labels
            .iter()
            .map(|(n, v)| format!("{n}=\"{v}\""))
            .chain(["instance=\"gpu-host-1\"".to_string()])
            .collect();
        receiver.wait_for(&format!("{name}{{{}}}", selector.join(",")), value);
    }
    // The --label goes on the agent's own series too (a scrape does not put it there), and
    // the queue's series say how the pushes fare.
    receiver.wait_for("llmtail_build_info{instance=\"gpu-host-1\"}", 1.0);
    receiver.wait_for(
        &format!("llmtail_remote_write_samples_dropped_total{{url=\"{url}\"}}"),
        0.0,
    );
    assert!(queue_counter(&agent, "llmtail_remote_write_samples_sent_total", &url).unwrap() > 0.0);
    // HELP/TYPE sent as metadata are not what 2.42 keeps (its receiver stores samples only),
    // so they are checked in the unit tests; the series are all there is to check here.
    assert!(receiver
        .api("/api/v1/series?match[]=%7Binstance%3D%22gpu-host-1%22%7D")
        .is_some_and(|body| body.contains("llmtail_remote_write_queue_samples")));
}

/// A receiver that is down for a while loses nothing within the queue's bound: the rounds
/// collected while it was down (1 s rounds here, so 10 of them, about 800 samples of
/// the 100,000 a queue holds) arrive, in order, when it is back.
#[test]
fn a_receiver_that_was_down_gets_the_rounds_of_the_outage() {
    const OUTAGE: std::time::Duration = std::time::Duration::from_secs(10);
    let Some(prometheus) = tool("prometheus") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = fixture_copy(&dir);
    // Down: the port is held, so nothing else takes it, but nothing listens.
    let receiver_port = HeldPort::new();
    let url = write_url(receiver_port.addr);
    let agent = pushing(&log, &url, "1s", &["--label", "instance=gpu-host-1"]);
    let failed = |agent: &RunningAgent| {
        queue_counter(agent, "llmtail_remote_write_samples_failed_total", &url).unwrap_or(0.0)
    };
    assert!(
        eventually(|| failed(&agent) > 0.0),
        "nothing listens: pushes fail"
    );
    let outage = std::time::Instant::now();

    // Two lines while the receiver is down: 40 lines read, then 41, each value in rounds
    // that exist only in the queue.
    let line = "(APIServer pid=1) INFO:     10.12.0.5:52006 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK";
    for lines_read in [40.0, 41.0] {
        append_lines(log.as_ref(), &[line]);
        let queued = |agent: &RunningAgent| {
            queue_counter(agent, "llmtail_remote_write_queue_samples", &url).unwrap_or(0.0)
        };
        agent.wait_for("the line read", |m| {
            sample(m, "llmtail_lines_read_total", &[]) == Some(lines_read)
        });
        let before = queued(&agent);
        assert!(
            eventually(|| queued(&agent) > before),
            "a round with {lines_read} lines read is queued"
        );
    }
    assert!(failed(&agent) > 0.0);
    // Down for OUTAGE in all, so that ten rounds wait in the queue: what is checked is that
    // they all arrive, not how long anything took.
    if let Some(rest) = OUTAGE.checked_sub(outage.elapsed()) {
        std::thread::sleep(rest);
    }

    let receiver = Prometheus::receiving_on(&prometheus, receiver_port);
    receiver.wait_for("llmtail_lines_read_total{instance=\"gpu-host-1\"}", 41.0);
    // One sample per round of the outage (a round a second; at least two thirds of them, so
    // that a loaded machine's late rounds do not fail the test).
    receiver.wait_for_at_least(
        "count_over_time(llmtail_lines_read_total{instance=\"gpu-host-1\"}[1h])",
        (OUTAGE.as_secs() * 2 / 3) as f64,
    );
    // Every value the counter had while the receiver was down is in Prometheus' raw samples.
    let raw = |promql: &str| {
        receiver
            .api(&format!("/api/v1/query?query={}", encode(promql)))
            .unwrap_or_default()
    };
    let samples = raw("llmtail_lines_read_total[1h]");
    for value in ["\"39\"", "\"40\"", "\"41\""] {
        assert!(samples.contains(value), "no sample {value} in {samples}");
    }
    assert_eq!(
        queue_counter(&agent, "llmtail_remote_write_samples_dropped_total", &url),
        Some(0.0)
    );
}

/// A receiver answering every push with 400: each push is sent once (refused, counted as
/// dropped), never retried, and carries the remote-write 1.0 headers and the entry's own
/// `headers` (a tenant, as Mimir wants it).
#[test]
fn a_push_refused_with_400_is_dropped_counted_and_not_sent_again() {
    let dir = tempfile::tempdir().unwrap();
    let log = fixture_copy(&dir);
    let receiver = Refusing::start();
    let url = write_url(receiver.addr);
    let config = dir.path().join("llmtail.toml");
    std::fs::write(
        &config,
        format!(
            "[[remote_write]]\nurl = \"{url}\"\nheaders = {{ \"X-Scope-OrgID\" = \"team-a\" }}\n"
        ),
    )
    .unwrap();
    let agent = RunningAgent::start(&[
        "--log",
        &log,
        "--config",
        config.to_str().unwrap(),
        "--remote-write.interval",
        "1s",
    ]);
    assert!(
        eventually(|| receiver.requests.lock().unwrap().len() >= 3),
        "three rounds pushed"
    );
    let dropped = |agent: &RunningAgent| {
        queue_counter(agent, "llmtail_remote_write_samples_dropped_total", &url).unwrap_or(0.0)
    };
    assert!(eventually(|| dropped(&agent) > 0.0));
    assert_eq!(
        queue_counter(&agent, "llmtail_remote_write_samples_failed_total", &url),
        Some(0.0),
        "a refusal is not a failure to retry"
    );
    let landing = agent.get("/").unwrap().body;
    assert!(
        landing.contains("Remote write") && landing.contains(&url),
        "{landing}"
    );
    drop(agent);

    let requests = receiver.requests.lock().unwrap().clone();
    let mut timestamps = Vec::new();
    for request in &requests {
        for header in [
            "content-encoding: snappy",
            "content-type: application/x-protobuf",
            "x-prometheus-remote-write-version: 0.1.0",
            "user-agent: llmtail/",
            "x-scope-orgid: team-a",
        ] {
            assert!(
                request.head.contains(header),
                "{header} in\n{}",
                request.head
            );
        }
        let write = llmtail::remote_write::prompb::decode(&request.body).unwrap();
        timestamps.push(write.timeseries[0].samples[0].timestamp);
    }
    let mut distinct = timestamps.clone();
    distinct.dedup();
    assert_eq!(
        distinct, timestamps,
        "each request a new round: none sent twice"
    );
}

#[derive(Clone)]
struct Request {
    /// Header lines, lower-cased.
    head: String,
    body: Vec<u8>,
}

/// An HTTP server on a loopback port that answers every request with 400 and keeps them.
struct Refusing {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl Refusing {
    fn start() -> Refusing {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let requests: Arc<Mutex<Vec<Request>>> = Arc::default();
        let kept = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let kept = Arc::clone(&kept);
                std::thread::spawn(move || answer_400(stream, &kept));
            }
        });
        Refusing { addr, requests }
    }
}

/// Reads requests on one keep-alive connection, answering each with 400.
fn answer_400(stream: std::net::TcpStream, kept: &Mutex<Vec<Request>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut head = String::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
            head.push_str(&line.to_ascii_lowercase());
        }
        let length = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length: "))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        kept.lock().unwrap().push(Request { head, body });
        let answer = "out of order sample\n";
        let _ = write!(
            writer,
            "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{answer}",
            answer.len()
        );
    }
}

/// The first round is pushed as soon as the log's content is read, not an interval later; a
/// stop (SIGTERM, `/-/quit`) pushes one last round after the reader's last line, so lines
/// written since the last interval still arrive.
#[test]
fn the_first_round_is_pushed_once_the_log_is_read_and_a_stop_pushes_the_last_lines() {
    let Some(prometheus) = tool("prometheus") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = fixture_copy(&dir);
    let receiver = Prometheus::receiving(&prometheus);
    let url = write_url(receiver.addr);
    // No round falls due while the test runs but the first, taken once the log is read.
    let agent = pushing(&log, &url, "1h", &[]);
    receiver.wait_for("llmtail_lines_read_total", 39.0);
    let line = "(APIServer pid=1) INFO:     10.12.0.5:52006 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK";
    append_lines(log.as_ref(), &[line]);
    agent.wait_for("the line read", |m| {
        sample(m, "llmtail_lines_read_total", &[]) == Some(40.0)
    });
    agent.stop().unwrap();
    receiver.wait_for("llmtail_lines_read_total", 40.0);
}

/// The config file's TLS and basic auth against a Prometheus that requires both (its own
/// `--web.config.file`): the right password over TLS is stored, a wrong one is refused (401),
/// dropped and counted, and never retried.
#[test]
fn pushes_over_tls_with_basic_auth_reach_a_prometheus_that_requires_both() {
    use crate::support::tls::{Ca, HttpsClient};
    let Some(prometheus) = tool("prometheus") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let log = fixture_copy(&dir);
    let ca = Ca::new("llmtail test CA");
    ca.server().write(dir.path(), "server");
    std::fs::write(path("ca.crt"), &ca.pem).unwrap();
    std::fs::write(path("password"), "s3cret\n").unwrap();
    std::fs::write(path("wrong"), "guess\n").unwrap();
    let hash = bcrypt::hash("s3cret", 4).unwrap();
    std::fs::write(
        path("web.yml"),
        format!("tls_server_config:\n  cert_file: {}\n  key_file: {}\nbasic_auth_users:\n  llmtail: {hash}\n", path("server.crt"), path("server.key")),
    )
    .unwrap();
    let web_config = format!("--web.config.file={}", path("web.yml"));
    let receiver = Prometheus::start(
        &prometheus,
        "global: {}\n",
        &["--web.enable-remote-write-receiver", &web_config],
    );
    let addr = receiver.addr;
    let (good, bad) = (
        format!("https://localhost:{}/api/v1/write", addr.port()),
        format!("https://127.0.0.1:{}/api/v1/write", addr.port()),
    );
    let entry = |url: &str, password: &str| {
        format!(
            "[[remote_write]]\nurl = \"{url}\"\nbasic_auth = {{ username = \"llmtail\", password_file = \"{}\" }}\ntls_config = {{ ca_file = \"{}\" }}\n",
            path(password),
            path("ca.crt")
        )
    };
    std::fs::write(
        path("llmtail.toml"),
        format!(
            "remote_write_interval = \"1s\"\n[labels]\ninstance = \"gpu-host-1\"\n[[log]]\npath = \"{log}\"\n{}{}",
            entry(&good, "password"),
            entry(&bad, "wrong")
        ),
    )
    .unwrap();
    // Up before the agent starts: a push before it listens would fail and be retried.
    let client = HttpsClient::trusting(&ca, None);
    let user = Some(("llmtail", "s3cret"));
    assert!(eventually(|| client
        .get(addr, "/-/ready", user)
        .is_ok_and(|r| r.status == 200)));
    let agent = RunningAgent::start(&["--config", &path("llmtail.toml")]);

    let query = encode("llmtail_lines_read_total{instance=\"gpu-host-1\"}");
    let mut last = String::new();
    let stored = eventually(|| {
        last = client
            .get(
                addr,
                &format!("/api/v1/query?query={query}"),
                Some(("llmtail", "s3cret")),
            )
            .map(|r| r.body)
            .unwrap_or_default();
        last.contains("\"39\"]")
    });
    assert!(stored, "the pushed lines_read_total, last answer: {last}");
    let dropped = |agent: &RunningAgent| {
        queue_counter(agent, "llmtail_remote_write_samples_dropped_total", &bad).unwrap_or(0.0)
    };
    assert!(
        eventually(|| dropped(&agent) > 0.0),
        "the wrong password is refused"
    );
    let metrics = agent.metrics();
    assert_eq!(
        sample(
            &metrics,
            "llmtail_remote_write_samples_sent_total",
            &[("url", &bad)]
        ),
        Some(0.0)
    );
    assert_eq!(
        sample(
            &metrics,
            "llmtail_remote_write_samples_failed_total",
            &[("url", &bad)]
        ),
        Some(0.0)
    );
    assert_eq!(
        sample(
            &metrics,
            "llmtail_remote_write_samples_dropped_total",
            &[("url", &good)]
        ),
        Some(0.0)
    );
}

/// A series that leaves the exposition ends in Prometheus at once, as a scraped one does: an
/// engine that falls silent is judged down and its gauges are hidden, and the push marks them
/// stale rather than letting them answer with their last value for five minutes.
#[test]
fn a_gauge_hidden_when_its_engine_goes_down_is_marked_stale() {
    let Some(prometheus) = tool("prometheus") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    std::fs::write(&log, crate::prometheus::LOG).unwrap();
    let receiver = Prometheus::receiving(&prometheus);
    let agent = pushing(log.to_str().unwrap(), &write_url(receiver.addr), "1s", &[]);
    receiver.wait_for("vllm:num_requests_running{engine=\"0\"}", 14.0);
    // An hour without a stats line: both engines are overdue, so down.
    agent.clock.set(crate::support::agent::TESTS_NOW + 3600.0);
    receiver.wait_for_none("vllm:num_requests_running");
    // Counters stay, as they do in a scrape.
    receiver.wait_for("vllm:prompt_tokens_total{engine=\"0\"}", 12453.0);
}
