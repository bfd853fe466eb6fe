//! Fuzz target: a made-up log decoded as EnvelopeKind::Plain, checked by
//! `llmtail_fuzz::envelope::decode_lines`.
#![no_main]

use llmtail::envelope::EnvelopeKind;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    llmtail_fuzz::envelope::decode_lines(EnvelopeKind::Plain, data)
});
