//! The upgrade from the Perl agent's package, for tests/debian_package.rs:
//! a stand-in of the old package as faithful as the upgrade can tell (see
//! `old_package`), whose agent really runs and registers with snmpd, and
//! the upgrade checked step by step.

use super::*;
use std::fs::{self};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The PID file the old init script gives its agent (/var/run is /run).
pub const PERL_PIDFILE: &str = "/run/redis-snmp.pid";
/// What the stand-in agent answers for redisConnectedClients.0: no Redis
/// has that many clients in a test, so the value says whose answer it is.
const MARKER: &str = "424242";
/// The old package's version (masterzen/redis-snmp's debian/changelog).
const OLD_VERSION: &str = "0.1-1";

/// How the old package was built, which decides whether its own scripts
/// stop its agent.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum OldBuild {
    /// As debhelper 13.11 (Debian 12) builds it: prerm stops the agent only
    /// on `remove`, postinst restarts it on upgrade, and dh_perl writes
    /// `#! /usr/bin/perl`, so the process is named redis-snmp and the init
    /// script's stop (looking for "perl") never finds it.
    Today,
    /// With the maintainer scripts debhelper made in 2011 (committed in the
    /// old repository): prerm stops the agent for every argument, where
    /// policy-rc.d allows, and `#!/usr/bin/env perl` names the process perl.
    In2011,
}

/// Builds `redis-snmp_0.1-1_all.deb`, a stand-in for the Perl agent's
/// package (masterzen/redis-snmp 0.1-1) with what the upgrade meets of
/// it: its version, Depends (perl, snmpd, libsnmp-perl,
/// libunix-syslog-perl: they must be installed), Section and Priority;
/// /usr/sbin/redis-snmp a Perl AgentX subagent with the old options,
/// detaching and writing /var/run/redis-snmp.pid (tests/debian_package/
/// old_package/redis-snmp.pl); the MIB; its LSB init script and
/// /etc/default/redis-snmp (mode 0755, with its header), both conffiles,
/// as debhelper at compat 5 and later flags them; its maintainer scripts
/// as `build` made them (update-rc.d, invoke-rc.d, so policy-rc.d
/// applies). Without `conffiles`, the two files in /etc are plain files,
/// as a build at debhelper compat 1 or 2 would have them (no real build
/// of this package was; it keeps postinst's handling of such files
/// tried). Not shipped: the manual page and documents, which dpkg removes
/// as any file.
pub fn old_package(dir: &Path, build: OldBuild, conffiles: bool) -> PathBuf {
    let root = dir.join("old-root");
    let file = |path: &str, text: &str, mode: u32| {
        let p = root.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        write_file_mode(&p, text, mode);
    };
    file(
        "DEBIAN/control",
        &format!(
            "Package: redis-snmp\n\
             Version: {OLD_VERSION}\n\
             Architecture: all\n\
             Maintainer: redis-snmp tests <tests@invalid.example>\n\
             Depends: perl:any, snmpd, libsnmp-perl, libunix-syslog-perl\n\
             Section: admin\n\
             Priority: extra\n\
             Description: SNMP agent for redis-server (test stand-in)\n \
             A stand-in for the Perl redis-snmp package 0.1-1, for upgrade tests.\n"
        ),
        0o644,
    );
    if conffiles {
        file(
            "DEBIAN/conffiles",
            "/etc/default/redis-snmp\n/etc/init.d/redis-snmp\n",
            0o644,
        );
    }
    let (postinst, prerm, shebang) = match build {
        OldBuild::Today => (
            include_str!("old_package/postinst.today"),
            include_str!("old_package/prerm.today"),
            "#! /usr/bin/perl",
        ),
        OldBuild::In2011 => (
            include_str!("old_package/postinst.2011"),
            include_str!("old_package/prerm.2011"),
            "#!/usr/bin/env perl",
        ),
    };
    file("DEBIAN/postinst", postinst, 0o755);
    file("DEBIAN/prerm", prerm, 0o755);
    file("DEBIAN/postrm", include_str!("old_package/postrm"), 0o755);
    file(
        "etc/init.d/redis-snmp",
        include_str!("old_package/init.d"),
        0o755,
    );
    file(
        "etc/default/redis-snmp",
        include_str!("old_package/default"),
        0o755,
    );
    let script = include_str!("old_package/redis-snmp.pl");
    let (_, body) = script.split_once('\n').unwrap();
    file("usr/sbin/redis-snmp", &format!("{shebang}\n{body}"), 0o755);
    file(
        "usr/share/snmp/mibs/REDIS-SERVER-MIB.txt",
        "-- test stand-in for the Perl agent's REDIS-SERVER-MIB\n",
        0o644,
    );
    let deb = dir.join(format!("redis-snmp_{OLD_VERSION}_all.deb"));
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

pub fn rc_links() -> Vec<String> {
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

/// net-snmp's settings for the old agent (the application "redis" reads
/// redis.conf in SNMPCONFPATH, as the real one read /etc/snmp/redis.conf):
/// the private snmpd's AgentX socket, a reconnection every second (so that
/// a surviving agent registers again at once when snmpd restarts), and its
/// persistent files in the test's directory. Given to dpkg (the old
/// postinst starts the agent where policy-rc.d allows) and to the init
/// script.
fn old_agent_env(dir: &Path, snmpd: &DebianSnmpd) -> Vec<(String, String)> {
    let conf = dir.join("old-agent-conf");
    let persist = dir.join("old-agent-persist");
    fs::create_dir_all(&conf).unwrap();
    fs::create_dir_all(&persist).unwrap();
    fs::write(
        conf.join("redis.conf"),
        format!(
            "agentXSocket {}\nagentxPingInterval 1\n",
            snmpd.agentx_address()
        ),
    )
    .unwrap();
    vec![
        ("SNMPCONFPATH".into(), conf.display().to_string()),
        ("SNMP_PERSISTENT_DIR".into(), persist.display().to_string()),
    ]
}

fn run_with_env(program: &str, args: &[&str], env: &[(String, String)]) -> String {
    let out = Command::new(program)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    let text = show(&format!("{program} {}", args.join(" ")), &out);
    println!("{text}");
    assert!(out.status.success(), "{program} failed:\n{text}");
    text
}

/// The PID in the old PID file, when it names a live process.
fn perl_agent_pid() -> Option<u32> {
    fs::read_to_string(PERL_PIDFILE)
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok())
        .filter(|pid| pid_alive(*pid))
}

/// The old agent's process, stopped by its PID (SIGKILL) when dropped if
/// the test ends with it still running, and its PID file removed.
struct OldAgent {
    pid: u32,
}

impl OldAgent {
    fn is_running(&self) -> bool {
        pid_alive(self.pid)
            && fs::read(format!("/proc/{}/cmdline", self.pid))
                .is_ok_and(|c| c.split(|b| *b == 0).any(|a| a == BINARY.as_bytes()))
    }
}

impl Drop for OldAgent {
    fn drop(&mut self) {
        if self.is_running() {
            eprintln!("cleanup: kill -KILL {} (the old agent)", self.pid);
            let _ = run("kill", &["-KILL", &self.pid.to_string()]);
            wait_until(Duration::from_secs(5), || !pid_alive(self.pid));
        }
        if perl_agent_pid().is_none() {
            let _ = fs::remove_file(PERL_PIDFILE);
        }
    }
}

/// The old package installed and its agent running, registered with a
/// private snmpd like Debian's (the operator's /etc/default/redis-snmp with
/// a Redis password, when `edited`), then `dpkg -i` of ours: the agent is
/// stopped and its PID file gone, the operator's file kept (the password
/// moved out) or the unchanged one removed, nothing for adequate to
/// report; after snmpd's restart, the new agent, started as the unit
/// would, answers the 17 legacy objects.
pub fn upgrade_from_perl_package(build: OldBuild, conffiles: bool, edited: bool) {
    let system = take_system();
    let pkg = package();
    let _purge = PurgeOnDrop;
    assert!(
        perl_agent_pid().is_none(),
        "{PERL_PIDFILE} names a running process: an old agent of another run? Stop it first"
    );
    let _ = fs::remove_file(PERL_PIDFILE);
    let work = tempfile::Builder::new()
        .prefix("redis-snmp-deb-upgrade.")
        .tempdir()
        .unwrap();
    // The Perl agent ran as root, and so could use the socket of an snmpd
    // that left /var/agentx as net-snmp makes it by default.
    let var_agentx = VarAgentx::locked();
    let mut snmpd = DebianSnmpd::start(SNMPD_DROPIN_DIR);
    let env = old_agent_env(work.path(), &snmpd);

    step(&format!(
        "the Perl agent's package (stand-in, {build:?}'s build, /etc files {})",
        if conffiles {
            "as conffiles"
        } else {
            "as plain files"
        }
    ));
    let old = old_package(work.path(), build, conffiles);
    run_with_env("dpkg", &["--install", old.to_str().unwrap()], &env);
    assert_eq!(
        package_state().as_deref(),
        Some(format!("ii {OLD_VERSION}").as_str())
    );
    assert!(
        !rc_links().is_empty(),
        "the old postinst made no rc.d links"
    );
    assert_meta(DEFAULT_FILE, "root", "root", 0o755);
    let old_default = fs::read_to_string(DEFAULT_FILE).unwrap();
    assert!(old_default.contains("POSIX shell fragment"));

    let password = "deb-upgrade-Pw";
    let redis = if edited {
        Redis::start_with(&[&format!("requirepass {password}")])
    } else {
        Redis::start()
    };
    // A poll every 2 seconds instead of the default 10, to see -r applied;
    // the password as the Perl agent took it (-p PASS, --password PASS,
    // --password=PASS: Getopt::Long).
    let password_option = match (build, conffiles) {
        (OldBuild::Today, true) => format!("-p {password}"),
        (OldBuild::In2011, _) => format!("--password {password}"),
        (OldBuild::Today, false) => format!("--password={password}"),
    };
    let operator_options = format!("-h 127.0.0.1 -P {} -r 2", redis.port());
    if edited {
        step("the operator sets DAEMON_OPTS in /etc/default/redis-snmp, with a Redis password");
        let text = old_default.replace(
            "DAEMON_OPTS=\"\"",
            &format!("DAEMON_OPTS=\"{operator_options} {password_option}\""),
        );
        assert_ne!(text, old_default);
        fs::write(DEFAULT_FILE, &text).unwrap();
    }

    step("the old agent runs, as root, registered with snmpd under .1.3.6.1.4.1.20267.400.1");
    let agent = start_the_old_agent(&env, build, &snmpd);

    step(&format!("upgrade: dpkg --install {}", pkg.deb.display()));
    let said = install(&pkg.deb);
    assert_eq!(
        package_state().as_deref(),
        Some(format!("ii {VERSION}").as_str())
    );
    step("the old agent is stopped, and its PID file gone");
    assert!(
        !agent.is_running(),
        "the Perl agent (PID {}) still runs after the upgrade:\n{said}",
        agent.pid
    );
    assert!(
        fs::symlink_metadata(PERL_PIDFILE).is_err(),
        "{PERL_PIDFILE} is left after the upgrade"
    );
    // Where policy-rc.d allows, the 2011 prerm stops it first, and the
    // PID file is what is left.
    let stopped_by_old_prerm = build == OldBuild::In2011 && said.contains("Stopping Redis-Server");
    assert!(
        (said.contains("stopped the Perl agent") || stopped_by_old_prerm)
            && said.contains(&format!("removed {PERL_PIDFILE}")),
        "the upgrade did not say that it stopped the old agent and removed its PID file:\n{said}"
    );
    assert!(!said.contains(password), "the upgrade showed the password");

    step("/etc/default/redis-snmp: the operator's kept, for systemd; no conffile of dpkg's");
    the_operators_default_file_is_kept(edited, &operator_options, password, &said);
    the_old_files_are_gone_and_the_new_in_place(conffiles);

    step("the upgrade let the service into snmpd: the drop-in, /var/agentx opened");
    assert_dropin_as_shipped();
    assert_eq!(
        var_agentx.mode(),
        0o755,
        "postinst did not open {AGENTX_DIR}"
    );
    // The upgrade restarts the system's snmpd; so the test does its own.
    // A surviving old agent would register again within a second.
    snmpd.restart();
    snmpd.assert_open_to_the_service_user();

    step("the unit passes the operator's DAEMON_OPTS to the new agent");
    let unit = fs::read_to_string(unit_path()).unwrap();
    let (user, mut argv) = unit_command(&unit);
    let port = redis.port().to_string();
    if edited {
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
                "2",
                "--password-file",
                PASSWORD_FILE
            ],
            "the unit's command line"
        );
    } else {
        assert_eq!(argv, [BINARY, "-n", "-c", CONFFILE]);
        argv.extend(["-h", "127.0.0.1", "-P", port.as_str()].map(String::from));
    }
    // The installed configuration (every setting commented out) says the
    // AgentX master is /var/agentx/master; the test's snmpd is elsewhere.
    argv.extend(["-x".to_string(), snmpd.agentx_address()]);
    let log = work.path().join("agent.log");
    let mut new_agent = start_as(&user, &argv, &log);
    wait_served(&snmpd, &mut new_agent, &log);

    step("the 17 legacy objects are the new agent's");
    let walk = snmpd.numeric().bulkwalk(LEGACY_ROOT);
    let vars = walk.vars();
    let got: Vec<(String, String)> = vars
        .iter()
        .map(|v| (v.name.clone(), v.ty.clone()))
        .collect();
    let want: Vec<(String, String)> = LEGACY
        .iter()
        .map(|(n, _, ty, _)| (legacy_oid(*n), ty.to_string()))
        .collect();
    assert_eq!(got, want, "the walk of {LEGACY_ROOT}:\n{walk}");
    assert!(
        vars.iter().all(|v| v.value != MARKER),
        "the old agent answers:\n{walk}"
    );
    if edited {
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
    }
    new_agent.terminate(Duration::from_secs(5));
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
    drop(agent);

    purge_and_check(&system, if edited { &[PASSWORD_FILE] } else { &[] });
    drop(var_agentx);
}

/// The old agent runs, as root, registered with snmpd under the legacy
/// branch: started by the old postinst where policy-rc.d allowed,
/// otherwise by the operator, as the old README says.
fn start_the_old_agent(env: &[(String, String)], build: OldBuild, snmpd: &DebianSnmpd) -> OldAgent {
    if perl_agent_pid().is_none() {
        run_with_env("/etc/init.d/redis-snmp", &["start"], env);
    }
    assert!(
        wait_until(Duration::from_secs(10), || perl_agent_pid().is_some()),
        "the old agent did not start: no live process in {PERL_PIDFILE}"
    );
    let agent = OldAgent {
        pid: perl_agent_pid().unwrap(),
    };
    assert!(agent.is_running(), "{PERL_PIDFILE} is not the old agent's");
    let comm = fs::read_to_string(format!("/proc/{}/comm", agent.pid)).unwrap();
    let exe = fs::read_link(format!("/proc/{}/exe", agent.pid)).unwrap();
    println!(
        "old agent: PID {}, named {:?}, running {}",
        agent.pid,
        comm.trim(),
        exe.display()
    );
    assert_eq!(
        comm.trim(),
        match build {
            OldBuild::Today => "redis-snmp",
            OldBuild::In2011 => "perl",
        }
    );
    let marker = || {
        snmpd
            .numeric()
            .timeout(Duration::from_millis(500))
            .get(&[&legacy_oid(1)])
            .vars()
            .first()
            .is_some_and(|v| v.value == MARKER)
    };
    assert!(
        wait_until(Duration::from_secs(15), marker),
        "snmpd does not give redisConnectedClients.0 to the old agent:\n{}",
        tail(&snmpd.log(), 20)
    );
    agent
}

/// /etc/default/redis-snmp after the upgrade: the operator's kept, for
/// systemd, with the password moved to its file (`kept` the options
/// besides it); the old package's unchanged one removed.
fn the_operators_default_file_is_kept(edited: bool, kept: &str, password: &str, said: &str) {
    if edited {
        let text =
            fs::read_to_string(DEFAULT_FILE).unwrap_or_else(|e| panic!("{DEFAULT_FILE}: {e}"));
        println!("--- {DEFAULT_FILE} ---\n{text}");
        assert!(
            text.ends_with(&format!(
                "# Additional options that are passed to the Daemon.\n\
                 DAEMON_OPTS=\"{kept} --password-file {PASSWORD_FILE}\"\n"
            )),
            "the operator's {DEFAULT_FILE} did not survive the upgrade, or kept its password"
        );
        assert!(
            !text.contains("POSIX shell fragment") && text.contains("EnvironmentFile="),
            "{DEFAULT_FILE} still says a shell sources it"
        );
        assert_meta(DEFAULT_FILE, "root", "root", 0o644);
        assert_eq!(
            fs::read_to_string(PASSWORD_FILE).unwrap_or_else(|e| panic!("{PASSWORD_FILE}: {e}")),
            format!("{password}\n"),
            "the password did not move to {PASSWORD_FILE}"
        );
        assert_meta(PASSWORD_FILE, "root", USER, 0o640);
        assert!(
            said.contains("moved the Redis password"),
            "postinst did not say that it moved the password:\n{said}"
        );
    } else {
        assert!(
            fs::symlink_metadata(DEFAULT_FILE).is_err(),
            "the old package's unchanged {DEFAULT_FILE} is left"
        );
    }
}

/// No conffile of the old package's left to dpkg, nothing for adequate,
/// the init script and the old files gone, the new binary, MIB, user and
/// unit in place.
fn the_old_files_are_gone_and_the_new_in_place(conffiles: bool) {
    let conffiles_now = run_ok(
        "dpkg-query",
        &["--show", "--showformat=${Conffiles}\\n", PKG],
    );
    assert!(
        !conffiles_now.contains(DEFAULT_FILE) && !conffiles_now.contains("/etc/init.d/"),
        "dpkg still lists an old conffile:\n{conffiles_now}"
    );
    assert_adequate_finds_nothing();

    // The init script is gone. dpkg-maintscript-helper's rm_conffile keeps
    // a copy, as .dpkg-bak, of one that differs from the old package's
    // conffile: here only a script that was no conffile.
    let backup = "/etc/init.d/redis-snmp.dpkg-bak";
    if conffiles {
        assert!(fs::symlink_metadata(backup).is_err(), "{backup} exists");
    } else {
        assert_eq!(
            fs::read_to_string(backup).unwrap_or_else(|e| panic!("{backup}: {e}")),
            include_str!("old_package/init.d"),
            "{backup} is not the old init script"
        );
    }
    for gone in [
        "/etc/init.d/redis-snmp",
        "/etc/init.d/redis-snmp.dpkg-remove",
        "/etc/init.d/redis-snmp.dpkg-backup",
        "/etc/default/redis-snmp.dpkg-preserve",
        "/etc/default/redis-snmp.dpkg-remove",
        "/etc/default/redis-snmp.dpkg-new",
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
}

/// adequate (Debian's checker of installed packages, which piuparts runs)
/// finds nothing wrong with the installed package: no obsolete conffile
/// (/etc/default/redis-snmp of the old package), no broken symlink, no
/// missing library. Skips, saying so, where adequate is not installed.
pub fn assert_adequate_finds_nothing() {
    if !Path::new("/usr/bin/adequate").exists() {
        println!("SKIP adequate: not installed (apt-get install adequate)");
        return;
    }
    let out = run("adequate", &[PKG]);
    let text = show("adequate redis-snmp", &out);
    println!("{text}");
    assert!(
        out.status.success() && out.stdout.is_empty(),
        "adequate reports:\n{text}"
    );
}
