//! Benchmark: the kick's cost with its ledger in a local directory (one
//! manager) and in a Redis two managers share, across hosts (network
//! namespaces, testkit::netns), the release build.
//!
//! `cargo bench --bench kick_managers` (root, `ip`, redis-server). Host
//! `web1` sends each request (`Notify[kick -> rN]` changed, one role per
//! request so that no window holds one back) as an agent with a
//! `trapsess` line per manager does: an SNMPv3 inform with privacy to
//! each, the same sysUpTime in each. On each manager, snmptrapd runs a
//! baseline traphandle first (it only writes the time and the request),
//! then the kick; the kick command only writes the time it started.
//!
//! - **local**: `mgr1` alone, its ledger in `state_dir`.
//! - **shared**: `mgr1` and `mgr2`, the ledger a Redis master with two
//!   replicas and three sentinels (`led1`..`led3`), found by the
//!   sentinels at each handler run, writes held by a replica (`WAIT 1`)
//!   before a kick starts.
//!
//! For each request: the kick command's start minus the baseline's time
//! on the manager that kicked (what the kick itself costs: the handler,
//! the ledger, the claim, the supervisor), and minus the time the inform
//! was sent. Then the ledger's master is killed while 100 more requests
//! come, one every 100 ms: the pause of the kicks, the requests refused
//! in it, and any kicked twice. `KICK_REQUESTS` sets the requests per mode
//! (default 200).

#[path = "support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime};
use support::stats;
use testkit::kick::KickSite;
use testkit::ledger::{send_request, LedgerCluster};
use testkit::netns::{Host, Network};
use testkit::{wait_until, Snmptrapd};

/// Requests sent while the ledger fails over.
const FAILOVER_REQUESTS: u64 = 100;

fn epoch_ns() -> u128 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

fn executable(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

struct Manager {
    site: KickSite,
    trapd: Snmptrapd,
}

/// A manager in `host`: kick.toml with `requests` roles and `ledger`
/// (a `[ledger]` section, or nothing: `state_dir`), snmptrapd with the
/// baseline handler before the shipped lines.
fn manager(host: &Host, web1: &Host, requests: u64, ledger: &str) -> Manager {
    let site = KickSite::new(|dir| {
        let script = dir.join("probe.sh");
        executable(
            &script,
            &format!(
                "#!/bin/sh\necho \"$2 $(date +%s%N)\" >> {}\n",
                dir.join("kicked").display()
            ),
        );
        let roles: String = (0..requests + FAILOVER_REQUESTS)
            .map(|n| format!("[[role]]\nname = \"r{n}\"\nhosts = [\"t{n}\"]\n"))
            .collect();
        format!(
            "kick_command = [\"{}\", \"{{host}}\", \"{{role}}\"]\nwindow = 1\nmax_parallel = 8\n\
             [addresses]\n\"web1\" = [\"{}\"]\n{roles}{ledger}",
            script.display(),
            web1.address()
        )
    });
    let baseline = site.dir().join("baseline.sh");
    executable(
        &baseline,
        &format!(
            "#!/bin/sh\nt=$(date +%s%N)\nrole=$(grep -o 'kick -> r[0-9]*' | head -n 1)\n\
             echo \"${{role#kick -> }} $t\" >> {}\n",
            site.dir().join("baseline").display()
        ),
    );
    let line = format!(
        "traphandle .1.3.6.1.4.1.20267.401.0.9 {}\n",
        baseline.display()
    );
    let lines = site.snmptrapd_lines();
    let (head, handlers) = lines.split_at(lines.find("traphandle").unwrap());
    let trapd = Snmptrapd::start_in(host, &format!("{head}{line}{handlers}"));
    Manager { site, trapd }
}

/// `rN TIME` lines of `file`: the first time of each request.
fn times(file: &Path) -> BTreeMap<String, u128> {
    let mut all = BTreeMap::new();
    for line in std::fs::read_to_string(file).unwrap_or_default().lines() {
        if let Some((role, at)) = line.split_once(' ') {
            if let Ok(at) = at.trim().parse::<u128>() {
                all.entry(role.to_string()).or_insert(at);
            }
        }
    }
    all
}

fn send(web1: &Host, to: &[&Manager], n: u64) {
    let to: Vec<_> = to
        .iter()
        .map(|m| (m.trapd.address(), Duration::from_secs(2)))
        .collect();
    send_request(web1, &to, n);
}

/// Sends `requests` requests to `managers`; the kicks' own cost and the
/// time from the inform sent, per request; and how many were doubled.
fn measure(
    web1: &Host,
    managers: &[&Manager],
    requests: u64,
) -> (Vec<Duration>, Vec<Duration>, usize) {
    let mut sent = BTreeMap::new();
    for n in 0..requests {
        sent.insert(format!("r{n}"), epoch_ns());
        send(web1, managers, n);
        // One request at a time in the pipe: what is measured is a
        // request's path, not a queue.
        std::thread::sleep(Duration::from_millis(50));
    }
    let all_in = wait_until(Duration::from_secs(60), || {
        let kicked: usize = managers
            .iter()
            .map(|m| times(&m.site.dir().join("kicked")).len())
            .sum();
        kicked as u64 >= requests
    });
    assert!(
        all_in,
        "not every request was kicked:\n{}",
        managers[0].site.status()
    );
    std::thread::sleep(Duration::from_secs(2));
    let (mut own, mut total, mut doubled) = (Vec::new(), Vec::new(), 0);
    let mut seen = BTreeMap::new();
    for manager in managers {
        let kicked = times(&manager.site.dir().join("kicked"));
        let base = times(&manager.site.dir().join("baseline"));
        for (role, at) in kicked {
            if seen.insert(role.clone(), ()).is_some() {
                doubled += 1;
                continue;
            }
            let ns = |from: u128| Duration::from_nanos(at.saturating_sub(from) as u64);
            if let Some(b) = base.get(&role) {
                own.push(ns(*b));
            }
            total.push(ns(sent[&role]));
        }
    }
    (own, total, doubled)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // test runners asking for tests: this is not one
    }
    let requests: u64 = std::env::var("KICK_REQUESTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let names = ["web1", "mgr1", "mgr2", "led1", "led2", "led3"];
    let Some(net) = Network::new_or_skip("bench kick_managers", &names) else {
        return;
    };
    let web1 = net.host("web1");
    let local = manager(net.host("mgr1"), web1, requests, "");
    let (local_own, local_total, _) = measure(web1, &[&local], requests);
    drop(local);
    let mut ledger = LedgerCluster::start(&[net.host("led1"), net.host("led2"), net.host("led3")]);
    let mgr1 = manager(net.host("mgr1"), web1, requests, &ledger.section("mgr1"));
    let mgr2 = manager(net.host("mgr2"), web1, requests, &ledger.section("mgr2"));
    let (shared_own, shared_total, doubled) = measure(web1, &[&mgr1, &mgr2], requests);
    // The ledger's master killed while requests keep coming, one every
    // 100 ms: how long kicks pause, how many are refused meanwhile, and
    // whether any is run twice.
    let killed_at = epoch_ns();
    ledger.kill_master();
    let failover = requests..requests + FAILOVER_REQUESTS;
    for n in failover.clone() {
        send(web1, &[&mgr1, &mgr2], n);
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(5));
    let mut started: BTreeMap<String, Vec<u128>> = BTreeMap::new();
    for manager in [&mgr1, &mgr2] {
        let text = std::fs::read_to_string(manager.site.dir().join("kicked")).unwrap_or_default();
        for line in text.lines() {
            if let Some((role, at)) = line.split_once(' ') {
                if let Ok(at) = at.trim().parse::<u128>() {
                    started.entry(role.to_string()).or_default().push(at);
                }
            }
        }
    }
    let after: Vec<&Vec<u128>> = failover
        .clone()
        .filter_map(|n| started.get(&format!("r{n}")))
        .collect();
    let refused = FAILOVER_REQUESTS as usize - after.len();
    let twice = after.iter().filter(|at| at.len() > 1).count();
    let resumed = after
        .iter()
        .flat_map(|at| at.iter().copied())
        .filter(|at| *at > killed_at)
        .min();
    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1000.0);
    println!("\n{requests} requests per ledger, one at a time, web1 → managers across network namespaces");
    println!(
        "{:<58} {:>10} {:>10} {:>10}",
        "path", "median", "p99", "max"
    );
    for (name, samples) in [
        (
            "local ledger: baseline handler → kick command started",
            &local_own,
        ),
        (
            "shared ledger: baseline handler → kick command started",
            &shared_own,
        ),
        (
            "local ledger: inform sent → kick command started",
            &local_total,
        ),
        (
            "shared ledger: inform sent → kick command started",
            &shared_total,
        ),
    ] {
        let s = stats(samples.clone());
        println!(
            "{:<58} {:>10} {:>10} {:>10}",
            name,
            ms(s.median),
            ms(s.p99),
            ms(s.max)
        );
    }
    let (l, s) = (stats(local_own), stats(shared_own));
    println!(
        "shared − local, the kick's own cost: {} at the median, {} at the p99; requests kicked twice: {doubled}",
        ms(s.median.saturating_sub(l.median)),
        ms(s.p99.saturating_sub(l.p99))
    );
    println!(
        "the ledger's master killed: first kick {} after, {refused} of {FAILOVER_REQUESTS} requests refused meanwhile, {twice} kicked twice",
        resumed.map_or("never".to_string(), |at| format!(
            "{:.2} s",
            (at - killed_at) as f64 / 1e9
        ))
    );
}
