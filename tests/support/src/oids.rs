//! Well-known OIDs of the test setup.

/// `enterprises.daysofwonder(20267)`: walks of this show our subtree and the
/// native objects around it.
pub const ENTERPRISE: &str = ".1.3.6.1.4.1.20267";
/// REDIS-SERVER-MIB's root.
pub const REDIS_ROOT: &str = ".1.3.6.1.4.1.20267.400";
/// PUPPET-AGENT-MIB's root.
pub const PUPPET_ROOT: &str = ".1.3.6.1.4.1.20267.401";
/// Where the 17 legacy scalars hang (`-o` default): `.N.0`, N = 1..=17.
pub const LEGACY_ROOT: &str = ".1.3.6.1.4.1.20267.400.1";
/// `redisInstanceEntry`: columns `.C.1` for the first instance.
pub const INSTANCE_ENTRY: &str = ".1.3.6.1.4.1.20267.400.3.1.1";
/// The 17 native `override` scalars of the private snmpd (`.N.0`, N =
/// 1..=17, Gauge32 [`baseline_value`]`(N)`), a baseline for benchmarks.
pub const BASELINE_ROOT: &str = ".1.3.6.1.4.1.20267.499.1";
/// A native snmpd object after our subtree: a walk of [`ENTERPRISE`] must
/// reach it.
pub const AFTER_OID: &str = ".1.3.6.1.4.1.20267.500.1.0";
pub const AFTER_VALUE: u32 = 42;
/// `sysUpTime.0`, answered by snmpd itself.
pub const SYS_UPTIME: &str = ".1.3.6.1.2.1.1.3.0";

/// The index of a row of a string-indexed table: the instance, then the
/// name as an SMIv2 string index (its length, then its bytes).
pub fn name_row(instance: u32, name: &str) -> String {
    let mut s = format!("{instance}.{}", name.len());
    for b in name.bytes() {
        s.push_str(&format!(".{b}"));
    }
    s
}

/// Number of native baseline scalars the private snmpd serves.
pub const BASELINE_COUNT: u32 = 17;

/// Value of the native baseline scalar `.499.1.N.0`.
pub fn baseline_value(n: u32) -> u32 {
    1000 + n
}

/// The 17 legacy objects: (N, MIB name, type net-snmp prints, INFO field).
pub const LEGACY: [(u32, &str, &str, &str); 17] = [
    (1, "redisConnectedClients", "Gauge32", "connected_clients"),
    (2, "redisConnectedSlaves", "Gauge32", "connected_slaves"),
    (3, "redisUsedMemory", "Counter64", "used_memory"),
    (
        4,
        "redisChangesSinceLastSave",
        "Gauge32",
        "rdb_changes_since_last_save",
    ),
    (
        5,
        "redisTotalConnections",
        "Counter64",
        "total_connections_received",
    ),
    (
        6,
        "redisCommandsProcessed",
        "Counter64",
        "total_commands_processed",
    ),
    (7, "redisCPUSys", "Counter32", "used_cpu_sys"),
    (8, "redisCPUUsr", "Counter32", "used_cpu_user"),
    (9, "redisBlockedClients", "Gauge32", "blocked_clients"),
    (10, "redisEvictedKeys", "Counter64", "evicted_keys"),
    (11, "redisExpiredKeys", "Counter64", "expired_keys"),
    (12, "redisKeyspaceHits", "Counter64", "keyspace_hits"),
    (13, "redisKeyspaceMisses", "Counter64", "keyspace_misses"),
    (14, "redisPubsubChannels", "Gauge32", "pubsub_channels"),
    (15, "redisPubsubPatterns", "Gauge32", "pubsub_patterns"),
    (16, "redisUptime", "Gauge32", "uptime_in_seconds"),
    (17, "redisUsedMemoryRss", "Counter64", "used_memory_rss"),
];

/// Numeric OID of legacy object N (`.1.3.6.1.4.1.20267.400.1.N.0`).
pub fn legacy_oid(n: u32) -> String {
    format!("{LEGACY_ROOT}.{n}.0")
}

/// Numeric OID of `redisInstanceEntry` column `col` for instance `index`.
pub fn instance_oid(col: u32, index: u32) -> String {
    format!("{INSTANCE_ENTRY}.{col}.{index}")
}
