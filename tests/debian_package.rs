//! The Debian package (issue 6), tested the way an administrator meets it:
//! built from a clean export of the committed HEAD by
//! `scripts/build-deb.sh`, checked by lintian, installed with dpkg, run
//! against a private snmpd and Redis as its own system user, upgraded to
//! from stand-ins of the Perl agent's package, and purged.
//!
//! - snmpd: the package lets its user into snmpd's AgentX socket with a
//!   drop-in, /etc/snmp/snmpd.conf.d/redis-snmp.conf. After installing and
//!   after upgrading, a private snmpd set up like Debian's (`master agentx`,
//!   `includeDir` of the installed /etc/snmp/snmpd.conf.d as its last line,
//!   Debian's daemon options, so it drops to Debian-snmp; only the UDP port
//!   and the AgentX socket are private) must take the installed agent,
//!   started as redis-snmp, with no manual step in between. The tests
//!   create /var/agentx (mode 0700, as an snmpd that ran before leaves it)
//!   when there is none, to see postinst open it, and remove it again; an
//!   existing one gets its mode back.
//!
//! - The source package carries the crates (vendor/, the .orig-vendor
//!   tarball) and the binary package is built from it without network;
//!   every crate linked in has its licence named in debian/copyright and
//!   its licence text shipped (crate-licenses.gz).
//! - A Redis password in the Perl agent's DAEMON_OPTS (-p) moves to
//!   /etc/redis-snmp/password on upgrade, and the agent authenticates with
//!   it; purging keeps the user and group, whose files may remain; the
//!   administrator's own agentXPerms and a "master agentx" turned off are
//!   left alone (no drop-in made, a message instead).
//!
//! - Root: the tests that install packages change the system (dpkg, a system
//!   user), so they need root and fail (not skip) without it. They never
//!   touch a redis-snmp that is already installed: they fail and say so.
//! - Serialised: every test that runs dpkg takes one lock (an `flock`, so
//!   that test processes started by nextest wait for each other too) and
//!   purges the package when it ends, also when it fails (a guard).
//! - The build is slow (a release build: about 3 minutes on 2 cores), so it
//!   runs once per commit: the packages are kept in
//!   `target/tmp/debian-package/<commit>/` and reused by the other tests of
//!   the run, in this process or another, and by later runs (remove that
//!   directory to build again). Uncommitted changes are not in the package
//!   (the build exports HEAD, as CI's clean clone would).
//! - systemd is not PID 1 where these tests run (CI containers), so the unit
//!   is not started by systemd: `systemd-analyze verify` and `security
//!   --offline` check the installed unit file, and the agent is started the
//!   way the unit would start it (its `User=`, its `ExecStart=` with
//!   `$DAEMON_OPTS` expanded from its `EnvironmentFile=`, an empty
//!   environment), which checks everything but the sandbox itself. (On a
//!   machine where systemd does run, dpkg also starts the real service
//!   against /var/agentx/master and localhost:6379; the purge stops it.)

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use testkit::*;

const PKG: &str = "redis-snmp";
const USER: &str = "redis-snmp";
const VERSION: &str = "0.3.0-1";
const CONFFILE: &str = "/etc/redis-snmp/redis-snmp.toml";
const DEFAULT_FILE: &str = "/etc/default/redis-snmp";
const BINARY: &str = "/usr/sbin/redis-snmp";
/// The package's drop-in for snmpd (made by postinst), and the directory
/// Debian's snmpd.conf includes.
const SNMPD_DROPIN: &str = "/etc/snmp/snmpd.conf.d/redis-snmp.conf";
const SNMPD_DROPIN_DIR: &str = "/etc/snmp/snmpd.conf.d";
/// Its source in the repository, and where the package installs it, as the
/// template postinst copies.
const SNMPD_DROPIN_SOURCE: &str = "debian/conf/snmpd.conf.d/redis-snmp.conf";
const SNMPD_DROPIN_TEMPLATE: &str = "/usr/share/redis-snmp/snmpd.conf.d/redis-snmp.conf";
/// The settings of the drop-in (README.Debian and NEWS quote them). No
/// "master agentx": the package leaves that to snmpd.conf.
const DROPIN_SETTINGS: [&str; 1] = ["agentXPerms 0660 0755 -1 redis-snmp"];
/// Where postinst moves a Redis password given in DAEMON_OPTS.
const PASSWORD_FILE: &str = "/etc/redis-snmp/password";
/// `redis-snmp kick`'s file and ledger.
const KICK_CONFFILE: &str = "/etc/redis-snmp/kick.toml";
const KICK_STATE_DIR: &str = "/var/lib/redis-snmp/kick";
/// The directory of snmpd's default AgentX socket, which postinst opens.
const AGENTX_DIR: &str = "/var/agentx";
/// The user and group Debian's snmpd drops to.
const SNMPD_USER: &str = "Debian-snmp";

// ---------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------

fn show(what: &str, out: &Output) -> String {
    format!(
        "$ {what} → {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs a command (stdin from /dev/null, non-interactive for debconf).
fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("running {program}: {e}"))
}

/// Runs a command, prints what it said, panics unless it succeeded.
fn run_ok(program: &str, args: &[&str]) -> String {
    let out = run(program, args);
    let text = show(&format!("{program} {}", args.join(" ")), &out);
    println!("{text}");
    assert!(out.status.success(), "failed:\n{text}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn step(message: &str) {
    println!("\n==> {message}");
}

fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

/// Fails the test (it does not skip) when not run as root.
fn require_root() {
    assert!(
        is_root(),
        "tests/debian_package.rs installs, upgrades and purges the redis-snmp \
         Debian package and creates a system user: it must run as root (CI does). \
         Refusing to run as uid {}.",
        unsafe { libc::geteuid() }
    );
}

/// An exclusive flock held as long as the file is open.
fn lock_file(path: &Path) -> File {
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

struct Package {
    dir: PathBuf,
    deb: PathBuf,
    dsc: PathBuf,
    changes: PathBuf,
}

fn git(args: &[&str]) -> String {
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

fn package() -> &'static Package {
    static PACKAGE: OnceLock<Package> = OnceLock::new();
    PACKAGE.get_or_init(build_package)
}

fn build_package() -> Package {
    let commit = git(&["rev-parse", "HEAD"]);
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("debian-package");
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
    let arch = run_ok("dpkg", &["--print-architecture"]).trim().to_string();
    let find = |name: String| {
        let path = dir.join(&name);
        assert!(path.is_file(), "the build made no {}", path.display());
        path
    };
    Package {
        deb: find(format!("{PKG}_{VERSION}_{arch}.deb")),
        dsc: find(format!("{PKG}_{VERSION}.dsc")),
        changes: find(format!("{PKG}_{VERSION}_{arch}.changes")),
        dir,
    }
}

// ---------------------------------------------------------------------------
// The system: one test at a time, nothing left behind
// ---------------------------------------------------------------------------

/// `Some("ii 0.3.0-1")` (status abbreviation and version) when dpkg knows
/// the package in any state but "not installed".
fn package_state() -> Option<String> {
    let out = run(
        "dpkg-query",
        &["--show", "--showformat=${db:Status-Abbrev} ${Version}", PKG],
    );
    let text = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    (out.status.success() && !text.is_empty() && !text.starts_with("un")).then_some(text)
}

fn user_exists(name: &str) -> bool {
    run("getent", &["passwd", name]).status.success()
}

fn group_exists(name: &str) -> bool {
    run("getent", &["group", name]).status.success()
}

/// The exclusive right to install and purge redis-snmp on this system,
/// checked to harm nothing: no redis-snmp installed, no user left over.
struct System {
    _lock: File,
    /// What carries the package's name before the test starts.
    before: BTreeSet<String>,
    /// snmpd's own configuration before the test starts.
    snmp_before: BTreeMap<String, String>,
}

fn take_system() -> System {
    require_root();
    let lock = lock_file(&std::env::temp_dir().join("redis-snmp-debian-package-dpkg.lock"));
    if let Some(state) = package_state() {
        panic!(
            "{PKG} is already known to dpkg here ({state}); these tests install and purge \
             their own build and would destroy it. If it is left over from an interrupted \
             test run, remove it with: dpkg --purge {PKG}"
        );
    }
    assert!(
        !user_exists(USER) && !group_exists(USER),
        "the user or group {USER} exists although {PKG} is not installed; if it is left \
         over from an interrupted test run, remove it with: deluser --system {USER}; \
         delgroup --system {USER}"
    );
    assert!(
        fs::symlink_metadata(SNMPD_DROPIN).is_err(),
        "{SNMPD_DROPIN} exists although {PKG} is not installed: postinst would take it \
         for the administrator's. \
         If it is left over from an interrupted test run, remove it"
    );
    assert!(
        Path::new(SNMPD_DROPIN_DIR).is_dir() && user_exists(SNMPD_USER),
        "snmpd is not installed (no {SNMPD_DROPIN_DIR}, no user {SNMPD_USER}): \
         apt-get install snmpd snmp"
    );
    refuse_a_restart_that_kills_every_snmpd();
    System {
        _lock: lock,
        before: traces(),
        snmp_before: snmp_config(),
    }
}

/// Without systemd, postinst (on installation and on the upgrade from the
/// Perl agent) and postrm (on purge) restart a running system snmpd
/// through /etc/init.d/snmpd, unless policy-rc.d forbids it, and that
/// script's stop kills every process running /usr/sbin/snmpd, not only the
/// one of its PID file: the private snmpd of every test running at that
/// moment too. Refuse to run then, rather than break them.
fn refuse_a_restart_that_kills_every_snmpd() {
    if Path::new("/run/systemd/system").is_dir() {
        return;
    }
    let running = fs::read_to_string("/run/snmpd.pid")
        .ok()
        .and_then(|pid| pid.trim().parse::<u32>().ok())
        .is_some_and(pid_alive);
    let policy = "/usr/sbin/policy-rc.d";
    let denied = Path::new(policy).exists()
        && run(policy, &["snmpd", "try-restart"]).status.code() == Some(101);
    assert!(
        !running || denied,
        "the system snmpd runs (/run/snmpd.pid) without systemd, and no {policy} forbids \
         restarting it: installing {PKG} would restart it through /etc/init.d/snmpd, whose \
         stop kills every snmpd process, including those of other tests. Stop it first: \
         /etc/init.d/snmpd stop"
    );
}

/// Every file, directory and link under /etc/snmp but the package's
/// drop-in: owner, group, mode and contents (or link target).
fn snmp_config() -> BTreeMap<String, String> {
    fn walk(path: &Path, found: &mut BTreeMap<String, String>) {
        let Ok(meta) = fs::symlink_metadata(path) else {
            return;
        };
        let name = path.display().to_string();
        if name == SNMPD_DROPIN {
            return;
        }
        let what = if meta.file_type().is_symlink() {
            format!("-> {}", fs::read_link(path).unwrap().display())
        } else if meta.is_file() {
            String::from_utf8_lossy(&fs::read(path).unwrap_or_default()).into_owned()
        } else {
            String::new()
        };
        found.insert(
            name,
            format!("{}:{} {:o} {what}", meta.uid(), meta.gid(), meta.mode()),
        );
        if meta.is_dir() {
            for entry in fs::read_dir(path).unwrap().flatten() {
                walk(&entry.path(), found);
            }
        }
    }
    let mut found = BTreeMap::new();
    walk(Path::new("/etc/snmp"), &mut found);
    found
}

/// Purges the package when dropped, and removes what a purge leaves by
/// design (the user and group, files left in /etc/redis-snmp), as an
/// administrator would: the cleanup of a failed test.
struct PurgeOnDrop;

impl Drop for PurgeOnDrop {
    fn drop(&mut self) {
        if package_state().is_some() {
            eprintln!("cleanup: dpkg --purge {PKG}");
            let out = run("dpkg", &["--purge", PKG]);
            if !out.status.success() {
                eprintln!("{}", show("dpkg --purge", &out));
            }
        }
        remove_what_the_purge_leaves();
    }
}

/// What README.Debian tells the administrator to do after a purge, once
/// the group's files are dealt with: remove them, then the user and the
/// group.
fn remove_what_the_purge_leaves() {
    if Path::new("/etc/redis-snmp").exists() {
        let _ = fs::remove_dir_all("/etc/redis-snmp");
    }
    if user_exists(USER) {
        let out = run("deluser", &["--system", "--quiet", USER]);
        if !out.status.success() {
            eprintln!("{}", show("deluser --system", &out));
        }
    }
    if group_exists(USER) {
        let out = run("delgroup", &["--system", "--quiet", USER]);
        if !out.status.success() {
            eprintln!("{}", show("delgroup --system", &out));
        }
    }
}

/// Every path under the places a package touches whose name contains
/// "redis-snmp", and every account database line that does.
fn traces() -> BTreeSet<String> {
    fn walk(path: &Path, found: &mut BTreeSet<String>) {
        let Ok(meta) = fs::symlink_metadata(path) else {
            return;
        };
        if path
            .to_string_lossy()
            .rsplit('/')
            .next()
            .unwrap_or("")
            .contains(PKG)
        {
            found.insert(path.display().to_string());
        }
        if meta.is_dir() {
            if let Ok(entries) = fs::read_dir(path) {
                for entry in entries.flatten() {
                    walk(&entry.path(), found);
                }
            }
        }
    }
    let mut found = BTreeSet::new();
    for root in [
        "/etc",
        "/lib/systemd",
        "/usr/lib/systemd",
        "/usr/sbin",
        "/usr/bin",
        "/usr/share/doc",
        "/usr/share/man",
        "/usr/share/snmp",
        "/usr/share/redis-snmp",
        "/usr/lib/sysusers.d",
        "/var/lib/systemd",
        "/var/lib/dpkg/info",
        "/run/systemd",
    ] {
        walk(Path::new(root), &mut found);
    }
    for db in ["/etc/passwd", "/etc/group", "/etc/shadow", "/etc/gshadow"] {
        for line in fs::read_to_string(db).unwrap_or_default().lines() {
            if line.contains(PKG) {
                found.insert(format!("{db}: {line}"));
            }
        }
    }
    found
}

fn install(deb: &Path) -> String {
    let out = run("dpkg", &["--install", deb.to_str().unwrap()]);
    let text = show(&format!("dpkg --install {}", deb.display()), &out);
    println!("{text}");
    assert!(out.status.success(), "dpkg --install failed:\n{text}");
    assert!(
        !text.contains("Configuration file"),
        "dpkg asked about a configuration file:\n{text}"
    );
    text
}

/// Purges the package and checks that it left nothing behind but, by
/// design, the user and the group (with their IDs) and the files of
/// `leftovers`, which stay group redis-snmp; then removes those as
/// README.Debian says and checks that nothing else is left.
fn purge_and_check(system: &System, leftovers: &[&str]) {
    let ids = (id_of("passwd", USER), id_of("group", USER));
    step(&format!("dpkg --purge {PKG}"));
    run_ok("dpkg", &["--purge", PKG]);
    assert_eq!(package_state(), None, "dpkg still knows {PKG} after purge");
    assert!(
        !Path::new(KICK_STATE_DIR).exists(),
        "the purge left the kick's ledger {KICK_STATE_DIR}"
    );
    assert!(
        !Path::new("/var/log/puppet-events").exists(),
        "the purge left the empty /var/log/puppet-events"
    );
    // A group removed by the purge would hand its GID, and so the files
    // left of it, to the next group made (adduser takes the first free
    // ID): the user and group stay.
    assert_eq!(
        (id_of("passwd", USER), id_of("group", USER)),
        ids,
        "the user and group {USER} must survive the purge with their IDs"
    );
    for path in leftovers {
        let meta = fs::symlink_metadata(path)
            .unwrap_or_else(|e| panic!("{path} should survive the purge: {e}"));
        assert_eq!(meta.gid(), ids.1, "{path} is no longer group {USER}");
        println!("left by the purge, group {USER}: {path}");
    }
    if leftovers.is_empty() {
        assert!(
            !Path::new("/etc/redis-snmp").exists(),
            "/etc/redis-snmp is still there after purge"
        );
    }
    step("the administrator removes the leftovers, the user and the group (README.Debian)");
    remove_what_the_purge_leaves();
    for path in [
        "/etc/redis-snmp",
        DEFAULT_FILE,
        "/usr/share/redis-snmp",
        "/usr/share/snmp/mibs/REDIS-SERVER-MIB.txt",
        BINARY,
        "/lib/systemd/system/redis-snmp.service",
        "/usr/lib/systemd/system/redis-snmp.service",
        "/etc/systemd/system/multi-user.target.wants/redis-snmp.service",
        "/etc/init.d/redis-snmp",
        SNMPD_DROPIN,
    ] {
        assert!(
            fs::symlink_metadata(path).is_err(),
            "{path} is still there after purge"
        );
    }
    assert!(!user_exists(USER) && !group_exists(USER));
    let after = traces();
    let left: Vec<_> = after.difference(&system.before).collect();
    assert!(left.is_empty(), "left behind by the purge: {left:#?}");
    println!("nothing left behind");

    step("snmpd's own configuration is as it was, and snmpd still works on it");
    let snmp_after = snmp_config();
    let changed: Vec<_> = system
        .snmp_before
        .iter()
        .filter(|(path, what)| snmp_after.get(*path) != Some(what))
        .map(|(path, _)| path)
        .chain(
            snmp_after
                .keys()
                .filter(|path| !system.snmp_before.contains_key(*path)),
        )
        .collect();
    assert!(
        changed.is_empty(),
        "the package changed snmpd's files under /etc/snmp: {changed:#?}"
    );
    // Without the drop-in, net-snmp's defaults are back: the socket is
    // root's only.
    let snmpd = DebianSnmpd::start(SNMPD_DROPIN_DIR);
    let (dir, socket) = snmpd.socket_perms();
    assert_eq!(
        (dir, socket.1),
        ((0, 0, 0o700), 0),
        "after the purge, snmpd's AgentX socket should be root's again"
    );
    println!("snmpd starts with {SNMPD_DROPIN_DIR}; its AgentX socket is root's");
}

// ---------------------------------------------------------------------------
// Files, users
// ---------------------------------------------------------------------------

fn id_of(db: &str, name: &str) -> u32 {
    let out = run("getent", &[db, name]);
    let line = String::from_utf8_lossy(&out.stdout).into_owned();
    line.split(':')
        .nth(2)
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("getent {db} {name}: {line}"))
}

/// Asserts owner, group and permission bits of a path (not following a
/// final symlink).
fn assert_meta(path: &str, owner: &str, group: &str, mode: u32) {
    let meta = fs::symlink_metadata(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let got = (meta.uid(), meta.gid(), meta.mode() & 0o7777);
    let want = (id_of("passwd", owner), id_of("group", group), mode);
    assert_eq!(
        got, want,
        "{path}: uid {} gid {} mode {:o}, expected {owner}:{group} {mode:o}",
        got.0, got.1, got.2
    );
}

/// The unit file the package installed.
fn unit_path() -> String {
    let list = String::from_utf8_lossy(&run("dpkg", &["--listfiles", PKG]).stdout).into_owned();
    list.lines()
        .find(|l| l.ends_with("/system/redis-snmp.service"))
        .unwrap_or_else(|| panic!("{PKG} installs no redis-snmp.service:\n{list}"))
        .to_string()
}

/// Which binary the unit runs, as whom, with which arguments: `User=` and
/// `ExecStart=` of the installed unit, with `$DAEMON_OPTS` expanded from its
/// `EnvironmentFile=` the way systemd does (an unquoted `$VAR` becomes one
/// argument per whitespace-separated word of the value; the file holds
/// `VAR=value` lines, with optional quotes around the value).
fn unit_command(unit: &str) -> (String, Vec<String>) {
    let value = |key: &str| {
        unit.lines()
            .map(str::trim)
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or_else(|| panic!("the unit has no {key}\n{unit}"))
            .to_string()
    };
    let user = value("User=");
    let env_file = value("EnvironmentFile=");
    assert_eq!(env_file, format!("-{DEFAULT_FILE}"), "EnvironmentFile=");
    let mut env = std::collections::HashMap::new();
    if let Ok(text) = fs::read_to_string(DEFAULT_FILE) {
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            if let Some((k, v)) = line.split_once('=') {
                let v = v.trim();
                let v = v
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                    .unwrap_or(v);
                env.insert(k.trim().to_string(), v.to_string());
            }
        }
    }
    let mut argv = Vec::new();
    for word in value("ExecStart=").split_whitespace() {
        match word.strip_prefix('$') {
            Some(var) => argv.extend(
                env.get(var)
                    .map(String::as_str)
                    .unwrap_or("")
                    .split_whitespace()
                    .map(String::from),
            ),
            None => argv.push(word.to_string()),
        }
    }
    (user, argv)
}

/// Starts `argv` as `user` (and its groups), with an empty environment as
/// systemd gives a service, output to `log`.
fn start_as(user: &str, argv: &[String], log: &Path) -> Proc {
    let out = File::create(log).unwrap();
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid", user, "--regid", user, "--init-groups", "--"])
        .args(argv)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("NO_COLOR", "1")
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out);
    println!("starting as {user}: {}", argv.join(" "));
    Proc::spawn(&mut cmd, "the installed redis-snmp")
}

/// A private snmpd set up like Debian 12's: a configuration with
/// `master agentx` first and `includeDir` last (as /etc/snmp/snmpd.conf
/// has them), run with the options of Debian's snmpd.service (`-u
/// Debian-snmp -g Debian-snmp -I -smux,mteTrigger,mteTriggerConf`). What is
/// private: the UDP port, the AgentX socket (`agentXSocket` before the
/// `includeDir`, so that a drop-in moving the socket would show), the
/// community, the persistent state and the log. No MIB is loaded (`-m ""`),
/// as snmpd needs none.
struct DebianSnmpd {
    dir: tempfile::TempDir,
    port: u16,
    proc: Option<Proc>,
}

impl DebianSnmpd {
    /// Starts it with `includeDir INCLUDE_DIR` and waits until it answers.
    fn start(include_dir: &str) -> DebianSnmpd {
        let dir = tempfile::Builder::new()
            .prefix("redis-snmp-deb-snmpd.")
            .tempdir()
            .unwrap();
        // Searchable, like /var: the socket's directory is snmpd's to set.
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        let persist = dir.path().join("persist");
        fs::create_dir(&persist).unwrap();
        let snmpd_uid = id_of("passwd", SNMPD_USER);
        std::os::unix::fs::chown(&persist, Some(snmpd_uid), None).unwrap();
        let port = free_port();
        let socket = dir.path().join("agentx").join("master");
        let conf = format!(
            "# Like Debian's /etc/snmp/snmpd.conf, on private addresses\n\
             master agentx\n\
             agentaddress udp:127.0.0.1:{port}\n\
             agentXSocket unix:{}\n\
             rocommunity public 127.0.0.1\n\
             dontLogTCPWrappersConnects yes\n\
             includeDir {include_dir}\n",
            socket.display()
        );
        let conf_path = dir.path().join("snmpd.conf");
        fs::write(&conf_path, &conf).unwrap();
        let log = dir.path().join("snmpd.log");
        let out = File::create(dir.path().join("snmpd.stdout")).unwrap();
        let mut cmd = Command::new("snmpd");
        cmd.arg("-f")
            .arg("-C")
            .arg("-c")
            .arg(&conf_path)
            .args(["-m", ""])
            .args(["-u", SNMPD_USER, "-g", SNMPD_USER])
            .args(["-I", "-smux,mteTrigger,mteTriggerConf"])
            .arg("-Lf")
            .arg(&log)
            .arg("-p")
            .arg(dir.path().join("snmpd.pid"))
            .env("SNMP_PERSISTENT_DIR", &persist)
            .env_remove("SNMPCONFPATH")
            .env_remove("MIBS")
            .env_remove("MIBDIRS")
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out);
        println!(
            "snmpd on udp:127.0.0.1:{port}, AgentX {}, includeDir {include_dir}",
            socket.display()
        );
        let mut snmpd = DebianSnmpd {
            proc: Some(Proc::spawn(&mut cmd, "snmpd")),
            dir,
            port,
        };
        // snmpd makes its AgentX socket before it answers on UDP; a short
        // client timeout keeps the polling quick.
        let probe = snmpd.numeric().timeout(Duration::from_millis(300));
        let ready = wait_until(Duration::from_secs(10), || {
            snmpd.proc.as_mut().unwrap().is_running()
                && socket.exists()
                && probe.get(&[".1.3.6.1.2.1.1.3.0"]).success()
        });
        assert!(
            ready,
            "the private snmpd did not come up with its AgentX socket at {} \
             (a drop-in in {include_dir} that moves the socket would do this):\n{conf}\n{}\n{}",
            socket.display(),
            fs::read_to_string(snmpd.dir.path().join("snmpd.stdout")).unwrap_or_default(),
            snmpd.log()
        );
        let uid = fs::metadata(format!("/proc/{}", snmpd.proc.as_ref().unwrap().pid()))
            .unwrap()
            .uid();
        assert_eq!(uid, snmpd_uid, "snmpd did not drop to {SNMPD_USER}");
        snmpd
    }

    fn socket(&self) -> PathBuf {
        self.dir.path().join("agentx").join("master")
    }

    /// What the agent's `-x` and `agentx_socket` take.
    fn agentx_address(&self) -> String {
        format!("unix:{}", self.socket().display())
    }

    fn numeric(&self) -> SnmpClient {
        SnmpClient::new(self.port).numeric()
    }

    fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("snmpd.log")).unwrap_or_default()
    }

    /// Owner, group and mode of the socket's directory and of the socket.
    fn socket_perms(&self) -> ((u32, u32, u32), (u32, u32, u32)) {
        let meta = |p: &Path| {
            let m = fs::metadata(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (m.uid(), m.gid(), m.mode() & 0o7777)
        };
        let socket = self.socket();
        (meta(socket.parent().unwrap()), meta(&socket))
    }

    /// Checks that the installed drop-in let the service's user in, and
    /// only it: the directory root:root 0755, the socket root:redis-snmp
    /// 0660, and nothing that snmpd could not make sense of.
    fn assert_open_to_the_service_user(&self) {
        let gid = id_of("group", USER);
        let (dir, socket) = self.socket_perms();
        assert_eq!(
            (dir, socket),
            ((0, 0, 0o755), (0, gid, 0o660)),
            "the AgentX socket's directory and socket (uid, gid, mode) are not what \
             {SNMPD_DROPIN} asks for; snmpd log:\n{}",
            self.log()
        );
        let log = self.log();
        assert!(
            !log.contains("Can't identify") && !log.contains("rror"),
            "snmpd complains about the configuration:\n{log}"
        );
        println!(
            "AgentX socket {}: root:{USER} 0660, directory 0755",
            self.socket().display()
        );
    }
}

impl Drop for DebianSnmpd {
    fn drop(&mut self) {
        if let Some(mut proc) = self.proc.take() {
            if std::thread::panicking() {
                eprintln!("--- private snmpd log ---\n{}", tail(&self.log(), 30));
            }
            proc.terminate(Duration::from_secs(5));
        }
    }
}

/// /var/agentx as an snmpd that ran before the package leaves it (mode
/// 0700, root:root): created if there is none, and removed again when
/// dropped; an existing one gets its mode back.
struct VarAgentx {
    /// The mode it had, when it existed before.
    had: Option<u32>,
}

impl VarAgentx {
    fn locked() -> VarAgentx {
        let had = fs::symlink_metadata(AGENTX_DIR).ok().map(|m| {
            assert!(m.is_dir(), "{AGENTX_DIR} is not a directory");
            m.mode() & 0o7777
        });
        if had.is_none() {
            fs::create_dir(AGENTX_DIR).unwrap();
        }
        fs::set_permissions(AGENTX_DIR, fs::Permissions::from_mode(0o700)).unwrap();
        let before = had.map_or("none".to_string(), |m| format!("mode {m:o}"));
        println!("{AGENTX_DIR}: 0700, root:root (before: {before})");
        VarAgentx { had }
    }

    fn mode(&self) -> u32 {
        fs::metadata(AGENTX_DIR).unwrap().mode() & 0o7777
    }
}

impl Drop for VarAgentx {
    fn drop(&mut self) {
        let done = match self.had {
            Some(mode) => fs::set_permissions(AGENTX_DIR, fs::Permissions::from_mode(mode)),
            None => fs::remove_dir(AGENTX_DIR),
        };
        if let Err(e) = done {
            eprintln!("cleanup of {AGENTX_DIR}: {e}");
        }
    }
}

/// Waits until the agent serves live data: redisConnectedClients.0 (the
/// first legacy scalar, `.1.3.6.1.4.1.20267.400.1.1.0`) is a Gauge32 and
/// redisInstanceUp.1 is up(1).
fn wait_served(snmpd: &DebianSnmpd, agent: &mut Proc, log: &Path) {
    let snmp = snmpd.numeric();
    let mut last = String::new();
    let ok = wait_until(Duration::from_secs(20), || {
        let out = snmp.get(&[&legacy_oid(1), &instance_oid(4, 1)]);
        last = out.to_string();
        let vars = out.vars();
        vars.len() == 2 && vars[0].ty == "Gauge32" && vars[1].value == "1"
    }) && agent.is_running();
    assert!(
        ok,
        "the installed agent serves no live data after 20 s (running: {}):\n{last}\n\
         --- agent log ---\n{}\n--- snmpd log ---\n{}",
        agent.is_running(),
        fs::read_to_string(log).unwrap_or_default(),
        tail(&snmpd.log(), 20)
    );
    println!("{}", snmp.get(&[&legacy_oid(1)]));
    let uid = fs::metadata(format!("/proc/{}", agent.pid()))
        .unwrap()
        .uid();
    assert_eq!(
        uid,
        id_of("passwd", USER),
        "the agent does not run as {USER}"
    );
}

// ---------------------------------------------------------------------------
// The shipped configuration file
// ---------------------------------------------------------------------------

/// Removes the `#` of every commented-out setting: a line whose `#` is
/// followed by something other than a space or another `#` (prose
/// comments are `# text`).
fn uncomment_settings(text: &str) -> String {
    text.lines()
        .map(|line| match line.strip_prefix('#') {
            Some(rest) if !rest.is_empty() && !rest.starts_with([' ', '#']) => rest,
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// Field names of a `struct NAME { ... }` in src/config/: the keys the
/// agent accepts (its file structs deny unknown fields).
fn struct_fields(source: &str, name: &str) -> BTreeSet<String> {
    let start = source
        .find(&format!("struct {name} {{"))
        .unwrap_or_else(|| panic!("src/config/ has no struct {name}"));
    let body = &source[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find("\n}").unwrap()];
    body.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("//") && !l.starts_with("#["))
        .map(|l| l.strip_prefix("pub(super) ").unwrap_or(l))
        .filter_map(|l| l.split_once(':').map(|(k, _)| k.trim()))
        .filter(|k| !k.is_empty() && !k.contains(' '))
        .map(String::from)
        .collect()
}

/// Every key the agent accepts is in debian/conf/redis-snmp.toml, commented
/// out, exactly once; uncommented, the file is valid TOML with exactly
/// those keys. (That the agent accepts it is checked by running the
/// installed agent on it below.) Needs neither root nor the build.
#[test]
fn shipped_config_shows_every_setting() {
    let text = fs::read_to_string(repo_root().join("debian/conf/redis-snmp.toml")).unwrap();
    // The configuration's module, all its files.
    let mut files: Vec<PathBuf> = fs::read_dir(repo_root().join("src/config"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let source: String = files
        .iter()
        .map(|f| fs::read_to_string(f).unwrap())
        .collect();
    let top = struct_fields(&source, "FileConfig");
    let instance = struct_fields(&source, "FileInstance");
    assert!(top.contains("refresh") && instance.contains("address"));

    let active: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .collect();
    assert!(active.is_empty(), "settings not commented out: {active:?}");

    let value: toml::Table = toml::from_str(&uncomment_settings(&text))
        .unwrap_or_else(|e| panic!("the uncommented configuration is not valid TOML: {e}"));
    // The tables, each with the fields of its struct.
    let tables = [
        ("notifications", "FileNotifications"),
        ("alarms", "FileAlarms"),
        ("puppet", "FilePuppet"),
        ("discovery", "FileDiscovery"),
    ];
    let mut want_top = top.clone();
    want_top.remove("redis");
    want_top.remove("alarm");
    for (key, _) in tables {
        assert!(want_top.remove(key), "FileConfig has no {key}");
    }
    let got_top: BTreeSet<String> = value
        .iter()
        .filter(|(_, v)| !v.is_table() && !v.is_array())
        .map(|(k, _)| k.clone())
        .collect();
    assert_eq!(got_top, want_top, "top-level settings");
    let redis = value
        .get("redis")
        .and_then(|v| v.as_array())
        .expect("a commented [[redis]] table");
    assert_eq!(redis.len(), 1, "one example [[redis]] table");
    let got_instance: BTreeSet<String> = redis[0].as_table().unwrap().keys().cloned().collect();
    assert_eq!(got_instance, instance, "[[redis]] settings");
    let alarm = value
        .get("alarm")
        .and_then(|v| v.as_array())
        .expect("a commented [[alarm]] table");
    assert_eq!(alarm.len(), 1, "one example [[alarm]] table");
    let got_alarm: BTreeSet<String> = alarm[0].as_table().unwrap().keys().cloned().collect();
    assert_eq!(
        got_alarm,
        struct_fields(&source, "FileAlarm"),
        "[[alarm]] settings"
    );
    for (key, name) in tables {
        let table = value
            .get(key)
            .and_then(|v| v.as_table())
            .unwrap_or_else(|| panic!("no commented [{key}] table"));
        let got: BTreeSet<String> = table.keys().cloned().collect();
        assert_eq!(got, struct_fields(&source, name), "[{key}] settings");
    }
    let tables_and_arrays: BTreeSet<&str> = value
        .iter()
        .filter(|(_, v)| v.is_table() || v.is_array())
        .map(|(k, _)| k.as_str())
        .collect();
    assert_eq!(
        tables_and_arrays,
        BTreeSet::from([
            "discovery",
            "notifications",
            "alarms",
            "alarm",
            "puppet",
            "redis"
        ]),
        "tables"
    );
}

/// The drop-in for snmpd sets what lets the service's user into the AgentX
/// socket and nothing else: no access control (views, communities, users),
/// no agentXSocket (the socket stays where snmpd.conf puts it). It says
/// how to undo it, and README.Debian and NEWS (NEWS.Debian) quote its
/// settings and say how to disable it. Needs neither root nor the build.
#[test]
fn snmpd_dropin_is_minimal_and_documented() {
    let text = fs::read_to_string(repo_root().join(SNMPD_DROPIN_SOURCE)).unwrap();
    let settings: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(
        settings, DROPIN_SETTINGS,
        "the settings of {SNMPD_DROPIN_SOURCE}"
    );
    let flat = text
        .lines()
        .map(|l| l.trim_start_matches('#').trim())
        .collect::<Vec<_>>()
        .join(" ");
    for word in [
        "undo",
        "empty",
        "restart snmpd",
        "README.Debian",
        "register any OID",
    ] {
        assert!(
            flat.contains(word),
            "{SNMPD_DROPIN_SOURCE} does not say {word:?}"
        );
    }
    let template_dir = Path::new(SNMPD_DROPIN_TEMPLATE).parent().unwrap();
    let install = fs::read_to_string(repo_root().join("debian/redis-snmp.install")).unwrap();
    assert!(
        install.lines().any(|l| l
            == format!(
                "{SNMPD_DROPIN_SOURCE} {}/",
                &template_dir.display().to_string()[1..]
            )),
        "debian/redis-snmp.install does not install {SNMPD_DROPIN_SOURCE} as the template:\n{install}"
    );
    for doc in ["debian/README.Debian", "debian/NEWS"] {
        let text = fs::read_to_string(repo_root().join(doc)).unwrap();
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for needle in DROPIN_SETTINGS.iter().copied().chain([
            SNMPD_DROPIN,
            "empty",
            "restart snmpd",
            "tcp:",
            "master agentx",
            "any OID",
        ]) {
            assert!(text.contains(needle), "{doc} does not mention {needle:?}");
        }
    }
}

/// What dpkg's own parser says of a changelog-format file: its versions,
/// and its warnings (`badly formatted trailer line`, …).
fn parse_changelog(path: &Path) -> (Vec<String>, String) {
    let out = run(
        "dpkg-parsechangelog",
        &["-l", path.to_str().unwrap(), "--all", "-S", "Version"],
    );
    assert!(
        out.status.success(),
        "dpkg-parsechangelog {}",
        path.display()
    );
    let versions = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(String::from)
        .collect();
    (versions, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// debian/NEWS is read by apt-listchanges and dh_installchangelogs in the
/// changelog's format (Debian Policy 12.7: "the format of the
/// debian/NEWS file is the same as the debian/changelog file";
/// deb-changelog(5)), so dpkg-parsechangelog must read it without a
/// warning, its newest entry must be the package's version, and a copy
/// with a broken trailer line must draw dpkg's warning.
#[test]
fn news_reads_as_a_changelog() {
    let news = repo_root().join("debian/NEWS");
    let (versions, warnings) = parse_changelog(&news);
    assert!(warnings.is_empty(), "debian/NEWS:\n{warnings}");
    let (changelog, _) = parse_changelog(&repo_root().join("debian/changelog"));
    assert_eq!(versions.first(), changelog.first(), "NEWS's newest entry");

    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("NEWS");
    let text = fs::read_to_string(&news).unwrap();
    let text = text.replacen("\n -- ", "\n --", 1);
    fs::write(&broken, text).unwrap();
    let (_, warnings) = parse_changelog(&broken);
    assert!(
        warnings.contains("badly formatted trailer line"),
        "a broken trailer drew no warning: {warnings:?}"
    );
}

// ---------------------------------------------------------------------------
// Build and lintian
// ---------------------------------------------------------------------------

/// `dpkg-buildpackage -us -uc -b` (through scripts/build-deb.sh) from a
/// clean export of HEAD, then lintian on the source and binary packages:
/// no error, no warning (overrides only in debian/redis-snmp.lintian-overrides,
/// each with its reason). Info and pedantic tags are printed, not fatal.
#[test]
fn package_builds_and_passes_lintian() {
    let pkg = package();
    println!("packages in {}", pkg.dir.display());
    run_ok("dpkg-deb", &["--info", pkg.deb.to_str().unwrap()]);
    run_ok("dpkg-deb", &["--contents", pkg.deb.to_str().unwrap()]);

    step("lintian");
    let out = Command::new("lintian")
        .args(["--fail-on", "error,warning", "--display-info", "--pedantic"])
        .arg(&pkg.dsc)
        .arg(&pkg.changes)
        .stdin(Stdio::null())
        .output()
        .expect("running lintian (apt-get install lintian)");
    let text = show("lintian --fail-on error,warning", &out);
    println!("{text}");
    let bad: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("E: ") || l.starts_with("W: "))
        .map(String::from)
        .collect();
    assert!(
        out.status.success() && bad.is_empty(),
        "lintian found errors or warnings: {bad:#?}\n{text}"
    );
}

/// The source package carries every crate of Cargo.lock (vendor/, from the
/// .orig-vendor component tarball of the 3.0 (quilt) format), so that it
/// builds without network, as Debian's builders build (Debian Policy 4.9:
/// the build may not use the network). scripts/build-deb.sh already built
/// the binary package from it in a network namespace of its own with an
/// empty CARGO_HOME (its log says so); here, on the unpacked source
/// package: every registry crate of Cargo.lock is in vendor/, cargo finds
/// them all there with no network and an empty CARGO_HOME, and without
/// vendor/ the same cargo in the same namespace fails (the namespace really
/// has no network, and the crates come from vendor/).
#[test]
fn source_package_builds_without_network() {
    let pkg = package();
    let log = fs::read_to_string(pkg.dir.parent().unwrap().join("build.log")).unwrap_or_default();
    let dsc = fs::read_to_string(&pkg.dsc).unwrap();
    assert!(
        dsc.contains(".orig-vendor.tar."),
        "the .dsc lists no vendor tarball:\n{dsc}"
    );
    let work = tempfile::tempdir().unwrap();
    let src = work.path().join("src");
    let out = Command::new("dpkg-source")
        .arg("-x")
        .arg(&pkg.dsc)
        .arg(&src)
        .stdin(Stdio::null())
        .output()
        .expect("dpkg-source");
    assert!(out.status.success(), "{}", show("dpkg-source -x", &out));
    let lock: toml::Table =
        toml::from_str(&fs::read_to_string(src.join("Cargo.lock")).unwrap()).expect("Cargo.lock");
    let mut missing = Vec::new();
    let mut count = 0;
    for package in lock["package"].as_array().unwrap() {
        let t = package.as_table().unwrap();
        if !t
            .get("source")
            .and_then(|s| s.as_str())
            .is_some_and(|s| s.starts_with("registry+"))
        {
            continue;
        }
        count += 1;
        let dir = format!(
            "{}-{}",
            t["name"].as_str().unwrap(),
            t["version"].as_str().unwrap()
        );
        if !src.join("vendor").join(&dir).join("Cargo.toml").is_file() {
            missing.push(dir);
        }
    }
    assert!(
        missing.is_empty(),
        "not in the source package's vendor/: {missing:?}"
    );
    println!("{count} crates of Cargo.lock in vendor/");

    let empty_home = work.path().join("cargo-home");
    fs::create_dir(&empty_home).unwrap();
    let cargo_fetch = |vendored: bool| {
        let mut cmd = Command::new("unshare");
        cmd.args(["-n", env!("CARGO"), "fetch", "--locked"]);
        if vendored {
            cmd.args([
                "--offline",
                "--config",
                "source.crates-io.replace-with=\"vendored-sources\"",
                "--config",
                "source.vendored-sources.directory=\"vendor\"",
            ]);
        }
        cmd.env("CARGO_HOME", &empty_home)
            .current_dir(&src)
            .stdin(Stdio::null())
            .output()
            .expect("unshare -n cargo fetch")
    };
    let out = cargo_fetch(true);
    assert!(
        out.status.success(),
        "{}",
        show("unshare -n cargo fetch (vendored, empty CARGO_HOME)", &out)
    );
    let out = cargo_fetch(false);
    let text = show("unshare -n cargo fetch (crates.io, empty CARGO_HOME)", &out);
    println!("{text}");
    assert!(
        !out.status.success(),
        "cargo reached crates.io from the build's network namespace:\n{text}"
    );
    assert!(
        log.contains("without network (unshare -n") && log.contains("(empty)"),
        "scripts/build-deb.sh did not build the binary package without network:\n{}",
        tail(&log, 40)
    );
}

// ---------------------------------------------------------------------------
// Install, run, purge
// ---------------------------------------------------------------------------

#[test]
fn package_installs_serves_and_purges_cleanly() {
    let system = take_system();
    let pkg = package();
    let _purge = PurgeOnDrop;

    step("dpkg --install");
    install(&pkg.deb);
    assert_eq!(
        package_state().as_deref(),
        Some(format!("ii {VERSION}").as_str())
    );

    step("the system user");
    let passwd = run_ok("getent", &["passwd", USER]);
    let fields: Vec<&str> = passwd.trim().split(':').collect();
    let uid: u32 = fields[2].parse().unwrap();
    assert!(uid < 1000, "{USER} is not a system user: {passwd}");
    assert_eq!(fields[5], "/nonexistent", "home of {USER}");
    assert_eq!(fields[6], "/usr/sbin/nologin", "shell of {USER}");
    assert_eq!(
        fields[3].parse::<u32>().unwrap(),
        id_of("group", USER),
        "{USER}'s primary group is {USER}"
    );
    assert!(!Path::new("/nonexistent").exists());

    step("files, owners and modes");
    let unit = unit_path();
    assert_meta(BINARY, "root", "root", 0o755);
    assert_meta("/etc/redis-snmp", "root", USER, 0o750);
    assert_meta(CONFFILE, "root", USER, 0o640);
    assert_meta(&unit, "root", "root", 0o644);
    assert_meta(
        "/usr/share/snmp/mibs/REDIS-SERVER-MIB.txt",
        "root",
        "root",
        0o644,
    );
    assert_meta("/usr/share/man/man8/redis-snmp.8.gz", "root", "root", 0o644);
    assert_meta(
        "/usr/share/doc/redis-snmp/README.Debian.gz",
        "root",
        "root",
        0o644,
    );
    let installed_mib = fs::read("/usr/share/snmp/mibs/REDIS-SERVER-MIB.txt").unwrap();
    assert_eq!(installed_mib, fs::read(redis_mib_file()).unwrap());
    let opennms: Vec<PathBuf> = fs::read_dir(repo_root().join("opennms"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    for file in opennms.iter().filter(|p| p.is_file()) {
        let installed = Path::new("/usr/share/redis-snmp/opennms").join(file.file_name().unwrap());
        assert_eq!(
            fs::read(&installed).unwrap_or_else(|e| panic!("{}: {e}", installed.display())),
            fs::read(file).unwrap()
        );
    }
    println!("{} OpenNMS file(s) in the repository", opennms.len());
    let conffiles = run_ok(
        "dpkg-query",
        &["--show", "--showformat=${Conffiles}\\n", PKG],
    );
    let is_conffile = |file: &str| {
        conffiles
            .lines()
            .any(|l| l.trim().starts_with(&format!("{file} ")))
    };
    assert!(
        is_conffile(CONFFILE),
        "{CONFFILE} is not a conffile:\n{conffiles}"
    );
    // The drop-in is made by postinst (so that it can be left out where
    // it would override the administrator's agentXPerms), from the
    // template the package ships: not a conffile, which no maintainer
    // script may leave out or change (Debian Policy 10.7.3).
    assert!(
        !is_conffile(SNMPD_DROPIN),
        "{SNMPD_DROPIN} is a conffile:\n{conffiles}"
    );
    step("redis-snmp kick: its file root's alone, its ledger root's and closed");
    // It names the command run as root by snmptrapd: root's, 0600, and the
    // kick refuses it otherwise; the ledger must be a directory only root
    // enters (the kick refuses one others can).
    assert_meta(KICK_CONFFILE, "root", "root", 0o600);
    assert!(
        is_conffile(KICK_CONFFILE),
        "{KICK_CONFFILE} is not a conffile:\n{conffiles}"
    );
    assert_meta("/var/lib/redis-snmp", "root", "root", 0o755);
    assert_meta(KICK_STATE_DIR, "root", "root", 0o700);
    // The events log's directory README.Debian names, made so that only
    // root may write it and the service's group read it.
    assert_meta("/var/log/puppet-events", "root", USER, 0o2750);
    let status = run_ok(BINARY, &["kick", "--status"]);
    assert!(
        status.starts_with("STARTED") && status.lines().count() == 1,
        "kick --status with the shipped file, before any kick:\n{status}"
    );
    assert_meta(SNMPD_DROPIN_TEMPLATE, "root", "root", 0o644);
    assert_meta(SNMPD_DROPIN, "root", "root", 0o644);
    assert_dropin_as_shipped();
    assert!(
        !Path::new(DEFAULT_FILE).exists(),
        "a fresh install creates no {DEFAULT_FILE}"
    );
    let version = run_ok(BINARY, &["--version"]);
    assert_eq!(version.trim(), "redis-snmp 0.3.0");
    run_ok("man", &["--pager=cat", "redis-snmp"]);

    step("the unit: enabled, accepted by systemd-analyze");
    let wants = "/etc/systemd/system/multi-user.target.wants/redis-snmp.service";
    assert_eq!(
        fs::read_link(wants).unwrap_or_else(|e| panic!("{wants}: {e} (not enabled)")),
        PathBuf::from(&unit)
    );
    // `verify` loads the unit the way the manager would (no running systemd
    // is needed): it checks the syntax, that ExecStart's binary exists and
    // that Documentation= resolves; it prints unknown keys without failing,
    // hence the check for silence.
    let out = run("systemd-analyze", &["verify", &unit]);
    let text = show(&format!("systemd-analyze verify {unit}"), &out);
    println!("{text}");
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "systemd-analyze verify is not happy:\n{text}"
    );
    let security = run_ok("systemd-analyze", &["security", "--offline=yes", &unit]);
    let exposure = security
        .lines()
        .find_map(|l| l.split_once("Overall exposure level for redis-snmp.service: "))
        .and_then(|(_, rest)| rest.split_whitespace().next()?.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no exposure level in:\n{security}"));
    assert!(
        exposure <= 2.0,
        "the sandbox is weaker than expected: exposure {exposure}"
    );
    let unit_text = fs::read_to_string(&unit).unwrap();
    for line in [
        "After=network.target snmpd.service redis-server.service",
        "User=redis-snmp",
        "Restart=on-failure",
        "ExecReload=/bin/kill -HUP $MAINPID",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "ProtectHome=yes",
        "PrivateTmp=yes",
        "CapabilityBoundingSet=",
        "EnvironmentFile=-/etc/default/redis-snmp",
        "ExecStart=/usr/sbin/redis-snmp -n -c /etc/redis-snmp/redis-snmp.toml $DAEMON_OPTS",
        "WantedBy=multi-user.target",
    ] {
        assert!(
            unit_text.lines().any(|l| l == line),
            "the unit lacks {line:?}"
        );
    }

    step("the installed MIB loads (net-snmp, with the SMIv2 base modules)");
    let mibs = format!("{}:/usr/share/snmp/mibs", base_mibs().display());
    let oid = run_ok(
        "snmptranslate",
        &[
            "-M",
            &mibs,
            "-m",
            "REDIS-SERVER-MIB",
            "-On",
            "REDIS-SERVER-MIB::redisConnectedClients.0",
        ],
    );
    assert_eq!(oid.trim(), legacy_oid(1));

    step("the installed agent, as the unit runs it, on the installed configuration with every setting uncommented");
    let redis = Redis::start_with(&["requirepass deb-test-password"]);
    let snmpd = DebianSnmpd::start(SNMPD_DROPIN_DIR);
    snmpd.assert_open_to_the_service_user();
    let work = tempfile::Builder::new()
        .prefix("redis-snmp-deb-run.")
        .tempdir()
        .unwrap();
    fs::set_permissions(work.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let group = id_of("group", USER);
    let password_file = work.path().join("password");
    write_file_mode(&password_file, "deb-test-password\n", 0o640);
    std::os::unix::fs::chown(&password_file, Some(0), Some(group)).unwrap();
    let mut replaced = BTreeSet::new();
    let config: String = uncomment_settings(&fs::read_to_string(CONFFILE).unwrap())
        .lines()
        .map(|line| {
            let key = line.split_once(" = ").map(|(k, _)| k).unwrap_or("");
            let new = match key {
                "agentx_socket" => format!("agentx_socket = \"{}\"", snmpd.agentx_address()),
                "address" => format!("address = \"redis://127.0.0.1:{}\"", redis.port()),
                "username" => "username = \"default\"".to_string(),
                "password_file" => format!("password_file = \"{}\"", password_file.display()),
                // Only with rediss://; the test's Redis speaks no TLS.
                k if k.starts_with("tls_") => format!("# {line} (test: no TLS)"),
                _ => return line.to_string(),
            };
            replaced.insert(key.to_string());
            new
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(
        replaced.len(),
        8,
        "the shipped configuration lacks a setting; found {replaced:?}"
    );
    let config_path = work.path().join("redis-snmp.toml");
    write_file_mode(&config_path, &config, 0o640);
    std::os::unix::fs::chown(&config_path, Some(0), Some(group)).unwrap();
    println!("--- test configuration ---\n{config}");
    let (user, mut argv) = unit_command(&unit_text);
    assert_eq!(user, USER);
    // The unit's command with the test copy of the configuration.
    let c = argv
        .iter()
        .position(|a| a == "-c")
        .expect("-c in ExecStart")
        + 1;
    argv[c] = config_path.display().to_string();
    let log = work.path().join("agent.log");
    let mut agent = start_as(&user, &argv, &log);
    wait_served(&snmpd, &mut agent, &log);
    let name = snmpd.numeric().get_one(&instance_oid(2, 1));
    assert_eq!(
        name.text(),
        "main",
        "redisInstanceName.1 from the configuration"
    );
    agent.terminate(Duration::from_secs(5));
    println!("--- agent log ---\n{}", fs::read_to_string(&log).unwrap());

    drop(snmpd);

    step("reinstalling changes nothing, and opens a /var/agentx that an earlier snmpd left 0700");
    let var_agentx = VarAgentx::locked();
    let uid = id_of("passwd", USER);
    install(&pkg.deb);
    assert_eq!(
        var_agentx.mode(),
        0o755,
        "postinst did not open {AGENTX_DIR}"
    );
    assert_dropin_as_shipped();
    assert_eq!(id_of("passwd", USER), uid, "the user {USER} was made again");
    assert_meta("/etc/redis-snmp", "root", USER, 0o750);
    assert_meta(CONFFILE, "root", USER, 0o640);
    assert!(!Path::new(DEFAULT_FILE).exists());
    install(&pkg.deb);
    assert_eq!(var_agentx.mode(), 0o755);
    assert_dropin_as_shipped();

    step("a -p in DAEMON_OPTS, and a password file with another password: both left, and said so");
    let group = id_of("group", USER);
    let default_with_password = "DAEMON_OPTS=\"-r 5 -p deb-mine\"\n";
    write_file_mode(Path::new(DEFAULT_FILE), default_with_password, 0o644);
    write_file_mode(Path::new(PASSWORD_FILE), "deb-other\n", 0o640);
    std::os::unix::fs::chown(PASSWORD_FILE, Some(0), Some(group)).unwrap();
    let said = install(&pkg.deb);
    assert!(
        said.contains("holds another one"),
        "postinst did not say why it left the password:\n{said}"
    );
    assert_eq!(
        fs::read_to_string(DEFAULT_FILE).unwrap(),
        default_with_password
    );
    assert_eq!(fs::read_to_string(PASSWORD_FILE).unwrap(), "deb-other\n");
    step("... and with the same password there: DAEMON_OPTS names the file instead");
    write_file_mode(Path::new(PASSWORD_FILE), "deb-mine\n", 0o640);
    let said = install(&pkg.deb);
    assert!(said.contains("moved the Redis password"), "{said}");
    assert_eq!(
        fs::read_to_string(DEFAULT_FILE).unwrap(),
        format!("DAEMON_OPTS=\"-r 5 --password-file {PASSWORD_FILE}\"\n")
    );
    assert_eq!(fs::read_to_string(PASSWORD_FILE).unwrap(), "deb-mine\n");
    assert_meta(DEFAULT_FILE, "root", "root", 0o644);
    assert_meta(PASSWORD_FILE, "root", USER, 0o640);
    fs::remove_file(DEFAULT_FILE).unwrap();
    fs::remove_file(PASSWORD_FILE).unwrap();

    step("the administrator empties the drop-in: a reinstall keeps it so and leaves /var/agentx alone");
    fs::write(SNMPD_DROPIN, "").unwrap();
    fs::set_permissions(AGENTX_DIR, fs::Permissions::from_mode(0o700)).unwrap();
    install(&pkg.deb);
    assert_eq!(
        fs::read_to_string(SNMPD_DROPIN).unwrap(),
        "",
        "postinst did not keep the administrator's empty {SNMPD_DROPIN}"
    );
    assert_eq!(
        var_agentx.mode(),
        0o700,
        "postinst opened {AGENTX_DIR} although the drop-in is emptied"
    );

    step("without the drop-in, snmpd keeps the AgentX socket to root and the agent is refused");
    // README.Debian says what the agent then logs, and that it retries.
    let closed = DebianSnmpd::start(SNMPD_DROPIN_DIR);
    let (dir, socket) = closed.socket_perms();
    assert_eq!(
        (dir, socket.1),
        ((0, 0, 0o700), 0),
        "net-snmp's defaults: a 0700 root:root directory, a socket of group root"
    );
    argv.extend(["-x".to_string(), closed.agentx_address()]);
    let log = work.path().join("agent-refused.log");
    let mut agent = start_as(&user, &argv, &log);
    let refused = wait_until(Duration::from_secs(10), || {
        fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("Permission denied")
    });
    let text = fs::read_to_string(&log).unwrap_or_default();
    assert!(
        refused && agent.is_running() && !log_shows_registered(&text),
        "expected the agent to be refused and to keep retrying:\n{text}"
    );
    agent.terminate(Duration::from_secs(5));
    println!("--- agent log ---\n{text}");
    drop(closed);

    purge_and_check(&system, &[]);
    drop(var_agentx);
}

/// A file of snmpd's configuration changed for a test, and put back as it
/// was (contents, or absence) when dropped.
struct ChangedFile {
    path: &'static str,
    before: Option<Vec<u8>>,
}

impl ChangedFile {
    fn write(path: &'static str, contents: &str) -> ChangedFile {
        let before = fs::read(path).ok();
        fs::write(path, contents).unwrap_or_else(|e| panic!("{path}: {e}"));
        ChangedFile { path, before }
    }
}

impl Drop for ChangedFile {
    fn drop(&mut self) {
        let done = match &self.before {
            Some(bytes) => fs::write(self.path, bytes),
            None => fs::remove_file(self.path),
        };
        if let Err(e) = done {
            eprintln!("putting back {}: {e}", self.path);
        }
    }
}

/// The administrator's own snmpd settings win over the package's: with an
/// agentXPerms line of theirs (here in a file of snmpd.conf.d, for the
/// group Debian-snmp) postinst makes no drop-in, which snmpd would read
/// after theirs and obey instead (net-snmp's last agentXPerms wins), and
/// says to add redis-snmp to that group; with no "master agentx" in
/// snmpd.conf it says so and does not turn it on (the drop-in has no such
/// line). A private snmpd on the installed snmpd.conf.d then gives its
/// AgentX socket the administrator's group.
#[test]
fn snmpd_settings_of_the_administrator_are_left_alone() {
    let system = take_system();
    let pkg = package();
    let _purge = PurgeOnDrop;
    let snmpd_conf = "/etc/snmp/snmpd.conf";
    // Debian's line is "master  agentx"; net-snmp reads tokens in any case.
    let is_master = |line: &str| {
        line.split_whitespace()
            .map(str::to_ascii_lowercase)
            .collect::<Vec<_>>()
            == ["master", "agentx"]
    };
    let original = fs::read_to_string(snmpd_conf)
        .unwrap_or_else(|e| panic!("{snmpd_conf}: {e} (apt-get install snmpd)"));
    assert!(
        original.lines().any(is_master),
        "Debian's {snmpd_conf} has \"master agentx\""
    );
    let without_master: String = original
        .lines()
        .map(|l| {
            if is_master(l) {
                format!("#{l} (test: AgentX master off)\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    step("the administrator's agentXPerms in snmpd.conf.d, and no master agentx in snmpd.conf");
    let _master_off = ChangedFile::write(snmpd_conf, &without_master);
    let admin_perms = "agentXPerms 0660 0755 -1 Debian-snmp";
    let _admin = ChangedFile::write(
        "/etc/snmp/snmpd.conf.d/local-agentx.conf",
        &format!("# the administrator's, for other subagents\n{admin_perms}\n"),
    );

    let said = install(&pkg.deb);
    assert!(
        fs::symlink_metadata(SNMPD_DROPIN).is_err(),
        "postinst made {SNMPD_DROPIN} although the administrator sets agentXPerms"
    );
    for needle in [
        admin_perms,
        "adduser redis-snmp GROUP",
        SNMPD_DROPIN_TEMPLATE,
        "not an AgentX master",
        "add \"master agentx\"",
    ] {
        assert!(
            said.contains(needle),
            "postinst did not say {needle:?}:\n{said}"
        );
    }
    assert_eq!(
        fs::read_to_string(snmpd_conf).unwrap(),
        without_master,
        "postinst changed {snmpd_conf}"
    );

    step("snmpd, on the installed snmpd.conf.d, obeys the administrator's agentXPerms");
    let snmpd = DebianSnmpd::start(SNMPD_DROPIN_DIR);
    let (_, socket) = snmpd.socket_perms();
    assert_eq!(
        (socket.1, socket.2),
        (id_of("group", SNMPD_USER), 0o660),
        "the AgentX socket is not the administrator's group's"
    );
    drop(snmpd);

    step("a reinstall still makes no drop-in");
    install(&pkg.deb);
    assert!(fs::symlink_metadata(SNMPD_DROPIN).is_err());

    drop(_admin);
    drop(_master_off);
    purge_and_check(&system, &[]);
}

/// The installed drop-in is the repository's, byte for byte.
fn assert_dropin_as_shipped() {
    assert_eq!(
        fs::read_to_string(SNMPD_DROPIN).unwrap_or_else(|e| panic!("{SNMPD_DROPIN}: {e}")),
        fs::read_to_string(repo_root().join(SNMPD_DROPIN_SOURCE)).unwrap(),
        "{SNMPD_DROPIN} is not {SNMPD_DROPIN_SOURCE}"
    );
}

// ---------------------------------------------------------------------------
// Upgrade from the Perl agent's package
// ---------------------------------------------------------------------------

/// The Perl agent's /etc/default/redis-snmp, as this stand-in ships it.
const OLD_DEFAULT: &str =
    "# Options for the redis-snmp agent (test stand-in for the Perl package's file)\n\
                           DAEMON_OPTS=\"\"\n";

/// Builds a stand-in for the Perl agent's package, `redis-snmp_0.2-1_all.deb`:
/// the Perl script as /usr/sbin/redis-snmp (where the Perl package put it),
/// the MIB, an LSB init script linked into the runlevels by its postinst
/// (update-rc.d, as dh_installinit did) and stopped by its prerm, and
/// /etc/default/redis-snmp with DAEMON_OPTS. With `conffiles`, the two files
/// in /etc are conffiles; without, they are plain files, as in a package
/// built by debhelper at compat level 1 and 2, which did not flag /etc.
fn old_package(dir: &Path, conffiles: bool) -> PathBuf {
    let root = dir.join("old-root");
    let file = |path: &str, text: &str, mode: u32| {
        let p = root.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        write_file_mode(&p, text, mode);
    };
    file(
        "DEBIAN/control",
        "Package: redis-snmp\n\
         Version: 0.2-1\n\
         Architecture: all\n\
         Maintainer: redis-snmp tests <tests@invalid.example>\n\
         Section: admin\n\
         Priority: optional\n\
         Description: SNMP agent for redis-server (test stand-in)\n \
         A stand-in for the Perl redis-snmp package, for upgrade tests.\n",
        0o644,
    );
    if conffiles {
        file(
            "DEBIAN/conffiles",
            "/etc/init.d/redis-snmp\n/etc/default/redis-snmp\n",
            0o644,
        );
    }
    file(
        "DEBIAN/postinst",
        "#!/bin/sh\nset -e\n\
         if [ \"$1\" = configure ] && [ -x /etc/init.d/redis-snmp ]; then\n\
         \tupdate-rc.d redis-snmp defaults >/dev/null\nfi\n",
        0o755,
    );
    file(
        "DEBIAN/prerm",
        "#!/bin/sh\nset -e\n\
         if [ -x /etc/init.d/redis-snmp ]; then\n\t/etc/init.d/redis-snmp stop\nfi\n",
        0o755,
    );
    file(
        "DEBIAN/postrm",
        "#!/bin/sh\nset -e\n\
         if [ \"$1\" = purge ]; then\n\tupdate-rc.d redis-snmp remove >/dev/null\nfi\n",
        0o755,
    );
    file(
        "etc/init.d/redis-snmp",
        "#!/bin/sh\n\
         ### BEGIN INIT INFO\n\
         # Provides:          redis-snmp\n\
         # Required-Start:    $syslog\n\
         # Required-Stop:     $syslog\n\
         # Default-Start:     2 3 4 5\n\
         # Default-Stop:      0 1 6\n\
         # Short-Description: Redis SNMP agent (test stand-in)\n\
         ### END INIT INFO\n\
         # The real script ran /usr/sbin/redis-snmp --daemon-pid ... $DAEMON_OPTS.\n\
         [ -f /etc/default/redis-snmp ] && . /etc/default/redis-snmp\n\
         case \"$1\" in\n\
         \tstart|stop|restart|force-reload|status) exit 0 ;;\n\
         \t*) echo \"Usage: $0 {start|stop|restart|force-reload|status}\" >&2; exit 1 ;;\n\
         esac\n",
        0o755,
    );
    file("etc/default/redis-snmp", OLD_DEFAULT, 0o644);
    file(
        "usr/sbin/redis-snmp",
        "#!/usr/bin/perl\n# test stand-in for the Perl agent\nexit 0;\n",
        0o755,
    );
    file(
        "usr/share/snmp/mibs/REDIS-SERVER-MIB.txt",
        "-- test stand-in for the Perl agent's REDIS-SERVER-MIB\n",
        0o644,
    );
    let deb = dir.join("redis-snmp_0.2-1_all.deb");
    run_ok(
        "dpkg-deb",
        &[
            "--root-owner-group",
            "--build",
            root.to_str().unwrap(),
            deb.to_str().unwrap(),
        ],
    );
    deb
}

fn rc_links() -> Vec<String> {
    let mut links = Vec::new();
    for rc in ["0", "1", "2", "3", "4", "5", "6", "S"] {
        if let Ok(entries) = fs::read_dir(format!("/etc/rc{rc}.d")) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.len() > 3 && &name[3..] == "redis-snmp" {
                    links.push(e.path().display().to_string());
                }
            }
        }
    }
    links
}

/// Old package installed, /etc/default/redis-snmp (and, for plain files,
/// the init script) modified by the operator, then `dpkg -i` of ours.
fn upgrade_from_perl_package(conffiles: bool) {
    let system = take_system();
    let pkg = package();
    let _purge = PurgeOnDrop;
    let work = tempfile::Builder::new()
        .prefix("redis-snmp-deb-upgrade.")
        .tempdir()
        .unwrap();

    step(&format!(
        "the Perl agent's package (stand-in, /etc files {})",
        if conffiles {
            "as conffiles"
        } else {
            "as plain files"
        }
    ));
    let old = old_package(work.path(), conffiles);
    install(&old);
    assert_eq!(package_state().as_deref(), Some("ii 0.2-1"));
    assert!(
        !rc_links().is_empty(),
        "the old postinst made no rc.d links"
    );
    println!("rc.d links: {:?}", rc_links());

    step("the operator edits /etc/default/redis-snmp (and the init script), with a Redis password");
    let password = "deb-upgrade-Pw";
    let redis = Redis::start_with(&[&format!("requirepass {password}")]);
    // A poll every 2 seconds instead of the default 10, to see -r applied;
    // the password as the Perl agent took it, in two of the spellings the
    // agent accepts (postinst knows them all; see README.Debian).
    let (password_option, kept_options): (String, &[&str]) = if conffiles {
        (format!("-np {password}"), &["-n"])
    } else {
        (format!("--password={password}"), &[])
    };
    let comment = "# Options for the redis-snmp agent, edited by the operator\n";
    let operator_options = format!("-h 127.0.0.1 -P {} -r 2", redis.port());
    let operator_default =
        format!("{comment}DAEMON_OPTS=\"{operator_options} {password_option}\"\n");
    fs::write(DEFAULT_FILE, &operator_default).unwrap();
    fs::set_permissions(DEFAULT_FILE, fs::Permissions::from_mode(0o644)).unwrap();
    let mut operator_script = fs::read_to_string("/etc/init.d/redis-snmp").unwrap();
    if !conffiles {
        operator_script.push_str("# edited by the operator\n");
        fs::write("/etc/init.d/redis-snmp", &operator_script).unwrap();
    }

    // The Perl agent ran as root, and so could use the socket of an snmpd
    // that left /var/agentx as net-snmp makes it by default.
    let var_agentx = VarAgentx::locked();

    step(&format!("upgrade: dpkg --install {}", pkg.deb.display()));
    let said = install(&pkg.deb);
    assert_eq!(
        package_state().as_deref(),
        Some(format!("ii {VERSION}").as_str())
    );
    // The operator's file survives, but for the password, which moved to
    // the password file, named by --password-file at the end of
    // DAEMON_OPTS; the file keeps its mode.
    let mut kept = operator_options.clone();
    for option in kept_options {
        kept.push(' ');
        kept.push_str(option);
    }
    assert_eq!(
        fs::read_to_string(DEFAULT_FILE).unwrap_or_else(|e| panic!("{DEFAULT_FILE}: {e}")),
        format!("{comment}DAEMON_OPTS=\"{kept} --password-file {PASSWORD_FILE}\"\n"),
        "the operator's {DEFAULT_FILE} did not survive the upgrade, or kept its password"
    );
    assert_meta(DEFAULT_FILE, "root", "root", 0o644);
    assert_eq!(
        fs::read_to_string(PASSWORD_FILE).unwrap_or_else(|e| panic!("{PASSWORD_FILE}: {e}")),
        format!("{password}\n"),
        "the password did not move to {PASSWORD_FILE}"
    );
    assert_meta(PASSWORD_FILE, "root", USER, 0o640);
    assert!(
        said.contains("moved the Redis password") && !said.contains(password),
        "postinst did not say that it moved the password (or showed it):\n{said}"
    );
    // The init script is gone. dpkg-maintscript-helper's rm_conffile keeps
    // a copy, as .dpkg-bak, of one that differs from the old package's
    // conffile: the operator's edit, or any script that was no conffile.
    let backup = "/etc/init.d/redis-snmp.dpkg-bak";
    if conffiles {
        assert!(fs::symlink_metadata(backup).is_err(), "{backup} exists");
    } else {
        assert_eq!(
            fs::read_to_string(backup).unwrap_or_else(|e| panic!("{backup}: {e}")),
            operator_script,
            "{backup} is not the operator's init script"
        );
    }
    for gone in [
        "/etc/init.d/redis-snmp",
        "/etc/init.d/redis-snmp.dpkg-remove",
        "/etc/init.d/redis-snmp.dpkg-backup",
        "/etc/default/redis-snmp.dpkg-preserve",
        "/usr/bin/redis-snmp",
    ] {
        assert!(
            fs::symlink_metadata(gone).is_err(),
            "{gone} exists after the upgrade"
        );
    }
    assert_eq!(rc_links(), Vec::<String>::new(), "rc.d links left");
    let binary = fs::read(BINARY).unwrap();
    assert!(
        binary.starts_with(b"\x7fELF"),
        "{BINARY} is not the new binary"
    );
    assert_eq!(run_ok(BINARY, &["--version"]).trim(), "redis-snmp 0.3.0");
    let mib = fs::read_to_string("/usr/share/snmp/mibs/REDIS-SERVER-MIB.txt").unwrap();
    assert!(
        mib.contains("redisInstanceTable"),
        "the MIB was not replaced"
    );
    assert!(user_exists(USER));
    assert_meta(CONFFILE, "root", USER, 0o640);
    assert_meta("/etc/redis-snmp", "root", USER, 0o750);
    assert!(
        fs::read_link("/etc/systemd/system/multi-user.target.wants/redis-snmp.service").is_ok(),
        "the service is not enabled after the upgrade"
    );
    run_ok(
        "dpkg-query",
        &["--show", "--showformat=${Conffiles}\\n", PKG],
    );

    step("the upgrade let the service into snmpd: the drop-in, /var/agentx opened");
    assert_dropin_as_shipped();
    assert_eq!(
        var_agentx.mode(),
        0o755,
        "postinst did not open {AGENTX_DIR}"
    );
    // No manual step: a private snmpd like Debian's, on the installed
    // snmpd.conf.d, lets the service's user in.
    let snmpd = DebianSnmpd::start(SNMPD_DROPIN_DIR);
    snmpd.assert_open_to_the_service_user();

    step("the unit passes the operator's DAEMON_OPTS to the new agent");
    let unit = fs::read_to_string(unit_path()).unwrap();
    let (user, mut argv) = unit_command(&unit);
    let port = redis.port().to_string();
    assert_eq!(
        argv,
        [
            BINARY,
            "-n",
            "-c",
            CONFFILE,
            "-h",
            "127.0.0.1",
            "-P",
            port.as_str(),
            "-r",
            "2"
        ]
        .into_iter()
        .chain(kept_options.iter().copied())
        .chain(["--password-file", PASSWORD_FILE])
        .collect::<Vec<_>>(),
        "the unit's command line"
    );
    // The installed configuration (every setting commented out) says the
    // AgentX master is /var/agentx/master; the test's snmpd is elsewhere.
    argv.extend(["-x".to_string(), snmpd.agentx_address()]);
    let log = work.path().join("agent.log");
    let mut agent = start_as(&user, &argv, &log);
    wait_served(&snmpd, &mut agent, &log);
    let address = snmpd.numeric().get_one(&instance_oid(3, 1));
    assert_eq!(
        address.text(),
        format!("127.0.0.1:{}", redis.port()),
        "redisInstanceAddress.1: -h/-P of DAEMON_OPTS"
    );
    // Three polls in 9 s: every 2 s, as -r 2 says (every 10 s, the
    // default, would take 20 s).
    let polls_ok = instance_oid(8, 1);
    let mut polls = String::new();
    let fast = wait_until(Duration::from_secs(9), || {
        polls = snmpd.numeric().get_one(&polls_ok).value;
        polls.parse::<u32>().is_ok_and(|n| n >= 3)
    });
    assert!(
        fast,
        "redisInstancePollsOk.1 is {polls}: -r 2 of DAEMON_OPTS not applied"
    );
    println!("redisInstancePollsOk.1 = {polls}: -r 2 applies");
    agent.terminate(Duration::from_secs(5));
    let agent_log = fs::read_to_string(&log).unwrap();
    println!("--- agent log ---\n{agent_log}");
    // Up (wait_served) against a Redis with requirepass: the agent
    // authenticated with the moved password; and it gave no warning about
    // a password on its command line.
    assert!(
        !agent_log.contains("visible to every user"),
        "the agent still got a password on its command line:\n{agent_log}"
    );
    drop(snmpd);

    purge_and_check(&system, &[PASSWORD_FILE]);
    drop(var_agentx);
}

#[test]
fn upgrade_from_perl_package_with_conffiles() {
    upgrade_from_perl_package(true);
}

#[test]
fn upgrade_from_perl_package_with_plain_files() {
    upgrade_from_perl_package(false);
}

// ---------------------------------------------------------------------------
// Licences of the crates linked in, vendored sources
// ---------------------------------------------------------------------------

/// What identifies the text of each licence that the crates name (SPDX
/// identifiers, as Cargo.toml's `license` uses them): a sentence of it.
fn licence_marker(id: &str) -> Option<&'static str> {
    Some(match id {
        "Apache-2.0" => "Apache License",
        "MIT" => "Permission is hereby granted, free of charge",
        "ISC" => "Permission to use, copy, modify, and/or distribute this software",
        "BSD-2-Clause" | "BSD-3-Clause" => "Redistribution and use in source and binary forms",
        "BSL-1.0" => "Boost Software License",
        "Zlib" => "This software is provided 'as-is'",
        "Unlicense" => "This is free and unencumbered software",
        "Unicode-3.0" => "UNICODE LICENSE V3",
        "LGPL-2.1-or-later" => "GNU Lesser General Public License",
        "LLVM-exception" => "LLVM Exceptions to the Apache 2.0 License",
        _ => return None,
    })
}

/// Whether the licence texts `texts` satisfy the SPDX expression `expr`
/// (SPDX 2.3 annex D: "WITH" binds tightest, then "AND", then "OR";
/// Cargo's old "A/B" is "A OR B"): every licence of an AND, one of an
/// OR, a licence and its exception for a WITH. Err names an identifier
/// without a known text.
fn texts_satisfy(expr: &str, texts: &str) -> Result<bool, String> {
    fn has(id: &str, texts: &str) -> Result<bool, String> {
        let marker = licence_marker(id).ok_or_else(|| format!("unknown licence {id:?}"))?;
        Ok(texts
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
            .contains(&marker.to_lowercase()))
    }
    fn or(tokens: &[String], pos: &mut usize, texts: &str) -> Result<bool, String> {
        let mut any = and(tokens, pos, texts)?;
        while tokens.get(*pos).is_some_and(|t| t == "OR") {
            *pos += 1;
            any |= and(tokens, pos, texts)?;
        }
        Ok(any)
    }
    fn and(tokens: &[String], pos: &mut usize, texts: &str) -> Result<bool, String> {
        let mut all = with(tokens, pos, texts)?;
        while tokens.get(*pos).is_some_and(|t| t == "AND") {
            *pos += 1;
            all &= with(tokens, pos, texts)?;
        }
        Ok(all)
    }
    fn with(tokens: &[String], pos: &mut usize, texts: &str) -> Result<bool, String> {
        let token = tokens.get(*pos).ok_or("expression ends early")?.clone();
        *pos += 1;
        let base = if token == "(" {
            let inner = or(tokens, pos, texts)?;
            if tokens.get(*pos).map(String::as_str) != Some(")") {
                return Err("unbalanced parenthesis".into());
            }
            *pos += 1;
            inner
        } else {
            has(&token, texts)?
        };
        if tokens.get(*pos).is_some_and(|t| t == "WITH") {
            let exception = tokens.get(*pos + 1).ok_or("WITH without exception")?;
            *pos += 2;
            return Ok(base && has(exception, texts)?);
        }
        Ok(base)
    }
    let tokens: Vec<String> = expr
        .replace('/', " OR ")
        .replace('(', " ( ")
        .replace(')', " ) ")
        .split_whitespace()
        .map(String::from)
        .collect();
    let mut pos = 0;
    let ok = or(&tokens, &mut pos, texts)?;
    if pos != tokens.len() {
        return Err(format!("cannot read {expr:?}"));
    }
    Ok(ok)
}

/// The licence identifiers of an SPDX expression, as copyright-format 1.0
/// names them in debian/copyright ("-or-later" is "+"; an exception
/// "Apache-2.0 with LLVM exception").
fn dep5_licences(expr: &str) -> BTreeSet<String> {
    let tokens: Vec<String> = expr
        .replace(['/', '(', ')'], " ")
        .split_whitespace()
        .map(String::from)
        .collect();
    let mut names = BTreeSet::new();
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        if t == "OR" || t == "AND" {
            i += 1;
            continue;
        }
        let mut name = match t.strip_suffix("-or-later") {
            Some(base) => format!("{}+", base.strip_suffix(".0").unwrap_or(base)),
            None => t.clone(),
        };
        if tokens.get(i + 1).is_some_and(|w| w == "WITH") {
            let exception = tokens[i + 2].trim_end_matches("-exception");
            name = format!("{name} with {exception} exception");
            i += 2;
        }
        names.insert(name);
        i += 1;
    }
    names
}

/// The crates linked into the binary, as `cargo tree` (not `cargo
/// metadata`, which debian/crate-licenses.sh reads) sees the release
/// build: the normal and build dependencies for the host, with their
/// licence expression. Without the root package.
fn linked_crates() -> ByCrate {
    let out = Command::new(env!("CARGO"))
        .args([
            "tree",
            "--locked",
            "--offline",
            "--edges",
            "normal,build",
            "--prefix",
            "none",
            "--format",
            "{p}|{l}",
        ])
        .current_dir(repo_root())
        .stdin(Stdio::null())
        .output()
        .expect("running cargo tree");
    assert!(out.status.success(), "{}", show("cargo tree", &out));
    let mut crates = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some((package, licence)) = line.split_once('|') else {
            continue;
        };
        let mut words = package.split_whitespace();
        let (Some(name), Some(version)) = (words.next(), words.next()) else {
            continue;
        };
        if name == PKG {
            continue;
        }
        let version = version.trim_start_matches('v').to_string();
        // A crate seen before ends with "(*)".
        let licence = licence.trim().trim_end_matches("(*)").trim();
        crates.insert((name.to_string(), version), licence.to_string());
    }
    assert!(crates.len() > 50, "cargo tree found only {crates:?}");
    crates
}

/// Something for each crate, by name and version.
type ByCrate = BTreeMap<(String, String), String>;

/// Sections of crate-licenses: for each "Crate: NAME VERSION" of a licence
/// file's header, the texts of its files; and the licence of each crate of
/// the list at the top.
fn read_crate_licenses(text: &str) -> (ByCrate, ByCrate) {
    let mut listed = BTreeMap::new();
    let mut texts: BTreeMap<(String, String), String> = BTreeMap::new();
    let rule = format!("{}\n", "-".repeat(79));
    let mut parts = text.split(rule.as_str());
    let head = parts.next().unwrap_or("");
    let key = |line: &str| {
        let mut w = line.split_whitespace();
        (
            w.next().unwrap_or("").to_string(),
            w.next().unwrap_or("").to_string(),
        )
    };
    let mut lines = head.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(krate) = line.strip_prefix("Crate: ") {
            let licence = lines
                .next()
                .and_then(|l| l.strip_prefix("License: "))
                .unwrap_or("");
            listed.insert(key(krate), licence.to_string());
        }
    }
    for part in parts {
        let Some(krate) = part.lines().next().and_then(|l| l.strip_prefix("Crate: ")) else {
            continue;
        };
        texts.entry(key(krate)).or_default().push_str(part);
    }
    (listed, texts)
}

/// What is wrong with crate-licenses and debian/copyright for `crates`
/// (cargo tree's): every crate listed with its licence, the text of its
/// licence (one of each choice, all of each conjunction) shipped from its
/// own licence files, and a Files paragraph vendor/NAME-VERSION/* in
/// debian/copyright whose licences each have a stand-alone License
/// paragraph (copyright-format 1.0, which lintian checks too:
/// missing-license-paragraph-in-dep5-copyright).
fn licence_problems(crates: &ByCrate, crate_licenses: &str, copyright: &str) -> Vec<String> {
    let (listed, texts) = read_crate_licenses(crate_licenses);
    let paragraphs: Vec<BTreeMap<String, String>> = copyright
        .split("\n\n")
        .map(|p| {
            let mut fields = BTreeMap::new();
            for line in p.lines() {
                if line.starts_with([' ', '\t']) {
                    continue;
                }
                if let Some((k, v)) = line.split_once(':') {
                    fields.insert(k.to_string(), v.trim().to_string());
                }
            }
            fields
        })
        .collect();
    let standalone: BTreeSet<&str> = paragraphs
        .iter()
        .filter(|p| !p.contains_key("Files") && !p.contains_key("Format"))
        .filter_map(|p| p.get("License").map(String::as_str))
        .collect();
    let mut problems = Vec::new();
    for ((name, version), licence) in crates {
        let id = format!("{name} {version}");
        match listed.get(&(name.clone(), version.clone())) {
            None => problems.push(format!("{id}: not in crate-licenses")),
            Some(l) if l != licence => problems.push(format!(
                "{id}: crate-licenses says {l:?}, cargo {licence:?}"
            )),
            Some(_) => {}
        }
        let shipped = texts
            .get(&(name.clone(), version.clone()))
            .map(String::as_str)
            .unwrap_or("");
        match texts_satisfy(licence, shipped) {
            Ok(true) => {}
            Ok(false) => problems.push(format!("{id}: the text of {licence:?} is not shipped")),
            Err(e) => problems.push(format!("{id}: {e}")),
        }
        let files = format!("vendor/{name}-{version}/*");
        match paragraphs
            .iter()
            .find(|p| p.get("Files").is_some_and(|f| f == &files))
        {
            None => problems.push(format!("{id}: no \"Files: {files}\" in debian/copyright")),
            Some(p) => {
                let field = p.get("License").cloned().unwrap_or_default();
                for name in dep5_licences(licence) {
                    if !field.contains(&name) {
                        problems.push(format!("{id}: License: {field:?} lacks {name:?}"));
                    }
                    if !standalone.contains(name.as_str()) {
                        problems.push(format!(
                            "{id}: no License paragraph for {name:?} in debian/copyright"
                        ));
                    }
                }
            }
        }
    }
    problems
}

/// Every crate linked into /usr/sbin/redis-snmp (cargo tree's release
/// graph) has its licence named in the package's copyright file and the
/// text of that licence shipped in /usr/share/doc/redis-snmp/
/// crate-licenses.gz, from the crate's own licence files (Debian Policy
/// 12.5: the copyright file carries the licences of what the package
/// contains, verbatim). Checked on the built .deb; then on a copy with
/// one crate's texts removed, which must fail.
#[test]
fn crate_licences_are_named_and_shipped() {
    let pkg = package();
    let crates = linked_crates();
    let root = tempfile::tempdir().unwrap();
    run_ok(
        "dpkg-deb",
        &[
            "--extract",
            pkg.deb.to_str().unwrap(),
            root.path().to_str().unwrap(),
        ],
    );
    let doc = root.path().join("usr/share/doc/redis-snmp");
    let gz = doc.join("crate-licenses.gz");
    let out = run("zcat", &[gz.to_str().unwrap()]);
    assert!(out.status.success(), "{}", show("zcat", &out));
    let crate_licenses = String::from_utf8(out.stdout).unwrap();
    let copyright = fs::read_to_string(doc.join("copyright")).unwrap();
    let problems = licence_problems(&crates, &crate_licenses, &copyright);
    assert!(
        problems.is_empty(),
        "licences of the {} linked crates:\n{}",
        crates.len(),
        problems.join("\n")
    );
    println!(
        "{} crates: each named in debian/copyright, its licence texts shipped",
        crates.len()
    );
    // ring is under Apache-2.0 AND ISC (and its BoringSSL parts): both
    // texts are needed. Without its files, the check must fail.
    let ring = crates
        .keys()
        .find(|(name, _)| name == "ring")
        .expect("ring is linked (rustls)")
        .clone();
    let header = format!("Crate: {} {}\n", ring.0, ring.1);
    let rule = "-".repeat(79);
    let broken: String = crate_licenses
        .split(&format!("{rule}\n"))
        .filter(|part| !part.starts_with(&header))
        .collect::<Vec<_>>()
        .join(&format!("{rule}\n"));
    let problems = licence_problems(&crates, &broken, &copyright);
    assert!(
        problems.iter().any(|p| p.starts_with("ring ")),
        "removing ring's licence files went unnoticed: {problems:?}"
    );
    let without_isc = copyright.replace("\nLicense: ISC\n", "\nLicense: ISC-removed\n");
    let problems = licence_problems(&crates, &crate_licenses, &without_isc);
    assert!(
        problems
            .iter()
            .any(|p| p.contains("no License paragraph for \"ISC\"")),
        "removing the ISC License paragraph went unnoticed: {problems:?}"
    );
}

/// The generator fails, rather than ship a crate without its licence
/// text: debian/crate-licenses.sh on a `cargo metadata` whose one
/// dependency has no licence file. Needs neither root nor the build.
#[test]
fn crate_licenses_script_refuses_a_crate_without_licence_file() {
    let dir = tempfile::tempdir().unwrap();
    let dep = dir.path().join("nolicence-1.0.0");
    fs::create_dir(&dep).unwrap();
    fs::write(dep.join("Cargo.toml"), "[package]\n").unwrap();
    let metadata = format!(
        r#"{{"packages": [
            {{"id": "root", "name": "redis-snmp", "version": "0.3.0", "license": "GPL-2.0-or-later",
              "license_file": null, "manifest_path": "/nonexistent/Cargo.toml"}},
            {{"id": "dep", "name": "nolicence", "version": "1.0.0", "license": "MIT",
              "license_file": null, "manifest_path": "{}/Cargo.toml"}}],
          "resolve": {{"root": "root", "nodes": [
            {{"id": "root", "deps": [{{"pkg": "dep", "dep_kinds": [{{"kind": null}}]}}]}},
            {{"id": "dep", "deps": []}}]}}}}"#,
        dep.display()
    );
    let run_script = |metadata: &str| {
        let mut child = Command::new("sh")
            .arg(repo_root().join("debian/crate-licenses.sh"))
            .arg(dir.path().join("out"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(metadata.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let out = run_script(&metadata);
    let text = show("debian/crate-licenses.sh", &out);
    assert!(
        !out.status.success() && text.contains("nolicence-1.0.0"),
        "the script accepted a crate without licence file:\n{text}"
    );
    assert!(!dir.path().join("out").exists());
    // With its licence file, the same input passes and ships it.
    fs::write(
        dep.join("LICENSE-MIT"),
        "Permission is hereby granted, free of charge, ...\n",
    )
    .unwrap();
    let out = run_script(&metadata);
    assert!(
        out.status.success(),
        "{}",
        show("debian/crate-licenses.sh", &out)
    );
    let written = fs::read_to_string(dir.path().join("out")).unwrap();
    assert!(written.contains("Crate: nolicence 1.0.0\nLicense: MIT\nFile: LICENSE-MIT\n"));
    assert!(
        !written.contains("redis-snmp 0.3.0"),
        "the root is no dependency"
    );
}
