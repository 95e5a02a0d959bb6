//! Facts about other processes, and the users they run as.

use std::ffi::{CStr, CString};

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

/// The uid and primary gid of the user named `name`, from the password
/// database.
pub fn user_ids(name: &str) -> Option<(u32, u32)> {
    let c_name = CString::new(name).ok()?;
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0u8; 16 << 10];
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call; buf outlives pw.
    let rc = unsafe {
        libc::getpwnam_r(
            c_name.as_ptr(),
            &mut pw,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut found,
        )
    };
    (rc == 0 && !found.is_null()).then_some((pw.pw_uid, pw.pw_gid))
}

/// The uid of the user named `name`, from the password database.
pub fn uid_of(name: &str) -> Option<u32> {
    user_ids(name).map(|(uid, _)| uid)
}

/// The name of the user `uid`, from the password database.
pub fn user_name(uid: u32) -> Option<String> {
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0u8; 16 << 10];
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call; buf outlives pw.
    let rc =
        unsafe { libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr().cast(), buf.len(), &mut found) };
    if rc != 0 || found.is_null() {
        return None;
    }
    // SAFETY: pw_name points into buf, NUL-terminated.
    Some(
        unsafe { CStr::from_ptr(pw.pw_name) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// The name of the group `gid`, from the group database.
pub fn group_name(gid: u32) -> Option<String> {
    let mut gr: libc::group = unsafe { std::mem::zeroed() };
    let mut buf = vec![0u8; 64 << 10];
    let mut found: *mut libc::group = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call; buf outlives gr.
    let rc =
        unsafe { libc::getgrgid_r(gid, &mut gr, buf.as_mut_ptr().cast(), buf.len(), &mut found) };
    if rc != 0 || found.is_null() {
        return None;
    }
    // SAFETY: gr_name points into buf, NUL-terminated.
    Some(
        unsafe { CStr::from_ptr(gr.gr_name) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// The start time of `pid` in clock ticks since boot (field 22 of
/// `/proc/PID/stat`), which tells a PID used again from the one recorded.
pub fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name (field 2) is in parentheses and may hold anything.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_by_name_and_uid() {
        assert_eq!(uid_of("root"), Some(0));
        assert_eq!(user_name(0).as_deref(), Some("root"));
        assert_eq!(group_name(0).as_deref(), Some("root"));
        assert_eq!(uid_of("no such user, surely"), None);
        assert_eq!(uid_of("nul\0inside"), None);
    }
}
