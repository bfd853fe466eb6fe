//! A file the reader announces becomes a log in the state: with the labels, model name and
//! zone its `--log` (or `[[log]]`) gives it, and with the counters it had before, whether it
//! left and came back while the agent ran or the state file saved them before a restart.

use std::sync::Arc;

use crate::checkpoint::Checkpoint;
use crate::config::LogSettings;
use crate::path_labels::PathLabels;
use crate::source::LogSpec;
use crate::state::log_clock::LogClock;
use crate::state::{LogState, State};

/// What a newly followed file's log is made from: each `--log` (or `[[log]]`) entry, and what
/// the state file saved at the last run.
pub(super) struct LogSetup {
    /// Each `--log` (or `[[log]]`): what applies to the files it names.
    pub sources: Vec<LogSettings>,
    pub max_line_bytes: usize,
    /// What the state file held at start-up (`--state-file`).
    pub restored: Option<Checkpoint>,
}

impl LogSetup {
    /// The entry that `spec` was given by, if one still is.
    pub fn entry(&self, spec: &LogSpec) -> Option<&LogSettings> {
        self.sources.iter().find(|s| s.spec == *spec)
    }

    /// Puts the log of a file followed from now on under `label` at `index` in the state: that
    /// of an earlier file of the same label if one is kept (a path that came back: one log, one
    /// set of series), else what the state file saved of it, else new. Returns the index the
    /// log moved from, if it did.
    pub fn place(
        &self,
        state: &mut State,
        index: usize,
        label: Arc<str>,
        source: LogSpec,
    ) -> Option<usize> {
        let earlier = state.find_log(&label).filter(|&at| at != index);
        let moved = earlier.and_then(|at| Some((at, state.take_log(at)?)));
        let (moved_from, log_state) = match moved {
            Some((at, earlier)) => {
                tracing::info!(log = %label, "a log that was gone is back; its counters go on");
                (Some(at), earlier)
            }
            None => (None, self.new_log_state(label, source)),
        };
        state.insert_log(index, log_state);
        moved_from
    }

    /// A log's state as it starts: empty, or with what the state file saved of it.
    fn new_log_state(&self, label: Arc<str>, source: LogSpec) -> LogState {
        let settings = self.entry(&source);
        let from_glob = matches!(source, LogSpec::Glob(_));
        let mut log_state = LogState::new(
            label.clone(),
            source,
            settings.map(|s| s.labels.clone()).unwrap_or_default(),
            settings.and_then(|s| s.model_name.clone()),
            settings.and_then(|s| s.vllm_version.as_deref()),
        );
        log_state.from_glob = from_glob;
        log_state.clock = LogClock::new(settings.is_some_and(|s| s.timezone.is_auto()));
        log_state.path_labels = labels_from_path(settings, &label).unwrap_or_else(|path_labels| {
            tracing::info!(
                log = %label,
                path_labels = path_labels.pattern(),
                "the path does not match path_labels: its series have no labels from it"
            );
            Vec::new()
        });
        if let Some(saved) = self.restored.as_ref().and_then(|r| r.log(&label)) {
            saved.restore_into(&mut log_state);
            tracing::info!(log = %label, "restored counters from the state file");
        }
        log_state
    }
}

/// The labels the `path_labels` of a file's log (`source`) take from the file's `path`: none
/// without `path_labels`, `Err` with the regex when it does not match. Run once per file, when
/// it is discovered (and at a reload), never per line.
pub(super) fn labels_from_path<'a>(
    source: Option<&'a LogSettings>,
    path: &str,
) -> Result<Vec<(String, String)>, &'a PathLabels> {
    match source.and_then(|s| s.path_labels.as_ref()) {
        Some(path_labels) => path_labels.labels(path).ok_or(path_labels),
        None => Ok(Vec::new()),
    }
}
