//! The big-key sampler (`big_keys`, issue 25): the largest keys of each
//! database by `MEMORY USAGE`, for servers without Redis 8's key-size
//! histograms (and beside them: a histogram says how many keys are big,
//! not which).
//!
//! What it costs Redis, and how it is bounded:
//! - Off unless `big_keys = true`; on its own cadence (`big_keys_interval`),
//!   in the poller, never while an SNMP request waits.
//! - One check makes at most `big_keys_scan_calls` SCAN calls (`COUNT
//!   big_keys_scan_count`) within `big_keys_scan_time` (the budget of
//!   [`super::keys::ScanBudget`]), and asks `TYPE` and `MEMORY USAGE key
//!   SAMPLES big_keys_samples` of each name SCAN returned, pipelined. A
//!   sweep of the keyspace goes on from its cursor at the next check: on a
//!   large keyspace a full sweep takes many checks, and the table shows
//!   the largest keys seen by the last complete sweep and the current one.
//! - The databases are those INFO's Keyspace lists; each pipeline begins
//!   with `SELECT db` and ends with `SELECT 0` (the connection's database
//!   for everything else). A refused SELECT stops that database's sweep
//!   for the check, and its replies are not used.
//! - Memory: at most `big_keys_rows` keys per database (the sweep's and
//!   the last one's), names of at most [`MAX_KEY_NAME_BYTES`]; a longer
//!   name is not measured, only counted.
//!
//! - Hot keys without HOTKEYS: with `hot_keys` and an LFU
//!   `maxmemory_policy` (INFO says it), `OBJECT FREQ key` joins each key's
//!   TYPE and MEMORY USAGE, and the most used keys sampled are kept like
//!   the largest (`redisHotKeyTable`'s `redisHkLfuCounter`). None of the
//!   three commands touches a key's LRU/LFU data.
//!
//! Key names can be secrets: with `key_names = "alias"` a key is shown as
//! `b-<hash>` (64 bits of the same keyed HMAC as `check_keys`' aliases),
//! and server errors by their code alone; no name reaches an OID, a value
//! or a log line. In name mode a name is shown escaped
//! ([`crate::text::printable_bytes`]) and cut to a DisplayString.

use super::client::{Client, Lost};
use super::connection::describe;
use super::hot_keys::{hot_keys, HotKey, HotKeyRow};
use super::keys::{alias_hash, error_code, scan_reply, ScanBudget, MAX_KEY_NAME_BYTES};
use super::replies::{number, text};
use crate::config::{BigKeys, KeyChecks, KeyNames};
use crate::metrics::{BigKeyField, KeyType};
use crate::smi::{display_string, unix_now, Value as SnmpValue};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use tracing::{debug, info, warn};

/// One key measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Measured {
    pub name: Vec<u8>,
    pub kind: Option<KeyType>,
    pub bytes: u64,
    /// UNIX time of the measurement.
    pub seen: u64,
}

/// The `n` largest keys offered, largest first, a name once (its newest
/// measurement). Pure: the sampler's memory bound.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopN {
    keys: Vec<Measured>,
}

impl TopN {
    /// Keeps `key` if it is among the `n` largest (a name measured again
    /// replaces its earlier measurement).
    pub fn offer(&mut self, key: Measured, n: usize) {
        self.keys.retain(|k| k.name != key.name);
        let at = self
            .keys
            .iter()
            .position(|k| (k.bytes, &k.name) < (key.bytes, &key.name))
            .unwrap_or(self.keys.len());
        if at < n {
            self.keys.insert(at, key);
            self.keys.truncate(n);
        }
    }

    pub fn keys(&self) -> &[Measured] {
        &self.keys
    }

    /// A new measurement of a key this list may hold: its size now (and
    /// out if it is no longer among the largest).
    pub fn update(&mut self, key: &Measured, n: usize) {
        if self.keys.iter().any(|k| k.name == key.name) {
            self.offer(key.clone(), n);
        }
    }

    /// Forgets a key that is gone.
    pub fn forget(&mut self, name: &[u8]) {
        self.keys.retain(|k| k.name != name);
    }

    /// `older` with `self` over it (a name in both: this one's), the `n`
    /// largest.
    pub fn over(&self, older: &TopN, n: usize) -> TopN {
        let mut merged = older.clone();
        for key in &self.keys {
            merged.offer(key.clone(), n);
        }
        merged
    }
}

/// One row of `redisBigKeyTable`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BigKeyRow {
    /// 1-based, largest first over all databases: the row's index.
    pub rank: u32,
    /// The name (escaped) or its alias.
    pub label: String,
    pub kind: Option<KeyType>,
    pub bytes: u64,
    pub db: u32,
    pub seen: u64,
}

impl BigKeyRow {
    pub fn value(&self, field: BigKeyField) -> Option<SnmpValue> {
        Some(match field {
            BigKeyField::Name => display_string(&self.label),
            BigKeyField::Type => SnmpValue::Integer(self.kind?.number()),
            BigKeyField::Bytes => SnmpValue::Counter64(self.bytes),
            BigKeyField::Database => SnmpValue::Gauge32(self.db),
            BigKeyField::Seen => SnmpValue::Counter64(self.seen),
        })
    }
}

/// What the sampler serves until its next check.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BigKeyReport {
    pub rows: Vec<BigKeyRow>,
    /// Names too long to measure, in the last check.
    pub left_out: u64,
    /// `redisHotKeyTable`'s rows (`hot_keys`), as HOTKEYS GET last said.
    pub hot: Vec<HotKeyRow>,
    pub error: String,
}

/// A sweep of every listed database, across checks.
#[derive(Debug, Default)]
struct Sweep {
    /// The databases of this sweep (from INFO when it began).
    dbs: Vec<u32>,
    /// Position in `dbs`, and SCAN's cursor there.
    at: usize,
    cursor: u64,
    /// The largest keys this sweep has seen, per database.
    found: BTreeMap<u32, TopN>,
    /// The most used keys by OBJECT FREQ (the LFU fallback of
    /// `hot_keys`), per database; `bytes` holds the counter.
    hot: BTreeMap<u32, TopN>,
}

/// Keys kept per sweep (each database's largest, and as many most used)
/// at most, all databases together: with names of at most
/// [`MAX_KEY_NAME_BYTES`], a few megabytes at worst.
const MAX_KEPT: usize = 1_000;

/// Commands per measuring pipeline at most (two per key, and the SELECTs).
const MEASURE_KEYS: usize = 100;

/// The big-key sampler of one instance.
pub struct BigKeyCheck {
    settings: BigKeys,
    names: KeyNames,
    secret: Vec<u8>,
    asked: Option<Instant>,
    sweep: Sweep,
    /// The last complete sweep's largest keys.
    last: BTreeMap<u32, TopN>,
    /// And its most used keys (the LFU fallback).
    hot_last: BTreeMap<u32, TopN>,
    /// Whether this check asks OBJECT FREQ of the keys it measures.
    frequencies: bool,
    latest: Option<BigKeyReport>,
    /// SCAN's COUNT is halved this many times (a reply over the budget).
    count_shift: u32,
    /// Whether a refusal was logged at info already.
    said: bool,
}

impl BigKeyCheck {
    pub fn new(settings: &KeyChecks) -> Self {
        BigKeyCheck {
            settings: settings.big_keys.clone(),
            names: settings.names,
            secret: settings
                .alias_secret
                .as_ref()
                .map(|s| s.expose().as_bytes().to_vec())
                .unwrap_or_default(),
            asked: None,
            sweep: Sweep::default(),
            last: BTreeMap::new(),
            hot_last: BTreeMap::new(),
            frequencies: false,
            latest: None,
            count_shift: 0,
            said: false,
        }
    }

    /// Whether a check is due.
    pub fn due_at(&self, now: Instant) -> bool {
        (self.settings.enabled || self.settings.hot_keys)
            && self.asked.is_none_or(|asked| {
                now.duration_since(asked) >= self.settings.interval * (1 << self.count_shift.min(6))
            })
    }

    /// What to serve: `None` when the sampler is off or has not run.
    pub fn latest(&self) -> Option<BigKeyReport> {
        self.latest.clone()
    }

    /// How a key is shown.
    pub fn label(&self, name: &[u8]) -> String {
        match self.names {
            KeyNames::Alias => format!("b-{:016x}", alias_hash(&self.secret, name)),
            KeyNames::Name => crate::text::printable_bytes(name),
        }
    }

    /// Keys kept per database: `big_keys_rows`, fewer where the databases
    /// are so many that they would keep more than [`MAX_KEPT`] in all.
    fn per_db(&self) -> usize {
        let dbs = self.sweep.dbs.len().max(1);
        self.settings.rows.min((MAX_KEPT / dbs).max(1))
    }

    fn scan_count(&self) -> u32 {
        (self.settings.scan_count >> self.count_shift).max(1)
    }

    /// A server's error in words safe to show (in alias mode its code
    /// only: the text may quote a name), logged once at info.
    fn error(&mut self, instance: &str, command: &str, e: &redis::RedisError) -> String {
        let text = match self.names {
            KeyNames::Alias => format!("{command}: server error {}", error_code(e)),
            KeyNames::Name => format!("{command}: {}", describe(e)),
        };
        if !self.said {
            self.said = true;
            info!(instance = %instance, "big keys: Redis refuses {text}");
        } else {
            debug!(instance = %instance, "big keys: {text}");
        }
        text
    }

    /// The rows to serve: each database's largest keys (this sweep's over
    /// the last one's), ranked largest first over all.
    fn rows(&self) -> Vec<BigKeyRow> {
        ranked(&self.sweep.found, &self.last, self.per_db())
            .into_iter()
            .enumerate()
            .map(|(i, (db, key))| BigKeyRow {
                rank: i as u32 + 1,
                label: self.label(&key.name),
                kind: key.kind,
                bytes: key.bytes,
                db,
                seen: key.seen,
            })
            .collect()
    }

    /// The hot keys of the LFU fallback: each database's most used keys by
    /// OBJECT FREQ, ranked over all.
    fn lfu_rows(&self) -> Vec<HotKeyRow> {
        ranked(&self.sweep.hot, &self.hot_last, self.per_db())
            .into_iter()
            .enumerate()
            .map(|(i, (db, key))| HotKeyRow {
                rank: i as u32 + 1,
                label: self.label(&key.name),
                key: HotKey {
                    name: key.name,
                    db: Some(db),
                    lfu: Some(key.bytes),
                    ..HotKey::default()
                },
            })
            .collect()
    }

    /// One check over `client`; `dbs` are the databases INFO lists. A
    /// reply over the budget or a lost connection ends it (the last rows
    /// kept, with the error).
    /// `lfu`: the server's `maxmemory_policy` is an LFU one, so OBJECT
    /// FREQ can stand in for a HOTKEYS it does not have.
    pub async fn ask(&mut self, client: &mut Client, dbs: &[u32], lfu: bool) -> Result<(), Lost> {
        let instance = client.instance().name.clone();
        let started = Instant::now();
        self.asked = Some(started);
        let mut report = BigKeyReport::default();
        let mut answered = false;
        if self.settings.hot_keys {
            // Refused (no such command, or no grant): said once by the
            // client, not asked again on this connection.
            if let Some(keys) = client
                .optional("HOTKEYS", &["GET"])
                .await
                .as_ref()
                .and_then(hot_keys)
            {
                answered = true;
                report.hot = keys
                    .into_iter()
                    .enumerate()
                    .map(|(i, key)| HotKeyRow {
                        rank: i as u32 + 1,
                        label: self.label(&key.name),
                        key,
                    })
                    .collect();
            }
        }
        // Without HOTKEYS, under an LFU policy, the sampled keys' OBJECT
        // FREQ (what `redis-cli --hotkeys` reads, for every key).
        self.frequencies = self.settings.hot_keys && self.settings.enabled && lfu && !answered;
        if !self.frequencies {
            self.sweep.hot.clear();
            self.hot_last.clear();
        }
        let outcome = if self.settings.enabled {
            self.check(&instance, client, dbs, started, &mut report)
                .await
        } else {
            Ok(())
        };
        match outcome {
            Ok(()) => {
                report.rows = self.rows();
                if self.frequencies {
                    report.hot = self.lfu_rows();
                }
                self.latest = Some(report);
                Ok(())
            }
            Err(lost) => {
                if lost.over_budget {
                    self.count_shift = (self.count_shift + 1).min(31);
                    warn!(instance = %instance, "big keys: {}; the next check waits longer and asks SCAN for {} names", lost.text, self.scan_count());
                }
                let mut kept = self.latest.take().unwrap_or_default();
                kept.error = lost.text.clone();
                self.latest = Some(kept);
                Err(lost)
            }
        }
    }

    async fn check(
        &mut self,
        instance: &str,
        client: &mut Client,
        dbs: &[u32],
        started: Instant,
        report: &mut BigKeyReport,
    ) -> Result<(), Lost> {
        if self.sweep.dbs.is_empty() {
            if dbs.is_empty() {
                return Ok(());
            }
            self.sweep = Sweep {
                dbs: dbs.to_vec(),
                ..Sweep::default()
            };
        }
        let mut budget =
            ScanBudget::new(self.settings.scan_calls, self.settings.scan_time, started);
        while budget.round(1, Instant::now()) == 1 {
            let db = self.sweep.dbs[self.sweep.at];
            let mut pipe = redis::pipe();
            pipe.ignore_errors();
            pipe.cmd("SELECT").arg(db);
            pipe.cmd("SCAN")
                .arg(self.sweep.cursor)
                .arg("COUNT")
                .arg(self.scan_count());
            pipe.cmd("SELECT").arg(0);
            let replies = client.pipeline(&pipe).await?;
            let selected = match replies.first() {
                Some(Err(e)) => Err(e.clone()),
                _ => Ok(()),
            };
            let scanned = replies
                .get(1)
                .and_then(|r| r.as_ref().ok())
                .and_then(scan_reply);
            let (next, names) = match (selected, scanned) {
                (Ok(()), Some(scanned)) => scanned,
                (Err(e), _) => {
                    report.error = self.error(instance, "SELECT", &e);
                    self.next_db();
                    continue;
                }
                (Ok(()), None) => {
                    if let Some(Err(e)) = replies.get(1) {
                        let e = e.clone();
                        report.error = self.error(instance, "SCAN", &e);
                    }
                    self.next_db();
                    continue;
                }
            };
            let (measurable, long): (Vec<Vec<u8>>, Vec<Vec<u8>>) = names
                .into_iter()
                .partition(|n| n.len() <= MAX_KEY_NAME_BYTES);
            report.left_out = report.left_out.saturating_add(long.len() as u64);
            self.measure(instance, client, db, measurable, report)
                .await?;
            self.sweep.cursor = next;
            if next == 0 && self.next_db() {
                // The sweep is complete: its keys are the last sweep's.
                self.last = std::mem::take(&mut self.sweep.found);
                self.hot_last = std::mem::take(&mut self.sweep.hot);
                self.sweep = Sweep {
                    dbs: dbs.to_vec(),
                    ..Sweep::default()
                };
                if dbs.is_empty() {
                    break;
                }
            }
        }
        Ok(())
    }

    /// Moves the sweep to its next database; true when it has none left.
    fn next_db(&mut self) -> bool {
        self.sweep.cursor = 0;
        self.sweep.at += 1;
        if self.sweep.at >= self.sweep.dbs.len() {
            self.sweep.at = 0;
            return true;
        }
        false
    }

    /// TYPE and MEMORY USAGE of `names` in database `db`, pipelined.
    async fn measure(
        &mut self,
        instance: &str,
        client: &mut Client,
        db: u32,
        names: Vec<Vec<u8>>,
        report: &mut BigKeyReport,
    ) -> Result<(), Lost> {
        let n = self.per_db();
        for chunk in names.chunks(MEASURE_KEYS) {
            let mut pipe = redis::pipe();
            pipe.ignore_errors();
            pipe.cmd("SELECT").arg(db);
            for name in chunk {
                pipe.cmd("TYPE").arg(name);
                pipe.cmd("MEMORY")
                    .arg("USAGE")
                    .arg(name)
                    .arg("SAMPLES")
                    .arg(self.settings.samples);
                if self.frequencies {
                    pipe.cmd("OBJECT").arg("FREQ").arg(name);
                }
            }
            let stride = if self.frequencies { 3 } else { 2 };
            pipe.cmd("SELECT").arg(0);
            let replies = client.pipeline(&pipe).await?;
            if let Some(Err(e)) = replies.first() {
                let e = e.clone();
                report.error = self.error(instance, "SELECT", &e);
                return Ok(());
            }
            let seen = unix_now();
            for (i, name) in chunk.iter().enumerate() {
                let at = 1 + stride * i;
                match reading(replies.get(at), replies.get(at + 1)) {
                    Reading::Size(kind, bytes) => {
                        let key = Measured {
                            name: name.clone(),
                            kind,
                            bytes,
                            seen,
                        };
                        let freq = replies.get(at + 2).and_then(|r| r.as_ref().ok());
                        if let Some(freq) = freq.filter(|_| self.frequencies).and_then(number) {
                            let used = Measured {
                                bytes: freq,
                                ..key.clone()
                            };
                            if let Some(top) = self.hot_last.get_mut(&db) {
                                top.update(&used, n);
                            }
                            self.sweep.hot.entry(db).or_default().offer(used, n);
                        }
                        // The last sweep's rows show sizes as now.
                        if let Some(top) = self.last.get_mut(&db) {
                            top.update(&key, n);
                        }
                        self.sweep.found.entry(db).or_default().offer(key, n);
                    }
                    Reading::Gone => {
                        for tops in [&mut self.last, &mut self.hot_last] {
                            if let Some(top) = tops.get_mut(&db) {
                                top.forget(name);
                            }
                        }
                    }
                    Reading::Refused(e) => {
                        report.error = self.error(instance, "MEMORY USAGE", &e);
                    }
                    Reading::Nothing => {}
                }
            }
        }
        Ok(())
    }
}

/// Each database's `n` first of `current` over `last`, ranked by their
/// measure (largest first) over all databases.
fn ranked(
    current: &BTreeMap<u32, TopN>,
    last: &BTreeMap<u32, TopN>,
    n: usize,
) -> Vec<(u32, Measured)> {
    let empty = TopN::default();
    let dbs: std::collections::BTreeSet<u32> = last.keys().chain(current.keys()).copied().collect();
    let mut all: Vec<(u32, Measured)> = Vec::new();
    for db in dbs {
        let now = current.get(&db).unwrap_or(&empty);
        let before = last.get(&db).unwrap_or(&empty);
        all.extend(now.over(before, n).keys().iter().map(|k| (db, k.clone())));
    }
    all.sort_by(|(da, a), (db, b)| (b.bytes, da).cmp(&(a.bytes, db)));
    all
}

/// What the replies to `TYPE key` and `MEMORY USAGE key SAMPLES n` say.
#[derive(Debug)]
enum Reading {
    Size(Option<KeyType>, u64),
    /// Gone since SCAN saw it (TYPE none, MEMORY USAGE nil).
    Gone,
    Refused(redis::RedisError),
    /// No reply (a pipeline cut short).
    Nothing,
}

fn reading(
    kind: Option<&redis::RedisResult<redis::Value>>,
    usage: Option<&redis::RedisResult<redis::Value>>,
) -> Reading {
    let kind = kind
        .and_then(|r| r.as_ref().ok())
        .and_then(text)
        .map(|t| KeyType::from_label(&t).unwrap_or(KeyType::Other));
    match usage {
        Some(Ok(value)) => match number(value) {
            Some(bytes) if kind != Some(KeyType::None) => Reading::Size(kind, bytes),
            _ => Reading::Gone,
        },
        Some(Err(e)) => Reading::Refused(e.clone()),
        None => Reading::Nothing,
    }
}

/// How long a full sweep of `keys` keys takes at these settings, in
/// checks (for the documentation's arithmetic and its test).
pub fn checks_per_sweep(keys: u64, settings: &BigKeys) -> u64 {
    let per_check = u64::from(settings.scan_calls) * u64::from(settings.scan_count);
    keys.div_ceil(per_check.max(1))
}

/// A sweep's duration at these settings.
pub fn sweep_time(keys: u64, settings: &BigKeys) -> Duration {
    settings.interval * u32::try_from(checks_per_sweep(keys, settings)).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str, bytes: u64) -> Measured {
        Measured {
            name: name.as_bytes().to_vec(),
            kind: Some(KeyType::String),
            bytes,
            seen: 1,
        }
    }

    fn names(top: &TopN) -> Vec<String> {
        top.keys()
            .iter()
            .map(|k| String::from_utf8_lossy(&k.name).into_owned())
            .collect()
    }

    #[test]
    fn the_top_n_keeps_the_largest_a_name_once() {
        let mut top = TopN::default();
        for (name, bytes) in [("a", 10), ("b", 50), ("c", 30), ("d", 5), ("e", 40)] {
            top.offer(key(name, bytes), 3);
        }
        assert_eq!(names(&top), ["b", "e", "c"]);
        // Measured again: the newer size, not a second row.
        top.offer(key("c", 60), 3);
        assert_eq!(names(&top), ["c", "b", "e"]);
        top.offer(key("b", 1), 3);
        assert_eq!(names(&top), ["c", "e", "b"]);
        top.offer(key("z", 0), 3);
        assert_eq!(names(&top), ["c", "e", "b"]);
        top.forget(b"e");
        assert_eq!(names(&top), ["c", "b"]);
        // Ties: a stable order (by name), whichever came first.
        let mut tie = TopN::default();
        tie.offer(key("x", 7), 2);
        tie.offer(key("y", 7), 2);
        let mut again = TopN::default();
        again.offer(key("y", 7), 2);
        again.offer(key("x", 7), 2);
        assert_eq!(tie, again);
    }

    #[test]
    fn the_current_sweep_goes_over_the_last() {
        let mut last = TopN::default();
        last.offer(key("old", 100), 2);
        last.offer(key("shrunk", 90), 2);
        // A key measured again updates the last sweep's row as well.
        last.update(&key("shrunk", 3), 2);
        last.update(&key("absent", 1_000), 2);
        assert_eq!(names(&last), ["old", "shrunk"]);
        assert_eq!(last.keys()[1].bytes, 3);
        let mut now = TopN::default();
        now.offer(key("shrunk", 3), 2);
        now.offer(key("new", 50), 2);
        assert_eq!(names(&now.over(&last, 2)), ["old", "new"]);
    }

    fn check(names: KeyNames) -> BigKeyCheck {
        BigKeyCheck::new(&KeyChecks {
            names,
            alias_secret: Some(crate::secret::Secret::new(
                "0123456789abcdef0123456789abcdef".into(),
            )),
            big_keys: BigKeys {
                enabled: true,
                rows: 2,
                ..BigKeys::default()
            },
            ..KeyChecks::default()
        })
    }

    #[test]
    fn rows_rank_every_database_and_alias_names() {
        let mut c = check(KeyNames::Alias);
        c.last
            .entry(0)
            .or_default()
            .offer(key("user:alice", 500), 2);
        c.sweep
            .found
            .entry(3)
            .or_default()
            .offer(key("cart:\x1b[2J", 900), 2);
        c.sweep
            .found
            .entry(0)
            .or_default()
            .offer(key("user:bob", 700), 2);
        let rows = c.rows();
        let shown: Vec<(u32, u32, u64)> = rows.iter().map(|r| (r.rank, r.db, r.bytes)).collect();
        assert_eq!(shown, [(1, 3, 900), (2, 0, 700), (3, 0, 500)]);
        for row in &rows {
            assert!(
                row.label.starts_with("b-") && row.label.len() == 18,
                "{}",
                row.label
            );
            assert!(!row.label.contains("user") && !row.label.contains("cart"));
        }
        // The same key, the same alias; in name mode the name, escaped.
        assert_eq!(c.label(b"user:bob"), rows[1].label);
        let c = check(KeyNames::Name);
        assert_eq!(c.label(b"cart:\x1b[2J"), "cart:\\u{1b}[2J");
        assert_eq!(c.label(b"bin:\xff"), "bin:\\xff");
    }

    #[test]
    fn many_databases_keep_fewer_keys_each() {
        let mut c = check(KeyNames::Name);
        c.settings.rows = 100;
        assert_eq!(c.per_db(), 100);
        c.sweep.dbs = (0..16).collect();
        assert_eq!(c.per_db(), 62);
        c.sweep.dbs = (0..5000).collect();
        assert_eq!(c.per_db(), 1);
    }

    #[test]
    fn the_off_sampler_is_never_due() {
        let c = BigKeyCheck::new(&KeyChecks::default());
        assert!(!c.due_at(Instant::now()));
        let mut c = check(KeyNames::Name);
        let now = Instant::now();
        assert!(c.due_at(now));
        c.asked = Some(now);
        assert!(!c.due_at(now + Duration::from_secs(299)));
        assert!(c.due_at(now + Duration::from_secs(300)));
    }

    /// A reply captured from a real server (tests/fixtures/redis/README.md).
    fn fixture(name: &str) -> redis::RedisResult<redis::Value> {
        let path = format!("{}/tests/fixtures/redis/{name}", env!("CARGO_MANIFEST_DIR"));
        match redis::parse_redis_value(&std::fs::read(&path).unwrap()).unwrap() {
            redis::Value::ServerError(e) => Err(e.into()),
            value => Ok(value),
        }
    }

    #[test]
    fn real_type_and_memory_usage_replies() {
        let hash = fixture("7.0-bigkeys-type-hash.resp");
        let usage = fixture("7.0-bigkeys-memory-usage.resp");
        assert!(matches!(
            reading(Some(&hash), Some(&usage)),
            Reading::Size(Some(KeyType::Hash), 76_496)
        ));
        // Deleted between SCAN and the measurement: nil, and TYPE none.
        let gone = fixture("7.0-bigkeys-memory-usage-gone.resp");
        assert!(matches!(reading(Some(&hash), Some(&gone)), Reading::Gone));
        let none = fixture("7.0-bigkeys-type-gone.resp");
        assert!(matches!(reading(Some(&none), Some(&usage)), Reading::Gone));
        assert!(matches!(reading(None, None), Reading::Nothing));
        // A refusal: in alias mode its code only, whatever its text says.
        let refused = fixture("valkey-9.1-hotkeys-get.resp");
        let Reading::Refused(e) = reading(Some(&hash), Some(&refused)) else {
            panic!("not refused");
        };
        let mut c = check(KeyNames::Alias);
        assert_eq!(
            c.error("main", "MEMORY USAGE", &e),
            "MEMORY USAGE: server error ERR"
        );
    }

    #[test]
    fn a_sweep_of_100k_keys_at_the_defaults() {
        let settings = BigKeys::default();
        assert_eq!(checks_per_sweep(100_000, &settings), 100);
        assert_eq!(sweep_time(100_000, &settings), Duration::from_secs(30_000));
    }
}
