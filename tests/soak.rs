//! Soak: continuous walks while Redis and snmpd restart now and then. No
//! walk may fail while snmpd is up, and the agent's memory must stay flat.
//!
//! Runs 60 s by default; `SOAK_SECONDS=3600 cargo test --features system-tests --test soak -- --nocapture`
//! for a long run.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::time::{Duration, Instant};
use testkit::{status_kib, Agent, Redis, Snmpd, ENTERPRISE};

#[test]
fn walks_restarts_and_flat_memory() {
    let seconds: u64 = std::env::var("SOAK_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let mut snmpd = Snmpd::start();
    let mut redis = Redis::start();
    let agent = Agent::start(&snmpd, &redis, &[]);
    let started = Instant::now();
    let warm_up = Duration::from_secs(seconds / 4);
    let mut rss_after_warm_up = None;
    let (mut walks, mut redis_restarts, mut snmpd_restarts) = (0u64, 0u64, 0u64);
    while started.elapsed() < Duration::from_secs(seconds) {
        let out = snmpd.numeric().bulkwalk(ENTERPRISE);
        assert!(
            out.success(),
            "walk {walks} failed:\n{out}\n{}",
            agent.log()
        );
        // The walk goes past our subtree to snmpd's own object after it.
        assert!(
            out.stdout.contains(testkit::AFTER_OID),
            "walk {walks} stopped early:\n{out}"
        );
        walks += 1;
        if walks % 10 == 0 {
            redis.restart();
            redis_restarts += 1;
        }
        if walks % 25 == 0 {
            snmpd.restart();
            snmpd_restarts += 1;
            // Back within a second (asserted elsewhere): wait for it here so
            // the next walk sees the subtree again.
            testkit::wait_until(Duration::from_secs(3), || {
                snmpd
                    .numeric()
                    .get_one(&format!("{}.3.1.1.2.1", testkit::REDIS_ROOT))
                    .ty
                    == "STRING"
            });
        }
        if rss_after_warm_up.is_none() && started.elapsed() >= warm_up {
            rss_after_warm_up = Some(status_kib(agent.pid(), "VmRSS:"));
        }
    }
    let before = rss_after_warm_up.expect("ran past the warm-up");
    let after = status_kib(agent.pid(), "VmRSS:");
    println!(
        "soak {seconds} s: {walks} walks, {redis_restarts} Redis and {snmpd_restarts} snmpd restarts; RSS after warm-up {before} KiB, at the end {after} KiB"
    );
    assert!(
        after <= before + 256,
        "RSS grew from {before} to {after} KiB"
    );
}
