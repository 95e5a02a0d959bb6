//! Detaching from the terminal, as the old tool did without `-n`. systemd
//! runs us with `-n`; this is for init scripts and hand starts.

use std::io::Write;
use std::path::Path;

/// Fork; the parent writes the child's PID to `pid_file` and exits, the
/// child starts a new session with stdio on /dev/null. Must be called
/// before any thread (the tokio runtime) exists.
pub fn detach(pid_file: &Path) -> Result<(), String> {
    // Everything after runs from / with umask 022 (the configuration made
    // its paths absolute), set before the fork so that no one who reads
    // the PID file sees the child still in the old directory.
    // SAFETY: umask on our own process.
    unsafe { libc::umask(0o022) };
    std::env::set_current_dir("/").map_err(|e| format!("cannot change to /: {e}"))?;
    // SAFETY: called while the process is single-threaded, before the
    // runtime starts, so fork() duplicates no other thread's state.
    match unsafe { libc::fork() } {
        -1 => Err(format!("cannot fork: {}", std::io::Error::last_os_error())),
        0 => {
            // SAFETY: a plain syscall on our own process.
            unsafe { libc::setsid() };
            redirect_stdio_to_null();
            Ok(())
        }
        child => {
            let written = write_pid_file(pid_file, child);
            if let Err(e) = written {
                // SAFETY: signalling the child we just created.
                unsafe { libc::kill(child, libc::SIGTERM) };
                eprintln!(
                    "redis-snmp: cannot write PID file {}: {e}",
                    pid_file.display()
                );
                std::process::exit(1);
            }
            std::process::exit(0);
        }
    }
}

/// Writes `pid` to `path`, creating the file anew (`O_EXCL`: never writing
/// through a link or into a file someone else planted). A file left by a
/// process that no longer runs is replaced; one whose process runs means
/// the agent runs already.
fn write_pid_file(path: &Path, pid: libc::pid_t) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let create = || {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .open(path)
    };
    let mut file = match create() {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let old = std::fs::read_to_string(path).unwrap_or_default();
            let running = old
                .trim()
                .parse::<u32>()
                .is_ok_and(crate::process::process_exists);
            if running {
                return Err(std::io::Error::other(format!(
                    "it names process {}, which is running: is redis-snmp running already?",
                    old.trim()
                )));
            }
            std::fs::remove_file(path)?;
            create()?
        }
        other => other?,
    };
    writeln!(file, "{pid}")
}

/// Ignores SIGHUP until the runtime's handler replaces this (a reload,
/// see [`crate::reload`]): by default it ends the process, and a
/// `systemctl reload` that comes while the agent still starts would stop
/// the service for good (systemd counts SIGHUP as a clean exit, so
/// `Restart=on-failure` does not restart it).
pub fn ignore_hangup_until_ready() {
    // SAFETY: setting a signal's disposition to SIG_IGN on our own process,
    // before any thread exists.
    unsafe { libc::signal(libc::SIGHUP, libc::SIG_IGN) };
}

/// Makes the process non-dumpable: no core file, and no ptrace or
/// `/proc/PID/mem`, `environ` reads by other processes of the same user.
pub fn forbid_dumps() {
    // SAFETY: prctl with constant arguments on our own process.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
}

fn redirect_stdio_to_null() {
    use std::os::fd::AsRawFd;
    if let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        for fd in 0..=2 {
            // SAFETY: dup2 onto the standard descriptors of our own process.
            unsafe { libc::dup2(null.as_raw_fd(), fd) };
        }
    }
}
