//! What discovery believes of a process named `redis-server`: any user
//! may name a process so, and the doctor (run as root) and an agent
//! started outside the package's unit see every user's processes.
//!
//! - **Its owner.** A server process is taken only when it runs as root,
//!   as the user scanning (the agent's, or the doctor's), or as a service
//!   user (`redis`, `valkey`): every one of its user ids, real, effective,
//!   saved and file system. Another user's is listed, never connected to.
//! - **Its unix socket.** The path the kernel lists is only what the
//!   socket was bound to (and a newline in another socket's path can forge
//!   a line, see `super::tables`). A path is taken when it is printable
//!   UTF-8; when every directory on the way, links resolved, belongs to
//!   root or the server's user and no one else may write it (a sticky
//!   directory such as `/tmp` aside: no one else may replace what is in
//!   it); when the file itself is a socket, not a link, of the server's
//!   user (or root's); and when what answers on it is the server: a
//!   connection opened and closed at once, nothing sent, whose peer
//!   (`SO_PEERCRED`) is the process or the one that forked it. The path
//!   polled is then the resolved one.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The process names (`comm`) taken for servers.
pub const SERVER_PROGRAMS: &[&str] = &["redis-server", "valkey-server"];
/// The users whose listening TCP sockets are taken when their process is
/// hidden: Debian's `redis-server` and `valkey-server` run as these.
pub const SERVICE_USERS: &[&str] = &["redis", "valkey"];

/// Who a process runs as, from `/proc/PID/status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub pid: u32,
    /// The process that started it (a server, for its forked child).
    pub ppid: u32,
    /// Real, effective, saved and file system user ids.
    pub uids: [u32; 4],
    /// Its effective group id.
    pub gid: u32,
}

impl Owner {
    /// From the text of `/proc/PID/status`.
    pub fn parse(pid: u32, status: &str) -> Option<Owner> {
        let ids = |name: &str| -> Option<Vec<u32>> {
            let line = status.lines().find_map(|l| l.strip_prefix(name))?;
            line.split_whitespace().map(|n| n.parse().ok()).collect()
        };
        let uids = ids("Uid:")?;
        let gids = ids("Gid:")?;
        let ppid = ids("PPid:")?;
        Some(Owner {
            pid,
            ppid: *ppid.first()?,
            uids: uids.try_into().ok()?,
            gid: *gids.get(1)?,
        })
    }

    /// The effective user id: the owner of the files it makes.
    pub fn uid(&self) -> u32 {
        self.uids[1]
    }
}

/// The users whose server processes discovery connects to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Owners {
    /// [`SERVICE_USERS`]' ids: their listening TCP sockets are taken even
    /// where their processes are hidden.
    pub service: Vec<u32>,
    /// Root, the user scanning and the service users.
    pub trusted: Vec<u32>,
}

impl Owners {
    /// The service users `service`, for a scan run as `me`.
    pub fn new(service: Vec<u32>, me: u32) -> Owners {
        let mut trusted = vec![0, me];
        trusted.extend(&service);
        trusted.sort_unstable();
        trusted.dedup();
        Owners { service, trusted }
    }

    /// The service users of this host (from `/etc/passwd`), for a scan as
    /// this process's effective user.
    pub fn of_this_host(passwd: &str) -> Owners {
        // SAFETY: a plain getter.
        let me = unsafe { libc::geteuid() };
        Owners::new(service_uids(passwd), me)
    }

    /// Whether every user id of `owner` is trusted.
    pub fn trusts(&self, owner: &Owner) -> bool {
        owner.uids.iter().all(|uid| self.trusted.contains(uid))
    }
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

/// The path at which `owner`'s server is polled, for the unix socket the
/// kernel lists at `path`: its directories resolved, every check of this
/// module passed; else why not, in words for the log (`path` printable).
pub fn checked_socket(path: &Path, owner: &Owner) -> Result<PathBuf, String> {
    let Some(text) = path.to_str().filter(|t| crate::text::is_printable(t)) else {
        return Err(
            "its path is not printable UTF-8 (no name of it could be shown or matched)".into(),
        );
    };
    let (Some(dir), Some(file)) = (path.parent(), path.file_name()) else {
        return Err("it names no file".into());
    };
    let dir = std::fs::canonicalize(dir).map_err(|e| format!("its directory: {e}"))?;
    let resolved = dir.join(file);
    if !resolved.to_str().is_some_and(crate::text::is_printable) {
        return Err("its directory's resolved path is not printable UTF-8".into());
    }
    for above in dir.ancestors() {
        safe_directory(above, owner)?;
    }
    let meta = std::fs::symlink_metadata(&resolved).map_err(|e| format!("{text}: {e}"))?;
    if !meta.file_type().is_socket() {
        return Err(if meta.file_type().is_symlink() {
            "it is a symbolic link now, which is not followed".into()
        } else {
            "it is no socket now".into()
        });
    }
    if meta.uid() != owner.uid() && meta.uid() != 0 {
        return Err(format!(
            "the socket file belongs to uid {}, not to the server's user (uid {})",
            meta.uid(),
            owner.uid()
        ));
    }
    let peer = peer_pid(&resolved).map_err(|e| format!("no answer on it: {e}"))?;
    if peer != owner.pid && peer != owner.ppid {
        return Err(format!(
            "another process (pid {peer}) answers on it, not the server"
        ));
    }
    Ok(resolved)
}

/// A directory on the way to a socket: root's or the server user's, and
/// writable by no one else unless sticky.
fn safe_directory(dir: &Path, owner: &Owner) -> Result<(), String> {
    let meta = std::fs::symlink_metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let shown = crate::text::printable(&dir.to_string_lossy());
    if meta.uid() != 0 && meta.uid() != owner.uid() {
        return Err(format!(
            "{shown} belongs to uid {}, neither root nor the server's user, who could replace the socket",
            meta.uid()
        ));
    }
    let mode = meta.mode();
    let sticky = mode & 0o1000 != 0;
    let others = mode & 0o002 != 0;
    let group = mode & 0o020 != 0 && meta.gid() != 0 && meta.gid() != owner.gid;
    if !sticky && (others || group) {
        return Err(format!(
            "{shown} is writable by {} (mode {:04o}): the socket could be replaced",
            if others { "all" } else { "its group" },
            mode & 0o7777
        ));
    }
    Ok(())
}

/// The process that listens on the unix socket at `path` (`SO_PEERCRED`
/// of a connection to it), asked without waiting (a full backlog is an
/// error) and without sending a byte.
pub fn peer_pid(path: &Path) -> io::Result<u32> {
    let bytes = path.as_os_str().as_bytes();
    // SAFETY: a zeroed sockaddr_un is a valid empty address.
    let mut address: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    if bytes.len() >= address.sun_path.len() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "path too long for a unix socket",
        ));
    }
    address.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (to, from) in address.sun_path.iter_mut().zip(bytes) {
        *to = *from as libc::c_char;
    }
    // SAFETY: plain system calls on a descriptor this function owns.
    unsafe {
        let fd = libc::socket(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        );
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let fd = OwnedFd::from_raw_fd(fd);
        if libc::connect(
            fd.as_raw_fd(),
            (&address as *const libc::sockaddr_un).cast(),
            std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t,
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
        let mut credentials: libc::ucred = std::mem::zeroed();
        let mut length = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
        if libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut credentials as *mut libc::ucred).cast(),
            &mut length,
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
        u32::try_from(credentials.pid)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "no peer process"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn me() -> Owner {
        // SAFETY: plain getters.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        Owner {
            pid: std::process::id(),
            ppid: 1,
            uids: [uid; 4],
            gid,
        }
    }

    #[test]
    fn a_status_file_gives_the_ids() {
        let status = "Name:\tredis-server\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t812\nNgid:\t0\n\
                      Pid:\t812\nPPid:\t1\nTracerPid:\t0\nUid:\t102\t102\t102\t102\nGid:\t105\t105\t105\t105\n";
        let owner = Owner::parse(812, status).unwrap();
        assert_eq!(
            owner,
            Owner {
                pid: 812,
                ppid: 1,
                uids: [102; 4],
                gid: 105
            }
        );
        assert_eq!(Owner::parse(1, "Name:\tx\n"), None);
        let owners = Owners::new(vec![102], 1000);
        assert_eq!(owners.trusted, [0, 102, 1000]);
        assert!(owners.trusts(&owner));
        let mut setuid = owner.clone();
        setuid.uids[0] = 65534;
        assert!(!owners.trusts(&setuid));
    }

    #[test]
    fn service_users_from_passwd() {
        let passwd = "root:x:0:0:root:/root:/bin/bash\n\
                      redis:x:104:110::/var/lib/redis:/usr/sbin/nologin\n\
                      valkey:x:105:111::/var/lib/valkey:/usr/sbin/nologin\n\
                      redisx:x:9:9::/:/bin/false\nbroken\n";
        assert_eq!(service_uids(passwd), [104, 105]);
    }

    /// A socket this test listens on is taken at its resolved path; a
    /// link to it, a path through a linked directory made anew, and a
    /// socket another process answers on are not.
    #[test]
    fn a_socket_is_taken_only_as_itself_and_only_for_its_server() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let socket = real.join("cache.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let me = me();
        let canonical = std::fs::canonicalize(&socket).unwrap();
        assert_eq!(checked_socket(&socket, &me).unwrap(), canonical);
        // Through a linked directory: the resolved path.
        let via = dir.path().join("via");
        std::os::unix::fs::symlink(&real, &via).unwrap();
        assert_eq!(
            checked_socket(&via.join("cache.sock"), &me).unwrap(),
            canonical
        );
        // The path swapped for a link to the socket: refused.
        let swapped = real.join("swapped.sock");
        std::os::unix::fs::symlink(&socket, &swapped).unwrap();
        let why = checked_socket(&swapped, &me).unwrap_err();
        assert!(why.contains("symbolic link"), "{why}");
        // Another server's pid: refused.
        let other = Owner {
            pid: 1,
            ..me.clone()
        };
        let why = checked_socket(&socket, &other).unwrap_err();
        assert!(why.contains("another process"), "{why}");
        // A directory all may write (not sticky): refused.
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o777)).unwrap();
        let why = checked_socket(&socket, &me).unwrap_err();
        assert!(why.contains("writable by all"), "{why}");
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(checked_socket(&socket, &me).is_ok());
        // Not printable: refused before anything is looked at.
        let why = checked_socket(Path::new("/tmp/\u{1b}[2K.sock"), &me).unwrap_err();
        assert!(why.contains("not printable"), "{why}");
        // A regular file.
        let file = real.join("file.sock");
        std::fs::write(&file, "").unwrap();
        assert!(checked_socket(&file, &me)
            .unwrap_err()
            .contains("no socket"));
    }
}
