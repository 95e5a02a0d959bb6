#!/usr/bin/env bash
# A real Puppet server for the tests: Debian 12's puppetserver 7.9,
# PuppetDB 7.12 and PostgreSQL 15 in a container that boots a Debian 12
# rootfs with systemd as its PID 1 (systemd-nspawn), reachable from this
# host over a veth pair into a network namespace of its own.
#
# Usage: scripts/puppet-server.sh start|stop|status [SECONDS]|build
#   start    returns at once; in the background it builds the image if it is
#            not cached yet, boots a scratch copy of it and writes the state
#            file (below) with status=ready, or status=failed and the reason.
#            A server already running (or starting) is left as it is.
#   status   waits up to SECONDS (default 0) for the server to leave
#            "starting", prints the state file; exit 0 when ready, 1 when
#            failed or stopped, 2 when still starting.
#   stop     powers the container off, removes its scratch copy, its cgroups,
#            the network namespace and the veth pair; a start still under
#            way is stopped too.
#   build    builds (or checks) the cached image in the foreground.
#
# What it makes, and where (nothing else on the host is touched):
#   $CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/redis-snmp-puppet-server)
#     tools/     systemd-nspawn (and debootstrap when the host has none),
#                unpacked from `apt-get download`, never installed: Debian's
#                systemd-container wants the systemd of its exact version.
#     image/     the configured rootfs (about 1.1 GB), made once and stamped
#                (.redis-snmp-puppet-stamp): debootstrap minbase from the
#                host's apt mirror, + systemd, puppetserver, puppetdb,
#                puppet-terminus-puppetdb, postgresql and curl, installed in
#                a booted container (PuppetDB's postinst needs a running
#                PostgreSQL to make its database). Delete it to rebuild.
#     run/       the running server: state, ca.pem, root/ (the scratch copy),
#                environments/ (bind-mounted on the server's
#                /etc/puppet/code/environments: a test writes its own
#                environment there), logs.
#   The network namespace $NETNS with eth0 = $SERVER_IP/24, the veth's other
#   end $VETH = $HOST_IP/24 on this host (10.233.47.0/24: the tests' own
#   hosts use 10.77.0.0/24, tests/support/src/netns.rs), and the cgroup
#   $MACHINE under each of the host's cgroup hierarchies.
#
# The server: hostname $SERVER_NAME; its certificate names puppet,
# localhost, $SERVER_NAME and IP:$SERVER_IP, so an agent on this host uses
# `server = $SERVER_IP` with no /etc/hosts entry. puppetserver with
# -Xms512m -Xmx512m, TLS 1.2 only (a new certname's first run otherwise
# stalls 30 s), autosign, duplicate certnames allowed (a test's fresh
# ssldir asks again for web1); storeconfigs and reports to PuppetDB, whose
# plain HTTP (PQL) listens on $SERVER_IP:8080 and HTTPS on :8081.
#
# Cost, measured on the 2-core VM under load (docs/development.md): cold
# cache 572 s to ready (the image alone 408 s); a cached image 92 to 189 s
# (two JVMs start on every boot; nothing caches that); 1.5 GiB PSS.
#
# Needs root, iproute2, and apt-get (for the tools and the image).
set -uo pipefail

SUITE=${SUITE:-bookworm}
CACHE=${REDIS_SNMP_PUPPET_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/redis-snmp-puppet-server}
IMAGE=$CACHE/image
RUN=$CACHE/run
STATE=$RUN/state
READY_TIMEOUT=${READY_TIMEOUT:-420}
MACHINE=redis-snmp-puppet
NETNS=redis-snmp-puppet
VETH=rsnmp-pup0
HOST_IP=10.233.47.1
SERVER_IP=10.233.47.2
SERVER_NAME=puppet.redis-snmp.test
PACKAGES="puppetserver puppetdb puppet-terminus-puppetdb postgresql curl ca-certificates"
# What the image holds and how it is configured; a change here rebuilds it.
STAMP="v3 $SUITE minbase systemd $PACKAGES $SERVER_NAME $SERVER_IP xmx512m tls12 dup"

say() { printf 'puppet-server: %s\n' "$*"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# ------------------------------------------------------------------ state
# key=value lines, replaced whole (a reader never sees half a file).
state_get() { # KEY
    [ -r "$STATE" ] && sed -n "s/^$1=//p" "$STATE" | tail -n 1
}
state_set() { # KEY=VALUE... (under a lock: start and its worker both write)
    mkdir -p "$RUN"
    (
        flock 8
        tmp=$STATE.$BASHPID
        { [ -r "$STATE" ] && cat "$STATE"; for kv in "$@"; do printf '%s\n' "$kv"; done; } |
            awk -F= '{ k = $1; sub(/^[^=]*=/, ""); if (!(k in v)) o[n++] = k; v[k] = $0 }
                     END { for (i = 0; i < n; i++) print o[i] "=" v[o[i]] }' >"$tmp"
        mv "$tmp" "$STATE"
    ) 8>"$RUN/state.lock"
}
fail() { # REASON: say it, record it, keep what the container logged, tear down, exit 1
    say "failed: $1"
    state_set status=failed "reason=$1"
    if is_pid1_of_container "${CPID:-}"; then
        {
            c systemctl --failed --no-pager
            c journalctl --no-pager -n 60 -u puppetserver -u puppetdb -u postgresql@15-main
            c tail -n 60 /var/log/puppetserver/puppetserver.log /var/log/puppetdb/puppetdb.log
        } >"$RUN/failure.log" 2>&1
        say "the container's logs: $RUN/failure.log"
    fi
    teardown
    exit 1
}

alive() { kill -0 "$1" 2>/dev/null; }
is_pid1_of_container() { # PID: still the container's systemd (not a reused PID)
    [ -n "$1" ] && [ "$(cat "/proc/$1/comm" 2>/dev/null)" = systemd ] &&
        [ "$(readlink "/proc/$1/ns/pid")" != "$(readlink /proc/self/ns/pid)" ]
}

# ------------------------------------------------------------------ tools
NSPAWN=
NSPAWN_LD=
DEBOOTSTRAP=$(command -v debootstrap || true)
DEBOOTSTRAP_ENV=()
LOG=$RUN/build.log

apt_download() { # DIR PACKAGE...
    local dir=$1
    shift
    mkdir -p "$dir"
    (cd "$dir" && apt-get download -q "$@") >>"$LOG" 2>&1 && return 0
    apt-get update -q >>"$LOG" 2>&1
    (cd "$dir" && apt-get download -q "$@") >>"$LOG" 2>&1
}

tools() { # [debootstrap]
    local t=$CACHE/tools d
    NSPAWN=$(command -v systemd-nspawn || true)
    if [ -z "$NSPAWN" ]; then
        if [ ! -x "$t/root/usr/bin/systemd-nspawn" ]; then
            rm -rf "$t/debs-nspawn"
            # nspawn and the libsystemd-shared of its version (not the host's).
            apt_download "$t/debs-nspawn" systemd-container libsystemd-shared ||
                fail "apt-get download systemd-container libsystemd-shared failed ($LOG)"
            for d in "$t"/debs-nspawn/*.deb; do dpkg-deb -x "$d" "$t/root" || fail "dpkg-deb -x $d"; done
        fi
        NSPAWN=$t/root/usr/bin/systemd-nspawn
        NSPAWN_LD=$(dirname "$(find "$t/root" -name 'libsystemd-shared-*.so' | head -n 1)")
    fi
    if [ "${1:-}" = debootstrap ] && [ -z "$DEBOOTSTRAP" ]; then
        if [ ! -x "$t/root/usr/sbin/debootstrap" ]; then
            rm -rf "$t/debs-debootstrap"
            apt_download "$t/debs-debootstrap" debootstrap || fail "apt-get download debootstrap failed ($LOG)"
            dpkg-deb -x "$t"/debs-debootstrap/debootstrap_*.deb "$t/root" || fail "dpkg-deb -x debootstrap"
        fi
        DEBOOTSTRAP=$t/root/usr/sbin/debootstrap
        DEBOOTSTRAP_ENV=(DEBOOTSTRAP_DIR="$t/root/usr/share/debootstrap")
    fi
}

# ------------------------------------------------------------------ cgroups
# A host without systemd as PID 1 cannot give nspawn a scope: nspawn runs
# with --keep-unit in a cgroup of its own (one per hierarchy systemd uses)
# and makes its payload/ and supervisor/ under it.
CGROUPS=()
NSPAWN_OPTS=()
cgroups_make() {
    CGROUPS=()
    NSPAWN_OPTS=(--quiet --register=no)
    if [ -d /run/systemd/system ]; then return 0; fi
    NSPAWN_OPTS+=(--keep-unit)
    local h
    if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
        CGROUPS=(/sys/fs/cgroup/$MACHINE)
    else
        for h in /sys/fs/cgroup/systemd /sys/fs/cgroup/unified; do
            mountpoint -q "$h" && CGROUPS+=("$h/$MACHINE")
        done
    fi
    for h in "${CGROUPS[@]}"; do
        mkdir -p "$h" || fail "mkdir $h"
    done
}
cgroups_remove() {
    local h
    for h in /sys/fs/cgroup/$MACHINE /sys/fs/cgroup/systemd/$MACHINE /sys/fs/cgroup/unified/$MACHINE; do
        [ -d "$h" ] && find "$h" -depth -type d -exec rmdir {} + 2>/dev/null
        [ -d "$h" ] && say "cgroup $h left: not empty"
    done
    # nspawn leaves its propagation directory when /run is no tmpfs.
    rm -rf "/run/systemd/nspawn/propagate/$MACHINE"
    rmdir /run/systemd/nspawn/propagate /run/systemd/nspawn/locks /run/systemd/nspawn 2>/dev/null
    true
}

# systemd-nspawn ARGS..., in the cgroups; execs, so call it in a subshell
# or in the background ($! is then nspawn's PID).
nspawn_exec() {
    local h
    for h in "${CGROUPS[@]}"; do echo "$BASHPID" >"$h/cgroup.procs"; done
    [ -n "$NSPAWN_LD" ] && export LD_LIBRARY_PATH=$NSPAWN_LD
    export SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1
    exec "$NSPAWN" "${NSPAWN_OPTS[@]}" "$@"
}

# ------------------------------------------------------------------ a booted machine
NSPAWN_PID=
CPID=
# In the container: all its namespaces and root, a root login's environment.
c() {
    nsenter -t "$CPID" -m -u -i -n -p -C -r -w -- env -i \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        LANG=C.UTF-8 HOME=/root TERM=dumb SYSTEMD_PAGER= SYSTEMD_COLORS=0 "$@"
}
boot() { # ROOT CONSOLE_LOG NSPAWN_ARGS...
    local root=$1 console=$2 i
    shift 2
    nspawn_exec -D "$root" -b -M "$MACHINE" --hostname="$SERVER_NAME" \
        --console=read-only --link-journal=no --resolv-conf=off --timezone=off \
        --setenv=SYSTEMD_COLORS=0 "$@" >"$console" 2>&1 &
    NSPAWN_PID=$!
    for i in $(seq 1 300); do
        CPID=$(ps -o pid=,comm= --ppid "$NSPAWN_PID" 2>/dev/null | awk '$2 == "systemd" { print $1 }')
        [ -n "$CPID" ] && break
        alive "$NSPAWN_PID" || break
        sleep 0.1
    done
    [ -n "$CPID" ] || fail "systemd did not start in the container ($(tail -n 3 "$console" | tr '\n' ' '))"
    state_set "nspawn_pid=$NSPAWN_PID" "leader_pid=$CPID"
}
wait_running() { # SECONDS: the container's systemd reaches running (or degraded)
    local deadline=$(($(date +%s) + $1)) s=
    while [ "$(date +%s)" -lt "$deadline" ]; do
        s=$(c systemctl is-system-running 2>/dev/null)
        case $s in running | degraded) echo "$s"; return 0 ;; esac
        alive "$NSPAWN_PID" || break
        sleep 1
    done
    echo "${s:-none}"
    return 1
}
poweroff() { # NSPAWN_PID LEADER_PID
    local n=$1 l=$2 i
    if [ -n "$n" ] && alive "$n" && [ "$(cat "/proc/$n/comm" 2>/dev/null)" = systemd-nspawn ]; then
        # SIGTERM to nspawn: it asks the container's systemd to power off.
        # The copy is thrown away: after STOP_GRACE seconds (the JVMs take
        # about 30 s to stop) its PID 1 is killed, and the kernel kills
        # every process of its PID namespace with it.
        kill -TERM "$n"
        for i in $(seq 1 $((${STOP_GRACE:-10} * 10))); do alive "$n" || break; sleep 0.1; done
    fi
    if is_pid1_of_container "$l"; then
        kill -KILL "$l"
        sleep 0.5
    fi
    if [ -n "$n" ] && alive "$n" && [ "$(cat "/proc/$n/comm" 2>/dev/null)" = systemd-nspawn ]; then
        kill -KILL "$n"
        sleep 0.5
    fi
}

# ------------------------------------------------------------------ the image
mirrors() { # the host's apt URIs (deb822, then the classic list)
    [ -f /etc/apt/sources.list.d/debian.sources ] &&
        awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' /etc/apt/sources.list.d/debian.sources
    [ -f /etc/apt/sources.list ] &&
        awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' /etc/apt/sources.list
    true
}

# The server's configuration, run in the booted build container.
configure() {
    c sed -i 's/^JAVA_ARGS="-Xms1g -Xmx1g /JAVA_ARGS="-Xms512m -Xmx512m /' /etc/default/puppetserver
    c grep -q '^JAVA_ARGS="-Xms512m -Xmx512m ' /etc/default/puppetserver || fail "JAVA_ARGS not set"
    c sh -c "printf '%s\n' '[main]' 'server = $SERVER_NAME' '[server]' 'autosign = true' \
        'allow_duplicate_certs = true' 'storeconfigs = true' 'storeconfigs_backend = puppetdb' \
        'reports = store,puppetdb' >>/etc/puppet/puppet.conf"
    c sed -i 's/^\( *\)ssl-port: 8140$/&\n\1ssl-protocols: [TLSv1.2]/' /etc/puppet/puppetserver/conf.d/webserver.conf
    c grep -q 'ssl-protocols: \[TLSv1.2\]' /etc/puppet/puppetserver/conf.d/webserver.conf ||
        fail "webserver.conf: no ssl-port line to put TLSv1.2 after"
    c sh -c "printf '[main]\nserver_urls = https://localhost:8081\n' >/etc/puppet/puppetdb.conf"
    c cp /usr/share/doc/puppet-terminus-puppetdb/routes.yaml.example /etc/puppet/routes.yaml ||
        fail "no routes.yaml.example in puppet-terminus-puppetdb"
    c puppetserver ca setup --subject-alt-names "puppet,localhost,$SERVER_NAME,IP:$SERVER_IP" >>"$LOG" 2>&1 ||
        fail "puppetserver ca setup failed ($LOG)"
    c puppetdb ssl-setup >>"$LOG" 2>&1 || fail "puppetdb ssl-setup failed ($LOG)"
    # PQL over plain HTTP for the tests, on the server's address too (it is
    # reachable from this host only).
    c sed -i -e '/^host *=/d' -e 's/^\[jetty\]$/&\nhost = 0.0.0.0/' /etc/puppetdb/conf.d/jetty.ini
    c grep -q '^host = 0.0.0.0' /etc/puppetdb/conf.d/jetty.ini || fail "jetty.ini: no [jetty] section"
    c systemctl enable puppetserver puppetdb >>"$LOG" 2>&1 || fail "systemctl enable failed"
}

# The base: debootstrap minbase + systemd, updated, every package
# downloaded (not installed). Kept apart (stamped) so that a build that
# fails later starts again from here, offline.
base() {
    local new=$CACHE/base.new mirror security
    [ "$(cat "$CACHE/base/.redis-snmp-puppet-stamp" 2>/dev/null)" = "$STAMP" ] && return 0
    tools debootstrap
    mirror=${MIRROR:-$(mirrors | grep -v security | head -n 1)}
    [ -n "$mirror" ] || fail "no Debian mirror in the host's apt sources (set MIRROR)"
    security=$(mirrors | grep security | head -n 1)
    security=${security:-${mirror%/debian}/debian-security}
    say "debootstrap $SUITE from $mirror"
    rm -rf "$new"
    env "${DEBOOTSTRAP_ENV[@]}" "$DEBOOTSTRAP" --variant=minbase --include=systemd,systemd-sysv,dbus \
        --keyring=/usr/share/keyrings/debian-archive-keyring.gpg "$SUITE" "$new" "$mirror" >>"$LOG" 2>&1 ||
        fail "debootstrap failed ($LOG)"
    printf 'deb %s %s main\ndeb %s %s-updates main\ndeb %s %s-security main\n' \
        "$mirror" "$SUITE" "$mirror" "$SUITE" "$security" "$SUITE" >"$new/etc/apt/sources.list"
    printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s puppet\n::1\tlocalhost ip6-localhost ip6-loopback\n' \
        "$SERVER_NAME" >"$new/etc/hosts"
    echo "$SERVER_NAME" >"$new/etc/hostname"
    : >"$new/etc/machine-id"
    # Not booted, the host's network: the updates and every package, downloaded.
    say "downloading the packages"
    (nspawn_exec -D "$new" --resolv-conf=replace-host --timezone=off --link-journal=no \
        --setenv=DEBIAN_FRONTEND=noninteractive -- /bin/sh -ec "
            apt-get update -q
            apt-get -y -q dist-upgrade
            apt-get -y -q install --download-only $PACKAGES") >>"$LOG" 2>&1 ||
        fail "apt-get in the image failed ($LOG)"
    rm -f "$new/etc/resolv.conf"
    echo "$STAMP" >"$new/.redis-snmp-puppet-stamp"
    rm -rf "$CACHE/base"
    mv "$new" "$CACHE/base"
}

build() {
    local new=$CACHE/image.new t0 s
    t0=$(now)
    say "building the image (once; several minutes)"
    tools
    cgroups_make
    base
    rm -rf "$new"
    cp -a --reflink=auto "$CACHE/base" "$new" || fail "copying the base"
    # Booted, with no network: postgresql runs before puppetdb's postinst
    # makes its database (dbconfig-common), as on a real machine.
    say "installing in the booted image"
    boot "$new" "$RUN/build-console.log" --private-network
    s=$(wait_running 120) || fail "the image did not boot (state $s; $RUN/build-console.log)"
    c env DEBIAN_FRONTEND=noninteractive apt-get -y -q install --no-download puppetserver postgresql curl ca-certificates >>"$LOG" 2>&1 ||
        fail "installing puppetserver and postgresql failed ($LOG)"
    c systemctl is-active --quiet postgresql || c systemctl start postgresql >>"$LOG" 2>&1 ||
        fail "postgresql does not start ($LOG)"
    c env DEBIAN_FRONTEND=noninteractive apt-get -y -q install --no-download puppetdb puppet-terminus-puppetdb >>"$LOG" 2>&1 ||
        fail "installing puppetdb failed ($LOG)"
    c test -s /etc/puppetdb/conf.d/database.ini || fail "puppetdb's postinst made no database.ini ($LOG)"
    configure
    # One start here: PuppetDB's schema migrations are done once, and the
    # image is known to serve before it is stamped.
    say "first start of both servers (checks the image)"
    c systemctl start puppetserver puppetdb >>"$LOG" 2>&1 || fail "first start of puppetserver/puppetdb failed ($LOG)"
    c curl -sf --cacert /etc/puppet/puppetserver/ca/ca_crt.pem "https://localhost:8140/status/v1/simple" >>"$LOG" 2>&1 ||
        fail "puppetserver does not answer after its first start ($LOG)"
    c apt-get clean
    poweroff "$NSPAWN_PID" "$CPID"
    NSPAWN_PID= CPID=
    state_set nspawn_pid= leader_pid=
    cgroups_remove
    : >"$new/etc/machine-id"
    echo "$STAMP" >"$new/.redis-snmp-puppet-stamp"
    rm -rf "$IMAGE" "$CACHE/base"
    mv "$new" "$IMAGE"
    say "image built in $(since "$t0") s: $(du -sh "$IMAGE" | cut -f1)"
}

image_ok() { [ "$(cat "$IMAGE/.redis-snmp-puppet-stamp" 2>/dev/null)" = "$STAMP" ]; }

# ------------------------------------------------------------------ network
netns_make() {
    # The range must be free on this host: no address or route in it.
    if [ -n "$(ip -4 -o addr show to 10.233.47.0/24)" ] || [ -n "$(ip -4 route show to match $SERVER_IP | grep -v '^default')" ]; then
        fail "10.233.47.0/24 is already in use on this host ($(ip -4 -o addr show to 10.233.47.0/24 | awk '{ print $2, $4 }'))"
    fi
    ip netns add "$NETNS" || fail "ip netns add $NETNS"
    ip -n "$NETNS" link set lo up
    ip link add "$VETH" type veth peer name eth0 netns "$NETNS" || fail "ip link add $VETH"
    ip addr add "$HOST_IP/24" dev "$VETH" && ip link set "$VETH" up &&
        ip -n "$NETNS" addr add "$SERVER_IP/24" dev eth0 && ip -n "$NETNS" link set eth0 up &&
        ip -n "$NETNS" route add default via "$HOST_IP" || fail "configuring the veth pair"
}
netns_remove() {
    # Deleting the namespace deletes eth0 and with it the pair's host end.
    [ -e "/run/netns/$NETNS" ] && ip netns del "$NETNS"
    ip link show "$VETH" >/dev/null 2>&1 && ip link del "$VETH"
    true
}

# ------------------------------------------------------------------ teardown
teardown() {
    local n l t0
    t0=$(now)
    n=${NSPAWN_PID:-$(state_get nspawn_pid)}
    l=${CPID:-$(state_get leader_pid)}
    poweroff "$n" "$l"
    [ -n "$n" ] && say "powered off in $(since "$t0") s"
    if { [ -n "$n" ] && alive "$n" && [ "$(cat "/proc/$n/comm" 2>/dev/null)" = systemd-nspawn ]; } ||
        is_pid1_of_container "$l"; then
        say "the container (nspawn $n, PID 1 $l) still runs: its copy and cgroups are left"
        return 1
    fi
    state_set nspawn_pid= leader_pid=
    local d t1
    cgroups_remove
    netns_remove
    t1=$(now)
    for d in "$RUN/root" "$CACHE/image.new" "$CACHE/base.new"; do
        [ -d "$d" ] || continue
        if grep -q " $d[/ ]" /proc/self/mountinfo; then
            say "mounts left under $d: not removed"
        else
            rm -rf "$d"
        fi
    done
    # Three stops here took 46-65 s after power-off, the step not caught:
    # the removal of the copy is timed to find out.
    say "torn down in $(since "$t0") s (the copy's removal: $(since "$t1") s)"
}

# ------------------------------------------------------------------ run (background)
serve() {
    local t0 s i ca
    t0=$(now)
    state_set "status=starting" "reason=" "worker_pid=$$" "started=$(date +%s)" \
        "address=$SERVER_IP" "host_address=$HOST_IP" "server_name=$SERVER_NAME" "port=8140" \
        "puppetdb=http://$SERVER_IP:8080" "puppetdb_https=https://$SERVER_IP:8081" \
        "ca=$RUN/ca.pem" "environments=$RUN/environments" "netns=$NETNS" "log=$RUN/console.log"
    exec 9>"$CACHE/lock"
    flock -x 9
    if image_ok; then
        state_set image=cached
    else
        state_set image=built
        build
    fi
    tools
    cgroups_make
    rm -rf "$RUN/root"
    cp -a --reflink=auto "$IMAGE" "$RUN/root" || fail "copying the image"
    flock -u 9
    cp "$RUN/root/etc/puppet/puppetserver/ca/ca_crt.pem" "$RUN/ca.pem" || fail "no CA in the image"
    # The environments: production (the Debian default's) and one a test makes.
    rm -rf "$RUN/environments"
    mkdir -p "$RUN/environments/production/manifests"
    printf "node default {\n  notify { \"hello \${trusted['certname']} role=\${trusted['extensions']['pp_role']}\": }\n}\n" \
        >"$RUN/environments/production/manifests/site.pp"
    chmod -R a+rX "$RUN/environments"
    netns_make
    boot "$RUN/root" "$RUN/console.log" --network-namespace-path="/run/netns/$NETNS" \
        --bind="$RUN/environments:/etc/puppet/code/environments"
    say "booted (nspawn $NSPAWN_PID); waiting for puppetserver and PuppetDB"
    # Both units are enabled: the system is running once puppetserver's
    # ExecStartPost saw it ready. Then ask both from this host.
    s=$(wait_running "$READY_TIMEOUT") || alive "$NSPAWN_PID" ||
        fail "the container stopped while booting (state $s; $RUN/console.log)"
    [ "$s" = running ] || [ "$s" = degraded ] || fail "the container is not running after ${READY_TIMEOUT} s (state $s; failed units: $(c systemctl --failed --no-legend --plain 2>/dev/null | awk '{ print $1 }' | tr '\n' ' '))"
    if [ "$s" = degraded ]; then
        # Seen once in four starts on a loaded machine: puppetserver's JVM
        # exited while starting. Its log is kept, and the failed units are
        # started once more.
        local failed
        failed=$(c systemctl --failed --no-legend --plain | awk '{ print $1 }' | tr '\n' ' ')
        {
            echo "units failed at boot: $failed"
            c journalctl --no-pager -n 60 -u puppetserver -u puppetdb
            c tail -n 60 /var/log/puppetserver/puppetserver.log
        } >"$RUN/failure.log" 2>&1
        say "units failed at boot ($failed; $RUN/failure.log): starting them again"
        state_set "restarted=$failed"
        # shellcheck disable=SC2086
        c systemctl restart $failed || fail "$failed failed at boot and again ($RUN/failure.log)"
    fi
    for i in $(seq 1 120); do
        curl -sf --max-time 5 --cacert "$RUN/ca.pem" "https://$SERVER_IP:8140/status/v1/simple" 2>/dev/null | grep -q running &&
            curl -sf --max-time 5 "http://$SERVER_IP:8080/pdb/meta/v1/version" >/dev/null 2>&1 && break
        sleep 1
    done
    [ "$i" -lt 120 ] || fail "puppetserver or PuppetDB does not answer on $SERVER_IP (state $s)"
    state_set status=ready "ready_seconds=$(since "$t0")" worker_pid=
    say "ready in $(since "$t0") s: https://$SERVER_IP:8140, PQL http://$SERVER_IP:8080"
}

# ------------------------------------------------------------------ commands
cmd_start() {
    local st w
    st=$(state_get status)
    w=$(state_get worker_pid)
    if [ "$st" = ready ] && is_pid1_of_container "$(state_get leader_pid)"; then
        say "already running: $(state_get address)"
        return 0
    fi
    if [ "$st" = starting ] && [ -n "$w" ] && alive "$w"; then
        say "already starting (worker $w)"
        return 0
    fi
    teardown >/dev/null 2>&1
    mkdir -p "$RUN"
    rm -f "$STATE"
    : >"$LOG"
    if [ "$(id -u)" != 0 ]; then
        state_set status=failed "reason=not root: the container and its network namespace need root"
        say "not root: not started"
        return 1
    fi
    state_set status=starting
    # A session of its own, niced: the JVMs start while cargo builds.
    setsid nice -n 10 "$0" _serve </dev/null >>"$RUN/start.log" 2>&1 &
    # setsid and nice exec: $! is the worker, the leader of its session.
    state_set "worker_pid=$!"
    say "starting in the background (state: $STATE, log: $RUN/start.log)"
}

cmd_status() {
    local wait=${1:-0} deadline st
    deadline=$(($(date +%s) + wait))
    while :; do
        st=$(state_get status)
        [ "$st" != starting ] && break
        [ "$(date +%s)" -ge "$deadline" ] && break
        sleep 2
    done
    if [ -r "$STATE" ]; then cat "$STATE"; else echo "status=stopped"; fi
    case $st in ready) return 0 ;; starting) return 2 ;; *) return 1 ;; esac
}

cmd_stop() {
    local w
    w=$(state_get worker_pid)
    # A start still under way: its session (setsid made it the leader).
    if [ -n "$w" ] && alive "$w" && [ "$(ps -o sid= -p "$w" | tr -d ' ')" = "$w" ]; then
        kill -TERM -- "-$w" 2>/dev/null
        # It tears down what it made (its trap), then exits.
        for _ in $(seq 1 300); do alive "$w" || break; sleep 0.1; done
    fi
    [ -r "$STATE" ] || { say "not running"; return 0; }
    teardown || return 1
    state_set status=stopped "reason=stopped by scripts/puppet-server.sh stop" worker_pid=
    say "stopped"
}

case ${1:-} in
start) cmd_start ;;
status) cmd_status "${2:-0}" ;;
stop) cmd_stop ;;
build)
    [ "$(id -u)" = 0 ] || { say "must run as root"; exit 1; }
    mkdir -p "$RUN"
    exec 9>"$CACHE/lock"
    flock -x 9
    if image_ok; then say "image cached: $IMAGE"; else build; fi
    ;;
_serve)
    trap 'fail "interrupted"' TERM INT
    serve
    ;;
*)
    sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 2
    ;;
esac
