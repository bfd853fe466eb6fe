//! llmtail: follows the logs of LLM inference engines and serves what their stats lines say
//! as Prometheus metrics, under the engines' own metric names.
//!
//! The data flow is one module per stage:
//! [`source`] (files, rotation, offsets) -> `envelope` (docker, CRI, JSON, ANSI) ->
//! `llmtail_grammars` (what a line says) -> [`engines`] (each engine's gauges and counters) in
//! [`state`] (per log) -> `exposition` (the HTTP endpoints).

#![forbid(unsafe_code)]

pub mod backfill;
pub mod bounded_read;
pub mod catalog;
pub mod checkpoint;
pub mod cli;
pub mod clock;
pub mod config;
pub mod config_error;
pub mod engines;
pub mod envelope;
pub mod exposition;
pub mod label_names;
pub mod log_settings;
pub mod path_labels;
pub mod pipeline;
pub mod printable;
#[cfg(test)]
mod reference;
pub mod reload;
pub mod remote_write;
pub mod run;
pub mod samples;
pub mod service;
pub mod settings_shown;
pub mod source;
pub mod state;
pub mod state_file_lock;
pub mod timezone;
pub mod tls;
