//! The remote-write 1.0 wire format: the few protobuf messages of Prometheus'
//! `prompb/remote.proto` and `prompb/types.proto` that a sender fills, derived with prost by
//! hand (no protoc step in the build), and the snappy block compression the spec requires.
//!
//! Field numbers are the .proto's; fields a 1.0 sender leaves empty (exemplars, native
//! histograms) are left out, which protobuf reads as empty.

use prost::Message;

/// `prometheus.WriteRequest`: the body of one push.
#[derive(Clone, PartialEq, prost::Message)]
pub struct WriteRequest {
    #[prost(message, repeated, tag = "1")]
    pub timeseries: Vec<TimeSeries>,
    // Tag 2 is reserved in remote.proto.
    #[prost(message, repeated, tag = "3")]
    pub metadata: Vec<MetricMetadata>,
}

/// `prometheus.TimeSeries`: labels sorted by name, `__name__` among them.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TimeSeries {
    #[prost(message, repeated, tag = "1")]
    pub labels: Vec<Label>,
    #[prost(message, repeated, tag = "2")]
    pub samples: Vec<Sample>,
}

#[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
pub struct Label {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Sample {
    #[prost(double, tag = "1")]
    pub value: f64,
    /// Milliseconds since the epoch.
    #[prost(int64, tag = "2")]
    pub timestamp: i64,
}

/// `prometheus.MetricMetadata`: a family's HELP and TYPE.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct MetricMetadata {
    #[prost(enumeration = "MetricType", tag = "1")]
    pub r#type: i32,
    #[prost(string, tag = "2")]
    pub metric_family_name: String,
    #[prost(string, tag = "4")]
    pub help: String,
    #[prost(string, tag = "5")]
    pub unit: String,
}

/// `prometheus.MetricMetadata.MetricType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum MetricType {
    Unknown = 0,
    Counter = 1,
    Gauge = 2,
    Histogram = 3,
    Gaugehistogram = 4,
    Summary = 5,
    Info = 6,
    Stateset = 7,
}

impl MetricType {
    /// The type an exposition's `# TYPE` line names.
    pub fn from_exposition(kind: &str) -> MetricType {
        match kind {
            "counter" => MetricType::Counter,
            "gauge" => MetricType::Gauge,
            "histogram" => MetricType::Histogram,
            "gaugehistogram" => MetricType::Gaugehistogram,
            "summary" => MetricType::Summary,
            "info" => MetricType::Info,
            "stateset" => MetricType::Stateset,
            _ => MetricType::Unknown,
        }
    }
}

/// The request as the spec sends it: protobuf, then snappy's block format (not its framed
/// stream format, which receivers refuse).
pub fn encode(request: &WriteRequest) -> Vec<u8> {
    let raw = request.encode_to_vec();
    snap::raw::Encoder::new()
        .compress_vec(&raw)
        // Only an input over snappy's 4 GiB block limit fails; a push is far smaller (its
        // series are cut into batches of MAX_SAMPLES_PER_REQUEST).
        .unwrap_or_default()
}

/// What a receiver does with a body: decompress, then decode. For tests.
pub fn decode(body: &[u8]) -> Result<WriteRequest, String> {
    let raw = snap::raw::Decoder::new()
        .decompress_vec(body)
        .map_err(|e| format!("not snappy: {e}"))?;
    WriteRequest::decode(raw.as_slice()).map_err(|e| format!("not a WriteRequest: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(name: &str, value: &str) -> Label {
        Label {
            name: name.into(),
            value: value.into(),
        }
    }

    #[test]
    fn a_write_request_round_trips_through_snappy_and_protobuf() {
        let request = WriteRequest {
            timeseries: vec![TimeSeries {
                labels: vec![
                    label("__name__", "vllm:num_requests_running"),
                    label("engine", "0"),
                    label("model_name", "qwen3-8b"),
                ],
                samples: vec![Sample {
                    value: 14.0,
                    timestamp: 1_795_353_905_000,
                }],
            }],
            metadata: vec![MetricMetadata {
                r#type: MetricType::Gauge as i32,
                metric_family_name: "vllm:num_requests_running".into(),
                help: "Number of requests in model execution batches.".into(),
                unit: String::new(),
            }],
        };
        let body = encode(&request);
        assert_eq!(decode(&body).unwrap(), request);
    }

    /// The bytes a receiver reads: field numbers and wire types as remote.proto and
    /// types.proto give them, so a message derived by hand cannot drift from the spec.
    #[test]
    fn the_wire_bytes_follow_the_proto_field_numbers() {
        let request = WriteRequest {
            timeseries: vec![TimeSeries {
                labels: vec![label("a", "b")],
                samples: vec![Sample {
                    value: 1.0,
                    timestamp: 2,
                }],
            }],
            metadata: vec![],
        };
        let raw = request.encode_to_vec();
        // timeseries (1, length-delimited, 21 bytes) {
        //   labels (1, 6 bytes) { name (1) "a", value (2) "b" },
        //   samples (2, 11 bytes) { value (1, 64-bit) 1.0, timestamp (2, varint) 2 } }
        let expected = [
            0x0a, 0x15, 0x0a, 0x06, 0x0a, 0x01, b'a', 0x12, 0x01, b'b', 0x12, 0x0b, 0x09, 0, 0, 0,
            0, 0, 0, 0xf0, 0x3f, 0x10, 0x02,
        ];
        assert_eq!(raw, expected);
    }
}
