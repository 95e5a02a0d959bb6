//! Passwords: where they come from, and keeping them out of `ps`, logs,
//! SNMP values and error texts.

use std::fmt;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// The most a password file, a TLS file or an alias secret may hold: far
/// more than any of them needs, and a bound on what a misnamed file costs.
pub const MAX_SECRET_FILE_BYTES: u64 = 1 << 20;

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

/// Reads a configured file (a password file, a TLS file), at most `max`
/// bytes, without ever waiting on it (issue 24, review L3): opened with
/// `O_NONBLOCK`, so a FIFO put in its place neither blocks the open nor a
/// read (SIGHUP and SIGTERM stay answered), and read only when it is a
/// regular file (a FIFO, a device or a directory is refused, in words
/// that say which). A symbolic link is followed: the administrator may
/// link to a certificate kept elsewhere.
pub fn read_regular_file(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        let what = if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_dir() {
            "a directory"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "not a file"
        };
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("it is {what}, not a regular file"),
        ));
    }
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("it is larger than {max} bytes"),
        ));
    }
    Ok(bytes)
}

/// Reads a password from the first line of `path`. Returns the password and,
/// when the file is readable by users other than its owner and group, a
/// warning to log.
pub fn read_password_file(path: &Path) -> Result<(Secret, Option<String>), SecretError> {
    let shown = path.display().to_string();
    let bytes =
        read_regular_file(path, MAX_SECRET_FILE_BYTES).map_err(|source| SecretError::Read {
            path: shown.clone(),
            source,
        })?;
    let text = String::from_utf8(bytes).map_err(|_| SecretError::Read {
        path: shown.clone(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, "it is not UTF-8"),
    })?;
    let password = text.lines().next().unwrap_or("").to_string();
    if password.is_empty() {
        return Err(SecretError::Empty(shown));
    }
    let warning = world_readable_warning(path, "a password");
    Ok((Secret(password), warning))
}

/// A warning when a file holding a secret (`holds`: "a password", "a
/// private key") can be read by anyone.
pub fn world_readable_warning(path: &Path, holds: &str) -> Option<String> {
    let mode = std::fs::metadata(path).ok()?.permissions().mode();
    (mode & 0o004 != 0).then(|| {
        format!(
            "{} holds {holds} and is readable by every user (mode {:o}); chmod o-r it",
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

/// How the command line spells its options: which take a value, and which
/// of those carry a secret. Built from the clap definition
/// ([`crate::cli::arg_shapes`]), so argv is read the way clap reads it.
#[derive(Debug, Clone, Default)]
pub struct ArgShapes {
    /// Short options that take a value (`-h HOST`, `-hHOST`, `-h=HOST`).
    pub short_with_value: Vec<char>,
    /// Long options that take a value (`--host HOST`, `--host=HOST`).
    pub long_with_value: Vec<String>,
    /// The options among those whose value is a secret.
    pub secret_short: Vec<char>,
    pub secret_long: Vec<String>,
}

/// Where secrets stand in `args` (argv without the program name): for
/// each, the argument's index and the byte it starts at; the secret runs to
/// the end of that argument. Every spelling clap accepts is found
/// (`-p PW`, `-pPW`, `-p=PW`, `-npPW`, `-np PW`, `--password PW`,
/// `--password=PW`), every time it is given (the last one wins, but the
/// earlier ones are in argv too), and nothing after `--`.
pub fn secret_spans(args: &[&[u8]], shapes: &ArgShapes) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    // The next argument is a value: of a secret option, or of another.
    let mut value_next: Option<bool> = None;
    for (i, arg) in args.iter().enumerate() {
        if let Some(secret) = value_next.take() {
            if secret {
                spans.push((i, 0));
            }
            continue;
        }
        if *arg == b"--" {
            break;
        }
        if let Some(long) = arg.strip_prefix(b"--") {
            let (name, has_inline) = match long.iter().position(|&b| b == b'=') {
                Some(eq) => (&long[..eq], true),
                None => (long, false),
            };
            let name = String::from_utf8_lossy(name);
            let secret = shapes.secret_long.iter().any(|l| *l == name);
            let takes_value = secret || shapes.long_with_value.iter().any(|l| *l == name);
            if takes_value && has_inline {
                if secret {
                    spans.push((i, 2 + name.len() + 1));
                }
            } else if takes_value {
                value_next = Some(secret);
            }
            continue;
        }
        let Some(cluster) = arg.strip_prefix(b"-").filter(|c| !c.is_empty()) else {
            continue;
        };
        // A cluster of short flags, up to the first that takes a value:
        // the rest of the argument, or the next one, is that value.
        for (at, &byte) in cluster.iter().enumerate() {
            let c = char::from(byte);
            let secret = shapes.secret_short.contains(&c);
            if !secret && !shapes.short_with_value.contains(&c) {
                continue;
            }
            let value_at = 1 + at + 1;
            if value_at < arg.len() {
                if secret {
                    spans.push((i, value_at));
                }
            } else {
                value_next = Some(secret);
            }
            break;
        }
    }
    spans
}

/// Overwrites every secret option's value in the process's own argument
/// strings, so `ps` and `/proc/PID/cmdline` stop showing it. (It is
/// visible until this runs, a few microseconds after start: a password
/// file is the safe way.) Returns whether anything was wiped.
pub fn wipe_from_argv(shapes: &ArgShapes) -> bool {
    argv::wipe(shapes)
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

    pub fn wipe(shapes: &super::ArgShapes) -> bool {
        let argv = ARGV.load(Ordering::Relaxed);
        let argc = ARGC.load(Ordering::Relaxed);
        if argv.is_null() || argc < 2 {
            return false;
        }
        // SAFETY: glibc guarantees argv[0..argc] are valid NUL-terminated
        // strings that live for the whole process.
        let args: Vec<*mut c_char> = (1..argc).map(|i| unsafe { *argv.add(i) }).collect();
        if args.iter().any(|a| a.is_null()) {
            return false;
        }
        let texts: Vec<&[u8]> = args
            .iter()
            .map(|&a| unsafe { CStr::from_ptr(a) }.to_bytes())
            .collect();
        let spans = super::secret_spans(&texts, shapes);
        for &(i, start) in &spans {
            let len = texts[i].len();
            // SAFETY: start..len lies within this argument's bytes; we only
            // overwrite bytes within each string's existing length.
            unsafe { std::ptr::write_bytes(args[i].add(start) as *mut u8, b'*', len - start) };
        }
        !spans.is_empty()
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod argv {
    pub fn wipe(_shapes: &super::ArgShapes) -> bool {
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

    fn shapes() -> ArgShapes {
        ArgShapes {
            short_with_value: vec!['h', 'P', 'p', 'o', 'r', 'x', 'c'],
            long_with_value: ["host", "port", "password", "password-file", "config"]
                .map(String::from)
                .to_vec(),
            secret_short: vec!['p'],
            secret_long: vec!["password".into()],
        }
    }

    /// The arguments with each secret span overwritten, as `ps` shows them.
    fn wiped(args: &[&str]) -> Vec<String> {
        let bytes: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let mut out: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        for (i, start) in secret_spans(&bytes, &shapes()) {
            let len = out[i].len();
            out[i].replace_range(start.., &"*".repeat(len - start));
        }
        out
    }

    #[test]
    fn every_spelling_clap_accepts_is_wiped() {
        assert_eq!(wiped(&["-p", "pw1"]), ["-p", "***"]);
        assert_eq!(wiped(&["-ppw1"]), ["-p***"]);
        assert_eq!(wiped(&["-p=pw1"]), ["-p****"]);
        assert_eq!(wiped(&["-npPW"]), ["-np**"]);
        assert_eq!(wiped(&["-np", "PW"]), ["-np", "**"]);
        assert_eq!(wiped(&["-vp", "PW"]), ["-vp", "**"]);
        assert_eq!(wiped(&["--password", "pw1"]), ["--password", "***"]);
        assert_eq!(wiped(&["--password=pw1"]), ["--password=***"]);
        // An earlier -p is in argv too, though the last one wins.
        assert_eq!(
            wiped(&["-p", "old", "-n", "-p", "new"]),
            ["-p", "***", "-n", "-p", "***"]
        );
        // A value that looks like an option is still the value.
        assert_eq!(wiped(&["-p", "-n"]), ["-p", "**"]);
    }

    #[test]
    fn values_of_other_options_and_operands_are_left_alone() {
        // "-p" as the host's value is a host, not the password option.
        assert_eq!(wiped(&["-h", "-p", "x"]), ["-h", "-p", "x"]);
        assert_eq!(wiped(&["-hdb1", "-P", "6380"]), ["-hdb1", "-P", "6380"]);
        assert_eq!(wiped(&["--host=-p", "x"]), ["--host=-p", "x"]);
        assert_eq!(wiped(&["--", "-p", "x"]), ["--", "-p", "x"]);
        assert_eq!(wiped(&["-", "-n"]), ["-", "-n"]);
        assert_eq!(
            wiped(&["--password-file", "/pw"]),
            ["--password-file", "/pw"]
        );
        assert_eq!(wiped(&["-p"]), ["-p"]);
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

    /// Review L3: a FIFO named as a password file made the load wait for
    /// a writer, and with it SIGHUP and SIGTERM.
    #[test]
    fn a_fifo_or_a_directory_is_refused_at_once_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pw");
        let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = fifo.clone();
        std::thread::spawn(move || {
            let _ = tx.send(read_password_file(&reader).map(|_| ()));
        });
        let outcome = rx
            .recv_timeout(std::time::Duration::from_secs(1))
            .expect("reading a FIFO as a password file blocked");
        let why = outcome.unwrap_err().to_string();
        assert!(
            why.contains("is a FIFO, not a regular file") && why.contains("pw"),
            "{why}"
        );
        let why = read_password_file(dir.path()).unwrap_err().to_string();
        assert!(why.contains("a directory, not a regular file"), "{why}");
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; MAX_SECRET_FILE_BYTES as usize + 1]).unwrap();
        let why = read_regular_file(&big, MAX_SECRET_FILE_BYTES).unwrap_err();
        assert!(why.to_string().contains("larger than"), "{why}");
    }
}
