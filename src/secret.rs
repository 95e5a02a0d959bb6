//! Passwords: where they come from, and keeping them out of `ps`, logs,
//! SNMP values and error texts.

use std::fmt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// A password. `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: String) -> Self {
        Secret(value)
    }

    /// The password itself, for the one place that needs it: AUTH.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("cannot read password file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("password file {0} is empty")]
    Empty(String),
}

/// Reads a password from the first line of `path`. Returns the password and,
/// when the file is readable by users other than its owner and group, a
/// warning to log.
pub fn read_password_file(path: &Path) -> Result<(Secret, Option<String>), SecretError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| SecretError::Read {
        path: shown.clone(),
        source,
    })?;
    let password = text.lines().next().unwrap_or("").to_string();
    if password.is_empty() {
        return Err(SecretError::Empty(shown));
    }
    let warning = world_readable_warning(path);
    Ok((Secret(password), warning))
}

/// A warning when a file holding a secret can be read by anyone.
pub fn world_readable_warning(path: &Path) -> Option<String> {
    let mode = std::fs::metadata(path).ok()?.permissions().mode();
    (mode & 0o004 != 0).then(|| {
        format!(
            "{} holds a password and is readable by every user (mode {:o}); chmod o-r it",
            path.display(),
            mode & 0o777
        )
    })
}

/// `text` with every occurrence of the password replaced by `***`: the last
/// line of defence for error texts that echo what they were given.
pub fn redact(text: &str, secret: Option<&Secret>) -> String {
    match secret {
        Some(s) if !s.0.is_empty() && text.contains(&s.0) => text.replace(&s.0, "***"),
        _ => text.to_string(),
    }
}

/// Overwrites the password given with `-p`/`--password` in the process's
/// own argument strings, so `ps` and `/proc/PID/cmdline` stop showing it.
/// (It is visible until this runs, a few microseconds after start: a
/// password file is the safe way.) Returns whether anything was wiped.
pub fn wipe_from_argv(secret: &Secret) -> bool {
    argv::wipe(secret.expose())
}

/// Overwrites the value of the environment variable `name` in the
/// environment the process started with. Removing the variable
/// (`std::env::remove_var`) keeps it from programs we would run, but not
/// from `/proc/PID/environ`, which shows those original strings, nor from
/// a forked daemon, which inherits them. Call it before removing the
/// variable, while single-threaded. Returns whether anything was wiped.
pub fn wipe_from_environ(name: &str) -> bool {
    argv::wipe_env(name)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod argv {
    //! glibc passes `argc, argv, envp` to every `.init_array` function, as
    //! it does for Rust's own runtime; we keep the pointers to edit the
    //! strings in place, which is where `/proc/PID/cmdline` and
    //! `/proc/PID/environ` read them.
    use std::ffi::{c_char, c_int, CStr};
    use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

    static ARGC: AtomicUsize = AtomicUsize::new(0);
    static ARGV: AtomicPtr<*mut c_char> = AtomicPtr::new(std::ptr::null_mut());
    static ENVP: AtomicPtr<*mut c_char> = AtomicPtr::new(std::ptr::null_mut());

    #[used]
    #[link_section = ".init_array"]
    static CAPTURE: extern "C" fn(c_int, *mut *mut c_char, *mut *mut c_char) = capture;

    extern "C" fn capture(argc: c_int, argv: *mut *mut c_char, envp: *mut *mut c_char) {
        ARGC.store(usize::try_from(argc).unwrap_or(0), Ordering::Relaxed);
        ARGV.store(argv, Ordering::Relaxed);
        ENVP.store(envp, Ordering::Relaxed);
    }

    pub fn wipe_env(name: &str) -> bool {
        let envp = ENVP.load(Ordering::Relaxed);
        if envp.is_null() || name.is_empty() {
            return false;
        }
        let prefix = format!("{name}=");
        let mut wiped = false;
        for i in 0.. {
            // SAFETY: envp is the NULL-terminated array glibc passed at
            // start-up; setenv never frees it and unsetenv only moves its
            // entries, so every entry up to the NULL is a live string.
            let entry = unsafe { *envp.add(i) };
            if entry.is_null() {
                break;
            }
            let bytes = unsafe { CStr::from_ptr(entry) }.to_bytes();
            let len = bytes.len();
            if bytes.starts_with(prefix.as_bytes()) {
                let start = prefix.len();
                // SAFETY: start..len lies within this entry's bytes.
                unsafe { std::ptr::write_bytes(entry.add(start) as *mut u8, b'*', len - start) };
                wiped = true;
            }
        }
        wiped
    }

    pub fn wipe(password: &str) -> bool {
        let argv = ARGV.load(Ordering::Relaxed);
        let argc = ARGC.load(Ordering::Relaxed);
        if argv.is_null() || password.is_empty() {
            return false;
        }
        let mut wiped = false;
        let mut previous_was_flag = false;
        for i in 0..argc {
            // SAFETY: glibc guarantees argv[0..argc] are valid NUL-terminated
            // strings that live for the whole process; we only overwrite
            // bytes within each string's existing length.
            let arg = unsafe { *argv.add(i) };
            if arg.is_null() {
                break;
            }
            let bytes = unsafe { CStr::from_ptr(arg) }.to_bytes();
            let len = bytes.len();
            let text = String::from_utf8_lossy(bytes);
            let secret_at = if previous_was_flag && text == password {
                Some(0)
            } else if let Some(rest) = text.strip_prefix("--password=") {
                (rest == password).then_some("--password=".len())
            } else if let Some(rest) = text.strip_prefix("-p") {
                (rest == password && !rest.is_empty()).then_some(2)
            } else {
                None
            };
            previous_was_flag = text == "-p" || text == "--password";
            if let Some(start) = secret_at {
                // SAFETY: start..len lies within this argument's bytes.
                unsafe { std::ptr::write_bytes(arg.add(start) as *mut u8, b'*', len - start) };
                wiped = true;
            }
        }
        wiped
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod argv {
    pub fn wipe(_password: &str) -> bool {
        false
    }

    pub fn wipe_env(_name: &str) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_never_prints() {
        let s = Secret::new("hunter2".into());
        assert_eq!(format!("{s} {s:?}"), "*** Secret(***)");
    }

    #[test]
    fn redact_hides_the_password() {
        let s = Secret::new("hunter2".into());
        assert_eq!(redact("AUTH hunter2 failed", Some(&s)), "AUTH *** failed");
        assert_eq!(redact("nothing here", Some(&s)), "nothing here");
        assert_eq!(redact("x", None), "x");
    }

    /// Runs itself again as a child that starts with the variable set
    /// (one set at run time is not among the start-up strings).
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn wipe_from_environ_blanks_proc_self_environ() {
        const NAME: &str = "REDIS_SNMP_WIPE_TEST";
        const THIS: &str = "secret::tests::wipe_from_environ_blanks_proc_self_environ";
        if std::env::var_os(NAME).is_some() {
            assert!(wipe_from_environ(NAME));
            let environ = std::fs::read("/proc/self/environ").unwrap();
            let environ = String::from_utf8_lossy(&environ);
            assert!(!environ.contains("hunter2-env"), "{environ}");
            assert!(environ.contains(&format!("{NAME}=***********\0")));
            assert!(!wipe_from_environ("REDIS_SNMP_NOT_SET"));
            return;
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", THIS, "--nocapture", "--test-threads", "1"])
            .env(NAME, "hunter2-env")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stdout}{stderr}");
        assert!(
            stdout.contains("1 passed"),
            "the child ran no test: {stdout}"
        );
    }

    #[test]
    fn password_file_first_line_and_mode_warning() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pw");
        std::fs::write(&path, "s3cret\nignored\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let (secret, warning) = read_password_file(&path).unwrap();
        assert_eq!(secret.expose(), "s3cret");
        assert!(warning.unwrap().contains("readable by every user"));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert!(read_password_file(&path).unwrap().1.is_none());
        std::fs::write(&path, "\n").unwrap();
        assert!(read_password_file(&path).is_err());
    }
}
