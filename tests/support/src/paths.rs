//! Paths.

use std::fs::{self, File, OpenOptions};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The repository under test.
///
/// Cargo and nextest tell a test program its package's directory at run
/// time (`CARGO_MANIFEST_DIR`): that is the checkout being tested even when
/// this crate was compiled from another one sharing the target directory
/// (a worktree); the compile-time path, two levels above this crate
/// (`tests/support`), is the fallback for a program run by hand.
pub fn repo_root() -> PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        std::env::var_os("CARGO_MANIFEST_DIR")
            .map(PathBuf::from)
            .filter(|dir| dir.join("scripts/test.sh").is_file())
            .unwrap_or_else(|| {
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .parent()
                    .and_then(Path::parent)
                    .expect("tests/support sits two levels below the repository")
                    .to_path_buf()
            })
    })
    .clone()
}

/// A directory of this user's, under the system temp dir, for state the
/// test processes share: the port locks, the client tools' empty config dir.
pub(crate) fn shared_tmp(sub: &str) -> PathBuf {
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
pub(crate) fn flock(path: &Path, block: bool) -> Option<File> {
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
