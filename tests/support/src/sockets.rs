//! What a process listens on, and who holds a socket.

use std::collections::HashSet;
use std::fs;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// One row of a `/proc/.../net/{tcp,tcp6,udp,udp6}` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocketRow {
    pub local: SocketAddr,
    /// The kernel's state number in hex, as the table shows it: `0A` is a
    /// listening TCP socket, `07` an unconnected UDP one.
    pub state: String,
    pub inode: u64,
}

/// The rows of a socket table's text (its header line skipped).
pub fn parse_socket_table(text: &str) -> Vec<SocketRow> {
    let parse_addr = |hex: &str| -> Option<SocketAddr> {
        let (ip, port) = hex.split_once(':')?;
        let port = u16::from_str_radix(port, 16).ok()?;
        let word = |s: &str| u32::from_str_radix(s, 16).ok().map(u32::to_ne_bytes);
        let ip = match ip.len() {
            8 => IpAddr::V4(Ipv4Addr::from(word(ip)?)),
            32 => {
                let mut b = [0u8; 16];
                for i in 0..4 {
                    b[i * 4..i * 4 + 4].copy_from_slice(&word(&ip[i * 8..i * 8 + 8])?);
                }
                IpAddr::V6(Ipv6Addr::from(b))
            }
            _ => return None,
        };
        Some(SocketAddr::new(ip, port))
    };
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() < 10 {
                return None;
            }
            Some(SocketRow {
                local: parse_addr(cols[1])?,
                state: cols[3].to_string(),
                inode: cols[9].parse().ok()?,
            })
        })
        .collect()
}

/// The socket inodes among a process's open files (`/proc/PID/fd`).
fn socket_inodes(pid: u32) -> HashSet<u64> {
    let mut inodes = HashSet::new();
    if let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) {
        for fd in fds.flatten() {
            if let Ok(target) = fs::read_link(fd.path()) {
                let t = target.to_string_lossy();
                if let Some(n) = t.strip_prefix("socket:[").and_then(|s| s.strip_suffix(']')) {
                    inodes.extend(n.parse::<u64>().ok());
                }
            }
        }
    }
    inodes
}

/// The TCP (listening) and UDP sockets a process has bound, as
/// `("tcp"|"udp", local address)`, read from /proc: the process's socket
/// inodes (/proc/PID/fd) matched against /proc/PID/net/{tcp,tcp6,udp,udp6},
/// the tables of the process's own network namespace (for a process in
/// the test's namespace, the same as /proc/net/…; for one started in a
/// [`crate::netns::Host`], its host's).
pub fn bound_sockets(pid: u32) -> Vec<(String, SocketAddr)> {
    let inodes = socket_inodes(pid);
    let mut found = Vec::new();
    for (file, proto, bound_state) in [
        ("tcp", "tcp", "0A"), // LISTEN
        ("tcp6", "tcp", "0A"),
        ("udp", "udp", "07"), // UDP sockets are "CLOSE" (unconnected)
        ("udp6", "udp", "07"),
    ] {
        let text = fs::read_to_string(format!("/proc/{pid}/net/{file}")).unwrap_or_default();
        for row in parse_socket_table(&text) {
            if row.state == bound_state && inodes.contains(&row.inode) {
                found.push((proto.to_string(), row.local));
            }
        }
    }
    found
}

/// Whether process `pid` has a UDP socket bound to exactly `addr`.
pub fn binds_udp(pid: u32, addr: SocketAddr) -> bool {
    bound_sockets(pid)
        .iter()
        .any(|(proto, a)| proto == "udp" && *a == addr)
}

/// The processes that hold one of these sockets open (PIDs, ascending),
/// found by scanning every `/proc/*/fd`. A socket outlives the process that
/// bound it in every child that inherited it (a forked handler, a detached
/// grandchild): the port stays taken while any of them runs.
pub fn socket_holders(inodes: &HashSet<u64>) -> Vec<u32> {
    let mut pids: Vec<u32> = fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| !socket_inodes(*pid).is_disjoint(inodes))
        .collect();
    pids.sort_unstable();
    pids
}

/// The processes holding a UDP socket bound to `port` (on any address) in
/// the namespace whose `udp`/`udp6` tables are given (their text).
pub(crate) fn udp_port_holders(tables: &[String], port: u16) -> Vec<u32> {
    let inodes: HashSet<u64> = tables
        .iter()
        .flat_map(|t| parse_socket_table(t))
        .filter(|row| row.local.port() == port)
        .map(|row| row.inode)
        .collect();
    if inodes.is_empty() {
        return Vec::new();
    }
    socket_holders(&inodes)
}

/// The UDP tables of the calling thread's network namespace.
pub(crate) fn own_udp_tables() -> Vec<String> {
    ["udp", "udp6"]
        .iter()
        .map(|f| fs::read_to_string(format!("/proc/thread-self/net/{f}")).unwrap_or_default())
        .collect()
}
