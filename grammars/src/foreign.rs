//! A record behind a head no grammar knows.
//!
//! Deployments replace an engine's log formatter: a hardware plugin writes its own head
//! (`[vllm-rbln] INFO 2026-10-07 22:01:17,796 [loggers.py:248] `), a logging config file sets
//! `%(asctime)s - %(name)s - %(levelname)s - %(message)s`, a wrapper prints only the clock. The
//! message behind such a head is the engine's own, word for word, so once no grammar has read a
//! line through the heads it knows, each place where a message may begin is offered to the
//! engines' message readers ([`crate::EngineGrammar::read_foreign`]), and the line's time is the
//! first stamp of that head ([`crate::lex::time::first_stamp`]; none: the agent dates the line when
//! it read it).
//!
//! What a head is, is what keeps a quoted stats line unread: a request log echoing a prompt, a
//! JSON object, a traceback's source line all quote the text, so nothing in front of a message
//! may be a quote. A head is also short, and ends where a logging format puts the message: after
//! a bracket, a parenthesis, a ` - `, a `|`, a `>`, a level word, a stamp, or the `:` after a
//! logger name or a level, then blanks.

/// The longest text in front of a message that is read as a head. Real heads are a stamp, a
/// level, a logger or file name and a few tags (a Ray actor's nested name is the longest seen,
/// about 80 bytes); a message further in sits behind some other text, not a head.
pub const MAX_HEAD: usize = 256;

/// The most places a message is looked for in one line. A head has a handful (the plugin head
/// `(APIServer pid=N) [vllm-rbln] INFO 2026-10-07 22:01:17,796 [loggers.py:248] ` has six), and
/// some readers look through the whole rest of the line (a preemption count, a lifecycle phrase):
/// without a bound, a line of `] ] ] ...` made every byte be read a hundred times.
pub const MAX_MESSAGE_STARTS: usize = 16;

/// The level words a foreign format prints before its message (Python's and the common others).
const LEVEL_WORDS: [&str; 8] = [
    "DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL", "TRACE", "NOTICE",
];

/// Where a message may begin in `line`, in order: after Python's default
/// `%(levelname)s:%(name)s:` head ([`basic_format_message`]), and after each run of blanks whose
/// text in front is a head ([`ends_a_head`]). The start of the line is not offered: a line that
/// is all message is what the engines' own readers take.
pub fn message_starts(line: &str) -> impl Iterator<Item = usize> + '_ {
    let bytes = line.as_bytes();
    // Nothing after a quote is behind a head, and nothing past the longest head.
    let quote = memchr::memchr3(b'\'', b'"', b'`', bytes).unwrap_or(bytes.len());
    let window = quote.min(MAX_HEAD + 1).min(bytes.len());
    let after_blanks = (1..=window).filter(move |&at| {
        at < bytes.len()
            && !is_blank(bytes[at])
            && is_blank(bytes[at - 1])
            && ends_a_head(line[..at].trim_end_matches([' ', '\t']))
    });
    // The window may end inside a character; the basic format's head is ASCII anyway.
    let head_text = &line[..(0..=window)
        .rev()
        .find(|&at| line.is_char_boundary(at))
        .unwrap_or(0)];
    basic_format_message(head_text)
        .into_iter()
        .chain(after_blanks)
        .take(MAX_MESSAGE_STARTS)
}

/// Where the message begins behind `logging.basicConfig()`'s default format,
/// `%(levelname)s:%(name)s:%(message)s` (`INFO:vllm.v1.metrics.loggers:Engine 000: ...`): the
/// one head that puts no blank before its message. The logger name is a dotted identifier.
fn basic_format_message(head: &str) -> Option<usize> {
    let (level, rest) = head.split_once(':')?;
    if !LEVEL_WORDS.contains(&level) {
        return None;
    }
    let name_len = rest
        .bytes()
        .take_while(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
        .count();
    let message_at = level.len() + 1 + name_len + 1;
    (name_len > 0 && rest.as_bytes().get(name_len) == Some(&b':') && message_at < head.len())
        .then_some(message_at)
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// True when `head` (blanks after it removed) ends as a head does before its message.
fn ends_a_head(head: &str) -> bool {
    let Some(&last) = head.as_bytes().last() else {
        return false;
    };
    let word = &head[head.rfind([' ', '\t']).map_or(0, |at| at + 1)..];
    match last {
        b']' | b')' | b'-' | b'|' | b'>' => true,
        // A logger or file name (`vllm.v1.metrics.loggers:`, `loggers.py:248:`), syslog's
        // `vllm[1234]:`, or a level (`INFO:`); not a field name: after `Engine 000: ` another
        // message would begin inside the one that holds it.
        b':' => {
            let name = &word[..word.len() - 1];
            name.contains(['.', '/', '_']) || name.ends_with(']') || LEVEL_WORDS.contains(&name)
        }
        // The end of a stamp: `22:01:17`, `22:01:17,796`, `22:01:17Z`.
        b'0'..=b'9' | b'Z' => crate::lex::time::first_stamp(word).is_some(),
        _ => LEVEL_WORDS.contains(&word),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(line: &str) -> Vec<&str> {
        message_starts(line).map(|at| &line[at..]).collect()
    }

    #[test]
    fn a_message_may_begin_after_any_head_like_text() {
        let line = "(APIServer pid=1) [vllm-rbln] INFO 2026-10-07 22:01:17,796 [loggers.py:248] Engine 000: x";
        assert!(messages(line).contains(&"Engine 000: x"));
        let line = "2026-10-07 22:01:17,796 - vllm.v1.metrics.loggers - INFO - Engine 000: x";
        assert!(messages(line).contains(&"Engine 000: x"));
        assert_eq!(messages("[03:51:54] Decode batch"), vec!["Decode batch"]);
        assert_eq!(
            messages("2026-10-07T22:01:17Z Engine 000: x")[0],
            "Engine 000: x"
        );
        assert_eq!(
            messages("22:01:17,796 WARN Engine"),
            vec!["WARN Engine", "Engine"]
        );
        assert_eq!(
            messages("vllm.loggers: Engine 000: x"),
            vec!["Engine 000: x"]
        );
    }

    #[test]
    fn prose_and_quoted_text_are_no_head() {
        assert!(messages("my log says Engine 000: x").is_empty());
        assert!(messages("Received request c: prompt: 'Engine 000: x'").is_empty());
        // Nothing after a quote: a message may start at most at the quote itself.
        assert_eq!(
            messages("22:01:17 INFO 'Engine 000: x'"),
            vec!["INFO 'Engine 000: x'", "'Engine 000: x'"]
        );
        let far = format!("{} Engine 000: x", "-".repeat(MAX_HEAD + 1));
        assert!(messages(&far).is_empty());
        // A window that ends inside a character (a regression: it panicked).
        let wide = format!("INFO:ab:{}", "é".repeat(MAX_HEAD));
        assert!(!wide.is_char_boundary(MAX_HEAD + 1));
        assert_eq!(messages(&wide), vec![&wide[8..]]);
        let many = format!("{}Engine 000: x", "] ".repeat(MAX_MESSAGE_STARTS + 1));
        assert_eq!(messages(&many).len(), MAX_MESSAGE_STARTS);
    }
}
