//! The example traphandle `examples/puppet-kick-traphandle.sh` (issue 13,
//! "reacting on the network") end to end: a real snmptrapd on loopback runs
//! it for puppetResourceChanged notifications, sent with net-snmp's
//! `snmptrap` and, in the last test, by the agent itself while a real
//! `puppet apply` changes a `notify {'kick -> web':}`; the handler's kick
//! command records what it was asked to do.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::path::Path;
use std::process::Command;
use std::time::Duration;
use testkit::{repo_root, wait_until, AgentConfig, PuppetApply, Snmpd, SnmpdOptions, Snmptrapd};

/// puppetResourceChanged: puppetNotifications 9.
const RESOURCE_CHANGED: &str = ".1.3.6.1.4.1.20267.401.0.9";
/// puppetEventTable columns as the handler is configured to read them here
/// (`TYPE_COLUMN`, `TITLE_COLUMN`), row 7.
const TYPE_OID: &str = ".1.3.6.1.4.1.20267.401.4.1.4.7";
const TITLE_OID: &str = ".1.3.6.1.4.1.20267.401.4.1.5.7";

struct Kick {
    trapd: Snmptrapd,
    dir: tempfile::TempDir,
}

impl Kick {
    fn start() -> Kick {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        std::fs::write(
            dir.path().join("roles"),
            "haproxy lb1.example.org lb2.example.org\ndb db1.example.org\nweb web1.example.org\n",
        )
        .unwrap();
        let conf = dir.path().join("kick.conf");
        std::fs::write(
            &conf,
            format!(
                "ROLES={d}/roles\nWINDOW=600\nSTATE_FILE={d}/state\nLOG_FILE={d}/kick.log\n\
                 TYPE_COLUMN=4\nTITLE_COLUMN=5\n\
                 kick_host() {{ echo \"$1 $2\" >> {d}/kicked; }}\n"
            ),
        )
        .unwrap();
        let script = repo_root().join("examples/puppet-kick-traphandle.sh");
        let trapd = Snmptrapd::start_with_access(&format!(
            "disableAuthorization yes\ntraphandle {RESOURCE_CHANGED} /bin/sh {} {}",
            script.display(),
            conf.display()
        ));
        Kick { trapd, dir }
    }

    /// Sends puppetResourceChanged for resource `kind[title]`.
    fn send(&self, kind: &str, title: &str) {
        let out = Command::new("snmptrap")
            .args(["-v", "2c", "-c", "public"])
            .arg(format!("127.0.0.1:{}", self.trapd.port()))
            .args([
                "",
                RESOURCE_CHANGED,
                TYPE_OID,
                "s",
                kind,
                TITLE_OID,
                "s",
                title,
            ])
            .output()
            .expect("snmptrap (Debian package snmp)");
        assert!(out.status.success(), "{out:?}");
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default()
    }

    fn kicked(&self) -> Vec<String> {
        let mut lines: Vec<String> = self.read("kicked").lines().map(String::from).collect();
        lines.sort();
        lines
    }

    fn wait_log(&self, text: &str) {
        assert!(
            wait_until(Duration::from_secs(10), || self
                .read("kick.log")
                .contains(text)),
            "the handler never logged {text:?}; its log:\n{}\nsnmptrapd:\n{}",
            self.read("kick.log"),
            self.trapd.log()
        );
    }
}

#[test]
fn a_kick_runs_puppet_on_the_roles_hosts_once_per_window() {
    let kick = Kick::start();
    kick.send("Notify", "kick -> haproxy");
    assert!(
        wait_until(Duration::from_secs(10), || kick.kicked().len() == 2),
        "kicked: {:?}; log:\n{}\nsnmptrapd:\n{}",
        kick.kicked(),
        kick.read("kick.log"),
        kick.trapd.log()
    );
    assert_eq!(
        kick.kicked(),
        ["lb1.example.org haproxy", "lb2.example.org haproxy"]
    );

    // The same kick again within the window (a loop): refused, per host.
    kick.send("Notify", "kick -> haproxy");
    kick.wait_log("not kicking lb1.example.org again");
    kick.wait_log("not kicking lb2.example.org again");

    // Not a Notify, a role that is not a plain word, a role nobody has:
    // nothing runs. snmptrapd runs its handlers one after the other, so
    // once the kick of db is done, these were handled before it.
    kick.send("File", "kick -> web");
    kick.send("Notify", "kick -> ../../etc/passwd");
    kick.send("Notify", "kick -> nobody");
    kick.send("Notify", "kick -> db");
    assert!(
        wait_until(Duration::from_secs(10), || kick.kicked().len() == 3),
        "{:?}",
        kick.kicked()
    );
    assert_eq!(
        kick.kicked(),
        [
            "db1.example.org db",
            "lb1.example.org haproxy",
            "lb2.example.org haproxy"
        ]
    );
    let log = kick.read("kick.log");
    assert!(log.contains("the role is not a plain word"), "{log}");
    assert!(log.contains("no host has role nobody"), "{log}");
    assert!(!log.contains("web1"), "a File resource kicked: {log}");
    // The state holds one line per host kicked in the window.
    let state = kick.read("state");
    assert_eq!(state.lines().count(), 3, "{state}");
    println!("{log}");
}

/// What snmptrapd writes to a handler once it knows puppetEventTable's
/// columns by name (after `PUPPET-AGENT-MIB` defines them): the handler
/// reads TYPE_OBJECT and TITLE_OBJECT by name. Run directly, with that
/// input on stdin.
#[test]
fn columns_are_read_by_their_mib_names_too() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    std::fs::write(dir.path().join("roles"), "haproxy lb1\n").unwrap();
    let conf = dir.path().join("kick.conf");
    std::fs::write(
        &conf,
        format!(
            "ROLES={d}/roles\nSTATE_FILE={d}/state\nLOG_FILE={d}/kick.log\n\
             TYPE_COLUMN=99\nTITLE_COLUMN=98\n\
             kick_host() {{ echo \"$1 $2\" >> {d}/kicked; }}\n"
        ),
    )
    .unwrap();
    let input = "web1.example.org\nUDP: [192.0.2.7]:40000->[192.0.2.1]:162\n\
                 DISMAN-EVENT-MIB::sysUpTimeInstance 0:0:01:00.00\n\
                 SNMPv2-MIB::snmpTrapOID.0 PUPPET-AGENT-MIB::puppetResourceChanged\n\
                 PUPPET-AGENT-MIB::puppetEventResourceType.3 \"Notify\"\n\
                 PUPPET-AGENT-MIB::puppetEventTitle.3 \"kick -> haproxy\"\n";
    let run = || {
        let mut child = Command::new("/bin/sh")
            .arg(repo_root().join("examples/puppet-kick-traphandle.sh"))
            .arg(&conf)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        assert!(child.wait().unwrap().success());
    };
    run();
    let kicked = || std::fs::read_to_string(dir.path().join("kicked")).unwrap_or_default();
    assert!(
        wait_until(Duration::from_secs(5), || kicked() == "lb1 haproxy\n"),
        "{}",
        kicked()
    );
    run();
    let log = std::fs::read_to_string(dir.path().join("kick.log")).unwrap();
    assert!(
        log.contains("from web1.example.org: not kicking lb1 again"),
        "{log}"
    );
    assert_eq!(kicked(), "lb1 haproxy\n");
}

#[test]
fn the_handler_is_plain_posix_sh() {
    // dash, Debian's /bin/sh, parses it; checkbashisms when installed.
    let script = repo_root().join("examples/puppet-kick-traphandle.sh");
    let out = Command::new("dash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    if Path::new("/usr/bin/checkbashisms").exists() {
        let out = Command::new("checkbashisms").arg(&script).output().unwrap();
        assert!(out.status.success(), "{out:?}");
    }
}

/// The whole path: `puppet apply --logdest …jsonl` changes a Notify titled
/// `kick -> web`; the agent follows the log and sends puppetResourceChanged
/// through a real snmpd to the snmptrapd running the handler, with the
/// handler's defaults for the columns it reads; the handler kicks the hosts
/// of role web. The run ends long before a second kick could be asked, and
/// a second run within the window kicks no one again.
#[test]
fn a_real_puppet_run_kicks_the_roles_hosts_through_the_agent() {
    let kick = Kick::start();
    let snmpd =
        Snmpd::start_with(SnmpdOptions::default().config_line(&kick.trapd.trap2sink_line()));
    let puppet = PuppetApply::new();
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events.jsonl");
    let _agent = AgentConfig::new(&snmpd)
        .redis("main", "127.0.0.1:1", "")
        .puppet(&puppet, &format!("events_log = \"{}\"", events.display()))
        .start(dir.path());
    // The agent follows the (still missing) log: puppetEventsLogStatus.0.
    assert!(wait_until(Duration::from_secs(10), || {
        snmpd
            .numeric()
            .get_one(".1.3.6.1.4.1.20267.401.1.37.0")
            .value
            == "2"
    }));
    let logdest = format!("{},console", events.display());
    let manifest = "notify { 'kick -> web': }\n";
    let (code, _) = puppet.apply("kick", manifest, &["--logdest", &logdest]);
    assert_eq!(code, 2, "puppet apply --detailed-exitcodes: a change");
    assert!(
        wait_until(Duration::from_secs(15), || kick.kicked()
            == ["web1.example.org web"]),
        "kicked: {:?}; handler log:\n{}\nsnmptrapd:\n{}\nevents log:\n{}",
        kick.kicked(),
        kick.read("kick.log"),
        kick.trapd.log(),
        std::fs::read_to_string(&events).unwrap_or_default()
    );
    // Notify resources change on every run: the next run asks again, and
    // the window refuses.
    let (code, _) = puppet.apply("kick", manifest, &["--logdest", &logdest]);
    assert_eq!(code, 2);
    kick.wait_log("not kicking web1.example.org again");
    assert_eq!(kick.kicked(), ["web1.example.org web"]);
}
