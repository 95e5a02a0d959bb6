//! `[discovery] local = true`: the Redis and Valkey servers of this host
//! found without anyone naming them, for an install that works before the
//! file is edited. A server is a process whose name (`/proc/PID/comm`) is
//! `redis-server` or `valkey-server`; its addresses are the listening
//! sockets among its file descriptors (`/proc/PID/fd`), looked up in
//! `/proc/self/net/tcp`, `tcp6` and `unix` ([`tables`]: `/proc/net` is
//! hidden under the package's unit). Its unix socket is preferred (no
//! TCP, no port to guess); else its lowest TCP port (a cluster's bus port,
//! the client port + 10000, is left out) on a loopback address, or on
//! loopback when it listens on every address.
//!
//! A process of another user may be hidden (`ProtectProc=invisible` in
//! the package's unit, or file descriptors only their owner reads): the
//! TCP sockets listening on loopback (or every address) as the `redis` or
//! `valkey` user (the accounts Debian's packages run the servers as), and
//! claimed by no visible server, are taken too, one instance per port.
//! This is what discovery finds under the unit.
//!
//! What a hostile neighbour can plant is refused ([`trust`]): a server
//! process of a user other than root, the scanning user or a service user
//! is listed and never connected to; a TCP listener on any address but
//! loopback (with `IP_FREEBIND` anyone listens on an address that is not
//! this host's) is not taken; a unix socket is taken only when its path is
//! printable, not a link, in directories no one else may write, and
//! answered by the server itself. Whatever else a scan says (a path, a
//! reason) is made printable before it is logged or shown. And since a
//! port or path checked once may be another user's after the server
//! stops, a discovered instance carries the user it was found running
//! as (`found_running_as`), and every connection to it is first checked
//! to be served by that user or root (`redis::peer::Stake::Discovered`).
//!
//! What discovery finds is trusted with nothing: no password or user is
//! ever sent to a discovered server (one that needs AUTH shows as an
//! instance in error), its replies are bounded as every server's are, its
//! slow log entries (command arguments) are not read, and at most
//! [`MAX_SERVERS`] are taken, so a user who starts processes named
//! `redis-server` can add no row, secret nor unbounded work. Every read
//! of `/proc` is bounded in size and count, and a process that ends during
//! the scan is skipped.
//!
//! Names are stable across scans (a reload matches instances by name): the
//! socket's file stem (`/run/redis/redis-server.sock`: `redis-server`) or
//! `port6379`; two servers with the same short name are named by their
//! whole address instead.

pub mod tables;
pub mod trust;

use crate::config::{Config, RedisAddress, RedisInstance};
use crate::text::printable;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
pub use tables::Listener;
use trust::{Owner, Owners};
pub use trust::{SERVER_PROGRAMS, SERVICE_USERS};

/// Servers taken at most; the rest are left out (and said so).
pub const MAX_SERVERS: usize = 32;
/// `/proc` entries looked at at most (a host's processes).
const MAX_PROCESSES: usize = 100_000;
/// File descriptors of one server looked at at most. A server opens its
/// listening sockets at start-up, before any client's, and `/proc/PID/fd`
/// lists them in ascending order: they are among the first.
const MAX_FDS: usize = 4_096;
/// Bytes read at most of one `/proc/self/net` table (about 100 000
/// sockets).
const MAX_TABLE_BYTES: u64 = 16 << 20;
/// Bytes read at most of `comm` (16 in the kernel), of
/// `/proc/PID/status` or of `/etc/passwd`.
const MAX_COMM_BYTES: u64 = 64;
const MAX_STATUS_BYTES: u64 = 16 << 10;
const MAX_PASSWD_BYTES: u64 = 1 << 20;
/// Longest name given to a discovered instance.
const MAX_NAME_CHARS: usize = 64;
/// Sockets not taken that a scan says why of, at most; and processes of
/// other users it names.
const MAX_REFUSALS: usize = 16;
const MAX_UNTRUSTED_SHOWN: usize = 16;

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

/// Whether `address` is one of those `wanted` keeps (all when empty).
fn wanted(patterns: &[String], address: &str) -> bool {
    patterns.is_empty() || patterns.iter().any(|p| matches(p, address))
}

/// A server discovery found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub name: String,
    pub address: RedisAddress,
    /// How it was found, for the log and the doctor: `pid 1234
    /// (valkey-server)` or `listening as uid 104`.
    pub how: String,
    /// The user it runs as (or its socket listens as): every later
    /// connection to it must be served by that user or root.
    pub uid: u32,
}

/// A server process of a user discovery does not trust: listed, never
/// connected to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Untrusted {
    pub pid: u32,
    /// Its effective user id (one of its ids is not trusted).
    pub uid: u32,
}

/// What a scan found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Discovery {
    /// By name.
    pub found: Vec<Found>,
    /// Server processes whose file descriptors could not be read (another
    /// user's, without the right to), by PID.
    pub unreadable: Vec<u32>,
    /// Server processes of users not trusted, by PID.
    pub untrusted: Vec<Untrusted>,
    /// Listening sockets of trusted servers not taken, and why, printable
    /// (at most 16; `refused_more` counts the rest).
    pub refused: Vec<String>,
    pub refused_more: usize,
    /// Servers left out over [`MAX_SERVERS`].
    pub left_out: usize,
}

impl Discovery {
    fn refuse(&mut self, why: String) {
        if self.refused.len() < MAX_REFUSALS {
            self.refused.push(why);
        } else {
            self.refused_more += 1;
        }
    }

    /// What a scan says besides what it found, in words for the log
    /// (printable).
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if !self.unreadable.is_empty() {
            notes.push(format!(
                "cannot read the sockets of server process(es) {:?} (another user's); \
                 only their TCP ports listening on loopback as user redis or valkey are found",
                self.unreadable
            ));
        }
        notes.extend(self.refusals());
        notes
    }

    /// What a scan left out, and why: other users' processes, sockets not
    /// taken (printable).
    pub fn refusals(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if !self.untrusted.is_empty() {
            let mut shown: Vec<String> = self
                .untrusted
                .iter()
                .take(MAX_UNTRUSTED_SHOWN)
                .map(|u| format!("pid {} (uid {})", u.pid, u.uid))
                .collect();
            if self.untrusted.len() > MAX_UNTRUSTED_SHOWN {
                shown.push(format!(
                    "{} more",
                    self.untrusted.len() - MAX_UNTRUSTED_SHOWN
                ));
            }
            notes.push(format!(
                "left out, never connected to: server process(es) of users other than root, \
                 redis, valkey and the user scanning: {}",
                shown.join(", ")
            ));
        }
        for why in &self.refused {
            notes.push(format!("not taken: {why}"));
        }
        if self.refused_more > 0 {
            notes.push(format!(
                "not taken: {} more socket(s), for the same kinds of reason",
                self.refused_more
            ));
        }
        notes
    }
}

/// Reads at most `limit` bytes of `path`.
fn read_bounded(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(limit)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// [`read_bounded`], as text (a byte that is not UTF-8 replaced).
fn read_text(path: &Path, limit: u64) -> std::io::Result<String> {
    read_bounded(path, limit).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// The address to poll a server at, of its listening sockets (unix ones
/// already checked): a unix socket first; else the lowest TCP port that is
/// not a cluster bus port, on a loopback address, IPv4 before IPv6,
/// loopback for a socket listening on every address. A port listened on
/// at no loopback address is not taken.
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
    // The bus port is told apart among every port the server listens on.
    let ports: BTreeSet<u16> = tcp.iter().map(SocketAddr::port).collect();
    let local: Vec<(u16, IpAddr)> = tcp
        .iter()
        .filter_map(|a| Some((a.port(), tables::local_address(a)?)))
        .collect();
    let port = local
        .iter()
        .map(|(port, _)| *port)
        .filter(|p| !(p.checked_sub(10_000).is_some_and(|c| ports.contains(&c))))
        .min()?;
    let ip = local
        .iter()
        .filter(|(p, _)| *p == port)
        .map(|(_, ip)| *ip)
        .min_by_key(|ip| (ip.is_ipv6(), *ip != IpAddr::V4(Ipv4Addr::LOCALHOST)))?;
    Some(RedisAddress::Tcp {
        host: ip.to_string(),
        port,
    })
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

/// Scans this host's `/proc`, keeping to the servers whose address one of
/// `patterns` matches (`[discovery] addresses`; all when empty): a unix
/// socket outside them is not even connected to.
pub fn discover(patterns: &[String]) -> Discovery {
    let passwd = read_text(Path::new("/etc/passwd"), MAX_PASSWD_BYTES).unwrap_or_default();
    discover_in(Path::new("/proc"), &Owners::of_this_host(&passwd), patterns)
}

/// Scans `proc` (a `/proc`): the servers of `owners`' trusted users, and
/// the hidden ones listening as its service users.
pub fn discover_in(proc: &Path, owners: &Owners, patterns: &[String]) -> Discovery {
    // Each inode with what the table says of it: more than one line for
    // one inode is a forgery (a newline in a path), sorted out below.
    let mut listeners: HashMap<u64, Vec<Listener>> = HashMap::new();
    for table in [tables::TCP, tables::TCP6] {
        if let Ok(text) = read_text(&proc.join(table), MAX_TABLE_BYTES) {
            for (inode, listener) in tables::parse_tcp(&text) {
                listeners.entry(inode).or_default().push(listener);
            }
        }
    }
    if let Ok(bytes) = read_bounded(&proc.join(tables::UNIX), MAX_TABLE_BYTES) {
        for (inode, listener) in tables::parse_unix(&bytes) {
            listeners.entry(inode).or_default().push(listener);
        }
    }
    let mut discovery = Discovery::default();
    // Each server: how it was found, its user, its listening sockets.
    let mut servers: Vec<(String, u32, Vec<Listener>)> = Vec::new();
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
        let Ok(comm) = read_text(&dir.join("comm"), MAX_COMM_BYTES) else {
            continue;
        };
        let comm = comm.trim_end();
        if !SERVER_PROGRAMS.contains(&comm) {
            continue;
        }
        let Some(owner) = read_text(&dir.join("status"), MAX_STATUS_BYTES)
            .ok()
            .and_then(|status| Owner::parse(pid, &status))
        else {
            continue;
        };
        if !owners.trusts(&owner) {
            discovery.untrusted.push(Untrusted {
                pid,
                uid: owner.uid(),
            });
            continue;
        }
        let Ok(fds) = std::fs::read_dir(dir.join("fd")) else {
            discovery.unreadable.push(pid);
            continue;
        };
        let how = format!("pid {pid} ({comm})");
        let uid = owner.uid();
        let mut own = Vec::new();
        for fd in fds.take(MAX_FDS).flatten() {
            let Some(inode) = std::fs::read_link(fd.path())
                .ok()
                .and_then(|t| tables::socket_inode(&t))
            else {
                continue;
            };
            let Some(candidates) = listeners.get(&inode) else {
                continue;
            };
            // A forked child's copy of its server's socket, taken with
            // the server.
            if !claimed.insert(inode) {
                continue;
            }
            for candidate in candidates {
                match candidate {
                    Listener::Tcp { .. } => own.push(candidate.clone()),
                    Listener::Unix(path) => {
                        let shown = crate::text::printable_bytes(
                            std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()),
                        );
                        if !wanted(patterns, &format!("unix:{shown}")) {
                            continue;
                        }
                        match trust::checked_socket(path, &owner) {
                            Ok(resolved) => {
                                own.push(Listener::Unix(resolved));
                                break;
                            }
                            Err(why) => discovery.refuse(format!("unix:{shown} of {how}: {why}")),
                        }
                    }
                }
            }
        }
        if own.is_empty() {
            continue;
        }
        if choose_address(&own).is_none() {
            let addresses: Vec<String> = own
                .iter()
                .filter_map(|l| match l {
                    Listener::Tcp { address, .. } => Some(address.to_string()),
                    Listener::Unix(_) => None,
                })
                .filter(|a| wanted(patterns, a))
                .collect();
            if !addresses.is_empty() {
                discovery.refuse(format!(
                    "{how} listens on {}: no loopback address (a [[redis]] entry polls it)",
                    addresses.join(", ")
                ));
            }
            continue;
        }
        servers.push((how, uid, own));
    }
    // Hidden servers: their users' listening TCP sockets no visible server
    // holds, one server per port.
    let mut by_port: BTreeMap<u16, (u32, Vec<Listener>)> = BTreeMap::new();
    for (inode, candidates) in &listeners {
        for listener in candidates {
            if let Listener::Tcp { address, uid } = listener {
                if owners.service.contains(uid) && !claimed.contains(inode) {
                    let entry = by_port.entry(address.port()).or_insert((*uid, Vec::new()));
                    entry.1.push(listener.clone());
                }
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
        servers.push((format!("listening as uid {uid}"), uid, own));
    }
    let mut chosen: Vec<(String, u32, RedisAddress)> = Vec::new();
    for (how, uid, own) in servers {
        if let Some(address) = choose_address(&own) {
            if wanted(patterns, &address.to_string())
                && !chosen.iter().any(|(_, _, a)| *a == address)
            {
                chosen.push((how, uid, address));
            }
        }
    }
    chosen.sort_by_key(|(_, _, address)| address.to_string());
    if chosen.len() > MAX_SERVERS {
        discovery.left_out = chosen.len() - MAX_SERVERS;
        chosen.truncate(MAX_SERVERS);
    }
    let mut short_count: HashMap<String, usize> = HashMap::new();
    for (_, _, address) in &chosen {
        *short_count.entry(names(address).0).or_default() += 1;
    }
    discovery.found = chosen
        .into_iter()
        .map(|(how, uid, address)| {
            let (short, long) = names(&address);
            let name = if short_count[&short] > 1 { long } else { short };
            Found {
                name,
                address,
                how,
                uid,
            }
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
        if !wanted(&config.discovery.addresses, &found.address.to_string()) {
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
            notes.push(printable(&format!(
                "discovered {} ({}) left out: its names are taken by configured instances",
                found.address, found.how
            )));
            continue;
        };
        let mut instance = RedisInstance::new(name, found.address.clone());
        instance.found_running_as = Some(found.uid);
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
    let discovery = discover(&config.discovery.addresses);
    let mut notes = add_to(&mut config, &discovery);
    notes.extend(
        discovery
            .notes()
            .into_iter()
            .map(|note| printable(&format!("discovery: {note}"))),
    );
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

    fn tcp(address: &str, uid: u32) -> Listener {
        Listener::Tcp {
            address: address.parse().unwrap(),
            uid,
        }
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
        // A cluster node on loopback: 7000 and its bus 17000.
        let cluster = [tcp("127.0.0.1:17000", 0), tcp("127.0.0.1:7000", 0)];
        assert_eq!(
            choose_address(&cluster).unwrap().to_string(),
            "127.0.0.1:7000"
        );
        assert_eq!(choose_address(&[]), None);
    }

    /// Review M5: a listener with IP_FREEBIND on an address that is not
    /// this host's made root connect out to it. Only loopback is taken,
    /// even when it is a higher port.
    #[test]
    fn no_address_but_loopback_is_taken() {
        for listeners in [
            vec![tcp("192.0.2.55:6379", 0)],
            vec![tcp("10.0.0.5:7000", 0), tcp("10.0.0.5:17000", 0)],
            vec![tcp("[2001:db8::1]:6379", 0)],
        ] {
            assert_eq!(choose_address(&listeners), None, "{listeners:?}");
        }
        let mixed = [tcp("192.0.2.55:6379", 0), tcp("127.0.0.1:6380", 0)];
        assert_eq!(
            choose_address(&mixed).unwrap().to_string(),
            "127.0.0.1:6380"
        );
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

    /// A `/proc` of files, with the tables under `self/net` (where the
    /// unit's `ProcSubset=pid` leaves them): a visible server with a unix
    /// socket (a real one, which this test answers on, so its pid is this
    /// test's) and its forked child, a hidden one listening as uid 104, a
    /// process named otherwise, one whose files are gone, and the planted
    /// ones of review M5: another user's `redis-server`, a server on a
    /// non-loopback address, a path that is not UTF-8, a line forged by a
    /// newline in a path, giving the server's inode another path.
    #[test]
    fn a_proc_tree_is_read_its_servers_named_and_plants_refused() {
        let dir = tempfile::tempdir().unwrap();
        let proc = dir.path().join("proc");
        let sockets = dir.path().join("sockets");
        std::fs::create_dir_all(proc.join("self/net")).unwrap();
        std::fs::create_dir_all(&sockets).unwrap();
        let socket = sockets.join("cache.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        std::fs::write(
            proc.join("self/net/tcp"),
            "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
             0: 0100007F:18EB 00000000:0000 0A 00000000:00000000 00:00000000 00000000   104        0 501 1\n\
             1: 0100007F:3FFB 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 502 1\n\
             2: 0100007F:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 503 1\n\
             3: 0100007F:3FFC 00000000:0000 0A 00000000:00000000 00:00000000 00000000   104        0 504 1\n\
             4: 370200C0:18EB 00000000:0000 0A 00000000:00000000 00:00000000 00000000 65534        0 506 1\n\
             5: 380200C0:18EC 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 507 1\n\
             6: 390200C0:18ED 00000000:0000 0A 00000000:00000000 00:00000000 00000000   104        0 510 1\n",
        )
        .unwrap();
        let mut unix = b"Num       RefCount Protocol Flags    Type St Inode Path\n".to_vec();
        unix.extend_from_slice(
            format!(
                "0000000000000000: 00000002 00000000 00010000 0001 01 505 {}\n",
                socket.display()
            )
            .as_bytes(),
        );
        // Another socket's path, ending in a newline and a line of its
        // author's: a server's inode (511) at a socket another process
        // answers on (this test's).
        unix.extend_from_slice(
            format!(
                "0000000000000000: 00000002 00000000 00010000 0001 01 508 /tmp/x\n\
                 0000000000000000: 00000002 00000000 00010000 0001 01 511 {}\n",
                socket.display()
            )
            .as_bytes(),
        );
        unix.extend_from_slice(
            b"0000000000000000: 00000002 00000000 00010000 0001 01 509 /tmp/\xff\x1b[2K.sock\n",
        );
        std::fs::write(proc.join("self/net/unix"), unix).unwrap();
        let me = std::process::id();
        // SAFETY: plain getters.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let process = |pid: u32, ppid: u32, uid: u32, comm: &str, sockets: &[u64]| {
            let dir = proc.join(pid.to_string());
            let fd = dir.join("fd");
            std::fs::create_dir_all(&fd).unwrap();
            std::fs::write(dir.join("comm"), format!("{comm}\n")).unwrap();
            std::fs::write(
                dir.join("status"),
                format!(
                    "Name:\t{comm}\nPid:\t{pid}\nPPid:\t{ppid}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\nGid:\t{gid}\t{gid}\t{gid}\t{gid}\n"
                ),
            )
            .unwrap();
            for (i, inode) in sockets.iter().enumerate() {
                std::os::unix::fs::symlink(format!("socket:[{inode}]"), fd.join(i.to_string()))
                    .unwrap();
            }
        };
        // This test's own pid stands for the server answering on the socket.
        process(me, 1, uid, "redis-server", &[502, 505]);
        process(me + 1, me, uid, "redis-server", &[502, 505]);
        process(me + 2, 1, uid, "sshd", &[503]);
        process(me + 3, 1, uid, "valkey-server", &[504]);
        std::fs::create_dir_all(proc.join((me + 4).to_string())).unwrap();
        // Another user's (on 192.0.2.55, with IP_FREEBIND): listed, never
        // connected to.
        process(me + 5, 1, 65534, "redis-server", &[506]);
        // A trusted server on 192.0.2.56 only (IP_FREEBIND): not taken.
        process(me + 6, 1, uid, "redis-server", &[507]);
        // A trusted server whose only socket's path is not UTF-8.
        process(me + 7, 1, uid, "redis-server", &[509]);
        // A trusted server whose socket's line is the forged one.
        process(me + 8, 1, uid, "redis-server", &[511]);
        let owners = Owners::new(vec![104], uid);
        let discovery = discover_in(&proc, &owners, &[]);
        let found: Vec<(String, String)> = discovery
            .found
            .iter()
            .map(|f| (f.name.clone(), f.address.to_string()))
            .collect();
        let canonical = std::fs::canonicalize(&socket).unwrap();
        assert_eq!(
            found,
            [
                ("cache".to_string(), format!("unix:{}", canonical.display())),
                ("port16380".to_string(), "127.0.0.1:16380".to_string()),
                ("port6379".to_string(), "127.0.0.1:6379".to_string()),
            ]
        );
        assert_eq!(discovery.found[0].how, format!("pid {me} (redis-server)"));
        assert_eq!(
            discovery.found[1].how,
            format!("pid {} (valkey-server)", me + 3)
        );
        assert_eq!(discovery.found[2].how, "listening as uid 104");
        assert!(discovery.unreadable.is_empty());
        assert_eq!(
            discovery.untrusted,
            [Untrusted {
                pid: me + 5,
                uid: 65534
            }]
        );
        let notes = discovery.notes();
        assert!(
            notes.iter().all(|n| crate::text::is_printable(n)),
            "{notes:?}"
        );
        let notes = notes.join("\n");
        for said in [
            format!(
                "unix:{} of pid {} (redis-server): another process (pid {me})",
                socket.display(),
                me + 8
            ),
            format!("pid {} (redis-server) listens on 192.0.2.56:6380: no loopback address", me + 6),
            format!("unix:/tmp/\\xff\\u{{1b}}[2K.sock of pid {} (redis-server): its path is not printable", me + 7),
            format!("pid {} (uid 65534)", me + 5),
        ] {
            assert!(notes.contains(&said), "{said:?} not in:\n{notes}");
        }
        // Without the service user, the hidden one is not found; with
        // patterns, only what they match (and no other socket is tried).
        assert_eq!(
            discover_in(&proc, &Owners::new(vec![], uid), &[])
                .found
                .len(),
            2
        );
        let only = discover_in(&proc, &owners, &["127.0.0.1:6379".to_string()]);
        assert_eq!(only.found.len(), 1);
        assert!(only.refused.is_empty(), "{:?}", only.refused);
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
            uid: 104,
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
