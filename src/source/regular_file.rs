//! A regular file as the reader meets it: opened without blocking on what is no regular file,
//! and told apart from other files by device and inode. The path-following code
//! ([`super::file`]) and the registry of files read ([`super::known`]) both stand on this.

use std::fs::{File, Metadata, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Which file a descriptor or a path refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Identity {
    pub dev: u64,
    pub ino: u64,
}

impl Identity {
    pub fn of(meta: &Metadata) -> Identity {
        Identity {
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }
}

/// Opens a regular file for reading, with its metadata; anything else is an error.
pub(crate) fn open_regular(path: &Path) -> std::io::Result<(File, Metadata)> {
    let file = OpenOptions::new()
        .read(true)
        // A FIFO put at the path would block `open` (and the whole reader) until a writer
        // comes; with O_NONBLOCK it opens at once and is refused below.
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if meta.is_file() {
        Ok((file, meta))
    } else {
        Err(std::io::Error::new(
            ErrorKind::InvalidInput,
            "not a regular file",
        ))
    }
}
