//! Property test over mutated real lines: every line of the line cases,
//! cut, glued, with bytes replaced or inserted, digits swapped for huge, negative or `nan`
//! numbers. Whatever the grammars make of it: no panic, every rejected line names a known
//! grammar, and a parsed record carries only values an engine can print (none impossible
//! reaches the state). And two real records glued on one line are each read as they are alone.

use std::path::Path;

use llmtail_grammars::{LogAnchors, Outcome, Record, GRAMMAR_NAMES};
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
    record.possible()
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
        for outcome in llmtail_grammars::records(&line).chain([llmtail_grammars::read(&line)]) {
            match outcome {
                Outcome::Unmatched => {}
                Outcome::Rejected { grammar } => prop_assert!(GRAMMAR_NAMES.contains(&grammar)),
                Outcome::Parsed(parsed) => prop_assert!(
                    possible(&parsed.record),
                    "impossible value parsed from {line:?}: {:?}", parsed.record
                ),
            }
        }
    }

    /// A line whose first anchor the reader found reads as the line searched afresh does,
    /// in a log of every engine and in a log known to be vLLM's.
    #[test]
    fn a_line_read_from_the_anchor_the_reader_found_reads_as_when_searched(
        pick in any::<usize>(),
        edits in prop::collection::vec(edit(), 0..3),
    ) {
        let lines = case_lines();
        let mut line = lines[pick % lines.len()].clone();
        for e in &edits {
            line = apply(&line, e, lines);
        }
        let vllm = "INFO 11-22 13:25:01 [loggers.py:118] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 5.0%, Prefix cache hit rate: 0.0%";
        let mut known = LogAnchors::new();
        known.each_record(vllm, |_| {});
        for anchors in [LogAnchors::new(), known] {
            let Some(at) = anchors.first_anchor(line.as_bytes()) else {
                continue;
            };
            let (mut searched, mut given) = (anchors, anchors);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            searched.each_record(&line, |o| a.push(format!("{o:?}")));
            given.each_record_anchored(&line, Some(at), |o| b.push(format!("{o:?}")));
            prop_assert_eq!(a, b, "{:?}", line);
            prop_assert_eq!(searched, given);
        }
    }

    /// Two real records glued, the second starting with a head the splitter
    /// knows, read as the two records each line is alone.
    #[test]
    fn two_glued_real_records_are_each_read(first in any::<usize>(), second in any::<usize>()) {
        let lines = case_lines();
        let (a, b) = (&lines[first % lines.len()], &lines[second % lines.len()]);
        let (Some(record_a), Some(record_b)) = (one_record(a), one_record(b)) else {
            return Ok(());
        };
        if !starts_with_a_head(b) {
            return Ok(());
        }
        let glued = format!("{a}{b}");
        let got: Vec<serde_json::Value> = llmtail_grammars::records(&glued)
            .filter_map(|outcome| outcome.parsed())
            .map(|parsed| serde_json::to_value(parsed).unwrap())
            .collect();
        prop_assert_eq!(got, vec![record_a, record_b], "glued: {:?}", glued);
    }
}

/// The one record `line` holds, when it is read whole and holds nothing else.
fn one_record(line: &str) -> Option<serde_json::Value> {
    let mut outcomes = llmtail_grammars::records(line);
    let record = serde_json::to_value(outcomes.next()?.parsed()?).unwrap();
    let whole = serde_json::to_value(llmtail_grammars::parse(line)?).unwrap();
    (outcomes.next().is_none() && whole == record).then_some(record)
}

/// True when `line` starts with a record head found in the middle of a line: a vLLM head (with
/// the process prefixes in front of its level word) or a TensorRT-LLM logger head (with its
/// time). Triton's glog heads are found only in front of JSON, so they do not count here.
fn starts_with_a_head(line: &str) -> bool {
    use llmtail_grammars::{trtllm::prefix, vllm::head};
    let first = |words: &[&str]| {
        words
            .iter()
            .filter_map(|w| line.find(w).map(|at| (at, w.len())))
            .min()
    };
    let vllm = first(&head::LEVEL_WORDS).is_some_and(|(at, len)| {
        head::message_at(line, at + len).is_some() && head::start(line, at, 0) == 0
    });
    let trtllm = first(&prefix::TAGS).is_some_and(|(at, _)| {
        prefix::message_at(line, at).is_some() && prefix::start(line, at, 0) == 0
    });
    vllm || trtllm
}
