//! The kernel's tables of sockets, as `/proc/self/net/tcp`, `tcp6` and
//! `unix` list them, and the listening sockets in them.
//!
//! `/proc/self/net`, not `/proc/net`: the package's unit mounts `/proc`
//! with `ProcSubset=pid`, which leaves out every top-level entry that is
//! not a process (`/proc/net` among them) but keeps `/proc/self`, whose
//! `net` lists the same network namespace. (sock_diag netlink would do
//! too, but needs `AF_NETLINK`, which the unit's `RestrictAddressFamilies`
//! refuses.)
//!
//! The unix table is bytes: a path is printed as it was bound, any byte
//! but NUL, so it may not be UTF-8, may hold escape sequences, and may
//! hold a newline, which makes what follows it read as a line of its
//! own, with the inode and the path of its author's choosing. So a line
//! of this table says what a socket *may* be; discovery believes a path
//! only once the server it belongs to answers on it (`super::trust`).

use std::ffi::OsStr;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A listening socket of this host.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Listener {
    Tcp { address: SocketAddr, uid: u32 },
    Unix(PathBuf),
}

/// The tables, under a `/proc`.
pub const TCP: &str = "self/net/tcp";
pub const TCP6: &str = "self/net/tcp6";
pub const UNIX: &str = "self/net/unix";

/// The listening sockets of `/proc/self/net/tcp` or `tcp6` (`st` `0A`),
/// each with its inode. Lines that do not read are skipped.
///
/// The addresses are the kernel's 32-bit words printed in this host's
/// byte order (`0100007F` is 127.0.0.1 on a little-endian host).
pub fn parse_tcp(text: &str) -> Vec<(u64, Listener)> {
    let mut out = Vec::new();
    for line in text.lines().skip(1) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // sl local rem st tx:rx tr:when retrnsmt uid timeout inode
        if fields.len() < 10 || fields[3] != "0A" {
            continue;
        }
        let (Some(address), Ok(uid), Ok(inode)) = (
            crate::proc_net::parse_socket_address(fields[1]),
            fields[7].parse::<u32>(),
            fields[9].parse::<u64>(),
        ) else {
            continue;
        };
        out.push((inode, Listener::Tcp { address, uid }));
    }
    out
}

/// The listening stream sockets with a path in `/proc/self/net/unix`
/// (flag `__SO_ACCEPTCON`, `00010000`; type `0001`, stream), each with
/// its inode, the path as its bytes. Abstract sockets (`@name`) have no
/// file to connect to and are left out. One line that does not read (or a
/// path that is not UTF-8) costs that line, not the table.
pub fn parse_unix(table: &[u8]) -> Vec<(u64, Listener)> {
    let mut out = Vec::new();
    for line in table.split(|&b| b == b'\n').skip(1) {
        // Num: RefCount Protocol Flags Type St Inode Path; the path is the
        // rest of the line (it may hold spaces).
        let mut rest = line.trim_ascii_start();
        let mut fields: Vec<&[u8]> = Vec::with_capacity(7);
        for _ in 0..7 {
            let end = rest
                .iter()
                .position(u8::is_ascii_whitespace)
                .unwrap_or(rest.len());
            fields.push(&rest[..end]);
            rest = rest[end..].trim_ascii_start();
        }
        let path = rest;
        if fields[3] != b"00010000" || fields[4] != b"0001" || !path.starts_with(b"/") {
            continue;
        }
        let inode = std::str::from_utf8(fields[6])
            .ok()
            .and_then(|s| s.parse::<u64>().ok());
        if let Some(inode) = inode {
            out.push((
                inode,
                Listener::Unix(PathBuf::from(OsStr::from_bytes(path))),
            ));
        }
    }
    out
}

/// The inode of a `/proc/PID/fd` link's target `socket:[1234]`.
pub fn socket_inode(target: &Path) -> Option<u64> {
    target
        .to_str()?
        .strip_prefix("socket:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// The address a client of this host reaches a TCP listener at, when it
/// is one discovery may poll: a loopback address as it is, an unspecified
/// one (every address) as the loopback address of its family. Any other
/// address, even one of this host, is left to a `[[redis]]` entry: with
/// `IP_FREEBIND` any user may listen on an address that is not this
/// host's at all, and connecting there leaves the host.
pub fn local_address(address: &SocketAddr) -> Option<IpAddr> {
    let ip = match address.ip() {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    };
    match ip {
        IpAddr::V4(v4) if v4.is_unspecified() => Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        IpAddr::V6(v6) if v6.is_unspecified() => Some(IpAddr::V6(Ipv6Addr::LOCALHOST)),
        ip if ip.is_loopback() => Some(ip),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/discovery")
            .join(name);
        std::fs::read(path).unwrap()
    }

    fn tcp(address: &str, uid: u32) -> Listener {
        Listener::Tcp {
            address: address.parse().unwrap(),
            uid,
        }
    }

    // The fixtures were read on a little-endian host; the tables print
    // the host's byte order, so they read right only on one.
    #[cfg(target_endian = "little")]
    #[test]
    fn the_kernels_tables_as_captured() {
        let text = |name| String::from_utf8(fixture(name)).unwrap();
        let v4 = parse_tcp(&text("proc-net-tcp"));
        // The TIME_WAIT line (06) is not a listener.
        assert_eq!(
            v4,
            [
                (1065, tcp("0.0.0.0:2024", 0)),
                (1638085, tcp("127.0.0.1:16379", 0)),
                (1638850, tcp("0.0.0.0:16380", 0)),
            ]
        );
        let v6 = parse_tcp(&text("proc-net-tcp6"));
        assert_eq!(
            v6,
            [
                (1638086, tcp("[::1]:16379", 0)),
                (1638851, tcp("[::]:16380", 0)),
            ]
        );
        let unix = parse_unix(&fixture("proc-net-unix"));
        assert_eq!(
            unix,
            [(1638087, Listener::Unix("/tmp/h4cap/redis.sock".into()))]
        );
    }

    #[test]
    fn odd_lines_are_skipped() {
        let header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
        for line in [
            "   0: 0100007F:ZZZZ 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1",
            "   0: 0100007F 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1",
            "   0: 0100007F:18EB 00000000:0000 0A",
            "",
        ] {
            assert!(parse_tcp(&format!("{header}{line}\n")).is_empty(), "{line}");
        }
        let header = "Num       RefCount Protocol Flags    Type St Inode Path\n";
        for line in [
            // Abstract, a datagram socket, not listening, too short.
            "0000000000000000: 00000002 00000000 00010000 0001 01 17 @/tmp/.X11-unix/X0",
            "0000000000000000: 00000002 00000000 00010000 0002 01 17 /run/systemd/notify",
            "0000000000000000: 00000003 00000000 00000000 0001 03 17 /run/redis.sock",
            "0000000000000000: 00000002",
        ] {
            assert!(
                parse_unix(format!("{header}{line}\n").as_bytes()).is_empty(),
                "{line}"
            );
        }
        let spaced = format!(
            "{header}0000000000000000: 00000002 00000000 00010000 0001 01 17 /tmp/a b.sock\n"
        );
        assert_eq!(
            parse_unix(spaced.as_bytes()),
            [(17, Listener::Unix("/tmp/a b.sock".into()))]
        );
    }

    /// Review M5: one path with a byte that is not UTF-8 made the whole
    /// table unreadable, and so every unix socket of the host vanished.
    #[test]
    fn a_path_that_is_not_utf8_costs_only_its_own_line() {
        let mut table = b"Num       RefCount Protocol Flags    Type St Inode Path\n".to_vec();
        table.extend_from_slice(
            b"0000000000000000: 00000002 00000000 00010000 0001 01 17 /tmp/x/\xff\x1b[2K.sock\n",
        );
        table.extend_from_slice(
            b"0000000000000000: 00000002 00000000 00010000 0001 01 18 /run/redis/redis-server.sock\n",
        );
        let parsed = parse_unix(&table);
        assert_eq!(parsed.len(), 2);
        assert_eq!(
            parsed[1],
            (18, Listener::Unix("/run/redis/redis-server.sock".into()))
        );
        let Listener::Unix(odd) = &parsed[0].1 else {
            panic!("{parsed:?}")
        };
        assert_eq!(odd.as_os_str().as_bytes(), b"/tmp/x/\xff\x1b[2K.sock");
    }

    #[test]
    fn only_loopback_or_every_address_is_local() {
        let local = |a: &str| local_address(&a.parse().unwrap()).map(|ip| ip.to_string());
        assert_eq!(local("127.0.0.1:6379").as_deref(), Some("127.0.0.1"));
        assert_eq!(local("127.0.0.2:6379").as_deref(), Some("127.0.0.2"));
        assert_eq!(local("0.0.0.0:6379").as_deref(), Some("127.0.0.1"));
        assert_eq!(local("[::]:6379").as_deref(), Some("::1"));
        assert_eq!(local("[::1]:6379").as_deref(), Some("::1"));
        assert_eq!(
            local("[::ffff:127.0.0.1]:6379").as_deref(),
            Some("127.0.0.1")
        );
        // IP_FREEBIND lets any user listen on these.
        assert_eq!(local("192.0.2.55:6379"), None);
        assert_eq!(local("10.0.0.5:7000"), None);
        assert_eq!(local("[2001:db8::1]:6379"), None);
        assert_eq!(local("[::ffff:192.0.2.55]:6379"), None);
    }
}
