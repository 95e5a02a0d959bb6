//! Waiting and processes.

use std::fs;
use std::path::Path;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

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

pub(crate) fn read_lossy(path: &Path) -> String {
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
