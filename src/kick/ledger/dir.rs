//! The ledger in a local directory (one manager): one file per entry,
//! written as root without ever following a symlink. The directory is
//! opened once with `O_NOFOLLOW`, must be owned by the running user and
//! closed to everyone else (mode 0700 or stricter); every file in it is
//! opened relative to that descriptor with `O_NOFOLLOW`, and written by
//! creating a new file (`O_EXCL`) and renaming it into place, so that a
//! reader sees the old or the new. A short `flock` on `lock` serialises
//! read-modify-write; a running kick holds a slot, an `flock` on
//! `slot-N`, released by the kernel when its supervisor ends, however it
//! ends.

use super::super::record::Millis;
use std::ffi::CString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub struct Dir {
    dir: OwnedFd,
    path: PathBuf,
}

fn c_name(name: &str) -> Result<CString, String> {
    CString::new(name).map_err(|_| format!("{name:?}: a NUL in a file name"))
}

fn os_error(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

impl Dir {
    /// Opens `path`, making it (mode 0700) when it is missing.
    pub fn open(path: &Path) -> Result<Dir, String> {
        let shown = path.display();
        let c_path = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| format!("{shown}: a NUL in the path"))?;
        // mkdir does not follow a symlink in the last component.
        // SAFETY: c_path is a valid C string.
        if unsafe { libc::mkdir(c_path.as_ptr(), 0o700) } != 0
            && std::io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST)
        {
            return Err(os_error(&format!("state_dir {shown}")));
        }
        // SAFETY: c_path is a valid C string; the result is checked.
        let fd = unsafe {
            libc::open(
                c_path.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(os_error(&format!(
                "state_dir {shown} (it must be a directory, not a symlink)"
            )));
        }
        // SAFETY: fd was just opened and is owned by nobody else.
        let dir = unsafe { OwnedFd::from_raw_fd(fd) };
        let meta = File::from(dir.try_clone().map_err(|e| e.to_string())?)
            .metadata()
            .map_err(|e| format!("state_dir {shown}: {e}"))?;
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me || meta.mode() & 0o077 != 0 {
            return Err(format!(
                "state_dir {shown}: owned by uid {} with mode {:o}; it must be owned by uid {me} \
                 and closed to everyone else (mode 0700): whoever can write it decides what is kicked",
                meta.uid(),
                meta.mode() & 0o7777
            ));
        }
        Ok(Dir {
            dir,
            path: path.to_path_buf(),
        })
    }

    /// Takes the lock, waiting at most `wait`: held while the file is.
    pub fn lock(&self, wait: Duration) -> Result<File, String> {
        let lock = self.open_at("lock", libc::O_RDWR | libc::O_CREAT)?;
        let deadline = Instant::now() + wait;
        loop {
            // SAFETY: lock is an open descriptor.
            if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(lock);
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "{}: the ledger stayed locked for {wait:?}",
                    self.path.display()
                ));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// `name` in the directory, never through a symlink; a FIFO does not
    /// block the open.
    fn open_at(&self, name: &str, flags: libc::c_int) -> Result<File, String> {
        let c = c_name(name)?;
        // SAFETY: the directory descriptor is open, c a valid C string.
        let fd = unsafe {
            libc::openat(
                self.dir.as_raw_fd(),
                c.as_ptr(),
                flags | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK,
                0o600,
            )
        };
        if fd < 0 {
            return Err(os_error(&format!("{}/{name}", self.path.display())));
        }
        // SAFETY: fd was just opened and is owned by nobody else.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    /// The names in the directory for which `wanted` holds.
    pub fn names(&self, wanted: impl Fn(&str) -> bool) -> Result<Vec<String>, String> {
        // The directory as opened (not its path again, which could have
        // been swapped for a symlink since).
        let entries = std::fs::read_dir(format!("/proc/self/fd/{}", self.dir.as_raw_fd()))
            .map_err(|e| format!("{}: {e}", self.path.display()))?;
        Ok(entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| !n.starts_with('.') && wanted(n))
            .collect())
    }

    /// A free slot of `slots`, held (an `flock` on `slot-N`) until the
    /// file is dropped or the process ends; `None` when all are taken.
    pub fn try_slot(&self, slots: usize) -> Result<Option<File>, String> {
        for n in 0..slots {
            let slot = self.open_at(&format!("slot-{n}"), libc::O_RDWR | libc::O_CREAT)?;
            // SAFETY: slot is an open descriptor.
            if unsafe { libc::flock(slot.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(Some(slot));
            }
        }
        Ok(None)
    }

    /// When file `name` was last written (ms since the epoch), not
    /// following a symlink.
    pub fn modified(&self, name: &str) -> Option<Millis> {
        let c = c_name(name).ok()?;
        // SAFETY: an all-zero stat is a valid value to be filled.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: the directory is open, c a valid C string, st writable.
        let done = unsafe {
            libc::fstatat(
                self.dir.as_raw_fd(),
                c.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        (done == 0).then(|| {
            Millis::try_from(st.st_mtime).unwrap_or(0) * 1000
                + Millis::try_from(st.st_mtime_nsec / 1_000_000).unwrap_or(0)
        })
    }

    /// A regular file of at most `max` bytes, never through a symlink.
    pub fn read_capped(&self, name: &str, max: u64) -> Option<Vec<u8>> {
        let mut file = self.open_at(name, libc::O_RDONLY).ok()?;
        let meta = file.metadata().ok()?;
        if !meta.is_file() || meta.len() > max {
            return None;
        }
        // Its whole size at once: one read, not a growing buffer's many.
        let mut text = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0) + 1);
        Read::by_ref(&mut file)
            .take(max)
            .read_to_end(&mut text)
            .ok()?;
        Some(text)
    }

    /// Puts `text` in file `name`: a new file (`O_EXCL`) renamed into
    /// place, so that a reader sees the old or the new, and a symlink
    /// planted as `name` is replaced, never written through.
    pub fn replace(&self, name: &str, text: &[u8]) -> Result<(), String> {
        let tmp = format!(".{name}.{}", std::process::id());
        let _ = self.unlink(&tmp);
        let mut file = self.open_at(
            &tmp,
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_TRUNC,
        )?;
        if let Err(e) = file.write_all(text) {
            drop(file);
            // A full disk leaves no temporary file behind.
            let _ = self.unlink(&tmp);
            return Err(format!("{}/{tmp}: {e}", self.path.display()));
        }
        drop(file);
        let from = c_name(&tmp)?;
        let to = c_name(name)?;
        let dir = self.dir.as_raw_fd();
        // SAFETY: the directory is open; both names are valid C strings.
        // renameat replaces a symlink named `to`, never writes through it.
        if unsafe { libc::renameat(dir, from.as_ptr(), dir, to.as_ptr()) } != 0 {
            let e = os_error(&format!("{}/{name}", self.path.display()));
            let _ = self.unlink(&tmp);
            return Err(e);
        }
        Ok(())
    }

    pub fn unlink(&self, name: &str) -> Result<(), String> {
        let c = c_name(name)?;
        // SAFETY: the directory is open; c a valid C string.
        if unsafe { libc::unlinkat(self.dir.as_raw_fd(), c.as_ptr(), 0) } != 0 {
            return Err(os_error(name));
        }
        Ok(())
    }
}
