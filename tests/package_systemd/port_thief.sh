# A hook of ../shared/tools/systemd-real/run.sh (run in the container as
# root, under sh, once the packaged agent serves): the peer check under the
# real unit (ProtectProc=invisible, ProcSubset=pid: the agent sees no other
# user's process, only /proc/net). An instance with a password file on
# 127.0.0.1:6390, where a listener of nobody's waits instead of Redis: the
# agent connects, and the password must never reach it.
# Prints 'ok NAME' / 'FAIL NAME: why' lines; '#' lines inform.
CONF=/etc/redis-snmp/redis-snmp.toml
PW=/etc/redis-snmp/thief-test.password
SECRET=sandbox-secret-$$-password
LEGACY=.1.3.6.1.4.1.20267.400.1.1.0
printf '%s\n' "$SECRET" >"$PW"
chown root:redis-snmp "$PW"
chmod 0640 "$PW"
cp "$CONF" /run/redis-snmp-conf.saved
printf '\n[[redis]]\nname = "thief"\naddress = "127.0.0.1:6390"\npassword_file = "%s"\n' "$PW" >>"$CONF"
# The listener prints whatever each connection sends within a second.
systemd-run --quiet --unit=port-thief -p User=nobody -p Group=nogroup perl -MIO::Socket::INET -e '
    $| = 1;
    my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1:6390", Listen => 5, ReuseAddr => 1) or die "listen: $!";
    print "listening\n";
    while (my $c = $s->accept) {
        my ($all, $buf) = ("", "");
        my $end = time + 1;
        $c->blocking(0);
        while (time <= $end) { $all .= $buf if sysread($c, $buf, 4096); select(undef, undef, undef, 0.05) }
        $all =~ s/[\r\n]+/ /g;
        print "connection: ", length($all), " bytes: $all\n";
        close $c;
    }'
i=0
until journalctl -u port-thief -o cat --no-pager | grep -q listening; do
    i=$((i + 1)); [ $i -lt 50 ] || { echo "FAIL port thief: the listener did not start: $(journalctl -u port-thief -o cat --no-pager | tail -n 3 | tr '\n' ' ')"; break; }
    sleep 0.1
done
cursor=$(journalctl -u redis-snmp -n 0 --show-cursor --no-pager | sed -n 's/^-- cursor: //p')
systemctl reset-failed redis-snmp 2>/dev/null
systemctl restart redis-snmp
i=0
until journalctl -u port-thief -o cat --no-pager | grep -q '^connection: '; do
    i=$((i + 1)); [ $i -lt 100 ] || break
    sleep 0.1
done
sleep 2
heard=$(journalctl -u port-thief -o cat --no-pager | grep '^connection: ')
said=$(journalctl -u redis-snmp --after-cursor="$cursor" -o cat --no-pager | grep -i '6390' | tail -n 1)
if [ -z "$heard" ]; then
    echo "FAIL port thief under the unit: the agent never connected to 127.0.0.1:6390; journal: $said"
elif echo "$heard" | grep -q -F "$SECRET"; then
    echo "FAIL port thief under the unit: nobody's listener received the password: $heard"
else
    echo "ok port thief under the unit: nobody's listener on 127.0.0.1:6390 heard $(echo "$heard" | wc -l) connection(s), no password ($(echo "$heard" | head -n 1)); journal: $said"
fi
systemctl stop port-thief
cp /run/redis-snmp-conf.saved "$CONF" && rm -f /run/redis-snmp-conf.saved "$PW"
systemctl reset-failed redis-snmp 2>/dev/null
systemctl restart redis-snmp
i=0
until snmpget -v2c -c public -On localhost $LEGACY 2>/dev/null | grep -q Gauge32; do
    i=$((i + 1)); [ $i -lt 50 ] || { echo "FAIL port thief hook: not served again after the restart"; exit 0; }
    sleep 0.2
done
