//! Whether the events log may be believed (issue 22 item 5, review L5):
//! every line of it can become a notification, and `puppetResourceChanged`
//! of a `notify {'kick -> haproxy':}` makes other hosts run Puppet. So the
//! log counts only while no one but root could have written it, as sshd's
//! `StrictModes` judges `authorized_keys`: the file, the directory that
//! holds it and every directory above, each
//! - owned by root (or by the one user `events_log_owner` names, for a log
//!   left in Debian's `/var/log/puppet`, `puppet:puppet` 0750): an owner
//!   can always `chmod` itself write access, so whatever the mode bits say,
//!   another owner is refused;
//! - not writable by its group or by all. Whatever the group, root's
//!   included: a member of group `root` is not root, and Puppet (root)
//!   needs no group write. With a POSIX ACL the group bits are the ACL's
//!   mask, so a named user or group granted write shows here too.
//!
//! One exception: a directory above the file's own (not that one) that is
//! sticky, as `/tmp` is: others may write in it but not rename or remove
//! what they do not own, and the next directory down must be root's. The
//! file's own directory gets no exception, since anyone who may create a
//! file there can put one in place of a log that is missing or rotated.
//!
//! A symbolic link on the way is judged by its directory (a link cannot be
//! changed, only replaced), and the directory it leads to is judged too:
//! the chain is checked as named and as it really is
//! ([`std::fs::canonicalize`]).
//!
//! [`super::tail::Tail`] checks the path before each read and the file it
//! opens (by its descriptor, so what is read is what was judged); a log
//! refused is closed, and once the path is trusted again it is followed
//! from its end then (what was written while anyone could write it is not
//! believed).

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// Who may own the events log and the directories above it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trust {
    /// The user besides root (`events_log_owner`): its name and uid.
    pub owner: Option<(String, u32)>,
}

/// Why a path is not trusted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Untrusted {
    #[error("{} is owned by {owner}, not root", path.display())]
    Owner { path: PathBuf, owner: String },
    #[error("{} is writable by its group (mode {mode:04o})", path.display())]
    GroupWritable { path: PathBuf, mode: u32 },
    #[error("{} is writable by all (mode {mode:04o})", path.display())]
    OtherWritable { path: PathBuf, mode: u32 },
}

impl Untrusted {
    /// The file or directory to fix.
    pub fn path(&self) -> &Path {
        match self {
            Untrusted::Owner { path, .. }
            | Untrusted::GroupWritable { path, .. }
            | Untrusted::OtherWritable { path, .. } => path,
        }
    }
}

impl Trust {
    /// Root, and `owner` when named.
    pub fn with_owner(owner: Option<(String, u32)>) -> Trust {
        Trust { owner }
    }

    /// The directories above `file` and, when there is one, `file` itself
    /// (not followed if a link: [`super::tail::Tail`] refuses links).
    /// What does not exist is not judged: a missing log is missing, not
    /// refused.
    pub fn check(&self, file: &Path) -> Result<(), Untrusted> {
        let dir = match file.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        // As named: a link on the way is safe only as its directory is.
        let named: Vec<(&Path, Option<Metadata>)> = dir
            .ancestors()
            .filter(|d| !d.as_os_str().is_empty())
            .map(|d| (d, std::fs::symlink_metadata(d).ok()))
            .collect();
        // An absolute path of plain names, every directory there and none
        // a link, is already as it really is: resolving it again would
        // only repeat each look (the path is checked before every read of
        // the log, so each look counts).
        let plain = dir.is_absolute()
            && dir
                .components()
                .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
            && named
                .iter()
                .all(|(_, meta)| meta.as_ref().is_some_and(|m| !m.file_type().is_symlink()));
        // As it really is: the file's own directory, then those above.
        if !plain {
            if let Ok(real) = std::fs::canonicalize(dir) {
                for (n, d) in real.ancestors().enumerate() {
                    if let Ok(meta) = std::fs::symlink_metadata(d) {
                        self.check_dir(d, &meta, n == 0)?;
                    }
                }
            }
        }
        for (n, (d, meta)) in named.iter().enumerate() {
            match meta {
                Some(meta) if !meta.file_type().is_symlink() => self.check_dir(d, meta, n == 0)?,
                _ => {}
            }
        }
        match std::fs::symlink_metadata(file) {
            Ok(meta) => self.check_file(file, &meta),
            Err(_) => Ok(()),
        }
    }

    /// The log itself, from its metadata (`fstat` of the open file, or
    /// `lstat` of the path): anything but a regular file is left to the
    /// caller, which refuses it for that.
    pub fn check_file(&self, path: &Path, meta: &Metadata) -> Result<(), Untrusted> {
        if !meta.file_type().is_file() {
            return Ok(());
        }
        self.owned_and_closed(path, meta, false)
    }

    fn check_dir(&self, path: &Path, meta: &Metadata, own: bool) -> Result<(), Untrusted> {
        self.owned_and_closed(path, meta, !own && meta.mode() & libc::S_ISVTX != 0)
    }

    fn owned_and_closed(
        &self,
        path: &Path,
        meta: &Metadata,
        sticky: bool,
    ) -> Result<(), Untrusted> {
        let uid = meta.uid();
        if uid != 0
            && self
                .owner
                .as_ref()
                .is_none_or(|(_, trusted)| *trusted != uid)
        {
            let name = crate::process::user_name(uid).unwrap_or_else(|| "a user".into());
            return Err(Untrusted::Owner {
                path: path.to_path_buf(),
                owner: format!("{name} (uid {uid})"),
            });
        }
        let mode = meta.mode() & 0o7777;
        if sticky {
            return Ok(());
        }
        if mode & 0o002 != 0 {
            return Err(Untrusted::OtherWritable {
                path: path.to_path_buf(),
                mode,
            });
        }
        if mode & 0o020 != 0 {
            return Err(Untrusted::GroupWritable {
                path: path.to_path_buf(),
                mode,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    const NOBODY: u32 = 65534;

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    fn chown(path: &Path, uid: u32) {
        std::os::unix::fs::lchown(path, Some(uid), None).unwrap();
    }

    fn is_root() -> bool {
        // SAFETY: a plain getter.
        unsafe { libc::geteuid() == 0 }
    }

    /// A log in a directory of a temporary directory: root's (the tests run
    /// as root), 0755 and 0644.
    fn layout() -> (tempfile::TempDir, PathBuf) {
        let top = tempfile::tempdir().unwrap();
        chmod(top.path(), 0o755);
        let dir = top.path().join("log");
        std::fs::create_dir(&dir).unwrap();
        chmod(&dir, 0o755);
        let file = dir.join("events.jsonl");
        std::fs::write(&file, "").unwrap();
        chmod(&file, 0o644);
        (top, file)
    }

    #[test]
    fn modes_of_the_file_and_its_directories() {
        let (top, file) = layout();
        let dir = file.parent().unwrap();
        let root = Trust::default();
        assert_eq!(root.check(&file), Ok(()));
        // The file, group- or world-writable.
        chmod(&file, 0o664);
        assert!(
            matches!(root.check(&file), Err(Untrusted::GroupWritable { path, mode: 0o664 }) if path == file)
        );
        chmod(&file, 0o646);
        assert!(matches!(
            root.check(&file),
            Err(Untrusted::OtherWritable { .. })
        ));
        chmod(&file, 0o600);
        // Its directory: group-writable, and sticky is no excuse there.
        chmod(dir, 0o775);
        assert!(
            matches!(root.check(&file), Err(Untrusted::GroupWritable { path, .. }) if path == dir)
        );
        chmod(dir, 0o1777);
        assert!(
            matches!(root.check(&file), Err(Untrusted::OtherWritable { path, .. }) if path == dir)
        );
        chmod(dir, 0o750);
        // A directory above: sticky and world-writable is fine (as /tmp);
        // world-writable without the sticky bit is not.
        chmod(top.path(), 0o1777);
        assert_eq!(root.check(&file), Ok(()));
        chmod(top.path(), 0o777);
        let err = root.check(&file).unwrap_err();
        assert_eq!(err.path(), top.path());
        assert!(
            err.to_string().ends_with("is writable by all (mode 0777)"),
            "{err}"
        );
        chmod(top.path(), 0o755);
        // A log that is not there yet, in a trusted directory: nothing to
        // refuse; in an untrusted one: refused already.
        std::fs::remove_file(&file).unwrap();
        assert_eq!(root.check(&file), Ok(()));
        chmod(dir, 0o777);
        assert!(root.check(&file).is_err());
        // A directory that does not exist: nothing to judge below it.
        assert_eq!(
            root.check(&dir.join("no/such/events.jsonl")),
            Err(Untrusted::OtherWritable {
                path: dir.to_path_buf(),
                mode: 0o777
            })
        );
        chmod(dir, 0o755);
        assert_eq!(root.check(&dir.join("no/such/events.jsonl")), Ok(()));
    }

    #[test]
    fn owners() {
        if !is_root() {
            return;
        }
        let (_top, file) = layout();
        let dir = file.parent().unwrap();
        let root = Trust::default();
        // Owned by another user: refused whatever the mode, since the
        // owner may chmod.
        chown(dir, NOBODY);
        chmod(dir, 0o555);
        let err = root.check(&file).unwrap_err();
        assert!(
            matches!(&err, Untrusted::Owner { path, .. } if path == dir),
            "{err:?}"
        );
        assert!(
            err.to_string()
                .contains("is owned by nobody (uid 65534), not root"),
            "{err}"
        );
        // Unless that user is the one trusted.
        let nobody = Trust::with_owner(Some(("nobody".into(), NOBODY)));
        assert_eq!(nobody.check(&file), Ok(()));
        chmod(dir, 0o775);
        assert!(matches!(
            nobody.check(&file),
            Err(Untrusted::GroupWritable { .. })
        ));
        chmod(dir, 0o755);
        chown(dir, 0);
        chown(&file, NOBODY);
        assert!(matches!(root.check(&file), Err(Untrusted::Owner { path, .. }) if path == file));
        assert_eq!(nobody.check(&file), Ok(()));
        chown(&file, 1);
        assert!(nobody.check(&file).is_err());
    }

    /// A link on the way is judged by where it sits and where it leads.
    #[test]
    fn links_on_the_way() {
        if !is_root() {
            return;
        }
        let (top, file) = layout();
        let link = top.path().join("link");
        std::os::unix::fs::symlink(file.parent().unwrap(), &link).unwrap();
        let via = link.join("events.jsonl");
        let root = Trust::default();
        assert_eq!(root.check(&via), Ok(()));
        // The target directory opened to all: refused through the link.
        chmod(file.parent().unwrap(), 0o777);
        assert!(root.check(&via).is_err());
        chmod(file.parent().unwrap(), 0o755);
        // A link in a directory another user owns: that user can replace it.
        let theirs = top.path().join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        chown(&theirs, NOBODY);
        let link = theirs.join("link");
        std::os::unix::fs::symlink(file.parent().unwrap(), &link).unwrap();
        let err = root.check(&link.join("events.jsonl")).unwrap_err();
        assert!(
            matches!(&err, Untrusted::Owner { path, .. } if path == &theirs),
            "{err:?}"
        );
    }
}
