//! The Debian package built from this checkout's HEAD, once per commit, for
//! the tests that install it (tests/debian_package.rs,
//! tests/package_systemd.rs).

use crate::{repo_root, tail};
use std::fs::{self, File, OpenOptions};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// An exclusive flock held as long as the file is open.
pub fn lock_file(path: &Path) -> File {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .unwrap_or_else(|e| panic!("opening {}: {e}", path.display()));
    loop {
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return file;
        }
        let err = std::io::Error::last_os_error();
        assert_eq!(
            err.raw_os_error(),
            Some(libc::EINTR),
            "flock {}: {err}",
            path.display()
        );
    }
}

// ---------------------------------------------------------------------------
// The package, built once per commit
// ---------------------------------------------------------------------------

pub struct Package {
    pub dir: PathBuf,
    pub deb: PathBuf,
    pub dsc: PathBuf,
    pub changes: PathBuf,
}

pub fn git(args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo_root())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("running git");
    assert!(
        out.status.success(),
        "git {args:?} failed (the package is built from the git checkout's HEAD):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The packages built from HEAD by `scripts/build-deb.sh` (Debian version
/// `version`), in `target_tmpdir/debian-package/<commit>/`: built by the
/// first test process that asks, reused by every other (they wait on a
/// lock) and by later runs until HEAD moves, so that one test run builds
/// them once whichever package tests it runs.
pub fn build_package(target_tmpdir: &Path, version: &str) -> Package {
    let commit = git(&["rev-parse", "HEAD"]);
    let base = target_tmpdir.join("debian-package");
    fs::create_dir_all(&base).unwrap();
    // Held while building, so that another test process waits and reuses.
    let _lock = lock_file(&base.join("build.lock"));
    let dir = base.join(&commit);
    let done = dir.join("complete");
    if done.exists() {
        step(&format!(
            "reusing the packages built from {commit} in {} (remove {} to build again)",
            dir.display(),
            base.display()
        ));
    } else {
        // Only the current commit's packages are kept.
        for entry in fs::read_dir(&base).unwrap().flatten() {
            if entry.path().is_dir() {
                fs::remove_dir_all(entry.path()).unwrap();
            }
        }
        fs::create_dir_all(&dir).unwrap();
        if !git(&["status", "--porcelain", "--untracked-files=no"]).is_empty() {
            println!("note: uncommitted changes are not in the package (it is built from HEAD)");
        }
        let log = base.join("build.log");
        let banner = format!(
            "SLOW STEP: building the Debian package from {commit} with scripts/build-deb.sh \
             (dpkg-buildpackage, cargo release build: about 3 minutes on 2 cores); log: {}",
            log.display()
        );
        step(&banner);
        eprintln!("{banner}");
        let started = Instant::now();
        let log_file = File::create(&log).unwrap();
        let status = Command::new("bash")
            .arg(repo_root().join("scripts/build-deb.sh"))
            .arg(&dir)
            .current_dir(repo_root())
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().unwrap())
            .stderr(log_file)
            .status()
            .expect("running scripts/build-deb.sh");
        let text = fs::read_to_string(&log).unwrap_or_default();
        assert!(
            status.success(),
            "scripts/build-deb.sh failed ({status}); the end of {}:\n{}",
            log.display(),
            tail(&text, 60)
        );
        println!("{}", tail(&text, 12));
        step(&format!("built in {:.0?}", started.elapsed()));
        fs::write(&done, &commit).unwrap();
    }
    let arch = Command::new("dpkg")
        .arg("--print-architecture")
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .expect("running dpkg --print-architecture");
    let find = |name: String| {
        let path = dir.join(&name);
        assert!(path.is_file(), "the build made no {}", path.display());
        path
    };
    Package {
        deb: find(format!("redis-snmp_{version}_{arch}.deb")),
        dsc: find(format!("redis-snmp_{version}.dsc")),
        changes: find(format!("redis-snmp_{version}_{arch}.changes")),
        dir,
    }
}

fn step(message: &str) {
    println!("\n==> {message}");
}
