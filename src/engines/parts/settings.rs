//! The settings that shape how every engine's records become series.

use super::caps::SeriesGuard;
use super::pacing::StatsInterval;

/// Settings that shape how records become series.
#[derive(Debug, Clone)]
pub struct StateSettings {
    /// `--vllm-stats-interval`: how vLLM's throughputs become token counts.
    pub stats_interval: StatsInterval,
    /// `--model-name`: the `model_name` label when the log never names its model.
    pub model_name: Option<String>,
    /// `--label`s: constant labels on every engine series.
    pub constant_labels: Vec<(String, String)>,
    /// `--max-series` and what one engine or rank costs against it.
    pub series: SeriesGuard,
    /// `--log-expiry`, in seconds: how long the series of a file that is gone stay.
    pub log_expiry: f64,
}
