//! `mibs/PUPPET-AGENT-MIB.txt` against what the agent serves for Puppet
//! (`redis_snmp::metrics::puppet_objects()`, `PUPPET_NOTIFICATIONS` of
//! `redis_snmp::notify`), and against the tools managers use.
//!
//! - libsmi's `smidump -f python` must find every served object at the same
//!   OID below `DEFAULT_PUPPET_ROOT`, read-only, with a type that matches
//!   what the agent sends (named numbers and labels included), with a
//!   DESCRIPTION that names the file and key it comes from and says when it
//!   has no instance, and must find no readable object the agent does not
//!   serve.
//! - `puppetResourceTable`'s INDEX is what the agent builds (1..100).
//! - Every notification of the agent is a NOTIFICATION-TYPE at `root.0.N`
//!   with the same OBJECTS in the same order, and the other way round.
//! - `smilint -l 6` prints nothing (no message is allowed).
//! - net-snmp's `snmptranslate` loads the module without a complaint and
//!   resolves every object and notification to the agent's OID.
//! - The OIDs the agent really builds from the Puppet runs in
//!   `tests/fixtures/puppet` are instances of the module's objects, with
//!   the wire type and values the MIB allows.
//!
//! The tools come from the Debian packages smitools and snmp (a missing one
//! fails the test and names the package); the SMIv2 base modules from
//! `scripts/base-mibs.sh`. The tools, the reader of smidump's Python output
//! and the module loader (`Mib::load`, shared with tests/mib_table.rs) are
//! those of `tests/mibtool`; what is specific to this module is here.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

mod mibtool;

use mibtool::{
    mib_file, named_numbers, parse_tp, ranges, repo_dir, snmptranslate, text, Mib, ResolvedType,
    SMILINT,
};
use redis_snmp::config::EventsConfig;
use redis_snmp::metrics::PuppetEventField;
use redis_snmp::metrics::{all_notifications, Mib as NotifyMib, PUPPET_NOTIFICATIONS};
use redis_snmp::metrics::{
    puppet_objects, redis_objects, Layout, NotificationDef, ObjectDef, PuppetField, Source,
    CACHED_CATALOG, DEFAULT_PUPPET_ROOT, EVENTS_LOG_STATUS, EVENT_LEVELS, MAX_PUPPET_RESOURCES,
    PUPPET_EVENT_COLUMNS, PUPPET_EVENT_SCALARS, PUPPET_RESOURCE_COLUMNS, PUPPET_RUN_SCALARS,
    PUPPET_SCALARS, PUPPET_STATUS, RESOURCE_STATES, RUN_MODES,
};
use redis_snmp::oid::Oid;
use redis_snmp::puppet::events::EventTable;
use redis_snmp::puppet::locks::parse_disabled_lock;
use redis_snmp::puppet::objects::puppet_part;
use redis_snmp::puppet::report::parse_report;
use redis_snmp::puppet::runs::RunHistory;
use redis_snmp::puppet::summary::parse_summary;
use redis_snmp::puppet::{FileStatus, PuppetState, RunLock};
use redis_snmp::smi::{Syntax, Value, WireType};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The module under test.
const MODULE: &str = "PUPPET-AGENT-MIB";

fn root() -> Oid {
    DEFAULT_PUPPET_ROOT.parse().unwrap()
}

fn is_scalar(o: &ObjectDef) -> bool {
    PUPPET_SCALARS
        .iter()
        .chain(PUPPET_RUN_SCALARS)
        .chain(PUPPET_EVENT_SCALARS)
        .any(|s| s.name == o.name)
}

fn is_event_column(o: &ObjectDef) -> bool {
    PUPPET_EVENT_COLUMNS.iter().any(|c| c.name == o.name)
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
// What the MIB must say about an object, from its row in the catalogue (src/metrics/).

/// The table of named numbers an enumerated object is served with.
fn enumeration(field: PuppetField) -> Option<&'static [(&'static str, i32)]> {
    match field {
        PuppetField::Status => Some(PUPPET_STATUS),
        PuppetField::CachedCatalog => Some(CACHED_CATALOG),
        PuppetField::RunMode => Some(RUN_MODES),
        PuppetField::ResourceState => Some(RESOURCE_STATES),
        PuppetField::Events(PuppetEventField::LogStatus) => Some(EVENTS_LOG_STATUS),
        PuppetField::Events(PuppetEventField::Level) => Some(EVENT_LEVELS),
        _ => None,
    }
}

fn field(o: &ObjectDef) -> PuppetField {
    match o.source {
        Source::Puppet(f) => f,
        other => panic!("{}: a Puppet object with source {other:?}", o.name),
    }
}

/// The SMI label for a Puppet word: `failed_to_restart` → `failedToRestart`.
fn smi_label(word: &str) -> String {
    let mut label = String::new();
    let mut upper = false;
    for c in word.chars() {
        if c == '_' || c == '-' {
            upper = true;
        } else if upper {
            label.extend(c.to_uppercase());
            upper = false;
        } else {
            label.push(c);
        }
    }
    label
}

/// RFC 2578 section 3.1: a descriptor starts with a lower-case letter and
/// holds letters and digits (a hyphen is not allowed in SMIv2 object
/// names); more than 32 characters is discouraged (smilint
/// `namelength-32`), and 64 is the limit.
fn descriptor_problem(name: &str) -> Option<String> {
    let first_lower = name.chars().next().is_some_and(|c| c.is_ascii_lowercase());
    if !first_lower || !name.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Some(format!("{name:?} is not an SMIv2 descriptor"));
    }
    if name.len() > 32 {
        return Some(format!("{name} is {} characters long, over 32", name.len()));
    }
    None
}

fn check_type(syntax: Syntax, t: &ResolvedType) -> Result<(), String> {
    let (ok, want) = match syntax {
        Syntax::Gauge32 => (
            t.basetype == "Unsigned32" && t.derives_from("SNMPv2-SMI::Gauge32"),
            "Gauge32",
        ),
        Syntax::Counter32 => (
            t.basetype == "Unsigned32" && t.derives_from("SNMPv2-SMI::Counter32"),
            "Counter32",
        ),
        Syntax::Enum => (
            t.basetype == "Enumeration" && t.names.is_empty(),
            "an INTEGER with named numbers of its own",
        ),
        Syntax::TruthValue => (
            t.basetype == "Enumeration" && t.derives_from("SNMPv2-TC::TruthValue"),
            "SNMPv2-TC's TruthValue",
        ),
        Syntax::DisplayString => (
            t.basetype == "OctetString" && t.derives_from("SNMPv2-TC::DisplayString"),
            "DisplayString",
        ),
        other => {
            return Err(format!(
                "{other:?}: this test does not know Puppet objects of this syntax yet; \
                 teach check_type and net_snmp_label"
            ))
        }
    };
    if ok {
        Ok(())
    } else {
        Err(format!("the MIB must say {want}; it says {t:?}"))
    }
}

#[test]
fn every_served_object_is_in_the_mib_with_its_oid_kind_access_and_type() {
    let mib = mib();
    let root = root();
    let layout = Layout::default_layout();
    assert_eq!(
        layout.puppet().clone(),
        root,
        "the default layout's Puppet root"
    );
    let mut problems = Vec::new();
    let mut count = 0;
    for o in puppet_objects() {
        count += 1;
        let Some(node) = mib.nodes.get(o.name) else {
            problems.push(format!("{}: not in {MODULE}", o.name));
            continue;
        };
        let oid = layout.object_oid(o);
        if node.oid != oid || oid != root.child(o.arcs).unwrap() {
            problems.push(format!(
                "{}: MIB says {}, agent serves {oid}",
                o.name, node.oid
            ));
        }
        let (kind, home) = if is_scalar(o) {
            ("scalar", root.child(&[1]).unwrap())
        } else if is_event_column(o) {
            ("column", root.child(&[4, 1]).unwrap())
        } else {
            ("column", root.child(&[2, 1]).unwrap())
        };
        if node.kind != kind || node.oid.parent().as_ref() != Some(&home) {
            problems.push(format!(
                "{}: a {} at {}, want a {kind} under {home}",
                o.name, node.kind, node.oid
            ));
        }
        if node.access.as_deref() != Some("readonly") {
            problems.push(format!(
                "{}: access {:?}, not read-only",
                o.name, node.access
            ));
        }
        if node.status.as_deref() != Some("current") {
            problems.push(format!("{}: status {:?}", o.name, node.status));
        }
        let Some(ty) = node.syntax.as_ref() else {
            problems.push(format!("{}: no SYNTAX", o.name));
            continue;
        };
        match mib.resolve(ty) {
            Ok(t) => {
                if let Err(e) = check_type(o.syntax, &t) {
                    problems.push(format!("{}: served as {:?}; {e}", o.name, o.syntax));
                }
            }
            Err(e) => problems.push(format!("{}: {e}", o.name)),
        }
        let table = enumeration(field(o));
        match (o.syntax, table) {
            (Syntax::Enum, Some(table)) => {
                // The same numbers, each labelled after the agent's word.
                let mut want: Vec<(String, i64)> = table
                    .iter()
                    .map(|(w, n)| (smi_label(w), i64::from(*n)))
                    .collect();
                let mut got: Vec<(String, i64)> = named_numbers(ty)
                    .into_iter()
                    .map(|(l, n)| (l.to_string(), n))
                    .collect();
                want.sort_by_key(|(_, n)| *n);
                got.sort_by_key(|(_, n)| *n);
                if want != got {
                    problems.push(format!(
                        "{}: the MIB names {got:?}, the agent serves {table:?} = {want:?}",
                        o.name
                    ));
                }
                for (label, _) in &want {
                    if let Some(p) = descriptor_problem(label) {
                        problems.push(format!("{}: label {p}", o.name));
                    }
                }
            }
            (Syntax::Enum, None) => problems.push(format!(
                "{}: an Enum whose table of numbers this test does not know",
                o.name
            )),
            (_, Some(_)) => problems.push(format!("{}: a table of numbers, not an Enum", o.name)),
            (_, None) => {}
        }
    }
    assert_eq!(
        count,
        PUPPET_SCALARS.len()
            + PUPPET_RUN_SCALARS.len()
            + PUPPET_RESOURCE_COLUMNS.len()
            + PUPPET_EVENT_SCALARS.len()
            + PUPPET_EVENT_COLUMNS.len(),
        "puppet_objects() is the scalars, the resource columns and the events log's objects"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_mib_defines_no_readable_object_the_agent_does_not_serve() {
    let served: BTreeSet<&str> = puppet_objects().map(|o| o.name).collect();
    let unserved: Vec<String> = mib()
        .nodes
        .values()
        .filter(|n| n.is_readable() && !served.contains(n.name.as_str()))
        .map(|n| format!("{} ({}, {:?})", n.name, n.oid, n.access))
        .collect();
    assert!(
        unserved.is_empty(),
        "{MODULE} defines objects the agent does not serve (add them to \
         src/metrics/ or remove them from the MIB): {unserved:?}"
    );
}

/// The names the agent uses are good SMI descriptors, do not clash with
/// each other or with REDIS-SERVER-MIB's (the notifier looks objects up by
/// name across both modules; the catalogue's names and the modules' own),
/// and no two names of the module differ only in case.
#[test]
fn the_names_are_valid_and_distinct() {
    let mut problems = Vec::new();
    let agent_names: Vec<&str> = puppet_objects()
        .map(|o| o.name)
        .chain(PUPPET_NOTIFICATIONS.iter().map(|n| n.name))
        .collect();
    for name in &agent_names {
        problems.extend(descriptor_problem(name));
        if !name.starts_with("puppet") {
            problems.push(format!("{name}: not in the module's puppet* name space"));
        }
    }
    let redis: BTreeSet<&str> = redis_objects()
        .map(|o| o.name)
        .chain(
            all_notifications()
                .filter(|n| n.mib == NotifyMib::Redis)
                .map(|n| n.name),
        )
        .collect();
    for name in &agent_names {
        if redis.contains(name) {
            problems.push(format!("{name}: also a REDIS-SERVER-MIB name"));
        }
    }
    // And in the modules themselves: a manager loads both, and a descriptor
    // both define is ambiguous to it. RFC 2578 section 3.1 asks unique
    // descriptors within a module and across "standard" modules only; for
    // our two enterprise modules it is ours to keep.
    let redis_mib = Mib::load("REDIS-SERVER-MIB");
    for name in mib().nodes.keys() {
        if redis_mib.nodes.contains_key(name) {
            problems.push(format!("{name}: also defined in REDIS-SERVER-MIB"));
        }
    }
    let mut by_case: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for name in mib().nodes.keys() {
        by_case.entry(name.to_lowercase()).or_default().push(name);
        problems.extend(descriptor_problem(name).map(|p| format!("in the MIB: {p}")));
    }
    for names in by_case.values().filter(|v| v.len() > 1) {
        problems.push(format!("{names:?} differ only in case"));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------
// Descriptions and units.

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
    }
}

/// Whether `text` holds `word` on its own (`noop` is not in `noop_pending`).
fn mentions(text: &str, word: &str) -> bool {
    let part_of_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(part_of_name) && !after.is_some_and(part_of_name)
    })
}

#[test]
fn descriptions_name_the_source_and_when_there_is_no_instance_and_units_fit() {
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
            continue; // reported by the test above
        };
        let description = node.description_words();
        let field = field(o);
        for word in sources(field) {
            if !mentions(&description, &word) {
                problems.push(format!("{}: the DESCRIPTION does not name {word}", o.name));
            }
        }
        if node.units.as_deref() != o.units {
            problems.push(format!(
                "{}: UNITS {:?} in the MIB, {:?} in the catalogue (src/metrics/)",
                o.name, node.units, o.units
            ));
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
        if let Some(table) = enumeration(field) {
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

#[test]
fn the_module_identity_documents_the_root_and_its_dates() {
    let mib = mib();
    let module = mib.dump.get(MODULE).expect("module");
    assert_eq!(module.str("identity node"), Some("puppet"));
    assert_eq!(mib.nodes["puppet"].oid, root());
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
    let organization = module.str("organization").unwrap_or_default();
    assert_eq!(
        organization, "Days of Wonder, Inc.",
        "as in REDIS-SERVER-MIB"
    );
    // LAST-UPDATED is the newest REVISION (smidump does not show it).
    let revisions = mib.revisions();
    let newest = *revisions.iter().max().expect("a REVISION");
    let source = std::fs::read_to_string(mib_file(MODULE)).unwrap();
    let last_updated = source
        .lines()
        .find_map(|l| l.trim().strip_prefix("LAST-UPDATED"))
        .map(|v| v.trim().trim_matches('"'))
        .expect("LAST-UPDATED");
    assert!(
        last_updated.len() == 13 && last_updated.ends_with('Z'),
        "LAST-UPDATED {last_updated}: want YYYYMMDDHHMMZ"
    );
    let as_date = format!(
        "{}-{}-{} {}:{}",
        &last_updated[..4],
        &last_updated[4..6],
        &last_updated[6..8],
        &last_updated[8..10],
        &last_updated[10..12]
    );
    assert_eq!(
        as_date, newest,
        "LAST-UPDATED {last_updated} vs {revisions:?}"
    );
}

// ---------------------------------------------------------------------------
// The tree, the table and its index.

#[test]
fn the_layout_is_notifications_scalars_table_conformance() {
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
    // Everything the module registers is below its root, and in its place.
    for (name, n) in &mib.nodes {
        if !n.oid.starts_with(&root) {
            problems.push(format!("{name} at {} is outside the module", n.oid));
            continue;
        }
        let first = n.oid.as_slice().get(root.len()).copied();
        let place = match n.kind.as_str() {
            "notification" => first == Some(0) && n.oid.len() == root.len() + 2,
            "scalar" => first == Some(1),
            "table" | "row" | "column" => first == Some(2) || first == Some(4),
            "group" => n.oid.parent() == Some(root.child(&[3, 2]).unwrap()),
            "compliance" => n.oid.parent() == Some(root.child(&[3, 1]).unwrap()),
            _ => true,
        };
        if !place {
            problems.push(format!("{name}: a {} at {}", n.kind, n.oid));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_resource_table_is_indexed_as_the_agent_builds_it() {
    let mib = mib();
    let root = root();
    let entry_oid = root.child(&[2, 1]).unwrap();
    let mut problems = Vec::new();
    let entry = &mib.nodes["puppetResourceEntry"];
    if entry.index != ["puppetResourceIndex"] || entry.implied || entry.augments.is_some() {
        problems.push(format!(
            "puppetResourceEntry: INDEX {:?} (IMPLIED: {}, AUGMENTS {:?}), the agent builds \
             INDEX {{ puppetResourceIndex }}",
            entry.index, entry.implied, entry.augments
        ));
    }
    // The index: column 1, not-accessible, Integer32 (1..100).
    match mib.nodes.get("puppetResourceIndex") {
        None => problems.push("puppetResourceIndex is missing".into()),
        Some(ix) => {
            if ix.oid != entry_oid.child(&[1]).unwrap() || ix.kind != "column" {
                problems.push(format!("puppetResourceIndex: a {} at {}", ix.kind, ix.oid));
            }
            if ix.access.as_deref() != Some("noaccess") {
                problems.push(format!("puppetResourceIndex: access {:?}", ix.access));
            }
            let ty = ix.syntax.as_ref().expect("SYNTAX");
            let t = mib.resolve(ty).unwrap();
            let max = MAX_PUPPET_RESOURCES as i64;
            if t.basetype != "Integer32"
                || !named_numbers(ty).is_empty()
                || ranges(ty) != [(1, max)]
            {
                problems.push(format!(
                    "puppetResourceIndex: want Integer32 (1..{max}), the MIB says {t:?} {:?}",
                    ranges(ty)
                ));
            }
        }
    }
    // Every column of the entry is the index or served; every served
    // column is in the entry.
    let served: BTreeSet<&str> = PUPPET_RESOURCE_COLUMNS.iter().map(|c| c.name).collect();
    let columns: BTreeSet<&str> = mib
        .nodes
        .iter()
        .filter(|(_, n)| n.oid.parent().as_ref() == Some(&entry_oid))
        .map(|(name, _)| name.as_str())
        .filter(|name| *name != "puppetResourceIndex")
        .collect();
    if columns != served {
        problems.push(format!(
            "columns of puppetResourceEntry {columns:?}, served {served:?}"
        ));
    }
    for c in PUPPET_RESOURCE_COLUMNS {
        if c.arcs.len() != 3 || c.arcs[..2] != [2, 1] || c.arcs[2] < 2 {
            problems.push(format!(
                "{}: arcs {:?}, not a column after the index",
                c.name, c.arcs
            ));
        }
    }
    // The only row of the module.
    let rows: Vec<&str> = mib
        .nodes
        .iter()
        .filter(|(_, n)| n.kind == "row")
        .map(|(name, _)| name.as_str())
        .collect();
    if rows != ["puppetEventEntry", "puppetResourceEntry"] {
        problems.push(format!("rows of the module: {rows:?}"));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------
// Notifications and conformance.

#[test]
fn notifications_are_the_agents_with_the_same_objects_in_order() {
    let mib = mib();
    let root = root();
    let mut problems = Vec::new();
    let mut numbers = BTreeSet::new();
    for def in PUPPET_NOTIFICATIONS {
        if def.mib != NotifyMib::Puppet {
            problems.push(format!("{}: not marked Mib::Puppet", def.name));
        }
        if !numbers.insert(def.number) {
            problems.push(format!("{}: number {} twice", def.name, def.number));
        }
        let Some(node) = mib.nodes.get(def.name) else {
            problems.push(format!("{}: not in {MODULE}", def.name));
            continue;
        };
        let oid = root.child(&[0, def.number]).unwrap();
        if node.kind != "notification" || node.oid != oid {
            problems.push(format!(
                "{}: a {} at {}, the agent sends it as {oid}",
                def.name, node.kind, node.oid
            ));
        }
        let objects = def.object_names();
        if node.objects != objects {
            problems.push(format!(
                "{}: OBJECTS {:?}, the agent sends {objects:?}",
                def.name, node.objects
            ));
        }
        if node.status.as_deref() != Some("current") || node.description_words().is_empty() {
            problems.push(format!(
                "{}: status {:?} or no DESCRIPTION",
                def.name, node.status
            ));
        }
        // The notifier sends each scalar with instance .0, and the columns
        // of puppetEventTable with the row's index: a notification carries
        // scalars, or one row of that table.
        let scalar = |o: &&str| {
            PUPPET_SCALARS
                .iter()
                .chain(PUPPET_RUN_SCALARS)
                .chain(PUPPET_EVENT_SCALARS)
                .any(|s| s.name == *o)
        };
        let event_column = |o: &&str| PUPPET_EVENT_COLUMNS.iter().any(|s| s.name == *o);
        if !(objects.iter().all(scalar) || objects.iter().all(event_column)) {
            problems.push(format!(
                "{}: {objects:?} are not all scalars the agent serves, nor all columns of puppetEventTable",
                def.name
            ));
        }
    }
    for (name, node) in mib.nodes.iter().filter(|(_, n)| n.kind == "notification") {
        if !PUPPET_NOTIFICATIONS.iter().any(|d| d.name == name) {
            problems.push(format!("{name} ({}): the agent never sends it", node.oid));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Whether a notification is about the events log (the MIB's
/// `puppetEventNotificationGroup`): every object it carries is one of the
/// log's.
fn of_events_log(def: &NotificationDef) -> bool {
    def.objects
        .iter()
        .all(|c| matches!(c.object.source, Source::Puppet(PuppetField::Events(_))))
}

#[test]
fn groups_and_a_compliance_statement_cover_everything() {
    let mib = mib();
    let groups: BTreeMap<&str, BTreeSet<&str>> = mib
        .groups()
        .into_iter()
        .map(|(name, members)| (name, members.into_iter().collect()))
        .collect();
    let scalars: BTreeSet<&str> = PUPPET_SCALARS
        .iter()
        .chain(PUPPET_RUN_SCALARS)
        .map(|o| o.name)
        .collect();
    let columns: BTreeSet<&str> = PUPPET_RESOURCE_COLUMNS.iter().map(|o| o.name).collect();
    let notifications: BTreeSet<&str> = PUPPET_NOTIFICATIONS
        .iter()
        .filter(|n| !of_events_log(n))
        .map(|n| n.name)
        .collect();
    let events: BTreeSet<&str> = PUPPET_EVENT_SCALARS
        .iter()
        .chain(PUPPET_EVENT_COLUMNS)
        .map(|o| o.name)
        .collect();
    let event_notifications: BTreeSet<&str> = PUPPET_NOTIFICATIONS
        .iter()
        .filter(|n| of_events_log(n))
        .map(|n| n.name)
        .collect();
    let mut problems = Vec::new();
    // Each object in exactly one group, each group of one kind only (the
    // module grows by new groups, as RFC 2580 section 3 wants existing
    // groups left alone), and every group mandatory below.
    let mut covering = Vec::new();
    for (what, want) in [
        ("scalars", &scalars),
        ("resource table columns", &columns),
        ("notifications", &notifications),
        ("events log objects", &events),
        ("events log notifications", &event_notifications),
    ] {
        let matching: Vec<&str> = groups
            .iter()
            .filter(|(_, members)| !members.is_empty() && members.is_subset(want))
            .map(|(name, _)| *name)
            .collect();
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        for g in &matching {
            for m in &groups[g] {
                if !seen.insert(m) {
                    problems.push(format!("{m} is in more than one group of {what}"));
                }
            }
        }
        if &seen != want {
            problems.push(format!(
                "the groups {matching:?} hold {seen:?}, want exactly the {what} {want:?}"
            ));
        }
        covering.extend(matching);
    }
    if groups.len() != covering.len() {
        problems.push(format!(
            "groups {:?}, want only {covering:?}: a group mixes kinds or holds another's",
            groups.keys()
        ));
    }
    for name in &covering {
        if mib.nodes[*name].status.as_deref() != Some("current") {
            problems.push(format!("{name} is not current"));
        }
    }
    let compliant: Vec<&str> = mib
        .compliances()
        .into_iter()
        .filter(|(_, (status, mandatory))| {
            *status == "current" && covering.iter().all(|g| mandatory.contains(g))
        })
        .map(|(name, _)| name)
        .collect();
    if compliant.is_empty() {
        problems.push(format!(
            "no current MODULE-COMPLIANCE makes {covering:?} mandatory"
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------
// smilint.

/// smilint messages accepted in `mibs/PUPPET-AGENT-MIB.txt`: the error
/// name smilint prints in braces (`-m`), a piece of the message, and why
/// it stays. None so far; an entry here must also be explained in the
/// PUPPET-AGENT-MIB section of `mibs/README.md`.
const SMILINT_ALLOWED: &[(&str, &str, &str)] = &[];

#[test]
fn smilint_reports_nothing() {
    let out = SMILINT.run_libsmi(MODULE, &["-l", "6", "-m", "-s"]);
    assert!(
        out.status.code().is_some(),
        "smilint died: {}\n{}",
        out.status,
        text(&out.stderr)
    );
    let all = text(&out.stdout) + &text(&out.stderr);
    let unexpected: Vec<&str> = all
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter(|l| {
            !SMILINT_ALLOWED
                .iter()
                .any(|(error, piece, _)| l.contains(&format!("{{{error}}}")) && l.contains(piece))
        })
        .collect();
    assert!(
        unexpected.is_empty() && out.status.success(),
        "smilint -l 6 on {} ({}):\n{}",
        mib_file(MODULE).display(),
        out.status,
        unexpected.join("\n")
    );
    let readme = std::fs::read_to_string(repo_dir().join("mibs/README.md")).unwrap();
    let section = readme
        .split_once("## PUPPET-AGENT-MIB")
        .map(|(_, s)| s)
        .expect("mibs/README.md has a PUPPET-AGENT-MIB section");
    for (error, _, why) in SMILINT_ALLOWED {
        assert!(!why.is_empty(), "{{{error}}} needs a reason");
        assert!(
            section.contains(&format!("{{{error}}}")),
            "the PUPPET-AGENT-MIB section of mibs/README.md does not explain {{{error}}}"
        );
    }
}

// ---------------------------------------------------------------------------
// net-snmp.

/// The `-Tp` type label net-snmp decodes a value with.
fn net_snmp_label(syntax: Syntax) -> &'static str {
    match syntax {
        Syntax::Enum | Syntax::TruthValue => "EnumVal",
        other => match other.wire_type() {
            WireType::Integer => "INTEGER",
            WireType::OctetString => "String",
            WireType::ObjectIdentifier => "ObjID",
            WireType::IpAddress => "IpAddr",
            WireType::Counter32 => "Counter",
            WireType::Gauge32 => "Gauge",
            WireType::TimeTicks => "TimeTicks",
            WireType::Opaque => "Opaque",
            WireType::Counter64 => "Counter64",
        },
    }
}

#[test]
fn net_snmp_loads_the_module_and_resolves_every_object() {
    let root = root();
    let (out, complaints) = snmptranslate(MODULE, &["-Tp", &root.to_string()]);
    assert!(
        out.status.success() && complaints.is_empty(),
        "snmptranslate -Tp {root} ({}):\n{}",
        out.status,
        complaints.join("\n")
    );
    let tree = text(&out.stdout);
    assert!(tree.starts_with("+--puppet(401)"), "{tree}");
    let nodes = parse_tp(&tree);

    let mut problems = Vec::new();
    for o in puppet_objects() {
        let Some(node) = nodes.get(o.name) else {
            problems.push(format!("{}: not in snmptranslate -Tp", o.name));
            continue;
        };
        if node.access != "-R--" || node.label != net_snmp_label(o.syntax) {
            problems.push(format!(
                "{}: net-snmp sees {} {}, the agent sends {:?} read-only",
                o.name,
                node.access,
                node.label,
                o.syntax.wire_type()
            ));
        }
        let values = match o.syntax {
            Syntax::TruthValue => Some("true(1), false(2)".to_string()),
            Syntax::Enum => enumeration(field(o)).map(|table| {
                table
                    .iter()
                    .map(|(w, n)| format!("{}({n})", smi_label(w)))
                    .collect::<Vec<_>>()
                    .join(", ")
            }),
            _ => None,
        };
        if node.values.map(str::to_string) != values {
            problems.push(format!(
                "{}: net-snmp values {:?}, want {values:?}",
                o.name, node.values
            ));
        }
        let convention = match o.syntax {
            Syntax::TruthValue => Some("TruthValue"),
            Syntax::DisplayString => Some("DisplayString"),
            _ => None,
        };
        if node.convention != convention {
            problems.push(format!(
                "{}: net-snmp convention {:?}, want {convention:?}",
                o.name, node.convention
            ));
        }
    }
    match nodes.get("puppetResourceEntry") {
        Some(entry) if entry.index == Some("puppetResourceIndex") => {}
        other => problems.push(format!("puppetResourceEntry in net-snmp: {other:?}")),
    }
    let served: BTreeSet<&str> = puppet_objects().map(|o| o.name).collect();
    for (name, node) in &nodes {
        if !node.access.is_empty() && node.access != "----" && !served.contains(name) {
            problems.push(format!("{name}: readable in net-snmp's view, not served"));
        }
    }

    // Every object and notification resolves to the agent's OID (one run
    // for all: one line per name, in order).
    let layout = Layout::default_layout();
    let mut want: Vec<(String, String)> = puppet_objects()
        .map(|o| (o.name.to_string(), layout.object_oid(o).to_string()))
        .collect();
    want.extend(PUPPET_NOTIFICATIONS.iter().map(|n| {
        (
            n.name.to_string(),
            layout.puppet().child(&[0, n.number]).unwrap().to_string(),
        )
    }));
    let names: Vec<String> = want.iter().map(|(n, _)| format!("{MODULE}::{n}")).collect();
    let mut args = vec!["-On"];
    args.extend(names.iter().map(String::as_str));
    let (out, complaints) = snmptranslate(MODULE, &args);
    let got = text(&out.stdout);
    let got: Vec<&str> = got.lines().filter(|l| !l.trim().is_empty()).collect();
    if !out.status.success() || !complaints.is_empty() || got.len() != want.len() {
        problems.push(format!(
            "snmptranslate -On ({}): {} lines for {} names; {complaints:?}",
            out.status,
            got.len(),
            want.len()
        ));
    }
    for ((name, oid), line) in want.iter().zip(&got) {
        if line.trim() != oid {
            problems.push(format!(
                "{name}: snmptranslate -On gives {line:?}, want {oid}"
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

    let defs: Vec<(Oid, &ObjectDef)> = puppet_objects()
        .map(|o| (layout.object_oid(o), o))
        .collect();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let index_ranges = ranges(
        mib.nodes["puppetResourceIndex"]
            .syntax
            .as_ref()
            .expect("SYNTAX"),
    );
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
            let node = &mib.nodes[def.name];
            let suffix = &oid.as_slice()[def_oid.len()..];
            if node.kind == "scalar" {
                if suffix != [0] {
                    problems.push(format!("{case}: {oid}: a scalar with instance {suffix:?}"));
                }
            } else {
                let row = mib.node_at(&def_oid.parent().unwrap());
                let index_ok = match (row, suffix) {
                    (Some(row), [ix]) if row.kind == "row" => {
                        row.index == ["puppetResourceIndex"]
                            && index_ranges
                                .iter()
                                .any(|(lo, hi)| (*lo..=*hi).contains(&i64::from(*ix)))
                    }
                    _ => false,
                };
                if index_ok {
                    *rows.entry(suffix[0]).or_default() += 1;
                    max_row = max_row.max(suffix[0]);
                } else {
                    problems.push(format!(
                        "{case}: {oid} ({}): instance {suffix:?} is not a puppetResourceIndex \
                         in {index_ranges:?}",
                        def.name
                    ));
                }
            }
            let value = value.resolve(now);
            let wire = value.wire_type();
            if wire != def.syntax.wire_type() {
                problems.push(format!(
                    "{case}: {oid} ({}): sent as {wire:?}, the MIB says {:?}",
                    def.name, def.syntax
                ));
            }
            // The value is one the MIB's type allows.
            let allowed = match (&*value, def.syntax) {
                (Value::Integer(v), Syntax::TruthValue) => *v == 1 || *v == 2,
                (Value::Integer(v), Syntax::Enum) => node
                    .syntax
                    .as_ref()
                    .is_some_and(|ty| named_numbers(ty).iter().any(|(_, n)| *n == i64::from(*v))),
                (Value::OctetString(s), Syntax::DisplayString) => {
                    s.len() <= 255 && s.iter().all(|b| (0x20..0x7f).contains(b))
                }
                (Value::Gauge32(_), Syntax::Gauge32) => true,
                (Value::Counter32(_), Syntax::Counter32) => true,
                _ => false,
            };
            if !allowed {
                problems.push(format!(
                    "{case}: {oid} ({}): {value:?} is not a value of its MIB type",
                    def.name
                ));
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
        .filter(|o| !matches!(field(o), PuppetField::Events(_)))
        .map(|o| o.name)
        .filter(|n| !seen.contains(n))
        .collect();
    assert!(never.is_empty(), "never built from any state: {never:?}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------
// The events log's table, and the OIDs the agent builds from real logs.

#[test]
fn the_event_table_is_indexed_and_built_as_the_mib_says() {
    let mib = mib();
    let root = root();
    let layout = Layout::default_layout();
    let entry_oid = root.child(&[4, 1]).unwrap();
    let mut problems = Vec::new();
    let entry = &mib.nodes["puppetEventEntry"];
    if entry.index != ["puppetEventIndex"] || entry.implied || entry.augments.is_some() {
        problems.push(format!(
            "puppetEventEntry: INDEX {:?}, the agent builds INDEX {{ puppetEventIndex }}",
            entry.index
        ));
    }
    // The index grows by one per event up to i32::MAX (src/puppet/events.rs).
    let index_range = match mib.nodes.get("puppetEventIndex") {
        Some(ix) => {
            let ty = ix.syntax.as_ref().expect("SYNTAX");
            let t = mib.resolve(ty).unwrap();
            if ix.oid != entry_oid.child(&[1]).unwrap()
                || ix.access.as_deref() != Some("noaccess")
                || t.basetype != "Integer32"
                || ranges(ty) != [(1, i64::from(i32::MAX))]
            {
                problems.push(format!(
                    "puppetEventIndex: a {} at {}, access {:?}, {t:?} {:?}; want a \
                     not-accessible Integer32 (1..2147483647) at {}",
                    ix.kind,
                    ix.oid,
                    ix.access,
                    ranges(ty),
                    entry_oid.child(&[1]).unwrap()
                ));
            }
            ranges(ty)
        }
        None => {
            problems.push("puppetEventIndex is missing".into());
            Vec::new()
        }
    };
    let served: BTreeSet<&str> = PUPPET_EVENT_COLUMNS.iter().map(|c| c.name).collect();
    let columns: BTreeSet<&str> = mib
        .nodes
        .iter()
        .filter(|(_, n)| n.oid.parent().as_ref() == Some(&entry_oid))
        .map(|(name, _)| name.as_str())
        .filter(|name| *name != "puppetEventIndex")
        .collect();
    if columns != served {
        problems.push(format!(
            "columns of puppetEventEntry {columns:?}, served {served:?}"
        ));
    }

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
                let node = &mib.nodes[def.name];
                let suffix = &oid.as_slice()[def_oid.len()..];
                let instance_ok = match (node.kind.as_str(), suffix) {
                    ("scalar", [0]) => true,
                    ("column", [ix]) => index_range
                        .iter()
                        .any(|(lo, hi)| (*lo..=*hi).contains(&i64::from(*ix))),
                    _ => false,
                };
                if !instance_ok {
                    problems.push(format!("{case}: {oid} ({}): instance {suffix:?}", def.name));
                }
                if value.wire_type() != def.syntax.wire_type() {
                    problems.push(format!("{case}: {oid} ({}): {value:?}", def.name));
                }
                if let (Value::Integer(v), Syntax::Enum) = (value, def.syntax) {
                    let named = node.syntax.as_ref().is_some_and(|ty| {
                        named_numbers(ty).iter().any(|(_, n)| *n == i64::from(*v))
                    });
                    if !named {
                        problems.push(format!("{case}: {oid} ({}): {v} is not named", def.name));
                    }
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

/// The loader behind every test here refuses what smidump cannot read and a
/// module that is not the one asked for, so a broken MIB fails these tests
/// rather than passing them on an empty dump.
#[test]
fn the_loader_refuses_a_broken_copy_and_another_module() {
    mibtool::check_loader_refuses_broken_copies(MODULE);
}
