//! Whether a user may reach a path, for a user other than the one running
//! the doctor. Run as root (as documented), the doctor asks the kernel
//! itself: a child process takes the user's ids and groups and calls
//! `access(2)`, so POSIX ACLs (the shipped `puppet-acl.sh` grants the
//! agent's user Puppet's files with `setfacl`) count as they do for the
//! agent. The permission bits (search on every directory on the way, then
//! read or write on the file) give the words of a refusal, and the answer
//! when the doctor is not root and cannot take another user's ids.

use std::ffi::CString;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// A user and the groups it is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    pub groups: Vec<u32>,
}

impl User {
    /// The user named `name`, from the password and group databases.
    pub fn lookup(name: &str) -> Option<User> {
        let (uid, gid) = crate::process::user_ids(name)?;
        let c_name = CString::new(name).ok()?;
        let mut groups = vec![0 as libc::gid_t; 256];
        let mut count = groups.len() as libc::c_int;
        // SAFETY: groups has room for `count` entries.
        let rc =
            unsafe { libc::getgrouplist(c_name.as_ptr(), gid, groups.as_mut_ptr(), &mut count) };
        groups.truncate(if rc < 0 { 0 } else { count.max(0) as usize });
        if !groups.contains(&gid) {
            groups.push(gid);
        }
        Some(User {
            name: name.to_string(),
            uid,
            gid,
            groups,
        })
    }

    /// The user running this process, with its effective ids and groups.
    pub fn current() -> User {
        // SAFETY: plain getters of our own credentials.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let mut groups = vec![0 as libc::gid_t; 256];
        // SAFETY: groups has room for its length.
        let n = unsafe { libc::getgroups(groups.len() as libc::c_int, groups.as_mut_ptr()) };
        groups.truncate(n.max(0) as usize);
        if !groups.contains(&gid) {
            groups.push(gid);
        }
        User {
            name: crate::process::user_name(uid).unwrap_or_else(|| uid.to_string()),
            uid,
            gid,
            groups,
        }
    }
}

/// What a user wants of a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    Read,
    /// Writing; connecting to a unix socket needs it.
    Write,
}

/// `Ok` when `user` may search its way to `path` and read or write it;
/// otherwise the first thing in the way, in words.
pub fn may(user: &User, path: &Path, want: Want) -> Result<(), String> {
    if user.uid == 0 {
        return Ok(());
    }
    let by_bits = by_bits(user, path, want);
    match kernel_says(user, path, want) {
        Some(true) => Ok(()),
        Some(false) => by_bits.and_then(|()| {
            Err(format!(
                "{} may not {} {} (the permission bits allow it: an ACL or a security module \
                 refuses it)",
                user.name,
                verb(want),
                path.display()
            ))
        }),
        None => by_bits,
    }
}

fn verb(want: Want) -> &'static str {
    match want {
        Want::Read => "read",
        Want::Write => "write to",
    }
}

/// The kernel's own answer for `user`, when this process may take the
/// user's ids (it is root): a forked child sets the user's groups, group
/// and user, calls `access(2)` and exits with the answer. `None` when it
/// cannot be asked.
fn kernel_says(user: &User, path: &Path, want: Want) -> Option<bool> {
    use std::os::unix::ffi::OsStrExt;
    // SAFETY: a plain getter.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    // Everything the child needs is made before the fork: after it, the
    // child only makes system calls (another thread may hold the
    // allocator's lock).
    let c_path = CString::new(path.as_os_str().as_bytes()).ok()?;
    let groups: Vec<libc::gid_t> = user.groups.clone();
    let mode = match want {
        Want::Read => libc::R_OK,
        Want::Write => libc::W_OK,
    };
    // SAFETY: the child calls only async-signal-safe functions on memory
    // prepared above, and leaves with _exit.
    unsafe {
        let pid = libc::fork();
        if pid < 0 {
            return None;
        }
        if pid == 0 {
            let code = if libc::setgroups(groups.len(), groups.as_ptr()) != 0
                || libc::setgid(user.gid) != 0
                || libc::setuid(user.uid) != 0
            {
                2
            } else if libc::access(c_path.as_ptr(), mode) == 0 {
                0
            } else {
                1
            };
            libc::_exit(code);
        }
        let mut status = 0;
        while libc::waitpid(pid, &mut status, 0) < 0 {
            if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                return None;
            }
        }
        match (libc::WIFEXITED(status), libc::WEXITSTATUS(status)) {
            (true, 0) => Some(true),
            (true, 1) => Some(false),
            _ => None,
        }
    }
}

/// What the permission bits say, in the kernel's order.
fn by_bits(user: &User, path: &Path, want: Want) -> Result<(), String> {
    let mut dirs: Vec<&Path> = path.ancestors().skip(1).collect();
    dirs.reverse();
    for dir in dirs.iter().filter(|d| !d.as_os_str().is_empty()) {
        let meta = std::fs::metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        if !allowed(user, &meta, 0o1) {
            return Err(format!(
                "{} may not enter {} (mode {:o}, owner {}, group {})",
                user.name,
                dir.display(),
                meta.mode() & 0o7777,
                meta.uid(),
                meta.gid()
            ));
        }
    }
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let (bit, verb) = match want {
        Want::Read => (0o4, verb(want)),
        Want::Write => (0o2, verb(want)),
    };
    if allowed(user, &meta, bit) {
        Ok(())
    } else {
        Err(format!(
            "{} may not {verb} {} (mode {:o}, owner {}, group {})",
            user.name,
            path.display(),
            meta.mode() & 0o7777,
            meta.uid(),
            meta.gid()
        ))
    }
}

/// The kernel's order: the owner's bits if the user owns it, else the
/// group's if it is in the group, else the others'.
fn allowed(user: &User, meta: &std::fs::Metadata, bit: u32) -> bool {
    let mode = meta.mode();
    if meta.uid() == user.uid {
        mode & (bit << 6) != 0
    } else if user.groups.contains(&meta.gid()) {
        mode & (bit << 3) != 0
    } else {
        mode & bit != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn stranger() -> User {
        User {
            name: "stranger".into(),
            uid: 54321,
            gid: 54321,
            groups: vec![54321],
        }
    }

    #[test]
    fn bits_of_every_directory_and_the_file_count() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("state");
        std::fs::create_dir(&sub).unwrap();
        let file = sub.join("report");
        std::fs::write(&file, "x").unwrap();
        let set = |p: &Path, mode| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
        };
        set(dir.path(), 0o755);
        set(&sub, 0o755);
        set(&file, 0o644);
        let user = stranger();
        assert_eq!(may(&user, &file, Want::Read), Ok(()));
        assert!(may(&user, &file, Want::Write)
            .unwrap_err()
            .contains("may not write to"));
        set(&file, 0o640);
        assert!(may(&user, &file, Want::Read)
            .unwrap_err()
            .contains("mode 640"));
        set(&file, 0o644);
        set(&sub, 0o750);
        let err = may(&user, &file, Want::Read).unwrap_err();
        assert!(
            err.contains("may not enter") && err.contains("state"),
            "{err}"
        );
        // The group's bits for a member.
        let owner_group = std::fs::metadata(&sub).unwrap().gid();
        let member = User {
            groups: vec![owner_group],
            ..stranger()
        };
        assert_eq!(may(&member, &file, Want::Read), Ok(()));
        // root may.
        let root = User {
            uid: 0,
            ..stranger()
        };
        set(&file, 0o600);
        assert_eq!(may(&root, &file, Want::Read), Ok(()));
    }

    /// ACLs count as the kernel counts them, when the doctor is root (as
    /// documented) and `setfacl` is there.
    #[test]
    fn an_acl_grants_and_refuses_as_for_the_agent() {
        // SAFETY: a getter.
        if unsafe { libc::geteuid() } != 0 || !Path::new("/usr/bin/setfacl").exists() {
            eprintln!("skipped: needs root and setfacl (the acl package)");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let file = dir.path().join("last_run_report.yaml");
        std::fs::write(&file, "x").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        let user = stranger();
        let setfacl = |entry: &str| {
            let done = std::process::Command::new("/usr/bin/setfacl")
                .args(["-m", entry])
                .arg(&file)
                .status()
                .unwrap();
            assert!(done.success(), "setfacl -m {entry}");
        };
        assert!(may(&user, &file, Want::Read)
            .unwrap_err()
            .contains("mode 640"));
        // What puppet-acl.sh does for the agent's user.
        setfacl(&format!("u:{}:r", user.uid));
        assert_eq!(may(&user, &file, Want::Read), Ok(()));
        assert!(may(&user, &file, Want::Write).is_err());
        // The bits allow, an ACL refuses.
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        setfacl(&format!("u:{}:-", user.uid));
        let why = may(&user, &file, Want::Read).unwrap_err();
        assert!(
            why.contains("an ACL or a security module refuses it"),
            "{why}"
        );
    }

    #[test]
    fn users_are_found_with_their_groups() {
        let root = User::lookup("root").unwrap();
        assert_eq!((root.uid, root.gid), (0, 0));
        assert!(root.groups.contains(&0));
        assert!(User::lookup("no-such-user-here").is_none());
        let me = User::current();
        // SAFETY: a getter.
        assert_eq!(me.uid, unsafe { libc::geteuid() });
    }
}
