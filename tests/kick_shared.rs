//! Two managers, one ledger in Redis (`[ledger]` in kick.toml): each
//! manager's handler runs as snmptrapd runs it (the binary, one
//! notification on its standard input), both with the same notification,
//! against a real redis-server whose `kick` user has the shipped
//! least-privilege ACL line (debian/examples/kick-ledger.acl). A request
//! heard by both is kicked once; a kick left by a manager that died is run
//! by the other; what a stranger writes into the ledger runs nothing; a
//! ledger that does not answer is a refusal within a second.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use testkit::kick::*;
use testkit::ledger::{acl_line, manager_files};
use testkit::redis::Redis;
use testkit::wait_until;

const WEB1: &str = "127.0.0.1";
/// db1's address, from which its run's report comes.
const DB1: &str = "127.0.0.2";
/// puppetEventTime and puppetEventConfigVersion of row 1: what tells one
/// request from the next.
const EVENT_TIME: &str = ".1.3.6.1.4.1.20267.401.4.1.2.1";
const EVENT_VERSION: &str = ".1.3.6.1.4.1.20267.401.4.1.8.1";

/// A Redis for the ledger, its `kick` user made by the shipped ACL line,
/// and the files the managers share: the password and the sealing key.
struct SharedLedger {
    redis: Redis,
    files: tempfile::TempDir,
}

impl SharedLedger {
    fn start() -> SharedLedger {
        SharedLedger::start_with(&[])
    }

    /// With extra redis.conf lines (TLS).
    fn start_with(lines: &[&str]) -> SharedLedger {
        let redis = Redis::start_with(lines);
        let words: Vec<String> = acl_line()
            .split_whitespace()
            .skip(1)
            .map(String::from)
            .collect();
        let mut args = vec!["ACL", "SETUSER"];
        args.extend(words.iter().map(String::as_str));
        redis.command(&args).expect("ACL SETUSER");
        let files = tempfile::tempdir().unwrap();
        manager_files(files.path());
        SharedLedger { redis, files }
    }

    /// `[ledger]` for manager `name`.
    fn section(&self, name: &str) -> String {
        format!(
            "[ledger]\nredis = \"redis://kick@127.0.0.1:{}/0\"\npassword_file = \"{}\"\n\
             key_file = \"{}\"\nmanager_name = \"{name}\"\n",
            self.redis.port(),
            self.path("password").display(),
            self.path("key").display()
        )
    }

    fn path(&self, name: &str) -> PathBuf {
        self.files.path().join(name)
    }

    fn cli(&self, args: &[&str]) -> String {
        self.redis.cli(args)
    }

    /// A command as the default user (not the ledger's), its reply
    /// unread: what someone who can write the Redis writes.
    fn write(&self, args: &[&str]) {
        self.redis.command(args).expect(args[0]);
    }
}

/// A manager's kick.toml: `roles` (`[[role]]` lines), the kick command
/// recording in `record` (shared by both managers), the ledger's section.
fn manager(
    ledger: &SharedLedger,
    name: &str,
    record: &Path,
    seconds: u32,
    roles: &str,
) -> KickSite {
    let command = recording_command(record, seconds);
    let section = ledger.section(name);
    KickSite::new(|_| {
        format!(
            "{command}window = 1\n[addresses]\n\"web1.example.net\" = [\"{WEB1}\"]\n{roles}{section}"
        )
    })
}

/// `Notify[TITLE]` changed on web1, its event at `time`.
fn change(title: &str, time: u64) -> String {
    let title = format!("\"{title}\"");
    let time = time.to_string();
    trap_input(
        WEB1,
        RESOURCE_CHANGED,
        &[
            (EVENT_TIME, &time),
            (EVENT_TYPE, "\"Notify\""),
            (EVENT_TITLE, &title),
            (EVENT_VERSION, "\"1700000000\""),
        ],
    )
}

/// A run of web1 ended (what every agent sends after each run).
fn run_ended() -> String {
    trap_input(WEB1, RUN_CHANGED, &[])
}

fn lines_of(record: &Path) -> Vec<String> {
    let text = fs::read_to_string(record.join("kicked")).unwrap_or_default();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    lines.sort();
    lines
}

/// Both managers hear every request (an agent sends each notification to
/// both, at once): each is kicked exactly once, by one of them, and the
/// other says it was taken.
#[test]
fn a_request_both_managers_hear_is_kicked_once() {
    let ledger = SharedLedger::start();
    let record = tempfile::tempdir().unwrap();
    let requests = 30u64;
    let roles: String = (0..requests)
        .map(|n| format!("[[role]]\nname = \"db{n}\"\nhosts = [\"db{n}.example.net\"]\n"))
        .collect();
    let mgr1 = manager(&ledger, "mgr1", record.path(), 0, &roles);
    let mgr2 = manager(&ledger, "mgr2", record.path(), 0, &roles);
    let mut taken = 0;
    let mut slowest = Duration::ZERO;
    for n in 0..requests {
        let input = change(&format!("kick -> db{n}"), 1_700_000_000 + n);
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(|| mgr1.handle(&input));
            let b = s.spawn(|| mgr2.handle(&input));
            (a.join().unwrap(), b.join().unwrap())
        });
        for (out, took) in [&a, &b] {
            assert!(out.status.success(), "{out:?}");
            slowest = slowest.max(*took);
            if String::from_utf8_lossy(&out.stderr).contains("taken by manager") {
                taken += 1;
            }
        }
    }
    let expected: Vec<String> = {
        let mut e: Vec<String> = (0..requests)
            .map(|n| format!("db{n}.example.net db{n}"))
            .collect();
        e.sort();
        e
    };
    assert!(
        wait_until(Duration::from_secs(30), || lines_of(record.path()).len()
            >= expected.len()),
        "{:?}\n{}",
        lines_of(record.path()),
        mgr1.status()
    );
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(lines_of(record.path()), expected, "each once, none lost");
    assert_eq!(taken, requests, "one handler of each pair saw it taken");
    println!("slowest handler answer: {slowest:?}");
    // Either manager's --status reads the one ledger.
    let status = mgr2.status();
    for n in 0..requests {
        assert!(
            status.contains(&format!("db{n}.example.net")),
            "db{n}:\n{status}"
        );
    }
    // And the keys are the ledger's prefix's only.
    let keys = ledger.cli(&["--no-auth-warning", "KEYS", "*"]);
    assert!(
        keys.lines().all(|k| k.starts_with("redis-snmp:kick:")),
        "{keys}"
    );
}

/// A manager dies with a kick waiting (deferred behind its host's running
/// kick): the other manager's handler, at the next notification it
/// hears, finds the dead manager's supervisor gone (its lease expired)
/// and runs the kick; nothing is run twice.
#[test]
fn a_kick_left_by_a_dead_manager_is_run_by_the_other() {
    let ledger = SharedLedger::start();
    let record = tempfile::tempdir().unwrap();
    let roles = "[[role]]\nname = \"db\"\nhosts = [\"db1.example.net\"]\n";
    let mgr1 = manager(&ledger, "mgr1", record.path(), 3, roles);
    let mgr2 = manager(&ledger, "mgr2", record.path(), 3, roles);
    let (out, _) = mgr1.handle(&change("kick -> db", 1));
    assert!(out.status.success(), "{out:?}");
    assert!(wait_until(Duration::from_secs(10), || lines_of(
        record.path()
    )
    .len()
        == 1));
    // While it runs, a second request: deferred, its supervisor on mgr1.
    let (out, _) = mgr1.handle(&change("kick -> db", 2));
    assert!(out.status.success(), "{out:?}");
    assert!(mgr1.status().contains("deferred"), "{}", mgr1.status());
    // mgr1 dies: its supervisors and their commands with it.
    mgr1.stop_kicks();
    let started = Instant::now();
    let taken_over = wait_until(Duration::from_secs(40), || {
        let (out, _) = mgr2.handle(&run_ended());
        String::from_utf8_lossy(&out.stderr).contains("supervised here now")
    });
    assert!(taken_over, "{}", mgr2.status());
    println!("taken over after {:?}", started.elapsed());
    assert!(
        wait_until(Duration::from_secs(20), || lines_of(record.path()).len()
            == 2),
        "{:?}\n{}",
        lines_of(record.path()),
        mgr2.status()
    );
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(
        lines_of(record.path()),
        ["db1.example.net db", "db1.example.net db"],
        "the first kick (interrupted by mgr1's death) and the deferred one, once\n{}",
        mgr2.status()
    );
    let status = mgr2.status();
    assert!(status.contains("interrupted"), "{status}");
    // The kick mgr2 took over is shown as run there.
    assert!(
        status
            .lines()
            .any(|l| l.contains("succeeded") && l.contains(" on mgr2")
                || l.contains("exit 0") && l.contains(" on mgr2")),
        "{status}"
    );
}

/// What someone who can write the ledger's Redis but has not the key
/// writes is refused, named in the log, and runs nothing: a forged kick
/// whose `[[on]]` command would run on the manager, an entry too large,
/// entries of the wrong type. A ledger of the wrong type is a clear
/// refusal of the handler.
#[test]
fn what_a_stranger_writes_into_the_ledger_runs_nothing() {
    let ledger = SharedLedger::start();
    let record = tempfile::tempdir().unwrap();
    let roles = "[[role]]\nname = \"db\"\nhosts = [\"db1.example.net\"]\n";
    let mgr2 = manager(&ledger, "mgr2", record.path(), 0, roles);
    let pwned = record.path().join("pwned");
    let forged = format!(
        "{{\"kick\":{{\"id\":\"1-1-1-00000000\",\"host\":\"db1.example.net\",\"role\":\"db\",\
         \"cause\":{{\"host\":\"web1.example.net\",\"resource\":\"Notify[x]\"}},\"generation\":1,\
         \"caused_by\":null,\"queued_at\":{now},\"started_at\":null,\"ended_at\":null,\"end\":null,\
         \"report\":null,\"supervisor\":{{\"pid\":1,\"start_ticks\":1,\"manager\":\"mgr9\"}},\
         \"on\":{{\"rule\":\"x\",\"run\":[\"/bin/sh\",\"-c\",\"touch {pwned}\"]}}}}}}",
        now = 4_000_000_000_000u64,
        pwned = pwned.display()
    );
    let unsealed = format!("{}{forged}", "0".repeat(64));
    ledger.write(&[
        "HSET",
        "redis-snmp:kick:kicks",
        "1-1-1-00000000.json",
        &unsealed,
    ]);
    let huge = "x".repeat(1 << 20);
    ledger.write(&[
        "HSET",
        "redis-snmp:kick:kicks",
        "2-1-1-00000000.json",
        &huge,
    ]);
    ledger.write(&["SET", "redis-snmp:kick:state", "not a hash"]);
    let (out, took) = mgr2.handle(&run_ended());
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{out:?}");
    assert!(
        log.contains("1-1-1-00000000.json is refused: its seal does not hold"),
        "{log}"
    );
    assert!(log.contains("2-1-1-00000000.json is refused"), "{log}");
    assert!(took < Duration::from_secs(1), "{took:?}");
    // The kicks themselves of the wrong type: nothing can be judged.
    ledger.write(&["DEL", "redis-snmp:kick:kicks"]);
    ledger.write(&["SET", "redis-snmp:kick:kicks", "not a hash"]);
    let (out, _) = mgr2.handle(&change("kick -> db", 5));
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{log}");
    assert!(log.contains("WRONGTYPE"), "{log}");
    std::thread::sleep(Duration::from_secs(3));
    assert!(!pwned.exists(), "a forged record ran its command");
    assert!(lines_of(record.path()).is_empty(), "nothing was kicked");
}

/// A ledger that refuses connections, or accepts them and never answers:
/// the handler says so and ends within a second; nothing is run.
#[test]
fn a_ledger_that_does_not_answer_is_a_refusal_within_a_second() {
    let ledger = SharedLedger::start();
    let record = tempfile::tempdir().unwrap();
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    for port in [closed, silent.local_addr().unwrap().port()] {
        let roles = "[[role]]\nname = \"db\"\nhosts = [\"db1.example.net\"]\n";
        let site = manager(&ledger, "mgr1", record.path(), 0, roles);
        let text = fs::read_to_string(site.config()).unwrap().replace(
            &format!("127.0.0.1:{}/0", ledger.redis.port()),
            &format!("127.0.0.1:{port}/0"),
        );
        fs::write(site.config(), text).unwrap();
        let (out, took) = site.handle(&change("kick -> db", 1));
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{log}");
        assert!(log.contains("ledger"), "{log}");
        assert!(
            took < Duration::from_secs(1),
            "port {port}: {took:?}\n{log}"
        );
    }
    std::thread::sleep(Duration::from_secs(1));
    assert!(lines_of(record.path()).is_empty());
}

/// The rules judge by the one ledger whichever manager hears a request: a
/// host kicked by mgr1 is "being kicked" and then within its window for
/// mgr2, and a role's budget spent on mgr1 is spent for mgr2.
#[test]
fn the_rules_hold_across_managers() {
    let ledger = SharedLedger::start();
    let record = tempfile::tempdir().unwrap();
    let roles = "\"db1.example.net\" = [\"127.0.0.2\"]\n\
                 [[role]]\nname = \"db\"\nhosts = [\"db1.example.net\"]\n\
                 [[role]]\nname = \"cache\"\nhosts = [\"c1.example.net\"]\nbudget_per_hour = 1\n";
    let mgr1 = manager(&ledger, "mgr1", record.path(), 2, roles);
    let mgr2 = manager(&ledger, "mgr2", record.path(), 2, roles);
    assert!(mgr1.handle(&change("kick -> db", 1)).0.status.success());
    assert!(wait_until(Duration::from_secs(10), || lines_of(
        record.path()
    )
    .len()
        == 1));
    // db1 runs its kick (2 s): mgr2's request for it waits, then runs.
    let (out, _) = mgr2.handle(&change("kick -> db", 2));
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("deferred"), "{log}");
    // db1's report of its kicked run reaches mgr2 alone: the outcome is in
    // the one ledger all the same.
    assert!(mgr2
        .handle(&trap_input(DB1, RUN_CHANGED, &[]))
        .0
        .status
        .success());
    assert!(mgr1.handle(&change("kick -> cache", 3)).0.status.success());
    // Its kick over and past the window (1 s): only the budget holds.
    assert!(wait_until(Duration::from_secs(10), || mgr1
        .status_lines("c1.example.net")
        .iter()
        .any(|l| l.contains("exit 0"))));
    std::thread::sleep(Duration::from_millis(1200));
    let (out, _) = mgr2.handle(&change("kick -> cache", 4));
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("deferred") && log.contains("budget"), "{log}");
    assert!(
        wait_until(Duration::from_secs(20), || lines_of(record.path())
            .iter()
            .filter(|l| l.starts_with("db1"))
            .count()
            == 2),
        "{}",
        mgr1.status()
    );
    assert_eq!(
        lines_of(record.path())
            .iter()
            .filter(|l| l.starts_with("c1"))
            .count(),
        1,
        "the budget's second kick waits for its hour\n{}",
        mgr2.status()
    );
    let status = mgr1.status();
    assert!(
        status
            .lines()
            .any(|l| l.contains("db1.example.net") && l.contains("succeeded")),
        "{status}"
    );
}

/// Over TLS (`rediss://`), verified against `tls_ca_file` for
/// `tls_server_name`: kicked; against another CA: a refusal within a
/// second that says why, nothing run.
#[test]
fn a_ledger_over_tls_is_verified() {
    let pki = tempfile::tempdir().unwrap();
    let dir = pki.path();
    testkit::pki::make_ca(dir, "ca", "test CA", 2);
    testkit::pki::make_ca(dir, "other-ca", "other CA", 2);
    testkit::pki::make_request(dir, "server", "/CN=ledger.test");
    testkit::pki::sign(
        dir,
        "server.csr",
        "ca",
        "server.pem",
        2,
        "subjectAltName=DNS:ledger.test",
    );
    let tls_port = testkit::free_port();
    let d = dir.display();
    let ledger = SharedLedger::start_with(&[
        &format!("tls-port {tls_port}"),
        &format!("tls-cert-file {d}/server.pem"),
        &format!("tls-key-file {d}/server.key"),
        &format!("tls-ca-cert-file {d}/ca.pem"),
        "tls-auth-clients no",
    ]);
    let record = tempfile::tempdir().unwrap();
    let roles = "[[role]]\nname = \"db\"\nhosts = [\"db1.example.net\"]\n";
    // Kept to the end: a site's drop ends its supervisors.
    let mut sites = Vec::new();
    for (ca, kicked) in [("other-ca", false), ("ca", true)] {
        let site = manager(&ledger, "mgr1", record.path(), 0, roles);
        let text = fs::read_to_string(site.config()).unwrap().replace(
            &format!("redis://kick@127.0.0.1:{}/0\"", ledger.redis.port()),
            &format!(
                "rediss://kick@127.0.0.1:{tls_port}/0\"\ntls_ca_file = \"{d}/{ca}.pem\"\n\
                 tls_server_name = \"ledger.test\""
            ),
        );
        fs::write(site.config(), text).unwrap();
        let (out, took) = site.handle(&change("kick -> db", 1));
        let log = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.success(), kicked, "{ca}: {log}");
        assert!(took < Duration::from_secs(1), "{took:?}");
        if !kicked {
            assert!(log.contains("not signed by a CA"), "{log}");
            std::thread::sleep(Duration::from_secs(1));
            assert!(lines_of(record.path()).is_empty());
        }
        sites.push(site);
    }
    let kicked = wait_until(Duration::from_secs(20), || {
        lines_of(record.path()) == ["db1.example.net db"]
    });
    assert!(kicked, "{}", sites[1].status());
}

/// The shipped ACL line is what the handler needs: a copy without one of
/// its grants (`+eval`, by which every write goes) is refused with the
/// server's word, and nothing is run.
#[test]
fn the_acl_line_without_a_grant_is_refused() {
    let ledger = SharedLedger::start();
    ledger.write(&["ACL", "SETUSER", "kick", "-eval"]);
    let record = tempfile::tempdir().unwrap();
    let roles = "[[role]]\nname = \"db\"\nhosts = [\"db1.example.net\"]\n";
    let site = manager(&ledger, "mgr1", record.path(), 0, roles);
    let (out, took) = site.handle(&change("kick -> db", 1));
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{log}");
    assert!(log.contains("NOPERM"), "{log}");
    assert!(took < Duration::from_secs(1), "{took:?}");
    std::thread::sleep(Duration::from_secs(1));
    assert!(lines_of(record.path()).is_empty());
}
