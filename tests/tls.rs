//! TLS and basic auth with `--web.config.file`: a real Prometheus scrapes over TLS
//! with a password; wrong or missing passwords get 401; plain HTTP to the TLS port gets no
//! metrics; a client certificate is required when configured; a client that never finishes
//! its handshake takes neither `/metrics` nor SIGTERM away; reloads take effect on the next
//! connection. Certificates are made with rcgen at test time.

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::http::spawn_agent;
use crate::prometheus::{tool, Prometheus};
use crate::support::agent::{
    eventually, expect_sample, http_get, http_get_from, RunningAgent, DEADLINE, TESTS_NOW,
};
use crate::support::tls::{Ca, HttpsClient};

const LINE: &str = "(APIServer pid=812) INFO 11-22 13:25:01 [loggers.py:257] Engine 000: Avg prompt throughput: 1245.3 tokens/s, Avg generation throughput: 312.8 tokens/s, Running: 14 reqs, Waiting: 2 reqs, GPU KV cache usage: 63.1%, Prefix cache hit rate: 41.7%\n";

const USER: &str = "prometheus";
const PASSWORD: &str = "correct horse";

/// A directory with a vLLM log, a server certificate signed by `ca`, and a web config file
/// (`web.yml`) whose relative paths point at them.
struct Site {
    dir: tempfile::TempDir,
    ca: Ca,
}

impl Site {
    fn new() -> Site {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("vllm.log"), LINE).unwrap();
        let ca = Ca::new("llmtail test CA");
        ca.server().write(dir.path(), "server");
        Site { dir, ca }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes `web.yml`: TLS with the server certificate, `USER` with `PASSWORD` (bcrypt cost
    /// 4: the tests check behaviour, not bcrypt's speed), and `extra` lines.
    fn write_config(&self, password: &str, extra: &str) {
        let hash = bcrypt::hash(password, 4).unwrap();
        std::fs::write(
            self.path("web.yml"),
            format!(
                "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n{extra}basic_auth_users:\n  {USER}: {hash}\n"
            ),
        )
        .unwrap();
    }

    fn flags(&self) -> [String; 4] {
        [
            "--log".into(),
            self.path("vllm.log").to_str().unwrap().into(),
            "--web.config.file".into(),
            self.path("web.yml").to_str().unwrap().into(),
        ]
    }

    /// The agent in-process, once it answers `/-/ready` over TLS with the password.
    fn start(&self, client: &HttpsClient) -> RunningAgent {
        self.start_with(client, &[])
    }

    /// [`Site::start`] with `extra` flags.
    fn start_with(&self, client: &HttpsClient, extra: &[&str]) -> RunningAgent {
        let flags = self.flags();
        let mut args: Vec<&str> = flags.iter().map(String::as_str).collect();
        args.extend_from_slice(extra);
        let agent = RunningAgent::launch(&args, TESTS_NOW);
        assert!(
            eventually(|| client
                .get(agent.addr, "/-/ready", Some((USER, PASSWORD)))
                .is_ok_and(|r| r.status == 200)),
            "never ready over TLS"
        );
        agent
    }
}

#[test]
fn a_real_prometheus_scrapes_over_tls_with_basic_auth() {
    let Some(prometheus) = tool("prometheus") else {
        return;
    };
    let site = Site::new();
    site.write_config(PASSWORD, "");
    std::fs::write(site.path("ca.crt"), &site.ca.pem).unwrap();
    let agent = site.start(&HttpsClient::trusting(&site.ca, None));
    let server = Prometheus::with_job(
        &prometheus,
        &format!(
            "scheme: https\n    tls_config:\n      ca_file: {}\n    basic_auth:\n      username: {USER}\n      password: {PASSWORD}\n    static_configs:\n      - targets: ['{}']\n",
            site.path("ca.crt").display(),
            agent.addr
        ),
    );
    server.wait_for("up{job=\"llmtail\"}", 1.0);
    server.wait_for("vllm:num_requests_running{engine=\"0\"}", 14.0);
    server.wait_for("vllm:gpu_cache_usage_perc{engine=\"0\"}", 0.631);
}

#[test]
fn wrong_or_missing_passwords_get_401_and_plain_http_gets_no_metrics() {
    let site = Site::new();
    site.write_config(
        PASSWORD,
        "http_server_config:\n  headers:\n    X-Frame-Options: deny\n",
    );
    let client = HttpsClient::trusting(&site.ca, None);
    let agent = site.start(&client);

    let ok = client
        .get(agent.addr, "/metrics", Some((USER, PASSWORD)))
        .unwrap();
    assert_eq!(ok.status, 200, "{}", ok.head);
    assert_eq!(
        expect_sample(&ok.body, "vllm:num_requests_running", &[("engine", "0")]),
        14.0
    );
    assert_eq!(ok.header("x-frame-options"), Some("deny"), "{}", ok.head);

    for (who, credentials) in [
        ("a wrong password", Some((USER, "wrong"))),
        ("an unknown user", Some(("root", PASSWORD))),
        ("no credentials", None),
    ] {
        for path in ["/metrics", "/", "/-/healthy"] {
            let refused = client.get(agent.addr, path, credentials).unwrap();
            assert_eq!(refused.status, 401, "{who} on {path}: {}", refused.head);
            assert_eq!(refused.header("www-authenticate"), Some("Basic"));
            assert_eq!(refused.header("x-frame-options"), Some("deny"));
            assert!(!refused.body.contains("vllm"), "{}", refused.body);
        }
    }

    let plain = http_get(agent.addr, "/metrics", None);
    eprintln!("plain HTTP to the TLS port: {plain:?}");
    let plain = plain.unwrap();
    assert_eq!(plain.status, 400);
    assert!(plain.body.contains("HTTP request to an HTTPS server"));
    assert!(!plain.body.contains("vllm"));
}

#[test]
fn a_client_certificate_is_required_when_configured() {
    let site = Site::new();
    let clients_ca = Ca::new("llmtail clients");
    std::fs::write(site.path("clients.crt"), &clients_ca.pem).unwrap();
    site.write_config(
        PASSWORD,
        "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: clients.crt\n",
    );
    let signed = clients_ca.client("scraper");
    let with_cert = HttpsClient::trusting(&site.ca, Some(&signed));
    let agent = site.start(&with_cert);

    let answer = with_cert
        .get(agent.addr, "/metrics", Some((USER, PASSWORD)))
        .unwrap();
    assert_eq!(answer.status, 200);
    assert!(answer.body.contains("vllm:num_requests_running"));

    let stranger = Ca::new("someone else").client("scraper");
    for (who, client) in [
        ("no certificate", HttpsClient::trusting(&site.ca, None)),
        (
            "a certificate from another CA",
            HttpsClient::trusting(&site.ca, Some(&stranger)),
        ),
    ] {
        let refused = client.get(agent.addr, "/metrics", Some((USER, PASSWORD)));
        eprintln!("{who}: {:?}", refused.as_ref().map(|r| r.status));
        assert!(refused.is_err(), "{who} got {:?}", refused.map(|r| r.head));
    }
}

/// Mirrors the slowloris tests in `http.rs` for TLS: connections that open TCP and send nothing,
/// or the first bytes of a ClientHello, must neither hold a place nor keep SIGTERM waiting.
#[test]
fn clients_that_never_finish_the_handshake_neither_block_metrics_nor_sigterm() {
    rlimit::increase_nofile_limit(u64::MAX).unwrap();
    let site = Site::new();
    site.write_config(PASSWORD, "");
    let client = HttpsClient::trusting(&site.ca, None);
    let web = site.path("web.yml");
    // Two places, so 128 open connections at most: 300 stalled ones fill it twice over.
    let (mut agent, addr, _dir) = spawn_agent(&[
        "--web.config.file",
        web.to_str().unwrap(),
        "--web.max-connections",
        "2",
    ]);
    let get = |addr: SocketAddr| client.get(addr, "/metrics", Some((USER, PASSWORD)));
    assert!(eventually(|| get(addr).is_ok_and(|r| r.status == 200)));

    let stalled: Vec<TcpStream> = (0..300)
        .filter_map(|i| {
            let mut stream = TcpStream::connect(addr).ok()?;
            if i % 2 == 0 {
                // A TLS record header announcing a ClientHello that never comes.
                stream.write_all(&[0x16, 0x03, 0x01, 0x02, 0x00]).ok()?;
            }
            Some(stream)
        })
        .collect();
    for _ in 0..5 {
        let asked = Instant::now();
        let response = get(addr);
        assert!(
            response.as_ref().is_ok_and(|r| r.status == 200),
            "/metrics under {} stalled handshakes: {:?}",
            stalled.len(),
            response.map(|r| r.status)
        );
        assert!(
            asked.elapsed() < Duration::from_secs(2),
            "{:?}",
            asked.elapsed()
        );
    }

    let (status, took) = agent.terminate();
    eprintln!(
        "SIGTERM with {} stalled handshakes took {took:?}",
        stalled.len()
    );
    assert!(
        status.is_some_and(|s| s.success()) && took < Duration::from_secs(3),
        "SIGTERM took {took:?} with handshakes still open (status {status:?})"
    );
    drop(stalled);
}

#[test]
fn a_reload_takes_effect_on_the_next_connection_and_a_broken_file_keeps_the_old() {
    let site = Site::new();
    site.write_config(PASSWORD, "");
    let old_ca = HttpsClient::trusting(&site.ca, None);
    let agent = site.start(&old_ca);
    let status = |client: &HttpsClient, password: &str| {
        client
            .get(agent.addr, "/metrics", Some((USER, password)))
            .map(|r| r.status)
    };

    // A new password.
    site.write_config("new password", "");
    agent.web_config.reload().unwrap();
    assert_eq!(status(&old_ca, PASSWORD).unwrap(), 401);
    assert_eq!(status(&old_ca, "new password").unwrap(), 200);

    // A new certificate, from another CA.
    let new_ca = Ca::new("llmtail test CA, renewed");
    new_ca.server().write(site.dir.path(), "server");
    let new_ca_client = HttpsClient::trusting(&new_ca, None);
    agent.web_config.reload().unwrap();
    assert!(status(&old_ca, "new password").is_err());
    assert_eq!(status(&new_ca_client, "new password").unwrap(), 200);

    // A broken file (a key that does not exist): the running configuration stays.
    std::fs::write(
        site.path("web.yml"),
        "tls_server_config:\n  cert_file: server.crt\n  key_file: gone.key\n",
    )
    .unwrap();
    let err = agent.web_config.reload().unwrap_err().to_string();
    assert!(err.contains("key_file"), "{err}");
    assert_eq!(status(&new_ca_client, "new password").unwrap(), 200);
    assert_eq!(status(&new_ca_client, "wrong").unwrap(), 401);
}

/// The web config file is part of what a reload (SIGHUP, or `/-/reload` as here) reads again:
/// a new password applies to the next request without a restart.
#[test]
fn a_reload_of_the_configuration_reads_the_web_config_file_again() {
    let site = Site::new();
    site.write_config(PASSWORD, "");
    let client = HttpsClient::trusting(&site.ca, None);
    let agent = site.start_with(&client, &["--web.enable-lifecycle"]);
    site.write_config("new password", "");
    let reloaded = client
        .post(agent.addr, "/-/reload", Some((USER, PASSWORD)))
        .unwrap();
    assert_eq!(reloaded.status, 200, "{}", reloaded.body);
    let status = |password: &str| {
        client
            .get(agent.addr, "/metrics", Some((USER, password)))
            .unwrap()
            .status
    };
    assert_eq!(status(PASSWORD), 401);
    assert_eq!(status("new password"), 200);

    // A broken web config file refuses the whole reload.
    std::fs::write(
        site.path("web.yml"),
        "tls_server_config:\n  cert_file: gone.crt\n",
    )
    .unwrap();
    let refused = client
        .post(agent.addr, "/-/reload", Some((USER, "new password")))
        .unwrap();
    assert_eq!(refused.status, 500, "{}", refused.body);
    assert!(refused.body.contains("web config file"), "{}", refused.body);
    assert_eq!(status("new password"), 200);
}

/// bcrypt at exporter-toolkit's documented cost (10) is slow on purpose. Wrong passwords
/// arriving as fast as sixteen clients can send them must not stall a scraper whose password
/// was checked once: it is remembered, and checks run off the runtime thread, with only so
/// many waiting.
#[test]
fn a_flood_of_wrong_passwords_does_not_stall_a_scraper() {
    let site = Site::new();
    let hash = bcrypt::hash(PASSWORD, 10).unwrap();
    std::fs::write(
        site.path("web.yml"),
        format!("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  {USER}: {hash}\n"),
    )
    .unwrap();
    let client = HttpsClient::trusting(&site.ca, None);
    let first = Instant::now();
    let agent = site.start(&client);
    eprintln!(
        "first request (one bcrypt check at cost 10): {:?}",
        first.elapsed()
    );
    let again = Instant::now();
    assert_eq!(
        client
            .get(agent.addr, "/metrics", Some((USER, PASSWORD)))
            .unwrap()
            .status,
        200
    );
    eprintln!("a remembered password: {:?}", again.elapsed());

    let stop = std::sync::atomic::AtomicBool::new(false);
    let (refused, busy) = (
        std::sync::atomic::AtomicUsize::new(0),
        std::sync::atomic::AtomicUsize::new(0),
    );
    let mut slowest = Duration::ZERO;
    std::thread::scope(|s| {
        for flooder in 0..16 {
            let (client, stop, refused, busy) = (&client, &stop, &refused, &busy);
            let addr = agent.addr;
            s.spawn(move || {
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    n += 1;
                    let wrong = format!("guess {flooder} {n}");
                    match client
                        .get(addr, "/metrics", Some((USER, &wrong)))
                        .map(|r| r.status)
                    {
                        Ok(401) => refused.fetch_add(1, std::sync::atomic::Ordering::SeqCst),
                        Ok(503) => busy.fetch_add(1, std::sync::atomic::Ordering::SeqCst),
                        other => panic!("a wrong password got {other:?}"),
                    };
                }
            });
        }
        // Let the flood build up: wait until it has had some answers.
        assert!(eventually(|| refused
            .load(std::sync::atomic::Ordering::SeqCst)
            >= 2));
        for _ in 0..10 {
            let asked = Instant::now();
            let response = client.get(agent.addr, "/metrics", Some((USER, PASSWORD)));
            slowest = slowest.max(asked.elapsed());
            assert!(
                response.as_ref().is_ok_and(|r| r.status == 200),
                "{:?}",
                response.map(|r| r.status)
            );
        }
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    eprintln!(
        "under the flood ({} wrong passwords refused after a check, {} answered 503 at once): slowest of 10 scrapes {slowest:?}",
        refused.into_inner(),
        busy.into_inner()
    );
    assert!(slowest < Duration::from_secs(1), "{slowest:?}");
}

/// A `cert_file` that is a FIFO without a writer blocked the reload in `open` (503 after
/// 30 s), and the agent then never exited.
#[test]
fn a_cert_file_that_is_a_fifo_is_refused_on_reload_at_once_and_the_agent_still_stops() {
    let site = Site::new();
    site.write_config(PASSWORD, "");
    let client = HttpsClient::trusting(&site.ca, None);
    let agent = site.start_with(&client, &["--web.enable-lifecycle"]);
    let made = Command::new("mkfifo")
        .arg(site.path("pipe.crt"))
        .status()
        .unwrap();
    assert!(made.success());
    let web = std::fs::read_to_string(site.path("web.yml")).unwrap();
    std::fs::write(
        site.path("web.yml"),
        web.replace("cert_file: server.crt", "cert_file: pipe.crt"),
    )
    .unwrap();
    let refused = client
        .post(agent.addr, "/-/reload", Some((USER, PASSWORD)))
        .expect("/-/reload answers");
    assert_eq!(refused.status, 500, "{}", refused.body);
    let named = format!(
        "tls_server_config.cert_file: cannot read {}: it is a FIFO, not a regular file",
        site.path("pipe.crt").display()
    );
    assert!(refused.body.contains(&named), "{}", refused.body);

    agent.stops_promptly("the reload");
}

/// `cert_file: /dev/zero` was read without end: the agent grew to 3 GB in 6 s.
#[test]
fn a_cert_file_of_dev_zero_stops_start_up_at_once_instead_of_filling_the_memory() {
    let site = Site::new();
    std::fs::write(
        site.path("web.yml"),
        "tls_server_config:\n  cert_file: /dev/zero\n  key_file: server.key\n",
    )
    .unwrap();
    // A start-up that kept reading would never exit: start_up_failure would fail on that.
    let (code, stderr) = start_up_failure(&site);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot read /dev/zero: it is a character device, not a regular file"),
        "{stderr}"
    );
    assert!(
        stderr.contains("fix: give the path of a regular file"),
        "{stderr}"
    );
}

/// 24 clients sending wrong passwords (cost 10) kept out a scraper whose password was not
/// checked yet, which is Prometheus's first scrape after every restart and after every reload
/// that changes its hash: 503 on 30 tries of 30. Each client here has a loopback address of
/// its own, as a host would, and guesses the scrapers' own user names; each try is a new
/// scraper from a new address. Plain HTTP, so that what is measured is the password checks,
/// not the handshakes of the test's own 24 clients, which share the agent's cores here as a
/// flood from elsewhere would not.
#[test]
fn a_flood_of_wrong_passwords_keeps_no_fresh_scraper_out() {
    const FLOODERS: u8 = 24;
    const TRIES: u8 = 30;
    const MOST_GUESSES: usize = 20_000;
    let site = Site::new();
    let quick = bcrypt::hash(PASSWORD, 4).unwrap();
    let scrapers_hash = bcrypt::hash(PASSWORD, 10).unwrap();
    let scrapers: String = (0..TRIES)
        .map(|i| format!("  scraper{i}: {scrapers_hash}\n"))
        .collect();
    std::fs::write(
        site.path("web.yml"),
        format!("basic_auth_users:\n  {USER}: {quick}\n{scrapers}"),
    )
    .unwrap();
    let flags = site.flags();
    let agent = RunningAgent::launch(
        &flags.iter().map(String::as_str).collect::<Vec<_>>(),
        TESTS_NOW,
    );
    let localhost = IpAddr::V4(Ipv4Addr::LOCALHOST);
    assert!(eventually(|| http_get_from(
        localhost,
        agent.addr,
        "/-/ready",
        (USER, PASSWORD)
    )
    .is_ok_and(|r| r.status == 200)));

    let refused: Vec<AtomicUsize> = (0..FLOODERS).map(|_| AtomicUsize::new(0)).collect();
    let (busy, failed, stop) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicBool::new(false),
    );
    let mut kept_out = Vec::new();
    let mut slowest = Duration::ZERO;
    std::thread::scope(|s| {
        for flooder in 0..FLOODERS {
            let (refused, busy, failed, stop) = (&refused, &busy, &failed, &stop);
            let addr = agent.addr;
            s.spawn(move || {
                let from = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2 + flooder));
                let started = Instant::now();
                for n in 0..MOST_GUESSES {
                    if stop.load(Ordering::SeqCst) || started.elapsed() > DEADLINE {
                        break;
                    }
                    let user = format!("scraper{}", n % usize::from(TRIES));
                    let guess = format!("guess {flooder} {n}");
                    match http_get_from(from, addr, "/metrics", (&user, &guess)).map(|r| r.status) {
                        Ok(401) => refused[usize::from(flooder)].fetch_add(1, Ordering::SeqCst),
                        Ok(503) => busy.fetch_add(1, Ordering::SeqCst),
                        Ok(200) => panic!("a wrong password got in"),
                        _ => failed.fetch_add(1, Ordering::SeqCst),
                    };
                }
            });
        }
        // Every flooder's guesses have been checked and failed at least once.
        assert!(
            eventually(|| refused.iter().all(|r| r.load(Ordering::SeqCst) > 0)),
            "some flooder never had a guess checked"
        );
        for i in 0..TRIES {
            let from = IpAddr::V4(Ipv4Addr::new(127, 0, 1, 1 + i));
            let user = format!("scraper{i}");
            let asked = Instant::now();
            let status =
                http_get_from(from, agent.addr, "/metrics", (&user, PASSWORD)).map(|r| r.status);
            let took = asked.elapsed();
            slowest = slowest.max(took);
            if !matches!(status, Ok(200)) || took >= Duration::from_secs(1) {
                kept_out.push(format!("{user}: {status:?} after {took:?}"));
            }
        }
        stop.store(true, Ordering::SeqCst);
    });
    let refused: usize = refused.iter().map(|r| r.load(Ordering::SeqCst)).sum();
    eprintln!(
        "{FLOODERS} flooders: {refused} guesses refused after a check, {} answered 503 at once, {} failed to connect; fresh scrapers: slowest of {TRIES} {slowest:?}",
        busy.into_inner(),
        failed.into_inner()
    );
    assert!(
        kept_out.is_empty(),
        "{} of {TRIES} fresh scrapers kept out or slower than 1 s: {kept_out:#?}",
        kept_out.len()
    );
}

/// A check at cost 31 kept SIGTERM waiting for over 60 s: the runtime waited for the blocking
/// thread that ran it. The slowest check allowed (cost 14) takes about a second here; the
/// agent stops while it runs, and leaves it running.
#[test]
fn a_running_password_check_does_not_delay_shutdown() {
    let site = Site::new();
    let quick = bcrypt::hash(PASSWORD, 4).unwrap();
    let slow = bcrypt::hash("unguessable", 4)
        .unwrap()
        .replacen("$04$", "$14$", 1);
    std::fs::write(
        site.path("web.yml"),
        format!("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  {USER}: {quick}\n  slow: {slow}\n"),
    )
    .unwrap();
    let client = HttpsClient::trusting(&site.ca, None);
    let agent = site.start(&client);
    let (addr, web) = (agent.addr, Arc::clone(&agent.web_config));
    std::thread::scope(|s| {
        let asking = s.spawn(|| client.get(addr, "/metrics", Some(("slow", "guess"))));
        assert!(
            eventually(|| web.checker.is_checking()),
            "the check never started"
        );
        let stopping = Instant::now();
        agent.stop().unwrap();
        let took = stopping.elapsed();
        eprintln!("stopped in {took:?} with a cost-14 check running");
        assert!(
            web.checker.is_checking(),
            "the agent waited {took:?} for the check to end before it stopped"
        );
        assert!(took < Duration::from_secs(1), "stopping took {took:?}");
        let answer = asking.join().unwrap().map(|r| r.status);
        assert!(!matches!(answer, Ok(200)), "{answer:?}");
    });
}

/// A bad web config file stops start-up with exit code 2 and a message naming it.
#[test]
fn a_bad_web_config_file_stops_start_up_with_exit_code_2() {
    let site = Site::new();
    std::fs::write(
        site.path("web.yml"),
        "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_type: Always\n",
    )
    .unwrap();
    let (code, stderr) = start_up_failure(&site);
    assert_eq!(code, Some(2), "{stderr}");
    let named = format!(
        "web config file {}, tls_server_config.client_auth_type: \"Always\"",
        site.path("web.yml").display()
    );
    assert!(stderr.contains(&named), "{stderr}");
    assert!(stderr.contains("fix: use NoClientCert"), "{stderr}");
}

/// A hash at bcrypt cost 31 took days to check, and an unknown user was checked against it:
/// one request with a made-up name held the password checks for good. Costs past 14 (and
/// costs that are no bcrypt cost, 3 and 99) stop start-up, and a reload refuses them.
#[test]
fn a_bcrypt_cost_of_31_stops_start_up_and_a_reload_refuses_it() {
    let site = Site::new();
    for cost in ["31", "03", "99"] {
        let hash = bcrypt::hash(PASSWORD, 4)
            .unwrap()
            .replacen("$04$", &format!("${cost}$"), 1);
        std::fs::write(
            site.path("web.yml"),
            format!("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  {USER}: {hash}\n"),
        )
        .unwrap();
        let (code, stderr) = start_up_failure(&site);
        assert_eq!(code, Some(2), "cost {cost}: {stderr}");
        let cost = cost.trim_start_matches('0');
        assert!(
            stderr.contains(&format!("basic_auth_users.{USER}: bcrypt cost {cost} is")),
            "{stderr}"
        );
        assert!(stderr.contains("fix: hash the password again"), "{stderr}");
    }

    site.write_config(PASSWORD, "");
    let client = HttpsClient::trusting(&site.ca, None);
    let agent = site.start(&client);
    let slow = bcrypt::hash("new password", 4)
        .unwrap()
        .replacen("$04$", "$31$", 1);
    std::fs::write(
        site.path("web.yml"),
        format!("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  {USER}: {slow}\n"),
    )
    .unwrap();
    let err = agent.web_config.reload().unwrap_err().to_string();
    assert!(err.contains("bcrypt cost 31 is over 14"), "{err}");
    let status = client
        .get(agent.addr, "/metrics", Some((USER, PASSWORD)))
        .unwrap()
        .status;
    assert_eq!(status, 200, "the running users stay");
}

/// Starts the agent as a process with `site`'s files, expecting it to refuse them: its exit
/// code and stderr.
fn start_up_failure(site: &Site) -> (Option<i32>, String) {
    // Spawned, not waited for: an agent that accepted the file would serve for ever.
    let mut agent = Command::new(env!("CARGO_BIN_EXE_llmtail"))
        .args(site.flags())
        .args(["--web.listen-address", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let exited = eventually(|| agent.try_wait().unwrap().is_some());
    if !exited {
        let _ = agent.kill();
    }
    let output = agent.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        exited,
        "the agent started with a bad web config file: {stderr}"
    );
    (output.status.code(), stderr)
}
