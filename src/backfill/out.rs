//! Where `llmtail replay` writes its history (`--out FILE`). The history is written to a
//! temporary file beside FILE and renamed over it once complete: an interrupted or failed
//! replay leaves no half history (promtool would refuse it, or worse, an older complete one
//! would be lost). FILE must not be one of the logs read (the arguments refuse it): the
//! history would replace it.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::clock::Clock;

use super::args::Window;
use super::Summary;

/// Replays into `path`. A `path` that is there and is not a regular file (a device such as
/// `/dev/null`, a FIFO, a symlink) is written as it is: renamed over, it would be replaced by
/// a file. Anything else gets the history whole or not at all ([`replay_beside`]).
pub fn replay_to_file(
    settings: &crate::config::Settings,
    window: Window,
    clock: Clock,
    path: &str,
    progress: bool,
) -> anyhow::Result<Summary> {
    let special = std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_file());
    if !special {
        return replay_beside(settings, window, clock, path, progress);
    }
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| cannot_write(path, e))?;
    let mut out = std::io::BufWriter::new(file);
    super::replay(settings, window, clock, &mut out, progress)
}

/// Replays into a temporary file in `path`'s directory, renamed over `path` once complete
/// and removed if the replay fails (or panics: the handle removes it when dropped).
///
/// The temporary file is made by the `tempfile` crate, with our own open: it picks a random
/// name and retries on a clash, and removes the file on drop; the open adds `O_NOFOLLOW` to
/// `O_EXCL`, so a file or symlink planted at the name (by a user who can write to the
/// directory, waiting for a replay run as root) makes the open fail rather than write
/// through it; a fixed name would let them redirect the history into a file of their choice.
/// Mode 0666 before the umask (tempfile's own is 0600), as a history written directly would
/// be: promtool may run as another user.
fn replay_beside(
    settings: &crate::config::Settings,
    window: Window,
    clock: Clock,
    path: &str,
    progress: bool,
) -> anyhow::Result<Summary> {
    let target = Path::new(path);
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let temporary = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".partial")
        .make_in(dir, |candidate| {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .custom_flags(libc::O_NOFOLLOW)
                .mode(0o666)
                .open(candidate)
        })
        .map_err(|e| cannot_write(path, e))?;
    let mut out = std::io::BufWriter::new(temporary.as_file());
    let summary = super::replay(settings, window, clock, &mut out, progress)?;
    out.flush().map_err(|e| cannot_write(path, e))?;
    drop(out);
    temporary
        .as_file()
        .sync_all()
        .map_err(|e| cannot_write(path, e))?;
    temporary
        .persist(path)
        .map_err(|e| cannot_write(path, e.error))?;
    Ok(summary)
}

fn cannot_write(path: &str, e: std::io::Error) -> anyhow::Error {
    anyhow::anyhow!(
        "cannot write --out {path}: {e}\n  fix: check the directory exists and may be written"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn a_failed_replay_leaves_the_older_history_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("history.om");
        std::fs::write(&out, "older history\n").unwrap();
        let missing = dir.path().join("missing.log");
        let argv = ["llmtail", "replay", "--log", missing.to_str().unwrap()];
        let Some(crate::cli::Command::Replay(args)) = crate::cli::Cli::parse_from(argv).command
        else {
            panic!("not a replay");
        };
        let settings = args.settings().unwrap();
        let window = args.window(&settings.log_timezone).unwrap();

        let replayed = replay_to_file(
            &settings,
            window,
            Clock::fixed(0.0),
            out.to_str().unwrap(),
            false,
        );
        assert!(replayed.is_err(), "a missing log fails the replay");
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(left, ["history.om"], "the temporary file is removed");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "older history\n");
    }
}
