//! Who holds the other end of a connection, asked before the password
//! goes over it (issue 24, review M2).
//!
//! Redis is down during restarts, upgrades and boot, and 6379 is not a
//! privileged port: meanwhile any local user may listen there, and a
//! client that sends AUTH to whatever accepts hands that user the
//! password. So before the password leaves, the agent asks the kernel
//! who serves the connection, and sends nothing unless it is the
//! instance's `server_user`'s (by default each of `redis` and
//! `valkey` that exists) or root's:
//!
//! - **TCP to this host**, at a loopback address or at one of the host's
//!   own (the kernel then gives the connection that address at both
//!   ends), from the kernel's socket tables, `/proc/self/net/tcp` and
//!   `tcp6`. Two kinds of row are judged, and all must be allowed:
//!   - the **listeners that could have taken the connection**: rows in
//!     LISTEN bound to our peer's port at its address or at the wildcard
//!     (`0.0.0.0`, `::`), in the table where the server's end is (a
//!     connection is of its listener's family: an IPv4 connection taken
//!     by a dual-stack listener is in `tcp6` as `::ffff:a.b.c.d`). A
//!     listener's uid is always the user that created it;
//!   - the **server's end** (local address our peer, peer our local
//!     address) **once accepted** (it has an inode): its uid is then the
//!     user of the process that accepted it.
//!
//!   The server's end alone is not enough: a connection that waits in
//!   the listener's queue has no socket of its own yet (inode 0), and
//!   before Linux 6.17 the table shows it as root's (uid 0), so a user
//!   who listens on Redis's port while it is down and delays `accept()`
//!   would pass for root; since 6.17 it shows the listener's user. The
//!   listener tells the truth on every kernel, and the data we send sits
//!   in that queue until whoever owns the listener accepts it: no one
//!   else can take it out (closing the listener resets what it queued).
//!   Judging every listener of the port rather than guessing the one the
//!   kernel chose keeps this safe whatever the binds: several listeners
//!   of one port can only coexist as one user's `SO_REUSEPORT` group, at
//!   different addresses (only ours and the wildcard's count), as IPv4
//!   and IPv6-only listeners (a different table), or bound to different
//!   devices (which this cannot tell apart, so both are judged). The
//!   tests boot Debian's 6.1 and 6.12 kernels to see it hold there.
//!
//!   Other ways were weighed: sock_diag over netlink tells the same as
//!   the tables, but the unit's `RestrictAddressFamilies=` leaves the
//!   agent no netlink socket; waiting for Redis to answer a `PING` before
//!   AUTH proves the connection accepted, but sends a discovered server's
//!   impostor a byte and costs a round trip on every connection, and the
//!   table must still be read after it. `/proc/self/net` stays readable
//!   under the unit's `ProcSubset=pid` and `ProtectProc=invisible`, which
//!   hide `/proc/net`.
//! - **A unix socket**: `SO_PEERCRED`, the user the server ran as when it
//!   called `listen()`. The kernel copies it to our end at `connect()`,
//!   from the listener, so it holds while the connection waits to be
//!   accepted, on every kernel; the socket file's owner (and
//!   `/proc/net/unix`) would say who bound the path, not who listens.
//! - **TCP to another host**: nothing on this host can tell who that is.
//!   TLS (`rediss://`, the server's certificate checked) proves the
//!   server there, and is not checked here either.
//!
//! A socket's user is the one that created (or accepted) it, and only
//! root may change it (`fchown` of a socket needs `CAP_CHOWN`): a user
//! cannot pass a listener of theirs off as Redis's.
//!
//! A refusal says whose the socket is and whom the agent expected, in the
//! same words on every poll, so the poller logs it once per change.

use crate::config::DEFAULT_SERVER_USERS;
use crate::process::{uid_of, user_name};
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;
use tokio::net::{TcpStream, UnixStream};

/// The socket tables of this network namespace, as this process sees it.
const TABLES: [&str; 2] = ["/proc/self/net/tcp", "/proc/self/net/tcp6"];
/// Bytes read at most of one table: about 400,000 sockets. Past it the
/// server's end is not found, and the password not sent.
const MAX_TABLE_BYTES: u64 = 64 << 20;
/// How often the tables are read for a server's end that is not there
/// yet, and the wait between two reads: on loopback the server's end
/// exists once `connect()` returns, but the kernel may finish the
/// handshake's last step a moment later.
const LOOKS: u32 = 10;
const LOOK_AGAIN: Duration = Duration::from_millis(10);

/// The users who may hold the server's end: root, and others by name and
/// uid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owners {
    users: Vec<(String, u32)>,
}

impl Owners {
    /// `server_user` or, when it names no one, each of
    /// [`DEFAULT_SERVER_USERS`] that exists now; root always.
    pub fn expected(server_user: Option<&str>) -> Result<Owners, String> {
        let users: Vec<(String, u32)> = match server_user {
            Some(name) => {
                let uid = uid_of(name)
                    .ok_or_else(|| format!("there is no user named {name:?} (server_user)"))?;
                vec![(name.to_string(), uid)]
            }
            None => DEFAULT_SERVER_USERS
                .iter()
                .filter_map(|name| uid_of(name).map(|uid| (name.to_string(), uid)))
                .collect(),
        };
        Ok(Owners {
            users: users.into_iter().filter(|(_, uid)| *uid != 0).collect(),
        })
    }

    fn allows(&self, uid: u32) -> bool {
        uid == 0 || self.users.iter().any(|(_, u)| *u == uid)
    }

    /// "redis, valkey or root".
    fn names(&self) -> String {
        let mut names: Vec<&str> = self.users.iter().map(|(name, _)| name.as_str()).collect();
        names.push("root");
        let last = names.pop().unwrap_or("root");
        if names.is_empty() {
            last.to_string()
        } else {
            format!("{} or {last}", names.join(", "))
        }
    }

    /// Whether `what` (`"port"`, `"socket"`), held by `uid`, may have the
    /// password; if not, why, in words for the log and
    /// `redisInstanceLastError`.
    pub fn judge(&self, what: &str, uid: u32) -> Result<(), String> {
        if self.allows(uid) {
            return Ok(());
        }
        let who = match user_name(uid) {
            Some(name) => format!("uid {uid} ({})", name.escape_debug()),
            None => format!("uid {uid}"),
        };
        Err(format!("{what} held by {who}, not by {}", self.names()))
    }
}

/// What a check guards, which decides whom it expects and the words
/// that end its refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stake {
    /// The password, checked before AUTH: the server's end must be held
    /// by `server_user` (or, when it names no one, a default user), or
    /// root.
    Password { server_user: Option<String> },
    /// Everything: a server discovery found running as `uid` is polled
    /// only while that user (or root) still serves its address. After a
    /// restart another user may hold the port, or a socket at the same
    /// path in a sticky directory such as `/tmp`; discovery's checks were
    /// of the server it found then.
    Discovered { uid: u32 },
}

impl Stake {
    /// Whom it expects (the user database may be remote: called off the
    /// runtime's thread).
    fn owners(&self) -> Result<Owners, String> {
        match self {
            Stake::Password { server_user } => Owners::expected(server_user.as_deref()),
            Stake::Discovered { uid } => Ok(Owners {
                users: vec![(
                    user_name(*uid).unwrap_or_else(|| format!("uid {uid}")),
                    *uid,
                )]
                .into_iter()
                .filter(|(_, uid)| *uid != 0)
                .collect(),
            }),
        }
    }

    fn refused(&self, why: impl std::fmt::Display) -> String {
        match self {
            Stake::Password { .. } => format!(
                "{why}: the password was not sent \
                 (server_user names the user the server runs as)"
            ),
            Stake::Discovered { .. } => format!(
                "{why}: nothing was sent (a discovered server is polled only \
                 while the user it was found running as serves it)"
            ),
        }
    }
}

/// Before anything at `stake` goes over `stream`: if it leads to this
/// host, the server's end must be held by whom the stake expects. A
/// connection to another host is not checked.
pub async fn check_tcp(stream: &TcpStream, stake: &Stake) -> Result<(), String> {
    let (local, peer) = match (stream.local_addr(), stream.peer_addr()) {
        (Ok(local), Ok(peer)) => (local, peer),
        (Err(e), _) | (_, Err(e)) => return Err(stake.refused(e)),
    };
    if !on_this_host(local, peer) {
        return Ok(());
    }
    let owned = stake.clone();
    // The tables may be long and the user database may be remote (NSS):
    // off the runtime's thread.
    tokio::task::spawn_blocking(move || {
        let owners = owned.owners()?;
        for uid in holder_uids(local, peer)? {
            owners.judge("port", uid)?;
        }
        Ok(())
    })
    .await
    .unwrap_or_else(|e| Err(format!("checking who holds the port: {e}")))
    .map_err(|e| stake.refused(e))
}

/// Before anything at `stake` goes over `stream`: the server must run as
/// whom the stake expects.
pub async fn check_unix(stream: &UnixStream, stake: &Stake) -> Result<(), String> {
    let uid = match stream.peer_cred() {
        Ok(credentials) => credentials.uid(),
        Err(e) => {
            return Err(stake.refused(format!(
                "cannot tell who serves the socket (SO_PEERCRED): {e}"
            )))
        }
    };
    let owned = stake.clone();
    tokio::task::spawn_blocking(move || owned.owners()?.judge("socket", uid))
        .await
        .unwrap_or_else(|e| Err(format!("checking who serves the socket: {e}")))
        .map_err(|e| stake.refused(e))
}

/// Whether a connection from `local` to `peer` stays on this host: a
/// loopback address, or one of the host's own (which the kernel then
/// gives the connection at both ends).
pub fn on_this_host(local: SocketAddr, peer: SocketAddr) -> bool {
    let peer_ip = peer.ip().to_canonical();
    peer_ip.is_loopback() || peer_ip.is_unspecified() || peer_ip == local.ip().to_canonical()
}

/// The uids that must be allowed for the connection `local` → `peer`:
/// the listeners that could have taken it, and the server's end once
/// accepted; looked for a few times while the server's end is not there
/// yet.
fn holder_uids(local: SocketAddr, peer: SocketAddr) -> Result<Vec<u32>, String> {
    for look in 0..LOOKS {
        if look > 0 {
            std::thread::sleep(LOOK_AGAIN);
        }
        // An IPv6 server's end is in tcp6 only; an IPv4 one is in tcp, or
        // in tcp6 when a dual-stack listener accepted it. Each read walks
        // the kernel's whole table (milliseconds), so only as needed. The
        // listener that made the server's end is of its family, so in the
        // table where it is found.
        let ipv4 = peer.ip().to_canonical().is_ipv4();
        let mut seen = Seen::default();
        for table in TABLES {
            if seen.ends.is_empty() && (ipv4 || table.ends_with("tcp6")) {
                seen = read_table(Path::new(table), local, peer)?;
            }
        }
        if seen.ends.is_empty() {
            continue;
        }
        return seen.uids(peer.port());
    }
    // Not our local address in the words: its port changes with every
    // connection, and the poller says an error again when its text does.
    Err(format!(
        "cannot find who holds the port: the server's end of the connection is not in {}",
        TABLES.join(" or ")
    ))
}

fn read_table(path: &Path, local: SocketAddr, peer: SocketAddr) -> Result<Seen, String> {
    match std::fs::File::open(path) {
        Ok(file) => Ok(Seen::read(
            BufReader::new(file.take(MAX_TABLE_BYTES)),
            local,
            peer,
        )),
        // No IPv6 in this kernel: no tcp6.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && path.ends_with("tcp6") => {
            Ok(Seen::default())
        }
        Err(e) => Err(format!(
            "cannot read {} to see who holds the port: {e}",
            path.display()
        )),
    }
}

/// TCP_LISTEN in the table's `st` column.
const LISTEN: u8 = 0x0A;

/// One row of a table that matters to our connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Row {
    /// The kernel's TCP state number (`st`).
    state: u8,
    uid: u32,
    /// 0 for a socket no process holds: a connection not accepted yet.
    inode: u64,
}

impl Row {
    /// Established (`01`), or half open still (`03`, SYN_RECV). A closing
    /// socket cannot be judged: the one in TIME_WAIT (or an orphan in
    /// FIN_WAIT2) is shown as uid 0, and whoever closed it reads nothing
    /// more from it.
    fn is_live(&self) -> bool {
        matches!(self.state, 0x01 | 0x03)
    }

    /// Accepted: a process holds it, and the uid shown is that process's
    /// user. Before that (inode 0) the uid shown is the listener's on
    /// Linux 6.17 and later, and 0 on older kernels, so it says nothing.
    fn is_accepted(&self) -> bool {
        self.inode != 0
    }
}

/// What one table says about our connection.
#[derive(Debug, Default, PartialEq, Eq)]
struct Seen {
    /// The rows whose local address is our peer and whose remote
    /// address is our local one: the server's end.
    ends: Vec<Row>,
    /// The listening sockets that could have taken the connection: bound
    /// to our peer's port, at its address or the wildcard (`0.0.0.0`,
    /// `::`).
    listeners: Vec<Row>,
}

impl Seen {
    /// The rows of a `/proc/net/tcp`-formatted table that matter to the
    /// connection `local` → `peer`. Rows that do not read are skipped.
    fn read(table: impl BufRead, local: SocketAddr, peer: SocketAddr) -> Seen {
        let canonical = |a: SocketAddr| SocketAddr::new(a.ip().to_canonical(), a.port());
        let (local, peer) = (canonical(local), canonical(peer));
        let mut seen = Seen::default();
        // The header, then: sl local rem st tx:rx tr:when retrnsmt uid
        // timeout inode ...
        for line in table.lines().skip(1).map_while(Result::ok) {
            let mut fields = line.split_whitespace();
            let (Some(_), Some(here), Some(there), Some(state)) =
                (fields.next(), fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            let (Some(here), Some(there), Ok(state)) = (
                crate::proc_net::parse_socket_address(here).map(canonical),
                crate::proc_net::parse_socket_address(there).map(canonical),
                u8::from_str_radix(state, 16),
            ) else {
                continue;
            };
            let end = here == peer && there == local;
            let listener = state == LISTEN
                && here.port() == peer.port()
                && (here.ip() == peer.ip() || here.ip().is_unspecified());
            if !end && !listener {
                continue;
            }
            let (Some(Ok(uid)), Some(Ok(inode))) = (
                fields.nth(3).map(str::parse::<u32>),
                fields.nth(1).map(str::parse::<u64>),
            ) else {
                continue;
            };
            let row = Row { state, uid, inode };
            if end {
                seen.ends.push(row);
            } else {
                seen.listeners.push(row);
            }
        }
        seen
    }

    /// Whose the connection is: every listener that could have taken it
    /// (bound to its port at its address or the wildcard), and the server's
    /// end once someone accepted it. All must be allowed.
    fn uids(&self, port: u16) -> Result<Vec<u32>, String> {
        let live: Vec<&Row> = self.ends.iter().filter(|end| end.is_live()).collect();
        if live.is_empty() {
            return Err("the server closed the connection at once".into());
        }
        let mut uids: Vec<u32> = self.listeners.iter().map(|l| l.uid).collect();
        if uids.is_empty() && live.iter().any(|end| !end.is_accepted()) {
            // Its listener closed: the connection is reset, or about to be.
            return Err(format!(
                "the connection was not accepted, and nothing listens on port {port} any more"
            ));
        }
        uids.extend(
            live.iter()
                .filter(|end| end.is_accepted())
                .map(|end| end.uid),
        );
        uids.sort_unstable();
        uids.dedup();
        Ok(uids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    /// The words of an address as this host's table prints them.
    fn hex(address: SocketAddr) -> String {
        let words = |bytes: &[u8]| -> String {
            bytes
                .chunks(4)
                .map(|c| format!("{:08X}", u32::from_ne_bytes([c[0], c[1], c[2], c[3]])))
                .collect()
        };
        let ip = match address.ip() {
            IpAddr::V4(v4) => words(&v4.octets()),
            IpAddr::V6(v6) => words(&v6.octets()),
        };
        format!("{ip}:{:04X}", address.port())
    }

    fn row(here: SocketAddr, there: SocketAddr, state: &str, uid: u32, inode: u64) -> String {
        format!(
            "   0: {} {} {state} 00000000:00000000 00:00000000 00000000 {uid:>5}        0 {inode} 1 0000000000000000 100 0 0 10 0\n",
            hex(here),
            hex(there)
        )
    }

    const HEADER: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";

    fn addr(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    fn row_of(state: u8, uid: u32, inode: u64) -> Row {
        Row { state, uid, inode }
    }

    #[test]
    fn the_server_end_is_the_row_facing_ours_and_the_listener_the_ports() {
        let (ours, server) = (addr("127.0.0.1:51000"), addr("127.0.0.1:6379"));
        let table = format!(
            "{HEADER}{}{}{}{}{}{}",
            // The listener, another user's connection to it, our end, the
            // server's end; a listener at another address, one at another
            // port.
            row(server, addr("0.0.0.0:0"), "0A", 102, 500),
            row(addr("127.0.0.1:51001"), server, "01", 1000, 501),
            row(ours, server, "01", 999, 502),
            row(server, ours, "01", 102, 503),
            row(addr("127.0.0.2:6379"), addr("0.0.0.0:0"), "0A", 65534, 504),
            row(addr("0.0.0.0:6380"), addr("0.0.0.0:0"), "0A", 65534, 505),
        );
        let seen = Seen::read(table.as_bytes(), ours, server);
        assert_eq!(seen.ends, [row_of(1, 102, 503)]);
        assert_eq!(seen.listeners, [row_of(LISTEN, 102, 500)]);
        assert_eq!(seen.uids(6379), Ok(vec![102]));
    }

    /// Linux 6.1 (Debian 12) and 6.12 (Debian 13), as a reviewer saw it: a
    /// connection that `nobody`'s listener has not accepted yet is shown as
    /// root's (uid 0, no inode). It is judged by its listener.
    #[test]
    fn a_connection_not_yet_accepted_is_judged_by_its_listener_not_as_root() {
        let (ours, server) = (addr("127.0.0.1:34214"), addr("127.0.0.1:40511"));
        let captured = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:9E3F 00000000:0000 0A 00000000:00000001 00:00000000 00000000 65534        0 10219 1 0000000000000000 100 0 0 10 0
   1: 0100007F:9E3F 0100007F:85A6 01 00000000:00000021 00:00000000 00000000     0        0 0 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:85A6 0100007F:9E3F 01 00000000:00000000 00:00000000 00000000   102        0 10230 1 0000000000000000 20 4 30 10 -1
";
        if cfg!(target_endian = "little") {
            let seen = Seen::read(captured.as_bytes(), ours, server);
            assert_eq!(seen.ends, [row_of(1, 0, 0)]);
            assert_eq!(seen.uids(40511), Ok(vec![65534]));
            let owners = Owners {
                users: vec![("redis".into(), 102)],
            };
            let why = owners.judge("port", seen.uids(40511).unwrap()[0]);
            assert!(why.unwrap_err().starts_with("port held by uid 65534"));
        }
        // Redis's own listener, its connection not accepted yet: allowed.
        let table = format!(
            "{HEADER}{}{}",
            row(server, addr("0.0.0.0:0"), "0A", 102, 7),
            row(server, ours, "01", 0, 0),
        );
        assert_eq!(
            Seen::read(table.as_bytes(), ours, server).uids(40511),
            Ok(vec![102])
        );
        // Half open still: the same.
        let table = format!(
            "{HEADER}{}{}",
            row(addr("0.0.0.0:40511"), addr("0.0.0.0:0"), "0A", 65534, 7),
            row(server, ours, "03", 65534, 0),
        );
        assert_eq!(
            Seen::read(table.as_bytes(), ours, server).uids(40511),
            Ok(vec![65534])
        );
    }

    #[test]
    fn every_listener_that_could_have_taken_it_and_the_acceptor_are_judged() {
        let (ours, server) = (addr("127.0.0.1:51000"), addr("127.0.0.1:6379"));
        // At the address and at the wildcard (bound to other devices, they
        // may be two users'; either may have taken it).
        let table = format!(
            "{HEADER}{}{}{}",
            row(server, addr("0.0.0.0:0"), "0A", 102, 7),
            row(addr("0.0.0.0:6379"), addr("0.0.0.0:0"), "0A", 65534, 8),
            row(server, ours, "01", 0, 0),
        );
        assert_eq!(
            Seen::read(table.as_bytes(), ours, server).uids(6379),
            Ok(vec![102, 65534])
        );
        // Accepted by another user than the listener's.
        let table = format!(
            "{HEADER}{}{}",
            row(server, addr("0.0.0.0:0"), "0A", 102, 7),
            row(server, ours, "01", 65534, 9),
        );
        assert_eq!(
            Seen::read(table.as_bytes(), ours, server).uids(6379),
            Ok(vec![102, 65534])
        );
        // The listener gone: an accepted end is judged alone, one not
        // accepted is refused (its listener's close resets it).
        let accepted = format!("{HEADER}{}", row(server, ours, "01", 102, 9));
        assert_eq!(
            Seen::read(accepted.as_bytes(), ours, server).uids(6379),
            Ok(vec![102])
        );
        let orphan = format!("{HEADER}{}", row(server, ours, "01", 0, 0));
        let why = Seen::read(orphan.as_bytes(), ours, server)
            .uids(6379)
            .unwrap_err();
        assert!(why.contains("not accepted"), "{why}");
        // Closing at once.
        let closing = format!("{HEADER}{}", row(server, ours, "06", 0, 0));
        assert!(Seen::read(closing.as_bytes(), ours, server)
            .uids(6379)
            .is_err());
    }

    #[test]
    fn an_ipv4_connection_to_a_dual_stack_listener_is_found_in_tcp6() {
        let (ours, server) = (addr("127.0.0.1:51000"), addr("127.0.0.1:6379"));
        let table = format!(
            "{HEADER}{}{}{}",
            row(addr("[::]:6379"), addr("[::]:0"), "0A", 65534, 7),
            row(addr("[::1]:6379"), addr("[::]:0"), "0A", 1000, 8),
            row(
                addr("[::ffff:127.0.0.1]:6379"),
                addr("[::ffff:127.0.0.1]:51000"),
                "01",
                0,
                0
            ),
        );
        let seen = Seen::read(table.as_bytes(), ours, server);
        assert_eq!(seen.ends, [row_of(1, 0, 0)]);
        // [::1] takes no IPv4 connection.
        assert_eq!(seen.uids(6379), Ok(vec![65534]));
        // As the kernel prints it here: 127.0.0.1:40999 <- :57352.
        let real = "  sl  local_address\n   0: 0000000000000000FFFF00000100007F:A027 0000000000000000FFFF00000100007F:E008 01 00000000:00000000 00:00000000 00000000 65534        0 4242 1\n";
        if cfg!(target_endian = "little") {
            let seen = Seen::read(
                real.as_bytes(),
                addr("127.0.0.1:57352"),
                addr("127.0.0.1:40999"),
            );
            assert_eq!(seen.ends, [row_of(1, 65534, 4242)]);
            assert_eq!(seen.uids(40999), Ok(vec![65534]));
        }
    }

    #[test]
    fn a_closing_end_is_not_live() {
        assert!(!row_of(6, 0, 0).is_live());
        assert!(!row_of(5, 0, 0).is_live());
        assert!(row_of(1, 7, 0).is_live() && !row_of(1, 7, 0).is_accepted());
    }

    #[test]
    fn loopback_and_the_hosts_own_address_are_this_host() {
        let on = |l: &str, p: &str| on_this_host(addr(l), addr(p));
        assert!(on("127.0.0.1:5000", "127.0.0.1:6379"));
        assert!(on("127.0.0.1:5000", "127.3.0.1:6379"));
        assert!(on("[::1]:5000", "[::1]:6379"));
        assert!(on("[::ffff:127.0.0.1]:5000", "[::ffff:127.0.0.1]:6379"));
        assert!(on("192.0.2.5:5000", "192.0.2.5:6379"));
        assert!(!on("192.0.2.5:5000", "192.0.2.9:6379"));
        assert!(!on("[2001:db8::5]:5000", "[2001:db8::9]:6379"));
    }

    #[test]
    fn a_refusal_names_the_holder_and_whom_the_agent_expected() {
        let owners = Owners {
            users: vec![("redis".into(), 102), ("valkey".into(), 103)],
        };
        assert!(owners.judge("port", 0).is_ok() && owners.judge("port", 103).is_ok());
        let why = owners.judge("port", 65534).unwrap_err();
        assert!(
            why.starts_with("port held by uid 65534")
                && why.contains("not by redis, valkey or root"),
            "{why}"
        );
        assert!(
            !why.contains("password"),
            "the stake's words are added by the check: {why}"
        );
        let root_only = Owners { users: Vec::new() };
        let why = root_only.judge("socket", 4_000_000).unwrap_err();
        assert!(why == "socket held by uid 4000000, not by root", "{why}");
        // The same words on every poll.
        assert_eq!(why, root_only.judge("socket", 4_000_000).unwrap_err());
    }

    #[test]
    fn server_user_names_one_user_and_root_is_always_allowed() {
        let owners = Owners::expected(Some("root")).unwrap();
        assert!(owners.users.is_empty() && owners.allows(0));
        assert_eq!(owners.names(), "root");
        let missing = Owners::expected(Some("no such user, surely")).unwrap_err();
        assert!(missing.contains("no user named"), "{missing}");
    }

    /// The current user, by name, as `server_user`.
    fn me() -> String {
        // SAFETY: geteuid cannot fail.
        user_name(unsafe { libc::geteuid() }).expect("the current user has a name")
    }

    /// The password's stake with the current user as `server_user`.
    fn mine() -> Stake {
        Stake::Password {
            server_user: Some(me()),
        }
    }

    #[test]
    fn a_discovered_server_is_expected_as_the_user_it_was_found_running_as() {
        let stake = Stake::Discovered { uid: 65534 };
        let owners = stake.owners().unwrap();
        assert!(owners.judge("socket", 65534).is_ok() && owners.judge("socket", 0).is_ok());
        let why = stake.refused(owners.judge("socket", 4_000_000).unwrap_err());
        assert!(
            why.starts_with("socket held by uid 4000000, not by ")
                && why.contains("nothing was sent")
                && !why.contains("password"),
            "{why}"
        );
        // A uid without a name is named by its number.
        let owners = Stake::Discovered { uid: 4_000_001 }.owners().unwrap();
        assert!(owners
            .judge("port", 1)
            .unwrap_err()
            .ends_with("not by uid 4000001 or root"));
    }

    /// A real connection on loopback: the server's end is found, and it is
    /// this process's (both ends are ours here; the system tests put the
    /// listener under another user).
    #[tokio::test(flavor = "current_thread")]
    async fn a_loopback_listener_of_our_own_user_is_found_and_allowed() {
        for bind in ["127.0.0.1:0", "[::1]:0"] {
            let Ok(listener) = tokio::net::TcpListener::bind(bind).await else {
                continue; // no IPv6 here
            };
            let server = listener.local_addr().unwrap();
            let stream = TcpStream::connect(server).await.unwrap();
            let local = stream.local_addr().unwrap();
            let uids = tokio::task::spawn_blocking(move || holder_uids(local, server))
                .await
                .unwrap()
                .unwrap();
            // SAFETY: geteuid cannot fail.
            assert_eq!(uids, [unsafe { libc::geteuid() }], "{bind}");
            check_tcp(&stream, &mine()).await.unwrap();
            // Accepted now: still ours.
            let _accepted = listener.accept().await.unwrap();
            check_tcp(&stream, &mine()).await.unwrap();
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_unix_socket_is_judged_by_its_servers_user() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("redis.sock");
        let _listener = tokio::net::UnixListener::bind(&path).unwrap();
        let stream = UnixStream::connect(&path).await.unwrap();
        check_unix(&stream, &mine()).await.unwrap();
    }
}
