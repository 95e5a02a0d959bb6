#!/usr/bin/env bash
# Builds the Debian packages of redis-snmp from the committed HEAD of this
# checkout: the source package (.dsc, .orig.tar.gz, the crates in
# .orig-vendor.tar.gz, .debian.tar.xz) and the binary packages (.deb, the
# -dbgsym .ddeb, .buildinfo, .changes), copied to OUTDIR (default:
# target/debian). Prints OUTDIR as its last line.
#
# The binary packages are built from the source package (dpkg-source -x of
# the .dsc), with the network unusable (unshare -n, in a network namespace
# of its own) and an empty CARGO_HOME, as Debian's builders build: so the
# source package is checked to carry every crate the build needs.
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

for tool in git dpkg-buildpackage dpkg-source dpkg-parsechangelog cargo jq unshare; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "build-deb.sh: $tool not found (needs git, dpkg-dev, debhelper, cargo, jq, util-linux)" >&2
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

# The crates of Cargo.lock, for every platform (cargo checks them all
# against the lock file), as the component tarball .orig-vendor.tar.gz,
# which dpkg-source unpacks into vendor/ (debian/rules uses it). From
# cargo's registry cache, or crates.io for what it lacks. Prebuilt
# libraries and objects (Windows import libraries, ring's .obj files) are
# removed: nothing for this build, and a source package carries sources.
# Cargo checks a vendored crate's files against .cargo-checksum.json:
# the list of files is emptied for the crates that lose some.
(cd "$src" && { cargo vendor --locked --offline --versioned-dirs vendor >/dev/null 2>&1 \
    || cargo vendor --locked --versioned-dirs vendor >/dev/null; })
# Crates that no Debian architecture builds (Windows, macOS, WASI, UEFI
# ones: in none of the dependency graphs that cargo metadata resolves for
# Debian's Linux targets) are cut down to a stub that cargo can still
# read while it resolves Cargo.lock: their Cargo.toml, .cargo-checksum.json
# and an empty library. That halves the vendored sources (windows-sys
# alone is 40 MB) and what lintian has to read.
vendor_config=(--config 'source.crates-io.replace-with="vendored-sources"'
    --config 'source.vendored-sources.directory="vendor"')
for triple in x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu i686-unknown-linux-gnu \
    arm-unknown-linux-gnueabi armv7-unknown-linux-gnueabihf mips64el-unknown-linux-gnuabi64 \
    powerpc64le-unknown-linux-gnu riscv64gc-unknown-linux-gnu s390x-unknown-linux-gnu \
    loongarch64-unknown-linux-gnu; do
    (cd "$src" && cargo metadata --format-version 1 --locked --offline "${vendor_config[@]}" \
        --filter-platform "$triple") |
        jq -r '[.resolve.nodes[].id] as $ids | .packages[]
               | select(.source != null and (.id as $id | $ids | index($id)))
               | "\(.name)-\(.version)"'
done | sort -u >"$work/linux-crates"
stubs=0
for dir in "$src"/vendor/*/; do
    crate=$(basename "$dir")
    grep -qxF "$crate" "$work/linux-crates" && continue
    find "$dir" -mindepth 1 -maxdepth 1 ! -name Cargo.toml ! -name .cargo-checksum.json \
        -exec rm -rf {} +
    mkdir "$dir/src"
    : >"$dir/src/lib.rs"
    lib=$(awk '/^\[lib\]/ { l = 1; next } /^\[/ { l = 0 }
               l && /^path *=/ { gsub(/^path *= *"|"$/, ""); print }' "$dir/Cargo.toml")
    if [ -n "$lib" ]; then
        mkdir -p "$dir/$(dirname "$lib")"
        : >"$dir/$lib"
    fi
    jq -c '.files = {}' "$dir/.cargo-checksum.json" >"$dir/.cargo-checksum.json.new"
    mv "$dir/.cargo-checksum.json.new" "$dir/.cargo-checksum.json"
    stubs=$((stubs + 1))
done
echo "build-deb.sh: $stubs crates built for no Debian architecture cut down to stubs"
find "$src/vendor" -type f \( -name '*.a' -o -name '*.lib' -o -name '*.dll' -o -name '*.exe' \
    -o -name '*.obj' -o -name '*.o' -o -name '*.so' -o -name '*.dylib' -o -name '*.wasm' \) -print |
    while read -r binary; do
        rel=${binary#"$src/vendor/"}
        echo "${rel%%/*}"
        rm -f "$binary"
    done | sort -u | while read -r crate; do
        sum=$src/vendor/$crate/.cargo-checksum.json
        jq -c '.files = {}' "$sum" >"$sum.new" && mv "$sum.new" "$sum"
    done
# debian/copyright of the source package: a Files paragraph for each
# vendored crate (copyright-format 1.0), its License field from its
# Cargo.toml, in the syntax of the format, naming only licences that have
# a License paragraph in the committed debian/copyright.
(cd "$src" && cargo metadata --format-version 1 --locked --offline "${vendor_config[@]}") |
    jq -r '
      def dep5: gsub(" OR "; " or ") | gsub(" AND "; " and ") | gsub("/"; " or ")
        | gsub(" WITH (?<e>[A-Za-z0-9.]+)-exception"; " with \(.e) exception")
        | gsub("(?<l>[A-Z]+-[0-9.]+?)(\\.0)?-or-later"; "\(.l)+")
        | sub("^\\((?<a>[^()]*)\\) and (?<b>[^()]*)$"; "\(.a), and \(.b)");
      .packages[] | select(.source != null)
      | "\n\(.name)-\(.version)\t\(.license // "" | dep5)\t\(.authors | join(", "))"
    ' | sed '/^$/d' | sort >"$work/crates.tsv"
known=$(sed -n 's/^License: //p' "$src/debian/copyright" | sort -u)
while IFS=$'\t' read -r crate license authors; do
    [ -d "$src/vendor/$crate" ] || { echo "build-deb.sh: $crate is not in vendor/" >&2; exit 1; }
    for id in $(echo "$license" | sed 's/,//g; s/ with \([^ ]*\) exception/_with_\1_exception/g; s/ or / /g; s/ and / /g'); do
        id=${id//_/ }
        if ! grep -qxF "$id" <<<"$known"; then
            echo "build-deb.sh: $crate: licence \"$id\" has no License paragraph in debian/copyright" >&2
            exit 1
        fi
    done
    {
        echo
        echo "Files: vendor/$crate/*"
        echo "Copyright: ${authors:-the authors of $crate}"
        echo "License: $license"
    } >>"$src/debian/copyright"
done <"$work/crates.tsv"
echo "build-deb.sh: debian/copyright: $(wc -l <"$work/crates.tsv") vendored crates"

mtime=$(git -C "$repo" log -1 --format=%ct HEAD)
tar -C "$src" --sort=name --mtime="@$mtime" --owner=0 --group=0 --numeric-owner \
    -cf - vendor | gzip -n -6 >"$work/redis-snmp_$upstream.orig-vendor.tar.gz"
echo "build-deb.sh: $(ls "$src/vendor" | wc -l) crates vendored"

echo "build-deb.sh: redis-snmp $version from $head in $src"
(cd "$work" && dpkg-source -b "redis-snmp-$upstream")

# The binary packages, from the source package alone, without network.
dsc=$work/redis-snmp_$version.dsc
build=$work/build
mkdir "$build"
(cd "$build" && dpkg-source -x "$dsc" "redis-snmp-$upstream")
if unshare -n true 2>/dev/null; then
    isolate=(unshare -n)
elif unshare -rn true 2>/dev/null; then
    isolate=(unshare -rn)
else
    echo "build-deb.sh: cannot make a network namespace (unshare -n): run as root, or allow" \
        "unprivileged user namespaces" >&2
    exit 1
fi
empty_cargo_home=$work/cargo-home
mkdir "$empty_cargo_home"
echo "build-deb.sh: building the binary packages from $(basename "$dsc") without network" \
    "(${isolate[*]}), CARGO_HOME=$empty_cargo_home (empty)"
(cd "$build/redis-snmp-$upstream" &&
    RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup} CARGO_HOME=$empty_cargo_home \
        CARGO="$(command -v cargo)" CARGO_NET_OFFLINE=true \
        "${isolate[@]}" dpkg-buildpackage -us -uc -b)
mv "$build"/*.deb "$build"/*.buildinfo "$build"/*.changes "$work"/
mv "$build"/*.ddeb "$work"/ 2>/dev/null || true

shopt -s nullglob
built=("$work"/*.dsc "$work"/*.tar.* "$work"/*.deb "$work"/*.ddeb "$work"/*.buildinfo "$work"/*.changes)
cp -f "${built[@]}" "$outdir"/
for f in "${built[@]}"; do
    echo "build-deb.sh: $outdir/$(basename "$f")"
done
echo "$outdir"
