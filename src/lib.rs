//! llmtail: follows the logs of LLM inference engines and serves what their stats lines say
//! as Prometheus metrics, under the engines' own metric names.
//!
//! The data flow is one module per stage:
//! [`source`] (files, rotation, offsets) -> `envelope` (docker, CRI, JSON, ANSI) ->
//! `llmtail_grammars` (what a line says) -> `state` (per-engine gauges and counters) ->
//! `exposition` (the HTTP endpoints).

#![forbid(unsafe_code)]

pub mod backfill;
pub mod bounded_read;
pub mod catalog;
pub mod checkpoint;
pub mod cli;
pub mod config;
pub mod envelope;
pub mod exposition;
pub mod path_labels;
pub mod pipeline;
pub mod printable;
pub mod reload;
pub mod remote_write;
pub mod run;
pub mod samples;
pub mod service;
pub mod source;
pub mod state;
pub mod state_file_lock;
pub mod timezone;
