//! Issue 24 item 1 (review M2): the password goes only to the server's
//! user. While Redis is down any local user may listen on its port (or,
//! with a writable directory, serve its socket path); the agent checks who
//! holds the server's end of the connection before AUTH and sends nothing
//! to anyone but `server_user` (by default the users redis and valkey
//! that exist) or root.
//!
//! The real redis-server of these tests runs as root, as the test does:
//! root is always allowed, so they need no `server_user`. The thief is a
//! child process that became `nobody` (uid 65534) before creating its
//! socket, and records every byte it is sent.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::ffi::CString;
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use testkit::*;

const NOBODY: u32 = 65534;

/// Where a thief listens.
enum Place<'a> {
    Tcp(SocketAddr),
    /// `[::]:PORT`, IPv4 too: the agent's IPv4 connection then shows in
    /// `tcp6` as `::ffff:127.0.0.1`.
    DualStack(u16),
    /// `[::]:PORT`, IPv6 only: beside an IPv4 listener of the same port.
    V6Only(u16),
    Unix(&'a Path),
}

/// A listener of another user: a child process, forked and turned into
/// `uid` before it creates its socket, that accepts one connection after
/// another and hands back every byte it reads. Killed when dropped.
struct Thief {
    pid: libc::pid_t,
    received: Arc<Mutex<Vec<u8>>>,
    connections: Arc<AtomicUsize>,
}

fn pipe() -> (libc::c_int, libc::c_int) {
    let mut fds = [0; 2];
    // SAFETY: fds is valid for two ints.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    (fds[0], fds[1])
}

/// Reads `fd` to its end on a thread of its own, handing each chunk on.
fn drain(fd: libc::c_int, mut each: impl FnMut(&[u8]) + Send + 'static) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        loop {
            // SAFETY: buf is valid for its length; fd is ours.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                break;
            }
            each(&buf[..n as usize]);
        }
        // SAFETY: ours, read to its end.
        unsafe { libc::close(fd) };
    });
}

impl Thief {
    fn listen(place: Place, uid: u32) -> Thief {
        Thief::listen_slowly(place, uid, 0)
    }

    /// A thief that accepts nothing for its first `delay` seconds: the
    /// agent's connections wait in its queue meanwhile (where kernels
    /// before 6.17 show them as root's).
    fn listen_slowly(place: Place, uid: u32, delay: u32) -> Thief {
        // Everything the child needs is made before fork(): in the child of
        // a threaded process only the kernel is called.
        let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
        let (domain, len, dual) = match &place {
            Place::Tcp(SocketAddr::V4(a)) => {
                let sin = libc::sockaddr_in {
                    sin_family: libc::AF_INET as libc::sa_family_t,
                    sin_port: a.port().to_be(),
                    sin_addr: libc::in_addr {
                        s_addr: u32::from_ne_bytes(a.ip().octets()),
                    },
                    sin_zero: [0; 8],
                };
                // SAFETY: sockaddr_storage holds any sockaddr.
                unsafe { std::ptr::write((&raw mut storage).cast(), sin) };
                (libc::AF_INET, size_of::<libc::sockaddr_in>(), false)
            }
            Place::Tcp(SocketAddr::V6(_)) => unimplemented!("an IPv6 thief"),
            Place::DualStack(port) | Place::V6Only(port) => {
                let mut sin6: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
                sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
                sin6.sin6_port = port.to_be();
                // SAFETY: as above.
                unsafe { std::ptr::write((&raw mut storage).cast(), sin6) };
                let dual = matches!(place, Place::DualStack(_));
                (libc::AF_INET6, size_of::<libc::sockaddr_in6>(), dual)
            }
            Place::Unix(path) => {
                let mut sun: libc::sockaddr_un = unsafe { std::mem::zeroed() };
                sun.sun_family = libc::AF_UNIX as libc::sa_family_t;
                let bytes = CString::new(path.to_str().unwrap()).unwrap();
                let bytes = bytes.as_bytes_with_nul();
                assert!(bytes.len() <= sun.sun_path.len(), "socket path too long");
                for (d, s) in sun.sun_path.iter_mut().zip(bytes) {
                    *d = *s as libc::c_char;
                }
                // SAFETY: as above.
                unsafe { std::ptr::write((&raw mut storage).cast(), sun) };
                (libc::AF_UNIX, size_of::<libc::sockaddr_un>(), false)
            }
        };
        let (data_r, data_w) = pipe();
        let (conns_r, conns_w) = pipe();
        let (ready_r, ready_w) = pipe();
        // SAFETY: the child calls only async-signal-safe functions and ends
        // in _exit.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            // SAFETY: the child's own descriptors and memory.
            unsafe {
                thief_child(
                    domain,
                    (&raw const storage).cast(),
                    len as libc::socklen_t,
                    dual,
                    uid,
                    delay,
                    [ready_w, data_w, conns_w],
                )
            }
        }
        // SAFETY: the child's ends, not ours to keep.
        unsafe {
            libc::close(data_w);
            libc::close(conns_w);
            libc::close(ready_w);
        }
        let mut status = [0u8; 2];
        // SAFETY: status is valid for two bytes.
        let n = unsafe { libc::read(ready_r, status.as_mut_ptr().cast(), 2) };
        unsafe { libc::close(ready_r) };
        let thief = Thief {
            pid,
            received: Arc::new(Mutex::new(Vec::new())),
            connections: Arc::new(AtomicUsize::new(0)),
        };
        assert!(
            n == 2 && status == [0, 0],
            "the thief could not listen: step {}, errno {}",
            status[0],
            status[1]
        );
        let received = thief.received.clone();
        drain(data_r, move |bytes| {
            received.lock().unwrap().extend_from_slice(bytes)
        });
        let connections = thief.connections.clone();
        drain(conns_r, move |bytes| {
            connections.fetch_add(bytes.len(), Ordering::Relaxed);
        });
        thief
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::Relaxed)
    }

    fn received(&self) -> Vec<u8> {
        self.received.lock().unwrap().clone()
    }
}

/// The thief itself, after fork(): only system calls from here on. Its
/// standard descriptors become the three pipes (ready, data, one byte per
/// connection), and every other descriptor the test process had is
/// closed, so that no pipe of another test stays open in it.
unsafe fn thief_child(
    domain: libc::c_int,
    address: *const libc::sockaddr,
    len: libc::socklen_t,
    dual: bool,
    uid: u32,
    delay: u32,
    [ready, data, conns]: [libc::c_int; 3],
) -> ! {
    const CONNS: libc::c_int = 0;
    const READY: libc::c_int = 1;
    const DATA: libc::c_int = 2;
    unsafe {
        let fail = |step: u8| -> ! {
            let errno = *libc::__errno_location() as u8;
            libc::write(READY, [step, errno.max(1)].as_ptr().cast(), 2);
            libc::_exit(1)
        };
        if libc::dup2(ready, READY) < 0
            || libc::dup2(data, DATA) < 0
            || libc::dup2(conns, CONNS) < 0
        {
            libc::_exit(2);
        }
        libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
        // Gone with the test's thread that started it.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::syscall(libc::SYS_setgroups, 0usize, std::ptr::null::<libc::gid_t>()) != 0 {
            fail(1);
        }
        if libc::syscall(libc::SYS_setresgid, uid, uid, uid) != 0 {
            fail(2);
        }
        if libc::syscall(libc::SYS_setresuid, uid, uid, uid) != 0 {
            fail(3);
        }
        let fd = libc::socket(domain, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            fail(4);
        }
        let one: libc::c_int = 1;
        let zero: libc::c_int = 0;
        let int = size_of::<libc::c_int>() as libc::socklen_t;
        if domain == libc::AF_INET6 {
            let v6only: libc::c_int = if dual { zero } else { one };
            libc::setsockopt(
                fd,
                libc::IPPROTO_IPV6,
                libc::IPV6_V6ONLY,
                (&raw const v6only).cast(),
                int,
            );
        }
        if domain != libc::AF_UNIX {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_REUSEADDR,
                (&raw const one).cast(),
                int,
            );
        }
        if libc::bind(fd, address, len) != 0 {
            fail(5);
        }
        if libc::listen(fd, 16) != 0 {
            fail(6);
        }
        libc::write(READY, [0u8, 0].as_ptr().cast(), 2);
        libc::close(READY);
        libc::sleep(delay);
        let mut buf = [0u8; 4096];
        loop {
            let c = libc::accept(fd, std::ptr::null_mut(), std::ptr::null_mut());
            if c < 0 {
                continue;
            }
            libc::write(CONNS, b"c".as_ptr().cast(), 1);
            loop {
                let n = libc::read(c, buf.as_mut_ptr().cast(), buf.len());
                if n <= 0 {
                    break;
                }
                libc::write(DATA, buf.as_ptr().cast(), n as usize);
            }
            libc::close(c);
        }
    }
}

impl Drop for Thief {
    fn drop(&mut self) {
        // SAFETY: the child this thief forked, killed and reaped.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
            libc::waitpid(self.pid, std::ptr::null_mut(), 0);
        }
    }
}

/// A password file for the agent, readable by `uid` only.
fn password_file(dir: &Path, password: &str, uid: u32) -> PathBuf {
    let path = dir.join("password");
    write_file_mode(&path, &format!("{password}\n"), 0o600);
    std::os::unix::fs::chown(&path, Some(uid), None).unwrap();
    path
}

/// What a thief heard, for a failure message.
fn heard(thief: &Thief) -> String {
    String::from_utf8_lossy(&thief.received()).into_owned()
}

/// Takes Redis's port from it while it is down, as `nobody`, twice (on
/// 127.0.0.1, then on `[::]` for IPv4 too), and waits for 3 connections
/// each time: not one byte arrives, the instance is down saying whose
/// the port is. Redis back, the agent authenticates as before.
fn port_thieves_hear_nothing(snmpd: &Snmpd, agent: &Agent, redis: &mut Redis, password: &str) {
    let port = redis.port();
    snmpd.wait_instance_state(1, "1", "");
    redis.stop();
    let places = [
        Place::Tcp(SocketAddr::from(([127, 0, 0, 1], port))),
        Place::DualStack(port),
    ];
    for (n, place) in places.into_iter().enumerate() {
        let thief = Thief::listen(place, NOBODY);
        assert!(
            wait_until(Duration::from_secs(15), || thief.connections() >= 3),
            "the agent connected {} times in 15 s",
            thief.connections()
        );
        assert_eq!(
            thief.received(),
            b"",
            "thief {n} heard {:?} over {} connections",
            heard(&thief),
            thief.connections()
        );
        let (_, error) = snmpd.wait_instance_state(1, "2", "port held by uid 65534 (nobody)");
        assert!(
            error.contains("the password was not sent") && error.contains("server_user"),
            "{error}"
        );
        if n == 0 {
            // Said once, not on every poll (a verbose agent's debug lines
            // repeat it, as they do every error).
            let log = agent.log();
            assert_eq!(
                log.lines()
                    .filter(|l| l.contains(" WARN ") && l.contains("port held by uid 65534"))
                    .count(),
                1,
                "{} connections:\n{log}",
                thief.connections()
            );
        }
    }
    redis.start_again();
    snmpd.wait_instance_state(1, "1", "");
    assert!(!agent.log().contains(password));
}

#[test]
fn a_port_taken_while_redis_is_down_gets_no_password() {
    let password = format!("Thief{}proof", std::process::id());
    let mut redis = Redis::start_with(&[&format!("requirepass {password}")]);
    let snmpd = Snmpd::start();
    let dir = tempfile::tempdir().unwrap();
    let pw_file = password_file(dir.path(), &password, 0);
    let agent = AgentConfig::new(&snmpd)
        .redis(
            "main",
            &redis.address(),
            &format!(
                "username = \"default\"\npassword_file = \"{}\"",
                pw_file.display()
            ),
        )
        .start_quiet(dir.path());
    port_thieves_hear_nothing(&snmpd, &agent, &mut redis, &password);
}

/// Another user's IPv6-only listener on Redis's port (which the kernel
/// allows beside Redis's IPv4 one) takes none of the agent's IPv4
/// connections, and is not taken for their server: Redis is polled.
#[test]
fn an_ipv6_only_listener_of_another_user_beside_redis_stops_nothing() {
    let password = format!("Beside{}v6", std::process::id());
    let redis = Redis::start_with(&[&format!("requirepass {password}")]);
    let neighbour = Thief::listen(Place::V6Only(redis.port()), NOBODY);
    let snmpd = Snmpd::start();
    let dir = tempfile::tempdir().unwrap();
    let pw_file = password_file(dir.path(), &password, 0);
    let agent = AgentConfig::new(&snmpd)
        .redis(
            "main",
            &redis.address(),
            &format!("password_file = \"{}\"", pw_file.display()),
        )
        .start_quiet(dir.path());
    snmpd.wait_instance_state(1, "1", "");
    std::thread::sleep(Duration::from_secs(2));
    snmpd.wait_instance_state(1, "1", "");
    assert_eq!(neighbour.connections(), 0);
    assert!(!agent.log().contains("held by"), "{}", agent.log());
}

/// A thief that delays `accept()` while Redis is down: what the agent
/// sends waits in its queue, to be read once it accepts. Nothing must be
/// there. On this machine's kernel (6.17 or later) the queued connection
/// shows its listener's user; tests/peer_kernels.rs boots the older
/// kernels that show it as root's.
#[test]
fn a_port_thief_that_delays_accept_gets_no_password() {
    let password = format!("Slow{}thief", std::process::id());
    let mut redis = Redis::start_with(&[&format!("requirepass {password}")]);
    let snmpd = Snmpd::start();
    let dir = tempfile::tempdir().unwrap();
    let pw_file = password_file(dir.path(), &password, 0);
    let _agent = AgentConfig::new(&snmpd)
        .redis(
            "main",
            &redis.address(),
            &format!("password_file = \"{}\"", pw_file.display()),
        )
        .start_quiet(dir.path());
    snmpd.wait_instance_state(1, "1", "");
    let port = redis.port();
    redis.stop();
    let thief = Thief::listen_slowly(
        Place::Tcp(SocketAddr::from(([127, 0, 0, 1], port))),
        NOBODY,
        3,
    );
    let (_, error) = snmpd.wait_instance_state(1, "2", "port held by uid 65534 (nobody)");
    assert!(error.contains("the password was not sent"), "{error}");
    // Accepting now: what was queued arrives.
    assert!(
        wait_until(Duration::from_secs(15), || thief.connections() >= 2),
        "the agent connected {} times",
        thief.connections()
    );
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(thief.received(), b"", "the thief heard {:?}", heard(&thief));
}

/// A directory `nobody` may create sockets in, below one it may search.
fn shared_dir(parent: &Path) -> PathBuf {
    std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o711)).unwrap();
    let dir = parent.join("run");
    std::fs::create_dir(&dir).unwrap();
    std::os::unix::fs::chown(&dir, Some(NOBODY), Some(NOBODY)).unwrap();
    dir
}

#[test]
fn a_unix_socket_of_another_user_gets_no_password_unless_server_user_names_it() {
    let password = format!("Sock{}proof", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    let run = shared_dir(dir.path());
    let real = dir.path().join("redis.sock");
    let redis = Redis::start_with(&[
        &format!("requirepass {password}"),
        &format!("unixsocket {}", real.display()),
        "unixsocketperm 700",
    ]);
    let thief_path = run.join("redis.sock");
    let thief = Thief::listen(Place::Unix(&thief_path), NOBODY);
    // The same thief's user named as the server's: it is sent the password
    // (the setting is what decides).
    let trusted_path = run.join("trusted.sock");
    let trusted = Thief::listen(Place::Unix(&trusted_path), NOBODY);
    let snmpd = Snmpd::start();
    let pw_file = password_file(dir.path(), &password, 0);
    let pw = format!("password_file = \"{}\"", pw_file.display());
    let _agent = AgentConfig::new(&snmpd)
        .redis("real", &format!("unix:{}", real.display()), &pw)
        .redis("thief", &format!("unix:{}", thief_path.display()), &pw)
        .redis(
            "trusted",
            &format!("unix:{}", trusted_path.display()),
            &format!("{pw}\nserver_user = \"nobody\""),
        )
        .start_quiet(dir.path());
    snmpd.wait_instance_state(1, "1", "");
    assert!(
        wait_until(Duration::from_secs(15), || thief.connections() >= 3
            && trusted.connections() >= 1),
        "connections: {} and {}",
        thief.connections(),
        trusted.connections()
    );
    assert_eq!(thief.received(), b"", "the thief heard {:?}", heard(&thief));
    let (_, error) = snmpd.wait_instance_state(2, "2", "socket held by uid 65534 (nobody)");
    assert!(error.contains("not by redis"), "{error}");
    assert!(
        wait_until(Duration::from_secs(10), || heard(&trusted)
            .contains(&password)),
        "server_user = \"nobody\": the password did not go to nobody's socket: {:?}",
        heard(&trusted)
    );
    drop(redis);
}

/// The agent as the package runs it, as far as that goes without systemd:
/// the unit's own settings applied from debian/redis-snmp.service by
/// [`testkit::unit::UnitSandbox`] (its user, or `nobody` where that user
/// does not exist; `ProcSubset=` and `ProtectProc=`, which hide /proc/net
/// and other users' processes; the read-only system, private /tmp, no
/// capabilities…; the test prints what is applied and what is not). The
/// owner check reads /proc/self/net/tcp{,6} only, and needs no netlink
/// socket, which `RestrictAddressFamilies=` (not applied) would refuse.
#[test]
fn the_owner_is_seen_under_the_units_sandbox() {
    use testkit::unit::UnitSandbox;
    let sandbox = UnitSandbox::of_the_package();
    println!("{}", sandbox.describe());
    for setting in ["User", "ProcSubset", "ProtectProc", "PrivateTmp"] {
        assert!(
            sandbox.applies(setting),
            "{setting} is not applied: {}",
            sandbox.describe()
        );
    }
    // The options took: /proc/net is hidden, /proc/self/net/tcp is not.
    let (took, said) = sandbox.run(
        "sh",
        &[
            "-c",
            "test ! -e /proc/net && test -r /proc/self/net/tcp && test -r /proc/self/net/tcp6",
        ],
    );
    assert!(took, "the unit's /proc options as mounted here: {said}");

    let password = format!("Unit{}proof", std::process::id());
    let mut redis = Redis::start_with(&[&format!("requirepass {password}")]);
    let snmpd = Snmpd::start_tcp();
    let files = sandbox.files_dir(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let (uid, _) = testkit::unit::user_ids(sandbox.user()).expect("the sandbox's user");
    let pw_file = password_file(files.path(), &password, uid);
    let config = AgentConfig::new(&snmpd)
        .redis(
            "main",
            &redis.address(),
            &format!("password_file = \"{}\"", pw_file.display()),
        )
        .write(files.path());
    let agent = sandbox.start_agent(&config);
    port_thieves_hear_nothing(&snmpd, &agent, &mut redis, &password);
}
