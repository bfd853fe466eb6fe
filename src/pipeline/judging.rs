//! Bringing what a scrape shows up to date, on the reader's side: which engines are up, idle or
//! down, and which logs are gone past `--log-expiry`. A scrape only reads what was judged, so
//! judging happens where the state is written: for one log right after its lines (a crash line
//! shows at once), and for all of them when the agent's clock has moved on (silence becomes
//! overdue, a gone log expires).

use super::followed::FollowedLogs;
use crate::state::State;

/// How far the agent's clock moves between two judgements of every log. Liveness is measured
/// in stats intervals (a second at the least) and expiry in minutes: a second late is on time.
pub const JUDGE_EVERY_SECONDS: f64 = 1.0;

/// When every log was last judged.
#[derive(Debug, Default)]
pub(super) struct Judging {
    /// The agent's clock at the last judgement of every log.
    last: Option<f64>,
}

impl Judging {
    /// Judges every log at `now` if the clock has moved [`JUDGE_EVERY_SECONDS`] since the last
    /// time (either way: a test's clock may be set back).
    pub fn judge_if_due(&mut self, state: &mut State, followed: &mut FollowedLogs, now: f64) {
        let due = self
            .last
            .is_none_or(|last| (now - last).abs() >= JUDGE_EVERY_SECONDS);
        if due {
            self.judge_all(state, followed, now);
        }
    }

    /// Judges every log at `now`: the logs of a glob gone past the expiry are forgotten, and
    /// their files let go of; every engine's liveness is judged, and what it shows sampled for
    /// the landing page's charts.
    pub fn judge_all(&mut self, state: &mut State, followed: &mut FollowedLogs, now: f64) {
        for index in state.forget_expired(now) {
            followed.remove(index);
        }
        state.judge_liveness(now);
        state.sample_history(now);
        self.last = Some(now);
    }
}
