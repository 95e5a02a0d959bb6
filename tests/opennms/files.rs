//! What the OpenNMS test reads: the files of `opennms/` (a small XML
//! reader, Java `.properties`, the data collection, graphs and events as
//! OpenNMS reads them), the agent's tables as OpenNMS sees them, and
//! resource labels evaluated the way OpenNMS evaluates `resourceLabel`.
//! Part of tests/opennms.rs, with `loader` and `collection`.

// Each part of tests/opennms.rs uses a part of this.
#![allow(dead_code)]

use super::loader;
use redis_snmp::metrics::{
    self, AclField, ClientField, Column, CommandField, ErrorField, KeyField, LatencyField, Layout,
    NotificationDef, ObjectDef, RowIndex, SentinelField, StreamGroupField,
};
use redis_snmp::smi::Syntax;
use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::PathBuf;
use std::process::Command;
use testkit::repo_root;

pub const GROUP_FILE: &str = "etc/datacollection/redis-snmp.xml";
pub const EVENTS_FILE: &str = "etc/events/redis-snmp.events.xml";
pub const GRAPH_FILE: &str = "etc/snmp-graph.properties.d/redis-snmp-graph.properties";
/// Issue 16: a threshold group for `etc/thresholds.xml` and a package for
/// `etc/threshd-configuration.xml` (OpenNMS reads one file each, no `.d`
/// directory, so these are snippets to merge, not files to copy).
pub const THRESHOLDS_FILE: &str = "snippets/thresholds.xml";
pub const THRESHD_FILE: &str = "snippets/threshd-configuration.xml";

/// Each Down notification and the Up that must clear its alarm.
pub const CLEARED_BY: &[(&str, &str)] = &[
    ("redisInstanceDown", "redisInstanceUp"),
    ("redisReplicationLinkDown", "redisReplicationLinkUp"),
    ("redisThresholdCrossed", "redisThresholdRearmed"),
    ("redisSentinelMasterDown", "redisSentinelMasterUp"),
    ("redisSentinelQuorumLost", "redisSentinelQuorumReached"),
    ("redisClusterStateFail", "redisClusterStateOk"),
    (
        "redisClusterSlotsFailing",
        "redisClusterSlotsFailingCleared",
    ),
    ("puppetRunFailed", "puppetRunRecovered"),
    ("puppetAgentStale", "puppetAgentStaleCleared"),
    ("puppetAgentDisabled", "puppetAgentEnabled"),
    ("puppetNotConverging", "puppetConverged"),
    ("puppetRunStorm", "puppetRunStormCleared"),
];

/// The resource type OpenNMS uses for node-level data in graph reports.
pub const NODE: &str = "nodeSnmp";

/// The section of `opennms/README.md` that names the reports a host needs
/// more for than the live test's (a master with AOF, a replica, a cluster
/// node, a sentinel, `puppet apply`) has.
pub const NEEDS_MORE_HEADING: &str = "### Reports that need more than the test host has";

/// OpenNMS's `command.prefix` (etc/snmp-graph.properties) without the
/// binary and the output (`graph -`).
pub const COMMAND_PREFIX: &str =
    "--imgformat PNG --font DEFAULT:7 --font TITLE:10 --start {startTime} --end {endTime}";

/// Seconds between two samples in the RRD files of the live test.
pub const STEP: u64 = 60;

/// How many times the live test walks the agent.
pub const SAMPLES: usize = 12;

pub fn opennms_path(rel: &str) -> PathBuf {
    repo_root().join("opennms").join(rel)
}

pub fn read_opennms(rel: &str) -> String {
    let path = opennms_path(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

// ---------------------------------------------------------------------------
// Tools

/// Runs a tool; a missing tool fails the test with the package to install.
pub fn run_tool(program: &str, package: &str, args: &[&str]) -> std::process::Output {
    match Command::new(program).args(args).output() {
        Ok(out) => out,
        Err(e) if e.kind() == ErrorKind::NotFound => panic!(
            "{program} is missing: install Debian's {package} package (scripts/install-test-deps.sh does)"
        ),
        Err(e) => panic!("running {program}: {e}"),
    }
}

pub fn xmllint(args: &[&str]) -> std::process::Output {
    run_tool("xmllint", "libxml2-utils", args)
}

/// `../shared/opennms-xsd`, if it is there.
pub fn xsd_dir() -> Option<PathBuf> {
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
pub struct Element {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Element>,
    pub text: String,
}

impl Element {
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn req(&self, name: &str) -> &str {
        self.attr(name)
            .unwrap_or_else(|| panic!("<{}> without {name}=", self.name))
    }

    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    pub fn text_of(&self, name: &str) -> Option<String> {
        self.child(name).map(|c| c.text.trim().to_string())
    }

    pub fn count(&self, name: &str) -> usize {
        self.children
            .iter()
            .map(|c| usize::from(c.name == name) + c.count(name))
            .sum()
    }
}

pub fn unescape_xml(s: &str) -> String {
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

pub fn parse_tag(tag: &str) -> (String, Vec<(String, String)>) {
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

pub fn parse_xml(text: &str) -> Element {
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
pub fn xml_file(rel: &str, counted: &[&str]) -> Element {
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

pub fn trim_properties_ws(s: &str) -> &str {
    s.trim_start_matches([' ', '\t', '\x0c'])
}

pub fn ends_with_odd_backslashes(s: &str) -> bool {
    s.chars().rev().take_while(|&c| c == '\\').count() % 2 == 1
}

pub fn unescape_properties(s: &str) -> String {
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

pub fn parse_properties(text: &str) -> Vec<(String, String)> {
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
pub fn opennms_command_args(command: &str) -> Vec<String> {
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
pub struct MibObj {
    pub group: String,
    pub oid: String,
    pub instance: String,
    pub alias: String,
    pub ty: String,
}

/// The `mibObj`s of the data collection, with their groups.
pub fn collection() -> Vec<MibObj> {
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
/// reads them: OpenNMS's SNMP collection reads no others (see loader/collection.rs).
pub fn resource_types() -> Vec<loader::ResourceTypeDef> {
    let root = xml_file(GROUP_FILE, &["resourceType", "parameter"]);
    assert_eq!(root.name, "datacollection-group");
    root.all("resourceType")
        .map(loader::resource_type_def)
        .collect()
}

#[derive(Debug, Default)]
pub struct Report {
    pub id: String,
    pub name: String,
    pub columns: Vec<String>,
    pub ty: String,
    pub command: String,
}

/// The ids `reports=` lists, and the reports the file defines.
pub fn reports() -> (Vec<String>, Vec<Report>) {
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
pub struct EventDef {
    pub uei: String,
    pub descr: String,
    pub logmsg: String,
    pub severity: String,
    pub mask: Vec<(String, Vec<String>)>,
    /// reduction-key, alarm-type, clear-key
    pub alarm: Option<(String, u32, Option<String>)>,
    /// parmid, (value, decoded string)
    pub decodes: Vec<(String, Vec<(String, String)>)>,
}

pub fn events() -> Vec<EventDef> {
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

pub fn all_objects() -> impl Iterator<Item = &'static ObjectDef> {
    metrics::redis_objects().chain(metrics::puppet_objects())
}

pub fn object_named(name: &str) -> &'static ObjectDef {
    all_objects()
        .find(|d| d.name == name)
        .unwrap_or_else(|| panic!("no object {name} in redis_snmp::metrics"))
}

pub fn object_oid(def: &ObjectDef) -> String {
    Layout::default_layout().object_oid(def).to_string()
}

pub fn object_at(oid: &str) -> Option<&'static ObjectDef> {
    all_objects().find(|d| object_oid(d) == oid)
}

/// Whether the object named `alias` is the key column of a string-indexed
/// table (the instance's name, `/`, the row's string): a new table with
/// one must be placed here.
pub fn is_row_key(alias: &str) -> bool {
    let Some(def) = metrics::redis_objects().find(|d| d.name == alias) else {
        return false;
    };
    CommandField::of(def) == Some(CommandField::Key)
        || ErrorField::of(def) == Some(ErrorField::Key)
        || SentinelField::of(def) == Some(SentinelField::Key)
        || LatencyField::of(def) == Some(LatencyField::Key)
        || ClientField::of(def) == Some(ClientField::Key)
        || KeyField::of(def) == Some(KeyField::Key)
        || StreamGroupField::of(def) == Some(StreamGroupField::Key)
        || metrics::ModuleField::of(def) == Some(metrics::ModuleField::Key)
        // The instance's name and the row's number (a hash).
        || AclField::of(def) == Some(AclField::Key)
}

/// How the rows of an OpenNMS `instance` (a resource type, or `0` for
/// scalars: `None`) are indexed, from the table in `redis_snmp::metrics`.
pub fn row_index(instance: &str) -> Option<RowIndex> {
    if instance == "0" {
        return None;
    }
    let table = metrics::TABLES
        .iter()
        .chain(metrics::PUPPET_TABLES)
        .find(|t| t.resource_type == instance)
        .unwrap_or_else(|| panic!("no table is stored as resource type {instance}"));
    Some(table.index)
}

/// Whether `suffix` (dotted) is a row of `index` (`None`: the scalar `.0`).
pub fn fits_index(index: Option<RowIndex>, suffix: &str) -> bool {
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
pub fn opennms_types(syntax: Syntax) -> &'static [&'static str] {
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
pub fn named_numbers(def: &ObjectDef) -> Option<Vec<(&'static str, i32)>> {
    if def.syntax == Syntax::TruthValue {
        return Some(vec![("true", 1), ("false", 2)]);
    }
    // The catalogue links each enumerated object to its enumeration.
    let table = def.enumeration?;
    Some(table.to_vec())
}

pub fn notification_oid(def: &NotificationDef) -> String {
    Layout::default_layout().notification_oid(def).to_string()
}

/// The notification OID an event's mask matches: its `trapoid`, or (as
/// OpenNMS maps an SNMPv2 notification, RFC 3584 §3.2) enterprise `id`,
/// generic 6 and `specific` N for `id.0.N`.
pub fn mask_trap_oid(mask: &[(String, Vec<String>)]) -> Option<String> {
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

pub fn label_symbol(
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

pub fn resource_label(expression: &str, index: &str, strings: &BTreeMap<String, String>) -> String {
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
pub fn string_index(s: &str) -> String {
    std::iter::once(s.len().to_string())
        .chain(s.bytes().map(|b| b.to_string()))
        .collect::<Vec<_>>()
        .join(".")
}
