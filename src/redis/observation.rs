//! What one poll of an instance tells about its health, for the
//! notifications: facts, not verdicts (the judge names the
//! notifications, `crate::judge`). Read from INFO through the table's
//! enumerations ([`crate::metrics`]), so a value the table does not know
//! is unknown here too, never a guess; and from the watches
//! ([`super::watch`]), which keep the baselines only they can (slow log
//! ids, ACL LOG counts, a sentinel's masters).

use super::info::Info;
use crate::metrics::{ClusterState, LinkStatus, OkErr, Role, SentinelEventKind};
use std::time::{Duration, Instant};

/// Fields are `None` when the poll could not tell (the instance is down,
/// the server does not report them, or reports a value the table does not
/// know).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RedisObservation {
    pub up: bool,
    pub run_id: Option<String>,
    pub role: Option<Role>,
    /// `master_link_status` of a replica.
    pub link: Option<LinkStatus>,
    /// A failed background save or AOF write.
    pub persistence_failed: Option<bool>,
    /// Whether the certificate of a `rediss://` server ends within the
    /// instance's `cert_expiry_warning` (`None`: no certificate seen).
    pub certificate_expiring: Option<bool>,
    /// The rows of `redisSlowCommandTable` this poll added that are over
    /// the threshold: one `redisSlowCommand` each. Of this poll only,
    /// never remembered.
    pub slow_commands: Vec<u32>,
    /// A cluster node's `cluster_state` (CLUSTER INFO).
    pub cluster_state: Option<ClusterState>,
    /// Whether a cluster node sees slots in pfail or fail
    /// (`cluster_slots_pfail` + `cluster_slots_fail` above 0).
    pub slots_failing: Option<bool>,
    /// What a sentinel's masters did since the last poll, each about its
    /// row of `redisSentinelEventTable` ([`super::failover`], which keeps
    /// the baseline): news, not state, so never remembered.
    pub sentinel_events: Vec<SentinelNews>,
    /// The ACL refusals that arrived since the last read of the log
    /// (`None`: ACL LOG not read in this poll).
    pub acl_refusals: Option<AclRefusals>,
    /// The newest row of `redisAclRefusalTable` (its `redisArNumber`):
    /// what a burst's notification is about.
    pub acl_newest_row: Option<u32>,
}

/// What a poll of one instance observed: the instance's number and what
/// it saw, judged against the poll before.
#[derive(Debug, Clone, PartialEq)]
pub struct Polled {
    pub index: u32,
    pub seen: RedisObservation,
}

/// An event of a sentinel's masters a poll found (its kind, a fact the
/// failover watch keeps a baseline for), about its row; the judge names
/// the notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SentinelNews {
    pub kind: SentinelEventKind,
    /// Its row of `redisSentinelEventTable`.
    pub row: u32,
}

/// New ACL refusals, and the instance's rule for a burst of them
/// (`acl_burst_refusals` within `acl_burst_window`), which the judge
/// applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AclRefusals {
    /// Refusals the log holds that its last read did not (0 at the first
    /// read, the baseline).
    pub new: u64,
    /// When the log was read.
    pub at: Instant,
    pub threshold: u64,
    pub window: Duration,
}

impl RedisObservation {
    pub fn from_info(info: &Info) -> Self {
        let label = |field: &str| info.get(field).map(str::trim);
        let failed = |field: &str| {
            label(field)
                .and_then(OkErr::from_label)
                .map(|s| s == OkErr::Err)
        };
        let persistence_failed = match (
            failed("rdb_last_bgsave_status"),
            failed("aof_last_write_status"),
        ) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(false) || b.unwrap_or(false)),
        };
        RedisObservation {
            up: true,
            run_id: info.get("run_id").map(|v| v.trim().to_string()),
            role: label("role").and_then(Role::from_label),
            link: label("master_link_status").and_then(LinkStatus::from_label),
            persistence_failed,
            certificate_expiring: None,
            slow_commands: Vec::new(),
            cluster_state: label("cluster_state").and_then(ClusterState::from_label),
            slots_failing: slots_failing(info),
            sentinel_events: Vec::new(),
            acl_refusals: None,
            acl_newest_row: None,
        }
    }

    pub fn down() -> Self {
        RedisObservation::default()
    }

    /// Whether the replication link is up (`None`: not a replica, or not
    /// known).
    pub fn link_up(&self) -> Option<bool> {
        self.link.map(|link| link == LinkStatus::Up)
    }

    /// Keeps the last known values: fields a new observation cannot tell
    /// (None) keep their old value, so a restart behind an outage still
    /// shows as a new run id.
    pub fn remember(&mut self, seen: &RedisObservation) {
        self.up = seen.up;
        if seen.run_id.is_some() {
            self.run_id.clone_from(&seen.run_id);
        }
        if seen.role.is_some() {
            self.role = seen.role;
        }
        if seen.link.is_some() {
            self.link = seen.link;
        }
        if seen.persistence_failed.is_some() {
            self.persistence_failed = seen.persistence_failed;
        }
        if seen.certificate_expiring.is_some() {
            self.certificate_expiring = seen.certificate_expiring;
        }
        if seen.cluster_state.is_some() {
            self.cluster_state = seen.cluster_state;
        }
        if seen.slots_failing.is_some() {
            self.slots_failing = seen.slots_failing;
        }
    }
}

/// Whether CLUSTER INFO counts slots in pfail or fail; `None` when it
/// says neither (not a cluster node, CLUSTER INFO refused).
fn slots_failing(info: &Info) -> Option<bool> {
    match (
        info.u64(&["cluster_slots_pfail"]),
        info.u64(&["cluster_slots_fail"]),
    ) {
        (None, None) => None,
        (pfail, fail) => Some(pfail.unwrap_or(0) > 0 || fail.unwrap_or(0) > 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observation_from_real_info() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/redis/7.0-replica-info.txt"
        ))
        .unwrap();
        let seen = RedisObservation::from_info(&Info::parse(&text));
        assert_eq!(seen.role, Some(Role::Replica));
        assert_eq!(seen.link_up(), Some(true));
        assert_eq!(seen.persistence_failed, Some(false));
        // A value the table does not know is unknown, not a number.
        let odd = Info::parse("role:leader\r\nmaster_link_status:flapping\r\n");
        let seen = RedisObservation::from_info(&odd);
        assert_eq!((seen.role, seen.link), (None, None));
    }

    #[test]
    fn a_cluster_nodes_state_and_failing_slots() {
        let node = |state: &str, pfail: u64, fail: u64| {
            RedisObservation::from_info(&Info::parse(&format!(
                "cluster_enabled:1\r\ncluster_state:{state}\r\ncluster_slots_pfail:{pfail}\r\ncluster_slots_fail:{fail}\r\n"
            )))
        };
        let ok = node("ok", 0, 0);
        assert_eq!(ok.cluster_state, Some(ClusterState::Ok));
        assert_eq!(ok.slots_failing, Some(false));
        assert_eq!(node("ok", 5461, 0).slots_failing, Some(true));
        let failed = node("fail", 0, 5461);
        assert_eq!(
            (failed.cluster_state, failed.slots_failing),
            (Some(ClusterState::Fail), Some(true))
        );
        // No cluster node: neither is known.
        let plain = RedisObservation::from_info(&Info::parse("role:master\r\n"));
        assert_eq!((plain.cluster_state, plain.slots_failing), (None, None));
    }
}
