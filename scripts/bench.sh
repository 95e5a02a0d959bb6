#!/usr/bin/env bash
# Runs the benchmark and prints its figures (see benches/snmp.rs).
# BENCH_ROUNDS=N changes the number of rounds per phase (default 2000).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-test-deps.sh >/dev/null
cargo bench --bench snmp
cargo bench --bench scale
cargo bench --bench agentx
