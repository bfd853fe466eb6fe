//! Detection (which envelope a file's lines are in) and dispatch to the envelope's decoder.

use std::borrow::Cow;

use llmtail_grammars::LogTime;

use super::{cri, docker, journald, json};
use super::{Decoded, EnvelopeKind};

/// Which envelope a line is in, when it clearly is in one.
pub fn detect(line: &str) -> Option<EnvelopeKind> {
    if line.starts_with("{\"log\":")
        && docker::decode(line, &mut String::new(), usize::MAX).is_some()
    {
        return Some(EnvelopeKind::Docker);
    }
    if line.starts_with('{') && line.contains("\"message\"") && json::decode(line).is_some() {
        return Some(EnvelopeKind::Json);
    }
    if cri::fields(line).is_some() {
        return Some(EnvelopeKind::Cri);
    }
    if journald::decode(line).is_some() {
        return Some(EnvelopeKind::Journald);
    }
    // Plain vLLM or Triton records: a vote for plain text, so a later JSON-looking line (a
    // TRT-LLM iteration record) is not taken for an envelope.
    if line.contains("] ") {
        return Some(EnvelopeKind::Plain);
    }
    None
}

/// `line` decoded as `kind`; a line not in that envelope is [`Decoded::Outside`].
pub fn decode<'a>(
    kind: EnvelopeKind,
    line: &'a str,
    partial: &mut String,
    cap: usize,
) -> Decoded<'a> {
    match kind {
        EnvelopeKind::Auto | EnvelopeKind::Plain => Decoded::Message {
            text: Cow::Borrowed(line),
            time: None,
        },
        EnvelopeKind::Docker => match docker::decode(line, partial, cap) {
            Some(decoded) => decoded,
            None => outside(line),
        },
        EnvelopeKind::Cri => match cri::fields(line) {
            Some((time, is_partial, content)) => join(partial, content, is_partial, cap, time),
            None => outside(line),
        },
        // JSON logging mixes in plain stderr (raw tracebacks): those are read as they are.
        EnvelopeKind::Json => match json::decode(line) {
            Some((text, time)) => Decoded::Message { text, time },
            None => outside(line),
        },
        EnvelopeKind::Journald => match journald::decode(line) {
            Some((text, time)) => Decoded::Message {
                text: Cow::Borrowed(text),
                time: Some(time),
            },
            None => outside(line),
        },
    }
}

fn outside(line: &str) -> Decoded<'_> {
    Decoded::Outside {
        text: Cow::Borrowed(line),
    }
}

/// Appends a part; on the last part returns the whole line.
fn join<'a>(
    partial: &mut String,
    content: &'a str,
    is_partial: bool,
    cap: usize,
    time: LogTime,
) -> Decoded<'a> {
    if is_partial {
        if partial.len() + content.len() <= cap {
            partial.push_str(content);
        }
        return Decoded::Partial;
    }
    if partial.is_empty() {
        return Decoded::Message {
            text: Cow::Borrowed(content),
            time: Some(time),
        };
    }
    let mut whole = std::mem::take(partial);
    whole.push_str(content);
    Decoded::Message {
        text: Cow::Owned(whole),
        time: Some(time),
    }
}

#[cfg(test)]
mod tests {
    use super::detect;
    use crate::envelope::tests_support::{decode_all, STATS};
    use crate::envelope::{Decoded, Decoder, EnvelopeKind};

    #[test]
    fn plain_lines_lose_their_colours_and_carriage_return() {
        let line = format!("\x1b[1;36m(APIServer pid=1)\x1b[0;0m {STATS}\r");
        assert_eq!(
            decode_all(EnvelopeKind::Auto, &[&line]),
            [format!("(APIServer pid=1) {STATS}")]
        );
    }

    #[test]
    fn a_trtllm_json_lines_file_is_plain() {
        assert_eq!(detect("{\"cpuMemUsage\":1,\"iter\":3}"), None);
        assert_eq!(
            decode_all(EnvelopeKind::Auto, &["{\"cpuMemUsage\":1,\"iter\":3}"]),
            ["{\"cpuMemUsage\":1,\"iter\":3}"]
        );
    }

    /// KServe's own lines as its logging formats print them: the first two read as journald
    /// (`<time> <host> <ident>: ...`), the third as nothing.
    const KSERVE: [&str; 3] = [
        "2025-05-14 17:45:10.901 kserve.trace requestId: 3f0c, preprocess_ms: 0.013, explain_ms: 0, predict_ms: 812.4, postprocess_ms: 0.004",
        "2025-05-14 17:45:10.902 uvicorn.access INFO:     10.42.0.1:52018 1647689 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
        "2025-05-14 17:45:10.901 1647689 kserve.trace Received request chatcmpl-3f0c",
    ];

    fn docker(text: &str) -> String {
        format!("{{\"log\":\"{text}\\n\",\"stream\":\"stderr\",\"time\":\"2026-11-22T13:25:01Z\"}}")
    }

    #[test]
    fn kserve_lines_before_vllm_lines_do_not_make_the_log_journald() {
        let mut lines: Vec<&str> = KSERVE.to_vec();
        lines.extend([STATS; 17]);
        lines.push(KSERVE[0]);
        let mut decoder = Decoder::new(EnvelopeKind::Auto, 1 << 16);
        for (i, line) in lines.iter().enumerate() {
            let decoded = decoder.decode(line.as_bytes());
            if *line == STATS {
                assert_eq!(
                    decoded,
                    Decoded::Message {
                        text: STATS.into(),
                        time: None
                    },
                    "line {i}"
                );
            }
        }
        assert_eq!(decoder.kind(), EnvelopeKind::Plain);
        assert!(decoder.is_plain());
    }

    #[test]
    fn a_docker_log_with_plain_lines_mixed_in_reads_both() {
        let record = docker(STATS);
        let mut lines: Vec<&str> = vec![&record; 16];
        lines.insert(1, "Traceback (most recent call last):");
        lines.insert(5, STATS);
        lines.push(STATS);
        let decoded = decode_all(EnvelopeKind::Auto, &lines);
        // Sampled lines are read as what each is; after the Docker majority a plain line is
        // outside the envelope, read as plain text all the same.
        let mut expected = vec![STATS.to_string(); 16];
        expected.insert(1, "Traceback (most recent call last):".into());
        expected.insert(5, STATS.into());
        expected.push(format!("<outside> {STATS}"));
        assert_eq!(decoded, expected);
        let mut decoder = Decoder::new(EnvelopeKind::Auto, 1 << 16);
        for line in &lines {
            decoder.decode(line.as_bytes());
        }
        assert_eq!(decoder.kind(), EnvelopeKind::Docker);
    }

    #[test]
    fn mixed_envelopes_without_a_majority_are_plain() {
        let record = docker(STATS);
        let cri = format!("2026-11-22T13:25:01.123456789Z stderr F {STATS}");
        let journald = format!("Aug 19 18:30:11 vllm vllm[8707]: {STATS}");
        let mut decoder = Decoder::new(EnvelopeKind::Auto, 1 << 16);
        for _ in 0..7 {
            for line in [&record, &cri, &journald] {
                decoder.decode(line.as_bytes());
            }
        }
        assert_eq!(decoder.kind(), EnvelopeKind::Plain);
        assert_eq!(
            decoder.decode(record.as_bytes()),
            Decoded::Message {
                text: record.as_str().into(),
                time: None
            }
        );
    }

    #[test]
    fn a_short_log_is_read_line_by_line_until_a_majority() {
        let record = docker(STATS);
        assert_eq!(
            decode_all(EnvelopeKind::Auto, &[KSERVE[0], &record, STATS]),
            [
                "3f0c, preprocess_ms: 0.013, explain_ms: 0, predict_ms: 812.4, postprocess_ms: 0.004",
                STATS,
                STATS
            ]
        );
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        let mut decoder = Decoder::new(EnvelopeKind::Plain, 1 << 16);
        let decoded = decoder.decode(b"Engine 000: \xff\xfe ok");
        assert_eq!(
            decoded,
            Decoded::Message {
                text: "Engine 000: \u{fffd}\u{fffd} ok".into(),
                time: None
            }
        );
    }
}
