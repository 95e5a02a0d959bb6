//! The notifications of both modules, each declared once, in
//! [`notifications!`]: its NOTIFICATION-TYPE name, its number below the
//! module's `.0` branch, its rate limit and the objects it carries.
//!
//! A module's notifications are a typed enum ([`RedisEvent`],
//! [`PuppetEvent`]; both together [`Notification`]), whose number is its
//! discriminant and whose [`NotificationDef`] is found by an exhaustive
//! match. The notifier, `[notifications] disabled` and the rate limits
//! key on that enum; a notification's name is for the wire's MIB, the
//! configuration file and the logs, never a key. The objects are resolved
//! against the catalogue when the crate is compiled ([`Carried`]): a name
//! no served object has, or a column no notification could say the row
//! of, is a compile error, and each object knows the instance it is sent
//! with (from its table's INDEX), so the notifier places a varbind without
//! a list of its own.

use super::*;

use std::fmt;

/// snmpTrapOID.0 (SNMPv2-MIB), the first varbind of every notification.
pub const SNMP_TRAP_OID: &[u32] = &[1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0];

/// Arc of the notifications below the module root (`redis.0.N`).
pub const NOTIFICATIONS_BRANCH: u32 = 0;

/// Which MIB module a notification (and its objects) belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mib {
    /// REDIS-SERVER-MIB: about a configured instance (its index is the
    /// source).
    Redis,
    /// PUPPET-AGENT-MIB: about the host's Puppet agent, source 0.
    Puppet,
}

/// The source number of Puppet: there is one agent a host.
pub const PUPPET_SOURCE: u32 = 0;

/// What a notification is about: the source it comes from (a Redis
/// instance's index; 0 for Puppet, the one agent of the host) and, when
/// it is about one row of a table of that source's, the row's number (an
/// alarm's `redisAlarmNumber`, an event's `puppetEventIndex`). Rate limits
/// count per source; the row places the row's columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct About {
    pub source: u32,
    pub row: Option<u32>,
}

impl About {
    /// About the host's Puppet agent as a whole.
    pub const PUPPET: About = About::source(PUPPET_SOURCE);

    /// About source `source` as a whole.
    pub const fn source(source: u32) -> About {
        About { source, row: None }
    }

    /// About row `row` of a table of source `source`.
    pub const fn row(source: u32, row: u32) -> About {
        About {
            source,
            row: Some(row),
        }
    }
}

impl fmt::Display for About {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "source {}", self.source)?;
        match self.row {
            Some(row) => write!(f, ", row {row}"),
            None => Ok(()),
        }
    }
}

/// The instance a carried object is sent with: the arcs after its OID,
/// formed from what the notification is [`About`]. Each follows from
/// where the object sits in the catalogue (see [`Carried`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suffix {
    /// A scalar: `.0`.
    Scalar,
    /// A column of a table with one row per source (`redisInstanceTable`
    /// and the tables that AUGMENT it): `.source`.
    Source,
    /// A column of a table indexed by the source and a number of the row's
    /// own (`redisAlarmTable`): `.source.row`.
    SourceAndRow,
    /// A column of a table indexed by a number of the row's own alone
    /// (`puppetEventTable`): `.row`.
    Row,
}

/// One object a notification carries, resolved in the catalogue, and the
/// instance it is sent with.
#[derive(Debug, Clone, Copy)]
pub struct Carried {
    pub object: &'static ObjectDef,
    pub suffix: Suffix,
}

impl Carried {
    /// The arcs after the object's OID in a notification about `about`;
    /// `None` for a column of a row when the notification names no row
    /// (then the object is left out, as an object without a value is).
    pub fn instance(&self, about: About) -> Option<Vec<u32>> {
        Some(match self.suffix {
            Suffix::Scalar => vec![0],
            Suffix::Source => vec![about.source],
            Suffix::SourceAndRow => vec![about.source, about.row?],
            Suffix::Row => vec![about.row?],
        })
    }
}

/// How a notification is rate limited (the limits are settings:
/// `crate::config::NotifyConfig`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// At most `max_per_minute` of it from one source in any minute: a
    /// transition that flaps is said a few times, then counted in the log.
    PerSource,
    /// Each is about a row of its own (a resource event of Puppet's log),
    /// and one run makes many at once: all of these together, at most
    /// `puppet_resource_per_minute` in any minute. (The events log's
    /// per-run budget comes first, but the run boundaries that renew it
    /// are lines of the log too.)
    Resources,
    /// An alarm raised: judged on values, where a trigger count and a
    /// rearm value keep one alarm from flapping, but a server can make
    /// thousands of rows cross at once (80,000 replicas toggling their
    /// lag): at most `alarm_raises_per_minute` of a source's raises, all
    /// its alarms together, in any minute. A raise held back holds back
    /// its rearm ([`Limit::Rearm`]).
    Raise,
    /// An alarm rearmed: sent exactly when its raise was, so that a
    /// manager neither keeps an alarm nothing clears nor sees a rearm of
    /// one it never saw raised. Bounded by the raises.
    Rearm,
}

/// How grave a notification is, for the managers that file it: the
/// OpenNMS event's `<severity>` and the snmptt `EVENT` line's severity
/// both come from here. A whole thing lost or failed (an instance down,
/// a failed save, a failed Puppet run) is Critical; a part of one (a
/// replica's link, one resource of a run) Major; a return, clearing or
/// recovery Normal; the rest sit between. The names are OpenNMS's
/// (snmptt takes any word).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Normal,
    Warning,
    Minor,
    Major,
    Critical,
}

impl Severity {
    /// Its name, as OpenNMS and snmptt spell it.
    pub const fn name(self) -> &'static str {
        match self {
            Severity::Normal => "Normal",
            Severity::Warning => "Warning",
            Severity::Minor => "Minor",
            Severity::Major => "Major",
            Severity::Critical => "Critical",
        }
    }
}

/// One NOTIFICATION-TYPE.
#[derive(Debug, Clone, Copy)]
pub struct NotificationDef {
    /// Its descriptor in the MIB, e.g. `redisInstanceDown`.
    pub name: &'static str,
    /// Its number below the module's notifications branch.
    pub number: u32,
    pub mib: Mib,
    /// Its OBJECTS, in the MIB's order.
    pub objects: &'static [Carried],
    pub limit: Limit,
    pub severity: Severity,
}

impl NotificationDef {
    /// The names of its objects, in order: the MIB's OBJECTS clause.
    pub fn object_names(&self) -> Vec<&'static str> {
        self.objects.iter().map(|c| c.object.name).collect()
    }
}

/// Whether two names are the same (`==` on `str` is not `const`).
const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The object named `name` in `lists`, if one is.
const fn find(lists: &[&'static [ObjectDef]], name: &str) -> Option<&'static ObjectDef> {
    let mut l = 0;
    while l < lists.len() {
        let list = lists[l];
        let mut i = 0;
        while i < list.len() {
            if same_name(list[i].name, name) {
                return Some(&list[i]);
            }
            i += 1;
        }
        l += 1;
    }
    None
}

/// The object `name` of module `mib` as a notification carries it, found
/// when the crate is compiled: a column of one of the module's tables
/// ([`TABLES`], [`PUPPET_TABLES`]), placed by that table's INDEX, or a
/// PUPPET-AGENT-MIB scalar ([`PUPPET_SCALAR_LISTS`]). Anything else
/// stops the build: the panic names the object, its line says why (a
/// constant's panic takes one argument).
const fn carried(mib: Mib, name: &str) -> Carried {
    let (tables, scalars): (&[TableDef], &[&[ObjectDef]]) = match mib {
        // The legacy scalars show only the first instance, which a
        // notification could not tell: REDIS-SERVER-MIB's carry columns.
        Mib::Redis => (TABLES, &[]),
        Mib::Puppet => (PUPPET_TABLES, PUPPET_SCALAR_LISTS),
    };
    if let Some(object) = find(scalars, name) {
        return Carried {
            object,
            suffix: Suffix::Scalar,
        };
    }
    let mut t = 0;
    while t < tables.len() {
        let table = &tables[t];
        if let Some(object) = find(&[table.columns], name) {
            let suffix = match table.index {
                RowIndex::Instance => Suffix::Source,
                RowIndex::InstanceAndNumber { .. } => Suffix::SourceAndRow,
                RowIndex::Row { .. } => Suffix::Row,
                // A row named by a string: no notification can say which.
                RowIndex::InstanceAndName { .. } | RowIndex::InstanceNameAndName { .. } => {
                    panic!("{}", name) // a column of a table indexed by a name
                }
                // A bucket of a histogram: no notification is about one.
                RowIndex::InstanceDbTypeBucket { .. } => {
                    panic!("{}", name) // a column of a table indexed by a bucket
                }
            };
            return Carried { object, suffix };
        }
        t += 1;
    }
    panic!("{}", name) // no object of the module has this name
}

/// [`carried`] for each of `names`, in order.
const fn carry<const N: usize>(mib: Mib, names: [&str; N]) -> [Carried; N] {
    let placeholder = Carried {
        object: &TABLES[0].columns[0],
        suffix: Suffix::Source,
    };
    let mut objects = [placeholder; N];
    let mut i = 0;
    while i < N {
        objects[i] = carried(mib, names[i]);
        i += 1;
    }
    objects
}

/// Declares a module's notifications as a typed enum, the number as its
/// discriminant, with `ALL`, `DEFS` (its definitions, in the MIB's order),
/// `def()` (an exhaustive match, each [`NotificationDef`] a constant),
/// `from_name` and its way into [`Notification`]. Each entry is
/// `Variant = number => "mibName", Limit, Severity, [objects…];`, the objects by
/// their MIB names (or a constant array of them), resolved by [`carry`]
/// when the crate is compiled.
macro_rules! notifications {
    (
        $(#[$meta:meta])*
        $mib:ident: $event:ident {
            $($(#[$vmeta:meta])* $variant:ident = $number:literal => $name:literal, $limit:ident, $severity:ident, $objects:expr;)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u32)]
        pub enum $event {
            $($(#[$vmeta])* $variant = $number,)+
        }

        impl $event {
            /// Every one, in the MIB's order.
            pub const ALL: &'static [$event] = &[$($event::$variant),+];

            /// The definition of each, in the MIB's order.
            pub const DEFS: &'static [NotificationDef] = &[$(*$event::$variant.def()),+];

            /// Its definition.
            pub const fn def(self) -> &'static NotificationDef {
                match self {
                    $($event::$variant => const {
                        &NotificationDef {
                            name: $name,
                            number: $number,
                            mib: Mib::$mib,
                            objects: &carry(Mib::$mib, $objects),
                            limit: Limit::$limit,
                            severity: Severity::$severity,
                        }
                    },)+
                }
            }

            /// Its number below the module's notifications branch.
            pub const fn number(self) -> u32 {
                self as u32
            }

            /// The one named `name` in the MIB.
            pub fn from_name(name: &str) -> Option<$event> {
                match name {
                    $($name => Some($event::$variant),)+
                    _ => None,
                }
            }
        }

        impl From<$event> for Notification {
            fn from(event: $event) -> Notification {
                Notification::$mib(event)
            }
        }
    };
}

/// The objects of a threshold notification: the instance's name and the
/// alarm's row of `redisAlarmTable`.
const REDIS_ALARM_ROW: [&str; 8] = [
    "redisInstanceName",
    "redisAlarmName",
    "redisAlarmObject",
    "redisAlarmObjectName",
    "redisAlarmValue",
    "redisAlarmRaisedValue",
    "redisAlarmTrigger",
    "redisAlarmRearm",
];

/// The objects of a slow command notification: the instance's name and
/// the entry's row of `redisSlowCommandTable`, the arguments last (a
/// receiver that reads varbinds by position finds the others in place
/// whether they are sent or not).
const REDIS_SLOW_COMMAND_ROW: [&str; 9] = [
    "redisInstanceName",
    "redisScId",
    "redisScTime",
    "redisScDuration",
    "redisScCommand",
    "redisScClientAddr",
    "redisScClientName",
    "redisScSkipped",
    // Last: absent unless slow_command_args, it shifts no other's place.
    "redisScArgs",
];

/// The objects of `redisFailover`: the sentinel's name and the event's
/// row of `redisSentinelEventTable`, with the master's old and new
/// addresses and epochs.
const SENTINEL_FAILOVER_ROW: [&str; 8] = [
    "redisInstanceName",
    "redisSeMaster",
    "redisSeOldAddress",
    "redisSeOldPort",
    "redisSeAddress",
    "redisSePort",
    "redisSeOldEpoch",
    "redisSeEpoch",
];

/// The objects of a master objectively down or back.
const SENTINEL_MASTER_ROW: [&str; 4] = [
    "redisInstanceName",
    "redisSeMaster",
    "redisSeAddress",
    "redisSePort",
];

/// The objects of a master's quorum lost or reached: with CKQUORUM's words.
const SENTINEL_QUORUM_ROW: [&str; 5] = [
    "redisInstanceName",
    "redisSeMaster",
    "redisSeAddress",
    "redisSePort",
    "redisSeQuorum",
];

/// The objects of a cluster node's state and slots notifications.
const CLUSTER_STATE: [&str; 7] = [
    "redisInstanceName",
    "redisInstanceAddress",
    "redisClusterState",
    "redisClusterSlotsAsgn",
    "redisClusterSlotsOk",
    "redisClusterSlotsPfail",
    "redisClusterSlotsFail",
];

/// The objects of a resource notification: a row of `puppetEventTable`.
const PUPPET_EVENT_ROW: [&str; 7] = [
    "puppetEventTime",
    "puppetEventLevel",
    "puppetEventResourceType",
    "puppetEventTitle",
    "puppetEventProperty",
    "puppetEventMessage",
    "puppetEventConfigVersion",
];

/// The objects of an ACL refusal notification: the instance's name and
/// address, and the newest row of `redisAclRefusalTable`.
const ACL_REFUSAL_ROW: [&str; 7] = [
    "redisInstanceName",
    "redisInstanceAddress",
    "redisArReason",
    "redisArUser",
    "redisArAddress",
    "redisArCount",
    "redisArLastSeen",
];

/// The objects of a certificate notification: a row of
/// `puppetCertificateTable`.
const PUPPET_CERTIFICATE_ROW: [&str; 6] = [
    "puppetCertificateKind",
    "puppetCertificatePath",
    "puppetCertificateState",
    "puppetCertificateNotAfter",
    "puppetCertificateSecondsLeft",
    "puppetCertificateSubject",
];

/// The objects of `puppetRunFinished`: the run's outcome, counts and
/// version, the ids that tie it to whoever asked for it, and the host's
/// role (what a manager's inventory keeps).
const PUPPET_RUN_END: [&str; 9] = [
    "puppetLastRunStatus",
    "puppetLastRunTime",
    "puppetResourcesChanged",
    "puppetResourcesFailed",
    "puppetChangesTotal",
    "puppetConfigVersion",
    "puppetLastRunTransaction",
    "puppetLastRunJobId",
    "puppetRole",
];

notifications! {
    /// A notification of REDIS-SERVER-MIB, about a configured instance.
    Redis: RedisEvent {
        InstanceDown = 1 => "redisInstanceDown", PerSource, Critical,
            ["redisInstanceName", "redisInstanceAddress", "redisInstanceLastError"];
        InstanceUp = 2 => "redisInstanceUp", PerSource, Normal,
            ["redisInstanceName", "redisInstanceAddress"];
        Restarted = 3 => "redisRestarted", PerSource, Warning,
            ["redisInstanceName", "redisSrvRunId", "redisSrvUptime"];
        RoleChanged = 4 => "redisRoleChanged", PerSource, Warning,
            ["redisInstanceName", "redisReplRole"];
        ReplicationLinkDown = 5 => "redisReplicationLinkDown", PerSource, Major,
            ["redisInstanceName", "redisReplMasterHost", "redisReplMasterPort", "redisReplLinkStatus"];
        ReplicationLinkUp = 6 => "redisReplicationLinkUp", PerSource, Normal,
            ["redisInstanceName", "redisReplMasterHost", "redisReplMasterPort", "redisReplLinkStatus"];
        PersistenceFailed = 7 => "redisPersistenceFailed", PerSource, Critical,
            ["redisInstanceName", "redisPstBgsaveStatus", "redisPstAofWriteStatus"];
        CertificateExpiring = 8 => "redisCertificateExpiring", PerSource, Warning,
            ["redisInstanceName", "redisInstanceAddress", "redisInstanceCertSubject", "redisInstanceCertNotAfter", "redisInstanceCertExpiresIn"];
        CertificateExpiringCleared = 9 => "redisCertificateExpiringCleared", PerSource, Normal,
            ["redisInstanceName", "redisInstanceAddress", "redisInstanceCertSubject", "redisInstanceCertNotAfter", "redisInstanceCertExpiresIn"];
        /// An alarm of `[[alarm]]` raised (`crate::alarms`), not a
        /// transition: about the alarm's row (`instance.number`).
        ThresholdCrossed = 10 => "redisThresholdCrossed", Raise, Warning, REDIS_ALARM_ROW;
        /// An alarm rearmed.
        ThresholdRearmed = 11 => "redisThresholdRearmed", Rearm, Normal, REDIS_ALARM_ROW;
        /// A new slow log entry over `slow_command_threshold`: about its
        /// row of `redisSlowCommandTable` (`instance.number`).
        SlowCommand = 12 => "redisSlowCommand", PerSource, Warning, REDIS_SLOW_COMMAND_ROW;
        /// More than `acl_burst_refusals` refusals (ACL LOG) within
        /// `acl_burst_window` (`crate::judge::redis::BurstJudge`): about
        /// the newest row of `redisAclRefusalTable`.
        AuthFailureBurst = 13 => "redisAuthFailureBurst", PerSource, Warning, ACL_REFUSAL_ROW;
        AuthFailureBurstCleared = 14 => "redisAuthFailureBurstCleared", PerSource, Normal, ACL_REFUSAL_ROW;
        /// A sentinel's master moved (a new address or configuration
        /// epoch): about its row of `redisSentinelEventTable`, as are the
        /// four after it (`crate::redis::failover`).
        Failover = 15 => "redisFailover", PerSource, Major, SENTINEL_FAILOVER_ROW;
        SentinelMasterDown = 16 => "redisSentinelMasterDown", PerSource, Critical, SENTINEL_MASTER_ROW;
        SentinelMasterUp = 17 => "redisSentinelMasterUp", PerSource, Normal, SENTINEL_MASTER_ROW;
        SentinelQuorumLost = 18 => "redisSentinelQuorumLost", PerSource, Major, SENTINEL_QUORUM_ROW;
        SentinelQuorumReached = 19 => "redisSentinelQuorumReached", PerSource, Normal, SENTINEL_QUORUM_ROW;
        /// A cluster node's `cluster_state` (CLUSTER INFO) went to fail.
        ClusterStateFail = 20 => "redisClusterStateFail", PerSource, Critical, CLUSTER_STATE;
        ClusterStateOk = 21 => "redisClusterStateOk", PerSource, Normal, CLUSTER_STATE;
        /// Slots in pfail or fail (`cluster_slots_pfail`,
        /// `cluster_slots_fail`) went from none to some.
        ClusterSlotsFailing = 22 => "redisClusterSlotsFailing", PerSource, Major, CLUSTER_STATE;
        ClusterSlotsFailingCleared = 23 => "redisClusterSlotsFailingCleared", PerSource, Normal, CLUSTER_STATE;
    }
}

notifications! {
    /// A notification of PUPPET-AGENT-MIB, about the host's Puppet agent.
    Puppet: PuppetEvent {
        RunFailed = 1 => "puppetRunFailed", PerSource, Critical,
            ["puppetLastRunStatus", "puppetLastRunTime", "puppetResourcesFailed", "puppetResourcesChanged", "puppetConfigVersion", "puppetFirstError"];
        RunChanged = 2 => "puppetRunChanged", PerSource, Normal,
            ["puppetLastRunStatus", "puppetLastRunTime", "puppetResourcesChanged", "puppetChangesTotal", "puppetConfigVersion"];
        CachedCatalogUsed = 3 => "puppetCachedCatalogUsed", PerSource, Warning,
            ["puppetCachedCatalogStatus", "puppetLastRunTime", "puppetConfigVersion", "puppetFirstError"];
        RunRecovered = 4 => "puppetRunRecovered", PerSource, Normal,
            ["puppetLastRunStatus", "puppetLastRunTime", "puppetConfigVersion"];
        AgentStale = 5 => "puppetAgentStale", PerSource, Minor,
            ["puppetLastRunTime", "puppetLastRunAge"];
        AgentStaleCleared = 6 => "puppetAgentStaleCleared", PerSource, Normal,
            ["puppetLastRunTime", "puppetLastRunAge"];
        AgentDisabled = 7 => "puppetAgentDisabled", PerSource, Warning,
            ["puppetDisabled", "puppetDisabledMessage"];
        AgentEnabled = 8 => "puppetAgentEnabled", PerSource, Normal,
            ["puppetDisabled"];
        /// A resource event of the events log: about its row of
        /// `puppetEventTable`.
        ResourceChanged = 9 => "puppetResourceChanged", Resources, Normal, PUPPET_EVENT_ROW;
        ResourceFailed = 10 => "puppetResourceFailed", Resources, Major, PUPPET_EVENT_ROW;
        ResourceEventsHeldBack = 11 => "puppetResourceEventsHeldBack", PerSource, Warning,
            ["puppetEventsHeldBack", "puppetEventsRunVersion"];
        NotConverging = 12 => "puppetNotConverging", PerSource, Minor,
            ["puppetChangingRuns", "puppetConvergeRuns", "puppetLoopResourceCount", "puppetLoopResources", "puppetLastRunTime", "puppetConfigVersion"];
        Converged = 13 => "puppetConverged", PerSource, Normal,
            ["puppetChangingRuns", "puppetLastRunTime", "puppetConfigVersion"];
        RunStorm = 14 => "puppetRunStorm", PerSource, Minor,
            ["puppetRunInterval", "puppetRunsLastHour", "puppetLastRunTime"];
        RunStormCleared = 15 => "puppetRunStormCleared", PerSource, Normal,
            ["puppetRunInterval", "puppetRunsLastHour", "puppetLastRunTime", "puppetLastRunAge"];
        /// About a row of `puppetCertificateTable` (the kind's number):
        /// fewer seconds left than `certificate_warning_days`.
        CertificateExpiring = 16 => "puppetCertificateExpiring", PerSource, Warning, PUPPET_CERTIFICATE_ROW;
        /// That row's file renewed: more seconds left than the warning.
        CertificateExpiringCleared = 17 => "puppetCertificateExpiringCleared", PerSource, Normal, PUPPET_CERTIFICATE_ROW;
        /// The end of every run, changed or not: what a manager needs to
        /// know the outcome of a run it asked for (matched by its job id).
        RunFinished = 18 => "puppetRunFinished", PerSource, Normal, PUPPET_RUN_END;
    }
}

/// The notifications of REDIS-SERVER-MIB, in the MIB's order.
pub const REDIS_NOTIFICATIONS: &[NotificationDef] = RedisEvent::DEFS;

/// The notifications of PUPPET-AGENT-MIB, in the MIB's order.
pub const PUPPET_NOTIFICATIONS: &[NotificationDef] = PuppetEvent::DEFS;

/// A notification of either module: what `[notifications] disabled` and
/// the rate limits are keyed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Notification {
    Redis(RedisEvent),
    Puppet(PuppetEvent),
}

impl Notification {
    /// Every notification the agent can send, REDIS-SERVER-MIB's first.
    pub fn all() -> impl Iterator<Item = Notification> {
        let redis = RedisEvent::ALL.iter().map(|&e| Notification::from(e));
        redis.chain(PuppetEvent::ALL.iter().map(|&e| Notification::from(e)))
    }

    /// Its definition.
    pub const fn def(self) -> &'static NotificationDef {
        match self {
            Notification::Redis(event) => event.def(),
            Notification::Puppet(event) => event.def(),
        }
    }

    /// Its name in the MIB.
    pub const fn name(self) -> &'static str {
        self.def().name
    }

    /// The table whose every row it carries after its OBJECTS, row by row,
    /// each row's columns in order. SNMPv2 lets the sender append
    /// variables after those the OBJECTS clause names (RFC 3416 4.2.6: "If
    /// any additional variables are being included (at the option of the
    /// generating SNMP entity), then each is copied to the variable-bindings
    /// field"); the MIB's DESCRIPTION of the notification says which.
    /// `puppetRunFinished` carries `puppetFactTable`: a manager's inventory
    /// learns the host's facts with its run's end, asking nothing.
    pub const fn trailing_rows(self) -> Option<&'static TableDef> {
        match self {
            Notification::Puppet(PuppetEvent::RunFinished) => Some(&PUPPET_FACT_TABLE),
            _ => None,
        }
    }

    /// The notification a configuration names (by its MIB name).
    pub fn from_name(name: &str) -> Option<Notification> {
        RedisEvent::from_name(name)
            .map(Notification::Redis)
            .or_else(|| PuppetEvent::from_name(name).map(Notification::Puppet))
    }
}

impl fmt::Display for Notification {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Every notification the agent can send.
pub fn all_notifications() -> impl Iterator<Item = &'static NotificationDef> {
    Notification::all().map(Notification::def)
}
