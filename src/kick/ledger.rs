//! The state directory: one JSON file per kick, and one per sender for
//! its refusals, written as root without ever following a symlink. The
//! directory is opened once with `O_NOFOLLOW`, must be owned by the
//! running user and closed to everyone else (mode 0700 or stricter); every
//! file in it is opened relative to that descriptor with `O_NOFOLLOW`, and
//! written by creating a new file (`O_EXCL`) and renaming it into place. A
//! short `flock` on `lock` serialises read-modify-write; nothing holds it
//! while a kick runs.
//!
//! Bounded, and no flood rewrites what the rules judge by: a kick the
//! rules may still need (active, or ended within the longest of `window`,
//! `timeout` and the budget's hour) is never forgotten, and beyond
//! [`super::judge::MAX_LIVE_KICKS`] of them new kicks are refused instead; older kicks
//! are history, the newest [`MAX_HISTORY`] kept for a week. Refusals live
//! apart, per sender ([`SenderRefusals`]): a sender's flood costs its own
//! file of a few KiB, and at most [`MAX_SENDERS`] senders are kept (the
//! ones heard of last), the rest counted. What a request reads is the
//! kicks and its sender's refusals, never every refusal.
//!
//! Kicks running at once hold a slot: `slot-N`, `flock`ed by the running
//! supervisor and released by the kernel when it ends, however it ends,
//! so that waiting for one reads no record; a waiting kick reads the one
//! record that tells whether it may go ([`Ledger::peek`], without the
//! lock: files are replaced whole).

use super::inventory::Inventory;
use super::record::{Kick, Millis, Record, Refusal, SenderRefusals};
use std::ffi::CString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Kicks no rule needs any more, kept at most (the newest).
pub const MAX_HISTORY: usize = 1_000;
/// History and refusals older than this go.
const KEEP: Millis = 7 * 24 * 3_600_000;
/// Senders whose refusals are kept, at most (the ones heard of last).
pub const MAX_SENDERS: usize = 1_000;
/// No kick file is larger (a kick is well under 8 KiB with its output
/// tail and its coalesced causes).
const MAX_RECORD_BYTES: u64 = 64 * 1024;
/// No sender's refusals file is larger ([`super::record::KEPT_PER_SENDER`]
/// refusals of bounded texts).
const MAX_REFUSALS_BYTES: u64 = 64 * 1024;
const SUFFIX: &str = ".json";
/// A configured (or inventory) sender's refusals: `refused-s-KEY.state`;
/// a stranger's (an address nobody has): `refused-u-KEY.state`, the first
/// to go beyond [`MAX_SENDERS`], so that strangers cannot push out what
/// known hosts were refused.
const REFUSED_KNOWN: &str = "refused-s-";
const REFUSED_STRANGER: &str = "refused-u-";
const REFUSED_SUFFIX: &str = ".state";
/// What senders beyond [`MAX_SENDERS`] were refused, counted only.
const REFUSED_BEYOND: &str = "refused-beyond.state";
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

    /// The names in the directory for which `wanted` holds.
    fn names(&self, wanted: impl Fn(&str) -> bool) -> Result<Vec<String>, String> {
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

    /// Kick `id` as its file says now, read without the lock (files are
    /// replaced whole, never written in place): for a waiting kick to see
    /// cheaply whether what holds it is over.
    pub fn peek(&self, id: &str) -> Option<Kick> {
        is_id(id).ok()?;
        self.read_kick(&format!("{id}{SUFFIX}"))
            .filter(|k| k.id == id)
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

    /// The kick in file `name`; `None` for anything else (a file that does
    /// not parse, or a refusal of an older ledger, which kept them so).
    fn read_kick(&self, name: &str) -> Option<Kick> {
        let text = self.read_capped(name, MAX_RECORD_BYTES)?;
        match serde_json::from_slice(&text).ok()? {
            Record::Kick(kick) => Some(kick),
            Record::Refused(_) => None,
        }
    }

    /// When file `name` was last written (ms since the epoch), not
    /// following a symlink.
    fn modified(&self, name: &str) -> Option<Millis> {
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
    fn read_capped(&self, name: &str, max: u64) -> Option<Vec<u8>> {
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
}

impl Locked<'_> {
    /// Every kick, oldest first. Files that do not parse are skipped.
    pub fn kicks(&self) -> Result<Vec<Kick>, String> {
        let mut kicks: Vec<Kick> = self
            .ledger
            .names(|n| n.ends_with(SUFFIX))?
            .iter()
            .filter_map(|n| self.ledger.read_kick(n))
            .collect();
        kicks.sort_by(|a, b| (at(a), &a.id).cmp(&(at(b), &b.id)));
        Ok(kicks)
    }

    /// Kick `id`, read from its own file alone.
    pub fn kick(&self, id: &str) -> Option<Kick> {
        self.ledger.peek(id)
    }

    /// Writes `record`: a kick (new, or the same id again) in its own
    /// file; a refusal with its sender's. A refusal with the id of a kick
    /// takes its place: the kick goes (its supervisor finds nothing to
    /// start).
    pub fn write(&self, record: &Record) -> Result<(), String> {
        is_id(record.id())?;
        let file = format!("{}{SUFFIX}", record.id());
        match record {
            Record::Kick(_) => {
                let text = serde_json::to_vec(record).map_err(|e| e.to_string())?;
                self.replace(&file, &text)
            }
            Record::Refused(refused) => {
                let sender = &refused.cause.host;
                let known = refused.why != Refusal::UnknownSender;
                let refusals_file = refusals_file(sender, known);
                let mut refusals = self.read_refusals(&refusals_file).unwrap_or_default();
                refusals.sender = sender.clone();
                refusals.add(refused.clone());
                let text = serde_json::to_vec(&refusals).map_err(|e| e.to_string())?;
                self.replace(&refusals_file, &text)?;
                if self.kick(record.id()).is_some() {
                    self.unlink(&file)?;
                }
                Ok(())
            }
        }
    }

    /// The refusals of `sender` (a host, or an address nobody has), and
    /// of any sender whose name shares its file (each refusal names its
    /// own).
    pub fn refusals_from(&self, sender: &str) -> SenderRefusals {
        self.read_refusals(&refusals_file(sender, true))
            .unwrap_or_default()
    }

    fn read_refusals(&self, file: &str) -> Option<SenderRefusals> {
        let text = self.ledger.read_capped(file, MAX_REFUSALS_BYTES)?;
        serde_json::from_slice(&text).ok()
    }

    /// Every sender's refusals, and what was refused of senders no longer
    /// kept (in one entry with an empty sender), the latest first.
    pub fn refusals(&self) -> Result<Vec<SenderRefusals>, String> {
        let mut all: Vec<SenderRefusals> = self
            .ledger
            .names(is_refusals_file)?
            .iter()
            .chain(std::iter::once(&REFUSED_BEYOND.to_string()))
            .filter_map(|n| self.read_refusals(n))
            .collect();
        all.sort_by_key(|r: &SenderRefusals| std::cmp::Reverse(r.last_at()));
        Ok(all)
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

    /// Forgets what no rule needs any more: of `kicks` (as read at the
    /// start of this lock: newer ones are active), those the rules no
    /// longer need (`needed`, the judge's word) are history, the newest
    /// [`MAX_HISTORY`] kept for a week; refusals older than a week go, and
    /// senders beyond [`MAX_SENDERS`] (the ones heard of longest ago) are
    /// counted only. Kicks the rules may need are never removed here.
    pub fn prune(
        &self,
        kicks: &[Kick],
        now: Millis,
        needed: impl Fn(&Kick) -> bool,
    ) -> Result<(), String> {
        let history: Vec<&Kick> = kicks.iter().filter(|k| !needed(k)).collect();
        let excess = history.len().saturating_sub(MAX_HISTORY);
        for (n, kick) in history.iter().enumerate() {
            if n < excess || now.saturating_sub(at(kick)) > KEEP {
                let _ = self.unlink(&format!("{}{SUFFIX}", kick.id));
            }
        }
        // Files that are not kicks: refusals of an older ledger (one file
        // each), or garbage. Only files not read as kicks are looked at.
        let known: std::collections::HashSet<String> =
            kicks.iter().map(|k| format!("{}{SUFFIX}", k.id)).collect();
        for name in self.ledger.names(|n| n.ends_with(SUFFIX))? {
            if !known.contains(&name) && self.ledger.read_kick(&name).is_none() {
                let _ = self.unlink(&name);
            }
        }
        self.prune_refusals(now)
    }

    /// Refusal files untouched for a week go; beyond [`MAX_SENDERS`], the
    /// strangers' first, then the least recently touched, what they held
    /// counted. Judged by the files' names and times, so that it reads a
    /// file only to count it.
    pub fn prune_refusals(&self, now: Millis) -> Result<(), String> {
        let mut senders: Vec<(bool, Millis, String)> = Vec::new();
        for name in self.ledger.names(is_refusals_file)? {
            match self.ledger.modified(&name) {
                Some(at) if now.saturating_sub(at) <= KEEP => {
                    senders.push((name.starts_with(REFUSED_KNOWN), at, name))
                }
                _ => {
                    let _ = self.unlink(&name);
                }
            }
        }
        if senders.len() <= MAX_SENDERS {
            return Ok(());
        }
        senders.sort();
        let over = senders.len() - MAX_SENDERS;
        let mut beyond = self.read_refusals(REFUSED_BEYOND).unwrap_or_default();
        for (_, _, name) in &senders[..over] {
            if let Some(r) = self.read_refusals(name) {
                let dropped = r.not_kept.saturating_add(r.kept.len() as u64);
                beyond.not_kept = beyond.not_kept.saturating_add(dropped);
            }
            let _ = self.unlink(name);
        }
        let text = serde_json::to_vec(&beyond).map_err(|e| e.to_string())?;
        self.replace(REFUSED_BEYOND, &text)
    }
}

/// When a kick happened, for ordering and pruning: its end, or when it
/// was asked for.
fn at(kick: &Kick) -> Millis {
    kick.ended_at.unwrap_or(kick.queued_at)
}

fn is_id(id: &str) -> Result<(), String> {
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return Err(format!("{id:?}: not a record id"));
    }
    Ok(())
}

fn is_refusals_file(name: &str) -> bool {
    (name.starts_with(REFUSED_KNOWN) || name.starts_with(REFUSED_STRANGER))
        && name.ends_with(REFUSED_SUFFIX)
}

/// The file of `sender`'s refusals (a `known` one's, or a stranger's): its
/// name with every byte but letters, digits, `.` and `-` as `_` (two
/// senders that meet so share a file; each refusal keeps its sender's
/// name), cut to fit a file name.
fn refusals_file(sender: &str, known: bool) -> String {
    let key: String = sender
        .bytes()
        .take(200)
        .map(|b| {
            if b.is_ascii_alphanumeric() || b == b'.' || b == b'-' {
                b as char
            } else {
                '_'
            }
        })
        .collect();
    let prefix = if known {
        REFUSED_KNOWN
    } else {
        REFUSED_STRANGER
    };
    format!("{prefix}{key}{REFUSED_SUFFIX}")
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
    use crate::kick::record::{Cause, Refused};
    use std::os::unix::fs::PermissionsExt;

    fn refused(id: &str, at: Millis, sender: &str) -> Record {
        Record::Refused(Refused {
            id: id.into(),
            at,
            host: None,
            role: "r".into(),
            cause: Cause {
                host: sender.into(),
                resource: "Notify[kick -> r]".into(),
            },
            generation: 1,
            caused_by: None,
            why: Refusal::UnknownRole,
        })
    }

    fn kick(id: &str, queued_at: Millis, ended_at: Option<Millis>) -> Record {
        let cause = Cause {
            host: "web1".into(),
            resource: "Notify[kick -> r]".into(),
        };
        let mut kick =
            crate::kick::judge::new_kick(id.into(), "lb1".into(), "r", cause, 1, None, queued_at);
        kick.started_at = Some(queued_at);
        kick.ended_at = ended_at;
        kick.end = ended_at.map(|_| crate::kick::record::End::Exited(0));
        Record::Kick(kick)
    }

    fn ids(kicks: &[Kick]) -> Vec<&str> {
        kicks.iter().map(|k| k.id.as_str()).collect()
    }

    #[test]
    fn kicks_and_refusals_are_written_read_and_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("state")).unwrap();
        let locked = ledger.lock(Duration::from_millis(50)).unwrap();
        let hour = 3_600_000;
        let now = KEEP + 10 * hour;
        locked
            .write(&kick("3-1-0", now - hour, Some(now - hour)))
            .unwrap();
        locked.write(&kick("2-1-0", 5, Some(6))).unwrap();
        locked.write(&kick("1-1-0", 1, None)).unwrap();
        locked
            .write(&kick("4-1-0", now - 3 * hour, Some(now - 2 * hour)))
            .unwrap();
        assert_eq!(
            ids(&locked.kicks().unwrap()),
            ["1-1-0", "2-1-0", "4-1-0", "3-1-0"],
            "oldest first, by end or start"
        );
        assert_eq!(locked.kick("3-1-0").unwrap().id, "3-1-0");
        assert!(locked.kick("9-9-9").is_none());
        locked.write(&refused("5-1-0", now - 2, "web1")).unwrap();
        locked
            .write(&refused("6-1-0", now - 1, "198.51.100.7"))
            .unwrap();
        assert_eq!(locked.refusals_from("web1").kept.len(), 1);
        assert!(locked.refusals_from("web2").kept.is_empty());
        let all = locked.refusals().unwrap();
        assert_eq!(all[0].sender, "198.51.100.7", "the latest first");
        // Kicks the rules need for 90 minutes: the week-old ended one
        // goes, the running one stays whatever its age, so do the recent.
        let kicks = locked.kicks().unwrap();
        locked
            .prune(&kicks, now, |k| k.active() || now - at(k) <= 90 * 60_000)
            .unwrap();
        assert_eq!(ids(&locked.kicks().unwrap()), ["1-1-0", "4-1-0", "3-1-0"]);
        assert!(locked.write(&refused("../x", 3, "web1")).is_err());
        assert!(locked.write(&kick("a/b", 3, None)).is_err());
    }

    #[test]
    fn no_flood_of_refusals_forgets_a_kick_the_rules_need() {
        // Security review 2026-11-28 M1 and M2: 500 refusals used to push
        // the kicks out, and every refusal was read by every request.
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("state")).unwrap();
        let locked = ledger.lock(Duration::from_millis(50)).unwrap();
        let now = 10 * KEEP;
        locked
            .write(&kick("1-1-0", now - 10, Some(now - 5)))
            .unwrap();
        for n in 0..3_000u64 {
            let sender = format!("198.51.{}.{}", n % 1_500 / 250, n % 250);
            let mut record = refused(&format!("{}-2-{n}", now + n), now + n, &sender);
            if let Record::Refused(r) = &mut record {
                r.cause.resource = format!("Notify[kick -> {}]", "x".repeat(4_000));
            }
            locked.write(&record).unwrap();
        }
        for n in 0..50u64 {
            locked
                .write(&refused(
                    &format!("{}-3-{n}", now + 5_000 + n),
                    now + 5_000 + n,
                    "web1",
                ))
                .unwrap();
        }
        let kicks = locked.kicks().unwrap();
        let later = now + 6_000;
        locked
            .prune(&kicks, later, |k| k.active() || later - at(k) <= 3_600_000)
            .unwrap();
        assert_eq!(ids(&locked.kicks().unwrap()), ["1-1-0"], "the kick stays");
        let web1 = locked.refusals_from("web1");
        assert_eq!(web1.kept.len(), crate::kick::record::KEPT_PER_SENDER);
        assert_eq!(web1.not_kept, 30, "counted past the cap");
        assert!(web1.kept[0].cause.resource.len() <= 256);
        let all = locked.refusals().unwrap();
        let senders = all.iter().filter(|r| !r.sender.is_empty()).count();
        assert_eq!(
            senders, MAX_SENDERS,
            "senders beyond the cap are counted only"
        );
        let counted: u64 = all.iter().map(|r| r.not_kept + r.kept.len() as u64).sum();
        assert_eq!(counted, 3_050, "every refusal is kept or counted");
        let bytes: u64 = std::fs::read_dir(ledger.path())
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum();
        assert!(bytes < 8 << 20, "{bytes} bytes");
    }

    #[test]
    fn a_refusal_with_a_kicks_id_takes_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("state")).unwrap();
        let locked = ledger.lock(Duration::from_millis(50)).unwrap();
        locked.write(&kick("1-1-0", 1, None)).unwrap();
        locked.write(&refused("1-1-0", 2, "web1")).unwrap();
        assert!(locked.kick("1-1-0").is_none());
        assert_eq!(locked.refusals_from("web1").kept[0].id, "1-1-0");
    }

    #[test]
    fn slots_are_held_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("state")).unwrap();
        let other = Ledger::open(&dir.path().join("state")).unwrap();
        let a = ledger.try_slot(2).unwrap().unwrap();
        let b = other.try_slot(2).unwrap().unwrap();
        assert!(ledger.try_slot(2).unwrap().is_none());
        drop(a);
        assert!(other.try_slot(2).unwrap().is_some());
        drop(b);
        // A waiting kick reads a kick's file without the lock.
        ledger
            .lock(Duration::from_millis(50))
            .unwrap()
            .write(&kick("1-1-0", 1, None))
            .unwrap();
        assert_eq!(other.peek("1-1-0").unwrap().host, "lb1");
        assert!(other.peek("../1-1-0").is_none());
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
        std::os::unix::fs::symlink(&victim, state.join("refused-s-web1.state")).unwrap();
        let locked = ledger.lock(Duration::from_millis(50)).unwrap();
        // Reading does not follow it either.
        assert!(locked.kicks().unwrap().is_empty());
        assert!(locked.refusals_from("web1").kept.is_empty());
        locked.write(&kick("5-1-0", 5, None)).unwrap();
        locked.write(&refused("6-1-0", 5, "web1")).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "ROOTDATA");
        assert_eq!(locked.kicks().unwrap().len(), 1);
        assert_eq!(locked.refusals_from("web1").kept.len(), 1);
    }
}
