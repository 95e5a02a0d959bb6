//! `mibs/REDIS-SERVER-MIB.txt` against the agent's object table
//! (`redis_snmp::metrics`), and against the tools managers use.
//!
//! - libsmi's `smidump` (the project's MIB parser) must find every served
//!   object at the same OID, read-only, with a type that matches what the
//!   agent sends, and must find no readable object the agent does not serve.
//! - `smilint -l 6` may print only the messages allowed below, each with
//!   its reason (the same list is in `mibs/README.md`).
//! - net-snmp's `snmptranslate` must load the module without a complaint and
//!   resolve every served object to the same OID and wire type.
//!
//! The tools come from the Debian packages smitools and snmp; the SMIv2 base
//! modules from `scripts/base-mibs.sh`. See `tests/mibtool/mod.rs`.

mod mibtool;

use mibtool::{mib, mib_file, repo_dir, snmptranslate, text, Py, ResolvedType, MODULE, SMILINT};
use redis_snmp::metrics::{
    redis_objects, ObjectDef, DEFAULT_REDIS_ROOT, INSTANCE_COLUMNS, INSTANCE_ENTRY, LEGACY_SCALARS,
};
use redis_snmp::oid::Oid;
use redis_snmp::smi::{Syntax, WireType};
use std::collections::{BTreeMap, BTreeSet};

fn root() -> Oid {
    DEFAULT_REDIS_ROOT.parse().unwrap()
}

/// The MIB kind an object of the table must have: the legacy scalars are
/// served with instance `.0`, the columns with the instance number.
fn expected_kind(o: &ObjectDef) -> &'static str {
    if LEGACY_SCALARS.iter().any(|l| l.name == o.name) {
        "scalar"
    } else {
        "column"
    }
}

/// Whether the type the MIB declares fits a [`Syntax`] of the table; on a
/// mismatch, what was expected.
fn check_type(syntax: Syntax, t: &ResolvedType) -> Result<(), &'static str> {
    let derives = |name: &str| t.derives_from(name);
    let gauge64 =
        derives("REDIS-SERVER-MIB::REDISUnsigned64") || derives("HCNUM-TC::CounterBasedGauge64");
    let (ok, expected) = match syntax {
        Syntax::Integer32 => (
            t.basetype == "Integer32",
            "Integer32 (an INTEGER without named values)",
        ),
        Syntax::Enum => (t.basetype == "Enumeration", "an INTEGER with named values"),
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
    if ok {
        Ok(())
    } else {
        Err(expected)
    }
}

#[test]
fn every_served_object_is_in_the_mib_with_its_oid_kind_access_and_type() {
    let mib = mib();
    let root = root();
    let mut problems = Vec::new();
    for o in redis_objects() {
        let Some(node) = mib.nodes.get(o.name) else {
            problems.push(format!("{}: not in {MODULE}", o.name));
            continue;
        };
        let oid = o.oid(&root);
        if node.oid != oid {
            problems.push(format!(
                "{}: MIB says {}, agent serves {oid}",
                o.name, node.oid
            ));
        }
        if node.kind != expected_kind(o) {
            problems.push(format!(
                "{}: a {} in the MIB, served as a {}",
                o.name,
                node.kind,
                expected_kind(o)
            ));
        }
        if node.access.as_deref() != Some("readonly") {
            problems.push(format!(
                "{}: access {:?}, not read-only",
                o.name, node.access
            ));
        }
        let resolved = node
            .syntax
            .as_ref()
            .ok_or_else(|| "no SYNTAX".to_string())
            .and_then(|ty| mib.resolve(ty));
        match resolved {
            Ok(t) => {
                if let Err(expected) = check_type(o.syntax, &t) {
                    problems.push(format!(
                        "{}: served as {:?}, so the MIB must say {expected}; it says {t:?}",
                        o.name, o.syntax
                    ));
                }
            }
            Err(e) => problems.push(format!("{}: {e}", o.name)),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_mib_defines_no_readable_object_the_agent_does_not_serve() {
    let served: BTreeSet<&str> = redis_objects().map(|o| o.name).collect();
    let unserved: Vec<String> = mib()
        .nodes
        .values()
        .filter(|n| n.is_readable() && !served.contains(n.name.as_str()))
        .map(|n| format!("{} ({}, {:?})", n.name, n.oid, n.access))
        .collect();
    assert!(
        unserved.is_empty(),
        "{MODULE} defines objects the agent does not serve (add them to \
         src/metrics.rs or remove them from the MIB): {unserved:?}"
    );
}

#[test]
fn the_instance_table_is_indexed_as_the_agent_indexes_it() {
    let mib = mib();
    let entry_oid = root().child(INSTANCE_ENTRY);
    let entry = mib
        .nodes
        .values()
        .find(|n| n.oid == entry_oid)
        .unwrap_or_else(|| panic!("no node at {entry_oid}"));
    assert_eq!(entry.kind, "row", "{}", entry.name);
    assert_eq!(
        entry.index,
        ["redisInstanceIndex"],
        "INDEX of {}",
        entry.name
    );

    let table = mib
        .nodes
        .values()
        .find(|n| Some(&n.oid) == entry_oid.parent().as_ref());
    assert_eq!(table.map(|t| t.kind.as_str()), Some("table"));

    // Column 1, the index: not-accessible, a positive Integer32 (the agent
    // numbers instances from 1).
    let index = &mib.nodes["redisInstanceIndex"];
    assert_eq!(index.oid, entry_oid.child(&[1]));
    assert_eq!(index.kind, "column");
    assert_eq!(index.access.as_deref(), Some("noaccess"));
    let ty = index.syntax.as_ref().expect("index has a SYNTAX");
    assert_eq!(mib.resolve(ty).unwrap().basetype, "Integer32");
    let range = ty.get("range").expect("index has a range");
    assert_eq!(range.str("min"), Some("1"));
    assert_eq!(range.str("max"), Some("2147483647"));

    // Every column of the entry is either the index or served.
    for col in mib
        .nodes
        .values()
        .filter(|n| n.oid.parent() == Some(entry_oid.clone()))
    {
        assert!(
            col.name == index.name || INSTANCE_COLUMNS.iter().any(|c| c.name == col.name),
            "column {} is not served",
            col.name
        );
    }

    // redisInstanceUp carries the values the agent sends.
    let up = mib.nodes["redisInstanceUp"].syntax.as_ref().unwrap();
    let values: Vec<(&str, Option<&str>)> = up
        .entries()
        .iter()
        .filter(|(_, v)| v.str("nodetype") == Some("namednumber"))
        .map(|(k, v)| (k.as_str(), v.str("number")))
        .collect();
    assert_eq!(values, [("up", Some("1")), ("down", Some("2"))]);
}

#[test]
fn a_current_compliance_statement_requires_every_served_object() {
    let mib = mib();
    let groups = mib.groups();
    let compliances = mib.compliances();
    let served: BTreeSet<&str> = redis_objects().map(|o| o.name).collect();
    let covering: Vec<&str> = compliances
        .iter()
        .filter(|(_, (status, _))| *status == "current")
        .filter(|(_, (_, mandatory))| {
            let required: BTreeSet<&str> = mandatory
                .iter()
                .flat_map(|g| groups.get(g).into_iter().flatten().copied())
                .collect();
            served.is_subset(&required)
        })
        .map(|(name, _)| *name)
        .collect();
    assert!(
        !covering.is_empty(),
        "no current MODULE-COMPLIANCE makes every served object mandatory: {compliances:?}"
    );
}

#[test]
fn the_layout_and_the_legacy_definitions_hold() {
    let mib = mib();
    let root = root();
    let expect = [
        ("redis", vec![]),
        ("redisNotifications", vec![0]),
        ("redisStatus", vec![1]),
        ("redisObjects", vec![3]),
        ("redisMIBConformance", vec![2]),
        ("redisMIBCompliances", vec![2, 1]),
        ("redisMIBGroups", vec![2, 2]),
        ("redisMIBCompliance", vec![2, 1, 1]),
        ("redisGroup", vec![2, 2, 1]),
    ];
    for (name, arcs) in expect {
        let node = mib
            .nodes
            .get(name)
            .unwrap_or_else(|| panic!("{name} is gone"));
        assert_eq!(node.oid, root.child(&arcs), "{name}");
    }
    assert_eq!(
        mib.dump.get(MODULE).and_then(|m| m.str("identity node")),
        Some("redis")
    );
    // The original group: the first six scalars, still current.
    let first_six: Vec<&str> = LEGACY_SCALARS[..6].iter().map(|o| o.name).collect();
    assert_eq!(mib.groups()["redisGroup"], first_six);
    let group = mib
        .dump
        .get("groups")
        .and_then(|g| g.get("redisGroup"))
        .unwrap();
    assert_eq!(group.str("status"), Some("current"));
    let (status, mandatory) = &mib.compliances()["redisMIBCompliance"];
    assert_eq!(
        (*status, mandatory.as_slice()),
        ("current", &["redisGroup"][..])
    );
    // The legacy textual convention, and the revision it came with.
    let tc = mib
        .dump
        .get("typedefs")
        .and_then(|t| t.get("REDISUnsigned64"));
    let tc = tc.expect("REDISUnsigned64 is gone");
    assert_eq!(tc.str("format"), Some("d"));
    let parent = tc
        .get("parent module")
        .expect("REDISUnsigned64 has a parent");
    assert_eq!(
        (parent.str("name"), parent.str("type")),
        (Some("SNMPv2-SMI"), Some("Counter64"))
    );
    let revisions = match mib.dump.get(MODULE).and_then(|m| m.get("revisions")) {
        Some(Py::List(r)) => r.iter().filter_map(|r| r.str("date")).collect(),
        _ => Vec::new(),
    };
    assert!(revisions.contains(&"2013-02-08 00:00"), "{revisions:?}");
}

/// smilint messages accepted in `mibs/REDIS-SERVER-MIB.txt`: the error name
/// smilint prints in braces (`-m`), a piece of the message, and why the
/// message stays. Keep in step with the table in `mibs/README.md`.
///
/// Empty: with libsmi 0.4.8, `smilint -l 6` (and `-l 9`) prints nothing.
struct AllowedLint {
    error: &'static str,
    contains: &'static str,
    why: &'static str,
}

const SMILINT_ALLOWED: &[AllowedLint] = &[];

#[test]
fn smilint_reports_only_allowed_messages() {
    let out = SMILINT.run_libsmi(&["-l", "6", "-m", "-s"]);
    assert!(
        out.status.code().is_some(),
        "smilint died: {}\n{}",
        out.status,
        text(&out.stderr)
    );
    let all = text(&out.stdout) + &text(&out.stderr);
    let unexpected: Vec<&str> = all
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter(|l| {
            !SMILINT_ALLOWED
                .iter()
                .any(|a| l.contains(&format!("{{{}}}", a.error)) && l.contains(a.contains))
        })
        .collect();
    assert!(
        unexpected.is_empty(),
        "smilint -l 6 on {}:\n{}",
        mib_file().display(),
        unexpected.join("\n")
    );
}

#[test]
fn smilint_allow_list_is_documented() {
    let readme = std::fs::read_to_string(repo_dir().join("mibs/README.md")).unwrap();
    for a in SMILINT_ALLOWED {
        assert!(!a.why.is_empty(), "{{{}}} needs a reason", a.error);
        assert!(
            readme.contains(&format!("{{{}}}", a.error)),
            "mibs/README.md does not explain the allowed smilint message {{{}}}",
            a.error
        );
    }
}

/// The `-Tp` type labels net-snmp decodes a value with, for the wire type the
/// agent sends.
fn net_snmp_labels(syntax: Syntax) -> &'static [&'static str] {
    if syntax == Syntax::Enum {
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

#[test]
fn net_snmp_loads_the_module_and_resolves_every_object() {
    let root = root();
    let (out, complaints) = snmptranslate(&["-Tp", &root.to_string()]);
    assert!(
        out.status.success() && complaints.is_empty(),
        "snmptranslate -Tp {root} ({}):\n{}",
        out.status,
        complaints.join("\n")
    );
    // Leaves of the tree: `+-- -R-- Gauge     redisConnectedClients(1)`.
    let tree = text(&out.stdout);
    let leaves: BTreeMap<&str, (&str, &str)> = tree
        .lines()
        .filter_map(|l| l.split_once("+-- ").map(|(_, rest)| rest))
        .filter_map(|rest| {
            let mut words = rest.split_whitespace();
            let (access, label, name) = (words.next()?, words.next()?, words.next()?);
            Some((name.split('(').next()?, (access, label)))
        })
        .collect();
    assert!(tree.starts_with("+--redis(400)"), "{tree}");

    let mut problems = Vec::new();
    for o in redis_objects() {
        match leaves.get(o.name) {
            Some(&(access, label)) => {
                if access != "-R--" {
                    problems.push(format!("{}: net-snmp access {access}", o.name));
                }
                if !net_snmp_labels(o.syntax).contains(&label) {
                    problems.push(format!(
                        "{}: net-snmp decodes it as {label}, the agent sends {:?}",
                        o.name,
                        o.syntax.wire_type()
                    ));
                }
            }
            None => problems.push(format!("{}: not in snmptranslate -Tp", o.name)),
        }
        let (out, complaints) = snmptranslate(&["-On", &format!("{MODULE}::{}", o.name)]);
        let got = text(&out.stdout);
        let want = o.oid(&root).to_string();
        if !out.status.success() || !complaints.is_empty() || got.trim() != want {
            problems.push(format!(
                "{}: snmptranslate -On gives {:?} ({}), want {want} {complaints:?}",
                o.name,
                got.trim(),
                out.status
            ));
        }
    }
    let served: BTreeSet<&str> = redis_objects().map(|o| o.name).collect();
    for (name, (access, _)) in &leaves {
        if *access != "----" && !served.contains(name) {
            problems.push(format!("{name}: readable in net-snmp's view, not served"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
