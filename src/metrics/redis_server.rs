//! REDIS-SERVER-MIB's instances: the 17 legacy scalars, `redisInstanceTable`
//! and the tables that AUGMENT its entry, read from INFO (and CLUSTER
//! INFO), with their enumerations.

use super::*;
use crate::smi::Syntax;

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

use Conversion::{AgeOf, PercentOf, Scaled, Signed, Text, Truth};

table! {
    /// `redisInstanceTable`: one row per configured instance.
    pub const INSTANCE_TABLE = ("redisInstanceTable", "redisInstanceEntry", [3, 1, 1]) {
        augments: None,
        index: RowIndex::Instance,
        rows_from: &["configuration"],
        resource_type: "redisInstance",
        max_rows: None,
    }
    /// Columns of `redisInstanceTable` (`redis.3.1.1.N`), indexed by the
    /// instance's number (1 = the first configured instance). Column 1 is the
    /// not-accessible index `redisInstanceIndex` and is not served.
    pub const INSTANCE_COLUMNS = [
        status("redisInstanceName", 2, DisplayString, StatusField::Name),
        status("redisInstanceAddress", 3, DisplayString, StatusField::Address).alias("redisInstAddress"),
        status("redisInstanceState", 4, Enum, StatusField::Up).enumerated(InstanceState::LABELS),
        status("redisInstanceDataAge", 5, Gauge32, StatusField::DataAge).units("seconds").alias("redisInstDataAge"),
        status("redisInstancePollTime", 6, Gauge32, StatusField::PollDuration).units("milliseconds").alias("redisInstPollTime"),
        status("redisInstanceLastError", 7, DisplayString, StatusField::LastError).alias("redisInstLastError"),
        status("redisInstancePollsOk", 8, Counter32, StatusField::PollsOk).units("polls").alias("redisInstPollsOk"),
        status("redisInstancePollsFailed", 9, Counter32, StatusField::PollsFailed).units("polls").alias("redisInstPollsFail"),
        // The server's TLS certificate, rediss:// instances only.
        status("redisInstanceCertSubject", 10, DisplayString, StatusField::CertSubject).alias("redisCertSubject"),
        status("redisInstanceCertIssuer", 11, DisplayString, StatusField::CertIssuer).alias("redisCertIssuer"),
        status("redisInstanceCertNotAfter", 12, Gauge64, StatusField::CertNotAfter).units("seconds").alias("redisCertNotAfter"),
        status("redisInstanceCertExpiresIn", 13, Integer32, StatusField::CertExpiresIn).units("seconds").alias("redisCertExpiresIn"),
        // What the caps of the tables read from INFO left out
        // (the INFO reading writes it, not the poller's status).
        column("redisInstanceRowsLeftOut", 14, Gauge32, Source::Rows(RowsField::LeftOut)).units("rows").alias("redisInstRowsLeft"),
    ]
}

table! {
    pub const SERVER_TABLE = ("redisServerTable", "redisServerEntry", [3, 2, 1]) {}
    /// `redisServerTable` (`redis.3.2`): who the server is. Like every group
    /// below, its entry AUGMENTS `redisInstanceEntry`: one row per instance.
    pub const SERVER_COLUMNS = [
        // Valkey reports redis_version:7.2.4 for compatibility; its users know
        // it by its own version.
        field("redisSrvVersion", 1, DisplayString, Text, &["valkey_version", "redis_version"]),
        // Valkey 8+ says server_mode instead.
        field("redisSrvMode", 2, Enum, Conversion::Enum(ServerMode::LABELS), &["redis_mode", "server_mode"]),
        field("redisSrvRunId", 3, DisplayString, Text, &["run_id"]),
        info("redisSrvProcessId", 4, Gauge32, &["process_id"]),
        info("redisSrvTcpPort", 5, Gauge32, &["tcp_port"]),
        info("redisSrvUptime", 6, Gauge32, &["uptime_in_seconds"]).units("seconds"),
        field("redisSrvExecutable", 7, DisplayString, Text, &["executable"]),
        field("redisSrvConfigFile", 8, DisplayString, Text, &["config_file"]),
        field("redisSrvOs", 9, DisplayString, Text, &["os"]),
        info("redisSrvHz", 10, Gauge32, &["hz"]).units("hertz"),
        field("redisSrvIoThreads", 11, TruthValue, Truth, &["io_threads_active"]),
        field("redisSrvName", 12, DisplayString, Text, &["server_name"]),
        // Revision 202611240040Z: fields checked against
        // genValkeyInfoString in Valkey's src/server.c and valkey-doc's
        // commands/info.md.
        info("redisSrvClientsHz", 13, Gauge32, &["clients_hz"]).units("hertz"),
    ]
}

table! {
    pub const CLIENTS_TABLE = ("redisClientsTable", "redisClientsEntry", [3, 3, 1]) {}
    /// `redisClientsTable` (`redis.3.3`).
    pub const CLIENT_COLUMNS = [
        info("redisCliConnected", 1, Gauge32, &["connected_clients"]).units("clients"),
        info("redisCliMax", 2, Gauge32, &["maxclients"]).units("clients"),
        info("redisCliBlocked", 3, Gauge32, &["blocked_clients"]).units("clients"),
        info("redisCliTracking", 4, Gauge32, &["tracking_clients"]).units("clients"),
        // Both are the largest query buffer of a client, in bytes (renamed in 5.0).
        info("redisCliMaxInputBuf", 5, Gauge64, &["client_recent_max_input_buffer", "client_biggest_input_buf"]).units("bytes"),
        info("redisCliMaxOutputBuf", 6, Gauge64, &["client_recent_max_output_buffer"]).units("bytes").alias("redisCliMaxOutBuf"),
        info("redisCliClusterConns", 7, Gauge32, &["cluster_connections"]).units("connections").alias("redisCliClusterCon"),
        info("redisCliInTimeout", 8, Gauge32, &["clients_in_timeout_table"]).units("clients"),
        info("redisCliPubsub", 9, Gauge32, &["pubsub_clients"]).units("clients"),
        info("redisCliWatching", 10, Gauge32, &["watching_clients"]).units("clients"),
        // Valkey's client pauses (9.x).
        field("redisCliPauseReason", 11, DisplayString, Text, &["paused_reason"]),
        field("redisCliPauseAction", 12, DisplayString, Text, &["paused_actions"]),
        info("redisCliPausedMs", 13, Gauge64, &["paused_timeout_milliseconds"]).units("milliseconds"),
        // Limits: clients of maxclients, in hundredths of a percent.
        field("redisCliUsedOfMax", 14, Gauge32, PercentOf(&["maxclients"]), &["connected_clients"]).units("percent"),
        // Revision 202611240040Z (Redis's src/server.c genRedisInfoString,
        // Valkey's genValkeyInfoString).
        info("redisCliWatchedKeys", 15, Gauge32, &["total_watched_keys"]).units("keys"),
        info("redisCliBlockKeys", 16, Gauge32, &["total_blocking_keys"]).units("keys"),
        info("redisCliBlockNoKey", 17, Gauge32, &["total_blocking_keys_on_nokey"]).units("keys"),
    ]
}

table! {
    pub const MEMORY_TABLE = ("redisMemoryTable", "redisMemoryEntry", [3, 4, 1]) {}
    /// `redisMemoryTable` (`redis.3.4`): bytes, and ratios in hundredths.
    pub const MEMORY_COLUMNS = [
        info("redisMemUsed", 1, Gauge64, &["used_memory"]).units("bytes"),
        info("redisMemRss", 2, Gauge64, &["used_memory_rss"]).units("bytes"),
        info("redisMemPeak", 3, Gauge64, &["used_memory_peak"]).units("bytes"),
        info("redisMemOverhead", 4, Gauge64, &["used_memory_overhead"]).units("bytes"),
        info("redisMemStartup", 5, Gauge64, &["used_memory_startup"]).units("bytes"),
        info("redisMemDataset", 6, Gauge64, &["used_memory_dataset"]).units("bytes"),
        // Renamed used_memory_vm_eval in 7.0; used_memory_lua stays as an alias.
        info("redisMemLua", 7, Gauge64, &["used_memory_lua", "used_memory_vm_eval"]).units("bytes"),
        info("redisMemScripts", 8, Gauge64, &["used_memory_scripts"]).units("bytes"),
        info("redisMemMax", 9, Gauge64, &["maxmemory"]).units("bytes"),
        field("redisMemPolicy", 10, DisplayString, Text, &["maxmemory_policy"]),
        info("redisMemSystem", 11, Gauge64, &["total_system_memory"]).units("bytes"),
        field("redisMemFragRatio", 12, Gauge32, Scaled(100), &["mem_fragmentation_ratio"]),
        field("redisMemAllocFrag", 13, Gauge32, Scaled(100), &["allocator_frag_ratio"]),
        field("redisMemAllocRss", 14, Gauge32, Scaled(100), &["allocator_rss_ratio"]),
        field("redisMemRssOverhead", 15, Gauge32, Scaled(100), &["rss_overhead_ratio"]),
        info("redisMemAllocated", 16, Gauge64, &["allocator_allocated"]).units("bytes"),
        info("redisMemActive", 17, Gauge64, &["allocator_active"]).units("bytes"),
        info("redisMemResident", 18, Gauge64, &["allocator_resident"]).units("bytes"),
        info("redisMemReplBacklog", 19, Gauge64, &["mem_replication_backlog"]).units("bytes"),
        info("redisMemReplicaBufs", 20, Gauge64, &["mem_clients_slaves"]).units("bytes"),
        info("redisMemClientBufs", 21, Gauge64, &["mem_clients_normal"]).units("bytes"),
        info("redisMemAofBuffer", 22, Gauge64, &["mem_aof_buffer"]).units("bytes"),
        info("redisMemNotEvictable", 23, Gauge64, &["mem_not_counted_for_evict"]).units("bytes").alias("redisMemNotEvict"),
        info("redisMemLazyfreePend", 24, Gauge32, &["lazyfree_pending_objects"]).units("objects").alias("redisMemLazyfree"),
        info("redisMemCachedScripts", 25, Gauge32, &["number_of_cached_scripts"]).units("scripts").alias("redisMemCachedScr"),
        // Valkey 8.0+.
        info("redisMemRehashing", 26, Gauge64, &["mem_overhead_db_hashtable_rehashing"]).units("bytes"),
        // Limits: used_memory of maxmemory (absent when maxmemory is 0).
        field("redisMemUsedOfMax", 27, Gauge32, PercentOf(&["maxmemory"]), &["used_memory"]).units("percent"),
        // Revision 202611240040Z (Redis's src/server.c genRedisInfoString,
        // Valkey's genValkeyInfoString). mem_fragmentation_bytes is %zd there, negative
        // when RSS is below the allocation: absent then, never made up.
        info("redisMemFragBytes", 28, Gauge64, &["mem_fragmentation_bytes"]).units("bytes"),
        info("redisMemScriptsEval", 29, Gauge64, &["used_memory_scripts_eval"]).units("bytes"),
        info("redisMemVmFunctions", 30, Gauge64, &["used_memory_vm_functions"]).units("bytes"),
        info("redisMemFunctions", 31, Gauge64, &["used_memory_functions"]).units("bytes"),
        info("redisMemFunctionCnt", 32, Gauge32, &["number_of_functions"]).units("functions"),
        info("redisMemLibraryCnt", 33, Gauge32, &["number_of_libraries"]).units("libraries"),
        info("redisMemReplBuffers", 34, Gauge64, &["mem_total_replication_buffers"]).units("bytes"),
        info("redisMemReplicaBuf", 35, Gauge64, &["mem_replicas_repl_buffer"]).units("bytes"),
        info("redisMemClusterLink", 36, Gauge64, &["mem_cluster_links"]).units("bytes"),
        info("redisMemLazyfreed", 37, Counter64, &["lazyfreed_objects"]).units("objects"),
        // Revision 202611261600Z: Redis 8 (its release notes: #14067 for
        // used_memory_peak_time, #13990 for the replica's sync attempts; the
        // full-sync buffer of 8.0's replication over an RDB channel).
        field("redisMemPeakAge", 38, Gauge32, AgeOf, &["used_memory_peak_time"]).units("seconds"),
        info("redisMemReplFsBuf", 39, Gauge64, &["mem_replica_full_sync_buffer"]).units("bytes"),
    ]
}

table! {
    pub const PERSISTENCE_TABLE = ("redisPersistenceTable", "redisPersistenceEntry", [3, 5, 1]) {}
    /// `redisPersistenceTable` (`redis.3.5`): RDB and AOF. Durations where
    /// Redis says -1 for "none" are Integer32.
    pub const PERSISTENCE_COLUMNS = [
        field("redisPstLoading", 1, TruthValue, Truth, &["loading"]),
        info("redisPstChanges", 2, Gauge64, &["rdb_changes_since_last_save", "changes_since_last_save"]).units("changes"),
        field("redisPstBgsaveNow", 3, TruthValue, Truth, &["rdb_bgsave_in_progress", "bgsave_in_progress"]),
        info("redisPstLastSave", 4, Gauge64, &["rdb_last_save_time", "last_save_time"]).units("seconds"),
        field("redisPstLastSaveAge", 5, Gauge32, AgeOf, &["rdb_last_save_time", "last_save_time"]).units("seconds"),
        field("redisPstBgsaveStatus", 6, Enum, Conversion::Enum(OkErr::LABELS), &["rdb_last_bgsave_status"]).alias("redisPstBgsaveStat"),
        field("redisPstBgsaveSecs", 7, Integer32, Signed, &["rdb_last_bgsave_time_sec"]).units("seconds"),
        field("redisPstBgsaveCurSecs", 8, Integer32, Signed, &["rdb_current_bgsave_time_sec"]).units("seconds").alias("redisPstBgsaveCur"),
        info("redisPstRdbSaves", 9, Counter64, &["rdb_saves"]).units("snapshots"),
        info("redisPstRdbCow", 10, Gauge64, &["rdb_last_cow_size"]).units("bytes"),
        field("redisPstAofOn", 11, TruthValue, Truth, &["aof_enabled"]),
        field("redisPstAofRewriteNow", 12, TruthValue, Truth, &["aof_rewrite_in_progress", "bgrewriteaof_in_progress"]).alias("redisPstAofRwNow"),
        field("redisPstAofRewriteSch", 13, TruthValue, Truth, &["aof_rewrite_scheduled"]).alias("redisPstAofRwSched"),
        field("redisPstAofRewriteSecs", 14, Integer32, Signed, &["aof_last_rewrite_time_sec"]).units("seconds").alias("redisPstAofRwSecs"),
        field("redisPstAofRewrCurSecs", 15, Integer32, Signed, &["aof_current_rewrite_time_sec"]).units("seconds").alias("redisPstAofRwCur"),
        field("redisPstAofRewrStatus", 16, Enum, Conversion::Enum(OkErr::LABELS), &["aof_last_bgrewrite_status"]).alias("redisPstAofRwStat"),
        field("redisPstAofWriteStatus", 17, Enum, Conversion::Enum(OkErr::LABELS), &["aof_last_write_status"]).alias("redisPstAofWrStat"),
        info("redisPstAofCow", 18, Gauge64, &["aof_last_cow_size"]).units("bytes"),
        info("redisPstAofSize", 19, Gauge64, &["aof_current_size"]).units("bytes"),
        info("redisPstAofBaseSize", 20, Gauge64, &["aof_base_size"]).units("bytes"),
        info("redisPstAofDelayedFsync", 21, Counter64, &["aof_delayed_fsync"]).units("fsyncs").alias("redisPstAofDelFsync"),
        info("redisPstAofRewrites", 22, Counter64, &["aof_rewrites"]).units("rewrites"),
        info("redisPstCowPeak", 23, Gauge64, &["current_cow_peak"]).units("bytes"),
        info("redisPstCowSize", 24, Gauge64, &["current_cow_size"]).units("bytes"),
        field("redisPstForkPercent", 25, Gauge32, Scaled(100), &["current_fork_perc"]).units("percent"),
        // Valkey 9.x (atomic slot migration).
        field("redisPstSlotMigFork", 26, TruthValue, Truth, &["slot_migration_fork_in_progress"]),
        // Revision 202611240040Z (src/server.c of Redis and Valkey): fork
        // and load progress. The loading_* fields exist only while loading.
        field("redisPstAsyncLoad", 27, TruthValue, Truth, &["async_loading"]),
        info("redisPstSaveKeys", 28, Gauge64, &["current_save_keys_processed"]).units("keys"),
        info("redisPstSaveKeysAll", 29, Gauge64, &["current_save_keys_total"]).units("keys"),
        info("redisPstLoadExpired", 30, Gauge64, &["rdb_last_load_keys_expired"]).units("keys"),
        info("redisPstLoadKeys", 31, Gauge64, &["rdb_last_load_keys_loaded"]).units("keys"),
        info("redisPstAofRwFails", 32, Gauge32, &["aof_rewrites_consecutive_failures"]).units("failures"),
        info("redisPstAofBufLen", 33, Gauge64, &["aof_buffer_length"]).units("bytes"),
        info("redisPstAofPendSync", 34, Gauge32, &["aof_pending_bio_fsync"]).units("jobs"),
        field("redisPstModForkNow", 35, TruthValue, Truth, &["module_fork_in_progress"]),
        info("redisPstModForkCow", 36, Gauge64, &["module_fork_last_cow_size"]).units("bytes"),
        field("redisPstLoadAge", 37, Gauge32, AgeOf, &["loading_start_time"]).units("seconds"),
        info("redisPstLoadTotal", 38, Gauge64, &["loading_total_bytes"]).units("bytes"),
        info("redisPstLoadRdbMem", 39, Gauge64, &["loading_rdb_used_mem"]).units("bytes"),
        info("redisPstLoadBytes", 40, Gauge64, &["loading_loaded_bytes"]).units("bytes"),
        field("redisPstLoadPercent", 41, Gauge32, Scaled(100), &["loading_loaded_perc"]).units("percent"),
        info("redisPstLoadEta", 42, Gauge32, &["loading_eta_seconds"]).units("seconds"),
    ]
}

table! {
    pub const STATS_TABLE = ("redisStatsTable", "redisStatsEntry", [3, 6, 1]) {}
    /// `redisStatsTable` (`redis.3.6`): the Stats section.
    pub const STATS_COLUMNS = [
        info("redisStConnections", 1, Counter64, &["total_connections_received"]).units("connections"),
        info("redisStCommands", 2, Counter64, &["total_commands_processed"]).units("commands"),
        info("redisStOpsPerSec", 3, Gauge32, &["instantaneous_ops_per_sec"]).units("commands per second"),
        info("redisStNetIn", 4, Counter64, &["total_net_input_bytes"]).units("bytes"),
        info("redisStNetOut", 5, Counter64, &["total_net_output_bytes"]).units("bytes"),
        info("redisStNetReplIn", 6, Counter64, &["total_net_repl_input_bytes"]).units("bytes"),
        info("redisStNetReplOut", 7, Counter64, &["total_net_repl_output_bytes"]).units("bytes"),
        info("redisStRejectedConns", 8, Counter64, &["rejected_connections"]).units("connections").alias("redisStRejectConns"),
        info("redisStSyncFull", 9, Counter64, &["sync_full"]).units("synchronizations"),
        info("redisStSyncPartOk", 10, Counter64, &["sync_partial_ok"]).units("synchronizations"),
        info("redisStSyncPartErr", 11, Counter64, &["sync_partial_err"]).units("synchronizations"),
        info("redisStExpiredKeys", 12, Counter64, &["expired_keys"]).units("keys"),
        field("redisStExpiredStale", 13, Gauge32, Scaled(100), &["expired_stale_perc"]).units("percent"),
        info("redisStEvictedKeys", 14, Counter64, &["evicted_keys"]).units("keys"),
        info("redisStEvictedClients", 15, Counter64, &["evicted_clients"]).units("clients").alias("redisStEvictedClnts"),
        info("redisStKeyspaceHits", 16, Counter64, &["keyspace_hits"]).units("lookups"),
        info("redisStKeyspaceMisses", 17, Counter64, &["keyspace_misses"]).units("lookups").alias("redisStKsMisses"),
        info("redisStPubsubChannels", 18, Gauge32, &["pubsub_channels"]).units("channels").alias("redisStPubsubChans"),
        info("redisStPubsubPatterns", 19, Gauge32, &["pubsub_patterns"]).units("patterns").alias("redisStPubsubPats"),
        info("redisStPubsubShardCh", 20, Gauge32, &["pubsubshard_channels"]).units("channels").alias("redisStPubsubShard"),
        info("redisStLatestForkUsec", 21, Gauge32, &["latest_fork_usec"]).units("microseconds").alias("redisStLastForkUsec"),
        info("redisStForks", 22, Counter64, &["total_forks"]).units("forks"),
        info("redisStDefragHits", 23, Counter64, &["active_defrag_hits"]).units("reallocations"),
        info("redisStDefragMisses", 24, Counter64, &["active_defrag_misses"]).units("reallocations"),
        info("redisStTrackingKeys", 25, Gauge64, &["tracking_total_keys"]).units("keys"),
        info("redisStErrorReplies", 26, Counter64, &["total_error_replies"]).units("replies"),
        info("redisStUnexpectedErrs", 27, Counter64, &["unexpected_error_replies"]).units("replies").alias("redisStUnexpErrs"),
        info("redisStReads", 28, Counter64, &["total_reads_processed"]).units("events"),
        info("redisStWrites", 29, Counter64, &["total_writes_processed"]).units("events"),
        info("redisStIoThreadReads", 30, Counter64, &["io_threaded_reads_processed"]).units("events").alias("redisStIoThrReads"),
        info("redisStIoThreadWrites", 31, Counter64, &["io_threaded_writes_processed"]).units("events").alias("redisStIoThrWrites"),
        info("redisStExpireCycleMs", 32, Counter64, &["expire_cycle_cpu_milliseconds"]).units("milliseconds").alias("redisStExpCycleMs"),
        info("redisStEvictLimitMs", 33, Counter64, &["total_eviction_exceeded_time"]).units("milliseconds"),
        info("redisStAclDeniedAuth", 34, Counter64, &["acl_access_denied_auth"]).units("denials").alias("redisStAclDenyAuth"),
        info("redisStAclDeniedCmd", 35, Counter64, &["acl_access_denied_cmd"]).units("denials"),
        info("redisStAclDeniedKey", 36, Counter64, &["acl_access_denied_key"]).units("denials"),
        info("redisStAclDeniedChan", 37, Counter64, &["acl_access_denied_channel"]).units("denials").alias("redisStAclDenyChan"),
        field("redisStInputKbps", 38, Gauge32, Scaled(100), &["instantaneous_input_kbps"]).units("KB/s"),
        field("redisStOutputKbps", 39, Gauge32, Scaled(100), &["instantaneous_output_kbps"]).units("KB/s"),
        // Valkey's additions (8.0 and later).
        info("redisStAclDenyCert", 40, Counter64, &["acl_access_denied_tls_cert"]).units("denials"),
        info("redisStAclDenyDb", 41, Counter64, &["acl_access_denied_db"]).units("denials"),
        info("redisStEvictScripts", 42, Counter64, &["evicted_scripts"]).units("scripts"),
        info("redisStIoFreed", 43, Counter64, &["io_threaded_freed_objects"]).units("objects"),
        info("redisStIoPolls", 44, Counter64, &["io_threaded_poll_processed"]).units("polls"),
        info("redisStIoAccepts", 45, Counter64, &["io_threaded_accept_processed"]).units("connections"),
        info("redisStPrefBatches", 46, Counter64, &["io_threaded_total_prefetch_batches"]).units("batches"),
        info("redisStPrefEntries", 47, Counter64, &["io_threaded_total_prefetch_entries"]).units("keys"),
        // Valkey's expired_fields; Redis 8 counts the same as expired_subkeys.
        info("redisStExpFields", 48, Counter64, &["expired_fields", "expired_subkeys"]).units("fields"),
        info("redisStSlotImport", 49, Counter64, &["total_net_cluster_slot_import_bytes"]).units("bytes"),
        info("redisStSlotExport", 50, Counter64, &["total_net_cluster_slot_export_bytes"]).units("bytes"),
        field("redisStVolStale", 51, Gauge32, Scaled(100), &["expired_keys_with_volatile_items_stale_perc"]).units("percent"),
        // Revision 202611240040Z (src/server.c of Redis and Valkey):
        // eventloop_* are server.duration_stats (µs, from getMonotonicUs),
        // the buffer-limit disconnections networking.c's counters.
        field("redisStInReplKbps", 52, Gauge32, Scaled(100), &["instantaneous_input_repl_kbps"]).units("KiB/s"),
        field("redisStOutReplKbps", 53, Gauge32, Scaled(100), &["instantaneous_output_repl_kbps"]).units("KiB/s"),
        info("redisStExpireCapHit", 54, Counter64, &["expired_time_cap_reached_count"]).units("cycles"),
        info("redisStReplExpKeys", 55, Gauge64, &["slave_expires_tracked_keys"]).units("keys"),
        info("redisStTrackItems", 56, Gauge64, &["tracking_total_items"]).units("items"),
        info("redisStTrackPrefix", 57, Gauge64, &["tracking_total_prefixes"]).units("prefixes"),
        info("redisStDumpSanitize", 58, Counter64, &["dump_payload_sanitizations"]).units("validations"),
        info("redisStQbufDiscon", 59, Counter64, &["client_query_buffer_limit_disconnections"]).units("disconnections"),
        info("redisStObufDiscon", 60, Counter64, &["client_output_buffer_limit_disconnections"]).units("disconnections"),
        info("redisStReplyShrinks", 61, Counter64, &["reply_buffer_shrinks"]).units("resizes"),
        info("redisStReplyExpands", 62, Counter64, &["reply_buffer_expands"]).units("resizes"),
        info("redisStElCycles", 63, Counter64, &["eventloop_cycles"]).units("cycles"),
        info("redisStElUsec", 64, Counter64, &["eventloop_duration_sum"]).units("microseconds"),
        info("redisStElCmdUsec", 65, Counter64, &["eventloop_duration_cmd_sum"]).units("microseconds"),
        info("redisStElCyclesSec", 66, Gauge32, &["instantaneous_eventloop_cycles_per_sec"]).units("cycles per second"),
        info("redisStElCycleUsec", 67, Gauge32, &["instantaneous_eventloop_duration_usec"]).units("microseconds"),
    ]
}

table! {
    pub const REPLICATION_TABLE = ("redisReplicationTable", "redisReplicationEntry", [3, 7, 1]) {}
    /// `redisReplicationTable` (`redis.3.7`): this server's side of
    /// replication; its replicas are rows of `redisReplicaTable`.
    pub const REPLICATION_COLUMNS = [
        field("redisReplRole", 1, Enum, Conversion::Enum(Role::LABELS), &["role"]),
        info("redisReplReplicas", 2, Gauge32, &["connected_slaves"]).units("replicas"),
        field("redisReplMasterHost", 3, DisplayString, Text, &["master_host"]),
        info("redisReplMasterPort", 4, Gauge32, &["master_port"]),
        field("redisReplLinkStatus", 5, Enum, Conversion::Enum(LinkStatus::LABELS), &["master_link_status"]),
        field("redisReplLastIo", 6, Integer32, Signed, &["master_last_io_seconds_ago"]).units("seconds"),
        field("redisReplSyncing", 7, TruthValue, Truth, &["master_sync_in_progress"]),
        field("redisReplDownSince", 8, Integer32, Signed, &["master_link_down_since_seconds"]).units("seconds"),
        info("redisReplOffset", 9, Counter64, &["master_repl_offset"]).units("bytes"),
        info("redisReplReplicaOffset", 10, Counter64, &["slave_repl_offset"]).units("bytes").alias("redisReplRepOffset"),
        field("redisReplBacklogOn", 11, TruthValue, Truth, &["repl_backlog_active"]),
        info("redisReplBacklogSize", 12, Gauge64, &["repl_backlog_size"]).units("bytes").alias("redisReplBacklogSz"),
        info("redisReplBacklogLen", 13, Gauge64, &["repl_backlog_histlen"]).units("bytes"),
        field("redisReplFailover", 14, Enum, Conversion::Enum(FailoverState::LABELS), &["master_failover_state"]),
        info("redisReplPriority", 15, Gauge32, &["slave_priority", "replica_priority"]),
        field("redisReplReadOnly", 16, TruthValue, Truth, &["slave_read_only", "replica_read_only"]),
        field("redisReplId", 17, DisplayString, Text, &["master_replid"]),
        // Valkey 8.0+ (dual-channel replication).
        info("redisReplWaitPsync", 18, Gauge32, &["replicas_waiting_psync"]).units("replicas"),
        info("redisReplBufSize", 19, Gauge64, &["replicas_repl_buffer_size"]).units("bytes"),
        info("redisReplBufPeak", 20, Gauge64, &["replicas_repl_buffer_peak"]).units("bytes"),
        // Revision 202611240040Z: a replica's full-sync transfer (src/server.c,
        // printed while repl_state is REPL_STATE_TRANSFER). master_sync_left_bytes
        // is total minus read (negative when the total is unknown): not served.
        info("redisReplSyncTotal", 21, Gauge64, &["master_sync_total_bytes"]).units("bytes"),
        info("redisReplSyncRead", 22, Gauge64, &["master_sync_read_bytes"]).units("bytes"),
        field("redisReplSyncPerc", 23, Gauge32, Scaled(100), &["master_sync_perc"]).units("percent"),
        info("redisReplSyncLastIo", 24, Gauge32, &["master_sync_last_io_seconds_ago"]).units("seconds"),
        // Revision 202611261600Z: a Redis 8 replica's link and syncs (#13990)
        // and its buffer of the replication stream during a full sync.
        info("redisReplSyncTries", 25, Gauge32, &["master_current_sync_attempts"]).units("attempts"),
        info("redisReplTriesTotal", 26, Counter64, &["master_total_sync_attempts"]).units("attempts"),
        info("redisReplLinkUpSecs", 27, Gauge32, &["master_link_up_since_seconds"]).units("seconds"),
        info("redisReplDownTotal", 28, Counter64, &["total_disconnect_time_sec"]).units("seconds"),
        info("redisReplFsBufSize", 29, Gauge64, &["replica_full_sync_buffer_size"]).units("bytes"),
        info("redisReplFsBufPeak", 30, Gauge64, &["replica_full_sync_buffer_peak"]).units("bytes"),
    ]
}

table! {
    pub const CPU_TABLE = ("redisCpuTable", "redisCpuEntry", [3, 8, 1]) {}
    /// `redisCpuTable` (`redis.3.8`): CPU time in centiseconds, as Counter64.
    pub const CPU_COLUMNS = [
        centiseconds("redisCpuSystem", 1, Counter64, &["used_cpu_sys"]),
        centiseconds("redisCpuUser", 2, Counter64, &["used_cpu_user"]),
        centiseconds("redisCpuSysChildren", 3, Counter64, &["used_cpu_sys_children"]),
        centiseconds("redisCpuUserChildren", 4, Counter64, &["used_cpu_user_children"]).alias("redisCpuUserChild"),
        centiseconds("redisCpuSysMain", 5, Counter64, &["used_cpu_sys_main_thread"]),
        centiseconds("redisCpuUserMain", 6, Counter64, &["used_cpu_user_main_thread"]),
        // Valkey 9.1 (valkey-doc commands/info.md): seconds with a fraction.
        centiseconds("redisCpuActiveMain", 7, Counter64, &["used_active_time_main_thread"]),
    ]
}

table! {
    pub const CLUSTER_TABLE = ("redisClusterTable", "redisClusterEntry", [3, 9, 1]) {}
    /// `redisClusterTable` (`redis.3.9`): `cluster_enabled` from INFO and the
    /// fields of `CLUSTER INFO`, which the poller asks only of cluster nodes.
    pub const CLUSTER_COLUMNS = [
        field("redisClusterEnabled", 1, TruthValue, Truth, &["cluster_enabled"]),
        field("redisClusterState", 2, Enum, Conversion::Enum(ClusterState::LABELS), &["cluster_state"]),
        info("redisClusterSlotsAsgn", 3, Gauge32, &["cluster_slots_assigned"]).units("slots").alias("redisClusterSlAsgn"),
        info("redisClusterSlotsOk", 4, Gauge32, &["cluster_slots_ok"]).units("slots"),
        info("redisClusterSlotsPfail", 5, Gauge32, &["cluster_slots_pfail"]).units("slots").alias("redisClusterSlPfail"),
        info("redisClusterSlotsFail", 6, Gauge32, &["cluster_slots_fail"]).units("slots").alias("redisClusterSlFail"),
        info("redisClusterNodes", 7, Gauge32, &["cluster_known_nodes"]).units("nodes"),
        info("redisClusterSize", 8, Gauge32, &["cluster_size"]).units("nodes"),
        info("redisClusterCurEpoch", 9, Gauge64, &["cluster_current_epoch"]).alias("redisClusterEpoch"),
        info("redisClusterMyEpoch", 10, Gauge64, &["cluster_my_epoch"]),
        info("redisClusterMsgsSent", 11, Counter64, &["cluster_stats_messages_sent"]).units("messages").alias("redisClusterMsgSent"),
        info("redisClusterMsgsRecv", 12, Counter64, &["cluster_stats_messages_received"]).units("messages").alias("redisClusterMsgRecv"),
    ]
}

table! {
    pub const SENTINEL_STATE_TABLE = ("redisSentinelStateTable", "redisSentinelStateEntry", [3, 15, 1]) {}
    /// `redisSentinelStateTable` (`redis.3.15`, AUGMENTS redisInstanceEntry):
    /// the `# Sentinel` section of a sentinel's INFO.
    pub const SENTINEL_COLUMNS = [
        info("redisSntMasters", 1, Gauge32, &["sentinel_masters"]).units("masters"),
        field("redisSntTilt", 2, TruthValue, Truth, &["sentinel_tilt"]),
        info("redisSntScripts", 3, Gauge32, &["sentinel_running_scripts"]).units("scripts"),
        // Revision 202611240040Z (sentinel.c's INFO of Redis and Valkey).
        field("redisSntTiltSince", 4, Integer32, Signed, &["sentinel_tilt_since_seconds"]).units("seconds"),
        info("redisSntTilts", 5, Counter64, &["sentinel_total_tilt"]).units("times"),
        info("redisSntScriptQueue", 6, Gauge32, &["sentinel_scripts_queue_length"]).units("scripts"),
    ]
}

table! {
    pub const TLS_TABLE = ("redisTlsTable", "redisTlsEntry", [3, 18, 1]) {}
    /// `redisTlsTable` (`redis.3.18`, AUGMENTS redisInstanceEntry): the TLS
    /// section of INFO (Valkey 9.1+): the certificates' serials and how long
    /// until they expire.
    pub const TLS_COLUMNS = [
        field("redisTlsSrvSerial", 1, DisplayString, Text, &["tls_server_cert_serial"]),
        field("redisTlsSrvExpires", 2, Integer32, Signed, &["tls_server_cert_expires_in_seconds"]).units("seconds"),
        field("redisTlsCliSerial", 3, DisplayString, Text, &["tls_client_cert_serial"]),
        field("redisTlsCliExpires", 4, Integer32, Signed, &["tls_client_cert_expires_in_seconds"]).units("seconds"),
        field("redisTlsCaSerial", 5, DisplayString, Text, &["tls_ca_cert_serial"]),
        field("redisTlsCaExpires", 6, Integer32, Signed, &["tls_ca_cert_expires_in_seconds"]).units("seconds"),
    ]
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
