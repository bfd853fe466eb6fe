//! Real `logrotate` against the whole agent: `create` (the engine reopens its log a moment
//! later, as on SIGHUP), `copytruncate` (the engine keeps its append handle), several in a
//! row, and a glob that the rotated names match or do not.
//!
//! An engine thread writes numbered vLLM stats lines (`Running: n reqs, ..., Preemptions: n`,
//! see `support::writer`), so the agent's own series say what arrived: the count
//! (`llmtail_lines_read_total`), the sum of the numbers (`vllm:num_preemptions_total`) and the
//! last one (`vllm:num_requests_running`). Lines are read in order, so a loss or a duplicate is
//! a run of lines, and a run changes the count or the sum; both right is every line once.
//!
//! logrotate only ever touches the test's temp dir: its config and state file live there.

use std::path::Path;
use std::time::Duration;

use llmtail::source::SourceOptions;

use crate::support::agent::{sample, RunningAgent};
use crate::support::writer::{numbers_in, sum_to, Logrotate, NumberedLog, PacedWriter};

/// How fast the engine logs in these scenarios: fast enough that lines land in the renamed
/// file and between logrotate's copy and its truncate, slow enough for a loaded CI machine.
const LINES_PER_SECOND: u64 = 2_000;

/// Lines the engine writes before the first rotation.
const LINES_BEFORE_ROTATION: u64 = 200;

/// Lines the engine goes on writing to the renamed file before it reopens its log (it
/// reopens when its SIGHUP comes, a moment after logrotate's rename).
const LINES_BEFORE_REOPEN: u64 = 100;

/// Lines written after the last rotation.
const LINES_AFTER: u64 = 200;

/// What the agent says about one log.
#[derive(Debug, PartialEq)]
struct Seen {
    read: u64,
    parsed: u64,
    sum: u64,
    last: u64,
    rotations: u64,
    truncations: u64,
    skipped_too_long: u64,
    skipped_partial: u64,
    skipped_invalid: u64,
}

fn seen(metrics: &str, label: &str) -> Seen {
    let log = [("log", label)];
    let get = |name: &str, extra: Option<(&str, &str)>| {
        let mut labels = log.to_vec();
        labels.extend(extra);
        // A counter that never moved may have no series yet: that is a 0.
        sample(metrics, name, &labels).unwrap_or(0.0) as u64
    };
    Seen {
        read: get("llmtail_lines_read_total", None),
        parsed: get(
            "llmtail_lines_parsed_total",
            Some(("grammar", "vllm_stats")),
        ),
        sum: get("vllm:num_preemptions_total", None),
        last: get("vllm:num_requests_running", None),
        rotations: get("llmtail_log_rotations_total", None),
        truncations: get("llmtail_log_truncations_total", None),
        skipped_too_long: get("llmtail_lines_skipped_total", Some(("reason", "too_long"))),
        skipped_partial: get(
            "llmtail_lines_skipped_total",
            Some(("reason", "truncated_partial")),
        ),
        skipped_invalid: get(
            "llmtail_lines_skipped_total",
            Some(("reason", "invalid_envelope")),
        ),
    }
}

/// Waits until the agent read line `last` of `label` (the last one written): lines are read
/// in order, and a rotated file is drained before the new one, so by then everything that
/// will ever arrive has.
fn wait_for_line(agent: &RunningAgent, label: &str, last: u64) -> Seen {
    let metrics = agent.wait_for(&format!("line {last} of {label}"), |m| {
        seen(m, label).last == last
    });
    seen(&metrics, label)
}

/// Every line 1..=`total` read once, every one a stats line, nothing skipped.
fn every_line_once(total: u64, rotations: u64, truncations: u64) -> Seen {
    Seen {
        read: total,
        parsed: total,
        sum: sum_to(total),
        last: total,
        rotations,
        truncations,
        skipped_too_long: 0,
        skipped_partial: 0,
        skipped_invalid: 0,
    }
}

fn label(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 temp path")
}

/// The `log` labels of every `llmtail_lines_read_total` series.
fn logs_read(metrics: &str) -> Vec<String> {
    let mut logs: Vec<String> = metrics
        .lines()
        .filter(|l| l.starts_with("llmtail_lines_read_total{"))
        .filter_map(|l| {
            let at = l.find("log=\"")? + "log=\"".len();
            let end = l[at..].find('"')?;
            Some(l[at..at + end].to_string())
        })
        .collect();
    logs.sort();
    logs
}

/// One `create` rotation with the engine writing throughout; returns the last line written
/// before logrotate ran.
fn rotate_create_and_reopen(writer: &PacedWriter, logrotate: &Logrotate) -> u64 {
    let before = writer.written();
    logrotate.run();
    writer.wait_more(LINES_BEFORE_REOPEN);
    writer.reopen();
    before
}

#[test]
fn logrotate_create_then_reopen_reads_every_line_once() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("app.log");
    // There before the agent, which is ready only once every log it follows is open.
    std::fs::write(&log, "").unwrap();
    let agent = RunningAgent::start(&["--log", label(&log)]);
    let writer = PacedWriter::spawn(&log, LINES_PER_SECOND);
    writer.wait_written(LINES_BEFORE_ROTATION);

    let logrotate = Logrotate::new(dir.path(), "create", &log, &["create"]);
    let before = rotate_create_and_reopen(&writer, &logrotate);
    writer.wait_more(LINES_AFTER);
    let (total, _) = writer.stop();

    let got = wait_for_line(&agent, label(&log), total);
    assert_eq!(got, every_line_once(total, 1, 0));
    // The scenario happened as described: the engine went on writing to the renamed file
    // after logrotate's rename, then wrote to the new file, and the two hold every line.
    let renamed = numbers_in(&dir.path().join("app.log.1"));
    let current = numbers_in(&log);
    assert!(
        renamed.last().copied().unwrap_or(0) >= before + LINES_BEFORE_REOPEN,
        "nothing written to the renamed file after the rename"
    );
    assert_eq!([renamed, current].concat(), (1..=total).collect::<Vec<_>>());
}

#[test]
fn logrotate_copytruncate_loses_only_lines_written_between_its_copy_and_its_truncate() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("app.log");
    // There before the agent, which is ready only once every log it follows is open.
    std::fs::write(&log, "").unwrap();
    let agent = RunningAgent::start(&["--log", label(&log)]);
    let writer = PacedWriter::spawn(&log, LINES_PER_SECOND);
    writer.wait_written(LINES_BEFORE_ROTATION);

    let logrotate = Logrotate::new(dir.path(), "copytruncate", &log, &["copytruncate"]);
    logrotate.run();
    writer.wait_more(LINES_AFTER);
    let (total, _) = writer.stop();

    // Where logrotate's copy ended (`copied`) and what the file held after its truncate (from
    // `cut + 1` on): lines in between are in neither file.
    let copy = numbers_in(&dir.path().join("app.log.1"));
    let copied = copy.last().copied().expect("logrotate copied lines");
    assert_eq!(copy, (1..=copied).collect::<Vec<_>>());
    let after = numbers_in(&log);
    let cut = after.first().copied().expect("lines after the truncate") - 1;
    assert_eq!(after, (cut + 1..=total).collect::<Vec<_>>());
    assert!(copied <= cut);

    let got = wait_for_line(&agent, label(&log), total);
    assert!(got.read <= total, "more lines read than written: {got:?}");
    // Read in order: 1..=r from the file before its truncate, then cut+1..=total after it.
    let after_cut = total - cut;
    let r = got
        .read
        .checked_sub(after_cut)
        .expect("fewer lines read than written after the truncate");
    assert_eq!(
        got.sum,
        sum_to(r) + sum_to(total) - sum_to(cut),
        "not 1..={r} then {}..={total} once each: {got:?}",
        cut + 1
    );
    let lost = total - got.read;
    println!(
        "copytruncate: {total} lines written at {LINES_PER_SECOND}/s; logrotate's copy ends at \
         line {copied}, its truncate came after line {cut} ({} lines in neither file); the agent \
         read up to line {r} before the truncate and lost {lost}",
        cut - copied
    );
    // What the agent lost was written after logrotate's copy: it keeps up with the engine.
    assert!(
        r >= copied,
        "the agent lost line(s) {}..={cut}, before logrotate's copy ended at {copied}",
        r + 1
    );
    // A line cut in the middle by the truncate is lost and counted as a partial (rare: a read
    // in the middle of a `write()`); anything else is exact.
    assert!(got.skipped_partial <= 1, "{got:?}");
    assert_eq!(
        (got.parsed, got.last, got.rotations, got.truncations),
        (got.read, total, 0, 1)
    );
    assert_eq!((got.skipped_too_long, got.skipped_invalid), (0, 0));
}

/// How many rotations of each kind run in a row.
const ROTATIONS_IN_A_ROW: u64 = 5;

#[test]
fn several_logrotate_creates_in_a_row_read_every_line_once() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("app.log");
    // There before the agent, which is ready only once every log it follows is open.
    std::fs::write(&log, "").unwrap();
    let agent = RunningAgent::start(&["--log", label(&log)]);
    let writer = PacedWriter::spawn(&log, LINES_PER_SECOND);
    writer.wait_written(LINES_BEFORE_ROTATION);

    let logrotate = Logrotate::new(dir.path(), "create", &log, &["create"]);
    for _ in 0..ROTATIONS_IN_A_ROW {
        rotate_create_and_reopen(&writer, &logrotate);
        writer.wait_more(LINES_BEFORE_ROTATION);
    }
    let (total, _) = writer.stop();

    let got = wait_for_line(&agent, label(&log), total);
    assert_eq!(got, every_line_once(total, ROTATIONS_IN_A_ROW, 0));
}

#[test]
fn several_logrotate_copytruncates_in_a_row_at_quiet_moments_lose_nothing() {
    // copytruncate loses only what is written between its copy and its truncate: at a
    // moment when the engine is not writing and the agent has read everything, nothing.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("app.log");
    // There before the agent, which is ready only once every log it follows is open.
    std::fs::write(&log, "").unwrap();
    let agent = RunningAgent::start(&["--log", label(&log)]);
    let mut engine = NumberedLog::new(&log);
    let logrotate = Logrotate::new(dir.path(), "copytruncate", &log, &["copytruncate"]);
    for k in 0..ROTATIONS_IN_A_ROW {
        // A different number of lines each time: a file cut and written back to exactly the
        // offset the agent was at looks unchanged until it grows (see `source::file`).
        engine.write(100 + 10 * k);
        let written = engine.written;
        agent.wait_for(&format!("line {written}"), |m| {
            seen(m, label(&log)).read == written
        });
        logrotate.run();
    }
    engine.write(LINES_AFTER);

    let got = wait_for_line(&agent, label(&log), engine.written);
    assert_eq!(got, every_line_once(engine.written, 0, ROTATIONS_IN_A_ROW));
}

/// Follows `<dir>/*.log` while logrotate rotates `x.log` with `directives`; returns the
/// agent, the lines written and the dir.
fn rotate_under_a_glob(directives: &[&str]) -> (RunningAgent, u64, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("x.log");
    let pattern = format!("{}/*.log", dir.path().display());
    std::fs::write(&log, "").unwrap();
    let agent = RunningAgent::start(&["--log", &pattern]);
    let writer = PacedWriter::spawn(&log, LINES_PER_SECOND);
    writer.wait_written(LINES_BEFORE_ROTATION);
    let logrotate = Logrotate::new(dir.path(), "glob", &log, directives);
    rotate_create_and_reopen(&writer, &logrotate);
    writer.wait_more(LINES_AFTER);
    let (total, _) = writer.stop();
    (agent, total, dir)
}

#[test]
fn a_glob_does_not_read_a_rotated_name_it_does_not_match() {
    let (agent, total, dir) = rotate_under_a_glob(&["create"]);
    let log = dir.path().join("x.log");
    assert!(dir.path().join("x.log.1").exists());

    let got = wait_for_line(&agent, label(&log), total);
    assert_eq!(got, every_line_once(total, 1, 0));
    assert_eq!(logs_read(&agent.metrics()), [label(&log)]);
}

/// The agent keeps a rotated file open this long after the rename (its default).
fn rotated_grace() -> Duration {
    SourceOptions::default().rotated_grace
}

/// Time for the agent's deadline to close the rotated file once its grace is over. Part of
/// the scenario (the file must be closed, so only its identity and first bytes can keep the
/// glob from reading it again), not a wait for a result.
const AFTER_GRACE: Duration = Duration::from_secs(1);

#[test]
fn a_glob_does_not_read_a_dated_rotated_name_it_matches_again() {
    // `x.log` becomes `x-YYYYMMDD.log`: a new match of `*.log`, holding lines already read.
    let (agent, total, dir) =
        rotate_under_a_glob(&["create", "dateext", "dateformat -%Y%m%d", "extension .log"]);
    let log = dir.path().join("x.log");
    let dated: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("x-") && name.ends_with(".log"))
        .collect();
    assert_eq!(dated.len(), 1, "logrotate's dated name: {dated:?}");

    let got = wait_for_line(&agent, label(&log), total);
    assert_eq!(got, every_line_once(total, 1, 0));
    assert_eq!(logs_read(&agent.metrics()), [label(&log)]);

    // Once the rotated file is closed, the next scan of the glob must still know it: a new
    // file makes the agent scan the glob, and its lines showing up mean the scan is done.
    std::thread::sleep(rotated_grace() + AFTER_GRACE);
    let later = dir.path().join("y.log");
    let mut engine = NumberedLog::new(&later);
    engine.write(1);
    let metrics = agent.wait_for("y.log's line", |m| seen(m, label(&later)).read == 1);
    assert_eq!(logs_read(&metrics), [label(&log), label(&later)]);
    assert_eq!(seen(&metrics, label(&log)), every_line_once(total, 1, 0));
}
