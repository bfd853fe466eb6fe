//! A lenient, borrowing view of one JSON value, for the stats objects of formats A and B.
//!
//! Stats JSON is machine-written, but across versions a key can change type (an int printed
//! as `1.0`), appear as `null`, or be missing. Deserializing into fixed structs would reject
//! the whole line for one odd value; [`Loose`] accepts any JSON and lets the caller take what
//! it understands. Keys and strings borrow from the input when they have no escapes.
//! Arrays are skipped, not stored: no stats key we read is an array.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// Any JSON value, keeping only what the stats grammars read.
#[derive(Debug, Clone, PartialEq)]
pub enum Loose<'de> {
    Uint(u64),
    Int(i64),
    Float(f64),
    Str(Cow<'de, str>),
    Map(Vec<(Cow<'de, str>, Loose<'de>)>),
    Null,
    /// A boolean or an array.
    Other,
}

impl Loose<'_> {
    /// A non-negative integer (an integral float such as `3.0` counts).
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Loose::Uint(n) => Some(n),
            Loose::Int(n) => u64::try_from(n).ok(),
            Loose::Float(f) if f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f < 1.8e19 => {
                Some(f as u64)
            }
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Loose::Uint(n) => Some(n as f64),
            Loose::Int(n) => Some(n as f64),
            Loose::Float(f) => Some(f),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Loose::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&[(Cow<'_, str>, Loose<'_>)]> {
        match self {
            Loose::Map(entries) => Some(entries),
            _ => None,
        }
    }
}

/// Parses `text` as one JSON object. `None` for anything else, a cut-off line included.
pub fn object(text: &str) -> Option<Vec<(Cow<'_, str>, Loose<'_>)>> {
    match serde_json::from_str::<Loose<'_>>(text) {
        Ok(Loose::Map(entries)) => Some(entries),
        _ => None,
    }
}

/// A message that is a JSON string literal (Triton 24.05+ escapes every message): its text.
pub fn unescape(message: &str) -> Option<String> {
    if !message.starts_with('"') {
        return None;
    }
    serde_json::from_str::<String>(message).ok()
}

struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

impl<'de> Deserialize<'de> for Loose<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LooseVisitor)
    }
}

struct LooseVisitor;

impl<'de> Visitor<'de> for LooseVisitor {
    type Value = Loose<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Loose::Other)
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Loose::Uint(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Loose::Int(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Loose::Float(v))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Loose::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Loose::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Loose::Str(Cow::Owned(v)))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Loose::Null)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Loose::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Loose::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Loose::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(32).min(64));
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            entries.push((key, map.next_value::<Loose<'de>>()?));
        }
        Ok(Loose::Map(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrows_keys_and_reads_numbers_leniently() {
        let map =
            object(r#"{"a":1,"b":2.0,"c":-1,"d":null,"e":[1,2],"f":{"g":"x"},"h":0.5}"#).unwrap();
        assert!(matches!(map[0].0, Cow::Borrowed("a")));
        assert_eq!(map[1].1.as_u64(), Some(2));
        assert_eq!(map[2].1.as_u64(), None);
        assert_eq!(map[3].1, Loose::Null);
        assert_eq!(map[4].1, Loose::Other);
        assert_eq!(map[5].1.as_map().unwrap()[0].1.as_str(), Some("x"));
        assert_eq!(map[6].1.as_u64(), None);
    }

    #[test]
    fn rejects_cut_lines_and_non_objects() {
        assert!(object(r#"{"a":1,"b":"#).is_none());
        assert!(object("[1]").is_none());
        assert!(object("").is_none());
    }

    #[test]
    fn unescapes_a_quoted_message() {
        assert_eq!(unescape(r#""{\"a\":1}""#).as_deref(), Some(r#"{"a":1}"#));
        assert_eq!(unescape("{}"), None);
    }
}
