//! `llmtail replay`: a log's history, written as OpenMetrics text, imported by `promtool tsdb
//! create-blocks-from openmetrics`, and served by a real Prometheus, says at each stats line's
//! time what that line said.
//!
//! After a deliberate change, `LLMTAIL_BLESS=1 cargo test --test integration backfill`
//! rewrites the golden; review the diff before committing it.

use std::path::Path;
use std::process::{Command, Output};

use clap::Parser;
use llmtail::cli::{Cli, Command as Subcommand};
use llmtail::clock::Clock;

use crate::prometheus::{tool, Prometheus};
use crate::support::agent::eventually;

/// A vLLM 0.10.1 log over 3 h 45 min: throughputs that hold 10 minutes at a time, an idle line
/// and 45 minutes of silence, a shutdown and a restart (`fixtures/backfill/make-incident.py`).
const INCIDENT: &str = "fixtures/backfill/vllm-0.10.1-incident.log";

/// What one stats line of the incident said, and when.
#[derive(Debug, Clone, Copy)]
struct StatsLine {
    time: f64,
    generation_throughput: f64,
    running: f64,
    waiting: f64,
    kv_cache_percent: f64,
}

/// The number after `label` in `line`.
fn field(line: &str, label: &str) -> f64 {
    let rest = &line[line.find(label).expect(label) + label.len()..];
    let end = rest.find([' ', '%', ',']).unwrap_or(rest.len());
    rest[..end].parse().expect(label)
}

/// The incident's stats lines, `MM-DD HH:MM:SS` read in UTC in `year`.
fn stats_lines(year: i16) -> Vec<StatsLine> {
    std::fs::read_to_string(INCIDENT)
        .unwrap()
        .lines()
        .filter(|line| line.contains("Avg prompt throughput"))
        .map(|line| {
            let head = &line[line.find("INFO ").unwrap() + 5..][..14];
            let civil: jiff::civil::DateTime =
                format!("{year}-{}-{}T{}", &head[..2], &head[3..5], &head[6..])
                    .parse()
                    .unwrap();
            let time = jiff::tz::TimeZone::UTC.to_timestamp(civil).unwrap();
            StatsLine {
                time: time.as_second() as f64,
                generation_throughput: field(line, "Avg generation throughput: "),
                running: field(line, "Running: "),
                waiting: field(line, "Waiting: "),
                kv_cache_percent: field(line, "GPU KV cache usage: "),
            }
        })
        .collect()
}

/// The year a yearless `03-14` of the incident is read in: the one that puts it closest
/// before now (this year's, unless it is still to come).
fn incident_year() -> i16 {
    let utc = jiff::tz::TimeZone::UTC;
    let now = jiff::Timestamp::now();
    let year = utc.to_datetime(now).year();
    let this_year = utc
        .to_timestamp(jiff::civil::date(year, 3, 14).at(12, 45, 0, 0))
        .unwrap();
    if this_year <= now {
        year
    } else {
        year - 1
    }
}

fn llmtail(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_llmtail"))
        .args(args)
        .output()
        .expect("run llmtail")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Waits for Prometheus to answer a range query with samples, and returns them by time.
fn range(
    prometheus: &Prometheus,
    promql: &str,
    lines: &[StatsLine],
) -> std::collections::HashMap<i64, f64> {
    let (start, end) = (lines[0].time, lines[lines.len() - 1].time);
    let mut samples = None;
    let answered = eventually(|| {
        samples = prometheus
            .query_range(promql, start, end, 10.0)
            .filter(|s| !s.is_empty());
        samples.is_some()
    });
    assert!(answered, "Prometheus returned nothing for {promql}");
    samples
        .unwrap()
        .into_iter()
        .map(|(t, v)| (t as i64, v))
        .collect()
}

#[test]
fn an_incidents_history_in_prometheus_says_at_each_lines_time_what_the_line_said() {
    let (Some(promtool), Some(prometheus)) = (tool("promtool"), tool("prometheus")) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("history.om");
    let data = dir.path().join("data");
    let history_arg = history.to_str().unwrap();
    let replayed = llmtail(&[
        "replay",
        "--log",
        INCIDENT,
        "--log-timezone",
        "UTC",
        "--out",
        history_arg,
    ]);
    assert!(replayed.status.success(), "{}", stderr(&replayed));
    let beside: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(
        beside,
        ["history.om"],
        "the history is written beside --out, then renamed over it"
    );
    // 1060 stats lines and the start-ups' records; the second start-up's `vLLM API server
    // version` line is read too (the log is known to be vLLM's by then), the first one's not.
    assert!(
        stderr(&replayed).contains("1066 records written"),
        "{}",
        stderr(&replayed)
    );
    let imported = Command::new(&promtool)
        .args(["tsdb", "create-blocks-from", "openmetrics", history_arg])
        .arg(&data)
        .output()
        .unwrap();
    assert!(imported.status.success(), "promtool: {}", stderr(&imported));

    let server = Prometheus::on_blocks(&prometheus, &data);
    let lines = stats_lines(incident_year());
    assert_eq!(lines.len(), 1060);
    let running = range(&server, "vllm:num_requests_running", &lines);
    let waiting = range(&server, "vllm:num_requests_waiting", &lines);
    let kv_cache = range(&server, "vllm:gpu_cache_usage_perc", &lines);
    let throughput = range(&server, "vllm:avg_generation_throughput_toks_per_s", &lines);
    for line in &lines {
        let at = line.time as i64;
        assert_eq!(running.get(&at), Some(&line.running), "running at {line:?}");
        assert_eq!(waiting.get(&at), Some(&line.waiting), "waiting at {line:?}");
        let kv = kv_cache.get(&at).expect("kv cache usage");
        assert!(
            (kv - line.kv_cache_percent / 100.0).abs() < 1e-12,
            "{kv} at {line:?}"
        );
        let generation = throughput.get(&at);
        assert_eq!(generation, Some(&line.generation_throughput), "{line:?}");
    }

    // The idle line at 10:30:10, then silence until 11:15:00: once Prometheus' lookback
    // (5 minutes) is past, no gauge (the log says nothing of those minutes).
    let idle = lines.iter().find(|l| l.running == 0.0).unwrap().time;
    let silent = (idle as i64 + 301..idle as i64 + 2600).step_by(10);
    assert!(silent.clone().all(|t| !running.contains_key(&t)));

    // rate() over one minute is the throughput wherever the minute's lines printed one.
    let rates = range(&server, "rate(vllm:generation_tokens_total[1m])", &lines);
    let mut checked = 0;
    for window in lines.windows(7) {
        let steady = window.windows(2).all(|w| w[1].time - w[0].time == 10.0)
            && window[1..]
                .iter()
                .all(|l| l.generation_throughput == window[6].generation_throughput);
        if !steady {
            continue;
        }
        let rate = rates.get(&(window[6].time as i64)).expect("a rate");
        let expected = window[6].generation_throughput;
        assert!(
            (rate - expected).abs() < 1e-9 * expected.max(1.0),
            "rate {rate} at {:?}",
            window[6]
        );
        checked += 1;
    }
    assert!(checked > 900, "only {checked} steady minutes");
}

/// The OpenMetrics text of a replay with a fixed clock (so the yearless times read the same
/// every year), through the library as `llmtail replay` calls it.
fn replay_text(args: &[&str]) -> String {
    replay_with_summary(args).0
}

/// [`replay_text`], and the summary `llmtail replay` prints.
fn replay_with_summary(args: &[&str]) -> (String, llmtail::backfill::Summary) {
    replay_within(args, llmtail::backfill::history::MEMORY_BUDGET)
}

/// [`replay_with_summary`], holding at most `memory_budget` bytes of samples in memory.
fn replay_within(args: &[&str], memory_budget: usize) -> (String, llmtail::backfill::Summary) {
    let argv = ["llmtail", "replay"].iter().chain(args);
    let Some(Subcommand::Replay(replay)) = Cli::try_parse_from(argv).expect("flags").command else {
        panic!("not a replay");
    };
    let settings = replay.settings().expect("settings");
    let window = replay.window(&settings.log_timezone).expect("window");
    let mut out = Vec::new();
    // 2026-12-31T12:00:00Z, as the one-shot goldens.
    let summary = llmtail::backfill::replay_within(
        &settings,
        window,
        Clock::fixed(1_798_718_400.0),
        &mut out,
        false,
        memory_budget,
    )
    .expect("replay");
    (String::from_utf8(out).unwrap(), summary)
}

/// A DP=2 vLLM whose engine 1 stops printing: each engine's series are written at its own
/// lines; engine 1's again at engine 0's lines once 15 s old, with its gauges until it is
/// judged down (`llmtail_vllm_engine_up` 0 at 10:02:03), and its counters on.
#[test]
fn a_small_replay_yields_its_golden_open_metrics() {
    let log = "fixtures/replay/vllm-0.14.1-dp2-one-engine-overdue.log";
    let got = replay_text(&["--log", log, "--log-timezone", "UTC"]);
    let golden = Path::new("fixtures/backfill/vllm-0.14.1-dp2-one-engine-overdue.om");
    if std::env::var_os("LLMTAIL_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(golden, &got).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(golden).expect("golden (LLMTAIL_BLESS=1 writes it)");
    if got != expected {
        let first = got
            .lines()
            .zip(expected.lines())
            .position(|(g, e)| g != e)
            .unwrap_or(0);
        panic!(
            "{} differs from its golden at line {}:\n  got:      {:?}\n  expected: {:?}",
            golden.display(),
            first + 1,
            got.lines().nth(first),
            expected.lines().nth(first)
        );
    }
}

/// `--out /dev/null` (timing a replay) once renamed a regular file over `/dev/null`. A path
/// that is not a regular file is written as it is and left in place: here a symlink and a
/// FIFO (a device takes the same way).
#[test]
fn out_onto_a_symlink_or_a_fifo_writes_through_it_and_leaves_it_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let log = "fixtures/replay/vllm-0.14.1-dp2-one-engine-overdue.log";
    let expected = replay_text(&["--log", log, "--log-timezone", "UTC"]);
    let dir = tempfile::tempdir().unwrap();
    // Replays into `out`, and says what `out` is afterwards.
    let replay_into = |out: &Path| {
        let args = ["replay", "--log", log, "--log-timezone", "UTC", "--out"];
        let replayed = llmtail(&[&args[..], &[out.to_str().unwrap()]].concat());
        assert!(replayed.status.success(), "{}", stderr(&replayed));
        std::fs::symlink_metadata(out).unwrap().file_type()
    };

    let target = dir.path().join("history.om");
    let link = dir.path().join("link.om");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let kind = replay_into(&link);
    assert!(kind.is_symlink(), "--out replaced the symlink: {kind:?}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), expected);

    let fifo = dir.path().join("history.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let (sent, read) = std::sync::mpsc::channel();
    let reader = fifo.clone();
    std::thread::spawn(move || sent.send(std::fs::read_to_string(reader)));
    let kind = replay_into(&fifo);
    assert!(kind.is_fifo(), "--out replaced the FIFO: {kind:?}");
    let text = read.recv_timeout(std::time::Duration::from_secs(60));
    let text = text.expect("the FIFO's reader got the text").unwrap();
    assert_eq!(text, expected);
}

/// `--out` naming the log being read (the same path, a symlink to it, a hard link, a glob's
/// match) replaced the log with its history, or truncated it before it was read and wrote
/// an empty history with exit 0. It is refused before anything is opened for writing.
#[test]
fn out_onto_a_log_it_reads_is_refused_and_the_log_left_whole() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    let text = std::fs::read("fixtures/replay/vllm-0.14.1-dp2-one-engine-overdue.log").unwrap();
    std::fs::write(&log, &text).unwrap();
    let link = dir.path().join("link.om");
    std::os::unix::fs::symlink(&log, &link).unwrap();
    let hard = dir.path().join("hard.om");
    std::fs::hard_link(&log, &hard).unwrap();
    let glob = dir.path().join("*.log");
    let (log, glob) = (log.to_str().unwrap(), glob.to_str().unwrap());

    for (input, out) in [
        (log, log),
        (log, link.to_str().unwrap()),
        (log, hard.to_str().unwrap()),
        (glob, log),
    ] {
        let replayed = llmtail(&["replay", "--log", input, "--out", out]);
        let message = stderr(&replayed);
        assert_eq!(
            replayed.status.code(),
            Some(2),
            "--log {input} --out {out}: {message}"
        );
        assert!(
            message.contains(&format!("--out {out} is the file --log {input}"))
                && message.contains("fix: write the history to a path of its own"),
            "{message}"
        );
        assert_eq!(
            std::fs::read(log).unwrap(),
            text,
            "--out {out} changed the log"
        );
    }
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
}

/// `--out FILE` wrote through a symlink planted at the fixed `FILE.partial`, overwriting the
/// file it pointed to. The temporary file has a name nobody can plant in advance, and is
/// gone once the history is in place.
#[test]
fn a_symlink_planted_at_out_dot_partial_is_never_written_through() {
    let log = "fixtures/replay/vllm-0.14.1-dp2-one-engine-overdue.log";
    let expected = replay_text(&["--log", log, "--log-timezone", "UTC"]);
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    let out = dir.path().join("history.om");
    std::os::unix::fs::symlink(&victim, dir.path().join("history.om.partial")).unwrap();

    let args = ["replay", "--log", log, "--log-timezone", "UTC", "--out"];
    let replayed = llmtail(&[&args[..], &[out.to_str().unwrap()]].concat());
    assert!(replayed.status.success(), "{}", stderr(&replayed));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), expected);
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["history.om", "history.om.partial", "victim"],
        "no temporary file is left behind"
    );
}

/// Pod logs replayed from a copy of `/var/log/pods` keep the labels the agent gives them.
#[test]
fn replayed_pod_logs_carry_namespace_pod_and_container_with_path_labels_kubernetes() {
    let dir = tempfile::tempdir().unwrap();
    let container = dir.path().join("pods/prod_vllm-0_0f1e2d3c/vllm");
    std::fs::create_dir_all(&container).unwrap();
    let log = container.join("0.log");
    std::fs::copy(INCIDENT, &log).unwrap();
    let text = replay_text(&[
        "--log",
        log.to_str().unwrap(),
        "--log-timezone",
        "UTC",
        "--path-labels",
        "kubernetes",
    ]);
    let running = text
        .lines()
        .find(|l| l.starts_with("vllm:num_requests_running{"))
        .expect("a running sample");
    for label in ["namespace=\"prod\"", "pod=\"vllm-0\"", "container=\"vllm\""] {
        assert!(running.contains(label), "{label} in {running}");
    }
}

/// Regression: `--since`/`--until` without an offset were read in the machine's zone when the
/// zone came from the config file's `log_timezone` rather than `--log-timezone`.
#[test]
fn since_without_an_offset_is_read_in_the_config_files_log_timezone() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("llmtail.toml");
    std::fs::write(&config, "log_timezone = \"Asia/Tokyo\"\n").unwrap();
    let config = config.to_str().unwrap();
    // The log's 09:00 to 12:45 are Tokyo's; 11:00 in Tokyo is 02:00 UTC.
    let from_file = replay_text(&[
        "--log",
        INCIDENT,
        "--config",
        config,
        "--since",
        "2026-03-14T11:00:00",
    ]);
    let from_flag = replay_text(&[
        "--log",
        INCIDENT,
        "--log-timezone",
        "Asia/Tokyo",
        "--since",
        "2026-03-14T02:00:00Z",
    ]);
    assert!(from_flag.lines().any(|l| !l.starts_with('#')));
    assert_eq!(from_file, from_flag);
}

#[test]
fn since_and_until_bound_the_samples_and_counters_count_from_the_first_line_read() {
    let whole = replay_text(&["--log", INCIDENT, "--log-timezone", "UTC"]);
    let part = replay_text(&[
        "--log",
        INCIDENT,
        "--log-timezone",
        "UTC",
        "--since",
        "2026-03-14T11:00:00Z",
        "--until",
        "2026-03-14T12:00:00Z",
    ]);
    let (since, until) = (1_773_486_000.0, 1_773_489_600.0);
    let samples = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| !l.starts_with('#'))
            .map(str::to_string)
            .collect()
    };
    let time = |sample: &str| -> f64 { sample.rsplit(' ').next().unwrap().parse().unwrap() };
    // The same samples; families may come in another order (each is written where it is
    // first seen).
    let mut within: Vec<String> = samples(&whole)
        .into_iter()
        .filter(|s| (since..until).contains(&time(s)))
        .collect();
    let mut got = samples(&part);
    within.sort();
    got.sort();
    assert_eq!(got.len(), within.len());
    assert!(!got.is_empty());
    if let Some((g, w)) = got.iter().zip(&within).find(|(g, w)| g != w) {
        panic!("with --since/--until: {g}\nwithout: {w}");
    }
    assert!(part.ends_with("# EOF\n"));
}

#[test]
fn a_bad_since_or_an_unreadable_log_is_refused_with_the_fix() {
    let bad_since = llmtail(&["replay", "--log", INCIDENT, "--since", "last tuesday"]);
    assert_eq!(bad_since.status.code(), Some(2));
    let message = stderr(&bad_since);
    assert!(
        message.contains("--since \"last tuesday\" is not a time")
            && message.contains("fix: an RFC 3339 time"),
        "{message}"
    );

    let backwards = llmtail(&[
        "replay",
        "--log",
        INCIDENT,
        "--since",
        "2026-03-15",
        "--until",
        "2026-03-14",
    ]);
    assert_eq!(backwards.status.code(), Some(2), "{}", stderr(&backwards));

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("history.om");
    let missing = llmtail(&[
        "replay",
        "--log",
        "/nonexistent/vllm.log",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        !out.exists(),
        "an unreadable log left an empty history behind"
    );
    let message = stderr(&missing);
    assert!(
        message.contains("cannot read --log /nonexistent/vllm.log") && message.contains("fix:"),
        "{message}"
    );

    let no_log = llmtail(&["replay"]);
    assert_eq!(no_log.status.code(), Some(2), "{}", stderr(&no_log));
}

#[test]
fn replay_help_gives_the_two_commands_and_where_the_blocks_go() {
    let help = llmtail(&["replay", "--help"]);
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(
        text.contains("llmtail replay --log /var/log/vllm.log --out history.om"),
        "{text}"
    );
    assert!(
        text.contains("promtool tsdb create-blocks-from openmetrics history.om"),
        "{text}"
    );
    assert!(text.contains("--storage.tsdb.path"), "{text}");
    // The agent's flat invocation is untouched.
    let agent = llmtail(&["--log", INCIDENT, "--one-shot", "--log-timezone", "UTC"]);
    assert!(agent.status.success(), "{}", stderr(&agent));
    assert!(String::from_utf8_lossy(&agent.stdout).contains("vllm:num_requests_running{"));
}

/// A stats line without any time (no record head, no envelope) cannot be placed: it is not
/// given a time, and the summary says how many were left out. Standard input is read too.
#[test]
fn a_stats_line_without_a_time_is_left_out_and_counted() {
    let head: Vec<&str> = include_str!("../fixtures/backfill/vllm-0.10.1-incident.log")
        .lines()
        .take(60)
        .collect();
    let mut log = head.join("\n");
    log.push_str("\nEngine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 99 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%\n");
    let mut child = Command::new(env!("CARGO_BIN_EXE_llmtail"))
        .args(["replay", "--log", "-", "--log-timezone", "UTC"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), log.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let summary = stderr(&output);
    assert!(
        summary.contains("1 records left out: their lines carry no time"),
        "{summary}"
    );
    let history = String::from_utf8(output.stdout).unwrap();
    assert!(history.contains("vllm:num_requests_running{") && history.ends_with("# EOF\n"));
    assert!(
        !history.contains("} 99.0 "),
        "the line without a time was given one"
    );
}

/// A history larger than its memory is spilled to temporary files and merged back: the same
/// text as held in memory, for the incident (hours of one engine) and every engine's replay
/// log, spilled after every record or every few (so that runs are merged into fewer, and
/// records' samples split across runs).
#[test]
fn a_history_larger_than_memory_is_spilled_and_written_the_same() {
    let mut logs = vec![vec![
        "--log".to_string(),
        INCIDENT.to_string(),
        "--log-timezone".into(),
        "UTC".into(),
    ]];
    logs.extend(
        crate::replay::replay_logs()
            .iter()
            .map(|log| replay_args(log)),
    );
    let mut spilled = 0;
    for args in &logs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (held, in_memory) = replay_with_summary(&args);
        assert_eq!(in_memory.spills, 0, "{args:?}");
        // 16 bytes: a run per record; 1000 bytes: a run every few records.
        for budget in [16, 1000] {
            let (text, summary) = replay_within(&args, budget);
            assert!(
                text == held,
                "{args:?} within {budget} bytes: not the same text"
            );
            assert_eq!(summary.samples, in_memory.samples, "{args:?}");
            spilled += usize::from(summary.spills > 0);
        }
    }
    assert!(spilled > logs.len(), "only {spilled} replays spilled");
}

/// The flags of a replay log: its path, UTC, and its `.args`.
fn replay_args(log: &Path) -> Vec<String> {
    let mut args = vec![
        "--log".to_string(),
        log.display().to_string(),
        "--log-timezone".into(),
        "UTC".into(),
    ];
    if let Ok(extra) = std::fs::read_to_string(log.with_extension("args")) {
        args.extend(
            extra
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(String::from),
        );
    }
    args
}

/// Every engine's replay log (histograms, labelled families, escaped label values, several
/// units) makes a history promtool imports.
#[test]
fn promtool_imports_the_history_of_every_replay_log() {
    let Some(promtool) = tool("promtool") else {
        return;
    };
    for log in crate::replay::replay_logs() {
        let args = replay_args(&log);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let dir = tempfile::tempdir().unwrap();
        let history = dir.path().join("history.om");
        std::fs::write(&history, replay_text(&args)).unwrap();
        let imported = Command::new(&promtool)
            .args(["tsdb", "create-blocks-from", "openmetrics"])
            .arg(&history)
            .arg(dir.path().join("data"))
            .output()
            .unwrap();
        assert!(
            imported.status.success(),
            "{}: promtool: {}",
            log.display(),
            stderr(&imported)
        );
    }
}

/// A busy vLLM V1 stats line whose head says `head` (`MM-DD HH:MM:SS`).
fn busy_line(head: &str) -> String {
    format!(
        "(APIServer pid=812) INFO {head} [loggers.py:257] Engine 000: Avg prompt throughput: 10.0 \
         tokens/s, Avg generation throughput: 100.0 tokens/s, Running: 3 reqs, Waiting: 0 reqs, \
         GPU KV cache usage: 4.0%, Prefix cache hit rate: 0.0%"
    )
}

/// `(time, value)` of every sample of series `series` (name and labels as written), in the
/// order written.
fn samples_of(open_metrics: &str, series: &str) -> Vec<(f64, f64)> {
    open_metrics
        .lines()
        .filter(|l| l.starts_with(series) && l[series.len()..].starts_with(['{', ' ']))
        .filter_map(|l| {
            let mut fields = l.rsplitn(3, ' ');
            let time = fields.next()?.parse().ok()?;
            let value = fields.next()?.parse().ok()?;
            Some((time, value))
        })
        .collect()
}

/// Two writers' lines interleaved out of order (a CRI log, a copied-in paste): the history's
/// counter samples, in time order, never go down, which Prometheus would read as resets.
#[test]
fn out_of_order_lines_never_make_a_replayed_counter_go_down_in_time() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    let seconds = [10, 20, 30, 25, 15, 40, 50, 45, 60];
    let lines: Vec<String> = seconds
        .iter()
        .map(|s| busy_line(&format!("11-22 10:00:{s:02}")))
        .collect();
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let (text, summary) =
        replay_with_summary(&["--log", log.to_str().unwrap(), "--log-timezone", "UTC"]);
    let mut tokens = samples_of(&text, "vllm:generation_tokens_total");
    assert!(!tokens.is_empty(), "{text}");
    tokens.sort_by(|a, b| a.0.total_cmp(&b.0));
    for pair in tokens.windows(2) {
        assert!(
            pair[1].1 >= pair[0].1,
            "the counter went down in time: {tokens:?}"
        );
    }
    assert_eq!(summary.out_of_order, 3);
    assert!(summary
        .to_string()
        .contains("3 records dated before an earlier line"));
}

/// Europe/Berlin's October fold: 02:00-02:59 happens twice. A log across it keeps every line,
/// each at its own instant, the second pass with the later offset.
#[test]
fn a_dst_fold_keeps_every_line_of_the_repeated_hour_at_its_own_time() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vllm.log");
    // 2026-10-25, Berlin: CEST until 03:00, then CET from 02:00 again. A line a minute.
    let mut heads: Vec<String> = Vec::new();
    for hour in [1, 2] {
        heads.extend((0..60).map(|m| format!("10-25 {hour:02}:{m:02}:00")));
    }
    heads.extend((0..60).map(|m| format!("10-25 02:{m:02}:00")));
    heads.extend((0..10).map(|m| format!("10-25 03:{m:02}:00")));
    let lines: Vec<String> = heads.iter().map(|h| busy_line(h)).collect();
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let (text, summary) = replay_with_summary(&[
        "--log",
        log.to_str().unwrap(),
        "--log-timezone",
        "Europe/Berlin",
    ]);
    let times: Vec<f64> = samples_of(&text, "vllm:generation_tokens_total")
        .iter()
        .map(|(t, _)| *t)
        .collect();
    assert_eq!(times.len(), lines.len(), "one sample per line");
    assert!(
        times.windows(2).all(|p| p[1] - p[0] == 60.0),
        "a minute apart throughout"
    );
    // 01:00 CEST is 23:00 UTC the day before.
    assert_eq!(times[0], 1_792_882_800.0);
    assert_eq!(summary.dst_second_pass, 60);
    assert!(summary.to_string().contains("60 records in a DST fold"));
}

/// A CRI envelope stamped before 1970 (a clock never set): refused and said, never written as
/// a negative time that promtool drops silently.
#[test]
fn times_before_1970_are_refused_and_counted_in_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("pod.log");
    let lines: Vec<String> = [
        "1969-12-31T23:59:40.000000000Z",
        "1969-12-31T23:59:50.000000000Z",
        "1970-01-01T00:00:10.000000000Z",
    ]
    .iter()
    .map(|t| format!("{t} stdout F {}", busy_line("12-31 23:59:50")))
    .collect();
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let (text, summary) =
        replay_with_summary(&["--log", log.to_str().unwrap(), "--envelope", "cri"]);
    assert_eq!(summary.before_1970, 2);
    assert!(summary
        .to_string()
        .contains("2 records dated before 1970 refused"));
    let times = samples_of(&text, "vllm:generation_tokens_total");
    assert_eq!(times.len(), 1, "{text}");
    assert!(times.iter().all(|(t, _)| *t >= 0.0));
}
