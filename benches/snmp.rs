//! Benchmark: the subagent's objects against snmpd's own, through one real
//! snmpd, in one run, with a long-lived SNMP client.
//!
//! `cargo bench --bench snmp` (or `scripts/bench.sh`). It starts a private
//! redis-server and snmpd (with 17 native `override` scalars as the
//! baseline) and the release build of the agent, pins all of them and
//! itself to one CPU for stable numbers, then measures:
//! - GET of each of the 17 legacy scalars vs the 17 native scalars,
//! - a GetNext walk over each set, and a GetBulk walk (17 repetitions),
//! - the agent's CPU time per SNMP request (from /proc schedstat, ns),
//! - the agent's RSS, and how long after start it was registered.
//!
//! Figures are printed as time per request and as ratios ours/native.
//!
//! A second reference, in the same run: net-snmp's own AgentX subagent
//! (`snmpd -X`, C) serving 17 `override` scalars of its own through the
//! same master. It shows what the AgentX hop costs any subagent, whatever
//! it is written in: the master's share of that cost is not ours to cut.
//!
//! The floor, in the same run: the project's own minimal AgentX responder
//! (`support/floor.rs`: one read and one write per PDU, answers precomputed
//! from the agent's own answers), registered with the same snmpd beside the
//! agent, its copy of the agent's objects under `.20267.497` instead of
//! `.20267.400` (the same OIDs but for that one arc). Agent and floor
//! rounds alternate, so that a machine whose speed drifts (a shared VM)
//! slows both alike. The run prints agent ÷ floor for each phase's latency
//! and the CPU per request of each (utime + stime from `/proc/PID/stat`
//! over the phase, and ns on a CPU from schedstat).
//! Set `BENCH_ROUNDS` to change the number of rounds (default 2000).

#[path = "support/floor.rs"]
mod floor;
#[path = "support/mod.rs"]
mod support;

use snmp2::{Oid, SyncSession};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use support::{arcs, oid, pin, user_sys_ticks, TICKS_PER_SECOND};
use testkit::{cpu_ns, status_kib, Agent, Redis, Snmpd, BASELINE_ROOT, LEGACY_ROOT, REDIS_ROOT};

/// UNIX time in seconds of a tracing timestamp like 2026-11-22T15:34:57.407674Z.
fn parse_log_time(line: &str) -> Option<f64> {
    let stamp = line.split_whitespace().next()?;
    let (date, time) = stamp.trim_end_matches('Z').split_once('T')?;
    let mut d = date.split('-').map(|x| x.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let mut t = time.split(':');
    let (h, min, s): (f64, f64, f64) = (
        t.next()?.parse().ok()?,
        t.next()?.parse().ok()?,
        t.next()?.parse().ok()?,
    );
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146097 + doe - 719468;
    Some(days as f64 * 86400.0 + h * 3600.0 + min * 60.0 + s)
}

/// The subagent's 17 scalars: `.N.0`, N = 1..=17, Gauge32 N.
const NETSNMP_SUBAGENT_ROOT: &str = ".1.3.6.1.4.1.20267.498.1";

/// net-snmp's snmpd run as an AgentX subagent (`-X`) with only the
/// `override` module (`-I override`: no MIB-II of its own to register).
struct NetSnmpSubagent {
    child: std::process::Child,
    _dir: tempfile::TempDir,
}

impl NetSnmpSubagent {
    fn start(agentx_address: &str) -> NetSnmpSubagent {
        let dir = tempfile::tempdir().unwrap();
        let mut conf = format!("agentXSocket {agentx_address}\n");
        for n in 1..=17 {
            conf.push_str(&format!(
                "override {NETSNMP_SUBAGENT_ROOT}.{n}.0 unsigned {n}\n"
            ));
        }
        let config = dir.path().join("subagent.conf");
        std::fs::write(&config, conf).unwrap();
        let child = std::process::Command::new("snmpd")
            .args(["-f", "-C", "-c"])
            .arg(&config)
            .args(["-X", "-m", "", "-I", "override", "-Lf"])
            .arg(dir.path().join("subagent.log"))
            .env("SNMP_PERSISTENT_DIR", dir.path().join("persist"))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("snmpd -X");
        NetSnmpSubagent { child, _dir: dir }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for NetSnmpSubagent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where the floor serves its copy of the agent's objects: the agent's root
/// with `.400` replaced by `.497`.
const FLOOR_ROOT: &str = ".1.3.6.1.4.1.20267.497";

/// The floor responder as a process of its own.
struct Floor {
    child: std::process::Child,
}

impl Floor {
    fn start(agentx_address: &str, table: &std::path::Path) -> Floor {
        let child = std::process::Command::new(std::env::current_exe().unwrap())
            .arg(floor::FLOOR_FLAG)
            .arg(agentx_address)
            .arg(table)
            .arg(FLOOR_ROOT)
            .stdin(std::process::Stdio::null())
            .spawn()
            .expect("the floor responder");
        Floor { child }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Floor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The agent's first `count` GetNext answers from `root`, as floor table lines.
fn answers_from(session: &mut SyncSession, root: &[u64], count: usize) -> String {
    let mut current = root.to_vec();
    let mut lines = String::new();
    for _ in 0..count {
        let o = Oid::from(current.as_slice()).unwrap();
        let mut pdu = session.getnext(&o).expect("GETNEXT");
        let (name, value) = pdu.varbinds.next().expect("one varbind");
        let next: Vec<u64> = name.iter().expect("arcs").collect();
        lines.push_str(&floor::table_line(&next, &value).expect("a value the floor can serve"));
        lines.push('\n');
        current = next;
    }
    lines
}

struct Bench {
    session: SyncSession,
    agent_pid: u32,
    snmpd_pid: u32,
    rounds: usize,
}

/// Time per request and agent CPU per request of one measured phase.
struct Figure {
    per_request: Duration,
    agent_cpu_per_request: Duration,
    snmpd_cpu_per_request: Duration,
    /// The subagent's utime + stime (/proc/PID/stat, 10 ms ticks) per request.
    stat_cpu_per_request: Duration,
}

impl Bench {
    /// Rounds of `a` (charged to `pid_a`) and of `b` (to `pid_b`), one of
    /// each in turn.
    fn measure_pair(
        &mut self,
        requests_per_round: usize,
        (pid_a, mut a): (u32, impl FnMut(&mut SyncSession)),
        (pid_b, mut b): (u32, impl FnMut(&mut SyncSession)),
    ) -> (Figure, Figure) {
        for _ in 0..self.rounds / 10 {
            a(&mut self.session);
            b(&mut self.session);
        }
        let (cpu_a, cpu_b) = (cpu_ns(pid_a), cpu_ns(pid_b));
        let (ticks_a, ticks_b) = (user_sys_ticks(pid_a), user_sys_ticks(pid_b));
        let (mut elapsed_a, mut elapsed_b) = (Duration::ZERO, Duration::ZERO);
        for _ in 0..self.rounds {
            let t = Instant::now();
            a(&mut self.session);
            elapsed_a += t.elapsed();
            let t = Instant::now();
            b(&mut self.session);
            elapsed_b += t.elapsed();
        }
        let requests = (self.rounds * requests_per_round) as u32;
        let figure = |pid: u32, cpu: u64, ticks: (u64, u64), elapsed: Duration| {
            let after = user_sys_ticks(pid);
            let ticks = (after.0 + after.1) - (ticks.0 + ticks.1);
            Figure {
                per_request: elapsed / requests,
                agent_cpu_per_request: Duration::from_nanos(
                    (cpu_ns(pid) - cpu) / u64::from(requests),
                ),
                snmpd_cpu_per_request: Duration::ZERO,
                stat_cpu_per_request: Duration::from_secs_f64(
                    ticks as f64 / TICKS_PER_SECOND / f64::from(requests),
                ),
            }
        };
        (
            figure(pid_a, cpu_a, ticks_a, elapsed_a),
            figure(pid_b, cpu_b, ticks_b, elapsed_b),
        )
    }

    fn measure(
        &mut self,
        requests_per_round: usize,
        mut round: impl FnMut(&mut SyncSession),
    ) -> Figure {
        for _ in 0..self.rounds / 10 {
            round(&mut self.session); // warm-up
        }
        let cpu_before = cpu_ns(self.agent_pid);
        let snmpd_before = cpu_ns(self.snmpd_pid);
        let ticks_before = user_sys_ticks(self.agent_pid);
        let start = Instant::now();
        for _ in 0..self.rounds {
            round(&mut self.session);
        }
        let elapsed = start.elapsed();
        let cpu = cpu_ns(self.agent_pid) - cpu_before;
        let snmpd_cpu = cpu_ns(self.snmpd_pid) - snmpd_before;
        let ticks_after = user_sys_ticks(self.agent_pid);
        let ticks = (ticks_after.0 + ticks_after.1) - (ticks_before.0 + ticks_before.1);
        let requests = (self.rounds * requests_per_round) as u32;
        Figure {
            stat_cpu_per_request: Duration::from_secs_f64(
                ticks as f64 / TICKS_PER_SECOND / f64::from(requests),
            ),
            per_request: elapsed / requests,
            agent_cpu_per_request: Duration::from_nanos(cpu / u64::from(requests)),
            snmpd_cpu_per_request: Duration::from_nanos(snmpd_cpu / u64::from(requests)),
        }
    }
}

fn get_all(session: &mut SyncSession, oids: &[Oid<'static>]) {
    for o in oids {
        let pdu = session.get(o).expect("GET");
        assert_eq!(pdu.error_status, 0);
        assert_eq!(pdu.varbinds.count(), 1);
    }
}

/// GetNext from `root` until leaving it; returns the requests made.
fn walk(session: &mut SyncSession, root: &[u64]) -> usize {
    let mut current: Vec<u64> = root.to_vec();
    let mut requests = 0;
    loop {
        let o = Oid::from(current.as_slice()).unwrap();
        let mut pdu = session.getnext(&o).expect("GETNEXT");
        requests += 1;
        let (name, _) = pdu.varbinds.next().expect("one varbind");
        let next: Vec<u64> = name.iter().expect("arcs").collect();
        if !next.starts_with(root) {
            return requests;
        }
        current = next;
    }
}

fn bulk(session: &mut SyncSession, root: &Oid<'static>) {
    let pdu = session.getbulk(&[root], 0, 17).expect("GETBULK");
    assert_eq!(pdu.varbinds.count(), 17);
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // test runners asking for tests: this is not one
    }
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some(floor::FLOOR_FLAG) {
        floor::serve(&args[2], &args[3], &args[4]);
        return;
    }
    let rounds: usize = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    pin(0);
    let redis = Redis::start();
    let snmpd = Snmpd::start();
    pin(redis.pid());
    pin(snmpd.pid());

    let spawned_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let agentx = snmpd.agentx_address();
    let shared = testkit::agent_args(&snmpd, &redis, 10);
    let mut args = vec!["-n"];
    args.extend(shared.iter().map(String::as_str));
    let mut agent = Agent::start_raw(&args, &[]);
    assert!(
        agent.wait_registered(Duration::from_secs(10)),
        "agent did not register:\n{}",
        agent.log()
    );
    let registered_after = agent
        .log()
        .lines()
        .find(|l| testkit::log_shows_registered(l))
        .and_then(parse_log_time)
        .map(|t| t - spawned_at);
    pin(agent.pid());
    let rss_start = status_kib(agent.pid(), "VmRSS:");

    let addr = format!("127.0.0.1:{}", snmpd.udp_port());
    let session = SyncSession::new_v2c(addr, b"public", Some(Duration::from_secs(2)), 1).unwrap();
    let mut bench = Bench {
        session,
        agent_pid: agent.pid(),
        snmpd_pid: snmpd.pid(),
        rounds,
    };
    // Wait for the first poll to have published data.
    let first = oid(&format!("{LEGACY_ROOT}.1.0"));
    assert!(testkit::wait_until(Duration::from_secs(5), || {
        bench
            .session
            .get(&first)
            .map(|p| p.varbinds.count() == 1 && p.error_status == 0)
            .unwrap_or(false)
            && walk(&mut bench.session, &arcs(LEGACY_ROOT)) == 18
    }));

    let ours: Vec<Oid<'static>> = (1..=17)
        .map(|n| oid(&format!("{LEGACY_ROOT}.{n}.0")))
        .collect();
    let native: Vec<Oid<'static>> = (1..=17)
        .map(|n| oid(&format!("{BASELINE_ROOT}.{n}.0")))
        .collect();
    let ours_root = oid(LEGACY_ROOT);
    let native_root = oid(BASELINE_ROOT);
    let (ours_arcs, native_arcs) = (arcs(LEGACY_ROOT), arcs(BASELINE_ROOT));
    assert_eq!(walk(&mut bench.session, &native_arcs), 18);
    let subagent = NetSnmpSubagent::start(&agentx);
    pin(subagent.pid());
    let c_scalars: Vec<Oid<'static>> = (1..=17)
        .map(|n| oid(&format!("{NETSNMP_SUBAGENT_ROOT}.{n}.0")))
        .collect();
    let (c_root, c_arcs) = (oid(NETSNMP_SUBAGENT_ROOT), arcs(NETSNMP_SUBAGENT_ROOT));
    assert!(
        testkit::wait_until(Duration::from_secs(5), || walk(&mut bench.session, &c_arcs)
            == 18),
        "net-snmp's subagent did not register"
    );

    // The agent's answers to the walk, for the floor to serve.
    let floor_dir = tempfile::tempdir().unwrap();
    let floor_table = floor_dir.path().join("table");
    std::fs::write(
        &floor_table,
        // The agent's answers, moved to where the floor serves them.
        answers_from(&mut bench.session, &ours_arcs, 18)
            .replace(&REDIS_ROOT[1..], &FLOOR_ROOT[1..]),
    )
    .unwrap();

    let (user_before, sys_before) = user_sys_ticks(agent.pid());
    let get_ours = bench.measure(17, |s| get_all(s, &ours));
    let get_native = bench.measure(17, |s| get_all(s, &native));
    let walk_ours = bench.measure(18, |s| assert_eq!(walk(s, &ours_arcs), 18));
    let (user_after, sys_after) = user_sys_ticks(agent.pid());
    let walk_native = bench.measure(18, |s| assert_eq!(walk(s, &native_arcs), 18));
    let bulk_ours = bench.measure(1, |s| bulk(s, &ours_root));
    let bulk_native = bench.measure(1, |s| bulk(s, &native_root));
    // net-snmp's subagent: its CPU is charged where the agent's was.
    bench.agent_pid = subagent.pid();
    let get_c = bench.measure(17, |s| get_all(s, &c_scalars));
    let walk_c = bench.measure(18, |s| assert_eq!(walk(s, &c_arcs), 18));
    let bulk_c = bench.measure(1, |s| bulk(s, &c_root));

    let rss_end = status_kib(agent.pid(), "VmRSS:");
    let hwm = status_kib(agent.pid(), "VmHWM:");
    println!(
        "redis-snmp benchmark: {rounds} rounds, snmpd, agent, redis and client pinned to CPU 0"
    );
    println!();
    println!(
        "{:<28} {:>14} {:>14} {:>8} {:>12} {:>23}",
        "phase", "ours/request", "native/req.", "ratio", "agent CPU", "snmpd CPU ours/native"
    );
    for (name, o, n) in [
        ("GET (17 scalars)", &get_ours, &get_native),
        ("GetNext walk (18 requests)", &walk_ours, &walk_native),
        ("GetBulk walk (17 reps)", &bulk_ours, &bulk_native),
    ] {
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        println!(
            "{:<28} {:>11.1} µs {:>11.1} µs {:>7.2}x {:>9.2} µs {:>9.2} / {:>5.2} µs",
            name,
            us(o.per_request),
            us(n.per_request),
            o.per_request.as_secs_f64() / n.per_request.as_secs_f64(),
            us(o.agent_cpu_per_request),
            us(o.snmpd_cpu_per_request),
            us(n.snmpd_cpu_per_request),
        );
    }
    // The agent's share of the GET and GetNext phases (both measured and
    // warm-up rounds, plus the native phase in between, where it is idle),
    // split into its own code (user) and the kernel's work for it (system).
    let ticks = TICKS_PER_SECOND;
    let requests = (rounds + rounds / 10) as f64 * 35.0;
    println!();
    println!(
        "agent CPU per request over the GET and GetNext phases: user {:.2} µs, system {:.2} µs (10 ms ticks)",
        (user_after - user_before) as f64 / ticks / requests * 1e6,
        (sys_after - sys_before) as f64 / ticks / requests * 1e6,
    );
    println!(
        "agent RSS: {rss_start} KiB after start, {rss_end} KiB after the run (peak {hwm} KiB)"
    );
    println!();
    println!("net-snmp's own AgentX subagent (snmpd -X, C), same 17 scalars, same master:");
    println!(
        "{:<28} {:>14} {:>12} {:>12} {:>14} {:>20}",
        "phase", "C subagent/req", "C/native", "ours/C", "its CPU/req", "snmpd CPU for it"
    );
    for (name, c, o, n) in [
        ("GET (17 scalars)", &get_c, &get_ours, &get_native),
        (
            "GetNext walk (18 requests)",
            &walk_c,
            &walk_ours,
            &walk_native,
        ),
        ("GetBulk walk (17 reps)", &bulk_c, &bulk_ours, &bulk_native),
    ] {
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        println!(
            "{:<28} {:>11.1} µs {:>11.2}x {:>11.2}x {:>11.2} µs {:>17.2} µs",
            name,
            us(c.per_request),
            c.per_request.as_secs_f64() / n.per_request.as_secs_f64(),
            o.per_request.as_secs_f64() / c.per_request.as_secs_f64(),
            us(c.agent_cpu_per_request),
            us(c.snmpd_cpu_per_request),
        );
    }
    drop(subagent);
    match registered_after {
        Some(s) => println!("registered {:.1} ms after the agent was spawned", s * 1e3),
        None => println!("registration time: not found in the log"),
    }

    // The floor beside the agent, their rounds in turn.
    let floor = Floor::start(&agentx, &floor_table);
    pin(floor.pid());
    let floor_arcs = arcs(&LEGACY_ROOT.replace(REDIS_ROOT, FLOOR_ROOT));
    let floor_root = oid(&LEGACY_ROOT.replace(REDIS_ROOT, FLOOR_ROOT));
    let floor_scalars: Vec<Oid<'static>> = (1..=17)
        .map(|n| oid(&format!("{FLOOR_ROOT}.1.{n}.0")))
        .collect();
    let mut walked = 0;
    assert!(
        testkit::wait_until(Duration::from_secs(5), || {
            walked = walk(&mut bench.session, &floor_arcs);
            walked == 18
        }),
        "the floor responder did not register: a walk of its copy made {walked} requests; its table:\n{}",
        std::fs::read_to_string(&floor_table).unwrap_or_default()
    );
    let (agent_pid, floor_pid) = (agent.pid(), floor.pid());
    let (get_ours, get_floor) = bench.measure_pair(
        17,
        (agent_pid, |s: &mut SyncSession| get_all(s, &ours)),
        (floor_pid, |s: &mut SyncSession| get_all(s, &floor_scalars)),
    );
    let (walk_ours, walk_floor) = bench.measure_pair(
        18,
        (agent_pid, |s: &mut SyncSession| {
            assert_eq!(walk(s, &ours_arcs), 18)
        }),
        (floor_pid, |s: &mut SyncSession| {
            assert_eq!(walk(s, &floor_arcs), 18)
        }),
    );
    let (bulk_ours, bulk_floor) = bench.measure_pair(
        1,
        (agent_pid, |s: &mut SyncSession| bulk(s, &ours_root)),
        (floor_pid, |s: &mut SyncSession| bulk(s, &floor_root)),
    );
    drop(floor);
    drop(agent);
    println!();
    println!(
        "the floor: a minimal AgentX responder (benches/support/floor.rs), the agent's answers, same snmpd, rounds in turn"
    );
    println!(
        "{:<28} {:>12} {:>12} {:>12} {:>12} {:>12} {:>13} {:>16}",
        "phase",
        "agent/req",
        "floor/req",
        "agent/floor",
        "agent CPU",
        "floor CPU",
        "CPU over",
        "schedstat a / f"
    );
    for (name, o, f, varbinds) in [
        ("GET (17 scalars)", &get_ours, &get_floor, 1.0),
        ("GetNext walk (18 requests)", &walk_ours, &walk_floor, 1.0),
        ("GetBulk walk (17 reps)", &bulk_ours, &bulk_floor, 17.0),
    ] {
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        println!(
            "{:<28} {:>9.1} µs {:>9.1} µs {:>11.3}x {:>9.2} µs {:>9.2} µs {:>10.2} µs {:>7.2} / {:>5.2} µs",
            name,
            us(o.per_request),
            us(f.per_request),
            o.per_request.as_secs_f64() / f.per_request.as_secs_f64(),
            us(o.stat_cpu_per_request),
            us(f.stat_cpu_per_request),
            us(o.stat_cpu_per_request) - us(f.stat_cpu_per_request),
            us(o.agent_cpu_per_request) / varbinds,
            us(f.agent_cpu_per_request) / varbinds,
        );
    }
    println!(
        "(CPU: utime + stime per request from /proc/PID/stat, 10 ms ticks; schedstat: ns on CPU, per varbind)"
    );
}
