//! What the Puppet side reports to the judge: facts, not verdicts. What
//! the files tell after a change ([`PuppetObservation`], sent as
//! [`PuppetSeen`] with the time passing between changes), and what new
//! lines of the events log hold ([`EventsObservation`]). The readers and
//! followers produce them; the judge names the notifications.

use crate::metrics::{PuppetCertificateKind, PuppetRunStatus};
use std::time::Duration;

/// What the Puppet files said after a change, as far as notifications
/// care.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PuppetObservation {
    /// When the last run ended (the summary's `time.last_run`).
    pub last_run: Option<i64>,
    pub status: Option<PuppetRunStatus>,
    pub cached_catalog_used: bool,
    pub disabled: bool,
    /// The summary of a new run is there but its report is not yet: the run
    /// is not judged until it is (or the watcher gives up waiting).
    pub report_pending: bool,
    /// `converge_runs` or more changing runs in a row, the last one
    /// included ([`super::trend::RunTrend::not_converging`]).
    pub not_converging: bool,
    /// Seconds between the ends of the last two runs seen.
    pub run_interval: Option<u64>,
    /// The ends of the agent's certificate, CA and CRL, when read.
    pub certificates: CertificateDates,
}

/// What the Puppet side's readings observe: a new state of the files,
/// read at `now`, or only the time passing (staleness and the end of a run
/// storm are judged between changes too).
#[derive(Debug, Clone, PartialEq)]
pub enum PuppetSeen {
    State { seen: PuppetObservation, now: i64 },
    Tick { now: i64 },
}

/// The three kinds, in row order.
pub const KINDS: [PuppetCertificateKind; 3] = [
    PuppetCertificateKind::Agent,
    PuppetCertificateKind::Ca,
    PuppetCertificateKind::Crl,
];

/// Whether `left` seconds is under the warning.
pub fn expiring(left: i64, warning: Duration) -> bool {
    left < i64::try_from(warning.as_secs()).unwrap_or(i64::MAX)
}

/// Each kind's end in UNIX seconds, when the file was read and has one,
/// in [`KINDS`] order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CertificateDates(pub [Option<i64>; 3]);

/// What the notifier needs of a reading of the log, in the order read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventsObservation {
    pub items: Vec<EventItem>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventItem {
    /// A resource change (`notice`, with a property) or failure (`err` or
    /// worse) at row `index` of `puppetEventTable`, among the first
    /// `notifications_per_run` of its run. Skips, warnings, noop changes,
    /// notices without a property and debug lines are rows but not items;
    /// changes and failures over the budget are counted (`held_back`).
    Resource { index: u32, failed: bool },
    /// A run ended or a new one began, and the run before held back
    /// `held_back` resource notifications (over the budget).
    RunBoundary { held_back: u64 },
}
