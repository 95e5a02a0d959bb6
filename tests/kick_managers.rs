//! Two managers, one ledger, across hosts: network namespaces on a
//! private switch, `web1` sending each notification to both managers
//! (`mgr1`, `mgr2`: snmptrapd with the shipped lines, the handler with
//! `[ledger]`), as an agent with two `trapsess` lines does (one SNMPv3
//! inform each, the same sysUpTime in both); the ledger a Redis master
//! with two replicas and three sentinels (`led1` to `led3`), its `kick`
//! user made by the shipped ACL line. Every request is kicked exactly once
//! while both managers are up, while one is dead, and across the ledger's
//! own failover (requests the handlers refuse while no master answers are
//! said in their log; none is run twice).

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};
use testkit::kick::*;
use testkit::ledger::{send_request, LedgerCluster};
use testkit::netns::{Host, Network};
use testkit::wait_until;

const BOTH_UP: u64 = 100;
const ONE_DOWN: u64 = 100;
const FAILOVER: u64 = 100;

fn epoch_ns() -> u128 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// A manager in `host`, its ledger `ledger`'s, its kick command a script
/// that records `HOST ROLE NANOSECONDS` and ends.
fn manager(host: &Host, web1: &Host, ledger: &LedgerCluster, roles: &str) -> HostsManager {
    let settings = format!(
        "window = 1\nmax_parallel = 8\n{roles}{}",
        ledger.section(host.name())
    );
    let manager = HostsManager::start(host, &[web1], &settings);
    let script = manager.site.dir().join("kick.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$1 $2 $(date +%s%N)\" >> {}\n",
            manager.site.dir().join("kicked").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    manager
}

/// Request `n` from web1 to each manager (a short wait for one that is
/// down, as an agent's inform to it times out).
fn send(web1: &Host, to: &[(&HostsManager, bool)], n: u64) {
    let to: Vec<_> = to
        .iter()
        .map(|(m, up)| {
            let wait = if *up { 2000 } else { 200 };
            (m.trapd.address(), Duration::from_millis(wait))
        })
        .collect();
    send_request(web1, &to, n);
}

/// Every kick both managers ran: request number → the times (ns) its
/// command started.
fn kicks(managers: &[&HostsManager]) -> BTreeMap<u64, Vec<u128>> {
    let mut all: BTreeMap<u64, Vec<u128>> = BTreeMap::new();
    for manager in managers {
        let text = std::fs::read_to_string(manager.site.dir().join("kicked")).unwrap_or_default();
        for line in text.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            if let [_, role, at] = words[..] {
                if let (Some(n), Ok(at)) = (role.strip_prefix('r'), at.parse::<u128>()) {
                    all.entry(n.parse().unwrap()).or_default().push(at);
                }
            }
        }
    }
    all
}

fn doubled(kicks: &BTreeMap<u64, Vec<u128>>) -> Vec<u64> {
    kicks
        .iter()
        .filter(|(_, at)| at.len() > 1)
        .map(|(n, _)| *n)
        .collect()
}

/// Whether requests 0 to `upto` are all kicked, waiting a minute at most.
fn all_kicked(managers: &[&HostsManager], upto: u64) -> bool {
    wait_until(Duration::from_secs(120), || {
        let kicked = kicks(managers);
        (0..upto).all(|n| kicked.contains_key(&n))
    })
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[test]
fn two_managers_kick_each_request_once_through_a_managers_loss_and_a_failover() {
    let names = ["web1", "mgr1", "mgr2", "led1", "led2", "led3"];
    let Some(net) = Network::new_or_skip("kick_managers", &names) else {
        return;
    };
    let mut ledger = LedgerCluster::start(&[net.host("led1"), net.host("led2"), net.host("led3")]);
    let web1 = net.host("web1");
    let total = BOTH_UP + ONE_DOWN + FAILOVER;
    let roles: String = (0..total)
        .map(|n| format!("[[role]]\nname = \"r{n}\"\nhosts = [\"t{n}\"]\n"))
        .collect();
    let mgr1 = manager(net.host("mgr1"), web1, &ledger, &roles);
    let mut mgr2 = manager(net.host("mgr2"), web1, &ledger, &roles);
    let mut sent: BTreeMap<u64, u128> = BTreeMap::new();

    // Both up: each request once.
    for n in 0..BOTH_UP {
        sent.insert(n, epoch_ns());
        send(web1, &[(&mgr1, true), (&mgr2, true)], n);
    }
    assert!(
        all_kicked(&[&mgr1, &mgr2], BOTH_UP),
        "missing: {:?}\n{}",
        (0..BOTH_UP)
            .filter(|n| !kicks(&[&mgr1, &mgr2]).contains_key(n))
            .collect::<Vec<_>>(),
        mgr1.site.status()
    );
    // Which manager wins each request is a race: either may take them all.
    println!(
        "both up: {} of {BOTH_UP} kicked by mgr2",
        kicks(&[&mgr2]).len()
    );

    // mgr2 dies (its snmptrapd and every kick it runs); the agent still
    // sends to it, in vain: mgr1 kicks every request.
    mgr2.trapd.stop();
    mgr2.site.stop_kicks();
    for n in BOTH_UP..BOTH_UP + ONE_DOWN {
        sent.insert(n, epoch_ns());
        send(web1, &[(&mgr1, true), (&mgr2, false)], n);
    }
    assert!(
        all_kicked(&[&mgr1, &mgr2], BOTH_UP + ONE_DOWN),
        "{}",
        mgr1.site.status()
    );
    // It comes back and catches up without running anything again.
    mgr2.trapd.start_again();

    // The ledger's master is killed: the handlers refuse while no master
    // answers, then go on with the one the sentinels promote.
    let killed_at = epoch_ns();
    let old = ledger.kill_master();
    let first = BOTH_UP + ONE_DOWN;
    for n in first..total {
        sent.insert(n, epoch_ns());
        send(web1, &[(&mgr1, true), (&mgr2, true)], n);
        std::thread::sleep(Duration::from_millis(100));
    }
    let promoted = wait_until(Duration::from_secs(30), || {
        ledger.master().is_some_and(|m| m != old)
    });
    assert!(promoted, "{}", ledger.sentinel_logs());
    let tail = total - 20;
    let resumed = wait_until(Duration::from_secs(120), || {
        (tail..total).all(|n| kicks(&[&mgr1, &mgr2]).contains_key(&n))
    });
    std::thread::sleep(Duration::from_secs(3));
    let kicked = kicks(&[&mgr1, &mgr2]);
    assert!(
        resumed,
        "after the failover: {:?}\n{}\n{}",
        kicked.keys().filter(|n| **n >= first).collect::<Vec<_>>(),
        mgr1.site.status(),
        ledger.sentinel_logs()
    );
    assert_eq!(
        doubled(&kicked),
        Vec::<u64>::new(),
        "no request kicked twice"
    );
    assert!(
        (0..first).all(|n| kicked.contains_key(&n)),
        "none lost while a master answered"
    );
    let lost: Vec<u64> = (first..total).filter(|n| !kicked.contains_key(n)).collect();
    let resumed_at = kicked
        .iter()
        .filter(|(n, _)| **n >= first)
        .flat_map(|(_, at)| at.iter().copied())
        .filter(|at| *at > killed_at)
        .min()
        .unwrap();
    // What an operator would read: the pause, what was refused in it, and
    // the time from a change to its kick.
    let mut latency: Vec<f64> = kicked
        .iter()
        .filter(|(n, _)| **n < first)
        .map(|(n, at)| (at[0] as f64 - sent[n] as f64) / 1e6)
        .collect();
    latency.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "failover: first kick {:.1} s after the master was killed; {} of {FAILOVER} requests refused in the pause ({lost:?})",
        (resumed_at - killed_at) as f64 / 1e9,
        lost.len()
    );
    println!(
        "inform sent -> kick command started, {} requests: p50 {:.1} ms, p99 {:.1} ms",
        latency.len(),
        percentile(&latency, 0.5),
        percentile(&latency, 0.99)
    );
}
