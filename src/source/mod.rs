//! Source: the files (or stdin) we follow, turned into complete lines.
//!
//! This is the first stage of the flow `source -> envelope -> grammar -> state -> exposition`.
//! It knows nothing about what lines mean. It owns every file descriptor, notices rotation,
//! truncation and files that appear late, and hands the next stage complete lines (never a
//! line before its `\n`) together with what happened to the file.
//!
//! The contract with the next stage is the [`Sink`] trait: the reader calls it from its own
//! thread, in order, and the sink must not block for long.

mod file;
mod glob_paths;
mod known;
mod reader;
mod regular_file;
mod splitter;
mod stdin;
mod watch;

pub use file::open_fix;
pub use glob_paths::{glob_paths, path_label};
pub use known::{KnownFile, KnownFiles};
pub use reader::{Reader, SourceError, SourceOptions, Stopper, DEFAULT_LOG_EXPIRY};

use std::path::PathBuf;
use std::sync::Arc;

pub use splitter::Lines;

/// Where lines come from, as the user named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogSpec {
    /// One path; it may not exist yet.
    Path(PathBuf),
    /// A glob such as `/var/log/vllm/*.log`; files that match later are picked up.
    Glob(String),
    /// `-`: standard input.
    Stdin,
}

/// As the user would write it: the path, the glob, or `-`.
impl std::fmt::Display for LogSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LogSpec::Path(path) => write!(f, "{}", path_label(path)),
            LogSpec::Glob(pattern) => f.write_str(pattern),
            LogSpec::Stdin => f.write_str("-"),
        }
    }
}

/// Where to start in a file that already exists when the agent starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StartFrom {
    /// Read what the file holds, then follow (rebuilds the current state).
    #[default]
    Start,
    /// Only follow what is written from now on.
    End,
}

/// Identifies one followed file for the life of the process. The sink learns its label
/// from [`TailEvent::Discovered`] before any line of it arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LogId(pub u32);

/// Which file a path named: device, inode and, where the file system records it, birth time,
/// so that a restart can tell the same file from a new one that reused the inode number; and
/// a hash of its first bytes when it was opened, so that it can tell the same file from one
/// that was truncated and written again (copytruncate) while the agent was down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
    pub born_ns: Option<u64>,
    /// How many first bytes `head_hash` covers (up to [`FileId::HEAD_BYTES`]).
    pub head_len: u32,
    /// FNV-1a of those bytes.
    pub head_hash: u64,
}

impl FileId {
    /// How many first bytes of a file identify its content.
    pub const HEAD_BYTES: usize = 256;

    /// The identity of an open file: its metadata and its first bytes as they are now.
    pub fn read(file: &std::fs::File, meta: &std::fs::Metadata) -> FileId {
        let (head_len, head_hash) = head_print(file, Self::HEAD_BYTES).unwrap_or((0, FNV_OFFSET));
        FileId {
            head_len,
            head_hash,
            ..Self::of_metadata(meta)
        }
    }

    /// The identity of a file whose first bytes, as read so far, are `head` (at most
    /// [`FileId::HEAD_BYTES`] of them).
    pub(crate) fn with_head(meta: &std::fs::Metadata, head: &[u8]) -> FileId {
        Self::of_metadata(meta).with_first_bytes(head)
    }

    /// The same file (device, inode, birth), known by other first bytes.
    pub(crate) fn with_first_bytes(self, head: &[u8]) -> FileId {
        FileId {
            head_len: u32::try_from(head.len()).unwrap_or(u32::MAX),
            head_hash: fnv1a(head),
            ..self
        }
    }

    fn of_metadata(meta: &std::fs::Metadata) -> FileId {
        use std::os::unix::fs::MetadataExt;
        let born_ns = meta
            .created()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .and_then(|d| u64::try_from(d.as_nanos()).ok());
        FileId {
            dev: meta.dev(),
            ino: meta.ino(),
            born_ns,
            head_len: 0,
            head_hash: FNV_OFFSET,
        }
    }

    /// Same inode, same birth, and the file still starts with the bytes it started with.
    pub fn matches(&self, file: &std::fs::File, meta: &std::fs::Metadata) -> bool {
        let now = Self::of_metadata(meta);
        (now.dev, now.ino, now.born_ns) == (self.dev, self.ino, self.born_ns)
            && head_print(file, self.head_len as usize) == Some((self.head_len, self.head_hash))
    }

    /// Same inode and birth, from metadata alone (to find candidates before opening them).
    pub fn same_inode(&self, meta: &std::fs::Metadata) -> bool {
        let now = Self::of_metadata(meta);
        (now.dev, now.ino, now.born_ns) == (self.dev, self.ino, self.born_ns)
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// `(length, FNV-1a)` of up to `want` first bytes of a file.
fn head_print(file: &std::fs::File, want: usize) -> Option<(u32, u64)> {
    use std::os::unix::fs::FileExt;
    let mut bytes = vec![0; want];
    let mut got = 0;
    while got < want {
        match file.read_at(&mut bytes[got..], got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some((u32::try_from(got).ok()?, fnv1a(&bytes[..got])))
}

/// FNV-1a: a file's first bytes, hashed (not a defence against anyone, only a way to tell
/// two files apart).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(FNV_OFFSET, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Where to go on reading a log after a restart (from the state file): the file it was in and
/// the offset after the last line handed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resume {
    /// The `log` label (the path as given or as a glob matched it).
    pub label: String,
    pub file: FileId,
    pub offset: u64,
}

/// Why bytes were dropped instead of becoming a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SkipReason {
    /// A line longer than `--max-line-bytes`, skipped up to its `\n`.
    TooLong,
    /// The unterminated tail of a file that was truncated, rotated away or closed.
    TruncatedPartial,
}

impl SkipReason {
    /// The `reason` label of `llmtail_lines_skipped_total`.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::TooLong => "too_long",
            SkipReason::TruncatedPartial => "truncated_partial",
        }
    }
}

/// What happened to a followed file, besides lines.
#[derive(Debug)]
pub enum TailEvent {
    /// A file is followed from now on under `label` (the path as given, or as the glob matched it);
    /// `source` is the [`LogSpec`] it is followed for.
    Discovered { label: Arc<str>, source: LogSpec },
    /// The file was opened (or reopened after rotation); `None` for stdin. The [`FileId`] and
    /// the [`TailEvent::Offset`]s after it are what a restart resumes from.
    Opened(Option<FileId>),
    /// The path names no file any more, and what it named was read to its end: sent before
    /// [`TailEvent::Closed`]. The log's series go after `--log-expiry` unless it comes back.
    Gone,
    /// The file is closed (deleted and drained, or the agent stops).
    Closed,
    /// The path now names another file; the old one was drained first.
    Rotated,
    /// The file became shorter than what was read; reading starts again at 0.
    Truncated,
    /// The file exists but could not be opened; it is retried with backoff.
    OpenFailed(std::io::Error),
    /// The path names no file, and has named none since it was followed: it is waited for
    /// (a typo'd path looks the same). Sent once, before the file, if ever, is opened.
    Missing,
    /// Bytes that did not become a line.
    Skipped(SkipReason),
    /// The byte offset read so far in the current file, after a batch of lines.
    Offset(u64),
}

/// The next stage. Called from the reader thread.
pub trait Sink: Send {
    /// A batch of complete lines of one file, without their `\n` (a trailing `\r` is kept:
    /// CRLF handling belongs to the envelope).
    /// `lines` is an iterator of `&[u8]`, and can also flag the lines a search matches in
    /// ([`Lines::next_hit`]) with one search over the whole batch.
    fn lines(&mut self, log: LogId, lines: &mut Lines<'_>);
    /// Something happened to a file.
    fn event(&mut self, log: LogId, event: TailEvent);
    /// Every file that existed at start-up has been read to its end (files that could not
    /// be opened count as read). Called once; stdin is not waited for while following, since
    /// a pipe has no end to catch up with. [`Reader::read_to_end`] calls it when it is done.
    fn caught_up(&mut self) {}
    /// Called by a following reader after each round of checks, at least once per poll
    /// interval whether lines came or not: time-driven work (saving the state file after the
    /// last lines of a burst) goes here.
    fn tick(&mut self) {}
    /// The logs to follow from now on, when they changed (a configuration reload): asked by a
    /// following reader after each round of checks, so that the sink has taken the new
    /// configuration before the reader announces a file of it. The files of a spec no longer
    /// named are closed, those of a new one found as at start-up ([`StartFrom`] applies).
    fn new_specs(&mut self) -> Option<Vec<LogSpec>> {
        None
    }
    /// A following reader has stopped and closed its files: nothing comes after this, and
    /// every position reported is final.
    fn stopped(&mut self) {}
}
