//! Helpers for the rotation and soak tests: an engine that logs numbered vLLM stats lines
//! ([`stats_line`]) at a steady pace on a thread of its own ([`PacedWriter`]), a real
//! `logrotate` run against a config kept in the test's temp dir ([`Logrotate`]), and a sink
//! that keeps only the number of each line ([`NumberTail`]), so a soak of 600k lines can be
//! checked line by line without holding the lines.
//!
//! Line `n` says `Running: n reqs` and `Preemptions: n`: the agent then serves the last number
//! it read as `vllm:num_requests_running` and the sum of every number it read as
//! `vllm:num_preemptions_total`, next to the count in `llmtail_lines_read_total`. Count, sum
//! and last number together tell exactly-once from a loss or a duplicate of any run of lines.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use llmtail::source::{
    LogId, LogSpec, Reader, Sink, SkipReason, SourceOptions, Stopper, TailEvent,
};

use super::tail::{wait_until, DEADLINE};

/// The vLLM V1 stats line numbered `n` (numbers start at 1: vLLM prints `Preemptions` only
/// when non-zero).
pub fn stats_line(n: u64) -> String {
    format!(
        "(APIServer pid=812) INFO 11-22 13:25:01 [loggers.py:257] Engine 000: Avg prompt \
         throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: {n} reqs, \
         Waiting: 0 reqs, Preemptions: {n}, GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%"
    )
}

/// Appends `lines` to the file at `path` (created if missing), each ended by `\n`.
pub fn append_lines(path: &Path, lines: &[&str]) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    for line in lines {
        std::io::Write::write_all(&mut file, format!("{line}\n").as_bytes()).unwrap();
    }
}

/// The number of a line made by [`stats_line`].
pub fn number_of(line: &[u8]) -> Option<u64> {
    let at = memchr_find(line, b"Running: ")? + b"Running: ".len();
    let digits = line[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&line[at..at + digits])
        .ok()?
        .parse()
        .ok()
}

fn memchr_find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// 1 + 2 + ... + n: what `vllm:num_preemptions_total` says once lines 1..=n arrived once each.
pub fn sum_to(n: u64) -> u64 {
    n * (n + 1) / 2
}

/// The numbers of the complete lines of a file, in order (an unterminated last line is left
/// out). A file that does not exist holds none.
pub fn numbers_in(path: &Path) -> Vec<u64> {
    let bytes = std::fs::read(path).unwrap_or_default();
    let complete = match bytes.iter().rposition(|&b| b == b'\n') {
        Some(end) => &bytes[..end],
        None => return Vec::new(),
    };
    complete
        .split(|&b| b == b'\n')
        .filter_map(number_of)
        .collect()
}

/// The number of the first line of a file, once it has a complete one.
pub fn first_number_in(path: &Path) -> Option<u64> {
    use std::io::Read;
    let mut head = vec![0; 4096];
    let n = File::open(path).ok()?.read(&mut head).ok()?;
    let end = head[..n].iter().position(|&b| b == b'\n')?;
    number_of(&head[..end])
}

/// A writer that writes the numbered lines it is told to, one `write()` each through one
/// append handle, as a logger does.
pub struct NumberedLog {
    pub path: PathBuf,
    file: Option<File>,
    /// The number of the last line written.
    pub written: u64,
}

impl NumberedLog {
    pub fn new(path: &Path) -> NumberedLog {
        NumberedLog {
            path: path.to_path_buf(),
            file: None,
            written: 0,
        }
    }

    /// Writes the next `count` lines.
    pub fn write(&mut self, count: u64) {
        for _ in 0..count {
            let n = self.written + 1;
            write_line(&mut self.file, &self.path, n);
            self.written = n;
        }
    }

    /// Drops the handle: the next line opens (or creates) the path again.
    pub fn reopen(&mut self) {
        self.file = None;
    }
}

fn write_line(file: &mut Option<File>, path: &Path, n: u64) {
    let file = file.get_or_insert_with(|| {
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("open the log for append")
    });
    let mut line = stats_line(n);
    line.push('\n');
    file.write_all(line.as_bytes()).expect("write a line");
}

/// What a [`PacedWriter`] and the test share.
#[derive(Default)]
struct Control {
    /// The number of the last line written.
    written: AtomicU64,
    stop: AtomicBool,
    reopen_requested: AtomicBool,
    reopens: AtomicU64,
    /// The longest the writer was behind its schedule, in lines.
    max_behind: AtomicU64,
}

/// Writes numbered lines to a path at a steady rate on its own thread, through one append
/// handle that it keeps across renames and truncations until told to reopen (as an engine
/// does on SIGHUP).
pub struct PacedWriter {
    control: Arc<Control>,
    started: Instant,
    thread: Option<JoinHandle<()>>,
}

/// How often the writer wakes to catch up with its schedule.
const WRITER_TICK: Duration = Duration::from_millis(1);

impl PacedWriter {
    pub fn spawn(path: &Path, lines_per_second: u64) -> PacedWriter {
        let control = Arc::new(Control::default());
        let path = path.to_path_buf();
        let shared = Arc::clone(&control);
        let started = Instant::now();
        let thread = std::thread::spawn(move || {
            let mut file = None;
            while !shared.stop.load(Ordering::SeqCst) {
                let due = (started.elapsed().as_secs_f64() * lines_per_second as f64) as u64;
                let written = shared.written.load(Ordering::SeqCst);
                shared
                    .max_behind
                    .fetch_max(due.saturating_sub(written), Ordering::SeqCst);
                for n in written + 1..=due {
                    if shared.reopen_requested.swap(false, Ordering::SeqCst) {
                        file = None;
                        shared.reopens.fetch_add(1, Ordering::SeqCst);
                    }
                    write_line(&mut file, &path, n);
                    shared.written.store(n, Ordering::SeqCst);
                    if shared.stop.load(Ordering::SeqCst) {
                        return;
                    }
                }
                std::thread::sleep(WRITER_TICK);
            }
        });
        PacedWriter {
            control,
            started,
            thread: Some(thread),
        }
    }

    /// The number of the last line written.
    pub fn written(&self) -> u64 {
        self.control.written.load(Ordering::SeqCst)
    }

    /// Waits until line `n` is written.
    pub fn wait_written(&self, n: u64) {
        assert!(
            wait_until(DEADLINE, || self.written() >= n),
            "the writer never wrote line {n} (at {})",
            self.written()
        );
    }

    /// Waits until `more` lines past the current one are written.
    pub fn wait_more(&self, more: u64) {
        self.wait_written(self.written() + more);
    }

    /// Makes the writer reopen the path before its next line, and waits until it did.
    pub fn reopen(&self) {
        let before = self.control.reopens.load(Ordering::SeqCst);
        self.control.reopen_requested.store(true, Ordering::SeqCst);
        assert!(
            wait_until(DEADLINE, || self.control.reopens.load(Ordering::SeqCst)
                > before),
            "the writer never reopened"
        );
    }

    /// The longest the writer fell behind its schedule, in lines.
    pub fn max_behind(&self) -> u64 {
        self.control.max_behind.load(Ordering::SeqCst)
    }

    /// Stops writing; returns the number of the last line written and how long it wrote.
    pub fn stop(mut self) -> (u64, Duration) {
        self.control.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            thread.join().expect("the writer panicked");
        }
        (self.written(), self.started.elapsed())
    }
}

impl Drop for PacedWriter {
    fn drop(&mut self) {
        self.control.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A `logrotate` config for one log, in the test's temp dir, with its own state file: it
/// touches nothing outside that directory.
pub struct Logrotate {
    conf: PathBuf,
    status: PathBuf,
}

impl Logrotate {
    /// Writes `<dir>/<name>.conf` rotating `log` with `rotate 5`, `nocompress`, `missingok`
    /// and `directives` (`create`, `copytruncate`, `dateext`...).
    pub fn new(dir: &Path, name: &str, log: &Path, directives: &[&str]) -> Logrotate {
        assert!(
            log.starts_with(dir),
            "logrotate may only touch the temp dir"
        );
        let conf = dir.join(format!("{name}.conf"));
        let status = dir.join(format!("{name}.status"));
        let mut text = format!(
            "{} {{\n    rotate 5\n    nocompress\n    missingok\n",
            log.display()
        );
        for directive in directives {
            text.push_str(&format!("    {directive}\n"));
        }
        text.push_str("}\n");
        std::fs::write(&conf, text).expect("write the logrotate config");
        Logrotate { conf, status }
    }

    /// Runs `logrotate -f` once; panics with its output if it fails. Returns how long it took.
    pub fn run(&self) -> Duration {
        let started = Instant::now();
        let output = std::process::Command::new(logrotate_program())
            .arg("-f")
            .arg("-s")
            .arg(&self.status)
            .arg(&self.conf)
            .output()
            .expect("run logrotate");
        assert!(
            output.status.success(),
            "logrotate failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        started.elapsed()
    }
}

/// `logrotate`: on the `PATH`, or where Debian installs it (`/usr/sbin`, which is not on a
/// user's `PATH`).
fn logrotate_program() -> PathBuf {
    crate::support::agent::on_path("logrotate")
        .or_else(|| {
            ["/usr/sbin/logrotate", "/sbin/logrotate"]
                .map(PathBuf::from)
                .into_iter()
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| {
            panic!(
                "logrotate is not installed: run scripts/test, which installs what the tests need"
            )
        })
}

/// What a [`NumberSink`] was told.
#[derive(Debug, Default)]
pub struct Numbers {
    /// The number of every line, in the order read.
    pub numbers: Vec<u64>,
    /// Lines without a number (garbled: e.g. read from the middle of a line).
    pub garbled: u64,
    pub rotations: u64,
    pub truncations: u64,
    pub skipped_too_long: u64,
    pub skipped_partial: u64,
    pub caught_up: bool,
}

impl Numbers {
    /// The highest number read so far.
    pub fn max(&self) -> u64 {
        self.numbers.iter().copied().max().unwrap_or(0)
    }
}

struct NumberSink {
    numbers: Arc<Mutex<Numbers>>,
}

impl Sink for NumberSink {
    fn lines(&mut self, _log: LogId, lines: &mut llmtail::source::Lines<'_>) {
        let mut got = Vec::new();
        let mut garbled = 0;
        for line in lines {
            match number_of(line) {
                Some(n) => got.push(n),
                None => garbled += 1,
            }
        }
        let mut numbers = lock(&self.numbers);
        numbers.numbers.extend(got);
        numbers.garbled += garbled;
    }

    fn event(&mut self, _log: LogId, event: TailEvent) {
        let mut numbers = lock(&self.numbers);
        match event {
            TailEvent::Rotated => numbers.rotations += 1,
            TailEvent::Truncated => numbers.truncations += 1,
            TailEvent::Skipped(SkipReason::TooLong) => numbers.skipped_too_long += 1,
            TailEvent::Skipped(SkipReason::TruncatedPartial) => numbers.skipped_partial += 1,
            _ => {}
        }
    }

    fn caught_up(&mut self) {
        lock(&self.numbers).caught_up = true;
    }
}

fn lock(numbers: &Mutex<Numbers>) -> MutexGuard<'_, Numbers> {
    numbers.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The agent's reader (`llmtail::source::Reader`, with the agent's options) following one
/// path on its own thread, keeping the number of every line it hands on.
pub struct NumberTail {
    numbers: Arc<Mutex<Numbers>>,
    stopper: Stopper,
    thread: Option<JoinHandle<()>>,
}

impl NumberTail {
    pub fn start(path: &Path) -> NumberTail {
        let reader = Reader::new(
            vec![LogSpec::Path(path.to_path_buf())],
            SourceOptions::default(),
        )
        .expect("reader");
        let numbers = Arc::new(Mutex::new(Numbers::default()));
        let mut sink = NumberSink {
            numbers: Arc::clone(&numbers),
        };
        let stopper = reader.stopper();
        let thread = std::thread::spawn(move || reader.follow(&mut sink));
        let tail = NumberTail {
            numbers,
            stopper,
            thread: Some(thread),
        };
        assert!(
            wait_until(DEADLINE, || tail.numbers().caught_up),
            "the reader never caught up"
        );
        tail
    }

    pub fn numbers(&self) -> MutexGuard<'_, Numbers> {
        lock(&self.numbers)
    }

    /// Stops the reader and gives back what it read.
    pub fn stop(mut self) -> Numbers {
        self.stopper.stop();
        if let Some(thread) = self.thread.take() {
            thread.join().expect("the reader panicked");
        }
        std::mem::take(&mut *self.numbers())
    }
}

impl Drop for NumberTail {
    fn drop(&mut self) {
        self.stopper.stop();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A copy of `fixture` in `dir`, as a log its engine has just written: its file was modified
/// now. A serving agent dates what a log held at start-up by the file's last write, so a test
/// whose clock stands a few seconds after the fixture's last line needs the file to agree.
pub fn just_written_copy(fixture: &str, dir: &Path) -> std::path::PathBuf {
    let name = Path::new(fixture).file_name().expect("a fixture file");
    let copy = dir.join(name);
    std::fs::copy(fixture, &copy).expect("copy the fixture");
    copy
}
