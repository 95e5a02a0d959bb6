//! The hub: where every source's readings go. It stages a reading's parts
//! in the store and hands its observation to the notifier; when
//! notifications are due, it publishes the snapshot first (a receiver that
//! asks back must find what the notification says) and sends them with the
//! values of the reading itself. Sources know nothing of the store, the
//! notifier or each other; the hub knows them all.
//!
//! ```text
//!  redis::poller (follow_redis: a task per instance) ─Reading─┐
//!  puppet::watcher (states) ──▶ follow_puppet ─Reading──┤
//!  puppet::events (thread) ──▶ follow_puppet_events ─────┴─▶ Hub ─stage─▶ snapshot::Store
//!                                                        └─due─▶ notify::Notifier ─▶ AgentX session
//! ```

use crate::alarms::{AlarmEvent, AlarmSpec};
use crate::metrics::{About, Layout};
use crate::notify::Notifier;
use crate::oid::Oid;
use crate::puppet::events::EventsObservation;
use crate::puppet::observation::PuppetObservation;
use crate::puppet::{self, PuppetState};
use crate::redis::observation::RedisObservation;
use crate::redis::poller::Poller;
use crate::smi::{unix_now, Value};
use crate::snapshot::{Part, PartKey, Reading, Store};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub struct Hub {
    store: Arc<Store>,
    notifier: Notifier,
}

impl Hub {
    pub fn new(store: Arc<Store>, notifier: Notifier) -> Hub {
        Hub { store, notifier }
    }

    /// A poll of Redis instance `index`.
    /// Its values are judged against the alarms too, whose rows of
    /// `redisAlarmTable` are staged with the reading's parts.
    pub fn redis(&self, index: u32, reading: Reading<RedisObservation>) {
        let due = self.notifier.redis_due(index, &reading.observation);
        let mut parts = self.stage(reading.parts, false);
        let views: Vec<&[(Oid, Value)]> = parts.iter().map(|p| p.as_slice()).collect();
        let alarms = self
            .notifier
            .redis_alarms(index, reading.observation.up, &views, unix_now());
        parts.push(self.store.stage(PartKey::RedisAlarms(index), alarms.rows));
        if !due.is_empty() || !alarms.events.is_empty() {
            self.store.rebuild();
        }
        for event in due {
            self.notifier
                .send(event, About::source(index), |oid| value_in(&parts, oid));
        }
        for event in &alarms.events {
            self.send_alarm(index, event, |oid| value_in(&parts, oid));
        }
    }

    /// Instance `index` was removed from the configuration (its task has
    /// ended): its rows leave the snapshot at once, and the notifier
    /// forgets it.
    /// Its raised alarms are rearmed, sent while its name is still there.
    pub fn forget_redis(&self, index: u32) {
        for event in self.notifier.forget_redis(index) {
            self.send_alarm(index, &event, |oid| self.store.latest_value(oid));
        }
        self.store.stage(PartKey::RedisInstance(index), Vec::new());
        self.store.stage(PartKey::RedisStatus(index), Vec::new());
        self.store.stage(PartKey::RedisAlarms(index), Vec::new());
        self.store.rebuild();
    }

    /// The alarms in force become `specs` (a reload, SIGHUP). An instance
    /// whose raised alarms were removed or changed has its rows of
    /// `redisAlarmTable` staged again at once, then their rearms sent with
    /// its name as the store holds it. (A poll judged just before may stage
    /// its older rows after these; its next poll puts them right.)
    pub fn reconfigure_alarms(&self, specs: &[AlarmSpec]) {
        let changed = self.notifier.reconfigure_alarms(specs);
        if changed.is_empty() {
            return;
        }
        for (index, evaluation) in &changed {
            self.store
                .stage(PartKey::RedisAlarms(*index), evaluation.rows.clone());
        }
        self.store.rebuild();
        for (index, evaluation) in changed {
            for event in &evaluation.events {
                self.send_alarm(index, event, |oid| self.store.latest_value(oid));
            }
        }
    }

    /// A new state of Puppet's files.
    pub fn puppet(&self, reading: Reading<PuppetObservation>, now_unix: i64) {
        let due = self.notifier.puppet_due(&reading.observation, now_unix);
        let parts = self.stage(reading.parts, !due.is_empty());
        for event in due {
            self.notifier
                .send(event, About::PUPPET, |oid| value_in(&parts, oid));
        }
    }

    /// New lines of Puppet's events log: each resource notification carries
    /// its row of `puppetEventTable`, as staged.
    pub fn puppet_events(&self, reading: Reading<EventsObservation>) {
        let due = self.notifier.puppet_events_due(&reading.observation);
        let parts = self.stage(reading.parts, !due.is_empty());
        for (event, about) in due {
            self.notifier
                .send(event, about, |oid| value_in(&parts, oid));
        }
    }

    /// Puppet's staleness and the end of a run storm, checked now and then
    /// between changes: their notifications carry what the store holds of
    /// Puppet.
    pub fn puppet_tick(&self, now_unix: i64) {
        for event in self.notifier.puppet_tick_due(now_unix) {
            self.notifier
                .send(event, About::PUPPET, |oid| self.store.latest_value(oid));
        }
    }

    /// Sends the notification of an alarm of instance `index` raised or
    /// rearmed: the columns of its row valued from the event (which holds
    /// the row even once it is gone), `redisInstanceName` by `value`.
    fn send_alarm(&self, index: u32, event: &AlarmEvent, value: impl Fn(&Oid) -> Option<Value>) {
        self.notifier
            .send(event.notification(), event.about(index), |oid| {
                event.value(oid).or_else(|| value(oid))
            });
    }

    /// Stages each part, sorted (the store keeps parts sorted, and the
    /// notifications look values up in them); with `publish`, the snapshot
    /// is rebuilt at once instead of within the store's window. Returns the
    /// parts as staged.
    fn stage(&self, parts: Vec<(PartKey, Part)>, publish: bool) -> Vec<Arc<Part>> {
        let staged: Vec<Arc<Part>> = parts
            .into_iter()
            .map(|(key, part)| self.store.stage(key, part))
            .collect();
        if publish {
            self.store.rebuild();
        }
        staged
    }

    /// Polls `poller` every refresh interval, each reading to the hub.
    pub async fn follow_redis(self: Arc<Self>, mut poller: Poller, shutdown: CancellationToken) {
        let mut timer = tokio::time::interval(poller.refresh());
        timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = timer.tick() => {
                    let reading = poller.poll().await;
                    self.redis(poller.index(), reading);
                }
                _ = shutdown.cancelled() => return,
            }
        }
    }

    /// Takes the events log follower's readings, until it stops or
    /// `shutdown`.
    pub async fn follow_puppet_events(
        self: Arc<Self>,
        mut readings: tokio::sync::mpsc::Receiver<Reading<EventsObservation>>,
        shutdown: CancellationToken,
    ) {
        loop {
            tokio::select! {
                reading = readings.recv() => match reading {
                    Some(reading) => self.puppet_events(reading),
                    None => return,
                },
                _ = shutdown.cancelled() => return,
            }
        }
    }

    /// Follows the Puppet watcher: each state becomes a reading; staleness
    /// and the end of a run storm are checked every quarter of the shorter
    /// of their thresholds (1 to 30 s) meanwhile.
    pub async fn follow_puppet(
        self: Arc<Self>,
        mut states: tokio::sync::watch::Receiver<Arc<PuppetState>>,
        layout: Layout,
        stale_after: Duration,
        min_run_interval: Duration,
        shutdown: CancellationToken,
    ) {
        let tick = (stale_after.min(min_run_interval) / 4)
            .clamp(Duration::from_secs(1), Duration::from_secs(30));
        let mut tick = tokio::time::interval(tick);
        // The channel's initial "nothing read yet" value counts as seen, so
        // the first change is the first real read: the notifier's baseline.
        loop {
            tokio::select! {
                changed = states.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    let state = states.borrow_and_update().clone();
                    self.puppet(puppet::objects::reading(&state, &layout), now());
                }
                _ = tick.tick() => self.puppet_tick(now()),
                _ = shutdown.cancelled() => return,
            }
        }
    }
}

/// The value at `oid` in sorted parts.
fn value_in(parts: &[Arc<Part>], oid: &Oid) -> Option<Value> {
    parts.iter().find_map(|part| {
        let at = part.binary_search_by(|(o, _)| o.cmp(oid)).ok()?;
        Some(part[at].1.clone())
    })
}

/// UNIX seconds, signed as Puppet's run times are.
fn now() -> i64 {
    i64::try_from(unix_now()).unwrap_or(i64::MAX)
}
