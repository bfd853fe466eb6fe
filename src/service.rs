//! Talking to systemd (`Type=notify`): ready once the logs' existing content is read, watchdog
//! pings from the reader's loop (a reader stuck for `WatchdogSec` gets the agent restarted),
//! and stopping. Without `NOTIFY_SOCKET` (not under systemd) every call does nothing.

use std::time::{Duration, Instant};

use sd_notify::NotifyState;

/// What the service manager is told, and when the watchdog was last pinged.
#[derive(Debug)]
pub struct ServiceManager {
    /// Half of `WatchdogSec`, as systemd advises; `None` without a watchdog.
    ping_every: Option<Duration>,
    last_ping: Instant,
}

impl ServiceManager {
    /// Reads the watchdog settings systemd passed (`WATCHDOG_USEC`, `WATCHDOG_PID`).
    pub fn from_environment() -> ServiceManager {
        ServiceManager {
            ping_every: sd_notify::watchdog_enabled().map(|timeout| timeout / 2),
            last_ping: Instant::now(),
        }
    }

    /// The logs' existing content is read: the agent is ready.
    pub fn ready(&self) {
        self.tell(&[NotifyState::Ready]);
    }

    /// Called from the reader's loop (at least every poll interval): pings the watchdog when due.
    pub fn tick(&mut self) {
        let Some(every) = self.ping_every else {
            return;
        };
        if self.last_ping.elapsed() >= every {
            self.last_ping = Instant::now();
            self.tell(&[NotifyState::Watchdog]);
        }
    }

    /// The agent is shutting down (saving its state).
    pub fn stopping(&self) {
        self.tell(&[NotifyState::Stopping]);
    }

    fn tell(&self, state: &[NotifyState]) {
        if let Err(error) = sd_notify::notify(state) {
            tracing::debug!(%error, "cannot notify the service manager");
        }
    }
}
