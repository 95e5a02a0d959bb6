//! Graphs: the reports OpenNMS loads and the resources it offers each on.

use super::*;

// ---------------------------------------------------------------------------
// Graphs

#[derive(Debug, Clone)]
pub(crate) struct PrefabGraph {
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
pub(crate) fn load_graphs(text: &str) -> (Vec<PrefabGraph>, Vec<String>) {
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
pub(crate) fn offered_reports<'a>(
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
pub(crate) fn graph_problems(c: &LoadedCollection, text: &str) -> Vec<String> {
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
