//! Notifications: which transitions of a source are worth a trap, the
//! NOTIFICATION-TYPE each is, the varbinds it carries, and rate limiting.
//!
//! Sources report *observations*; the notifier compares each with the last
//! one of the same source, so the first observation after start-up is the
//! baseline and never fires. Varbind values are read back from the parts
//! the source just staged, so a trap carries exactly what a GET returns once
//! the snapshot catches up (within the store's coalescing window).

use crate::agentx::session::Notification;
use crate::metrics;
use crate::metrics::Layout;
use crate::oid::Oid;
use crate::smi::Value;
use crate::snapshot::Store;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tracing::{debug, warn};

/// snmpTrapOID.0 (SNMPv2-MIB), the first varbind of every notification.
pub const SNMP_TRAP_OID: &[u32] = &[1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0];

/// Arc of the notifications below the module root (`redis.0.N`).
pub const NOTIFICATIONS_BRANCH: u32 = 0;

/// Which MIB module a notification (and its objects) belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mib {
    /// REDIS-SERVER-MIB: per-instance objects, sent with the instance index.
    Redis,
    /// PUPPET-AGENT-MIB: scalars, sent with `.0`.
    Puppet,
}

/// One NOTIFICATION-TYPE: its name, its number below the module's `.0`
/// branch, and the objects (by MIB name) it carries.
#[derive(Debug, Clone, Copy)]
pub struct NotificationDef {
    pub name: &'static str,
    pub number: u32,
    pub objects: &'static [&'static str],
    pub mib: Mib,
}

const fn def(name: &'static str, number: u32, objects: &'static [&'static str]) -> NotificationDef {
    NotificationDef {
        name,
        number,
        objects,
        mib: Mib::Redis,
    }
}

const fn puppet(
    name: &'static str,
    number: u32,
    objects: &'static [&'static str],
) -> NotificationDef {
    NotificationDef {
        name,
        number,
        objects,
        mib: Mib::Puppet,
    }
}

/// The notifications of REDIS-SERVER-MIB.
#[rustfmt::skip]
pub const REDIS_NOTIFICATIONS: &[NotificationDef] = &[
    def("redisInstanceDown", 1, &["redisInstanceName", "redisInstanceAddress", "redisInstanceLastError"]),
    def("redisInstanceUp", 2, &["redisInstanceName", "redisInstanceAddress"]),
    def("redisRestarted", 3, &["redisInstanceName", "redisSrvRunId", "redisSrvUptime"]),
    def("redisRoleChanged", 4, &["redisInstanceName", "redisReplRole"]),
    def("redisReplicationLinkDown", 5, &["redisInstanceName", "redisReplMasterHost", "redisReplMasterPort", "redisReplLinkStatus"]),
    def("redisReplicationLinkUp", 6, &["redisInstanceName", "redisReplMasterHost", "redisReplMasterPort", "redisReplLinkStatus"]),
    def("redisPersistenceFailed", 7, &["redisInstanceName", "redisPstBgsaveStatus", "redisPstAofWriteStatus"]),
];

/// The notifications of PUPPET-AGENT-MIB.
#[rustfmt::skip]
pub const PUPPET_NOTIFICATIONS: &[NotificationDef] = &[
    puppet("puppetRunFailed", 1, &["puppetLastRunStatus", "puppetLastRunTime", "puppetResourcesFailed", "puppetResourcesChanged", "puppetConfigVersion", "puppetFirstError"]),
    puppet("puppetRunChanged", 2, &["puppetLastRunStatus", "puppetLastRunTime", "puppetResourcesChanged", "puppetChangesTotal", "puppetConfigVersion"]),
    puppet("puppetCachedCatalogUsed", 3, &["puppetCachedCatalogStatus", "puppetLastRunTime", "puppetConfigVersion", "puppetFirstError"]),
    puppet("puppetRunRecovered", 4, &["puppetLastRunStatus", "puppetLastRunTime", "puppetConfigVersion"]),
    puppet("puppetAgentStale", 5, &["puppetLastRunTime", "puppetLastRunAge"]),
    puppet("puppetAgentStaleCleared", 6, &["puppetLastRunTime", "puppetLastRunAge"]),
    puppet("puppetAgentDisabled", 7, &["puppetDisabled", "puppetDisabledMessage"]),
    puppet("puppetAgentEnabled", 8, &["puppetDisabled"]),
];

/// Every notification the agent can send.
pub fn all_notifications() -> impl Iterator<Item = &'static NotificationDef> {
    REDIS_NOTIFICATIONS.iter().chain(PUPPET_NOTIFICATIONS)
}

/// What the Puppet files said after a change, as far as notifications
/// care.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PuppetObservation {
    /// When the last run ended (the summary's `time.last_run`).
    pub last_run: Option<i64>,
    pub status: Option<crate::puppet::RunStatus>,
    pub cached_catalog_used: bool,
    pub disabled: bool,
    /// The summary of a new run is there but its report is not yet: the run
    /// is not judged until it is (or the watcher gives up waiting).
    pub report_pending: bool,
}

impl PuppetObservation {
    pub fn from_state(state: &crate::puppet::PuppetState) -> Self {
        PuppetObservation {
            last_run: state.last_run(),
            status: state.summary.as_ref().map(|_| state.run_status()),
            cached_catalog_used: state.cached_catalog_used(),
            disabled: state.disabled.is_some(),
            report_pending: state.report_pending,
        }
    }
}

/// What the notifier remembers of Puppet between observations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct PuppetKnown {
    last_run: Option<i64>,
    status: Option<crate::puppet::RunStatus>,
    disabled: bool,
    stale: bool,
}

/// The notifications due for a Puppet observation. A new run is one whose
/// end time differs from the last judged one.
fn puppet_transitions(known: &PuppetKnown, seen: &PuppetObservation) -> Vec<&'static str> {
    use crate::puppet::RunStatus;
    let mut due = Vec::new();
    if seen.last_run.is_some() && seen.last_run != known.last_run && !seen.report_pending {
        match seen.status {
            Some(RunStatus::Failed) => due.push("puppetRunFailed"),
            Some(RunStatus::Changed) => due.push("puppetRunChanged"),
            _ => {}
        }
        if seen.cached_catalog_used {
            due.push("puppetCachedCatalogUsed");
        }
        if known.status == Some(RunStatus::Failed)
            && seen.status.is_some_and(|s| s != RunStatus::Failed)
        {
            due.push("puppetRunRecovered");
        }
        if known.stale {
            due.push("puppetAgentStaleCleared");
        }
    }
    match (known.disabled, seen.disabled) {
        (false, true) => due.push("puppetAgentDisabled"),
        (true, false) => due.push("puppetAgentEnabled"),
        _ => {}
    }
    due
}

/// What one poll saw of an instance, as far as notifications care. Fields
/// are `None` when the poll could not tell (the instance is down, or the
/// server does not report them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RedisObservation {
    pub up: bool,
    pub run_id: Option<String>,
    pub role: Option<String>,
    /// `master_link_status` of a replica.
    pub link: Option<String>,
    /// A failed background save or AOF write.
    pub persistence_failed: Option<bool>,
}

impl RedisObservation {
    pub fn from_info(info: &crate::redis::info::Info) -> Self {
        let text = |field: &str| info.get(field).map(|v| v.trim().to_string());
        let failed = |field: &str| info.get(field).map(|v| v.trim() == "err");
        let persistence_failed = match (
            failed("rdb_last_bgsave_status"),
            failed("aof_last_write_status"),
        ) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(false) || b.unwrap_or(false)),
        };
        RedisObservation {
            up: true,
            run_id: text("run_id"),
            role: text("role"),
            link: text("master_link_status"),
            persistence_failed,
        }
    }

    pub fn down() -> Self {
        RedisObservation::default()
    }
}

/// The notifications due between two observations of one instance. `before`
/// holds the last *known* values (kept while the instance was down), so a
/// restart behind an outage still shows as a new run id.
pub fn redis_transitions(before: &RedisObservation, after: &RedisObservation) -> Vec<&'static str> {
    let mut due = Vec::new();
    match (before.up, after.up) {
        (true, false) => due.push("redisInstanceDown"),
        (false, true) => due.push("redisInstanceUp"),
        _ => {}
    }
    let changed =
        |a: &Option<String>, b: &Option<String>| matches!((a, b), (Some(a), Some(b)) if a != b);
    if changed(&before.run_id, &after.run_id) {
        due.push("redisRestarted");
    }
    if changed(&before.role, &after.role) {
        due.push("redisRoleChanged");
    }
    match (before.link.as_deref(), after.link.as_deref()) {
        (Some("up"), Some("down")) => due.push("redisReplicationLinkDown"),
        (Some("down"), Some("up")) => due.push("redisReplicationLinkUp"),
        _ => {}
    }
    if before.persistence_failed == Some(false) && after.persistence_failed == Some(true) {
        due.push("redisPersistenceFailed");
    }
    due
}

/// Keeps the last known values: fields a new observation cannot tell (None)
/// keep their old value.
fn remember(known: &mut RedisObservation, seen: &RedisObservation) {
    known.up = seen.up;
    for (slot, new) in [
        (&mut known.run_id, &seen.run_id),
        (&mut known.role, &seen.role),
        (&mut known.link, &seen.link),
    ] {
        if new.is_some() {
            slot.clone_from(new);
        }
    }
    if seen.persistence_failed.is_some() {
        known.persistence_failed = seen.persistence_failed;
    }
}

/// Settings of the notifier.
#[derive(Debug, Clone)]
pub struct NotifyConfig {
    /// Names of notifications not to send.
    pub disabled: HashSet<String>,
    /// At most this many notifications of one kind from one source per
    /// minute; the rest are dropped (and counted in the log).
    pub max_per_minute: usize,
    /// Puppet is stale when its last run ended longer ago than this.
    pub puppet_stale_after: Duration,
}

impl Default for NotifyConfig {
    fn default() -> Self {
        NotifyConfig {
            disabled: HashSet::new(),
            max_per_minute: 5,
            puppet_stale_after: Duration::from_secs(2 * 3600),
        }
    }
}

/// Turns observations into Notify PDUs for the AgentX session.
pub struct Notifier {
    config: NotifyConfig,
    layout: Layout,
    store: Arc<Store>,
    tx: mpsc::Sender<Notification>,
    state: Mutex<NotifierState>,
}

#[derive(Default)]
struct NotifierState {
    /// Last known observation per Redis instance.
    redis: HashMap<u32, RedisObservation>,
    /// What was judged of Puppet; `None` until the first observation.
    puppet: Option<PuppetKnown>,
    /// Send times per (notification, source), for the rate limit.
    sent: HashMap<(&'static str, u32), VecDeque<Instant>>,
    /// How many were dropped by the rate limit since it last let one pass.
    suppressed: HashMap<(&'static str, u32), u64>,
}

const RATE_WINDOW: Duration = Duration::from_secs(60);

impl Notifier {
    pub fn new(
        config: NotifyConfig,
        layout: Layout,
        store: Arc<Store>,
        tx: mpsc::Sender<Notification>,
    ) -> Self {
        Notifier {
            config,
            layout,
            store,
            tx,
            state: Mutex::new(NotifierState::default()),
        }
    }

    /// Instance `index` was just polled (and its parts published).
    pub fn redis_observed(&self, index: u32, seen: &RedisObservation) {
        let due = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            match state.redis.get_mut(&index) {
                // The first observation is the baseline.
                None => {
                    state.redis.insert(index, seen.clone());
                    Vec::new()
                }
                Some(known) => {
                    let due = redis_transitions(known, seen);
                    remember(known, seen);
                    due
                }
            }
        };
        for name in due {
            self.send(name, index);
        }
    }

    /// The Puppet files changed (or were read for the first time: the
    /// baseline, which judges no run but one still waiting for its report).
    pub fn puppet_observed(&self, seen: &PuppetObservation, now_unix: i64) {
        let due = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let stale = self.is_stale(seen.last_run, now_unix);
            match state.puppet.as_mut() {
                None => {
                    state.puppet = Some(PuppetKnown {
                        last_run: if seen.report_pending {
                            None
                        } else {
                            seen.last_run
                        },
                        status: seen.status,
                        disabled: seen.disabled,
                        stale,
                    });
                    Vec::new()
                }
                Some(known) => {
                    let due = puppet_transitions(known, seen);
                    if !seen.report_pending && seen.last_run.is_some() {
                        known.last_run = seen.last_run;
                        known.status = seen.status;
                        known.stale = stale;
                    }
                    known.disabled = seen.disabled;
                    due
                }
            }
        };
        for name in due {
            self.send(name, 0);
        }
    }

    /// Called now and then: Puppet turns stale when no run ended within
    /// `puppet_stale_after`.
    pub fn puppet_tick(&self, now_unix: i64) {
        let due = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let Some(known) = state.puppet.as_mut() else {
                return;
            };
            let stale = self.is_stale(known.last_run, now_unix);
            let due = (stale && !known.stale).then_some("puppetAgentStale");
            known.stale = stale;
            due
        };
        if let Some(name) = due {
            self.send(name, 0);
        }
    }

    fn is_stale(&self, last_run: Option<i64>, now_unix: i64) -> bool {
        let limit = i64::try_from(self.config.puppet_stale_after.as_secs()).unwrap_or(i64::MAX);
        last_run.is_some_and(|t| now_unix.saturating_sub(t) > limit)
    }

    fn send(&self, name: &'static str, index: u32) {
        if self.config.disabled.contains(name) || !self.allowed(name, index) {
            return;
        }
        let Some(def) = all_notifications().find(|d| d.name == name) else {
            return;
        };
        let varbinds = self.varbinds(def, index);
        // A receiver that reacts by asking the agent must find what the
        // notification says: publish the staged parts before it goes out.
        self.store.rebuild();
        match self.tx.try_send(varbinds) {
            Ok(()) => debug!("queued {name} for source {index}"),
            Err(e) => warn!(
                "dropped {name} for source {index}: the AgentX session is not taking notifications ({e})"
            ),
        }
    }

    /// The rate limit: at most `max_per_minute` of one kind per source.
    fn allowed(&self, name: &'static str, index: u32) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let sent = state.sent.entry((name, index)).or_default();
        while sent
            .front()
            .is_some_and(|t| now.duration_since(*t) > RATE_WINDOW)
        {
            sent.pop_front();
        }
        if sent.len() >= self.config.max_per_minute {
            let count = state.suppressed.entry((name, index)).or_default();
            *count += 1;
            if *count == 1 {
                warn!(
                    "{name} for instance {index} is flapping: at most {} a minute are sent",
                    self.config.max_per_minute
                );
            }
            return false;
        }
        sent.push_back(now);
        if let Some(dropped) = state.suppressed.remove(&(name, index)) {
            warn!("{name} for instance {index}: {dropped} notification(s) were dropped by the rate limit");
        }
        true
    }

    /// snmpTrapOID.0, then each object of the notification (for this
    /// instance), as the source just staged it (absent objects are left out).
    fn varbinds(&self, def: &NotificationDef, index: u32) -> Notification {
        let (root, suffix) = match def.mib {
            Mib::Redis => (&self.layout.root, index),
            Mib::Puppet => (&self.layout.puppet, 0),
        };
        let trap_oid = root.child(&[NOTIFICATIONS_BRANCH, def.number]);
        let mut varbinds = vec![(oid_of(SNMP_TRAP_OID), Value::ObjectIdentifier(trap_oid))];
        for name in def.objects {
            let mut objects = metrics::redis_objects().chain(metrics::puppet_objects());
            let Some(object) = objects.find(|o| o.name == *name) else {
                continue;
            };
            let oid = self.layout.object_oid(object).child(&[suffix]);
            if let Some(value) = self.store.latest_value(&oid) {
                varbinds.push((oid, value));
            }
        }
        varbinds
    }
}

fn oid_of(arcs: &[u32]) -> Oid {
    Oid::null().child(arcs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(
        up: bool,
        run_id: &str,
        role: &str,
        link: Option<&str>,
        failed: Option<bool>,
    ) -> RedisObservation {
        RedisObservation {
            up,
            run_id: Some(run_id.into()),
            role: Some(role.into()),
            link: link.map(Into::into),
            persistence_failed: failed,
        }
    }

    #[test]
    fn transitions_between_observations() {
        let master = obs(true, "a", "master", None, Some(false));
        assert!(redis_transitions(&master, &master).is_empty());
        assert_eq!(
            redis_transitions(&master, &RedisObservation::down()),
            ["redisInstanceDown"]
        );
        let restarted_as_replica = obs(true, "b", "slave", Some("up"), Some(false));
        assert_eq!(
            redis_transitions(
                &obs(false, "a", "master", None, Some(false)),
                &restarted_as_replica
            ),
            ["redisInstanceUp", "redisRestarted", "redisRoleChanged"]
        );
        let link_down = obs(true, "b", "slave", Some("down"), Some(false));
        assert_eq!(
            redis_transitions(&restarted_as_replica, &link_down),
            ["redisReplicationLinkDown"]
        );
        assert_eq!(
            redis_transitions(&link_down, &restarted_as_replica),
            ["redisReplicationLinkUp"]
        );
        let failing = obs(true, "a", "master", None, Some(true));
        assert_eq!(
            redis_transitions(&master, &failing),
            ["redisPersistenceFailed"]
        );
        assert!(redis_transitions(&failing, &failing).is_empty());
    }

    #[test]
    fn known_values_survive_an_outage() {
        let mut known = obs(true, "a", "master", None, Some(false));
        remember(&mut known, &RedisObservation::down());
        assert!(!known.up);
        assert_eq!(known.run_id.as_deref(), Some("a"));
        let back = obs(true, "b", "master", None, Some(false));
        assert_eq!(
            redis_transitions(&known, &back),
            ["redisInstanceUp", "redisRestarted"]
        );
    }

    #[test]
    fn observation_from_real_info() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/redis/7.0-replica-info.txt"
        ))
        .unwrap();
        let seen = RedisObservation::from_info(&crate::redis::info::Info::parse(&text));
        assert_eq!(seen.role.as_deref(), Some("slave"));
        assert_eq!(seen.link.as_deref(), Some("up"));
        assert_eq!(seen.persistence_failed, Some(false));
    }

    #[test]
    fn every_notification_object_is_served() {
        for def in REDIS_NOTIFICATIONS {
            for name in def.objects {
                assert!(
                    metrics::redis_objects().any(|o| o.name == *name),
                    "{}: {name}",
                    def.name
                );
            }
        }
        for def in PUPPET_NOTIFICATIONS {
            for name in def.objects {
                assert!(
                    metrics::puppet_objects().any(|o| o.name == *name),
                    "{}: {name}",
                    def.name
                );
            }
        }
    }

    fn run(last_run: i64, status: crate::puppet::RunStatus) -> PuppetObservation {
        PuppetObservation {
            last_run: Some(last_run),
            status: Some(status),
            ..PuppetObservation::default()
        }
    }

    #[tokio::test]
    async fn puppet_runs_disable_and_staleness() {
        use crate::puppet::RunStatus::*;
        let layout = Layout::default_layout();
        let store = Arc::new(Store::new(layout.object_oids()));
        let (tx, mut rx) = mpsc::channel(100);
        let config = NotifyConfig {
            puppet_stale_after: Duration::from_secs(3600),
            ..NotifyConfig::default()
        };
        let notifier = Notifier::new(config, layout, store, tx);
        let t = 1_795_336_000;
        notifier.puppet_observed(&run(t, Failed), t); // baseline: an old failure does not fire
        notifier.puppet_observed(&run(t, Failed), t + 5); // same run again: nothing
        let mut pending = run(t + 100, Changed);
        pending.report_pending = true;
        notifier.puppet_observed(&pending, t + 100); // waits for the report
        notifier.puppet_observed(&run(t + 100, Changed), t + 101); // changed, and recovered
        notifier.puppet_observed(&run(t + 200, Failed), t + 200);
        let disabled = PuppetObservation {
            disabled: true,
            ..run(t + 200, Failed)
        };
        notifier.puppet_observed(&disabled, t + 201);
        notifier.puppet_tick(t + 200 + 3599);
        notifier.puppet_tick(t + 200 + 3601); // stale now
        notifier.puppet_tick(t + 200 + 3700); // still stale: once only
        notifier.puppet_observed(&run(t + 9000, Unchanged), t + 9000); // enabled, recovered, fresh
        let mut names = Vec::new();
        while let Ok(varbinds) = rx.try_recv() {
            let Value::ObjectIdentifier(trap) = &varbinds[0].1 else {
                panic!()
            };
            let number = trap.as_slice().last().copied().unwrap();
            names.push(
                PUPPET_NOTIFICATIONS
                    .iter()
                    .find(|d| d.number == number)
                    .unwrap()
                    .name,
            );
        }
        assert_eq!(
            names,
            [
                "puppetRunChanged",
                "puppetRunRecovered",
                "puppetRunFailed",
                "puppetAgentDisabled",
                "puppetAgentStale",
                "puppetRunRecovered",
                "puppetAgentStaleCleared",
                "puppetAgentEnabled",
            ]
        );
    }

    #[tokio::test]
    async fn baseline_rate_limit_and_disabled() {
        let layout = Layout::default_layout();
        let store = Arc::new(Store::new(layout.object_oids()));
        let (tx, mut rx) = mpsc::channel(100);
        let config = NotifyConfig {
            disabled: ["redisRoleChanged".to_string()].into_iter().collect(),
            max_per_minute: 2,
            ..NotifyConfig::default()
        };
        let notifier = Notifier::new(config, layout, store, tx);
        let up = obs(true, "a", "master", None, Some(false));
        notifier.redis_observed(1, &RedisObservation::down()); // baseline: silent
        for _ in 0..5 {
            notifier.redis_observed(1, &up);
            notifier.redis_observed(1, &RedisObservation::down());
        }
        notifier.redis_observed(1, &obs(true, "a", "slave", None, Some(false)));
        let mut names = Vec::new();
        while let Ok(varbinds) = rx.try_recv() {
            let Value::ObjectIdentifier(trap) = &varbinds[0].1 else {
                panic!()
            };
            names.push(trap.to_string());
        }
        // Two Ups and two Downs pass the limit of 2 a minute; RoleChanged is off.
        assert_eq!(
            names,
            [
                ".1.3.6.1.4.1.20267.400.0.2",
                ".1.3.6.1.4.1.20267.400.0.1",
                ".1.3.6.1.4.1.20267.400.0.2",
                ".1.3.6.1.4.1.20267.400.0.1"
            ]
        );
    }
}
