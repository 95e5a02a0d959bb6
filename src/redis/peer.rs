//! Who holds the other end of a connection, asked before the password
//! goes over it (issue 24, review M2).
//!
//! Redis is down during restarts, upgrades and boot, and 6379 is not a
//! privileged port: meanwhile any local user may listen there, and a
//! client that sends AUTH to whatever accepts hands that user the
//! password. So before the password leaves, the agent asks the kernel
//! whose the server's end of the connection is, and sends nothing unless
//! it is the instance's `server_user`'s (by default each of `redis` and
//! `valkey` that exists) or root's:
//!
//! - **TCP to this host**, at a loopback address or at one of the host's
//!   own (the kernel then gives the connection that address at both
//!   ends): the server's end is the socket whose local address is our
//!   peer and whose peer is our local address, in `/proc/self/net/tcp` or
//!   `tcp6` (an IPv4 connection accepted by a dual-stack listener is there
//!   as `::ffff:a.b.c.d`). Its uid is the user of the process that
//!   accepted it or, while it waits in the listener's queue, the user that
//!   created the listening socket. `/proc/self/net` stays readable under
//!   the unit's `ProcSubset=pid` and `ProtectProc=invisible`, which hide
//!   `/proc/net`; netlink's sock_diag would tell the same, but the unit's
//!   `RestrictAddressFamilies=` leaves the agent no netlink socket.
//! - **A unix socket**: `SO_PEERCRED`, the user the server ran as when it
//!   called `listen()`.
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
        for uid in server_end_uids(local, peer)? {
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

/// The uids of the server's end of the connection `local` → `peer`, looked
/// for a few times while it is not there yet.
fn server_end_uids(local: SocketAddr, peer: SocketAddr) -> Result<Vec<u32>, String> {
    for look in 0..LOOKS {
        if look > 0 {
            std::thread::sleep(LOOK_AGAIN);
        }
        let mut ends = Vec::new();
        // An IPv6 server's end is in tcp6 only; an IPv4 one is in tcp, or
        // in tcp6 when a dual-stack listener accepted it. Each read walks
        // the kernel's whole table (milliseconds), so only as needed.
        let ipv4 = peer.ip().to_canonical().is_ipv4();
        for table in TABLES {
            if ends.is_empty() && (ipv4 || table.ends_with("tcp6")) {
                ends.extend(read_table(Path::new(table), local, peer)?);
            }
        }
        if ends.is_empty() {
            continue;
        }
        let live: Vec<u32> = ends
            .iter()
            .filter(|end| end.is_live())
            .map(|end| end.uid)
            .collect();
        if live.is_empty() {
            return Err("the server closed the connection at once".into());
        }
        return Ok(live);
    }
    // Not our local address in the words: its port changes with every
    // connection, and the poller says an error again when its text does.
    Err(format!(
        "cannot find who holds the port: the server's end of the connection is not in {}",
        TABLES.join(" or ")
    ))
}

fn read_table(path: &Path, local: SocketAddr, peer: SocketAddr) -> Result<Vec<End>, String> {
    match std::fs::File::open(path) {
        Ok(file) => Ok(server_ends(
            BufReader::new(file.take(MAX_TABLE_BYTES)),
            local,
            peer,
        )),
        // No IPv6 in this kernel: no tcp6.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && path.ends_with("tcp6") => {
            Ok(Vec::new())
        }
        Err(e) => Err(format!(
            "cannot read {} to see who holds the port: {e}",
            path.display()
        )),
    }
}

/// One row of a table that is the server's end of our connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct End {
    /// The kernel's TCP state number (`st`).
    state: u8,
    uid: u32,
}

impl End {
    /// Established (`01`), or half open still (`03`, SYN_RECV, shown with
    /// its listener's uid). A closing socket cannot be judged: the one
    /// in TIME_WAIT (or an orphan in FIN_WAIT2) is shown as uid 0, and
    /// whoever closed it reads nothing more from it.
    fn is_live(&self) -> bool {
        matches!(self.state, 0x01 | 0x03)
    }
}

/// The rows of a `/proc/net/tcp`-formatted table whose local address is
/// `peer` and whose remote address is `local`: the other end of our
/// connection. Rows that do not read are skipped.
fn server_ends(table: impl BufRead, local: SocketAddr, peer: SocketAddr) -> Vec<End> {
    let canonical = |a: SocketAddr| SocketAddr::new(a.ip().to_canonical(), a.port());
    let (local, peer) = (canonical(local), canonical(peer));
    let mut ends = Vec::new();
    // The header, then: sl local rem st tx:rx tr:when retrnsmt uid ...
    for line in table.lines().skip(1).map_while(Result::ok) {
        let mut fields = line.split_whitespace();
        let (Some(_), Some(here), Some(there), Some(state)) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if crate::proc_net::parse_socket_address(here).map(canonical) != Some(peer)
            || crate::proc_net::parse_socket_address(there).map(canonical) != Some(local)
        {
            continue;
        }
        let (Ok(state), Some(Ok(uid))) = (
            u8::from_str_radix(state, 16),
            fields.nth(3).map(str::parse::<u32>),
        ) else {
            continue;
        };
        ends.push(End { state, uid });
    }
    ends
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

    fn row(here: SocketAddr, there: SocketAddr, state: &str, uid: u32) -> String {
        format!(
            "   0: {} {} {state} 00000000:00000000 00:00000000 00000000 {uid:>5}        0 0 1 0000000000000000 100 0 0 10 0\n",
            hex(here),
            hex(there)
        )
    }

    const HEADER: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";

    fn addr(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    #[test]
    fn the_server_end_is_the_row_facing_ours_not_ours() {
        let (ours, server) = (addr("127.0.0.1:51000"), addr("127.0.0.1:6379"));
        let table = format!(
            "{HEADER}{}{}{}{}",
            // The listener, another user's connection to it, our end.
            row(server, addr("0.0.0.0:0"), "0A", 102),
            row(addr("127.0.0.1:51001"), server, "01", 1000),
            row(ours, server, "01", 999),
            row(server, ours, "01", 65534),
        );
        assert_eq!(
            server_ends(table.as_bytes(), ours, server),
            [End {
                state: 1,
                uid: 65534
            }]
        );
    }

    #[test]
    fn an_ipv4_connection_to_a_dual_stack_listener_is_found_in_tcp6() {
        let (ours, server) = (addr("127.0.0.1:51000"), addr("127.0.0.1:6379"));
        let table = format!(
            "{HEADER}{}{}",
            row(addr("[::]:6379"), addr("[::]:0"), "0A", 65534),
            row(
                addr("[::ffff:127.0.0.1]:6379"),
                addr("[::ffff:127.0.0.1]:51000"),
                "03",
                65534
            ),
        );
        let ends = server_ends(table.as_bytes(), ours, server);
        assert_eq!(ends.len(), 1);
        assert!(ends[0].is_live() && ends[0].uid == 65534);
        // As the kernel prints it here: 127.0.0.1:40999 <- :57352.
        let real = "  sl  local_address\n   0: 0000000000000000FFFF00000100007F:A027 0000000000000000FFFF00000100007F:E008 01 00000000:00000000 00:00000000 00000000 65534        0 0 1\n";
        if cfg!(target_endian = "little") {
            assert_eq!(
                server_ends(
                    real.as_bytes(),
                    addr("127.0.0.1:57352"),
                    addr("127.0.0.1:40999")
                ),
                [End {
                    state: 1,
                    uid: 65534
                }]
            );
        }
    }

    #[test]
    fn a_closing_end_is_not_live() {
        assert!(!End { state: 6, uid: 0 }.is_live());
        assert!(!End { state: 5, uid: 0 }.is_live());
        assert!(End { state: 1, uid: 7 }.is_live());
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
            let uids = tokio::task::spawn_blocking(move || server_end_uids(local, server))
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
