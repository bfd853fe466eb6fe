//! A configuration reloaded while serving, taken on the reader's thread: the logs no longer
//! given are dropped with their series, those that stay take their entry's labels, model name,
//! version, zone and envelope and keep their counters, and the settings every log shares are
//! replaced. (The file is read and checked where the reload was asked for; this applies it.)

use std::sync::mpsc::Receiver;
use std::sync::Arc;

use super::discovery::{labels_from_path, LogSetup};
use super::followed::FollowedLogs;
use super::state_settings::{given_logs, state_settings};
use crate::config::{LogSettings, Settings};
use crate::engines::EngineSetup;
use crate::source::LogSpec;
use crate::state::{LogState, State};

/// A configuration reloaded while serving, on its way to the reader's thread.
pub struct Reconfiguration {
    pub settings: Arc<Settings>,
    /// Told once the pipeline has taken it (the reader then follows its logs).
    pub taken: Option<tokio::sync::oneshot::Sender<()>>,
}

/// The newest reconfiguration waiting, if any: only the newest counts when reloads came faster
/// than a round of checks.
pub(super) fn newest(reconfigurations: &Receiver<Reconfiguration>) -> Option<Reconfiguration> {
    std::iter::from_fn(|| reconfigurations.try_recv().ok()).last()
}

/// Applies `settings` to the state and the logs followed.
pub(super) fn reconfigure(
    settings: &Settings,
    setup: &mut LogSetup,
    state: &mut State,
    followed: &mut FollowedLogs,
) {
    setup.sources.clone_from(&settings.logs);
    state.settings = state_settings(settings);
    state.given_logs = given_logs(settings);
    for (index, slot) in state.logs.iter_mut().enumerate() {
        let Some(log) = slot else {
            continue;
        };
        match setup.entry(&log.source) {
            Some(entry) => {
                reconfigure_log(log, entry);
                if let Some(followed) = followed.get_mut(index) {
                    followed.reconfigure(entry, setup.max_line_bytes);
                }
            }
            // Stdin is read for as long as it lasts: it cannot be given again.
            None if log.source == LogSpec::Stdin => {}
            None => {
                tracing::info!(log = %log.label, "dropped with its series (configuration reloaded)");
                *slot = None;
                followed.remove(index);
            }
        }
    }
    state.count_series();
}

/// A log that stays takes its entry's labels, model name, version and zone.
fn reconfigure_log(log: &mut LogState, entry: &LogSettings) {
    log.labels.clone_from(&entry.labels);
    log.path_labels = labels_from_path(Some(entry), &log.label).unwrap_or_default();
    log.model_name.clone_from(&entry.model_name);
    log.clock.set_auto(entry.timezone.is_auto());
    log.reconfigure_engines(&EngineSetup {
        vllm_version: entry.vllm_version.as_deref(),
    });
}
