#!/usr/bin/env bash
# Validates the Kubernetes manifests in this directory offline, against the schemas that the
# kubernetes-validate package (PyPI) ships: strict, so a misspelt field is an error, not
# ignored. The PodMonitor is a custom resource whose schema it does not ship: it is left out
# here and checked by tests/kubernetes.rs (its required fields, and that it selects the
# DaemonSet's pods on their `metrics` port), as is the kustomization's list of files.
#
#   pip install kubernetes-validate    # once
#   deploy/kubernetes/validate.sh
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v kubernetes-validate >/dev/null 2>&1; then
  echo "kubernetes-validate is not installed: pip install kubernetes-validate" >&2
  exit 2
fi
# Built-in kinds only, against the oldest and newest Kubernetes this was checked for.
for version in 1.29.0 1.37.0; do
  kubernetes-validate --strict --kubernetes-version "$version" namespace.yaml daemonset.yaml service.yaml
done
