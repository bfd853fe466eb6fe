//! Lines that say an engine's run began, ended or died.
//!
//! None of them carries a number worth exporting; the agent needs them so that a series under
//! vLLM's name is only exported while the engine it describes is alive (vLLM's own series go
//! stale when its `/metrics` stops answering), and to date the first window of a run. The
//! version comes from the engine config line (`Initializing a V1 LLM engine (v0.14.1) with
//! config: ...`, [`super::startup`]), which every start-up prints.
//!
//! - `Supported tasks: [...]` (0.11.1+; up to 0.11.0 the INFO `num_gpu_blocks is:` line marks
//!   the same moment): printed by the API server within a second after `AsyncLLM` built its
//!   stat loggers, whose first window starts then.
//! - Shutdown: `Shutting down FastAPI HTTP server.` (0.6.2-0.22), `[shutdown] API server:
//!   shutting down FastAPI HTTP server` (0.23+).
//! - Crash: the traceback line that ends every V1 engine death in the API server
//!   (`vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. ...`),
//!   `Engine core proc X died unexpectedly` (0.10.1-0.19), `[shutdown] MPClient: engine core
//!   exited unexpectedly` (0.23+), `Worker proc X died unexpectedly`; V0's
//!   `AsyncEngineDeadError: Background loop ...` and `MQLLMEngine is already dead, terminating
//!   server process` (also `AsyncLLMEngine`).
//! - `AsyncLLM created with api_server_count more than 1; disabling stats logging ...`: with
//!   several API servers (the data-parallel default) vLLM prints no stats line at all.
//!
//! - `EngineCore encountered a fatal error.`: the engine core's own last words, before the API
//!   server's `EngineDeadError`; searched for only in a log known to hold vLLM's records
//!   ([`crate::LogAnchors`]), where it costs no other engine's logs anything.
//!
//! Left out on purpose: every anchor of a log whose engine is not known yet is a string the
//! first stage searches every line for, and past about 27 strings that search slows the whole
//! agent (31 made a one-shot run 30% slower). So `AsyncLLM output_handler failed.` and `Engine
//! loop has died` (which come with an `EngineDeadError` or `already dead` line) and uvicorn's own
//! lines (no time of their own in a plain log) are not read.

use serde::Serialize;

use super::VllmRecord;

/// What a lifecycle line says.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Lifecycle {
    /// The API server has its engine client: vLLM's stat loggers were built, and count tokens
    /// from here (`Supported tasks: [...]`).
    EngineReady,
    /// The server is stopping in order.
    Shutdown,
    /// The engine died: no more stats will come from this run.
    Crash,
    /// vLLM decided not to print stats lines (several API servers).
    StatsLoggingDisabled,
}

/// Substrings at least one of which every line this module parses contains.
pub const ANCHORS: &[&str] = &[
    "d tasks: [",
    "FastAPI HTTP",
    "DeadError",
    "unexpectedly",
    "dead, terminating",
    "disabling stats",
];

/// What the engine core process prints as it dies of any exception, before the API server's
/// `EngineDeadError`: `logger.exception("EngineCore encountered a fatal error.")` in
/// `run_engine_core` (`vllm/v1/engine/core.py`, V1: `core.py:398` in 0.8.5, `:710` in 0.11.0). Read in a log known to hold vLLM's
/// records only (see [`super::KNOWN_STAGE`]).
pub const FATAL_ERROR: &str = "EngineCore encountered a fatal error";

/// Crash lines start with one of these. Only the start counts: vLLM logs prompts, and a
/// prompt that quotes a traceback must not bring an engine down.
const CRASHES: &[&str] = &[
    "vllm.v1.engine.exceptions.EngineDeadError",
    "EngineDeadError: ",
    "vllm.engine.async_llm_engine.AsyncEngineDeadError: Background loop",
    "AsyncEngineDeadError: Background loop",
    "[shutdown] MPClient: engine core exited unexpectedly",
    "MQLLMEngine is already dead, terminating",
    "AsyncLLMEngine is already dead, terminating",
    FATAL_ERROR,
];

/// Parses a lifecycle message (record head removed).
pub fn parse(message: &str) -> Option<VllmRecord<'_>> {
    let message = message.trim_end();
    let event = engine_ready(message)
        .or_else(|| shutdown(message))
        .or_else(|| crash(message))
        .or_else(|| stats_logging_disabled(message))?;
    Some(VllmRecord::Lifecycle(event))
}

fn engine_ready(message: &str) -> Option<Lifecycle> {
    message
        .starts_with("Supported tasks: [")
        .then_some(Lifecycle::EngineReady)
}

fn shutdown(message: &str) -> Option<Lifecycle> {
    let orderly = message == "Shutting down FastAPI HTTP server."
        || message.starts_with("[shutdown] API server: shutting down FastAPI HTTP server");
    orderly.then_some(Lifecycle::Shutdown)
}

fn crash(message: &str) -> Option<Lifecycle> {
    let died = |who: &str| message.starts_with(who) && message.contains(" died unexpectedly");
    let fatal = CRASHES.iter().any(|c| message.starts_with(c))
        || died("Engine core proc ")
        || died("Worker proc ");
    fatal.then_some(Lifecycle::Crash)
}

fn stats_logging_disabled(message: &str) -> Option<Lifecycle> {
    (message.contains("api_server_count more than 1")
        && message.contains("disabling stats logging"))
    .then_some(Lifecycle::StatsLoggingDisabled)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(message: &str) -> Option<Lifecycle> {
        match parse(message)? {
            VllmRecord::Lifecycle(event) => Some(event),
            _ => None,
        }
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

    #[test]
    fn every_anchor_is_in_a_line_this_module_reads() {
        let lines = [
            "Supported tasks: ['generate']",
            "Shutting down FastAPI HTTP server.",
            "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.",
            "[shutdown] MPClient: engine core exited unexpectedly; starting cleanup",
            "MQLLMEngine is already dead, terminating server process",
            "AsyncLLM created with api_server_count more than 1; disabling stats logging to avoid incomplete stats.",
        ];
        for anchor in ANCHORS {
            assert!(
                lines
                    .iter()
                    .any(|l| l.contains(anchor) && event(l).is_some()),
                "{anchor:?}"
            );
        }
    }
}
