#!/usr/bin/env bash
# Benchmarks k8s:: on the in-process lab twin with the release binary; see benches/k8s-scale.rhai.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
./target/release/runbook run benches/k8s-scale.rhai --progress never "$@"
