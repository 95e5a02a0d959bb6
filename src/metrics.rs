//! The one table of what the agent serves.
//!
//! Every object of REDIS-SERVER-MIB that the agent answers for is one row
//! here: its MIB name, its OID below the module root, its SMI syntax and
//! where its value comes from. The poller builds snapshots from these rows,
//! and `tests/mib_table.rs` checks the MIB module (and the OpenNMS files)
//! against them, so the three can never drift apart. Adding a Redis field is
//! adding a row.

use crate::oid::Oid;
use crate::smi::Syntax;

/// Where the default module root sits: `enterprises.daysofwonder(20267).400`.
pub const DEFAULT_REDIS_ROOT: &str = "1.3.6.1.4.1.20267.400";

/// Arc of the 17 legacy scalars below the root (the old `-o` pointed here).
pub const LEGACY_BRANCH: u32 = 1;

/// `redisInstanceTable` and its entry, below the root: `redis.3.1.1`.
pub const INSTANCE_ENTRY: &[u32] = &[3, 1, 1];

/// How an INFO value becomes an SNMP value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conversion {
    /// A non-negative integer, as is: gauges latch at their maximum,
    /// Counter32 wraps.
    Unsigned,
    /// Seconds with a fraction (`16364.80`) to centiseconds, wrapping as a
    /// Counter32 does.
    SecondsToCentiseconds,
}

/// Values the poller knows about an instance itself, not read from INFO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusField {
    Name,
    Address,
    /// up(1) / down(2)
    Up,
    /// Seconds since the last successful poll.
    DataAge,
    /// Milliseconds the last poll took.
    PollDuration,
    /// Why the last poll failed, empty when it did not.
    LastError,
    /// Successful polls since the agent started.
    PollsOk,
    /// Failed polls since the agent started.
    PollsFailed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// An INFO field. Several names are aliases across Redis versions; the
    /// first one present wins.
    Info {
        fields: &'static [&'static str],
        conversion: Conversion,
    },
    Status(StatusField),
}

/// One object of the MIB.
#[derive(Debug, Clone, Copy)]
pub struct ObjectDef {
    /// The MIB descriptor, e.g. `redisConnectedClients`.
    pub name: &'static str,
    /// OID below the module root, without instance suffix.
    pub arcs: &'static [u32],
    pub syntax: Syntax,
    pub source: Source,
}

impl ObjectDef {
    pub fn oid(&self, root: &Oid) -> Oid {
        root.child(self.arcs)
    }
}

const fn info(
    name: &'static str,
    arcs: &'static [u32],
    syntax: Syntax,
    fields: &'static [&'static str],
) -> ObjectDef {
    ObjectDef {
        name,
        arcs,
        syntax,
        source: Source::Info {
            fields,
            conversion: Conversion::Unsigned,
        },
    }
}

const fn centiseconds(
    name: &'static str,
    arcs: &'static [u32],
    fields: &'static [&'static str],
) -> ObjectDef {
    ObjectDef {
        name,
        arcs,
        syntax: Syntax::Counter32,
        source: Source::Info {
            fields,
            conversion: Conversion::SecondsToCentiseconds,
        },
    }
}

const fn status(
    name: &'static str,
    arcs: &'static [u32],
    syntax: Syntax,
    field: StatusField,
) -> ObjectDef {
    ObjectDef {
        name,
        arcs,
        syntax,
        source: Source::Status(field),
    }
}

use Syntax::*;

/// The 17 scalars of the Perl `redis-snmp`, with their original names, OIDs
/// and types (`Gauge64` is the old `REDISUnsigned64`). They show the first
/// configured instance. Served with instance suffix `.0`.
pub const LEGACY_SCALARS: &[ObjectDef] = &[
    info(
        "redisConnectedClients",
        &[1, 1],
        Gauge32,
        &["connected_clients"],
    ),
    info(
        "redisConnectedSlaves",
        &[1, 2],
        Gauge32,
        &["connected_slaves"],
    ),
    info("redisUsedMemory", &[1, 3], Gauge64, &["used_memory"]),
    // Renamed in Redis 2.6; the Perl agent lost this object on anything newer.
    info(
        "redisChangesSinceLastSave",
        &[1, 4],
        Gauge32,
        &["rdb_changes_since_last_save", "changes_since_last_save"],
    ),
    info(
        "redisTotalConnections",
        &[1, 5],
        Counter64,
        &["total_connections_received"],
    ),
    info(
        "redisCommandsProcessed",
        &[1, 6],
        Counter64,
        &["total_commands_processed"],
    ),
    centiseconds("redisCPUSys", &[1, 7], &["used_cpu_sys"]),
    centiseconds("redisCPUUsr", &[1, 8], &["used_cpu_user"]),
    info(
        "redisBlockedClients",
        &[1, 9],
        Gauge32,
        &["blocked_clients"],
    ),
    info("redisEvictedKeys", &[1, 10], Counter64, &["evicted_keys"]),
    info("redisExpiredKeys", &[1, 11], Counter64, &["expired_keys"]),
    info("redisKeyspaceHits", &[1, 12], Counter64, &["keyspace_hits"]),
    info(
        "redisKeyspaceMisses",
        &[1, 13],
        Counter64,
        &["keyspace_misses"],
    ),
    info(
        "redisPubsubChannels",
        &[1, 14],
        Gauge32,
        &["pubsub_channels"],
    ),
    info(
        "redisPubsubPatterns",
        &[1, 15],
        Gauge32,
        &["pubsub_patterns"],
    ),
    info("redisUptime", &[1, 16], Gauge32, &["uptime_in_seconds"]),
    info(
        "redisUsedMemoryRss",
        &[1, 17],
        Gauge64,
        &["used_memory_rss"],
    ),
];

/// Columns of `redisInstanceTable` (`redis.3.1.1.N`), indexed by the
/// instance's number (1 = the first configured instance). Column 1 is the
/// not-accessible index `redisInstanceIndex` and is not served.
pub const INSTANCE_COLUMNS: &[ObjectDef] = &[
    status(
        "redisInstanceName",
        &[3, 1, 1, 2],
        DisplayString,
        StatusField::Name,
    ),
    status(
        "redisInstanceAddress",
        &[3, 1, 1, 3],
        DisplayString,
        StatusField::Address,
    ),
    status("redisInstanceUp", &[3, 1, 1, 4], Enum, StatusField::Up),
    status(
        "redisInstanceDataAge",
        &[3, 1, 1, 5],
        Gauge32,
        StatusField::DataAge,
    ),
    status(
        "redisInstancePollTime",
        &[3, 1, 1, 6],
        Gauge32,
        StatusField::PollDuration,
    ),
    status(
        "redisInstanceLastError",
        &[3, 1, 1, 7],
        DisplayString,
        StatusField::LastError,
    ),
    status(
        "redisInstancePollsOk",
        &[3, 1, 1, 8],
        Counter32,
        StatusField::PollsOk,
    ),
    status(
        "redisInstancePollsFailed",
        &[3, 1, 1, 9],
        Counter32,
        StatusField::PollsFailed,
    ),
];

/// Every object REDIS-SERVER-MIB defines that the agent serves.
pub fn redis_objects() -> impl Iterator<Item = &'static ObjectDef> {
    LEGACY_SCALARS.iter().chain(INSTANCE_COLUMNS)
}

/// OIDs of all served objects below `root`, for the snapshot's
/// noSuchObject/noSuchInstance decision.
pub fn redis_object_oids(root: &Oid) -> Vec<Oid> {
    redis_objects().map(|o| o.oid(root)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_and_oids_are_unique() {
        let mut names = HashSet::new();
        let mut oids = HashSet::new();
        for o in redis_objects() {
            assert!(names.insert(o.name), "duplicate name {}", o.name);
            assert!(oids.insert(o.arcs), "duplicate OID for {}", o.name);
        }
    }

    #[test]
    fn legacy_objects_keep_their_numbers() {
        for (n, o) in LEGACY_SCALARS.iter().enumerate() {
            assert_eq!(o.arcs, &[LEGACY_BRANCH, n as u32 + 1], "{}", o.name);
        }
        assert_eq!(LEGACY_SCALARS.len(), 17);
    }

    #[test]
    fn no_object_oid_prefixes_another() {
        let root: Oid = DEFAULT_REDIS_ROOT.parse().unwrap();
        let mut oids = redis_object_oids(&root);
        oids.sort();
        for w in oids.windows(2) {
            assert!(!w[1].starts_with(&w[0]), "{:?} prefixes {:?}", w[0], w[1]);
        }
    }

    #[test]
    fn instance_columns_live_in_the_entry() {
        for o in INSTANCE_COLUMNS {
            assert!(o.arcs.starts_with(INSTANCE_ENTRY), "{}", o.name);
            assert_eq!(o.arcs.len(), INSTANCE_ENTRY.len() + 1, "{}", o.name);
        }
    }
}
