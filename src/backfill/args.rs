//! `llmtail replay`'s flags. Those it shares with the agent mean what they mean there, and are
//! checked by the same code: they are turned into the agent's settings ([`Settings::from_cli`]).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use clap::{Args, Parser};
use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;
use jiff::Timestamp;

use crate::cli::{Cli, From};
use crate::config::{ConfigError, LogSettings, Settings};
use crate::envelope::EnvelopeKind;
use crate::source::LogSpec;
use crate::timezone::LogZone;

pub const LONG_ABOUT: &str = "\
Turns whole logs into Prometheus history. Writes OpenMetrics text with a timestamp on every
sample: after each stats line, the series its engine shows at that line's time (counters
cumulative from the first line read, gauges absent while the engine is down), each family once,
each series' samples in time order, `# EOF` last.

Two commands turn last week's logs into Prometheus history:

  llmtail replay --log /var/log/vllm.log --out history.om
  promtool tsdb create-blocks-from openmetrics history.om ./blocks

then move the blocks (the directories in ./blocks) into Prometheus' data directory (its
--storage.tsdb.path) and restart Prometheus, or start one on that directory. Prometheus deletes
blocks older than its retention (--storage.tsdb.retention.time, 15d by default): raise it for
older history.";

pub const AFTER_HELP: &str = "\
Times: each stats line at the time its log gives it (the envelope's, else the engine's own
head, in --log-timezone for times printed without a zone; a yearless time is put in the year
that puts it closest before now). A stats line without any time cannot be placed: it still
counts, and how many were left out is said on stderr.

A log rotated into several files is one history: give each file with its own --log to keep
them apart (their series differ by the log label), or concatenate them, oldest first, into
standard input (cat vllm.log.2 vllm.log.1 vllm.log | llmtail replay --log -) so that the
counters go on across them.

Exit codes: 0 done; 1 a log cannot be read, or the output cannot be written; 2 a bad flag or
config file (the message names it and the fix).";

/// `llmtail replay`.
#[derive(Debug, Clone, Args)]
pub struct ReplayArgs {
    /// A log file to replay, a glob ('/var/log/vllm/*.log', quoted), or '-' for standard
    /// input. Repeatable; each log's series carry its own log label.
    #[arg(long = "log", value_name = "PATH")]
    pub logs: Vec<String>,

    /// Where to write the OpenMetrics text (to a temporary file beside FILE, renamed to FILE
    /// once complete; a device, FIFO or symlink is written as it is); '-' or none for standard
    /// output. Never one of the logs read.
    #[arg(long = "out", value_name = "FILE")]
    pub out: Option<String>,

    /// Samples before this time are not written (the lines before it still build the
    /// counters). An RFC 3339 time (2026-11-20T09:30:00Z, 2026-11-20T18:30:00+09:00), a time
    /// without an offset (2026-11-20T09:30:00) or a date (2026-11-20, midnight), the last two
    /// in --log-timezone (else the config file's log_timezone, else the machine's zone).
    #[arg(long = "since", value_name = "TIME")]
    pub since: Option<String>,

    /// Samples from this time on are not written: --since 2026-11-20 --until 2026-11-21 is one
    /// day. The same forms as --since.
    #[arg(long = "until", value_name = "TIME")]
    pub until: Option<String>,

    /// Read a TOML config file (the agent's: [[log]] entries, labels, settings); flags win.
    #[arg(long = "config", value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// How log lines are wrapped, as for the agent. [default: auto]
    #[arg(long = "envelope", value_enum, value_name = "KIND")]
    pub envelope: Option<EnvelopeKind>,

    /// The time zone of times a log prints without one, as for the agent (an IANA name such as
    /// Asia/Tokyo, or UTC); also that of --since and --until without an offset.
    /// [default: the machine's own zone, from TZ or /etc/localtime]
    #[arg(long = "log-timezone", value_name = "ZONE")]
    pub log_timezone: Option<String>,

    /// The model_name label when the log never names its model.
    #[arg(long = "model-name", value_name = "NAME")]
    pub model_name: Option<String>,

    /// A constant label added to every engine series, e.g. --label instance_group=a. Repeatable.
    #[arg(long = "label", value_name = "NAME=VALUE")]
    pub labels: Vec<String>,

    /// vLLM's stats interval, as for the agent: 'auto' or seconds. [default: auto]
    #[arg(long = "vllm-stats-interval", value_name = "SECONDS|auto")]
    pub vllm_stats_interval: Option<String>,

    /// The vLLM version that wrote the logs, for logs whose start-up lines are gone.
    #[arg(long = "vllm-version", value_name = "VERSION")]
    pub vllm_version: Option<String>,

    /// Labels from each log file's path, as for the agent: 'kubernetes' (namespace, pod,
    /// container from kubelet's .../pods/<namespace>_<pod>_<uid>/<container>/N.log) or a regex
    /// whose named captures become labels.
    #[arg(long = "path-labels", value_name = "kubernetes|REGEX")]
    pub path_labels: Option<String>,

    /// Lines longer than this are skipped. [default: 65536]
    #[arg(long = "max-line-bytes", value_name = "BYTES")]
    pub max_line_bytes: Option<usize>,
}

/// The span of time whose samples are written: `since <= t < until`, seconds since the epoch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    pub since: f64,
    pub until: f64,
}

impl Window {
    pub fn contains(&self, t: f64) -> bool {
        self.since <= t && t < self.until
    }
}

impl ReplayArgs {
    /// The agent's settings for these flags, checked as the agent checks them.
    pub fn settings(&self) -> Result<Settings, ConfigError> {
        if self.logs.is_empty() && self.config.is_none() {
            return Err(ConfigError(
                "llmtail replay needs a log to read\n  fix: --log /var/log/vllm.log (repeatable), or --config FILE with [[log]] entries".into(),
            ));
        }
        let mut cli = Cli::parse_from(["llmtail"]);
        cli.logs.clone_from(&self.logs);
        cli.config.clone_from(&self.config);
        cli.envelope = self.envelope;
        cli.log_timezone.clone_from(&self.log_timezone);
        cli.model_name.clone_from(&self.model_name);
        cli.labels.clone_from(&self.labels);
        cli.vllm_stats_interval
            .clone_from(&self.vllm_stats_interval);
        cli.vllm_version.clone_from(&self.vllm_version);
        cli.max_line_bytes = self.max_line_bytes;
        cli.path_labels.clone_from(&self.path_labels);
        cli.from = Some(From::Start);
        cli.one_shot = true;
        let settings = Settings::from_cli(cli)?;
        if settings.logs.is_empty() {
            return Err(ConfigError(
                "llmtail replay needs a log to read\n  fix: --log /var/log/vllm.log, or [[log]] entries in the config file".into(),
            ));
        }
        if let Some(out) = self.out.as_deref().filter(|out| *out != "-") {
            check_out_is_no_log(out, &settings.logs)?;
        }
        Ok(settings)
    }

    /// `--since` and `--until`, read in `zone` (the settings' `log_timezone`: the flag, else
    /// the config file's, else the machine's) when they carry no offset.
    pub fn window(&self, zone: &LogZone) -> Result<Window, ConfigError> {
        let read = |flag: &str, text: &Option<String>, otherwise: f64| {
            match text {
            Some(text) => instant(text, zone.zone()).ok_or_else(|| {
                ConfigError(format!(
                    "{flag} {text:?} is not a time\n  fix: an RFC 3339 time (2026-11-20T09:30:00Z), a time without an offset (2026-11-20T09:30:00, in --log-timezone) or a date (2026-11-20)"
                ))
            }),
            None => Ok(otherwise),
        }
        };
        let window = Window {
            since: read("--since", &self.since, f64::NEG_INFINITY)?,
            until: read("--until", &self.until, f64::INFINITY)?,
        };
        if window.since >= window.until {
            return Err(ConfigError(format!(
                "--since {} is not before --until {}\n  fix: swap them, or widen the span",
                self.since.as_deref().unwrap_or(""),
                self.until.as_deref().unwrap_or("")
            )));
        }
        Ok(window)
    }
}

/// An RFC 3339 time, a civil time or a date (midnight) in `zone`, as seconds since the epoch.
fn instant(text: &str, zone: &TimeZone) -> Option<f64> {
    let text = text.trim();
    if let Ok(timestamp) = text.parse::<Timestamp>() {
        return Some(timestamp.as_millisecond() as f64 / 1000.0);
    }
    let civil = match text.parse::<DateTime>() {
        Ok(civil) => civil,
        Err(_) => text
            .parse::<Date>()
            .ok()?
            .to_datetime(jiff::civil::Time::midnight()),
    };
    let timestamp = zone.to_ambiguous_timestamp(civil).compatible().ok()?;
    Some(timestamp.as_millisecond() as f64 / 1000.0)
}

/// Refuses an `--out` that is (by device and inode, so through symlinks and hard links) a
/// file one of the logs names now, a glob's matches included: a log replayed onto itself
/// is destroyed, since the history replaces it, or, through a symlink opened for writing,
/// truncated before it is read.
pub fn check_out_is_no_log(out: &str, logs: &[LogSettings]) -> Result<(), ConfigError> {
    let Ok(out_file) = std::fs::metadata(out) else {
        // Not there (or a symlink to nothing): no log can be it.
        return Ok(());
    };
    let same = |path: &Path| {
        std::fs::metadata(path)
            .is_ok_and(|m| (m.dev(), m.ino()) == (out_file.dev(), out_file.ino()))
    };
    for log in logs {
        if let Some(file) = files_of(&log.spec).into_iter().find(|f| same(f)) {
            let read = match &log.spec {
                LogSpec::Glob(_) => format!(" (its match {})", file.display()),
                _ => String::new(),
            };
            return Err(ConfigError(format!(
                "--out {out} is the file --log {}{read} reads: the history would replace the log before it is read\n  fix: write the history to a path of its own, e.g. --out history.om",
                log.given
            )));
        }
    }
    Ok(())
}

/// The files a log names now: its path, or its glob's matches.
fn files_of(spec: &LogSpec) -> Vec<PathBuf> {
    match spec {
        LogSpec::Path(path) => vec![path.clone()],
        LogSpec::Glob(pattern) => crate::source::glob_paths(pattern),
        LogSpec::Stdin => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_and_until_read_rfc_3339_times_civil_times_and_dates() {
        let tokyo = TimeZone::get("Asia/Tokyo").unwrap();
        let at = |text| instant(text, &tokyo);
        assert_eq!(at("2026-11-20T09:30:00Z"), Some(1_795_167_000.0));
        assert_eq!(at("2026-11-20T18:30:00+09:00"), Some(1_795_167_000.0));
        assert_eq!(at("2026-11-20T18:30:00"), Some(1_795_167_000.0));
        assert_eq!(at("2026-11-20"), Some(1_795_167_000.0 - 18.5 * 3600.0));
        assert_eq!(at("2026-11-20T09:30:00.250Z"), Some(1_795_167_000.25));
        assert_eq!(at("yesterday"), None);
        assert_eq!(at("2026-13-01"), None);
    }
}
