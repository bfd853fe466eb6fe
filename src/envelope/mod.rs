//! Envelope: what deployments wrap around an engine's line, removed before any grammar runs.
//!
//! The same vLLM stats line reaches us as plain text (maybe coloured), inside Docker's
//! json-file records, as Kubernetes CRI lines (long lines split into `P` partials), as a JSON
//! logging record, or behind journald/syslog prefixes. A [`Decoder`] per followed file
//! detects which from the first lines (or is told with `--envelope`), joins partials, strips
//! ANSI colour codes and a trailing `\r`, and keeps the envelope's timestamp when it has one.
//! A line that is not in the detected envelope is read as plain text, never dropped: platform
//! loggers (KServe, uvicorn, LMCache) write their own lines into the engine's stream, and some
//! of them look like an envelope.

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
    /// The line is not in this log's envelope: it is read as the plain text it is (and
    /// counted), so an engine line among a platform's own lines is still parsed.
    Outside { text: Cow<'a, str> },
}

/// How many non-empty lines auto-detection samples.
const DETECTION_LINES: u32 = 20;

/// How many of the sampled lines must agree on one envelope (two thirds): a log whose first
/// lines are a platform's own (KServe's `2025-05-14 17:45:10.901 ...` looks like journald) is
/// not taken for that envelope when the engine's plain lines follow.
const MAJORITY: u32 = (DETECTION_LINES * 2).div_ceil(3);

/// The envelopes a sampled line can vote for, in the order of the decoder's `votes`.
const CANDIDATES: [EnvelopeKind; 5] = [
    EnvelopeKind::Plain,
    EnvelopeKind::Docker,
    EnvelopeKind::Cri,
    EnvelopeKind::Json,
    EnvelopeKind::Journald,
];

/// Decodes the lines of one file.
#[derive(Debug)]
pub struct Decoder {
    configured: EnvelopeKind,
    detected: Option<EnvelopeKind>,
    /// Non-empty lines sampled so far, and how many of them were in each of [`CANDIDATES`].
    lines_seen: u32,
    votes: [u32; CANDIDATES.len()],
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
            votes: [0; CANDIDATES.len()],
            partial: String::new(),
            max_line_bytes,
        }
    }

    /// The envelope it was made for (`Auto`: detected from the lines).
    pub fn configured(&self) -> EnvelopeKind {
        self.configured
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
        // Validated with SIMD (std's `from_utf8` goes a word at a time: a fifth of what the
        // dispatch cost a stats line beyond the grammar); the lossy decoder walks chunk by
        // chunk, so it is only the fallback for the rare line that is not valid UTF-8.
        let mut text = match simdutf8::basic::from_utf8(raw) {
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
        let kind = match self.detected {
            Some(kind) => kind,
            None => self.sample(&text),
        };
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
            Decoded::Outside { text } => Decoded::Outside {
                text: strip_ansi(text),
            },
            Decoded::Partial => Decoded::Partial,
        }
    }

    /// While undecided: counts the envelope `line` is in and returns it, so the line is
    /// decoded as what it is. Settles once one envelope has a majority of the sample, or on
    /// plain text once none can reach it.
    fn sample(&mut self, line: &str) -> EnvelopeKind {
        if line.trim().is_empty() {
            return EnvelopeKind::Plain;
        }
        // A line in no envelope (a traceback, a TRT-LLM JSON record) is plain text.
        let kind = detect::detect(line).unwrap_or(EnvelopeKind::Plain);
        let slot = CANDIDATES.iter().position(|&c| c == kind).unwrap_or(0);
        self.votes[slot] += 1;
        self.lines_seen += 1;
        let best = self.votes.iter().copied().max().unwrap_or(0);
        if self.votes[slot] >= MAJORITY {
            self.detected = Some(kind);
        } else if best + (DETECTION_LINES - self.lines_seen) < MAJORITY {
            self.detected = Some(EnvelopeKind::Plain);
        }
        kind
    }
}

fn into_owned(decoded: Decoded<'_>) -> Decoded<'static> {
    match decoded {
        Decoded::Message { text, time } => Decoded::Message {
            text: Cow::Owned(text.into_owned()),
            time,
        },
        Decoded::Partial => Decoded::Partial,
        Decoded::Outside { text } => Decoded::Outside {
            text: Cow::Owned(text.into_owned()),
        },
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
                Decoded::Outside { text } => out.push(format!("<outside> {text}")),
            }
        }
        out
    }
}
