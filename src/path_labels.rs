//! Labels from a log file's path: `path_labels` per `[[log]]` and `--path-labels`.
//!
//! A regex with named captures is compiled once, when the settings are read, and applied once
//! per file when the file is discovered (not per line): `/var/log/pods/prod_vllm-0_<uid>/vllm/0.log`
//! becomes `namespace="prod", pod="vllm-0", container="vllm"` on every series of that file.
//! The capture names are label names, checked as `--label`s are when the settings are read, so
//! a path can only ever supply label values.

use regex::Regex;

/// The value of `--path-labels` (or a `path_labels` key) that selects [`KUBERNETES`].
pub const KUBERNETES_NAME: &str = "kubernetes";

/// kubelet's pod log layout, `<root>/pods/<namespace>_<pod>_<uid>/<container>/<restart>.log`
/// (kubernetes/kubernetes `pkg/kubelet/kuberuntime/helpers.go`: `BuildPodLogsDirectory` joins
/// `namespace_podName_podUID` with `_`, `BuildContainerLogsDirectory` appends the container
/// name, and the file is `<restartCount>.log`, rotated to `<restartCount>.log.<timestamp>`).
/// Namespaces and pod names are DNS labels and subdomains, so they hold no `_`, and `_` splits
/// them unambiguously. Matched on the path's last four components, not from `/var/log/pods`:
/// the same layout mounted elsewhere (`/host/var/log/pods` in a container) matches too.
pub const KUBERNETES: &str =
    r"(?:^|/)pods/(?P<namespace>[^/_]+)_(?P<pod>[^/_]+)_[^/_]+/(?P<container>[^/]+)/[^/]+$";

/// A compiled `path_labels` regex and the label names its named captures give.
#[derive(Debug, Clone)]
pub struct PathLabels {
    regex: Regex,
}

/// Why a `path_labels` value cannot be used; the caller names the setting it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathLabelsError {
    /// Not a regex: the regex crate's message (which points at the offending part).
    Syntax(String),
    /// A regex without a single named capture would add no label.
    NoNamedCapture,
}

impl PathLabels {
    /// `kubernetes` (the built-in [`KUBERNETES`] pattern) or a regex with named captures.
    /// The capture names are not checked here: they are label names, checked with the
    /// settings' other labels.
    pub fn new(given: &str) -> Result<PathLabels, PathLabelsError> {
        let pattern = if given == KUBERNETES_NAME {
            KUBERNETES
        } else {
            given
        };
        let regex = Regex::new(pattern).map_err(|e| PathLabelsError::Syntax(e.to_string()))?;
        let labels = PathLabels { regex };
        if labels.names().next().is_none() {
            return Err(PathLabelsError::NoNamedCapture);
        }
        Ok(labels)
    }

    /// The pattern as compiled (the built-in one spelled out).
    pub fn pattern(&self) -> &str {
        self.regex.as_str()
    }

    /// How a user writes it: `kubernetes`, or the regex.
    pub fn given(&self) -> &str {
        if self.pattern() == KUBERNETES {
            KUBERNETES_NAME
        } else {
            self.pattern()
        }
    }

    /// The label names: the named captures, in the order they open.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.regex.capture_names().flatten()
    }

    /// The labels `path` gives, or `None` when the regex does not match it. A capture that
    /// took part in no match (an optional group) gives no label, not an empty one.
    pub fn labels(&self, path: &str) -> Option<Vec<(String, String)>> {
        let captures = self.regex.captures(path)?;
        Some(
            self.names()
                .filter_map(|name| {
                    let value = captures.name(name)?;
                    Some((name.to_string(), value.as_str().to_string()))
                })
                .collect(),
        )
    }
}

/// Two settings are the same when their patterns are (a reload compares settings).
impl PartialEq for PathLabels {
    fn eq(&self, other: &PathLabels) -> bool {
        self.pattern() == other.pattern()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(given: &str, path: &str) -> Option<Vec<(String, String)>> {
        PathLabels::new(given).unwrap().labels(path)
    }

    fn pairs(pairs: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(
            pairs
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn kubernetes_names_namespace_pod_and_container_of_a_pod_log() {
        let path =
            "/var/log/pods/prod_vllm-7d9f-x2k_0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b/vllm/0.log";
        assert_eq!(
            labels("kubernetes", path),
            pairs(&[
                ("namespace", "prod"),
                ("pod", "vllm-7d9f-x2k"),
                ("container", "vllm")
            ])
        );
    }

    #[test]
    fn kubernetes_matches_the_layout_under_any_mount_point_and_each_restart() {
        for path in [
            "/host/var/log/pods/ml_llama.cpp-0_uid/server/0.log",
            "/tmp/x/var/log/pods/ml_llama.cpp-0_uid/server/3.log",
            "pods/ml_llama.cpp-0_uid/server/0.log",
        ] {
            assert_eq!(
                labels("kubernetes", path),
                pairs(&[
                    ("namespace", "ml"),
                    ("pod", "llama.cpp-0"),
                    ("container", "server")
                ]),
                "{path}"
            );
        }
    }

    #[test]
    fn kubernetes_does_not_match_other_layouts() {
        for path in [
            "/var/log/vllm.log",
            // /var/log/containers: symlinks named <pod>_<namespace>_<container>-<id>.log.
            "/var/log/containers/vllm-0_prod_vllm-0123abcd.log",
            // Too shallow: no container directory.
            "/var/log/pods/prod_vllm-0_uid/0.log",
            "/var/log/mypods/prod_vllm-0_uid/vllm/0.log",
        ] {
            assert_eq!(labels("kubernetes", path), None, "{path}");
        }
    }

    #[test]
    fn an_optional_capture_that_matched_nothing_gives_no_label() {
        let given = r"/srv/(?P<team>[a-z]+)/(?:gpu(?P<gpu>\d+)/)?[^/]+\.log$";
        assert_eq!(
            labels(given, "/srv/infra/gpu3/vllm.log"),
            pairs(&[("team", "infra"), ("gpu", "3")])
        );
        assert_eq!(
            labels(given, "/srv/infra/vllm.log"),
            pairs(&[("team", "infra")])
        );
    }

    #[test]
    fn a_regex_that_is_not_one_or_names_nothing_is_refused() {
        assert!(matches!(
            PathLabels::new("/srv/(?P<team>[a-z+/"),
            Err(PathLabelsError::Syntax(_))
        ));
        assert_eq!(
            PathLabels::new("/srv/([a-z]+)/").unwrap_err(),
            PathLabelsError::NoNamedCapture
        );
    }
}
