//! Puppet run state: readers for the files a Puppet 7 run leaves behind,
//! a watcher that re-reads them when a run finishes, and the follower of
//! Puppet's events log; both send their readings on the hub's one stream.
//!
//! ```text
//!  last_run_summary.yaml ──▶ summary::parse_summary ─┐
//!  last_run_report.yaml  ──▶ report::parse_report  ──┤
//!  agent_disabled.lock   ──▶ locks::parse_disabled_lock ─▶ state::PuppetState
//!  agent_catalog_run.lock ─▶ locks::RunLock ──────────┘        │ (watcher: inotify on the directories)
//!                                   objects::reading, observation ▼
//!                                                  Reading ──▶ hub
//!  events.jsonl ──▶ tail ──▶ events_log ──▶ events::EventTable ──▶ Reading ──▶ hub
//! ```
//!
//! - [`summary`]: `last_run_summary.yaml`, the counts and times of the last
//!   run (no status: the summary of a run that applied a cached catalog
//!   after a compile failure looks healthy).
//! - [`report`]: `last_run_report.yaml`, the status ([`crate::metrics::PuppetRunStatus`]), the
//!   noop and cached-catalog flags, the first error and the resources that
//!   failed or changed; parsed keeping only those.
//! - [`yaml`]: what both parsers share: the parser's limits, and
//!   [`ParseError`], why a file's content could not be used.
//! - [`locks`]: `agent_disabled.lock` (disabled, and why) and
//!   `agent_catalog_run.lock` (a run in progress, or a stale lock).
//! - [`files`]: [`FileStatus`] and the safe, bounded read of one file
//!   that the readers share.
//! - [`state`]: [`PuppetState`], the four read together, with
//!   [`PuppetState::run_status`] and the pairing of report and summary.
//! - [`runs`]: [`runs::RunHistory`], the runs seen one after the other:
//!   how many, how many in a row changed resources, which resources changed
//!   every time (a run that never converges), how often runs come; what
//!   they say at one moment is a [`RunTrend`] ([`trend`]), which the state
//!   carries.
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
//! - [`objects`]: a [`PuppetState`] as PUPPET-AGENT-MIB's rows (the
//!   catalogue's row writer), and [`observation`]: what of it the judge
//!   needs; together a reading ([`objects::reading`]).
//! - [`certificates`]: the agent's own certificate, its CA and its CRL
//!   from Puppet's `ssldir` (read with [`crate::x509`]), as
//!   `puppetCertificateTable`'s rows, and when they turn expiring.
//! - [`facts`]: the allowlisted facts (facter's external facts and two
//!   built-ins, read without running facter) as `puppetFactTable`'s rows,
//!   and the role's external fact where the certificate gives none.
//! - [`watcher`]: [`watcher::spawn_readings`], the source's own loop: it
//!   sends a reading for every new state and the time passing between
//!   them; beneath it [`spawn_watcher`], which keeps a `watch` channel of
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

pub mod certificates;
pub mod events;
pub mod events_log;
pub mod facts;
pub mod files;
pub mod locks;
pub mod objects;
pub mod observation;
pub mod report;
pub mod runs;
pub mod state;
pub mod summary;
pub mod tail;
pub mod trend;
pub mod trust;
pub mod watcher;
pub mod yaml;

/// The run's status, the cached catalog's and a resource's state, under
/// the names the notifier and the tests know them by: the catalogue's
/// enumerations themselves, which the parsers produce (no twin to map).
pub use crate::metrics::{
    PuppetCachedCatalog as CachedCatalogStatus, PuppetResourceState as ResourceState,
    PuppetRunStatus as RunStatus,
};
pub use locks::{ProcessCheck, RunLock};
pub use report::{ReportTime, ResourceEntry, RunReport};
pub use state::{read_state, FileStatus, Pairing, PuppetReader, PuppetState};
pub use summary::RunSummary;
pub use trend::RunTrend;
pub use watcher::{spawn_watcher, spawn_watcher_with, WatcherOptions};
pub use yaml::{ConfigVersion, ParseError};

#[cfg(test)]
mod fixture_tests;
