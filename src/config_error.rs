//! The error of every settings parser: flags, the config file and each subsystem's section of
//! it (web config, remote write, log entries).
//!
//! It imports nothing of the crate, so that each subsystem can own its section's parser
//! without importing the module that composes the sections.

/// A start-up error: printed as `llmtail: <message>`, exit code 2. The message names the
/// input (flag, file, key) and ends with a `fix:` line.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);
