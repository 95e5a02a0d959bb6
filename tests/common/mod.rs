//! The integration-test harness: real `redis-server`, real `snmpd`, the real
//! agent binary and the real net-snmp command-line tools, all private to one
//! test.
//!
//! Every integration test file does `mod common;`. Each server binds only to
//! 127.0.0.1 (or a unix socket in its own temp dir), on a port from
//! [`free_port`], and is owned by a guard that kills it and reaps it by PID
//! when dropped, also when the test panics. When a test panics, the guards
//! print the tail of their logs to stderr, which the test runner shows with
//! the failure.
//!
//! Nothing here uses system paths: no port 161/6379, no `/var/agentx`, no
//! `/var/lib/snmp` (see [`Snmpd`] and [`SnmpClient`] for how net-snmp is kept
//! away from its defaults).

#![allow(dead_code)] // each test binary uses a different subset

use std::collections::HashMap;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream, UdpSocket};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tempfile::TempDir;

pub mod servers;

// ---------------------------------------------------------------------------
// Well-known OIDs of the test setup
// ---------------------------------------------------------------------------

/// `enterprises.daysofwonder(20267)`: walks of this show our subtree and the
/// native objects around it.
pub const ENTERPRISE: &str = ".1.3.6.1.4.1.20267";
/// REDIS-SERVER-MIB's root.
pub const REDIS_ROOT: &str = ".1.3.6.1.4.1.20267.400";
/// Where the 17 legacy scalars hang (`-o` default): `.N.0`, N = 1..=17.
pub const LEGACY_ROOT: &str = ".1.3.6.1.4.1.20267.400.1";
/// `redisInstanceEntry`: columns `.C.1` for the first instance.
pub const INSTANCE_ENTRY: &str = ".1.3.6.1.4.1.20267.400.3.1.1";
/// The 17 native `override` scalars of the private snmpd (`.N.0`, N =
/// 1..=17, Gauge32 [`baseline_value`]`(N)`), a baseline for benchmarks.
pub const BASELINE_ROOT: &str = ".1.3.6.1.4.1.20267.499.1";
/// A native snmpd object after our subtree: a walk of [`ENTERPRISE`] must
/// reach it.
pub const AFTER_OID: &str = ".1.3.6.1.4.1.20267.500.1.0";
pub const AFTER_VALUE: u32 = 42;
/// `sysUpTime.0`, answered by snmpd itself.
pub const SYS_UPTIME: &str = ".1.3.6.1.2.1.1.3.0";

/// Number of native baseline scalars the private snmpd serves.
pub const BASELINE_COUNT: u32 = 17;

/// Value of the native baseline scalar `.499.1.N.0`.
pub fn baseline_value(n: u32) -> u32 {
    1000 + n
}

/// The 17 legacy objects: (N, MIB name, type net-snmp prints, INFO field).
pub const LEGACY: [(u32, &str, &str, &str); 17] = [
    (1, "redisConnectedClients", "Gauge32", "connected_clients"),
    (2, "redisConnectedSlaves", "Gauge32", "connected_slaves"),
    (3, "redisUsedMemory", "Counter64", "used_memory"),
    (
        4,
        "redisChangesSinceLastSave",
        "Gauge32",
        "rdb_changes_since_last_save",
    ),
    (
        5,
        "redisTotalConnections",
        "Counter64",
        "total_connections_received",
    ),
    (
        6,
        "redisCommandsProcessed",
        "Counter64",
        "total_commands_processed",
    ),
    (7, "redisCPUSys", "Counter32", "used_cpu_sys"),
    (8, "redisCPUUsr", "Counter32", "used_cpu_user"),
    (9, "redisBlockedClients", "Gauge32", "blocked_clients"),
    (10, "redisEvictedKeys", "Counter64", "evicted_keys"),
    (11, "redisExpiredKeys", "Counter64", "expired_keys"),
    (12, "redisKeyspaceHits", "Counter64", "keyspace_hits"),
    (13, "redisKeyspaceMisses", "Counter64", "keyspace_misses"),
    (14, "redisPubsubChannels", "Gauge32", "pubsub_channels"),
    (15, "redisPubsubPatterns", "Gauge32", "pubsub_patterns"),
    (16, "redisUptime", "Gauge32", "uptime_in_seconds"),
    (17, "redisUsedMemoryRss", "Counter64", "used_memory_rss"),
];

/// Numeric OID of legacy object N (`.1.3.6.1.4.1.20267.400.1.N.0`).
pub fn legacy_oid(n: u32) -> String {
    format!("{LEGACY_ROOT}.{n}.0")
}

/// Numeric OID of `redisInstanceEntry` column `col` for instance `index`.
pub fn instance_oid(col: u32, index: u32) -> String {
    format!("{INSTANCE_ENTRY}.{col}.{index}")
}

// ---------------------------------------------------------------------------
// Paths
// ---------------------------------------------------------------------------

/// The repository (the crate's manifest directory).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A directory of this user's, under the system temp dir, for state the
/// test processes share: the port locks, the client tools' empty config dir.
fn shared_tmp(sub: &str) -> PathBuf {
    let uid = unsafe { libc::getuid() };
    let dir = std::env::temp_dir()
        .join(format!("redis-snmp-tests-{uid}"))
        .join(sub);
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
    dir
}

/// Takes an exclusive `flock` on `path` (blocking or not); `None` when
/// `block` is false and another open file holds it. The lock lives as long
/// as the returned file, and the kernel drops it when the process dies, so
/// a crashed test never leaves a stale lock behind.
fn flock(path: &Path, block: bool) -> Option<File> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .unwrap_or_else(|e| panic!("opening lock file {}: {e}", path.display()));
    let op = if block {
        libc::LOCK_EX
    } else {
        libc::LOCK_EX | libc::LOCK_NB
    };
    loop {
        if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
            return Some(file);
        }
        let err = std::io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EWOULDBLOCK) if !block => return None,
            _ => panic!("flock {}: {err}", path.display()),
        }
    }
}

/// The directory with the SMIv2 base modules (SNMPv2-SMI.txt, ...) that
/// REDIS-SERVER-MIB imports: runs `scripts/base-mibs.sh` once per process
/// (which honours `REDIS_SNMP_BASE_MIBS` and defaults to
/// `target/base-mibs`). Test processes running in parallel serialise on a
/// lock, so only the first one fetches and the others see complete files.
pub fn base_mibs() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let _lock = flock(&shared_tmp("locks").join("base-mibs.lock"), true);
        let repo = repo_root();
        let out = Command::new("sh")
            .arg(repo.join("scripts/base-mibs.sh"))
            .current_dir(&repo)
            .stdin(Stdio::null())
            .output()
            .expect("running scripts/base-mibs.sh");
        assert!(
            out.status.success(),
            "scripts/base-mibs.sh failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let printed = String::from_utf8_lossy(&out.stdout);
        let line = printed.lines().last().unwrap_or("").trim();
        assert!(
            !line.is_empty(),
            "scripts/base-mibs.sh printed no directory"
        );
        let dir = repo.join(line); // a relative path is relative to the repo
        assert!(
            dir.join("SNMPv2-SMI.txt").is_file(),
            "{} has no SNMPv2-SMI.txt",
            dir.display()
        );
        dir
    })
    .clone()
}

/// The repository's own MIB directory.
pub fn repo_mibs() -> PathBuf {
    repo_root().join("mibs")
}

/// `mibs/REDIS-SERVER-MIB.txt`.
pub fn redis_mib_file() -> PathBuf {
    repo_mibs().join("REDIS-SERVER-MIB.txt")
}

/// Value for net-snmp's `-M`: the base modules, then the repo's `mibs/`.
pub fn mib_path() -> String {
    format!("{}:{}", base_mibs().display(), repo_mibs().display())
}

// ---------------------------------------------------------------------------
// Ports
// ---------------------------------------------------------------------------

/// Ports are taken from this range, which lies below Linux's default
/// ephemeral range (32768-60999), so the kernel never hands one out as the
/// source port of a client socket (snmpget, redis-cli, the agent) between
/// the moment we pick it and the moment the server binds it.
const PORT_LO: u16 = 20000;
const PORT_HI: u16 = 32000; // exclusive

/// Lock files of the ports this process holds, kept open (and so locked)
/// until the process exits: a server restarted on the same port finds it
/// still reserved for it.
static HELD_PORTS: Mutex<Vec<File>> = Mutex::new(Vec::new());
static PORT_CURSOR: AtomicU64 = AtomicU64::new(0);

/// The kernel's ephemeral port range, if it can be read.
fn ephemeral_range() -> Option<(u16, u16)> {
    let text = fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    let mut it = text.split_whitespace().map(|s| s.parse::<u16>().ok());
    Some((it.next()??, it.next()??))
}

/// A port on 127.0.0.1 that is free for both TCP and UDP and that no other
/// test process (of this user) will be given.
///
/// Scheme: every process starts at its own pseudo-random offset (from its
/// PID and the clock) in 20000..32000 and walks the range. A candidate is
/// taken only if (1) a non-blocking `flock` on
/// `$TMPDIR/redis-snmp-tests-$UID/ports/<port>` succeeds, and (2) binding it
/// on 127.0.0.1 for TCP and for UDP succeeds. The lock closes the race that
/// a bind check alone leaves open (two processes both see the port free
/// before either server binds it); the range keeps client sockets off it;
/// the bind check skips ports other programs use. The lock is held until
/// the process exits and is released by the kernel even after a crash.
pub fn free_port() -> u16 {
    let dir = shared_tmp("ports");
    let span = u64::from(PORT_HI - PORT_LO);
    let start = {
        static START: OnceLock<u64> = OnceLock::new();
        *START.get_or_init(|| {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0);
            let pid = u64::from(std::process::id());
            (pid.wrapping_mul(2654435761) ^ nanos.wrapping_mul(40503)) % span
        })
    };
    let ephemeral = ephemeral_range();
    for _ in 0..span {
        let k = PORT_CURSOR.fetch_add(1, Ordering::Relaxed);
        let port = PORT_LO + ((start + k) % span) as u16;
        if let Some((lo, hi)) = ephemeral {
            if (lo..=hi).contains(&port) {
                continue;
            }
        }
        let Some(lock) = flock(&dir.join(port.to_string()), false) else {
            continue;
        };
        let tcp = TcpListener::bind(("127.0.0.1", port));
        let udp = UdpSocket::bind(("127.0.0.1", port));
        if tcp.is_ok() && udp.is_ok() {
            HELD_PORTS.lock().unwrap().push(lock);
            return port;
        }
    }
    panic!("no free port in {PORT_LO}..{PORT_HI}");
}

/// The lock file that reserves `port` (for the harness's own tests).
pub fn port_lock_path(port: u16) -> PathBuf {
    shared_tmp("ports").join(port.to_string())
}

/// Tries to take the lock of `port` through a new open file: fails while
/// any process (this one included) holds the reservation.
pub fn try_lock_port(port: u16) -> bool {
    flock(&port_lock_path(port), false).is_some()
}

// ---------------------------------------------------------------------------
// Waiting and processes
// ---------------------------------------------------------------------------

/// Polls `cond` every 50 ms until it returns true (→ true) or `timeout`
/// has passed (→ false). `cond` is always tried at least once, and once more
/// after the deadline.
pub fn wait_until(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return cond();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether a process with this PID exists and is not a zombie.
pub fn pid_alive(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        // "pid (comm) S ..." — the state follows the last ')'.
        Ok(stat) => stat
            .rsplit_once(')')
            .map(|(_, rest)| !rest.trim_start().starts_with('Z'))
            .unwrap_or(true),
        Err(_) => false,
    }
}

/// The last `n` lines of a text.
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

fn read_lossy(path: &Path) -> String {
    fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

/// A child process that is killed (SIGKILL) and reaped when dropped.
pub struct Proc {
    child: Child,
    what: String,
    status: Option<ExitStatus>,
}

impl Proc {
    pub fn spawn(cmd: &mut Command, what: &str) -> Proc {
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("starting {what} ({cmd:?}): {e}"));
        Proc {
            child,
            what: what.to_string(),
            status: None,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The exit status, if the process has exited (reaps it).
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().expect("waitpid");
        }
        self.status
    }

    pub fn is_running(&mut self) -> bool {
        self.try_wait().is_none()
    }

    /// Waits up to `timeout` for the process to exit by itself.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(s) = self.try_wait() {
                return Some(s);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Sends a signal by PID (unless the process was already reaped).
    pub fn signal(&mut self, sig: libc::c_int) {
        if self.try_wait().is_none() {
            unsafe {
                libc::kill(self.child.id() as libc::pid_t, sig);
            }
        }
    }

    /// SIGTERM, wait up to `grace`, then SIGKILL; returns the exit status.
    pub fn terminate(&mut self, grace: Duration) -> ExitStatus {
        self.signal(libc::SIGTERM);
        if let Some(s) = self.wait_timeout(grace) {
            return s;
        }
        eprintln!(
            "{} did not exit within {grace:?} of SIGTERM: SIGKILL",
            self.what
        );
        self.kill()
    }

    /// SIGKILL and reap.
    pub fn kill(&mut self) -> ExitStatus {
        if let Some(s) = self.try_wait() {
            return s;
        }
        let _ = self.child.kill();
        let s = self.child.wait().expect("waitpid");
        self.status = Some(s);
        s
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

// ---------------------------------------------------------------------------
// Redis
// ---------------------------------------------------------------------------

/// A private `redis-server` on 127.0.0.1, no persistence, its dir and log in
/// a temp dir. Dropping it kills it.
pub struct Redis {
    dir: TempDir,
    port: u16,
    password: Option<String>,
    proc: Option<Proc>,
    /// The server program (`redis-server` on the PATH unless
    /// [`Redis::start_binary`] chose another, see [`servers`]).
    binary: PathBuf,
}

impl Redis {
    pub fn start() -> Redis {
        Redis::start_with(&[])
    }

    /// Starts with extra `redis.conf` lines (e.g. `"requirepass s3cret"`);
    /// a `requirepass` line makes [`Redis::info`] and [`Redis::cli`]
    /// authenticate.
    pub fn start_with(extra_config_lines: &[&str]) -> Redis {
        Redis::start_binary(Path::new("redis-server"), extra_config_lines)
    }

    /// Like [`Redis::start_with`], with another server program (a
    /// [`servers::ServerKind`]'s binary: Redis 6.2, Valkey 8.0, ...).
    pub fn start_binary(binary: &Path, extra_config_lines: &[&str]) -> Redis {
        let dir = tempfile::Builder::new()
            .prefix("redis-snmp-redis.")
            .tempdir()
            .expect("tempdir");
        let port = free_port();
        let mut conf = format!(
            "# generated by tests/common/mod.rs\n\
             port {port}\n\
             bind 127.0.0.1\n\
             daemonize no\n\
             save \"\"\n\
             appendonly no\n\
             dir {dir}\n\
             logfile {log}\n",
            dir = dir.path().display(),
            log = dir.path().join("redis.log").display(),
        );
        let mut password = None;
        for line in extra_config_lines {
            conf.push_str(line);
            conf.push('\n');
            if let Some(pw) = line.trim().strip_prefix("requirepass ") {
                password = Some(pw.trim().trim_matches('"').to_string());
            }
        }
        fs::write(dir.path().join("redis.conf"), conf).expect("writing redis.conf");
        let mut redis = Redis {
            dir,
            port,
            password,
            proc: None,
            binary: binary.to_path_buf(),
        };
        redis.start_again();
        redis
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:PORT`
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// PID of the running server (panics when stopped).
    pub fn pid(&self) -> u32 {
        self.proc.as_ref().expect("redis is not running").pid()
    }

    pub fn is_running(&mut self) -> bool {
        self.proc.as_mut().map(|p| p.is_running()).unwrap_or(false)
    }

    pub fn log(&self) -> String {
        read_lossy(&self.dir.path().join("redis.log"))
    }

    /// Starts the server (again) on the same port with the same config, and
    /// waits until it answers PING.
    pub fn start_again(&mut self) {
        assert!(self.proc.is_none(), "redis is already running");
        let out = File::create(self.dir.path().join("redis.stdout")).expect("redis.stdout");
        let mut cmd = Command::new(&self.binary);
        cmd.arg(self.dir.path().join("redis.conf"))
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out);
        let mut proc = Proc::spawn(&mut cmd, "redis-server");
        let ready = wait_until(Duration::from_secs(10), || {
            proc.is_running()
                && matches!(self.command(&["PING"]), Ok(Reply::Status(ref s)) if s == "PONG")
        });
        if !ready {
            let status = proc.kill();
            panic!(
                "redis-server on port {} did not answer PING ({status}):\n{}\n{}",
                self.port,
                read_lossy(&self.dir.path().join("redis.stdout")),
                tail(&self.log(), 20)
            );
        }
        self.proc = Some(proc);
    }

    /// Stops the server (SIGTERM, then SIGKILL after 5 s) and waits for it.
    pub fn stop(&mut self) {
        if let Some(mut p) = self.proc.take() {
            p.terminate(Duration::from_secs(5));
        }
    }

    /// Stop, then start on the same port.
    pub fn restart(&mut self) {
        self.stop();
        self.start_again();
    }

    /// One command over a fresh connection (with AUTH first when the server
    /// has a password), by a minimal RESP client.
    pub fn command(&self, args: &[&str]) -> Result<Reply, String> {
        let mut conn = RespConn::connect(self.port).map_err(|e| e.to_string())?;
        if let Some(pw) = &self.password {
            if let Reply::Error(e) = conn.call(&["AUTH", pw])? {
                return Err(format!("AUTH: {e}"));
            }
        }
        conn.call(args)
    }

    /// `INFO` (default sections) as Redis sends it (CRLF line ends).
    pub fn info(&self) -> String {
        self.info_section("default")
    }

    /// `INFO <section>` (e.g. `everything`).
    pub fn info_section(&self, section: &str) -> String {
        match self.command(&["INFO", section]) {
            Ok(Reply::Bulk(Some(text))) => text,
            other => panic!("INFO on port {}: {other:?}", self.port),
        }
    }

    /// `INFO` parsed into `field → value`.
    pub fn info_map(&self) -> Info {
        Info::parse(&self.info())
    }

    /// Runs `redis-cli -h 127.0.0.1 -p PORT ARGS...` (the password, if any,
    /// through `REDISCLI_AUTH`, not argv) and returns its stdout without the
    /// trailing newline. Panics if redis-cli itself fails.
    pub fn cli(&self, args: &[&str]) -> String {
        let out = self
            .cli_command(args)
            .stdin(Stdio::null())
            .output()
            .expect("running redis-cli");
        assert!(
            out.status.success(),
            "redis-cli {args:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim_end().to_string()
    }

    /// A background `redis-cli ARGS...` (e.g. `SUBSCRIBE chan`, `BLPOP l 0`),
    /// killed when the returned guard drops. Its output goes to a file in
    /// the server's temp dir.
    pub fn spawn_cli(&self, args: &[&str]) -> Proc {
        static N: AtomicU64 = AtomicU64::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let out = File::create(self.dir.path().join(format!("redis-cli.{n}.out"))).unwrap();
        let mut cmd = self.cli_command(args);
        cmd.stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out);
        Proc::spawn(&mut cmd, "redis-cli")
    }

    fn cli_command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("redis-cli");
        cmd.args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(args)
            .env_remove("REDISCLI_AUTH");
        if let Some(pw) = &self.password {
            cmd.env("REDISCLI_AUTH", pw);
        }
        cmd
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        if std::thread::panicking() && self.proc.is_some() {
            eprintln!(
                "--- redis-server :{} log (tail) ---\n{}",
                self.port,
                tail(&self.log(), 15)
            );
        }
        // Proc's Drop kills and reaps.
        self.proc.take();
    }
}

/// A RESP reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Status(String),
    Error(String),
    Integer(i64),
    Bulk(Option<String>),
    Array(Option<Vec<Reply>>),
}

pub struct RespConn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl RespConn {
    pub fn connect(port: u16) -> std::io::Result<RespConn> {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        stream.set_write_timeout(Some(Duration::from_secs(5)))?;
        Ok(RespConn {
            stream,
            buf: Vec::new(),
        })
    }

    pub fn call(&mut self, args: &[&str]) -> Result<Reply, String> {
        let mut req = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            req.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            req.extend_from_slice(a.as_bytes());
            req.extend_from_slice(b"\r\n");
        }
        self.stream.write_all(&req).map_err(|e| e.to_string())?;
        self.reply()
    }

    fn fill(&mut self) -> Result<(), String> {
        let mut chunk = [0u8; 16384];
        let n = self.stream.read(&mut chunk).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("connection closed".into());
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(())
    }

    fn line(&mut self) -> Result<String, String> {
        loop {
            if let Some(pos) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8_lossy(&self.buf[..pos]).into_owned();
                self.buf.drain(..pos + 2);
                return Ok(line);
            }
            self.fill()?;
        }
    }

    fn reply(&mut self) -> Result<Reply, String> {
        let line = self.line()?;
        let (kind, rest) = line.split_at(1.min(line.len()));
        let int = |s: &str| {
            s.parse::<i64>()
                .map_err(|e| format!("bad RESP '{line}': {e}"))
        };
        match kind {
            "+" => Ok(Reply::Status(rest.to_string())),
            "-" => Ok(Reply::Error(rest.to_string())),
            ":" => Ok(Reply::Integer(int(rest)?)),
            "$" => {
                let len = int(rest)?;
                if len < 0 {
                    return Ok(Reply::Bulk(None));
                }
                let len = len as usize;
                while self.buf.len() < len + 2 {
                    self.fill()?;
                }
                let text = String::from_utf8_lossy(&self.buf[..len]).into_owned();
                self.buf.drain(..len + 2);
                Ok(Reply::Bulk(Some(text)))
            }
            "*" => {
                let n = int(rest)?;
                if n < 0 {
                    return Ok(Reply::Array(None));
                }
                let items = (0..n).map(|_| self.reply()).collect::<Result<_, _>>()?;
                Ok(Reply::Array(Some(items)))
            }
            _ => Err(format!("bad RESP line '{line}'")),
        }
    }
}

impl Drop for RespConn {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

/// Parsed `INFO`: `field → value` (section headers and blank lines dropped).
#[derive(Debug, Clone, Default)]
pub struct Info(pub HashMap<String, String>);

impl Info {
    pub fn parse(text: &str) -> Info {
        Info(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .filter_map(|l| l.split_once(':'))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    pub fn get(&self, field: &str) -> Option<&str> {
        self.0.get(field).map(String::as_str)
    }

    /// An integer field; panics when missing or not an integer.
    pub fn u64(&self, field: &str) -> u64 {
        let v = self
            .get(field)
            .unwrap_or_else(|| panic!("INFO has no field {field}"));
        v.parse()
            .unwrap_or_else(|e| panic!("INFO {field}:{v} is not an integer: {e}"))
    }

    /// A decimal field (e.g. `used_cpu_sys:0.012345`).
    pub fn f64(&self, field: &str) -> f64 {
        let v = self
            .get(field)
            .unwrap_or_else(|| panic!("INFO has no field {field}"));
        v.parse()
            .unwrap_or_else(|e| panic!("INFO {field}:{v} is not a number: {e}"))
    }
}

// ---------------------------------------------------------------------------
// snmpd
// ---------------------------------------------------------------------------

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
    /// 127.0.0.1, with every object in view; off, `extra_config` says who
    /// may read what.
    pub default_communities: bool,
}

impl Default for SnmpdOptions {
    fn default() -> Self {
        SnmpdOptions {
            agentx: AgentxTransport::Unix,
            debug_tokens: Vec::new(),
            extra_config: Vec::new(),
            default_communities: true,
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
pub struct Snmpd {
    dir: TempDir,
    udp_port: u16,
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

    pub fn start_with(options: SnmpdOptions) -> Snmpd {
        let dir = tempfile::Builder::new()
            .prefix("redis-snmp-snmpd.")
            .tempdir()
            .expect("tempdir");
        let udp_port = free_port();
        let agentx_address = match options.agentx {
            AgentxTransport::Unix => format!(
                "unix:{}",
                dir.path().join("agentx").join("agentx.sock").display()
            ),
            AgentxTransport::Tcp => format!("tcp:127.0.0.1:{}", free_port()),
        };
        let mut conf = format!(
            "# generated by tests/common/mod.rs\n\
             agentAddress udp:127.0.0.1:{udp_port}\n\
             master agentx\n\
             agentXSocket {agentx_address}\n\
             agentXPerms 0600 0700\n\
             dontLogTCPWrappersConnects yes\n"
        );
        if options.default_communities {
            conf.push_str("rocommunity public 127.0.0.1\nrwcommunity private 127.0.0.1\n");
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

    /// A client for this snmpd, with the MIBs loaded (names in output).
    pub fn client(&self) -> SnmpClient {
        SnmpClient::new(self.udp_port)
    }

    /// A client for this snmpd, numeric OIDs and no MIBs.
    pub fn numeric(&self) -> SnmpClient {
        SnmpClient::new(self.udp_port).numeric()
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
        let mut cmd = Command::new("snmpd");
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
            let port = self.udp_port;
            let bound = || {
                bound_sockets(pid)
                    .iter()
                    .any(|(p, a)| p == "udp" && a.port() == port)
            };
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
                "snmpd on udp:127.0.0.1:{} did not come up ({status}):\n{}\n{}",
                self.udp_port,
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

// ---------------------------------------------------------------------------
// The agent
// ---------------------------------------------------------------------------

/// The agent binary under test.
pub fn agent_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_redis-snmp"))
}

/// Whether a log contains the agent's "registered" line (not an
/// "unregistered" or "not registered" one).
pub fn log_shows_registered(log: &str) -> bool {
    log.lines().any(|l| {
        let l = l.to_lowercase();
        l.contains("registered")
            && !l.contains("unregistered")
            && !l.contains("not registered")
            && !l.contains("fail")
    })
}

/// The agent (`redis-snmp`) running in the foreground, stdout and stderr to
/// a log file in its temp dir. Dropping it kills it.
pub struct Agent {
    // Dropped first: the process is killed before its directory goes.
    proc: Proc,
    dir: TempDir,
}

impl Agent {
    /// `redis-snmp -n -x <snmpd's AgentX> -h 127.0.0.1 -P <redis port> -r 1
    /// -v EXTRA...`, and waits (10 s at most) for its "registered" line.
    pub fn start(snmpd: &Snmpd, redis: &Redis, extra_args: &[&str]) -> Agent {
        let port = redis.port().to_string();
        let agentx = snmpd.agentx_address();
        let mut args: Vec<&str> = vec![
            "-n",
            "-x",
            &agentx,
            "-h",
            "127.0.0.1",
            "-P",
            &port,
            "-r",
            "1",
            "-v",
        ];
        args.extend_from_slice(extra_args);
        let mut agent = Agent::start_raw(&args, &[]);
        agent.expect_registered(Duration::from_secs(10));
        agent
    }

    /// The binary with exactly these arguments and extra environment
    /// variables (REDIS_SNMP_PASSWORD and RUST_LOG are removed from the
    /// inherited environment unless given here). Does not wait.
    pub fn start_raw(args: &[&str], env: &[(&str, &str)]) -> Agent {
        Agent::start_through(&[], args, env)
    }

    /// Like [`Agent::start_raw`], but started by `launcher` (a program and
    /// its arguments, which must exec the agent: its path and `args`
    /// follow them), e.g. `unshare` for a namespace of its own.
    pub fn start_through(launcher: &[&str], args: &[&str], env: &[(&str, &str)]) -> Agent {
        let dir = tempfile::Builder::new()
            .prefix("redis-snmp-agent.")
            .tempdir()
            .expect("tempdir");
        let log = File::create(dir.path().join("agent.log")).expect("agent.log");
        let mut cmd = match launcher.split_first() {
            Some((program, rest)) => {
                let mut cmd = Command::new(program);
                cmd.args(rest).arg(agent_bin());
                cmd
            }
            None => Command::new(agent_bin()),
        };
        cmd.args(args)
            .env_remove("REDIS_SNMP_PASSWORD")
            .env_remove("RUST_LOG")
            .env("NO_COLOR", "1")
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let proc = Proc::spawn(&mut cmd, "redis-snmp");
        Agent { proc, dir }
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn pid(&self) -> u32 {
        self.proc.pid()
    }

    pub fn log(&self) -> String {
        read_lossy(&self.dir.path().join("agent.log"))
    }

    pub fn is_running(&mut self) -> bool {
        self.proc.is_running()
    }

    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        self.proc.try_wait()
    }

    /// Waits until the log shows registration; false on timeout or exit.
    pub fn wait_registered(&mut self, timeout: Duration) -> bool {
        wait_until(timeout, || {
            log_shows_registered(&self.log()) || !self.proc.is_running()
        });
        log_shows_registered(&self.log())
    }

    /// Like [`Agent::wait_registered`], but panics with the log.
    pub fn expect_registered(&mut self, timeout: Duration) {
        if !self.wait_registered(timeout) {
            let status = self.proc.try_wait();
            panic!(
                "the agent did not log 'registered' within {timeout:?} (exit: {status:?}); log:\n{}",
                self.log()
            );
        }
    }

    /// Waits up to `timeout` for the agent to exit by itself.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        self.proc.wait_timeout(timeout)
    }

    pub fn signal(&mut self, sig: libc::c_int) {
        self.proc.signal(sig);
    }

    /// SIGTERM, wait up to 5 s, then SIGKILL.
    pub fn stop(&mut self) -> ExitStatus {
        self.proc.terminate(Duration::from_secs(5))
    }

    /// `/proc/<pid>/cmdline`, NULs shown as spaces.
    pub fn cmdline(&self) -> String {
        let raw = fs::read(format!("/proc/{}/cmdline", self.pid())).unwrap_or_default();
        String::from_utf8_lossy(&raw).replace('\0', " ")
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("--- redis-snmp log (tail) ---\n{}", tail(&self.log(), 40));
        }
    }
}

// ---------------------------------------------------------------------------
// net-snmp command-line tools
// ---------------------------------------------------------------------------

/// Runs net-snmp's tools against a private snmpd:
/// `CMD -v2c -c COMMUNITY -t 1 -r 0 [-On] -M … -m … ARGS… 127.0.0.1:PORT`.
///
/// The tools read no snmp.conf (`SNMPCONFPATH` points to an empty dir), so a
/// developer's ~/.snmp or /etc/snmp/snmp.conf cannot change their output;
/// the MIB list is therefore given in full: `-m SNMPv2-MIB:REDIS-SERVER-MIB`
/// (the latter only while mibs/REDIS-SERVER-MIB.txt exists) rather than `-m
/// +REDIS-SERVER-MIB`, whose result depends on the default list (Debian's
/// snmp.conf empties it; upstream's loads a dozen modules we do not ship and
/// warns about each). The numeric variant loads no MIB at all (`-m ""`).
#[derive(Debug, Clone)]
pub struct SnmpClient {
    port: u16,
    community: String,
    numeric: bool,
    timeout: Duration,
    opts: Vec<String>,
}

impl SnmpClient {
    pub fn new(port: u16) -> SnmpClient {
        SnmpClient {
            port,
            community: "public".into(),
            numeric: false,
            timeout: Duration::from_secs(1),
            opts: Vec::new(),
        }
    }

    /// Numeric OIDs in the output (`-On`), no MIBs loaded.
    pub fn numeric(mut self) -> SnmpClient {
        self.numeric = true;
        self
    }

    pub fn community(mut self, community: &str) -> SnmpClient {
        self.community = community.into();
        self
    }

    /// `-t` (default 1 s; net-snmp takes fractions of a second).
    pub fn timeout(mut self, timeout: Duration) -> SnmpClient {
        self.timeout = timeout;
        self
    }

    /// An extra option before the agent address (e.g. `-On`, `-Cc`).
    pub fn opt(mut self, opt: &str) -> SnmpClient {
        self.opts.push(opt.into());
        self
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `CMD <common options> ARGS...`; ARGS come after the agent address
    /// (OIDs, set triples).
    pub fn run(&self, cmd: &str, args: &[&str]) -> SnmpOutput {
        let conf = shared_tmp("snmp-client-conf");
        let persist = shared_tmp("snmp-client-persist");
        let mut c = Command::new(cmd);
        c.args(["-v2c", "-c", &self.community]).args([
            "-t",
            &format!("{:.3}", self.timeout.as_secs_f64()),
            "-r",
            "0",
        ]);
        if self.numeric {
            c.args(["-On", "-m", ""]);
        } else {
            let mibs = if redis_mib_file().is_file() {
                "SNMPv2-MIB:REDIS-SERVER-MIB:PUPPET-AGENT-MIB"
            } else {
                "SNMPv2-MIB"
            };
            c.arg("-M").arg(mib_path()).args(["-m", mibs]);
        }
        c.args(&self.opts)
            .arg(format!("127.0.0.1:{}", self.port))
            .args(args)
            .env("SNMPCONFPATH", &conf)
            .env("SNMP_PERSISTENT_DIR", &persist)
            .env_remove("MIBS")
            .env_remove("MIBDIRS")
            .stdin(Stdio::null());
        let out = c.output().unwrap_or_else(|e| {
            panic!("running {cmd} (is net-snmp's snmp package installed?): {e}")
        });
        SnmpOutput::new(format!("{cmd} {}", args.join(" ")), out)
    }

    pub fn get(&self, oids: &[&str]) -> SnmpOutput {
        self.run("snmpget", oids)
    }

    /// snmpget of one OID, expecting exactly one variable back.
    pub fn get_one(&self, oid: &str) -> Var {
        let out = self.get(&[oid]);
        let vars = out.vars();
        assert!(
            out.success() && vars.len() == 1,
            "snmpget {oid}: expected one variable, got:\n{out}"
        );
        vars.into_iter().next().unwrap()
    }

    pub fn walk(&self, oid: &str) -> SnmpOutput {
        self.run("snmpwalk", &[oid])
    }

    pub fn bulkwalk(&self, oid: &str) -> SnmpOutput {
        self.run("snmpbulkwalk", &[oid])
    }

    /// `snmpset OID TYPE VALUE` (TYPE as snmpset takes it: `i`, `u`, `s`…).
    pub fn set(&self, oid: &str, ty: &str, value: &str) -> SnmpOutput {
        self.run("snmpset", &[oid, ty, value])
    }
}

/// What a net-snmp tool printed.
pub struct SnmpOutput {
    pub command: String,
    pub stdout: String,
    pub stderr: String,
    pub status: ExitStatus,
}

impl SnmpOutput {
    fn new(command: String, out: Output) -> SnmpOutput {
        SnmpOutput {
            command,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            status: out.status,
        }
    }

    pub fn success(&self) -> bool {
        self.status.success()
    }

    /// stdout and stderr together (net-snmp prints some errors on either).
    pub fn combined(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }

    pub fn vars(&self) -> Vec<Var> {
        parse_vars(&self.stdout)
    }

    /// The variable with this name (as printed), if any.
    pub fn var(&self, name: &str) -> Option<Var> {
        self.vars().into_iter().find(|v| v.name == name)
    }
}

impl fmt::Display for SnmpOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "$ {} → {}\n{}{}",
            self.command,
            self.status,
            self.stdout,
            if self.stderr.is_empty() {
                String::new()
            } else {
                format!("[stderr]\n{}", self.stderr)
            }
        )
    }
}

impl fmt::Debug for SnmpOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// One `NAME = TYPE: VALUE` line of net-snmp output. `ty` is empty where
/// net-snmp prints no type (`= ""` for an empty string, `= No Such
/// Instance currently exists at this OID`, `= NULL`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Var {
    pub name: String,
    pub ty: String,
    pub value: String,
}

pub const NO_SUCH_INSTANCE: &str = "No Such Instance currently exists at this OID";
pub const NO_SUCH_OBJECT: &str = "No Such Object available on this agent at this OID";
pub const END_OF_MIB: &str = "No more variables left in this MIB View";

/// Type labels net-snmp prints before a value.
const TYPE_LABELS: &[&str] = &[
    "INTEGER",
    "STRING",
    "Hex-STRING",
    "OID",
    "IpAddress",
    "Network Address",
    "Counter32",
    "Gauge32",
    "UInteger32",
    "Timeticks",
    "Opaque",
    "Counter64",
    "BITS",
    "Float",
    "Double",
    "INTEGER64",
    "UNSIGNED64",
];

/// Parses net-snmp's default output (`NAME = TYPE: VALUE`, one per line;
/// lines without ` = ` continue the previous value, as multi-line strings
/// and Hex-STRINGs do).
pub fn parse_vars(text: &str) -> Vec<Var> {
    let mut vars: Vec<Var> = Vec::new();
    for line in text.lines() {
        let head = line.split_once(" = ");
        match head {
            Some((name, rest)) if !name.is_empty() && !name.contains(char::is_whitespace) => {
                let (ty, value) = split_type(rest);
                vars.push(Var {
                    name: name.to_string(),
                    ty,
                    value,
                });
            }
            _ => {
                if let Some(last) = vars.last_mut() {
                    last.value.push('\n');
                    last.value.push_str(line);
                }
            }
        }
    }
    vars
}

fn split_type(rest: &str) -> (String, String) {
    if let Some((ty, value)) = rest.split_once(": ") {
        if TYPE_LABELS.contains(&ty) || ty.starts_with("Wrong Type") {
            return (ty.to_string(), value.to_string());
        }
    }
    if let Some(ty) = rest.strip_suffix(':') {
        if TYPE_LABELS.contains(&ty) {
            return (ty.to_string(), String::new()); // e.g. "STRING:" for ""
        }
    }
    (String::new(), rest.to_string())
}

impl Var {
    /// The value as text: STRING quotes removed, `""` → empty.
    pub fn text(&self) -> String {
        let v = self.value.as_str();
        if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') {
            v[1..v.len() - 1].to_string()
        } else {
            v.to_string()
        }
    }

    /// The numeric value: `42`, `3 clients` (a MIB's UNITS follow the
    /// number) → 3, `up(1)` → 1, `(100) 0:00:01.00` → 100.
    pub fn number(&self) -> Option<u64> {
        let v = self.value.trim();
        if let Some(Ok(n)) = v.split_whitespace().next().map(str::parse) {
            return Some(n);
        }
        let open = v.find('(')?;
        let close = v[open..].find(')')? + open;
        v[open + 1..close].parse().ok()
    }

    /// [`Var::number`], panicking with the variable when there is none.
    pub fn u64(&self) -> u64 {
        self.number()
            .unwrap_or_else(|| panic!("{} has no numeric value: {self}", self.name))
    }

    pub fn is_no_such_instance(&self) -> bool {
        self.ty.is_empty() && self.value == NO_SUCH_INSTANCE
    }

    pub fn is_no_such_object(&self) -> bool {
        self.ty.is_empty() && self.value == NO_SUCH_OBJECT
    }

    /// Whether the value is one of net-snmp's exception texts.
    pub fn is_exception(&self) -> bool {
        self.ty.is_empty()
            && (self.value == NO_SUCH_INSTANCE
                || self.value == NO_SUCH_OBJECT
                || self.value.starts_with(END_OF_MIB))
    }
}

impl fmt::Display for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ty.is_empty() {
            write!(f, "{} = {}", self.name, self.value)
        } else {
            write!(f, "{} = {}: {}", self.name, self.ty, self.value)
        }
    }
}

/// Compares two numeric OIDs (`.1.3.6…`) arc by arc.
pub fn oid_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let arcs = |s: &str| -> Vec<u64> {
        s.trim_start_matches('.')
            .split('.')
            .map(|x| {
                x.parse()
                    .unwrap_or_else(|_| panic!("not a numeric OID: {s}"))
            })
            .collect()
    };
    arcs(a).cmp(&arcs(b))
}

// ---------------------------------------------------------------------------
// Small file helpers
// ---------------------------------------------------------------------------

/// Writes `contents` to `path` with the given mode (e.g. 0o600).
pub fn write_file_mode(path: &Path, contents: &str, mode: u32) {
    fs::write(path, contents).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

// ---------------------------------------------------------------------------
// What a process listens on
// ---------------------------------------------------------------------------

/// The TCP (listening) and UDP sockets a process has bound, as
/// `("tcp"|"udp", local address)`, read from /proc: the process's socket
/// inodes (/proc/PID/fd) matched against /proc/net/{tcp,tcp6,udp,udp6}.
pub fn bound_sockets(pid: u32) -> Vec<(String, std::net::SocketAddr)> {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
    let mut inodes = std::collections::HashSet::new();
    if let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) {
        for fd in fds.flatten() {
            if let Ok(target) = fs::read_link(fd.path()) {
                let t = target.to_string_lossy();
                if let Some(n) = t.strip_prefix("socket:[").and_then(|s| s.strip_suffix(']')) {
                    inodes.insert(n.to_string());
                }
            }
        }
    }
    let parse_addr = |hex: &str| -> Option<SocketAddr> {
        let (ip, port) = hex.split_once(':')?;
        let port = u16::from_str_radix(port, 16).ok()?;
        let word = |s: &str| u32::from_str_radix(s, 16).ok().map(u32::to_ne_bytes);
        let ip = match ip.len() {
            8 => IpAddr::V4(Ipv4Addr::from(word(ip)?)),
            32 => {
                let mut b = [0u8; 16];
                for i in 0..4 {
                    b[i * 4..i * 4 + 4].copy_from_slice(&word(&ip[i * 8..i * 8 + 8])?);
                }
                IpAddr::V6(Ipv6Addr::from(b))
            }
            _ => return None,
        };
        Some(SocketAddr::new(ip, port))
    };
    let mut found = Vec::new();
    for (file, proto, bound_state) in [
        ("tcp", "tcp", "0A"), // LISTEN
        ("tcp6", "tcp", "0A"),
        ("udp", "udp", "07"), // UDP sockets are "CLOSE" (unconnected)
        ("udp6", "udp", "07"),
    ] {
        let text = fs::read_to_string(format!("/proc/net/{file}")).unwrap_or_default();
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() < 10 || cols[3] != bound_state || !inodes.contains(cols[9]) {
                continue;
            }
            if let Some(addr) = parse_addr(cols[1]) {
                found.push((proto.to_string(), addr));
            }
        }
    }
    found
}

// ---------------------------------------------------------------------------
// snmptrapd
// ---------------------------------------------------------------------------

/// A private `snmptrapd` on a loopback UDP port, logging every notification
/// it receives to a file, decoded with our MIBs (and the base modules).
/// snmpd sends to it with [`Snmptrapd::trap2sink_line`].
/// Runs `openssl` with `args` in `dir`; panics with its stderr when it fails.
pub fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

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
        read_lossy(&self.dir.path().join("traps.log"))
    }

    /// The lines of notifications received so far whose text contains `name`.
    pub fn received(&self, name: &str) -> Vec<String> {
        self.log()
            .lines()
            .filter(|l| l.starts_with("TRAP") && l.contains(name))
            .map(String::from)
            .collect()
    }
}

/// Whether something is bound to udp 127.0.0.1:port (from /proc/net/udp).
fn bound_udp(port: u16) -> bool {
    let table = fs::read_to_string("/proc/net/udp").unwrap_or_default();
    let needle = format!("0100007F:{port:04X}");
    table
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some(needle.as_str()))
}

// ---------------------------------------------------------------------------
// puppet apply
// ---------------------------------------------------------------------------

/// A private Puppet: every directory `puppet apply` writes to is under a
/// temporary directory (`--vardir` alone does not move the summary:
/// `--publicdir` must be given too).
pub struct PuppetApply {
    dir: TempDir,
}

impl Default for PuppetApply {
    fn default() -> Self {
        PuppetApply::new()
    }
}

impl PuppetApply {
    pub fn new() -> PuppetApply {
        let dir = tempfile::Builder::new()
            .prefix("redis-snmp-puppet.")
            .tempdir()
            .expect("tempdir");
        for d in ["conf", "code", "target", "manifests"] {
            fs::create_dir_all(dir.path().join(d)).expect("puppet dirs");
        }
        PuppetApply { dir }
    }

    pub fn var(&self) -> PathBuf {
        self.dir.path().join("var")
    }

    /// Where manifests may create files.
    pub fn target(&self) -> PathBuf {
        self.dir.path().join("target")
    }

    /// `$publicdir` and `$statedir` of this Puppet.
    pub fn public_dir(&self) -> PathBuf {
        self.var().join("public")
    }

    pub fn state_dir(&self) -> PathBuf {
        self.var().join("state")
    }

    /// `puppet apply --detailed-exitcodes` of `manifest`; returns the exit
    /// code and when the process ended.
    pub fn apply(&self, name: &str, manifest: &str, extra: &[&str]) -> (i32, Instant) {
        let file = self.dir.path().join("manifests").join(format!("{name}.pp"));
        fs::write(&file, manifest).expect("manifest");
        let d = |s: &str| self.dir.path().join(s).to_string_lossy().into_owned();
        let v = |s: &str| self.var().join(s).to_string_lossy().into_owned();
        let mut args: Vec<String> = vec![
            "apply".into(),
            "--confdir".into(),
            d("conf"),
            "--vardir".into(),
            v(""),
            "--publicdir".into(),
            v("public"),
            "--logdir".into(),
            v("log"),
            "--rundir".into(),
            v("run"),
            "--ssldir".into(),
            v("ssl"),
            "--codedir".into(),
            d("code"),
            "--detailed-exitcodes".into(),
            "--color=false".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        args.push(file.to_string_lossy().into_owned());
        let out = Command::new("puppet")
            .args(&args)
            .output()
            .unwrap_or_else(|e| {
                panic!("running puppet (is Debian's puppet package installed?): {e}")
            });
        let end = Instant::now();
        let code = out.status.code().expect("puppet exited by a signal");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let relevant: Vec<&str> = stdout.lines().filter(|l| !l.contains("Facter")).collect();
        println!(
            "puppet apply {name}: exit {code}\n  {}",
            relevant.join("\n  ")
        );
        (code, end)
    }
}

// ---------------------------------------------------------------------------
// process figures, for benchmarks
// ---------------------------------------------------------------------------

/// Nanoseconds a process's threads spent on a CPU (/proc/PID/task/*/schedstat).
pub fn cpu_ns(pid: u32) -> u64 {
    fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .filter_map(|t| fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
                .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
                .sum()
        })
        .unwrap_or(0)
}

/// A `kB` field of /proc/PID/status (`VmRSS:`, `VmHWM:`), in KiB.
pub fn status_kib(pid: u32, field: &str) -> u64 {
    fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// The run summary and report of a real Puppet run
/// (`tests/fixtures/puppet/CASE`) copied into `dir`, and the agent's
/// `[puppet]` section naming them (the lock files in `dir` too, absent).
pub fn puppet_fixture_section(dir: &Path, case: &str) -> String {
    let fixtures = repo_root().join("tests/fixtures/puppet").join(case);
    for file in ["last_run_summary.yaml", "last_run_report.yaml"] {
        let from = fixtures.join(file);
        fs::copy(&from, dir.join(file)).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    }
    format!(
        "[puppet]\nsummary = \"{}\"\nreport = \"{}\"\ndisabled_lock = \"{}\"\nrun_lock = \"{}\"\n",
        dir.join("last_run_summary.yaml").display(),
        dir.join("last_run_report.yaml").display(),
        dir.join("agent_disabled.lock").display(),
        dir.join("agent_catalog_run.lock").display(),
    )
}
