//! The tables: their entries, INDEX or AUGMENTS, the shape of their rows
//! and their OpenNMS resource types.

use super::*;

/// The longest name a string-indexed row may have (`redisCmdName`,
/// `redisErrPrefix`, `redisSntName`, `redisLatEvent`: `SIZE (1..64)`).
pub const MAX_NAME_INDEX_LEN: usize = 64;

/// The longest name of the second string of a two-name index
/// (`redisKgName`: `SIZE (1..32)`): with the first (64) and the table's
/// OID, the row's OID stays within SNMP's 128 sub-identifiers.
pub const MAX_SECOND_NAME_INDEX_LEN: usize = 32;

/// How a table's rows are told apart: its INDEX, the entry's own or, for
/// an entry that AUGMENTS `redisInstanceEntry`, that entry's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowIndex {
    /// `redisInstanceIndex` alone: one row per configured instance, from 1.
    Instance,
    /// `redisInstanceIndex` and an `Integer32 (min..2147483647)` column of
    /// the entry's own.
    InstanceAndNumber { object: &'static str, min: u32 },
    /// `redisInstanceIndex` and a `DisplayString (SIZE (1..64))` column of
    /// the entry's own, not IMPLIED: its length, then one arc per byte.
    InstanceAndName { object: &'static str },
    /// `redisInstanceIndex`, the name that indexes a row of another table
    /// (`parent`: the row this one belongs to, `DisplayString (SIZE
    /// (1..64))`) and a name of the entry's own (`DisplayString (SIZE
    /// (1..32))`: [`MAX_SECOND_NAME_INDEX_LEN`]), each its length and bytes.
    InstanceNameAndName {
        parent: &'static str,
        object: &'static str,
    },
}

impl RowIndex {
    /// The entry's own index object, if it has one.
    pub fn own_object(self) -> Option<&'static str> {
        match self {
            RowIndex::Instance => None,
            RowIndex::InstanceAndNumber { object, .. }
            | RowIndex::InstanceAndName { object }
            | RowIndex::InstanceNameAndName { object, .. } => Some(object),
        }
    }

    /// Whether `suffix` (the arcs after a column's OID) is a row of this
    /// shape.
    pub fn fits(self, suffix: &[u32]) -> bool {
        match (self, suffix) {
            (RowIndex::Instance, [instance]) => *instance >= 1,
            (RowIndex::InstanceAndNumber { min, .. }, [instance, n]) => {
                *instance >= 1 && *n >= min && i32::try_from(*n).is_ok()
            }
            (RowIndex::InstanceAndName { .. }, [instance, len, bytes @ ..]) => {
                *instance >= 1 && name_fits(*len, bytes)
            }
            (RowIndex::InstanceNameAndName { .. }, [instance, len, rest @ ..]) => {
                let len = *len as usize;
                *instance >= 1
                    && len < rest.len()
                    && name_fits(len as u32, &rest[..len])
                    && matches!(&rest[len..], [len2, bytes @ ..]
                        if name_fits(*len2, bytes) && bytes.len() <= MAX_SECOND_NAME_INDEX_LEN)
            }
            _ => false,
        }
    }
}

/// Whether `bytes` are a name index's bytes of length `len`.
fn name_fits(len: u32, bytes: &[u32]) -> bool {
    len as usize == bytes.len()
        && (1..=MAX_NAME_INDEX_LEN).contains(&bytes.len())
        && bytes.iter().all(|b| (0x20..0x7f).contains(b))
}

/// The index `instance.len.b1.b2…` of a row named by a string, or `None`
/// when the name is empty, longer than [`MAX_NAME_INDEX_LEN`] or not
/// printable ASCII (then it is no DisplayString).
pub fn name_index(instance: u32, name: &str) -> Option<Vec<u32>> {
    let bytes = name.as_bytes();
    if bytes.is_empty()
        || bytes.len() > MAX_NAME_INDEX_LEN
        || !bytes.iter().all(|b| (0x20..0x7f).contains(b))
    {
        return None;
    }
    let mut suffix = Vec::with_capacity(bytes.len() + 2);
    suffix.push(instance);
    suffix.push(bytes.len() as u32);
    suffix.extend(bytes.iter().map(|b| u32::from(*b)));
    Some(suffix)
}

/// One conceptual table of REDIS-SERVER-MIB.
#[derive(Debug, Clone, Copy)]
pub struct TableDef {
    /// `redisKeyspaceTable`.
    pub table: &'static str,
    /// `redisKeyspaceEntry`.
    pub entry: &'static str,
    /// The row it AUGMENTS (`redisInstanceEntry`), or `None` for an entry
    /// with an INDEX of its own.
    pub augments: Option<&'static str>,
    pub index: RowIndex,
    /// Where the rows come from, as the index object's DESCRIPTION names
    /// it (`db<N>`, `cmdstat_<name>`, ...).
    pub rows_from: &'static [&'static str],
    /// The resource type OpenNMS keeps its rows under (`opennms/`): one
    /// per INDEX, so the tables that AUGMENT `redisInstanceEntry` share
    /// `redisInstance`.
    pub resource_type: &'static str,
    /// The served columns (the index objects are not-accessible).
    pub columns: &'static [ObjectDef],
}

const fn augmenting(
    table: &'static str,
    entry: &'static str,
    columns: &'static [ObjectDef],
) -> TableDef {
    TableDef {
        table,
        entry,
        augments: Some("redisInstanceEntry"),
        index: RowIndex::Instance,
        rows_from: &[],
        resource_type: "redisInstance",
        columns,
    }
}

/// Every table of REDIS-SERVER-MIB the agent serves.
#[rustfmt::skip]
pub const TABLES: &[TableDef] = &[
    TableDef {
        table: "redisInstanceTable",
        entry: "redisInstanceEntry",
        augments: None,
        index: RowIndex::Instance,
        rows_from: &["configuration"],
        resource_type: "redisInstance",
        columns: INSTANCE_COLUMNS,
    },
    augmenting("redisServerTable", "redisServerEntry", SERVER_COLUMNS),
    augmenting("redisClientsTable", "redisClientsEntry", CLIENT_COLUMNS),
    augmenting("redisMemoryTable", "redisMemoryEntry", MEMORY_COLUMNS),
    augmenting("redisPersistenceTable", "redisPersistenceEntry", PERSISTENCE_COLUMNS),
    augmenting("redisStatsTable", "redisStatsEntry", STATS_COLUMNS),
    augmenting("redisReplicationTable", "redisReplicationEntry", REPLICATION_COLUMNS),
    augmenting("redisCpuTable", "redisCpuEntry", CPU_COLUMNS),
    augmenting("redisClusterTable", "redisClusterEntry", CLUSTER_COLUMNS),
    augmenting("redisSentinelStateTable", "redisSentinelStateEntry", SENTINEL_COLUMNS),
    augmenting("redisTlsTable", "redisTlsEntry", TLS_COLUMNS),
    TableDef {
        table: "redisKeyspaceTable",
        entry: "redisKeyspaceEntry",
        augments: None,
        index: RowIndex::InstanceAndNumber { object: "redisKsDb", min: 0 },
        rows_from: &["db<N>"],
        resource_type: "redisKeyspace",
        columns: KEYSPACE_COLUMNS,
    },
    TableDef {
        table: "redisReplicaTable",
        entry: "redisReplicaEntry",
        augments: None,
        index: RowIndex::InstanceAndNumber { object: "redisRpSlot", min: 1 },
        rows_from: &["slave<N>"],
        resource_type: "redisReplica",
        columns: REPLICA_COLUMNS,
    },
    TableDef {
        table: "redisCommandTable",
        entry: "redisCommandEntry",
        augments: None,
        index: RowIndex::InstanceAndName { object: "redisCmdName" },
        rows_from: &["cmdstat_<name>"],
        resource_type: "redisCommand",
        columns: COMMAND_COLUMNS,
    },
    TableDef {
        table: "redisErrorTable",
        entry: "redisErrorEntry",
        augments: None,
        index: RowIndex::InstanceAndName { object: "redisErrPrefix" },
        rows_from: &["errorstat_<PREFIX>"],
        resource_type: "redisError",
        columns: ERROR_COLUMNS,
    },
    TableDef {
        table: "redisSentinelTable",
        entry: "redisSentinelEntry",
        augments: None,
        index: RowIndex::InstanceAndName { object: "redisSntName" },
        rows_from: &["SENTINEL MASTERS", "name"],
        resource_type: "redisSentinelMaster",
        columns: SENTINEL_MASTER_COLUMNS,
    },
    augmenting("redisSlowlogTable", "redisSlowlogEntry", SLOWLOG_COLUMNS),
    TableDef {
        table: "redisLatencyTable",
        entry: "redisLatencyEntry",
        augments: None,
        index: RowIndex::InstanceAndName { object: "redisLatEvent" },
        rows_from: &["LATENCY LATEST"],
        resource_type: "redisLatency",
        columns: LATENCY_COLUMNS,
    },
    TableDef {
        table: "redisClientNameTable",
        entry: "redisClientNameEntry",
        augments: None,
        index: RowIndex::InstanceAndName { object: "redisCnName" },
        rows_from: &["CLIENT LIST", "name"],
        resource_type: "redisClientName",
        columns: CLIENT_NAME_COLUMNS,
    },
    TableDef {
        table: "redisClientUserTable",
        entry: "redisClientUserEntry",
        augments: None,
        index: RowIndex::InstanceAndName { object: "redisCuUser" },
        rows_from: &["CLIENT LIST", "user"],
        resource_type: "redisClientUser",
        columns: CLIENT_USER_COLUMNS,
    },
    TableDef {
        table: "redisAlarmTable",
        entry: "redisAlarmEntry",
        augments: None,
        index: RowIndex::InstanceAndNumber { object: "redisAlarmNumber", min: 1 },
        rows_from: &["[[alarm]]"],
        resource_type: "redisAlarm",
        columns: ALARM_COLUMNS,
    },
    TableDef {
        table: "redisKeyTable",
        entry: "redisKeyEntry",
        augments: None,
        index: RowIndex::InstanceAndName { object: "redisCkName" },
        rows_from: &["check_keys"],
        resource_type: "redisKey",
        columns: KEY_COLUMNS,
    },
    TableDef {
        table: "redisKeyStreamGroupTable",
        entry: "redisKeyStreamGroupEntry",
        augments: None,
        index: RowIndex::InstanceNameAndName { parent: "redisCkName", object: "redisKgName" },
        rows_from: &["XINFO GROUPS", "name"],
        resource_type: "redisKeyStreamGroup",
        columns: STREAM_GROUP_COLUMNS,
    },
    augmenting("redisKeyCheckTable", "redisKeyCheckEntry", KEY_CHECK_COLUMNS),
];

/// The table an object is a column of.
pub fn table_of(object: &ObjectDef) -> Option<&'static TableDef> {
    TABLES
        .iter()
        .find(|t| t.columns.iter().any(|c| c.name == object.name))
}
