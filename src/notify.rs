//! Sending notifications: the switches, the rate limits and the varbinds.
//!
//! What is due is judged elsewhere (the transitions of the sources, and
//! the agent's own thresholds), as typed values
//! ([`crate::metrics::RedisEvent`], [`crate::metrics::PuppetEvent`], declared in the catalogue with their
//! objects and limits: `metrics::notifications`). The hub (`crate::hub`)
//! then asks the notifier to send each with what it is [`About`] and the
//! values of the reading that caused it, so a trap carries exactly what a
//! GET returns. [`Notifier::send`] reads everything else from the
//! notification's definition: whether `[notifications] disabled` names
//! it, its [`Limit`], its objects and the instance each is sent with; a
//! new notification needs nothing here. What is sent and dropped is
//! counted in [`limits`]: a ceiling a minute per kind and source, one for
//! the events log's resource notifications together, one for each
//! source's alarm raises, and the notifications the AgentX session did
//! not take, each said in the log once. The hub's one task owns the
//! notifier: no lock.

pub mod limits;

use crate::agentx::session;
use crate::config::NotifyConfig;
#[cfg(test)]
use crate::metrics::RedisEvent;
use crate::metrics::{About, Layout, Limit, Notification, RowIndex, SNMP_TRAP_OID};
use crate::oid::Oid;
use crate::smi::Value;
use limits::{Admit, Ceiling, Drops};
use std::collections::{HashMap, HashSet};
use std::time::Instant;
use tokio::sync::mpsc;
use tracing::{debug, warn};

/// Sends Notify PDUs to the AgentX session, as each notification's
/// definition says. Owned by the hub's one task: no lock.
pub struct Notifier {
    config: NotifyConfig,
    layout: Layout,
    tx: mpsc::Sender<session::Notification>,
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
        Notifier {
            config,
            layout,
            tx,
            limits: HashMap::new(),
            resources: Ceiling::default(),
            raises: HashMap::new(),
            held_raises: HashSet::new(),
            unsent: Drops::default(),
        }
    }

    /// The settings it was started with.
    pub fn config(&self) -> &NotifyConfig {
        &self.config
    }

    /// Forgets source `index`, a Redis instance removed from the
    /// configuration: its rate limits. Its index is never used again.
    pub fn forget_redis(&mut self, index: u32) {
        // Puppet's source is numbered too (0): only Redis's are this
        // instance's.
        self.limits.retain(|(notification, source), _| {
            *source != index || !matches!(notification, Notification::Redis(_))
        });
        // Its held raises stay until its rearms are sent (each takes its
        // own out).
        self.raises.remove(&index);
    }

    /// A flood of resource notifications that is over is counted in the
    /// log: the hub looks on each Puppet tick.
    pub fn settle_resources(&mut self) {
        let max = self.config.puppet_resource_per_minute;
        if let Some(dropped) = self.resources.settle(max, Instant::now()) {
            resource_drops_said(dropped, max);
        }
    }

    /// Sends `notification` about `about`, each of its objects at the
    /// instance `about` gives it and valued by `value` (absent ones are
    /// left out), unless `[notifications] disabled` names it or its
    /// [`Limit`] holds it back.
    pub fn send(
        &mut self,
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
        &mut self,
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
        // Rows carried after the OBJECTS: every row of a table numbered
        // from 1 (a few dozen lookups at most, by its cap).
        if let Some(table) = notification.trailing_rows() {
            if let RowIndex::Row { max, .. } = table.index {
                let rows = table.max_rows.map_or(max, |m| max.min(m as u32));
                for row in 1..=rows {
                    for column in table.columns {
                        let Some(oid) = self.layout.row_oid(column, &[row]) else {
                            continue;
                        };
                        if let Some(value) = value(&oid) {
                            varbinds.push((oid, value));
                        }
                    }
                }
            }
        }
        let sent = self.tx.try_send(varbinds);
        match sent {
            Ok(()) => {
                debug!("queued {notification} for {about}");
                let dropped = self.unsent.taken();
                if dropped > 0 {
                    warn!("{dropped} notification(s) were dropped while the AgentX session was not taking them");
                }
            }
            Err(e) => {
                if self.unsent.dropped() {
                    warn!(
                        "dropped {notification} for {about}: the AgentX session is not taking notifications ({e}); \
                         the next are dropped too until it does, and counted"
                    );
                }
            }
        }
    }

    /// The ceiling of the events log's resource notifications.
    fn resource_allowed(&mut self) -> bool {
        let max = self.config.puppet_resource_per_minute;
        match self.resources.admit(max, Instant::now()) {
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
    fn raise_allowed(&mut self, notification: Notification, about: About) -> bool {
        let max = self.config.alarm_raises_per_minute;
        let admit = self
            .raises
            .entry(about.source)
            .or_default()
            .admit(max, Instant::now());
        let row = (about.source, about.row.unwrap_or(0));
        match admit {
            Admit::Pass { dropped } => {
                self.held_raises.remove(&row);
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
                self.held_raises.insert(row);
                warn!(
                    "instance {}: {max} alarms were raised in the last minute (alarm_raises_per_minute): \
                     the next {notification}s are held back, with their rearms, and counted",
                    about.source
                );
                false
            }
            Admit::Drop => {
                self.held_raises.insert(row);
                false
            }
        }
    }

    /// A flood of raises that is over is counted in the log, once: the hub
    /// looks on each poll of the instance.
    pub fn settle_raises(&mut self, index: u32) {
        let max = self.config.alarm_raises_per_minute;
        let settled = self
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
    fn rearm_allowed(&mut self, about: About) -> bool {
        !self
            .held_raises
            .remove(&(about.source, about.row.unwrap_or(0)))
    }

    /// The rate limit: at most `max_per_minute` of one kind per source.
    fn allowed(&mut self, notification: Notification, index: u32) -> bool {
        let max = self.config.max_per_minute;
        match self
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

/// What the tests of the notifier and of the hub read of what was sent.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// A notifier by the default settings as `edit` changes them, and the
    /// queue it sends on.
    pub(crate) fn notifier_with(
        edit: impl FnOnce(&mut NotifyConfig),
    ) -> (Notifier, mpsc::Receiver<session::Notification>) {
        let mut config = NotifyConfig::default();
        edit(&mut config);
        let (tx, rx) = mpsc::channel(1000);
        (Notifier::new(config, Layout::default_layout(), tx), rx)
    }

    /// The name of every notification queued so far.
    pub(crate) fn sent(rx: &mut mpsc::Receiver<session::Notification>) -> Vec<&'static str> {
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

    impl Notifier {
        /// The sources a rate limit is kept for.
        pub(crate) fn limited_sources(&self) -> Vec<u32> {
            let mut sources: Vec<u32> = self.limits.keys().map(|(_, s)| *s).collect();
            sources.sort_unstable();
            sources.dedup();
            sources
        }

        /// Whether no alarm raise is held back.
        pub(crate) fn holds_no_raise(&self) -> bool {
            self.held_raises.is_empty()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{PuppetEvent, PUPPET_SOURCE};
    use std::sync::Mutex;
    use testing::sent;

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
        let mut notifier = Notifier::new(config, Layout::default_layout(), tx);
        let log = logged(|| {
            for index in 1..=1500u32 {
                // A resource event of its row, then the run's held-back
                // count, as the judge makes them due.
                let resource = if index % 3 == 0 {
                    PuppetEvent::ResourceFailed
                } else {
                    PuppetEvent::ResourceChanged
                };
                notifier.send(resource, About::row(PUPPET_SOURCE, index), |_| None);
                notifier.send(PuppetEvent::ResourceEventsHeldBack, About::PUPPET, |_| None);
            }
            // Nothing more comes: a tick within the minute says nothing.
            notifier.settle_resources();
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
        let mut notifier = Notifier::new(NotifyConfig::default(), Layout::default_layout(), tx);
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

    /// Slow commands, each about a row of its own, share their
    /// instance's `max_per_minute`: a burst of slow entries is a few
    /// notifications, not one per entry.
    #[test]
    fn slow_commands_are_rate_limited_per_instance() {
        let (mut notifier, mut rx) = testing::notifier_with(|c| c.max_per_minute = 5);
        for row in 1..=40 {
            notifier.send(RedisEvent::SlowCommand, About::row(1, row), |_| None);
        }
        notifier.send(RedisEvent::SlowCommand, About::row(2, 1), |_| None);
        assert_eq!(sent(&mut rx).len(), 6);
    }

    #[test]
    fn varbinds_carry_the_values_given_at_the_objects_of_the_notification() {
        let (tx, mut rx) = mpsc::channel(10);
        let layout = Layout::default_layout();
        let mut notifier = Notifier::new(NotifyConfig::default(), layout.clone(), tx);
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

    /// puppetRunFinished carries puppetFactTable's rows after its
    /// objects, row by row; other notifications do not.
    #[test]
    fn the_run_end_carries_the_fact_rows_after_its_objects() {
        use crate::metrics::{PuppetEvent, PUPPET_FACT_TABLE};
        let (tx, mut rx) = mpsc::channel(10);
        let layout = Layout::default_layout();
        let mut notifier = Notifier::new(NotifyConfig::default(), layout.clone(), tx);
        let [name, value] = PUPPET_FACT_TABLE.columns else {
            panic!("two columns")
        };
        let cells = [
            (layout.row_oid(name, &[1]).unwrap(), Value::text("hostname")),
            (layout.row_oid(value, &[1]).unwrap(), Value::text("web1")),
            (layout.row_oid(name, &[3]).unwrap(), Value::text("zone")),
            (layout.row_oid(value, &[3]).unwrap(), Value::text("z1")),
        ];
        let status = crate::metrics::puppet_objects()
            .find(|o| o.name == "puppetLastRunStatus")
            .unwrap();
        let status_oid = layout.row_oid(status, &[0]).unwrap();
        let lookup = |oid: &Oid| {
            if *oid == status_oid {
                return Some(Value::Integer(1));
            }
            cells.iter().find(|(o, _)| o == oid).map(|(_, v)| v.clone())
        };
        notifier.send(PuppetEvent::RunFinished, About::PUPPET, lookup);
        let varbinds = rx.try_recv().unwrap();
        assert_eq!(varbinds.len(), 2 + cells.len(), "{varbinds:?}");
        assert_eq!(varbinds[1].0, status_oid);
        assert_eq!(varbinds[2..], cells);
        notifier.send(PuppetEvent::AgentStale, About::PUPPET, lookup);
        let varbinds = rx.try_recv().unwrap();
        assert!(varbinds
            .iter()
            .all(|(o, _)| !cells.iter().any(|(c, _)| c == o)));
    }
}
