//! What `llmtail replay`'s flags ([`ReplayArgs`]) ask for: the agent's settings for its logs
//! (the shared flags checked by the same code, [`Settings::from_cli`]), the window of time to
//! write, and an `--out` that is none of the logs.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;
use jiff::Timestamp;

use crate::cli::{Cli, From, ReplayArgs};
use crate::config::{ConfigError, LogSettings, Settings};
use crate::source::LogSpec;
use crate::timezone::LogZone;

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
        if self.log.logs.is_empty() && self.log.config.is_none() {
            return Err(ConfigError(
                "llmtail replay needs a log to read\n  fix: --log /var/log/vllm.log (repeatable), or --config FILE with [[log]] entries".into(),
            ));
        }
        // The agent's settings for reading each log once, from its first byte.
        let cli = Cli {
            log: self.log.clone(),
            from: Some(From::Start),
            one_shot: true,
            ..Cli::default()
        };
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
