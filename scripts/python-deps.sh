#!/usr/bin/env bash
# Makes the Python virtualenv of the tests' second SNMP stack (pysnmp and
# pysmi from PyPI, pinned in scripts/python-requirements.txt) and prints
# its python on the last line of stdout.
#
# Usage: scripts/python-deps.sh [VENV]   (default: $REDIS_SNMP_PY_VENV or
# target/py-venv)
#
# Does nothing when the venv is there with exactly these pins (a stamp file
# holds the requirements it was made from). Exit status:
#   0  the venv is ready (its python printed last)
#   3  it cannot be made here: PyPI cannot be reached, or there is no
#      python3 with venv; the reason is printed, and the tests that need it
#      skip saying so
#   1  anything else (e.g. PyPI answered but a pin does not install): an error
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-${REDIS_SNMP_PY_VENV:-target/py-venv}}
reqs=scripts/python-requirements.txt
python=${PYTHON:-python3}

skip() {
    echo "python-deps: SKIP: $*; the pysnmp/pysmi tests (tests/second_stack.rs) will skip" >&2
    exit 3
}

ready() {
    [ -x "$venv/bin/python" ] && [ -f "$venv/.requirements" ] && cmp -s "$reqs" "$venv/.requirements"
}
if ready; then
    echo "$venv/bin/python"
    exit 0
fi
# Tests running in parallel call this too: one makes the venv, the others
# wait for it (flock is util-linux's, in every Debian).
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if ready; then
    echo "$venv/bin/python"
    exit 0
fi

command -v "$python" >/dev/null 2>&1 || skip "no $python"
"$python" -c 'import venv, ensurepip' 2>/dev/null || skip "$python has no venv/ensurepip module (Debian: apt-get install python3-venv)"

probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
# Can PyPI be reached at all? One small download, no retry: offline, this
# fails within seconds rather than after pip's long default retries. The
# base python's pip when it has one (quicker than making the venv first).
probe_pypi() { # PYTHON
    "$1" -m pip --disable-pip-version-check --no-input download --no-deps \
        --dest "$probe" --timeout 10 --retries 0 \
        "$(grep -m1 '^pysmi==' "$reqs")" >/dev/null 2>"$probe/err"
}
fail_probe() {
    tail -3 "$probe/err" | sed 's/^/  /' >&2
    rm -rf "$venv"
    # PyPI answered, but without the pinned release: a broken pin, not a
    # machine that is offline.
    if grep -q 'from versions: [0-9]' "$probe/err"; then
        echo "python-deps: ERROR: PyPI has not the pinned pysmi ($reqs)" >&2
        exit 1
    fi
    skip "PyPI cannot be reached"
}
if "$python" -m pip --version >/dev/null 2>&1; then
    probe_pypi "$python" || fail_probe
    probed=1
fi
# The stamp is written last: a venv left half made by an interrupted run has
# none, and the next run makes it anew.
rm -rf "$venv"
"$python" -m venv "$venv" >&2
if [ -z "${probed:-}" ]; then
    probe_pypi "$venv/bin/python" || fail_probe
fi
"$venv/bin/python" -m pip --disable-pip-version-check --no-input install --quiet \
    --timeout 60 --retries 2 -r "$reqs" >&2
"$venv/bin/python" -c 'import pysnmp, pysmi' >&2
cp "$reqs" "$venv/.requirements"
echo "$venv/bin/python"
