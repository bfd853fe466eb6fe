//! `llmtail replay`'s flags: its own (`--out`, `--since`, `--until`) and the agent's
//! [`LogFlags`], which mean what they mean for the agent and are checked by the same code
//! (`ReplayArgs::settings` in `backfill::args`).
//!
//! The shared flags are declared once; only their wording and order are replay's own, kept
//! as `llmtail replay --help` and its man page have always shown them.

use clap::{Arg, Args};

use super::LogFlags;

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
#[command(mut_args(replay_wording))]
pub struct ReplayArgs {
    // `--log`, `--config`, `--envelope`, ...: the agent's flags.
    #[command(flatten)]
    pub log: LogFlags,

    /// Where to write the OpenMetrics text (to a temporary file beside FILE, renamed to FILE
    /// once complete; a device, FIFO or symlink is written as it is); '-' or none for standard
    /// output. Never one of the logs read.
    #[arg(long = "out", value_name = "FILE", display_order = 2)]
    pub out: Option<String>,

    /// Samples before this time are not written (the lines before it still build the
    /// counters). An RFC 3339 time (2026-11-20T09:30:00Z, 2026-11-20T18:30:00+09:00), a time
    /// without an offset (2026-11-20T09:30:00) or a date (2026-11-20, midnight), the last two
    /// in --log-timezone (else the config file's log_timezone, else the machine's zone).
    #[arg(long = "since", value_name = "TIME", display_order = 3)]
    pub since: Option<String>,

    /// Samples from this time on are not written: --since 2026-11-20 --until 2026-11-21 is one
    /// day. The same forms as --since.
    #[arg(long = "until", value_name = "TIME", display_order = 4)]
    pub until: Option<String>,
}

/// How `replay` words and orders the flags it shares with the agent: by [`LogFlags`]' field
/// (the argument's id), the place in `--help` and the help text, written as `--help` shows it
/// (without the final period that clap drops from a one-sentence doc comment).
const REPLAY_WORDING: &[(&str, usize, &str)] = &[
    (
        "logs",
        1,
        "A log file to replay, a glob ('/var/log/vllm/*.log', quoted), or '-' for standard \
         input. Repeatable; each log's series carry its own log label",
    ),
    (
        "config",
        5,
        "Read a TOML config file (the agent's: [[log]] entries, labels, settings); flags win",
    ),
    (
        "envelope",
        6,
        "How log lines are wrapped, as for the agent. [default: auto]",
    ),
    (
        "log_timezone",
        7,
        "The time zone of times a log prints without one, as for the agent (an IANA name such \
         as Asia/Tokyo, or UTC); also that of --since and --until without an offset. \
         [default: the machine's own zone, from TZ or /etc/localtime]",
    ),
    (
        "model_name",
        8,
        "The model_name label when the log never names its model",
    ),
    (
        "labels",
        9,
        "A constant label added to every engine series, e.g. --label instance_group=a. \
         Repeatable",
    ),
    (
        "vllm_stats_interval",
        10,
        "vLLM's stats interval, as for the agent: 'auto' or seconds. [default: auto]",
    ),
    (
        "vllm_version",
        11,
        "The vLLM version that wrote the logs, for logs whose start-up lines are gone",
    ),
    (
        "path_labels",
        12,
        "Labels from each log file's path, as for the agent: 'kubernetes' (namespace, pod, \
         container from kubelet's .../pods/<namespace>_<pod>_<uid>/<container>/N.log) or a \
         regex whose named captures become labels",
    ),
    (
        "max_line_bytes",
        13,
        "Lines longer than this are skipped. [default: 65536]",
    ),
];

/// Gives a shared flag `replay`'s wording and place ([`REPLAY_WORDING`]).
fn replay_wording(arg: Arg) -> Arg {
    match REPLAY_WORDING.iter().find(|(id, _, _)| arg.get_id() == *id) {
        Some((_, order, help)) => arg.display_order(*order).help(*help),
        None => arg,
    }
}
