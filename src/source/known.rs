//! The files read so far, by identity: how far each one was read, and under which `log`
//! label. This is what keeps a file from being read twice whatever its name.
//!
//! A file changes names without changing content: dateext rotation turns `vllm.log` into
//! `vllm-20261122.log` (a new match of `*.log`), a symlink is switched to another file and
//! back, a glob's file is renamed away and back. Each time, the file at the new name is one
//! already read. Every read records the file's identity (device, inode, birth, and a hash of
//! its first bytes, so that a new file that reuses the inode number is not taken for it) with
//! the offset after the last line handed on. Opening a known file goes on from that offset;
//! a glob match that is a known file read under another label is not followed at all.
//!
//! An entry is kept while the file can be seen (followed, or matched by a glob) and for
//! `--log-expiry` after that, and it is saved in the state file, so a restart knows every file
//! it read, not only the ones it was reading. Memory is bounded by how many files come and go
//! within the expiry.

use std::collections::HashMap;
use std::fs::{File, Metadata};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::regular_file::{open_regular, Identity};
use super::{FileId, LogId};

/// One file read, as the state file keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnownFile {
    /// The `log` label it was read under.
    pub label: String,
    pub file: FileId,
    /// The byte after the last line handed on.
    pub offset: u64,
}

/// One entry of the registry.
#[derive(Debug)]
struct Entry {
    label: Arc<str>,
    file: FileId,
    offset: u64,
    /// When a read, an open or a glob scan last saw the file.
    seen: Instant,
    /// A path other than the label's where the file was found and its first bytes checked:
    /// later scans skip it without opening it again.
    found_at: Option<PathBuf>,
}

/// The registry, shared by the reader (which records and asks) and the pipeline (which saves
/// it with the state). Each call locks it briefly; none holds the lock while calling the sink.
#[derive(Debug, Clone)]
pub struct KnownFiles(Arc<Mutex<Registry>>);

#[derive(Debug)]
struct Registry {
    files: HashMap<Identity, Entry>,
    /// Which log has each open file open: one file is read by one log, whatever names it
    /// (a symlink and its target, hard links, a path a glob also matches).
    holders: HashMap<Identity, LogId>,
    expiry: Duration,
}

impl KnownFiles {
    /// A registry that forgets a file `expiry` after it was last seen, starting with the files
    /// a state file named.
    pub fn new(expiry: Duration, saved: &[KnownFile]) -> KnownFiles {
        let now = Instant::now();
        let files = saved
            .iter()
            .map(|known| {
                let entry = Entry {
                    label: Arc::from(known.label.as_str()),
                    file: known.file,
                    offset: known.offset,
                    seen: now,
                    found_at: None,
                };
                (identity_of(&known.file), entry)
            })
            .collect();
        KnownFiles(Arc::new(Mutex::new(Registry {
            files,
            holders: HashMap::new(),
            expiry,
        })))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records that `file` was read up to `offset` under `label`.
    pub(crate) fn read(&self, label: &Arc<str>, file: FileId, offset: u64, now: Instant) {
        let mut registry = self.lock();
        let entry = registry.files.entry(identity_of(&file));
        let entry = entry.or_insert_with(|| Entry {
            label: Arc::clone(label),
            file,
            offset,
            seen: now,
            found_at: None,
        });
        if entry.file != file || *entry.label != **label {
            // Its first bytes grew (or changed: a truncation), or another path reads it now.
            entry.found_at = None;
            entry.label = Arc::clone(label);
        }
        entry.file = file;
        entry.offset = offset;
        entry.seen = now;
    }

    /// How far the open `file` was read, if it is a known file: same inode and birth, and it
    /// still starts with the bytes it started with.
    pub(crate) fn offset_of(&self, file: &File, meta: &Metadata, now: Instant) -> Option<u64> {
        let mut registry = self.lock();
        let entry = registry.files.get_mut(&Identity::of(meta))?;
        if !entry.file.matches(file, meta) {
            return None;
        }
        entry.seen = now;
        Some(entry.offset)
    }

    /// True if the file a glob matched at `path` was read under another label than `label`:
    /// a rotated copy under its new name, which must not be read again.
    pub(crate) fn read_elsewhere(
        &self,
        label: &str,
        path: &Path,
        meta: &Metadata,
        now: Instant,
    ) -> bool {
        let mut registry = self.lock();
        let Some(entry) = registry.files.get_mut(&Identity::of(meta)) else {
            return false;
        };
        if *entry.label == *label || !entry.file.same_inode(meta) {
            return false;
        }
        if entry.found_at.as_deref() != Some(path) {
            // Same inode number: it may be a new file that reused it. Its first bytes tell.
            let same =
                open_regular(path).is_ok_and(|(file, meta)| entry.file.matches(&file, &meta));
            if !same {
                return false;
            }
            entry.found_at = Some(path.to_path_buf());
        }
        entry.seen = now;
        true
    }

    /// Claims an open file for `log`; false if another log has it open (the same file under
    /// another name), which then reads it alone.
    pub(crate) fn hold(&self, identity: Identity, log: LogId) -> bool {
        *self.lock().holders.entry(identity).or_insert(log) == log
    }

    /// `log` closed the file.
    pub(crate) fn release(&self, identity: Identity, log: LogId) {
        let mut registry = self.lock();
        if registry.holders.get(&identity) == Some(&log) {
            registry.holders.remove(&identity);
        }
    }

    /// Marks a file seen (it is open).
    pub(crate) fn touch(&self, identity: Identity, now: Instant) {
        if let Some(entry) = self.lock().files.get_mut(&identity) {
            entry.seen = now;
        }
    }

    /// Forgets the files not seen for the expiry.
    pub(crate) fn expire(&self, now: Instant) {
        let mut registry = self.lock();
        let expiry = registry.expiry;
        registry
            .files
            .retain(|_, entry| now.saturating_duration_since(entry.seen) < expiry);
    }

    /// Every known file, for the state file.
    pub fn saved(&self) -> Vec<KnownFile> {
        let registry = self.lock();
        let mut saved: Vec<KnownFile> = registry
            .files
            .values()
            .map(|entry| KnownFile {
                label: entry.label.to_string(),
                file: entry.file,
                offset: entry.offset,
            })
            .collect();
        // A stable order: the state file does not change when nothing did.
        saved.sort_by_key(|known| (known.file.dev, known.file.ino));
        saved
    }

    /// How many files are known (for tests and the landing page).
    pub fn len(&self) -> usize {
        self.lock().files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn identity_of(file: &FileId) -> Identity {
    Identity {
        dev: file.dev,
        ino: file.ino,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with(dir: &Path, name: &str, text: &str) -> (PathBuf, File, Metadata) {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let (file, meta) = open_regular(&path).unwrap();
        (path, file, meta)
    }

    #[test]
    fn a_known_file_is_found_under_another_name_and_its_offset_kept() {
        let dir = tempfile::tempdir().unwrap();
        let (path, file, meta) = file_with(dir.path(), "app.log", "one\ntwo\n");
        let known = KnownFiles::new(Duration::from_secs(600), &[]);
        let now = Instant::now();
        known.read(
            &Arc::from("app.log"),
            FileId::with_head(&meta, b"one\ntwo\n"),
            8,
            now,
        );
        let rotated = dir.path().join("app-20261122.log");
        std::fs::rename(&path, &rotated).unwrap();

        assert!(known.read_elsewhere("app-20261122.log", &rotated, &meta, now));
        assert!(
            !known.read_elsewhere("app.log", &rotated, &meta, now),
            "its own label"
        );
        assert_eq!(known.offset_of(&file, &meta, now), Some(8));
    }

    #[test]
    fn a_file_that_reuses_an_inode_is_not_taken_for_the_known_one() {
        let dir = tempfile::tempdir().unwrap();
        let (path, file, meta) = file_with(dir.path(), "app.log", "a new file\n");
        let known = KnownFiles::new(Duration::from_secs(600), &[]);
        let now = Instant::now();
        // Same device and inode, other first bytes: what a deleted file's inode number,
        // reused by a new file, looks like.
        known.read(
            &Arc::from("old.log"),
            FileId::with_head(&meta, b"old content\n"),
            12,
            now,
        );

        assert!(!known.read_elsewhere("app.log", &path, &meta, now));
        assert_eq!(known.offset_of(&file, &meta, now), None);
    }

    #[test]
    fn a_file_is_forgotten_an_expiry_after_it_was_last_seen() {
        let dir = tempfile::tempdir().unwrap();
        let (_, _, meta) = file_with(dir.path(), "app.log", "x\n");
        let known = KnownFiles::new(Duration::from_secs(600), &[]);
        let then = Instant::now();
        known.read(
            &Arc::from("app.log"),
            FileId::with_head(&meta, b"x\n"),
            2,
            then,
        );
        known.expire(then + Duration::from_secs(599));
        assert_eq!(known.len(), 1);
        known.touch(Identity::of(&meta), then + Duration::from_secs(599));
        known.expire(then + Duration::from_secs(1198));
        assert_eq!(known.len(), 1, "seen again (open) at 599 s");
        known.expire(then + Duration::from_secs(1199));
        assert!(known.is_empty());
    }

    #[test]
    fn the_saved_list_restores_the_registry() {
        let dir = tempfile::tempdir().unwrap();
        let (_, file, meta) = file_with(dir.path(), "app.log", "x\n");
        let known = KnownFiles::new(Duration::from_secs(600), &[]);
        known.read(
            &Arc::from("app.log"),
            FileId::with_head(&meta, b"x\n"),
            2,
            Instant::now(),
        );
        let restored = KnownFiles::new(Duration::from_secs(600), &known.saved());
        assert_eq!(restored.saved(), known.saved());
        assert_eq!(restored.offset_of(&file, &meta, Instant::now()), Some(2));
    }
}
