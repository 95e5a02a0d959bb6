//! A real Puppet server: Debian 12's puppetserver 7.9, PuppetDB 7.12 and
//! PostgreSQL 15 in a container with systemd as its PID 1, started once per
//! test run by `scripts/puppet-server.sh start` (`scripts/test.sh` does it
//! first, so that its two JVMs start while cargo builds) and reachable from
//! this host at `10.233.47.2` (a veth pair into a network namespace of the
//! script's).
//!
//! [`PuppetServer::or_skip`] reads the script's state file and waits while
//! the server is still starting; where it could not start (not root, no
//! image could be built, no network for the first build) the test prints
//! `SKIP <test>: no Puppet server: <the script's reason>` and returns.
//!
//! Each test writes its manifest into an [`Environment`] of its own (a
//! directory the container sees through a bind mount, so tests never share
//! a `site.pp`), and runs real `puppet agent`s as [`AgentHost`]s: a
//! certname with its own confdir, vardir and ssldir in a temporary
//! directory (never the host's `/etc/puppet` or `/var/lib/puppet`), its
//! `csr_attributes.yaml` carrying `pp_role`, and
//! `http_keepalive_timeout = 0` (a new certname's first run otherwise
//! stalls 30 s with some servers: the script's server also speaks TLS 1.2
//! only, for the same reason). The server allows duplicate certnames, so a
//! test may name its hosts `web1` and `lb1` again on every run; tests that
//! use the same certnames take [`PuppetServer::lock_certnames`].
//!
//! Hosts of a [`Network`] (network namespaces on a switch of their own,
//! `10.77.0.0/24`) reach the server through an [`Uplink`]: the switch gets
//! [`UPLINK_ADDRESS`] and the hosts a default route to it, and the test
//! process forwards the connections it accepts there to the server's port
//! 8140 (a listening socket made in the switch's namespace stays there;
//! the connections out are made from this host's). TLS passes through
//! untouched; an agent in a host ([`AgentHost::in_host`]) names the server
//! `puppet`, which its certificate carries, through an `/etc/hosts` of its
//! own and an empty `/etc/resolv.conf` (no name server is reachable there:
//! Facter's lookups then fail at once instead of timing out), both
//! bind-mounted in a mount namespace of the agent's.

use crate::netns::{Host, Network};
use crate::paths::{flock, shared_tmp};
use crate::repo_root;
use std::fs::{self, File};
use std::io::ErrorKind;
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// The server's state file: `REDIS_SNMP_PUPPET_CACHE` or
/// `${XDG_CACHE_HOME:-$HOME/.cache}/redis-snmp-puppet-server`, then
/// `run/state`, as the script computes it.
pub fn state_file() -> PathBuf {
    let cache = std::env::var_os("REDIS_SNMP_PUPPET_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME")
                .filter(|v| !v.is_empty())
                .map(|d| PathBuf::from(d).join("redis-snmp-puppet-server"))
        })
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(".cache/redis-snmp-puppet-server"))
        })
        .unwrap_or_else(|| PathBuf::from("/nonexistent"));
    cache.join("run/state")
}

/// How long a test waits for a server that is still starting: the
/// `PUPPET_SERVER_WAIT` seconds, else 900 (a cold cache builds the image
/// first, 7 to 10 minutes on two busy cores; a cached one is ready in
/// about two minutes).
fn start_wait() -> Duration {
    let secs = std::env::var("PUPPET_SERVER_WAIT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(900);
    Duration::from_secs(secs)
}

/// One `key=value` of the state file.
fn field<'a>(state: &'a str, key: &str) -> Option<&'a str> {
    state
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
        .filter(|v| !v.is_empty())
}

/// The running server, as its state file describes it.
#[derive(Debug, Clone)]
pub struct PuppetServer {
    address: String,
    ca: PathBuf,
    environments: PathBuf,
    puppetdb: String,
}

impl PuppetServer {
    /// The server, waiting while it starts; Err says why there is none.
    pub fn get() -> Result<PuppetServer, String> {
        if Command::new("puppet").arg("--version").output().is_err() {
            return Err(
                "no `puppet` here (Debian package puppet; scripts/install-test-deps.sh)".into(),
            );
        }
        let path = state_file();
        let deadline = Instant::now() + start_wait();
        let mut said = false;
        let state = loop {
            let state = fs::read_to_string(&path).map_err(|e| {
                format!(
                    "{}: {e} (start it with scripts/puppet-server.sh start; scripts/test.sh does)",
                    path.display()
                )
            })?;
            match field(&state, "status") {
                Some("ready") => break state,
                Some("starting")
                    if field(&state, "worker_pid")
                        .and_then(|p| p.parse().ok())
                        .is_some_and(|pid| !crate::pid_alive(pid)) =>
                {
                    return Err(format!(
                        "its start was interrupted (the worker is gone; {})",
                        path.display()
                    ))
                }
                Some("starting") if Instant::now() < deadline => {
                    if !said {
                        eprintln!(
                            "waiting for the Puppet server to start ({})",
                            path.display()
                        );
                        said = true;
                    }
                    std::thread::sleep(Duration::from_secs(2));
                }
                Some("starting") => {
                    return Err(format!(
                        "still starting after {:?} ({})",
                        start_wait(),
                        path.display()
                    ))
                }
                other => {
                    return Err(format!(
                        "{}: {}",
                        other.unwrap_or("no status"),
                        field(&state, "reason").unwrap_or("no reason given")
                    ))
                }
            }
        };
        let need = |key: &str| {
            field(&state, key)
                .map(str::to_string)
                .ok_or_else(|| format!("{} has no {key}=", path.display()))
        };
        Ok(PuppetServer {
            address: need("address")?,
            ca: need("ca")?.into(),
            environments: need("environments")?.into(),
            puppetdb: need("puppetdb")?,
        })
    }

    /// [`PuppetServer::get`], or `None` after a `SKIP` line naming `test`:
    /// `let Some(server) = PuppetServer::or_skip("name") else { return };`
    pub fn or_skip(test: &str) -> Option<PuppetServer> {
        match PuppetServer::get() {
            Ok(server) => Some(server),
            Err(why) => {
                eprintln!("SKIP {test}: no Puppet server: {why}");
                None
            }
        }
    }

    /// The address agents use as `server` (the certificate names it).
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The server's CA certificate (root and intermediate), copied out.
    pub fn ca(&self) -> &Path {
        &self.ca
    }

    /// PuppetDB's plain HTTP, `http://ADDRESS:8080`.
    pub fn puppetdb(&self) -> &str {
        &self.puppetdb
    }

    /// An exclusive hold on certnames shared by tests (`web1`, `lb1`, …):
    /// PuppetDB keeps one catalog per certname, so two tests running one
    /// certname at once would replace each other's exports. Held until
    /// the returned file is dropped, across test processes.
    pub fn lock_certnames(&self, names: &str) -> File {
        flock(
            &shared_tmp("locks").join(format!("puppet-server-{names}.lock")),
            true,
        )
        .expect("a blocking flock returns the file")
    }

    /// A Puppet environment of the test's own with `site_pp` as its main
    /// manifest; removed when dropped.
    pub fn environment(&self, site_pp: &str) -> Environment {
        static CALLS: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "t{}_{}",
            std::process::id(),
            CALLS.fetch_add(1, Ordering::Relaxed)
        );
        let dir = self.environments.join(&name);
        let manifests = dir.join("manifests");
        fs::create_dir_all(&manifests)
            .unwrap_or_else(|e| panic!("creating {}: {e}", manifests.display()));
        fs::write(manifests.join("site.pp"), site_pp).expect("writing site.pp");
        // puppetserver reads it as the user puppet.
        chmod_readable(&dir);
        Environment { name, dir }
    }

    /// A PQL query against PuppetDB (`/pdb/query/v4`); the JSON answer.
    pub fn pql(&self, query: &str) -> Result<serde_json::Value, String> {
        let out = Command::new("curl")
            .args(["-sS", "--fail-with-body", "--max-time", "20", "-G"])
            .arg(format!("{}/pdb/query/v4", self.puppetdb))
            .arg("--data-urlencode")
            .arg(format!("query={query}"))
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("running curl: {e}"))?;
        let body = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            return Err(format!(
                "PQL {query}: {}: {body}{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        serde_json::from_str(&body).map_err(|e| format!("PQL {query}: {e}: {body}"))
    }

    /// Polls `query` every half second until its answer (an array) is not
    /// empty, or `timeout` passes; returns the last answer.
    pub fn pql_until_found(&self, query: &str, timeout: Duration) -> serde_json::Value {
        let deadline = Instant::now() + timeout;
        loop {
            let answer = self.pql(query).unwrap_or_else(|e| panic!("{e}"));
            let found = answer.as_array().is_some_and(|a| !a.is_empty());
            if found || Instant::now() >= deadline {
                return answer;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

/// Where the hosts of a [`Network`] reach the server: an address of their
/// switch.
pub const UPLINK_ADDRESS: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 254);

/// A way from a [`Network`]'s hosts to the server (see the module
/// documentation); forwarding stops when dropped (declare it after the
/// network, so that it goes first).
pub struct Uplink {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Uplink {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn ip(args: &[&str]) {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("ip {}: {e}", args.join(" ")));
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    );
}

/// Copies one connection both ways until both sides have closed.
fn forward(client: TcpStream, target: SocketAddr) {
    let Ok(server) = TcpStream::connect_timeout(&target, Duration::from_secs(10)) else {
        return; // the client sees its connection closed
    };
    let (Ok(mut client_in), Ok(mut server_out)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    let up = std::thread::spawn(move || {
        let _ = std::io::copy(&mut client_in, &mut server_out);
        let _ = server_out.shutdown(Shutdown::Write);
    });
    let (mut server_in, mut client_out) = (server, client);
    let _ = std::io::copy(&mut server_in, &mut client_out);
    let _ = client_out.shutdown(Shutdown::Write);
    let _ = up.join();
}

impl PuppetServer {
    /// Lets the hosts of `net` reach the server at [`UPLINK_ADDRESS`]:8140,
    /// and PuppetDB's HTTPS at the server's own address, port 8081 (the
    /// address its certificate names: the switch takes it too, so that a
    /// manager in the network asks PuppetDB as a site's manager would).
    pub fn uplink(&self, net: &Network) -> Uplink {
        let switch = net.switch_netns();
        ip(&[
            "-n",
            switch,
            "addr",
            "add",
            &format!("{UPLINK_ADDRESS}/24"),
            "dev",
            "br0",
        ]);
        let server: Ipv4Addr = self.address.parse().expect("the server's address");
        ip(&[
            "-n",
            switch,
            "addr",
            "add",
            &format!("{server}/32"),
            "dev",
            "br0",
        ]);
        for host in net.hosts() {
            let via = UPLINK_ADDRESS.to_string();
            ip(&["-n", host.netns(), "route", "add", "default", "via", &via]);
        }
        let path = format!("/run/netns/{switch}");
        let ns = File::open(&path).unwrap_or_else(|e| panic!("opening {path}: {e}"));
        let ends = [(UPLINK_ADDRESS, 8140), (server, 8081)];
        // Bound on a thread of its own that entered the switch's namespace.
        let listeners: Vec<(TcpListener, SocketAddr)> = std::thread::scope(|s| {
            s.spawn(|| {
                if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
                    panic!("setns({path}): {}", std::io::Error::last_os_error());
                }
                ends.map(|(at, port)| {
                    let listener = TcpListener::bind((at, port))
                        .unwrap_or_else(|e| panic!("binding {at}:{port} in {switch}: {e}"));
                    listener
                        .set_nonblocking(true)
                        .expect("non-blocking listener");
                    (listener, SocketAddr::from((server, port)))
                })
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
        .into();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        // Spawned from this thread: its connections out leave from this
        // host's namespace.
        let thread = std::thread::spawn(move || {
            while !stopped.load(Ordering::Relaxed) {
                let mut idle = true;
                for (listener, target) in &listeners {
                    match listener.accept() {
                        Ok((client, _)) => {
                            idle = false;
                            let _ = client.set_nonblocking(false);
                            let target = *target;
                            std::thread::spawn(move || forward(client, target));
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                        Err(e) => {
                            eprintln!("uplink to the Puppet server: accept: {e}");
                            std::thread::sleep(Duration::from_millis(200));
                        }
                    }
                }
                if idle {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        });
        Uplink {
            stop,
            thread: Some(thread),
        }
    }
}

fn chmod_readable(dir: &Path) {
    let status = Command::new("chmod")
        .args(["-R", "a+rX"])
        .arg(dir)
        .status()
        .expect("running chmod");
    assert!(status.success(), "chmod -R a+rX {}", dir.display());
}

/// A test's own environment in the server's environments directory.
pub struct Environment {
    name: String,
    dir: PathBuf,
}

impl Environment {
    /// Its name (`--environment NAME`).
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for Environment {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// One host running a real `puppet agent` against the server: a certname
/// and all the agent's directories in a temporary directory.
pub struct AgentHost {
    dir: TempDir,
    certname: String,
    server: String,
    /// The network namespace it runs in (its hosts file in `conf/hosts`),
    /// or none: this host's.
    netns: Option<String>,
}

/// What one agent command did.
#[derive(Debug)]
pub struct AgentRun {
    /// Its exit code (`--detailed-exitcodes` for a run: 0 no change,
    /// 2 changes, 4 or 6 failures).
    pub code: i32,
    /// stdout and stderr.
    pub output: String,
    pub took: Duration,
    /// `last_run_report.yaml` and `last_run_summary.yaml` of the host.
    pub report: PathBuf,
    pub summary: PathBuf,
}

impl AgentRun {
    /// The report's text (empty when there is none).
    pub fn report_text(&self) -> String {
        fs::read_to_string(&self.report).unwrap_or_default()
    }
}

impl AgentHost {
    /// The host `certname` whose certificate request asks for the trusted
    /// fact `pp_role = role`.
    pub fn new(server: &PuppetServer, certname: &str, role: &str) -> AgentHost {
        AgentHost::laid_out(server.address(), certname, role, None)
    }

    /// The host `host` of a network (its name the certname), whose agent
    /// runs in its namespace and reaches the server through `uplink` by
    /// the name `puppet`.
    pub fn in_host(_uplink: &Uplink, host: &Host, role: &str) -> AgentHost {
        let agent = AgentHost::laid_out("puppet", host.name(), role, Some(host.netns()));
        fs::write(
            agent.dir.path().join("conf/hosts"),
            format!("127.0.0.1\tlocalhost\n{UPLINK_ADDRESS}\tpuppet\n"),
        )
        .expect("hosts");
        // No name server is reachable from the network: an empty
        // resolv.conf (127.0.0.1, refused at once) rather than timeouts.
        fs::write(
            agent.dir.path().join("conf/resolv.conf"),
            "# no name server in the test's network\n",
        )
        .expect("resolv.conf");
        agent
    }

    fn laid_out(server: &str, certname: &str, role: &str, netns: Option<&str>) -> AgentHost {
        let dir = tempfile::Builder::new()
            .prefix(&format!("redis-snmp-agent-{certname}."))
            .tempdir()
            .expect("tempdir");
        for d in ["conf", "code", "var", "target"] {
            fs::create_dir_all(dir.path().join(d)).expect("agent dirs");
        }
        fs::write(
            dir.path().join("conf/csr_attributes.yaml"),
            format!("extension_requests:\n  pp_role: {role}\n"),
        )
        .expect("csr_attributes.yaml");
        // Only what the command line does not say; no [server] section.
        fs::write(
            dir.path().join("conf/puppet.conf"),
            format!(
                "[main]\nserver = {server}\ncertname = {certname}\nhttp_keepalive_timeout = 0\n"
            ),
        )
        .expect("puppet.conf");
        AgentHost {
            dir,
            certname: certname.to_string(),
            server: server.to_string(),
            netns: netns.map(str::to_string),
        }
    }

    pub fn certname(&self) -> &str {
        &self.certname
    }

    /// A directory of this host's for the files its manifest manages.
    pub fn target(&self) -> PathBuf {
        self.dir.path().join("target")
    }

    /// The host's signed certificate (once bootstrapped).
    pub fn certificate(&self) -> PathBuf {
        self.var("ssl/certs").join(format!("{}.pem", self.certname))
    }

    /// The host's private key (once bootstrapped).
    pub fn private_key(&self) -> PathBuf {
        self.var("ssl/private_keys")
            .join(format!("{}.pem", self.certname))
    }

    /// The CA certificates the host was given (root and intermediate).
    pub fn ca_certificate(&self) -> PathBuf {
        self.var("ssl/certs/ca.pem")
    }

    fn var(&self, sub: &str) -> PathBuf {
        self.dir.path().join("var").join(sub)
    }

    /// The settings every command of this host is given: its own
    /// directories, never the machine's.
    fn args(&self) -> Vec<String> {
        let d = |s: &str| self.dir.path().join(s).to_string_lossy().into_owned();
        let v = |s: &str| self.var(s).to_string_lossy().into_owned();
        let mut args = Vec::new();
        for (flag, value) in [
            ("--confdir", d("conf")),
            ("--codedir", d("code")),
            ("--vardir", v("")),
            ("--publicdir", v("public")),
            ("--logdir", v("log")),
            ("--rundir", v("run")),
            ("--ssldir", v("ssl")),
            ("--csr_attributes", d("conf/csr_attributes.yaml")),
        ] {
            args.push(flag.to_string());
            args.push(value);
        }
        args.extend(
            [
                "--certname",
                &self.certname,
                "--server",
                &self.server,
                "--http_keepalive_timeout",
                "0",
                "--color=false",
            ]
            .map(str::to_string),
        );
        args
    }

    fn puppet(&self, sub: &[&str], extra: &[&str]) -> AgentRun {
        let start = Instant::now();
        let mut cmd = match &self.netns {
            None => Command::new("puppet"),
            Some(ns) => {
                // In the host's namespace, with its own /etc/hosts in a
                // mount namespace of the agent's.
                let mut cmd = Command::new("ip");
                cmd.args(["netns", "exec", ns, "unshare", "--mount", "sh", "-c"])
                    .arg(IN_HOST)
                    .arg(self.dir.path().join("conf"));
                cmd
            }
        };
        let out: Output = cmd
            .args(sub)
            .args(self.args())
            .args(extra)
            .current_dir(repo_root())
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("running puppet {sub:?}: {e}"));
        let run = AgentRun {
            code: out.status.code().expect("puppet exited by a signal"),
            output: format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
            took: start.elapsed(),
            report: self.var("state/last_run_report.yaml"),
            summary: self.var("public/last_run_summary.yaml"),
        };
        // Printed without the plugins synced into the vardir and Facter's
        // complaints about what a sandbox hides (/proc/1/environ).
        let shown: Vec<&str> = run
            .output
            .lines()
            .filter(|l| !l.contains("Facter") && !l.starts_with("Notice: /File["))
            .collect();
        println!(
            "{} puppet {}: exit {} in {:.1?}\n  {}",
            self.certname,
            sub.join(" "),
            run.code,
            run.took,
            shown.join("\n  ")
        );
        run
    }

    /// The run summary's directory and the report's (Puppet's `publicdir`
    /// and `statedir`), for an agent that follows this host's runs.
    pub fn run_file_dirs(&self) -> (PathBuf, PathBuf) {
        (self.var("public"), self.var("state"))
    }

    /// The argv of one agent run in `environment` as a kick command runs
    /// it (in the host's namespace, as [`AgentHost::run`] does, for a host
    /// of a network), with `{host}` as the certname for the kick to fill
    /// in; the caller adds `--job-id {kick}`.
    pub fn kick_argv(&self, environment: &Environment) -> Vec<String> {
        let mut argv = match &self.netns {
            None => vec!["/usr/bin/puppet".to_string()],
            Some(ns) => [
                "/usr/sbin/ip",
                "netns",
                "exec",
                ns,
                "unshare",
                "--mount",
                "sh",
                "-c",
                IN_HOST,
            ]
            .map(str::to_string)
            .into_iter()
            .chain([self.dir.path().join("conf").to_string_lossy().into_owned()])
            .collect(),
        };
        argv.push("agent".to_string());
        let mut args = self.args();
        if let Some(at) = args.iter().position(|a| a == "--certname") {
            args[at + 1] = "{host}".to_string();
        }
        argv.extend(args);
        argv.extend(one_run(environment).into_iter().map(str::to_string));
        argv
    }

    /// `puppet ssl bootstrap`: a key, a CSR with the role, the certificate
    /// the server's CA signs (autosign), the CA and its CRL.
    pub fn ssl_bootstrap(&self) -> AgentRun {
        self.puppet(&["ssl", "bootstrap"], &["--waitforcert", "0"])
    }

    /// `puppet agent --onetime --no-daemonize --detailed-exitcodes` in
    /// `environment` (its log to the console, that is [`AgentRun::output`]),
    /// with `--job-id` when given.
    pub fn run(&self, environment: &Environment, job_id: Option<&str>) -> AgentRun {
        self.run_logging(environment, job_id, None)
    }

    /// [`AgentHost::run`], its log also written as JSON lines to `events`
    /// (the events log a redis-snmp agent follows) when given.
    pub fn run_logging(
        &self,
        environment: &Environment,
        job_id: Option<&str>,
        events: Option<&Path>,
    ) -> AgentRun {
        let mut extra: Vec<&str> = one_run(environment);
        let events = events.map(|e| e.to_string_lossy().into_owned());
        if let Some(events) = &events {
            extra.extend(["--logdest", events.as_str()]);
        }
        extra.push("--detailed-exitcodes");
        if let Some(id) = job_id {
            extra.extend(["--job-id", id]);
        }
        self.puppet(&["agent"], &extra)
    }
}

/// The script that runs `puppet ARGS…` in a host's mount namespace with
/// the host's own /etc/hosts and resolv.conf (`$0`: their directory).
const IN_HOST: &str = "mount --bind \"$0/hosts\" /etc/hosts && \
     mount --bind \"$0/resolv.conf\" /etc/resolv.conf && exec puppet \"$@\"";

/// The options of one agent run in `environment`, in the foreground.
fn one_run(environment: &Environment) -> Vec<&str> {
    vec![
        "--onetime",
        "--no-daemonize",
        "--no-splay",
        "--no-usecacheonfailure",
        // Without it a non-daemonized agent logs to syslog.
        "--logdest",
        "console",
        "--environment",
        environment.name(),
    ]
}

/// The seeds' site: web1 exports an `haproxy_member` tagged `members` (a
/// Puppet expression) and applies `web1_extra`; lb1 collects every such
/// member into a fragment of `lb_dir` and assembles haproxy.cfg from the
/// fragments (what the concat module does, without the module).
pub fn balancer_site(lb_dir: &Path, members: &str, web1_extra: &str) -> String {
    format!(
        r#"$haproxy_dir = '{dir}'
$members = {members}

define haproxy_member(Any $address, Integer $port) {{
  file {{ "${{::haproxy_dir}}/haproxy.d/50-${{title}}.cfg":
    content => "    server ${{title}} ${{address}}:${{port}} check\n",
    notify  => Exec['assemble haproxy.cfg'],
  }}
}}

node 'web1' {{
  @@haproxy_member {{ $trusted['certname']:
    address => $facts['networking']['ip'],
    port    => 80,
    tag     => [$members],
  }}
{web1_extra}}}

node 'lb1' {{
  file {{ "${{haproxy_dir}}/haproxy.d": ensure => directory }}
  file {{ "${{haproxy_dir}}/haproxy.d/00-head.cfg":
    content => "backend web\n    balance roundrobin\n",
    notify  => Exec['assemble haproxy.cfg'],
  }}
  Haproxy_member <<| tag == $members |>>
  exec {{ 'assemble haproxy.cfg':
    command     => "/bin/sh -c 'cat ${{haproxy_dir}}/haproxy.d/*.cfg > ${{haproxy_dir}}/haproxy.cfg'",
    refreshonly => true,
  }}
}}
"#,
        dir = lb_dir.display()
    )
}
