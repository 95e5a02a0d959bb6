//! Every field of every tested server's `INFO everything` is either
//! exported (read by a row of the agent's object table, `src/metrics/`,
//! or by one of the row tables the parser builds from INFO's repeated
//! lines, `src/redis/info.rs`) or deliberately skipped, with the reason, in
//! [`SKIPPED`]. A new server version with a new field fails here at once,
//! naming the field, the server and what to do.
//!
//! The captures are `tests/fixtures/redis/*-info.txt` (see the README
//! there); no server runs here.

use redis_snmp::metrics::{redis_objects, Source};
use redis_snmp::redis::info::{parse_kv_list, Info};
use redis_snmp::redis::info_sections;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The `INFO everything` captures of the servers the agent is tested with.
const CAPTURES: &[&str] = &[
    "6.2-master-info.txt",
    "6.2-replica-info.txt",
    "7.0-master-info.txt",
    "7.0-replica-info.txt",
    "8.2-master-info.txt",
    "8.2-replica-info.txt",
    "valkey-8.0-master-info.txt",
    "valkey-8.0-replica-info.txt",
    "valkey-9.1-master-info.txt",
    "valkey-9.1-replica-info.txt",
    "6.2-sentinel-info.txt",
    "7.0-sentinel-info.txt",
    "8.2-sentinel-info.txt",
    "valkey-8.0-sentinel-info.txt",
    "valkey-9.1-sentinel-info.txt",
];

const BUILD: &str = "how the binary was built or what it runs on; fixed while the server runs (an inventory tool's job, not a monitor's)";
const CLOCK: &str =
    "a clock, not a measurement: the agent tells the age of its data (redisInstanceDataAge)";
const DERIVED: &str = "computed by the server from exported fields";
const BYTES_OF_RATIO: &str =
    "the byte difference behind a ratio that is exported (redisMemFragRatio and its neighbours)";
const REPL_INTERNAL: &str = "an offset or id of the replication protocol's bookkeeping; redisReplOffset, redisReplReplicaOffset and redisReplId carry what an operator compares";
/// Valkey 9's atomic slot migration: not described by Valkey's INFO
/// documentation (valkey-doc commands/info.md) and not in the Valkey
/// source at hand (8.0), so what it counts is unconfirmed; a guess would
/// be a made-up meaning.
const SLOT_MIGRATION: &str = "memory of Valkey 9's atomic slot migration; neither Valkey's INFO documentation nor the source at hand says what it counts: not exported until it is confirmed";
const UNDOCUMENTED: &str = "a Valkey 9.1 field its INFO documentation does not describe and the source at hand (Valkey 8.0) lacks: not exported until what it counts is confirmed";
const DEFRAG_DETAIL: &str =
    "active defragmentation detail; the hits and misses (redisStDefragHits/Misses) are exported";

/// Fields deliberately not exported, and why. Fields ending in `_human`
/// are skipped by rule: the same number as the field without the suffix,
/// formatted for people, which is exported or listed here itself (the test
/// checks which).
const SKIPPED: &[(&str, &str)] = &[
    // Server
    ("redis_git_sha1", BUILD),
    ("redis_git_dirty", BUILD),
    ("redis_build_id", BUILD),
    ("arch_bits", BUILD),
    ("monotonic_clock", BUILD),
    ("multiplexing_api", BUILD),
    ("atomicvar_api", BUILD),
    ("gcc_version", BUILD),
    ("mem_allocator", BUILD),
    ("valkey_release_stage", BUILD),
    ("process_supervised", "how the server was started (upstart/systemd supervision); fixed while it runs"),
    ("availability_zone", "a label the operator configured (Valkey 8.0+), not a measurement"),
    ("listener0", "the addresses the server listens on; redisSrvTcpPort and the agent's own redisInstanceAddress say where it is reached"),
    ("server_time_usec", CLOCK),
    ("lru_clock", CLOCK),
    ("uptime_in_days", "uptime_in_seconds / 86400, exported as redisSrvUptime"),
    ("configured_hz", "the configured hz; the hz in use (dynamic-hz) is exported as redisSrvHz"),
    // Clients
    // Memory
    ("used_memory_peak_perc", DERIVED),
    ("used_memory_dataset_perc", DERIVED),
    ("allocator_frag_bytes", BYTES_OF_RATIO),
    ("allocator_rss_bytes", BYTES_OF_RATIO),
    ("rss_overhead_bytes", BYTES_OF_RATIO),
    ("allocator_muzzy", "jemalloc's muzzy pages, an allocator internal (Redis 7.2+/Valkey)"),
    ("used_memory_vm_total", DERIVED), // used_memory_vm_eval + used_memory_vm_functions (src/server.c)
    ("mem_cluster_slot_import", SLOT_MIGRATION),
    ("mem_cluster_slot_export", SLOT_MIGRATION),
    ("active_defrag_running", DEFRAG_DETAIL),
    // Persistence
    ("current_cow_size_age", "how old current_cow_size (redisPstCowSize) is, in seconds: a property of that reading"),
    ("aof_pending_rewrite", "server.aof_rewrite_scheduled printed a second time in the AOF part (src/server.c of Redis and Valkey): exported as redisPstAofRewriteSch from aof_rewrite_scheduled"),
    // Stats
    ("current_eviction_exceeded_time", "the running part of total_eviction_exceeded_time, which is exported (redisStEvictLimitMs)"),
    ("migrate_cached_sockets", "sockets MIGRATE keeps open to other servers, a cache detail"),
    ("active_defrag_key_hits", DEFRAG_DETAIL),
    ("active_defrag_key_misses", DEFRAG_DETAIL),
    ("total_active_defrag_time", DEFRAG_DETAIL),
    ("current_active_defrag_time", DEFRAG_DETAIL),
    // Replication
    ("master_replid2", REPL_INTERNAL),
    ("second_repl_offset", REPL_INTERNAL),
    ("repl_backlog_first_byte_offset", REPL_INTERNAL),
    ("slave_read_repl_offset", REPL_INTERNAL),
    ("replica_announced", "whether a replica lets Sentinel announce it (replica-announced), configuration"),
    // CPU
    // Modules and scripting engines
    ("engines_count", "how many scripting engines are loaded (Valkey 9.1: Lua, built in, plus engine modules): an inventory, not a measurement"),
    ("engines_total_used_memory", "the scripting engines' own memory (Valkey 9.1); with Lua alone it is used_memory_vm_total (69632 in both in the 9.1 capture), whose parts are exported (redisMemLua, redisMemVmFunctions)"),
    ("engines_total_memory_overhead", UNDOCUMENTED),
    // Sentinel
    ("sentinel_simulate_failure_flags", "a testing switch (SENTINEL SIMULATE-FAILURE), not a measurement"),
    ("engine_0", "one line per scripting engine (Valkey 9.1): an inventory; its memory is engines_total_used_memory"),
];

/// Repeated lines the parser turns into rows of a table, by name prefix
/// (the rest of the name is a number or the row's name), and the keys of
/// their `key=value,...` values that are exported.
const ROW_LINES: &[(&str, &str, &[&str])] = &[
    (
        "db",
        "redisKeyspaceTable",
        &[
            "keys",
            "expires",
            "avg_ttl",
            "subexpiry",
            "keys_with_volatile_items",
        ],
    ),
    (
        "slave",
        "redisReplicaTable",
        &["ip", "port", "state", "offset", "lag", "type"],
    ),
    (
        "cmdstat_",
        "redisCommandTable",
        &[
            "calls",
            "usec",
            "usec_per_call",
            "rejected_calls",
            "failed_calls",
        ],
    ),
    (
        "latency_percentiles_usec_",
        "redisCommandTable",
        &["p50", "p99", "p99.9"],
    ),
    ("errorstat_", "redisErrorTable", &["count"]),
    (
        "io_thread_",
        "redisThreadTable",
        &["clients", "reads", "writes"],
    ),
    // One line per module, each named `module` alone (no suffix).
    (
        "module",
        "redisModuleTable",
        &[
            "name", "ver", "api", "filters", "usedby", "using", "options",
        ],
    ),
];

/// Repeated lines not read at all, by name prefix (the rest is a number),
/// and why.
const SKIPPED_ROWS: &[(&str, &str)] = &[
    (
        "master",
        "a sentinel's watched masters: redisSentinelTable reads them from SENTINEL MASTERS, which says more, and from these lines only where SENTINEL MASTERS is refused (redis::replies::masters_from_info)",
    ),
];

/// Redis 8's Keysizes section: `db<N>_distrib_<type>_<sizes|items>` lines,
/// each a power-of-two histogram of the database's keys of that type,
/// exported as the rows of redisKeysizesTable (every bucket of every
/// capture reads: `info_sections::keysizes` leaves none unreadable).
const KEYSIZES: &str = "redisKeysizesTable";

/// Whether `name` is a line of the Keysizes section.
fn is_keysizes_line(name: &str) -> bool {
    name.strip_prefix("db").is_some_and(|rest| {
        rest.split_once("_distrib_").is_some_and(|(db, kind)| {
            !db.is_empty()
                && db.bytes().all(|b| b.is_ascii_digit())
                && (kind.ends_with("_sizes") || kind.ends_with("_items"))
        })
    })
}

/// Keys of repeated lines not exported, and why.
const SKIPPED_KEYS: &[(&str, &str, &str)] = &[];

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/redis")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every INFO field name some row of the object table reads.
fn exported_fields() -> BTreeMap<&'static str, &'static str> {
    let mut fields = BTreeMap::new();
    for def in redis_objects() {
        if let Source::Info { fields: names, .. } = def.source {
            for name in names {
                fields.entry(*name).or_insert(def.name);
            }
        }
    }
    fields
}

/// The row table a repeated line's name belongs to, with its exported keys.
fn row_line(name: &str) -> Option<(&'static str, &'static str, &'static [&'static str])> {
    ROW_LINES.iter().copied().find(|(prefix, _, _)| {
        name.strip_prefix(prefix).is_some_and(|rest| match *prefix {
            // `module` lines are named `module`, nothing after.
            "module" => rest.is_empty(),
            "db" | "slave" | "io_thread_" => {
                !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit())
            }
            _ => !rest.is_empty(),
        })
    })
}

#[test]
fn every_field_of_every_server_is_exported_or_skipped_with_a_reason() {
    let exported = exported_fields();
    let skipped: BTreeMap<&str, &str> = SKIPPED.iter().copied().collect();
    assert_eq!(skipped.len(), SKIPPED.len(), "a field is skipped twice");
    let mut seen_skipped = BTreeSet::new();
    let mut seen_skipped_keys = BTreeSet::new();
    let mut seen_skipped_rows = BTreeSet::new();
    let mut unknown = Vec::new();
    for capture in CAPTURES {
        let info = Info::parse(&fixture(capture));
        assert!(info.len() > 50, "{capture}: only {} fields", info.len());
        assert_eq!(
            info_sections::keysizes(&info).unreadable,
            0,
            "{capture}: a bucket of its Keysizes section does not read"
        );
        assert_eq!(info.unreadable_lines(), 0, "{capture}");
        let (mut n_exported, mut n_skipped) = (0, 0);
        for (name, value) in info.fields() {
            let is_exported = exported.contains_key(name);
            let is_skipped = skipped.contains_key(name);
            if let Some(base) = name.strip_suffix("_human") {
                // The human form of a field goes with the field: the
                // number is exported, or skipped for its own reason.
                if is_exported
                    || is_skipped
                    || !(exported.contains_key(base) || skipped.contains_key(base))
                {
                    unknown.push(format!(
                        "{capture}: {name}: a _human field goes with {base}, which must be exported or in SKIPPED (and it not)"
                    ));
                }
                n_skipped += 1;
                continue;
            }
            if is_keysizes_line(name) {
                n_exported += 1;
                continue;
            }
            if let Some((prefix, _)) = SKIPPED_ROWS.iter().find(|(prefix, _)| {
                name.strip_prefix(prefix)
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            }) {
                seen_skipped_rows.insert(*prefix);
                n_skipped += 1;
                continue;
            }
            if let Some((prefix, table, keys)) = row_line(name) {
                assert!(!is_exported && !is_skipped, "{name}");
                for (key, _) in parse_kv_list(value) {
                    if keys.contains(&key) {
                        continue;
                    }
                    match SKIPPED_KEYS.iter().find(|(p, k, _)| *p == prefix && *k == key) {
                        Some(_) => {
                            seen_skipped_keys.insert((prefix, key.to_string()));
                        }
                        None => unknown.push(format!(
                            "{capture}: {name}: key {key} of the {table} line is neither read nor in SKIPPED_KEYS"
                        )),
                    }
                }
                n_exported += 1;
                continue;
            }
            match (is_exported, is_skipped) {
                (true, false) => n_exported += 1,
                (false, true) => {
                    seen_skipped.insert(name.to_string());
                    n_skipped += 1;
                }
                (true, true) => unknown.push(format!(
                    "{name} is exported ({}) and in SKIPPED: take it out of SKIPPED",
                    exported[name]
                )),
                (false, false) => unknown.push(format!(
                    "{capture}: {name}:{value} is new: add a row to src/metrics/ (and the MIB), or to SKIPPED with the reason"
                )),
            }
        }
        println!("{capture}: {n_exported} fields exported, {n_skipped} skipped");
    }
    assert!(unknown.is_empty(), "\n{}", unknown.join("\n"));
    // No stale entries: every skipped field is in some capture.
    let stale: Vec<&str> = SKIPPED
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| !seen_skipped.contains(*name))
        .collect();
    assert!(stale.is_empty(), "in SKIPPED but in no capture: {stale:?}");
    for (prefix, _) in SKIPPED_ROWS {
        assert!(
            seen_skipped_rows.contains(prefix),
            "SKIPPED_ROWS {prefix} is in no capture"
        );
    }
    for (prefix, key, _) in SKIPPED_KEYS {
        assert!(
            seen_skipped_keys.contains(&(*prefix, key.to_string())),
            "SKIPPED_KEYS {prefix} {key} is in no capture"
        );
    }
    let mut by_reason: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, reason) in SKIPPED {
        by_reason.entry(reason).or_default().push(name);
    }
    for (reason, names) in by_reason {
        println!("skipped ({reason}): {}", names.join(", "));
    }
}

/// The Valkey fields its users look for are exported, under the objects
/// that say so.
#[test]
fn valkey_fields_are_exported_where_their_users_look() {
    let exported = exported_fields();
    for (field, object) in [
        ("valkey_version", "redisSrvVersion"),
        ("server_name", "redisSrvName"),
        ("server_mode", "redisSrvMode"),
    ] {
        assert_eq!(exported.get(field), Some(&object), "{field}");
    }
    // keys_with_volatile_items is Valkey 9's name for Redis 7.4's subexpiry.
    let info = Info::parse(&fixture("valkey-9.1-master-info.txt"));
    let line = info.get("db0").expect("db0");
    let volatile = parse_kv_list(line)
        .into_iter()
        .find(|(k, _)| *k == "keys_with_volatile_items")
        .map(|(_, v)| v.parse::<u64>().unwrap())
        .expect("keys_with_volatile_items");
    assert!(
        volatile > 0,
        "the capture has a hash field with a TTL: {line}"
    );
    let row = info.keyspace().into_iter().find(|r| r.db == 0).unwrap();
    assert_eq!(row.subexpiry, Some(volatile));
}

#[test]
fn keysizes_lines_are_told_by_their_name() {
    println!("exported as {KEYSIZES}");
    for name in [
        "db0_distrib_strings_sizes",
        "db2_distrib_hashes_items",
        "db15_distrib_zsets_items",
    ] {
        assert!(is_keysizes_line(name), "{name}");
    }
    for name in [
        "db0",
        "db_distrib_strings_sizes",
        "db0_distrib_strings",
        "dbx_distrib_sets_items",
    ] {
        assert!(!is_keysizes_line(name), "{name}");
    }
}
