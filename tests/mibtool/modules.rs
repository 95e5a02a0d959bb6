//! The two MIB modules as the catalogue (`redis_snmp::metrics`) describes
//! them, in one shape, so that the rules of `rules.rs` and
//! `second_reading.rs` run over both: [`modules`] is the list.
//!
//! What each module has (objects, scalars, tables with their INDEX,
//! notifications) is read from the catalogue. What the catalogue does not
//! say yet, and the module-specific expectations the generic rules take as
//! data, are written here once per module, in [`redis`] and [`puppet`]:
//! the scaled-value conventions, how conformance groups are split, and the
//! names kept over 32 characters are each module's own.

use redis_snmp::metrics::{
    puppet_objects, redis_objects, About, Column, CommandField, Conversion, KeysizesType,
    Mib as NotifyMib, NotificationDef, ObjectDef, RowIndex, Source, TableDef, DEFAULT_PUPPET_ROOT,
    DEFAULT_REDIS_ROOT, LEGACY_SCALARS, MAX_NAME_INDEX_LEN, MAX_SECOND_NAME_INDEX_LEN,
    MAX_SIZE_BUCKET, PUPPET_CERTIFICATE_COLUMNS, PUPPET_EVENT_COLUMNS, PUPPET_EVENT_SCALARS,
    PUPPET_FACT_COLUMNS, PUPPET_NOTIFICATIONS, PUPPET_RESOURCE_COLUMNS, PUPPET_RUN_SCALARS,
    PUPPET_SCALARS, PUPPET_SOURCE, PUPPET_TABLES, REDIS_NOTIFICATIONS, TABLES,
};
use redis_snmp::oid::Oid;
use std::collections::BTreeSet;

/// One MIB module of the agent, as the generic rules need it.
pub struct ModuleSpec {
    /// `REDIS-SERVER-MIB`.
    pub name: &'static str,
    /// The MODULE-IDENTITY's descriptor (`redis`), also the prefix of every
    /// name the module defines.
    pub identity: &'static str,
    /// How the notifier tells the module's notifications apart.
    pub notify_mib: NotifyMib,
    /// The default root (`DEFAULT_REDIS_ROOT`).
    pub root: Oid,
    /// Every object the agent serves in the module.
    pub objects: Vec<&'static ObjectDef>,
    /// Those served with instance `.0`.
    pub scalars: Vec<&'static ObjectDef>,
    /// The arcs below the root under which the scalars hang.
    pub scalar_branches: &'static [&'static [u32]],
    pub tables: Vec<TableSpec>,
    /// The arcs below the root of the node that holds the tables (`redisObjects`).
    pub tables_under: &'static [u32],
    pub notifications: &'static [NotificationDef],
    /// The arc of the conformance node (`…Conformance`): compliances at
    /// `.1`, groups at `.2`.
    pub conformance: u32,
    /// The module's conventions for scaled values: the factor, the TC and
    /// its DISPLAY-HINT.
    pub scaled_tcs: &'static [(u32, &'static str, &'static str)],
    /// Sets of names each split among groups of their own: every member in
    /// exactly one group, and a group that touches the set holds nothing
    /// else (unless it is one of `cross_groups`).
    pub group_families: Vec<(String, BTreeSet<&'static str>)>,
    /// Groups that hold one feature's members across families.
    pub cross_groups: &'static [&'static str],
    /// Groups outside every family (published ones that overlap).
    pub free_groups: &'static [&'static str],
    /// Published descriptors over 32 characters that stay (RFC 2578
    /// section 3.1 discourages, smilint does not report them at level 6).
    pub long_names: &'static [&'static str],
    /// smilint messages accepted: the `{error-name}`, a piece of the
    /// message, and why; each must be explained in the module's section of
    /// `mibs/README.md`.
    pub smilint_allowed: &'static [AllowedLint],
    /// mib-rs diagnostics accepted in the module (tests/mib_modules.rs
    /// checks that each occurs once and that nothing else does, besides the
    /// length warnings of `long_names`).
    pub mib_rs_accepted: &'static [AcceptedDiagnostic],
}

pub struct AcceptedDiagnostic {
    /// mib-rs's `DiagCode`, as `{:?}` writes it.
    pub code: &'static str,
    pub contains: &'static str,
    pub why: &'static str,
}

pub struct AllowedLint {
    pub error: &'static str,
    pub contains: &'static str,
    pub why: &'static str,
}

impl ModuleSpec {
    pub fn is_scalar(&self, o: &ObjectDef) -> bool {
        self.scalars.iter().any(|s| s.name == o.name)
    }

    pub fn object(&self, name: &str) -> Option<&'static ObjectDef> {
        self.objects.iter().copied().find(|o| o.name == name)
    }

    /// The table an object is a column of.
    pub fn table_of(&self, name: &str) -> Option<&TableSpec> {
        self.tables
            .iter()
            .find(|t| t.columns.iter().any(|c| c.name == name))
    }

    /// Every name the agent gives an object or notification of the module.
    pub fn agent_names(&self) -> Vec<&'static str> {
        self.objects
            .iter()
            .map(|o| o.name)
            .chain(self.notifications.iter().map(|n| n.name))
            .collect()
    }

    pub fn oid(&self, arcs: &[u32]) -> Oid {
        self.root.child(arcs).expect("arcs below a short root")
    }

    /// The OID a notification is sent as: `root.0.N`.
    pub fn notification_oid(&self, def: &NotificationDef) -> Oid {
        self.oid(&[0, def.number])
    }

    /// The section of `mibs/README.md` about this module: the whole file up
    /// to the PUPPET-AGENT-MIB heading for REDIS-SERVER-MIB, that heading's
    /// section for PUPPET-AGENT-MIB.
    /// The instance a notification's objects are checked at: instance 5
    /// (and alarm 7) of REDIS-SERVER-MIB, row 3 of PUPPET-AGENT-MIB's
    /// tables (the certificate table has rows 1 to 3); where each object
    /// goes is the catalogue's (`Carried`).
    pub fn notified_about(&self) -> About {
        match self.notify_mib {
            NotifyMib::Redis => About::row(5, 7),
            NotifyMib::Puppet => About::row(PUPPET_SOURCE, 3),
        }
    }

    pub fn readme_section<'a>(&self, readme: &'a str) -> &'a str {
        let (redis, puppet) = readme
            .split_once("## PUPPET-AGENT-MIB")
            .expect("mibs/README.md has a PUPPET-AGENT-MIB section");
        match self.notify_mib {
            NotifyMib::Redis => redis,
            NotifyMib::Puppet => puppet,
        }
    }
}

/// What an index object must be.
#[derive(Debug, Clone, Copy)]
pub enum IndexSyntax {
    /// `Integer32 (min..max)`.
    Integer { min: i64, max: i64 },
    /// `DisplayString (SIZE (min..max))`, not IMPLIED.
    Text { min: i64, max: i64 },
    /// `INTEGER { name(n), ... }`: these names and numbers (an
    /// `enumeration!`'s `LABELS`).
    Enum(&'static [(&'static str, i32)]),
}

#[derive(Debug, Clone, Copy)]
pub struct IndexObject {
    pub name: &'static str,
    pub syntax: IndexSyntax,
    /// What its DESCRIPTION must name: where the agent takes it from.
    pub source: &'static [&'static str],
}

pub enum Linkage {
    /// INDEX { .. }; the entry's own objects (the last, or the last
    /// three of `redisKeysizesEntry`) are its columns 1, 2, ...
    Index(Vec<IndexObject>),
    /// AUGMENTS { row }.
    Augments(&'static str),
}

/// A table of the agent: its served columns and how its rows are indexed.
pub struct TableSpec {
    pub columns: &'static [ObjectDef],
    pub linkage: Linkage,
    /// The catalogue's shape of its rows (its `TableDef`'s INDEX).
    pub row_index: RowIndex,
}

impl TableSpec {
    /// The entry's arcs below the root, from its columns (which must agree).
    pub fn entry_arcs(&self) -> Result<&'static [u32], String> {
        let first = self.columns.first().ok_or("a table without columns")?;
        let entry = &first.arcs[..first.arcs.len() - 1];
        for c in self.columns {
            if c.arcs.len() != first.arcs.len() || !c.arcs.starts_with(entry) {
                return Err(format!("{} is not beside {}", c.name, first.name));
            }
        }
        Ok(entry)
    }

    /// The index objects that are columns of this entry, in the order of
    /// its columns from 1: the catalogue's own objects of the row, or the
    /// last of the INDEX (`redisInstanceIndex` of `redisInstanceEntry`).
    pub fn own_index(&self) -> Vec<IndexObject> {
        match &self.linkage {
            Linkage::Index(objects) => {
                let own = self.row_index.own_objects().len().max(1);
                objects[objects.len().saturating_sub(own)..].to_vec()
            }
            Linkage::Augments(_) => Vec::new(),
        }
    }

    /// The names of its INDEX (its own or, for an AUGMENTS, nothing).
    pub fn index_names(&self) -> Vec<&'static str> {
        match &self.linkage {
            Linkage::Index(objects) => objects.iter().map(|i| i.name).collect(),
            Linkage::Augments(_) => Vec::new(),
        }
    }
}

pub const MAX_I32: i64 = i32::MAX as i64;

/// The agent numbers Redis instances from 1.
pub const INSTANCE_INDEX: IndexObject = IndexObject {
    name: "redisInstanceIndex",
    syntax: IndexSyntax::Integer {
        min: 1,
        max: MAX_I32,
    },
    source: &["configuration"],
};

/// Both modules, REDIS-SERVER-MIB first.
pub fn modules() -> Vec<ModuleSpec> {
    vec![redis(), puppet()]
}

/// The module named `name`.
pub fn module(name: &str) -> ModuleSpec {
    modules()
        .into_iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no module {name}"))
}

// ---------------------------------------------------------------------------
// REDIS-SERVER-MIB.

/// The groups that hold one feature's columns across tables:
/// redisLimitsGroup (a column of redisClientsTable and one of
/// redisMemoryTable) and redisClientAggregateGroup (the tables per client
/// name and per user) of revision 202611241300Z, and no other.
pub const REDIS_FEATURE_GROUPS: &[&str] = &["redisLimitsGroup", "redisClientAggregateGroup"];

pub fn redis() -> ModuleSpec {
    let tables = tables_of(TABLES);
    let mut group_families: Vec<(String, BTreeSet<&'static str>)> = TABLES
        .iter()
        .map(|t| {
            (
                t.table.to_string(),
                t.columns.iter().map(|c| c.name).collect(),
            )
        })
        .collect();
    group_families.push((
        "notifications".into(),
        REDIS_NOTIFICATIONS.iter().map(|n| n.name).collect(),
    ));
    ModuleSpec {
        name: "REDIS-SERVER-MIB",
        identity: "redis",
        notify_mib: NotifyMib::Redis,
        root: DEFAULT_REDIS_ROOT.parse().unwrap(),
        objects: redis_objects().collect(),
        scalars: LEGACY_SCALARS.iter().collect(),
        scalar_branches: &[&[1]],
        tables,
        tables_under: &[3],
        notifications: REDIS_NOTIFICATIONS,
        conformance: 2,
        scaled_tcs: &[
            (100, "RedisHundredths", "d-2"),
            (1000, "RedisThousandths", "d-3"),
        ],
        group_families,
        cross_groups: REDIS_FEATURE_GROUPS,
        // The original group (the first six legacy scalars) and the one of
        // all 17: published in 2013 and 202611220000Z, never changed.
        free_groups: &["redisGroup", "redisLegacyGroup"],
        long_names: &["redisCertificateNotificationGroup"],
        smilint_allowed: &[],
        mib_rs_accepted: &[AcceptedDiagnostic {
            code: "InvalidFormat",
            contains: "\"REDISUnsigned64\": invalid DISPLAY-HINT \"d\" for base type Counter64",
            why: REDIS_UNSIGNED64_HINT,
        }],
    }
}

/// Why REDIS-SERVER-MIB keeps `DISPLAY-HINT "d"` on `REDISUnsigned64`,
/// which mib-rs reports as an error.
///
/// RFC 2579 section 3.1 says a DISPLAY-HINT "must not be present" when a
/// textual convention's syntax is OBJECT IDENTIFIER, IpAddress, Counter32,
/// Counter64 or an enumeration; `REDISUnsigned64` (from the Perl module of
/// 2013, `SYNTAX Counter64`) has `DISPLAY-HINT "d"`, so mib-rs is right.
/// The clause stays all the same, because removing it breaks the other
/// rule the module keeps: libsmi then reports `{type-without-format}` for
/// the convention at smilint level 5, within the `-l 6` the module is held
/// to clean (tests/mib_modules.rs shows both on a copy without the hint).
/// The two tools cannot both be satisfied by a Counter64 convention, and
/// the legacy scalars must keep the type name `REDISUnsigned64`. "d" is
/// plain decimal, how every manager shows a Counter64 anyway, so the
/// clause changes nothing on the wire or on screen.
pub const REDIS_UNSIGNED64_HINT: &str = "RFC 2579 section 3.1 forbids a DISPLAY-HINT on a \
    Counter64 convention, but without it smilint -l 6 reports {type-without-format}; the \
    legacy name and type stay, and \"d\" is how a Counter64 is shown anyway";

/// Every table of a module the agent serves, with the INDEX it builds
/// its rows with, as the catalogue (`redis_snmp::metrics`, `TABLES` and
/// `PUPPET_TABLES`) declares it.
fn tables_of(tables: &'static [TableDef]) -> Vec<TableSpec> {
    tables
        .iter()
        .map(|t| {
            let own = |syntax| IndexObject {
                name: t.index.own_object().expect("an index object"),
                syntax,
                source: t.rows_from,
            };
            let text = |max: usize| IndexSyntax::Text {
                min: 1,
                max: max as i64,
            };
            let linkage = match (t.augments, t.index) {
                (Some(row), _) => Linkage::Augments(row),
                (None, RowIndex::Instance) => Linkage::Index(vec![INSTANCE_INDEX]),
                (None, RowIndex::InstanceAndNumber { min, .. }) => Linkage::Index(vec![
                    INSTANCE_INDEX,
                    own(IndexSyntax::Integer {
                        min: i64::from(min),
                        max: MAX_I32,
                    }),
                ]),
                (None, RowIndex::InstanceAndName { .. }) => {
                    Linkage::Index(vec![INSTANCE_INDEX, own(text(MAX_NAME_INDEX_LEN))])
                }
                // The parent's index object is checked with its own table.
                (None, RowIndex::InstanceNameAndName { parent, .. }) => Linkage::Index(vec![
                    INSTANCE_INDEX,
                    IndexObject {
                        name: parent,
                        syntax: text(MAX_NAME_INDEX_LEN),
                        source: &[],
                    },
                    own(text(MAX_SECOND_NAME_INDEX_LEN)),
                ]),
                (None, RowIndex::InstanceDbTypeBucket { db, kind, bucket }) => {
                    Linkage::Index(vec![
                        INSTANCE_INDEX,
                        IndexObject {
                            name: db,
                            syntax: IndexSyntax::Integer {
                                min: 0,
                                max: MAX_I32,
                            },
                            source: t.rows_from,
                        },
                        IndexObject {
                            name: kind,
                            syntax: IndexSyntax::Enum(KeysizesType::LABELS),
                            source: &[],
                        },
                        IndexObject {
                            name: bucket,
                            syntax: IndexSyntax::Integer {
                                min: 0,
                                max: i64::from(MAX_SIZE_BUCKET),
                            },
                            source: &[],
                        },
                    ])
                }
                (None, RowIndex::Row { max, .. }) => {
                    Linkage::Index(vec![own(IndexSyntax::Integer {
                        min: 1,
                        max: i64::from(max),
                    })])
                }
            };
            TableSpec {
                columns: t.columns,
                linkage,
                row_index: t.index,
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------
// PUPPET-AGENT-MIB.

/// A notification of the events log: every object it carries is one of
/// the log's (its scalars, puppetEventTable's columns).
fn of_the_events_log(n: &NotificationDef) -> bool {
    n.objects.iter().all(|c| {
        PUPPET_EVENT_SCALARS
            .iter()
            .chain(PUPPET_EVENT_COLUMNS)
            .any(|o| o.name == c.object.name)
    })
}

pub fn puppet() -> ModuleSpec {
    let names = |lists: &[&'static [ObjectDef]]| -> BTreeSet<&'static str> {
        lists
            .iter()
            .flat_map(|l| l.iter().map(|o| o.name))
            .collect()
    };
    let (from_log, notifications): (Vec<&NotificationDef>, Vec<&NotificationDef>) =
        PUPPET_NOTIFICATIONS
            .iter()
            .partition(|n| of_the_events_log(n));
    let notifications = notifications.iter().map(|n| n.name).collect();
    // Each kind of object in groups of its own (the module grows by new
    // groups, as RFC 2580 section 3 wants existing groups left alone).
    let group_families = vec![
        (
            "scalars".to_string(),
            names(&[PUPPET_SCALARS, PUPPET_RUN_SCALARS]),
        ),
        (
            "resource table columns".into(),
            names(&[PUPPET_RESOURCE_COLUMNS]),
        ),
        ("notifications".into(), notifications),
        (
            "events log objects".into(),
            names(&[PUPPET_EVENT_SCALARS, PUPPET_EVENT_COLUMNS]),
        ),
        (
            "events log notifications".into(),
            from_log.iter().map(|n| n.name).collect(),
        ),
        (
            "certificate table columns".into(),
            names(&[PUPPET_CERTIFICATE_COLUMNS]),
        ),
        ("fact table columns".into(), names(&[PUPPET_FACT_COLUMNS])),
    ];
    ModuleSpec {
        name: "PUPPET-AGENT-MIB",
        identity: "puppet",
        notify_mib: NotifyMib::Puppet,
        root: DEFAULT_PUPPET_ROOT.parse().unwrap(),
        objects: puppet_objects().collect(),
        scalars: PUPPET_SCALARS
            .iter()
            .chain(PUPPET_RUN_SCALARS)
            .chain(PUPPET_EVENT_SCALARS)
            .collect(),
        scalar_branches: &[&[1]],
        tables: tables_of(PUPPET_TABLES),
        tables_under: &[],
        notifications: PUPPET_NOTIFICATIONS,
        conformance: 3,
        scaled_tcs: &[],
        group_families,
        cross_groups: &[],
        free_groups: &[],
        long_names: &[],
        smilint_allowed: &[],
        mib_rs_accepted: &[],
    }
}

// ---------------------------------------------------------------------------
// What an object's row in the catalogue says its MIB type must be.

/// The factor a value is multiplied by before it is served (`1.84` × 100 =
/// 184), which the MIB's DISPLAY-HINT must undo: the `Scaled` conversion of
/// an INFO field, or `CommandField::scale()` for the command columns (1 is
/// no scaling).
pub fn scale(o: &ObjectDef) -> Option<u32> {
    match o.source {
        Source::Info {
            conversion: Conversion::Scaled(factor),
            ..
        } => Some(factor),
        // Hundredths of a percent.
        Source::Info {
            conversion: Conversion::PercentOf(_),
            ..
        } => Some(100),
        Source::Column(_) => CommandField::of(o)
            .map(CommandField::scale)
            .filter(|f| *f != 1),
        Source::Info { .. } | Source::Status(_) | Source::Rows(_) | Source::Puppet(_) => None,
    }
}
