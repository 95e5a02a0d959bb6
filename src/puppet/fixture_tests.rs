//! Every fixture case in `tests/fixtures/puppet` (files real Puppet 7.23
//! runs wrote), read the way the subagent reads them, with the values a
//! user would see; then robustness over mutilated copies of them.

use super::report::{parse_report, MAX_LISTED_RESOURCES, MAX_REPORT_BYTES};
use super::state::{pairing, Pairing};
use super::summary::parse_summary;
use super::*;
use crate::config::PuppetPaths;
use crate::metrics::{PuppetCachedCatalog, PuppetResourceState, PuppetRunStatus};
use std::path::PathBuf;
use std::time::{Duration, Instant};

const CASES: &[&str] = &[
    "a_converged",
    "b_changed",
    "c_failed",
    "d_compile_error",
    "d2_eval_error",
    "e_noop",
    "f_apply_drift_no_corrective",
    "h_dependency_cycle",
    "agent_a1_first_run",
    "agent_a2_converged",
    "agent_a3_corrective_change",
    "agent_a4_compile_error_cached_catalog",
    "agent_a5_compile_error_no_cache",
    "agent_a6_failed_resource",
    "agent_a8_disabled",
];

fn dir(case: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/puppet")
        .join(case)
}

fn read(case: &str, file: &str) -> Vec<u8> {
    let p = dir(case).join(file);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The state as the subagent would read it with the case's folder as both
/// publicdir and statedir.
fn state(case: &str) -> PuppetState {
    let d = dir(case);
    read_state(&PuppetPaths::from_dirs(&d, &d))
}

/// `exit=N` from the case's exitcode.txt.
fn exit_code(case: &str) -> i32 {
    let text = String::from_utf8(read(case, "exitcode.txt")).unwrap();
    let n = text
        .split_whitespace()
        .next()
        .unwrap()
        .strip_prefix("exit=")
        .unwrap();
    n.parse().unwrap()
}

fn summary(st: &PuppetState) -> &RunSummary {
    st.summary.as_ref().expect("a summary")
}

fn report(st: &PuppetState) -> &RunReport {
    st.matching_report().expect("a report of the same run")
}

fn listed(r: &RunReport) -> Vec<(&str, PuppetResourceState, Option<&str>)> {
    r.resources
        .listed
        .iter()
        .map(|e| (e.resource.as_str(), e.state, e.message.as_deref()))
        .collect()
}

fn num(v: i64) -> Option<ConfigVersion> {
    Some(ConfigVersion::Number(v))
}

fn assert_time(t: Option<f64>, expected: f64) {
    let t = t.expect("a time");
    assert!((t - expected).abs() < 1e-12, "{t} != {expected}");
}

/// What every case with both files has in common.
fn common(case: &str, st: &PuppetState) {
    assert_eq!(st.summary_status, FileStatus::Ok, "{case}");
    assert_eq!(st.report_status, FileStatus::Ok, "{case}");
    assert_eq!(st.pairing(), Pairing::Paired, "{case}");
    assert_eq!(st.detailed_exit_code(), Some(exit_code(case)), "{case}");
    let s = summary(st);
    let r = report(st);
    assert_eq!(s.puppet_version.as_deref(), Some("7.23.0"), "{case}");
    assert_eq!(r.puppet_version.as_deref(), Some("7.23.0"), "{case}");
    assert_eq!(r.host.as_deref(), Some("vm"), "{case}");
    assert_eq!(r.environment.as_deref(), Some("production"), "{case}");
    assert_eq!(r.report_format, Some(12), "{case}");
    assert_eq!(
        s.application.converged_environment.as_deref(),
        Some("production")
    );
    assert_eq!(r.configuration_version, s.config_version, "{case}");
    // The report's metrics carry the summary's numbers.
    assert_eq!(r.metric("time", "total"), s.time.total(), "{case}");
    assert_eq!(
        r.metric("resources", "total"),
        Some(s.resources.total as f64),
        "{case}"
    );
    assert_eq!(
        r.metric("changes", "total"),
        Some(s.changes_total as f64),
        "{case}"
    );
    assert_eq!(
        r.metric("events", "failure"),
        Some(s.events.failure as f64),
        "{case}"
    );
    // And the resource statuses count what the summary counts, except under
    // a dependency cycle or without a catalog (nothing was evaluated).
    if r.transaction_completed == Some(true) {
        let c = r.resources.counts;
        assert_eq!(c.total, s.resources.total, "{case}");
        assert_eq!(c.failed, s.resources.failed, "{case}");
        assert_eq!(c.changed, s.resources.changed, "{case}");
        assert_eq!(c.skipped, s.resources.skipped, "{case}");
        assert_eq!(c.out_of_sync, s.resources.out_of_sync, "{case}");
        assert_eq!(c.corrective_change, s.resources.corrective_change, "{case}");
    }
    // last_run is floor(start + total) in every real run.
    let end = r.end_time().unwrap();
    assert_eq!(s.time.last_run, Some(end.floor() as i64), "{case}");
    assert!(!st.run_in_progress());
    assert_eq!(st.disabled, None);
    assert!(st.errors().is_empty(), "{case}: {:?}", st.errors());
}

#[test]
fn every_case_is_covered() {
    let mut on_disk: Vec<String> = std::fs::read_dir(dir(""))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        // Logs, not a run's files: `events_log`'s tests read them.
        .filter(|name| name != "logdest")
        .collect();
    on_disk.sort();
    let mut cases: Vec<String> = CASES.iter().map(|s| s.to_string()).collect();
    cases.sort();
    assert_eq!(on_disk, cases);
    for case in CASES {
        // Nothing in a real file is an error, whatever the case.
        let st = state(case);
        assert!(st.errors().is_empty(), "{case}: {:?}", st.errors());
    }
}

#[test]
fn a_converged() {
    let st = state("a_converged");
    common("a_converged", &st);
    assert_eq!(st.run_status(), PuppetRunStatus::Unchanged);
    assert_eq!(st.run_mode(), Some(crate::metrics::PuppetRunMode::User));
    let s = summary(&st);
    assert_eq!(s.config_version, num(1795336205));
    assert_eq!(s.config_version.as_ref().unwrap().to_string(), "1795336205");
    assert_eq!(
        s.resources,
        summary::Resources {
            total: 9,
            ..Default::default()
        }
    );
    assert_eq!(s.changes_total, 0);
    assert_eq!(s.events, summary::Events::default());
    assert_eq!(s.time.last_run, Some(1795336205));
    assert_time(s.time.total(), 0.009115314);
    // apply: total excludes compilation, which took longer.
    assert_time(s.time.get("config_retrieval"), 0.177564622);
    assert_time(s.time.get("catalog_application"), 0.006183736999901157);
    assert_time(s.time.get("transaction_evaluation"), 0.0029687730000205192);
    assert_time(s.time.get("exec"), 8.7969e-05);
    assert_time(s.time.get("filebucket"), 2.6278e-05);
    let keys: Vec<&str> = s.time.phases.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "catalog_application",
            "config_retrieval",
            "exec",
            "file",
            "filebucket",
            "schedule",
            "total",
            "transaction_evaluation"
        ]
    );
    let r = report(&st);
    assert_eq!(r.status, PuppetRunStatus::Unchanged);
    assert_eq!(r.transaction_completed, Some(true));
    assert!(!r.noop && !r.noop_pending && !r.corrective_change);
    assert_eq!(r.cached_catalog_status, Some(PuppetCachedCatalog::NotUsed));
    assert!(!st.cached_catalog_used());
    let t = r.time.unwrap();
    assert_eq!(
        (t.unix_seconds, t.nanos, t.offset_minutes),
        (1795336205, 231_822_177, 0)
    );
    assert_eq!(
        r.transaction_uuid.as_deref(),
        Some("214d44d5-7708-4573-a7a7-90e113336a9c")
    );
    assert_eq!(
        r.catalog_uuid.as_deref(),
        Some("9694e036-8652-4e59-9e2f-e5248271b3eb")
    );
    assert!(r.resources.listed.is_empty());
    assert_eq!(r.resources.counts.total, 9);
    assert_eq!(r.logs.total, 1);
    assert_eq!(r.logs.errors, 0);
    assert_eq!(r.logs.first_error, None);
}

#[test]
fn b_changed() {
    let st = state("b_changed");
    common("b_changed", &st);
    assert_eq!(st.run_status(), PuppetRunStatus::Changed);
    let s = summary(&st);
    assert_eq!(s.config_version, num(1795336206));
    assert_eq!(s.resources.total, 11);
    assert_eq!(s.resources.changed, 3);
    assert_eq!(s.resources.out_of_sync, 3);
    // 3 resources, 4 properties: the file's content and mode.
    assert_eq!(s.changes_total, 4);
    assert_eq!(
        (s.events.total, s.events.success, s.events.failure),
        (4, 4, 0)
    );
    assert_eq!(s.time.last_run, Some(1795336206));
    assert_time(s.time.get("notify"), 0.000961125);
    assert_time(s.time.get("schedule"), 0.00015836599999999998);
    let r = report(&st);
    assert_eq!(r.status, PuppetRunStatus::Changed);
    let l = listed(r);
    assert_eq!(l.len(), 3);
    assert_eq!(l[0].0, "File[/srv/puppetwork/target/managed.txt]");
    assert_eq!(l[0].1, PuppetResourceState::Changed);
    assert!(
        l[0].2
            .unwrap()
            .starts_with("content changed '{sha256}3a79bf37b5"),
        "{l:?}"
    );
    assert_eq!(
        l[1],
        (
            "Exec[always-run]",
            PuppetResourceState::Changed,
            Some("executed successfully")
        )
    );
    assert_eq!(
        l[2],
        (
            "Notify[greeting]",
            PuppetResourceState::Changed,
            Some("defined 'message' as 'Hello from the notify resource'")
        )
    );
    let file = &r.resources.listed[0];
    assert_eq!(file.resource_type, "File");
    assert_eq!(file.title, "/srv/puppetwork/target/managed.txt");
    assert_eq!(file.change_count, 2);
    assert_eq!(file.line, Some(2));
    assert_eq!(
        file.file.as_deref(),
        Some("/srv/puppetwork/manifests/changes.pp")
    );
    assert_eq!(r.resources.omitted, 0);
}

#[test]
fn c_failed() {
    let st = state("c_failed");
    common("c_failed", &st);
    assert_eq!(st.run_status(), PuppetRunStatus::Failed);
    assert_eq!(st.detailed_exit_code(), Some(6));
    let s = summary(&st);
    assert_eq!(s.resources.failed, 1);
    assert_eq!(s.resources.skipped, 2);
    assert_eq!(s.resources.changed, 1);
    assert_eq!(s.resources.out_of_sync, 2);
    assert_eq!(s.resources.total, 11);
    assert_eq!(
        (s.events.total, s.events.success, s.events.failure),
        (2, 1, 1)
    );
    assert_eq!(s.changes_total, 1);
    let r = report(&st);
    assert_eq!(r.status, PuppetRunStatus::Failed);
    assert_eq!(r.transaction_completed, Some(true));
    // Psych quotes a digit-leading string.
    assert_eq!(
        r.catalog_uuid.as_deref(),
        Some("095f5c06-5532-473c-aa0b-24fcad52bd54")
    );
    let fail_msg = "change from 'notrun' to ['0'] failed: '/bin/sh -c \"echo about to fail >&2; exit 1\"' returned 1 instead of one of [0]";
    let skip_msg = Some("Skipping because of failed dependencies");
    assert_eq!(
        listed(r),
        [
            ("Exec[will-fail]", PuppetResourceState::Failed, Some(fail_msg)),
            (
                "File[/srv/puppetwork/target/depends-on-failed.txt]",
                PuppetResourceState::Skipped,
                skip_msg
            ),
            ("Notify[after-failure]", PuppetResourceState::Skipped, skip_msg),
            (
                "File[/srv/puppetwork/target/managed.txt]",
                PuppetResourceState::Changed,
                Some("content changed '{sha256}b03d44cd60d71de68a4aca7808c6f768802f6d6c414430ff8ccea10c1aa57b4c' to '{sha256}77774d2f39299ce8479e4bd4f37ad338057ba8480abd7aedcf17186129702f74'")
            ),
        ]
    );
    assert_eq!(r.logs.total, 8);
    assert_eq!(r.logs.errors, 2);
    assert_eq!(r.logs.warnings, 2);
    let e = r.logs.first_error.as_ref().unwrap();
    assert_eq!(e.level, "err");
    assert_eq!(e.source.as_deref(), Some("Puppet"));
    assert_eq!(
        e.message,
        "'/bin/sh -c \"echo about to fail >&2; exit 1\"' returned 1 instead of one of [0]"
    );
}

/// A compile or evaluation error under `puppet apply` writes nothing: the
/// files of the run before stay byte-identical, so the state still shows
/// that run. `checksums_before_after.txt` has `stat` and `sha256sum` lines
/// before and after the failed run.
fn nothing_written(case: &str, previous: &str) {
    let st = state(case);
    assert_eq!(st.summary_status, FileStatus::Missing);
    assert_eq!(st.report_status, FileStatus::Missing);
    assert_eq!(st.run_status(), PuppetRunStatus::Unknown);
    assert_eq!(st.detailed_exit_code(), None);
    assert_eq!(exit_code(case), 1);
    let text = String::from_utf8(read(case, "checksums_before_after.txt")).unwrap();
    let (before, after) = text.split_once("# after the run").unwrap();
    let before: Vec<&str> = before.lines().skip(1).collect();
    let after: Vec<&str> = after.lines().skip(1).filter(|l| !l.is_empty()).collect();
    assert_eq!(before, after, "{case}: Puppet wrote nothing");
    // The summary that stayed is the one of `previous` (same size).
    let size: usize = before[0]
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        size,
        read(previous, "last_run_summary.yaml").len(),
        "{case}"
    );
}

#[test]
fn d_compile_error_writes_nothing() {
    nothing_written("d_compile_error", "c_failed");
}

#[test]
fn d2_eval_error_writes_nothing() {
    nothing_written("d2_eval_error", "f_apply_drift_no_corrective");
}

#[test]
fn e_noop() {
    let st = state("e_noop");
    common("e_noop", &st);
    // Drift found in noop is "unchanged" with exit code 0.
    assert_eq!(st.run_status(), PuppetRunStatus::Unchanged);
    let s = summary(&st);
    assert_eq!(s.resources.out_of_sync, 4);
    assert_eq!(s.resources.changed, 0);
    assert_eq!(s.changes_total, 0);
    assert_eq!((s.events.total, s.events.noop, s.events.success), (5, 5, 0));
    let r = report(&st);
    assert!(r.noop);
    assert!(r.noop_pending);
    assert_eq!(r.status, PuppetRunStatus::Unchanged);
    let l = listed(r);
    assert_eq!(l.len(), 4);
    assert!(
        l.iter().all(|e| e.1 == PuppetResourceState::OutOfSync),
        "{l:?}"
    );
    assert_eq!(
        l[1],
        (
            "File[/srv/puppetwork/target/new-file.txt]",
            PuppetResourceState::OutOfSync,
            Some("current_value 'absent', should be 'file' (noop)")
        )
    );
    assert_eq!(
        l[2],
        (
            "Exec[noop-exec]",
            PuppetResourceState::OutOfSync,
            Some("current_value 'notrun', should be ['0'] (noop)")
        )
    );
}

#[test]
fn f_apply_drift_no_corrective() {
    let st = state("f_apply_drift_no_corrective");
    common("f_apply_drift_no_corrective", &st);
    assert_eq!(st.run_status(), PuppetRunStatus::Changed);
    let s = summary(&st);
    assert_eq!(s.resources.corrective_change, 0);
    let r = report(&st);
    // puppet apply never computes corrective changes.
    assert!(!r.corrective_change);
    assert_eq!(r.resources.listed.len(), 1);
    let e = &r.resources.listed[0];
    assert_eq!(e.resource, "File[/srv/puppetwork/target/drift.txt]");
    assert_eq!(e.state, PuppetResourceState::Changed);
    assert!(!e.corrective_change);
}

#[test]
fn h_dependency_cycle() {
    let st = state("h_dependency_cycle");
    common("h_dependency_cycle", &st);
    assert_eq!(st.run_status(), PuppetRunStatus::Failed);
    assert_eq!(st.detailed_exit_code(), Some(1));
    let s = summary(&st);
    assert_eq!(s.resources.failed, 2);
    assert_eq!(s.resources.total, 2);
    assert_eq!(s.events.failure, 2);
    assert_eq!(s.time.get("catalog_application"), None);
    let r = report(&st);
    assert_eq!(r.status, PuppetRunStatus::Failed);
    assert_eq!(r.transaction_completed, Some(false));
    let cycle = Some("resource is part of a dependency cycle");
    assert_eq!(
        listed(r),
        [
            (
                "File[/tmp/pw/target/cycle-a.txt]",
                PuppetResourceState::Failed,
                cycle
            ),
            (
                "File[/tmp/pw/target/cycle-b.txt]",
                PuppetResourceState::Failed,
                cycle
            ),
        ]
    );
    // A `|-` literal block.
    let e = r.logs.first_error.as_ref().unwrap();
    assert!(
        e.message.starts_with(
            "Found 1 dependency cycle:\n(File[/tmp/pw/target/cycle-a.txt] => File[/tmp/pw/target/cycle-b.txt]"
        ),
        "{e:?}"
    );
}

#[test]
fn agent_a1_first_run() {
    let st = state("agent_a1_first_run");
    common("agent_a1_first_run", &st);
    assert_eq!(st.run_status(), PuppetRunStatus::Changed);
    assert_eq!(st.run_mode(), Some(crate::metrics::PuppetRunMode::Agent));
    let s = summary(&st);
    assert_eq!(s.config_version, num(1795336454));
    assert_eq!(s.resources.changed, 2);
    assert_eq!(s.resources.total, 9);
    assert_time(s.time.get("startup_time"), 0.456267746);
    assert_time(s.time.get("convert_catalog"), 0.015027760999828388);
    assert_time(s.time.total(), 0.71384057);
    // Harness artifact: no REST terminus, so none of these.
    for k in ["fact_generation", "plugin_sync", "node_retrieval"] {
        assert_eq!(s.time.get(k), None, "{k}");
    }
    let r = report(&st);
    assert_eq!(
        listed(r),
        [
            (
                "File[/srv/puppetwork/target/agent-managed.txt]",
                PuppetResourceState::Changed,
                Some("defined content as '{sha256}531f727b33bc06d350879264504bb2174be6e0cea762c77c8e561900171bd368'")
            ),
            ("Exec[agent-marker]", PuppetResourceState::Changed, Some("executed successfully")),
        ]
    );
    // 18 fact resolution errors, and they are all there is.
    assert_eq!(r.logs.errors, 18);
    let e = r.logs.first_error.as_ref().unwrap();
    assert_eq!(e.source.as_deref(), Some("Facter"));
    assert_eq!(
        e.message,
        "Permission denied @ rb_sysopen - /proc/1/environ"
    );
}

#[test]
fn agent_a2_converged() {
    let st = state("agent_a2_converged");
    common("agent_a2_converged", &st);
    // Error logs do not change the status.
    assert_eq!(st.run_status(), PuppetRunStatus::Unchanged);
    let r = report(&st);
    assert_eq!(r.logs.errors, 18);
    assert!(r.resources.listed.is_empty());
}

#[test]
fn agent_a3_corrective_change() {
    let st = state("agent_a3_corrective_change");
    common("agent_a3_corrective_change", &st);
    assert_eq!(st.run_status(), PuppetRunStatus::Changed);
    let s = summary(&st);
    assert_eq!(s.resources.corrective_change, 1);
    let r = report(&st);
    assert!(r.corrective_change);
    assert_eq!(r.resources.listed.len(), 1);
    let e = &r.resources.listed[0];
    assert_eq!(e.resource, "File[/srv/puppetwork/target/agent-managed.txt]");
    assert!(e.corrective_change);
    assert!(
        e.message.as_deref().unwrap().ends_with(" (corrective)"),
        "{e:?}"
    );
}

#[test]
fn agent_a4_compile_error_cached_catalog() {
    let st = state("agent_a4_compile_error_cached_catalog");
    common("agent_a4_compile_error_cached_catalog", &st);
    // Looks healthy everywhere but in cached_catalog_status and the logs.
    assert_eq!(st.run_status(), PuppetRunStatus::Unchanged);
    assert_eq!(st.detailed_exit_code(), Some(0));
    assert!(st.cached_catalog_used());
    assert_eq!(
        st.cached_catalog_status(),
        Some(PuppetCachedCatalog::OnFailure)
    );
    let s = summary(&st);
    assert!(!s.has_failures() && !s.no_catalog_applied());
    // The old catalog's version.
    assert_eq!(s.config_version, num(1795362657));
    assert_eq!(s.time.last_run, Some(1795362663));
    assert_eq!(s.resources.total, 8);
    let r = report(&st);
    assert_eq!(r.status, PuppetRunStatus::Unchanged);
    assert_eq!(r.transaction_completed, Some(true));
    assert_eq!(r.logs.errors, 1);
    let e = r.logs.first_error.as_ref().unwrap();
    assert!(e.message.starts_with("Could not retrieve catalog from remote server: Error 500 on SERVER: Server Error: Could not parse for environment production: Syntax error at 'content'"), "{e:?}");
}

#[test]
fn agent_a5_compile_error_no_cache() {
    let st = state("agent_a5_compile_error_no_cache");
    common("agent_a5_compile_error_no_cache", &st);
    assert_eq!(st.run_status(), PuppetRunStatus::Failed);
    assert_eq!(st.detailed_exit_code(), Some(1));
    let s = summary(&st);
    assert_eq!(s.config_version, None);
    assert!(s.no_catalog_applied());
    assert_eq!(s.resources, summary::Resources::default());
    let keys: Vec<&str> = s.time.phases.keys().map(String::as_str).collect();
    assert_eq!(keys, ["startup_time", "total"]);
    assert_eq!(s.time.last_run, Some(1795362665));
    let r = report(&st);
    assert_eq!(r.status, PuppetRunStatus::Failed);
    assert_eq!(r.transaction_completed, Some(false));
    assert_eq!(r.cached_catalog_status, Some(PuppetCachedCatalog::NotUsed));
    assert_eq!(r.configuration_version, None);
    assert_eq!(r.catalog_uuid, None);
    assert_eq!(r.resources.counts.total, 0);
    assert_eq!((r.logs.errors, r.logs.warnings), (2, 1));
    assert!(r
        .logs
        .first_error
        .as_ref()
        .unwrap()
        .message
        .starts_with("Could not retrieve catalog from remote server: Error 500 on SERVER"));
    // Without the report, the summary alone says failed too.
    let alone = PuppetState {
        report: None,
        ..st.clone()
    };
    assert_eq!(alone.run_status(), PuppetRunStatus::Failed);
}

#[test]
fn agent_a6_failed_resource() {
    let st = state("agent_a6_failed_resource");
    common("agent_a6_failed_resource", &st);
    assert_eq!(st.run_status(), PuppetRunStatus::Failed);
    let s = summary(&st);
    assert_eq!(
        (s.resources.failed, s.resources.skipped, s.resources.total),
        (1, 1, 10)
    );
    assert_eq!(s.events.failure, 1);
    let r = report(&st);
    assert_eq!(
        listed(r),
        [
            (
                "Exec[agent-fail]",
                PuppetResourceState::Failed,
                Some("change from 'notrun' to ['0'] failed: '/bin/false' returned 1 instead of one of [0]")
            ),
            (
                "Notify[agent-skipped]",
                PuppetResourceState::Skipped,
                Some("Skipping because of failed dependencies")
            ),
        ]
    );
    // The first error that is not one of the 18 Facter lines before it.
    assert_eq!(r.logs.errors, 20);
    let e = r.logs.first_error.as_ref().unwrap();
    assert_eq!(e.source.as_deref(), Some("Puppet"));
    assert_eq!(e.message, "'/bin/false' returned 1 instead of one of [0]");
}

#[test]
fn agent_a8_disabled() {
    let st = state("agent_a8_disabled");
    assert_eq!(st.disabled.as_deref(), Some("maintenance window CHG-42"));
    assert_eq!(st.summary_status, FileStatus::Missing);
    assert_eq!(st.run_status(), PuppetRunStatus::Unknown);
    assert!(!st.run_in_progress());
    // The skipped run wrote nothing (the files of the run before stayed).
    let text = String::from_utf8(read("agent_a8_disabled", "checksums_before_after.txt")).unwrap();
    let (before, after) = text.split_once("# after the run").unwrap();
    assert_eq!(
        before.lines().skip(1).collect::<Vec<_>>(),
        after.lines().skip(1).collect::<Vec<_>>()
    );
}

#[test]
fn reports_pair_only_with_their_own_summary() {
    let summaries: Vec<(&str, RunSummary)> = CASES
        .iter()
        .filter(|c| dir(c).join("last_run_summary.yaml").exists())
        .map(|c| {
            (
                *c,
                parse_summary(&read(c, "last_run_summary.yaml")).unwrap(),
            )
        })
        .collect();
    for (sc, s) in &summaries {
        for (rc, _) in &summaries {
            let r = parse_report(&read(rc, "last_run_report.yaml")).unwrap();
            let p = pairing(s, &r);
            if sc == rc {
                assert_eq!(p, Pairing::Paired, "{sc}");
            } else {
                assert!(
                    matches!(p, Pairing::NotPaired { .. }),
                    "{sc} vs {rc}: {p:?}"
                );
            }
        }
    }
    // A newer summary with the report of the run before.
    let s = parse_summary(&read("b_changed", "last_run_summary.yaml")).unwrap();
    let r = parse_report(&read("a_converged", "last_run_report.yaml")).unwrap();
    assert!(matches!(
        pairing(&s, &r),
        Pairing::NotPaired {
            summary_newer: true,
            ..
        }
    ));
    // The state then judges from the summary alone.
    let st = PuppetState {
        summary: Some(s),
        report: Some(r),
        ..Default::default()
    };
    assert!(st.matching_report().is_none());
    assert_eq!(st.run_status(), PuppetRunStatus::Changed);
    assert_eq!(st.cached_catalog_status(), None);
}

// ---- robustness ----

fn fixture_files() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for case in CASES {
        for f in ["last_run_summary.yaml", "last_run_report.yaml"] {
            if dir(case).join(f).exists() {
                out.push((format!("{case}/{f}"), read(case, f)));
            }
        }
    }
    out
}

#[test]
fn truncated_files_never_panic() {
    // Every prefix of every summary; every 61st of every report (debug
    // builds parse slowly), plus the last 64 bytes of each byte by byte.
    for (name, bytes) in fixture_files() {
        let step = if name.ends_with("summary.yaml") {
            1
        } else {
            61
        };
        let n = bytes.len();
        let cuts = (0..n).step_by(step).chain(n.saturating_sub(64)..n);
        for cut in cuts {
            let part = &bytes[..cut];
            if name.ends_with("summary.yaml") {
                if let Ok(s) = parse_summary(part) {
                    assert!(s.resources.total <= 11, "{name}@{cut}");
                }
            } else if let Ok(r) = parse_report(part) {
                assert!(r.resources.listed.len() <= MAX_LISTED_RESOURCES);
            }
        }
    }
}

#[test]
fn mutated_files_never_panic() {
    // Deterministic byte mutations: overwrite, delete, insert YAML syntax.
    let mut seed: u64 = 0x5eed_1234_abcd_0042;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    const SPICE: &[&[u8]] = &[
        b"&a ",
        b"*a",
        b"!!binary ",
        b"!ruby/sym ",
        b"{",
        b"}",
        b"[",
        b"]",
        b"\n- ",
        b": ",
        b"'",
        b"\"",
        b"\t",
        b"\xff",
        b"~",
        b"<<: ",
        b"---\n",
        b"...\n",
        b"? ",
        b"|\n",
        b"%YAML 1.1\n",
    ];
    let files = fixture_files();
    let mut parsed_ok = 0;
    for i in 0..1000 {
        let (name, orig) = &files[i % files.len()];
        let mut b = orig.clone();
        for _ in 0..(1 + rand() % 4) {
            let pos = (rand() as usize) % (b.len() + 1);
            match rand() % 3 {
                0 if pos < b.len() => b[pos] = rand() as u8,
                1 if pos < b.len() => {
                    b.remove(pos);
                }
                _ => {
                    let s = SPICE[(rand() as usize) % SPICE.len()];
                    b.splice(pos..pos, s.iter().copied());
                }
            }
        }
        let ok = if name.ends_with("summary.yaml") {
            parse_summary(&b).is_ok()
        } else {
            parse_report(&b).is_ok()
        };
        parsed_ok += usize::from(ok);
    }
    // Some mutants are still valid YAML of the right shape.
    assert!(parsed_ok > 30, "{parsed_ok}");
}

#[test]
fn garbage_is_a_clear_error() {
    for bad in [
        &b"\x00\x01\x02\x03"[..],
        b"\xff\xfe\xfd",
        b"<html><body>502 Bad Gateway</body></html>",
        b"{\"json\": true}",
        b"--- !ruby/object:Puppet::Transaction::Report\n",
        b"--- !ruby/object:Puppet::Transaction::Report\n- a list\n",
        b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    ] {
        let s = parse_summary(bad);
        let r = parse_report(bad);
        // JSON is YAML: {"json": true} is a mapping with no known key, a
        // report with nothing in it, an incomplete summary.
        if bad.starts_with(b"{\"json") {
            assert!(matches!(s, Err(ParseError::Incomplete(_))) && r.is_ok());
            continue;
        }
        let (s, r) = (s.unwrap_err(), r.unwrap_err());
        assert!(
            !s.to_string().is_empty() && !s.to_string().contains('\n'),
            "{s}"
        );
        assert!(
            !r.to_string().is_empty() && !r.to_string().contains('\n'),
            "{r}"
        );
    }
    // Very deep nesting is refused, not a stack overflow.
    let deep = "a:\n".to_string() + &"[".repeat(100_000);
    assert!(parse_report(deep.as_bytes()).is_err());
    let deep_block: String = (0..500).map(|i| format!("{}k:\n", " ".repeat(i))).collect();
    assert!(parse_report(deep_block.as_bytes()).is_err());
}

/// The classic "billion laughs" under `key` (indented by `indent`): 9
/// levels of 9 aliases, 9^9 strings if expanded.
fn alias_bomb(key: &str, indent: &str) -> String {
    let mut y = format!("{indent}{key}:\n{indent}- &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    for w in names.windows(2) {
        let refs = vec![format!("*{}", w[0]); 9].join(",");
        y.push_str(&format!("{indent}- &{} [{refs}]\n", w[1]));
    }
    y
}

#[test]
fn alias_bombs_are_refused_quickly() {
    let top = "--- !ruby/object:Puppet::Transaction::Report\nhost: vm\n";
    let cases = [
        // Under a key nobody reads: skipped, but aliases still replay.
        format!("{top}{}", alias_bomb("unknown_key", "")),
        // In a field of each log entry that is skipped.
        format!("{top}logs:\n- level: err\n  message: boom\n{}", alias_bomb("tags", "  ")),
        // In the resource statuses' events.
        format!(
            "{top}resource_statuses:\n  Exec[x]:\n    failed: true\n    events:\n    - status: failure\n      message: m\n{}",
            alias_bomb("desired_value", "      ")
        ),
    ];
    for bomb in &cases {
        let t = Instant::now();
        let e = parse_report(bomb.as_bytes()).unwrap_err();
        let took = t.elapsed();
        println!("alias bomb refused in {took:?}: {e}");
        assert!(took < Duration::from_secs(2), "{took:?}");
        assert!(
            e.to_string().contains("alias") || e.to_string().contains("budget"),
            "{e}"
        );
    }
    let t = Instant::now();
    let e = parse_summary(alias_bomb("time_extra", "").as_bytes()).unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(2));
    println!("summary alias bomb: {e}");
    // A wide one: one anchor aliased 200,000 times.
    let mut wide = String::from("host: &h vm\nlogs:\n");
    for _ in 0..200_000 {
        wide.push_str("- {level: *h}\n");
    }
    let t = Instant::now();
    let e = parse_report(wide.as_bytes()).unwrap_err();
    println!("wide alias bomb refused in {:?}: {e}", t.elapsed());
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    // A few honest aliases (Psych emits them for shared objects) are fine.
    let r = parse_report(
        b"environment: &e production\nlogs:\n- {level: err, message: *e, source: Puppet}\n",
    )
    .unwrap();
    assert_eq!(r.logs.first_error.unwrap().message, "production");
}

#[test]
fn oversized_input_is_refused_before_parsing() {
    // A 100 MB report on disk: refused from its size, without reading it.
    let tmp = tempfile::tempdir().unwrap();
    let paths = PuppetPaths::from_dirs(tmp.path(), tmp.path());
    {
        use std::io::Write;
        let mut f = std::io::BufWriter::new(std::fs::File::create(&paths.report).unwrap());
        let line = b"- level: notice\n  message: padding padding padding padding padding\n";
        let mut written = 0;
        f.write_all(b"--- !ruby/object:Puppet::Transaction::Report\nlogs:\n")
            .unwrap();
        while written < 100_000_000 {
            f.write_all(line).unwrap();
            written += line.len();
        }
    }
    std::fs::write(&paths.summary, read("b_changed", "last_run_summary.yaml")).unwrap();
    let t = Instant::now();
    let st = read_state(&paths);
    let took = t.elapsed();
    println!("100 MB report refused in {took:?}");
    assert!(took < Duration::from_secs(1), "{took:?}");
    match &st.report_status {
        FileStatus::Invalid(ParseError::TooLarge { len, max }) => {
            assert!(*len > 100_000_000);
            assert_eq!(*max, MAX_REPORT_BYTES as u64);
        }
        other => panic!("{other:?}"),
    }
    assert!(
        st.errors()[0].contains("over the 67108864-byte limit"),
        "{:?}",
        st.errors()
    );
    // The summary is still read, and the state judges from it.
    assert_eq!(st.summary_status, FileStatus::Ok);
    assert_eq!(st.run_status(), PuppetRunStatus::Changed);

    // The same bytes handed to the parser directly.
    let big = vec![b'#'; MAX_REPORT_BYTES + 1];
    let t = Instant::now();
    assert!(matches!(
        parse_report(&big),
        Err(ParseError::TooLarge { .. })
    ));
    assert!(t.elapsed() < Duration::from_millis(100));
}

#[test]
fn a_large_honest_report_parses_keeping_little() {
    // 1,000 resources (about 0.8 MB), one in ten changed, one in a hundred
    // failed: only the first 100 noteworthy ones are kept, failures first.
    let mut y = String::from(
        "--- !ruby/object:Puppet::Transaction::Report\nhost: big\nstatus: failed\nlogs:\n",
    );
    for i in 0..1_000 {
        y.push_str(&format!("- level: notice\n  message: resource {i} did something rather verbose\n  source: \"/Stage[main]/Main/File[/srv/f{i}]/content\"\n  tags:\n  - notice\n  time: '2026-11-22T08:30:08.505359348+00:00'\n  file: \"/etc/puppet/code/site.pp\"\n  line: {i}\n"));
    }
    y.push_str("resource_statuses:\n");
    for i in 0..1_000 {
        let failed = i % 100 == 99;
        let changed = i % 10 == 0;
        y.push_str(&format!(
            "  File[/srv/f{i}]:\n    title: \"/srv/f{i}\"\n    file: \"/etc/puppet/code/site.pp\"\n    line: {i}\n    resource: File[/srv/f{i}]\n    resource_type: File\n    provider_used: posix\n    containment_path:\n    - Stage[main]\n    - Main\n    - File[/srv/f{i}]\n    evaluation_time: 0.001\n    tags:\n    - file\n    - class\n    time: '2026-11-22T08:30:08.503151200+00:00'\n    failed: {failed}\n    failed_to_restart: false\n    changed: {changed}\n    out_of_sync: {}\n    skipped: false\n    change_count: {}\n    out_of_sync_count: 0\n    events:\n    - audited: false\n      property: content\n      previous_value: \"{{sha256}}abc\"\n      desired_value: \"{{sha256}}def\"\n      message: event of {i}\n      name: content_changed\n      status: {}\n      corrective_change: false\n    corrective_change: false\n",
            failed || changed,
            u8::from(changed),
            if failed { "failure" } else { "success" },
        ));
    }
    let t = Instant::now();
    let r = parse_report(y.as_bytes()).unwrap();
    println!(
        "{} KB report with 1,000 resources parsed in {:?}",
        y.len() >> 10,
        t.elapsed()
    );
    assert_eq!(r.resources.counts.total, 1_000);
    assert_eq!(r.resources.counts.failed, 10);
    assert_eq!(r.resources.counts.changed, 100);
    assert_eq!(r.resources.listed.len(), 100);
    assert_eq!(r.resources.omitted, 100 + 10 - 100);
    assert_eq!(r.resources.listed[0].resource, "File[/srv/f99]");
    assert_eq!(
        r.resources.listed[0].message.as_deref(),
        Some("event of 99")
    );
    // The 10 failures, then the first 90 changes, in report order.
    assert_eq!(r.resources.listed[9].resource, "File[/srv/f999]");
    assert_eq!(r.resources.listed[10].resource, "File[/srv/f0]");
    assert_eq!(r.resources.listed[10].state, PuppetResourceState::Changed);
    assert_eq!(r.resources.listed[99].resource, "File[/srv/f890]");
    assert_eq!(r.logs.total, 1_000);
}

#[test]
fn wrong_types_in_real_files_are_errors_naming_the_line() {
    let good = String::from_utf8(read("c_failed", "last_run_summary.yaml")).unwrap();
    let bad = good.replace("failed: 1", "failed: one");
    let e = parse_summary(bad.as_bytes()).unwrap_err();
    // resources.failed
    assert!(e.to_string().contains("line 12, column 11"), "{e}");
    let good = String::from_utf8(read("c_failed", "last_run_report.yaml")).unwrap();
    let bad = good.replacen(
        "transaction_completed: true",
        "transaction_completed: [true]",
        1,
    );
    let e = parse_report(bad.as_bytes()).unwrap_err();
    assert!(e.to_string().contains("line 9"), "{e}");
    // A type the value can stand for is taken: a numeric host name.
    let odd = good.replacen("host: vm", "host: 1234", 1);
    assert_eq!(
        parse_report(odd.as_bytes()).unwrap().host.as_deref(),
        Some("1234")
    );
}
