//! Settings: flags and the optional TOML config file, merged (flags win) and validated.
//!
//! Every mistake stops start-up with exit code 2 and a message that names the file, the line
//! and what to do about it, because an agent that starts with half its config silently ignored
//! is worse than one that does not start.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use serde::Deserialize;

use crate::bounded_read::{read_regular_text, SMALL_FILE_LIMIT};
use crate::cli::{Cli, From};
use crate::engines::parts::pacing::StatsInterval;
use crate::envelope::EnvelopeKind;
use crate::exposition::web_config::WebConfigHandle;
use crate::exposition::web_settings::{WebFlags, WebSection, WebSettings};
use crate::label_names::{check_label_name, label};
use crate::log_settings::{entry_settings, flag_settings, zone, LogDefaults, LogEntry};
use crate::source::LogSpec;
use crate::timezone::LogZone;

pub use crate::config_error::ConfigError;
pub use crate::label_names::reserved_labels;
pub use crate::log_settings::{log_spec, LogSettings};

pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024;

/// Everything the agent runs with.
#[derive(Debug, Clone)]
pub struct Settings {
    pub logs: Vec<LogSettings>,
    /// The zone of times printed without one, for logs without a `timezone` of their own:
    /// `--log-timezone`, else the config file's `log_timezone`, else the agent's own zone.
    pub log_timezone: LogZone,
    pub listen_address: SocketAddr,
    /// `--web.max-connections`.
    pub max_connections: usize,
    pub telemetry_path: String,
    pub from: From,
    pub model_name: Option<String>,
    pub labels: Vec<(String, String)>,
    pub vllm_stats_interval: StatsInterval,
    pub max_line_bytes: usize,
    /// `--max-series`.
    pub max_series: usize,
    /// `--log-expiry`.
    pub log_expiry: std::time::Duration,
    pub state_file: Option<PathBuf>,
    pub one_shot: bool,
    /// `--web.enable-lifecycle`: `POST /-/reload` (and `/-/quit`) are served.
    pub enable_lifecycle: bool,
    /// The flags these settings were made from: a reload reads the config file again and
    /// merges it with them.
    pub flags: Cli,
    /// `--web.config.file`, read: TLS, basic auth and headers. The server consults this
    /// handle for every connection; `reload()` re-reads the file.
    pub web_config: Arc<WebConfigHandle>,
    /// `--remote-write.url`, `--remote-write.interval` and `[[remote_write]]`: where to push.
    pub remote_write: crate::remote_write::settings::RemoteWrite,
}

/// The settings in force while serving: replaced whole by a reload, read by the landing page.
#[derive(Debug, Clone)]
pub struct LiveSettings(Arc<RwLock<Arc<Settings>>>);

impl LiveSettings {
    pub fn new(settings: Settings) -> LiveSettings {
        LiveSettings(Arc::new(RwLock::new(Arc::new(settings))))
    }

    pub fn get(&self) -> Arc<Settings> {
        Arc::clone(&self.0.read().unwrap_or_else(PoisonError::into_inner))
    }

    pub fn set(&self, settings: Arc<Settings>) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = settings;
    }
}

/// The config file. Unknown keys are errors: a typo must not be silently ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConfigFile {
    #[serde(default)]
    web: WebSection,
    from: Option<From>,
    model_name: Option<String>,
    vllm_stats_interval: Option<IntervalValue>,
    vllm_version: Option<String>,
    envelope: Option<EnvelopeKind>,
    log_timezone: Option<String>,
    max_line_bytes: Option<usize>,
    max_series: Option<usize>,
    log_expiry: Option<String>,
    state_file: Option<PathBuf>,
    path_labels: Option<String>,
    #[serde(default)]
    labels: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    log: Vec<LogEntry>,
    #[serde(default)]
    remote_write: Vec<crate::remote_write::settings::Entry>,
    remote_write_interval: Option<String>,
}

/// `vllm_stats_interval = 10` or `"auto"`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum IntervalValue {
    Seconds(f64),
    Word(String),
}

/// An example config, shown when the file cannot be read as one.
const CONFIG_EXAMPLE: &str = "every key is in docs/REFERENCE.md, an example in docs/GUIDE.md (\"Config file\"); for example:\n\
    \n    [web]\n    listen_address = \"0.0.0.0:3913\"\n    [labels]\n    instance_group = \"a\"\n    [[log]]\n    path = \"/var/log/vllm.log\"\n    labels = { gpu = \"0\" }";

fn read_config(path: &Path) -> Result<ConfigFile, ConfigError> {
    let text = read_regular_text(path, SMALL_FILE_LIMIT).map_err(|e| {
        ConfigError(format!(
            "cannot read config file {}: {e}\n  fix: {}",
            path.display(),
            e.fix("pass an existing, readable file to --config")
        ))
    })?;
    toml::from_str(&text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        let place = line.map_or(String::new(), |l| format!(", line {l}"));
        ConfigError(format!(
            "config file {}{place}: {}\n  fix: {CONFIG_EXAMPLE}",
            path.display(),
            e.message()
        ))
    })
}

/// The stats intervals vLLM itself accepts (`VLLM_LOG_STATS_INTERVAL`), in seconds. Outside
/// them no vLLM wrote the log, and the token counters built from the interval would be
/// nonsense (`+Inf` at 1e308 s, zero at 1e-300 s).
pub const STATS_INTERVAL_RANGE: std::ops::RangeInclusive<f64> = 0.1..=86_400.0;

/// `auto` or seconds within [`STATS_INTERVAL_RANGE`].
fn stats_interval(text: &str, origin: &str) -> Result<StatsInterval, ConfigError> {
    if text == "auto" {
        return Ok(StatsInterval::Auto);
    }
    match text.parse::<f64>() {
        Ok(seconds) if seconds.is_finite() && seconds > 0.0 => {
            stats_interval_seconds(seconds, text, origin)
        }
        _ => Err(ConfigError(format!(
            "{origin}: {text:?} is not a positive number of seconds nor 'auto'\n  fix: leave it at auto (learned from the lines), or give vLLM's VLLM_LOG_STATS_INTERVAL (10 by default)"
        ))),
    }
}

/// `seconds` (written `text`) if vLLM could have logged at that interval.
fn stats_interval_seconds(
    seconds: f64,
    text: &str,
    origin: &str,
) -> Result<StatsInterval, ConfigError> {
    if STATS_INTERVAL_RANGE.contains(&seconds) {
        return Ok(StatsInterval::Fixed(seconds));
    }
    Err(ConfigError(format!(
        "{origin}: {text} seconds is outside the stats intervals vLLM accepts ({} to {} seconds)\n  fix: leave it at auto (learned from the lines), or give vLLM's VLLM_LOG_STATS_INTERVAL (10 by default)",
        STATS_INTERVAL_RANGE.start(),
        STATS_INTERVAL_RANGE.end()
    )))
}

/// A duration such as `10m`, `90s` or `1h 30m` (a bare number is seconds); zero or more.
fn log_expiry(text: &str, origin: &str) -> Result<std::time::Duration, ConfigError> {
    let parsed = match text.trim().parse::<u64>() {
        Ok(seconds) => Ok(std::time::Duration::from_secs(seconds)),
        Err(_) => text
            .parse::<jiff::SignedDuration>()
            .map_err(|e| e.to_string())
            .and_then(|d| std::time::Duration::try_from(d).map_err(|e| e.to_string())),
    };
    parsed.map_err(|e| {
        ConfigError(format!(
            "{origin}: {text:?} is not a duration ({e})\n  fix: e.g. 10m (the default), 90s or 1h"
        ))
    })
}

/// The state file must not be one of the logs: saving it would replace the log.
fn check_state_file_is_no_log(state_file: &Path, logs: &[LogSettings]) -> Result<(), ConfigError> {
    let absolute = |path: &Path| std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let state = absolute(state_file);
    let is_log = logs.iter().any(|log| match &log.spec {
        LogSpec::Path(path) => absolute(path) == state,
        LogSpec::Glob(pattern) => glob::Pattern::new(pattern)
            .is_ok_and(|p| p.matches_path(&state) || p.matches_path(state_file)),
        LogSpec::Stdin => false,
    });
    if is_log {
        return Err(ConfigError(format!(
            "--state-file {} is also a log to follow: saving the state would replace the log\n  fix: keep the state elsewhere, e.g. --state-file /var/lib/llmtail/state.json",
            state_file.display()
        )));
    }
    Ok(())
}

/// The zone of every log without a `timezone` of its own: `--log-timezone`, else the config
/// file's `log_timezone`, else the agent's own zone.
fn default_zone(
    flag: Option<&str>,
    config: Option<&str>,
    config_origin: &str,
) -> Result<LogZone, ConfigError> {
    match (flag, config) {
        (Some(name), _) => zone(name, "--log-timezone"),
        (None, Some(name)) => zone(name, &format!("{config_origin}, log_timezone")),
        (None, None) => Ok(LogZone::local()),
    }
}

impl Settings {
    /// Merges the flags with the config file they name, and validates the result.
    pub fn from_cli(cli: Cli) -> Result<Settings, ConfigError> {
        let flags = cli.clone();
        let (config, config_origin) = match &cli.log.config {
            Some(path) => (
                read_config(path)?,
                format!("config file {}", path.display()),
            ),
            None => (ConfigFile::default(), String::new()),
        };
        let labels = constant_labels(&cli, &config, &config_origin)?;
        let log_timezone = default_zone(
            cli.log.log_timezone.as_deref(),
            config.log_timezone.as_deref(),
            &config_origin,
        )?;
        let logs = log_settings(&cli, &config, &config_origin, (&labels, &log_timezone))?;
        let vllm_stats_interval = vllm_stats_interval(&cli, &config, &config_origin)?;
        let limits = Limits::from(&cli, &config)?;
        let log_expiry = match (&cli.log_expiry, &config.log_expiry) {
            (Some(text), _) => log_expiry(text, "--log-expiry")?,
            (None, Some(text)) => log_expiry(text, &format!("{config_origin}, log_expiry"))?,
            (None, None) => crate::source::DEFAULT_LOG_EXPIRY,
        };
        let state_file = cli.state_file.clone().or(config.state_file.clone());
        if let Some(state_file) = &state_file {
            check_state_file_is_no_log(state_file, &logs)?;
        }
        let web = WebSettings::read(web_flags(&cli), &config.web)?;
        let remote_write = crate::remote_write::settings::RemoteWrite::read(
            (&cli.remote_write_urls, cli.remote_write_interval.as_deref()),
            (
                &config.remote_write,
                config.remote_write_interval.as_deref(),
            ),
            &config_origin,
        )?;
        Ok(Settings {
            logs,
            log_timezone,
            listen_address: web.listen_address,
            max_connections: web.max_connections,
            telemetry_path: web.telemetry_path,
            from: cli.from.or(config.from).unwrap_or(From::Start),
            model_name: cli.log.model_name.or(config.model_name),
            labels,
            vllm_stats_interval,
            max_line_bytes: limits.max_line_bytes,
            max_series: limits.max_series,
            log_expiry,
            state_file,
            one_shot: cli.one_shot,
            enable_lifecycle: cli.enable_lifecycle,
            flags,
            web_config: Arc::new(web.web_config),
            remote_write,
        })
    }
}

/// The `--web.*` flags, for the server's own reading of them.
fn web_flags(cli: &Cli) -> WebFlags<'_> {
    WebFlags {
        listen_address: cli.listen_address.as_deref(),
        max_connections: cli.max_connections,
        telemetry_path: cli.telemetry_path.as_deref(),
        config_file: cli.web_config_file.as_deref(),
    }
}

/// The logs to follow: the config file's `[[log]]` entries, then each `--log` not among them
/// (a path is followed once, with its entry's settings if it has one).
fn log_settings(
    cli: &Cli,
    config: &ConfigFile,
    config_origin: &str,
    (constant_labels, default_zone): (&[(String, String)], &LogZone),
) -> Result<Vec<LogSettings>, ConfigError> {
    let defaults = LogDefaults {
        envelope: cli.log.envelope.or(config.envelope).unwrap_or_default(),
        zone: default_zone,
        path_labels: match (&cli.log.path_labels, &config.path_labels) {
            (Some(given), _) => Some(("--path-labels".to_string(), given.as_str())),
            (None, Some(given)) => Some((format!("{config_origin}, path_labels"), given.as_str())),
            (None, None) => None,
        },
        constant_labels,
    };
    let mut logs: Vec<LogSettings> = Vec::new();
    for entry in &config.log {
        let origin = format!("{config_origin}, [[log]] path {:?}", entry.path);
        logs.push(entry_settings(entry, &origin, &defaults)?);
    }
    for given in &cli.log.logs {
        let spec = log_spec(given, "--log")?;
        if !logs.iter().any(|l| l.spec == spec) {
            logs.push(flag_settings(spec, given, &defaults)?);
        }
    }
    if logs.is_empty() {
        return Err(ConfigError(
            "no log to follow\n  fix: llmtail --log /var/log/vllm.log (or [[log]] path = \"...\" in the --config file)".into(),
        ));
    }
    if logs.iter().filter(|l| l.spec == LogSpec::Stdin).count() > 1 {
        return Err(ConfigError(
            "--log - (stdin) given twice\n  fix: read standard input once".into(),
        ));
    }
    let vllm_version = cli.log.vllm_version.clone().or(config.vllm_version.clone());
    for log in &mut logs {
        if log.vllm_version.is_none() {
            log.vllm_version.clone_from(&vllm_version);
        }
    }
    Ok(logs)
}

/// The constant labels: the config file's `[labels]`, then the `--label`s (flags win).
fn constant_labels(
    cli: &Cli,
    config: &ConfigFile,
    config_origin: &str,
) -> Result<Vec<(String, String)>, ConfigError> {
    let mut labels: Vec<(String, String)> = Vec::new();
    for (name, value) in &config.labels {
        check_label_name(name, &format!("{config_origin}, [labels]"))?;
        labels.push((name.clone(), value.clone()));
    }
    for text in &cli.log.labels {
        let (name, value) = label(text, "--label")?;
        labels.retain(|(n, _)| *n != name);
        labels.push((name, value));
    }
    Ok(labels)
}

/// `--vllm-stats-interval`, or the config file's `vllm_stats_interval` (seconds or a word).
fn vllm_stats_interval(
    cli: &Cli,
    config: &ConfigFile,
    config_origin: &str,
) -> Result<StatsInterval, ConfigError> {
    let origin = || format!("{config_origin}, vllm_stats_interval");
    match (&cli.log.vllm_stats_interval, &config.vllm_stats_interval) {
        (Some(text), _) => stats_interval(text, "--vllm-stats-interval"),
        // `{:e}` is exact for any number a TOML file holds; `{}` would spell 1e308 in 309 digits.
        (None, Some(IntervalValue::Seconds(seconds))) if seconds.is_finite() && *seconds > 0.0 => {
            stats_interval_seconds(*seconds, &format!("{seconds:e}"), &origin())
        }
        (None, Some(IntervalValue::Seconds(seconds))) => {
            stats_interval(&format!("{seconds:e}"), &origin())
        }
        (None, Some(IntervalValue::Word(text))) => stats_interval(text, &origin()),
        (None, None) => Ok(StatsInterval::Auto),
    }
}

/// The limits a user may set, each checked to be one that lets the agent work.
struct Limits {
    max_line_bytes: usize,
    max_series: usize,
}

impl Limits {
    fn from(cli: &Cli, config: &ConfigFile) -> Result<Limits, ConfigError> {
        let max_line_bytes = cli
            .log
            .max_line_bytes
            .or(config.max_line_bytes)
            .unwrap_or(DEFAULT_MAX_LINE_BYTES);
        if max_line_bytes < 256 {
            return Err(ConfigError(format!(
                "--max-line-bytes: {max_line_bytes} is too small for any engine's stats line\n  fix: use at least 256 (default 65536)"
            )));
        }
        let max_series = cli
            .max_series
            .or(config.max_series)
            .unwrap_or(crate::engines::parts::caps::DEFAULT_MAX_SERIES);
        if max_series == 0 {
            return Err(ConfigError(
                "--max-series: 0 would refuse every engine\n  fix: leave it at 100000, or give a positive number".into(),
            ));
        }
        Ok(Limits {
            max_line_bytes,
            max_series,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn settings(args: &[&str]) -> Result<Settings, ConfigError> {
        let mut argv = vec!["llmtail"];
        argv.extend_from_slice(args);
        Settings::from_cli(Cli::try_parse_from(argv).expect("flags parse"))
    }

    #[test]
    fn defaults_match_the_documented_contract() {
        let s = settings(&["--log", "/var/log/vllm.log"]).unwrap();
        assert_eq!(s.listen_address.to_string(), "0.0.0.0:3913");
        assert_eq!(s.telemetry_path, "/metrics");
        assert_eq!(s.from, From::Start);
        assert_eq!(s.vllm_stats_interval, StatsInterval::Auto);
        assert_eq!(s.max_series, 100_000);
        assert_eq!(s.log_expiry, std::time::Duration::from_secs(600));
        assert_eq!(s.logs[0].spec, LogSpec::Path("/var/log/vllm.log".into()));
    }

    /// `--web.listen-address localhost:3913` was refused as not HOST:PORT.
    #[test]
    fn a_listen_address_may_name_a_host() {
        let s = settings(&["--log", "x", "--web.listen-address", "localhost:3913"]).unwrap();
        assert_eq!(s.listen_address.to_string(), "127.0.0.1:3913");
    }

    /// `--web.listen-address :3913`, the exporters' form for every interface, was refused as
    /// not HOST:PORT, flag and config key alike.
    #[test]
    fn a_listen_address_without_a_host_is_every_interface() {
        let s = settings(&["--log", "x", "--web.listen-address", ":9400"]).unwrap();
        assert_eq!(s.listen_address.to_string(), "0.0.0.0:9400");

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("llmtail.toml");
        std::fs::write(
            &path,
            "[web]\nlisten_address = \":9401\"\n\n[[log]]\npath = \"/x.log\"\n",
        )
        .unwrap();
        let s = settings(&["--config", path.to_str().unwrap()]).unwrap();
        assert_eq!(s.listen_address.to_string(), "0.0.0.0:9401");

        let refused = settings(&["--log", "x", "--web.listen-address", ":http"]);
        assert!(refused
            .unwrap_err()
            .to_string()
            .contains("is not HOST:PORT"));
    }

    #[test]
    fn log_expiry_takes_a_duration_or_seconds() {
        for (given, seconds) in [("10m", 600), ("90s", 90), ("1h 30m", 5400), ("45", 45)] {
            let s = settings(&["--log", "x", "--log-expiry", given]).unwrap();
            assert_eq!(s.log_expiry.as_secs(), seconds, "{given}");
        }
    }

    #[test]
    fn stdin_globs_and_labels() {
        let s = settings(&[
            "--log",
            "-",
            "--log",
            "/var/log/vllm/*.log",
            "--label",
            "instance_group=a",
        ])
        .unwrap();
        assert_eq!(s.logs[0].spec, LogSpec::Stdin);
        assert_eq!(s.logs[1].spec, LogSpec::Glob("/var/log/vllm/*.log".into()));
        assert_eq!(s.labels, [("instance_group".to_string(), "a".to_string())]);
    }

    #[test]
    fn mistakes_name_the_input_and_the_fix() {
        let cases: &[(&[&str], &str)] = &[
            (&[], "no log to follow"),
            (
                &["--log", "x", "--label", "novalue"],
                "\"novalue\" is not NAME=VALUE",
            ),
            (
                &["--log", "x", "--label", "9bad=1"],
                "not a valid Prometheus label name",
            ),
            (
                &["--log", "x", "--label", "engine=1"],
                "set by llmtail itself",
            ),
            (&["--log", "/var/log/[x.log"], "bad glob"),
            (
                &["--log", "x", "--web.listen-address", "nope"],
                "is not HOST:PORT",
            ),
            (
                &["--log", "x", "--web.telemetry-path", "metrics"],
                "must start with '/'",
            ),
            (
                &["--log", "x", "--vllm-stats-interval", "0"],
                "not a positive number",
            ),
            (
                &["--log", "x", "--vllm-stats-interval", "often"],
                "nor 'auto'",
            ),
            (
                &["--log", "x", "--log-timezone", "Asia/Tokio"],
                "--log-timezone: \"Asia/Tokio\" is not a time zone",
            ),
            (
                &["--log", "x", "--max-series", "0"],
                "--max-series: 0 would refuse every engine",
            ),
            (
                &["--log", "/var/log/a.log", "--state-file", "/var/log/a.log"],
                "--state-file /var/log/a.log is also a log to follow",
            ),
            (
                &[
                    "--log",
                    "/var/log/*.log",
                    "--state-file",
                    "/var/log/state.log",
                ],
                "is also a log to follow",
            ),
            (
                &["--log", "/tmp"],
                "\"/tmp\" is a directory, not a log file",
            ),
            (
                &["--log", "x", "--log-expiry", "ten minutes"],
                "--log-expiry: \"ten minutes\" is not a duration",
            ),
            (
                &["--log", "x", "--log-expiry=-5m"],
                "--log-expiry: \"-5m\" is not a duration",
            ),
        ];
        for (args, expected) in cases {
            let err = settings(args).unwrap_err().to_string();
            assert!(err.contains(expected), "{args:?}: {err}");
            assert!(err.contains("fix:"), "{args:?}: {err}");
        }
    }

    #[test]
    fn a_config_typo_names_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("llmtail.toml");
        std::fs::write(&path, "[web]\nlisten_address = \"127.0.0.1:1\"\n\n[[log]]\npath = \"/x.log\"\nlabls = { a = \"b\" }\n").unwrap();
        let err = settings(&["--config", path.to_str().unwrap()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("llmtail.toml, line 6"), "{err}");
        assert!(err.contains("labls"), "{err}");
    }

    #[test]
    fn flags_win_over_the_config_file_and_logs_merge() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("llmtail.toml");
        std::fs::write(
            &path,
            "from = \"end\"\nmodel_name = \"cfg\"\nmax_series = 5000\n[labels]\nteam = \"x\"\n[[log]]\npath = \"/a.log\"\nlabels = { gpu = \"0\" }\n",
        )
        .unwrap();
        let s = settings(&[
            "--config",
            path.to_str().unwrap(),
            "--from",
            "start",
            "--log",
            "/b.log",
            "--label",
            "team=y",
        ])
        .unwrap();
        assert_eq!(s.from, From::Start);
        assert_eq!(s.model_name.as_deref(), Some("cfg"));
        assert_eq!(s.max_series, 5000);
        assert_eq!(s.labels, [("team".to_string(), "y".to_string())]);
        assert_eq!(s.logs.len(), 2);
        assert_eq!(s.logs[0].labels, [("gpu".to_string(), "0".to_string())]);
    }

    #[test]
    fn a_logs_timezone_wins_over_the_global_one_and_the_flag_over_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("llmtail.toml");
        std::fs::write(
            &path,
            "log_timezone = \"America/New_York\"\n[[log]]\npath = \"/tokyo.log\"\ntimezone = \"Asia/Tokyo\"\n[[log]]\npath = \"/other.log\"\n",
        )
        .unwrap();
        let config = path.to_str().unwrap();
        let zones = |args: &[&str]| -> Vec<String> {
            let s = settings(args).unwrap();
            s.logs
                .iter()
                .map(|l| l.timezone.name().to_string())
                .collect()
        };
        assert_eq!(
            zones(&["--config", config, "--log", "/flag.log"]),
            ["Asia/Tokyo", "America/New_York", "America/New_York"]
        );
        assert_eq!(
            zones(&["--config", config, "--log-timezone", "UTC"]),
            ["Asia/Tokyo", "UTC"]
        );
    }

    /// Writes `text` as a config file in `dir` and reads it with `args`.
    fn settings_with_config(
        dir: &tempfile::TempDir,
        text: &str,
        args: &[&str],
    ) -> Result<Settings, ConfigError> {
        let path = dir.path().join("llmtail.toml");
        std::fs::write(&path, text).unwrap();
        let mut all = vec!["--config", path.to_str().unwrap()];
        all.extend_from_slice(args);
        settings(&all)
    }

    /// The guide's "Config file" example, as a config file llmtail can load here: without
    /// the parts that read other files (the web config, a remote write password), which a
    /// test machine does not have.
    fn guide_config_example() -> String {
        let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/GUIDE.md"))
            .expect("docs/GUIDE.md");
        let start = "```toml\n# llmtail --config";
        let block = &guide[guide.find(start).expect("the guide's config example") + 8..];
        let block = &block[..block.find("```").unwrap()];
        let mut example: toml::Table = toml::from_str(block).expect("the example is TOML");
        example.remove("remote_write");
        if let Some(toml::Value::Table(web)) = example.get_mut("web") {
            web.remove("config_file");
        }
        toml::to_string(&example).unwrap()
    }

    /// The guide's own `path_labels` example once captured `model`, a label engines set, and
    /// was refused at start-up.
    #[test]
    fn the_guides_path_labels_example_loads() {
        let dir = tempfile::tempdir().unwrap();
        let example = guide_config_example();
        assert!(example.contains("path_labels = \"^/srv/"), "{example}");
        let settings = settings_with_config(&dir, &example, &[])
            .unwrap_or_else(|e| panic!("the guide's config example is refused:\n{e}\n{example}"));
        let entry = settings
            .logs
            .iter()
            .find(|l| l.given == "/srv/*/models/*/engine.log")
            .unwrap();
        let labels = entry.path_labels.as_ref().unwrap();
        assert_eq!(
            labels.labels("/srv/infra/models/qwen3-8b/engine.log"),
            Some(vec![
                ("team".to_string(), "infra".to_string()),
                ("deployment".to_string(), "qwen3-8b".to_string()),
            ])
        );
    }

    /// The hint for a capture named `model` suggested a regex capturing `model` again.
    #[test]
    fn the_hint_for_a_reserved_capture_suggests_a_name_that_is_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let entry = |capture: &str| {
            format!("[[log]]\npath = \"/srv/a.log\"\npath_labels = '/srv/(?P<{capture}>[^/]+)/'\n")
        };
        for reserved in ["model", "model_name", "engine", "log"] {
            let error = settings_with_config(&dir, &entry(reserved), &[])
                .unwrap_err()
                .to_string();
            let suggested = error
                .split("e.g. \"")
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .unwrap_or_else(|| panic!("no name suggested: {error}"));
            settings_with_config(&dir, &entry(suggested), &[])
                .unwrap_or_else(|e| panic!("{reserved} -> {suggested} is refused too: {e}"));
        }
        let no_capture = settings_with_config(&dir, &entry("[^/]+)(?:"), &[])
            .unwrap_err()
            .to_string();
        let hinted = no_capture.split("e.g. '").nth(1).unwrap();
        let hinted = &hinted[..hinted.find("', or").unwrap()];
        settings_with_config(
            &dir,
            &format!("[[log]]\npath = \"/srv/a.log\"\npath_labels = '{hinted}'\n"),
            &[],
        )
        .unwrap_or_else(|e| panic!("the regex the hint suggests is refused: {e}"));
    }

    fn path_labels_of(log: &LogSettings) -> Option<&str> {
        log.path_labels
            .as_ref()
            .map(crate::path_labels::PathLabels::pattern)
    }

    #[test]
    fn path_labels_kubernetes_applies_to_every_log_and_an_entrys_own_wins() {
        let dir = tempfile::tempdir().unwrap();
        let s = settings_with_config(
            &dir,
            "[[log]]\npath = \"/srv/a/vllm.log\"\npath_labels = '/srv/(?P<team>[^/]+)/'\n[[log]]\npath = \"/b.log\"\n",
            &["--path-labels", "kubernetes", "--log", "/var/log/pods/*/*/*.log"],
        )
        .unwrap();
        let patterns: Vec<_> = s.logs.iter().map(path_labels_of).collect();
        let kubernetes = Some(crate::path_labels::KUBERNETES);
        assert_eq!(
            patterns,
            [Some("/srv/(?P<team>[^/]+)/"), kubernetes, kubernetes]
        );
        let without = settings(&["--log", "/a.log"]).unwrap();
        assert_eq!(path_labels_of(&without.logs[0]), None);
    }

    #[test]
    fn path_labels_in_the_config_file_apply_to_its_logs_and_the_flag_wins() {
        let dir = tempfile::tempdir().unwrap();
        let text = "path_labels = '/srv/(?P<team>[^/]+)/'\n[[log]]\npath = \"/srv/a/vllm.log\"\n";
        let s = settings_with_config(&dir, text, &[]).unwrap();
        assert_eq!(path_labels_of(&s.logs[0]), Some("/srv/(?P<team>[^/]+)/"));
        let s = settings_with_config(&dir, text, &["--path-labels", "kubernetes"]).unwrap();
        assert_eq!(
            path_labels_of(&s.logs[0]),
            Some(crate::path_labels::KUBERNETES)
        );
    }

    #[test]
    fn bad_path_labels_name_the_entry_the_problem_and_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let entry = |path_labels: &str, labels: &str| {
            format!("[[log]]\npath = \"/srv/a.log\"\npath_labels = '{path_labels}'\nlabels = {{ {labels} }}\n")
        };
        let cases: &[(String, &[&str], &str)] = &[
            (
                entry("/srv/(?P<team>[a-z+", ""),
                &[],
                "[[log]] path \"/srv/a.log\", path_labels: \"/srv/(?P<team>[a-z+\" is not a regex",
            ),
            (entry("/srv/([a-z]+)", ""), &[], "has no named capture"),
            (
                entry("/srv/(?P<_9>[a-z]+)(?P<__x>.)", ""),
                &[],
                "capture (?P<__x>...): \"__x\" is not a valid Prometheus label name",
            ),
            (
                entry("/srv/(?P<engine>[a-z]+)", ""),
                &[],
                "capture (?P<engine>...): label \"engine\" is set by llmtail itself",
            ),
            (
                entry("/srv/(?P<log>[a-z]+)", ""),
                &[],
                "label \"log\" is set by llmtail itself",
            ),
            (
                entry("/srv/(?P<gpu>[a-z]+)", "gpu = \"0\""),
                &[],
                "the capture \"gpu\" is a label that the entry's labels set too",
            ),
            (
                entry("/srv/(?P<team>[a-z]+)", ""),
                &["--label", "team=x"],
                "the capture \"team\" is a label that [labels] or --label set too",
            ),
            (
                String::new(),
                &["--log", "/a.log", "--path-labels", "kubernetes", "--label", "namespace=x"],
                "--path-labels: the capture \"namespace\" is a label that [labels] or --label set too",
            ),
            (
                "[[log]]\npath = \"/srv/a.log\"\nlabels = { namespace = \"x\" }\n".to_string(),
                &["--path-labels", "kubernetes"],
                "[[log]] path \"/srv/a.log\" with --path-labels: the capture \"namespace\" is a label that the entry's labels set too",
            ),
            (
                String::new(),
                &["--log", "/a.log", "--path-labels", "kubernetes/(?P<pod>"],
                "--path-labels: \"kubernetes/(?P<pod>\" is not a regex",
            ),
        ];
        for (config, args, expected) in cases {
            let err = settings_with_config(&dir, config, args)
                .unwrap_err()
                .to_string();
            assert!(err.contains(expected), "{config} {args:?}: {err}");
            assert!(err.contains("fix:"), "{config} {args:?}: {err}");
        }
    }

    /// Reads `config` as the config file, with one `--log` and `flags`.
    fn settings_from(config: &str, flags: &[&str]) -> Result<Settings, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("llmtail.toml");
        std::fs::write(&path, config).unwrap();
        let mut argv = vec!["llmtail", "--log", "/var/log/vllm.log", "--config"];
        argv.push(path.to_str().unwrap());
        argv.extend_from_slice(flags);
        Settings::from_cli(Cli::try_parse_from(argv).unwrap())
    }

    #[test]
    fn the_config_file_names_remote_write_receivers_and_the_interval_and_flags_add_and_win() {
        let config = "remote_write_interval = \"30s\"\n[[remote_write]]\nurl = \"http://a:9090/api/v1/write\"\nbearer_token = \"t\"\n";
        let s = settings_from(config, &[]).unwrap();
        assert_eq!(s.remote_write.interval, std::time::Duration::from_secs(30));
        assert_eq!(
            s.remote_write.targets[0].authorization.as_deref(),
            Some("Bearer t")
        );
        let s = settings_from(
            config,
            &[
                "--remote-write.url",
                "http://b:9090/api/v1/write",
                "--remote-write.interval",
                "5s",
            ],
        )
        .unwrap();
        assert_eq!(s.remote_write.interval, std::time::Duration::from_secs(5));
        assert_eq!(
            s.remote_write.urls(),
            ["http://a:9090/api/v1/write", "http://b:9090/api/v1/write"]
        );
        let none = settings_from("", &[]).unwrap();
        assert!(none.remote_write.targets.is_empty());
        assert_eq!(
            none.remote_write.interval,
            crate::remote_write::settings::DEFAULT_INTERVAL
        );
    }

    #[test]
    fn a_remote_write_mistake_in_the_config_file_names_the_file_line_or_key() {
        let typo = "[[remote_write]]\nurl = \"http://a:9090/api/v1/write\"\nbasic_auth = { username = \"u\", pasword_file = \"/p\" }\n";
        let err = settings_from(typo, &[]).unwrap_err().to_string();
        assert!(err.contains("llmtail.toml, line 3"), "{err}");
        assert!(err.contains("pasword_file"), "{err}");
        let interval = "remote_write_interval = \"often\"\n";
        let err = settings_from(interval, &[]).unwrap_err().to_string();
        assert!(
            err.contains("llmtail.toml, remote_write_interval: \"often\" is not a duration"),
            "{err}"
        );
    }

    fn vllm_versions(settings: &Settings) -> Vec<Option<&str>> {
        settings
            .logs
            .iter()
            .map(|l| l.vllm_version.as_deref())
            .collect()
    }

    #[test]
    fn an_entrys_vllm_table_gives_its_version_as_its_vllm_version_key_does() {
        let dir = tempfile::tempdir().unwrap();
        let text = "[[log]]\npath = \"/table.log\"\n[log.vllm]\nversion = \"0.6.3\"\n\
            [[log]]\npath = \"/key.log\"\nvllm_version = \"0.6.3\"\n\
            [[log]]\npath = \"/both.log\"\nvllm_version = \"0.6.3\"\n[log.vllm]\nversion = \"0.6.3\"\n\
            [[log]]\npath = \"/neither.log\"\n";
        let s = settings_with_config(&dir, text, &["--vllm-version", "0.16.0"]).unwrap();
        assert_eq!(
            vllm_versions(&s),
            [Some("0.6.3"), Some("0.6.3"), Some("0.6.3"), Some("0.16.0")]
        );
        let s = settings_with_config(&dir, text, &[]).unwrap();
        assert_eq!(vllm_versions(&s)[3], None);
    }

    #[test]
    fn an_entrys_vllm_version_and_its_vllm_tables_version_must_agree() {
        let dir = tempfile::tempdir().unwrap();
        let text = "[[log]]\npath = \"/a.log\"\nvllm_version = \"0.6.3\"\n[log.vllm]\nversion = \"0.16.0\"\n";
        let err = settings_with_config(&dir, text, &[])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "[[log]] path \"/a.log\": vllm_version \"0.6.3\" and [log.vllm] version \"0.16.0\" disagree"
            ),
            "{err}"
        );
        assert!(err.contains("fix:"), "{err}");
    }

    #[test]
    fn an_unknown_engine_table_or_key_names_it_and_what_is_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            (
                "[[log]]\npath = \"/a.log\"\n[log.sglang]\nversion = \"0.4\"\n",
                ["line 3", "sglang", "`vllm`"],
            ),
            (
                "[[log]]\npath = \"/a.log\"\n[log.vllm]\nversoin = \"0.6.3\"\n",
                ["line 4", "versoin", "expected `version`"],
            ),
        ];
        for (text, expected) in cases {
            let err = settings_with_config(&dir, text, &[])
                .unwrap_err()
                .to_string();
            for part in expected {
                assert!(err.contains(part), "{text}: {part:?} not in {err}");
            }
            assert!(err.contains("llmtail.toml"), "{err}");
            assert!(err.contains("fix:"), "{err}");
        }
    }

    #[test]
    fn an_unknown_zone_in_the_config_file_names_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("llmtail.toml");
        let config = path.to_str().unwrap();
        std::fs::write(
            &path,
            "log_timezone = \"Mars/Olympus\"\n[[log]]\npath = \"/a.log\"\n",
        )
        .unwrap();
        let err = settings(&["--config", config]).unwrap_err().to_string();
        assert!(
            err.contains("llmtail.toml, log_timezone: \"Mars/Olympus\""),
            "{err}"
        );
        assert!(err.contains("fix:"), "{err}");
        std::fs::write(
            &path,
            "[[log]]\npath = \"/a.log\"\ntimezone = \"Mars/Olympus\"\n",
        )
        .unwrap();
        let err = settings(&["--config", config]).unwrap_err().to_string();
        assert!(
            err.contains("[[log]] path \"/a.log\", timezone: \"Mars/Olympus\""),
            "{err}"
        );
    }

    #[test]
    fn a_stats_interval_vllm_would_refuse_is_refused_naming_flag_value_and_range() {
        for given in ["1e308", "1e-300", "0.05", "86401"] {
            let err = settings(&["--log", "x", "--vllm-stats-interval", given])
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(&format!(
                    "--vllm-stats-interval: {given} seconds is outside"
                )) && err.contains("(0.1 to 86400 seconds)")
                    && err.contains("fix:"),
                "{err}"
            );
        }
        for accepted in ["0.1", "10", "86400"] {
            let s = settings(&["--log", "x", "--vllm-stats-interval", accepted]).unwrap();
            assert_eq!(
                s.vllm_stats_interval,
                StatsInterval::Fixed(accepted.parse().unwrap())
            );
        }
    }

    #[test]
    fn a_stats_interval_vllm_would_refuse_in_the_config_file_names_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("llmtail.toml");
        let config = path.to_str().unwrap();
        for (value, shown) in [
            ("1e308", "1e308"),
            ("1e-300", "1e-300"),
            ("\"1e308\"", "1e308"),
        ] {
            let text = format!("vllm_stats_interval = {value}\n[[log]]\npath = \"/a.log\"\n");
            std::fs::write(&path, text).unwrap();
            let err = settings(&["--config", config]).unwrap_err().to_string();
            assert!(
                err.contains(&format!(
                    "llmtail.toml, vllm_stats_interval: {shown} seconds is outside the stats intervals vLLM accepts (0.1 to 86400 seconds)"
                )),
                "{err}"
            );
        }
    }
}
