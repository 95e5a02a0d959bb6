//! `redis-snmp kick` as a manager runs it: a `kick.toml` of the test's
//! (state directory in a private temp dir), snmptrapd's lines taken from
//! the shipped `debian/examples/snmptrapd-kick.conf`, and SNMPv3 informs
//! with the shipped user, as the agents' snmpd sends them.

use crate::*;
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// PUPPET-AGENT-MIB's notifications the kick reads.
pub const RESOURCE_CHANGED: &str = ".1.3.6.1.4.1.20267.401.0.9";
pub const RUN_FAILED: &str = ".1.3.6.1.4.1.20267.401.0.1";
pub const RUN_CHANGED: &str = ".1.3.6.1.4.1.20267.401.0.2";
/// puppetEventResourceType and puppetEventTitle, row 1.
pub const EVENT_TYPE: &str = ".1.3.6.1.4.1.20267.401.4.1.4.1";
pub const EVENT_TITLE: &str = ".1.3.6.1.4.1.20267.401.4.1.5.1";
/// coldStart: a notification that is not the kick's.
pub const COLD_START: &str = ".1.3.6.1.6.3.1.1.5.1";

/// The passphrases the tests put in place of the examples' CHANGE-MEs.
pub const AUTH_PASS: &str = "kick-test-auth-pass";
pub const PRIV_PASS: &str = "kick-test-priv-pass";

/// A manager's kick configuration and ledger.
pub struct KickSite {
    dir: TempDir,
}

impl KickSite {
    /// `body(dir)`: kick_command, limits, `[addresses]`, `[[role]]`s, given
    /// the site's own temp dir; the state directory is added, inside it.
    pub fn new(body: impl FnOnce(&Path) -> String) -> KickSite {
        let dir = tempfile::Builder::new()
            .prefix("redis-snmp-kick.")
            .tempdir()
            .expect("tempdir");
        let site = KickSite { dir };
        let text = format!(
            "state_dir = \"{}\"\n{}",
            site.state_dir().display(),
            body(site.dir())
        );
        fs::write(site.config(), text).expect("kick.toml");
        fs::set_permissions(site.config(), fs::Permissions::from_mode(0o600)).unwrap();
        site
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn config(&self) -> PathBuf {
        self.dir.path().join("kick.toml")
    }

    pub fn state_dir(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// snmptrapd's lines for the kick: the shipped example with the
    /// tests' passphrases, and the handler run as `BIN kick -c CONFIG`.
    pub fn snmptrapd_lines(&self) -> String {
        let example = fs::read_to_string(repo_root().join("debian/examples/snmptrapd-kick.conf"))
            .expect("debian/examples/snmptrapd-kick.conf");
        let handler = format!(
            "{} kick -c {}",
            agent_bin().display(),
            self.config().display()
        );
        example
            .lines()
            .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                l.replace("CHANGE-ME-auth-pass", AUTH_PASS)
                    .replace("CHANGE-ME-priv-pass", PRIV_PASS)
                    .replace("/usr/sbin/redis-snmp kick", &handler)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// `redis-snmp kick --status`.
    pub fn status(&self) -> String {
        let out = self.run(&["--status"], None);
        assert!(out.status.success(), "kick --status: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The handler run directly with `input` on stdin; its output and how
    /// long it took.
    pub fn handle(&self, input: &str) -> (Output, Duration) {
        let started = Instant::now();
        let out = self.run(&[], Some(input));
        (out, started.elapsed())
    }

    fn run(&self, args: &[&str], input: Option<&str>) -> Output {
        let mut child = Command::new(agent_bin())
            .arg("kick")
            .arg("-c")
            .arg(self.config())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("redis-snmp kick");
        let mut stdin = child.stdin.take().unwrap();
        if let Some(input) = input {
            let _ = stdin.write_all(input.as_bytes());
        }
        drop(stdin);
        child.wait_with_output().expect("redis-snmp kick")
    }

    /// What the kick command of [`recording_command`] recorded, sorted.
    pub fn kicked(&self) -> Vec<String> {
        let text = fs::read_to_string(self.dir().join("kicked")).unwrap_or_default();
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        lines.sort();
        lines
    }

    /// The status lines that mention `text`.
    pub fn status_lines(&self, text: &str) -> Vec<String> {
        self.status()
            .lines()
            .filter(|l| l.contains(text))
            .map(String::from)
            .collect()
    }
}

impl Drop for KickSite {
    fn drop(&mut self) {
        self.stop_kicks();
    }
}

impl KickSite {
    /// Kills what this site's kicks started: each supervisor (its command
    /// line names this site's configuration) leads a session of its own,
    /// which holds its kick command's process group.
    pub fn stop_kicks(&self) {
        let config = self.config().display().to_string();
        let sessions: Vec<u32> = processes()
            .filter(|&pid| {
                let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
                args.contains(&config.as_bytes()) && args.contains(&b"--supervise".as_slice())
            })
            .collect();
        for pid in processes() {
            if session_of(pid).is_some_and(|s| sessions.contains(&s)) {
                // SAFETY: kill has no memory effects.
                unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            }
        }
        // Gone once /proc says so (a zombie is reaped by init).
        crate::wait_until(Duration::from_secs(5), || {
            processes().all(|pid| !session_of(pid).is_some_and(|s| sessions.contains(&s)))
        });
    }
}

fn processes() -> impl Iterator<Item = u32> {
    fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse().ok())
}

/// Field 6 of /proc/PID/stat.
fn session_of(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..]
        .split_whitespace()
        .nth(3)?
        .parse()
        .ok()
}

/// The `kick_command` line of a script in `dir` that appends `HOST ROLE`
/// to `dir/kicked` (see [`KickSite::kicked`]), then sleeps `seconds`: what
/// a test runs instead of ssh.
pub fn recording_command(dir: &Path, seconds: u32) -> String {
    let script = dir.join(format!("kick-{seconds}.sh"));
    fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$1 $2\" >> {}\nexec sleep {seconds}\n",
            dir.join("kicked").display()
        ),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    format!(
        "kick_command = [\"{}\", \"{{host}}\", \"{{role}}\"]\n",
        script.display()
    )
}

/// The arguments of `snmpinform`/`snmptrap` for SNMPv3 with the shipped
/// user, authenticated and encrypted; `auth` the passphrase to use.
pub fn v3_args(auth: &str) -> Vec<String> {
    [
        "-v", "3", "-u", "snmpmon", "-l", "authPriv", "-a", "SHA-256", "-A", auth, "-x", "AES",
        "-X", PRIV_PASS,
    ]
    .map(String::from)
    .to_vec()
}

/// The varbinds of a puppetResourceChanged for `kind[title]`.
pub fn resource_varbinds(kind: &str, title: &str) -> Vec<String> {
    [EVENT_TYPE, "s", kind, EVENT_TITLE, "s", title]
        .map(String::from)
        .to_vec()
}

/// Sends a notification with net-snmp's own tool: `program` is
/// `snmpinform` or `snmptrap`, `version_args` e.g. [`v3_args`] or
/// `-v 2c -c public`; `launcher` runs it elsewhere (`ip netns exec NS`).
pub fn send_notification(
    launcher: &[&str],
    program: &str,
    version_args: &[String],
    target: &str,
    oid: &str,
    varbinds: &[String],
) -> Output {
    let conf = tempfile::tempdir().unwrap();
    let (first, rest) = match launcher.split_first() {
        Some((first, rest)) => (*first, rest.to_vec()),
        None => (program, Vec::new()),
    };
    let mut command = Command::new(first);
    if !launcher.is_empty() {
        command.args(&rest).arg(program);
    }
    command
        .args(version_args)
        .args(["-r", "1", "-t", "2"])
        .arg(target)
        .arg("")
        .arg(oid)
        .args(varbinds)
        .env("SNMPCONFPATH", conf.path())
        .env("SNMP_PERSISTENT_DIR", conf.path())
        .env("MIBS", "")
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"))
}

/// The PIDs of the processes holding the UDP socket bound to `port`, in
/// the network namespace of process `ns_pid` (its `/proc/PID/net/udp` and
/// udp6), found by the socket's inode in every `/proc/*/fd`.
pub fn udp_port_holders(ns_pid: u32, port: u16) -> Vec<u32> {
    let mut inodes = Vec::new();
    for table in ["udp", "udp6"] {
        let text = fs::read_to_string(format!("/proc/{ns_pid}/net/{table}")).unwrap_or_default();
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let local_port = fields
                .get(1)
                .and_then(|a| a.rsplit(':').next())
                .and_then(|p| u16::from_str_radix(p, 16).ok());
            if local_port == Some(port) {
                if let Some(inode) = fields.get(9) {
                    inodes.push(format!("socket:[{inode}]"));
                }
            }
        }
    }
    let mut holders = Vec::new();
    for pid in processes() {
        let fds = fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten();
        let holds = fds.into_iter().any(|fd| {
            fs::read_link(fd.path())
                .is_ok_and(|target| inodes.iter().any(|i| target.as_os_str() == i.as_str()))
        });
        if holds {
            holders.push(pid);
        }
    }
    holders
}
