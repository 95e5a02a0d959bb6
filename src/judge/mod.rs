//! Judging: which transitions of a source are worth a notification. Pure
//! code: no lock, no channel, no I/O; the hub ([`crate::hub`]) owns the
//! one [`Judge`] and hands it every [`Observation`] of the reading stream
//! in turn.
//!
//! The sources report facts (counts, ids, times, states, and the baselines
//! only they can keep, such as slow-log ids); the judge names every
//! notification. Each observation is compared with the last one of the
//! same source: the first after start-up is the baseline and never fires.
//! What is due comes out as typed notifications ([`RedisEvent`],
//! [`crate::metrics::PuppetEvent`], declared in the catalogue with their objects and
//! limits), each with what it is [`About`]; sending them (switches, rate
//! limits, varbinds) is [`crate::notify`]'s. Redis's rules are in
//! [`redis`], Puppet's in [`puppet`].

pub mod puppet;
pub mod redis;

use self::puppet::{puppet_events_due, PuppetJudge};
use self::redis::{redis_about, redis_transitions, sentinel_event, Bursts};
use crate::config::NotifyConfig;
use crate::metrics::{About, Notification, PuppetEvent, RedisEvent};
use crate::puppet::observation::{
    CertificateDates, EventsObservation, PuppetObservation, PuppetSeen,
};
use crate::redis::observation::{Polled, RedisObservation};
use std::collections::HashMap;

/// What a reading of the stream observed, whichever source it came from.
#[derive(Debug, Clone, PartialEq)]
pub enum Observation {
    /// A poll of Redis instance `index`.
    Redis { index: u32, seen: RedisObservation },
    /// A new state of Puppet's files, read at `now` (UNIX seconds).
    Puppet { seen: PuppetObservation, now: i64 },
    /// New lines of Puppet's events log.
    PuppetEvents(EventsObservation),
    /// Time passing on the Puppet side: staleness and the end of a run
    /// storm are judged between changes too.
    PuppetTick { now: i64 },
}

impl From<Polled> for Observation {
    fn from(polled: Polled) -> Self {
        Observation::Redis {
            index: polled.index,
            seen: polled.seen,
        }
    }
}

impl From<PuppetSeen> for Observation {
    fn from(seen: PuppetSeen) -> Self {
        match seen {
            PuppetSeen::State { seen, now } => Observation::Puppet { seen, now },
            PuppetSeen::Tick { now } => Observation::PuppetTick { now },
        }
    }
}

impl From<EventsObservation> for Observation {
    fn from(seen: EventsObservation) -> Self {
        Observation::PuppetEvents(seen)
    }
}

/// The baselines: what was judged of each source.
#[derive(Debug, Clone, Default)]
pub struct Judge {
    /// Last known observation per Redis instance.
    redis: HashMap<u32, RedisObservation>,
    /// Bursts of ACL refusals per Redis instance.
    bursts: Bursts,
    /// What was judged of Puppet, its certificates included.
    puppet: PuppetJudge,
}

impl Judge {
    /// A judge of Puppet's runs by `config`'s thresholds, with no baseline yet.
    pub fn of(config: &NotifyConfig) -> Judge {
        Judge {
            puppet: PuppetJudge::of(config),
            ..Judge::default()
        }
    }

    /// The notifications due for `observation`, each with what it is about
    /// (alarms are judged apart, [`crate::alarms`]).
    pub fn due(&mut self, observation: &Observation) -> Vec<(Notification, About)> {
        match observation {
            Observation::Redis { index, seen } => {
                let mut due: Vec<(Notification, About)> = self
                    .redis_due(*index, seen)
                    .into_iter()
                    .map(|e| (e.into(), redis_about(e, *index, seen)))
                    .collect();
                // New slow log entries are new by construction (the
                // poller's watch has its own baseline): each about its row.
                due.extend(
                    seen.slow_commands
                        .iter()
                        .map(|row| (RedisEvent::SlowCommand.into(), About::row(*index, *row))),
                );
                // A sentinel's masters, compared by the poll's failover
                // watch (its baseline is its own first poll): each about
                // its row of redisSentinelEventTable.
                due.extend(
                    seen.sentinel_events
                        .iter()
                        .map(|n| (sentinel_event(n.kind).into(), About::row(*index, n.row))),
                );
                due
            }
            Observation::Puppet { seen, now } => {
                let mut due: Vec<(Notification, About)> = self
                    .puppet_due(seen, *now)
                    .into_iter()
                    .map(|e| (e.into(), About::PUPPET))
                    .collect();
                due.extend(self.certificates_due(Some(seen.certificates), *now));
                due
            }
            Observation::PuppetEvents(seen) => puppet_events_due(seen)
                .into_iter()
                .map(|(e, about)| (e.into(), about))
                .collect(),
            Observation::PuppetTick { now } => {
                let mut due: Vec<(Notification, About)> = self
                    .puppet_tick_due(*now)
                    .into_iter()
                    .map(|e| (e.into(), About::PUPPET))
                    .collect();
                due.extend(self.certificates_due(None, *now));
                due
            }
        }
    }

    /// The notifications due now that instance `index` was polled.
    pub fn redis_due(&mut self, index: u32, seen: &RedisObservation) -> Vec<RedisEvent> {
        let burst = self.bursts.judge(index, seen.acl_refusals.as_ref());
        match self.redis.get_mut(&index) {
            // The first observation is the baseline.
            None => {
                self.redis.insert(index, seen.clone());
                Vec::new()
            }
            Some(known) => {
                let mut due = redis_transitions(known, seen);
                due.extend(burst);
                known.remember(seen);
                due
            }
        }
    }

    /// Forgets instance `index`, removed from the configuration: its
    /// baseline. Its index is never used again.
    pub fn forget_redis(&mut self, index: u32) {
        self.redis.remove(&index);
        self.bursts.forget(index);
    }

    /// Whether instance `index` has a baseline.
    pub fn knows_redis(&self, index: u32) -> bool {
        self.redis.contains_key(&index)
    }

    /// The notifications due now that the Puppet files changed (or were
    /// read for the first time: the baseline, which judges no run but one
    /// still waiting for its report).
    pub fn puppet_due(&mut self, seen: &PuppetObservation, now_unix: i64) -> Vec<PuppetEvent> {
        self.puppet.puppet_due(seen, now_unix)
    }

    /// Called now and then: Puppet turns stale when no run ended within
    /// `puppet_stale_after`, and a run storm is over when no run ended
    /// within `puppet_min_run_interval`.
    pub fn puppet_tick_due(&mut self, now_unix: i64) -> Vec<PuppetEvent> {
        self.puppet.puppet_tick_due(now_unix)
    }

    /// The certificate notifications due with the ends just read (`None`
    /// on a tick: the last known ends, time passing), each about its row
    /// of `puppetCertificateTable`.
    pub fn certificates_due(
        &mut self,
        dates: Option<CertificateDates>,
        now_unix: i64,
    ) -> Vec<(Notification, About)> {
        self.puppet.certificates_due(dates, now_unix)
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{LinkStatus, Role};
    use crate::metrics::{PuppetEvent, PUPPET_SOURCE};
    use crate::puppet::observation::EventItem;
    use crate::puppet::RunStatus;
    use std::time::Duration;

    /// A judge and the names of what it found due so far, in order.
    struct Judged {
        judge: Judge,
        due: Vec<&'static str>,
    }

    impl Judged {
        fn new(settings: NotifyConfig) -> Judged {
            Judged {
                judge: Judge::of(&settings),
                due: Vec::new(),
            }
        }

        /// What the hub does with a new Puppet state.
        fn observe(&mut self, seen: &PuppetObservation, now: i64) {
            let due = self.judge.due(&Observation::Puppet {
                seen: seen.clone(),
                now,
            });
            self.due.extend(due.into_iter().map(|(n, _)| n.name()));
        }

        /// What the hub does on a Puppet tick.
        fn tick(&mut self, now: i64) {
            let due = self.judge.due(&Observation::PuppetTick { now });
            self.due.extend(due.into_iter().map(|(n, _)| n.name()));
        }

        fn taken(&mut self) -> Vec<&'static str> {
            std::mem::take(&mut self.due)
        }

        /// What was taken besides `puppetRunFinished`, which ends every
        /// new run, and how many of those.
        fn taken_besides_run_ends(&mut self) -> (Vec<&'static str>, usize) {
            let taken = self.taken();
            let ends = taken.iter().filter(|n| **n == "puppetRunFinished").count();
            let rest = taken.into_iter().filter(|n| *n != "puppetRunFinished");
            (rest.collect(), ends)
        }
    }

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
            ..RedisObservation::default()
        }
    }

    /// Each slow log row a poll says is due is one redisSlowCommand about
    /// that row of the instance, beside the poll's transitions.
    #[test]
    fn slow_commands_are_due_about_their_rows() {
        let mut judge = Judge::default();
        let first = obs(true, "a", "master", None, Some(false));
        assert!(judge
            .due(&Observation::Redis {
                index: 2,
                seen: first
            })
            .is_empty());
        let seen = RedisObservation {
            slow_commands: vec![7, 8],
            ..obs(true, "b", "master", None, Some(false))
        };
        let due = judge.due(&Observation::Redis { index: 2, seen });
        assert_eq!(
            due,
            [
                (RedisEvent::Restarted.into(), About::source(2)),
                (RedisEvent::SlowCommand.into(), About::row(2, 7)),
                (RedisEvent::SlowCommand.into(), About::row(2, 8)),
            ]
        );
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
    fn cluster_state_and_failing_slots_each_with_its_clear() {
        use crate::metrics::ClusterState;
        use RedisEvent::*;
        // As CLUSTER INFO's fields read (redis::observation's tests).
        let node = |state, pfail: u64, fail: u64| RedisObservation {
            up: true,
            cluster_state: Some(state),
            slots_failing: Some(pfail + fail > 0),
            ..RedisObservation::default()
        };
        let ok = node(ClusterState::Ok, 0, 0);
        let pfail = node(ClusterState::Ok, 5461, 0);
        assert_eq!(redis_transitions(&ok, &pfail), [ClusterSlotsFailing]);
        let failed = node(ClusterState::Fail, 0, 5461);
        // pfail became fail: the same slots, still failing.
        assert_eq!(redis_transitions(&pfail, &failed), [ClusterStateFail]);
        assert_eq!(
            redis_transitions(&failed, &ok),
            [ClusterStateOk, ClusterSlotsFailingCleared]
        );
        // A node that is no cluster node, or down, tells nothing.
        assert!(redis_transitions(&ok, &obs(true, "a", "master", None, None)).is_empty());
        let mut known = failed.clone();
        known.remember(&RedisObservation::down());
        assert_eq!(
            redis_transitions(&known, &ok),
            [InstanceUp, ClusterStateOk, ClusterSlotsFailingCleared]
        );
        // The first poll is the baseline: a cluster failing at start-up is not news.
        let mut judge = Judge::default();
        assert!(judge.redis_due(1, &failed).is_empty());
        assert_eq!(
            judge.redis_due(1, &ok),
            [ClusterStateOk, ClusterSlotsFailingCleared]
        );
    }

    #[test]
    fn a_sentinels_events_are_each_about_their_row() {
        use crate::metrics::SentinelEventKind;
        use crate::redis::observation::SentinelNews;
        let mut judge = Judge::default();
        let seen = RedisObservation {
            sentinel_events: vec![
                SentinelNews {
                    kind: SentinelEventKind::Failover,
                    row: 7,
                },
                SentinelNews {
                    kind: SentinelEventKind::QuorumLost,
                    row: 8,
                },
            ],
            ..obs(true, "s", "master", None, None)
        };
        // Judged by the poller's watch, whose first poll is its baseline:
        // the judge's own first observation does not hold them back.
        let due = judge.due(&Observation::Redis { index: 3, seen });
        assert_eq!(
            due,
            [
                (RedisEvent::Failover.into(), About::row(3, 7)),
                (RedisEvent::SentinelQuorumLost.into(), About::row(3, 8)),
            ]
        );
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

    #[test]
    fn puppet_runs_disable_and_staleness() {
        use crate::puppet::RunStatus::*;
        let mut j = Judged::new(NotifyConfig {
            puppet_stale_after: Duration::from_secs(3600),
            ..NotifyConfig::default()
        });
        let t = 1_795_336_000;
        j.observe(&run(t, Failed), t); // baseline: an old failure does not fire
        j.observe(&run(t, Failed), t + 5); // same run again: nothing
        let mut pending = run(t + 100, Changed);
        pending.report_pending = true;
        j.observe(&pending, t + 100); // waits for the report
        j.observe(&run(t + 100, Changed), t + 101); // changed, and recovered
        j.observe(&run(t + 200, Failed), t + 200);
        let disabled = PuppetObservation {
            disabled: true,
            ..run(t + 200, Failed)
        };
        j.observe(&disabled, t + 201);
        j.tick(t + 200 + 3599);
        j.tick(t + 200 + 3601); // stale now
        j.tick(t + 200 + 3700); // still stale: once only
        j.observe(&run(t + 9000, Unchanged), t + 9000); // enabled, recovered, fresh
        assert_eq!(
            j.taken(),
            [
                "puppetRunChanged",
                "puppetRunRecovered",
                "puppetRunFinished",
                "puppetRunFailed",
                "puppetRunFinished",
                "puppetAgentDisabled",
                "puppetAgentStale",
                "puppetRunRecovered",
                "puppetAgentStaleCleared",
                "puppetRunFinished",
                "puppetAgentEnabled",
            ]
        );
    }

    #[test]
    fn runs_that_never_converge_and_run_storms() {
        use crate::puppet::RunStatus::*;
        let mut j = Judged::new(NotifyConfig {
            puppet_min_run_interval: Duration::from_secs(60),
            ..NotifyConfig::default()
        });
        // `interval` after the run before; `looping`: K changing runs in a row.
        let run = |end: i64, interval: Option<u64>, looping: bool, status| PuppetObservation {
            run_interval: interval,
            not_converging: looping,
            ..run(end, status)
        };
        let t = 1_795_336_000;
        j.observe(&run(t, None, false, Changed), t); // baseline
        j.observe(&run(t + 30, Some(30), false, Changed), t + 30); // one quick run
        assert_eq!(j.taken_besides_run_ends(), (vec!["puppetRunChanged"], 1));
        let mut pending = run(t + 50, Some(20), true, Changed);
        pending.report_pending = true;
        j.observe(&pending, t + 50); // not judged before its report
        assert_eq!(j.taken_besides_run_ends(), (vec![], 0));
        j.observe(&run(t + 50, Some(20), true, Changed), t + 51); // two quick: a storm, a loop
        assert_eq!(
            j.taken_besides_run_ends(),
            (
                vec!["puppetRunChanged", "puppetNotConverging", "puppetRunStorm"],
                1
            )
        );
        j.observe(&run(t + 70, Some(20), true, Changed), t + 70); // once each
        j.tick(t + 100); // 30 s quiet: the storm goes on
        assert_eq!(j.taken_besides_run_ends(), (vec!["puppetRunChanged"], 1));
        j.observe(&run(t + 90, Some(20), false, Unchanged), t + 90);
        assert_eq!(j.taken_besides_run_ends(), (vec!["puppetConverged"], 1));
        j.tick(t + 149);
        assert!(j.taken().is_empty());
        j.tick(t + 150); // min_run_interval without a run
        j.tick(t + 151);
        assert_eq!(j.taken(), ["puppetRunStormCleared"]);
        // Quick runs again after the quiet: the count starts over.
        j.observe(&run(t + 200, Some(110), false, Unchanged), t + 200);
        j.observe(&run(t + 210, Some(10), false, Unchanged), t + 210);
        assert_eq!(j.taken_besides_run_ends(), (vec![], 2));
        j.observe(&run(t + 220, Some(10), false, Unchanged), t + 220);
        assert_eq!(j.taken_besides_run_ends(), (vec!["puppetRunStorm"], 1));
        // A slow run ends it too, without waiting for the tick.
        j.observe(&run(t + 400, Some(180), false, Unchanged), t + 400);
        assert_eq!(
            j.taken_besides_run_ends(),
            (vec!["puppetRunStormCleared"], 1)
        );
    }

    #[test]
    fn a_loop_going_at_start_up_is_the_baseline() {
        let mut judge = Judge::of(&NotifyConfig::default());
        let looping = PuppetObservation {
            not_converging: true,
            ..run(1000, RunStatus::Changed)
        };
        assert!(judge.puppet_due(&looping, 1000).is_empty());
        let converged = run(1300 + 3600, RunStatus::Unchanged);
        assert_eq!(
            judge.puppet_due(&converged, 1300 + 3600),
            [PuppetEvent::Converged, PuppetEvent::RunFinished]
        );
    }

    #[test]
    fn resource_events_within_budget_and_held_back_counts_are_due() {
        let seen = EventsObservation {
            items: vec![
                EventItem::Resource {
                    index: 7,
                    failed: true,
                },
                EventItem::RunBoundary { held_back: 1 },
            ],
        };
        let due = Judge::default().due(&Observation::PuppetEvents(seen));
        assert_eq!(
            due,
            [
                (
                    Notification::from(PuppetEvent::ResourceFailed),
                    About::row(PUPPET_SOURCE, 7)
                ),
                (PuppetEvent::ResourceEventsHeldBack.into(), About::PUPPET),
            ]
        );
    }
}
