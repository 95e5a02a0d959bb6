#!/usr/bin/env bash
# The agent against what an operator would pick instead (benches/peers.rs):
# Debian's prometheus-redis-exporter and zabbix-agent2, each with its own
# identical Redis, polled every second for PEERS_SECONDS (default 30), then
# frozen (SIGSTOP 10 s) and killed. Then benches/key_checks.rs (check_keys
# against redis_exporter's --check-keys). Then benches/snmp.rs, whose last table is
# the agent against the floor (a minimal AgentX responder, same snmpd).
#
# The two peers are installed with apt-get if missing (as root). They run
# here as plain processes on loopback with their own configuration in a
# temporary directory, never as services: the packages' services are
# disabled and stopped after installation (in a container policy-rc.d
# usually keeps them from starting at all).
# PEERS_AGENT_ARGS adds options to the agent's command line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-test-deps.sh >/dev/null

missing=()
command -v prometheus-redis-exporter >/dev/null || missing+=(prometheus-redis-exporter)
command -v zabbix_agent2 >/dev/null || missing+=(zabbix-agent2)
if ((${#missing[@]})); then
    if [ "$(id -u)" -ne 0 ]; then
        echo "bench-peers: ${missing[*]} missing; run as root to install them" >&2
        exit 1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
    for service in prometheus-redis-exporter zabbix-agent2; do
        # Installed to be run by the benchmark, not as a service.
        if command -v systemctl >/dev/null; then
            systemctl disable "$service" >/dev/null 2>&1 || true
            systemctl stop "$service" >/dev/null 2>&1 || true
        fi
        if command -v update-rc.d >/dev/null; then
            update-rc.d "$service" disable >/dev/null 2>&1 || true
        fi
        if command -v service >/dev/null; then
            service "$service" stop >/dev/null 2>&1 || true
        fi
    done
fi

cargo bench --bench peers
cargo bench --bench key_checks
cargo bench --bench snmp
