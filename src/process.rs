//! Facts about other processes.

/// Whether a process runs under `pid`, asked of the kernel rather than of
/// `/proc`: under systemd's `ProtectProc=invisible` (or `hidepid`) the
/// agent cannot see root's Puppet in `/proc`, but `kill(pid, 0)` still
/// tells (EPERM: it exists, and is not ours).
pub fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 sends nothing; it only checks the PID.
    if unsafe { libc::kill(pid, 0) } == 0 {
        return true;
    }
    std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}
