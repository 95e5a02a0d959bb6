//! Several hosts on one machine (`testkit::netns`): network namespaces on a
//! private bridge, each host with its own address, and snmpd, snmptrapd and
//! the net-snmp tools running inside them. What a user would see:
//! - web1 reaches mgr at mgr's address, and mgr sees web1's address as the
//!   source; the test's own namespace gains no interface, address or route,
//!   and the namespaces are gone afterwards, also after a panic;
//! - snmpd on web1, configured with the documented access lines
//!   (`debian/examples/snmpd-access.conf`: an SNMPv3 user with SHA-256 and
//!   AES, `trapsess -Ci -v3`), sends informs to snmptrapd on mgr, which
//!   logs them with web1's address as their source: snmpd's own coldStart,
//!   and the agent's redisInstanceDown (the agent in the root namespace,
//!   over snmpd's AgentX unix socket);
//! - mgr's snmptrapd, accepting only that user with privacy, logs nothing
//!   of a v2c trap from web1, nor of v3 traps or informs with wrong keys,
//!   although each reached it;
//! - snmptrapd stopped and started again binds the same address and port,
//!   once no process holds its socket any more (a handler's detached child
//!   does, until it ends), and logs the next inform of the snmpd that kept
//!   running.
//!
//! Each test skips, saying so on stderr, where namespaces cannot be made
//! (not root, no `ip`).

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::net::{IpAddr, UdpSocket};
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use testkit::netns::{self, Network};
use testkit::*;

/// SNMPv2-MIB::coldStart, the trap the tools send here.
const COLD_START: &str = ".1.3.6.1.6.3.1.1.5.1";
/// SNMPv2-MIB::sysLocation.0, a varbind carrying a marker text.
const SYS_LOCATION: &str = ".1.3.6.1.2.1.1.6.0";
/// The engine ID of the SNMPv3 trap senders (snmptrap -e).
const SENDER_ENGINE: &str = "0x80001f8804726564697374657374";

/// The test's own namespace as `ip` shows it: interfaces, addresses and
/// routes (lifetimes and expiry times left out: they count down).
fn root_namespace() -> String {
    let mut text = String::new();
    for args in [
        &["-br", "link"][..],
        &["-br", "addr"],
        &["-4", "route", "show", "table", "all"],
        &["-6", "route", "show", "table", "all"],
    ] {
        let out = Command::new("ip").args(args).output().expect("ip");
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let mut words = line.split_whitespace();
            let mut kept = Vec::new();
            while let Some(w) = words.next() {
                if w == "expires" {
                    words.next();
                } else {
                    kept.push(w);
                }
            }
            text.push_str(&kept.join(" "));
            text.push('\n');
        }
    }
    text
}

/// Whether the namespace `name` exists.
fn netns_exists(name: &str) -> bool {
    Path::new("/run/netns").join(name).exists()
}

/// The address a notification line says it came from.
fn source_ip(line: &str) -> IpAddr {
    notification_source(line)
        .unwrap_or_else(|| panic!("no UDP source in {line}"))
        .ip()
}

#[test]
fn hosts_reach_each_other_by_address_and_leave_the_root_namespace_alone() {
    if let Some(why) = netns::unavailable() {
        eprintln!("SKIP hosts_reach_each_other_by_address_and_leave_the_root_namespace_alone: no network namespaces here: {why}");
        return;
    }
    let before = root_namespace();
    let net = Network::new(&["web1", "lb1", "mgr"]);
    let (web1, lb1, mgr) = (net.host("web1"), net.host("lb1"), net.host("mgr"));
    assert_eq!(
        [web1.address(), lb1.address(), mgr.address()].map(|a| a.to_string()),
        ["10.77.0.1", "10.77.0.2", "10.77.0.3"]
    );
    for host in net.hosts() {
        host.check().unwrap();
    }

    // What a program in web1 sees: its loopback and its address, nothing
    // else (`eth0@ifN`: N is its peer's index on the switch).
    let out = web1
        .command("ip")
        .args(["-br", "-4", "addr"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let seen: Vec<Vec<&str>> = text
        .lines()
        .map(|l| {
            l.split_whitespace()
                .map(|w| w.split('@').next().unwrap())
                .collect()
        })
        .collect();
    assert_eq!(
        seen,
        [
            ["lo", "UNKNOWN", "127.0.0.1/8"],
            ["eth0", "UP", "10.77.0.1/24"]
        ],
        "{text}"
    );

    // web1 and lb1 each send mgr a datagram at its address: mgr sees who.
    let inbox = mgr
        .run_inside(|| UdpSocket::bind((mgr.address(), 0)))
        .unwrap();
    inbox
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    for host in [web1, lb1] {
        let socket = host.run_inside(|| UdpSocket::bind("0.0.0.0:0")).unwrap();
        socket
            .send_to(host.name().as_bytes(), inbox.local_addr().unwrap())
            .unwrap();
        let mut buf = [0u8; 64];
        let (n, from) = inbox.recv_from(&mut buf).expect("no datagram reached mgr");
        assert_eq!(&buf[..n], host.name().as_bytes());
        assert_eq!(
            from.ip(),
            IpAddr::V4(host.address()),
            "from {}",
            host.name()
        );
    }
    // mgr's socket is in mgr only: nothing of it in the root namespace.
    let port = inbox.local_addr().unwrap().port();
    assert_eq!(mgr.udp_port_holders(port), [std::process::id()]);
    assert!(web1.udp_port_holders(port).is_empty());

    assert_eq!(root_namespace(), before, "the root namespace changed");
    let made: Vec<String> = net
        .hosts()
        .iter()
        .map(|h| h.netns().to_string())
        .chain([net.switch_netns().to_string()])
        .collect();
    assert!(made.iter().all(|n| netns_exists(n)), "{made:?}");
    drop(inbox);
    drop(net);
    let left: Vec<&String> = made.iter().filter(|n| netns_exists(n)).collect();
    assert!(left.is_empty(), "namespaces left behind: {left:?}");
    assert_eq!(root_namespace(), before, "the root namespace changed");

    // A test that panics leaves nothing behind either. (resume_unwind
    // unwinds as a failed assertion does, without the panic message.)
    let mut made = None;
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let net = Network::new(&["solo"]);
        made = Some(net.host("solo").netns().to_string());
        assert!(netns_exists(made.as_ref().unwrap()));
        std::panic::resume_unwind(Box::new("a deliberate panic"));
    }));
    assert!(result.is_err());
    let made = made.unwrap();
    assert!(!netns_exists(&made), "{made} outlived the panic");
}

#[test]
fn snmpd_on_web1_informs_mgr_over_snmpv3_with_web1s_address() {
    let Some(net) = Network::new_or_skip(
        "snmpd_on_web1_informs_mgr_over_snmpv3_with_web1s_address",
        &["web1", "mgr"],
    ) else {
        return;
    };
    let (web1, mgr) = (net.host("web1"), net.host("mgr"));
    let user = UsmUser::documented();
    let trapd = Snmptrapd::start_in(
        mgr,
        &format!(
            "{}\nauthUser log {} priv",
            user.create_user_line(),
            user.name
        ),
    );
    // web1: the documented access lines, MANAGER being mgr's snmptrapd.
    let mut options = SnmpdOptions::default()
        .in_host(web1)
        .without_default_communities();
    for line in access_example_lines(&trapd.address().to_string()) {
        options = options.config_line(&line);
    }
    let snmpd = Snmpd::start_with(options);
    assert_eq!(
        snmpd.udp_addresses(),
        [
            format!("127.0.0.1:{}", snmpd.udp_port()).parse().unwrap(),
            (web1.address(), snmpd.udp_port()).into()
        ]
    );

    // snmpd's own coldStart, an inform from web1.
    let line = trapd.first("coldStart", Duration::from_secs(10));
    assert_eq!(source_ip(&line), web1.address(), "{line}");

    // The agent stays in the root namespace: AgentX is a socket file.
    let mut redis = Redis::start();
    let dir = tempfile::tempdir().unwrap();
    let _agent = AgentConfig::new(&snmpd)
        .redis("main", &redis.address(), "")
        .start_quiet(dir.path());
    // Read from inside web1 over the community (localhost) …
    let state = instance_oid(4, 1);
    let up = wait_until(Duration::from_secs(10), || {
        snmpd.numeric().get_one(&state).value == "1"
    });
    assert!(up, "redisInstanceState.1 is not up(1) from inside web1");
    // … and from mgr, at web1's address, as the SNMPv3 user.
    let from_mgr = SnmpClient::new(snmpd.udp_port())
        .at(web1.address())
        .inside(mgr)
        .usm(&user)
        .numeric();
    assert_eq!(from_mgr.get_one(&state).value, "1");

    // A notification of the agent's, through snmpd on web1, to mgr.
    redis.stop();
    let line = trapd.first("redisInstanceDown", Duration::from_secs(20));
    assert_eq!(source_ip(&line), web1.address(), "{line}");
    assert!(
        line.contains("redisInstanceName.1 = STRING: main"),
        "{line}"
    );
    assert!(
        trapd
            .log()
            .lines()
            .filter(|l| l.starts_with("TRAP"))
            .all(|l| source_ip(l) == web1.address()),
        "{}",
        trapd.log()
    );
}

#[test]
fn mgr_logs_nothing_without_the_user_and_its_keys() {
    let Some(net) = Network::new_or_skip(
        "mgr_logs_nothing_without_the_user_and_its_keys",
        &["web1", "lb1", "mgr"],
    ) else {
        return;
    };
    let (web1, lb1, mgr) = (net.host("web1"), net.host("lb1"), net.host("mgr"));
    let user = UsmUser::documented();
    // The user for informs (mgr's engine ID) and for the senders' traps.
    let trapd = Snmptrapd::start_in(
        mgr,
        &format!(
            "{}\n{}\nauthUser log {} priv",
            user.create_user_line(),
            user.create_user_line_for_engine(SENDER_ENGINE),
            user.name
        ),
    );
    let to_mgr = SnmpClient::new(trapd.port()).at(mgr.address()).numeric();
    let v3_trap = |from, who: &UsmUser, marker: &str| {
        let out = to_mgr
            .clone()
            .inside(from)
            .usm(who)
            .opt("-e")
            .opt(SENDER_ENGINE)
            .trap(COLD_START, &[SYS_LOCATION, "s", marker]);
        assert!(out.success(), "{out}");
    };
    let wrong_auth = user.with_passphrases("not-the-auth-pass", &user.priv_pass);
    let wrong_priv = user.with_passphrases(&user.auth_pass, "not-the-priv-pass");
    let arrived = mgr.udp_datagrams_received();

    // A v2c trap from web1 (no authCommunity): sent, dropped.
    let out = to_mgr
        .clone()
        .inside(web1)
        .trap(COLD_START, &[SYS_LOCATION, "s", "v2c-from-web1"]);
    assert!(out.success(), "{out}");
    // SNMPv3 traps from lb1 with a wrong key: sent, dropped.
    v3_trap(lb1, &wrong_auth, "v3-wrong-auth-key");
    v3_trap(lb1, &wrong_priv, "v3-wrong-priv-key");
    // An inform with a wrong key: refused, and the sender is told.
    let out = to_mgr
        .clone()
        .inside(web1)
        .usm(&wrong_auth)
        .inform(COLD_START, &[SYS_LOCATION, "s", "v3-inform-wrong-key"]);
    assert!(!out.success(), "{out}");
    assert!(out.combined().contains("Authentication failure"), "{out}");

    // The right keys: the trap from lb1 and an inform from web1 are logged,
    // each with its sender's address. snmptrapd reads its one socket in
    // order, so once these are in the log, the ones before were handled.
    v3_trap(lb1, &user, "v3-trap-right-keys");
    let out = to_mgr
        .clone()
        .inside(web1)
        .usm(&user)
        .inform(COLD_START, &[SYS_LOCATION, "s", "v3-inform-right-keys"]);
    assert!(out.success(), "{out}");
    let line = trapd.first("v3-trap-right-keys", Duration::from_secs(5));
    assert_eq!(source_ip(&line), lb1.address(), "{line}");
    let line = trapd.first("v3-inform-right-keys", Duration::from_secs(5));
    assert_eq!(source_ip(&line), web1.address(), "{line}");

    // Every one reached mgr: four traps, and each inform after the
    // discovery of mgr's engine ID …
    let datagrams = mgr.udp_datagrams_received() - arrived;
    println!("{datagrams} datagrams reached mgr");
    assert!(datagrams >= 8, "only {datagrams} datagrams reached mgr");
    // … and only the right user's were logged.
    let log = trapd.log();
    let markers: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("TRAP"))
        .filter_map(|l| l.rsplit("STRING: ").next())
        .collect();
    assert_eq!(
        markers,
        ["v3-trap-right-keys", "v3-inform-right-keys"],
        "{log}"
    );
    // What snmptrapd says of the others: a wrong authentication key (the
    // trap and the inform), an undecipherable PDU (the wrong privacy key);
    // of the v2c trap, nothing at all.
    let said = |what: &str| log.lines().filter(|l| l.contains(what)).count();
    assert_eq!(said("Authentication failed for snmpmon"), 2, "{log}");
    assert_eq!(said("error parsing ScopedPDU"), 1, "{log}");
}

/// A process the test made (indirectly) and stops by PID: SIGKILL, then
/// waits until it is gone (it is not the test's child: no reaping).
struct Stray(u32);

impl Drop for Stray {
    fn drop(&mut self) {
        unsafe { libc::kill(self.0 as libc::pid_t, libc::SIGKILL) };
        wait_until(Duration::from_secs(5), || !pid_alive(self.0));
    }
}

#[test]
fn snmptrapd_started_again_binds_the_same_address_and_port() {
    let Some(net) = Network::new_or_skip(
        "snmptrapd_started_again_binds_the_same_address_and_port",
        &["web1", "mgr"],
    ) else {
        return;
    };
    let (web1, mgr) = (net.host("web1"), net.host("mgr"));
    let user = UsmUser::documented();
    let dir = tempfile::tempdir().unwrap();
    // A handler that leaves a detached child behind, as a handler that
    // starts a long job in the background does.
    let handler = dir.path().join("handler.sh");
    std::fs::write(&handler, "sleep 60 </dev/null >/dev/null 2>&1 &\n").unwrap();
    let mut trapd = Snmptrapd::start_in(
        mgr,
        &format!(
            "{}\nauthUser log,execute {} priv\ntraphandle default /bin/sh {}",
            user.create_user_line(),
            user.name,
            handler.display()
        ),
    );
    // snmpd on web1 as documented, which also reports requests with a
    // wrong community (authenticationFailure).
    let mut options = SnmpdOptions::default()
        .in_host(web1)
        .without_default_communities()
        .config_line("authtrapenable 1");
    for line in access_example_lines(&trapd.address().to_string()) {
        options = options.config_line(&line);
    }
    let snmpd = Snmpd::start_with(options);
    let address = trapd.address();
    let first = trapd.pid();

    // snmpd's coldStart runs the handler, whose child inherits the socket.
    trapd.first("coldStart", Duration::from_secs(10));
    let mut holders = Vec::new();
    wait_until(Duration::from_secs(5), || {
        holders = trapd.port_holders();
        holders.len() == 2
    });
    assert!(holders.contains(&first), "{holders:?}");
    let child = *holders.iter().find(|p| **p != first).unwrap_or_else(|| {
        panic!("no second holder of udp:{address}: {holders:?}");
    });
    let child = Stray(child);
    assert_eq!(
        std::fs::read_to_string(format!("/proc/{}/comm", child.0)).unwrap(),
        "sleep\n"
    );

    // Stopped, snmptrapd no longer holds the port; the child still does.
    trapd.stop();
    assert!(!pid_alive(first));
    assert_eq!(trapd.port_holders(), [child.0]);
    drop(child);
    assert!(trapd.port_holders().is_empty());

    // Started again: a new process on the same address and port, to which
    // the snmpd that kept running sends its next inform.
    trapd.start_again();
    assert_ne!(trapd.pid(), first);
    assert_eq!(trapd.address(), address);
    assert!(binds_udp(trapd.pid(), address));
    let out = snmpd.numeric().community("wrong").get(&[SYS_UPTIME]);
    assert!(!out.success(), "{out}");
    let line = trapd.first("authenticationFailure", Duration::from_secs(10));
    assert_eq!(source_ip(&line), web1.address(), "{line}");
    assert_eq!(trapd.received("coldStart").len(), 1, "{}", trapd.log());
    // The new handler's child, too, is the test's to stop.
    wait_until(Duration::from_secs(5), || trapd.port_holders().len() == 2);
    for pid in trapd.port_holders() {
        if pid != trapd.pid() {
            drop(Stray(pid));
        }
    }
}
