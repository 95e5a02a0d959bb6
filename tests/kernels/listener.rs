//! A listener for the guests of tests/peer_kernels.rs: a port thief, or a
//! slow Redis, that takes its time to accept. Built by rustc alone (std
//! only, statically linked) into the guest's busybox initramfs.
//!
//! `listener NAME UID tcp:ADDRESS|unix:PATH DELAY OPEN[+]`
//!
//! Becomes `UID` (groups dropped) before it creates its socket, listens,
//! and accepts nothing for `DELAY` seconds (a TCP one longer, until a
//! connection waited): the connections made meanwhile wait in its queue,
//! and it prints each way the kernel's table showed them (`queued st …
//! uid …`). Then for `OPEN` seconds
//! (longer, until one came; with `OPEN+`, until it was sent something)
//! it accepts every connection and reads what it was sent, and prints one
//! line:
//! `GUEST NAME connections N heard TEXT` (TEXT escaped, `-` for nothing).
//!
//! `listener as UID PROGRAM ARGS…` runs PROGRAM as `UID` (busybox's
//! `setpriv` cannot change users).

use std::io::Read;
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::time::{Duration, Instant};

extern "C" {
    fn setgroups(size: usize, list: *const u32) -> i32;
    fn setresgid(r: u32, e: u32, s: u32) -> i32;
    fn setresuid(r: u32, e: u32, s: u32) -> i32;
}

/// The longest a listener waits for its first connection.
const LONGER: Duration = Duration::from_secs(30);

enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener),
}

fn escaped(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "-".into();
    }
    bytes
        .iter()
        .map(|&b| match b {
            b'!'..=b'~' if b != b'\\' => (b as char).to_string(),
            _ => format!("\\x{b:02x}"),
        })
        .collect()
}

/// The connections to `port` (their local port) that wait in its queue,
/// not accepted (no inode) and not closed for good: established (`01`),
/// half open (`03`) or closed by the client only (`08`). Each as its
/// client's address and `queued st 01 uid 0`, how the table shows it.
fn queued(port: u16) -> Vec<(String, String)> {
    let suffix = format!(":{port:04X}");
    let mut rows = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() > 9
                && f[1].ends_with(&suffix)
                && ["01", "03", "08"].contains(&f[3])
                && f[9] == "0"
            {
                rows.push((f[2].to_string(), format!("queued st {} uid {}", f[3], f[7])));
            }
        }
    }
    rows
}

/// Becomes `uid`, its group the same number, without supplementary groups.
fn become_user(uid: u32) -> bool {
    // SAFETY: plain system calls on this process's credentials.
    unsafe {
        setgroups(0, std::ptr::null()) == 0
            && setresgid(uid, uid, uid) == 0
            && setresuid(uid, uid, uid) == 0
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let [_, verb, uid, program, rest @ ..] = &args[..] {
        if verb == "as" {
            use std::os::unix::process::CommandExt;
            assert!(
                become_user(uid.parse().expect("UID")),
                "cannot become uid {uid}"
            );
            let e = std::process::Command::new(program).args(rest).exec();
            panic!("{program}: {e}");
        }
    }
    let [_, name, uid, place, delay, open] = &args[..] else {
        eprintln!("usage: listener NAME UID tcp:ADDRESS|unix:PATH DELAY OPEN");
        std::process::exit(2);
    };
    let uid: u32 = uid.parse().expect("UID");
    let seconds = |s: &str| Duration::from_secs_f64(s.parse().expect("seconds"));
    // `OPEN+`: and longer, until it heard something.
    let (open, until_heard) = match open.strip_suffix('+') {
        Some(open) => (open, true),
        None => (open.as_str(), false),
    };
    let (delay, open) = (seconds(delay), seconds(open));
    assert!(become_user(uid), "{name}: cannot become uid {uid}");
    let (listener, port) = if let Some(address) = place.strip_prefix("tcp:") {
        let l = TcpListener::bind(address).unwrap_or_else(|e| panic!("{name}: {address}: {e}"));
        let port = l.local_addr().unwrap().port();
        (Listener::Tcp(l), Some(port))
    } else if let Some(path) = place.strip_prefix("unix:") {
        let l = UnixListener::bind(path).unwrap_or_else(|e| panic!("{name}: {path}: {e}"));
        (Listener::Unix(l), None)
    } else {
        panic!("{name}: {place} is neither tcp: nor unix:");
    };
    println!("GUEST {name} listening as uid {uid} at {place}");
    // DELAY seconds, and longer (up to LONGER) until a connection waited
    // in the queue, for a guest slow to start the agent.
    let mut rows = std::collections::BTreeSet::new();
    let mut clients = std::collections::BTreeSet::new();
    let quiet_since = Instant::now();
    while quiet_since.elapsed() < delay
        || (port.is_some() && clients.is_empty() && quiet_since.elapsed() < LONGER)
    {
        for (client, row) in port.map(queued).unwrap_or_default() {
            clients.insert(client);
            rows.insert(row);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    for row in rows {
        println!("GUEST {name} {row}");
    }

    let mut heard = Vec::new();
    let mut connections = 0;
    let open_since = Instant::now();
    let wait = Some(Duration::from_millis(300));
    // OPEN seconds, and longer (up to LONGER) until one connection came,
    // or something was heard, for a guest slow to start the agent.
    let waiting =
        |connections: usize, heard: &[u8]| connections == 0 || (until_heard && heard.is_empty());
    while open_since.elapsed() < open
        || (waiting(connections, &heard) && open_since.elapsed() < LONGER)
    {
        let accepted: Option<Box<dyn Read>> = match &listener {
            Listener::Tcp(l) => {
                l.set_nonblocking(true).unwrap();
                l.accept().ok().map(|(s, _)| {
                    s.set_nonblocking(false).unwrap();
                    s.set_read_timeout(wait).unwrap();
                    Box::new(s) as Box<dyn Read>
                })
            }
            Listener::Unix(l) => {
                l.set_nonblocking(true).unwrap();
                l.accept().ok().map(|(s, _)| {
                    s.set_nonblocking(false).unwrap();
                    s.set_read_timeout(wait).unwrap();
                    Box::new(s) as Box<dyn Read>
                })
            }
        };
        let Some(mut stream) = accepted else {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        connections += 1;
        let mut buf = [0u8; 4096];
        while let Ok(n) = stream.read(&mut buf) {
            if n == 0 || heard.len() > 64 << 10 {
                break;
            }
            heard.extend_from_slice(&buf[..n]);
        }
    }
    println!(
        "GUEST {name} connections {connections} heard {}",
        escaped(&heard)
    );
}
