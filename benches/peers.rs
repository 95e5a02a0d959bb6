//! Benchmark: the agent against what an operator would pick instead, in one
//! run: Prometheus's redis_exporter and Zabbix's agent 2 (Debian's
//! `prometheus-redis-exporter` and `zabbix-agent2`, run as plain processes
//! on loopback with their own configuration in a temporary directory;
//! `scripts/bench-peers.sh` installs them).
//!
//! Each tool gets its own identical redis-server (10 databases × 3,000
//! keys) and is polled every second for `PEERS_SECONDS` (default 30):
//! - this agent polls Redis on its own (refresh 1 s); it is read through a
//!   real snmpd over AgentX, first not at all ("polling only"), then with a
//!   GetBulk walk of its whole subtree every second;
//! - redis_exporter: one scrape of `/metrics` per second;
//! - zabbix_agent2: per second, the items of Zabbix's own "Redis by Zabbix
//!   agent 2" template polls every minute: `redis.ping`,
//!   `redis.slowlog.count` and `redis.info` (passive checks, one TCP
//!   connection each, as a Zabbix server makes them).
//!
//! Printed per tool: its CPU per poll (ns on a CPU, summed over its threads'
//! /proc/PID/task/*/schedstat: /proc/PID/stat's 10 ms ticks are too coarse
//! for 1 ms per poll), the
//! time Redis spent answering it per poll (the `usec` deltas of that
//! Redis's `INFO commandstats` after `CONFIG RESETSTAT`, per command and in
//! all), RSS, the INFO fields it covers, what a poll does while its Redis
//! is frozen (SIGSTOP for 10 s) and how long after its Redis is killed it
//! says so. Ratios are against zabbix_agent2, measured in the same run.

#[path = "support/mod.rs"]
mod support;

use snmp2::{SyncSession, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{arcs, oid};
use testkit::{cpu_ns, free_port, status_kib, Agent, Proc, Redis, RespConn, Snmpd, REDIS_ROOT};

const DATABASES: u32 = 10;
const KEYS_PER_DB: u32 = 3000;
const FREEZE: Duration = Duration::from_secs(10);

/// A Redis of the benchmark: 10 databases of 3,000 keys.
fn filled_redis() -> Redis {
    let redis = Redis::start();
    let mut conn = RespConn::connect(redis.port()).expect("connect");
    for db in 0..DATABASES {
        conn.call(&["SELECT", &db.to_string()]).unwrap();
        conn.call(&[
            "EVAL",
            "for i = 1, tonumber(ARGV[1]) do redis.call('SET', 'key:' .. i, i) end",
            "0",
            &KEYS_PER_DB.to_string(),
        ])
        .unwrap();
    }
    redis
}

/// The field names of `INFO everything`, the repeated lines as one family
/// each (`db*`, `cmdstat_*`, …), with the section each is in.
fn info_fields(redis: &Redis) -> BTreeMap<String, String> {
    let mut fields = BTreeMap::new();
    let mut section = String::new();
    for line in redis.info_section("everything").lines() {
        let line = line.trim();
        if let Some(name) = line.strip_prefix("# ") {
            section = name.to_lowercase();
            continue;
        }
        let Some((key, _)) = line.split_once(':') else {
            continue;
        };
        fields.insert(family(key), section.clone());
    }
    fields
}

/// The family a repeated INFO line belongs to, or the field itself.
fn family(key: &str) -> String {
    for prefix in [
        "cmdstat_",
        "errorstat_",
        "latency_percentiles_usec_",
        "slave",
        "master",
    ] {
        let rest = key.strip_prefix(prefix);
        if rest.is_some_and(|r| {
            !r.is_empty() && (prefix.ends_with('_') || r.starts_with(|c: char| c.is_ascii_digit()))
        }) {
            return format!("{prefix}*");
        }
    }
    if key.starts_with("db") && key[2..].chars().all(|c| c.is_ascii_digit()) && key.len() > 2 {
        return "db*".to_string();
    }
    key.to_string()
}

/// The INFO fields the catalogue reads (`src/metrics/`).
fn ours_covered(fields: &BTreeMap<String, String>) -> BTreeSet<String> {
    use redis_snmp::metrics::{
        redis_objects, Column, CommandField, ErrorField, KeyspaceField, ReplicaField, Source,
    };
    let mut covered = BTreeSet::new();
    for object in redis_objects() {
        if let Source::Info { fields: names, .. } = object.source {
            covered.extend(names.iter().map(|n| n.to_string()));
        }
        if KeyspaceField::of(object).is_some() {
            covered.insert("db*".to_string());
        }
        if ReplicaField::of(object).is_some() {
            covered.insert("slave*".to_string());
        }
        if CommandField::of(object).is_some() {
            covered.insert("cmdstat_*".to_string());
            covered.insert("latency_percentiles_usec_*".to_string());
        }
        if ErrorField::of(object).is_some() {
            covered.insert("errorstat_*".to_string());
        }
    }
    covered.retain(|f| fields.contains_key(f));
    covered
}

/// The INFO fields whose name (or family) shows in redis_exporter's metric
/// names: `redis_FIELD`, with its usual suffixes, or, for the families,
/// the metric it turns them into. A name match, so it can only undercount
/// renamed fields (say `used_memory` → `redis_memory_used_bytes`): those
/// are matched by the words of the field in any order.
fn exporter_covered(metrics: &str, fields: &BTreeMap<String, String>) -> BTreeSet<String> {
    let names: BTreeSet<String> = metrics
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| l.split(['{', ' ']).next())
        .filter_map(|n| n.strip_prefix("redis_"))
        .map(|n| n.to_string())
        .collect();
    let words = |s: &str| -> BTreeSet<String> {
        s.split('_')
            .filter(|w| !matches!(*w, "" | "total" | "bytes" | "seconds" | "in" | "sec"))
            .map(|w| w.to_string())
            .collect()
    };
    let name_words: Vec<BTreeSet<String>> = names.iter().map(|n| words(n)).collect();
    fields
        .keys()
        .filter(|field| match field.as_str() {
            "db*" => names.contains("db_keys"),
            "cmdstat_*" => names.contains("commands_total"),
            "errorstat_*" => names.contains("errors_total"),
            "latency_percentiles_usec_*" => {
                names.iter().any(|n| n.starts_with("latency_percentiles"))
            }
            "slave*" => names.iter().any(|n| n.starts_with("connected_slave")),
            "master*" => false,
            field => {
                let wanted = words(field);
                !wanted.is_empty() && name_words.iter().any(|n| wanted.is_subset(n))
            }
        })
        .cloned()
        .collect()
}

/// The INFO fields in zabbix_agent2's `redis.info` JSON (Section → field).
fn zabbix_covered(json: &str, fields: &BTreeMap<String, String>) -> BTreeSet<String> {
    let parsed: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
    let mut covered = BTreeSet::new();
    if let Some(sections) = parsed.as_object() {
        for fields_of in sections.values().filter_map(|v| v.as_object()) {
            covered.extend(fields_of.keys().map(|k| family(k)));
        }
    }
    covered.retain(|f| fields.contains_key(f));
    covered
}

/// One HTTP GET of redis_exporter's `/metrics`.
fn scrape(port: u16, timeout: Duration) -> Result<String, String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    stream.set_read_timeout(Some(timeout)).unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .map_err(|e| e.to_string())?;
    let mut body = String::new();
    stream
        .read_to_string(&mut body)
        .map_err(|e| e.to_string())?;
    Ok(body)
}

/// One passive check of zabbix_agent2 (the ZBXD protocol of Zabbix 4.0+:
/// "ZBXD", flags 1, data length as u32 LE, reserved u32, then the key).
fn zabbix_get(port: u16, key: &str, timeout: Duration) -> Result<String, String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    stream.set_read_timeout(Some(timeout)).unwrap();
    let mut request = b"ZBXD\x01".to_vec();
    request.extend_from_slice(&(key.len() as u32).to_le_bytes());
    request.extend_from_slice(&0u32.to_le_bytes());
    request.extend_from_slice(key.as_bytes());
    stream.write_all(&request).map_err(|e| e.to_string())?;
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply).map_err(|e| e.to_string())?;
    if reply.len() < 13 || !reply.starts_with(b"ZBXD") {
        return Err(format!("bad reply of {} bytes", reply.len()));
    }
    Ok(String::from_utf8_lossy(&reply[13..]).into_owned())
}

struct Exporter {
    proc: Proc,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Exporter {
    fn start(redis: &Redis) -> Exporter {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let log = std::fs::File::create(dir.path().join("exporter.log")).unwrap();
        let proc = Proc::spawn(
            Command::new("prometheus-redis-exporter")
                .arg("-redis.addr")
                .arg(format!("redis://127.0.0.1:{}", redis.port()))
                .arg("-web.listen-address")
                .arg(format!("127.0.0.1:{port}"))
                .stdin(Stdio::null())
                .stdout(log.try_clone().unwrap())
                .stderr(log),
            "prometheus-redis-exporter",
        );
        assert!(
            testkit::wait_until(Duration::from_secs(10), || scrape(
                port,
                Duration::from_secs(5)
            )
            .is_ok_and(|m| m.contains("redis_up 1"))),
            "redis_exporter does not answer"
        );
        Exporter {
            proc,
            port,
            _dir: dir,
        }
    }
}

struct Zabbix {
    proc: Proc,
    port: u16,
    uri: String,
    _dir: tempfile::TempDir,
}

impl Zabbix {
    fn start(redis: &Redis) -> Zabbix {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let d = dir.path().display();
        // Passive checks only (no ServerActive), no Include of the system's
        // plugin files: the Redis plugin's defaults.
        let conf = format!(
            "LogType=file\nLogFile={d}/zabbix_agent2.log\nServer=127.0.0.1\n\
             ListenIP=127.0.0.1\nListenPort={port}\nHostname=redis-snmp-bench\n\
             ControlSocket={d}/agent.sock\nPidFile={d}/zabbix_agent2.pid\n"
        );
        let config = dir.path().join("zabbix_agent2.conf");
        std::fs::write(&config, conf).unwrap();
        let proc = Proc::spawn(
            Command::new("zabbix_agent2")
                .arg("-c")
                .arg(&config)
                .arg("-f")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null()),
            "zabbix_agent2",
        );
        let uri = format!("tcp://127.0.0.1:{}", redis.port());
        assert!(
            testkit::wait_until(Duration::from_secs(10), || zabbix_get(
                port,
                &format!("redis.ping[{uri}]"),
                Duration::from_secs(5)
            )
            .is_ok_and(|r| r == "1")),
            "zabbix_agent2 does not answer"
        );
        Zabbix {
            proc,
            port,
            uri,
            _dir: dir,
        }
    }

    /// The template's three items; Ok(true) when Redis answered the ping.
    fn poll(&self, timeout: Duration) -> Result<(bool, String), String> {
        let ping = zabbix_get(self.port, &format!("redis.ping[{}]", self.uri), timeout)?;
        zabbix_get(
            self.port,
            &format!("redis.slowlog.count[{}]", self.uri),
            timeout,
        )?;
        let info = zabbix_get(self.port, &format!("redis.info[{}]", self.uri), timeout)?;
        Ok((ping == "1", info))
    }
}

/// `redisInstanceState.1` through snmpd: Some(true) for up(1).
fn ours_state(session: &mut SyncSession) -> Result<bool, String> {
    let state = oid(&testkit::instance_oid(4, 1));
    let mut pdu = session.get(&state).map_err(|e| format!("{e:?}"))?;
    match pdu.varbinds.next() {
        Some((_, Value::Integer(1))) => Ok(true),
        Some((_, Value::Integer(_))) => Ok(false),
        other => Err(format!("{other:?}")),
    }
}

/// A GetBulk walk of the agent's whole subtree; returns the objects seen.
fn ours_walk(session: &mut SyncSession) -> usize {
    let root = arcs(REDIS_ROOT);
    let mut current = root.clone();
    let mut seen = 0;
    loop {
        let o = snmp2::Oid::from(current.as_slice()).unwrap();
        let pdu = session.getbulk(&[&o], 0, 50).expect("GETBULK");
        let mut last = None;
        for (name, _) in pdu.varbinds {
            let next: Vec<u64> = name.iter().expect("arcs").collect();
            if !next.starts_with(&root) {
                return seen;
            }
            seen += 1;
            last = Some(next);
        }
        match last {
            Some(next) => current = next,
            None => return seen,
        }
    }
}

fn session(snmpd: &Snmpd, timeout: Duration) -> SyncSession {
    let addr = format!("127.0.0.1:{}", snmpd.udp_port());
    SyncSession::new_v2c(addr, b"public", Some(timeout), 0).unwrap()
}

fn cpu_ticks(pid: u32) -> u64 {
    cpu_ns(pid)
}

/// Milliseconds of CPU per poll.
fn ms(ns: u64, polls: u64) -> f64 {
    ns as f64 / 1e6 / polls.max(1) as f64
}

/// Redis time per poll from the commandstats after a reset, and the
/// breakdown per command (calls per poll, µs per poll).
fn redis_side(redis: &Redis, polls: u64) -> (f64, String) {
    let stats = redis.command_stats();
    let mut total = 0;
    let mut parts = Vec::new();
    for (command, (calls, usec)) in &stats {
        if command == "config|resetstat" {
            continue; // the benchmark's own reset
        }
        total += usec;
        parts.push(format!(
            "{command} {:.1}×{:.1} µs",
            *calls as f64 / polls as f64,
            *usec as f64 / polls as f64
        ));
    }
    (total as f64 / polls.max(1) as f64, parts.join(", "))
}

/// What polls during a 10 s freeze showed: the longest poll and whether
/// any said the server was down.
struct Frozen {
    longest: Duration,
    said_down: Option<Duration>,
}

fn during_freeze(mut poll: impl FnMut() -> Result<bool, String>) -> Frozen {
    let started = Instant::now();
    let mut longest = Duration::ZERO;
    let mut said_down = None;
    while started.elapsed() < FREEZE {
        let t = Instant::now();
        let up = poll();
        longest = longest.max(t.elapsed());
        if said_down.is_none() && !matches!(up, Ok(true)) {
            said_down = Some(started.elapsed());
        }
        if let Some(rest) = Duration::from_secs(1).checked_sub(t.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    Frozen { longest, said_down }
}

/// Seconds from the kill until `poll` says down (polled every 100 ms, 30 s at most).
fn until_down(mut poll: impl FnMut() -> Result<bool, String>) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(30) {
        if !matches!(poll(), Ok(true)) {
            return Some(started.elapsed());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // test runners asking for tests: this is not one
    }
    let seconds: u64 = std::env::var("PEERS_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    // Extra agent options, e.g. PEERS_AGENT_ARGS="-c file.toml".
    let extra: Vec<String> = std::env::var("PEERS_AGENT_ARGS")
        .map(|s| s.split_whitespace().map(String::from).collect())
        .unwrap_or_default();
    let started_at = Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();

    let (redis_ours, redis_exp, redis_zbx) = (filled_redis(), filled_redis(), filled_redis());
    let fields = info_fields(&redis_ours);
    let version = redis_ours
        .info_map()
        .get("redis_version")
        .unwrap_or("?")
        .to_string();

    let snmpd = Snmpd::start();
    let shared = testkit::agent_args(&snmpd, &redis_ours, 1);
    let mut args: Vec<&str> = vec!["-n"];
    args.extend(shared.iter().map(String::as_str));
    args.extend(extra.iter().map(String::as_str));
    let mut agent = Agent::start_raw(&args, &[]);
    assert!(
        agent.wait_registered(Duration::from_secs(10)),
        "agent did not register:\n{}",
        agent.log()
    );
    // The agent as it was before issue 17: everything read at every poll
    // (slow_refresh = refresh), on a Redis, an snmpd and a config of its own.
    let redis_before = filled_redis();
    let snmpd_before_change = Snmpd::start();
    let before_dir = tempfile::tempdir().unwrap();
    let before_conf = before_dir.path().join("agent.toml");
    std::fs::write(&before_conf, "slow_refresh = 1\n").unwrap();
    let before_port = redis_before.port().to_string();
    let before_agentx = snmpd_before_change.agentx_address();
    let agent_before = Agent::start_raw(
        &[
            "-n",
            "-x",
            &before_agentx,
            "-h",
            "127.0.0.1",
            "-P",
            &before_port,
            "-r",
            "1",
            "-c",
            before_conf.to_str().unwrap(),
        ],
        &[],
    );
    let exporter = Exporter::start(&redis_exp);
    let zabbix = Zabbix::start(&redis_zbx);
    let mut snmp = session(&snmpd, Duration::from_secs(2));
    assert!(testkit::wait_until(Duration::from_secs(10), || ours_state(
        &mut snmp
    ) == Ok(
        true
    )));

    // Warm-up: a few polls each, then every Redis's statistics start at zero.
    let mut last_metrics = String::new();
    let mut last_info = String::new();
    for _ in 0..3 {
        last_metrics = scrape(exporter.port, Duration::from_secs(15)).unwrap();
        last_info = zabbix.poll(Duration::from_secs(15)).unwrap().1;
        std::thread::sleep(Duration::from_secs(1));
    }
    for redis in [&redis_ours, &redis_exp, &redis_zbx, &redis_before] {
        redis.command(&["CONFIG", "RESETSTAT"]).unwrap();
    }
    let pids = [agent.pid(), exporter.proc.pid(), zabbix.proc.pid()];
    let cpu_before_change = cpu_ticks(agent_before.pid());
    let before: Vec<u64> = pids.iter().map(|&p| cpu_ticks(p)).collect();
    let snmpd_before = cpu_ticks(snmpd.pid());

    // Steady: every second one poll of each peer; the agent polls on its
    // own, read through snmpd not at all in the first half, with a whole
    // walk each second in the second half.
    let mut peer_polls = 0u64;
    let mut walked = 0;
    let mut agent_half = 0;
    let (mut walk_agent_before, mut walk_snmpd_before) = (0, 0);
    let start = Instant::now();
    for tick in 0..seconds {
        if tick == seconds / 2 {
            agent_half = cpu_ticks(agent.pid()) - before[0];
            walk_agent_before = cpu_ticks(agent.pid());
            walk_snmpd_before = cpu_ticks(snmpd.pid());
        }
        let t = Instant::now();
        last_metrics = scrape(exporter.port, Duration::from_secs(15)).unwrap();
        last_info = zabbix.poll(Duration::from_secs(15)).unwrap().1;
        peer_polls += 1;
        if tick >= seconds / 2 {
            walked = ours_walk(&mut snmp);
        }
        let next = start + Duration::from_secs(tick + 1);
        std::thread::sleep(
            next.saturating_duration_since(Instant::now())
                .max(Duration::ZERO),
        );
        let _ = t;
    }
    let after: Vec<u64> = pids.iter().map(|&p| cpu_ticks(p)).collect();
    let cpu_before_change = cpu_ticks(agent_before.pid()) - cpu_before_change;
    let polls_before_change = redis_before
        .command_stats()
        .get("info")
        .map(|(calls, _)| *calls)
        .unwrap_or(0);
    let side_before_change = redis_side(&redis_before, polls_before_change);
    drop(agent_before);
    let walk_agent = cpu_ticks(agent.pid()) - walk_agent_before;
    let walk_snmpd = cpu_ticks(snmpd.pid()) - walk_snmpd_before;
    let _ = snmpd_before;
    let rss: Vec<u64> = pids.iter().map(|&p| status_kib(p, "VmRSS:")).collect();
    let ours_polls = redis_ours
        .command_stats()
        .get("info")
        .map(|(calls, _)| *calls)
        .unwrap_or(0);
    let sides = [
        redis_side(&redis_ours, ours_polls),
        redis_side(&redis_exp, peer_polls),
        redis_side(&redis_zbx, peer_polls),
    ];
    let covered = [
        ours_covered(&fields),
        exporter_covered(&last_metrics, &fields),
        zabbix_covered(&last_info, &fields),
    ];

    // Frozen: every Redis stopped for 10 s (and continued by the clock, not
    // when the polls end), each tool polled once a second meanwhile.
    let redis_pids = [redis_ours.pid(), redis_exp.pid(), redis_zbx.pid()];
    for pid in redis_pids {
        signal(pid, libc::SIGSTOP);
    }
    let frozen = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(FREEZE);
            for pid in redis_pids {
                signal(pid, libc::SIGCONT);
            }
        });
        let snmpd = &snmpd;
        let ours = s.spawn(move || {
            let mut snmp = session(snmpd, Duration::from_secs(5));
            during_freeze(|| ours_state(&mut snmp))
        });
        let exp = s.spawn(|| {
            during_freeze(|| {
                scrape(exporter.port, Duration::from_secs(30)).map(|m| m.contains("redis_up 1"))
            })
        });
        let zbx = s.spawn(|| during_freeze(|| zabbix.poll(Duration::from_secs(30)).map(|p| p.0)));
        [
            ours.join().unwrap(),
            exp.join().unwrap(),
            zbx.join().unwrap(),
        ]
    });
    // Everyone up again before the kill.
    std::thread::sleep(Duration::from_secs(3));
    assert!(testkit::wait_until(Duration::from_secs(10), || ours_state(
        &mut snmp
    ) == Ok(
        true
    )));

    // Killed: SIGKILL, then each tool polled every 100 ms until it says down.
    for pid in redis_pids {
        signal(pid, libc::SIGKILL);
    }
    let killed = std::thread::scope(|s| {
        let snmpd = &snmpd;
        let ours = s.spawn(move || {
            let mut snmp = session(snmpd, Duration::from_secs(5));
            until_down(|| ours_state(&mut snmp))
        });
        let exp = s.spawn(|| {
            until_down(|| {
                scrape(exporter.port, Duration::from_secs(30)).map(|m| m.contains("redis_up 1"))
            })
        });
        let zbx = s.spawn(|| until_down(|| zabbix.poll(Duration::from_secs(30)).map(|p| p.0)));
        [
            ours.join().unwrap(),
            exp.join().unwrap(),
            zbx.join().unwrap(),
        ]
    });

    let names = ["redis-snmp (this agent)", "redis_exporter", "zabbix_agent2"];
    let versions = [
        env!("CARGO_PKG_VERSION").to_string(),
        version_of("prometheus-redis-exporter"),
        version_of("zabbix-agent2"),
    ];
    let polls = [ours_polls, peer_polls, peer_polls];
    println!(
        "peers benchmark, {started_at}: Redis {version}, {DATABASES} dbs × {KEYS_PER_DB} keys each, one Redis per tool, polls every 1 s for {seconds} s"
    );
    println!("agent options: -r 1 {}", extra.join(" "));
    println!();
    println!(
        "{:<24} {:>9} {:>14} {:>9} {:>16} {:>9} {:>9} {:>12} {:>22} {:>14}",
        "tool",
        "version",
        "CPU/poll",
        "÷ zabbix",
        "Redis time/poll",
        "÷ zabbix",
        "RSS",
        "INFO fields",
        "poll while frozen 10 s",
        "kill → down"
    );
    let zabbix_cpu = ms(after[2] - before[2], polls[2]);
    let zabbix_redis = sides[2].0;
    for i in 0..3 {
        let cpu = if i == 0 {
            // The agent's own polling, in the first half (no SNMP reads).
            // (refresh 1 s: one poll a second).
            ms(agent_half, seconds / 2)
        } else {
            ms(after[i] - before[i], polls[i])
        };
        let frozen_text = format!(
            "{:.2} s, {}",
            frozen[i].longest.as_secs_f64(),
            match frozen[i].said_down {
                Some(t) => format!("down after {:.1} s", t.as_secs_f64()),
                None => "never down".to_string(),
            }
        );
        println!(
            "{:<24} {:>9} {:>11.2} ms {:>8.2}x {:>13.0} µs {:>8.2}x {:>5.1} MiB {:>5} of {:<4} {:>22} {:>14}",
            names[i],
            versions[i],
            cpu,
            cpu / zabbix_cpu,
            sides[i].0,
            sides[i].0 / zabbix_redis,
            rss[i] as f64 / 1024.0,
            covered[i].len(),
            fields.len(),
            frozen_text,
            match killed[i] {
                Some(t) => format!("{:.1} s", t.as_secs_f64()),
                None => "never (30 s)".to_string(),
            },
        );
    }
    println!();
    println!(
        "this agent with a GetBulk walk of its {walked} objects every second: agent {:.2} ms, snmpd {:.2} ms of CPU per walk",
        ms(walk_agent, seconds - seconds / 2),
        ms(walk_snmpd, seconds - seconds / 2),
    );
    println!(
        "this agent as before issue 17 (slow_refresh = refresh: INFO everything, SLOWLOG, LATENCY at every poll): Redis time {:.0} µs per poll ({:.2}x zabbix_agent2, {:.2}x this agent now), agent CPU {:.2} ms per poll",
        side_before_change.0,
        side_before_change.0 / zabbix_redis,
        side_before_change.0 / sides[0].0,
        ms(cpu_before_change, polls_before_change),
    );
    println!("Redis time per poll, by command (calls per poll × µs per poll):");
    println!("  {:<24} {}", "this agent, as before", side_before_change.1);
    for i in 0..3 {
        println!("  {:<24} {}", names[i], sides[i].1);
    }
    let ours_set = &covered[0];
    for i in 1..3 {
        let only: Vec<&String> = covered[i].difference(ours_set).collect();
        println!(
            "INFO fields {} covers that this agent does not: {only:?}",
            names[i]
        );
    }
    drop(agent);
    drop(exporter);
    drop(zabbix);
}

fn signal(pid: u32, signal: libc::c_int) {
    // SAFETY: kill(2) on a redis-server this benchmark started.
    unsafe {
        libc::kill(pid as libc::pid_t, signal);
    }
}

/// The installed Debian package's version, upstream part only.
fn version_of(package: &str) -> String {
    Command::new("dpkg-query")
        .args(["-W", "-f", "${Version}", package])
        .output()
        .map(|o| {
            let v = String::from_utf8_lossy(&o.stdout).to_string();
            let v = v.split(':').next_back().unwrap_or("").to_string();
            v.split(['+', '-']).next().unwrap_or("").to_string()
        })
        .unwrap_or_default()
}
