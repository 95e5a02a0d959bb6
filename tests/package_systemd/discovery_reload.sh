# A hook of ../shared/tools/systemd-real/run.sh (run in the container as
# root, under sh, once the packaged agent serves): [discovery] local = true
# turned on by `systemctl reload` under the real unit (ProtectProc=invisible,
# ProcSubset=pid, no AF_NETLINK). A second redis-server as user redis on
# 127.0.0.1:6380 must be found and polled, and the default redis1
# (127.0.0.1:6379), which discovery finds again as port6379, must keep row 1:
# the 17 legacy objects describe row 1 and must keep answering.
# Prints 'ok NAME' / 'FAIL NAME: why' lines; '#' lines inform.
T=.1.3.6.1.4.1.20267.400.3.1.1
LEGACY=.1.3.6.1.4.1.20267.400.1.1.0
get() { snmpget -v2c -c public -On -t 1 -r 1 localhost "$@" 2>&1; }
systemd-run --quiet --unit=redis-6380 -p User=redis -p Group=redis \
    /usr/bin/redis-server --port 6380 --bind 127.0.0.1 --save '' --appendonly no --dir /tmp
i=0
until redis-cli -p 6380 ping 2>/dev/null | grep -q PONG; do
    i=$((i + 1)); [ $i -lt 50 ] || { echo "FAIL discovery reload: the second redis-server did not start"; exit 0; }
    sleep 0.1
done
before=$(get $T.2.1)
case "$before" in
    *'"redis1"'*) echo "# before the reload, row 1: $before" ;;
    *) echo "FAIL discovery reload: row 1 is not redis1 before the reload: $before" ;;
esac
cursor=$(journalctl -u redis-snmp -n 0 --show-cursor --no-pager | sed -n 's/^-- cursor: //p')
printf '\n[discovery]\nlocal = true\n' >>/etc/redis-snmp/redis-snmp.toml
systemctl reload redis-snmp
i=0
while :; do
    rows=$(snmpwalk -v2c -c public -On localhost $T.3 2>/dev/null)
    idx=$(echo "$rows" | awk '/6380/ { n = split($1, o, "."); print o[n] }')
    if [ -n "$idx" ] && snmpget -v2c -c public -Oqv localhost $T.4.$idx 2>/dev/null | grep -q '^1$'; then
        break
    fi
    i=$((i + 1))
    if [ $i -ge 50 ]; then
        echo "FAIL discovery under the unit: 127.0.0.1:6380 not polled up; rows: $(echo "$rows" | tr '\n' ' '); journal: $(journalctl -u redis-snmp -o cat -n 5 --no-pager | tr '\n' ' ')"
        break
    fi
    sleep 0.2
done
[ $i -lt 50 ] && echo "ok discovery under the unit (redis-server as redis on 127.0.0.1:6380 found on reload, row $idx up; addresses: $(echo "$rows" | sed 's/.*STRING: //' | tr '\n' ' '))"
said=$(journalctl -u redis-snmp --after-cursor="$cursor" -o cat --no-pager | grep 'configuration reloaded' | tail -n 1)
echo "# journal: $said"
legacy=$(get $LEGACY)
row1=$(get $T.2.1 $T.3.1 $T.4.1)
case "$legacy" in
    *"$LEGACY = Gauge32: "*)
        if echo "$row1" | grep -q '"port6379"' && echo "$row1" | grep -q '"127.0.0.1:6379"' \
            && echo "$said" | grep -q '"redis1" renamed "port6379" (index 1, the same server)'; then
            echo "ok legacy objects after the reload that turned discovery on (redisConnectedClients.0 ${legacy##*: }; row 1 is now $(echo "$row1" | sed 's/^[^=]*= //' | tr '\n' ' '))"
        else
            echo "FAIL legacy objects after the reload: the legacy object answers ($legacy) but row 1 is: $(echo "$row1" | tr '\n' ' '); journal: $said"
        fi ;;
    *) echo "FAIL legacy objects after the reload that turned discovery on: redisConnectedClients.0 is '$legacy'; row 1: $(echo "$row1" | tr '\n' ' '); journal: $said" ;;
esac
# Back to the package's file and a fresh start for the checks that follow.
sed -i '/^\[discovery\]$/,$d' /etc/redis-snmp/redis-snmp.toml
systemctl stop redis-6380
systemctl reset-failed redis-snmp 2>/dev/null
systemctl restart redis-snmp
i=0
until get $LEGACY | grep -q Gauge32; do
    i=$((i + 1)); [ $i -lt 50 ] || { echo "FAIL discovery hook: not served again after the restart"; exit 0; }
    sleep 0.2
done
