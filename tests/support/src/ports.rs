//! Ports.

use crate::*;
use std::fs::{self, File};
use std::net::{TcpListener, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

/// Ports are taken from this range, which lies below Linux's default
/// ephemeral range (32768-60999), so the kernel never hands one out as the
/// source port of a client socket (snmpget, redis-cli, the agent) between
/// the moment we pick it and the moment the server binds it.
pub(crate) const PORT_LO: u16 = 20000;
pub(crate) const PORT_HI: u16 = 32000; // exclusive

/// Lock files of the ports this process holds, kept open (and so locked)
/// until the process exits: a server restarted on the same port finds it
/// still reserved for it.
pub(crate) static HELD_PORTS: Mutex<Vec<File>> = Mutex::new(Vec::new());
pub(crate) static PORT_CURSOR: AtomicU64 = AtomicU64::new(0);

/// The kernel's ephemeral port range, if it can be read.
pub(crate) fn ephemeral_range() -> Option<(u16, u16)> {
    let text = fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    let mut it = text.split_whitespace().map(|s| s.parse::<u16>().ok());
    Some((it.next()??, it.next()??))
}

/// A port on 127.0.0.1 that is free for both TCP and UDP and that no other
/// test process (of this user) will be given.
///
/// Scheme: every process starts at its own pseudo-random offset (from its
/// PID and the clock) in 20000..32000 and walks the range. A candidate is
/// taken only if (1) a non-blocking `flock` on
/// `$TMPDIR/redis-snmp-tests-$UID/ports/<port>` succeeds, and (2) binding it
/// on 127.0.0.1 for TCP and for UDP succeeds. The lock closes the race that
/// a bind check alone leaves open (two processes both see the port free
/// before either server binds it); the range keeps client sockets off it;
/// the bind check skips ports other programs use. The lock is held until
/// the process exits and is released by the kernel even after a crash.
pub fn free_port() -> u16 {
    let dir = shared_tmp("ports");
    let span = u64::from(PORT_HI - PORT_LO);
    let start = {
        static START: OnceLock<u64> = OnceLock::new();
        *START.get_or_init(|| {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0);
            let pid = u64::from(std::process::id());
            (pid.wrapping_mul(2654435761) ^ nanos.wrapping_mul(40503)) % span
        })
    };
    let ephemeral = ephemeral_range();
    for _ in 0..span {
        let k = PORT_CURSOR.fetch_add(1, Ordering::Relaxed);
        let port = PORT_LO + ((start + k) % span) as u16;
        if let Some((lo, hi)) = ephemeral {
            if (lo..=hi).contains(&port) {
                continue;
            }
        }
        let Some(lock) = flock(&dir.join(port.to_string()), false) else {
            continue;
        };
        let tcp = TcpListener::bind(("127.0.0.1", port));
        let udp = UdpSocket::bind(("127.0.0.1", port));
        if tcp.is_ok() && udp.is_ok() {
            HELD_PORTS.lock().unwrap().push(lock);
            return port;
        }
    }
    panic!("no free port in {PORT_LO}..{PORT_HI}");
}

/// The lock file that reserves `port` (for the harness's own tests).
pub fn port_lock_path(port: u16) -> PathBuf {
    shared_tmp("ports").join(port.to_string())
}

/// Tries to take the lock of `port` through a new open file: fails while
/// any process (this one included) holds the reservation.
pub fn try_lock_port(port: u16) -> bool {
    flock(&port_lock_path(port), false).is_some()
}
