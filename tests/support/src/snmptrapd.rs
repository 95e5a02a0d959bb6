//! Snmptrapd.

use crate::*;
use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;
use tempfile::TempDir;

/// A private `snmptrapd` on a loopback UDP port, logging every notification
/// it receives to a file, decoded with our MIBs (and the base modules).
/// snmpd sends to it with [`Snmptrapd::trap2sink_line`].
pub struct Snmptrapd {
    proc: Proc,
    dir: TempDir,
    port: u16,
}

impl Snmptrapd {
    /// A receiver that logs every notification, whoever sent it.
    pub fn start() -> Snmptrapd {
        Snmptrapd::start_with_access("disableAuthorization yes")
    }

    /// A receiver whose access control is `access` (`snmptrapd.conf`
    /// lines, e.g. `createUser …` and `authUser log USER priv`).
    pub fn start_with_access(access: &str) -> Snmptrapd {
        let dir = tempfile::Builder::new()
            .prefix("redis-snmp-snmptrapd.")
            .tempdir()
            .expect("tempdir");
        let port = free_port();
        let conf = dir.path().join("snmptrapd.conf");
        // One line per notification: its OID, then every varbind.
        fs::write(
            &conf,
            format!("{access}\ndoNotRetainNotificationLogs yes\nformat2 TRAP %V| %v\\n\n"),
        )
        .expect("snmptrapd.conf");
        let log = dir.path().join("traps.log");
        let mut cmd = Command::new("snmptrapd");
        cmd.args(["-f", "-C", "-c"])
            .arg(&conf)
            .args([
                "-M",
                &mib_path(),
                "-m",
                "SNMPv2-MIB:REDIS-SERVER-MIB:PUPPET-AGENT-MIB",
                "-Lf",
            ])
            .arg(&log)
            .arg(format!("udp:127.0.0.1:{port}"))
            .env("SNMP_PERSISTENT_DIR", dir.path())
            .env("SNMPCONFPATH", dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let proc = Proc::spawn(&mut cmd, "snmptrapd");
        let trapd = Snmptrapd { proc, dir, port };
        let ready = wait_until(Duration::from_secs(10), || bound_udp(trapd.port));
        assert!(
            ready,
            "snmptrapd did not bind udp:127.0.0.1:{port}:\n{}",
            trapd.log()
        );
        trapd
    }

    /// The `snmpd.conf` line that sends SNMPv2c notifications here.
    pub fn trap2sink_line(&self) -> String {
        format!("trap2sink 127.0.0.1:{} public", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn pid(&self) -> u32 {
        self.proc.pid()
    }

    pub fn log(&self) -> String {
        read_lossy(&self.log_path())
    }

    /// The file it logs to (for readers that follow it).
    pub fn log_path(&self) -> PathBuf {
        self.dir.path().join("traps.log")
    }

    /// The lines of notifications received so far whose text contains `name`.
    pub fn received(&self, name: &str) -> Vec<String> {
        self.log()
            .lines()
            .filter(|l| l.starts_with("TRAP") && l.contains(name))
            .map(String::from)
            .collect()
    }

    /// The first notification named `name`, waiting up to `timeout` for
    /// it; panics with snmptrapd's log when none came.
    pub fn first(&self, name: &str, timeout: std::time::Duration) -> String {
        let mut found = None;
        crate::wait_until(timeout, || {
            found = self.received(name).into_iter().next();
            found.is_some()
        });
        found.unwrap_or_else(|| {
            panic!(
                "no {name} within {timeout:?}; snmptrapd log:\n{}",
                self.log()
            )
        })
    }
}

/// Whether something is bound to udp 127.0.0.1:port (from /proc/net/udp).
pub(crate) fn bound_udp(port: u16) -> bool {
    let table = fs::read_to_string("/proc/net/udp").unwrap_or_default();
    let needle = format!("0100007F:{port:04X}");
    table
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some(needle.as_str()))
}
