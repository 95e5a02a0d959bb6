#!/usr/bin/env bash
# Fetches the kernels Debian users run, for tests/peer_kernels.rs, which
# boots each under QEMU with a busybox initramfs: Debian 12's 6.1 and the
# 6.12 of Debian 13 (as Debian 12 carries it too, in bookworm-backports and
# its security updates). Only the kernel image is kept (about 8 MB each), in
# a per-user cache:
#
#   $CACHE/<release>/vmlinuz     the image
#   $CACHE/<release>/package     the package it came from
#
# CACHE is ${REDIS_SNMP_TEST_KERNELS:-${XDG_CACHE_HOME:-$HOME/.cache}/redis-snmp-test-kernels}.
# A kernel already there is kept; delete its directory to fetch it again.
# Nothing is installed: `apt-get download` and `dpkg-deb` only, as any user.
# Prints one line per kernel; exits 1 if a kernel could not be fetched
# (the test then skips that kernel, saying so).
set -uo pipefail

CACHE=${REDIS_SNMP_TEST_KERNELS:-${XDG_CACHE_HOME:-$HOME/.cache}/redis-snmp-test-kernels}
mkdir -p "$CACHE"

# release  package-name pattern (the newest version of those apt knows)
KERNELS="6.1 ^linux-image-6\.1\.0-[0-9]+-cloud-amd64-unsigned$
6.12 ^linux-image-6\.12\.[0-9]+\+deb[0-9.]+-cloud-amd64-unsigned$"

status=0
while read -r release pattern; do
    dir=$CACHE/$release
    if [ -s "$dir/vmlinuz" ]; then
        echo "kernel $release: $(cat "$dir/package") (cached)"
        continue
    fi
    package=$(apt-cache search --names-only "$pattern" 2>/dev/null | awk '{print $1}' | sort -V | tail -n 1)
    if [ -z "$package" ]; then
        echo "kernel $release: no package matches $pattern (apt-get update? bookworm-backports in the sources?)" >&2
        status=1
        continue
    fi
    work=$(mktemp -d)
    if (cd "$work" && apt-get download "$package" >/dev/null 2>&1) &&
        dpkg-deb --fsys-tarfile "$work"/*.deb | tar -x -C "$work" --wildcards './boot/vmlinuz-*' &&
        mkdir -p "$dir" && cp "$work"/boot/vmlinuz-* "$dir/vmlinuz.new" && mv "$dir/vmlinuz.new" "$dir/vmlinuz"; then
        echo "$package" >"$dir/package"
        echo "kernel $release: $package"
    else
        echo "kernel $release: cannot fetch $package" >&2
        status=1
    fi
    rm -rf "$work"
done <<<"$KERNELS"
exit $status
