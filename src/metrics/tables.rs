//! The tables of each module, in the order the MIBs and the consumer
//! files list them: a new table is one line here, beside its `table!` in
//! its family's file.

use super::*;

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

const fn count_info_groups() -> usize {
    let (mut n, mut t) = (0, 0);
    while t < TABLES.len() {
        if TABLES[t].is_info_group() {
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
        if TABLES[t].is_info_group() {
            groups[n] = TABLES[t].columns;
            n += 1;
        }
        t += 1;
    }
    groups
}

/// The table an object is a column of.
pub fn table_of(object: &ObjectDef) -> Option<&'static TableDef> {
    TABLES
        .iter()
        .chain(PUPPET_TABLES)
        .find(|t| t.columns.iter().any(|c| c.name == object.name))
}
