//! Issue 5: the OpenNMS files in `opennms/` checked against the agent's own
//! tables, against OpenNMS's rules, and against a running agent, and every
//! graph drawn for real.
//!
//! Without servers:
//! - every XML file is well-formed (`xmllint`, Debian's libxml2-utils, is
//!   required) and validates against the OpenNMS schemas in
//!   `../shared/opennms-xsd/`; when that folder is missing the schema checks
//!   are skipped, and said so, and everything else still runs;
//! - the data collection and the alias table of `opennms/README.md` are
//!   generated from `redis_snmp::metrics` (`collection`,
//!   `tests/opennms/collection.rs`): the shipped files must be what it
//!   writes, and a changed copy fails; what generation cannot vouch for is
//!   checked here: each `mibObj`'s type fits its SMI syntax, rows are stored
//!   apart, and the resource labels come out as intended for real indexes;
//! - the events against `redis_snmp::notify`: exactly one event per
//!   notification and no other, matched the way OpenNMS matches an SNMPv2
//!   notification (enterprise, generic 6, specific: RFC 3584), every object
//!   the notification carries described at its position, decoded enumerations
//!   equal to the agent's, and each Down alarm cleared by its Up;
//! - the graphs: `reports=` names exactly the reports defined; every column is
//!   a collected alias of the report's resource type; every `{rrdN}` of a
//!   command is a column and reads that column's data source.
//! - the threshold snippets (`opennms/snippets/`, issue 16) validate against
//!   `thresholding.xsd` (with its `\$` corrected for libxml2), and broken
//!   copies do not; `loader` checks them against the collection.
//!
//! With servers, once for each server kind of testkit's `servers`
//! (`tests/support/src/servers.rs`)
//! (Redis 6.2, Redis 7.0, Valkey 8.0, Valkey 9.1; a kind whose binary is not
//! there is skipped with a SKIP line): a private snmpd, four servers of that
//! kind (a master with AOF, its replica, a single-node cluster, a sentinel
//! watching the master), real `puppet apply` runs, and the agent watching
//! them all. Every collected
//! object must be served (with the wire type its syntax says), unless the
//! servers of this machine do not report its field at all (a newer Redis
//! version, an agent-only Puppet phase): those are named. The values are
//! written into RRD files the way OpenNMS stores them (one `<alias>.rrd` per
//! resource directory, one data source named after the alias), every report
//! is drawn with `rrdtool graph` for every resource OpenNMS offers it on, as
//! OpenNMS would (`command.prefix`, Java `.properties` unescaping, OpenNMS's
//! splitting of the command line), and any rrdtool error fails the test. The
//! twelve samples are taken about a second apart and stored [`STEP`] apart,
//! at times in the past: the values are real, the clock is compressed (a rate
//! reads about sixty times lower than it was).
//!
//! A report offered on no resource of that host must be named in
//! `opennms/README.md` ([`NEEDS_MORE_HEADING`]).
//!
//! `loader` (`tests/opennms/loader/`) loads the files the way OpenNMS's
//! code does, rule by rule, and breaks a copy of each file for each rule.
//! `files` (`tests/opennms/files.rs`) reads the files and the agent's
//! tables as OpenNMS sees them; `live` (`tests/opennms/live.rs`) holds the
//! live stack's helpers, and `collect` (`tests/opennms/collect.rs`) runs
//! the live collection as a sequence of named steps.
//!
//! `REDIS_SNMP_WRITE_DOCS=1` also copies a few of the drawings to `docs/`.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

/// The files loaded the way OpenNMS loads them (`tests/opennms/loader/`).
#[path = "opennms/loader/mod.rs"]
mod loader;

/// Issue 15: the data collection and `opennms/README.md`'s alias table,
/// written from the catalogue (`tests/opennms/collection.rs`).
#[path = "opennms/collection.rs"]
mod collection;

use redis_snmp::metrics::{NotificationDef, RowIndex, PUPPET_NOTIFICATIONS, REDIS_NOTIFICATIONS};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use testkit::servers::{start_sentinel, ServerKind};
use testkit::{repo_root, wait_until, AgentConfig, Proc, PuppetApply, Redis, Snmpd, Var};

/// The files of `opennms/` and the agent's tables, as OpenNMS reads them.
#[path = "opennms/files.rs"]
mod files;

/// The live stack's helpers: Redis, walks, RRD files.
#[path = "opennms/live.rs"]
mod live;

/// The live collection, step by step.
#[path = "opennms/collect.rs"]
mod collect;

use collect::collect_and_draw;
use files::*;
use live::*;

// ---------------------------------------------------------------------------
// Static checks

#[test]
fn generated_data_collection_and_readme_tables_are_the_shipped_ones() {
    let readme = opennms_path("README.md");
    let problems: Vec<String> = [
        (opennms_path(GROUP_FILE), collection::data_collection()),
        (readme, collection::readme(&read_opennms("README.md"))),
    ]
    .iter()
    .filter_map(|(path, generated)| collection::check(path, generated, true).err())
    .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The check above fails on a changed alias, and on a lost row of the
/// README's table, and says how to regenerate.
#[test]
fn generated_files_check_catches_a_changed_alias_and_a_lost_row() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy");
    let xml = collection::data_collection();
    let readme = collection::readme(&read_opennms("README.md"));
    for (generated, from, to) in [
        (
            &xml,
            r#"alias="redisConnectedClnts""#,
            r#"alias="redisConnectedClients""#,
        ),
        (
            &readme,
            "| `redisCliMaxOutputBuf` | `redisCliMaxOutBuf` |\n",
            "",
        ),
    ] {
        assert!(generated.contains(from), "{from} is not generated");
        std::fs::write(&copy, generated.replacen(from, to, 1)).unwrap();
        let err = collection::check(&copy, generated, false).expect_err(from);
        // The diff takes the copy's line out and puts the generated one in.
        let diff_has = |sign: char, text: &str| {
            err.lines()
                .any(|l| l.starts_with(sign) && l.contains(text.trim_end()))
        };
        assert!(
            diff_has('+', from) && (to.is_empty() || diff_has('-', to)),
            "{err}"
        );
        assert!(err.contains(collection::REGENERATE), "{err}");
    }
}

#[test]
fn xml_files_are_well_formed_and_validate_against_the_opennms_schemas() {
    let files = [
        (GROUP_FILE, "datacollection-config.xsd"),
        (EVENTS_FILE, "eventconf.xsd"),
        (THRESHOLDS_FILE, "thresholding.xsd"),
        (THRESHD_FILE, "thresholding.xsd"),
    ];
    for (file, _) in files {
        let path = opennms_path(file);
        let out = xmllint(&["--noout", path.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{file} is not well-formed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let Some(xsd) = xsd_dir() else {
        println!(
            "SKIPPED: schema validation of the OpenNMS files: {} is missing \
             (the OpenNMS XSDs live in the project's shared folder)",
            repo_root().join("../shared/opennms-xsd").display()
        );
        return;
    };
    // thresholding.xsd does not compile in libxml2 as OpenNMS ships it: its
    // `value`/`rearm` patterns escape `$` as `\$`, no XML Schema regex
    // escape (../shared/opennms-xsd/README.md). Validate against a copy with
    // `\$` written `$`, which is what the pattern means.
    let fixed_dir = tempfile::tempdir().unwrap();
    for (file, schema) in files {
        let path = opennms_path(file);
        let mut schema_path = xsd.join(schema);
        if schema == "thresholding.xsd" {
            let text = std::fs::read_to_string(&schema_path).unwrap();
            assert!(text.contains("\\$"), "thresholding.xsd no longer escapes $");
            schema_path = fixed_dir.path().join(schema);
            std::fs::write(&schema_path, text.replace("\\$", "$")).unwrap();
        }
        let out = xmllint(&[
            "--noout",
            "--schema",
            schema_path.to_str().unwrap(),
            path.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{file} does not validate against {schema}:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        println!("{file}: validates against {schema}");
    }
    // The corrected schema still refuses what OpenNMS's refuses: a trigger
    // of 0 (`[0-9]*[1-9][0-9]*`), a type the evaluators do not know, a value
    // that is no number.
    let thresholds = read_opennms(THRESHOLDS_FILE);
    for (from, to) in [
        (r#"trigger="2""#, r#"trigger="0""#),
        (r#"type="high""#, r#"type="above""#),
        (r#"value="9000""#, r#"value="90 %""#),
    ] {
        assert!(thresholds.contains(from), "{from} not in {THRESHOLDS_FILE}");
        let copy = fixed_dir.path().join("broken-thresholds.xml");
        std::fs::write(&copy, thresholds.replacen(from, to, 1)).unwrap();
        let out = xmllint(&[
            "--noout",
            "--schema",
            fixed_dir.path().join("thresholding.xsd").to_str().unwrap(),
            copy.to_str().unwrap(),
        ]);
        assert!(
            !out.status.success(),
            "{from} -> {to} validates against thresholding.xsd"
        );
    }
}

/// What the generator cannot vouch for: the OpenNMS `type` of every
/// `mibObj` fits its object's syntax (a string stored as a number fails
/// OpenNMS's NumericAttributeType, a counter stored as a gauge graphs
/// nonsense). The aliases, resource types and system definitions are
/// checked the way OpenNMS loads them in `loader/`.
#[test]
fn collected_types_fit_the_objects_syntax() {
    let objs = collection();
    let mut problems = Vec::new();
    for o in &objs {
        let def = object_at(&o.oid).unwrap_or_else(|| panic!("{} is no object", o.oid));
        if !opennms_types(def.syntax).contains(&o.ty.as_str()) {
            problems.push(format!(
                "{} ({:?}) is collected as {}; it takes {:?}",
                def.name,
                def.syntax,
                o.ty,
                opennms_types(def.syntax)
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Rows are stored where no two rows of the node meet, and every resource
/// type labels real indexes readably, as the web UI evaluates the labels.
#[test]
fn resource_types_store_rows_apart_and_label_them() {
    let types = resource_types();
    let mut problems = Vec::new();
    for t in &types {
        // SiblingColumnStorageStrategy names the directory after the value
        // alone, so the value must be unique on the node: the instance's
        // name is (names are unique in the agent's configuration), and so
        // are the key columns of the string-indexed tables (the instance's
        // name and the row's string, escaped, joined by `.`: see loader/resource_types.rs
        // for their folders). Their name columns are not: they repeat
        // across instances (every instance runs `info`), and would write
        // two instances' rows into one set of RRD files.
        let sibling = t.param("sibling-column-name");
        let unique_on_node = match row_index(&t.name) {
            Some(RowIndex::Instance) => sibling == Some("redisInstanceName"),
            Some(RowIndex::InstanceAndName { .. } | RowIndex::InstanceNameAndName { .. }) => {
                sibling.is_some_and(is_row_key)
            }
            // PUPPET-AGENT-MIB's rows: one agent per node, so its own
            // number is unique there.
            Some(
                RowIndex::InstanceAndNumber { .. }
                | RowIndex::InstanceDbTypeBucket { .. }
                | RowIndex::Row { .. },
            ) => sibling.is_none(),
            None => false,
        };
        if !unique_on_node {
            problems.push(format!(
                "{}: sibling column {sibling:?} is not unique on the node",
                t.name
            ));
        }
    }
    // The labels, for real indexes, as the web UI makes them: from the
    // resource's directory name and its string properties.
    let key = redis_snmp::redis::readings::row_key("sessions", "config|get");
    let strings: BTreeMap<String, String> = [
        ("redisInstanceName", "sessions"),
        ("redisRpAddress", "10.0.0.7"),
        // The name columns carry the string of the index below, the key
        // columns the instance's name before it.
        ("redisCmdLabel", "config|get"),
        ("redisErrLabel", "config|get"),
        ("redisSntLabel", "config|get"),
        ("redisLatLabel", "config|get"),
        ("redisCmdKey", key.as_str()),
        ("redisErrKey", key.as_str()),
        ("redisSntKey", key.as_str()),
        ("redisLatKey", key.as_str()),
        ("redisCnLabel", "config|get"),
        ("redisCuLabel", "config|get"),
        ("redisCnKey", key.as_str()),
        ("redisCuKey", key.as_str()),
        ("redisCkLabel", "config|get"),
        ("redisCkKey", key.as_str()),
        ("redisKgLabel", "config|get"),
        ("redisKgKey", key.as_str()),
        ("redisKzLabel", "1K"),
        ("redisModLabel", "config|get"),
        ("redisModKey", key.as_str()),
        ("puppetCertPath", "/etc/puppetlabs/puppet/ssl/certs/ca.pem"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let loaded = loader::load_datacollection(
        &loader::config_with(loader::INSTALL_LINE),
        &[&read_opennms(GROUP_FILE)],
    )
    .expect("loads");
    for t in loaded.resource_types.values() {
        let (index, must_show): (String, Vec<&str>) = match row_index(&t.name) {
            Some(RowIndex::Instance) => ("2".into(), vec!["sessions"]),
            Some(RowIndex::InstanceAndNumber { .. }) => ("2.5".into(), vec!["5", "2"]),
            // Database 5, hashes(5), bucket 11 (from 1K).
            Some(RowIndex::InstanceDbTypeBucket { .. }) => {
                ("2.5.5.11".into(), vec!["db5", "type 5", "1K", "2"])
            }
            Some(RowIndex::InstanceAndName { .. }) => (
                format!("2.{}", string_index("config|get")),
                vec!["config|get", "sessions"],
            ),
            // The group's label, and its key (the instance's name first).
            Some(RowIndex::InstanceNameAndName { .. }) => (
                format!("2.{}.{}", string_index("jobs"), string_index("config|get")),
                vec!["config|get", "sessions"],
            ),
            // The CA's row (kind 2), by its file.
            Some(RowIndex::Row { .. }) => {
                ("2".into(), vec!["/etc/puppetlabs/puppet/ssl/certs/ca.pem"])
            }
            None => unreachable!("resource types are not scalars"),
        };
        let (folder, label) = loader::folder_and_label(t, &index, &strings);
        println!(
            "{}: index {index} is stored in {folder} and labelled {label:?}",
            t.name
        );
        if label.contains("${") || must_show.iter().any(|s| !label.contains(s)) {
            problems.push(format!(
                "{}: {:?} gives {label:?} for index {index}, folder {folder}",
                t.name, t.resource_label
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn one_event_per_notification_and_downs_cleared_by_ups() {
    let events = events();
    let mut problems = Vec::new();
    let mut by_notification: BTreeMap<&str, &EventDef> = BTreeMap::new();
    let mut ueis = BTreeSet::new();
    let notifications: Vec<&NotificationDef> = REDIS_NOTIFICATIONS
        .iter()
        .chain(PUPPET_NOTIFICATIONS)
        .collect();
    for e in &events {
        if !ueis.insert(e.uei.as_str()) {
            problems.push(format!("UEI {} is used twice", e.uei));
        }
        if !e.uei.starts_with("uei.opennms.org/vendor/") {
            problems.push(format!("{}: not a vendor UEI", e.uei));
        }
        if ![
            "Indeterminate",
            "Cleared",
            "Normal",
            "Warning",
            "Minor",
            "Major",
            "Critical",
        ]
        .contains(&e.severity.as_str())
        {
            problems.push(format!("{}: severity {}", e.uei, e.severity));
        }
        let oid = mask_trap_oid(&e.mask);
        let matched: Vec<&&NotificationDef> = notifications
            .iter()
            .filter(|n| Some(notification_oid(n)) == oid)
            .collect();
        let [n] = matched.as_slice() else {
            problems.push(format!(
                "{}: its mask ({oid:?}) matches {} notifications",
                e.uei,
                matched.len()
            ));
            continue;
        };
        if by_notification.insert(n.name, e).is_some() {
            problems.push(format!("{} has two events", n.name));
        }
        if !e.uei.ends_with(&format!("/{}", n.name)) {
            problems.push(format!(
                "{}: the UEI of {} should end with its name",
                e.uei, n.name
            ));
        }
        // Every object of the notification is described at its position,
        // and the texts name no position beyond the last.
        let objects = n.object_names();
        for (i, object) in objects.iter().enumerate() {
            let row = format!("<b>{object}</b></td><td>%parm[#{}]%", i + 1);
            if !e.descr.contains(&row) {
                problems.push(format!("{}: descr lacks {row}", n.name));
            }
        }
        for text in [&e.descr, &e.logmsg] {
            for part in text.split("%parm[#").skip(1) {
                let position: usize = part
                    .split(']')
                    .next()
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(0);
                if position == 0 || position > objects.len() {
                    problems.push(format!(
                        "{}: %parm[#{position}]% but {} objects",
                        n.name,
                        objects.len()
                    ));
                }
            }
        }
        if !e.logmsg.contains("%parm[#") && !objects.is_empty() {
            problems.push(format!("{}: the log message uses no varbind", n.name));
        }
        // Decoded enumerations are the agent's.
        for (parmid, decodes) in &e.decodes {
            let position: usize = parmid
                .strip_prefix("parm[#")
                .and_then(|p| p.strip_suffix(']'))
                .and_then(|p| p.parse().ok())
                .unwrap_or(0);
            let Some(object) = position.checked_sub(1).and_then(|i| objects.get(i)) else {
                problems.push(format!("{}: varbindsdecode of {parmid}", n.name));
                continue;
            };
            let Some(table) = named_numbers(object_named(object)) else {
                problems.push(format!("{}: {object} is not enumerated", n.name));
                continue;
            };
            let numbers: BTreeSet<i32> = table.iter().map(|(_, v)| *v).collect();
            let decoded: BTreeSet<i32> =
                decodes.iter().filter_map(|(v, _)| v.parse().ok()).collect();
            if numbers != decoded || decoded.len() != decodes.len() {
                problems.push(format!(
                    "{}: {object} decodes {decoded:?}, the agent sends {numbers:?}",
                    n.name
                ));
            }
            for (value, name) in decodes {
                if !table
                    .iter()
                    .any(|(t, v)| t == name && v.to_string() == *value)
                {
                    problems.push(format!("{}: {object} {value} is not {name}", n.name));
                }
            }
        }
        if let Some((key, _, _)) = &e.alarm {
            if !key.starts_with("%uei%:") {
                problems.push(format!("{}: reduction key {key}", n.name));
            }
        }
    }
    for n in &notifications {
        if !by_notification.contains_key(n.name) {
            problems.push(format!("no event for {} ({})", n.name, notification_oid(n)));
        }
    }
    // Each Down raises an alarm its Up clears, for the same source.
    for (down, up) in CLEARED_BY {
        let (Some(d), Some(u)) = (by_notification.get(down), by_notification.get(up)) else {
            problems.push(format!("{down}/{up}: events missing"));
            continue;
        };
        let Some((down_key, 1, None)) = &d.alarm else {
            problems.push(format!(
                "{down}: needs a problem alarm (type 1), has {:?}",
                d.alarm
            ));
            continue;
        };
        let Some((_, 2, Some(clear))) = &u.alarm else {
            problems.push(format!(
                "{up}: needs a resolution alarm (type 2) with a clear-key"
            ));
            continue;
        };
        if *clear != down_key.replace("%uei%", &d.uei) {
            problems.push(format!("{up} clears {clear}, {down} raises {down_key}"));
        }
        // The key tells sources apart by the same object in both.
        let def = |name: &str| {
            notifications
                .iter()
                .find(|n| n.name == name)
                .unwrap()
                .object_names()
        };
        for part in down_key.split("%parm[#").skip(1) {
            let i: usize = part.split(']').next().unwrap().parse().unwrap();
            if def(down).get(i - 1) != def(up).get(i - 1) {
                problems.push(format!("{down}/{up}: %parm[#{i}]% differs"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    println!(
        "{} events for {} notifications",
        events.len(),
        notifications.len()
    );
}

#[test]
fn every_report_is_listed_and_reads_collected_aliases() {
    let objs = collection();
    let (listed, defined) = reports();
    let mut problems = Vec::new();
    let listed_set: BTreeSet<&str> = listed.iter().map(String::as_str).collect();
    let defined_set: BTreeSet<&str> = defined.iter().map(|r| r.id.as_str()).collect();
    if listed_set.len() != listed.len() {
        problems.push("reports= names a report twice".into());
    }
    for id in listed_set.difference(&defined_set) {
        problems.push(format!("reports= names {id}, which is not defined"));
    }
    for id in defined_set.difference(&listed_set) {
        problems.push(format!("{id} is defined but not in reports="));
    }
    let types: BTreeSet<String> = resource_types().into_iter().map(|t| t.name).collect();
    let by_alias: BTreeMap<&str, &MibObj> = objs.iter().map(|o| (o.alias.as_str(), o)).collect();
    for r in &defined {
        if r.name.is_empty() || r.command.is_empty() || r.columns.is_empty() {
            problems.push(format!("{}: name, columns and command are needed", r.id));
        }
        if r.ty != NODE && !types.contains(&r.ty) {
            problems.push(format!("{}: type {} is no resource type", r.id, r.ty));
        }
        for column in &r.columns {
            match by_alias.get(column.as_str()) {
                None => problems.push(format!("{}: column {column} is not collected", r.id)),
                Some(o) if o.ty == "string" => {
                    problems.push(format!("{}: column {column} is a string", r.id))
                }
                Some(o) => {
                    let resource = if o.instance == "0" { NODE } else { &o.instance };
                    if resource != r.ty {
                        problems.push(format!(
                            "{}: column {column} is stored with {resource}, the report is {}",
                            r.id, r.ty
                        ));
                    }
                }
            }
        }
        // Every {rrdN} is a column; a DEF reads that column's data source.
        let mut used = BTreeSet::new();
        for arg in opennms_command_args(&r.command) {
            let Some(def) = arg.strip_prefix("DEF:") else {
                if arg.contains("{rrd") {
                    problems.push(format!("{}: {{rrdN}} outside a DEF: {arg}", r.id));
                }
                continue;
            };
            let parts: Vec<&str> = def.split(':').collect();
            let n: Option<usize> = parts
                .first()
                .and_then(|p| p.split_once('='))
                .and_then(|(_, rrd)| rrd.strip_prefix("{rrd"))
                .and_then(|rrd| rrd.strip_suffix('}'))
                .and_then(|n| n.parse().ok());
            match (n, parts.get(1)) {
                (Some(n), Some(ds))
                    if n >= 1 && r.columns.get(n - 1).map(String::as_str) == Some(*ds) =>
                {
                    used.insert(n);
                }
                _ => problems.push(format!("{}: {arg} does not read one of its columns", r.id)),
            }
        }
        if used.len() != r.columns.len() {
            problems.push(format!("{}: not every column is drawn", r.id));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    println!("{} reports", defined.len());
}

#[test]
fn the_readme_names_every_file() {
    let readme = read_opennms("README.md");
    for file in [
        GROUP_FILE,
        EVENTS_FILE,
        GRAPH_FILE,
        THRESHOLDS_FILE,
        THRESHD_FILE,
    ] {
        assert!(
            readme.contains(file),
            "opennms/README.md does not mention {file}"
        );
    }
}

// ---------------------------------------------------------------------------
// The live stack

/// The live collection on every server kind (issue 12: the integration
/// tests that matter, OpenNMS collection among them, against Redis 6.2,
/// Redis 7.0, Valkey 8.0 and Valkey 9.1). A kind whose binary is not there
/// is skipped with a SKIP line saying why.
macro_rules! collection_on {
    ($module:ident, $kind:ident) => {
        mod $module {
            #[test]
            fn the_agent_serves_every_collected_object_and_every_report_draws() {
                super::collect_and_draw(super::ServerKind::$kind);
            }
        }
    };
}

collection_on!(redis_6_2, Redis62);
collection_on!(redis_7_0, Redis70);
collection_on!(valkey_8_0, Valkey80);
collection_on!(valkey_9_1, Valkey91);

/// `rrdtool graph` of a report, the way OpenNMS runs it.
fn draw(
    report: &Report,
    files: &[PathBuf],
    start: u64,
    end: u64,
    png: &Path,
) -> Result<(), String> {
    let mut command = format!("{COMMAND_PREFIX} {}", report.command);
    // {rrd10} before {rrd1}.
    for (i, file) in files.iter().enumerate().rev() {
        command = command.replace(&format!("{{rrd{}}}", i + 1), file.to_str().unwrap());
    }
    command = command
        .replace("{startTime}", &start.to_string())
        .replace("{endTime}", &end.to_string())
        .replace("{diffTime}", &(end - start).to_string());
    if command.contains('{') {
        return Err(format!("a placeholder is left: {command}"));
    }
    let out = Command::new("rrdtool")
        .arg("graph")
        .arg(png)
        .args(opennms_command_args(&command))
        .output()
        .map_err(|e| format!("running rrdtool: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() || !stderr.trim().is_empty() {
        return Err(format!("rrdtool graph: {} {stderr}", out.status));
    }
    let size = std::fs::metadata(png).map(|m| m.len()).unwrap_or(0);
    if size < 1000 {
        return Err(format!("{} is {size} bytes", png.display()));
    }
    Ok(())
}
