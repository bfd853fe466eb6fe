//! Every seed of every target passes that target's checks, on stable. The seeds are the
//! fixtures' own lines (`fuzz/seed_corpus.py`), so a grammar or decoder that breaks one of its
//! promises on a real line fails here without a nightly fuzzing run.

use std::path::Path;

use llmtail::envelope::EnvelopeKind;
use llmtail_fuzz::{envelope, grammar};

/// The checks a target runs on one input.
type Check = fn(&[u8]);

/// What each target in `fuzz_targets/` runs, by the target's name.
const TARGETS: &[(&str, Check)] = &[
    ("envelope_ansi", envelope::ansi),
    ("envelope_cri", |d| {
        envelope::decode_lines(EnvelopeKind::Cri, d)
    }),
    ("envelope_detect", |d| {
        envelope::decode_lines(EnvelopeKind::Auto, d)
    }),
    ("envelope_docker", |d| {
        envelope::decode_lines(EnvelopeKind::Docker, d)
    }),
    ("envelope_journald", |d| {
        envelope::decode_lines(EnvelopeKind::Journald, d)
    }),
    ("envelope_json", |d| {
        envelope::decode_lines(EnvelopeKind::Json, d)
    }),
    ("envelope_plain", |d| {
        envelope::decode_lines(EnvelopeKind::Plain, d)
    }),
    ("grammar_clocks", grammar::clocks),
    ("grammar_each_engine", grammar::each_engine),
    ("grammar_llamacpp", grammar::llamacpp),
    ("grammar_lmdeploy", grammar::lmdeploy),
    ("grammar_numbers", grammar::numbers),
    ("grammar_ollama", grammar::ollama),
    ("grammar_read", grammar::read),
    ("grammar_trtllm", grammar::trtllm),
    ("grammar_trtllm_json", grammar::trtllm_json),
    ("grammar_vllm", grammar::vllm),
];

fn names_in(dir: &str) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .map(|path| path.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn every_target_is_run_here_and_every_corpus_is_a_targets() {
    let here: Vec<String> = TARGETS.iter().map(|(name, _)| name.to_string()).collect();
    assert_eq!(
        names_in("fuzz_targets"),
        here,
        "fuzz_targets/ against TARGETS"
    );
    for corpus in names_in("corpus") {
        assert!(here.contains(&corpus), "corpus/{corpus} is no target's");
    }
}

#[test]
fn every_seed_passes_its_targets_checks() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut seeds = 0;
    for (name, check) in TARGETS {
        let Ok(entries) = std::fs::read_dir(corpus.join(name)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let data = std::fs::read(&path).unwrap();
            let outcome = std::panic::catch_unwind(|| check(&data));
            assert!(
                outcome.is_ok(),
                "{name}: the seed {} broke a check",
                path.display()
            );
            seeds += 1;
        }
    }
    assert!(
        seeds > 1000,
        "only {seeds} seeds: run python3 fuzz/seed_corpus.py"
    );
}
