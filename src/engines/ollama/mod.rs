//! What an Ollama server's log has said: the requests it answered, by route, and its runner
//! loads.
//!
//! Ollama exports no metrics of its own, so every name is llmtail's. A unit is one route, a
//! `(method, path)` pair: the request counter (by status) and the duration histogram are its
//! series. Both labels are bounded here, since gin logs whatever a client sent: the method is
//! one of HTTP's nine or `other`, and the path one of Ollama's routes (a blob digest or a model
//! name in it folded to the route's `:digest`, `:model`), else `other`. The runner series are
//! per log.

mod series;

use llmtail_grammars::ollama::{OllamaRecord, Request};
use llmtail_grammars::Parsed;
use serde::{Deserialize, Serialize};

use crate::catalog::{Metric, Row};
use crate::engines::engine::{ApplyContext, Engine, Landing, LandingCell, LogView, UnitLabels};
use crate::engines::parts::caps::Refused;
use crate::engines::parts::float;
use crate::engines::parts::histogram::Histogram;
use crate::engines::parts::liveness::Status;
use crate::engines::parts::settings::StateSettings;

/// Request-duration buckets (seconds). Gin times the whole handler, so a streamed chat counts
/// until its last token: the CLI's `HEAD /` and `GET /api/tags` take tens of microseconds
/// (all in the first bucket), embeddings and `/api/show` tens of milliseconds, chats seconds
/// to minutes, pulls minutes. The top bounds mark the stuck requests seen in Ollama's logs: 5
/// minutes is `OLLAMA_LOAD_TIMEOUT`'s default, and requests end as 500s at 10 and 30 minutes
/// (`10m0s`, `30m0s`).
pub const REQUEST_BUCKETS: [f64; 15] = [
    0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0,
];

/// HTTP's methods: any other word a client sends is `other`.
const METHODS: [&str; 9] = [
    "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "CONNECT", "TRACE",
];

/// Ollama's routes (`server/routes.go` `GenerateRoutes`, 0.1 to 2026 builds), `:name` where a
/// segment is a parameter.
const ROUTES: [&str; 31] = [
    "/",
    "/api/version",
    "/api/status",
    "/api/pull",
    "/api/push",
    "/api/tags",
    "/api/show",
    "/api/delete",
    "/api/me",
    "/api/signout",
    "/api/user/keys/:encodedKey",
    "/api/create",
    "/api/blobs/:digest",
    "/api/copy",
    "/api/experimental/web_search",
    "/api/experimental/web_fetch",
    "/api/ps",
    "/api/generate",
    "/api/chat",
    "/api/embed",
    "/api/embeddings",
    "/v1/chat/completions",
    "/v1/completions",
    "/v1/embeddings",
    "/v1/models",
    "/v1/models/:model",
    "/v1/responses",
    "/v1/images/generations",
    "/v1/images/edits",
    "/v1/audio/transcriptions",
    "/v1/messages",
];

/// The `method` label of a logged method.
pub fn method_label(method: &str) -> &'static str {
    METHODS
        .iter()
        .find(|m| **m == method)
        .copied()
        .unwrap_or("other")
}

/// The `path` label of a logged path: its route, else `other`. The query is not part of it.
pub fn path_label(path: &str) -> &'static str {
    let path = path.split_once('?').map_or(path, |(path, _)| path);
    ROUTES
        .iter()
        .find(|route| matches_route(route, path))
        .copied()
        .unwrap_or("other")
}

/// A path matches a route segment by segment, a `:name` segment matching any non-empty one.
fn matches_route(route: &str, path: &str) -> bool {
    let (mut route, mut path) = (route.split('/'), path.split('/'));
    loop {
        match (route.next(), path.next()) {
            (None, None) => return true,
            (Some(r), Some(p)) if r.starts_with(':') && !p.is_empty() => {}
            (Some(r), Some(p)) if r == p => {}
            _ => return false,
        }
    }
}

/// One route of one log: the requests it answered.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OllamaRoute {
    pub method: String,
    pub path: String,
    /// Requests answered, by status, in status order.
    pub statuses: Vec<StatusCount>,
    pub duration_seconds: Histogram,
    /// When the last one was answered (seconds since the epoch), when its line said.
    #[serde(with = "float::option")]
    pub last_at: Option<f64>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct StatusCount {
    pub status: u16,
    pub requests: u64,
}

impl OllamaRoute {
    /// `llmtail_ollama_http_requests_total`'s samples: one per status answered.
    pub fn requests_by_status(&self) -> Vec<(String, f64)> {
        self.statuses
            .iter()
            .map(|s| (s.status.to_string(), s.requests as f64))
            .collect()
    }

    fn requests(&self) -> u64 {
        self.statuses.iter().map(|s| s.requests).sum()
    }

    fn count(&mut self, request: &Request<'_>, at: Option<f64>) {
        match self
            .statuses
            .binary_search_by_key(&request.status, |s| s.status)
        {
            Ok(i) => self.statuses[i].requests += 1,
            Err(i) => self.statuses.insert(
                i,
                StatusCount {
                    status: request.status,
                    requests: 1,
                },
            ),
        }
        self.duration_seconds
            .observe(&REQUEST_BUCKETS, request.latency_seconds);
        if at.is_some() {
            self.last_at = at;
        }
    }
}

/// An Ollama server's log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OllamaLog {
    /// Every route answered, in `(path, method)` order: the exposition's order.
    pub routes: Vec<OllamaRoute>,
    /// The last `llama runner started in X seconds`.
    #[serde(with = "float::option")]
    pub runner_load_seconds: Option<f64>,
    /// How many of those lines there were.
    pub runner_loads: u64,
    /// The last `loaded runners count=N`.
    pub loaded_runners: Option<u64>,
}

impl OllamaLog {
    pub fn apply(
        &mut self,
        record: &OllamaRecord<'_>,
        at: Option<f64>,
        may_grow: bool,
    ) -> Result<(), Refused> {
        match record {
            OllamaRecord::Request(request) => self.request(request, at, may_grow)?,
            OllamaRecord::RunnerStarted { load_seconds } => {
                self.runner_load_seconds = Some(*load_seconds);
                self.runner_loads += 1;
            }
            OllamaRecord::LoadedRunners { count } => self.loaded_runners = Some(*count),
        }
        Ok(())
    }

    fn request(
        &mut self,
        request: &Request<'_>,
        at: Option<f64>,
        may_grow: bool,
    ) -> Result<(), Refused> {
        let (method, path) = (method_label(request.method), path_label(request.path));
        let found = self
            .routes
            .binary_search_by(|r| (r.path.as_str(), r.method.as_str()).cmp(&(path, method)));
        let i = match found {
            Ok(i) => i,
            Err(_) if !may_grow => return Err(Refused::MaxSeries),
            Err(i) => {
                let route = OllamaRoute {
                    method: method.to_string(),
                    path: path.to_string(),
                    ..OllamaRoute::default()
                };
                self.routes.insert(i, route);
                i
            }
        };
        self.routes[i].count(request, at);
        Ok(())
    }

    fn seen(&self) -> bool {
        !self.routes.is_empty() || self.runner_loads > 0 || self.loaded_runners.is_some()
    }

    fn last_request_at(&self) -> Option<f64> {
        self.routes
            .iter()
            .filter_map(|r| r.last_at)
            .max_by(f64::total_cmp)
    }
}

/// This engine's state in one log, as the registry names it.
pub type State = OllamaLog;

impl Engine for OllamaLog {
    const NAME: &'static str = "ollama";
    const DISPLAY_NAME: &'static str = "Ollama";
    const LABELS_NOTE: &'static str = "`llmtail_ollama_http_` series has the labels `method`, `path` (an Ollama route, else `other`), `log` and the `--label`s, and the other `llmtail_ollama_` series `log` and the `--label`s";
    const LANDING: Landing = Landing {
        title: "Ollama servers",
        headers: &[
            "status",
            "requests",
            "5xx",
            "last request",
            "runner loads",
            "last load",
            "loaded runners",
        ],
    };
    const UNIT_LABELS: &'static [&'static str] = &["method", "path", "log"];
    const TABLE: &'static [Row<OllamaRoute>] = series::OLLAMA_ROUTE;
    const LOG_METRICS: &'static [Metric] = series::OLLAMA_LOG;
    type Unit = OllamaRoute;
    type Key = ();
    type Record<'r> = OllamaRecord<'r>;

    fn apply(
        &mut self,
        record: &OllamaRecord<'_>,
        _parsed: &Parsed<'_>,
        line_time: Option<f64>,
        context: &ApplyContext<'_>,
    ) -> Result<(), Refused> {
        self.apply(record, line_time, context.may_grow)
    }

    // Ollama's log says when it answers, not when it is alive: a route is never judged down.

    fn units(&self) -> impl ExactSizeIterator<Item = (&(), &OllamaRoute)> {
        self.routes.iter().map(|route| (&(), route))
    }

    fn unit_labels(
        &self,
        _key: &(),
        route: &OllamaRoute,
        log: &LogView<'_>,
        _settings: &StateSettings,
    ) -> UnitLabels {
        vec![
            ("method", route.method.clone()),
            ("path", route.path.clone()),
            ("log", log.label.to_string()),
        ]
    }

    fn status(_route: &OllamaRoute) -> Status {
        Status::Up
    }

    /// One server per log, up once it has written a line of its own: its routes are no engines.
    fn statuses(&self) -> Vec<Status> {
        if self.seen() {
            vec![Status::Up]
        } else {
            Vec::new()
        }
    }

    fn log_series(&self) -> Vec<(&'static Metric, f64)> {
        use series::{OLLAMA_LOADED_RUNNERS, OLLAMA_RUNNER_LOADS, OLLAMA_RUNNER_LOAD_SECONDS};
        let mut series = Vec::new();
        if let Some(seconds) = self.runner_load_seconds {
            series.push((&OLLAMA_RUNNER_LOAD_SECONDS, seconds));
            series.push((&OLLAMA_RUNNER_LOADS, self.runner_loads as f64));
        }
        if let Some(count) = self.loaded_runners {
            series.push((&OLLAMA_LOADED_RUNNERS, count as f64));
        }
        series
    }

    /// One row per server, not per route.
    fn landing_rows(&self, _log: &LogView<'_>, _settings: &StateSettings) -> Vec<Vec<LandingCell>> {
        if !self.seen() {
            return Vec::new();
        }
        let requests: u64 = self.routes.iter().map(OllamaRoute::requests).sum();
        let errors: u64 = self
            .routes
            .iter()
            .flat_map(|r| &r.statuses)
            .filter(|s| s.status >= 500)
            .map(|s| s.requests)
            .sum();
        let last_load = match self.runner_load_seconds {
            Some(seconds) => format!("{seconds} s"),
            None => "none yet".to_string(),
        };
        let loaded = match self.loaded_runners {
            Some(count) => count.to_string(),
            None => "not said yet".to_string(),
        };
        vec![vec![
            LandingCell::Status(Status::Up),
            LandingCell::Text(requests.to_string()),
            LandingCell::Text(errors.to_string()),
            LandingCell::Age {
                at: self.last_request_at(),
                none: "none yet",
            },
            LandingCell::Text(self.runner_loads.to_string()),
            LandingCell::Text(last_load),
            LandingCell::Text(loaded),
        ]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(
        method: &'static str,
        path: &'static str,
        status: u16,
        seconds: f64,
    ) -> Request<'static> {
        Request {
            status,
            latency_seconds: seconds,
            client: "127.0.0.1",
            method,
            path,
        }
    }

    #[test]
    fn paths_are_ollamas_routes_or_other() {
        let cases = [
            ("/", "/"),
            ("/api/chat", "/api/chat"),
            ("/api/tags?verbose=1", "/api/tags"),
            ("/api/blobs/sha256:6a0746a1ec1a", "/api/blobs/:digest"),
            ("/api/blobs/", "other"),
            ("/v1/models/llama3.2:latest", "/v1/models/:model"),
            ("/v1/chat/completions", "/v1/chat/completions"),
            ("/api/chat/", "other"),
            ("/api/v1/health", "other"),
            ("/.env", "other"),
            ("/favicon.ico", "other"),
            (r#"/a\"b"#, "other"),
            ("", "other"),
        ];
        for (path, label) in cases {
            assert_eq!(path_label(path), label, "{path}");
        }
        assert_eq!(method_label("OPTIONS"), "OPTIONS");
        assert_eq!(method_label("PROPFIND"), "other");
        assert_eq!(method_label("get"), "other");
    }

    #[test]
    fn requests_count_by_route_and_status_and_time_their_histogram() {
        let mut log = OllamaLog::default();
        for r in [
            request("POST", "/api/chat", 200, 57.9),
            request("POST", "/api/chat", 500, 600.0),
            request("POST", "/api/chat", 200, 1.5),
            request("GET", "/api/tags", 200, 0.0007),
            request("PROPFIND", "/", 404, 0.000001),
        ] {
            log.apply(&OllamaRecord::Request(r), Some(1.0), true)
                .unwrap();
        }
        let keys: Vec<_> = log
            .routes
            .iter()
            .map(|r| (r.method.as_str(), r.path.as_str()))
            .collect();
        assert_eq!(
            keys,
            [("other", "/"), ("POST", "/api/chat"), ("GET", "/api/tags")]
        );
        let chat = &log.routes[1];
        assert_eq!(
            chat.requests_by_status(),
            [("200".to_string(), 2.0), ("500".to_string(), 1.0)]
        );
        assert_eq!(
            (chat.duration_seconds.count, chat.duration_seconds.sum),
            (3, 659.4)
        );
    }

    #[test]
    fn a_new_route_past_max_series_is_refused_and_known_ones_still_count() {
        let mut log = OllamaLog::default();
        let chat = OllamaRecord::Request(request("POST", "/api/chat", 200, 1.0));
        log.apply(&chat, None, true).unwrap();
        let tags = OllamaRecord::Request(request("GET", "/api/tags", 200, 0.001));
        assert_eq!(log.apply(&tags, None, false), Err(Refused::MaxSeries));
        log.apply(&chat, None, false).unwrap();
        assert_eq!(log.routes.len(), 1);
        assert_eq!(log.routes[0].requests(), 2);
    }

    #[test]
    fn runner_lines_are_per_log_series() {
        let mut log = OllamaLog::default();
        assert!(log.log_series().is_empty());
        log.apply(
            &OllamaRecord::RunnerStarted {
                load_seconds: 23.07,
            },
            None,
            true,
        )
        .unwrap();
        log.apply(&OllamaRecord::LoadedRunners { count: 1 }, None, true)
            .unwrap();
        log.apply(
            &OllamaRecord::RunnerStarted { load_seconds: 6.76 },
            None,
            true,
        )
        .unwrap();
        let series: Vec<_> = log
            .log_series()
            .into_iter()
            .map(|(m, v)| (m.name, v))
            .collect();
        assert_eq!(
            series,
            [
                ("llmtail_ollama_runner_load_seconds", 6.76),
                ("llmtail_ollama_runner_loads", 2.0),
                ("llmtail_ollama_loaded_runners", 1.0)
            ]
        );
        assert_eq!(Engine::statuses(&log), [Status::Up]);
    }
}
