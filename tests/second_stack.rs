//! Issue 12, part 3: a second SNMP stack. net-snmp is lenient; other
//! stacks are not. pysnmp (pure Python, no net-snmp code) walks both
//! subtrees through a real snmpd, and pysmi compiles both MIBs, as a third
//! MIB compiler beside smilint and net-snmp.
//!
//! Both come from PyPI, pinned in `scripts/python-requirements.txt`, into
//! the venv `target/py-venv` that `scripts/python-deps.sh` makes (it does
//! nothing when the venv is there). Where PyPI cannot be reached the
//! script says so and these tests skip, saying so on stderr.
//!
//! The Python side is `tests/second_stack.py`: it compiles, walks and
//! checks each varbind against the MIB; the comparisons between the walks
//! and with net-snmp are here.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use testkit::*;

const REDIS_ROOT: &str = ".1.3.6.1.4.1.20267.400";
const PUPPET_ROOT: &str = ".1.3.6.1.4.1.20267.401";
const MODULES: [&str; 2] = ["REDIS-SERVER-MIB", "PUPPET-AGENT-MIB"];

/// The venv's python, made by `scripts/python-deps.sh` if need be; `None`
/// (after saying why on stderr) when it cannot be made here.
fn python() -> Option<PathBuf> {
    let repo = repo_root();
    let out = Command::new("bash")
        .arg(repo.join("scripts/python-deps.sh"))
        .current_dir(&repo)
        .stdin(Stdio::null())
        .output()
        .expect("running scripts/python-deps.sh");
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => {
            let printed = String::from_utf8_lossy(&out.stdout);
            let line = printed.lines().last().unwrap_or("").trim().to_string();
            let python = repo.join(line);
            assert!(python.is_file(), "python-deps.sh printed {printed:?}");
            Some(python)
        }
        Some(3) => {
            eprintln!(
                "SKIPPED: no pysnmp/pysmi here, this test checks nothing:\n{}",
                stderr.trim_end()
            );
            None
        }
        _ => panic!("scripts/python-deps.sh failed ({}):\n{stderr}", out.status),
    }
}

/// `python tests/second_stack.py ARGS`: its exit status and its JSON.
fn helper(python: &Path, args: &[&str]) -> (bool, Value, String) {
    let out = Command::new(python)
        .arg(repo_root().join("tests/second_stack.py"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("running tests/second_stack.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "second_stack.py {args:?} printed no JSON ({e}, {}):\n{stdout}\n--- stderr ---\n{stderr}",
            out.status
        )
    });
    (out.status.success(), json, stderr)
}

/// Compiles `MODULES` found in `mibs` with pysmi (strict) into `out`.
fn pysmi_compile(python: &Path, mibs: &Path, out: &Path) -> (bool, Value) {
    let base = base_mibs();
    let mut args = vec![
        "compile",
        "--base",
        base.to_str().unwrap(),
        "--mibs",
        mibs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(MODULES);
    let (ok, json, stderr) = helper(python, &args);
    assert_eq!(
        ok,
        json["ok"].as_bool() == Some(true),
        "the exit status and the report disagree:\n{json:#}\n{stderr}"
    );
    (ok, json)
}

#[test]
fn pysmi_compiles_both_mibs_strictly() {
    let Some(python) = python() else { return };
    let out = tempfile::tempdir().unwrap();
    let (ok, json) = pysmi_compile(&python, &repo_mibs(), out.path());
    assert!(ok, "pysmi does not compile the MIBs:\n{json:#}");
    for module in MODULES {
        assert_eq!(json["modules"][module]["status"], "compiled", "{json:#}");
        assert!(out.path().join(format!("{module}.py")).is_file());
    }
    assert_eq!(json["loaded"], true, "{json:#}");
}

/// The test of the test: copies of REDIS-SERVER-MIB broken three ways must
/// not compile (or not load into pysnmp).
#[test]
fn pysmi_rejects_broken_copies_of_the_mib() {
    let Some(python) = python() else { return };
    let text = std::fs::read_to_string(redis_mib_file()).unwrap();
    let breakages: [(&str, &str, &str, &str); 3] = [
        (
            "an import the module does not define",
            "    TEXTUAL-CONVENTION, DisplayString, TruthValue\n",
            "    TEXTUAL-CONVENTION, DisplayString, TruthValue, NoSuchConvention\n",
            "NoSuchConvention",
        ),
        (
            "a SYNTAX naming no type",
            "    SYNTAX      Counter64\n",
            "    SYNTAX      Counter46\n",
            "Unknown parents",
        ),
        (
            "two objects with one descriptor",
            "\nredisConnectedSlaves OBJECT-TYPE\n",
            "\nredisConnectedClients OBJECT-TYPE\n",
            "Duplicate symbol",
        ),
    ];
    for (what, from, to, expected) in breakages {
        assert!(text.contains(from), "the MIB no longer has {from:?}");
        let dir = tempfile::tempdir().unwrap();
        let mibs = dir.path().join("mibs");
        std::fs::create_dir(&mibs).unwrap();
        std::fs::write(
            mibs.join("REDIS-SERVER-MIB.txt"),
            text.replacen(from, to, 1),
        )
        .unwrap();
        std::fs::copy(
            repo_mibs().join("PUPPET-AGENT-MIB.txt"),
            mibs.join("PUPPET-AGENT-MIB.txt"),
        )
        .unwrap();
        let (ok, json) = pysmi_compile(&python, &mibs, &dir.path().join("out"));
        assert!(!ok, "pysmi accepts a MIB with {what}:\n{json:#}");
        assert!(
            json.to_string().contains(expected),
            "a MIB with {what} fails, but not for that reason:\n{json:#}"
        );
    }
}

/// A varbind as the helper reports it.
#[derive(Debug, Clone)]
struct Vb {
    oid: String,
    ty: String,
    value: String,
    object: String,
    mib_type: String,
    problems: Vec<String>,
}

fn varbinds(walk: &Value) -> Vec<Vb> {
    walk["varbinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| Vb {
            oid: v["oid"].as_str().unwrap().to_string(),
            ty: v["type"].as_str().unwrap().to_string(),
            value: v["value"].as_str().unwrap().to_string(),
            object: v["object"].as_str().unwrap_or("?").to_string(),
            mib_type: v["mib_type"].as_str().unwrap_or("?").to_string(),
            problems: v["problems"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap().to_string())
                .collect(),
        })
        .collect()
}

/// The objects whose value the agent computes when it answers (seconds
/// since some moment: `Value::SecondsSince`), not from its snapshot of
/// Redis and Puppet. With a refresh longer than the test, every other
/// value is the same in two walks.
const AGES: [&str; 3] = [
    "REDIS-SERVER-MIB::redisInstanceDataAge",
    "REDIS-SERVER-MIB::redisPstLastSaveAge",
    "PUPPET-AGENT-MIB::puppetLastRunAge",
];

/// The type net-snmp prints, in the names the helper uses (by wire tag).
fn net_snmp_type(ty: &str) -> &str {
    match ty {
        "INTEGER" => "Integer32",
        "STRING" | "Hex-STRING" | "" => "OCTET STRING",
        "OID" => "OBJECT IDENTIFIER",
        "Timeticks" => "TimeTicks",
        other => other,
    }
}

/// pysnmp's walks of `roots` (GETNEXT, then GETBULK with max-repetitions
/// 7: answers end elsewhere than net-snmp's 10), each varbind checked
/// against the MIBs compiled in `compiled`.
fn pysnmp_walk(python: &Path, snmpd: &Snmpd, compiled: &Path, roots: &[&str]) -> Value {
    let port = snmpd.udp_port().to_string();
    let mut args = vec![
        "walk",
        "--port",
        &port,
        "--community",
        "public",
        "--compiled",
        compiled.to_str().unwrap(),
        "--max-repetitions",
        "7",
    ];
    args.extend(roots);
    let (ok, json, stderr) = helper(python, &args);
    assert!(ok, "the pysnmp walk failed:\n{stderr}");
    json
}

/// The problems the helper found in one walk, as "OID: problem".
fn problems(walk: &Value) -> Vec<String> {
    varbinds(walk)
        .iter()
        .flat_map(|v| v.problems.iter().map(move |p| format!("{}: {p}", v.oid)))
        .collect()
}

#[test]
fn pysnmp_walks_by_getnext_and_getbulk_agree_with_the_mibs_and_net_snmp() {
    let Some(python) = python() else { return };
    let compiled = tempfile::tempdir().unwrap();
    let (ok, json) = pysmi_compile(&python, &repo_mibs(), compiled.path());
    assert!(ok, "pysmi does not compile the MIBs:\n{json:#}");

    // Redis with keys in two databases (db 0 and db 3, one expiring in
    // each), so that the keyspace table has rows with counts.
    let redis = Redis::start();
    for (db, keys) in [("0", 3), ("3", 2)] {
        for k in 0..keys {
            redis.cli(&["-n", db, "SET", &format!("key{k}"), "value"]);
        }
        redis.cli(&["-n", db, "EXPIRE", "key0", "3600"]);
    }
    let snmpd = Snmpd::start();
    let dir = tempfile::tempdir().unwrap();
    // One poll of Redis for the whole test (refresh: an hour), so that only
    // the answer-time ages (AGES) can differ between the walks.
    let agent = AgentConfig::new(&snmpd)
        .top("refresh", "3600")
        .redis("main", &format!("127.0.0.1:{}", redis.port()), "")
        .table(&puppet_fixture_section(dir.path(), "b_changed"))
        .start_quiet(dir.path());
    let net_snmp = snmpd.numeric();
    let ready = wait_until(Duration::from_secs(15), || {
        // redisKsKeys.1.<db>: one row per database, the keys counted.
        let keys = |db: u32| {
            net_snmp
                .get_one(&format!("{REDIS_ROOT}.3.10.1.2.1.{db}"))
                .value
        };
        net_snmp.get_one(&instance_oid(4, 1)).value == "1"
            && keys(0) == "3"
            && keys(3) == "2"
            && net_snmp.bulkwalk(PUPPET_ROOT).vars().len() > 10
    });
    assert!(
        ready,
        "the agent did not show Redis up, the keys of db 0 and 3 and Puppet:\n{}\n{}\n{}\n{}",
        net_snmp.get_one(&instance_oid(4, 1)),
        net_snmp.bulkwalk(&format!("{REDIS_ROOT}.3.10")),
        net_snmp.bulkwalk(PUPPET_ROOT),
        tail(&agent.log(), 30)
    );

    let started = Instant::now();
    let json = pysnmp_walk(&python, &snmpd, compiled.path(), &[REDIS_ROOT, PUPPET_ROOT]);
    let walked_for = started.elapsed();
    for root in [REDIS_ROOT, PUPPET_ROOT] {
        let next_walk = &json[root]["next"];
        let bulk_walk = &json[root]["bulk"];
        // Every answer decoded (pysnmp drops what it cannot decode, which
        // ends the walk in a timeout) and ended properly.
        for (how, walk) in [("GETNEXT", next_walk), ("GETBULK", bulk_walk)] {
            assert_eq!(
                walk["errors"],
                serde_json::json!([]),
                "pysnmp's {how} walk of {root} failed"
            );
        }
        let next = varbinds(next_walk);
        let bulk = varbinds(bulk_walk);
        eprintln!(
            "{root}: {} varbinds by GETNEXT ({} requests), {} by GETBULK ({} requests)",
            next.len(),
            next_walk["requests"],
            bulk.len(),
            bulk_walk["requests"]
        );
        assert!(next.len() > 20, "{root}: only {} varbinds", next.len());
        let mut types = std::collections::BTreeMap::<&str, usize>::new();
        for v in &next {
            *types.entry(v.ty.as_str()).or_default() += 1;
        }
        let objects: std::collections::BTreeSet<&str> =
            next.iter().map(|v| v.object.as_str()).collect();
        eprintln!("{root}: {} objects; types {types:?}", objects.len());

        // Each varbind is what the MIB says: an OBJECT-TYPE that can be
        // read, its instance as its INDEX says, its type the SYNTAX's base
        // type, its value within the SYNTAX's range, size and enumeration.
        let mut problems = problems(next_walk);
        problems.extend(self::problems(bulk_walk));
        assert!(
            problems.is_empty(),
            "{root}: {} problems:\n{}",
            problems.len(),
            problems.join("\n")
        );

        // The same OIDs in the same order, the same types, the same values
        // but for the ages, which only grow, by the walk's duration at most.
        let next_oids: Vec<&str> = next.iter().map(|v| v.oid.as_str()).collect();
        let bulk_oids: Vec<&str> = bulk.iter().map(|v| v.oid.as_str()).collect();
        assert_eq!(next_oids, bulk_oids, "{root}: the two walks differ");
        let slack = walked_for.as_secs() + 2;
        for (n, b) in next.iter().zip(&bulk) {
            assert_eq!(n.ty, b.ty, "{}: the type differs", n.oid);
            if AGES.contains(&n.object.as_str()) {
                let (vn, vb): (u64, u64) = (n.value.parse().unwrap(), b.value.parse().unwrap());
                assert!(
                    vn <= vb && vb <= vn + slack,
                    "{} ({}): {vn} by GETNEXT, then {vb} by GETBULK",
                    n.oid,
                    n.object
                );
            } else {
                assert_eq!(
                    n.value, b.value,
                    "{} ({}, {}): the value differs between the walks",
                    n.oid, n.object, n.mib_type
                );
            }
        }

        // net-snmp's snmpbulkwalk sees the same varbinds, with the same
        // types (two decoders of the same bytes).
        let theirs = net_snmp.bulkwalk(root);
        assert!(theirs.success(), "{theirs}");
        let theirs = theirs.vars();
        assert_eq!(
            theirs.len(),
            next.len(),
            "{root}: net-snmp sees {} varbinds, pysnmp {}",
            theirs.len(),
            next.len()
        );
        for (t, p) in theirs.iter().zip(&next) {
            assert_eq!(t.name, p.oid, "{root}: net-snmp and pysnmp list other OIDs");
            assert_eq!(
                net_snmp_type(&t.ty),
                p.ty,
                "{}: net-snmp decodes {} ({}), pysnmp {}",
                p.oid,
                t.ty,
                t.value,
                p.ty
            );
        }
    }

    // The test of the test: checked against a copy of the MIB that says
    // otherwise, the same answers show exactly those problems.
    a_misled_mib_shows_exactly_its_lies(&python, &snmpd);
}

/// Checked against a copy of REDIS-SERVER-MIB with four lies in it (a
/// type, an enumeration, a size, an index's range), the agent's answers
/// show exactly those problems: the checks above can fail.
fn a_misled_mib_shows_exactly_its_lies(python: &Path, snmpd: &Snmpd) {
    let text = std::fs::read_to_string(redis_mib_file()).unwrap();
    let misled_mibs = tempfile::tempdir().unwrap();
    let mut misled = text.clone();
    let lies: [(&str, &str, &str, &str); 4] = [
        (
            "redisConnectedClients OBJECT-TYPE\n    SYNTAX      Gauge32\n",
            "redisConnectedClients OBJECT-TYPE\n    SYNTAX      Counter32\n",
            ".1.3.6.1.4.1.20267.400.1.1.0",
            "Gauge32 on the wire, the MIB says Counter32",
        ),
        (
            "                    up(1),\n                    down(2),\n                    loading(3)",
            "                    up(7),\n                    down(2),\n                    loading(3)",
            ".1.3.6.1.4.1.20267.400.3.1.1.4.1",
            "redisInstanceState = '1' is outside its SYNTAX",
        ),
        (
            "redisInstanceName OBJECT-TYPE\n    SYNTAX      DisplayString\n",
            "redisInstanceName OBJECT-TYPE\n    SYNTAX      DisplayString (SIZE (0..1))\n",
            ".1.3.6.1.4.1.20267.400.3.1.1.2.1",
            "is outside its SYNTAX",
        ),
        (
            "redisInstanceIndex OBJECT-TYPE\n    SYNTAX      Integer32 (1..2147483647)\n",
            "redisInstanceIndex OBJECT-TYPE\n    SYNTAX      Integer32 (5..9)\n",
            ".1.3.6.1.4.1.20267.400.3.1.1.9.1",
            "does not decode by the row's INDEX",
        ),
    ];
    for (from, to, _, _) in &lies {
        assert!(misled.contains(from), "the MIB no longer has {from:?}");
        misled = misled.replacen(from, to, 1);
    }
    std::fs::write(misled_mibs.path().join("REDIS-SERVER-MIB.txt"), misled).unwrap();
    std::fs::copy(
        repo_mibs().join("PUPPET-AGENT-MIB.txt"),
        misled_mibs.path().join("PUPPET-AGENT-MIB.txt"),
    )
    .unwrap();
    let misled_compiled = tempfile::tempdir().unwrap();
    let (ok, json) = pysmi_compile(python, misled_mibs.path(), misled_compiled.path());
    assert!(ok, "pysmi does not compile the misled copy:\n{json:#}");
    let json = pysnmp_walk(python, snmpd, misled_compiled.path(), &[REDIS_ROOT]);
    let found = problems(&json[REDIS_ROOT]["next"]);
    for (_, _, oid, expected) in lies {
        assert!(
            found
                .iter()
                .any(|p| p.starts_with(&format!("{oid}: ")) && p.contains(expected)),
            "checked against a MIB that says otherwise, {oid} shows no {expected:?}:\n{}",
            found.join("\n")
        );
    }
    // Nothing else: every table of the MIB is indexed by
    // redisInstanceIndex first, so the index lie touches each table
    // varbind (under .400.3) once; each other lie one object.
    let table_varbinds = varbinds(&json[REDIS_ROOT]["next"])
        .iter()
        .filter(|v| v.oid.starts_with(&format!("{REDIS_ROOT}.3.")))
        .count();
    let index_problems = found
        .iter()
        .filter(|p| p.contains("does not decode by the row's INDEX"))
        .count();
    assert_eq!(index_problems, table_varbinds, "{}", found.join("\n"));
    assert_eq!(found.len(), table_varbinds + 3, "{}", found.join("\n"));
}
