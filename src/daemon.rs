//! Detaching from the terminal, as the old tool did without `-n`. systemd
//! runs us with `-n`; this is for init scripts and hand starts.

use std::io::Write;
use std::path::Path;

/// Fork; the parent writes the child's PID to `pid_file` and exits, the
/// child starts a new session with stdio on /dev/null. Must be called
/// before any thread (the tokio runtime) exists.
pub fn detach(pid_file: &Path) -> Result<(), String> {
    // SAFETY: called while the process is single-threaded, before the
    // runtime starts, so fork() duplicates no other thread's state.
    match unsafe { libc::fork() } {
        -1 => Err(format!("cannot fork: {}", std::io::Error::last_os_error())),
        0 => {
            // SAFETY: plain syscalls on our own process.
            unsafe { libc::setsid() };
            redirect_stdio_to_null();
            Ok(())
        }
        child => {
            let written = std::fs::File::create(pid_file).and_then(|mut f| writeln!(f, "{child}"));
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
