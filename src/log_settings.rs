//! The logs to read, one at a time: a `[[log]]` entry of the config file or a `--log`, read
//! into [`LogSettings`] and checked (its path, labels, zone, `path_labels`, engine settings).
//!
//! An entry's engine settings sit in a table keyed by engine (`[log.vllm]`): each engine's keys
//! are checked by its own table, and an engine with settings adds a table, not keys on the
//! entry. What the tables say reaches the state as `engines::EngineSetup`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config_error::ConfigError;
use crate::envelope::EnvelopeKind;
use crate::label_names::check_label_name;
use crate::path_labels::{PathLabels, PathLabelsError};
use crate::source::LogSpec;
use crate::timezone::LogZone;

/// One `--log` (or `[[log]]`), with what applies to it alone.
#[derive(Debug, Clone, PartialEq)]
pub struct LogSettings {
    pub spec: LogSpec,
    /// As the user wrote it.
    pub given: String,
    pub envelope: EnvelopeKind,
    pub model_name: Option<String>,
    pub labels: Vec<(String, String)>,
    /// The vLLM version that wrote it, when its lines no longer say.
    pub vllm_version: Option<String>,
    /// The zone its times without one are read in.
    pub timezone: LogZone,
    /// `path_labels` (or `--path-labels`): labels taken from each of its files' paths.
    pub path_labels: Option<PathLabels>,
}

/// One `[[log]]` entry of the config file, as written. Unknown keys (and unknown engine
/// tables) are errors: a typo must not be silently ignored.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogEntry {
    pub path: String,
    envelope: Option<EnvelopeKind>,
    model_name: Option<String>,
    /// The same as `[log.vllm] version`.
    vllm_version: Option<String>,
    #[serde(alias = "log_timezone")]
    timezone: Option<String>,
    path_labels: Option<String>,
    #[serde(default)]
    labels: std::collections::BTreeMap<String, String>,
    /// `[log.vllm]`: what the log's lines no longer say about the vLLM that wrote them.
    vllm: Option<VllmTable>,
}

/// `[log.vllm]`, the vLLM settings of one `[[log]]` entry.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct VllmTable {
    /// The vLLM version that wrote the log: as the entry's `vllm_version`.
    version: Option<String>,
}

impl LogEntry {
    /// The entry's vLLM version, from `vllm_version` or `[log.vllm] version`; both may be
    /// given only if they agree.
    fn vllm_version(&self, origin: &str) -> Result<Option<String>, ConfigError> {
        let table = self.vllm.as_ref().and_then(|t| t.version.as_ref());
        match (&self.vllm_version, table) {
            (Some(key), Some(table)) if key != table => Err(ConfigError(format!(
                "{origin}: vllm_version {key:?} and [log.vllm] version {table:?} disagree\n  fix: keep one of them (they mean the same)"
            ))),
            (key, table) => Ok(key.clone().or(table.cloned())),
        }
    }
}

/// Looks up a time zone by its IANA name, or `auto`.
pub fn zone(name: &str, origin: &str) -> Result<LogZone, ConfigError> {
    if name.eq_ignore_ascii_case("auto") {
        return Ok(LogZone::auto());
    }
    LogZone::named(name).map_err(|e| {
        ConfigError(format!(
            "{origin}: {name:?} is not a time zone this agent knows ({e})\n  fix: use an IANA name such as Asia/Tokyo, Europe/Berlin or UTC (`timedatectl list-timezones` lists them), or auto"
        ))
    })
}

/// Reads `--log`'s argument: `-`, a glob, or a path.
pub fn log_spec(given: &str, origin: &str) -> Result<LogSpec, ConfigError> {
    if given == "-" {
        return Ok(LogSpec::Stdin);
    }
    if given.is_empty() {
        return Err(ConfigError(format!(
            "{origin}: empty log path\n  fix: --log /var/log/vllm.log"
        )));
    }
    if given.contains(['*', '?', '[']) {
        glob::Pattern::new(given).map_err(|e| {
            ConfigError(format!("{origin}: bad glob {given:?}: {e}\n  fix: quote the glob and check its brackets, e.g. --log '/var/log/vllm/*.log'"))
        })?;
        return Ok(LogSpec::Glob(given.to_string()));
    }
    // A directory would be retried for ever as "not a regular file": say what was meant.
    if Path::new(given).is_dir() {
        let pattern = format!("{}/*.log", given.trim_end_matches('/'));
        return Err(ConfigError(format!(
            "{origin}: {given:?} is a directory, not a log file\n  fix: follow the logs in it with a quoted glob, e.g. --log '{pattern}'"
        )));
    }
    Ok(LogSpec::Path(PathBuf::from(given)))
}

/// What a log takes when neither its `[[log]]` entry nor its `--log` says otherwise.
pub struct LogDefaults<'a> {
    pub envelope: EnvelopeKind,
    pub zone: &'a LogZone,
    /// `--path-labels`, else the config file's `path_labels`, with where it was given.
    pub path_labels: Option<(String, &'a str)>,
    /// `--label`s and `[labels]`, which a path's captures may not repeat.
    pub constant_labels: &'a [(String, String)],
}

/// A `[[log]]` entry's settings, checked.
pub fn entry_settings(
    entry: &LogEntry,
    origin: &str,
    defaults: &LogDefaults<'_>,
) -> Result<LogSettings, ConfigError> {
    let mut labels = Vec::new();
    for (name, value) in &entry.labels {
        check_label_name(name, origin)?;
        labels.push((name.clone(), value.clone()));
    }
    let timezone = match &entry.timezone {
        Some(name) => zone(name, &format!("{origin}, timezone"))?,
        None => defaults.zone.clone(),
    };
    // The entry's own path_labels wins over --path-labels: it was written for this path.
    let path_labels = match &entry.path_labels {
        Some(given) => Some((format!("{origin}, path_labels"), given.as_str())),
        None => defaults
            .path_labels
            .as_ref()
            .map(|(at, given)| (format!("{origin} with {at}"), *given)),
    };
    let path_labels = path_labels
        .map(|(at, given)| checked_path_labels(given, &at, &labels, defaults.constant_labels))
        .transpose()?;
    Ok(LogSettings {
        spec: log_spec(&entry.path, origin)?,
        given: entry.path.clone(),
        envelope: entry.envelope.unwrap_or(defaults.envelope),
        model_name: entry.model_name.clone(),
        labels,
        vllm_version: entry.vllm_version(origin)?,
        timezone,
        path_labels,
    })
}

/// A `--log`'s settings: the defaults.
pub fn flag_settings(
    spec: LogSpec,
    given: &str,
    defaults: &LogDefaults<'_>,
) -> Result<LogSettings, ConfigError> {
    let path_labels = defaults
        .path_labels
        .as_ref()
        .map(|(at, path_labels)| {
            checked_path_labels(path_labels, at, &[], defaults.constant_labels)
        })
        .transpose()?;
    Ok(LogSettings {
        spec,
        given: given.to_string(),
        envelope: defaults.envelope,
        model_name: None,
        labels: Vec::new(),
        vllm_version: None,
        timezone: defaults.zone.clone(),
        path_labels,
    })
}

/// A `path_labels` value (`origin` says where it was given), compiled, with each capture name
/// checked as a `--label`'s is and refused when the log's own `labels` or the constant labels
/// set it too: a label written twice makes Prometheus reject the whole scrape, and which of two
/// values should win is the user's to say.
fn checked_path_labels(
    given: &str,
    origin: &str,
    own_labels: &[(String, String)],
    constant_labels: &[(String, String)],
) -> Result<PathLabels, ConfigError> {
    // Captures llmtail does not set itself: `model` would be refused (engines set it).
    let example = "e.g. '/srv/(?P<team>[^/]+)/(?P<deployment>[^/]+)/[^/]+\\.log$', or 'kubernetes'";
    let path_labels = PathLabels::new(given).map_err(|e| match e {
        PathLabelsError::Syntax(why) => ConfigError(format!(
            "{origin}: {given:?} is not a regex:\n{why}\n  fix: a regex (Rust regex syntax) with named captures, {example}"
        )),
        PathLabelsError::NoNamedCapture => ConfigError(format!(
            "{origin}: {given:?} has no named capture, so it would add no label\n  fix: name each part to keep with (?P<label>...), {example}"
        )),
    })?;
    for name in path_labels.names() {
        check_label_name(name, &format!("{origin}, capture (?P<{name}>...)"))?;
        let clash = [
            ("the entry's labels", own_labels),
            ("[labels] or --label", constant_labels),
        ]
        .into_iter()
        .find(|(_, labels)| labels.iter().any(|(n, _)| n == name));
        if let Some((table, _)) = clash {
            return Err(ConfigError(format!(
                "{origin}: the capture {name:?} is a label that {table} set too\n  fix: drop {name:?} from {table}, or write path_labels as a regex whose capture has another name"
            )));
        }
    }
    Ok(path_labels)
}
