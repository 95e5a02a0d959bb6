//! Benchmark: the agent's memory with every capped table full.
//!
//! `cargo bench --bench caps` (or `scripts/bench.sh`). One real
//! redis-server, a real `puppet apply`, snmpd and the release build of the
//! agent. The agent's RSS (`VmRSS`) and its peak (`VmHWM`) are read from
//! /proc at rest (an idle Redis, no Puppet run yet) and again once every
//! table that has a cap is at it, with the rows a walk through snmpd
//! finds in each:
//!
//! - `redisClientNameTable` and `redisClientUserTable`:
//!   `client_list_rows = 1000` (the most allowed), 1,005 connections each
//!   with a name and an ACL user of its own (the rest summed in one row);
//! - `redisKeyspaceTable`: `databases 1024`, the most the agent
//!   zero-fills (`MAX_ZERO_FILLED_DBS`);
//! - `redisCommandTable`: every command of the server called once (those
//!   that would change the server's state or the connection's mode are
//!   left out; the others are called with wrong arguments, refused and
//!   counted as rejected);
//! - `redisErrorTable`: 200 distinct error codes from a script (one row
//!   each the server counts: Redis 7.0 counted all 200);
//! - `redisSlowlogTable`: a slow log of 128 entries (every command logged);
//! - `puppetResourceTable`: a run changing 120 files, over
//!   `MAX_PUPPET_RESOURCES` (100);
//! - `puppetEventTable`: `event_rows = 10000` (`MAX_EVENT_ROWS`), 10,050
//!   resource events in the events log (Puppet's line shape, captured).
//!
//! The figures are printed; nothing is asserted on them.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use testkit::{
    repo_root, status_kib, wait_until, AgentConfig, PuppetApply, Redis, RespConn, Snmpd, REDIS_ROOT,
};

const PUPPET_ROOT: &str = ".1.3.6.1.4.1.20267.401";
const CONNECTIONS: usize = 1_005;
const PUPPET_FILES: usize = 120;
const EVENTS: usize = 10_050;
const ERROR_CODES: usize = 200;

/// Commands not called: they would stop or reconfigure the server, make it
/// a replica or stream to us, or put the connection in another mode.
const LEFT_OUT: &[&str] = &[
    "shutdown",
    "failover",
    "replicaof",
    "slaveof",
    "sync",
    "psync",
    "replconf",
    "monitor",
    "subscribe",
    "psubscribe",
    "ssubscribe",
    "quit",
    "reset",
    "debug",
    "flushall",
    "flushdb",
    "cluster",
    "acl",
    "config",
    "client",
    "module",
    "save",
    "bgsave",
    "bgrewriteaof",
    "swapdb",
    "select",
    "auth",
    "hello",
    "multi",
    "exec",
    "migrate",
    "restore",
    "restore-asking",
    "function",
    "script",
];

/// Rows a walk of `root` finds per table (`root.T.1.C.index…`: the
/// rows of column 2, every table's first served column or after its
/// index), and the varbinds in all.
fn rows(snmpd: &Snmpd, root: &str, tables_under: &str) -> (BTreeMap<String, usize>, usize) {
    let walk = snmpd.numeric().bulkwalk(root);
    assert!(walk.success(), "{walk}");
    let prefix = format!("{tables_under}.");
    let mut per_table: BTreeMap<String, usize> = BTreeMap::new();
    let mut all = 0;
    for var in walk.vars() {
        all += 1;
        let Some(rest) = var.name.strip_prefix(&prefix) else {
            continue;
        };
        let arcs: Vec<&str> = rest.split('.').collect();
        // T.1.C.index…: count the rows of the lowest column seen.
        if arcs.len() > 3 && arcs[1] == "1" {
            *per_table
                .entry(format!("{}.{}", arcs[0], arcs[2]))
                .or_default() += 1;
        }
    }
    // Keep, per table, its first column's count.
    let mut first: BTreeMap<String, usize> = BTreeMap::new();
    for (key, n) in per_table {
        let table = key.split('.').next().unwrap().to_string();
        first.entry(table).or_insert(n);
    }
    (first, all)
}

fn table_rows(tables: &BTreeMap<String, usize>, t: u32) -> usize {
    tables.get(&t.to_string()).copied().unwrap_or(0)
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // test runners asking for tests: this is not one
    }
    let redis = Redis::start_with(&[
        "databases 1024",
        "slowlog-log-slower-than 0",
        "slowlog-max-len 128",
        "maxclients 4000",
    ]);
    let puppet = PuppetApply::new();
    std::fs::create_dir_all(puppet.state_dir()).unwrap();
    let events = puppet.state_dir().join("events.jsonl");
    std::fs::write(&events, "").unwrap();
    let snmpd = Snmpd::start();
    let dir = tempfile::tempdir().unwrap();
    let agent = AgentConfig::new(&snmpd)
        .top("slow_refresh", "1")
        .redis(
            "caps",
            &redis.address(),
            "client_list_interval = 1\nclient_list_rows = 1000\n",
        )
        // The private Puppet's directories are its user's, and the agent
        // follows a log only where no one but root or this owner writes.
        .puppet(
            &puppet,
            "event_rows = 10000\nevents_log_owner = \"puppet\"\n",
        )
        .start_quiet(dir.path());
    let pid = agent.pid();
    std::thread::sleep(Duration::from_secs(5));
    let rest_rss = status_kib(pid, "VmRSS:");
    let (rest_redis, rest_redis_all) = rows(&snmpd, REDIS_ROOT, &format!("{REDIS_ROOT}.3"));
    let (_, rest_puppet_all) = rows(&snmpd, PUPPET_ROOT, PUPPET_ROOT);
    let rest_after_walk = status_kib(pid, "VmRSS:");

    // Fill.
    let filling = Instant::now();
    let mut admin = RespConn::connect(redis.port()).unwrap();
    for i in 0..CONNECTIONS {
        let user = format!("u{i}");
        admin
            .call(&["ACL", "SETUSER", &user, "on", ">pw", "~*", "+@all"])
            .unwrap();
    }
    let mut clients = Vec::with_capacity(CONNECTIONS);
    for i in 0..CONNECTIONS {
        let mut c = RespConn::connect(redis.port()).unwrap();
        c.call(&["AUTH", &format!("u{i}"), "pw"]).unwrap();
        c.call(&["CLIENT", "SETNAME", &format!("client{i}")])
            .unwrap();
        clients.push(c);
    }
    for db in [0, 1, 511, 1023] {
        let db = db.to_string();
        admin.call(&["SELECT", &db]).unwrap();
        admin.call(&["SET", "k", "v"]).unwrap();
    }
    admin.call(&["SELECT", "0"]).unwrap();
    let mut called = 0;
    if let Ok(testkit::Reply::Array(Some(names))) = admin.call(&["COMMAND", "LIST"]) {
        for name in names {
            let testkit::Reply::Bulk(Some(name)) = name else {
                continue;
            };
            if LEFT_OUT.contains(&name.as_str()) {
                continue;
            }
            // A fresh connection each: a command may leave it in a state
            // (blocked, in a transaction) the next would not expect.
            let Ok(mut c) = RespConn::connect(redis.port()) else {
                continue;
            };
            let mut args = vec![name.as_str()];
            args.extend(std::iter::repeat_n("bench-x", 9));
            let _ = c.call(&args);
            called += 1;
        }
    }
    for i in 0..ERROR_CODES {
        let script = format!("return redis.error_reply('E{i} from the caps benchmark')");
        let _ = admin.call(&["EVAL", &script, "0"]);
    }
    let manifest: String = (0..PUPPET_FILES)
        .map(|i| {
            format!(
                "file {{ '{}/f{i}.txt': content => 'caps' }}\n",
                puppet.target().display()
            )
        })
        .collect();
    let (code, _) = puppet.apply("caps", &manifest, &[]);
    assert_eq!(code, 2, "puppet apply of {PUPPET_FILES} files: exit {code}");
    let captured =
        std::fs::read_to_string(repo_root().join("tests/fixtures/puppet/logdest/log.jsonl"))
            .unwrap();
    let template = captured
        .lines()
        .find(|l| l.contains("File[/srv/puppetwork/target/logtest.txt]/ensure"))
        .unwrap()
        .to_string();
    let mut text = String::new();
    for n in 0..EVENTS {
        text.push_str(&template.replace(
            "/srv/puppetwork/target/logtest.txt",
            &format!("/bench/caps/f{n}.txt"),
        ));
        text.push('\n');
    }
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&events)
            .unwrap();
        f.write_all(text.as_bytes()).unwrap();
    }
    let filled = filling.elapsed();

    // Until every table is full (the client tables wait for a CLIENT LIST,
    // the rest for a slow poll).
    let mut last = (BTreeMap::new(), 0);
    let full = wait_until(Duration::from_secs(120), || {
        last = rows(&snmpd, REDIS_ROOT, &format!("{REDIS_ROOT}.3"));
        let t = &last.0;
        table_rows(t, 19) >= 1000 && table_rows(t, 20) >= 1000 && table_rows(t, 10) >= 1024
    });
    assert!(full, "tables: {:?}", last.0);
    let mut puppet_rows = (BTreeMap::new(), 0);
    let puppet_full = wait_until(Duration::from_secs(60), || {
        puppet_rows = rows(&snmpd, PUPPET_ROOT, PUPPET_ROOT);
        table_rows(&puppet_rows.0, 2) >= 100 && table_rows(&puppet_rows.0, 4) >= 10_000
    });
    assert!(puppet_full, "Puppet tables: {:?}", puppet_rows.0);
    std::thread::sleep(Duration::from_secs(3));
    let caps_rss = status_kib(pid, "VmRSS:");
    let walk_started = Instant::now();
    let (redis_tables, redis_all) = rows(&snmpd, REDIS_ROOT, &format!("{REDIS_ROOT}.3"));
    let (puppet_tables, puppet_all) = rows(&snmpd, PUPPET_ROOT, PUPPET_ROOT);
    let walked = walk_started.elapsed();
    let caps_after_walk = status_kib(pid, "VmRSS:");
    let hwm = status_kib(pid, "VmHWM:");

    println!("redis-snmp caps benchmark: agent RSS at rest and with every capped table full");
    println!("(filling took {filled:.1?}: {CONNECTIONS} connections with a name and an ACL user each, {called} commands called, {ERROR_CODES} error codes, {PUPPET_FILES} files changed by puppet apply, {EVENTS} event lines)");
    println!();
    println!("| table | rows at rest | rows with the caps reached | cap |");
    println!("|---|---|---|---|");
    for (name, t, cap) in [
        (
            "redisClientNameTable",
            19,
            "client_list_rows = 1000 (the rest in `(other names)`)",
        ),
        (
            "redisClientUserTable",
            20,
            "client_list_rows = 1000 (the rest in `(other users)`)",
        ),
        ("redisKeyspaceTable", 10, "1024 databases"),
        ("redisCommandTable", 12, "the server's commands"),
        (
            "redisErrorTable",
            13,
            "one per error code the server counts",
        ),
        ("redisSlowlogTable", 16, "one row per instance"),
    ] {
        println!(
            "| {name} | {} | {} | {cap} |",
            table_rows(&rest_redis, t),
            table_rows(&redis_tables, t)
        );
    }
    for (name, t, cap) in [
        ("puppetResourceTable", 2, "MAX_PUPPET_RESOURCES = 100"),
        ("puppetEventTable", 4, "event_rows = 10000"),
    ] {
        println!("| {name} | 0 | {} | {cap} |", table_rows(&puppet_tables, t));
    }
    println!();
    println!("| | at rest | caps reached | ratio |");
    println!("|---|---|---|---|");
    println!(
        "| objects served (walk: REDIS-SERVER-MIB + PUPPET-AGENT-MIB) | {} | {} | {:.1}x |",
        rest_redis_all + rest_puppet_all,
        redis_all + puppet_all,
        (redis_all + puppet_all) as f64 / (rest_redis_all + rest_puppet_all).max(1) as f64
    );
    println!(
        "| agent VmRSS before a walk | {} | {} | {:.2}x |",
        mib(rest_rss),
        mib(caps_rss),
        caps_rss as f64 / rest_rss.max(1) as f64
    );
    println!(
        "| agent VmRSS after a walk of all | {} | {} | {:.2}x |",
        mib(rest_after_walk),
        mib(caps_after_walk),
        caps_after_walk as f64 / rest_after_walk.max(1) as f64
    );
    println!("| agent VmHWM (peak) | | {} | |", mib(hwm));
    println!("| bulk walk of all through snmpd | | {walked:.1?} | |");
    drop(clients);
}
