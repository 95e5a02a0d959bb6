//! Benchmark: an SNMP answer never waits for Redis, and says how old its
//! data is.
//!
//! `cargo bench --bench freshness` (or `scripts/bench.sh`). One private
//! redis-server (with `enable-debug-command local`, for `DEBUG SLEEP`),
//! snmpd and the release build of the agent polling every second, all
//! pinned to CPU 0 with a long-lived SNMP client. Three phases of the same
//! length, GETs of redisConnectedClients.0 and redisInstanceDataAge.1 back
//! to back:
//! - Redis answering (the baseline),
//! - Redis slow: `DEBUG SLEEP` blocks the server for the whole phase,
//! - Redis paused: `SIGSTOP` for the whole phase.
//!
//! For each it prints the GET latency (median, 99th percentile, maximum) and
//! its ratio to the baseline, and the data age the agent reported at the end
//! against the time since the phase began (the true age is that plus at most
//! one refresh interval). `FRESHNESS_SECONDS` sets the phase length (default 6).

#[path = "support/mod.rs"]
mod support;

use snmp2::{Oid, SyncSession, Value};
use std::io::{Read, Write};
use std::time::{Duration, Instant};
use support::{oid, pin};
use testkit::{wait_until, Agent, Redis, Snmpd, INSTANCE_ENTRY, LEGACY_ROOT};

struct Latencies {
    median: Duration,
    p99: Duration,
    max: Duration,
    gets: usize,
}

impl Latencies {
    fn of(mut samples: Vec<Duration>) -> Latencies {
        samples.sort();
        let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize];
        Latencies {
            median: at(0.5),
            p99: at(0.99),
            max: *samples.last().unwrap(),
            gets: samples.len(),
        }
    }
}

/// An unsigned value of one GET (None for noSuchInstance and the like).
fn get_u64(session: &mut SyncSession, name: &Oid<'static>) -> Option<u64> {
    let mut pdu = session.get(name).expect("GET");
    match pdu.varbinds.next()?.1 {
        Value::Unsigned32(v) | Value::Counter32(v) => Some(u64::from(v)),
        Value::Counter64(v) => Some(v),
        Value::Integer(v) => u64::try_from(v).ok(),
        _ => None,
    }
}

/// GETs back to back for `length`: their latencies, and the last data age.
fn phase(session: &mut SyncSession, length: Duration) -> (Latencies, Option<u64>) {
    let clients = oid(&format!("{LEGACY_ROOT}.1.0"));
    let age = oid(&format!("{INSTANCE_ENTRY}.5.1"));
    let mut samples = Vec::new();
    let started = Instant::now();
    while started.elapsed() < length {
        let t = Instant::now();
        get_u64(session, &clients);
        samples.push(t.elapsed());
    }
    (Latencies::of(samples), get_u64(session, &age))
}

/// `DEBUG SLEEP seconds` on a connection of its own; returns when Redis
/// has answered it (the server was blocked all that time).
fn debug_sleep(port: u16, seconds: f64) -> std::thread::JoinHandle<()> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .write_all(format!("DEBUG SLEEP {seconds}\r\n").as_bytes())
        .unwrap();
    std::thread::spawn(move || {
        let mut reply = [0u8; 64];
        let n = stream.read(&mut reply).unwrap_or(0);
        assert!(
            reply[..n].starts_with(b"+OK"),
            "DEBUG SLEEP: {}",
            String::from_utf8_lossy(&reply[..n])
        );
    })
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // test runners asking for tests: this is not one
    }
    let seconds: u64 = std::env::var("FRESHNESS_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6);
    let length = Duration::from_secs(seconds);
    pin(0);
    let redis = Redis::start_with(&["enable-debug-command local"]);
    let snmpd = Snmpd::start();
    let agent = Agent::start(&snmpd, &redis, &[]);
    for pid in [redis.pid(), snmpd.pid(), agent.pid()] {
        pin(pid);
    }
    let address = format!("127.0.0.1:{}", snmpd.udp_port());
    let mut session =
        SyncSession::new_v2c(address, b"public", Some(Duration::from_secs(2)), 0).unwrap();
    let clients = oid(&format!("{LEGACY_ROOT}.1.0"));
    assert!(
        wait_until(Duration::from_secs(5), || get_u64(&mut session, &clients)
            .is_some()),
        "no data:\n{}",
        agent.log()
    );

    let (answering, age_answering) = phase(&mut session, length);

    let sleeper = debug_sleep(redis.port(), seconds as f64 + 0.5);
    let (slow, age_slow) = phase(&mut session, length);
    sleeper.join().unwrap();
    // Fresh again: the next poll after the sleep may wait out a reconnection
    // delay first, so give it a few refresh intervals.
    assert!(
        wait_until(Duration::from_secs(15), || {
            get_u64(&mut session, &oid(&format!("{INSTANCE_ENTRY}.5.1"))) == Some(0)
        }),
        "redisInstanceDataAge.1 never came back to 0 after DEBUG SLEEP:\n{}",
        agent.log()
    );

    // SAFETY: signalling our own redis-server child.
    unsafe { libc::kill(redis.pid() as i32, libc::SIGSTOP) };
    let (paused, age_paused) = phase(&mut session, length);
    // SAFETY: as above.
    unsafe { libc::kill(redis.pid() as i32, libc::SIGCONT) };

    println!(
        "redis-snmp freshness benchmark: {seconds} s per phase, agent refresh 1 s, poll timeout 2 s, all pinned to CPU 0"
    );
    println!();
    println!(
        "{:<26} {:>7} {:>11} {:>11} {:>11} {:>13} {:>22}",
        "Redis", "GETs", "median", "p99", "max", "median ratio", "data age at the end"
    );
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    for (name, l, age) in [
        ("answering (baseline)", &answering, age_answering),
        ("slow (DEBUG SLEEP)", &slow, age_slow),
        ("paused (SIGSTOP)", &paused, age_paused),
    ] {
        let age = match age {
            Some(a) => format!("{a} s"),
            None => "absent".to_string(),
        };
        println!(
            "{:<26} {:>7} {:>8.1} µs {:>8.1} µs {:>8.1} µs {:>12.2}x {:>22}",
            name,
            l.gets,
            us(l.median),
            us(l.p99),
            us(l.max),
            l.median.as_secs_f64() / answering.median.as_secs_f64(),
            age,
        );
    }
    println!();
    println!(
        "a truthful data age after a {seconds} s phase of Redis not answering: {seconds} to {} s",
        seconds + 1
    );
}
