//! Issue 13, part 1, end to end: Puppet's events log (`puppet apply
//! --logdest …/events.jsonl`) followed by the agent, each resource event a
//! notification at a real snmptrapd while the run goes on, the last events
//! in `puppetEventTable` through a real snmpd, flood control, and a log
//! that is rotated, truncated or written garbage into.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use testkit::{wait_until, Agent, PuppetApply, Snmpd, Snmptrapd};

const PUPPET_ROOT: &str = ".1.3.6.1.4.1.20267.401";

struct Stack {
    trapd: Snmptrapd,
    snmpd: Snmpd,
    puppet: PuppetApply,
    agent: Agent,
    events: PathBuf,
    _dir: tempfile::TempDir,
}

/// The agent watching a private Puppet and its events log, with extra
/// lines for `[puppet]`.
fn stack(puppet_extra: &str) -> Stack {
    let trapd = Snmptrapd::start();
    let snmpd = Snmpd::sending_to(&trapd);
    let puppet = PuppetApply::new();
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("log").join("events.jsonl");
    std::fs::create_dir_all(events.parent().unwrap()).unwrap();
    let toml = format!(
        "agentx_socket = \"{}\"\nrefresh = 1\n\n[[redis]]\naddress = \"127.0.0.1:1\"\n\n\
         [puppet]\nsummary = \"{}\"\nreport = \"{}\"\ndisabled_lock = \"{}\"\nrun_lock = \"{}\"\n\
         events_log = \"{}\"\n{puppet_extra}\n",
        snmpd.agentx_address(),
        puppet.public_dir().join("last_run_summary.yaml").display(),
        puppet.state_dir().join("last_run_report.yaml").display(),
        puppet.state_dir().join("agent_disabled.lock").display(),
        puppet.state_dir().join("agent_catalog_run.lock").display(),
        events.display(),
    );
    let config = dir.path().join("agent.toml");
    std::fs::write(&config, toml).unwrap();
    let mut agent = Agent::start_raw(&["-n", "-v", "-c", config.to_str().unwrap()], &[]);
    agent.expect_registered(Duration::from_secs(10));
    Stack {
        trapd,
        snmpd,
        puppet,
        agent,
        events,
        _dir: dir,
    }
}

impl Stack {
    fn get(&self, suffix: &str) -> String {
        self.snmpd
            .numeric()
            .get_one(&format!("{PUPPET_ROOT}.{suffix}"))
            .value
    }

    /// `--logdest`'s value naming the events log (and the console, as
    /// operators do).
    fn logdest(&self) -> String {
        format!("{},console", self.events.display())
    }

    /// Waits for a notification line containing every one of `parts`.
    fn wait_trap(&self, parts: &[&str], timeout: Duration) -> Option<String> {
        let mut found = None;
        wait_until(timeout, || {
            found = self
                .trapd
                .received("PUPPET-AGENT-MIB")
                .into_iter()
                .find(|l| parts.iter().all(|p| l.contains(p)));
            found.is_some()
        });
        found
    }

    /// `puppetEventTable`'s title column, as `(index, title)`.
    fn titles(&self) -> Vec<(u32, String)> {
        let out = self
            .snmpd
            .numeric()
            .bulkwalk(&format!("{PUPPET_ROOT}.4.1.5"));
        out.vars()
            .iter()
            .filter_map(|v| {
                let index = v.name.rsplit('.').next()?.parse().ok()?;
                Some((index, v.value.trim_matches('"').to_string()))
            })
            .collect()
    }
}

/// A line of the real capture `tests/fixtures/puppet/logdest/log.jsonl`
/// (Puppet 7.23, `puppet apply --logdest …jsonl`) whose text contains
/// `what`.
fn captured_line(what: &str) -> String {
    let path = testkit::repo_root().join("tests/fixtures/puppet/logdest/log.jsonl");
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .find(|l| l.contains(what))
        .unwrap_or_else(|| panic!("no line with {what:?} in {}", path.display()))
        .to_string()
}

/// The captured change of a file, for another file.
fn file_change(title: &str) -> String {
    captured_line("File[/srv/puppetwork/target/logtest.txt]/ensure")
        .replace("/srv/puppetwork/target/logtest.txt", title)
}

fn append(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

#[test]
fn a_change_is_notified_while_the_run_goes_on() {
    let stack = stack("");
    let t = stack.puppet.target().display().to_string();
    // Let the agent find the log's directory empty first (following from
    // the end of a file that does not exist yet).
    assert!(wait_until(Duration::from_secs(5), || stack.get("1.37.0") == "2")); // missing(2)
    let manifest = format!(
        "file {{ '{t}/first.txt': ensure => file, content => \"one\\n\" }}\n\
         exec {{ 'slow': command => '/bin/sleep 3', require => File['{t}/first.txt'] }}\n\
         file {{ '{t}/second.txt': ensure => file, content => \"two\\n\", require => Exec['slow'] }}\n"
    );
    let mut run = stack
        .puppet
        .spawn("realtime", &manifest, &["--logdest", &stack.logdest()]);
    let first = format!("puppetEventTitle.1 = STRING: {t}/first.txt|");
    let line = stack
        .wait_trap(&["puppetResourceChanged", &first], Duration::from_secs(60))
        .unwrap_or_else(|| {
            panic!(
                "no puppetResourceChanged for first.txt:\n{}",
                stack.trapd.log()
            )
        });
    let arrived = Instant::now();
    // The run has not ended: puppet still runs, and its last line is not
    // written yet.
    let running = run.is_running();
    let log_then = std::fs::read_to_string(&stack.events).unwrap_or_default();
    assert!(
        running,
        "puppet apply had ended before the notification came"
    );
    assert!(
        !log_then.contains("Applied catalog in"),
        "the run's end was logged before the notification came:\n{log_then}"
    );
    assert!(
        line.contains("puppetEventResourceType.1 = STRING: File|"),
        "{line}"
    );
    assert!(
        line.contains("puppetEventProperty.1 = STRING: ensure|"),
        "{line}"
    );
    assert!(
        line.contains("puppetEventLevel.1 = INTEGER: notice(3)"),
        "{line}"
    );
    assert!(line.contains("defined content as"), "{line}");
    let status = run
        .wait_timeout(Duration::from_secs(60))
        .expect("puppet apply ended");
    let ended = Instant::now();
    assert_eq!(
        status.code(),
        Some(2),
        "puppet apply --detailed-exitcodes: changes"
    );
    println!(
        "first.txt's puppetResourceChanged came {:?} before puppet apply exited",
        ended - arrived
    );
    // The second file, then the table: both changes and the exec.
    let second = format!("STRING: {t}/second.txt|");
    assert!(
        stack
            .wait_trap(&["puppetResourceChanged", &second], Duration::from_secs(10))
            .is_some(),
        "{}",
        stack.trapd.log()
    );
    let titles = stack.titles();
    let names: Vec<&str> = titles.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(
        names,
        [
            format!("{t}/first.txt").as_str(),
            "slow",
            format!("{t}/second.txt").as_str()
        ],
        "{titles:?}"
    );
    assert_eq!(stack.get("1.37.0"), "1"); // following(1)
    assert_eq!(stack.get("1.39.0"), "3"); // three resource events
    assert!(stack.trapd.received("puppetResourceFailed").is_empty());
    // Said once: the log was missing at the start.
    let log = stack.agent.log();
    assert_eq!(log.matches("no events log at").count(), 1, "{log}");
}

#[test]
fn a_failing_resource_is_notified() {
    let stack = stack("");
    let manifest = "exec { 'breaks': command => '/bin/false' }\n";
    let (code, _) = stack
        .puppet
        .apply("fails", manifest, &["--logdest", &stack.logdest()]);
    assert_eq!(code, 4);
    let line = stack
        .wait_trap(
            &[
                "puppetResourceFailed",
                "puppetEventTitle.1 = STRING: breaks|",
            ],
            Duration::from_secs(10),
        )
        .unwrap_or_else(|| panic!("no puppetResourceFailed:\n{}", stack.trapd.log()));
    assert!(
        line.contains("puppetEventLevel.1 = INTEGER: err(5)"),
        "{line}"
    );
    assert!(
        line.contains("puppetEventResourceType.1 = STRING: Exec|"),
        "{line}"
    );
    assert!(line.contains("'/bin/false' returned 1"), "{line}");
    assert!(stack.trapd.received("puppetResourceChanged").is_empty());
}

/// Issue 22 item 5, review L1, through a real `puppet apply`: an
/// unprivileged user's file named `Notify[kick -> db` in a directory Puppet
/// manages recursively reaches snmptrapd as the File it is, with the whole
/// name as its title; the run's genuine `notify {'kick -> db':}` is the
/// only Notify.
#[test]
fn a_file_named_like_a_notify_is_a_file() {
    let stack = stack("");
    let t = stack.puppet.target().display().to_string();
    let upload = stack.puppet.target().join("upload");
    std::fs::create_dir(&upload).unwrap();
    std::fs::set_permissions(&upload, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let planted = upload.join("Notify[kick -> db");
    let touch = std::process::Command::new("su")
        .args(["-s", "/bin/sh", "nobody", "-c"])
        .arg(format!("touch '{}'", planted.display()))
        .status()
        .unwrap();
    assert!(touch.success(), "touch as nobody");
    let manifest = format!(
        "file {{ '{t}/upload': ensure => directory, recurse => true, group => 'daemon' }}\n\
         notify {{ 'kick -> db': }}\n"
    );
    let (code, _) = stack
        .puppet
        .apply("upload", &manifest, &["--logdest", &stack.logdest()]);
    assert_eq!(code, 2, "puppet apply --detailed-exitcodes: changes");
    let log = std::fs::read_to_string(&stack.events).unwrap();
    assert!(
        log.contains(&format!("/File[{t}/upload/Notify[kick -> db]/group\"")),
        "Puppet's line for the planted file:\n{log}"
    );
    let file = stack
        .wait_trap(
            &[
                "puppetResourceChanged",
                &format!("STRING: {t}/upload/Notify[kick -> db|"),
            ],
            Duration::from_secs(10),
        )
        .unwrap_or_else(|| panic!("no notification for the file:\n{}", stack.trapd.log()));
    assert!(file.contains("STRING: File|"), "{file}");
    assert!(!file.contains("STRING: Notify|"), "{file}");
    assert!(file.contains("STRING: group|"), "{file}");
    // The genuine Notify, and no other.
    let genuine = stack
        .wait_trap(
            &["puppetResourceChanged", "STRING: Notify|"],
            Duration::from_secs(10),
        )
        .unwrap_or_else(|| panic!("no notification for the Notify:\n{}", stack.trapd.log()));
    assert!(genuine.contains("STRING: kick -> db|"), "{genuine}");
    assert!(genuine.contains("STRING: message|"), "{genuine}");
    let notifies: Vec<String> = stack
        .trapd
        .received("puppetResourceChanged")
        .into_iter()
        .filter(|l| l.contains("STRING: Notify|"))
        .collect();
    assert_eq!(notifies.len(), 1, "{notifies:#?}");
    // The table says the same.
    let types = stack
        .snmpd
        .numeric()
        .bulkwalk(&format!("{PUPPET_ROOT}.4.1.4"));
    let types: Vec<String> = types
        .vars()
        .iter()
        .map(|v| v.value.trim_matches('"').to_string())
        .collect();
    assert_eq!(
        types.iter().filter(|t| *t == "Notify").count(),
        1,
        "{types:?}"
    );
}

/// Issue 22 item 5, review L5: the agent follows an events log only while
/// no one but root may write it or a directory above it. A directory
/// handed to `nobody`, then a file opened to all: each refused (SNMP
/// status and error, one log line each), nothing written meanwhile is
/// read, and the log is followed again, from its end, once fixed.
#[test]
fn an_events_log_others_may_write_is_refused_until_fixed() {
    let stack = stack("");
    let events = &stack.events;
    let dir = events.parent().unwrap();
    append(events, "");
    assert!(wait_until(Duration::from_secs(5), || stack.get("1.37.0") == "1"));
    let line = |title: &str| file_change(title) + "\n";
    append(events, &line("/srv/trust/before.txt"));
    assert!(wait_until(Duration::from_secs(10), || stack.get("1.39.0") == "1"));

    // The directory owned by another user (who may chmod it at will).
    std::os::unix::fs::chown(dir, Some(65534), None).unwrap();
    assert!(
        wait_until(Duration::from_secs(15), || stack.get("1.37.0") == "3"),
        "not refused: status {}",
        stack.get("1.37.0")
    );
    let error = stack.get("1.38.0");
    assert!(
        error.contains(&format!(
            "not trusted: {} is owned by nobody (uid 65534), not root",
            dir.display()
        )),
        "{error}"
    );
    append(events, &line("/srv/trust/forged-1.txt"));
    // Given 2 s, nothing is read of it.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(stack.get("1.39.0"), "1");
    std::os::unix::fs::chown(dir, Some(0), None).unwrap();
    assert!(wait_until(Duration::from_secs(15), || stack.get("1.37.0") == "1"));
    assert_eq!(stack.get("1.38.0").trim_matches('"'), "");
    append(events, &line("/srv/trust/after-1.txt"));
    assert!(wait_until(Duration::from_secs(10), || stack.get("1.39.0") == "2"));

    // The file writable by all.
    std::fs::set_permissions(events, std::fs::Permissions::from_mode(0o666)).unwrap();
    assert!(wait_until(Duration::from_secs(15), || stack.get("1.37.0") == "3"));
    let error = stack.get("1.38.0");
    assert!(
        error.contains(&format!(
            "{} is writable by all (mode 0666)",
            events.display()
        )),
        "{error}"
    );
    append(events, &line("/srv/trust/forged-2.txt"));
    std::thread::sleep(Duration::from_secs(2));
    std::fs::set_permissions(events, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert!(wait_until(Duration::from_secs(15), || stack.get("1.37.0") == "1"));
    append(events, &line("/srv/trust/after-2.txt"));
    assert!(wait_until(Duration::from_secs(10), || stack.get("1.39.0") == "3"));

    let titles: Vec<String> = stack.titles().into_iter().map(|(_, t)| t).collect();
    assert_eq!(
        titles,
        [
            "/srv/trust/before.txt",
            "/srv/trust/after-1.txt",
            "/srv/trust/after-2.txt"
        ]
    );
    assert!(
        stack
            .wait_trap(&["after-2.txt"], Duration::from_secs(10))
            .is_some(),
        "{}",
        stack.trapd.log()
    );
    assert!(
        !stack.trapd.log().contains("forged"),
        "{}",
        stack.trapd.log()
    );
    // Said once each, with the way out.
    let log = stack.agent.log();
    for once in [
        "is owned by nobody (uid 65534), not root",
        "is writable by all (mode 0666)",
    ] {
        assert_eq!(log.matches(once).count(), 1, "{once:?} in:\n{log}");
    }
    assert!(
        log.contains("name it in events_log_owner of [puppet]"),
        "{log}"
    );
    // Followed again: once the file appeared, and after each fix.
    assert_eq!(
        log.matches("puppet: following the events log").count(),
        3,
        "{log}"
    );
}

/// `events_log_owner` names the one user besides root that may own the
/// log's directory (Debian's /var/log/puppet is `puppet:puppet` 0750).
#[test]
fn events_log_owner_trusts_that_user() {
    let stack = stack("events_log_owner = \"nobody\"\n");
    let dir = stack.events.parent().unwrap();
    std::os::unix::fs::chown(dir, Some(65534), Some(65534)).unwrap();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o750)).unwrap();
    append(&stack.events, "");
    assert!(wait_until(Duration::from_secs(5), || stack.get("1.37.0") == "1"));
    append(&stack.events, &(file_change("/srv/owned/a.txt") + "\n"));
    assert!(wait_until(Duration::from_secs(10), || stack.get("1.39.0") == "1"));
    // Another user still is not trusted.
    std::os::unix::fs::chown(dir, Some(1), None).unwrap();
    assert!(wait_until(Duration::from_secs(15), || stack.get("1.37.0") == "3"));
    assert!(
        stack
            .get("1.38.0")
            .contains("is owned by daemon (uid 1), not root"),
        "{}",
        stack.get("1.38.0")
    );
}

/// README.Debian's layout: a directory made with `install -d -o root -g
/// GROUP -m 2750` (GROUP the agent's: `nogroup` here), where a real
/// `puppet apply` creates the log. The agent trusts it and follows it; a
/// user of that group may read the log, another user may not.
#[test]
fn the_documented_directory_is_trusted_and_read_by_the_agents_group_alone() {
    let stack = stack("");
    let dir = stack.events.parent().unwrap();
    // The test's own directory above it opened for searching (still root's).
    let top = dir.parent().unwrap();
    std::fs::set_permissions(top, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::remove_dir(dir).unwrap();
    let made = std::process::Command::new("install")
        .args(["-d", "-o", "root", "-g", "nogroup", "-m", "2750"])
        .arg(dir)
        .status()
        .unwrap();
    assert!(made.success(), "install -d");
    assert!(wait_until(Duration::from_secs(5), || stack.get("1.37.0") == "2")); // missing(2)
    let t = stack.puppet.target().display().to_string();
    let manifest = format!("file {{ '{t}/laid-out.txt': ensure => file, content => \"x\\n\" }}\n");
    let (code, _) = stack
        .puppet
        .apply("layout", &manifest, &["--logdest", &stack.logdest()]);
    assert_eq!(code, 2);
    let meta = std::fs::metadata(&stack.events).unwrap();
    assert_eq!(
        (meta.uid(), meta.gid(), meta.mode() & 0o7777),
        (0, 65534, 0o644),
        "the log as Puppet created it: root, the directory's group, 0644"
    );
    let reads = |uid: &str| {
        std::process::Command::new("setpriv")
            .args([
                &format!("--reuid={uid}"),
                &format!("--regid={uid}"),
                "--clear-groups",
                "cat",
            ])
            .arg(&stack.events)
            .output()
            .expect("setpriv (util-linux)")
            .status
            .success()
    };
    assert!(reads("65534"), "the group's user cannot read the log");
    assert!(!reads("65533"), "another user can read the log");
    assert!(
        stack
            .wait_trap(
                &[
                    "puppetResourceChanged",
                    &format!("STRING: {t}/laid-out.txt|")
                ],
                Duration::from_secs(10)
            )
            .is_some(),
        "{}\n{}",
        stack.trapd.log(),
        stack.agent.log()
    );
    assert_eq!(stack.get("1.37.0"), "1");
}

/// 5,000 changes in one run, written as Puppet writes them (the captured
/// line of a file's change, for 5,000 files, then the run's end): at most
/// `resource_notifications_per_run`, then one that counts the rest; the
/// table holds the last `event_rows`, walkable.
#[test]
fn a_flood_is_held_back_and_counted() {
    let stack = stack("resource_notifications_per_run = 20\nevent_rows = 40\n");
    append(&stack.events, "");
    assert!(wait_until(Duration::from_secs(5), || stack.get("1.37.0") == "1"));
    let mut text = String::new();
    for n in 1..=5000 {
        text.push_str(&file_change(&format!("/srv/flood/f{n}.txt")));
        text.push('\n');
    }
    text.push_str(&captured_line("Applied catalog in"));
    text.push('\n');
    append(&stack.events, &text);
    let held = stack
        .wait_trap(&["puppetResourceEventsHeldBack"], Duration::from_secs(20))
        .unwrap_or_else(|| panic!("no puppetResourceEventsHeldBack:\n{}", stack.trapd.log()));
    assert!(
        held.contains("puppetEventsHeldBack.0 = Gauge32: 4980"),
        "{held}"
    );
    // Nothing more comes.
    std::thread::sleep(Duration::from_secs(2));
    let changed = stack.trapd.received("puppetResourceChanged");
    assert_eq!(changed.len(), 20, "{}", stack.trapd.log());
    assert!(
        changed[0].contains("puppetEventTitle.1 = STRING: /srv/flood/f1.txt|"),
        "{}",
        changed[0]
    );
    assert!(
        changed[19].contains("puppetEventTitle.20 = STRING: /srv/flood/f20.txt|"),
        "{}",
        changed[19]
    );
    assert_eq!(
        stack.trapd.received("puppetResourceEventsHeldBack").len(),
        1
    );
    let titles = stack.titles();
    assert_eq!(titles.len(), 40, "{titles:?}");
    assert_eq!(titles[0], (4961, "/srv/flood/f4961.txt".to_string()));
    assert_eq!(titles[39], (5000, "/srv/flood/f5000.txt".to_string()));
    assert_eq!(stack.get("1.39.0"), "5000");
    assert_eq!(stack.get("1.41.0"), "4980");
}

/// Review L5: 3,000 lines alternating a run boundary and a Notify's change
/// (forged: each boundary renews the per-run budget) give at most
/// `resource_notifications_per_minute` (100 by default) at snmptrapd, and
/// the agent's log says so once; once the minute is over it says, once,
/// how many were dropped. (Before: 169 traps in 15 s, 2,203 WARN lines.)
#[test]
fn forged_run_boundaries_meet_the_ceiling_a_minute() {
    // A tick every second, to see the count as soon as the minute is over.
    let stack = stack("min_run_interval = 4\n");
    append(&stack.events, "");
    assert!(wait_until(Duration::from_secs(5), || stack.get("1.37.0") == "1"));
    let mut text = String::new();
    for n in 0..1500 {
        text.push_str(&format!(
            "{{\"level\":\"info\",\"message\":\"Applying configuration version '{n}'\",\"source\":\"Puppet\",\"tags\":[\"info\"],\"time\":\"2026-11-26T10:55:58.031837034+00:00\"}}\n\
             {{\"level\":\"notice\",\"message\":\"defined 'message' as 'n{n}'\",\"source\":\"/Stage[main]/Main/Notify[n{n}]/message\",\"tags\":[\"notice\",\"notify\",\"class\"],\"time\":\"2026-11-26T10:55:58.112207898+00:00\"}}\n"
        ));
    }
    let started = Instant::now();
    append(&stack.events, &text);
    assert!(
        wait_until(Duration::from_secs(20), || stack.get("1.39.0") == "1500"),
        "seen {}",
        stack.get("1.39.0")
    );
    // What the burst delivers, given time.
    std::thread::sleep(Duration::from_secs(5));
    let changed = stack.trapd.received("puppetResourceChanged");
    assert_eq!(changed.len(), 100, "{}", stack.trapd.log());
    assert!(
        changed[0].contains("STRING: n0|") && changed[99].contains("STRING: n99|"),
        "{}\n{}",
        changed[0],
        changed[99]
    );
    // The agent's log: one line for the burst (besides those of its
    // start-up: no Redis, no log yet).
    let about_it = |log: &str| {
        log.lines()
            .filter(|l| l.contains(" WARN ") && l.contains("resource notification"))
            .count()
    };
    let log = stack.agent.log();
    assert_eq!(about_it(&log), 1, "{log}");
    assert_eq!(
        log.matches("100 resource notifications were sent in the last minute")
            .count(),
        1,
        "{log}"
    );
    assert!(!log.contains("not taking notifications"), "{log}");
    println!(
        "after the burst: 100 traps, {} WARN line(s) in the agent's log in all",
        log.lines().filter(|l| l.contains(" WARN ")).count()
    );
    // The count, once the minute is over, with nothing more coming.
    assert!(
        wait_until(Duration::from_secs(80), || stack.agent.log().contains(
            "1400 resource notification(s) were dropped over the ceiling of 100 a minute"
        )),
        "{}",
        stack.agent.log()
    );
    assert_eq!(about_it(&stack.agent.log()), 2, "{}", stack.agent.log());
    assert!(started.elapsed() >= Duration::from_secs(60));
    assert_eq!(stack.trapd.received("puppetResourceChanged").len(), 100);
}

/// The same through a real run: `puppet apply --logdest …jsonl` of 5,000
/// Notify resources (about 10,000 lines: each resource's message, then its
/// change) sends 20 puppetResourceChanged, then one
/// puppetResourceEventsHeldBack saying 4,980, while snmpd keeps getting
/// answers; the table ends with the run's last resource.
#[test]
fn a_real_5000_resource_run_is_held_back_and_counted() {
    let stack = stack("resource_notifications_per_run = 20\nevent_rows = 40\n");
    assert!(wait_until(Duration::from_secs(5), || stack.get("1.37.0") == "2")); // missing(2)
    let manifest = "5000.each |$i| { notify { \"flood ${i}\": } }\n";
    let mut run = stack
        .puppet
        .spawn("flood", manifest, &["--logdest", &stack.logdest()]);
    // Answers while the run floods the log.
    let mut answered_during_run = 0;
    while run.is_running() {
        let seen = stack.get("1.39.0");
        assert!(!seen.is_empty(), "no answer while the run went on");
        answered_during_run += 1;
        std::thread::sleep(Duration::from_millis(500));
    }
    let status = run.wait_timeout(Duration::from_secs(5)).expect("ended");
    assert_eq!(status.code(), Some(2), "puppet apply --detailed-exitcodes");
    let held = stack
        .wait_trap(&["puppetResourceEventsHeldBack"], Duration::from_secs(20))
        .unwrap_or_else(|| panic!("no puppetResourceEventsHeldBack:\n{}", stack.trapd.log()));
    assert!(
        held.contains("puppetEventsHeldBack.0 = Gauge32: 4980"),
        "{held}"
    );
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        stack.trapd.received("puppetResourceChanged").len(),
        20,
        "{}",
        stack.trapd.log()
    );
    assert_eq!(
        stack.trapd.received("puppetResourceEventsHeldBack").len(),
        1
    );
    assert_eq!(stack.get("1.39.0"), "5000");
    let titles = stack.titles();
    assert_eq!(titles.len(), 40, "{titles:?}");
    assert_eq!(titles[39], (5000, "flood 4999".to_string()));
    println!("{answered_during_run} GETs answered while puppet apply ran");
}

/// Rotation, truncation, garbage, a line of megabytes and a partial last
/// line: the agent keeps serving, counts what it skipped, loses no
/// complete line, and says each once.
#[test]
fn rotation_truncation_garbage_and_huge_lines() {
    let stack = stack("");
    let events = &stack.events;
    append(events, "");
    assert!(wait_until(Duration::from_secs(5), || stack.get("1.37.0") == "1"));
    let line = |n: u32| file_change(&format!("/srv/rot/r{n}.txt")) + "\n";
    let seen = |n: &str| wait_until(Duration::from_secs(10), || stack.get("1.39.0") == n);

    append(events, &line(1));
    // Garbage, a 2 MB line, then a good line.
    append(events, "this is not json\n");
    append(
        events,
        &format!(
            "{{\"level\":\"notice\",\"message\":\"{}\"}}\n",
            "x".repeat(2 << 20)
        ),
    );
    append(events, &line(2));
    assert!(seen("2"), "seen {}", stack.get("1.39.0"));
    // A partial line, completed later.
    let third = line(3);
    let (head, tail) = third.split_at(40);
    append(events, head);
    std::thread::sleep(Duration::from_millis(500));
    append(events, tail);
    assert!(seen("3"), "seen {}", stack.get("1.39.0"));
    // Rotation: renamed away, lines to the old file, then a new file.
    let rotated = events.with_extension("jsonl.1");
    std::fs::rename(events, &rotated).unwrap();
    append(&rotated, &line(4));
    append(events, &line(5));
    assert!(seen("5"), "seen {}", stack.get("1.39.0"));
    // Truncation (copytruncate), then new lines.
    std::fs::write(events, "").unwrap();
    std::thread::sleep(Duration::from_millis(500));
    append(events, &line(6));
    assert!(seen("6"), "seen {}", stack.get("1.39.0"));
    // Gone, and back.
    std::fs::remove_file(events).unwrap();
    assert!(wait_until(Duration::from_secs(10), || stack.get("1.37.0") == "2"));
    append(events, &line(7));
    assert!(seen("7"), "seen {}", stack.get("1.39.0"));

    let titles: Vec<String> = stack.titles().into_iter().map(|(_, t)| t).collect();
    let want: Vec<String> = (1..=7).map(|n| format!("/srv/rot/r{n}.txt")).collect();
    assert_eq!(titles, want, "every complete line, in order");
    assert_eq!(stack.get("1.40.0"), "2"); // the garbage and the huge line
    assert_eq!(stack.get("1.37.0"), "1");
    let log = stack.agent.log();
    for once in [
        "is not one of Puppet's",
        "is over 65536 bytes",
        "was rotated or replaced",
        "was truncated",
    ] {
        assert_eq!(log.matches(once).count(), 1, "{once:?} in:\n{log}");
    }
    // Still serving the rest of the tree.
    assert_eq!(stack.get("1.33.0"), "2");
}
