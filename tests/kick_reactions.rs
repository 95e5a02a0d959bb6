//! Reactions as Puppet sites need them, across real hosts (network
//! namespaces, testkit::netns) with real `puppet apply` runs, the agent
//! following each node's Puppet and snmpd sending its notifications as
//! SNMPv3 informs to the manager's snmptrapd, which runs the kick:
//!
//! - a kick that may not run now is deferred, not lost: a second web node
//!   that changes while the load balancer's kicked run goes on is in its
//!   haproxy.cfg once that run and the window are over;
//! - every kicked run's outcome is known, a run that changes nothing too
//!   (`puppetRunFinished`), within a second of its end;
//! - `kick -> again` runs Puppet again until a run changes nothing else,
//!   and a manifest that never converges stops at `max_depth`;
//! - a `[[role]]` without hosts kicks the hosts whose certificates give
//!   them that role, as their own run notifications told the manager.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::time::{Duration, Instant};
use testkit::kick::*;
use testkit::netns::Network;
use testkit::wait_until;

/// The kick's status line of `host`'s newest kick.
fn newest_kick_line(manager: &HostsManager, host: &str) -> Option<String> {
    let status = manager.site.status();
    let kicks = status.split("\nREFUSED").next().unwrap_or_default();
    kicks
        .lines()
        .skip(1)
        .find(|l| l.split_whitespace().nth(1) == Some(host))
        .map(String::from)
}

#[test]
fn a_deferred_kick_brings_the_second_web_node_and_an_unchanged_run_is_known() {
    let Some(net) = Network::new_or_skip("kick_reactions", &["web1", "web2", "lb1", "mgr"]) else {
        return;
    };
    let window = 5;
    let manager = HostsManager::start(
        net.host("mgr"),
        &[net.host("web1"), net.host("web2"), net.host("lb1")],
        &format!(
            "window = {window}\ntimeout = 120\n[[role]]\nname = \"haproxy\"\nhosts = [\"lb1\"]\n\
             [[role]]\nname = \"web\"\nhosts = [\"web1\", \"web2\"]"
        ),
    );
    let nodes: Vec<PuppetNode> = ["web1", "web2", "lb1"]
        .iter()
        .map(|h| PuppetNode::start(Some(net.host(h)), &manager.trapd))
        .collect();
    let (web1, web2, lb1) = (&nodes[0], &nodes[1], &nodes[2]);
    let registry = tempfile::tempdir().unwrap();
    let reg = registry.path().display();
    let haproxy_cfg = lb1.puppet.target().join("haproxy.cfg");
    // While `slow` exists, lb1's run says it has compiled its catalog
    // (`compiled`, a new content each run) then takes 20 s more: a run long
    // enough for web2's whole `puppet apply` to happen during it, even on
    // a loaded machine. Without it, a run changes nothing when the
    // registry did not change.
    let slow = registry.path().join("slow");
    std::fs::write(&slow, "").unwrap();
    let compiled = lb1.puppet.target().join("compiled");
    let lb_manifest = format!(
        "if find_file('{slow}') {{\n\
           file {{ '{compiled}': content => generate('/bin/date', '+%s%N') }}\n\
           exec {{ 'slow': command => '/bin/sleep 20', path => ['/bin', '/usr/bin'], require => File['{compiled}'], before => File['{cfg}'] }}\n\
         }}\n\
         file {{ '{cfg}': content => inline_template(\"<% Dir.glob('{reg}/web*').sort.each do |f| %>server <%= File.basename(f) %> <%= File.read(f).strip %>:80 check\\n<% end %>\") }}\n",
        slow = slow.display(),
        compiled = compiled.display(),
        cfg = haproxy_cfg.display()
    );
    manager.runs(
        &nodes.iter().collect::<Vec<_>>(),
        &[("lb1", "haproxy", lb_manifest)],
    );
    let web_manifest = |name: &str| {
        format!(
            "file {{ '{reg}/{name}': content => '{}' }}\n\
             notify {{ 'kick -> haproxy': require => File['{reg}/{name}'] }}\n",
            net.host(name).address()
        )
    };
    let lists = |name: &str| {
        std::fs::read_to_string(&haproxy_cfg)
            .unwrap_or_default()
            .contains(&format!(
                "server {name} {}:80 check",
                net.host(name).address()
            ))
    };
    web1.apply("web", &web_manifest("web1"));
    // lb1's kick started during web1's run: its whole run, compiling
    // included, is measured from here.
    let kicked_run = Instant::now();
    // lb1's kicked run has its catalog: what changes now is not in it.
    let running = wait_until(Duration::from_secs(30), || compiled.exists());
    assert!(running, "{}", manager.site.status());
    // web2 comes up while lb1's kicked run goes on: its kick waits.
    web2.apply("web", &web_manifest("web2"));
    let changed = Instant::now();
    let deferred = wait_until(Duration::from_secs(10), || {
        manager
            .site
            .status_lines("deferred")
            .iter()
            .any(|l| l.contains("lb1") && l.contains("web2 Notify[kick -> haproxy]"))
    });
    assert!(deferred, "{}", manager.site.status());
    assert!(wait_until(Duration::from_secs(60), || lists("web1")));
    let first_run = kicked_run.elapsed();
    let both = wait_until(Duration::from_secs(90), || lists("web2"));
    assert!(
        both,
        "haproxy.cfg: {:?}\n{}",
        std::fs::read_to_string(&haproxy_cfg),
        manager.site.status()
    );
    let took = changed.elapsed();
    // The deferred kick starts once the first ended and the window passed,
    // then runs as long as the first (20 s of sleep and Puppet): within
    // lb1's run time (what was left of the first), the window, a run again
    // and 5 s.
    let bound = first_run * 2 + Duration::from_secs(window + 5);
    println!(
        "web2's change → listed in haproxy.cfg by a deferred kick: {took:?} (bound {bound:?})"
    );
    assert!(took <= bound, "{took:?} > {bound:?}");
    let status = manager.site.status();
    assert_eq!(
        manager.site.kicked(),
        ["lb1 haproxy", "lb1 haproxy"],
        "{status}"
    );
    assert!(
        wait_until(Duration::from_secs(10), || manager
            .site
            .status_lines("lb1")
            .iter()
            .filter(|l| l.contains("succeeded (changed)"))
            .count()
            == 2),
        "{}",
        manager.site.status()
    );

    // A kicked run that changes nothing: known as such within a second of
    // its end (puppetRunFinished), not "awaiting report".
    std::fs::remove_file(&slow).unwrap();
    std::thread::sleep(Duration::from_secs(window + 1));
    web1.apply("web-again", &web_manifest("web1"));
    let mut ended_seen = None;
    let known = wait_until(Duration::from_secs(60), || {
        let line = newest_kick_line(&manager, "lb1").unwrap_or_default();
        let ended = line
            .split_whitespace()
            .nth(6)
            .is_some_and(|e| e.ends_with('Z'));
        if ended && ended_seen.is_none() {
            ended_seen = Some(Instant::now());
        }
        line.contains("succeeded (no change)") && line.contains("web1")
    });
    assert!(known, "{}", manager.site.status());
    let after_end = ended_seen.map(|t| t.elapsed()).unwrap_or_default();
    println!("an unchanged kicked run known {after_end:?} after its command ended");
    assert!(after_end <= Duration::from_secs(1), "{after_end:?}");
    assert_eq!(manager.site.kicked().len(), 3);
}

#[test]
fn again_runs_puppet_until_it_converges_and_stops_one_that_never_does() {
    let Some(net) = Network::new_or_skip("kick_reactions", &["web1", "web2", "mgr"]) else {
        return;
    };
    let manager = HostsManager::start(
        net.host("mgr"),
        &[net.host("web1"), net.host("web2")],
        "window = 5\nmax_depth = 3\ntimeout = 120\n",
    );
    let nodes: Vec<PuppetNode> = ["web1", "web2"]
        .iter()
        .map(|h| PuppetNode::start(Some(net.host(h)), &manager.trapd))
        .collect();
    let work = tempfile::tempdir().unwrap();
    let d = work.path().display();
    // web1 needs three runs: each file appears once the one before exists
    // (puppet apply compiles on the host, so find_file sees it).
    let three = format!(
        "file {{ '{d}/a': ensure => file }}\n\
         if find_file('{d}/a') {{ file {{ '{d}/b': ensure => file }} }}\n\
         if find_file('{d}/b') {{ file {{ '{d}/c': ensure => file }} }}\n\
         notify {{ 'kick -> again': }}\n"
    );
    // web2 never converges: a new content every run.
    let never = format!(
        "file {{ '{d}/clock': content => generate('/bin/date', '+%s%N') }}\n\
         notify {{ 'kick -> again': }}\n"
    );
    manager.runs(
        &nodes.iter().collect::<Vec<_>>(),
        &[
            ("web1", "again", three.clone()),
            ("web2", "again", never.clone()),
        ],
    );
    nodes[0].apply("again", &three);
    nodes[1].apply("again", &never);
    let converged = wait_until(Duration::from_secs(120), || {
        manager
            .site
            .status_lines("web1")
            .iter()
            .any(|l| l.contains("not needed: the run that asked changed nothing else"))
    });
    assert!(converged, "{}", manager.site.status());
    assert!(work.path().join("c").exists());
    let too_deep = wait_until(Duration::from_secs(120), || {
        manager
            .site
            .status()
            .lines()
            .any(|l| l.contains("web2") && l.contains("deeper than max_depth 3"))
    });
    assert!(too_deep, "{}", manager.site.status());
    manager.wait_quiet(Duration::from_secs(60));
    let kicked = manager.site.kicked();
    let of = |host: &str| kicked.iter().filter(|k| k.starts_with(host)).count();
    // web1: runs 2, 3 and 4 kicked (the 4th changed only its notify);
    // web2: three generations, then refused.
    assert_eq!((of("web1 again"), of("web2 again")), (3, 3), "{kicked:?}");
    // web2's own agent saw the runs that never settle.
    let log = manager.trapd.log();
    assert!(log.contains("puppetNotConverging"), "{log}");
    println!("{}", manager.site.status());
}

#[test]
fn a_role_without_hosts_kicks_the_hosts_whose_certificates_give_it() {
    let names = ["web1", "lb1", "lb2", "db1", "mgr"];
    let Some(net) = Network::new_or_skip("kick_reactions", &names) else {
        return;
    };
    let manager = HostsManager::start(
        net.host("mgr"),
        &["web1", "lb1", "lb2", "db1"].map(|h| net.host(h)),
        "window = 5\ntimeout = 120\n[[role]]\nname = \"haproxy\"\n",
    );
    let trapd = &manager.trapd;
    let nodes = [
        PuppetNode::start(Some(net.host("web1")), trapd),
        PuppetNode::with_role(net.host("lb1"), trapd, "haproxy"),
        PuppetNode::with_role(net.host("lb2"), trapd, "haproxy"),
        PuppetNode::with_role(net.host("db1"), trapd, "db"),
    ];
    let kicked_run = "notify { 'kicked': }\n".to_string();
    manager.runs(
        &nodes.iter().collect::<Vec<_>>(),
        &[
            ("lb1", "haproxy", kicked_run.clone()),
            ("lb2", "haproxy", kicked_run.clone()),
            ("db1", "haproxy", kicked_run),
        ],
    );
    // Each host's own run tells the manager what its certificate says.
    for node in &nodes[1..] {
        node.apply("up", "notify { 'up': }\n");
    }
    let listed = wait_until(Duration::from_secs(30), || {
        let inventory = manager.site.inventory(false);
        [("lb1", "haproxy"), ("lb2", "haproxy"), ("db1", "db")]
            .iter()
            .all(|(host, role)| {
                inventory.lines().any(|l| {
                    l.split_whitespace().nth(1) == Some(host)
                        && l.split_whitespace().nth(2) == Some(role)
                })
            })
    });
    assert!(listed, "{}", manager.site.inventory(false));
    let json = manager.site.inventory(true);
    assert!(json.contains("\"role\": \"haproxy\""), "{json}");
    println!("{}", manager.site.inventory(false));
    nodes[0].apply("web", "notify { 'kick -> haproxy': }\n");
    let both = wait_until(Duration::from_secs(30), || manager.site.kicked().len() == 2);
    assert!(
        both,
        "{:?}\n{}",
        manager.site.kicked(),
        manager.site.status()
    );
    assert_eq!(manager.site.kicked(), ["lb1 haproxy", "lb2 haproxy"]);
    manager.wait_quiet(Duration::from_secs(60));
    assert_eq!(manager.site.kicked().len(), 2, "db1 is no load balancer");
}
