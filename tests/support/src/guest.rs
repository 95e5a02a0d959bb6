//! Other kernels than this machine's: Debian's, booted under QEMU with a
//! busybox initramfs that runs one scenario and powers off. What the guest
//! prints on its serial console is the test's to read.
//!
//! The kernels are fetched by `scripts/test-kernels.sh` (which
//! `scripts/install-test-deps.sh` runs) into a per-user cache; QEMU is
//! Debian's `qemu-system-x86`, busybox `busybox-static`. A test without
//! them skips, saying which is missing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The per-user cache of kernels and guest programs.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("REDIS_SNMP_TEST_KERNELS") {
        return PathBuf::from(dir);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cache")))
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    base.join("redis-snmp-test-kernels")
}

/// A kernel image from the cache.
#[derive(Debug, Clone)]
pub struct Kernel {
    /// `6.1`, `6.12`: the cache's directory name.
    pub release: String,
    /// The Debian package it came from.
    pub package: String,
    pub vmlinuz: PathBuf,
}

/// The kernel of `release` in the cache, or why not.
pub fn kernel(release: &str) -> Result<Kernel, String> {
    let dir = cache_dir().join(release);
    let vmlinuz = dir.join("vmlinuz");
    if !vmlinuz.is_file() {
        return Err(format!(
            "no Linux {release} image in {} (scripts/test-kernels.sh fetches it)",
            dir.display()
        ));
    }
    let package = std::fs::read_to_string(dir.join("package"))
        .unwrap_or_default()
        .trim()
        .to_string();
    Ok(Kernel {
        release: release.to_string(),
        package,
        vmlinuz,
    })
}

/// A program on the PATH, or why not.
pub fn tool(name: &str, package: &str) -> Result<PathBuf, String> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
        .ok_or_else(|| format!("{name} is missing (Debian package {package})"))
}

/// A `newc` cpio archive, the format the kernel unpacks as its initramfs:
/// directories, files and symbolic links, all root's unless said.
#[derive(Default)]
pub struct Initramfs {
    bytes: Vec<u8>,
    dirs: BTreeSet<String>,
    inode: u32,
}

impl Initramfs {
    fn entry(&mut self, name: &str, mode: u32, uid: u32, data: &[u8]) {
        self.inode += 1;
        let header = format!(
            "070701{:08X}{mode:08X}{uid:08X}{uid:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}{:08X}",
            self.inode,
            1,
            0,
            data.len(),
            0,
            0,
            0,
            0,
            name.len() + 1,
            0
        );
        self.bytes.extend_from_slice(header.as_bytes());
        self.bytes.extend_from_slice(name.as_bytes());
        self.bytes.push(0);
        self.pad();
        self.bytes.extend_from_slice(data);
        self.pad();
    }

    fn pad(&mut self) {
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
    }

    /// `path`'s parents, then `path`, as directories (mode 0755).
    pub fn dir(&mut self, path: &str) -> &mut Self {
        let path = path.trim_matches('/');
        let mut so_far = String::new();
        for part in path.split('/').filter(|p| !p.is_empty()) {
            if !so_far.is_empty() {
                so_far.push('/');
            }
            so_far.push_str(part);
            if self.dirs.insert(so_far.clone()) {
                let name = so_far.clone();
                self.entry(&name, 0o040755, 0, &[]);
            }
        }
        self
    }

    /// A file at `path` holding `data`, with `mode` (permission bits) and
    /// owner `uid`.
    pub fn file(&mut self, path: &str, data: &[u8], mode: u32, uid: u32) -> &mut Self {
        let path = path.trim_start_matches('/');
        if let Some((parent, _)) = path.rsplit_once('/') {
            self.dir(parent);
        }
        self.entry(path, 0o100000 | mode, uid, data);
        self
    }

    /// A copy of the host's `source` at `path`, executable.
    pub fn program(&mut self, path: &str, source: &Path) -> &mut Self {
        let data = std::fs::read(source).unwrap_or_else(|e| panic!("{}: {e}", source.display()));
        self.file(path, &data, 0o755, 0)
    }

    /// A copy of the host's dynamically linked `source` at `path`, with the
    /// libraries `ldd` names at their own paths.
    pub fn program_with_libraries(&mut self, path: &str, source: &Path) -> &mut Self {
        self.program(path, source);
        let out = Command::new("ldd")
            .arg(source)
            .output()
            .expect("ldd (Debian package libc-bin)");
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)" or
            // "/lib64/ld-linux-x86-64.so.2 (0x…)"
            let library = line
                .split_once("=>")
                .map_or(line, |(_, path)| path)
                .split_whitespace()
                .next()
                .filter(|p| p.starts_with('/'));
            if let Some(library) = library {
                let real = std::fs::canonicalize(library).expect("a library ldd named");
                let data = std::fs::read(&real).expect("a library ldd named");
                self.file(library, &data, 0o755, 0);
            }
        }
        self
    }

    /// A symbolic link at `path` to `target`.
    pub fn symlink(&mut self, path: &str, target: &str) -> &mut Self {
        let path = path.trim_start_matches('/');
        if let Some((parent, _)) = path.rsplit_once('/') {
            self.dir(parent);
        }
        self.entry(path, 0o120777, 0, target.as_bytes());
        self
    }

    /// The archive, with its trailer, written to `path`.
    pub fn write(&mut self, path: &Path) {
        self.entry("TRAILER!!!", 0, 0, &[]);
        std::fs::write(path, &self.bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

/// A copy of `binary` without its debugging sections, in `dir` (a debug
/// build of the agent is ten times its stripped size, and the guest
/// unpacks it into memory). The binary itself when `strip` is missing.
pub fn stripped(binary: &Path, dir: &Path) -> PathBuf {
    let copy = dir.join(binary.file_name().expect("a file name"));
    let done = Command::new("strip")
        .args(["--strip-debug", "-o"])
        .arg(&copy)
        .arg(binary)
        .status()
        .is_ok_and(|s| s.success());
    if done {
        copy
    } else {
        binary.to_path_buf()
    }
}

/// The std-only Rust program `source`, built statically by rustc into the
/// cache (once per text of the source and rustc version).
pub fn static_program(source: &Path) -> Result<PathBuf, String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let text = std::fs::read(source).map_err(|e| format!("{}: {e}", source.display()))?;
    let version = Command::new(&rustc)
        .arg("--version")
        .output()
        .map_err(|e| format!("rustc: {e}"))?
        .stdout;
    // FNV-1a of the source and the compiler's version.
    let hash = text
        .iter()
        .chain(&version)
        .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
    let stem = source
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("guest");
    let built = cache_dir().join(format!("{stem}-{hash:016x}"));
    if built.is_file() {
        return Ok(built);
    }
    std::fs::create_dir_all(cache_dir()).map_err(|e| e.to_string())?;
    let partial = built.with_extension(format!("partial{}", std::process::id()));
    let out = Command::new(&rustc)
        .args([
            "--edition",
            "2021",
            "-O",
            "-C",
            "target-feature=+crt-static",
            "-o",
        ])
        .arg(&partial)
        .arg(source)
        .output()
        .map_err(|e| format!("rustc: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "rustc {}: {}",
            source.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    std::fs::rename(&partial, &built).map_err(|e| e.to_string())?;
    // Builds of earlier texts of the source are not needed again.
    let stale = |name: &str| name.starts_with(&format!("{stem}-")) && !name.contains(".partial");
    for entry in std::fs::read_dir(cache_dir())
        .into_iter()
        .flatten()
        .flatten()
    {
        if entry.path() != built && entry.file_name().to_str().is_some_and(stale) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    Ok(built)
}

/// What a guest printed, and how long it took from QEMU's start to its
/// power-off.
pub struct Boot {
    pub console: String,
    pub took: Duration,
}

/// Boots `kernel` with `initramfs` in QEMU (TCG unless
/// `REDIS_SNMP_QEMU_ACCEL` names another accelerator, such as `kvm`), the
/// serial console as its output, no network device (loopback only), and
/// waits for it to power off; killed, by its PID, after `timeout`.
pub fn boot(kernel: &Kernel, initramfs: &Path, timeout: Duration) -> Result<Boot, String> {
    let qemu = tool("qemu-system-x86_64", "qemu-system-x86")?;
    let accel = std::env::var("REDIS_SNMP_QEMU_ACCEL").unwrap_or_else(|_| "tcg".into());
    let log = initramfs.with_extension("console");
    let console = std::fs::File::create(&log).map_err(|e| e.to_string())?;
    let start = Instant::now();
    let mut child = Command::new(qemu)
        .args(["-accel", &accel, "-cpu", "max", "-m", "512", "-smp", "1"])
        .args([
            "-nographic",
            "-no-reboot",
            "-nic",
            "none",
            "-monitor",
            "none",
        ])
        .args(["-serial", "stdio"])
        .arg("-kernel")
        .arg(&kernel.vmlinuz)
        .arg("-initrd")
        .arg(initramfs)
        .args([
            "-append",
            "console=ttyS0 panic=-1 quiet loglevel=3 rdinit=/init",
        ])
        .stdin(Stdio::null())
        .stdout(console)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("qemu-system-x86_64: {e}"))?;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(status);
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let took = start.elapsed();
    let console = String::from_utf8_lossy(&std::fs::read(&log).unwrap_or_default()).into_owned();
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut stderr);
    }
    match status {
        Some(s) if s.success() => Ok(Boot { console, took }),
        Some(s) => Err(format!(
            "QEMU exited with {s} after {took:?}: {stderr}\n{console}"
        )),
        None => Err(format!(
            "Linux {} did not power off within {timeout:?}:\n{console}",
            kernel.release
        )),
    }
}
