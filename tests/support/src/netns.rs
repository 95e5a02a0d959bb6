//! Several hosts on one machine: network namespaces on a private switch.
//!
//! [`Network::new`]`(&["web1", "lb1", "mgr"])` makes one "switch" namespace
//! holding a bridge, and one namespace per host, joined to the bridge by a
//! veth pair (`eth0` inside the host, the host's name on the bridge). Each
//! host has `lo` up and one address in [`SUBNET`], in the order given:
//! `10.77.0.1`, `10.77.0.2`, …; no route is needed within one subnet.
//! Programs started with [`Host::command`] see only their host's `lo` and
//! `eth0`, so a notification from web1's snmpd reaches mgr with web1's
//! address as its source, which is what a test across hosts checks.
//!
//! Why this shape:
//! - Nothing is made in the test's own (root) namespace: no address,
//!   route or interface. Each veth end is created directly in its
//!   namespace (`ip -n SWITCH link add NAME type veth peer name eth0 netns
//!   HOST`), so not even a transient name appears there; tests running in
//!   parallel never see each other's links or addresses.
//! - Every [`Network`] has its own switch, so every one can use the same
//!   subnet: two tests' `10.77.0.1` are in different worlds.
//! - Namespace names are `rsnmp<PID>-<N>` (the switch) and
//!   `rsnmp<PID>-<N>-<host>`: unique per test process and call. Interface
//!   names only need to be unique within their namespace, which keeps them
//!   short (a host name of at most 15 characters, `eth0`, `br0`).
//! - [`Network`]'s `Drop` deletes every namespace it made (with them go the
//!   veth pairs and the bridge), also when the test panics. A process still
//!   running in a host keeps that namespace alive, unnamed, until it exits:
//!   processes are their own guards' to stop (by PID), which the usual
//!   declaration order (network first, servers after) does before the
//!   network goes. Namespaces a killed test process left behind (its PID
//!   gone) are deleted by the next [`Network::new`].
//! - AgentX over a unix socket path is not bound to a network namespace:
//!   an snmpd in a host and the agent in the root namespace meet at the
//!   socket file as usual.

use crate::*;
use std::ffi::OsStr;
use std::fs::File;
use std::net::Ipv4Addr;
use std::os::unix::io::AsRawFd;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

/// The hosts' subnet.
pub const SUBNET: &str = "10.77.0.0/24";
const PREFIX: &str = "rsnmp";

/// Hosts on one switch; see the module documentation.
pub struct Network {
    switch: String,
    hosts: Vec<Host>,
    /// Every namespace made so far, deleted in reverse order on drop.
    made: Vec<String>,
}

/// One host of a [`Network`]: a network namespace with `lo` and `eth0`.
/// A cheap clone of the names, valid while its network lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    name: String,
    netns: String,
    address: Ipv4Addr,
}

/// Why networks of hosts cannot be made here (not root, no `ip`, no
/// namespaces, veth or bridges in this kernel or container), or `None` when
/// they can. Tried once per process, by making and deleting a one-host
/// network.
pub fn unavailable() -> Option<String> {
    static WHY: OnceLock<Option<String>> = OnceLock::new();
    WHY.get_or_init(|| {
        if unsafe { libc::geteuid() } != 0 {
            return Some("not root: network namespaces need CAP_SYS_ADMIN".into());
        }
        if Command::new("ip").arg("-V").output().is_err() {
            return Some("no `ip` (Debian package iproute2)".into());
        }
        let probe = Network::build(&["probe"]).and_then(|net| net.hosts[0].check());
        probe.err()
    })
    .clone()
}

/// Runs `ip ARGS`; Err with the command and its stderr when it fails.
fn ip(args: &[&str]) -> Result<String, String> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("ip {}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "ip {}: {}: {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Deletes the namespaces of test processes that are gone (killed before
/// their networks' Drop ran). Errors are ignored: another process may be
/// deleting the same ones.
fn delete_stale() {
    let Ok(entries) = std::fs::read_dir("/run/netns") else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let pid = name
            .strip_prefix(PREFIX)
            .and_then(|rest| rest.split('-').next())
            .and_then(|digits| digits.parse::<u32>().ok());
        if let Some(pid) = pid {
            if pid != std::process::id() && !pid_alive(pid) {
                let _ = ip(&["netns", "del", &name]);
            }
        }
    }
}

impl Network {
    /// The hosts `names` (each 1 to 15 of `a-z`, `0-9`, `-`; unique) on one
    /// switch. Panics when that fails; a test that should rather skip calls
    /// [`Network::new_or_skip`].
    pub fn new(names: &[&str]) -> Network {
        Network::build(names).unwrap_or_else(|e| panic!("making the hosts {names:?}: {e}"))
    }

    /// [`Network::new`], or `None` after a `SKIP` line on stderr naming
    /// `test` and the reason when namespaces cannot be made here (see
    /// [`unavailable`]):
    /// `let Some(net) = Network::new_or_skip("name", &["web1"]) else { return };`
    pub fn new_or_skip(test: &str, names: &[&str]) -> Option<Network> {
        if let Some(why) = unavailable() {
            eprintln!("SKIP {test}: no network namespaces here: {why}");
            return None;
        }
        Some(Network::new(names))
    }

    fn build(names: &[&str]) -> Result<Network, String> {
        static CALLS: AtomicU32 = AtomicU32::new(0);
        for (i, name) in names.iter().enumerate() {
            let ok = (1..=15).contains(&name.len())
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !names[..i].contains(name);
            assert!(ok, "host name {name:?}: 1-15 of a-z, 0-9, '-', unique");
        }
        assert!(names.len() <= 250, "one /24 holds at most 250 hosts here");
        delete_stale();
        let id = format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            CALLS.fetch_add(1, Ordering::Relaxed)
        );
        let mut net = Network {
            switch: id.clone(),
            hosts: Vec::new(),
            made: Vec::new(),
        };
        // On an error, `net` is dropped and deletes what was made so far.
        let sw = id.as_str();
        ip(&["netns", "add", sw])?;
        net.made.push(id.clone());
        ip(&["-n", sw, "link", "set", "lo", "up"])?;
        ip(&["-n", sw, "link", "add", "br0", "type", "bridge"])?;
        ip(&["-n", sw, "link", "set", "br0", "up"])?;
        for (i, name) in names.iter().enumerate() {
            let ns = format!("{id}-{name}");
            ip(&["netns", "add", &ns])?;
            net.made.push(ns.clone());
            let address = Ipv4Addr::new(10, 77, 0, i as u8 + 1);
            let cidr = format!("{address}/24");
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
            ip(&[
                "-n", sw, "link", "add", name, "type", "veth", "peer", "name", "eth0", "netns", &ns,
            ])?;
            ip(&["-n", sw, "link", "set", name, "master", "br0", "up"])?;
            ip(&["-n", &ns, "addr", "add", &cidr, "dev", "eth0"])?;
            ip(&["-n", &ns, "link", "set", "eth0", "up"])?;
            net.hosts.push(Host {
                name: name.to_string(),
                netns: ns,
                address,
            });
        }
        Ok(net)
    }

    /// The host named `name`; panics when there is none.
    pub fn host(&self, name: &str) -> &Host {
        self.hosts
            .iter()
            .find(|h| h.name == name)
            .unwrap_or_else(|| panic!("no host {name:?} in this network"))
    }

    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    /// The switch's namespace (the bridge `br0` and one port per host,
    /// named after it), for `ip -n` when a test needs to look.
    pub fn switch_netns(&self) -> &str {
        &self.switch
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        for ns in self.made.iter().rev() {
            if let Err(e) = ip(&["netns", "del", ns]) {
                eprintln!("deleting network namespace {ns}: {e}");
            }
        }
    }
}

impl Host {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The host's address on the switch (on its `eth0`).
    pub fn address(&self) -> Ipv4Addr {
        self.address
    }

    /// Its namespace's name (`ip netns exec NAME …`, `ip -n NAME …`).
    pub fn netns(&self) -> &str {
        &self.netns
    }

    /// `ip netns exec NS PROGRAM`: a command that runs `program` in this
    /// host, arguments, environment and working directory to be added as
    /// to any [`Command`]. `ip netns exec` switches namespaces and execs the
    /// program in place, so the child's PID is the program's own: a
    /// [`Proc`] guard stops it by PID as any other.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.netns]).arg(program);
        cmd
    }

    /// Runs `f` on a thread of its own that has entered this host's network
    /// namespace (setns), and returns what it returns. Sockets `f` creates
    /// stay in the host after the thread is gone, and can be used from any
    /// thread; `/proc/thread-self/net/…` in `f` are the host's tables.
    pub fn run_inside<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        let path = format!("/run/netns/{}", self.netns);
        let ns = File::open(&path).unwrap_or_else(|e| panic!("opening {path}: {e}"));
        std::thread::scope(|s| {
            let joined = s
                .spawn(|| {
                    if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                        panic!("setns({path}): {}", std::io::Error::last_os_error());
                    }
                    f()
                })
                .join();
            joined.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    /// Whether the host is usable: `lo` and `eth0` up, its address on
    /// `eth0`, and its namespace can be entered. Err says what is wrong.
    pub fn check(&self) -> Result<(), String> {
        let links = ip(&["-n", &self.netns, "-o", "link", "show"])?;
        for dev in ["lo", "eth0"] {
            let up = links.lines().any(|l| {
                let name = l.split(':').nth(1).map(str::trim).unwrap_or("");
                name.split('@').next() == Some(dev) && l.contains(",UP")
            });
            if !up {
                return Err(format!("{dev} of {} is not up:\n{links}", self.name));
            }
        }
        let addrs = ip(&["-n", &self.netns, "-o", "-4", "addr", "show", "dev", "eth0"])?;
        if !addrs.contains(&format!("inet {}/24", self.address)) {
            return Err(format!(
                "eth0 of {} lacks {}:\n{addrs}",
                self.name, self.address
            ));
        }
        let inside = self.run_inside(|| std::fs::read_to_string("/proc/thread-self/net/dev"));
        match inside {
            Ok(dev) if dev.contains("eth0:") => Ok(()),
            other => Err(format!("entering {}: {other:?}", self.netns)),
        }
    }

    /// The processes holding a UDP socket bound to `port` in this host (on
    /// any of its addresses), from its namespace's udp tables and every
    /// process's open files: empty once the port is free to bind.
    pub fn udp_port_holders(&self, port: u16) -> Vec<u32> {
        let tables = self.run_inside(own_udp_tables);
        udp_port_holders(&tables, port)
    }

    /// The host's `Udp: InDatagrams` counter (`/proc/net/snmp` of its
    /// namespace): how many datagrams its kernel delivered to a socket.
    /// Only the test's programs use a host, so a rise proves a datagram
    /// arrived, even one the program then dropped without a word.
    pub fn udp_datagrams_received(&self) -> u64 {
        let text = self.run_inside(|| std::fs::read_to_string("/proc/thread-self/net/snmp"));
        let text = text.expect("reading the host's /proc/net/snmp");
        let mut udp = text.lines().filter(|l| l.starts_with("Udp:"));
        let (names, values) = (udp.next().unwrap_or(""), udp.next().unwrap_or(""));
        names
            .split_whitespace()
            .zip(values.split_whitespace())
            .find(|(n, _)| *n == "InDatagrams")
            .and_then(|(_, v)| v.parse().ok())
            .expect("Udp: InDatagrams in /proc/net/snmp")
    }
}
