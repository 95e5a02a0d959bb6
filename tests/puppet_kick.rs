//! `redis-snmp kick` under a real snmptrapd on loopback, configured with
//! the shipped `debian/examples/snmptrapd-kick.conf`: SNMPv3 informs with
//! privacy run it, nothing else does; it answers at once and runs each
//! kick detached, holding nothing of snmptrapd's; a flood of varbinds
//! costs it nothing; who may kick is decided by the transport address.
//! Across real hosts (network namespaces): tests/kick_hosts.rs.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::time::{Duration, Instant};
use testkit::kick::*;
use testkit::{wait_until, SnmpClient, Snmptrapd, UsmUser};

struct Manager {
    site: KickSite,
    trapd: Snmptrapd,
}

const ROLES: &str = "[addresses]\n\"web1.example.net\" = [\"127.0.0.1\"]\n\
    [[role]]\nname = \"web\"\nhosts = [\"web1.example.net\"]\n\
    [[role]]\nname = \"haproxy\"\nhosts = [\"lb1.example.net\", \"lb2.example.net\"]\n\
    [[role]]\nname = \"db\"\nhosts = [\"db1.example.net\"]\n";

impl Manager {
    /// A manager whose kick command records `HOST ROLE` and sleeps
    /// `seconds`.
    fn start(seconds: u32) -> Manager {
        let site = KickSite::new(|dir| format!("{}{ROLES}", recording_command(dir, seconds)));
        let trapd = Snmptrapd::start_with_access(&site.snmptrapd_lines());
        Manager { site, trapd }
    }

    /// A client sending to snmptrapd from `from` (a loopback address).
    fn client(&self, from: &str) -> SnmpClient {
        SnmpClient::new(self.trapd.port())
            .numeric()
            .opt(&format!("--clientaddr={from}"))
    }

    fn kicked(&self) -> Vec<String> {
        self.site.kicked()
    }

    /// An SNMPv3 inform (the shipped user, with privacy) from `from`.
    fn inform(&self, from: &str, oid: &str, varbinds: &[&str]) {
        let out = self
            .client(from)
            .usm(&UsmUser::documented())
            .inform(oid, varbinds);
        assert!(out.status.success(), "snmpinform: {out:?}");
    }

    fn kick(&self, from: &str, title: &str) {
        self.inform(from, RESOURCE_CHANGED, &resource_varbinds("Notify", title));
    }
}

/// H1 of the security review: the old handler's background kick kept
/// snmptrapd's socket and a lock, and froze it for a whole remote run.
#[test]
fn kicks_run_detached_and_snmptrapd_is_never_held() {
    let m = Manager::start(30);
    m.kick("127.0.0.1", "kick -> haproxy");
    assert!(
        wait_until(Duration::from_secs(5), || m.kicked().len() == 2),
        "kicked: {:?}\nstatus:\n{}\nsnmptrapd:\n{}",
        m.kicked(),
        m.site.status(),
        m.trapd.log()
    );
    // While both 30 s kicks run: a second kick is handled within 1 s, and
    // a notification of another kind is logged within 1 s.
    let sent = Instant::now();
    m.kick("127.0.0.1", "kick -> db");
    assert!(
        wait_until(Duration::from_secs(1), || m.kicked().len() == 3),
        "{:?}",
        m.kicked()
    );
    let second = sent.elapsed();
    let sent = Instant::now();
    m.inform("127.0.0.1", COLD_START, &[]);
    assert!(
        wait_until(Duration::from_secs(1), || m
            .trapd
            .log()
            .contains("coldStart")
            || m.trapd.log().contains(".1.3.6.1.6.3.1.1.5.1")),
        "{}",
        m.trapd.log()
    );
    println!(
        "while two kicks run: a kick handled {second:?} after it was sent, a coldStart logged {:?} after",
        sent.elapsed()
    );
    assert_eq!(
        m.kicked(),
        [
            "db1.example.net db",
            "lb1.example.net haproxy",
            "lb2.example.net haproxy"
        ]
    );
    // Nothing but snmptrapd holds its socket (the old handler's kicks
    // inherited it, and a restarted snmptrapd could not bind).
    let holders = m.trapd.port_holders();
    assert_eq!(holders, [m.trapd.pid()], "holders of the UDP port");
    let status = m.site.status();
    assert_eq!(
        status.matches(" running ").count(),
        3,
        "three kicks running:\n{status}"
    );
    assert!(
        status.contains("web1.example.net Notify[kick -> haproxy]"),
        "{status}"
    );
}

/// A kick command that fails (ssh's 255: a host rebooting) is run again
/// `retries` times, `retry_delay` apart, and `--status` shows the
/// attempts; one that keeps failing ends with its last exit code.
#[test]
fn a_failing_kick_command_is_retried_and_its_attempts_shown() {
    let site = KickSite::new(|dir| {
        // Fails with 255 twice, then succeeds; `db1` always fails.
        let script = dir.join("flaky.sh");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\necho \"$1\" >> {d}/attempts\n\
                 n=$(grep -c \"^$1$\" {d}/attempts)\n\
                 [ \"$1\" = db1.example.net ] && exit 255\n\
                 [ \"$n\" -lt 3 ] && exit 255\nexit 0\n",
                d = dir.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        format!(
            "kick_command = [\"{}\", \"{{host}}\"]\n{}",
            script.display(),
            ROLES
                .replace(
                    "hosts = [\"lb1.example.net\", \"lb2.example.net\"]\n",
                    "hosts = [\"lb1.example.net\"]\nretries = 3\nretry_delay = 1\n"
                )
                .replace(
                    "hosts = [\"db1.example.net\"]\n",
                    "hosts = [\"db1.example.net\"]\nretries = 1\nretry_delay = 1\n"
                )
        )
    });
    let trapd = Snmptrapd::start_with_access(&site.snmptrapd_lines());
    let m = Manager { site, trapd };
    m.kick("127.0.0.1", "kick -> haproxy");
    m.kick("127.0.0.1", "kick -> db");
    let done = wait_until(Duration::from_secs(30), || {
        let lb = m.site.status_lines("lb1.example.net");
        let db = m.site.status_lines("db1.example.net");
        lb.iter().any(|l| l.contains("(exit 0) (3 attempts)"))
            && db.iter().any(|l| l.contains("(exit 255) (2 attempts)"))
    });
    assert!(done, "{}", m.site.status());
    let attempts = std::fs::read_to_string(m.site.dir().join("attempts")).unwrap();
    assert_eq!(attempts.lines().filter(|l| l.starts_with("lb1")).count(), 3);
    assert_eq!(attempts.lines().filter(|l| l.starts_with("db1")).count(), 2);
}

/// A supervisor killed (snmptrapd's unit stopped, the machine restarted)
/// leaves a kick that no longer runs: it is marked interrupted, and no
/// longer counts as running.
#[test]
fn a_killed_supervisor_leaves_an_interrupted_kick() {
    let m = Manager::start(30);
    m.kick("127.0.0.1", "kick -> db");
    assert!(wait_until(Duration::from_secs(5), || m.kicked().len() == 1));
    assert!(wait_until(Duration::from_secs(5), || m
        .site
        .status_lines(" running ")
        .len()
        == 1));
    m.site.stop_kicks();
    let status = m.site.status();
    assert!(
        status.contains("db1.example.net") && status.contains("interrupted"),
        "{status}"
    );
    assert!(!status.contains(" running "), "{status}");
}

/// M1: one UDP packet of 2,000 varbinds cost the old handler 7.8 s of
/// snmptrapd's time; here the handler reads the first 64 and stops.
#[test]
fn a_flood_of_varbinds_is_dropped_at_once() {
    let m = Manager::start(30);
    let owned = flood_varbinds(2000);
    let mut varbinds: Vec<&str> = owned.iter().map(String::as_str).collect();
    varbinds.extend(resource_varbinds("Notify", "kick -> db"));
    // Straight to the handler, as snmptrapd hands it over.
    let mut input = String::from("web1\nUDP: [127.0.0.1]:40000->[127.0.0.1]:162\n");
    input.push_str(".1.3.6.1.6.3.1.1.4.1.0 .1.3.6.1.4.1.20267.401.0.9\n");
    for pair in varbinds.chunks(3) {
        input.push_str(&format!("{} \"{}\"\n", pair[0], pair[2]));
    }
    let (out, took) = m.site.handle(&input);
    assert!(out.status.success(), "{out:?}");
    assert!(
        took < Duration::from_millis(500),
        "the handler took {took:?}"
    );
    println!("2,000 varbinds handed to the handler: done in {took:?}");
    // Through snmptrapd, with a coldStart right after.
    let sent = Instant::now();
    m.inform("127.0.0.1", RESOURCE_CHANGED, &varbinds);
    m.inform("127.0.0.1", COLD_START, &[]);
    let logged = wait_until(Duration::from_secs(5), || {
        m.trapd.log().contains("coldStart") || m.trapd.log().contains(".1.3.6.1.6.3.1.1.5.1")
    });
    assert!(logged, "{}", m.trapd.log());
    println!(
        "2,000 varbinds through snmptrapd, then a coldStart: logged {:?} after the first was sent",
        sent.elapsed()
    );
    assert!(m.kicked().is_empty(), "{:?}", m.kicked());
}

/// M1, L1: who may kick. Only SNMPv3 with the right keys runs the
/// handler at all; of those, only a configured host's address kicks; a
/// File whose title looks like a kick is a File.
#[test]
fn only_authenticated_notifications_from_known_hosts_kick() {
    let m = Manager::start(30);
    let kick_db = resource_varbinds("Notify", "kick -> db");
    let out = m.client("127.0.0.1").trap(RESOURCE_CHANGED, &kick_db);
    assert!(out.status.success(), "{out:?}");
    let impostor =
        UsmUser::documented().with_passphrases("a-wrong-pass-phrase", "another-wrong-one");
    let out = m
        .client("127.0.0.1")
        .usm(&impostor)
        .inform(RESOURCE_CHANGED, &kick_db);
    assert!(!out.status.success(), "a wrong key was answered: {out:?}");
    // An unknown address, with the right keys: refused by the handler.
    m.kick("127.0.0.2", "kick -> db");
    m.inform(
        "127.0.0.1",
        RESOURCE_CHANGED,
        &resource_varbinds("File", "kick -> db"),
    );
    m.kick("127.0.0.1", "kick -> nobody");
    m.inform("127.0.0.1", COLD_START, &[]);
    assert!(wait_until(Duration::from_secs(5), || m
        .trapd
        .log()
        .contains("coldStart")
        || m.trapd.log().contains(".1.3.6.1.6.3.1.1.5.1")));
    // snmptrapd runs its handlers in order: all were handled by now.
    assert!(m.kicked().is_empty(), "{:?}", m.kicked());
    let status = m.site.status();
    assert!(
        status.contains(
            "from 127.0.0.2 Notify[kick -> db]: sent from an address no configured host has"
        ),
        "{status}"
    );
    assert!(status.contains("nobody"), "{status}");
    assert!(status.contains("no such role"), "{status}");
    assert!(!status.contains("File["), "a File is not a kick:\n{status}");
    // The v2c trap and the wrong key never reached it, nor the log.
    assert_eq!(status.matches("Notify[kick -> db]").count(), 1, "{status}");
    assert!(
        !m.trapd.log().contains("kick -> db\""),
        "snmptrapd logged an unauthenticated notification:\n{}",
        m.trapd.log()
    );
}

/// A file or directory someone else can write is refused, and says why.
#[test]
fn unsafe_files_are_refused_with_the_reason() {
    use std::os::unix::fs::PermissionsExt;
    let m = Manager::start(1);
    std::fs::set_permissions(m.site.config(), std::fs::Permissions::from_mode(0o666)).unwrap();
    let (out, _) = m.site.handle("");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && said.contains("writable by group or others"),
        "{said}"
    );
    std::fs::set_permissions(m.site.config(), std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::create_dir(m.site.state_dir()).unwrap();
    std::fs::set_permissions(m.site.state_dir(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let (out, _) = m.site.handle("");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && said.contains("closed to everyone else"),
        "{said}"
    );
}

/// The whole path on one host: `puppet apply` changes `notify {'kick ->
/// web':}`; the agent follows the events log and its snmpd sends the
/// notification as an SNMPv3 inform (the shipped trapsess line) to
/// snmptrapd, which runs the kick. A second run while the kick runs asks
/// again, and that kick is deferred (the host is being kicked): it waits,
/// and is not run twice at once.
#[test]
fn a_real_puppet_run_kicks_through_the_agent() {
    let m = Manager::start(30);
    let node = PuppetNode::start(None, &m.trapd);
    let manifest = "notify { 'kick -> web': }\n";
    assert_eq!(node.apply("kick", manifest), 2, "puppet apply: a change");
    assert!(
        wait_until(Duration::from_secs(15), || m.kicked()
            == ["web1.example.net web"]),
        "kicked: {:?}; status:\n{}\nsnmptrapd:\n{}",
        m.kicked(),
        m.site.status(),
        m.trapd.log()
    );
    assert_eq!(node.apply("kick", manifest), 2);
    assert!(
        wait_until(Duration::from_secs(30), || m
            .site
            .status_lines("deferred")
            .iter()
            .any(|l| l.contains("waits: being kicked"))),
        "{}",
        m.site.status()
    );
    assert_eq!(m.kicked(), ["web1.example.net web"]);
    // The end of the run that asked is not taken for the kicked run's:
    // the recording command runs 30 s and reports nothing.
    let first = m.site.status_lines("running");
    assert_eq!(first.len(), 1, "{}", m.site.status());
}
