//! Targets by facts, across real hosts (network namespaces) with real
//! `puppet apply` runs (issue 33 item 3):
//!
//! - the agent serves the facts its `[puppet] facts` allows, from facter's
//!   external facts (a `facts.d` of the node's own) and its built-ins, as
//!   `puppetFactTable` through a real snmpd, and its role from an external
//!   fact (`role_fact`) where its certificate gives none, the
//!   certificate's winning where it does;
//! - a real run's `puppetRunFinished` brings the facts to the manager's
//!   snmptrapd and `redis-snmp kick`: `kick --inventory` (and `--json`)
//!   shows them;
//! - a `[[role]]` with `select` (puppet-kicker's expressions) kicks
//!   exactly the hosts whose facts pass every expression.
//! - a sender the manager does not know brings no facts into the
//!   inventory, and a known one's flood of facts is cut to 32.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;
use testkit::kick::*;
use testkit::netns::Network;
use testkit::wait_until;

/// PUPPET-AGENT-MIB's puppetFactTable columns and puppetRole.0.
const FACT_NAME: &str = ".1.3.6.1.4.1.20267.401.6.1.2";
const FACT_VALUE: &str = ".1.3.6.1.4.1.20267.401.6.1.3";
const ROLE: &str = ".1.3.6.1.4.1.20267.401.1.54.0";

/// A node's own `facts.d`, as an administrator makes it (root's, 0755,
/// files 0644), holding `file` with `text`; the directory it is in.
fn facts_dir(file: &str, text: &str) -> tempfile::TempDir {
    let top = tempfile::tempdir().unwrap();
    let dir = top.path().join("facts.d");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = dir.join(file);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    top
}

/// The `[puppet]` lines that serve `facts`, the role from the fact `role`
/// where the certificate gives none, read from `top`'s `facts.d`.
fn fact_settings(top: &Path) -> String {
    format!(
        "facts = [\"hostname\", \"uptime_seconds\", \"zone\"]\nrole_fact = \"role\"\n\
         facts_dirs = [\"{}\"]\n",
        top.join("facts.d").display()
    )
}

/// The rows of puppetFactTable as a walk through snmpd shows them:
/// (index, name, value).
fn fact_rows(node: &PuppetNode) -> Vec<(String, String, String)> {
    let client = node.snmpd.numeric();
    let names = client.walk(FACT_NAME).vars();
    let values = client.walk(FACT_VALUE).vars();
    names
        .iter()
        .filter(|n| n.name.starts_with(FACT_NAME))
        .filter_map(|n| {
            let index = n.name.rsplit('.').next()?.to_string();
            let value = values
                .iter()
                .find(|v| v.name == format!("{FACT_VALUE}.{index}"))?;
            Some((index, n.text(), value.text()))
        })
        .collect()
}

#[test]
fn facts_are_served_reach_the_inventory_and_select_the_hosts_kicked() {
    let names = ["web1", "web2", "db1", "lb1", "mgr"];
    let Some(net) = Network::new_or_skip("kick_facts", &names) else {
        return;
    };
    let select = r#"select = ["role=node", "uptime_seconds>10", "hostname=/^web/"]"#;
    let manager = HostsManager::start(
        net.host("mgr"),
        &["web1", "web2", "db1", "lb1"].map(|h| net.host(h)),
        &format!("window = 5\ntimeout = 120\n[[role]]\nname = \"web\"\n{select}\n"),
    );
    let trapd = &manager.trapd;
    // web1: a node by its external facts (no role in its certificate),
    // up for as long as this machine (the built-in uptime_seconds).
    let web1_facts = facts_dir("site.yaml", "role: node\nhostname: web1\nzone: a\n");
    // web2: a node too, but just booted (its facts say 5 s).
    let web2_facts = facts_dir(
        "site.json",
        r#"{"role": "node", "hostname": "web2", "uptime_seconds": 5, "zone": "b"}"#,
    );
    // db1: its certificate says db; its facts.d claims node and a web
    // name: the certificate wins for the role.
    let db1_facts = facts_dir("site.txt", "role=node\nhostname=webdb1\nzone=a\n");
    let web1 = PuppetNode::with_settings(
        net.host("web1"),
        trapd,
        None,
        &fact_settings(web1_facts.path()),
    );
    let web2 = PuppetNode::with_settings(
        net.host("web2"),
        trapd,
        None,
        &fact_settings(web2_facts.path()),
    );
    let db1 = PuppetNode::with_settings(
        net.host("db1"),
        trapd,
        Some("db"),
        &fact_settings(db1_facts.path()),
    );
    let lb1 = PuppetNode::start(Some(net.host("lb1")), trapd);
    let kicked_run = "notify { 'kicked': }\n".to_string();
    let nodes = [&web1, &web2, &db1, &lb1];
    manager.runs(
        &nodes,
        &[
            ("web1", "web", kicked_run.clone()),
            ("web2", "web", kicked_run.clone()),
            ("db1", "web", kicked_run),
        ],
    );

    // Each node's own run: its agent reads the facts with the run's files.
    for node in &nodes[..3] {
        node.apply("up", "notify { 'up': }\n");
    }
    // What a manager asking web1's snmpd sees.
    let served = wait_until(Duration::from_secs(15), || fact_rows(&web1).len() == 3);
    let rows = fact_rows(&web1);
    assert!(served, "{rows:?}");
    assert_eq!(rows[0], ("1".into(), "hostname".into(), "web1".into()));
    assert_eq!(rows[1].1, "uptime_seconds");
    let uptime: u64 = rows[1].2.parse().expect("uptime_seconds is a number");
    assert!(uptime > 10, "{uptime}");
    assert_eq!(rows[2], ("3".into(), "zone".into(), "a".into()));
    assert_eq!(web1.snmpd.numeric().get_one(ROLE).text(), "node");
    assert_eq!(db1.snmpd.numeric().get_one(ROLE).text(), "db");
    assert_eq!(
        fact_rows(&web2)[1],
        ("2".into(), "uptime_seconds".into(), "5".into())
    );

    // The run notifications brought them to the manager's inventory.
    let listed = wait_until(Duration::from_secs(30), || {
        let inventory = manager.site.inventory(false);
        ["web1", "web2", "db1"].iter().all(|h| {
            inventory
                .lines()
                .any(|l| l.split_whitespace().nth(1) == Some(h) && l.contains("zone="))
        })
    });
    let inventory = manager.site.inventory(false);
    assert!(listed, "{inventory}");
    println!("{inventory}");
    let line = |host: &str| {
        inventory
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(host))
            .unwrap()
            .to_string()
    };
    assert!(line("web1").contains("hostname=\"web1\""), "{inventory}");
    assert!(line("web2").contains("uptime_seconds=\"5\""), "{inventory}");
    assert_eq!(line("web1").split_whitespace().nth(2), Some("node"));
    assert_eq!(line("db1").split_whitespace().nth(2), Some("db"));
    let json: serde_json::Value = serde_json::from_str(&manager.site.inventory(true)).unwrap();
    let facts = &json["hosts"]["web1"]["facts"];
    assert_eq!(facts["hostname"], "web1", "{json}");
    assert_eq!(facts["zone"], "a", "{json}");
    assert_eq!(json["hosts"]["db1"]["role"], "db", "{json}");

    // lb1 asks for the web nodes: only web1 passes every expression
    // (web2 is up 5 s, db1 is no node whatever its facts say).
    lb1.apply("ask", "notify { 'kick -> web': }\n");
    let kicked = wait_until(Duration::from_secs(30), || {
        !manager.site.kicked().is_empty()
    });
    assert!(kicked, "{}", manager.site.status());
    manager.wait_quiet(Duration::from_secs(60));
    assert_eq!(
        manager.site.kicked(),
        ["web1 web"],
        "{}",
        manager.site.status()
    );
}

/// The handler as snmptrapd runs it, fed a `puppetRunFinished` carrying
/// `facts` rows (numeric OIDs, as without our MIBs loaded) from `from`.
fn run_finished(from: &str, facts: u32) -> String {
    let mut input = format!(
        "h\nUDP: [{from}]:40000->[10.99.0.1]:162\n\
         .1.3.6.1.6.3.1.1.4.1.0 .1.3.6.1.4.1.20267.401.0.18\n\
         .1.3.6.1.4.1.20267.401.1.3.0 1\n\
         .1.3.6.1.4.1.20267.401.1.54.0 \"node\"\n"
    );
    for row in 1..=facts {
        input.push_str(&format!(
            "{FACT_NAME}.{row} \"f{row}\"\n{FACT_VALUE}.{row} \"v{row}\"\n"
        ));
    }
    input
}

#[test]
fn facts_enter_the_inventory_only_from_known_senders_and_bounded() {
    let site = KickSite::new(|dir| {
        format!(
            "kick_command = [\"{}\", \"{{host}}\"]\ninventory_from = [\"10.99.0.0/24\"]\n",
            dir.join("never-run").display()
        )
    });
    // From an address no configured host has, outside inventory_from:
    // neither its role nor its facts enter.
    let (out, _) = site.handle(&run_finished("192.0.2.7", 3));
    assert!(out.status.success(), "{out:?}");
    let json: serde_json::Value = serde_json::from_str(&site.inventory(true)).unwrap();
    assert!(json["hosts"].as_object().unwrap().is_empty(), "{json}");
    // From inventory_from, a flood of facts: the first 32 rows are kept.
    let (out, took) = site.handle(&run_finished("10.99.0.5", 2000));
    assert!(out.status.success(), "{out:?}");
    assert!(took < Duration::from_secs(1), "{took:?}");
    let json: serde_json::Value = serde_json::from_str(&site.inventory(true)).unwrap();
    let facts = json["hosts"]["10.99.0.5"]["facts"].as_object().unwrap();
    assert_eq!(facts.len(), 32, "{json}");
    assert_eq!(facts["f1"], "v1");
    assert_eq!(json["hosts"]["10.99.0.5"]["role"], "node");
}
