//! `[discovery] local = true`: the Redis and Valkey servers of this host
//! found without anyone naming them, for an install that works before the
//! file is edited. A server is a process whose name (`/proc/PID/comm`) is
//! `redis-server` or `valkey-server`; its addresses are the listening
//! sockets among its file descriptors (`/proc/PID/fd`), looked up in
//! `/proc/net/tcp`, `tcp6` and `unix`. Its unix socket is preferred (no
//! TCP, no port to guess); else its lowest TCP port (a cluster's bus port,
//! the client port + 10000, is left out), on loopback when it listens on
//! every address.
//!
//! A process of another user may be hidden (`ProtectProc=invisible` in
//! the package's unit, or file descriptors only their owner reads): the
//! TCP sockets listening as the `redis` or `valkey` user (the accounts
//! Debian's packages run the servers as), and claimed by no visible
//! server, are taken too, one instance per port.
//!
//! What discovery finds is trusted with nothing: no password or user is
//! ever sent to a discovered server (one that needs AUTH shows as an
//! instance in error), its replies are bounded as every server's are, its
//! slow log entries (command arguments) are not read, and at most
//! [`MAX_SERVERS`] are taken, so a user who starts processes named
//! `redis-server` can add rows, not secrets nor unbounded work. Every read
//! of `/proc` is bounded in size and count, and a process that ends during
//! the scan is skipped.
//!
//! Names are stable across scans (a reload matches instances by name): the
//! socket's file stem (`/run/redis/redis-server.sock`: `redis-server`) or
//! `port6379`; two servers with the same short name are named by their
//! whole address instead.

use crate::config::{Config, RedisAddress, RedisInstance};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};

/// The process names (`comm`) taken for servers.
pub const SERVER_PROGRAMS: &[&str] = &["redis-server", "valkey-server"];
/// The users whose listening TCP sockets are taken when their process is
/// hidden: Debian's `redis-server` and `valkey-server` run as these.
pub const SERVICE_USERS: &[&str] = &["redis", "valkey"];
/// Servers taken at most; the rest are left out (and said so).
pub const MAX_SERVERS: usize = 32;
/// `/proc` entries looked at at most (a host's processes).
const MAX_PROCESSES: usize = 100_000;
/// File descriptors of one server looked at at most. A server opens its
/// listening sockets at start-up, before any client's, and `/proc/PID/fd`
/// lists them in ascending order: they are among the first.
const MAX_FDS: usize = 4_096;
/// Bytes read at most of one `/proc/net` table (about 100 000 sockets).
const MAX_TABLE_BYTES: u64 = 16 << 20;
/// Bytes read at most of `comm` (16 in the kernel) or `/etc/passwd`.
const MAX_COMM_BYTES: u64 = 64;
const MAX_PASSWD_BYTES: u64 = 1 << 20;
/// Longest name given to a discovered instance.
const MAX_NAME_CHARS: usize = 64;

/// Whether `text` matches `pattern`, where `*` stands for any text.
pub fn matches(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// A listening socket of this host.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Listener {
    Tcp { address: SocketAddr, uid: u32 },
    Unix(PathBuf),
}

/// A server discovery found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub name: String,
    pub address: RedisAddress,
    /// How it was found, for the log and the doctor: `pid 1234
    /// (valkey-server)` or `listening as user redis`.
    pub how: String,
}

/// What a scan found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Discovery {
    /// By name.
    pub found: Vec<Found>,
    /// Server processes whose file descriptors could not be read (another
    /// user's, without the right to), by PID.
    pub unreadable: Vec<u32>,
    /// Servers left out over [`MAX_SERVERS`].
    pub left_out: usize,
}

/// Reads at most `limit` bytes of `path`.
fn read_bounded(path: &Path, limit: u64) -> std::io::Result<String> {
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(limit)
        .read_to_string(&mut text)?;
    Ok(text)
}

/// The listening sockets of `/proc/net/tcp` or `tcp6` (`st` `0A`), each
/// with its inode. Lines that do not read are skipped.
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
            parse_socket_address(fields[1]),
            fields[7].parse::<u32>(),
            fields[9].parse::<u64>(),
        ) else {
            continue;
        };
        out.push((inode, Listener::Tcp { address, uid }));
    }
    out
}

/// `0100007F:18EB` or 32 hex digits and a port.
fn parse_socket_address(text: &str) -> Option<SocketAddr> {
    let (ip, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |hex: &str| u32::from_str_radix(hex, 16).ok().map(u32::to_ne_bytes);
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(ip)?)),
        32 => {
            let mut bytes = [0u8; 16];
            for (i, chunk) in bytes.chunks_mut(4).enumerate() {
                chunk.copy_from_slice(&word(ip.get(i * 8..i * 8 + 8)?)?);
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// The listening stream sockets with a path in `/proc/net/unix` (flag
/// `__SO_ACCEPTCON`, `00010000`; type `0001`, stream), each with its
/// inode. Abstract sockets (`@name`) have no file to connect to and are
/// left out.
pub fn parse_unix(text: &str) -> Vec<(u64, Listener)> {
    let mut out = Vec::new();
    for line in text.lines().skip(1) {
        // Num: RefCount Protocol Flags Type St Inode Path; the path is the
        // rest of the line (it may hold spaces).
        let mut rest = line.trim_start();
        let mut fields = Vec::with_capacity(7);
        for _ in 0..7 {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            fields.push(&rest[..end]);
            rest = rest[end..].trim_start();
        }
        let path = rest;
        if fields[3] != "00010000" || fields[4] != "0001" || !path.starts_with('/') {
            continue;
        }
        if let Ok(inode) = fields[6].parse::<u64>() {
            out.push((inode, Listener::Unix(PathBuf::from(path))));
        }
    }
    out
}

/// The inode of a `/proc/PID/fd` link's target `socket:[1234]`.
fn socket_inode(target: &Path) -> Option<u64> {
    target
        .to_str()?
        .strip_prefix("socket:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// The user ids of [`SERVICE_USERS`] in `/etc/passwd`-formatted `text`.
pub fn service_uids(text: &str) -> Vec<u32> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split(':');
            let name = fields.next()?;
            let uid = fields.nth(1)?.parse().ok()?;
            SERVICE_USERS.contains(&name).then_some(uid)
        })
        .collect()
}

/// The address to poll a server at, of its listening sockets: a unix
/// socket first; else the lowest TCP port that is not a cluster bus port,
/// IPv4 before IPv6, loopback for a socket listening on every address.
pub fn choose_address(listeners: &[Listener]) -> Option<RedisAddress> {
    if let Some(path) = listeners
        .iter()
        .filter_map(|l| match l {
            Listener::Unix(path) => Some(path),
            Listener::Tcp { .. } => None,
        })
        .min()
    {
        return Some(RedisAddress::Unix(path.clone()));
    }
    let tcp: Vec<SocketAddr> = listeners
        .iter()
        .filter_map(|l| match l {
            Listener::Tcp { address, .. } => Some(*address),
            Listener::Unix(_) => None,
        })
        .collect();
    let ports: BTreeSet<u16> = tcp.iter().map(SocketAddr::port).collect();
    let port = ports
        .iter()
        .copied()
        .find(|p| !(p.checked_sub(10_000).is_some_and(|c| ports.contains(&c))))?;
    let ip = tcp
        .iter()
        .filter(|a| a.port() == port)
        .map(SocketAddr::ip)
        .min_by_key(|ip| (ip.is_ipv6(), !ip.is_loopback() && !ip.is_unspecified()))?;
    let host = match ip {
        IpAddr::V4(v4) if v4.is_unspecified() => Ipv4Addr::LOCALHOST.to_string(),
        IpAddr::V6(v6) if v6.is_unspecified() => Ipv6Addr::LOCALHOST.to_string(),
        ip => ip.to_string(),
    };
    Some(RedisAddress::Tcp { host, port })
}

/// `text` kept to letters, digits, `.`, `_` and `-` (others become `-`),
/// at most [`MAX_NAME_CHARS`]: a name shown in SNMP and logs, chosen by
/// whoever named the socket.
fn clean_name(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let cleaned = cleaned.trim_matches('-');
    let start = cleaned.len().saturating_sub(MAX_NAME_CHARS);
    // The end of a long path says most (its directory and file).
    cleaned[start..].to_string()
}

/// The short name of an address (`redis-server`, `port6379`) and its long
/// one (the whole path, the address and port), taken when two servers
/// share the short one.
fn names(address: &RedisAddress) -> (String, String) {
    match address {
        RedisAddress::Unix(path) => {
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let short = clean_name(&stem);
            let long = clean_name(&path.to_string_lossy());
            if short.is_empty() {
                (long.clone(), long)
            } else {
                (short, long)
            }
        }
        RedisAddress::Tcp { host, port } | RedisAddress::Tls { host, port } => {
            (format!("port{port}"), clean_name(&format!("{host}-{port}")))
        }
    }
}

/// Scans this host's `/proc`.
pub fn discover() -> Discovery {
    let uids = read_bounded(Path::new("/etc/passwd"), MAX_PASSWD_BYTES)
        .map(|text| service_uids(&text))
        .unwrap_or_default();
    discover_in(Path::new("/proc"), &uids)
}

/// Scans `proc` (a `/proc`), taking hidden servers' TCP sockets listening
/// as one of `service_uids`.
pub fn discover_in(proc: &Path, service_uids: &[u32]) -> Discovery {
    let mut listeners: HashMap<u64, Listener> = HashMap::new();
    for (table, parse) in [
        ("net/tcp", parse_tcp as fn(&str) -> Vec<(u64, Listener)>),
        ("net/tcp6", parse_tcp),
        ("net/unix", parse_unix),
    ] {
        if let Ok(text) = read_bounded(&proc.join(table), MAX_TABLE_BYTES) {
            listeners.extend(parse(&text));
        }
    }
    let mut discovery = Discovery::default();
    // Each server: how it was found, its listening sockets.
    let mut servers: Vec<(String, Vec<Listener>)> = Vec::new();
    let mut claimed = BTreeSet::new();
    let Ok(entries) = std::fs::read_dir(proc) else {
        return discovery;
    };
    // In PID order, so that of a server and its forked child (a save,
    // holding its sockets) the server is named.
    let mut pids: Vec<u32> = entries
        .take(MAX_PROCESSES)
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok()))
        .collect();
    pids.sort_unstable();
    for pid in pids {
        let dir = proc.join(pid.to_string());
        // Gone since read_dir: skipped, as every failed read below.
        let Ok(comm) = read_bounded(&dir.join("comm"), MAX_COMM_BYTES) else {
            continue;
        };
        let comm = comm.trim_end();
        if !SERVER_PROGRAMS.contains(&comm) {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(dir.join("fd")) else {
            discovery.unreadable.push(pid);
            continue;
        };
        let mut own = Vec::new();
        for fd in fds.take(MAX_FDS).flatten() {
            let Some(inode) = std::fs::read_link(fd.path())
                .ok()
                .and_then(|t| socket_inode(&t))
            else {
                continue;
            };
            if let Some(listener) = listeners.get(&inode) {
                claimed.insert(inode);
                own.push(listener.clone());
            }
        }
        if !own.is_empty() {
            servers.push((format!("pid {pid} ({comm})"), own));
        }
    }
    // Hidden servers: their users' listening TCP sockets no visible server
    // holds, one server per port.
    let mut by_port: BTreeMap<u16, (u32, Vec<Listener>)> = BTreeMap::new();
    for (inode, listener) in &listeners {
        if let Listener::Tcp { address, uid } = listener {
            if service_uids.contains(uid) && !claimed.contains(inode) {
                let entry = by_port.entry(address.port()).or_insert((*uid, Vec::new()));
                entry.1.push(listener.clone());
            }
        }
    }
    let all_ports: BTreeSet<u16> = by_port.keys().copied().collect();
    for (port, (uid, own)) in by_port {
        // A cluster's bus port, beside its client port.
        if port
            .checked_sub(10_000)
            .is_some_and(|c| all_ports.contains(&c))
        {
            continue;
        }
        servers.push((format!("listening as uid {uid}"), own));
    }
    let mut chosen: Vec<(String, RedisAddress)> = Vec::new();
    for (how, own) in servers {
        if let Some(address) = choose_address(&own) {
            // A forked child (a save) may hold its parent's sockets.
            if !chosen.iter().any(|(_, a)| *a == address) {
                chosen.push((how, address));
            }
        }
    }
    chosen.sort_by_key(|(_, address)| address.to_string());
    if chosen.len() > MAX_SERVERS {
        discovery.left_out = chosen.len() - MAX_SERVERS;
        chosen.truncate(MAX_SERVERS);
    }
    let mut short_count: HashMap<String, usize> = HashMap::new();
    for (_, address) in &chosen {
        *short_count.entry(names(address).0).or_default() += 1;
    }
    discovery.found = chosen
        .into_iter()
        .map(|(how, address)| {
            let (short, long) = names(&address);
            let name = if short_count[&short] > 1 { long } else { short };
            Found { name, address, how }
        })
        .collect();
    discovery.found.sort_by(|a, b| a.name.cmp(&b.name));
    discovery.unreadable.sort_unstable();
    discovery
}

/// Adds what `discovery` found to `config`'s instances, after the
/// configured ones, and returns what was left out and why. A server a
/// configured instance already polls (the same address) is not added
/// twice; one whose names are both taken by configured instances is left
/// out.
pub fn add_to(config: &mut Config, discovery: &Discovery) -> Vec<String> {
    let mut notes = Vec::new();
    for found in &discovery.found {
        let shown = found.address.to_string();
        let wanted = &config.discovery.addresses;
        if !wanted.is_empty() && !wanted.iter().any(|p| matches(p, &shown)) {
            continue;
        }
        if config.instances.iter().any(|i| i.address == found.address) {
            continue;
        }
        let (_, long) = names(&found.address);
        let taken = |name: &str| config.instances.iter().any(|i| i.name == name);
        let name = if !taken(&found.name) {
            found.name.clone()
        } else if !taken(&long) {
            long
        } else {
            notes.push(format!(
                "discovered {} ({}) left out: its names are taken by configured instances",
                found.address, found.how
            ));
            continue;
        };
        let mut instance = RedisInstance::new(name, found.address.clone());
        // The newest slow command's arguments are keys and values: read
        // only where an operator configured the server.
        instance.slowlog_entries = false;
        config.instances.push(instance);
    }
    if discovery.left_out > 0 {
        notes.push(format!(
            "discovery: {} more server(s) left out over the limit of {MAX_SERVERS}",
            discovery.left_out
        ));
    }
    notes
}

/// `config` with what a scan of this host finds, when `[discovery] local`
/// is on; and what to log.
pub fn with_discovered(mut config: Config) -> (Config, Vec<String>) {
    if !config.discovery.local {
        return (config, Vec::new());
    }
    let discovery = discover();
    let mut notes = add_to(&mut config, &discovery);
    if !discovery.unreadable.is_empty() {
        notes.push(format!(
            "discovery: cannot read the sockets of server process(es) {:?} (another user's); \
             only their TCP ports listening as user redis or valkey are found",
            discovery.unreadable
        ));
    }
    (config, notes)
}

/// The file's configuration with the servers discovery finds (when on),
/// scanned off the runtime's thread; what discovery says is logged, as a
/// warning at start-up and reload, in the debug log on a periodic scan
/// (which would otherwise repeat it every interval).
pub async fn discovered(base: Config, periodic: bool) -> Config {
    if !base.discovery.local {
        return base;
    }
    let fallback = base.clone();
    match tokio::task::spawn_blocking(move || with_discovered(base)).await {
        Ok((config, notes)) => {
            for note in notes {
                if periodic {
                    tracing::debug!("{note}");
                } else {
                    tracing::warn!("{note}");
                }
            }
            config
        }
        Err(e) => {
            tracing::error!("discovery failed: {e}");
            fallback
        }
    }
}

/// `[discovery] interval`'s timer, when discovery is on with one.
pub fn rescan_timer(config: &Config) -> Option<tokio::time::Interval> {
    let every = config
        .discovery
        .interval
        .filter(|_| config.discovery.local)?;
    let mut timer = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    Some(timer)
}

/// The next tick of `timer`; never without one.
pub async fn tick(timer: &mut Option<tokio::time::Interval>) {
    match timer {
        Some(timer) => {
            timer.tick().await;
        }
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/discovery")
            .join(name);
        std::fs::read_to_string(path).unwrap()
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
        let v4 = parse_tcp(&fixture("proc-net-tcp"));
        // The TIME_WAIT line (06) is not a listener.
        assert_eq!(
            v4,
            [
                (1065, tcp("0.0.0.0:2024", 0)),
                (1638085, tcp("127.0.0.1:16379", 0)),
                (1638850, tcp("0.0.0.0:16380", 0)),
            ]
        );
        let v6 = parse_tcp(&fixture("proc-net-tcp6"));
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
                parse_unix(&format!("{header}{line}\n")).is_empty(),
                "{line}"
            );
        }
        let spaced = format!(
            "{header}0000000000000000: 00000002 00000000 00010000 0001 01 17 /tmp/a b.sock\n"
        );
        assert_eq!(
            parse_unix(&spaced),
            [(17, Listener::Unix("/tmp/a b.sock".into()))]
        );
    }

    #[test]
    fn the_unix_socket_first_then_the_lowest_client_port_on_loopback() {
        let both = [
            tcp("127.0.0.1:16379", 0),
            Listener::Unix("/tmp/h4cap/redis.sock".into()),
        ];
        assert_eq!(
            choose_address(&both).unwrap().to_string(),
            "unix:/tmp/h4cap/redis.sock"
        );
        let every = [tcp("[::]:16380", 0), tcp("0.0.0.0:16380", 0)];
        assert_eq!(
            choose_address(&every).unwrap().to_string(),
            "127.0.0.1:16380"
        );
        let v6 = [tcp("[::]:6379", 0)];
        assert_eq!(choose_address(&v6).unwrap().to_string(), "[::1]:6379");
        // A cluster node: 7000 and its bus 17000.
        let cluster = [tcp("10.0.0.5:17000", 0), tcp("10.0.0.5:7000", 0)];
        assert_eq!(
            choose_address(&cluster).unwrap().to_string(),
            "10.0.0.5:7000"
        );
        assert_eq!(choose_address(&[]), None);
    }

    #[test]
    fn names_are_short_unless_shared_and_never_carry_odd_characters() {
        let unix = RedisAddress::Unix("/run/redis/redis-server.sock".into());
        assert_eq!(names(&unix).0, "redis-server");
        assert_eq!(names(&unix).1, "run-redis-redis-server.sock");
        let tcp = RedisAddress::Tcp {
            host: "::1".into(),
            port: 6379,
        };
        assert_eq!(names(&tcp), ("port6379".into(), "1-6379".into()));
        let odd = RedisAddress::Unix("/tmp/\u{1b}[31mred\nsock".into());
        assert_eq!(names(&odd).0, "31mred-sock");
        let long = RedisAddress::Unix(format!("/{}.sock", "x".repeat(200)).into());
        assert_eq!(names(&long).0.len(), MAX_NAME_CHARS);
    }

    #[test]
    fn address_patterns() {
        for (pattern, text, expected) in [
            ("127.0.0.1:6379", "127.0.0.1:6379", true),
            ("127.0.0.1:6379", "127.0.0.1:63790", false),
            (
                "unix:/run/redis/*",
                "unix:/run/redis/redis-server.sock",
                true,
            ),
            ("unix:/run/redis/*", "unix:/run/valkey/valkey.sock", false),
            ("*:6379", "[::1]:6379", true),
            ("*", "anything", true),
            ("a*b*c", "abc", true),
            ("a*b*c", "acb", false),
            ("ab*ba", "aba", false),
        ] {
            assert_eq!(matches(pattern, text), expected, "{pattern} {text}");
        }
    }

    #[test]
    fn service_users_from_passwd() {
        let passwd = "root:x:0:0:root:/root:/bin/bash\n\
                      redis:x:104:110::/var/lib/redis:/usr/sbin/nologin\n\
                      valkey:x:105:111::/var/lib/valkey:/usr/sbin/nologin\n\
                      redisx:x:9:9::/:/bin/false\nbroken\n";
        assert_eq!(service_uids(passwd), [104, 105]);
    }

    /// A `/proc` of files: the tables, a visible server with a unix
    /// socket and its forked child, a hidden one listening as uid 104, a
    /// process named otherwise, and one whose files are gone.
    #[test]
    fn a_proc_tree_is_read_and_its_servers_named() {
        let dir = tempfile::tempdir().unwrap();
        let proc = dir.path();
        std::fs::create_dir_all(proc.join("net")).unwrap();
        std::fs::write(
            proc.join("net/tcp"),
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
             0: 0100007F:18EB 00000000:0000 0A 00000000:00000000 00:00000000 00000000   104        0 501 1\n\
             1: 0100007F:3FFB 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 502 1\n\
             2: 0100007F:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 503 1\n\
             3: 0100007F:3FFC 00000000:0000 0A 00000000:00000000 00:00000000 00000000   104        0 504 1\n",
        )
        .unwrap();
        std::fs::write(
            proc.join("net/unix"),
            "Num       RefCount Protocol Flags    Type St Inode Path\n\
             0000000000000000: 00000002 00000000 00010000 0001 01 505 /tmp/t/cache.sock\n",
        )
        .unwrap();
        let process = |pid: &str, comm: &str, sockets: &[u64]| {
            let fd = proc.join(pid).join("fd");
            std::fs::create_dir_all(&fd).unwrap();
            std::fs::write(proc.join(pid).join("comm"), format!("{comm}\n")).unwrap();
            for (i, inode) in sockets.iter().enumerate() {
                std::os::unix::fs::symlink(format!("socket:[{inode}]"), fd.join(i.to_string()))
                    .unwrap();
            }
        };
        process("10", "redis-server", &[502, 505]);
        process("11", "redis-server", &[502, 505]);
        process("12", "sshd", &[503]);
        process("13", "valkey-server", &[504]);
        std::fs::create_dir_all(proc.join("14")).unwrap();
        let discovery = discover_in(proc, &[104]);
        let found: Vec<(String, String)> = discovery
            .found
            .iter()
            .map(|f| (f.name.clone(), f.address.to_string()))
            .collect();
        assert_eq!(
            found,
            [
                ("cache".to_string(), "unix:/tmp/t/cache.sock".to_string()),
                ("port16380".to_string(), "127.0.0.1:16380".to_string()),
                ("port6379".to_string(), "127.0.0.1:6379".to_string()),
            ]
        );
        assert_eq!(discovery.found[0].how, "pid 10 (redis-server)");
        assert_eq!(discovery.found[1].how, "pid 13 (valkey-server)");
        assert_eq!(discovery.found[2].how, "listening as uid 104");
        assert!(discovery.unreadable.is_empty());
        // Without the service user, the hidden one is not found.
        assert_eq!(discover_in(proc, &[]).found.len(), 2);
    }

    #[test]
    fn configured_instances_win_and_discovered_ones_get_no_secret() {
        let dir = tempfile::tempdir().unwrap();
        let password = dir.path().join("pw");
        std::fs::write(&password, "s3cret\n").unwrap();
        let file = dir.path().join("c.toml");
        std::fs::write(
            &file,
            format!(
                "[discovery]\nlocal = true\n[[redis]]\nname = \"port6379\"\naddress = \"10.0.0.1:6379\"\npassword_file = \"{}\"\n\
                 [[redis]]\nname = \"main\"\naddress = \"unix:/run/a.sock\"\n",
                password.display()
            ),
        )
        .unwrap();
        let cli = <crate::cli::Cli as clap::Parser>::try_parse_from([
            "redis-snmp",
            "-c",
            file.to_str().unwrap(),
        ])
        .unwrap();
        let mut config = Config::load(&cli, None).unwrap();
        let found = |name: &str, address: &str| Found {
            name: name.into(),
            address: RedisAddress::parse(address).unwrap(),
            how: "test".into(),
        };
        let discovery = Discovery {
            found: vec![
                found("a", "unix:/run/a.sock"),
                found("port6379", "127.0.0.1:6379"),
            ],
            ..Discovery::default()
        };
        assert!(add_to(&mut config, &discovery).is_empty());
        let names: Vec<(&str, String)> = config
            .instances
            .iter()
            .map(|i| (i.name.as_str(), i.address.to_string()))
            .collect();
        assert_eq!(
            names,
            [
                ("port6379", "10.0.0.1:6379".to_string()),
                ("main", "unix:/run/a.sock".to_string()),
                ("127.0.0.1-6379", "127.0.0.1:6379".to_string()),
            ]
        );
        let discovered = &config.instances[2];
        assert!(discovered.password.is_none() && discovered.username.is_none());
        assert!(!discovered.slowlog_entries);

        // `addresses` keeps only the servers that match one pattern.
        config.instances.truncate(2);
        config.discovery.addresses = vec!["unix:/run/valkey/*".into()];
        let more = Discovery {
            found: vec![
                found("valkey", "unix:/run/valkey/valkey.sock"),
                found("port6380", "127.0.0.1:6380"),
            ],
            ..Discovery::default()
        };
        add_to(&mut config, &more);
        let names: Vec<&str> = config.instances.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["port6379", "main", "valkey"]);
    }
}
