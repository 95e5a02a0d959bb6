//! The agent's lock files in `$statedir` (Debian 12: `/var/cache/puppet/state/`).
//!
//! - `agent_disabled.lock`: written by `puppet agent --disable "reason"`,
//!   removed by `--enable`; JSON `{"disabled_message":"reason"}`, mode 0644.
//!   While it exists, agent runs are skipped and write nothing.
//! - `agent_catalog_run.lock`: the PID of the run in progress as plain text,
//!   present only while a run is in progress. A lock left behind by a
//!   killed agent is stale: Puppet itself treats a lock as stale when the
//!   PID is not running or is not a Puppet process (its `Pidlock` checks the
//!   process name for `ruby` with `puppet` in the arguments, or `puppet`;
//!   from Puppet's source, not tested here), and so does [`check_process`].

use crate::process::process_exists;
use serde::Deserialize;
use std::path::Path;

/// Largest lock file read, in bytes; a longer one is read up to this size.
pub const MAX_LOCK_BYTES: usize = 64 << 10;

/// The reason in an `agent_disabled.lock`. The file's presence is what
/// disables the agent: unreadable, empty or garbage content gives an empty
/// reason, never an error. Control characters are replaced by spaces.
pub fn parse_disabled_lock(bytes: &[u8]) -> String {
    #[derive(Deserialize)]
    struct Lock {
        disabled_message: Option<String>,
    }
    let bytes = &bytes[..bytes.len().min(MAX_LOCK_BYTES)];
    let mut message = serde_json::from_slice::<Lock>(bytes)
        .ok()
        .and_then(|l| l.disabled_message)
        .unwrap_or_default()
        .replace(|c: char| c.is_control(), " ");
    super::yaml::truncate(&mut message, super::yaml::MAX_TEXT_BYTES);
    message
}

/// The PID in an `agent_catalog_run.lock`, if it holds one (decimal,
/// surrounding whitespace allowed, 1..=2^31-1).
pub fn parse_run_lock(bytes: &[u8]) -> Option<u32> {
    let text = std::str::from_utf8(bytes.get(..bytes.len().min(64))?)
        .ok()?
        .trim();
    let pid: u32 = text.parse().ok()?;
    (pid > 0 && pid <= i32::MAX as u32).then_some(pid)
}

/// What is running under a PID, as far as `/proc` tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessCheck {
    /// A Puppet process.
    Puppet,
    /// Some other process: the PID was reused, the lock is stale.
    Other,
    /// Nothing runs under the PID: the lock is stale.
    Gone,
    /// The process exists but `/proc` does not say what it is (e.g.
    /// `hidepid`); taken as a run in progress.
    Unknown,
}

/// Look up `pid` in `/proc`.
pub fn check_process(pid: u32) -> ProcessCheck {
    check_process_in(Path::new("/proc"), pid, process_exists)
}

fn check_process_in(proc_root: &Path, pid: u32, exists: impl Fn(u32) -> bool) -> ProcessCheck {
    let dir = proc_root.join(pid.to_string());
    if !dir.exists() {
        // Invisible is not gone: a hidden process may be Puppet's run.
        return if exists(pid) {
            ProcessCheck::Unknown
        } else {
            ProcessCheck::Gone
        };
    }
    let comm = match std::fs::read(dir.join("comm")) {
        Ok(c) => String::from_utf8_lossy(&c).trim().to_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return ProcessCheck::Gone,
        Err(_) => return ProcessCheck::Unknown,
    };
    if comm.starts_with("puppet") {
        return ProcessCheck::Puppet;
    }
    if comm.contains("ruby") {
        return match std::fs::read(dir.join("cmdline")) {
            Ok(args) if String::from_utf8_lossy(&args).contains("puppet") => ProcessCheck::Puppet,
            Ok(_) => ProcessCheck::Other,
            Err(_) => ProcessCheck::Unknown,
        };
    }
    ProcessCheck::Other
}

/// An `agent_catalog_run.lock` that exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLock {
    /// The PID it holds; `None` if its content is not a PID (Puppet treats
    /// such a lock as stale).
    pub pid: Option<u32>,
    /// What runs under `pid` (`Gone` when there is no PID).
    pub process: ProcessCheck,
}

impl RunLock {
    /// Read from a lock file's content, checking the PID in `/proc`.
    pub fn from_content(bytes: &[u8]) -> RunLock {
        let pid = parse_run_lock(bytes);
        RunLock {
            pid,
            process: pid.map_or(ProcessCheck::Gone, check_process),
        }
    }

    /// Whether a run is in progress: the PID runs, and is Puppet (or
    /// cannot be told apart from it).
    pub fn in_progress(&self) -> bool {
        matches!(self.process, ProcessCheck::Puppet | ProcessCheck::Unknown)
    }

    /// A lock left behind: no PID, or its process is gone or not Puppet.
    pub fn is_stale(&self) -> bool {
        !self.in_progress()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    fn fixture(case: &str, file: &str) -> Vec<u8> {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/puppet")
            .join(case)
            .join(file);
        std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    #[test]
    fn disabled_lock_fixture() {
        // Written by `puppet agent --disable "maintenance window CHG-42"`.
        let bytes = fixture("agent_a8_disabled", "agent_disabled.lock");
        assert_eq!(parse_disabled_lock(&bytes), "maintenance window CHG-42");
    }

    #[test]
    fn disabled_lock_garbage_gives_empty_reason() {
        assert_eq!(parse_disabled_lock(b""), "");
        assert_eq!(parse_disabled_lock(b"\xff\xfe garbage"), "");
        assert_eq!(parse_disabled_lock(b"{\"disabled_message\":"), "");
        assert_eq!(parse_disabled_lock(b"{\"disabled_message\":42}"), "");
        assert_eq!(parse_disabled_lock(b"{\"disabled_message\":null}"), "");
        assert_eq!(parse_disabled_lock(b"[1,2]"), "");
        assert_eq!(parse_disabled_lock(b"{\"other\":\"x\"}"), "");
        assert_eq!(
            parse_disabled_lock(b"{\"disabled_message\":\"a\\nb \\u00e9\\/\\\"q\\\"\",\"x\":1}"),
            "a b \u{e9}/\"q\""
        );
        let long = format!("{{\"disabled_message\":\"{}\"}}", "x".repeat(5000));
        assert!(parse_disabled_lock(long.as_bytes()).len() <= crate::puppet::yaml::MAX_TEXT_BYTES);
    }

    #[test]
    fn run_lock_pids() {
        assert_eq!(parse_run_lock(b"4872"), Some(4872));
        assert_eq!(parse_run_lock(b" 4872\n"), Some(4872));
        assert_eq!(parse_run_lock(b""), None);
        assert_eq!(parse_run_lock(b"0"), None);
        assert_eq!(parse_run_lock(b"-1"), None);
        assert_eq!(parse_run_lock(b"4872x"), None);
        assert_eq!(parse_run_lock(b"99999999999"), None);
        assert_eq!(parse_run_lock(b"2147483648"), None);
        assert_eq!(parse_run_lock(&[b'1'; 100]), None);
        assert_eq!(parse_run_lock(b"\xff"), None);
    }

    #[test]
    fn run_lock_process_checks() {
        // A process whose executable is named `puppet` counts as a run.
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("puppet");
        std::fs::copy("/bin/sleep", &fake).unwrap();
        let mut child = Command::new(&fake)
            .arg("30")
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let lock = RunLock::from_content(child.id().to_string().as_bytes());
        assert_eq!(lock.pid, Some(child.id()));
        assert_eq!(lock.process, ProcessCheck::Puppet);
        assert!(lock.in_progress());
        child.kill().unwrap();
        child.wait().unwrap();
        // Reaped: the PID is gone, the lock is stale.
        let lock = RunLock::from_content(child.id().to_string().as_bytes());
        assert_eq!(lock.process, ProcessCheck::Gone);
        assert!(lock.is_stale());

        // This test process is alive but is not Puppet: a reused PID.
        let me = std::process::id();
        let lock = RunLock::from_content(me.to_string().as_bytes());
        assert_eq!(lock.process, ProcessCheck::Other);
        assert!(!lock.in_progress());

        // Garbage content: stale, as Puppet sees it.
        let lock = RunLock::from_content(b"not a pid");
        assert_eq!(
            lock,
            RunLock {
                pid: None,
                process: ProcessCheck::Gone
            }
        );
        assert!(lock.is_stale());
    }

    #[test]
    fn ruby_running_puppet_counts() {
        // A fake /proc: `ruby` with `puppet` in its arguments is a run,
        // plain `ruby` is not; a process without a readable comm is unknown.
        let root = tempfile::tempdir().unwrap();
        let mk = |pid: u32, comm: Option<&str>, cmdline: &[u8]| {
            let d = root.path().join(pid.to_string());
            std::fs::create_dir(&d).unwrap();
            if let Some(c) = comm {
                std::fs::write(d.join("comm"), format!("{c}\n")).unwrap();
            } else {
                std::fs::create_dir(d.join("comm")).unwrap(); // reading it fails
            }
            std::fs::write(d.join("cmdline"), cmdline).unwrap();
        };
        mk(10, Some("ruby"), b"/usr/bin/ruby\0/usr/bin/puppet\0agent\0");
        mk(11, Some("ruby"), b"/usr/bin/ruby\0/srv/app.rb\0");
        mk(12, None, b"");
        mk(
            13,
            Some("puppet"),
            b"/usr/bin/puppet\0agent\0--no-daemonize\0",
        );
        let none = |_| false;
        assert_eq!(
            check_process_in(root.path(), 10, none),
            ProcessCheck::Puppet
        );
        assert_eq!(check_process_in(root.path(), 11, none), ProcessCheck::Other);
        assert_eq!(
            check_process_in(root.path(), 12, none),
            ProcessCheck::Unknown
        );
        assert_eq!(
            check_process_in(root.path(), 13, none),
            ProcessCheck::Puppet
        );
        assert_eq!(check_process_in(root.path(), 14, none), ProcessCheck::Gone);
    }

    #[test]
    fn a_process_hidden_from_proc_is_not_taken_for_gone() {
        // An empty /proc, as the agent sees it under ProtectProc=invisible,
        // with real PIDs: this test's own (alive), init (alive, and not
        // ours: kill(1, 0) says EPERM to a user) and a reaped child.
        let hidden = tempfile::tempdir().unwrap();
        let me = std::process::id();
        assert!(process_exists(me) && process_exists(1));
        assert_eq!(
            check_process_in(hidden.path(), me, process_exists),
            ProcessCheck::Unknown
        );
        assert_eq!(
            check_process_in(hidden.path(), 1, process_exists),
            ProcessCheck::Unknown
        );
        let mut child = Command::new("true").spawn().unwrap();
        child.wait().unwrap();
        assert!(!process_exists(child.id()));
        assert_eq!(
            check_process_in(hidden.path(), child.id(), process_exists),
            ProcessCheck::Gone
        );
        assert!(!process_exists(0) && !process_exists(u32::MAX));
    }
}
