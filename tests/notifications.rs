//! Notifications end to end: real Redis servers change state, the agent
//! sends Notify PDUs through a real snmpd, and a real snmptrapd on loopback
//! receives them, decoded by name with our MIB.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::time::{Duration, Instant};
use testkit::{wait_until, Agent, AgentConfig, Redis, Snmpd, Snmptrapd};

struct Stack {
    trapd: Snmptrapd,
    snmpd: Snmpd,
}

fn stack() -> Stack {
    let trapd = Snmptrapd::start();
    let snmpd = Snmpd::sending_to(&trapd);
    Stack { trapd, snmpd }
}

fn start_agent(stack: &Stack, instances: &[&Redis], dir: &std::path::Path) -> Agent {
    let agent = instances
        .iter()
        .enumerate()
        .fold(AgentConfig::new(&stack.snmpd), |config, (i, r)| {
            config.redis(&format!("r{}", i + 1), &r.address(), "")
        })
        .start(dir);
    // Let the first poll (the baseline) happen.
    std::thread::sleep(Duration::from_millis(1500));
    agent
}

/// Waits (at most 3 s) for a notification line naming `name`; returns it
/// and how long after `since` it arrived.
fn expect_trap(trapd: &Snmptrapd, name: &str, since: Instant) -> (String, Duration) {
    expect_trap_within(trapd, name, since, Duration::from_secs(3))
}

fn expect_trap_within(
    trapd: &Snmptrapd,
    name: &str,
    since: Instant,
    limit: Duration,
) -> (String, Duration) {
    let mut line = None;
    wait_until(limit, || {
        line = trapd.received(name).into_iter().next();
        line.is_some()
    });
    let line =
        line.unwrap_or_else(|| panic!("no {name} received; snmptrapd log:\n{}", trapd.log()));
    (line, since.elapsed())
}

#[test]
fn instance_down_up_and_restart() {
    let stack = stack();
    let mut redis = Redis::start();
    let dir = tempfile::tempdir().unwrap();
    let _agent = start_agent(&stack, &[&redis], dir.path());
    // The start-up state is the baseline: nothing was sent.
    assert!(
        stack.trapd.received("REDIS-SERVER-MIB").is_empty(),
        "{}",
        stack.trapd.log()
    );

    let stopped = Instant::now();
    redis.stop();
    let (line, after) = expect_trap(&stack.trapd, "redisInstanceDown", stopped);
    println!("redisInstanceDown arrived {after:?} after redis stopped");
    assert!(after < Duration::from_secs(2), "{after:?}");
    assert!(line.contains("redisInstanceName.1 = STRING: r1"), "{line}");
    assert!(
        line.contains(&format!(
            "redisInstanceAddress.1 = STRING: {}",
            redis.address()
        )),
        "{line}"
    );
    assert!(line.contains("redisInstanceLastError.1"), "{line}");

    let started = Instant::now();
    redis.start_again();
    let (line, _) = expect_trap(&stack.trapd, "redisInstanceUp", started);
    assert!(line.contains("redisInstanceName.1 = STRING: r1"), "{line}");
    // A new process: a new run id.
    let (line, _) = expect_trap(&stack.trapd, "redisRestarted", started);
    let run_id = redis.info_map().get("run_id").unwrap().to_string();
    assert!(line.contains(&run_id), "{line}\nrun_id {run_id}");
}

#[test]
fn replication_link_and_role_changes() {
    let stack = stack();
    let mut master = Redis::start();
    let replica = Redis::start_with(&[&format!("replicaof 127.0.0.1 {}", master.port())]);
    assert!(wait_until(Duration::from_secs(10), || replica
        .info_map()
        .get("master_link_status")
        == Some("up")));
    let dir = tempfile::tempdir().unwrap();
    let _agent = start_agent(&stack, &[&master, &replica], dir.path());

    let stopped = Instant::now();
    master.stop();
    let (line, after) = expect_trap(&stack.trapd, "redisReplicationLinkDown", stopped);
    println!("redisReplicationLinkDown arrived {after:?} after the master stopped");
    assert!(line.contains("redisInstanceName.2 = STRING: r2"), "{line}");
    assert!(
        line.contains("redisReplLinkStatus.2 = INTEGER: down(2)"),
        "{line}"
    );
    assert!(
        line.contains(&format!(
            "redisReplMasterPort.2 = Gauge32: {}",
            master.port()
        )),
        "{line}"
    );

    // The replica retries its master every second, then resynchronises.
    master.start_again();
    let (line, _) = expect_trap_within(
        &stack.trapd,
        "redisReplicationLinkUp",
        Instant::now(),
        Duration::from_secs(15),
    );
    assert!(
        line.contains("redisReplLinkStatus.2 = INTEGER: up(1)"),
        "{line}"
    );

    replica.cli(&["REPLICAOF", "NO", "ONE"]);
    let (line, _) = expect_trap(&stack.trapd, "redisRoleChanged", Instant::now());
    assert!(
        line.contains("redisReplRole.2 = INTEGER: master(1)"),
        "{line}"
    );
}

#[test]
fn failed_background_save() {
    let stack = stack();
    let data = tempfile::tempdir().unwrap();
    let rdb_dir = data.path().join("rdb");
    std::fs::create_dir(&rdb_dir).unwrap();
    let redis = Redis::start_with(&[&format!("dir {}", rdb_dir.display())]);
    let dir = tempfile::tempdir().unwrap();
    let _agent = start_agent(&stack, &[&redis], dir.path());
    // Its working directory gone, the server cannot write a dump.
    std::fs::remove_dir_all(&rdb_dir).unwrap();
    redis.cli(&["BGSAVE"]);
    assert!(wait_until(Duration::from_secs(5), || redis
        .info_map()
        .get("rdb_last_bgsave_status")
        == Some("err")));
    let (line, _) = expect_trap(&stack.trapd, "redisPersistenceFailed", Instant::now());
    assert!(
        line.contains("redisPstBgsaveStatus.1 = INTEGER: err(2)"),
        "{line}"
    );
}
