//! The notifications of both modules and the objects each carries.

/// snmpTrapOID.0 (SNMPv2-MIB), the first varbind of every notification.
pub const SNMP_TRAP_OID: &[u32] = &[1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0];

/// Arc of the notifications below the module root (`redis.0.N`).
pub const NOTIFICATIONS_BRANCH: u32 = 0;

/// Which MIB module a notification (and its objects) belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mib {
    /// REDIS-SERVER-MIB: per-instance objects, sent with the instance index.
    Redis,
    /// PUPPET-AGENT-MIB: scalars, sent with `.0`, and the columns of
    /// `puppetEventTable`, sent with the row's index.
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

const fn notification(
    mib: Mib,
    name: &'static str,
    number: u32,
    objects: &'static [&'static str],
) -> NotificationDef {
    NotificationDef {
        name,
        number,
        objects,
        mib,
    }
}

const fn redis_notification(
    name: &'static str,
    number: u32,
    objects: &'static [&'static str],
) -> NotificationDef {
    notification(Mib::Redis, name, number, objects)
}

const fn puppet_notification(
    name: &'static str,
    number: u32,
    objects: &'static [&'static str],
) -> NotificationDef {
    notification(Mib::Puppet, name, number, objects)
}

/// The notifications of REDIS-SERVER-MIB.
#[rustfmt::skip]
pub const REDIS_NOTIFICATIONS: &[NotificationDef] = &[
    redis_notification("redisInstanceDown", 1, &["redisInstanceName", "redisInstanceAddress", "redisInstanceLastError"]),
    redis_notification("redisInstanceUp", 2, &["redisInstanceName", "redisInstanceAddress"]),
    redis_notification("redisRestarted", 3, &["redisInstanceName", "redisSrvRunId", "redisSrvUptime"]),
    redis_notification("redisRoleChanged", 4, &["redisInstanceName", "redisReplRole"]),
    redis_notification("redisReplicationLinkDown", 5, &["redisInstanceName", "redisReplMasterHost", "redisReplMasterPort", "redisReplLinkStatus"]),
    redis_notification("redisReplicationLinkUp", 6, &["redisInstanceName", "redisReplMasterHost", "redisReplMasterPort", "redisReplLinkStatus"]),
    redis_notification("redisPersistenceFailed", 7, &["redisInstanceName", "redisPstBgsaveStatus", "redisPstAofWriteStatus"]),
    redis_notification("redisCertificateExpiring", 8, &["redisInstanceName", "redisInstanceAddress", "redisInstanceCertSubject", "redisInstanceCertNotAfter", "redisInstanceCertExpiresIn"]),
    redis_notification("redisCertificateExpiringCleared", 9, &["redisInstanceName", "redisInstanceAddress", "redisInstanceCertSubject", "redisInstanceCertNotAfter", "redisInstanceCertExpiresIn"]),
    // Sent with the alarm's row of redisAlarmTable (instance.number) for
    // its columns, the instance alone for redisInstanceName.
    redis_notification("redisThresholdCrossed", 10, REDIS_ALARM_ROW),
    redis_notification("redisThresholdRearmed", 11, REDIS_ALARM_ROW),
];

/// The objects of a threshold notification: the instance's name and the
/// alarm's row of `redisAlarmTable`.
const REDIS_ALARM_ROW: &[&str] = &[
    "redisInstanceName",
    "redisAlarmName",
    "redisAlarmObject",
    "redisAlarmObjectName",
    "redisAlarmValue",
    "redisAlarmRaisedValue",
    "redisAlarmTrigger",
    "redisAlarmRearm",
];

/// The notifications of PUPPET-AGENT-MIB.
#[rustfmt::skip]
pub const PUPPET_NOTIFICATIONS: &[NotificationDef] = &[
    puppet_notification("puppetRunFailed", 1, &["puppetLastRunStatus", "puppetLastRunTime", "puppetResourcesFailed", "puppetResourcesChanged", "puppetConfigVersion", "puppetFirstError"]),
    puppet_notification("puppetRunChanged", 2, &["puppetLastRunStatus", "puppetLastRunTime", "puppetResourcesChanged", "puppetChangesTotal", "puppetConfigVersion"]),
    puppet_notification("puppetCachedCatalogUsed", 3, &["puppetCachedCatalogStatus", "puppetLastRunTime", "puppetConfigVersion", "puppetFirstError"]),
    puppet_notification("puppetRunRecovered", 4, &["puppetLastRunStatus", "puppetLastRunTime", "puppetConfigVersion"]),
    puppet_notification("puppetAgentStale", 5, &["puppetLastRunTime", "puppetLastRunAge"]),
    puppet_notification("puppetAgentStaleCleared", 6, &["puppetLastRunTime", "puppetLastRunAge"]),
    puppet_notification("puppetAgentDisabled", 7, &["puppetDisabled", "puppetDisabledMessage"]),
    puppet_notification("puppetAgentEnabled", 8, &["puppetDisabled"]),
    // Sent with the row's index of puppetEventTable, not `.0`.
    puppet_notification("puppetResourceChanged", 9, PUPPET_EVENT_ROW),
    puppet_notification("puppetResourceFailed", 10, PUPPET_EVENT_ROW),
    puppet_notification("puppetResourceEventsHeldBack", 11, &["puppetEventsHeldBack", "puppetEventsRunVersion"]),
    puppet_notification("puppetNotConverging", 12, &["puppetChangingRuns", "puppetConvergeRuns", "puppetLoopResourceCount", "puppetLoopResources", "puppetLastRunTime", "puppetConfigVersion"]),
    puppet_notification("puppetConverged", 13, &["puppetChangingRuns", "puppetLastRunTime", "puppetConfigVersion"]),
    puppet_notification("puppetRunStorm", 14, &["puppetRunInterval", "puppetRunsLastHour", "puppetLastRunTime"]),
    puppet_notification("puppetRunStormCleared", 15, &["puppetRunInterval", "puppetRunsLastHour", "puppetLastRunTime", "puppetLastRunAge"]),
];

/// The objects of a resource notification: a row of `puppetEventTable`.
const PUPPET_EVENT_ROW: &[&str] = &[
    "puppetEventTime",
    "puppetEventLevel",
    "puppetEventResourceType",
    "puppetEventTitle",
    "puppetEventProperty",
    "puppetEventMessage",
    "puppetEventConfigVersion",
];

/// Every notification the agent can send.
pub fn all_notifications() -> impl Iterator<Item = &'static NotificationDef> {
    REDIS_NOTIFICATIONS.iter().chain(PUPPET_NOTIFICATIONS)
}
