//! Property test over mutated real lines (issue 9, "Fuzzing"): every line of the line cases,
//! cut, glued, with bytes replaced or inserted, digits swapped for huge, negative or `nan`
//! numbers. Whatever the grammars make of it: no panic, every rejected line names a known
//! grammar, and a parsed record carries only values an engine can print (none impossible
//! reaches the state).

use std::path::Path;

use llmtail_grammars::{Outcome, Record, GRAMMAR_NAMES};
use proptest::prelude::*;

/// Every `line = ...` of the line-case files, read once.
fn case_lines() -> &'static [String] {
    static LINES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    LINES.get_or_init(read_case_lines)
}

fn read_case_lines() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/cases");
    let mut lines = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let file: toml::Value = toml::from_str(&text).unwrap();
        for case in file["case"].as_array().unwrap() {
            lines.push(case["line"].as_str().unwrap().to_string());
        }
    }
    lines
}

/// One edit of a line.
#[derive(Debug, Clone)]
enum Edit {
    Cut(usize),
    Insert(usize, String),
    Replace(usize, char),
    Number(usize, &'static str),
    Glue(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        any::<usize>().prop_map(Edit::Cut),
        (any::<usize>(), "[ -~]{0,12}").prop_map(|(at, s)| Edit::Insert(at, s)),
        (any::<usize>(), any::<char>()).prop_map(|(at, c)| Edit::Replace(at, c)),
        (
            any::<usize>(),
            prop::sample::select(vec![
                "-500.0",
                "1e307",
                "1e308",
                "-1e308",
                "nan",
                "inf",
                "99999999999999999999",
                "-0.05",
                "1e306",
                "0x10",
                "1,2",
                "",
            ])
        )
            .prop_map(|(at, n)| Edit::Number(at, n)),
        any::<usize>().prop_map(Edit::Glue),
    ]
}

fn boundary(line: &str, at: usize) -> usize {
    let mut at = at % (line.len() + 1);
    while !line.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn apply(line: &str, edit: &Edit, lines: &[String]) -> String {
    match edit {
        Edit::Cut(at) => line[..boundary(line, *at)].to_string(),
        Edit::Insert(at, s) => {
            let at = boundary(line, *at);
            format!("{}{s}{}", &line[..at], &line[at..])
        }
        Edit::Replace(at, c) => {
            let at = boundary(line, *at);
            let rest = line[at..].chars().skip(1).collect::<String>();
            format!("{}{c}{rest}", &line[..at])
        }
        Edit::Number(at, n) => {
            // Replace the digits run at or after `at` with `n`.
            let at = boundary(line, *at);
            let Some(start) = line[at..]
                .find(|c: char| c.is_ascii_digit())
                .map(|i| at + i)
            else {
                return line.to_string();
            };
            let end = line[start..]
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .map_or(line.len(), |i| start + i);
            format!("{}{n}{}", &line[..start], &line[end..])
        }
        Edit::Glue(other) => format!("{line}{}", lines[other % lines.len()]),
    }
}

fn possible(record: &Record<'_>) -> bool {
    match record {
        Record::Vllm(r) => r.possible(),
        Record::Trtllm(r) => r.possible(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4_000, ..ProptestConfig::default() })]

    #[test]
    fn mutated_real_lines_never_panic_nor_yield_an_impossible_value(
        pick in any::<usize>(),
        edits in prop::collection::vec(edit(), 1..4),
    ) {
        let lines = case_lines();
        let mut line = lines[pick % lines.len()].clone();
        for e in &edits {
            line = apply(&line, e, lines);
        }
        match llmtail_grammars::read(&line) {
            Outcome::Unmatched => {}
            Outcome::Rejected { grammar } => prop_assert!(GRAMMAR_NAMES.contains(&grammar)),
            Outcome::Parsed(parsed) => prop_assert!(
                possible(&parsed.record),
                "impossible value parsed from {line:?}: {:?}", parsed.record
            ),
        }
    }
}
