//! The shipped Grafana dashboards (`dashboards/*.json`) and vLLM's own example dashboard
//! (`fixtures/dashboards/vllm-example-grafana.toml`) against a real Prometheus scraping the agent.
//!
//! The agent follows logs of vLLM 0.6.3 (V0), 0.14.1 and 0.32.0, of a TensorRT-LLM executor and
//! of a two-rank LMDeploy server, written now with the wall clock's times and kept growing while
//! the test runs, so every engine is up and every gauge exported (the shipped replay fixtures end
//! in the past: their engines are down and their gauges absent). Every target and every variable
//! query of every dashboard then goes through Prometheus' HTTP API, with the dashboard's variables
//! set to match everything, and must return series; the test names the dashboard, panel and query
//! of each that does not.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::prometheus::{encode, tool, Prometheus};
use crate::support::agent::{eventually, RunningAgent, TestClock};
use crate::support::writer::append_lines;

/// What a Grafana window variable (`$__rate_interval`, `$__interval`, `$__range`) stands for:
/// long enough to hold two scrapes a second apart from the test's start.
const WINDOW: &str = "1m";

/// vLLM's stats interval in the written logs.
const VLLM_INTERVAL: i64 = 5;

fn dashboards_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("dashboards")
}

/// Each shipped dashboard, by file name.
fn shipped_dashboards() -> Vec<(String, Value)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dashboards_dir())
        .expect("dashboards/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(path).unwrap();
            let board =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name} is not JSON: {e}"));
            (name, board)
        })
        .collect()
}

/// A query a dashboard runs: a panel's target, or a variable's `label_values(...)`.
#[derive(Debug, Clone)]
struct Query {
    dashboard: String,
    /// The panel title, or `variable <name>`.
    panel: String,
    /// As the dashboard has it.
    written: String,
    /// With the variables substituted: PromQL, or a label-values request.
    request: Request,
}

#[derive(Debug, Clone)]
enum Request {
    Expr(String),
    LabelValues { selector: String, label: String },
}

/// What Prometheus answered.
#[derive(Debug, PartialEq)]
enum Answer {
    Series(usize),
    Empty,
    Error(String),
}

impl Request {
    fn path(&self) -> String {
        match self {
            Request::Expr(promql) => format!("/api/v1/query?query={}", encode(promql)),
            Request::LabelValues { selector, label } => format!(
                "/api/v1/label/{label}/values?{}={}",
                encode("match[]"),
                encode(selector)
            ),
        }
    }

    fn ask(&self, server: &Prometheus) -> Answer {
        let Some(body) = server.api(&self.path()) else {
            return Answer::Error("Prometheus did not answer".into());
        };
        let Ok(json) = serde_json::from_str::<Value>(&body) else {
            return Answer::Error(format!("not JSON: {body}"));
        };
        if json["status"] != "success" {
            return Answer::Error(format!("{}: {}", json["errorType"], json["error"]));
        }
        let items = match self {
            Request::Expr(_) => &json["data"]["result"],
            Request::LabelValues { .. } => &json["data"],
        };
        match items.as_array().map(Vec::len) {
            Some(0) => Answer::Empty,
            Some(n) => Answer::Series(n),
            None => Answer::Error(format!("unexpected answer: {body}")),
        }
    }
}

/// `text` with Grafana's variables replaced: `$name` and `${name}` by `values`, the window
/// variables by [`WINDOW`]. Panics on a variable the dashboard does not define: Grafana would
/// send it as it is and the panel would be empty.
fn substitute(text: &str, values: &[(String, String)], context: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, len) = match after.strip_prefix('{') {
            Some(braced) => {
                let end = braced.find('}').expect("closing brace");
                (&braced[..end], end + 2)
            }
            None => {
                let end = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..end], end)
            }
        };
        let value = match name {
            "__rate_interval" | "__interval" | "__range" => WINDOW,
            _ => values
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
                .unwrap_or_else(|| panic!("{context}: ${name} is no variable of the dashboard")),
        };
        out.push_str(value);
        rest = &after[len..];
    }
    out.push_str(rest);
    out
}

/// `label_values(selector, label)` (or `label_values(label)`) as a label-values request.
fn label_values(query: &str, context: &str) -> Request {
    let inner = query
        .trim()
        .strip_prefix("label_values(")
        .and_then(|q| q.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{context}: not a label_values() query: {query}"));
    match inner.rsplit_once(',') {
        Some((selector, label)) => Request::LabelValues {
            selector: selector.trim().to_string(),
            label: label.trim().to_string(),
        },
        None => Request::LabelValues {
            selector: "{__name__=~\".+\"}".to_string(),
            label: inner.trim().to_string(),
        },
    }
}

/// Every panel of a dashboard, rows' nested panels included.
fn panels(board: &Value) -> Vec<&Value> {
    let mut all = Vec::new();
    for panel in board["panels"].as_array().into_iter().flatten() {
        all.push(panel);
        all.extend(panel["panels"].as_array().into_iter().flatten());
    }
    all
}

/// Every query of a shipped dashboard, its variables set to match every value.
fn queries_of(name: &str, board: &Value) -> Vec<Query> {
    let variables = board["templating"]["list"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let values: Vec<(String, String)> = variables
        .iter()
        .map(|v| {
            let name = v["name"].as_str().unwrap().to_string();
            let value = if v["type"] == "datasource" {
                "prometheus"
            } else {
                ".*"
            };
            (name, value.to_string())
        })
        .collect();
    let mut queries = Vec::new();
    for variable in variables.iter().filter(|v| v["type"] == "query") {
        let written = variable["query"]["query"]
            .as_str()
            .or(variable["query"].as_str())
            .unwrap()
            .to_string();
        let panel = format!("variable {}", variable["name"].as_str().unwrap());
        let context = format!("{name}, {panel}");
        let request = label_values(&substitute(&written, &values, &context), &context);
        queries.push(Query {
            dashboard: name.to_string(),
            panel,
            written,
            request,
        });
    }
    for panel in panels(board) {
        let title = panel["title"].as_str().unwrap_or("(untitled)");
        for target in panel["targets"].as_array().into_iter().flatten() {
            let written = target["expr"].as_str().unwrap().to_string();
            let context = format!("{name}, panel {title:?}");
            queries.push(Query {
                dashboard: name.to_string(),
                panel: title.to_string(),
                request: Request::Expr(substitute(&written, &values, &context)),
                written,
            });
        }
    }
    queries
}

/// Importable anywhere: a `datasource` variable of type datasource that every panel and target
/// names, the filters multi-select with "All", and a query on every panel that shows data.
#[test]
fn the_shipped_dashboards_take_their_datasource_from_a_variable_and_every_panel_has_a_query() {
    let boards = shipped_dashboards();
    let names: Vec<&str> = boards.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["llmtail.json", "lmdeploy.json", "trtllm.json", "vllm.json"]
    );
    let ds = serde_json::json!({"type": "prometheus", "uid": "${datasource}"});
    for (name, board) in &boards {
        let variables = board["templating"]["list"].as_array().unwrap();
        let datasource = variables.iter().find(|v| v["name"] == "datasource");
        assert!(
            datasource.is_some_and(|v| v["type"] == "datasource" && v["query"] == "prometheus"),
            "{name}: no datasource variable of type datasource for prometheus"
        );
        for variable in variables.iter().filter(|v| v["type"] == "query") {
            let vname = &variable["name"];
            assert_eq!(variable["datasource"], ds, "{name}: variable {vname}");
            assert!(
                variable["multi"] == true
                    && variable["includeAll"] == true
                    && variable["allValue"] == ".*",
                "{name}: variable {vname} is not multi-select with All (.*)"
            );
        }
        for panel in panels(board) {
            let title = &panel["title"];
            match panel["type"].as_str() {
                Some("row") | Some("text") => continue,
                _ => {}
            }
            assert_eq!(panel["datasource"], ds, "{name}: panel {title}");
            let targets = panel["targets"].as_array().map_or(&[][..], Vec::as_slice);
            assert!(!targets.is_empty(), "{name}: panel {title} has no query");
            for target in targets {
                assert_eq!(
                    target["datasource"], ds,
                    "{name}: a target of panel {title}"
                );
            }
        }
    }
    let vllm = &boards.iter().find(|(n, _)| n == "vllm.json").unwrap().1;
    let filters: Vec<&str> = vllm["templating"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["type"] == "query")
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(filters, ["instance", "model_name", "engine"]);
    assert!(
        panels(vllm).iter().any(|p| p["type"] == "text"
            && p["options"]["content"]
                .as_str()
                .is_some_and(|c| c.contains("time to first token"))),
        "vllm.json: no text panel saying what a log cannot tell"
    );
}

/// `MM-DD HH:MM:SS` in UTC, as vLLM's record heads print it (the agent reads them as UTC).
fn vllm_time(at: i64) -> String {
    jiff::Timestamp::from_second(at)
        .unwrap()
        .to_zoned_datetime(jiff::tz::TimeZone::UTC)
        .strftime("%m-%d %H:%M:%S")
        .to_string()
}

/// Engine logs written with the wall clock's times: a start-up and a few stats lines at
/// [`VLLM_INTERVAL`] up to now, then, on a thread of their own, a stats line per interval
/// (vLLM, LMDeploy) and an iteration record per second (TensorRT-LLM) while the test runs.
struct LiveLogs {
    dir: tempfile::TempDir,
    /// The vLLM log of each version, with its served model name.
    vllm: Vec<(&'static str, &'static str, PathBuf)>,
    trtllm: PathBuf,
    lmdeploy: PathBuf,
}

/// The vLLM versions of the written logs. V0 gives swapped requests, CPU KV cache, GPU and CPU
/// prefix cache, preemption warnings and block counts; 0.14.1 prints every prompt token
/// (`vllm:prompt_tokens_total`) and preemptions; 0.32.0 only locally computed prompt tokens
/// (`vllm:prompt_tokens_by_source_total`).
const V0: &str = "0.6.3";
const V1_014: &str = "0.14.1";
const V1_032: &str = "0.32.0";

impl LiveLogs {
    fn start_up(version: &str, at: i64) -> Vec<String> {
        let c = vllm_time(at);
        match version {
            V0 => vec![
                format!("INFO {c} llm_engine.py:237] Initializing an LLM engine (v0.6.3.post1) with config: model='Qwen/Qwen2.5-7B-Instruct', speculative_config=None, tokenizer='Qwen/Qwen2.5-7B-Instruct', max_seq_len=16384, served_model_name=qwen2.5-7b, enable_prefix_caching=True"),
                format!("INFO {c} gpu_executor.py:122] # GPU blocks: 23456, # CPU blocks: 4681"),
                format!("INFO {c} gpu_executor.py:126] Maximum concurrency for 16384 tokens per request: 22.91x"),
            ],
            V1_014 => vec![
                format!("(EngineCore_DP0 pid=276) INFO {c} [core.py:93] Initializing a V1 LLM engine (v0.14.1) with config: model='/models/qwen3-8b', speculative_config=None, max_seq_len=32768, served_model_name=qwen3-8b, enable_prefix_caching=True"),
                format!("(EngineCore_DP0 pid=276) INFO {c} [kv_cache_utils.py:1305] GPU KV cache size: 2,042,016 tokens, Maximum concurrency for 32,768 tokens per request: 62.32x"),
                format!("(APIServer pid=812) INFO {c} [api_server.py:1014] Supported tasks: ['generate']"),
                // Usage over 100%: rejected, so the agent dashboard's rejected panel has a series.
                format!("(APIServer pid=812) INFO {c} [loggers.py:257] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 1.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 163.1%, Prefix cache hit rate: 0.0%"),
            ],
            _ => vec![
                format!("(EngineCore pid=142) INFO {c} [core.py:133] Initializing a V1 LLM engine (v0.32.0) with config: model='meta-llama/Llama-3.1-8B-Instruct', speculative_config=None, max_seq_len=32768, served_model_name=llama-3.1-8b, enable_prefix_caching=True"),
                format!("(EngineCore pid=142) INFO {c} [kv_cache_utils.py:2327] GPU KV cache size: 463,360 tokens, Maximum concurrency for 32,768 tokens per request: 14.14x"),
                format!("(APIServer pid=1) INFO {c} [entry.py:136] Supported tasks: ['generate']"),
            ],
        }
    }

    /// The stats lines of one interval; `n` counts them (preemptions grow with it).
    fn stats(version: &str, at: i64, n: u64) -> Vec<String> {
        let c = vllm_time(at);
        match version {
            V0 => vec![
                format!("INFO {c} metrics.py:349] Avg prompt throughput: 1204.3 tokens/s, Avg generation throughput: 22.0 tokens/s, Running: 4 reqs, Swapped: 1 reqs, Pending: 2 reqs, GPU KV cache usage: 8.7%, CPU KV cache usage: 1.5%."),
                format!("INFO {c} metrics.py:365] Prefix cache hit rate: GPU: 12.50%, CPU: 3.00%"),
                format!("WARNING {c} scheduler.py:1481] Sequence group {n} is preempted by PreemptionMode.SWAP mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption={n}"),
            ],
            V1_014 => vec![format!("(APIServer pid=812) INFO {c} [loggers.py:257] Engine 000: Avg prompt throughput: 1245.3 tokens/s, Avg generation throughput: 312.8 tokens/s, Running: 14 reqs, Waiting: 2 reqs, Preemptions: 1, GPU KV cache usage: 63.1%, Prefix cache hit rate: 41.7%")],
            _ => vec![format!("(APIServer pid=1) INFO {c} [loggers.py:335] Engine 000: Avg prompt throughput: 120.0 tokens/s, Avg generation throughput: 40.0 tokens/s, Running: 3 reqs, Waiting: 1 reqs, GPU KV cache usage: 4.0%, Prefix cache hit rate: 20.0%")],
        }
    }

    /// A trtllm-serve IterationStats record (the key set of the 1.0 replay fixture) at `at`.
    fn iteration(at: f64, iter: u64) -> String {
        let seconds = at.floor() as i64;
        let micros = ((at - at.floor()) * 1e6) as u32;
        let time = jiff::Timestamp::from_second(seconds)
            .unwrap()
            .to_zoned_datetime(jiff::tz::TimeZone::UTC)
            .strftime("%m-%d-%Y %H:%M:%S")
            .to_string()
            + &format!(".{micros:06}");
        let latency = 10.0 + (iter % 7) as f64 * 3.5;
        let reused = iter * 2;
        let missed = iter * 6;
        format!(
            "[{{\"cpuMemUsage\":68172,\"gpuMemUsage\":36100332423,\"inflightBatchingStats\":{{\"avgNumDecodedTokensPerIter\":1.0,\"microBatchId\":0,\"numContextRequests\":1,\"numCtxTokens\":412,\"numGenRequests\":2,\"numPausedRequests\":0,\"numScheduledRequests\":3}},\"iter\":{iter},\"iterLatencyMS\":{latency},\"kvCacheStats\":{{\"allocNewBlocks\":13,\"allocTotalBlocks\":13,\"cacheHitRate\":0.25,\"freeNumBlocks\":22900,\"maxNumBlocks\":22955,\"missedBlocks\":{missed},\"reusedBlocks\":{reused},\"tokensPerBlock\":32,\"usedNumBlocks\":55}},\"maxBatchSizeRuntime\":256,\"maxBatchSizeStatic\":2048,\"maxBatchSizeTunerRecommended\":256,\"maxNumActiveRequests\":2048,\"maxNumTokensRuntime\":8192,\"maxNumTokensStatic\":8192,\"maxNumTokensTunerRecommended\":0,\"newActiveRequestsQueueLatencyMS\":0.0,\"numActiveRequests\":3,\"numCompletedRequests\":1,\"numNewActiveRequests\":1,\"numQueuedRequests\":1,\"pinnedMemUsage\":2952841216,\"specDecodingStats\":null,\"staticBatchingStats\":null,\"timestamp\":\"{time}\"}}]"
        )
    }

    /// LMDeploy's stats lines of one interval, one per data-parallel rank (0.13+ grouped form
    /// with the prefix-cache part and the spec-decoding message); `n` grows the server's counts.
    fn lmdeploy_stats(at: i64, n: u64) -> Vec<String> {
        let date = jiff::Timestamp::from_second(at)
            .unwrap()
            .to_zoned_datetime(jiff::tz::TimeZone::UTC)
            .strftime("%Y-%m-%d %H:%M:%S")
            .to_string();
        (0..2)
            .map(|rank| {
                format!(
                    "[{date} DP{rank}] Avg thr (in/out): 812.4 / 133.9 tokens/s, Server (succeeded/failed/routed/waiting): {} / {} / 12 / 0, Engine (running/waiting): 12 / 1, KV cache: 30.2%, Prefix cache hit rate: 19.0%, SpecDecoding metrics: Draft acceptance rate: 62.50%, Mean acceptance length: 2.88, Accepted: 450 tokens, Drafted: 720 tokens, Per-position acceptance rate: 0.833, 0.625, 0.417",
                    10 * n,
                    n / 3
                )
            })
            .collect()
    }

    /// The logs as they stand at `now`: started 30 s ago, a stats line every interval since.
    fn write(now: f64) -> LiveLogs {
        let dir = tempfile::tempdir().unwrap();
        let now_s = now as i64;
        let mut vllm = Vec::new();
        for (version, model) in [
            (V0, "qwen2.5-7b"),
            (V1_014, "qwen3-8b"),
            (V1_032, "llama-3.1-8b"),
        ] {
            let path = dir.path().join(format!("vllm-{version}.log"));
            let mut lines = LiveLogs::start_up(version, now_s - 30);
            for (n, at) in (now_s - 4 * VLLM_INTERVAL..=now_s)
                .step_by(VLLM_INTERVAL as usize)
                .enumerate()
            {
                lines.extend(LiveLogs::stats(version, at, n as u64 + 1));
            }
            append_lines(&path, &lines.iter().map(String::as_str).collect::<Vec<_>>());
            vllm.push((version, model, path));
        }
        let trtllm = dir.path().join("trtllm.log");
        let records: Vec<String> = (0..4)
            .map(|i| LiveLogs::iteration(now - 3.0 + i as f64, 60 + i))
            .collect();
        append_lines(
            &trtllm,
            &records.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        let lmdeploy = dir.path().join("lmdeploy.log");
        let mut lines = Vec::new();
        for (n, at) in (now_s - 4 * VLLM_INTERVAL..=now_s)
            .step_by(VLLM_INTERVAL as usize)
            .enumerate()
        {
            lines.extend(LiveLogs::lmdeploy_stats(at, n as u64 + 1));
        }
        append_lines(
            &lmdeploy,
            &lines.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        LiveLogs {
            dir,
            vllm,
            trtllm,
            lmdeploy,
        }
    }

    fn args(&self) -> Vec<String> {
        let mut args = Vec::new();
        for path in (self.vllm.iter().map(|(_, _, p)| p)).chain([&self.trtllm, &self.lmdeploy]) {
            args.push("--log".to_string());
            args.push(path.display().to_string());
        }
        args
    }

    /// Keeps the logs growing with the wall clock's times, and the agent's clock on the wall
    /// clock, until the returned guard is dropped.
    fn follow(&self, clock: TestClock, started: f64) -> Follower {
        let stop = Arc::new(AtomicBool::new(false));
        let vllm: Vec<(&'static str, PathBuf)> =
            self.vllm.iter().map(|(v, _, p)| (*v, p.clone())).collect();
        let trtllm = self.trtllm.clone();
        let lmdeploy = self.lmdeploy.clone();
        let stopping = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut next_stats = started as i64 + VLLM_INTERVAL;
            let mut n = 100;
            let mut iter = 64;
            while !stopping.load(Ordering::SeqCst) {
                let now = wall_clock();
                clock.set(now);
                if now as i64 >= next_stats {
                    for (version, path) in &vllm {
                        let lines = LiveLogs::stats(version, now as i64, n);
                        append_lines(path, &lines.iter().map(String::as_str).collect::<Vec<_>>());
                    }
                    let lines = LiveLogs::lmdeploy_stats(now as i64, n);
                    append_lines(
                        &lmdeploy,
                        &lines.iter().map(String::as_str).collect::<Vec<_>>(),
                    );
                    n += 1;
                    next_stats += VLLM_INTERVAL;
                }
                append_lines(&trtllm, &[&LiveLogs::iteration(now, iter)]);
                iter += 1;
                // The engines' pace, not a wait for a result.
                std::thread::sleep(Duration::from_millis(500));
            }
        });
        Follower {
            stop,
            thread: Some(thread),
        }
    }
}

/// Stops [`LiveLogs::follow`]'s writer when dropped.
struct Follower {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Follower {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn wall_clock() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// What vLLM's example dashboard shows on llmtail: `fixtures/dashboards/vllm-example-grafana.toml`.
#[derive(serde::Deserialize)]
struct Example {
    variable: String,
    panel: Vec<ExamplePanel>,
}

#[derive(serde::Deserialize)]
struct ExamplePanel {
    title: String,
    why: String,
    queries: Vec<ExampleQuery>,
}

#[derive(serde::Deserialize)]
struct ExampleQuery {
    expect: String,
    expr: String,
}

impl ExampleQuery {
    /// Whether the query returns series on a log of this vLLM version.
    fn has_data(&self, version: &str) -> bool {
        match self.expect.as_str() {
            "data" => true,
            "empty" => false,
            "data up to 0.15" => version != V1_032,
            other => panic!("unknown expect {other:?} in the example fixture"),
        }
    }
}

fn example() -> Example {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/dashboards/vllm-example-grafana.toml");
    toml::from_str(&std::fs::read_to_string(path).unwrap()).expect("the example fixture parses")
}

/// The guide's table of vLLM's example dashboard, rendered from the fixture.
fn example_table(example: &Example) -> String {
    let mut out = String::from("| panel | on llmtail | why |\n|---|---|---|\n");
    for panel in &example.panel {
        let expects: Vec<&str> = panel.queries.iter().map(|q| q.expect.as_str()).collect();
        let shows = if expects.iter().all(|e| *e == "data") {
            "works"
        } else if expects.iter().all(|e| *e == "empty") {
            "stays empty"
        } else {
            "partly"
        };
        out.push_str(&format!("| {} | {shows} | {} |\n", panel.title, panel.why));
    }
    out
}

/// The guide says which panels of vLLM's example dashboard work; that list is the fixture the
/// live test checks. `LLMTAIL_BLESS=1` rewrites it.
#[test]
fn the_guides_table_of_vllms_example_dashboard_is_the_checked_fixture() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/GUIDE.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let (begin, end) = ("<!-- vllm-example:begin -->\n", "<!-- vllm-example:end -->");
    let start = readme
        .find(begin)
        .expect("docs/GUIDE.md has vllm-example:begin")
        + begin.len();
    let stop = readme
        .find(end)
        .expect("docs/GUIDE.md has vllm-example:end");
    let table = example_table(&example());
    if std::env::var_os("LLMTAIL_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(
            &path,
            format!("{}{table}{}", &readme[..start], &readme[stop..]),
        )
        .unwrap();
        return;
    }
    assert_eq!(
        &readme[start..stop],
        table,
        "docs/GUIDE.md's table of vLLM's example dashboard is stale: LLMTAIL_BLESS=1 cargo test --test integration dashboards"
    );
}

/// The queries of vLLM's example dashboard with `$model_name` set to each log's model: what
/// each should answer.
fn example_queries(example: &Example, logs: &LiveLogs) -> Vec<(Query, bool)> {
    let mut queries = Vec::new();
    for (version, model, _) in &logs.vllm {
        let values = [("model_name".to_string(), model.to_string())];
        for panel in &example.panel {
            for query in &panel.queries {
                let context = format!("vLLM's example, panel {:?}", panel.title);
                queries.push((
                    Query {
                        dashboard: format!("vLLM's example dashboard, vLLM {version} log"),
                        panel: panel.title.clone(),
                        written: query.expr.clone(),
                        request: Request::Expr(substitute(&query.expr, &values, &context)),
                    },
                    query.has_data(version),
                ));
            }
        }
    }
    let variable = Query {
        dashboard: "vLLM's example dashboard".into(),
        panel: "variable model_name".into(),
        written: example.variable.clone(),
        request: label_values(&example.variable, "vLLM's example"),
    };
    queries.push((variable, true));
    queries
}

fn report(failures: &[(&Query, Answer)]) -> String {
    failures
        .iter()
        .map(|(q, answer)| {
            format!(
                "\n  {} / {}: {answer:?}\n    query:   {}\n    request: {:?}",
                q.dashboard, q.panel, q.written, q.request
            )
        })
        .collect()
}

#[test]
fn every_query_of_every_shipped_dashboard_returns_series_from_a_real_prometheus() {
    let Some(prometheus) = tool("prometheus") else {
        return;
    };
    let begun = Instant::now();
    let now = wall_clock();
    let logs = LiveLogs::write(now);
    let args = logs.args();
    let agent = RunningAgent::start_at(&args.iter().map(String::as_str).collect::<Vec<_>>(), now);
    let _writer = logs.follow(agent.clock.clone(), now);
    let server = Prometheus::scraping(&prometheus, agent.addr);

    let shipped: Vec<Query> = shipped_dashboards()
        .iter()
        .flat_map(|(name, board)| queries_of(name, board))
        .collect();
    assert!(shipped.len() > 40, "only {} queries found", shipped.len());
    let example = example();
    let example_queries = example_queries(&example, &logs);

    // Every shipped query, and every example query that should show data, returns series.
    let must_have_data: Vec<&Query> = shipped
        .iter()
        .chain(
            example_queries
                .iter()
                .filter(|(_, data)| *data)
                .map(|(q, _)| q),
        )
        .collect();
    let mut failures = Vec::new();
    let held = eventually(|| {
        failures = must_have_data
            .iter()
            .map(|q| (*q, q.request.ask(&server)))
            .filter(|(_, answer)| !matches!(answer, Answer::Series(_)))
            .collect();
        failures.is_empty()
    });
    assert!(
        held,
        "{} of {} dashboard queries returned no series (logs in {}):{}",
        failures.len(),
        must_have_data.len(),
        logs.dir.path().display(),
        report(&failures)
    );

    // With every series there, the example's queries that stay empty on llmtail return nothing
    // (and no error: an error would hide a wrong claim).
    let not_empty: Vec<(&Query, Answer)> = example_queries
        .iter()
        .filter(|(_, data)| !*data)
        .map(|(q, _)| (q, q.request.ask(&server)))
        .filter(|(_, answer)| *answer != Answer::Empty)
        .collect();
    assert!(
        not_empty.is_empty(),
        "queries of vLLM's example dashboard the guide says stay empty on llmtail:{}",
        report(&not_empty)
    );
    eprintln!(
        "{} dashboard queries and {} of vLLM's example checked in {:.1} s",
        shipped.len(),
        example_queries.len(),
        begun.elapsed().as_secs_f64()
    );
}
