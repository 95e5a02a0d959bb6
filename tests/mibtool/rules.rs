//! The rules that hold for any module of the agent, read through libsmi
//! (`smidump`): each takes a [`ModuleSpec`] and the module as smidump read
//! it, and returns the problems found, so that tests/mib_modules.rs runs
//! them over both modules and over a deliberately broken copy. The small
//! helpers the module-specific tests share (`mentions`, `smi_label`, …)
//! are here too.

use super::modules::{scale, IndexObject, IndexSyntax, Linkage, ModuleSpec};
use super::{mib_file, named_numbers, ranges, Mib, Node, ResolvedType};
use redis_snmp::metrics::{Layout, Mib as NotifyMib, ObjectDef};
use redis_snmp::oid::Oid;
use redis_snmp::smi::{Syntax, Value, WireType};
use std::collections::{BTreeMap, BTreeSet};

// ---------------------------------------------------------------------------
// Helpers.

/// The SMI label for a source's word: `no-failover` → `noFailover`,
/// `failed_to_restart` → `failedToRestart`.
pub fn smi_label(word: &str) -> String {
    let mut label = String::new();
    let mut upper = false;
    for c in word.chars() {
        if c == '-' || c == '_' {
            upper = true;
        } else if upper {
            label.extend(c.to_uppercase());
            upper = false;
        } else {
            label.push(c);
        }
    }
    label
}

/// Whether `text` holds `word` on its own (not as part of a longer field
/// name: `used_memory` is not in `used_memory_rss`, `noop` not in
/// `noop_pending`).
pub fn mentions(text: &str, word: &str) -> bool {
    let part_of_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(part_of_name) && !after.is_some_and(part_of_name)
    })
}

/// RFC 2578 section 3.1: a descriptor starts with a lower-case letter and
/// holds letters and digits (a hyphen is not allowed in SMIv2 object
/// names); more than 32 characters is discouraged (smilint
/// `namelength-32`), and 64 is the limit.
pub fn descriptor_problem(name: &str) -> Option<String> {
    let first_lower = name.chars().next().is_some_and(|c| c.is_ascii_lowercase());
    if !first_lower || !name.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Some(format!("{name:?} is not an SMIv2 descriptor"));
    }
    if name.len() > 32 {
        return Some(format!("{name} is {} characters long, over 32", name.len()));
    }
    None
}

/// [`descriptor_problem`], but for the module's published long names.
fn descriptor_problem_in(spec: &ModuleSpec, name: &str) -> Option<String> {
    descriptor_problem(name).filter(|_| !spec.long_names.contains(&name) || name.len() > 64)
}

/// Whether the MIB's named numbers are those of the agent's table: the same
/// set of numbers, each labelled after one of the texts that map to it.
pub fn check_named_numbers(
    table: &[(&str, i32)],
    mib_values: &[(&str, i64)],
) -> Result<(), String> {
    let want: BTreeSet<i64> = table.iter().map(|(_, n)| i64::from(*n)).collect();
    let got: BTreeSet<i64> = mib_values.iter().map(|(_, n)| *n).collect();
    if want != got || got.len() != mib_values.len() {
        return Err(format!(
            "the MIB numbers {mib_values:?}, the agent serves {table:?}"
        ));
    }
    for (label, number) in mib_values {
        let texts: Vec<String> = table
            .iter()
            .filter(|(_, n)| i64::from(*n) == *number)
            .map(|(t, _)| smi_label(t))
            .collect();
        if !texts.iter().any(|t| t == label) {
            return Err(format!(
                "{label}({number}) should be named after what the source says for {number}: \
                 one of {texts:?}"
            ));
        }
    }
    Ok(())
}

/// Whether the type the MIB declares fits the object as the agent serves
/// it; on a mismatch, what was expected.
pub fn check_type(spec: &ModuleSpec, o: &ObjectDef, t: &ResolvedType) -> Result<(), String> {
    let derives = |name: &str| t.derives_from(name);
    let gauge64 =
        derives("REDIS-SERVER-MIB::REDISUnsigned64") || derives("HCNUM-TC::CounterBasedGauge64");
    let truth = derives("SNMPv2-TC::TruthValue");
    let (ok, expected) = match o.syntax {
        Syntax::Integer32 => (
            t.basetype == "Integer32",
            "Integer32 (an INTEGER without named values)",
        ),
        Syntax::Enum => (
            t.basetype == "Enumeration" && !truth && t.names.is_empty(),
            "an INTEGER with named values of its own",
        ),
        Syntax::TruthValue => (
            t.basetype == "Enumeration" && truth,
            "SNMPv2-TC's TruthValue",
        ),
        Syntax::Gauge32 => (
            t.basetype == "Unsigned32" && derives("SNMPv2-SMI::Gauge32"),
            "Gauge32 (base Unsigned32)",
        ),
        Syntax::Counter32 => (
            t.basetype == "Unsigned32" && derives("SNMPv2-SMI::Counter32"),
            "Counter32 (base Unsigned32)",
        ),
        Syntax::Counter64 => (
            t.basetype == "Unsigned64" && derives("SNMPv2-SMI::Counter64") && !gauge64,
            "Counter64 itself, not a 64-bit gauge convention",
        ),
        Syntax::Gauge64 => (
            t.basetype == "Unsigned64" && derives("SNMPv2-SMI::Counter64") && gauge64,
            "REDISUnsigned64 (or CounterBasedGauge64): a gauge carried as Counter64",
        ),
        Syntax::TimeTicks => (
            t.basetype == "Unsigned32" && derives("SNMPv2-SMI::TimeTicks"),
            "TimeTicks (base Unsigned32)",
        ),
        Syntax::DisplayString => (
            t.basetype == "OctetString" && derives("SNMPv2-TC::DisplayString"),
            "DisplayString (base OctetString)",
        ),
        Syntax::OctetString => (
            t.basetype == "OctetString" && !derives("SNMPv2-TC::DisplayString"),
            "an OCTET STRING that is not a DisplayString",
        ),
        Syntax::ObjectIdentifier => (t.basetype == "ObjectIdentifier", "OBJECT IDENTIFIER"),
    };
    if !ok {
        return Err(expected.to_string());
    }
    // Scaled values carry the convention of their factor, and only they.
    let module = spec.name;
    let tc_of = |factor: u32| spec.scaled_tcs.iter().find(|(f, _, _)| *f == factor);
    match scale(o) {
        Some(factor) => match tc_of(factor) {
            Some((_, tc, _)) if derives(&format!("{module}::{tc}")) => {}
            Some((_, tc, _)) => return Err(format!("{tc}: a value scaled by {factor}")),
            None => {
                return Err(format!(
                    "a textual convention for values scaled by {factor}; add it to \
                     the MIB and to the module's scaled_tcs (tests/mibtool/modules.rs)"
                ))
            }
        },
        None => {
            if let Some((_, tc, _)) = spec
                .scaled_tcs
                .iter()
                .find(|(_, tc, _)| derives(&format!("{module}::{tc}")))
            {
                return Err(format!("a type without {tc}: the agent does not scale it"));
            }
        }
    }
    Ok(())
}

/// The `-Tp` type labels net-snmp decodes a value with, for the wire type the
/// agent sends.
pub fn net_snmp_labels(syntax: Syntax) -> &'static [&'static str] {
    if matches!(syntax, Syntax::Enum | Syntax::TruthValue) {
        return &["EnumVal"];
    }
    match syntax.wire_type() {
        WireType::Integer => &["INTEGER", "Integer32"],
        WireType::OctetString => &["String"],
        WireType::ObjectIdentifier => &["ObjID"],
        WireType::IpAddress => &["IpAddr"],
        WireType::Counter32 => &["Counter"],
        WireType::Gauge32 => &["Gauge", "Unsigned"],
        WireType::TimeTicks => &["TimeTicks"],
        WireType::Opaque => &["Opaque"],
        WireType::Counter64 => &["Counter64"],
    }
}

/// The textual convention net-snmp must name for an object (`-Tp`'s
/// `Textual Convention:` line): the scaled-value one of its factor, or the
/// one its syntax is served as.
pub fn net_snmp_convention(spec: &ModuleSpec, o: &ObjectDef) -> Option<&'static str> {
    if let Some(factor) = scale(o) {
        return spec
            .scaled_tcs
            .iter()
            .find(|(f, _, _)| *f == factor)
            .map(|(_, name, _)| *name);
    }
    match o.syntax {
        Syntax::TruthValue => Some("TruthValue"),
        Syntax::DisplayString => Some("DisplayString"),
        Syntax::Gauge64 => Some("REDISUnsigned64"),
        _ => None,
    }
}

/// LAST-UPDATED of a module file (smidump does not show it).
pub fn last_updated(module: &str) -> String {
    let source = std::fs::read_to_string(mib_file(module)).unwrap();
    source
        .lines()
        .find_map(|l| l.trim().strip_prefix("LAST-UPDATED"))
        .map(|v| v.trim().trim_matches('"').to_string())
        .expect("LAST-UPDATED")
}

// ---------------------------------------------------------------------------
// Objects.

/// Every served object is in the MIB at its OID, with its kind, place,
/// access, status, type, named numbers and UNITS; and the catalogue's list
/// of the module's objects is its scalars and its tables' columns, each once.
pub fn object_problems(spec: &ModuleSpec, mib: &Mib) -> Vec<String> {
    let layout = Layout::default_layout();
    let root = match spec.notify_mib {
        NotifyMib::Redis => layout.root(),
        NotifyMib::Puppet => layout.puppet(),
    };
    let mut problems = Vec::new();
    if *root != spec.root {
        problems.push(format!(
            "the default layout's root {root}, not {}",
            spec.root
        ));
    }
    let columns = spec.tables.iter().flat_map(|t| t.columns.iter());
    for o in spec.scalars.iter().copied().chain(columns) {
        if spec.object(o.name).is_none() {
            problems.push(format!("{}: not among the module's objects", o.name));
        }
    }
    for o in &spec.objects {
        let homes = spec
            .tables
            .iter()
            .filter(|t| t.columns.iter().any(|c| c.name == o.name))
            .count();
        if homes + usize::from(spec.is_scalar(o)) != 1 {
            problems.push(format!(
                "{}: a scalar of the catalogue ({}) and a column of {homes} of its tables",
                o.name,
                spec.is_scalar(o)
            ));
        }
        let Some(node) = mib.nodes.get(o.name) else {
            problems.push(format!("{}: not in {}", o.name, spec.name));
            continue;
        };
        let oid = layout.object_oid(o);
        if node.oid != oid || oid != spec.oid(o.arcs) {
            problems.push(format!(
                "{}: MIB says {}, agent serves {oid}",
                o.name, node.oid
            ));
        }
        let (kind, homes) = if spec.is_scalar(o) {
            let branches: Vec<Oid> = spec.scalar_branches.iter().map(|b| spec.oid(b)).collect();
            ("scalar", branches)
        } else {
            let entries = spec.table_of(o.name).and_then(|t| t.entry_arcs().ok());
            ("column", entries.map(|e| spec.oid(e)).into_iter().collect())
        };
        let parent = node.oid.parent();
        if node.kind != kind || !homes.iter().any(|h: &Oid| Some(h) == parent.as_ref()) {
            problems.push(format!(
                "{}: a {} at {}, served as a {kind} under {homes:?}",
                o.name, node.kind, node.oid
            ));
        }
        if node.access.as_deref() != Some("readonly") {
            problems.push(format!(
                "{}: access {:?}, not read-only",
                o.name, node.access
            ));
        }
        if node.status.as_deref() != Some("current") {
            problems.push(format!("{}: status {:?}", o.name, node.status));
        }
        if node.units.as_deref() != o.units {
            problems.push(format!(
                "{}: UNITS {:?} in the MIB, {:?} in the catalogue (src/metrics/)",
                o.name, node.units, o.units
            ));
        }
        let Some(ty) = node.syntax.as_ref() else {
            problems.push(format!("{}: no SYNTAX", o.name));
            continue;
        };
        match mib.resolve(ty) {
            Ok(t) => {
                if let Err(expected) = check_type(spec, o, &t) {
                    problems.push(format!(
                        "{}: served as {:?}, so the MIB must say {expected}; it says {t:?}",
                        o.name, o.syntax
                    ));
                }
            }
            Err(e) => problems.push(format!("{}: {e}", o.name)),
        }
        match (o.syntax, o.enumeration) {
            (Syntax::Enum, Some(table)) => {
                if let Err(e) = check_named_numbers(table, &named_numbers(ty)) {
                    problems.push(format!("{}: {e}", o.name));
                }
                for (label, _) in named_numbers(ty) {
                    if let Some(p) = descriptor_problem(label) {
                        problems.push(format!("{}: label {p}", o.name));
                    }
                }
            }
            (Syntax::Enum, None) => problems.push(format!(
                "{}: an Enum whose numbers this test does not know",
                o.name
            )),
            (_, Some(_)) => problems.push(format!("{}: a table of numbers, not an Enum", o.name)),
            (_, None) => {}
        }
    }
    problems
}

/// The MIB defines no readable object the agent does not serve.
pub fn unserved_problems(spec: &ModuleSpec, mib: &Mib) -> Vec<String> {
    let served: BTreeSet<&str> = spec.objects.iter().map(|o| o.name).collect();
    mib.nodes
        .values()
        .filter(|n| n.is_readable() && !served.contains(n.name.as_str()))
        .map(|n| {
            format!(
                "{} ({}, {:?}): defined in {} but not served (add it to src/metrics/ or \
                 remove it from the MIB)",
                n.name, n.oid, n.access, spec.name
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Tables and their indexes.

/// Whether an index object's declared type is what the agent puts in OIDs.
fn check_index_object(mib: &Mib, entry: &Oid, ix: &IndexObject, column: u32) -> Result<(), String> {
    let node = mib.nodes.get(ix.name).ok_or("not in the MIB")?;
    if node.oid.parent().as_ref() != Some(entry) || node.oid.as_slice().last() != Some(&column) {
        return Err(format!("at {}, not column {column} of {entry}", node.oid));
    }
    if node.kind != "column" || node.access.as_deref() != Some("noaccess") {
        return Err(format!(
            "a {} with access {:?}, not a not-accessible column",
            node.kind, node.access
        ));
    }
    let ty = node.syntax.as_ref().ok_or("no SYNTAX")?;
    let t = mib.resolve(ty)?;
    let (ok, min, max) = match ix.syntax {
        IndexSyntax::Integer { min, max } => (
            t.basetype == "Integer32" && named_numbers(ty).is_empty(),
            min,
            max,
        ),
        IndexSyntax::Text { min, max } => (
            t.basetype == "OctetString" && t.derives_from("SNMPv2-TC::DisplayString"),
            min,
            max,
        ),
        // An enumeration has no range: its named numbers are checked.
        IndexSyntax::Enum(labels) => {
            if t.basetype != "Enumeration" {
                return Err(format!(
                    "must be an INTEGER enumeration; the MIB says {t:?}"
                ));
            }
            check_named_numbers(labels, &named_numbers(ty))?;
            (true, 0, 0)
        }
    };
    let range_ok = matches!(ix.syntax, IndexSyntax::Enum(_)) || ranges(ty) == [(min, max)];
    if !ok || !range_ok {
        return Err(format!(
            "must be {:?} ({min}..{max}); the MIB says {t:?} {:?}",
            ix.syntax,
            ranges(ty)
        ));
    }
    let description = node.description_words();
    for name in ix.source {
        if !mentions(&description, name) {
            return Err(format!(
                "the DESCRIPTION does not name {name}, where the agent takes it from"
            ));
        }
    }
    Ok(())
}

/// Every table is a row of a table where the module keeps them, indexed
/// (or AUGMENTing) as the agent builds its rows, with a well-typed index
/// column 1, and no column the agent does not serve; the MIB has no other
/// row.
pub fn table_problems(spec: &ModuleSpec, mib: &Mib) -> Vec<String> {
    let objects = spec.oid(spec.tables_under);
    let mut problems = Vec::new();
    let mut entries = BTreeSet::new();
    for table in &spec.tables {
        let arcs = match table.entry_arcs() {
            Ok(arcs) => arcs,
            Err(e) => {
                problems.push(e);
                continue;
            }
        };
        let entry_oid = spec.oid(arcs);
        entries.insert(entry_oid.clone());
        let Some(entry) = mib.node_at(&entry_oid) else {
            problems.push(format!("no entry at {entry_oid}"));
            continue;
        };
        let table_oid = entry_oid.parent().unwrap();
        let table_node = mib.node_at(&table_oid);
        if entry.kind != "row"
            || arcs.last() != Some(&1)
            || table_node.map(|t| t.kind.as_str()) != Some("table")
            || table_oid.parent().as_ref() != Some(&objects)
        {
            problems.push(format!(
                "{}: want a row at {objects}.K.1 of a table, it is a {} at {entry_oid}",
                entry.name, entry.kind
            ));
        }
        match &table.linkage {
            Linkage::Index(_) => {
                let want = table.index_names();
                if entry.index != want || entry.augments.is_some() || entry.implied {
                    problems.push(format!(
                        "{}: INDEX {:?} (AUGMENTS {:?}, IMPLIED {}), the agent builds INDEX {want:?}",
                        entry.name, entry.index, entry.augments, entry.implied
                    ));
                }
                // The index is column 1: served columns come after it.
                for c in table.columns {
                    if c.arcs.last().is_none_or(|a| *a < 2) {
                        problems.push(format!(
                            "{}: arcs {:?}, not a column after the index",
                            c.name, c.arcs
                        ));
                    }
                }
            }
            Linkage::Augments(row) => {
                if entry.augments.as_deref() != Some(&row[..]) || !entry.index.is_empty() {
                    problems.push(format!(
                        "{}: AUGMENTS {:?} INDEX {:?}; the agent indexes it as {row}",
                        entry.name, entry.augments, entry.index
                    ));
                }
            }
        }
        let own = table.own_index();
        for (ix, column) in own.iter().zip(1..) {
            if let Err(e) = check_index_object(mib, &entry_oid, ix, column) {
                problems.push(format!("{} (index of {}): {e}", ix.name, entry.name));
            }
        }
        // Every column of the entry is its index or served by this table.
        for col in mib
            .nodes
            .values()
            .filter(|n| n.oid.parent().as_ref() == Some(&entry_oid))
        {
            let known = own.iter().any(|i| i.name == col.name)
                || table.columns.iter().any(|c| c.name == col.name);
            if !known {
                problems.push(format!(
                    "{}: a column of {} not served",
                    col.name, entry.name
                ));
            }
        }
    }
    // No table in the MIB that the agent does not build.
    for n in mib.nodes.values() {
        if n.kind == "row" && !entries.contains(&n.oid) {
            problems.push(format!("{}: a row the agent does not build", n.name));
        }
    }
    problems
}

/// Decodes the index part of a served OID with the INDEX the MIB declares
/// for its row; returns the first index (the Redis instance, or the row's
/// number of a Puppet table).
pub fn decode_index(mib: &Mib, row: &Node, suffix: &[u32]) -> Result<u32, String> {
    let row = match &row.augments {
        Some(base) => mib.nodes.get(base).ok_or(format!("no row {base}"))?,
        None => row,
    };
    if row.index.is_empty() {
        return Err(format!("{} has no INDEX", row.name));
    }
    let mut rest = suffix;
    let mut first = None;
    for (i, name) in row.index.iter().enumerate() {
        let node = mib
            .nodes
            .get(name)
            .ok_or(format!("{name}: not in the MIB"))?;
        let ty = node.syntax.as_ref().ok_or(format!("{name}: no SYNTAX"))?;
        let t = mib.resolve(ty)?;
        let within = |v: i64| ranges(ty).iter().all(|(lo, hi)| (*lo..=*hi).contains(&v));
        match t.basetype.as_str() {
            "Enumeration" => {
                let (&v, tail) = rest.split_first().ok_or(format!("{name}: missing"))?;
                if !named_numbers(ty).iter().any(|(_, n)| *n == i64::from(v)) {
                    return Err(format!("{name} = {v} is none of {:?}", named_numbers(ty)));
                }
                rest = tail;
            }
            "Integer32" => {
                let (&v, tail) = rest.split_first().ok_or(format!("{name}: missing"))?;
                if !within(i64::from(v)) || v > i32::MAX as u32 {
                    return Err(format!("{name} = {v} is outside {:?}", ranges(ty)));
                }
                first.get_or_insert(v);
                rest = tail;
            }
            "OctetString" => {
                let implied = row.implied && i + 1 == row.index.len();
                let (bytes, tail) = if implied {
                    (rest, &rest[rest.len()..])
                } else {
                    let (&len, tail) = rest.split_first().ok_or(format!("{name}: no length"))?;
                    if tail.len() < len as usize {
                        return Err(format!("{name}: length {len}, only {} left", tail.len()));
                    }
                    tail.split_at(len as usize)
                };
                if !within(bytes.len() as i64) {
                    return Err(format!(
                        "{name}: {} octets, outside SIZE {:?}",
                        bytes.len(),
                        ranges(ty)
                    ));
                }
                let printable = |b: &u32| (0x20..=0x7e).contains(b);
                if t.derives_from("SNMPv2-TC::DisplayString") && !bytes.iter().all(printable) {
                    return Err(format!("{name}: {bytes:?} is not a DisplayString"));
                }
                if bytes.iter().any(|b| *b > 255) {
                    return Err(format!("{name}: {bytes:?} are not octets"));
                }
                rest = tail;
            }
            other => return Err(format!("{name}: an index of type {other}")),
        }
    }
    if !rest.is_empty() {
        return Err(format!(
            "{rest:?} left over after the INDEX {:?}",
            row.index
        ));
    }
    first.ok_or(format!("{}: the first index is not a number", row.name))
}

/// Where a value the agent built sits in the MIB.
pub enum Instance<'m> {
    /// A scalar's `.0`.
    Scalar,
    /// A column's row: the row, and its first index.
    Row { row: &'m Node, first: u32 },
}

/// Whether `(oid, value)`, which the agent built for the object `def` at
/// `def_oid`, is an instance of it: sent with its wire type, a value its
/// MIB type allows (a named number, a TruthValue, a DisplayString of at
/// most 255 printable octets), as `.0` of a scalar or a row that decodes
/// with the MIB's INDEX. `value` is resolved (`Value::resolve`).
pub fn instance_of<'m>(
    mib: &'m Mib,
    def: &ObjectDef,
    def_oid: &Oid,
    oid: &Oid,
    value: &Value,
) -> Result<Instance<'m>, String> {
    let wire = value.wire_type();
    if wire != def.syntax.wire_type() {
        return Err(format!("sent as {wire:?}, declared {:?}", def.syntax));
    }
    let node = mib
        .nodes
        .get(def.name)
        .ok_or(format!("{} is not in the MIB", def.name))?;
    let allowed = match (value, def.syntax) {
        (Value::Integer(v), Syntax::TruthValue) => *v == 1 || *v == 2,
        (Value::Integer(v), _) => {
            let numbers = node.syntax.as_ref().map(named_numbers).unwrap_or_default();
            numbers.is_empty() || numbers.iter().any(|(_, n)| *n == i64::from(*v))
        }
        (Value::OctetString(s), Syntax::DisplayString) => {
            s.len() <= 255 && s.iter().all(|b| (0x20..0x7f).contains(b))
        }
        _ => true,
    };
    if !allowed {
        return Err(format!("{value:?} is not a value of its MIB type"));
    }
    let suffix = &oid.as_slice()[def_oid.len()..];
    if node.kind == "scalar" {
        return if suffix == [0] {
            Ok(Instance::Scalar)
        } else {
            Err(format!("a scalar with instance {suffix:?}"))
        };
    }
    let row_oid = def_oid.parent().unwrap();
    let row = mib
        .node_at(&row_oid)
        .filter(|r| r.kind == "row")
        .ok_or(format!("no row at {row_oid}"))?;
    let first = decode_index(mib, row, suffix)?;
    Ok(Instance::Row { row, first })
}

// ---------------------------------------------------------------------------
// Notifications.

/// Every notification the agent sends is a current NOTIFICATION-TYPE at
/// `root.0.N`, with a DESCRIPTION and the same OBJECTS in the same order,
/// each an object the notifier can send (a scalar's `.0`, or a row the
/// MIB's INDEX decodes); and the MIB defines no other notification.
pub fn notification_problems(spec: &ModuleSpec, mib: &Mib) -> Vec<String> {
    let mut problems = Vec::new();
    let mut numbers = BTreeSet::new();
    for def in spec.notifications {
        if def.mib != spec.notify_mib {
            problems.push(format!("{}: not marked {:?}", def.name, spec.notify_mib));
        }
        if !numbers.insert(def.number) {
            problems.push(format!("{}: number {} twice", def.name, def.number));
        }
        let oid = spec.notification_oid(def);
        let Some(node) = mib.nodes.get(def.name).filter(|n| n.kind == "notification") else {
            let there = mib.node_at(&oid).map(|n| n.name.as_str());
            problems.push(format!(
                "{}: no NOTIFICATION-TYPE of that name in {} (at {oid}: {there:?})",
                def.name, spec.name
            ));
            continue;
        };
        if node.oid != oid {
            problems.push(format!(
                "{}: MIB says {}, agent sends {oid}",
                def.name, node.oid
            ));
        }
        if node.status.as_deref() != Some("current") || node.description_words().is_empty() {
            problems.push(format!(
                "{}: STATUS {:?} or no DESCRIPTION",
                def.name, node.status
            ));
        }
        if node.objects != def.object_names() {
            problems.push(format!(
                "{}: OBJECTS {:?}, the agent sends {:?}",
                def.name,
                node.objects,
                def.object_names()
            ));
        }
        for carried in def.objects {
            let name = carried.object.name;
            let Some(object) = spec.object(name) else {
                problems.push(format!("{}: {name} is not served", def.name));
                continue;
            };
            // The instance the agent sends the object at (the catalogue's
            // `Carried`), which the MIB's INDEX must decode.
            let Some(suffix) = carried.instance(spec.notified_about()) else {
                problems.push(format!(
                    "{}: {name} is neither a scalar nor a column of a table whose rows the \
                     notifier names",
                    def.name
                ));
                continue;
            };
            let decoded = if spec.is_scalar(object) {
                (suffix == [0]).then_some(0).ok_or("not .0".to_string())
            } else {
                let row = spec
                    .oid(object.arcs)
                    .parent()
                    .and_then(|r| mib.node_at(&r).cloned());
                row.ok_or("no row".to_string())
                    .and_then(|row| decode_index(mib, &row, &suffix))
            };
            let want = if spec.is_scalar(object) { 0 } else { suffix[0] };
            if decoded != Ok(want) {
                problems.push(format!(
                    "{}: {name}.{suffix:?} is not an instance the MIB allows: {decoded:?}",
                    def.name
                ));
            }
        }
    }
    let branch = spec.oid(&[0]);
    for n in mib.nodes.values().filter(|n| n.kind == "notification") {
        if !spec.notifications.iter().any(|d| d.name == n.name) {
            problems.push(format!(
                "{} ({}): the agent never sends it (metrics::*_NOTIFICATIONS)",
                n.name, n.oid
            ));
        }
        if n.oid.parent().as_ref() != Some(&branch) {
            problems.push(format!("{} ({}): not under {branch}", n.name, n.oid));
        }
    }
    problems
}

// ---------------------------------------------------------------------------
// Names.

/// The names the agent uses are good SMI descriptors in the module's name
/// space, a notification's name is no object's (descriptors are unique in a
/// module, and libsmi warns about two that differ only in case), and no
/// two names of the module differ only in case.
pub fn name_problems(spec: &ModuleSpec, mib: &Mib) -> Vec<String> {
    let mut problems = Vec::new();
    for name in spec.agent_names() {
        problems.extend(descriptor_problem_in(spec, name));
        if !name.starts_with(spec.identity) {
            problems.push(format!(
                "{name}: not in the module's {}* name space",
                spec.identity
            ));
        }
    }
    for def in spec.notifications {
        if let Some(o) = spec
            .objects
            .iter()
            .find(|o| o.name.eq_ignore_ascii_case(def.name))
        {
            problems.push(format!(
                "{}: src/metrics/ gives a notification the name of the object {} ({}); \
                 descriptors are unique in a module, so the MIB cannot define it: rename \
                 the notification",
                def.name,
                o.name,
                spec.oid(o.arcs)
            ));
        }
        for n in mib.nodes.values() {
            if n.kind != "notification" && n.name.eq_ignore_ascii_case(def.name) {
                problems.push(format!(
                    "{}: also the name of the {} {}",
                    def.name, n.kind, n.name
                ));
            }
        }
    }
    let mut by_case: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for name in mib.nodes.keys() {
        by_case.entry(name.to_lowercase()).or_default().push(name);
        problems.extend(descriptor_problem_in(spec, name).map(|p| format!("in the MIB: {p}")));
    }
    for names in by_case.values().filter(|v| v.len() > 1) {
        problems.push(format!("{names:?} differ only in case"));
    }
    problems
}

// ---------------------------------------------------------------------------
// Conformance and layout.

/// Groups and compliance: each family of names (a table's columns, the
/// notifications, …; see `ModuleSpec::group_families`) is split among
/// current groups of its own, each member in exactly one; every group
/// belongs to a family or is one of the free ones; and a current
/// MODULE-COMPLIANCE makes every served object and notification mandatory.
pub fn conformance_problems(spec: &ModuleSpec, mib: &Mib) -> Vec<String> {
    let groups = mib.groups();
    let mut problems = Vec::new();
    let mut placed: BTreeSet<&str> = spec.free_groups.iter().copied().collect();
    for (what, family) in &spec.group_families {
        let mut covered = BTreeSet::new();
        for (name, members) in &groups {
            let members: BTreeSet<&str> = members.iter().copied().collect();
            if members.is_disjoint(family) {
                continue;
            }
            placed.insert(name);
            let strays: Vec<&&str> = members.difference(family).collect();
            if !strays.is_empty() && !spec.cross_groups.contains(name) {
                problems.push(format!("{name} holds {what} and also {strays:?}"));
            }
            for member in members.intersection(family) {
                if !covered.insert(*member) {
                    problems.push(format!("{member} is in more than one group, {name} too"));
                }
            }
        }
        let missing: Vec<&&str> = family.difference(&covered).collect();
        if !missing.is_empty() {
            problems.push(format!("no group holds the {what} {missing:?}"));
        }
    }
    for name in groups.keys() {
        if !placed.contains(name) {
            problems.push(format!("{name}: a group of none of the module's families"));
        }
        if mib.nodes[*name].status.as_deref() != Some("current") {
            problems.push(format!("{name} is not current"));
        }
    }
    let served: BTreeSet<&str> = spec.agent_names().into_iter().collect();
    let compliances = mib.compliances();
    let covering = compliances
        .iter()
        .filter(|(_, (status, _))| *status == "current")
        .any(|(_, (_, mandatory))| {
            let required: BTreeSet<&str> = mandatory
                .iter()
                .flat_map(|g| groups.get(g).into_iter().flatten().copied())
                .collect();
            served.is_subset(&required)
        });
    if !covering {
        problems.push(format!(
            "no current MODULE-COMPLIANCE makes every served object and every notification \
             mandatory: {compliances:?}"
        ));
    }
    problems
}

/// The module's identity node is its root, everything it registers sits
/// below the root in its place (notifications at `.0.N`, scalars in their
/// branches, tables where the module keeps them, groups and compliance
/// statements under its conformance node), and LAST-UPDATED is the newest
/// REVISION.
pub fn layout_problems(spec: &ModuleSpec, mib: &Mib) -> Vec<String> {
    let mut problems = Vec::new();
    let root = &spec.root;
    let identity = mib.dump.get(spec.name).and_then(|m| m.str("identity node"));
    if identity != Some(spec.identity) {
        problems.push(format!(
            "identity node {identity:?}, want {}",
            spec.identity
        ));
    }
    if mib.nodes.get(spec.identity).map(|n| &n.oid) != Some(root) {
        problems.push(format!("{} is not at {root}", spec.identity));
    }
    let entries: Vec<Oid> = spec
        .tables
        .iter()
        .filter_map(|t| t.entry_arcs().ok())
        .map(|arcs| spec.oid(arcs))
        .collect();
    let tables: Vec<Oid> = entries.iter().filter_map(Oid::parent).collect();
    let conformance = spec.oid(&[spec.conformance]);
    for (name, n) in &mib.nodes {
        if !n.oid.starts_with(root) {
            problems.push(format!("{name} at {} is outside the module", n.oid));
            continue;
        }
        let parent = n.oid.parent();
        let place = match n.kind.as_str() {
            "notification" => parent == Some(spec.oid(&[0])),
            "scalar" => spec
                .scalar_branches
                .iter()
                .any(|b| parent == Some(spec.oid(b))),
            "table" => tables.contains(&n.oid),
            "row" => entries.contains(&n.oid),
            "column" => parent.is_some_and(|p| entries.contains(&p)),
            "group" => parent == conformance.child(&[2]).ok(),
            "compliance" => parent == conformance.child(&[1]).ok(),
            _ => true,
        };
        if !place {
            problems.push(format!("{name}: a {} at {}", n.kind, n.oid));
        }
    }
    let module = mib.dump.get(spec.name);
    let organization = module.and_then(|m| m.str("organization"));
    if organization != Some("Days of Wonder, Inc.") {
        problems.push(format!(
            "ORGANIZATION {organization:?}, the same in every module"
        ));
    }
    let revisions = mib.revisions();
    let newest = revisions.iter().max().copied().unwrap_or_default();
    let last_updated = last_updated(spec.name);
    let as_date = (last_updated.len() == 13 && last_updated.ends_with('Z')).then(|| {
        format!(
            "{}-{}-{} {}:{}",
            &last_updated[..4],
            &last_updated[4..6],
            &last_updated[6..8],
            &last_updated[8..10],
            &last_updated[10..12]
        )
    });
    if as_date.as_deref() != Some(newest) {
        problems.push(format!(
            "LAST-UPDATED {last_updated} (want YYYYMMDDHHMMZ) is not the newest REVISION of \
             {revisions:?}"
        ));
    }
    problems
}

/// Every rule of this file on one module, for a broken copy.
pub fn all_problems(spec: &ModuleSpec, mib: &Mib) -> Vec<String> {
    let mut problems = object_problems(spec, mib);
    problems.extend(unserved_problems(spec, mib));
    problems.extend(table_problems(spec, mib));
    problems.extend(notification_problems(spec, mib));
    problems.extend(name_problems(spec, mib));
    problems.extend(conformance_problems(spec, mib));
    problems
}
