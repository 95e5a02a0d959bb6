//! Faults from outside: snmpd killed over and over, Redis paused or asleep.
//! The agent keeps serving, says truthfully what it knows, and leaks nothing.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::time::{Duration, Instant};
use testkit::{status_kib, wait_until, Agent, Redis, Snmpd, LEGACY_ROOT};

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// The first legacy scalar, numerically; `Some(value)` when served.
fn served(snmpd: &Snmpd) -> bool {
    let var = snmpd
        .numeric()
        .timeout(Duration::from_millis(200))
        .get_one(&format!("{LEGACY_ROOT}.1.0"));
    var.ty == "Gauge32"
}

#[test]
fn snmpd_killed_and_restarted_fifty_times() {
    let mut snmpd = Snmpd::start();
    let redis = Redis::start();
    let agent = Agent::start(&snmpd, &redis, &[]);
    assert!(wait_until(Duration::from_secs(5), || served(&snmpd)));
    let mut slowest = Duration::ZERO;
    let mut rss_after_warmup = 0;
    let mut fds_after_warmup = 0;
    for round in 0..50 {
        if round % 2 == 0 {
            snmpd.kill();
        } else {
            snmpd.stop();
        }
        snmpd.start_again();
        let back = snmpd.ready_at();
        assert!(
            wait_until(Duration::from_secs(3), || served(&snmpd)),
            "round {round}: not served again:\n{}",
            agent.log()
        );
        let took = back.elapsed();
        slowest = slowest.max(took);
        assert!(
            took < Duration::from_secs(1),
            "round {round}: served again {took:?} after snmpd answered"
        );
        if round == 4 {
            rss_after_warmup = status_kib(agent.pid(), "VmRSS:");
            fds_after_warmup = open_fds(agent.pid());
        }
    }
    let rss = status_kib(agent.pid(), "VmRSS:");
    let fds = open_fds(agent.pid());
    println!("50 restarts: slowest return {slowest:?}; RSS {rss_after_warmup} -> {rss} KiB; fds {fds_after_warmup} -> {fds}");
    assert!(
        rss <= rss_after_warmup + 256,
        "RSS grew from {rss_after_warmup} to {rss} KiB"
    );
    assert!(
        fds <= fds_after_warmup,
        "file descriptors grew from {fds_after_warmup} to {fds}"
    );
}

/// Times a GET of the legacy scalar; panics if it is not answered.
fn timed_get(snmpd: &Snmpd, suffix: &str) -> (String, Duration) {
    let started = Instant::now();
    let var = snmpd
        .numeric()
        .get_one(&format!("{}.{suffix}", testkit::REDIS_ROOT));
    (var.value, started.elapsed())
}

#[test]
fn a_paused_redis_never_slows_an_answer_and_its_state_is_told() {
    let snmpd = Snmpd::start();
    let redis = Redis::start();
    let _agent = Agent::start(&snmpd, &redis, &[]);
    assert!(wait_until(Duration::from_secs(5), || served(&snmpd)));
    let (_, usual) = timed_get(&snmpd, "3.1.1.5.1");

    // SIGSTOP: connections hang, polls time out (the default timeout is 2 s).
    // SAFETY: signalling the test's own redis-server child.
    unsafe { libc::kill(redis.pid() as i32, libc::SIGSTOP) };
    let paused = Instant::now();
    let mut slowest = Duration::ZERO;
    let mut went_down = None;
    while paused.elapsed() < Duration::from_secs(6) {
        let (up, took) = timed_get(&snmpd, "3.1.1.4.1");
        slowest = slowest.max(took);
        if up == "2" && went_down.is_none() {
            went_down = Some(paused.elapsed());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let (age, _) = timed_get(&snmpd, "3.1.1.5.1");
    let (reason, _) = timed_get(&snmpd, "3.1.1.7.1");
    // SAFETY: as above.
    unsafe { libc::kill(redis.pid() as i32, libc::SIGCONT) };
    println!("GET usually {usual:?}, slowest while Redis was paused {slowest:?}; down after {went_down:?}; data age {age} s; reason {reason}");
    // An answer never waits for Redis: a GET while it is paused takes about
    // what it usually takes (one process start of snmpget dominates).
    assert!(
        slowest < usual + Duration::from_millis(500),
        "{slowest:?} vs {usual:?}"
    );
    assert!(went_down.is_some(), "the instance was never reported down");
    let age: u64 = age.parse().expect("data age served");
    assert!((3..=8).contains(&age), "data age {age} s after 6 s paused");
    assert!(reason.to_lowercase().contains("time"), "{reason}");
    assert!(wait_until(Duration::from_secs(5), || timed_get(
        &snmpd,
        "3.1.1.4.1"
    )
    .0 == "1"));
}
