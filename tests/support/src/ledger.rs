//! A shared kick ledger across hosts: a Redis master and its replicas,
//! each with a sentinel, one a host of a [`crate::netns::Network`], the
//! `kick` user made by the shipped ACL line
//! (debian/examples/kick-ledger.acl) on every one of them; and the files
//! every manager holds (the password, the key that seals the records).

use crate::netns::Host;
use crate::process::Proc;
use crate::wait_until;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

pub const PASSWORD: &str = "kick-ledger-secret";
pub const MASTER_NAME: &str = "kick-ledger";
const PORT: u16 = 6379;
const SENTINEL_PORT: u16 = 26379;

/// The user line of the shipped example, with [`PASSWORD`].
pub fn acl_line() -> String {
    let example = fs::read_to_string(crate::repo_root().join("debian/examples/kick-ledger.acl"))
        .expect("debian/examples/kick-ledger.acl");
    example
        .lines()
        .find(|l| l.starts_with("user "))
        .expect("the ACL line")
        .replace("CHANGE-ME", PASSWORD)
}

/// The password and key files of the managers, in `dir`.
pub fn manager_files(dir: &Path) {
    for (name, text) in [
        ("password", PASSWORD),
        ("key", "0123456789abcdef0123456789abcdef"),
    ] {
        fs::write(dir.join(name), text).unwrap();
        fs::set_permissions(dir.join(name), fs::Permissions::from_mode(0o600)).unwrap();
    }
}

pub struct LedgerCluster {
    hosts: Vec<Host>,
    servers: Vec<Option<Proc>>,
    sentinels: Vec<Proc>,
    dir: tempfile::TempDir,
}

impl LedgerCluster {
    /// The master on `hosts[0]`, replicas on the others, a sentinel on
    /// each (quorum 2, a master down after 1 s), ready once every replica
    /// has synchronised.
    pub fn start(hosts: &[&Host]) -> LedgerCluster {
        let dir = tempfile::Builder::new()
            .prefix("redis-snmp-ledger.")
            .tempdir()
            .expect("tempdir");
        manager_files(dir.path());
        let master = hosts[0].address();
        let acl = acl_line();
        let mut servers = Vec::new();
        let mut sentinels = Vec::new();
        for (n, host) in hosts.iter().enumerate() {
            let own = dir.path().join(host.name());
            fs::create_dir(&own).unwrap();
            let replica = if n == 0 {
                String::new()
            } else {
                format!("replicaof {master} {PORT}\n")
            };
            let conf = own.join("redis.conf");
            fs::write(
                &conf,
                format!(
                    "port {PORT}\nbind {}\nprotected-mode no\ndaemonize no\ndir {}\n\
                     logfile {}\nsave \"\"\nappendonly no\n{replica}{acl}\n",
                    host.address(),
                    own.display(),
                    own.join("redis.log").display()
                ),
            )
            .unwrap();
            let mut cmd = host.command("redis-server");
            cmd.arg(&conf).stdout(Stdio::null());
            servers.push(Some(Proc::spawn(&mut cmd, "ledger redis-server")));
        }
        for host in hosts {
            let own = dir.path().join(host.name());
            let conf = own.join("sentinel.conf");
            fs::write(
                &conf,
                format!(
                    "port {SENTINEL_PORT}\nbind {}\nprotected-mode no\ndaemonize no\ndir {}\n\
                     logfile {}\nsentinel monitor {MASTER_NAME} {master} {PORT} 2\n\
                     sentinel down-after-milliseconds {MASTER_NAME} 1000\n\
                     sentinel failover-timeout {MASTER_NAME} 5000\n",
                    host.address(),
                    own.display(),
                    own.join("sentinel.log").display()
                ),
            )
            .unwrap();
            let mut cmd = host.command("redis-server");
            cmd.arg(&conf).arg("--sentinel").stdout(Stdio::null());
            sentinels.push(Proc::spawn(&mut cmd, "ledger sentinel"));
        }
        let cluster = LedgerCluster {
            hosts: hosts.iter().map(|h| (*h).clone()).collect(),
            servers,
            sentinels,
            dir,
        };
        let synced = wait_until(Duration::from_secs(20), || {
            cluster
                .ask(0, PORT, &["INFO", "replication"])
                .contains(&format!("connected_slaves:{}", hosts.len() - 1))
                && (0..hosts.len()).all(|n| {
                    cluster
                        .ask(n, SENTINEL_PORT, &["SENTINEL", "MASTER", MASTER_NAME])
                        .contains("num-other-sentinels")
                })
        });
        assert!(
            synced,
            "the ledger's replicas and sentinels did not come up"
        );
        // Every sentinel knows the two others before a failover is asked
        // of them.
        let known = wait_until(Duration::from_secs(20), || {
            (0..hosts.len()).all(|n| {
                let master = cluster.ask(n, SENTINEL_PORT, &["SENTINEL", "MASTER", MASTER_NAME]);
                let lines: Vec<&str> = master.lines().collect();
                lines
                    .windows(2)
                    .any(|w| w[0] == "num-other-sentinels" && w[1] == (hosts.len() - 1).to_string())
            })
        });
        assert!(known, "the sentinels did not find each other");
        cluster
    }

    /// `redis-cli` inside host `n` against its server (or sentinel) on
    /// `port`, as the default user; its output.
    pub fn ask(&self, n: usize, port: u16, args: &[&str]) -> String {
        let host = &self.hosts[n];
        let out = host
            .command("redis-cli")
            .args(["-h", &host.address().to_string(), "-p", &port.to_string()])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("redis-cli");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `[ledger]` for manager `name`: the sentinels, the master's name, the
    /// files.
    pub fn section(&self, name: &str) -> String {
        let sentinels: Vec<String> = self
            .hosts
            .iter()
            .map(|h| format!("\"{}:{SENTINEL_PORT}\"", h.address()))
            .collect();
        format!(
            "[ledger]\nsentinels = [{}]\nmaster_name = \"{MASTER_NAME}\"\nusername = \"kick\"\n\
             password_file = \"{}\"\nkey_file = \"{}\"\nmanager_name = \"{name}\"\n",
            sentinels.join(", "),
            self.file("password").display(),
            self.file("key").display()
        )
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The host the sentinels name as the master now.
    pub fn master(&self) -> Option<usize> {
        for n in 0..self.sentinels.len() {
            let said = self.ask(
                n,
                SENTINEL_PORT,
                &["SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME],
            );
            if let Some(address) = said.lines().next() {
                return self
                    .hosts
                    .iter()
                    .position(|h| h.address().to_string() == address.trim());
            }
        }
        None
    }

    /// Kills the master's server (SIGKILL): what a host's loss does.
    pub fn kill_master(&mut self) -> usize {
        let n = self.master().expect("a master");
        if let Some(mut server) = self.servers[n].take() {
            server.kill();
        }
        n
    }

    pub fn host(&self, n: usize) -> &Host {
        &self.hosts[n]
    }

    /// The sentinels' log lines, for a failure's message.
    pub fn sentinel_logs(&self) -> String {
        self.hosts
            .iter()
            .map(|h| {
                let log = self.dir.path().join(h.name()).join("sentinel.log");
                format!(
                    "--- {} ---\n{}",
                    h.name(),
                    fs::read_to_string(log).unwrap_or_default()
                )
            })
            .collect()
    }
}

/// puppetEventTime of row 1.
const EVENT_TIME: &str = ".1.3.6.1.4.1.20267.401.4.1.2.1";

/// Request `n` (`Notify[kick -> rN]` changed, its event at a time of its
/// own) sent from `from` to each of `to` (an snmptrapd's address, and how
/// long to wait for its answer) at once, as an agent with a `trapsess`
/// line per manager sends one notification: an SNMPv3 inform to each, the
/// same sysUpTime in each.
pub fn send_request(from: &Host, to: &[(std::net::SocketAddr, Duration)], n: u64) {
    use crate::kick::{EVENT_TITLE, EVENT_TYPE, RESOURCE_CHANGED};
    let uptime = (100_000 + n).to_string();
    let time = (1_700_000_000 + n).to_string();
    let title = format!("kick -> r{n}");
    std::thread::scope(|s| {
        for (address, timeout) in to {
            let (uptime, time, title) = (&uptime, &time, &title);
            s.spawn(move || {
                crate::SnmpClient::new(address.port())
                    .at(address.ip())
                    .inside(from)
                    .numeric()
                    .usm(&crate::UsmUser::documented())
                    .timeout(*timeout)
                    .run(
                        "snmpinform",
                        &[
                            uptime,
                            RESOURCE_CHANGED,
                            EVENT_TIME,
                            "u",
                            time,
                            EVENT_TYPE,
                            "s",
                            "Notify",
                            EVENT_TITLE,
                            "s",
                            title,
                        ],
                    )
            });
        }
    });
}
