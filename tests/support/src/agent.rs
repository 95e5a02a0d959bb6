//! The agent.

use crate::*;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::Duration;
use tempfile::TempDir;

/// The agent binary under test.
///
/// Cargo builds the package's binaries before its integration tests and
/// puts both in one profile directory: the test program runs as
/// `target/<profile>/deps/<test>-<hash>`, the agent is
/// `target/<profile>/redis-snmp`. (`CARGO_BIN_EXE_redis-snmp` would say
/// the same, but cargo gives it only to the test programs' own compilation,
/// not to a library they use.)
pub fn agent_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test program's path");
        let profile_dir = exe
            .parent()
            .filter(|deps| deps.ends_with("deps"))
            .and_then(Path::parent)
            .unwrap_or_else(|| panic!("{} is not in a cargo deps directory", exe.display()));
        let bin = profile_dir.join("redis-snmp");
        assert!(
            bin.is_file(),
            "{} is missing: cargo builds it before the integration tests",
            bin.display()
        );
        bin
    })
    .clone()
}

/// `-x <snmpd's AgentX> -h 127.0.0.1 -P <redis port> -r <refresh>`: the
/// agent pointed at one Redis through one snmpd, the part of its command
/// line the tests and benchmarks share (each adds `-n`, verbosity and the
/// rest of its own).
pub fn agent_args(snmpd: &Snmpd, redis: &Redis, refresh_secs: u32) -> Vec<String> {
    [
        "-x".to_string(),
        snmpd.agentx_address(),
        "-h".to_string(),
        "127.0.0.1".to_string(),
        "-P".to_string(),
        redis.port().to_string(),
        "-r".to_string(),
        refresh_secs.to_string(),
    ]
    .into()
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
    /// `redis-snmp -n` [`agent_args`]` -v EXTRA...` (a 1 s refresh), and
    /// waits (10 s at most) for its "registered" line.
    pub fn start(snmpd: &Snmpd, redis: &Redis, extra_args: &[&str]) -> Agent {
        let shared = agent_args(snmpd, redis, 1);
        let mut args: Vec<&str> = vec!["-n"];
        args.extend(shared.iter().map(String::as_str));
        args.push("-v");
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

    /// SIGHUP (`systemctl reload`), then waits until the log has one more
    /// line containing `says` than before; returns that line. Panics, with
    /// the log, when none comes within 10 s or the agent ended.
    pub fn reload(&mut self, says: &str) -> String {
        let lines = |agent: &Agent| -> Vec<String> {
            agent
                .log()
                .lines()
                .filter(|l| l.contains(says))
                .map(str::to_string)
                .collect()
        };
        let before = lines(self).len();
        self.signal(libc::SIGHUP);
        let mut now = Vec::new();
        let said = wait_until(Duration::from_secs(10), || {
            now = lines(self);
            now.len() > before
        });
        assert!(said, "no {says:?} in the log after SIGHUP:\n{}", self.log());
        assert!(self.is_running(), "SIGHUP ended the agent:\n{}", self.log());
        now.pop().unwrap_or_default()
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
