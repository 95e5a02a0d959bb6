//! Issue 15: the data collection (`opennms/etc/datacollection/redis-snmp.xml`)
//! and the alias table and left-out list of `opennms/README.md`, written from
//! the catalogue as the man page is written from the command line: the
//! groups, what is not collected and the resource types from
//! `redis_snmp::metrics` (`src/metrics/opennms.rs`), each object's OID,
//! alias and syntax from its row. The prose is here.
//!
//! Regenerate after a catalogue change:
//! `REDIS_SNMP_WRITE_DOCS=1 cargo nextest run --features system-tests --test opennms generated`

use redis_snmp::metrics::{
    opennms_instance, redis_objects, CollectionGroup, Layout, ObjectDef, Source, Storage,
    COLLECTION_GROUPS, NOT_COLLECTED, RESOURCE_TYPES,
};
use redis_snmp::smi::Syntax;
use std::path::Path;

/// How to regenerate, as a failing check says it.
pub const REGENERATE: &str =
    "REDIS_SNMP_WRITE_DOCS=1 cargo nextest run --features system-tests --test opennms generated";

const HEADER: &[&str] = &[
    "redis-snmp: what OpenNMS collects from REDIS-SERVER-MIB (.1.3.6.1.4.1.20267.400) \
     and PUPPET-AGENT-MIB (.1.3.6.1.4.1.20267.401), served by the redis-snmp AgentX \
     subagent through Net-SNMP's snmpd.",
    "Generated from the agent's catalogue (src/metrics/) by tests/opennms/collection.rs; \
     edit those, not this file.",
];

const INSTALL: &str = "  Install: copy to $OPENNMS_HOME/etc/datacollection/ and add
      <include-collection dataCollectionGroup=\"redis-snmp\"/>
  to the snmp-collection of etc/datacollection-config.xml (see opennms/README.md).";

const ABOUT: &[&str] = &[
    "The resource types of the tables (redisInstance, redisKeyspace, ...) are declared \
     here, in this data collection group: OpenNMS's SNMP collection knows only the \
     resource types of the snmp-collection itself and of the groups it includes with \
     dataCollectionGroup= (DefaultDataCollectionConfigDao.translateConfig), and refuses \
     the whole data collection configuration when a mibObj names any other instance \
     (DataCollectionConfigLookupUtils.validateResourceTypes). etc/resource-types.d is \
     not read by SNMP collection; the web UI reads the types declared here as well \
     (DefaultResourceTypesDao), so no resource-types.d file is needed.",
    "Aliases are the MIB's names where they fit in 19 characters, and shortened \
     where they do not; the six legacy aliases of the Perl agent's OpenNMS files \
     are kept as they were. Counters are \"counter\"; gauges, 64-bit gauges \
     (REDISUnsigned64: Counter64 on the wire, a gauge in meaning), Integer32, \
     enumerations and TruthValues (true(1), false(2)) are \"gauge\"; text is \"string\". \
     Fractions are served as scaled integers (ratios in hundredths, command \
     latencies in hundredths or thousandths of a microsecond): the graphs divide.",
];

const RESOURCE_TYPES_ABOUT: &str = "The resource types of the tables. Every table of \
    REDIS-SERVER-MIB is indexed by the instance's number first (its place in the agent's \
    configuration, from 1); PUPPET-AGENT-MIB's puppetCertificate rows (the agent's \
    certificate, its CA, its CRL) by their own number alone, the number of their kind, and \
    are stored under it, labelled by their file's path. The string-indexed tables (commands, error prefixes, sentinel masters, \
    latency events, clients by name and by user) have the string as the rest of the \
    index, as a length and one arc per character: \"get\" on instance 1 is the row \
    1.3.103.101.116. Their rows are stored under their key column (redisCmdKey, \
    redisErrKey, redisSntKey, redisLatKey, redisCnKey, redisCuKey): the instance's name \
    and the row's string, each with letters, digits and \"-\" kept and every other byte \
    written as \"_\" and two hex digits, joined by a dot (\"sessions.config_7Cget\"). \
    OpenNMS's SiblingColumnStorageStrategy drops non-ASCII characters and turns \"/\" \
    into \"-\" before the replace-all rule, so distinct raw strings could share a \
    directory (\"cache-1/get\" and \"cache/1-get\" both become cache-1-get); the key's \
    text is left unchanged by all three steps and is distinct for distinct rows. The \
    web UI takes ${index} and ${subIndex(...)} of a label from the directory's name, so \
    ${subIndex(0,1)} is the instance's (escaped) name there: \"config|get (instance \
    sessions)\". Keyspace and replica rows are numbered, and stored under their index. \
    The instance rows are stored under the instance's name (redisInstanceName), so a \
    graph stays with its Redis when instances are added to or reordered in the agent's \
    configuration; characters other than letters, digits, dot, dash and underscore \
    become underscores in the directory name (see opennms/README.md).";

const SYSTEM_DEFS_ABOUT: &str = "redis-snmp is a subagent of Net-SNMP's snmpd, whose \
    sysObjectID is .1.3.6.1.4.1.8072.3.2.N: every Net-SNMP node is asked for these \
    objects. Where redis-snmp does not run, snmpd answers noSuchObject and nothing is \
    stored. Give the nodes their own sysoidMask or ipList to narrow it.";

/// Net-SNMP's enterprise (NET-SNMP-MIB netSnmpAgentOIDs).
const SYSOID_MASK: &str = ".1.3.6.1.4.1.8072.3.";

/// The replace-all rule of every sibling-stored type: what is no letter,
/// digit, `.`, `_` or `-` becomes `_` (see `opennms/README.md`).
const REPLACE_ALL: &str = "s/[^A-Za-z0-9._-]/_/";

/// Words of `text` in lines of at most `width` characters, the first
/// starting with `first`, the others with `rest`.
fn wrap(text: &str, first: &str, rest: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.len() + 1 + word.len() > width {
            lines.push(std::mem::replace(&mut line, rest.to_string()));
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    lines.push(line);
    lines
}

/// An indented `<!-- ... -->` comment.
fn comment(out: &mut String, text: &str) {
    let mut lines = wrap(text, "  <!-- ", "       ", 92);
    lines.last_mut().unwrap().push_str(" -->");
    for l in lines {
        out.push_str(&l);
        out.push('\n');
    }
}

fn attr(value: &str) -> String {
    value
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The OpenNMS `type` of a syntax: counters are `counter`; every other
/// number a `gauge` (Gauge64 is Counter64 on the wire but a gauge in
/// meaning: stored as one); text a `string` (kept in strings.properties).
fn opennms_type(syntax: Syntax) -> &'static str {
    match syntax {
        Syntax::Counter32 | Syntax::Counter64 => "counter",
        Syntax::Gauge32
        | Syntax::Gauge64
        | Syntax::Integer32
        | Syntax::Enum
        | Syntax::TruthValue => "gauge",
        Syntax::DisplayString | Syntax::OctetString => "string",
        Syntax::TimeTicks => "timeticks",
        Syntax::ObjectIdentifier => panic!("OpenNMS collects no OBJECT IDENTIFIER"),
    }
}

fn objects_of(group: &CollectionGroup) -> impl Iterator<Item = &'static ObjectDef> {
    group.objects.iter().flat_map(|a| a.iter())
}

fn is_puppet(group: &CollectionGroup) -> bool {
    objects_of(group).any(|o| matches!(o.source, Source::Puppet(_)))
}

/// `opennms/etc/datacollection/redis-snmp.xml`, whole.
pub fn data_collection() -> String {
    let layout = Layout::default_layout();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!--\n");
    let mut paragraphs: Vec<String> = HEADER
        .iter()
        .map(|p| wrap(p, "  ", "  ", 84).join("\n"))
        .collect();
    paragraphs.push(INSTALL.to_string());
    paragraphs.extend(ABOUT.iter().map(|p| wrap(p, "  ", "  ", 84).join("\n")));
    let mut left_out = vec!["  Not collected:".to_string()];
    for n in NOT_COLLECTED {
        left_out.extend(wrap(n.why, "  - ", "    ", 84));
    }
    paragraphs.push(left_out.join("\n"));
    out.push_str(&paragraphs.join("\n\n"));
    out.push_str(
        "\n-->\n<datacollection-group \
         xmlns=\"http://xmlns.opennms.org/xsd/config/datacollection\" name=\"redis-snmp\">\n\n",
    );

    comment(&mut out, RESOURCE_TYPES_ABOUT);
    for (i, t) in RESOURCE_TYPES.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!(
            "  <resourceType name=\"{}\" label=\"{}\" resourceLabel=\"{}\">\n",
            attr(t.name),
            attr(t.label),
            attr(t.resource_label)
        ));
        out.push_str("    <persistenceSelectorStrategy class=\"org.opennms.netmgt.collection.support.PersistAllSelectorStrategy\"/>\n");
        match t.storage {
            Storage::Index => out.push_str("    <storageStrategy class=\"org.opennms.netmgt.collection.support.IndexStorageStrategy\"/>\n"),
            Storage::Sibling(column) => {
                let alias = redis_objects()
                    .find(|o| o.name == column)
                    .unwrap_or_else(|| panic!("{}: no column {column}", t.name))
                    .opennms_alias();
                out.push_str("    <storageStrategy class=\"org.opennms.netmgt.dao.support.SiblingColumnStorageStrategy\">\n");
                out.push_str(&format!(
                    "      <parameter key=\"sibling-column-name\" value=\"{}\"/>\n",
                    attr(alias)
                ));
                out.push_str(&format!(
                    "      <parameter key=\"replace-all\" value=\"{}\"/>\n",
                    attr(REPLACE_ALL)
                ));
                out.push_str("    </storageStrategy>\n");
            }
        }
        out.push_str("  </resourceType>\n");
    }

    for g in COLLECTION_GROUPS {
        out.push('\n');
        comment(&mut out, g.about);
        let scalars = objects_of(g).all(|o| opennms_instance(o) == "0");
        out.push_str(&format!(
            "  <group name=\"{}\" ifType=\"{}\">\n",
            attr(g.name),
            if scalars { "ignore" } else { "all" }
        ));
        for o in objects_of(g) {
            out.push_str(&format!(
                "    <mibObj oid=\"{}\" instance=\"{}\" alias=\"{}\" type=\"{}\"/>\n",
                layout.object_oid(o),
                attr(opennms_instance(o)),
                attr(o.opennms_alias()),
                opennms_type(o.syntax)
            ));
        }
        out.push_str("  </group>\n");
    }

    out.push('\n');
    comment(&mut out, SYSTEM_DEFS_ABOUT);
    for (i, (name, puppet)) in [
        ("Net-SNMP with redis-snmp: Redis", false),
        ("Net-SNMP with redis-snmp: Puppet agent", true),
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!("  <systemDef name=\"{}\">\n", attr(name)));
        out.push_str(&format!("    <sysoidMask>{SYSOID_MASK}</sysoidMask>\n"));
        out.push_str("    <collect>\n");
        for g in COLLECTION_GROUPS.iter().filter(|g| is_puppet(g) == puppet) {
            out.push_str(&format!("      <includeGroup>{}</includeGroup>\n", g.name));
        }
        out.push_str("    </collect>\n");
        out.push_str("  </systemDef>\n");
    }
    out.push_str("</datacollection-group>\n");
    out
}

/// The first line of a generated section of `opennms/README.md`, and its
/// last.
fn markers(section: &str) -> (String, String) {
    (
        format!("<!-- {section}: generated from the catalogue by tests/opennms/collection.rs -->"),
        format!("<!-- end of {section} -->"),
    )
}

/// The alias table: every collected object whose alias is not its name.
fn alias_table() -> String {
    let mut out = String::from("| MIB object | alias |\n|---|---|\n");
    for o in COLLECTION_GROUPS.iter().flat_map(objects_of) {
        if o.opennms_alias() != o.name {
            out.push_str(&format!("| `{}` | `{}` |\n", o.name, o.opennms_alias()));
        }
    }
    out
}

/// What is not collected, and why.
fn left_out() -> String {
    let mut out = String::from("Not collected:\n\n");
    for n in NOT_COLLECTED {
        out.push_str(&wrap(n.why, "- ", "  ", 76).join("\n"));
        out.push('\n');
    }
    out
}

/// `readme` with its generated sections written anew.
pub fn readme(readme: &str) -> String {
    let mut text = readme.to_string();
    for (section, content) in [("alias table", alias_table()), ("left out", left_out())] {
        let (begin, end) = markers(section);
        let start = text
            .find(&begin)
            .unwrap_or_else(|| panic!("opennms/README.md lacks the line {begin}"));
        let stop = text[start..]
            .find(&end)
            .unwrap_or_else(|| panic!("opennms/README.md lacks the line {end}"))
            + start;
        text.replace_range(start..stop, &format!("{begin}\n{content}"));
    }
    text
}

/// Whether the file at `path` is `generated`; if not, the difference
/// (`diff -u`) and how to regenerate. With `write` (and
/// `REDIS_SNMP_WRITE_DOCS` set) the file is rewritten instead.
pub fn check(path: &Path, generated: &str, write: bool) -> Result<(), String> {
    testkit::generated::check(path, generated, write, REGENERATE)
}
