//! `redis-snmp kick` across real hosts on one machine: network namespaces
//! on a private switch (testkit::netns), each host with its own address.
//! The nodes (`web1`, `lb1`, `db1`) run snmpd, which sends the agent's
//! notifications as SNMPv3 informs with privacy (the shipped `trapsess`
//! line) to the manager `mgr`, where snmptrapd runs the kick with the
//! shipped lines; the agents follow each node's own `puppet apply`. The kick
//! command runs `puppet apply` inside the kicked host's namespace.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::time::{Duration, Instant};
use testkit::kick::*;
use testkit::netns::{Host, Network};
use testkit::{wait_until, SnmpClient, Snmptrapd, UsmUser};

type Manager = HostsManager;

/// The seeds' scenario: web1 changes, its manifest says `notify {'kick ->
/// haproxy':}`; lb1 runs Puppet at once, and its haproxy.cfg lists web1.
#[test]
fn a_web_change_reconfigures_the_load_balancer_across_hosts() {
    let Some(net) = Network::new_or_skip("kick_hosts", &["web1", "lb1", "mgr"]) else {
        return;
    };
    let manager = Manager::start(
        net.host("mgr"),
        &[net.host("web1"), net.host("lb1")],
        "window = 60\ntimeout = 120\n[[role]]\nname = \"haproxy\"\nhosts = [\"lb1\"]\n\
         [[role]]\nname = \"web\"\nhosts = [\"web1\"]",
    );
    let web1 = PuppetNode::start(Some(net.host("web1")), &manager.trapd);
    let lb1 = PuppetNode::start(Some(net.host("lb1")), &manager.trapd);
    let registry = tempfile::tempdir().unwrap();
    let reg = registry.path().display();
    let haproxy_cfg = lb1.puppet.target().join("haproxy.cfg");
    // lb1's catalog builds its backends from the registry (what PuppetDB's
    // exported resources are in a real site).
    let lb_manifest = format!(
        "file {{ '{}': content => inline_template(\"<% Dir.glob('{reg}/*').sort.each do |f| %>server <%= File.basename(f) %> <%= File.read(f).strip %>:80 check\\n<% end %>\") }}\n",
        haproxy_cfg.display()
    );
    manager.runs(&[&web1, &lb1], &[("lb1", "haproxy", lb_manifest)]);
    let web_manifest = format!(
        "file {{ '{}': content => 'hello' }}\n\
         file {{ '{reg}/web1': content => '{}' }}\n\
         notify {{ 'kick -> haproxy': require => File['{reg}/web1'] }}\n",
        web1.puppet.target().join("index.html").display(),
        net.host("web1").address()
    );
    let changed = Instant::now();
    web1.apply("web", &web_manifest);
    let listed = wait_until(Duration::from_secs(60), || {
        std::fs::read_to_string(&haproxy_cfg)
            .unwrap_or_default()
            .contains(&format!(
                "server web1 {}:80 check",
                net.host("web1").address()
            ))
    });
    assert!(
        listed,
        "haproxy.cfg: {:?}\nstatus:\n{}\nsnmptrapd:\n{}",
        std::fs::read_to_string(&haproxy_cfg),
        manager.site.status(),
        manager.trapd.log()
    );
    println!(
        "web1's apply started → lb1's haproxy.cfg lists web1: {:?}",
        changed.elapsed()
    );
    // lb1's own run notification says the kick worked.
    let succeeded = wait_until(Duration::from_secs(30), || {
        manager
            .site
            .status_lines("lb1")
            .iter()
            .any(|l| l.contains("succeeded") && l.contains("web1 Notify[kick -> haproxy]"))
    });
    assert!(succeeded, "{}", manager.site.status());
    assert_eq!(manager.site.kicked(), ["lb1 haproxy"]);
}

/// Two roles kicking each other, and three in a cycle, with kicked runs
/// longer than half the window: they stop at the depth limit, after at
/// most hosts × max_depth kicks, the refusal said once with the chain.
#[test]
fn cycles_across_hosts_stop_at_the_depth_limit() {
    let Some(net) = Network::new_or_skip("kick_hosts", &["web1", "lb1", "db1", "mgr"]) else {
        return;
    };
    let manager = Manager::start(
        net.host("mgr"),
        &[net.host("web1"), net.host("lb1"), net.host("db1")],
        "window = 4\nmax_depth = 2\ntimeout = 120\n\
         [[role]]\nname = \"a\"\nhosts = [\"web1\"]\n[[role]]\nname = \"b\"\nhosts = [\"lb1\"]\n\
         [[role]]\nname = \"x\"\nhosts = [\"web1\"]\n[[role]]\nname = \"y\"\nhosts = [\"lb1\"]\n\
         [[role]]\nname = \"z\"\nhosts = [\"db1\"]",
    );
    let nodes: Vec<PuppetNode> = ["web1", "lb1", "db1"]
        .iter()
        .map(|h| PuppetNode::start(Some(net.host(h)), &manager.trapd))
        .collect();
    // A kicked run takes a few seconds of Puppet plus 3 s, the window is
    // 4 s: the old handler's perpetual case (run > window/2).
    let slow = |next: &str| {
        format!(
            "exec {{ 'slow': command => '/bin/sleep 3', path => ['/bin', '/usr/bin'] }}\n\
             notify {{ 'kick -> {next}': require => Exec['slow'] }}\n"
        )
    };
    let runs = [
        ("lb1", "b", slow("a")),
        ("web1", "a", slow("b")),
        ("lb1", "y", slow("z")),
        ("db1", "z", slow("x")),
        ("web1", "x", slow("y")),
    ];
    manager.runs(&nodes.iter().collect::<Vec<_>>(), &runs);
    // Two roles: web1 (by hand) → b on lb1 → a on web1 → b refused.
    nodes[0].apply("start-ab", "notify { 'kick -> b': }\n");
    let refused = || {
        manager
            .site
            .status()
            .lines()
            .filter(|l| l.contains("deeper than max_depth 2"))
            .count()
    };
    assert!(
        wait_until(Duration::from_secs(120), || refused() == 1),
        "{}",
        manager.site.status()
    );
    manager.wait_quiet(Duration::from_secs(120));
    // Twice the window later nothing more has happened.
    std::thread::sleep(Duration::from_secs(8));
    assert_eq!(manager.site.kicked(), ["lb1 b", "web1 a"]);
    assert_eq!(refused(), 1, "{}", manager.site.status());
    let status = manager.site.status();
    let chain = status.lines().find(|l| l.contains("deeper")).unwrap();
    assert!(
        chain.contains("web1 Notify[kick -> b] → lb1 (b, generation 1)")
            && chain.contains("lb1 Notify[kick -> a] → web1 (a, generation 2)"),
        "{chain}"
    );
    // Three roles: web1 → y on lb1 → z on db1 → x on web1 refused.
    nodes[0].apply("start-xyz", "notify { 'kick -> y': }\n");
    assert!(
        wait_until(Duration::from_secs(120), || refused() == 2),
        "{}",
        manager.site.status()
    );
    manager.wait_quiet(Duration::from_secs(120));
    std::thread::sleep(Duration::from_secs(8));
    assert_eq!(
        manager.site.kicked(),
        ["db1 z", "lb1 b", "lb1 y", "web1 a"],
        "{}",
        manager.site.status()
    );
    println!("{}", manager.site.status());
}

/// M1 and H1 across hosts: a spoofed v2c trap from web1's address, a v3
/// inform with a wrong key, and one with the right key from a host nobody
/// configured kick nothing; while a 30 s kick runs, a second kick is
/// handled within 1 s and snmptrapd restarts cleanly; 2,000 varbinds are
/// dropped in under 0.5 s.
#[test]
fn strangers_kick_nothing_and_snmptrapd_stays_free() {
    let Some(net) = Network::new_or_skip("kick_hosts", &["web1", "x1", "mgr"]) else {
        return;
    };
    let web1 = net.host("web1");
    let site = KickSite::new(|dir| {
        format!(
            "{}[addresses]\n\"web1\" = [\"{}\"]\n[[role]]\nname = \"slow\"\nhosts = [\"lb1\"]\n\
             [[role]]\nname = \"db\"\nhosts = [\"db1\"]\n",
            recording_command(dir, 30),
            web1.address()
        )
    });
    let mut trapd = Snmptrapd::start_in(net.host("mgr"), &site.snmptrapd_lines());
    let address = trapd.address();
    let from = |host: &Host| {
        SnmpClient::new(address.port())
            .at(address.ip())
            .inside(host)
            .numeric()
    };
    let user = UsmUser::documented();
    let kick_db = resource_varbinds("Notify", "kick -> db");
    let spoofed = from(web1).trap(RESOURCE_CHANGED, &kick_db);
    assert!(spoofed.status.success(), "{spoofed:?}");
    let impostor = user.with_passphrases("a-wrong-pass-phrase", "another-wrong-one");
    let wrong = from(web1).usm(&impostor).inform(RESOURCE_CHANGED, &kick_db);
    assert!(!wrong.status.success(), "{wrong:?}");
    let stranger = from(net.host("x1"))
        .usm(&user)
        .inform(RESOURCE_CHANGED, &kick_db);
    assert!(stranger.status.success(), "{stranger:?}");
    let x1 = net.host("x1").address();
    let refused = wait_until(Duration::from_secs(5), || {
        site.status().contains(&format!(
            "from {x1} Notify[kick -> db]: sent from an address no configured host has"
        ))
    });
    assert!(refused, "{}", site.status());
    assert!(site.kicked().is_empty(), "{:?}", site.kicked());
    assert_eq!(
        site.status().matches("kick -> db").count(),
        1,
        "{}",
        site.status()
    );

    // A 30 s kick; then a second one is handled within 1 s.
    let slow = from(web1).usm(&user).inform(
        RESOURCE_CHANGED,
        &resource_varbinds("Notify", "kick -> slow"),
    );
    assert!(slow.status.success(), "{slow:?}");
    assert!(wait_until(Duration::from_secs(5), || site.kicked() == ["lb1 slow"]));
    let sent = Instant::now();
    let db = from(web1).usm(&user).inform(RESOURCE_CHANGED, &kick_db);
    assert!(db.status.success(), "{db:?}");
    assert!(
        wait_until(Duration::from_secs(1), || site.kicked().len() == 2),
        "{:?}",
        site.kicked()
    );
    println!(
        "across hosts, while a 30 s kick runs: a kick handled in {:?}",
        sent.elapsed()
    );
    // snmptrapd restarts cleanly while both kicks run: nothing else holds
    // its port.
    trapd.stop();
    assert!(
        trapd.port_holders().is_empty(),
        "{:?}",
        trapd.port_holders()
    );
    trapd.start_again();
    // 2,000 varbinds, then a coldStart: dropped at once.
    let owned = flood_varbinds(2000);
    let flood: Vec<&str> = owned.iter().map(String::as_str).collect();
    let sent = Instant::now();
    let out = from(web1).usm(&user).inform(RESOURCE_CHANGED, &flood);
    assert!(out.status.success(), "{out:?}");
    let cold = from(web1).usm(&user).inform(COLD_START, &[]);
    assert!(cold.status.success(), "{cold:?}");
    let took = sent.elapsed();
    assert!(
        took < Duration::from_millis(500),
        "2,000 varbinds then a coldStart took {took:?}"
    );
    println!("across hosts: 2,000 varbinds, then a coldStart, both answered in {took:?}");
    assert_eq!(site.kicked().len(), 2, "{:?}", site.kicked());
}
