#!/usr/bin/env bash
# Runs every benchmark and prints its figures: benches/snmp.rs (through
# snmpd, against native objects and net-snmp's own subagent), benches/scale.rs
# (1, 10, 100 instances), benches/agentx.rs (the agent alone on a direct
# AgentX socket), benches/freshness.rs (answers while Redis is slow or paused),
# benches/puppet_events.rs (a Puppet events log line to a trap at snmptrapd),
# benches/alarms.rs (what the agent's own alarms add to a poll),
# benches/caps.rs (the agent's RSS with every capped table full),
# benches/kick.rs (a Puppet change on one host to the kick on the manager,
# across network namespaces).
# BENCH_ROUNDS=N changes the number of rounds per phase (default 2000).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-test-deps.sh >/dev/null
cargo bench --bench snmp
cargo bench --bench scale
cargo bench --bench agentx
cargo bench --bench freshness
cargo bench --bench puppet_events
cargo bench --bench alarms
cargo bench --bench caps
cargo bench --bench kick
