//! When a record happened, as the state is told: the time its line says, or the moment it was
//! read, depending on what the pipeline reads for ([`Reading`]) and whether the catch-up over
//! what the logs held at start-up is done.

use std::time::SystemTime;

use crate::state::{LogState, State};

/// What the pipeline reads for, which decides how records are dated and engines judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// `--one-shot`: the logs as they stood when written, judged by their stamps alone.
    Stamps,
    /// Serving: once the catch-up has read what the logs held, a record is a sign of life at
    /// the moment it is read ([`crate::state::log_clock`]).
    Following,
    /// `llmtail replay`: by stamps, and a log's times never run backwards (a record dated
    /// before the previous one is placed at the previous one's time).
    Replay,
}

/// How the records of one batch are dated: the pipeline's [`Reading`], whether the catch-up is
/// over, and the agent's clock.
pub(super) struct Dating {
    pub reading: Reading,
    pub caught_up: bool,
    pub now: f64,
}

impl Dating {
    /// The time a record is applied at, from `raw`, the time its line says (`None` when it says
    /// none); tells the log's clock ([`LogClock`](crate::state::log_clock::LogClock)) that the
    /// log was heard from, and counts a record dated before an earlier one.
    pub fn date(&self, raw: Option<f64>, log: &mut LogState) -> Option<f64> {
        let time = match (self.reading, self.caught_up) {
            (Reading::Following, true) => log.clock.heard_live(self.now, raw),
            (Reading::Following, false) => {
                let time = raw.map(|t| t - log.clock.correction());
                if let Some(t) = time {
                    log.clock.heard_backlog(self.now, t);
                }
                time
            }
            (Reading::Stamps | Reading::Replay, _) => raw,
        }?;
        match log.latest_line_at {
            Some(latest) if time < latest => {
                log.out_of_order += 1;
                // A history's counters must not go back in time: Prometheus reads a counter
                // that decreases from one sample to the next as a reset.
                Some(if self.reading == Reading::Replay {
                    latest
                } else {
                    time
                })
            }
            _ => Some(time),
        }
    }
}

/// The catch-up is over at `now`: records are dated as they arrive from here on, and, when
/// following, each log's clock learns how its stamps stood against the agent's.
pub(super) fn catch_up(state: &mut State, reading: Reading, now: f64) {
    state.caught_up = true;
    if reading == Reading::Following {
        for log in state.logs.iter_mut().flatten() {
            let modified = modified_at(&log.label, now);
            log.clock.caught_up(now, modified, log.latest_line_at);
        }
    }
}

/// When the file at `path` was last written, on the agent's clock at `now` (which reads the
/// system clock through the monotonic one: the two are compared as they stand now).
fn modified_at(path: &str, now: f64) -> Option<f64> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let ago = SystemTime::now().duration_since(modified).ok()?;
    Some(now - ago.as_secs_f64())
}
