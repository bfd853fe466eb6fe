//! What of the agent's settings shapes how records become series, at start-up and at a reload.

use std::sync::{Arc, Mutex};

use crate::config::Settings;
use crate::state::{GivenLog, State, StateSettings};

/// The state a pipeline built from `settings` starts with.
pub fn new_state(settings: &Settings) -> Arc<Mutex<State>> {
    let mut state = State::new(state_settings(settings));
    state.given_logs = given_logs(settings);
    Arc::new(Mutex::new(state))
}

/// The logs `settings` give, as the user wrote them.
pub(super) fn given_logs(settings: &Settings) -> Vec<GivenLog> {
    settings
        .logs
        .iter()
        .map(|log| GivenLog {
            spec: log.spec.clone(),
            given: log.given.clone(),
        })
        .collect()
}

/// What of `settings` shapes how records become series.
pub(super) fn state_settings(settings: &Settings) -> StateSettings {
    StateSettings {
        stats_interval: settings.vllm_stats_interval,
        model_name: settings.model_name.clone(),
        constant_labels: settings.labels.clone(),
        series: crate::engines::parts::caps::SeriesGuard {
            max_series: settings.max_series,
        },
        log_expiry: settings.log_expiry.as_secs_f64(),
    }
}
