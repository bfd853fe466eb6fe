//! The engine registry's promises: an engine is registered once, in
//! `llmtail_grammars::with_engines!`, which gives it a grammar (`ENGINES`) and a state
//! (`engines::for_each_engine`) under the same name, and it does not
//! ship without what makes it trustworthy: line cases for every grammar it names, a replay log
//! with its golden, a row in the formats table of `docs/FAQ.md`, and its files named in
//! `fixtures/README.md`.

use std::path::Path;

use llmtail::engines::{self, EngineVisitor, Registered};
use llmtail_grammars::{records, Outcome, ENGINES};

/// Every registered engine on the agent's side: its name and how users call it.
fn agent_engines() -> Vec<(&'static str, &'static str)> {
    struct Names(Vec<(&'static str, &'static str)>);
    impl EngineVisitor for Names {
        fn visit<E: Registered>(&mut self) {
            self.0.push((E::NAME, E::DISPLAY_NAME));
        }
    }
    let mut names = Names(Vec::new());
    engines::for_each_engine(&mut names);
    names.0
}

/// Files in `dir` whose names start with `<engine>-` and end with `.<extension>`.
fn files_of(dir: &str, engine: &str, extension: &str) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with(&format!("{engine}-")) && name.ends_with(&format!(".{extension}"))
        })
        .collect();
    files.sort();
    files
}

#[test]
fn the_grammars_and_the_agent_register_the_same_engines_in_the_same_order() {
    let grammars: Vec<&str> = ENGINES.iter().map(|e| e.engine).collect();
    let agent: Vec<&str> = agent_engines().iter().map(|(name, _)| *name).collect();
    assert_eq!(grammars, agent);
}

/// Every grammar name of an engine is what some line of the engine's case files parses to.
#[test]
fn every_engine_has_line_cases_for_every_grammar_it_names() {
    #[derive(serde::Deserialize)]
    struct CaseFile {
        case: Vec<Case>,
    }
    #[derive(serde::Deserialize)]
    struct Case {
        line: String,
    }
    for engine in ENGINES {
        let files = files_of("fixtures/cases", engine.engine, "toml");
        assert!(
            !files.is_empty(),
            "{}: no fixtures/cases/{}-*.toml",
            engine.engine,
            engine.engine
        );
        let mut seen = Vec::new();
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap();
            let cases: CaseFile = toml::from_str(&text).unwrap();
            for case in cases.case {
                for outcome in records(&case.line) {
                    if let Outcome::Parsed(parsed) = outcome {
                        seen.push(parsed.record.grammar());
                    }
                }
            }
        }
        for grammar in engine.grammar_names {
            assert!(
                seen.contains(grammar),
                "no line case of {} parses as {grammar}",
                engine.engine
            );
        }
    }
}

#[test]
fn every_engine_has_a_replay_log_with_its_golden() {
    for (engine, _) in agent_engines() {
        let logs = files_of("fixtures/replay", engine, "log");
        assert!(
            !logs.is_empty(),
            "{engine}: no fixtures/replay/{engine}-*.log"
        );
        for log in logs {
            assert!(
                log.with_extension("prom").exists(),
                "{}: no golden (LLMTAIL_BLESS=1 cargo test --test integration replay)",
                log.display()
            );
        }
    }
}

#[test]
fn every_engine_has_a_row_in_the_faqs_formats_table() {
    let faq = std::fs::read_to_string("docs/FAQ.md").unwrap();
    let section = faq
        .split("## Formats covered")
        .nth(1)
        .expect("docs/FAQ.md has a Formats covered section");
    let section = section.split("\n## ").next().unwrap();
    for (engine, display) in agent_engines() {
        assert!(
            section.contains(&format!("\n| {display}")),
            "{engine}: no row starting `| {display}` in docs/FAQ.md's formats table"
        );
    }
}

#[test]
fn every_case_file_and_replay_log_is_named_in_the_fixtures_readme() {
    let readme = std::fs::read_to_string("fixtures/README.md").unwrap();
    for (dir, extension) in [("fixtures/cases", "toml"), ("fixtures/replay", "log")] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|x| x == extension) {
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                assert!(
                    readme.contains(&name),
                    "{}: not named in fixtures/README.md (say where it comes from)",
                    Path::new(dir).join(&name).display()
                );
            }
        }
    }
}

/// `with_engines!` declares each engine's modules, where `cargo fmt` does not look (it follows
/// only `mod` items it can read): this is what keeps those files formatted.
#[test]
fn every_engine_folder_is_formatted_though_cargo_fmt_does_not_reach_it() {
    let mut roots = Vec::new();
    for engine in ENGINES {
        for folder in ["grammars/src", "src/engines"] {
            roots.push(format!("{folder}/{}/mod.rs", engine.engine));
        }
    }
    let check = std::process::Command::new("rustfmt")
        .args(["--edition", "2021", "--check"])
        .args(&roots)
        .output()
        .expect("rustfmt runs (rustup component add rustfmt)");
    assert!(
        check.status.success(),
        "an engine's files are not formatted; fix: cargo fmt --all -- {}\n{}",
        roots.join(" "),
        String::from_utf8_lossy(&check.stdout)
    );
}

/// An engine is one folder per stage, and no engine reaches into another's: what two engines
/// share lives in the grammars' `lex` or the agent's `engines::parts`.
#[test]
fn every_engine_is_one_folder_per_stage_and_imports_no_other_engine() {
    let names: Vec<&str> = ENGINES.iter().map(|e| e.engine).collect();
    for engine in &names {
        for file in [
            format!("grammars/src/{engine}/mod.rs"),
            format!("src/engines/{engine}/mod.rs"),
            format!("src/engines/{engine}/series.rs"),
        ] {
            assert!(Path::new(&file).is_file(), "{engine}: no {file}");
        }
        for folder in [
            format!("grammars/src/{engine}"),
            format!("src/engines/{engine}"),
        ] {
            for entry in std::fs::read_dir(&folder).unwrap() {
                let path = entry.unwrap().path();
                let code = std::fs::read_to_string(&path).unwrap();
                for other in names.iter().filter(|other| *other != engine) {
                    for reach in [format!("crate::{other}::"), format!("engines::{other}::")] {
                        assert!(
                            !code.contains(&reach),
                            "{}: uses {reach}; move what both need to lex or engines::parts",
                            path.display()
                        );
                    }
                }
            }
        }
    }
}
