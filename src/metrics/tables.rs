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

/// The highest bucket of a key-size histogram (`redisKzBucket`,
/// `Integer32 (0..64)`): bucket 0 holds the keys of size 0, bucket `b` the
/// sizes from 2^(b-1) to 2^b - 1, so 64 buckets cover every `u64` size.
pub const MAX_SIZE_BUCKET: u32 = 64;

/// The largest number an index of `Integer32 (1..2147483647)` may be
/// (`redisInstanceIndex`, `redisRpSlot`, `puppetResourceIndex`…).
const MAX_INDEX_NUMBER: u32 = i32::MAX as u32;

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
    /// An `Integer32 (1..max)` column of the entry's own alone
    /// (PUPPET-AGENT-MIB's tables: one agent per host, no instance).
    Row { object: &'static str, max: u32 },
    /// `redisInstanceIndex` and three columns of the entry's own (columns
    /// 1 to 3): a database number (`Integer32 (0..2147483647)`), a
    /// [`KeysizesType`] and a bucket of sizes (`Integer32 (0..64)`:
    /// [`MAX_SIZE_BUCKET`]).
    InstanceDbTypeBucket {
        db: &'static str,
        kind: &'static str,
        bucket: &'static str,
    },
}

/// The key of one row, in the terms of its table's INDEX: what a row
/// builder knows of its row. [`RowIndex::suffix`] makes the arcs from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKey<'a> {
    /// Instance `n`'s row ([`RowIndex::Instance`], and every AUGMENTS).
    Instance(u32),
    /// An instance and a number ([`RowIndex::InstanceAndNumber`]).
    Number(u32, u32),
    /// An instance and a name ([`RowIndex::InstanceAndName`]).
    Name(u32, &'a str),
    /// An instance, its parent row's name and the row's own
    /// ([`RowIndex::InstanceNameAndName`]).
    NameName(u32, &'a str, &'a str),
    /// A number of the row's own ([`RowIndex::Row`]).
    Row(u32),
    /// An instance, a database, a type and a bucket
    /// ([`RowIndex::InstanceDbTypeBucket`]).
    Bucket(u32, u32, KeysizesType, u32),
}

impl RowIndex {
    /// The entry's own index object, if it has one (the first, where it
    /// has several: [`Self::own_objects`]).
    pub fn own_object(self) -> Option<&'static str> {
        self.own_objects().first().copied()
    }

    /// The entry's own index objects, in the INDEX's order: its columns 1,
    /// 2, ... (another table's object, as `parent`, is not its own).
    pub fn own_objects(self) -> Vec<&'static str> {
        match self {
            RowIndex::Instance => Vec::new(),
            RowIndex::InstanceAndNumber { object, .. }
            | RowIndex::InstanceAndName { object }
            | RowIndex::InstanceNameAndName { object, .. }
            | RowIndex::Row { object, .. } => vec![object],
            RowIndex::InstanceDbTypeBucket { db, kind, bucket } => vec![db, kind, bucket],
        }
    }

    /// The arcs after a column's OID for the row `key`, or `None` when the
    /// key is not of this shape or no index can hold it (a name too long
    /// or not printable, a number out of the INDEX's range): the row is
    /// then left out, never served under a made-up index. Every row the
    /// agent serves is made here, so it [`fits`](Self::fits) by
    /// construction (a unit test checks the two agree).
    pub fn suffix(self, key: RowKey<'_>) -> Option<Vec<u32>> {
        let suffix = match (self, key) {
            (RowIndex::Instance, RowKey::Instance(instance))
            | (RowIndex::Row { .. }, RowKey::Row(instance)) => vec![instance],
            (RowIndex::InstanceAndNumber { .. }, RowKey::Number(instance, n)) => vec![instance, n],
            (RowIndex::InstanceAndName { .. }, RowKey::Name(instance, name)) => {
                name_index(instance, name)?
            }
            (RowIndex::InstanceNameAndName { .. }, RowKey::NameName(instance, parent, name)) => {
                if !name_fits_index(name.as_bytes(), MAX_SECOND_NAME_INDEX_LEN) {
                    return None;
                }
                let mut suffix = name_index(instance, parent)?;
                suffix.push(name.len() as u32);
                suffix.extend(name.bytes().map(u32::from));
                suffix
            }
            (RowIndex::InstanceDbTypeBucket { .. }, RowKey::Bucket(instance, db, kind, bucket)) => {
                vec![instance, db, kind.number() as u32, bucket]
            }
            _ => return None,
        };
        self.fits(&suffix).then_some(suffix)
    }

    /// Whether `suffix` (the arcs after a column's OID) is a row of this
    /// shape: every number within its `Integer32` range, every name one
    /// [`name_fits_index`] takes.
    pub fn fits(self, suffix: &[u32]) -> bool {
        let number = |n: u32, min: u32| (min..=MAX_INDEX_NUMBER).contains(&n);
        match (self, suffix) {
            (RowIndex::Instance, [instance]) => number(*instance, 1),
            (RowIndex::Row { max, .. }, [row]) => (1..=max.min(MAX_INDEX_NUMBER)).contains(row),
            (RowIndex::InstanceAndNumber { min, .. }, [instance, n]) => {
                number(*instance, 1) && number(*n, min)
            }
            (RowIndex::InstanceAndName { .. }, [instance, rest @ ..]) => {
                number(*instance, 1) && arcs_are_name(rest, MAX_NAME_INDEX_LEN)
            }
            (RowIndex::InstanceNameAndName { .. }, [instance, len, rest @ ..]) => {
                let len = *len as usize;
                number(*instance, 1)
                    && len < rest.len()
                    && arcs_are_name(&suffix[1..len + 2], MAX_NAME_INDEX_LEN)
                    && arcs_are_name(&rest[len..], MAX_SECOND_NAME_INDEX_LEN)
            }
            (RowIndex::InstanceDbTypeBucket { .. }, [instance, db, kind, bucket]) => {
                number(*instance, 1)
                    && number(*db, 0)
                    && KeysizesType::LABELS
                        .iter()
                        .any(|(_, n)| i64::from(*n) == i64::from(*kind))
                    && *bucket <= MAX_SIZE_BUCKET
            }
            _ => false,
        }
    }
}

/// Whether `arcs` are exactly one name index: its length, then its bytes,
/// a name [`name_fits_index`] takes.
fn arcs_are_name(arcs: &[u32], max_len: usize) -> bool {
    let Some((len, bytes)) = arcs.split_first() else {
        return false;
    };
    let bytes: Option<Vec<u8>> = bytes.iter().map(|b| u8::try_from(*b).ok()).collect();
    matches!(bytes, Some(bytes) if *len as usize == bytes.len() && name_fits_index(&bytes, max_len))
}

/// Whether a name can index a row as it is: 1 to `max_len` bytes of
/// printable ASCII (a `DisplayString (SIZE (1..max_len))` index, written
/// as its bytes). The one statement of the rule: the row builders, the
/// key checks and CLIENT LIST's aggregation all ask it, so a name one of
/// them keeps is one the others can serve.
pub fn name_fits_index(name: &[u8], max_len: usize) -> bool {
    (1..=max_len).contains(&name.len()) && name.iter().all(|b| (0x20..0x7f).contains(b))
}

/// The index `instance.len.b1.b2…` of a row named by a string, or `None`
/// when the name is empty, longer than [`MAX_NAME_INDEX_LEN`] or not
/// printable ASCII (then it is no DisplayString).
pub fn name_index(instance: u32, name: &str) -> Option<Vec<u32>> {
    let bytes = name.as_bytes();
    if !name_fits_index(bytes, MAX_NAME_INDEX_LEN) {
        return None;
    }
    let mut suffix = Vec::with_capacity(bytes.len() + 2);
    suffix.push(instance);
    suffix.push(bytes.len() as u32);
    suffix.extend(bytes.iter().map(|b| u32::from(*b)));
    Some(suffix)
}

/// 64-bit FNV-1a: stable across runs and builds, unlike std's hasher, so
/// a name made from it (a cut row key, a key's alias) stays the same.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The longest row key; a longer one is cut and ends in a hash (see
/// [`row_key`]).
const MAX_KEY_LEN: usize = 255;

/// A row key: the instance's name and the row's string, each with ASCII
/// letters, digits and `-` kept and every other byte written as `_` and two
/// upper-case hex digits, joined by `.` (`sessions` and `config|get` make
/// `sessions.config_7Cget`). Distinct pairs make distinct keys: no escaped
/// part contains `.`, and `_` is always followed by two hex digits. The key
/// is made only of `[A-Za-z0-9._-]`, so a manager may use it as a file name
/// as it is: OpenNMS's SiblingColumnStorageStrategy (which drops non-ASCII
/// characters, turns `/` into `-`, then applies the configured replacements)
/// leaves it unchanged, where the raw `cache-1/get` and `cache/1-get` would
/// share a directory. A key longer than `MAX_KEY_LEN` (255) keeps its first 236
/// characters and ends in `_Z` and the 64-bit FNV-1a hash of the whole key
/// in hex (`Z` never follows `_` in a key that is not cut).
pub fn row_key(instance: &str, row: &str) -> String {
    fn escape(text: &str, out: &mut String) {
        for b in text.bytes() {
            if b.is_ascii_alphanumeric() || b == b'-' {
                out.push(char::from(b));
            } else {
                out.push_str(&format!("_{b:02X}"));
            }
        }
    }
    let mut key = String::new();
    escape(instance, &mut key);
    key.push('.');
    escape(row, &mut key);
    if key.len() <= MAX_KEY_LEN {
        return key;
    }
    let hash = fnv1a(key.as_bytes());
    format!("{}_Z{hash:016X}", &key[..MAX_KEY_LEN - 19])
}

/// A consumer group's row key: the key's row key, `.`, and the group's
/// name escaped alike (`main.events.billing`); distinct rows make distinct
/// keys, as no escaped part holds a `.`. Over `MAX_KEY_LEN`, cut and
/// hashed as [`row_key`] does.
pub fn group_row_key(instance: &str, key: &str, group_name: &str) -> String {
    // row_key("", group_name) is ".", then the group escaped.
    let joined = format!("{}{}", row_key(instance, key), row_key("", group_name));
    if joined.len() <= MAX_KEY_LEN {
        joined
    } else {
        row_key(instance, &format!("{key}\u{0}{group_name}"))
    }
}

/// One conceptual table of a module.
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
    /// The most rows one source may have in it, where the rows come from
    /// lines a server writes as many of as it likes (INFO's `db<N>`,
    /// `slave<N>`, `cmdstat_`, `errorstat_`): the rest are counted, not
    /// served ([`write_rows`]). `None` where another cap bounds the rows
    /// already (one per instance, a reply's own limit, a setting).
    pub max_rows: Option<usize>,
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
        max_rows: None,
    }
}

/// `redisInstanceTable`: one row per configured instance.
#[rustfmt::skip]
pub const INSTANCE_TABLE: TableDef = TableDef {
    table: "redisInstanceTable",
    entry: "redisInstanceEntry",
    augments: None,
    index: RowIndex::Instance,
    rows_from: &["configuration"],
    resource_type: "redisInstance",
    columns: INSTANCE_COLUMNS,
    max_rows: None,
};

pub const SERVER_TABLE: TableDef =
    augmenting("redisServerTable", "redisServerEntry", SERVER_COLUMNS);
pub const CLIENTS_TABLE: TableDef =
    augmenting("redisClientsTable", "redisClientsEntry", CLIENT_COLUMNS);
pub const MEMORY_TABLE: TableDef =
    augmenting("redisMemoryTable", "redisMemoryEntry", MEMORY_COLUMNS);
pub const PERSISTENCE_TABLE: TableDef = augmenting(
    "redisPersistenceTable",
    "redisPersistenceEntry",
    PERSISTENCE_COLUMNS,
);
pub const STATS_TABLE: TableDef = augmenting("redisStatsTable", "redisStatsEntry", STATS_COLUMNS);
pub const REPLICATION_TABLE: TableDef = augmenting(
    "redisReplicationTable",
    "redisReplicationEntry",
    REPLICATION_COLUMNS,
);
pub const CPU_TABLE: TableDef = augmenting("redisCpuTable", "redisCpuEntry", CPU_COLUMNS);
pub const CLUSTER_TABLE: TableDef =
    augmenting("redisClusterTable", "redisClusterEntry", CLUSTER_COLUMNS);
pub const SENTINEL_STATE_TABLE: TableDef = augmenting(
    "redisSentinelStateTable",
    "redisSentinelStateEntry",
    SENTINEL_COLUMNS,
);
pub const TLS_TABLE: TableDef = augmenting("redisTlsTable", "redisTlsEntry", TLS_COLUMNS);

/// `redisKeyspaceTable`: at most 1,024 databases (as the zero-fill).
#[rustfmt::skip]
pub const KEYSPACE_TABLE: TableDef = TableDef {
    table: "redisKeyspaceTable",
    entry: "redisKeyspaceEntry",
    augments: None,
    index: RowIndex::InstanceAndNumber { object: "redisKsDb", min: 0 },
    rows_from: &["db<N>"],
    resource_type: "redisKeyspace",
    columns: KEYSPACE_COLUMNS,
    max_rows: Some(1024),
};

/// `redisReplicaTable`: at most 256 replicas of one master.
#[rustfmt::skip]
pub const REPLICA_TABLE: TableDef = TableDef {
    table: "redisReplicaTable",
    entry: "redisReplicaEntry",
    augments: None,
    index: RowIndex::InstanceAndNumber { object: "redisRpSlot", min: 1 },
    rows_from: &["slave<N>"],
    resource_type: "redisReplica",
    columns: REPLICA_COLUMNS,
    max_rows: Some(256),
};

/// `redisCommandTable`: at most 1,000 commands (Redis 8 has some 240 with
/// their subcommands).
#[rustfmt::skip]
pub const COMMAND_TABLE: TableDef = TableDef {
    table: "redisCommandTable",
    entry: "redisCommandEntry",
    augments: None,
    index: RowIndex::InstanceAndName { object: "redisCmdName" },
    rows_from: &["cmdstat_<name>"],
    resource_type: "redisCommand",
    columns: COMMAND_COLUMNS,
    max_rows: Some(1000),
};

/// `redisErrorTable`: at most 256 error prefixes (Redis itself tracks at
/// most 128 before it stops adding them).
#[rustfmt::skip]
pub const ERROR_TABLE: TableDef = TableDef {
    table: "redisErrorTable",
    entry: "redisErrorEntry",
    augments: None,
    index: RowIndex::InstanceAndName { object: "redisErrPrefix" },
    rows_from: &["errorstat_<PREFIX>"],
    resource_type: "redisError",
    columns: ERROR_COLUMNS,
    max_rows: Some(256),
};

#[rustfmt::skip]
pub const SENTINEL_TABLE: TableDef = TableDef {
    table: "redisSentinelTable",
    entry: "redisSentinelEntry",
    augments: None,
    index: RowIndex::InstanceAndName { object: "redisSntName" },
    rows_from: &["SENTINEL MASTERS", "name"],
    resource_type: "redisSentinelMaster",
    columns: SENTINEL_MASTER_COLUMNS,
    max_rows: None,
};

pub const SLOWLOG_TABLE: TableDef =
    augmenting("redisSlowlogTable", "redisSlowlogEntry", SLOWLOG_COLUMNS);

#[rustfmt::skip]
pub const LATENCY_TABLE: TableDef = TableDef {
    table: "redisLatencyTable",
    entry: "redisLatencyEntry",
    augments: None,
    index: RowIndex::InstanceAndName { object: "redisLatEvent" },
    rows_from: &["LATENCY LATEST"],
    resource_type: "redisLatency",
    columns: LATENCY_COLUMNS,
    max_rows: None,
};

/// `redisClientNameTable`: CLIENT LIST's aggregation caps it already.
#[rustfmt::skip]
pub const CLIENT_NAME_TABLE: TableDef = TableDef {
    table: "redisClientNameTable",
    entry: "redisClientNameEntry",
    augments: None,
    index: RowIndex::InstanceAndName { object: "redisCnName" },
    rows_from: &["CLIENT LIST", "name"],
    resource_type: "redisClientName",
    columns: CLIENT_NAME_COLUMNS,
    max_rows: None,
};

#[rustfmt::skip]
pub const CLIENT_USER_TABLE: TableDef = TableDef {
    table: "redisClientUserTable",
    entry: "redisClientUserEntry",
    augments: None,
    index: RowIndex::InstanceAndName { object: "redisCuUser" },
    rows_from: &["CLIENT LIST", "user"],
    resource_type: "redisClientUser",
    columns: CLIENT_USER_COLUMNS,
    max_rows: None,
};

#[rustfmt::skip]
pub const ALARM_TABLE: TableDef = TableDef {
    table: "redisAlarmTable",
    entry: "redisAlarmEntry",
    augments: None,
    index: RowIndex::InstanceAndNumber { object: "redisAlarmNumber", min: 1 },
    rows_from: &["[[alarm]]"],
    resource_type: "redisAlarm",
    columns: ALARM_COLUMNS,
    max_rows: None,
};

/// `redisKeyTable`: the key check's own cap (`check_keys_max`) bounds it.
#[rustfmt::skip]
pub const KEY_TABLE: TableDef = TableDef {
    table: "redisKeyTable",
    entry: "redisKeyEntry",
    augments: None,
    index: RowIndex::InstanceAndName { object: "redisCkName" },
    rows_from: &["check_keys"],
    resource_type: "redisKey",
    columns: KEY_COLUMNS,
    max_rows: None,
};

#[rustfmt::skip]
pub const STREAM_GROUP_TABLE: TableDef = TableDef {
    table: "redisKeyStreamGroupTable",
    entry: "redisKeyStreamGroupEntry",
    augments: None,
    index: RowIndex::InstanceNameAndName { parent: "redisCkName", object: "redisKgName" },
    rows_from: &["XINFO GROUPS", "name"],
    resource_type: "redisKeyStreamGroup",
    columns: STREAM_GROUP_COLUMNS,
    max_rows: None,
};

pub const KEY_CHECK_TABLE: TableDef = augmenting(
    "redisKeyCheckTable",
    "redisKeyCheckEntry",
    KEY_CHECK_COLUMNS,
);

/// `redisSlowCommandTable`: the newest slow log entries seen arriving.
#[rustfmt::skip]
pub const SLOW_COMMAND_TABLE: TableDef = TableDef {
    table: "redisSlowCommandTable",
    entry: "redisSlowCommandEntry",
    augments: None,
    index: RowIndex::InstanceAndNumber { object: "redisScNumber", min: 1 },
    // The index numbers the entries as the agent reads them; its
    // DESCRIPTION names no source.
    rows_from: &[],
    resource_type: "redisSlowCommand",
    columns: SLOW_COMMAND_COLUMNS,
    max_rows: Some(SLOW_COMMAND_ROWS),
};

/// `redisKeysizesTable`: at most 4,096 rows (Redis 8.2 writes at most 5
/// types of 65 buckets for each database; 4,096 holds every bucket of 12
/// databases, or the few buckets a real database fills of many more).
#[rustfmt::skip]
pub const KEYSIZES_TABLE: TableDef = TableDef {
    table: "redisKeysizesTable",
    entry: "redisKeysizesEntry",
    augments: None,
    index: RowIndex::InstanceDbTypeBucket { db: "redisKzDb", kind: "redisKzType", bucket: "redisKzBucket" },
    rows_from: &["db<N>_distrib_<type>_sizes", "db<N>_distrib_<type>_items"],
    resource_type: "redisKeysizes",
    columns: KEYSIZES_COLUMNS,
    max_rows: Some(4096),
};

/// `redisThreadTable`: at most 256 threads (Redis's io-threads takes at
/// most 128).
#[rustfmt::skip]
pub const THREAD_TABLE: TableDef = TableDef {
    table: "redisThreadTable",
    entry: "redisThreadEntry",
    augments: None,
    index: RowIndex::InstanceAndNumber { object: "redisThrNumber", min: 0 },
    rows_from: &["io_thread_<N>"],
    resource_type: "redisThread",
    columns: THREAD_COLUMNS,
    max_rows: Some(256),
};

/// `redisModuleTable`: at most 256 modules.
#[rustfmt::skip]
pub const MODULE_TABLE: TableDef = TableDef {
    table: "redisModuleTable",
    entry: "redisModuleEntry",
    augments: None,
    index: RowIndex::InstanceAndName { object: "redisModName" },
    rows_from: &["module", "name"],
    resource_type: "redisModule",
    columns: MODULE_COLUMNS,
    max_rows: Some(256),
};

/// `redisBigKeyTable`: `big_keys_rows` per database, at most this many in
/// all.
#[rustfmt::skip]
pub const BIG_KEY_TABLE: TableDef = TableDef {
    table: "redisBigKeyTable",
    entry: "redisBigKeyEntry",
    augments: None,
    index: RowIndex::InstanceAndNumber { object: "redisBkRank", min: 1 },
    rows_from: &[],
    resource_type: "redisBigKey",
    columns: BIG_KEY_COLUMNS,
    max_rows: Some(1000),
};

/// `redisHotKeyTable`: the reply's own cap (`MAX_HOT_KEYS`) bounds it.
#[rustfmt::skip]
pub const HOT_KEY_TABLE: TableDef = TableDef {
    table: "redisHotKeyTable",
    entry: "redisHotKeyEntry",
    augments: None,
    index: RowIndex::InstanceAndNumber { object: "redisHkRank", min: 1 },
    rows_from: &[],
    resource_type: "redisHotKey",
    columns: HOT_KEY_COLUMNS,
    max_rows: Some(100),
};

/// `redisSentinelEventTable`: the failover watch's own cap
/// (`crate::redis::failover::MAX_EVENTS` a sentinel) bounds it.
#[rustfmt::skip]
pub const SENTINEL_EVENT_TABLE: TableDef = TableDef {
    table: "redisSentinelEventTable",
    entry: "redisSentinelEventEntry",
    augments: None,
    index: RowIndex::InstanceAndNumber { object: "redisSeIndex", min: 1 },
    rows_from: &[],
    resource_type: "redisSentinelEvent",
    columns: SENTINEL_EVENT_COLUMNS,
    max_rows: None,
};

/// `redisAclRefusalTable`: ACL LOG per reason, user and client address;
/// the log is read 128 entries at most, and at most 100 rows are served
/// (the rest counted in `redisInstanceRowsLeftOut`).
#[rustfmt::skip]
pub const ACL_REFUSAL_TABLE: TableDef = TableDef {
    table: "redisAclRefusalTable",
    entry: "redisAclRefusalEntry",
    augments: None,
    index: RowIndex::InstanceAndNumber { object: "redisArNumber", min: 1 },
    rows_from: &["ACL LOG"],
    resource_type: "redisAclRefusal",
    columns: ACL_REFUSAL_COLUMNS,
    max_rows: Some(100),
};

/// Every table of REDIS-SERVER-MIB the agent serves.
pub const TABLES: &[TableDef] = &[
    INSTANCE_TABLE,
    SERVER_TABLE,
    CLIENTS_TABLE,
    MEMORY_TABLE,
    PERSISTENCE_TABLE,
    STATS_TABLE,
    REPLICATION_TABLE,
    CPU_TABLE,
    CLUSTER_TABLE,
    SENTINEL_STATE_TABLE,
    TLS_TABLE,
    KEYSPACE_TABLE,
    REPLICA_TABLE,
    COMMAND_TABLE,
    ERROR_TABLE,
    SENTINEL_TABLE,
    SLOWLOG_TABLE,
    LATENCY_TABLE,
    CLIENT_NAME_TABLE,
    CLIENT_USER_TABLE,
    ALARM_TABLE,
    KEY_TABLE,
    STREAM_GROUP_TABLE,
    KEY_CHECK_TABLE,
    SLOW_COMMAND_TABLE,
    KEYSIZES_TABLE,
    THREAD_TABLE,
    MODULE_TABLE,
    BIG_KEY_TABLE,
    HOT_KEY_TABLE,
    SENTINEL_EVENT_TABLE,
    ACL_REFUSAL_TABLE,
];

/// `puppetResourceTable`: the last run's listed resources, at most
/// [`MAX_PUPPET_RESOURCES`].
pub const PUPPET_RESOURCE_TABLE: TableDef = TableDef {
    table: "puppetResourceTable",
    entry: "puppetResourceEntry",
    augments: None,
    index: RowIndex::Row {
        object: "puppetResourceIndex",
        max: MAX_PUPPET_RESOURCES as u32,
    },
    // The index is a position in the run's list; its DESCRIPTION names
    // no source.
    rows_from: &[],
    resource_type: "puppetResource",
    columns: PUPPET_RESOURCE_COLUMNS,
    max_rows: Some(MAX_PUPPET_RESOURCES),
};

/// `puppetEventTable`: the events log's last rows (the log's own cap,
/// `max_rows` of `[puppet]`, bounds them).
pub const PUPPET_EVENT_TABLE: TableDef = TableDef {
    table: "puppetEventTable",
    entry: "puppetEventEntry",
    augments: None,
    index: RowIndex::Row {
        object: "puppetEventIndex",
        max: MAX_INDEX_NUMBER,
    },
    // The index numbers the events as read; its DESCRIPTION names no
    // source.
    rows_from: &[],
    resource_type: "puppetEvent",
    columns: PUPPET_EVENT_COLUMNS,
    max_rows: None,
};

/// `puppetCertificateTable`: the Puppet agent's certificate, CA and CRL,
/// one row each, indexed by their kind.
pub const PUPPET_CERTIFICATE_TABLE: TableDef = TableDef {
    table: "puppetCertificateTable",
    entry: "puppetCertificateEntry",
    augments: None,
    index: RowIndex::Row {
        object: "puppetCertificateIndex",
        max: 3,
    },
    // The index is the kind's number; its DESCRIPTION names no source.
    rows_from: &[],
    resource_type: "puppetCertificate",
    columns: PUPPET_CERTIFICATE_COLUMNS,
    max_rows: Some(3),
};

/// Rows of `puppetFactTable` at most (`puppetFactIndex`, `Integer32
/// (1..32)`): the facts `[puppet] facts` may name.
pub const MAX_FACT_ROWS: usize = 32;

/// `puppetFactTable`: the allowlisted facts (`[puppet] facts`), each row
/// numbered by its fact's place in that list.
pub const PUPPET_FACT_TABLE: TableDef = TableDef {
    table: "puppetFactTable",
    entry: "puppetFactEntry",
    augments: None,
    index: RowIndex::Row {
        object: "puppetFactIndex",
        max: MAX_FACT_ROWS as u32,
    },
    // The index is the fact's place in `facts`; its DESCRIPTION says so.
    rows_from: &[],
    resource_type: "puppetFact",
    columns: PUPPET_FACT_COLUMNS,
    max_rows: Some(MAX_FACT_ROWS),
};

/// Every table of PUPPET-AGENT-MIB the agent serves.
pub const PUPPET_TABLES: &[TableDef] = &[
    PUPPET_RESOURCE_TABLE,
    PUPPET_EVENT_TABLE,
    PUPPET_CERTIFICATE_TABLE,
    PUPPET_FACT_TABLE,
];

/// The columns of the tables that AUGMENT `redisInstanceEntry` and are
/// read from INFO (and CLUSTER INFO): those whose columns have an INFO
/// field as their source.
pub const INFO_GROUPS: &[&[ObjectDef]] = &info_groups::<{ count_info_groups() }>();

/// Whether `table` is read from INFO, one row per instance.
const fn is_info_group(table: &TableDef) -> bool {
    table.augments.is_some() && matches!(table.columns[0].source, Source::Info { .. })
}

impl TableDef {
    /// Whether the table AUGMENTS `redisInstanceEntry` and is read from
    /// INFO (and CLUSTER INFO): one row per instance, every column an
    /// INFO field ([`INFO_GROUPS`]).
    pub const fn is_info_group(&self) -> bool {
        is_info_group(self)
    }
}

const fn count_info_groups() -> usize {
    let (mut n, mut t) = (0, 0);
    while t < TABLES.len() {
        if is_info_group(&TABLES[t]) {
            n += 1;
        }
        t += 1;
    }
    n
}

const fn info_groups<const N: usize>() -> [&'static [ObjectDef]; N] {
    let mut groups: [&'static [ObjectDef]; N] = [&[]; N];
    let (mut n, mut t) = (0, 0);
    while t < TABLES.len() {
        if is_info_group(&TABLES[t]) {
            groups[n] = TABLES[t].columns;
            n += 1;
        }
        t += 1;
    }
    groups
}

/// The columns of PUPPET-AGENT-MIB's tables (for the notifications'
/// placement, which is decided when the crate is compiled).
pub const PUPPET_TABLE_COLUMNS: &[&[ObjectDef]] = &[
    PUPPET_TABLES[0].columns,
    PUPPET_TABLES[1].columns,
    PUPPET_TABLES[2].columns,
    PUPPET_TABLES[3].columns,
];

/// The table an object is a column of.
pub fn table_of(object: &ObjectDef) -> Option<&'static TableDef> {
    TABLES
        .iter()
        .chain(PUPPET_TABLES)
        .find(|t| t.columns.iter().any(|c| c.name == object.name))
}
