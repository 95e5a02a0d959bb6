//! A second reading of the modules, in process: `mib-rs` (an SMIv1/v2
//! parser and resolver with the SMIv2 base modules built in, and a table
//! index codec) reads `mibs/` alone, beside smidump. Its rules compare the
//! catalogue with the module both ways: every served object, table and
//! notification is in the module with its OID, syntax, access, INDEX and
//! OBJECTS, and every OBJECT-TYPE and NOTIFICATION-TYPE of the module is in
//! the catalogue; each INDEX, through mib-rs's codec, accepts exactly the
//! row suffixes the catalogue's `RowIndex` says fit.
//!
//! Two readers that share no code catch what one of them gets wrong
//! (smidump's Python dump is read by our own parser in `mod.rs`).

use super::modules::{scale, IndexSyntax, Linkage, ModuleSpec, TableSpec};
use super::rules::check_named_numbers;
use mib_rs::{
    Access, BaseType, BoundIndexCodec, ConstraintMode, DiagnosticConfig, IndexSchema,
    IndexValueRef, Kind, Loader, Severity, Status,
};
use redis_snmp::metrics::{name_index, ObjectDef, RowIndex};
use redis_snmp::smi::Syntax;
use std::path::Path;
use std::sync::Arc;

/// The modules in `dir`, read by mib-rs with every diagnostic it can give
/// (`DiagnosticConfig::verbose`); loading fails only on a fatal one.
pub fn load(dir: &Path, modules: &[&str]) -> Result<mib_rs::Mib, String> {
    let source = mib_rs::source::dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Loader::new()
        .source(source)
        .modules(modules.iter().copied())
        .diagnostic_config(DiagnosticConfig::verbose())
        .load()
        .map_err(|e| format!("mib-rs cannot load {modules:?} from {}: {e}", dir.display()))
}

/// Both modules of `mibs/`, and nothing else (the base modules are mib-rs's
/// own).
pub fn load_ours() -> mib_rs::Mib {
    load(&super::mib_dir(), &["REDIS-SERVER-MIB", "PUPPET-AGENT-MIB"])
        .unwrap_or_else(|e| panic!("{e}"))
}

/// An OID as mib-rs writes it: `1.3.6…`, without our leading dot.
fn dotted(oid: &redis_snmp::oid::Oid) -> String {
    oid.to_string().trim_start_matches('.').to_string()
}

/// What mib-rs says about `module`: `severity code: message`.
pub fn diagnostics(mib: &mib_rs::Mib, module: &str) -> Vec<(Severity, String)> {
    mib.diagnostics()
        .iter()
        .filter(|d| d.module.as_deref() == Some(module))
        .map(|d| {
            (
                d.severity,
                format!("{:?} {:?}: {}", d.severity, d.code, d.message),
            )
        })
        .collect()
}

/// The base type and textual convention mib-rs must find for an object
/// served with `syntax` (the scaled-value convention of its factor, if any).
fn expected_type(spec: &ModuleSpec, o: &ObjectDef) -> (BaseType, Option<&'static str>) {
    let scaled = scale(o).and_then(|f| spec.scaled_tcs.iter().find(|(factor, _, _)| *factor == f));
    match o.syntax {
        Syntax::Integer32 | Syntax::Enum => (BaseType::Integer32, None),
        Syntax::TruthValue => (BaseType::Integer32, Some("TruthValue")),
        Syntax::Gauge32 => (BaseType::Gauge32, scaled.map(|(_, tc, _)| *tc)),
        Syntax::Counter32 => (BaseType::Counter32, None),
        Syntax::Counter64 => (BaseType::Counter64, None),
        Syntax::Gauge64 => (BaseType::Counter64, Some("REDISUnsigned64")),
        Syntax::TimeTicks => (BaseType::TimeTicks, None),
        Syntax::DisplayString => (BaseType::OctetString, Some("DisplayString")),
        Syntax::OctetString => (BaseType::OctetString, None),
        Syntax::ObjectIdentifier => (BaseType::ObjectIdentifier, None),
    }
}

/// Catalogue ⇒ module and module ⇒ catalogue, as mib-rs reads the module.
pub fn catalogue_problems(spec: &ModuleSpec, mib: &mib_rs::Mib) -> Vec<String> {
    let Some(module) = mib.module(spec.name) else {
        return vec![format!("mib-rs has no module {}", spec.name)];
    };
    let mut problems = Vec::new();
    for o in &spec.objects {
        let Some(object) = module.object(o.name) else {
            problems.push(format!("{}: not in {} (mib-rs)", o.name, spec.name));
            continue;
        };
        let oid = object.node().map(|n| n.oid().to_string());
        let want = dotted(&spec.oid(o.arcs));
        if oid.as_deref() != Some(want.as_str()) {
            problems.push(format!(
                "{}: mib-rs says {oid:?}, agent serves {want}",
                o.name
            ));
        }
        let kind = if spec.is_scalar(o) {
            Kind::Scalar
        } else {
            Kind::Column
        };
        if object.kind() != kind || object.access() != Access::ReadOnly {
            problems.push(format!(
                "{}: a {:?} {:?} in mib-rs, served as a read-only {kind:?}",
                o.name,
                object.access(),
                object.kind()
            ));
        }
        if object.status() != Status::Current || object.units() != o.units.unwrap_or_default() {
            problems.push(format!(
                "{}: STATUS {:?} UNITS {:?}, the catalogue says UNITS {:?}",
                o.name,
                object.status(),
                object.units(),
                o.units
            ));
        }
        let (base, tc) = expected_type(spec, o);
        let ty = object.ty();
        let got_base = ty.map(|t| t.effective_base());
        let got_tc = ty.and_then(|t| t.effective_tc()).map(|t| t.name());
        if got_base != Some(base) || got_tc != tc {
            problems.push(format!(
                "{}: mib-rs reads {got_base:?} ({got_tc:?}), the agent sends {:?}: want \
                 {base:?} ({tc:?})",
                o.name, o.syntax
            ));
        }
        let enums: Vec<(&str, i64)> = object
            .effective_enums()
            .iter()
            .map(|e| (e.label.as_str(), e.value))
            .collect();
        match (o.syntax, o.enumeration) {
            (Syntax::Enum, Some(table)) => {
                if let Err(e) = check_named_numbers(table, &enums) {
                    problems.push(format!("{} (mib-rs): {e}", o.name));
                }
            }
            (Syntax::TruthValue, _) if enums == [("true", 1), ("false", 2)] => {}
            (Syntax::TruthValue, _) => problems.push(format!("{}: TruthValue {enums:?}", o.name)),
            (_, _) if !enums.is_empty() => {
                problems.push(format!("{}: named numbers {enums:?}, not an Enum", o.name))
            }
            _ => {}
        }
        if let Some((_, tc, hint)) =
            scale(o).and_then(|f| spec.scaled_tcs.iter().find(|(factor, _, _)| *factor == f))
        {
            let got = object.effective_display_hint();
            if got != *hint {
                problems.push(format!(
                    "{}: DISPLAY-HINT {got:?}, {tc} says {hint:?}",
                    o.name
                ));
            }
        }
    }
    // Every OBJECT-TYPE of the module is served, or a table, an entry or an
    // index column of a table the agent serves.
    let mut structure: Vec<&str> = Vec::new();
    for table in &spec.tables {
        problems.extend(table_problems(spec, mib, table, &mut structure));
    }
    for object in module.objects() {
        let name = object.name();
        if spec.object(name).is_none() && !structure.contains(&name) {
            problems.push(format!(
                "{name}: a {:?} {:?} of {} (mib-rs) that the catalogue does not have",
                object.access(),
                object.kind(),
                spec.name
            ));
        }
    }
    // Notifications, both ways.
    for def in spec.notifications {
        let Some(n) = module.notification(def.name) else {
            problems.push(format!(
                "{}: no NOTIFICATION-TYPE in {} (mib-rs)",
                def.name, spec.name
            ));
            continue;
        };
        let oid = n.node().map(|n| n.oid().to_string());
        let want = dotted(&spec.notification_oid(def));
        let objects: Vec<&str> = n.objects().map(|o| o.name()).collect();
        if oid.as_deref() != Some(want.as_str()) || objects != def.object_names() {
            problems.push(format!(
                "{}: mib-rs reads {oid:?} OBJECTS {objects:?}; the agent sends {want} with {:?}",
                def.name,
                def.object_names()
            ));
        }
    }
    for n in mib.notifications() {
        let ours = n.module().is_some_and(|m| m.name() == spec.name);
        if ours && !spec.notifications.iter().any(|d| d.name == n.name()) {
            problems.push(format!(
                "{}: a notification of {} the agent never sends",
                n.name(),
                spec.name
            ));
        }
    }
    problems
}

/// One table: its table and entry objects (named into `structure`), the
/// entry's INDEX or AUGMENTS, and its index through mib-rs's codec.
fn table_problems<'m>(
    spec: &ModuleSpec,
    mib: &'m mib_rs::Mib,
    table: &TableSpec,
    structure: &mut Vec<&'m str>,
) -> Vec<String> {
    let mut problems = Vec::new();
    let Ok(arcs) = table.entry_arcs() else {
        return vec!["a table whose columns are not beside each other".into()];
    };
    let entry_oid = spec.oid(arcs);
    let node = mib.exact_node_by_oid(&mib_rs::Oid::from(entry_oid.as_slice()));
    let Some(entry) = node.and_then(|n| n.object()).filter(|o| o.is_row()) else {
        return vec![format!("mib-rs finds no entry at {entry_oid}")];
    };
    structure.push(entry.name());
    structure.extend(entry.table().map(|t| t.name()));
    let index: Vec<&str> = entry.index().map(|i| i.name()).collect();
    let implied = entry.index().any(|i| i.implied());
    let augments = entry.augments().map(|a| a.name());
    let (want_index, want_augments) = match &table.linkage {
        Linkage::Index(_) => (table.index_names(), None),
        Linkage::Augments(row) => (Vec::new(), Some(*row)),
    };
    if index != want_index || augments != want_augments || implied {
        problems.push(format!(
            "{}: mib-rs reads INDEX {index:?} (IMPLIED {implied}) AUGMENTS {augments:?}; the \
             agent builds INDEX {want_index:?} AUGMENTS {want_augments:?}",
            entry.name()
        ));
    }
    structure.extend(table.own_index().iter().map(|i| i.name));
    // The codec of the entry's effective INDEX, bound to its first column.
    let Some(column) = table.columns.first().and_then(|c| mib.object(c.name)) else {
        return problems;
    };
    let codec = IndexSchema::compile(column)
        .map_err(|e| format!("{e}"))
        .and_then(|schema| {
            let oid = column.node().ok_or("no OID")?.oid().clone();
            BoundIndexCodec::for_object_oid(Arc::new(schema), &oid).map_err(|e| format!("{e}"))
        });
    let codec = match codec {
        Ok(codec) => codec,
        Err(e) => {
            problems.push(format!(
                "{}: mib-rs cannot compile its INDEX: {e}",
                entry.name()
            ));
            return problems;
        }
    };
    for (suffix, fits) in samples(table) {
        let decoded = codec.decode_exact(&suffix, ConstraintMode::Enforce);
        if decoded.is_ok() != fits {
            problems.push(format!(
                "{}: the catalogue says {suffix:?} {} a row, mib-rs's codec {}",
                entry.name(),
                if fits { "is" } else { "is not" },
                match &decoded {
                    Ok(d) => format!("decodes it as {:?}", d.values()),
                    Err(e) => format!("refuses it: {e}"),
                }
            ));
        }
    }
    // The catalogue's name index is the codec's canonical encoding.
    if let RowIndex::InstanceAndName { .. } = table.row_index {
        let encoded = codec
            .encode_canonical([
                IndexValueRef::Integer32(3),
                IndexValueRef::OctetString(b"get"),
            ])
            .map(|s| s.as_ref().to_vec());
        if encoded.as_ref().ok() != name_index(3, "get").as_ref() {
            problems.push(format!(
                "{}: mib-rs encodes (3, \"get\") as {encoded:?}, name_index makes {:?}",
                entry.name(),
                name_index(3, "get")
            ));
        }
    }
    problems
}

/// Row suffixes at the edges of a table's INDEX, and whether the agent's
/// row shape takes each (`RowIndex::fits`, the catalogue's shape).
fn samples(table: &TableSpec) -> Vec<(Vec<u32>, bool)> {
    let name = |n: usize| -> Vec<u32> {
        std::iter::once(n as u32)
            .chain((0..n).map(|i| u32::from(b'a') + (i % 26) as u32))
            .collect()
    };
    let join = |parts: &[&[u32]]| parts.concat();
    let mut suffixes: Vec<Vec<u32>> = Vec::new();
    match &table.linkage {
        Linkage::Augments(_) => suffixes.extend([
            vec![1],
            vec![i32::MAX as u32],
            vec![i32::MAX as u32 + 1],
            vec![0],
            vec![1, 1],
        ]),
        Linkage::Index(index) => {
            let mut prefixes: Vec<Vec<u32>> = vec![vec![]];
            for ix in index {
                let values: Vec<Vec<u32>> = match ix.syntax {
                    IndexSyntax::Integer { min, max } => {
                        let mut v = vec![vec![min as u32], vec![max as u32], vec![max as u32 + 1]];
                        if min > 0 {
                            v.push(vec![min as u32 - 1]);
                        }
                        v
                    }
                    IndexSyntax::Enum(labels) => {
                        let numbers = labels.iter().map(|(_, n)| *n as u32);
                        let (lo, hi) = (numbers.clone().min().unwrap(), numbers.max().unwrap());
                        vec![vec![lo], vec![hi], vec![hi + 1], vec![lo.saturating_sub(1)]]
                    }
                    IndexSyntax::Text { min, max } => vec![
                        name(min as usize),
                        name(max as usize),
                        name(max as usize + 1),
                        name(0),
                    ],
                };
                // Keep the combinations few: the first value of each earlier
                // part with every value of this one.
                let base = prefixes[0].clone();
                prefixes = values.iter().map(|v| join(&[&base, v])).collect();
                suffixes.extend(prefixes.iter().cloned());
            }
            // One arc too many.
            suffixes.push(join(&[&prefixes[0], &[1]]));
        }
    }
    suffixes.sort();
    suffixes.dedup();
    suffixes
        .into_iter()
        .map(|s| {
            let fits = table.row_index.fits(&s);
            (s, fits)
        })
        .collect()
}
