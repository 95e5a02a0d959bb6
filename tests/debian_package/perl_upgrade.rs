//! The upgrade from the Perl agent's package, for tests/debian_package.rs:
//! the old package, built as the Perl agent's was, and the upgrade checked
//! step by step.

use super::*;
use std::fs::{self};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The Perl agent's /etc/default/redis-snmp, as this stand-in ships it.
pub const OLD_DEFAULT: &str =
    "# Options for the redis-snmp agent (test stand-in for the Perl package's file)\n\
                           DAEMON_OPTS=\"\"\n";

/// Builds a stand-in for the Perl agent's package, `redis-snmp_0.2-1_all.deb`:
/// the Perl script as /usr/sbin/redis-snmp (where the Perl package put it),
/// the MIB, an LSB init script linked into the runlevels by its postinst
/// (update-rc.d, as dh_installinit did) and stopped by its prerm, and
/// /etc/default/redis-snmp with DAEMON_OPTS. With `conffiles`, the two files
/// in /etc are conffiles; without, they are plain files, as in a package
/// built by debhelper at compat level 1 and 2, which did not flag /etc.
pub fn old_package(dir: &Path, conffiles: bool) -> PathBuf {
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

/// Old package installed, /etc/default/redis-snmp (and, for plain files,
/// the init script) modified by the operator, then `dpkg -i` of ours.
pub fn upgrade_from_perl_package(conffiles: bool) {
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
