//! Issue 23: `docs/objects.md`, the reference of every object the agent
//! serves (name, OID, type, units, where its value comes from, and in which
//! servers' INFO that field is found), is written from the catalogue
//! (`redis_snmp::metrics::MODULES`) and the real INFO captures of
//! `tests/fixtures/redis/`, never by hand: this test writes it anew and
//! fails when the shipped page differs, saying how to regenerate it.

use redis_snmp::metrics::{ObjectDef, RowIndex, Source, TableDef, MODULES};
use redis_snmp::redis::info::Info;
use redis_snmp::smi::Syntax;
use std::fmt::Write;
use std::path::PathBuf;

const PAGE: &str = "docs/objects.md";
const REGENERATE: &str =
    "REDIS_SNMP_WRITE_DOCS=1 cargo nextest run --test objects_reference (then review the diff)";

/// The INFO captures by server, oldest first within each product: what
/// "found in" is read from.
const CAPTURES: &[(&str, &[&str])] = &[
    ("Redis 2.2", &["2.2.12-info.txt"]),
    ("2.4", &["2.4.15-info.txt"]),
    ("2.6", &["2.6.9-info.txt"]),
    (
        "6.2",
        &[
            "6.2-master-info.txt",
            "6.2-replica-info.txt",
            "6.2-sentinel-info.txt",
        ],
    ),
    (
        "7.0",
        &[
            "7.0-master-info.txt",
            "7.0-replica-info.txt",
            "7.0-sentinel-info.txt",
        ],
    ),
    (
        "8.2",
        &[
            "8.2-master-info.txt",
            "8.2-replica-info.txt",
            "8.2-sentinel-info.txt",
        ],
    ),
    (
        "Valkey 8.0",
        &[
            "valkey-8.0-master-info.txt",
            "valkey-8.0-replica-info.txt",
            "valkey-8.0-sentinel-info.txt",
        ],
    ),
    (
        "9.1",
        &[
            "valkey-9.1-master-info.txt",
            "valkey-9.1-replica-info.txt",
            "valkey-9.1-sentinel-info.txt",
        ],
    ),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Each server's INFO fields, in [`CAPTURES`]'s order.
fn servers() -> Vec<(&'static str, Info)> {
    CAPTURES
        .iter()
        .map(|(label, files)| {
            let text: String = files
                .iter()
                .map(|f| {
                    std::fs::read_to_string(root().join("tests/fixtures/redis").join(f))
                        .unwrap_or_else(|e| panic!("{f}: {e}"))
                })
                .collect::<Vec<_>>()
                .join("\n");
            (*label, Info::parse(&text))
        })
        .collect()
}

/// The servers whose INFO has one of `fields`, as a short list.
fn found_in(fields: &[&str], servers: &[(&str, Info)]) -> String {
    let labels: Vec<&str> = servers
        .iter()
        .filter(|(_, info)| fields.iter().any(|f| info.get(f).is_some()))
        .map(|(label, _)| *label)
        .collect();
    if labels.is_empty() {
        "not in these captures".to_string()
    } else {
        labels.join(", ")
    }
}

/// The type as the MIB has it (an enumeration with its labels).
fn type_of(def: &ObjectDef) -> String {
    match def.syntax {
        Syntax::Enum => {
            let labels: Vec<String> = def
                .enumeration
                .unwrap_or(&[])
                .iter()
                .map(|(label, n)| format!("{label}({n})"))
                .collect();
            format!("INTEGER {{ {} }}", labels.join(", "))
        }
        Syntax::TruthValue => "TruthValue".into(),
        Syntax::Gauge64 => "64-bit gauge (Counter64 on the wire)".into(),
        Syntax::DisplayString => "DisplayString".into(),
        Syntax::OctetString => "OCTET STRING".into(),
        Syntax::ObjectIdentifier => "OBJECT IDENTIFIER".into(),
        other => format!("{other:?}"),
    }
}

/// Where the value comes from.
fn source_of(def: &ObjectDef) -> String {
    match def.source {
        Source::Info { fields, .. } => {
            let names: Vec<String> = fields.iter().map(|f| format!("`{f}`")).collect();
            format!("INFO {}", names.join(" or "))
        }
        other => format!("{other:?}"),
    }
}

fn row(out: &mut String, def: &ObjectDef, oid: &str, servers: &[(&str, Info)]) {
    let found = match def.source {
        Source::Info { fields, .. } => found_in(fields, servers),
        _ => String::new(),
    };
    writeln!(
        out,
        "| `{}` | `{oid}` | {} | {} | {} | {found} |",
        def.name,
        type_of(def).replace('|', "\\|"),
        def.units.unwrap_or(""),
        source_of(def).replace('|', "\\|"),
    )
    .unwrap();
}

const HEADER: &str = "| object | OID | type | units | from | found in |\n|---|---|---|---|---|---|";

fn table(out: &mut String, root: &str, table: &TableDef, servers: &[(&str, Info)]) {
    let entry_oid = table
        .columns
        .first()
        .map(|c| {
            let arcs: Vec<String> = c.arcs[..c.arcs.len() - 1]
                .iter()
                .map(u32::to_string)
                .collect();
            format!(".{root}.{}", arcs.join("."))
        })
        .unwrap_or_default();
    writeln!(out, "\n### {}\n", table.table).unwrap();
    match table.augments {
        Some(parent) => writeln!(
            out,
            "`{}` (`{entry_oid}`) AUGMENTS `{parent}`.",
            table.entry
        ),
        None => writeln!(
            out,
            "`{}` (`{entry_oid}`), INDEX {{ {} }}.",
            table.entry,
            index_objects(table.index).join(", ")
        ),
    }
    .unwrap();
    if let Some(max) = table.max_rows {
        writeln!(
            out,
            "At most {max} rows per instance; the rest are counted."
        )
        .unwrap();
    }
    writeln!(out, "\n{HEADER}").unwrap();
    for def in table.columns {
        let arcs: Vec<String> = def.arcs.iter().map(u32::to_string).collect();
        row(out, def, &format!(".{root}.{}", arcs.join(".")), servers);
    }
}

/// The objects of an INDEX clause.
fn index_objects(index: RowIndex) -> Vec<&'static str> {
    match index {
        RowIndex::Instance => vec!["redisInstanceIndex"],
        RowIndex::InstanceAndNumber { object, .. } | RowIndex::InstanceAndName { object } => {
            vec!["redisInstanceIndex", object]
        }
        RowIndex::InstanceNameAndName { parent, object } => {
            vec!["redisInstanceIndex", parent, object]
        }
        RowIndex::Row { object, .. } => vec![object],
        RowIndex::InstanceDbTypeBucket { db, kind, bucket } => {
            vec!["redisInstanceIndex", db, kind, bucket]
        }
    }
}

/// The page.
fn reference() -> String {
    let servers = servers();
    let mut out = String::from(
        "# Every object the agent serves\n\n\
         Written from the catalogue (`src/metrics/`) by `tests/objects_reference.rs`, \
         which fails when this page and the catalogue differ: do not edit it by hand. \
         The OIDs are those of the default roots. *found in*: the servers whose real \
         `INFO` (the captures of `tests/fixtures/redis/`) has the field; an object is \
         served exactly where its server reports the field.\n",
    );
    for module in MODULES {
        let root = module.default_root;
        writeln!(out, "\n## {} (`.{root}`)", module.name).unwrap();
        writeln!(out, "\n### Scalars\n\n{HEADER}").unwrap();
        for def in module.scalars.iter().flat_map(|list| list.iter()) {
            let arcs: Vec<String> = def.arcs.iter().map(u32::to_string).collect();
            row(
                &mut out,
                def,
                &format!(".{root}.{}.0", arcs.join(".")),
                &servers,
            );
        }
        for t in module.tables {
            table(&mut out, root, t, &servers);
        }
        writeln!(out, "\n### Notifications\n").unwrap();
        for n in module.notifications {
            writeln!(
                out,
                "- `{}` ({}): {}",
                n.name,
                n.severity.name(),
                n.object_names()
                    .iter()
                    .map(|o| format!("`{o}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
            .unwrap();
        }
    }
    out
}

#[test]
fn the_object_reference_is_the_catalogues() {
    // Compared here, not by testkit's check with its `diff -u`: this test
    // runs no program, so a plain `cargo test` runs it.
    let generated = reference();
    let path = root().join(PAGE);
    if std::env::var_os("REDIS_SNMP_WRITE_DOCS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let shipped = std::fs::read_to_string(&path).unwrap_or_default();
    let first_difference = shipped
        .lines()
        .zip(generated.lines())
        .position(|(a, b)| a != b)
        .map_or_else(|| "its length".to_string(), |n| format!("line {}", n + 1));
    assert!(
        shipped == generated,
        "{PAGE} is not what the catalogue makes (first difference: {first_difference}); regenerate: {REGENERATE}"
    );
    // What a reader looks for is there: a legacy scalar, a 64-bit gauge, an
    // enumeration with its labels, a Valkey-only field, a notification.
    for expected in [
        "| `redisConnectedClients` | `.1.3.6.1.4.1.20267.400.1.1.0` | Gauge32 |",
        "64-bit gauge (Counter64 on the wire)",
        "INTEGER { up(1), down(2)",
        "| Valkey 8.0, 9.1 |",
        "- `redisInstanceDown` (Critical): `redisInstanceName`",
        "## PUPPET-AGENT-MIB (`.1.3.6.1.4.1.20267.401`)",
    ] {
        assert!(generated.contains(expected), "{expected} not in {PAGE}");
    }
}
