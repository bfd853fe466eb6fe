//! Kubernetes: the agent follows a node's pod logs (`/var/log/pods/*/*/*.log`, CRI-wrapped, laid
//! out as kubelet lays them) with `--path-labels kubernetes`, and every series of a pod's log
//! says which namespace, pod and container it belongs to.

use std::path::PathBuf;

use clap::Parser;

use crate::prometheus::{tool, Prometheus};
use crate::support::agent::{expect_sample, sample, RunningAgent};

/// A vLLM stats line, its `Running:` count `running`, 4 s before the tests' clock.
fn vllm_stats(running: u32) -> String {
    format!(
        "(APIServer pid=812) INFO 11-22 13:25:01 [loggers.py:257] Engine 000: Avg prompt throughput: 10.0 tokens/s, Avg generation throughput: 20.0 tokens/s, Running: {running} reqs, Waiting: 0 reqs, GPU KV cache usage: 5.0%, Prefix cache hit rate: 0.0%"
    )
}

/// `line` as containerd writes it to a pod log: time, stream, tag, message.
fn cri(line: &str) -> String {
    format!("2026-11-22T13:25:01.123456789Z stdout F {line}\n")
}

/// A node's pod log directory under a temp dir: `<tmp>/var/log/pods`.
struct Node {
    dir: tempfile::TempDir,
}

impl Node {
    fn new() -> Node {
        Node {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// The glob a DaemonSet gives `--log`, under this node's root.
    fn pod_logs_glob(&self) -> String {
        format!("{}/var/log/pods/*/*/*.log", self.dir.path().display())
    }

    /// Writes container `container`'s log after `restart` restarts, as kubelet names it:
    /// `pods/<namespace>_<pod>_<uid>/<container>/<restart>.log`.
    fn write_log(
        &self,
        (namespace, pod): (&str, &str),
        container: &str,
        restart: u32,
        running: u32,
    ) -> PathBuf {
        let uid = "0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b";
        let dir = self
            .dir
            .path()
            .join(format!("var/log/pods/{namespace}_{pod}_{uid}/{container}"));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{restart}.log"));
        std::fs::write(&path, cri(&vllm_stats(running))).unwrap();
        path
    }
}

fn running_in(metrics: &str, namespace: &str, pod: &str, container: &str) -> Option<f64> {
    let labels = [
        ("namespace", namespace),
        ("pod", pod),
        ("container", container),
    ];
    sample(metrics, "vllm:num_requests_running", &labels)
}

#[test]
fn pod_log_series_carry_namespace_pod_and_container() {
    let node = Node::new();
    let first = node.write_log(("prod", "vllm-0"), "vllm", 0, 14);
    node.write_log(("staging", "vllm-7d9f-x2k"), "server", 0, 3);
    let glob = node.pod_logs_glob();
    let agent = RunningAgent::start(&["--log", &glob, "--path-labels", "kubernetes"]);

    let metrics = agent.wait_for("both pods' series", |m| {
        running_in(m, "prod", "vllm-0", "vllm").is_some()
            && running_in(m, "staging", "vllm-7d9f-x2k", "server").is_some()
    });
    assert_eq!(running_in(&metrics, "prod", "vllm-0", "vllm"), Some(14.0));
    assert_eq!(
        running_in(&metrics, "staging", "vllm-7d9f-x2k", "server"),
        Some(3.0)
    );
    // The agent's own series of the file say it too.
    let first = first.to_str().unwrap();
    let own = [("log", first), ("namespace", "prod"), ("pod", "vllm-0")];
    assert_eq!(
        expect_sample(&metrics, "llmtail_lines_read_total", &own),
        1.0
    );
    // And the landing page says what the logs are followed with.
    let landing = agent.get("/").unwrap().body;
    assert!(
        landing.contains(&format!("{glob} (envelope auto) path_labels kubernetes")),
        "{landing}"
    );
}

/// A container restart makes kubelet start `1.log` beside `0.log`: the glob picks it up and
/// its series carry the same pod's labels, told apart by `log`.
#[test]
fn a_container_restarts_new_log_is_followed_with_the_same_labels() {
    let node = Node::new();
    node.write_log(("prod", "vllm-0"), "vllm", 0, 14);
    let glob = node.pod_logs_glob();
    let agent = RunningAgent::start(&["--log", &glob, "--path-labels", "kubernetes"]);
    agent.wait_for("the first container's series", |m| {
        running_in(m, "prod", "vllm-0", "vllm").is_some()
    });

    let restarted = node.write_log(("prod", "vllm-0"), "vllm", 1, 5);
    let restarted = restarted.to_str().unwrap();
    let labels = [
        ("log", restarted),
        ("namespace", "prod"),
        ("pod", "vllm-0"),
        ("container", "vllm"),
    ];
    agent.wait_for("the restarted container's series", |m| {
        sample(m, "vllm:num_requests_running", &labels) == Some(5.0)
    });
}

/// kubelet rotates a container's log by renaming `0.log` to `0.log.<time>` and having the
/// runtime reopen `0.log`: the renamed file no longer matches `*.log`, and the new one goes on
/// as the same log, with the same labels.
#[test]
fn a_rotated_pod_log_keeps_its_labels() {
    let node = Node::new();
    let log = node.write_log(("prod", "vllm-0"), "vllm", 0, 14);
    let glob = node.pod_logs_glob();
    let agent = RunningAgent::start(&["--log", &glob, "--path-labels", "kubernetes"]);
    agent.wait_for("the first lines", |m| {
        running_in(m, "prod", "vllm-0", "vllm") == Some(14.0)
    });

    let rotated = log.with_file_name("0.log.20261122-132501");
    std::fs::rename(&log, rotated).unwrap();
    node.write_log(("prod", "vllm-0"), "vllm", 0, 7);
    let metrics = agent.wait_for("the reopened log's lines", |m| {
        running_in(m, "prod", "vllm-0", "vllm") == Some(7.0)
    });
    let series = metrics
        .lines()
        .filter(|l| l.starts_with("vllm:num_requests_running{"))
        .count();
    assert_eq!(series, 1, "{metrics}");
}

/// The built-in pattern only knows kubelet's layout: a file elsewhere is read all the same,
/// its series without namespace, pod and container rather than with empty ones.
#[test]
fn a_log_outside_the_pod_layout_is_read_without_path_labels() {
    let node = Node::new();
    node.write_log(("prod", "vllm-0"), "vllm", 0, 14);
    let other = node.dir.path().join("vllm.log");
    std::fs::write(&other, cri(&vllm_stats(9))).unwrap();
    let glob = node.pod_logs_glob();
    let agent = RunningAgent::start(&[
        "--log",
        &glob,
        "--log",
        other.to_str().unwrap(),
        "--path-labels",
        "kubernetes",
    ]);
    let metrics = agent.wait_for("both logs' series", |m| {
        running_in(m, "prod", "vllm-0", "vllm").is_some()
            && sample(
                m,
                "vllm:num_requests_running",
                &[("log", other.to_str().unwrap())],
            )
            .is_some()
    });
    let line = metrics
        .lines()
        .find(|l| l.starts_with("vllm:num_requests_running{") && l.contains("vllm.log\""))
        .unwrap();
    assert!(
        !line.contains("namespace=") && !line.contains("pod="),
        "{line}"
    );
}

/// A reload reads `path_labels` again, as it does `labels`: the files already followed take
/// the new labels and keep their counters.
#[test]
fn a_reload_applies_new_path_labels_to_the_files_followed() {
    let node = Node::new();
    node.write_log(("prod", "vllm-0"), "vllm", 0, 14);
    let config = node.dir.path().join("llmtail.toml");
    let write_config = |path_labels: &str| {
        let text = format!(
            "[[log]]\npath = '{}'\npath_labels = '{path_labels}'\n",
            node.pod_logs_glob()
        );
        std::fs::write(&config, text).unwrap();
    };
    write_config("/pods/(?P<k8s_namespace>[^_/]+)_");
    let config_flag = config.to_str().unwrap();
    let agent = RunningAgent::start(&["--config", config_flag, "--web.enable-lifecycle"]);
    let labels = [("k8s_namespace", "prod")];
    agent.wait_for("the first regex's label", |m| {
        sample(m, "vllm:num_requests_running", &labels) == Some(14.0)
    });

    write_config("kubernetes");
    let reloaded = agent.post("/-/reload").unwrap();
    assert_eq!(reloaded.status, 200, "{}", reloaded.body);
    let metrics = agent.wait_for("the built-in pattern's labels", |m| {
        running_in(m, "prod", "vllm-0", "vllm") == Some(14.0)
    });
    assert!(!metrics.contains("k8s_namespace="), "{metrics}");
}

/// Done when a new user who deploys the DaemonSet sees series labelled by namespace, pod and
/// container: here a real Prometheus scrapes them and answers queries by those labels.
#[test]
fn a_real_prometheus_queries_pod_series_by_namespace_pod_and_container() {
    let Some(prometheus) = tool("prometheus") else {
        return;
    };
    let node = Node::new();
    node.write_log(("prod", "vllm-0"), "vllm", 0, 14);
    node.write_log(("prod", "vllm-1"), "vllm", 0, 6);
    let glob = node.pod_logs_glob();
    let agent = RunningAgent::start(&[
        "--log",
        &glob,
        "--path-labels",
        "kubernetes",
        "--label",
        "node=worker-1",
    ]);
    let server = Prometheus::scraping(&prometheus, agent.addr);

    server.wait_for(
        "vllm:num_requests_running{namespace=\"prod\",pod=\"vllm-0\",container=\"vllm\",node=\"worker-1\"}",
        14.0,
    );
    server.wait_for(
        "sum by (namespace) (vllm:num_requests_running{namespace=\"prod\"})",
        20.0,
    );
    server.wait_for(
        "llmtail_lines_parsed_total{grammar=\"vllm_stats\",pod=\"vllm-1\"}",
        1.0,
    );
}

/// The manifests in `deploy/kubernetes/`.
const MANIFESTS: &str = "deploy/kubernetes";

/// A manifest of `deploy/kubernetes/`, read as YAML.
fn manifest(name: &str) -> serde_json::Value {
    let path = std::path::Path::new(MANIFESTS).join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The string at `pointer` (`/spec/selector/...`) in `value`.
fn text<'a>(value: &'a serde_json::Value, pointer: &str) -> &'a str {
    value
        .pointer(pointer)
        .and_then(serde_json::Value::as_str)
        .unwrap_or_else(|| panic!("no string at {pointer} in {value:#}"))
}

/// `kubectl kustomize` is not at hand: a file left out of `resources` would never be deployed.
#[test]
fn the_kustomization_lists_every_manifest() {
    let kustomization = manifest("kustomization.yaml");
    let mut listed: Vec<&str> = kustomization["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .map(|r| r.as_str().expect("a file name"))
        .collect();
    listed.sort_unstable();
    let mut present: Vec<String> = std::fs::read_dir(MANIFESTS)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".yaml") && name != "kustomization.yaml")
        .collect();
    present.sort_unstable();
    assert_eq!(listed, present);
}

/// The operator's PodMonitor is a custom resource: validate.sh has no schema for it, so its
/// required fields are checked here, and that it reaches the DaemonSet's pods.
#[test]
fn the_podmonitor_scrapes_the_daemonsets_pods_on_their_metrics_port() {
    let monitor = manifest("podmonitor.yaml");
    let daemonset = manifest("daemonset.yaml");
    let service = manifest("service.yaml");
    assert_eq!(text(&monitor, "/apiVersion"), "monitoring.coreos.com/v1");
    assert_eq!(text(&monitor, "/kind"), "PodMonitor");
    assert_eq!(text(&monitor, "/metadata/name"), "llmtail");
    let pod_labels = &daemonset["spec"]["template"]["metadata"]["labels"];
    let selected = monitor["spec"]["selector"]["matchLabels"]
        .as_object()
        .expect("spec.selector.matchLabels");
    assert!(!selected.is_empty());
    for (name, value) in selected {
        assert_eq!(&pod_labels[name], value, "the pods lack the label {name}");
    }
    assert_eq!(
        daemonset["spec"]["selector"]["matchLabels"],
        monitor["spec"]["selector"]["matchLabels"]
    );
    assert_eq!(
        service["spec"]["selector"],
        monitor["spec"]["selector"]["matchLabels"]
    );
    let endpoint = &monitor["spec"]["podMetricsEndpoints"][0];
    assert_eq!(text(endpoint, "/port"), "metrics");
    assert_eq!(text(endpoint, "/path"), "/metrics");
    // Else Prometheus renames the series' namespace, pod and container to exported_*.
    assert_eq!(endpoint["honorLabels"], true);
    let container = &daemonset["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(text(container, "/ports/0/name"), "metrics");
    assert_eq!(container["ports"][0]["containerPort"], 3913);
    assert_eq!(text(&service, "/spec/ports/0/name"), "metrics");
    assert_eq!(service["spec"]["ports"][0]["port"], 3913);
    assert_eq!(text(container, "/livenessProbe/httpGet/path"), "/-/healthy");
    assert_eq!(text(container, "/readinessProbe/httpGet/path"), "/-/ready");
}

/// The DaemonSet's args are flags the agent takes, as Kubernetes hands them over (it expands
/// `$(NODE_NAME)` from the env), and they say what docs/GUIDE.md says they do.
#[test]
fn the_daemonsets_args_are_flags_llmtail_takes() {
    let daemonset = manifest("daemonset.yaml");
    let container = &daemonset["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(text(container, "/env/0/name"), "NODE_NAME");
    assert_eq!(
        text(container, "/env/0/valueFrom/fieldRef/fieldPath"),
        "spec.nodeName"
    );
    let args: Vec<String> = container["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| {
            a.as_str()
                .expect("a string")
                .replace("$(NODE_NAME)", "worker-1")
        })
        .collect();
    let argv = std::iter::once("llmtail".to_string()).chain(args);
    let cli = llmtail::cli::Cli::try_parse_from(argv).expect("flags parse");
    let settings = llmtail::config::Settings::from_cli(cli).expect("settings are valid");
    assert_eq!(settings.logs.len(), 1);
    assert_eq!(settings.logs[0].given, "/var/log/pods/*/*/*.log");
    assert_eq!(
        settings.logs[0].path_labels.as_ref().map(|p| p.pattern()),
        Some(llmtail::path_labels::KUBERNETES)
    );
    assert_eq!(
        settings.labels,
        [("node".to_string(), "worker-1".to_string())]
    );
    let state_file = settings.state_file.expect("a state file");
    let mounts = container["volumeMounts"].as_array().expect("volumeMounts");
    let state_mount = mounts
        .iter()
        .find(|m| state_file.starts_with(text(m, "/mountPath")))
        .expect("the state file's directory is a mount");
    let volume = daemonset["spec"]["template"]["spec"]["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == state_mount["name"])
        .expect("the state volume");
    assert_eq!(text(volume, "/hostPath/path"), "/var/lib/llmtail");
}

/// deploy/kubernetes/validate.sh: the built-in kinds against the schemas the kubernetes-validate
/// package ships, offline. Without it this test fails saying to run `scripts/test`, unless
/// `LLMTAIL_SKIP_KUBERNETES_VALIDATE=1` says to skip it on purpose.
#[test]
fn the_manifests_validate_against_the_kubernetes_schemas() {
    if std::env::var_os("LLMTAIL_SKIP_KUBERNETES_VALIDATE").is_some_and(|v| v == "1") {
        eprintln!("LLMTAIL_SKIP_KUBERNETES_VALIDATE=1: skipping deploy/kubernetes/validate.sh");
        return;
    }
    assert!(
        crate::support::agent::on_path("kubernetes-validate").is_some(),
        "kubernetes-validate is not installed: run scripts/test, which installs what the tests need (or LLMTAIL_SKIP_KUBERNETES_VALIDATE=1 to skip)"
    );
    let out = std::process::Command::new("bash")
        .arg(format!("{MANIFESTS}/validate.sh"))
        .output()
        .expect("run validate.sh");
    assert!(
        out.status.success(),
        "validate.sh failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
