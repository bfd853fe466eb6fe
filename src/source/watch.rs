//! Wake-ups: directory watches through `notify`, folded into a small set of touched paths.
//!
//! Events are hints, never truth: the reader stats and reads to find out what happened, and
//! a slow poll backs all of this up. So this module only has to say "look at these paths
//! soon". It watches directories, not files (one watch per directory, which survives the
//! files in it being renamed, deleted and created), and a directory that does not exist yet
//! is stood in for by its nearest existing ancestor until it appears.
//!
//! The notify callback runs on notify's own thread. Instead of queueing every event (a burst
//! of writes would queue one event per write), it adds the paths to a shared set and sends a
//! single wake-up while the reader has not collected them yet; past a bound the set is
//! replaced by "rescan everything". Memory stays bounded however far the reader falls behind.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, PoisonError};

use notify::event::{EventKind, ModifyKind};
use notify::{RecursiveMode, Watcher};

use super::regular_file::Identity;

/// Past this many distinct touched paths the reader is told to check everything instead.
const MAX_PENDING_PATHS: usize = 4096;

/// What the watches saw since the reader last looked.
#[derive(Debug, Default)]
pub(crate) struct Touched {
    /// Every path an event named (writes, attribute changes, creation, removal, renames).
    pub paths: HashSet<PathBuf>,
    /// Paths that were created, removed or renamed: directories may have come or gone and
    /// globs may match something new.
    pub structural: HashSet<PathBuf>,
    /// Events were lost (inotify queue overflow, a notify error): check everything.
    pub rescan: bool,
}

#[derive(Default)]
struct Shared {
    touched: Touched,
    /// A wake-up was sent and not collected yet: no need to send another.
    wake_sent: bool,
}

/// The directory watches of one reader.
pub(crate) struct DirWatches {
    /// None when notify could not start (e.g. out of inotify instances): the poll does it all.
    watcher: Option<notify::RecommendedWatcher>,
    shared: Arc<Mutex<Shared>>,
    /// Directories whose entries we care about.
    wanted: BTreeSet<PathBuf>,
    /// Directories actually watched, with the identity they had when the watch was added
    /// (a directory deleted and recreated under the same name needs a new watch).
    installed: HashMap<PathBuf, Identity>,
}

impl DirWatches {
    /// Starts notify; each batch of events sends `()` on `wake` (once until collected).
    pub fn new(wake: Sender<()>) -> DirWatches {
        let shared = Arc::new(Mutex::new(Shared::default()));
        let handler_shared = Arc::clone(&shared);
        let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let mut shared = handler_shared
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if !record(&mut shared.touched, event) {
                return;
            }
            if !shared.wake_sent {
                shared.wake_sent = true;
                // The reader is gone if this fails; nothing to do.
                let _ = wake.send(());
            }
        });
        let watcher = match watcher {
            Ok(watcher) => Some(watcher),
            Err(error) => {
                tracing::warn!(%error, "cannot watch the file system; falling back to polling only");
                None
            }
        };
        DirWatches {
            watcher,
            shared,
            wanted: BTreeSet::new(),
            installed: HashMap::new(),
        }
    }

    /// No watches at all (one-shot reading).
    pub fn disabled() -> DirWatches {
        DirWatches {
            watcher: None,
            shared: Arc::new(Mutex::new(Shared::default())),
            wanted: BTreeSet::new(),
            installed: HashMap::new(),
        }
    }

    /// Asks for the entries of `dir` to be watched (from the next [`DirWatches::refresh`]).
    /// Returns true if it was not wanted yet.
    pub fn want(&mut self, dir: &Path) -> bool {
        if self.wanted.contains(dir) {
            return false;
        }
        self.wanted.insert(dir.to_path_buf())
    }

    /// True if a structural change at `path` may change what we should watch: `path` is a
    /// wanted directory or one of its ancestors.
    pub fn affects_watches(&self, path: &Path) -> bool {
        self.wanted.iter().any(|dir| dir.starts_with(path))
    }

    /// Collects what happened since the last call.
    pub fn take_touched(&self) -> Touched {
        let mut shared = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        shared.wake_sent = false;
        std::mem::take(&mut shared.touched)
    }

    /// Brings the watches in line with the file system: each wanted directory is watched,
    /// or its nearest existing ancestor if it does not exist yet. Returns true if a watch was
    /// added: files there may have appeared before the watch did, so the caller checks them.
    pub fn refresh(&mut self) -> bool {
        let Some(watcher) = self.watcher.as_mut() else {
            return false;
        };
        let mut targets: HashMap<PathBuf, Identity> = HashMap::new();
        for dir in &self.wanted {
            if let Some((target, identity)) = nearest_existing_dir(dir) {
                targets.insert(target, identity);
            }
        }
        let stale: Vec<PathBuf> = self
            .installed
            .iter()
            .filter(|(dir, identity)| targets.get(*dir) != Some(*identity))
            .map(|(dir, _)| dir.clone())
            .collect();
        for dir in stale {
            // Fails when the directory is gone (its watch went with it): fine.
            let _ = watcher.unwatch(&dir);
            self.installed.remove(&dir);
        }
        let mut added = false;
        for (dir, identity) in targets {
            if self.installed.contains_key(&dir) {
                continue;
            }
            match watcher.watch(&dir, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    tracing::debug!(dir = %dir.display(), "watching");
                    self.installed.insert(dir, identity);
                    added = true;
                }
                Err(error) => {
                    // Not fatal: the slow poll still sees everything, only later.
                    tracing::warn!(dir = %dir.display(), %error, "cannot watch directory; polling it");
                }
            }
        }
        added
    }
}

/// Adds one notify event to `touched`. Returns false if it is not worth a wake-up.
fn record(touched: &mut Touched, event: notify::Result<notify::Event>) -> bool {
    let event = match event {
        Ok(event) => event,
        Err(error) => {
            tracing::debug!(%error, "watch error; rescanning");
            touched.rescan = true;
            return true;
        }
    };
    if event.need_rescan() {
        touched.rescan = true;
        return true;
    }
    let structural = match event.kind {
        // Our own opens and closes (and other readers') say nothing about the content;
        // waking up on them would make every read wake us up again.
        EventKind::Access(_) => return false,
        EventKind::Modify(ModifyKind::Data(_)) | EventKind::Modify(ModifyKind::Metadata(_)) => {
            false
        }
        _ => true,
    };
    if touched.rescan {
        return true;
    }
    for path in event.paths {
        if structural {
            touched.structural.insert(path.clone());
        }
        touched.paths.insert(path);
    }
    if touched.paths.len() > MAX_PENDING_PATHS {
        *touched = Touched {
            rescan: true,
            ..Touched::default()
        };
    }
    true
}

/// `dir` or its nearest ancestor that exists and is a directory, with its identity.
fn nearest_existing_dir(dir: &Path) -> Option<(PathBuf, Identity)> {
    dir.ancestors().find_map(|candidate| {
        let meta = std::fs::metadata(candidate).ok()?;
        meta.is_dir()
            .then(|| (candidate.to_path_buf(), Identity::of(&meta)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{AccessKind, CreateKind, DataChange, Flag};

    fn event(kind: EventKind, path: &str) -> notify::Result<notify::Event> {
        Ok(notify::Event::new(kind).add_path(PathBuf::from(path)))
    }

    #[test]
    fn access_events_do_not_wake_the_reader() {
        let mut touched = Touched::default();
        assert!(!record(
            &mut touched,
            event(EventKind::Access(AccessKind::Any), "/l/a.log")
        ));
        assert!(touched.paths.is_empty());
    }

    #[test]
    fn writes_touch_a_path_creations_are_structural() {
        let mut touched = Touched::default();
        record(
            &mut touched,
            event(
                EventKind::Modify(ModifyKind::Data(DataChange::Any)),
                "/l/a.log",
            ),
        );
        record(
            &mut touched,
            event(EventKind::Create(CreateKind::File), "/l/b.log"),
        );
        assert_eq!(touched.paths.len(), 2);
        assert!(touched.structural.contains(Path::new("/l/b.log")));
        assert!(!touched.structural.contains(Path::new("/l/a.log")));
    }

    #[test]
    fn overflow_and_too_many_paths_become_a_rescan() {
        let mut touched = Touched::default();
        record(
            &mut touched,
            Ok(notify::Event::new(EventKind::Other).set_flag(Flag::Rescan)),
        );
        assert!(touched.rescan);

        let mut touched = Touched::default();
        for i in 0..=MAX_PENDING_PATHS {
            record(
                &mut touched,
                event(EventKind::Create(CreateKind::File), &format!("/l/{i}")),
            );
        }
        assert!(touched.rescan);
        assert!(touched.paths.is_empty(), "memory is given back");
    }

    #[test]
    fn a_missing_directory_is_stood_in_for_by_its_nearest_ancestor() {
        let root = tempfile::tempdir().unwrap();
        let (found, _) = nearest_existing_dir(&root.path().join("a/b/c")).unwrap();
        assert_eq!(found, root.path());
    }
}
