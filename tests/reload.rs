//! Reloading the config file while serving: on SIGHUP, as Prometheus does, and on
//! `POST /-/reload` with `--web.enable-lifecycle`. Logs added are followed, logs removed are
//! dropped, labels change, the logs that stay keep their counters, and a file with a mistake
//! leaves the running configuration as it was.

use std::path::Path;
use std::process::Command;

use crate::support::agent::{eventually, expect_sample, http_get, sample, RunningAgent, TESTS_NOW};
use crate::support::process::AgentProcess;
use crate::support::writer::{append_lines, stats_line};

/// A config file following `logs`, each `(path, gpu label)`.
fn write_config(config: &Path, logs: &[(&Path, &str)]) {
    let mut text = String::from("[labels]\nteam = \"inference\"\n");
    for (path, gpu) in logs {
        text.push_str(&format!(
            "[[log]]\npath = \"{}\"\nlabels = {{ gpu = \"{gpu}\" }}\n",
            path.display()
        ));
    }
    std::fs::write(config, text).unwrap();
}

/// `vllm:num_preemptions_total` of `log`: the sum of the numbers of the stats lines read.
fn preemptions(metrics: &str, log: &Path, gpu: &str) -> Option<f64> {
    sample(
        metrics,
        "vllm:num_preemptions_total",
        &[("log", log.to_str().unwrap()), ("gpu", gpu)],
    )
}

#[test]
fn a_reload_follows_new_logs_drops_removed_ones_and_keeps_the_counters_of_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let (stays, goes, comes) = (
        dir.path().join("stays.log"),
        dir.path().join("goes.log"),
        dir.path().join("comes.log"),
    );
    append_lines(&stays, &[&stats_line(1), &stats_line(2)]);
    append_lines(&goes, &[&stats_line(5)]);
    append_lines(&comes, &[&stats_line(7)]);
    let config = dir.path().join("llmtail.toml");
    write_config(&config, &[(&stays, "0"), (&goes, "1")]);
    let agent = RunningAgent::start(&[
        "--config",
        config.to_str().unwrap(),
        "--web.enable-lifecycle",
    ]);
    agent.wait_for("both logs", |m| {
        preemptions(m, &stays, "0") == Some(3.0) && preemptions(m, &goes, "1") == Some(5.0)
    });

    // `stays` moves to another GPU label, `goes` is dropped, `comes` is new.
    write_config(&config, &[(&stays, "2"), (&comes, "3")]);
    let reloaded = agent.post("/-/reload").unwrap();
    assert_eq!(reloaded.status, 200, "{}", reloaded.body);
    assert!(
        reloaded
            .body
            .contains("2 logs followed (1 added, 1 removed, 1 changed)"),
        "{}",
        reloaded.body
    );
    let metrics = agent.wait_for("the new log", |m| preemptions(m, &comes, "3") == Some(7.0));
    assert_eq!(
        preemptions(&metrics, &stays, "2"),
        Some(3.0),
        "counters go on"
    );
    assert_eq!(preemptions(&metrics, &stays, "0"), None, "old label gone");
    assert!(
        !metrics.contains(goes.to_str().unwrap()),
        "a removed log's series stay:\n{metrics}"
    );
    assert_eq!(
        expect_sample(
            &metrics,
            "llmtail_lines_read_total",
            &[("log", stays.to_str().unwrap())]
        ),
        2.0,
        "the log that stays is not read again"
    );

    // Lines after the reload: the log that stays goes on from where it was.
    append_lines(&stays, &[&stats_line(4)]);
    append_lines(&goes, &[&stats_line(100)]);
    let metrics = agent.wait_for("the next line", |m| {
        preemptions(m, &stays, "2") == Some(7.0)
    });
    assert!(!metrics.contains(goes.to_str().unwrap()), "{metrics}");
    let page = agent.get("/").unwrap().body;
    assert!(page.contains(comes.to_str().unwrap()), "{page}");
    assert!(!page.contains(goes.to_str().unwrap()), "{page}");
}

#[test]
fn a_config_file_with_a_mistake_is_refused_on_reload_and_the_running_one_stays() {
    let (dir, agent) = agent_with_one_log();
    let (log, config) = (dir.path().join("vllm.log"), dir.path().join("llmtail.toml"));
    let metrics = agent.wait_for("the log", |m| preemptions(m, &log, "0") == Some(1.0));
    let reload_ok = |m: &str| expect_sample(m, "llmtail_config_last_reload_successful", &[]);
    let loaded_at = |m: &str| {
        expect_sample(
            m,
            "llmtail_config_last_reload_success_timestamp_seconds",
            &[],
        )
    };
    assert_eq!(reload_ok(&metrics), 1.0);
    assert_eq!(loaded_at(&metrics), TESTS_NOW);

    agent.clock.set(TESTS_NOW + 60.0);
    std::fs::write(&config, "[[log]]\npath = \"/x.log\"\nlabls = {}\n").unwrap();
    let refused = agent.post("/-/reload").unwrap();
    assert_eq!(refused.status, 500, "{}", refused.body);
    assert!(
        refused.body.contains("llmtail.toml, line 3"),
        "{}",
        refused.body
    );
    assert!(
        refused.body.contains("the running configuration stays"),
        "{}",
        refused.body
    );
    append_lines(&log, &[&stats_line(2)]);
    let metrics = agent.wait_for("lines under the running configuration", |m| {
        preemptions(m, &log, "0") == Some(3.0)
    });
    assert_eq!(
        reload_ok(&metrics),
        0.0,
        "a refused reload is not a success"
    );
    assert_eq!(
        loaded_at(&metrics),
        TESTS_NOW,
        "the configuration in force is the first"
    );
    let page = agent.get("/").unwrap().body;
    assert!(
        page.contains("refused, the running configuration stays"),
        "{page}"
    );

    write_config(&config, &[(&log, "0")]);
    assert_eq!(agent.post("/-/reload").unwrap().status, 200);
    let metrics = agent.metrics();
    assert_eq!(reload_ok(&metrics), 1.0);
    assert_eq!(loaded_at(&metrics), TESTS_NOW + 60.0);
}

/// A config file replaced by a FIFO without a writer blocked the reload in `open`:
/// `/-/reload` answered 503 after 30 s, and the agent, told to stop, logged `stopped` and never
/// exited (its runtime waited for the blocked read).
#[test]
fn a_config_file_that_is_a_fifo_is_refused_on_reload_at_once_and_the_agent_still_stops() {
    let (dir, agent) = agent_with_one_log();
    let (log, config) = (dir.path().join("vllm.log"), dir.path().join("llmtail.toml"));
    agent.wait_for("the log", |m| preemptions(m, &log, "0") == Some(1.0));

    std::fs::remove_file(&config).unwrap();
    let made = Command::new("mkfifo").arg(&config).status().unwrap();
    assert!(made.success());
    let refused = agent.post("/-/reload").expect("/-/reload answers");
    assert_eq!(refused.status, 500, "{}", refused.body);
    let named = format!(
        "cannot read config file {}: it is a FIFO, not a regular file",
        config.display()
    );
    assert!(refused.body.contains(&named), "{}", refused.body);
    assert!(refused
        .body
        .contains("fix: give the path of a regular file"));
    assert_eq!(agent.get("/-/ready").unwrap().status, 200);

    agent.stops_promptly("the reload");
}

#[test]
fn lifecycle_endpoints_need_the_flag_and_post() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    append_lines(&log, &[&stats_line(1)]);
    let log = log.to_str().unwrap();
    let closed = RunningAgent::start(&["--log", log]);
    assert_eq!(closed.post("/-/reload").unwrap().status, 403);
    assert_eq!(closed.post("/-/quit").unwrap().status, 403);
    assert!(!closed.has_stopped());

    let open = RunningAgent::start(&["--log", log, "--web.enable-lifecycle"]);
    assert_eq!(open.get("/-/reload").unwrap().status, 405);
    let reloaded = open.post("/-/reload").unwrap();
    assert_eq!(
        reloaded.status, 200,
        "without --config the flags apply again"
    );
    assert_eq!(open.post("/-/quit").unwrap().status, 200);
    assert!(eventually(|| open.has_stopped()), "/-/quit did not stop it");
}

/// SIGHUP's default action ended the agent (exit 129) without saving its state; then it was
/// ignored. Now it reloads the config file, as Prometheus does.
#[test]
fn sighup_reloads_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("first.log"), dir.path().join("second.log"));
    append_lines(&first, &[&stats_line(1)]);
    append_lines(&second, &[&stats_line(2)]);
    let config = dir.path().join("llmtail.toml");
    write_config(&config, &[(&first, "0")]);
    // Spawned once it says it serves: its handlers are installed before it does.
    let mut agent = AgentProcess::spawn(AgentProcess::command(&[
        "--config",
        config.to_str().unwrap(),
    ]));
    let addr = agent.addr;
    let pid = agent.child.id().to_string();
    let hangup = || {
        let sent = Command::new("kill").args(["-HUP", &pid]).status().unwrap();
        assert!(sent.success());
    };

    write_config(&config, &[(&first, "0"), (&second, "1")]);
    hangup();
    assert!(agent.stderr.wait_for("configuration reloaded").is_some());
    let metrics = |agent_addr| http_get(agent_addr, "/metrics", None).unwrap().body;
    assert!(
        eventually(|| preemptions(&metrics(addr), &second, "1") == Some(2.0)),
        "the log added by the reload is not followed:\n{}",
        metrics(addr)
    );

    std::fs::write(&config, "from = \"middle\"\n").unwrap();
    hangup();
    assert!(agent.stderr.wait_for("reload refused").is_some());
    assert!(
        agent.child.try_wait().unwrap().is_none(),
        "the agent exited"
    );
    append_lines(&second, &[&stats_line(3)]);
    assert!(
        eventually(|| preemptions(&metrics(addr), &second, "1") == Some(5.0)),
        "the running configuration did not stay"
    );
}

#[test]
fn a_reload_with_a_stats_interval_vllm_would_refuse_is_refused() {
    let (dir, agent) = agent_with_one_log();
    let (log, config) = (dir.path().join("vllm.log"), dir.path().join("llmtail.toml"));
    agent.wait_for("the log", |m| preemptions(m, &log, "0") == Some(1.0));

    let running = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("vllm_stats_interval = 1e308\n{running}")).unwrap();
    let refused = agent.post("/-/reload").unwrap();
    assert_eq!(refused.status, 500, "{}", refused.body);
    assert!(
        refused
            .body
            .contains("vllm_stats_interval: 1e308 seconds is outside the stats intervals vLLM accepts (0.1 to 86400 seconds)")
            && refused.body.contains("the running configuration stays"),
        "{}",
        refused.body
    );
}

/// An agent following one log (`vllm.log`, one stats line, engine `0`) named in a config file
/// (`llmtail.toml`), with `/-/reload` enabled; both files are in the directory returned.
fn agent_with_one_log() -> (tempfile::TempDir, RunningAgent) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    append_lines(&log, &[&stats_line(1)]);
    let config = dir.path().join("llmtail.toml");
    write_config(&config, &[(&log, "0")]);
    let agent = RunningAgent::start(&[
        "--config",
        config.to_str().unwrap(),
        "--web.enable-lifecycle",
    ]);
    (dir, agent)
}
