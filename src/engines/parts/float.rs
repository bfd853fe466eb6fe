//! How a float of the state is written in the state file, so that every value read back is the
//! value saved.
//!
//! JSON has no NaN or infinity, and serde_json writes them as `null`, which an `f64` field
//! refuses on reading: one such value made every later start-up discard the whole state file.
//! Finite values are plain JSON numbers; the others are the strings
//! Prometheus spells them with, `"NaN"`, `"+Inf"` and `"-Inf"`. Every serialized float field of
//! the state names one of these functions in `#[serde(with = "...")]`.

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An `f64` as the state file writes it.
#[derive(Debug, Clone, Copy)]
struct Float(f64);

impl Serialize for Float {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let value = self.0;
        if value.is_nan() {
            serializer.serialize_str("NaN")
        } else if value == f64::INFINITY {
            serializer.serialize_str("+Inf")
        } else if value == f64::NEG_INFINITY {
            serializer.serialize_str("-Inf")
        } else {
            serializer.serialize_f64(value)
        }
    }
}

impl<'de> Deserialize<'de> for Float {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FloatVisitor;

        impl Visitor<'_> for FloatVisitor {
            type Value = Float;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number, \"NaN\", \"+Inf\" or \"-Inf\"")
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Float, E> {
                Ok(Float(v))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Float, E> {
                Ok(Float(v as f64))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Float, E> {
                Ok(Float(v as f64))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Float, E> {
                match v {
                    "NaN" => Ok(Float(f64::NAN)),
                    "+Inf" => Ok(Float(f64::INFINITY)),
                    "-Inf" => Ok(Float(f64::NEG_INFINITY)),
                    _ => Err(E::invalid_value(de::Unexpected::Str(v), &self)),
                }
            }
        }

        deserializer.deserialize_any(FloatVisitor)
    }
}

pub fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    Float(*value).serialize(serializer)
}

pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    Float::deserialize(deserializer).map(|f| f.0)
}

/// `Option<f64>`: `null` is `None`, never a value.
pub mod option {
    use super::*;

    pub fn serialize<S: Serializer>(value: &Option<f64>, serializer: S) -> Result<S::Ok, S::Error> {
        value.map(Float).serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<f64>, D::Error> {
        Option::<Float>::deserialize(deserializer).map(|o| o.map(|f| f.0))
    }
}

/// `Vec<Option<f64>>`: per-position values, `null` where a position has none.
pub mod option_vec {
    use super::*;

    pub fn serialize<S: Serializer>(
        values: &[Option<f64>],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(values.iter().map(|v| v.map(Float)))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<Option<f64>>, D::Error> {
        Vec::<Option<Float>>::deserialize(deserializer)
            .map(|v| v.into_iter().map(|o| o.map(|f| f.0)).collect())
    }
}

/// `Option<[f64; 3]>`.
pub mod option_triple {
    use super::*;

    pub fn serialize<S: Serializer>(
        value: &Option<[f64; 3]>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        value.map(|t| t.map(Float)).serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<[f64; 3]>, D::Error> {
        Option::<[Float; 3]>::deserialize(deserializer).map(|o| o.map(|t| t.map(|f| f.0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Serialize, Deserialize)]
    struct Sample {
        #[serde(with = "super")]
        plain: f64,
        #[serde(with = "option")]
        maybe: Option<f64>,
        #[serde(with = "option_vec")]
        positions: Vec<Option<f64>>,
        #[serde(with = "option_triple")]
        triple: Option<[f64; 3]>,
    }

    fn bits(sample: &Sample) -> Vec<Option<u64>> {
        [Some(sample.plain), sample.maybe]
            .into_iter()
            .chain(sample.positions.iter().copied())
            .chain(sample.triple.into_iter().flatten().map(Some))
            .map(|v| v.map(f64::to_bits))
            .collect()
    }

    #[test]
    fn every_float_reads_back_as_the_same_bits() {
        for value in [
            0.0,
            -0.0,
            0.1,
            1234.5,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let sample = Sample {
                plain: value,
                maybe: Some(value),
                positions: vec![Some(value), None],
                triple: Some([value, 1.0, value]),
            };
            let json = serde_json::to_string(&sample).unwrap();
            let back: Sample = serde_json::from_str(&json).unwrap();
            assert_eq!(bits(&back), bits(&sample), "{value} as {json}");
        }
    }

    #[test]
    fn none_stays_none_and_integers_are_floats() {
        let back: Sample = serde_json::from_str(
            r#"{"plain": 3, "maybe": null, "positions": [null, 1], "triple": null}"#,
        )
        .unwrap();
        assert_eq!(back.plain, 3.0);
        assert_eq!(back.maybe, None);
        assert_eq!(back.positions, [None, Some(1.0)]);
        assert_eq!(back.triple, None);
    }

    #[test]
    fn another_string_is_an_error() {
        assert!(serde_json::from_str::<Sample>(
            r#"{"plain": "nan", "maybe": null, "positions": [], "triple": null}"#
        )
        .is_err());
    }
}
