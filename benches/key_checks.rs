//! Benchmark: what key checks (`check_keys`, issue 16) cost Redis, against
//! the same check done by redis_exporter (`--check-keys` and
//! `--check-streams`; Debian's `prometheus-redis-exporter`, run as a plain
//! process on loopback, as in benches/peers.rs; `scripts/bench-peers.sh`
//! installs it).
//!
//! Two identical redis-servers hold 10,000 other keys, 50 lists `queue:N`,
//! 5 streams `stream:N` with two consumer groups each (one with pending
//! entries), and a list `jobs`. This agent checks `queue:*`, `stream:*` and
//! `jobs` every second (refresh 1 s, `check_keys_interval = 1`, SCAN COUNT
//! 1000); redis_exporter is scraped every second with `-check-keys
//! db0=queue:*,db0=jobs -check-streams db0=stream:* -check-keys-batch-size
//! 1000`. Both then report the same keys: type/length, and per stream its
//! groups, pending, lag and consumers' idle time.
//!
//! Printed: per poll, the time Redis spent in the key-check commands (the
//! `usec` deltas of `INFO commandstats` after `CONFIG RESETSTAT`; SCAN,
//! TYPE, the length commands, XINFO, TTL, GET, SELECT…) and their calls,
//! the Redis time of everything else each tool asked (INFO…), and the
//! ratio of the key-check time against redis_exporter's, measured in the
//! same run. No timing is asserted.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use testkit::{free_port, Agent, Proc, Redis, RespConn, Snmpd};

/// The commands a key check sends (either tool), as commandstats names them.
const KEY_COMMANDS: &[&str] = &[
    "scan",
    "type",
    "ttl",
    "pttl",
    "strlen",
    "llen",
    "scard",
    "zcard",
    "hlen",
    "xlen",
    "xinfo|groups",
    "xinfo|consumers",
    "xinfo|stream",
    "memory|usage",
    "get",
    "pfcount",
    "select",
    "exists",
];

fn filled_redis() -> Redis {
    let redis = Redis::start();
    let mut conn = RespConn::connect(redis.port()).expect("connect");
    conn.call(&[
        "EVAL",
        "for i = 1, 10000 do redis.call('SET', 'other:' .. i, i) end \
         for i = 1, 50 do redis.call('RPUSH', 'queue:' .. i, 'a', 'b', 'c') end \
         redis.call('RPUSH', 'jobs', 'a') \
         for s = 1, 5 do \
           local k = 'stream:' .. s \
           for i = 1, 10 do redis.call('XADD', k, '*', 'f', i) end \
           redis.call('XGROUP', 'CREATE', k, 'billing', '0') \
           redis.call('XGROUP', 'CREATE', k, 'audit', '$') \
         end",
        "0",
    ])
    .unwrap();
    for s in 1..=5 {
        conn.call(&[
            "XREADGROUP",
            "GROUP",
            "billing",
            "worker",
            "COUNT",
            "4",
            "STREAMS",
            &format!("stream:{s}"),
            ">",
        ])
        .unwrap();
    }
    redis
}

/// Per poll: key-check µs, key-check calls, other µs, and the breakdown.
fn per_poll(redis: &Redis, polls: u64) -> (f64, f64, f64, String) {
    let polls = polls.max(1) as f64;
    let (mut key_usec, mut key_calls, mut other_usec) = (0u64, 0u64, 0u64);
    let mut parts = Vec::new();
    for (command, (calls, usec)) in redis.command_stats() {
        if command == "config|resetstat" {
            continue; // the benchmark's own reset
        }
        if KEY_COMMANDS.contains(&command.as_str()) {
            key_usec += usec;
            key_calls += calls;
            parts.push(format!(
                "{command} {:.1}×{:.1} µs",
                calls as f64 / polls,
                usec as f64 / polls
            ));
        } else {
            other_usec += usec;
        }
    }
    (
        key_usec as f64 / polls,
        key_calls as f64 / polls,
        other_usec as f64 / polls,
        parts.join(", "),
    )
}

fn scrape(port: u16) -> Result<String, String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(15)))
        .map_err(|e| e.to_string())?;
    write!(stream, "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .map_err(|e| e.to_string())?;
    let mut body = String::new();
    stream
        .read_to_string(&mut body)
        .map_err(|e| e.to_string())?;
    Ok(body)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // test runners asking for tests: this is not one
    }
    let seconds: u64 = std::env::var("KEYS_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let started_at = Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let (ours, theirs) = (filled_redis(), filled_redis());

    let snmpd = Snmpd::start();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("agent.toml");
    std::fs::write(
        &config,
        format!(
            "agentx_socket = \"{}\"\nrefresh = 1\n\n[[redis]]\nname = \"main\"\naddress = \"{}\"\n\
             client_list = false\ncheck_keys = [\"queue:*\", \"stream:*\", \"jobs\"]\n\
             check_keys_interval = 1\n",
            snmpd.agentx_address(),
            ours.address()
        ),
    )
    .unwrap();
    let mut agent = Agent::start_raw(&["-n", "-c", config.to_str().unwrap()], &[]);
    assert!(
        agent.wait_registered(Duration::from_secs(10)),
        "agent did not register:\n{}",
        agent.log()
    );

    let port = free_port();
    let log = std::fs::File::create(dir.path().join("exporter.log")).unwrap();
    let _exporter = Proc::spawn(
        Command::new("prometheus-redis-exporter")
            .arg("-redis.addr")
            .arg(format!("redis://127.0.0.1:{}", theirs.port()))
            .arg("-web.listen-address")
            .arg(format!("127.0.0.1:{port}"))
            .arg("-check-keys")
            .arg("db0=queue:*,db0=jobs")
            .arg("-check-streams")
            .arg("db0=stream:*")
            .arg("-check-keys-batch-size")
            .arg("1000")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log),
        "prometheus-redis-exporter",
    );
    assert!(
        testkit::wait_until(Duration::from_secs(10), || scrape(port)
            .is_ok_and(|m| m.contains("redis_up 1"))),
        "redis_exporter does not answer"
    );

    // Warm-up, then both Redis's statistics start at zero.
    let mut metrics = String::new();
    for _ in 0..3 {
        metrics = scrape(port).unwrap();
        std::thread::sleep(Duration::from_secs(1));
    }
    let sizes = metrics
        .lines()
        .filter(|l| l.starts_with("redis_key_size{"))
        .count();
    let groups = metrics
        .lines()
        .filter(|l| l.starts_with("redis_stream_group_messages_pending{"))
        .count();
    ours.cli(&["CONFIG", "RESETSTAT"]);
    theirs.cli(&["CONFIG", "RESETSTAT"]);
    let start = Instant::now();
    let mut scrapes = 0u64;
    let mut scrape_time = Duration::ZERO;
    while start.elapsed() < Duration::from_secs(seconds) {
        let t = Instant::now();
        scrape(port).unwrap();
        scrape_time += t.elapsed();
        scrapes += 1;
        std::thread::sleep(Duration::from_secs(1).saturating_sub(t.elapsed()));
    }
    // The agent polled (and checked) once a second on its own: its INFO
    // calls count its polls.
    let polls_ours = ours
        .command_stats()
        .get("info")
        .map_or(seconds, |(calls, _)| *calls);
    let (key_ours, calls_ours, other_ours, parts_ours) = per_poll(&ours, polls_ours);
    let (key_theirs, calls_theirs, other_theirs, parts_theirs) = per_poll(&theirs, scrapes);
    let rows = agent_rows(&snmpd);
    // The agent's checks: TTL is asked once per key per check.
    let checks_ours = ours
        .command_stats()
        .get("ttl")
        .map_or(0, |(calls, _)| *calls)
        / rows.parse::<u64>().unwrap_or(1).max(1);

    println!(
        "Key checks, Redis-side cost per poll ({started_at}, {seconds} s, redis-server {})",
        ours.info_map().get("redis_version").unwrap_or("?")
    );
    println!("  keys: 56 checked (50 lists queue:*, 5 streams stream:* with 2 groups, jobs) among 10,056");
    println!("  this agent: {rows} rows of redisKeyTable; redis_exporter: {sizes} key_size series, {groups} stream groups");
    println!();
    println!("| per poll | this agent | redis_exporter |");
    println!("|---|---|---|");
    println!("| polls | {polls_ours} | {scrapes} |");
    println!("| key checks | {checks_ours} | {scrapes} |");
    println!("| Redis time in key-check commands | {key_ours:.0} µs | {key_theirs:.0} µs |");
    println!("| key-check commands | {calls_ours:.0} | {calls_theirs:.0} |");
    println!("| Redis time in the rest (INFO…) | {other_ours:.0} µs | {other_theirs:.0} µs |");
    println!(
        "| key-check time, ratio to redis_exporter | {:.2} | 1.00 |",
        key_ours / key_theirs.max(1.0)
    );
    let per_check = key_ours * polls_ours as f64 / checks_ours.max(1) as f64;
    println!("| Redis time per key check | {per_check:.0} µs | {key_theirs:.0} µs |");
    println!(
        "| redis_exporter's whole scrape, wall time | | {:.1} ms |",
        scrape_time.as_secs_f64() * 1000.0 / scrapes.max(1) as f64
    );
    println!();
    println!("  this agent: {parts_ours}");
    println!("  redis_exporter: {parts_theirs}");
    agent.stop();
}

/// Rows of redisKeyTable the agent serves (its redisKcKeys).
fn agent_rows(snmpd: &Snmpd) -> String {
    snmpd
        .numeric()
        .get_one(&format!("{}.3.24.1.1.1", testkit::REDIS_ROOT))
        .value
}
