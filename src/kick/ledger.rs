//! The state directory: one JSON file per record, written as root without
//! ever following a symlink. The directory is opened once with
//! `O_NOFOLLOW`, must be owned by the running user and closed to everyone
//! else (mode 0700 or stricter); every file in it is opened relative to
//! that descriptor with `O_NOFOLLOW`, and written by creating a new file
//! (`O_EXCL`) and renaming it into place. A short `flock` on `lock`
//! serialises read-modify-write; nothing holds it while a kick runs.

use super::inventory::Inventory;
use super::record::{Kick, Millis, Record, Refused};
use std::ffi::CString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Records kept at most; the oldest go first.
const MAX_RECORDS: usize = 500;
/// Records older than this go.
const KEEP: Millis = 7 * 24 * 3_600_000;
/// No record file is larger (a record is well under 8 KiB).
const MAX_RECORD_BYTES: u64 = 64 * 1024;
const SUFFIX: &str = ".json";
/// The inventory's file (not a record: another suffix).
const INVENTORY: &str = "inventory.state";
/// No inventory file is larger ([`super::inventory::MAX_HOSTS`] entries
/// of about 100 bytes).
const MAX_INVENTORY_BYTES: u64 = 4 << 20;

pub struct Ledger {
    dir: OwnedFd,
    path: PathBuf,
}

/// Held while the ledger is read and written; released on drop.
pub struct Locked<'l> {
    ledger: &'l Ledger,
    _lock: File,
}

fn c_name(name: &str) -> Result<CString, String> {
    CString::new(name).map_err(|_| format!("{name:?}: a NUL in a file name"))
}

fn os_error(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

pub fn now() -> Millis {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| {
            Millis::try_from(d.as_millis()).unwrap_or(Millis::MAX)
        })
}

impl Ledger {
    /// Opens `path`, making it (mode 0700) when it is missing.
    pub fn open(path: &Path) -> Result<Ledger, String> {
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
        Ok(Ledger {
            dir,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Takes the lock, waiting at most `wait`.
    pub fn lock(&self, wait: Duration) -> Result<Locked<'_>, String> {
        let lock = self.open_at("lock", libc::O_RDWR | libc::O_CREAT)?;
        let deadline = Instant::now() + wait;
        loop {
            // SAFETY: lock is an open descriptor.
            if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(Locked {
                    ledger: self,
                    _lock: lock,
                });
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

    fn names(&self) -> Result<Vec<String>, String> {
        // The directory as opened (not its path again, which could have
        // been swapped for a symlink since).
        let entries = std::fs::read_dir(format!("/proc/self/fd/{}", self.dir.as_raw_fd()))
            .map_err(|e| format!("{}: {e}", self.path.display()))?;
        Ok(entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.ends_with(SUFFIX) && !n.starts_with('.'))
            .collect())
    }

    fn read_record(&self, name: &str) -> Option<Record> {
        let text = self.read_capped(name, MAX_RECORD_BYTES)?;
        serde_json::from_slice(&text).ok()
    }

    /// A regular file of at most `max` bytes, never through a symlink.
    fn read_capped(&self, name: &str, max: u64) -> Option<Vec<u8>> {
        let mut file = self.open_at(name, libc::O_RDONLY).ok()?;
        let meta = file.metadata().ok()?;
        if !meta.is_file() || meta.len() > max {
            return None;
        }
        let mut text = Vec::new();
        Read::by_ref(&mut file)
            .take(max)
            .read_to_end(&mut text)
            .ok()?;
        Some(text)
    }
}

impl Locked<'_> {
    /// Every record, oldest first. Files that do not parse are skipped.
    pub fn records(&self) -> Result<Vec<Record>, String> {
        let mut records: Vec<Record> = self
            .ledger
            .names()?
            .iter()
            .filter_map(|n| self.ledger.read_record(n))
            .collect();
        records.sort_by_key(|r| (r.at(), r.id().to_string()));
        Ok(records)
    }

    pub fn kicks(&self) -> Result<(Vec<Kick>, Vec<Refused>), String> {
        let mut kicks = Vec::new();
        let mut refusals = Vec::new();
        for record in self.records()? {
            match record {
                Record::Kick(k) => kicks.push(k),
                Record::Refused(r) => refusals.push(r),
            }
        }
        Ok((kicks, refusals))
    }

    /// Writes `record` (a new one, or one with the same id again).
    pub fn write(&self, record: &Record) -> Result<(), String> {
        let id = record.id();
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return Err(format!("{id:?}: not a record id"));
        }
        let text = serde_json::to_vec_pretty(record).map_err(|e| e.to_string())?;
        self.replace(&format!("{id}{SUFFIX}"), &text)
    }

    /// The inventory of hosts (`inventory.state`); empty when there is none or
    /// it cannot be read.
    pub fn inventory(&self) -> Inventory {
        let Some(text) = self.ledger.read_capped(INVENTORY, MAX_INVENTORY_BYTES) else {
            return Inventory::default();
        };
        serde_json::from_slice(&text).unwrap_or_default()
    }

    pub fn write_inventory(&self, inventory: &Inventory) -> Result<(), String> {
        let text = serde_json::to_vec(inventory).map_err(|e| e.to_string())?;
        self.replace(INVENTORY, &text)
    }

    /// Puts `bytes` in file `name`: a new file (`O_EXCL`) renamed into
    /// place, so that a reader sees the old or the new, and a symlink
    /// planted as `name` is replaced, never written through.
    fn replace(&self, name: &str, text: &[u8]) -> Result<(), String> {
        let id = name;
        let tmp = format!(".{id}.{}", std::process::id());
        let _ = self.unlink(&tmp);
        let mut file = self.ledger.open_at(
            &tmp,
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_TRUNC,
        )?;
        file.write_all(text)
            .map_err(|e| format!("{}/{tmp}: {e}", self.ledger.path.display()))?;
        drop(file);
        let from = c_name(&tmp)?;
        let to = c_name(name)?;
        let dir = self.ledger.dir.as_raw_fd();
        // SAFETY: the directory is open; both names are valid C strings.
        // renameat replaces a symlink named `to`, never writes through it.
        if unsafe { libc::renameat(dir, from.as_ptr(), dir, to.as_ptr()) } != 0 {
            let e = os_error(&format!("{}/{name}", self.ledger.path.display()));
            let _ = self.unlink(&tmp);
            return Err(e);
        }
        Ok(())
    }

    fn unlink(&self, name: &str) -> Result<(), String> {
        let c = c_name(name)?;
        // SAFETY: the directory is open; c a valid C string.
        if unsafe { libc::unlinkat(self.ledger.dir.as_raw_fd(), c.as_ptr(), 0) } != 0 {
            return Err(os_error(name));
        }
        Ok(())
    }

    /// Removes records older than a week, and the oldest beyond the cap;
    /// active kicks are kept.
    pub fn prune(&self, now: Millis) -> Result<(), String> {
        let records = self.records()?;
        let excess = records.len().saturating_sub(MAX_RECORDS);
        for (n, record) in records.iter().enumerate() {
            let active = matches!(record, Record::Kick(k) if k.active());
            if !active && (n < excess || now.saturating_sub(record.at()) > KEEP) {
                let _ = self.unlink(&format!("{}{SUFFIX}", record.id()));
            }
        }
        Ok(())
    }
}

/// A new record id: the time, our PID and a counter, which sort and never
/// repeat on one host.
pub fn new_id(now: Millis) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    format!(
        "{now}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kick::record::{Cause, Refusal};
    use std::os::unix::fs::PermissionsExt;

    fn refused(id: &str, at: Millis) -> Record {
        Record::Refused(Refused {
            id: id.into(),
            at,
            host: None,
            role: "r".into(),
            cause: Cause {
                host: "h".into(),
                resource: "Notify[kick -> r]".into(),
            },
            generation: 1,
            caused_by: None,
            why: Refusal::UnknownRole,
        })
    }

    #[test]
    fn records_are_written_read_and_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("state")).unwrap();
        let locked = ledger.lock(Duration::from_millis(50)).unwrap();
        locked.write(&refused("2-1-0", 2)).unwrap();
        locked.write(&refused("1-1-0", 1)).unwrap();
        let ids: Vec<String> = locked
            .records()
            .unwrap()
            .iter()
            .map(|r| r.id().into())
            .collect();
        assert_eq!(ids, ["1-1-0", "2-1-0"]);
        locked.prune(KEEP + 2).unwrap();
        assert_eq!(locked.records().unwrap().len(), 1, "the week-old one went");
        assert!(locked.write(&refused("../x", 3)).is_err());
    }

    #[test]
    fn the_lock_is_exclusive_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("s");
        let a = Ledger::open(&state).unwrap();
        let b = Ledger::open(&state).unwrap();
        let held = a.lock(Duration::from_millis(10)).unwrap();
        let started = Instant::now();
        assert!(b.lock(Duration::from_millis(30)).is_err());
        assert!(started.elapsed() < Duration::from_secs(1));
        drop(held);
        assert!(b.lock(Duration::from_millis(30)).is_ok());
    }

    #[test]
    fn a_symlink_or_an_open_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let e = Ledger::open(&link).err().unwrap();
        assert!(e.contains("not a symlink"), "{e}");
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = Ledger::open(&real).err().unwrap();
        assert!(e.contains("mode 755"), "{e}");
    }

    #[test]
    fn a_planted_symlink_is_replaced_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "ROOTDATA").unwrap();
        let state = dir.path().join("s");
        let ledger = Ledger::open(&state).unwrap();
        std::os::unix::fs::symlink(&victim, state.join("5-1-0.json")).unwrap();
        std::os::unix::fs::symlink(&victim, state.join(".5-1-0.json")).unwrap();
        let locked = ledger.lock(Duration::from_millis(50)).unwrap();
        // Reading does not follow it either.
        assert!(locked.records().unwrap().is_empty());
        locked.write(&refused("5-1-0", 5)).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "ROOTDATA");
        assert_eq!(locked.records().unwrap().len(), 1);
    }
}
