//! A fast path for format A: a scanner for the flat, compact JSON object the Triton backend
//! builds by string concatenation, in either spelling: plain (`{"Key":1,...}`) or inside
//! Triton's escaped message (`"{\"Key\":1,...}"`, where every quote is `\"`).
//!
//! It reads keys and values as borrowed slices without unescaping or allocating per key, so
//! the hundreds of stats lines a second that `--log-verbose=1` produces stay cheap. It accepts
//! only that exact shape (no whitespace, no nesting, no escapes other than the quotes); on
//! anything else it returns `None` and the caller falls back to the full JSON parser, so it
//! never decides that a line is malformed on its own.

use std::borrow::Cow;

use memchr::memchr;

use crate::lex::loose::Loose;

/// Scans a flat object; `quote` is `"` for a plain message, `\"` for an escaped one.
pub fn object<'a>(text: &'a str, quote: &str) -> Option<Vec<(Cow<'a, str>, Loose<'a>)>> {
    let mut rest = text.strip_prefix('{')?;
    let mut entries = Vec::with_capacity(24);
    if let Some(after) = rest.strip_prefix('}') {
        return after.is_empty().then_some(entries);
    }
    loop {
        rest = rest.strip_prefix(quote)?;
        let end = find_quote(rest, quote)?;
        let key = &rest[..end];
        rest = rest[end + quote.len()..].strip_prefix(':')?;
        let value;
        if let Some(after) = rest.strip_prefix(quote) {
            let end = find_quote(after, quote)?;
            let text = &after[..end];
            value = Loose::Str(Cow::Borrowed(text));
            rest = &after[end + quote.len()..];
        } else {
            let len = rest
                .bytes()
                .take_while(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
                .count();
            value = number(&rest[..len])?;
            rest = &rest[len..];
        }
        entries.push((Cow::Borrowed(key), value));
        if let Some(after) = rest.strip_prefix(',') {
            rest = after;
        } else {
            return (rest == "}").then_some(entries);
        }
    }
}

/// Where the next `quote` starts; `None` when another escape or a stray quote comes first
/// (the text then needs the full parser).
fn find_quote(s: &str, quote: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    if quote == "\"" {
        let at = memchr(b'"', bytes)?;
        return memchr(b'\\', &bytes[..at]).is_none().then_some(at);
    }
    let at = memchr(b'\\', bytes)?;
    if bytes.get(at + 1) != Some(&b'"') || memchr(b'"', &bytes[..at]).is_some() {
        return None;
    }
    Some(at)
}

fn number(token: &str) -> Option<Loose<'_>> {
    if token.is_empty() {
        return None;
    }
    if token.bytes().all(|b| b.is_ascii_digit()) {
        return token.parse().ok().map(Loose::Uint);
    }
    if let Some(digits) = token.strip_prefix('-') {
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            return token.parse().ok().map(Loose::Int);
        }
    }
    let first = token.as_bytes()[0];
    if !(first.is_ascii_digit() || first == b'-') {
        return None;
    }
    token.parse().ok().map(Loose::Float)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_spellings_alike() {
        let plain = object(
            r#"{"A":1,"T":"05-10-2024 07:57:30","F":0.025000,"W":-1}"#,
            "\"",
        )
        .unwrap();
        let escaped = object(
            r#"{\"A\":1,\"T\":\"05-10-2024 07:57:30\",\"F\":0.025000,\"W\":-1}"#,
            "\\\"",
        )
        .unwrap();
        assert_eq!(plain, escaped);
        assert_eq!(plain[0].1, Loose::Uint(1));
        assert_eq!(plain[2].1, Loose::Float(0.025));
        assert_eq!(plain[3].1, Loose::Int(-1));
    }

    #[test]
    fn declines_what_it_does_not_know() {
        assert!(object(r#"{"A": 1}"#, "\"").is_none());
        assert!(object(r#"{"A":{"B":1}}"#, "\"").is_none());
        assert!(object(r#"{"A":"x\ny"}"#, "\"").is_none());
        assert!(object(r#"{"A":1,"B"#, "\"").is_none());
        assert!(object(r#"{"A":1}x"#, "\"").is_none());
        assert!(object(r#"{"A":.5}"#, "\"").is_none());
        assert!(object("", "\"").is_none());
    }
}
