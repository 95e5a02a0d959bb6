//! What is PUPPET-AGENT-MIB's own, checked against what the agent serves
//! for Puppet (`redis_snmp::metrics::puppet_objects()`,
//! `PUPPET_NOTIFICATIONS`). The rules that hold for both modules (every
//! served object at its OID with its type, the tables' INDEX, the
//! notifications and their OBJECTS, names, groups, smilint, net-snmp and
//! mib-rs) are tests/mib_modules.rs's; this program keeps what only this
//! module has:
//!
//! - every DESCRIPTION names the file and key its value comes from, says
//!   whether the object always has an instance, and explains each named
//!   number with Puppet's word;
//! - the module's DESCRIPTION documents the root and the files, and its
//!   nodes sit at the arcs the module was published with;
//! - a notification carries scalars, or one row of puppetEventTable;
//! - the OIDs the agent really builds from the Puppet runs in
//!   `tests/fixtures/puppet` (and made-up states beyond them) and from real
//!   events logs are instances of the module's objects, with the wire type
//!   and values the MIB allows, and rows numbered from 1.
//!
//! The tools come from the Debian packages smitools and snmp (a missing one
//! fails the test and names the package); the SMIv2 base modules from
//! `scripts/base-mibs.sh`. The loader and the shared rules are those of
//! `tests/mibtool`.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

mod mibtool;

use mibtool::rules::{instance_of, mentions, smi_label, Instance};
use mibtool::{repo_dir, Mib};
use redis_snmp::config::EventsConfig;
use redis_snmp::metrics::{
    puppet_objects, Layout, ObjectDef, PuppetCertificateField, PuppetEventField, PuppetField,
    Source, MAX_PUPPET_RESOURCES, PUPPET_CERTIFICATE_COLUMNS, PUPPET_EVENT_COLUMNS,
    PUPPET_EVENT_SCALARS, PUPPET_NOTIFICATIONS, PUPPET_RESOURCE_COLUMNS, PUPPET_RUN_SCALARS,
    PUPPET_SCALARS,
};
use redis_snmp::oid::Oid;
use redis_snmp::puppet::events::EventTable;
use redis_snmp::puppet::locks::parse_disabled_lock;
use redis_snmp::puppet::objects::puppet_part;
use redis_snmp::puppet::report::parse_report;
use redis_snmp::puppet::runs::RunHistory;
use redis_snmp::puppet::summary::parse_summary;
use redis_snmp::puppet::{FileStatus, PuppetState, RunLock};
use redis_snmp::smi::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The module under test.
const MODULE: &str = "PUPPET-AGENT-MIB";

fn root() -> Oid {
    mibtool::modules::puppet().root
}

fn is_scalar(o: &ObjectDef) -> bool {
    PUPPET_SCALARS
        .iter()
        .chain(PUPPET_RUN_SCALARS)
        .chain(PUPPET_EVENT_SCALARS)
        .any(|s| s.name == o.name)
}

/// The part the events log gives before any line: what its scalars serve
/// without data.
fn empty_events_part(layout: &Layout) -> Vec<(Oid, Value)> {
    EventTable::new(EventsConfig::default()).part(layout)
}

/// PUPPET-AGENT-MIB as libsmi reads it, dumped once for all tests.
fn mib() -> &'static Mib {
    Mib::load(MODULE)
}

// ---------------------------------------------------------------------------
// What an object's row in the catalogue says.

fn field(o: &ObjectDef) -> PuppetField {
    match o.source {
        Source::Puppet(f) => f,
        other => panic!("{}: a Puppet object with source {other:?}", o.name),
    }
}

// ---------------------------------------------------------------------------
// Descriptions.

const SUMMARY: &str = "last_run_summary.yaml";
const REPORT: &str = "last_run_report.yaml";
const DISABLED_LOCK: &str = "agent_disabled.lock";
const RUN_LOCK: &str = "agent_catalog_run.lock";

/// The files (and keys in them) an object's DESCRIPTION must name, as
/// `src/puppet/objects.rs` reads them.
fn sources(field: PuppetField) -> Vec<String> {
    let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    match field {
        PuppetField::LastRunTime | PuppetField::LastRunAge => s(&[SUMMARY, "time.last_run"]),
        PuppetField::Status => s(&[SUMMARY, REPORT, "status", "transaction_completed"]),
        PuppetField::ResourcesTotal => s(&[SUMMARY, "resources.total"]),
        PuppetField::ResourcesChanged => s(&[SUMMARY, "resources.changed"]),
        PuppetField::ResourcesFailed => s(&[SUMMARY, "resources.failed"]),
        PuppetField::ResourcesFailedToRestart => s(&[SUMMARY, "resources.failed_to_restart"]),
        PuppetField::ResourcesSkipped => s(&[SUMMARY, "resources.skipped"]),
        PuppetField::ResourcesOutOfSync => s(&[SUMMARY, "resources.out_of_sync"]),
        PuppetField::ResourcesRestarted => s(&[SUMMARY, "resources.restarted"]),
        PuppetField::ResourcesScheduled => s(&[SUMMARY, "resources.scheduled"]),
        PuppetField::ResourcesCorrective => s(&[SUMMARY, "resources.corrective_change"]),
        PuppetField::EventsTotal => s(&[SUMMARY, "events.total"]),
        PuppetField::EventsFailure => s(&[SUMMARY, "events.failure"]),
        PuppetField::EventsSuccess => s(&[SUMMARY, "events.success"]),
        PuppetField::ChangesTotal => s(&[SUMMARY, "changes.total"]),
        PuppetField::Phase(phase) => vec![SUMMARY.to_string(), format!("time.{phase}")],
        PuppetField::ConfigVersion => s(&[SUMMARY, "version.config"]),
        PuppetField::PuppetVersion => s(&[SUMMARY, "version.puppet"]),
        PuppetField::CachedCatalog => s(&[REPORT, "cached_catalog_status"]),
        PuppetField::Noop => s(&[REPORT, "noop"]),
        PuppetField::NoopPending => s(&[REPORT, "noop_pending"]),
        PuppetField::CorrectiveChange => s(&[REPORT, "corrective_change"]),
        PuppetField::RunMode => s(&[SUMMARY, "application.run_mode"]),
        PuppetField::FirstError => s(&[REPORT, "logs", "err"]),
        PuppetField::Disabled => s(&[DISABLED_LOCK]),
        PuppetField::DisabledMessage => s(&[DISABLED_LOCK, "disabled_message"]),
        PuppetField::RunInProgress => s(&[RUN_LOCK]),
        PuppetField::ReadError => s(&[SUMMARY, REPORT]),
        PuppetField::TransactionUuid => s(&[REPORT, "transaction_uuid"]),
        PuppetField::JobId => s(&[REPORT, "job_id", "--job-id"]),
        PuppetField::Role => s(&[
            "pp_role",
            "1.3.6.1.4.1.34380.1.1.13",
            "csr_attributes.yaml",
            "role_fact",
        ]),
        // The allowlist and where a value is read (the table's
        // DESCRIPTION says how).
        PuppetField::FactName => s(&["facts"]),
        PuppetField::FactValue => s(&["facts.d", "/proc"]),
        PuppetField::ResourceType => s(&[REPORT, "resource_statuses", "resource_type"]),
        PuppetField::ResourceTitle => s(&[REPORT, "resource_statuses", "title"]),
        PuppetField::ResourceState => s(&[REPORT, "resource_statuses"]),
        PuppetField::ResourceMessage => s(&[REPORT, "resource_statuses", "message"]),
        PuppetField::Events(f) => {
            let key = match f {
                PuppetEventField::Time => "time",
                PuppetEventField::Level => "level",
                PuppetEventField::ResourceType
                | PuppetEventField::Title
                | PuppetEventField::Property => "source",
                PuppetEventField::Message => "message",
                PuppetEventField::ConfigVersion | PuppetEventField::RunVersion => {
                    "Applying configuration version"
                }
                PuppetEventField::LogStatus
                | PuppetEventField::LogError
                | PuppetEventField::Seen
                | PuppetEventField::Refused
                | PuppetEventField::HeldBack => "events_log",
            };
            s(&[key])
        }
        // Successive runs: told apart by the summary's end time.
        PuppetField::RunsObserved
        | PuppetField::RunsLastHour
        | PuppetField::RunInterval
        | PuppetField::ConvergeRuns => s(&[SUMMARY, "time.last_run"]),
        PuppetField::ChangingRuns => s(&[SUMMARY, "time.last_run", "resources.changed"]),
        PuppetField::LoopResources | PuppetField::LoopResourceCount => {
            s(&[SUMMARY, REPORT, "resources.changed", "resource_statuses"])
        }
        // The files of Puppet's ssldir (the table's DESCRIPTION names
        // them) and what of each a column reads.
        PuppetField::Certificate(f) => match f {
            PuppetCertificateField::Kind => s(&["hostcert", "localcacert", "hostcrl"]),
            PuppetCertificateField::Path => s(&["certname", "certs"]),
            PuppetCertificateField::State => s(&["certificate_warning_days"]),
            PuppetCertificateField::NotAfter => s(&["notAfter", "nextUpdate"]),
            PuppetCertificateField::SecondsLeft => s(&["puppetCertificateNotAfter"]),
            PuppetCertificateField::Subject => s(&["subject", "issuer"]),
            PuppetCertificateField::Error => s(&["file"]),
        },
    }
}

#[test]
fn descriptions_name_the_source_and_when_there_is_no_instance() {
    let mib = mib();
    // What the agent serves when it knows nothing: those scalars always
    // have an instance.
    let layout = Layout::default_layout();
    let empty: BTreeSet<Oid> = puppet_part(&PuppetState::default(), &layout)
        .into_iter()
        .chain(empty_events_part(&layout))
        .map(|(oid, _)| oid)
        .collect();
    let mut problems = Vec::new();
    for o in puppet_objects() {
        let Some(node) = mib.nodes.get(o.name) else {
            continue; // reported by tests/mib_modules.rs
        };
        let description = node.description_words();
        let field = field(o);
        for word in sources(field) {
            if !mentions(&description, &word) {
                problems.push(format!("{}: the DESCRIPTION does not name {word}", o.name));
            }
        }
        if is_scalar(o) {
            let always = empty.contains(&layout.object_oid(o).child(&[0]).unwrap());
            let (want, other) = if always {
                ("This object always has an instance.", "No instance")
            } else {
                ("No instance", "always has an instance")
            };
            if !description.contains(want) || description.contains(other) {
                problems.push(format!(
                    "{}: the agent serves it {} data; the DESCRIPTION must say {want:?}",
                    o.name,
                    if always { "even without" } else { "only with" }
                ));
            }
        }
        if let Some(table) = o.enumeration {
            // Each named number is explained with the word Puppet writes
            // (or the rule the agent applies).
            for (word, number) in table {
                let label = format!("{}({number})", smi_label(word));
                if !description.contains(&label) && !mentions(&description, word) {
                    problems.push(format!(
                        "{}: the DESCRIPTION explains neither {label} nor {word}",
                        o.name
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The module's DESCRIPTION says that the root is the default, configurable
/// with `oid` in `[puppet]`, and where the values come from. (Its identity,
/// ORGANIZATION and LAST-UPDATED are checked with every module's in
/// tests/mib_modules.rs.)
#[test]
fn the_module_description_documents_the_root_and_the_files() {
    let module = mib().dump.get(MODULE).expect("module");
    let description = module
        .str("description")
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for word in ["[puppet]", "oid", "20267", "401", SUMMARY, REPORT] {
        assert!(
            description.contains(word),
            "the module DESCRIPTION must say that the root is the default, configurable \
             with oid in [puppet], and where values come from: no {word:?}"
        );
    }
}

// ---------------------------------------------------------------------------
// The tree and the notifications.

#[test]
fn the_nodes_sit_at_their_published_arcs() {
    let mib = mib();
    let root = root();
    let expect: [(&str, &str, &[u32]); 10] = [
        ("puppet", "node", &[]),
        ("puppetNotifications", "node", &[0]),
        ("puppetRun", "node", &[1]),
        ("puppetResourceTable", "table", &[2]),
        ("puppetResourceEntry", "row", &[2, 1]),
        ("puppetConformance", "node", &[3]),
        ("puppetCompliances", "node", &[3, 1]),
        ("puppetGroups", "node", &[3, 2]),
        ("puppetEventTable", "table", &[4]),
        ("puppetEventEntry", "row", &[4, 1]),
    ];
    let mut problems = Vec::new();
    for (name, kind, arcs) in expect {
        match mib.nodes.get(name) {
            Some(n) if n.oid == root.child(arcs).unwrap() && n.kind == kind => {}
            Some(n) => problems.push(format!(
                "{name}: a {} at {}, want a {kind} at {}",
                n.kind,
                n.oid,
                root.child(arcs).unwrap()
            )),
            None => problems.push(format!("{name} is missing")),
        }
    }
    // That everything else sits below the root in its place is checked with
    // every module's layout in tests/mib_modules.rs.
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The notifier sends each scalar with instance `.0`, and the columns of
/// puppetEventTable or puppetCertificateTable with the row's index: a
/// notification carries scalars, or one row of one table, never both.
#[test]
fn a_notification_carries_scalars_or_one_event_row() {
    let mut problems = Vec::new();
    for def in PUPPET_NOTIFICATIONS {
        let scalar = |o: &&str| puppet_objects().any(|s| s.name == *o && is_scalar(s));
        let event_column = |o: &&str| PUPPET_EVENT_COLUMNS.iter().any(|s| s.name == *o);
        let certificate_column = |o: &&str| PUPPET_CERTIFICATE_COLUMNS.iter().any(|s| s.name == *o);
        let names = def.object_names();
        if !(names.iter().all(scalar)
            || names.iter().all(event_column)
            || names.iter().all(certificate_column))
        {
            problems.push(format!(
                "{}: {:?} are not all scalars the agent serves, nor all columns of one table",
                def.name, def.objects
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------
// The OIDs the agent builds from real Puppet runs.

/// The runs in `tests/fixtures/puppet` that left a summary or a report,
/// read as the watcher reads them.
fn fixture_states() -> Vec<(String, PuppetState)> {
    let dir = repo_dir().join("tests/fixtures/puppet");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    let mut states = Vec::new();
    for case in cases {
        let read = |name: &str| std::fs::read(case.join(name)).ok();
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let summary = read("last_run_summary.yaml")
            .map(|b| parse_summary(&b).unwrap_or_else(|e| panic!("{name}: summary: {e}")));
        let report = read("last_run_report.yaml")
            .map(|b| parse_report(&b).unwrap_or_else(|e| panic!("{name}: report: {e}")));
        let disabled = read("agent_disabled.lock").map(|b| parse_disabled_lock(&b));
        if summary.is_none() && report.is_none() && disabled.is_none() {
            continue;
        }
        let status = |present: bool| {
            if present {
                FileStatus::Ok
            } else {
                FileStatus::Missing
            }
        };
        states.push((
            name,
            PuppetState {
                summary_status: status(summary.is_some()),
                report_status: status(report.is_some()),
                summary,
                report,
                disabled,
                ..PuppetState::default()
            },
        ));
    }
    states
}

/// States beyond the recorded runs, so that every object and every INDEX
/// value the agent can build is tried: nothing read; a summary alone and a
/// report alone; files that cannot be read; a run lock; an agent run with
/// the phases only a server-backed agent writes (the fixtures were made
/// offline); and a run with more noteworthy resources than the table holds.
fn made_up_states(recorded: &[(String, PuppetState)]) -> Vec<(String, PuppetState)> {
    let by_name = |name: &str| {
        recorded
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s.clone())
            .unwrap_or_else(|| panic!("fixture {name} is gone"))
    };
    let mut out = vec![("nothing read".to_string(), PuppetState::default())];

    let mut summary_only = by_name("c_failed");
    summary_only.report = None;
    out.push(("c_failed, summary only".into(), summary_only));
    let mut report_only = by_name("c_failed");
    report_only.summary = None;
    out.push(("c_failed, report only".into(), report_only));

    let mut unreadable = by_name("b_changed");
    unreadable.summary_status = FileStatus::Unreadable {
        error: "reading /var/cache/puppet/public/last_run_summary.yaml: \
                Permission denied (os error 13)"
            .into(),
        permission: true,
    };
    unreadable.report_status = FileStatus::Unreadable {
        error: "reading /var/cache/puppet/state/last_run_report.yaml: \
                Permission denied (os error 13)"
            .into(),
        permission: true,
    };
    unreadable.run_lock = Some(RunLock::from_content(
        std::process::id().to_string().as_bytes(),
    ));
    out.push(("b_changed, unreadable now, run lock".into(), unreadable));

    let dir = repo_dir().join("tests/fixtures/puppet/agent_a1_first_run");
    let summary = std::fs::read_to_string(dir.join("last_run_summary.yaml")).unwrap();
    let server_phases = "time:\n  fact_generation: 0.61\n  plugin_sync: 1.25\n  \
                         node_retrieval: 0.0004\n";
    assert!(
        summary.contains("\ntime:\n"),
        "agent_a1's summary has a time: section"
    );
    let with_server = summary.replacen("time:\n", server_phases, 1);
    let mut served = by_name("agent_a1_first_run");
    served.summary = Some(parse_summary(with_server.as_bytes()).expect("summary with phases"));
    out.push(("agent_a1 with a server's phases".into(), served));

    let mut crowded = by_name("c_failed");
    let report = crowded.report.as_mut().expect("c_failed has a report");
    let listed = report.resources.listed.clone();
    assert!(!listed.is_empty(), "c_failed lists resources");
    while report.resources.listed.len() <= MAX_PUPPET_RESOURCES + 20 {
        report.resources.listed.extend(listed.iter().cloned());
    }
    out.push(("c_failed with over 100 listed resources".into(), crowded));

    // Runs one after the other, as the watcher counts them: b_changed three
    // times in a row, a minute apart (report and summary moved together, so
    // they stay paired): a loop, with the interval between runs.
    let mut history = RunHistory::new(3);
    let mut looping = by_name("b_changed");
    for _ in 0..3 {
        looping.summary.as_mut().unwrap().time.last_run = looping.last_run().map(|t| t + 60);
        if let Some(t) = looping.report.as_mut().unwrap().time.as_mut() {
            t.unix_seconds += 60;
        }
        assert!(looping.matching_report().is_some());
        history.observe(&looping);
    }
    looping.runs = history.trend(looping.last_run().unwrap());
    assert!(looping.runs.not_converging() && looping.runs.interval == Some(60));
    out.push(("b_changed three times in a row".into(), looping));
    out
}

#[test]
fn the_oids_the_agent_builds_from_real_runs_are_instances_of_the_mib() {
    let mib = mib();
    let layout = Layout::default_layout();
    let recorded = fixture_states();
    assert!(recorded.len() >= 12, "fixtures: {}", recorded.len());
    let mut states = recorded.clone();
    states.extend(made_up_states(&recorded));
    // Facts served: the first and the last row puppetFactIndex allows,
    // a value that is not ASCII.
    let mut with_facts = recorded[0].1.clone();
    with_facts.facts.served = vec![
        (1, "hostname".into(), "web1".into()),
        (32, "zone".into(), "zoné".into()),
    ];
    states.push(("facts served".into(), with_facts));

    let defs: Vec<(Oid, &ObjectDef)> = puppet_objects()
        .map(|o| (layout.object_oid(o), o))
        .collect();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut problems = Vec::new();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut max_row = 0;
    for (case, state) in &states {
        let part = puppet_part(state, &layout);
        let mut rows: BTreeMap<u32, usize> = BTreeMap::new();
        for (oid, value) in &part {
            let Some((def_oid, def)) = defs.iter().find(|(d, _)| oid.starts_with(d)) else {
                problems.push(format!("{case}: {oid}: no served object holds it"));
                continue;
            };
            seen.insert(def.name);
            // Its wire type, a value its MIB type allows, and `.0` or a
            // puppetResourceIndex (tests/mibtool/rules.rs).
            match instance_of(mib, def, def_oid, oid, &value.resolve(now)) {
                Ok(Instance::Scalar) => {}
                Ok(Instance::Row { row, first }) if row.name == "puppetResourceEntry" => {
                    *rows.entry(first).or_default() += 1;
                    max_row = max_row.max(first);
                }
                Ok(Instance::Row { row, .. }) if row.name == "puppetFactEntry" => {}
                Ok(Instance::Row { row, .. }) => {
                    problems.push(format!("{case}: {oid}: a row of {}", row.name))
                }
                Err(e) => problems.push(format!("{case}: {oid} ({}): {e}", def.name)),
            }
        }
        // Rows are numbered from 1 without gaps, each with every column.
        for (n, (row, columns)) in rows.iter().enumerate() {
            if *row != n as u32 + 1 || *columns != PUPPET_RESOURCE_COLUMNS.len() {
                problems.push(format!("{case}: row {row} has {columns} columns"));
            }
        }
    }
    assert_eq!(
        max_row as usize, MAX_PUPPET_RESOURCES,
        "the crowded run fills the table"
    );
    // The events log's objects are built from its lines, below.
    let never: Vec<&str> = puppet_objects()
        .filter(|o| {
            !matches!(
                field(o),
                PuppetField::Events(_) | PuppetField::Certificate(_)
            )
        })
        .map(|o| o.name)
        .filter(|n| !seen.contains(n))
        .collect();
    assert!(never.is_empty(), "never built from any state: {never:?}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------
// The OIDs the agent builds from real events logs.

#[test]
fn the_oids_the_agent_builds_from_real_logs_are_instances_of_the_mib() {
    let mib = mib();
    let layout = Layout::default_layout();
    let mut problems = Vec::new();
    // Real logs through the table, 5 rows so rows age out too.
    let defs: Vec<(Oid, &ObjectDef)> = PUPPET_EVENT_SCALARS
        .iter()
        .chain(PUPPET_EVENT_COLUMNS)
        .map(|o| (layout.object_oid(o), o))
        .collect();
    let mut table = EventTable::new(EventsConfig {
        rows: 5,
        ..EventsConfig::default()
    });
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let dir = repo_dir().join("tests/fixtures/puppet/logdest");
    for case in [
        "log.jsonl",
        "apply_compile_error.jsonl",
        "agent_catalog_failure_simulated.jsonl",
    ] {
        let bytes = std::fs::read(dir.join(case)).unwrap();
        let read = redis_snmp::puppet::tail::TailRead {
            lines: bytes
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .map(<[u8]>::to_vec)
                .collect(),
            ..Default::default()
        };
        for reading in table.readings(&read, &layout) {
            for (oid, value) in &reading.parts[0].1 {
                let Some((def_oid, def)) = defs.iter().find(|(d, _)| oid.starts_with(d)) else {
                    problems.push(format!("{case}: {oid}: no events log object holds it"));
                    continue;
                };
                seen.insert(def.name);
                // Its wire type, a named number, and `.0` or a
                // puppetEventIndex (tests/mibtool/rules.rs).
                match instance_of(mib, def, def_oid, oid, value) {
                    Ok(Instance::Scalar) => {}
                    Ok(Instance::Row { row, .. }) if row.name == "puppetEventEntry" => {}
                    Ok(Instance::Row { row, .. }) => {
                        problems.push(format!("{case}: {oid}: a row of {}", row.name))
                    }
                    Err(e) => problems.push(format!("{case}: {oid} ({}): {e}", def.name)),
                }
            }
        }
    }
    let never: Vec<&str> = defs
        .iter()
        .map(|(_, d)| d.name)
        .filter(|n| !seen.contains(n))
        .collect();
    assert!(
        never.is_empty(),
        "never built from the real logs: {never:?}"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
