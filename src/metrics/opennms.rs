//! What OpenNMS collects of the catalogue: the data collection groups, the
//! objects left out and why, and the resource types of the tables.
//! `opennms/etc/datacollection/redis-snmp.xml` is generated from these
//! lists, the objects' aliases ([`ObjectDef::opennms_alias`]) and the
//! tables' resource types ([`TableDef::resource_type`]) by
//! `tests/opennms/collection.rs`, and a test diffs it against the shipped
//! file. A new array of objects goes into one group here, or into
//! [`NOT_COLLECTED`] with its reason.

use super::*;

/// One `<group>` of the data collection: scalars (`ifType="ignore"`,
/// instance `0`) or columns of tables (`ifType="all"`, the resource type of
/// their table), never both.
#[derive(Debug, Clone, Copy)]
pub struct CollectionGroup {
    /// The group's name, which the system definitions include.
    pub name: &'static str,
    /// The comment above the group in the file.
    pub about: &'static str,
    /// The arrays of the catalogue it collects, in this order.
    pub objects: &'static [&'static [ObjectDef]],
}

const fn group(
    name: &'static str,
    about: &'static str,
    objects: &'static [&'static [ObjectDef]],
) -> CollectionGroup {
    CollectionGroup {
        name,
        about,
        objects,
    }
}

/// The groups of the data collection `redis-snmp`, in the file's order.
/// Their names are what users' configurations include: keep them.
#[rustfmt::skip]
pub const COLLECTION_GROUPS: &[CollectionGroup] = &[
    group("redis-snmp-legacy", "redisStatus: the 17 scalars of the Perl agent (the first configured instance). The six aliases of the old OpenNMS configuration are kept, so existing RRD files keep growing.", &[LEGACY_SCALARS]),
    group("redis-snmp-instance", "redisInstanceTable: the agent's view of each configured instance, and the certificate of a rediss:// server", &[INSTANCE_COLUMNS]),
    group("redis-snmp-server", "redisServerTable, and redisTlsTable (Valkey 9.1+) of the same instances", &[SERVER_COLUMNS, TLS_COLUMNS]),
    group("redis-snmp-clients", "redisClientsTable", &[CLIENT_COLUMNS]),
    group("redis-snmp-memory", "redisMemoryTable (ratios in hundredths)", &[MEMORY_COLUMNS]),
    group("redis-snmp-persistence", "redisPersistenceTable", &[PERSISTENCE_COLUMNS]),
    group("redis-snmp-stats", "redisStatsTable", &[STATS_COLUMNS]),
    group("redis-snmp-replication", "redisReplicationTable", &[REPLICATION_COLUMNS]),
    group("redis-snmp-cpu", "redisCpuTable (centiseconds)", &[CPU_COLUMNS]),
    group("redis-snmp-cluster", "redisClusterTable", &[CLUSTER_COLUMNS]),
    group("redis-snmp-sentinel-state", "redisSentinelStateTable", &[SENTINEL_COLUMNS]),
    group("redis-snmp-slowlog", "redisSlowlogTable", &[SLOWLOG_COLUMNS]),
    group("redis-snmp-keyspace", "redisKeyspaceTable: one row per instance and database", &[KEYSPACE_COLUMNS]),
    group("redis-snmp-replicas", "redisReplicaTable: the replicas a master lists", &[REPLICA_COLUMNS]),
    group("redis-snmp-commands", "redisCommandTable: one row per instance and command", &[COMMAND_COLUMNS]),
    group("redis-snmp-errors", "redisErrorTable: one row per instance and error prefix", &[ERROR_COLUMNS]),
    group("redis-snmp-sentinel-masters", "redisSentinelTable: the masters a sentinel watches", &[SENTINEL_MASTER_COLUMNS]),
    group("redis-snmp-latency", "redisLatencyTable: LATENCY LATEST, one row per instance and event", &[LATENCY_COLUMNS]),
    group("redis-snmp-client-names", "redisClientNameTable: CLIENT LIST per client name", &[CLIENT_NAME_COLUMNS]),
    group("redis-snmp-client-users", "redisClientUserTable: CLIENT LIST per ACL user", &[CLIENT_USER_COLUMNS]),
    group("redis-snmp-keys", "redisKeyTable: the keys check_keys names or matches", &[KEY_COLUMNS]),
    group("redis-snmp-key-stream-groups", "redisKeyStreamGroupTable: the consumer groups of the checked streams", &[STREAM_GROUP_COLUMNS]),
    group("redis-snmp-key-checks", "redisKeyCheckTable: what the key checks left out and cost", &[KEY_CHECK_COLUMNS]),
    group("redis-snmp-puppet", "PUPPET-AGENT-MIB scalars: the last Puppet run, the agent's state and the events log", &[PUPPET_SCALARS, PUPPET_EVENT_SCALARS]),
    group("redis-snmp-puppet-runs", "PUPPET-AGENT-MIB: successive runs, how often and whether they converge", &[PUPPET_RUN_SCALARS]),
    group("redis-snmp-puppet-certificates", "puppetCertificateTable: the Puppet agent's certificate, its CA and its CRL, one row each, stored under its index (the number of its puppetCertKind)", &[PUPPET_CERTIFICATE_COLUMNS]),
    group("redis-snmp-keysizes", "redisKeysizesTable: Redis 8's histograms of key sizes, one row per instance, database, type and bucket", &[KEYSIZES_COLUMNS]),
    group("redis-snmp-threads", "redisThreadTable: Redis 8's I/O threads", &[THREAD_COLUMNS]),
    group("redis-snmp-modules", "redisModuleTable: the loaded modules", &[MODULE_COLUMNS]),
    group("redis-snmp-acl-refusals", "redisAclRefusalTable: ACL LOG per reason, user and client address", &[ACL_REFUSAL_COLUMNS]),
];

/// Objects the data collection deliberately leaves out.
#[derive(Debug, Clone, Copy)]
pub struct NotCollected {
    pub objects: &'static [ObjectDef],
    /// Why, as the file's header and `opennms/README.md` say it.
    pub why: &'static str,
}

/// What is not collected, and why.
#[rustfmt::skip]
pub const NOT_COLLECTED: &[NotCollected] = &[
    NotCollected {
        objects: PUPPET_FACT_COLUMNS,
        why: "puppetFactTable (.401.6), the host's allowlisted facts: text a manager targets hosts by, not a time series; puppetRunFinished carries them.",
    },
    NotCollected {
        objects: PUPPET_RESOURCE_COLUMNS,
        why: "puppetResourceTable (.401.2), the resources of the last Puppet run: its rows are renumbered on every run, so a time series per row would mix unrelated resources; the puppetRunFailed event carries the first error instead.",
    },
    NotCollected {
        objects: PUPPET_EVENT_COLUMNS,
        why: "puppetEventTable (.401.4), the last resource events of the events log: each row is one event, seen once; the puppetResourceChanged and puppetResourceFailed events carry them instead.",
    },
    NotCollected {
        objects: ALARM_COLUMNS,
        why: "redisAlarmTable (.400.3.23), the agent's own alarms raised now: each row is gone once rearmed, and its values are text; OpenNMS keeps them as the alarms of redisThresholdCrossed, cleared by redisThresholdRearmed, not as a time series.",
    },
    NotCollected {
        objects: SLOW_COMMAND_COLUMNS,
        why: "redisSlowCommandTable (.400.3.28), the newest slow log entries the agent saw arrive: each row is one entry, seen once, and mostly text; the redisSlowCommand event carries each one over the threshold instead.",
    },
    NotCollected {
        objects: BIG_KEY_COLUMNS,
        why: "redisBigKeyTable (.400.3.31), the largest keys the big-key sampler has seen: its rows are ranks, which another key takes as sizes change, so a time series per row would mix keys.",
    },
    NotCollected {
        objects: HOT_KEY_COLUMNS,
        why: "redisHotKeyTable (.400.3.32), the keys HOTKEYS GET reports: its rows are ranks, which another key takes from one window to the next, so a time series per row would mix keys.",
    },
    NotCollected {
        objects: SENTINEL_EVENT_COLUMNS,
        why: "redisSentinelEventTable (.400.3.30), what a sentinel's masters did (failovers, down and up, quorum): each row is one event, seen once, and mostly text; the redisFailover and redisSentinel* events carry them instead.",
    },
];

/// Where OpenNMS stores the rows of a resource type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// Under the row's index (`IndexStorageStrategy`).
    Index,
    /// Under the value of this string column of the row, with every
    /// character other than letters, digits, `.`, `_` and `-` made `_`
    /// (`SiblingColumnStorageStrategy`): the column must be unique on the
    /// node.
    Sibling(&'static str),
}

/// A resource type the tables' rows are kept under ([`TableDef::resource_type`]).
#[derive(Debug, Clone, Copy)]
pub struct ResourceType {
    pub name: &'static str,
    /// What the web UI calls the type.
    pub label: &'static str,
    /// How it labels one resource (`${index}`, `${subIndex(..)}`, string
    /// columns by alias).
    pub resource_label: &'static str,
    pub storage: Storage,
}

/// The resource types of [`TABLES`], in the file's order.
#[rustfmt::skip]
pub const RESOURCE_TYPES: &[ResourceType] = &[
    ResourceType { name: "redisInstance", label: "Redis instance", resource_label: "${redisInstanceName}", storage: Storage::Sibling("redisInstanceName") },
    ResourceType { name: "redisKeyspace", label: "Redis database", resource_label: "db${subIndex(1,1)} (instance ${subIndex(0,1)})", storage: Storage::Index },
    ResourceType { name: "redisReplica", label: "Redis replica", resource_label: "${redisRpAddress} (replica ${subIndex(1,1)} of instance ${subIndex(0,1)})", storage: Storage::Index },
    ResourceType { name: "redisCommand", label: "Redis command", resource_label: "${redisCmdLabel} (instance ${subIndex(0,1)})", storage: Storage::Sibling("redisCmdKey") },
    ResourceType { name: "redisError", label: "Redis error prefix", resource_label: "${redisErrLabel} (instance ${subIndex(0,1)})", storage: Storage::Sibling("redisErrKey") },
    ResourceType { name: "redisSentinelMaster", label: "Redis master watched by Sentinel", resource_label: "${redisSntLabel} (instance ${subIndex(0,1)})", storage: Storage::Sibling("redisSntKey") },
    ResourceType { name: "redisLatency", label: "Redis latency event", resource_label: "${redisLatLabel} (instance ${subIndex(0,1)})", storage: Storage::Sibling("redisLatKey") },
    ResourceType { name: "redisClientName", label: "Redis clients by name", resource_label: "${redisCnLabel} (instance ${subIndex(0,1)})", storage: Storage::Sibling("redisCnKey") },
    ResourceType { name: "redisClientUser", label: "Redis clients by user", resource_label: "${redisCuLabel} (instance ${subIndex(0,1)})", storage: Storage::Sibling("redisCuKey") },
    ResourceType { name: "redisKey", label: "Redis checked key", resource_label: "${redisCkLabel} (instance ${subIndex(0,1)})", storage: Storage::Sibling("redisCkKey") },
    ResourceType { name: "redisKeyStreamGroup", label: "Redis stream consumer group", resource_label: "${redisKgLabel} (instance ${subIndex(0,1)})", storage: Storage::Sibling("redisKgKey") },
    ResourceType { name: "redisKeysizes", label: "Redis key-size bucket", resource_label: "db${subIndex(1,1)} type ${subIndex(2,1)} from ${redisKzLabel} (instance ${subIndex(0,1)})", storage: Storage::Index },
    ResourceType { name: "redisThread", label: "Redis I/O thread", resource_label: "thread ${subIndex(1,1)} (instance ${subIndex(0,1)})", storage: Storage::Index },
    ResourceType { name: "redisModule", label: "Redis module", resource_label: "${redisModLabel} (instance ${subIndex(0,1)})", storage: Storage::Sibling("redisModKey") },
    ResourceType { name: "redisAclRefusal", label: "Redis ACL refusals", resource_label: "refusals ${subIndex(1,1)} (instance ${subIndex(0,1)})", storage: Storage::Index },
    ResourceType { name: "puppetCertificate", label: "Puppet certificate", resource_label: "${puppetCertPath}", storage: Storage::Index },
];

/// The `instance` of an object's `mibObj`: its table's resource type, or
/// `0` for a scalar.
pub fn opennms_instance(def: &ObjectDef) -> &'static str {
    table_of(def).map_or("0", |t| t.resource_type)
}
