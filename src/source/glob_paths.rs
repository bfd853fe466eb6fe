//! What a `--log` glob matches, with file names taken as the bytes they are.
//!
//! The `glob` crate matches names as `&str` and skips every name that is not UTF-8 without a
//! word: a log named in Latin-1 (`caf\xe9.log`) under `/var/log/vllm/*.log`, or a pod
//! directory so named, was never followed. Here each component of the pattern (still parsed by
//! `glob::Pattern`) is matched against the lossy form of a name, where an invalid byte reads as
//! U+FFFD (which `*` and `?` match), and the real name is what is followed.
//!
//! Such a file's label spells each invalid byte as `\xNN` rather than U+FFFD: `caf\xe9.log`
//! and `caf\xe8.log` are one name once decoded lossily, and under one label the second would
//! take over the first's series. A UTF-8 name is its own label, as before.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use glob::{MatchOptions, Pattern};

/// The paths `pattern` matches now, in the `glob` crate's order and spelling (relative when
/// the pattern is), directories included. An unreadable directory is skipped: the next scan
/// tries it again. A pattern that does not parse matches nothing (patterns are checked when
/// the settings are read).
pub fn glob_paths(pattern: &str) -> Vec<PathBuf> {
    let (start, rest) = match pattern.strip_prefix('/') {
        Some(rest) => (PathBuf::from("/"), rest),
        None => (PathBuf::from("."), pattern),
    };
    let Ok(parts) = rest
        .split('/')
        .filter(|part| !part.is_empty())
        .map(Part::new)
        .collect::<Result<Vec<_>, _>>()
    else {
        return Vec::new();
    };
    let mut found = Vec::new();
    walk(&start, &parts, &mut found);
    // `dir/*/` names directories only, as with the `glob` crate.
    if pattern.ends_with('/') {
        found.retain(|path| path.is_dir());
    }
    found
}

/// The `log` label of a path a glob matched: the path itself when it is UTF-8, else the path
/// with each invalid byte written `\xNN`.
pub fn path_label(path: &Path) -> String {
    if let Some(text) = path.to_str() {
        return text.to_string();
    }
    let mut label = String::new();
    for chunk in path.as_os_str().as_bytes().utf8_chunks() {
        label.push_str(chunk.valid());
        for byte in chunk.invalid() {
            label.push_str(&format!("\\x{byte:02x}"));
        }
    }
    label
}

/// One component of a pattern.
enum Part {
    /// No wildcard: the name itself (no directory listing needed).
    Literal(String),
    /// `**`: any number of directories, none included.
    AnyDirs,
    Wildcard(Pattern),
}

impl Part {
    fn new(text: &str) -> Result<Part, glob::PatternError> {
        Ok(if text == "**" {
            Part::AnyDirs
        } else if text.contains(['*', '?', '[']) {
            Part::Wildcard(Pattern::new(text)?)
        } else {
            Part::Literal(text.to_string())
        })
    }
}

/// Adds to `found` what `parts` match below `dir`.
fn walk(dir: &Path, parts: &[Part], found: &mut Vec<PathBuf>) {
    let Some((part, rest)) = parts.split_first() else {
        found.push(dir.to_path_buf());
        return;
    };
    match part {
        Part::Literal(name) => {
            let path = child(dir, Path::new(name));
            if std::fs::symlink_metadata(&path).is_ok() {
                walk(&path, rest, found);
            }
        }
        Part::AnyDirs => {
            walk(dir, rest, found);
            // Real directories only: a symlink to a parent would be walked forever.
            for (path, _) in entries(dir).filter(|(_, is_dir)| *is_dir) {
                walk(&path, parts, found);
            }
        }
        Part::Wildcard(pattern) => {
            let options = MatchOptions::new();
            for (path, _) in entries(dir) {
                let name = path.file_name().map(|n| n.to_string_lossy());
                if name.is_some_and(|name| pattern.matches_with(&name, options)) {
                    walk(&path, rest, found);
                }
            }
        }
    }
}

/// The entries of `dir` sorted by name, each with whether it is a real directory (not a
/// symlink to one); none when `dir` cannot be listed.
fn entries(dir: &Path) -> impl Iterator<Item = (PathBuf, bool)> {
    let mut entries: Vec<(PathBuf, bool)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| {
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            (child(dir, Path::new(&entry.file_name())), is_dir)
        })
        .collect();
    entries.sort();
    entries.into_iter()
}

/// `dir/name`, where a relative pattern's matches are spelled without `./` (`a.log`, not
/// `./a.log`), as the `glob` crate spells them: labels stay what they were.
fn child(dir: &Path, name: &Path) -> PathBuf {
    if dir == Path::new(".") {
        name.to_path_buf()
    } else {
        dir.join(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, b"").unwrap();
    }

    #[test]
    fn matches_what_the_glob_crate_matches_for_utf8_names() {
        let root = tempfile::tempdir().unwrap();
        for name in [
            "a.log",
            "b.log",
            "notes.txt",
            ".hidden.log",
            "p/vllm/0.log",
            "q/x/1.log",
        ] {
            touch(&root.path().join(name));
        }
        for pattern in [
            "/*.log",
            "/*/vllm/*.log",
            "/**/*.log",
            "/[ab].log",
            "/?.log",
            "/*/",
            "/p/vllm/0.log",
        ] {
            let pattern = format!("{}{pattern}", root.path().display());
            let expected: Vec<PathBuf> = glob::glob(&pattern).unwrap().flatten().collect();
            assert_eq!(glob_paths(&pattern), expected, "{pattern}");
        }
    }

    #[test]
    fn a_wildcard_matches_an_invalid_byte_as_one_character() {
        let root = tempfile::tempdir().unwrap();
        let name = OsStr::from_bytes(b"caf\xe9.log");
        touch(&root.path().join(name));
        for pattern in ["*.log", "caf?.log", "caf*"] {
            let pattern = format!("{}/{pattern}", root.path().display());
            assert_eq!(
                glob_paths(&pattern),
                vec![root.path().join(name)],
                "{pattern}"
            );
        }
    }

    #[test]
    fn a_label_is_the_path_with_invalid_bytes_escaped() {
        assert_eq!(path_label(Path::new("/var/log/é.log")), "/var/log/é.log");
        let path = Path::new(OsStr::from_bytes(b"/var/log/caf\xe9\xff.log"));
        assert_eq!(path_label(path), "/var/log/caf\\xe9\\xff.log");
    }

    #[test]
    fn a_relative_pattern_matches_relative_paths_without_a_leading_dot() {
        // The current directory is the crate's; its Cargo.toml is there.
        assert_eq!(glob_paths("Cargo.tom?"), vec![PathBuf::from("Cargo.toml")]);
        assert_eq!(glob_paths("src/lib.r?"), vec![PathBuf::from("src/lib.rs")]);
    }
}
