//! Exposition: the HTTP side. `/metrics` (or `--web.telemetry-path`), a landing page at `/`
//! that says what is followed, and `/-/healthy`, `/-/ready` as Prometheus' own servers have.
//!
//! [`app`] builds the router from shared state so tests can call it without a socket;
//! [`serve`] takes the listener and the shutdown future so tests bind `127.0.0.1:0`.

mod auth;
pub mod render;
pub mod serve;
mod snapshot;
pub mod tls;
pub mod web_config;

use std::sync::{Arc, Mutex};

use axum::extract::State as Extract;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::config::LogSettings;
use crate::pipeline::Clock;
use crate::state::{LogState, State};
use render::Format;
pub use snapshot::Snapshots;

/// What the handlers share.
#[derive(Clone)]
pub struct Shared {
    pub state: Arc<Mutex<State>>,
    pub telemetry_path: Arc<str>,
    /// Each `--log` (or `[[log]]`): the landing page shows it as given, with its zone.
    pub logs: Arc<[LogSettings]>,
    /// What "now" is when an engine's silence is judged.
    pub clock: Clock,
    /// The newest rendered bodies, which scrapes arriving together share.
    pub snapshots: Arc<Snapshots>,
}

/// The router: metrics, landing page, health.
pub fn app(shared: Shared) -> Router {
    let telemetry_path = shared.telemetry_path.to_string();
    Router::new()
        .route(&telemetry_path, get(metrics))
        .route("/", get(landing_page))
        .route("/-/healthy", get(|| async { "Healthy\n" }))
        .route("/-/ready", get(ready))
        .with_state(shared)
}

async fn metrics(Extract(shared): Extract<Shared>, headers: HeaderMap) -> Response {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    let format = Format::negotiate(accept);
    let (state, clock) = (Arc::clone(&shared.state), shared.clock.clone());
    let body = shared
        .snapshots
        .get(format, move || render::render(&state, format, clock.now()))
        .await;
    match body {
        Ok(body) => ([(header::CONTENT_TYPE, format.content_type())], body).into_response(),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("rendering metrics failed: {e}\n"),
        )
            .into_response(),
    }
}

async fn ready(Extract(shared): Extract<Shared>) -> Response {
    let caught_up = shared.state.lock().map(|s| s.caught_up).unwrap_or(true);
    if caught_up {
        (StatusCode::OK, "Ready\n").into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "Not ready: still reading what the logs already hold\n",
        )
            .into_response()
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Whether a log is open, and if not, why.
fn log_status(log: &LogState, now: f64) -> String {
    if log.io.open {
        "open".to_string()
    } else if let Some(gone) = log.gone_since {
        format!(
            "gone {:.0} s ago (its series go after --log-expiry)",
            now - gone
        )
    } else if log.io.open_errors > 0 {
        format!(
            "cannot open it ({} attempts; the agent's log says why and the fix)",
            log.io.open_errors
        )
    } else {
        "waiting for the file to appear".to_string()
    }
}

/// One row per followed log, and one per glob that matches no file yet.
fn log_rows(state: &State, settings: &[LogSettings], now: f64) -> String {
    let mut rows = String::new();
    for log in state.shown_logs() {
        let grammars: Vec<String> = log
            .parsed
            .iter()
            .map(|g| format!("{} {}", g.grammar, g.lines))
            .collect();
        let rejected: u64 = log.rejected.iter().map(|(_, n)| n).sum();
        let skipped: u64 = log.io.skipped().iter().map(|(_, n)| n).sum();
        let last_line = log
            .latest_line_at
            .map_or("none yet".to_string(), |t| format!("{:.0} s ago", now - t));
        let zone = settings.get(log.source).map_or("", |l| l.timezone.name());
        rows.push_str(&format!(
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{rejected}</td><td>{skipped}</td><td>{last_line}</td><td>{}</td></tr>\n",
            escape(&log.label),
            escape(zone),
            escape(&log_status(log, now)),
            log.io.offset,
            log.io.lines_read,
            escape(&grammars.join(", ")),
            escape(log.vllm_model_name(&state.settings)),
        ));
    }
    for (source, given) in settings.iter().enumerate() {
        let is_glob = matches!(given.spec, crate::source::LogSpec::Glob(_));
        if is_glob && !state.iter_logs().any(|log| log.source == source) {
            rows.push_str(&format!(
                "<tr><td><code>{}</code></td><td>{}</td><td>no file matches yet (watched)</td><td colspan=\"7\"></td></tr>\n",
                escape(&given.given),
                escape(given.timezone.name()),
            ));
        }
    }
    rows
}

/// One row per vLLM engine: is it alive, which vLLM, and how its lines are read.
fn engine_rows(state: &State, now: f64) -> String {
    use crate::state::version::VersionSource;
    let mut rows = String::new();
    for log in state.shown_logs() {
        let version = match &log.vllm.version {
            Some((v, VersionSource::Line)) => format!("{} (from the log)", v.text),
            Some((v, VersionSource::Setting)) => format!("{} (from --vllm-version)", v.text),
            None => "not found in the log: read as 0.16+ (set --vllm-version)".to_string(),
        };
        for (key, engine) in &log.vllm.engines {
            let (interval, source) = engine.interval(state.settings.stats_interval);
            let age = engine
                .pacing
                .last_line_at()
                .map_or("none yet".to_string(), |t| format!("{:.0} s ago", now - t));
            rows.push_str(&format!(
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{interval} s, {}</td><td>{}</td><td>{}</td></tr>\n",
                escape(&log.label),
                escape(&key.label()),
                engine.status.as_str(),
                escape(&version),
                source.as_str(),
                age,
                engine.starts,
            ));
        }
    }
    rows
}

/// Warnings a user must act on, one paragraph each.
fn warnings(state: &State) -> String {
    state
        .shown_logs()
        .filter(|log| log.vllm.stats_logging_disabled)
        .map(|log| {
            format!(
                "<p><strong>{}: vLLM prints no stats lines</strong>: it runs several API servers \
                 (the default with --data-parallel-size). Fix: <code>vllm serve --api-server-count 1</code>.</p>\n",
                escape(&log.label)
            )
        })
        .collect()
}

async fn landing_page(Extract(shared): Extract<Shared>) -> Html<String> {
    let now = shared.clock.now();
    let (logs, engines, warnings) = {
        let mut state = shared.state.lock().unwrap_or_else(|e| e.into_inner());
        state.judge(now);
        (
            log_rows(&state, &shared.logs, now),
            engine_rows(&state, now),
            warnings(&state),
        )
    };
    let given: Vec<String> = shared
        .logs
        .iter()
        .map(|l| format!("<code>{}</code>", escape(&l.given)))
        .collect();
    let path = escape(&shared.telemetry_path);
    Html(format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>llmtail</title></head><body>\n\
         <h1>llmtail {version}</h1>\n<p>Follows the logs of LLM inference engines and serves their stats as Prometheus metrics.</p>\n\
         <ul><li><a href=\"{path}\">{path}</a>: the metrics</li><li><a href=\"/-/healthy\">/-/healthy</a>, <a href=\"/-/ready\">/-/ready</a></li></ul>\n\
         {warnings}<h2>Logs</h2>\n<p>Following {given}.</p>\n\
         <table border=\"1\" cellpadding=\"4\"><tr><th>log</th><th>time zone</th><th>file</th><th>offset (bytes)</th><th>lines read</th><th>records parsed</th><th>rejected</th><th>skipped</th><th>last stats line</th><th>model</th></tr>\n{logs}</table>\n\
         <h2>vLLM engines</h2>\n\
         <table border=\"1\" cellpadding=\"4\"><tr><th>log</th><th>engine</th><th>status</th><th>vLLM version</th><th>stats interval</th><th>last stats line</th><th>start-ups</th></tr>\n{engines}</table>\n\
         </body></html>\n",
        version = env!("CARGO_PKG_VERSION"),
        given = given.join(", "),
    ))
}
