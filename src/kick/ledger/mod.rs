//! The ledger: what was kicked and refused, kept where every handler and
//! supervisor of the managers reads it. By default a local directory
//! ([`dir`]: one manager); with `[ledger]` in kick.toml, a Redis the
//! managers share ([`shared`]). Both hold the same entries under the same
//! names: one per kick (`ID.json`), one per sender for its refusals, the
//! inventory. Read-modify-write is serialised by a short lock; nothing
//! holds it while a kick runs.
//!
//! Bounded, and no flood rewrites what the rules judge by: a kick the
//! rules may still need (active, or ended within the longest of `window`,
//! `timeout` and the budget's hour) is never forgotten, and beyond
//! [`super::judge::MAX_LIVE_KICKS`] of them new kicks are refused instead; older kicks
//! are history, the newest [`MAX_HISTORY`] kept for a week. Refusals live
//! apart, per sender ([`SenderRefusals`]): a sender's flood costs its own
//! entry of a few KiB, and at most [`MAX_SENDERS`] senders are kept (the
//! ones heard of last), the rest counted. What a request reads is the
//! kicks and its sender's refusals, never every refusal.
//!
//! Kicks running at once hold a slot ([`Ledger::try_slot`]), released
//! however their supervisor ends, so that waiting for one reads no
//! record; a waiting kick reads the one record that tells whether it may
//! go ([`Ledger::peek`], without the lock: entries are replaced whole).

pub mod dir;
pub mod seal;
pub mod shared;

use super::inventory::Inventory;
use super::record::{Kick, Millis, Record, Refusal, SenderRefusals, Supervisor};
use super::shared_settings::SharedLedger;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Kicks no rule needs any more, kept at most (the newest).
pub const MAX_HISTORY: usize = 1_000;
/// History and refusals older than this go.
const KEEP: Millis = 7 * 24 * 3_600_000;
/// Senders whose refusals are kept, at most (the ones heard of last).
pub const MAX_SENDERS: usize = 1_000;
/// No kick entry is larger (a kick is well under 8 KiB with its output
/// tail and its coalesced causes).
pub const MAX_RECORD_BYTES: u64 = 64 * 1024;
/// No sender's refusals entry is larger ([`super::record::KEPT_PER_SENDER`]
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
/// The inventory's entry (not a record: another suffix).
const INVENTORY: &str = "inventory.state";
/// No inventory entry is larger ([`super::inventory::MAX_HOSTS`] entries
/// of about 100 bytes).
const MAX_INVENTORY_BYTES: u64 = 4 << 20;

/// Where the entries live.
enum Store {
    Dir(dir::Dir),
    Shared(Arc<shared::Shared>),
}

pub struct Ledger {
    store: Store,
}

/// Held while the ledger is read and written; released on drop.
pub struct Locked<'l> {
    ledger: &'l Ledger,
    held: Held,
}

enum Held {
    /// The `flock`ed file: unlocked when closed.
    File {
        _lock: std::fs::File,
    },
    Token(String),
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        if let (Store::Shared(shared), Held::Token(token)) = (&self.ledger.store, &self.held) {
            shared.unlock(token);
        }
    }
}

/// A slot of `max_parallel`, held until dropped (or the process ends).
pub enum Slot {
    File { _lock: std::fs::File },
    Lease { _lease: shared::Lease },
}

pub fn now() -> Millis {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| {
            Millis::try_from(d.as_millis()).unwrap_or(Millis::MAX)
        })
}

impl Ledger {
    /// The local directory `path`, made (mode 0700) when it is missing.
    pub fn open(path: &Path) -> Result<Ledger, String> {
        Ok(Ledger {
            store: Store::Dir(dir::Dir::open(path)?),
        })
    }

    /// The shared ledger `[ledger]` names (connected at its first use).
    pub fn open_shared(settings: &SharedLedger) -> Result<Ledger, String> {
        Ok(Ledger {
            store: Store::Shared(shared::Shared::open(settings)?),
        })
    }

    /// The ledger as kick.toml says: `[ledger]`, or `state_dir`.
    pub fn of(settings: &super::settings::Settings) -> Result<Ledger, String> {
        match &settings.ledger {
            Some(shared) => Ledger::open_shared(shared),
            None => Ledger::open(&settings.state_dir),
        }
    }

    /// This manager's name, when the ledger is shared with others.
    pub fn manager(&self) -> Option<&str> {
        match &self.store {
            Store::Dir(_) => None,
            Store::Shared(shared) => Some(shared.manager()),
        }
    }

    /// The manager that acted on request `key`, read without the lock
    /// (see [`Locked::taken_by`]).
    pub fn taken_by(&self, key: &str) -> Result<Option<String>, String> {
        match &self.store {
            Store::Shared(shared) => shared.taken_by(key),
            Store::Dir(_) => Ok(None),
        }
    }

    /// The handler's bound: no call to a shared ledger after `within`.
    pub fn set_deadline(&self, within: Duration) {
        if let Store::Shared(shared) = &self.store {
            shared.set_deadline(within);
        }
    }

    /// Takes the lock, waiting at most `wait`.
    pub fn lock(&self, wait: Duration) -> Result<Locked<'_>, String> {
        let held = match &self.store {
            Store::Dir(dir) => Held::File {
                _lock: dir.lock(wait)?,
            },
            Store::Shared(shared) => Held::Token(shared.lock(wait)?),
        };
        Ok(Locked { ledger: self, held })
    }

    /// Kick `id` as its entry says now, read without the lock (entries
    /// are replaced whole, never written in place): for a waiting kick to
    /// see cheaply whether what holds it is over.
    pub fn peek(&self, id: &str) -> Option<Kick> {
        is_id(id).ok()?;
        let name = format!("{id}{SUFFIX}");
        let text = self.read(&name, MAX_RECORD_BYTES)?;
        read_kick(&name, &text).filter(|k| k.id == id)
    }

    /// A free slot of `slots`; `None` when all are taken.
    pub fn try_slot(&self, slots: usize) -> Result<Option<Slot>, String> {
        Ok(match &self.store {
            Store::Dir(dir) => dir.try_slot(slots)?.map(|f| Slot::File { _lock: f }),
            Store::Shared(shared) => shared.try_slot(slots)?.map(|l| Slot::Lease { _lease: l }),
        })
    }

    /// Whether the supervisor recorded for a kick still runs: its PID on
    /// this host; on another manager, its lease (an error of the ledger
    /// counts as alive: nothing is taken over on a guess).
    pub fn alive(&self, supervisor: &Supervisor) -> bool {
        match (&self.store, &supervisor.manager) {
            (Store::Shared(shared), Some(manager)) if manager != shared.manager() => {
                shared.held(&alive_lease(supervisor)).unwrap_or(true)
            }
            _ => supervisor.runs_here(),
        }
    }

    /// Whether each of `supervisors` still runs, asked at once: see
    /// [`Ledger::alive`].
    pub fn alive_each(&self, supervisors: &[&Supervisor]) -> Vec<bool> {
        let Store::Shared(shared) = &self.store else {
            return supervisors.iter().map(|s| s.runs_here()).collect();
        };
        let remote = |s: &Supervisor| s.manager.as_deref().is_some_and(|m| m != shared.manager());
        let asked: Vec<String> = supervisors
            .iter()
            .filter(|s| remote(s))
            .map(|s| alive_lease(s))
            .collect();
        let mut answers = shared
            .held_each(&asked)
            .unwrap_or_else(|_| vec![true; asked.len()])
            .into_iter();
        supervisors
            .iter()
            .map(|s| {
                if remote(s) {
                    answers.next().unwrap_or(true)
                } else {
                    s.runs_here()
                }
            })
            .collect()
    }

    /// Tells the other managers that `supervisor` (of this manager, just
    /// started) lives, for a lease's time: the supervisor renews it.
    pub fn announce(&self, supervisor: &Supervisor) -> Result<(), String> {
        match &self.store {
            Store::Dir(_) => Ok(()),
            Store::Shared(shared) => shared.set_lease(&alive_lease(supervisor), false).map(drop),
        }
    }

    /// Keeps telling the other managers that `supervisor` (this process)
    /// lives, while the returned value is held.
    pub fn keep_alive(&self, supervisor: &Supervisor) -> Result<Option<Slot>, String> {
        match &self.store {
            Store::Dir(_) => Ok(None),
            Store::Shared(shared) => Ok(shared
                .set_lease(&alive_lease(supervisor), true)?
                .map(|l| Slot::Lease { _lease: l })),
        }
    }

    /// Waits until the ledger's replicas hold what was written (a shared
    /// ledger with `replicas`), before a kick it names starts.
    pub fn wait_for_replicas(&self) {
        if let Store::Shared(shared) = &self.store {
            shared.wait_for_replicas();
        }
    }

    fn read(&self, name: &str, max: u64) -> Option<Vec<u8>> {
        match &self.store {
            Store::Dir(dir) => dir.read_capped(name, max),
            Store::Shared(shared) => shared.read(name, max),
        }
    }

    /// The names of the entries for which `wanted` holds, with when each
    /// was last written.
    fn touched(&self, wanted: impl Fn(&str) -> bool) -> Result<Vec<(String, Millis)>, String> {
        match &self.store {
            Store::Dir(dir) => Ok(dir
                .names(&wanted)?
                .into_iter()
                .map(|n| {
                    let at = dir.modified(&n).unwrap_or(0);
                    (n, at)
                })
                .collect()),
            Store::Shared(shared) => Ok(shared
                .touched()?
                .into_iter()
                .filter(|(n, _)| wanted(n))
                .collect()),
        }
    }
}

/// The lease that tells the other managers a supervisor lives.
fn alive_lease(supervisor: &Supervisor) -> String {
    format!(
        "alive:{}:{}:{}",
        supervisor.manager.as_deref().unwrap_or("-"),
        supervisor.pid,
        supervisor.start_ticks
    )
}

/// What an entry of the ledger holds, read from its JSON (a shared
/// ledger's after its seal held).
pub enum Entry {
    Kick(Box<Kick>),
    Refusals(SenderRefusals),
    Inventory(Inventory),
}

/// Entry `name`'s JSON `text`, read as its name says; `None` for what
/// does not parse as that (said in the log for a kick).
pub fn read_entry(name: &str, text: &[u8]) -> Option<Entry> {
    if name.ends_with(SUFFIX) {
        read_kick(name, text).map(|k| Entry::Kick(Box::new(k)))
    } else if name == INVENTORY {
        serde_json::from_slice(text).ok().map(Entry::Inventory)
    } else if is_refusals_file(name) || name == REFUSED_BEYOND {
        serde_json::from_slice(text).ok().map(Entry::Refusals)
    } else {
        None
    }
}

/// The kick in entry `name`; `None` for anything else (an entry that
/// does not parse, said in the log, or a refusal of an older ledger, which
/// kept them so).
fn read_kick(name: &str, text: &[u8]) -> Option<Kick> {
    match serde_json::from_slice(text) {
        Ok(Record::Kick(kick)) => Some(kick),
        Ok(Record::Refused(_)) => None,
        Err(e) => {
            tracing::warn!(
                "kick: the ledger's {} is not a kick record: {}",
                crate::text::printable(name),
                crate::text::printable(&e.to_string())
            );
            None
        }
    }
}

impl Locked<'_> {
    /// Every kick, oldest first. Entries that do not parse are skipped.
    pub fn kicks(&self) -> Result<Vec<Kick>, String> {
        let mut kicks: Vec<Kick> = match &self.ledger.store {
            Store::Dir(dir) => dir
                .names(|n| n.ends_with(SUFFIX))?
                .iter()
                .filter_map(|n| read_kick(n, &dir.read_capped(n, MAX_RECORD_BYTES)?))
                .collect(),
            Store::Shared(shared) => shared
                .kicks(MAX_RECORD_BYTES)?
                .iter()
                .filter_map(|(n, text)| {
                    // An entry under another kick's name is not believed.
                    read_kick(n, text).filter(|k| format!("{}{SUFFIX}", k.id) == *n)
                })
                .collect(),
        };
        kicks.sort_by(|a, b| (at(a), &a.id).cmp(&(at(b), &b.id)));
        Ok(kicks)
    }

    /// Kick `id`, read from its own entry alone.
    pub fn kick(&self, id: &str) -> Option<Kick> {
        self.ledger.peek(id)
    }

    /// The manager that acted on request `key` (its sender and its words:
    /// what, when), if one did. A local directory has one manager, which
    /// hears each request once: never.
    pub fn taken_by(&self, key: &str) -> Result<Option<String>, String> {
        self.ledger.taken_by(key)
    }

    /// Marks request `key` as acted on by this manager, with what was
    /// decided (written under this lock, before it).
    pub fn claim(&self, key: &str) -> Result<(), String> {
        match (&self.ledger.store, &self.held) {
            (Store::Shared(shared), Held::Token(token)) => shared.claim(token, key).map(drop),
            _ => Ok(()),
        }
    }

    pub fn manager(&self) -> Option<&str> {
        self.ledger.manager()
    }

    pub fn alive_each(&self, supervisors: &[&Supervisor]) -> Vec<bool> {
        self.ledger.alive_each(supervisors)
    }

    pub fn announce(&self, supervisor: &Supervisor) -> Result<(), String> {
        self.ledger.announce(supervisor)
    }

    /// Writes `record`: a kick (new, or the same id again) in its own
    /// entry; a refusal with its sender's. A refusal with the id of a kick
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
    /// of any sender whose name shares its entry (each refusal names its
    /// own).
    pub fn refusals_from(&self, sender: &str) -> SenderRefusals {
        self.read_refusals(&refusals_file(sender, true))
            .unwrap_or_default()
    }

    fn read_refusals(&self, file: &str) -> Option<SenderRefusals> {
        let text = self.ledger.read(file, MAX_REFUSALS_BYTES)?;
        match read_entry(file, &text)? {
            Entry::Refusals(refusals) => Some(refusals),
            _ => None,
        }
    }

    /// Every sender's refusals, and what was refused of senders no longer
    /// kept (in one entry with an empty sender), the latest first.
    pub fn refusals(&self) -> Result<Vec<SenderRefusals>, String> {
        let mut all: Vec<SenderRefusals> = self
            .ledger
            .touched(is_refusals_file)?
            .iter()
            .map(|(n, _)| n.as_str())
            .chain(std::iter::once(REFUSED_BEYOND))
            .filter_map(|n| self.read_refusals(n))
            .collect();
        all.sort_by_key(|r: &SenderRefusals| std::cmp::Reverse(r.last_at()));
        Ok(all)
    }

    /// The inventory of hosts; empty when there is none or it cannot be
    /// read.
    pub fn inventory(&self) -> Inventory {
        let text = self.ledger.read(INVENTORY, MAX_INVENTORY_BYTES);
        match text.and_then(|t| read_entry(INVENTORY, &t)) {
            Some(Entry::Inventory(inventory)) => inventory,
            _ => Inventory::default(),
        }
    }

    pub fn write_inventory(&self, inventory: &Inventory) -> Result<(), String> {
        let text = serde_json::to_vec(inventory).map_err(|e| e.to_string())?;
        self.replace(INVENTORY, &text)
    }

    /// Puts `text` as entry `name`, whole: a reader sees the old or the
    /// new.
    fn replace(&self, name: &str, text: &[u8]) -> Result<(), String> {
        match (&self.ledger.store, &self.held) {
            (Store::Shared(shared), Held::Token(token)) => shared.replace(token, name, text, now()),
            (Store::Dir(dir), _) => dir.replace(name, text),
            _ => Err("the ledger is not locked".to_string()),
        }
    }

    fn unlink(&self, name: &str) -> Result<(), String> {
        match (&self.ledger.store, &self.held) {
            (Store::Shared(shared), Held::Token(token)) => shared.unlink(token, name),
            (Store::Dir(dir), _) => dir.unlink(name),
            _ => Err("the ledger is not locked".to_string()),
        }
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
        // Entries that are not kicks: refusals of an older ledger (one
        // file each), or garbage. Only a directory's are looked at: a
        // shared ledger's kicks that do not read are left for the operator
        // to see (each read names them in the log).
        if let Store::Dir(dir) = &self.ledger.store {
            let known: std::collections::HashSet<String> =
                kicks.iter().map(|k| format!("{}{SUFFIX}", k.id)).collect();
            for name in dir.names(|n| n.ends_with(SUFFIX))? {
                if !known.contains(&name)
                    && self.ledger.peek(name.trim_end_matches(SUFFIX)).is_none()
                {
                    let _ = self.unlink(&name);
                }
            }
        }
        self.prune_refusals(now)
    }

    /// Refusal entries untouched for a week go; beyond [`MAX_SENDERS`], the
    /// strangers' first, then the least recently touched, what they held
    /// counted. Judged by the entries' names and times, so that it reads
    /// an entry only to count it.
    pub fn prune_refusals(&self, now: Millis) -> Result<(), String> {
        let mut senders: Vec<(bool, Millis, String)> = Vec::new();
        for (name, at) in self.ledger.touched(is_refusals_file)? {
            if now.saturating_sub(at) <= KEEP {
                senders.push((name.starts_with(REFUSED_KNOWN), at, name))
            } else {
                let _ = self.unlink(&name);
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
    if id.is_empty()
        || id.len() > 128
        || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    {
        return Err(format!("{:?}: not a record id", crate::text::printable(id)));
    }
    Ok(())
}

fn is_refusals_file(name: &str) -> bool {
    (name.starts_with(REFUSED_KNOWN) || name.starts_with(REFUSED_STRANGER))
        && name.ends_with(REFUSED_SUFFIX)
}

/// The entry of `sender`'s refusals (a `known` one's, or a stranger's):
/// its name with every byte but letters, digits, `.` and `-` as `_` (two
/// senders that meet so share an entry; each refusal keeps its sender's
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

/// A new record id: the time, our PID, a counter and 32 random bits,
/// which sort and never repeat, on one manager or two.
pub fn new_id(now: Millis) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    format!(
        "{now}-{}-{}-{:08x}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
        rand::random::<u32>()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kick::record::{Cause, Refused};
    use std::os::unix::fs::PermissionsExt;
    use std::time::Instant;

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
        let bytes: u64 = std::fs::read_dir(dir.path().join("state"))
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
