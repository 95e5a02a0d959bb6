//! `[puppet]`: what the Puppet readers take from the configuration (where
//! the run files are, the events log and its limits, K of the runs that do
//! not converge) with the defaults and the bounds of each key.
//!
//! The types live here, below the sources, so that the configuration
//! names no source: the Puppet readers (`src/puppet`) read them, and
//! `Config::load` fills them from the file (`FilePuppet` in
//! `config/mod.rs`, whose checks also touch the layout and the notifier's
//! settings).

use std::path::{Path, PathBuf};

/// Where the files are. The defaults are Debian 12's for a root agent;
/// upstream's AIO packages use `/opt/puppetlabs/puppet/public` and
/// `/opt/puppetlabs/puppet/cache/state`, Puppet ≤ 6 kept the summary in
/// the state directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PuppetPaths {
    /// `lastrunfile`, `$publicdir/last_run_summary.yaml`.
    pub summary: PathBuf,
    /// `lastrunreport`, `$statedir/last_run_report.yaml`.
    pub report: PathBuf,
    /// `agent_disabled_lockfile`, `$statedir/agent_disabled.lock`.
    pub disabled_lock: PathBuf,
    /// `agent_catalog_run_lockfile`, `$statedir/agent_catalog_run.lock`.
    pub run_lock: PathBuf,
    /// The agent's certificate, CA and CRL (`ssldir`, `certname`).
    pub certificates: CertificateSettings,
    /// The facts served and the role's external fact.
    pub facts: FactSettings,
}

impl PuppetPaths {
    /// The standard file names under a `publicdir` and a `statedir`.
    pub fn from_dirs(publicdir: &Path, statedir: &Path) -> PuppetPaths {
        PuppetPaths {
            summary: publicdir.join("last_run_summary.yaml"),
            report: statedir.join("last_run_report.yaml"),
            disabled_lock: statedir.join("agent_disabled.lock"),
            run_lock: statedir.join("agent_catalog_run.lock"),
            certificates: CertificateSettings::default(),
            facts: FactSettings::default(),
        }
    }
}

impl Default for PuppetPaths {
    fn default() -> Self {
        PuppetPaths::from_dirs(
            Path::new("/var/cache/puppet/public"),
            Path::new("/var/cache/puppet/state"),
        )
    }
}

/// The `[puppet]` keys of the events log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventsConfig {
    /// `events_log`.
    pub path: PathBuf,
    /// `resource_notifications_per_run`.
    pub notifications_per_run: usize,
    /// `event_rows`: rows of `puppetEventTable`.
    pub rows: usize,
    /// `events_log_owner`: the one user besides root who may own the log
    /// and the directories above it (its name and uid); see
    /// `puppet::trust`.
    pub owner: Option<(String, u32)>,
}

impl Default for EventsConfig {
    fn default() -> Self {
        EventsConfig {
            path: PathBuf::from(DEFAULT_EVENTS_LOG),
            notifications_per_run: 50,
            rows: 100,
            owner: None,
        }
    }
}

/// Where README.Debian has Puppet write the log (`--logdest
/// syslog,/var/log/puppet-events/events.jsonl` in `/etc/default/puppet`):
/// a directory of its own that only root may write (`puppet::trust`), not
/// Puppet's `/var/log/puppet`, which the `puppet` user owns and may write.
pub const DEFAULT_EVENTS_LOG: &str = "/var/log/puppet-events/events.jsonl";
/// `event_rows` at most.
pub const MAX_EVENT_ROWS: usize = 10_000;
/// `resource_notifications_per_run` at most.
pub const MAX_RESOURCE_NOTIFICATIONS_PER_RUN: usize = 100_000;

/// K by default: three runs in a row that each changed something.
pub const DEFAULT_CONVERGE_RUNS: usize = 3;

/// The largest K accepted (the memory kept grows with it).
pub const MAX_CONVERGE_RUNS: usize = 50;

/// `[puppet] min_run_interval` by default, in seconds: five minutes. A
/// kick loop re-runs Puppet as soon as a run ends (a real run takes from
/// tens of seconds to a few minutes); the agent's own runs are 30 minutes
/// apart by default (`runinterval`).
pub const DEFAULT_MIN_RUN_INTERVAL: u64 = 300;

/// `[puppet] ssldir`, `certname`, `certificate_warning_days`: where the
/// agent's certificate, its CA and its CRL are, and how near their end is
/// near (issue 25).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertificateSettings {
    /// `ssldir`; `None`: the first of [`SSLDIRS`] that exists (Debian's
    /// first), Debian's when none does.
    pub ssldir: Option<PathBuf>,
    /// `certname`; `None`: the one `certs/*.pem` besides `ca.pem`.
    pub certname: Option<String>,
    /// Fewer seconds left than this is `expiring`.
    pub warning: std::time::Duration,
}

impl Default for CertificateSettings {
    fn default() -> Self {
        CertificateSettings {
            ssldir: None,
            certname: None,
            warning: std::time::Duration::from_secs(DEFAULT_CERTIFICATE_WARNING_DAYS * 86_400),
        }
    }
}

/// `ssldir` as Puppet's own settings put it (`puppet config print ssldir`):
/// Debian's `puppet` package (`/var/lib/puppet/ssl`, Debian 12's Puppet
/// 7.23), then Puppet's and OpenVox's AIO packages
/// (`/etc/puppetlabs/puppet/ssl`).
pub const SSLDIRS: &[&str] = &["/var/lib/puppet/ssl", "/etc/puppetlabs/puppet/ssl"];

/// `certificate_warning_days` by default: 30 days, as long as Puppet's
/// own `certificate_expire_warning` (60 days) halved: time to renew with
/// `puppet ssl` before the agent's runs stop.
pub const DEFAULT_CERTIFICATE_WARNING_DAYS: u64 = 30;

/// `certificate_warning_days` at most: ten years.
pub const MAX_CERTIFICATE_WARNING_DAYS: u64 = 3_650;

/// Whether `name` may be a Puppet certname and a file name under `certs/`:
/// Puppet's own rule (`Puppet::SSL::Base::VALID_CERTNAME`,
/// `/\A[ -.0-~]+\Z/`, lower case) without `/` and not `.` or `..`.
pub fn valid_certname(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| (b' '..=b'~').contains(&b) && b != b'/' && !b.is_ascii_uppercase())
}

/// `[puppet] facts`, `role_fact`, `facts_dirs`: the facts the agent serves
/// (`puppetFactTable`, and after the objects of `puppetRunFinished`) and
/// the external fact that gives the host's role when its certificate has
/// none. Read by `crate::puppet::facts`, never by running facter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FactSettings {
    /// The allowlist, in the order the rows are numbered (`facts`).
    pub names: Vec<String>,
    /// The external fact whose value is the role when the certificate
    /// carries no `pp_role` (`role_fact`).
    pub role_fact: Option<String>,
    /// facter's external fact directories, read in this order
    /// (`facts_dirs`).
    pub dirs: Vec<PathBuf>,
}

impl Default for FactSettings {
    fn default() -> Self {
        FactSettings {
            names: Vec::new(),
            role_fact: None,
            dirs: DEFAULT_FACT_DIRS.iter().map(PathBuf::from).collect(),
        }
    }
}

impl FactSettings {
    /// Whether any fact is to be read at all.
    pub fn wanted(&self) -> bool {
        !self.names.is_empty() || self.role_fact.is_some()
    }
}

/// facter's external fact directories for root (`facter --help`,
/// "external-dir"): AIO Puppet's, then the one Debian's facter reads.
pub const DEFAULT_FACT_DIRS: &[&str] = &["/etc/puppetlabs/facter/facts.d", "/etc/facter/facts.d"];
/// `facts` names at most (rows of `puppetFactTable`).
pub const MAX_FACTS: usize = crate::metrics::MAX_FACT_ROWS;
/// A fact's name at most, in bytes (`puppetFactName`'s SIZE).
pub const MAX_FACT_NAME: usize = 64;
/// `facts_dirs` at most.
pub const MAX_FACT_DIRS: usize = 8;

/// Whether `name` may be a fact of the allowlist: what facter's external
/// facts are named (letters, digits, `_`, and `.` `-`), 1 to
/// [`MAX_FACT_NAME`] bytes.
pub fn valid_fact_name(name: &str) -> bool {
    (1..=MAX_FACT_NAME).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
}
