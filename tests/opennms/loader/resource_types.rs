//! Resource types: the folder OpenNMS makes of a row and the label its
//! web UI shows.

use super::*;

// ---------------------------------------------------------------------------
// Folder names and labels

/// The directory OpenNMS makes of a row of a sibling-column type, and its
/// label in the web UI: GenericIndexResourceType.getResourceByIndex
/// (opennms-dao/src/main/java/org/opennms/netmgt/dao/support/GenericIndexResourceType.java)
/// evaluates resourceLabel with `${index}` (and `subIndex`) taken from the
/// directory's name, and other symbols from the row's string properties.
pub(crate) fn folder_and_label(
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
