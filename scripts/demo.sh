#!/usr/bin/env bash
# Runs the real thing on this machine, privately: a redis-server and an snmpd
# master agent on 127.0.0.1 (high ports, files in a temp dir), the agent
# between them, a few keys written to Redis, and REDIS-SERVER-MIB walked with
# net-snmp's snmpbulkwalk.
#
# Usage: scripts/demo.sh [--keep]
#   --keep   leave everything running and print how to query and stop it
#            (default: stop everything this script started on exit)
# Environment:
#   REDIS_SNMP_BIN   use this agent binary instead of building one
set -euo pipefail
cd "$(dirname "$0")/.."

keep=0
case "${1:-}" in
"") ;;
--keep) keep=1 ;;
-h | --help)
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
*)
    echo "usage: $0 [--keep]" >&2
    exit 2
    ;;
esac

if [ -t 1 ]; then
    say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
else
    say() { printf '==> %s\n' "$*"; }
fi

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# 1. Tools.
missing=()
command -v snmpd >/dev/null 2>&1 || missing+=(snmpd)
command -v snmpbulkwalk >/dev/null 2>&1 || missing+=(snmp)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
if [ ${#missing[@]} -ne 0 ]; then
    say "installing ${missing[*]}"
    as_root apt-get update
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y --no-install-recommends "${missing[@]}"
    # Debian starts the packaged daemons; this demo does not use them.
fi

# 2. The agent.
if [ -n "${REDIS_SNMP_BIN:-}" ]; then
    bin=$REDIS_SNMP_BIN
else
    say "building the agent (cargo build --release)"
    cargo build --release
    # Where cargo put it: CARGO_TARGET_DIR when set (relative to here).
    target=${CARGO_TARGET_DIR:-target}
    case $target in /*) ;; *) target=$PWD/$target ;; esac
    bin=$target/release/redis-snmp
fi
base_mibs=$(cd "$(scripts/base-mibs.sh)" && pwd)
mib_path="$base_mibs:$PWD/mibs"

work=$(mktemp -d "${TMPDIR:-/tmp}/redis-snmp-demo.XXXXXX")
redis_pid="" snmpd_pid="" agent_pid=""

stop_all() {
    local pid
    for pid in $agent_pid $snmpd_pid $redis_pid; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in $agent_pid $snmpd_pid $redis_pid; do
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$work"
}
finished=0
# Stop everything on exit, unless --keep was given and the demo got through.
trap 'if [ $keep -eq 0 ] || [ $finished -eq 0 ]; then stop_all; fi' EXIT
trap 'exit 130' INT TERM

# A port in 20000..31999 (below Linux's ephemeral range) that nothing
# listens on; the servers' own start-up is the final check.
pick_port() {
    local p
    for _ in $(seq 50); do
        p=$((20000 + RANDOM % 12000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return
        fi
    done
    echo "no free port found" >&2
    return 1
}

wait_for() { # SECONDS COMMAND...
    local deadline=$((SECONDS + $1))
    shift
    until "$@" >/dev/null 2>&1; do
        if [ $SECONDS -ge $deadline ]; then return 1; fi
        sleep 0.1
    done
}

# 3. redis-server.
for _ in 1 2 3; do
    redis_port=$(pick_port)
    nohup redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no \
        --dir "$work" --logfile "$work/redis.log" --daemonize no >/dev/null 2>&1 </dev/null &
    redis_pid=$!
    if wait_for 10 redis-cli -p "$redis_port" ping; then break; fi
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
    redis_pid=""
done
[ -n "$redis_pid" ] || {
    echo "redis-server did not start:" >&2
    cat "$work/redis.log" >&2
    exit 1
}
say "redis-server on 127.0.0.1:$redis_port (pid $redis_pid)"

# 4. snmpd, as a private master agent (see tests/support/src/snmpd.rs for why each
# option is there).
socket="$work/agentx/agentx.sock"
for _ in 1 2 3; do
    snmp_port=$(pick_port)
    cat >"$work/snmpd.conf" <<CONF
agentAddress udp:127.0.0.1:$snmp_port
master agentx
agentXSocket unix:$socket
agentXPerms 0600 0700
rocommunity public 127.0.0.1
dontLogTCPWrappersConnects yes
CONF
    SNMP_PERSISTENT_DIR="$work/snmp-persist" nohup snmpd -f -C -c "$work/snmpd.conf" -m "" -I -smux \
        -Lf "$work/snmpd.log" -p "$work/snmpd.pid" >/dev/null 2>&1 </dev/null &
    snmpd_pid=$!
    if wait_for 10 snmpget -v2c -c public -t 1 -r 0 -On -m "" "127.0.0.1:$snmp_port" .1.3.6.1.2.1.1.3.0 &&
        [ -S "$socket" ]; then
        break
    fi
    kill "$snmpd_pid" 2>/dev/null || true
    wait "$snmpd_pid" 2>/dev/null || true
    snmpd_pid=""
done
[ -n "$snmpd_pid" ] || {
    echo "snmpd did not start:" >&2
    cat "$work/snmpd.log" >&2
    exit 1
}
say "snmpd on udp:127.0.0.1:$snmp_port, AgentX at unix:$socket (pid $snmpd_pid)"

# 5. The agent.
nohup "$bin" -n -x "unix:$socket" -h 127.0.0.1 -P "$redis_port" -r 1 -v \
    >"$work/agent.log" 2>&1 </dev/null &
agent_pid=$!
registered_or_gone() {
    grep -q registered "$work/agent.log" || ! kill -0 "$agent_pid" 2>/dev/null
}
if ! wait_for 10 registered_or_gone || ! grep -q registered "$work/agent.log"; then
    echo "the agent did not register; its log:" >&2
    cat "$work/agent.log" >&2
    exit 1
fi
say "redis-snmp registered (pid $agent_pid): $(grep -m1 registered "$work/agent.log")"

# 6. Some data, then one poll interval for the agent to see it.
for i in 1 2 3 4 5; do
    redis-cli -p "$redis_port" set "demo:key:$i" "value $i" >/dev/null
done
redis-cli -p "$redis_port" get demo:key:1 >/dev/null
redis-cli -p "$redis_port" get demo:missing >/dev/null
sleep 1.5

# `-m REDIS-SERVER-MIB` loads that module and what it imports. (`-m
# +REDIS-SERVER-MIB` would add it to net-snmp's default list, and with `-M`
# replacing the search path, warn about each default module not found.)
walk=(snmpbulkwalk -v2c -c public -M "$mib_path" -m REDIS-SERVER-MIB
    "127.0.0.1:$snmp_port" .1.3.6.1.4.1.20267.400)
say "${walk[*]}"
"${walk[@]}"

if [ $keep -eq 1 ]; then
    cat >"$work/stop.sh" <<STOP
#!/bin/sh
kill $agent_pid $snmpd_pid $redis_pid 2>/dev/null
sleep 1
rm -rf "$work"
STOP
    chmod +x "$work/stop.sh"
    cat <<EOF

Everything keeps running (files and logs in $work):
  query:   ${walk[*]}
  redis:   redis-cli -p $redis_port
  logs:    $work/agent.log $work/snmpd.log $work/redis.log
  stop:    $work/stop.sh      (kills pids $agent_pid $snmpd_pid $redis_pid, removes $work)
EOF
fi
finished=1
