//! The one table of what the agent serves.
//!
//! Every object of REDIS-SERVER-MIB and PUPPET-AGENT-MIB that the agent
//! answers for is one row here: its MIB name, its OID below the module root,
//! its SMI syntax and where its value comes from. The sources build
//! snapshots from these rows, and the tests check the MIB modules
//! (`tests/mib_modules.rs` for both, `tests/mib_table.rs` and
//! `tests/puppet_mib.rs` for each one's own) and the OpenNMS files
//! (`tests/opennms.rs`) against them, so none can drift apart. Adding a
//! Redis field is adding a row.

//!
//! The catalogue is split by what each part declares: the objects of
//! REDIS-SERVER-MIB (`redis_server`) and of PUPPET-AGENT-MIB
//! (`puppet_agent`) with their enumerations, the tables and their
//! indexes (`tables`), each module as a whole (`module`), the one
//! writer that puts a row's values at their OIDs (`rows`), the
//! notifications (`notifications`), what OpenNMS collects (`opennms`)
//! and where a module's objects sit (`layout`). Everything is
//! re-exported here, so a reader names `metrics::X` whatever file
//! declares it.

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
/// the object is absent, never a made-up value. The sources' parsers
/// produce these enums themselves (one enum per enumeration, no twin to
/// map by hand), so the variants are ordered as the numbers are.
macro_rules! enumeration {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $number:literal => [$($label:literal),+],)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
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

            /// Its first label: the word the source writes for it, and the
            /// MIB's name where the two agree.
            pub const fn label(self) -> &'static str {
                match self {
                    $(Self::$variant => [$($label),+][0],)+
                }
            }
        }
    };
}

// The parts of the catalogue come after the macro, which they use.
mod layout;
mod module;
mod notifications;
mod opennms;
mod prometheus;
mod puppet_agent;
mod redis_server;
mod rows;
mod tables;

pub use layout::*;
pub use module::*;
pub use notifications::*;
pub use opennms::*;
pub use prometheus::*;
pub use puppet_agent::*;
pub use redis_server::*;
pub use rows::*;
pub use tables::*;

/// Values the poller knows about an instance itself, not read from INFO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusField {
    Name,
    Address,
    /// up(1) / down(2) / loading(3): [`InstanceState`].
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
    /// A column of `redisKeyTable`: a key an operator names (`check_keys`).
    Key(KeyField),
    /// A column of `redisKeyStreamGroupTable`: a consumer group of such a
    /// key that is a stream (XINFO GROUPS, XINFO CONSUMERS).
    StreamGroup(StreamGroupField),
    /// A column of `redisKeyCheckTable`: how the last key check went.
    KeyCheck(KeyCheckField),
    /// A column of `redisBigKeyTable`: the big-key sampler (`big_keys`).
    BigKey(BigKeyField),
    /// A column of `redisHotKeyTable`: HOTKEYS GET (`hot_keys`).
    HotKey(HotKeyField),
    /// An object of PUPPET-AGENT-MIB (below the Puppet root), from the
    /// agent's run summary, run report and lock files.
    Puppet(PuppetField),
    /// A column of `redisAlarmTable`: the agent's own thresholds that are
    /// crossed now (`crate::alarms`), not a value read from Redis.
    Alarm(AlarmField),
    /// What the row writer made of a poll's tables ([`write_rows`]).
    Rows(RowsField),
    /// A column of `redisKeysizesTable`, from Redis 8's Keysizes section
    /// (`db<N>_distrib_<type>_<sizes|items>` lines).
    Keysizes(KeysizesField),
    /// A column of `redisThreadTable`, from the `io_thread_<N>` lines.
    Thread(ThreadField),
    /// A column of `redisModuleTable`, from the `module` lines.
    Module(ModuleField),
    /// A column of `redisSlowCommandTable`: a slow log entry the agent
    /// saw arrive (SLOWLOG GET, `crate::redis::slowlog`).
    SlowCommand(SlowCommandField),
    /// A column of `redisSentinelEventTable`: what a sentinel's masters
    /// did between two polls, as the agent saw it (`crate::redis::failover`).
    SentinelEvent(SentinelEventField),
    /// A column of `redisAclRefusalTable`: ACL LOG aggregated
    /// (`crate::redis::acl_log`).
    Acl(AclField),
}

/// A column of `redisSlowCommandTable`, one row per slow log entry seen
/// arriving (the newest [`SLOW_COMMAND_ROWS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlowCommandField {
    /// The entry's id in the server's slow log.
    Id,
    /// When the server logged it, UNIX seconds.
    Time,
    /// How long the command ran, µs.
    Duration,
    /// The command's name (its first argument, lower-cased).
    Command,
    /// The client's address (`ip:port`, or the socket path).
    ClientAddress,
    /// The client's name (CLIENT SETNAME), empty when it has none.
    ClientName,
    /// The command's arguments, only where `slow_command_args` is on.
    Arguments,
    /// Entries logged before this one since the last read that the agent
    /// did not read (more arrived than one read takes, or the server
    /// dropped them first).
    Skipped,
}

/// A column of `redisSentinelEventTable`, one row per event the agent saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SentinelEventField {
    /// When the agent saw it, in UNIX seconds.
    Time,
    /// [`SentinelEventKind`].
    Kind,
    /// The master's name in the sentinel's configuration.
    Master,
    /// The master's address after the event.
    Address,
    Port,
    /// Its address before (a failover), or as last seen.
    OldAddress,
    OldPort,
    /// Its configuration epoch after the event.
    Epoch,
    /// Its configuration epoch before.
    OldEpoch,
    /// What SENTINEL CKQUORUM answered.
    Quorum,
}

/// What the row writer tells of the rows of one poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowsField {
    /// Rows of the tables read from INFO (keyspace, replicas, commands,
    /// errors) that the tables' caps, or a name no index can hold, left
    /// out: a hostile or broken server's thousands of lines show as a
    /// number, not as rows that slow every walk.
    LeftOut,
}

/// A column of `redisAlarmTable`, one row per active alarm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlarmField {
    /// The alarm's name in the configuration (`[[alarm]] name`).
    Name,
    /// The OID of the value it watches, with the value's row index.
    Object,
    /// The MIB name of the object it watches.
    ObjectName,
    /// The value at the last poll, in decimal.
    Value,
    /// The value that raised it, in decimal.
    RaisedValue,
    /// The configured trigger, in decimal.
    Trigger,
    /// The configured rearm value, in decimal.
    Rearm,
    /// Seconds since it was raised.
    Age,
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
    /// `transaction_uuid` of the last run's report: the run's own id.
    TransactionUuid,
    /// `job_id` of the last run's report: the id a `--job-id` gave it
    /// (a kick's), empty for a run nobody gave one.
    JobId,
    /// The host's role: the trusted fact `pp_role` of the agent's
    /// certificate, else the configured external fact (`role_fact`),
    /// empty without either.
    Role,
    /// Columns of `puppetFactTable`: an allowlisted fact's name and value.
    FactName,
    FactValue,
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
    /// The columns of `puppetCertificateTable` (issue 25).
    Certificate(PuppetCertificateField),
}

/// What a column of `puppetCertificateTable` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PuppetCertificateField {
    /// agent(1), ca(2), crl(3): [`PuppetCertificateKind`].
    Kind,
    /// The file read.
    Path,
    /// [`PuppetCertificateState`].
    State,
    /// notAfter (a CRL's nextUpdate), UNIX seconds.
    NotAfter,
    /// Seconds from the reading to NotAfter; negative once past.
    SecondsLeft,
    /// The certificate's subject (a CRL's issuer).
    Subject,
    /// Why the file could not be used, empty when it could.
    Error,
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
    /// ([`row_key`]): unique among all the rows of the
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
    /// ([`row_key`]): unique among all the rows of the
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
    /// ([`row_key`]): unique among all the rows of the
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
    /// ([`row_key`]): unique among all the rows of the
    /// table, and fit to be a file name. Managers store rows under it.
    Key,
    Count,
    OldestAge,
    MaxIdle,
    MaxOutputMem,
    MaxTotalMem,
    Blocked,
}

/// A column of `redisKeyTable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyField {
    /// The key's name, or its alias (`key_names = "alias"`): the row's
    /// index as a readable column.
    Label,
    /// The instance's name and the label, escaped and joined by `.`
    /// ([`row_key`]), for managers to store rows under.
    Key,
    /// [`KeyType`], from TYPE.
    Type,
    /// STRLEN, LLEN, SCARD, ZCARD, HLEN or XLEN, as the type has it.
    Length,
    /// TTL in seconds; -1 when the key does not expire.
    Ttl,
    /// MEMORY USAGE, in bytes (`check_keys_memory`).
    Memory,
    /// The `check_keys` entry that names or matched it (its alias too).
    Entry,
    /// Why a command about the key failed (NOPERM…), empty when none did.
    Error,
}

/// A column of `redisKeyStreamGroupTable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamGroupField {
    /// The group's name, the row's last index as a readable column.
    Label,
    /// The instance's name, the key's label and the group's, escaped and
    /// joined by `.`.
    Key,
    Consumers,
    Pending,
    /// Entries not yet delivered to the group (Redis 7.0+).
    Lag,
    LastDeliveredId,
    /// The largest `idle` of its consumers (XINFO CONSUMERS), ms.
    MaxIdle,
}

/// A column of `redisKeyCheckTable`, one row per instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyCheckField {
    /// Rows of `redisKeyTable` the instance has.
    Keys,
    /// Keys the patterns matched but the row cap (or a name no index can
    /// hold) left out.
    KeysLeftOut,
    /// Consumer groups the per-stream cap left out.
    GroupsLeftOut,
    /// Whether every pattern's SCAN finished its sweep of the keyspace;
    /// false while one goes on at the next check (its budget ran out).
    ScanComplete,
    /// SCAN calls the last check made.
    ScanCalls,
    /// Milliseconds the last check took.
    CheckTime,
    /// Why the last check failed in part (NOPERM on SCAN…), empty when not.
    LastError,
}

/// A column of `redisBigKeyTable`: one of the largest keys the big-key
/// sampler has seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BigKeyField {
    /// The name (escaped) or its alias, as `key_names` says.
    Name,
    /// [`KeyType`], from TYPE.
    Type,
    /// MEMORY USAGE … SAMPLES, in bytes.
    Bytes,
    /// The database it is in.
    Database,
    /// UNIX time of its measurement.
    Seen,
}

/// A column of `redisHotKeyTable`: a key HOTKEYS GET reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HotKeyField {
    /// The name (escaped) or its alias, as `key_names` says.
    Name,
    /// Valkey's `db`.
    Database,
    /// Valkey's `qps`.
    Qps,
    /// Redis 8.6's `by-cpu-time-us`.
    CpuUsec,
    /// Redis 8.6's `by-net-bytes`.
    NetBytes,
    /// OBJECT FREQ of a key the agent sampled (the LFU fallback).
    LfuCounter,
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
    /// ([`row_key`]): unique among all the rows of the
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

/// A column of `redisKeysizesTable`: one bucket of one type's histogram
/// of key sizes in one database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeysizesField {
    /// How many keys the bucket holds.
    Keys,
    /// The smallest size the bucket holds (0, or a power of two).
    MinSize,
    /// The bucket as Redis writes it (`4M`).
    Label,
}

/// A column of `redisThreadTable`: one `io_thread_<N>` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadField {
    Clients,
    Reads,
    Writes,
}

/// A column of `redisModuleTable`: one `module` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModuleField {
    /// The module's name, the row's index as a readable column.
    Name,
    /// The instance's name and the module's, escaped and joined by `.`
    /// ([`row_key`]), for managers to store rows under.
    Key,
    Version,
    Api,
    Filters,
    UsedBy,
    Using,
    Options,
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
    /// The OpenNMS alias (RRD file and data source name), where the name
    /// does not fit in its 19 characters or an older alias is kept: set
    /// once, as users' RRD files are named after it. See [`Self::opennms_alias`].
    pub alias: Option<&'static str>,
    /// The enumeration of an `INTEGER { name(n), … }` object: every label
    /// with its number (an `enumeration!`'s `LABELS`). Set for every
    /// object of [`Syntax::Enum`] and none other (a unit test checks it),
    /// so whoever needs an object's named numbers (the INFO reader, the
    /// MIB and OpenNMS tests) reads them here rather than linking them
    /// again.
    pub enumeration: Option<&'static [(&'static str, i32)]>,
}

impl ObjectDef {
    /// This object with a UNITS clause.
    const fn units(self, units: &'static str) -> ObjectDef {
        ObjectDef {
            units: Some(units),
            ..self
        }
    }

    /// This object with its enumeration (an `enumeration!`'s `LABELS`).
    const fn enumerated(self, labels: &'static [(&'static str, i32)]) -> ObjectDef {
        ObjectDef {
            enumeration: Some(labels),
            ..self
        }
    }

    /// This object with an OpenNMS alias other than its name.
    const fn alias(self, alias: &'static str) -> ObjectDef {
        ObjectDef {
            alias: Some(alias),
            ..self
        }
    }

    /// What OpenNMS collects this object as: its alias, or its name.
    pub fn opennms_alias(&self) -> &'static str {
        self.alias.unwrap_or(self.name)
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
        alias: None,
        // An INFO word read through an enumeration is that enumeration's
        // object: stated once, in the conversion.
        enumeration: match conversion {
            Conversion::Enum(labels) => Some(labels),
            _ => None,
        },
    }
}

/// Seconds with a fraction, served in centiseconds (UNITS "centiseconds"):
/// Counter32 for the legacy scalars, Counter64 in the tables.
const fn centiseconds(
    name: &'static str,
    arcs: &'static [u32],
    syntax: Syntax,
    fields: &'static [&'static str],
) -> ObjectDef {
    field(
        name,
        arcs,
        syntax,
        Conversion::SecondsToCentiseconds,
        fields,
    )
    .units("centiseconds")
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
        alias: None,
        enumeration: None,
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
        alias: None,
        enumeration: None,
    }
}

/// The number a named value has in one of the enumerations above.
pub fn enum_number(names: &[(&str, i32)], name: &str) -> Option<i32> {
    names.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

/// A column of `redisAclRefusalTable`: one row per reason, user and
/// client address of ACL LOG.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AclField {
    /// [`AclReason`]: why the server refused.
    Reason,
    /// The user (for a failed AUTH, the name the client gave).
    User,
    /// The client's host (`addr=` without its port).
    Address,
    /// The refusals the log holds for the row (its entries' counts).
    Count,
    /// When the newest of them was, UNIX seconds.
    LastSeen,
    /// The instance's name and the row's number, escaped and joined by
    /// `.` ([`row_key`]), for managers to store rows under.
    Key,
}

#[cfg(test)]
mod tests;
