//! One agent per state file. Two agents given the same `--state-file` each save their own
//! counters over the other's, and after a restart one resumes from the other's positions: a
//! counter falls back (100 to 10), which Prometheus reads as a reset. The serving agent holds
//! an exclusive `flock` on `STATE.lock`, beside the state file, for its whole life; a second
//! one cannot take it and stops at start-up, naming the holder.
//!
//! The lock is on a file of its own, not on the state file: a save replaces the state file by
//! renaming a new file over it, and a lock belongs to the file (the inode) it was taken on, not
//! to the path. After the first save the path would name an unlocked file, and a second agent
//! would lock it. The lock file is never renamed nor removed: removing it on exit would let an
//! agent that opened it just before lock an inode no longer reachable by its path, while a third
//! creates and locks a new one. It holds the holder's pid, for the message; the lock, not the
//! pid, says whether an agent holds it, so a pid left by an agent killed with -9 misleads no one.
//!
//! `std::fs::File::try_lock` is `flock(LOCK_EX | LOCK_NB)` on Linux: no crate is needed, and
//! the crate forbids `unsafe` (which calling libc's `flock` would take). The lock goes with the
//! descriptor, so it is released when the process ends, however it ends.

use std::io::{Read, Seek, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The exclusive lock of one state file, held until dropped.
#[derive(Debug)]
pub struct StateFileLock {
    _file: std::fs::File,
}

/// Why the state file's lock was not taken. Either stops start-up (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum StateFileLockError {
    #[error("--state-file {}: another llmtail ({}) uses it: it holds the lock {}\n  fix: give each agent a state file of its own, e.g. --state-file {}", state.display(), holder.map_or("pid unknown".to_string(), |pid| format!("pid {pid}")), lock.display(), another_state_file(state).display())]
    Held {
        state: PathBuf,
        lock: PathBuf,
        holder: Option<u32>,
    },
    #[error("--state-file {}: cannot lock it with {}: {source}\n  fix: let llmtail's user create and write files in {}", state.display(), lock.display(), directory(state).display())]
    Io {
        state: PathBuf,
        lock: PathBuf,
        source: std::io::Error,
    },
}

impl StateFileLock {
    /// Where the lock of state file `state` is: `STATE.lock`, beside it.
    pub fn path_for(state: &Path) -> PathBuf {
        let mut name = state.file_name().unwrap_or_default().to_os_string();
        name.push(".lock");
        state.with_file_name(name)
    }

    /// Takes the lock of state file `state`, or says who holds it.
    pub fn acquire(state: &Path) -> Result<StateFileLock, StateFileLockError> {
        let lock = StateFileLock::path_for(state);
        let io = |source| StateFileLockError::Io {
            state: state.to_path_buf(),
            lock: lock.clone(),
            source,
        };
        let mut file = open_lock_file(&lock).map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(StateFileLockError::Held {
                    state: state.to_path_buf(),
                    holder: holder_pid(&mut file),
                    lock,
                })
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
        write_pid(&mut file).map_err(io)?;
        Ok(StateFileLock { _file: file })
    }
}

/// Opens (creating) the lock file for reading and writing. Not through a symlink: an agent
/// running as root would otherwise truncate the file a user pointed it at. Non-blocking, and
/// only a regular file: a FIFO planted there would block `open`.
fn open_lock_file(lock: &Path) -> std::io::Result<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(lock)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "it is not a regular file",
        ));
    }
    Ok(file)
}

/// Replaces the lock file's content with this process's pid.
fn write_pid(file: &mut std::fs::File) -> std::io::Result<()> {
    file.set_len(0)?;
    file.rewind()?;
    writeln!(file, "{}", std::process::id())
}

/// The pid the holder wrote, if it has yet (it writes it just after taking the lock).
fn holder_pid(file: &mut std::fs::File) -> Option<u32> {
    let mut text = String::new();
    file.take(32).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

fn directory(state: &Path) -> &Path {
    state
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// A state file path beside `state` for another agent to use: `state-2.json` for `state.json`.
fn another_state_file(state: &Path) -> PathBuf {
    let stem = state.file_stem().unwrap_or_default().to_string_lossy();
    let name = match state.extension() {
        Some(extension) => format!("{stem}-2.{}", extension.to_string_lossy()),
        None => format!("{stem}-2"),
    };
    state.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::{Checkpoint, VERSION};

    #[test]
    fn a_second_agent_on_the_same_state_file_is_refused_and_told_the_holders_pid() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state.json");
        let _held = StateFileLock::acquire(&state).unwrap();
        let lock = dir.path().join("state.json.lock");
        assert_eq!(
            std::fs::read_to_string(&lock).unwrap(),
            format!("{}\n", std::process::id())
        );

        let refused = StateFileLock::acquire(&state).unwrap_err().to_string();
        let expected = format!(
            "--state-file {}: another llmtail (pid {}) uses it: it holds the lock {}\n  fix: give each agent a state file of its own, e.g. --state-file {}",
            state.display(),
            std::process::id(),
            lock.display(),
            dir.path().join("state-2.json").display()
        );
        assert_eq!(refused, expected);
    }

    /// A lock on the state file itself would be lost at the first save, which renames a new
    /// file over it.
    #[test]
    fn the_lock_holds_across_the_state_files_atomic_replacement() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state.json");
        let _held = StateFileLock::acquire(&state).unwrap();
        let checkpoint = Checkpoint {
            version: VERSION,
            logs: Vec::new(),
            files: Vec::new(),
        };
        for _ in 0..2 {
            checkpoint.save(&state).unwrap();
            assert!(matches!(
                StateFileLock::acquire(&state),
                Err(StateFileLockError::Held { .. })
            ));
        }
    }

    #[test]
    fn the_lock_is_free_again_once_its_holder_is_gone_and_its_stale_pid_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state.json");
        let lock = dir.path().join("state.json.lock");
        std::fs::write(&lock, "4194304999\n").unwrap();
        drop(StateFileLock::acquire(&state).unwrap());
        let _again = StateFileLock::acquire(&state).unwrap();
        assert_eq!(
            std::fs::read_to_string(&lock).unwrap(),
            format!("{}\n", std::process::id())
        );
    }

    #[test]
    fn a_symlink_planted_at_the_lock_path_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("passwd");
        std::fs::write(&target, "root:x:0:0\n").unwrap();
        let state = dir.path().join("state.json");
        std::os::unix::fs::symlink(&target, dir.path().join("state.json.lock")).unwrap();
        let refused = StateFileLock::acquire(&state).unwrap_err().to_string();
        assert!(refused.contains("cannot lock it with"), "{refused}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "root:x:0:0\n");
    }
}
