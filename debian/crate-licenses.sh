#!/bin/sh
# Writes the licences of the Rust crates that make up /usr/sbin/redis-snmp
# to OUTPUT, from the output of "cargo metadata --format-version 1
# --filter-platform HOST" read on standard input: every crate reachable
# from the root package through normal and build dependencies (not the
# dev-dependencies of the tests), with its licence expression (Cargo.toml's
# license, or license-file) and the text of every licence file in its
# sources (LICENSE*, LICENCE*, COPYING*, COPYRIGHT*, NOTICE*, UNLICENSE*,
# and the license-file). Run by debian/rules at build time; installed as
# /usr/share/doc/redis-snmp/crate-licenses. Fails when a crate has no
# licence expression or no licence file, so that nothing ships without.
#
# Usage: cargo metadata ... | debian/crate-licenses.sh OUTPUT
set -eu

out=$1
tmp=$out.tmp
list=$out.list

# One line per crate, sorted: name, version, licence, license-file and the
# directory of its sources, separated by "|" (IFS=tab would merge an
# empty field with the next).
# jq reads the document once from a file.
doc=$out.json
cat >"$doc"
jq -r '
  (.resolve.nodes | map({key: .id, value: .}) | from_entries) as $nodes
  | .resolve.root as $root
  | ({seen: {}, todo: [$root]}
     | until(.todo | length == 0;
         .todo[0] as $id
         | .todo |= .[1:]
         | if .seen[$id] then . else
             .seen[$id] = true
             | .todo += [$nodes[$id].deps[]
                         | select(any(.dep_kinds[]; .kind == null or .kind == "build"))
                         | .pkg]
           end)
     | .seen) as $seen
  | .packages[]
  | select($seen[.id] and .id != $root)
  | [.name, .version, (.license // ""), (.license_file // ""),
     (.manifest_path | sub("/Cargo.toml$"; ""))]
  | join("|")
' "$doc" | sort -t '|' -k1,1 -k2,2V >"$list"
rm -f "$doc"

if [ ! -s "$list" ]; then
    echo "crate-licenses.sh: no crate found in cargo metadata" >&2
    exit 1
fi

{
    echo "Licences of the Rust crates linked into /usr/sbin/redis-snmp"
    echo "============================================================="
    echo
    echo "redis-snmp is statically linked with the crates below (and built"
    echo "with the proc-macro and build-script crates among them). For each:"
    echo "its name and version, its licence as its Cargo.toml states it (an"
    echo "SPDX expression: \"A OR B\" offers a choice, \"A AND B\" applies both),"
    echo "and the licence files found in its sources. Generated at build time"
    echo "from \"cargo metadata\" and the vendored sources; debian/copyright"
    echo "names each licence."
    echo
    while IFS='|' read -r name version license license_file dir; do
        echo "Crate: $name $version"
        echo "License: ${license:-see $license_file}"
        echo
    done <"$list"
} >"$tmp"

missing=
while IFS='|' read -r name version license license_file dir; do
    files=$(cd "$dir" && find . -maxdepth 1 -type f \( -iname 'licen[cs]e*' -o -iname 'copying*' \
        -o -iname 'copyright*' -o -iname 'notice*' -o -iname 'unlicense*' \) | sed 's|^\./||' | LC_ALL=C sort)
    if [ -n "$license_file" ] && [ -f "$dir/$license_file" ]; then
        files=$(printf '%s\n%s\n' "$files" "$license_file" | sed '/^$/d' | LC_ALL=C sort -u)
    fi
    if [ -z "$license$license_file" ] || [ -z "$files" ]; then
        missing="$missing $name-$version"
        continue
    fi
    for f in $files; do
        {
            echo "-------------------------------------------------------------------------------"
            echo "Crate: $name $version"
            echo "License: ${license:-see $license_file}"
            echo "File: $f"
            echo
            cat "$dir/$f"
            echo
        } >>"$tmp"
    done
done <"$list"
rm -f "$list"

if [ -n "$missing" ]; then
    echo "crate-licenses.sh: no licence or no licence file for:$missing" >&2
    rm -f "$tmp"
    exit 1
fi
mv "$tmp" "$out"
echo "crate-licenses.sh: $(grep -c '^Crate: ' "$out") entries in $out"
