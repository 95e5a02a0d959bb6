#!/bin/sh
# Puts the SMIv2 base modules (SNMPv2-SMI, SNMPv2-TC, SNMPv2-CONF, ...) that
# REDIS-SERVER-MIB imports into one directory, and prints that directory.
#
# Debian ships these only in the non-free snmp-mibs-downloader, which fetches
# them from the IETF at install time. The npm package `net-snmp` carries the
# same modules in lib/mibs/, so tests and the demo take them from there.
#
# Usage: scripts/base-mibs.sh [DIR]   (default: target/base-mibs)
set -eu
dir=${1:-${REDIS_SNMP_BASE_MIBS:-target/base-mibs}}
if [ -f "$dir/SNMPv2-SMI.txt" ] && [ -f "$dir/SNMPv2-TC.txt" ] && [ -f "$dir/SNMPv2-CONF.txt" ]; then
    echo "$dir"
    exit 0
fi
mkdir -p "$dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent net-snmp >/dev/null)
tar -xzf "$work"/net-snmp-*.tgz -C "$work"
# One file per module, named as both net-snmp and libsmi look them up.
for f in "$work"/package/lib/mibs/*.mib; do
    name=$(basename "$f" .mib)
    cp "$f" "$dir/$name.txt"
done
echo "$dir"
