//! Whether a user may reach a path: the permission bits the kernel checks
//! (search on every directory on the way, then read or write on the file),
//! worked out for a user other than the one running the doctor. POSIX ACLs
//! are not read: a path the bits refuse but an ACL allows is reported as
//! refused, with the ACL named in the fix.

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
        Want::Read => (0o4, "read"),
        Want::Write => (0o2, "write to"),
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
