//! systemd's `Type=notify` and watchdog, told from the reader's side: a [`Sink`] around the
//! pipeline that says ready once the logs' existing content is read, pings the watchdog from
//! the reader's loop, and says stopping when the reader stops.

use crate::service::ServiceManager;
use crate::source::{Lines, LogId, LogSpec, Sink, TailEvent};

/// `inner`, with the service manager told how reading goes.
pub struct Notifying<S> {
    inner: S,
    service: ServiceManager,
}

impl<S: Sink> Notifying<S> {
    pub fn new(inner: S, service: ServiceManager) -> Notifying<S> {
        Notifying { inner, service }
    }
}

impl<S: Sink> Sink for Notifying<S> {
    fn lines(&mut self, log: LogId, lines: &mut Lines<'_>) {
        self.inner.lines(log, lines);
    }

    fn event(&mut self, log: LogId, event: TailEvent) {
        self.inner.event(log, event);
    }

    fn caught_up(&mut self) {
        self.inner.caught_up();
        self.service.ready();
    }

    fn tick(&mut self) {
        self.inner.tick();
        self.service.tick();
    }

    fn new_specs(&mut self) -> Option<Vec<LogSpec>> {
        self.inner.new_specs()
    }

    fn stopped(&mut self) {
        self.service.stopping();
        self.inner.stopped();
    }
}
