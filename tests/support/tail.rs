//! Helpers for the tailing tests: a log file that can misbehave on demand ([`TempLog`]), a
//! sink that records everything ([`Record`]), and a reader running on its own thread
//! ([`Tail`]). Tests never sleep to wait for the reader: they poll a condition with a
//! deadline ([`wait_until`]).

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use llmtail::source::{
    LogId, LogSpec, Reader, Sink, SkipReason, SourceOptions, Stopper, TailEvent,
};

/// How long a test waits for the reader before it fails. Generous: a loaded CI machine is
/// slow, and a passing test never waits this long.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// Polls `cond` until it holds or `deadline` passes; returns whether it held.
pub fn wait_until(deadline: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + deadline;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Options for tests: the slow poll is set far beyond the deadline, so a test passes only
/// if file-system events (not the poll) drive the reader. Tests of the poll set their own.
pub fn event_driven() -> SourceOptions {
    SourceOptions {
        poll_interval: Duration::from_secs(120),
        ..SourceOptions::default()
    }
}

/// `prefix 0\n`, `prefix 1\n`, ... for the numbers in `range`.
pub fn numbered(prefix: &str, range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("{prefix} {i}")).collect()
}

/// A log file in its own temporary directory, written the way programs write logs (one
/// append handle, kept across renames).
pub struct TempLog {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
    writer: Option<File>,
}

impl TempLog {
    /// A log named `name` in a fresh directory; the file is not created yet.
    pub fn new(name: &str) -> TempLog {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(name);
        TempLog {
            dir,
            path,
            writer: None,
        }
    }

    /// Another path in the same directory.
    pub fn sibling(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Appends `bytes` in one write, through the held handle (opened, and the file created,
    /// on first use).
    pub fn append(&mut self, bytes: &[u8]) {
        if self.writer.is_none() {
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)
                .expect("open log for append");
            self.writer = Some(file);
        }
        let writer = self.writer.as_mut().expect("writer");
        writer.write_all(bytes).expect("append");
    }

    /// Appends each line with its `\n`, all in one write.
    pub fn append_lines(&mut self, lines: &[String]) {
        let mut text = String::new();
        for line in lines {
            text.push_str(line);
            text.push('\n');
        }
        self.append(text.as_bytes());
    }

    /// Renames the file; the held handle goes on writing to it under its new name.
    pub fn rename_to(&self, name: &str) -> PathBuf {
        let to = self.sibling(name);
        std::fs::rename(&self.path, &to).expect("rename");
        to
    }

    /// Drops the held handle: the next append opens (and creates) the path again.
    pub fn reopen(&mut self) {
        self.writer = None;
    }

    /// Creates a new empty file at the path now, held for appending.
    pub fn create(&mut self) {
        self.writer = Some(File::create(&self.path).expect("create"));
    }

    /// Cuts the file to 0 bytes in place (the held append handle then writes from 0).
    pub fn truncate(&self) {
        OpenOptions::new()
            .write(true)
            .open(&self.path)
            .expect("open to truncate")
            .set_len(0)
            .expect("truncate");
    }

    pub fn delete(&self) {
        std::fs::remove_file(&self.path).expect("delete");
    }

    pub fn chmod(&self, mode: u32) {
        std::fs::set_permissions(&self.path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }
}

/// True if file permissions stop this process from reading (false when running as root,
/// which reads a mode-000 file all the same).
pub fn permissions_apply() -> bool {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("probe");
    std::fs::write(&path, b"x").expect("write probe");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    matches!(File::open(&path), Err(e) if e.kind() == ErrorKind::PermissionDenied)
}

/// Runs the test `name` of this binary alone in a child process with `env` set, so that it
/// can measure the process's memory without other tests allocating meanwhile. Returns the
/// child's output; panics if the child test failed.
pub fn run_alone_in_child(name: &str, env: &str) -> String {
    let output = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(env, "1")
        .output()
        .expect("run the test binary");
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "child test {name} failed:\n{text}");
    assert!(text.contains("1 passed"), "child ran no test:\n{text}");
    text
}

/// The resident memory of this process, in bytes.
pub fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .expect("VmRSS")
        * 1024
}

/// A [`TailEvent`] as recorded (`TailEvent` holds an `io::Error`, which is not `Clone`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    Discovered(String),
    Opened,
    Gone,
    Closed,
    Rotated,
    Truncated,
    /// The OS error number (`errno`).
    OpenFailed(Option<i32>),
    Missing,
    Skipped(SkipReason),
    Offset(u64),
}

/// Everything the sink was told.
#[derive(Debug, Default)]
pub struct Record {
    pub lines: Vec<(LogId, Vec<u8>)>,
    pub events: Vec<(LogId, Seen)>,
    pub labels: HashMap<LogId, String>,
    pub caught_up: usize,
    /// Events that came for a log before its `Discovered`, or lines before `Discovered`.
    pub out_of_order: usize,
}

impl Record {
    /// All lines, decoded lossily, in order.
    pub fn texts(&self) -> Vec<String> {
        self.lines
            .iter()
            .map(|(_, l)| String::from_utf8_lossy(l).into_owned())
            .collect()
    }

    /// The lines of the log labelled `label`.
    pub fn texts_of(&self, label: &str) -> Vec<String> {
        self.lines
            .iter()
            .filter(|(id, _)| self.labels.get(id).map(String::as_str) == Some(label))
            .map(|(_, l)| String::from_utf8_lossy(l).into_owned())
            .collect()
    }

    pub fn count(&self, seen: &Seen) -> usize {
        self.events.iter().filter(|(_, e)| e == seen).count()
    }

    pub fn open_failures(&self) -> usize {
        self.events
            .iter()
            .filter(|(_, e)| matches!(e, Seen::OpenFailed(_)))
            .count()
    }

    pub fn skipped(&self, reason: SkipReason) -> usize {
        self.count(&Seen::Skipped(reason))
    }

    /// The last offset reported for `label`.
    pub fn last_offset(&self, label: &str) -> Option<u64> {
        self.events
            .iter()
            .rev()
            .filter(|(id, _)| self.labels.get(id).map(String::as_str) == Some(label))
            .find_map(|(_, e)| match e {
                Seen::Offset(n) => Some(*n),
                _ => None,
            })
    }
}

/// Makes the sink block in its first `lines` call until the test releases it: a sink busy
/// while the file changes under the reader.
pub struct Gate {
    entered: Arc<Mutex<bool>>,
    release: Sender<()>,
}

impl Gate {
    /// Waits until the reader is blocked in the sink.
    pub fn wait_entered(&self) -> bool {
        wait_until(DEADLINE, || {
            *self.entered.lock().unwrap_or_else(PoisonError::into_inner)
        })
    }

    pub fn release(&self) {
        let _ = self.release.send(());
    }
}

struct RecordingSink {
    record: Arc<Mutex<Record>>,
    gate: Option<(Arc<Mutex<bool>>, Receiver<()>)>,
}

impl RecordingSink {
    fn record(&self) -> MutexGuard<'_, Record> {
        self.record.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Sink for RecordingSink {
    fn lines(&mut self, log: LogId, lines: &mut llmtail::source::Lines<'_>) {
        let batch: Vec<Vec<u8>> = lines.map(<[u8]>::to_vec).collect();
        {
            let mut record = self.record();
            if !record.labels.contains_key(&log) {
                record.out_of_order += 1;
            }
            record.lines.extend(batch.into_iter().map(|l| (log, l)));
        }
        if let Some((entered, release)) = self.gate.take() {
            *entered.lock().unwrap_or_else(PoisonError::into_inner) = true;
            let _ = release.recv_timeout(DEADLINE);
        }
    }

    fn event(&mut self, log: LogId, event: TailEvent) {
        let mut record = self.record();
        let seen = match event {
            TailEvent::Discovered { label, .. } => {
                record.labels.insert(log, label.to_string());
                Seen::Discovered(label.to_string())
            }
            TailEvent::Opened(_) => Seen::Opened,
            TailEvent::Gone => Seen::Gone,
            TailEvent::Closed => Seen::Closed,
            TailEvent::Rotated => Seen::Rotated,
            TailEvent::Truncated => Seen::Truncated,
            TailEvent::OpenFailed(error) => Seen::OpenFailed(error.raw_os_error()),
            TailEvent::Missing => Seen::Missing,
            TailEvent::Skipped(reason) => Seen::Skipped(reason),
            TailEvent::Offset(n) => Seen::Offset(n),
        };
        if !record.labels.contains_key(&log) {
            record.out_of_order += 1;
        }
        record.events.push((log, seen));
    }

    fn caught_up(&mut self) {
        self.record().caught_up += 1;
    }
}

/// A reader following on its own thread into a recording sink.
pub struct Tail {
    record: Arc<Mutex<Record>>,
    stopper: Stopper,
    thread: Option<JoinHandle<()>>,
}

impl Tail {
    /// Starts following and waits until the reader caught up with what exists, so whatever
    /// the test does next happens after start-up.
    pub fn start(specs: Vec<LogSpec>, options: SourceOptions) -> Tail {
        let tail = Tail::spawn(Reader::new(specs, options).expect("reader"), None);
        assert!(
            tail.wait(|r| r.caught_up == 1),
            "the reader never caught up"
        );
        tail
    }

    /// Starts following with a sink that blocks on its first batch until the gate opens.
    pub fn start_gated(specs: Vec<LogSpec>, options: SourceOptions) -> (Tail, Gate) {
        let entered = Arc::new(Mutex::new(false));
        let (release, wait) = channel();
        let tail = Tail::spawn(
            Reader::new(specs, options).expect("reader"),
            Some((Arc::clone(&entered), wait)),
        );
        (tail, Gate { entered, release })
    }

    /// Starts following a reader built by the test (e.g. with a stdin of its own).
    pub fn start_reader(reader: Reader) -> Tail {
        Tail::spawn(reader, None)
    }

    fn spawn(reader: Reader, gate: Option<(Arc<Mutex<bool>>, Receiver<()>)>) -> Tail {
        let record = Arc::new(Mutex::new(Record::default()));
        let mut sink = RecordingSink {
            record: Arc::clone(&record),
            gate,
        };
        let stopper = reader.stopper();
        let thread = std::thread::spawn(move || reader.follow(&mut sink));
        Tail {
            record,
            stopper,
            thread: Some(thread),
        }
    }

    /// What the sink got so far.
    pub fn record(&self) -> MutexGuard<'_, Record> {
        self.record.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits (up to [`DEADLINE`]) until `cond` holds for the record.
    pub fn wait(&self, cond: impl Fn(&Record) -> bool) -> bool {
        wait_until(DEADLINE, || cond(&self.record()))
    }

    /// Waits until at least `n` lines arrived.
    pub fn wait_lines(&self, n: usize) -> bool {
        self.wait(|r| r.lines.len() >= n)
    }

    /// Stops the reader, waits for it to return, and gives back the record.
    pub fn stop(mut self) -> Record {
        self.stopper.stop();
        if let Some(thread) = self.thread.take() {
            thread.join().expect("the reader thread panicked");
        }
        std::mem::take(&mut *self.record())
    }
}

impl Drop for Tail {
    fn drop(&mut self) {
        self.stopper.stop();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The log spec of a path.
pub fn path_spec(path: &Path) -> LogSpec {
    LogSpec::Path(path.to_path_buf())
}

/// Runs [`Reader::read_to_end`] on this thread into a recording sink.
pub fn read_once(reader: Reader) -> Record {
    let record = Arc::new(Mutex::new(Record::default()));
    let mut sink = RecordingSink {
        record: Arc::clone(&record),
        gate: None,
    };
    reader.read_to_end(&mut sink);
    let mut record = record.lock().unwrap_or_else(PoisonError::into_inner);
    std::mem::take(&mut *record)
}
