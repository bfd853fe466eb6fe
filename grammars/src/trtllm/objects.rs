//! Iteration records as JSON objects anywhere in a line, for lines the grammar does not read
//! whole: a `/metrics` answer appended to a file (`[{...},{...}]`, every iteration since the
//! last poll on one line), a record pasted after a Markdown fence (`` ```{...},``` ``), or
//! Triton records glued together (`I0510 ...] {...}I0510 ...] {...}`).
//!
//! One pass finds each top-level `{...}` (braces inside strings skipped); an object that holds
//! one of the JSON anchors is read as format A or B. The text between two objects is where the
//! second one's head is, if it has one; an object without one takes the head before it.
//! Objects nested inside another object are not looked for: that would rescan the outer one.

use std::sync::LazyLock;

use aho_corasick::packed;
use memchr::memchr;

use super::prefix::{self, Head};
use crate::Outcome;

/// The keys only a format A or B record holds (the JSON ones of [`super::ANCHORS`], escaped or not).
static JSON_ANCHORS: LazyLock<packed::Searcher> = LazyLock::new(|| {
    packed::Searcher::new([
        "cpuMemUsage",
        "iterLatencyMS",
        super::triton_json::FIRST_KEY,
    ])
    .expect("plain strings make a searcher")
});

/// The iteration records in `text` (one record's piece of a line), or `None` when it holds no
/// `{` at all.
pub fn objects(text: &str) -> Option<Objects<'_>> {
    let first = memchr(b'{', text.as_bytes())?;
    Some(Objects {
        text,
        at: first,
        gap_from: 0,
        head: None,
    })
}

/// See [`objects`]: one outcome per object that is an iteration record (parsed, or rejected when
/// it starts as one and does not read or holds an impossible value).
pub struct Objects<'a> {
    text: &'a str,
    /// Where to look for the next object.
    at: usize,
    /// Where the text since the last object starts.
    gap_from: usize,
    /// The last head found between objects.
    head: Option<Head<'a>>,
}

impl<'a> Iterator for Objects<'a> {
    type Item = Outcome<'a>;

    fn next(&mut self) -> Option<Outcome<'a>> {
        loop {
            let (mut start, mut end) = next_object(self.text, self.at)?;
            self.at = end;
            if JSON_ANCHORS.find(&self.text[start..end]).is_none() {
                continue;
            }
            // Triton (24.05+) writes its message as a JSON string literal: `"{\"Key\":1}"`.
            let bytes = self.text.as_bytes();
            if start > self.gap_from && bytes[start - 1] == b'"' && bytes.get(end) == Some(&b'"') {
                start -= 1;
                end += 1;
                self.at = end;
            }
            let gap = &self.text[self.gap_from..start];
            self.gap_from = end;
            let head = prefix::split(gap);
            if head.time.is_some() || head.rank.is_some() || head.pid.is_some() {
                self.head = Some(head);
            }
            let object = &self.text[start..end];
            match super::json(object) {
                Some(it) => {
                    let head = self.head.clone().unwrap_or_default();
                    return Some(super::judged(super::iteration(Box::new(it), &head)));
                }
                None if super::claimed_json(object.trim_start_matches('"')) => {
                    return Some(Outcome::Rejected {
                        grammar: "trtllm_iteration",
                    })
                }
                None => {}
            }
        }
    }
}

/// The next top-level object at or after `from`: where its `{` is and where its `}` ends. A
/// backslash skips the byte after it, so the escaped quotes of a string-literal message never
/// open a string. `None` when no object closes before the end.
fn next_object(text: &str, from: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let start = from + memchr(b'{', bytes.get(from..)?)?;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'"' => in_string = !in_string,
            b'{' if !in_string => depth += 1,
            b'}' if !in_string => {
                depth -= 1;
                if depth == 0 {
                    return Some((start, i + 1));
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_top_level_objects_and_skips_braces_in_strings() {
        let text = r#"x {"a":"}{","b":{"c":1}},{"d":2} {"e":"#;
        assert_eq!(next_object(text, 0), Some((2, 24)));
        assert_eq!(next_object(text, 24), Some((25, 32)));
        assert_eq!(next_object(text, 32), None);
        assert_eq!(next_object(r#""{\"a\":1}""#, 0), Some((1, 10)));
    }

    #[test]
    fn objects_without_an_anchor_yield_nothing() {
        assert_eq!(objects(r#"[{"a":1},{"iter":2}]"#).unwrap().count(), 0);
        assert!(objects("no braces").is_none());
    }
}
