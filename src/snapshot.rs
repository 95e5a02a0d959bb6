//! The OID tree the agent answers from.
//!
//! Sources (one Redis poller per instance, the Puppet watcher, …) each own a
//! *part*: a sorted list of `(OID, value)` pairs they replace wholesale after
//! every poll. [`Store::publish`] merges the parts into an immutable
//! [`Snapshot`] and swaps it in atomically; the AgentX session only ever reads
//! the current snapshot, so an answer never waits for a source.
//!
//! The merge builds an index of `(part, position)` pairs rather than copying
//! entries, so publishing costs one k-way merge of small integers, and a
//! lookup is a binary search over that index: O(log n).
//!
//! A merge touches every entry, so merging once per published part would
//! cost O(parts × entries) per poll interval: quadratic in the number of
//! Redis instances. Pollers therefore [`Store::stage`] their parts, and
//! [`Store::run_rebuilds`] merges whatever was staged at most once per
//! coalescing window.

use crate::oid::Oid;
use crate::smi::Value;
use arc_swap::ArcSwap;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// A source's list of objects, sorted by OID, without duplicates.
pub type Part = Vec<(Oid, Value)>;

/// Who owns a part; parts are replaced per key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PartKey {
    /// Values read from one Redis instance (by its index).
    RedisInstance(u32),
    /// The agent's view of an instance's health (up, data age, last error).
    RedisStatus(u32),
    /// The rows of `redisAlarmTable` of one instance: its alarms active
    /// now, owned by the notifier's threshold evaluation.
    RedisAlarms(u32),
    /// Values read from Puppet's files.
    Puppet,
    /// Puppet's events log: its scalars and `puppetEventTable`.
    PuppetEvents,
}

/// What a source produces each time it looks: the parts of the snapshot it
/// owns (an empty part removes one) and what it observed, for judging.
/// Every source sends its readings on the one stream the hub
/// ([`crate::hub`]) takes them from; the stream's observation is the
/// judge's `Observation`, which names every source's (`O` is a source's
/// own while it builds the reading: the snapshot names no source).
#[derive(Debug)]
pub struct Reading<O> {
    pub parts: Vec<(PartKey, Part)>,
    pub observation: O,
}

impl<O> Reading<O> {
    /// The same parts, with the observation as the stream carries it.
    pub fn into_stream<S: From<O>>(self) -> Reading<S> {
        Reading {
            parts: self.parts,
            observation: self.observation.into(),
        }
    }
}

/// What a GET finds.
#[derive(Debug, PartialEq, Eq)]
pub enum GetResult<'a> {
    Value(&'a Value),
    /// The object is defined, but has no instance now (e.g. Redis is down).
    NoSuchInstance,
    /// Nothing is defined at this OID.
    NoSuchObject,
}

/// An immutable view of every object the agent serves.
#[derive(Debug, Default)]
pub struct Snapshot {
    parts: Vec<Arc<Part>>,
    /// `(part, position)` sorted by the OID it points at.
    index: Vec<(u32, u32)>,
    /// OIDs of every defined object (scalar or column, without instance
    /// suffix), sorted: tells noSuchInstance from noSuchObject.
    objects: Arc<Vec<Oid>>,
}

impl Snapshot {
    fn entry(&self, slot: (u32, u32)) -> &(Oid, Value) {
        &self.parts[slot.0 as usize][slot.1 as usize]
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Every `(OID, value)` in order; for tests and diagnostics.
    pub fn iter(&self) -> impl Iterator<Item = &(Oid, Value)> {
        self.index.iter().map(|slot| self.entry(*slot))
    }

    /// SNMP GET semantics.
    pub fn get(&self, oid: &Oid) -> GetResult<'_> {
        let found = self
            .index
            .binary_search_by(|slot| self.entry(*slot).0.as_slice().cmp(oid.as_slice()));
        match found {
            Ok(pos) => GetResult::Value(&self.entry(self.index[pos]).1),
            Err(_) if self.is_defined_object(oid) => GetResult::NoSuchInstance,
            Err(_) => GetResult::NoSuchObject,
        }
    }

    /// The first object after `start` (or at `start` when `include` is set)
    /// and before `end` (a null `end` means no upper bound). `None` means
    /// endOfMibView for this search range.
    pub fn next(&self, start: &Oid, include: bool, end: &Oid) -> Option<&(Oid, Value)> {
        let pos = self.index.partition_point(|slot| {
            let oid = self.entry(*slot).0.as_slice();
            if include {
                oid < start.as_slice()
            } else {
                oid <= start.as_slice()
            }
        });
        let entry = self.entry(*self.index.get(pos)?);
        if !end.is_empty() && entry.0 >= *end {
            return None;
        }
        Some(entry)
    }

    fn is_defined_object(&self, oid: &Oid) -> bool {
        // Object OIDs never prefix one another, so only the greatest object
        // OID not above `oid` can be its object.
        let pos = self.objects.partition_point(|o| o <= oid);
        pos > 0 && oid.starts_with(&self.objects[pos - 1])
    }
}

/// Holds the current snapshot and the parts it is built from.
pub struct Store {
    current: ArcSwap<Snapshot>,
    parts: Mutex<BTreeMap<PartKey, Arc<Part>>>,
    objects: Arc<Vec<Oid>>,
    /// Woken when a part was staged and the snapshot is behind.
    staged: Notify,
}

impl Store {
    /// `objects`: the OIDs of every object the MIB defines (see `metrics`).
    pub fn new(mut objects: Vec<Oid>) -> Self {
        objects.sort();
        objects.dedup();
        let objects = Arc::new(objects);
        let empty = Snapshot {
            objects: objects.clone(),
            ..Snapshot::default()
        };
        Store {
            current: ArcSwap::from_pointee(empty),
            parts: Mutex::new(BTreeMap::new()),
            objects,
            staged: Notify::new(),
        }
    }

    /// The snapshot to answer from; cheap, never blocks on a publisher.
    pub fn load(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }

    /// Replace `key`'s part (an empty part removes it) and swap in a new
    /// snapshot at once. Entries must be sorted by OID; unsorted input is
    /// sorted here rather than trusted, and duplicates keep their first value.
    pub fn publish(&self, key: PartKey, part: Part) {
        self.replace_part(key, part);
        self.rebuild();
    }

    /// Replace `key`'s part; the snapshot follows within the coalescing
    /// window of [`Store::run_rebuilds`]. For sources that publish often.
    /// Returns the part as staged (sorted).
    pub fn stage(&self, key: PartKey, part: Part) -> Arc<Part> {
        let part = self.replace_part(key, part);
        self.staged.notify_one();
        part
    }

    fn replace_part(&self, key: PartKey, mut part: Part) -> Arc<Part> {
        if !part.windows(2).all(|w| w[0].0 < w[1].0) {
            part.sort_by(|a, b| a.0.cmp(&b.0));
            part.dedup_by(|a, b| a.0 == b.0);
        }
        let part = Arc::new(part);
        let mut parts = self.lock_parts();
        if part.is_empty() {
            parts.remove(&key);
        } else {
            parts.insert(key, part.clone());
        }
        part
    }

    /// A poisoned lock only means another publisher panicked mid-update; the
    /// map itself is always whole, so keep serving it.
    fn lock_parts(&self) -> std::sync::MutexGuard<'_, BTreeMap<PartKey, Arc<Part>>> {
        self.parts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Merge the current parts into a new snapshot and swap it in.
    pub fn rebuild(&self) {
        let parts: Vec<Arc<Part>> = self.lock_parts().values().cloned().collect();
        self.current
            .store(Arc::new(merge(parts, self.objects.clone())));
    }

    /// Rebuild the snapshot after parts were staged: at most once per
    /// `window`, which gathers the parts of pollers finishing together into
    /// one merge. Runs until `shutdown`.
    pub async fn run_rebuilds(self: Arc<Self>, window: Duration, shutdown: CancellationToken) {
        loop {
            tokio::select! {
                _ = self.staged.notified() => {}
                _ = shutdown.cancelled() => return,
            }
            tokio::time::sleep(window).await;
            self.rebuild();
        }
    }

    /// The newest value at `oid`, staged or not: the tests' view of what
    /// a source staged before the rebuild shows it. (Notifications carry
    /// the reading's own values, never a lookup here.)
    #[cfg(test)]
    pub fn latest_value(&self, oid: &Oid) -> Option<Value> {
        self.lock_parts().values().find_map(|part| {
            let pos = part.binary_search_by(|(o, _)| o.cmp(oid)).ok()?;
            Some(part[pos].1.clone())
        })
    }
}

/// K-way merge of sorted parts into one sorted index. When two parts hold
/// the same OID (a configuration mistake) the first part wins.
fn merge(parts: Vec<Arc<Part>>, objects: Arc<Vec<Oid>>) -> Snapshot {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    let total: usize = parts.iter().map(|p| p.len()).sum();
    let mut index = Vec::with_capacity(total);
    // Heap of (next OID, part, position); Reverse makes it a min-heap.
    let mut heap: BinaryHeap<Reverse<(&[u32], u32, u32)>> = parts
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.is_empty())
        .map(|(i, p)| Reverse((p[0].0.as_slice(), i as u32, 0)))
        .collect();
    let mut last: Option<&[u32]> = None;
    while let Some(Reverse((oid, part, mut pos))) = heap.pop() {
        if last != Some(oid) {
            index.push((part, pos));
            last = Some(oid);
        }
        // Parts mostly hold runs of OIDs no other part has between them (a
        // table's column, the events log's rows): the run below the next
        // part's head goes in without the heap, so a rebuild costs a heap
        // step per run, not per OID (a rebuild for each Puppet event made
        // this merge a tenth of the agent's CPU per event).
        let cells = &parts[part as usize];
        let bound = heap.peek().map(|Reverse((next, ..))| *next);
        while let Some(next) = cells.get(pos as usize + 1) {
            let next = next.0.as_slice();
            if bound.is_some_and(|b| next >= b) {
                break;
            }
            pos += 1;
            index.push((part, pos));
            last = Some(next);
        }
        if let Some(next) = cells.get(pos as usize + 1) {
            heap.push(Reverse((next.0.as_slice(), part, pos + 1)));
        }
    }
    drop(heap);
    Snapshot {
        parts,
        index,
        objects,
    }
}

/// The value at the OID written `oid` (`.1.3.6…`) in `part`: how the unit
/// tests of the sources look at what a reading holds.
#[cfg(test)]
pub(crate) fn value_at<'a>(part: &'a Part, oid: &str) -> Option<&'a Value> {
    part.iter()
        .find(|(o, _)| o.to_string() == oid)
        .map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oid(s: &str) -> Oid {
        s.parse().unwrap()
    }

    fn store() -> Store {
        let store = Store::new(vec![oid("1.5.1"), oid("1.5.2"), oid("1.5.3")]);
        store.publish(
            PartKey::RedisInstance(1),
            vec![
                (oid("1.5.1.0"), Value::Gauge32(1)),
                (oid("1.5.3.0"), Value::Gauge32(3)),
            ],
        );
        store.publish(
            PartKey::RedisStatus(1),
            vec![(oid("1.5.2.0"), Value::Gauge32(2))],
        );
        store
    }

    #[test]
    fn parts_interleave_in_oid_order() {
        let snap = store().load();
        let oids: Vec<String> = snap.iter().map(|(o, _)| o.to_string()).collect();
        assert_eq!(oids, [".1.5.1.0", ".1.5.2.0", ".1.5.3.0"]);
    }

    #[test]
    fn get_tells_missing_instance_from_missing_object() {
        let store = store();
        let snap = store.load();
        assert_eq!(
            snap.get(&oid("1.5.2.0")),
            GetResult::Value(&Value::Gauge32(2))
        );
        assert_eq!(snap.get(&oid("1.5.2.1")), GetResult::NoSuchInstance);
        assert_eq!(snap.get(&oid("1.5.9.0")), GetResult::NoSuchObject);
        assert_eq!(snap.get(&oid("1.5")), GetResult::NoSuchObject);
        store.publish(PartKey::RedisInstance(1), Vec::new());
        assert_eq!(store.load().get(&oid("1.5.1.0")), GetResult::NoSuchInstance);
    }

    #[test]
    fn next_honours_include_and_end() {
        let snap = store().load();
        let first = snap.next(&oid("1.5"), false, &Oid::null()).unwrap();
        assert_eq!(first.0, oid("1.5.1.0"));
        let same = snap.next(&oid("1.5.2.0"), true, &Oid::null()).unwrap();
        assert_eq!(same.0, oid("1.5.2.0"));
        let after = snap.next(&oid("1.5.2.0"), false, &Oid::null()).unwrap();
        assert_eq!(after.0, oid("1.5.3.0"));
        assert!(snap.next(&oid("1.5.3.0"), false, &Oid::null()).is_none());
        assert!(snap.next(&oid("1.5.1.0"), false, &oid("1.5.2")).is_none());
    }

    #[test]
    fn staged_parts_show_after_a_rebuild_and_at_once_to_latest_value() {
        let store = store();
        store.stage(
            PartKey::RedisStatus(1),
            vec![(oid("1.5.2.0"), Value::Gauge32(20))],
        );
        assert_eq!(
            store.load().get(&oid("1.5.2.0")),
            GetResult::Value(&Value::Gauge32(2))
        );
        assert_eq!(
            store.latest_value(&oid("1.5.2.0")),
            Some(Value::Gauge32(20))
        );
        store.rebuild();
        assert_eq!(
            store.load().get(&oid("1.5.2.0")),
            GetResult::Value(&Value::Gauge32(20))
        );
    }

    #[tokio::test]
    async fn rebuilds_coalesce_staged_parts() {
        let store = Arc::new(store());
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(
            store
                .clone()
                .run_rebuilds(Duration::from_millis(20), shutdown.clone()),
        );
        for n in 0..50 {
            store.stage(
                PartKey::RedisStatus(1),
                vec![(oid("1.5.2.0"), Value::Gauge32(n))],
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(
            store.load().get(&oid("1.5.2.0")),
            GetResult::Value(&Value::Gauge32(49))
        );
        shutdown.cancel();
        task.await.unwrap();
    }

    /// Runs of one part, parts interleaved column by column, and OIDs two
    /// parts both hold: the merge gives what sorting every cell gives,
    /// with the first part's value where two parts hold one OID.
    #[test]
    fn merged_runs_give_the_order_a_sort_gives_and_the_first_part_wins() {
        let part = |n: u32, oids: &[&str]| -> Arc<Part> {
            Arc::new(oids.iter().map(|o| (oid(o), Value::Gauge32(n))).collect())
        };
        let parts = vec![
            part(0, &["1.1.0", "1.2.0", "1.3.1.1", "1.3.2.1", "1.9.0"]),
            part(1, &["1.3.1.2", "1.3.2.2", "1.3.3.2"]),
            part(2, &["1.2.0", "1.4.1", "1.4.2", "1.4.3", "1.4.4"]),
            part(3, &[]),
            part(4, &["1.0", "1.3.2.2", "1.3.2.3", "2.1"]),
        ];
        let mut expected: Vec<(Oid, Value)> = Vec::new();
        for p in &parts {
            for (o, v) in p.iter() {
                if !expected.iter().any(|(e, _)| e == o) {
                    expected.push((o.clone(), v.clone()));
                }
            }
        }
        expected.sort_by(|a, b| a.0.cmp(&b.0));
        let snapshot = merge(parts, Arc::new(Vec::new()));
        let got: Vec<(Oid, Value)> = snapshot.iter().cloned().collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn unsorted_part_is_sorted_and_deduplicated() {
        let store = Store::new(vec![]);
        store.publish(
            PartKey::Puppet,
            vec![
                (oid("1.2"), Value::Integer(2)),
                (oid("1.1"), Value::Integer(1)),
                (oid("1.2"), Value::Integer(3)),
            ],
        );
        let got: Vec<_> = store.load().iter().cloned().collect();
        assert_eq!(
            got,
            vec![
                (oid("1.1"), Value::Integer(1)),
                (oid("1.2"), Value::Integer(2))
            ]
        );
    }
}
