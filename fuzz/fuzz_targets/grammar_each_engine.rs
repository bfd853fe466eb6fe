//! Fuzz target: see `llmtail_fuzz::grammar::each_engine` for what it asserts.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| llmtail_fuzz::grammar::each_engine(data));
