//! Where "now" comes from, for every part of the agent that asks: how long a log has been
//! silent, when a reload happened, what time a push or a replay's bookkeeping carries. Tests
//! and goldens inject a fixed or settable clock in its place.

use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Where "now" comes from: the wall clock, or a fixed time in tests and goldens.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> f64 + Send + Sync>);

impl Clock {
    /// A clock reading `now` (seconds since the epoch) each time it is asked.
    pub fn new(now: impl Fn() -> f64 + Send + Sync + 'static) -> Clock {
        Clock(Arc::new(now))
    }

    /// The system clock, read once at start and then advanced by the monotonic clock: silence
    /// is measured on it (how long since a log's last line arrived), and a wall clock that NTP
    /// or an operator steps would make an engine look silent for the size of the step.
    pub fn system() -> Clock {
        let started = Instant::now();
        let wall_at_start = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        Clock(Arc::new(move || {
            wall_at_start + started.elapsed().as_secs_f64()
        }))
    }

    pub fn fixed(seconds: f64) -> Clock {
        Clock(Arc::new(move || seconds))
    }

    pub fn now(&self) -> f64 {
        (self.0)()
    }
}
