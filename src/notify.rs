//! Notifications: which transitions of a source are worth a trap, and
//! sending them: the switches, the rate limits and the varbinds.
//!
//! Sources report *observations* ([`RedisObservation`],
//! [`PuppetObservation`]); the notifier compares each with the last one of
//! the same source (the first after start-up is the baseline and never
//! fires) and says which notifications are due, as typed values
//! ([`RedisEvent`], [`PuppetEvent`], declared in the catalogue with their
//! objects and limits: `metrics::notifications`). The hub
//! ([`crate::hub`]) then asks it to send each with what it is [`About`]
//! and the values of the reading that caused it, so a trap carries exactly
//! what a GET returns. [`Notifier::send`] reads everything else from the
//! notification's definition: whether `[notifications] disabled` names
//! it, its [`Limit`], its objects and the instance each is sent with; a
//! new notification needs nothing here but the transition that makes it
//! due. What is sent and dropped is counted in [`limits`]: a ceiling a
//! minute per kind and source, one for the events log's resource
//! notifications together, and the notifications the AgentX session did
//! not take, each said in the log once.

pub mod limits;

use crate::agentx::session;
use crate::alarms::{AlarmEvent, AlarmSpec, Alarms, Evaluation};
use crate::config::NotifyConfig;
use crate::metrics::{
    About, Layout, Limit, Notification, PuppetEvent, RedisEvent, PUPPET_SOURCE, SNMP_TRAP_OID,
};
use crate::oid::Oid;
use crate::puppet::events::{EventItem, EventsObservation};
use crate::puppet::observation::PuppetObservation;
use crate::puppet::RunStatus;
use crate::redis::observation::RedisObservation;
use crate::smi::Value;
use limits::{Admit, Ceiling, Drops};
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tracing::{debug, warn};

/// How many runs in a row, each ending less than `min_run_interval` after
/// the one before, are a run storm: three. One run started by hand right
/// after the agent's own is not a storm; a third quick one is a pattern
/// (a kick loop, an `Exec` that re-runs Puppet).
pub const STORM_QUICK_RUNS: u32 = 2;

/// What the notifier remembers of Puppet between observations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct PuppetKnown {
    last_run: Option<i64>,
    status: Option<RunStatus>,
    disabled: bool,
    stale: bool,
    /// `puppetNotConverging` was sent (or the baseline was already so) and
    /// no run has changed nothing since.
    not_converging: bool,
    /// Runs in a row that ended less than `min_run_interval` after the one
    /// before.
    quick_runs: u32,
    /// `puppetRunStorm` was sent and not cleared.
    storm: bool,
}

/// The notifications due for a Puppet observation. A new run is one whose
/// end time differs from the last judged one.
fn puppet_transitions(
    known: &PuppetKnown,
    seen: &PuppetObservation,
    min_run_interval: Duration,
) -> Vec<PuppetEvent> {
    let mut due = Vec::new();
    if is_new_run(known, seen) {
        match seen.status {
            Some(RunStatus::Failed) => due.push(PuppetEvent::RunFailed),
            Some(RunStatus::Changed) => due.push(PuppetEvent::RunChanged),
            _ => {}
        }
        if seen.cached_catalog_used {
            due.push(PuppetEvent::CachedCatalogUsed);
        }
        if known.status == Some(RunStatus::Failed)
            && seen.status.is_some_and(|s| s != RunStatus::Failed)
        {
            due.push(PuppetEvent::RunRecovered);
        }
        if known.stale {
            due.push(PuppetEvent::AgentStaleCleared);
        }
        match (known.not_converging, seen.not_converging) {
            (false, true) => due.push(PuppetEvent::NotConverging),
            (true, false) => due.push(PuppetEvent::Converged),
            _ => {}
        }
        let quick = quick_runs(known, seen, min_run_interval);
        if !known.storm && quick >= STORM_QUICK_RUNS {
            due.push(PuppetEvent::RunStorm);
        }
        if known.storm && quick == 0 {
            due.push(PuppetEvent::RunStormCleared);
        }
    }
    match (known.disabled, seen.disabled) {
        (false, true) => due.push(PuppetEvent::AgentDisabled),
        (true, false) => due.push(PuppetEvent::AgentEnabled),
        _ => {}
    }
    due
}

/// Whether `seen` is a run not judged yet, ready to be judged (its report
/// is in, or was waited for).
fn is_new_run(known: &PuppetKnown, seen: &PuppetObservation) -> bool {
    seen.last_run.is_some() && seen.last_run != known.last_run && !seen.report_pending
}

/// The quick runs in a row once the new run `seen` is counted: one more if
/// it ended less than `min_run_interval` after the run before, else none.
fn quick_runs(known: &PuppetKnown, seen: &PuppetObservation, min_run_interval: Duration) -> u32 {
    match seen.run_interval {
        Some(secs) if secs < min_run_interval.as_secs() => known.quick_runs.saturating_add(1),
        _ => 0,
    }
}

/// The notifications due between two observations of one instance. `before`
/// holds the last *known* values (kept while the instance was down), so a
/// restart behind an outage still shows as a new run id.
pub fn redis_transitions(before: &RedisObservation, after: &RedisObservation) -> Vec<RedisEvent> {
    let mut due = Vec::new();
    match (before.up, after.up) {
        (true, false) => due.push(RedisEvent::InstanceDown),
        (false, true) => due.push(RedisEvent::InstanceUp),
        _ => {}
    }
    if matches!((&before.run_id, &after.run_id), (Some(a), Some(b)) if a != b) {
        due.push(RedisEvent::Restarted);
    }
    if matches!((before.role, after.role), (Some(a), Some(b)) if a != b) {
        due.push(RedisEvent::RoleChanged);
    }
    match (before.link_up(), after.link_up()) {
        (Some(true), Some(false)) => due.push(RedisEvent::ReplicationLinkDown),
        (Some(false), Some(true)) => due.push(RedisEvent::ReplicationLinkUp),
        _ => {}
    }
    if before.persistence_failed == Some(false) && after.persistence_failed == Some(true) {
        due.push(RedisEvent::PersistenceFailed);
    }
    match (before.certificate_expiring, after.certificate_expiring) {
        (Some(false), Some(true)) => due.push(RedisEvent::CertificateExpiring),
        (Some(true), Some(false)) => due.push(RedisEvent::CertificateExpiringCleared),
        _ => {}
    }
    due
}

/// Judges observations and sends Notify PDUs to the AgentX session.
pub struct Notifier {
    config: NotifyConfig,
    layout: Layout,
    tx: mpsc::Sender<session::Notification>,
    state: Mutex<NotifierState>,
    /// The agent's own thresholds and what each instance's values did to
    /// them.
    alarms: Mutex<Alarms>,
}

#[derive(Default)]
struct NotifierState {
    /// Last known observation per Redis instance.
    redis: HashMap<u32, RedisObservation>,
    /// What was judged of Puppet; `None` until the first observation.
    puppet: Option<PuppetKnown>,
    /// The rate limit (`max_per_minute`) per notification and source.
    limits: HashMap<(Notification, u32), Ceiling>,
    /// The ceiling of the events log's resource notifications, together
    /// (`resource_notifications_per_minute`).
    resources: Ceiling,
    /// The ceiling of each source's alarm raises, all its alarms together
    /// (`alarm_raises_per_minute`).
    raises: HashMap<u32, Ceiling>,
    /// The alarm rows (source, alarm number) whose raise was held back:
    /// their rearm is held back too. At most one per raised row, and each
    /// raised row ends in a rearm (a poll, a reload, the instance
    /// removed), which takes it out.
    held_raises: HashSet<(u32, u32)>,
    /// Notifications the AgentX session did not take.
    unsent: Drops,
}

impl Notifier {
    pub fn new(
        config: NotifyConfig,
        layout: Layout,
        tx: mpsc::Sender<session::Notification>,
    ) -> Self {
        let alarms = Mutex::new(Alarms::new(&config.alarms, &layout));
        Notifier {
            config,
            layout,
            tx,
            state: Mutex::new(NotifierState::default()),
            alarms,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, NotifierState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The notifications due now that instance `index` was polled.
    pub fn redis_due(&self, index: u32, seen: &RedisObservation) -> Vec<RedisEvent> {
        let mut state = self.lock();
        match state.redis.get_mut(&index) {
            // The first observation is the baseline.
            None => {
                state.redis.insert(index, seen.clone());
                Vec::new()
            }
            Some(known) => {
                let due = redis_transitions(known, seen);
                known.remember(seen);
                due
            }
        }
    }

    /// Judges the values a poll of instance `index` produced (`parts`,
    /// each sorted by OID) against the alarms: the notifications due and
    /// the instance's rows of `redisAlarmTable`.
    pub fn redis_alarms(
        &self,
        index: u32,
        up: bool,
        parts: &[&[(Oid, Value)]],
        now_unix: u64,
    ) -> Evaluation {
        self.settle_raises(index);
        self.alarms
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .evaluate(index, up, parts, now_unix)
    }

    /// The alarms in force become `specs` (a reload): see
    /// [`Alarms::reconfigure`]. Returns, per instance whose alarms changed,
    /// the rearms for the hub to send and the instance's rows now.
    pub fn reconfigure_alarms(&self, specs: &[AlarmSpec]) -> Vec<(u32, Evaluation)> {
        self.alarms
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .reconfigure(specs)
    }

    /// Forgets instance `index`, removed from the configuration: its
    /// baseline and its rate limits. Its index is never used again. Its
    /// raised alarms are returned, rearmed, for the hub to send.
    pub fn forget_redis(&self, index: u32) -> Vec<AlarmEvent> {
        let rearmed = self
            .alarms
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .forget(index);
        let mut state = self.lock();
        state.redis.remove(&index);
        // Puppet's source is numbered too (0): only Redis's are this
        // instance's.
        state.limits.retain(|(notification, source), _| {
            *source != index || !matches!(notification, Notification::Redis(_))
        });
        // Its held raises stay until the rearms returned here are sent
        // (each takes its own out).
        state.raises.remove(&index);
        rearmed
    }

    /// The notifications due now that the Puppet files changed (or were
    /// read for the first time: the baseline, which judges no run but one
    /// still waiting for its report).
    pub fn puppet_due(&self, seen: &PuppetObservation, now_unix: i64) -> Vec<PuppetEvent> {
        let stale = self.is_stale(seen.last_run, now_unix);
        let mut state = self.lock();
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
                    // A loop already going at start-up is not news; its end is.
                    not_converging: seen.not_converging && !seen.report_pending,
                    quick_runs: 0,
                    storm: false,
                });
                Vec::new()
            }
            Some(known) => {
                let min = self.config.puppet_min_run_interval;
                let due = puppet_transitions(known, seen, min);
                if is_new_run(known, seen) {
                    known.quick_runs = quick_runs(known, seen, min);
                    known.storm = known.quick_runs >= STORM_QUICK_RUNS
                        || (known.storm && known.quick_runs > 0);
                    known.not_converging = seen.not_converging;
                }
                if !seen.report_pending && seen.last_run.is_some() {
                    known.last_run = seen.last_run;
                    known.status = seen.status;
                    known.stale = stale;
                }
                known.disabled = seen.disabled;
                due
            }
        }
    }

    /// Called now and then: Puppet turns stale when no run ended within
    /// `puppet_stale_after`, and a run storm is over when no run ended
    /// within `puppet_min_run_interval`. A flood of resource notifications
    /// that is over is counted in the log.
    pub fn puppet_tick_due(&self, now_unix: i64) -> Vec<PuppetEvent> {
        let mut due = Vec::new();
        let mut state = self.lock();
        let max = self.config.puppet_resource_per_minute;
        if let Some(dropped) = state.resources.settle(max, Instant::now()) {
            resource_drops_said(dropped, max);
        }
        let Some(known) = state.puppet.as_mut() else {
            return due;
        };
        let stale = self.is_stale(known.last_run, now_unix);
        if stale && !known.stale {
            due.push(PuppetEvent::AgentStale);
        }
        known.stale = stale;
        let min = i64::try_from(self.config.puppet_min_run_interval.as_secs()).unwrap_or(i64::MAX);
        let quiet = known
            .last_run
            .is_some_and(|t| now_unix.saturating_sub(t) >= min);
        if quiet {
            known.quick_runs = 0;
            if known.storm {
                known.storm = false;
                due.push(PuppetEvent::RunStormCleared);
            }
        }
        due
    }

    fn is_stale(&self, last_run: Option<i64>, now_unix: i64) -> bool {
        let limit = i64::try_from(self.config.puppet_stale_after.as_secs()).unwrap_or(i64::MAX);
        last_run.is_some_and(|t| now_unix.saturating_sub(t) > limit)
    }

    /// The notifications due for a reading of Puppet's events log, each
    /// with what it is about: a resource event its row of
    /// `puppetEventTable`, the held-back count Puppet. The log's events
    /// are new by construction (it is followed from its end): there is no
    /// baseline. Flood control is the source's per-run budget
    /// ([`EventItem::Resource::within_budget`]), then, when sent, a
    /// ceiling per minute ([`Limit::Resources`]).
    pub fn puppet_events_due(&self, seen: &EventsObservation) -> Vec<(PuppetEvent, About)> {
        seen.items
            .iter()
            .filter_map(|item| match item {
                EventItem::Resource {
                    index,
                    failed,
                    within_budget: true,
                } => Some((
                    if *failed {
                        PuppetEvent::ResourceFailed
                    } else {
                        PuppetEvent::ResourceChanged
                    },
                    About::row(PUPPET_SOURCE, *index),
                )),
                EventItem::Resource { .. } => None,
                EventItem::RunBoundary { .. } => {
                    Some((PuppetEvent::ResourceEventsHeldBack, About::PUPPET))
                }
            })
            .collect()
    }

    /// Sends `notification` about `about`, each of its objects at the
    /// instance `about` gives it and valued by `value` (absent ones are
    /// left out), unless `[notifications] disabled` names it or its
    /// [`Limit`] holds it back.
    pub fn send(
        &self,
        notification: impl Into<Notification>,
        about: About,
        value: impl Fn(&Oid) -> Option<Value>,
    ) {
        let notification = notification.into();
        if self.config.disabled.contains(&notification) {
            return;
        }
        let allowed = match notification.def().limit {
            Limit::PerSource => self.allowed(notification, about.source),
            Limit::Resources => self.resource_allowed(),
            Limit::Raise => self.raise_allowed(notification, about),
            Limit::Rearm => self.rearm_allowed(about),
        };
        if allowed {
            self.queue(notification, about, value);
        }
    }

    /// Queues `notification` for the AgentX session: `snmpTrapOID.0`, then
    /// its objects that have a value.
    fn queue(
        &self,
        notification: Notification,
        about: About,
        value: impl Fn(&Oid) -> Option<Value>,
    ) {
        let def = notification.def();
        let trap_oid = self.layout.notification_oid(def);
        let mut varbinds = vec![(oid_of(SNMP_TRAP_OID), Value::ObjectIdentifier(trap_oid))];
        varbinds.extend(def.objects.iter().filter_map(|carried| {
            let oid = self.layout.carried_oid(carried, about)?;
            let value = value(&oid)?;
            Some((oid, value))
        }));
        let sent = self.tx.try_send(varbinds);
        let mut state = self.lock();
        match sent {
            Ok(()) => {
                debug!("queued {notification} for {about}");
                let dropped = state.unsent.taken();
                if dropped > 0 {
                    warn!("{dropped} notification(s) were dropped while the AgentX session was not taking them");
                }
            }
            Err(e) => {
                if state.unsent.dropped() {
                    warn!(
                        "dropped {notification} for {about}: the AgentX session is not taking notifications ({e}); \
                         the next are dropped too until it does, and counted"
                    );
                }
            }
        }
    }

    /// The ceiling of the events log's resource notifications.
    fn resource_allowed(&self) -> bool {
        let max = self.config.puppet_resource_per_minute;
        match self.lock().resources.admit(max, Instant::now()) {
            Admit::Pass { dropped } => {
                if dropped > 0 {
                    resource_drops_said(dropped, max);
                }
                true
            }
            Admit::FirstDrop => {
                warn!(
                    "puppet: {max} resource notifications were sent in the last minute \
                     (resource_notifications_per_minute): the next are dropped, and counted, \
                     until the minute has room"
                );
                false
            }
            Admit::Drop => false,
        }
    }

    /// The ceiling of a source's alarm raises; one held back is
    /// remembered for its rearm.
    fn raise_allowed(&self, notification: Notification, about: About) -> bool {
        let max = self.config.alarm_raises_per_minute;
        let mut state = self.lock();
        let admit = state
            .raises
            .entry(about.source)
            .or_default()
            .admit(max, Instant::now());
        let row = (about.source, about.row.unwrap_or(0));
        match admit {
            Admit::Pass { dropped } => {
                state.held_raises.remove(&row);
                if dropped > 0 {
                    warn!(
                        "instance {}: {dropped} alarm raise(s) were held back by the ceiling of {max} a minute \
                         (alarm_raises_per_minute), and their rearms with them",
                        about.source
                    );
                }
                true
            }
            Admit::FirstDrop => {
                state.held_raises.insert(row);
                warn!(
                    "instance {}: {max} alarms were raised in the last minute (alarm_raises_per_minute): \
                     the next {notification}s are held back, with their rearms, and counted",
                    about.source
                );
                false
            }
            Admit::Drop => {
                state.held_raises.insert(row);
                false
            }
        }
    }

    /// A flood of raises that is over is counted in the log, once: each
    /// poll of the instance looks.
    fn settle_raises(&self, index: u32) {
        let max = self.config.alarm_raises_per_minute;
        let mut state = self.lock();
        let settled = state
            .raises
            .get_mut(&index)
            .and_then(|ceiling| ceiling.settle(max, Instant::now()));
        if let Some(dropped) = settled {
            warn!(
                "instance {index}: {dropped} alarm raise(s) were held back by the ceiling of {max} a minute \
                 (alarm_raises_per_minute), and their rearms with them"
            );
        }
    }

    /// A rearm goes when its raise went.
    fn rearm_allowed(&self, about: About) -> bool {
        !self
            .lock()
            .held_raises
            .remove(&(about.source, about.row.unwrap_or(0)))
    }

    /// The rate limit: at most `max_per_minute` of one kind per source.
    fn allowed(&self, notification: Notification, index: u32) -> bool {
        let max = self.config.max_per_minute;
        let mut state = self.lock();
        match state
            .limits
            .entry((notification, index))
            .or_default()
            .admit(max, Instant::now())
        {
            Admit::Pass { dropped } => {
                if dropped > 0 {
                    warn!("{notification} for instance {index}: {dropped} notification(s) were dropped by the rate limit");
                }
                true
            }
            Admit::FirstDrop => {
                warn!("{notification} for instance {index} is flapping: at most {max} a minute are sent");
                false
            }
            Admit::Drop => false,
        }
    }
}

/// The count of a flood of resource notifications, once it is over.
fn resource_drops_said(dropped: u64, max: usize) {
    warn!(
        "puppet: {dropped} resource notification(s) were dropped over the ceiling of {max} a minute \
         (resource_notifications_per_minute)"
    );
}

fn oid_of(arcs: &[u32]) -> Oid {
    Oid::new(arcs.to_vec()).expect("a constant OID of the catalogue")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{LinkStatus, Role};

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
            role: Role::from_label(role),
            link: link.and_then(LinkStatus::from_label),
            persistence_failed: failed,
            certificate_expiring: None,
        }
    }

    #[test]
    fn transitions_between_observations() {
        use RedisEvent::*;
        let master = obs(true, "a", "master", None, Some(false));
        assert!(redis_transitions(&master, &master).is_empty());
        assert_eq!(
            redis_transitions(&master, &RedisObservation::down()),
            [InstanceDown]
        );
        let restarted_as_replica = obs(true, "b", "slave", Some("up"), Some(false));
        assert_eq!(
            redis_transitions(
                &obs(false, "a", "master", None, Some(false)),
                &restarted_as_replica
            ),
            [InstanceUp, Restarted, RoleChanged]
        );
        let link_down = obs(true, "b", "slave", Some("down"), Some(false));
        assert_eq!(
            redis_transitions(&restarted_as_replica, &link_down),
            [ReplicationLinkDown]
        );
        assert_eq!(
            redis_transitions(&link_down, &restarted_as_replica),
            [ReplicationLinkUp]
        );
        let failing = obs(true, "a", "master", None, Some(true));
        assert_eq!(redis_transitions(&master, &failing), [PersistenceFailed]);
        assert!(redis_transitions(&failing, &failing).is_empty());
        // The certificate: falling under the warning, renewed beyond it.
        let fine = RedisObservation {
            certificate_expiring: Some(false),
            ..master.clone()
        };
        let expiring = RedisObservation {
            certificate_expiring: Some(true),
            ..master.clone()
        };
        assert_eq!(redis_transitions(&fine, &expiring), [CertificateExpiring]);
        assert!(redis_transitions(&expiring, &expiring).is_empty());
        assert_eq!(
            redis_transitions(&expiring, &fine),
            [CertificateExpiringCleared]
        );
        // Unknown (no certificate seen yet, or down) is no transition.
        assert!(redis_transitions(&master, &expiring).is_empty());
        let mut known = expiring.clone();
        known.remember(&RedisObservation::down());
        assert_eq!(known.certificate_expiring, Some(true));
    }

    #[test]
    fn a_forgotten_instance_leaves_no_baseline_and_no_rate_limit() {
        let (tx, mut rx) = mpsc::channel(100);
        let config = NotifyConfig {
            max_per_minute: 1,
            ..NotifyConfig::default()
        };
        let notifier = Notifier::new(config, Layout::default_layout(), tx);
        let observe = |index: u32, seen: &RedisObservation| {
            for event in notifier.redis_due(index, seen) {
                notifier.send(event, About::source(index), |_| None);
            }
        };
        let up = obs(true, "a", "master", None, Some(false));
        for index in [1, 2] {
            observe(index, &up);
            observe(index, &RedisObservation::down());
        }
        assert_eq!(sent(&mut rx), ["redisInstanceDown", "redisInstanceDown"]);
        notifier.forget_redis(2);
        let state = notifier.lock();
        assert!(!state.redis.contains_key(&2) && state.redis.contains_key(&1));
        assert!(
            state.limits.keys().all(|(_, i)| *i == 1),
            "{:?}",
            state.limits.keys().collect::<Vec<_>>()
        );
        drop(state);
        // Instance 1 is still judged and limited (its second Down within
        // the minute is dropped); 2 is as if new: its first observation is
        // a baseline again, and its Down passes.
        for index in [1, 2] {
            observe(index, &up);
            observe(index, &RedisObservation::down());
        }
        assert_eq!(sent(&mut rx), ["redisInstanceUp", "redisInstanceDown"]);
    }

    #[test]
    fn known_values_survive_an_outage() {
        let mut known = obs(true, "a", "master", None, Some(false));
        known.remember(&RedisObservation::down());
        assert!(!known.up);
        assert_eq!(known.run_id.as_deref(), Some("a"));
        let back = obs(true, "b", "master", None, Some(false));
        assert_eq!(
            redis_transitions(&known, &back),
            [RedisEvent::InstanceUp, RedisEvent::Restarted]
        );
    }

    fn run(last_run: i64, status: RunStatus) -> PuppetObservation {
        PuppetObservation {
            last_run: Some(last_run),
            status: Some(status),
            ..PuppetObservation::default()
        }
    }

    /// The name of every notification queued so far.
    fn sent(rx: &mut mpsc::Receiver<session::Notification>) -> Vec<&'static str> {
        let layout = Layout::default_layout();
        let mut names = Vec::new();
        while let Ok(varbinds) = rx.try_recv() {
            let Value::ObjectIdentifier(trap) = &varbinds[0].1 else {
                panic!("the first varbind is not snmpTrapOID.0")
            };
            let sent = Notification::all()
                .find(|n| layout.notification_oid(n.def()) == *trap)
                .unwrap_or_else(|| panic!("{trap} is no notification of the agent"));
            names.push(sent.name());
        }
        names
    }

    /// What the hub does with a new Puppet state: send what is due.
    fn puppet_observed(notifier: &Notifier, seen: &PuppetObservation, now: i64) {
        for event in notifier.puppet_due(seen, now) {
            notifier.send(event, About::PUPPET, |_| None);
        }
    }

    /// What the hub does with an alarm raised or rearmed: its row from the
    /// event, the rest from `value`.
    fn alarm_sent(
        notifier: &Notifier,
        index: u32,
        event: &AlarmEvent,
        value: impl Fn(&Oid) -> Option<Value>,
    ) {
        notifier.send(event.notification(), event.about(index), |oid| {
            event.value(oid).or_else(|| value(oid))
        });
    }

    /// What the hub does on its Puppet tick.
    fn puppet_ticked(notifier: &Notifier, now: i64) {
        for event in notifier.puppet_tick_due(now) {
            notifier.send(event, About::PUPPET, |_| None);
        }
    }

    #[test]
    fn puppet_runs_disable_and_staleness() {
        use crate::puppet::RunStatus::*;
        let (tx, mut rx) = mpsc::channel(100);
        let config = NotifyConfig {
            puppet_stale_after: Duration::from_secs(3600),
            ..NotifyConfig::default()
        };
        let notifier = Notifier::new(config, Layout::default_layout(), tx);
        let observe = |seen: &PuppetObservation, now| puppet_observed(&notifier, seen, now);
        let tick = |now| puppet_ticked(&notifier, now);
        let t = 1_795_336_000;
        observe(&run(t, Failed), t); // baseline: an old failure does not fire
        observe(&run(t, Failed), t + 5); // same run again: nothing
        let mut pending = run(t + 100, Changed);
        pending.report_pending = true;
        observe(&pending, t + 100); // waits for the report
        observe(&run(t + 100, Changed), t + 101); // changed, and recovered
        observe(&run(t + 200, Failed), t + 200);
        let disabled = PuppetObservation {
            disabled: true,
            ..run(t + 200, Failed)
        };
        observe(&disabled, t + 201);
        tick(t + 200 + 3599);
        tick(t + 200 + 3601); // stale now
        tick(t + 200 + 3700); // still stale: once only
        observe(&run(t + 9000, Unchanged), t + 9000); // enabled, recovered, fresh
        assert_eq!(
            sent(&mut rx),
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

    #[test]
    fn runs_that_never_converge_and_run_storms() {
        use crate::puppet::RunStatus::*;
        let (tx, mut rx) = mpsc::channel(100);
        let config = NotifyConfig {
            puppet_min_run_interval: Duration::from_secs(60),
            ..NotifyConfig::default()
        };
        let notifier = Notifier::new(config, Layout::default_layout(), tx);
        let observe = |seen: &PuppetObservation, now| puppet_observed(&notifier, seen, now);
        let tick = |now| puppet_ticked(&notifier, now);
        // `interval` after the run before; `looping`: K changing runs in a row.
        let run = |end: i64, interval: Option<u64>, looping: bool, status| PuppetObservation {
            run_interval: interval,
            not_converging: looping,
            ..run(end, status)
        };
        let t = 1_795_336_000;
        observe(&run(t, None, false, Changed), t); // baseline
        observe(&run(t + 30, Some(30), false, Changed), t + 30); // one quick run
        assert_eq!(sent(&mut rx), ["puppetRunChanged"]);
        let mut pending = run(t + 50, Some(20), true, Changed);
        pending.report_pending = true;
        observe(&pending, t + 50); // not judged before its report
        assert!(sent(&mut rx).is_empty());
        observe(&run(t + 50, Some(20), true, Changed), t + 51); // two quick: a storm, a loop
        assert_eq!(
            sent(&mut rx),
            ["puppetRunChanged", "puppetNotConverging", "puppetRunStorm"]
        );
        observe(&run(t + 70, Some(20), true, Changed), t + 70); // once each
        tick(t + 100); // 30 s quiet: the storm goes on
        assert_eq!(sent(&mut rx), ["puppetRunChanged"]);
        observe(&run(t + 90, Some(20), false, Unchanged), t + 90);
        assert_eq!(sent(&mut rx), ["puppetConverged"]);
        tick(t + 149);
        assert!(sent(&mut rx).is_empty());
        tick(t + 150); // min_run_interval without a run
        tick(t + 151);
        assert_eq!(sent(&mut rx), ["puppetRunStormCleared"]);
        // Quick runs again after the quiet: the count starts over.
        observe(&run(t + 200, Some(110), false, Unchanged), t + 200);
        observe(&run(t + 210, Some(10), false, Unchanged), t + 210);
        assert!(sent(&mut rx).is_empty());
        observe(&run(t + 220, Some(10), false, Unchanged), t + 220);
        assert_eq!(sent(&mut rx), ["puppetRunStorm"]);
        // A slow run ends it too, without waiting for the tick.
        observe(&run(t + 400, Some(180), false, Unchanged), t + 400);
        assert_eq!(sent(&mut rx), ["puppetRunStormCleared"]);
    }

    #[test]
    fn a_loop_going_at_start_up_is_the_baseline() {
        let (tx, mut rx) = mpsc::channel(100);
        let notifier = Notifier::new(NotifyConfig::default(), Layout::default_layout(), tx);
        let looping = PuppetObservation {
            not_converging: true,
            ..run(1000, RunStatus::Changed)
        };
        assert!(notifier.puppet_due(&looping, 1000).is_empty());
        let converged = run(1300 + 3600, RunStatus::Unchanged);
        assert_eq!(
            notifier.puppet_due(&converged, 1300 + 3600),
            [PuppetEvent::Converged]
        );
        drop(rx.try_recv());
    }

    #[test]
    fn baseline_rate_limit_and_disabled() {
        let (tx, mut rx) = mpsc::channel(100);
        let config = NotifyConfig {
            disabled: [RedisEvent::RoleChanged.into()].into_iter().collect(),
            max_per_minute: 2,
            ..NotifyConfig::default()
        };
        let notifier = Notifier::new(config, Layout::default_layout(), tx);
        let observe = |seen: &RedisObservation| {
            for event in notifier.redis_due(1, seen) {
                notifier.send(event, About::source(1), |_| None);
            }
        };
        let up = obs(true, "a", "master", None, Some(false));
        observe(&RedisObservation::down()); // baseline: silent
        for _ in 0..5 {
            observe(&up);
            observe(&RedisObservation::down());
        }
        observe(&obs(true, "a", "slave", None, Some(false)));
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
        let (tx, mut rx) = mpsc::channel(100);
        let layout = Layout::default_layout();
        // Raised at 90 % on one poll, rearmed at 85 %.
        let memory = || crate::alarms::memory_alarm(1);
        let config = NotifyConfig {
            max_per_minute: 1,
            alarms: vec![memory()],
            ..NotifyConfig::default()
        };
        let notifier = Notifier::new(config, layout.clone(), tx);
        let oid = |name: &str, suffix: &[u32]| {
            let def = crate::metrics::redis_objects()
                .find(|o| o.name == name)
                .unwrap();
            layout.row_oid(def, suffix).unwrap()
        };
        let name_oid = oid("redisInstanceName", &[4]);
        // used_memory 1043392 of maxmemory 1100000 (94.85 %), then 80 %.
        let poll = |hundredths: u32| {
            let mut part = vec![
                (name_oid.clone(), Value::text("cache")),
                (oid("redisMemUsedOfMax", &[4]), Value::Gauge32(hundredths)),
            ];
            part.sort_by(|a, b| a.0.cmp(&b.0));
            let found = notifier.redis_alarms(4, true, &[&part], 1_795_400_000);
            for event in &found.events {
                alarm_sent(&notifier, 4, event, |o| {
                    part.iter().find(|(p, _)| p == o).map(|(_, v)| v.clone())
                });
            }
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
        let (tx, mut rx) = mpsc::channel(1000);
        let config = NotifyConfig {
            alarm_raises_per_minute: 2,
            alarms: vec![memory()],
            ..NotifyConfig::default()
        };
        let flooded = Notifier::new(config, layout.clone(), tx);
        for _ in 0..10 {
            for hundredths in [9485, 8000] {
                let part = vec![(oid("redisMemUsedOfMax", &[2]), Value::Gauge32(hundredths))];
                let found = flooded.redis_alarms(2, true, &[&part], 1_795_400_000);
                for event in &found.events {
                    alarm_sent(&flooded, 2, event, |_| None);
                }
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
        assert!(flooded.lock().held_raises.is_empty());
        // Disabled, it is not sent; the alarm is still judged.
        let (tx, mut rx) = mpsc::channel(100);
        let config = NotifyConfig {
            disabled: [RedisEvent::ThresholdCrossed.into()].into_iter().collect(),
            ..NotifyConfig::default()
        };
        let quiet = Notifier::new(config, layout.clone(), tx);
        let part = vec![(oid("redisCliUsedOfMax", &[1]), Value::Gauge32(9900))];
        for _ in 0..2 {
            let found = quiet.redis_alarms(1, true, &[&part], 1_795_400_000);
            for event in &found.events {
                alarm_sent(&quiet, 1, event, |_| None);
            }
        }
        assert!(sent(&mut rx).is_empty());
    }

    /// What `f` logs, as text.
    fn logged(f: impl FnOnce()) -> String {
        #[derive(Clone, Default)]
        struct Capture(std::sync::Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Capture {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let capture = Capture::default();
        let writer = capture.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(subscriber, f);
        let bytes = capture.0.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    /// Review L5: forged run boundaries renew the per-run budget at every
    /// other line (3,000 lines: 1,500 runs of one change, each "holding
    /// back" one more). The resource notifications stop at the ceiling a
    /// minute, the held-back counts at `max_per_minute`, and the log says
    /// each ceiling once.
    #[test]
    fn resource_notifications_have_a_ceiling_a_minute_said_once() {
        let (tx, mut rx) = mpsc::channel(10_000);
        let config = NotifyConfig {
            max_per_minute: 5,
            puppet_resource_per_minute: 30,
            ..NotifyConfig::default()
        };
        let notifier = Notifier::new(config, Layout::default_layout(), tx);
        let log = logged(|| {
            for index in 1..=1500u32 {
                let seen = EventsObservation {
                    items: vec![
                        EventItem::Resource {
                            index,
                            failed: index % 3 == 0,
                            within_budget: true,
                        },
                        EventItem::RunBoundary { held_back: 1 },
                    ],
                };
                for (event, about) in notifier.puppet_events_due(&seen) {
                    notifier.send(event, about, |_| None);
                }
            }
            // Nothing more comes: a tick within the minute says nothing.
            assert!(notifier.puppet_tick_due(0).is_empty());
        });
        let names = sent(&mut rx);
        let count = |name: &str| names.iter().filter(|n| **n == name).count();
        assert_eq!(
            count("puppetResourceChanged") + count("puppetResourceFailed"),
            30
        );
        assert_eq!(count("puppetResourceEventsHeldBack"), 5);
        assert_eq!(log.lines().count(), 2, "{log}");
        assert_eq!(
            log.matches("30 resource notifications were sent in the last minute")
                .count(),
            1,
            "{log}"
        );
        assert_eq!(
            log.matches("puppetResourceEventsHeldBack for instance 0 is flapping")
                .count(),
            1,
            "{log}"
        );
    }

    /// Notifications the AgentX session does not take: the first is said,
    /// the rest counted, and the count said once it takes one again.
    #[test]
    fn a_full_queue_is_said_once_with_a_count() {
        let (tx, mut rx) = mpsc::channel(2);
        let notifier = Notifier::new(NotifyConfig::default(), Layout::default_layout(), tx);
        let log = logged(|| {
            // One per instance: no rate limit holds any back.
            for index in 1..=100 {
                notifier.send(RedisEvent::InstanceDown, About::source(index), |_| None);
            }
        });
        assert_eq!(log.lines().count(), 1, "{log}");
        assert!(
            log.contains("dropped redisInstanceDown for source 3: the AgentX session is not taking notifications"),
            "{log}"
        );
        assert_eq!(sent(&mut rx).len(), 2);
        let log = logged(|| notifier.send(RedisEvent::InstanceUp, About::source(1), |_| None));
        assert!(
            log.contains(
                "98 notification(s) were dropped while the AgentX session was not taking them"
            ),
            "{log}"
        );
        assert_eq!(sent(&mut rx), ["redisInstanceUp"]);
    }

    #[test]
    fn varbinds_carry_the_values_given_at_the_objects_of_the_notification() {
        let (tx, mut rx) = mpsc::channel(10);
        let layout = Layout::default_layout();
        let notifier = Notifier::new(NotifyConfig::default(), layout.clone(), tx);
        let name = crate::metrics::redis_objects()
            .find(|o| o.name == "redisInstanceName")
            .unwrap();
        let name_oid = layout.row_oid(name, &[3]).unwrap();
        notifier.send(RedisEvent::InstanceDown, About::source(3), |oid| {
            (*oid == name_oid).then(|| Value::text("cache"))
        });
        let varbinds = rx.try_recv().unwrap();
        assert_eq!(varbinds.len(), 2, "{varbinds:?}");
        assert!(
            matches!(&varbinds[0].1, Value::ObjectIdentifier(o) if o.to_string() == ".1.3.6.1.4.1.20267.400.0.1"),
            "{varbinds:?}"
        );
        assert_eq!(varbinds[1], (name_oid, Value::text("cache")));
    }
}
