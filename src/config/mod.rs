//! Configuration: the TOML file (`-c`), the command line and the
//! environment, merged and validated into one [`Config`] before anything
//! starts. Every error names the file, line and key.

use crate::agentx::address::AgentxAddress;
use crate::alarms::{AlarmSpec, Direction};
use crate::cli::Cli;
use crate::metrics::{Layout, Notification};
use crate::oid::Oid;
use crate::secret::{self, Secret};
use serde::Deserialize;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One instance's settings and its `[[redis]]` entry.
mod instance;
pub use instance::*;
/// `[puppet]`: what the Puppet readers take, with defaults and bounds.
mod puppet;
pub use puppet::*;
/// `[discovery]`: its settings, as written and validated.
mod discovery;
use discovery::{discovery_settings, FileDiscovery};
pub use discovery::{DiscoverySettings, DEFAULT_DISCOVERY_INTERVAL_SECS};

/// Environment variable holding the first instance's password.
pub const PASSWORD_ENV: &str = "REDIS_SNMP_PASSWORD";
pub const DEFAULT_REFRESH_SECS: u64 = 10;
/// The costly parts of a poll (INFO's commandstats and latencystats, SLOWLOG,
/// LATENCY LATEST) are asked every this many refresh intervals unless
/// `slow_refresh` says otherwise. 15: what they add per poll (their cost
/// over plain INFO, about 64 µs of Redis's time on Redis 7.0, / 15) is then
/// no more than what zabbix_agent2's template adds to the same INFO with
/// its PING and SLOWLOG GET (`scripts/bench-peers.sh`; docs/benchmarks.md).
pub const DEFAULT_SLOW_REFRESH_FACTOR: u64 = 15;
pub const DEFAULT_PID_FILE: &str = "/var/run/redis-snmp.pid";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogTarget {
    /// journald when started by systemd, otherwise stderr.
    Auto,
    Stderr,
    Journald,
}

/// `[puppet] resource_notifications_per_minute` by default: two runs'
/// full budgets (`resource_notifications_per_run`, 50) in a minute, such as
/// the agent's run and one by hand; past it a flood is forged (run
/// boundaries are lines of the log too) or nothing a manager can follow
/// one trap at a time.
pub const DEFAULT_RESOURCE_NOTIFICATIONS_PER_MINUTE: usize = 100;

/// `[notifications] alarm_raises_per_minute` unless set: far above what
/// the default alarms can raise at once on an honest server (four kinds,
/// the lag one per replica), far below a hostile server's thousands of
/// rows crossing together.
pub const DEFAULT_ALARM_RAISES_PER_MINUTE: usize = 60;

/// Settings of the notifier.
#[derive(Debug, Clone, PartialEq)]
pub struct NotifyConfig {
    /// The notifications not to send (named in the file by their MIB
    /// names, each checked when the file is read).
    pub disabled: HashSet<Notification>,
    /// At most this many notifications of one kind from one source per
    /// minute; the rest are dropped (and counted in the log).
    pub max_per_minute: usize,
    /// `[notifications] alarm_raises_per_minute`: at most this many
    /// alarms raised per instance in any minute, all its alarms together;
    /// a raise held back holds back its rearm.
    pub alarm_raises_per_minute: usize,
    /// Puppet is stale when its last run ended longer ago than this.
    pub puppet_stale_after: Duration,
    /// `[puppet] converge_runs`: this many runs in a row that each changed
    /// resources are not converging (`puppetNotConverging`).
    pub puppet_converge_runs: usize,
    /// `[puppet] min_run_interval`: runs that end closer together than this
    /// are quick; [`crate::judge::puppet::STORM_QUICK_RUNS`] quick runs in a row
    /// are a run storm, over once no run ended for this long.
    pub puppet_min_run_interval: Duration,
    /// `[puppet] resource_notifications_per_minute`: the events log's
    /// resource notifications (`puppetResourceChanged`,
    /// `puppetResourceFailed`) sent at most, together, in any minute.
    pub puppet_resource_per_minute: usize,
    /// `[puppet] certificate_warning_days`: a Puppet certificate or CRL
    /// with less left than this is expiring (`puppetCertificateExpiring`).
    pub puppet_certificate_warning: Duration,
    /// The agent's own thresholds (`[alarms]`, `[[alarm]]`): the defaults
    /// ([`AlarmSpec::defaults`]) unless turned off, as the file changes
    /// them.
    pub alarms: Vec<AlarmSpec>,
}

impl Default for NotifyConfig {
    fn default() -> Self {
        NotifyConfig {
            disabled: HashSet::new(),
            max_per_minute: 5,
            alarm_raises_per_minute: DEFAULT_ALARM_RAISES_PER_MINUTE,
            puppet_stale_after: Duration::from_secs(2 * 3600),
            puppet_converge_runs: DEFAULT_CONVERGE_RUNS,
            puppet_min_run_interval: Duration::from_secs(DEFAULT_MIN_RUN_INTERVAL),
            puppet_resource_per_minute: DEFAULT_RESOURCE_NOTIFICATIONS_PER_MINUTE,
            puppet_certificate_warning: CertificateSettings::default().warning,
            alarms: AlarmSpec::defaults(),
        }
    }
}

/// Everything the agent needs, validated.
#[derive(Debug, Clone)]
pub struct Config {
    pub agentx: AgentxAddress,
    pub refresh: Duration,
    /// The default of every instance's `slow_refresh`: at least `refresh`.
    pub slow_refresh: Duration,
    pub layout: Layout,
    pub instances: Vec<RedisInstance>,
    pub daemonize: bool,
    pub pid_file: PathBuf,
    pub verbosity: u8,
    pub log_target: LogTarget,
    pub notifications: NotifyConfig,
    /// The Puppet files to watch, when Puppet is watched.
    pub puppet: Option<PuppetPaths>,
    /// Puppet's events log to follow: when Puppet is watched, unless
    /// `events_log` is `false` or empty.
    pub puppet_events: Option<EventsConfig>,
    /// `[discovery]` (or `--discover`): the servers of this host added to
    /// `instances` by `discovery::with_discovered` (`src/discovery/mod.rs`).
    pub discovery: DiscoverySettings,
    /// Things to warn about once logging is up (a password on the command
    /// line, a password file readable by all).
    pub warnings: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read configuration file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("in {path}: {message}")]
    File { path: String, message: String },
    #[error("{0}")]
    Invalid(String),
}

/// The TOML file, as written. Unknown keys are errors: a typo must not be
/// silently ignored.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    agentx_socket: Option<String>,
    refresh: Option<u64>,
    /// Seconds between two reads of the costly parts of a poll.
    slow_refresh: Option<u64>,
    oid: Option<String>,
    daemon_pid: Option<PathBuf>,
    log: Option<String>,
    #[serde(default)]
    redis: Vec<FileInstance>,
    notifications: Option<FileNotifications>,
    puppet: Option<FilePuppet>,
    /// `[alarms]`: the agent's own thresholds on or off, with or without
    /// the default ones.
    alarms: Option<FileAlarms>,
    /// `[[alarm]]`: one threshold each.
    #[serde(default)]
    alarm: Vec<FileAlarm>,
    /// `[discovery]`: the Redis and Valkey servers of this host.
    discovery: Option<FileDiscovery>,
}

/// `[alarms]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileAlarms {
    /// `false`: no alarm at all, not even a `[[alarm]]`.
    enabled: Option<bool>,
    /// `false`: only the `[[alarm]]` entries, not the defaults.
    defaults: Option<bool>,
}

/// `[[alarm]]`: a threshold on one object of REDIS-SERVER-MIB.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileAlarm {
    name: String,
    /// Its MIB name, e.g. `redisMemUsedOfMax`.
    object: String,
    /// `above` or `below`.
    direction: String,
    trigger: i64,
    rearm: i64,
    /// Polls in a row beyond the trigger; 1 unless said.
    count: Option<u32>,
    /// Instance names; all unless said.
    instances: Option<Vec<String>>,
}

/// `[puppet]`: watch the Puppet agent's files. Present means on, unless
/// `enabled = false`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FilePuppet {
    enabled: Option<bool>,
    summary: Option<PathBuf>,
    report: Option<PathBuf>,
    disabled_lock: Option<PathBuf>,
    run_lock: Option<PathBuf>,
    /// Root of PUPPET-AGENT-MIB.
    oid: Option<String>,
    /// Seconds without a run after which the agent is stale.
    stale_after: Option<u64>,
    /// Changing runs in a row that are not converging (2 to 50).
    converge_runs: Option<u64>,
    /// Seconds: runs closer together than this are a storm when it lasts.
    min_run_interval: Option<u64>,
    /// Puppet's JSON-lines log (`--logdest …/events.jsonl`): a path, or
    /// `false` / `""` not to follow one.
    events_log: Option<EventsLogSetting>,
    /// Resource notifications at most per run, then one that says how
    /// many were held back.
    resource_notifications_per_run: Option<usize>,
    /// Resource notifications at most in any minute, whatever the runs.
    resource_notifications_per_minute: Option<usize>,
    /// Rows of `puppetEventTable`.
    event_rows: Option<usize>,
    /// A user besides root who may own the events log and the directories
    /// above it (`puppet`, for a log kept in Debian's /var/log/puppet).
    events_log_owner: Option<String>,
    /// Puppet's `ssldir`: the agent's certificate, CA and CRL.
    ssldir: Option<PathBuf>,
    /// Puppet's `certname`: `certs/<certname>.pem` is the agent's.
    certname: Option<String>,
    /// Days left under which a certificate or the CRL is expiring.
    certificate_warning_days: Option<u64>,
    /// The facts served (`puppetFactTable`, `puppetRunFinished`).
    facts: Option<Vec<String>>,
    /// The external fact that gives the role when the certificate has none.
    role_fact: Option<String>,
    /// facter's external fact directories.
    facts_dirs: Option<Vec<PathBuf>>,
}

/// `events_log = "/path"`, `events_log = false` (or `""`), or `true` (the
/// default path).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum EventsLogSetting {
    Switch(bool),
    Path(PathBuf),
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileNotifications {
    /// Notification names not to send, e.g. `["redisRoleChanged"]`.
    #[serde(default)]
    disabled: Vec<String>,
    max_per_minute: Option<usize>,
    alarm_raises_per_minute: Option<usize>,
}

/// The configuration file is never larger (a few KiB is usual): a file
/// named by mistake costs at most this.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Reads the configuration as `kick` reads its own: a regular file of at
/// most [`MAX_CONFIG_BYTES`], opened without waiting (a FIFO in its place
/// is refused at once, never blocks a start or a reload).
fn read_file(path: &Path) -> Result<FileConfig, ConfigError> {
    let shown = path.display().to_string();
    let read = |source| ConfigError::Read {
        path: shown.clone(),
        source,
    };
    let bytes = crate::secret::read_regular_file(path, MAX_CONFIG_BYTES).map_err(read)?;
    let text = String::from_utf8(bytes).map_err(|_| {
        read(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "it is not UTF-8",
        ))
    })?;
    toml::from_str(&text).map_err(|e| ConfigError::File {
        path: shown,
        message: toml_error(&text, &e),
    })
}

/// A TOML error as `line L, column C (key): message`. Not toml's own
/// `Display`: it quotes the offending line of the file, which prints a
/// password someone wrote into it (`password = "..."`, refused) to stderr
/// and logs. The key is taken from the line, without its value.
pub(crate) fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim_end();
    let hint = if message.contains("unknown field `password`") {
        "; a password is not accepted in this file: put it in a file of its own, \
         mode 0600, named by password_file"
    } else {
        ""
    };
    let Some(span) = e.span() else {
        return format!("{message}{hint}");
    };
    let before = text.get(..span.start).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    let key = text
        .lines()
        .nth(line - 1)
        .and_then(|l| l.split_once('='))
        .map(|(k, _)| k.trim())
        .filter(|k| !k.is_empty() && !k.contains(char::is_whitespace))
        .map(|k| format!(" ({k})"))
        .unwrap_or_default();
    format!("line {line}, column {column}{key}: {message}{hint}")
}

impl Config {
    /// Merge the file named by `-c` (if any), the command line and the
    /// password from the environment (`env_password`).
    pub fn load(cli: &Cli, env_password: Option<String>) -> Result<Config, ConfigError> {
        let (file, file_name) = match &cli.settings.config {
            Some(path) => (read_file(path)?, path.display().to_string()),
            None => (FileConfig::default(), "the command line".to_string()),
        };
        let mut warnings = Vec::new();
        let in_file = |message: String| ConfigError::File {
            path: file_name.clone(),
            message,
        };

        let agentx = match cli
            .settings
            .agentx_socket
            .as_ref()
            .or(file.agentx_socket.as_ref())
        {
            Some(text) => text
                .parse()
                .map_err(|e| in_file(format!("agentx_socket: {e}")))?,
            None => AgentxAddress::default(),
        };
        let refresh_secs = cli.refresh.or(file.refresh).unwrap_or(DEFAULT_REFRESH_SECS);
        if !(1..=86_400).contains(&refresh_secs) {
            return Err(in_file(format!(
                "refresh: {refresh_secs} is not between 1 and 86400 seconds"
            )));
        }
        let layout = match cli.settings.oid.as_ref().or(file.oid.as_ref()) {
            Some(text) => {
                let oid: Oid = text.parse().map_err(|e| in_file(format!("oid: {e}")))?;
                Layout::from_legacy_oid(oid).map_err(|e| in_file(format!("oid: {e}")))?
            }
            None => Layout::default_layout(),
        };
        let log_target = match cli.log.as_deref().or(file.log.as_deref()) {
            None | Some("auto") => LogTarget::Auto,
            Some("stderr") => LogTarget::Stderr,
            Some("journald") => LogTarget::Journald,
            Some(other) => {
                return Err(in_file(format!(
                    "log: {other:?} is not auto, stderr or journald"
                )))
            }
        };

        let mut instances: Vec<RedisInstance> = file
            .redis
            .iter()
            .enumerate()
            .map(|(i, entry)| {
                instance_from_file(
                    entry,
                    &|k: &str| format!("redis[{i}].{k}"),
                    i,
                    &mut warnings,
                )
            })
            .collect::<Result<_, String>>()
            .map_err(in_file)?;
        let mut names = std::collections::HashSet::new();
        for instance in &instances {
            if !names.insert(instance.name.as_str()) {
                return Err(in_file(format!(
                    "redis: the name {:?} is used twice",
                    instance.name
                )));
            }
        }
        let discovery = discovery_settings(cli, file.discovery.as_ref()).map_err(in_file)?;
        // With discovery on, a configuration that names no server polls
        // what is found, not the old tool's 127.0.0.1:6379 (found there too
        // when a server listens on it).
        let names_a_server = !instances.is_empty()
            || cli.settings.host.is_some()
            || cli.settings.port.is_some()
            || cli.settings.password.is_some()
            || cli.settings.password_file.is_some()
            || env_password.as_deref().is_some_and(|p| !p.is_empty());
        if names_a_server || !discovery.local {
            apply_command_line(cli, env_password, &mut instances, &mut warnings)?;
        }
        let slow_refresh_secs = file
            .slow_refresh
            .unwrap_or((refresh_secs.saturating_mul(DEFAULT_SLOW_REFRESH_FACTOR)).min(86_400));
        check_slow_refresh("slow_refresh", slow_refresh_secs, refresh_secs).map_err(in_file)?;
        for (i, entry) in file.redis.iter().enumerate() {
            if let Some(secs) = entry.slow_refresh {
                check_slow_refresh(&format!("redis[{i}].slow_refresh"), secs, refresh_secs)
                    .map_err(in_file)?;
            }
        }
        let mut notifications = notify_config(file.notifications.as_ref()).map_err(in_file)?;
        notifications.alarms =
            alarms_config(file.alarms.as_ref(), &file.alarm, &instances).map_err(in_file)?;
        let mut layout = layout;
        let puppet_events = match &file.puppet {
            Some(p) if p.enabled != Some(false) => events_config(p).map_err(in_file)?,
            Some(_) => None,
            None if cli.settings.puppet => Some(EventsConfig::default()),
            None => None,
        };
        let puppet = match &file.puppet {
            Some(p) if p.enabled != Some(false) => {
                if let Some(text) = &p.oid {
                    let oid: Oid = text
                        .parse()
                        .map_err(|e| in_file(format!("puppet.oid: {e}")))?;
                    layout = layout
                        .with_puppet_root(oid)
                        .map_err(|e| in_file(format!("puppet.oid: {e}")))?;
                }
                if let Some(secs) = p.stale_after {
                    if secs == 0 {
                        return Err(in_file(
                            "puppet.stale_after: must be at least 1 second".into(),
                        ));
                    }
                    notifications.puppet_stale_after = Duration::from_secs(secs);
                }
                if let Some(runs) = p.converge_runs {
                    let max = MAX_CONVERGE_RUNS as u64;
                    if !(2..=max).contains(&runs) {
                        return Err(in_file(format!(
                            "puppet.converge_runs: {runs} is not from 2 to {max} (the changing \
                             runs in a row that are not converging; 1 would be every changed \
                             run, which puppetRunChanged already tells)"
                        )));
                    }
                    notifications.puppet_converge_runs = runs as usize;
                }
                if let Some(secs) = p.min_run_interval {
                    if !(1..=86_400).contains(&secs) {
                        return Err(in_file(format!(
                            "puppet.min_run_interval: {secs} is not from 1 to 86400 seconds \
                             (to turn run storms off, add puppetRunStorm to \
                             [notifications] disabled)"
                        )));
                    }
                    notifications.puppet_min_run_interval = Duration::from_secs(secs);
                }
                if let Some(n) = p.resource_notifications_per_minute {
                    if !(1..=MAX_RESOURCE_NOTIFICATIONS_PER_RUN).contains(&n) {
                        return Err(in_file(format!(
                            "puppet.resource_notifications_per_minute: {n} is not from 1 to \
                             {MAX_RESOURCE_NOTIFICATIONS_PER_RUN} (to send none, add \
                             puppetResourceChanged and puppetResourceFailed to [notifications] \
                             disabled)"
                        )));
                    }
                    notifications.puppet_resource_per_minute = n;
                }
                let mut certificates = CertificateSettings {
                    ssldir: p.ssldir.as_deref().map(absolute),
                    ..CertificateSettings::default()
                };
                if let Some(name) = &p.certname {
                    if !valid_certname(name) {
                        return Err(in_file(format!(
                            "puppet.certname: {:?} is not a Puppet certname (lower case, \
                             printable, no /)",
                            crate::text::printable(name)
                        )));
                    }
                    certificates.certname = Some(name.clone());
                }
                if let Some(days) = p.certificate_warning_days {
                    if !(1..=MAX_CERTIFICATE_WARNING_DAYS).contains(&days) {
                        return Err(in_file(format!(
                            "puppet.certificate_warning_days: {days} is not from 1 to \
                             {MAX_CERTIFICATE_WARNING_DAYS} (to send none, add \
                             puppetCertificateExpiring to [notifications] disabled)"
                        )));
                    }
                    certificates.warning = Duration::from_secs(days * 86_400);
                }
                notifications.puppet_certificate_warning = certificates.warning;
                let defaults = PuppetPaths::default();
                Some(PuppetPaths {
                    facts: fact_settings(p).map_err(in_file)?,
                    certificates,
                    summary: p
                        .summary
                        .as_deref()
                        .map(absolute)
                        .unwrap_or(defaults.summary),
                    report: p.report.as_deref().map(absolute).unwrap_or(defaults.report),
                    disabled_lock: p
                        .disabled_lock
                        .as_deref()
                        .map(absolute)
                        .unwrap_or(defaults.disabled_lock),
                    run_lock: p
                        .run_lock
                        .as_deref()
                        .map(absolute)
                        .unwrap_or(defaults.run_lock),
                })
            }
            Some(_) => None,
            None if cli.settings.puppet => Some(PuppetPaths::default()),
            None => None,
        };

        Ok(Config {
            agentx,
            refresh: Duration::from_secs(refresh_secs),
            slow_refresh: Duration::from_secs(slow_refresh_secs),
            layout,
            instances,
            daemonize: !cli.no_daemon,
            pid_file: absolute(
                &cli.daemon_pid
                    .clone()
                    .or(file.daemon_pid)
                    .unwrap_or_else(|| PathBuf::from(DEFAULT_PID_FILE)),
            ),
            verbosity: cli.verbose,
            log_target,
            notifications,
            puppet,
            puppet_events,
            discovery,
            warnings,
        })
    }
}

/// `[puppet] facts`, `role_fact` and `facts_dirs`, validated: bounded
/// names of facter's shape, absolute directories.
fn fact_settings(p: &FilePuppet) -> Result<FactSettings, String> {
    let mut settings = FactSettings::default();
    if let Some(names) = &p.facts {
        if names.len() > MAX_FACTS {
            return Err(format!(
                "puppet.facts: at most {MAX_FACTS} facts are served"
            ));
        }
        for name in names {
            if !valid_fact_name(name) {
                return Err(format!(
                    "puppet.facts: {:?} is not a fact name (1 to {MAX_FACT_NAME} letters, digits, \
                     '_', '.' or '-')",
                    crate::text::printable(name)
                ));
            }
            if name.bytes().any(|b| b.is_ascii_uppercase()) {
                return Err(format!(
                    "puppet.facts: {name}: facter's fact names are lower case (it lower-cases external facts)"
                ));
            }
            if settings.names.contains(name) {
                return Err(format!("puppet.facts: {name} is named twice"));
            }
            settings.names.push(name.clone());
        }
    }
    if let Some(name) = &p.role_fact {
        if !valid_fact_name(name) || name.bytes().any(|b| b.is_ascii_uppercase()) {
            return Err(format!(
                "puppet.role_fact: {:?} is not a fact name (lower case, as facter names them)",
                crate::text::printable(name)
            ));
        }
        settings.role_fact = Some(name.clone());
    }
    if let Some(dirs) = &p.facts_dirs {
        if dirs.len() > MAX_FACT_DIRS {
            return Err(format!(
                "puppet.facts_dirs: at most {MAX_FACT_DIRS} directories"
            ));
        }
        if let Some(dir) = dirs.iter().find(|d| !d.is_absolute()) {
            return Err(format!(
                "puppet.facts_dirs: {:?} is not an absolute path",
                dir.display().to_string()
            ));
        }
        settings.dirs = dirs.clone();
    }
    Ok(settings)
}

/// The events log keys of `[puppet]`, validated.
fn events_config(p: &FilePuppet) -> Result<Option<EventsConfig>, String> {
    let mut config = EventsConfig::default();
    match &p.events_log {
        None | Some(EventsLogSetting::Switch(true)) => {}
        Some(EventsLogSetting::Switch(false)) => return Ok(None),
        Some(EventsLogSetting::Path(path)) if path.as_os_str().is_empty() => return Ok(None),
        Some(EventsLogSetting::Path(path)) => config.path = absolute(path),
    }
    if let Some(n) = p.resource_notifications_per_run {
        if n > MAX_RESOURCE_NOTIFICATIONS_PER_RUN {
            return Err(format!(
                "puppet.resource_notifications_per_run: {n} is over {MAX_RESOURCE_NOTIFICATIONS_PER_RUN}; \
                 use 0 for none (one notification per run then says how many were held back)"
            ));
        }
        config.notifications_per_run = n;
    }
    if let Some(n) = p.event_rows {
        if !(1..=MAX_EVENT_ROWS).contains(&n) {
            return Err(format!(
                "puppet.event_rows: {n} is not between 1 and {MAX_EVENT_ROWS}"
            ));
        }
        config.rows = n;
    }
    if let Some(name) = &p.events_log_owner {
        let uid = crate::process::uid_of(name)
            .ok_or_else(|| format!("puppet.events_log_owner: there is no user named {name:?}"))?;
        // Root is trusted anyway.
        if uid != 0 {
            config.owner = Some((name.clone(), uid));
        }
    }
    Ok(Some(config))
}

/// The `[notifications]` table: every disabled name must be one we send.
fn notify_config(file: Option<&FileNotifications>) -> Result<NotifyConfig, String> {
    let mut config = NotifyConfig::default();
    let Some(file) = file else { return Ok(config) };
    for name in &file.disabled {
        let Some(notification) = Notification::from_name(name) else {
            return Err(format!(
                "notifications.disabled: no notification is named {name:?} \
                 (the names are the MIBs' NOTIFICATION-TYPEs, as redisRoleChanged)"
            ));
        };
        config.disabled.insert(notification);
    }
    if let Some(max) = file.max_per_minute {
        if max == 0 {
            return Err("notifications.max_per_minute: 0 would send none; use disabled".into());
        }
        config.max_per_minute = max;
    }
    if let Some(max) = file.alarm_raises_per_minute {
        let most = crate::alarms::MAX_TRACKED_PER_INSTANCE;
        if !(1..=most).contains(&max) {
            return Err(format!(
                "notifications.alarm_raises_per_minute: {max} is not from 1 to {most} (to send \
                 none, add redisThresholdCrossed and redisThresholdRearmed to disabled)"
            ));
        }
        config.alarm_raises_per_minute = max;
    }
    Ok(config)
}

/// `[alarms]` and the `[[alarm]]` entries: the defaults (unless
/// `defaults = false`), each replaced by an entry of the same name, then
/// the other entries; none with `enabled = false`.
fn alarms_config(
    section: Option<&FileAlarms>,
    entries: &[FileAlarm],
    instances: &[RedisInstance],
) -> Result<Vec<AlarmSpec>, String> {
    let section = section.unwrap_or(&FileAlarms {
        enabled: None,
        defaults: None,
    });
    if section.enabled == Some(false) {
        return Ok(Vec::new());
    }
    let mut alarms = if section.defaults == Some(false) {
        Vec::new()
    } else {
        AlarmSpec::defaults()
    };
    let mut named = HashSet::new();
    for (i, entry) in entries.iter().enumerate() {
        let key = |k: &str| format!("alarm[{i}].{k}");
        let direction = match entry.direction.as_str() {
            "above" => Direction::Above,
            "below" => Direction::Below,
            other => {
                return Err(format!(
                    "{}: {other:?} is not above or below",
                    key("direction")
                ))
            }
        };
        if let Some(names) = &entry.instances {
            for name in names {
                if !instances.iter().any(|r| &r.name == name) {
                    return Err(format!(
                        "{}: no [[redis]] instance is named {name:?}",
                        key("instances")
                    ));
                }
            }
        }
        let spec = AlarmSpec::new(
            &entry.name,
            &entry.object,
            direction,
            entry.trigger,
            entry.rearm,
            entry.count.unwrap_or(1),
            entry.instances.clone(),
        )
        .map_err(|e| format!("alarm[{i}] ({}): {e}", entry.name))?;
        if !named.insert(spec.name.clone()) {
            return Err(format!(
                "{}: the name {:?} is used twice",
                key("name"),
                spec.name
            ));
        }
        match alarms.iter_mut().find(|a| a.name == spec.name) {
            Some(default) => *default = spec,
            None => alarms.push(spec),
        }
    }
    Ok(alarms)
}

/// The old tool's `-h/-P/-p` (and `--password-file`, the environment) speak
/// of one server: they set up the first instance, creating it if the file
/// named none.
fn apply_command_line(
    cli: &Cli,
    env_password: Option<String>,
    instances: &mut Vec<RedisInstance>,
    warnings: &mut Vec<String>,
) -> Result<(), ConfigError> {
    if instances.is_empty() {
        instances.push(RedisInstance::new(
            "redis1".to_string(),
            RedisAddress::Tcp {
                host: DEFAULT_HOST.to_string(),
                port: 6379,
            },
        ));
    }
    let first = &mut instances[0];
    if cli.settings.host.is_some() || cli.settings.port.is_some() {
        first.address = match &first.address {
            RedisAddress::Tls { host, port } => RedisAddress::Tls {
                host: cli.settings.host.clone().unwrap_or_else(|| host.clone()),
                port: cli.settings.port.unwrap_or(*port),
            },
            RedisAddress::Tcp { host, port } => RedisAddress::Tcp {
                host: cli.settings.host.clone().unwrap_or_else(|| host.clone()),
                port: cli.settings.port.unwrap_or(*port),
            },
            RedisAddress::Unix(_) => RedisAddress::Tcp {
                host: cli
                    .settings
                    .host
                    .clone()
                    .unwrap_or_else(|| DEFAULT_HOST.to_string()),
                port: cli.settings.port.unwrap_or(6379),
            },
        };
    }
    if let Some(password) = env_password.filter(|p| !p.is_empty()) {
        first.password = Some(Secret::new(password));
        first.password_file = None;
    }
    if let Some(path) = &cli.settings.password_file {
        let (secret, warning) = secret::read_password_file(path)
            .map_err(|e| ConfigError::Invalid(format!("--password-file: {e}")))?;
        warnings.extend(warning);
        first.password = Some(secret);
        first.password_file = Some(instance::absolute(path));
    }
    if let Some(password) = &cli.settings.password {
        warnings.push(
            "a password given with -p/--password is visible to every user of this host \
             until start-up wipes it; use --password-file or REDIS_SNMP_PASSWORD"
                .to_string(),
        );
        first.password = Some(Secret::new(password.clone()));
        first.password_file = None;
    }
    Ok(())
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_file_is_read_capped_and_never_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.toml");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: c is a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let started = std::time::Instant::now();
        let e = read_file(&fifo).err().unwrap().to_string();
        assert!(e.contains("a FIFO"), "{e}");
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        let big = dir.path().join("big.toml");
        std::fs::write(
            &big,
            format!("# {}\n", "x".repeat(MAX_CONFIG_BYTES as usize)),
        )
        .unwrap();
        let e = read_file(&big).err().unwrap().to_string();
        assert!(e.contains("larger than"), "{e}");
        let fine = dir.path().join("fine.toml");
        std::fs::write(&fine, "refresh = 5\n").unwrap();
        assert_eq!(read_file(&fine).unwrap().refresh, Some(5));
    }

    use super::*;
    use clap::Parser;

    fn cli(args: &[&str]) -> Cli {
        let mut all = vec!["redis-snmp"];
        all.extend_from_slice(args);
        Cli::try_parse_from(all).unwrap()
    }

    fn write_config(dir: &tempfile::TempDir, text: &str) -> PathBuf {
        let path = dir.path().join("redis-snmp.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn defaults_match_the_old_tool_but_refresh() {
        let config = Config::load(&cli(&[]), None).unwrap();
        assert_eq!(config.refresh, Duration::from_secs(10));
        assert_eq!(config.agentx, AgentxAddress::default());
        assert_eq!(config.instances.len(), 1);
        assert_eq!(config.instances[0].address.to_string(), "127.0.0.1:6379");
        assert_eq!(
            config.layout.legacy().to_string(),
            ".1.3.6.1.4.1.20267.400.1"
        );
        assert!(config.daemonize);
    }

    #[test]
    fn key_check_settings_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let load = |text: &str| {
            let path = write_config(&dir, text);
            Config::load(&cli(&["-c", path.to_str().unwrap()]), None)
        };
        let config = load("[[redis]]\naddress = \"10.0.0.1:1\"\n").unwrap();
        let keys = &config.instances[0].key_checks;
        assert!(keys.entries.is_empty(), "off by default");
        assert_eq!(keys, &KeyChecks::default());
        let secret = dir.path().join("alias.secret");
        std::fs::write(&secret, "0123456789abcdef0123456789abcdef\n").unwrap();
        let config = load(&format!(
            "[[redis]]\naddress = \"10.0.0.1:1\"\ncheck_keys = [\"queue:*\", \"jobs\"]\n\
             check_keys_rows = 5\ncheck_keys_scan_time = 20\nkey_names = \"alias\"\n\
             check_keys_memory = true\nkey_alias_secret_file = {:?}\n",
            secret.to_str().unwrap()
        ))
        .unwrap();
        let keys = &config.instances[0].key_checks;
        assert_eq!(keys.entries, ["queue:*", "jobs"]);
        assert_eq!(keys.rows, 5);
        assert_eq!(keys.scan_time, Duration::from_millis(20));
        assert_eq!(keys.names, KeyNames::Alias);
        assert!(keys.memory);
        let many: Vec<String> = (0..=MAX_CHECK_KEYS).map(|i| format!("\"k{i}\"")).collect();
        for (bad, key) in [
            ("check_keys = [\"\"]", "check_keys"),
            ("check_keys = [\"a\", \"a\"]", "check_keys"),
            (&format!("check_keys = [{}]", many.join(",")), "check_keys"),
            ("check_keys_rows = 0", "check_keys_rows"),
            ("check_keys_groups = 1000", "check_keys_groups"),
            ("check_keys_scan_count = 1", "check_keys_scan_count"),
            ("check_keys_scan_calls = 0", "check_keys_scan_calls"),
            ("check_keys_scan_time = 0", "check_keys_scan_time"),
            ("check_keys_interval = 0", "check_keys_interval"),
            ("key_names = \"hash\"", "key_names"),
            ("check_key = []", "check_key"),
        ] {
            let err = load(&format!("[[redis]]\naddress = \"10.0.0.1:1\"\n{bad}\n"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(key), "{bad}: {err}");
        }
        // A refused entry is named by its position, never its text.
        let err =
            load("[[redis]]\naddress = \"10.0.0.1:1\"\ncheck_keys = [\"secret\", \"secret\"]\n")
                .unwrap_err()
                .to_string();
        assert!(!err.contains("secret") && err.contains("entry 2"), "{err}");
    }

    #[test]
    fn client_list_and_certificate_settings() {
        let dir = tempfile::tempdir().unwrap();
        let load = |text: &str| {
            let path = write_config(&dir, text);
            Config::load(&cli(&["-c", path.to_str().unwrap()]), None)
        };
        let config = load("[[redis]]\naddress = \"rediss://10.0.0.1:6380\"\n").unwrap();
        let instance = &config.instances[0];
        assert!(instance.client_list);
        assert_eq!(instance.client_list_interval, Duration::from_secs(60));
        assert_eq!(instance.client_list_rows, 50);
        assert_eq!(
            instance.cert_expiry_warning,
            Duration::from_secs(14 * 86_400)
        );
        assert_eq!(instance.cert_check_interval, Duration::from_secs(3_600));
        let config = load(
            "[[redis]]\naddress = \"rediss://10.0.0.1:6380\"\nclient_list = false\n\
             client_list_interval = 5\nclient_list_rows = 3\ncert_expiry_warning = 86400\n\
             cert_check_interval = 60\n",
        )
        .unwrap();
        let instance = &config.instances[0];
        assert!(!instance.client_list);
        assert_eq!(instance.client_list_rows, 3);
        assert_eq!(instance.cert_expiry_warning, Duration::from_secs(86_400));
        assert_eq!(instance.cert_check_interval, Duration::from_secs(60));
        for (bad, key) in [
            ("client_list_rows = 0", "client_list_rows"),
            ("client_list_rows = 100000", "client_list_rows"),
            ("cert_check_interval = 0", "cert_check_interval"),
            ("client_list_interval = 0", "client_list_interval"),
        ] {
            let err = load(&format!("[[redis]]\naddress = \"10.0.0.1:1\"\n{bad}\n"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(&format!("redis[0].{key}")), "{bad}: {err}");
        }
    }

    #[test]
    fn slow_commands_settings_default_and_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let load = |text: &str| {
            let path = write_config(&dir, text);
            Config::load(&cli(&["-c", path.to_str().unwrap()]), None)
        };
        let config = load("[[redis]]\naddress = \"10.0.0.1:1\"\n").unwrap();
        assert_eq!(config.instances[0].slow_commands, SlowCommands::default());
        assert!(config.instances[0].slow_commands.enabled);
        assert_eq!(config.instances[0].slow_commands.threshold_usec, 100_000);
        assert!(!config.instances[0].slow_commands.args);
        let config = load(
            "[[redis]]\naddress = \"10.0.0.1:1\"\nslow_command_threshold = 0\nslow_command_args = true\n",
        )
        .unwrap();
        let slow = &config.instances[0].slow_commands;
        assert_eq!((slow.threshold_usec, slow.args), (0, true));
        // No entries read, no watch.
        let config =
            load("[[redis]]\naddress = \"10.0.0.1:1\"\nslowlog_entries = false\n").unwrap();
        assert!(!config.instances[0].slow_commands.enabled);
        for (bad, key) in [
            (
                "slowlog_entries = false\nslow_commands = true",
                "slow_commands",
            ),
            (
                "slow_command_threshold = 3600000001",
                "slow_command_threshold",
            ),
        ] {
            let err = load(&format!("[[redis]]\naddress = \"10.0.0.1:1\"\n{bad}\n"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(&format!("redis[0].{key}")), "{bad}: {err}");
        }
    }

    #[test]
    fn slow_refresh_defaults_to_fifteen_refreshes_and_is_checked() {
        let config = Config::load(&cli(&["-r", "3"]), None).unwrap();
        assert_eq!(config.slow_refresh, Duration::from_secs(45));
        assert_eq!(config.instances[0].slow_refresh, None);
        let dir = tempfile::tempdir().unwrap();
        let path = write_config(
            &dir,
            "refresh = 5\nslow_refresh = 60\n[[redis]]\naddress = \"redis://10.0.0.1:6380\"\nslow_refresh = 5\n",
        );
        let config = Config::load(&cli(&["-c", path.to_str().unwrap()]), None).unwrap();
        assert_eq!(config.slow_refresh, Duration::from_secs(60));
        assert_eq!(
            config.instances[0].slow_refresh,
            Some(Duration::from_secs(5))
        );
        for (text, wrong) in [
            (
                "refresh = 10\nslow_refresh = 5\n",
                "slow_refresh: 5 is not between the refresh (10)",
            ),
            (
                "slow_refresh = 90000\n",
                "slow_refresh: 90000 is not between",
            ),
            (
                "refresh = 10\n[[redis]]\naddress = \"redis://h:1\"\nslow_refresh = 2\n",
                "redis[0].slow_refresh: 2 is not between the refresh (10)",
            ),
        ] {
            let path = write_config(&dir, text);
            let err = Config::load(&cli(&["-c", path.to_str().unwrap()]), None)
                .unwrap_err()
                .to_string();
            assert!(err.contains(wrong), "{text}: {err}");
        }
    }

    #[test]
    fn command_line_overrides_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_config(
            &dir,
            "refresh = 30\nagentx_socket = \"tcp:localhost:705\"\n[[redis]]\nname = \"cache\"\naddress = \"redis://10.0.0.1:6380\"\n",
        );
        let config = Config::load(
            &cli(&["-c", path.to_str().unwrap(), "-r", "5", "-P", "7000"]),
            None,
        )
        .unwrap();
        assert_eq!(config.refresh, Duration::from_secs(5));
        assert_eq!(config.agentx.to_string(), "tcp:localhost:705");
        assert_eq!(config.instances[0].name, "cache");
        assert_eq!(config.instances[0].address.to_string(), "10.0.0.1:7000");
    }

    #[test]
    fn errors_name_the_file_line_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_config(&dir, "refresh = 10\nrefrsh = 5\n");
        let err = Config::load(&cli(&["-c", path.to_str().unwrap()]), None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("redis-snmp.toml"), "{err}");
        assert!(err.contains("line 2"), "{err}");
        assert!(err.contains("refrsh"), "{err}");

        let path = write_config(&dir, "[[redis]]\naddress = \"redis://u:pw@host:1\"\n");
        let err = Config::load(&cli(&["-c", path.to_str().unwrap()]), None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("redis[0].address"), "{err}");
        assert!(!err.contains("pw@"), "{err}");

        // A password written into the file is refused without being shown.
        let path = write_config(
            &dir,
            "[[redis]]\naddress = \"h:1\"\npassword = \"Zebra-pw-42\"\n",
        );
        let err = Config::load(&cli(&["-c", path.to_str().unwrap()]), None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 3, column 1"), "{err}");
        assert!(err.contains("password_file"), "{err}");
        assert!(!err.contains("Zebra"), "{err}");
        let path = write_config(&dir, "[[redis]]\npassword_file = [\"Zebra-pw-42\"\n");
        let err = Config::load(&cli(&["-c", path.to_str().unwrap()]), None)
            .unwrap_err()
            .to_string();
        assert!(!err.contains("Zebra"), "{err}");

        let path = write_config(&dir, "refresh = \"often\"\n");
        let err = Config::load(&cli(&["-c", path.to_str().unwrap()]), None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 1, column 11 (refresh): "), "{err}");

        let path = write_config(&dir, "refresh = 0\n");
        assert!(Config::load(&cli(&["-c", path.to_str().unwrap()]), None).is_err());

        // Roots too long to hold the module's rows within 128 arcs.
        let long = vec!["1"; crate::metrics::MAX_ROOT_SUBIDS + 1].join(".");
        let path = write_config(&dir, &format!("oid = \"{long}\"\n"));
        let err = Config::load(&cli(&["-c", path.to_str().unwrap()]), None)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("oid: ") && err.contains("more than 48"),
            "{err}"
        );
        let path = write_config(&dir, &format!("[puppet]\noid = \"{long}\"\n"));
        let err = Config::load(&cli(&["-c", path.to_str().unwrap()]), None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("puppet.oid: "), "{err}");
    }

    #[test]
    fn password_sources_and_warnings() {
        let config = Config::load(&cli(&["-p", "pw1"]), None).unwrap();
        assert_eq!(
            config.instances[0].password.as_ref().unwrap().expose(),
            "pw1"
        );
        assert_eq!(config.warnings.len(), 1);
        assert!(!config.warnings[0].contains("pw1"));
        let config = Config::load(&cli(&[]), Some("pw2".into())).unwrap();
        assert_eq!(
            config.instances[0].password.as_ref().unwrap().expose(),
            "pw2"
        );
        assert!(config.warnings.is_empty());
    }

    #[test]
    fn notifications_settings_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_config(
            &dir,
            "[notifications]\ndisabled = [\"redisRoleChanged\"]\nmax_per_minute = 3\n",
        );
        let config = Config::load(&cli(&["-c", path.to_str().unwrap()]), None).unwrap();
        assert!(config.notifications.disabled.contains(&Notification::Redis(
            crate::metrics::RedisEvent::RoleChanged
        )));
        assert_eq!(config.notifications.max_per_minute, 3);
        let path = write_config(&dir, "[notifications]\ndisabled = [\"redisRoleChange\"]\n");
        let err = Config::load(&cli(&["-c", path.to_str().unwrap()]), None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("redisRoleChange"), "{err}");
        assert_eq!(
            config.notifications.alarm_raises_per_minute,
            DEFAULT_ALARM_RAISES_PER_MINUTE
        );
        let path = write_config(&dir, "[notifications]\nalarm_raises_per_minute = 7\n");
        let config = Config::load(&cli(&["-c", path.to_str().unwrap()]), None).unwrap();
        assert_eq!(config.notifications.alarm_raises_per_minute, 7);
        let path = write_config(&dir, "[notifications]\nalarm_raises_per_minute = 0\n");
        let err = Config::load(&cli(&["-c", path.to_str().unwrap()]), None)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("alarm_raises_per_minute: 0 is not from 1"),
            "{err}"
        );
    }

    #[test]
    fn alarms_default_replace_add_and_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let load = |text: &str| {
            let path = write_config(&dir, text);
            Config::load(&cli(&["-c", path.to_str().unwrap()]), None)
        };
        let names = |config: &Config| -> Vec<String> {
            config
                .notifications
                .alarms
                .iter()
                .map(|a| a.name.clone())
                .collect()
        };
        let defaults = load("").unwrap();
        assert_eq!(
            names(&defaults),
            ["memory", "clients", "replica-lag", "certificate"]
        );
        let memory = &defaults.notifications.alarms[0];
        assert_eq!(
            (memory.object, memory.trigger, memory.rearm, memory.count),
            ("redisMemUsedOfMax", 9000, 8500, 2)
        );
        // An entry of a default's name replaces it; another is added.
        let config = load(
            "[[redis]]\nname = \"cache\"\naddress = \"127.0.0.1:6379\"\n\
             [[alarm]]\nname = \"memory\"\nobject = \"redisMemUsedOfMax\"\n\
             direction = \"above\"\ntrigger = 8000\nrearm = 7000\ncount = 3\n\
             [[alarm]]\nname = \"evictions-soon\"\nobject = \"redisMemUsed\"\n\
             direction = \"above\"\ntrigger = 1000000000\nrearm = 900000000\n\
             instances = [\"cache\"]\n",
        )
        .unwrap();
        assert_eq!(
            names(&config),
            [
                "memory",
                "clients",
                "replica-lag",
                "certificate",
                "evictions-soon"
            ]
        );
        assert_eq!(config.notifications.alarms[0].trigger, 8000);
        assert_eq!(config.notifications.alarms[4].count, 1);
        // Without the defaults; and none at all.
        let config = load(
            "[alarms]\ndefaults = false\n[[alarm]]\nname = \"lag\"\nobject = \"redisRpLag\"\n\
             direction = \"above\"\ntrigger = 30\nrearm = 5\n",
        )
        .unwrap();
        assert_eq!(names(&config), ["lag"]);
        let config = load("[alarms]\nenabled = false\n").unwrap();
        assert!(config.notifications.alarms.is_empty());
        // Mistakes, each said with its key.
        let alarm = |body: &str| format!("[[alarm]]\nname = \"a\"\n{body}");
        for (text, expected) in [
            (alarm("object = \"redisMemUsed\"\ndirection = \"up\"\ntrigger = 2\nrearm = 1\n"), "alarm[0].direction: \"up\" is not above or below"),
            (alarm("object = \"redisMemUsed\"\ndirection = \"above\"\ntrigger = 2\nrearm = 3\n"), "rearm 3 must be below the trigger 2"),
            (alarm("object = \"redisStCommands\"\ndirection = \"above\"\ntrigger = 2\nrearm = 1\n"), "a counter"),
            (alarm("object = \"redisMemUsed\"\ndirection = \"above\"\ntrigger = 2\nrearm = 1\ninstances = [\"nope\"]\n"), "no [[redis]] instance is named \"nope\""),
            (alarm("object = \"redisMemUsed\"\ndirection = \"above\"\ntrigger = 2\nrearm = 1\nhysteresis = 1\n"), "unknown field `hysteresis`"),
            (alarm("object = \"redisMemUsed\"\ndirection = \"above\"\nrearm = 1\n"), "missing field `trigger`"),
            ("[alarms]\nenable = false\n".to_string(), "unknown field `enable`"),
        ] {
            let err = load(&text).unwrap_err().to_string();
            assert!(err.contains(expected), "{text}: {err}");
        }
    }

    #[test]
    fn puppet_fact_keys() {
        let dir = tempfile::tempdir().unwrap();
        let load = |text: &str| {
            let path = write_config(&dir, text);
            Config::load(&cli(&["-c", path.to_str().unwrap()]), None)
        };
        let config = load(
            "[puppet]\nfacts = [\"hostname\", \"uptime_seconds\", \"datacenter\"]\n\
             role_fact = \"role\"\nfacts_dirs = [\"/srv/facts.d\"]\n",
        )
        .unwrap();
        let facts = config.puppet.unwrap().facts;
        assert_eq!(facts.names, ["hostname", "uptime_seconds", "datacenter"]);
        assert_eq!(facts.role_fact.as_deref(), Some("role"));
        assert_eq!(facts.dirs, [PathBuf::from("/srv/facts.d")]);
        let defaults = Config::load(&cli(&["--puppet"]), None).unwrap();
        let facts = defaults.puppet.unwrap().facts;
        assert!(!facts.wanted(), "nothing read unless asked");
        assert_eq!(facts.dirs.len(), DEFAULT_FACT_DIRS.len());
        let many: Vec<String> = (0..=MAX_FACTS).map(|n| format!("\"f{n}\"")).collect();
        for (bad, says) in [
            ("facts = [\"a b\"]".to_string(), "is not a fact name"),
            ("facts = [\"\"]".to_string(), "is not a fact name"),
            ("facts = [\"a\", \"a\"]".to_string(), "named twice"),
            ("facts = [\"Zone\"]".to_string(), "lower case"),
            (format!("facts = [{}]", many.join(", ")), "at most 32"),
            ("role_fact = \"x/y\"".to_string(), "puppet.role_fact"),
            (
                "facts_dirs = [\"facts.d\"]".to_string(),
                "not an absolute path",
            ),
        ] {
            let err = load(&format!("[puppet]\n{bad}\n")).unwrap_err().to_string();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn puppet_certificate_keys() {
        let dir = tempfile::tempdir().unwrap();
        let load = |text: &str| {
            let path = write_config(&dir, text);
            Config::load(&cli(&["-c", path.to_str().unwrap()]), None)
        };
        let config = load(
            "[puppet]\nssldir = \"/srv/ssl\"\ncertname = \"web1.example.net\"\n\
             certificate_warning_days = 7\n",
        )
        .unwrap();
        let certificates = config.puppet.unwrap().certificates;
        assert_eq!(certificates.ssldir, Some(PathBuf::from("/srv/ssl")));
        assert_eq!(certificates.certname.as_deref(), Some("web1.example.net"));
        assert_eq!(certificates.warning, Duration::from_secs(7 * 86_400));
        assert_eq!(
            config.notifications.puppet_certificate_warning, certificates.warning,
            "the judge and the rows use the one setting"
        );
        let defaults = Config::load(&cli(&["--puppet"]), None).unwrap();
        let certificates = defaults.puppet.unwrap().certificates;
        assert_eq!(certificates.ssldir, None);
        assert_eq!(certificates.warning, Duration::from_secs(30 * 86_400));
        assert_eq!(
            defaults.notifications.puppet_certificate_warning,
            Duration::from_secs(30 * 86_400)
        );
        for (bad, says) in [
            ("certname = \"../../etc/shadow\"", "puppet.certname: "),
            ("certname = \"Web1\"", "puppet.certname: "),
            ("certname = \"\"", "puppet.certname: "),
            ("certificate_warning_days = 0", "is not from 1 to 3650"),
            ("certificate_warning_days = 3651", "is not from 1 to 3650"),
        ] {
            let err = load(&format!("[puppet]\n{bad}\n")).unwrap_err().to_string();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn puppet_section_and_flag() {
        assert!(Config::load(&cli(&[]), None).unwrap().puppet.is_none());
        let flagged = Config::load(&cli(&["--puppet"]), None).unwrap();
        assert_eq!(
            flagged.puppet.unwrap().summary,
            PathBuf::from("/var/cache/puppet/public/last_run_summary.yaml")
        );
        let dir = tempfile::tempdir().unwrap();
        let path = write_config(
            &dir,
            "[puppet]\nsummary = \"/tmp/s.yaml\"\noid = \".1.3.6.1.4.1.99.1\"\nstale_after = 600\n",
        );
        let config = Config::load(&cli(&["-c", path.to_str().unwrap()]), None).unwrap();
        assert_eq!(config.puppet.unwrap().summary, PathBuf::from("/tmp/s.yaml"));
        assert_eq!(config.layout.puppet().to_string(), ".1.3.6.1.4.1.99.1");
        assert_eq!(
            config.notifications.puppet_stale_after,
            Duration::from_secs(600)
        );
        let path = write_config(
            &dir,
            "[puppet]\nconverge_runs = 4\nmin_run_interval = 90\nresource_notifications_per_minute = 7\n",
        );
        let config = Config::load(&cli(&["-c", path.to_str().unwrap()]), None).unwrap();
        assert_eq!(config.notifications.puppet_converge_runs, 4);
        assert_eq!(config.notifications.puppet_resource_per_minute, 7);
        assert_eq!(
            config.notifications.puppet_min_run_interval,
            Duration::from_secs(90)
        );
        let defaults = Config::load(&cli(&["--puppet"]), None).unwrap();
        assert_eq!(defaults.notifications.puppet_converge_runs, 3);
        assert_eq!(defaults.notifications.puppet_resource_per_minute, 100);
        assert_eq!(
            defaults.notifications.puppet_min_run_interval,
            Duration::from_secs(300)
        );
        for (bad, says) in [
            (
                "converge_runs = 1",
                "puppet.converge_runs: 1 is not from 2 to 50",
            ),
            (
                "converge_runs = 51",
                "puppet.converge_runs: 51 is not from 2 to 50",
            ),
            (
                "min_run_interval = 0",
                "puppet.min_run_interval: 0 is not from 1 to 86400",
            ),
            ("min_run_interval = -5", "min_run_interval"),
            (
                "resource_notifications_per_minute = 0",
                "puppet.resource_notifications_per_minute: 0 is not from 1 to 100000",
            ),
        ] {
            let path = write_config(&dir, &format!("[puppet]\n{bad}\n"));
            let err = Config::load(&cli(&["-c", path.to_str().unwrap()]), None)
                .unwrap_err()
                .to_string();
            assert!(err.contains(says), "{bad}: {err}");
        }
        let path = write_config(&dir, "[puppet]\nenabled = false\n");
        assert!(Config::load(&cli(&["-c", path.to_str().unwrap()]), None)
            .unwrap()
            .puppet
            .is_none());
    }

    #[test]
    fn puppet_events_log_settings() {
        let load = |text: &str| {
            let dir = tempfile::tempdir().unwrap();
            let path = write_config(&dir, text);
            Config::load(&cli(&["-c", path.to_str().unwrap()]), None)
        };
        // On by default, at Debian's path, with the default limits.
        let flagged = Config::load(&cli(&["--puppet"]), None).unwrap();
        let events = flagged.puppet_events.unwrap();
        assert_eq!(
            events.path,
            PathBuf::from("/var/log/puppet-events/events.jsonl")
        );
        assert_eq!((events.notifications_per_run, events.rows), (50, 100));
        assert!(Config::load(&cli(&[]), None)
            .unwrap()
            .puppet_events
            .is_none());
        let events = load("[puppet]\nevents_log = \"/tmp/e.jsonl\"\nresource_notifications_per_run = 0\nevent_rows = 5\n")
            .unwrap()
            .puppet_events
            .unwrap();
        assert_eq!(events.path, PathBuf::from("/tmp/e.jsonl"));
        assert_eq!((events.notifications_per_run, events.rows), (0, 5));
        // Root alone may write the log, unless a user is named.
        assert_eq!(events.owner, None);
        let owned = |name: &str| {
            load(&format!("[puppet]\nevents_log_owner = \"{name}\"\n"))
                .map(|c| c.puppet_events.unwrap().owner)
        };
        assert_eq!(owned("nobody").unwrap(), Some(("nobody".into(), 65534)));
        assert_eq!(owned("root").unwrap(), None);
        let err = owned("no-such-user").unwrap_err().to_string();
        assert!(
            err.contains("puppet.events_log_owner: there is no user named \"no-such-user\""),
            "{err}"
        );
        // Off: false, an empty path, or Puppet not watched at all.
        for off in [
            "[puppet]\nevents_log = false\n",
            "[puppet]\nevents_log = \"\"\n",
            "[puppet]\nenabled = false\nevents_log = \"/tmp/e.jsonl\"\n",
        ] {
            let config = load(off).unwrap();
            assert!(config.puppet_events.is_none(), "{off}");
        }
        assert!(load("[puppet]\nevents_log = true\n")
            .unwrap()
            .puppet_events
            .is_some());
        for (bad, says) in [
            (
                "[puppet]\nevent_rows = 0\n",
                "puppet.event_rows: 0 is not between 1 and",
            ),
            (
                "[puppet]\nevent_rows = 100000\n",
                "puppet.event_rows: 100000",
            ),
            (
                "[puppet]\nresource_notifications_per_run = 1000000\n",
                "puppet.resource_notifications_per_run: 1000000 is over",
            ),
            ("[puppet]\nevents_log = 3\n", "events_log"),
        ] {
            let err = load(bad).unwrap_err().to_string();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn discovery_settings_and_the_default_instance() {
        let dir = tempfile::tempdir().unwrap();
        let load = |text: &str, args: &[&str]| {
            let path = write_config(&dir, text);
            let mut all = vec!["-c", path.to_str().unwrap()];
            all.extend_from_slice(args);
            Config::load(&cli(&all), None)
        };
        // Off by default; the old tool's 127.0.0.1:6379 as before.
        let config = load("", &[]).unwrap();
        assert!(!config.discovery.local);
        assert_eq!(config.instances.len(), 1);
        // On, with no server named: only what is found.
        let config = load("[discovery]\nlocal = true\n", &[]).unwrap();
        assert!(config.discovery.local);
        assert_eq!(config.discovery.interval, Some(Duration::from_secs(300)));
        assert!(config.instances.is_empty());
        let config = load("", &["--discover"]).unwrap();
        assert!(config.discovery.local && config.instances.is_empty());
        // A server named, by the file or -h/-P, is kept beside it.
        let config = load("", &["--discover", "-P", "6380"]).unwrap();
        assert_eq!(config.instances[0].address.to_string(), "127.0.0.1:6380");
        let config = load(
            "[discovery]\nlocal = true\ninterval = 0\n[[redis]]\naddress = \"h:1\"\n",
            &[],
        )
        .unwrap();
        assert_eq!(config.discovery.interval, None);
        assert_eq!(config.instances.len(), 1);
        for bad in ["interval = 5", "interval = 90000", "locale = true"] {
            let err = load(&format!("[discovery]\n{bad}\n"), &[])
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("interval") || err.contains("locale"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn server_user_names_a_user_of_this_host() {
        let load = |text: &str| {
            let dir = tempfile::tempdir().unwrap();
            let path = write_config(&dir, text);
            Config::load(&cli(&["-c", path.to_str().unwrap()]), None)
        };
        // Unset: the defaults, decided when connecting (redis::peer).
        let config = load("[[redis]]\naddress = \"127.0.0.1:6379\"\n").unwrap();
        assert_eq!(config.instances[0].server_user, None);
        assert_eq!(
            Config::load(&cli(&[]), None).unwrap().instances[0].server_user,
            None
        );
        let config =
            load("[[redis]]\naddress = \"127.0.0.1:6379\"\nserver_user = \"nobody\"\n").unwrap();
        assert_eq!(config.instances[0].server_user.as_deref(), Some("nobody"));
        assert!(config.warnings.is_empty(), "{:?}", config.warnings);
        let err = load("[[redis]]\naddress = \"/run/r.sock\"\nserver_user = \"no-such-user\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("redis[0].server_user: there is no user named \"no-such-user\""),
            "{err}"
        );
        // A TLS server proves itself by its certificate: said so.
        let config =
            load("[[redis]]\naddress = \"rediss://127.0.0.1:6380\"\nserver_user = \"root\"\n")
                .unwrap();
        assert!(
            config
                .warnings
                .iter()
                .any(|w| w.contains("server_user: not checked for a rediss://")),
            "{:?}",
            config.warnings
        );
    }

    #[test]
    fn redis_addresses() {
        let ok = |s: &str| RedisAddress::parse(s).unwrap().to_string();
        assert_eq!(ok("redis://h:1"), "h:1");
        assert_eq!(ok("h"), "h:6379");
        assert_eq!(ok("[::1]:6380"), "[::1]:6380");
        assert_eq!(ok("unix:///run/redis.sock"), "unix:/run/redis.sock");
        assert_eq!(ok("/run/redis.sock"), "unix:/run/redis.sock");
        assert_eq!(ok("rediss://r.example:6380"), "rediss://r.example:6380");
        for bad in ["", "h:x", "h:0", "unix:", "::1", "redis://a@b:1"] {
            assert!(RedisAddress::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn acl_log_settings() {
        let dir = tempfile::tempdir().unwrap();
        let load = |text: &str| {
            let path = write_config(&dir, text);
            Config::load(&cli(&["-c", path.to_str().unwrap()]), None)
        };
        let config = load("[[redis]]\naddress = \"10.0.0.1:1\"\n").unwrap();
        let instance = &config.instances[0];
        assert!(instance.acl_log);
        assert_eq!(instance.acl_burst_refusals, 10);
        assert_eq!(instance.acl_burst_window, Duration::from_secs(60));
        let config = load(
            "[[redis]]\naddress = \"10.0.0.1:1\"\nacl_log = false\n\
             acl_burst_refusals = 0\nacl_burst_window = 3600\n",
        )
        .unwrap();
        let instance = &config.instances[0];
        assert!(!instance.acl_log);
        assert_eq!(instance.acl_burst_refusals, 0);
        assert_eq!(instance.acl_burst_window, Duration::from_secs(3600));
        for bad in ["acl_burst_window = 0", "acl_burst_window = 86401"] {
            let err = load(&format!("[[redis]]\naddress = \"10.0.0.1:1\"\n{bad}\n"))
                .unwrap_err()
                .to_string();
            assert!(err.contains("redis[0].acl_burst_window"), "{bad}: {err}");
        }
    }
}
