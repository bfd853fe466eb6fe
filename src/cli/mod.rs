//! The command line. Flag names are a contract (users' unit files and scripts type them),
//! so they are spelled exactly as the docs say.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use crate::source::StartFrom;

mod log_flags;
mod replay;

pub use log_flags::LogFlags;
pub use replay::ReplayArgs;

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
/-/healthy, /-/ready (200 once every log given is open and its existing content read; 503
names each log that cannot be opened, why, and the fix); with --web.enable-lifecycle,
POST /-/reload and POST /-/quit.

Exit codes: 0 stopped by SIGTERM or SIGINT (or /-/quit), or --one-shot done; 1 a run-time error
(a --one-shot input cannot be read); 2 a start-up refused: a bad flag or config file, the
listen address taken or not this host's, a --state-file another agent uses (the message names
the input and the fix).

Reload: SIGHUP (systemctl reload llmtail) reads the --config file again: logs added are
followed, logs removed are dropped, labels and settings change, the logs that stay keep their
counters and positions. A file with a mistake is refused (the log says why) and the running
configuration stays. The listen address, telemetry path, connection limit, state file,
--from and --max-line-bytes need a restart.

Logging: on stderr; LLMTAIL_LOG=debug (or warn, or llmtail=debug,...) sets how much.

Config file keys (--config): docs/REFERENCE.md lists them all, docs/GUIDE.md (\"Config file\")
shows them in use; flags win over the file.";

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
#[derive(Debug, Clone, Default, Parser)]
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

    // The logs and how to read them (`--log`, `--config`, `--label`, ...), as `replay` has them.
    #[command(flatten)]
    pub log: LogFlags,

    /// Address to serve /metrics, the landing page and health checks on; `:PORT` is every
    /// interface (0.0.0.0:PORT). [default: 0.0.0.0:3913]
    #[arg(
        long = "web.listen-address",
        value_name = "HOST:PORT",
        display_order = 2
    )]
    pub listen_address: Option<String>,

    /// Requests answered at once; more wait for a place. Idle connections and connections
    /// still sending their request take none (a request head must arrive within 5 s); at most 64
    /// per place are open, and past that the one that waited longest is closed. [default: 64]
    #[arg(long = "web.max-connections", value_name = "N", display_order = 3)]
    pub max_connections: Option<usize>,

    /// A web config file in exporter-toolkit's YAML format: TLS (tls_server_config: cert_file,
    /// key_file, client_ca_file, client_auth_type, min_version), basic auth (basic_auth_users,
    /// bcrypt hashes) and response headers (http_server_config.headers). Relative paths in it
    /// are read from its directory. Optional: without it, plain HTTP and no authentication.
    #[arg(long = "web.config.file", value_name = "FILE", display_order = 4)]
    pub web_config_file: Option<PathBuf>,

    /// Path under which to expose metrics. [default: /metrics]
    #[arg(long = "web.telemetry-path", value_name = "PATH", display_order = 5)]
    pub telemetry_path: Option<String>,

    /// Where to start in files that exist at start-up: 'start' rebuilds the current state from
    /// what the file holds, then follows; 'end' only follows new lines. Files that appear later
    /// are always read from their first byte. [default: start]
    #[arg(long = "from", value_enum, value_name = "WHERE", display_order = 6)]
    pub from: Option<From>,

    /// The most series the units of all logs may make; a new one past it is refused.
    #[arg(
        long = "max-series",
        value_name = "N",
        long_help = max_series_help(),
        display_order = 15
    )]
    pub max_series: Option<usize>,

    /// How long the series of a log that is gone (its file deleted, or renamed away from the
    /// path or glob) stay before they are dropped from /metrics, and how long a file read
    /// under one name is remembered so that it is not read again under another (dateext
    /// rotation). A path that comes back within it goes on with the same counters. A duration
    /// such as 10m, 90s or 1h. [default: 10m]
    #[arg(long = "log-expiry", value_name = "DURATION", display_order = 16)]
    pub log_expiry: Option<String>,

    /// Keep read positions and counters in this file (written atomically), so that a restart
    /// neither re-counts nor resets counters even after the log was rotated. One agent per
    /// file: PATH.lock beside it is locked while the agent runs. Optional.
    #[arg(long = "state-file", value_name = "PATH", display_order = 17)]
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
    #[arg(long = "remote-write.url", value_name = "URL", display_order = 18)]
    pub remote_write_urls: Vec<String>,

    /// How often the series are pushed: a duration such as 15s or 1m. [default: 15s]
    #[arg(
        long = "remote-write.interval",
        value_name = "DURATION",
        display_order = 19
    )]
    pub remote_write_interval: Option<String>,

    /// Serve POST /-/reload (read the config file again, as SIGHUP does) and POST /-/quit
    /// (stop cleanly), as Prometheus does with the same flag. Off by default: anyone who can
    /// reach the port could use them.
    #[arg(long = "web.enable-lifecycle", display_order = 21)]
    pub enable_lifecycle: bool,

    /// Read the logs to their current end, print the metrics (Prometheus text format) to
    /// stdout and exit, instead of serving them. How to test a log.
    #[arg(long = "one-shot", display_order = 22)]
    pub one_shot: bool,
}

/// What llmtail does besides following logs.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Turns whole logs into Prometheus history: OpenMetrics text with a timestamp on every
    /// sample, for `promtool tsdb create-blocks-from openmetrics`.
    #[command(long_about = replay::LONG_ABOUT, after_help = replay::AFTER_HELP)]
    Replay(ReplayArgs),
}
