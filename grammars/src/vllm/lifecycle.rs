//! Lines that say an engine started, stopped or died, and which vLLM it is.
//!
//! None of them carries a number worth exporting; the agent needs them so that a series under
//! vLLM's name is only exported while the engine it describes is alive (vLLM's own series go
//! stale when its `/metrics` stops answering), and so that it knows what a stats line means in
//! the version that printed it (`Avg prompt throughput` changed meaning in 0.16.0).
//!
//! - Version: `vLLM API server version X` (0.4.0-0.14.1, also the gRPC and batch front ends),
//!   the 0.15+ logo line `... version X` and its plain form `vLLM server version X, serving
//!   model M`.
//! - Start-up marks: `Supported tasks: [...]` (`Supported_tasks:` up to 0.11.0), printed by the
//!   API server within a second after `AsyncLLM` built its stat loggers, whose first window
//!   starts then; `Starting vLLM API server 0 on URL` (0.7.3-0.17; `Starting vLLM server on URL`
//!   from 0.18) and uvicorn's `Application startup complete.` (no time of its own in a plain
//!   log) around the lifespan that starts the periodic logging loop, whose first call comes
//!   one interval later.
//! - Shutdown: `Shutting down FastAPI HTTP server.` (0.6.2-0.22), `[shutdown] API server:
//!   shutting down FastAPI HTTP server` (0.23+), uvicorn's `Waiting for application shutdown.`
//!   (the lifespan shutdown cancels the logging loop) and `Application shutdown complete.`,
//!   V0's `Shutting down MQLLMEngine.`.
//! - Crash: the V1 engine-death lines (`EngineCore encountered a fatal error.`, `EngineCore
//!   failed to start.`, `AsyncLLM output_handler failed.`, `EngineDeadError`, `Engine core proc
//!   X died unexpectedly` (0.10.1-0.19), `[shutdown] MPClient: engine core exited unexpectedly`
//!   (0.23+), `Worker proc X died unexpectedly`, `Engine core initialization failed`) and V0's (`Background loop has errored already.`, `Engine loop has died`,
//!   `MQLLMEngine terminated`).
//! - `AsyncLLM created with api_server_count more than 1; disabling stats logging ...`: with
//!   several API servers (the data-parallel default) vLLM prints no stats line at all.

use serde::Serialize;

use super::VllmRecord;

/// What a lifecycle line says.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Lifecycle<'a> {
    /// The server says which vLLM it is (and, from 0.15, which model it serves).
    Version {
        version: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        model: Option<&'a str>,
    },
    /// The API server has its engine client: vLLM's stat loggers were built, and count tokens
    /// from here (`Supported tasks: [...]`).
    EngineReady,
    /// The server's start-up finished, and with it began the loop that prints stats lines
    /// (`Starting vLLM server on ...`, uvicorn's `Application startup complete.`).
    ServerStarted,
    /// The server is stopping in order.
    Shutdown,
    /// The engine died: no more stats will come from this run.
    Crash,
    /// vLLM decided not to print stats lines (several API servers).
    StatsLoggingDisabled,
}

/// Substrings at least one of which every line this module parses contains.
pub const ANCHORS: &[&str] = &[
    "server version ",
    "processing API version ",
    "  version ",
    "FastAPI HTTP server",
    "Application shutdown complete",
    "MQLLMEngine",
    "fatal error",
    "failed to start",
    "_handler failed",
    "DeadError",
    "died unexpectedly",
    "initialization failed",
    "Background loop has errored",
    "loop has died",
    "disabling stats logging",
    "pported tasks: ",
    "pported_tasks: ",
    "startup complete",
    "application shutdown",
    "exited unexpectedly",
    "Starting vLLM ",
    "already dead",
    "Engine process (pid ",
];

/// Crash lines start with one of these. Only the start counts: vLLM logs prompts, and a
/// prompt that quotes a traceback must not bring an engine down.
const CRASHES: &[&str] = &[
    "EngineCore encountered a fatal error",
    "EngineCore failed to start",
    "AsyncLLM output_handler failed",
    "vllm.v1.engine.exceptions.EngineDeadError",
    "EngineDeadError: ",
    "RuntimeError: Engine core initialization failed",
    "Engine core initialization failed",
    "vllm.engine.async_llm_engine.AsyncEngineDeadError: Background loop has errored already",
    "AsyncEngineDeadError: Background loop has errored already",
    "vllm.engine.async_llm_engine.AsyncEngineDeadError: Background loop is not running",
    "AsyncEngineDeadError: Background loop is not running",
    "Engine loop has died",
    "RuntimeError('Engine loop has died')",
    "RuntimeError: Engine loop has died",
    "RuntimeError('Engine process (pid ",
    "MQLLMEngine is already dead",
    "AsyncLLMEngine is already dead",
    "[shutdown] MPClient: engine core exited unexpectedly",
];

/// Parses a lifecycle message (record head removed).
pub fn parse(message: &str) -> Option<VllmRecord<'_>> {
    let message = message.trim_end();
    let event = version(message)
        .or_else(|| start_mark(message))
        .or_else(|| shutdown(message))
        .or_else(|| crash(message))
        .or_else(|| stats_logging_disabled(message))?;
    Some(VllmRecord::Lifecycle(event))
}

/// A version number as vLLM prints it: digits first, no spaces (`0.10.2.dev378+g4d7fe40fc`).
fn version_word(text: &str) -> Option<&str> {
    let word = text.split(|c: char| c.is_whitespace() || c == ',').next()?;
    let word = word.strip_prefix('v').unwrap_or(word);
    word.starts_with(|c: char| c.is_ascii_digit())
        .then_some(word)
}

fn version(message: &str) -> Option<Lifecycle<'_>> {
    for front in [
        "vLLM API server version ",
        "vLLM gRPC server version ",
        "vLLM batch processing API version ",
    ] {
        if let Some(rest) = message.strip_prefix(front) {
            return Some(Lifecycle::Version {
                version: whole_word(rest)?,
                model: None,
            });
        }
    }
    if let Some(rest) = message.strip_prefix("vLLM server version ") {
        let (version, model) = rest.split_once(", serving model ")?;
        return Some(Lifecycle::Version {
            version: whole_word(version)?,
            model: Some(model).filter(|m| !m.is_empty() && !m.contains(' ')),
        });
    }
    // The logo (0.15+): ` ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.17.0`, its glyphs first.
    let (glyphs, rest) = message.split_once("  version ")?;
    if glyphs.is_empty() || !glyphs.chars().all(|c| matches!(c, ' ' | '▄' | '█' | '▀')) {
        return None;
    }
    Some(Lifecycle::Version {
        version: whole_word(rest)?,
        model: None,
    })
}

/// The whole of `rest`, when it is one version word.
fn whole_word(rest: &str) -> Option<&str> {
    let word = version_word(rest)?;
    (rest.trim_start_matches('v') == word).then_some(word)
}

/// uvicorn's own lines (`INFO:     Application startup complete.`) have no vLLM head.
fn uvicorn(message: &str) -> &str {
    message
        .strip_prefix("INFO:")
        .unwrap_or(message)
        .trim_start()
}

fn start_mark(message: &str) -> Option<Lifecycle<'static>> {
    if message.starts_with("Supported tasks: [") || message.starts_with("Supported_tasks: [") {
        return Some(Lifecycle::EngineReady);
    }
    let serving = message.starts_with("Starting vLLM API server ")
        || message.starts_with("Starting vLLM server on ")
        || uvicorn(message) == "Application startup complete.";
    serving.then_some(Lifecycle::ServerStarted)
}

fn shutdown(message: &str) -> Option<Lifecycle<'static>> {
    let orderly = message == "Shutting down FastAPI HTTP server."
        || message.starts_with("[shutdown] API server: shutting down FastAPI HTTP server")
        || message == "Shutting down MQLLMEngine."
        || uvicorn(message) == "Waiting for application shutdown."
        || uvicorn(message) == "Application shutdown complete.";
    orderly.then_some(Lifecycle::Shutdown)
}

fn crash(message: &str) -> Option<Lifecycle<'static>> {
    let died = |who: &str| message.starts_with(who) && message.contains(" died unexpectedly");
    let fatal = CRASHES.iter().any(|c| message.starts_with(c))
        || died("Engine core proc ")
        || died("Worker proc ");
    fatal.then_some(Lifecycle::Crash)
}

fn stats_logging_disabled(message: &str) -> Option<Lifecycle<'static>> {
    (message.contains("api_server_count more than 1")
        && message.contains("disabling stats logging"))
    .then_some(Lifecycle::StatsLoggingDisabled)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(message: &str) -> Option<Lifecycle<'_>> {
        match parse(message)? {
            VllmRecord::Lifecycle(event) => Some(event),
            _ => None,
        }
    }

    #[test]
    fn versions_are_whole_words() {
        assert_eq!(
            event("vLLM API server version 0.10.2.dev378+g4d7fe40fc.d20250829"),
            Some(Lifecycle::Version {
                version: "0.10.2.dev378+g4d7fe40fc.d20250829",
                model: None
            })
        );
        assert_eq!(event("vLLM API server version is great"), None);
        assert_eq!(event("vLLM API server version 0.4.0 and more"), None);
    }

    #[test]
    fn the_logo_line_needs_its_glyphs() {
        assert!(event(" ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.17.0").is_some());
        assert_eq!(event("Python  version 3.12.1"), None);
    }

    #[test]
    fn a_crash_line_starts_with_its_words() {
        assert_eq!(event("the worker died unexpectedly, said the user"), None);
        assert_eq!(
            event("why do I get EngineDeadError: EngineCore encountered an issue?"),
            None
        );
        assert_eq!(
            event("Engine core proc EngineCore_DP0 died unexpectedly, shutting down client."),
            Some(Lifecycle::Crash)
        );
    }
}
