//! Issue 24, "tested the way the package runs": Puppet as the packaged
//! agent sees it. The agent runs in the sandbox of the package's own unit
//! (`debian/redis-snmp.service`, applied by [`testkit::unit`]: its user,
//! `/proc` options, read-only system, private `/tmp`, no capabilities…;
//! the test prints what is applied and what is not), and a real `puppet
//! apply` runs as root beside it, as on a real host:
//!
//! - the events log in the directory README.Debian documents (`install -d
//!   -o root -g redis-snmp -m 2750`, the unit's group) is trusted, read
//!   through the group, and each change becomes a notification;
//! - the run summary and report, which Puppet writes for root alone
//!   (0640), are said to be unreadable, with the fix; the fix, the shipped
//!   `puppet-acl.sh` for the unit's user, makes the next run's readable;
//! - a run that goes on (its run lock, written as `puppet agent` writes
//!   it), and `puppet agent --disable`'s lock with its message.
//! - Puppet's certificates behind Debian's 0750 ssldir: refused, with the
//!   reason, until the traverse-only ACL docs/puppet.md gives.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::path::{Path, PathBuf};
use std::time::Duration;
use testkit::unit::UnitSandbox;
use testkit::{
    wait_until, Agent, AgentConfig, PuppetApply, Snmpd, SnmpdOptions, Snmptrapd, PUPPET_ROOT,
};

/// PUPPET-AGENT-MIB scalars (`puppet.1.N.0`) this test reads.
const LAST_RUN_STATUS: &str = "1.3.0";
const RESOURCES_CHANGED: &str = "1.5.0";
const DISABLED: &str = "1.33.0";
const DISABLED_MESSAGE: &str = "1.34.0";
const RUN_IN_PROGRESS: &str = "1.35.0";
const READ_ERROR: &str = "1.36.0";
const EVENTS_LOG_STATUS: &str = "1.37.0";
/// puppetLastRunStatus changed(2); TruthValue true(1), false(2);
/// puppetEventsLogStatus ok(1).
const CHANGED: &str = "2";
const TRUE: &str = "1";
const FALSE: &str = "2";
const LOG_OK: &str = "1";

struct Site {
    sandbox: UnitSandbox,
    puppet: PuppetApply,
    events: PathBuf,
    trapd: Snmptrapd,
    snmpd: Snmpd,
    agent: Agent,
    _files: tempfile::TempDir,
}

impl Site {
    fn start() -> Site {
        let sandbox = UnitSandbox::of_the_package();
        eprintln!("{}", sandbox.describe());
        for setting in [
            "User",
            "ProtectSystem",
            "PrivateTmp",
            "ProtectProc",
            "UMask",
        ] {
            assert!(
                sandbox.applies(setting),
                "{setting} is not applied: {}",
                sandbox.describe()
            );
        }
        let files = sandbox.files_dir(Path::new(env!("CARGO_TARGET_TMPDIR")));
        let puppet = PuppetApply::within(files.path());
        // README.Debian's directory for the events log.
        let log_dir = files.path().join("puppet-events");
        let made = std::process::Command::new("install")
            .args(["-d", "-o", "root", "-g", sandbox.group(), "-m", "2750"])
            .arg(&log_dir)
            .status()
            .unwrap();
        assert!(made.success(), "install -d");
        let events = log_dir.join("events.jsonl");
        let trapd = Snmptrapd::start();
        // AgentX over TCP: a unix socket in /tmp is hidden by PrivateTmp
        // (the packaged snmpd's, /var/agentx/master, is not).
        let snmpd = Snmpd::start_with(
            SnmpdOptions::default()
                .tcp()
                .config_line(&trapd.trap2sink_line()),
        );
        // No Redis to poll: a closed port (the default would be 6379).
        let config = AgentConfig::new(&snmpd)
            .redis("none", "127.0.0.1:1", "")
            .puppet_files(
                &puppet.public_dir(),
                &puppet.state_dir(),
                &format!("events_log = \"{}\"", events.display()),
            )
            .write(files.path());
        let agent = sandbox.start_agent(&config);
        Site {
            sandbox,
            puppet,
            events,
            trapd,
            snmpd,
            agent,
            _files: files,
        }
    }

    fn get(&self, suffix: &str) -> String {
        self.snmpd
            .numeric()
            .get_one(&format!("{PUPPET_ROOT}.{suffix}"))
            .value
            .trim_matches('"')
            .to_string()
    }

    fn wait_for(&self, suffix: &str, want: &str, what: &str) {
        assert!(
            wait_until(Duration::from_secs(10), || self.get(suffix) == want),
            "{what}: {suffix} is {:?}, not {want:?}\n{}",
            self.get(suffix),
            self.agent.log()
        );
    }

    fn apply(&self, name: &str, manifest: &str) -> i32 {
        let logdest = format!("{},console", self.events.display());
        self.puppet
            .apply(name, manifest, &["--logdest", &logdest])
            .0
    }
}

#[test]
fn a_puppet_run_its_events_and_its_locks_are_seen_from_the_units_sandbox() {
    let site = Site::start();
    let target = site.puppet.target().display().to_string();
    let change = |name: &str| {
        let code = site.apply(
            name,
            &format!("file {{ '{target}/{name}.txt': ensure => file, content => \"x\\n\" }}\n"),
        );
        assert_eq!(code, 2, "puppet apply {name} changed nothing");
    };

    // A run that changes a file. Its event comes through the group of the
    // documented directory at once; the summary and the report Puppet
    // writes for root alone (0640): said, with the fix.
    change("first");
    let changed = format!("STRING: {target}/first.txt|");
    assert!(
        wait_until(Duration::from_secs(10), || site
            .trapd
            .received("puppetResourceChanged")
            .iter()
            .any(|l| l.contains(&changed))),
        "no puppetResourceChanged for {changed}\n{}\n{}",
        site.trapd.log(),
        site.agent.log()
    );
    site.wait_for(EVENTS_LOG_STATUS, LOG_OK, "the events log");
    assert!(
        wait_until(Duration::from_secs(10), || site
            .get(READ_ERROR)
            .contains("last_run_summary.yaml")),
        "puppetReadError: {:?}",
        site.get(READ_ERROR)
    );
    let error = site.get(READ_ERROR);
    assert!(
        error.contains("Permission denied"),
        "puppetReadError: {error:?}"
    );
    let log = site.agent.log();
    assert!(
        log.contains("cannot read the report") && log.contains("examples/puppet-acl.sh"),
        "{log}"
    );

    // The fix the error names, the shipped script, for the unit's user:
    // the next run's files are read.
    let script = testkit::repo_root().join("debian/examples/puppet-acl.sh");
    let out = std::process::Command::new("sh")
        .arg(&script)
        .arg(site.sandbox.user())
        .env(
            "LASTRUNFILE",
            site.puppet.public_dir().join("last_run_summary.yaml"),
        )
        .env(
            "LASTRUNREPORT",
            site.puppet.state_dir().join("last_run_report.yaml"),
        )
        .output()
        .expect("sh puppet-acl.sh");
    assert!(
        out.status.success(),
        "puppet-acl.sh: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    change("second");
    site.wait_for(LAST_RUN_STATUS, CHANGED, "the summary");
    assert_eq!(site.get(RESOURCES_CHANGED), "1");
    site.wait_for(READ_ERROR, "", "the files read");

    // A run that goes on: its lock is seen, and its end. `puppet apply`
    // takes no run lock and `puppet agent` needs a server, so the lock is
    // written as the agent writes it: its pid, in the state directory, as
    // root.
    let lock = site.puppet.state_dir().join("agent_catalog_run.lock");
    std::fs::write(&lock, std::process::id().to_string()).unwrap();
    site.wait_for(RUN_IN_PROGRESS, TRUE, "the run lock");
    std::fs::remove_file(&lock).unwrap();
    site.wait_for(RUN_IN_PROGRESS, FALSE, "the run lock gone");

    // puppet agent --disable's lock and its message.
    let (ok, said) = site.puppet.agent(&["--disable", "maintenance: unit test"]);
    assert!(ok, "puppet agent --disable: {said}");
    site.wait_for(DISABLED, TRUE, "the disable lock");
    assert_eq!(site.get(DISABLED_MESSAGE), "maintenance: unit test");
    let (ok, said) = site.puppet.agent(&["--enable"]);
    assert!(ok, "puppet agent --enable: {said}");
    site.wait_for(DISABLED, FALSE, "the disable lock gone");

    let log = site.agent.log();
    assert!(!log.contains("panicked"), "{log}");
}

/// Puppet's certificates as the packaged agent reads them: Debian keeps
/// `/var/lib/puppet` and its `ssl` `puppet:puppet` 0750, so the unit's
/// user is refused on the way (said in the row, `unreadable(5)`, with the
/// reason), and the traverse-only ACL docs/puppet.md gives (`setfacl -m
/// u:redis-snmp:x`) is enough: the CA's row then reads as openssl does.
#[test]
fn puppets_certificates_are_read_from_the_units_sandbox_once_the_documented_acl_is_set() {
    let sandbox = UnitSandbox::of_the_package();
    eprintln!("{}", sandbox.describe());
    let files = sandbox.files_dir(Path::new(env!("CARGO_TARGET_TMPDIR")));
    // Debian's layout: vardir and ssldir the puppet user's, 0750.
    let vardir = files.path().join("puppet");
    let ssl = vardir.join("ssl");
    let certs = ssl.join("certs");
    std::fs::create_dir_all(&certs).unwrap();
    testkit::pki::make_ca(&certs, "ca", "Puppet CA: puppet.example.test", 90);
    testkit::unit::set_mode(&certs.join("ca.pem"), 0o644);
    testkit::unit::set_mode(&certs, 0o755);
    for dir in [&vardir, &ssl] {
        testkit::unit::chown_to(dir, "puppet");
        testkit::unit::set_mode(dir, 0o750);
    }
    let not_after = testkit::pki::openssl_date(&certs, "x509", "-enddate", "ca.pem");
    let snmpd = Snmpd::start_with(SnmpdOptions::default().tcp());
    let summaries = files.path().join("run");
    std::fs::create_dir_all(&summaries).unwrap();
    let config = AgentConfig::new(&snmpd)
        .redis("none", "127.0.0.1:1", "")
        .puppet_files(
            &summaries,
            &summaries,
            &format!(
                "events_log = false\nssldir = \"{}\"\ncertname = \"agent.example.test\"",
                ssl.display()
            ),
        )
        .write(files.path());
    let agent = sandbox.start_agent(&config);
    // The CA's row: puppetCertificateIndex 2.
    let cell = |column: u32| {
        snmpd
            .numeric()
            .get_one(&format!("{PUPPET_ROOT}.5.1.{column}.2"))
            .value
            .trim_matches('"')
            .to_string()
    };
    const STATE: u32 = 4;
    const NOT_AFTER: u32 = 5;
    const ERROR: u32 = 8;
    // Waits for the CA's row to reach `state`, or fails saying what it is.
    let reaches = |state: &str, within: u64, what: &str| {
        assert!(
            wait_until(Duration::from_secs(within), || cell(STATE) == state),
            "the CA is not {what}: state {:?}, error {:?}\n{}",
            cell(STATE),
            cell(ERROR),
            agent.log()
        );
    };
    reaches("5", 10, "unreadable(5) behind 0750");
    assert!(
        cell(ERROR).contains("ermission denied"),
        "{:?}",
        cell(ERROR)
    );

    // docs/puppet.md's ACL, for the unit's user.
    for dir in [&vardir, &ssl] {
        let done = std::process::Command::new("setfacl")
            .args(["-m", &format!("u:{}:x", sandbox.user())])
            .arg(dir)
            .status()
            .unwrap();
        assert!(done.success(), "setfacl");
    }
    // Read again at the watcher's periodic look (60 s at most): no
    // inotify watch could be set in a directory the user could not enter.
    reaches("1", 70, "valid(1) after the ACL");
    assert_eq!(cell(NOT_AFTER), not_after.to_string());
}
