//! The agent as a user runs it: follow a vLLM log, scrape `/metrics`, get vLLM's own names
//! with the values the lines print. The binary's own contract (flags, exit codes, SIGTERM)
//! is checked on the real executable.

use std::process::{Command, Stdio};

use crate::support::agent::{
    eventually, expect_sample, http_get, on_path, sample, RunningAgent, TESTS_NOW,
};
use crate::support::process::AgentProcess;
use crate::support::writer::append_lines as append;

const CONFIG_LINE: &str = "(EngineCore_DP0 pid=276) INFO 11-22 13:20:01 [core.py:93] Initializing a V1 LLM engine (v0.14.0) with config: model='/models/qwen3-8b', speculative_config=None, tokenizer='/models/qwen3-8b', max_seq_len=32768, served_model_name=qwen3-8b, enable_prefix_caching=True";
const ISSUE_LINE: &str = "(APIServer pid=812) INFO 11-22 13:25:01 [loggers.py:257] Engine 000: Avg prompt throughput: 1245.3 tokens/s, Avg generation throughput: 312.8 tokens/s, Running: 14 reqs, Waiting: 2 reqs, GPU KV cache usage: 63.1%, Prefix cache hit rate: 41.7%";
const NEXT_LINE: &str = "(APIServer pid=812) INFO 11-22 13:25:11 [loggers.py:257] Engine 000: Avg prompt throughput: 100.0 tokens/s, Avg generation throughput: 50.0 tokens/s, Running: 3 reqs, Waiting: 0 reqs, Preemptions: 2, GPU KV cache usage: 7.8%, Prefix cache hit rate: 42.0%";

#[test]
fn a_stats_line_appended_to_the_log_shows_on_metrics_under_vllms_names() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    append(&log, &[CONFIG_LINE]);
    let log_label = log.to_str().unwrap();
    let agent = RunningAgent::start(&["--log", log_label, "--label", "instance_group=a"]);

    append(
        &log,
        &[
            "INFO:     127.0.0.1:46228 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
            ISSUE_LINE,
        ],
    );
    let engine: &[(&str, &str)] = &[
        ("engine", "0"),
        ("model_name", "qwen3-8b"),
        ("log", log_label),
        ("instance_group", "a"),
    ];
    let metrics = agent.wait_for("the first stats line", |m| {
        sample(m, "vllm:num_requests_running", engine).is_some()
    });
    let expected = [
        ("vllm:num_requests_running", 14.0),
        ("vllm:num_requests_waiting", 2.0),
        ("vllm:kv_cache_usage_perc", 0.631),
        ("vllm:gpu_cache_usage_perc", 0.631),
        ("vllm:gpu_prefix_cache_hit_rate", 0.417),
        ("vllm:avg_prompt_throughput_toks_per_s", 1245.3),
        ("vllm:avg_generation_throughput_toks_per_s", 312.8),
        ("vllm:prompt_tokens_total", 12453.0),
        ("vllm:generation_tokens_total", 3128.0),
    ];
    for (name, value) in expected {
        let got =
            sample(&metrics, name, engine).unwrap_or_else(|| panic!("{name} missing:\n{metrics}"));
        assert!(
            (got - value).abs() < 1e-9,
            "{name}: expected {value}, got {got}"
        );
    }
    assert_eq!(
        sample(&metrics, "vllm:num_requests_swapped", &[]),
        None,
        "a V1 line has no swapped queue"
    );
    assert_eq!(
        sample(&metrics, "llmtail_lines_read_total", &[("log", log_label)]),
        Some(3.0)
    );
    assert_eq!(
        sample(
            &metrics,
            "llmtail_lines_parsed_total",
            &[("grammar", "vllm_stats")]
        ),
        Some(1.0)
    );
    assert_eq!(
        sample(
            &metrics,
            "llmtail_lines_unmatched_total",
            &[("log", log_label)]
        ),
        Some(1.0)
    );

    // Ten seconds later: gauges follow, counters add throughput x 10 s.
    append(&log, &[NEXT_LINE]);
    let metrics = agent.wait_for("the second stats line", |m| {
        sample(m, "vllm:num_requests_running", engine) == Some(3.0)
    });
    assert_eq!(
        sample(&metrics, "vllm:prompt_tokens_total", engine),
        Some(12453.0 + 1000.0)
    );
    assert_eq!(
        sample(&metrics, "vllm:generation_tokens_total", engine),
        Some(3128.0 + 500.0)
    );
    assert_eq!(
        sample(&metrics, "vllm:num_preemptions_total", engine),
        Some(2.0)
    );
    assert_eq!(
        sample(&metrics, "vllm:kv_cache_usage_perc", engine),
        Some(0.078)
    );
    agent.stop().unwrap();
}

#[test]
fn metrics_are_open_metrics_for_prometheus_and_text_0_0_4_for_everyone_else() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    append(&log, &[ISSUE_LINE]);
    let agent = RunningAgent::start(&["--log", log.to_str().unwrap()]);
    let prometheus_accept = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    let open_metrics = http_get(agent.addr, "/metrics", Some(prometheus_accept)).unwrap();
    assert_eq!(open_metrics.status, 200);
    assert_eq!(
        open_metrics.content_type,
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    );
    assert!(open_metrics.body.ends_with("# EOF\n"));
    assert!(open_metrics
        .body
        .contains("# TYPE vllm:generation_tokens counter\n"));

    let text = http_get(agent.addr, "/metrics", None).unwrap();
    assert_eq!(
        text.content_type,
        "text/plain; version=0.0.4; charset=utf-8"
    );
    assert!(!text.body.contains("# EOF"));
    assert!(text
        .body
        .contains("# TYPE vllm:generation_tokens_total counter\n"));
}

#[test]
fn the_landing_page_and_health_endpoints_say_what_is_followed() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    append(&log, &[CONFIG_LINE, ISSUE_LINE]);
    // The lines' 13:25 in Tokyo is 04:25 UTC: the agent's clock a few seconds later.
    let agent = RunningAgent::start_at(
        &[
            "--log",
            log.to_str().unwrap(),
            "--web.telemetry-path",
            "/vllm-metrics",
            "--log-timezone",
            "Asia/Tokyo",
        ],
        TESTS_NOW - 9.0 * 3600.0,
    );
    let page = http_get(agent.addr, "/", Some("text/html,application/xhtml+xml")).unwrap();
    assert_eq!(page.status, 200);
    assert!(page.content_type.starts_with("text/html"));
    assert!(page.body.contains("href=\"/vllm-metrics\""));
    assert!(page.body.contains(log.to_str().unwrap()));
    assert!(page.body.contains("qwen3-8b"));
    assert!(page.body.contains("<td>Asia/Tokyo</td>"), "{}", page.body);
    assert_eq!(agent.get("/-/healthy").unwrap().status, 200);
    assert_eq!(agent.get("/-/ready").unwrap().status, 200);
    assert!(sample(
        &agent.get("/vllm-metrics").unwrap().body,
        "vllm:num_requests_running",
        &[]
    )
    .is_some());
    assert_eq!(agent.get("/metrics").unwrap().status, 404);
}

/// The landing page said "waiting" for a log that does not exist yet and left out a
/// glob that matches nothing; it now says why a log is not open, and lists such globs.
#[test]
fn the_landing_page_says_why_a_log_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("later.log");
    let glob = format!("{}/*.txt", dir.path().display());
    let read = dir.path().join("vllm.log");
    append(&read, &[CONFIG_LINE, ISSUE_LINE]);
    // Never ready (`/-/ready` is 503 while a log cannot be opened): the page is waited for.
    let agent = RunningAgent::launch(
        &[
            "--log",
            missing.to_str().unwrap(),
            "--log",
            &glob,
            "--log",
            read.to_str().unwrap(),
        ],
        TESTS_NOW,
    );
    let mut page = String::new();
    assert!(
        eventually(|| {
            page = http_get(agent.addr, "/", Some("text/html"))
                .map_or_else(|_| String::new(), |r| r.body);
            page.contains("<td class=\"good\">open</td>") && page.contains("rejected")
        }),
        "{page}"
    );
    assert!(page.contains("waiting for the file to appear"), "{page}");
    assert!(page.contains(&format!("<code>{glob}</code>")), "{page}");
    assert!(page.contains("no file matches yet"), "{page}");
    assert!(page.contains("<td class=\"good\">open</td>"), "{page}");
    assert!(
        page.contains("records parsed") && page.contains("rejected"),
        "{page}"
    );
}

/// The landing page answers "is it working?" for a browser and for curl alike: how
/// many logs are open and engines up, each engine's status, version, model and interval, and
/// the settings in force.
#[test]
fn the_landing_page_answers_is_it_working_in_html_and_in_plain_text() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    append(&log, &[CONFIG_LINE, ISSUE_LINE]);
    let agent = RunningAgent::start(&[
        "--log",
        log.to_str().unwrap(),
        "--label",
        "team=inference",
        "--max-series",
        "5000",
    ]);
    let text = agent.get("/").unwrap();
    assert!(text.content_type.starts_with("text/plain"), "{text:?}");
    let page = text.body;
    for expected in [
        "1 of 1 log files open; 1 engines up, 0 idle, 0 down.",
        "vLLM engines",
        "0.14.0 (from the log)",
        "qwen3-8b",
    ] {
        assert!(page.contains(expected), "{expected:?} not in:\n{page}");
    }
    let setting = |name: &str| {
        page.lines()
            .find_map(|l| l.trim_start().strip_prefix(name)?.strip_prefix(' '))
            .map(str::trim)
            .unwrap_or_else(|| panic!("no setting {name} in:\n{page}"))
    };
    assert_eq!(setting("--max-series"), "5000");
    assert_eq!(setting("--label"), "team=inference");
    assert_eq!(setting("--web.enable-lifecycle"), "false");
    assert!(setting("last reload").starts_with("none since start-up"));
    let html = http_get(agent.addr, "/", Some("text/html")).unwrap().body;
    assert!(html.contains("<style>"), "{html}");
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "external asset: {html}"
    );
    assert!(html.contains("<td class=\"good\">up</td>"), "{html}");
}

#[test]
fn from_end_only_follows_new_lines_and_from_start_rebuilds_the_state() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    append(&log, &[CONFIG_LINE, ISSUE_LINE]);
    let path = log.to_str().unwrap();

    let from_start = RunningAgent::start(&["--log", path]);
    let rebuilt = from_start.metrics();
    assert_eq!(
        sample(
            &rebuilt,
            "vllm:num_requests_running",
            &[("model_name", "qwen3-8b")]
        ),
        Some(14.0)
    );
    assert_eq!(
        sample(&rebuilt, "vllm:prompt_tokens_total", &[]),
        Some(12453.0)
    );
    drop(from_start);

    let from_end = RunningAgent::start(&["--log", path, "--from", "end"]);
    assert_eq!(
        sample(&from_end.metrics(), "vllm:num_requests_running", &[]),
        None
    );
    append(&log, &[NEXT_LINE]);
    let metrics = from_end.wait_for("the new line", |m| {
        sample(m, "vllm:num_requests_running", &[]).is_some()
    });
    assert_eq!(
        sample(&metrics, "vllm:num_requests_running", &[]),
        Some(3.0)
    );
    // The config line was before the end: the model name comes from --model-name or nothing.
    assert_eq!(
        sample(&metrics, "vllm:num_requests_running", &[("model_name", "")]),
        Some(3.0)
    );
}

fn llmtail() -> Command {
    Command::new(env!("CARGO_BIN_EXE_llmtail"))
}

#[test]
fn bad_flags_and_config_stop_start_up_with_exit_code_2_and_a_fix() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("llmtail.toml");
    std::fs::write(&config, "[web]\nlisten_adress = \"127.0.0.1:9\"\n").unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec![], "no log to follow"),
        (
            vec!["--log", "x.log", "--label", "bad"],
            "is not NAME=VALUE",
        ),
        (
            vec!["--log", "x.log", "--from", "middle"],
            "invalid value 'middle'",
        ),
        (vec!["--log", "/var/log/[oops"], "bad glob"),
        (
            vec!["--log", "x.log", "--vllm-stats-interval", "1e308"],
            "--vllm-stats-interval: 1e308 seconds is outside the stats intervals vLLM accepts (0.1 to 86400 seconds)",
        ),
        (
            vec!["--config", config.to_str().unwrap()],
            "llmtail.toml, line 2",
        ),
    ];
    for (args, expected) in cases {
        let out = llmtail().args(&args).stdin(Stdio::null()).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

#[test]
fn help_explains_every_flag() {
    let out = llmtail().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--log",
        "--web.listen-address",
        "--web.telemetry-path",
        "--from",
        "--model-name",
        "--label",
        "--vllm-stats-interval",
        "--config",
        "--envelope",
        "--log-timezone",
        "--max-line-bytes",
        "--state-file",
        "--one-shot",
    ] {
        assert!(
            help.contains(flag),
            "--help does not mention {flag}:\n{help}"
        );
    }
}

#[test]
fn one_shot_prints_the_metrics_of_a_log_and_exits() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    append(&log, &[CONFIG_LINE, ISSUE_LINE]);
    let out = llmtail()
        .args(["--log", log.to_str().unwrap(), "--one-shot"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metrics = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        sample(
            &metrics,
            "vllm:num_requests_running",
            &[("model_name", "qwen3-8b")]
        ),
        Some(14.0)
    );
}

/// A log named with `\x1b[2J` and a newline (matched by a glob) was printed raw: `curl /`
/// cleared the terminal, and the agent's stderr had a line that was not its own.
#[test]
fn control_characters_of_a_file_name_reach_neither_the_landing_page_nor_stderr_raw() {
    let dir = tempfile::tempdir().unwrap();
    append(&dir.path().join("a\u{1b}[2Jb\nc.log"), &[ISSUE_LINE]);
    let escaped = format!("{}/a\\x1b[2Jb\\nc.log", dir.path().display());
    let mut command = llmtail();
    command
        .args(["--log", &format!("{}/*.log", dir.path().display())])
        .args(["--log-timezone", "UTC"]);
    let mut agent = AgentProcess::spawn(command);
    let addr = agent.addr;
    let mut text = String::new();
    let listed = eventually(|| {
        text = http_get(addr, "/", None)
            .map(|r| r.body)
            .unwrap_or_default();
        text.contains(&escaped)
    });
    let html = http_get(addr, "/", Some("text/html")).unwrap().body;
    let (exited, _) = agent.terminate();
    if exited.is_none() {
        let _ = agent.child.kill();
    }
    let stderr = agent.stderr.all();

    assert!(listed, "the file is not listed as {escaped}:\n{text}");
    for (what, page) in [("text", &text), ("HTML", &html), ("stderr", &stderr)] {
        assert!(!page.contains('\u{1b}'), "a raw ESC in the {what}:\n{page}");
        assert!(
            !page.contains("b\nc.log"),
            "a raw newline in the {what}:\n{page}"
        );
    }
    assert!(html.contains(&format!("<code>{escaped}</code>")), "{html}");
    assert!(
        stderr.contains(&format!("following log path={escaped}")),
        "{stderr}"
    );
}

/// A log named in Latin-1 under a glob was skipped by the `glob` crate, which matches names as
/// `&str`: its stats lines never reached `/metrics`. Its label writes the byte as `\xe9` (and
/// the exposition escapes that backslash as `\\`).
#[test]
fn a_glob_counts_the_lines_of_a_file_whose_name_is_not_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join(std::ffi::OsStr::from_bytes(b"caf\xe9.log"));
    append(&log, &[CONFIG_LINE, ISSUE_LINE]);
    let agent = RunningAgent::start(&["--log", &format!("{}/*.log", dir.path().display())]);

    let label = format!("{}/caf\\\\xe9.log", dir.path().display());
    let metrics = agent.wait_for("the Latin-1 log's lines", |m| {
        sample(m, "llmtail_lines_read_total", &[("log", &label)]) == Some(2.0)
    });
    assert_eq!(
        sample(&metrics, "vllm:num_requests_running", &[("log", &label)]),
        Some(14.0),
        "{metrics}"
    );
}

#[test]
fn sigterm_shuts_the_agent_down_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    append(&log, &[ISSUE_LINE]);
    let mut command = llmtail();
    command.args(["--log", log.to_str().unwrap()]);
    let mut agent = AgentProcess::spawn(command);
    let addr = agent.addr;
    assert!(
        eventually(|| http_get(addr, "/-/ready", None).is_ok_and(|r| r.status == 200)),
        "never ready"
    );
    let (status, _) = agent.terminate();
    assert!(status.is_some(), "still running after SIGTERM");
    assert!(status.unwrap().success(), "exit status {status:?}");
    let stderr = agent.stderr.all();
    assert!(stderr.contains("SIGTERM"), "{stderr}");
}

/// `{...,gpu="0",gpu="all"}` made Prometheus reject every scrape.
#[test]
fn a_label_in_both_the_global_and_a_logs_labels_is_written_once_with_the_logs_value() {
    let metrics = crate::prometheus::label_in_both_tables();
    let mut engine_series = 0;
    let mut executor_series = 0;
    for line in metrics.lines().filter(|l| !l.starts_with('#')) {
        let Some((_, labels)) = line.split_once('{') else {
            continue;
        };
        let labels = labels.rsplit_once('}').unwrap().0;
        let mut names: Vec<&str> = labels
            .split("\",")
            .filter_map(|pair| pair.split_once('=').map(|(name, _)| name))
            .collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count, "a label written twice: {line}");
        assert!(
            !line.contains("gpu=\"all\""),
            "the global value won: {line}"
        );
        if line.contains("engine=\"") {
            assert!(
                line.contains("gpu=\"0\"") && line.contains("team=\"infra\""),
                "{line}"
            );
            engine_series += 1;
        }
        if line.contains("rank=\"") {
            assert!(
                line.contains("gpu=\"1\"") && line.contains("team=\"infra\""),
                "{line}"
            );
            executor_series += 1;
        }
    }
    assert!(engine_series > 0 && executor_series > 0, "{metrics}");
}

/// `Avg prompt throughput: -500.0` took `vllm:prompt_tokens_total`
/// to -4000, `1e307` left it at +Inf, and a cut-off stats line counted as unmatched.
#[test]
fn impossible_and_cut_off_stats_lines_are_rejected_whole_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    let line = |at: &str, prompt: &str, usage: &str| {
        format!("(APIServer pid=812) INFO 11-22 13:25:{at} [loggers.py:257] Engine 000: Avg prompt throughput: {prompt} tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: {usage}%, Prefix cache hit rate: 0.0%\n")
    };
    let text = [
        line("01", "10.0", "50.0"),
        line("11", "-500.0", "50.0"),
        line("21", "1e307", "50.0"),
        line("31", "1e308", "50.0"),
        line("41", "-1e308", "50.0"),
        line("51", "10.0", "-5.0"),
        line("52", "10.0", "1e308"),
        "(APIServer pid=812) INFO 11-22 13:25:53 [loggers.py:257] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg gen\n".to_string(),
    ]
    .concat();
    std::fs::write(&log, text).unwrap();
    let argv = ["llmtail", "--log", log.to_str().unwrap(), "--one-shot"];
    let metrics = crate::replay::one_shot(&argv.map(String::from));
    let value = |name: &str, labels: &[(&str, &str)]| expect_sample(&metrics, name, labels);
    assert_eq!(value("vllm:num_requests_running", &[("engine", "0")]), 1.0);
    assert_eq!(value("vllm:kv_cache_usage_perc", &[("engine", "0")]), 0.5);
    // One possible line, so no interval yet: no counter, and none of -4000, +Inf or NaN.
    let prompt = crate::support::agent::sample(&metrics, "vllm:prompt_tokens_total", &[]);
    assert!(
        prompt.is_none_or(|p| p.is_finite() && p >= 0.0),
        "{metrics}"
    );
    assert_eq!(
        value("llmtail_lines_rejected_total", &[("grammar", "vllm_stats")]),
        7.0
    );
    assert_eq!(value("llmtail_lines_unmatched_total", &[]), 0.0);
    assert_eq!(
        value("llmtail_lines_parsed_total", &[("grammar", "vllm_stats")]),
        1.0
    );
}

/// A KServe log starts with KServe's own lines, and its uvicorn access
/// lines (`2025-05-14 17:45:10.902 uvicorn.access INFO:     ...`) look like journald. The file
/// was decoded as journald and every vLLM line after them skipped as `invalid_envelope`.
#[test]
fn a_kserve_log_is_not_taken_for_journald_and_yields_the_vllm_metrics() {
    let log = "fixtures/replay/vllm-0.8.5-kserve-mixed.log";
    let argv = [
        "llmtail",
        "--log",
        log,
        "--one-shot",
        "--log-timezone",
        "UTC",
    ];
    let metrics = crate::replay::one_shot(&argv.map(String::from));
    let value = |name: &str, labels: &[(&str, &str)]| expect_sample(&metrics, name, labels);
    assert_eq!(
        value("llmtail_lines_parsed_total", &[("grammar", "vllm_stats")]),
        6.0
    );
    assert_eq!(
        value("vllm:generation_tokens_total", &[("engine", "0")]),
        6551.0
    );
    assert_eq!(
        value(
            "llmtail_lines_skipped_total",
            &[("reason", "invalid_envelope")]
        ),
        0.0
    );
}

/// A line outside the detected envelope was dropped. In a Docker json-file
/// log, a plain stats line (a copy pasted in, a sidecar writing to the same file) is read and
/// counted as a fallback.
#[test]
fn a_docker_log_with_plain_lines_mixed_in_reads_both() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm-json.log");
    let stats = |second: u32, running: u32| {
        format!("INFO 11-22 13:25:{second:02} [loggers.py:257] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: {running} reqs, Waiting: 0 reqs, GPU KV cache usage: 5.0%, Prefix cache hit rate: 0.0%")
    };
    let mut text = String::new();
    for second in 0..15 {
        let line = stats(second, 1);
        text.push_str(&format!(
            "{{\"log\":\"{line}\\n\",\"stream\":\"stdout\",\"time\":\"2026-11-22T13:25:{second:02}Z\"}}\n"
        ));
    }
    text.push_str(&format!("{}\n", stats(20, 7)));
    std::fs::write(&log, text).unwrap();
    let argv = ["llmtail", "--log", log.to_str().unwrap(), "--one-shot"];
    let metrics = crate::replay::one_shot(&argv.map(String::from));
    let value = |name: &str, labels: &[(&str, &str)]| expect_sample(&metrics, name, labels);
    assert_eq!(
        value("llmtail_lines_parsed_total", &[("grammar", "vllm_stats")]),
        16.0
    );
    assert_eq!(value("vllm:num_requests_running", &[("engine", "0")]), 7.0);
    assert_eq!(
        value(
            "llmtail_lines_skipped_total",
            &[("reason", "invalid_envelope")]
        ),
        1.0
    );
}

/// The metrics of a one-shot run over a log holding `text`.
fn one_shot_over(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("engine.log");
    std::fs::write(&log, text).unwrap();
    let argv = [
        "llmtail",
        "--log",
        log.to_str().unwrap(),
        "--one-shot",
        "--log-timezone",
        "UTC",
    ];
    crate::replay::one_shot(&argv.map(String::from))
}

/// `--one-shot` dropped a finished log's last line when it had no newline: a log cut at its
/// last stats line said one line fewer than it holds.
#[test]
fn one_shot_and_replay_read_a_last_line_without_a_newline() {
    let record = |at: &str, running: u32| {
        format!("(APIServer pid=1) INFO 07-28 06:41:{at} [loggers.py:118] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 10.0 tokens/s, Running: {running} reqs, Waiting: 0 reqs, GPU KV cache usage: 0.3%, Prefix cache hit rate: 0.0%")
    };
    let text = format!("{}\n{}", record("19", 1), record("29", 4));
    let metrics = one_shot_over(&text);
    assert_eq!(
        expect_sample(&metrics, "llmtail_lines_read_total", &[]),
        2.0
    );
    assert_eq!(
        expect_sample(&metrics, "vllm:num_requests_running", &[("engine", "0")]),
        4.0,
        "the last line's value"
    );

    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("engine.log");
    std::fs::write(&log, &text).unwrap();
    let replayed = llmtail()
        .args([
            "replay",
            "--log",
            log.to_str().unwrap(),
            "--log-timezone",
            "UTC",
        ])
        .output()
        .unwrap();
    let summary = String::from_utf8_lossy(&replayed.stderr);
    assert!(replayed.status.success(), "{summary}");
    assert!(summary.contains(": 2 lines"), "{summary}");
    let history = String::from_utf8_lossy(&replayed.stdout);
    let running: Vec<&str> = history
        .lines()
        .filter(|l| l.starts_with("vllm:num_requests_running{"))
        .collect();
    assert_eq!(running.len(), 2, "{history}");
    assert!(running[1].contains("} 4.0 "), "{running:?}");
}

/// Two vLLM stats records on one line (two writers interleaving, a lost
/// `\n`) were rejected whole, so neither counted. A record head in the middle of a line starts
/// a new record: both are parsed and counted, and the line is still one line read.
#[test]
fn glued_records_on_one_line_both_count() {
    let record = |at: &str, engine: u32, running: u32| {
        format!("(APIServer pid=1) INFO 07-28 06:41:{at} [loggers.py:118] Engine {engine:03}: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 10.0 tokens/s, Running: {running} reqs, Waiting: 0 reqs, GPU KV cache usage: 0.3%, Prefix cache hit rate: 0.0%")
    };
    let metrics = one_shot_over(&format!("{}{}\n", record("19", 0, 1), record("19", 1, 4)));
    let value = |name: &str, labels: &[(&str, &str)]| expect_sample(&metrics, name, labels);
    assert_eq!(
        value("llmtail_lines_parsed_total", &[("grammar", "vllm_stats")]),
        2.0
    );
    assert_eq!(value("vllm:num_requests_running", &[("engine", "0")]), 1.0);
    assert_eq!(value("vllm:num_requests_running", &[("engine", "1")]), 4.0);
    assert_eq!(value("llmtail_lines_read_total", &[]), 1.0);
    assert_eq!(value("llmtail_lines_unmatched_total", &[]), 0.0);
    assert_eq!(
        sample(
            &metrics,
            "llmtail_lines_rejected_total",
            &[("grammar", "vllm_stats")]
        ),
        None
    );
}

/// The TensorRT backend's `/metrics` record as pasted in NVIDIA/TensorRT-LLM#6364 (1.0.0rc4):
/// a Markdown code fence glued in front, `,` and a fence after.
const FENCED_RECORD: &str = r#"```{"cpuMemUsage":68172,"gpuMemUsage":36100332423,"inflightBatchingStats":{"avgNumDecodedTokensPerIter":1.0,"microBatchId":0,"numContextRequests":0,"numCtxTokens":0,"numGenRequests":1,"numPausedRequests":0,"numScheduledRequests":1},"iter":60,"iterLatencyMS":13.021209,"kvCacheStats":{"allocNewBlocks":3,"allocTotalBlocks":3,"cacheHitRate":0.0,"freeNumBlocks":22952,"maxNumBlocks":22955,"missedBlocks":2,"reusedBlocks":0,"tokensPerBlock":32,"usedNumBlocks":3},"maxBatchSizeRuntime":256,"maxBatchSizeStatic":2048,"maxBatchSizeTunerRecommended":256,"maxNumActiveRequests":2048,"maxNumTokensRuntime":8192,"maxNumTokensStatic":8192,"maxNumTokensTunerRecommended":0,"newActiveRequestsQueueLatencyMS":0.0,"numActiveRequests":1,"numCompletedRequests":0,"numNewActiveRequests":0,"numQueuedRequests":0,"pinnedMemUsage":2952841216,"specDecodingStats":null,"staticBatchingStats":null,"timestamp":"07-25-2025 16:54:34.140189"},```"#;

/// An `IterationStats` record pasted after other text (here the fence of
/// NVIDIA/TensorRT-LLM#6364) was not read: only a message that starts with `{` was.
#[test]
fn iteration_stats_json_after_a_code_fence_is_read() {
    let metrics = one_shot_over(&format!("{FENCED_RECORD}\n"));
    let value = |name: &str, labels: &[(&str, &str)]| expect_sample(&metrics, name, labels);
    assert_eq!(
        value(
            "llmtail_lines_parsed_total",
            &[("grammar", "trtllm_iteration")]
        ),
        1.0
    );
    assert_eq!(
        value(
            "nv_trt_llm_kv_cache_block_metrics",
            &[("kv_cache_block_type", "max")]
        ),
        22955.0
    );
}

/// `curl -s localhost:8000/metrics >> stats.log` appends trtllm-serve's
/// whole answer, a JSON array of every iteration since the last poll, as one line. Only a
/// one-record array was read; with two records the line was rejected and both were lost.
#[test]
fn metrics_array_dump_yields_each_object() {
    let record = |iter: u32, active: u32, at: &str| {
        format!(
            r#"{{"cpuMemUsage":68172,"gpuMemUsage":36100332423,"inflightBatchingStats":{{"avgNumDecodedTokensPerIter":1.0,"microBatchId":0,"numContextRequests":0,"numCtxTokens":0,"numGenRequests":{active},"numPausedRequests":0,"numScheduledRequests":{active}}},"iter":{iter},"iterLatencyMS":13.021209,"kvCacheStats":{{"allocNewBlocks":3,"allocTotalBlocks":3,"cacheHitRate":0.0,"freeNumBlocks":22952,"maxNumBlocks":22955,"missedBlocks":2,"reusedBlocks":0,"tokensPerBlock":32,"usedNumBlocks":3}},"maxBatchSizeRuntime":256,"maxBatchSizeStatic":2048,"maxBatchSizeTunerRecommended":256,"maxNumActiveRequests":2048,"maxNumTokensRuntime":8192,"maxNumTokensStatic":8192,"maxNumTokensTunerRecommended":0,"newActiveRequestsQueueLatencyMS":0.0,"numActiveRequests":{active},"numCompletedRequests":0,"numNewActiveRequests":0,"numQueuedRequests":0,"pinnedMemUsage":2952841216,"specDecodingStats":null,"staticBatchingStats":null,"timestamp":"07-25-2025 16:54:{at}"}}"#
        )
    };
    let dump = format!(
        "[{},{}]\n",
        record(60, 1, "34.140189"),
        record(61, 2, "34.153301")
    );
    let metrics = one_shot_over(&dump);
    let value = |name: &str, labels: &[(&str, &str)]| expect_sample(&metrics, name, labels);
    assert_eq!(
        value(
            "llmtail_lines_parsed_total",
            &[("grammar", "trtllm_iteration")]
        ),
        2.0
    );
    assert_eq!(
        value(
            "nv_trt_llm_general_metrics",
            &[("general_type", "iteration_counter")]
        ),
        61.0
    );
    assert_eq!(
        value("nv_trt_llm_request_metrics", &[("request_type", "active")]),
        2.0
    );
    assert_eq!(value("llmtail_lines_read_total", &[]), 1.0);
}

/// `--one-shot`, how a user tests a log, exited 0 with empty output on a missing
/// file, an unmatched glob or a directory. Each is now an exit code and a message naming the
/// input and the fix.
#[test]
fn one_shot_says_why_an_input_cannot_be_read() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.log");
    let glob = format!("{}/*.log", dir.path().display());
    let directory = dir.path().display().to_string();
    let cases = [
        (missing.display().to_string(), 1, "cannot read --log"),
        (glob, 1, "matches no file"),
        (directory, 2, "is a directory, not a log file"),
    ];
    for (log, code, message) in cases {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_llmtail"))
            .args(["--one-shot", "--log", &log])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{log}: {stderr}");
        assert!(
            stderr.contains(message) && stderr.contains("fix:"),
            "{log}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{log}");
    }
}

/// `--help` says what an operator looks for next: the endpoints, the exit codes, how
/// to get more logging, and where the config keys are.
#[test]
fn help_lists_endpoints_exit_codes_and_logging() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_llmtail"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for expected in ["/-/ready", "Exit codes", "LLMTAIL_LOG", "Config file"] {
        assert!(
            help.contains(expected),
            "--help lacks {expected:?}:\n{help}"
        );
    }
}

/// The shipped unit scored 8.3 EXPOSED in `systemd-analyze security`. It must score
/// 2.0 or better and pass `systemd-analyze verify` (with its ExecStart pointed at this build).
/// Skipped where systemd-analyze is not installed.
#[test]
fn the_systemd_unit_is_hardened_and_verifies() {
    let Some(analyze) = on_path("systemd-analyze") else {
        eprintln!("systemd-analyze is not installed: skipping");
        return;
    };
    let unit = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("packaging/llmtail.service");
    let out = std::process::Command::new(&analyze)
        .args(["security", "--offline=true"])
        .arg(&unit)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    let score: f64 = report
        .lines()
        .find_map(|l| l.split("llmtail.service: ").nth(1))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no exposure level in:\n{report}"));
    assert!(score <= 2.0, "exposure {score}:\n{report}");

    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(&unit).unwrap().replace(
        "ExecStart=/usr/bin/llmtail",
        concat!("ExecStart=", env!("CARGO_BIN_EXE_llmtail")),
    );
    std::fs::write(dir.path().join("llmtail.service"), text).unwrap();
    let verify = std::process::Command::new(&analyze)
        .arg("verify")
        .arg(dir.path().join("llmtail.service"))
        .output()
        .unwrap();
    assert!(
        verify.status.success() && verify.stderr.is_empty(),
        "systemd-analyze verify: {}",
        String::from_utf8_lossy(&verify.stderr)
    );
}

/// Under systemd (`Type=notify`) the agent says READY=1 once the logs' existing
/// content is read, and pings the watchdog from its reader's loop.
#[test]
fn systemd_hears_ready_and_watchdog_pings() {
    use std::os::unix::net::UnixDatagram;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    append(&log, &[CONFIG_LINE, ISSUE_LINE]);
    let socket_path = dir.path().join("notify.sock");
    let socket = UnixDatagram::bind(&socket_path).unwrap();
    socket
        .set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    let mut agent = std::process::Command::new(env!("CARGO_BIN_EXE_llmtail"))
        .args([
            "--log",
            log.to_str().unwrap(),
            "--web.listen-address",
            "127.0.0.1:0",
        ])
        .env("NOTIFY_SOCKET", &socket_path)
        .env("WATCHDOG_USEC", "200000")
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut heard = Vec::new();
    let mut buf = [0u8; 256];
    while !(heard.iter().any(|m| m == "READY=1") && heard.iter().any(|m| m == "WATCHDOG=1")) {
        let Ok(n) = socket.recv(&mut buf) else {
            break;
        };
        heard.push(String::from_utf8_lossy(&buf[..n]).trim().to_string());
    }
    let _ = agent.kill();
    let _ = agent.wait();
    assert!(heard.iter().any(|m| m == "READY=1"), "{heard:?}");
    assert!(heard.iter().any(|m| m == "WATCHDOG=1"), "{heard:?}");
}
