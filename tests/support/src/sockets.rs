//! What a process listens on.

use std::fs;

/// The TCP (listening) and UDP sockets a process has bound, as
/// `("tcp"|"udp", local address)`, read from /proc: the process's socket
/// inodes (/proc/PID/fd) matched against /proc/net/{tcp,tcp6,udp,udp6}.
pub fn bound_sockets(pid: u32) -> Vec<(String, std::net::SocketAddr)> {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
    let mut inodes = std::collections::HashSet::new();
    if let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) {
        for fd in fds.flatten() {
            if let Ok(target) = fs::read_link(fd.path()) {
                let t = target.to_string_lossy();
                if let Some(n) = t.strip_prefix("socket:[").and_then(|s| s.strip_suffix(']')) {
                    inodes.insert(n.to_string());
                }
            }
        }
    }
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
    let mut found = Vec::new();
    for (file, proto, bound_state) in [
        ("tcp", "tcp", "0A"), // LISTEN
        ("tcp6", "tcp", "0A"),
        ("udp", "udp", "07"), // UDP sockets are "CLOSE" (unconnected)
        ("udp6", "udp", "07"),
    ] {
        let text = fs::read_to_string(format!("/proc/net/{file}")).unwrap_or_default();
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() < 10 || cols[3] != bound_state || !inodes.contains(cols[9]) {
                continue;
            }
            if let Some(addr) = parse_addr(cols[1]) {
                found.push((proto.to_string(), addr));
            }
        }
    }
    found
}
