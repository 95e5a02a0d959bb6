//! `redis-snmp kick` as a manager runs it: a `kick.toml` of the test's
//! (state directory in a private temp dir), snmptrapd's lines taken from
//! the shipped `debian/examples/snmptrapd-kick.conf` (its user is the one of
//! `snmpd-access.conf`, [`crate::UsmUser::documented`], which the agents'
//! snmpd send their informs as).

use crate::*;
use std::fmt::Write as _;
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use tempfile::TempDir;

use crate::netns::Host;

/// A Puppet-managed node as the kick sees it: its snmpd (in `host`'s
/// namespace, or this one) sending the agent's notifications as SNMPv3
/// informs with privacy (the shipped `trapsess` line) to `manager`, and
/// its agent (outside any namespace: AgentX is a unix socket path)
/// following this node's own Puppet and events log.
pub struct PuppetNode {
    pub host: Option<Host>,
    pub puppet: PuppetApply,
    events: PathBuf,
    _agent: Agent,
    pub snmpd: Snmpd,
    _dir: TempDir,
}

impl PuppetNode {
    pub fn start(host: Option<&Host>, manager: &Snmptrapd) -> PuppetNode {
        PuppetNode::start_as(host, manager, None, None, "")
    }

    /// A node in `host` whose agent's `[puppet]` section has `extra` too
    /// (`facts`, `role_fact`, `facts_dirs`), its certificate giving it
    /// `role` when one is given.
    pub fn with_settings(
        host: &Host,
        manager: &Snmptrapd,
        role: Option<&str>,
        extra: &str,
    ) -> PuppetNode {
        PuppetNode::start_as(Some(host), manager, role, None, extra)
    }

    /// A node whose Puppet certificate gives it `role` (its trusted fact
    /// `pp_role`, which its agent serves as puppetRole).
    pub fn with_role(host: &Host, manager: &Snmptrapd, role: &str) -> PuppetNode {
        PuppetNode::start_as(Some(host), manager, Some(role), None, "")
    }

    /// A node on this host whose agent follows the run files of another
    /// Puppet (`public`: the summary's directory, `state`: the report's
    /// and the locks', as `puppet agent --publicdir/--vardir` lays them
    /// out), not a `puppet apply` of its own.
    pub fn following(manager: &Snmptrapd, public: &Path, state: &Path) -> PuppetNode {
        PuppetNode::start_as(None, manager, None, Some((public, state)), "")
    }

    /// A node in `host` whose agent follows the run files of a `puppet
    /// agent` run in that host ([`crate::puppet_server::AgentHost`]'s,
    /// `public` and `state` as in [`PuppetNode::following`]).
    pub fn in_host_following(
        host: &Host,
        manager: &Snmptrapd,
        public: &Path,
        state: &Path,
    ) -> PuppetNode {
        PuppetNode::start_as(Some(host), manager, None, Some((public, state)), "")
    }

    fn start_as(
        host: Option<&Host>,
        manager: &Snmptrapd,
        role: Option<&str>,
        files: Option<(&Path, &Path)>,
        extra: &str,
    ) -> PuppetNode {
        // The shipped trapsess line; the rest of the shipped access lines
        // would keep the tests' community out of PUPPET-AGENT-MIB.
        let trapsess = access_example_lines(&manager.address().to_string())
            .into_iter()
            .find(|l| l.starts_with("trapsess"))
            .expect("a trapsess line in debian/examples/snmpd-access.conf");
        let mut options = SnmpdOptions::default().config_line(&trapsess);
        if let Some(host) = host {
            options = options.in_host(host);
        }
        let snmpd = Snmpd::start_with(options);
        let puppet = PuppetApply::new();
        let dir = tempfile::tempdir().expect("tempdir");
        let events = dir.path().join("events.jsonl");
        let ssl = match (role, host) {
            (Some(role), Some(host)) => crate::pki::ssldir_with_role(dir.path(), host.name(), role),
            _ => String::new(),
        };
        let (own_public, own_state) = (puppet.public_dir(), puppet.state_dir());
        let (public, state) = files.unwrap_or((&own_public, &own_state));
        let agent = AgentConfig::new(&snmpd)
            .redis("main", "127.0.0.1:1", "")
            .puppet_files(
                public,
                state,
                &format!("events_log = \"{}\"\n{ssl}\n{extra}", events.display()),
            )
            .start(dir.path());
        // The agent follows the (still missing) log: puppetEventsLogStatus.0.
        let following = wait_until(Duration::from_secs(15), || {
            snmpd
                .numeric()
                .get_one(".1.3.6.1.4.1.20267.401.1.37.0")
                .value
                == "2"
        });
        assert!(following, "the agent does not follow {}", events.display());
        PuppetNode {
            host: host.cloned(),
            puppet,
            events,
            _agent: agent,
            snmpd,
            _dir: dir,
        }
    }

    /// What the node's agent logged.
    pub fn agent_log(&self) -> String {
        self._agent.log()
    }

    /// The events log the agent follows.
    pub fn events(&self) -> &Path {
        &self.events
    }

    /// The arguments of `puppet apply` of `manifest` on this node, logging
    /// its events where the agent follows them.
    pub fn apply_args(&self, name: &str, manifest: &str) -> Vec<String> {
        let logdest = format!("{},console", self.events.display());
        self.puppet
            .apply_args(name, manifest, &["--logdest", &logdest])
    }

    /// Applies `manifest` now, in the node's host, as an operator would;
    /// the exit code of `puppet apply --detailed-exitcodes` (0 or 2).
    pub fn apply(&self, name: &str, manifest: &str) -> i32 {
        let mut command = match &self.host {
            Some(host) => host.command("puppet"),
            None => Command::new("puppet"),
        };
        let out = command
            .args(self.apply_args(name, manifest))
            .output()
            .expect("puppet apply");
        let code = out.status.code().unwrap_or(-1);
        assert!(matches!(code, 0 | 2), "puppet apply: {out:?}");
        code
    }
}

/// PUPPET-AGENT-MIB's notifications the kick reads.
pub const RESOURCE_CHANGED: &str = ".1.3.6.1.4.1.20267.401.0.9";
pub const RUN_FAILED: &str = ".1.3.6.1.4.1.20267.401.0.1";
pub const RUN_CHANGED: &str = ".1.3.6.1.4.1.20267.401.0.2";
/// puppetEventResourceType and puppetEventTitle, row 1.
pub const EVENT_TYPE: &str = ".1.3.6.1.4.1.20267.401.4.1.4.1";
pub const EVENT_TITLE: &str = ".1.3.6.1.4.1.20267.401.4.1.5.1";
/// coldStart: a notification that is not the kick's.
pub const COLD_START: &str = ".1.3.6.1.6.3.1.1.5.1";

/// snmptrapd's traphandle input for notification `trap` from `from` (its
/// transport line), with `varbinds` as `(OID, value)`: what the handler
/// reads on its standard input.
pub fn trap_input(from: &str, trap: &str, varbinds: &[(&str, &str)]) -> String {
    let mut text = format!(
        "localhost\nUDP: [{from}]:40000->[127.0.0.1]:162\n.1.3.6.1.2.1.1.3.0 0:0:01:00.00\n.1.3.6.1.6.3.1.1.4.1.0 {trap}\n"
    );
    for (oid, value) in varbinds {
        text.push_str(&format!("{oid} {value}\n"));
    }
    text
}

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

    /// snmptrapd's lines for the kick: the shipped example, with the
    /// handler run as `BIN kick -c CONFIG`.
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
            .map(|l| l.replace("/usr/sbin/redis-snmp kick", &handler))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// `redis-snmp kick --status`.
    pub fn status(&self) -> String {
        let out = self.run(&["--status"], None);
        assert!(out.status.success(), "kick --status: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `redis-snmp kick --inventory` (with `--json`).
    pub fn inventory(&self, json: bool) -> String {
        let args: &[&str] = if json {
            &["--inventory", "--json"]
        } else {
            &["--inventory"]
        };
        let out = self.run(args, None);
        assert!(out.status.success(), "kick --inventory: {out:?}");
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

/// `n` varbinds of puppetEventMessage (rows 0 to n-1), each `s x`: a
/// notification far larger than any the agent sends (M1's flood).
pub fn flood_varbinds(n: u32) -> Vec<String> {
    (0..n)
        .flat_map(|row| {
            [
                format!(".1.3.6.1.4.1.20267.401.4.1.6.{row}"),
                "s".to_string(),
                "x".to_string(),
            ]
        })
        .collect()
}

/// The varbinds of a puppetResourceChanged for `kind[title]`, for
/// [`crate::SnmpClient::inform`].
pub fn resource_varbinds<'a>(kind: &'a str, title: &'a str) -> [&'a str; 6] {
    [EVENT_TYPE, "s", kind, EVENT_TITLE, "s", title]
}

/// A manager in a host of a [`crate::netns::Network`]: snmptrapd with the shipped lines, running the kick.
pub struct HostsManager {
    pub site: KickSite,
    pub trapd: Snmptrapd,
}

impl HostsManager {
    /// The manager of `hosts` (their addresses in `[addresses]`), with
    /// `settings` (the rest of kick.toml); its kick command is the script
    /// [`HostsManager::runs`] writes.
    pub fn start(mgr: &Host, hosts: &[&Host], settings: &str) -> HostsManager {
        let site = KickSite::new(|dir| {
            let mut addresses = String::from("[addresses]\n");
            for host in hosts {
                let _ = writeln!(addresses, "\"{}\" = [\"{}\"]", host.name(), host.address());
            }
            format!(
                "kick_command = [\"{}\", \"{{host}}\", \"{{role}}\"]\n{settings}\n{addresses}",
                dir.join("kick.sh").display()
            )
        });
        let trapd = Snmptrapd::start_in(mgr, &site.snmptrapd_lines());
        HostsManager { site, trapd }
    }

    /// The kick command: records `HOST ROLE`, then for each (host, role)
    /// of `runs` applies its manifest inside that host.
    pub fn runs(&self, nodes: &[&PuppetNode], runs: &[(&str, &str, String)]) {
        let mut cases = String::new();
        for (host, role, manifest) in runs {
            let node = nodes
                .iter()
                .find(|n| n.host.as_ref().is_some_and(|h| h.name() == *host))
                .unwrap();
            let netns = node.host.as_ref().unwrap().netns();
            let args: Vec<String> = node
                .apply_args(&format!("kicked-{role}"), manifest)
                .iter()
                .map(|a| format!("'{a}'"))
                .collect();
            let _ = writeln!(
                cases,
                "\"{host} {role}\") exec ip netns exec {} puppet {} >/dev/null 2>&1 ;;",
                netns,
                args.join(" ")
            );
        }
        let script = self.site.dir().join("kick.sh");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\necho \"$1 $2\" >> {}\ncase \"$1 $2\" in\n{cases}*) exec sleep 30 ;;\nesac\n",
                self.site.dir().join("kicked").display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    pub fn wait_quiet(&self, timeout: Duration) {
        let quiet = wait_until(timeout, || {
            let status = self.site.status();
            !status.contains(" running ") && !status.contains(" queued ")
        });
        assert!(quiet, "kicks still running:\n{}", self.site.status());
    }
}

/// A `run` callback for `[[on]]` rules: a script in `dir` that appends its
/// arguments, one a line, then `--`, to `dir/NAME.calls`; its path.
pub fn recording_callback(dir: &Path, name: &str) -> PathBuf {
    recording_callback_then(dir, name, "")
}

/// [`recording_callback`], then the shell lines `then` (`sleep 2`, an
/// `exit 3` the first time…).
pub fn recording_callback_then(dir: &Path, name: &str, then: &str) -> PathBuf {
    let script = dir.join(format!("{name}.sh"));
    fs::write(
        &script,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> {calls}\necho -- >> {calls}\n{then}\n",
            calls = dir.join(format!("{name}.calls")).display()
        ),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// The calls [`recording_callback`] `name` in `dir` recorded: each its
/// arguments.
pub fn callback_calls(dir: &Path, name: &str) -> Vec<Vec<String>> {
    let text = fs::read_to_string(dir.join(format!("{name}.calls"))).unwrap_or_default();
    let mut calls = Vec::new();
    let mut call = Vec::new();
    for line in text.lines() {
        if line == "--" {
            calls.push(std::mem::take(&mut call));
        } else {
            call.push(line.to_string());
        }
    }
    calls
}

impl KickSite {
    /// The lines of kick.toml's `[[on]]` headers, in order: the rules'
    /// names in the ledger (`on:LINE`) and in their causes.
    pub fn on_lines(&self) -> Vec<usize> {
        fs::read_to_string(self.config())
            .unwrap_or_default()
            .lines()
            .enumerate()
            .filter(|(_, l)| l.trim() == "[[on]]")
            .map(|(i, _)| i + 1)
            .collect()
    }
}

/// The puppetResourceFailed notification.
pub const RESOURCE_FAILED: &str = ".1.3.6.1.4.1.20267.401.0.10";
