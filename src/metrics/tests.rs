use super::*;
use crate::oid::Oid;
use crate::smi::Syntax;
use std::collections::HashSet;

#[test]
fn names_and_oids_are_unique() {
    let mut names = HashSet::new();
    let mut oids = HashSet::new();
    for o in redis_objects() {
        assert!(names.insert(o.name), "duplicate name {}", o.name);
        assert!(oids.insert(o.arcs), "duplicate OID for {}", o.name);
    }
}

#[test]
fn legacy_objects_keep_their_numbers() {
    for (n, o) in LEGACY_SCALARS.iter().enumerate() {
        assert_eq!(o.arcs, &[LEGACY_BRANCH, n as u32 + 1], "{}", o.name);
    }
    assert_eq!(LEGACY_SCALARS.len(), 17);
    // The OpenNMS aliases of the Perl agent's files, which users' RRD files
    // are named after.
    let aliases: Vec<&str> = LEGACY_SCALARS[..6]
        .iter()
        .map(|o| o.opennms_alias())
        .collect();
    assert_eq!(
        aliases,
        [
            "redisConnectedClnts",
            "redisConnectedSlavs",
            "redisUsedMemory",
            "redisChangsSncLstSv",
            "redisTotalConnectns",
            "redisCommandsPrcssd",
        ]
    );
}

/// The unit a source implies, where it implies one: a conversion's
/// own, a field of the agent's whose meaning fixes it, or an INFO
/// field's name (`…_bytes`, `…_usec`, `used_memory…`).
fn implied_units(def: &ObjectDef) -> Option<&'static str> {
    if let Some(field) = KeyspaceField::of(def) {
        return (field == KeyspaceField::AvgTtl).then_some("milliseconds");
    }
    if let Some(field) = ReplicaField::of(def) {
        return match field {
            ReplicaField::LagSeconds => Some("seconds"),
            ReplicaField::Offset | ReplicaField::LagBytes => Some("bytes"),
            _ => None,
        };
    }
    if let Some(field) = CommandField::of(def) {
        return matches!(
            field,
            CommandField::Usec
                | CommandField::UsecPerCall
                | CommandField::P50
                | CommandField::P99
                | CommandField::P999
        )
        .then_some("microseconds");
    }
    // UNIX times, served as seconds.
    if let Some(field) = SlowlogField::of(def) {
        return match field {
            SlowlogField::LastTime => Some("seconds"),
            SlowlogField::LastUsec => Some("microseconds"),
            _ => None,
        };
    }
    if let Some(field) = LatencyField::of(def) {
        return match field {
            LatencyField::LastTime => Some("seconds"),
            LatencyField::LastMs | LatencyField::MaxMs => Some("milliseconds"),
            _ => None,
        };
    }
    match def.source {
        Source::Info {
            conversion: Conversion::SecondsToCentiseconds,
            ..
        } => Some("centiseconds"),
        Source::Info {
            conversion: Conversion::AgeOf,
            ..
        } => Some("seconds"),
        Source::Info {
            conversion: Conversion::Unsigned | Conversion::Signed,
            fields,
        } => {
            let field = fields.first()?;
            if field.ends_with("_bytes") || field.starts_with("used_memory") {
                Some("bytes")
            } else if field.ends_with("_usec") {
                Some("microseconds")
            } else if field.ends_with("_milliseconds") {
                Some("milliseconds")
            } else if field.ends_with("_seconds")
                || field.ends_with("_ago")
                || (field.ends_with("_sec") && !field.ends_with("_per_sec"))
            {
                Some("seconds")
            } else {
                None
            }
        }
        Source::Status(StatusField::DataAge) => Some("seconds"),
        Source::Status(StatusField::PollDuration) => Some("milliseconds"),
        Source::Puppet(PuppetField::LastRunTime | PuppetField::LastRunAge) => Some("seconds"),
        Source::Puppet(PuppetField::Phase(_)) => Some("milliseconds"),
        _ => None,
    }
}

#[test]
fn units_are_what_the_source_implies_and_only_on_numbers() {
    let mut problems = Vec::new();
    for def in redis_objects().chain(puppet_objects()) {
        if let Some(implied) = implied_units(def) {
            if def.units != Some(implied) {
                problems.push(format!(
                    "{}: units {:?}, the source says {implied:?}",
                    def.name, def.units
                ));
            }
        }
        let number = matches!(
            def.syntax,
            Syntax::Counter32
                | Syntax::Counter64
                | Syntax::Gauge32
                | Syntax::Gauge64
                | Syntax::Integer32
                | Syntax::TimeTicks
        );
        if def.units.is_some() && !number {
            problems.push(format!("{}: units on a {:?}", def.name, def.syntax));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_longest_root_leaves_room_for_every_row() {
    // The longest suffix a row shape makes: an instance and a name
    // index (its length, then one arc per byte).
    let longest_suffix = 2 + MAX_NAME_INDEX_LEN;
    let long_root = Oid::new(vec![9; MAX_ROOT_SUBIDS]).unwrap();
    let layout = Layout::from_legacy_oid(long_root.clone())
        .and_then(|l| l.with_puppet_root(long_root.clone()))
        .unwrap();
    for def in redis_objects().chain(puppet_objects()) {
        let oid = layout.object_oid(def);
        assert!(
            oid.len() + longest_suffix <= crate::oid::MAX_SUBIDS,
            "{}",
            def.name
        );
        assert!(layout.row_oid(def, &[1; 2 + MAX_NAME_INDEX_LEN]).is_some());
    }
    let too_long = Oid::new(vec![9; MAX_ROOT_SUBIDS + 1]).unwrap();
    assert_eq!(
        Layout::from_legacy_oid(too_long.clone()),
        Err(LayoutError::TooLong(too_long.clone()))
    );
    assert!(Layout::default_layout().with_puppet_root(too_long).is_err());
    let one: Oid = "1".parse().unwrap();
    assert_eq!(
        Layout::from_legacy_oid(one.clone()),
        Err(LayoutError::TooShort(one))
    );
}

#[test]
fn no_object_oid_prefixes_another() {
    let mut oids = Layout::default_layout().object_oids();
    oids.sort();
    for w in oids.windows(2) {
        assert!(!w[1].starts_with(&w[0]), "{:?} prefixes {:?}", w[0], w[1]);
    }
}

#[test]
fn enumerations_read_every_label_and_nothing_else() {
    for (label, number) in Role::LABELS {
        assert_eq!(Role::from_label(label).map(Role::number), Some(*number));
    }
    assert_eq!(Role::from_label("slave"), Some(Role::Replica));
    assert_eq!(Role::from_label("replica"), Some(Role::Replica));
    assert_eq!(Role::from_label("leader"), None);
    assert_eq!(enum_number(Role::LABELS, "leader"), None);
    assert_eq!(InstanceState::Loading.number(), 3);
    assert_eq!(enum_number(InstanceState::LABELS, "down"), Some(2));
    for (label, number) in PuppetResourceState::LABELS {
        let state = PuppetResourceState::from_label(label).unwrap();
        assert_eq!(state.number(), *number);
    }
}

#[test]
fn every_column_is_in_exactly_one_table_and_every_table_in_the_lists() {
    let tabled: Vec<&str> = TABLES
        .iter()
        .flat_map(|t| t.columns.iter().map(|c| c.name))
        .collect();
    let columns: Vec<&str> = redis_objects()
        .filter(|o| !LEGACY_SCALARS.iter().any(|l| l.name == o.name))
        .map(|o| o.name)
        .collect();
    assert_eq!(tabled, {
        let mut sorted_in_table_order = Vec::new();
        for t in TABLES {
            for c in t.columns {
                assert!(columns.contains(&c.name), "{} is not served", c.name);
                sorted_in_table_order.push(c.name);
            }
        }
        sorted_in_table_order
    });
    assert_eq!(
        tabled.len(),
        columns.len(),
        "a served column is in no table"
    );
    for t in TABLES {
        let entry = &t.columns[0].arcs[..t.columns[0].arcs.len() - 1];
        for c in t.columns {
            assert!(
                c.arcs.starts_with(entry) && c.arcs.len() == entry.len() + 1,
                "{}",
                c.name
            );
        }
        assert_eq!(
            t.augments.is_some(),
            t.index == RowIndex::Instance && t.table != "redisInstanceTable"
        );
    }
}

#[test]
fn row_indexes_are_built_and_recognised_alike() {
    let name = RowIndex::InstanceAndName {
        object: "redisCmdName",
    };
    let suffix = name_index(2, "get").unwrap();
    assert_eq!(suffix, [2, 3, 103, 101, 116]);
    assert!(name.fits(&suffix));
    assert!(!name.fits(&[2, 4, 103, 101, 116]));
    assert_eq!(name_index(1, ""), None);
    assert_eq!(name_index(1, &"x".repeat(MAX_NAME_INDEX_LEN + 1)), None);
    assert_eq!(name_index(1, "caf\u{e9}"), None);
    let db = RowIndex::InstanceAndNumber {
        object: "redisKsDb",
        min: 0,
    };
    assert!(db.fits(&[1, 0]) && !db.fits(&[0, 0]) && !db.fits(&[1]));
    let slot = RowIndex::InstanceAndNumber {
        object: "redisRpSlot",
        min: 1,
    };
    assert!(!slot.fits(&[1, 0]));
    assert!(RowIndex::Instance.fits(&[3]) && !RowIndex::Instance.fits(&[3, 1]));
    let group = RowIndex::InstanceNameAndName {
        parent: "redisKeyName",
        object: "redisKgName",
    };
    assert!(group.fits(&[1, 1, 97, 2, 98, 99]));
    assert!(!group.fits(&[1, 1, 97]) && !group.fits(&[1, 1, 97, 2, 98]));
    assert!(!group.fits(&[1, 2, 97, 2, 98, 99]) && !group.fits(&[1, 1, 97, 0]));
}

/// Every row is made by `RowIndex::suffix`, which refuses what its INDEX
/// cannot hold: what it makes, `fits` takes, and numbers stay within the
/// MIB's `Integer32` ranges (redisInstanceIndex is 1..2147483647).
#[test]
fn suffixes_are_rows_of_their_index_and_nothing_else() {
    let max = i32::MAX as u32;
    let cases: &[(RowIndex, RowKey, Option<Vec<u32>>)] = &[
        (RowIndex::Instance, RowKey::Instance(3), Some(vec![3])),
        (RowIndex::Instance, RowKey::Instance(max), Some(vec![max])),
        (RowIndex::Instance, RowKey::Instance(max + 1), None),
        (RowIndex::Instance, RowKey::Instance(0), None),
        (RowIndex::Instance, RowKey::Number(1, 1), None),
        (KEYSPACE_TABLE.index, RowKey::Number(2, 0), Some(vec![2, 0])),
        (REPLICA_TABLE.index, RowKey::Number(2, 0), None),
        (REPLICA_TABLE.index, RowKey::Number(2, max + 1), None),
        (
            COMMAND_TABLE.index,
            RowKey::Name(2, "get"),
            Some(vec![2, 3, 103, 101, 116]),
        ),
        (COMMAND_TABLE.index, RowKey::Name(2, ""), None),
        (COMMAND_TABLE.index, RowKey::Name(max + 1, "get"), None),
        (
            STREAM_GROUP_TABLE.index,
            RowKey::NameName(1, "a", "bc"),
            Some(vec![1, 1, 97, 2, 98, 99]),
        ),
        (
            STREAM_GROUP_TABLE.index,
            RowKey::NameName(1, "a", &"x".repeat(MAX_SECOND_NAME_INDEX_LEN + 1)),
            None,
        ),
        (PUPPET_RESOURCE_TABLE.index, RowKey::Row(1), Some(vec![1])),
        (
            PUPPET_RESOURCE_TABLE.index,
            RowKey::Row(MAX_PUPPET_RESOURCES as u32 + 1),
            None,
        ),
        (PUPPET_EVENT_TABLE.index, RowKey::Row(max), Some(vec![max])),
        (PUPPET_EVENT_TABLE.index, RowKey::Row(0), None),
        (
            KEYSIZES_TABLE.index,
            RowKey::Bucket(2, 0, KeysizesType::Hashes, 0),
            Some(vec![2, 0, 5, 0]),
        ),
        (
            KEYSIZES_TABLE.index,
            RowKey::Bucket(1, max, KeysizesType::Strings, MAX_SIZE_BUCKET),
            Some(vec![1, max, 1, 64]),
        ),
        (
            KEYSIZES_TABLE.index,
            RowKey::Bucket(1, 0, KeysizesType::Strings, MAX_SIZE_BUCKET + 1),
            None,
        ),
        (
            KEYSIZES_TABLE.index,
            RowKey::Bucket(1, max + 1, KeysizesType::Lists, 1),
            None,
        ),
        (KEYSIZES_TABLE.index, RowKey::Number(1, 1), None),
        (THREAD_TABLE.index, RowKey::Number(1, 0), Some(vec![1, 0])),
        (
            MODULE_TABLE.index,
            RowKey::Name(1, "vectorset"),
            Some(vec![1, 9, 118, 101, 99, 116, 111, 114, 115, 101, 116]),
        ),
    ];
    for (index, key, want) in cases {
        let got = index.suffix(*key);
        assert_eq!(&got, want, "{index:?} {key:?}");
        if let Some(suffix) = got {
            assert!(index.fits(&suffix), "{index:?} {suffix:?}");
        }
    }
    assert!(!RowIndex::Instance.fits(&[max + 1]));
    assert!(!COMMAND_TABLE.index.fits(&[1, 1, 256]));
    // A type the enumeration does not name, a bucket past 64, a part
    // missing or one too many.
    let keysizes = KEYSIZES_TABLE.index;
    assert!(keysizes.fits(&[1, 0, 5, 64]));
    for bad in [
        &[1, 0, 0, 1][..],
        &[1, 0, 6, 1],
        &[1, 0, 1, 65],
        &[0, 0, 1, 1],
        &[1, 0, 1],
        &[1, 0, 1, 1, 1],
    ] {
        assert!(!keysizes.fits(bad), "{bad:?}");
    }
}

/// An object's enumeration is on its row of the catalogue: every
/// `Syntax::Enum` object names one, no other object does, and an INFO
/// word read through an enumeration reads that one.
#[test]
fn every_enumerated_object_names_its_enumeration() {
    for def in redis_objects().chain(puppet_objects()) {
        assert_eq!(
            def.syntax == Syntax::Enum,
            def.enumeration.is_some(),
            "{}",
            def.name
        );
        if let Source::Info {
            conversion: Conversion::Enum(labels),
            ..
        } = def.source
        {
            assert_eq!(def.enumeration, Some(labels), "{}", def.name);
        }
    }
}

/// The modules are the one list: each object once, in one module, every
/// table of the catalogue (the Puppet ones too) in its module.
#[test]
fn the_modules_hold_every_object_and_table() {
    let mut names = HashSet::new();
    for module in MODULES {
        for def in module.objects() {
            assert!(names.insert(def.name), "{} twice", def.name);
            assert_eq!(
                matches!(def.source, Source::Puppet(_)),
                module.name == "PUPPET-AGENT-MIB",
                "{}",
                def.name
            );
        }
    }
    let tables: Vec<&str> = MODULES
        .iter()
        .flat_map(|m| m.tables.iter().map(|t| t.table))
        .collect();
    assert!(tables.contains(&"puppetResourceTable") && tables.contains(&"puppetEventTable"));
    assert_eq!(tables.len(), TABLES.len() + PUPPET_TABLES.len());
    for def in PUPPET_EVENT_COLUMNS {
        assert_eq!(table_of(def).map(|t| t.table), Some("puppetEventTable"));
    }
    // The INFO groups are the tables read from INFO, derived.
    assert_eq!(INFO_GROUPS.len(), 10);
    assert!(INFO_GROUPS
        .iter()
        .all(|g| g.iter().all(|d| matches!(d.source, Source::Info { .. }))));
}

#[test]
fn instance_columns_live_in_the_entry() {
    for o in INSTANCE_COLUMNS {
        assert!(o.arcs.starts_with(INSTANCE_ENTRY), "{}", o.name);
        assert_eq!(o.arcs.len(), INSTANCE_ENTRY.len() + 1, "{}", o.name);
    }
}

/// The OpenNMS lists (`opennms.rs`) cover the catalogue: every object is
/// collected by exactly one group or left out with a reason, a group holds
/// scalars or table columns but not both, and the tables' resource types
/// are declared, each used, each stored under a text column of its own.
#[test]
fn every_object_is_collected_once_or_left_out_and_every_resource_type_declared() {
    let mut placed: Vec<&str> = COLLECTION_GROUPS
        .iter()
        .flat_map(|g| g.objects.iter().flat_map(|a| a.iter()))
        .chain(NOT_COLLECTED.iter().flat_map(|n| n.objects.iter()))
        .map(|o| o.name)
        .collect();
    let mut all: Vec<&str> = redis_objects()
        .chain(puppet_objects())
        .map(|o| o.name)
        .collect();
    placed.sort_unstable();
    all.sort_unstable();
    assert_eq!(
        placed, all,
        "an object is in no group or in two: add each array of the catalogue to one \
         COLLECTION_GROUPS entry or to NOT_COLLECTED (src/metrics/opennms.rs)"
    );
    for n in NOT_COLLECTED {
        assert!(!n.why.is_empty() && !n.objects.is_empty());
    }
    let mut names: Vec<&str> = COLLECTION_GROUPS.iter().map(|g| g.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), COLLECTION_GROUPS.len(), "a group name twice");
    for g in COLLECTION_GROUPS {
        let instances: std::collections::BTreeSet<bool> = g
            .objects
            .iter()
            .flat_map(|a| a.iter())
            .map(|o| opennms_instance(o) == "0")
            .collect();
        assert_eq!(instances.len(), 1, "{} mixes scalars and columns", g.name);
    }
    for t in RESOURCE_TYPES {
        let tables: Vec<&TableDef> = TABLES
            .iter()
            .chain(PUPPET_TABLES)
            .filter(|x| x.resource_type == t.name)
            .collect();
        assert!(
            !tables.is_empty(),
            "resource type {} is used by no table",
            t.name
        );
        if let Storage::Sibling(column) = t.storage {
            assert!(
                tables.iter().any(|x| x
                    .columns
                    .iter()
                    .any(|c| c.name == column && c.syntax == Syntax::DisplayString)),
                "{}: {column} is no text column of its tables",
                t.name
            );
        }
    }
    // A table OpenNMS does not collect needs no resource type there.
    let left_out = |t: &TableDef| {
        NOT_COLLECTED
            .iter()
            .any(|n| n.objects.iter().any(|o| o.name == t.columns[0].name))
    };
    for t in TABLES.iter().chain(PUPPET_TABLES).filter(|t| !left_out(t)) {
        assert!(
            RESOURCE_TYPES.iter().any(|r| r.name == t.resource_type),
            "{}: resource type {} is not declared",
            t.table,
            t.resource_type
        );
    }
}

/// A notification's number is its enum's discriminant, the lists are the
/// enums in the MIB's order, its name is its module's prefix and its
/// variant's name, and the configuration finds it by that name only.
#[test]
fn notifications_are_typed_numbered_and_named_alike() {
    let modules: [(&[NotificationDef], &str, Vec<Notification>); 2] = [
        (
            REDIS_NOTIFICATIONS,
            "redis",
            RedisEvent::ALL.iter().map(|&e| e.into()).collect(),
        ),
        (
            PUPPET_NOTIFICATIONS,
            "puppet",
            PuppetEvent::ALL.iter().map(|&e| e.into()).collect(),
        ),
    ];
    let mut all = Vec::new();
    for (list, prefix, events) in modules {
        assert_eq!(list.len(), events.len());
        for (n, (def, event)) in list.iter().zip(&events).enumerate() {
            assert_eq!(def.name, event.name());
            assert_eq!(
                def.number as usize,
                n + 1,
                "{}: numbered in order",
                def.name
            );
            let variant = match event {
                Notification::Redis(e) => {
                    assert_eq!(e.number(), def.number);
                    assert_eq!(def.mib, Mib::Redis);
                    format!("{e:?}")
                }
                Notification::Puppet(e) => {
                    assert_eq!(e.number(), def.number);
                    assert_eq!(def.mib, Mib::Puppet);
                    format!("{e:?}")
                }
            };
            assert_eq!(def.name, format!("{prefix}{variant}"));
            assert_eq!(Notification::from_name(def.name), Some(*event));
            assert_eq!(event.to_string(), def.name);
        }
        all.extend(events);
    }
    assert_eq!(Notification::all().collect::<Vec<_>>(), all);
    assert_eq!(all_notifications().count(), all.len());
    assert_eq!(Notification::from_name("redisRoleChange"), None);
    assert_eq!(Notification::from_name("RedisRoleChanged"), None);
}

/// A notification is about one row at most ([`About::row`]): the objects
/// that need a row are columns of one table. A resource notification,
/// limited all together rather than per source, is one about a row of its
/// own.
#[test]
fn a_notification_carries_one_row_at_most() {
    for def in all_notifications() {
        let row_tables: HashSet<&str> = def
            .objects
            .iter()
            .filter(|c| matches!(c.suffix, Suffix::SourceAndRow | Suffix::Row))
            .map(|c| table_of(c.object).unwrap().table)
            .collect();
        assert!(row_tables.len() <= 1, "{}: {row_tables:?}", def.name);
        if def.limit == Limit::Resources {
            assert_eq!(row_tables.len(), 1, "{}", def.name);
        }
    }
}

/// Each object a notification carries takes its instance from what the
/// notification is about, by where it sits in the catalogue: a scalar
/// `.0`, an instance's column the instance, an alarm's or an event's
/// column its row.
#[test]
fn carried_objects_are_placed_by_what_the_notification_is_about() {
    let of = |name: &str| {
        all_notifications()
            .flat_map(|d| d.objects)
            .find(|c| c.object.name == name)
            .copied()
            .unwrap()
    };
    let (scalar, name, alarm, event) = (
        of("puppetLastRunTime"),
        of("redisInstanceName"),
        of("redisAlarmName"),
        of("puppetEventTitle"),
    );
    assert_eq!(
        (scalar.suffix, name.suffix, alarm.suffix, event.suffix),
        (
            Suffix::Scalar,
            Suffix::Source,
            Suffix::SourceAndRow,
            Suffix::Row
        )
    );
    let whole = About::source(4);
    let row = About::row(4, 7);
    assert_eq!(scalar.instance(About::PUPPET), Some(vec![0]));
    assert_eq!(name.instance(whole), Some(vec![4]));
    assert_eq!(name.instance(row), Some(vec![4]));
    assert_eq!(alarm.instance(row), Some(vec![4, 7]));
    assert_eq!(alarm.instance(whole), None);
    assert_eq!(event.instance(About::row(PUPPET_SOURCE, 7)), Some(vec![7]));
    assert_eq!(event.instance(About::PUPPET), None);
    let layout = Layout::default_layout();
    assert_eq!(
        layout.carried_oid(&alarm, row).unwrap().to_string(),
        ".1.3.6.1.4.1.20267.400.3.23.1.2.4.7"
    );
}
