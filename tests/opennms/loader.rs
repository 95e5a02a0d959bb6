//! Issue 12: `opennms/` loaded the way OpenNMS loads it.
//!
//! Each rule below is taken from OpenNMS's own code (the public repository
//! OpenNMS/opennms); the file it comes from is named next to it. The rules
//! are re-stated here, not copied: what the Java does, done in Rust on the
//! files of `opennms/`.
//!
//! - Data collection: the `include-collection` lines of an snmp-collection
//!   pull in system definitions and their groups, and register resource
//!   types; a `mibObj` whose `instance` is no registered resource type makes
//!   the whole data collection configuration fail to load.
//! - Resource types: every class named exists in OpenNMS, with the
//!   parameters it accepts; the sibling column is a string of the same type;
//!   the directory OpenNMS makes of a row's sibling value, and the label the
//!   web UI makes of the directory name.
//! - Aliases: RRD data source names.
//! - Graphs: which reports OpenNMS loads from an included properties file,
//!   and which it offers on a resource.
//! - Events: the enterprise, generic and specific OpenNMS derives from an
//!   SNMPv2 notification's OID, how a mask matches them, and how alarm keys
//!   are expanded.
//! - Thresholds (issue 16): each `ds-type` is `node` or a resource type of the
//!   collection, each `ds-name`, expression variable and `ds-label` an alias
//!   collected for it, values in the collected units, and the package selects
//!   the collected nodes for collectd's SNMP service.
//!
//! Every rule is also run against a deliberately broken copy of the file it
//! checks, which must fail: the tests test themselves.

use super::{
    notification_oid, object_at, parse_properties, parse_xml, read_opennms, resource_label,
    sibling_dir, Element, EVENTS_FILE, GRAPH_FILE, GROUP_FILE, NODE, THRESHD_FILE, THRESHOLDS_FILE,
};
use redis_snmp::metrics::{NotificationDef, PUPPET_NOTIFICATIONS, REDIS_NOTIFICATIONS};
use std::collections::{BTreeMap, BTreeSet};

/// The system definitions of `opennms/etc/datacollection/redis-snmp.xml`.
const REDIS_SYSTEM_DEF: &str = "Net-SNMP with redis-snmp: Redis";
const PUPPET_SYSTEM_DEF: &str = "Net-SNMP with redis-snmp: Puppet agent";

/// The one line the README tells to add to `datacollection-config.xml`.
pub(super) const INSTALL_LINE: &str = r#"<include-collection dataCollectionGroup="redis-snmp"/>"#;

// ---------------------------------------------------------------------------
// Classes that exist in OpenNMS. A class not listed here fails: check it in
// OpenNMS's sources and add it with the file that defines it.

const CLASSES: &[(&str, &str)] = &[
    (
        "org.opennms.netmgt.collection.support.PersistAllSelectorStrategy",
        "features/collection/api/src/main/java/org/opennms/netmgt/collection/support/PersistAllSelectorStrategy.java",
    ),
    (
        "org.opennms.netmgt.collection.support.IndexStorageStrategy",
        "features/collection/api/src/main/java/org/opennms/netmgt/collection/support/IndexStorageStrategy.java",
    ),
    (
        "org.opennms.netmgt.dao.support.SiblingColumnStorageStrategy",
        "opennms-dao/src/main/java/org/opennms/netmgt/dao/support/SiblingColumnStorageStrategy.java",
    ),
];

// ---------------------------------------------------------------------------
// Data collection files, read

#[derive(Debug, Clone)]
pub(super) struct ResourceTypeDef {
    pub name: String,
    pub label: String,
    pub resource_label: Option<String>,
    pub persistence: String,
    pub storage: String,
    pub params: Vec<(String, String)>,
}

impl ResourceTypeDef {
    pub fn param(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub fn is_sibling(&self) -> bool {
        self.storage == "org.opennms.netmgt.dao.support.SiblingColumnStorageStrategy"
    }
}

#[derive(Debug, Clone)]
pub(super) struct MibObjDef {
    pub oid: String,
    pub instance: String,
    pub alias: String,
    pub ty: String,
}

#[derive(Debug, Clone)]
pub(super) struct GroupDef {
    pub name: String,
    pub objs: Vec<MibObjDef>,
    pub include_groups: Vec<String>,
}

#[derive(Debug, Clone)]
pub(super) struct SystemDefDef {
    pub name: String,
    pub groups: Vec<String>,
}

/// One `datacollection-group` file.
#[derive(Debug, Clone)]
pub(super) struct GroupFile {
    pub name: String,
    pub resource_types: Vec<ResourceTypeDef>,
    pub groups: Vec<GroupDef>,
    pub system_defs: Vec<SystemDefDef>,
}

pub(super) fn resource_type_def(t: &Element) -> ResourceTypeDef {
    let storage = t.child("storageStrategy").expect("no storageStrategy");
    ResourceTypeDef {
        name: t.req("name").to_string(),
        label: t.req("label").to_string(),
        resource_label: t.attr("resourceLabel").map(String::from),
        persistence: t
            .child("persistenceSelectorStrategy")
            .expect("no persistenceSelectorStrategy")
            .req("class")
            .to_string(),
        storage: storage.req("class").to_string(),
        params: storage
            .all("parameter")
            .map(|p| (p.req("key").to_string(), p.req("value").to_string()))
            .collect(),
    }
}

pub(super) fn parse_group_file(text: &str) -> GroupFile {
    let root = parse_xml(text);
    assert_eq!(root.name, "datacollection-group");
    GroupFile {
        name: root.req("name").to_string(),
        resource_types: root.all("resourceType").map(resource_type_def).collect(),
        groups: root
            .all("group")
            .map(|g| GroupDef {
                name: g.req("name").to_string(),
                objs: g
                    .all("mibObj")
                    .map(|o| MibObjDef {
                        oid: o.req("oid").to_string(),
                        instance: o.req("instance").to_string(),
                        alias: o.req("alias").to_string(),
                        ty: o.req("type").to_string(),
                    })
                    .collect(),
                include_groups: g
                    .all("includeGroup")
                    .map(|i| i.text.trim().to_string())
                    .collect(),
            })
            .collect(),
        system_defs: root
            .all("systemDef")
            .map(|s| SystemDefDef {
                name: s.req("name").to_string(),
                groups: s
                    .child("collect")
                    .expect("systemDef without collect")
                    .all("includeGroup")
                    .map(|i| i.text.trim().to_string())
                    .collect(),
            })
            .collect(),
    }
}

/// An snmp-collection after OpenNMS has resolved its includes.
#[derive(Debug, Default)]
pub(super) struct LoadedCollection {
    pub name: String,
    /// Registered resource types, by name.
    pub resource_types: BTreeMap<String, ResourceTypeDef>,
    pub groups: Vec<GroupDef>,
    pub system_defs: Vec<SystemDefDef>,
    /// What OpenNMS only logs (and so silently does not collect).
    pub warnings: Vec<String>,
}

/// `java.util.regex.Matcher.matches()` of an `exclude-filter`, for the
/// patterns the README gives: literal text, optionally anchored, with `.*`.
fn exclude_matches(filter: &str, name: &str) -> bool {
    let pattern = filter.strip_prefix('^').unwrap_or(filter);
    let pattern = pattern.strip_suffix('$').unwrap_or(pattern);
    let parts: Vec<&str> = pattern.split(".*").collect();
    for part in &parts {
        assert!(
            !part.contains(['.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '\\', '^', '$']),
            "exclude-filter {filter:?}: this test emulates literal text and .* only"
        );
    }
    // Anchored at both ends, as matches() is.
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if parts.len() == 1 {
        return name == first;
    }
    if !name.starts_with(first) || !name[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// Loads `datacollection-config.xml` text with `etc/datacollection/` files,
/// as OpenNMS does, and returns its snmp-collection named `default`.
pub(super) fn load_datacollection(
    config: &str,
    files: &[&str],
) -> Result<LoadedCollection, String> {
    // DataCollectionConfigParser.parseExternalResources
    // (opennms-config/src/main/java/org/opennms/netmgt/config/DataCollectionConfigParser.java):
    // every file of etc/datacollection/ is a datacollection-group, kept by
    // its name.
    let external: BTreeMap<String, GroupFile> = files
        .iter()
        .map(|f| parse_group_file(f))
        .map(|g| (g.name.clone(), g))
        .collect();
    let root = parse_xml(config);
    assert_eq!(root.name, "datacollection-config");
    let mut loaded = Vec::new();
    let mut registered: BTreeMap<String, ResourceTypeDef> = BTreeMap::new();
    for collection in root.all("snmp-collection") {
        let mut c = LoadedCollection {
            name: collection.req("name").to_string(),
            ..Default::default()
        };
        // DefaultDataCollectionConfigDao.translateConfig
        // (opennms-config/src/main/java/org/opennms/netmgt/config/DefaultDataCollectionConfigDao.java):
        // the resource types of the snmp-collection itself are registered.
        for t in collection.all("resourceType") {
            let t = resource_type_def(t);
            registered.insert(t.name.clone(), t);
        }
        for include in collection.all("include-collection") {
            // DataCollectionConfigParser.parseCollection
            if let Some(group_name) = include.attr("dataCollectionGroup") {
                // addDatacollectionGroup: a missing group is an error; each
                // systemDef of the group whose name no exclude-filter
                // matches (Pattern.matcher(name).matches()) is added.
                let file = external
                    .get(group_name)
                    .ok_or_else(|| format!("Group {group_name} does not exist."))?;
                let excludes: Vec<String> = include
                    .all("exclude-filter")
                    .map(|e| e.text.trim().to_string())
                    .collect();
                for sd in &file.system_defs {
                    if !excludes.iter().any(|e| exclude_matches(e, &sd.name)) {
                        add_system_def(&mut c, sd, Some(group_name), &external);
                    }
                }
                // translateConfig: the resource types of a group included with
                // dataCollectionGroup= are registered, all of them.
                for t in &file.resource_types {
                    registered.insert(t.name.clone(), t.clone());
                }
            } else if let Some(sd_name) = include.attr("systemDef") {
                // One system definition, looked up in every file; its
                // file's resource types are NOT registered (translateConfig
                // registers only those of dataCollectionGroup= includes).
                let sd = external
                    .values()
                    .flat_map(|f| &f.system_defs)
                    .find(|sd| sd.name == sd_name)
                    .ok_or_else(|| format!("Can't find system definition {sd_name}"))?;
                add_system_def(&mut c, sd, None, &external);
            } else {
                return Err("You must specify at least the data collection group name or system definition name for the include-collection attribute".into());
            }
        }
        loaded.push(c);
    }
    // DataCollectionConfigLookupUtils.validateResourceTypes
    // (opennms-config-api/src/main/java/org/opennms/netmgt/config/api/DataCollectionConfigLookupUtils.java),
    // called at the end of translateConfig: over every group of every
    // collection, an instance must be ifIndex, a registered resource type or
    // a non-negative integer; anything else throws, and the whole
    // configuration fails to load.
    for c in &loaded {
        for g in &c.groups {
            for o in &g.objs {
                let ok = o.instance == "ifIndex"
                    || registered.contains_key(&o.instance)
                    || o.instance.trim().parse::<i32>().is_ok_and(|n| n >= 0);
                if !ok {
                    return Err(format!(
                        "instance '{}' invalid in mibObj definition for OID '{}' in collection '{}' for group '{}'",
                        o.instance, o.oid, c.name, g.name
                    ));
                }
            }
        }
    }
    let mut default = loaded
        .into_iter()
        .find(|c| c.name == "default")
        .ok_or("no snmp-collection named default")?;
    default.resource_types = registered;
    Ok(default)
}

/// DataCollectionConfigParser.addSystemDef: a systemDef already in the
/// collection (by name) is skipped; each group it names is looked up in its
/// own file first, then in any file, and added once; a group found nowhere
/// is only logged.
fn add_system_def(
    c: &mut LoadedCollection,
    sd: &SystemDefDef,
    file: Option<&str>,
    external: &BTreeMap<String, GroupFile>,
) {
    if c.system_defs.iter().any(|s| s.name == sd.name) {
        c.warnings
            .push(format!("system definition {} already exists", sd.name));
        return;
    }
    c.system_defs.push(sd.clone());
    for name in &sd.groups {
        let own = file
            .and_then(|f| external.get(f))
            .and_then(|f| f.groups.iter().find(|g| &g.name == name));
        let group = own.or_else(|| {
            external
                .values()
                .flat_map(|f| &f.groups)
                .find(|g| &g.name == name)
        });
        match group {
            None => c.warnings.push(format!(
                "group {name} does not exist on any data collection group"
            )),
            Some(g) if c.groups.iter().any(|x| x.name == g.name) => {}
            Some(g) => c.groups.push(g.clone()),
        }
    }
}

/// A `datacollection-config.xml` with one snmp-collection whose body is
/// `includes`.
pub(super) fn config_with(includes: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<datacollection-config xmlns="http://xmlns.opennms.org/xsd/config/datacollection" rrdRepository="/var/lib/opennms/rrd/snmp/">
  <snmp-collection name="default" snmpStorageFlag="select">
    <rrd step="300"><rra>RRA:AVERAGE:0.5:1:2016</rra></rrd>
    {includes}
  </snmp-collection>
</datacollection-config>
"#
    )
}

/// Validates a `datacollection-config.xml` against OpenNMS's schema, where
/// the schemas are at hand (see `xml_files_are_well_formed_...`).
fn validates(config: &str) {
    let Some(xsd) = super::xsd_dir() else {
        println!("SKIPPED: schema validation of the include lines (no XSDs)");
        return;
    };
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), config).unwrap();
    let out = super::xmllint(&[
        "--noout",
        "--schema",
        xsd.join("datacollection-config.xsd").to_str().unwrap(),
        file.path().to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{config}\ndoes not validate:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What OpenNMS would refuse or silently skip in a loaded collection, rule
/// by rule; empty when all is well.
pub(super) fn collection_problems(c: &LoadedCollection) -> Vec<String> {
    let mut problems: Vec<String> = c.warnings.clone();
    let objs: Vec<&MibObjDef> = c.groups.iter().flat_map(|g| &g.objs).collect();
    // A group's own includeGroups are looked up among the collection's
    // groups when it is collected (DataCollectionConfigLookupUtils.processGroupName);
    // addSystemDef does not add them, so one not otherwise added is only
    // logged, and not collected.
    for g in &c.groups {
        for sub in &g.include_groups {
            if !c.groups.iter().any(|x| &x.name == sub) {
                problems.push(format!(
                    "group {} includes {sub}, which is not collected",
                    g.name
                ));
            }
        }
    }
    for t in c.resource_types.values() {
        if t.label.is_empty() {
            problems.push(format!("{}: no label", t.name));
        }
        // resourceLabel: GenericIndexResourceType.getResourceByIndex
        // (opennms-dao/src/main/java/org/opennms/netmgt/dao/support/GenericIndexResourceType.java)
        // resolves index, subIndex(...), hex(...) and string(...) from the
        // directory's name, and any other symbol from the resource's string
        // attributes only: it must be a string collected for this type.
        let expression = t.resource_label.as_deref().unwrap_or("${index}");
        for part in expression.split("${").skip(1) {
            let symbol = part.split('}').next().unwrap_or("");
            let from_index = symbol == "index"
                || ["subIndex(", "hex(", "string("]
                    .iter()
                    .any(|f| symbol.starts_with(f));
            let is_string = objs
                .iter()
                .any(|o| o.alias == symbol && o.instance == t.name && o.ty == "string");
            if !from_index && !is_string && objs.iter().any(|o| o.instance == t.name) {
                problems.push(format!(
                    "{}: resourceLabel symbol {symbol} is no string collected for it",
                    t.name
                ));
            }
        }
        // Classes: the collector and the web UI instantiate these by name
        // (OnmsSnmpCollection, opennms-services/src/main/java/org/opennms/netmgt/collectd/OnmsSnmpCollection.java,
        // skips a resource type it cannot build, with a warning only).
        for class in [&t.persistence, &t.storage] {
            if !CLASSES.iter().any(|(c, _)| c == class) {
                problems.push(format!(
                    "{}: class {class} is not a class of OpenNMS",
                    t.name
                ));
            }
        }
        if t.persistence != "org.opennms.netmgt.collection.support.PersistAllSelectorStrategy" {
            problems.push(format!("{}: persistence {}", t.name, t.persistence));
        }
        if t.is_sibling() {
            // SiblingColumnStorageStrategy.setParameters
            // (opennms-dao/src/main/java/org/opennms/netmgt/dao/support/SiblingColumnStorageStrategy.java):
            // sibling-column-name is required, sibling-column-oid is refused,
            // replace-first/replace-all build a StringReplaceOperation, and
            // other keys are ignored with a warning.
            let mut sibling = None;
            for (key, value) in &t.params {
                match key.as_str() {
                    "sibling-column-name" => sibling = Some(value.as_str()),
                    "replace-first" | "replace-all" => {
                        if let Err(e) = replace_spec(value) {
                            problems.push(format!("{}: {key}: {e}", t.name));
                        }
                    }
                    other => problems.push(format!("{}: parameter {other} is not read", t.name)),
                }
            }
            // The value is found by StringAttributeVisitor among the string
            // attributes of the row (getResourceNameFromIndex): a mibObj of
            // type string of this resource type.
            // (Checked where the type is used: a partial install registers
            // types it does not collect.)
            let used = objs.iter().any(|o| o.instance == t.name);
            match sibling {
                None => problems.push(format!("{}: no sibling-column-name", t.name)),
                Some(alias) => {
                    if used
                        && !objs
                            .iter()
                            .any(|o| o.alias == alias && o.instance == t.name && o.ty == "string")
                    {
                        problems.push(format!(
                            "{}: sibling column {alias} is no string collected for it",
                            t.name
                        ));
                    }
                }
            }
        } else if !t.params.is_empty() {
            problems.push(format!(
                "{}: IndexStorageStrategy takes no parameters",
                t.name
            ));
        }
    }
    let mut by_type: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for o in &objs {
        // Data source names: at most 19 characters
        // (PersistOperationBuilder.MAX_DS_NAME_LENGTH,
        // features/collection/persistence-rrd/src/main/java/org/opennms/netmgt/collection/persistence/rrd/PersistOperationBuilder.java),
        // of rrdtool's [a-zA-Z0-9_] (rrdcreate(1)).
        if o.alias.is_empty()
            || o.alias.len() > 19
            || !o
                .alias
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
        {
            problems.push(format!("alias {:?} is no RRD data source name", o.alias));
        }
        // One RRD file per alias in a resource's directory.
        if !by_type.entry(&o.instance).or_default().insert(&o.alias) {
            problems.push(format!("alias {} twice for {}", o.alias, o.instance));
        }
    }
    problems
}

/// The `s/pattern/replacement/` of a StringReplaceOperation
/// (core/lib/src/main/java/org/opennms/core/utils/StringReplaceOperation.java:
/// `^s/([^/]+)/([^/]*)/$`, no trailing modifiers).
fn replace_spec(spec: &str) -> Result<(&str, &str), String> {
    let inner = spec
        .strip_prefix("s/")
        .and_then(|s| s.strip_suffix('/'))
        .ok_or_else(|| format!("Specification '{spec}' is invalid"))?;
    let (pattern, replacement) = inner
        .split_once('/')
        .ok_or_else(|| format!("Specification '{spec}' is invalid"))?;
    if pattern.is_empty() || replacement.contains('/') {
        return Err(format!("Specification '{spec}' is invalid"));
    }
    Ok((pattern, replacement))
}

// ---------------------------------------------------------------------------
// Graphs

#[derive(Debug, Clone)]
pub(super) struct PrefabGraph {
    pub name: String,
    pub columns: Vec<String>,
    pub command: String,
    pub types: Vec<String>,
    pub properties_values: Vec<String>,
    pub external_values: Vec<String>,
    pub suppress: Vec<String>,
}

/// BundleLists.parseBundleList: split at commas, each part trimmed
/// (opennms-util/src/main/java/org/opennms/core/utils/BundleLists.java).
fn bundle_list(value: &str) -> Vec<String> {
    value.split(',').map(|s| s.trim().to_string()).collect()
}

/// PropertiesGraphDao.loadIncludedFile and loadPrefabGraphDefinitions
/// (opennms-dao/src/main/java/org/opennms/netmgt/dao/support/PropertiesGraphDao.java):
/// a file of `snmp-graph.properties.d/` with `reports=` loads the reports it
/// lists, and only those; a listed report without `name`, `command` or
/// `columns` is dropped (the file is marked malformed). Returns the reports
/// loaded and the problems (a report dropped, or defined but never loaded).
pub(super) fn load_graphs(text: &str) -> (Vec<PrefabGraph>, Vec<String>) {
    let props: BTreeMap<String, String> = parse_properties(text).into_iter().collect();
    let mut problems = Vec::new();
    let Some(list) = props.get("reports") else {
        return (
            Vec::new(),
            vec!["Properties must contain a 'report.id' property or a 'reports' property".into()],
        );
    };
    let list = bundle_list(list);
    let mut graphs = Vec::new();
    for name in &list {
        let get = |suffix: &str| props.get(&format!("report.{name}.{suffix}")).cloned();
        let (Some(_title), Some(command), Some(columns)) =
            (get("name"), get("command"), get("columns"))
        else {
            problems.push(format!(
                "report {name}: name, command and columns are required"
            ));
            continue;
        };
        let list_of = |suffix: &str| get(suffix).map(|v| bundle_list(&v)).unwrap_or_default();
        graphs.push(PrefabGraph {
            name: name.clone(),
            columns: bundle_list(&columns),
            command,
            types: list_of("type"),
            properties_values: list_of("propertiesValues"),
            external_values: list_of("externalValues"),
            suppress: list_of("suppress"),
        });
    }
    let listed: BTreeSet<&str> = list.iter().map(String::as_str).collect();
    let defined: BTreeSet<&str> = props
        .keys()
        .filter_map(|k| k.strip_prefix("report."))
        .filter_map(|k| k.rsplit_once('.').map(|(id, _)| id))
        .collect();
    for id in defined.difference(&listed) {
        problems.push(format!(
            "report {id} is defined but not in reports=: never loaded"
        ));
    }
    if listed.len() != list.len() {
        problems.push("reports= names a report twice".into());
    }
    (graphs, problems)
}

/// PropertiesGraphDao.getPrefabGraphsForResource: the reports OpenNMS offers
/// on a resource of type `resource_type` whose directory holds the RRD
/// files `rrd` and the string properties `strings`: those whose `type`
/// names the resource type and all of whose columns (and
/// propertiesValues, externalValues) are there, minus those another
/// offered report suppresses. No RRD attribute at all: none.
pub(super) fn offered_reports<'a>(
    graphs: &'a [PrefabGraph],
    resource_type: &str,
    rrd: &BTreeSet<String>,
    strings: &BTreeSet<String>,
) -> Vec<&'a PrefabGraph> {
    if rrd.is_empty() {
        return Vec::new();
    }
    let offered: Vec<&PrefabGraph> = graphs
        .iter()
        .filter(|g| g.types.iter().any(|t| t == resource_type))
        .filter(|g| g.columns.iter().all(|c| rrd.contains(c)))
        .filter(|g| g.properties_values.iter().all(|p| strings.contains(p)))
        .filter(|g| g.external_values.is_empty())
        .collect();
    let suppressed: BTreeSet<&str> = offered
        .iter()
        .flat_map(|g| g.suppress.iter().map(String::as_str))
        .collect();
    offered
        .into_iter()
        .filter(|g| !suppressed.contains(g.name.as_str()))
        .collect()
}

/// The graph rules against a loaded collection: every report loads, its
/// type is a resource type of the collection (or the node), and it can be
/// offered on a resource of that type: its columns are numeric aliases
/// collected for that one type.
pub(super) fn graph_problems(c: &LoadedCollection, text: &str) -> Vec<String> {
    let (graphs, mut problems) = load_graphs(text);
    let mut numeric: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for o in c.groups.iter().flat_map(|g| &g.objs) {
        if o.ty == "string" {
            continue;
        }
        let ty = if o.instance.parse::<u32>().is_ok() {
            NODE.to_string()
        } else {
            o.instance.clone()
        };
        numeric.entry(ty).or_default().insert(o.alias.clone());
    }
    for g in &graphs {
        let [ty] = g.types.as_slice() else {
            problems.push(format!(
                "{}: type {:?}, one resource type expected",
                g.name, g.types
            ));
            continue;
        };
        if ty != NODE && !c.resource_types.contains_key(ty) {
            problems.push(format!("{}: type {ty} is no resource type", g.name));
        }
        let all = numeric.get(ty).cloned().unwrap_or_default();
        if offered_reports(std::slice::from_ref(g), ty, &all, &BTreeSet::new()).is_empty() {
            problems.push(format!(
                "{}: never offered: columns {:?} are not all numbers collected for {ty}",
                g.name,
                g.columns
                    .iter()
                    .filter(|col| !all.contains(*col))
                    .collect::<Vec<_>>()
            ));
        }
        // Every {rrdN} names one of the columns.
        for part in g.command.split("{rrd").skip(1) {
            let n: usize = part
                .split('}')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            if n == 0 || n > g.columns.len() {
                problems.push(format!(
                    "{}: {{rrd{n}}} but {} columns",
                    g.name,
                    g.columns.len()
                ));
            }
        }
    }
    problems
}

// ---------------------------------------------------------------------------
// Events

/// TrapIdentity(snmpTrapOID, ...) for a notification that is not one of
/// the six standard traps
/// (core/snmp/api/src/main/java/org/opennms/netmgt/snmp/TrapIdentity.java):
/// generic 6, specific the last sub-identifier, enterprise the OID without
/// it, and without the one before it too when that one is 0.
fn trap_identity(oid: &str) -> (String, u32, String) {
    let (rest, last) = oid.rsplit_once('.').expect("an OID");
    let (before, next_to_last) = rest.rsplit_once('.').expect("an OID");
    let enterprise = if next_to_last == "0" { before } else { rest };
    (enterprise.to_string(), 6, last.to_string())
}

/// Maskelement.constructMatcher
/// (opennms-config-model/src/main/java/org/opennms/netmgt/xml/eventconf/Maskelement.java):
/// a value starting with `~` is a regular expression, one ending with `%`
/// matches by prefix, any other matches exactly; several values are or-ed.
fn mask_value_matches(value: &str, field: &str) -> bool {
    assert!(
        !value.starts_with('~'),
        "mask value {value}: regexes are not emulated"
    );
    match value.strip_suffix('%') {
        Some(prefix) => field.starts_with(prefix),
        None => field == value,
    }
}

#[derive(Debug)]
struct EventRule {
    uei: String,
    mask: Vec<(String, Vec<String>)>,
    reduction_key: Option<String>,
    alarm_type: Option<u32>,
    clear_key: Option<String>,
}

fn event_rules(text: &str) -> Vec<EventRule> {
    let root = parse_xml(text);
    assert_eq!(root.name, "events");
    root.all("event")
        .map(|e| {
            let alarm = e.child("alarm-data");
            EventRule {
                uei: e.text_of("uei").expect("an event without uei"),
                mask: e
                    .child("mask")
                    .map(|m| {
                        // Mask.constructMatcher also ands varbind matchers;
                        // these files use none, and this test reads none.
                        assert!(
                            m.child("varbind").is_none(),
                            "varbind masks are not emulated"
                        );
                        m.all("maskelement")
                            .map(|me| {
                                (
                                    me.text_of("mename").unwrap_or_default(),
                                    me.all("mevalue")
                                        .map(|v| v.text.trim().to_string())
                                        .collect(),
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                reduction_key: alarm.map(|a| a.req("reduction-key").to_string()),
                alarm_type: alarm.and_then(|a| a.attr("alarm-type")?.parse().ok()),
                clear_key: alarm.and_then(|a| a.attr("clear-key").map(String::from)),
            }
        })
        .collect()
}

/// Whether an event's mask matches a trap with this identity: every mask
/// element must match its field (EventMatchers.and of the elements,
/// opennms-config-model/src/main/java/org/opennms/netmgt/xml/eventconf/Mask.java).
fn mask_matches(rule: &EventRule, (enterprise, generic, specific): &(String, u32, String)) -> bool {
    !rule.mask.is_empty()
        && rule.mask.iter().all(|(name, values)| {
            let field = match name.as_str() {
                "id" => enterprise.clone(),
                "generic" => generic.to_string(),
                "specific" => specific.clone(),
                other => panic!("mask element {other} is not emulated"),
            };
            values.iter().any(|v| mask_value_matches(v, &field))
        })
}

/// The pairs of a Down notification and the Up that clears its alarm.
const CLEARS: &[(&str, &str)] = super::CLEARED_BY;

pub(super) fn event_problems(text: &str) -> Vec<String> {
    let rules = event_rules(text);
    let mut problems = Vec::new();
    let notifications: Vec<&NotificationDef> = REDIS_NOTIFICATIONS
        .iter()
        .chain(PUPPET_NOTIFICATIONS)
        .collect();
    let mut event_of: BTreeMap<&str, &EventRule> = BTreeMap::new();
    for n in &notifications {
        let identity = trap_identity(&notification_oid(n));
        let matching: Vec<&EventRule> = rules
            .iter()
            .filter(|r| mask_matches(r, &identity))
            .collect();
        match matching.as_slice() {
            [one] => {
                event_of.insert(n.name, one);
            }
            other => problems.push(format!(
                "{} ({identity:?}) is matched by {} events",
                n.name,
                other.len()
            )),
        }
    }
    for r in &rules {
        if !event_of.values().any(|e| e.uei == r.uei) {
            problems.push(format!("{}: matches no notification of the agent", r.uei));
        }
    }
    // Alarm keys: %uei% in a reduction key is the event's own UEI
    // (EventUtil expansion of the alarm-data keys,
    // opennms-services/src/main/java/org/opennms/netmgt/eventd/AbstractEventUtil.java);
    // a resolution (type 2) clears the problem (type 1) whose expanded
    // reduction key equals its clear-key.
    for (down, up) in CLEARS {
        let (Some(d), Some(u)) = (event_of.get(down), event_of.get(up)) else {
            problems.push(format!("{down}/{up}: no event"));
            continue;
        };
        let raised = d
            .reduction_key
            .as_deref()
            .map(|k| k.replace("%uei%", &d.uei));
        if d.alarm_type != Some(1) || u.alarm_type != Some(2) {
            problems.push(format!(
                "{down}/{up}: alarm types {:?}/{:?}",
                d.alarm_type, u.alarm_type
            ));
        }
        if raised.is_none() || u.clear_key != raised {
            problems.push(format!(
                "{up} clears {:?}, {down} raises {raised:?}",
                u.clear_key
            ));
        }
    }
    problems
}

// ---------------------------------------------------------------------------
// Folder names and labels

/// The directory OpenNMS makes of a row of a sibling-column type, and its
/// label in the web UI: GenericIndexResourceType.getResourceByIndex
/// (opennms-dao/src/main/java/org/opennms/netmgt/dao/support/GenericIndexResourceType.java)
/// evaluates resourceLabel with `${index}` (and `subIndex`) taken from the
/// directory's name, and other symbols from the row's string properties.
pub(super) fn folder_and_label(
    t: &ResourceTypeDef,
    snmp_index: &str,
    strings: &BTreeMap<String, String>,
) -> (String, String) {
    let folder = match t.param("sibling-column-name") {
        Some(column) if t.is_sibling() => sibling_dir(
            strings.get(column).map(String::as_str).unwrap_or(""),
            t.param("replace-all").unwrap_or(""),
            snmp_index,
        ),
        _ => snmp_index.to_string(),
    };
    let label = resource_label(
        t.resource_label.as_deref().unwrap_or("${index}"),
        &folder,
        strings,
    );
    (folder, label)
}

// ---------------------------------------------------------------------------
// The tests

fn our_group_file() -> String {
    read_opennms(GROUP_FILE)
}

fn load_ours(includes: &str) -> Result<LoadedCollection, String> {
    validates(&config_with(includes));
    load_datacollection(&config_with(includes), &[&our_group_file()])
}

/// A copy of `text` with `from` replaced by `to`; `from` must be there.
fn broken(text: &str, from: &str, to: &str) -> String {
    assert!(
        text.contains(from),
        "the broken copy needs {from:?} in the file"
    );
    text.replacen(from, to, 1)
}

#[test]
fn the_one_include_line_loads_everything() {
    let c = load_ours(INSTALL_LINE).unwrap_or_else(|e| panic!("OpenNMS refuses it: {e}"));
    let problems = collection_problems(&c);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let file = parse_group_file(&our_group_file());
    let names = |v: &[SystemDefDef]| v.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&c.system_defs), names(&file.system_defs));
    assert_eq!(
        c.groups.len(),
        file.groups.len(),
        "every group is collected"
    );
    let types: BTreeSet<&str> = c.resource_types.keys().map(String::as_str).collect();
    let used: BTreeSet<&str> = c
        .groups
        .iter()
        .flat_map(|g| &g.objs)
        .map(|o| o.instance.as_str())
        .filter(|i| i.parse::<u32>().is_err())
        .collect();
    assert_eq!(
        types, used,
        "registered resource types, used resource types"
    );
    // The README gives this very line.
    assert!(read_opennms("README.md").contains(INSTALL_LINE));
    // Every collected object is an object of the agent, at its OID.
    for o in c.groups.iter().flat_map(|g| &g.objs) {
        assert!(
            object_at(&o.oid).is_some(),
            "{} {}: no such object",
            o.alias,
            o.oid
        );
    }
}

#[test]
fn partial_installs_exclude_a_system_definition() {
    let readme = read_opennms("README.md");
    for (excluded, kept, kept_group) in [
        (PUPPET_SYSTEM_DEF, REDIS_SYSTEM_DEF, "redis-snmp-instance"),
        (REDIS_SYSTEM_DEF, PUPPET_SYSTEM_DEF, "redis-snmp-puppet"),
    ] {
        let line = format!(
            "<include-collection dataCollectionGroup=\"redis-snmp\">\n    <exclude-filter>{excluded}</exclude-filter>\n  </include-collection>"
        );
        assert!(
            readme.contains(&format!("<exclude-filter>{excluded}</exclude-filter>")),
            "the README shows the exclude-filter of {excluded}"
        );
        let c = load_ours(&line).unwrap_or_else(|e| panic!("without {excluded}: {e}"));
        let problems = collection_problems(&c);
        assert!(problems.is_empty(), "without {excluded}: {problems:?}");
        let sds: Vec<&str> = c.system_defs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(sds, [kept]);
        assert!(c.groups.iter().any(|g| g.name == kept_group));
        let file = parse_group_file(&our_group_file());
        let excluded_groups = &file
            .system_defs
            .iter()
            .find(|s| s.name == excluded)
            .unwrap()
            .groups;
        assert!(
            c.groups.iter().all(|g| !excluded_groups.contains(&g.name)),
            "without {excluded}, its groups are not collected"
        );
    }
}

#[test]
fn a_system_def_include_registers_no_resource_type_and_fails() {
    // The form the README used to give for partial installs.
    let err = load_ours(&format!(
        r#"<include-collection systemDef="{REDIS_SYSTEM_DEF}"/>"#
    ))
    .expect_err("a systemDef= include must fail: it registers no resource type");
    assert!(err.contains("instance 'redis"), "{err}");
    println!("systemDef= include: {err}");
    // The Puppet definition alone fails likewise: puppetCertificateTable's
    // rows are of the resource type puppetCertificate.
    let err = load_ours(&format!(
        r#"<include-collection systemDef="{PUPPET_SYSTEM_DEF}"/>"#
    ))
    .expect_err("a systemDef= include of Puppet's must fail: it registers no resource type");
    assert!(err.contains("instance 'puppetCertificate'"), "{err}");
}

#[test]
fn broken_data_collection_copies_fail() {
    let ours = our_group_file();
    // Resource types only in a resource-types.d file (the old layout): the
    // group file without its <resourceType>s.
    let root_end = ours
        .find("<resourceType ")
        .expect("resource types in the group file");
    let groups_start = ours.find("  <group ").unwrap();
    let without_types = format!("{}{}", &ours[..root_end], &ours[groups_start..]);
    let err = load_datacollection(&config_with(INSTALL_LINE), &[&without_types]).unwrap_err();
    assert!(err.starts_with("instance 'redis"), "{err}");
    // A mibObj naming a resource type that does not exist.
    let typo = broken(
        &ours,
        r#"instance="redisKeyspace""#,
        r#"instance="redisKeySpace""#,
    );
    assert!(load_datacollection(&config_with(INSTALL_LINE), &[&typo]).is_err());
    // A negative instance.
    let negative = broken(&ours, r#"instance="0""#, r#"instance="-1""#);
    assert!(load_datacollection(&config_with(INSTALL_LINE), &[&negative]).is_err());
    // An include of a group that does not exist.
    assert!(load_ours(r#"<include-collection dataCollectionGroup="redis"/>"#).is_err());
    // Each of these loads, and is refused by the rules.
    for (from, to, expect) in [
        (
            "org.opennms.netmgt.dao.support.SiblingColumnStorageStrategy",
            "org.opennms.netmgt.collection.support.SiblingColumnStorageStrategy",
            "is not a class of OpenNMS",
        ),
        (
            "org.opennms.netmgt.collection.support.PersistAllSelectorStrategy",
            "org.opennms.netmgt.dao.support.PersistAllSelectorStrategy",
            "is not a class of OpenNMS",
        ),
        (
            r#"value="s/[^A-Za-z0-9._-]/_/""#,
            r#"value="s/[^A-Za-z0-9._-]/_/g""#,
            "is invalid",
        ),
        (
            r#"key="sibling-column-name" value="redisCmdKey""#,
            r#"key="sibling-column-oid" value="redisCmdKey""#,
            "sibling-column-oid",
        ),
        (
            r#"key="sibling-column-name" value="redisErrKey""#,
            r#"key="sibling-column-name" value="redisErrCount""#,
            "no string collected for it",
        ),
        (
            r#"alias="redisSrvVersion""#,
            r#"alias="redisServerVersionText""#,
            "no RRD data source name",
        ),
        (
            r#"alias="redisSrvHz""#,
            r#"alias="redisSrvIoThreads""#,
            "twice",
        ),
        (
            "resourceLabel=\"${redisCmdLabel}",
            "resourceLabel=\"${redisCmdName}",
            "resourceLabel symbol redisCmdName",
        ),
        (
            "<includeGroup>redis-snmp-latency</includeGroup>",
            "<includeGroup>redis-snmp-latencies</includeGroup>",
            "does not exist",
        ),
    ] {
        let copy = broken(&ours, from, to);
        let c = load_datacollection(&config_with(INSTALL_LINE), &[&copy])
            .unwrap_or_else(|e| panic!("{to}: {e}"));
        let problems = collection_problems(&c);
        assert!(
            problems.iter().any(|p| p.contains(expect)),
            "{from} -> {to}: expected {expect:?}, got {problems:?}"
        );
    }
}

#[test]
fn resource_types_give_collision_free_folders_and_readable_labels() {
    let c = load_ours(INSTALL_LINE).unwrap();
    // The agent's keys for rows whose raw "instance/row" texts share a
    // directory once OpenNMS has dropped non-ASCII characters, turned `/`
    // into `-` and replaced the rest.
    let pairs = [
        ("cache-1", "get"),
        ("cache", "1-get"),
        ("cache/1", "get"),
        ("a b", "get"),
        ("a_b", "get"),
        ("a", "b.get"),
        ("a.b", "get"),
        ("caf\u{e9}", "get"),
        ("caf\u{fc}", "get"),
        ("caf", "get"),
        ("sessions", "config|get"),
        ("sessions", "config_get"),
    ];
    for t in c.resource_types.values().filter(|t| t.is_sibling()) {
        let column = t.param("sibling-column-name").unwrap();
        if column == "redisInstanceName" {
            continue;
        }
        let replace = t.param("replace-all").unwrap_or("");
        // What the README used to promise, and its collisions.
        let raw: BTreeSet<String> = pairs
            .iter()
            .map(|(i, r)| sibling_dir(&format!("{i}/{r}"), replace, "1.1.0"))
            .collect();
        assert!(
            raw.len() < pairs.len(),
            "the raw key collides: this test shows why"
        );
        assert_eq!(
            sibling_dir("sessions/config|get", replace, "1"),
            "sessions-config_get",
            "OpenNMS's folder of the raw key"
        );
        assert_eq!(
            sibling_dir("cache-1/get", replace, "1"),
            sibling_dir("cache/1-get", replace, "1")
        );
        // The agent's key: unchanged by OpenNMS, distinct for distinct rows.
        let mut folders = BTreeMap::new();
        for (instance, row) in pairs {
            let key = redis_snmp::redis::readings::row_key(instance, row);
            let strings: BTreeMap<String, String> = [
                (column.to_string(), key.clone()),
                (column.replace("Key", "Label"), row.to_string()),
            ]
            .into_iter()
            .collect();
            let (folder, label) = folder_and_label(t, "1.3.103.101.116", &strings);
            assert_eq!(folder, key, "{}: OpenNMS changes the key {key}", t.name);
            if let Some(other) = folders.insert(folder.clone(), (instance, row)) {
                panic!(
                    "{}: {other:?} and {:?} share {folder}",
                    t.name,
                    (instance, row)
                );
            }
            assert!(
                label.starts_with(row) && !label.contains("${"),
                "{}: label {label:?} of {key}",
                t.name
            );
        }
        let strings: BTreeMap<String, String> = [
            (column.to_string(), "sessions.config_7Cget".to_string()),
            (column.replace("Key", "Label"), "config|get".to_string()),
        ]
        .into_iter()
        .collect();
        let (folder, label) =
            folder_and_label(t, "2.10.99.111.110.102.105.103.124.103.101.116", &strings);
        assert_eq!(
            (folder.as_str(), label.as_str()),
            ("sessions.config_7Cget", "config|get (instance sessions)"),
            "{}",
            t.name
        );
    }
    // Instance rows: stored by name; labelled by it.
    let t = &c.resource_types["redisInstance"];
    let strings: BTreeMap<String, String> =
        [("redisInstanceName".to_string(), "cache node/1".to_string())]
            .into_iter()
            .collect();
    assert_eq!(
        folder_and_label(t, "3", &strings),
        ("cache_node-1".to_string(), "cache node/1".to_string())
    );
    // Numbered rows: stored by index, labelled from it.
    let t = &c.resource_types["redisKeyspace"];
    assert_eq!(
        folder_and_label(t, "2.5", &BTreeMap::new()).1,
        "db5 (instance 2)"
    );
}

#[test]
fn graphs_load_and_are_offered_as_opennms_does() {
    let c = load_ours(INSTALL_LINE).unwrap();
    let text = read_opennms(GRAPH_FILE);
    let problems = graph_problems(&c, &text);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let (graphs, _) = load_graphs(&text);
    println!("{} reports load", graphs.len());
    // Offered only where all the columns are: a resource with every column
    // but one of redis.instance.aof is not offered it.
    let aof = graphs
        .iter()
        .find(|g| g.name == "redis.instance.aof")
        .expect("redis.instance.aof");
    let ty = &aof.types[0];
    let mut attrs: BTreeSet<String> = aof.columns.iter().cloned().collect();
    assert!(offered_reports(&graphs, ty, &attrs, &BTreeSet::new())
        .iter()
        .any(|g| g.name == aof.name));
    attrs.remove(&aof.columns[0]);
    assert!(!offered_reports(&graphs, ty, &attrs, &BTreeSet::new())
        .iter()
        .any(|g| g.name == aof.name));
    assert!(offered_reports(
        &graphs,
        "redisKeyspace",
        &aof.columns.iter().cloned().collect(),
        &BTreeSet::new()
    )
    .iter()
    .all(|g| g.name != aof.name));
}

#[test]
fn broken_graph_copies_fail() {
    let c = load_ours(INSTALL_LINE).unwrap();
    let text = read_opennms(GRAPH_FILE);
    for (from, to, expect) in [
        // Left out of reports=: OpenNMS never loads it.
        (
            "reports=redis.connections, \\",
            "reports=\\",
            "never loaded",
        ),
        // Columns of two resource types: never offered anywhere.
        (
            "report.redis.memory.columns=redisUsedMemory,redisUsedMemoryRss",
            "report.redis.memory.columns=redisUsedMemory,redisMemUsed",
            "never offered",
        ),
        // A string is no RRD attribute.
        (
            "report.redis.memory.columns=redisUsedMemory,redisUsedMemoryRss",
            "report.redis.memory.columns=redisUsedMemory,redisSrvVersion",
            "never offered",
        ),
        // A type that is no resource type.
        (
            "report.redis.memory.type=nodeSnmp",
            "report.redis.memory.type=node",
            "no resource type",
        ),
        // Without a command the report is dropped.
        (
            "report.redis.memory.command=",
            "report.redis.memory.commandline=",
            "required",
        ),
    ] {
        let copy = broken(&text, from, to);
        let problems = graph_problems(&c, &copy);
        assert!(
            problems.iter().any(|p| p.contains(expect)),
            "{from} -> {to}: expected {expect:?}, got {problems:?}"
        );
    }
}

#[test]
fn events_match_notifications_as_opennms_maps_them() {
    let problems = event_problems(&read_opennms(EVENTS_FILE));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The mapping itself, on a notification of REDIS-SERVER-MIB.
    assert_eq!(
        trap_identity(".1.3.6.1.4.1.20267.400.0.1"),
        (".1.3.6.1.4.1.20267.400".to_string(), 6, "1".to_string())
    );
    assert_eq!(
        trap_identity(".1.3.6.1.4.1.20267.400.5.1"),
        (".1.3.6.1.4.1.20267.400.5".to_string(), 6, "1".to_string())
    );
}

#[test]
fn broken_event_copies_fail() {
    let text = read_opennms(EVENTS_FILE);
    for (from, to, expect) in [
        // The enterprise with the 0 OpenNMS strips.
        (
            "<mevalue>.1.3.6.1.4.1.20267.400</mevalue>",
            "<mevalue>.1.3.6.1.4.1.20267.400.0</mevalue>",
            "matched by 0 events",
        ),
        // The trap OID's last arc as generic.
        (
            "<mevalue>6</mevalue>",
            "<mevalue>1</mevalue>",
            "matched by 0 events",
        ),
        // A prefix mask that swallows the Puppet notifications.
        (
            "<mevalue>.1.3.6.1.4.1.20267.400</mevalue>",
            "<mevalue>.1.3.6.1.4.1.20267.40%</mevalue>",
            "matched by 2 events",
        ),
        // An Up whose clear-key names another UEI.
        (
            "clear-key=\"uei.opennms.org/vendor/daysofwonder/traps/redisInstanceDown:",
            "clear-key=\"uei.opennms.org/vendor/daysofwonder/traps/redisInstanceUp:",
            "clears",
        ),
        // The Down as a resolution.
        (
            r#"alarm-type="1" auto-clean="false"/>"#,
            r#"alarm-type="2" auto-clean="false"/>"#,
            "alarm types",
        ),
    ] {
        let copy = broken(&text, from, to);
        let problems = event_problems(&copy);
        assert!(
            problems.iter().any(|p| p.contains(expect)),
            "{from} -> {to}: expected {expect:?}, got {problems:?}"
        );
    }
}

// ---------------------------------------------------------------------------
// Thresholds (issue 16, part 5): `opennms/snippets/thresholds.xml` (a group
// for `etc/thresholds.xml`) and `opennms/snippets/threshd-configuration.xml`
// (a package for `etc/threshd-configuration.xml`), read as OpenNMS's
// thresholding reads them, against the collection the install line loads.

/// The standard threshold events, sent when a threshold names no
/// `triggeredUEI`/`rearmedUEI` (`EventConstants.HIGH_THRESHOLD_EVENT_UEI` and
/// the others, used by `ThresholdEvaluatorHighLow`, `...RelativeChange`,
/// `...AbsoluteChange` in features/collection/thresholding/impl/src/main/java/
/// org/opennms/netmgt/threshd/). OpenNMS's own events file defines them.
const STANDARD_THRESHOLD_UEIS: &[&str] = &[
    "uei.opennms.org/threshold/highThresholdExceeded",
    "uei.opennms.org/threshold/highThresholdRearmed",
    "uei.opennms.org/threshold/lowThresholdExceeded",
    "uei.opennms.org/threshold/lowThresholdRearmed",
    "uei.opennms.org/threshold/relativeChangeExceeded",
    "uei.opennms.org/threshold/absoluteChangeExceeded",
];

/// JEXL words that are no variables (`ExpressionConfigWrapper` sniffs every
/// name the expression looks up in its context, minus `math`; these words
/// are operators and literals of JEXL 2, never looked up).
const JEXL_WORDS: &[&str] = &[
    "and",
    "or",
    "not",
    "eq",
    "ne",
    "lt",
    "gt",
    "le",
    "ge",
    "div",
    "mod",
    "true",
    "false",
    "null",
    "empty",
    "size",
    "new",
    "math",
    "datasources",
];

/// One `<threshold>` or `<expression>` of a group.
#[derive(Debug, Clone)]
pub(super) struct ThresholdDef {
    pub kind: String,
    pub ty: String,
    pub ds_type: String,
    /// `ds-name`, or the expression's text.
    pub ds: String,
    pub ds_label: Option<String>,
    pub value: f64,
    pub rearm: f64,
    pub trigger: u32,
    pub triggered_uei: Option<String>,
    pub rearmed_uei: Option<String>,
}

/// The variables of an expression, as `ExpressionConfigWrapper` finds them
/// (its `BindingsSniffer` records each name the JEXL evaluation looks up;
/// `math.f(...)` calls and JEXL's words are none).
pub(super) fn expression_variables(expression: &str) -> BTreeSet<String> {
    let mut vars = BTreeSet::new();
    let mut chars = expression.char_indices().peekable();
    let mut after_dot = false;
    while let Some((i, c)) = chars.next() {
        if c.is_ascii_alphabetic() || c == '_' {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if d.is_ascii_alphanumeric() || d == '_' {
                    end = j + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            let word = &expression[i..end];
            if !after_dot && !JEXL_WORDS.contains(&word) {
                vars.insert(word.to_string());
            }
            after_dot = false;
        } else if c.is_ascii_digit() {
            // A number, with its fraction and exponent.
            while let Some(&(_, d)) = chars.peek() {
                if d.is_ascii_alphanumeric() || d == '.' {
                    chars.next();
                } else {
                    break;
                }
            }
            after_dot = false;
        } else if !c.is_whitespace() {
            after_dot = c == '.';
        }
    }
    vars
}

pub(super) fn threshold_groups(text: &str) -> Vec<(String, String, Vec<ThresholdDef>)> {
    let root = parse_xml(text);
    assert_eq!(root.name, "thresholding-config", "not a thresholds file");
    root.all("group")
        .map(|g| {
            let defs = g
                .children
                .iter()
                .filter(|e| e.name == "threshold" || e.name == "expression")
                .map(|e| {
                    let number = |name: &str| {
                        e.req(name)
                            .parse::<f64>()
                            .unwrap_or_else(|_| panic!("{name} is not a number"))
                    };
                    ThresholdDef {
                        kind: e.name.clone(),
                        ty: e.req("type").to_string(),
                        ds_type: e.req("ds-type").to_string(),
                        ds: if e.name == "threshold" {
                            e.req("ds-name").to_string()
                        } else {
                            e.req("expression").to_string()
                        },
                        ds_label: e.attr("ds-label").map(String::from),
                        value: number("value"),
                        rearm: number("rearm"),
                        trigger: e.req("trigger").parse().expect("trigger"),
                        triggered_uei: e.attr("triggeredUEI").map(String::from),
                        rearmed_uei: e.attr("rearmedUEI").map(String::from),
                    }
                })
                .collect();
            (
                g.req("name").to_string(),
                g.req("rrdRepository").to_string(),
                defs,
            )
        })
        .collect()
}

/// The collected objects of a resource type as thresholding sees them: the
/// `mibObj`s whose `instance` is that type, or, for `ds-type="node"`, a
/// number (node-level objects: `CollectionResource.RESOURCE_TYPE_NODE` is
/// "node", and `CollectionResourceWrapper.isNodeResource` compares the
/// resource's type name with it; "nodeSnmp" is only the web UI's resource
/// id for them). Any other ds-type names a generic resource type, matched
/// by name (`ThresholdingSetImpl`/`ThreshdDao` put it in the group's
/// generic resource type map under the ds-type).
fn objects_of_type<'a>(c: &'a LoadedCollection, ds_type: &str) -> Vec<&'a MibObjDef> {
    c.groups
        .iter()
        .flat_map(|g| &g.objs)
        .filter(|o| {
            if ds_type == "node" {
                o.instance.parse::<u32>().is_ok()
            } else {
                o.instance == ds_type
            }
        })
        .collect()
}

/// What OpenNMS would not threshold as the file means it, rule by rule;
/// empty when all is well.
pub(super) fn threshold_problems(
    thresholds: &str,
    threshd: &str,
    c: &LoadedCollection,
    event_ueis: &BTreeSet<String>,
) -> Vec<String> {
    let mut problems = Vec::new();
    let groups = threshold_groups(thresholds);
    for (group, repository, defs) in &groups {
        // The group's rrdRepository is the SNMP collector's (the
        // datacollection-config.xml rrdRepository, `.../rrd/snmp/`).
        if !repository.ends_with("/rrd/snmp/") {
            problems.push(format!(
                "{group}: rrdRepository {repository} is not the SNMP one"
            ));
        }
        for t in defs {
            let id = format!("{group}: {} {}", t.ty, t.ds);
            if t.ds_type == "if" {
                problems.push(format!("{id}: nothing of ours is an interface resource"));
                continue;
            }
            if t.ds_type != "node" && !c.resource_types.contains_key(&t.ds_type) {
                problems.push(format!(
                    "{id}: ds-type {} is neither node nor a resource type of the collection",
                    t.ds_type
                ));
            }
            let objs = objects_of_type(c, &t.ds_type);
            let numeric = |alias: &str| {
                objs.iter()
                    .find(|o| o.alias == alias && o.ty != "string")
                    .copied()
            };
            // ds-name (ThresholdEntity reads it from the resource's
            // attributes by alias; missing there, it is never evaluated),
            // or every variable of an expression (`getRequiredDatasources`:
            // without all of them, the expression is skipped).
            let variables: Vec<String> = if t.kind == "threshold" {
                vec![t.ds.clone()]
            } else {
                expression_variables(&t.ds).into_iter().collect()
            };
            if variables.is_empty() {
                problems.push(format!("{id}: reads no collected value"));
            }
            for v in &variables {
                if numeric(v).is_none() {
                    problems.push(format!(
                        "{id}: {v} is no numeric alias collected for ds-type {}",
                        t.ds_type
                    ));
                }
            }
            // ds-label: a string attribute of the same resource
            // (CollectionResourceWrapper.getFieldValue reads string
            // properties of the resource's directory); node-level: none.
            match t.ds_label.as_deref() {
                None | Some("") => {}
                Some(label) => {
                    if !objs.iter().any(|o| o.alias == label && o.ty == "string") {
                        problems.push(format!(
                            "{id}: ds-label {label} is no string collected for {}",
                            t.ds_type
                        ));
                    }
                }
            }
            // High triggers at value >= threshold and rearms at value <=
            // rearm; low the other way (ThresholdEvaluatorHighLow.
            // isThresholdExceeded / isRearmExceeded): a rearm on the wrong
            // side of the value never lets the threshold rearm cleanly.
            match t.ty.as_str() {
                "high" if t.rearm >= t.value => problems.push(format!(
                    "{id}: a high threshold's rearm must be below its value"
                )),
                "low" if t.rearm <= t.value => problems.push(format!(
                    "{id}: a low threshold's rearm must be above its value"
                )),
                _ => {}
            }
            for uei in t.triggered_uei.iter().chain(&t.rearmed_uei) {
                if !event_ueis.contains(uei) && !STANDARD_THRESHOLD_UEIS.contains(&uei.as_str()) {
                    problems.push(format!("{id}: {uei} is defined by no event"));
                }
            }
            // Units: what the object is collected in.
            if t.kind == "threshold" {
                if let Some(o) = numeric(&t.ds) {
                    problems.extend(unit_problems(&id, t, o));
                }
            }
        }
    }
    problems.extend(package_problems(threshd, &groups));
    problems
}

/// The value and rearm in the units of the collected object.
fn unit_problems(id: &str, t: &ThresholdDef, o: &MibObjDef) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(def) = object_at(&o.oid) else {
        return vec![format!("{id}: {} is no object of the agent", o.alias)];
    };
    // Hundredths of a percent (RedisHundredths): 90 % is 9000. A value
    // under 100 is under 1 %: a percentage written as such.
    if let redis_snmp::metrics::Source::Info {
        conversion: redis_snmp::metrics::Conversion::PercentOf(_),
        ..
    } = def.source
    {
        for (what, v) in [("value", t.value), ("rearm", t.rearm)] {
            if !(100.0..=10000.0).contains(&v) {
                problems.push(format!(
                    "{id}: {what} {v} is not in hundredths of a percent (100..=10000)"
                ));
            }
        }
    }
    // Enumerations: value and rearm are named numbers, the rearm `ok`.
    if let Some(names) = super::named_numbers(def) {
        let name_of = |v: f64| {
            names
                .iter()
                .find(|(_, n)| f64::from(*n) == v)
                .map(|(s, _)| *s)
        };
        match (name_of(t.value), name_of(t.rearm)) {
            (Some(_), Some("ok")) => {}
            (value, rearm) => problems.push(format!(
                "{id}: value {} ({value:?}) and rearm {} ({rearm:?}) must be named numbers of {}, the rearm ok",
                t.value, t.rearm, def.name
            )),
        }
    }
    // Counters are thresholded as their rate per second since the previous
    // collection (CollectionResourceWrapper.getAttributeValue ->
    // getCounterValue): a count of events must trigger on one event in a
    // collection interval (COLLECTION_INTERVAL_SECONDS).
    if o.ty.starts_with("counter")
        && t.ty == "high"
        && t.value * COLLECTION_INTERVAL_SECONDS as f64 > 1.0
    {
        problems.push(format!(
            "{id}: {} is a counter, thresholded as a rate per second: {} misses a single increase in {COLLECTION_INTERVAL_SECONDS} s",
            o.alias, t.value
        ));
    }
    problems
}

/// collectd's default SNMP interval (etc/collectd-configuration.xml,
/// `interval="300000"`), in seconds.
const COLLECTION_INTERVAL_SECONDS: u64 = 300;

/// The package: thresholded by collectd's SNMP service (ThresholdingSetImpl
/// looks the packages up by the collectd service's name), for the nodes the
/// data collection collects from, naming groups that exist.
fn package_problems(threshd: &str, groups: &[(String, String, Vec<ThresholdDef>)]) -> Vec<String> {
    let mut problems = Vec::new();
    let root = parse_xml(threshd);
    assert_eq!(
        root.name, "threshd-configuration",
        "not a threshd configuration"
    );
    let file = parse_group_file(&read_opennms(GROUP_FILE));
    let masks: BTreeSet<String> = parse_xml(&read_opennms(GROUP_FILE))
        .all("systemDef")
        .filter_map(|s| s.text_of("sysoidMask"))
        .collect();
    assert!(!file.system_defs.is_empty());
    for p in root.all("package") {
        let name = p.req("name");
        // The filter (OpenNMS's filter language, JdbcFilterDao): the nodes
        // whose sysObjectID the system definitions' sysoidMask selects, and
        // nothing narrower or wider.
        let filter = p.text_of("filter").unwrap_or_default();
        for mask in &masks {
            let like = format!("nodeSysOID LIKE '{mask}%'");
            if !filter.contains(&like) {
                problems.push(format!("package {name}: filter {filter:?} lacks {like}"));
            }
        }
        // Ranges: every address, IPv4 and IPv6, as OpenNMS's own packages
        // (an address outside every include-range is not in the package:
        // ThreshdConfigManager.interfaceInPackage).
        let ranges: BTreeSet<(String, String)> = p
            .all("include-range")
            .map(|r| (r.req("begin").to_string(), r.req("end").to_string()))
            .collect();
        for (begin, end) in [
            ("1.1.1.1", "254.254.254.254"),
            ("::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
        ] {
            if !ranges.contains(&(begin.to_string(), end.to_string())) {
                problems.push(format!("package {name}: no include-range {begin} - {end}"));
            }
        }
        if p.all("exclude-range").next().is_some() || p.all("specific").next().is_some() {
            problems.push(format!("package {name}: narrows the addresses"));
        }
        let services: Vec<&Element> = p.all("service").collect();
        if services.is_empty() {
            problems.push(format!("package {name}: no service"));
        }
        for s in services {
            if s.req("name") != "SNMP" {
                problems.push(format!(
                    "package {name}: service {} is not collectd's SNMP service",
                    s.req("name")
                ));
            }
            if s.attr("status") != Some("on") {
                problems.push(format!("package {name}: service is not on"));
            }
            if s.req("interval") != (COLLECTION_INTERVAL_SECONDS * 1000).to_string() {
                problems.push(format!("package {name}: interval is not collectd's"));
            }
            let named: Vec<&str> = s
                .all("parameter")
                .filter(|x| x.req("key") == "thresholding-group")
                .map(|x| x.req("value"))
                .collect();
            if named.is_empty() {
                problems.push(format!("package {name}: names no thresholding-group"));
            }
            for g in named {
                if !groups.iter().any(|(n, _, _)| n == g) {
                    problems.push(format!(
                        "package {name}: thresholding-group {g} is not defined"
                    ));
                }
            }
        }
    }
    problems
}

fn our_threshold_files() -> (String, String) {
    (read_opennms(THRESHOLDS_FILE), read_opennms(THRESHD_FILE))
}

fn our_event_ueis() -> BTreeSet<String> {
    parse_xml(&read_opennms(EVENTS_FILE))
        .all("event")
        .filter_map(|e| e.text_of("uei"))
        .collect()
}

#[test]
fn thresholds_read_collected_aliases_of_their_resource_types() {
    let c = load_ours(INSTALL_LINE).expect("the collection loads");
    let (thresholds, threshd) = our_threshold_files();
    let problems = threshold_problems(&thresholds, &threshd, &c, &our_event_ueis());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // What the issue asks for, each thresholded.
    let ds: BTreeSet<String> = threshold_groups(&thresholds)
        .into_iter()
        .flat_map(|(_, _, d)| d)
        .flat_map(|t| {
            if t.kind == "threshold" {
                vec![t.ds]
            } else {
                expression_variables(&t.ds).into_iter().collect()
            }
        })
        .collect();
    for alias in [
        "redisMemUsedOfMax",
        "redisCliUsedOfMax",
        "redisStRejectConns",
        "redisRpLag",
        "redisClusterState",
        "redisPstBgsaveStat",
        "redisPstAofWrStat",
        "redisCertExpiresIn",
        "puppetLastRunAge",
    ] {
        assert!(ds.contains(alias), "no threshold on {alias}");
    }
    // The expression reader itself.
    assert_eq!(
        expression_variables("math.max(a_1, b) / 86400 + 1.5e3 * c"),
        ["a_1", "b", "c"].iter().map(|s| s.to_string()).collect()
    );
    println!("{} thresholds", ds.len());
}

#[test]
fn broken_threshold_copies_fail() {
    let c = load_ours(INSTALL_LINE).expect("the collection loads");
    let ueis = our_event_ueis();
    let (thresholds, threshd) = our_threshold_files();
    for (from, to, expect) in [
        // An alias that is not collected (the MIB name, longer than an alias).
        (
            r#"ds-name="redisStRejectConns""#,
            r#"ds-name="redisStRejectedConns""#,
            "no numeric alias collected",
        ),
        // A table's object as node-level, and the web UI's name for node.
        (
            r#"ds-type="redisReplica" ds-name="redisRpLag""#,
            r#"ds-type="node" ds-name="redisRpLag""#,
            "no numeric alias collected for ds-type node",
        ),
        (
            r#"ds-type="node" ds-name="puppetLastRunAge""#,
            r#"ds-type="nodeSnmp" ds-name="puppetLastRunAge""#,
            "neither node nor a resource type",
        ),
        // A scalar of the instance table thresholded on the replica table.
        (
            r#"ds-type="redisInstance" ds-name="redisMemUsedOfMax""#,
            r#"ds-type="redisReplica" ds-name="redisMemUsedOfMax""#,
            "no numeric alias collected for ds-type redisReplica",
        ),
        // An expression variable that is not collected.
        (
            r#"expression="redisCertExpiresIn / 86400""#,
            r#"expression="redisInstanceCertExpiresIn / 86400""#,
            "redisInstanceCertExpiresIn is no numeric alias",
        ),
        // A percentage where hundredths are collected.
        (
            r#"ds-name="redisCliUsedOfMax" ds-label="redisInstanceName" value="9000""#,
            r#"ds-name="redisCliUsedOfMax" ds-label="redisInstanceName" value="90""#,
            "hundredths of a percent",
        ),
        // An enumeration's number that is none of its names.
        (
            r#"ds-name="redisClusterState" ds-label="redisInstanceName" value="2""#,
            r#"ds-name="redisClusterState" ds-label="redisInstanceName" value="3""#,
            "named numbers",
        ),
        // A counter's threshold as a count.
        (
            r#"value="0.001""#,
            r#"value="1""#,
            "thresholded as a rate per second",
        ),
        // A label that is no string of the type.
        (
            r#"ds-label="redisRpAddress""#,
            r#"ds-label="redisInstanceName""#,
            "ds-label redisInstanceName is no string collected for redisReplica",
        ),
        // A rearm above a high threshold's value.
        (
            r#"value="3600" rearm="1800""#,
            r#"value="3600" rearm="4000""#,
            "rearm must be below",
        ),
        // A custom UEI no event defines.
        (
            r#"ds-name="puppetLastRunAge""#,
            r#"ds-name="puppetLastRunAge" triggeredUEI="uei.opennms.org/vendor/daysofwonder/puppetOld""#,
            "defined by no event",
        ),
    ] {
        let copy = broken(&thresholds, from, to);
        let problems = threshold_problems(&copy, &threshd, &c, &ueis);
        assert!(
            problems.iter().any(|p| p.contains(expect)),
            "{from} -> {to}: expected {expect:?}, got {problems:?}"
        );
    }
    for (from, to, expect) in [
        (
            "nodeSysOID LIKE '.1.3.6.1.4.1.8072.3.%'",
            "nodeSysOID LIKE '.1.3.6.1.4.1.9.%'",
            "lacks nodeSysOID LIKE",
        ),
        (
            r#"<include-range begin="::1""#,
            r#"<include-range begin="::2""#,
            "no include-range ::1",
        ),
        (
            r#"service name="SNMP""#,
            r#"service name="Redis""#,
            "not collectd's SNMP",
        ),
        (
            r#"value="redis-snmp"/>"#,
            r#"value="redis"/>"#,
            "thresholding-group redis is not defined",
        ),
    ] {
        let copy = broken(&threshd, from, to);
        let problems = threshold_problems(&thresholds, &copy, &c, &ueis);
        assert!(
            problems.iter().any(|p| p.contains(expect)),
            "{from} -> {to}: expected {expect:?}, got {problems:?}"
        );
    }
}

#[test]
fn the_readme_lists_every_threshold_with_its_default() {
    let readme = read_opennms("README.md");
    let (thresholds, _) = our_threshold_files();
    let defs: Vec<ThresholdDef> = threshold_groups(&thresholds)
        .into_iter()
        .flat_map(|(_, _, d)| d)
        .collect();
    let rows: Vec<&str> = readme
        .lines()
        .filter(|l| l.starts_with("| `") && l.matches(" | ").count() >= 6)
        .collect();
    for t in &defs {
        let row = format!(
            "| `{}` | `{}` | {} | {} | {} | {} |",
            t.ds, t.ds_type, t.ty, t.value, t.rearm, t.trigger
        );
        assert!(
            rows.iter().any(|r| r.starts_with(&row)),
            "opennms/README.md has no row {row}"
        );
    }
    // And no row for a threshold the file does not have.
    let listed = rows
        .iter()
        .filter(|r| {
            let resource = r.split(" | ").nth(1).unwrap_or("");
            resource == "`node`" || resource.starts_with("`redis")
        })
        .filter(|r| {
            let ty = r.split(" | ").nth(2).unwrap_or("");
            ["high", "low", "relativeChange", "absoluteChange"].contains(&ty)
        })
        .count();
    assert_eq!(listed, defs.len(), "threshold rows in opennms/README.md");
}
