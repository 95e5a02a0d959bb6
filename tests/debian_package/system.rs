//! The harness of tests/debian_package.rs: commands, the package built once
//! per commit, the system under test (one test at a time, nothing left
//! behind), and the files and users the package makes.

use super::*;
use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

// ---------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------

pub fn show(what: &str, out: &Output) -> String {
    format!(
        "$ {what} → {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs a command (stdin from /dev/null, non-interactive for debconf).
pub fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("running {program}: {e}"))
}

/// Runs a command, prints what it said, panics unless it succeeded.
pub fn run_ok(program: &str, args: &[&str]) -> String {
    let out = run(program, args);
    let text = show(&format!("{program} {}", args.join(" ")), &out);
    println!("{text}");
    assert!(out.status.success(), "failed:\n{text}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn step(message: &str) {
    println!("\n==> {message}");
}

pub fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

/// Fails the test (it does not skip) when not run as root.
pub fn require_root() {
    assert!(
        is_root(),
        "tests/debian_package.rs installs, upgrades and purges the redis-snmp \
         Debian package and creates a system user: it must run as root (CI does). \
         Refusing to run as uid {}.",
        unsafe { libc::geteuid() }
    );
}

// ---------------------------------------------------------------------------
// The package, built once per commit (testkit's `debian_build`, shared with
// tests/package_systemd.rs)
// ---------------------------------------------------------------------------

pub use testkit::debian_build::{lock_file, Package};

pub fn package() -> &'static Package {
    static PACKAGE: OnceLock<Package> = OnceLock::new();
    PACKAGE.get_or_init(|| {
        testkit::debian_build::build_package(Path::new(env!("CARGO_TARGET_TMPDIR")), VERSION)
    })
}

// ---------------------------------------------------------------------------
// The system: one test at a time, nothing left behind
// ---------------------------------------------------------------------------

/// `Some("ii 0.3.0-1")` (status abbreviation and version) when dpkg knows
/// the package in any state but "not installed".
pub fn package_state() -> Option<String> {
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

pub fn user_exists(name: &str) -> bool {
    run("getent", &["passwd", name]).status.success()
}

pub fn group_exists(name: &str) -> bool {
    run("getent", &["group", name]).status.success()
}

/// The exclusive right to install and purge redis-snmp on this system,
/// checked to harm nothing: no redis-snmp installed, no user left over.
pub struct System {
    pub _lock: File,
    /// What carries the package's name before the test starts.
    pub before: BTreeSet<String>,
    /// snmpd's own configuration before the test starts.
    pub snmp_before: BTreeMap<String, String>,
}

pub fn take_system() -> System {
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
pub fn refuse_a_restart_that_kills_every_snmpd() {
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
pub fn snmp_config() -> BTreeMap<String, String> {
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
pub struct PurgeOnDrop;

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
pub fn remove_what_the_purge_leaves() {
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
pub fn traces() -> BTreeSet<String> {
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

pub fn install(deb: &Path) -> String {
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
pub fn purge_and_check(system: &System, leftovers: &[&str]) {
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

pub fn id_of(db: &str, name: &str) -> u32 {
    let out = run("getent", &[db, name]);
    let line = String::from_utf8_lossy(&out.stdout).into_owned();
    line.split(':')
        .nth(2)
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("getent {db} {name}: {line}"))
}

/// Asserts owner, group and permission bits of a path (not following a
/// final symlink).
pub fn assert_meta(path: &str, owner: &str, group: &str, mode: u32) {
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
pub fn unit_path() -> String {
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
pub fn unit_command(unit: &str) -> (String, Vec<String>) {
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
pub fn start_as(user: &str, argv: &[String], log: &Path) -> Proc {
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
pub struct DebianSnmpd {
    pub dir: tempfile::TempDir,
    pub port: u16,
    pub proc: Option<Proc>,
}

impl DebianSnmpd {
    /// Starts it with `includeDir INCLUDE_DIR` and waits until it answers.
    pub fn start(include_dir: &str) -> DebianSnmpd {
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
        fs::write(dir.path().join("snmpd.conf"), &conf).unwrap();
        println!(
            "snmpd on udp:127.0.0.1:{port}, AgentX {}, includeDir {include_dir}",
            socket.display()
        );
        let mut snmpd = DebianSnmpd {
            proc: None,
            dir,
            port,
        };
        snmpd.spawn();
        snmpd
    }

    /// Stops it and starts it again on the same files and addresses, as
    /// the package's scripts restart the system's snmpd: it reads the
    /// drop-ins again and makes its AgentX socket anew, and subagents
    /// that were registered connect again.
    pub fn restart(&mut self) {
        if let Some(mut proc) = self.proc.take() {
            proc.terminate(Duration::from_secs(5));
        }
        // The private socket's directory stands for /var/agentx, which
        // postinst opens (checked on /var/agentx itself, VarAgentx); snmpd
        // applies agentXPerms' directory mode only to a directory it makes.
        let _ = fs::remove_dir_all(self.socket().parent().unwrap());
        println!("snmpd restarted on udp:127.0.0.1:{}", self.port);
        self.spawn();
    }

    fn spawn(&mut self) {
        let dir = self.dir.path();
        let conf_path = dir.join("snmpd.conf");
        let socket = self.socket();
        let log = dir.join("snmpd.log");
        let out = File::create(dir.join("snmpd.stdout")).unwrap();
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
            .arg(dir.join("snmpd.pid"))
            .env("SNMP_PERSISTENT_DIR", dir.join("persist"))
            .env_remove("SNMPCONFPATH")
            .env_remove("MIBS")
            .env_remove("MIBDIRS")
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out);
        self.proc = Some(Proc::spawn(&mut cmd, "snmpd"));
        // snmpd makes its AgentX socket before it answers on UDP; a short
        // client timeout keeps the polling quick.
        let probe = self.numeric().timeout(Duration::from_millis(300));
        let ready = wait_until(Duration::from_secs(10), || {
            self.proc.as_mut().unwrap().is_running()
                && socket.exists()
                && probe.get(&[".1.3.6.1.2.1.1.3.0"]).success()
        });
        assert!(
            ready,
            "the private snmpd did not come up with its AgentX socket at {} \
             (a drop-in in the included directory that moves the socket would do this):\n{}\n{}\n{}",
            socket.display(),
            fs::read_to_string(&conf_path).unwrap_or_default(),
            fs::read_to_string(dir.join("snmpd.stdout")).unwrap_or_default(),
            self.log()
        );
        let uid = fs::metadata(format!("/proc/{}", self.proc.as_ref().unwrap().pid()))
            .unwrap()
            .uid();
        assert_eq!(
            uid,
            id_of("passwd", SNMPD_USER),
            "snmpd did not drop to {SNMPD_USER}"
        );
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.path().join("agentx").join("master")
    }

    /// What the agent's `-x` and `agentx_socket` take.
    pub fn agentx_address(&self) -> String {
        format!("unix:{}", self.socket().display())
    }

    pub fn numeric(&self) -> SnmpClient {
        SnmpClient::new(self.port).numeric()
    }

    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.path().join("snmpd.log")).unwrap_or_default()
    }

    /// Owner, group and mode of the socket's directory and of the socket.
    pub fn socket_perms(&self) -> ((u32, u32, u32), (u32, u32, u32)) {
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
    pub fn assert_open_to_the_service_user(&self) {
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
pub struct VarAgentx {
    /// The mode it had, when it existed before.
    pub had: Option<u32>,
}

impl VarAgentx {
    pub fn locked() -> VarAgentx {
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

    pub fn mode(&self) -> u32 {
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
pub fn wait_served(snmpd: &DebianSnmpd, agent: &mut Proc, log: &Path) {
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
