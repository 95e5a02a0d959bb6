//! Issue 16 part 6: `systemctl reload` (SIGHUP) reads the configuration
//! again without dropping the AgentX session. A real agent behind a real
//! snmpd polls real redis-server processes; the file is rewritten and the
//! agent sent SIGHUP, as the unit's `ExecReload=/bin/kill -HUP $MAINPID`
//! does, and what a manager and Redis itself see is checked.

// Starts real servers and tools: built only with the `system-tests`
// feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::time::Duration;
use testkit::{wait_until, Agent, AgentConfig, Redis, Snmpd, REDIS_ROOT};

/// `redisInstanceTable` columns (`redis.3.1.1.C.index`).
const NAME: u32 = 2;
const STATE: u32 = 4;
const POLLS_OK: u32 = 8;

fn instance_oid(column: u32, index: u32) -> String {
    format!("{REDIS_ROOT}.3.1.1.{column}.{index}")
}

fn get(snmpd: &Snmpd, column: u32, index: u32) -> testkit::Var {
    snmpd.numeric().get_one(&instance_oid(column, index))
}

/// Waits until instance `index` is served as `name` and up(1).
fn expect_up(snmpd: &Snmpd, index: u32, name: &str) {
    let mut last = (String::new(), String::new());
    let up = wait_until(Duration::from_secs(10), || {
        last = (
            get(snmpd, NAME, index).text(),
            get(snmpd, STATE, index).value,
        );
        last.0 == name && last.1 == "1"
    });
    assert!(
        up,
        "instance {index}: (name, state) = {last:?}, expected {name:?} up"
    );
}

/// The instance indexes that have rows in any table of REDIS-SERVER-MIB
/// (`redis.3.T.1.C.index…`: every table is indexed by
/// `redisInstanceIndex` first, or AUGMENTS `redisInstanceEntry`).
fn indexes_served(snmpd: &Snmpd) -> std::collections::BTreeSet<u32> {
    let tables = format!("{REDIS_ROOT}.3.");
    let walk = snmpd.numeric().bulkwalk(&format!("{REDIS_ROOT}.3"));
    assert!(walk.success(), "{walk}");
    walk.vars()
        .iter()
        .filter_map(|v| v.name.strip_prefix(&tables))
        .map(|rest| {
            let arcs: Vec<&str> = rest.split('.').collect();
            arcs[3].parse().unwrap()
        })
        .collect()
}

/// The id of the agent's connection to `redis` (`CLIENT SETNAME
/// redis-snmp`), from the server's own CLIENT LIST; `None` when there is
/// none.
fn agent_connection(redis: &Redis) -> Option<String> {
    let list = redis.cli(&["CLIENT", "LIST"]);
    let ids: Vec<String> = list
        .lines()
        .filter(|l| l.split(' ').any(|f| f == "name=redis-snmp"))
        .filter_map(|l| l.split(' ').find_map(|f| f.strip_prefix("id=")))
        .map(str::to_string)
        .collect();
    assert!(ids.len() <= 1, "more than one agent connection: {list}");
    ids.into_iter().next()
}

/// How many times the agent has registered its subtrees with snmpd.
fn registrations(agent: &Agent) -> usize {
    agent
        .log()
        .lines()
        .filter(|l| l.contains("registered ") && l.contains("with the AgentX master"))
        .count()
}

#[test]
fn sighup_drops_b_keeps_a_adds_c_refuses_a_broken_file_and_restarts_a_changed_instance() {
    let snmpd = Snmpd::start();
    let (a, b, c) = (Redis::start(), Redis::start(), Redis::start());
    let dir = tempfile::tempdir().unwrap();
    let mut agent = AgentConfig::new(&snmpd)
        .redis("a", &a.address(), "")
        .redis("b", &b.address(), "")
        .start(dir.path());
    expect_up(&snmpd, 1, "a");
    expect_up(&snmpd, 2, "b");
    // A few polls of a (one a second), so that a restarted poller, which
    // counts from zero, would show.
    assert!(wait_until(Duration::from_secs(10), || get(
        &snmpd, POLLS_OK, 1
    )
    .number()
    .is_some_and(|n| n >= 4)));
    let a_connection = agent_connection(&a).expect("the agent's connection to a");
    assert!(agent_connection(&b).is_some());
    let registered = registrations(&agent);
    assert!(registered >= 1, "{}", agent.log());
    assert_eq!(
        indexes_served(&snmpd),
        [1, 2].into(),
        "rows before the reload"
    );

    // b dropped, a as it was, c added.
    AgentConfig::new(&snmpd)
        .redis("a", &a.address(), "")
        .redis("c", &c.address(), "")
        .write(dir.path());
    let polls_before = get(&snmpd, POLLS_OK, 1).u64();
    let said = agent.reload("configuration reloaded");
    for part in [
        "\"a\" kept (index 1)",
        "\"b\" removed (index 2)",
        "\"c\" added (index 3)",
    ] {
        assert!(said.contains(part), "{part:?} not in {said:?}");
    }
    expect_up(&snmpd, 3, "c");
    // a: the same row, the same connection, its counters going on.
    expect_up(&snmpd, 1, "a");
    // A restarted poller would count from 1 again.
    assert!(wait_until(Duration::from_secs(5), || get(
        &snmpd, POLLS_OK, 1
    )
    .u64()
        > polls_before));
    assert_eq!(agent_connection(&a).as_deref(), Some(a_connection.as_str()));
    // b: no row in any table, and its connection closed.
    assert_eq!(
        indexes_served(&snmpd),
        [1, 3].into(),
        "rows after the reload"
    );
    assert!(get(&snmpd, NAME, 2).is_no_such_instance());
    assert!(
        wait_until(Duration::from_secs(5), || agent_connection(&b).is_none()),
        "the agent still holds a connection to b: {}",
        b.cli(&["CLIENT", "LIST"])
    );
    // The AgentX session was not opened again.
    assert_eq!(registrations(&agent), registered, "{}", agent.log());

    // A broken file: refused, with its file and line; everything served
    // as before.
    AgentConfig::new(&snmpd)
        .top("refresh", "\"often\"")
        .redis("a", &a.address(), "")
        .write(dir.path());
    let polls_before = get(&snmpd, POLLS_OK, 1).u64();
    let refused = agent.reload("reload refused");
    assert!(
        refused.contains("agent.toml") && refused.contains("line ") && refused.contains("refresh"),
        "{refused}"
    );
    assert!(wait_until(Duration::from_secs(5), || get(
        &snmpd, POLLS_OK, 1
    )
    .u64()
        > polls_before));
    expect_up(&snmpd, 1, "a");
    expect_up(&snmpd, 3, "c");
    assert_eq!(indexes_served(&snmpd), [1, 3].into());
    assert_eq!(agent_connection(&a).as_deref(), Some(a_connection.as_str()));
    let c_connection = agent_connection(&c).expect("the agent's connection to c");
    assert_eq!(registrations(&agent), registered);

    // c's timeout changed: restarted at its index, on a new connection. The
    // MIB's root changed too: that needs a restart, says the log, and the
    // agent goes on serving where it registered.
    AgentConfig::new(&snmpd)
        .top("oid", "\".1.3.6.1.4.1.99999.1\"")
        .redis("a", &a.address(), "")
        .redis("c", &c.address(), "timeout = 3.0\n")
        .write(dir.path());
    let said = agent.reload("configuration reloaded");
    assert!(
        said.contains("\"a\" kept (index 1), \"c\" restarted (index 3)"),
        "{said}"
    );
    assert!(
        agent
            .log()
            .contains("the MIB roots (oid, puppet.oid) changed in the file"),
        "{}",
        agent.log()
    );
    assert!(
        wait_until(Duration::from_secs(5), || agent_connection(&c)
            .is_some_and(|id| id != c_connection)),
        "{}",
        c.cli(&["CLIENT", "LIST"])
    );
    expect_up(&snmpd, 3, "c");
    expect_up(&snmpd, 1, "a");
    assert_eq!(agent_connection(&a).as_deref(), Some(a_connection.as_str()));
    assert_eq!(indexes_served(&snmpd), [1, 3].into());
    assert_eq!(registrations(&agent), registered);
}

/// The same server under a new name keeps its row: what turning
/// `[discovery] local` on by a reload does to the default `redis1`
/// (127.0.0.1:6379 comes back as `port6379`). Row 1 is the one the 17
/// legacy objects describe: they keep answering. A new name at another
/// address is a removal; removing row 1 says what it costs.
#[test]
fn sighup_renaming_an_instance_at_the_same_address_keeps_its_row_and_the_legacy_objects() {
    let snmpd = Snmpd::start();
    let (a, other) = (Redis::start(), Redis::start());
    let dir = tempfile::tempdir().unwrap();
    let legacy = format!("{}.1.0", testkit::LEGACY_ROOT);
    let mut agent = AgentConfig::new(&snmpd)
        .redis("a", &a.address(), "")
        .start(dir.path());
    expect_up(&snmpd, 1, "a");
    assert_eq!(snmpd.numeric().get_one(&legacy).ty, "Gauge32");

    AgentConfig::new(&snmpd)
        .redis("port6379", &a.address(), "")
        .write(dir.path());
    let said = agent.reload("configuration reloaded");
    assert!(
        said.contains("\"a\" renamed \"port6379\" (index 1, the same server)"),
        "{said}"
    );
    expect_up(&snmpd, 1, "port6379");
    let served = snmpd.numeric().get_one(&legacy);
    assert_eq!(served.ty, "Gauge32", "{served:?}");
    assert_eq!(indexes_served(&snmpd), [1].into());

    // Another server under another name: row 1 goes, and the log says
    // the legacy objects go with it until a restart.
    AgentConfig::new(&snmpd)
        .redis("b", &other.address(), "")
        .write(dir.path());
    let said = agent.reload("configuration reloaded");
    assert!(said.contains("\"port6379\" removed (index 1)"), "{said}");
    assert!(
        agent
            .log()
            .contains("the 17 legacy objects describe index 1 and answer noSuchInstance"),
        "{}",
        agent.log()
    );
    expect_up(&snmpd, 2, "b");
    assert!(snmpd.numeric().get_one(&legacy).is_no_such_instance());
}
