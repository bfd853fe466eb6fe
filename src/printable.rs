//! Text from outside the agent (file names above all) made safe to print: a log named
//! `a\x1b[2J.log` would clear the terminal reading the agent's stderr or `curl /`, and one
//! with a newline in its name would forge a line of the agent's log or a row of the landing
//! page. Control characters are written as escapes (`\x1b`, `\n`), the rest as it is.
//!
//! Used by the landing page (text and HTML), by the agent's log lines (every field, see
//! [`log_fields`]) and by the start-up error printed on stderr.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` with every control character escaped: `\n`, `\r`, `\t`, `\x1b`, `\u{85}`.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    escape(text, |_| false)
}

/// [`escape_controls`], keeping line breaks: for messages of several lines (an error and its
/// `fix:` line) whose every character is otherwise escaped.
pub fn escape_controls_but_newlines(text: &str) -> Cow<'_, str> {
    escape(text, |c| c == '\n')
}

fn escape(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && !keep(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if !c.is_control() || keep(c) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    Cow::Owned(out)
}

/// The agent's log lines' field formatter: `name=value` with the value's control characters
/// escaped, the message with its line breaks kept (`\n  fix: ...`) and the rest escaped.
/// (tracing-subscriber escapes ESC itself, but not a newline, which forges a log line.)
pub fn log_fields() -> impl for<'writer> tracing_subscriber::fmt::FormatFields<'writer> {
    use tracing_subscriber::field::MakeExt;
    tracing_subscriber::fmt::format::debug_fn(|writer, field, value| {
        let value = format!("{value:?}");
        match field.name() {
            "message" => write!(writer, "{}", escape_controls_but_newlines(&value)),
            name => write!(writer, "{name}={}", escape_controls(&value)),
        }
    })
    .delimited(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        assert_eq!(
            escape_controls("/var/log/a\u{1b}[2Jb\nc\td\re\u{7f}\u{85}é.log"),
            "/var/log/a\\x1b[2Jb\\nc\\td\\re\\x7f\\u{85}é.log"
        );
        assert!(matches!(
            escape_controls("/var/log/vllm 0.log"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn a_message_keeps_its_line_breaks_but_not_other_controls() {
        assert_eq!(
            escape_controls_but_newlines("cannot read a\u{1b}[2J.log\n  fix: x\r"),
            "cannot read a\\x1b[2J.log\n  fix: x\\r"
        );
    }
}
