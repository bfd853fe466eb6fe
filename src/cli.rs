//! The command line. Flag names are a contract (users' unit files and scripts type them),
//! so they are spelled exactly as the issues and the README say.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use crate::envelope::EnvelopeKind;
use crate::source::StartFrom;

/// `--from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum From {
    /// Read what each file already holds (rebuilds gauges, counters, model name, capacity), then follow.
    Start,
    /// Only follow lines written from now on.
    End,
}

impl From {
    pub fn start_from(self) -> StartFrom {
        match self {
            From::Start => StartFrom::Start,
            From::End => StartFrom::End,
        }
    }
}

/// What `--help` says after the flags: endpoints, exit codes, logging, the config file.
const AFTER_HELP: &str = "\
Endpoints: /metrics (or --web.telemetry-path), / (what is followed, and how it stands),
/-/healthy, /-/ready (ready once the logs' existing content is read); with
--web.enable-lifecycle, POST /-/reload and POST /-/quit.

Exit codes: 0 stopped by SIGTERM or SIGINT (or /-/quit), or --one-shot done; 1 a run-time error
(the port is taken, a --one-shot input cannot be read); 2 a bad flag or config file, or a
--state-file another agent uses (the message names it and the fix).

Reload: SIGHUP (systemctl reload llmtail) reads the --config file again: logs added are
followed, logs removed are dropped, labels and settings change, the logs that stay keep their
counters and positions. A file with a mistake is refused (the log says why) and the running
configuration stays. The listen address, telemetry path, connection limit, state file,
--from and --max-line-bytes need a restart.

Logging: on stderr; LLMTAIL_LOG=debug (or warn, or llmtail=debug,...) sets how much.

Config file keys (--config): the README's \"Config file\" section; flags win over the file.";

/// What `llmtail --help` opens with: the engines are the registry's.
fn long_about() -> String {
    format!(
        "Follows the logs of LLM inference engines ({}) and serves what their stats lines say \
         as Prometheus metrics, under the engines' own metric names.\n\n\
         Example: llmtail --log /var/log/vllm.log, then curl localhost:3913/metrics",
        crate::engines::display_names()
    )
}

/// `--max-series`'s help, with every engine's per-log caps.
fn max_series_help() -> String {
    format!(
        "The most series the units (engines, ranks, slots, routes) of all logs may make (each \
         costs its rows in the metric table); a new one past it is refused and counted in \
         llmtail_series_refused_total. Each log also has fixed caps on new units: {}. [default: \
         100000]",
        crate::engines::caps_text()
    )
}

/// Follows the logs of LLM inference engines and serves what their stats lines say as
/// Prometheus metrics, under the engines' own metric names.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "llmtail",
    version,
    about,
    long_about = long_about(),
    max_term_width = 100,
    after_help = AFTER_HELP,
    // `llmtail --log X` stays the agent; `llmtail replay ...` is the subcommand, whose flags
    // are its own (a flag of the agent's before `replay` would be silently ignored otherwise).
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// Without a command, llmtail follows the logs and serves /metrics.
    #[command(subcommand)]
    pub command: Option<Command>,

    /// A log file to follow, a glob ('/var/log/vllm/*.log', quoted; files that match later are
    /// picked up), or '-' for standard input. Repeatable. A file that does not exist yet is waited for.
    #[arg(long = "log", value_name = "PATH")]
    pub logs: Vec<String>,

    /// Address to serve /metrics, the landing page and health checks on.
    /// [default: 0.0.0.0:3913]
    #[arg(long = "web.listen-address", value_name = "HOST:PORT")]
    pub listen_address: Option<String>,

    /// Requests answered at once; more wait for a place. Idle connections and connections
    /// still sending their request take none (a request head must arrive within 5 s); at most 64
    /// per place are open, and past that the one that waited longest is closed. [default: 64]
    #[arg(long = "web.max-connections", value_name = "N")]
    pub max_connections: Option<usize>,

    /// A web config file in exporter-toolkit's YAML format: TLS (tls_server_config: cert_file,
    /// key_file, client_ca_file, client_auth_type, min_version), basic auth (basic_auth_users,
    /// bcrypt hashes) and response headers (http_server_config.headers). Relative paths in it
    /// are read from its directory. Optional: without it, plain HTTP and no authentication.
    #[arg(long = "web.config.file", value_name = "FILE")]
    pub web_config_file: Option<PathBuf>,

    /// Path under which to expose metrics. [default: /metrics]
    #[arg(long = "web.telemetry-path", value_name = "PATH")]
    pub telemetry_path: Option<String>,

    /// Where to start in files that exist at start-up: 'start' rebuilds the current state from
    /// what the file holds, then follows; 'end' only follows new lines. Files that appear later
    /// are always read from their first byte. [default: start]
    #[arg(long = "from", value_enum, value_name = "WHERE")]
    pub from: Option<From>,

    /// The model_name label when the log never names its model (the engine config line wins).
    #[arg(long = "model-name", value_name = "NAME")]
    pub model_name: Option<String>,

    /// A constant label added to every engine series, e.g. --label instance_group=a. Repeatable.
    #[arg(long = "label", value_name = "NAME=VALUE")]
    pub labels: Vec<String>,

    /// Labels from each log file's path, for every log: 'kubernetes' gives namespace, pod and
    /// container from kubelet's /var/log/pods/<namespace>_<pod>_<uid>/<container>/N.log (under
    /// any mount point), or a regex whose named captures become labels, e.g.
    /// '/srv/(?P<team>[^/]+)/'. A file whose path does not match is read without them. A
    /// `[[log]]` entry's own path_labels wins for its log.
    #[arg(long = "path-labels", value_name = "kubernetes|REGEX")]
    pub path_labels: Option<String>,

    /// vLLM's stats interval (VLLM_LOG_STATS_INTERVAL), which turns each stats line's throughput
    /// into tokens for the token counters: 'auto' learns it per engine from the spacing of its
    /// lines (10 until learned); a number of seconds forces it. [default: auto]
    #[arg(long = "vllm-stats-interval", value_name = "SECONDS|auto")]
    pub vllm_stats_interval: Option<String>,

    /// The vLLM version that wrote the logs, for logs whose start-up lines (which name it) are
    /// gone: it decides what 'Avg prompt throughput' counts (all prompt tokens up to 0.15, only
    /// computed ones from 0.16). The version on the log's engine config line wins.
    #[arg(long = "vllm-version", value_name = "VERSION")]
    pub vllm_version: Option<String>,

    /// How log lines are wrapped: detected per file from its first lines ('auto'), or one of
    /// plain, docker (json-file driver), cri (Kubernetes /var/log/pods), json (JSON logging,
    /// text in "message"), journald (journalctl short/short-iso, syslog). [default: auto]
    #[arg(long = "envelope", value_enum, value_name = "KIND")]
    pub envelope: Option<EnvelopeKind>,

    /// The time zone of times a log prints without one (vLLM's `11-22 13:25:01`, syslog's
    /// `Nov 22 13:25:01`): an IANA name such as Asia/Tokyo, or UTC, or `auto`: learn the
    /// offset between the log's clock and the agent's from live lines (rounded to the quarter
    /// hour) and take it off. A `[[log]]` entry's `timezone` wins for its log. Times with a zone
    /// keep it (Docker, CRI, Triton's heads). Liveness never depends on it: an engine is judged
    /// by how long ago its last line arrived. [default: the agent's own zone, from TZ or
    /// /etc/localtime]
    #[arg(long = "log-timezone", value_name = "ZONE")]
    pub log_timezone: Option<String>,

    /// Lines longer than this are skipped up to their newline and counted in
    /// llmtail_lines_skipped_total{reason="too_long"}. [default: 65536]
    #[arg(long = "max-line-bytes", value_name = "BYTES")]
    pub max_line_bytes: Option<usize>,

    /// The most series the units of all logs may make; a new one past it is refused.
    #[arg(long = "max-series", value_name = "N", long_help = max_series_help())]
    pub max_series: Option<usize>,

    /// How long the series of a log that is gone (its file deleted, or renamed away from the
    /// path or glob) stay before they are dropped from /metrics, and how long a file read
    /// under one name is remembered so that it is not read again under another (dateext
    /// rotation). A path that comes back within it goes on with the same counters. A duration
    /// such as 10m, 90s or 1h. [default: 10m]
    #[arg(long = "log-expiry", value_name = "DURATION")]
    pub log_expiry: Option<String>,

    /// Keep read positions and counters in this file (written atomically), so that a restart
    /// neither re-counts nor resets counters even after the log was rotated. One agent per
    /// file: PATH.lock beside it is locked while the agent runs. Optional.
    #[arg(long = "state-file", value_name = "PATH")]
    pub state_file: Option<PathBuf>,

    /// Push every series to this Prometheus remote-write receiver (remote write 1.0: protobuf
    /// and snappy), e.g. http://prometheus:9090/api/v1/write (Prometheus started with
    /// --web.enable-remote-write-receiver), for a host that cannot be scraped. Repeatable.
    /// The --labels go on every pushed series (set one that names the host, e.g.
    /// --label instance=$(hostname)). Each receiver has a queue of 100000 samples (an hour of
    /// 400 series at 15 s); when full the oldest are dropped and counted in
    /// llmtail_remote_write_samples_dropped_total. Network errors, 5xx and 429 are retried
    /// with backoff (30 ms to 5 s); other 4xx are dropped. Authentication and TLS: the config
    /// file's [[remote_write]].
    #[arg(long = "remote-write.url", value_name = "URL")]
    pub remote_write_urls: Vec<String>,

    /// How often the series are pushed: a duration such as 15s or 1m. [default: 15s]
    #[arg(long = "remote-write.interval", value_name = "DURATION")]
    pub remote_write_interval: Option<String>,

    /// Read a TOML config file with the same settings and per-log labels; flags win.
    #[arg(long = "config", value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Serve POST /-/reload (read the config file again, as SIGHUP does) and POST /-/quit
    /// (stop cleanly), as Prometheus does with the same flag. Off by default: anyone who can
    /// reach the port could use them.
    #[arg(long = "web.enable-lifecycle")]
    pub enable_lifecycle: bool,

    /// Read the logs to their current end, print the metrics (Prometheus text format) to
    /// stdout and exit, instead of serving them. How to test a log.
    #[arg(long = "one-shot")]
    pub one_shot: bool,
}

/// What llmtail does besides following logs.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Turns whole logs into Prometheus history: OpenMetrics text with a timestamp on every
    /// sample, for `promtool tsdb create-blocks-from openmetrics`.
    #[command(long_about = crate::backfill::args::LONG_ABOUT, after_help = crate::backfill::args::AFTER_HELP)]
    Replay(crate::backfill::args::ReplayArgs),
}
