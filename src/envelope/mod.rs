//! Envelope: what deployments wrap around an engine's line, removed before any grammar runs.
//!
//! The same vLLM stats line reaches us as plain text (maybe coloured), inside Docker's
//! json-file records, as Kubernetes CRI lines (long lines split into `P` partials), as a JSON
//! logging record, or behind journald/syslog prefixes. A [`Decoder`] per followed file
//! detects which from the first lines (or is told with `--envelope`), joins partials, strips
//! ANSI colour codes and a trailing `\r`, and keeps the envelope's timestamp when it has one.

pub mod ansi;
mod cri;
mod detect;
mod docker;
mod journald;
mod json;
pub mod time;

use std::borrow::Cow;

use llmtail_grammars::LogTime;

/// How a log's lines are wrapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EnvelopeKind {
    /// Detect from the first lines of each file.
    #[default]
    Auto,
    /// Text as the engine wrote it (ANSI colours are stripped).
    Plain,
    /// Docker's json-file driver: `{"log":"...\n","stream":"stderr","time":"..."}`.
    Docker,
    /// Kubernetes CRI log files: `2026-11-22T13:25:01.123456789Z stderr F message`.
    Cri,
    /// JSON logging (e.g. python-json-logger): the line is in `message`.
    Json,
    /// `journalctl -o short` / `short-iso` and syslog prefixes: `Nov 22 13:25:01 host vllm[812]: ...`.
    Journald,
}

impl EnvelopeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EnvelopeKind::Auto => "auto",
            EnvelopeKind::Plain => "plain",
            EnvelopeKind::Docker => "docker",
            EnvelopeKind::Cri => "cri",
            EnvelopeKind::Json => "json",
            EnvelopeKind::Journald => "journald",
        }
    }
}

/// A decoded line.
#[derive(Debug, PartialEq)]
pub enum Decoded<'a> {
    /// The engine's own line, and the envelope's time for it, as printed, when it has one.
    Message {
        text: Cow<'a, str>,
        time: Option<LogTime>,
    },
    /// The first part of a line the envelope split (CRI `P`, Docker's 16 KiB chunks): held
    /// until its last part arrives.
    Partial,
    /// The line is not what this log's envelope looks like; it is counted and skipped.
    Invalid,
}

/// How many lines auto-detection looks at before settling on plain text.
const DETECTION_LINES: u32 = 20;

/// Decodes the lines of one file.
#[derive(Debug)]
pub struct Decoder {
    configured: EnvelopeKind,
    detected: Option<EnvelopeKind>,
    lines_seen: u32,
    /// Parts of a split line, joined until the final part.
    partial: String,
    /// Cap on `partial`, so a runaway sequence of partials cannot grow memory without bound.
    max_line_bytes: usize,
}

impl Decoder {
    pub fn new(kind: EnvelopeKind, max_line_bytes: usize) -> Self {
        let detected = (kind != EnvelopeKind::Auto).then_some(kind);
        Decoder {
            configured: kind,
            detected,
            lines_seen: 0,
            partial: String::new(),
            max_line_bytes,
        }
    }

    /// The envelope in use: the configured one, the detected one, or `Auto` while undecided.
    pub fn kind(&self) -> EnvelopeKind {
        self.detected.unwrap_or(self.configured)
    }

    /// True once the lines are known to be plain text: then a line's message is the line
    /// itself (less ANSI codes and a trailing `\r`), decoding never fails and holds nothing
    /// back, so a line can be judged from its raw bytes.
    pub fn is_plain(&self) -> bool {
        self.detected == Some(EnvelopeKind::Plain)
    }

    /// Decodes one line (bytes as read, without `\n`). Invalid UTF-8 is replaced, never fatal.
    pub fn decode<'a>(&'a mut self, raw: &'a [u8]) -> Decoded<'a> {
        // `from_utf8` validates a word at a time; the lossy decoder walks chunk by chunk, so it
        // is only the fallback for the rare line that is not valid UTF-8.
        let mut text = match std::str::from_utf8(raw) {
            Ok(text) => Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(raw),
        };
        if text.ends_with('\r') {
            match &mut text {
                Cow::Borrowed(s) => *s = &s[..s.len() - 1],
                Cow::Owned(s) => {
                    s.pop();
                }
            }
        }
        if self.detected.is_none() && self.lines_seen < DETECTION_LINES && !text.trim().is_empty() {
            self.lines_seen += 1;
            self.detected = detect::detect(&text);
            if self.detected.is_none() && self.lines_seen == DETECTION_LINES {
                self.detected = Some(EnvelopeKind::Plain);
            }
        }
        let kind = self.detected.unwrap_or(EnvelopeKind::Plain);
        let decoded = match text {
            Cow::Borrowed(s) => detect::decode(kind, s, &mut self.partial, self.max_line_bytes),
            Cow::Owned(s) => into_owned(detect::decode(
                kind,
                &s,
                &mut self.partial,
                self.max_line_bytes,
            )),
        };
        match decoded {
            Decoded::Message { text, time } => Decoded::Message {
                text: strip_ansi(text),
                time,
            },
            other => other,
        }
    }
}

fn into_owned(decoded: Decoded<'_>) -> Decoded<'static> {
    match decoded {
        Decoded::Message { text, time } => Decoded::Message {
            text: Cow::Owned(text.into_owned()),
            time,
        },
        Decoded::Partial => Decoded::Partial,
        Decoded::Invalid => Decoded::Invalid,
    }
}

fn strip_ansi(text: Cow<'_, str>) -> Cow<'_, str> {
    match text {
        Cow::Borrowed(s) => ansi::strip(s),
        Cow::Owned(s) => match ansi::strip(&s) {
            Cow::Borrowed(_) => Cow::Owned(s),
            Cow::Owned(stripped) => Cow::Owned(stripped),
        },
    }
}

/// What the decoders' tests share.
#[cfg(test)]
pub(crate) mod tests_support {
    use super::{Decoded, Decoder, EnvelopeKind};

    pub const STATS: &str =
        "INFO 11-22 13:25:01 [loggers.py:257] Engine 000: Avg prompt throughput: 1.0 tokens/s";

    pub fn decode_all(kind: EnvelopeKind, lines: &[&str]) -> Vec<String> {
        let mut decoder = Decoder::new(kind, 1 << 16);
        let mut out = Vec::new();
        for line in lines {
            match decoder.decode(line.as_bytes()) {
                Decoded::Message { text, .. } => out.push(text.into_owned()),
                Decoded::Partial => out.push("<partial>".into()),
                Decoded::Invalid => out.push("<invalid>".into()),
            }
        }
        out
    }
}
