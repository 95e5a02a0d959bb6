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
//!   runs once per commit (testkit's `debian_build`, which
//!   tests/package_systemd.rs shares): the packages are kept in
//!   `target/tmp/debian-package/<commit>/` and reused by the other tests of
//!   the run, in this process or another, and by later runs (remove that
//!   directory to build again). Uncommitted changes are not in the package
//!   (the build exports HEAD, as CI's clean clone would).
//! - systemd is not PID 1 where these tests run (CI containers), so the unit
//!   is not started by systemd: `systemd-analyze verify` and `security
//!   --offline` check the installed unit file, and the agent is started the
//!   way the unit would start it (its `User=`, its `ExecStart=` with
//!   `$DAEMON_OPTS` expanded from its `EnvironmentFile=`, an empty
//!   environment), which checks everything but the sandbox itself; the
//!   unit as systemd runs it is tests/package_systemd.rs's, with this
//!   same .deb. (On a
//!   machine where systemd does run, dpkg also starts the real service
//!   against /var/agentx/master and localhost:6379; the purge stops it.)
//!
//! The tests are here; their harness (commands, the package, the system,
//! files and users), the old Perl package and the crate licences' readers
//! are the modules of `tests/debian_package/`.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::collections::BTreeSet;
use std::fs::{self};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use testkit::*;

/// autopkgtest and piuparts.
#[path = "debian_package/debian_tools.rs"]
mod debian_tools;
/// Crate licences: expressions, DEP-5, the shipped texts.
#[path = "debian_package/licences.rs"]
mod licences;
/// The old Perl package and the upgrade from it.
#[path = "debian_package/perl_upgrade.rs"]
mod perl_upgrade;
/// Commands, the package, the system under test, files and users.
#[path = "debian_package/system.rs"]
mod system;
/// The shipped configuration's settings, config keys, changelogs.
#[path = "debian_package/texts.rs"]
mod texts;

use debian_tools::*;
use licences::*;
use perl_upgrade::*;
use system::*;
use texts::*;

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
// The shipped configuration file
// ---------------------------------------------------------------------------

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

/// postinst's strip_password (the function itself, taken from
/// debian/redis-snmp.postinst and run by sh on a file) on the two edge
/// cases of review I1: text after the closing quote is left to the
/// administrator (exit 2, the line unchanged, no password written),
/// instead of a password file `S7"` and an unbalanced quote; `export
/// DAEMON_OPTS=...` has its password moved like any other line. A plain
/// line still moves. Needs neither root nor the build.
#[test]
fn postinst_password_move_stops_at_the_closing_quote_and_reads_export() {
    let postinst = fs::read_to_string(repo_root().join("debian/redis-snmp.postinst")).unwrap();
    let start = postinst
        .find("\nstrip_password() {")
        .expect("strip_password in postinst");
    let end = start + postinst[start..].find("\n}\n").expect("its end") + 3;
    let function = &postinst[start..end];
    let dir = tempfile::tempdir().unwrap();
    let strip = |line: &str| {
        let default = dir.path().join("default");
        let out_file = dir.path().join("password");
        let _ = fs::remove_file(&out_file);
        fs::write(&default, format!("# kept\n{line}\n")).unwrap();
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "{function}\nDEFAULT_FILE=\"$1\" PASSWORD_FILE=/etc/redis-snmp/password\n\
                 strip_password \"$2\""
            ))
            .arg("sh")
            .arg(&default)
            .arg(&out_file)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            fs::read_to_string(&out_file).ok(),
        )
    };
    let moved = |code, line: &str, password: &str| {
        (
            code,
            format!("# kept\n{line}\n"),
            Some(format!("{password}\n")),
        )
    };
    let left = |line: &str| (Some(2), format!("# kept\n{line}\n"), None);
    assert_eq!(
        strip("DAEMON_OPTS=\"-h x -p S7\""),
        moved(
            Some(0),
            "DAEMON_OPTS=\"-h x --password-file /etc/redis-snmp/password\"",
            "S7"
        )
    );
    for line in [
        "DAEMON_OPTS=\"-h x -p S7\" # note",
        "DAEMON_OPTS=\"-h x -p S7\" -v",
        "DAEMON_OPTS=\"-h x -p S7",
        "DAEMON_OPTS=-h x -p S7\"",
    ] {
        assert_eq!(strip(line), left(line), "{line}");
    }
    assert_eq!(
        strip("export DAEMON_OPTS=\"-p S6\""),
        moved(
            Some(0),
            "export DAEMON_OPTS=\"--password-file /etc/redis-snmp/password\"",
            "S6"
        )
    );
    assert_eq!(
        strip("  export\tDAEMON_OPTS='-r 5 --password S6'"),
        moved(
            Some(0),
            "  export\tDAEMON_OPTS='-r 5 --password-file /etc/redis-snmp/password'",
            "S6"
        )
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
    installed_as_debian_wants_it(pkg);
    let unit_text = fs::read_to_string(unit_path()).unwrap();
    let mut run = the_installed_agent_serves_as_the_unit_runs_it(&unit_text);
    let var_agentx = reinstalls_keep_what_the_administrator_chose(pkg);
    without_the_dropin_the_agent_is_refused(&mut run);
    purge_and_check(&system, &[]);
    drop(var_agentx);
}

/// The installed agent's run: its work folder, its user and its command.
struct Run {
    work: tempfile::TempDir,
    user: String,
    argv: Vec<String>,
}

/// dpkg installs it: the system user, the files with their owners and
/// modes, `redis-snmp kick`'s, the unit systemd-analyze accepts, the MIB
/// net-snmp loads.
fn installed_as_debian_wants_it(pkg: &Package) {
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
        "/usr/share/man/man5/redis-snmp.toml.5.gz",
        "root",
        "root",
        0o644,
    );
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
    // The secret of key_names = "alias", one per installation: 32 random
    // bytes in hex, readable by the service's group only.
    assert_meta("/etc/redis-snmp/key-alias.secret", "root", USER, 0o640);
    let secret = fs::read_to_string("/etc/redis-snmp/key-alias.secret").unwrap();
    assert!(
        secret.trim_end().len() == 64 && secret.trim_end().bytes().all(|b| b.is_ascii_hexdigit()),
        "key-alias.secret is not 64 hex digits"
    );
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
    let config_page = run_ok("man", &["--pager=cat", "5", "redis-snmp.toml"]);
    assert!(config_page.contains("check_keys_interval"), "{config_page}");

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
}

/// The installed agent, as the unit runs it, on the installed
/// configuration with every setting uncommented, serves.
fn the_installed_agent_serves_as_the_unit_runs_it(unit_text: &str) -> Run {
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
    let (user, mut argv) = unit_command(unit_text);
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
    Run { work, user, argv }
}

/// Reinstalling changes nothing the administrator chose, moves a password
/// only where it can, and opens a /var/agentx an earlier snmpd left 0700.
fn reinstalls_keep_what_the_administrator_chose(pkg: &Package) -> VarAgentx {
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
    var_agentx
}

/// Without the drop-in, snmpd keeps the AgentX socket to root and the
/// agent is refused, and retries.
fn without_the_dropin_the_agent_is_refused(run: &mut Run) {
    let Run { work, user, argv } = run;
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
    let mut agent = start_as(user, argv, &log);
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
/// The old package as Debian 12 builds it: its agent survives its own
/// scripts, and the upgrade stops it.
#[test]
fn upgrade_from_perl_package_as_built_today() {
    upgrade_from_perl_package(OldBuild::Today, true, true);
}

/// With the 2011 scripts, which stop the agent where policy-rc.d allows,
/// and the old /etc/default/redis-snmp left as shipped.
#[test]
fn upgrade_from_perl_package_as_built_in_2011() {
    upgrade_from_perl_package(OldBuild::In2011, true, false);
}

/// With /etc/default/redis-snmp and the init script as plain files.
#[test]
fn upgrade_from_perl_package_with_plain_files() {
    upgrade_from_perl_package(OldBuild::Today, false, true);
}

// ---------------------------------------------------------------------------
// Debian's own tests (slow)
// ---------------------------------------------------------------------------
/// autopkgtest of debian/tests/control, on this host (null runner).
#[test]
fn autopkgtest_of_the_package() {
    autopkgtest_on_this_host();
}

/// piuparts: install, purge, and the upgrade from the old package.
#[test]
fn piuparts_install_purge_and_upgrade() {
    piuparts_in_a_fresh_chroot();
}

/// debian/tests/legacy-objects checks the types of the 17 legacy objects
/// that tests/agent_snmpd.rs checks the agent serves (testkit's LEGACY).
/// Needs neither root nor the build.
#[test]
fn autopkgtest_expects_the_catalogues_types() {
    let want: Vec<String> = LEGACY
        .iter()
        .map(|(n, _, ty, _)| format!("{n} {ty}"))
        .collect();
    assert_eq!(autopkgtest_expected_types(), want);
}

// ---------------------------------------------------------------------------
// Licences of the crates linked in, vendored sources
// ---------------------------------------------------------------------------
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
