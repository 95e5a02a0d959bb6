#!/bin/sh
# puppet-kick-traphandle: an snmptrapd traphandle that reacts across the
# network to a Puppet resource event sent by redis-snmp.
#
# The pattern: a node's manifest says who must re-run Puppet after it
# changed, with a resource that changes in the same run, e.g.
#
#     notify { 'kick -> haproxy': require => Service['nginx'] }
#
# redis-snmp sends puppetResourceChanged (PUPPET-AGENT-MIB, notification
# puppetNotifications 9, .1.3.6.1.4.1.20267.401.0.9) the moment Puppet applies
# it; this handler sees resource type Notify and title "kick -> haproxy" and
# runs Puppet on the hosts of the role haproxy (kick_host below, which you
# configure). Loop protection: a host kicked less than WINDOW seconds ago is
# not kicked again (two roles kicking each other stop after one round), the
# kick times being kept in STATE_FILE.
#
# In snmptrapd.conf (as root; see snmptrapd.conf(5), "traphandle"):
#
#     traphandle .1.3.6.1.4.1.20267.401.0.9 /bin/sh /usr/share/doc/redis-snmp/examples/puppet-kick-traphandle.sh /etc/redis-snmp/puppet-kick.conf
#
# The configuration file is sourced by sh (keep it root's, mode 0600); all
# of it is optional:
#
#     ROLES=/etc/redis-snmp/puppet-kick.roles   # lines "ROLE HOST HOST ..."
#     WINDOW=600                                # seconds between two kicks of a host
#     STATE_FILE=/var/lib/redis-snmp/puppet-kick.state
#     LOG_FILE=                                 # empty: syslog (logger -t puppet-kick)
#     # How to run Puppet on a host ($1 the host, $2 the role):
#     kick_host() { ssh -n -o BatchMode=yes "$1" sudo -n puppet agent --onetime --no-daemonize; }
#
# snmptrapd gives the handler the notification on standard input: the host
# name, the transport address, then one "OID VALUE" line per varbind, with
# OIDs as names or numbers depending on the MIBs it loaded. The resource
# type and title are the varbinds of the puppetEventTable columns named
# TYPE_OBJECT and TITLE_OBJECT, or when snmptrapd does not know
# PUPPET-AGENT-MIB, the column numbers TYPE_COLUMN and TITLE_COLUMN
# (puppet.4.1.C.<row>).
#
# Nothing of the notification is ever run or used as a path: the role must
# be a plain word ([A-Za-z0-9_.-]) and is only looked up in ROLES; the hosts
# come from ROLES. Uses only sh, sed, grep, coreutils, flock (util-linux)
# and logger (bsdutils): Debian's essential set.

set -u

ROLES=/etc/redis-snmp/puppet-kick.roles
WINDOW=600
STATE_FILE=/var/lib/redis-snmp/puppet-kick.state
LOG_FILE=
TYPE_OBJECT=puppetEventResourceType
TITLE_OBJECT=puppetEventTitle
TYPE_COLUMN=4
TITLE_COLUMN=5

kick_host() {
    ssh -n -o BatchMode=yes "$1" sudo -n puppet agent --onetime --no-daemonize
}

CONF=${1:-/etc/redis-snmp/puppet-kick.conf}
if [ -r "$CONF" ]; then
    # shellcheck source=/dev/null
    . "$CONF"
fi

say() {
    if [ -n "$LOG_FILE" ]; then
        printf '%s puppet-kick: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >>"$LOG_FILE"
    else
        logger -t puppet-kick -p daemon.notice -- "$*" 2>/dev/null || printf '%s\n' "$*" >&2
    fi
}

# A quoted string value as snmptrapd prints it: "text" with \" and \\.
unquote() {
    v=$1
    case $v in
        \"*\") v=${v#\"}; v=${v%\"} ;;
    esac
    printf '%s' "$v" | sed -e 's/\\"/"/g' -e 's/\\\\/\\/g'
}

# An OID as snmptrapd prints it, with the part of PUPPET-AGENT-MIB it could
# not name in numbers: PUPPET-AGENT-MIB::puppet.4.1.5.7 is 20267.401.4.1.5.7.
numeric() {
    case $1 in
        *::puppetNotifications.*) printf '20267.401.0.%s' "${1##*::puppetNotifications.}" ;;
        *::puppet.*) printf '20267.401.%s' "${1##*::puppet.}" ;;
        *) printf '%s' "$1" ;;
    esac
}

read -r _host || exit 0
read -r _transport || exit 0
trap_oid= type= title=
while IFS= read -r line; do
    oid=${line%% *}
    value=${line#* }
    [ "$oid" = "$line" ] && value=
    oid=$(numeric "$oid")
    case $oid in
        *snmpTrapOID.0 | *3.6.1.6.3.1.1.4.1.0) trap_oid=$(numeric "$value") ;;
        *20267.401.4.1."$TYPE_COLUMN".* | *::"$TYPE_OBJECT".* | "$TYPE_OBJECT".*)
            type=$(unquote "$value") ;;
        *20267.401.4.1."$TITLE_COLUMN".* | *::"$TITLE_OBJECT".* | "$TITLE_OBJECT".*)
            title=$(unquote "$value") ;;
    esac
done

case $trap_oid in
    *20267.401.0.9 | *::puppetResourceChanged | puppetResourceChanged) ;;
    *) exit 0 ;; # another notification: not ours
esac
[ "$type" = Notify ] || exit 0
case $title in
    "kick -> "*) role=${title#kick -> } ;;
    *) exit 0 ;;
esac
case $role in
    "" | *[!A-Za-z0-9_.-]* | .*)
        say "refused a kick from $_host: the role is not a plain word"
        exit 0 ;;
esac

hosts=
if [ -r "$ROLES" ]; then
    while read -r r rest; do
        [ "$r" = "$role" ] && hosts="$hosts $rest"
    done <"$ROLES"
fi
if [ -z "$hosts" ]; then
    say "kick -> $role from $_host: no host has role $role in $ROLES"
    exit 0
fi

# One handler at a time reads and rewrites the state.
exec 9>>"$STATE_FILE.lock"
flock 9

now=$(date +%s)
# Forget kicks older than the window (the file stays small).
kept=$(
    [ -r "$STATE_FILE" ] && while read -r h t; do
        case $t in '' | *[!0-9]*) continue ;; esac
        [ $((now - t)) -lt "$WINDOW" ] && printf '%s %s\n' "$h" "$t"
    done <"$STATE_FILE"
)
for host in $hosts; do
    case $host in
        "" | *[!A-Za-z0-9_.:-]* | -*)
            say "kick -> $role: skipped host name '$host' in $ROLES"
            continue ;;
    esac
    last=$(printf '%s\n' "$kept" | while read -r h t; do [ "$h" = "$host" ] && echo "$t"; done | tail -n 1)
    if [ -n "$last" ]; then
        say "kick -> $role from $_host: not kicking $host again, kicked $((now - last)) s ago (window $WINDOW s)"
        continue
    fi
    kept=$(printf '%s\n%s %s' "$kept" "$host" "$now")
    say "kick -> $role from $_host: running Puppet on $host"
    # In the background: snmptrapd waits for its handlers.
    (kick_host "$host" "$role" </dev/null >/dev/null 2>&1 &)
done
printf '%s\n' "$kept" | grep -v '^$' >"$STATE_FILE.new" || true
mv -f "$STATE_FILE.new" "$STATE_FILE"
