//! The agent's own thresholds (`[[alarm]]`): for sites without a manager
//! that evaluates them (OpenNMS does, with `opennms/snippets/thresholds.xml`).
//!
//! An alarm watches one numeric object of REDIS-SERVER-MIB on every
//! instance (or the instances it names), on every row the object has (a
//! replica's lag is one value per replica). It is *raised* when the value
//! is beyond its trigger at `count` polls in a row, and *rearmed* (cleared)
//! when the value comes back beyond its rearm value, on the other side of
//! the trigger: a value hovering between the two changes nothing. Each
//! raise is a `redisThresholdCrossed`, each rearm a `redisThresholdRearmed`,
//! and the raised ones are the rows of `redisAlarmTable`.
//!
//! net-snmp's DISMAN-EVENT `monitor` cannot do this for us: Debian's snmpd
//! runs without those modules (`-I -smux,mteTrigger,mteTriggerConf`), and
//! with them on its internal queries got no value for our AgentX-served
//! Gauge32 ("Returned non-integer result(s)").
//!
//! The evaluation takes the values a poll just produced (the reading's
//! parts), in memory: no I/O, nothing on the AgentX answer path. Its state
//! is one entry per (alarm, row) that is beyond its trigger or raised,
//! bounded by [`MAX_TRACKED_PER_INSTANCE`] per instance.
//!
//! When a watched value is gone (maxmemory set back to 0 leaves
//! `redisMemUsedOfMax` absent; a replica that left has no lag row), its
//! alarm is rearmed: the condition it reported no longer holds as far as
//! the agent can tell, and a manager would otherwise keep an alarm nothing
//! ever clears. An instance that is *down* keeps its alarms as they were:
//! its values are unknown, not gone (`redisInstanceDown` says so), and
//! clearing them would raise them again, after `count` polls, once it is
//! back. An instance removed from the configuration has its alarms rearmed
//! too ([`Alarms::forget`]): its index is never used again.

use crate::metrics::{
    self, About, AlarmField, Column, Layout, ObjectDef, RedisEvent, ALARM_COLUMNS,
};
use crate::oid::Oid;
use crate::smi::{display_string, Syntax, Value};
use std::collections::{BTreeMap, BTreeSet};
use tracing::warn;

/// Which side of the trigger is the alarm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Raised at or above the trigger; rearmed at or below the rearm value.
    Above,
    /// Raised at or below the trigger; rearmed at or above the rearm value.
    Below,
}

/// One configured alarm, validated against the catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlarmSpec {
    /// Its name, unique: `redisAlarmName`, and how a `[[alarm]]` replaces
    /// a default one.
    pub name: String,
    /// The MIB name of the object it watches.
    pub object: &'static str,
    pub direction: Direction,
    /// In the object's own units (hundredths of a percent for
    /// `redisMemUsedOfMax`: 9000 is 90 %).
    pub trigger: i64,
    pub rearm: i64,
    /// Polls in a row beyond the trigger before it is raised, from 1.
    pub count: u32,
    /// The instances (by name) it applies to; `None`: all.
    pub instances: Option<Vec<String>>,
}

/// The longest alarm name (a DisplayString column, and a TOML key's
/// worth of text).
pub const MAX_NAME_LEN: usize = 64;

/// At most this many (alarm, row) pairs are followed per instance; rows
/// beyond it are not judged (and the log says so once). Far above what
/// the default alarms make (four, one per replica for the lag).
pub const MAX_TRACKED_PER_INSTANCE: usize = 1024;

/// Why a number of the catalogue may not be watched: `None` when it may.
fn unfit(def: &ObjectDef) -> Option<&'static str> {
    if AlarmField::of(def).is_some() {
        return Some("a column of redisAlarmTable itself");
    }
    // The 17 scalars of redisStatus describe the first instance only, at
    // `.0`; the same values are columns of the tables, one row per instance.
    if def.arcs.first() == Some(&metrics::LEGACY_BRANCH) {
        return Some(
            "a scalar of redisStatus, which describes the first instance only: name \
             the column of the same value in the tables (redisCliConnected for \
             redisConnectedClients, redisMemUsed for redisUsedMemory)",
        );
    }
    match def.syntax {
        Syntax::Integer32 | Syntax::Gauge32 | Syntax::Gauge64 => None,
        Syntax::Counter32 | Syntax::Counter64 => {
            Some("a counter, which only grows: a threshold on its rate belongs in a manager")
        }
        Syntax::Enum | Syntax::TruthValue => {
            Some("an enumeration, not a quantity: its notifications say when it changes")
        }
        Syntax::TimeTicks
        | Syntax::DisplayString
        | Syntax::OctetString
        | Syntax::ObjectIdentifier => {
            Some("not a number: an alarm needs an Integer32, a Gauge32 or a 64-bit gauge")
        }
    }
}

impl AlarmSpec {
    /// An alarm as the configuration gives it; errors say what is wrong.
    pub fn new(
        name: &str,
        object: &str,
        direction: Direction,
        trigger: i64,
        rearm: i64,
        count: u32,
        instances: Option<Vec<String>>,
    ) -> Result<AlarmSpec, String> {
        if name.is_empty()
            || name.len() > MAX_NAME_LEN
            || !name.bytes().all(|b| (0x21..0x7f).contains(&b))
        {
            return Err(format!(
                "name {name:?} is not 1 to {MAX_NAME_LEN} printable characters without spaces"
            ));
        }
        let Some(def) = metrics::redis_objects().find(|o| o.name == object) else {
            return Err(format!(
                "object {object:?} is not an object of REDIS-SERVER-MIB (give its MIB name, \
                 for example redisMemUsedOfMax)"
            ));
        };
        if let Some(why) = unfit(def) {
            return Err(format!("object {object} cannot be watched: it is {why}"));
        }
        let rearm_fits = match direction {
            Direction::Above => rearm < trigger,
            Direction::Below => rearm > trigger,
        };
        if !rearm_fits {
            let side = match direction {
                Direction::Above => "below",
                Direction::Below => "above",
            };
            return Err(format!(
                "rearm {rearm} must be {side} the trigger {trigger}: it is where a raised \
                 alarm clears, on the other side of the trigger"
            ));
        }
        if count == 0 {
            return Err("count 0: it is the polls in a row beyond the trigger, from 1".into());
        }
        if let Some(names) = &instances {
            if names.is_empty() {
                return Err(
                    "instances = []: no instance; leave it out for all, or disable the alarm"
                        .into(),
                );
            }
        }
        Ok(AlarmSpec {
            name: name.to_string(),
            object: def.name,
            direction,
            trigger,
            rearm,
            count,
            instances,
        })
    }

    /// The alarms every installation gets unless `[alarms] defaults =
    /// false`; a `[[alarm]]` of the same name replaces one.
    ///
    /// - `memory`: used memory at or above 90 % of maxmemory
    ///   (`redisMemUsedOfMax`, hundredths of a percent) on 2 polls in a
    ///   row; rearmed at 85 %. Eviction or OOM errors start at 100 %.
    /// - `clients`: connections at or above 90 % of maxclients
    ///   (`redisCliUsedOfMax`), likewise: beyond 100 % new clients are
    ///   refused.
    /// - `replica-lag`: a replica's last acknowledgement 30 s or more ago
    ///   (`redisRpLag`, on the master; replicas acknowledge every second)
    ///   on 3 polls in a row; rearmed at 10 s.
    /// - `certificate`: the certificate a `rediss://` server shows expires
    ///   within 14 days (`redisInstanceCertExpiresIn`); rearmed beyond 15
    ///   days, which a renewal crosses at once.
    ///
    /// The triggers and rearm values are those of the OpenNMS thresholds
    /// shipped in `opennms/snippets/thresholds.xml`, so the two ways agree;
    /// the counts are in polls of the agent (10 s by default), not of
    /// OpenNMS (300 s).
    pub fn defaults() -> Vec<AlarmSpec> {
        let spec = |name: &str, object, direction, trigger, rearm, count| {
            AlarmSpec::new(name, object, direction, trigger, rearm, count, None)
                .expect("the default alarms are valid")
        };
        vec![
            spec(
                "memory",
                "redisMemUsedOfMax",
                Direction::Above,
                9000,
                8500,
                2,
            ),
            spec(
                "clients",
                "redisCliUsedOfMax",
                Direction::Above,
                9000,
                8500,
                2,
            ),
            spec("replica-lag", "redisRpLag", Direction::Above, 30, 10, 3),
            spec(
                "certificate",
                "redisInstanceCertExpiresIn",
                Direction::Below,
                14 * 86_400,
                15 * 86_400,
                1,
            ),
        ]
    }

    fn beyond_trigger(&self, value: i128) -> bool {
        match self.direction {
            Direction::Above => value >= i128::from(self.trigger),
            Direction::Below => value <= i128::from(self.trigger),
        }
    }

    fn rearmed_by(&self, value: i128) -> bool {
        match self.direction {
            Direction::Above => value <= i128::from(self.rearm),
            Direction::Below => value >= i128::from(self.rearm),
        }
    }

    fn applies_to(&self, instance_name: Option<&str>) -> bool {
        match (&self.instances, instance_name) {
            (None, _) => true,
            (Some(names), Some(name)) => names.iter().any(|n| n == name),
            (Some(_), None) => false,
        }
    }
}

/// What a reload does to the alarms, by name, as the log says it:
/// `"memory" kept`, `"lag" changed`, `"clients" removed`, `"disk" added`.
/// Empty when nothing differs.
pub fn changes(running: &[AlarmSpec], wanted: &[AlarmSpec]) -> Vec<String> {
    if running == wanted {
        return Vec::new();
    }
    let mut said = Vec::new();
    for old in running {
        let what = match wanted.iter().find(|w| w.name == old.name) {
            None => "removed",
            Some(new) if new != old => "changed",
            Some(_) => "kept",
        };
        said.push(format!("{:?} {what}", old.name));
    }
    for new in wanted {
        if !running.iter().any(|r| r.name == new.name) {
            said.push(format!("{:?} added", new.name));
        }
    }
    said
}

/// A raised or rearmed alarm, with its row of `redisAlarmTable` (as it is
/// or, rearmed, as it was with the value that rearmed it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlarmEvent {
    pub crossed: bool,
    /// `redisAlarmNumber`.
    pub number: u32,
    /// The row's columns at `instance.number`.
    pub row: Vec<(Oid, Value)>,
}

impl AlarmEvent {
    /// Its notification: `redisThresholdCrossed` when raised,
    /// `redisThresholdRearmed` when rearmed.
    pub fn notification(&self) -> RedisEvent {
        if self.crossed {
            RedisEvent::ThresholdCrossed
        } else {
            RedisEvent::ThresholdRearmed
        }
    }

    /// What its notification is about: its row of `redisAlarmTable`, of
    /// instance `index`.
    pub fn about(&self, index: u32) -> About {
        About::row(index, self.number)
    }

    /// The value at `oid` of the row it holds, which its notification
    /// carries even once the row has left the snapshot (a rearm).
    pub fn value(&self, oid: &Oid) -> Option<Value> {
        self.row
            .iter()
            .find(|(o, _)| o == oid)
            .map(|(_, v)| v.clone())
    }
}

/// What an evaluation found: the notifications due and the rows of
/// `redisAlarmTable` for the instance now.
#[derive(Debug, Default)]
pub struct Evaluation {
    pub events: Vec<AlarmEvent>,
    pub rows: Vec<(Oid, Value)>,
}

/// A raised alarm.
#[derive(Debug, Clone)]
struct Raised {
    number: u32,
    raised_value: i128,
    raised_at: u64,
}

/// One (alarm, row) followed: beyond its trigger on `beyond` polls in a
/// row, or raised.
#[derive(Debug, Clone)]
struct Track {
    beyond: u32,
    value: i128,
    raised: Option<Raised>,
}

#[derive(Debug, Default)]
struct InstanceAlarms {
    /// By (alarm, the value's row index).
    tracks: BTreeMap<(usize, Vec<u32>), Track>,
    /// The number the next raised alarm gets (from 1; skips those in use).
    next_number: u32,
    /// The cap was reached and said in the log.
    capped: bool,
}

/// The alarms and what each instance's values did to them.
pub struct Alarms {
    specs: Vec<(AlarmSpec, Oid)>,
    /// `redisInstanceName`, for `instances = [...]`.
    name_column: Oid,
    columns: Vec<(AlarmField, Oid)>,
    instances: BTreeMap<u32, InstanceAlarms>,
    /// Where the objects are, for [`Alarms::reconfigure`].
    layout: Layout,
}

/// A value as a number, when it is one.
fn number(value: &Value, now_unix: u64) -> Option<i128> {
    match value.resolve(now_unix).as_ref() {
        Value::Integer(v) => Some(i128::from(*v)),
        Value::Gauge32(v) | Value::Counter32(v) => Some(i128::from(*v)),
        Value::Counter64(v) => Some(i128::from(*v)),
        _ => None,
    }
}

impl Alarms {
    pub fn new(specs: &[AlarmSpec], layout: &Layout) -> Alarms {
        let oid_of = |name: &str| {
            metrics::redis_objects()
                .find(|o| o.name == name)
                .map(|o| layout.object_oid(o))
        };
        Alarms {
            specs: specs
                .iter()
                .filter_map(|s| Some((s.clone(), oid_of(s.object)?)))
                .collect(),
            name_column: oid_of("redisInstanceName").expect("redisInstanceName is served"),
            columns: ALARM_COLUMNS
                .iter()
                .filter_map(|c| Some((AlarmField::of(c)?, layout.object_oid(c))))
                .collect(),
            instances: BTreeMap::new(),
            layout: layout.clone(),
        }
    }

    /// Judges what a poll of instance `index` produced (`parts`, each
    /// sorted by OID); `up` is whether the poll succeeded.
    pub fn evaluate(
        &mut self,
        index: u32,
        up: bool,
        parts: &[&[(Oid, Value)]],
        now_unix: u64,
    ) -> Evaluation {
        let mut events = Vec::new();
        let name = self
            .name_column
            .child(&[index])
            .ok()
            .and_then(|oid| find(parts, &oid))
            .and_then(|v| match v {
                Value::OctetString(bytes) => String::from_utf8(bytes.clone()).ok(),
                _ => None,
            });
        let state = self.instances.entry(index).or_default();
        if !up {
            // Values unknown: raised alarms stay, counts start over.
            state.tracks.retain(|_, t| t.raised.is_some());
            let rows = rows(&self.specs, &self.columns, index, state);
            return Evaluation { events, rows };
        }
        let mut seen = BTreeSet::new();
        for (i, (spec, oid)) in self.specs.iter().enumerate() {
            if !spec.applies_to(name.as_deref()) {
                continue;
            }
            for (suffix, value) in values_under(parts, oid, index, now_unix) {
                let key = (i, suffix);
                if !state.tracks.contains_key(&key) {
                    if !spec.beyond_trigger(value) {
                        continue;
                    }
                    if state.tracks.len() >= MAX_TRACKED_PER_INSTANCE {
                        if !state.capped {
                            warn!(
                                "instance {index}: more than {MAX_TRACKED_PER_INSTANCE} values \
                                 beyond their alarms' triggers; the rest are not judged"
                            );
                            state.capped = true;
                        }
                        continue;
                    }
                }
                let track = state.tracks.entry(key.clone()).or_insert(Track {
                    beyond: 0,
                    value,
                    raised: None,
                });
                track.value = value;
                seen.insert(key.clone());
                if track.raised.is_some() {
                    if spec.rearmed_by(value) {
                        let track = state.tracks.remove(&key).expect("just seen");
                        events.push(event(
                            false,
                            &self.specs[i],
                            &self.columns,
                            index,
                            &key.1,
                            &track,
                        ));
                    }
                } else if spec.beyond_trigger(value) {
                    track.beyond = track.beyond.saturating_add(1);
                    if track.beyond >= spec.count {
                        let number = free_number(state);
                        let track = state.tracks.get_mut(&key).expect("just seen");
                        track.raised = Some(Raised {
                            number,
                            raised_value: value,
                            raised_at: now_unix,
                        });
                        events.push(event(
                            true,
                            &self.specs[i],
                            &self.columns,
                            index,
                            &key.1,
                            track,
                        ));
                    }
                } else {
                    state.tracks.remove(&key);
                }
            }
        }
        // What was followed and is gone: a raised alarm is rearmed, a
        // count forgotten.
        let gone: Vec<(usize, Vec<u32>)> = state
            .tracks
            .keys()
            .filter(|k| !seen.contains(k))
            .cloned()
            .collect();
        for key in gone {
            let track = state.tracks.remove(&key).expect("a key of the map");
            if track.raised.is_some() {
                events.push(event(
                    false,
                    &self.specs[key.0],
                    &self.columns,
                    index,
                    &key.1,
                    &track,
                ));
            }
        }
        if state.tracks.len() < MAX_TRACKED_PER_INSTANCE {
            state.capped = false;
        }
        let rows = rows(&self.specs, &self.columns, index, state);
        Evaluation { events, rows }
    }

    /// The alarms in force become `specs` (a reload, SIGHUP): an alarm the
    /// same in every setting keeps its state (a raised one stays raised,
    /// with its row and number, and sends nothing); one removed or changed
    /// (object, direction, trigger, rearm, count, instances) has each of
    /// its raised rows rearmed, as it was, so that no manager keeps an
    /// alarm nothing will clear, and a changed one starts again from its
    /// first poll, as an added one does. Returns, for each instance whose
    /// alarms changed, the rearms due and its rows of `redisAlarmTable`
    /// now. The state only shrinks: what is kept keeps its bound.
    pub fn reconfigure(&mut self, specs: &[AlarmSpec]) -> Vec<(u32, Evaluation)> {
        let old: Vec<AlarmSpec> = self.specs.iter().map(|(s, _)| s.clone()).collect();
        // The layout cannot change on a reload: the OIDs stay those in force.
        let mut fresh = Alarms::new(specs, &self.layout);
        // Old spec index -> new spec index, for the alarms kept.
        let kept: BTreeMap<usize, usize> = old
            .iter()
            .enumerate()
            .filter_map(|(i, o)| Some((i, fresh.specs.iter().position(|(n, _)| n == o)?)))
            .collect();
        let mut out = Vec::new();
        for (index, state) in std::mem::take(&mut self.instances) {
            let mut events = Vec::new();
            let mut tracks = BTreeMap::new();
            for ((i, suffix), track) in state.tracks {
                match kept.get(&i) {
                    Some(&j) => {
                        tracks.insert((j, suffix), track);
                    }
                    None if track.raised.is_some() => {
                        events.push(event(
                            false,
                            &self.specs[i],
                            &self.columns,
                            index,
                            &suffix,
                            &track,
                        ));
                    }
                    None => {}
                }
            }
            let state = InstanceAlarms {
                tracks,
                next_number: state.next_number,
                capped: false,
            };
            if !events.is_empty() {
                let rows = rows(&fresh.specs, &fresh.columns, index, &state);
                out.push((index, Evaluation { events, rows }));
            }
            fresh.instances.insert(index, state);
        }
        *self = fresh;
        out
    }

    /// Instance `index` was removed from the configuration: each of its
    /// raised alarms is rearmed, and its state dropped.
    pub fn forget(&mut self, index: u32) -> Vec<AlarmEvent> {
        let Some(state) = self.instances.remove(&index) else {
            return Vec::new();
        };
        state
            .tracks
            .iter()
            .filter(|(_, t)| t.raised.is_some())
            .map(|((i, suffix), track)| {
                event(false, &self.specs[*i], &self.columns, index, suffix, track)
            })
            .collect()
    }
}

/// The value at `oid` in sorted parts.
fn find<'a>(parts: &[&'a [(Oid, Value)]], oid: &Oid) -> Option<&'a Value> {
    parts.iter().find_map(|part| {
        let at = part.binary_search_by(|(o, _)| o.cmp(oid)).ok()?;
        Some(&part[at].1)
    })
}

/// Every numeric value of the object at `oid` for instance `index`: its
/// row index (the arcs after the object's OID) and the value.
fn values_under(
    parts: &[&[(Oid, Value)]],
    oid: &Oid,
    index: u32,
    now_unix: u64,
) -> Vec<(Vec<u32>, i128)> {
    let mut found = Vec::new();
    for part in parts {
        let from = part.partition_point(|(o, _)| o < oid);
        for (o, v) in part[from..].iter().take_while(|(o, _)| o.starts_with(oid)) {
            let suffix = &o.as_slice()[oid.len()..];
            if suffix.first() != Some(&index) {
                continue;
            }
            if let Some(n) = number(v, now_unix) {
                found.push((suffix.to_vec(), n));
            }
        }
    }
    found
}

/// The smallest number from the instance's next one that no raised alarm
/// of the instance has: stable while an alarm is raised, and not reused at
/// once by the next one (a manager tells them apart).
fn free_number(state: &mut InstanceAlarms) -> u32 {
    let max = i32::MAX as u32;
    let mut n = state.next_number.clamp(1, max);
    while state
        .tracks
        .values()
        .any(|t| t.raised.as_ref().is_some_and(|r| r.number == n))
    {
        n = if n >= max { 1 } else { n + 1 };
    }
    state.next_number = if n >= max { 1 } else { n + 1 };
    n
}

/// The row of `redisAlarmTable` of a followed value that is raised.
fn row(
    spec: &AlarmSpec,
    watched: &Oid,
    columns: &[(AlarmField, Oid)],
    index: u32,
    suffix: &[u32],
    track: &Track,
) -> Vec<(Oid, Value)> {
    let Some(raised) = &track.raised else {
        return Vec::new();
    };
    columns
        .iter()
        .filter_map(|(field, column)| {
            let oid = column.child(&[index, raised.number]).ok()?;
            let value = match field {
                AlarmField::Name => display_string(&spec.name),
                AlarmField::Object => Value::ObjectIdentifier(watched.child(suffix).ok()?),
                AlarmField::ObjectName => display_string(spec.object),
                AlarmField::Value => display_string(&track.value.to_string()),
                AlarmField::RaisedValue => display_string(&raised.raised_value.to_string()),
                AlarmField::Trigger => display_string(&spec.trigger.to_string()),
                AlarmField::Rearm => display_string(&spec.rearm.to_string()),
                AlarmField::Age => Value::SecondsSince(raised.raised_at),
            };
            Some((oid, value))
        })
        .collect()
}

fn event(
    crossed: bool,
    (spec, watched): &(AlarmSpec, Oid),
    columns: &[(AlarmField, Oid)],
    index: u32,
    suffix: &[u32],
    track: &Track,
) -> AlarmEvent {
    AlarmEvent {
        crossed,
        number: track.raised.as_ref().map_or(0, |r| r.number),
        row: row(spec, watched, columns, index, suffix, track),
    }
}

fn rows(
    specs: &[(AlarmSpec, Oid)],
    columns: &[(AlarmField, Oid)],
    index: u32,
    state: &InstanceAlarms,
) -> Vec<(Oid, Value)> {
    let mut rows: Vec<(Oid, Value)> = state
        .tracks
        .iter()
        .flat_map(|((i, suffix), track)| {
            let (spec, watched) = &specs[*i];
            row(spec, watched, columns, index, suffix, track)
        })
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows
}

/// The default memory alarm's values (raised at 90 % of maxmemory,
/// rearmed at 85 %) on `count` polls: for the tests of this module and of
/// the notifier.
#[cfg(test)]
pub(crate) fn memory_alarm(count: u32) -> AlarmSpec {
    AlarmSpec::new(
        "memory",
        "redisMemUsedOfMax",
        Direction::Above,
        9000,
        8500,
        count,
        None,
    )
    .unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Layout {
        Layout::default_layout()
    }

    fn oid_of(name: &str, suffix: &[u32]) -> Oid {
        let def = metrics::redis_objects().find(|o| o.name == name).unwrap();
        layout().row_oid(def, suffix).unwrap()
    }

    /// A poll's part of instance `index`: its name and the given values,
    /// sorted as the store keeps parts.
    fn part(index: u32, name: &str, values: &[(&str, &[u32], Value)]) -> Vec<(Oid, Value)> {
        let mut part = vec![(oid_of("redisInstanceName", &[index]), display_string(name))];
        for (object, row, value) in values {
            let mut suffix = vec![index];
            suffix.extend_from_slice(row);
            part.push((oid_of(object, &suffix), value.clone()));
        }
        part.sort_by(|a, b| a.0.cmp(&b.0));
        part
    }

    /// `redisMemUsedOfMax` of instance `index`: used_memory 1043392 of
    /// maxmemory 1100000 is 9485 (94.85 %), as `Conversion::PercentOf`
    /// makes it.
    fn memory(index: u32, hundredths: u32) -> Vec<(Oid, Value)> {
        part(
            index,
            "cache",
            &[("redisMemUsedOfMax", &[], Value::Gauge32(hundredths))],
        )
    }

    fn judge(alarms: &mut Alarms, index: u32, part: &[(Oid, Value)]) -> Evaluation {
        alarms.evaluate(index, true, &[part], 1_795_400_000)
    }

    fn kinds(e: &Evaluation) -> Vec<bool> {
        e.events.iter().map(|e| e.crossed).collect()
    }

    fn column<'a>(
        row: &'a [(Oid, Value)],
        name: &str,
        index: u32,
        number: u32,
    ) -> Option<&'a Value> {
        let at = oid_of(name, &[index, number]);
        row.iter().find(|(o, _)| *o == at).map(|(_, v)| v)
    }

    #[test]
    fn raised_after_count_polls_and_rearmed_below_the_rearm_value() {
        let mut alarms = Alarms::new(&[memory_alarm(2)], &layout());
        assert!(judge(&mut alarms, 1, &memory(1, 8000)).events.is_empty());
        // One poll beyond is not enough, nor two that are not in a row.
        assert!(judge(&mut alarms, 1, &memory(1, 9485)).events.is_empty());
        assert!(judge(&mut alarms, 1, &memory(1, 8999)).events.is_empty());
        assert!(judge(&mut alarms, 1, &memory(1, 9485)).events.is_empty());
        let raised = judge(&mut alarms, 1, &memory(1, 9500));
        assert_eq!(kinds(&raised), [true]);
        let event = &raised.events[0];
        assert_eq!(event.number, 1);
        assert_eq!(
            column(&event.row, "redisAlarmName", 1, 1),
            Some(&display_string("memory"))
        );
        assert_eq!(
            column(&event.row, "redisAlarmObject", 1, 1),
            Some(&Value::ObjectIdentifier(oid_of("redisMemUsedOfMax", &[1])))
        );
        assert_eq!(
            column(&event.row, "redisAlarmRaisedValue", 1, 1),
            Some(&display_string("9500"))
        );
        assert_eq!(
            column(&event.row, "redisAlarmTrigger", 1, 1),
            Some(&display_string("9000"))
        );
        assert_eq!(
            column(&event.row, "redisAlarmRearm", 1, 1),
            Some(&display_string("8500"))
        );
        assert_eq!(raised.rows, event.row);
        // Hovering between the rearm value and the trigger: nothing more,
        // and the row shows the value of the last poll.
        for v in [8900, 9600, 8501] {
            let hovering = judge(&mut alarms, 1, &memory(1, v));
            assert!(hovering.events.is_empty(), "{v}");
            assert_eq!(
                column(&hovering.rows, "redisAlarmValue", 1, 1),
                Some(&display_string(&v.to_string()))
            );
            assert_eq!(
                column(&hovering.rows, "redisAlarmRaisedValue", 1, 1),
                Some(&display_string("9500"))
            );
        }
        let rearmed = judge(&mut alarms, 1, &memory(1, 8500));
        assert_eq!(kinds(&rearmed), [false]);
        assert_eq!(
            column(&rearmed.events[0].row, "redisAlarmValue", 1, 1),
            Some(&display_string("8500"))
        );
        assert!(rearmed.rows.is_empty());
        // Raised again later: a new number.
        judge(&mut alarms, 1, &memory(1, 9100));
        let again = judge(&mut alarms, 1, &memory(1, 9100));
        assert_eq!(again.events[0].number, 2);
    }

    #[test]
    fn below_alarms_and_rows_of_a_table() {
        // The certificate of a server: 10 days left is under 14.
        let spec = AlarmSpec::defaults()
            .into_iter()
            .find(|a| a.name == "certificate")
            .unwrap();
        let mut alarms = Alarms::new(&[spec], &layout());
        let cert = |secs: i32| {
            part(
                2,
                "tls",
                &[("redisInstanceCertExpiresIn", &[], Value::Integer(secs))],
            )
        };
        assert!(judge(&mut alarms, 2, &cert(30 * 86_400)).events.is_empty());
        assert_eq!(kinds(&judge(&mut alarms, 2, &cert(10 * 86_400))), [true]);
        assert!(judge(&mut alarms, 2, &cert(14 * 86_400 + 43_200))
            .events
            .is_empty());
        assert_eq!(kinds(&judge(&mut alarms, 2, &cert(365 * 86_400))), [false]);
        // A replica's lag, per replica row (slot 1 and 2 of redisReplicaTable).
        let lag = AlarmSpec::defaults()
            .into_iter()
            .find(|a| a.name == "replica-lag")
            .unwrap();
        let mut alarms = Alarms::new(&[lag], &layout());
        let replicas = |a: u32, b: u32| {
            part(
                3,
                "main",
                &[
                    ("redisRpLag", &[1], Value::Gauge32(a)),
                    ("redisRpLag", &[2], Value::Gauge32(b)),
                ],
            )
        };
        for _ in 0..2 {
            assert!(judge(&mut alarms, 3, &replicas(0, 31)).events.is_empty());
        }
        let raised = judge(&mut alarms, 3, &replicas(1, 45));
        assert_eq!(kinds(&raised), [true]);
        assert_eq!(
            column(&raised.rows, "redisAlarmObject", 3, 1),
            Some(&Value::ObjectIdentifier(oid_of("redisRpLag", &[3, 2])))
        );
        // The replica left: its row is gone, and so is the alarm.
        let gone = judge(
            &mut alarms,
            3,
            &part(3, "main", &[("redisRpLag", &[1], Value::Gauge32(0))]),
        );
        assert_eq!(kinds(&gone), [false]);
        assert!(gone.rows.is_empty());
    }

    #[test]
    fn each_instance_has_its_own_state_and_a_down_one_keeps_its_alarms() {
        let mut alarms = Alarms::new(&[memory_alarm(1)], &layout());
        assert_eq!(kinds(&judge(&mut alarms, 1, &memory(1, 9700))), [true]);
        assert!(judge(&mut alarms, 2, &memory(2, 5000)).events.is_empty());
        // Instance 1 is down: nothing read, the alarm stays with its row.
        let down = alarms.evaluate(1, false, &[], 1_795_400_010);
        assert!(down.events.is_empty());
        assert!(column(&down.rows, "redisAlarmName", 1, 1).is_some());
        // Back with maxmemory 0: redisMemUsedOfMax is absent, the alarm rearmed.
        let back = judge(&mut alarms, 1, &part(1, "cache", &[]));
        assert_eq!(kinds(&back), [false]);
        // Instance 2 raises its own, numbered in its own sequence; removed,
        // it is rearmed.
        assert_eq!(judge(&mut alarms, 2, &memory(2, 9100)).events[0].number, 1);
        let forgotten = alarms.forget(2);
        assert_eq!(forgotten.len(), 1);
        assert!(!forgotten[0].crossed);
        assert!(alarms.forget(2).is_empty());
    }

    #[test]
    fn instances_named_and_others() {
        let spec = AlarmSpec::new(
            "big",
            "redisMemUsed",
            Direction::Above,
            1 << 30,
            1 << 29,
            1,
            Some(vec!["cache".into()]),
        )
        .unwrap();
        let mut alarms = Alarms::new(&[spec], &layout());
        let used = |index, name: &str| {
            part(
                index,
                name,
                &[("redisMemUsed", &[], Value::Counter64(3 << 30))],
            )
        };
        assert_eq!(kinds(&judge(&mut alarms, 1, &used(1, "cache"))), [true]);
        assert!(judge(&mut alarms, 2, &used(2, "sessions"))
            .events
            .is_empty());
    }

    #[test]
    fn a_reconfiguration_keeps_unchanged_alarms_and_rearms_changed_and_removed_ones() {
        let clients = |trigger: i64| {
            AlarmSpec::new(
                "clients",
                "redisCliUsedOfMax",
                Direction::Above,
                trigger,
                trigger - 500,
                1,
                None,
            )
            .unwrap()
        };
        let lag = AlarmSpec::defaults()
            .into_iter()
            .find(|a| a.name == "replica-lag")
            .unwrap();
        let poll = |index: u32, mem: u32, cli: u32| {
            part(
                index,
                "cache",
                &[
                    ("redisMemUsedOfMax", &[], Value::Gauge32(mem)),
                    ("redisCliUsedOfMax", &[], Value::Gauge32(cli)),
                    ("redisRpLag", &[1], Value::Gauge32(40)),
                    ("redisMemUsed", &[], Value::Counter64(1 << 20)),
                ],
            )
        };
        let before = [memory_alarm(1), clients(9000), lag.clone()];
        let mut alarms = Alarms::new(&before, &layout());
        // Instance 1: memory (number 1) and clients (2) raised; the lag
        // beyond its trigger twice (3 polls needed). Instance 2: nothing
        // raised.
        assert_eq!(
            kinds(&judge(&mut alarms, 1, &poll(1, 9500, 9500))),
            [true, true]
        );
        assert!(judge(&mut alarms, 2, &poll(2, 100, 100)).events.is_empty());
        let memory_row = judge(&mut alarms, 1, &poll(1, 9500, 9500)).rows;
        assert!(column(&memory_row, "redisAlarmName", 1, 1).is_some());

        // Nothing differs: nothing is sent, nothing restaged, and the
        // count goes on: the third poll raises the lag (number 3), and only
        // it.
        assert!(alarms.reconfigure(&before).is_empty());
        let third = judge(&mut alarms, 1, &poll(1, 9500, 9500));
        assert_eq!(kinds(&third), [true]);
        assert_eq!(
            column(&third.events[0].row, "redisAlarmName", 1, 3),
            Some(&display_string("replica-lag"))
        );

        // memory as it was; clients' trigger raised above its value (9600);
        // replica-lag removed; a new alarm on the used
        // memory added.
        let used =
            AlarmSpec::new("used", "redisMemUsed", Direction::Above, 10, 5, 1, None).unwrap();
        let after = [memory_alarm(1), clients(9600), used];
        assert_eq!(
            changes(&before, &after),
            [
                "\"memory\" kept",
                "\"clients\" changed",
                "\"replica-lag\" removed",
                "\"used\" added"
            ]
        );
        let changed = alarms.reconfigure(&after);
        // Only instance 1 had raised alarms that changed: clients and the
        // lag rearmed, clients' row as it was raised (trigger 9000);
        // memory's row stays.
        assert_eq!(changed.len(), 1);
        let (index, evaluation) = &changed[0];
        assert_eq!(*index, 1);
        assert_eq!(kinds(evaluation), [false, false]);
        assert_eq!(evaluation.events[1].number, 3);
        let rearmed = &evaluation.events[0];
        assert_eq!(rearmed.number, 2);
        assert_eq!(
            column(&rearmed.row, "redisAlarmName", 1, 2),
            Some(&display_string("clients"))
        );
        assert_eq!(
            column(&rearmed.row, "redisAlarmTrigger", 1, 2),
            Some(&display_string("9000"))
        );
        assert_eq!(
            column(&evaluation.rows, "redisAlarmName", 1, 1),
            Some(&display_string("memory"))
        );
        assert!(column(&evaluation.rows, "redisAlarmName", 1, 2).is_none());
        // The next poll: memory still raised, no second trap; clients
        // below its new trigger stays quiet; used is new and raised with a
        // number not given before. The lag is no longer judged.
        let next = judge(&mut alarms, 1, &poll(1, 9500, 9500));
        assert_eq!(kinds(&next), [true]);
        assert_eq!(next.events[0].number, 4);
        assert_eq!(
            column(&next.events[0].row, "redisAlarmName", 1, 4),
            Some(&display_string("used"))
        );
        assert_eq!(
            column(&next.rows, "redisAlarmName", 1, 1),
            Some(&display_string("memory"))
        );
        // Beyond the new trigger, clients starts fresh: raised again.
        assert_eq!(kinds(&judge(&mut alarms, 1, &poll(1, 9500, 9700))), [true]);

        // All alarms off: every raised one rearmed, the rows empty, and no
        // state left.
        let off = alarms.reconfigure(&[]);
        assert_eq!(off.len(), 1);
        assert_eq!(kinds(&off[0].1), [false, false, false]);
        assert!(off[0].1.rows.is_empty());
        assert!(judge(&mut alarms, 1, &poll(1, 9900, 9900))
            .events
            .is_empty());
        assert!(alarms.instances.values().all(|s| s.tracks.is_empty()));
    }

    #[test]
    fn the_configuration_is_checked() {
        let new = |object: &str, direction, trigger, rearm, count| {
            AlarmSpec::new("a", object, direction, trigger, rearm, count, None)
        };
        assert!(new("redisMemUsedOfMax", Direction::Above, 9000, 8500, 2).is_ok());
        let errors = [
            (
                new("redisMemUsedOfMax", Direction::Above, 9000, 9000, 2),
                "must be below the trigger",
            ),
            (
                new("redisInstanceCertExpiresIn", Direction::Below, 100, 50, 1),
                "must be above the trigger",
            ),
            (
                new("redisMemUsedOfMax", Direction::Above, 9000, 8500, 0),
                "count 0",
            ),
            (
                new("redisMemUsedOfMaxx", Direction::Above, 9000, 8500, 1),
                "not an object of REDIS-SERVER-MIB",
            ),
            (
                new("redisStCommands", Direction::Above, 9, 8, 1),
                "a counter",
            ),
            (
                new("redisReplRole", Direction::Above, 2, 1, 1),
                "an enumeration",
            ),
            (
                new("redisSrvVersion", Direction::Above, 2, 1, 1),
                "not a number",
            ),
            (
                new("redisAlarmAge", Direction::Above, 2, 1, 1),
                "redisAlarmTable",
            ),
            (
                AlarmSpec::new("has space", "redisMemUsed", Direction::Above, 2, 1, 1, None),
                "printable",
            ),
            (
                AlarmSpec::new("a", "redisMemUsed", Direction::Above, 2, 1, 1, Some(vec![])),
                "no instance",
            ),
        ];
        for (result, expected) in errors {
            let err = result.unwrap_err();
            assert!(err.contains(expected), "{err}");
        }
    }
}
