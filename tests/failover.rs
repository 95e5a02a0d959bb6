//! Failover and cluster events end to end (issue 25, item 3): real
//! sentinels watching a real master and replica lose their quorum and get
//! it back, then fail the master over when it is stopped; a real
//! three-master cluster loses a master and gets it back. The agent sends
//! what it sees through a real snmpd to a real snmptrapd, decoded with our
//! MIB: what an operator's manager receives.

// Starts real servers and tools: built only with the `system-tests`
// feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use testkit::servers::ServerKind;
use testkit::{free_port, wait_until, AgentConfig, Proc, Redis, Reply, RespConn, Snmpd, Snmptrapd};

/// A sentinel of `kind` watching `mymaster` with quorum 3 (every sentinel
/// must agree: losing one loses the quorum), down after 1 s. Its
/// configuration file stays across restarts, which it rewrites with what
/// it learned (its id, the other sentinels), as a sentinel does.
struct Sentinel {
    binary: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
    proc: Option<Proc>,
}

impl Sentinel {
    /// `acl`: a `user` line of the sentinel's own (Redis 6.2+ sentinels
    /// have ACL users).
    fn start(kind: ServerKind, master: &Redis, acl: &str) -> Sentinel {
        let dir = tempfile::Builder::new()
            .prefix("redis-snmp-sentinel.")
            .tempdir()
            .unwrap();
        let port = free_port();
        std::fs::write(
            dir.path().join("sentinel.conf"),
            format!(
                "port {port}\nbind 127.0.0.1\ndaemonize no\ndir {d}\nlogfile {d}/sentinel.log\n\
                 sentinel monitor mymaster 127.0.0.1 {m} 3\n\
                 sentinel down-after-milliseconds mymaster 1000\n\
                 sentinel failover-timeout mymaster 2000\n{acl}\n",
                d = dir.path().display(),
                m = master.port(),
            ),
        )
        .unwrap();
        let mut sentinel = Sentinel {
            binary: kind.binary().unwrap(),
            dir,
            port,
            proc: None,
        };
        sentinel.start_again();
        sentinel
    }

    fn start_again(&mut self) {
        let mut cmd = Command::new(&self.binary);
        cmd.arg(self.dir.path().join("sentinel.conf"))
            .arg("--sentinel")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        self.proc = Some(Proc::spawn(&mut cmd, "sentinel"));
        let port = self.port;
        assert!(
            wait_until(Duration::from_secs(5), || RespConn::connect(port).is_ok()),
            "the sentinel on port {port} did not listen:\n{}",
            self.log()
        );
    }

    fn stop(&mut self) {
        if let Some(mut proc) = self.proc.take() {
            proc.terminate(Duration::from_secs(5));
        }
    }

    fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sentinel.log")).unwrap_or_default()
    }

    /// A field of `SENTINEL MASTER mymaster`, as the default user.
    fn master_field(&self, field: &str) -> Option<String> {
        let reply = RespConn::connect(self.port)
            .ok()?
            .call(&["SENTINEL", "MASTER", "mymaster"])
            .ok()?;
        field_of(&reply, field)
    }

    /// A field of the first replica `SENTINEL REPLICAS mymaster` lists.
    fn replica_field(&self, field: &str) -> Option<String> {
        let reply = RespConn::connect(self.port)
            .ok()?
            .call(&["SENTINEL", "REPLICAS", "mymaster"])
            .ok()?;
        match reply {
            Reply::Array(Some(replicas)) => field_of(replicas.first()?, field),
            _ => None,
        }
    }
}

impl Drop for Sentinel {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "--- sentinel :{} log (tail) ---\n{}",
                self.port,
                testkit::tail(&self.log(), 15)
            );
        }
    }
}

/// A field of a flat name/value array reply.
fn field_of(reply: &Reply, field: &str) -> Option<String> {
    let Reply::Array(Some(items)) = reply else {
        return None;
    };
    items.chunks(2).find_map(|pair| match pair {
        [Reply::Bulk(Some(k)), Reply::Bulk(Some(v))] if k == field => Some(v.clone()),
        _ => None,
    })
}

/// The notification lines named `name` about instance `n` (its objects'
/// instances start `.n.`, or are `.n`).
fn received_about(trapd: &Snmptrapd, name: &str, n: u32) -> Vec<String> {
    trapd
        .received(&format!("::{name}"))
        .into_iter()
        .filter(|l| l.contains(&format!("redisInstanceName.{n} =")))
        .collect()
}

/// Waits up to `limit` for a notification `name` about instance `n`.
fn expect(trapd: &Snmptrapd, name: &str, n: u32, limit: Duration) -> String {
    let mut line = None;
    wait_until(limit, || {
        line = received_about(trapd, name, n).into_iter().next();
        line.is_some()
    });
    line.unwrap_or_else(|| {
        panic!(
            "no {name} about instance {n}; snmptrapd log:\n{}",
            trapd.log()
        )
    })
}

fn sentinel_failover(kind: ServerKind) {
    let Some(binary) = kind.binary_or_skip("sentinel_failover") else {
        return;
    };
    let trapd = Snmptrapd::start();
    let snmpd = Snmpd::sending_to(&trapd);
    // The master alone at first: down, it stays objectively down (no
    // replica to promote) until it comes back.
    let mut master = Redis::start_binary(&binary, &[]);
    // s2 has a user that may not ask CKQUORUM: the agent says so once,
    // and the other events still come from it.
    let restricted = "user snmp on >s3cret ~* &* +@all -sentinel|ckquorum";
    let s1 = Sentinel::start(kind, &master, "");
    let s2 = Sentinel::start(kind, &master, restricted);
    let mut s3 = Sentinel::start(kind, &master, "");
    // Each must know the other two (hello messages through the master,
    // every 2 s) before the baseline.
    for s in [&s1, &s2, &s3] {
        assert!(
            wait_until(Duration::from_secs(20), || {
                s.master_field("num-other-sentinels").as_deref() == Some("2")
            }),
            "sentinel {} does not see the others: {:?}",
            s.port,
            s.master_field("flags")
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let password = dir.path().join("s2.password");
    std::fs::write(&password, "s3cret\n").unwrap();
    std::fs::set_permissions(
        &password,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let mut agent = AgentConfig::new(&snmpd)
        .redis("s1", &s1.address(), "")
        .redis(
            "s2",
            &s2.address(),
            &format!(
                "username = \"snmp\"\npassword_file = \"{}\"",
                password.display()
            ),
        )
        .start(dir.path());
    std::thread::sleep(Duration::from_millis(2500));
    assert!(
        trapd.received("REDIS-SERVER-MIB").is_empty(),
        "the baseline sent something:\n{}",
        trapd.log()
    );

    // One sentinel gone: three are needed, two are left.
    s3.stop();
    let line = expect(
        &trapd,
        "redisSentinelQuorumLost",
        1,
        Duration::from_secs(15),
    );
    assert!(
        line.contains("redisSeMaster.1.1 = STRING: mymaster"),
        "{line}"
    );
    assert!(line.contains("NOQUORUM 2 usable Sentinels"), "{line}");
    let port = master.port();
    assert!(
        line.contains(&format!("redisSePort.1.1 = Gauge32: {port}")),
        "{line}"
    );
    s3.start_again();
    let line = expect(
        &trapd,
        "redisSentinelQuorumReached",
        1,
        Duration::from_secs(20),
    );
    assert!(line.contains("OK 3 usable Sentinels"), "{line}");

    // The master stops: objectively down, and up when it is back.
    master.stop();
    for n in [1, 2] {
        let line = expect(
            &trapd,
            "redisSentinelMasterDown",
            n,
            Duration::from_secs(20),
        );
        assert!(line.contains(&format!("redisSePort.{n}.")), "{line}");
        assert!(line.contains(&format!("Gauge32: {port}")), "{line}");
    }
    master.start_again();
    for n in [1, 2] {
        expect(&trapd, "redisSentinelMasterUp", n, Duration::from_secs(20));
    }

    // A replica the sentinels know of (from the master's INFO, read every
    // 10 s), then the master stops again: failed over to the replica.
    let replica = Redis::start_binary(&binary, &[&format!("replicaof 127.0.0.1 {port}")]);
    for s in [&s1, &s2, &s3] {
        assert!(
            wait_until(Duration::from_secs(25), || s
                .replica_field("master-link-status")
                .as_deref()
                == Some("ok")),
            "sentinel {} does not see the replica: {:?}",
            s.port,
            s.replica_field("flags")
        );
    }
    let stopped = Instant::now();
    master.stop();
    for n in [1, 2] {
        let line = expect(&trapd, "redisFailover", n, Duration::from_secs(40));
        println!(
            "redisFailover about s{n} {:?} after the master stopped: {line}",
            stopped.elapsed()
        );
        for (object, value) in [
            ("redisSeMaster", "STRING: mymaster".to_string()),
            ("redisSeOldAddress", "STRING: 127.0.0.1".to_string()),
            ("redisSeOldPort", format!("Gauge32: {port}")),
            ("redisSeAddress", "STRING: 127.0.0.1".to_string()),
            ("redisSePort", format!("Gauge32: {}", replica.port())),
        ] {
            assert!(
                line.split("| ")
                    .any(|v| v.contains(&format!("{object}.{n}.")) && v.ends_with(&value)),
                "{object} = {value} not in {line}"
            );
        }
        // Each failover raises the configuration epoch.
        assert!(
            line.contains("redisSeOldEpoch") && line.contains("redisSeEpoch"),
            "{line}"
        );
    }
    // s2 may not ask CKQUORUM: no quorum notification about it.
    assert!(
        received_about(&trapd, "redisSentinelQuorum", 2).is_empty(),
        "{}",
        trapd.log()
    );
    // The events are rows of redisSentinelEventTable too (redisSeKind).
    let rows = snmpd.redis_walk("3.30.1.3.1");
    let kinds: Vec<&str> = rows.iter().filter_map(|r| r.rsplit(" = ").next()).collect();
    assert!(
        ["1", "2", "3", "4", "5"]
            .iter()
            .all(|k| kinds.iter().any(|v| v.ends_with(k))),
        "{rows:?}"
    );

    let log = agent.log();
    let refusals: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("refuses SENTINEL CKQUORUM"))
        .collect();
    assert_eq!(refusals.len(), 1, "said once:\n{log}");
    assert!(refusals[0].contains("s2"), "{log}");
    agent.stop();
}

#[test]
fn redis_sentinels_fail_a_master_over() {
    sentinel_failover(ServerKind::Redis70);
}

#[test]
fn valkey_sentinels_fail_a_master_over() {
    sentinel_failover(ServerKind::Valkey91);
}

/// A node of a cluster: its own temp dir keeps nodes.conf across restarts.
fn cluster_node(binary: &Path) -> Redis {
    // The cluster bus is port + 10000 unless told, which can fall in the
    // kernel's ephemeral range (a client's source port took it once): a
    // port no lock holds. Redis 7.0 and Valkey know cluster-port.
    let bus = format!("cluster-port {}", testkit::free_port());
    Redis::start_binary(
        binary,
        &[
            "cluster-enabled yes",
            "cluster-node-timeout 1000",
            "cluster-config-file nodes.conf",
            &bus,
        ],
    )
}

fn cluster_fails_and_recovers(kind: ServerKind) {
    let Some(binary) = kind.binary_or_skip("cluster_fails_and_recovers") else {
        return;
    };
    let trapd = Snmptrapd::start();
    let snmpd = Snmpd::sending_to(&trapd);
    let nodes: Vec<Redis> = (0..3).map(|_| cluster_node(&binary)).collect();
    let mut third = nodes.into_iter();
    let (a, b, mut c) = (
        third.next().unwrap(),
        third.next().unwrap(),
        third.next().unwrap(),
    );
    // Three masters, the 16384 slots shared (redis-cli's own way).
    let out = Command::new("redis-cli")
        .args(["--cluster", "create"])
        .args([a.address(), b.address(), c.address()])
        .args(["--cluster-yes"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    for node in [&a, &b, &c] {
        assert!(wait_until(Duration::from_secs(20), || {
            let info = node.command(&["CLUSTER", "INFO"]);
            matches!(info, Ok(Reply::Bulk(Some(ref t))) if t.contains("cluster_state:ok"))
        }));
    }
    let dir = tempfile::tempdir().unwrap();
    let mut agent = AgentConfig::new(&snmpd)
        .redis("a", &a.address(), "")
        .start(dir.path());
    std::thread::sleep(Duration::from_millis(2500));
    assert!(
        trapd.received("REDIS-SERVER-MIB").is_empty(),
        "{}",
        trapd.log()
    );

    // A master gone: its slots possibly failing, then failing; no replica
    // to promote, so the cluster fails.
    c.stop();
    let line = expect(
        &trapd,
        "redisClusterSlotsFailing",
        1,
        Duration::from_secs(15),
    );
    assert!(
        line.contains("redisClusterSlotsAsgn.1 = Gauge32: 16384"),
        "{line}"
    );
    assert!(
        line.contains("redisClusterSlotsPfail.1 = Gauge32: 546")
            || line.contains("redisClusterSlotsFail.1 = Gauge32: 546"),
        "a third of the slots: {line}"
    );
    let line = expect(&trapd, "redisClusterStateFail", 1, Duration::from_secs(15));
    assert!(
        line.contains("redisClusterState.1 = INTEGER: fail(2)"),
        "{line}"
    );
    assert_eq!(
        received_about(&trapd, "redisClusterSlotsFailing", 1).len(),
        1,
        "once: {}",
        trapd.log()
    );

    // It comes back: the cluster is whole again.
    c.start_again();
    let line = expect(&trapd, "redisClusterStateOk", 1, Duration::from_secs(20));
    assert!(
        line.contains("redisClusterState.1 = INTEGER: ok(1)"),
        "{line}"
    );
    let line = expect(
        &trapd,
        "redisClusterSlotsFailingCleared",
        1,
        Duration::from_secs(10),
    );
    assert!(
        line.contains("redisClusterSlotsOk.1 = Gauge32: 16384"),
        "{line}"
    );
    agent.stop();
    drop(b);
}

#[test]
fn a_redis_cluster_loses_a_master_and_gets_it_back() {
    cluster_fails_and_recovers(ServerKind::Redis70);
}
