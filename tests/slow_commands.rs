//! Slow commands as notifications, end to end (issue 25 item 2): a real
//! Redis (or Valkey) runs slow Lua scripts, the agent reads its slow log
//! and sends `redisSlowCommand` through a real snmpd to a real snmptrapd,
//! which decodes it with our MIB. What a user would see: the command, its
//! duration as the server logged it, the client's name and address, the
//! instance; nothing old after the agent restarts or the log is RESET;
//! the entry as a row of `redisSlowCommandTable`.

// Starts real servers and tools: built only with the `system-tests`
// feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::path::Path;
use std::time::{Duration, Instant};
use testkit::{
    servers::ServerKind, wait_until, Agent, AgentConfig, Redis, Reply, RespConn, Snmpd, Snmptrapd,
};

/// A Lua loop the server runs for about 200 ms here (Valkey 8.0 on the
/// 2-core VM, 2026-11-26): ten times the agent's threshold below, so a
/// machine up to ten times faster still logs it as slow.
const SLOW_SCRIPT: &str = "local i=0 while i<20000000 do i=i+1 end return i";
/// A hundredth of it (about 1.8 ms here): in the slow log, which the
/// server keeps from 100 µs, and under the threshold. Both bounds hold on
/// a machine ten times faster or slower than this one. (The first version
/// ran 0.55 ms here against a log kept from 500 µs, and a faster CI
/// machine ran it under that: the test found no entry.)
const QUICK_SCRIPT: &str = "local i=0 while i<200000 do i=i+1 end return i";
/// The agent's threshold in the test: 20 ms.
const THRESHOLD_USEC: u64 = 20_000;

struct Stack {
    trapd: Snmptrapd,
    snmpd: Snmpd,
    redis: Redis,
    dir: tempfile::TempDir,
}

impl Stack {
    fn start(binary: &Path) -> Stack {
        let trapd = Snmptrapd::start();
        let snmpd = Snmpd::sending_to(&trapd);
        let redis = Redis::start_binary(binary, &["slowlog-log-slower-than 100"]);
        Stack {
            trapd,
            snmpd,
            redis,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// The agent, polling every second, arguments on; returns once its
    /// first poll (the baseline) is done.
    fn agent(&self) -> Agent {
        let mut agent = AgentConfig::new(&self.snmpd)
            .redis(
                "cache",
                &self.redis.address(),
                &format!("slow_command_threshold = {THRESHOLD_USEC}\nslow_command_args = true\n"),
            )
            .start(self.dir.path());
        agent.expect_registered(Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(1500));
        agent
    }

    /// The redisSlowCommand lines received so far.
    fn received(&self) -> Vec<String> {
        self.trapd.received("redisSlowCommand")
    }

    /// Waits (5 s at most) for the `n`th redisSlowCommand, and returns it.
    fn expect_nth(&self, n: usize) -> String {
        wait_until(Duration::from_secs(5), || self.received().len() >= n);
        let lines = self.received();
        assert!(
            lines.len() >= n,
            "{} redisSlowCommand received, {n} expected; snmptrapd:\n{}",
            lines.len(),
            self.trapd.log()
        );
        lines[n - 1].clone()
    }

    /// Three polls pass: what is due would have been sent.
    fn settle(&self) {
        std::thread::sleep(Duration::from_millis(3000));
    }
}

/// A client of its own that names itself and runs `script`: its address
/// (`ip:port`, as the server logs it) and the slow log's entry for it
/// (id, µs).
fn run_script(redis: &Redis, name: &str, script: &str) -> (String, u64, u64) {
    let mut conn = RespConn::connect(redis.port()).unwrap();
    assert!(matches!(
        conn.call(&["CLIENT", "SETNAME", name]).unwrap(),
        Reply::Status(_)
    ));
    let Reply::Bulk(Some(info)) = conn.call(&["CLIENT", "INFO"]).unwrap() else {
        panic!("CLIENT INFO")
    };
    let address = info
        .split_whitespace()
        .find_map(|f| f.strip_prefix("addr="))
        .unwrap()
        .to_string();
    assert!(matches!(
        conn.call(&["EVAL", script, "0"]).unwrap(),
        Reply::Integer(_)
    ));
    // The server's own record of it: the newest entry of this client.
    let Reply::Array(Some(entries)) = redis.command(&["SLOWLOG", "GET", "20"]).unwrap() else {
        panic!("SLOWLOG GET")
    };
    for entry in &entries {
        let Reply::Array(Some(fields)) = entry else {
            continue;
        };
        match (&fields[0], &fields[2], &fields[4]) {
            (Reply::Integer(id), Reply::Integer(usec), Reply::Bulk(Some(addr)))
                if *addr == address =>
            {
                return (address, *id as u64, *usec as u64);
            }
            _ => {}
        }
    }
    panic!("no slow log entry of {address}; the log: {entries:?}")
}

/// The value snmptrapd decoded for `object` (e.g. `redisScCommand`) in a
/// notification line: what follows `object.1.N = `.
fn value_of(line: &str, object: &str) -> String {
    let at = line
        .find(&format!("{object}.1."))
        .unwrap_or_else(|| panic!("no {object} in {line}"));
    let rest = &line[at..];
    let value = &rest[rest.find(" = ").unwrap() + 3..];
    // snmptrapd separates the varbinds by `|` (testkit's format2).
    let end = value.find('|').unwrap_or(value.len());
    value[..end].trim().to_string()
}

fn slow_commands_on(kind: ServerKind) {
    let test = "slow_commands";
    let Some(binary) = kind.binary_or_skip(test) else {
        return;
    };
    let stack = Stack::start(&binary);
    // In the log before the agent starts: the baseline, never sent.
    run_script(&stack.redis, "before-start", SLOW_SCRIPT);
    let mut agent = stack.agent();

    // A slow script, and a quick one under the threshold.
    let started = Instant::now();
    let (address, id, usec) = run_script(&stack.redis, "slow-client", SLOW_SCRIPT);
    assert!(
        usec >= THRESHOLD_USEC,
        "{}: the script ran {usec} µs",
        kind.label()
    );
    run_script(&stack.redis, "quick-client", QUICK_SCRIPT);
    let line = stack.expect_nth(1);
    println!(
        "{}: redisSlowCommand arrived {:?} after the script",
        kind.label(),
        started.elapsed()
    );
    assert!(
        line.contains("redisInstanceName.1 = STRING: cache"),
        "{line}"
    );
    assert_eq!(value_of(&line, "redisScCommand"), "STRING: eval", "{line}");
    assert_eq!(
        value_of(&line, "redisScClientName"),
        "STRING: slow-client",
        "{line}"
    );
    assert_eq!(
        value_of(&line, "redisScClientAddr"),
        format!("STRING: {address}"),
        "{line}"
    );
    assert_eq!(
        value_of(&line, "redisScDuration"),
        format!("Counter64: {usec} microseconds"),
        "{line}"
    );
    assert_eq!(
        value_of(&line, "redisScId"),
        format!("Counter64: {id}"),
        "{line}"
    );
    assert_eq!(
        value_of(&line, "redisScSkipped"),
        "Gauge32: 0 entries",
        "{line}"
    );
    assert!(
        value_of(&line, "redisScArgs").contains("i<20000000"),
        "{line}"
    );
    stack.settle();
    let received = stack.received();
    assert_eq!(received.len(), 1, "{}: {received:#?}", kind.label());

    // The same entry is a row of redisSlowCommandTable.
    let rows = stack.snmpd.redis_walk("3.28.1.4");
    assert!(
        rows.iter().any(|r| r.ends_with(&format!(" = {usec}"))),
        // The numeric walk shows the number without its UNITS.
        "{}: {rows:#?}",
        kind.label()
    );

    // SLOWLOG RESET: nothing old comes back; the ids go on.
    stack.redis.command(&["SLOWLOG", "RESET"]).unwrap();
    stack.settle();
    assert_eq!(stack.received().len(), 1, "{}", kind.label());

    // The agent restarts: what is in the log is its new baseline.
    run_script(&stack.redis, "during-restart", SLOW_SCRIPT);
    agent.stop();
    let _agent = stack.agent();
    stack.settle();
    assert_eq!(
        stack.received().len(),
        1,
        "{}: sent again after a restart of the agent: {:#?}",
        kind.label(),
        stack.received()
    );

    // A new one after both is sent, once.
    let (_, id_after, _) = run_script(&stack.redis, "after-restart", SLOW_SCRIPT);
    assert!(id_after > id, "{}: ids go on across RESET", kind.label());
    let line = stack.expect_nth(2);
    assert_eq!(
        value_of(&line, "redisScClientName"),
        "STRING: after-restart",
        "{line}"
    );
    stack.settle();
    assert_eq!(stack.received().len(), 2, "{}", kind.label());
}

#[test]
fn slow_commands_on_redis_7_0() {
    slow_commands_on(ServerKind::Redis70);
}

#[test]
fn slow_commands_on_valkey_9_1() {
    slow_commands_on(ServerKind::Valkey91);
}

#[test]
fn slow_commands_on_redis_8_2() {
    slow_commands_on(ServerKind::Redis82);
}

#[test]
fn slow_commands_on_redis_6_2() {
    slow_commands_on(ServerKind::Redis62);
}

#[test]
fn slow_commands_on_valkey_8_0() {
    slow_commands_on(ServerKind::Valkey80);
}

/// A server that restarts starts its ids at 0 again: the agent takes its
/// log as a new baseline (a new run_id) and sends the entries after it.
#[test]
fn a_restarted_server_is_a_new_baseline() {
    let Some(binary) = ServerKind::Redis70.binary_or_skip("a_restarted_server_is_a_new_baseline")
    else {
        return;
    };
    let mut stack = Stack::start(&binary);
    for _ in 0..3 {
        run_script(&stack.redis, "before", SLOW_SCRIPT);
    }
    let _agent = stack.agent();
    stack.redis.restart();
    // The agent reconnects and reads the restarted server's empty log.
    stack.settle();
    run_script(&stack.redis, "after-server-restart", SLOW_SCRIPT);
    let line = stack.expect_nth(1);
    assert_eq!(
        value_of(&line, "redisScClientName"),
        "STRING: after-server-restart",
        "{line}"
    );
    stack.settle();
    assert_eq!(stack.received().len(), 1, "{:#?}", stack.received());
}
