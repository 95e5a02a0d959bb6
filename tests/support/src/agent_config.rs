//! The agent's configuration file, as the tests write it: one builder
//! instead of a TOML string assembled in every test program.

use crate::{Agent, PuppetApply, Snmpd};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A configuration file for the agent: the top-level keys (snmpd's AgentX
/// socket, a 1 s refresh), then the `[[redis]]` entries and other tables in
/// the order they were added.
pub struct AgentConfig {
    top: Vec<String>,
    tables: String,
}

impl AgentConfig {
    /// `agentx_socket` of `snmpd`, `refresh = 1`.
    pub fn new(snmpd: &Snmpd) -> AgentConfig {
        AgentConfig::with_agentx(&snmpd.agentx_address())
    }

    /// `agentx_socket = agentx` (an address no snmpd may serve, for a
    /// configuration that is only checked), `refresh = 1`.
    pub fn with_agentx(agentx: &str) -> AgentConfig {
        AgentConfig {
            top: vec![
                format!("agentx_socket = \"{agentx}\""),
                "refresh = 1".into(),
            ],
            tables: String::new(),
        }
    }

    /// Another top-level key; one the builder set already is replaced.
    pub fn top(mut self, key: &str, value: &str) -> AgentConfig {
        self.top.retain(|line| !sets_key(line, key));
        self.top.push(format!("{key} = {value}"));
        self
    }

    /// A `[[redis]]` entry: its name, address, `extra` lines, and a 1 s
    /// timeout (the tests' servers answer at once) unless `extra` sets one.
    pub fn redis(mut self, name: &str, address: &str, extra: &str) -> AgentConfig {
        let timeout = if extra.lines().any(|l| sets_key(l, "timeout")) {
            ""
        } else {
            "timeout = 1.0\n"
        };
        self.tables.push_str(&format!(
            "\n[[redis]]\nname = \"{name}\"\naddress = \"{address}\"\n{timeout}{extra}\n"
        ));
        self
    }

    /// The `[puppet]` table naming the run files of a private Puppet, and
    /// `extra` lines.
    pub fn puppet(self, puppet: &PuppetApply, extra: &str) -> AgentConfig {
        self.puppet_files(&puppet.public_dir(), &puppet.state_dir(), extra)
    }

    /// The `[puppet]` table naming the run summary in `public`, the report
    /// and the lock files in `state` (Puppet's own layout), and `extra`;
    /// unless `extra` names one, an events log in `state` (so the agent
    /// never follows the machine's own /var/log/puppet-events/events.jsonl).
    pub fn puppet_files(mut self, public: &Path, state: &Path, extra: &str) -> AgentConfig {
        let events_log = if extra.lines().any(|l| sets_key(l, "events_log")) {
            String::new()
        } else {
            format!(
                "events_log = \"{}\"\n",
                state.join("events.jsonl").display()
            )
        };
        self.tables.push_str(&format!(
            "\n[puppet]\nsummary = \"{}\"\nreport = \"{}\"\ndisabled_lock = \"{}\"\nrun_lock = \"{}\"\n{events_log}{extra}\n",
            public.join("last_run_summary.yaml").display(),
            state.join("last_run_report.yaml").display(),
            state.join("agent_disabled.lock").display(),
            state.join("agent_catalog_run.lock").display(),
        ));
        self
    }

    /// Any table text (e.g. [`crate::puppet_fixture_section`]'s).
    pub fn table(mut self, text: &str) -> AgentConfig {
        self.tables.push('\n');
        self.tables.push_str(text);
        self.tables.push('\n');
        self
    }

    /// The file's text.
    pub fn text(&self) -> String {
        format!("{}\n{}", self.top.join("\n"), self.tables)
    }

    /// Writes `dir/agent.toml` and returns its path.
    pub fn write(&self, dir: &Path) -> PathBuf {
        let path = dir.join("agent.toml");
        std::fs::write(&path, self.text()).expect("agent.toml");
        path
    }

    /// Writes the file into `dir`, starts `redis-snmp -n -v -c FILE` and
    /// waits (10 s at most) for it to register with snmpd.
    pub fn start(&self, dir: &Path) -> Agent {
        self.start_with(dir, &["-v"])
    }

    /// Like [`AgentConfig::start`], at the default verbosity: the log is
    /// what an operator reads.
    pub fn start_quiet(&self, dir: &Path) -> Agent {
        self.start_with(dir, &[])
    }

    fn start_with(&self, dir: &Path, flags: &[&str]) -> Agent {
        let path = self.write(dir);
        let mut args = vec!["-n"];
        args.extend_from_slice(flags);
        args.extend_from_slice(&["-c", path.to_str().unwrap()]);
        let mut agent = Agent::start_raw(&args, &[]);
        agent.expect_registered(Duration::from_secs(10));
        agent
    }
}

/// Whether a TOML line sets `key` itself: `events_log`, not
/// `events_log_owner` nor another key that starts with the same word.
fn sets_key(line: &str, key: &str) -> bool {
    line.split_once('=').is_some_and(|(k, _)| k.trim() == key)
}
