//! vLLM's comma-joined `Key: value unit` lists.
//!
//! Since 0.11.1 the stats line is `", ".join(parts)` with optional parts, and new keys arrive
//! every few releases; the spec-decoding line has the same shape. So the line is read as a
//! list of fields rather than by one fixed production. Two quirks are folded in here:
//! a value may itself contain `", "` (`KV fetch: 1 waiting to start, 2 in progress, ...`,
//! `Per-position acceptance rate: 0.800, 0.600`), which shows as parts without `": "` that
//! continue the previous field; and 0.7.1 forgot one comma (`Waiting: 2 reqs GPU KV cache
//! usage: 7.8%`), which shows as a value with a second `": "` after its unit.

use memchr::{memchr, memchr2};

use crate::lex::field::find_pair;

/// One `Key: value` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field<'a> {
    pub key: &'a str,
    pub value: &'a str,
}

/// Iterates over the fields of a list. Yields `Err(part)` for a leading part that is not a
/// field at all (no `": "`), which callers treat as a malformed line.
pub fn fields(list: &str) -> Fields<'_> {
    Fields {
        rest: list,
        missing_comma_seen: false,
    }
}

pub struct Fields<'a> {
    rest: &'a str,
    /// 0.7.1 dropped one comma in the line, once. Splitting a value again would rescan the
    /// rest of the line per field: quadratic in a line of `k: v k: v ...` without commas
    /// (1.3 s for 1 MiB), where a second split only ever helps a line vLLM never printed.
    missing_comma_seen: bool,
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<Field<'a>, &'a str>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let list = self.rest;
        let Some(colon) = first_part(list).and_then(|part| find_pair(part, b": ")) else {
            self.rest = "";
            return Some(Err(list));
        };
        let key = &list[..colon];
        let value_start = colon + 2;
        // The value runs until a ", " that starts a part which is itself a field.
        let mut end = value_start;
        loop {
            match find_pair(&list[end..], b", ") {
                None => {
                    end = list.len();
                    self.rest = "";
                    break;
                }
                Some(offset) => {
                    let sep = end + offset;
                    let next = &list[sep + 2..];
                    if starts_with_field(next) {
                        end = sep;
                        self.rest = next;
                        break;
                    }
                    end = sep + 2;
                }
            }
        }
        let mut value = &list[value_start..end];
        // 0.7.1: `2 reqs GPU KV cache usage: 7.8%` is two fields without a comma between.
        if !self.missing_comma_seen && find_pair(value, b": ").is_some() {
            if let Some(cut) = second_space(value) {
                self.missing_comma_seen = true;
                self.rest = &list[value_start + cut + 1..];
                value = &value[..cut];
            }
        }
        Some(Ok(Field { key, value }))
    }
}

fn first_part(list: &str) -> Option<&str> {
    Some(match find_pair(list, b", ") {
        Some(i) => &list[..i],
        None => list,
    })
}

/// True when the part before the next `", "` holds a `": "`: a field starts here.
fn starts_with_field(list: &str) -> bool {
    let bytes = list.as_bytes();
    let mut from = 0;
    while let Some(i) = memchr2(b':', b',', &bytes[from..]) {
        let at = from + i;
        if bytes.get(at + 1) == Some(&b' ') {
            return bytes[at] == b':';
        }
        from = at + 1;
    }
    false
}

fn second_space(value: &str) -> Option<usize> {
    let first = memchr(b' ', value.as_bytes())?;
    memchr(b' ', &value.as_bytes()[first + 1..]).map(|i| first + 1 + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &str) -> Vec<(&str, &str)> {
        fields(list)
            .map(|f| f.map(|f| (f.key, f.value)).unwrap_or(("!", "!")))
            .collect()
    }

    #[test]
    fn splits_plain_fields() {
        assert_eq!(
            pairs("Running: 3 reqs, Waiting: 1 reqs"),
            [("Running", "3 reqs"), ("Waiting", "1 reqs")]
        );
    }

    #[test]
    fn keeps_inner_commas_with_their_field() {
        assert_eq!(
            pairs("KV fetch: 1 waiting to start, 2 in progress, 3 completed waiting, GPU KV cache usage: 5.0%"),
            [("KV fetch", "1 waiting to start, 2 in progress, 3 completed waiting"), ("GPU KV cache usage", "5.0%")]
        );
        assert_eq!(
            pairs("Per-position acceptance rate: 0.800, 0.600, Avg Draft acceptance rate: 70.0%"),
            [
                ("Per-position acceptance rate", "0.800, 0.600"),
                ("Avg Draft acceptance rate", "70.0%")
            ]
        );
    }

    #[test]
    fn splits_the_0_7_1_missing_comma() {
        assert_eq!(
            pairs("Running: 1 reqs, Waiting: 0 reqs GPU KV cache usage: 7.8%"),
            [
                ("Running", "1 reqs"),
                ("Waiting", "0 reqs"),
                ("GPU KV cache usage", "7.8%")
            ]
        );
    }

    #[test]
    fn a_leading_part_without_key_is_an_error() {
        assert_eq!(pairs("garbage, Running: 1 reqs"), [("!", "!")]);
    }
}
