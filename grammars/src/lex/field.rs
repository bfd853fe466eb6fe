//! Reading one `Key: value` field: where a two-byte separator is, a value read whole, and a
//! key that may come once. vLLM's, LMDeploy's and SGLang's stats lines are lists of such
//! fields, each split in its own way by its engine's module.

use memchr::memchr;
use nom::{combinator::all_consuming, Parser};

/// Runs `parser` over the whole of `value`, or gives `None`: a value with anything after
/// what the engine prints (a cut-off or glued line) is not that value.
pub fn whole<'a, T>(
    value: &'a str,
    parser: impl Parser<&'a str, Output = T, Error = nom::error::Error<&'a str>>,
) -> Option<T> {
    all_consuming(parser).parse(value).ok().map(|(_, v)| v)
}

/// Fills `slot` once; `None` when the value did not parse or the key came twice, both of
/// which make the line malformed.
pub fn set_once<T>(slot: &mut Option<T>, value: Option<T>) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(value?);
    Some(())
}

/// Where the two-byte `pair` first occurs in `s`. `str::find` builds a Two-Way searcher on
/// every call, which cost more than the rest of a stats line's parse together.
pub fn find_pair(s: &str, pair: &[u8; 2]) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut from = 0;
    while let Some(i) = memchr(pair[0], &bytes[from..]) {
        let at = from + i;
        if bytes.get(at + 1) == Some(&pair[1]) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lex::number::uint;

    #[test]
    fn a_value_is_read_whole_or_not_at_all() {
        assert_eq!(whole("42", uint), Some(42));
        assert_eq!(whole("42 reqs", uint), None);
    }

    #[test]
    fn a_key_fills_its_slot_once() {
        let mut slot = None;
        assert_eq!(set_once(&mut slot, Some(1)), Some(()));
        assert_eq!(set_once(&mut slot, Some(2)), None);
        assert_eq!(slot, Some(1));
        assert_eq!(set_once(&mut None::<u8>, None), None);
    }

    #[test]
    fn a_pair_is_found_where_both_bytes_stand_together() {
        assert_eq!(find_pair("a:b: c", b": "), Some(3));
        assert_eq!(find_pair("a:b:c", b": "), None);
        assert_eq!(find_pair("", b", "), None);
    }
}
