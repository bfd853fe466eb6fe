//! The settings in force as the landing page shows them: each as a user would type it, never a
//! secret (the web config file says what it turns on, not what it holds).

use std::fmt::Write;

use crate::config::Settings;
use crate::exposition::landing::{duration, SettingsShown};

/// What the landing page shows of `settings`.
pub fn settings_shown(settings: &Settings) -> SettingsShown {
    SettingsShown {
        telemetry_path: settings.telemetry_path.clone(),
        logs: settings.logs.clone(),
        rows: rows(settings),
    }
}

/// Every setting, in the order shown.
fn rows(settings: &Settings) -> Vec<(&'static str, String)> {
    let or_none = |value: Option<String>| value.unwrap_or_else(|| "(not set)".to_string());
    let labels: Vec<String> = settings
        .labels
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect();
    let logs: Vec<String> = settings
        .logs
        .iter()
        .map(|l| {
            let mut text = format!("{} (envelope {})", l.given, l.envelope.as_str());
            for (n, v) in &l.labels {
                let _ = write!(text, " {n}={v}");
            }
            if let Some(path_labels) = &l.path_labels {
                let _ = write!(text, " path_labels {}", path_labels.given());
            }
            text
        })
        .collect();
    vec![
        ("--log / [[log]]", logs.join("; ")),
        (
            "--config",
            or_none(
                settings
                    .flags
                    .log
                    .config
                    .as_ref()
                    .map(|p| p.display().to_string()),
            ),
        ),
        ("--web.listen-address", settings.listen_address.to_string()),
        ("--web.config.file", web_config(settings)),
        ("--web.telemetry-path", settings.telemetry_path.clone()),
        (
            "--web.max-connections",
            settings.max_connections.to_string(),
        ),
        (
            "--web.enable-lifecycle",
            settings.enable_lifecycle.to_string(),
        ),
        ("--from", format!("{:?}", settings.from).to_lowercase()),
        ("--model-name", or_none(settings.model_name.clone())),
        (
            "--label",
            or_none((!labels.is_empty()).then(|| labels.join(", "))),
        ),
        (
            "--vllm-stats-interval",
            settings.vllm_stats_interval.to_string(),
        ),
        ("--max-line-bytes", settings.max_line_bytes.to_string()),
        ("--max-series", settings.max_series.to_string()),
        (
            "--log-expiry",
            duration(settings.log_expiry.as_secs()).replace(' ', ""),
        ),
        (
            "--state-file",
            or_none(
                settings
                    .state_file
                    .as_ref()
                    .map(|p| p.display().to_string()),
            ),
        ),
    ]
}

/// The web config file, and what it turns on (never its content: no hash, no key path).
fn web_config(settings: &Settings) -> String {
    let handle = &settings.web_config;
    let Some(path) = handle.path() else {
        return "(not set): plain HTTP, no authentication".to_string();
    };
    let users = handle.current().users.len();
    let tls = if handle.is_tls() { "TLS" } else { "plain HTTP" };
    format!("{}: {tls}, basic auth for {users} users", path.display())
}
