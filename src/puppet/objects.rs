//! Turns a [`PuppetState`] into PUPPET-AGENT-MIB's part of the snapshot,
//! following the table in [`crate::metrics`] (`PUPPET_SCALARS`,
//! `PUPPET_RUN_SCALARS`, `PUPPET_RESOURCE_COLUMNS`).

use super::observation::PuppetObservation;
use super::report::ResourceEntry;
use super::state::PuppetState;
use crate::metrics::{
    self, write_rows, write_scalars, Layout, PuppetField, RowKey, PUPPET_CERTIFICATE_TABLE,
    PUPPET_FACT_TABLE, PUPPET_RESOURCE_TABLE,
};
use crate::smi::{display_string, saturate_u32, Value};
use crate::snapshot::{Part, PartKey, Reading};

/// What a state of Puppet's files gives the hub: the Puppet part and the
/// observation.
pub fn reading(state: &PuppetState, layout: &Layout) -> Reading<PuppetObservation> {
    Reading {
        parts: vec![(PartKey::Puppet, puppet_part(state, layout))],
        observation: PuppetObservation::from_state(state),
    }
}

/// The Puppet scalars (`.0`) and the resource table rows (at most the
/// table's cap, `MAX_PUPPET_RESOURCES`, numbered from 1 in listing order).
pub fn puppet_part(state: &PuppetState, layout: &Layout) -> Part {
    let mut part = Part::new();
    for scalars in [metrics::PUPPET_SCALARS, metrics::PUPPET_RUN_SCALARS] {
        write_scalars(scalars, layout, &mut part, |field| scalar(state, field));
    }
    let listed = state
        .matching_report()
        .map(|r| r.resources.listed.as_slice())
        .unwrap_or(&[]);
    write_rows(
        &PUPPET_RESOURCE_TABLE,
        (1..).zip(listed),
        layout,
        &mut part,
        |(index, _)| RowKey::Row(*index),
        |(_, entry), field| entry.value(field),
    );
    let now = i64::try_from(crate::smi::unix_now()).unwrap_or(i64::MAX);
    let warning = state.certificates.warning;
    write_rows(
        &PUPPET_CERTIFICATE_TABLE,
        &state.certificates.files,
        layout,
        &mut part,
        |file| RowKey::Row(file.kind.number() as u32),
        |file, field| file.value(field, now, warning),
    );
    write_rows(
        &PUPPET_FACT_TABLE,
        &state.facts.served,
        layout,
        &mut part,
        |(row, _, _)| RowKey::Row(*row),
        |(_, name, value), field| match field {
            PuppetField::FactName => Some(display_string(name)),
            PuppetField::FactValue => Some(display_string(value)),
            _ => None,
        },
    );
    part
}

impl ResourceEntry {
    /// Its value in a column of `puppetResourceTable`.
    pub fn value(&self, field: PuppetField) -> Option<Value> {
        Some(match field {
            PuppetField::ResourceType => display_string(&self.resource_type),
            PuppetField::ResourceTitle => display_string(&self.title),
            PuppetField::ResourceState => Value::Integer(self.state.number()),
            PuppetField::ResourceMessage => display_string(self.message.as_deref().unwrap_or("")),
            _ => return None,
        })
    }
}

fn truth(b: bool) -> Value {
    Value::Integer(if b { 1 } else { 2 })
}

fn gauge(n: u64) -> Value {
    Value::Gauge32(saturate_u32(n))
}

/// One scalar, or `None` when the files do not tell (no run yet, no report
/// of the same run, a field Puppet did not write).
fn scalar(state: &PuppetState, field: PuppetField) -> Option<Value> {
    let summary = state.summary.as_ref();
    let report = state.matching_report();
    let last_run = state.last_run().and_then(|t| u64::try_from(t).ok());
    Some(match field {
        PuppetField::LastRunTime => gauge(last_run?),
        PuppetField::LastRunAge => Value::SecondsSince(last_run?),
        PuppetField::Status => Value::Integer(state.run_status().number()),
        PuppetField::ResourcesTotal => gauge(summary?.resources.total),
        PuppetField::ResourcesChanged => gauge(summary?.resources.changed),
        PuppetField::ResourcesFailed => gauge(summary?.resources.failed),
        PuppetField::ResourcesFailedToRestart => gauge(summary?.resources.failed_to_restart),
        PuppetField::ResourcesSkipped => gauge(summary?.resources.skipped),
        PuppetField::ResourcesOutOfSync => gauge(summary?.resources.out_of_sync),
        PuppetField::ResourcesRestarted => gauge(summary?.resources.restarted),
        PuppetField::ResourcesScheduled => gauge(summary?.resources.scheduled),
        PuppetField::ResourcesCorrective => gauge(summary?.resources.corrective_change),
        PuppetField::EventsTotal => gauge(summary?.events.total),
        PuppetField::EventsFailure => gauge(summary?.events.failure),
        PuppetField::EventsSuccess => gauge(summary?.events.success),
        PuppetField::ChangesTotal => gauge(summary?.changes_total),
        PuppetField::Phase(name) => {
            let seconds = summary?.time.get(name)?;
            if seconds.is_nan() || seconds < 0.0 {
                return None;
            }
            gauge((seconds * 1000.0).round() as u64)
        }
        PuppetField::ConfigVersion => match summary?.config_version.as_ref() {
            Some(version) => display_string(&version.to_string()),
            None => display_string(""),
        },
        PuppetField::PuppetVersion => display_string(summary?.puppet_version.as_deref()?),
        PuppetField::CachedCatalog => Value::Integer(state.cached_catalog_status()?.number()),
        PuppetField::Noop => truth(report?.noop),
        PuppetField::NoopPending => truth(report?.noop_pending),
        PuppetField::CorrectiveChange => truth(report?.corrective_change),
        PuppetField::RunMode => Value::Integer(state.run_mode()?.number()),
        PuppetField::FirstError => display_string(
            report?
                .logs
                .first_error
                .as_ref()
                .map(|l| l.message.as_str())
                .unwrap_or(""),
        ),
        PuppetField::Disabled => truth(state.disabled.is_some()),
        PuppetField::DisabledMessage => display_string(state.disabled.as_deref().unwrap_or("")),
        PuppetField::RunInProgress => truth(state.run_in_progress()),
        PuppetField::ReadError => display_string(&state.errors().join("; ")),
        PuppetField::TransactionUuid => display_string(report?.transaction_uuid.as_deref()?),
        PuppetField::JobId => display_string(report?.job_id.as_deref().unwrap_or("")),
        PuppetField::Role => display_string(state.role().unwrap_or("")),
        PuppetField::RunsObserved => Value::Counter32(state.runs.observed as u32),
        PuppetField::ChangingRuns => gauge(state.runs.changing_runs.into()),
        PuppetField::RunsLastHour => gauge(state.runs.last_hour.into()),
        PuppetField::RunInterval => gauge(state.runs.interval?),
        PuppetField::ConvergeRuns => gauge(state.runs.converge_runs.into()),
        PuppetField::LoopResources => display_string(&state.runs.loop_text()),
        PuppetField::LoopResourceCount => gauge(state.runs.loop_resources.len() as u64),
        PuppetField::ResourceType
        | PuppetField::ResourceTitle
        | PuppetField::ResourceState
        | PuppetField::ResourceMessage
        | PuppetField::Events(_)
        | PuppetField::Certificate(_)
        | PuppetField::FactName
        | PuppetField::FactValue => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puppet::report::parse_report;
    use crate::puppet::summary::parse_summary;
    use std::path::Path;

    fn state(case: &str) -> PuppetState {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/puppet")
            .join(case);
        let read = |name: &str| std::fs::read(dir.join(name)).ok();
        PuppetState {
            summary: read("last_run_summary.yaml").and_then(|b| parse_summary(&b).ok()),
            report: read("last_run_report.yaml").and_then(|b| parse_report(&b).ok()),
            ..PuppetState::default()
        }
    }

    fn value(part: &Part, suffix: &str) -> Option<Value> {
        crate::snapshot::value_at(part, &format!(".1.3.6.1.4.1.20267.401.{suffix}")).cloned()
    }

    #[test]
    fn a_failed_run_as_a_manager_sees_it() {
        let part = puppet_part(&state("c_failed"), &Layout::default_layout());
        assert_eq!(value(&part, "1.3.0"), Some(Value::Integer(3))); // failed
        assert_eq!(value(&part, "1.6.0"), Some(Value::Gauge32(1))); // one resource failed
        assert_eq!(value(&part, "2.1.3.1"), Some(Value::text("will-fail")));
        assert_eq!(value(&part, "2.1.4.1"), Some(Value::Integer(1))); // failed
        assert_eq!(value(&part, "2.1.2.1"), Some(Value::text("Exec")));
        let Some(Value::OctetString(first_error)) = value(&part, "1.32.0") else {
            panic!()
        };
        assert!(!first_error.is_empty());
    }

    #[test]
    fn a_changed_and_a_converged_run() {
        let part = puppet_part(&state("b_changed"), &Layout::default_layout());
        assert_eq!(value(&part, "1.3.0"), Some(Value::Integer(2)));
        assert!(matches!(value(&part, "1.16.0"), Some(Value::Gauge32(n)) if n > 0));
        assert!(matches!(value(&part, "1.17.0"), Some(Value::Gauge32(_))));
        let part = puppet_part(&state("a_converged"), &Layout::default_layout());
        assert_eq!(value(&part, "1.3.0"), Some(Value::Integer(1)));
        assert_eq!(value(&part, "1.16.0"), Some(Value::Gauge32(0)));
        assert!(value(&part, "2.1.2.1").is_none(), "nothing to list");
    }

    #[test]
    fn successive_runs_are_served_from_the_trend() {
        use crate::puppet::runs::RunHistory;
        let mut history = RunHistory::new(2);
        let mut s = state("b_changed");
        let first = s.last_run().unwrap();
        history.observe(&s);
        // The same run's files, as if written again 30 s later.
        s.summary.as_mut().unwrap().time.last_run = Some(first + 30);
        s.report
            .as_mut()
            .unwrap()
            .time
            .as_mut()
            .unwrap()
            .unix_seconds += 30;
        history.observe(&s);
        s.runs = history.trend(first + 31);
        let part = puppet_part(&s, &Layout::default_layout());
        assert_eq!(value(&part, "1.45.0"), Some(Value::Counter32(2)));
        assert_eq!(value(&part, "1.46.0"), Some(Value::Gauge32(2)));
        assert_eq!(value(&part, "1.47.0"), Some(Value::Gauge32(2)));
        assert_eq!(value(&part, "1.48.0"), Some(Value::Gauge32(30)));
        assert_eq!(value(&part, "1.49.0"), Some(Value::Gauge32(2)));
        let Some(Value::OctetString(names)) = value(&part, "1.50.0") else {
            panic!()
        };
        let names = String::from_utf8(names).unwrap();
        assert_eq!(names, s.runs.loop_resources.join(", "));
        let count = s.runs.loop_resources.len() as u32;
        assert!(count > 0);
        assert_eq!(value(&part, "1.51.0"), Some(Value::Gauge32(count)));
        // Nothing seen yet: counts of 0, no interval, an empty list.
        let part = puppet_part(&state("b_changed"), &Layout::default_layout());
        assert_eq!(value(&part, "1.45.0"), Some(Value::Counter32(0)));
        assert!(value(&part, "1.48.0").is_none());
        assert_eq!(value(&part, "1.50.0"), Some(Value::text("")));
    }

    #[test]
    fn nothing_read_yet_is_unknown_and_absent() {
        let part = puppet_part(&PuppetState::default(), &Layout::default_layout());
        assert_eq!(value(&part, "1.3.0"), Some(Value::Integer(4))); // unknown
        assert!(value(&part, "1.1.0").is_none());
        assert_eq!(value(&part, "1.33.0"), Some(Value::Integer(2))); // not disabled
    }
}
