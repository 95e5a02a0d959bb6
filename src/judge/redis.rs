//! Redis's rules: an instance down and up, restarted, its role, its
//! replication link, persistence, its TLS certificate, a cluster's state
//! and slots, bursts of ACL refusals, and what a sentinel's masters did.

use crate::metrics::{About, ClusterState, RedisEvent, SentinelEventKind};
use crate::redis::observation::{AclRefusals, RedisObservation};
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

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
    match (before.cluster_state, after.cluster_state) {
        (Some(ClusterState::Ok), Some(ClusterState::Fail)) => {
            due.push(RedisEvent::ClusterStateFail)
        }
        (Some(ClusterState::Fail), Some(ClusterState::Ok)) => due.push(RedisEvent::ClusterStateOk),
        _ => {}
    }
    match (before.slots_failing, after.slots_failing) {
        (Some(false), Some(true)) => due.push(RedisEvent::ClusterSlotsFailing),
        (Some(true), Some(false)) => due.push(RedisEvent::ClusterSlotsFailingCleared),
        _ => {}
    }
    due
}

/// What a notification of instance `index` is about: the instance, or,
/// for a burst of ACL refusals, the newest row of its
/// `redisAclRefusalTable` (who was refused last), when it has one.
pub(super) fn redis_about(event: RedisEvent, index: u32, seen: &RedisObservation) -> About {
    match (event, seen.acl_newest_row) {
        (RedisEvent::AuthFailureBurst | RedisEvent::AuthFailureBurstCleared, Some(row)) => {
            About::row(index, row)
        }
        _ => About::source(index),
    }
}

/// The notification a sentinel's event is.
pub fn sentinel_event(kind: SentinelEventKind) -> RedisEvent {
    match kind {
        SentinelEventKind::Failover => RedisEvent::Failover,
        SentinelEventKind::MasterDown => RedisEvent::SentinelMasterDown,
        SentinelEventKind::MasterUp => RedisEvent::SentinelMasterUp,
        SentinelEventKind::QuorumLost => RedisEvent::SentinelQuorumLost,
        SentinelEventKind::QuorumReached => RedisEvent::SentinelQuorumReached,
    }
}

/// Whether refusals come in a burst: more than `threshold` within
/// `window`. Raised when the refusals of the last window pass the
/// threshold; cleared when they fall to half of it or fewer, so a rate
/// that hovers at the threshold does not flap. Pure: fed plain numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BurstJudge {
    threshold: u64,
    window_ms: u64,
    /// The window as configured, to tell a new rule.
    window: Duration,
    /// (milliseconds on the caller's clock, refusals then), oldest first,
    /// none older than the window.
    arrivals: VecDeque<(u64, u64)>,
    burst: bool,
}

impl BurstJudge {
    pub fn new(threshold: u64, window: Duration) -> Self {
        BurstJudge {
            threshold,
            window_ms: u64::try_from(window.as_millis()).unwrap_or(u64::MAX),
            window,
            arrivals: VecDeque::new(),
            burst: false,
        }
    }

    /// `new` refusals arrived at `now_ms` (a monotonic clock): whether
    /// the refusals are in a burst now.
    pub fn observe(&mut self, now_ms: u64, new: u64) -> bool {
        if new > 0 {
            self.arrivals.push_back((now_ms, new));
        }
        while let Some(&(at, _)) = self.arrivals.front() {
            if now_ms.saturating_sub(at) >= self.window_ms {
                self.arrivals.pop_front();
            } else {
                break;
            }
        }
        let recent = self.recent();
        if recent > self.threshold {
            self.burst = true;
        } else if recent.saturating_mul(2) <= self.threshold {
            self.burst = false;
        }
        self.burst
    }

    /// Refusals within the window, as of the last observation.
    pub fn recent(&self) -> u64 {
        self.arrivals
            .iter()
            .fold(0u64, |sum, (_, n)| sum.saturating_add(*n))
    }
}

/// The burst rule of each instance, applied to the refusals its polls
/// report.
#[derive(Debug, Clone, Default)]
pub(super) struct Bursts {
    /// By instance: the rule, and the instant its clock counts from.
    by_instance: HashMap<u32, (BurstJudge, Instant)>,
}

impl Bursts {
    /// `AuthFailureBurst` or its clear when `refusals` (`None`: the log was
    /// not read) turn the burst on or off. The first read of an instance,
    /// or one under a new rule (its settings reloaded), is the baseline.
    pub(super) fn judge(
        &mut self,
        index: u32,
        refusals: Option<&AclRefusals>,
    ) -> Option<RedisEvent> {
        let refusals = refusals?;
        let entry = self.by_instance.get_mut(&index).filter(|(judge, _)| {
            judge.threshold == refusals.threshold && judge.window == refusals.window
        });
        let Some((judge, epoch)) = entry else {
            let mut judge = BurstJudge::new(refusals.threshold, refusals.window);
            judge.observe(0, refusals.new);
            self.by_instance.insert(index, (judge, refusals.at));
            return None;
        };
        let now_ms = refusals.at.saturating_duration_since(*epoch).as_millis();
        let before = judge.burst;
        let after = judge.observe(u64::try_from(now_ms).unwrap_or(u64::MAX), refusals.new);
        match (before, after) {
            (false, true) => Some(RedisEvent::AuthFailureBurst),
            (true, false) => Some(RedisEvent::AuthFailureBurstCleared),
            _ => None,
        }
    }

    /// Forgets a removed instance.
    pub(super) fn forget(&mut self, index: u32) {
        self.by_instance.remove(&index);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_is_more_than_the_threshold_within_the_window_and_clears_at_half() {
        let mut judge = BurstJudge::new(10, Duration::from_secs(60));
        let s = |secs: u64| secs * 1000;
        assert!(!judge.observe(s(0), 10), "10 is not more than 10");
        assert!(judge.observe(s(10), 1));
        assert_eq!(judge.recent(), 11);
        // The first ten leave the window: one is half of 10 or fewer.
        assert!(!judge.observe(s(60), 0));
        assert_eq!(judge.recent(), 1);
        // Seven still in the window: more than half, the burst goes on.
        let mut judge = BurstJudge::new(10, Duration::from_secs(60));
        assert!(!judge.observe(s(0), 4));
        assert!(judge.observe(s(10), 7));
        assert!(judge.observe(s(60), 0));
        assert_eq!(judge.recent(), 7);
        assert!(!judge.observe(s(70), 0));
        assert_eq!(judge.recent(), 0);
        // Refusals spread thinly never make a burst.
        let mut thin = BurstJudge::new(10, Duration::from_secs(60));
        for minute in 0..100 {
            assert!(!thin.observe(s(minute * 7), 1));
        }
        // Nothing arrives: the queue stays empty, whatever the time.
        let mut quiet = BurstJudge::new(0, Duration::from_secs(1));
        assert!(!quiet.observe(u64::MAX, 0));
        assert!(quiet.observe(u64::MAX, 1));
    }

    #[test]
    fn a_burst_of_reported_refusals_is_due_and_clears() {
        let start = Instant::now();
        let refusals = |new, secs| AclRefusals {
            new,
            at: start + Duration::from_secs(secs),
            threshold: 2,
            window: Duration::from_secs(60),
        };
        let mut bursts = Bursts::default();
        // The first read is the baseline, whatever it holds.
        assert_eq!(bursts.judge(1, Some(&refusals(0, 0))), None);
        assert_eq!(bursts.judge(1, None), None);
        assert_eq!(
            bursts.judge(1, Some(&refusals(3, 10))),
            Some(RedisEvent::AuthFailureBurst)
        );
        assert_eq!(bursts.judge(1, Some(&refusals(0, 20))), None);
        assert_eq!(
            bursts.judge(1, Some(&refusals(0, 70))),
            Some(RedisEvent::AuthFailureBurstCleared)
        );
        // A new rule (settings reloaded) is a new baseline.
        let mut stricter = refusals(5, 80);
        stricter.threshold = 1;
        assert_eq!(bursts.judge(1, Some(&stricter)), None);
    }
}
