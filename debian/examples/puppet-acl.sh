#!/bin/sh
# redis-snmp: let the agent's user read Puppet's run files, and nobody else.
#
# Puppet writes last_run_summary.yaml and last_run_report.yaml mode 0640,
# owner root, anew at every run (a temporary file renamed over the old
# one), so a chmod or a one-off ACL on the file is lost at the next run.
# A default ACL on the directory is not: every file Puppet creates there
# inherits "user:redis-snmp:r--", and Puppet's own chmod 0640 leaves it
# effective (the ACL mask follows the group bits, r--). The files stay
# unreadable by everyone else: the report holds exec output and file diffs
# (CVE-2012-3866 was a world-readable report), so do not make it 0644, and
# do not run the agent as root.
#
# Usage (as root, with the acl package installed):
#   sh /usr/share/doc/redis-snmp/examples/puppet-acl.sh [USER]
# USER defaults to redis-snmp. The files' paths are Puppet's own
# (puppet config print lastrunfile lastrunreport), or LASTRUNFILE and
# LASTRUNREPORT when set. Run it once; it changes nothing else.
# tests/puppet_acl.rs runs it with real puppet apply runs.
set -eu

user=${1:-redis-snmp}
lastrunfile=${LASTRUNFILE:-$(puppet config print lastrunfile --section agent)}
lastrunreport=${LASTRUNREPORT:-$(puppet config print lastrunreport --section agent)}

# This runs as root on paths the puppet user may write (Puppet's state
# and public directories are its own): a symlink there must not make
# root grant the ACL on another file or directory. So no path is
# followed through a symlink (setfacl -P skips symlink arguments, and
# links are refused first, to say so), and a directory is taken only
# when it is root's or puppet's.
die() {
    echo "puppet-acl.sh: $*; nothing changed there" >&2
    exit 1
}
puppet_uid=$(id -u puppet 2>/dev/null || echo 0)
check_dir() {
    [ ! -L "$1" ] || die "$1 is a symbolic link"
    [ -d "$1" ] || die "$1 is not a directory"
    case $(stat -c %u "$1") in
        0|"$puppet_uid") ;;
        *) die "$1 belongs to $(stat -c %U "$1"), neither root nor puppet" ;;
    esac
}

# Search permission on every directory above a file that others may not
# enter (a named-user ACL entry, nothing for anyone else).
grant_search() {
    up=$(dirname "$1")
    while [ "$up" != / ]; do
        if [ -d "$up" ]; then
            [ ! -L "$up" ] || die "$up is a symbolic link"
            case $(stat -c %A "$up") in
                *x|*t) ;;
                *) setfacl -P -m "u:$user:x" "$up" ;;
            esac
        fi
        up=$(dirname "$up")
    done
}

for file in "$lastrunfile" "$lastrunreport"; do
    dir=$(dirname "$file")
    case $dir in
        /*/*) ;;
        *) echo "puppet-acl.sh: $file is not in a directory of Puppet's" >&2; exit 1 ;;
    esac
    mkdir -p "$dir"
    check_dir "$dir"
    [ ! -L "$file" ] || die "$file is a symbolic link"
    grant_search "$file"
    # Files Puppet creates from now on...
    setfacl -P -d -m "u:$user:r" "$dir"
    # ...and the one there now.
    if [ -f "$file" ]; then
        setfacl -P -m "u:$user:r" "$file"
    fi
    echo "$user may read $file (default ACL on $dir)"
done
