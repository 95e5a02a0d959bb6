//! What the Puppet files tell after a change, for the notifications.

use super::certificates::CertificateDates;
use super::state::PuppetState;
use crate::metrics::PuppetRunStatus;

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
