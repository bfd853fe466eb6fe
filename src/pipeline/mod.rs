//! The pipeline: the [`Sink`] the source feeds. For each line it runs the remaining stages,
//! envelope -> grammar -> state, under one lock per batch of lines ([`ingest`]); it turns the
//! reader's events into logs of the state ([`discovery`]) and their counters ([`tail_events`]),
//! takes reloaded configurations ([`reconfiguration`]), and, when serving, judges what a scrape
//! will show ([`judging`]). Saving the state file and telling systemd are sinks around it
//! ([`Checkpointing`], [`Notifying`]).

mod checkpointing;
mod dating;
mod discovery;
mod followed;
mod ingest;
mod judging;
mod notifying;
mod observer;
mod reconfiguration;
mod records;
mod state_settings;
mod tail_events;
mod zone_warning;

pub use checkpointing::{Checkpointed, Checkpointing, CHECKPOINT_INTERVAL};
pub use dating::Reading;
pub use judging::JUDGE_EVERY_SECONDS;
pub use notifying::Notifying;
pub use observer::{Applied, RecordObserver};
pub use reconfiguration::Reconfiguration;
pub use state_settings::new_state;
pub use zone_warning::zone_offset_advice;

use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::checkpoint::{Checkpoint, SavedLog};
use crate::clock::Clock;
use crate::config::Settings;
use crate::source::{Lines, LogId, LogSpec, Sink, TailEvent};
use crate::state::State;
use dating::Dating;
use discovery::LogSetup;
use followed::{FollowedLog, FollowedLogs};
use judging::Judging;
use records::Batch;

/// Envelope, grammar and state for every followed file.
pub struct Pipeline {
    state: Arc<Mutex<State>>,
    /// What a newly followed file's log is made from.
    setup: LogSetup,
    /// Per followed file: how its lines are read, and how far.
    followed: FollowedLogs,
    /// Reloaded configurations, newest last (serving only).
    reconfigurations: Option<Receiver<Reconfiguration>>,
    clock: Clock,
    reading: Reading,
    /// Serving judges as it reads; a one-shot or a replay judges at the times it writes out.
    judging: Option<Judging>,
    /// `llmtail replay`: told of every record applied.
    observer: Option<Box<dyn RecordObserver>>,
}

impl Pipeline {
    pub fn new(settings: &Settings, state: Arc<Mutex<State>>, clock: Clock) -> Pipeline {
        Pipeline {
            state,
            setup: LogSetup {
                sources: settings.logs.clone(),
                max_line_bytes: settings.max_line_bytes,
                restored: None,
            },
            followed: FollowedLogs::default(),
            reconfigurations: None,
            clock,
            reading: Reading::Stamps,
            judging: None,
            observer: None,
        }
    }

    /// How records are dated and engines judged (by stamps unless told otherwise). Following,
    /// the pipeline judges what a scrape shows as it reads and on every tick.
    pub fn reading(mut self, reading: Reading) -> Pipeline {
        self.reading = reading;
        self.judging = (reading == Reading::Following).then(Judging::default);
        self
    }

    /// Tells `observer` of every record applied, after applying it.
    pub fn with_observer(mut self, observer: Box<dyn RecordObserver>) -> Pipeline {
        self.observer = Some(observer);
        self
    }

    /// Restores the counters `restored` (a state file) holds into the logs it names, as they
    /// are discovered.
    pub fn restoring(mut self, restored: Option<Checkpoint>) -> Pipeline {
        self.setup.restored = restored;
        self
    }

    /// Takes reloaded configurations from `reconfigurations` (serving only).
    pub fn with_reconfigurations(
        mut self,
        reconfigurations: Receiver<Reconfiguration>,
    ) -> Pipeline {
        self.reconfigurations = Some(reconfigurations);
        self
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A file is followed from now on under `label`, at `index`.
    fn discover(&mut self, index: usize, label: Arc<str>, source: LogSpec) {
        let log = FollowedLog::new(self.setup.entry(&source), self.setup.max_line_bytes);
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(moved_from) = self.setup.place(&mut state, index, label, source) {
            self.followed.remove(moved_from);
        }
        self.followed.insert(index, log);
        if self.judging.is_some() {
            let State { logs, settings, .. } = &mut *state;
            if let Some(Some(log_state)) = logs.get_mut(index) {
                log_state.judge(self.clock.now(), settings);
            }
        }
    }

    /// Takes a reloaded configuration, and judges every log by it.
    fn reconfigure(&mut self, settings: &Settings) {
        let now = self.clock.now();
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        reconfiguration::reconfigure(settings, &mut self.setup, &mut state, &mut self.followed);
        if let Some(judging) = &mut self.judging {
            judging.judge_all(&mut state, &mut self.followed, now);
        }
    }
}

impl Sink for Pipeline {
    fn lines(&mut self, log: LogId, lines: &mut Lines<'_>) {
        let index = log.0 as usize;
        let now = self.clock.now();
        let mut guard = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let State {
            logs,
            settings,
            series,
            caught_up,
            ..
        } = &mut *guard;
        let (Some(followed), Some(Some(log_state))) =
            (self.followed.get_mut(index), logs.get_mut(index))
        else {
            tracing::warn!(
                log = log.0,
                "lines from a log that was never announced; dropped"
            );
            return;
        };
        let mut batch = Batch {
            dating: Dating {
                reading: self.reading,
                caught_up: *caught_up,
                now,
            },
            settings,
            series,
            observer: self.observer.as_deref_mut(),
        };
        ingest::ingest(lines, followed, log_state, &mut batch);
        if self.judging.is_some() {
            // What the lines said shows at once: a crash line brings the engine down.
            log_state.judge(now, settings);
        }
    }

    fn event(&mut self, log: LogId, event: TailEvent) {
        let index = log.0 as usize;
        if let TailEvent::Discovered { label, source } = event {
            self.discover(index, label, source);
            return;
        }
        self.followed.note_position(index, &event);
        let now = self.clock.now();
        if let Some(log_state) = self.lock().log_mut(index) {
            tail_events::count(log_state, event, now);
        }
    }

    fn tick(&mut self) {
        let Some(judging) = &mut self.judging else {
            return;
        };
        let now = self.clock.now();
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        judging.judge_if_due(&mut state, &mut self.followed, now);
    }

    fn new_specs(&mut self) -> Option<Vec<LogSpec>> {
        let newest = reconfiguration::newest(self.reconfigurations.as_ref()?)?;
        self.reconfigure(&newest.settings);
        if let Some(taken) = newest.taken {
            let _ = taken.send(());
        }
        Some(
            newest
                .settings
                .logs
                .iter()
                .map(|l| l.spec.clone())
                .collect(),
        )
    }

    fn caught_up(&mut self) {
        let now = self.clock.now();
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        dating::catch_up(&mut state, self.reading, now);
        if let Some(judging) = &mut self.judging {
            judging.judge_all(&mut state, &mut self.followed, now);
        }
        drop(state);
        tracing::info!("read what the logs held at start-up");
    }
}

impl Checkpointed for Pipeline {
    fn saved_logs(&self) -> Vec<SavedLog> {
        self.followed.saved(&self.lock())
    }
}

#[cfg(test)]
mod tests;
