//! The checks that matter, against every server the agent is tested with:
//! Redis 6.2, Redis 7.0 (Debian 12's), Redis 8.2, Valkey 8.0 and Valkey 9.1 (see
//! `tests/support/src/servers.rs`; `scripts/test-servers.sh` fetches them). Each
//! runs a real server, a real snmpd and the agent, and asserts what a user
//! reads through snmpd against what that server's own INFO says:
//!
//! - `legacy_scalars`: the 17 scalars of the Perl agent, typed as it typed
//!   them, equal to INFO (counters between two INFO reads around the GET);
//! - `info_tables`: every INFO-fed column is served exactly when the
//!   server's INFO has its field, text, enumerations and truth values equal
//!   INFO's, the server's own version and name, and the keyspace, command
//!   and error tables;
//! - `replica_link`: a master and its replica, the replica table, the link
//!   going down;
//! - `sentinel`: the same program as a sentinel: its mode, and the master
//!   it watches (SENTINEL MASTERS);
//! - `newer_fields`: the fields of revision 202611240040Z, each provoked
//!   for real (a client cut off at its output buffer limit, a set freed in
//!   the background, a request over Valkey's COMMANDLOG threshold), present
//!   and sane where the server reports the field, absent where it does not;
//! - `notifications`: instance down/up/restart, replication link down/up and
//!   a role change, received by snmptrapd.
//!
//! A server that is not there is skipped with a `SKIP` line saying why.
//! `capture_info_fixtures` (ignored; run it by name) rewrote
//! `tests/fixtures/redis/*-info.txt` for the fetched servers.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use redis_snmp::metrics::{redis_objects, Conversion, ObjectDef, Source, INFO_GROUPS};
use redis_snmp::redis::info::Info;
use std::collections::HashMap;
use std::time::{Duration, Instant};
use testkit::servers::{start_sentinel, ServerKind};
use testkit::{
    legacy_oid, wait_until, Agent, AgentConfig, Redis, Snmpd, Snmptrapd, Var, LEGACY, REDIS_ROOT,
};

/// The server of `kind`, started with these extra config lines, or `None`
/// (after a SKIP line) when it is not there.
fn start(kind: ServerKind, test: &str, extra: &[&str]) -> Option<Redis> {
    let binary = kind.binary_or_skip(test)?;
    let redis = Redis::start_binary(&binary, extra);
    let info = redis.info_map();
    let own = info
        .get("valkey_version")
        .or_else(|| info.get("redis_version"))
        .unwrap_or("");
    assert!(
        own.starts_with(kind.version_prefix()),
        "{} at {} says version {own:?}",
        kind.label(),
        binary.display()
    );
    Some(redis)
}

/// The agent on a configuration file naming these servers `r1`, `r2`, ...
fn start_agent(snmpd: &Snmpd, servers: &[&Redis], dir: &std::path::Path) -> Agent {
    servers
        .iter()
        .enumerate()
        .fold(AgentConfig::new(snmpd), |config, (i, r)| {
            config.redis(&format!("r{}", i + 1), &r.address(), "")
        })
        .start(dir)
}

fn oid(suffix: &str) -> String {
    format!("{REDIS_ROOT}.{suffix}")
}

/// The numeric OID of an object's instance `index`.
fn object_oid(def: &ObjectDef, index: u32) -> String {
    let arcs: Vec<String> = def.arcs.iter().map(u32::to_string).collect();
    format!("{REDIS_ROOT}.{}.{index}", arcs.join("."))
}

fn get(snmpd: &Snmpd, suffix: &str) -> Var {
    snmpd.numeric().get_one(&oid(suffix))
}

/// Waits until GET of `suffix` shows `expected`; panics with the last value.
fn expect_value(snmpd: &Snmpd, suffix: &str, expected: &str) {
    let mut last = String::new();
    let ok = wait_until(Duration::from_secs(8), || {
        last = get(snmpd, suffix).value;
        last == expected
    });
    assert!(ok, "{} = {last:?}, expected {expected:?}", oid(suffix));
}

/// `INFO everything` as the agent's own parser reads it.
fn info_everything(redis: &Redis) -> Info {
    Info::parse(&redis.info_section("everything"))
}

/// The index of a row named by a string: its length, then its bytes.
fn name_index(name: &str) -> String {
    let mut s = name.len().to_string();
    for b in name.bytes() {
        s.push_str(&format!(".{b}"));
    }
    s
}

// ---------------------------------------------------------------------------
// legacy scalars

fn legacy_scalars(kind: ServerKind) {
    let Some(redis) = start(kind, "legacy_scalars", &[]) else {
        return;
    };
    for i in 1..=3 {
        redis.cli(&["SET", &format!("k{i}"), "v"]);
    }
    redis.cli(&["GET", "k1"]);
    redis.cli(&["GET", "k2"]);
    redis.cli(&["GET", "missing"]);
    let _sub = redis.spawn_cli(&["SUBSCRIBE", "c1", "c2"]);
    let _psub = redis.spawn_cli(&["PSUBSCRIBE", "p*"]);
    let _blpop = redis.spawn_cli(&["BLPOP", "list", "0"]);
    assert!(wait_until(Duration::from_secs(5), || {
        let i = redis.info_map();
        i.u64("pubsub_channels") == 2
            && i.u64("pubsub_patterns") == 1
            && i.u64("blocked_clients") == 1
    }));
    let snmpd = Snmpd::start();
    let _agent = Agent::start(&snmpd, &redis, &[]);
    let client = snmpd.numeric();
    let oids: Vec<String> = LEGACY.iter().map(|l| legacy_oid(l.0)).collect();
    let oid_refs: Vec<&str> = oids.iter().map(String::as_str).collect();

    // Values nothing but the test changes: equal to INFO, and the agent's
    // own connection is the one client more than INFO's reader sees.
    let stable = [
        "connected_slaves",
        "rdb_changes_since_last_save",
        "blocked_clients",
        "evicted_keys",
        "expired_keys",
        "keyspace_hits",
        "keyspace_misses",
        "pubsub_channels",
        "pubsub_patterns",
    ];
    let mut last = Vec::new();
    let ok = wait_until(Duration::from_secs(8), || {
        let out = client.get(&oid_refs);
        let info = redis.info_map();
        let vars = out.vars();
        last.clear();
        if vars.len() != LEGACY.len() {
            last.push(format!("{out}"));
            return false;
        }
        for ((_, name, ty, field), var) in LEGACY.iter().zip(&vars) {
            if var.ty != *ty {
                last.push(format!("{name}: type {:?}, expected {ty}", var.ty));
            } else if stable.contains(field) && var.number() != Some(info.u64(field)) {
                last.push(format!(
                    "{name} = {}, INFO {field}:{}",
                    var.value,
                    info.u64(field)
                ));
            } else if *field == "connected_clients"
                && var.number() != Some(info.u64(field).saturating_sub(1))
            {
                last.push(format!(
                    "{name} = {}, INFO {field}:{} (with INFO's reader)",
                    var.value,
                    info.u64(field)
                ));
            }
        }
        last.is_empty()
    });
    assert!(ok, "{}: {last:#?}", kind.label());
    // The nine stable values are the ones the test made.
    let info = redis.info_map();
    assert_eq!(info.u64("rdb_changes_since_last_save"), 3);
    assert_eq!(info.u64("keyspace_hits"), 2);
    assert_eq!(info.u64("keyspace_misses"), 1);

    // Counters and gauges that move: between INFO read before (once the
    // agent's snapshot is newer) and INFO read after the GET.
    let before = redis.info_map();
    let commands = legacy_oid(6);
    assert!(wait_until(Duration::from_secs(5), || client
        .get_one(&commands)
        .number()
        >= Some(before.u64("total_commands_processed"))));
    let vars = client.get(&oid_refs).vars();
    let after = redis.info_map();
    for ((n, name, _, field), var) in LEGACY.iter().zip(&vars) {
        let v = var.u64();
        let (lo, hi) = match *n {
            // centiseconds of CPU
            7 | 8 => (
                (before.f64(field) * 100.0).floor() as u64,
                (after.f64(field) * 100.0).ceil() as u64,
            ),
            // memory moves both ways
            3 | 17 => {
                let (b, a) = (before.u64(field), after.u64(field));
                (b.min(a) * 9 / 10, b.max(a) * 11 / 10)
            }
            5 | 6 | 16 => (before.u64(field), after.u64(field)),
            _ => continue,
        };
        assert!(
            lo <= v && v <= hi,
            "{}: {name} = {v}, INFO {field} from {lo} to {hi}",
            kind.label()
        );
    }
}

// ---------------------------------------------------------------------------
// the INFO-fed tables

/// Fields whose numbers do not move while the test reads them: served
/// equal to INFO.
const STABLE_NUMBERS: &[&str] = &[
    "process_id",
    "tcp_port",
    "hz",
    "maxclients",
    "maxmemory",
    "connected_slaves",
    "repl_backlog_size",
    "rdb_changes_since_last_save",
    "rdb_saves",
    "total_error_replies",
    "keyspace_hits",
    "keyspace_misses",
    "expired_keys",
    "evicted_keys",
    "blocked_clients",
    "pubsub_channels",
    "sync_full",
    // Valkey's
    "evicted_scripts",
    "expired_fields",
    "acl_access_denied_db",
    "acl_access_denied_tls_cert",
    "replicas_waiting_psync",
];

fn info_tables(kind: ServerKind) {
    let Some(redis) = start(
        kind,
        "info_tables",
        &[
            "databases 4",
            "hz 13",
            "maxclients 321",
            "maxmemory 123456789",
            "maxmemory-policy allkeys-lru",
        ],
    ) else {
        return;
    };
    redis.cli(&["SET", "a", "1"]);
    redis.cli(&["SET", "b", "2", "EX", "1000"]);
    redis.cli(&["-n", "2", "SET", "c", "3"]);
    redis.cli(&["GET", "a"]);
    redis.cli(&["LPUSH", "a", "x"]); // WRONGTYPE
    redis.cli(&["HSET", "h", "f1", "v", "f2", "v"]);
    let field_ttl = kind == ServerKind::Valkey91;
    // Hash fields with their own TTL: Redis 7.4+ counts the keys holding
    // one as db0's subexpiry, Valkey 9.0+ as keys_with_volatile_items.
    let counts_field_ttl = field_ttl || kind == ServerKind::Redis82;
    if kind == ServerKind::Redis82 {
        assert_eq!(
            redis.cli(&["HEXPIRE", "h", "1000", "FIELDS", "1", "f1"]),
            "1"
        );
    }
    if field_ttl {
        // A hash field with its own TTL (Valkey 9.0+): db0's
        // keys_with_volatile_items.
        assert_eq!(
            redis.cli(&["HEXPIRE", "h", "1000", "FIELDS", "1", "f1"]),
            "1"
        );
        // A field that expires at once: expired_fields (redisStExpFields).
        redis.cli(&["HSET", "h2", "f", "v", "g", "v"]);
        redis.cli(&["HPEXPIRE", "h2", "1", "FIELDS", "1", "f"]);
        assert!(wait_until(Duration::from_secs(5), || {
            redis.cli(&["HGET", "h2", "f"]).is_empty()
                && redis.info_map().get("expired_fields") == Some("1")
        }));
    }
    let snmpd = Snmpd::start();
    let _agent = Agent::start(&snmpd, &redis, &[]);
    // db0's keys (a, b, h and on Valkey 9.1 h2), once the first poll is
    // served.
    expect_value(&snmpd, "3.10.1.2.1.0", if field_ttl { "4" } else { "3" });
    if field_ttl {
        // A client pause (CLIENT PAUSE), as Valkey 9.1 reports it.
        assert_eq!(redis.cli(&["CLIENT", "PAUSE", "60000", "WRITE"]), "OK");
        expect_value(&snmpd, "3.3.1.11.1", "\"client_pause\"");
    }

    let info = info_everything(&redis);
    let served: HashMap<String, Var> = snmpd
        .numeric()
        .bulkwalk(&oid("3"))
        .vars()
        .into_iter()
        .map(|v| (v.name.clone(), v))
        .collect();
    let mut wrong = Vec::new();
    let mut compared = 0;
    for def in INFO_GROUPS.iter().flat_map(|g| g.iter()) {
        let Source::Info { fields, conversion } = def.source else {
            continue;
        };
        let name = def.name;
        let var = served.get(&object_oid(def, 1));
        // A share of a limit is absent where the limit is 0 (none) or unsaid.
        let no_limit = match conversion {
            Conversion::PercentOf(whole) => info.first(whole).is_none_or(|w| w.trim() == "0"),
            _ => false,
        };
        let Some(value) = info.first(fields).filter(|_| !no_limit) else {
            if let Some(var) = var {
                wrong.push(format!(
                    "{name} is served ({var}) but INFO has no {fields:?}"
                ));
            }
            continue;
        };
        let Some(var) = var else {
            wrong.push(format!(
                "{name} is absent but INFO says {fields:?} = {value:?}"
            ));
            continue;
        };
        compared += 1;
        let field = fields.iter().find(|f| info.contains(f)).unwrap();
        let ok = match conversion {
            Conversion::Text => var.text() == value,
            Conversion::Enum(names) => {
                var.number() == redis_snmp::metrics::enum_number(names, value).map(|n| n as u64)
            }
            Conversion::Truth => var.number() == Some(if value == "1" { 1 } else { 2 }),
            Conversion::Unsigned if STABLE_NUMBERS.contains(field) => {
                var.number() == value.parse().ok()
            }
            _ => var.number().is_some() || var.value.trim_start().starts_with('-'),
        };
        if !ok {
            wrong.push(format!("{name} = {var}, INFO {field}:{value}"));
        }
    }
    assert!(wrong.is_empty(), "{}:\n{}", kind.label(), wrong.join("\n"));
    assert!(compared > 100, "{}: only {compared} objects", kind.label());
    println!("{}: {compared} INFO-fed objects equal INFO", kind.label());

    // Who the server is, as its users name it: Valkey's own version (not
    // the compatibility redis_version:7.2.4) and name, and standalone mode
    // whether INFO says redis_mode or (Valkey) server_mode.
    let own_version = info
        .get("valkey_version")
        .or_else(|| info.get("redis_version"))
        .unwrap();
    assert!(own_version.starts_with(kind.version_prefix()));
    assert_eq!(
        served[&oid("3.2.1.1.1")].text(),
        own_version,
        "{}",
        kind.label()
    );
    assert_eq!(served[&oid("3.2.1.2.1")].value, "1", "standalone(1)");
    let name = served.get(&oid("3.2.1.12.1")).map(Var::text);
    if field_ttl {
        // Valkey 9.1's own counters and TLS section, as its INFO says.
        assert_eq!(
            served[&oid("3.3.1.12.1")].text(),
            "write",
            "redisCliPauseAction"
        );
        let left = served[&oid("3.3.1.13.1")].u64();
        assert!(0 < left && left <= 60000, "redisCliPausedMs {left}");
        assert_eq!(served[&oid("3.6.1.48.1")].u64(), 1, "redisStExpFields");
        assert_eq!(
            served[&oid("3.18.1.1.1")].text(),
            "none",
            "redisTlsSrvSerial"
        );
    }
    if kind.is_valkey() {
        assert_eq!(name.as_deref(), Some("valkey"), "{}", kind.label());
        assert_eq!(info.get("server_name"), Some("valkey"));
    } else {
        assert_eq!(name, None, "Redis says no server_name");
    }

    // Keyspace: every database, zero-filled, equal to INFO's db lines.
    for db in 0..4 {
        let row = info.keyspace().into_iter().find(|r| r.db == db);
        let keys = row.as_ref().map_or(0, |r| r.keys);
        let expires = row.as_ref().map_or(0, |r| r.expires);
        assert_eq!(
            served[&oid(&format!("3.10.1.2.1.{db}"))].u64(),
            keys,
            "{} db{db}",
            kind.label()
        );
        assert_eq!(served[&oid(&format!("3.10.1.3.1.{db}"))].u64(), expires);
    }
    assert_eq!(served[&oid("3.10.1.2.1.2")].u64(), 1);
    assert!(!served.contains_key(&oid("3.10.1.2.1.4")));
    // Keys with expiring hash fields: Redis 8's subexpiry and Valkey 9's
    // keys_with_volatile_items are served as redisKsSubexpiry; the others
    // report neither field.
    let db0 = info.get("db0").unwrap();
    let subexpiry = served.get(&oid("3.10.1.5.1.0"));
    if counts_field_ttl {
        assert!(
            db0.contains("keys_with_volatile_items=1") || db0.contains("subexpiry=1"),
            "{db0}"
        );
        assert_eq!(subexpiry.map(Var::u64), Some(1), "{}", kind.label());
    } else {
        assert!(
            !db0.contains("volatile") && !db0.contains("subexpiry"),
            "{db0}"
        );
        assert!(subexpiry.is_none(), "{}: {subexpiry:?}", kind.label());
    }

    // Commands and errors: SET was called twice (once more in db 2), LPUSH
    // failed with WRONGTYPE once.
    let set = served[&oid(&format!("3.12.1.2.1.{}", name_index("set")))].u64();
    assert_eq!(set, 3, "{} cmdstat_set calls", kind.label());
    let lpush = format!("3.12.1.2.1.{}", name_index("lpush"));
    assert_eq!(served[&oid(&lpush)].u64(), 1);
    let wrongtype = format!("3.13.1.2.1.{}", name_index("WRONGTYPE"));
    assert_eq!(served[&oid(&wrongtype)].u64(), 1, "{}", kind.label());
}

// ---------------------------------------------------------------------------
// replication

/// A master and a replica of the same kind, the link up.
fn master_and_replica(kind: ServerKind, test: &str) -> Option<(Redis, Redis)> {
    let master = start(kind, test, &[])?;
    let binary = kind.binary().unwrap();
    let replica = Redis::start_binary(
        &binary,
        &[&format!("replicaof 127.0.0.1 {}", master.port())],
    );
    assert!(
        wait_until(Duration::from_secs(10), || replica
            .info_map()
            .get("master_link_status")
            == Some("up")),
        "{}: the replica's link did not come up",
        kind.label()
    );
    Some((master, replica))
}

fn replica_link(kind: ServerKind) {
    let Some((mut master, replica)) = master_and_replica(kind, "replica_link") else {
        return;
    };
    master.cli(&["SET", "k", "v"]);
    let snmpd = Snmpd::start();
    let dir = tempfile::tempdir().unwrap();
    let _agent = start_agent(&snmpd, &[&master, &replica], dir.path());
    // Roles master(1), replica(2); the replica's link up(1) to the master.
    expect_value(&snmpd, "3.7.1.1.1", "1");
    expect_value(&snmpd, "3.7.1.1.2", "2");
    expect_value(&snmpd, "3.7.1.5.2", "1");
    assert_eq!(get(&snmpd, "3.7.1.3.2").text(), "127.0.0.1");
    assert_eq!(get(&snmpd, "3.7.1.4.2").u64(), u64::from(master.port()));
    expect_value(&snmpd, "3.7.1.2.1", "1"); // connected_slaves
                                            // The master's replica table: slot 1 is the replica, online.
    expect_value(&snmpd, "3.11.1.3.1.1", &replica.port().to_string());
    assert_eq!(get(&snmpd, "3.11.1.2.1.1").text(), "127.0.0.1");
    expect_value(&snmpd, "3.11.1.4.1.1", "\"online\"");
    // The replica's offset never runs ahead of the master's.
    let master_offset = master.info_map().u64("master_repl_offset");
    assert!(get(&snmpd, "3.11.1.5.1.1").u64() <= master_offset);
    assert!(get(&snmpd, "3.7.1.10.2").u64() <= master_offset);
    // The kind of connection: Valkey says type=replica once the sync is
    // done; Redis says nothing, and the column is absent.
    let line = master
        .info_map()
        .get("slave0")
        .unwrap_or_default()
        .to_string();
    let kind_column = get(&snmpd, "3.11.1.8.1.1");
    if kind.is_valkey() {
        assert!(line.contains("type=replica"), "{line}");
        assert_eq!(kind_column.text(), "replica");
    } else {
        assert!(!line.contains("type="), "{}: {line}", kind.label());
        assert!(
            kind_column.is_exception(),
            "{}: {kind_column}",
            kind.label()
        );
    }

    master.stop();
    // The replica notices: link down(2), and how long it has been down;
    // the master's row is down(2).
    expect_value(&snmpd, "3.7.1.5.2", "2");
    expect_value(&snmpd, "3.1.1.4.1", "2");
    let down_since = get(&snmpd, "3.7.1.8.2").value;
    assert!(
        down_since.parse::<i64>().is_ok_and(|s| s >= 0),
        "{}: redisReplDownSince = {down_since:?}",
        kind.label()
    );
}

// ---------------------------------------------------------------------------
// sentinel

/// One INFO section of the server at `port`, read by a bare RESP request
/// (a sentinel has no [`Redis`] guard).
fn info_at(port: u16, section: &str) -> String {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    conn.write_all(format!("INFO {section}\r\n").as_bytes())
        .unwrap();
    // `$<len>\r\n<payload>\r\n`
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    loop {
        let n = conn.read(&mut chunk).unwrap();
        assert!(n > 0, "the connection closed");
        buf.extend_from_slice(&chunk[..n]);
        let Some(eol) = buf.windows(2).position(|w| w == b"\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..eol]).to_string();
        let len: usize = head
            .trim_start_matches('$')
            .parse()
            .unwrap_or_else(|_| panic!("{head}"));
        if buf.len() >= eol + 2 + len {
            return String::from_utf8_lossy(&buf[eol + 2..eol + 2 + len]).to_string();
        }
    }
}

fn sentinel(kind: ServerKind) {
    let Some(master) = start(kind, "sentinel", &[]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // The same program, as a sentinel.
    let (_sentinel, port) = start_sentinel(kind, &master, dir.path());
    let snmpd = Snmpd::start();
    let _agent = AgentConfig::new(&snmpd)
        .redis("s", &format!("127.0.0.1:{port}"), "")
        .start(dir.path());

    // Its mode is sentinel(2), whether INFO says redis_mode (Redis) or
    // server_mode (Valkey); so the agent asks it SENTINEL MASTERS, and the
    // master it watches is a row.
    expect_value(&snmpd, "3.2.1.2.1", "2");
    let row = "1.8.109.121.109.97.115.116.101.114"; // instance 1, "mymaster"
    expect_value(
        &snmpd,
        &format!("3.14.1.5.{row}"),
        &master.port().to_string(),
    );
    assert_eq!(get(&snmpd, &format!("3.14.1.2.{row}")).value, "1"); // ok(1)
    assert_eq!(get(&snmpd, &format!("3.14.1.8.{row}")).value, "1"); // quorum
    assert_eq!(get(&snmpd, "3.15.1.1.1").value, "1"); // sentinel_masters
                                                      // Revision 202611240040Z: not in TILT (-1 since Redis 7.0; Redis 6.2
                                                      // has no such field), no script queued, no TILT yet (Valkey 9.0+).
    let tilt_since = get(&snmpd, "3.15.1.4.1");
    if kind == ServerKind::Redis62 {
        assert!(tilt_since.is_exception(), "{tilt_since}");
    } else {
        assert_eq!(tilt_since.value, "-1", "{}", kind.label());
    }
    assert_eq!(get(&snmpd, "3.15.1.6.1").value, "0"); // sentinel_scripts_queue_length
    let tilts = get(&snmpd, "3.15.1.5.1");
    // sentinel_total_tilt: Valkey 9.0+ and Redis 8.
    if matches!(kind, ServerKind::Valkey91 | ServerKind::Redis82) {
        assert_eq!(tilts.value, "0");
    } else {
        assert!(tilts.is_exception(), "{}: {tilts}", kind.label());
    }
    let info = Info::parse(&info_at(port, "server"));
    let own = info
        .get("valkey_version")
        .or_else(|| info.get("redis_version"))
        .unwrap()
        .to_string();
    assert!(own.starts_with(kind.version_prefix()), "{own}");
    assert_eq!(get(&snmpd, "3.2.1.1.1").text(), own);
}

// ---------------------------------------------------------------------------
// the fields of newer servers (revision 202611240040Z)

/// The value served for object `name` of instance 1, if any.
fn served_object(served: &HashMap<String, Var>, name: &str) -> Option<Var> {
    let def = redis_objects()
        .find(|d| d.name == name)
        .unwrap_or_else(|| panic!("{name} is not in the catalogue"));
    served.get(&object_oid(def, 1)).cloned()
}

fn walk_instance_tables(snmpd: &Snmpd) -> HashMap<String, Var> {
    snmpd
        .numeric()
        .bulkwalk(&oid("3"))
        .vars()
        .into_iter()
        .map(|v| (v.name.clone(), v))
        .collect()
}

/// A client that sends 200 `GET big` and never reads: its replies pile up
/// in the server until client-output-buffer-limit cuts it off.
fn overrun_output_buffer(redis: &Redis) {
    use std::io::Write;
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", redis.port())).unwrap();
    conn.write_all(&b"GET big\r\n".repeat(200)).unwrap();
    assert!(
        wait_until(Duration::from_secs(5), || {
            redis.cli(&["CLIENT", "LIST"]).lines().count() <= 1
        }),
        "the client that does not read was not disconnected"
    );
}

/// Issue 16's newer fields, read as each server reports them: present and
/// sane where the server has the field, absent where it has not. Each is
/// provoked for real: a client cut off at its output buffer limit, a set
/// freed in the background, a request over Valkey's COMMANDLOG threshold.
fn newer_fields(kind: ServerKind) {
    let Some(redis) = start(kind, "newer_fields", &[]) else {
        return;
    };
    assert_eq!(
        redis.cli(&[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "normal 1mb 1mb 0"
        ]),
        "OK"
    );
    // Valkey 8.1+ only: the others refuse the parameter.
    let commandlog = redis
        .cli(&["CONFIG", "SET", "commandlog-request-larger-than", "100"])
        .starts_with("OK");
    assert_eq!(commandlog, kind == ServerKind::Valkey91, "{}", kind.label());
    // A 200 kB value (zero bytes up to the x), and a 500-byte request.
    redis.cli(&["SETRANGE", "big", "199999", "x"]);
    redis.cli(&["SET", "k", &"y".repeat(500)]);
    overrun_output_buffer(&redis);
    // 200 strings: a hash table, freed in the background (its effort is
    // over LAZYFREE_THRESHOLD, src/lazyfree.c).
    let members: Vec<String> = (0..200).map(|i| format!("m{i}")).collect();
    let mut sadd = vec!["SADD", "s"];
    sadd.extend(members.iter().map(String::as_str));
    redis.cli(&sadd);
    assert_eq!(redis.cli(&["UNLINK", "s"]), "1");
    assert!(wait_until(Duration::from_secs(5), || {
        redis.info_map().get("lazyfreed_objects") == Some("1")
    }));

    let snmpd = Snmpd::start();
    let _agent = Agent::start(&snmpd, &redis, &[]);
    expect_value(&snmpd, "3.1.1.4.1", "1"); // up
    let first = walk_instance_tables(&snmpd);
    std::thread::sleep(Duration::from_millis(2100));
    let second = walk_instance_tables(&snmpd);
    let info = info_everything(&redis);
    let label = kind.label();
    let has = |field: &str| info.contains(field);

    // Every server here has lazyfreed_objects.
    assert_eq!(
        served_object(&second, "redisMemLazyfreed").map(|v| v.u64()),
        Some(1),
        "{label}"
    );
    // Output-buffer-limit disconnections: Redis 7.4+ and Valkey.
    let obuf = served_object(&second, "redisStObufDiscon").map(|v| v.u64());
    if has("client_output_buffer_limit_disconnections") {
        assert_eq!(obuf, Some(1), "{label}");
        assert_eq!(
            served_object(&second, "redisStQbufDiscon").map(|v| v.u64()),
            Some(0),
            "{label}"
        );
    } else {
        assert_eq!(obuf, None, "{label}");
        assert!(kind == ServerKind::Redis62 || kind == ServerKind::Redis70);
    }
    // The event loop: its counters move between two polls, and the time
    // spent on commands is part of the whole.
    let cycles = |s: &HashMap<String, Var>| served_object(s, "redisStElCycles").map(|v| v.u64());
    if has("eventloop_cycles") {
        let (a, b) = (cycles(&first).unwrap(), cycles(&second).unwrap());
        assert!(a < b, "{label}: eventloop_cycles {a} then {b}");
        let busy = served_object(&second, "redisStElUsec").unwrap().u64();
        let cmd = served_object(&second, "redisStElCmdUsec").unwrap().u64();
        assert!(0 < cmd && cmd <= busy, "{label}: {cmd} of {busy} µs");
        assert!(served_object(&second, "redisStElCyclesSec").is_some());
    } else {
        assert_eq!(cycles(&second), None, "{label}");
        assert!(served_object(&second, "redisStElUsec").is_none());
    }
    // Valkey's COMMANDLOG: the 500-byte SET is a large request.
    let requests = served_object(&second, "redisSlowlogReqLen").map(|v| v.u64());
    let replies = served_object(&second, "redisSlowlogRplLen");
    if commandlog {
        assert!(requests.is_some_and(|n| n >= 1), "{label}: {requests:?}");
        assert!(replies.is_some(), "{label}");
    } else {
        assert_eq!(requests, None, "{label}");
        assert!(replies.is_none(), "{label}");
    }
    // No snapshot child runs: its progress reads 0 of 0.
    for name in ["redisPstSaveKeys", "redisPstSaveKeysAll"] {
        assert_eq!(
            served_object(&second, name).map(|v| v.u64()),
            Some(0),
            "{label} {name}"
        );
    }
    // Fields of one server only.
    for (name, field) in [
        ("redisCpuActiveMain", "used_active_time_main_thread"),
        ("redisSrvClientsHz", "clients_hz"),
        ("redisMemFunctions", "used_memory_functions"),
        ("redisCliBlockKeys", "total_blocking_keys"),
    ] {
        assert_eq!(
            served_object(&second, name).is_some(),
            has(field),
            "{label}: {name} and INFO's {field}"
        );
    }
    assert_eq!(
        has("used_active_time_main_thread"),
        kind == ServerKind::Valkey91
    );
    if let Some(hz) = served_object(&second, "redisSrvClientsHz") {
        assert!(hz.u64() >= info.u64(&["hz"]).unwrap(), "{label}");
    }
    // The loading and full-sync fields exist only while a load or a
    // transfer runs: absent on this idle master.
    for name in [
        "redisPstLoadAge",
        "redisPstLoadPercent",
        "redisReplSyncTotal",
        "redisReplSyncPerc",
    ] {
        assert!(served_object(&second, name).is_none(), "{label} {name}");
    }
}

// ---------------------------------------------------------------------------
// notifications

/// Waits (at most `limit`) for a notification naming `name`.
fn expect_trap(trapd: &Snmptrapd, name: &str, limit: Duration) -> String {
    let mut line = None;
    wait_until(limit, || {
        line = trapd.received(name).into_iter().next();
        line.is_some()
    });
    line.unwrap_or_else(|| panic!("no {name} received; snmptrapd log:\n{}", trapd.log()))
}

fn notifications(kind: ServerKind) {
    let Some((mut master, replica)) = master_and_replica(kind, "notifications") else {
        return;
    };
    let trapd = Snmptrapd::start();
    let snmpd = Snmpd::sending_to(&trapd);
    let dir = tempfile::tempdir().unwrap();
    let _agent = start_agent(&snmpd, &[&master, &replica], dir.path());
    // The first poll is the baseline, which sends nothing.
    expect_value(&snmpd, "3.7.1.5.2", "1");
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        trapd.received("REDIS-SERVER-MIB").is_empty(),
        "{}",
        trapd.log()
    );

    let old_run_id = master.info_map().get("run_id").unwrap().to_string();
    master.stop();
    let line = expect_trap(&trapd, "redisInstanceDown", Duration::from_secs(4));
    assert!(line.contains("redisInstanceName.1 = STRING: r1"), "{line}");
    let line = expect_trap(&trapd, "redisReplicationLinkDown", Duration::from_secs(4));
    assert!(line.contains("redisInstanceName.2 = STRING: r2"), "{line}");
    assert!(
        line.contains("redisReplLinkStatus.2 = INTEGER: down(2)"),
        "{line}"
    );

    let started = Instant::now();
    master.start_again();
    expect_trap(&trapd, "redisInstanceUp", Duration::from_secs(4));
    let run_id = master.info_map().get("run_id").unwrap().to_string();
    assert_ne!(run_id, old_run_id);
    let line = expect_trap(&trapd, "redisRestarted", Duration::from_secs(4));
    assert!(line.contains(&run_id), "{line}\nrun_id {run_id}");
    // The replica retries its master every second, then resynchronises.
    let line = expect_trap(&trapd, "redisReplicationLinkUp", Duration::from_secs(15));
    assert!(
        line.contains("redisReplLinkStatus.2 = INTEGER: up(1)"),
        "{line}"
    );
    println!(
        "{}: link up {:?} after the master",
        kind.label(),
        started.elapsed()
    );

    replica.cli(&["REPLICAOF", "NO", "ONE"]);
    let line = expect_trap(&trapd, "redisRoleChanged", Duration::from_secs(4));
    assert!(
        line.contains("redisReplRole.2 = INTEGER: master(1)"),
        "{line}"
    );
}

macro_rules! server_tests {
    ($module:ident, $kind:ident) => {
        mod $module {
            use super::ServerKind;

            #[test]
            fn legacy_scalars() {
                super::legacy_scalars(ServerKind::$kind);
            }

            #[test]
            fn info_tables() {
                super::info_tables(ServerKind::$kind);
            }

            #[test]
            fn replica_link() {
                super::replica_link(ServerKind::$kind);
            }

            #[test]
            fn sentinel() {
                super::sentinel(ServerKind::$kind);
            }

            #[test]
            fn newer_fields() {
                super::newer_fields(ServerKind::$kind);
            }

            #[test]
            fn notifications() {
                super::notifications(ServerKind::$kind);
            }
        }
    };
}

server_tests!(redis_6_2, Redis62);
server_tests!(redis_7_0, Redis70);
server_tests!(redis_8_2, Redis82);
server_tests!(valkey_8_0, Valkey80);
server_tests!(valkey_9_1, Valkey91);

// ---------------------------------------------------------------------------
// fixtures

/// Rewrites `tests/fixtures/redis/{6.2,8.2,valkey-8.0,valkey-9.1}-{master,
/// replica}-info.txt`: `INFO everything` of a master and its replica, byte
/// for byte, after some traffic; and `{6.2,7.0,8.2,valkey-8.0,valkey-9.1}-
/// sentinel-info.txt`, a sentinel watching that master. Run by name:
/// `cargo test --features system-tests --test servers -- --ignored capture_info_fixtures`.
#[test]
#[ignore = "rewrites the fixtures; run by name"]
fn capture_info_fixtures() {
    let out = testkit::repo_root().join("tests/fixtures/redis");
    for (kind, prefix) in [
        (ServerKind::Redis62, "6.2"),
        (ServerKind::Redis70, "7.0"),
        (ServerKind::Redis82, "8.2"),
        (ServerKind::Valkey80, "valkey-8.0"),
        (ServerKind::Valkey91, "valkey-9.1"),
    ] {
        let Some((master, replica)) = master_and_replica(kind, "capture_info_fixtures") else {
            continue;
        };
        master.cli(&["SET", "a", "1"]);
        master.cli(&["SET", "b", "2", "EX", "1000"]);
        master.cli(&["-n", "2", "SET", "c", "3"]);
        master.cli(&["GET", "a"]);
        master.cli(&["GET", "missing"]);
        master.cli(&["LPUSH", "a", "x"]); // WRONGTYPE
        master.cli(&["HSET", "h", "f1", "v", "f2", "v"]);
        if matches!(kind, ServerKind::Valkey91 | ServerKind::Redis82) {
            // A hash field with a TTL: keys_with_volatile_items (Valkey),
            // subexpiry (Redis).
            master.cli(&["HEXPIRE", "h", "1000", "FIELDS", "1", "f1"]);
        }
        let _sub = master.spawn_cli(&["SUBSCRIBE", "chan"]);
        let offset = master.info_map().u64("master_repl_offset");
        assert!(wait_until(Duration::from_secs(10), || {
            replica.info_map().u64("slave_repl_offset") >= offset
                && master.info_map().u64("pubsub_channels") == 1
        }));
        std::thread::sleep(Duration::from_millis(1100)); // a replica lag of 0-1
                                                         // Redis 7.0's master and replica captures are the shared ones.
        if kind != ServerKind::Redis70 {
            std::fs::write(
                out.join(format!("{prefix}-master-info.txt")),
                master.info_section("everything"),
            )
            .unwrap();
            std::fs::write(
                out.join(format!("{prefix}-replica-info.txt")),
                replica.info_section("everything"),
            )
            .unwrap();
        }
        // Then a sentinel watching the master: INFO everything, or INFO
        // all where a sentinel answers everything with nothing (6.2), as
        // the agent asks.
        let dir = tempfile::tempdir().unwrap();
        let (_sentinel, port) = start_sentinel(kind, &master, dir.path());
        assert!(wait_until(Duration::from_secs(5), || info_at(port, "all")
            .contains("sentinels=1")));
        let mut sentinel_info = info_at(port, "everything");
        if sentinel_info.is_empty() {
            sentinel_info = info_at(port, "all");
        }
        std::fs::write(
            out.join(format!("{prefix}-sentinel-info.txt")),
            sentinel_info,
        )
        .unwrap();
        println!("captured {prefix}");
    }
}
