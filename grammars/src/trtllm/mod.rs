//! TensorRT-LLM and Triton's TRT-LLM backend. (Grammar being written; see issue 4.)

use serde::Serialize;

use crate::Parsed;

/// Substrings at least one of which every line this module parses contains.
pub const ANCHORS: &[&str] = &[];

/// What one TensorRT-LLM line says.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum TrtllmRecord<'a> {
    #[doc(hidden)]
    Version { version: &'a str },
}

impl TrtllmRecord<'_> {
    /// The `grammar` label for lines that produce this record.
    pub fn grammar(&self) -> &'static str {
        match self {
            TrtllmRecord::Version { .. } => "trtllm_identity",
        }
    }
}

/// Parses a line that contains one of [`ANCHORS`].
pub fn parse(_line: &str) -> Option<Parsed<'_>> {
    None
}
