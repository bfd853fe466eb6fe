//! Tailing scenarios: rotation, truncation, late files, hostile bytes.
//!
//! Each test drives a real file the way a writer or a rotation tool would, with a reader
//! following it on its own thread, and asserts exactly which lines arrived (and how many were
//! lost and why). The reader's slow poll is set far beyond the deadline (see
//! `event_driven`), so these pass only if file-system events drive the reader.

use std::io::Cursor;
use std::path::Path;
use std::time::Duration;

use llmtail::source::{LogSpec, Reader, SkipReason, SourceOptions, StartFrom};

use crate::support::tail::{
    event_driven, numbered, path_spec, permissions_apply, read_once, resident_bytes,
    run_alone_in_child, Record, Seen, Tail, TempLog,
};

/// Asserts the lines (lossily decoded) are exactly `expected`, and that no line or event of
/// a log came before its `Discovered`.
fn assert_lines(record: &Record, expected: &[String]) {
    let got = record.texts();
    assert_eq!(got.len(), expected.len(), "line count");
    assert_eq!(got, expected);
    assert_eq!(
        record.out_of_order, 0,
        "something came before its Discovered"
    );
}

fn assert_nothing_lost(record: &Record) {
    assert_eq!(record.skipped(SkipReason::TooLong), 0, "too-long skips");
    assert_eq!(
        record.skipped(SkipReason::TruncatedPartial),
        0,
        "dropped partial lines"
    );
}

fn concat(parts: &[Vec<String>]) -> Vec<String> {
    parts.concat()
}

fn label(path: &Path) -> String {
    path.display().to_string()
}

/// Rename, the writer appends a little more to the renamed file (it has not reopened yet),
/// then reopens its log under the old name.
fn rotate_by_rename(log: &mut TempLog, gap: Duration) {
    log.rename_to("app.log.1");
    log.append_lines(&numbered("old", 100..150));
    log.reopen();
    if !gap.is_zero() {
        std::thread::sleep(gap);
    }
    log.append_lines(&numbered("new", 0..70));
}

fn rotation_expected() -> Vec<String> {
    concat(&[numbered("old", 0..150), numbered("new", 0..70)])
}

#[test]
fn rename_then_create_at_once_loses_nothing() {
    let mut log = TempLog::new("app.log");
    log.append_lines(&numbered("old", 0..100));
    let tail = Tail::start(vec![path_spec(&log.path)], event_driven());
    assert!(tail.wait_lines(100));

    rotate_by_rename(&mut log, Duration::ZERO);
    assert!(tail.wait_lines(220), "got {}", tail.record().lines.len());

    let record = tail.stop();
    assert_lines(&record, &rotation_expected());
    assert_nothing_lost(&record);
    assert_eq!(record.count(&Seen::Rotated), 1);
}

/// The time between the rename and the creation of the new file: logrotate's `create`, or
/// a program that reopens its log only when it next writes. Part of the scenario, not a wait
/// for the reader: the reader must keep the path and pick the file up when it appears.
const RENAME_TO_CREATE_GAP: Duration = Duration::from_millis(500);

#[test]
fn rename_then_create_after_a_gap_loses_nothing() {
    let mut log = TempLog::new("app.log");
    log.append_lines(&numbered("old", 0..100));
    let tail = Tail::start(vec![path_spec(&log.path)], event_driven());
    assert!(tail.wait_lines(100));

    rotate_by_rename(&mut log, RENAME_TO_CREATE_GAP);
    assert!(tail.wait_lines(220), "got {}", tail.record().lines.len());

    let record = tail.stop();
    assert_lines(&record, &rotation_expected());
    assert_nothing_lost(&record);
    assert_eq!(record.count(&Seen::Rotated), 1);
}

#[test]
fn rename_then_create_while_the_sink_is_busy_loses_nothing() {
    let mut log = TempLog::new("app.log");
    log.append_lines(&numbered("old", 0..100));
    let (tail, gate) = Tail::start_gated(vec![path_spec(&log.path)], event_driven());
    // The reader is now stuck in the sink with the first batch; the rotation happens under it.
    assert!(gate.wait_entered());
    rotate_by_rename(&mut log, Duration::ZERO);
    gate.release();
    assert!(tail.wait_lines(220), "got {}", tail.record().lines.len());

    let record = tail.stop();
    assert_lines(&record, &rotation_expected());
    assert_nothing_lost(&record);
    assert_eq!(record.count(&Seen::Rotated), 1);
}

#[test]
fn delete_then_recreate_at_once_loses_nothing() {
    let mut log = TempLog::new("app.log");
    log.append_lines(&numbered("old", 0..100));
    let tail = Tail::start(vec![path_spec(&log.path)], event_driven());
    assert!(tail.wait_lines(100));

    log.delete();
    log.reopen();
    log.append_lines(&numbered("new", 0..60));
    assert!(tail.wait_lines(160), "got {}", tail.record().lines.len());

    let record = tail.stop();
    assert_lines(
        &record,
        &concat(&[numbered("old", 0..100), numbered("new", 0..60)]),
    );
    assert_nothing_lost(&record);
    assert_eq!(record.count(&Seen::Rotated), 1);
}

#[test]
fn a_rotated_file_is_drained_for_its_grace_then_closed() {
    let mut log = TempLog::new("app.log");
    log.append_lines(&numbered("old", 0..10));
    let options = SourceOptions {
        rotated_grace: Duration::from_millis(300),
        ..event_driven()
    };
    let tail = Tail::start(vec![path_spec(&log.path)], options);
    assert!(tail.wait_lines(10));

    // Renamed, and no new file: the writer goes on writing to the renamed file, and stops
    // in the middle of a line.
    log.rename_to("app.log.1");
    log.append_lines(&numbered("old", 10..20));
    log.append(b"cut in the midd");
    assert!(tail.wait(|r| r.count(&Seen::Closed) == 1), "never closed");
    // The path comes back later: a new file, read from its first byte.
    log.reopen();
    log.append_lines(&numbered("new", 0..5));
    assert!(tail.wait_lines(25));

    let record = tail.stop();
    assert_lines(
        &record,
        &concat(&[numbered("old", 0..20), numbered("new", 0..5)]),
    );
    assert_eq!(
        record.skipped(SkipReason::TruncatedPartial),
        1,
        "the cut line"
    );
    assert_eq!(record.skipped(SkipReason::TooLong), 0);
    assert_eq!(record.count(&Seen::Opened), 2);
    assert_eq!(
        record.count(&Seen::Rotated),
        0,
        "the old file was closed before the new one came"
    );
}

#[test]
fn truncate_then_regrow_past_the_old_offset_rereads_from_the_start() {
    let mut log = TempLog::new("app.log");
    log.append_lines(&numbered("old", 0..10));
    let (tail, gate) = Tail::start_gated(vec![path_spec(&log.path)], event_driven());
    // While the reader is busy with the first batch, the file is cut and written past the
    // offset the reader is at: its size alone does not show the truncation.
    assert!(gate.wait_entered());
    log.truncate();
    log.append_lines(&numbered("new", 0..30));
    gate.release();
    assert!(tail.wait_lines(40), "got {}", tail.record().lines.len());

    let record = tail.stop();
    assert_lines(
        &record,
        &concat(&[numbered("old", 0..10), numbered("new", 0..30)]),
    );
    assert_nothing_lost(&record);
    assert_eq!(record.count(&Seen::Truncated), 1);
}

#[test]
fn copytruncate_loses_nothing() {
    let mut log = TempLog::new("app.log");
    log.append_lines(&numbered("before", 0..50));
    let tail = Tail::start(vec![path_spec(&log.path)], event_driven());
    assert!(tail.wait_lines(50));

    // logrotate's copytruncate: copy, then cut the original in place; the writer's append
    // handle goes on at the new end.
    std::fs::copy(&log.path, log.sibling("app.log.1")).expect("copy");
    log.truncate();
    log.append_lines(&numbered("after", 0..20));
    assert!(tail.wait_lines(70), "got {}", tail.record().lines.len());

    let record = tail.stop();
    assert_lines(
        &record,
        &concat(&[numbered("before", 0..50), numbered("after", 0..20)]),
    );
    assert_nothing_lost(&record);
    assert_eq!(record.count(&Seen::Truncated), 1);
}

#[test]
fn a_file_that_appears_late_is_read_from_its_first_byte() {
    let mut log = TempLog::new("late.log");
    let tail = Tail::start(vec![path_spec(&log.path)], event_driven());
    assert_eq!(tail.record().count(&Seen::Opened), 0);

    log.append_lines(&numbered("line", 0..10));
    assert!(tail.wait_lines(10));

    let record = tail.stop();
    assert_lines(&record, &numbered("line", 0..10));
    assert_nothing_lost(&record);
    assert_eq!(record.count(&Seen::Opened), 1);
    assert_eq!(
        record.count(&Seen::Discovered(label(&log.path))),
        1,
        "label is the path as given"
    );
}

#[test]
fn a_symlinked_log_is_followed_by_events_in_its_target_directory() {
    // Kubernetes' /var/log/containers/*.log are symlinks into /var/log/pods/...: the writes
    // happen in the target's directory, which must be watched too.
    let mut target = TempLog::new("0.log");
    target.append_lines(&numbered("line", 0..2));
    let links = tempfile::tempdir().expect("temp dir");
    let link = links.path().join("pod_app.log");
    std::os::unix::fs::symlink(&target.path, &link).expect("symlink");
    let tail = Tail::start(vec![path_spec(&link)], event_driven());
    assert!(tail.wait_lines(2));

    target.append_lines(&numbered("line", 2..5));
    assert!(tail.wait_lines(5), "got {}", tail.record().lines.len());
    // The kubelet rotates the target: rename, and a new file at the same name.
    target.rename_to("0.log.20250101");
    target.reopen();
    target.append_lines(&numbered("line", 5..8));
    assert!(tail.wait_lines(8), "got {}", tail.record().lines.len());

    let record = tail.stop();
    assert_lines(&record, &numbered("line", 0..8));
    assert_nothing_lost(&record);
    assert_eq!(record.count(&Seen::Rotated), 1);
    assert_eq!(
        record.texts_of(&label(&link)).len(),
        8,
        "labelled by the link"
    );
}

#[test]
fn a_directory_that_appears_late_is_watched_once_it_exists() {
    let root = tempfile::tempdir().expect("temp dir");
    let path = root.path().join("engine/logs/app.log");
    let tail = Tail::start(vec![path_spec(&path)], event_driven());

    std::fs::create_dir_all(path.parent().unwrap()).expect("mkdir");
    std::fs::write(&path, numbered("line", 0..5).join("\n") + "\n").expect("write");
    assert!(tail.wait_lines(5), "got {}", tail.record().lines.len());
    // And it keeps being followed there.
    let mut more = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut more, b"line 5\n").unwrap();
    assert!(tail.wait_lines(6));

    let record = tail.stop();
    assert_lines(&record, &numbered("line", 0..6));
    assert_nothing_lost(&record);
}

/// When permissions apply (not root): the file is mode 000, then made readable. As root,
/// mode bits stop nothing, so the open is made to fail another way that stops root too: the
/// path is a symlink to itself (ELOOP), and the fix renames a real file over it. Either way
/// exactly one failure is reported: the fix is an event on the path, which retries at once
/// (the backoff would otherwise wait for the two-minute poll).
#[test]
fn a_file_that_cannot_be_opened_is_retried_once_fixed() {
    let log = TempLog::new("app.log");
    let lines = numbered("line", 0..5);
    let as_root = !permissions_apply();
    if as_root {
        std::os::unix::fs::symlink(&log.path, &log.path).expect("symlink loop");
    } else {
        std::fs::write(&log.path, lines.join("\n") + "\n").expect("write");
        log.chmod(0o000);
    }
    let tail = Tail::start(vec![path_spec(&log.path)], event_driven());
    assert!(tail.wait(|r| r.open_failures() == 1), "no OpenFailed");

    if as_root {
        let staged = log.sibling("app.log.new");
        std::fs::write(&staged, lines.join("\n") + "\n").expect("write");
        std::fs::rename(&staged, &log.path).expect("rename over the loop");
    } else {
        log.chmod(0o644);
    }
    assert!(tail.wait_lines(5), "never read after the fix");

    let record = tail.stop();
    assert_lines(&record, &lines);
    assert_nothing_lost(&record);
    assert_eq!(record.open_failures(), 1);
    let expected_errno = if as_root { libc::ELOOP } else { libc::EACCES };
    assert_eq!(record.count(&Seen::OpenFailed(Some(expected_errno))), 1);
}

#[test]
fn a_line_written_in_two_parts_is_one_line() {
    let mut log = TempLog::new("app.log");
    log.append(b"");
    let tail = Tail::start(vec![path_spec(&log.path)], event_driven());

    log.append(b"hel");
    // The reader has read the first part (nothing complete yet, so the offset stays 0).
    assert!(tail.wait(|r| r.count(&Seen::Offset(0)) >= 1));
    assert!(tail.record().lines.is_empty(), "a line before its \\n");
    log.append(b"lo\n");
    assert!(tail.wait_lines(1));

    let record = tail.stop();
    assert_lines(&record, &["hello".to_string()]);
    assert_nothing_lost(&record);
    assert_eq!(record.last_offset(&label(&log.path)), Some(6));
}

#[test]
fn a_partial_line_cut_by_truncation_is_dropped_not_glued() {
    let mut log = TempLog::new("app.log");
    log.append(b"complete\npart");
    let tail = Tail::start(vec![path_spec(&log.path)], event_driven());
    assert!(tail.wait_lines(1));

    log.truncate();
    log.append(b"fresh\n");
    assert!(tail.wait_lines(2));

    let record = tail.stop();
    assert_lines(&record, &["complete".to_string(), "fresh".to_string()]);
    assert_eq!(record.skipped(SkipReason::TruncatedPartial), 1);
    assert_eq!(record.count(&Seen::Truncated), 1);
}

#[test]
fn a_line_over_64_kib_is_skipped_and_counted() {
    let mut log = TempLog::new("app.log");
    let limit = SourceOptions::default().max_line_bytes;
    let mut bytes = b"before\n".to_vec();
    bytes.extend(std::iter::repeat_n(b'y', limit)); // exactly the limit: passes
    bytes.push(b'\n');
    bytes.extend(std::iter::repeat_n(b'x', limit + 1)); // one byte over: skipped
    bytes.extend(b"\nafter\n");
    log.append(&bytes);
    let tail = Tail::start(vec![path_spec(&log.path)], event_driven());
    assert!(tail.wait_lines(3));

    let record = tail.stop();
    let at_limit = "y".repeat(limit);
    assert_lines(
        &record,
        &["before".to_string(), at_limit, "after".to_string()],
    );
    assert_eq!(record.skipped(SkipReason::TooLong), 1);
    assert_eq!(record.skipped(SkipReason::TruncatedPartial), 0);
}

/// copytruncate under a writer without `O_APPEND`: the file is cut to nothing, and the
/// writer's next line lands at its old offset, after a hole read as NULs. A hole over
/// `--max-line-bytes` was taken for a too-long line, and the line after it lost with it.
#[test]
fn a_copytruncate_hole_of_nuls_over_64_kib_is_skipped_and_the_line_after_it_kept() {
    use std::os::unix::fs::FileExt;
    let mut log = TempLog::new("app.log");
    let old_lines = numbered("old", 0..10_000);
    log.append_lines(&old_lines);
    let tail = Tail::start(vec![path_spec(&log.path)], event_driven());
    assert!(tail.wait_lines(old_lines.len()));
    let old_len = std::fs::metadata(&log.path).unwrap().len();
    assert!(old_len > 64 * 1024, "the hole must be over the limit");

    log.truncate();
    let writer = std::fs::OpenOptions::new()
        .write(true)
        .open(&log.path)
        .unwrap();
    writer.write_all_at(b"after the hole\n", old_len).unwrap();
    assert!(
        tail.wait(|r| r.texts().last().map(String::as_str) == Some("after the hole")),
        "the line after the hole never came"
    );

    let record = tail.stop();
    assert_eq!(record.skipped(SkipReason::TooLong), 0);
}

/// Set in the child process that runs [`skipping_a_32_mib_line_measured_alone`].
const MEMORY_PROBE_ENV: &str = "LLMTAIL_TEST_MEMORY_PROBE";

#[test]
fn a_32_mib_line_is_skipped_without_holding_it() {
    // Other tests of this binary allocate while they run; measured in a process of its own,
    // the growth is the reader's.
    let output = run_alone_in_child(
        "tailing::skipping_a_32_mib_line_measured_alone",
        MEMORY_PROBE_ENV,
    );
    assert!(
        output.contains("measured:"),
        "the probe did not measure:\n{output}"
    );
}

/// The measurement behind [`a_32_mib_line_is_skipped_without_holding_it`]; does nothing
/// unless run by it (in a child process, alone).
#[test]
fn skipping_a_32_mib_line_measured_alone() {
    if std::env::var_os(MEMORY_PROBE_ENV).is_none() {
        return;
    }
    const MIB: usize = 1024 * 1024;
    let mut log = TempLog::new("app.log");
    log.append(b"before\n");
    let tail = Tail::start(vec![path_spec(&log.path)], event_driven());
    assert!(tail.wait_lines(1));

    let chunk = vec![b'x'; MIB];
    let before = resident_bytes();
    for _ in 0..32 {
        log.append(&chunk);
    }
    // The reader has read the whole line so far (skipped bytes count as read).
    let read_all = (7 + 32 * MIB) as u64;
    let label = label(&log.path);
    assert!(tail.wait(|r| r.last_offset(&label) == Some(read_all)));
    let grown = resident_bytes().saturating_sub(before);
    println!("measured: memory grew by {grown} bytes while skipping a 32 MiB line");
    assert!(
        grown < 4 * MIB as u64,
        "memory grew by {grown} bytes while skipping a 32 MiB line"
    );
    log.append(b"\nafter\n");
    assert!(tail.wait_lines(2));

    let record = tail.stop();
    assert_lines(&record, &["before".to_string(), "after".to_string()]);
    assert_eq!(record.skipped(SkipReason::TooLong), 1);
}

/// Set in the child process that runs [`following_100_files_measured_alone`].
const HUNDRED_FILES_PROBE_ENV: &str = "LLMTAIL_TEST_HUNDRED_FILES_PROBE";

#[test]
fn a_hundred_files_are_followed_within_a_few_mib() {
    let output = run_alone_in_child(
        "tailing::following_100_files_measured_alone",
        HUNDRED_FILES_PROBE_ENV,
    );
    assert!(
        output.contains("measured:"),
        "the probe did not measure:\n{output}"
    );
}

/// The measurement behind [`a_hundred_files_are_followed_within_a_few_mib`]; does nothing
/// unless run by it (in a child process, alone).
#[test]
fn following_100_files_measured_alone() {
    if std::env::var_os(HUNDRED_FILES_PROBE_ENV).is_none() {
        return;
    }
    const MIB: u64 = 1024 * 1024;
    let dir = tempfile::tempdir().expect("temp dir");
    let path_of = |i: usize| dir.path().join(format!("engine-{i:03}.log"));
    for i in 0..100 {
        // Three lines and the start of a fourth: each file holds a partial tail.
        let text = numbered(&format!("f{i}"), 0..3).join("\n") + "\nhalf of a li";
        std::fs::write(path_of(i), text).unwrap();
    }
    // A reader on one file first, so the fixed costs (threads and their allocator arenas,
    // the inotify instance) are paid before the measurement: what is left is per file.
    let warm_up = Tail::start(vec![path_spec(&path_of(0))], event_driven());
    assert!(warm_up.wait_lines(3));
    drop(warm_up.stop());
    let before = resident_bytes();
    let pattern = format!("{}/*.log", dir.path().display());
    let tail = Tail::start(vec![LogSpec::Glob(pattern)], event_driven());
    assert!(tail.wait_lines(300));
    for i in 0..100 {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(path_of(i))
            .unwrap();
        std::io::Write::write_all(&mut file, b"ne\n").unwrap();
    }
    assert!(tail.wait_lines(400), "got {}", tail.record().lines.len());
    let grown = resident_bytes().saturating_sub(before);
    println!("measured: memory grew by {grown} bytes following 100 files");
    assert!(
        grown < 3 * MIB,
        "memory grew by {grown} bytes following 100 files"
    );

    let record = tail.stop();
    assert_eq!(record.lines.len(), 400);
    for i in 0..100 {
        let label = label(&path_of(i));
        let mut expected = numbered(&format!("f{i}"), 0..3);
        expected.push("half of a line".to_string());
        assert_eq!(record.texts_of(&label), expected, "{label}");
    }
    assert_nothing_lost(&record);
}

fn bytes_of(record: &Record) -> Vec<Vec<u8>> {
    record.lines.iter().map(|(_, l)| l.clone()).collect()
}

#[test]
fn invalid_utf8_passes_as_bytes() {
    let mut log = TempLog::new("app.log");
    log.append(b"ok\n\xff\xfe\xfd bad\n\xc3\x28\n\xe2\x82\nafter\n");
    let tail = Tail::start(vec![path_spec(&log.path)], event_driven());
    assert!(tail.wait_lines(5));

    let record = tail.stop();
    let expected: Vec<Vec<u8>> = [
        &b"ok"[..],
        b"\xff\xfe\xfd bad",
        b"\xc3\x28",
        b"\xe2\x82",
        b"after",
    ]
    .iter()
    .map(|l| l.to_vec())
    .collect();
    assert_eq!(bytes_of(&record), expected);
    assert_nothing_lost(&record);
}

/// NULs inside a line are its bytes; NULs before a line are a hole in the file (see
/// `a_copytruncate_hole_of_nuls_over_64_kib_is_skipped_and_the_line_after_it_kept`).
#[test]
fn nul_bytes_inside_a_line_pass_as_bytes_and_those_before_it_are_skipped() {
    let mut log = TempLog::new("app.log");
    log.append(b"\0\0\0\na\0b\0\n\0\n\0\0after\n");
    let tail = Tail::start(vec![path_spec(&log.path)], event_driven());
    assert!(tail.wait_lines(4));

    let record = tail.stop();
    let expected: Vec<Vec<u8>> = [&b""[..], b"a\0b\0", b"", b"after"]
        .iter()
        .map(|l| l.to_vec())
        .collect();
    assert_eq!(bytes_of(&record), expected);
    assert_nothing_lost(&record);
}

#[test]
fn crlf_lines_keep_their_carriage_return() {
    let mut log = TempLog::new("app.log");
    log.append(b"one\r\ntwo\r\n\r\n");
    let tail = Tail::start(vec![path_spec(&log.path)], event_driven());
    assert!(tail.wait_lines(3));

    let record = tail.stop();
    assert_lines(
        &record,
        &["one\r".to_string(), "two\r".to_string(), "\r".to_string()],
    );
    assert_nothing_lost(&record);
}

#[test]
fn a_burst_of_200k_lines_arrives_whole_and_in_order() {
    const LINES: usize = 200_000;
    let mut log = TempLog::new("app.log");
    log.append(b"");
    let tail = Tail::start(vec![path_spec(&log.path)], event_driven());

    let expected = numbered("burst line", 0..LINES);
    for batch in expected.chunks(500) {
        log.append_lines(batch);
    }
    assert!(tail.wait_lines(LINES), "got {}", tail.record().lines.len());

    let record = tail.stop();
    assert_lines(&record, &expected);
    assert_nothing_lost(&record);
}

#[test]
fn a_glob_picks_up_files_that_appear_later() {
    let mut first = TempLog::new("a.log");
    first.append_lines(&numbered("a", 0..3));
    std::fs::write(first.sibling("notes.txt"), b"not a log\n").unwrap();
    let pattern = format!("{}/*.log", first.dir.path().display());
    let tail = Tail::start(vec![LogSpec::Glob(pattern)], event_driven());
    assert!(tail.wait_lines(3));

    let second = first.sibling("b.log");
    std::fs::write(&second, numbered("b", 0..4).join("\n") + "\n").unwrap();
    std::fs::write(first.sibling("later.txt"), b"not a log either\n").unwrap();
    assert!(tail.wait_lines(7), "got {}", tail.record().lines.len());

    let record = tail.stop();
    assert_eq!(record.lines.len(), 7);
    assert_eq!(record.texts_of(&label(&first.path)), numbered("a", 0..3));
    assert_eq!(record.texts_of(&label(&second)), numbered("b", 0..4));
    let discovered = record
        .events
        .iter()
        .filter(|(_, e)| matches!(e, Seen::Discovered(_)))
        .count();
    assert_eq!(discovered, 2, "only the .log files");
    assert_nothing_lost(&record);
}

#[test]
fn from_end_skips_existing_content_but_reads_a_late_file_from_byte_0() {
    let mut existing = TempLog::new("a.log");
    existing.append_lines(&numbered("history", 0..5));
    let late = existing.sibling("b.log");
    let options = SourceOptions {
        from: StartFrom::End,
        ..event_driven()
    };
    let tail = Tail::start(vec![path_spec(&existing.path), path_spec(&late)], options);

    existing.append_lines(&numbered("a", 0..2));
    std::fs::write(&late, numbered("b", 0..3).join("\n") + "\n").unwrap();
    assert!(tail.wait_lines(5), "got {}", tail.record().lines.len());

    let record = tail.stop();
    assert_eq!(record.lines.len(), 5);
    assert_eq!(record.texts_of(&label(&existing.path)), numbered("a", 0..2));
    assert_eq!(record.texts_of(&label(&late)), numbered("b", 0..3));
    assert_nothing_lost(&record);
}

#[test]
fn one_shot_reads_everything_once_and_returns() {
    let mut a = TempLog::new("a.log");
    a.append_lines(&numbered("a", 0..3));
    a.append(b"unterminated");
    let b = a.sibling("b.log");
    std::fs::write(&b, b"b 0\nb 1\n").unwrap();
    let missing = a.sibling("missing.log");
    let reader = Reader::new(
        vec![
            path_spec(&a.path),
            path_spec(&b),
            path_spec(&missing),
            LogSpec::Stdin,
        ],
        event_driven(),
    )
    .expect("reader")
    .with_stdin(Cursor::new(b"s 0\ns 1\n".to_vec()));

    let record = read_once(reader);
    assert_eq!(record.lines.len(), 8);
    let mut a_lines = numbered("a", 0..3);
    a_lines.push("unterminated".into());
    assert_eq!(record.texts_of(&label(&a.path)), a_lines);
    assert_eq!(record.texts_of(&label(&b)), numbered("b", 0..2));
    assert_eq!(record.texts_of("-"), numbered("s", 0..2));
    assert_eq!(record.skipped(SkipReason::TruncatedPartial), 0);
    assert_eq!(record.caught_up, 1);
    assert_eq!(record.count(&Seen::Closed), 3, "a, b and stdin");
    assert_eq!(record.out_of_order, 0);
}

#[test]
fn stdin_is_read_to_its_end_while_following() {
    let reader = Reader::new(vec![LogSpec::Stdin], event_driven())
        .expect("reader")
        .with_stdin(Cursor::new(b"x 0\nx 1\nx 2\n".to_vec()));
    let tail = Tail::start_reader(reader);
    assert!(
        tail.wait(|r| r.count(&Seen::Closed) == 1),
        "stdin never ended"
    );

    let record = tail.stop();
    assert_eq!(record.texts_of("-"), numbered("x", 0..3));
    assert_eq!(record.count(&Seen::Closed), 1, "closed once, at its end");
    assert_nothing_lost(&record);
}

/// `printf 'a\nb'  | llmtail --log -` dropped `b` as a
/// truncated partial line. Standard input that ended cannot grow: its last line is whole.
#[test]
fn the_last_line_of_stdin_without_a_newline_is_a_line() {
    let reader = Reader::new(vec![LogSpec::Stdin], event_driven())
        .expect("reader")
        .with_stdin(Cursor::new(b"x 0\nx 1".to_vec()));
    let tail = Tail::start_reader(reader);
    assert!(tail.wait(|r| r.count(&Seen::Closed) == 1));
    let record = tail.stop();
    assert_eq!(record.texts_of("-"), numbered("x", 0..2));
    assert_eq!(record.skipped(SkipReason::TruncatedPartial), 0);

    let one_shot = Reader::new(vec![LogSpec::Stdin], event_driven())
        .expect("reader")
        .with_stdin(Cursor::new(b"y 0\ny 1".to_vec()));
    assert_eq!(read_once(one_shot).texts_of("-"), numbered("y", 0..2));
}

/// `--one-shot` and `replay` dropped the last line of a finished log written without a final
/// newline. Read to its end once, a file's last line is whole; followed, it may still be
/// being written, so it waits for its newline.
#[test]
fn the_last_line_of_a_file_without_a_newline_is_a_line_in_one_shot_but_awaited_when_following() {
    let mut log = TempLog::new("vllm.log");
    log.append(b"x 0\nx 1");
    let one_shot = Reader::new(vec![path_spec(&log.path)], event_driven()).expect("reader");
    let record = read_once(one_shot);
    assert_eq!(record.texts_of(&label(&log.path)), numbered("x", 0..2));
    assert_eq!(record.skipped(SkipReason::TruncatedPartial), 0);
    assert_eq!(record.last_offset(&label(&log.path)), Some(7));

    let tail = Tail::start(vec![path_spec(&log.path)], event_driven());
    assert!(tail.wait(|r| r.caught_up == 1), "never caught up");
    assert_eq!(
        tail.record().texts_of(&label(&log.path)),
        numbered("x", 0..1)
    );
    log.append(b" and more\n");
    assert!(tail.wait_lines(2), "the rest of the line never came");
    let record = tail.stop();
    assert_eq!(
        record.texts_of(&label(&log.path)),
        ["x 0", "x 1 and more"],
        "the line being written was taken whole once its newline came"
    );
}

/// With a wildcard in a directory part
/// (`/var/log/pods/*/vllm/*.log`), a file created in a directory that appeared after start-up
/// was found only by the glob's slow listing (8.5 s with the default poll), and files created
/// that shortly before a restart and rotated while down were lost.
#[test]
fn a_glob_with_a_wildcard_directory_sees_a_new_directorys_file_at_once() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("pods")).unwrap();
    let pattern = format!("{}/pods/*/vllm/*.log", root.path().display());
    let tail = Tail::start(vec![LogSpec::Glob(pattern)], event_driven());
    // An empty pod directory first, its `vllm` directory and file a moment later.
    let pod = root.path().join("pods").join("p1");
    std::fs::create_dir(&pod).unwrap();
    // Part of the scenario, not a wait for a result: the reader sees the empty pod directory
    // on its own before the rest comes.
    std::thread::sleep(Duration::from_millis(100));
    std::fs::create_dir(pod.join("vllm")).unwrap();
    std::fs::write(pod.join("vllm").join("0.log"), "a 0\n").unwrap();
    assert!(tail.wait_lines(1), "the new pod's log was not picked up");
    let record = tail.stop();
    assert_eq!(record.texts(), numbered("a", 0..1));
}

/// A vLLM stats line, the kind of line a log under a pod glob holds.
const VLLM_STATS: &str = "INFO 11-28 10:00:00 [loggers.py:123] Engine 000: Avg prompt throughput: 12.0 tokens/s, Avg generation throughput: 30.0 tokens/s, Running: 2 reqs, Waiting: 0 reqs, GPU KV cache usage: 4.0%, Prefix cache hit rate: 0.0%";

/// A file named `name` (raw bytes) in `dir`, holding `lines`.
fn write_named(dir: &Path, name: &[u8], lines: &[&str]) -> std::path::PathBuf {
    use std::os::unix::ffi::OsStrExt;
    let path = dir.join(std::ffi::OsStr::from_bytes(name));
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// The `glob` crate matches names as `&str` and skips every name that is not UTF-8 without a
/// word: a log named in Latin-1 (`caf\xe9.log`) under `/var/log/vllm/*.log` was never
/// followed. It is, under a label that spells the invalid byte as `\xe9`, whether it is there
/// at start-up or created later.
#[test]
fn a_glob_follows_a_file_whose_name_is_not_utf8_under_an_escaped_label() {
    let dir = tempfile::tempdir().unwrap();
    write_named(dir.path(), b"caf\xe9.log", &[VLLM_STATS]);
    let pattern = format!("{}/*.log", dir.path().display());
    let tail = Tail::start(vec![LogSpec::Glob(pattern)], event_driven());
    assert!(
        tail.wait_lines(1),
        "the file with a Latin-1 name was not followed"
    );
    write_named(dir.path(), b"na\xefve.log", &["late 0"]);
    assert!(
        tail.wait_lines(2),
        "the Latin-1 file created later was not followed"
    );

    let record = tail.stop();
    let label = |name: &str| format!("{}/{name}", dir.path().display());
    assert_eq!(
        record.texts_of(&label("caf\\xe9.log")),
        vec![VLLM_STATS.to_string()]
    );
    assert_eq!(
        record.texts_of(&label("na\\xefve.log")),
        vec!["late 0".to_string()]
    );
}

/// `caf\xe9.log` and `caf\xe8.log` read the same once decoded lossily (`caf\u{fffd}.log`):
/// under one label, the second would take over the first's series.
#[test]
fn two_names_that_differ_only_in_invalid_bytes_are_two_logs() {
    let dir = tempfile::tempdir().unwrap();
    write_named(dir.path(), b"caf\xe9.log", &["e9 0"]);
    write_named(dir.path(), b"caf\xe8.log", &["e8 0"]);
    let pattern = format!("{}/*.log", dir.path().display());
    let reader = Reader::new(vec![LogSpec::Glob(pattern)], SourceOptions::default()).unwrap();

    let record = read_once(reader);
    let label = |escape: &str| format!("{}/caf\\x{escape}.log", dir.path().display());
    assert_eq!(record.texts_of(&label("e9")), vec!["e9 0".to_string()]);
    assert_eq!(record.texts_of(&label("e8")), vec!["e8 0".to_string()]);
}

/// A name spelled with the escape itself (a backslash, `x`, `e9`) and a name holding the byte
/// 0xe9 get the same label: the one found second is not followed (and a warning names it),
/// rather than merged into the first.
#[test]
fn a_name_whose_label_another_file_has_is_not_merged_into_it() {
    let dir = tempfile::tempdir().unwrap();
    write_named(dir.path(), b"caf\\xe9.log", &["spelled 0"]);
    write_named(dir.path(), b"caf\xe9.log", &["byte 0"]);
    let pattern = format!("{}/*.log", dir.path().display());
    let reader = Reader::new(vec![LogSpec::Glob(pattern)], SourceOptions::default()).unwrap();

    let record = read_once(reader);
    assert_eq!(record.texts(), vec!["spelled 0".to_string()]);
    assert_eq!(
        record.count(&Seen::Discovered(format!(
            "{}/caf\\xe9.log",
            dir.path().display()
        ))),
        1
    );
}

/// A wildcard directory part (`pods/*/vllm/*.log`) matches a directory whose name is not
/// UTF-8 as well, and the file below it is followed.
#[test]
fn a_glob_follows_a_file_under_a_directory_whose_name_is_not_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let root = tempfile::tempdir().unwrap();
    let pod = root
        .path()
        .join("pods")
        .join(std::ffi::OsStr::from_bytes(b"ns_p\xff_uid"));
    std::fs::create_dir_all(pod.join("vllm")).unwrap();
    write_named(&pod.join("vllm"), b"0.log", &[VLLM_STATS]);
    let pattern = format!("{}/pods/*/vllm/*.log", root.path().display());
    let tail = Tail::start(vec![LogSpec::Glob(pattern)], event_driven());
    assert!(
        tail.wait_lines(1),
        "the file under a Latin-1 directory was not followed"
    );

    let record = tail.stop();
    let label = format!("{}/pods/ns_p\\xff_uid/vllm/0.log", root.path().display());
    assert_eq!(record.texts_of(&label), vec![VLLM_STATS.to_string()]);
}
