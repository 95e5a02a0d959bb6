//! Issue 3 end to end: many instances, every way to connect, and the tables,
//! against real redis-server processes, through a real snmpd, with values
//! asserted against what the servers say at the same moment.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::time::Duration;
use testkit::{pki, wait_until, Agent, AgentConfig, Redis, Snmpd, REDIS_ROOT};

/// One `[[redis]]` entry of the agent's configuration file.
struct Instance<'a> {
    name: &'a str,
    address: String,
    extra: &'a str,
}

/// Start the agent with a configuration file naming these instances.
fn start_agent(snmpd: &Snmpd, instances: &[Instance<'_>], dir: &std::path::Path) -> Agent {
    instances
        .iter()
        .fold(AgentConfig::new(snmpd), |config, i| {
            config.redis(i.name, &i.address, i.extra)
        })
        .start(dir)
}

fn oid(suffix: &str) -> String {
    format!("{REDIS_ROOT}.{suffix}")
}

/// The value text of one numeric GET ("" when absent).
fn get(snmpd: &Snmpd, suffix: &str) -> String {
    let var = snmpd.numeric().get_one(&oid(suffix));
    var.value
}

/// Wait until GET of `suffix` shows `expected`; panics with the last value.
fn expect_value(snmpd: &Snmpd, suffix: &str, expected: &str) {
    let mut last = String::new();
    let ok = wait_until(Duration::from_secs(6), || {
        last = get(snmpd, suffix);
        last == expected
    });
    assert!(ok, "{} = {last:?}, expected {expected:?}", oid(suffix));
}

fn info_field(redis: &Redis, field: &str) -> String {
    redis.info_map().get(field).unwrap_or("").to_string()
}

#[test]
fn two_instances_one_stopped_does_not_hide_the_other() {
    let snmpd = Snmpd::start();
    let first = Redis::start();
    let mut second = Redis::start();
    let dir = tempfile::tempdir().unwrap();
    let _agent = start_agent(
        &snmpd,
        &[
            Instance {
                name: "cache",
                address: first.address(),
                extra: "",
            },
            Instance {
                name: "queue",
                address: second.address(),
                extra: "",
            },
        ],
        dir.path(),
    );
    expect_value(&snmpd, "3.1.1.4.2", "1");
    assert_eq!(get(&snmpd, "3.1.1.2.1"), "\"cache\"");
    assert_eq!(get(&snmpd, "3.1.1.2.2"), "\"queue\"");
    // Each row carries its own server's identity.
    assert_eq!(get(&snmpd, "3.2.1.5.1"), first.port().to_string());
    assert_eq!(get(&snmpd, "3.2.1.5.2"), second.port().to_string());

    second.stop();
    expect_value(&snmpd, "3.1.1.4.2", "2");
    // The first instance keeps being served, legacy scalars included.
    assert_eq!(get(&snmpd, "3.1.1.4.1"), "1");
    assert_eq!(get(&snmpd, "3.2.1.5.1"), first.port().to_string());
    assert!(get(&snmpd, "1.16.0").parse::<u64>().is_ok());
    assert!(get(&snmpd, "3.2.1.5.2").contains("No Such Instance"));
    // The reason is data too: first the lost connection, then the refusal.
    let mut reason = String::new();
    assert!(
        wait_until(Duration::from_secs(5), || {
            reason = get(&snmpd, "3.1.1.7.2");
            reason.contains("refused")
        }),
        "{reason}"
    );

    second.start_again();
    expect_value(&snmpd, "3.1.1.4.2", "1");
}

#[test]
fn master_and_replica_show_replication_and_the_link_going_down() {
    let snmpd = Snmpd::start();
    let mut master = Redis::start();
    let replica = Redis::start_with(&[&format!("replicaof 127.0.0.1 {}", master.port())]);
    assert!(wait_until(Duration::from_secs(10), || info_field(
        &replica,
        "master_link_status"
    ) == "up"));
    master.cli(&["SET", "k", "v"]);
    let dir = tempfile::tempdir().unwrap();
    let _agent = start_agent(
        &snmpd,
        &[
            Instance {
                name: "master",
                address: master.address(),
                extra: "",
            },
            Instance {
                name: "replica",
                address: replica.address(),
                extra: "",
            },
        ],
        dir.path(),
    );
    // Roles: master(1), replica(2); the replica's link is up(1).
    expect_value(&snmpd, "3.7.1.1.1", "1");
    expect_value(&snmpd, "3.7.1.1.2", "2");
    expect_value(&snmpd, "3.7.1.5.2", "1");
    assert_eq!(get(&snmpd, "3.7.1.4.2"), master.port().to_string());
    // The master's replica table: slot 1 is the replica, online, caught up.
    expect_value(&snmpd, "3.11.1.3.1.1", &replica.port().to_string());
    assert_eq!(get(&snmpd, "3.11.1.2.1.1"), "\"127.0.0.1\"");
    // `wait_bgsave` until the initial sync is done.
    expect_value(&snmpd, "3.11.1.4.1.1", "\"online\"");
    let offset = info_field(&master, "master_repl_offset");
    let snmp_offset = get(&snmpd, "3.7.1.9.1");
    assert!(
        snmp_offset.parse::<u64>().unwrap() <= offset.parse::<u64>().unwrap(),
        "{snmp_offset} vs {offset}"
    );
    assert!(get(&snmpd, "3.11.1.7.1.1").parse::<u64>().is_ok());

    master.stop();
    // The replica notices: link down(2), and how long it has been down.
    expect_value(&snmpd, "3.7.1.5.2", "2");
    expect_value(&snmpd, "3.1.1.4.1", "2");
    assert!(get(&snmpd, "3.7.1.8.2").parse::<i64>().unwrap() >= 0);
}

#[test]
fn keyspace_rows_cover_every_database_and_match_the_server() {
    let snmpd = Snmpd::start();
    let redis = Redis::start_with(&["databases 4"]);
    redis.cli(&["SET", "a", "1"]);
    redis.cli(&["SET", "b", "2", "EX", "1000"]);
    redis.cli(&["-n", "2", "SET", "c", "3"]);
    let dir = tempfile::tempdir().unwrap();
    let _agent = start_agent(
        &snmpd,
        &[Instance {
            name: "r",
            address: redis.address(),
            extra: "",
        }],
        dir.path(),
    );
    expect_value(&snmpd, "3.10.1.2.1.0", "2");
    assert_eq!(get(&snmpd, "3.10.1.3.1.0"), "1");
    assert_eq!(get(&snmpd, "3.10.1.2.1.2"), "1");
    // Empty databases 1 and 3 are zero-filled; there is no database 4.
    assert_eq!(get(&snmpd, "3.10.1.2.1.1"), "0");
    assert_eq!(get(&snmpd, "3.10.1.2.1.3"), "0");
    assert!(get(&snmpd, "3.10.1.2.1.4").contains("No Such Instance"));
    // Emptying a database keeps its row, at zero.
    redis.cli(&["-n", "2", "FLUSHDB"]);
    expect_value(&snmpd, "3.10.1.2.1.2", "0");
}

#[test]
fn command_and_error_tables_match_commandstats() {
    let snmpd = Snmpd::start();
    let redis = Redis::start();
    for _ in 0..3 {
        redis.cli(&["CONFIG", "GET", "maxmemory"]);
    }
    redis.cli(&["SET", "s", "x"]);
    redis.cli(&["LPUSH", "s", "y"]); // WRONGTYPE
    let dir = tempfile::tempdir().unwrap();
    // The command table read at every poll (slow_refresh = refresh): the
    // agent's own CONFIG GET, sent after its first read, shows at the next.
    let _agent = start_agent(
        &snmpd,
        &[Instance {
            name: "r",
            address: redis.address(),
            extra: "slow_refresh = 1",
        }],
        dir.path(),
    );
    // config|get: the agent's own CONFIG GET databases counts too, once per
    // connection; compare with commandstats read at the same moment.
    let index = |name: &str| {
        let mut s = format!("1.{}", name.len());
        for b in name.bytes() {
            s.push_str(&format!(".{b}"));
        }
        s
    };
    let config_get = index("config|get");
    assert!(wait_until(Duration::from_secs(6), || {
        let stats = redis.info_section("commandstats");
        let line = stats
            .lines()
            .find(|l| l.starts_with("cmdstat_config|get:"))
            .unwrap_or("")
            .to_string();
        let calls = line
            .split("calls=")
            .nth(1)
            .and_then(|s| s.split(',').next())
            .unwrap_or("");
        !calls.is_empty() && get(&snmpd, &format!("3.12.1.2.{config_get}")) == calls
    }));
    // LPUSH on a string: one call, and it failed (Redis 7 counts both).
    let lpush = redis.info_section("commandstats");
    let lpush = lpush
        .lines()
        .find(|l| l.starts_with("cmdstat_lpush:"))
        .unwrap()
        .to_string();
    assert!(
        lpush.contains("calls=1,") && lpush.contains("failed_calls=1"),
        "{lpush}"
    );
    assert_eq!(get(&snmpd, &format!("3.12.1.2.{}", index("lpush"))), "1");
    assert_eq!(get(&snmpd, &format!("3.12.1.6.{}", index("lpush"))), "1"); // failed_calls
    expect_value(&snmpd, &format!("3.13.1.2.{}", index("WRONGTYPE")), "1");
}

#[test]
fn unix_socket_and_acl_user_with_least_privilege() {
    let snmpd = Snmpd::start();
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("redis.sock");
    let redis = Redis::start_with(&[
        &format!("unixsocket {}", socket.display()),
        "unixsocketperm 700",
        // The documented least-privilege user of the agent (docs/configuration.md).
        "user snmp on >snmp-pw -@all +info +ping +config|get +cluster|info +slowlog|len +slowlog|get +latency|latest",
        "user noconfig on >nc-pw -@all +info +ping",
    ]);
    std::fs::write(dir.path().join("snmp.pw"), "snmp-pw\n").unwrap();
    std::fs::write(dir.path().join("nc.pw"), "nc-pw\n").unwrap();
    let agent = start_agent(
        &snmpd,
        &[
            Instance {
                name: "unix",
                address: format!("unix://{}", socket.display()),
                extra: &format!(
                    "username = \"snmp\"\npassword_file = \"{}\"",
                    dir.path().join("snmp.pw").display()
                ),
            },
            Instance {
                name: "noconfig",
                address: redis.address(),
                extra: &format!(
                    "username = \"noconfig\"\npassword_file = \"{}\"",
                    dir.path().join("nc.pw").display()
                ),
            },
        ],
        dir.path(),
    );
    expect_value(&snmpd, "3.1.1.4.1", "1");
    expect_value(&snmpd, "3.1.1.4.2", "1");
    assert_eq!(
        get(&snmpd, "3.1.1.3.1"),
        format!("\"unix:{}\"", socket.display())
    );
    // With CONFIG GET, all 16 databases; without, only the ones INFO lists.
    expect_value(&snmpd, "3.10.1.2.1.15", "0");
    assert!(get(&snmpd, "3.10.1.2.2.15").contains("No Such Instance"));
    // The refusal is logged once, not on every poll.
    std::thread::sleep(Duration::from_millis(2500));
    let log = agent.log();
    let refusals = log.lines().filter(|l| l.contains("refuses CONFIG")).count();
    assert_eq!(refusals, 1, "{log}");
    assert!(!log.contains("snmp-pw") && !log.contains("nc-pw"));
}

#[test]
fn single_node_cluster_reports_cluster_info() {
    let snmpd = Snmpd::start();
    let dir = tempfile::tempdir().unwrap();
    let redis = Redis::start_with(&[
        "cluster-enabled yes",
        &format!(
            "cluster-config-file {}",
            dir.path().join("nodes.conf").display()
        ),
        // The cluster bus is port + 10000 unless told: a port no lock holds.
        &format!("cluster-port {}", testkit::free_port()),
    ]);
    let _agent = start_agent(
        &snmpd,
        &[Instance {
            name: "c",
            address: redis.address(),
            extra: "",
        }],
        dir.path(),
    );
    expect_value(&snmpd, "3.9.1.1.1", "1"); // cluster_enabled: true(1)
                                            // No slots assigned yet: state fail(2), one known node.
    expect_value(&snmpd, "3.9.1.2.1", "2");
    assert_eq!(get(&snmpd, "3.9.1.7.1"), "1");
    assert_eq!(get(&snmpd, "3.9.1.3.1"), "0");
    redis.cli(&["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]);
    expect_value(&snmpd, "3.9.1.3.1", "16384");
    expect_value(&snmpd, "3.9.1.2.1", "1");
    assert_eq!(get(&snmpd, "3.2.1.2.1"), "3"); // redis_mode: cluster(3)
}

#[test]
fn sentinel_lists_the_masters_it_watches() {
    let snmpd = Snmpd::start();
    let master = Redis::start();
    let dir = tempfile::tempdir().unwrap();
    let port = testkit::free_port();
    let conf = dir.path().join("sentinel.conf");
    std::fs::write(
        &conf,
        format!(
            "port {port}\nbind 127.0.0.1\ndaemonize no\ndir {}\nlogfile {}\nsentinel monitor mymaster 127.0.0.1 {} 1\n",
            dir.path().display(),
            dir.path().join("sentinel.log").display(),
            master.port()
        ),
    )
    .unwrap();
    let mut cmd = std::process::Command::new("redis-server");
    cmd.arg(&conf)
        .arg("--sentinel")
        .stdout(std::process::Stdio::null());
    let _sentinel = testkit::Proc::spawn(&mut cmd, "redis-sentinel");
    assert!(wait_until(Duration::from_secs(5), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    }));
    let _agent = start_agent(
        &snmpd,
        &[Instance {
            name: "sentinel",
            address: format!("127.0.0.1:{port}"),
            extra: "",
        }],
        dir.path(),
    );
    let name = "1.8.109.121.109.97.115.116.101.114"; // instance 1, "mymaster"
    expect_value(
        &snmpd,
        &format!("3.14.1.5.{name}"),
        &master.port().to_string(),
    );
    assert_eq!(get(&snmpd, &format!("3.14.1.2.{name}")), "1"); // ok(1)
    assert_eq!(get(&snmpd, &format!("3.14.1.4.{name}")), "\"127.0.0.1\"");
    assert_eq!(get(&snmpd, &format!("3.14.1.8.{name}")), "1"); // quorum
    assert_eq!(get(&snmpd, "3.2.1.2.1"), "2"); // redis_mode: sentinel(2)
    assert_eq!(get(&snmpd, "3.15.1.1.1"), "1"); // sentinel_masters
}

#[test]
fn slowlog_and_latency_where_allowed() {
    let snmpd = Snmpd::start();
    let redis = Redis::start_with(&[
        "slowlog-log-slower-than 0",
        "latency-monitor-threshold 1",
        "enable-debug-command local",
    ]);
    redis.cli(&["DEBUG", "SLEEP", "0.02"]);
    assert!(
        redis.cli(&["LATENCY", "LATEST"]).contains("command"),
        "DEBUG SLEEP left no latency event"
    );
    let dir = tempfile::tempdir().unwrap();
    let _agent = start_agent(
        &snmpd,
        &[Instance {
            name: "r",
            address: redis.address(),
            extra: "",
        }],
        dir.path(),
    );
    // Every command is slow at threshold 0, the agent's own polls included:
    // compare with SLOWLOG LEN at the same moment (max length 128).
    assert!(wait_until(Duration::from_secs(6), || {
        let len = redis.cli(&["SLOWLOG", "LEN"]);
        let snmp = get(&snmpd, "3.16.1.1.1");
        snmp.parse::<u64>().is_ok()
            && snmp.parse::<u64>().unwrap() + 10 >= len.trim().parse::<u64>().unwrap_or(0)
    }));
    assert!(get(&snmpd, "3.16.1.4.1").parse::<u64>().is_ok());
    // DEBUG SLEEP 0.02 is a 20 ms "command" latency event.
    let command = "1.7.99.111.109.109.97.110.100";
    let mut max_ms = String::new();
    assert!(
        wait_until(Duration::from_secs(5), || {
            max_ms = get(&snmpd, &format!("3.17.1.4.{command}"));
            max_ms.parse::<u64>().map(|ms| ms >= 20).unwrap_or(false)
        }),
        "{max_ms}"
    );
}

/// A CA, a server certificate for `redis.test` only (so connecting to
/// 127.0.0.1 needs `tls_server_name`), and a client certificate, by openssl.
fn make_certificates(dir: &std::path::Path) {
    pki::make_ca(dir, "ca", "test CA", 2);
    pki::make_ca(dir, "other-ca", "other CA", 2);
    pki::make_request(dir, "server", "/CN=redis.test");
    pki::sign(
        dir,
        "server.csr",
        "ca",
        "server.pem",
        2,
        "subjectAltName=DNS:redis.test",
    );
    pki::make_request(dir, "client", "/CN=redis-snmp");
    pki::sign(
        dir,
        "client.csr",
        "ca",
        "client.pem",
        2,
        "extendedKeyUsage=clientAuth",
    );
    let key = dir.join("client.key");
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
}

#[test]
fn tls_with_client_certificate_and_server_name() {
    let snmpd = Snmpd::start();
    let dir = tempfile::tempdir().unwrap();
    make_certificates(dir.path());
    let tls_port = testkit::free_port();
    let d = dir.path().display();
    let redis = Redis::start_with(&[
        &format!("tls-port {tls_port}"),
        &format!("tls-cert-file {d}/server.pem"),
        &format!("tls-key-file {d}/server.key"),
        &format!("tls-ca-cert-file {d}/ca.pem"),
        "tls-auth-clients yes",
    ]);
    let good = format!(
        "tls_ca_file = \"{d}/ca.pem\"\ntls_cert_file = \"{d}/client.pem\"\ntls_key_file = \"{d}/client.key\"\ntls_server_name = \"redis.test\""
    );
    let wrong_ca = format!(
        "tls_ca_file = \"{d}/other-ca.pem\"\ntls_cert_file = \"{d}/client.pem\"\ntls_key_file = \"{d}/client.key\"\ntls_server_name = \"redis.test\""
    );
    let wrong_name = format!(
        "tls_ca_file = \"{d}/ca.pem\"\ntls_cert_file = \"{d}/client.pem\"\ntls_key_file = \"{d}/client.key\""
    );
    let address = format!("rediss://127.0.0.1:{tls_port}");
    let _agent = start_agent(
        &snmpd,
        &[
            Instance {
                name: "tls",
                address: address.clone(),
                extra: &good,
            },
            Instance {
                name: "wrongca",
                address: address.clone(),
                extra: &wrong_ca,
            },
            Instance {
                name: "wrongname",
                address,
                extra: &wrong_name,
            },
        ],
        dir.path(),
    );
    expect_value(&snmpd, "3.1.1.4.1", "1");
    assert_eq!(
        get(&snmpd, "3.2.1.1.1"),
        format!("\"{}\"", info_field(&redis, "redis_version"))
    );
    // A certificate from another CA, or a name the certificate does not
    // carry: down, and the reason says so.
    expect_value(&snmpd, "3.1.1.4.2", "2");
    expect_value(&snmpd, "3.1.1.4.3", "2");
    let reason = get(&snmpd, "3.1.1.7.2").to_lowercase();
    assert!(
        reason.contains("certificate") || reason.contains("issuer"),
        "{reason}"
    );
    let reason = get(&snmpd, "3.1.1.7.3").to_lowercase();
    assert!(
        reason.contains("certificate") || reason.contains("name"),
        "{reason}"
    );
}

/// Issue 17: the costly parts of a poll (INFO's commandstats, SLOWLOG,
/// LATENCY) are read every `slow_refresh`, the rest every `refresh`; in
/// between, the agent keeps serving the costly parts as last read.
#[test]
fn costly_sections_are_served_between_reads_and_refreshed_on_their_cadence() {
    let snmpd = Snmpd::start();
    let redis = Redis::start();
    redis.cli(&["SET", "k", "0"]);
    let dir = tempfile::tempdir().unwrap();
    let _agent = start_agent(
        &snmpd,
        &[Instance {
            name: "r",
            address: redis.address(),
            extra: "slow_refresh = 5",
        }],
        dir.path(),
    );
    // redisCmdCalls of "set" (3 letters), redisSlowlogLen, redisCommandsProcessed.
    let set_calls = "3.12.1.2.1.3.115.101.116";
    let (slowlog_len, processed) = ("3.16.1.1.1", "1.6.0");
    expect_value(&snmpd, set_calls, "1");
    // A SET every 250 ms for 12 s: the agent's own INFO moves the processed
    // count at every poll (1 s), the command table only at every slow read.
    let (mut set_changes, mut processed_changes) = (0, 0);
    let (mut last_set, mut last_processed) = (get(&snmpd, set_calls), get(&snmpd, processed));
    let started = std::time::Instant::now();
    while started.elapsed() < Duration::from_secs(12) {
        redis.cli(&["SET", "k", "1"]);
        let (set, done) = (get(&snmpd, set_calls), get(&snmpd, processed));
        assert!(set.parse::<u64>().is_ok(), "the set row vanished: {set:?}");
        assert!(
            get(&snmpd, slowlog_len).parse::<u64>().is_ok(),
            "redisSlowlogLen vanished between two slow reads"
        );
        set_changes += usize::from(set != last_set);
        processed_changes += usize::from(done != last_processed);
        (last_set, last_processed) = (set, done);
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(
        (1..=3).contains(&set_changes),
        "the command table changed {set_changes} times in 12 s with slow_refresh = 5"
    );
    assert!(
        processed_changes >= 6,
        "redisCommandsProcessed changed only {processed_changes} times in 12 s with refresh = 1"
    );
    // And what it shows is what Redis counted at the last slow read.
    let calls: u64 = last_set.parse().unwrap();
    let now: u64 = redis
        .info_section("commandstats")
        .lines()
        .find_map(|l| l.strip_prefix("cmdstat_set:calls="))
        .and_then(|rest| rest.split(',').next()?.parse().ok())
        .unwrap();
    assert!(calls > 1 && calls <= now, "{calls} of {now}");
}
