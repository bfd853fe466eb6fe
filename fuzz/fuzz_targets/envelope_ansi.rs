//! Fuzz target: see `llmtail_fuzz::envelope::ansi` for what it asserts.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| llmtail_fuzz::envelope::ansi(data));
