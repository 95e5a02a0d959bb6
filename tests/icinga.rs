//! Issue 23: the Icinga 2 configuration and the Nagios commands of
//! `icinga/`, checked by the real programs of Debian 12 (`icinga2` 2.13,
//! `monitoring-plugins-standard` 2.3.3's check_snmp).
//!
//! - Both files are what the catalogue generates
//!   (`tests/consumers/icinga_conf.rs`); a changed copy fails with the
//!   diff.
//! - `icinga2 daemon -C` (a plain process, a private configuration
//!   directory, never the service) accepts the shipped file with a host
//!   that uses it, instantiating the services it should; a broken copy
//!   fails with the file and line.
//! - Live: a private snmpd, a Redis master with maxmemory and its replica
//!   without, a real `puppet apply`, and the agent; `icinga2 daemon` runs
//!   the shipped checks every second (its PerfdataWriter records each
//!   result): every service is OK and none is ever UNKNOWN; the 64-bit
//!   memory gauge's perfdata has no counter unit; once the test fills
//!   Redis to 95 % of maxmemory the memory service turns CRITICAL. The
//!   Nagios command lines, run as Nagios would (its macros substituted),
//!   say the same.
//!
//! Without `icinga2` or check_snmp the tests that run them say SKIP and
//! pass; scripts/install-test-deps.sh installs them.

// Starts real servers and tools: built only with the `system-tests`
// feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

// The MIB readers of `generated` serve tests/snmptt.rs.
#[allow(dead_code)]
#[path = "consumers/generated.rs"]
mod generated;
#[path = "consumers/icinga_conf.rs"]
mod icinga_conf;

use generated::{check, repo};
use icinga_conf::{
    icinga_conf, nagios_cfg, nagios_command, nagios_command_line, Applies, CHECKS, ICINGA_FILE,
    NAGIOS_FILE, REGENERATE,
};
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use testkit::{wait_until, AgentConfig, PuppetApply, Redis, Snmpd};

const ICINGA2: &str = "/usr/sbin/icinga2";
const PLUGIN_DIR: &str = "/usr/lib/nagios/plugins";
const ITL: &str = "/usr/share/icinga2/include";

fn skip_without_icinga(test: &str) -> bool {
    for (tool, package) in [
        (ICINGA2.to_string(), "icinga2"),
        (
            format!("{PLUGIN_DIR}/check_snmp"),
            "monitoring-plugins-standard",
        ),
    ] {
        if !Path::new(&tool).is_file() {
            eprintln!("SKIP {test}: {tool} is missing (Debian package {package}; scripts/install-test-deps.sh)");
            return true;
        }
    }
    false
}

#[test]
fn generated_icinga_and_nagios_files_are_the_shipped_ones() {
    let files = [(ICINGA_FILE, icinga_conf()), (NAGIOS_FILE, nagios_cfg())];
    let problems: Vec<String> = files
        .iter()
        .filter_map(|(file, generated)| {
            check(&repo().join(file), generated, true, REGENERATE).err()
        })
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // A copy speaking SNMPv1 is caught, with the diff.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy");
    let conf = icinga_conf();
    std::fs::write(
        &copy,
        conf.replacen("vars.snmp_version = \"2c\"", "vars.snmp_version = \"1\"", 1),
    )
    .unwrap();
    let err = check(&copy, &conf, false, REGENERATE).expect_err("a copy speaking v1");
    assert!(
        err.contains("+  vars.snmp_version = \"2c\"") && err.contains(REGENERATE),
        "{err}"
    );
}

/// The file's checks take their version and OIDs from the catalogue:
/// SNMPv2c everywhere, no symbolic name, and the 64-bit gauge read past
/// its type word.
#[test]
fn every_check_speaks_v2c_with_numeric_oids() {
    for c in CHECKS {
        let line = nagios_command_line(c);
        assert!(line.contains(" -P 2c "), "{line}");
        let oid = line
            .split(" -o ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap();
        assert!(oid.starts_with("1.3.6.1.4.1.20267.40"), "{oid}");
        let def = icinga_conf::object(c.object);
        let wide = matches!(
            def.syntax,
            redis_snmp::smi::Syntax::Gauge64 | redis_snmp::smi::Syntax::Counter64
        );
        assert_eq!(wide, line.contains(" -d '64:'"), "{line}");
    }
}

// ---------------------------------------------------------------------------
// icinga2 itself

/// A private Icinga 2 configuration: the ITL and its plugin commands, the
/// shipped (or given) file, a host using it at `port` with these vars, and
/// for a live run a checker and a PerfdataWriter writing to `dir/perfdata`.
struct IcingaDir {
    dir: tempfile::TempDir,
}

impl IcingaDir {
    fn new(conf: &Path, port: u16, host_vars: &str, live: bool) -> IcingaDir {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for sub in ["etc", "data", "cache", "log", "spool", "run", "perfdata"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        let mut main = format!(
            "include <itl>\ninclude <plugins>\nconst PluginDir = \"{PLUGIN_DIR}\"\n\
             include \"{}\"\n\
             object Host \"redis-host\" {{\n  check_command = \"dummy\"\n  \
             address = \"127.0.0.1\"\n  vars.snmp_port = {port}\n  \
             vars.snmp_community = \"public\"\n{host_vars}}}\n",
            conf.display()
        );
        if live {
            let p = d.join("perfdata");
            main.push_str(&format!(
                "object CheckerComponent \"checker\" {{ }}\n\
                 object PerfdataWriter \"perfdata\" {{\n  \
                 service_perfdata_path = \"{p}/service\"\n  \
                 service_temp_path = \"{p}/service.tmp\"\n  \
                 host_perfdata_path = \"{p}/host\"\n  \
                 host_temp_path = \"{p}/host.tmp\"\n  \
                 rotation_interval = 1s\n}}\n",
                p = p.display()
            ));
        }
        std::fs::write(d.join("etc/icinga2.conf"), main).unwrap();
        IcingaDir { dir }
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    /// `icinga2 daemon` with this directory's defines, and `extra` args.
    fn command(&self, extra: &[&str]) -> Command {
        let id = |flag: &str| {
            let out = Command::new("id").arg(flag).output().unwrap();
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        let mut cmd = Command::new(ICINGA2);
        cmd.arg("daemon")
            .args(extra)
            .arg("-c")
            .arg(self.path("etc/icinga2.conf"));
        for (name, value) in [
            ("IncludeConfDir", PathBuf::from(ITL)),
            ("ConfigDir", self.path("etc")),
            ("DataDir", self.path("data")),
            ("StateDir", self.path("data")),
            ("PkgDataDir", self.path("data")),
            ("CacheDir", self.path("cache")),
            ("LogDir", self.path("log")),
            ("SpoolDir", self.path("spool")),
            ("InitRunDir", self.path("run")),
        ] {
            cmd.arg(format!("-D{name}={}", value.display()));
        }
        cmd.arg(format!("-DRunAsUser={}", id("-un")))
            .arg(format!("-DRunAsGroup={}", id("-gn")))
            .stdin(Stdio::null());
        cmd
    }

    /// `icinga2 daemon -C`: its exit status and output.
    fn validate(&self) -> (bool, String) {
        let out = self
            .command(&["-C"])
            .output()
            .expect("running icinga2 daemon -C");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    }
}

/// The host vars of the tests: a master with maxmemory (index 1) and a
/// replica without (index 2), and Puppet.
const HOST_VARS: &str =
    "  vars.redis_snmp_instances[\"main\"] = { index = 1, maxmemory = true }\n  \
     vars.redis_snmp_instances[\"replica\"] = { index = 2, replica = true }\n  \
     vars.redis_snmp_puppet = true\n";

/// The services the shipped rules make for [`HOST_VARS`].
fn expected_services() -> Vec<String> {
    let mut names = Vec::new();
    for c in CHECKS {
        match c.applies {
            Applies::Puppet => names.push(c.service.to_string()),
            Applies::EveryInstance => {
                names.push(format!("{}-main", c.service));
                names.push(format!("{}-replica", c.service));
            }
            Applies::InstanceWith("maxmemory") => names.push(format!("{}-main", c.service)),
            Applies::InstanceWith("replica") => names.push(format!("{}-replica", c.service)),
            Applies::InstanceWith(other) => panic!("the test host does not say {other}"),
        }
    }
    names.sort();
    names
}

#[test]
fn icinga2_accepts_the_shipped_configuration_and_refuses_a_broken_copy() {
    if skip_without_icinga("icinga2_accepts_the_shipped_configuration_and_refuses_a_broken_copy") {
        return;
    }
    let shipped = repo().join(ICINGA_FILE);
    let ok = IcingaDir::new(&shipped, 161, HOST_VARS, false);
    let (success, text) = ok.validate();
    assert!(
        success && text.contains("Finished validating the configuration file(s)"),
        "{text}"
    );
    let services = format!("Instantiated {} Services.", expected_services().len());
    assert!(text.contains(&services), "want {services}:\n{text}");
    println!("icinga2 daemon -C: {services}");

    // A broken copy: a rule naming a command that does not exist.
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("redis-snmp.conf");
    let conf = std::fs::read_to_string(&shipped).unwrap();
    let line = conf
        .lines()
        .position(|l| l.contains("check_command = \"redis-snmp\""))
        .unwrap()
        + 1;
    std::fs::write(
        &broken,
        conf.replacen(
            "check_command = \"redis-snmp\"",
            "check_command = \"redis-snmpp\"",
            1,
        ),
    )
    .unwrap();
    let bad = IcingaDir::new(&broken, 161, HOST_VARS, false);
    let (success, text) = bad.validate();
    assert!(!success, "the broken copy validates:\n{text}");
    assert!(text.contains("Config validation failed"), "{text}");
    assert!(text.contains("redis-snmpp"), "{text}");
    assert!(
        text.contains(&format!("{}({line}", broken.display()))
            || text.contains(&format!("{}: {line}", broken.display())),
        "no file and line {line}:\n{text}"
    );
}

// ---------------------------------------------------------------------------
// A live run

/// `icinga2 daemon` in its own process group, stopped (the whole group:
/// it forks a worker and a process spawner) when dropped.
struct Daemon {
    child: Child,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let pgid = self.child.id() as i32;
        unsafe { libc::kill(-pgid, libc::SIGTERM) };
        let stopped = wait_until(Duration::from_secs(5), || {
            matches!(self.child.try_wait(), Ok(Some(_)))
        });
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
        if !stopped {
            let _ = self.child.wait();
        }
    }
}

/// Every check result the PerfdataWriter recorded so far:
/// (service, state, perfdata).
fn results(dir: &Path) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if !name.starts_with("service") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        for line in text.lines() {
            let fields: BTreeMap<&str, &str> = line
                .split('\t')
                .filter_map(|f| f.split_once("::"))
                .collect();
            if let (Some(s), Some(st)) = (fields.get("SERVICEDESC"), fields.get("SERVICESTATE")) {
                let perf = fields.get("SERVICEPERFDATA").unwrap_or(&"");
                out.push((s.to_string(), st.to_string(), perf.to_string()));
            }
        }
    }
    out
}

/// The latest state of each service.
fn latest(results: &[(String, String, String)]) -> BTreeMap<String, (String, String)> {
    // Files are read in no order; the last line for a service within one
    // file is its latest there. The caller waits for a state to hold.
    let mut map = BTreeMap::new();
    for (s, st, perf) in results {
        map.insert(s.clone(), (st.clone(), perf.clone()));
    }
    map
}

/// Runs a Nagios command line as Nagios would: its macros substituted,
/// through /bin/sh.
fn run_nagios(command_line: &str, port: u16, index: u32) -> (i32, String) {
    let line = command_line
        .replace("$USER1$", PLUGIN_DIR)
        .replace("$HOSTADDRESS$", "127.0.0.1")
        .replace("$_HOSTSNMP_PORT$", &port.to_string())
        .replace("$_HOSTSNMP_COMMUNITY$", "public")
        .replace("$ARG1$", &index.to_string());
    assert!(!line.contains('$'), "a macro is left: {line}");
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(&line)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
    )
}

#[test]
fn icinga2_reports_ok_then_critical_at_95_percent_of_maxmemory_and_never_unknown() {
    if skip_without_icinga(
        "icinga2_reports_ok_then_critical_at_95_percent_of_maxmemory_and_never_unknown",
    ) {
        return;
    }
    let snmpd = Snmpd::start();
    let master = Redis::start();
    // Room for the replica's backlog and buffers, well below 85 %.
    master.use_percent_of_maxmemory(10);
    let replica = Redis::start_with(&[&format!("replicaof 127.0.0.1 {}", master.port())]);
    assert!(wait_until(Duration::from_secs(10), || replica
        .info_map()
        .get("master_link_status")
        == Some("up")));
    let puppet = PuppetApply::new();
    let t = puppet.target().display().to_string();
    let (code, _) = puppet.apply(
        "changed",
        &format!("file {{ '{t}/managed.txt': ensure => file, content => \"x\\n\" }}\n"),
        &[],
    );
    assert_eq!(code, 2, "the Puppet run did not change its file");
    let dir = tempfile::tempdir().unwrap();
    let _agent = AgentConfig::new(&snmpd)
        .redis("main", &master.address(), "")
        .redis("replica", &replica.address(), "")
        .puppet(&puppet, "")
        .start(dir.path());
    std::thread::sleep(Duration::from_millis(1500));
    let port = snmpd.udp_port();

    // The Nagios command lines, as Nagios runs them: all OK.
    for c in CHECKS {
        let index = if c.applies == Applies::InstanceWith("replica") {
            2
        } else {
            1
        };
        let (code, text) = run_nagios(&nagios_command_line(c), port, index);
        println!("{} {index}: {code} {text}", nagios_command(c));
        assert_eq!(code, 0, "{}: {text}", nagios_command(c));
        let perf = text.split('|').nth(1).unwrap_or("");
        let counter = perf
            .split_whitespace()
            .any(|p| p.split(';').next().unwrap_or("").ends_with('c'));
        assert!(!counter, "a counter unit in the perfdata: {text}");
    }

    let icinga = IcingaDir::new(
        &repo().join(ICINGA_FILE),
        port,
        &format!("{HOST_VARS}  vars.redis_snmp_check_interval = 1s\n"),
        true,
    );
    let (valid, text) = icinga.validate();
    assert!(valid, "{text}");
    let log = std::fs::File::create(icinga.path("daemon.log")).unwrap();
    let mut cmd = icinga.command(&[]);
    cmd.stdout(log.try_clone().unwrap())
        .stderr(log)
        .process_group(0);
    let _daemon = Daemon {
        child: cmd.spawn().expect("starting icinga2 daemon"),
    };
    let perfdata = icinga.path("perfdata");
    let want = expected_services();
    let all_ok = wait_until(Duration::from_secs(40), || {
        let now = latest(&results(&perfdata));
        want.iter()
            .all(|s| now.get(s).is_some_and(|(st, _)| st == "OK"))
    });
    let seen = latest(&results(&perfdata));
    assert!(
        all_ok,
        "not every service OK: {seen:#?}\nicinga2 log:\n{}",
        std::fs::read_to_string(icinga.path("daemon.log")).unwrap_or_default()
    );
    let names: Vec<&String> = seen.keys().collect();
    assert_eq!(names, want.iter().collect::<Vec<_>>(), "the services run");
    let (_, perf) = &seen["redis-memory-used-main"];
    assert!(
        perf.starts_with("used_memory=") && !perf.contains("c;"),
        "the 64-bit gauge's perfdata: {perf}"
    );
    println!("all OK: {seen:#?}");

    // 95 % of maxmemory: the memory service turns CRITICAL.
    master.use_percent_of_maxmemory(95);
    let critical = wait_until(Duration::from_secs(20), || {
        results(&perfdata)
            .iter()
            .any(|(s, st, _)| s == "redis-memory-main" && st == "CRITICAL")
    });
    assert!(
        critical,
        "redis-memory-main never CRITICAL: {:#?}",
        latest(&results(&perfdata))
    );
    let memory = CHECKS.iter().find(|c| c.service == "redis-memory").unwrap();
    let (code, text) = run_nagios(&nagios_command_line(memory), port, 1);
    println!("at 95 %: {code} {text}");
    assert_eq!(code, 2, "{text}");

    let all = results(&perfdata);
    let unknown: Vec<_> = all.iter().filter(|(_, st, _)| st == "UNKNOWN").collect();
    assert!(unknown.is_empty(), "UNKNOWN results: {unknown:#?}");
    println!("{} check results, none UNKNOWN", all.len());
}
