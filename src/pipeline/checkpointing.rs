//! `--state-file`: when the state is saved. A [`Sink`] around the pipeline that writes the
//! state file a while after lines or events came, never between a batch and its offset, and
//! once more when the reader stops.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::checkpoint::{Checkpoint, SavedLog, VERSION};
use crate::source::{KnownFiles, Lines, LogId, LogSpec, Sink, TailEvent};

/// How often the state file is rewritten while lines flow.
pub const CHECKPOINT_INTERVAL: Duration = Duration::from_secs(5);

/// What a sink saves of its logs: each one's counters and the position they correspond to.
pub trait Checkpointed {
    fn saved_logs(&self) -> Vec<SavedLog>;
}

/// `inner`, with its state saved to a file as it reads.
pub struct Checkpointing<S> {
    inner: S,
    path: PathBuf,
    /// The reader's registry of files read, saved with the state.
    known: KnownFiles,
    last_saved: Instant,
    /// Lines or events came since the last save.
    changed: bool,
}

impl<S: Sink + Checkpointed> Checkpointing<S> {
    /// Saves `inner`'s state to `path` as lines flow and when the reader stops. `known` is the
    /// reader's registry of files read ([`crate::source::Reader::known_files`]), saved with it.
    pub fn new(inner: S, path: PathBuf, known: KnownFiles) -> Checkpointing<S> {
        Checkpointing {
            inner,
            path,
            known,
            last_saved: Instant::now(),
            changed: false,
        }
    }

    /// Saves if something changed and the last save is old enough.
    fn save_if_due(&mut self) {
        if self.changed && self.last_saved.elapsed() >= CHECKPOINT_INTERVAL {
            self.save();
        }
    }

    fn save(&mut self) {
        let checkpoint = Checkpoint {
            version: VERSION,
            logs: self.inner.saved_logs(),
            files: self.known.saved(),
        };
        self.last_saved = Instant::now();
        self.changed = false;
        if let Err(e) = checkpoint.save(&self.path) {
            tracing::warn!("{e}");
        }
    }
}

impl<S: Sink + Checkpointed> Sink for Checkpointing<S> {
    fn lines(&mut self, log: LogId, lines: &mut Lines<'_>) {
        self.changed = true;
        self.inner.lines(log, lines);
    }

    fn event(&mut self, log: LogId, event: TailEvent) {
        self.changed = true;
        let offset = matches!(event, TailEvent::Offset(_));
        self.inner.event(log, event);
        // Only after an offset do the state and the saved position agree: every line before
        // the offset is applied, none after it.
        if offset {
            self.save_if_due();
        }
    }

    fn caught_up(&mut self) {
        self.inner.caught_up();
    }

    /// Saves the state a while after the last lines, not only when more lines come: a
    /// `kill -9` after a burst then a quiet hour lost the whole burst (and a rotation while
    /// down lost what followed the stale position).
    fn tick(&mut self) {
        self.save_if_due();
        self.inner.tick();
    }

    fn new_specs(&mut self) -> Option<Vec<LogSpec>> {
        self.inner.new_specs()
    }

    /// Writes the state file once more: every position is final.
    fn stopped(&mut self) {
        self.inner.stopped();
        self.save();
    }
}
