//! Is an engine still there? Judged from what its log said last and when.
//!
//! An engine's own exporter stops answering when the engine is gone, and Prometheus then marks
//! its series stale; a log just stops. So the log's last word decides: a shutdown or crash line
//! ends a run, a start-up line begins one, and an engine that showed work and then said nothing
//! for three of its intervals has stopped logging (killed, out of memory, hung), because vLLM
//! always prints the line after one that showed work. Silence after an idle line is idleness.

use serde::{Deserialize, Serialize};

/// Intervals of silence after which a line that was due means the engine is gone.
pub const OVERDUE_INTERVALS: f64 = 3.0;

/// Why an engine is down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DownReason {
    /// The server shut down in order.
    Shutdown,
    /// A crash line: the engine died.
    Crash,
    /// A stats line was due and did not come.
    Overdue,
}

impl DownReason {
    pub fn as_str(self) -> &'static str {
        match self {
            DownReason::Shutdown => "shut down",
            DownReason::Crash => "crashed",
            DownReason::Overdue => "stopped logging (a stats line is overdue)",
        }
    }
}

/// Where a log's engine run stands, from its lifecycle lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "phase")]
pub enum Phase {
    /// No start-up, shutdown or crash line seen: the log began mid-run.
    #[default]
    Unknown,
    /// A start-up line was seen, and no stats line since.
    Starting {
        #[serde(with = "super::float")]
        since: f64,
    },
    /// Stats lines are coming.
    Running,
    /// A shutdown or crash line, at `at`.
    Stopped {
        reason: DownReason,
        #[serde(with = "super::float")]
        at: f64,
    },
}

impl Phase {
    /// Whether a line at `at` belongs to a new run: the previous one stopped, or the log knew
    /// nothing of one yet. Several start-up lines in a row are one start-up.
    pub fn is_new_run(&self) -> bool {
        !matches!(self, Phase::Starting { .. })
    }
}

/// What a scrape says of an engine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Status {
    #[default]
    Up,
    /// Alive, with nothing to say: vLLM does not print idle lines.
    Idle,
    Down(DownReason),
}

impl Status {
    pub fn is_down(self) -> bool {
        matches!(self, Status::Down(_))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Up => "up",
            Status::Idle => "idle",
            Status::Down(reason) => reason.as_str(),
        }
    }
}

/// What one engine's lines say about its liveness.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LastWord {
    pub phase: Phase,
    /// When the engine's last stats line was written.
    pub last_line_at: Option<f64>,
    /// Whether another line was due after it (it showed work, or this vLLM prints idle lines).
    pub next_line_due: bool,
    pub interval: f64,
}

/// The status at `now` (seconds since the epoch).
pub fn judge(word: LastWord, now: f64) -> Status {
    if let Phase::Stopped { reason, .. } = word.phase {
        return Status::Down(reason);
    }
    let Some(last) = word.last_line_at else {
        return Status::Up;
    };
    let silent = now - last > OVERDUE_INTERVALS * word.interval;
    match (silent, word.next_line_due) {
        (false, _) => Status::Up,
        (true, true) => Status::Down(DownReason::Overdue),
        (true, false) => Status::Idle,
    }
}

/// Up while a server logs, idle once it has been silent for `idle_after` seconds: for engines
/// that log only when asked (a request, a generation) and print no line when they stop, so
/// silence is no failure.
pub fn up_until_silent(last_seen: Option<f64>, now: f64, idle_after: f64) -> Status {
    if last_seen.is_some_and(|at| now - at > idle_after) {
        Status::Idle
    } else {
        Status::Up
    }
}

/// 1 for an engine that stopped logging while a line was due, else 0: what tells a silent
/// engine with work in hand from one that shut down, crashed or is idle, which
/// `llmtail_*_engine_up` cannot.
pub fn overdue(status: Status) -> f64 {
    if status == Status::Down(DownReason::Overdue) {
        1.0
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(phase: Phase, due: bool) -> LastWord {
        LastWord {
            phase,
            last_line_at: Some(1000.0),
            next_line_due: due,
            interval: 10.0,
        }
    }

    #[test]
    fn a_due_line_missing_for_three_intervals_means_down() {
        assert_eq!(judge(word(Phase::Running, true), 1030.0), Status::Up);
        assert_eq!(
            judge(word(Phase::Running, true), 1031.0),
            Status::Down(DownReason::Overdue)
        );
    }

    #[test]
    fn silence_after_an_idle_line_is_idle() {
        assert_eq!(judge(word(Phase::Running, false), 5000.0), Status::Idle);
    }

    #[test]
    fn a_stop_line_is_down_at_once() {
        let stopped = Phase::Stopped {
            reason: DownReason::Crash,
            at: 1001.0,
        };
        assert_eq!(
            judge(word(stopped, true), 1002.0),
            Status::Down(DownReason::Crash)
        );
    }

    #[test]
    fn an_engine_starting_with_no_line_yet_is_up() {
        let starting = LastWord {
            phase: Phase::Starting { since: 1000.0 },
            last_line_at: None,
            next_line_due: false,
            interval: 10.0,
        };
        assert_eq!(judge(starting, 99_999.0), Status::Up);
    }

    /// What `llmtail_*_engine_overdue` tells that `llmtail_*_engine_up` cannot: the replay golden
    /// `vllm-0.14.1-dp2-one-engine-overdue` shows it on a whole log.
    #[test]
    fn overdue_is_one_only_for_an_engine_that_stopped_logging_with_a_line_due() {
        assert_eq!(overdue(Status::Down(DownReason::Overdue)), 1.0);
        for status in [
            Status::Up,
            Status::Idle,
            Status::Down(DownReason::Shutdown),
            Status::Down(DownReason::Crash),
        ] {
            assert_eq!(overdue(status), 0.0, "{status:?}");
        }
    }
}
