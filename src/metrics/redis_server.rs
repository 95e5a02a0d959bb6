//! REDIS-SERVER-MIB's objects: the legacy scalars, the instance table and
//! the tables that augment it, the row tables, and their enumerations.

use super::*;
use crate::smi::Syntax;

enumeration! {
    /// `ok`/`err` status fields (bgsave, AOF).
    OkErr {
        Ok = 1 => ["ok"],
        Err = 2 => ["err"],
    }
}

enumeration! {
    /// `role`: Redis says `slave` for a replica.
    Role {
        Master = 1 => ["master"],
        Replica = 2 => ["slave", "replica"],
        Sentinel = 3 => ["sentinel"],
    }
}

enumeration! {
    /// `redis_mode` (Valkey: `server_mode`).
    ServerMode {
        Standalone = 1 => ["standalone"],
        Sentinel = 2 => ["sentinel"],
        Cluster = 3 => ["cluster"],
    }
}

enumeration! {
    /// `master_link_status`.
    LinkStatus {
        Up = 1 => ["up"],
        Down = 2 => ["down"],
    }
}

enumeration! {
    /// `master_failover_state` (Redis 6.2+).
    FailoverState {
        NoFailover = 1 => ["no-failover"],
        WaitingForSync = 2 => ["waiting-for-sync"],
        FailoverInProgress = 3 => ["failover-in-progress"],
    }
}

enumeration! {
    /// `cluster_state` from CLUSTER INFO.
    ClusterState {
        Ok = 1 => ["ok"],
        Fail = 2 => ["fail"],
    }
}

use Syntax::*;

/// The 17 scalars of the Perl `redis-snmp`, with their original names, OIDs
/// and types (`Gauge64` is the old `REDISUnsigned64`). They show the first
/// configured instance. Served with instance suffix `.0`.
#[rustfmt::skip]
pub const LEGACY_SCALARS: &[ObjectDef] = &[
    info("redisConnectedClients", &[1, 1], Gauge32, &["connected_clients"]).units("clients").alias("redisConnectedClnts"),
    info("redisConnectedSlaves", &[1, 2], Gauge32, &["connected_slaves"]).units("replicas").alias("redisConnectedSlavs"),
    info("redisUsedMemory", &[1, 3], Gauge64, &["used_memory"]).units("bytes"),
    // Renamed in Redis 2.6; the Perl agent lost this object on anything newer.
    info("redisChangesSinceLastSave", &[1, 4], Gauge32, &["rdb_changes_since_last_save", "changes_since_last_save"]).units("changes").alias("redisChangsSncLstSv"),
    info("redisTotalConnections", &[1, 5], Counter64, &["total_connections_received"]).units("connections").alias("redisTotalConnectns"),
    info("redisCommandsProcessed", &[1, 6], Counter64, &["total_commands_processed"]).units("commands").alias("redisCommandsPrcssd"),
    centiseconds("redisCPUSys", &[1, 7], Counter32, &["used_cpu_sys"]),
    centiseconds("redisCPUUsr", &[1, 8], Counter32, &["used_cpu_user"]),
    info("redisBlockedClients", &[1, 9], Gauge32, &["blocked_clients"]).units("clients"),
    info("redisEvictedKeys", &[1, 10], Counter64, &["evicted_keys"]).units("keys"),
    info("redisExpiredKeys", &[1, 11], Counter64, &["expired_keys"]).units("keys"),
    info("redisKeyspaceHits", &[1, 12], Counter64, &["keyspace_hits"]).units("lookups"),
    info("redisKeyspaceMisses", &[1, 13], Counter64, &["keyspace_misses"]).units("lookups"),
    info("redisPubsubChannels", &[1, 14], Gauge32, &["pubsub_channels"]).units("channels"),
    info("redisPubsubPatterns", &[1, 15], Gauge32, &["pubsub_patterns"]).units("patterns"),
    info("redisUptime", &[1, 16], Gauge32, &["uptime_in_seconds"]).units("seconds"),
    info("redisUsedMemoryRss", &[1, 17], Gauge64, &["used_memory_rss"]).units("bytes"),
];

/// Columns of `redisInstanceTable` (`redis.3.1.1.N`), indexed by the
/// instance's number (1 = the first configured instance). Column 1 is the
/// not-accessible index `redisInstanceIndex` and is not served.
#[rustfmt::skip]
pub const INSTANCE_COLUMNS: &[ObjectDef] = &[
    status("redisInstanceName", &[3, 1, 1, 2], DisplayString, StatusField::Name),
    status("redisInstanceAddress", &[3, 1, 1, 3], DisplayString, StatusField::Address).alias("redisInstAddress"),
    status("redisInstanceState", &[3, 1, 1, 4], Enum, StatusField::Up).enumerated(InstanceState::LABELS),
    status("redisInstanceDataAge", &[3, 1, 1, 5], Gauge32, StatusField::DataAge).units("seconds").alias("redisInstDataAge"),
    status("redisInstancePollTime", &[3, 1, 1, 6], Gauge32, StatusField::PollDuration).units("milliseconds").alias("redisInstPollTime"),
    status("redisInstanceLastError", &[3, 1, 1, 7], DisplayString, StatusField::LastError).alias("redisInstLastError"),
    status("redisInstancePollsOk", &[3, 1, 1, 8], Counter32, StatusField::PollsOk).units("polls").alias("redisInstPollsOk"),
    status("redisInstancePollsFailed", &[3, 1, 1, 9], Counter32, StatusField::PollsFailed).units("polls").alias("redisInstPollsFail"),
    // The server's TLS certificate (issue 16), rediss:// instances only.
    status("redisInstanceCertSubject", &[3, 1, 1, 10], DisplayString, StatusField::CertSubject).alias("redisCertSubject"),
    status("redisInstanceCertIssuer", &[3, 1, 1, 11], DisplayString, StatusField::CertIssuer).alias("redisCertIssuer"),
    status("redisInstanceCertNotAfter", &[3, 1, 1, 12], Gauge64, StatusField::CertNotAfter).units("seconds").alias("redisCertNotAfter"),
    status("redisInstanceCertExpiresIn", &[3, 1, 1, 13], Integer32, StatusField::CertExpiresIn).units("seconds").alias("redisCertExpiresIn"),
    // Issue 24 (M3): what the caps of the tables read from INFO left out
    // (the INFO reading writes it, not the poller's status).
    column("redisInstanceRowsLeftOut", &[3, 1, 1, 14], Gauge32, Source::Rows(RowsField::LeftOut)).units("rows").alias("redisInstRowsLeft"),
];

use Conversion::{AgeOf, PercentOf, Scaled, Signed, Text, Truth};

/// `redisServerTable` (`redis.3.2`): who the server is. Like every group
/// below, its entry AUGMENTS `redisInstanceEntry`: one row per instance.
#[rustfmt::skip]
pub const SERVER_COLUMNS: &[ObjectDef] = &[
    // Valkey reports redis_version:7.2.4 for compatibility; its users know
    // it by its own version.
    field("redisSrvVersion", &[3, 2, 1, 1], DisplayString, Text, &["valkey_version", "redis_version"]),
    // Valkey 8+ says server_mode instead.
    field("redisSrvMode", &[3, 2, 1, 2], Enum, Conversion::Enum(ServerMode::LABELS), &["redis_mode", "server_mode"]),
    field("redisSrvRunId", &[3, 2, 1, 3], DisplayString, Text, &["run_id"]),
    info("redisSrvProcessId", &[3, 2, 1, 4], Gauge32, &["process_id"]),
    info("redisSrvTcpPort", &[3, 2, 1, 5], Gauge32, &["tcp_port"]),
    info("redisSrvUptime", &[3, 2, 1, 6], Gauge32, &["uptime_in_seconds"]).units("seconds"),
    field("redisSrvExecutable", &[3, 2, 1, 7], DisplayString, Text, &["executable"]),
    field("redisSrvConfigFile", &[3, 2, 1, 8], DisplayString, Text, &["config_file"]),
    field("redisSrvOs", &[3, 2, 1, 9], DisplayString, Text, &["os"]),
    info("redisSrvHz", &[3, 2, 1, 10], Gauge32, &["hz"]).units("hertz"),
    field("redisSrvIoThreads", &[3, 2, 1, 11], TruthValue, Truth, &["io_threads_active"]),
    field("redisSrvName", &[3, 2, 1, 12], DisplayString, Text, &["server_name"]),
    // Issue 12/16 (revision 202611240040Z): fields checked against
    // genValkeyInfoString in Valkey's src/server.c and valkey-doc's
    // commands/info.md.
    info("redisSrvClientsHz", &[3, 2, 1, 13], Gauge32, &["clients_hz"]).units("hertz"),
];

/// `redisClientsTable` (`redis.3.3`).
#[rustfmt::skip]
pub const CLIENT_COLUMNS: &[ObjectDef] = &[
    info("redisCliConnected", &[3, 3, 1, 1], Gauge32, &["connected_clients"]).units("clients"),
    info("redisCliMax", &[3, 3, 1, 2], Gauge32, &["maxclients"]).units("clients"),
    info("redisCliBlocked", &[3, 3, 1, 3], Gauge32, &["blocked_clients"]).units("clients"),
    info("redisCliTracking", &[3, 3, 1, 4], Gauge32, &["tracking_clients"]).units("clients"),
    // Both are the largest query buffer of a client, in bytes (renamed in 5.0).
    info("redisCliMaxInputBuf", &[3, 3, 1, 5], Gauge64, &["client_recent_max_input_buffer", "client_biggest_input_buf"]).units("bytes"),
    info("redisCliMaxOutputBuf", &[3, 3, 1, 6], Gauge64, &["client_recent_max_output_buffer"]).units("bytes").alias("redisCliMaxOutBuf"),
    info("redisCliClusterConns", &[3, 3, 1, 7], Gauge32, &["cluster_connections"]).units("connections").alias("redisCliClusterCon"),
    info("redisCliInTimeout", &[3, 3, 1, 8], Gauge32, &["clients_in_timeout_table"]).units("clients"),
    info("redisCliPubsub", &[3, 3, 1, 9], Gauge32, &["pubsub_clients"]).units("clients"),
    info("redisCliWatching", &[3, 3, 1, 10], Gauge32, &["watching_clients"]).units("clients"),
    // Valkey's client pauses (9.x).
    field("redisCliPauseReason", &[3, 3, 1, 11], DisplayString, Text, &["paused_reason"]),
    field("redisCliPauseAction", &[3, 3, 1, 12], DisplayString, Text, &["paused_actions"]),
    info("redisCliPausedMs", &[3, 3, 1, 13], Gauge64, &["paused_timeout_milliseconds"]).units("milliseconds"),
    // Limits (issue 16): clients of maxclients, in hundredths of a percent.
    field("redisCliUsedOfMax", &[3, 3, 1, 14], Gauge32, PercentOf(&["maxclients"]), &["connected_clients"]).units("percent"),
    // Revision 202611240040Z (Redis's src/server.c genRedisInfoString,
    // Valkey's genValkeyInfoString).
    info("redisCliWatchedKeys", &[3, 3, 1, 15], Gauge32, &["total_watched_keys"]).units("keys"),
    info("redisCliBlockKeys", &[3, 3, 1, 16], Gauge32, &["total_blocking_keys"]).units("keys"),
    info("redisCliBlockNoKey", &[3, 3, 1, 17], Gauge32, &["total_blocking_keys_on_nokey"]).units("keys"),
];

/// `redisMemoryTable` (`redis.3.4`): bytes, and ratios in hundredths.
#[rustfmt::skip]
pub const MEMORY_COLUMNS: &[ObjectDef] = &[
    info("redisMemUsed", &[3, 4, 1, 1], Gauge64, &["used_memory"]).units("bytes"),
    info("redisMemRss", &[3, 4, 1, 2], Gauge64, &["used_memory_rss"]).units("bytes"),
    info("redisMemPeak", &[3, 4, 1, 3], Gauge64, &["used_memory_peak"]).units("bytes"),
    info("redisMemOverhead", &[3, 4, 1, 4], Gauge64, &["used_memory_overhead"]).units("bytes"),
    info("redisMemStartup", &[3, 4, 1, 5], Gauge64, &["used_memory_startup"]).units("bytes"),
    info("redisMemDataset", &[3, 4, 1, 6], Gauge64, &["used_memory_dataset"]).units("bytes"),
    // Renamed used_memory_vm_eval in 7.0; used_memory_lua stays as an alias.
    info("redisMemLua", &[3, 4, 1, 7], Gauge64, &["used_memory_lua", "used_memory_vm_eval"]).units("bytes"),
    info("redisMemScripts", &[3, 4, 1, 8], Gauge64, &["used_memory_scripts"]).units("bytes"),
    info("redisMemMax", &[3, 4, 1, 9], Gauge64, &["maxmemory"]).units("bytes"),
    field("redisMemPolicy", &[3, 4, 1, 10], DisplayString, Text, &["maxmemory_policy"]),
    info("redisMemSystem", &[3, 4, 1, 11], Gauge64, &["total_system_memory"]).units("bytes"),
    field("redisMemFragRatio", &[3, 4, 1, 12], Gauge32, Scaled(100), &["mem_fragmentation_ratio"]),
    field("redisMemAllocFrag", &[3, 4, 1, 13], Gauge32, Scaled(100), &["allocator_frag_ratio"]),
    field("redisMemAllocRss", &[3, 4, 1, 14], Gauge32, Scaled(100), &["allocator_rss_ratio"]),
    field("redisMemRssOverhead", &[3, 4, 1, 15], Gauge32, Scaled(100), &["rss_overhead_ratio"]),
    info("redisMemAllocated", &[3, 4, 1, 16], Gauge64, &["allocator_allocated"]).units("bytes"),
    info("redisMemActive", &[3, 4, 1, 17], Gauge64, &["allocator_active"]).units("bytes"),
    info("redisMemResident", &[3, 4, 1, 18], Gauge64, &["allocator_resident"]).units("bytes"),
    info("redisMemReplBacklog", &[3, 4, 1, 19], Gauge64, &["mem_replication_backlog"]).units("bytes"),
    info("redisMemReplicaBufs", &[3, 4, 1, 20], Gauge64, &["mem_clients_slaves"]).units("bytes"),
    info("redisMemClientBufs", &[3, 4, 1, 21], Gauge64, &["mem_clients_normal"]).units("bytes"),
    info("redisMemAofBuffer", &[3, 4, 1, 22], Gauge64, &["mem_aof_buffer"]).units("bytes"),
    info("redisMemNotEvictable", &[3, 4, 1, 23], Gauge64, &["mem_not_counted_for_evict"]).units("bytes").alias("redisMemNotEvict"),
    info("redisMemLazyfreePend", &[3, 4, 1, 24], Gauge32, &["lazyfree_pending_objects"]).units("objects").alias("redisMemLazyfree"),
    info("redisMemCachedScripts", &[3, 4, 1, 25], Gauge32, &["number_of_cached_scripts"]).units("scripts").alias("redisMemCachedScr"),
    // Valkey 8.0+.
    info("redisMemRehashing", &[3, 4, 1, 26], Gauge64, &["mem_overhead_db_hashtable_rehashing"]).units("bytes"),
    // Limits (issue 16): used_memory of maxmemory (absent when maxmemory is 0).
    field("redisMemUsedOfMax", &[3, 4, 1, 27], Gauge32, PercentOf(&["maxmemory"]), &["used_memory"]).units("percent"),
    // Revision 202611240040Z (Redis's src/server.c genRedisInfoString,
    // Valkey's genValkeyInfoString). mem_fragmentation_bytes is %zd there, negative
    // when RSS is below the allocation: absent then, never made up.
    info("redisMemFragBytes", &[3, 4, 1, 28], Gauge64, &["mem_fragmentation_bytes"]).units("bytes"),
    info("redisMemScriptsEval", &[3, 4, 1, 29], Gauge64, &["used_memory_scripts_eval"]).units("bytes"),
    info("redisMemVmFunctions", &[3, 4, 1, 30], Gauge64, &["used_memory_vm_functions"]).units("bytes"),
    info("redisMemFunctions", &[3, 4, 1, 31], Gauge64, &["used_memory_functions"]).units("bytes"),
    info("redisMemFunctionCnt", &[3, 4, 1, 32], Gauge32, &["number_of_functions"]).units("functions"),
    info("redisMemLibraryCnt", &[3, 4, 1, 33], Gauge32, &["number_of_libraries"]).units("libraries"),
    info("redisMemReplBuffers", &[3, 4, 1, 34], Gauge64, &["mem_total_replication_buffers"]).units("bytes"),
    info("redisMemReplicaBuf", &[3, 4, 1, 35], Gauge64, &["mem_replicas_repl_buffer"]).units("bytes"),
    info("redisMemClusterLink", &[3, 4, 1, 36], Gauge64, &["mem_cluster_links"]).units("bytes"),
    info("redisMemLazyfreed", &[3, 4, 1, 37], Counter64, &["lazyfreed_objects"]).units("objects"),
    // Revision 202611261600Z: Redis 8 (its release notes: #14067 for
    // used_memory_peak_time, #13990 for the replica's sync attempts; the
    // full-sync buffer of 8.0's replication over an RDB channel).
    field("redisMemPeakAge", &[3, 4, 1, 38], Gauge32, AgeOf, &["used_memory_peak_time"]).units("seconds"),
    info("redisMemReplFsBuf", &[3, 4, 1, 39], Gauge64, &["mem_replica_full_sync_buffer"]).units("bytes"),
];

/// `redisPersistenceTable` (`redis.3.5`): RDB and AOF. Durations where
/// Redis says -1 for "none" are Integer32.
#[rustfmt::skip]
pub const PERSISTENCE_COLUMNS: &[ObjectDef] = &[
    field("redisPstLoading", &[3, 5, 1, 1], TruthValue, Truth, &["loading"]),
    info("redisPstChanges", &[3, 5, 1, 2], Gauge64, &["rdb_changes_since_last_save", "changes_since_last_save"]).units("changes"),
    field("redisPstBgsaveNow", &[3, 5, 1, 3], TruthValue, Truth, &["rdb_bgsave_in_progress", "bgsave_in_progress"]),
    info("redisPstLastSave", &[3, 5, 1, 4], Gauge64, &["rdb_last_save_time", "last_save_time"]).units("seconds"),
    field("redisPstLastSaveAge", &[3, 5, 1, 5], Gauge32, AgeOf, &["rdb_last_save_time", "last_save_time"]).units("seconds"),
    field("redisPstBgsaveStatus", &[3, 5, 1, 6], Enum, Conversion::Enum(OkErr::LABELS), &["rdb_last_bgsave_status"]).alias("redisPstBgsaveStat"),
    field("redisPstBgsaveSecs", &[3, 5, 1, 7], Integer32, Signed, &["rdb_last_bgsave_time_sec"]).units("seconds"),
    field("redisPstBgsaveCurSecs", &[3, 5, 1, 8], Integer32, Signed, &["rdb_current_bgsave_time_sec"]).units("seconds").alias("redisPstBgsaveCur"),
    info("redisPstRdbSaves", &[3, 5, 1, 9], Counter64, &["rdb_saves"]).units("snapshots"),
    info("redisPstRdbCow", &[3, 5, 1, 10], Gauge64, &["rdb_last_cow_size"]).units("bytes"),
    field("redisPstAofOn", &[3, 5, 1, 11], TruthValue, Truth, &["aof_enabled"]),
    field("redisPstAofRewriteNow", &[3, 5, 1, 12], TruthValue, Truth, &["aof_rewrite_in_progress", "bgrewriteaof_in_progress"]).alias("redisPstAofRwNow"),
    field("redisPstAofRewriteSch", &[3, 5, 1, 13], TruthValue, Truth, &["aof_rewrite_scheduled"]).alias("redisPstAofRwSched"),
    field("redisPstAofRewriteSecs", &[3, 5, 1, 14], Integer32, Signed, &["aof_last_rewrite_time_sec"]).units("seconds").alias("redisPstAofRwSecs"),
    field("redisPstAofRewrCurSecs", &[3, 5, 1, 15], Integer32, Signed, &["aof_current_rewrite_time_sec"]).units("seconds").alias("redisPstAofRwCur"),
    field("redisPstAofRewrStatus", &[3, 5, 1, 16], Enum, Conversion::Enum(OkErr::LABELS), &["aof_last_bgrewrite_status"]).alias("redisPstAofRwStat"),
    field("redisPstAofWriteStatus", &[3, 5, 1, 17], Enum, Conversion::Enum(OkErr::LABELS), &["aof_last_write_status"]).alias("redisPstAofWrStat"),
    info("redisPstAofCow", &[3, 5, 1, 18], Gauge64, &["aof_last_cow_size"]).units("bytes"),
    info("redisPstAofSize", &[3, 5, 1, 19], Gauge64, &["aof_current_size"]).units("bytes"),
    info("redisPstAofBaseSize", &[3, 5, 1, 20], Gauge64, &["aof_base_size"]).units("bytes"),
    info("redisPstAofDelayedFsync", &[3, 5, 1, 21], Counter64, &["aof_delayed_fsync"]).units("fsyncs").alias("redisPstAofDelFsync"),
    info("redisPstAofRewrites", &[3, 5, 1, 22], Counter64, &["aof_rewrites"]).units("rewrites"),
    info("redisPstCowPeak", &[3, 5, 1, 23], Gauge64, &["current_cow_peak"]).units("bytes"),
    info("redisPstCowSize", &[3, 5, 1, 24], Gauge64, &["current_cow_size"]).units("bytes"),
    field("redisPstForkPercent", &[3, 5, 1, 25], Gauge32, Scaled(100), &["current_fork_perc"]).units("percent"),
    // Valkey 9.x (atomic slot migration).
    field("redisPstSlotMigFork", &[3, 5, 1, 26], TruthValue, Truth, &["slot_migration_fork_in_progress"]),
    // Revision 202611240040Z (src/server.c of Redis and Valkey): fork
    // and load progress. The loading_* fields exist only while loading.
    field("redisPstAsyncLoad", &[3, 5, 1, 27], TruthValue, Truth, &["async_loading"]),
    info("redisPstSaveKeys", &[3, 5, 1, 28], Gauge64, &["current_save_keys_processed"]).units("keys"),
    info("redisPstSaveKeysAll", &[3, 5, 1, 29], Gauge64, &["current_save_keys_total"]).units("keys"),
    info("redisPstLoadExpired", &[3, 5, 1, 30], Gauge64, &["rdb_last_load_keys_expired"]).units("keys"),
    info("redisPstLoadKeys", &[3, 5, 1, 31], Gauge64, &["rdb_last_load_keys_loaded"]).units("keys"),
    info("redisPstAofRwFails", &[3, 5, 1, 32], Gauge32, &["aof_rewrites_consecutive_failures"]).units("failures"),
    info("redisPstAofBufLen", &[3, 5, 1, 33], Gauge64, &["aof_buffer_length"]).units("bytes"),
    info("redisPstAofPendSync", &[3, 5, 1, 34], Gauge32, &["aof_pending_bio_fsync"]).units("jobs"),
    field("redisPstModForkNow", &[3, 5, 1, 35], TruthValue, Truth, &["module_fork_in_progress"]),
    info("redisPstModForkCow", &[3, 5, 1, 36], Gauge64, &["module_fork_last_cow_size"]).units("bytes"),
    field("redisPstLoadAge", &[3, 5, 1, 37], Gauge32, AgeOf, &["loading_start_time"]).units("seconds"),
    info("redisPstLoadTotal", &[3, 5, 1, 38], Gauge64, &["loading_total_bytes"]).units("bytes"),
    info("redisPstLoadRdbMem", &[3, 5, 1, 39], Gauge64, &["loading_rdb_used_mem"]).units("bytes"),
    info("redisPstLoadBytes", &[3, 5, 1, 40], Gauge64, &["loading_loaded_bytes"]).units("bytes"),
    field("redisPstLoadPercent", &[3, 5, 1, 41], Gauge32, Scaled(100), &["loading_loaded_perc"]).units("percent"),
    info("redisPstLoadEta", &[3, 5, 1, 42], Gauge32, &["loading_eta_seconds"]).units("seconds"),
];

/// `redisStatsTable` (`redis.3.6`): the Stats section.
#[rustfmt::skip]
pub const STATS_COLUMNS: &[ObjectDef] = &[
    info("redisStConnections", &[3, 6, 1, 1], Counter64, &["total_connections_received"]).units("connections"),
    info("redisStCommands", &[3, 6, 1, 2], Counter64, &["total_commands_processed"]).units("commands"),
    info("redisStOpsPerSec", &[3, 6, 1, 3], Gauge32, &["instantaneous_ops_per_sec"]).units("commands per second"),
    info("redisStNetIn", &[3, 6, 1, 4], Counter64, &["total_net_input_bytes"]).units("bytes"),
    info("redisStNetOut", &[3, 6, 1, 5], Counter64, &["total_net_output_bytes"]).units("bytes"),
    info("redisStNetReplIn", &[3, 6, 1, 6], Counter64, &["total_net_repl_input_bytes"]).units("bytes"),
    info("redisStNetReplOut", &[3, 6, 1, 7], Counter64, &["total_net_repl_output_bytes"]).units("bytes"),
    info("redisStRejectedConns", &[3, 6, 1, 8], Counter64, &["rejected_connections"]).units("connections").alias("redisStRejectConns"),
    info("redisStSyncFull", &[3, 6, 1, 9], Counter64, &["sync_full"]).units("synchronizations"),
    info("redisStSyncPartOk", &[3, 6, 1, 10], Counter64, &["sync_partial_ok"]).units("synchronizations"),
    info("redisStSyncPartErr", &[3, 6, 1, 11], Counter64, &["sync_partial_err"]).units("synchronizations"),
    info("redisStExpiredKeys", &[3, 6, 1, 12], Counter64, &["expired_keys"]).units("keys"),
    field("redisStExpiredStale", &[3, 6, 1, 13], Gauge32, Scaled(100), &["expired_stale_perc"]).units("percent"),
    info("redisStEvictedKeys", &[3, 6, 1, 14], Counter64, &["evicted_keys"]).units("keys"),
    info("redisStEvictedClients", &[3, 6, 1, 15], Counter64, &["evicted_clients"]).units("clients").alias("redisStEvictedClnts"),
    info("redisStKeyspaceHits", &[3, 6, 1, 16], Counter64, &["keyspace_hits"]).units("lookups"),
    info("redisStKeyspaceMisses", &[3, 6, 1, 17], Counter64, &["keyspace_misses"]).units("lookups").alias("redisStKsMisses"),
    info("redisStPubsubChannels", &[3, 6, 1, 18], Gauge32, &["pubsub_channels"]).units("channels").alias("redisStPubsubChans"),
    info("redisStPubsubPatterns", &[3, 6, 1, 19], Gauge32, &["pubsub_patterns"]).units("patterns").alias("redisStPubsubPats"),
    info("redisStPubsubShardCh", &[3, 6, 1, 20], Gauge32, &["pubsubshard_channels"]).units("channels").alias("redisStPubsubShard"),
    info("redisStLatestForkUsec", &[3, 6, 1, 21], Gauge32, &["latest_fork_usec"]).units("microseconds").alias("redisStLastForkUsec"),
    info("redisStForks", &[3, 6, 1, 22], Counter64, &["total_forks"]).units("forks"),
    info("redisStDefragHits", &[3, 6, 1, 23], Counter64, &["active_defrag_hits"]).units("reallocations"),
    info("redisStDefragMisses", &[3, 6, 1, 24], Counter64, &["active_defrag_misses"]).units("reallocations"),
    info("redisStTrackingKeys", &[3, 6, 1, 25], Gauge64, &["tracking_total_keys"]).units("keys"),
    info("redisStErrorReplies", &[3, 6, 1, 26], Counter64, &["total_error_replies"]).units("replies"),
    info("redisStUnexpectedErrs", &[3, 6, 1, 27], Counter64, &["unexpected_error_replies"]).units("replies").alias("redisStUnexpErrs"),
    info("redisStReads", &[3, 6, 1, 28], Counter64, &["total_reads_processed"]).units("events"),
    info("redisStWrites", &[3, 6, 1, 29], Counter64, &["total_writes_processed"]).units("events"),
    info("redisStIoThreadReads", &[3, 6, 1, 30], Counter64, &["io_threaded_reads_processed"]).units("events").alias("redisStIoThrReads"),
    info("redisStIoThreadWrites", &[3, 6, 1, 31], Counter64, &["io_threaded_writes_processed"]).units("events").alias("redisStIoThrWrites"),
    info("redisStExpireCycleMs", &[3, 6, 1, 32], Counter64, &["expire_cycle_cpu_milliseconds"]).units("milliseconds").alias("redisStExpCycleMs"),
    info("redisStEvictLimitMs", &[3, 6, 1, 33], Counter64, &["total_eviction_exceeded_time"]).units("milliseconds"),
    info("redisStAclDeniedAuth", &[3, 6, 1, 34], Counter64, &["acl_access_denied_auth"]).units("denials").alias("redisStAclDenyAuth"),
    info("redisStAclDeniedCmd", &[3, 6, 1, 35], Counter64, &["acl_access_denied_cmd"]).units("denials"),
    info("redisStAclDeniedKey", &[3, 6, 1, 36], Counter64, &["acl_access_denied_key"]).units("denials"),
    info("redisStAclDeniedChan", &[3, 6, 1, 37], Counter64, &["acl_access_denied_channel"]).units("denials").alias("redisStAclDenyChan"),
    field("redisStInputKbps", &[3, 6, 1, 38], Gauge32, Scaled(100), &["instantaneous_input_kbps"]).units("KB/s"),
    field("redisStOutputKbps", &[3, 6, 1, 39], Gauge32, Scaled(100), &["instantaneous_output_kbps"]).units("KB/s"),
    // Valkey's additions (8.0 and later).
    info("redisStAclDenyCert", &[3, 6, 1, 40], Counter64, &["acl_access_denied_tls_cert"]).units("denials"),
    info("redisStAclDenyDb", &[3, 6, 1, 41], Counter64, &["acl_access_denied_db"]).units("denials"),
    info("redisStEvictScripts", &[3, 6, 1, 42], Counter64, &["evicted_scripts"]).units("scripts"),
    info("redisStIoFreed", &[3, 6, 1, 43], Counter64, &["io_threaded_freed_objects"]).units("objects"),
    info("redisStIoPolls", &[3, 6, 1, 44], Counter64, &["io_threaded_poll_processed"]).units("polls"),
    info("redisStIoAccepts", &[3, 6, 1, 45], Counter64, &["io_threaded_accept_processed"]).units("connections"),
    info("redisStPrefBatches", &[3, 6, 1, 46], Counter64, &["io_threaded_total_prefetch_batches"]).units("batches"),
    info("redisStPrefEntries", &[3, 6, 1, 47], Counter64, &["io_threaded_total_prefetch_entries"]).units("keys"),
    // Valkey's expired_fields; Redis 8 counts the same as expired_subkeys.
    info("redisStExpFields", &[3, 6, 1, 48], Counter64, &["expired_fields", "expired_subkeys"]).units("fields"),
    info("redisStSlotImport", &[3, 6, 1, 49], Counter64, &["total_net_cluster_slot_import_bytes"]).units("bytes"),
    info("redisStSlotExport", &[3, 6, 1, 50], Counter64, &["total_net_cluster_slot_export_bytes"]).units("bytes"),
    field("redisStVolStale", &[3, 6, 1, 51], Gauge32, Scaled(100), &["expired_keys_with_volatile_items_stale_perc"]).units("percent"),
    // Revision 202611240040Z (src/server.c of Redis and Valkey):
    // eventloop_* are server.duration_stats (µs, from getMonotonicUs),
    // the buffer-limit disconnections networking.c's counters.
    field("redisStInReplKbps", &[3, 6, 1, 52], Gauge32, Scaled(100), &["instantaneous_input_repl_kbps"]).units("KiB/s"),
    field("redisStOutReplKbps", &[3, 6, 1, 53], Gauge32, Scaled(100), &["instantaneous_output_repl_kbps"]).units("KiB/s"),
    info("redisStExpireCapHit", &[3, 6, 1, 54], Counter64, &["expired_time_cap_reached_count"]).units("cycles"),
    info("redisStReplExpKeys", &[3, 6, 1, 55], Gauge64, &["slave_expires_tracked_keys"]).units("keys"),
    info("redisStTrackItems", &[3, 6, 1, 56], Gauge64, &["tracking_total_items"]).units("items"),
    info("redisStTrackPrefix", &[3, 6, 1, 57], Gauge64, &["tracking_total_prefixes"]).units("prefixes"),
    info("redisStDumpSanitize", &[3, 6, 1, 58], Counter64, &["dump_payload_sanitizations"]).units("validations"),
    info("redisStQbufDiscon", &[3, 6, 1, 59], Counter64, &["client_query_buffer_limit_disconnections"]).units("disconnections"),
    info("redisStObufDiscon", &[3, 6, 1, 60], Counter64, &["client_output_buffer_limit_disconnections"]).units("disconnections"),
    info("redisStReplyShrinks", &[3, 6, 1, 61], Counter64, &["reply_buffer_shrinks"]).units("resizes"),
    info("redisStReplyExpands", &[3, 6, 1, 62], Counter64, &["reply_buffer_expands"]).units("resizes"),
    info("redisStElCycles", &[3, 6, 1, 63], Counter64, &["eventloop_cycles"]).units("cycles"),
    info("redisStElUsec", &[3, 6, 1, 64], Counter64, &["eventloop_duration_sum"]).units("microseconds"),
    info("redisStElCmdUsec", &[3, 6, 1, 65], Counter64, &["eventloop_duration_cmd_sum"]).units("microseconds"),
    info("redisStElCyclesSec", &[3, 6, 1, 66], Gauge32, &["instantaneous_eventloop_cycles_per_sec"]).units("cycles per second"),
    info("redisStElCycleUsec", &[3, 6, 1, 67], Gauge32, &["instantaneous_eventloop_duration_usec"]).units("microseconds"),
];

/// `redisReplicationTable` (`redis.3.7`): this server's side of
/// replication; its replicas are rows of `redisReplicaTable`.
#[rustfmt::skip]
pub const REPLICATION_COLUMNS: &[ObjectDef] = &[
    field("redisReplRole", &[3, 7, 1, 1], Enum, Conversion::Enum(Role::LABELS), &["role"]),
    info("redisReplReplicas", &[3, 7, 1, 2], Gauge32, &["connected_slaves"]).units("replicas"),
    field("redisReplMasterHost", &[3, 7, 1, 3], DisplayString, Text, &["master_host"]),
    info("redisReplMasterPort", &[3, 7, 1, 4], Gauge32, &["master_port"]),
    field("redisReplLinkStatus", &[3, 7, 1, 5], Enum, Conversion::Enum(LinkStatus::LABELS), &["master_link_status"]),
    field("redisReplLastIo", &[3, 7, 1, 6], Integer32, Signed, &["master_last_io_seconds_ago"]).units("seconds"),
    field("redisReplSyncing", &[3, 7, 1, 7], TruthValue, Truth, &["master_sync_in_progress"]),
    field("redisReplDownSince", &[3, 7, 1, 8], Integer32, Signed, &["master_link_down_since_seconds"]).units("seconds"),
    info("redisReplOffset", &[3, 7, 1, 9], Counter64, &["master_repl_offset"]).units("bytes"),
    info("redisReplReplicaOffset", &[3, 7, 1, 10], Counter64, &["slave_repl_offset"]).units("bytes").alias("redisReplRepOffset"),
    field("redisReplBacklogOn", &[3, 7, 1, 11], TruthValue, Truth, &["repl_backlog_active"]),
    info("redisReplBacklogSize", &[3, 7, 1, 12], Gauge64, &["repl_backlog_size"]).units("bytes").alias("redisReplBacklogSz"),
    info("redisReplBacklogLen", &[3, 7, 1, 13], Gauge64, &["repl_backlog_histlen"]).units("bytes"),
    field("redisReplFailover", &[3, 7, 1, 14], Enum, Conversion::Enum(FailoverState::LABELS), &["master_failover_state"]),
    info("redisReplPriority", &[3, 7, 1, 15], Gauge32, &["slave_priority", "replica_priority"]),
    field("redisReplReadOnly", &[3, 7, 1, 16], TruthValue, Truth, &["slave_read_only", "replica_read_only"]),
    field("redisReplId", &[3, 7, 1, 17], DisplayString, Text, &["master_replid"]),
    // Valkey 8.0+ (dual-channel replication).
    info("redisReplWaitPsync", &[3, 7, 1, 18], Gauge32, &["replicas_waiting_psync"]).units("replicas"),
    info("redisReplBufSize", &[3, 7, 1, 19], Gauge64, &["replicas_repl_buffer_size"]).units("bytes"),
    info("redisReplBufPeak", &[3, 7, 1, 20], Gauge64, &["replicas_repl_buffer_peak"]).units("bytes"),
    // Revision 202611240040Z: a replica's full-sync transfer (src/server.c,
    // printed while repl_state is REPL_STATE_TRANSFER). master_sync_left_bytes
    // is total minus read (negative when the total is unknown): not served.
    info("redisReplSyncTotal", &[3, 7, 1, 21], Gauge64, &["master_sync_total_bytes"]).units("bytes"),
    info("redisReplSyncRead", &[3, 7, 1, 22], Gauge64, &["master_sync_read_bytes"]).units("bytes"),
    field("redisReplSyncPerc", &[3, 7, 1, 23], Gauge32, Scaled(100), &["master_sync_perc"]).units("percent"),
    info("redisReplSyncLastIo", &[3, 7, 1, 24], Gauge32, &["master_sync_last_io_seconds_ago"]).units("seconds"),
    // Revision 202611261600Z: a Redis 8 replica's link and syncs (#13990)
    // and its buffer of the replication stream during a full sync.
    info("redisReplSyncTries", &[3, 7, 1, 25], Gauge32, &["master_current_sync_attempts"]).units("attempts"),
    info("redisReplTriesTotal", &[3, 7, 1, 26], Counter64, &["master_total_sync_attempts"]).units("attempts"),
    info("redisReplLinkUpSecs", &[3, 7, 1, 27], Gauge32, &["master_link_up_since_seconds"]).units("seconds"),
    info("redisReplDownTotal", &[3, 7, 1, 28], Counter64, &["total_disconnect_time_sec"]).units("seconds"),
    info("redisReplFsBufSize", &[3, 7, 1, 29], Gauge64, &["replica_full_sync_buffer_size"]).units("bytes"),
    info("redisReplFsBufPeak", &[3, 7, 1, 30], Gauge64, &["replica_full_sync_buffer_peak"]).units("bytes"),
];

/// `redisCpuTable` (`redis.3.8`): CPU time in centiseconds, as Counter64.
#[rustfmt::skip]
pub const CPU_COLUMNS: &[ObjectDef] = &[
    centiseconds("redisCpuSystem", &[3, 8, 1, 1], Counter64, &["used_cpu_sys"]),
    centiseconds("redisCpuUser", &[3, 8, 1, 2], Counter64, &["used_cpu_user"]),
    centiseconds("redisCpuSysChildren", &[3, 8, 1, 3], Counter64, &["used_cpu_sys_children"]),
    centiseconds("redisCpuUserChildren", &[3, 8, 1, 4], Counter64, &["used_cpu_user_children"]).alias("redisCpuUserChild"),
    centiseconds("redisCpuSysMain", &[3, 8, 1, 5], Counter64, &["used_cpu_sys_main_thread"]),
    centiseconds("redisCpuUserMain", &[3, 8, 1, 6], Counter64, &["used_cpu_user_main_thread"]),
    // Valkey 9.1 (valkey-doc commands/info.md): seconds with a fraction.
    centiseconds("redisCpuActiveMain", &[3, 8, 1, 7], Counter64, &["used_active_time_main_thread"]),
];

/// `redisClusterTable` (`redis.3.9`): `cluster_enabled` from INFO and the
/// fields of `CLUSTER INFO`, which the poller asks only of cluster nodes.
#[rustfmt::skip]
pub const CLUSTER_COLUMNS: &[ObjectDef] = &[
    field("redisClusterEnabled", &[3, 9, 1, 1], TruthValue, Truth, &["cluster_enabled"]),
    field("redisClusterState", &[3, 9, 1, 2], Enum, Conversion::Enum(ClusterState::LABELS), &["cluster_state"]),
    info("redisClusterSlotsAsgn", &[3, 9, 1, 3], Gauge32, &["cluster_slots_assigned"]).units("slots").alias("redisClusterSlAsgn"),
    info("redisClusterSlotsOk", &[3, 9, 1, 4], Gauge32, &["cluster_slots_ok"]).units("slots"),
    info("redisClusterSlotsPfail", &[3, 9, 1, 5], Gauge32, &["cluster_slots_pfail"]).units("slots").alias("redisClusterSlPfail"),
    info("redisClusterSlotsFail", &[3, 9, 1, 6], Gauge32, &["cluster_slots_fail"]).units("slots").alias("redisClusterSlFail"),
    info("redisClusterNodes", &[3, 9, 1, 7], Gauge32, &["cluster_known_nodes"]).units("nodes"),
    info("redisClusterSize", &[3, 9, 1, 8], Gauge32, &["cluster_size"]).units("nodes"),
    info("redisClusterCurEpoch", &[3, 9, 1, 9], Gauge64, &["cluster_current_epoch"]).alias("redisClusterEpoch"),
    info("redisClusterMyEpoch", &[3, 9, 1, 10], Gauge64, &["cluster_my_epoch"]),
    info("redisClusterMsgsSent", &[3, 9, 1, 11], Counter64, &["cluster_stats_messages_sent"]).units("messages").alias("redisClusterMsgSent"),
    info("redisClusterMsgsRecv", &[3, 9, 1, 12], Counter64, &["cluster_stats_messages_received"]).units("messages").alias("redisClusterMsgRecv"),
];

/// `redisTlsTable` (`redis.3.18`, AUGMENTS redisInstanceEntry): the TLS
/// section of INFO (Valkey 9.1+): the certificates' serials and how long
/// until they expire.
#[rustfmt::skip]
pub const TLS_COLUMNS: &[ObjectDef] = &[
    field("redisTlsSrvSerial", &[3, 18, 1, 1], DisplayString, Text, &["tls_server_cert_serial"]),
    field("redisTlsSrvExpires", &[3, 18, 1, 2], Integer32, Signed, &["tls_server_cert_expires_in_seconds"]).units("seconds"),
    field("redisTlsCliSerial", &[3, 18, 1, 3], DisplayString, Text, &["tls_client_cert_serial"]),
    field("redisTlsCliExpires", &[3, 18, 1, 4], Integer32, Signed, &["tls_client_cert_expires_in_seconds"]).units("seconds"),
    field("redisTlsCaSerial", &[3, 18, 1, 5], DisplayString, Text, &["tls_ca_cert_serial"]),
    field("redisTlsCaExpires", &[3, 18, 1, 6], Integer32, Signed, &["tls_ca_cert_expires_in_seconds"]).units("seconds"),
];

/// `redisKeyspaceTable` (`redis.3.10`), INDEX { redisInstanceIndex,
/// redisKsDb }: databases 0..`databases`-1, zero-filled when empty.
#[rustfmt::skip]
pub const KEYSPACE_COLUMNS: &[ObjectDef] = &[
    column("redisKsKeys", &[3, 10, 1, 2], Gauge64, Source::Keyspace(KeyspaceField::Keys)).units("keys"),
    column("redisKsExpires", &[3, 10, 1, 3], Gauge64, Source::Keyspace(KeyspaceField::Expires)).units("keys"),
    column("redisKsAvgTtl", &[3, 10, 1, 4], Gauge64, Source::Keyspace(KeyspaceField::AvgTtl)).units("milliseconds"),
    column("redisKsSubexpiry", &[3, 10, 1, 5], Gauge64, Source::Keyspace(KeyspaceField::Subexpiry)).units("keys"),
];

/// `redisReplicaTable` (`redis.3.11`), INDEX { redisInstanceIndex,
/// redisRpSlot }: the replicas a master lists (`slave<N>`; N + 1 is the slot).
#[rustfmt::skip]
pub const REPLICA_COLUMNS: &[ObjectDef] = &[
    column("redisRpAddress", &[3, 11, 1, 2], DisplayString, Source::Replica(ReplicaField::Address)),
    column("redisRpPort", &[3, 11, 1, 3], Gauge32, Source::Replica(ReplicaField::Port)),
    column("redisRpState", &[3, 11, 1, 4], DisplayString, Source::Replica(ReplicaField::State)),
    column("redisRpOffset", &[3, 11, 1, 5], Counter64, Source::Replica(ReplicaField::Offset)).units("bytes"),
    column("redisRpLag", &[3, 11, 1, 6], Gauge32, Source::Replica(ReplicaField::LagSeconds)).units("seconds"),
    column("redisRpLagBytes", &[3, 11, 1, 7], Gauge64, Source::Replica(ReplicaField::LagBytes)).units("bytes"),
    // Valkey 8.0+ (src/server.c: rdb-channel and main-channel while a
    // dual-channel full sync runs, replica otherwise).
    column("redisRpType", &[3, 11, 1, 8], DisplayString, Source::Replica(ReplicaField::Kind)),
];

/// `redisCommandTable` (`redis.3.12`), INDEX { redisInstanceIndex,
/// redisCmdName }: one row per command (`config|get` for subcommands).
#[rustfmt::skip]
pub const COMMAND_COLUMNS: &[ObjectDef] = &[
    column("redisCmdCalls", &[3, 12, 1, 2], Counter64, Source::Command(CommandField::Calls)).units("calls"),
    column("redisCmdUsec", &[3, 12, 1, 3], Counter64, Source::Command(CommandField::Usec)).units("microseconds"),
    column("redisCmdUsecPerCall", &[3, 12, 1, 4], Gauge32, Source::Command(CommandField::UsecPerCall)).units("microseconds"),
    column("redisCmdRejected", &[3, 12, 1, 5], Counter64, Source::Command(CommandField::Rejected)).units("calls"),
    column("redisCmdFailed", &[3, 12, 1, 6], Counter64, Source::Command(CommandField::Failed)).units("calls"),
    column("redisCmdP50", &[3, 12, 1, 7], Gauge32, Source::Command(CommandField::P50)).units("microseconds"),
    column("redisCmdP99", &[3, 12, 1, 8], Gauge32, Source::Command(CommandField::P99)).units("microseconds"),
    column("redisCmdP999", &[3, 12, 1, 9], Gauge32, Source::Command(CommandField::P999)).units("microseconds"),
    column("redisCmdLabel", &[3, 12, 1, 10], DisplayString, Source::Command(CommandField::Name)),
    column("redisCmdKey", &[3, 12, 1, 11], DisplayString, Source::Command(CommandField::Key)),
];

/// `redisErrorTable` (`redis.3.13`), INDEX { redisInstanceIndex,
/// redisErrPrefix }: error replies by prefix (`ERR`, `WRONGTYPE`, …).
#[rustfmt::skip]
pub const ERROR_COLUMNS: &[ObjectDef] = &[
    column("redisErrCount", &[3, 13, 1, 2], Counter64, Source::Error(ErrorField::Count)).units("replies"),
    column("redisErrLabel", &[3, 13, 1, 3], DisplayString, Source::Error(ErrorField::Name)),
    column("redisErrKey", &[3, 13, 1, 4], DisplayString, Source::Error(ErrorField::Key)),
];

/// `redisSentinelTable` (`redis.3.14`), INDEX { redisInstanceIndex,
/// redisSntName }: the masters a sentinel watches (SENTINEL MASTERS).
#[rustfmt::skip]
pub const SENTINEL_MASTER_COLUMNS: &[ObjectDef] = &[
    column("redisSntState", &[3, 14, 1, 2], Enum, Source::SentinelMaster(SentinelField::State)).enumerated(SentinelState::LABELS),
    column("redisSntFlags", &[3, 14, 1, 3], DisplayString, Source::SentinelMaster(SentinelField::Flags)),
    column("redisSntAddress", &[3, 14, 1, 4], DisplayString, Source::SentinelMaster(SentinelField::Address)),
    column("redisSntPort", &[3, 14, 1, 5], Gauge32, Source::SentinelMaster(SentinelField::Port)),
    column("redisSntReplicas", &[3, 14, 1, 6], Gauge32, Source::SentinelMaster(SentinelField::Replicas)).units("replicas"),
    column("redisSntSentinels", &[3, 14, 1, 7], Gauge32, Source::SentinelMaster(SentinelField::OtherSentinels)).units("sentinels"),
    column("redisSntQuorum", &[3, 14, 1, 8], Gauge32, Source::SentinelMaster(SentinelField::Quorum)).units("sentinels"),
    column("redisSntLabel", &[3, 14, 1, 9], DisplayString, Source::SentinelMaster(SentinelField::Name)),
    column("redisSntKey", &[3, 14, 1, 10], DisplayString, Source::SentinelMaster(SentinelField::Key)),
];

/// `redisSentinelStateTable` (`redis.3.15`, AUGMENTS redisInstanceEntry):
/// the `# Sentinel` section of a sentinel's INFO.
#[rustfmt::skip]
pub const SENTINEL_COLUMNS: &[ObjectDef] = &[
    info("redisSntMasters", &[3, 15, 1, 1], Gauge32, &["sentinel_masters"]).units("masters"),
    field("redisSntTilt", &[3, 15, 1, 2], TruthValue, Truth, &["sentinel_tilt"]),
    info("redisSntScripts", &[3, 15, 1, 3], Gauge32, &["sentinel_running_scripts"]).units("scripts"),
    // Revision 202611240040Z (sentinel.c's INFO of Redis and Valkey).
    field("redisSntTiltSince", &[3, 15, 1, 4], Integer32, Signed, &["sentinel_tilt_since_seconds"]).units("seconds"),
    info("redisSntTilts", &[3, 15, 1, 5], Counter64, &["sentinel_total_tilt"]).units("times"),
    info("redisSntScriptQueue", &[3, 15, 1, 6], Gauge32, &["sentinel_scripts_queue_length"]).units("scripts"),
];

/// `redisSlowlogTable` (`redis.3.16`, AUGMENTS redisInstanceEntry): the
/// slow log's length and its newest entry, where SLOWLOG is allowed.
#[rustfmt::skip]
pub const SLOWLOG_COLUMNS: &[ObjectDef] = &[
    column("redisSlowlogLen", &[3, 16, 1, 1], Gauge32, Source::Slowlog(SlowlogField::Length)).units("entries"),
    column("redisSlowlogLastId", &[3, 16, 1, 2], Gauge64, Source::Slowlog(SlowlogField::LastId)),
    column("redisSlowlogLastTime", &[3, 16, 1, 3], Gauge64, Source::Slowlog(SlowlogField::LastTime)).units("seconds").alias("redisSlowlogTime"),
    column("redisSlowlogLastUsec", &[3, 16, 1, 4], Gauge64, Source::Slowlog(SlowlogField::LastUsec)).units("microseconds").alias("redisSlowlogUsec"),
    // Valkey's COMMANDLOG (8.1+; valkey-doc commands/commandlog-len.md): the
    // two logs besides the slow one, whose length SLOWLOG LEN already gives.
    column("redisSlowlogReqLen", &[3, 16, 1, 5], Gauge32, Source::Slowlog(SlowlogField::LargeRequests)).units("entries"),
    column("redisSlowlogRplLen", &[3, 16, 1, 6], Gauge32, Source::Slowlog(SlowlogField::LargeReplies)).units("entries"),
];

/// `redisLatencyTable` (`redis.3.17`), INDEX { redisInstanceIndex,
/// redisLatEvent }: LATENCY LATEST, one row per event (`command`, `fork`…).
#[rustfmt::skip]
pub const LATENCY_COLUMNS: &[ObjectDef] = &[
    column("redisLatLastTime", &[3, 17, 1, 2], Gauge64, Source::Latency(LatencyField::LastTime)).units("seconds"),
    column("redisLatLastMs", &[3, 17, 1, 3], Gauge32, Source::Latency(LatencyField::LastMs)).units("milliseconds"),
    column("redisLatMaxMs", &[3, 17, 1, 4], Gauge32, Source::Latency(LatencyField::MaxMs)).units("milliseconds"),
    column("redisLatLabel", &[3, 17, 1, 5], DisplayString, Source::Latency(LatencyField::Name)),
    column("redisLatKey", &[3, 17, 1, 6], DisplayString, Source::Latency(LatencyField::Key)),
];

/// `redisClientNameTable` (`redis.3.19`), INDEX { redisInstanceIndex,
/// redisCnName }: CLIENT LIST aggregated per client name.
#[rustfmt::skip]
pub const CLIENT_NAME_COLUMNS: &[ObjectDef] = &[
    column("redisCnCount", &[3, 19, 1, 2], Gauge32, Source::ClientName(ClientField::Count)).units("connections"),
    column("redisCnOldestAge", &[3, 19, 1, 3], Gauge32, Source::ClientName(ClientField::OldestAge)).units("seconds"),
    column("redisCnMaxIdle", &[3, 19, 1, 4], Gauge32, Source::ClientName(ClientField::MaxIdle)).units("seconds"),
    column("redisCnMaxOutputMem", &[3, 19, 1, 5], Gauge64, Source::ClientName(ClientField::MaxOutputMem)).units("bytes"),
    column("redisCnMaxTotalMem", &[3, 19, 1, 6], Gauge64, Source::ClientName(ClientField::MaxTotalMem)).units("bytes"),
    column("redisCnBlocked", &[3, 19, 1, 7], Gauge32, Source::ClientName(ClientField::Blocked)).units("connections"),
    column("redisCnLabel", &[3, 19, 1, 8], DisplayString, Source::ClientName(ClientField::Label)),
    column("redisCnKey", &[3, 19, 1, 9], DisplayString, Source::ClientName(ClientField::Key)),
];

/// `redisClientUserTable` (`redis.3.20`), INDEX { redisInstanceIndex,
/// redisCuUser }: CLIENT LIST aggregated per ACL user.
#[rustfmt::skip]
pub const CLIENT_USER_COLUMNS: &[ObjectDef] = &[
    column("redisCuCount", &[3, 20, 1, 2], Gauge32, Source::ClientUser(ClientField::Count)).units("connections"),
    column("redisCuOldestAge", &[3, 20, 1, 3], Gauge32, Source::ClientUser(ClientField::OldestAge)).units("seconds"),
    column("redisCuMaxIdle", &[3, 20, 1, 4], Gauge32, Source::ClientUser(ClientField::MaxIdle)).units("seconds"),
    column("redisCuMaxOutputMem", &[3, 20, 1, 5], Gauge64, Source::ClientUser(ClientField::MaxOutputMem)).units("bytes"),
    column("redisCuMaxTotalMem", &[3, 20, 1, 6], Gauge64, Source::ClientUser(ClientField::MaxTotalMem)).units("bytes"),
    column("redisCuBlocked", &[3, 20, 1, 7], Gauge32, Source::ClientUser(ClientField::Blocked)).units("connections"),
    column("redisCuLabel", &[3, 20, 1, 8], DisplayString, Source::ClientUser(ClientField::Label)),
    column("redisCuKey", &[3, 20, 1, 9], DisplayString, Source::ClientUser(ClientField::Key)),
];

/// `redisAlarmTable` (`redis.3.23`), INDEX { redisInstanceIndex,
/// redisAlarmNumber }: the agent's own thresholds crossed now, one row per
/// alarm (`crate::alarms`). The values are decimal text: an alarm may watch
/// an Integer32 (negative), a Gauge32 or a 64-bit gauge, and no one SMIv2
/// integer holds them all.
#[rustfmt::skip]
pub const ALARM_COLUMNS: &[ObjectDef] = &[
    column("redisAlarmName", &[3, 23, 1, 2], DisplayString, Source::Alarm(AlarmField::Name)),
    column("redisAlarmObject", &[3, 23, 1, 3], ObjectIdentifier, Source::Alarm(AlarmField::Object)),
    column("redisAlarmObjectName", &[3, 23, 1, 4], DisplayString, Source::Alarm(AlarmField::ObjectName)),
    column("redisAlarmValue", &[3, 23, 1, 5], DisplayString, Source::Alarm(AlarmField::Value)),
    column("redisAlarmRaisedValue", &[3, 23, 1, 6], DisplayString, Source::Alarm(AlarmField::RaisedValue)),
    column("redisAlarmTrigger", &[3, 23, 1, 7], DisplayString, Source::Alarm(AlarmField::Trigger)),
    column("redisAlarmRearm", &[3, 23, 1, 8], DisplayString, Source::Alarm(AlarmField::Rearm)),
    column("redisAlarmAge", &[3, 23, 1, 9], Gauge32, Source::Alarm(AlarmField::Age)).units("seconds"),
];

/// `redisKeyTable` (`redis.3.21`), INDEX { redisInstanceIndex,
/// redisCkName }: the keys `check_keys` names or matches (issue 16).
#[rustfmt::skip]
pub const KEY_COLUMNS: &[ObjectDef] = &[
    column("redisCkType", &[3, 21, 1, 2], Enum, Source::Key(KeyField::Type)).enumerated(KeyType::LABELS),
    column("redisCkLength", &[3, 21, 1, 3], Gauge64, Source::Key(KeyField::Length)).units("elements"),
    column("redisCkTtl", &[3, 21, 1, 4], Integer32, Source::Key(KeyField::Ttl)).units("seconds"),
    column("redisCkMemory", &[3, 21, 1, 5], Gauge64, Source::Key(KeyField::Memory)).units("bytes"),
    column("redisCkPattern", &[3, 21, 1, 6], DisplayString, Source::Key(KeyField::Entry)),
    column("redisCkLabel", &[3, 21, 1, 7], DisplayString, Source::Key(KeyField::Label)),
    column("redisCkKey", &[3, 21, 1, 8], DisplayString, Source::Key(KeyField::Key)),
    column("redisCkError", &[3, 21, 1, 9], DisplayString, Source::Key(KeyField::Error)),
];

/// `redisKeyStreamGroupTable` (`redis.3.22`), INDEX { redisInstanceIndex,
/// redisCkName, redisKgName }: the consumer groups of the checked keys
/// that are streams.
#[rustfmt::skip]
pub const STREAM_GROUP_COLUMNS: &[ObjectDef] = &[
    column("redisKgConsumers", &[3, 22, 1, 2], Gauge32, Source::StreamGroup(StreamGroupField::Consumers)).units("consumers"),
    column("redisKgPending", &[3, 22, 1, 3], Gauge64, Source::StreamGroup(StreamGroupField::Pending)).units("entries"),
    column("redisKgLag", &[3, 22, 1, 4], Gauge64, Source::StreamGroup(StreamGroupField::Lag)).units("entries"),
    column("redisKgLastId", &[3, 22, 1, 5], DisplayString, Source::StreamGroup(StreamGroupField::LastDeliveredId)),
    column("redisKgMaxIdle", &[3, 22, 1, 6], Gauge64, Source::StreamGroup(StreamGroupField::MaxIdle)).units("milliseconds"),
    column("redisKgLabel", &[3, 22, 1, 7], DisplayString, Source::StreamGroup(StreamGroupField::Label)),
    column("redisKgKey", &[3, 22, 1, 8], DisplayString, Source::StreamGroup(StreamGroupField::Key)),
];

/// `redisKeyCheckTable` (`redis.3.24`, AUGMENTS redisInstanceEntry): how
/// the last key check went, where `check_keys` is set.
#[rustfmt::skip]
pub const KEY_CHECK_COLUMNS: &[ObjectDef] = &[
    column("redisKcKeys", &[3, 24, 1, 1], Gauge32, Source::KeyCheck(KeyCheckField::Keys)).units("keys"),
    column("redisKcKeysLeftOut", &[3, 24, 1, 2], Gauge32, Source::KeyCheck(KeyCheckField::KeysLeftOut)).units("keys"),
    column("redisKcGrpsLeftOut", &[3, 24, 1, 3], Gauge32, Source::KeyCheck(KeyCheckField::GroupsLeftOut)).units("groups"),
    column("redisKcScanComplete", &[3, 24, 1, 4], TruthValue, Source::KeyCheck(KeyCheckField::ScanComplete)),
    column("redisKcScanCalls", &[3, 24, 1, 5], Gauge32, Source::KeyCheck(KeyCheckField::ScanCalls)).units("calls"),
    column("redisKcCheckTime", &[3, 24, 1, 6], Gauge32, Source::KeyCheck(KeyCheckField::CheckTime)).units("milliseconds"),
    column("redisKcLastError", &[3, 24, 1, 7], DisplayString, Source::KeyCheck(KeyCheckField::LastError)),
];

/// Rows of `redisSlowCommandTable` at most, per instance: the newest slow
/// log entries the agent saw arrive.
pub const SLOW_COMMAND_ROWS: usize = 32;

/// `redisSlowCommandTable` (`redis.3.28`), INDEX { redisInstanceIndex,
/// redisScNumber }: the slow log entries the agent saw arrive since it
/// started (issue 25), the newest [`SLOW_COMMAND_ROWS`]; each one over
/// the instance's `slow_command_threshold` is also a `redisSlowCommand`.
#[rustfmt::skip]
pub const SLOW_COMMAND_COLUMNS: &[ObjectDef] = &[
    column("redisScId", &[3, 28, 1, 2], Gauge64, Source::SlowCommand(SlowCommandField::Id)),
    column("redisScTime", &[3, 28, 1, 3], Gauge64, Source::SlowCommand(SlowCommandField::Time)).units("seconds"),
    column("redisScDuration", &[3, 28, 1, 4], Gauge64, Source::SlowCommand(SlowCommandField::Duration)).units("microseconds"),
    column("redisScCommand", &[3, 28, 1, 5], DisplayString, Source::SlowCommand(SlowCommandField::Command)),
    column("redisScClientAddr", &[3, 28, 1, 6], DisplayString, Source::SlowCommand(SlowCommandField::ClientAddress)),
    column("redisScClientName", &[3, 28, 1, 7], DisplayString, Source::SlowCommand(SlowCommandField::ClientName)),
    column("redisScArgs", &[3, 28, 1, 8], DisplayString, Source::SlowCommand(SlowCommandField::Arguments)),
    column("redisScSkipped", &[3, 28, 1, 9], Gauge32, Source::SlowCommand(SlowCommandField::Skipped)).units("entries"),
];

/// `redisBigKeyTable` (`redis.3.31`), INDEX { redisInstanceIndex,
/// redisBkRank }: the largest keys of each database the big-key sampler
/// has seen (issue 25), ranked over all databases.
#[rustfmt::skip]
pub const BIG_KEY_COLUMNS: &[ObjectDef] = &[
    column("redisBkName", &[3, 31, 1, 2], DisplayString, Source::BigKey(BigKeyField::Name)),
    column("redisBkType", &[3, 31, 1, 3], Enum, Source::BigKey(BigKeyField::Type)).enumerated(KeyType::LABELS),
    column("redisBkBytes", &[3, 31, 1, 4], Gauge64, Source::BigKey(BigKeyField::Bytes)).units("bytes"),
    column("redisBkDatabase", &[3, 31, 1, 5], Gauge32, Source::BigKey(BigKeyField::Database)),
    column("redisBkSeen", &[3, 31, 1, 6], Gauge64, Source::BigKey(BigKeyField::Seen)).units("seconds"),
];

/// `redisHotKeyTable` (`redis.3.32`), INDEX { redisInstanceIndex,
/// redisHkRank }: the keys `HOTKEYS GET` reports, hottest first.
#[rustfmt::skip]
pub const HOT_KEY_COLUMNS: &[ObjectDef] = &[
    column("redisHkName", &[3, 32, 1, 2], DisplayString, Source::HotKey(HotKeyField::Name)),
    column("redisHkDatabase", &[3, 32, 1, 3], Gauge32, Source::HotKey(HotKeyField::Database)),
    column("redisHkQps", &[3, 32, 1, 4], Gauge64, Source::HotKey(HotKeyField::Qps)).units("accesses per second"),
    column("redisHkCpuTime", &[3, 32, 1, 5], Gauge64, Source::HotKey(HotKeyField::CpuUsec)).units("microseconds"),
    column("redisHkNetBytes", &[3, 32, 1, 6], Gauge64, Source::HotKey(HotKeyField::NetBytes)).units("bytes"),
    column("redisHkLfuCounter", &[3, 32, 1, 7], Gauge32, Source::HotKey(HotKeyField::LfuCounter)),
];

enumeration! {
    /// `redisCkType`: what TYPE says of a checked key. A named key that
    /// does not exist is none(8); a matched one that vanished has no row.
    KeyType {
        String = 1 => ["string"],
        List = 2 => ["list"],
        Set = 3 => ["set"],
        Zset = 4 => ["zset"],
        Hash = 5 => ["hash"],
        Stream = 6 => ["stream"],
        Other = 7 => ["other"],
        None = 8 => ["none"],
    }
}

enumeration! {
    /// `redisInstanceState`: whether the last poll succeeded, and whether
    /// the server was still loading its dataset then (it answers INFO, but
    /// refuses its clients' commands with LOADING).
    InstanceState {
        Up = 1 => ["up"],
        Down = 2 => ["down"],
        Loading = 3 => ["loading"],
    }
}

/// `redisSentinelEventTable` (`redis.3.30`), INDEX { redisInstanceIndex,
/// redisSeIndex }: what the masters a sentinel watches did between two
/// polls (a failover, objectively down and back, the quorum lost and
/// reached), the last [`crate::redis::failover`]'s cap of them. The
/// notifications of a sentinel's masters carry their row: the master's
/// name and both its addresses, which `redisSentinelTable` (indexed by
/// the name, and holding only the present) cannot.
#[rustfmt::skip]
pub const SENTINEL_EVENT_COLUMNS: &[ObjectDef] = &[
    column("redisSeTime", &[3, 30, 1, 2], Gauge64, Source::SentinelEvent(SentinelEventField::Time)).units("seconds"),
    column("redisSeKind", &[3, 30, 1, 3], Enum, Source::SentinelEvent(SentinelEventField::Kind)).enumerated(SentinelEventKind::LABELS),
    column("redisSeMaster", &[3, 30, 1, 4], DisplayString, Source::SentinelEvent(SentinelEventField::Master)),
    column("redisSeAddress", &[3, 30, 1, 5], DisplayString, Source::SentinelEvent(SentinelEventField::Address)),
    column("redisSePort", &[3, 30, 1, 6], Gauge32, Source::SentinelEvent(SentinelEventField::Port)),
    column("redisSeOldAddress", &[3, 30, 1, 7], DisplayString, Source::SentinelEvent(SentinelEventField::OldAddress)),
    column("redisSeOldPort", &[3, 30, 1, 8], Gauge32, Source::SentinelEvent(SentinelEventField::OldPort)),
    column("redisSeEpoch", &[3, 30, 1, 9], Gauge64, Source::SentinelEvent(SentinelEventField::Epoch)),
    column("redisSeOldEpoch", &[3, 30, 1, 10], Gauge64, Source::SentinelEvent(SentinelEventField::OldEpoch)),
    column("redisSeQuorum", &[3, 30, 1, 11], DisplayString, Source::SentinelEvent(SentinelEventField::Quorum)),
];

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
    /// `redisSntState`: a watched master as its flags say.
    SentinelState {
        Ok = 1 => ["ok"],
        Sdown = 2 => ["sdown"],
        Odown = 3 => ["odown"],
    }
}

/// `redisKeysizesTable` (`redis.3.25`), INDEX { redisInstanceIndex,
/// redisKzDb, redisKzType, redisKzBucket }: Redis 8's Keysizes section,
/// one row per database, type and power-of-two bucket of key sizes.
#[rustfmt::skip]
pub const KEYSIZES_COLUMNS: &[ObjectDef] = &[
    column("redisKzKeys", &[3, 25, 1, 4], Gauge64, Source::Keysizes(KeysizesField::Keys)).units("keys"),
    column("redisKzMinSize", &[3, 25, 1, 5], Gauge64, Source::Keysizes(KeysizesField::MinSize)),
    column("redisKzLabel", &[3, 25, 1, 6], DisplayString, Source::Keysizes(KeysizesField::Label)),
];

/// `redisThreadTable` (`redis.3.26`), INDEX { redisInstanceIndex,
/// redisThrNumber }: Redis 8's Threads section, one row per I/O thread.
#[rustfmt::skip]
pub const THREAD_COLUMNS: &[ObjectDef] = &[
    column("redisThrClients", &[3, 26, 1, 2], Gauge32, Source::Thread(ThreadField::Clients)).units("clients"),
    column("redisThrReads", &[3, 26, 1, 3], Counter64, Source::Thread(ThreadField::Reads)).units("reads"),
    column("redisThrWrites", &[3, 26, 1, 4], Counter64, Source::Thread(ThreadField::Writes)).units("writes"),
];

/// `redisModuleTable` (`redis.3.27`), INDEX { redisInstanceIndex,
/// redisModName }: the Modules section, one row per loaded module.
#[rustfmt::skip]
pub const MODULE_COLUMNS: &[ObjectDef] = &[
    column("redisModVersion", &[3, 27, 1, 2], Integer32, Source::Module(ModuleField::Version)),
    column("redisModApi", &[3, 27, 1, 3], Integer32, Source::Module(ModuleField::Api)),
    column("redisModFilters", &[3, 27, 1, 4], Gauge32, Source::Module(ModuleField::Filters)).units("filters"),
    column("redisModUsedBy", &[3, 27, 1, 5], DisplayString, Source::Module(ModuleField::UsedBy)),
    column("redisModUsing", &[3, 27, 1, 6], DisplayString, Source::Module(ModuleField::Using)),
    column("redisModOptions", &[3, 27, 1, 7], DisplayString, Source::Module(ModuleField::Options)),
    column("redisModLabel", &[3, 27, 1, 8], DisplayString, Source::Module(ModuleField::Name)),
    column("redisModKey", &[3, 27, 1, 9], DisplayString, Source::Module(ModuleField::Key)),
];

enumeration! {
    /// `redisKzType`: the types Redis 8's Keysizes section has a histogram
    /// of, as the line names them (`db0_distrib_<label>_sizes` for strings,
    /// in bytes; `_items` for the others, in elements). Numbered as
    /// [`KeyType`] numbers the same types. A line of a type not here is
    /// no row (counted in redisInstanceRowsLeftOut).
    KeysizesType {
        Strings = 1 => ["strings"],
        Lists = 2 => ["lists"],
        Sets = 3 => ["sets"],
        Zsets = 4 => ["zsets"],
        Hashes = 5 => ["hashes"],
    }
}

/// `redisAclRefusalTable` (`redis.3.29`), INDEX { redisInstanceIndex,
/// redisArNumber }: ACL LOG aggregated per reason, user and client
/// address (`crate::redis::acl_log`); the row's number is a hash of the
/// three, the same at every read.
#[rustfmt::skip]
pub const ACL_REFUSAL_COLUMNS: &[ObjectDef] = &[
    column("redisArReason", &[3, 29, 1, 2], Enum, Source::Acl(AclField::Reason)).enumerated(AclReason::LABELS),
    column("redisArUser", &[3, 29, 1, 3], DisplayString, Source::Acl(AclField::User)),
    column("redisArAddress", &[3, 29, 1, 4], DisplayString, Source::Acl(AclField::Address)),
    column("redisArCount", &[3, 29, 1, 5], Gauge32, Source::Acl(AclField::Count)).units("refusals"),
    column("redisArLastSeen", &[3, 29, 1, 6], Gauge64, Source::Acl(AclField::LastSeen)).units("seconds"),
    column("redisArKey", &[3, 29, 1, 7], DisplayString, Source::Acl(AclField::Key)),
];

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
