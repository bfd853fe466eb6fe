//! The state file (`--state-file`): what a restart needs so that it neither counts a line
//! twice nor resets a counter, even when the log was rotated while the agent was down.
//!
//! Without it, `--from start` rebuilds the state from what the file holds, which is exact as
//! long as the file was not rotated. With it, each log's counters and gauges are saved together
//! with the position they correspond to (device, inode, byte offset of the last complete line),
//! and a restart resumes from there: in the same file, or in the rotated file found by its inode
//! before the new one.
//!
//! The file is JSON, versioned, and replaced atomically (write a temporary file, fsync, rename,
//! fsync the directory), so a crash leaves either the old or the new checkpoint, never half.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::bounded_read::{read_regular_text, ReadError};
use crate::engines::parts::float;
use crate::source::{FileId, KnownFile, Resume};
use crate::state::{GrammarCount, LogIo, LogState};

/// The version this build writes. Bumped when the saved form changes: the new form gets a
/// [`Saved`] variant and the old ones stay readable (`fixtures/state/v1.json` proves version 1
/// still is); a file of a version this build does not know is ignored.
pub const VERSION: u32 = 1;

/// The most read of a state file. It grows with the logs and files followed (a few KB per log,
/// a hundred bytes per file), so it may pass the 1 MiB of a config file; past this it is no
/// state file this agent wrote, and reading it whole could take the memory.
const STATE_FILE_LIMIT: u64 = 256 * 1024 * 1024;

/// Every form of the state file this build reads, by its `version` field (Vector's
/// checkpointer keeps its `State::V1` the same way). A renamed or retyped field is a new
/// version with a conversion here, never an edit of a form already on disk: with
/// `serde(default)`, an old file would otherwise read its renamed counters as zero.
#[derive(Debug)]
enum Saved {
    V1(Checkpoint),
}

impl Saved {
    /// Parses `text` in the form of `version`; `None` for a version this build does not know.
    fn parse(version: u32, text: &str) -> Option<serde_json::Result<Saved>> {
        match version {
            1 => Some(serde_json::from_str(text).map(Saved::V1)),
            _ => None,
        }
    }

    /// The state in the form this build keeps it.
    fn into_current(self) -> Checkpoint {
        match self {
            Saved::V1(checkpoint) => checkpoint,
        }
    }
}

/// Where reading stopped in one file: the byte after the last line handed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilePosition {
    pub file: FileId,
    pub offset: u64,
}

/// One grammar's counts, by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedGrammarCount {
    pub grammar: String,
    pub lines: u64,
    #[serde(with = "float")]
    pub last_timestamp: f64,
}

/// One followed log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedLog {
    /// The `log` label: how a log is found again.
    pub label: String,
    /// `None` for stdin or a file never opened.
    pub position: Option<FilePosition>,
    pub io: LogIo,
    pub parsed: Vec<SavedGrammarCount>,
    /// Lines rejected, by grammar (added within version 1: older files have none).
    #[serde(default)]
    pub rejected: Vec<SavedRejections>,
    /// Records refused by a cap (added within version 1).
    #[serde(default)]
    pub series_refused: u64,
    /// Records that repeated a recent one, by grammar (added within version 1).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeated: Vec<SavedRejections>,
    /// Records dated before an earlier one (added within version 1).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub out_of_order: u64,
    /// Each engine's state as one value, under the engine's name (`vllm`, `trtllm`, ...: the
    /// two fields of the first version 1 files), in the engine's own serde form.
    #[serde(flatten)]
    pub engines: BTreeMap<String, serde_json::Value>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One grammar's rejected (or repeated) records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedRejections {
    pub grammar: String,
    pub lines: u64,
}

impl SavedRejections {
    /// Per-grammar counts as the state file keeps them.
    fn capture(counts: &[(&'static str, u64)]) -> Vec<SavedRejections> {
        counts
            .iter()
            .map(|(grammar, lines)| SavedRejections {
                grammar: grammar.to_string(),
                lines: *lines,
            })
            .collect()
    }

    /// The counts of grammars this build knows (a grammar since renamed is dropped).
    fn restore(saved: &[SavedRejections]) -> Vec<(&'static str, u64)> {
        saved
            .iter()
            .filter_map(|r| Some((known_grammar(&r.grammar)?, r.lines)))
            .collect()
    }
}

/// The whole state file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub version: u32,
    pub logs: Vec<SavedLog>,
    /// Every file read and how far, under whatever name it has now (rotated copies included),
    /// so a glob that matches a rotated name does not read it again after a restart. Added
    /// within version 1: a file written before has none, and its logs' positions stand in.
    #[serde(default)]
    pub files: Vec<KnownFile>,
}

/// Why a state file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("cannot read state file {}: {source}; starting without it\n  fix: {}", path.display(), source.fix("give --state-file a path llmtail's user may read and write"))]
    Read { path: PathBuf, source: ReadError },
    #[error("state file {} is not a llmtail state file ({source}); starting without it", path.display())]
    Corrupt {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("state file {} has version {found}, which this llmtail does not read (it writes version {VERSION}); starting without it", path.display())]
    Version { path: PathBuf, found: u32 },
    #[error("cannot write state file {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Counts up to 2^53 are exact as the exposition's floats; past that a count is not real.
const MAX_COUNT: f64 = 9_007_199_254_740_992.0;

impl SavedLog {
    /// Where a value lies that no line could have made: a negative, non-finite or absurdly
    /// large number, or a fraction over 1. `None` when there is none.
    pub fn impossible_value(&self) -> Option<String> {
        let mut value = serde_json::to_value(self).ok()?;
        // The position's numbers are identities and hashes, not values.
        value.as_object_mut()?.remove("position");
        impossible_in(&value, "")
    }
    /// What to save of a log, at `position`.
    pub fn capture(log: &LogState, position: Option<FilePosition>) -> SavedLog {
        SavedLog {
            label: log.label.to_string(),
            position,
            io: log.io.clone(),
            parsed: log
                .parsed
                .iter()
                .map(|g| SavedGrammarCount {
                    grammar: g.grammar.to_string(),
                    lines: g.lines,
                    last_timestamp: g.last_timestamp,
                })
                .collect(),
            rejected: SavedRejections::capture(&log.rejected),
            series_refused: log.series_refused,
            repeated: SavedRejections::capture(&log.repeated),
            out_of_order: log.out_of_order,
            engines: log
                .engines
                .iter()
                .filter_map(|engine| Some((engine.name().to_string(), engine.save().ok()?)))
                .collect(),
        }
    }

    /// Puts the saved counters and gauges back into a freshly discovered log.
    pub fn restore_into(&self, log: &mut LogState) {
        log.io = LogIo {
            open: log.io.open,
            ..self.io.clone()
        };
        log.parsed = self
            .parsed
            .iter()
            .filter_map(|g| {
                Some(GrammarCount {
                    grammar: known_grammar(&g.grammar)?,
                    lines: g.lines,
                    last_timestamp: g.last_timestamp,
                })
            })
            .collect();
        log.rejected = SavedRejections::restore(&self.rejected);
        log.series_refused = self.series_refused;
        log.repeated = SavedRejections::restore(&self.repeated);
        log.out_of_order = self.out_of_order;
        // The log's latest time, for judging its engines until a line is read again.
        log.latest_line_at = self
            .parsed
            .iter()
            .map(|g| g.last_timestamp)
            .reduce(f64::max);
        for engine in log.engines.iter_mut() {
            let Some(saved) = self.engines.get(engine.name()) else {
                continue;
            };
            if let Err(error) = engine.restore(saved) {
                tracing::warn!(
                    log = %log.label,
                    engine = engine.name(),
                    %error,
                    "the state file's values of this engine do not read; its counters start from 0"
                );
            }
        }
    }
}

/// The first impossible value under `value` (see [`SavedLog::impossible_value`]).
fn impossible_in(value: &serde_json::Value, at: &str) -> Option<String> {
    use serde_json::Value;
    let is_fraction = |key: &str| {
        key.ends_with("_usage")
            || key.ends_with("hit_rate")
            || key.ends_with("_fraction")
            || key == "spec_acceptance_rate"
            || key == "spec_efficiency"
            || key == "spec_per_position"
    };
    match value {
        Value::Object(map) => map
            .iter()
            .find_map(|(key, v)| impossible_in(v, &format!("{at}.{key}"))),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| impossible_in(v, &format!("{at}[{i}]"))),
        Value::Number(n) => {
            let n = n.as_f64()?;
            let key = at.rsplit('.').next().unwrap_or(at);
            let key = key.split('[').next().unwrap_or(key);
            let bad = !(0.0..=MAX_COUNT).contains(&n) || (is_fraction(key) && n > 1.0);
            bad.then(|| format!("{at} = {n}"))
        }
        // How the state file spells a non-finite float.
        Value::String(text) if ["NaN", "+Inf", "-Inf"].contains(&text.as_str()) => {
            let key = at.rsplit('.').next().unwrap_or(at);
            let names = ["label", "grammar", "model_name", "model", "text", "version"];
            (!names.contains(&key)).then(|| format!("{at} = {text}"))
        }
        _ => None,
    }
}

/// Grammar names are `&'static str` in the state; one this build does not know is dropped.
fn known_grammar(name: &str) -> Option<&'static str> {
    llmtail_grammars::GRAMMAR_NAMES
        .iter()
        .find(|known| **known == name)
        .copied()
}

impl Checkpoint {
    /// Reads a state file; `Ok(None)` when there is none yet.
    pub fn load(path: &Path) -> Result<Option<Checkpoint>, CheckpointError> {
        let text = match read_regular_text(path, STATE_FILE_LIMIT) {
            Ok(text) => text,
            Err(e) if e.kind() == Some(std::io::ErrorKind::NotFound) => return Ok(None),
            Err(source) => {
                return Err(CheckpointError::Read {
                    path: path.to_path_buf(),
                    source,
                })
            }
        };
        #[derive(Deserialize)]
        struct Versioned {
            version: u32,
        }
        let versioned: Versioned =
            serde_json::from_str(&text).map_err(|source| CheckpointError::Corrupt {
                path: path.to_path_buf(),
                source,
            })?;
        let saved = Saved::parse(versioned.version, &text).ok_or(CheckpointError::Version {
            path: path.to_path_buf(),
            found: versioned.version,
        })?;
        let mut checkpoint =
            saved
                .map(Saved::into_current)
                .map_err(|source| CheckpointError::Corrupt {
                    path: path.to_path_buf(),
                    source,
                })?;
        checkpoint.drop_impossible_logs(path);
        Ok(Some(checkpoint))
    }

    /// Forgets the logs whose saved values no log line could have made (edited by hand,
    /// damaged): restored, a negative counter or a NaN gauge would be exported as it is, and
    /// `u64::MAX` lines would wrap round to 0. Such a log is read again as if it were new.
    fn drop_impossible_logs(&mut self, path: &Path) {
        let mut dropped = Vec::new();
        self.logs.retain(|log| match log.impossible_value() {
            None => true,
            Some(at) => {
                tracing::warn!(state_file = %path.display(), log = %log.label, value = %at, "the state file holds a value no log line can make; this log is read again from its start instead of restored");
                dropped.push(log.label.clone());
                false
            }
        });
        self.files.retain(|known| !dropped.contains(&known.label));
    }

    /// Replaces the state file atomically.
    pub fn save(&self, path: &Path) -> Result<(), CheckpointError> {
        let fail = |source| CheckpointError::Write {
            path: path.to_path_buf(),
            source,
        };
        let json = serde_json::to_vec(self).map_err(|e| fail(std::io::Error::other(e)))?;
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "state".into());
        let (temporary, mut file) = create_temporary(dir, &name).map_err(fail)?;
        let written = file.write_all(&json).and_then(|()| file.sync_all());
        drop(file);
        if let Err(source) = written.and_then(|()| std::fs::rename(&temporary, path)) {
            let _ = std::fs::remove_file(&temporary);
            return Err(fail(source));
        }
        // The rename is durable only once the directory entry is.
        if let Ok(dir) = std::fs::File::open(dir) {
            let _ = dir.sync_all();
        }
        Ok(())
    }

    /// Where each saved log goes on reading.
    pub fn resume(&self) -> Vec<Resume> {
        self.logs
            .iter()
            .filter_map(|l| {
                let p = l.position?;
                Some(Resume {
                    label: l.label.clone(),
                    file: p.file,
                    offset: p.offset,
                })
            })
            .collect()
    }

    /// Every file read before the restart: the known files, and the files the logs were in
    /// (a state file written before known files were saved has only those).
    pub fn known_files(&self) -> Vec<KnownFile> {
        let mut known = self.files.clone();
        for log in &self.logs {
            let Some(position) = log.position else {
                continue;
            };
            let same =
                |k: &KnownFile| (k.file.dev, k.file.ino) == (position.file.dev, position.file.ino);
            if !known.iter().any(same) {
                known.push(KnownFile {
                    label: log.label.clone(),
                    file: position.file,
                    offset: position.offset,
                });
            }
        }
        known
    }

    pub fn log(&self, label: &str) -> Option<&SavedLog> {
        self.logs.iter().find(|l| l.label == label)
    }
}

/// Creates `.NAME.RANDOM.tmp` in `dir` for writing, a name nobody else can have chosen: with
/// `O_EXCL` and `O_NOFOLLOW`, a file or symlink planted there (by a user who can write to the
/// directory, waiting for an agent running as root) makes the open fail rather than write
/// through it; a fixed name would let them redirect every save into a file of their choice.
fn create_temporary(dir: &Path, name: &str) -> std::io::Result<(PathBuf, std::fs::File)> {
    use std::hash::{BuildHasher, Hasher};
    use std::os::unix::fs::OpenOptionsExt;

    let mut last_error = None;
    for attempt in 0u32..16 {
        // RandomState is seeded from the operating system's randomness once per thread, and
        // differs on every call: enough for a name another user cannot guess in advance.
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        hasher.write_u32(attempt);
        let temporary = dir.join(format!(".{name}.{:016x}.tmp", hasher.finish()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&temporary)
        {
            Ok(file) => return Ok((temporary, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last_error = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last_error.unwrap_or_else(|| std::io::Error::other("no free temporary name")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::parts::caps::SeriesGuard;
    use crate::engines::parts::liveness::{DownReason, Phase};
    use crate::engines::parts::pacing::StatsInterval;
    use crate::engines::trtllm::TrtllmLog;
    use crate::engines::vllm::{EngineKey, VllmLog};
    use crate::source::LogSpec;
    use crate::state::StateSettings;
    use std::sync::Arc;

    fn vllm_of(log: &LogState) -> &VllmLog {
        log.engine()
    }

    fn vllm_mut(log: &mut LogState) -> &mut VllmLog {
        log.engine_mut()
    }

    fn trtllm_of(log: &LogState) -> &TrtllmLog {
        log.engine()
    }

    fn trtllm_mut(log: &mut LogState) -> &mut TrtllmLog {
        log.engine_mut()
    }

    /// An engine's state as a state file holds it.
    fn saved<E: serde::de::DeserializeOwned>(log: &SavedLog) -> E {
        let name = std::any::type_name::<E>();
        let key = if name.ends_with("VllmLog") {
            "vllm"
        } else {
            "trtllm"
        };
        serde_json::from_value(log.engines[key].clone()).unwrap()
    }

    /// A new log's state, followed as the path `label`.
    fn log_state(label: &str) -> LogState {
        LogState::new(
            Arc::from(label),
            LogSpec::Path(label.into()),
            Vec::new(),
            None,
            None,
        )
    }

    #[test]
    fn a_checkpoint_round_trips_through_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let mut log = log_state("/var/log/vllm.log");
        log.io.lines_read = 42;
        vllm_mut(&mut log).model_name = Some("qwen3-8b".into());
        vllm_mut(&mut log)
            .engines
            .entry(EngineKey::Index(3))
            .or_default()
            .prompt_tokens = Some(1234.5);
        vllm_mut(&mut log)
            .engines
            .entry(EngineKey::Aggregated)
            .or_default()
            .running = Some(7.0);
        log.parsed.push(GrammarCount {
            grammar: "vllm_stats",
            lines: 5,
            last_timestamp: 1.0,
        });
        log.reject("vllm_stats");
        log.count_repeat("vllm_stats");
        log.out_of_order = 3;
        log.series_refused = 2;
        let position = FilePosition {
            file: FileId {
                dev: 1,
                ino: 2,
                born_ns: Some(3),
                head_len: 4,
                head_hash: 5,
            },
            offset: 300,
        };
        let checkpoint = Checkpoint {
            version: VERSION,
            logs: vec![SavedLog::capture(&log, Some(position))],
            files: Vec::new(),
        };
        checkpoint.save(&path).unwrap();

        let loaded = Checkpoint::load(&path).unwrap().unwrap();
        assert_eq!(loaded, checkpoint);
        let mut fresh = log_state("/var/log/vllm.log");
        loaded
            .log("/var/log/vllm.log")
            .unwrap()
            .restore_into(&mut fresh);
        assert_eq!(vllm_of(&fresh), vllm_of(&log));
        assert_eq!(fresh.io.lines_read, 42);
        assert_eq!(fresh.parsed, log.parsed);
        assert_eq!(fresh.rejected, log.rejected);
        assert_eq!(fresh.repeated, log.repeated);
        assert_eq!(fresh.out_of_order, 3);
        assert_eq!(fresh.series_refused, 2);
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["state.json"], "no temporary file is left behind");
    }

    /// vLLM prints `nan` for a draft position without a sample; saved as
    /// `null`, it made every later start-up discard the state file.
    #[test]
    fn a_nan_per_position_rate_does_not_lose_the_state_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let settings = StateSettings {
            stats_interval: StatsInterval::Auto,
            model_name: None,
            constant_labels: Vec::new(),
            series: SeriesGuard { max_series: 100 },
            log_expiry: 600.0,
        };
        let mut log = log_state("/var/log/vllm.log");
        for line in [
            "INFO 08-20 10:00:00 [loggers.py:123] Engine 000: Avg prompt throughput: 10.0 tokens/s, Avg generation throughput: 20.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, Prefix cache hit rate: 0.0%",
            "INFO 08-20 10:00:00 [metrics.py:96] SpecDecoding metrics: Draft acceptance rate: 15.5%, Mean acceptance length: 1.77, Accepted: 17 tokens, Drafted: 110 tokens, Per-position acceptance rate: 0.333, 0.182, nan",
        ] {
            let parsed = llmtail_grammars::parse(line).expect(line);
            log.apply(&parsed, Some(1000.0), 1000.0, &settings, &mut 0);
        }
        let checkpoint = Checkpoint {
            version: VERSION,
            logs: vec![SavedLog::capture(&log, None)],
            files: Vec::new(),
        };
        checkpoint.save(&path).unwrap();

        let loaded = Checkpoint::load(&path)
            .expect("the state file is read back")
            .unwrap();
        let mut fresh = log_state("/var/log/vllm.log");
        loaded
            .log("/var/log/vllm.log")
            .unwrap()
            .restore_into(&mut fresh);
        let engine = &vllm_of(&fresh).engines[&EngineKey::Index(0)];
        assert_eq!(engine.spec_accepted_tokens, Some(17.0));
        assert_eq!(engine.spec_draft_tokens, Some(110.0));
        assert_eq!(engine.spec_per_position, [Some(0.333), Some(0.182), None]);
    }

    /// No float of the state is written as `null`: a value the lines never should give (an
    /// overflowing sum, a `nan` gauge) still reads back as itself, and the file stays usable.
    #[test]
    fn non_finite_values_round_trip_through_the_state_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let mut log = log_state("/var/log/vllm.log");
        let engine = vllm_mut(&mut log)
            .engines
            .entry(EngineKey::Index(0))
            .or_default();
        engine.prompt_tokens = Some(f64::INFINITY);
        engine.spec_acceptance_rate = Some(f64::NAN);
        engine.spec_per_position = vec![Some(f64::NEG_INFINITY), None];
        engine.kv_fetch = Some([f64::NAN, 1.0, 2.0]);
        vllm_mut(&mut log).phase = Phase::Stopped {
            reason: DownReason::Crash,
            at: f64::NAN,
        };
        let rank = trtllm_mut(&mut log).ranks.entry("0".into()).or_default();
        rank.iterations = f64::INFINITY;
        rank.iteration_seconds.sum = f64::NAN;
        log.parsed.push(GrammarCount {
            grammar: "vllm_stats",
            lines: 5,
            last_timestamp: f64::NEG_INFINITY,
        });
        let checkpoint = Checkpoint {
            version: VERSION,
            logs: vec![SavedLog::capture(&log, None)],
            files: Vec::new(),
        };
        checkpoint.save(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"NaN\"") && text.contains("\"+Inf\"") && text.contains("\"-Inf\""));

        // The file's form, before `load` judges the values (it drops a log holding values no
        // line could make, which non-finite ones are).
        let loaded = Saved::parse(VERSION, &text)
            .expect("this build's version")
            .expect("the state file is read back")
            .into_current();
        // NaN is not equal to itself: compare what each side writes.
        assert_eq!(serde_json::to_string(&loaded).unwrap(), text);
        let engine = &saved::<VllmLog>(&loaded.logs[0]).engines[&EngineKey::Index(0)];
        assert_eq!(engine.prompt_tokens, Some(f64::INFINITY));
        assert!(engine.spec_acceptance_rate.unwrap().is_nan());
        assert_eq!(engine.spec_per_position, [Some(f64::NEG_INFINITY), None]);
        assert_eq!(
            saved::<TrtllmLog>(&loaded.logs[0]).ranks["0"].iterations,
            f64::INFINITY
        );
    }

    /// The temporary file had a fixed name and was opened following
    /// symlinks, so a symlink planted there made a root agent overwrite its target.
    #[test]
    fn a_symlink_planted_at_the_temporary_name_is_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("passwd");
        std::fs::write(&target, "root:x:0:0\n").unwrap();
        let path = dir.path().join("state.json");
        let planted = [
            ".state.json.tmp",
            "state.json.tmp",
            ".state.json.swp",
            ".state.json~",
            "state.json.new",
            ".state.json.0.tmp",
        ];
        for name in planted {
            std::os::unix::fs::symlink(&target, dir.path().join(name)).unwrap();
        }
        let checkpoint = Checkpoint {
            version: VERSION,
            logs: Vec::new(),
            files: Vec::new(),
        };
        for _ in 0..3 {
            checkpoint.save(&path).unwrap();
        }
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "root:x:0:0\n");
        for name in planted {
            let link = dir.path().join(name);
            assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
        }
        assert!(!path.symlink_metadata().unwrap().file_type().is_symlink());
        assert_eq!(Checkpoint::load(&path).unwrap(), Some(checkpoint));
    }

    /// Whether every key and value of `saved` is in `current`: keys `current` adds are new
    /// fields (read as their default from an older file), a key it lacks was renamed or dropped.
    fn missing_from(
        saved: &serde_json::Value,
        current: &serde_json::Value,
        at: &str,
    ) -> Vec<String> {
        use serde_json::Value;
        match (saved, current) {
            (Value::Object(a), Value::Object(b)) => a
                .iter()
                .flat_map(|(k, v)| match b.get(k) {
                    Some(w) => missing_from(v, w, &format!("{at}.{k}")),
                    None => vec![format!("{at}.{k} is no longer read")],
                })
                .collect(),
            (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
                .iter()
                .zip(b)
                .enumerate()
                .flat_map(|(i, (v, w))| missing_from(v, w, &format!("{at}[{i}]")))
                .collect(),
            _ if saved == current => Vec::new(),
            _ => vec![format!("{at}: saved {saved}, read back as {current}")],
        }
    }

    fn golden_v1() -> (serde_json::Value, Checkpoint) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/state/v1.json");
        let text = std::fs::read_to_string(&path).unwrap();
        let loaded = Checkpoint::load(&path)
            .expect("a version-1 state file is read")
            .unwrap();
        (serde_json::from_str(&text).unwrap(), loaded)
    }

    /// `fixtures/state/v1.json` was written by the agent over two replay logs (see
    /// fixtures/README.md). Its counters must come back exactly after any upgrade.
    #[test]
    fn a_version_1_state_file_restores_its_counters_exactly() {
        let (_, loaded) = golden_v1();
        let mut vllm = log_state("/var/log/vllm.log");
        loaded
            .log("/var/log/vllm.log")
            .unwrap()
            .restore_into(&mut vllm);
        assert_eq!(vllm.io.lines_read, 39);
        assert_eq!(vllm.io.lines_unmatched, 23);
        assert_eq!(vllm.io.offset, 7162);
        let stats = vllm
            .parsed
            .iter()
            .find(|g| g.grammar == "vllm_stats")
            .unwrap();
        assert_eq!((stats.lines, stats.last_timestamp), (6, 1787857456.0));
        assert_eq!(vllm_of(&vllm).starts, 1);
        assert_eq!(vllm_of(&vllm).model_name.as_deref(), Some("llama-3.1-8b"));
        let engine = &vllm_of(&vllm).engines[&EngineKey::Index(0)];
        assert_eq!(engine.prompt_tokens, Some(65160.0));
        assert_eq!(engine.generation_tokens, Some(30590.0));
        assert_eq!(engine.spec_accepted_tokens, Some(19091.0));
        assert_eq!(engine.spec_draft_tokens, Some(38226.0));
        assert_eq!(
            engine.spec_per_position,
            [Some(0.68), Some(0.4), Some(0.26)]
        );
        assert_eq!(engine.kv_cache_capacity_tokens, Some(418528.0));
        assert_eq!(engine.starts, 1);

        let mut trtllm = log_state("/var/log/trtllm.log");
        loaded
            .log("/var/log/trtllm.log")
            .unwrap()
            .restore_into(&mut trtllm);
        assert_eq!(trtllm.io.lines_read, 58);
        let rank = &trtllm_of(&trtllm).ranks["0"];
        assert_eq!(rank.iterations, 36.0);
        assert_eq!(rank.iteration_seconds.count, 36);
        assert_eq!(rank.iteration_seconds.sum, 1.00736);
        assert_eq!(rank.context_tokens, Some(8192.0));
        assert_eq!(rank.completed_requests, Some(16.0));
        assert_eq!(rank.kv_reused_blocks.map(|c| c.value()), Some(52.0));
        assert_eq!(rank.kv_missed_blocks.map(|c| c.value()), Some(128.0));
        let resume = loaded.resume();
        assert_eq!(resume.len(), 2);
        assert_eq!(resume[1].offset, 31290);
    }

    /// A field renamed in the state structs would read a version-1 file's value as its default
    /// (zero): every field the golden file holds must still be read, and read as saved.
    #[test]
    fn every_field_of_a_version_1_state_file_is_still_read() {
        let (saved, loaded) = golden_v1();
        let current = serde_json::to_value(&loaded).unwrap();
        let missing = missing_from(&saved, &current, "");
        assert!(
            missing.is_empty(),
            "a version-1 state file loses fields; keep their names or add a version 2 to \
             checkpoint::Saved:\n{}",
            missing.join("\n")
        );
    }

    /// A FIFO at the state file's path blocked start-up in
    /// `open` (and `/metrics` never answered).
    #[test]
    fn a_fifo_at_the_state_files_path_is_an_error_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("state.json");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            return;
        }
        let error = Checkpoint::load(&fifo).unwrap_err().to_string();
        assert!(error.contains("not a regular file"), "{error}");
    }

    /// A hand-edited state file was restored as it was, and
    /// its negative, NaN and infinite counters and gauges were exported; `u64::MAX` lines
    /// wrapped round to 1 after two more lines.
    #[test]
    fn a_state_file_value_no_line_could_make_is_not_restored() {
        let (golden, _) = golden_v1();
        let edits: &[(&str, serde_json::Value)] = &[
            ("/logs/0/vllm/engines/0/preemptions_summed", (-5).into()),
            ("/logs/0/vllm/engines/0/generation_tokens", "+Inf".into()),
            ("/logs/0/vllm/engines/0/running", "NaN".into()),
            ("/logs/0/vllm/engines/0/kv_cache_usage", 7.0.into()),
            ("/logs/0/io/lines_read", u64::MAX.into()),
        ];
        let dir = tempfile::tempdir().unwrap();
        for (pointer, value) in edits {
            let mut edited = golden.clone();
            let Some(slot) = edited.pointer_mut(pointer) else {
                panic!("{pointer} is not in the golden state file");
            };
            *slot = value.clone();
            let path = dir.path().join("state.json");
            std::fs::write(&path, edited.to_string()).unwrap();
            let loaded = Checkpoint::load(&path).unwrap().unwrap();
            let labels: Vec<&str> = loaded.logs.iter().map(|l| l.label.as_str()).collect();
            assert_eq!(labels, ["/var/log/trtllm.log"], "{pointer} = {value}");
            assert!(loaded.files.iter().all(|f| f.label != "/var/log/vllm.log"));
        }
        let (_, untouched) = golden_v1();
        assert_eq!(untouched.logs.len(), 2, "the golden file itself is sane");
    }

    #[test]
    fn a_missing_file_is_no_checkpoint_and_a_foreign_one_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(Checkpoint::load(&dir.path().join("none.json"))
            .unwrap()
            .is_none());
        let garbage = dir.path().join("garbage.json");
        std::fs::write(&garbage, "not json").unwrap();
        assert!(matches!(
            Checkpoint::load(&garbage),
            Err(CheckpointError::Corrupt { .. })
        ));
        let future = dir.path().join("future.json");
        std::fs::write(&future, "{\"version\": 99, \"logs\": []}").unwrap();
        assert!(matches!(
            Checkpoint::load(&future),
            Err(CheckpointError::Version { found: 99, .. })
        ));
    }
}
