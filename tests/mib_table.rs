//! `mibs/REDIS-SERVER-MIB.txt` against the agent's object table
//! (`redis_snmp::metrics`), and against the tools managers use.
//!
//! - libsmi's `smidump` (the project's MIB parser) must find every served
//!   object at the same OID, read-only, with a type that matches what the
//!   agent sends (named numbers and display hints included), and must find no
//!   readable object the agent does not serve.
//! - Every table's INDEX (or AUGMENTS) must be what the agent builds: the
//!   declared index objects, and the OIDs the agent really produces for a
//!   captured INFO decode against them.
//! - Every notification the agent sends (`redis_snmp::notify`) must be a
//!   NOTIFICATION-TYPE at the same OID with the same OBJECTS in the same
//!   order, and the MIB must define no other.
//! - `smilint -l 6` may print only the messages allowed below, each with
//!   its reason (the same list is in `mibs/README.md`).
//! - net-snmp's `snmptranslate` must load the module without a complaint and
//!   resolve every served object and notification to the same OID and wire
//!   type or OBJECTS.
//!
//! The tools come from the Debian packages smitools and snmp; the SMIv2 base
//! modules from `scripts/base-mibs.sh`. See `tests/mibtool/mod.rs`.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

mod mibtool;

use mibtool::{
    mib_file, named_numbers, parse_tp, ranges, repo_dir, snmptranslate, text, Mib, Node,
    ResolvedType, SMILINT,
};
use redis_snmp::alarms::{AlarmSpec, Alarms, Direction};
use redis_snmp::metrics::{
    redis_objects, ClientField, CommandField, Conversion, ErrorField, KeyCheckField, KeyField,
    KeyspaceField, LatencyField, Layout, ObjectDef, ReplicaField, RowIndex, SentinelField,
    SlowlogField, Source, StatusField, StreamGroupField, ALARM_COLUMNS, DEFAULT_REDIS_ROOT,
    INSTANCE_ENTRY, INSTANCE_STATE, KEY_TYPES, LEGACY_SCALARS, MAX_NAME_INDEX_LEN,
    MAX_SECOND_NAME_INDEX_LEN, SENTINEL_STATE, TABLES,
};
use redis_snmp::metrics::{
    About, NotificationDef, RedisEvent, NOTIFICATIONS_BRANCH, REDIS_NOTIFICATIONS,
};
use redis_snmp::oid::Oid;
use redis_snmp::redis::info::Info;
use redis_snmp::redis::readings::{instance_part, status_part, Extras, InstanceStatus};
use redis_snmp::redis::replies::{sentinel_masters, LatencyEvent, SlowlogEntry, WatchedMaster};
use redis_snmp::smi::{Syntax, Value, WireType};
use std::collections::{BTreeMap, BTreeSet};

/// The module under test.
const MODULE: &str = "REDIS-SERVER-MIB";

/// REDIS-SERVER-MIB as libsmi reads it, dumped once for all tests.
fn mib() -> &'static Mib {
    Mib::load(MODULE)
}

fn root() -> Oid {
    DEFAULT_REDIS_ROOT.parse().unwrap()
}

fn is_legacy(o: &ObjectDef) -> bool {
    LEGACY_SCALARS.iter().any(|l| l.name == o.name)
}

/// The MIB kind an object of the table must have: the legacy scalars are
/// served with instance `.0`, the columns with the instance number.
fn expected_kind(o: &ObjectDef) -> &'static str {
    if is_legacy(o) {
        "scalar"
    } else {
        "column"
    }
}

// ---------------------------------------------------------------------------
// What the MIB must say about an object, derived from its row in the catalogue (src/metrics/).

/// The factor a value is multiplied by before it is served (`1.84` × 100 =
/// 184), which the MIB's DISPLAY-HINT must undo: the `Scaled` conversion of
/// an INFO field, or `CommandField::scale()` for the command columns (1 is
/// no scaling). The match is exhaustive: a new source must be placed.
fn scale(o: &ObjectDef) -> Option<u32> {
    match o.source {
        Source::Info {
            conversion: Conversion::Scaled(factor),
            ..
        } => Some(factor),
        // Hundredths of a percent.
        Source::Info {
            conversion: Conversion::PercentOf(_),
            ..
        } => Some(100),
        Source::Command(field) => Some(field.scale()).filter(|f| *f != 1),
        Source::Info { .. }
        | Source::Status(_)
        | Source::Keyspace(_)
        | Source::Replica(_)
        | Source::Error(_)
        | Source::SentinelMaster(_)
        | Source::Slowlog(_)
        | Source::Latency(_)
        | Source::ClientName(_)
        | Source::ClientUser(_)
        | Source::Alarm(_)
        | Source::Key(_)
        | Source::StreamGroup(_)
        | Source::KeyCheck(_) => None,
        // PUPPET-AGENT-MIB's objects are tests/puppet_mib.rs's business.
        Source::Puppet(_) => None,
    }
}

/// The module's textual conventions for scaled values: the factor, the TC
/// and its DISPLAY-HINT.
const SCALED_TCS: &[(u32, &str, &str)] = &[
    (100, "RedisHundredths", "d-2"),
    (1000, "RedisThousandths", "d-3"),
];

/// The INFO texts and numbers an enumerated object is served with.
fn enumeration(o: &ObjectDef) -> Option<&'static [(&'static str, i32)]> {
    match o.source {
        Source::Info {
            conversion: Conversion::Enum(table),
            ..
        } => Some(table),
        Source::Status(StatusField::Up) => Some(INSTANCE_STATE),
        Source::SentinelMaster(SentinelField::State) => Some(SENTINEL_STATE),
        Source::Key(KeyField::Type) => Some(KEY_TYPES),
        _ => None,
    }
}

/// The SMI label for an INFO text: `no-failover` → `noFailover`.
fn smi_label(info_text: &str) -> String {
    let mut label = String::new();
    let mut upper = false;
    for c in info_text.chars() {
        if c == '-' || c == '_' {
            upper = true;
        } else if upper {
            label.extend(c.to_uppercase());
            upper = false;
        } else {
            label.push(c);
        }
    }
    label
}

/// Whether the MIB's named numbers are those of the agent's table: the same
/// set of numbers, each labelled after one of the INFO texts that map to it.
fn check_named_numbers(table: &[(&str, i32)], mib_values: &[(&str, i64)]) -> Result<(), String> {
    let want: BTreeSet<i64> = table.iter().map(|(_, n)| i64::from(*n)).collect();
    let got: BTreeSet<i64> = mib_values.iter().map(|(_, n)| *n).collect();
    if want != got || got.len() != mib_values.len() {
        return Err(format!(
            "the MIB numbers {mib_values:?}, the agent serves {table:?}"
        ));
    }
    for (label, number) in mib_values {
        let texts: Vec<String> = table
            .iter()
            .filter(|(_, n)| i64::from(*n) == *number)
            .map(|(t, _)| smi_label(t))
            .collect();
        if !texts.iter().any(|t| t == label) {
            return Err(format!(
                "{label}({number}) should be named after what INFO says for {number}: one of {texts:?}"
            ));
        }
    }
    Ok(())
}

/// Whether the type the MIB declares fits the object as the agent serves
/// it; on a mismatch, what was expected.
fn check_type(o: &ObjectDef, t: &ResolvedType) -> Result<(), String> {
    let derives = |name: &str| t.derives_from(name);
    let gauge64 =
        derives("REDIS-SERVER-MIB::REDISUnsigned64") || derives("HCNUM-TC::CounterBasedGauge64");
    let truth = derives("SNMPv2-TC::TruthValue");
    let (ok, expected) = match o.syntax {
        Syntax::Integer32 => (
            t.basetype == "Integer32",
            "Integer32 (an INTEGER without named values)",
        ),
        Syntax::Enum => (
            t.basetype == "Enumeration" && !truth,
            "an INTEGER with named values of its own",
        ),
        Syntax::TruthValue => (
            t.basetype == "Enumeration" && truth,
            "SNMPv2-TC's TruthValue",
        ),
        Syntax::Gauge32 => (
            t.basetype == "Unsigned32" && derives("SNMPv2-SMI::Gauge32"),
            "Gauge32 (base Unsigned32)",
        ),
        Syntax::Counter32 => (
            t.basetype == "Unsigned32" && derives("SNMPv2-SMI::Counter32"),
            "Counter32 (base Unsigned32)",
        ),
        Syntax::Counter64 => (
            t.basetype == "Unsigned64" && derives("SNMPv2-SMI::Counter64") && !gauge64,
            "Counter64 itself, not a 64-bit gauge convention",
        ),
        Syntax::Gauge64 => (
            t.basetype == "Unsigned64" && derives("SNMPv2-SMI::Counter64") && gauge64,
            "REDISUnsigned64 (or CounterBasedGauge64): a gauge carried as Counter64",
        ),
        Syntax::TimeTicks => (
            t.basetype == "Unsigned32" && derives("SNMPv2-SMI::TimeTicks"),
            "TimeTicks (base Unsigned32)",
        ),
        Syntax::DisplayString => (
            t.basetype == "OctetString" && derives("SNMPv2-TC::DisplayString"),
            "DisplayString (base OctetString)",
        ),
        Syntax::OctetString => (
            t.basetype == "OctetString" && !derives("SNMPv2-TC::DisplayString"),
            "an OCTET STRING that is not a DisplayString",
        ),
        Syntax::ObjectIdentifier => (t.basetype == "ObjectIdentifier", "OBJECT IDENTIFIER"),
    };
    if !ok {
        return Err(expected.to_string());
    }
    // Scaled values carry the convention of their factor, and only they.
    let tc_of = |factor: u32| SCALED_TCS.iter().find(|(f, _, _)| *f == factor);
    match scale(o) {
        Some(factor) => match tc_of(factor) {
            Some((_, tc, _)) if derives(&format!("{MODULE}::{tc}")) => {}
            Some((_, tc, _)) => return Err(format!("{tc}: a value scaled by {factor}")),
            None => {
                return Err(format!(
                    "a textual convention for values scaled by {factor}; add it to \
                     the MIB and to SCALED_TCS"
                ))
            }
        },
        None => {
            if let Some((_, tc, _)) = SCALED_TCS
                .iter()
                .find(|(_, tc, _)| derives(&format!("{MODULE}::{tc}")))
            {
                return Err(format!("a type without {tc}: the agent does not scale it"));
            }
        }
    }
    Ok(())
}

#[test]
fn every_served_object_is_in_the_mib_with_its_oid_kind_access_and_type() {
    let mib = mib();
    let root = root();
    let mut problems = Vec::new();
    for o in redis_objects() {
        let Some(node) = mib.nodes.get(o.name) else {
            problems.push(format!("{}: not in {MODULE}", o.name));
            continue;
        };
        let oid = root.child(o.arcs).unwrap();
        if node.oid != oid {
            problems.push(format!(
                "{}: MIB says {}, agent serves {oid}",
                o.name, node.oid
            ));
        }
        if node.kind != expected_kind(o) {
            problems.push(format!(
                "{}: a {} in the MIB, served as a {}",
                o.name,
                node.kind,
                expected_kind(o)
            ));
        }
        if node.access.as_deref() != Some("readonly") {
            problems.push(format!(
                "{}: access {:?}, not read-only",
                o.name, node.access
            ));
        }
        let Some(ty) = node.syntax.as_ref() else {
            problems.push(format!("{}: no SYNTAX", o.name));
            continue;
        };
        match mib.resolve(ty) {
            Ok(t) => {
                if let Err(expected) = check_type(o, &t) {
                    problems.push(format!(
                        "{}: served as {:?}, so the MIB must say {expected}; it says {t:?}",
                        o.name, o.syntax
                    ));
                }
            }
            Err(e) => problems.push(format!("{}: {e}", o.name)),
        }
        if o.syntax == Syntax::Enum {
            match enumeration(o) {
                Some(table) => {
                    if let Err(e) = check_named_numbers(table, &named_numbers(ty)) {
                        problems.push(format!("{}: {e}", o.name));
                    }
                }
                None => problems.push(format!(
                    "{}: an Enum whose numbers this test does not know",
                    o.name
                )),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

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
            } | Source::KeyCheck(KeyCheckField::ScanComplete)
        );
        if o.syntax == Syntax::TruthValue && !from_truth {
            problems.push(format!("{}: a TruthValue not made by Truth", o.name));
        }
        if o.syntax == Syntax::Enum && enumeration(o).is_none() {
            problems.push(format!("{}: an Enum without a table of numbers", o.name));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------
// Descriptions and units.

/// Where an object's value comes from, as its DESCRIPTION must say: its INFO
/// fields (every alias); for the tables of INFO's row lines the line and the
/// key within it; for the other commands the command, and the field of its
/// reply where the reply names its fields.
fn source_names(o: &ObjectDef) -> Vec<&'static str> {
    match o.source {
        Source::Info { fields, .. } => fields.to_vec(),
        Source::Status(_) => Vec::new(),
        Source::Keyspace(field) => vec![
            "db<N>",
            match field {
                KeyspaceField::Keys => "keys",
                KeyspaceField::Expires => "expires",
                KeyspaceField::AvgTtl => "avg_ttl",
                KeyspaceField::Subexpiry => "subexpiry",
            },
        ],
        Source::Replica(field) => match field {
            ReplicaField::Address => vec!["slave<N>", "ip"],
            ReplicaField::Port => vec!["slave<N>", "port"],
            ReplicaField::State => vec!["slave<N>", "state"],
            ReplicaField::Offset => vec!["slave<N>", "offset"],
            ReplicaField::LagSeconds => vec!["slave<N>", "lag"],
            ReplicaField::LagBytes => vec!["slave<N>", "offset", "master_repl_offset"],
            ReplicaField::Kind => vec!["slave<N>", "type"],
        },
        Source::Command(field) => {
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
        }
        Source::Error(field) => match field {
            ErrorField::Name => vec!["errorstat_<PREFIX>", "redisErrPrefix"],
            ErrorField::Key => vec!["redisInstanceName", "redisErrLabel"],
            ErrorField::Count => vec!["errorstat_<PREFIX>", "count"],
        },
        Source::SentinelMaster(field) => {
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
        }
        // A slow log entry and a latency event are arrays without field
        // names: the DESCRIPTION names the command (which element feeds
        // which column is the business of `redis::replies`).
        Source::Slowlog(field) => match field {
            SlowlogField::Length => vec!["SLOWLOG LEN"],
            SlowlogField::LastId | SlowlogField::LastTime | SlowlogField::LastUsec => {
                vec!["SLOWLOG GET 1"]
            }
            SlowlogField::LargeRequests => vec!["COMMANDLOG LEN", "large-request"],
            SlowlogField::LargeReplies => vec!["COMMANDLOG LEN", "large-reply"],
        },
        Source::ClientName(field) => client_source(field, "redisCnName", "redisCnLabel"),
        Source::ClientUser(field) => client_source(field, "redisCuUser", "redisCuLabel"),
        Source::Latency(LatencyField::Name) => vec!["LATENCY LATEST", "redisLatEvent"],
        Source::Latency(LatencyField::Key) => vec!["redisInstanceName", "redisLatLabel"],
        Source::Latency(LatencyField::LastTime | LatencyField::LastMs | LatencyField::MaxMs) => {
            vec!["LATENCY LATEST"]
        }
        // The key checks: the command each column comes from, and the
        // setting that bounds it.
        Source::Key(field) => match field {
            KeyField::Label => vec!["redisCkName"],
            KeyField::Key => vec!["redisInstanceName", "redisCkLabel"],
            KeyField::Type => vec!["TYPE"],
            KeyField::Length => vec!["STRLEN", "LLEN", "SCARD", "ZCARD", "HLEN", "XLEN"],
            KeyField::Ttl => vec!["TTL"],
            KeyField::Memory => vec!["MEMORY USAGE", "check_keys_memory"],
            KeyField::Entry => vec!["check_keys"],
            KeyField::Error => vec!["NOPERM"],
        },
        Source::StreamGroup(field) => match field {
            StreamGroupField::Label => vec!["redisKgName"],
            StreamGroupField::Key => vec!["redisInstanceName", "redisCkLabel", "redisKgLabel"],
            StreamGroupField::Consumers => vec!["XINFO GROUPS", "consumers"],
            StreamGroupField::Pending => vec!["XINFO GROUPS", "pending"],
            StreamGroupField::Lag => vec!["XINFO GROUPS", "lag"],
            StreamGroupField::LastDeliveredId => vec!["XINFO GROUPS", "last-delivered-id"],
            StreamGroupField::MaxIdle => vec!["XINFO CONSUMERS", "idle"],
        },
        Source::KeyCheck(field) => match field {
            KeyCheckField::Keys => vec!["redisKeyTable"],
            KeyCheckField::KeysLeftOut => vec!["check_keys_rows"],
            KeyCheckField::GroupsLeftOut => vec!["check_keys_groups"],
            KeyCheckField::ScanComplete => {
                vec!["SCAN", "check_keys_scan_calls", "check_keys_scan_time"]
            }
            KeyCheckField::ScanCalls => vec!["SCAN", "check_keys_scan_calls"],
            KeyCheckField::CheckTime => vec!["check_keys_scan_time"],
            KeyCheckField::LastError => vec!["NOPERM", "max_reply_bytes"],
        },
        // PUPPET-AGENT-MIB's objects are tests/puppet_mib.rs's business.
        Source::Puppet(_) => Vec::new(),
        // The agent's own alarms: the table's DESCRIPTION says where they
        // come from ([[alarm]]).
        Source::Alarm(_) => Vec::new(),
    }
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

/// Whether an object names its row, and how. The match is exhaustive over
/// the fields of the string-indexed tables.
fn row_name_column(o: &ObjectDef) -> Option<RowName> {
    use RowName::{Index, InstanceAndIndex};
    match o.source {
        Source::Command(field) => match field {
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
        },
        Source::Error(field) => match field {
            ErrorField::Name => Some(Index),
            ErrorField::Key => Some(InstanceAndIndex),
            ErrorField::Count => None,
        },
        Source::SentinelMaster(field) => match field {
            SentinelField::Name => Some(Index),
            SentinelField::Key => Some(InstanceAndIndex),
            SentinelField::State
            | SentinelField::Flags
            | SentinelField::Address
            | SentinelField::Port
            | SentinelField::Replicas
            | SentinelField::OtherSentinels
            | SentinelField::Quorum => None,
        },
        Source::Latency(field) => match field {
            LatencyField::Name => Some(Index),
            LatencyField::Key => Some(InstanceAndIndex),
            LatencyField::LastTime | LatencyField::LastMs | LatencyField::MaxMs => None,
        },
        Source::ClientName(field) | Source::ClientUser(field) => match field {
            ClientField::Label => Some(Index),
            ClientField::Key => Some(InstanceAndIndex),
            ClientField::Count
            | ClientField::OldestAge
            | ClientField::MaxIdle
            | ClientField::MaxOutputMem
            | ClientField::MaxTotalMem
            | ClientField::Blocked => None,
        },
        Source::Key(field) => match field {
            KeyField::Label => Some(Index),
            KeyField::Key => Some(InstanceAndIndex),
            KeyField::Type
            | KeyField::Length
            | KeyField::Ttl
            | KeyField::Memory
            | KeyField::Entry
            | KeyField::Error => None,
        },
        // Indexed by two names (the stream's and the group's): the
        // readings' unit tests check what their name columns carry.
        Source::StreamGroup(_) => None,
        Source::Info { .. }
        | Source::Status(_)
        | Source::Keyspace(_)
        | Source::Replica(_)
        | Source::Slowlog(_)
        | Source::KeyCheck(_)
        | Source::Puppet(_)
        | Source::Alarm(_) => None,
    }
}

/// Whether `text` holds `word` on its own (not as part of a longer field
/// name: `used_memory` is not in `used_memory_rss`).
fn mentions(text: &str, word: &str) -> bool {
    let part_of_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(part_of_name) && !after.is_some_and(part_of_name)
    })
}

#[test]
fn descriptions_name_the_sources_and_units_fit() {
    let mib = mib();
    let mut problems = Vec::new();
    for o in redis_objects() {
        let Some(node) = mib.nodes.get(o.name) else {
            continue; // reported by the test above
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
        if node.units.as_deref() != o.units {
            problems.push(format!(
                "{}: UNITS {:?} in the MIB, {:?} in the catalogue (src/metrics/)",
                o.name, node.units, o.units
            ));
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

#[test]
fn the_mib_defines_no_readable_object_the_agent_does_not_serve() {
    let served: BTreeSet<&str> = redis_objects().map(|o| o.name).collect();
    let unserved: Vec<String> = mib()
        .nodes
        .values()
        .filter(|n| n.is_readable() && !served.contains(n.name.as_str()))
        .map(|n| format!("{} ({}, {:?})", n.name, n.oid, n.access))
        .collect();
    assert!(
        unserved.is_empty(),
        "{MODULE} defines objects the agent does not serve (add them to \
         src/metrics/ or remove them from the MIB): {unserved:?}"
    );
}

// ---------------------------------------------------------------------------
// Tables and their indexes.

/// What an index object must be.
#[derive(Debug, Clone, Copy)]
enum IndexSyntax {
    /// `Integer32 (min..max)`.
    Integer { min: i64, max: i64 },
    /// `DisplayString (SIZE (min..max))`, not IMPLIED.
    Text { min: i64, max: i64 },
}

#[derive(Debug, Clone, Copy)]
struct IndexObject {
    name: &'static str,
    syntax: IndexSyntax,
    /// What its DESCRIPTION must name: where the agent takes it from.
    source: &'static [&'static str],
}

const MAX_I32: i64 = i32::MAX as i64;

/// The agent numbers instances from 1.
const INSTANCE_INDEX: IndexObject = IndexObject {
    name: "redisInstanceIndex",
    syntax: IndexSyntax::Integer {
        min: 1,
        max: MAX_I32,
    },
    source: &["configuration"],
};

enum Linkage {
    /// INDEX { .. }; the last object is column 1 of the entry.
    Index(Vec<IndexObject>),
    /// AUGMENTS { row }.
    Augments(&'static str),
}

/// A table of the agent: its served columns and how its rows are indexed.
struct TableSpec {
    columns: &'static [ObjectDef],
    linkage: Linkage,
}

impl TableSpec {
    /// The entry's arcs below the root, from its columns (which must agree).
    fn entry_arcs(&self) -> Result<&'static [u32], String> {
        let first = self.columns.first().ok_or("a table without columns")?;
        let entry = &first.arcs[..first.arcs.len() - 1];
        for c in self.columns {
            if c.arcs.len() != first.arcs.len() || !c.arcs.starts_with(entry) {
                return Err(format!("{} is not beside {}", c.name, first.name));
            }
        }
        Ok(entry)
    }

    /// The index objects that are columns of this entry.
    fn own_index(&self) -> Vec<IndexObject> {
        match &self.linkage {
            Linkage::Index(objects) => objects.last().copied().into_iter().collect(),
            Linkage::Augments(_) => Vec::new(),
        }
    }
}

/// Every table the agent serves, with the INDEX it builds its rows with,
/// as the table in `redis_snmp::metrics` (`TABLES`) declares it.
fn tables() -> Vec<TableSpec> {
    TABLES
        .iter()
        .map(|t| {
            let own = |syntax| IndexObject {
                name: t.index.own_object().expect("an index object"),
                syntax,
                source: t.rows_from,
            };
            let linkage = match (t.augments, t.index) {
                (Some(row), _) => Linkage::Augments(row),
                (None, RowIndex::Instance) => Linkage::Index(vec![INSTANCE_INDEX]),
                (None, RowIndex::InstanceAndNumber { min, .. }) => Linkage::Index(vec![
                    INSTANCE_INDEX,
                    own(IndexSyntax::Integer {
                        min: i64::from(min),
                        max: MAX_I32,
                    }),
                ]),
                (None, RowIndex::InstanceAndName { .. }) => Linkage::Index(vec![
                    INSTANCE_INDEX,
                    own(IndexSyntax::Text {
                        min: 1,
                        max: MAX_NAME_INDEX_LEN as i64,
                    }),
                ]),
                // The parent's index object is checked with its own table.
                (None, RowIndex::InstanceNameAndName { parent, .. }) => Linkage::Index(vec![
                    INSTANCE_INDEX,
                    IndexObject {
                        name: parent,
                        syntax: IndexSyntax::Text {
                            min: 1,
                            max: MAX_NAME_INDEX_LEN as i64,
                        },
                        source: &[],
                    },
                    own(IndexSyntax::Text {
                        min: 1,
                        max: MAX_SECOND_NAME_INDEX_LEN as i64,
                    }),
                ]),
            };
            TableSpec {
                columns: t.columns,
                linkage,
            }
        })
        .collect()
}

/// Whether an index object's declared type is what the agent puts in OIDs.
fn check_index_object(mib: &Mib, entry: &Oid, ix: &IndexObject) -> Result<(), String> {
    let node = mib.nodes.get(ix.name).ok_or("not in the MIB")?;
    if node.oid.parent().as_ref() != Some(entry) || node.oid.as_slice().last() != Some(&1) {
        return Err(format!("at {}, not column 1 of {entry}", node.oid));
    }
    if node.kind != "column" || node.access.as_deref() != Some("noaccess") {
        return Err(format!(
            "a {} with access {:?}, not a not-accessible column",
            node.kind, node.access
        ));
    }
    let ty = node.syntax.as_ref().ok_or("no SYNTAX")?;
    let t = mib.resolve(ty)?;
    let (ok, min, max) = match ix.syntax {
        IndexSyntax::Integer { min, max } => (
            t.basetype == "Integer32" && named_numbers(ty).is_empty(),
            min,
            max,
        ),
        IndexSyntax::Text { min, max } => (
            t.basetype == "OctetString" && t.derives_from("SNMPv2-TC::DisplayString"),
            min,
            max,
        ),
    };
    if !ok || ranges(ty) != [(min, max)] {
        return Err(format!(
            "must be {:?} ({min}..{max}); the MIB says {t:?} {:?}",
            ix.syntax,
            ranges(ty)
        ));
    }
    let description = node.description_words();
    for name in ix.source {
        if !mentions(&description, name) {
            return Err(format!(
                "the DESCRIPTION does not name {name}, where the agent takes it from"
            ));
        }
    }
    Ok(())
}

#[test]
fn every_table_is_indexed_as_the_agent_indexes_it() {
    let mib = mib();
    let root = root();
    let objects = root.child(&[3]).unwrap();
    let tables = tables();
    let mut problems = Vec::new();

    // Each served object is a legacy scalar or a column of exactly one table.
    for o in redis_objects() {
        let homes = tables
            .iter()
            .filter(|t| t.columns.iter().any(|c| c.name == o.name))
            .count();
        if homes != usize::from(!is_legacy(o)) {
            problems.push(format!("{} is in {homes} tables of this test", o.name));
        }
    }

    let mut entries = BTreeSet::new();
    for table in &tables {
        let arcs = match table.entry_arcs() {
            Ok(arcs) => arcs,
            Err(e) => {
                problems.push(e);
                continue;
            }
        };
        let entry_oid = root.child(arcs).unwrap();
        entries.insert(entry_oid.clone());
        let Some(entry) = mib.node_at(&entry_oid) else {
            problems.push(format!("no entry at {entry_oid}"));
            continue;
        };
        let table_oid = entry_oid.parent().unwrap();
        let table_node = mib.node_at(&table_oid);
        if entry.kind != "row"
            || arcs.last() != Some(&1)
            || table_node.map(|t| t.kind.as_str()) != Some("table")
            || table_oid.parent().as_ref() != Some(&objects)
        {
            problems.push(format!(
                "{}: want a row at redisObjects.K.1 of a table, it is a {} at {entry_oid}",
                entry.name, entry.kind
            ));
        }
        match &table.linkage {
            Linkage::Index(index) => {
                let want: Vec<&str> = index.iter().map(|i| i.name).collect();
                if entry.index != want || entry.augments.is_some() || entry.implied {
                    problems.push(format!(
                        "{}: INDEX {:?} (AUGMENTS {:?}, IMPLIED {}), the agent builds INDEX {want:?}",
                        entry.name, entry.index, entry.augments, entry.implied
                    ));
                }
            }
            Linkage::Augments(row) => {
                if entry.augments.as_deref() != Some(*row) || !entry.index.is_empty() {
                    problems.push(format!(
                        "{}: AUGMENTS {:?} INDEX {:?}; the agent indexes it as {row}",
                        entry.name, entry.augments, entry.index
                    ));
                }
            }
        }
        let own = table.own_index();
        for ix in &own {
            if let Err(e) = check_index_object(mib, &entry_oid, ix) {
                problems.push(format!("{} (index of {}): {e}", ix.name, entry.name));
            }
        }
        // Every column of the entry is its index or served by this table.
        for col in mib
            .nodes
            .values()
            .filter(|n| n.oid.parent().as_ref() == Some(&entry_oid))
        {
            let known = own.iter().any(|i| i.name == col.name)
                || table.columns.iter().any(|c| c.name == col.name);
            if !known {
                problems.push(format!(
                    "{}: a column of {} not served",
                    col.name, entry.name
                ));
            }
        }
    }
    // The INDEX objects other rows borrow are what this test says.
    if let Some(instance) = tables.first() {
        if let Ok(arcs) = instance.entry_arcs() {
            assert_eq!(arcs, INSTANCE_ENTRY);
        }
    }
    // No table in the MIB that the agent does not build.
    for n in mib.nodes.values() {
        if n.kind == "row" && !entries.contains(&n.oid) {
            problems.push(format!("{}: a row the agent does not build", n.name));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Decodes the index part of a served OID with the INDEX the MIB declares
/// for its row; returns the instance number (the first index).
fn decode_index(mib: &Mib, row: &Node, suffix: &[u32]) -> Result<u32, String> {
    let row = match &row.augments {
        Some(base) => mib.nodes.get(base).ok_or(format!("no row {base}"))?,
        None => row,
    };
    if row.index.is_empty() {
        return Err(format!("{} has no INDEX", row.name));
    }
    let mut rest = suffix;
    let mut first = None;
    for (i, name) in row.index.iter().enumerate() {
        let node = &mib.nodes[name];
        let ty = node.syntax.as_ref().ok_or(format!("{name}: no SYNTAX"))?;
        let t = mib.resolve(ty)?;
        let within = |v: i64| ranges(ty).iter().all(|(lo, hi)| (*lo..=*hi).contains(&v));
        match t.basetype.as_str() {
            "Integer32" => {
                let (&v, tail) = rest.split_first().ok_or(format!("{name}: missing"))?;
                if !within(i64::from(v)) || v > i32::MAX as u32 {
                    return Err(format!("{name} = {v} is outside {:?}", ranges(ty)));
                }
                first.get_or_insert(v);
                rest = tail;
            }
            "OctetString" => {
                let implied = row.implied && i + 1 == row.index.len();
                let (bytes, tail) = if implied {
                    (rest, &rest[rest.len()..])
                } else {
                    let (&len, tail) = rest.split_first().ok_or(format!("{name}: no length"))?;
                    if tail.len() < len as usize {
                        return Err(format!("{name}: length {len}, only {} left", tail.len()));
                    }
                    tail.split_at(len as usize)
                };
                if !within(bytes.len() as i64) {
                    return Err(format!(
                        "{name}: {} octets, outside SIZE {:?}",
                        bytes.len(),
                        ranges(ty)
                    ));
                }
                let printable = |b: &u32| (0x20..=0x7e).contains(b);
                if t.derives_from("SNMPv2-TC::DisplayString") && !bytes.iter().all(printable) {
                    return Err(format!("{name}: {bytes:?} is not a DisplayString"));
                }
                if bytes.iter().any(|b| *b > 255) {
                    return Err(format!("{name}: {bytes:?} are not octets"));
                }
                rest = tail;
            }
            other => return Err(format!("{name}: an index of type {other}")),
        }
    }
    if !rest.is_empty() {
        return Err(format!(
            "{rest:?} left over after the INDEX {:?}",
            row.index
        ));
    }
    first.ok_or(format!("{}: the first index is not a number", row.name))
}

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
    // What the optional commands told of the master: CONFIG GET databases,
    // SLOWLOG LEN and GET 1, LATENCY LATEST (one event name as long as an
    // index may be, one longer: left out).
    let longest = "e".repeat(MAX_NAME_INDEX_LEN);
    let too_long = "e".repeat(MAX_NAME_INDEX_LEN + 1);
    let master_extras = Extras {
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
            (&longest, 1_795_362_800, 1, 1),
            (&too_long, 1_795_362_800, 1, 1),
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
        keys: Some(key_report(&longest)),
        ..Extras::default()
    };
    // And of a sentinel: SENTINEL MASTERS, with the same extremes.
    let sentinel_extras = Extras {
        sentinel_masters: vec![
            watched_master("mymaster", "master"),
            watched_master("cache-2", "s_down,o_down,master"),
            watched_master(&longest, "s_down,master"),
            watched_master(&too_long, "master"),
        ],
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
    // values: one raised on the master's used memory, one per replica of
    // its lag.
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
    let mut evaluator = Alarms::new(&alarms, &layout);
    let mut part: Vec<(Oid, Value)> = served
        .iter()
        .filter(|(i, _, _)| *i == 1)
        .map(|(_, o, v)| (o.clone(), v.clone()))
        .collect();
    part.sort_by(|a, b| a.0.cmp(&b.0));
    let raised = evaluator.evaluate(1, true, &[&part], 1_795_362_900);
    assert!(raised.events.len() >= 2, "{:?}", raised.events);
    for (oid, value) in raised.rows {
        served.push((1, oid, value));
    }

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
        let wire = value.wire_type();
        if wire != def.syntax.wire_type() {
            problems.push(format!(
                "{oid} ({}): sent as {wire:?}, declared {:?}",
                def.name, def.syntax
            ));
        }
        // An enumerated value is one of the MIB's named numbers.
        let named = mib.nodes.get(def.name).and_then(|n| n.syntax.as_ref());
        if let (Value::Integer(n), Some(ty)) = (&*value, named) {
            let numbers = named_numbers(ty);
            if !numbers.is_empty() && !numbers.iter().any(|(_, v)| *v == i64::from(*n)) {
                problems.push(format!(
                    "{oid} ({}): {n} is none of the MIB's {numbers:?}",
                    def.name
                ));
            }
        }
        // A name column carries the string its row is indexed by; a key
        // column the instance's name and that string (`row_key`).
        if let Some(kind) = row_name_column(def) {
            let named_by: Option<Vec<u8>> = suffix
                .get(2..)
                .filter(|bytes| suffix.get(1).copied() == Some(bytes.len() as u32))
                .and_then(|bytes| bytes.iter().map(|b| u8::try_from(*b).ok()).collect());
            let expected = named_by.map(|name| match kind {
                RowName::Index => name,
                RowName::InstanceAndIndex => redis_snmp::redis::readings::row_key(
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
        if is_legacy(def) {
            legacy_seen += 1;
            if suffix != [0] || *index != 1 {
                problems.push(format!("{oid}: a legacy scalar of instance {index}"));
            }
            continue;
        }
        let row_oid = def_oid.parent().unwrap();
        let Some(row) = mib.node_at(&row_oid).filter(|r| r.kind == "row") else {
            problems.push(format!("{oid} ({}): no row at {row_oid}", def.name));
            continue;
        };
        rows_seen.insert(row.name.clone());
        match decode_index(mib, row, suffix) {
            Ok(instance) if instance == *index => {}
            Ok(instance) => problems.push(format!(
                "{oid} ({}): instance {instance}, built for {index}",
                def.name
            )),
            Err(e) => problems.push(format!("{oid} ({}): {e}", def.name)),
        }
    }
    assert_eq!(legacy_seen, LEGACY_SCALARS.len(), "legacy scalars served");
    // Every table got rows from these captures, so every INDEX was tried.
    for table in tables() {
        let arcs = table.entry_arcs().unwrap();
        let entry = mib.node_at(&root.child(arcs).unwrap()).expect("entry");
        if !rows_seen.contains(&entry.name) {
            problems.push(format!("no row of {} was built", entry.name));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------
// Notifications.

fn notification_oid(root: &Oid, def: &NotificationDef) -> Oid {
    root.child(&[NOTIFICATIONS_BRANCH, def.number]).unwrap()
}

/// What a notification's DESCRIPTION must name beyond what all share: the
/// values whose transition sends it (`notify::redis_transitions`). Keyed by
/// the typed notification, exhaustively: a new one must be placed here.
fn transition_names(event: RedisEvent) -> &'static [&'static str] {
    use RedisEvent::*;
    match event {
        InstanceDown => &["redisInstanceState", "up(1)", "down(2)"],
        InstanceUp => &["redisInstanceState", "down(2)", "up(1)"],
        Restarted => &["run_id"],
        RoleChanged => &["role"],
        ReplicationLinkDown | ReplicationLinkUp => &["master_link_status", "up", "down"],
        PersistenceFailed => &["rdb_last_bgsave_status", "aof_last_write_status", "err"],
        CertificateExpiring | CertificateExpiringCleared => {
            &["cert_expiry_warning", "redisInstanceCertExpiresIn"]
        }
        ThresholdCrossed => &["[[alarm]]", "redisAlarmTrigger", "count"],
        ThresholdRearmed => &["redisAlarmRearm", "redisThresholdCrossed"],
    }
}

/// What every notification's DESCRIPTION must say, in the words of
/// `notify` and of the configuration: the first poll is the baseline, the
/// rate limit, and how to turn it off.
const NOTIFICATION_TERMS: &[&str] = &["baseline", "max_per_minute", "[notifications]"];

/// Whether an object is a column of a table with one row per instance
/// (`redisInstanceTable` or an entry that AUGMENTS it): the agent sends a
/// notification's objects with the instance number as the whole index.
fn per_instance_table(name: &str) -> bool {
    tables().iter().any(|t| {
        let per_instance = match &t.linkage {
            Linkage::Augments(row) => *row == "redisInstanceEntry",
            Linkage::Index(index) => index.len() == 1 && index[0].name == INSTANCE_INDEX.name,
        };
        per_instance && t.columns.iter().any(|c| c.name == name)
    })
}

#[test]
fn every_notification_the_agent_sends_is_in_the_mib_with_its_oid_and_objects() {
    let mib = mib();
    let root = root();
    let mut problems = Vec::new();
    let mut numbers = BTreeSet::new();
    for &event in RedisEvent::ALL {
        let def = event.def();
        if !numbers.insert(def.number) {
            problems.push(format!("{}: number {} twice", def.name, def.number));
        }
        let oid = notification_oid(&root, def);
        let Some(node) = mib.nodes.get(def.name).filter(|n| n.kind == "notification") else {
            let there = mib.node_at(&oid).map(|n| n.name.as_str());
            problems.push(format!(
                "{}: no NOTIFICATION-TYPE of that name in {MODULE} (at {oid}: {there:?})",
                def.name
            ));
            continue;
        };
        if node.oid != oid {
            problems.push(format!(
                "{}: MIB says {}, agent sends {oid}",
                def.name, node.oid
            ));
        }
        if node.status.as_deref() != Some("current") {
            problems.push(format!("{}: STATUS {:?}", def.name, node.status));
        }
        if node.objects != def.object_names() {
            problems.push(format!(
                "{}: OBJECTS {:?}, the agent sends {:?}",
                def.name,
                node.objects,
                def.object_names()
            ));
        }
        // Each object goes out as `<column>.<instance>`: that must be a
        // whole instance of a served column, decoded by the MIB's INDEX;
        // the columns of redisAlarmTable go out with the alarm's row,
        // `<column>.<instance>.<number>` (`Carried::instance`, here for
        // alarm 7 of instance 5).
        for carried in def.objects {
            let name = carried.object.name;
            let Some(object) = redis_objects().find(|o| o.name == name) else {
                problems.push(format!("{}: {name} is not served", def.name));
                continue;
            };
            let alarm_row = ALARM_COLUMNS.iter().any(|c| c.name == name);
            if !per_instance_table(name) && !alarm_row {
                problems.push(format!(
                    "{}: {name} is not a column of a table with one row per instance",
                    def.name
                ));
                continue;
            }
            let Some(suffix) = carried.instance(About::row(5, 7)) else {
                problems.push(format!("{}: {name} is sent at no instance", def.name));
                continue;
            };
            let row = root
                .child(object.arcs)
                .unwrap()
                .parent()
                .and_then(|r| mib.node_at(&r).cloned());
            match row.map(|row| decode_index(mib, &row, &suffix)) {
                Some(Ok(5)) => {}
                other => problems.push(format!(
                    "{}: {name}.5 does not decode as instance 5: {other:?}",
                    def.name
                )),
            }
        }
        let description = node.description_words();
        let transition = transition_names(event);
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

#[test]
fn the_mib_defines_no_notification_the_agent_does_not_send() {
    let root = root();
    let branch = root.child(&[NOTIFICATIONS_BRANCH]).unwrap();
    let mut problems = Vec::new();
    for n in mib().nodes.values().filter(|n| n.kind == "notification") {
        if !REDIS_NOTIFICATIONS.iter().any(|d| d.name == n.name) {
            problems.push(format!(
                "{} ({}): not in metrics::REDIS_NOTIFICATIONS",
                n.name, n.oid
            ));
        }
        if n.oid.parent().as_ref() != Some(&branch) {
            problems.push(format!(
                "{} ({}): not under redisNotifications",
                n.name, n.oid
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Descriptors are unique within a module, and libsmi warns about two that
/// differ only in case: a notification's name must be free.
#[test]
fn notification_names_are_free_descriptors() {
    let mib = mib();
    let mut problems = Vec::new();
    for def in REDIS_NOTIFICATIONS {
        if let Some(o) = redis_objects().find(|o| o.name.eq_ignore_ascii_case(def.name)) {
            problems.push(format!(
                "{}: src/notify.rs gives a notification the name of the object {} \
                 ({}); descriptors are unique in a module, so the MIB cannot define \
                 it: rename the notification in src/notify.rs",
                def.name,
                o.name,
                root().child(o.arcs).unwrap()
            ));
        }
        for n in mib.nodes.values() {
            if n.kind != "notification" && n.name.eq_ignore_ascii_case(def.name) {
                problems.push(format!(
                    "{}: also the name of the {} {}",
                    def.name, n.kind, n.name
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------
// Conformance, layout and what must never change.

#[test]
fn a_current_compliance_statement_requires_every_served_object_and_notification() {
    let mib = mib();
    let groups = mib.groups();
    let compliances = mib.compliances();
    let served: BTreeSet<&str> = redis_objects()
        .map(|o| o.name)
        .chain(REDIS_NOTIFICATIONS.iter().map(|n| n.name))
        .collect();
    let covering: Vec<&str> = compliances
        .iter()
        .filter(|(_, (status, _))| *status == "current")
        .filter(|(_, (_, mandatory))| {
            let required: BTreeSet<&str> = mandatory
                .iter()
                .flat_map(|g| groups.get(g).into_iter().flatten().copied())
                .collect();
            served.is_subset(&required)
        })
        .map(|(name, _)| *name)
        .collect();
    assert!(
        !covering.is_empty(),
        "no current MODULE-COMPLIANCE makes every served object and every notification \
         mandatory: {compliances:?}"
    );
}

/// Each table's columns are split among groups: no column is in two of
/// them, and together they hold every column. (A published group never
/// changes; columns a later revision adds get a group of their own, as the
/// name columns of revision 202611221700Z did.) A group holds the columns
/// of one table, or one feature's columns across tables: redisLimitsGroup
/// (a column of redisClientsTable and one of redisMemoryTable) and
/// redisClientAggregateGroup (the tables per client name and per user) of
/// revision 202611241300Z, and no other. The notifications are split the
/// same way: each in exactly one NOTIFICATION-GROUP.
/// The groups that hold one feature's columns across tables.
const FEATURE_GROUPS: &[&str] = &["redisLimitsGroup", "redisClientAggregateGroup"];

#[test]
fn each_table_is_split_among_its_own_groups_and_the_notifications_have_one() {
    let mib = mib();
    let groups = mib.groups();
    let mut problems = Vec::new();
    for table in tables() {
        let columns: BTreeSet<&str> = table.columns.iter().map(|c| c.name).collect();
        let touching: Vec<(&str, BTreeSet<&str>)> = groups
            .iter()
            .map(|(name, members)| (*name, members.iter().copied().collect::<BTreeSet<_>>()))
            .filter(|(_, members)| !members.is_disjoint(&columns))
            .collect();
        let mut covered = BTreeSet::new();
        for (name, members) in &touching {
            let strays: Vec<&&str> = members.difference(&columns).collect();
            if !strays.is_empty() && !FEATURE_GROUPS.contains(name) {
                problems.push(format!(
                    "{name} holds columns of {columns:?} and also {strays:?}"
                ));
            }
            for member in members.intersection(&columns) {
                if !covered.insert(*member) {
                    problems.push(format!("{member} is in more than one group, {name} too"));
                }
            }
        }
        let missing: Vec<&&str> = columns.difference(&covered).collect();
        if !missing.is_empty() {
            problems.push(format!("no group holds {missing:?}"));
        }
    }
    for notification in REDIS_NOTIFICATIONS {
        let holding: Vec<&str> = groups
            .iter()
            .filter(|(_, members)| members.contains(&notification.name))
            .map(|(name, _)| *name)
            .collect();
        if holding.len() != 1 {
            problems.push(format!(
                "{} is in {} groups: {holding:?}",
                notification.name,
                holding.len()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

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
    // The legacy textual convention, and the revision it came with.
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
    // LAST-UPDATED is the newest revision (smidump does not show it).
    let newest = revisions.iter().max().expect("revisions");
    let source = std::fs::read_to_string(mib_file(MODULE)).unwrap();
    let last_updated = source
        .lines()
        .find_map(|l| l.trim().strip_prefix("LAST-UPDATED"))
        .map(|v| v.trim().trim_matches('"'))
        .expect("LAST-UPDATED");
    let as_date = format!(
        "{}-{}-{} {}:{}",
        &last_updated[..4],
        &last_updated[4..6],
        &last_updated[6..8],
        &last_updated[8..10],
        &last_updated[10..12]
    );
    assert_eq!(&as_date, newest, "LAST-UPDATED {last_updated}");
}

#[test]
fn the_scaled_value_conventions_hold() {
    let mib = mib();
    for (factor, name, hint) in SCALED_TCS {
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

// ---------------------------------------------------------------------------
// smilint.

/// smilint messages accepted in `mibs/REDIS-SERVER-MIB.txt`: the error name
/// smilint prints in braces (`-m`), a piece of the message, and why the
/// message stays. Keep in step with the table in `mibs/README.md`.
struct AllowedLint {
    error: &'static str,
    contains: &'static str,
    why: &'static str,
}

const SMILINT_ALLOWED: &[AllowedLint] = &[];

#[test]
fn smilint_reports_only_allowed_messages() {
    let out = SMILINT.run_libsmi(MODULE, &["-l", "6", "-m", "-s"]);
    assert!(
        out.status.code().is_some(),
        "smilint died: {}\n{}",
        out.status,
        text(&out.stderr)
    );
    let all = text(&out.stdout) + &text(&out.stderr);
    let unexpected: Vec<&str> = all
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter(|l| {
            !SMILINT_ALLOWED
                .iter()
                .any(|a| l.contains(&format!("{{{}}}", a.error)) && l.contains(a.contains))
        })
        .collect();
    assert!(
        unexpected.is_empty(),
        "smilint -l 6 on {}:\n{}",
        mib_file(MODULE).display(),
        unexpected.join("\n")
    );
}

#[test]
fn smilint_allow_list_is_documented() {
    let readme = std::fs::read_to_string(repo_dir().join("mibs/README.md")).unwrap();
    for a in SMILINT_ALLOWED {
        assert!(!a.why.is_empty(), "{{{}}} needs a reason", a.error);
        assert!(
            readme.contains(&format!("{{{}}}", a.error)),
            "mibs/README.md does not explain the allowed smilint message {{{}}}",
            a.error
        );
    }
}

// ---------------------------------------------------------------------------
// net-snmp.

/// The `-Tp` type labels net-snmp decodes a value with, for the wire type the
/// agent sends.
fn net_snmp_labels(syntax: Syntax) -> &'static [&'static str] {
    if matches!(syntax, Syntax::Enum | Syntax::TruthValue) {
        return &["EnumVal"];
    }
    match syntax.wire_type() {
        WireType::Integer => &["INTEGER", "Integer32"],
        WireType::OctetString => &["String"],
        WireType::ObjectIdentifier => &["ObjID"],
        WireType::IpAddress => &["IpAddr"],
        WireType::Counter32 => &["Counter"],
        WireType::Gauge32 => &["Gauge", "Unsigned"],
        WireType::TimeTicks => &["TimeTicks"],
        WireType::Opaque => &["Opaque"],
        WireType::Counter64 => &["Counter64"],
    }
}

#[test]
fn net_snmp_loads_the_module_and_resolves_every_object() {
    let mib = mib();
    let root = root();
    let (out, complaints) = snmptranslate(MODULE, &["-Tp", &root.to_string()]);
    assert!(
        out.status.success() && complaints.is_empty(),
        "snmptranslate -Tp {root} ({}):\n{}",
        out.status,
        complaints.join("\n")
    );
    let tree = text(&out.stdout);
    assert!(tree.starts_with("+--redis(400)"), "{tree}");
    let nodes = parse_tp(&tree);

    let mut problems = Vec::new();
    for o in redis_objects() {
        let Some(node) = nodes.get(o.name) else {
            problems.push(format!("{}: not in snmptranslate -Tp", o.name));
            continue;
        };
        if node.access != "-R--" {
            problems.push(format!("{}: net-snmp access {}", o.name, node.access));
        }
        if !net_snmp_labels(o.syntax).contains(&node.label) {
            problems.push(format!(
                "{}: net-snmp decodes it as {}, the agent sends {:?}",
                o.name,
                node.label,
                o.syntax.wire_type()
            ));
        }
        // Named numbers as net-snmp prints them: `up(1), down(2)`.
        let values = match (o.syntax, enumeration(o)) {
            (Syntax::TruthValue, _) => Some("true(1), false(2)".to_string()),
            (_, Some(_)) => mib.nodes[o.name].syntax.as_ref().map(|ty| {
                named_numbers(ty)
                    .iter()
                    .map(|(l, n)| format!("{l}({n})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }),
            _ => None,
        };
        if node.values.map(str::to_string) != values {
            problems.push(format!(
                "{}: net-snmp values {:?}, want {values:?}",
                o.name, node.values
            ));
        }
        if let Some(factor) = scale(o) {
            let tc = SCALED_TCS.iter().find(|(f, _, _)| *f == factor);
            if node.convention != tc.map(|(_, name, _)| *name) {
                problems.push(format!(
                    "{}: net-snmp sees the convention {:?}",
                    o.name, node.convention
                ));
            }
        }
    }
    // Rows with an INDEX of their own: net-snmp sees the same one.
    for table in tables() {
        let Linkage::Index(index) = &table.linkage else {
            continue;
        };
        let entry = mib.node_at(&root.child(table.entry_arcs().unwrap()).unwrap());
        let name = entry.map(|e| e.name.as_str()).unwrap_or_default();
        let want = index.iter().map(|i| i.name).collect::<Vec<_>>().join(", ");
        let got = nodes.get(name).and_then(|n| n.index);
        if got != Some(want.as_str()) {
            problems.push(format!("{name}: net-snmp INDEX {got:?}, want {want}"));
        }
    }
    let served: BTreeSet<&str> = redis_objects().map(|o| o.name).collect();
    for (name, node) in &nodes {
        if !node.access.is_empty() && node.access != "----" && !served.contains(name) {
            problems.push(format!("{name}: readable in net-snmp's view, not served"));
        }
    }

    // Every name resolves to the agent's OID (one run for all of them: one
    // line of output per name, in order, with blank lines between).
    let names: Vec<String> = redis_objects()
        .map(|o| format!("{MODULE}::{}", o.name))
        .collect();
    let mut args = vec!["-On"];
    args.extend(names.iter().map(String::as_str));
    let (out, complaints) = snmptranslate(MODULE, &args);
    let got = text(&out.stdout);
    let got: Vec<&str> = got.lines().filter(|l| !l.trim().is_empty()).collect();
    if !out.status.success() || !complaints.is_empty() || got.len() != names.len() {
        problems.push(format!(
            "snmptranslate -On ({}): {} lines for {} names; {complaints:?}",
            out.status,
            got.len(),
            names.len()
        ));
    }
    for (o, line) in redis_objects().zip(&got) {
        let want = root.child(o.arcs).unwrap().to_string();
        if line.trim() != want {
            problems.push(format!(
                "{}: snmptranslate -On gives {line:?}, want {want}",
                o.name
            ));
        }
    }
    problems.extend(net_snmp_notification_problems(&root));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// net-snmp (snmptrapd decodes notifications with it) resolves every
/// notification to the agent's OID, with the same OBJECTS in the same order.
fn net_snmp_notification_problems(root: &Oid) -> Vec<String> {
    let mut problems = Vec::new();
    let names: Vec<String> = REDIS_NOTIFICATIONS
        .iter()
        .map(|n| format!("{MODULE}::{}", n.name))
        .collect();
    let mut args = vec!["-On"];
    args.extend(names.iter().map(String::as_str));
    let (out, complaints) = snmptranslate(MODULE, &args);
    let got = text(&out.stdout);
    let got: Vec<&str> = got.lines().filter(|l| !l.trim().is_empty()).collect();
    if !out.status.success() || !complaints.is_empty() || got.len() != names.len() {
        problems.push(format!(
            "snmptranslate -On ({}): {} lines for {} notifications; {complaints:?}",
            out.status,
            got.len(),
            names.len()
        ));
    }
    for (def, line) in REDIS_NOTIFICATIONS.iter().zip(&got) {
        let want = notification_oid(root, def).to_string();
        if line.trim() != want {
            problems.push(format!(
                "{}: snmptranslate -On gives {line:?}, want {want}",
                def.name
            ));
        }
    }
    // `-Td`: one block per name, with `OBJECTS\t{ a, b }`.
    args[0] = "-Td";
    let (out, complaints) = snmptranslate(MODULE, &args);
    if !out.status.success() || !complaints.is_empty() {
        problems.push(format!(
            "snmptranslate -Td ({}): {complaints:?}",
            out.status
        ));
    }
    let definitions = text(&out.stdout);
    let mut objects = BTreeMap::new();
    let mut current = None;
    for line in definitions.lines() {
        if let Some(name) = line.strip_prefix(&format!("{MODULE}::")) {
            current = Some(name.trim());
        } else if let (Some(name), Some(list)) = (current, line.trim().strip_prefix("OBJECTS")) {
            objects.insert(name, list.trim());
        }
    }
    for def in REDIS_NOTIFICATIONS {
        let want = format!("{{ {} }}", def.object_names().join(", "));
        let got = objects.get(def.name);
        if got != Some(&want.as_str()) {
            problems.push(format!(
                "{}: net-snmp OBJECTS {got:?}, the agent sends {want}",
                def.name
            ));
        }
    }
    problems
}

/// The loader behind every test here refuses what smidump cannot read and a
/// module that is not the one asked for, so a broken MIB fails these tests
/// rather than passing them on an empty dump.
#[test]
fn the_loader_refuses_a_broken_copy_and_another_module() {
    mibtool::check_loader_refuses_broken_copies(MODULE);
}
