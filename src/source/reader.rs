//! The reader: one thread that follows every log in turn and calls the sink.
//!
//! It sleeps until a watch wakes it, a deadline comes (a rotated file to close, an open to
//! retry) or the slow poll is due; then it checks the files the wake-up named (the poll and a
//! lost-event rescan check them all). One read buffer serves all files, since they are read
//! one after the other; a file keeps only its unterminated last line. A file that misbehaves
//! is reported to the sink and retried; it never stops the reader.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::file::{Ctx, FollowedFile};
use super::glob_paths::{glob_paths, path_label};
use super::known::{KnownFile, KnownFiles};
use super::regular_file::Identity;
use super::stdin::StdinLog;
use super::watch::{DirWatches, Touched};
use super::{LogId, LogSpec, Resume, Sink, StartFrom, TailEvent};

/// Size of the one read buffer shared by all files.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// The shortest poll interval (a zero one would be a busy loop).
const MIN_POLL: Duration = Duration::from_millis(10);

/// The longest poll interval or grace period taken as given.
const MAX_DURATION: Duration = Duration::from_secs(24 * 3600);

/// Every this many slow polls, the globs are listed again. A file that appears is announced
/// by its directory's events, which rescan at once; the listing on the poll is the backstop
/// for lost events, and listing and stat'ing every match each second was most of what 100 quiet
/// files cost (0.1 to 0.17% of a core). Known files are still checked on every poll.
const GLOB_RESCAN_POLLS: u32 = 10;

/// How the reader reads.
#[derive(Debug, Clone)]
pub struct SourceOptions {
    /// Where to start in files that exist at start-up (files that appear later are always
    /// read from their first byte).
    pub from: StartFrom,
    /// Lines longer than this (without the `\n`) are skipped and reported.
    pub max_line_bytes: usize,
    /// The slow poll that backs up file-system events (lost events, NFS, bind mounts).
    pub poll_interval: Duration,
    /// How long a file whose path now names another file (or none) is still drained:
    /// writers go on appending to a renamed file until they reopen their log.
    pub rotated_grace: Duration,
    /// Positions saved before a restart (`--state-file`), by label: such a log goes on from
    /// there, whatever `from` says.
    pub resume: Vec<Resume>,
    /// Every file read before a restart (`--state-file`) and how far, whatever its name now.
    pub known: Vec<KnownFile>,
    /// How long a file that is gone (or a known file no longer seen) is remembered
    /// (`--log-expiry`).
    pub log_expiry: Duration,
}

/// `--log-expiry`'s default.
pub const DEFAULT_LOG_EXPIRY: Duration = Duration::from_secs(600);

impl Default for SourceOptions {
    fn default() -> Self {
        SourceOptions {
            from: StartFrom::Start,
            max_line_bytes: 64 * 1024,
            poll_interval: Duration::from_secs(1),
            rotated_grace: Duration::from_secs(5),
            resume: Vec::new(),
            known: Vec::new(),
            log_expiry: DEFAULT_LOG_EXPIRY,
        }
    }
}

/// Why a reader cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// A `--log` glob that does not parse.
    #[error("bad glob pattern `{pattern}`: {source}")]
    BadGlob {
        pattern: String,
        #[source]
        source: glob::PatternError,
    },
    /// A path that cannot be made absolute (the current directory is gone).
    #[error("cannot resolve `{}`: {source}", path.display())]
    Resolve {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A spec, checked and resolved.
enum Spec {
    Path { label: Arc<str>, path: PathBuf },
    Glob { pattern: String, base: PathBuf },
    Stdin,
}

/// One `--log`: the spec as the sink knows it (its files are announced with it), resolved.
struct Source {
    given: LogSpec,
    spec: Spec,
}

impl Source {
    /// Checks `given` (a bad glob pattern is an error naming it) and resolves its paths.
    fn new(given: LogSpec) -> Result<Source, SourceError> {
        let spec = match &given {
            LogSpec::Path(path) => Spec::Path {
                label: Arc::from(path.display().to_string()),
                path: absolute(path)?,
            },
            LogSpec::Glob(pattern) => {
                glob::Pattern::new(pattern).map_err(|source| SourceError::BadGlob {
                    pattern: pattern.clone(),
                    source,
                })?;
                let base = absolute(&glob_base(pattern))?;
                Spec::Glob {
                    pattern: pattern.clone(),
                    base,
                }
            }
            LogSpec::Stdin => Spec::Stdin,
        };
        Ok(Source { given, spec })
    }
}

/// Makes [`Reader::follow`] return soon; cheap to clone, usable from any thread.
#[derive(Debug, Clone)]
pub struct Stopper {
    stop: Arc<AtomicBool>,
    wake: Sender<()>,
}

impl Stopper {
    /// Asks the reader to stop: it closes its files (sending `Closed`) and returns.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        // Fails only when the reader is already gone.
        let _ = self.wake.send(());
    }

    /// Wakes the reader for a round of checks, after which it asks its sink for new specs
    /// ([`super::Sink::new_specs`]): a reload need not wait for the next poll.
    pub fn wake(&self) {
        let _ = self.wake.send(());
    }
}

/// Follows the logs named by a set of [`LogSpec`]s.
pub struct Reader {
    specs: Vec<Source>,
    options: SourceOptions,
    stop: Arc<AtomicBool>,
    wake_tx: Sender<()>,
    wake_rx: Receiver<()>,
    stdin: Option<Box<dyn Read + Send>>,
    known: KnownFiles,
}

impl Reader {
    /// Checks the specs (a bad glob pattern is an error naming it); opens nothing yet.
    pub fn new(specs: Vec<LogSpec>, options: SourceOptions) -> Result<Reader, SourceError> {
        let specs = specs
            .into_iter()
            .map(Source::new)
            .collect::<Result<Vec<_>, _>>()?;
        let (wake_tx, wake_rx) = channel();
        // Durations are added to `Instant`s; absurd ones would overflow (and panic).
        let mut options = SourceOptions {
            poll_interval: options.poll_interval.clamp(MIN_POLL, MAX_DURATION),
            rotated_grace: options.rotated_grace.min(MAX_DURATION),
            log_expiry: options.log_expiry.min(MAX_DURATION),
            ..options
        };
        let known = KnownFiles::new(options.log_expiry, &std::mem::take(&mut options.known));
        Ok(Reader {
            specs,
            options,
            stop: Arc::new(AtomicBool::new(false)),
            wake_tx,
            wake_rx,
            stdin: None,
            known,
        })
    }

    /// Reads `input` instead of the process's standard input for [`LogSpec::Stdin`] (tests,
    /// or a caller that already owns stdin).
    pub fn with_stdin(mut self, input: impl Read + Send + 'static) -> Reader {
        self.stdin = Some(Box::new(input));
        self
    }

    /// The files read so far and how far, shared with whoever saves them (the state file).
    pub fn known_files(&self) -> KnownFiles {
        self.known.clone()
    }

    /// A handle that makes [`Reader::follow`] return soon.
    pub fn stopper(&self) -> Stopper {
        Stopper {
            stop: Arc::clone(&self.stop),
            wake: self.wake_tx.clone(),
        }
    }

    /// Follows the logs until stopped, calling the sink from this (blocking) thread.
    pub fn follow(self, sink: &mut dyn Sink) {
        let Reader {
            specs,
            options,
            stop,
            wake_tx,
            wake_rx,
            stdin,
            known,
        } = self;
        let poll_interval = options.poll_interval;
        let watches = DirWatches::new(wake_tx.clone());
        let mut engine = Engine::new(specs, options, watches, known, sink);
        engine.discover_at_startup();
        // Watch before the first read, so nothing written in between is missed.
        engine.watches.refresh();
        engine.start_stdin(stdin, Some(wake_tx.clone()));
        engine.check_all();
        let mut next_poll = Instant::now() + poll_interval;
        let mut polls: u32 = 0;

        while !stop.load(Ordering::SeqCst) {
            engine.report_caught_up();
            let now = Instant::now();
            let timeout = if engine.files.iter().any(|f| f.more) {
                Duration::ZERO
            } else {
                engine
                    .next_deadline()
                    .map_or(next_poll, |d| d.min(next_poll))
                    .saturating_duration_since(now)
            };
            match wake_rx.recv_timeout(timeout) {
                Ok(()) | Err(RecvTimeoutError::Timeout) => {}
                // Cannot happen while `wake_tx` lives; if it did, the poll still works.
                Err(RecvTimeoutError::Disconnected) => std::thread::sleep(timeout),
            }
            while wake_rx.try_recv().is_ok() {}
            if stop.load(Ordering::SeqCst) {
                break;
            }

            engine.pump_stdin();
            let touched = engine.watches.take_touched();
            let now = Instant::now();
            if touched.rescan || now >= next_poll {
                polls = polls.wrapping_add(1);
                engine.full_check(touched.rescan || polls.is_multiple_of(GLOB_RESCAN_POLLS));
                next_poll = Instant::now() + poll_interval;
            } else {
                engine.handle_touched(&touched);
            }
            engine.check_due();
            engine.forget_gone_glob_files();
            engine.sink.tick();
            if let Some(specs) = engine.sink.new_specs() {
                engine.reconfigure(&specs);
            }
        }
        engine.close_all();
        engine.sink.stopped();
        drop(wake_tx);
    }

    /// One-shot: reads every existing file (and stdin) to its current end, then returns. A
    /// last line without a newline counts: the log is taken as finished.
    pub fn read_to_end(self, sink: &mut dyn Sink) {
        let Reader {
            specs,
            options,
            stdin,
            known,
            ..
        } = self;
        let mut engine = Engine::new(specs, options, DirWatches::disabled(), known, sink);
        engine.discover_at_startup();
        for i in 0..engine.files.len() {
            engine.check_file(i, true);
            while engine.files[i].more {
                engine.check_file(i, false);
            }
            engine.with_files(|ctx, files| files[i].end_last_line(ctx));
        }
        engine.start_stdin(stdin, None);
        engine.close_all();
        engine.sink.caught_up();
    }
}

/// The state of a running reader.
struct Engine<'s> {
    specs: Vec<Source>,
    options: SourceOptions,
    files: Vec<FollowedFile>,
    stdin: Option<StdinLog>,
    next_id: u32,
    buf: Vec<u8>,
    watches: DirWatches,
    /// Every file read and how far (see `scan_glob` and `FollowedFile::open`).
    known: KnownFiles,
    /// Globs that matched no file at start-up: their first match is logged.
    unmatched_globs: Vec<LogSpec>,
    /// Files not followed because another file has their label, each warned about once.
    label_clashes: HashSet<PathBuf>,
    sink: &'s mut dyn Sink,
    caught_up_sent: bool,
}

impl<'s> Engine<'s> {
    fn new(
        specs: Vec<Source>,
        options: SourceOptions,
        watches: DirWatches,
        known: KnownFiles,
        sink: &'s mut dyn Sink,
    ) -> Engine<'s> {
        Engine {
            specs,
            options,
            files: Vec::new(),
            stdin: None,
            next_id: 0,
            buf: vec![0; READ_BUFFER_BYTES],
            watches,
            known,
            unmatched_globs: Vec::new(),
            label_clashes: HashSet::new(),
            sink,
            caught_up_sent: false,
        }
    }

    fn new_id(&mut self) -> LogId {
        let id = LogId(self.next_id);
        self.next_id = self.next_id.wrapping_add(1);
        id
    }

    /// Adds the plain paths and what the globs match now.
    ///
    /// Paths first, so a path a glob also matches is followed as the path (with its own
    /// settings), once: a path given twice (`/x/./a.log`, `//x/a.log`, relative and absolute
    /// spellings all resolve to one) is followed once too.
    fn discover_at_startup(&mut self) {
        self.discover(0..self.specs.len());
    }

    /// Adds the files of the sources at `indexes` as at start-up (`--from` applies).
    fn discover(&mut self, indexes: std::ops::Range<usize>) {
        for source in indexes.clone() {
            let Spec::Path { label, path } = &self.specs[source].spec else {
                continue;
            };
            if self.files.iter().any(|f| f.path == *path) {
                continue;
            }
            let (label, path) = (Arc::clone(label), path.clone());
            self.add_file(label, path, source, false, true);
        }
        for source in indexes {
            if let Spec::Glob { base, pattern } = &self.specs[source].spec {
                let (base, pattern) = (base.clone(), pattern.clone());
                self.watches.want(&base);
                self.scan_glob(source, true);
                let matches_a_file = glob_paths(&pattern).iter().any(|p| p.is_file());
                if !matches_a_file {
                    tracing::warn!(glob = %pattern, "no file matches this --log glob yet; it is watched, and files that match later are followed");
                    self.unmatched_globs.push(self.specs[source].given.clone());
                }
            }
        }
    }

    /// Follows `specs` from now on (a configuration reload): the files of a spec no longer
    /// given are closed and forgotten, those of a new spec are found as at start-up, and those
    /// of a spec given before and now go on untouched. Stdin is read for as long as it lasts,
    /// whatever `specs` say: it cannot be opened again.
    fn reconfigure(&mut self, specs: &[LogSpec]) {
        let dropped = |s: &Source| !matches!(s.spec, Spec::Stdin) && !specs.contains(&s.given);
        for source in self.specs.iter().filter(|s| dropped(s)) {
            tracing::info!(log = %source.given, "no longer followed (configuration reloaded)");
        }
        self.specs.retain(|s| !dropped(s));
        let followed: Vec<&LogSpec> = self.specs.iter().map(|s| &s.given).collect();
        let unfollowed = |file: &FollowedFile| !followed.contains(&&file.source);
        let mut gone: Vec<FollowedFile> = Vec::new();
        let mut i = 0;
        while i < self.files.len() {
            if unfollowed(&self.files[i]) {
                gone.push(self.files.remove(i));
            } else {
                i += 1;
            }
        }
        self.with_files(|ctx, _| gone.iter_mut().for_each(|file| file.close(ctx)));
        let unmatched = std::mem::take(&mut self.unmatched_globs);
        self.unmatched_globs = unmatched
            .into_iter()
            .filter(|g| specs.contains(g))
            .collect();

        let first_new = self.specs.len();
        for given in specs {
            if self.specs.iter().any(|s| s.given == *given) || *given == LogSpec::Stdin {
                continue;
            }
            match Source::new(given.clone()) {
                Ok(source) => self.specs.push(source),
                // The configuration was checked before it came here; a directory that
                // vanished since cannot be resolved.
                Err(e) => tracing::warn!("{e}; not followed"),
            }
        }
        self.discover(first_new..self.specs.len());
        self.watches.refresh();
        self.check_all();
    }

    /// Opens stdin if a spec names it. Following, it is read on its own thread (`wake`);
    /// one-shot (`wake` is None), it is read to its end here.
    fn start_stdin(&mut self, input: Option<Box<dyn Read + Send>>, wake: Option<Sender<()>>) {
        if !self.specs.iter().any(|s| matches!(s.spec, Spec::Stdin)) {
            return;
        }
        let id = self.new_id();
        self.sink.event(
            id,
            TailEvent::Discovered {
                label: Arc::from("-"),
                source: LogSpec::Stdin,
            },
        );
        let mut log = StdinLog::new(id, self.options.max_line_bytes, &mut *self.sink);
        let mut input = input.unwrap_or_else(|| Box::new(std::io::stdin()));
        match wake {
            Some(wake) => log.spawn_reader(input, wake),
            None => log.read_all(&mut *input, &mut self.buf, &mut *self.sink),
        }
        self.stdin = Some(log);
    }

    fn pump_stdin(&mut self) {
        if let Some(stdin) = &mut self.stdin {
            stdin.pump(&mut *self.sink);
        }
    }

    /// Starts following `path`; returns its index.
    fn add_file(
        &mut self,
        label: Arc<str>,
        path: PathBuf,
        source: usize,
        from_glob: bool,
        at_startup: bool,
    ) -> usize {
        let id = self.new_id();
        let resume = self
            .options
            .resume
            .iter()
            .find(|r| *r.label == *label)
            .map(|r| (r.file, r.offset));
        let start_at_end = at_startup && resume.is_none() && self.options.from == StartFrom::End;
        let given = self.specs[source].given.clone();
        let mut file = FollowedFile::new(
            id,
            Arc::clone(&label),
            path,
            from_glob,
            at_startup,
            start_at_end,
        );
        file.resume = resume;
        file.source = given.clone();
        self.watches.want(&file.dir);
        self.sink.event(
            id,
            TailEvent::Discovered {
                label,
                source: given,
            },
        );
        self.files.push(file);
        self.files.len() - 1
    }

    /// Follows what glob `source` matches that is not followed yet; returns the new indices.
    fn scan_glob(&mut self, source: usize, at_startup: bool) -> Vec<usize> {
        if self.watch_glob_dirs(source) {
            // A directory just watched may already hold a match written before its watch:
            // the listing below comes after the watch, so it sees it.
            self.watches.refresh();
        }
        let Spec::Glob { pattern, .. } = &self.specs[source].spec else {
            return Vec::new();
        };
        let mut added = Vec::new();
        for matched in glob_paths(pattern) {
            let Ok(meta) = std::fs::metadata(&matched) else {
                continue;
            };
            if meta.is_dir() {
                continue;
            }
            let path = std::path::absolute(&matched).unwrap_or_else(|_| matched.clone());
            if self.files.iter().any(|f| f.path == path) {
                continue;
            }
            // Another name of a file we hold open (a rotated copy such as `app.1.log`, a
            // hard link): reading it again would duplicate its lines.
            let identity = Identity::of(&meta);
            if self
                .files
                .iter()
                .any(|f| f.open_identities().any(|held| held == identity))
            {
                continue;
            }
            // A file read under another name (a rotated copy such as `app-20261122.log`, read
            // as `app.log`): same inode and same first bytes, since the inode number alone may
            // have been reused by a new file. A file that comes back to its own name is
            // followed again, from where it was read to.
            let label = path_label(&matched);
            if self.label_taken(&label, &path) {
                continue;
            }
            if self
                .known
                .read_elsewhere(&label, &path, &meta, Instant::now())
            {
                continue;
            }
            let label = Arc::from(label);
            added.push(self.add_file(label, path, source, true, at_startup));
        }
        if !added.is_empty() {
            let given = &self.specs[source].given;
            if let Some(at) = self.unmatched_globs.iter().position(|g| g == given) {
                self.unmatched_globs.remove(at);
                tracing::info!(glob = %pattern_of(&self.specs[source].spec), "the --log glob matches a file now");
            }
        }
        added
    }

    /// Whether a followed file other than `path` has `label` (a name that spells an invalid
    /// byte as `\xe9` and a name holding that byte): following both would merge two files into
    /// one log's series, so the one found second is not followed. Warned once per file.
    fn label_taken(&mut self, label: &str, path: &Path) -> bool {
        let Some(holder) = self
            .files
            .iter()
            .find(|f| *f.label == *label && f.path != path)
        else {
            return false;
        };
        if self.label_clashes.insert(path.to_path_buf()) {
            tracing::warn!(
                log = %label,
                file = %path_label(path),
                followed = %path_label(&holder.path),
                "not followed: its log label is that of a file already followed (a name that \
                 is not UTF-8 is labelled with its invalid bytes written \\xNN, which another \
                 name spells literally); rename one of the two"
            );
        }
        true
    }

    /// With a wildcard in a directory part (`/var/log/pods/*/vllm/*.log`), watches every
    /// directory that part matches, so a file created in one of them is seen at once rather
    /// than at the next listing of the glob (a listing every few seconds took 8.5 s to see one, and lost
    /// the lines of files created that shortly before a restart). Returns true if a
    /// directory is newly wanted.
    fn watch_glob_dirs(&mut self, source: usize) -> bool {
        let Spec::Glob { pattern, .. } = &self.specs[source].spec else {
            return false;
        };
        // Every level down to the files' directories: `pods/*` and `pods/*/vllm`, so that a
        // pod directory created empty is watched until its `vllm` directory appears.
        let levels: Vec<String> = Path::new(pattern)
            .ancestors()
            .skip(1)
            .filter_map(Path::to_str)
            .take_while(|level| level.contains(['*', '?', '[']))
            .map(str::to_string)
            .collect();
        let mut added = false;
        for level in levels {
            for dir in glob_paths(&level).into_iter().filter(|d| d.is_dir()) {
                let dir = std::path::absolute(&dir).unwrap_or(dir);
                added |= self.watches.want(&dir);
            }
        }
        added
    }

    /// Runs `f` with what a file check needs (the shared buffer, the sink, the settings) and
    /// the followed files, which it borrows apart from each other.
    fn with_files<R>(&mut self, f: impl FnOnce(&mut Ctx<'_>, &mut [FollowedFile]) -> R) -> R {
        let mut ctx = Ctx {
            buf: &mut self.buf,
            sink: &mut *self.sink,
            now: Instant::now(),
            max_line_bytes: self.options.max_line_bytes,
            poll_interval: self.options.poll_interval,
            rotated_grace: self.options.rotated_grace,
            known: &self.known,
        };
        f(&mut ctx, &mut self.files)
    }

    fn check_file(&mut self, i: usize, retry_now: bool) {
        self.with_files(|ctx, files| files[i].check(ctx, retry_now));
        if let Some(dir) = self.files[i].target.as_deref().and_then(Path::parent) {
            if self.watches.want(dir) {
                self.watches.refresh();
            }
        }
    }

    fn check_all(&mut self) {
        for i in 0..self.files.len() {
            self.check_file(i, false);
        }
    }

    /// The slow poll, or a rescan after lost events: trust nothing, look at everything.
    /// Checks every followed file; with `rescan_globs`, lists what the globs match first.
    fn full_check(&mut self, rescan_globs: bool) {
        self.watches.refresh();
        if rescan_globs {
            for source in 0..self.specs.len() {
                self.scan_glob(source, false);
            }
            self.expire_known_files();
        }
        self.check_all();
    }

    /// Forgets the known files not seen for `--log-expiry`, except those still open (a quiet
    /// file is not read, but it is there).
    fn expire_known_files(&mut self) {
        let now = Instant::now();
        for file in &self.files {
            for identity in file.open_identities() {
                self.known.touch(identity, now);
            }
        }
        self.known.expire(now);
    }

    /// Checks what the watches say changed.
    fn handle_touched(&mut self, touched: &Touched) {
        if touched.paths.is_empty() {
            return;
        }
        let watches_changed = touched
            .structural
            .iter()
            .any(|p| self.watches.affects_watches(p));
        if watches_changed && self.watches.refresh() {
            // A directory appeared (or came back): what is in it now was created before its
            // watch, so no event told us about it.
            self.full_check(true);
            return;
        }
        let mut fresh = Vec::new();
        for source in 0..self.specs.len() {
            let Spec::Glob { base, .. } = &self.specs[source].spec else {
                continue;
            };
            if touched.structural.iter().any(|p| p.starts_with(base)) {
                fresh.extend(self.scan_glob(source, false));
            }
        }
        if !fresh.is_empty() {
            // A match in a directory not watched yet (a wildcard in a directory part).
            self.watches.refresh();
        }
        for i in 0..self.files.len() {
            let file = &self.files[i];
            let named = touched.paths.contains(&file.path)
                || file
                    .target
                    .as_ref()
                    .is_some_and(|t| touched.paths.contains(t));
            // Writes to a rotated-away file show up under its new name, in the same directory.
            let rotated_touched = file.has_rotated()
                && touched
                    .paths
                    .iter()
                    .any(|p| p.parent().is_some_and(|dir| file.lives_in(dir)));
            if named || rotated_touched || fresh.contains(&i) {
                self.check_file(i, named);
            }
        }
    }

    /// Checks files that have more to read or a deadline that has come.
    fn check_due(&mut self) {
        let now = Instant::now();
        for i in 0..self.files.len() {
            let file = &self.files[i];
            if file.more || file.deadline().is_some_and(|d| d <= now) {
                self.check_file(i, false);
            }
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        self.files.iter().filter_map(FollowedFile::deadline).min()
    }

    /// A glob's file that is gone for good is forgotten (the glob finds it again if it comes
    /// back), so a glob over dated file names does not grow the list forever.
    fn forget_gone_glob_files(&mut self) {
        self.files.retain(|f| !(f.from_glob && f.is_gone()));
    }

    /// Tells the sink once every file that existed at start-up has been read to its end.
    fn report_caught_up(&mut self) {
        if !self.caught_up_sent && self.files.iter().all(|f| !f.initial || f.settled) {
            self.caught_up_sent = true;
            self.sink.caught_up();
        }
    }

    fn close_all(&mut self) {
        self.with_files(|ctx, files| files.iter_mut().for_each(|file| file.close(ctx)));
        if let Some(stdin) = &mut self.stdin {
            stdin.close(&mut *self.sink);
        }
    }
}

fn pattern_of(spec: &Spec) -> &str {
    match spec {
        Spec::Glob { pattern, .. } => pattern,
        _ => "",
    }
}

fn absolute(path: &Path) -> Result<PathBuf, SourceError> {
    std::path::absolute(path).map_err(|source| SourceError::Resolve {
        path: path.to_path_buf(),
        source,
    })
}

/// The directory a glob's matches live under: its path up to the first component with a
/// wildcard (`/var/log/vllm/*.log` -> `/var/log/vllm`). New matches show up as entries
/// created somewhere below it.
fn glob_base(pattern: &str) -> PathBuf {
    let mut base = PathBuf::new();
    let mut literal = true;
    for component in Path::new(pattern).components() {
        if component
            .as_os_str()
            .to_string_lossy()
            .contains(['*', '?', '['])
        {
            literal = false;
            break;
        }
        base.push(component);
    }
    if literal {
        // No wildcard: the pattern names one file; its directory is the one to watch.
        base.pop();
    }
    if base.as_os_str().is_empty() {
        base.push(".");
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_base_is_the_literal_prefix() {
        assert_eq!(glob_base("/var/log/vllm/*.log"), Path::new("/var/log/vllm"));
        assert_eq!(glob_base("/var/log/*/app.log"), Path::new("/var/log"));
        assert_eq!(glob_base("*.log"), Path::new("."));
        assert_eq!(glob_base("/var/log/app.log"), Path::new("/var/log"));
    }

    #[test]
    fn a_bad_glob_is_an_error_naming_it() {
        let error = Reader::new(vec![LogSpec::Glob("/x/[".into())], SourceOptions::default())
            .err()
            .expect("must fail");
        assert!(error.to_string().contains("/x/["), "{error}");
    }
}
