//! Thresholds: the snippets read as OpenNMS's thresholding reads them.

use super::*;

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
pub(crate) struct ThresholdDef {
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
pub(crate) fn expression_variables(expression: &str) -> BTreeSet<String> {
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

pub(crate) fn threshold_groups(text: &str) -> Vec<(String, String, Vec<ThresholdDef>)> {
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
pub(crate) fn threshold_problems(
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
    if let Some(names) = super::super::named_numbers(def) {
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
