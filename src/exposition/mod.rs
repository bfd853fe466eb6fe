//! Exposition: the HTTP side. `/metrics` (or `--web.telemetry-path`), a landing page at `/`
//! that says what is followed, and `/-/healthy`, `/-/ready` as Prometheus' own servers have.
//!
//! [`app`] builds the router from shared state so tests can call it without a socket;
//! [`serve`] takes the listener and the shutdown future so tests bind `127.0.0.1:0`.

mod auth;
pub mod landing;
pub mod render;
pub mod serve;
mod snapshot;
pub mod tls;
pub mod web_config;
pub mod web_settings;

use std::sync::{Arc, Mutex};

use axum::extract::State as Extract;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;

use crate::clock::Clock;
use crate::samples::SharedSources;
use crate::state::State;
use render::Format;
pub use snapshot::Snapshots;

/// What the handlers share.
#[derive(Clone)]
pub struct Shared {
    pub state: Arc<Mutex<State>>,
    pub telemetry_path: Arc<str>,
    /// What the landing page shows of the settings in force (a reload replaces them): each log
    /// as given, with its zone, and the effective settings.
    pub settings: Arc<dyn Fn() -> landing::SettingsShown + Send + Sync>,
    /// What "now" is when an engine's silence is judged.
    pub clock: Clock,
    /// The newest rendered bodies, which scrapes arriving together share.
    pub snapshots: Arc<Snapshots>,
    /// `--web.enable-lifecycle`: `/-/reload` and `/-/quit` are served.
    pub lifecycle: Option<Lifecycle>,
    /// The series kept beside the state (the remote-write queues'), which follow the state's
    /// in a scrape and fill the landing page's receiver table.
    pub sources: SharedSources,
}

/// How `/-/reload` and `/-/quit` reach the rest of the agent.
#[derive(Clone)]
pub struct Lifecycle {
    pub reload: tokio::sync::mpsc::Sender<crate::reload::ReloadRequest>,
    pub quit: Arc<tokio::sync::Notify>,
}

/// The router: metrics, landing page, health.
pub fn app(shared: Shared) -> Router {
    let telemetry_path = shared.telemetry_path.to_string();
    Router::new()
        .route(&telemetry_path, get(metrics))
        .route("/", get(landing_page))
        .route("/-/healthy", get(|| async { "Healthy\n" }))
        .route("/-/ready", get(ready))
        .route("/-/reload", post(reload).put(reload).fallback(post_or_put))
        .route("/-/quit", post(quit).put(quit).fallback(post_or_put))
        .with_state(shared)
}

/// What Prometheus answers a lifecycle endpoint asked with another method.
async fn post_or_put() -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        "Only POST or PUT requests allowed\n",
    )
        .into_response()
}

/// What Prometheus answers a lifecycle endpoint without `--web.enable-lifecycle`.
fn lifecycle_disabled() -> Response {
    (
        StatusCode::FORBIDDEN,
        "Lifecycle API is not enabled (start llmtail with --web.enable-lifecycle)\n",
    )
        .into_response()
}

/// Reads the config file again, as SIGHUP does: 200 once the new configuration is in force,
/// 500 with the reason when it is refused (the running one stays).
async fn reload(Extract(shared): Extract<Shared>) -> Response {
    let Some(lifecycle) = shared.lifecycle else {
        return lifecycle_disabled();
    };
    let (reply, outcome) = tokio::sync::oneshot::channel();
    if lifecycle.reload.send(reply).await.is_err() {
        return (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response();
    }
    match outcome.await {
        Ok(Ok(summary)) => (StatusCode::OK, format!("{summary}\n")).into_response(),
        Ok(Err(why)) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("failed to reload config: {why}\n"),
        )
            .into_response(),
        Err(_) => (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response(),
    }
}

/// Stops the agent cleanly, as SIGTERM does.
async fn quit(Extract(shared): Extract<Shared>) -> Response {
    let Some(lifecycle) = shared.lifecycle else {
        return lifecycle_disabled();
    };
    lifecycle.quit.notify_one();
    (StatusCode::OK, "Requesting termination... Goodbye!\n").into_response()
}

async fn metrics(Extract(shared): Extract<Shared>, headers: HeaderMap) -> Response {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    let format = Format::negotiate(accept);
    let state = Arc::clone(&shared.state);
    let sources = Arc::clone(&shared.sources);
    let body = shared
        .snapshots
        .get(format, move |last_len| {
            render::render_after(&state, &sources, format, last_len)
        })
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

/// 200 once every log given is open and what it held at start-up is read; 503 before, with
/// one line per log that cannot be opened (the path, why, and what to do).
async fn ready(Extract(shared): Extract<Shared>) -> Response {
    let readiness = shared
        .state
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .readiness();
    match readiness {
        Ok(()) => (StatusCode::OK, "Ready\n").into_response(),
        Err(why) => (StatusCode::SERVICE_UNAVAILABLE, why).into_response(),
    }
}

/// The landing page: HTML for a browser, plain text for curl and scripts.
async fn landing_page(Extract(shared): Extract<Shared>, headers: HeaderMap) -> Response {
    let now = shared.clock.now();
    let settings = (shared.settings)();
    let page = {
        let state = shared.state.lock().unwrap_or_else(|e| e.into_inner());
        landing::Page::gather(&state, &settings, now).with_receivers(&shared.sources)
    };
    let wants_html = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"));
    if wants_html {
        Html(page.html()).into_response()
    } else {
        (
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            page.text(),
        )
            .into_response()
    }
}
