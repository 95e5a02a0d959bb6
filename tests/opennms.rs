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
//! With servers, once for each server kind of `tests/common/servers.rs`
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
//! `loader` (`tests/opennms/loader.rs`) loads the files the way OpenNMS's
//! code does, rule by rule, and breaks a copy of each file for each rule.
//!
//! `REDIS_SNMP_WRITE_DOCS=1` also copies a few of the drawings to `docs/`.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

/// Issue 12: the files loaded the way OpenNMS loads them (`tests/opennms/loader.rs`).
#[path = "opennms/loader.rs"]
mod loader;

/// Issue 15: the data collection and `opennms/README.md`'s alias table,
/// written from the catalogue (`tests/opennms/collection.rs`).
#[path = "opennms/collection.rs"]
mod collection;

use redis_snmp::metrics::{
    self, ClientField, CommandField, Conversion, ErrorField, KeyField, KeyspaceField, LatencyField,
    Layout, NotificationDef, ObjectDef, PuppetEventField, PuppetField, ReplicaField, RowIndex,
    SentinelField, SlowlogField, Source, StatusField, StreamGroupField, PUPPET_NOTIFICATIONS,
    REDIS_NOTIFICATIONS,
};
use redis_snmp::smi::Syntax;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use testkit::servers::{start_sentinel, ServerKind};
use testkit::{repo_root, wait_until, AgentConfig, Proc, PuppetApply, Redis, Snmpd, Var};

const GROUP_FILE: &str = "etc/datacollection/redis-snmp.xml";
const EVENTS_FILE: &str = "etc/events/redis-snmp.events.xml";
const GRAPH_FILE: &str = "etc/snmp-graph.properties.d/redis-snmp-graph.properties";
/// Issue 16: a threshold group for `etc/thresholds.xml` and a package for
/// `etc/threshd-configuration.xml` (OpenNMS reads one file each, no `.d`
/// directory, so these are snippets to merge, not files to copy).
const THRESHOLDS_FILE: &str = "snippets/thresholds.xml";
const THRESHD_FILE: &str = "snippets/threshd-configuration.xml";

/// Each Down notification and the Up that must clear its alarm.
const CLEARED_BY: &[(&str, &str)] = &[
    ("redisInstanceDown", "redisInstanceUp"),
    ("redisReplicationLinkDown", "redisReplicationLinkUp"),
    ("redisThresholdCrossed", "redisThresholdRearmed"),
    ("puppetRunFailed", "puppetRunRecovered"),
    ("puppetAgentStale", "puppetAgentStaleCleared"),
    ("puppetAgentDisabled", "puppetAgentEnabled"),
    ("puppetNotConverging", "puppetConverged"),
    ("puppetRunStorm", "puppetRunStormCleared"),
];

/// The resource type OpenNMS uses for node-level data in graph reports.
const NODE: &str = "nodeSnmp";

/// The section of `opennms/README.md` that names the reports a host needs
/// more for than the live test's (a master with AOF, a replica, a cluster
/// node, a sentinel, `puppet apply`) has.
const NEEDS_MORE_HEADING: &str = "### Reports that need more than the test host has";

/// OpenNMS's `command.prefix` (etc/snmp-graph.properties) without the
/// binary and the output (`graph -`).
const COMMAND_PREFIX: &str =
    "--imgformat PNG --font DEFAULT:7 --font TITLE:10 --start {startTime} --end {endTime}";

/// Seconds between two samples in the RRD files of the live test.
const STEP: u64 = 60;

/// How many times the live test walks the agent.
const SAMPLES: usize = 12;

fn opennms_path(rel: &str) -> PathBuf {
    repo_root().join("opennms").join(rel)
}

fn read_opennms(rel: &str) -> String {
    let path = opennms_path(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

// ---------------------------------------------------------------------------
// Tools

/// Runs a tool; a missing tool fails the test with the package to install.
fn run_tool(program: &str, package: &str, args: &[&str]) -> std::process::Output {
    match Command::new(program).args(args).output() {
        Ok(out) => out,
        Err(e) if e.kind() == ErrorKind::NotFound => panic!(
            "{program} is missing: install Debian's {package} package (scripts/install-test-deps.sh does)"
        ),
        Err(e) => panic!("running {program}: {e}"),
    }
}

fn xmllint(args: &[&str]) -> std::process::Output {
    run_tool("xmllint", "libxml2-utils", args)
}

/// `../shared/opennms-xsd`, if it is there.
fn xsd_dir() -> Option<PathBuf> {
    let dir = repo_root().join("../shared/opennms-xsd");
    dir.join("datacollection-config.xsd")
        .is_file()
        .then_some(dir)
}

// ---------------------------------------------------------------------------
// A small XML reader, enough for these files: elements, attributes, text,
// comments, the XML declaration, the five predefined entities and numeric
// character references (no DTD, no CDATA). Element counts are compared with
// xmllint's, so it cannot silently miss something.

#[derive(Debug, Default)]
struct Element {
    name: String,
    attrs: Vec<(String, String)>,
    children: Vec<Element>,
    text: String,
}

impl Element {
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn req(&self, name: &str) -> &str {
        self.attr(name)
            .unwrap_or_else(|| panic!("<{}> without {name}=", self.name))
    }

    fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    fn text_of(&self, name: &str) -> Option<String> {
        self.child(name).map(|c| c.text.trim().to_string())
    }

    fn count(&self, name: &str) -> usize {
        self.children
            .iter()
            .map(|c| usize::from(c.name == name) + c.count(name))
            .sum()
    }
}

fn unescape_xml(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let semi = rest[amp..].find(';').expect("an entity without ;") + amp;
        let entity = &rest[amp + 1..semi];
        let c = match entity {
            "lt" => '<',
            "gt" => '>',
            "amp" => '&',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                let code = if let Some(hex) = entity.strip_prefix("#x") {
                    u32::from_str_radix(hex, 16)
                } else if let Some(dec) = entity.strip_prefix('#') {
                    dec.parse()
                } else {
                    panic!("unknown entity &{entity};")
                };
                char::from_u32(code.expect("a bad character reference")).expect("a bad character")
            }
        };
        out.push(c);
        rest = &rest[semi + 1..];
    }
    out.push_str(rest);
    out
}

fn parse_tag(tag: &str) -> (String, Vec<(String, String)>) {
    let tag = tag.trim();
    let name_end = tag.find(char::is_whitespace).unwrap_or(tag.len());
    let name = tag[..name_end].to_string();
    let mut rest = tag[name_end..].trim_start();
    let mut attrs = Vec::new();
    while !rest.is_empty() {
        let eq = rest
            .find('=')
            .unwrap_or_else(|| panic!("attribute without = in <{tag}>"));
        let key = rest[..eq].trim().to_string();
        let after = rest[eq + 1..].trim_start();
        let quote = after.chars().next().expect("attribute without value");
        assert!(
            quote == '"' || quote == '\'',
            "unquoted attribute in <{tag}>"
        );
        let close = after[1..].find(quote).expect("unterminated attribute") + 1;
        attrs.push((key, unescape_xml(&after[1..close])));
        rest = after[close + 1..].trim_start();
    }
    (name, attrs)
}

fn parse_xml(text: &str) -> Element {
    let mut stack = vec![Element::default()];
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("<!--") {
            rest = &r[r.find("-->").expect("unterminated comment") + 3..];
        } else if let Some(r) = rest.strip_prefix("<?") {
            rest = &r[r.find("?>").expect("unterminated declaration") + 2..];
        } else if let Some(r) = rest.strip_prefix("</") {
            let end = r.find('>').expect("unterminated end tag");
            let done = stack.pop().expect("an end tag too many");
            assert_eq!(done.name, r[..end].trim(), "mismatched end tag");
            stack
                .last_mut()
                .expect("an end tag too many")
                .children
                .push(done);
            rest = &r[end + 1..];
        } else if let Some(r) = rest.strip_prefix('<') {
            assert!(!r.starts_with('!'), "CDATA and DTDs are not read here");
            let mut quote = None;
            let end = r
                .char_indices()
                .find(|&(_, c)| match quote {
                    Some(q) if c == q => {
                        quote = None;
                        false
                    }
                    Some(_) => false,
                    None if c == '"' || c == '\'' => {
                        quote = Some(c);
                        false
                    }
                    None => c == '>',
                })
                .expect("unterminated tag")
                .0;
            let (tag, empty) = match r[..end].strip_suffix('/') {
                Some(tag) => (tag, true),
                None => (&r[..end], false),
            };
            let (name, attrs) = parse_tag(tag);
            let element = Element {
                name,
                attrs,
                ..Element::default()
            };
            if empty {
                stack.last_mut().unwrap().children.push(element);
            } else {
                stack.push(element);
            }
            rest = &r[end + 1..];
        } else {
            let end = rest.find('<').unwrap_or(rest.len());
            stack
                .last_mut()
                .unwrap()
                .text
                .push_str(&unescape_xml(&rest[..end]));
            rest = &rest[end..];
        }
    }
    assert_eq!(stack.len(), 1, "unclosed elements");
    let mut doc = stack.pop().unwrap();
    assert_eq!(doc.children.len(), 1, "not exactly one root element");
    doc.children.pop().unwrap()
}

/// Parses an XML file of `opennms/` and checks the element count of some
/// element names against xmllint's.
fn xml_file(rel: &str, counted: &[&str]) -> Element {
    let root = parse_xml(&read_opennms(rel));
    let path = opennms_path(rel);
    for name in counted {
        let out = xmllint(&[
            "--xpath",
            &format!("count(//*[local-name()='{name}'])"),
            path.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "xmllint --xpath on {rel}");
        let theirs: usize = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        assert_eq!(root.count(name), theirs, "<{name}> elements in {rel}");
    }
    root
}

// ---------------------------------------------------------------------------
// Java .properties, as java.util.Properties.load reads them

fn trim_properties_ws(s: &str) -> &str {
    s.trim_start_matches([' ', '\t', '\x0c'])
}

fn ends_with_odd_backslashes(s: &str) -> bool {
    s.chars().rev().take_while(|&c| c == '\\').count() % 2 == 1
}

fn unescape_properties(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\x0c'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let code = u32::from_str_radix(&hex, 16).expect("a bad \\u escape");
                out.push(char::from_u32(code).expect("a bad \\u escape"));
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

fn parse_properties(text: &str) -> Vec<(String, String)> {
    let mut entries = Vec::new();
    let mut lines = text.lines();
    while let Some(first) = lines.next() {
        let mut line = trim_properties_ws(first).to_string();
        if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
            continue;
        }
        // Join the continuation lines.
        let mut logical = String::new();
        while ends_with_odd_backslashes(&line) {
            line.pop();
            logical.push_str(&line);
            line = trim_properties_ws(lines.next().unwrap_or("")).to_string();
        }
        logical.push_str(&line);
        // The key ends at the first unescaped '=', ':' or white space.
        let mut key_end = logical.len();
        let mut escaped = false;
        for (i, c) in logical.char_indices() {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if matches!(c, '=' | ':' | ' ' | '\t' | '\x0c') {
                key_end = i;
                break;
            }
        }
        let key = unescape_properties(&logical[..key_end]);
        let mut value = trim_properties_ws(&logical[key_end..]);
        if let Some(v) = value.strip_prefix(['=', ':']) {
            value = trim_properties_ws(v);
        }
        entries.push((key, unescape_properties(value)));
    }
    entries
}

/// OpenNMS's splitting of a graph command line into arguments: white space
/// outside double quotes separates them, the quotes are removed, spaces
/// inside quotes are kept (and any other white space there separates).
fn opennms_command_args(command: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in command.chars() {
        match c {
            '"' => quoted = !quoted,
            ' ' if quoted => current.push(c),
            ' ' | '\t' | '\n' | '\r' | '\x0c' => {
                if !current.is_empty() {
                    args.push(std::mem::take(&mut current));
                }
            }
            _ => current.push(c),
        }
    }
    if !current.is_empty() {
        args.push(current);
    }
    args
}

// ---------------------------------------------------------------------------
// The OpenNMS files, read

#[derive(Debug, Clone)]
struct MibObj {
    group: String,
    oid: String,
    instance: String,
    alias: String,
    ty: String,
}

/// The `mibObj`s of the data collection, with their groups.
fn collection() -> Vec<MibObj> {
    let root = xml_file(GROUP_FILE, &["mibObj", "group"]);
    assert_eq!(root.name, "datacollection-group");
    let mut objs = Vec::new();
    for group in root.all("group") {
        let name = group.req("name");
        for o in group.all("mibObj") {
            objs.push(MibObj {
                group: name.to_string(),
                oid: o.req("oid").to_string(),
                instance: o.req("instance").to_string(),
                alias: o.req("alias").to_string(),
                ty: o.req("type").to_string(),
            });
        }
    }
    objs
}

/// The resource types of the data collection group, read as the loader
/// reads them: OpenNMS's SNMP collection reads no others (see loader.rs).
fn resource_types() -> Vec<loader::ResourceTypeDef> {
    let root = xml_file(GROUP_FILE, &["resourceType", "parameter"]);
    assert_eq!(root.name, "datacollection-group");
    root.all("resourceType")
        .map(loader::resource_type_def)
        .collect()
}

#[derive(Debug, Default)]
struct Report {
    id: String,
    name: String,
    columns: Vec<String>,
    ty: String,
    command: String,
}

/// The ids `reports=` lists, and the reports the file defines.
fn reports() -> (Vec<String>, Vec<Report>) {
    let mut listed = Vec::new();
    let mut defined: BTreeMap<String, Report> = BTreeMap::new();
    for (key, value) in parse_properties(&read_opennms(GRAPH_FILE)) {
        if key == "reports" {
            listed.extend(
                value
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from),
            );
            continue;
        }
        let (id, field) = key
            .strip_prefix("report.")
            .and_then(|k| k.rsplit_once('.'))
            .unwrap_or_else(|| panic!("{GRAPH_FILE}: unexpected key {key}"));
        let report = defined.entry(id.to_string()).or_default();
        report.id = id.to_string();
        match field {
            "name" => report.name = value,
            "columns" => report.columns = value.split(',').map(|c| c.trim().to_string()).collect(),
            "type" => report.ty = value,
            "command" => report.command = value,
            _ => panic!("{GRAPH_FILE}: {key}: a field this test does not know"),
        }
    }
    (listed, defined.into_values().collect())
}

#[derive(Debug)]
struct EventDef {
    uei: String,
    descr: String,
    logmsg: String,
    severity: String,
    mask: Vec<(String, Vec<String>)>,
    /// reduction-key, alarm-type, clear-key
    alarm: Option<(String, u32, Option<String>)>,
    /// parmid, (value, decoded string)
    decodes: Vec<(String, Vec<(String, String)>)>,
}

fn events() -> Vec<EventDef> {
    let root = xml_file(
        EVENTS_FILE,
        &["event", "maskelement", "alarm-data", "decode"],
    );
    assert_eq!(root.name, "events");
    root.all("event")
        .map(|e| {
            for required in ["uei", "event-label", "descr", "logmsg", "severity"] {
                assert_eq!(
                    e.all(required).count(),
                    1,
                    "an event without exactly one <{required}>: {:?}",
                    e.text_of("uei")
                );
            }
            let uei = e.text_of("uei").unwrap();
            let mask = e
                .child("mask")
                .unwrap_or_else(|| panic!("{uei}: no mask"))
                .all("maskelement")
                .map(|m| {
                    (
                        m.text_of("mename").expect("maskelement without mename"),
                        m.all("mevalue")
                            .map(|v| v.text.trim().to_string())
                            .collect(),
                    )
                })
                .collect();
            let alarm = e.child("alarm-data").map(|a| {
                (
                    a.req("reduction-key").to_string(),
                    a.req("alarm-type").parse().expect("alarm-type"),
                    a.attr("clear-key").map(String::from),
                )
            });
            let decodes = e
                .all("varbindsdecode")
                .map(|d| {
                    (
                        d.text_of("parmid").expect("varbindsdecode without parmid"),
                        d.all("decode")
                            .map(|x| {
                                (
                                    x.req("varbindvalue").to_string(),
                                    x.req("varbinddecodedstring").to_string(),
                                )
                            })
                            .collect(),
                    )
                })
                .collect();
            EventDef {
                descr: e.text_of("descr").unwrap(),
                logmsg: e.text_of("logmsg").unwrap(),
                severity: e.text_of("severity").unwrap(),
                uei,
                mask,
                alarm,
                decodes,
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------
// The agent's tables

fn all_objects() -> impl Iterator<Item = &'static ObjectDef> {
    metrics::redis_objects().chain(metrics::puppet_objects())
}

fn object_named(name: &str) -> &'static ObjectDef {
    all_objects()
        .find(|d| d.name == name)
        .unwrap_or_else(|| panic!("no object {name} in redis_snmp::metrics"))
}

fn object_oid(def: &ObjectDef) -> String {
    Layout::default_layout().object_oid(def).to_string()
}

fn object_at(oid: &str) -> Option<&'static ObjectDef> {
    all_objects().find(|d| object_oid(d) == oid)
}

/// Whether the object named `alias` is the key column of a string-indexed
/// table (the instance's name, `/`, the row's string). The match is
/// exhaustive over the tables' fields, so a new table must be placed here.
fn is_row_key(alias: &str) -> bool {
    let Some(def) = metrics::redis_objects().find(|d| d.name == alias) else {
        return false;
    };
    match def.source {
        Source::Command(field) => field == CommandField::Key,
        Source::Error(field) => field == ErrorField::Key,
        Source::SentinelMaster(field) => field == SentinelField::Key,
        Source::Latency(field) => field == LatencyField::Key,
        Source::ClientName(field) | Source::ClientUser(field) => field == ClientField::Key,
        Source::Key(field) => field == KeyField::Key,
        Source::StreamGroup(field) => field == StreamGroupField::Key,
        Source::KeyCheck(_)
        | Source::Info { .. }
        | Source::Status(_)
        | Source::Keyspace(_)
        | Source::Replica(_)
        | Source::Slowlog(_)
        | Source::Puppet(_)
        | Source::Alarm(_) => false,
    }
}

/// How the rows of an OpenNMS `instance` (a resource type, or `0` for
/// scalars: `None`) are indexed, from the table in `redis_snmp::metrics`.
fn row_index(instance: &str) -> Option<RowIndex> {
    if instance == "0" {
        return None;
    }
    let table = metrics::TABLES
        .iter()
        .find(|t| t.resource_type == instance)
        .unwrap_or_else(|| panic!("no table is stored as resource type {instance}"));
    Some(table.index)
}

/// Whether `suffix` (dotted) is a row of `index` (`None`: the scalar `.0`).
fn fits_index(index: Option<RowIndex>, suffix: &str) -> bool {
    let arcs: Vec<u32> = match suffix.split('.').map(str::parse).collect() {
        Ok(arcs) => arcs,
        Err(_) => return false,
    };
    match index {
        None => arcs == [0],
        Some(index) => index.fits(&arcs),
    }
}

/// The OpenNMS `type`s that fit an SMI syntax.
fn opennms_types(syntax: Syntax) -> &'static [&'static str] {
    match syntax {
        Syntax::Counter32 | Syntax::Counter64 => &["counter"],
        // Gauge64 is Counter64 on the wire but a gauge: stored as one.
        Syntax::Gauge32
        | Syntax::Gauge64
        | Syntax::Integer32
        | Syntax::Enum
        | Syntax::TruthValue => &["gauge"],
        Syntax::DisplayString | Syntax::OctetString => &["string"],
        Syntax::TimeTicks => &["timeticks"],
        Syntax::ObjectIdentifier => &[],
    }
}

/// The named numbers of an enumerated object (TruthValue included).
fn named_numbers(def: &ObjectDef) -> Option<Vec<(&'static str, i32)>> {
    if def.syntax == Syntax::TruthValue {
        return Some(vec![("true", 1), ("false", 2)]);
    }
    let table: &[(&str, i32)] = match def.source {
        Source::Info {
            conversion: Conversion::Enum(table),
            ..
        } => table,
        Source::Status(StatusField::Up) => metrics::INSTANCE_STATE,
        Source::SentinelMaster(SentinelField::State) => metrics::SENTINEL_STATE,
        Source::Puppet(PuppetField::Status) => metrics::PUPPET_STATUS,
        Source::Puppet(PuppetField::CachedCatalog) => metrics::CACHED_CATALOG,
        Source::Puppet(PuppetField::RunMode) => metrics::RUN_MODES,
        Source::Puppet(PuppetField::ResourceState) => metrics::RESOURCE_STATES,
        Source::Puppet(PuppetField::Events(PuppetEventField::LogStatus)) => {
            metrics::EVENTS_LOG_STATUS
        }
        Source::Puppet(PuppetField::Events(PuppetEventField::Level)) => metrics::EVENT_LEVELS,
        _ => return None,
    };
    Some(table.to_vec())
}

fn notification_oid(def: &NotificationDef) -> String {
    Layout::default_layout().notification_oid(def).to_string()
}

/// The notification OID an event's mask matches: its `trapoid`, or (as
/// OpenNMS maps an SNMPv2 notification, RFC 3584 §3.2) enterprise `id`,
/// generic 6 and `specific` N for `id.0.N`.
fn mask_trap_oid(mask: &[(String, Vec<String>)]) -> Option<String> {
    let one = |name: &str| -> Option<&str> {
        let (_, values) = mask.iter().find(|(n, _)| n == name)?;
        assert_eq!(values.len(), 1, "mask element {name} with several values");
        Some(values[0].as_str())
    };
    if let Some(oid) = one("trapoid") {
        return Some(oid.to_string());
    }
    if one("generic")? != "6" {
        return None;
    }
    Some(format!("{}.0.{}", one("id")?, one("specific")?))
}

// ---------------------------------------------------------------------------
// Resource labels, evaluated the way OpenNMS evaluates resourceLabel:
// ${index}, ${subIndex(start[,count|n])}, ${string(...)}, ${hex(...)} and
// string attributes of the resource by alias.

fn label_symbol(
    symbol: &str,
    index: &str,
    strings: &BTreeMap<String, String>,
    last_n: &mut Option<usize>,
) -> Option<String> {
    if symbol == "index" {
        return Some(index.to_string());
    }
    if let Some(args) = symbol
        .strip_prefix("subIndex(")
        .and_then(|s| s.strip_suffix(')'))
    {
        let arcs: Vec<&str> = index.split('.').collect();
        let (first, count) = match args.split_once(',') {
            Some((a, b)) => (a.trim(), Some(b.trim())),
            None => (args.trim(), None),
        };
        let mut start = if first == "n" {
            last_n.take()?
        } else {
            let offset: i64 = first.parse().ok()?;
            if offset < 0 {
                usize::try_from(arcs.len() as i64 + offset).ok()?
            } else {
                offset as usize
            }
        };
        let end = match count {
            Some("n") => {
                let length: usize = arcs.get(start)?.parse().ok()?;
                let end = start + length + 1;
                start += 1;
                *last_n = Some(end);
                end
            }
            Some(count) => start + count.parse::<usize>().ok()?,
            None => arcs.len(),
        };
        if start >= arcs.len() || end > arcs.len() {
            return None;
        }
        return Some(arcs[start..end].join("."));
    }
    if let Some(inner) = symbol
        .strip_prefix("string(")
        .and_then(|s| s.strip_suffix(')'))
    {
        let arcs = label_symbol(inner, index, strings, last_n)?;
        return arcs
            .split('.')
            .map(|a| a.parse::<u32>().ok().and_then(char::from_u32))
            .collect();
    }
    if let Some(inner) = symbol
        .strip_prefix("hex(")
        .and_then(|s| s.strip_suffix(')'))
    {
        let arcs = label_symbol(inner, index, strings, last_n)?;
        let bytes: Option<Vec<String>> = arcs
            .split('.')
            .map(|a| a.parse::<u8>().ok().map(|b| format!("{b:02X}")))
            .collect();
        return Some(bytes?.join(":"));
    }
    strings.get(symbol).cloned()
}

fn resource_label(expression: &str, index: &str, strings: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = expression;
    let mut last_n = None;
    while let Some(open) = rest.find("${") {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}').expect("unterminated ${") + open;
        let symbol = &rest[open + 2..close];
        match label_symbol(symbol, index, strings, &mut last_n) {
            Some(value) => out.push_str(&value),
            None => out.push_str(&rest[open..=close]),
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// The OID index of a string (DisplayString, not IMPLIED): length, bytes.
fn string_index(s: &str) -> String {
    std::iter::once(s.len().to_string())
        .chain(s.bytes().map(|b| b.to_string()))
        .collect::<Vec<_>>()
        .join(".")
}

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
/// checked the way OpenNMS loads them in `loader.rs`.
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
        // name and the row's string, escaped, joined by `.`: see loader.rs
        // for their folders). Their name columns are not: they repeat
        // across instances (every instance runs `info`), and would write
        // two instances' rows into one set of RRD files.
        let sibling = t.param("sibling-column-name");
        let unique_on_node = match row_index(&t.name) {
            Some(RowIndex::Instance) => sibling == Some("redisInstanceName"),
            Some(RowIndex::InstanceAndName { .. } | RowIndex::InstanceNameAndName { .. }) => {
                sibling.is_some_and(is_row_key)
            }
            Some(RowIndex::InstanceAndNumber { .. }) => sibling.is_none(),
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
            Some(RowIndex::InstanceAndName { .. }) => (
                format!("2.{}", string_index("config|get")),
                vec!["config|get", "sessions"],
            ),
            // The group's label, and its key (the instance's name first).
            Some(RowIndex::InstanceNameAndName { .. }) => (
                format!("2.{}.{}", string_index("jobs"), string_index("config|get")),
                vec!["config|get", "sessions"],
            ),
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

/// Sends commands, one per line, through one redis-cli connection.
fn redis_pipe(port: u16, commands: &str) {
    let mut child = Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("running redis-cli (Debian's redis-tools)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(commands.as_bytes())
        .unwrap();
    child.wait().unwrap();
}

fn redis_cli_text(port: u16, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .output()
        .expect("running redis-cli");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Some work for the master, different in each round: writes, hits and
/// misses, expiring keys in two databases, errors, a message, and now and
/// then a 20 ms command (a latency event and a slow log entry).
fn load(port: u16, round: usize) {
    let mut c = String::new();
    let n = 40 + 35 * (round % 4);
    for i in 0..n {
        c.push_str(&format!("SET key:{i} value-{round}-{i}\nGET key:{i}\n"));
        if i % 3 == 0 {
            c.push_str(&format!("GET missing:{round}:{i}\n"));
        }
        if i % 5 == 0 {
            c.push_str(&format!(
                "SET tmp:{round}:{i} x PX 200\nEXPIRE key:{i} 3600\n"
            ));
        }
    }
    c.push_str("INCR key:0\nLPUSH key:1 x\nPUBLISH news hello\n");
    c.push_str(&format!(
        "SELECT 3\nSET other:{round} y EX 600\nHSET h:{round} f v\nSELECT 0\n"
    ));
    if round % 3 == 1 {
        c.push_str("DEBUG SLEEP 0.02\n");
    }
    redis_pipe(port, &c);
}

type Sample = BTreeMap<String, Var>;

fn walk(snmpd: &Snmpd, root: &str) -> Vec<Var> {
    let out = snmpd
        .numeric()
        .timeout(Duration::from_secs(5))
        .bulkwalk(root);
    assert!(out.success(), "{out}");
    out.vars()
}

fn sample(snmpd: &Snmpd) -> Sample {
    walk(snmpd, ".1.3.6.1.4.1.20267.400")
        .into_iter()
        .chain(walk(snmpd, ".1.3.6.1.4.1.20267.401"))
        .filter(|v| !v.is_exception())
        .map(|v| (v.name.clone(), v))
        .collect()
}

/// The entries of a sample below `oid.`, with their index suffix.
fn below<'a>(sample: &'a Sample, oid: &str) -> impl Iterator<Item = (&'a str, &'a Var)> + 'a {
    let prefix = format!("{oid}.");
    let skip = prefix.len();
    sample
        .range(prefix.clone()..)
        .take_while(move |(k, _)| k.starts_with(&prefix))
        .map(move |(k, v)| (&k[skip..], v))
}

/// Why an object no server of this machine could have served, if that is
/// the case: INFO (and CLUSTER INFO) of every instance lacks its fields, or
/// the Puppet summary lacks its phase, or the master answers COMMANDLOG
/// LEN with an error (`commandlog` is its reply).
fn why_absent(def: &ObjectDef, info: &str, summary: &str, commandlog: &str) -> Option<String> {
    match def.source {
        Source::Info { fields, .. } => {
            let reported = fields.iter().any(|f| {
                info.lines()
                    .any(|l| l.trim().strip_prefix(f).is_some_and(|r| r.starts_with(':')))
            });
            (!reported).then(|| format!("no server here reports {fields:?}"))
        }
        Source::Keyspace(KeyspaceField::Subexpiry) => (!info.contains("subexpiry="))
            .then(|| "no keyspace line here has subexpiry (Redis 7.4+)".into()),
        Source::Command(CommandField::P50 | CommandField::P99 | CommandField::P999) => (!info
            .contains("latency_percentiles_usec_"))
        .then(|| "no server here reports latencystats (Redis 7.0+)".into()),
        Source::Replica(ReplicaField::Kind) => {
            let typed = info
                .lines()
                .any(|l| l.starts_with("slave") && l.contains(",type="));
            (!typed).then(|| "no slave<N> line here has type= (Valkey)".into())
        }
        Source::Slowlog(SlowlogField::LargeRequests | SlowlogField::LargeReplies) => {
            (commandlog.trim().parse::<u64>().is_err()).then(|| {
                format!(
                    "the servers here refuse COMMANDLOG LEN (Valkey 8.1+): {}",
                    commandlog.trim()
                )
            })
        }
        // XINFO GROUPS has a lag field since Redis 7.0 (Valkey 8.0 says
        // redis_version:7.2.4).
        Source::StreamGroup(StreamGroupField::Lag) => info
            .contains("redis_version:6.")
            .then(|| "XINFO GROUPS has no lag before Redis 7.0".into()),
        // This stack has no rediss:// instance; tests/certificates.rs
        // reads these columns from a real TLS server.
        Source::Status(
            StatusField::CertSubject
            | StatusField::CertIssuer
            | StatusField::CertNotAfter
            | StatusField::CertExpiresIn,
        ) => Some("no rediss:// instance in this stack (tests/certificates.rs serves them)".into()),
        Source::Puppet(PuppetField::Phase(name)) => {
            let reported = summary
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{name}:")));
            (!reported)
                .then(|| format!("`puppet apply` writes no {name} time (an agent's run does)"))
        }
        _ => None,
    }
}

/// The directory SiblingColumnStorageStrategy makes of a value: non-ASCII
/// dropped, `/` to `-`, then the `replace-all` of the resource type (this
/// test knows the one the file uses).
fn sibling_dir(value: &str, replace_all: &str, index: &str) -> String {
    assert_eq!(
        replace_all, "s/[^A-Za-z0-9._-]/_/",
        "the test emulates this replacement only"
    );
    let name: String = value
        .chars()
        .filter(char::is_ascii)
        .map(|c| if c == '/' { '-' } else { c })
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() {
        index.to_string()
    } else {
        name
    }
}

/// The samples of one data source: its RRD type (GAUGE, COUNTER) and
/// (time, value) pairs.
type Series = (&'static str, Vec<(u64, String)>);

#[derive(Default)]
struct Resource {
    index: String,
    /// alias → samples
    series: BTreeMap<String, Series>,
    strings: BTreeMap<String, String>,
}

fn rrdtool_batch(commands: &[String]) {
    let mut child = match Command::new("rrdtool")
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            panic!("rrdtool is missing: install Debian's rrdtool package")
        }
        Err(e) => panic!("running rrdtool: {e}"),
    };
    let mut stdin = child.stdin.take().unwrap();
    let input = commands.join("\n") + "\n";
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let errors: Vec<&str> = text.lines().filter(|l| l.starts_with("ERROR")).collect();
    assert!(errors.is_empty(), "rrdtool: {}", errors.join("\n"));
    assert_eq!(
        text.lines().filter(|l| l.starts_with("OK")).count(),
        commands.len(),
        "rrdtool did not run every command"
    );
}

fn create_rrd(path: &Path, alias: &str, ds: &str, start: u64) -> String {
    let rows = SAMPLES + 10;
    format!(
        "create {} --start {start} --step {STEP} DS:{alias}:{ds}:{}:U:U \
         RRA:AVERAGE:0.5:1:{rows} RRA:MIN:0.5:1:{rows} RRA:MAX:0.5:1:{rows}",
        path.display(),
        2 * STEP
    )
}

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

fn collect_and_draw(kind: ServerKind) {
    let Some(binary) =
        kind.binary_or_skip("the_agent_serves_every_collected_object_and_every_report_draws")
    else {
        return;
    };
    let started = Instant::now();
    let objs = collection();
    let types = resource_types();
    let (_, reports) = reports();
    run_tool("rrdtool", "rrdtool", &["--version"]);
    // Redis 6.2 has neither enable-debug-command (DEBUG is always allowed
    // there) nor cluster-port (the bus is port + 10000) nor ADDSLOTSRANGE.
    let since_7 = kind != ServerKind::Redis62;

    // The stack.
    let snmpd = Snmpd::start();
    let mut main_config = vec![
        "appendonly yes",
        "latency-monitor-threshold 1",
        // A memory limit, so its share (redisMemUsedOfMax) is served.
        "maxmemory 1gb",
        // The replica's first sync at once, not after the 5 s diskless delay.
        "repl-diskless-sync no",
    ];
    if since_7 {
        main_config.push("enable-debug-command local");
    }
    let main = Redis::start_binary(&binary, &main_config);
    let replica = Redis::start_binary(&binary, &[&format!("replicaof 127.0.0.1 {}", main.port())]);
    let dir = tempfile::tempdir().unwrap();
    let nodes_conf = format!(
        "cluster-config-file {}",
        dir.path().join("nodes.conf").display()
    );
    // The cluster bus is port + 10000 unless told: a port no lock holds.
    let bus = format!("cluster-port {}", testkit::free_port());
    let mut cluster_config = vec!["cluster-enabled yes", nodes_conf.as_str()];
    if since_7 {
        cluster_config.push(bus.as_str());
    }
    let cluster = Redis::start_binary(&binary, &cluster_config);
    if since_7 {
        cluster.cli(&["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]);
    } else {
        let slots: Vec<String> = (0..16384).map(|s| s.to_string()).collect();
        let mut args = vec!["CLUSTER", "ADDSLOTS"];
        args.extend(slots.iter().map(String::as_str));
        cluster.cli(&args);
    }
    let (_sentinel, sentinel_port) = start_sentinel(kind, &main, dir.path());
    println!("{}: {}", kind.label(), binary.display());
    let puppet = PuppetApply::new();
    let instances = [
        ("main", main.address()),
        ("replica", replica.address()),
        ("cluster node/1", cluster.address()),
        ("sentinel", format!("127.0.0.1:{sentinel_port}")),
    ];
    // Keys to check on main (issue 16): a list, and a stream with a
    // consumer group that has read an entry.
    main.cli(&["RPUSH", "jobs", "a", "b"]);
    main.cli(&["XADD", "events", "*", "f", "v"]);
    main.cli(&["XGROUP", "CREATE", "events", "billing", "0"]);
    main.cli(&[
        "XREADGROUP",
        "GROUP",
        "billing",
        "c1",
        "STREAMS",
        "events",
        ">",
    ]);
    let key_checks = "check_keys = [\"jobs\", \"ev*\"]\ncheck_keys_interval = 1\n\
                      check_keys_memory = true\n";
    let agent = instances
        .iter()
        .fold(AgentConfig::new(&snmpd), |config, (name, address)| {
            let extra = if *name == "main" { key_checks } else { "" };
            config.redis(name, address, extra)
        })
        .puppet(&puppet, "")
        .start(dir.path());

    // Ready: every instance up, the replica attached, the sentinel's master
    // listed.
    load(main.port(), 0);
    let ready = wait_until(Duration::from_secs(15), || {
        let s = sample(&snmpd);
        let up = (1..=instances.len()).all(|i| {
            s.get(&format!(".1.3.6.1.4.1.20267.400.3.1.1.4.{i}"))
                .and_then(Var::number)
                == Some(1)
        });
        let replica_row = below(&s, ".1.3.6.1.4.1.20267.400.3.11.1.2")
            .next()
            .is_some();
        let sentinel_row = below(&s, ".1.3.6.1.4.1.20267.400.3.14.1.2")
            .next()
            .is_some();
        up && replica_row && sentinel_row
    });
    assert!(ready, "the stack did not come up:\n{}", agent.log());
    println!("stack up after {:?}", started.elapsed());

    // Samples, while Puppet runs now and then.
    let mut samples: Vec<Sample> = Vec::new();
    let t = puppet.target().display().to_string();
    let runs = [
        format!(
            "file {{ '{t}/a': content => \"a\\n\" }}\nfile {{ '{t}/b': content => \"b\\n\" }}\nnotify {{ 'hello': }}\n"
        ),
        format!(
            "file {{ '{t}/a': content => \"A\\n\" }}\nexec {{ 'fails': command => '/bin/false' }}\nnotify {{ 'after': require => Exec['fails'] }}\n"
        ),
        format!("file {{ '{t}/a': content => \"A\\n\" }}\nfile {{ '{t}/c': content => \"c\\n\" }}\n"),
    ];
    std::thread::scope(|scope| {
        let runner = scope.spawn(|| {
            for (i, manifest) in runs.iter().enumerate() {
                puppet.apply(&format!("run{i}"), manifest, &[]);
                // Runs apart as an agent's are: time.last_run counts whole
                // seconds, and two runs in one second are one run to the
                // watcher (puppetRunInterval needs two it told apart).
                std::thread::sleep(Duration::from_millis(1500));
            }
        });
        // Clients that come and go: some blocked in BLPOP, some subscribed.
        let mut blocked: Vec<Proc> = Vec::new();
        let mut subscribed: Vec<Proc> = Vec::new();
        for round in 0..SAMPLES {
            blocked.truncate(0);
            subscribed.truncate(0);
            for i in 0..round % 4 {
                blocked.push(main.spawn_cli(&["BLPOP", &format!("queue:{i}"), "0"]));
            }
            for i in 0..(round + 2) % 3 {
                subscribed.push(main.spawn_cli(&["SUBSCRIBE", &format!("channel:{i}")]));
            }
            load(main.port(), round);
            std::thread::sleep(Duration::from_millis(1100));
            if round == SAMPLES - 1 {
                // The last sample comes once the watcher has counted every
                // run: on a loaded machine `puppet apply` can outlast the
                // other samples, and puppetRunInterval needs two runs.
                let runs_observed = ".1.3.6.1.4.1.20267.401.1.45.0";
                let counted = wait_until(Duration::from_secs(120), || {
                    runner.is_finished()
                        && snmpd.numeric().get_one(runs_observed).number()
                            >= Some(runs.len() as u64)
                });
                assert!(
                    counted,
                    "the watcher did not count the {} Puppet runs",
                    runs.len()
                );
            }
            samples.push(sample(&snmpd));
        }
    });
    println!("{SAMPLES} samples after {:?}", started.elapsed());

    // What the servers report, to tell a missing field from a missing object.
    let mut info = String::new();
    for redis in [&main, &replica, &cluster] {
        info.push_str(&redis.info_section("everything"));
    }
    info.push_str(&cluster.cli(&["CLUSTER", "INFO"]));
    info.push_str(&redis_cli_text(sentinel_port, &["INFO"]));
    let commandlog = redis_cli_text(main.port(), &["COMMANDLOG", "LEN", "large-request"]);
    let summary = std::fs::read_to_string(puppet.public_dir().join("last_run_summary.yaml"))
        .expect("no Puppet summary: did puppet apply run?");

    // Every collected object is served, with the wire type of its syntax.
    let mut problems = Vec::new();
    let mut explained: BTreeMap<&str, String> = BTreeMap::new();
    for o in &objs {
        let def = object_at(&o.oid).expect("checked by the static tests");
        let shape = row_index(&o.instance);
        let mut served = false;
        for s in &samples {
            for (suffix, var) in below(s, &o.oid) {
                if !fits_index(shape, suffix) {
                    problems.push(format!("{}.{suffix}: not a {:?} index", def.name, shape));
                }
                let wire = def.syntax.wire_type().net_snmp_label();
                if var.ty != wire && !(var.ty.is_empty() && wire == "STRING") {
                    problems.push(format!("{var}: {} is sent as {wire}", def.name));
                }
                served = true;
            }
        }
        if !served {
            match why_absent(def, &info, &summary, &commandlog) {
                Some(why) => {
                    explained.insert(o.alias.as_str(), why);
                }
                None => problems.push(format!(
                    "{} ({}, group {}) was never served",
                    def.name, o.oid, o.group
                )),
            }
        }
    }
    for (alias, why) in &explained {
        println!("not served by {}: {alias}: {why}", kind.label());
    }
    assert!(
        problems.is_empty(),
        "{}:\n{}",
        kind.label(),
        problems.join("\n")
    );

    // The samples, as OpenNMS would store them: one resource per node or per
    // row, the time of sample k being t0 + k·STEP.
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let t0 = (now / STEP) * STEP - SAMPLES as u64 * STEP;
    let type_of = |name: &str| types.iter().find(|t| t.name == name).unwrap();
    // The OID of a resource type's sibling column, from its alias.
    let sibling_oid = |ty: &str| {
        let alias = type_of(ty)
            .param("sibling-column-name")
            .unwrap_or_else(|| panic!("{ty}: no sibling-column-name"));
        let o = objs
            .iter()
            .find(|o| o.alias == alias && o.instance == ty)
            .unwrap_or_else(|| panic!("{ty}: sibling column {alias} is not collected"));
        o.oid.clone()
    };
    let mut resources: BTreeMap<(String, String), Resource> = BTreeMap::new();
    // Which row each directory of a sibling-stored type holds: two rows in
    // one directory would mix their samples.
    let mut stored_by_sibling: BTreeMap<(String, String), String> = BTreeMap::new();
    for (k, s) in samples.iter().enumerate() {
        let t = t0 + k as u64 * STEP;
        for o in &objs {
            for (suffix, var) in below(s, &o.oid) {
                let key = match o.instance.as_str() {
                    "0" => (NODE.to_string(), String::new()),
                    ty if type_of(ty)
                        .storage
                        .ends_with("SiblingColumnStorageStrategy") =>
                    {
                        let replace_all = type_of(ty)
                            .param("replace-all")
                            .unwrap_or_else(|| panic!("{ty}: no replace-all"));
                        let name = s
                            .get(&format!("{}.{suffix}", sibling_oid(ty)))
                            .map(Var::text)
                            .unwrap_or_default();
                        let key = (ty.to_string(), sibling_dir(&name, replace_all, suffix));
                        let first = stored_by_sibling
                            .entry(key.clone())
                            .or_insert_with(|| suffix.to_string());
                        assert_eq!(
                            first, suffix,
                            "{ty}: rows {first} and {suffix} are both stored in {}",
                            key.1
                        );
                        key
                    }
                    ty => (ty.to_string(), suffix.to_string()),
                };
                let resource = resources.entry(key).or_default();
                resource.index = suffix.to_string();
                if o.ty == "string" {
                    resource.strings.insert(o.alias.clone(), var.text());
                    continue;
                }
                let value = var.value.split_whitespace().next().unwrap_or("");
                assert!(
                    value.parse::<i128>().is_ok(),
                    "{var}: not a number for {}",
                    o.alias
                );
                let ds = if o.ty == "counter" {
                    "COUNTER"
                } else {
                    "GAUGE"
                };
                let entry = resource
                    .series
                    .entry(o.alias.clone())
                    .or_insert((ds, Vec::new()));
                entry.1.push((t, value.to_string()));
            }
        }
    }
    // Why the string-indexed rows are stored by key: their names repeat
    // across instances, their keys do not.
    let mut instances_of: BTreeMap<(&str, &str, &str), BTreeSet<&str>> = BTreeMap::new();
    for ((ty, _), resource) in &resources {
        if ty == NODE || !matches!(row_index(ty), Some(RowIndex::InstanceAndName { .. })) {
            continue;
        }
        let instance = resource.index.split('.').next().unwrap_or_default();
        for (alias, value) in &resource.strings {
            instances_of
                .entry((ty.as_str(), alias.as_str(), value.as_str()))
                .or_default()
                .insert(instance);
        }
    }
    let shared = |column: &str| -> Vec<String> {
        instances_of
            .iter()
            .filter(|((_, alias, _), instances)| alias.ends_with(column) && instances.len() > 1)
            .map(|((ty, _, value), instances)| format!("{ty} {value} ({})", instances.len()))
            .collect()
    };
    let (shared_names, shared_keys) = (shared("Label"), shared("Key"));
    println!(
        "row names served by more than one instance (their rows would share a directory if stored by name): {}",
        shared_names.join(", ")
    );
    assert!(
        !shared_names.is_empty(),
        "no row name repeats across the instances: this run does not show why rows are stored by key"
    );
    assert!(shared_keys.is_empty(), "row keys repeat: {shared_keys:?}");
    let rrd_root = dir.path().join("rrd/snmp/1");
    let dir_of = |(ty, name): &(String, String)| {
        if ty == NODE {
            rrd_root.clone()
        } else {
            rrd_root.join(ty).join(name)
        }
    };
    let mut commands = Vec::new();
    for (key, resource) in &resources {
        let path = dir_of(key);
        std::fs::create_dir_all(&path).unwrap();
        let strings: String = resource
            .strings
            .iter()
            .map(|(k, v)| format!("{k}={}\n", v.replace('\\', "\\\\").replace('\n', "\\n")))
            .collect();
        std::fs::write(path.join("strings.properties"), strings).unwrap();
        for (alias, (ds, points)) in &resource.series {
            let file = path.join(format!("{alias}.rrd"));
            commands.push(create_rrd(&file, alias, ds, t0 - STEP));
            let updates: Vec<String> = points.iter().map(|(t, v)| format!("{t}:{v}")).collect();
            commands.push(format!("update {} {}", file.display(), updates.join(" ")));
        }
    }
    rrdtool_batch(&commands);
    println!(
        "{} resources, {} RRD files after {:?}",
        resources.len(),
        commands.len() / 2,
        started.elapsed()
    );

    // Resource labels, as the web UI makes them: `${index}` is the
    // directory's name (GenericIndexResourceType, see loader.rs).
    for ((ty, name), resource) in &resources {
        if ty == NODE {
            continue;
        }
        let t = type_of(ty);
        let label = resource_label(
            t.resource_label.as_deref().unwrap_or("${index}"),
            name,
            &resource.strings,
        );
        assert!(
            !label.contains("${") && !label.is_empty(),
            "{ty}/{name}: label {label:?}"
        );
    }

    // Every report, for every resource OpenNMS offers it on
    // (PropertiesGraphDao.getPrefabGraphsForResource, see loader.rs).
    let (graphs, graph_problems) = loader::load_graphs(&read_opennms(GRAPH_FILE));
    assert!(graph_problems.is_empty(), "{graph_problems:?}");
    let offered_on = |r: &Report, ty: &str, resource: &Resource| {
        let rrd: BTreeSet<String> = resource.series.keys().cloned().collect();
        let strings: BTreeSet<String> = resource.strings.keys().cloned().collect();
        loader::offered_reports(&graphs, ty, &rrd, &strings)
            .iter()
            .any(|g| g.name == r.id)
    };
    // Reports no resource of this host is offered: the README must name
    // them, with what they need.
    let readme = read_opennms("README.md");
    let mut needs_more = Vec::new();
    let start = t0;
    let end = t0 + (SAMPLES as u64 - 1) * STEP;
    let pngs = dir.path().join("png");
    std::fs::create_dir_all(&pngs).unwrap();
    let scratch = dir.path().join("rrd/never-served");
    let mut failures = Vec::new();
    // (report, what it is drawn for, RRD files, PNG)
    let mut jobs: Vec<(&Report, String, Vec<PathBuf>, PathBuf)> = Vec::new();
    for r in &reports {
        let before = jobs.len();
        for (key, resource) in resources.iter().filter(|((ty, _), _)| *ty == r.ty) {
            if !offered_on(r, &key.0, resource) {
                continue;
            }
            let files = r
                .columns
                .iter()
                .map(|c| dir_of(key).join(format!("{c}.rrd")))
                .collect();
            let png = pngs.join(format!("{}-{}.png", r.id, key.1.replace('/', "_")));
            jobs.push((r, format!("{}/{}", key.0, key.1), files, png));
        }
        if jobs.len() > before {
            continue;
        }
        // No resource has all the columns: fine only if what is missing is
        // what no server here reports. Drawn from empty RRD files, which
        // still checks the command.
        let missing: Vec<&String> = r
            .columns
            .iter()
            .filter(|c| !resources.values().any(|res| res.series.contains_key(*c)))
            .collect();
        if missing.is_empty() || !missing.iter().all(|c| explained.contains_key(c.as_str())) {
            failures.push(format!(
                "{}: no resource has all of {:?} (never served: {missing:?})",
                r.id, r.columns
            ));
            continue;
        }
        std::fs::create_dir_all(&scratch).unwrap();
        let files: Vec<PathBuf> = r
            .columns
            .iter()
            .map(|c| scratch.join(format!("{c}.rrd")))
            .collect();
        let creates: Vec<String> = r
            .columns
            .iter()
            .zip(&files)
            .map(|(c, f)| create_rrd(f, c, "GAUGE", t0 - STEP))
            .collect();
        rrdtool_batch(&creates);
        println!(
            "{}: drawn without data, nothing here serves {missing:?}",
            r.id
        );
        needs_more.push(r.id.clone());
        let png = pngs.join(format!("{}-empty.png", r.id));
        jobs.push((r, "no data".into(), files, png));
    }
    let workers = std::thread::available_parallelism().map_or(4, |n| n.get());
    let drawn_failures: Vec<String> = std::thread::scope(|scope| {
        let chunks: Vec<_> = jobs
            .chunks(jobs.len().div_ceil(workers).max(1))
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .filter_map(|(r, what, files, png)| {
                            draw(r, files, start, end, png)
                                .err()
                                .map(|e| format!("{} for {what}: {e}", r.id))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        chunks.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    failures.extend(drawn_failures);
    let needs_section = readme
        .split_once(NEEDS_MORE_HEADING)
        .map(|(_, rest)| rest.split("\n#").next().unwrap_or(""))
        .unwrap_or("");
    for id in &needs_more {
        if !needs_section.contains(&format!("`{id}`")) {
            failures.push(format!(
                "{id} is offered on no resource of this host: \"{NEEDS_MORE_HEADING}\" in opennms/README.md must say what it needs"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{}:\n{}",
        kind.label(),
        failures.join("\n")
    );
    println!(
        "{} reports drawn {} times after {:?}",
        reports.len(),
        jobs.len(),
        started.elapsed()
    );

    if kind == ServerKind::Redis70 && std::env::var_os("REDIS_SNMP_WRITE_DOCS").is_some() {
        let out = repo_root().join("docs");
        std::fs::create_dir_all(&out).unwrap();
        let set = redis_snmp::redis::readings::row_key("main", "set");
        for (id, resource) in [
            ("redis.connections", format!("{NODE}/")),
            ("redis.memory", format!("{NODE}/")),
            ("redis.commands", format!("{NODE}/")),
            (
                "redis.instance.memory.breakdown",
                "redisInstance/main".into(),
            ),
            ("redis.command.calls", format!("redisCommand/{set}")),
            ("puppet.runtime", format!("{NODE}/")),
            ("puppet.resources", format!("{NODE}/")),
        ] {
            let (_, _, _, png) = jobs
                .iter()
                .find(|(r, what, _, _)| r.id == id && *what == resource)
                .unwrap_or_else(|| panic!("{id} was not drawn for {resource}"));
            let to = out.join(format!("opennms-{}.png", id.replace('.', "-")));
            std::fs::copy(png, &to).unwrap();
            println!("wrote {}", to.display());
        }
    }
}

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
