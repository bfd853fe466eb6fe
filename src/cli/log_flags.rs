//! The flags that say which logs to read and how: declared once, flattened into the agent's
//! command line and `llmtail replay`'s, and turned into settings by the same code.
//!
//! The help texts here are the agent's; `replay` words some of them for itself and orders
//! them its own way (see [`super::replay`]). `display_order` keeps each flag where the agent's
//! `--help` and man page have always listed it, between the agent's own flags.

use std::path::PathBuf;

use clap::Args;

use crate::envelope::EnvelopeKind;

/// The flags of the logs and their reading, shared by the agent and `llmtail replay`.
#[derive(Debug, Clone, Default, Args)]
pub struct LogFlags {
    /// A log file to follow, a glob ('/var/log/vllm/*.log', quoted; files that match later are
    /// picked up), or '-' for standard input. Repeatable. A file that does not exist yet is waited for.
    #[arg(long = "log", value_name = "PATH", display_order = 1)]
    pub logs: Vec<String>,

    /// The model_name label when the log never names its model (the engine config line wins).
    #[arg(long = "model-name", value_name = "NAME", display_order = 7)]
    pub model_name: Option<String>,

    /// A constant label added to every engine series, e.g. --label instance_group=a. Repeatable.
    #[arg(long = "label", value_name = "NAME=VALUE", display_order = 8)]
    pub labels: Vec<String>,

    /// Labels from each log file's path, for every log: 'kubernetes' gives namespace, pod and
    /// container from kubelet's /var/log/pods/<namespace>_<pod>_<uid>/<container>/N.log (under
    /// any mount point), or a regex whose named captures become labels, e.g.
    /// '/srv/(?P<team>[^/]+)/'. A file whose path does not match is read without them. A
    /// `[[log]]` entry's own path_labels wins for its log.
    #[arg(
        long = "path-labels",
        value_name = "kubernetes|REGEX",
        display_order = 9
    )]
    pub path_labels: Option<String>,

    /// vLLM's stats interval (VLLM_LOG_STATS_INTERVAL), which turns each stats line's throughput
    /// into tokens for the token counters: 'auto' learns it per engine from the spacing of its
    /// lines (10 until learned); a number of seconds forces it. [default: auto]
    #[arg(
        long = "vllm-stats-interval",
        value_name = "SECONDS|auto",
        display_order = 10
    )]
    pub vllm_stats_interval: Option<String>,

    /// The vLLM version that wrote the logs, for logs whose start-up lines (which name it) are
    /// gone: it decides what 'Avg prompt throughput' counts (all prompt tokens up to 0.15, only
    /// computed ones from 0.16). The version on the log's engine config line wins.
    #[arg(long = "vllm-version", value_name = "VERSION", display_order = 11)]
    pub vllm_version: Option<String>,

    /// How log lines are wrapped: detected per file from its first lines ('auto'), or one of
    /// plain, docker (json-file driver), cri (Kubernetes /var/log/pods), json (JSON logging,
    /// text in "message"), journald (journalctl short/short-iso, syslog). [default: auto]
    #[arg(long = "envelope", value_enum, value_name = "KIND", display_order = 12)]
    pub envelope: Option<EnvelopeKind>,

    /// The time zone of times a log prints without one (vLLM's `11-22 13:25:01`, syslog's
    /// `Nov 22 13:25:01`): an IANA name such as Asia/Tokyo, or UTC, or `auto`: learn the
    /// offset between the log's clock and the agent's from live lines (rounded to the quarter
    /// hour) and take it off. A `[[log]]` entry's `timezone` wins for its log. Times with a zone
    /// keep it (Docker, CRI, Triton's heads). Liveness never depends on it: an engine is judged
    /// by how long ago its last line arrived. [default: the agent's own zone, from TZ or
    /// /etc/localtime]
    #[arg(long = "log-timezone", value_name = "ZONE", display_order = 13)]
    pub log_timezone: Option<String>,

    /// Lines longer than this are skipped up to their newline and counted in
    /// llmtail_lines_skipped_total{reason="too_long"}. [default: 65536]
    #[arg(long = "max-line-bytes", value_name = "BYTES", display_order = 14)]
    pub max_line_bytes: Option<usize>,

    /// Read a TOML config file with the same settings and per-log labels; flags win.
    #[arg(long = "config", value_name = "FILE", display_order = 20)]
    pub config: Option<PathBuf>,
}
