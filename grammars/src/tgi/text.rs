//! The text form of a TGI or TEI event, as `tracing-subscriber`'s default (`Full`) formatter
//! writes it with `with_file(true).with_line_number(true)` (TGI `router/src/logging.rs`, TEI the
//! same):
//!
//! ```text
//! 2024-02-14T06:49:51.437631Z  INFO generate{parameters=GenerateParameters { .. } total_time="611.286748ms" ..}: text_generation_router::server: router/src/server.rs:299: Success
//! ```
//!
//! that is `TIME LEVEL [span{fields}:..] target: file:line: message`, the level right-aligned to
//! five columns. The spans run from the root: with OTLP tracing an `HTTP request{..}:` comes
//! first. Span fields print in the order they were set: `parameters` at span creation (a
//! `Debug` struct with braces, quotes and user stop strings), the timings when the request ends.
//! So the line is read from both ends: the head from the left (a wrapper may prefix it), the
//! target, location and message from the right, and the timings from the last `total_time="`
//! of the spans, after anything a user could have written.

use crate::lex::time;
use crate::LogTime;

/// The crates whose events we read: TGI's router (`text_generation_router`, also
/// `text_generation_router_v3`), TEI's (`text_embeddings_router`) and LoRAX's (`lorax_router`).
pub const TARGETS: [&str; 3] = [
    "text_generation_router",
    "text_embeddings_router",
    "lorax_router",
];

/// One event line, split.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Event<'a> {
    pub time: LogTime,
    pub level: &'a str,
    /// The span path (`HTTP request{..}:generate{..}`), without the `:` after the last span;
    /// empty for an event outside any span.
    pub spans: &'a str,
    pub target: &'a str,
    pub message: &'a str,
    /// Where the record begins in the line (its time).
    pub start: usize,
}

/// Splits a line into an [`Event`] of one of [`TARGETS`], or `None`.
pub fn event(line: &str) -> Option<Event<'_>> {
    let (start, time, level, rest) = head(line)?;
    let at = TARGETS.iter().filter_map(|t| rest.rfind(t)).max()?;
    let spans = match &rest[..at] {
        "" => "",
        before => before.strip_suffix(": ")?,
    };
    let (target, after_target) = rest[at..].split_once(": ")?;
    if !target
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':')
    {
        return None;
    }
    let message = match after_target.split_once(": ") {
        Some((location, message)) if is_location(location) => message,
        _ => after_target,
    };
    Some(Event {
        time,
        level,
        spans,
        target,
        message: message.trim_end(),
        start,
    })
}

/// `router/src/server.rs:299`: a path without spaces, a colon, a line number.
fn is_location(text: &str) -> bool {
    text.rsplit_once(':').is_some_and(|(file, line)| {
        !file.is_empty()
            && !file.contains(' ')
            && !line.is_empty()
            && line.bytes().all(|b| b.is_ascii_digit())
    })
}

/// The record head: the first RFC 3339 UTC time in the line (`2024-02-14T06:49:51.437631Z`)
/// followed by spaces and a level word, where the record starts, the time, the level and the
/// text after the level's space. Text in front of it is a wrapper's (a supervisor's name,
/// `docker logs -t`'s own time).
fn head(line: &str) -> Option<(usize, LogTime, &str, &str)> {
    let bytes = line.as_bytes();
    memchr::memchr_iter(b'T', bytes)
        .filter(|&t| t >= 10 && bytes[t - 10].is_ascii_digit() && bytes[t - 6] == b'-')
        .find_map(|t| {
            let (time, after_time) = time::iso_zulu(&line[t - 10..])?;
            let after_spaces = after_time.trim_start_matches(' ');
            if after_spaces.len() == after_time.len() {
                return None;
            }
            let level = ["INFO", "WARN", "ERROR", "DEBUG", "TRACE"]
                .into_iter()
                .find(|level| after_spaces.starts_with(level))?;
            let rest = after_spaces[level.len()..].strip_prefix(' ')?;
            Some((t - 10, time, level, rest))
        })
}

/// True when `text` holds a record head (a time, spaces, a level word): a span path that holds
/// one is two events glued together.
pub fn holds_a_head(text: &str) -> bool {
    head(text).is_some()
}

/// The timing fields of the innermost span that has them: `key="value"` pairs (and bare
/// `key=value` ones) from the last `total_time="` to the end of the span path.
pub fn timings(spans: &str) -> Option<Fields<'_>> {
    let inner = spans.strip_suffix('}')?;
    let at = inner.rfind("total_time=\"")?;
    if !matches!(inner.as_bytes().get(at.wrapping_sub(1)), Some(b'{' | b' ')) {
        return None;
    }
    Some(Fields { rest: &inner[at..] })
}

/// The name of the span whose fields [`timings`] read: the identifier in front of its `{`.
/// The `{` is right before `total_time` unless `parameters` came first (TGI's `generate` and
/// `generate_stream`); then it is the first `{parameters=` in the path. A name stands at the
/// start of the path or after the `:` of the span before.
pub fn span_name(spans: &str) -> Option<&str> {
    let at = spans.rfind("total_time=\"").filter(|&at| at > 0)?;
    let open = if spans.as_bytes()[at - 1] == b'{' {
        at - 1
    } else {
        spans[..at].find("{parameters=")?
    };
    let before = &spans[..open];
    let name_len = before
        .bytes()
        .rev()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    let (path, name) = before.split_at(before.len() - name_len);
    let starts_path = path.is_empty() || path.ends_with(':');
    (!name.is_empty() && starts_path).then_some(name)
}

/// `key=value` pairs separated by single spaces; a quoted value is a `Debug` string.
pub struct Fields<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Fields<'a> {
    /// A key and its value (unquoted; `None` when the pair is not well formed, which ends the
    /// iteration after it).
    type Item = (&'a str, Option<&'a str>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let Some((key, after)) = self.rest.split_once('=') else {
            self.rest = "";
            return Some(("", None));
        };
        let (value, rest) = match after.strip_prefix('"') {
            Some(quoted) => match closing_quote(quoted) {
                Some(end) => (&quoted[..end], &quoted[end + 1..]),
                None => {
                    self.rest = "";
                    return Some((key, None));
                }
            },
            None => after.split_at(after.find(' ').unwrap_or(after.len())),
        };
        self.rest = match rest.strip_prefix(' ') {
            Some(next) => next,
            None if rest.is_empty() => rest,
            None => {
                self.rest = "";
                return Some((key, None));
            }
        };
        Some((key, Some(value)))
    }
}

/// Where the `"` that closes a `Debug` string starts `text` is (after its opening quote).
fn closing_quote(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// Removes the escapes a log shipper wrote out as text: CloudWatch and rsyslog print the ESC
/// byte of an ANSI colour code as `#033`, so `#033[2m` reaches the file, and the agent's ANSI
/// stripping (which looks for the byte) leaves it. `None` when there is none.
pub fn without_literal_escapes(line: &str) -> Option<String> {
    const ESC: &str = "#033[";
    line.find(ESC)?;
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(ESC) {
        out.push_str(&rest[..at]);
        let csi = &rest[at + ESC.len()..];
        // Parameters, then one final byte in 0x40..=0x7e (`m` for colours).
        rest = match csi.bytes().position(|b| (0x40..=0x7e).contains(&b)) {
            Some(end) => &csi[end + 1..],
            None => "",
        };
    }
    out.push_str(rest);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUCCESS: &str = r#"2024-12-10T21:50:03.478010Z  INFO chat_completions{total_time="735.200735ms" validation_time="955.594µs" queue_time="73.176µs" inference_time="734.172108ms" time_per_token="36.708605ms" seed="Some(13465365087046561476)"}: text_generation_router::server: router/src/server.rs:622: Success"#;

    #[test]
    fn splits_head_spans_target_and_message() {
        let e = event(SUCCESS).unwrap();
        assert_eq!(e.level, "INFO");
        assert_eq!(e.target, "text_generation_router::server");
        assert_eq!(e.message, "Success");
        assert!(e.spans.starts_with("chat_completions{total_time="));
        assert!(e.spans.ends_with("seed=\"Some(13465365087046561476)\"}"));
        assert_eq!(span_name(e.spans), Some("chat_completions"));
        let fields: Vec<_> = timings(e.spans).unwrap().collect();
        assert_eq!(fields[0], ("total_time", Some("735.200735ms")));
        assert_eq!(fields[5], ("seed", Some("Some(13465365087046561476)")));
    }

    #[test]
    fn a_wrappers_own_time_in_front_is_not_the_head() {
        let line = "2024-11-04T09:00:03.517123456Z 2024-05-07T12:39:22.141566Z  INFO text_generation_router: router/src/main.rs:354: Connected";
        let e = event(line).unwrap();
        assert_eq!((e.start, e.time.second, e.message), (31, 22, "Connected"));
    }

    #[test]
    fn an_event_outside_spans_has_an_empty_path() {
        let e = event("2024-05-07T12:39:22.141566Z  INFO text_generation_router: router/src/main.rs:354: Setting max batch total tokens to 801568").unwrap();
        assert_eq!(
            (e.spans, e.message),
            ("", "Setting max batch total tokens to 801568")
        );
    }

    #[test]
    fn the_span_name_is_found_past_parameters_with_braces_and_quotes() {
        let spans = r#"HTTP request{otel.name=POST /generate trace_id=d6e2}:generate{parameters=GenerateParameters { stop: ["} total_time=\"1s\""], grammar: Some(Json(Object {"a": Null})) } total_time="1s" queue_time="1µs"}"#;
        assert_eq!(span_name(spans), Some("generate"));
        let fields: Vec<_> = timings(spans).unwrap().collect();
        assert_eq!(
            fields,
            [("total_time", Some("1s")), ("queue_time", Some("1µs"))]
        );
    }

    #[test]
    fn a_span_name_is_only_an_identifier_that_starts_a_path_element() {
        assert_eq!(span_name(r#"total_time="1s"}"#), None);
        assert_eq!(span_name(r#"generate{seed="1" total_time="1s"}"#), None);
        assert_eq!(span_name(r#"x"embed{total_time="1s"}"#), None);
        assert_eq!(span_name(r#"a{b=c}:embed{total_time="1s"}"#), Some("embed"));
    }

    #[test]
    fn a_field_cut_inside_its_quotes_is_not_well_formed() {
        let fields: Vec<_> = timings(r#"x{total_time="1s" queue_time="1µ}"#)
            .unwrap()
            .collect();
        assert_eq!(fields, [("total_time", Some("1s")), ("queue_time", None)]);
    }

    #[test]
    fn literal_escapes_are_removed() {
        assert_eq!(
            without_literal_escapes("#033[2m2024#033[0m #033[32m INFO#033[0m x").as_deref(),
            Some("2024  INFO x")
        );
        assert_eq!(without_literal_escapes("plain"), None);
    }
}
