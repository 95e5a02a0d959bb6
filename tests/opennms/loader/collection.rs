//! Data collection: what OpenNMS makes of `include-collection` lines,
//! system definitions, groups and resource types, and the classes they
//! name.

use super::*;

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
pub(crate) struct ResourceTypeDef {
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
pub(crate) struct MibObjDef {
    pub oid: String,
    pub instance: String,
    pub alias: String,
    pub ty: String,
}

#[derive(Debug, Clone)]
pub(crate) struct GroupDef {
    pub name: String,
    pub objs: Vec<MibObjDef>,
    pub include_groups: Vec<String>,
}

#[derive(Debug, Clone)]
pub(crate) struct SystemDefDef {
    pub name: String,
    pub groups: Vec<String>,
}

/// One `datacollection-group` file.
#[derive(Debug, Clone)]
pub(crate) struct GroupFile {
    pub name: String,
    pub resource_types: Vec<ResourceTypeDef>,
    pub groups: Vec<GroupDef>,
    pub system_defs: Vec<SystemDefDef>,
}

pub(crate) fn resource_type_def(t: &Element) -> ResourceTypeDef {
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

pub(crate) fn parse_group_file(text: &str) -> GroupFile {
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
pub(crate) struct LoadedCollection {
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
pub(crate) fn load_datacollection(
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
pub(crate) fn config_with(includes: &str) -> String {
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
pub(crate) fn validates(config: &str) {
    let Some(xsd) = super::super::xsd_dir() else {
        println!("SKIPPED: schema validation of the include lines (no XSDs)");
        return;
    };
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), config).unwrap();
    let out = super::super::xmllint(&[
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
pub(crate) fn collection_problems(c: &LoadedCollection) -> Vec<String> {
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
