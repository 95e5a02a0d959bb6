//! Benchmark: the agent's peak memory against each hostile reply of the
//! security review of 2026-11-26 (issue 24, M3).
//!
//! `cargo bench --bench hostile_replies`. For each reply of
//! [`testkit::hostile_replies`] (about 4 MiB each, `max_reply_bytes`' default),
//! a fresh release agent with one real redis-server and one "Redis" on
//! 127.0.0.1 that answers every command with that reply; once the hostile
//! server has been asked 4 times (the agent connects again at each poll
//! after a refused reply), the agent's peak RSS (`VmHWM`) and RSS
//! (`VmRSS`) are read from /proc, with what `redisInstanceLastError` says.
//! Before the reply meter (`src/redis/budget.rs`) the review measured 64
//! to 250 MB for these replies; the aim is under 40 MiB for each.
//!
//! The figures are printed; nothing is asserted on them (the test
//! `tests/local_attacker.rs` asserts the 40 MiB).

use std::time::Duration;
use testkit::{hostile_replies, status_kib, wait_until, AgentConfig, HostileServer, Redis, Snmpd};

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // test runners asking for tests: this is not one
    }
    let redis = Redis::start();
    println!(
        "{:<40} {:>10} {:>10}  redisInstanceLastError",
        "reply (about 4 MiB)", "VmHWM KiB", "VmRSS KiB"
    );
    let mut worst = 0;
    for (name, reply) in hostile_replies() {
        let server = HostileServer::start(reply);
        let snmpd = Snmpd::start();
        let dir = tempfile::tempdir().unwrap();
        let agent = AgentConfig::new(&snmpd)
            .redis("real", &redis.address(), "")
            .redis(
                "hostile",
                &format!("127.0.0.1:{}", server.port()),
                "timeout = 5.0",
            )
            .start_quiet(dir.path());
        let asked = wait_until(Duration::from_secs(60), || server.served() >= 4);
        // The last reply's parse, if any, done.
        std::thread::sleep(Duration::from_millis(500));
        let peak = status_kib(agent.pid(), "VmHWM:");
        let rss = status_kib(agent.pid(), "VmRSS:");
        let (_, error) = snmpd.instance_state(2);
        worst = worst.max(peak);
        println!(
            "{name:<40} {peak:>10} {rss:>10}  {}{}",
            error.chars().take(90).collect::<String>(),
            if asked {
                ""
            } else {
                " (asked fewer than 4 times)"
            }
        );
    }
    println!("worst peak: {worst} KiB ({:.1} MiB)", worst as f64 / 1024.0);
}
