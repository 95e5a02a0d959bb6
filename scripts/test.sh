#!/usr/bin/env bash
# The project's test command: formatting, lints, the API documentation, doc tests and every unit and
# integration test (the integration tests start private redis-server and
# snmpd instances on loopback; see tests/support, the harness), then a minute of
# fuzzing per fuzz target (scripts/fuzz.sh).
#
# Usage: scripts/test.sh
# Needs cargo (with rustfmt and clippy); installs the Debian packages the
# tests drive with scripts/install-test-deps.sh (as root or with sudo).
# Runs every step, then exits non-zero if any failed.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-test-deps.sh

# The real Puppet server of tests/puppet_server.rs (puppetserver, PuppetDB,
# PostgreSQL in a systemd container; scripts/puppet-server.sh), started
# now in the background so that its JVMs start while cargo builds, once
# for the whole run, and stopped at the end. One already running or
# starting (another run's) is used and left as it is. PUPPET_SERVER=0
# leaves it off: those tests then skip, saying so.
if [ "${PUPPET_SERVER:-1}" != 0 ]; then
    rc=0
    scripts/puppet-server.sh status >/dev/null 2>&1 || rc=$?
    if [ "$rc" = 1 ]; then
        trap 'scripts/puppet-server.sh stop' EXIT
        scripts/puppet-server.sh start || true
    fi
fi

failed=()
step() {
    echo "==> $*"
    if ! "$@"; then
        echo "==> FAILED: $*" >&2
        failed+=("$*")
    fi
}

step cargo fmt --all -- --check
step cargo clippy --workspace --all-targets --features system-tests -- -D warnings
# The API documentation builds without a broken or private link.
step env RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --lib
# Doc tests first, so that the last summary printed is the main run's.
step cargo test --workspace --doc
if cargo nextest --version >/dev/null 2>&1; then
    step cargo nextest run --workspace --features system-tests --lib --bins --tests --no-fail-fast
else
    step cargo test --workspace --features system-tests --lib --bins --tests --no-fail-fast
fi
# A short run of every fuzz target (FUZZ_SECONDS each, default 60; 0 skips).
step scripts/fuzz.sh

if [ ${#failed[@]} -ne 0 ]; then
    echo "scripts/test.sh: ${#failed[@]} step(s) failed:" >&2
    printf '  %s\n' "${failed[@]}" >&2
    exit 1
fi
echo "scripts/test.sh: all steps passed"
