//! The envelope decoders' promises (`llmtail::envelope`), over a made-up file: its bytes are
//! split at `\n` as the tailer splits them, and each line goes through one [`Decoder`].
//!
//! Whatever the lines: no panic; a message never holds an ANSI escape; a message is never
//! longer than the line (plus, for a split line, the parts held back for it, at most the
//! decoder's cap); a line outside the envelope is the line itself, cleaned as plain text is;
//! a time is a valid clock; and each message then goes through the grammars with their own
//! promises kept.

use std::borrow::Cow;

use llmtail::envelope::{ansi, time as envelope_time, Decoded, Decoder, EnvelopeKind};

use crate::grammar;

/// The decoder's cap on the parts of a split line, small enough for the fuzzer to reach.
pub const MAX_LINE_BYTES: usize = 512;

/// How many non-blank lines auto-detection samples before it must have settled
/// (`DETECTION_LINES` in `src/envelope/mod.rs`).
const DETECTION_LINES: usize = 20;

/// What a line becomes as plain text: lossy UTF-8, less one trailing `\r`, less ANSI codes.
fn as_plain(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let text = text.strip_suffix('\r').unwrap_or(&text);
    ansi::strip(text).into_owned()
}

/// Decodes every line of `data` as `kind` and checks each result.
pub fn decode_lines(kind: EnvelopeKind, data: &[u8]) {
    let mut decoder = Decoder::new(kind, MAX_LINE_BYTES);
    // Decoded bytes of the lines that were held back as parts of a split line: a joined
    // message is at most these and its own line. Only a fixed Docker or CRI decoder is known
    // to use them all up at a message; under detection they add up.
    let mut held_back = 0usize;
    let mut sampled = 0usize;
    let mut settled = None;
    for raw in data.split(|&b| b == b'\n') {
        let text = String::from_utf8_lossy(raw);
        let budget = text.len();
        let was_plain = decoder.is_plain();
        times(&text);
        let decoded = decoder.decode(raw);
        match &decoded {
            Decoded::Message {
                text: message,
                time,
            } => {
                assert!(
                    !message.contains('\x1b'),
                    "ANSI escape left in {message:?} from {text:?}"
                );
                assert!(
                    message.len() <= budget + held_back.min(MAX_LINE_BYTES),
                    "{kind:?}: message of {} bytes from a line of {budget} with {held_back} held back: {message:?}",
                    message.len()
                );
                if let Some(t) = time {
                    grammar::time(t, &text);
                }
                if matches!(kind, EnvelopeKind::Cri | EnvelopeKind::Journald) {
                    assert!(
                        time.is_some(),
                        "{kind:?} message without its time: {text:?}"
                    );
                }
                if kind == EnvelopeKind::Plain || was_plain {
                    assert_eq!(*message, as_plain(raw), "plain text changed");
                    assert!(time.is_none(), "plain text has no envelope time");
                }
                if matches!(kind, EnvelopeKind::Docker | EnvelopeKind::Cri) {
                    held_back = 0;
                }
                grammar::outcome(message, &llmtail_grammars::read(message));
            }
            Decoded::Outside { text: line } => {
                assert!(
                    kind != EnvelopeKind::Plain && !was_plain,
                    "plain text put {text:?} outside"
                );
                assert_eq!(*line, as_plain(raw), "a line outside the envelope changed");
                grammar::outcome(line, &llmtail_grammars::read(line));
            }
            Decoded::Partial => {
                assert!(
                    matches!(
                        kind,
                        EnvelopeKind::Docker | EnvelopeKind::Cri | EnvelopeKind::Auto
                    ) && !was_plain,
                    "{kind:?} held back {text:?}: only Docker and CRI split lines"
                );
                held_back += budget;
            }
        }
        // Detection samples the non-blank lines, settles within the sample and then stays.
        let blank = text.strip_suffix('\r').unwrap_or(&text).trim().is_empty();
        if kind == EnvelopeKind::Auto && settled.is_none() && !blank {
            sampled += 1;
        }
        let now = decoder.kind();
        match settled {
            Some(kind) => assert_eq!(now, kind, "detection changed its mind"),
            None if now != EnvelopeKind::Auto => settled = Some(now),
            None => assert!(
                sampled < DETECTION_LINES,
                "still undecided after {sampled} lines"
            ),
        }
        assert_eq!(
            decoder.is_plain(),
            now == EnvelopeKind::Plain,
            "is_plain disagrees with kind {now:?}"
        );
    }
}

/// The envelope clocks on the line's front (CRI, Docker, short-iso, asctime; syslog).
fn times(text: &str) {
    let parsed = [
        envelope_time::parse_datetime(text),
        envelope_time::parse_syslog_time(text),
    ];
    for (t, rest) in parsed.into_iter().flatten() {
        grammar::time(&t, text);
        assert!(text.ends_with(rest), "{rest:?} is not the rest of {text:?}");
    }
}

/// ANSI stripping on its own: no ESC survives, nothing is added or reordered, text before the
/// first ESC is kept, and text without one is borrowed as it is.
pub fn ansi(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let stripped = ansi::strip(&text);
    assert!(!stripped.contains('\x1b'), "{stripped:?}");
    match text.find('\x1b') {
        None => assert!(matches!(stripped, Cow::Borrowed(s) if s == text)),
        Some(esc) => {
            assert!(stripped.starts_with(&text[..esc]), "{stripped:?}");
            let mut rest = text.chars();
            assert!(
                stripped.chars().all(|c| rest.any(|t| t == c)),
                "{stripped:?} is not {text:?} with parts removed"
            );
        }
    }
}
