//! Label names a user gives (`--label`, `[labels]`, a `[[log]]` entry's labels, a
//! `path_labels` capture): each must be a Prometheus label name that llmtail does not set
//! itself, since a label written twice makes Prometheus reject the whole scrape.

use crate::catalog::is_valid_label_name;
use crate::config_error::ConfigError;

/// Labels of the agent's own series (`llmtail_lines_parsed_total{grammar}`,
/// `llmtail_remote_write_samples_sent_total{url}`, ...).
const AGENT_LABELS: &[&str] = &["log", "grammar", "reason", "version", "url"];

/// Label names llmtail sets itself, the agent's and every engine's ([`crate::engines::families::set_labels`]);
/// a `--label` may not reuse them: written twice, Prometheus rejects the whole scrape.
pub fn reserved_labels() -> Vec<&'static str> {
    let mut labels = AGENT_LABELS.to_vec();
    for label in crate::engines::families::set_labels() {
        if !labels.contains(&label) {
            labels.push(label);
        }
    }
    labels
}

/// Parses `NAME=VALUE`, checking the name.
pub fn label(text: &str, origin: &str) -> Result<(String, String), ConfigError> {
    let (name, value) = text.split_once('=').ok_or_else(|| {
        ConfigError(format!(
            "{origin}: {text:?} is not NAME=VALUE\n  fix: write it as --label instance_group=a"
        ))
    })?;
    check_label_name(name, origin)?;
    Ok((name.to_string(), value.to_string()))
}

pub fn check_label_name(name: &str, origin: &str) -> Result<(), ConfigError> {
    if !is_valid_label_name(name) {
        return Err(ConfigError(format!(
            "{origin}: {name:?} is not a valid Prometheus label name\n  fix: use letters, digits and '_', not starting with a digit or '__'"
        )));
    }
    if reserved_labels().contains(&name) {
        return Err(ConfigError(format!(
            "{origin}: label {name:?} is set by llmtail itself\n  fix: choose another name, e.g. {:?}",
            unreserved_alternative(name)
        )));
    }
    Ok(())
}

/// A name like `name` that llmtail does not set, to suggest in place of a reserved one: the
/// obvious suffixes can be reserved too (`model` -> `model_name`, which engines set).
fn unreserved_alternative(name: &str) -> String {
    let reserved = reserved_labels();
    ["served", "path", "user"]
        .iter()
        .map(|prefix| format!("{prefix}_{name}"))
        .find(|candidate| !reserved.contains(&candidate.as_str()))
        .unwrap_or_else(|| format!("my_{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--label request_type=x` was accepted and written
    /// next to the family's own `request_type`, and promtool rejected the whole scrape
    /// ("duplicate label names"). Every label a series gets from llmtail is reserved.
    #[test]
    fn every_label_llmtail_sets_is_reserved() {
        for label in crate::engines::families::set_labels() {
            assert!(
                reserved_labels().contains(&label),
                "{label} is set by llmtail but a --label may take it"
            );
        }
    }
}
