//! Benchmark: cost of watching 1, 10 and 100 real Redis instances.
//!
//! `cargo bench --bench scale` (or `scripts/bench.sh`). For each count it
//! starts that many redis-server processes, fills their keyspace (3
//! databases) and command statistics (12 commands), starts snmpd and the
//! agent (release build, default 10 s refresh) on all of them, and reports:
//! - the agent's CPU per poll interval, and as a share of one core,
//! - its RSS,
//! - the number of objects served and the time of a GetNext walk of the
//!   whole subtree through snmpd.
//!
//! Set `SCALE_COUNTS` (e.g. `1,10`) and `SCALE_SECONDS` (measured window,
//! default 30) to change the run.

use snmp2::{Oid, SyncSession};
use std::time::{Duration, Instant};
use testkit::{cpu_ns, status_kib, wait_until, Agent, Redis, Snmpd, REDIS_ROOT};

fn fill(redis: &Redis) {
    for db in ["0", "1", "2"] {
        redis.cli(&["-n", db, "MSET", "a", "1", "b", "2", "c", "3"]);
    }
    let commands: &[&[&str]] = &[
        &["GET", "a"],
        &["INCR", "n"],
        &["LPUSH", "l", "x"],
        &["LRANGE", "l", "0", "-1"],
        &["SADD", "s", "x"],
        &["SMEMBERS", "s"],
        &["HSET", "h", "f", "v"],
        &["HGETALL", "h"],
        &["EXPIRE", "a", "1000"],
        &["TTL", "a"],
        &["CONFIG", "GET", "maxmemory"],
        &["DBSIZE"],
    ];
    for c in commands {
        redis.cli(c);
    }
}

/// GetNext walk of the whole subtree; returns (objects, elapsed).
fn walk(session: &mut SyncSession) -> (usize, Duration) {
    let root: Vec<u64> = REDIS_ROOT
        .trim_start_matches('.')
        .split('.')
        .map(|s| s.parse().unwrap())
        .collect();
    let mut current = root.clone();
    let mut count = 0;
    let start = Instant::now();
    loop {
        let oid = Oid::from(current.as_slice()).unwrap();
        let mut pdu = session.getnext(&oid).expect("GETNEXT");
        let (name, _) = pdu.varbinds.next().expect("a varbind");
        let next: Vec<u64> = name.iter().expect("arcs").collect();
        if !next.starts_with(&root) {
            return (count, start.elapsed());
        }
        count += 1;
        current = next;
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let counts: Vec<usize> = std::env::var("SCALE_COUNTS")
        .unwrap_or_else(|_| "1,10,100".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let seconds: u64 = std::env::var("SCALE_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    println!("redis-snmp scale benchmark: refresh 10 s, {seconds} s measured per count");
    println!();
    println!(
        "{:>9} {:>12} {:>14} {:>10} {:>9} {:>10} {:>12}",
        "instances", "CPU/interval", "share of core", "RSS KiB", "objects", "walk s", "µs/object"
    );
    let mut baseline_rss = None;
    for &count in &counts {
        let servers: Vec<Redis> = (0..count).map(|_| Redis::start()).collect();
        servers.iter().for_each(fill);
        let snmpd = Snmpd::start();
        let dir = tempfile::tempdir().unwrap();
        let mut toml = format!(
            "agentx_socket = \"{}\"\nrefresh = 10\n",
            snmpd.agentx_address()
        );
        for (i, r) in servers.iter().enumerate() {
            toml.push_str(&format!(
                "\n[[redis]]\nname = \"r{i}\"\naddress = \"{}\"\n",
                r.address()
            ));
        }
        let config = dir.path().join("agent.toml");
        std::fs::write(&config, toml).unwrap();
        let mut agent = Agent::start_raw(&["-n", "-c", config.to_str().unwrap()], &[]);
        assert!(
            agent.wait_registered(Duration::from_secs(10)),
            "{}",
            agent.log()
        );
        let mut session = SyncSession::new_v2c(
            format!("127.0.0.1:{}", snmpd.udp_port()),
            b"public",
            Some(Duration::from_secs(5)),
            1,
        )
        .unwrap();
        // Every instance polled once: its row of the instance table is up(1).
        let last_up =
            Oid::from(&[1u64, 3, 6, 1, 4, 1, 20267, 400, 3, 1, 1, 4, count as u64][..]).unwrap();
        assert!(wait_until(Duration::from_secs(20), || {
            session
                .get(&last_up)
                .map(|mut p| matches!(p.varbinds.next(), Some((_, snmp2::Value::Integer(1)))))
                .unwrap_or(false)
        }));
        let cpu_before = cpu_ns(agent.pid());
        std::thread::sleep(Duration::from_secs(seconds));
        let cpu = cpu_ns(agent.pid()) - cpu_before;
        let rss = status_kib(agent.pid(), "VmRSS:");
        let (objects, elapsed) = walk(&mut session);
        let intervals = seconds as f64 / 10.0;
        let per_interval_ms = cpu as f64 / 1e6 / intervals;
        baseline_rss.get_or_insert(rss);
        println!(
            "{:>9} {:>9.2} ms {:>13.3}% {:>10} {:>9} {:>10.2} {:>12.1}",
            count,
            per_interval_ms,
            cpu as f64 / 1e9 / seconds as f64 * 100.0,
            rss,
            objects,
            elapsed.as_secs_f64(),
            elapsed.as_secs_f64() * 1e6 / objects.max(1) as f64,
        );
        drop(agent);
        drop(snmpd);
        drop(servers);
    }
    println!();
    println!(
        "(CPU from /proc/PID/task/*/schedstat; the walk is one GetNext per object through snmpd)"
    );
}
