//! The Debian package under a real systemd: the .deb built from this tree
//! (the one tests/debian_package.rs builds, once per commit) installed into
//! a Debian 12 booted with systemd as PID 1, by the shared tool
//! `../shared/tools/systemd-real/run.sh` (systemd-nspawn, a private
//! network, a cached rootfs; nothing installed on the host). Its checks are
//! the unit as it runs: the package installed with apt and started, the
//! snmpd drop-in, the 17 legacy objects served, the credentials, seccomp,
//! capabilities, the mount namespace (ProtectSystem, ProtectProc, ProcSubset,
//! PrivateTmp, PrivateDevices, ProtectHome), the cgroup, a probe of the
//! unit's system call and address family filters, `systemd-analyze
//! security`, reload, stop and the journal. This test adds, as the tool's
//! hooks (`tests/package_systemd/*.sh`, run in the container as root):
//!
//! - discovery turned on by `systemctl reload`: a second Redis is found and
//!   polled, and the default server keeps row 1 under its discovered name,
//!   so the 17 legacy objects keep answering;
//! - the supplementary group README.Debian's advice relies on: with
//!   snmpd's own `agentXPerms` group, the unit is refused until `adduser
//!   redis-snmp GROUP` and a restart; then its process has the group, which
//!   a sandbox made by hand with `setpriv --clear-groups` would not; and
//!   `redis-snmp doctor`'s verdict on the AgentX socket is, each time, what
//!   the unit met;
//! - the peer check under the unit's `ProtectProc=invisible`: a listener of
//!   nobody's on the port of an instance with a password file is connected
//!   to and never hears the password.
//!
//! `../shared` is beside the repository on developer machines and in CI,
//! not part of the project: without it this test prints a SKIP line with
//! the reason and passes. It needs root, as the package tests do (it fails
//! without). The tool's first run builds its rootfs (debootstrap from the
//! host's mirror: a few minutes, cached under ~/.cache/systemd-real-rootfs);
//! later runs boot a copy in seconds. `REDIS_SNMP_DEB=PATH` installs that
//! .deb instead of the one built from HEAD.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;
use testkit::*;

/// The package's Debian version (debian/changelog), as the package tests
/// name the .deb.
const VERSION: &str = "0.3.0-1";

/// The lines the tool must print `ok` for: its own checks and this test's
/// hooks'. A check missing (a hook that stopped early, a tool that changed)
/// fails as a `FAIL` would.
const EXPECTED: &[&str] = &[
    "ok boot ",
    "ok unit snmpd active",
    "ok install ",
    "ok snmpd drop-in ",
    "ok systemctl is-active redis-snmp ",
    "ok snmpget -v2c -c public .1.3.6.1.4.1.20267.400.1.1.0 ",
    "ok snmpbulkwalk .1.3.6.1.4.1.20267.400 ",
    "ok credentials ",
    "ok NoNewPrivs 1",
    "ok Seccomp 2 ",
    "ok capabilities ",
    "ok not dumpable ",
    "ok mount namespace of its own ",
    "ok ProtectSystem=strict: / read-only",
    "ok ProtectSystem=strict: root cannot write",
    "ok ProtectProc=invisible ProcSubset=pid ",
    "ok as redis-snmp in its namespace: /proc/1 and /proc/sys hidden",
    "ok PrivateTmp ",
    "ok PrivateDevices ",
    "ok ProtectHome ",
    "ok cgroup /system.slice/redis-snmp.service",
    "ok unit sandbox probe ",
    "ok systemd-analyze security redis-snmp: exposure ",
    // tests/package_systemd/discovery_reload.sh
    "ok discovery under the unit ",
    "ok legacy objects after the reload that turned discovery on ",
    // tests/package_systemd/groups.sh
    "ok without the group: ",
    "ok adduser redis-snmp agentxusers, systemctl restart redis-snmp: served",
    "ok supplementary groups matter: ",
    // tests/package_systemd/port_thief.sh
    "ok port thief under the unit: ",
    // The tool's own reload, stop and journal, after the hooks.
    "ok systemctl reload redis-snmp ",
    "ok served after reload",
    "ok systemctl stop redis-snmp ",
    "ok journalctl -u redis-snmp ",
];

fn run_sh() -> PathBuf {
    repo_root().join("../shared/tools/systemd-real/run.sh")
}

fn hook(name: &str) -> PathBuf {
    repo_root().join("tests/package_systemd").join(name)
}

#[test]
fn the_package_under_a_real_systemd() {
    const TEST: &str = "the_package_under_a_real_systemd";
    let tool = run_sh();
    if !tool.is_file() {
        eprintln!(
            "SKIP {TEST}: no {} (../shared is beside the repository on developer machines \
             and in CI, not part of it)",
            tool.display()
        );
        return;
    }
    assert!(
        unsafe { libc::geteuid() } == 0,
        "{TEST} boots a container with systemd-nspawn and installs the package in it: \
         it must run as root (CI does)"
    );

    let started = Instant::now();
    // REDIS_SNMP_DEB: a .deb already built (by scripts/build-deb.sh from
    // another commit whose package is the same), as run.sh takes one.
    let deb = match std::env::var_os("REDIS_SNMP_DEB") {
        Some(deb) => PathBuf::from(deb),
        None => debian_build::build_package(Path::new(env!("CARGO_TARGET_TMPDIR")), VERSION).deb,
    };
    let built_in = started.elapsed();

    // The tool's logs (console, apt, journal, analyze), kept for a failure
    // and replaced by the next run.
    let logs = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("package-systemd-logs");
    let _ = std::fs::remove_dir_all(&logs);
    let hooks = [
        hook("discovery_reload.sh"),
        hook("groups.sh"),
        hook("port_thief.sh"),
    ];
    let hooks: Vec<String> = hooks.iter().map(|h| h.display().to_string()).collect();
    let ran = Instant::now();
    let out = Command::new("bash")
        .arg(&tool)
        .arg(&deb)
        .env("LOGDIR", &logs)
        .env("HOOKS", hooks.join(" "))
        .stdin(Stdio::null())
        .output()
        .expect("running ../shared/tools/systemd-real/run.sh");
    let took = ran.elapsed();
    let text = String::from_utf8_lossy(&out.stdout);
    let errors = String::from_utf8_lossy(&out.stderr);
    println!("{text}");
    println!(
        "package: {} (ready in {:.0?}); run.sh: {:.0?}; logs: {}",
        deb.display(),
        built_in,
        took,
        logs.display()
    );

    let failed: Vec<&str> = text.lines().filter(|l| l.starts_with("FAIL ")).collect();
    let missing: Vec<&&str> = EXPECTED
        .iter()
        .filter(|want| !text.lines().any(|l| l.starts_with(**want)))
        .collect();
    assert!(
        out.status.success() && failed.is_empty() && missing.is_empty(),
        "under a real systemd ({}): failed {failed:#?}, checks never reported {missing:#?}; \
         stderr:\n{}\nlogs: {}",
        out.status,
        tail(&errors, 20),
        logs.display()
    );
}
