//! The one table of what the agent serves.
//!
//! Every object of REDIS-SERVER-MIB and PUPPET-AGENT-MIB that the agent
//! answers for is one row here: its MIB name, its OID below the module root,
//! its SMI syntax and where its value comes from. The sources build
//! snapshots from these rows, and the tests check the MIB modules
//! (`tests/mib_table.rs`, `tests/puppet_mib.rs`) and the OpenNMS files
//! (`tests/opennms.rs`) against them, so none can drift apart. Adding a
//! Redis field is adding a row.

use crate::oid::Oid;
use crate::smi::Syntax;

/// Where the default module root sits: `enterprises.daysofwonder(20267).400`.
pub const DEFAULT_REDIS_ROOT: &str = "1.3.6.1.4.1.20267.400";

/// The default root of PUPPET-AGENT-MIB: `enterprises.daysofwonder(20267).401`,
/// beside REDIS-SERVER-MIB.
pub const DEFAULT_PUPPET_ROOT: &str = "1.3.6.1.4.1.20267.401";

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
    /// A signed integer, where Redis says `-1` for "none" (Integer32,
    /// clamped to its range).
    Signed,
    /// Text, as a DisplayString.
    Text,
    /// `0`/`1` as a TruthValue: true(1), false(2).
    Truth,
    /// Text mapped to a named number; unknown text leaves the object absent.
    Enum(&'static [(&'static str, i32)]),
    /// A decimal times a factor, as an integer gauge (`1.84` × 100 = 184):
    /// the MIB's DISPLAY-HINT puts the point back.
    Scaled(u32),
    /// Seconds with a fraction (`16364.80`) to centiseconds; a Counter32
    /// wraps, a Counter64 does not need to.
    SecondsToCentiseconds,
    /// A UNIX time, served as the seconds elapsed since, computed when asked.
    AgeOf,
    /// The field as a share of another field (the first present of these
    /// names), in hundredths of a percent (`used_memory` of `maxmemory`:
    /// 9015 is 90.15 %), rounded; absent when the other field is absent or
    /// 0 (no limit), never a division by zero. Not capped at 100 %: a
    /// server over its limit shows by how much.
    PercentOf(&'static [&'static str]),
}

/// Declares an enumeration of the MIB (`INTEGER { name(n), ... }`) as a
/// Rust enum with its numbers and the labels the sources use for each
/// (Redis's INFO text, Puppet's words), and its `LABELS` table for
/// [`Conversion::Enum`] and the tests. A label not in it has no number:
/// the object is absent, never a made-up value.
macro_rules! enumeration {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $number:literal => [$($label:literal),+],)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(i32)]
        pub enum $name {
            $($(#[$vmeta])* $variant = $number,)+
        }

        impl $name {
            /// Every label with its number.
            pub const LABELS: &'static [(&'static str, i32)] = &[$($(($label, $number),)+)+];

            /// The value a source's label stands for.
            pub fn from_label(label: &str) -> Option<Self> {
                match label {
                    $($($label)|+ => Some(Self::$variant),)+
                    _ => None,
                }
            }

            /// Its number in the MIB.
            pub const fn number(self) -> i32 {
                self as i32
            }
        }
    };
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

/// `ok`/`err` status fields (bgsave, AOF).
pub const OK_ERR: &[(&str, i32)] = OkErr::LABELS;
/// `role`.
pub const ROLES: &[(&str, i32)] = Role::LABELS;
/// `redis_mode` (Valkey: `server_mode`).
pub const MODES: &[(&str, i32)] = ServerMode::LABELS;
/// `master_link_status`.
pub const LINK: &[(&str, i32)] = LinkStatus::LABELS;
/// `master_failover_state` (Redis 6.2+).
pub const FAILOVER: &[(&str, i32)] = FailoverState::LABELS;
/// `cluster_state` from CLUSTER INFO.
pub const CLUSTER_STATE: &[(&str, i32)] = ClusterState::LABELS;

/// Values the poller knows about an instance itself, not read from INFO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusField {
    Name,
    Address,
    /// up(1) / down(2) / loading(3): [`INSTANCE_STATE`].
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
    /// The subject of the certificate a `rediss://` server showed.
    CertSubject,
    /// Its issuer.
    CertIssuer,
    /// Its notAfter, in UNIX seconds.
    CertNotAfter,
    /// Seconds from the poll until its notAfter; negative once passed.
    CertExpiresIn,
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
    /// A column of `redisKeyspaceTable`, from the `db<N>` lines.
    Keyspace(KeyspaceField),
    /// A column of `redisReplicaTable`, from the `slave<N>` lines.
    Replica(ReplicaField),
    /// A column of `redisCommandTable`, from `cmdstat_*` and
    /// `latency_percentiles_usec_*`.
    Command(CommandField),
    /// A column of `redisErrorTable`, from `errorstat_*`.
    Error(ErrorField),
    /// A column of `redisSentinelTable`, from SENTINEL MASTERS.
    SentinelMaster(SentinelField),
    /// A column of `redisSlowlogTable`, from SLOWLOG LEN and SLOWLOG GET 1.
    Slowlog(SlowlogField),
    /// A column of `redisLatencyTable`, from LATENCY LATEST.
    Latency(LatencyField),
    /// A column of `redisClientNameTable`, from CLIENT LIST per name.
    ClientName(ClientField),
    /// A column of `redisClientUserTable`, from CLIENT LIST per ACL user.
    ClientUser(ClientField),
    /// An object of PUPPET-AGENT-MIB (below the Puppet root), from the
    /// agent's run summary, run report and lock files.
    Puppet(PuppetField),
}

/// What a PUPPET-AGENT-MIB object reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PuppetField {
    LastRunTime,
    LastRunAge,
    /// unchanged(1), changed(2), failed(3), unknown(4)
    Status,
    ResourcesTotal,
    ResourcesChanged,
    ResourcesFailed,
    ResourcesFailedToRestart,
    ResourcesSkipped,
    ResourcesOutOfSync,
    ResourcesRestarted,
    ResourcesScheduled,
    ResourcesCorrective,
    EventsTotal,
    EventsFailure,
    EventsSuccess,
    ChangesTotal,
    /// A phase of `time:` in the summary, in milliseconds.
    Phase(&'static str),
    ConfigVersion,
    PuppetVersion,
    /// notUsed(1), explicitlyRequested(2), onFailure(3), unknown(4)
    CachedCatalog,
    Noop,
    NoopPending,
    CorrectiveChange,
    /// agent(1), user(2): `puppet agent` or an ad-hoc `puppet apply`.
    RunMode,
    FirstError,
    Disabled,
    DisabledMessage,
    RunInProgress,
    /// Why the files could not be read, empty when they could.
    ReadError,
    /// Columns of `puppetResourceTable`.
    ResourceType,
    ResourceTitle,
    ResourceState,
    ResourceMessage,
    /// Successive runs (`puppet::runs`): runs seen since the subagent
    /// started, counted.
    RunsObserved,
    /// The last runs that each changed resources, in a row.
    ChangingRuns,
    /// Runs that ended within the last hour.
    RunsLastHour,
    /// Seconds between the ends of the last two runs.
    RunInterval,
    /// `converge_runs` of the configuration.
    ConvergeRuns,
    /// The resources that changed in each of the last `converge_runs` runs.
    LoopResources,
    /// How many those are (the text may be cut).
    LoopResourceCount,
    /// The events log (`--logdest …/events.jsonl`), issue 13: its state
    /// and counts (`puppet.1.37`…), and the columns of `puppetEventTable`.
    Events(PuppetEventField),
}

/// What an object of the events log reports (scalars and the columns of
/// `puppetEventTable`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PuppetEventField {
    /// following(1), missing(2), unreadable(3): [`PuppetEventsLogStatus`].
    LogStatus,
    /// Why the log cannot be followed, empty when it can.
    LogError,
    /// Resource events read since the agent started.
    Seen,
    /// Lines that were not usable: not JSON, over-long, unknown level.
    Refused,
    /// Resource notifications held back in the current run.
    HeldBack,
    /// The configuration version of the current run, from the log.
    RunVersion,
    /// Columns of `puppetEventTable`.
    Time,
    Level,
    ResourceType,
    Title,
    Property,
    Message,
    ConfigVersion,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SentinelField {
    /// The master's name, the row's index as a readable column.
    Name,
    /// The instance's name and the row's, escaped and joined by `.`
    /// (`redis::readings::row_key`): unique among all the rows of the
    /// table, where the name alone repeats across instances (every instance
    /// runs `info`), and fit to be a file name. Managers store rows under it.
    Key,
    /// ok(1), sdown(2), odown(3), from the flags.
    State,
    Flags,
    Address,
    Port,
    Replicas,
    OtherSentinels,
    Quorum,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlowlogField {
    Length,
    LastId,
    LastTime,
    LastUsec,
    /// COMMANDLOG LEN large-request (Valkey 8.1+): commands whose request
    /// was over commandlog-request-larger-than.
    LargeRequests,
    /// COMMANDLOG LEN large-reply (Valkey 8.1+): commands whose reply was
    /// over commandlog-reply-larger-than.
    LargeReplies,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatencyField {
    /// The event's name, the row's index as a readable column.
    Name,
    /// The instance's name and the row's, escaped and joined by `.`
    /// (`redis::readings::row_key`): unique among all the rows of the
    /// table, where the name alone repeats across instances (every instance
    /// runs `info`), and fit to be a file name. Managers store rows under it.
    Key,
    LastTime,
    LastMs,
    MaxMs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorField {
    /// The error prefix, the row's index as a readable column.
    Name,
    /// The instance's name and the row's, escaped and joined by `.`
    /// (`redis::readings::row_key`): unique among all the rows of the
    /// table, where the name alone repeats across instances (every instance
    /// runs `info`), and fit to be a file name. Managers store rows under it.
    Key,
    Count,
}

/// A column of the CLIENT LIST aggregates (per name, per user).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientField {
    /// The name (or user), the row's index as a readable column.
    Label,
    /// The instance's name and the row's, escaped and joined by `.`
    /// (`redis::readings::row_key`): unique among all the rows of the
    /// table, and fit to be a file name. Managers store rows under it.
    Key,
    Count,
    OldestAge,
    MaxIdle,
    MaxOutputMem,
    MaxTotalMem,
    Blocked,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyspaceField {
    Keys,
    Expires,
    AvgTtl,
    Subexpiry,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplicaField {
    Address,
    Port,
    State,
    Offset,
    LagSeconds,
    /// How far the replica is behind: master_repl_offset minus its offset.
    LagBytes,
    /// Valkey's `type=`: replica, rdb-channel, main-channel.
    Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandField {
    /// The command's name, the row's index as a readable column.
    Name,
    /// The instance's name and the row's, escaped and joined by `.`
    /// (`redis::readings::row_key`): unique among all the rows of the
    /// table, where the name alone repeats across instances (every instance
    /// runs `info`), and fit to be a file name. Managers store rows under it.
    Key,
    Calls,
    Usec,
    UsecPerCall,
    Rejected,
    Failed,
    P50,
    P99,
    P999,
}

impl CommandField {
    /// What the decimal INFO value is multiplied by (the MIB's DISPLAY-HINT
    /// divides it back): µs per call in hundredths, percentiles in
    /// thousandths of a µs; 1 for integer counts.
    pub const fn scale(self) -> u32 {
        match self {
            CommandField::UsecPerCall => 100,
            CommandField::P50 | CommandField::P99 | CommandField::P999 => 1000,
            CommandField::Name
            | CommandField::Key
            | CommandField::Calls
            | CommandField::Usec
            | CommandField::Rejected
            | CommandField::Failed => 1,
        }
    }
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
    /// The MIB's UNITS clause, when the value has one (`bytes`, `seconds`,
    /// `clients`…): what a manager shows beside the number.
    pub units: Option<&'static str>,
}

impl ObjectDef {
    /// This object with a UNITS clause.
    const fn units(self, units: &'static str) -> ObjectDef {
        ObjectDef {
            units: Some(units),
            ..self
        }
    }
}

const fn info(
    name: &'static str,
    arcs: &'static [u32],
    syntax: Syntax,
    fields: &'static [&'static str],
) -> ObjectDef {
    field(name, arcs, syntax, Conversion::Unsigned, fields)
}

const fn field(
    name: &'static str,
    arcs: &'static [u32],
    syntax: Syntax,
    conversion: Conversion,
    fields: &'static [&'static str],
) -> ObjectDef {
    ObjectDef {
        name,
        arcs,
        syntax,
        source: Source::Info { fields, conversion },
        units: None,
    }
}

const fn centiseconds(
    name: &'static str,
    arcs: &'static [u32],
    fields: &'static [&'static str],
) -> ObjectDef {
    field(
        name,
        arcs,
        Syntax::Counter32,
        Conversion::SecondsToCentiseconds,
        fields,
    )
}

const fn column(
    name: &'static str,
    arcs: &'static [u32],
    syntax: Syntax,
    source: Source,
) -> ObjectDef {
    ObjectDef {
        name,
        arcs,
        syntax,
        source,
        units: None,
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
        units: None,
    }
}

use Syntax::*;

/// The 17 scalars of the Perl `redis-snmp`, with their original names, OIDs
/// and types (`Gauge64` is the old `REDISUnsigned64`). They show the first
/// configured instance. Served with instance suffix `.0`.
#[rustfmt::skip]
pub const LEGACY_SCALARS: &[ObjectDef] = &[
    info("redisConnectedClients", &[1, 1], Gauge32, &["connected_clients"]).units("clients"),
    info("redisConnectedSlaves", &[1, 2], Gauge32, &["connected_slaves"]).units("replicas"),
    info("redisUsedMemory", &[1, 3], Gauge64, &["used_memory"]).units("bytes"),
    // Renamed in Redis 2.6; the Perl agent lost this object on anything newer.
    info("redisChangesSinceLastSave", &[1, 4], Gauge32, &["rdb_changes_since_last_save", "changes_since_last_save"]).units("changes"),
    info("redisTotalConnections", &[1, 5], Counter64, &["total_connections_received"]).units("connections"),
    info("redisCommandsProcessed", &[1, 6], Counter64, &["total_commands_processed"]).units("commands"),
    centiseconds("redisCPUSys", &[1, 7], &["used_cpu_sys"]).units("centiseconds"),
    centiseconds("redisCPUUsr", &[1, 8], &["used_cpu_user"]).units("centiseconds"),
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
    status("redisInstanceAddress", &[3, 1, 1, 3], DisplayString, StatusField::Address),
    status("redisInstanceState", &[3, 1, 1, 4], Enum, StatusField::Up),
    status("redisInstanceDataAge", &[3, 1, 1, 5], Gauge32, StatusField::DataAge).units("seconds"),
    status("redisInstancePollTime", &[3, 1, 1, 6], Gauge32, StatusField::PollDuration).units("milliseconds"),
    status("redisInstanceLastError", &[3, 1, 1, 7], DisplayString, StatusField::LastError),
    status("redisInstancePollsOk", &[3, 1, 1, 8], Counter32, StatusField::PollsOk).units("polls"),
    status("redisInstancePollsFailed", &[3, 1, 1, 9], Counter32, StatusField::PollsFailed).units("polls"),
    // The server's TLS certificate (issue 16), rediss:// instances only.
    status("redisInstanceCertSubject", &[3, 1, 1, 10], DisplayString, StatusField::CertSubject),
    status("redisInstanceCertIssuer", &[3, 1, 1, 11], DisplayString, StatusField::CertIssuer),
    status("redisInstanceCertNotAfter", &[3, 1, 1, 12], Gauge64, StatusField::CertNotAfter).units("seconds"),
    status("redisInstanceCertExpiresIn", &[3, 1, 1, 13], Integer32, StatusField::CertExpiresIn).units("seconds"),
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
    field("redisSrvMode", &[3, 2, 1, 2], Enum, Conversion::Enum(MODES), &["redis_mode", "server_mode"]),
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
    info("redisCliMaxOutputBuf", &[3, 3, 1, 6], Gauge64, &["client_recent_max_output_buffer"]).units("bytes"),
    info("redisCliClusterConns", &[3, 3, 1, 7], Gauge32, &["cluster_connections"]).units("connections"),
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
    info("redisMemNotEvictable", &[3, 4, 1, 23], Gauge64, &["mem_not_counted_for_evict"]).units("bytes"),
    info("redisMemLazyfreePend", &[3, 4, 1, 24], Gauge32, &["lazyfree_pending_objects"]).units("objects"),
    info("redisMemCachedScripts", &[3, 4, 1, 25], Gauge32, &["number_of_cached_scripts"]).units("scripts"),
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
    field("redisPstBgsaveStatus", &[3, 5, 1, 6], Enum, Conversion::Enum(OK_ERR), &["rdb_last_bgsave_status"]),
    field("redisPstBgsaveSecs", &[3, 5, 1, 7], Integer32, Signed, &["rdb_last_bgsave_time_sec"]).units("seconds"),
    field("redisPstBgsaveCurSecs", &[3, 5, 1, 8], Integer32, Signed, &["rdb_current_bgsave_time_sec"]).units("seconds"),
    info("redisPstRdbSaves", &[3, 5, 1, 9], Counter64, &["rdb_saves"]).units("snapshots"),
    info("redisPstRdbCow", &[3, 5, 1, 10], Gauge64, &["rdb_last_cow_size"]).units("bytes"),
    field("redisPstAofOn", &[3, 5, 1, 11], TruthValue, Truth, &["aof_enabled"]),
    field("redisPstAofRewriteNow", &[3, 5, 1, 12], TruthValue, Truth, &["aof_rewrite_in_progress", "bgrewriteaof_in_progress"]),
    field("redisPstAofRewriteSch", &[3, 5, 1, 13], TruthValue, Truth, &["aof_rewrite_scheduled"]),
    field("redisPstAofRewriteSecs", &[3, 5, 1, 14], Integer32, Signed, &["aof_last_rewrite_time_sec"]).units("seconds"),
    field("redisPstAofRewrCurSecs", &[3, 5, 1, 15], Integer32, Signed, &["aof_current_rewrite_time_sec"]).units("seconds"),
    field("redisPstAofRewrStatus", &[3, 5, 1, 16], Enum, Conversion::Enum(OK_ERR), &["aof_last_bgrewrite_status"]),
    field("redisPstAofWriteStatus", &[3, 5, 1, 17], Enum, Conversion::Enum(OK_ERR), &["aof_last_write_status"]),
    info("redisPstAofCow", &[3, 5, 1, 18], Gauge64, &["aof_last_cow_size"]).units("bytes"),
    info("redisPstAofSize", &[3, 5, 1, 19], Gauge64, &["aof_current_size"]).units("bytes"),
    info("redisPstAofBaseSize", &[3, 5, 1, 20], Gauge64, &["aof_base_size"]).units("bytes"),
    info("redisPstAofDelayedFsync", &[3, 5, 1, 21], Counter64, &["aof_delayed_fsync"]).units("fsyncs"),
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
    info("redisStRejectedConns", &[3, 6, 1, 8], Counter64, &["rejected_connections"]).units("connections"),
    info("redisStSyncFull", &[3, 6, 1, 9], Counter64, &["sync_full"]).units("synchronizations"),
    info("redisStSyncPartOk", &[3, 6, 1, 10], Counter64, &["sync_partial_ok"]).units("synchronizations"),
    info("redisStSyncPartErr", &[3, 6, 1, 11], Counter64, &["sync_partial_err"]).units("synchronizations"),
    info("redisStExpiredKeys", &[3, 6, 1, 12], Counter64, &["expired_keys"]).units("keys"),
    field("redisStExpiredStale", &[3, 6, 1, 13], Gauge32, Scaled(100), &["expired_stale_perc"]).units("percent"),
    info("redisStEvictedKeys", &[3, 6, 1, 14], Counter64, &["evicted_keys"]).units("keys"),
    info("redisStEvictedClients", &[3, 6, 1, 15], Counter64, &["evicted_clients"]).units("clients"),
    info("redisStKeyspaceHits", &[3, 6, 1, 16], Counter64, &["keyspace_hits"]).units("lookups"),
    info("redisStKeyspaceMisses", &[3, 6, 1, 17], Counter64, &["keyspace_misses"]).units("lookups"),
    info("redisStPubsubChannels", &[3, 6, 1, 18], Gauge32, &["pubsub_channels"]).units("channels"),
    info("redisStPubsubPatterns", &[3, 6, 1, 19], Gauge32, &["pubsub_patterns"]).units("patterns"),
    info("redisStPubsubShardCh", &[3, 6, 1, 20], Gauge32, &["pubsubshard_channels"]).units("channels"),
    info("redisStLatestForkUsec", &[3, 6, 1, 21], Gauge32, &["latest_fork_usec"]).units("microseconds"),
    info("redisStForks", &[3, 6, 1, 22], Counter64, &["total_forks"]).units("forks"),
    info("redisStDefragHits", &[3, 6, 1, 23], Counter64, &["active_defrag_hits"]).units("reallocations"),
    info("redisStDefragMisses", &[3, 6, 1, 24], Counter64, &["active_defrag_misses"]).units("reallocations"),
    info("redisStTrackingKeys", &[3, 6, 1, 25], Gauge64, &["tracking_total_keys"]).units("keys"),
    info("redisStErrorReplies", &[3, 6, 1, 26], Counter64, &["total_error_replies"]).units("replies"),
    info("redisStUnexpectedErrs", &[3, 6, 1, 27], Counter64, &["unexpected_error_replies"]).units("replies"),
    info("redisStReads", &[3, 6, 1, 28], Counter64, &["total_reads_processed"]).units("events"),
    info("redisStWrites", &[3, 6, 1, 29], Counter64, &["total_writes_processed"]).units("events"),
    info("redisStIoThreadReads", &[3, 6, 1, 30], Counter64, &["io_threaded_reads_processed"]).units("events"),
    info("redisStIoThreadWrites", &[3, 6, 1, 31], Counter64, &["io_threaded_writes_processed"]).units("events"),
    info("redisStExpireCycleMs", &[3, 6, 1, 32], Counter64, &["expire_cycle_cpu_milliseconds"]).units("milliseconds"),
    info("redisStEvictLimitMs", &[3, 6, 1, 33], Counter64, &["total_eviction_exceeded_time"]).units("milliseconds"),
    info("redisStAclDeniedAuth", &[3, 6, 1, 34], Counter64, &["acl_access_denied_auth"]).units("denials"),
    info("redisStAclDeniedCmd", &[3, 6, 1, 35], Counter64, &["acl_access_denied_cmd"]).units("denials"),
    info("redisStAclDeniedKey", &[3, 6, 1, 36], Counter64, &["acl_access_denied_key"]).units("denials"),
    info("redisStAclDeniedChan", &[3, 6, 1, 37], Counter64, &["acl_access_denied_channel"]).units("denials"),
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
    info("redisStExpFields", &[3, 6, 1, 48], Counter64, &["expired_fields"]).units("fields"),
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
    field("redisReplRole", &[3, 7, 1, 1], Enum, Conversion::Enum(ROLES), &["role"]),
    info("redisReplReplicas", &[3, 7, 1, 2], Gauge32, &["connected_slaves"]).units("replicas"),
    field("redisReplMasterHost", &[3, 7, 1, 3], DisplayString, Text, &["master_host"]),
    info("redisReplMasterPort", &[3, 7, 1, 4], Gauge32, &["master_port"]),
    field("redisReplLinkStatus", &[3, 7, 1, 5], Enum, Conversion::Enum(LINK), &["master_link_status"]),
    field("redisReplLastIo", &[3, 7, 1, 6], Integer32, Signed, &["master_last_io_seconds_ago"]).units("seconds"),
    field("redisReplSyncing", &[3, 7, 1, 7], TruthValue, Truth, &["master_sync_in_progress"]),
    field("redisReplDownSince", &[3, 7, 1, 8], Integer32, Signed, &["master_link_down_since_seconds"]).units("seconds"),
    info("redisReplOffset", &[3, 7, 1, 9], Counter64, &["master_repl_offset"]).units("bytes"),
    info("redisReplReplicaOffset", &[3, 7, 1, 10], Counter64, &["slave_repl_offset"]).units("bytes"),
    field("redisReplBacklogOn", &[3, 7, 1, 11], TruthValue, Truth, &["repl_backlog_active"]),
    info("redisReplBacklogSize", &[3, 7, 1, 12], Gauge64, &["repl_backlog_size"]).units("bytes"),
    info("redisReplBacklogLen", &[3, 7, 1, 13], Gauge64, &["repl_backlog_histlen"]).units("bytes"),
    field("redisReplFailover", &[3, 7, 1, 14], Enum, Conversion::Enum(FAILOVER), &["master_failover_state"]),
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
];

/// `redisCpuTable` (`redis.3.8`): CPU time in centiseconds, as Counter64.
#[rustfmt::skip]
pub const CPU_COLUMNS: &[ObjectDef] = &[
    cpu("redisCpuSystem", &[3, 8, 1, 1], &["used_cpu_sys"]).units("centiseconds"),
    cpu("redisCpuUser", &[3, 8, 1, 2], &["used_cpu_user"]).units("centiseconds"),
    cpu("redisCpuSysChildren", &[3, 8, 1, 3], &["used_cpu_sys_children"]).units("centiseconds"),
    cpu("redisCpuUserChildren", &[3, 8, 1, 4], &["used_cpu_user_children"]).units("centiseconds"),
    cpu("redisCpuSysMain", &[3, 8, 1, 5], &["used_cpu_sys_main_thread"]).units("centiseconds"),
    cpu("redisCpuUserMain", &[3, 8, 1, 6], &["used_cpu_user_main_thread"]).units("centiseconds"),
    // Valkey 9.1 (valkey-doc commands/info.md): seconds with a fraction.
    cpu("redisCpuActiveMain", &[3, 8, 1, 7], &["used_active_time_main_thread"]).units("centiseconds"),
];

const fn cpu(
    name: &'static str,
    arcs: &'static [u32],
    fields: &'static [&'static str],
) -> ObjectDef {
    field(
        name,
        arcs,
        Counter64,
        Conversion::SecondsToCentiseconds,
        fields,
    )
}

/// `redisClusterTable` (`redis.3.9`): `cluster_enabled` from INFO and the
/// fields of `CLUSTER INFO`, which the poller asks only of cluster nodes.
#[rustfmt::skip]
pub const CLUSTER_COLUMNS: &[ObjectDef] = &[
    field("redisClusterEnabled", &[3, 9, 1, 1], TruthValue, Truth, &["cluster_enabled"]),
    field("redisClusterState", &[3, 9, 1, 2], Enum, Conversion::Enum(CLUSTER_STATE), &["cluster_state"]),
    info("redisClusterSlotsAsgn", &[3, 9, 1, 3], Gauge32, &["cluster_slots_assigned"]).units("slots"),
    info("redisClusterSlotsOk", &[3, 9, 1, 4], Gauge32, &["cluster_slots_ok"]).units("slots"),
    info("redisClusterSlotsPfail", &[3, 9, 1, 5], Gauge32, &["cluster_slots_pfail"]).units("slots"),
    info("redisClusterSlotsFail", &[3, 9, 1, 6], Gauge32, &["cluster_slots_fail"]).units("slots"),
    info("redisClusterNodes", &[3, 9, 1, 7], Gauge32, &["cluster_known_nodes"]).units("nodes"),
    info("redisClusterSize", &[3, 9, 1, 8], Gauge32, &["cluster_size"]).units("nodes"),
    info("redisClusterCurEpoch", &[3, 9, 1, 9], Gauge64, &["cluster_current_epoch"]),
    info("redisClusterMyEpoch", &[3, 9, 1, 10], Gauge64, &["cluster_my_epoch"]),
    info("redisClusterMsgsSent", &[3, 9, 1, 11], Counter64, &["cluster_stats_messages_sent"]).units("messages"),
    info("redisClusterMsgsRecv", &[3, 9, 1, 12], Counter64, &["cluster_stats_messages_received"]).units("messages"),
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

/// Every per-instance group that AUGMENTS `redisInstanceEntry` and is read
/// from INFO (and CLUSTER INFO).
pub const INFO_GROUPS: &[&[ObjectDef]] = &[
    SERVER_COLUMNS,
    CLIENT_COLUMNS,
    MEMORY_COLUMNS,
    PERSISTENCE_COLUMNS,
    STATS_COLUMNS,
    REPLICATION_COLUMNS,
    CPU_COLUMNS,
    CLUSTER_COLUMNS,
    SENTINEL_COLUMNS,
    TLS_COLUMNS,
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
    column("redisSntState", &[3, 14, 1, 2], Enum, Source::SentinelMaster(SentinelField::State)),
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
    column("redisSlowlogLastTime", &[3, 16, 1, 3], Gauge64, Source::Slowlog(SlowlogField::LastTime)).units("seconds"),
    column("redisSlowlogLastUsec", &[3, 16, 1, 4], Gauge64, Source::Slowlog(SlowlogField::LastUsec)).units("microseconds"),
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

const fn puppet(
    name: &'static str,
    arcs: &'static [u32],
    syntax: Syntax,
    field: PuppetField,
) -> ObjectDef {
    ObjectDef {
        name,
        arcs,
        syntax,
        source: Source::Puppet(field),
        units: None,
    }
}

/// PUPPET-AGENT-MIB's scalars (`puppet.1.N`, served with `.0`): the last run
/// of the Puppet agent, and the agent's state now. Arcs are below the
/// Puppet root, not the Redis one.
#[rustfmt::skip]
pub const PUPPET_SCALARS: &[ObjectDef] = &[
    puppet("puppetLastRunTime", &[1, 1], Gauge32, PuppetField::LastRunTime).units("seconds"),
    puppet("puppetLastRunAge", &[1, 2], Gauge32, PuppetField::LastRunAge).units("seconds"),
    puppet("puppetLastRunStatus", &[1, 3], Enum, PuppetField::Status),
    puppet("puppetResourcesTotal", &[1, 4], Gauge32, PuppetField::ResourcesTotal).units("resources"),
    puppet("puppetResourcesChanged", &[1, 5], Gauge32, PuppetField::ResourcesChanged).units("resources"),
    puppet("puppetResourcesFailed", &[1, 6], Gauge32, PuppetField::ResourcesFailed).units("resources"),
    puppet("puppetResourcesFailRestart", &[1, 7], Gauge32, PuppetField::ResourcesFailedToRestart).units("resources"),
    puppet("puppetResourcesSkipped", &[1, 8], Gauge32, PuppetField::ResourcesSkipped).units("resources"),
    puppet("puppetResourcesOutOfSync", &[1, 9], Gauge32, PuppetField::ResourcesOutOfSync).units("resources"),
    puppet("puppetResourcesRestarted", &[1, 10], Gauge32, PuppetField::ResourcesRestarted).units("resources"),
    puppet("puppetResourcesScheduled", &[1, 11], Gauge32, PuppetField::ResourcesScheduled).units("resources"),
    puppet("puppetResourcesCorrective", &[1, 12], Gauge32, PuppetField::ResourcesCorrective).units("resources"),
    puppet("puppetEventsTotal", &[1, 13], Gauge32, PuppetField::EventsTotal).units("events"),
    puppet("puppetEventsFailure", &[1, 14], Gauge32, PuppetField::EventsFailure).units("events"),
    puppet("puppetEventsSuccess", &[1, 15], Gauge32, PuppetField::EventsSuccess).units("events"),
    puppet("puppetChangesTotal", &[1, 16], Gauge32, PuppetField::ChangesTotal).units("changes"),
    puppet("puppetTimeTotal", &[1, 17], Gauge32, PuppetField::Phase("total")).units("milliseconds"),
    puppet("puppetTimeConfigRetrieval", &[1, 18], Gauge32, PuppetField::Phase("config_retrieval")).units("milliseconds"),
    puppet("puppetTimeCatalogApply", &[1, 19], Gauge32, PuppetField::Phase("catalog_application")).units("milliseconds"),
    puppet("puppetTimeFactGeneration", &[1, 20], Gauge32, PuppetField::Phase("fact_generation")).units("milliseconds"),
    puppet("puppetTimePluginSync", &[1, 21], Gauge32, PuppetField::Phase("plugin_sync")).units("milliseconds"),
    puppet("puppetTimeTransaction", &[1, 22], Gauge32, PuppetField::Phase("transaction_evaluation")).units("milliseconds"),
    puppet("puppetTimeConvertCatalog", &[1, 23], Gauge32, PuppetField::Phase("convert_catalog")).units("milliseconds"),
    puppet("puppetTimeNodeRetrieval", &[1, 24], Gauge32, PuppetField::Phase("node_retrieval")).units("milliseconds"),
    puppet("puppetConfigVersion", &[1, 25], DisplayString, PuppetField::ConfigVersion),
    puppet("puppetVersion", &[1, 26], DisplayString, PuppetField::PuppetVersion),
    puppet("puppetCachedCatalogStatus", &[1, 27], Enum, PuppetField::CachedCatalog),
    puppet("puppetNoop", &[1, 28], TruthValue, PuppetField::Noop),
    puppet("puppetNoopPending", &[1, 29], TruthValue, PuppetField::NoopPending),
    puppet("puppetCorrectiveChange", &[1, 30], TruthValue, PuppetField::CorrectiveChange),
    puppet("puppetRunMode", &[1, 31], Enum, PuppetField::RunMode),
    puppet("puppetFirstError", &[1, 32], DisplayString, PuppetField::FirstError),
    puppet("puppetDisabled", &[1, 33], TruthValue, PuppetField::Disabled),
    puppet("puppetDisabledMessage", &[1, 34], DisplayString, PuppetField::DisabledMessage),
    puppet("puppetRunInProgress", &[1, 35], TruthValue, PuppetField::RunInProgress),
    puppet("puppetReadError", &[1, 36], DisplayString, PuppetField::ReadError),
    // Successive runs: convergence and run storms (issue 13).
    puppet("puppetRunsObserved", &[1, 45], Counter32, PuppetField::RunsObserved).units("runs"),
    puppet("puppetChangingRuns", &[1, 46], Gauge32, PuppetField::ChangingRuns).units("runs"),
    puppet("puppetRunsLastHour", &[1, 47], Gauge32, PuppetField::RunsLastHour).units("runs"),
    puppet("puppetRunInterval", &[1, 48], Gauge32, PuppetField::RunInterval).units("seconds"),
    puppet("puppetConvergeRuns", &[1, 49], Gauge32, PuppetField::ConvergeRuns).units("runs"),
    puppet("puppetLoopResources", &[1, 50], DisplayString, PuppetField::LoopResources),
    puppet("puppetLoopResourceCount", &[1, 51], Gauge32, PuppetField::LoopResourceCount).units("resources"),
];

/// `puppetResourceTable` (`puppet.2`), INDEX { puppetResourceIndex }: the
/// last run's failed, skipped and changed resources (failures first), at
/// most `MAX_PUPPET_RESOURCES` rows.
#[rustfmt::skip]
pub const PUPPET_RESOURCE_COLUMNS: &[ObjectDef] = &[
    puppet("puppetResourceType", &[2, 1, 2], DisplayString, PuppetField::ResourceType),
    puppet("puppetResourceTitle", &[2, 1, 3], DisplayString, PuppetField::ResourceTitle),
    puppet("puppetResourceState", &[2, 1, 4], Enum, PuppetField::ResourceState),
    puppet("puppetResourceMessage", &[2, 1, 5], DisplayString, PuppetField::ResourceMessage),
];

/// Rows of `puppetResourceTable` at most.
pub const MAX_PUPPET_RESOURCES: usize = 100;

/// The events log's scalars (`puppet.1.37`…, served with `.0`), served
/// when the log is followed (`events_log` of `[puppet]`).
#[rustfmt::skip]
pub const PUPPET_EVENT_SCALARS: &[ObjectDef] = &[
    puppet("puppetEventsLogStatus", &[1, 37], Enum, PuppetField::Events(PuppetEventField::LogStatus)),
    puppet("puppetEventsLogError", &[1, 38], DisplayString, PuppetField::Events(PuppetEventField::LogError)),
    puppet("puppetEventsSeen", &[1, 39], Counter32, PuppetField::Events(PuppetEventField::Seen)).units("events"),
    puppet("puppetEventsRefused", &[1, 40], Counter32, PuppetField::Events(PuppetEventField::Refused)).units("lines"),
    puppet("puppetEventsHeldBack", &[1, 41], Gauge32, PuppetField::Events(PuppetEventField::HeldBack)).units("notifications"),
    puppet("puppetEventsRunVersion", &[1, 42], DisplayString, PuppetField::Events(PuppetEventField::RunVersion)),
];

/// `puppetEventTable` (`puppet.4`), INDEX { puppetEventIndex }: the last
/// resource events of the log, numbered in the order they were read (the
/// index grows by one per event, so rows age out at the low end).
#[rustfmt::skip]
pub const PUPPET_EVENT_COLUMNS: &[ObjectDef] = &[
    puppet("puppetEventTime", &[4, 1, 2], Gauge32, PuppetField::Events(PuppetEventField::Time)).units("seconds"),
    puppet("puppetEventLevel", &[4, 1, 3], Enum, PuppetField::Events(PuppetEventField::Level)),
    puppet("puppetEventResourceType", &[4, 1, 4], DisplayString, PuppetField::Events(PuppetEventField::ResourceType)),
    puppet("puppetEventTitle", &[4, 1, 5], DisplayString, PuppetField::Events(PuppetEventField::Title)),
    puppet("puppetEventProperty", &[4, 1, 6], DisplayString, PuppetField::Events(PuppetEventField::Property)),
    puppet("puppetEventMessage", &[4, 1, 7], DisplayString, PuppetField::Events(PuppetEventField::Message)),
    puppet("puppetEventConfigVersion", &[4, 1, 8], DisplayString, PuppetField::Events(PuppetEventField::ConfigVersion)),
];

/// The notifications about the events log, `puppetEventNotificationGroup`.
pub const PUPPET_EVENT_NOTIFICATIONS: &[&str] = &[
    "puppetResourceChanged",
    "puppetResourceFailed",
    "puppetResourceEventsHeldBack",
];

enumeration! {
    /// `puppetEventsLogStatus`: whether the events log is being followed.
    PuppetEventsLogStatus {
        Following = 1 => ["following"],
        Missing = 2 => ["missing"],
        Unreadable = 3 => ["unreadable"],
    }
}

enumeration! {
    /// `puppetEventLevel`: Puppet's log levels, least severe first.
    PuppetEventLevel {
        Debug = 1 => ["debug"],
        Info = 2 => ["info"],
        Notice = 3 => ["notice"],
        Warning = 4 => ["warning"],
        Err = 5 => ["err"],
        Crit = 6 => ["crit"],
        Alert = 7 => ["alert"],
        Emerg = 8 => ["emerg"],
    }
}

/// `puppetEventsLogStatus`.
pub const EVENTS_LOG_STATUS: &[(&str, i32)] = PuppetEventsLogStatus::LABELS;
/// `puppetEventLevel`.
pub const EVENT_LEVELS: &[(&str, i32)] = PuppetEventLevel::LABELS;

enumeration! {
    /// `puppetLastRunStatus`.
    PuppetRunStatus {
        Unchanged = 1 => ["unchanged"],
        Changed = 2 => ["changed"],
        Failed = 3 => ["failed"],
        Unknown = 4 => ["unknown"],
    }
}

enumeration! {
    /// `puppetCachedCatalogStatus`.
    PuppetCachedCatalog {
        NotUsed = 1 => ["not_used"],
        ExplicitlyRequested = 2 => ["explicitly_requested"],
        OnFailure = 3 => ["on_failure"],
        Unknown = 4 => ["unknown"],
    }
}

enumeration! {
    /// `puppetRunMode`: `puppet agent` or an ad-hoc `puppet apply`.
    PuppetRunMode {
        Agent = 1 => ["agent"],
        User = 2 => ["user"],
    }
}

enumeration! {
    /// `puppetResourceState`.
    PuppetResourceState {
        Failed = 1 => ["failed"],
        FailedToRestart = 2 => ["failed_to_restart"],
        Skipped = 3 => ["skipped"],
        Changed = 4 => ["changed"],
        OutOfSync = 5 => ["out_of_sync"],
    }
}

/// `puppetLastRunStatus`.
pub const PUPPET_STATUS: &[(&str, i32)] = PuppetRunStatus::LABELS;
/// `puppetCachedCatalogStatus`.
pub const CACHED_CATALOG: &[(&str, i32)] = PuppetCachedCatalog::LABELS;
/// `puppetRunMode`.
pub const RUN_MODES: &[(&str, i32)] = PuppetRunMode::LABELS;
/// `puppetResourceState`.
pub const RESOURCE_STATES: &[(&str, i32)] = PuppetResourceState::LABELS;

/// Every object PUPPET-AGENT-MIB defines that the agent serves.
pub fn puppet_objects() -> impl Iterator<Item = &'static ObjectDef> {
    PUPPET_SCALARS
        .iter()
        .chain(PUPPET_RESOURCE_COLUMNS)
        .chain(PUPPET_EVENT_SCALARS)
        .chain(PUPPET_EVENT_COLUMNS)
}

/// The number a named value has in one of the enumerations above.
pub fn enum_number(names: &[(&str, i32)], name: &str) -> Option<i32> {
    names.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
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
    /// `redisSntState`: a watched master as its flags say.
    SentinelState {
        Ok = 1 => ["ok"],
        Sdown = 2 => ["sdown"],
        Odown = 3 => ["odown"],
    }
}

/// `redisInstanceState`.
pub const INSTANCE_STATE: &[(&str, i32)] = InstanceState::LABELS;
/// ok(1), sdown(2), odown(3) of a watched master.
pub const SENTINEL_STATE: &[(&str, i32)] = SentinelState::LABELS;

/// Every table whose rows the poller builds from INFO's row lines or from
/// the replies of optional commands.
pub const ROW_TABLES: &[&[ObjectDef]] = &[
    KEYSPACE_COLUMNS,
    REPLICA_COLUMNS,
    COMMAND_COLUMNS,
    ERROR_COLUMNS,
    SENTINEL_MASTER_COLUMNS,
    SLOWLOG_COLUMNS,
    LATENCY_COLUMNS,
    CLIENT_NAME_COLUMNS,
    CLIENT_USER_COLUMNS,
];

/// The longest name a string-indexed row may have (`redisCmdName`,
/// `redisErrPrefix`, `redisSntName`, `redisLatEvent`: `SIZE (1..64)`).
pub const MAX_NAME_INDEX_LEN: usize = 64;

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
}

impl RowIndex {
    /// The entry's own index object, if it has one.
    pub fn own_object(self) -> Option<&'static str> {
        match self {
            RowIndex::Instance => None,
            RowIndex::InstanceAndNumber { object, .. } | RowIndex::InstanceAndName { object } => {
                Some(object)
            }
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
                *instance >= 1
                    && *len as usize == bytes.len()
                    && (1..=MAX_NAME_INDEX_LEN).contains(&bytes.len())
                    && bytes.iter().all(|b| (0x20..0x7f).contains(b))
            }
            _ => false,
        }
    }
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
];

/// The table an object is a column of.
pub fn table_of(object: &ObjectDef) -> Option<&'static TableDef> {
    TABLES
        .iter()
        .find(|t| t.columns.iter().any(|c| c.name == object.name))
}

/// Every object REDIS-SERVER-MIB defines that the agent serves.
pub fn redis_objects() -> impl Iterator<Item = &'static ObjectDef> {
    LEGACY_SCALARS
        .iter()
        .chain(INSTANCE_COLUMNS)
        .chain(INFO_GROUPS.iter().flat_map(|g| g.iter()))
        .chain(ROW_TABLES.iter().flat_map(|t| t.iter()))
}

// ---------------------------------------------------------------------------
// Notifications

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

const fn redis_notification(
    name: &'static str,
    number: u32,
    objects: &'static [&'static str],
) -> NotificationDef {
    NotificationDef {
        name,
        number,
        objects,
        mib: Mib::Redis,
    }
}

const fn puppet_notification(
    name: &'static str,
    number: u32,
    objects: &'static [&'static str],
) -> NotificationDef {
    NotificationDef {
        name,
        number,
        objects,
        mib: Mib::Puppet,
    }
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

/// The longest root the configuration may give a module (`oid`, `-o`,
/// `[puppet] oid`). With it, every object's OID and the longest row suffix
/// (an instance and a name index: 2 + [`MAX_NAME_INDEX_LEN`] arcs) stay
/// within RFC 2578's 128 sub-identifiers; a unit test checks the sum over
/// the whole catalogue.
pub const MAX_ROOT_SUBIDS: usize = 48;

/// A root the configuration gave that cannot hold the module.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("{0} is too short to hold a MIB")]
    TooShort(Oid),
    #[error("{0} has more than {MAX_ROOT_SUBIDS} sub-identifiers, too long to hold a MIB's rows")]
    TooLong(Oid),
}

/// Where the MIB's objects sit. The legacy scalars hang under `legacy` (the
/// old `-o` option, `root.1` by default); everything else under `root`.
/// Built only through the constructors, which keep every root within
/// [`MAX_ROOT_SUBIDS`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    root: Oid,
    legacy: Oid,
    /// The root of PUPPET-AGENT-MIB.
    puppet: Oid,
}

fn checked_root(oid: Oid) -> Result<Oid, LayoutError> {
    if oid.len() < 2 {
        Err(LayoutError::TooShort(oid))
    } else if oid.len() > MAX_ROOT_SUBIDS {
        Err(LayoutError::TooLong(oid))
    } else {
        Ok(oid)
    }
}

impl Layout {
    /// Layout from the legacy branch OID, as the old `-o` gave it: the rest
    /// of the module lives beside it, under its parent.
    pub fn from_legacy_oid(legacy: Oid) -> Result<Layout, LayoutError> {
        let legacy = checked_root(legacy)?;
        let root = legacy.parent().unwrap_or_else(Oid::null);
        Ok(Layout {
            root,
            legacy,
            puppet: default_puppet_root(),
        })
    }

    /// This layout with PUPPET-AGENT-MIB under `puppet`.
    pub fn with_puppet_root(self, puppet: Oid) -> Result<Layout, LayoutError> {
        Ok(Layout {
            puppet: checked_root(puppet)?,
            ..self
        })
    }

    pub fn default_layout() -> Layout {
        let legacy = DEFAULT_REDIS_ROOT
            .parse::<Oid>()
            .and_then(|root| root.child(&[LEGACY_BRANCH]))
            .expect("the default root is a valid OID");
        Layout::from_legacy_oid(legacy).expect("the default root is short enough")
    }

    /// The root of REDIS-SERVER-MIB (the legacy branch's parent).
    pub fn root(&self) -> &Oid {
        &self.root
    }

    /// The branch of the 17 legacy scalars.
    pub fn legacy(&self) -> &Oid {
        &self.legacy
    }

    /// The root of PUPPET-AGENT-MIB.
    pub fn puppet(&self) -> &Oid {
        &self.puppet
    }

    /// The OID of an object (without instance suffix).
    pub fn object_oid(&self, def: &ObjectDef) -> Oid {
        let (base, arcs) = if let Source::Puppet(_) = def.source {
            (&self.puppet, def.arcs)
        } else {
            match def.arcs.split_first() {
                Some((&LEGACY_BRANCH, rest)) => (&self.legacy, rest),
                _ => (&self.root, def.arcs),
            }
        };
        base.child(arcs)
            .expect("roots are at most MAX_ROOT_SUBIDS long, which leaves room for every object")
    }

    /// The OID of a row of an object: its OID and `suffix`, or `None` when
    /// that would be longer than an OID may be (a suffix the catalogue's
    /// row shapes never make).
    pub fn row_oid(&self, def: &ObjectDef, suffix: &[u32]) -> Option<Oid> {
        self.object_oid(def).child(suffix).ok()
    }

    /// The OID a notification is sent as (`snmpTrapOID.0`'s value): its
    /// number under its module's notifications branch.
    pub fn notification_oid(&self, def: &NotificationDef) -> Oid {
        let root = match def.mib {
            Mib::Redis => &self.root,
            Mib::Puppet => &self.puppet,
        };
        root.child(&[NOTIFICATIONS_BRANCH, def.number])
            .expect("roots are at most MAX_ROOT_SUBIDS long")
    }

    /// OIDs of every served object, for the snapshot's noSuchObject test.
    pub fn object_oids(&self) -> Vec<Oid> {
        redis_objects()
            .chain(puppet_objects())
            .map(|d| self.object_oid(d))
            .collect()
    }

    /// The subtrees to register with the master (the Puppet one only when
    /// Puppet is watched).
    pub fn subtrees(&self, with_puppet: bool) -> Vec<Oid> {
        let mut subtrees = vec![self.root.clone()];
        if !self.legacy.starts_with(&self.root) {
            subtrees.push(self.legacy.clone());
        }
        if with_puppet {
            subtrees.push(self.puppet.clone());
        }
        subtrees
    }
}

fn default_puppet_root() -> Oid {
    DEFAULT_PUPPET_ROOT
        .parse()
        .expect("the default Puppet root is a valid OID")
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

    /// The unit a source implies, where it implies one: a conversion's
    /// own, a field of the agent's whose meaning fixes it, or an INFO
    /// field's name (`…_bytes`, `…_usec`, `used_memory…`).
    fn implied_units(def: &ObjectDef) -> Option<&'static str> {
        match def.source {
            Source::Info {
                conversion: Conversion::SecondsToCentiseconds,
                ..
            } => Some("centiseconds"),
            Source::Info {
                conversion: Conversion::AgeOf,
                ..
            } => Some("seconds"),
            Source::Info {
                conversion: Conversion::Unsigned | Conversion::Signed,
                fields,
            } => {
                let field = fields.first()?;
                if field.ends_with("_bytes") || field.starts_with("used_memory") {
                    Some("bytes")
                } else if field.ends_with("_usec") {
                    Some("microseconds")
                } else if field.ends_with("_milliseconds") {
                    Some("milliseconds")
                } else if field.ends_with("_seconds")
                    || field.ends_with("_ago")
                    || (field.ends_with("_sec") && !field.ends_with("_per_sec"))
                {
                    Some("seconds")
                } else {
                    None
                }
            }
            Source::Status(StatusField::DataAge) => Some("seconds"),
            Source::Status(StatusField::PollDuration) => Some("milliseconds"),
            Source::Keyspace(KeyspaceField::AvgTtl) => Some("milliseconds"),
            Source::Replica(ReplicaField::LagSeconds) => Some("seconds"),
            Source::Replica(ReplicaField::Offset | ReplicaField::LagBytes) => Some("bytes"),
            Source::Command(
                CommandField::Usec
                | CommandField::UsecPerCall
                | CommandField::P50
                | CommandField::P99
                | CommandField::P999,
            ) => Some("microseconds"),
            // UNIX times, served as seconds.
            Source::Slowlog(SlowlogField::LastTime) | Source::Latency(LatencyField::LastTime) => {
                Some("seconds")
            }
            Source::Slowlog(SlowlogField::LastUsec) => Some("microseconds"),
            Source::Latency(LatencyField::LastMs | LatencyField::MaxMs) => Some("milliseconds"),
            Source::Puppet(PuppetField::LastRunTime | PuppetField::LastRunAge) => Some("seconds"),
            Source::Puppet(PuppetField::Phase(_)) => Some("milliseconds"),
            _ => None,
        }
    }

    #[test]
    fn units_are_what_the_source_implies_and_only_on_numbers() {
        let mut problems = Vec::new();
        for def in redis_objects().chain(puppet_objects()) {
            if let Some(implied) = implied_units(def) {
                if def.units != Some(implied) {
                    problems.push(format!(
                        "{}: units {:?}, the source says {implied:?}",
                        def.name, def.units
                    ));
                }
            }
            let number = matches!(
                def.syntax,
                Syntax::Counter32
                    | Syntax::Counter64
                    | Syntax::Gauge32
                    | Syntax::Gauge64
                    | Syntax::Integer32
                    | Syntax::TimeTicks
            );
            if def.units.is_some() && !number {
                problems.push(format!("{}: units on a {:?}", def.name, def.syntax));
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn the_longest_root_leaves_room_for_every_row() {
        // The longest suffix a row shape makes: an instance and a name
        // index (its length, then one arc per byte).
        let longest_suffix = 2 + MAX_NAME_INDEX_LEN;
        let long_root = Oid::new(vec![9; MAX_ROOT_SUBIDS]).unwrap();
        let layout = Layout::from_legacy_oid(long_root.clone())
            .and_then(|l| l.with_puppet_root(long_root.clone()))
            .unwrap();
        for def in redis_objects().chain(puppet_objects()) {
            let oid = layout.object_oid(def);
            assert!(
                oid.len() + longest_suffix <= crate::oid::MAX_SUBIDS,
                "{}",
                def.name
            );
            assert!(layout.row_oid(def, &[1; 2 + MAX_NAME_INDEX_LEN]).is_some());
        }
        let too_long = Oid::new(vec![9; MAX_ROOT_SUBIDS + 1]).unwrap();
        assert_eq!(
            Layout::from_legacy_oid(too_long.clone()),
            Err(LayoutError::TooLong(too_long.clone()))
        );
        assert!(Layout::default_layout().with_puppet_root(too_long).is_err());
        let one: Oid = "1".parse().unwrap();
        assert_eq!(
            Layout::from_legacy_oid(one.clone()),
            Err(LayoutError::TooShort(one))
        );
    }

    #[test]
    fn no_object_oid_prefixes_another() {
        let mut oids = Layout::default_layout().object_oids();
        oids.sort();
        for w in oids.windows(2) {
            assert!(!w[1].starts_with(&w[0]), "{:?} prefixes {:?}", w[0], w[1]);
        }
    }

    #[test]
    fn enumerations_read_every_label_and_nothing_else() {
        for (label, number) in Role::LABELS {
            assert_eq!(Role::from_label(label).map(Role::number), Some(*number));
        }
        assert_eq!(Role::from_label("slave"), Some(Role::Replica));
        assert_eq!(Role::from_label("replica"), Some(Role::Replica));
        assert_eq!(Role::from_label("leader"), None);
        assert_eq!(enum_number(ROLES, "leader"), None);
        assert_eq!(InstanceState::Loading.number(), 3);
        assert_eq!(enum_number(INSTANCE_STATE, "down"), Some(2));
        for (label, number) in PuppetResourceState::LABELS {
            let state = PuppetResourceState::from_label(label).unwrap();
            assert_eq!(state.number(), *number);
        }
    }

    #[test]
    fn every_column_is_in_exactly_one_table_and_every_table_in_the_lists() {
        let tabled: Vec<&str> = TABLES
            .iter()
            .flat_map(|t| t.columns.iter().map(|c| c.name))
            .collect();
        let columns: Vec<&str> = redis_objects()
            .filter(|o| !LEGACY_SCALARS.iter().any(|l| l.name == o.name))
            .map(|o| o.name)
            .collect();
        assert_eq!(tabled, {
            let mut sorted_in_table_order = Vec::new();
            for t in TABLES {
                for c in t.columns {
                    assert!(columns.contains(&c.name), "{} is not served", c.name);
                    sorted_in_table_order.push(c.name);
                }
            }
            sorted_in_table_order
        });
        assert_eq!(
            tabled.len(),
            columns.len(),
            "a served column is in no table"
        );
        for t in TABLES {
            let entry = &t.columns[0].arcs[..t.columns[0].arcs.len() - 1];
            for c in t.columns {
                assert!(
                    c.arcs.starts_with(entry) && c.arcs.len() == entry.len() + 1,
                    "{}",
                    c.name
                );
            }
            assert_eq!(
                t.augments.is_some(),
                t.index == RowIndex::Instance && t.table != "redisInstanceTable"
            );
        }
    }

    #[test]
    fn row_indexes_are_built_and_recognised_alike() {
        let name = RowIndex::InstanceAndName {
            object: "redisCmdName",
        };
        let suffix = name_index(2, "get").unwrap();
        assert_eq!(suffix, [2, 3, 103, 101, 116]);
        assert!(name.fits(&suffix));
        assert!(!name.fits(&[2, 4, 103, 101, 116]));
        assert_eq!(name_index(1, ""), None);
        assert_eq!(name_index(1, &"x".repeat(MAX_NAME_INDEX_LEN + 1)), None);
        assert_eq!(name_index(1, "caf\u{e9}"), None);
        let db = RowIndex::InstanceAndNumber {
            object: "redisKsDb",
            min: 0,
        };
        assert!(db.fits(&[1, 0]) && !db.fits(&[0, 0]) && !db.fits(&[1]));
        let slot = RowIndex::InstanceAndNumber {
            object: "redisRpSlot",
            min: 1,
        };
        assert!(!slot.fits(&[1, 0]));
        assert!(RowIndex::Instance.fits(&[3]) && !RowIndex::Instance.fits(&[3, 1]));
    }

    #[test]
    fn instance_columns_live_in_the_entry() {
        for o in INSTANCE_COLUMNS {
            assert!(o.arcs.starts_with(INSTANCE_ENTRY), "{}", o.name);
            assert_eq!(o.arcs.len(), INSTANCE_ENTRY.len() + 1, "{}", o.name);
        }
    }
}
