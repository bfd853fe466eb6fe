//! A file is the same file whatever its name, and a log is the same log whatever happens to
//! its file: a rotated file that a glob matches again under its new name is never read twice
//! (in one process, after thousands of rotations, or after a restart), a path switched back
//! to a file already read goes on where it stopped, a glob's file that leaves and comes back
//! is one log with one set of series, and the series of a file that is gone go after
//! `--log-expiry`.

use std::path::Path;
use std::time::Duration;

use llmtail::source::{LogSpec, SourceOptions};

use crate::support::agent::{sample, RunningAgent, TESTS_NOW};
use crate::support::tail::{event_driven, numbered, path_spec, Tail, TempLog};
use crate::support::writer::append_lines;

fn label(path: &Path) -> String {
    path.display().to_string()
}

/// Lines whose text occurs more than once.
fn read_twice(texts: &[String]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    texts
        .iter()
        .filter(|t| !seen.insert(t.as_str()))
        .cloned()
        .collect()
}

/// A process remembered only its last 256 rotated files, so a rotation
/// storm under a glob over dated names read the older ones again from their first byte.
#[test]
fn a_rotation_storm_under_a_glob_reads_each_rotated_file_once() {
    const ROTATIONS: usize = 300;
    let mut log = TempLog::new("app.log");
    let pattern = format!("{}/*.log", log.dir.path().display());
    let options = SourceOptions {
        // Each rotated file is closed at once, so only what is known of it can keep the glob
        // from reading it again.
        rotated_grace: Duration::ZERO,
        ..event_driven()
    };
    let tail = Tail::start(vec![LogSpec::Glob(pattern)], options);
    let mut written = 0;
    for generation in 0..ROTATIONS {
        log.append_lines(&numbered(&format!("generation {generation} line"), 0..3));
        written += 3;
        assert!(
            tail.wait_lines(written),
            "generation {generation}: {} of {written} lines",
            tail.record().lines.len()
        );
        log.rename_to(&format!("app-{generation:04}.log"));
        log.reopen();
    }
    // A new file makes the reader scan the glob once more, with every rotated name in it.
    let last = log.sibling("zz.log");
    std::fs::write(&last, "last\n").unwrap();
    assert!(tail.wait(|r| r.texts().contains(&"last".to_string())));
    let record = tail.stop();
    let texts = record.texts();
    assert_eq!(read_twice(&texts), Vec::<String>::new(), "read twice");
    assert_eq!(texts.len(), written + 1);
}

/// A path switched (a symlink) to another file and back read the first
/// file again from byte 0.
#[test]
fn a_symlink_switched_back_to_a_file_already_read_goes_on_where_it_stopped() {
    let mut a = TempLog::new("a.txt");
    a.append_lines(&numbered("a", 0..3));
    let b = a.sibling("b.txt");
    std::fs::write(&b, numbered("b", 0..2).join("\n") + "\n").unwrap();
    let link = a.sibling("current.log");
    std::os::unix::fs::symlink(&a.path, &link).unwrap();
    let options = SourceOptions {
        rotated_grace: Duration::ZERO,
        ..event_driven()
    };
    let tail = Tail::start(vec![path_spec(&link)], options);
    assert!(tail.wait_lines(3));

    let staged = a.sibling("staged.log");
    let switch_to = |target: &Path| {
        std::os::unix::fs::symlink(target, &staged).unwrap();
        std::fs::rename(&staged, &link).unwrap();
    };
    switch_to(&b);
    assert!(tail.wait_lines(5), "b's lines");
    a.append_lines(&numbered("a", 3..4));
    switch_to(&a.path);
    assert!(
        tail.wait(|r| r.texts().contains(&"a 3".to_string())),
        "a's new line"
    );
    let record = tail.stop();
    let expected: Vec<String> = ["a 0", "a 1", "a 2", "b 0", "b 1", "a 3"]
        .map(String::from)
        .to_vec();
    assert_eq!(record.texts(), expected);
}

/// The log line the agent-level tests write: one vLLM stats line (`Running: n reqs`).
fn stats_line(n: u32) -> String {
    format!(
        "INFO 11-22 13:{:02}:{:02} [loggers.py:257] Engine 000: Avg prompt throughput: 10.0 tokens/s, Avg generation throughput: 1.0 tokens/s, Running: {n} reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%",
        n / 60 % 60,
        n % 60
    )
}

fn write_stats(path: &Path, lines: std::ops::RangeInclusive<u32>) {
    let lines: Vec<String> = lines.map(stats_line).collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    append_lines(path, &lines);
}

/// `llmtail_lines_read_total` of every log, by label.
fn lines_read(metrics: &str) -> Vec<(String, f64)> {
    let mut read: Vec<(String, f64)> = metrics
        .lines()
        .filter_map(|l| l.strip_prefix("llmtail_lines_read_total{"))
        .filter_map(|l| {
            let at = l.find("log=\"")? + "log=\"".len();
            let end = l[at..].find('"')?;
            let value = l.rsplit(' ').next()?.parse().ok()?;
            Some((l[at..at + end].to_string(), value))
        })
        .collect();
    read.sort_by(|a, b| a.0.cmp(&b.0));
    read
}

/// A glob over a directory and a state file beside it.
struct GlobWithStateFile {
    dir: tempfile::TempDir,
    pattern: String,
    state: String,
}

impl GlobWithStateFile {
    fn new() -> GlobWithStateFile {
        let dir = tempfile::tempdir().unwrap();
        let pattern = format!("{}/*.log", dir.path().display());
        let state = dir.path().join("state.json").display().to_string();
        GlobWithStateFile {
            dir,
            pattern,
            state,
        }
    }

    fn start(&self) -> RunningAgent {
        RunningAgent::start(&["--log", &self.pattern, "--state-file", &self.state])
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }
}

/// When line `n` was written: 13:00:00 + n seconds on the tests' day.
fn time_of(n: u32) -> f64 {
    TESTS_NOW - 1505.0 + f64::from(n)
}

/// Waits until `log` shows line `n` (`Running: n reqs`), a second after it was written.
fn wait_for_line(agent: &RunningAgent, log: &Path, n: u32) -> String {
    agent.clock.set(time_of(n) + 1.0);
    let log = label(log);
    agent.wait_for(&format!("line {n} of {log}"), |m| {
        sample(m, "vllm:num_requests_running", &[("log", &log)]) == Some(f64::from(n))
    })
}

/// After a restart with `--state-file`, a dateext rotation (`vllm.log`
/// -> `vllm-20261122.log`) under `*.log` was read again from byte 0 under its new label.
#[test]
fn a_dated_rotation_under_a_glob_is_not_read_again_after_a_restart() {
    let setup = GlobWithStateFile::new();
    let (log, dated) = (setup.path("vllm.log"), setup.path("vllm-20261122.log"));
    write_stats(&log, 1..=20);
    let first = setup.start();
    wait_for_line(&first, &log, 20);
    // Rotated while the agent runs, and again while it is down.
    std::fs::rename(&log, &dated).unwrap();
    write_stats(&log, 21..=25);
    wait_for_line(&first, &log, 25);
    first.stop().unwrap();
    let older = setup.path("vllm-20261121.log");
    std::fs::rename(&dated, &older).unwrap();
    std::fs::rename(&log, &dated).unwrap();
    write_stats(&log, 26..=30);

    let second = setup.start();
    let metrics = wait_for_line(&second, &log, 30);
    assert_eq!(
        lines_read(&metrics),
        [(label(&log), 30.0)],
        "every line once, under the label it was read under"
    );
}

/// The dated name of a file rotated away is a new match
/// of the glob and must not be read again, whether it is found while the rotated file is still
/// drained or long after.
#[test]
fn a_dated_rotation_under_a_glob_is_read_once_in_one_process() {
    let setup = GlobWithStateFile::new();
    let log = setup.path("vllm.log");
    write_stats(&log, 1..=20);
    let agent = setup.start();
    wait_for_line(&agent, &log, 20);
    for (day, lines) in [(21, 21..=25), (22, 26..=30)] {
        std::fs::rename(&log, setup.path(&format!("vllm-202611{day}.log"))).unwrap();
        write_stats(&log, lines);
    }
    wait_for_line(&agent, &log, 30);
    // A file renamed before the agent opened it under `vllm.log` is a new file to the glob,
    // read under its own name: every line is read, once.
    let total = |m: &str| lines_read(m).iter().map(|(_, n)| n).sum::<f64>();
    agent.wait_for("30 lines", |m| total(m) >= 30.0);
    // Not a wait for a result: time for a second reading of a file to show, if there were one.
    std::thread::sleep(Duration::from_millis(200));
    let metrics = agent.metrics();
    assert_eq!(total(&metrics), 30.0, "{:?}", lines_read(&metrics));
}

/// A glob's file gone for longer than the rotation grace that came back
/// got a second state entry with the same `log` label, so every per-log series was exported
/// twice (`llmtail_log_open` both 0 and 1).
#[test]
fn a_glob_file_that_leaves_and_comes_back_is_one_log() {
    let setup = GlobWithStateFile::new();
    let log = setup.path("vllm.log");
    write_stats(&log, 1..=10);
    let agent = setup.start();
    wait_for_line(&agent, &log, 10);
    let away = setup.path("vllm.log.away");
    std::fs::rename(&log, &away).unwrap();
    let label = label(&log);
    agent.wait_for("the log to be closed", |m| {
        sample(m, "llmtail_log_open", &[("log", &label)]) == Some(0.0)
    });
    // Past the grace: the reader has forgotten the path, and must find the same log again.
    std::thread::sleep(SourceOptions::default().rotated_grace + Duration::from_secs(1));
    std::fs::rename(&away, &log).unwrap();
    write_stats(&log, 11..=12);
    let metrics = wait_for_line(&agent, &log, 12);
    let open: Vec<&str> = metrics
        .lines()
        .filter(|l| l.starts_with("llmtail_log_open{"))
        .collect();
    assert_eq!(open, [format!("llmtail_log_open{{log=\"{label}\"}} 1.0")]);
    assert_eq!(
        lines_read(&metrics),
        [(label.clone(), 12.0)],
        "counters go on"
    );
}

/// Deleted files' series were kept for ever (84k series and 44 MB after
/// 4,000 files came and went). They go after `--log-expiry`; a named path's come back with it.
#[test]
fn the_series_of_a_file_that_is_gone_go_after_log_expiry() {
    let dir = tempfile::tempdir().unwrap();
    let (globbed, named) = (dir.path().join("a.log"), dir.path().join("named.txt"));
    write_stats(&globbed, 1..=2);
    write_stats(&named, 1..=3);
    let pattern = format!("{}/*.log", dir.path().display());
    let agent = RunningAgent::start(&[
        "--log",
        &pattern,
        "--log",
        named.to_str().unwrap(),
        "--log-expiry",
        "10m",
    ]);
    wait_for_line(&agent, &globbed, 2);
    wait_for_line(&agent, &named, 3);
    std::fs::remove_file(&globbed).unwrap();
    std::fs::remove_file(&named).unwrap();
    let gone =
        |m: &str, path: &Path| sample(m, "llmtail_log_open", &[("log", &label(path))]) == Some(0.0);
    agent.wait_for("both logs closed", |m| gone(m, &globbed) && gone(m, &named));

    let closed_at = time_of(3) + 1.0;
    agent.clock.set(closed_at + 9.0 * 60.0);
    let metrics = agent.metrics();
    assert_eq!(lines_read(&metrics).len(), 2, "kept within the expiry");
    agent.clock.set(closed_at + 11.0 * 60.0);
    let metrics = agent.wait_for("both logs dropped after the expiry", |m| {
        lines_read(m).is_empty()
    });
    assert!(!metrics.contains("vllm:num_requests_running{"), "{metrics}");

    write_stats(&named, 4..=4);
    let metrics = wait_for_line(&agent, &named, 4);
    assert_eq!(
        lines_read(&metrics),
        [(label(&named), 4.0)],
        "counters go on"
    );
}

/// A scrape forgot a glob's expired log behind the reader's back: what the state holds is
/// judged where it is written, and a scrape, however late, only reads it.
#[test]
fn a_scrape_does_not_forget_an_expired_log() {
    use llmtail::engines::parts::caps::{SeriesGuard, DEFAULT_MAX_SERIES};
    use llmtail::engines::parts::pacing::StatsInterval;
    use llmtail::exposition::render::{render, Format};
    use llmtail::state::{LogState, State, StateSettings};
    use std::sync::{Arc, Mutex};

    let mut state = State::new(StateSettings {
        stats_interval: StatsInterval::Auto,
        model_name: None,
        constant_labels: Vec::new(),
        series: SeriesGuard {
            max_series: DEFAULT_MAX_SERIES,
        },
        log_expiry: 600.0,
    });
    let mut gone = LogState::new(
        Arc::from("/var/log/vllm/a.log"),
        LogSpec::Glob("/var/log/vllm/*.log".into()),
        Vec::new(),
        None,
        None,
    );
    gone.from_glob = true;
    gone.gone_since = Some(TESTS_NOW);
    state.insert_log(0, gone);
    let state = Arc::new(Mutex::new(state));

    // An hour past the expiry, a scrape comes.
    render(&state, &[], Format::Text004);
    assert_eq!(
        state.lock().unwrap().find_log("/var/log/vllm/a.log"),
        Some(0),
        "still the reader's to forget"
    );
}

/// `llmtail_lines_read_total` and `vllm:num_preemptions_total` summed over all logs, from a
/// one-shot run with `flags`.
fn one_shot_totals(flags: &[String]) -> (f64, usize) {
    let mut argv = vec!["llmtail".to_string(), "--one-shot".to_string()];
    argv.extend_from_slice(flags);
    let metrics = crate::replay::one_shot(&argv);
    let read: f64 = lines_read(&metrics).iter().map(|(_, n)| n).sum();
    (read, lines_read(&metrics).len())
}

/// With a glob given before a path it matches, the path's
/// state replaced the glob's, and every line the glob's reader handed on was dropped as "from
/// a log that was never announced" (0 of 10 lines counted).
#[test]
fn a_glob_given_before_a_path_it_matches_reads_the_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("a.log");
    write_stats(&log, 1..=10);
    let glob = format!("{}/*.log", dir.path().display());
    let path = log.display().to_string();
    for flags in [
        ["--log", &glob, "--log", &path],
        ["--log", &path, "--log", &glob],
    ] {
        let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
        assert_eq!(one_shot_totals(&flags), (10.0, 1), "{flags:?}");
    }
}

/// One file named twice (a symlink and its target, a hard
/// link, `/./`, `//`) was read once per name as it grew (20 lines counted of 15).
#[test]
fn one_file_under_several_names_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("a.log");
    write_stats(&log, 1..=10);
    let link = dir.path().join("link.log");
    std::os::unix::fs::symlink(&log, &link).unwrap();
    let hard = dir.path().join("hard.txt");
    std::fs::hard_link(&log, &hard).unwrap();
    let names = [
        log.display().to_string(),
        link.display().to_string(),
        hard.display().to_string(),
        format!("{}/./a.log", dir.path().display()),
        format!("{}//a.log", dir.path().display()),
    ];
    let mut flags = Vec::new();
    for name in &names {
        flags.extend(["--log", name.as_str()]);
    }
    let agent = RunningAgent::start(&flags);
    let total = |m: &str| lines_read(m).iter().map(|(_, n)| n).sum::<f64>();
    agent.wait_for("10 lines", |m| total(m) >= 10.0);
    write_stats(&log, 11..=15);
    agent.wait_for("15 lines", |m| total(m) >= 15.0);
    // Not a wait for a result: time for a second reading to show, if there were one.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        total(&agent.metrics()),
        15.0,
        "{:?}",
        lines_read(&agent.metrics())
    );
}
