//! Reading a file the agent is given whole: the config file, the web config, certificates,
//! keys, CA files, password and token files, the state file.
//!
//! Each is read at start-up and again on a reload, so a read that never ends would stop the
//! agent from starting, make a reload hang (and a shutdown wait for it), or fill the memory.
//! A FIFO without a writer blocks `open` itself, and `/dev/zero` never ends. So every such
//! file is opened with `O_NONBLOCK` (opening a FIFO returns at once), checked with `fstat` on
//! the descriptor opened (not the path, which may change in between) to be a regular file, and
//! read up to a bound. A symlink is followed: Kubernetes mounts secrets as symlinks.

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The most read of a config, PEM, password or token file: each is a few KB at most, so a
/// larger one is the wrong file.
pub const SMALL_FILE_LIMIT: u64 = 1024 * 1024;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// It could not be opened or read: missing, not permitted, not UTF-8.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A FIFO, a device, a directory or a socket: reading one may wait or never end.
    #[error("it is {0}, not a regular file")]
    NotRegular(&'static str),
    #[error("it is larger than {}, the most llmtail reads of such a file", size_text(*.0))]
    TooLarge(u64),
}

impl ReadError {
    /// What to do about it: for a file of the wrong kind or size, what to give instead;
    /// otherwise `otherwise`, the caller's fix for a file that cannot be read.
    pub fn fix(&self, otherwise: &str) -> String {
        match self {
            ReadError::Io(_) => otherwise.to_string(),
            ReadError::NotRegular(_) => {
                "give the path of a regular file (a FIFO or a device is never read: it could wait or never end)".into()
            }
            ReadError::TooLarge(_) => "check the path: this is not the file meant".into(),
        }
    }

    /// The I/O error's kind, for a caller to whom a missing file is no error (the state file).
    pub fn kind(&self) -> Option<std::io::ErrorKind> {
        match self {
            ReadError::Io(e) => Some(e.kind()),
            _ => None,
        }
    }
}

/// The bytes of the regular file at `path`, if it holds at most `limit` of them.
pub fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(what_it_is(&meta.file_type())));
    }
    if meta.len() > limit {
        return Err(ReadError::TooLarge(limit));
    }
    // The file may grow after fstat: the bound holds for what is read, not what was stat'ed.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge(limit));
    }
    Ok(bytes)
}

/// [`read_regular`], as UTF-8 text.
pub fn read_regular_text(path: &Path, limit: u64) -> Result<String, ReadError> {
    let bytes = read_regular(path, limit)?;
    String::from_utf8(bytes).map_err(|_| {
        ReadError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "it is not UTF-8 text",
        ))
    })
}

fn what_it_is(kind: &std::fs::FileType) -> &'static str {
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "something other than a file"
    }
}

/// `1 MiB`, `64 MiB`, `512 KiB`: a bound as a user reads it.
fn size_text(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A FIFO in a new directory, or `None` where `mkfifo` is missing.
    fn fifo(dir: &tempfile::TempDir) -> Option<std::path::PathBuf> {
        let path = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&path).status();
        made.is_ok_and(|s| s.success()).then_some(path)
    }

    #[test]
    fn a_fifo_without_a_writer_is_refused_at_once_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let Some(fifo) = fifo(&dir) else { return };
        let started = Instant::now();
        let error = read_regular(&fifo, SMALL_FILE_LIMIT).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(error.to_string(), "it is a FIFO, not a regular file");
        assert!(error.fix("unused").contains("regular file"));
    }

    #[test]
    fn dev_zero_is_refused_as_a_device_not_read_without_end() {
        let error = read_regular(Path::new("/dev/zero"), SMALL_FILE_LIMIT).unwrap_err();
        assert_eq!(
            error.to_string(),
            "it is a character device, not a regular file"
        );
    }

    #[test]
    fn a_directory_is_refused_as_one() {
        let dir = tempfile::tempdir().unwrap();
        let error = read_regular(dir.path(), SMALL_FILE_LIMIT).unwrap_err();
        assert_eq!(error.to_string(), "it is a directory, not a regular file");
    }

    #[test]
    fn a_file_over_the_bound_is_refused_naming_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.pem");
        std::fs::write(&path, vec![b'a'; SMALL_FILE_LIMIT as usize + 1]).unwrap();
        let error = read_regular(&path, SMALL_FILE_LIMIT).unwrap_err();
        assert_eq!(
            error.to_string(),
            "it is larger than 1 MiB, the most llmtail reads of such a file"
        );
        std::fs::write(&path, vec![b'a'; SMALL_FILE_LIMIT as usize]).unwrap();
        assert_eq!(
            read_regular(&path, SMALL_FILE_LIMIT).unwrap().len() as u64,
            SMALL_FILE_LIMIT
        );
    }

    #[test]
    fn a_missing_file_keeps_its_io_error_and_the_callers_fix() {
        let error = read_regular(Path::new("/nonexistent/llmtail.toml"), 10).unwrap_err();
        assert_eq!(error.kind(), Some(std::io::ErrorKind::NotFound));
        assert_eq!(error.fix("pass an existing file"), "pass an existing file");
    }

    #[test]
    fn a_symlink_to_a_regular_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("..data_cert.pem");
        std::fs::write(&target, "PEM").unwrap();
        let link = dir.path().join("cert.pem");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert_eq!(read_regular_text(&link, SMALL_FILE_LIMIT).unwrap(), "PEM");
    }
}
