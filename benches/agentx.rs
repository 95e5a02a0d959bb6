//! Benchmark: the subagent alone, on a direct AgentX socket (no snmpd).
//!
//! `cargo bench --bench agentx` (or `scripts/bench.sh`). The benchmark is
//! the AgentX master: it listens on a unix socket in a temporary directory,
//! starts the release build of the agent against it and a private
//! redis-server, answers the agent's Open and Register PDUs, then sends
//! request PDUs and measures, per PDU:
//! - Get of the 17 legacy scalars (one PDU, 17 search ranges),
//! - GetNext of one legacy scalar,
//! - the same Get with 32 PDUs in flight (pipelined: the most PDUs per second),
//! - the agent's CPU time (schedstat ns; user/system split from /proc stat
//!   ticks) and RSS.
//!
//! The baseline, measured in the same run over the same kind of socket, is
//! a trivial responder thread that reads each PDU and writes back a reply of
//! the same size as the agent's: what the kernel's socket round trip costs
//! before any AgentX work. Ratios are agent / baseline.
//! Everything is pinned to CPU 0. `BENCH_ROUNDS` sets the number of PDUs per
//! phase (default 20000).

#[path = "support/mod.rs"]
mod support;

use agentx::encodings::{SearchRange, SearchRangeList, ID};
use agentx::pdu;
use redis_snmp::agentx::pdu::{decode, parse_header, Incoming, HEADER_LEN};
use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::time::{Duration, Instant};
use support::{pin, user_sys_ticks, TICKS_PER_SECOND};
use testkit::{cpu_ns, status_kib, Agent, Redis, LEGACY_ROOT};

fn id(dotted: &str) -> ID {
    let arcs: Vec<u32> = dotted
        .trim_start_matches('.')
        .split('.')
        .map(|s| s.parse().unwrap())
        .collect();
    ID::try_from(arcs).unwrap()
}

/// One whole PDU (header and payload) from the stream.
fn read_pdu(stream: &mut UnixStream) -> Vec<u8> {
    let mut pdu = vec![0; HEADER_LEN];
    stream.read_exact(&mut pdu).expect("PDU header");
    let header = parse_header(pdu[..HEADER_LEN].try_into().unwrap()).expect("valid header");
    let len = usize::try_from(header.payload_len).unwrap();
    pdu.resize(HEADER_LEN + len, 0);
    stream
        .read_exact(&mut pdu[HEADER_LEN..])
        .expect("PDU payload");
    pdu
}

fn decoded(pdu: &[u8]) -> Incoming {
    let header = parse_header(pdu[..HEADER_LEN].try_into().unwrap()).unwrap();
    decode(&header, &pdu[HEADER_LEN..]).expect("the agent's PDU decodes")
}

/// Answer the agent's Open and Registers the way snmpd does: session 1, no error.
fn accept_session(listener: &UnixListener) -> UnixStream {
    let (mut stream, _) = listener.accept().expect("the agent connects");
    let answer = |stream: &mut UnixStream, request: &[u8]| {
        let header = pdu::Header::from_bytes(request).expect("header");
        let mut response = pdu::Response::from_header(&header);
        response.header.session_id = 1;
        stream.write_all(&response.to_bytes().unwrap()).unwrap();
    };
    let open = read_pdu(&mut stream);
    answer(&mut stream, &open);
    // Registers follow at once; the session is up when none came for 300 ms.
    stream
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut head = [0u8; HEADER_LEN];
    while stream.read_exact(&mut head).is_ok() {
        let header = parse_header(&head).unwrap();
        let mut rest = vec![0; usize::try_from(header.payload_len).unwrap()];
        stream.read_exact(&mut rest).unwrap();
        answer(&mut stream, &head);
    }
    stream.set_read_timeout(None).unwrap();
    stream
}

/// A request PDU, encoded once; `packet_id` is left as encoded (the agent
/// echoes whatever it is).
fn get_legacy_scalars() -> Vec<u8> {
    let ranges = (1..=17)
        .map(|n| {
            let name = id(&format!("{LEGACY_ROOT}.{n}.0"));
            SearchRange::new(name, ID::default())
        })
        .collect();
    let mut get = pdu::Get::new(SearchRangeList(ranges));
    get.header.session_id = 1;
    get.to_bytes().unwrap()
}

fn getnext_one() -> Vec<u8> {
    let start = id(&format!("{LEGACY_ROOT}.3.0"));
    let mut next = pdu::GetNext::new(SearchRangeList(vec![SearchRange::new(
        start,
        ID::default(),
    )]));
    next.header.session_id = 1;
    next.to_bytes().unwrap()
}

struct Phase {
    per_pdu: Duration,
    cpu_ns_per_pdu: Option<f64>,
}

/// Send `rounds` copies of `request`, `window` at a time, and read as many
/// responses; `cpu_of` is the process whose CPU time is charged.
fn run(
    stream: &mut UnixStream,
    request: &[u8],
    rounds: usize,
    window: usize,
    cpu_of: Option<u32>,
) -> Phase {
    let batch: Vec<u8> = request.repeat(window);
    let cpu_before = cpu_of.map(cpu_ns);
    let started = Instant::now();
    for _ in 0..rounds / window {
        stream.write_all(&batch).unwrap();
        for _ in 0..window {
            read_pdu(stream);
        }
    }
    let elapsed = started.elapsed();
    let pdus = (rounds / window * window) as f64;
    Phase {
        per_pdu: elapsed.div_f64(pdus),
        cpu_ns_per_pdu: cpu_of.map(|pid| (cpu_ns(pid) - cpu_before.unwrap()) as f64 / pdus),
    }
}

/// The baseline: a responder thread that answers each PDU with a reply of
/// `reply_len` bytes (the size of the agent's reply to the same request).
/// Returns the client end and the thread's id (for its CPU time).
fn echo_pair(reply_len: usize) -> (UnixStream, u32) {
    let (client, mut server) = UnixStream::pair().unwrap();
    let (tid_tx, tid_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // SAFETY: gettid has no preconditions.
        let tid = u32::try_from(unsafe { libc::gettid() }).unwrap();
        pin(tid);
        tid_tx.send(tid).unwrap();
        let mut head = [0u8; HEADER_LEN];
        let mut payload = Vec::new();
        let mut out = vec![0u8; reply_len];
        while server.read_exact(&mut head).is_ok() {
            let header = parse_header(&head).unwrap();
            payload.resize(usize::try_from(header.payload_len).unwrap(), 0);
            if server.read_exact(&mut payload).is_err() {
                break;
            }
            // A Response header with the request's ids, then zero bytes.
            out[..HEADER_LEN].copy_from_slice(&head);
            out[1] = 18;
            let len = u32::try_from(reply_len - HEADER_LEN).unwrap();
            out[16..20].copy_from_slice(&len.to_le_bytes());
            if server.write_all(&out).is_err() {
                break;
            }
        }
    });
    (client, tid_rx.recv().unwrap())
}

/// Nanoseconds one of this process's threads spent on a CPU.
fn thread_cpu_ns(tid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat"))
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// `run`, charging the CPU time of the baseline's responder thread.
fn run_baseline(
    (stream, tid): &mut (UnixStream, u32),
    request: &[u8],
    rounds: usize,
    window: usize,
) -> Phase {
    let before = thread_cpu_ns(*tid);
    let mut phase = run(stream, request, rounds, window, None);
    let pdus = (rounds / window * window) as f64;
    phase.cpu_ns_per_pdu = Some((thread_cpu_ns(*tid) - before) as f64 / pdus);
    phase
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // test runners asking for tests: this is not one
    }
    let rounds: usize = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20000);
    pin(0);
    let redis = Redis::start();
    pin(redis.pid());
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("master.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    let port = redis.port().to_string();
    let address = format!("unix:{}", socket.display());
    let agent = Agent::start_raw(
        &[
            "-n",
            "-x",
            &address,
            "-h",
            "127.0.0.1",
            "-P",
            &port,
            "-r",
            "10",
        ],
        &[],
    );
    pin(agent.pid());
    let mut stream = accept_session(&listener);

    // Wait for the first poll: the Get then answers values, not noSuchInstance.
    let get = get_legacy_scalars();
    let next = getnext_one();
    let deadline = Instant::now() + Duration::from_secs(10);
    let (get_reply_len, next_reply_len) = loop {
        stream.write_all(&get).unwrap();
        let reply = read_pdu(&mut stream);
        if let Incoming::Response { varbinds, .. } = decoded(&reply) {
            if varbinds.len() == 17 && varbinds.iter().all(|vb| vb.value.is_some()) {
                stream.write_all(&next).unwrap();
                break (reply.len(), read_pdu(&mut stream).len());
            }
        }
        assert!(
            Instant::now() < deadline,
            "no data after 10 s:\n{}",
            agent.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let rss_start = status_kib(agent.pid(), "VmRSS:");

    // Warm-up, then the agent's phases, then the baseline's.
    run(&mut stream, &get, rounds / 10, 1, None);
    let (user_before, sys_before) = user_sys_ticks(agent.pid());
    let agent_get = run(&mut stream, &get, rounds, 1, Some(agent.pid()));
    let agent_next = run(&mut stream, &next, rounds, 1, Some(agent.pid()));
    let agent_piped = run(&mut stream, &get, rounds, 32, Some(agent.pid()));
    let (user_after, sys_after) = user_sys_ticks(agent.pid());
    let rss_end = status_kib(agent.pid(), "VmRSS:");

    let mut echo_get = echo_pair(get_reply_len);
    let mut echo_next = echo_pair(next_reply_len);
    run(&mut echo_get.0, &get, rounds / 10, 1, None);
    let base_get = run_baseline(&mut echo_get, &get, rounds, 1);
    let base_next = run_baseline(&mut echo_next, &next, rounds, 1);
    let base_piped = run_baseline(&mut echo_get, &get, rounds, 32);

    println!(
        "redis-snmp AgentX benchmark: {rounds} PDUs per phase, direct unix socket, agent and benchmark pinned to CPU 0"
    );
    println!();
    println!(
        "{:<30} {:>10} {:>8} {:>10} {:>7} {:>10} {:>10} {:>10}",
        "phase", "agent/PDU", "PDUs/s", "base/PDU", "ratio", "agent CPU", "base CPU", "CPU over"
    );
    for (name, ours, base) in [
        ("Get, 17 scalars", &agent_get, &base_get),
        ("GetNext, 1 scalar", &agent_next, &base_next),
        ("Get, 17 scalars, 32 in flight", &agent_piped, &base_piped),
    ] {
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        let (cpu, base_cpu) = (
            ours.cpu_ns_per_pdu.unwrap_or(0.0) / 1e3,
            base.cpu_ns_per_pdu.unwrap_or(0.0) / 1e3,
        );
        println!(
            "{:<30} {:>7.2} µs {:>8.0} {:>7.2} µs {:>6.2}x {:>7.2} µs {:>7.2} µs {:>7.2} µs",
            name,
            us(ours.per_pdu),
            1.0 / ours.per_pdu.as_secs_f64(),
            us(base.per_pdu),
            ours.per_pdu.as_secs_f64() / base.per_pdu.as_secs_f64(),
            cpu,
            base_cpu,
            cpu - base_cpu,
        );
    }
    let ticks = TICKS_PER_SECOND;
    let pdus = (rounds * 3) as f64;
    println!();
    println!(
        "agent CPU per PDU over the three phases: user {:.2} µs, system {:.2} µs (10 ms ticks)",
        (user_after - user_before) as f64 / ticks / pdus * 1e6,
        (sys_after - sys_before) as f64 / ticks / pdus * 1e6,
    );
    println!(
        "agent RSS: {rss_start} KiB before, {rss_end} KiB after the run (peak {} KiB)",
        status_kib(agent.pid(), "VmHWM:")
    );
    drop(stream);
    drop(agent);
}
