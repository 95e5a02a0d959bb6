//! The hub: where every source's readings go. One task ([`Hub::start`])
//! takes the one reading stream in turn: it stages a reading's parts in
//! the store, has the judge ([`crate::judge`]) and the alarms
//! ([`crate::alarms`]) say what is due, and, when something is, publishes
//! the snapshot first (a receiver that asks back must find what the
//! notification says) and sends it with the values of the reading itself.
//! The task owns the judge, the alarms and the notifier: no lock. Sources
//! know nothing of the store, the judge, the notifier or each other; each
//! runs its own loop and sends on the stream ([`Hands::readings`]).
//!
//! ```text
//!  redis::poller (Poller::run: a task per instance) ──────┐
//!  puppet::watcher (spawn_readings: states, ticks) ──────┤ Reading<Observation>
//!  puppet::events (a thread) ─────────────────────────────┴──▶ Hub::run ─stage─▶ snapshot::Store
//!  reload (Forget, Alarms, through Hands) ─Command────────────▶    │ judge, alarms
//!                                                                  └─due─▶ notify::Notifier ─▶ AgentX session
//! ```

use crate::alarms::{AlarmEvent, AlarmSpec, Alarms};
use crate::judge::{Judge, Observation};
use crate::notify::Notifier;
use crate::oid::Oid;
use crate::redis::poller::Poller;
use crate::reload::Instances;
use crate::smi::{unix_now, Value};
use crate::snapshot::{Part, PartKey, Reading, Store};
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Readings the stream holds while the hub is busy; a source waits beyond.
const STREAM_DEPTH: usize = 256;

/// What the supervisor (a reload) asks of the hub, answered on `done`
/// once done.
enum Command {
    /// Instance `index` was removed (its task has ended).
    Forget {
        index: u32,
        done: oneshot::Sender<()>,
    },
    /// The alarms in force become `specs`.
    Alarms {
        specs: Vec<AlarmSpec>,
        done: oneshot::Sender<()>,
    },
}

pub struct Hub {
    store: Arc<Store>,
    notifier: Notifier,
    judge: Judge,
    alarms: Alarms,
    /// Instances removed from the configuration: their readings still on
    /// the stream are dropped (an index is never used again).
    forgotten: HashSet<u32>,
    /// The parts of Puppet's last reading, as staged: what a notification
    /// of the time passing carries.
    puppet: Vec<Arc<Part>>,
    /// The parts of each instance's last poll, as staged: the name an
    /// alarm rearmed by a reload or a removal is sent with.
    redis: HashMap<u32, Vec<Arc<Part>>>,
}

/// What the hub's task is reached by: the reading stream, for the
/// sources, and the supervisor's commands.
#[derive(Clone)]
pub struct Hands {
    readings: mpsc::Sender<Reading<Observation>>,
    commands: mpsc::Sender<Command>,
    shutdown: CancellationToken,
}

impl Hands {
    /// The stream a source sends its readings on.
    pub fn readings(&self) -> mpsc::Sender<Reading<Observation>> {
        self.readings.clone()
    }

    /// Asks the hub's task for `command`, and waits until it is done (or
    /// the task is gone, at shutdown).
    async fn ask(&self, command: impl FnOnce(oneshot::Sender<()>) -> Command) {
        let (done, answer) = oneshot::channel();
        if self.commands.send(command(done)).await.is_ok() {
            let _ = answer.await;
        }
    }
}

impl Instances for Hands {
    fn start(&self, poller: Poller) -> JoinHandle<()> {
        tokio::spawn(poller.run(self.readings(), self.shutdown.clone()))
    }

    fn forget(&self, index: u32) -> impl Future<Output = ()> {
        self.ask(move |done| Command::Forget { index, done })
    }

    fn reconfigure(&self, specs: &[AlarmSpec]) -> impl Future<Output = ()> {
        let specs = specs.to_vec();
        self.ask(move |done| Command::Alarms { specs, done })
    }
}

impl Hub {
    pub fn new(store: Arc<Store>, notifier: Notifier, judge: Judge, alarms: Alarms) -> Hub {
        Hub {
            store,
            notifier,
            judge,
            alarms,
            forgotten: HashSet::new(),
            puppet: Vec::new(),
            redis: HashMap::new(),
        }
    }

    /// Starts the hub's task, until `shutdown`; returns its [`Hands`].
    pub fn start(self, shutdown: CancellationToken) -> Hands {
        let (readings, readings_rx) = mpsc::channel(STREAM_DEPTH);
        let (commands, commands_rx) = mpsc::channel(4);
        tokio::spawn(self.run(readings_rx, commands_rx, shutdown.clone()));
        Hands {
            readings,
            commands,
            shutdown,
        }
    }

    async fn run(
        mut self,
        mut readings: mpsc::Receiver<Reading<Observation>>,
        mut commands: mpsc::Receiver<Command>,
        shutdown: CancellationToken,
    ) {
        loop {
            tokio::select! {
                Some(reading) = readings.recv() => self.take(reading),
                Some(command) = commands.recv() => match command {
                    Command::Forget { index, done } => {
                        self.forget_redis(index);
                        let _ = done.send(());
                    }
                    Command::Alarms { specs, done } => {
                        self.reconfigure_alarms(&specs);
                        let _ = done.send(());
                    }
                },
                _ = shutdown.cancelled() => return,
                else => return,
            }
        }
    }

    /// Takes a reading of any source: stages its parts, judges its
    /// observation (and a poll's values against the alarms, whose rows of
    /// `redisAlarmTable` are staged with the reading's parts), publishes
    /// the snapshot at once if anything is due, and sends it with the
    /// reading's own values.
    pub fn take(&mut self, reading: Reading<Observation>) {
        let Reading { parts, observation } = reading;
        match observation {
            Observation::Redis { index, .. } if self.forgotten.contains(&index) => {}
            Observation::Redis { index, ref seen } => {
                let due = self.judge.due(&observation);
                let mut parts = self.stage(parts, false);
                self.notifier.settle_raises(index);
                let views: Vec<&[(Oid, Value)]> = parts.iter().map(|p| p.as_slice()).collect();
                let alarms = self.alarms.evaluate(index, seen.up, &views, unix_now());
                parts.push(self.store.stage(PartKey::RedisAlarms(index), alarms.rows));
                if !due.is_empty() || !alarms.events.is_empty() {
                    self.store.rebuild();
                }
                for (notification, about) in due {
                    self.notifier
                        .send(notification, about, |oid| value_in(&parts, oid));
                }
                for event in &alarms.events {
                    send_alarm(&mut self.notifier, index, event, |oid| {
                        value_in(&parts, oid)
                    });
                }
                self.redis.insert(index, parts);
            }
            Observation::PuppetTick { .. } => {
                // A flood of resource notifications that is over is
                // counted in the log.
                self.notifier.settle_resources();
                let due = self.judge.due(&observation);
                // The certificates' seconds left, counted down (a tick
                // carries Puppet's part again only then).
                if !parts.is_empty() {
                    self.puppet = self.stage(parts, !due.is_empty());
                }
                // Staleness and the end of a run storm carry Puppet's
                // values as last read.
                let puppet = &self.puppet;
                for (notification, about) in due {
                    self.notifier
                        .send(notification, about, |oid| value_in(puppet, oid));
                }
            }
            // A state of Puppet's files; new lines of its events log, each
            // resource notification with its row of `puppetEventTable`.
            Observation::Puppet { .. } | Observation::PuppetEvents(_) => {
                let due = self.judge.due(&observation);
                let parts = self.stage(parts, !due.is_empty());
                for (notification, about) in due {
                    self.notifier
                        .send(notification, about, |oid| value_in(&parts, oid));
                }
                if matches!(observation, Observation::Puppet { .. }) {
                    self.puppet = parts;
                }
            }
        }
    }

    /// Instance `index` was removed from the configuration (its task has
    /// ended): its rows leave the snapshot at once, the judge and the
    /// notifier forget it, and its readings still on the stream are
    /// dropped. Its raised alarms are rearmed, sent while its name is
    /// still there.
    fn forget_redis(&mut self, index: u32) {
        self.forgotten.insert(index);
        let rearmed = self.alarms.forget(index);
        self.judge.forget_redis(index);
        self.notifier.forget_redis(index);
        let parts = self.redis.remove(&index).unwrap_or_default();
        for event in rearmed {
            send_alarm(&mut self.notifier, index, &event, |oid| {
                value_in(&parts, oid)
            });
        }
        self.store.stage(PartKey::RedisInstance(index), Vec::new());
        self.store.stage(PartKey::RedisStatus(index), Vec::new());
        self.store.stage(PartKey::RedisAlarms(index), Vec::new());
        self.store.rebuild();
    }

    /// The alarms in force become `specs` (a reload, SIGHUP): see
    /// [`Alarms::reconfigure`]. An instance whose raised alarms were
    /// removed or changed has its rows of `redisAlarmTable` staged again at
    /// once, then their rearms sent with its name as its last poll gave it.
    fn reconfigure_alarms(&mut self, specs: &[AlarmSpec]) {
        let changed = self.alarms.reconfigure(specs);
        if changed.is_empty() {
            return;
        }
        for (index, evaluation) in &changed {
            self.store
                .stage(PartKey::RedisAlarms(*index), evaluation.rows.clone());
        }
        self.store.rebuild();
        for (index, evaluation) in changed {
            let parts = self.redis.get(&index).map(Vec::as_slice).unwrap_or(&[]);
            for event in &evaluation.events {
                send_alarm(&mut self.notifier, index, event, |oid| value_in(parts, oid));
            }
        }
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
}

/// Sends the notification of an alarm of instance `index` raised or
/// rearmed: the columns of its row valued from the event (which holds the
/// row even once it is gone), `redisInstanceName` by `value`.
fn send_alarm(
    notifier: &mut Notifier,
    index: u32,
    event: &AlarmEvent,
    value: impl Fn(&Oid) -> Option<Value>,
) {
    notifier.send(event.notification(), event.about(index), |oid| {
        event.value(oid).or_else(|| value(oid))
    });
}

/// The value at `oid` in sorted parts.
fn value_in(parts: &[Arc<Part>], oid: &Oid) -> Option<Value> {
    parts.iter().find_map(|part| {
        let at = part.binary_search_by(|(o, _)| o.cmp(oid)).ok()?;
        Some(part[at].1.clone())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Layout, RedisEvent, Role};
    use crate::notify::testing::{notifier_with, sent};
    use crate::redis::observation::RedisObservation;

    /// A hub whose notifier is `notifier`, over a store of its own; its
    /// judge and alarms by the notifier's settings.
    fn hub_of(notifier: Notifier) -> Hub {
        let layout = Layout::default_layout();
        let store = Arc::new(Store::new(layout.object_oids()));
        let judge = Judge::of(notifier.config());
        let alarms = Alarms::new(&notifier.config().alarms, &layout);
        Hub::new(store, notifier, judge, alarms)
    }

    fn obs(up: bool, run_id: &str, role: &str) -> RedisObservation {
        RedisObservation {
            up,
            run_id: Some(run_id.into()),
            role: Role::from_label(role),
            link: None,
            persistence_failed: Some(false),
            certificate_expiring: None,
            ..RedisObservation::default()
        }
    }

    /// A poll of instance `index` that saw `seen`, with no values.
    fn observed(hub: &mut Hub, index: u32, seen: &RedisObservation) {
        hub.take(Reading {
            parts: Vec::new(),
            observation: Observation::Redis {
                index,
                seen: seen.clone(),
            },
        });
    }

    /// A poll of instance `index`, up, whose values are `part`.
    fn polled(hub: &mut Hub, index: u32, part: Part) {
        hub.take(Reading {
            parts: vec![(PartKey::RedisInstance(index), part)],
            observation: Observation::Redis {
                index,
                seen: obs(true, "a", "master"),
            },
        });
    }

    #[test]
    fn a_forgotten_instance_leaves_no_baseline_and_no_rate_limit_and_its_readings_are_dropped() {
        let (notifier, mut rx) = notifier_with(|c| {
            c.max_per_minute = 1;
        });
        let mut hub = hub_of(notifier);
        let up = obs(true, "a", "master");
        for index in [1, 2] {
            observed(&mut hub, index, &up);
            observed(&mut hub, index, &RedisObservation::down());
        }
        assert_eq!(sent(&mut rx), ["redisInstanceDown", "redisInstanceDown"]);
        hub.forget_redis(2);
        assert!(!hub.judge.knows_redis(2) && hub.judge.knows_redis(1));
        assert_eq!(hub.notifier.limited_sources(), [1]);
        // Instance 1 is still judged and limited (its second Down within
        // the minute is dropped); 2's readings, still on the stream when
        // it was removed, are dropped: no notification, no row.
        for index in [1, 2] {
            observed(&mut hub, index, &up);
            observed(&mut hub, index, &RedisObservation::down());
        }
        polled(&mut hub, 2, Vec::new());
        assert_eq!(sent(&mut rx), ["redisInstanceUp"]);
        assert!(!hub.judge.knows_redis(2));
    }

    #[test]
    fn baseline_rate_limit_and_disabled() {
        let (notifier, mut rx) = notifier_with(|c| {
            c.disabled = [RedisEvent::RoleChanged.into()].into_iter().collect();
            c.max_per_minute = 2;
        });
        let mut hub = hub_of(notifier);
        let up = obs(true, "a", "master");
        observed(&mut hub, 1, &RedisObservation::down()); // baseline: silent
        for _ in 0..5 {
            observed(&mut hub, 1, &up);
            observed(&mut hub, 1, &RedisObservation::down());
        }
        observed(&mut hub, 1, &obs(true, "a", "slave"));
        // Two Ups and two Downs pass the limit of 2 a minute; RoleChanged is off.
        assert_eq!(
            sent(&mut rx),
            [
                "redisInstanceUp",
                "redisInstanceDown",
                "redisInstanceUp",
                "redisInstanceDown"
            ]
        );
    }

    #[test]
    fn alarm_notifications_carry_the_row_and_the_instance_name_and_pair_under_their_ceiling() {
        let layout = Layout::default_layout();
        // Raised at 90 % on one poll, rearmed at 85 %.
        let memory = || crate::alarms::memory_alarm(1);
        let (notifier, mut rx) = notifier_with(|c| {
            c.max_per_minute = 1;
            c.alarms = vec![memory()];
        });
        let mut hub = hub_of(notifier);
        let oid = |name: &str, suffix: &[u32]| {
            let def = crate::metrics::redis_objects()
                .find(|o| o.name == name)
                .unwrap();
            layout.row_oid(def, suffix).unwrap()
        };
        let name_oid = oid("redisInstanceName", &[4]);
        // used_memory 1043392 of maxmemory 1100000 (94.85 %), then 80 %.
        let mut poll = |hundredths: u32| {
            let part = vec![
                (name_oid.clone(), Value::text("cache")),
                (oid("redisMemUsedOfMax", &[4]), Value::Gauge32(hundredths)),
            ];
            polled(&mut hub, 4, part);
        };
        // Three raises and rearms in a minute: none is held back
        // (max_per_minute is not theirs).
        for _ in 0..3 {
            poll(9485);
            poll(8000);
        }
        assert_eq!(
            sent(&mut rx),
            [
                "redisThresholdCrossed",
                "redisThresholdRearmed",
                "redisThresholdCrossed",
                "redisThresholdRearmed",
                "redisThresholdCrossed",
                "redisThresholdRearmed"
            ]
        );
        poll(9485);
        let varbinds = rx.try_recv().unwrap();
        // The fourth raise is alarm number 4 of instance 4: numbers are not
        // reused at once.
        assert_eq!(varbinds[1], (name_oid, Value::text("cache")));
        assert_eq!(
            varbinds[2],
            (oid("redisAlarmName", &[4, 4]), Value::text("memory"))
        );
        assert!(
            varbinds.contains(&(oid("redisAlarmRaisedValue", &[4, 4]), Value::text("9485"))),
            "{varbinds:?}"
        );
        assert_eq!(
            varbinds.len(),
            1 + RedisEvent::ThresholdCrossed.def().objects.len()
        );
        // A flood of raises: at most alarm_raises_per_minute a minute, and
        // a held raise holds its rearm back; the rest pair up.
        let (notifier, mut rx) = notifier_with(|c| {
            c.alarm_raises_per_minute = 2;
            c.alarms = vec![memory()];
        });
        let mut flooded = hub_of(notifier);
        for _ in 0..10 {
            for hundredths in [9485, 8000] {
                let part = vec![(oid("redisMemUsedOfMax", &[2]), Value::Gauge32(hundredths))];
                polled(&mut flooded, 2, part);
            }
        }
        assert_eq!(
            sent(&mut rx),
            [
                "redisThresholdCrossed",
                "redisThresholdRearmed",
                "redisThresholdCrossed",
                "redisThresholdRearmed"
            ]
        );
        assert!(flooded.notifier.holds_no_raise());
        // Disabled, it is not sent; the alarm is still judged.
        let (notifier, mut rx) = notifier_with(|c| {
            c.disabled = [RedisEvent::ThresholdCrossed.into()].into_iter().collect();
        });
        let mut quiet = hub_of(notifier);
        let part = vec![(oid("redisCliUsedOfMax", &[1]), Value::Gauge32(9900))];
        for _ in 0..2 {
            polled(&mut quiet, 1, part.clone());
        }
        assert!(sent(&mut rx).is_empty());
    }

    #[test]
    fn a_tick_carries_puppets_values_as_last_read() {
        use crate::metrics::{About, PuppetEvent};
        use crate::puppet::observation::PuppetObservation;
        let (notifier, mut rx) = notifier_with(|c| {
            c.puppet_stale_after = std::time::Duration::from_secs(3600);
        });
        let mut hub = hub_of(notifier);
        let layout = Layout::default_layout();
        let carried = &PuppetEvent::AgentStale.def().objects[0];
        let oid = layout.carried_oid(carried, About::PUPPET).unwrap();
        let t = 1_795_336_000;
        let seen = PuppetObservation {
            last_run: Some(t),
            status: Some(crate::puppet::RunStatus::Unchanged),
            ..PuppetObservation::default()
        };
        hub.take(Reading {
            parts: vec![(PartKey::Puppet, vec![(oid.clone(), Value::Integer(7))])],
            observation: Observation::Puppet { seen, now: t },
        });
        for now in [t + 3599, t + 3601] {
            hub.take(Reading {
                parts: Vec::new(),
                observation: Observation::PuppetTick { now },
            });
        }
        let varbinds = rx.try_recv().unwrap();
        assert!(varbinds.contains(&(oid, Value::Integer(7))), "{varbinds:?}");
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn a_removed_instance_has_its_alarm_rearmed_with_its_name_and_its_rows_gone() {
        let layout = Layout::default_layout();
        let (notifier, mut rx) = notifier_with(|c| {
            c.alarms = vec![crate::alarms::memory_alarm(1)];
        });
        let mut hub = hub_of(notifier);
        let oid = |name: &str| {
            let def = crate::metrics::redis_objects()
                .find(|o| o.name == name)
                .unwrap();
            layout.row_oid(def, &[3]).unwrap()
        };
        let name = (oid("redisInstanceName"), Value::text("cache"));
        let used = (oid("redisMemUsedOfMax"), Value::Gauge32(9485));
        polled(&mut hub, 3, vec![name.clone(), used]);
        assert_eq!(sent(&mut rx), ["redisThresholdCrossed"]);
        assert!(hub.store.latest_value(&name.0).is_some());
        hub.forget_redis(3);
        let rearm = rx.try_recv().unwrap();
        assert!(rearm.contains(&name), "{rearm:?}");
        assert!(hub.store.load().iter().all(|(o, _)| *o != name.0));
    }
}
