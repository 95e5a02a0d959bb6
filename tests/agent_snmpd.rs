//! End-to-end tests of the core: a real snmpd (master agent), a real
//! redis-server and the agent binary between them (`-r 1`), queried with
//! net-snmp's own tools, as a user would.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::time::{Duration, Instant};
use testkit::*;

/// redis-server, snmpd (unix AgentX) and the agent, registered. Bind as
/// `let (redis, snmpd, agent) = setup(..)`: locals drop in reverse order, so
/// the agent goes first.
fn setup(extra_agent_args: &[&str]) -> (Redis, Snmpd, Agent) {
    let redis = Redis::start();
    let snmpd = Snmpd::start();
    let agent = Agent::start(&snmpd, &redis, extra_agent_args);
    (redis, snmpd, agent)
}

/// `redisInstanceState.1` as a number (1 up, 2 down), if served.
fn instance_up(snmpd: &Snmpd) -> Option<u64> {
    let out = snmpd.numeric().get(&[&instance_oid(4, 1)]);
    out.vars()
        .first()
        .filter(|v| v.ty == "INTEGER")
        .and_then(Var::number)
}

/// Waits (5 s at most) until the agent serves data for a live Redis: the
/// instance is up and `redisConnectedClients.0` has a value.
fn wait_served(snmpd: &Snmpd) {
    let snmp = snmpd.numeric();
    let mut last = String::new();
    let ok = wait_until(Duration::from_secs(5), || {
        let out = snmp.get(&[&legacy_oid(1), &instance_oid(4, 1)]);
        last = out.to_string();
        let vars = out.vars();
        vars.len() == 2 && vars[0].ty == "Gauge32" && vars[1].value == "1"
    });
    assert!(ok, "the agent serves no live data after 5 s:\n{last}");
}

fn legacy_oids() -> Vec<String> {
    (1..=17).map(legacy_oid).collect()
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Checks a numeric walk of the enterprise arc: no error, strictly
/// increasing, the native baseline scalars present, and ending with the
/// native object after our subtree. Returns the variables.
fn check_walk_reaches_after(out: &SnmpOutput) -> Vec<Var> {
    assert!(out.success(), "{out}");
    assert!(out.stderr.is_empty(), "{out}");
    let vars = out.vars();
    for v in &vars {
        assert!(!v.is_exception(), "exception in walk: {v}\n{out}");
        // Untyped is only an empty string (`= ""`).
        assert!(
            !v.ty.is_empty() || v.value == "\"\"",
            "untyped value in walk: {v}\n{out}"
        );
    }
    for w in vars.windows(2) {
        assert_eq!(
            oid_cmp(&w[0].name, &w[1].name),
            std::cmp::Ordering::Less,
            "walk not increasing at {} → {}\n{out}",
            w[0].name,
            w[1].name
        );
    }
    for n in 1..=BASELINE_COUNT {
        let name = format!("{BASELINE_ROOT}.{n}.0");
        let v = vars
            .iter()
            .find(|v| v.name == name)
            .unwrap_or_else(|| panic!("walk lacks native {name}:\n{out}"));
        assert_eq!(v.u64(), u64::from(baseline_value(n)), "{v}");
    }
    let last = vars.last().expect("empty walk");
    assert_eq!(
        last.to_string(),
        format!("{AFTER_OID} = INTEGER: {AFTER_VALUE}"),
        "the walk did not continue to the native object after our subtree:\n{out}"
    );
    vars
}

#[test]
fn legacy_objects_have_their_names_and_types() {
    let (_redis, snmpd, _agent) = setup(&[]);
    wait_served(&snmpd);
    let oids = legacy_oids();

    let out = snmpd.client().get(&refs(&oids));
    assert!(out.success(), "{out}");
    assert!(out.stderr.is_empty(), "{out}");
    let vars = out.vars();
    assert_eq!(vars.len(), 17, "{out}");
    for ((n, name, ty, _), v) in LEGACY.iter().zip(&vars) {
        assert_eq!(
            v.name,
            format!("REDIS-SERVER-MIB::{name}.0"),
            "object {n}\n{out}"
        );
        assert_eq!(v.ty, *ty, "type of {name}\n{out}");
        assert!(v.number().is_some(), "{name} has no number: {v}");
    }

    // The names resolve to the legacy OIDs, too.
    let names: Vec<String> = LEGACY
        .iter()
        .map(|(_, name, _, _)| format!("REDIS-SERVER-MIB::{name}.0"))
        .collect();
    let out = snmpd.client().opt("-On").get(&refs(&names));
    assert!(out.success() && out.stderr.is_empty(), "{out}");
    let got: Vec<String> = out.vars().into_iter().map(|v| v.name).collect();
    assert_eq!(got, oids, "{out}");
}

#[test]
fn legacy_values_match_info() {
    let (redis, snmpd, _agent) = setup(&[]);
    wait_served(&snmpd);
    let snmp = snmpd.numeric();
    let t0 = redis.info_map();

    // A known state: two subscribed channels, one pattern, one blocked
    // client, 7 writes, 3 hits, 5 misses.
    let _subscriber = redis.spawn_cli(&["SUBSCRIBE", "news", "weather"]);
    let _psubscriber = redis.spawn_cli(&["PSUBSCRIBE", "log:*"]);
    let _blocked = redis.spawn_cli(&["BLPOP", "queue", "0"]);
    assert!(
        wait_until(Duration::from_secs(5), || {
            let i = redis.info_map();
            i.u64("pubsub_channels") == 2
                && i.u64("pubsub_patterns") == 1
                && i.u64("blocked_clients") == 1
        }),
        "background clients did not show up:\n{}",
        redis.info()
    );
    let base = redis.info_map();
    for i in 0..7 {
        assert_eq!(redis.cli(&["SET", &format!("key:{i}"), "value"]), "OK");
    }
    for i in 0..3 {
        assert_eq!(redis.cli(&["GET", &format!("key:{i}")]), "value");
    }
    for i in 0..5 {
        assert_eq!(redis.cli(&["GET", &format!("missing:{i}")]), "");
    }

    // (N, INFO field, the value the state implies)
    let exact: [(u32, &str, u64); 9] = [
        (2, "connected_slaves", 0),
        (
            4,
            "rdb_changes_since_last_save",
            base.u64("rdb_changes_since_last_save") + 7,
        ),
        (9, "blocked_clients", 1),
        (10, "evicted_keys", 0),
        (11, "expired_keys", 0),
        (12, "keyspace_hits", base.u64("keyspace_hits") + 3),
        (13, "keyspace_misses", base.u64("keyspace_misses") + 5),
        (14, "pubsub_channels", 2),
        (15, "pubsub_patterns", 1),
    ];
    let info = redis.info_map();
    for (_, field, want) in exact {
        assert_eq!(info.u64(field), want, "INFO {field} (the test's own setup)");
    }
    assert_eq!(base.u64("rdb_changes_since_last_save"), 0);

    // SNMP shows exactly what INFO says at the same moment, within 5 s.
    let oids: Vec<String> = exact.iter().map(|(n, _, _)| legacy_oid(*n)).collect();
    let mut mismatch = String::new();
    let ok = wait_until(Duration::from_secs(5), || {
        let info = redis.info_map();
        let out = snmp.get(&refs(&oids));
        let vars = out.vars();
        if vars.len() != exact.len() {
            mismatch = out.to_string();
            return false;
        }
        mismatch.clear();
        for ((n, field, _), v) in exact.iter().zip(&vars) {
            let want = info.u64(field);
            if v.number() != Some(want) {
                mismatch.push_str(&format!("object {n} ({field}): SNMP {v}, INFO {want}\n"));
            }
        }
        mismatch.is_empty()
    });
    assert!(ok, "SNMP never matched INFO:\n{mismatch}");

    // Moving values: one GET (one snapshot), bracketed by INFO before the
    // state above was made (t0) and right after (t1).
    let moving: Vec<String> = [1u32, 3, 5, 6, 7, 8, 16, 17]
        .iter()
        .map(|n| legacy_oid(*n))
        .collect();
    let out = snmp.get(&refs(&moving));
    let t1 = redis.info_map();
    let vars = out.vars();
    assert_eq!(vars.len(), moving.len(), "{out}");
    let val = |n: u32| -> u64 {
        let oid = legacy_oid(n);
        vars.iter().find(|v| v.name == oid).unwrap().u64()
    };
    let between = |n: u32, field: &str| {
        let (lo, hi, v) = (t0.u64(field), t1.u64(field), val(n));
        assert!(
            lo <= v && v <= hi,
            "object {n} ({field}) = {v}, INFO went {lo} → {hi}\n{out}"
        );
    };
    between(5, "total_connections_received");
    between(6, "total_commands_processed");
    between(16, "uptime_in_seconds");

    // Centiseconds of CPU: round(used_cpu_*·100).
    for (n, field) in [(7, "used_cpu_sys"), (8, "used_cpu_user")] {
        let lo = (t0.f64(field) * 100.0).round() as u64;
        let hi = (t1.f64(field) * 100.0).round() as u64;
        let v = val(n);
        assert!(
            lo <= v && v <= hi,
            "object {n} ({field}·100) = {v}, INFO went {lo} → {hi}\n{out}"
        );
    }

    // Memory moves both ways: within a quarter of what INFO showed.
    for (n, field) in [(3, "used_memory"), (17, "used_memory_rss")] {
        let (a, b) = (t0.u64(field), t1.u64(field));
        let lo = a.min(b) * 3 / 4;
        let hi = a.max(b) * 5 / 4;
        let v = val(n);
        assert!(
            lo <= v && v <= hi,
            "object {n} ({field}) = {v}, INFO showed {a} and {b}\n{out}"
        );
    }

    // Connected clients: the three background clients plus the agent's own
    // connection, at most what INFO counts (which includes ours).
    let clients = val(1);
    assert!(
        (4..=t1.u64("connected_clients")).contains(&clients),
        "redisConnectedClients = {clients}, INFO says {}\n{out}",
        t1.u64("connected_clients")
    );
}

#[test]
fn instance_status_row() {
    let (_redis, snmpd, _agent) = setup(&[]);
    wait_served(&snmpd);
    let out = snmpd.client().get(&[
        "REDIS-SERVER-MIB::redisInstanceState.1",
        "REDIS-SERVER-MIB::redisInstanceName.1",
        "REDIS-SERVER-MIB::redisInstanceLastError.1",
        "REDIS-SERVER-MIB::redisInstanceDataAge.1",
    ]);
    assert!(out.success() && out.stderr.is_empty(), "{out}");
    let vars = out.vars();
    assert_eq!(vars.len(), 4, "{out}");
    assert_eq!(
        vars[0].to_string(),
        "REDIS-SERVER-MIB::redisInstanceState.1 = INTEGER: up(1)"
    );
    assert_eq!(vars[1].ty, "STRING", "{out}");
    assert!(
        !vars[1].text().trim().is_empty(),
        "empty instance name\n{out}"
    );
    assert!(vars[2].ty == "STRING" || vars[2].ty.is_empty(), "{out}");
    assert_eq!(vars[2].text(), "", "LastError of a healthy instance\n{out}");
    assert_eq!(vars[3].ty, "Gauge32", "{out}");
    assert!(vars[3].u64() <= 3, "data age with -r 1\n{out}");
}

#[test]
fn walks_continue_past_our_subtree() {
    let (_redis, snmpd, _agent) = setup(&[]);
    wait_served(&snmpd);
    let snmp = snmpd.numeric();
    for out in [snmp.bulkwalk(ENTERPRISE), snmp.walk(ENTERPRISE)] {
        let vars = check_walk_reaches_after(&out);
        for n in 1..=17 {
            let oid = legacy_oid(n);
            assert!(
                vars.iter().any(|v| v.name == oid),
                "walk lacks {oid}:\n{out}"
            );
        }
        let up = instance_oid(4, 1);
        let v = vars
            .iter()
            .find(|v| v.name == up)
            .unwrap_or_else(|| panic!("walk lacks {up}:\n{out}"));
        assert_eq!(v.to_string(), format!("{up} = INTEGER: 1"));
        // Ours come before the native objects that follow them.
        let first_native = vars
            .iter()
            .position(|v| v.name.starts_with(&format!("{BASELINE_ROOT}.")))
            .unwrap();
        let last_ours = vars
            .iter()
            .rposition(|v| v.name.starts_with(&format!("{REDIS_ROOT}.")))
            .unwrap();
        assert!(last_ours < first_native);
    }
}

#[test]
fn redis_down_then_back() {
    let (mut redis, snmpd, _agent) = setup(&[]);
    wait_served(&snmpd);

    redis.stop();
    assert!(
        wait_until(Duration::from_secs(5), || instance_up(&snmpd) == Some(2)),
        "redisInstanceState.1 did not turn down(2) within 5 s"
    );

    let oids = legacy_oids();
    let out = snmpd.client().get(&refs(&oids));
    assert!(out.stderr.is_empty(), "{out}");
    let vars = out.vars();
    assert_eq!(vars.len(), 17, "{out}");
    for v in &vars {
        assert!(v.is_no_such_instance(), "{v}\n{out}");
    }

    let out = snmpd.client().get(&[
        "REDIS-SERVER-MIB::redisInstanceState.1",
        "REDIS-SERVER-MIB::redisInstanceLastError.1",
    ]);
    let vars = out.vars();
    assert_eq!(vars.len(), 2, "{out}");
    assert_eq!(
        vars[0].to_string(),
        "REDIS-SERVER-MIB::redisInstanceState.1 = INTEGER: down(2)"
    );
    assert!(!vars[1].text().trim().is_empty(), "no LastError\n{out}");

    for out in [
        snmpd.numeric().bulkwalk(ENTERPRISE),
        snmpd.numeric().walk(ENTERPRISE),
    ] {
        let vars = check_walk_reaches_after(&out);
        let legacy = format!("{LEGACY_ROOT}.");
        assert!(
            !vars.iter().any(|v| v.name.starts_with(&legacy)),
            "legacy objects walked while Redis is down:\n{out}"
        );
    }

    // Back on the same port: fresh values within a few seconds.
    let back = Instant::now();
    redis.start_again();
    assert!(
        wait_until(Duration::from_secs(5), || instance_up(&snmpd) == Some(1)),
        "redisInstanceState.1 did not come back up within 5 s of Redis"
    );
    println!("values back {:?} after Redis restarted", back.elapsed());
    let uptime = snmpd.numeric().get_one(&legacy_oid(16));
    assert_eq!(uptime.ty, "Gauge32", "{uptime}");
    assert!(
        uptime.u64() <= redis.info_map().u64("uptime_in_seconds"),
        "redisUptime {} is not the new server's",
        uptime
    );
    let clients = snmpd.numeric().get_one(&legacy_oid(1));
    assert!(clients.u64() >= 1, "{clients}");
}

#[test]
fn snmpd_restart_is_followed_within_a_second() {
    let (_redis, mut snmpd, mut agent) = setup(&[]);
    wait_served(&snmpd);
    let socket = snmpd.agentx_socket().unwrap();

    snmpd.stop();
    std::thread::sleep(Duration::from_secs(2));
    assert!(agent.is_running(), "the agent exited with snmpd gone");

    snmpd.start_again();
    let back = snmpd.ready_at();
    assert_eq!(snmpd.agentx_socket().unwrap(), socket);
    let snmp = snmpd.numeric();
    let deadline = back + Duration::from_secs(10);
    let served_at = loop {
        let v = snmp.get(&[&legacy_oid(1)]);
        if v.vars().first().is_some_and(|v| v.ty == "Gauge32") {
            break Instant::now();
        }
        assert!(
            Instant::now() < deadline,
            "subtree not served 10 s after snmpd restarted:\n{v}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = served_at.saturating_duration_since(back);
    println!("subtree served again {took:?} after snmpd answered");
    assert!(
        took < Duration::from_millis(1500),
        "re-registration took {took:?}"
    );
    assert_eq!(instance_up(&snmpd), Some(1));
}

#[test]
fn set_is_refused_with_not_writable() {
    let (_redis, snmpd, _agent) = setup(&[]);
    wait_served(&snmpd);
    let private = snmpd.client().community("private");
    let before = snmpd.numeric().get_one(&legacy_oid(1));

    let out = private.set("REDIS-SERVER-MIB::redisConnectedClients.0", "u", "5");
    assert!(!out.success(), "{out}");
    assert!(out.combined().contains("notWritable"), "{out}");

    let out = private.set("REDIS-SERVER-MIB::redisInstanceState.1", "i", "2");
    assert!(!out.success(), "{out}");
    assert!(out.combined().contains("notWritable"), "{out}");

    // Still served, still read-only data.
    let after = snmpd.numeric().get_one(&legacy_oid(1));
    assert_eq!(after.ty, before.ty);
    assert_eq!(instance_up(&snmpd), Some(1));
}

#[test]
fn tcp_agentx_works_too() {
    let redis = Redis::start();
    let snmpd = Snmpd::start_tcp();
    assert!(snmpd.agentx_address().starts_with("tcp:127.0.0.1:"));
    let _agent = Agent::start(&snmpd, &redis, &[]);
    wait_served(&snmpd);
    let out = snmpd.numeric().bulkwalk(ENTERPRISE);
    let vars = check_walk_reaches_after(&out);
    assert!(vars.iter().any(|v| v.name == legacy_oid(17)), "{out}");
}

#[test]
fn sigterm_exits_cleanly_and_closes_the_session() {
    let redis = Redis::start();
    let snmpd = Snmpd::start_with(SnmpdOptions::default().debug("agentx/master"));
    let mut agent = Agent::start(&snmpd, &redis, &[]);
    wait_served(&snmpd);

    let t = Instant::now();
    agent.signal(libc::SIGTERM);
    let status = agent.wait_exit(Duration::from_secs(2));
    let took = t.elapsed();
    let status = status.unwrap_or_else(|| {
        panic!(
            "the agent did not exit within 2 s of SIGTERM; log:\n{}",
            agent.log()
        )
    });
    println!("exited {took:?} after SIGTERM: {status}");
    assert_eq!(status.code(), Some(0), "log:\n{}", agent.log());

    // The registration is gone at once, and the master's socket is not ours
    // to remove.
    let snmp = snmpd.numeric();
    assert!(
        wait_until(Duration::from_secs(1), || snmp
            .get_one(&legacy_oid(1))
            .is_no_such_object()),
        "still registered after the agent exited"
    );
    assert!(snmpd.agentx_socket().unwrap().exists());

    // With -Dagentx/master, snmpd logs "agentx/master: closed <session>,
    // <id> okay" only for a Close PDU it accepted; a connection that merely
    // drops shows as "close <session>, -1".
    let snmpd_log = snmpd.log();
    let closed_by_pdu = snmpd_log
        .lines()
        .any(|l| l.contains("agentx/master: closed ") && l.contains(" okay"));
    let agent_says_close = agent.log().to_lowercase().contains("close");
    assert!(
        closed_by_pdu || agent_says_close,
        "neither snmpd nor the agent shows the session closed\n--- snmpd ---\n{}\n--- agent ---\n{}",
        tail(&snmpd_log, 20),
        agent.log()
    );
    println!(
        "Close PDU seen by snmpd: {closed_by_pdu}; agent log mentions close: {agent_says_close}"
    );
}

const CMDLINE_PW: &str = "cmdline-S3cret-9f2c";
const FILE_PW: &str = "file-S3cret-71ab";
const ENV_PW: &str = "env-S3cret-5d0e";

#[test]
fn password_on_the_command_line_is_wiped_and_warned_about() {
    let redis = Redis::start_with(&[&format!("requirepass {CMDLINE_PW}")]);
    let snmpd = Snmpd::start();
    let agent = Agent::start(&snmpd, &redis, &["-p", CMDLINE_PW]);
    // The password works…
    wait_served(&snmpd);
    // …and is gone from the process's command line.
    let cmdline = agent.cmdline();
    assert!(!cmdline.is_empty());
    assert!(
        !cmdline.contains(CMDLINE_PW),
        "/proc/{}/cmdline still shows the password: {cmdline}",
        agent.pid()
    );
    let log = agent.log();
    assert!(
        log.lines().any(|l| {
            let l = l.to_lowercase();
            l.contains("warn") && (l.contains("-p") || l.contains("password"))
        }),
        "no warning about -p in the log:\n{log}"
    );
    assert!(!log.contains(CMDLINE_PW), "password in the log:\n{log}");
}

#[test]
fn password_file_works_and_stays_out_of_the_log() {
    let redis = Redis::start_with(&[&format!("requirepass {FILE_PW}")]);
    let snmpd = Snmpd::start();
    let secrets = tempfile::tempdir().unwrap();
    let file = secrets.path().join("redis.pw");
    write_file_mode(&file, &format!("{FILE_PW}\n"), 0o600);
    let file = file.to_str().unwrap();
    let agent = Agent::start(&snmpd, &redis, &["-v", "--password-file", file]);
    wait_served(&snmpd);
    let v = snmpd.numeric().get_one(&legacy_oid(4));
    assert_eq!(v.ty, "Gauge32", "{v}");
    let log = agent.log();
    assert!(!log.contains(FILE_PW), "password in the log:\n{log}");
    assert!(!agent.cmdline().contains(FILE_PW));
}

#[test]
fn password_from_the_environment_works() {
    let redis = Redis::start_with(&[&format!("requirepass {ENV_PW}")]);
    let snmpd = Snmpd::start();
    let shared = agent_args(&snmpd, &redis, 1);
    let mut args = vec!["-n", "-v", "-v"];
    args.extend(shared.iter().map(String::as_str));
    let mut agent = Agent::start_raw(&args, &[("REDIS_SNMP_PASSWORD", ENV_PW)]);
    agent.expect_registered(Duration::from_secs(10));
    wait_served(&snmpd);
    let log = agent.log();
    assert!(!log.contains(ENV_PW), "password in the log:\n{log}");
}

#[test]
fn wrong_password_shows_the_instance_down_without_leaking_it() {
    let redis = Redis::start_with(&[&format!("requirepass {FILE_PW}")]);
    let snmpd = Snmpd::start();
    let secrets = tempfile::tempdir().unwrap();
    let file = secrets.path().join("wrong.pw");
    let wrong = "wrong-S3cret-e4a1";
    write_file_mode(&file, &format!("{wrong}\n"), 0o600);
    let agent = Agent::start(
        &snmpd,
        &redis,
        &["-v", "--password-file", file.to_str().unwrap()],
    );
    assert!(
        wait_until(Duration::from_secs(5), || instance_up(&snmpd) == Some(2)),
        "redisInstanceState.1 is not down(2) with a wrong password"
    );
    let err = snmpd.numeric().get_one(&instance_oid(7, 1));
    assert!(!err.text().trim().is_empty(), "no LastError: {err}");
    assert!(
        !err.text().contains(wrong),
        "LastError shows the password: {err}"
    );
    assert!(snmpd
        .numeric()
        .get_one(&legacy_oid(1))
        .is_no_such_instance());
    let log = agent.log();
    assert!(!log.contains(wrong), "password in the log:\n{log}");
}
