//! A real Prometheus (Debian's `prometheus` package, installed by `scripts/test`) scrapes the agent,
//! and its query API returns what the log said; `promtool check metrics` accepts our output.
//!
//! Without the binaries these tests fail saying to run `scripts/test` (which installs them),
//! unless `LLMTAIL_SKIP_PROMETHEUS=1` says to skip them on purpose.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::support::agent::{eventually, http_get, on_path, RunningAgent};
use crate::support::process::{spawn_listening, HeldPort, Stderr};
use crate::support::writer::{append_lines, just_written_copy};

/// The flag that makes a Prometheus take remote writes.
const RECEIVER: &str = "--web.enable-remote-write-receiver";

pub(crate) fn tool(name: &str) -> Option<PathBuf> {
    if std::env::var_os("LLMTAIL_SKIP_PROMETHEUS").is_some_and(|v| v == "1") {
        eprintln!("LLMTAIL_SKIP_PROMETHEUS=1: skipping the test that needs {name}");
        return None;
    }
    Some(on_path(name).unwrap_or_else(|| {
        panic!("{name} is not installed: run scripts/test, which installs what the tests need (or LLMTAIL_SKIP_PROMETHEUS=1 to skip)")
    }))
}

/// A Prometheus server on a loopback port it bound, killed when dropped.
pub(crate) struct Prometheus {
    child: Child,
    pub(crate) addr: std::net::SocketAddr,
    _stderr: Stderr,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    pub(crate) fn scraping(binary: &Path, target: std::net::SocketAddr) -> Prometheus {
        Prometheus::with_job(
            binary,
            &format!("static_configs:\n      - targets: ['{target}']\n"),
        )
    }

    /// Scrapes every second with one job named llmtail, whose settings (indented for a key of
    /// the job: `static_configs`, `scheme`, `tls_config`, ...) are `job`.
    pub(crate) fn with_job(binary: &Path, job: &str) -> Prometheus {
        let config = format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: llmtail\n    {job}"
        );
        Prometheus::start(binary, &config, &[])
    }

    /// Scrapes nothing and takes remote writes (`/api/v1/write`), as a Prometheus that a host
    /// behind NAT pushes to.
    pub(crate) fn receiving(binary: &Path) -> Prometheus {
        Prometheus::start(binary, "global: {}\n", &[RECEIVER])
    }

    /// [`Prometheus::receiving`] on `held`'s port, which it lets go once Prometheus listens
    /// there: a receiver that was down comes back where the agent pushes.
    pub(crate) fn receiving_on(binary: &Path, held: HeldPort) -> Prometheus {
        let listen = held.addr.to_string();
        let prometheus = Prometheus::listening(binary, "global: {}\n", &listen, &[RECEIVER]);
        drop(held);
        prometheus
    }

    /// Scrapes nothing and serves the TSDB in `data` (blocks `promtool tsdb
    /// create-blocks-from` wrote), keeping blocks of any age (they are deleted past the
    /// retention, 15 days by default, otherwise).
    pub(crate) fn on_blocks(binary: &Path, data: &Path) -> Prometheus {
        let storage = format!("--storage.tsdb.path={}", data.display());
        Prometheus::start(
            binary,
            "global: {}\n",
            &[&storage, "--storage.tsdb.retention.time=100y"],
        )
    }

    /// Started with `config_text` as its config file, on a port it binds, with more `flags`
    /// (its TSDB in a temporary directory unless they name one).
    pub(crate) fn start(binary: &Path, config_text: &str, flags: &[&str]) -> Prometheus {
        Prometheus::listening(binary, config_text, "127.0.0.1:0", flags)
    }

    /// Started listening on `listen`; returns once it says where it listens.
    fn listening(binary: &Path, config_text: &str, listen: &str, flags: &[&str]) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(&config, config_text).unwrap();
        let mut command = Command::new(binary);
        command
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--web.listen-address={listen}"))
            .args(flags)
            .stdout(Stdio::null());
        if !flags.iter().any(|f| f.starts_with("--storage.tsdb.path=")) {
            command.arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ));
        }
        // Its web package logs the listener's own address: `msg="Listening on" address=...`.
        let (child, addr, stderr) = spawn_listening(command, "msg=\"Listening on\"");
        Prometheus {
            child,
            addr,
            _stderr: stderr,
            _dir: dir,
        }
    }

    /// The body of an HTTP API answer (`/api/v1/...`), whatever its status: an error's body
    /// says what was wrong. `None` when Prometheus does not answer.
    pub fn api(&self, path_and_query: &str) -> Option<String> {
        http_get(self.addr, path_and_query, None)
            .ok()
            .map(|r| r.body)
    }

    /// The value of an instant query that returns one series, once it returns one.
    pub(crate) fn query(&self, promql: &str) -> Option<f64> {
        let body = self.api(&format!("/api/v1/query?query={}", encode(promql)))?;
        // {"status":"success","data":{"resultType":"vector","result":[{"metric":{...},"value":[1234.5,"14"]}]}}
        let value = body.split("\"value\":[").nth(1)?;
        let value = value.split(',').nth(1)?.trim_start_matches('"');
        value.split('"').next()?.parse().ok()
    }

    /// The samples a range query (`start` to `end`, seconds, every `step` seconds) returns
    /// for its one series: `(time, value)`; empty when it returns none, `None` when Prometheus
    /// does not answer (yet) or refuses the query.
    pub(crate) fn query_range(
        &self,
        promql: &str,
        start: f64,
        end: f64,
        step: f64,
    ) -> Option<Vec<(f64, f64)>> {
        let body = self.api(&format!(
            "/api/v1/query_range?query={}&start={start}&end={end}&step={step}",
            encode(promql)
        ))?;
        let answer: serde_json::Value = serde_json::from_str(&body).ok()?;
        let result = answer.get("data")?.get("result")?.as_array()?;
        let Some(series) = result.first() else {
            return Some(Vec::new());
        };
        assert_eq!(result.len(), 1, "{promql}: one series expected, got {body}");
        series
            .get("values")?
            .as_array()?
            .iter()
            .map(|pair| {
                let time = pair.get(0)?.as_f64()?;
                let value = pair.get(1)?.as_str()?.parse().ok()?;
                Some((time, value))
            })
            .collect()
    }

    /// Waits until an instant query returns no series: a series that left the exposition is
    /// marked stale at the next scrape.
    pub(crate) fn wait_for_none(&self, promql: &str) {
        let mut last = None;
        let held = eventually(|| {
            last = self.query(promql);
            last.is_none()
        });
        assert!(
            held,
            "Prometheus query {promql}: expected no series, last answer {last:?}"
        );
    }

    pub(crate) fn wait_for(&self, promql: &str, expected: f64) {
        let mut last = None;
        let held = eventually(|| {
            last = self.query(promql);
            last.is_some_and(|v| (v - expected).abs() < 1e-9)
        });
        assert!(
            held,
            "Prometheus query {promql}: expected {expected}, last answer {last:?}"
        );
    }

    /// Waits until an instant query returns one series whose value is `least` or more.
    pub(crate) fn wait_for_at_least(&self, promql: &str, least: f64) {
        let mut last = None;
        let held = eventually(|| {
            last = self.query(promql);
            last.is_some_and(|v| v >= least)
        });
        assert!(
            held,
            "Prometheus query {promql}: expected at least {least}, last answer {last:?}"
        );
    }
}

/// `text` percent-encoded for a query string.
pub fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b == b'_' {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Two vLLM engines, up at [`crate::support::agent::TESTS_NOW`].
pub(crate) const LOG: &str = "\
(EngineCore_DP0 pid=276) INFO 11-22 13:20:01 [core.py:93] Initializing a V1 LLM engine (v0.14.0) with config: model='/models/qwen3-8b', speculative_config=None, max_seq_len=32768, served_model_name=qwen3-8b, enable_prefix_caching=True
(EngineCore_DP0 pid=276) INFO 11-22 13:20:30 [kv_cache_utils.py:1305] GPU KV cache size: 2,042,016 tokens
(APIServer pid=812) INFO 11-22 13:25:01 [loggers.py:257] Engine 000: Avg prompt throughput: 1245.3 tokens/s, Avg generation throughput: 312.8 tokens/s, Running: 14 reqs, Waiting: 2 reqs, GPU KV cache usage: 63.1%, Prefix cache hit rate: 41.7%
(APIServer pid=812) INFO 11-22 13:25:01 [loggers.py:257] Engine 001: Avg prompt throughput: 10.0 tokens/s, Avg generation throughput: 20.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 5.0%, Prefix cache hit rate: 0.0%
";

#[test]
fn a_real_prometheus_scrapes_vllm_series_with_the_values_the_log_printed() {
    let Some(prometheus) = tool("prometheus") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    std::fs::write(&log, LOG).unwrap();
    let agent = RunningAgent::start(&[
        "--log",
        log.to_str().unwrap(),
        "--label",
        "instance_group=a",
    ]);
    let server = Prometheus::scraping(&prometheus, agent.addr);

    server.wait_for("up{job=\"llmtail\"}", 1.0);
    server.wait_for(
        "vllm:num_requests_running{engine=\"0\",model_name=\"qwen3-8b\",instance_group=\"a\"}",
        14.0,
    );
    server.wait_for("vllm:num_requests_running{engine=\"1\"}", 1.0);
    server.wait_for("vllm:gpu_cache_usage_perc{engine=\"0\"}", 0.631);
    server.wait_for("vllm:prompt_tokens_total{engine=\"0\"}", 12453.0);
    server.wait_for("llmtail_vllm_kv_cache_capacity_tokens", 2042016.0);
    server.wait_for("sum(vllm:num_requests_waiting)", 2.0);
    server.wait_for("llmtail_lines_parsed_total{grammar=\"vllm_stats\"}", 2.0);
}

/// promtool lints names; the only complaints allowed are about the engines' own names, which
/// dashboards depend on and we must not change. Every fixture log's exposition (each read as
/// of its own last line, so that its engines are up): every family.
#[test]
fn promtool_accepts_the_exposition_apart_from_vllms_own_naming() {
    let Some(promtool) = tool("promtool") else {
        return;
    };
    let expositions: Vec<String> = crate::replay::replay_logs()
        .iter()
        .map(|log| crate::replay::replay(log))
        .collect();
    let all = expositions.concat();
    assert!(
        all.contains("nv_trt_llm_request_metrics{") && all.contains("vllm:num_requests_running{")
    );
    for metrics in &expositions {
        lint(&promtool, metrics);
    }
}

/// The one-shot exposition of a vLLM and a TensorRT-LLM replay log, both with a `gpu` label
/// in their `[[log]] labels` and in the global `[labels]`.
pub fn label_in_both_tables() -> String {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("llmtail.toml");
    let cwd = std::env::current_dir().unwrap();
    let log = |name: &str| cwd.join("fixtures/replay").join(name).display().to_string();
    std::fs::write(
        &config,
        format!(
            "[labels]\ngpu = \"all\"\nteam = \"infra\"\n\
             [[log]]\npath = \"{}\"\nlabels = {{ gpu = \"0\" }}\n\
             [[log]]\npath = \"{}\"\nlabels = {{ gpu = \"1\" }}\n",
            log("vllm-0.14.1-dp2-engines.log"),
            log("trtllm-triton-era2-v0.10.log"),
        ),
    )
    .unwrap();
    let argv = [
        "llmtail",
        "--config",
        config.to_str().unwrap(),
        "--one-shot",
        "--log-timezone",
        "UTC",
    ];
    crate::replay::one_shot(&argv.map(String::from))
}

/// A label set both globally and per log was written twice.
#[test]
fn promtool_accepts_a_label_set_both_globally_and_per_log() {
    let Some(promtool) = tool("promtool") else {
        return;
    };
    let metrics = label_in_both_tables();
    assert!(metrics.contains("gpu=\"0\"") && metrics.contains("gpu=\"1\""));
    lint(&promtool, &metrics);
}

fn lint(promtool: &Path, metrics: &str) {
    let mut child = Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), metrics.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        matches!(out.status.code(), Some(0) | Some(3)),
        "promtool failed to parse:\n{report}"
    );
    for problem in report.lines().filter(|l| !l.trim().is_empty()) {
        // The engines' own names (`vllm:`, `llamacpp:`, `lmdeploy:`, ...), which their users'
        // dashboards type: only they have a ':'.
        let native_name = problem
            .split_whitespace()
            .next()
            .is_some_and(|name| name.contains(':'));
        let allowed = native_name
            && (problem.ends_with("metric names should not contain ':'")
                || problem.ends_with("metric names should not contain abbreviated units"));
        assert!(allowed, "promtool: {problem}");
    }
}

#[test]
fn a_real_prometheus_scrapes_tritons_families_from_a_triton_log() {
    let Some(prometheus) = tool("prometheus") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = &just_written_copy("fixtures/replay/trtllm-triton-era2-v0.10.log", dir.path())
        .display()
        .to_string();
    // A few seconds after the log's last line (2026-05-10T07:57:36Z: Triton writes UTC), so
    // the executor, busy at that line, is not yet overdue.
    let agent = RunningAgent::start_at(&["--log", log], 1_778_399_860.0);
    let server = Prometheus::scraping(&prometheus, agent.addr);

    // The last iteration line of the log, as Triton's own exporter would show it.
    let last = std::fs::read_to_string(log).unwrap();
    let last = last
        .lines()
        .rev()
        .find(|l| l.contains("Active Request Count"))
        .unwrap();
    let field = |key: &str| -> f64 {
        let at = last.find(&format!("\"{key}\":")).unwrap() + key.len() + 3;
        last[at..]
            .split([',', '}'])
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let model = "model=\"tensorrt_llm\",version=\"1\",rank=\"0\"";
    server.wait_for("up{job=\"llmtail\"}", 1.0);
    server.wait_for(
        &format!("nv_trt_llm_request_metrics{{request_type=\"active\",{model}}}"),
        field("Active Request Count"),
    );
    server.wait_for(
        &format!("nv_trt_llm_runtime_memory_metrics{{memory_type=\"gpu\",{model}}}"),
        field("Runtime GPU Memory Usage"),
    );
    server.wait_for(
        &format!("nv_trt_llm_kv_cache_block_metrics{{kv_cache_block_type=\"used\",{model}}}"),
        field("Used KV cache blocks"),
    );
    server.wait_for(
        &format!("nv_trt_llm_general_metrics{{general_type=\"iteration_counter\",{model}}}"),
        field("Iteration Counter"),
    );
    let iterations = std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter(|l| l.contains("Active Request Count"))
        .count();
    server.wait_for("llmtail_trtllm_iterations_total", iterations as f64);
    server.wait_for("llmtail_trtllm_kv_cache_capacity_tokens", 123648.0);
}

/// The IterationStats fields that Triton's exporter drops: a real Prometheus reads
/// them back as the last record (gauges) and the sums of all records (counters) say.
#[test]
fn a_real_prometheus_scrapes_the_iteration_stats_fields_tritons_exporter_drops() {
    let Some(prometheus) = tool("prometheus") else {
        return;
    };
    let fixture = "fixtures/replay/trtllm-iteration-stats-gptmanagerbenchmark-0.16.log";
    let dir = tempfile::tempdir().unwrap();
    let log = &just_written_copy(fixture, dir.path()).display().to_string();
    // Twelve seconds after the last record (2024-12-03T08:41:18Z, read as UTC).
    let agent = RunningAgent::start_at(&["--log", log, "--log-timezone", "UTC"], 1_733_215_290.0);
    let server = Prometheus::scraping(&prometheus, agent.addr);
    let records: Vec<serde_json::Value> = std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(&l[l.find('{')?..]).ok())
        .collect();
    let last = records.last().unwrap();
    let sum = |key: &str| -> f64 { records.iter().map(|r| r[key].as_f64().unwrap()).sum() };
    let activating = records
        .iter()
        .rfind(|r| r["numNewActiveRequests"].as_u64() > Some(0))
        .unwrap();
    server.wait_for("up{job=\"llmtail\"}", 1.0);
    server.wait_for(
        "llmtail_trtllm_new_active_requests_total",
        sum("numNewActiveRequests"),
    );
    server.wait_for(
        "llmtail_trtllm_new_request_queue_latency_seconds",
        activating["newActiveRequestsQueueLatencyMS"]
            .as_f64()
            .unwrap()
            / activating["numNewActiveRequests"].as_f64().unwrap()
            / 1000.0,
    );
    server.wait_for(
        "llmtail_trtllm_avg_decoded_tokens_per_iteration",
        last["inflightBatchingStats"]["avgNumDecodedTokensPerIter"]
            .as_f64()
            .unwrap(),
    );
    for (kind, key) in [
        ("static", "maxBatchSizeStatic"),
        ("runtime", "maxBatchSizeRuntime"),
        ("tuner_recommended", "maxBatchSizeTunerRecommended"),
    ] {
        server.wait_for(
            &format!("llmtail_trtllm_max_batch_size{{kind=\"{kind}\"}}"),
            last[key].as_f64().unwrap(),
        );
    }
    server.wait_for(
        "llmtail_trtllm_kv_cache_alloc_total_blocks_total",
        last["kvCacheStats"]["allocTotalBlocks"].as_f64().unwrap(),
    );
    server.wait_for(
        "llmtail_trtllm_kv_cache_alloc_new_blocks_total",
        last["kvCacheStats"]["allocNewBlocks"].as_f64().unwrap(),
    );
}

/// llama-server's families from two replay logs, one of them in router mode: the native
/// counters and busy gauge per slot (and port), the histograms and the draft counters, with the
/// values the logs printed (fixtures/README.md lists them).
#[test]
fn a_real_prometheus_scrapes_llama_servers_families_per_slot_and_port() {
    let Some(prometheus) = tool("prometheus") else {
        return;
    };
    let agent = RunningAgent::start(&[
        "--log",
        "fixtures/replay/llamacpp-2026-np2-draft.log",
        "--log",
        "fixtures/replay/llamacpp-2026-router-block.log",
    ]);
    let server = Prometheus::scraping(&prometheus, agent.addr);
    let np2 = "log=\"fixtures/replay/llamacpp-2026-np2-draft.log\"";
    let router = "log=\"fixtures/replay/llamacpp-2026-router-block.log\"";

    server.wait_for("up{job=\"llmtail\"}", 1.0);
    server.wait_for(
        &format!("llamacpp:prompt_tokens_total{{{np2},slot=\"0\"}}"),
        455.0,
    );
    server.wait_for(
        &format!("llamacpp:prompt_seconds_total{{{np2},slot=\"1\"}}"),
        1.84322,
    );
    server.wait_for(
        &format!("sum(llamacpp:tokens_predicted_total{{{np2}}})"),
        730.0,
    );
    server.wait_for(
        &format!("llamacpp:tokens_predicted_seconds_total{{{np2},slot=\"1\"}}"),
        12.0045,
    );
    server.wait_for(&format!("sum(llamacpp:requests_processing{{{np2}}})"), 1.0);
    server.wait_for(
        &format!("llamacpp:requests_processing{{{np2},slot=\"1\"}}"),
        1.0,
    );
    server.wait_for(
        &format!("llmtail_llamacpp_draft_accepted_tokens_total{{{np2},slot=\"0\"}}"),
        204.0,
    );
    server.wait_for(
        &format!("llmtail_llamacpp_draft_generated_tokens_total{{{np2},slot=\"0\"}}"),
        329.0,
    );
    server.wait_for(
        &format!("llmtail_llamacpp_prompt_eval_seconds_bucket{{{np2},slot=\"0\",le=\"0.1\"}}"),
        2.0,
    );
    server.wait_for(
        &format!("llmtail_llamacpp_time_per_output_token_seconds_count{{{np2},slot=\"0\"}}"),
        3.0,
    );
    // Router mode: the child's port is a label; a header's continuation lines are its slot's.
    server.wait_for(
        &format!("llamacpp:tokens_predicted_total{{{router},port=\"42027\",slot=\"0\"}}"),
        192.0,
    );
    server.wait_for(
        &format!("llamacpp:prompt_tokens_total{{{router},port=\"38455\",slot=\"1\"}}"),
        1310.0,
    );
    server.wait_for(
        &format!("sum by (port) (llamacpp:requests_processing{{{router},port=\"38455\"}})"),
        0.0,
    );
    server.wait_for(
        "sum(llmtail_lines_parsed_total{grammar=\"llamacpp_timing\"})",
        24.0,
    );
}

/// A vLLM 0.14 run that crashes, then starts again: lines as vLLM 0.14 prints them (the crash
/// sequence's EngineCore and output-handler lines, then the traceback's `EngineDeadError`).
const START: &str = "\
(EngineCore_DP0 pid=276) INFO 11-22 13:24:40 [core.py:93] Initializing a V1 LLM engine (v0.14.0) with config: model='/models/qwen3-8b', speculative_config=None, max_seq_len=32768, served_model_name=qwen3-8b, enable_prefix_caching=True
(APIServer pid=812) INFO 11-22 13:24:50 [api_server.py:1014] Supported tasks: ['generate']
(APIServer pid=812) INFO 11-22 13:24:50 [api_server.py:1346] Starting vLLM API server 0 on http://0.0.0.0:8000
(APIServer pid=812) INFO 11-22 13:25:01 [loggers.py:257] Engine 000: Avg prompt throughput: 1245.3 tokens/s, Avg generation throughput: 312.8 tokens/s, Running: 14 reqs, Waiting: 2 reqs, GPU KV cache usage: 63.1%, Prefix cache hit rate: 41.7%
";
const CRASH: &str = "\
(EngineCore_DP0 pid=276) ERROR 11-22 13:25:03 [core.py:710] EngineCore encountered a fatal error.
(APIServer pid=812) ERROR 11-22 13:25:03 [async_llm.py:430] AsyncLLM output_handler failed.
(APIServer pid=812) ERROR 11-22 13:25:03 [async_llm.py:430] vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.
";
const RESTART: &str = "\
(EngineCore_DP0 pid=377) INFO 11-22 13:26:00 [core.py:93] Initializing a V1 LLM engine (v0.14.0) with config: model='/models/qwen3-8b', speculative_config=None, max_seq_len=32768, served_model_name=qwen3-8b, enable_prefix_caching=True
(APIServer pid=913) INFO 11-22 13:26:30 [api_server.py:1014] Supported tasks: ['generate']
(APIServer pid=913) INFO 11-22 13:26:30 [api_server.py:1346] Starting vLLM API server 0 on http://0.0.0.0:8000
(APIServer pid=913) INFO 11-22 13:26:41 [loggers.py:257] Engine 000: Avg prompt throughput: 100.0 tokens/s, Avg generation throughput: 50.0 tokens/s, Running: 3 reqs, Waiting: 0 reqs, GPU KV cache usage: 4.0%, Prefix cache hit rate: 0.0%
";

#[test]
fn after_a_crash_line_prometheus_sees_the_gauges_go_stale_and_a_restart_brings_them_back() {
    let Some(prometheus) = tool("prometheus") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    std::fs::write(&log, START).unwrap();
    let agent = RunningAgent::start(&["--log", log.to_str().unwrap()]);
    let server = Prometheus::scraping(&prometheus, agent.addr);
    server.wait_for("vllm:num_requests_running{engine=\"0\"}", 14.0);
    server.wait_for("llmtail_vllm_engine_up{engine=\"0\"}", 1.0);

    append_lines(&log, &CRASH.lines().collect::<Vec<_>>());
    server.wait_for("llmtail_vllm_engine_up{engine=\"0\"}", 0.0);
    server.wait_for_none("vllm:num_requests_running");
    server.wait_for_none("vllm:kv_cache_usage_perc");
    // Counters keep their values while the engine is down.
    server.wait_for("vllm:prompt_tokens_total{engine=\"0\"}", 1245.3 * 11.0);

    agent.clock.set(1_795_354_002.0); // 13:26:42, a second after the new run's first line
    append_lines(&log, &RESTART.lines().collect::<Vec<_>>());
    server.wait_for("vllm:num_requests_running{engine=\"0\"}", 3.0);
    server.wait_for("llmtail_vllm_engine_up{engine=\"0\"}", 1.0);
    server.wait_for("llmtail_vllm_engine_starts_total{engine=\"0\"}", 2.0);
}

/// The shipped alert rules (`alerts/`): promtool accepts them, their unit tests
/// pass, and every series they name is one llmtail exports (a renamed series must not leave an
/// alert that can never fire).
#[test]
fn the_shipped_alert_rules_check_and_pass_their_unit_tests() {
    let Some(promtool) = tool("promtool") else {
        return;
    };
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("alerts");
    for args in [
        ["check", "rules", "llmtail.rules.yml"],
        ["test", "rules", "llmtail.test.yml"],
    ] {
        let out = std::process::Command::new(&promtool)
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "promtool {args:?}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let rules = std::fs::read_to_string(dir.join("llmtail.rules.yml")).unwrap();
    let exported: Vec<String> = llmtail::engines::families::all_metrics()
        .iter()
        .map(|m| m.sample_name())
        .collect();
    let named = rules
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .filter(|w| {
            ["vllm:", "lmdeploy:", "llmtail_", "nv_trt_llm_"]
                .iter()
                .any(|p| w.starts_with(p))
        });
    for name in named {
        assert!(
            exported.iter().any(|e| e == name),
            "an alert names {name}, which llmtail does not export"
        );
    }
}

/// LMDeploy's families under its own names and labels (`model_name`, `engine` = the DP rank),
/// from the 0.14 replay log, read a few seconds after its last line so that both ranks are up.
#[test]
fn a_real_prometheus_scrapes_lmdeploy_series_with_the_values_the_log_printed() {
    let Some(prometheus) = tool("prometheus") else {
        return;
    };
    let log = "fixtures/replay/lmdeploy-0.14-dp2-pytorch.log";
    // The last line is `[2026-03-10 09:01:00 DP1] ...`, read as UTC.
    let agent =
        RunningAgent::start_at(&["--log", log, "--model-name", "qwen3-8b"], 1_773_133_265.0);
    let server = Prometheus::scraping(&prometheus, agent.addr);

    let rank = |n: u32| format!("model_name=\"qwen3-8b\",engine=\"{n}\"");
    server.wait_for("up{job=\"llmtail\"}", 1.0);
    server.wait_for(
        &format!("lmdeploy:num_requests_succeeded{{{}}}", rank(0)),
        209.0,
    );
    server.wait_for(&format!("lmdeploy:num_requests_failed{{{}}}", rank(1)), 3.0);
    server.wait_for(
        &format!("lmdeploy:prefix_cache_hit_rate{{{}}}", rank(0)),
        0.415,
    );
    server.wait_for(
        &format!("lmdeploy:gpu_cache_usage_perc{{{}}}", rank(1)),
        0.0,
    );
    // 10 s x the sum of the rank's `in` and `out` throughputs.
    server.wait_for(
        &format!("lmdeploy:prompt_tokens_total{{{}}}", rank(1)),
        31568.0,
    );
    server.wait_for("sum(lmdeploy:generation_tokens_total)", 38878.0 + 21302.0);
    server.wait_for("sum(llmtail_lmdeploy_engine_up)", 2.0);
    server.wait_for(
        "llmtail_lines_parsed_total{grammar=\"lmdeploy_stats\"}",
        11.0,
    );
}

/// TGI's and TEI's own families, rebuilt from the replay logs' `Success` events (text with ANSI
/// colours, JSON, TEI), as a real Prometheus stores them: the names, the `log` label, TGI's
/// buckets with TGI's own `le` strings.
#[test]
fn a_real_prometheus_scrapes_tgis_and_teis_families_from_their_logs() {
    let Some(prometheus) = tool("prometheus") else {
        return;
    };
    let text = "fixtures/replay/tgi-3.x-docker-ansi.log";
    let json = "fixtures/replay/tgi-1.4-json-output.log";
    let tei = "fixtures/replay/tgi-tei-1.5-embed-rerank.log";
    let agent = RunningAgent::start(&["--log", text, "--log", json, "--log", tei]);
    let server = Prometheus::scraping(&prometheus, agent.addr);

    server.wait_for("up{job=\"llmtail\"}", 1.0);
    server.wait_for(&format!("tgi_request_success{{log=\"{text}\"}}"), 5.0);
    server.wait_for(&format!("tgi_request_success{{log=\"{json}\"}}"), 3.0);
    server.wait_for(
        &format!("tgi_batch_max_total_tokens{{log=\"{text}\"}}"),
        96528.0,
    );
    server.wait_for(
        &format!("tgi_request_duration_count{{log=\"{text}\"}}"),
        5.0,
    );
    server.wait_for(
        &format!("tgi_request_duration_sum{{log=\"{text}\"}}"),
        14.272337017,
    );
    // Requests of 0.097, 0.612, 1.25, 3.40 and 8.91 s: two at or under TGI's 22nd bound
    // (0.748 s), four under its 26th (3.79 s), written as TGI's exporter writes the bounds.
    let bound = |i: usize| llmtail::engines::tgi::TGI_DURATION_BOUNDS[i].to_string();
    server.wait_for(
        &format!(
            "tgi_request_duration_bucket{{log=\"{text}\",le=\"{}\"}}",
            bound(21)
        ),
        2.0,
    );
    server.wait_for(
        &format!(
            "tgi_request_duration_bucket{{log=\"{text}\",le=\"{}\"}}",
            bound(25)
        ),
        4.0,
    );
    server.wait_for(
        &format!("tgi_request_duration_bucket{{log=\"{text}\",le=\"+Inf\"}}"),
        5.0,
    );
    server.wait_for(
        &format!("tgi_request_mean_time_per_token_duration_count{{log=\"{json}\"}}"),
        3.0,
    );
    server.wait_for(
        "count(count by (__name__) ({__name__=~\"tgi_request_.*duration_count\"}))",
        5.0,
    );
    server.wait_for(
        &format!("te_request_inference_duration_count{{log=\"{tei}\"}}"),
        4.0,
    );
    server.wait_for(
        &format!("te_request_queue_duration_sum{{log=\"{tei}\"}}"),
        0.082343339,
    );
    server.wait_for("llmtail_lines_rejected_total{grammar=\"tgi_request\"}", 1.0);
}

/// Ollama's families from its replay log (journald, French months): the request counter by
/// route and status, the duration histogram, the per-log runner series. The values are the
/// golden's, counted by hand from the log (fixtures/README.md, "Ollama").
#[test]
fn a_real_prometheus_scrapes_ollamas_families_from_an_ollama_journal() {
    let Some(prometheus) = tool("prometheus") else {
        return;
    };
    let log = "fixtures/replay/ollama-0.11-journald-fr-rocm-crash.log";
    let agent = RunningAgent::start(&["--log", log]);
    let server = Prometheus::scraping(&prometheus, agent.addr);

    let chat = "method=\"POST\",path=\"/api/chat\"";
    server.wait_for("up{job=\"llmtail\"}", 1.0);
    server.wait_for("sum(llmtail_ollama_http_requests_total)", 16.0);
    server.wait_for(
        &format!("llmtail_ollama_http_requests_total{{{chat},status=\"500\"}}"),
        1.0,
    );
    server.wait_for(
        &format!("llmtail_ollama_http_requests_total{{{chat},status=\"200\"}}"),
        2.0,
    );
    // A scanner's `GET /.env` and `PROPFIND /`: bounded to `other`.
    server.wait_for(
        "llmtail_ollama_http_requests_total{method=\"GET\",path=\"other\",status=\"404\"}",
        1.0,
    );
    server.wait_for(
        "llmtail_ollama_http_requests_total{method=\"other\",path=\"/\",status=\"404\"}",
        1.0,
    );
    server.wait_for(
        &format!("llmtail_ollama_http_request_duration_seconds_count{{{chat}}}"),
        3.0,
    );
    server.wait_for(
        &format!("llmtail_ollama_http_request_duration_seconds_sum{{{chat}}}"),
        127.06713812,
    );
    // 23.2 s and 28.9 s are under 30 s; the 1m15s chat is not.
    server.wait_for(
        &format!(
            "llmtail_ollama_http_request_duration_seconds_bucket{{{chat},le=~\"30(\\\\.0)?\"}}"
        ),
        2.0,
    );
    server.wait_for("llmtail_ollama_runner_load_seconds", 7.02);
    server.wait_for("llmtail_ollama_runner_loads_total", 3.0);
    server.wait_for("llmtail_ollama_loaded_runners", 2.0);
    server.wait_for(
        "llmtail_lines_parsed_total{grammar=\"ollama_request\"}",
        16.0,
    );
}

/// SGLang's families under its own names and its collector's rank labels (`dp_rank`, `pp_rank`,
/// `tp_rank`), from the 0.5.5 DP=2 replay log, read a few seconds after its last line so that
/// both schedulers are up.
#[test]
fn a_real_prometheus_scrapes_sglang_series_with_the_values_the_log_printed() {
    let Some(prometheus) = tool("prometheus") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = &just_written_copy("fixtures/replay/sglang-0.5.5-dp2-retract.log", dir.path())
        .display()
        .to_string();
    // The last line is `[2025-11-11 04:06:29 DP0 TP0] Decode batch, ...`, read as UTC.
    let agent =
        RunningAgent::start_at(&["--log", log, "--model-name", "qwen3-8b"], 1_762_833_994.0);
    let server = Prometheus::scraping(&prometheus, agent.addr);

    let scheduler =
        |n: u32| format!("model_name=\"qwen3-8b\",dp_rank=\"{n}\",pp_rank=\"0\",tp_rank=\"{n}\"");
    server.wait_for("up{job=\"llmtail\"}", 1.0);
    server.wait_for(&format!("sglang:num_running_reqs{{{}}}", scheduler(0)), 5.0);
    server.wait_for(&format!("sglang:num_queue_reqs{{{}}}", scheduler(1)), 1.0);
    server.wait_for(
        &format!("sglang:num_used_tokens{{{}}}", scheduler(0)),
        4000.0,
    );
    server.wait_for(&format!("sglang:token_usage{{{}}}", scheduler(1)), 0.01);
    server.wait_for(&format!("sglang:gen_throughput{{{}}}", scheduler(0)), 100.0);
    server.wait_for(
        &format!("sglang:num_retracted_requests_total{{{}}}", scheduler(1)),
        1.0,
    );
    // Throughput x the seconds since the scheduler's previous decode line.
    server.wait_for("sum(llmtail_sglang_generation_tokens_total)", 780.0 + 240.0);
    server.wait_for("sum(llmtail_sglang_prefill_tokens_total)", 2954.0 + 1500.0);
    server.wait_for(
        &format!(
            "llmtail_sglang_prefill_cached_tokens_total{{{}}}",
            scheduler(0)
        ),
        1612.0,
    );
    server.wait_for("sum(llmtail_sglang_scheduler_up)", 2.0);
    server.wait_for("llmtail_lines_parsed_total{grammar=\"sglang_decode\"}", 7.0);
}
