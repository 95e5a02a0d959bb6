#!/usr/bin/env bash
# Builds the Debian packages of redis-snmp from the committed HEAD of this
# checkout: the source package (.dsc, .orig.tar.gz, .debian.tar.xz) and the
# binary packages (.deb, the -dbgsym .ddeb, .buildinfo, .changes), copied to
# OUTDIR (default: target/debian). Prints OUTDIR as its last line.
#
# Usage: scripts/build-deb.sh [OUTDIR]
# Needs: git, dpkg-dev, debhelper, and cargo (rustup's) on PATH. See
# debian/README.source. Uncommitted changes are not included: the build
# works on a clean export of HEAD (git archive), as CI's clone would.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
outdir=${1:-$repo/target/debian}
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)

for tool in git dpkg-buildpackage dpkg-source dpkg-parsechangelog cargo; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "build-deb.sh: $tool not found (needs git, dpkg-dev, debhelper, cargo)" >&2
        exit 1
    fi
done

head=$(git -C "$repo" rev-parse --short HEAD)
if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ]; then
    echo "build-deb.sh: note: uncommitted changes in $repo are NOT included (building $head)" >&2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/redis-snmp-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT

git -C "$repo" show HEAD:debian/changelog >"$work/changelog"
version=$(dpkg-parsechangelog -l "$work/changelog" -S Version)
upstream=${version%-*}
src=$work/redis-snmp-$upstream
mkdir "$src"

# The .orig tarball is the committed tree without debian/ (3.0 (quilt)); a
# tar from git archive carries the commit's time, so it is reproducible.
git -C "$repo" archive --format=tar --prefix="redis-snmp-$upstream/" HEAD -- . ':(exclude)debian' |
    gzip -n -9 >"$work/redis-snmp_$upstream.orig.tar.gz"
git -C "$repo" archive --format=tar HEAD | tar -x -C "$src"

echo "build-deb.sh: redis-snmp $version from $head in $src"
(cd "$work" && dpkg-source -b "redis-snmp-$upstream")
(cd "$src" && dpkg-buildpackage -us -uc -b)

shopt -s nullglob
built=("$work"/*.dsc "$work"/*.tar.* "$work"/*.deb "$work"/*.ddeb "$work"/*.buildinfo "$work"/*.changes)
cp -f "${built[@]}" "$outdir"/
for f in "${built[@]}"; do
    echo "build-deb.sh: $outdir/$(basename "$f")"
done
echo "$outdir"
