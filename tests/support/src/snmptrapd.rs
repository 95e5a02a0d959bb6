//! Snmptrapd.

use crate::netns::Host;
use crate::*;
use std::fs;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;
use tempfile::TempDir;

/// A private `snmptrapd` on one UDP address, logging every notification
/// it receives to a file, decoded with our MIBs (and the base modules), one
/// line each: `TRAP <transport> <varbind>| <varbind>| …`, the transport
/// being `UDP: [SOURCE]:PORT->[OWN]:PORT` ([`notification_source`] reads
/// it). snmpd sends to it with [`Snmptrapd::trap2sink_line`].
///
/// - Its config is `-C -c` our file only; its persistent state
///   (`SNMP_PERSISTENT_DIR`: engine boots, the localised keys of
///   `createUser` users) is a directory of its own, kept across
///   [`Snmptrapd::restart`]s. (Left in the config's directory, snmptrapd
///   would save that state over the config itself when it stops.)
/// - A fixed engine ID (`engineID redis-snmp-trapd-PORT`), as a manager
///   that receives SNMPv3 informs needs: left to itself, snmptrapd 5.9.3
///   makes up a new one at every start, and an snmpd that discovered the
///   old one has its informs refused by the restarted receiver (none
///   logged within 20 s); with a fixed one they are logged at once.
/// - `-A`: a restart appends to the log instead of truncating it.
/// - `traphandle` lines run only for notifications that `authUser`/
///   `authCommunity` grant `execute` (e.g. `authUser log,execute USER
///   priv`); `log` alone logs and runs nothing. The handler inherits
///   snmptrapd's open files, its UDP socket included: a handler's detached
///   child keeps the port taken after snmptrapd stops
///   ([`Snmptrapd::port_holders`]).
pub struct Snmptrapd {
    // Dropped first: the process is killed before its directory goes.
    proc: Option<Proc>,
    dir: TempDir,
    address: SocketAddr,
    host: Option<Host>,
}

impl Snmptrapd {
    /// A receiver on loopback that logs every notification, whoever sent it.
    pub fn start() -> Snmptrapd {
        Snmptrapd::start_with_access("disableAuthorization yes")
    }

    /// A receiver on loopback whose access control is `access`
    /// (`snmptrapd.conf` lines, e.g. `createUser …` and `authUser log USER
    /// priv`, and any `traphandle` lines).
    pub fn start_with_access(access: &str) -> Snmptrapd {
        Snmptrapd::start_at(None, Ipv4Addr::LOCALHOST, access)
    }

    /// A receiver inside `host`, on `udp:<host's address>:<port>`, with
    /// this access control (as [`Snmptrapd::start_with_access`]).
    pub fn start_in(host: &Host, access: &str) -> Snmptrapd {
        Snmptrapd::start_at(Some(host), host.address(), access)
    }

    fn start_at(host: Option<&Host>, ip: Ipv4Addr, access: &str) -> Snmptrapd {
        let dir = tempfile::Builder::new()
            .prefix("redis-snmp-snmptrapd.")
            .tempdir()
            .expect("tempdir");
        fs::create_dir(dir.path().join("persist")).expect("persist dir");
        let port = free_port();
        // One line per notification: where from, then every varbind.
        fs::write(
            dir.path().join("snmptrapd.conf"),
            format!(
                "engineID redis-snmp-trapd-{port}\n{access}\n\
                 doNotRetainNotificationLogs yes\nformat2 TRAP %b %V| %v\\n\n"
            ),
        )
        .expect("snmptrapd.conf");
        let mut trapd = Snmptrapd {
            proc: None,
            dir,
            address: SocketAddr::new(IpAddr::V4(ip), port),
            host: host.cloned(),
        };
        trapd.start_again();
        trapd
    }

    /// Starts it (again) with the same config, address and port, and waits
    /// until it has bound them; panics, with its log and whoever still
    /// holds the port, when it does not.
    pub fn start_again(&mut self) {
        assert!(self.proc.is_none(), "snmptrapd is already running");
        let d = self.dir.path();
        let out = fs::File::create(d.join("snmptrapd.out")).expect("snmptrapd.out");
        let mut cmd = match &self.host {
            Some(host) => host.command("snmptrapd"),
            None => Command::new("snmptrapd"),
        };
        cmd.args(["-f", "-C", "-c"])
            .arg(d.join("snmptrapd.conf"))
            .args([
                "-M",
                &mib_path(),
                "-m",
                "SNMPv2-MIB:REDIS-SERVER-MIB:PUPPET-AGENT-MIB",
                "-A",
                "-Lf",
            ])
            .arg(self.log_path())
            .arg(format!("udp:{}", self.address))
            .env("SNMP_PERSISTENT_DIR", d.join("persist"))
            .env("SNMPCONFPATH", d)
            .current_dir(d)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out);
        let mut proc = Proc::spawn(&mut cmd, "snmptrapd");
        let pid = proc.pid();
        let ready = wait_until(Duration::from_secs(10), || {
            binds_udp(pid, self.address) || !proc.is_running()
        });
        if !(ready && proc.is_running()) {
            let status = proc.kill();
            panic!(
                "snmptrapd did not bind udp:{} ({status}); holding the port: {:?}; output:\n{}\nlog:\n{}",
                self.address,
                self.port_holders(),
                read_lossy(&d.join("snmptrapd.out")),
                self.log()
            );
        }
        self.proc = Some(proc);
    }

    /// SIGTERM (SIGKILL after 5 s) and wait; the port is free once no
    /// other process holds the socket ([`Snmptrapd::port_holders`]).
    pub fn stop(&mut self) {
        if let Some(mut p) = self.proc.take() {
            p.terminate(Duration::from_secs(5));
        }
    }

    /// Stop, then start on the same address and port.
    pub fn restart(&mut self) {
        self.stop();
        self.start_again();
    }

    pub fn is_running(&mut self) -> bool {
        self.proc.as_mut().is_some_and(|p| p.is_running())
    }

    /// The processes that hold a UDP socket on its port, in its network
    /// namespace (PIDs): snmptrapd while it runs, and any process that
    /// inherited its socket, which keeps the port taken after it stopped.
    pub fn port_holders(&self) -> Vec<u32> {
        let port = self.address.port();
        match &self.host {
            Some(host) => host.udp_port_holders(port),
            None => udp_port_holders(&own_udp_tables(), port),
        }
    }

    /// The `snmpd.conf` line that sends SNMPv2c notifications here.
    pub fn trap2sink_line(&self) -> String {
        format!("trap2sink {} public", self.address)
    }

    /// Where it listens: `127.0.0.1:PORT`, or its host's address.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    pub fn port(&self) -> u16 {
        self.address.port()
    }

    /// The host it runs in (`None`: the test's own namespace).
    pub fn host(&self) -> Option<&Host> {
        self.host.as_ref()
    }

    pub fn pid(&self) -> u32 {
        self.proc.as_ref().expect("snmptrapd is not running").pid()
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

impl Drop for Snmptrapd {
    fn drop(&mut self) {
        if std::thread::panicking() && self.proc.is_some() {
            eprintln!(
                "--- snmptrapd udp:{} log (tail) ---\n{}",
                self.address,
                tail(&self.log(), 30)
            );
        }
        self.proc.take();
    }
}

/// The source of a notification line of [`Snmptrapd`]'s log (its
/// `UDP: [SOURCE]:PORT->[OWN]:PORT`): the address the datagram came from.
pub fn notification_source(line: &str) -> Option<SocketAddr> {
    let rest = line.split_once("UDP: [")?.1;
    let (ip, rest) = rest.split_once("]:")?;
    let port: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some(SocketAddr::new(ip.parse().ok()?, port.parse().ok()?))
}
