//! REDIS-SERVER-MIB's tables of what happened, one row per event the agent
//! saw or raised: slow commands as they arrive, what a sentinel's masters
//! did, ACL LOG's refusals, and the agent's own alarms.

use super::*;
use crate::smi::Syntax;

/// Rows of `redisSlowCommandTable` at most, per instance: the newest slow
/// log entries the agent saw arrive.
pub const SLOW_COMMAND_ROWS: usize = 32;

table! {
    /// `redisSlowCommandTable`: the newest slow log entries seen arriving.
    pub const SLOW_COMMAND_TABLE = ("redisSlowCommandTable", "redisSlowCommandEntry", [3, 28, 1]) {
        augments: None,
        index: RowIndex::InstanceAndNumber { object: "redisScNumber", min: 1 },
        // The index numbers the entries as the agent reads them; its
        // DESCRIPTION names no source.
        rows_from: &[],
        resource_type: "redisSlowCommand",
        max_rows: Some(SLOW_COMMAND_ROWS),
    }
    /// `redisSlowCommandTable` (`redis.3.28`), INDEX { redisInstanceIndex,
    /// redisScNumber }: the slow log entries the agent saw arrive since it
    /// started, the newest [`SLOW_COMMAND_ROWS`]; each one over
    /// the instance's `slow_command_threshold` is also a `redisSlowCommand`.
    pub const SLOW_COMMAND_COLUMNS = enum SlowCommandField as SlowCommand {
        /// The entry's id in the server's slow log.
        Id("redisScId", 2, Gauge64),
        /// When the server logged it, UNIX seconds.
        Time("redisScTime", 3, Gauge64).units("seconds"),
        /// How long the command ran, µs.
        Duration("redisScDuration", 4, Gauge64).units("microseconds"),
        /// The command's name (its first argument, lower-cased).
        Command("redisScCommand", 5, DisplayString),
        /// The client's address (`ip:port`, or the socket path).
        ClientAddress("redisScClientAddr", 6, DisplayString),
        /// The client's name (CLIENT SETNAME), empty when it has none.
        ClientName("redisScClientName", 7, DisplayString),
        /// The command's arguments, only where `slow_command_args` is on.
        Arguments("redisScArgs", 8, DisplayString),
        /// Entries logged before this one since the last read that the agent
        /// did not read (more arrived than one read takes, or the server
        /// dropped them first).
        Skipped("redisScSkipped", 9, Gauge32).units("entries"),
    }
}

table! {
    /// `redisSentinelEventTable`: the failover watch's own cap
    /// (`crate::redis::failover::MAX_EVENTS` a sentinel) bounds it.
    pub const SENTINEL_EVENT_TABLE = ("redisSentinelEventTable", "redisSentinelEventEntry", [3, 30, 1]) {
        augments: None,
        index: RowIndex::InstanceAndNumber { object: "redisSeIndex", min: 1 },
        rows_from: &[],
        resource_type: "redisSentinelEvent",
        max_rows: None,
    }
    /// `redisSentinelEventTable` (`redis.3.30`), INDEX { redisInstanceIndex,
    /// redisSeIndex }: what the masters a sentinel watches did between two
    /// polls (a failover, objectively down and back, the quorum lost and
    /// reached), the last [`crate::redis::failover`]'s cap of them. The
    /// notifications of a sentinel's masters carry their row: the master's
    /// name and both its addresses, which `redisSentinelTable` (indexed by
    /// the name, and holding only the present) cannot.
    pub const SENTINEL_EVENT_COLUMNS = enum SentinelEventField as SentinelEvent {
        /// When the agent saw it, in UNIX seconds.
        Time("redisSeTime", 2, Gauge64).units("seconds"),
        /// [`SentinelEventKind`].
        Kind("redisSeKind", 3, Enum).enumerated(SentinelEventKind::LABELS),
        /// The master's name in the sentinel's configuration.
        Master("redisSeMaster", 4, DisplayString),
        /// The master's address after the event.
        Address("redisSeAddress", 5, DisplayString),
        Port("redisSePort", 6, Gauge32),
        /// Its address before (a failover), or as last seen.
        OldAddress("redisSeOldAddress", 7, DisplayString),
        OldPort("redisSeOldPort", 8, Gauge32),
        /// Its configuration epoch after the event.
        Epoch("redisSeEpoch", 9, Gauge64),
        /// Its configuration epoch before.
        OldEpoch("redisSeOldEpoch", 10, Gauge64),
        /// What SENTINEL CKQUORUM answered.
        Quorum("redisSeQuorum", 11, DisplayString),
    }
}

table! {
    /// `redisAclRefusalTable`: ACL LOG per reason, user and client address;
    /// the log is read 128 entries at most, and at most 100 rows are served
    /// (the rest counted in `redisInstanceRowsLeftOut`).
    pub const ACL_REFUSAL_TABLE = ("redisAclRefusalTable", "redisAclRefusalEntry", [3, 29, 1]) {
        augments: None,
        index: RowIndex::InstanceAndNumber { object: "redisArNumber", min: 1 },
        rows_from: &["ACL LOG"],
        resource_type: "redisAclRefusal",
        max_rows: Some(100),
    }
    /// `redisAclRefusalTable` (`redis.3.29`), INDEX { redisInstanceIndex,
    /// redisArNumber }: ACL LOG aggregated per reason, user and client
    /// address (`crate::redis::acl_log`); the row's number is a hash of the
    /// three, the same at every read.
    pub const ACL_REFUSAL_COLUMNS = enum AclField as Acl {
        /// [`AclReason`]: why the server refused.
        Reason("redisArReason", 2, Enum).enumerated(AclReason::LABELS),
        /// The user (for a failed AUTH, the name the client gave).
        User("redisArUser", 3, DisplayString),
        /// The client's host (`addr=` without its port).
        Address("redisArAddress", 4, DisplayString),
        /// The refusals the log holds for the row (its entries' counts).
        Count("redisArCount", 5, Gauge32).units("refusals"),
        /// When the newest of them was, UNIX seconds.
        LastSeen("redisArLastSeen", 6, Gauge64).units("seconds"),
        /// The instance's name and the row's number, escaped and joined by
        /// `.` ([`row_key`]), for managers to store rows under.
        Key("redisArKey", 7, DisplayString),
    }
}

table! {
    pub const ALARM_TABLE = ("redisAlarmTable", "redisAlarmEntry", [3, 23, 1]) {
        augments: None,
        index: RowIndex::InstanceAndNumber { object: "redisAlarmNumber", min: 1 },
        rows_from: &["[[alarm]]"],
        resource_type: "redisAlarm",
        max_rows: None,
    }
    /// `redisAlarmTable` (`redis.3.23`), INDEX { redisInstanceIndex,
    /// redisAlarmNumber }: the agent's own thresholds crossed now, one row per
    /// alarm (`crate::alarms`). The values are decimal text: an alarm may watch
    /// an Integer32 (negative), a Gauge32 or a 64-bit gauge, and no one SMIv2
    /// integer holds them all.
    pub const ALARM_COLUMNS = enum AlarmField as Alarm {
        /// The alarm's name in the configuration (`[[alarm]] name`).
        Name("redisAlarmName", 2, DisplayString),
        /// The OID of the value it watches, with the value's row index.
        Object("redisAlarmObject", 3, ObjectIdentifier),
        /// The MIB name of the object it watches.
        ObjectName("redisAlarmObjectName", 4, DisplayString),
        /// The value at the last poll, in decimal.
        Value("redisAlarmValue", 5, DisplayString),
        /// The value that raised it, in decimal.
        RaisedValue("redisAlarmRaisedValue", 6, DisplayString),
        /// The configured trigger, in decimal.
        Trigger("redisAlarmTrigger", 7, DisplayString),
        /// The configured rearm value, in decimal.
        Rearm("redisAlarmRearm", 8, DisplayString),
        /// Seconds since it was raised.
        Age("redisAlarmAge", 9, Gauge32).units("seconds"),
    }
}

enumeration! {
    /// `redisSeKind`: what a sentinel's master did.
    SentinelEventKind {
        Failover = 1 => ["failover"],
        MasterDown = 2 => ["masterDown"],
        MasterUp = 3 => ["masterUp"],
        QuorumLost = 4 => ["quorumLost"],
        QuorumReached = 5 => ["quorumReached"],
    }
}

enumeration! {
    /// `redisArReason`: ACL LOG's `reason` (redis/redis and valkey
    /// `src/acl.c`, `aclCommand`): any other word is unknown(5).
    AclReason {
        Auth = 1 => ["auth"],
        Command = 2 => ["command"],
        Key = 3 => ["key"],
        Channel = 4 => ["channel"],
        Unknown = 5 => ["unknown"],
    }
}
