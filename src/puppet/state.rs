//! [`PuppetState`]: the summary, the report and the lock files read
//! together, and what they say combined.
//!
//! A file that cannot be read or parsed does not erase what was known:
//! [`PuppetReader`] keeps the last good summary and report, and says in
//! [`FileStatus`] what the latest read found.

use super::certificates::{read_certificates, Certificates};
use super::facts::{read_facts, Facts};
pub use super::files::FileStatus;
use super::files::{read_capped, FileStamp, Outcome};
use super::locks::{self, RunLock, MAX_LOCK_BYTES};
use super::observation::PuppetObservation;
use super::report::{self, RunReport, MAX_REPORT_BYTES};
use super::summary::{self, RunSummary, MAX_SUMMARY_BYTES};
use super::trend::RunTrend;
use super::yaml::ParseError;
use crate::config::PuppetPaths;
use crate::metrics::{PuppetCachedCatalog, PuppetRunStatus};
use std::path::Path;

/// How much later than its report's end (start `time` + `total` time) a
/// summary's `time.last_run` may be, in seconds, and how much earlier.
///
/// `last_run` is taken in whole seconds right after the end, so
/// `last_run == floor(end)`: in every fixture run the difference was −0.12
/// to −0.93 s. The window cannot be much wider: two `puppet apply` runs in
/// a row (a_converged, b_changed) ended 1.7 s apart, and the second run's
/// `last_run` was only 0.76 s after the first run's end. That is why the
/// pairing also compares the configuration version and the `total` time.
pub const PAIRING_WINDOW_SECS: (f64, f64) = (-1.5, 0.5);

/// Whether the report describes the same run as the summary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pairing {
    /// Same run: `time.last_run` within [`PAIRING_WINDOW_SECS`] of the
    /// report's end, the same configuration version (or both null), and the
    /// same `total` time (the very same float, printed by the same Ruby).
    Paired,
    /// Different runs. `summary_newer` when the summary is from the later
    /// run: the report of its run has not been written (yet).
    NotPaired {
        summary_last_run: i64,
        report_end: f64,
        summary_newer: bool,
    },
    /// A time needed to pair them is missing.
    Unknown,
}

/// Pair a report with a summary (see [`Pairing`]).
pub fn pairing(summary: &RunSummary, report: &RunReport) -> Pairing {
    let (Some(last_run), Some(end)) = (summary.time.last_run, report.end_time()) else {
        return Pairing::Unknown;
    };
    let diff = last_run as f64 - end;
    let (early, late) = PAIRING_WINDOW_SECS;
    let same_total = match (summary.time.total(), report.metric("time", "total")) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    };
    if (early..=late).contains(&diff)
        && summary.config_version == report.configuration_version
        && same_total
    {
        Pairing::Paired
    } else {
        Pairing::NotPaired {
            summary_last_run: last_run,
            report_end: end,
            summary_newer: diff > 0.0,
        }
    }
}

/// Everything known about the Puppet runs on this host at one moment.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PuppetState {
    /// The last summary that parsed (possibly from an earlier read than
    /// `summary_status`'s).
    pub summary: Option<RunSummary>,
    /// What the latest read of the summary found.
    pub summary_status: FileStatus,
    /// The last report that parsed. It may be from another run than
    /// `summary`: see [`PuppetState::pairing`] and
    /// [`PuppetState::matching_report`].
    pub report: Option<RunReport>,
    pub report_status: FileStatus,
    /// Set by the watcher while it waits (up to
    /// [`super::WatcherOptions::report_wait`]) for the report of a summary
    /// that is newer than the report: Puppet renames the summary into place
    /// first. A consumer that wants both halves of a run waits for this to
    /// clear.
    pub report_pending: bool,
    /// `Some(reason)` while `agent_disabled.lock` exists (reason may be "").
    pub disabled: Option<String>,
    /// `agent_catalog_run.lock`, when it exists.
    pub run_lock: Option<RunLock>,
    /// What the runs seen so far say (set by the watcher, which sees them
    /// one after the other; empty from [`PuppetReader::refresh`]).
    pub runs: RunTrend,
    /// The agent's certificate, CA and CRL (`super::certificates`).
    pub certificates: Certificates,
    /// The facts served and the role's external fact (`super::facts`).
    pub facts: Facts,
}

impl PuppetState {
    /// The host's role: its certificate's trusted fact `pp_role` when it
    /// has one (the Puppet CA signed it: the host cannot change it), else
    /// the configured external fact (`role_fact`, which root on the host
    /// writes).
    pub fn role(&self) -> Option<&str> {
        self.certificates.role().or(self.facts.role.as_deref())
    }

    /// Report and summary pairing (see [`Pairing`]).
    pub fn pairing(&self) -> Pairing {
        match (&self.summary, &self.report) {
            (Some(s), Some(r)) => pairing(s, r),
            _ => Pairing::Unknown,
        }
    }

    /// The report, if it is the summary's run's (or there is no summary to
    /// compare with).
    pub fn matching_report(&self) -> Option<&RunReport> {
        let report = self.report.as_ref()?;
        match &self.summary {
            None => Some(report),
            Some(s) => (pairing(s, report) == Pairing::Paired).then_some(report),
        }
    }

    /// `time.last_run` of the summary: when the last run ended.
    pub fn last_run(&self) -> Option<i64> {
        self.summary.as_ref()?.time.last_run
    }

    /// The last run's outcome.
    ///
    /// With a report of the same run: `Failed` if the report says failed,
    /// the transaction did not complete, or the summary counts a failure;
    /// otherwise the report's status. Without one (report missing,
    /// unreadable, or from another run), from the summary alone: `Failed` if
    /// a resource failed or failed to restart, an event failed, or no
    /// catalog was applied (`version.config` null or `resources.total` 0);
    /// else `Changed` if `changes.total` > 0; else `Unchanged`. Without a
    /// summary, the report's status; with neither, `Unknown`.
    ///
    /// A run that applied a cached catalog after a compile failure is
    /// `Unchanged` here, as Puppet says: see
    /// [`PuppetState::cached_catalog_used`].
    pub fn run_status(&self) -> PuppetRunStatus {
        let report = self.matching_report();
        let Some(summary) = &self.summary else {
            return report.map_or(PuppetRunStatus::Unknown, |r| {
                match r.transaction_completed {
                    Some(false) => PuppetRunStatus::Failed,
                    _ => r.status,
                }
            });
        };
        if let Some(r) = report {
            if r.status == PuppetRunStatus::Failed
                || r.transaction_completed == Some(false)
                || summary.has_failures()
            {
                return PuppetRunStatus::Failed;
            }
            if r.status != PuppetRunStatus::Unknown {
                return r.status;
            }
        }
        if summary.has_failures() || summary.no_catalog_applied() {
            PuppetRunStatus::Failed
        } else if summary.changes_total > 0 {
            PuppetRunStatus::Changed
        } else {
            PuppetRunStatus::Unchanged
        }
    }

    /// `cached_catalog_status` of the last run's report.
    pub fn cached_catalog_status(&self) -> Option<PuppetCachedCatalog> {
        self.matching_report()?.cached_catalog_status
    }

    /// Whether the last run applied a cached catalog instead of a fresh one
    /// (`on_failure`: the fresh one failed to compile or download, which
    /// nothing else in the files shows; or `explicitly_requested`).
    pub fn cached_catalog_used(&self) -> bool {
        matches!(
            self.cached_catalog_status(),
            Some(PuppetCachedCatalog::OnFailure | PuppetCachedCatalog::ExplicitlyRequested)
        )
    }

    /// The exit code `--detailed-exitcodes` gave the last run: 1 if the
    /// transaction did not complete (needs the report), else 2 if something
    /// changed, | 4 if a resource failed or failed to restart.
    pub fn detailed_exit_code(&self) -> Option<i32> {
        let summary = self.summary.as_ref()?;
        if self.matching_report().and_then(|r| r.transaction_completed) == Some(false) {
            return Some(1);
        }
        let mut code = 0;
        if summary.changes_total > 0 {
            code |= 2;
        }
        if summary.resources.failed > 0 || summary.resources.failed_to_restart > 0 {
            code |= 4;
        }
        Some(code)
    }

    /// `application.run_mode` of the summary: `agent`, or `user` for
    /// `puppet apply`.
    pub fn run_mode(&self) -> Option<crate::metrics::PuppetRunMode> {
        self.summary.as_ref()?.run_mode()
    }

    /// Whether an agent run holds the run lock (a stale lock does not count).
    pub fn run_in_progress(&self) -> bool {
        self.run_lock.is_some_and(|l| l.in_progress())
    }

    /// One line per file whose latest read failed.
    pub fn errors(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (what, status) in [
            ("summary", &self.summary_status),
            ("report", &self.report_status),
        ] {
            match status {
                FileStatus::Unreadable { error, .. } => out.push(format!("{what}: {error}")),
                FileStatus::Invalid(e) => out.push(format!("{what}: {e}")),
                _ => {}
            }
        }
        out
    }
}

/// One file's last good value and what the latest read found.
struct Slot<T> {
    good: Option<T>,
    /// Stamp of the content `good` (or the last invalid content) came from.
    stamp: Option<FileStamp>,
    status: FileStatus,
}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Slot {
            good: None,
            stamp: None,
            status: FileStatus::NotRead,
        }
    }
}

impl<T: Clone> Slot<T> {
    /// Re-read the file unless it is unchanged since a read that gave a
    /// definite answer. Returns whether the content was parsed anew.
    fn refresh(
        &mut self,
        path: &Path,
        max: usize,
        parse: impl FnOnce(&[u8]) -> Result<T, ParseError>,
    ) -> bool {
        let settled = matches!(self.status, FileStatus::Ok | FileStatus::Invalid(_));
        let skip = if settled { self.stamp } else { None };
        match read_capped(path, max, skip) {
            None => false,
            Some(Outcome::Missing) => {
                self.stamp = None;
                self.status = FileStatus::Missing;
                false
            }
            Some(Outcome::Failed(status)) => {
                self.stamp = None;
                self.status = status;
                false
            }
            Some(Outcome::Content(bytes, stamp)) => {
                self.stamp = Some(stamp);
                match parse(&bytes) {
                    Ok(v) => {
                        self.good = Some(v);
                        self.status = FileStatus::Ok;
                    }
                    Err(e) => self.status = FileStatus::Invalid(e),
                }
                true
            }
        }
    }
}

/// Reads the files, remembering the last good summary and report across
/// reads and parsing each file only when it changed (new inode, size or
/// mtime). All of it is blocking file I/O.
pub struct PuppetReader {
    paths: PuppetPaths,
    summary: Slot<RunSummary>,
    report: Slot<RunReport>,
}

impl PuppetReader {
    pub fn new(paths: PuppetPaths) -> PuppetReader {
        PuppetReader {
            paths,
            summary: Slot::default(),
            report: Slot::default(),
        }
    }

    pub fn paths(&self) -> &PuppetPaths {
        &self.paths
    }

    /// Read whatever changed and return the state. `report_pending` is
    /// always false here (it is the watcher's).
    pub fn refresh(&mut self) -> PuppetState {
        self.summary.refresh(
            &self.paths.summary,
            MAX_SUMMARY_BYTES,
            summary::parse_summary,
        );
        self.report
            .refresh(&self.paths.report, MAX_REPORT_BYTES, report::parse_report);
        let disabled = match read_capped(&self.paths.disabled_lock, MAX_LOCK_BYTES, None) {
            Some(Outcome::Content(bytes, _)) => Some(locks::parse_disabled_lock(&bytes)),
            Some(Outcome::Missing) | None => None,
            // It exists: the agent is disabled, for a reason we cannot read.
            Some(Outcome::Failed(_)) => Some(String::new()),
        };
        let run_lock = match read_capped(&self.paths.run_lock, MAX_LOCK_BYTES, None) {
            Some(Outcome::Content(bytes, _)) => Some(RunLock::from_content(&bytes)),
            Some(Outcome::Missing) | None => None,
            Some(Outcome::Failed(_)) => Some(RunLock {
                pid: None,
                process: locks::ProcessCheck::Unknown,
            }),
        };
        PuppetState {
            summary: self.summary.good.clone(),
            summary_status: self.summary.status.clone(),
            report: self.report.good.clone(),
            report_status: self.report.status.clone(),
            report_pending: false,
            disabled,
            run_lock,
            runs: RunTrend::default(),
            certificates: read_certificates(&self.paths.certificates),
            facts: read_facts(&self.paths.facts),
        }
    }
}

/// Read the state once, synchronously (blocking file I/O): for start-up
/// baselines and tests.
pub fn read_state(paths: &PuppetPaths) -> PuppetState {
    PuppetReader::new(paths.clone()).refresh()
}

/// The script that gives the agent's user read access to Puppet's files.
pub const PUPPET_ACL_SCRIPT: &str = "/usr/share/doc/redis-snmp/examples/puppet-acl.sh";

/// The advice for a file Puppet wrote that this process may not read.
/// Not a world-readable mode (the report holds exec output and diffs) and
/// not root: a default ACL on the file's directory, which Puppet's
/// rewrites keep.
pub fn permission_advice(paths: &PuppetPaths, which: &Path) -> String {
    let setting = if which == paths.report {
        "lastrunreport"
    } else {
        "lastrunfile"
    };
    format!(
        "Puppet writes it ({setting}) mode 0640 anew at every run; give the agent's user \
         read access that lasts with a default ACL on its directory: sh {PUPPET_ACL_SCRIPT} \
         (apt install acl); do not make it readable by all or run redis-snmp as root"
    )
}

/// What the files said, as far as notifications care.
impl PuppetObservation {
    pub fn from_state(state: &PuppetState) -> Self {
        PuppetObservation {
            last_run: state.last_run(),
            status: state.summary.as_ref().map(|_| state.run_status()),
            cached_catalog_used: state.cached_catalog_used(),
            disabled: state.disabled.is_some(),
            report_pending: state.report_pending,
            not_converging: state.runs.not_converging(),
            run_interval: state.runs.interval,
            certificates: state.certificates.dates(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_fifo_is_refused_at_once_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("last_run_summary.yaml");
        let path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
        let started = Instant::now();
        let outcome = read_capped(&fifo, 1024, None);
        assert!(started.elapsed() < Duration::from_secs(1));
        match outcome {
            Some(Outcome::Failed(FileStatus::Unreadable { error, .. })) => {
                assert!(error.contains("not a regular file"), "{error}")
            }
            _ => panic!("a FIFO was not refused"),
        }
    }

    #[test]
    fn a_symbolic_link_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("password");
        std::fs::write(&secret, "s3cret\n").unwrap();
        let link = dir.path().join("last_run_summary.yaml");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        match read_capped(&link, 1024, None) {
            Some(Outcome::Failed(FileStatus::Unreadable { error, .. })) => {
                assert!(error.contains("symbolic link"), "{error}");
                assert!(!error.contains("s3cret"));
            }
            _ => panic!("a symbolic link was followed"),
        }
        // A regular file reads as before.
        std::fs::write(dir.path().join("plain"), "x: 1\n").unwrap();
        assert!(matches!(
            read_capped(&dir.path().join("plain"), 1024, None),
            Some(Outcome::Content(..))
        ));
    }
}
