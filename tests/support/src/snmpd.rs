//! Snmpd.

use crate::netns::Host;
use crate::*;
use std::fs::{self, File};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// How the private snmpd offers AgentX.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentxTransport {
    /// `unix:<tempdir>/agentx/agentx.sock`
    Unix,
    /// `tcp:127.0.0.1:<free port>`
    Tcp,
}

/// Options of a private snmpd; `Default` is what [`Snmpd::start`] uses.
#[derive(Debug, Clone)]
pub struct SnmpdOptions {
    pub agentx: AgentxTransport,
    /// net-snmp debug tokens (`-D`), e.g. `agentx/master`, logged to the
    /// log file. Slows snmpd down: not for benchmarks.
    pub debug_tokens: Vec<String>,
    /// Extra `snmpd.conf` lines.
    pub extra_config: Vec<String>,
    /// The `public` (read) and `private` (write) communities for
    /// requests from each address snmpd listens on, with every object in
    /// view; off, `extra_config` says who may read what.
    pub default_communities: bool,
    /// The host (network namespace) snmpd runs in; `None`: the test's own.
    /// The agent can stay outside: AgentX over a unix socket path crosses
    /// network namespaces (TCP AgentX would not, and is refused here).
    pub host: Option<Host>,
    /// The addresses its UDP port is bound on; empty: 127.0.0.1, and in a
    /// host the host's address too.
    pub listen: Vec<Ipv4Addr>,
}

impl Default for SnmpdOptions {
    fn default() -> Self {
        SnmpdOptions {
            agentx: AgentxTransport::Unix,
            debug_tokens: Vec::new(),
            extra_config: Vec::new(),
            default_communities: true,
            host: None,
            listen: Vec::new(),
        }
    }
}

impl SnmpdOptions {
    pub fn tcp(mut self) -> Self {
        self.agentx = AgentxTransport::Tcp;
        self
    }

    pub fn debug(mut self, token: &str) -> Self {
        self.debug_tokens.push(token.to_string());
        self
    }

    pub fn config_line(mut self, line: &str) -> Self {
        self.extra_config.push(line.to_string());
        self
    }

    pub fn without_default_communities(mut self) -> Self {
        self.default_communities = false;
        self
    }

    /// Runs snmpd inside `host`, on its loopback and its address (unless
    /// [`SnmpdOptions::listen_on`] says otherwise).
    pub fn in_host(mut self, host: &Host) -> Self {
        self.host = Some(host.clone());
        self
    }

    /// Binds the UDP port on exactly these addresses (the first is the one
    /// [`Snmpd::client`] asks, from inside the host when there is one).
    pub fn listen_on(mut self, addresses: &[Ipv4Addr]) -> Self {
        self.listen = addresses.to_vec();
        self
    }

    fn listen_addresses(&self) -> Vec<Ipv4Addr> {
        if !self.listen.is_empty() {
            return self.listen.clone();
        }
        let mut addresses = vec![Ipv4Addr::LOCALHOST];
        addresses.extend(self.host.as_ref().map(Host::address));
        addresses
    }
}

/// A private `snmpd` master agent.
///
/// What it took to make net-snmp 5.9.3 private and quiet:
/// - `-C -c FILE`: only our generated config is read (no
///   /etc/snmp/snmpd.conf, no snmp.conf). With snmp.conf unread, the
///   compiled-in MIB list would be loaded and logs 300 lines of "Cannot
///   find module"; `-m ""` loads no MIB at all: snmpd needs none, and
///   `override` takes numeric OIDs.
/// - `SNMP_PERSISTENT_DIR` in the temp dir: otherwise snmpd (as root) reads
///   and rewrites /var/lib/snmp/snmpd.conf on every start and stop, shared
///   by every instance.
/// - `-I -smux`: Debian's snmpd otherwise listens for SMUX on
///   0.0.0.0:199/tcp, which is neither loopback-only nor free for a
///   second instance.
/// - `override OID TYPE VALUE` creates a scalar even where no MIB module
///   registered anything (the OID needs no MIB definition). Its types are
///   net-snmp's ASN type names: `unsigned` (or `uinteger`) is Gauge32,
///   `integer`, `counter` (Counter32), `timeticks`, `octet_str`,
///   `object_id`; `gauge`/`gauge32` are "unknown type", and `counter64` is
///   "illegal/unsupported".
/// - `agentXPerms 0600 0700`: the socket and the directory snmpd creates
///   for it are the owner's only (the tests, snmpd and the agent all run as
///   the same user). snmpd removes the socket on SIGTERM and replaces a
///   stale one left by SIGKILL, so a restart needs no cleanup.
/// - `dontLogTCPWrappersConnects yes`: no "Connection from UDP" line per
///   request in the log.
/// - Readiness: snmpd creates the AgentX socket before it answers on UDP;
///   we wait for both (an snmpget of sysUpTime.0, and the socket file or
///   TCP port).
/// - In a host ([`SnmpdOptions::in_host`]): started by `ip netns exec`,
///   which execs snmpd in place (the guard's PID is snmpd's); the readiness
///   probe runs inside the host too, and the bound ports are read from
///   snmpd's own `/proc/PID/net/udp`.
pub struct Snmpd {
    dir: TempDir,
    udp_port: u16,
    listen: Vec<Ipv4Addr>,
    agentx_address: String,
    options: SnmpdOptions,
    proc: Option<Proc>,
    ready_at: Option<Instant>,
}

impl Snmpd {
    /// snmpd with AgentX on a unix socket in its temp dir.
    pub fn start() -> Snmpd {
        Snmpd::start_with(SnmpdOptions::default())
    }

    /// snmpd with AgentX on `tcp:127.0.0.1:PORT`.
    pub fn start_tcp() -> Snmpd {
        Snmpd::start_with(SnmpdOptions::default().tcp())
    }

    /// A private snmpd that sends its notifications to `trapd`.
    pub fn sending_to(trapd: &Snmptrapd) -> Snmpd {
        Snmpd::start_with(SnmpdOptions::default().config_line(&trapd.trap2sink_line()))
    }

    pub fn start_with(options: SnmpdOptions) -> Snmpd {
        let dir = tempfile::Builder::new()
            .prefix("redis-snmp-snmpd.")
            .tempdir()
            .expect("tempdir");
        assert!(
            options.host.is_none() || options.agentx == AgentxTransport::Unix,
            "snmpd in a host offers AgentX on a unix socket only: the agent outside could not reach its TCP port"
        );
        let udp_port = free_port();
        let listen = options.listen_addresses();
        let agent_addresses: Vec<String> = listen
            .iter()
            .map(|a| format!("udp:{a}:{udp_port}"))
            .collect();
        let agentx_address = match options.agentx {
            AgentxTransport::Unix => format!(
                "unix:{}",
                dir.path().join("agentx").join("agentx.sock").display()
            ),
            AgentxTransport::Tcp => format!("tcp:127.0.0.1:{}", free_port()),
        };
        let mut conf = format!(
            "# generated by the test harness (tests/support)\n\
             agentAddress {}\n\
             master agentx\n\
             agentXSocket {agentx_address}\n\
             agentXPerms 0600 0700\n\
             dontLogTCPWrappersConnects yes\n",
            agent_addresses.join(",")
        );
        if options.default_communities {
            for a in &listen {
                conf.push_str(&format!(
                    "rocommunity public {a}\nrwcommunity private {a}\n"
                ));
            }
        }
        conf.push_str("# native scalars: a baseline for benchmarks\n");
        for n in 1..=BASELINE_COUNT {
            conf.push_str(&format!(
                "override {BASELINE_ROOT}.{n}.0 unsigned {}\n",
                baseline_value(n)
            ));
        }
        conf.push_str("# a native object after our subtree, for walks\n");
        conf.push_str(&format!("override {AFTER_OID} integer {AFTER_VALUE}\n"));
        for line in &options.extra_config {
            conf.push_str(line);
            conf.push('\n');
        }
        fs::write(dir.path().join("snmpd.conf"), conf).expect("writing snmpd.conf");
        let mut snmpd = Snmpd {
            dir,
            udp_port,
            listen,
            agentx_address,
            options,
            proc: None,
            ready_at: None,
        };
        snmpd.start_again();
        snmpd
    }

    /// e.g. `unix:/tmp/redis-snmp-snmpd.XXXX/agentx/agentx.sock` or
    /// `tcp:127.0.0.1:PORT`: what the agent's `-x` takes.
    pub fn agentx_address(&self) -> String {
        self.agentx_address.clone()
    }

    /// The unix socket's path (None for TCP AgentX).
    pub fn agentx_socket(&self) -> Option<PathBuf> {
        self.agentx_address.strip_prefix("unix:").map(PathBuf::from)
    }

    pub fn udp_port(&self) -> u16 {
        self.udp_port
    }

    /// Every address and port it answers SNMP on.
    pub fn udp_addresses(&self) -> Vec<SocketAddr> {
        let port = self.udp_port;
        self.listen
            .iter()
            .map(|a| SocketAddr::from((*a, port)))
            .collect()
    }

    /// The host it runs in (`None`: the test's own namespace).
    pub fn host(&self) -> Option<&Host> {
        self.options.host.as_ref()
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn config_path(&self) -> PathBuf {
        self.dir.path().join("snmpd.conf")
    }

    pub fn pid(&self) -> u32 {
        self.proc.as_ref().expect("snmpd is not running").pid()
    }

    pub fn is_running(&mut self) -> bool {
        self.proc.as_mut().map(|p| p.is_running()).unwrap_or(false)
    }

    /// When the last start first answered an snmpget.
    pub fn ready_at(&self) -> Instant {
        self.ready_at.expect("snmpd was never ready")
    }

    pub fn log(&self) -> String {
        read_lossy(&self.dir.path().join("snmpd.log"))
    }

    /// A client for this snmpd, with the MIBs loaded (names in output): to
    /// its first address, from inside its host if it has one.
    pub fn client(&self) -> SnmpClient {
        let client = SnmpClient::new(self.udp_port).at(self.listen[0]);
        match self.host() {
            Some(host) => client.inside(host),
            None => client,
        }
    }

    /// A client for this snmpd, numeric OIDs and no MIBs.
    pub fn numeric(&self) -> SnmpClient {
        self.client().numeric()
    }

    /// The value text of a numeric GET of `REDIS_ROOT.suffix` ("" when
    /// absent).
    pub fn redis_value(&self, suffix: &str) -> String {
        self.numeric()
            .get_one(&format!("{REDIS_ROOT}.{suffix}"))
            .value
    }

    /// `redisInstanceState.N` (1 up, 2 down) and `redisInstanceLastError.N`.
    pub fn instance_state(&self, n: u32) -> (String, String) {
        let snmp = self.numeric();
        (
            snmp.get_one(&instance_oid(4, n)).value,
            snmp.get_one(&instance_oid(7, n)).text(),
        )
    }

    /// Waits (15 s at most) until instance `n`'s state is `want` and its
    /// last error contains `error_has`; panics with what was seen.
    pub fn wait_instance_state(&self, n: u32, want: &str, error_has: &str) -> (String, String) {
        let mut seen = (String::new(), String::new());
        let ok = wait_until(std::time::Duration::from_secs(15), || {
            seen = self.instance_state(n);
            seen.0 == want && seen.1.contains(error_has)
        });
        assert!(
            ok,
            "instance {n}: want state {want} with {error_has:?}, got {seen:?}"
        );
        seen
    }

    /// A numeric bulk walk of `root` (5 s a request), which must succeed.
    pub fn numeric_walk(&self, root: &str) -> Vec<Var> {
        let out = self
            .numeric()
            .timeout(Duration::from_secs(5))
            .bulkwalk(root);
        assert!(out.success(), "{out}");
        out.vars()
    }

    /// A numeric bulk walk of `REDIS_ROOT.suffix` (the whole module when
    /// `suffix` is empty), as `oid = value` lines.
    pub fn redis_walk(&self, suffix: &str) -> Vec<String> {
        let root = match suffix {
            "" => REDIS_ROOT.to_string(),
            _ => format!("{REDIS_ROOT}.{suffix}"),
        };
        self.numeric()
            .bulkwalk(&root)
            .vars()
            .into_iter()
            .map(|v| format!("{} = {}", v.name, v.value))
            .collect()
    }

    fn agentx_ready(&self) -> bool {
        match self.options.agentx {
            AgentxTransport::Unix => self.agentx_socket().unwrap().exists(),
            AgentxTransport::Tcp => {
                let port: u16 = self
                    .agentx_address
                    .rsplit(':')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                TcpStream::connect_timeout(
                    &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
                    Duration::from_millis(200),
                )
                .is_ok()
            }
        }
    }

    /// Starts snmpd (again) with the same config, port and AgentX address,
    /// and waits until it answers sysUpTime.0 and the AgentX socket exists.
    pub fn start_again(&mut self) {
        assert!(self.proc.is_none(), "snmpd is already running");
        let d = self.dir.path();
        let out = File::create(d.join("snmpd.stdout")).expect("snmpd.stdout");
        let mut cmd = match self.host() {
            Some(host) => host.command("snmpd"),
            None => Command::new("snmpd"),
        };
        cmd.arg("-f")
            .arg("-C")
            .arg("-c")
            .arg(d.join("snmpd.conf"))
            .args(["-m", ""])
            .args(["-I", "-smux"])
            .arg("-Lf")
            .arg(d.join("snmpd.log"))
            .arg("-p")
            .arg(d.join("snmpd.pid"));
        if !self.options.debug_tokens.is_empty() {
            cmd.arg(format!("-D{}", self.options.debug_tokens.join(",")));
        }
        cmd.env("SNMP_PERSISTENT_DIR", d.join("persist"))
            .env_remove("SNMPCONFPATH")
            .env_remove("MIBS")
            .env_remove("MIBDIRS")
            .current_dir(d)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out);
        let mut proc = Proc::spawn(&mut cmd, "snmpd");
        let pid = proc.pid();
        let probe = self.numeric();
        let mut answered: Option<Instant> = None;
        let ready = wait_until(Duration::from_secs(10), || {
            if !proc.is_running() {
                return false;
            }
            // Probe only once the UDP port is bound: an SNMP request to a
            // closed port waits out the whole client timeout.
            let bound = || self.udp_addresses().iter().all(|a| binds_udp(pid, *a));
            if answered.is_none() && bound() {
                let out = probe.get(&[SYS_UPTIME]);
                // An answer, even one that sysUpTime is outside the view.
                if out.success()
                    && (out.stdout.contains("Timeticks") || out.stdout.contains("No Such Object"))
                {
                    answered = Some(Instant::now());
                }
            }
            answered.is_some() && self.agentx_ready()
        });
        if !ready {
            let status = proc.kill();
            panic!(
                "snmpd on {:?}{} did not come up ({status}):\n{}\n{}",
                self.udp_addresses(),
                self.host()
                    .map(|h| format!(" in host {}", h.name()))
                    .unwrap_or_default(),
                read_lossy(&d.join("snmpd.stdout")),
                tail(&self.log(), 30)
            );
        }
        self.ready_at = answered;
        self.proc = Some(proc);
    }

    /// SIGTERM (SIGKILL after 5 s) and wait.
    pub fn stop(&mut self) {
        if let Some(mut p) = self.proc.take() {
            p.terminate(Duration::from_secs(5));
        }
    }

    /// Stop, then start on the same port and AgentX address.
    pub fn restart(&mut self) {
        self.stop();
        self.start_again();
    }

    /// SIGKILL: no Close to the subagents, the socket file left behind.
    pub fn kill(&mut self) {
        if let Some(mut p) = self.proc.take() {
            p.kill();
        }
    }
}

impl Drop for Snmpd {
    fn drop(&mut self) {
        if std::thread::panicking() && self.proc.is_some() {
            eprintln!(
                "--- snmpd udp:{} log (tail) ---\n{}",
                self.udp_port,
                tail(&self.log(), 30)
            );
        }
        self.proc.take();
    }
}
