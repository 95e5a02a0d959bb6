//! Puppet run state: readers for the files a Puppet 7 run leaves behind,
//! and a watcher that re-reads them when a run finishes.
//!
//! ```text
//!  last_run_summary.yaml ──▶ summary::parse_summary ─┐
//!  last_run_report.yaml  ──▶ report::parse_report  ──┤
//!  agent_disabled.lock   ──▶ locks::parse_disabled_lock ─▶ state::PuppetState ─▶ watch channel
//!  agent_catalog_run.lock ─▶ locks::RunLock ──────────┘   (watcher: inotify on the directories)
//! ```
//!
//! - [`summary`]: `last_run_summary.yaml`, the counts and times of the last
//!   run (no status: the summary of a run that applied a cached catalog
//!   after a compile failure looks healthy).
//! - [`report`]: `last_run_report.yaml`, the status, the noop and
//!   cached-catalog flags, the first error and the resources that failed or
//!   changed; parsed keeping only those.
//! - [`locks`]: `agent_disabled.lock` (disabled, and why) and
//!   `agent_catalog_run.lock` (a run in progress, or a stale lock).
//! - [`state`]: [`PuppetState`], the four read together, with
//!   [`PuppetState::run_status`] and the pairing of report and summary.
//! - [`runs`]: [`runs::RunHistory`], the runs seen one after the other:
//!   how many, how many in a row changed resources, which resources changed
//!   every time (a run that never converges), how often runs come.
//! - [`events_log`]: one line of Puppet's JSON-lines log (`--logdest
//!   …/events.jsonl`), a resource event or a run boundary.
//! - [`tail`]: [`tail::Tail`], a bounded follower of that log across
//!   truncation and rotation.
//! - [`trust`]: whether that log may be believed: no one but root (or
//!   `events_log_owner`) may write it or a directory above it.
//! - [`events`]: the thread that follows that log (inotify on its
//!   directory, a slow poll besides) and turns its lines into
//!   `puppetEventTable` and readings for the hub, with the per-run budget
//!   of resource notifications.
//! - [`watcher`]: [`spawn_watcher`], which keeps a `watch` channel of
//!   [`PuppetState`] current.
//!
//! The parsers are pure functions over bytes that never panic and refuse
//! oversized input before parsing. The facts they rely on (paths, modes,
//! write order, what each kind of run writes) were measured on Debian 12
//! with Puppet 7.23; the test fixtures in `tests/fixtures/puppet` are files
//! those runs wrote.
//!
//! # The YAML crate: `serde-saphyr`
//!
//! `serde_yaml` is deprecated and unmaintained since 2024. Of its
//! successors on crates.io, `serde-saphyr` (2.x, releases through 2026)
//! was chosen over the `serde_yaml` forks `serde_yaml_ng` and
//! `serde_norway`, and over the tree loaders `saphyr` and `yaml-rust2`:
//! - it deserializes straight from the parser's events into our types,
//!   without first loading the document (the forks record every event of
//!   the document first; the tree loaders build the whole tree), so a large
//!   report costs only what the visitors here keep;
//! - it has configurable budgets against hostile input: alias replay
//!   limits (an alias bomb is refused after [`yaml::MAX_REPLAYED_EVENTS`]
//!   replayed events), depth, node, event and scalar-byte limits;
//!   `yaml-rust2` and `saphyr` expand aliases by cloning;
//! - it is pure Rust with `unsafe` forbidden, fuzzed, and built to return
//!   errors rather than panic; the forks sit on `unsafe-libyaml`, a C-to-Rust
//!   translation of libyaml;
//! - the report's only tag, `!ruby/object:Puppet::Transaction::Report` at
//!   the top, is ignored when the mapping is read into a struct.
//!
//! Measured here on a generated 14 MB report read into nothing
//! (`IgnoredAny`), release build: peak RSS 21 MB with `serde-saphyr`
//! against 179 MB with `serde_norway`; 1.0 s against 0.66 s. So a report
//! parses at about 15 MB/s: 0.05 s for a 1,000-resource report, about 4 s
//! at the 64 MiB cap. Its MSRV is 1.89 (the `redis` crate already needs
//! 1.88).
//!
//! The lock file is JSON, read with `serde_json`. The watcher uses the
//! `inotify` crate directly (the subagent runs on Linux only): it gives
//! the exact events needed (`IN_MOVED_TO` of Puppet's renames) on the
//! tokio reactor, without the thread and cross-platform layer of `notify`.

pub mod events;
pub mod events_log;
pub mod locks;
pub mod objects;
pub mod observation;
pub mod report;
pub mod runs;
pub mod state;
pub mod summary;
pub mod tail;
pub mod trust;
pub mod watcher;
pub mod yaml;

pub use locks::{ProcessCheck, RunLock};
pub use report::{CachedCatalogStatus, ReportTime, ResourceEntry, ResourceState, RunReport};
pub use state::{read_state, FileStatus, Pairing, PuppetReader, PuppetState};
pub use summary::RunSummary;
pub use watcher::{spawn_watcher, spawn_watcher_with, WatcherOptions};
pub use yaml::ConfigVersion;

use std::path::{Path, PathBuf};

/// Why a file's content could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Refused before parsing.
    #[error("the file is {len} bytes, over the {max}-byte limit")]
    TooLarge { len: u64, max: u64 },
    #[error("the file is empty")]
    Empty,
    /// Not YAML, or not the expected shape: the parser's message, with the
    /// line and column.
    #[error("{0}")]
    Yaml(String),
    /// Valid YAML, but without a key Puppet always writes: most likely a
    /// file cut short (a YAML prefix cut at a line end still parses).
    #[error("incomplete: {0}")]
    Incomplete(String),
}

/// A run's outcome, as Puppet's report `status` has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RunStatus {
    /// No data, or a status this parser does not know.
    #[default]
    Unknown,
    /// Nothing changed (also a noop run that found drift, and a run that
    /// applied a cached catalog after failing to get a new one).
    Unchanged,
    Changed,
    /// A resource failed or failed to restart, or the transaction did not
    /// complete (no catalog, a dependency cycle).
    Failed,
}

impl RunStatus {
    fn from_text(s: &str) -> Self {
        match s {
            "unchanged" => Self::Unchanged,
            "changed" => Self::Changed,
            "failed" => Self::Failed,
            _ => Self::Unknown,
        }
    }

    /// `unchanged`, `changed`, `failed` or `unknown`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Unknown => "unknown",
            Self::Unchanged => "unchanged",
            Self::Changed => "changed",
            Self::Failed => "failed",
        }
    }
}

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
}

impl PuppetPaths {
    /// The standard file names under a `publicdir` and a `statedir`.
    pub fn from_dirs(publicdir: &Path, statedir: &Path) -> PuppetPaths {
        PuppetPaths {
            summary: publicdir.join("last_run_summary.yaml"),
            report: statedir.join("last_run_report.yaml"),
            disabled_lock: statedir.join("agent_disabled.lock"),
            run_lock: statedir.join("agent_catalog_run.lock"),
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

#[cfg(test)]
mod fixture_tests;
