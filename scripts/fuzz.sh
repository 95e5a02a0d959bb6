#!/usr/bin/env bash
# Runs every cargo-fuzz target for a while and prints how many inputs each
# one executed; fails if any target finds a crash (the input is then kept in
# fuzz/artifacts/<target>/, see fuzz/README.md to replay it).
#
# Usage: scripts/fuzz.sh [TARGET...]      (default: every target)
#   FUZZ_SECONDS=N   seconds per target (default 60; 0 skips fuzzing)
#
# Each run starts from real captured data (fuzz/seeds/agentx_decode: PDUs
# snmpd sent, tests/fixtures: INFO replies and Puppet files) plus what
# earlier runs found (fuzz/corpus/, git-ignored). cargo-fuzz needs -Z flags:
# RUSTC_BOOTSTRAP=1 lets the stable toolchain accept them.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
if [ "$seconds" -eq 0 ]; then
    echo "scripts/fuzz.sh: FUZZ_SECONDS=0, fuzzing skipped"
    exit 0
fi
targets=("$@")
[ ${#targets[@]} -ne 0 ] || targets=(agentx_decode info_parse puppet_yaml puppet_events certificate_parse kick_trap ledger_record)

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "==> installing cargo-fuzz (cargo install --locked cargo-fuzz)"
    cargo install --locked cargo-fuzz
fi

seeds_of() {
    case "$1" in
    agentx_decode) echo fuzz/seeds/agentx_decode ;;
    info_parse) echo tests/fixtures/redis ;;
    puppet_yaml) echo tests/fixtures/puppet ;;
    puppet_events) echo tests/fixtures/puppet/logdest ;;
    certificate_parse) echo fuzz/seeds/certificate_parse ;;
    kick_trap) echo tests/fixtures/snmptrapd ;;
    ledger_record) echo fuzz/seeds/ledger_record ;;
    *)
        echo "scripts/fuzz.sh: unknown target $1" >&2
        return 1
        ;;
    esac
}

export RUSTC_BOOTSTRAP=1
cargo fuzz build # every target, once
status=0
for target in "${targets[@]}"; do
    seeds=$(seeds_of "$target")
    mkdir -p "fuzz/corpus/$target"
    log=$(mktemp)
    echo "==> fuzzing $target for ${seconds}s"
    if cargo fuzz run "$target" "fuzz/corpus/$target" "$seeds" -- \
        -max_total_time="$seconds" -max_len=16384 -print_final_stats=1 >"$log" 2>&1; then
        runs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 executions in \2 s/p' "$log")
        echo "    $target: ${runs:-finished}, no crash"
    else
        echo "    $target: FAILED" >&2
        tail -n 40 "$log" >&2
        status=1
    fi
    rm -f "$log"
done
exit $status
