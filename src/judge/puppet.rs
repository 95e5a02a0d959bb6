//! Puppet's rules: runs (failed, changed, recovered, stale, not
//! converging, storms), the agent disabled, its certificates crossing the
//! warning, and the events log's resource events.

use crate::config::NotifyConfig;
use crate::metrics::{About, Notification, PuppetCertificateKind, PuppetEvent, PUPPET_SOURCE};
use crate::puppet::observation::{
    expiring, CertificateDates, EventItem, EventsObservation, PuppetObservation, KINDS,
};
use crate::puppet::RunStatus;
use std::time::Duration;

/// How many runs in a row, each ending less than `min_run_interval` after
/// the one before, are a run storm: three. One run started by hand right
/// after the agent's own is not a storm; a third quick one is a pattern
/// (a kick loop, an `Exec` that re-runs Puppet).
pub const STORM_QUICK_RUNS: u32 = 2;

/// What the judge remembers of Puppet between observations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct PuppetKnown {
    last_run: Option<i64>,
    status: Option<RunStatus>,
    disabled: bool,
    stale: bool,
    /// `puppetNotConverging` was sent (or the baseline was already so) and
    /// no run has changed nothing since.
    not_converging: bool,
    /// Runs in a row that ended less than `min_run_interval` after the one
    /// before.
    quick_runs: u32,
    /// `puppetRunStorm` was sent and not cleared.
    storm: bool,
}

/// The notifications due for a Puppet observation. A new run is one whose
/// end time differs from the last judged one.
fn puppet_transitions(
    known: &PuppetKnown,
    seen: &PuppetObservation,
    min_run_interval: Duration,
) -> Vec<PuppetEvent> {
    let mut due = Vec::new();
    if is_new_run(known, seen) {
        match seen.status {
            Some(RunStatus::Failed) => due.push(PuppetEvent::RunFailed),
            Some(RunStatus::Changed) => due.push(PuppetEvent::RunChanged),
            _ => {}
        }
        if seen.cached_catalog_used {
            due.push(PuppetEvent::CachedCatalogUsed);
        }
        if known.status == Some(RunStatus::Failed)
            && seen.status.is_some_and(|s| s != RunStatus::Failed)
        {
            due.push(PuppetEvent::RunRecovered);
        }
        if known.stale {
            due.push(PuppetEvent::AgentStaleCleared);
        }
        match (known.not_converging, seen.not_converging) {
            (false, true) => due.push(PuppetEvent::NotConverging),
            (true, false) => due.push(PuppetEvent::Converged),
            _ => {}
        }
        let quick = quick_runs(known, seen, min_run_interval);
        if !known.storm && quick >= STORM_QUICK_RUNS {
            due.push(PuppetEvent::RunStorm);
        }
        if known.storm && quick == 0 {
            due.push(PuppetEvent::RunStormCleared);
        }
        due.push(PuppetEvent::RunFinished);
    }
    match (known.disabled, seen.disabled) {
        (false, true) => due.push(PuppetEvent::AgentDisabled),
        (true, false) => due.push(PuppetEvent::AgentEnabled),
        _ => {}
    }
    due
}

/// Whether `seen` is a run not judged yet, ready to be judged (its report
/// is in, or was waited for).
fn is_new_run(known: &PuppetKnown, seen: &PuppetObservation) -> bool {
    seen.last_run.is_some() && seen.last_run != known.last_run && !seen.report_pending
}

/// The quick runs in a row once the new run `seen` is counted: one more if
/// it ended less than `min_run_interval` after the run before, else none.
fn quick_runs(known: &PuppetKnown, seen: &PuppetObservation, min_run_interval: Duration) -> u32 {
    match seen.run_interval {
        Some(secs) if secs < min_run_interval.as_secs() => known.quick_runs.saturating_add(1),
        _ => 0,
    }
}

/// What was judged of Puppet, by the configured thresholds.
#[derive(Debug, Clone, Default)]
pub(super) struct PuppetJudge {
    /// `puppet_stale_after`: Puppet is stale when no run ended within it.
    stale_after: Duration,
    /// `puppet_min_run_interval`: a run ending sooner after the one before
    /// is a quick one; none within it ends a run storm.
    min_run_interval: Duration,
    /// What was judged of Puppet; `None` until the first observation.
    puppet: Option<PuppetKnown>,
    /// `puppet_certificate_warning`: a certificate or CRL with less left
    /// is expiring.
    certificate_warning: Duration,
    /// What was judged of Puppet's certificates.
    certificates: CertificateWatch,
}

impl PuppetJudge {
    pub(super) fn of(config: &NotifyConfig) -> PuppetJudge {
        PuppetJudge {
            stale_after: config.puppet_stale_after,
            min_run_interval: config.puppet_min_run_interval,
            certificate_warning: config.puppet_certificate_warning,
            ..PuppetJudge::default()
        }
    }

    /// The notifications due now that the Puppet files changed (or were
    /// read for the first time: the baseline, which judges no run but one
    /// still waiting for its report).
    pub fn puppet_due(&mut self, seen: &PuppetObservation, now_unix: i64) -> Vec<PuppetEvent> {
        let stale = is_stale(self.stale_after, seen.last_run, now_unix);
        let min = self.min_run_interval;
        match self.puppet.as_mut() {
            None => {
                self.puppet = Some(PuppetKnown {
                    last_run: if seen.report_pending {
                        None
                    } else {
                        seen.last_run
                    },
                    status: seen.status,
                    disabled: seen.disabled,
                    stale,
                    // A loop already going at start-up is not news; its end is.
                    not_converging: seen.not_converging && !seen.report_pending,
                    quick_runs: 0,
                    storm: false,
                });
                Vec::new()
            }
            Some(known) => {
                let due = puppet_transitions(known, seen, min);
                if is_new_run(known, seen) {
                    known.quick_runs = quick_runs(known, seen, min);
                    known.storm = known.quick_runs >= STORM_QUICK_RUNS
                        || (known.storm && known.quick_runs > 0);
                    known.not_converging = seen.not_converging;
                }
                if !seen.report_pending && seen.last_run.is_some() {
                    known.last_run = seen.last_run;
                    known.status = seen.status;
                    known.stale = stale;
                }
                known.disabled = seen.disabled;
                due
            }
        }
    }

    /// Called now and then: Puppet turns stale when no run ended within
    /// `puppet_stale_after`, and a run storm is over when no run ended
    /// within `puppet_min_run_interval`.
    pub fn puppet_tick_due(&mut self, now_unix: i64) -> Vec<PuppetEvent> {
        let mut due = Vec::new();
        let stale_after = self.stale_after;
        let min = i64::try_from(self.min_run_interval.as_secs()).unwrap_or(i64::MAX);
        let Some(known) = self.puppet.as_mut() else {
            return due;
        };
        let stale = is_stale(stale_after, known.last_run, now_unix);
        if stale && !known.stale {
            due.push(PuppetEvent::AgentStale);
        }
        known.stale = stale;
        let quiet = known
            .last_run
            .is_some_and(|t| now_unix.saturating_sub(t) >= min);
        if quiet {
            known.quick_runs = 0;
            if known.storm {
                known.storm = false;
                due.push(PuppetEvent::RunStormCleared);
            }
        }
        due
    }

    /// The certificate notifications due with the ends just read (`None`
    /// on a tick: the last known ends, time passing), each about its row
    /// of `puppetCertificateTable`. The first read is judged too: see
    /// [`CertificateWatch::judge`] for why an expiring certificate is said
    /// at start-up.
    pub fn certificates_due(
        &mut self,
        dates: Option<CertificateDates>,
        now_unix: i64,
    ) -> Vec<(Notification, About)> {
        self.certificates
            .judge(dates, now_unix, self.certificate_warning)
            .into_iter()
            .map(|(kind, expiring)| {
                let event = if expiring {
                    PuppetEvent::CertificateExpiring
                } else {
                    PuppetEvent::CertificateExpiringCleared
                };
                (
                    event.into(),
                    About::row(PUPPET_SOURCE, kind.number() as u32),
                )
            })
            .collect()
    }
}

/// Whether no run ended within `stale_after` of `now_unix`.
fn is_stale(stale_after: Duration, last_run: Option<i64>, now_unix: i64) -> bool {
    let limit = i64::try_from(stale_after.as_secs()).unwrap_or(i64::MAX);
    last_run.is_some_and(|t| now_unix.saturating_sub(t) > limit)
}

/// The notifications due for a reading of Puppet's events log, each with
/// what it is about: a resource event its row of `puppetEventTable`, the
/// held-back count Puppet. The log's events are new by construction (it is
/// followed from its end): there is no baseline. Which lines notify is the
/// follower's to say, as it serves the count held back over its per-run
/// budget (`notifications_per_run`): each item is one to name here; when
/// sent, a ceiling per minute applies (`Limit::Resources`).
pub fn puppet_events_due(seen: &EventsObservation) -> Vec<(PuppetEvent, About)> {
    seen.items
        .iter()
        .map(|item| match item {
            EventItem::Resource { index, failed } => (
                if *failed {
                    PuppetEvent::ResourceFailed
                } else {
                    PuppetEvent::ResourceChanged
                },
                About::row(PUPPET_SOURCE, *index),
            ),
            EventItem::RunBoundary { .. } => (PuppetEvent::ResourceEventsHeldBack, About::PUPPET),
        })
        .collect()
}

/// What the judge remembers of the certificates: which kinds were said
/// to be expiring, and their last known ends (time passes between reads).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CertificateWatch {
    dates: CertificateDates,
    expiring: [bool; 3],
}

impl CertificateWatch {
    /// The kinds that turn expiring (`true`) or stop being so (`false`)
    /// with `dates` (the latest read; `None` to keep the last known ends,
    /// as on a tick) at `now`.
    ///
    /// The first call is the baseline and, unlike the run notifications,
    /// it does say a certificate that is already expiring: the condition
    /// lasts and needs someone to act, and a notification the agent keeps
    /// back at start-up would never be sent (a restart inside the warning
    /// window would silence it until the certificate has ended and the
    /// runs stopped). DISMAN-EVENT-MIB does the same by default
    /// (RFC 2981, `mteTriggerBooleanStartup` DEFVAL true). A file that
    /// cannot be read neither raises nor clears: only a date decides.
    pub fn judge(
        &mut self,
        dates: Option<CertificateDates>,
        now: i64,
        warning: Duration,
    ) -> Vec<(PuppetCertificateKind, bool)> {
        if let Some(dates) = dates {
            for (slot, date) in dates.0.iter().enumerate() {
                if date.is_some() {
                    self.dates.0[slot] = *date;
                }
            }
        }
        let mut due = Vec::new();
        for (slot, kind) in KINDS.iter().enumerate() {
            let Some(end) = self.dates.0[slot] else {
                continue;
            };
            let now_expiring = expiring(end.saturating_sub(now), warning);
            if now_expiring != self.expiring[slot] {
                self.expiring[slot] = now_expiring;
                due.push((*kind, now_expiring));
            }
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400;
    const WARNING: Duration = Duration::from_secs(30 * 86_400);

    #[test]
    fn expiring_is_said_at_start_then_on_each_crossing() {
        let mut watch = CertificateWatch::default();
        let now = 1_800_000_000;
        let dates = CertificateDates([Some(now + 10 * DAY), Some(now + 400 * DAY), None]);
        // Already expiring at start: said.
        assert_eq!(
            watch.judge(Some(dates), now, WARNING),
            vec![(PuppetCertificateKind::Agent, true)]
        );
        // Nothing new, a tick, an unreadable read: nothing.
        assert!(watch.judge(Some(dates), now + 60, WARNING).is_empty());
        assert!(watch.judge(None, now + 120, WARNING).is_empty());
        assert!(watch
            .judge(Some(CertificateDates::default()), now + 180, WARNING)
            .is_empty());
        // Renewed: cleared.
        let renewed = CertificateDates([Some(now + 800 * DAY), Some(now + 400 * DAY), None]);
        assert_eq!(
            watch.judge(Some(renewed), now + 240, WARNING),
            vec![(PuppetCertificateKind::Agent, false)]
        );
        // Time passing alone brings the CA under the warning.
        assert_eq!(
            watch.judge(None, now + 371 * DAY, WARNING),
            vec![(PuppetCertificateKind::Ca, true)]
        );
        // A valid start is silent.
        let mut fresh = CertificateWatch::default();
        assert!(fresh.judge(Some(renewed), now, WARNING).is_empty());
    }
}
