//! Every metric family llmtail exports, gathered from each engine's table and the agent's own
//! series: for the reference's series table (`docs/REFERENCE.md`), for validating names, and for the labels no
//! `--label` may take.

use super::{for_each_engine, EngineVisitor, Registered};
use crate::catalog::{agent, Metric, Reading};

/// Every metric family, for validation and the reference page: each engine's table and per-log
/// series, in exposition order, then the agent's own.
pub fn all_metrics() -> Vec<Metric> {
    struct Families(Vec<Metric>);
    impl EngineVisitor for Families {
        fn visit<E: Registered>(&mut self) {
            self.0.extend(E::TABLE.iter().map(|row| row.metric));
            self.0.extend(E::LOG_METRICS.iter().copied());
        }
    }
    let mut families = Families(Vec::new());
    for_each_engine(&mut families);
    families.0.extend(agent::ALL.iter().copied());
    families.0
}

/// Every label name an engine's series get from llmtail: its units' and its rows' extra ones
/// (`le` for a histogram). No `--label` may take one (`label_names::reserved_labels`).
pub fn set_labels() -> Vec<&'static str> {
    struct Labels(Vec<&'static str>);
    impl EngineVisitor for Labels {
        fn visit<E: Registered>(&mut self) {
            self.0.extend(E::UNIT_LABELS);
            for row in E::TABLE {
                let label = match row.read {
                    Reading::Histogram(..) => Some("le"),
                    _ => row.extra_label(),
                };
                self.0.extend(label.filter(|l| !self.0.contains(l)));
            }
        }
    }
    let mut labels = Labels(Vec::new());
    for_each_engine(&mut labels);
    labels.0.dedup();
    labels.0
}

/// Every engine's labels note, for the reference page ([`Engine::LABELS_NOTE`]).
fn labels_notes() -> Vec<&'static str> {
    struct Notes(Vec<&'static str>);
    impl EngineVisitor for Notes {
        fn visit<E: Registered>(&mut self) {
            self.0.push(E::LABELS_NOTE);
        }
    }
    let mut notes = Notes(Vec::new());
    for_each_engine(&mut notes);
    notes.0
}

/// The reference page's series table, rendered from this catalog.
pub fn markdown_table() -> String {
    let mut out = format!("Every {}.\n\n", labels_notes().join("; every "));
    out.push_str("| metric | type | extra labels | from |\n|---|---|---|---|\n");
    for m in all_metrics() {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            m.sample_name(),
            m.kind.as_str(),
            m.labels.replace('|', "\\|"),
            // A `|` would end the cell, even inside backticks.
            m.source.replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{is_valid_metric_name, Row};
    use crate::engines::Engine;

    #[test]
    fn every_name_is_a_valid_prometheus_name_and_unique() {
        let mut seen = std::collections::HashSet::new();
        for m in all_metrics() {
            assert!(is_valid_metric_name(m.name), "{}", m.name);
            assert!(
                !m.name.ends_with("_total"),
                "{}: counters are named without _total",
                m.name
            );
            assert!(seen.insert(m.name), "{} twice", m.name);
            assert!(!m.help.is_empty() && !m.help.contains('\n') && !m.help.contains('\\'));
        }
    }

    /// Every name of these engines' tables is the engine's own (one of its exporter's prefixes)
    /// or ours for that engine.
    #[test]
    fn names_are_the_engines_own_or_ours() {
        fn names<T>(table: &[Row<T>]) -> Vec<&'static str> {
            table.iter().map(|row| row.metric.name).collect()
        }
        let cases = [
            ("vllm", names(super::super::vllm::State::TABLE), "vllm:"),
            (
                "trtllm",
                names(super::super::trtllm::State::TABLE),
                "nv_trt_llm_",
            ),
            (
                "sglang",
                names(super::super::sglang::State::TABLE),
                "sglang:",
            ),
            (
                "lmdeploy",
                names(super::super::lmdeploy::State::TABLE),
                "lmdeploy:",
            ),
        ];
        for (engine, names, own) in cases {
            for name in names {
                let ours = name.starts_with(&format!("llmtail_{engine}_"));
                assert!(ours || name.starts_with(own), "{name}");
            }
        }
    }

    /// Names of our own are `llmtail_<engine>_...` for every engine: a series of ours never
    /// wears a name another engine's exporter could own.
    #[test]
    fn our_own_names_name_their_engine() {
        struct Check;
        impl EngineVisitor for Check {
            fn visit<E: Registered>(&mut self) {
                for row in E::TABLE {
                    let name = row.metric.name;
                    if name.starts_with("llmtail_") {
                        assert!(name.starts_with(&format!("llmtail_{}_", E::NAME)), "{name}");
                    }
                }
            }
        }
        for_each_engine(&mut Check);
    }
}
