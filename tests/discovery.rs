//! Issue 16 part 6: `[discovery] local = true` finds the redis-server and
//! valkey-server processes of this host and polls them without a
//! `[[redis]]` entry. Real servers (one on a loopback TCP port, one with a
//! unix socket beside its port, Valkey when installed, one that needs a
//! password) and a real agent behind a private snmpd; what a manager
//! walks is checked.
//!
//! Other tests of this machine run servers of their own, which the agent
//! finds too: `[discovery] addresses` keeps it to this test's servers (the
//! agent would otherwise poll, and name its connection on, servers other
//! tests count the clients of), and nothing is asserted on counts.

// Starts real servers and tools: built only with the `system-tests`
// feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use testkit::servers::ServerKind;
use testkit::{wait_until, Agent, AgentConfig, Redis, Snmpd, REDIS_ROOT};

/// `redisInstanceTable` columns (`redis.3.1.1.C.index`).
const NAME: u32 = 2;
const ADDRESS: u32 = 3;
const STATE: u32 = 4;
const LAST_ERROR: u32 = 7;
const POLLS_OK: u32 = 8;

fn column(snmpd: &Snmpd, column: u32) -> BTreeMap<u32, String> {
    let walk = snmpd
        .numeric()
        .bulkwalk(&format!("{REDIS_ROOT}.3.1.1.{column}"));
    assert!(walk.success(), "{walk}");
    let prefix = format!("{REDIS_ROOT}.3.1.1.{column}.");
    walk.vars()
        .iter()
        .filter_map(|v| {
            let index = v.name.strip_prefix(&prefix)?.parse().ok()?;
            Some((index, v.text()))
        })
        .collect()
}

/// The row (index) serving `address`, when there is one.
fn row_of(snmpd: &Snmpd, address: &str) -> Option<u32> {
    column(snmpd, ADDRESS)
        .into_iter()
        .find(|(_, a)| a == address)
        .map(|(index, _)| index)
}

fn cell(snmpd: &Snmpd, column: u32, index: u32) -> testkit::Var {
    snmpd
        .numeric()
        .get_one(&format!("{REDIS_ROOT}.3.1.1.{column}.{index}"))
}

/// Waits until `address` is served, named `name`, up and polled twice;
/// returns its row.
fn expect_polled(snmpd: &Snmpd, address: &str, name: &str) -> u32 {
    let mut seen = String::new();
    let mut index = 0;
    let polled = wait_until(Duration::from_secs(15), || {
        let Some(i) = row_of(snmpd, address) else {
            seen = format!("no row: {:?}", column(snmpd, ADDRESS));
            return false;
        };
        index = i;
        let (n, state, polls) = (
            cell(snmpd, NAME, i).text(),
            cell(snmpd, STATE, i).value,
            cell(snmpd, POLLS_OK, i).number().unwrap_or(0),
        );
        seen = format!("{n:?} state {state} polls {polls}");
        n == name && state == "1" && polls >= 2
    });
    assert!(polled, "{address}: {seen}");
    index
}

fn reload(agent: &mut Agent, says: &str) -> String {
    let count = |agent: &Agent| agent.log().lines().filter(|l| l.contains(says)).count();
    let before = count(agent);
    agent.signal(libc::SIGHUP);
    assert!(
        wait_until(Duration::from_secs(10), || count(agent) > before),
        "no {says:?} after SIGHUP:\n{}",
        agent.log()
    );
    agent
        .log()
        .lines()
        .rfind(|l| l.contains(says))
        .unwrap()
        .to_string()
}

fn unix_socket_server(socket: &Path) -> Redis {
    Redis::start_with(&[
        &format!("unixsocket {}", socket.display()),
        "unixsocketperm 700",
    ])
}

#[test]
fn servers_of_this_host_are_found_polled_named_and_dropped_on_reload() {
    let snmpd = Snmpd::start();
    let sockets = tempfile::tempdir().unwrap();
    let stem = format!("disc{}", std::process::id());
    let socket = sockets.path().join(format!("{stem}.sock"));
    let tcp = Redis::start();
    let mut unix = unix_socket_server(&socket);
    let locked = Redis::start_with(&["requirepass not-for-discovery"]);
    let valkey = ServerKind::Valkey80
        .binary_or_skip("discovery of valkey-server")
        .map(|binary| Redis::start_binary(&binary, &[]));

    let mut patterns = vec![
        format!("\"{}\"", tcp.address()),
        format!("\"unix:{}\"", socket.display()),
        format!("\"{}\"", locked.address()),
    ];
    if let Some(valkey) = &valkey {
        patterns.push(format!("\"{}\"", valkey.address()));
    }
    let dir = tempfile::tempdir().unwrap();
    let mut agent = AgentConfig::new(&snmpd)
        .table(&format!(
            "[discovery]\nlocal = true\ninterval = 0\naddresses = [{}]\n",
            patterns.join(", ")
        ))
        .start(dir.path());

    expect_polled(&snmpd, &tcp.address(), &format!("port{}", tcp.port()));
    // The unix socket, not the port the same server listens on too.
    let unix_row = expect_polled(&snmpd, &format!("unix:{}", socket.display()), &stem);
    assert_eq!(
        row_of(&snmpd, &unix.address()),
        None,
        "{:?}",
        column(&snmpd, ADDRESS)
    );
    if let Some(valkey) = &valkey {
        expect_polled(&snmpd, &valkey.address(), &format!("port{}", valkey.port()));
    }
    // The server that needs a password: a row in error, no password tried
    // (the server's ACL LOG, where every failed AUTH is entered, is
    // empty), the agent still serving.
    let mut seen = String::new();
    let in_error = wait_until(Duration::from_secs(10), || {
        let Some(i) = row_of(&snmpd, &locked.address()) else {
            return false;
        };
        seen = format!(
            "state {} error {:?}",
            cell(&snmpd, STATE, i).value,
            cell(&snmpd, LAST_ERROR, i).text()
        );
        cell(&snmpd, STATE, i).value == "2" && cell(&snmpd, LAST_ERROR, i).text().contains("NOAUTH")
    });
    assert!(in_error, "{}: {seen}", locked.address());
    let acl_log = locked.cli(&["ACL", "LOG"]);
    assert!(
        !acl_log.contains("auth"),
        "the agent tried a password: {acl_log}"
    );
    assert!(agent.is_running(), "{}", agent.log());

    // Stopped, then a reload: its row leaves; the others keep theirs.
    let tcp_row = row_of(&snmpd, &tcp.address()).unwrap();
    unix.stop();
    let said = reload(&mut agent, "configuration reloaded");
    assert!(
        said.contains(&format!("\"{stem}\" removed (index {unix_row})")),
        "{said}"
    );
    assert!(
        said.contains(&format!("\"port{}\" kept (index {tcp_row})", tcp.port())),
        "{said}"
    );
    assert_eq!(row_of(&snmpd, &format!("unix:{}", socket.display())), None);
    assert!(cell(&snmpd, NAME, unix_row).is_no_such_instance());
    expect_polled(&snmpd, &tcp.address(), &format!("port{}", tcp.port()));
}

#[test]
fn a_server_started_later_is_found_by_the_periodic_scan() {
    let snmpd = Snmpd::start();
    let sockets = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let _agent = AgentConfig::new(&snmpd)
        .table(&format!(
            "[discovery]\nlocal = true\ninterval = 10\naddresses = [\"unix:{}/*\"]\n",
            sockets.path().display()
        ))
        .start(dir.path());
    let stem = format!("late{}", std::process::id());
    let socket = sockets.path().join(format!("{stem}.sock"));
    assert_eq!(row_of(&snmpd, &format!("unix:{}", socket.display())), None);
    let _late = unix_socket_server(&socket);
    // Within one interval (10 s) and a poll, without a reload.
    let mut seen = String::new();
    let found = wait_until(Duration::from_secs(25), || {
        let names = column(&snmpd, NAME);
        seen = format!("{names:?}");
        names.values().any(|n| *n == stem)
    });
    assert!(found, "{seen}");
    expect_polled(&snmpd, &format!("unix:{}", socket.display()), &stem);
}

#[test]
fn the_doctor_says_what_discovery_found_and_checks_it() {
    let sockets = tempfile::tempdir().unwrap();
    let stem = format!("doc{}", std::process::id());
    let socket = sockets.path().join(format!("{stem}.sock"));
    let server = unix_socket_server(&socket);
    let dir = tempfile::tempdir().unwrap();
    let config = AgentConfig::with_agentx("tcp:127.0.0.1:1")
        .table(&format!(
            "[discovery]\nlocal = true\naddresses = [\"unix:{}\"]\n",
            socket.display()
        ))
        .write(dir.path());
    let run = |config: &Path| {
        let out = std::process::Command::new(testkit::agent_bin())
            .args(["doctor", "-c", config.to_str().unwrap()])
            .args(["--snmpd-conf", "/nonexistent/snmpd.conf"])
            .output()
            .expect("redis-snmp doctor");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = run(&config);
    // What the scan found (every server of the host: the others are other
    // tests'), with this one among them, by its name, address and process.
    let found = text
        .lines()
        .find(|l| l.contains(" discovery: "))
        .unwrap_or_else(|| panic!("no discovery line:\n{text}"));
    let shown = format!(
        "{stem} at unix:{} (pid {} (redis-server))",
        socket.display(),
        server.pid()
    );
    assert!(found.contains(&shown), "{shown:?} not in {found:?}");
    // And the server it adds is checked like a configured one.
    assert!(
        text.lines()
            .any(|l| l.starts_with(&format!("ok    redis {stem}:"))),
        "{text}"
    );
    // Discovery off: neither.
    let off = AgentConfig::with_agentx("tcp:127.0.0.1:1")
        .redis("configured", &server.address(), "")
        .write(dir.path());
    let text = run(&off);
    assert!(
        !text.contains(" discovery: ") && !text.contains(&stem),
        "{text}"
    );
}

/// A program of any user that calls itself `redis-server` (here Python,
/// run through a link of that name, which is what `comm` shows) and
/// answers every command with 8 MiB: it gets a row, no secret, and the
/// agent reads no more of it than `max_reply_bytes`.
const IMPOSTOR: &str = r#"
import socket, sys
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(8)
open(sys.argv[1] + ".port", "w").write(str(listener.getsockname()[1]))
heard = open(sys.argv[1] + ".heard", "ab")
huge = b"$" + str(8 << 20).encode() + b"\r\n" + b"x" * (8 << 20) + b"\r\n"
while True:
    conn, _ = listener.accept()
    conn.settimeout(5)
    try:
        while True:
            data = conn.recv(65536)
            if not data:
                break
            heard.write(data)
            heard.flush()
            conn.sendall(huge)
    except OSError:
        pass
    conn.close()
"#;

#[test]
fn a_process_calling_itself_redis_server_gets_a_row_and_nothing_else() {
    let python = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3");
    let python = String::from_utf8_lossy(&python.stdout).trim().to_string();
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("redis-server");
    std::os::unix::fs::symlink(&python, &link).unwrap();
    let base = dir.path().join("impostor");
    let mut impostor = testkit::Proc::spawn(
        std::process::Command::new(&link)
            .args(["-c", IMPOSTOR, base.to_str().unwrap()])
            .stdout(std::process::Stdio::null()),
        "impostor",
    );
    let port_file = base.with_extension("port");
    assert!(wait_until(Duration::from_secs(10), || port_file.exists()));
    std::thread::sleep(Duration::from_millis(100));
    let port = std::fs::read_to_string(&port_file).unwrap();
    let address = format!("127.0.0.1:{port}");

    // A configured server with a password, to have a secret to keep.
    let guarded = Redis::start_with(&["requirepass kept-from-impostors"]);
    let password = dir.path().join("password");
    std::fs::write(&password, "kept-from-impostors\n").unwrap();
    let snmpd = Snmpd::start();
    let mut agent = AgentConfig::new(&snmpd)
        .redis(
            "guarded",
            &guarded.address(),
            &format!("password_file = \"{}\"\n", password.display()),
        )
        .table(&format!(
            "[discovery]\nlocal = true\ninterval = 0\naddresses = [\"{address}\"]\n"
        ))
        .start(dir.path());
    let mut seen = String::new();
    let refused = wait_until(Duration::from_secs(15), || {
        let Some(i) = row_of(&snmpd, &address) else {
            return false;
        };
        seen = format!(
            "{} state {} error {:?}",
            cell(&snmpd, NAME, i).text(),
            cell(&snmpd, STATE, i).value,
            cell(&snmpd, LAST_ERROR, i).text()
        );
        seen.starts_with(&format!("port{port} state 2"))
            && seen.contains("over the 4194304-byte limit")
    });
    assert!(refused, "{address}: {seen}");
    expect_polled(&snmpd, &guarded.address(), "guarded");
    let heard = std::fs::read(base.with_extension("heard")).unwrap_or_default();
    let heard = String::from_utf8_lossy(&heard);
    assert!(!heard.is_empty(), "the agent never spoke to it");
    assert!(
        !heard.contains("kept-from-impostors") && !heard.to_uppercase().contains("AUTH"),
        "sent to the impostor: {heard:?}"
    );
    // Bounded: the agent did not keep 8 MiB replies.
    let rss = testkit::status_kib(agent.pid(), "VmRSS:");
    assert!(rss < 64 * 1024, "agent RSS {rss} KiB");
    assert!(agent.is_running(), "{}", agent.log());
    impostor.kill();
}
