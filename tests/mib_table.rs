//! What is REDIS-SERVER-MIB's own, checked against the agent's catalogue
//! (`redis_snmp::metrics`). The rules that hold for both modules (every
//! served object at its OID with its type, every table's INDEX, the
//! notifications and their OBJECTS, names, groups, smilint, net-snmp and
//! mib-rs) are tests/mib_modules.rs's; this program keeps what only this
//! module has:
//!
//! - the catalogue's INFO conversions produce the syntax their row declares;
//! - every DESCRIPTION names where its value comes from (INFO fields,
//!   commands, reply keys) and, where Redis says -1 for none, says so;
//! - the OIDs the agent really builds from captured INFO (and from SENTINEL
//!   MASTERS, LATENCY LATEST, CLIENT LIST, key checks, alarms) are instances
//!   of the module's objects that decode with its INDEXes, for the instance
//!   they were built for, with name columns carrying their row's name;
//! - every notification's DESCRIPTION says what sends it and how to turn
//!   it off;
//! - the layout, the legacy definitions (groups, compliance statements,
//!   `REDISUnsigned64`, revisions) and the scaled-value conventions.
//!
//! The tools come from the Debian packages smitools and snmp; the SMIv2 base
//! modules from `scripts/base-mibs.sh`. See `tests/mibtool/mod.rs`.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

mod mibtool;

use mibtool::modules::{self, ModuleSpec};
use mibtool::rules::{instance_of, mentions, Instance};
use mibtool::{repo_dir, Mib};
use redis_snmp::alarms::{AlarmSpec, Alarms, Direction};
use redis_snmp::metrics::{
    redis_objects, table_of, AclField, BigKeyField, ClientField, Column, CommandField, Conversion,
    ErrorField, HotKeyField, KeyCheckField, KeyField, KeysizesField, KeyspaceField, LatencyField,
    Layout, ModuleField, NotificationDef, ObjectDef, ReplicaField, SentinelEventField,
    SentinelField, SlowCommandField, SlowlogField, Source, StreamGroupField, ThreadField,
    INSTANCE_ENTRY, LEGACY_SCALARS, MAX_NAME_INDEX_LEN, MAX_SECOND_NAME_INDEX_LEN,
    REDIS_NOTIFICATIONS,
};
use redis_snmp::oid::Oid;
use redis_snmp::redis::acl_log::AclReport;
use redis_snmp::redis::info::Info;
use redis_snmp::redis::readings::{instance_part, status_part, Extras, InstanceStatus};
use redis_snmp::redis::replies::{sentinel_masters, LatencyEvent, SlowlogEntry, WatchedMaster};
use redis_snmp::redis::slowlog::SlowRow;
use redis_snmp::smi::{Syntax, Value};
use std::collections::BTreeSet;

/// The module under test.
const MODULE: &str = "REDIS-SERVER-MIB";

/// REDIS-SERVER-MIB as libsmi reads it, dumped once for all tests.
fn mib() -> &'static Mib {
    Mib::load(MODULE)
}

fn spec() -> ModuleSpec {
    modules::redis()
}

fn root() -> Oid {
    spec().root
}

fn is_legacy(o: &ObjectDef) -> bool {
    LEGACY_SCALARS.iter().any(|l| l.name == o.name)
}

// ---------------------------------------------------------------------------
// The catalogue's INFO conversions.

/// the catalogue itself: each conversion produces the syntax its row declares,
/// so that the MIB type checked above is what goes on the wire.
#[test]
fn conversions_fit_the_declared_syntax() {
    let mut problems = Vec::new();
    for o in redis_objects() {
        let Source::Info { conversion, fields } = o.source else {
            continue;
        };
        if fields.is_empty() {
            problems.push(format!("{}: no INFO field", o.name));
        }
        let ok = match conversion {
            Conversion::Unsigned => matches!(
                o.syntax,
                Syntax::Gauge32 | Syntax::Counter32 | Syntax::Counter64 | Syntax::Gauge64
            ),
            Conversion::Signed => o.syntax == Syntax::Integer32,
            Conversion::Text => o.syntax == Syntax::DisplayString,
            Conversion::Truth => o.syntax == Syntax::TruthValue,
            Conversion::Enum(_) => o.syntax == Syntax::Enum,
            Conversion::Scaled(_) | Conversion::AgeOf | Conversion::PercentOf(_) => {
                o.syntax == Syntax::Gauge32
            }
            Conversion::SecondsToCentiseconds => {
                matches!(o.syntax, Syntax::Counter32 | Syntax::Counter64)
            }
        };
        if !ok {
            problems.push(format!(
                "{}: {conversion:?} does not produce {:?}",
                o.name, o.syntax
            ));
        }
    }
    // A TruthValue or Enum comes only from a conversion that makes one.
    for o in redis_objects() {
        let from_truth = matches!(
            o.source,
            Source::Info {
                conversion: Conversion::Truth,
                ..
            }
        ) || KeyCheckField::of(o) == Some(KeyCheckField::ScanComplete);
        if o.syntax == Syntax::TruthValue && !from_truth {
            problems.push(format!("{}: a TruthValue not made by Truth", o.name));
        }
        if o.syntax == Syntax::Enum && o.enumeration.is_none() {
            problems.push(format!("{}: an Enum without a table of numbers", o.name));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------
// Descriptions.

/// Where an object's value comes from, as its DESCRIPTION must say: its INFO
/// fields (every alias); for the tables of INFO's row lines the line and the
/// key within it; for the other commands the command, and the field of its
/// reply where the reply names its fields.
fn source_names(o: &ObjectDef) -> Vec<&'static str> {
    let table = info_row_sources(o)
        .or_else(|| reply_sources(o))
        .or_else(|| key_sources(o))
        .or_else(|| event_sources(o));
    if let Some(names) = table {
        return names;
    }
    match o.source {
        Source::Info { fields, .. } => fields.to_vec(),
        Source::Status(_) => Vec::new(),
        // The row lines whose rows the caps leave out, counted.
        Source::Rows(_) => vec![
            "db<N>",
            "slave<N>",
            "cmdstat_<name>",
            "errorstat_<PREFIX>",
            "redisKeysizesTable",
            "io_thread_<N>",
            "module",
        ],
        // PUPPET-AGENT-MIB's objects are tests/puppet_mib.rs's business.
        Source::Puppet(_) => Vec::new(),
        Source::Column(_) => panic!("{}: a column of a table this test does not know", o.name),
    }
}

/// The tables of INFO's row lines: the line and the key within it.
fn info_row_sources(o: &ObjectDef) -> Option<Vec<&'static str>> {
    if let Some(field) = KeyspaceField::of(o) {
        return Some(vec![
            "db<N>",
            match field {
                KeyspaceField::Keys => "keys",
                KeyspaceField::Expires => "expires",
                KeyspaceField::AvgTtl => "avg_ttl",
                KeyspaceField::Subexpiry => "subexpiry",
            },
        ]);
    }
    if let Some(field) = ReplicaField::of(o) {
        return Some(match field {
            ReplicaField::Address => vec!["slave<N>", "ip"],
            ReplicaField::Port => vec!["slave<N>", "port"],
            ReplicaField::State => vec!["slave<N>", "state"],
            ReplicaField::Offset => vec!["slave<N>", "offset"],
            ReplicaField::LagSeconds => vec!["slave<N>", "lag"],
            ReplicaField::LagBytes => vec!["slave<N>", "offset", "master_repl_offset"],
            ReplicaField::Kind => vec!["slave<N>", "type"],
        });
    }
    if let Some(field) = CommandField::of(o) {
        return Some({
            let cmdstat = "cmdstat_<name>";
            let latency = "latency_percentiles_usec_<name>";
            match field {
                // The name columns repeat the index: they name it too.
                CommandField::Name => vec![cmdstat, "redisCmdName"],
                CommandField::Key => vec!["redisInstanceName", "redisCmdLabel"],
                CommandField::Calls => vec![cmdstat, "calls"],
                CommandField::Usec => vec![cmdstat, "usec"],
                CommandField::UsecPerCall => vec![cmdstat, "usec_per_call"],
                CommandField::Rejected => vec![cmdstat, "rejected_calls"],
                CommandField::Failed => vec![cmdstat, "failed_calls"],
                CommandField::P50 => vec![latency, "p50"],
                CommandField::P99 => vec![latency, "p99"],
                CommandField::P999 => vec![latency, "p99.9"],
            }
        });
    }
    if let Some(field) = ErrorField::of(o) {
        return Some(match field {
            ErrorField::Name => vec!["errorstat_<PREFIX>", "redisErrPrefix"],
            ErrorField::Key => vec!["redisInstanceName", "redisErrLabel"],
            ErrorField::Count => vec!["errorstat_<PREFIX>", "count"],
        });
    }
    // Redis 8's tables: the line, and the field of it.
    if let Some(field) = KeysizesField::of(o) {
        return Some(match field {
            KeysizesField::Keys => vec!["="],
            KeysizesField::MinSize => vec!["redisKzBucket"],
            KeysizesField::Label => vec!["="],
        });
    }
    if let Some(field) = ThreadField::of(o) {
        return Some(match field {
            ThreadField::Clients => vec!["clients"],
            ThreadField::Reads => vec!["reads"],
            ThreadField::Writes => vec!["writes"],
        });
    }
    if let Some(field) = ModuleField::of(o) {
        return Some(match field {
            ModuleField::Name => vec!["redisModName"],
            ModuleField::Key => vec!["redisInstanceName", "redisModLabel"],
            ModuleField::Version => vec!["ver"],
            ModuleField::Api => vec!["api"],
            ModuleField::Filters => vec!["filters"],
            ModuleField::UsedBy => vec!["usedby"],
            ModuleField::Using => vec!["using"],
            ModuleField::Options => vec!["options"],
        });
    }
    None
}

/// The tables of other commands' replies: the command, and the field of
/// its reply where the reply names its fields.
fn reply_sources(o: &ObjectDef) -> Option<Vec<&'static str>> {
    if let Some(field) = SentinelField::of(o) {
        return Some({
            let masters = "SENTINEL MASTERS";
            match field {
                SentinelField::Name => vec![masters, "name", "redisSntName"],
                SentinelField::Key => vec!["redisInstanceName", "redisSntLabel"],
                SentinelField::State => vec![masters, "flags", "s_down", "o_down"],
                SentinelField::Flags => vec![masters, "flags"],
                SentinelField::Address => vec![masters, "ip"],
                SentinelField::Port => vec![masters, "port"],
                SentinelField::Replicas => vec![masters, "num-slaves"],
                SentinelField::OtherSentinels => vec![masters, "num-other-sentinels"],
                SentinelField::Quorum => vec![masters, "quorum"],
            }
        });
    }
    // A slow log entry and a latency event are arrays without field
    // names: the DESCRIPTION names the command (which element feeds
    // which column is the business of `redis::replies`).
    if let Some(field) = SlowlogField::of(o) {
        return Some(match field {
            SlowlogField::Length => vec!["SLOWLOG LEN"],
            SlowlogField::LastId | SlowlogField::LastTime | SlowlogField::LastUsec => {
                vec!["SLOWLOG GET 1"]
            }
            SlowlogField::LargeRequests => vec!["COMMANDLOG LEN", "large-request"],
            SlowlogField::LargeReplies => vec!["COMMANDLOG LEN", "large-reply"],
        });
    }
    if let Some(field) = ClientField::of(o) {
        return Some(match table_of(o).map(|t| t.table) {
            Some("redisClientNameTable") => client_source(field, "redisCnName", "redisCnLabel"),
            _ => client_source(field, "redisCuUser", "redisCuLabel"),
        });
    }
    if let Some(LatencyField::Name) = LatencyField::of(o) {
        return Some(vec!["LATENCY LATEST", "redisLatEvent"]);
    }
    if let Some(LatencyField::Key) = LatencyField::of(o) {
        return Some(vec!["redisInstanceName", "redisLatLabel"]);
    }
    if let Some(LatencyField::LastTime | LatencyField::LastMs | LatencyField::MaxMs) =
        LatencyField::of(o)
    {
        return Some(vec!["LATENCY LATEST"]);
    }
    None
}

/// The tables of keys: the commands that read them.
fn key_sources(o: &ObjectDef) -> Option<Vec<&'static str>> {
    // The key checks: the command each column comes from, and the
    // setting that bounds it.
    if let Some(field) = KeyField::of(o) {
        return Some(match field {
            KeyField::Label => vec!["redisCkName"],
            KeyField::Key => vec!["redisInstanceName", "redisCkLabel"],
            KeyField::Type => vec!["TYPE"],
            KeyField::Length => vec!["STRLEN", "LLEN", "SCARD", "ZCARD", "HLEN", "XLEN"],
            KeyField::Ttl => vec!["TTL"],
            KeyField::Memory => vec!["MEMORY USAGE", "check_keys_memory"],
            KeyField::Entry => vec!["check_keys"],
            KeyField::Error => vec!["NOPERM"],
        });
    }
    if let Some(field) = StreamGroupField::of(o) {
        return Some(match field {
            StreamGroupField::Label => vec!["redisKgName"],
            StreamGroupField::Key => vec!["redisInstanceName", "redisCkLabel", "redisKgLabel"],
            StreamGroupField::Consumers => vec!["XINFO GROUPS", "consumers"],
            StreamGroupField::Pending => vec!["XINFO GROUPS", "pending"],
            StreamGroupField::Lag => vec!["XINFO GROUPS", "lag"],
            StreamGroupField::LastDeliveredId => vec!["XINFO GROUPS", "last-delivered-id"],
            StreamGroupField::MaxIdle => vec!["XINFO CONSUMERS", "idle"],
        });
    }
    if let Some(field) = KeyCheckField::of(o) {
        return Some(match field {
            KeyCheckField::Keys => vec!["redisKeyTable"],
            KeyCheckField::KeysLeftOut => vec!["check_keys_rows"],
            KeyCheckField::GroupsLeftOut => vec!["check_keys_groups"],
            KeyCheckField::ScanComplete => {
                vec!["SCAN", "check_keys_scan_calls", "check_keys_scan_time"]
            }
            KeyCheckField::ScanCalls => vec!["SCAN", "check_keys_scan_calls"],
            KeyCheckField::CheckTime => vec!["check_keys_scan_time"],
            KeyCheckField::LastError => vec!["NOPERM", "max_reply_bytes"],
        });
    }
    if let Some(field) = BigKeyField::of(o) {
        return Some(match field {
            BigKeyField::Name => vec!["key_names"],
            BigKeyField::Type => vec!["TYPE"],
            BigKeyField::Bytes => vec!["MEMORY USAGE", "big_keys_samples"],
            BigKeyField::Database | BigKeyField::Seen => Vec::new(),
        });
    }
    if let Some(field) = HotKeyField::of(o) {
        return Some(match field {
            HotKeyField::Name => vec!["key_names"],
            HotKeyField::Database => vec!["db"],
            HotKeyField::Qps => vec!["qps"],
            HotKeyField::CpuUsec => vec!["by-cpu-time-us"],
            HotKeyField::NetBytes => vec!["by-net-bytes"],
            HotKeyField::LfuCounter => vec!["OBJECT FREQ", "maxmemory-policy"],
        });
    }
    None
}

/// The tables of events: where each column's value comes from.
fn event_sources(o: &ObjectDef) -> Option<Vec<&'static str>> {
    // The agent's own alarms: the table's DESCRIPTION says where they
    // come from ([[alarm]]).
    if redis_snmp::metrics::AlarmField::of(o).is_some() {
        return Some(Vec::new());
    }
    // A slow log entry: the command, then each element by its place.
    if let Some(field) = SlowCommandField::of(o) {
        return Some(match field {
            SlowCommandField::Id => vec!["SLOWLOG GET", "field 1"],
            SlowCommandField::Time => vec!["field 2"],
            SlowCommandField::Duration => vec!["field 3"],
            SlowCommandField::Command => vec!["first argument"],
            SlowCommandField::ClientAddress => vec!["field 5"],
            SlowCommandField::ClientName => vec!["CLIENT SETNAME", "field 6"],
            SlowCommandField::Arguments => vec!["slow_command_args", "key_names"],
            SlowCommandField::Skipped => vec!["slowlog-max-len", "SLOWLOG RESET"],
        });
    }
    // What a sentinel's masters did, as the agent saw it: the
    // command and the field each column follows.
    if let Some(field) = SentinelEventField::of(o) {
        return Some({
            let masters = "SENTINEL MASTERS";
            match field {
                SentinelEventField::Time => vec!["UNIX time"],
                SentinelEventField::Kind => vec!["o_down", "config-epoch", "CKQUORUM"],
                SentinelEventField::Master => vec![masters, "name"],
                SentinelEventField::Address | SentinelEventField::OldAddress => vec!["ip"],
                SentinelEventField::Port | SentinelEventField::OldPort => vec!["port"],
                SentinelEventField::Epoch => vec![masters, "config-epoch"],
                SentinelEventField::OldEpoch => vec!["configuration epoch"],
                SentinelEventField::Quorum => vec!["SENTINEL CKQUORUM", "+sentinel|ckquorum"],
            }
        });
    }
    if let Some(field) = AclField::of(o) {
        return Some(match field {
            AclField::Reason => vec!["ACL LOG", "reason"],
            AclField::User => vec!["user"],
            AclField::Address => vec!["addr=", "client-info"],
            AclField::Count => vec!["count"],
            AclField::LastSeen => vec!["timestamp-last-updated", "age-seconds"],
            AclField::Key => vec!["instance's name"],
        });
    }
    None
}

/// The name the served-objects check gives instance `index`.
fn instance_name(index: u32) -> String {
    format!("redis{index}")
}

/// What a column of a string-indexed table carries of its row's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowName {
    /// The index string itself (the `…Label` columns).
    Index,
    /// The instance's name, `/`, and the index string (the `…Key` columns).
    InstanceAndIndex,
}

/// The CLIENT LIST field a column of the client aggregate tables is made of.
fn client_source(
    field: ClientField,
    index: &'static str,
    label: &'static str,
) -> Vec<&'static str> {
    let list = "CLIENT LIST";
    match field {
        ClientField::Label => vec![index],
        ClientField::Key => vec!["redisInstanceName", label],
        ClientField::Count => vec![list],
        ClientField::OldestAge => vec!["age"],
        ClientField::MaxIdle => vec!["idle"],
        ClientField::MaxOutputMem => vec!["omem"],
        ClientField::MaxTotalMem => vec!["tot-mem"],
        ClientField::Blocked => vec!["flags"],
    }
}

/// Whether an object names its row, and how: the matches are exhaustive
/// over the fields of the string-indexed tables.
fn row_name_column(o: &ObjectDef) -> Option<RowName> {
    use RowName::{Index, InstanceAndIndex};
    if let Some(field) = CommandField::of(o) {
        return match field {
            CommandField::Name => Some(Index),
            CommandField::Key => Some(InstanceAndIndex),
            CommandField::Calls
            | CommandField::Usec
            | CommandField::UsecPerCall
            | CommandField::Rejected
            | CommandField::Failed
            | CommandField::P50
            | CommandField::P99
            | CommandField::P999 => None,
        };
    }
    if let Some(field) = ErrorField::of(o) {
        return match field {
            ErrorField::Name => Some(Index),
            ErrorField::Key => Some(InstanceAndIndex),
            ErrorField::Count => None,
        };
    }
    if let Some(field) = SentinelField::of(o) {
        return match field {
            SentinelField::Name => Some(Index),
            SentinelField::Key => Some(InstanceAndIndex),
            SentinelField::State
            | SentinelField::Flags
            | SentinelField::Address
            | SentinelField::Port
            | SentinelField::Replicas
            | SentinelField::OtherSentinels
            | SentinelField::Quorum => None,
        };
    }
    if let Some(field) = LatencyField::of(o) {
        return match field {
            LatencyField::Name => Some(Index),
            LatencyField::Key => Some(InstanceAndIndex),
            LatencyField::LastTime | LatencyField::LastMs | LatencyField::MaxMs => None,
        };
    }
    if let Some(field) = KeyField::of(o) {
        return match field {
            KeyField::Label => Some(Index),
            KeyField::Key => Some(InstanceAndIndex),
            KeyField::Type
            | KeyField::Length
            | KeyField::Ttl
            | KeyField::Memory
            | KeyField::Entry
            | KeyField::Error => None,
        };
    }
    if let Some(field) = ModuleField::of(o) {
        return match field {
            ModuleField::Name => Some(Index),
            ModuleField::Key => Some(InstanceAndIndex),
            ModuleField::Version
            | ModuleField::Api
            | ModuleField::Filters
            | ModuleField::UsedBy
            | ModuleField::Using
            | ModuleField::Options => None,
        };
    }
    if let Some(field) = ClientField::of(o) {
        return match field {
            ClientField::Label => Some(Index),
            ClientField::Key => Some(InstanceAndIndex),
            ClientField::Count
            | ClientField::OldestAge
            | ClientField::MaxIdle
            | ClientField::MaxOutputMem
            | ClientField::MaxTotalMem
            | ClientField::Blocked => None,
        };
    }
    // The other tables are indexed by numbers (a database, a slot, a
    // thread, a hash of a refusal's reason, user and address, the agent's
    // own count) and have no name column, but redisKeyStreamGroupTable,
    // indexed by two names (the stream's and the group's): the readings'
    // unit tests check what its name columns carry. A count of the
    // instance's (`Rows`) and the scalars are not a row's name either.
    None
}

#[test]
fn descriptions_name_the_sources() {
    let mib = mib();
    let mut problems = Vec::new();
    for o in redis_objects() {
        let Some(node) = mib.nodes.get(o.name) else {
            continue; // reported by tests/mib_modules.rs
        };
        let description = node.description_words();
        for name in source_names(o) {
            if !mentions(&description, name) {
                problems.push(format!(
                    "{}: the DESCRIPTION does not name {name}, where the value comes from",
                    o.name
                ));
            }
        }
        let signed = matches!(
            o.source,
            Source::Info {
                conversion: Conversion::Signed,
                ..
            }
        );
        if signed && !mentions(&description, "-1") {
            problems.push(format!(
                "{}: Redis says -1 for none; the DESCRIPTION must say so",
                o.name
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------
// The OIDs the agent builds.

fn fixture(name: &str) -> String {
    let path = repo_dir().join("tests/fixtures/redis").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A sentinel's INFO: the sections a Redis Sentinel reports, shortened.
const SENTINEL_INFO: &str = "# Server\r\nredis_version:7.0.15\r\nredis_mode:sentinel\r\n\
    run_id:5e2ab1b5a3e1d6b9c3f8f3c0d1e2f3a4b5c6d7e8\r\nuptime_in_seconds:4242\r\n\
    # Clients\r\nconnected_clients:3\r\n\
    # Sentinel\r\nsentinel_masters:2\r\nsentinel_tilt:0\r\nsentinel_running_scripts:0\r\n\
    sentinel_scripts_queue_length:0\r\nsentinel_simulate_failure_flags:0\r\n\
    master0:name=mymaster,status=ok,address=127.0.0.1:6379,slaves=1,sentinels=3\r\n";

/// One master of a SENTINEL MASTERS reply, as `replies::sentinel_masters`
/// reads it.
fn watched_master(name: &str, flags: &str) -> WatchedMaster {
    let reply = redis::Value::Array(vec![redis::Value::Array(
        [
            ("name", name),
            ("ip", "::1"),
            ("port", "6380"),
            ("runid", "0123456789abcdef0123456789abcdef01234567"),
            ("flags", flags),
            ("num-slaves", "2"),
            ("num-other-sentinels", "2"),
            ("quorum", "2"),
        ]
        .iter()
        .flat_map(|(k, v)| [bulk(k), bulk(v)])
        .collect(),
    )]);
    sentinel_masters(&reply).remove(0)
}

fn bulk(text: &str) -> redis::Value {
    redis::Value::BulkString(text.as_bytes().to_vec())
}

/// What a key check may report: every column of the key tables filled.
fn key_report(longest: &str) -> redis_snmp::redis::keys::KeyReport {
    use redis_snmp::metrics::KeyType;
    use redis_snmp::redis::keys::{GroupRow, KeyReport, KeyRow};
    let row = |label: &str, kind| KeyRow {
        label: label.into(),
        entry: "queue:*".into(),
        kind: Some(kind),
        length: Some(3),
        ttl: Some(60),
        memory: Some(72),
        error: String::new(),
        groups: Vec::new(),
    };
    let mut stream = row("events", KeyType::Stream);
    let longest_group = &longest[..MAX_SECOND_NAME_INDEX_LEN];
    stream.groups = ["billing", longest_group]
        .iter()
        .map(|name| GroupRow {
            name: name.to_string(),
            consumers: 2,
            pending: 3,
            lag: Some(1),
            last_delivered: "3-1".into(),
            max_idle: Some(1006),
        })
        .collect();
    KeyReport {
        keys: vec![
            stream,
            row(longest, KeyType::List),
            row("jobs", KeyType::None),
        ],
        keys_left_out: 4,
        groups_left_out: 1,
        scan_complete: true,
        scan_calls: 3,
        millis: 2,
        error: String::new(),
    }
}

#[test]
fn the_oids_the_agent_builds_decode_with_the_mibs_indexes() {
    let mib = mib();
    let layout = Layout::default_layout();
    // A master with replicas, commands, latencies and errors; databases
    // with and without a db<N> line (zero-filled: CONFIG GET databases);
    // and the fields CLUSTER INFO adds on a cluster node.
    let extra = "db1:keys=3,expires=1,avg_ttl=1500,subexpiry=0\r\n\
                 db12:keys=7,expires=0,avg_ttl=0\r\n\
                 # Cluster info\r\ncluster_state:ok\r\ncluster_known_nodes:6\r\n\
                 errorstat_NOSCRIPT:count=2\r\n";
    let master = fixture("7.0-master-info.txt") + extra;
    let replica = fixture("7.0-replica-info.txt");
    // Valkey 9.1 adds a TLS section.
    let valkey = fixture("valkey-9.1-master-info.txt");
    // Redis 8.2 adds Keysizes, Threads and a module; with the extremes of
    // the keysizes index (the highest bucket, a high database).
    let redis82 = fixture("8.2-master-info.txt")
        + "db2147483647_distrib_hashes_items:0=1,8E=2\r\nio_thread_127:clients=1,reads=2,writes=3\r\n";
    // What the optional commands told of the master: CONFIG GET databases,
    // SLOWLOG LEN and GET 1, LATENCY LATEST (one event name as long as an
    // index may be, one longer: left out).
    let longest = "e".repeat(MAX_NAME_INDEX_LEN);
    let too_long = "e".repeat(MAX_NAME_INDEX_LEN + 1);
    let master_extras = master_extras(&longest, &too_long);
    // And of a sentinel: SENTINEL MASTERS, with the same extremes.
    let sentinel_extras = Extras {
        sentinel_masters: vec![
            watched_master("mymaster", "master"),
            watched_master("cache-2", "s_down,o_down,master"),
            watched_master(&longest, "s_down,master"),
            watched_master(&too_long, "master"),
        ],
        sentinel_events: sentinel_events(),
        ..Extras::default()
    };
    let status = InstanceStatus {
        name: "main".into(),
        address: "127.0.0.1:6379".into(),
        up: true,
        last_ok_unix: Some(1_700_000_000),
        ..Default::default()
    };
    let mut served = Vec::new();
    for (index, text, extras) in [
        (1, master.as_str(), &master_extras),
        (7, replica.as_str(), &Extras::default()),
        (3, SENTINEL_INFO, &sentinel_extras),
        (5, valkey.as_str(), &Extras::default()),
        (9, redis82.as_str(), &Extras::default()),
    ] {
        let info = Info::parse(text);
        for (oid, value) in instance_part(index, &instance_name(index), &info, &layout, extras) {
            served.push((index, oid, value));
        }
        for (oid, value) in status_part(index, &status, &layout) {
            served.push((index, oid, value));
        }
    }
    // The rows of redisAlarmTable the agent's own alarms make of these
    // values.
    served.extend(alarm_rows(&layout, &served));

    let root = root();
    let defs: Vec<(Oid, &ObjectDef)> = redis_objects()
        .map(|o| (root.child(o.arcs).unwrap(), o))
        .collect();
    let mut problems = Vec::new();
    let mut rows_seen = BTreeSet::new();
    let mut legacy_seen = 0;
    for (index, oid, value) in &served {
        let Some((def_oid, def)) = defs.iter().find(|(d, _)| oid.starts_with(d)) else {
            problems.push(format!("{oid}: no served object holds it"));
            continue;
        };
        let suffix = &oid.as_slice()[def_oid.len()..];
        let value = value.resolve(1_800_000_000);
        // A name column carries the string its row is indexed by; a key
        // column the instance's name and that string (`row_key`).
        if let Some(kind) = row_name_column(def) {
            let named_by: Option<Vec<u8>> = suffix
                .get(2..)
                .filter(|bytes| suffix.get(1).copied() == Some(bytes.len() as u32))
                .and_then(|bytes| bytes.iter().map(|b| u8::try_from(*b).ok()).collect());
            let expected = named_by.map(|name| match kind {
                RowName::Index => name,
                RowName::InstanceAndIndex => redis_snmp::metrics::row_key(
                    &instance_name(*index),
                    &String::from_utf8_lossy(&name),
                )
                .into_bytes(),
            });
            let carried = match &*value {
                Value::OctetString(bytes) => Some(bytes.clone()),
                _ => None,
            };
            if expected.is_none() || expected != carried {
                problems.push(format!(
                    "{oid} ({}): carries {value:?}, not the string of its index",
                    def.name
                ));
            }
        }
        // Its wire type, a value its MIB type allows, and an instance the
        // MIB's INDEX decodes (tests/mibtool/rules.rs).
        match instance_of(mib, def, def_oid, oid, &value) {
            Err(e) => problems.push(format!("{oid} ({}): {e}", def.name)),
            Ok(Instance::Scalar) => {
                legacy_seen += 1;
                if !is_legacy(def) || *index != 1 {
                    problems.push(format!("{oid}: a legacy scalar of instance {index}"));
                }
            }
            Ok(Instance::Row { row, first }) => {
                rows_seen.insert(row.name.clone());
                if first != *index {
                    problems.push(format!(
                        "{oid} ({}): instance {first}, built for {index}",
                        def.name
                    ));
                }
            }
        }
    }
    assert_eq!(legacy_seen, LEGACY_SCALARS.len(), "legacy scalars served");
    // Every table got rows from these captures, so every INDEX was tried.
    for table in spec().tables {
        let arcs = table.entry_arcs().unwrap();
        let entry = mib.node_at(&root.child(arcs).unwrap()).expect("entry");
        if !rows_seen.contains(&entry.name) {
            problems.push(format!("no row of {} was built", entry.name));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// What the optional commands told of the master: CONFIG GET databases,
/// SLOWLOG LEN and GET 1, LATENCY LATEST (one event name as long as an
/// index may be, `longest`, one longer, `too_long`: left out), and the
/// other tables' sources.
fn master_extras(longest: &str, too_long: &str) -> Extras {
    Extras {
        databases: Some(16),
        slowlog_len: Some(3),
        slowlog_last: Some(SlowlogEntry {
            id: 14,
            unix_time: 1_795_362_836,
            micros: 250,
        }),
        latency: [
            ("command", 1_795_362_836, 12, 30),
            ("fork", 1_795_362_800, 1, 4),
            (longest, 1_795_362_800, 1, 1),
            (too_long, 1_795_362_800, 1, 1),
        ]
        .iter()
        .map(|&(event, unix_time, latest_ms, max_ms)| LatencyEvent {
            event: event.to_string(),
            unix_time,
            latest_ms,
            max_ms,
        })
        .collect(),
        // CLIENT LIST of a real Redis 7.0, with a name as long as an index
        // may be and one longer (counted in "(other names)").
        clients: Some(redis_snmp::redis::clients::aggregate(
            format!(
                "{}\nid=90 name={longest} age=1 user=default\nid=91 name={too_long} user=default\n",
                std::fs::read_to_string(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/tests/fixtures/redis/7.0-client-list.txt"
                ))
                .unwrap()
            )
            .as_bytes(),
            50,
        )),
        // A key check: a stream with a group, a key as long as an index
        // may be, and an exact name that is gone.
        keys: Some(key_report(longest)),
        // A slow log entry seen arriving, numbered as high as an index may be.
        slow_commands: vec![SlowRow {
            number: i32::MAX as u32,
            id: 15,
            unix_time: 1_795_362_836,
            micros: 62_037,
            command: "eval".into(),
            client_address: Some("127.0.0.1:57032".into()),
            client_name: Some("app-worker".into()),
            args: Some("local 0".into()),
            skipped: 3,
        }],
        // The big-key sampler and HOTKEYS GET: a row of each.
        big_keys: Some(big_key_report()),
        // ACL LOG of a real Redis 8.2, aggregated: its row numbers are
        // hashes anywhere in 1..=2147483647.
        acl: Some(AclReport {
            rows: redis_snmp::redis::acl_log::aggregate(
                &redis_snmp::redis::acl_log::parse(
                    &redis::parse_redis_value(
                        &std::fs::read(concat!(
                            env!("CARGO_MANIFEST_DIR"),
                            "/tests/fixtures/redis/8.2-acl-log.resp"
                        ))
                        .unwrap(),
                    )
                    .unwrap(),
                ),
                100,
                0,
            )
            .0,
            left_out: 0,
        }),
        ..Extras::default()
    }
}

/// The rows of redisAlarmTable the agent's own alarms make of instance 1's
/// values in `served`: one raised on the master's used memory, one per
/// replica of its lag.
fn alarm_rows(layout: &Layout, served: &[(u32, Oid, Value)]) -> Vec<(u32, Oid, Value)> {
    let alarms = [
        AlarmSpec::new(
            "memory-used",
            "redisMemUsed",
            Direction::Above,
            1,
            0,
            1,
            None,
        )
        .unwrap(),
        AlarmSpec::new("lag", "redisRpLag", Direction::Above, 0, -1, 1, None).unwrap(),
    ];
    let mut evaluator = Alarms::new(&alarms, layout);
    let mut part: Vec<(Oid, Value)> = served
        .iter()
        .filter(|(i, _, _)| *i == 1)
        .map(|(_, o, v)| (o.clone(), v.clone()))
        .collect();
    part.sort_by(|a, b| a.0.cmp(&b.0));
    let raised = evaluator.evaluate(1, true, &[&part], 1_795_362_900);
    assert!(raised.events.len() >= 2, "{:?}", raised.events);
    raised
        .rows
        .into_iter()
        .map(|(oid, value)| (1, oid, value))
        .collect()
}

/// The rows of redisSentinelEventTable a failover watch keeps of two
/// polls: a master down and failed over (old and new address and epoch),
/// its quorum lost, as `redis::failover` makes them.
fn sentinel_events() -> Vec<redis_snmp::redis::failover::EventRow> {
    use redis_snmp::redis::failover::{FailoverWatch, MasterSeen, Quorum};
    let seen = |port: u64, epoch: u64, odown: bool, quorum: Quorum| MasterSeen {
        name: "mymaster".into(),
        ip: Some("127.0.0.1".into()),
        port: Some(port),
        epoch: Some(epoch),
        odown: Some(odown),
        quorum: Some(quorum),
    };
    let mut watch = FailoverWatch::new();
    watch.observe(
        &[seen(
            6379,
            1,
            false,
            Quorum::Reachable("OK 3 usable Sentinels".into()),
        )],
        1_795_362_800,
    );
    watch.observe(
        &[seen(
            6379,
            1,
            true,
            Quorum::Reachable("OK 3 usable Sentinels".into()),
        )],
        1_795_362_801,
    );
    watch.observe(
        &[seen(
            6380,
            2,
            false,
            Quorum::Unreachable("NOQUORUM 2 usable Sentinels".into()),
        )],
        1_795_362_802,
    );
    let rows = watch.rows();
    assert_eq!(rows.len(), 4, "{rows:?}");
    rows
}

// ---------------------------------------------------------------------------
// Notifications.

/// What a notification's DESCRIPTION must name beyond what all share: the
/// values whose transition sends it (`notify::redis_transitions`). Keyed by
/// number, the notification's identity; a new one must be placed here.
fn transition_names(def: &NotificationDef) -> Option<&'static [&'static str]> {
    Some(match def.number {
        1 => &["redisInstanceState", "up(1)", "down(2)"],
        2 => &["redisInstanceState", "down(2)", "up(1)"],
        3 => &["run_id"],
        4 => &["role"],
        5 | 6 => &["master_link_status", "up", "down"],
        7 => &["rdb_last_bgsave_status", "aof_last_write_status", "err"],
        8 | 9 => &["cert_expiry_warning", "redisInstanceCertExpiresIn"],
        10 => &["[[alarm]]", "redisAlarmTrigger", "count"],
        11 => &["redisAlarmRearm", "redisThresholdCrossed"],
        12 => &["slow_command_threshold", "redisSlowCommandTable"],
        13 => &["ACL LOG", "acl_burst_refusals", "acl_burst_window"],
        14 => &["acl_burst_window", "redisAuthFailureBurst"],
        15 => &["SENTINEL MASTERS", "address", "configuration epoch"],
        16 => &["o_down", "odown", "redisSentinelMasterUp"],
        17 => &["objectively down", "redisSentinelMasterDown"],
        18 => &["SENTINEL CKQUORUM", "NOQUORUM", "OK"],
        19 => &["SENTINEL CKQUORUM", "NOQUORUM", "OK"],
        20 => &["cluster_state", "ok", "fail"],
        21 => &["cluster_state", "ok", "fail"],
        22 => &["cluster_slots_pfail", "cluster_slots_fail"],
        23 => &["cluster_slots_pfail", "cluster_slots_fail"],
        _ => return None,
    })
}

/// What every notification's DESCRIPTION must say, in the words of
/// `notify` and of the configuration: the first poll is the baseline, the
/// rate limit, and how to turn it off.
const NOTIFICATION_TERMS: &[&str] = &["baseline", "max_per_minute", "[notifications]"];

/// Each notification's DESCRIPTION says what sends it, that the first poll
/// is the baseline, the rate limit, and how to turn it off.
#[test]
fn notification_descriptions_say_what_sends_them_and_how_to_turn_them_off() {
    let mib = mib();
    let mut problems = Vec::new();
    for def in REDIS_NOTIFICATIONS {
        let Some(node) = mib.nodes.get(def.name) else {
            continue; // reported by tests/mib_modules.rs
        };
        let description = node.description_words();
        let Some(transition) = transition_names(def) else {
            problems.push(format!(
                "{}: describe in transition_names what sends it",
                def.name
            ));
            continue;
        };
        let disable = format!("disabled = ['{}']", def.name);
        for term in transition.iter().chain(NOTIFICATION_TERMS) {
            if !mentions(&description, term) {
                problems.push(format!("{}: the DESCRIPTION does not say {term}", def.name));
            }
        }
        if !description.contains(&disable) {
            problems.push(format!(
                "{}: the DESCRIPTION does not say how to turn it off ({disable})",
                def.name
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------
// Conformance, layout and what must never change.

#[test]
fn the_layout_and_the_legacy_definitions_hold() {
    let mib = mib();
    let root = root();
    let expect = [
        ("redis", vec![]),
        ("redisNotifications", vec![0]),
        ("redisStatus", vec![1]),
        ("redisObjects", vec![3]),
        ("redisMIBConformance", vec![2]),
        ("redisMIBCompliances", vec![2, 1]),
        ("redisMIBGroups", vec![2, 2]),
        ("redisMIBCompliance", vec![2, 1, 1]),
        ("redisMIBComplianceV2", vec![2, 1, 2]),
        ("redisMIBComplianceV3", vec![2, 1, 3]),
        ("redisGroup", vec![2, 2, 1]),
        ("redisLegacyGroup", vec![2, 2, 2]),
        ("redisInstanceGroup", vec![2, 2, 3]),
    ];
    // The entry the tables that AUGMENT it borrow their INDEX from.
    let instance = spec().tables[0].entry_arcs().unwrap();
    assert_eq!(instance, INSTANCE_ENTRY);
    for (name, arcs) in expect {
        let node = mib
            .nodes
            .get(name)
            .unwrap_or_else(|| panic!("{name} is gone"));
        assert_eq!(node.oid, root.child(&arcs).unwrap(), "{name}");
    }
    assert_eq!(
        mib.dump.get(MODULE).and_then(|m| m.str("identity node")),
        Some("redis")
    );
    // The original group: the first six scalars, still current.
    let first_six: Vec<&str> = LEGACY_SCALARS[..6].iter().map(|o| o.name).collect();
    assert_eq!(mib.groups()["redisGroup"], first_six);
    let all: Vec<&str> = LEGACY_SCALARS.iter().map(|o| o.name).collect();
    assert_eq!(mib.groups()["redisLegacyGroup"], all);
    let group = mib
        .dump
        .get("groups")
        .and_then(|g| g.get("redisGroup"))
        .unwrap();
    assert_eq!(group.str("status"), Some("current"));
    // The earlier compliance statements, unchanged.
    let compliances = mib.compliances();
    let (status, mandatory) = &compliances["redisMIBCompliance"];
    assert_eq!(
        (*status, mandatory.as_slice()),
        ("current", &["redisGroup"][..])
    );
    let (status, mandatory) = &compliances["redisMIBComplianceV2"];
    assert_eq!(
        (*status, mandatory.as_slice()),
        (
            "current",
            &["redisGroup", "redisLegacyGroup", "redisInstanceGroup"][..]
        )
    );
    // V3 (revision 202611221600Z): V2's groups and one for each INFO table.
    let (status, mandatory) = &compliances["redisMIBComplianceV3"];
    assert_eq!(
        (*status, mandatory.as_slice()),
        (
            "current",
            &[
                "redisGroup",
                "redisLegacyGroup",
                "redisInstanceGroup",
                "redisServerGroup",
                "redisClientsGroup",
                "redisMemoryGroup",
                "redisPersistenceGroup",
                "redisStatsGroup",
                "redisReplicationGroup",
                "redisCpuGroup",
                "redisClusterGroup",
                "redisKeyspaceGroup",
                "redisReplicaGroup",
                "redisCommandGroup",
                "redisErrorGroup"
            ][..]
        )
    );
    // The legacy textual convention, and the revision it came with. Its
    // DISPLAY-HINT "d" stays although RFC 2579 section 3.1 forbids one on
    // a Counter64 convention: without it smilint -l 6 complains
    // (mibtool::modules::REDIS_UNSIGNED64_HINT; tests/mib_modules.rs shows
    // both readers' view).
    let tc = mib
        .typedef("REDISUnsigned64")
        .expect("REDISUnsigned64 is gone");
    assert_eq!(tc.str("format"), Some("d"));
    let parent = tc
        .get("parent module")
        .expect("REDISUnsigned64 has a parent");
    assert_eq!(
        (parent.str("name"), parent.str("type")),
        (Some("SNMPv2-SMI"), Some("Counter64"))
    );
    let revisions = mib.revisions();
    for date in [
        "2026-11-22 16:10",
        "2026-11-22 16:00",
        "2026-11-22 00:00",
        "2013-02-08 00:00",
    ] {
        assert!(revisions.contains(&date), "revision {date}: {revisions:?}");
    }
    // That LAST-UPDATED is the newest of them is checked with every
    // module's layout in tests/mib_modules.rs.
}

#[test]
fn the_scaled_value_conventions_hold() {
    let mib = mib();
    for (factor, name, hint) in spec().scaled_tcs {
        let tc = mib
            .typedef(name)
            .unwrap_or_else(|| panic!("{name} is missing"));
        assert_eq!(tc.str("format"), Some(*hint), "{name}");
        assert_eq!(
            10u32.pow(hint.trim_start_matches("d-").parse().unwrap()),
            *factor,
            "{name}: {hint} does not undo × {factor}"
        );
        let t = mib.resolve(tc).unwrap();
        assert!(
            t.basetype == "Unsigned32" && t.derives_from("SNMPv2-SMI::Gauge32"),
            "{name}: {t:?}, the agent sends a Gauge32"
        );
    }
}

/// A big key (in database 3) and a hot key, as the sampler serves them.
fn big_key_report() -> redis_snmp::redis::big_keys::BigKeyReport {
    use redis_snmp::metrics::KeyType;
    use redis_snmp::redis::big_keys::{BigKeyReport, BigKeyRow};
    use redis_snmp::redis::hot_keys::{HotKey, HotKeyRow};
    BigKeyReport {
        rows: vec![BigKeyRow {
            rank: 1,
            label: "cart:big".into(),
            kind: Some(KeyType::Hash),
            bytes: 1 << 20,
            db: 3,
            seen: 1_795_362_836,
        }],
        hot: vec![HotKeyRow {
            rank: 1,
            label: "user:1".into(),
            key: HotKey {
                name: b"user:1".to_vec(),
                db: Some(0),
                qps: Some(1200),
                cpu_usec: None,
                net_bytes: None,
                lfu: Some(12),
            },
        }],
        ..BigKeyReport::default()
    }
}
