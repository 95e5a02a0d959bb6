//! Tests of the test harness itself (tests/support, the `testkit` crate), against the real
//! servers, without the agent: if these fail, the end-to-end tests cannot be
//! trusted either.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::process::Command;
use std::time::{Duration, Instant};
use testkit::*;

fn assert_loopback_only(what: &str, pid: u32, expect: &[(&str, u16)]) {
    let socks = bound_sockets(pid);
    for (proto, addr) in &socks {
        assert!(
            addr.ip().is_loopback(),
            "{what} (pid {pid}) has {proto} {addr} bound, not on loopback: {socks:?}"
        );
    }
    for (proto, port) in expect {
        assert!(
            socks.iter().any(|(p, a)| p == proto && a.port() == *port),
            "{what} (pid {pid}) does not have {proto} port {port} bound: {socks:?}"
        );
    }
}

#[test]
fn snmpd_serves_the_native_baseline_and_the_object_after_our_subtree() {
    let snmpd = Snmpd::start();
    let snmp = snmpd.numeric();

    // Each native scalar by GET.
    for n in 1..=BASELINE_COUNT {
        let v = snmp.get_one(&format!("{BASELINE_ROOT}.{n}.0"));
        assert_eq!(v.ty, "Gauge32", "{v}");
        assert_eq!(v.u64(), u64::from(baseline_value(n)), "{v}");
    }
    let after = snmp.get_one(AFTER_OID);
    assert_eq!(after.to_string(), format!("{AFTER_OID} = INTEGER: 42"));

    // A walk of the enterprise shows exactly these, in order, and nothing
    // of ours (no agent is running).
    for out in [snmp.walk(ENTERPRISE), snmp.bulkwalk(ENTERPRISE)] {
        assert!(out.success() && out.stderr.is_empty(), "{out}");
        let vars = out.vars();
        let mut expected: Vec<String> = (1..=BASELINE_COUNT)
            .map(|n| format!("{BASELINE_ROOT}.{n}.0 = Gauge32: {}", baseline_value(n)))
            .collect();
        expected.push(format!("{AFTER_OID} = INTEGER: {AFTER_VALUE}"));
        let got: Vec<String> = vars.iter().map(|v| v.to_string()).collect();
        assert_eq!(got, expected, "{out}");
    }

    // Nothing is registered at our root yet.
    let ours = snmp.get_one(&legacy_oid(1));
    assert!(ours.is_no_such_object(), "{ours}");

    // The log is clean: no MIB noise, no config errors.
    let log = snmpd.log();
    assert!(log.contains("NET-SNMP version"), "{log}");
    for bad in ["Error", "Cannot find module", "unknown", "Warning"] {
        assert!(!log.contains(bad), "snmpd log contains {bad:?}:\n{log}");
    }
}

#[test]
fn snmpd_keeps_to_loopback_and_its_temp_dir() {
    let mut snmpd = Snmpd::start();
    let pid = snmpd.pid();
    assert_loopback_only("snmpd", pid, &[("udp", snmpd.udp_port())]);
    // No SMUX listener on 199 (Debian's default) or anything else on TCP.
    let tcp: Vec<_> = bound_sockets(pid)
        .into_iter()
        .filter(|(p, _)| p == "tcp")
        .collect();
    assert!(tcp.is_empty(), "unix AgentX snmpd listens on TCP: {tcp:?}");

    let sock = snmpd.agentx_socket().unwrap();
    assert!(sock.starts_with(snmpd.dir()), "{}", sock.display());
    assert_eq!(snmpd.agentx_address(), format!("unix:{}", sock.display()));
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let meta = std::fs::metadata(&sock).unwrap();
    assert!(meta.file_type().is_socket());
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let dir_meta = std::fs::metadata(sock.parent().unwrap()).unwrap();
    assert_eq!(dir_meta.permissions().mode() & 0o777, 0o700);

    // Persistent state goes to the temp dir (written on shutdown).
    snmpd.stop();
    assert!(
        snmpd.dir().join("persist").join("snmpd.conf").is_file(),
        "no persistent snmpd.conf in {}",
        snmpd.dir().display()
    );
    // snmpd removes its socket on SIGTERM.
    assert!(!sock.exists(), "socket left behind after SIGTERM");
    assert!(snmpd.log().contains("shutting down"), "{}", snmpd.log());
}

#[test]
fn snmpd_restart_keeps_port_and_socket_path() {
    let mut snmpd = Snmpd::start();
    let port = snmpd.udp_port();
    let addr = snmpd.agentx_address();
    let old_pid = snmpd.pid();

    snmpd.stop();
    assert!(
        !pid_alive(old_pid),
        "snmpd {old_pid} still alive after stop"
    );
    let down = snmpd
        .numeric()
        .timeout(Duration::from_millis(300))
        .get(&[SYS_UPTIME]);
    assert!(!down.success(), "a stopped snmpd answered: {down}");
    assert!(down.combined().contains("Timeout"), "{down}");

    snmpd.start_again();
    assert_eq!(snmpd.udp_port(), port);
    assert_eq!(snmpd.agentx_address(), addr);
    assert_ne!(snmpd.pid(), old_pid);
    assert!(snmpd.agentx_socket().unwrap().exists());
    assert!(snmpd.ready_at().elapsed() < Duration::from_secs(5));
    let v = snmpd.numeric().get_one(AFTER_OID);
    assert_eq!(v.u64(), u64::from(AFTER_VALUE), "{v}");

    // restart() in one step, too.
    let pid = snmpd.pid();
    snmpd.restart();
    assert_ne!(snmpd.pid(), pid);
    assert_eq!(snmpd.numeric().get_one(AFTER_OID).u64(), 42);
}

#[test]
fn snmpd_with_tcp_agentx_listens_on_loopback() {
    let snmpd = Snmpd::start_tcp();
    let addr = snmpd.agentx_address();
    let port: u16 = addr
        .strip_prefix("tcp:127.0.0.1:")
        .unwrap_or_else(|| panic!("unexpected AgentX address {addr}"))
        .parse()
        .unwrap();
    assert!(snmpd.agentx_socket().is_none());
    assert_loopback_only(
        "snmpd",
        snmpd.pid(),
        &[("udp", snmpd.udp_port()), ("tcp", port)],
    );
    assert_eq!(snmpd.numeric().get_one(AFTER_OID).u64(), 42);
}

#[test]
fn snmpset_with_the_private_community_reaches_the_agent() {
    let snmpd = Snmpd::start();
    // rwcommunity: the SET reaches the object, which refuses it.
    let out = snmpd
        .numeric()
        .community("private")
        .set(AFTER_OID, "i", "5");
    assert!(!out.success(), "{out}");
    assert!(out.combined().contains("notWritable"), "{out}");
    // rocommunity: refused before that, by access control.
    let out = snmpd.numeric().set(AFTER_OID, "i", "5");
    assert!(!out.success(), "{out}");
    assert!(out.combined().contains("noAccess"), "{out}");
    assert!(!out.combined().contains("notWritable"), "{out}");
    // Unchanged.
    assert_eq!(snmpd.numeric().get_one(AFTER_OID).u64(), 42);
}

#[test]
fn named_client_loads_the_base_mibs_without_warnings() {
    let snmpd = Snmpd::start();
    let out = snmpd.client().get(&["SNMPv2-MIB::sysUpTime.0"]);
    assert!(out.success(), "{out}");
    // stderr would carry any MIB parse warning, ours included.
    assert!(out.stderr.is_empty(), "{out}");
    let v = &out.vars()[0];
    assert_eq!(v.name, "SNMPv2-MIB::sysUpTime.0", "{out}");
    assert_eq!(v.ty, "Timeticks", "{out}");
    assert!(mib_path().contains(&base_mibs().display().to_string()));
    assert!(base_mibs().join("SNMPv2-TC.txt").is_file());
}

#[test]
fn redis_start_info_stop_restart_on_the_same_port() {
    let mut redis = Redis::start();
    let port = redis.port();
    let pid = redis.pid();
    assert_loopback_only("redis-server", pid, &[("tcp", port)]);

    let info = redis.info();
    assert!(info.contains("\r\n"), "INFO should come as Redis sends it");
    let info = Info::parse(&info);
    assert!(info.get("redis_version").is_some());
    assert_eq!(info.u64("tcp_port"), u64::from(port));
    assert_eq!(info.u64("process_id"), u64::from(pid));
    assert_eq!(info.u64("aof_enabled"), 0);

    assert_eq!(redis.cli(&["SET", "k", "v"]), "OK");
    assert_eq!(redis.cli(&["GET", "k"]), "v");
    assert_eq!(redis.info_map().u64("rdb_changes_since_last_save"), 1);
    assert_eq!(redis.info_map().u64("keyspace_hits"), 1);

    redis.stop();
    assert!(!pid_alive(pid), "redis {pid} still alive after stop");
    assert!(redis.command(&["PING"]).is_err());

    redis.start_again();
    assert_eq!(redis.port(), port);
    assert_ne!(redis.pid(), pid);
    let info = redis.info_map();
    assert_eq!(info.u64("tcp_port"), u64::from(port));
    assert!(info.u64("uptime_in_seconds") <= 2);
    // No persistence: the key is gone, and no dump was written.
    assert_eq!(redis.cli(&["DBSIZE"]), "0");
    assert!(!redis.dir().join("dump.rdb").exists());

    let pid = redis.pid();
    redis.restart();
    assert_ne!(redis.pid(), pid);
    assert_eq!(redis.cli(&["PING"]), "PONG");
}

#[test]
fn redis_with_a_password() {
    let redis = Redis::start_with(&["requirepass harness-pw"]);
    assert_eq!(redis.password(), Some("harness-pw"));
    // info()/cli() authenticate…
    assert!(redis.info_map().get("redis_version").is_some());
    assert_eq!(redis.cli(&["SET", "a", "1"]), "OK");
    // …and the server really requires it.
    let out = Command::new("redis-cli")
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &redis.port().to_string(),
            "GET",
            "a",
        ])
        .env_remove("REDISCLI_AUTH")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("NOAUTH"),
        "{out:?}"
    );
}

#[test]
fn redis_background_clients_show_in_info_and_go_with_their_guard() {
    let redis = Redis::start();
    let sub = redis.spawn_cli(&["SUBSCRIBE", "ch1", "ch2"]);
    let blocked = redis.spawn_cli(&["BLPOP", "nolist", "0"]);
    assert!(
        wait_until(Duration::from_secs(5), || {
            let i = redis.info_map();
            i.u64("pubsub_channels") == 2 && i.u64("blocked_clients") == 1
        }),
        "{}",
        redis.info()
    );
    drop(sub);
    drop(blocked);
    assert!(wait_until(Duration::from_secs(5), || {
        let i = redis.info_map();
        i.u64("pubsub_channels") == 0 && i.u64("blocked_clients") == 0
    }));
}

#[test]
fn two_redis_and_two_snmpd_run_side_by_side() {
    let (mut r1, r2) = std::thread::scope(|s| {
        let a = s.spawn(Redis::start);
        let b = s.spawn(Redis::start);
        (a.join().unwrap(), b.join().unwrap())
    });
    let (mut s1, s2) = std::thread::scope(|s| {
        let a = s.spawn(Snmpd::start);
        let b = s.spawn(Snmpd::start);
        (a.join().unwrap(), b.join().unwrap())
    });
    let ports = [r1.port(), r2.port(), s1.udp_port(), s2.udp_port()];
    let mut uniq = ports.to_vec();
    uniq.sort();
    uniq.dedup();
    assert_eq!(uniq.len(), 4, "ports collide: {ports:?}");
    assert_ne!(s1.agentx_address(), s2.agentx_address());

    r1.cli(&["SET", "only-in", "r1"]);
    assert_eq!(r2.cli(&["EXISTS", "only-in"]), "0");
    assert_eq!(r1.cli(&["EXISTS", "only-in"]), "1");

    // Stopping one of each leaves the other serving.
    r1.stop();
    s1.stop();
    assert_eq!(r2.cli(&["PING"]), "PONG");
    assert_eq!(s2.numeric().get_one(AFTER_OID).u64(), 42);
    let quick = Duration::from_millis(300);
    assert!(!s1.numeric().timeout(quick).get(&[SYS_UPTIME]).success());
}

#[test]
fn dropping_the_guards_kills_the_processes() {
    let redis = Redis::start();
    let snmpd = Snmpd::start();
    let (rpid, spid, rport, sport) = (redis.pid(), snmpd.pid(), redis.port(), snmpd.udp_port());
    let sock = snmpd.agentx_socket().unwrap();
    let dirs = [redis.dir().to_path_buf(), snmpd.dir().to_path_buf()];
    assert!(pid_alive(rpid) && pid_alive(spid));
    drop(redis);
    drop(snmpd);
    assert!(!pid_alive(rpid), "redis-server {rpid} survived its guard");
    assert!(!pid_alive(spid), "snmpd {spid} survived its guard");
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", rport)).is_err(),
        "something still answers on redis's port"
    );
    let probe = SnmpClient::new(sport)
        .numeric()
        .timeout(Duration::from_millis(300));
    assert!(!probe.get(&[SYS_UPTIME]).success());
    assert!(!sock.exists());
    for d in dirs {
        assert!(!d.exists(), "{} not removed", d.display());
    }

    // A plain process guard.
    let guard = Proc::spawn(Command::new("sleep").arg("60"), "sleep");
    let pid = guard.pid();
    assert!(pid_alive(pid));
    drop(guard);
    assert!(!pid_alive(pid));
}

#[test]
fn the_guards_kill_their_processes_when_a_test_panics() {
    let (tx, rx) = std::sync::mpsc::channel();
    let result = std::thread::spawn(move || {
        let redis = Redis::start();
        let snmpd = Snmpd::start();
        tx.send((redis.pid(), snmpd.pid())).unwrap();
        panic!("a failing test");
    })
    .join();
    assert!(result.is_err());
    let (rpid, spid) = rx.recv().unwrap();
    assert!(!pid_alive(rpid), "redis-server {rpid} survived a panic");
    assert!(!pid_alive(spid), "snmpd {spid} survived a panic");
}

#[test]
fn free_port_reserves_distinct_ports_across_processes() {
    let ports: Vec<u16> = (0..5).map(|_| free_port()).collect();
    let mut uniq = ports.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(uniq.len(), ports.len(), "{ports:?}");
    for &p in &ports {
        assert!((20000..32000).contains(&p), "{p}");
        // Free for both protocols…
        std::net::TcpListener::bind(("127.0.0.1", p)).unwrap();
        std::net::UdpSocket::bind(("127.0.0.1", p)).unwrap();
        // …and reserved: neither another open file of ours…
        assert!(!try_lock_port(p), "port {p} is not locked");
        // …nor another process can take the lock.
        let other = Command::new("flock")
            .args(["-n"])
            .arg(port_lock_path(p))
            .arg("true")
            .status()
            .expect("running flock(1) from util-linux");
        assert!(!other.success(), "another process could lock port {p}");
    }
    // A port nobody holds can be locked by another process.
    let other = Command::new("flock")
        .arg("-n")
        .arg(port_lock_path(19999))
        .arg("true")
        .status()
        .unwrap();
    assert!(other.success());
}

#[test]
fn wait_until_polls_until_true_or_timeout() {
    let start = Instant::now();
    assert!(!wait_until(Duration::from_millis(200), || false));
    assert!(start.elapsed() >= Duration::from_millis(200));
    let mut n = 0;
    assert!(wait_until(Duration::from_secs(5), || {
        n += 1;
        n == 3
    }));
    assert_eq!(n, 3);
}

#[test]
fn parses_net_snmp_output() {
    let text = "\
REDIS-SERVER-MIB::redisConnectedClients.0 = Gauge32: 3 clients
REDIS-SERVER-MIB::redisUsedMemory.0 = Counter64: 1032712
REDIS-SERVER-MIB::redisInstanceUp.1 = INTEGER: up(1)
REDIS-SERVER-MIB::redisInstanceName.1 = STRING: \"127.0.0.1:6379\"
REDIS-SERVER-MIB::redisInstanceLastError.1 = STRING: 
.1.3.6.1.4.1.20267.499.1.1.0 = \"\"
.1.3.6.1.2.1.1.3.0 = Timeticks: (100) 0:00:01.00
.1.3.6.1.4.1.20267.400.1.1.0 = No Such Instance currently exists at this OID
.1.3.6.1.4.1.20267.400.9.0 = No Such Object available on this agent at this OID
.1.3.6.1.4.1.20267.401 = Hex-STRING: 00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F
10 11
.1.3.6.1.4.1.20267.500.1.0 = INTEGER: 42
";
    let vars = parse_vars(text);
    assert_eq!(vars.len(), 11);
    assert_eq!(vars[0].name, "REDIS-SERVER-MIB::redisConnectedClients.0");
    assert_eq!((vars[0].ty.as_str(), vars[0].u64()), ("Gauge32", 3));
    assert_eq!((vars[1].ty.as_str(), vars[1].u64()), ("Counter64", 1032712));
    assert_eq!((vars[2].value.as_str(), vars[2].u64()), ("up(1)", 1));
    assert_eq!(vars[3].text(), "127.0.0.1:6379");
    assert_eq!(
        (vars[4].ty.as_str(), vars[4].text()),
        ("STRING", String::new())
    );
    assert_eq!((vars[5].ty.as_str(), vars[5].text()), ("", String::new()));
    assert_eq!((vars[6].ty.as_str(), vars[6].u64()), ("Timeticks", 100));
    assert!(vars[7].is_no_such_instance() && vars[7].is_exception());
    assert!(vars[8].is_no_such_object() && vars[8].is_exception());
    assert_eq!(vars[9].ty, "Hex-STRING");
    assert!(vars[9].value.ends_with("0F\n10 11"), "{:?}", vars[9].value);
    assert_eq!(
        vars[10].to_string(),
        ".1.3.6.1.4.1.20267.500.1.0 = INTEGER: 42"
    );

    use std::cmp::Ordering::*;
    assert_eq!(
        oid_cmp(
            ".1.3.6.1.4.1.20267.400.1.9.0",
            ".1.3.6.1.4.1.20267.400.1.10.0"
        ),
        Less
    );
    assert_eq!(
        oid_cmp(".1.3.6.1.4.1.20267.400", ".1.3.6.1.4.1.20267.400.1"),
        Less
    );
    assert_eq!(oid_cmp(".1.3.6.1", ".1.3.6.1"), Equal);
    assert_eq!(legacy_oid(17), ".1.3.6.1.4.1.20267.400.1.17.0");
    assert_eq!(instance_oid(4, 1), ".1.3.6.1.4.1.20267.400.3.1.1.4.1");
}
