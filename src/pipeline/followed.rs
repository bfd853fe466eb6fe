//! What the pipeline keeps of each followed file besides its state: how its lines are decoded,
//! the zone its times are read in, and how far it was read. One record per file, indexed by the
//! reader's [`LogId`](crate::source::LogId) as the state's logs are.

use jiff::tz::TimeZone;
use llmtail_grammars::LogAnchors;

use crate::checkpoint::{FilePosition, SavedLog};
use crate::config::LogSettings;
use crate::envelope::{Decoder, EnvelopeKind};
use crate::source::{FileId, TailEvent};
use crate::state::State;
use crate::timezone::ZoneReader;

/// One followed file, as the pipeline reads it.
pub(super) struct FollowedLog {
    pub decoder: Decoder,
    /// The zone of times that carry none, and what reading them taught of it.
    pub zone: ZoneReader,
    /// The zone's name, for what the agent says of an offset.
    pub zone_name: String,
    /// The log's own first stage: every engine's anchors until its engine is known, then that
    /// engine's and the others' start-up lines'.
    pub anchors: LogAnchors,
    /// The file being read and the offset after the last line applied to the state.
    position: Option<(FileId, u64)>,
}

impl FollowedLog {
    /// A file of the log `source` configures (`None`: one no entry names), read from the start.
    pub fn new(source: Option<&LogSettings>, max_line_bytes: usize) -> FollowedLog {
        let (envelope, zone, zone_name) = match source {
            Some(source) => (
                source.envelope,
                source.timezone.zone().clone(),
                source.timezone.name().to_string(),
            ),
            None => (EnvelopeKind::Auto, TimeZone::UTC, "UTC".to_string()),
        };
        FollowedLog {
            decoder: Decoder::new(envelope, max_line_bytes),
            zone: ZoneReader::new(zone),
            zone_name,
            anchors: LogAnchors::new(),
            position: None,
        }
    }

    /// A reload's zone and envelope. The decoder is kept when the envelope stays, so that
    /// what it detected, and a line it holds half of, are not lost.
    pub fn reconfigure(&mut self, source: &LogSettings, max_line_bytes: usize) {
        self.zone = ZoneReader::new(source.timezone.zone().clone());
        self.zone_name = source.timezone.name().to_string();
        if self.decoder.configured() != source.envelope {
            self.decoder = Decoder::new(source.envelope, max_line_bytes);
        }
    }

    /// Notes where reading stands after `event`: a file opened is read from 0, an offset
    /// reached means every line before it is applied.
    fn note_position(&mut self, event: &TailEvent) {
        match event {
            TailEvent::Opened(file) => self.position = file.map(|f| (f, 0)),
            TailEvent::Offset(offset) => {
                if let Some((_, at)) = &mut self.position {
                    *at = *offset;
                }
            }
            _ => {}
        }
    }
}

/// Every followed file, by index.
#[derive(Default)]
pub(super) struct FollowedLogs(Vec<Option<FollowedLog>>);

impl FollowedLogs {
    pub fn get_mut(&mut self, index: usize) -> Option<&mut FollowedLog> {
        self.0.get_mut(index).and_then(Option::as_mut)
    }

    /// Follows a file at `index` from now on (in place of any that was there).
    pub fn insert(&mut self, index: usize, log: FollowedLog) {
        if self.0.len() <= index {
            self.0.resize_with(index + 1, || None);
        }
        self.0[index] = Some(log);
    }

    /// Lets go of the file at `index`: its log moved, was forgotten or dropped by a reload.
    pub fn remove(&mut self, index: usize) {
        if let Some(slot) = self.0.get_mut(index) {
            *slot = None;
        }
    }

    /// Notes where reading of the file at `index` stands after `event`.
    pub fn note_position(&mut self, index: usize, event: &TailEvent) {
        if let Some(log) = self.get_mut(index) {
            log.note_position(event);
        }
    }

    /// Each log of `state` with the position its counters correspond to, as the state file
    /// keeps them.
    pub fn saved(&self, state: &State) -> Vec<SavedLog> {
        state
            .logs
            .iter()
            .enumerate()
            .filter_map(|(index, log)| {
                let log = log.as_ref()?;
                let position = self
                    .0
                    .get(index)
                    .and_then(Option::as_ref)
                    .and_then(|followed| followed.position)
                    .map(|(file, offset)| FilePosition { file, offset });
                Some(SavedLog::capture(log, position))
            })
            .collect()
    }
}
