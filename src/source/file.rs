//! One followed path: the file it names now, and the files it named before that are still
//! being drained.
//!
//! Nothing here trusts an event. Each check stats the path (one `stat` when nothing
//! happened) and compares what it finds with the open descriptor:
//! - the path names another file (rotation) or none (deletion): the old descriptor is read to
//!   its end first, then kept open for a grace period (writers go on appending to a renamed
//!   file until they reopen) and drained again on every check, then closed; the new file, if
//!   any, is read from its first byte.
//! - the file is shorter than what we read (truncation), or its first bytes are no longer
//!   those we read (truncated and regrown past our offset before we looked): reading starts
//!   again at 0.
//! - the file cannot be opened: reported, and retried with a backoff (an event on the path
//!   retries at once).

use std::fs::{File, Metadata};
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::known::KnownFiles;
use super::regular_file::{open_regular, Identity};
use super::splitter::LineSplitter;
use super::{FileId, LogId, LogSpec, Sink, SkipReason, TailEvent};
use crate::bounded_read::{read_regular_text, SMALL_FILE_LIMIT};

/// How many leading bytes of a file identify its content (see [`OpenLog::fingerprint`]).
const FINGERPRINT_BYTES: usize = FileId::HEAD_BYTES;

/// At most this much is read from one file per check, so one busy file cannot starve the
/// others (the reader comes back to it at once).
const READ_BUDGET: u64 = 4 * 1024 * 1024;

/// How many read budgets a rotated-away file may take in one go before the new file is opened.
const MAX_DRAIN_BUDGETS: usize = 16;

/// The longest wait between two attempts to open a file that fails to open.
const MAX_OPEN_BACKOFF: Duration = Duration::from_secs(60);

/// What a check needs from the reader: the shared read buffer, the sink and the settings.
pub(crate) struct Ctx<'a> {
    pub buf: &'a mut [u8],
    pub sink: &'a mut dyn Sink,
    pub now: Instant,
    pub max_line_bytes: usize,
    pub poll_interval: Duration,
    pub rotated_grace: Duration,
    /// Every file read so far and how far, whatever its name now.
    pub known: &'a KnownFiles,
}

/// An open descriptor and how far it was read.
struct OpenLog {
    file: File,
    identity: Identity,
    /// Device, inode and birth (the first bytes are in `fingerprint`).
    id: FileId,
    offset: u64,
    splitter: LineSplitter,
    /// The first bytes of the file as we read them (up to [`FINGERPRINT_BYTES`]).
    ///
    /// A file truncated and then written past our offset before we looked cannot be told
    /// from a file that grew by its size; its first bytes can. This cannot detect a file
    /// rewritten with the same first bytes (e.g. every run starts with the same banner and
    /// no timestamp), nor a truncation regrown to exactly our offset until it grows further;
    /// such a file is read on from our offset as if it had only grown.
    fingerprint: Vec<u8>,
}

impl OpenLog {
    fn new(file: File, meta: &Metadata, offset: u64, max_line_bytes: usize) -> OpenLog {
        let mut log = OpenLog {
            file,
            identity: Identity::of(meta),
            id: FileId::with_head(meta, &[]),
            offset,
            splitter: LineSplitter::new(max_line_bytes),
            fingerprint: Vec::new(),
        };
        refill_fingerprint(&mut log);
        log
    }

    /// The identity of this file with the first bytes read so far.
    fn file_id(&self) -> FileId {
        self.id.with_first_bytes(&self.fingerprint)
    }

    /// The offset after the last complete line handed on.
    fn complete_offset(&self) -> u64 {
        self.offset - self.splitter.pending_len() as u64
    }
}

/// A descriptor whose path now names another file (or none), drained until `close_at`.
struct RotatedLog {
    log: OpenLog,
    close_at: Instant,
}

/// One followed path.
pub(crate) struct FollowedFile {
    pub id: LogId,
    /// The `log` label, under which the known files registry records what this path read.
    pub label: Arc<str>,
    /// The path to stat and open (absolute).
    pub path: PathBuf,
    /// Its directory (the one to watch).
    pub dir: PathBuf,
    /// Where the path leads when it is (or goes through) a symlink, e.g. Kubernetes'
    /// `/var/log/containers/*.log`. Writes show up as events in the target's directory,
    /// not the link's, so that directory is watched too.
    pub target: Option<PathBuf>,
    /// Found by a glob: forgotten once closed (the glob finds it again if it comes back).
    pub from_glob: bool,
    /// The `--log` it is followed for: a reload that drops that spec closes it.
    pub source: LogSpec,
    /// Existed at start-up: [`super::Sink::caught_up`] waits for it.
    pub initial: bool,
    /// Read to its end once (or found missing or unreadable): counts as caught up.
    pub settled: bool,
    /// With `--from end`: the file the path named at start-up, opened at its end. Any other
    /// file at this path appeared later and is read from its first byte.
    start_at_end: Option<Identity>,
    current: Option<OpenLog>,
    rotated: Vec<RotatedLog>,
    /// A file was opened and `Closed` was not sent since: the next open is a rotation.
    open_since_closed: bool,
    open_failures: u32,
    retry_at: Option<Instant>,
    /// The path named nothing when last looked at.
    missing: bool,
    /// A file was opened for this path, or its absence was reported ([`TailEvent::Missing`]).
    missing_told: bool,
    /// The path names a file another followed path reads (see `follow_elsewhere`).
    aliased: bool,
    /// The budget ran out before the end of the file: check again without waiting.
    pub more: bool,
    /// Where a restart goes on (from the state file): the file and the offset after the last
    /// line handed on before the agent stopped. Used by the first open only.
    pub resume: Option<(FileId, u64)>,
}

impl FollowedFile {
    pub fn new(
        id: LogId,
        label: Arc<str>,
        path: PathBuf,
        from_glob: bool,
        at_startup: bool,
        start_at_end: bool,
    ) -> FollowedFile {
        let dir = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("/"));
        let existing = std::fs::metadata(&path).ok();
        if existing.is_none() {
            // A typo'd path looks the same as a log not written yet: say it loudly enough.
            tracing::warn!(
                path = %path.display(),
                "the log does not exist; it is waited for and read when it appears (check the path if it should exist)"
            );
        }
        FollowedFile {
            id,
            label,
            dir,
            target: None,
            from_glob,
            source: LogSpec::Stdin,
            initial: at_startup && existing.is_some(),
            settled: !at_startup || existing.is_none(),
            missing: existing.is_none(),
            missing_told: false,
            aliased: false,
            start_at_end: existing.as_ref().filter(|_| start_at_end).map(Identity::of),
            path,
            current: None,
            rotated: Vec::new(),
            open_since_closed: false,
            open_failures: 0,
            retry_at: None,
            more: false,
            resume: None,
        }
    }

    /// Identities of the files open for this path (current and rotated).
    pub fn open_identities(&self) -> impl Iterator<Item = Identity> + '_ {
        self.current
            .iter()
            .map(|log| log.identity)
            .chain(self.rotated.iter().map(|r| r.log.identity))
    }

    pub fn has_rotated(&self) -> bool {
        !self.rotated.is_empty()
    }

    /// True if `dir` holds this file (or its symlink target).
    pub fn lives_in(&self, dir: &Path) -> bool {
        self.dir == dir || self.target.as_deref().and_then(Path::parent) == Some(dir)
    }

    /// Missing, nothing open and nothing to drain: a glob's file that went away.
    pub fn is_gone(&self) -> bool {
        self.missing && self.current.is_none() && self.rotated.is_empty()
    }

    /// The next time this file wants a check without an event (a rotated file to close, an
    /// open to retry).
    pub fn deadline(&self) -> Option<Instant> {
        let close = self.rotated.iter().map(|r| r.close_at).min();
        let retry = self.retry_at.filter(|_| self.current.is_none());
        match (close, retry) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Looks at the path and reads what there is to read. `retry_now` skips the open backoff
    /// (an event named this path).
    pub fn check(&mut self, ctx: &mut Ctx<'_>, retry_now: bool) {
        self.more = false;
        self.drain_rotated(ctx);

        if let Some(mut log) = self.current.take() {
            match std::fs::metadata(&self.path) {
                Ok(meta) if Identity::of(&meta) == log.identity => {
                    self.check_shrink(&mut log, meta.len(), ctx);
                    self.more |= !self.read_available(&mut log, ctx, true, meta.len());
                    self.current = Some(log);
                }
                Ok(_) => {
                    self.rotate_away(log, ctx);
                    self.open(ctx);
                }
                Err(error) if error.kind() == ErrorKind::NotFound => {
                    self.missing = true;
                    self.rotate_away(log, ctx);
                }
                Err(_) => {
                    // The path cannot be looked at (e.g. its directory lost its x bit), so
                    // we cannot tell a rotation: go on with the descriptor we have.
                    let mut up_to = u64::MAX;
                    if let Ok(meta) = log.file.metadata() {
                        self.check_shrink(&mut log, meta.len(), ctx);
                        up_to = meta.len();
                    }
                    self.more |= !self.read_available(&mut log, ctx, true, up_to);
                    self.current = Some(log);
                }
            }
        } else if retry_now || self.retry_at.is_none_or(|at| at <= ctx.now) {
            self.open(ctx);
        }
        if !self.more {
            // Read to its end, or missing, or unreadable: nothing more to read for now.
            self.settled = true;
        }
    }

    /// The file was read to its end once and for all (a one-shot read): its unterminated last
    /// line is a whole line, as the last line of ended standard input is. A followed file's
    /// is not: its writer may be in the middle of it.
    pub fn end_last_line(&mut self, ctx: &mut Ctx<'_>) {
        let Some(log) = self.current.as_mut() else {
            return;
        };
        if log.splitter.pending_len() == 0 {
            return;
        }
        let id = self.id;
        let sink = &mut *ctx.sink;
        // The tail is within the limit (a longer one is already being skipped), so the
        // newline ends it rather than skipping it. The offset does not move: no byte was read.
        log.splitter.feed(b"\n", |lines| sink.lines(id, lines));
        let complete = log.complete_offset();
        ctx.known
            .read(&self.label, log.file_id(), complete, ctx.now);
        ctx.sink.event(id, TailEvent::Offset(complete));
    }

    /// Closes everything (the reader stops or the one-shot read is done).
    pub fn close(&mut self, ctx: &mut Ctx<'_>) {
        for rotated in std::mem::take(&mut self.rotated) {
            self.retire(rotated.log, ctx);
        }
        if let Some(log) = self.current.take() {
            self.retire(log, ctx);
        }
        self.send_closed(ctx);
    }

    fn open(&mut self, ctx: &mut Ctx<'_>) {
        let (file, meta) = match open_regular(&self.path) {
            Ok(opened) => opened,
            Err(error) if error.kind() == ErrorKind::NotFound => {
                self.missing = true;
                self.retry_at = None;
                if !self.missing_told {
                    self.missing_told = true;
                    ctx.sink.event(self.id, TailEvent::Missing);
                }
                return;
            }
            Err(error) => {
                self.missing = false;
                self.missing_told = true;
                self.open_failed(error, ctx);
                return;
            }
        };
        self.missing = false;
        self.missing_told = true;
        self.target = std::fs::canonicalize(&self.path)
            .ok()
            .filter(|target| *target != self.path);
        let identity = Identity::of(&meta);
        if !ctx.known.hold(identity, self.id) {
            self.follow_elsewhere(ctx);
            return;
        }
        self.aliased = false;
        let mut log = match self.rotated.iter().position(|r| r.log.identity == identity) {
            // The path names again a file we are still draining (a symlink switched back):
            // it goes on where it is.
            Some(at) => self.rotated.remove(at).log,
            None => {
                let offset = self.start_offset(&file, &meta, ctx);
                OpenLog::new(file, &meta, offset, ctx.max_line_bytes)
            }
        };
        let offset = log.complete_offset();
        if self.open_since_closed {
            tracing::info!(path = %self.path.display(), "log rotated; following the new file");
            ctx.sink.event(self.id, TailEvent::Rotated);
        } else {
            tracing::info!(path = %self.path.display(), offset, "following log");
        }
        ctx.sink.event(
            self.id,
            TailEvent::Opened(Some(FileId::read(&log.file, &meta))),
        );
        ctx.sink.event(self.id, TailEvent::Offset(offset));
        self.open_since_closed = true;
        self.open_failures = 0;
        self.retry_at = None;
        self.more |= !self.read_available(&mut log, ctx, true, meta.len());
        self.current = Some(log);
    }

    /// Where reading a file the path names now starts: its end with `--from end` at start-up,
    /// the saved offset after a restart, how far it was read if it is a known file (under any
    /// name), else its first byte.
    fn start_offset(&mut self, file: &File, meta: &Metadata, ctx: &mut Ctx<'_>) -> u64 {
        if self.start_at_end.take() == Some(Identity::of(meta)) {
            return meta.len();
        }
        if let Some((saved, saved_offset)) = self.resume.take() {
            if saved.matches(file, meta) && resumable(file, meta.len(), saved_offset) {
                return saved_offset;
            }
            // Rotated (or replaced) while we were down: finish the file we were in first.
            self.resume_rotated(saved, saved_offset, ctx);
        }
        ctx.known
            .offset_of(file, meta, ctx.now)
            .filter(|&known| resumable(file, meta.len(), known))
            .unwrap_or(0)
    }

    /// After a restart, the path names another file than the one we were reading: look for
    /// that file in the directory (a rename rotation keeps it there, e.g. `vllm.log.1`) and
    /// read it from where we stopped, before the new file. If it is gone (deleted, compressed),
    /// what was written to it after the saved offset cannot be read, and we say so.
    fn resume_rotated(&mut self, saved: FileId, saved_offset: u64, ctx: &mut Ctx<'_>) {
        let found = std::fs::read_dir(&self.dir).ok().and_then(|entries| {
            entries.flatten().map(|e| e.path()).find(|path| {
                std::fs::metadata(path).is_ok_and(|meta| meta.is_file() && saved.same_inode(&meta))
                    && open_regular(path).is_ok_and(|(file, meta)| saved.matches(&file, &meta))
            })
        });
        let Some(old_path) = found else {
            tracing::warn!(path = %self.path.display(), "the file read before the restart is gone (rotated and removed); lines written to it after the saved position are lost");
            return;
        };
        let Ok((file, meta)) = open_regular(&old_path) else {
            return;
        };
        // A glob may have found it under its new name first and read on from the saved offset.
        let offset = ctx
            .known
            .offset_of(&file, &meta, ctx.now)
            .map_or(saved_offset, |known| known.max(saved_offset));
        if !resumable(&file, meta.len(), offset) {
            return;
        }
        tracing::info!(path = %self.path.display(), rotated = %old_path.display(), offset, "rotated while stopped; reading the rest of the old file first");
        let log = OpenLog::new(file, &meta, offset, ctx.max_line_bytes);
        ctx.sink.event(self.id, TailEvent::Opened(Some(saved)));
        ctx.sink.event(self.id, TailEvent::Offset(offset));
        self.open_since_closed = true;
        self.rotate_away(log, ctx);
    }

    /// The path names a file another followed path has open (a symlink and its target, a
    /// hard link): that one reads it, so each line is read once. Looked at again at the next
    /// poll, in case the other lets it go.
    fn follow_elsewhere(&mut self, ctx: &mut Ctx<'_>) {
        if !self.aliased {
            tracing::info!(path = %self.path.display(), "this file is already followed under another name; its lines are counted there");
            self.aliased = true;
        }
        self.retry_at = Some(ctx.now + ctx.poll_interval);
    }

    fn open_failed(&mut self, error: std::io::Error, ctx: &mut Ctx<'_>) {
        self.open_failures = self.open_failures.saturating_add(1);
        let backoff = ctx
            .poll_interval
            .saturating_mul(1 << self.open_failures.min(16).saturating_sub(1))
            .min(MAX_OPEN_BACKOFF);
        self.retry_at = Some(ctx.now + backoff);
        // Every failure is an event (the sink counts them); the log says so only on the 1st,
        // 2nd, 4th, 8th... failure in a row, so a file that stays unreadable does not flood it.
        if self.open_failures.is_power_of_two() {
            tracing::warn!(
                path = %self.path.display(),
                %error,
                failures = self.open_failures,
                retry_in = ?backoff,
                fix = %open_fix(&error),
                "cannot open log"
            );
        }
        ctx.sink.event(self.id, TailEvent::OpenFailed(error));
    }

    /// Truncated (shorter than our offset), or rewritten since we read its first bytes.
    fn check_shrink(&self, log: &mut OpenLog, len: u64, ctx: &mut Ctx<'_>) {
        let truncated = len < log.offset || (len > log.offset && !fingerprint_matches(log));
        if truncated {
            tracing::info!(path = %self.path.display(), was = log.offset, now = len, "log truncated; reading it again from the start");
            if log.splitter.discard_partial() {
                ctx.sink
                    .event(self.id, TailEvent::Skipped(SkipReason::TruncatedPartial));
            }
            log.offset = 0;
            log.fingerprint.clear();
            ctx.sink.event(self.id, TailEvent::Truncated);
        }
    }

    /// The path names another file now (or none): read the old one to its end, then keep it
    /// for the grace period.
    fn rotate_away(&mut self, mut log: OpenLog, ctx: &mut Ctx<'_>) {
        // Bounded so a writer that outruns us cannot keep us here; the rest is read while
        // the file is drained during its grace period.
        for _ in 0..MAX_DRAIN_BUDGETS {
            if self.read_available(&mut log, ctx, true, u64::MAX) {
                break;
            }
        }
        tracing::debug!(path = %self.path.display(), "path no longer names the file we read; draining it");
        self.rotated.push(RotatedLog {
            log,
            close_at: ctx.now + ctx.rotated_grace,
        });
    }

    /// Reads what writers appended to rotated-away files; closes those past their grace.
    fn drain_rotated(&mut self, ctx: &mut Ctx<'_>) {
        if self.rotated.is_empty() {
            return;
        }
        let mut rotated = std::mem::take(&mut self.rotated);
        for r in &mut rotated {
            self.more |= !self.read_available(&mut r.log, ctx, false, u64::MAX);
        }
        let now = ctx.now;
        let (keep, close): (Vec<_>, Vec<_>) = rotated.into_iter().partition(|r| r.close_at > now);
        self.rotated = keep;
        for r in close {
            // A file that is still being written to faster than we read is cut here; the
            // grace period is the promise, not "until the writer stops".
            self.retire(r.log, ctx);
        }
        if self.current.is_none() && self.rotated.is_empty() {
            if self.missing && self.open_since_closed {
                ctx.sink.event(self.id, TailEvent::Gone);
            }
            self.send_closed(ctx);
        }
    }

    /// Closes one descriptor for good: its unterminated tail can never become a line.
    fn retire(&mut self, mut log: OpenLog, ctx: &mut Ctx<'_>) {
        ctx.known.release(log.identity, self.id);
        // Recorded before the partial line is dropped: if this file is opened again (a
        // symlink switched back), that line is read whole once it is complete.
        ctx.known
            .read(&self.label, log.file_id(), log.complete_offset(), ctx.now);
        if log.splitter.discard_partial() {
            ctx.sink
                .event(self.id, TailEvent::Skipped(SkipReason::TruncatedPartial));
        }
    }

    fn send_closed(&mut self, ctx: &mut Ctx<'_>) {
        if self.open_since_closed {
            self.open_since_closed = false;
            tracing::info!(path = %self.path.display(), "log closed");
            ctx.sink.event(self.id, TailEvent::Closed);
        }
    }

    /// Reads from the offset on, up to `up_to` (the size the file had when its first bytes
    /// were checked), and hands complete lines to the sink. Returns true at the end (of the
    /// file or of `up_to`), false if the read budget ran out first. `report_offset` is false
    /// for rotated-away files (the offset the sink tracks is the current file's).
    ///
    /// Without `up_to`, a file truncated and regrown while the sink is busy with a batch
    /// would be read on from the old offset, in the middle of the new content: the bytes
    /// past `up_to` wait for the next check, which compares the first bytes again first.
    /// (The write that makes them shows up as an event, so that check comes.)
    fn read_available(
        &self,
        log: &mut OpenLog,
        ctx: &mut Ctx<'_>,
        report_offset: bool,
        up_to: u64,
    ) -> bool {
        let mut budget = READ_BUDGET;
        loop {
            let room = up_to.saturating_sub(log.offset).min(ctx.buf.len() as u64) as usize;
            if room == 0 {
                return true;
            }
            let n = match log.file.read_at(&mut ctx.buf[..room], log.offset) {
                Ok(0) => return true,
                Ok(n) => n,
                Err(error) if error.kind() == ErrorKind::Interrupted => continue,
                Err(error) => {
                    // E.g. EIO on a flaky network file system: try again at the next check.
                    tracing::debug!(path = %self.path.display(), %error, "read failed");
                    return true;
                }
            };
            let data = &ctx.buf[..n];
            if log.offset < FINGERPRINT_BYTES as u64 && log.fingerprint.len() as u64 == log.offset {
                let take = (FINGERPRINT_BYTES - log.fingerprint.len()).min(n);
                log.fingerprint.extend_from_slice(&data[..take]);
            }
            log.offset += n as u64;
            let id = self.id;
            let sink = &mut *ctx.sink;
            let too_long = log.splitter.feed(data, |lines| sink.lines(id, lines));
            for _ in 0..too_long {
                ctx.sink.event(id, TailEvent::Skipped(SkipReason::TooLong));
            }
            let complete = log.complete_offset();
            // Before the offset event, which may save the state: the state file's known files
            // and counters then agree.
            ctx.known
                .read(&self.label, log.file_id(), complete, ctx.now);
            if report_offset {
                ctx.sink.event(id, TailEvent::Offset(complete));
            }
            budget = budget.saturating_sub(n as u64);
            if budget == 0 {
                return false;
            }
        }
    }
}

/// A saved offset can be resumed in a file when the file still reaches it and the byte before
/// it ends a line (offsets are only ever saved right after a `\n`): a file that was replaced
/// by another with the same identity fails this almost always.
fn resumable(file: &File, len: u64, offset: u64) -> bool {
    if offset == 0 {
        return true;
    }
    if offset > len {
        return false;
    }
    let mut byte = [0u8; 1];
    file.read_exact_at(&mut byte, offset - 1).is_ok() && byte[0] == b'\n'
}

/// Reads the first bytes of a file opened past them (`--from end`), so a later rewrite of
/// the file can be told from growth.
fn refill_fingerprint(log: &mut OpenLog) {
    let want = (FINGERPRINT_BYTES as u64).min(log.offset) as usize;
    let mut bytes = vec![0; want];
    if log.file.read_exact_at(&mut bytes, 0).is_ok() {
        log.fingerprint = bytes;
    }
}

/// True unless the file's first bytes differ from those we read.
fn fingerprint_matches(log: &OpenLog) -> bool {
    if log.fingerprint.is_empty() {
        return true;
    }
    let mut now = [0u8; FINGERPRINT_BYTES];
    let now = &mut now[..log.fingerprint.len()];
    match log.file.read_exact_at(now, 0) {
        Ok(()) => now == log.fingerprint.as_slice(),
        Err(error) if error.kind() == ErrorKind::UnexpectedEof => false,
        // Cannot tell: do not throw away what we read on a hunch.
        Err(_) => true,
    }
}

/// What to do about a log that does not open.
pub fn open_fix(error: &std::io::Error) -> String {
    match error.kind() {
        ErrorKind::PermissionDenied => format!(
            "llmtail runs as {}: give it read access (the file's group, e.g. \
             SupplementaryGroups=adm in its unit; or an ACL: setfacl -m u:USER:r FILE, and x on \
             each directory above it)",
            agent_user()
        ),
        ErrorKind::InvalidInput => {
            "follow a regular file (a directory's logs: a glob such as 'dir/*.log')".to_string()
        }
        _ => "check the file; it is retried with a backoff".to_string(),
    }
}

/// The user this process runs as, by name when `/etc/passwd` has it (a `DynamicUser` of
/// systemd may have none), else by uid.
fn agent_user() -> String {
    use std::os::unix::fs::MetadataExt;
    let Ok(uid) = std::fs::metadata("/proc/self").map(|m| m.uid()) else {
        return "an unknown user".to_string();
    };
    // Bounded as every file read whole is; a site's passwd can be long, so more than 1 MiB.
    let passwd = read_regular_text(Path::new("/etc/passwd"), 16 * SMALL_FILE_LIMIT);
    let name = passwd.ok().and_then(|passwd| {
        passwd.lines().find_map(|line| {
            let mut fields = line.split(':');
            let name = fields.next()?;
            (fields.nth(1)? == uid.to_string()).then(|| name.to_string())
        })
    });
    match name {
        Some(name) => format!("user {name} (uid {uid})"),
        None => format!("uid {uid}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An unreadable log said "Permission denied" and nothing of what to do.
    #[test]
    fn an_unreadable_log_says_who_the_agent_runs_as_and_the_fix() {
        let fix = open_fix(&std::io::Error::from(ErrorKind::PermissionDenied));
        assert!(fix.contains("llmtail runs as "), "{fix}");
        assert!(fix.contains("uid "), "{fix}");
        assert!(
            fix.contains("SupplementaryGroups=") && fix.contains("setfacl"),
            "{fix}"
        );
    }
}
