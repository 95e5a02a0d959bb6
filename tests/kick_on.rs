//! `[[on]]` rules, callbacks on any change, under a real snmptrapd running
//! `redis-snmp kick` with the shipped lines:
//!
//! - on loopback, SNMPv3 informs as the agents send them: a rule takes
//!   only its glob, its status and an authenticated sender;
//! - across real hosts (network namespaces) with real `puppet apply`
//!   runs: a File changed under a glob kicks a role and runs a command on
//!   the manager whose output proves its placeholders; a resource, status
//!   or role the rules do not name triggers nothing; a failed resource
//!   runs the rule for failures; a loop of callbacks stops at max_depth.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::path::Path;
use std::time::Duration;
use testkit::kick::*;
use testkit::netns::Network;
use testkit::{wait_until, SnmpClient, Snmptrapd, UsmUser};

/// Whether `id` looks like a ledger id: `MILLIS-PID-COUNTER`.
fn is_kick_id(id: &str) -> bool {
    // The time, the PID, a counter and 32 random bits.
    let parts: Vec<&str> = id.split('-').collect();
    parts.len() == 4
        && parts[..3].iter().all(|p| p.parse::<u64>().is_ok())
        && parts[3].len() == 8
        && u32::from_str_radix(parts[3], 16).is_ok()
}

/// A manager on loopback whose kick.toml says 127.0.0.1 is web1 (the
/// rest of the file: `rules`), and informs sent to it as the agents send
/// them (the shipped SNMPv3 user, with privacy).
struct Loopback {
    site: KickSite,
    trapd: Snmptrapd,
}

impl Loopback {
    fn start(rules: &str) -> Loopback {
        let site = KickSite::new(|dir| {
            format!(
                "{}{rules}\n[addresses]\n\"web1\" = [\"127.0.0.1\"]\n",
                recording_command(dir, 0)
            )
        });
        let trapd = Snmptrapd::start_with_access(&site.snmptrapd_lines());
        Loopback { site, trapd }
    }

    /// A resource notification (`oid`) for `File[title]` from `from`.
    fn inform(&self, from: &str, oid: &str, title: &str) {
        let out = SnmpClient::new(self.trapd.port())
            .numeric()
            .opt(&format!("--clientaddr={from}"))
            .usm(&UsmUser::documented())
            .inform(oid, &resource_varbinds("File", title));
        assert!(out.status.success(), "snmpinform: {out:?}");
    }

    /// Waits until no kick or callback runs or waits.
    fn quiet(&self) {
        let quiet = wait_until(Duration::from_secs(30), || {
            let status = self.site.status();
            ["running", "queued", "deferred", "retrying"]
                .iter()
                .all(|s| !status.contains(&format!(" {s} ")))
        });
        assert!(quiet, "{}", self.site.status());
    }
}

#[test]
fn a_rule_takes_only_its_glob_its_status_and_a_known_sender() {
    let work = tempfile::tempdir().unwrap();
    let callback = recording_callback(work.path(), "cb");
    let cb = callback.display();
    let m = Loopback::start(&format!(
        "window = 1\n[[role]]\nname = \"haproxy\"\nhosts = [\"lb1\"]\n\
         [[on]]\nresource = \"File[/etc/haproxy/*]\"\nkick = \"haproxy\"\n\
         [[on]]\nresource = \"File[/etc/haproxy/*]\"\nstatus = \"failed\"\n\
         run = [\"{cb}\", \"{{host}}\", \"{{resource}}\", \"{{status}}\", \"{{role}}\"]\n"
    ));
    let site = &m.site;
    // From an address no configured host has: nothing, not even a refusal
    // (a rule never matches an unknown sender).
    m.inform("127.0.0.2", RESOURCE_CHANGED, "/etc/haproxy/haproxy.cfg");
    m.inform("127.0.0.2", RESOURCE_FAILED, "/etc/haproxy/haproxy.cfg");
    // Another resource, from the known sender: nothing.
    m.inform("127.0.0.1", RESOURCE_CHANGED, "/etc/nginx/nginx.conf");
    // Handled in order: once this one's kick is in the ledger, the ones
    // before were handled too.
    m.inform("127.0.0.1", RESOURCE_CHANGED, "/etc/haproxy/haproxy.cfg");
    let kicked = wait_until(Duration::from_secs(10), || site.kicked() == ["lb1 haproxy"]);
    assert!(kicked, "{:?}\n{}", site.kicked(), site.status());
    let lines = site.on_lines();
    let status = site.status();
    assert!(
        status.contains(&format!(
            "web1 File[/etc/haproxy/haproxy.cfg] changed ([[on]] line {})",
            lines[0]
        )),
        "{status}"
    );
    assert!(
        !status.contains("127.0.0.2") && !status.contains("nginx"),
        "{status}"
    );
    assert!(!status.contains("REFUSED"), "{status}");
    // The rule for failures did not run for a change.
    assert!(callback_calls(work.path(), "cb").is_empty());
    // A failed resource: the rule for failures runs, not the kick's.
    m.inform("127.0.0.1", RESOURCE_FAILED, "/etc/haproxy/haproxy.cfg");
    let ran = wait_until(Duration::from_secs(10), || {
        !callback_calls(work.path(), "cb").is_empty()
    });
    assert!(ran, "{}", site.status());
    assert_eq!(
        callback_calls(work.path(), "cb"),
        [["web1", "File[/etc/haproxy/haproxy.cfg]", "failed", ""]]
    );
    let callback_line = format!("web1/on:{}", lines[1]);
    let done = wait_until(Duration::from_secs(10), || {
        site.status_lines(&callback_line)
            .iter()
            .any(|l| l.contains("succeeded (exit 0)"))
    });
    assert!(done, "{}", site.status());
    assert_eq!(site.kicked(), ["lb1 haproxy"]);
    println!("{}", site.status());
}

#[test]
fn a_run_callback_waits_coalesces_and_retries_as_its_rule_says() {
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    let slow = recording_callback_then(d, "slow", "sleep 2");
    let marker = d.join("failed-once");
    let once = recording_callback_then(
        d,
        "once",
        &format!(
            "[ -e {m} ] || {{ touch {m}; exit 3; }}",
            m = marker.display()
        ),
    );
    let m = Loopback::start(&format!(
        "window = 1\n\
         [[on]]\nresource = \"File[/srv/*]\"\nrun = [\"{}\", \"{{resource}}\"]\n\
         [[on]]\nresource = \"File[/retry/*]\"\nrun = [\"{}\", \"{{host}}\"]\nretries = 1\nretry_delay = 1\n",
        slow.display(),
        once.display()
    ));
    let lines = m.site.on_lines();
    m.inform("127.0.0.1", RESOURCE_CHANGED, "/srv/a");
    let first = wait_until(Duration::from_secs(10), || {
        callback_calls(d, "slow").len() == 1
    });
    assert!(first, "{}", m.site.status());
    // While it runs: the next change waits, the one after joins it.
    m.inform("127.0.0.1", RESOURCE_CHANGED, "/srv/b");
    m.inform("127.0.0.1", RESOURCE_CHANGED, "/srv/c");
    let second = wait_until(Duration::from_secs(15), || {
        callback_calls(d, "slow").len() == 2
    });
    assert!(second, "{}", m.site.status());
    m.quiet();
    assert_eq!(
        callback_calls(d, "slow"),
        [["File[/srv/a]"], ["File[/srv/b]"]],
        "{}",
        m.site.status()
    );
    let of_rule = m.site.status_lines(&format!("web1/on:{}", lines[0]));
    let cause = |t: &str| format!("web1 File[{t}] changed ([[on]] line {})", lines[0]);
    assert!(
        of_rule.iter().any(|l| l.contains("succeeded (exit 0)")
            && l.contains(&format!("{}, {}", cause("/srv/b"), cause("/srv/c")))),
        "{}",
        m.site.status()
    );
    // A command that fails once runs again after the rule's retry_delay.
    m.inform("127.0.0.1", RESOURCE_CHANGED, "/retry/x");
    let retried = wait_until(Duration::from_secs(15), || {
        m.site
            .status_lines(&format!("web1/on:{}", lines[1]))
            .iter()
            .any(|l| l.contains("succeeded (exit 0) (2 attempts)"))
    });
    assert!(retried, "{}", m.site.status());
    assert_eq!(callback_calls(d, "once"), [["web1"], ["web1"]]);
    println!("{}", m.site.status());
}

/// The rules of the scenario, each with the callback script `cb` where
/// it runs one, its files under `d`.
fn scenario_rules(d: &Path, cb: &Path) -> String {
    let (d, cb) = (d.display(), cb.display());
    format!(
        "window = 5\ntimeout = 120\n\
         [[role]]\nname = \"haproxy\"\nhosts = [\"lb1\"]\n\
         [[on]]\nresource = \"File[{d}/haproxy/*]\"\nstatus = \"changed\"\nfrom_role = \"web\"\nkick = \"haproxy\"\n\
         [[on]]\nresource = \"File[{d}/haproxy/*]\"\nstatus = \"any\"\n\
         run = [\"{cb}\", \"{{host}}\", \"{{resource}}\", \"{{status}}\", \"{{role}}\", \"{{kick}}\"]\n\
         [[on]]\nresource = \"File[{d}/haproxy/*]\"\nstatus = \"failed\"\nrun = [\"{cb}\", \"failures\", \"{{resource}}\"]\n\
         [[on]]\nresource = \"File[{d}/nginx/*.cfg]\"\nkick = \"haproxy\"\n\
         [[on]]\nresource = \"File[{d}/haproxy/*]\"\nfrom_role = \"db\"\nrun = [\"{cb}\", \"db\"]\n\
         [[on]]\nresource = \"File[{d}/broken/*]\"\nstatus = \"failed\"\n\
         run = [\"{cb}\", \"broken\", \"{{host}}\", \"{{resource}}\", \"{{status}}\"]\n"
    )
}

#[test]
fn a_file_changed_under_a_glob_kicks_a_role_and_runs_a_command() {
    let Some(net) = Network::new_or_skip("kick_on", &["web1", "lb1", "mgr"]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    for sub in ["haproxy", "nginx", "broken"] {
        std::fs::create_dir(d.join(sub)).unwrap();
    }
    let cb = recording_callback(d, "cb");
    let manager = HostsManager::start(
        net.host("mgr"),
        &[net.host("web1"), net.host("lb1")],
        &scenario_rules(d, &cb),
    );
    let lines = manager.site.on_lines();
    let web1 = PuppetNode::with_role(net.host("web1"), &manager.trapd, "web");
    let lb1 = PuppetNode::start(Some(net.host("lb1")), &manager.trapd);
    let lb_ran = d.join("lb-ran");
    manager.runs(
        &[&web1, &lb1],
        &[(
            "lb1",
            "haproxy",
            format!(
                "file {{ '{}': content => generate('/bin/date', '+%s%N') }}\n",
                lb_ran.display()
            ),
        )],
    );
    // web1's first run tells the manager its certificate's role.
    web1.apply("up", "notify { 'up': }\n");
    let known = wait_until(Duration::from_secs(30), || {
        manager
            .site
            .inventory(false)
            .lines()
            .any(|l| l.split_whitespace().nth(1) == Some("web1") && l.contains(" web "))
    });
    assert!(known, "{}", manager.site.inventory(false));
    let dd = d.display();
    let cfg = format!("{dd}/haproxy/web1.cfg");
    web1.apply(
        "web",
        &format!(
            "file {{ '{cfg}': content => 'server web1 {}:80' }}\n\
             file {{ '{dd}/nginx/web1.conf': content => 'x' }}\n\
             file {{ '{dd}/other.cfg': content => 'x' }}\n",
            net.host("web1").address()
        ),
    );
    let kicked = wait_until(Duration::from_secs(60), || lb_ran.exists());
    assert!(
        kicked,
        "{:?}\n{}",
        manager.site.kicked(),
        manager.site.status()
    );
    let called = wait_until(Duration::from_secs(30), || {
        !callback_calls(d, "cb").is_empty()
    });
    assert!(called, "{}", manager.site.status());
    manager.wait_quiet(Duration::from_secs(60));
    // The command ran on the manager once, its placeholders whole
    // arguments: the sender, the resource, its status, the sender's role
    // (its certificate's) and the callback's id in the ledger.
    let calls = callback_calls(d, "cb");
    assert_eq!(calls.len(), 1, "{calls:?}");
    let resource = format!("File[{cfg}]");
    assert_eq!(
        calls[0][..4],
        ["web1", &resource, "changed", "web"],
        "{calls:?}"
    );
    assert!(is_kick_id(&calls[0][4]), "{calls:?}");
    let status = manager.site.status();
    println!("{status}");
    let cause = |line: usize| format!("web1 File[{cfg}] changed ([[on]] line {line})");
    let lb_line = manager.site.status_lines("lb1");
    assert!(
        lb_line
            .iter()
            .any(|l| l.contains(" haproxy ") && l.contains(&cause(lines[0]))),
        "{status}"
    );
    let callback = manager.site.status_lines(&format!("web1/on:{}", lines[1]));
    assert!(
        callback
            .iter()
            .any(|l| l.contains("succeeded (exit 0)") && l.contains(&cause(lines[1]))),
        "{status}"
    );
    // Nothing else: not the rule for failures, not another role's, not a
    // resource no rule names.
    assert_eq!(manager.site.kicked(), ["lb1 haproxy"]);
    assert!(
        !status.contains("nginx") && !status.contains("other.cfg"),
        "{status}"
    );
    assert!(!status.contains("REFUSED"), "{status}");

    // A resource that fails: the rule for failures of its glob runs.
    let broken = format!("{dd}/broken/missing/x");
    let mut apply = net.host("web1").command("puppet");
    let out = apply
        .args(web1.apply_args(
            "broken",
            &format!("file {{ '{broken}': content => 'x' }}\n"),
        ))
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(4 | 6)),
        "a failed resource: {out:?}"
    );
    let failed = wait_until(Duration::from_secs(30), || {
        callback_calls(d, "cb").iter().any(|c| c[0] == "broken")
    });
    assert!(
        failed,
        "{:?}\n{}",
        callback_calls(d, "cb"),
        manager.site.status()
    );
    let calls = callback_calls(d, "cb");
    assert_eq!(
        calls.last().unwrap(),
        &["broken", "web1", &format!("File[{broken}]"), "failed"]
    );
    manager.wait_quiet(Duration::from_secs(30));
    assert_eq!(callback_calls(d, "cb").len(), 2);
    assert_eq!(manager.site.kicked(), ["lb1 haproxy"]);
}

#[test]
fn a_loop_of_callbacks_stops_at_max_depth() {
    let Some(net) = Network::new_or_skip("kick_on", &["web1", "lb1", "mgr"]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let d = work.path();
    std::fs::create_dir(d.join("web")).unwrap();
    std::fs::create_dir(d.join("lb")).unwrap();
    let dd = d.display();
    // web1's change kicks lb1, lb1's kicks web1, and so on: each run
    // changes its file (a new content every run).
    let manager = HostsManager::start(
        net.host("mgr"),
        &[net.host("web1"), net.host("lb1")],
        &format!(
            "window = 5\nmax_depth = 2\ntimeout = 120\n\
             [[role]]\nname = \"haproxy\"\nhosts = [\"lb1\"]\n\
             [[role]]\nname = \"web\"\nhosts = [\"web1\"]\n\
             [[on]]\nresource = \"File[{dd}/web/*]\"\nkick = \"haproxy\"\n\
             [[on]]\nresource = \"File[{dd}/lb/*]\"\nkick = \"web\"\n"
        ),
    );
    let lines = manager.site.on_lines();
    let web1 = PuppetNode::start(Some(net.host("web1")), &manager.trapd);
    let lb1 = PuppetNode::start(Some(net.host("lb1")), &manager.trapd);
    let clock = |dir: &str| {
        format!("file {{ '{dd}/{dir}/clock': content => generate('/bin/date', '+%s%N') }}\n")
    };
    manager.runs(
        &[&web1, &lb1],
        &[
            ("lb1", "haproxy", clock("lb")),
            ("web1", "web", clock("web")),
        ],
    );
    web1.apply("web", &clock("web"));
    let stopped = wait_until(Duration::from_secs(120), || {
        manager
            .site
            .status()
            .lines()
            .any(|l| l.contains("deeper than max_depth 2"))
    });
    assert!(
        stopped,
        "{:?}\n{}",
        manager.site.kicked(),
        manager.site.status()
    );
    manager.wait_quiet(Duration::from_secs(60));
    let status = manager.site.status();
    println!("{status}");
    // Generation 1 kicked lb1, generation 2 web1; the third is refused,
    // with the chain of rules that led to it.
    assert_eq!(
        manager.site.kicked(),
        ["lb1 haproxy", "web1 web"],
        "{status}"
    );
    let refusal = status
        .lines()
        .find(|l| l.contains("deeper than max_depth 2"))
        .unwrap();
    for line in [lines[0], lines[1]] {
        assert!(
            refusal.contains(&format!("([[on]] line {line})")),
            "{refusal}"
        );
    }
    // Nothing more comes of it.
    std::thread::sleep(Duration::from_secs(6));
    assert_eq!(manager.site.kicked().len(), 2);
}
