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
    // Plain vLLM or Triton records: settle at once, so a later JSON-looking line (a TRT-LLM
    // iteration record) is not taken for an envelope.
    if line.contains("] ") {
        return Some(EnvelopeKind::Plain);
    }
    None
}

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
            None => Decoded::Invalid,
        },
        EnvelopeKind::Cri => match cri::fields(line) {
            Some((time, is_partial, content)) => join(partial, content, is_partial, cap, time),
            None => Decoded::Invalid,
        },
        // JSON logging mixes in plain stderr (raw tracebacks): those pass through as they are.
        EnvelopeKind::Json => match json::decode(line) {
            Some((text, time)) => Decoded::Message { text, time },
            None => Decoded::Message {
                text: Cow::Borrowed(line),
                time: None,
            },
        },
        EnvelopeKind::Journald => match journald::decode(line) {
            Some((text, time)) => Decoded::Message {
                text: Cow::Borrowed(text),
                time: Some(time),
            },
            None => Decoded::Invalid,
        },
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
