//! Issue 23: the Prometheus files of `prometheus/` checked by the real
//! programs of Debian 12.
//!
//! - The `generator.yml` of each flavour and the alert rules are what the
//!   catalogue generates (`tests/prometheus/generate.rs`), and a changed copy
//!   fails the check.
//! - snmp_exporter 0.21 (Debian's `prometheus-snmp-exporter`): its
//!   generator, given only the SMIv2 base modules and our two MIBs, with
//!   `--fail-on-parse-errors`, writes exactly the shipped `snmp.yml`; it
//!   refuses a copy with a key it does not know, and a MIB it cannot parse.
//!   The exporter's `--dry-run` accepts the file and refuses a broken one.
//! - The 0.28 flavour, which no program here reads, is held to the rules of
//!   the 0.28 generator's source (`tests/prometheus/source_rules.rs`, each
//!   cited), broken copies must fail them, and its walks, lookups and types
//!   are those the 0.21 generator accepted.
//! - `promtool check rules` and `promtool test rules` (Debian's
//!   `prometheus`; only the promtool binary runs) on both rules files: each
//!   alert fires and clears on series named as the exporter emits them, and
//!   a copy with a wrong threshold fails the tests.
//! - Live: a real snmpd, redis-server, `puppet apply` and the agent; the
//!   exporter on loopback scrapes them, and every object snmpd serves comes
//!   out with the type the catalogue says (counter, gauge, state set, text
//!   as a label) and the value `snmpbulkwalk` reads just before or after.
//!
//! A missing program is a SKIP line, not a pass of that part; CI installs
//! them (scripts/install-test-deps.sh).

// Starts real servers and tools: built only with the `system-tests`
// feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

#[path = "prometheus/generate.rs"]
mod generate;
#[allow(dead_code)]
#[path = "mibtool/modules.rs"]
mod modules;
#[path = "prometheus/source_rules.rs"]
mod source_rules;

use generate::{check, divisor, is_state_set, objects_of, Flavour};
use redis_snmp::metrics::{
    puppet_objects, redis_objects, table_of, Layout, ObjectDef, RowIndex, EXPORTER_MODULES,
    NOT_EXPORTED,
};
use redis_snmp::smi::Syntax;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;
use testkit::{
    base_mibs, free_port, pki, repo_mibs, repo_root, wait_until, AgentConfig, Proc, PuppetApply,
    Redis, Snmpd, Var,
};

const GENERATOR: &str = "prometheus-snmp-generator";
const EXPORTER: &str = "prometheus-snmp-exporter";
const PROMTOOL: &str = "promtool";

/// The program's path, or `None` after a SKIP line naming the package.
fn program(name: &str, package: &str, test: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        println!("SKIP {test}: {name} is not installed (Debian package {package})");
    }
    found
}

fn dir(flavour: Flavour) -> PathBuf {
    repo_root().join("prometheus").join(flavour.dir())
}

fn text(out: &Output) -> String {
    format!(
        "{}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A directory with only the SMIv2 base modules and our two MIBs: the
/// npm base set's RFC-1215 has parse errors of its own.
fn mib_dir(into: &Path) -> PathBuf {
    let mibs = into.join("mibs");
    std::fs::create_dir_all(&mibs).unwrap();
    for m in ["SNMPv2-SMI", "SNMPv2-TC", "SNMPv2-CONF", "SNMPv2-MIB"] {
        std::fs::copy(
            base_mibs().join(format!("{m}.txt")),
            mibs.join(format!("{m}.txt")),
        )
        .unwrap();
    }
    for m in ["REDIS-SERVER-MIB", "PUPPET-AGENT-MIB"] {
        std::fs::copy(
            repo_mibs().join(format!("{m}.txt")),
            mibs.join(format!("{m}.txt")),
        )
        .unwrap();
    }
    mibs
}

/// Runs the 0.21 generator on `generator_yml` with `mibs`; its output and
/// the snmp.yml it wrote.
fn run_generator(generator: &Path, generator_yml: &str, mibs: &Path) -> (Output, Option<String>) {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("generator.yml"), generator_yml).unwrap();
    let out = Command::new(generator)
        .args(["--fail-on-parse-errors", "generate"])
        .env("MIBDIRS", mibs)
        .current_dir(work.path())
        .output()
        .expect("running the generator");
    let written = std::fs::read_to_string(work.path().join("snmp.yml")).ok();
    (out, written)
}

#[test]
fn generated_generator_files_rules_and_snmp_yml_are_the_shipped_ones() {
    let mut problems = Vec::new();
    for flavour in Flavour::ALL {
        let d = dir(flavour);
        for (file, generated) in [
            ("generator.yml", generate::generator_yml(flavour)),
            ("redis-snmp-rules.yml", generate::rules_yml(flavour)),
        ] {
            if let Err(e) = check(&d.join(file), &generated, true) {
                problems.push(e);
            }
        }
    }
    // The snmp.yml Debian's generator makes of the shipped generator.yml.
    if let Some(generator) = program(GENERATOR, "prometheus-snmp-exporter", "snmp.yml") {
        let work = tempfile::tempdir().unwrap();
        let mibs = mib_dir(work.path());
        let (out, written) =
            run_generator(&generator, &generate::generator_yml(Flavour::V021), &mibs);
        assert!(out.status.success(), "the generator failed: {}", text(&out));
        let written = written.expect("the generator wrote no snmp.yml");
        if let Err(e) = check(&dir(Flavour::V021).join("snmp.yml"), &written, true) {
            problems.push(e);
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn the_check_catches_a_changed_generated_file() {
    let generated = generate::generator_yml(Flavour::V021);
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("generator.yml");
    let changed = generated.replacen("type: gauge", "type: counter", 1);
    std::fs::write(&path, &changed).unwrap();
    let err = check(&path, &generated, false).expect_err("a changed file must fail");
    assert!(err.contains("-        type: counter"), "{err}");
    std::fs::write(&path, &generated).unwrap();
    assert_eq!(check(&path, &generated, false), Ok(()));
}

/// Every object of the catalogue is walked by exactly one module, or left
/// out with a reason; every 64-bit gauge is overridden to a gauge, every
/// enumeration to a state set, in both flavours; only the 0.28 one scales.
#[test]
fn every_object_is_exported_once_or_left_out_and_typed_by_its_syntax() {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let listed = EXPORTER_MODULES
        .iter()
        .flat_map(objects_of)
        .chain(NOT_EXPORTED.iter().flat_map(|n| n.objects.iter()));
    for o in listed {
        *seen.entry(o.name).or_default() += 1;
    }
    for o in redis_objects().chain(puppet_objects()) {
        assert_eq!(
            seen.get(o.name),
            Some(&1),
            "{} placed {:?} times",
            o.name,
            seen.get(o.name)
        );
    }
    for flavour in Flavour::ALL {
        let doc = source_rules::parse(&generate::generator_yml(flavour))
            .unwrap_or_else(|e| panic!("{flavour:?}: {e}"));
        for m in EXPORTER_MODULES {
            // The instance lookup only where rows have redisInstanceIndex
            // to replace: the generator refuses a lookup of an index no
            // walked table has.
            let lookups = &doc["modules"][m.name]["lookups"];
            assert_eq!(
                lookups.is_array(),
                objects_of(m).any(generate::is_by_instance),
                "{flavour:?} {}: lookups {lookups:?}",
                m.name
            );
            let overrides = &doc["modules"][m.name]["overrides"];
            for o in objects_of(m) {
                let want = if o.syntax == Syntax::Gauge64 {
                    Some("gauge")
                } else if is_state_set(o) {
                    Some("EnumAsStateSet")
                } else {
                    None
                };
                assert_eq!(
                    overrides[o.name]["type"].as_str(),
                    want,
                    "{flavour:?} {}",
                    o.name
                );
                let scale = overrides[o.name]["scale"].as_f64();
                let factor = modules::scale(o).filter(|_| flavour == Flavour::V028);
                assert_eq!(
                    scale,
                    factor.map(|f| 1.0 / f64::from(f)),
                    "{flavour:?} {}",
                    o.name
                );
            }
        }
    }
}

/// What a line of snmp.yml says of one metric.
#[derive(Debug, Default, Clone)]
struct Metric {
    ty: String,
    enum_values: BTreeMap<i64, String>,
}

/// snmp.yml's metrics per module, read from the generator's layout.
fn snmp_yml_metrics(text: &str) -> BTreeMap<String, BTreeMap<String, Metric>> {
    let mut out: BTreeMap<String, BTreeMap<String, Metric>> = BTreeMap::new();
    let (mut module, mut metric, mut in_enum) = (String::new(), String::new(), false);
    for line in text.lines() {
        if let Some(m) = line
            .strip_suffix(':')
            .filter(|m| !m.starts_with([' ', '#']))
        {
            module = m.to_string();
        } else if let Some(n) = line.strip_prefix("  - name: ") {
            metric = n.to_string();
            out.entry(module.clone())
                .or_default()
                .insert(metric.clone(), Metric::default());
            in_enum = false;
        } else if let Some(t) = line.strip_prefix("    type: ") {
            out.get_mut(&module).unwrap().get_mut(&metric).unwrap().ty = t.to_string();
        } else if line == "    enum_values:" {
            in_enum = true;
        } else if in_enum && line.starts_with("      ") {
            let (n, label) = line.trim().split_once(": ").unwrap();
            let m = out.get_mut(&module).unwrap().get_mut(&metric).unwrap();
            m.enum_values.insert(
                n.parse().unwrap(),
                label.trim_matches(['"', '\'']).to_string(),
            );
        } else if !line.starts_with("      ") {
            in_enum = false;
        }
    }
    out
}

fn shipped_snmp_yml() -> BTreeMap<String, BTreeMap<String, Metric>> {
    let text = std::fs::read_to_string(dir(Flavour::V021).join("snmp.yml")).unwrap();
    snmp_yml_metrics(&text)
}

#[test]
fn the_generator_refuses_an_unknown_key_and_a_broken_mib() {
    let Some(generator) = program(GENERATOR, "prometheus-snmp-exporter", "broken copies") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let mibs = mib_dir(work.path());
    // 0.21 knows no scale: the 0.28 file is refused.
    let (out, _) = run_generator(&generator, &generate::generator_yml(Flavour::V028), &mibs);
    let said = text(&out);
    assert!(!out.status.success(), "0.21 accepted the 0.28 file: {said}");
    assert!(said.contains("field scale not found"), "{said}");
    // A MIB net-snmp reports an error in (an object under a parent no
    // module defines) but that still holds every walked object:
    // --fail-on-parse-errors makes the error fatal.
    let mib = mibs.join("REDIS-SERVER-MIB.txt");
    let good = std::fs::read_to_string(&mib).unwrap();
    let end = good.rfind("\nEND").expect("the MIB ends with END");
    let mut broken = good.clone();
    broken.insert_str(
        end,
        "\nredisBroken OBJECT IDENTIFIER ::= { redisNoSuchParent 1 }\n",
    );
    std::fs::write(&mib, broken).unwrap();
    let (out, _) = run_generator(&generator, &generate::generator_yml(Flavour::V021), &mibs);
    let said = text(&out);
    assert!(
        !out.status.success(),
        "a MIB with an error was accepted: {said}"
    );
    assert!(said.contains("NetSNMP reported parse error"), "{said}");
}

#[test]
fn the_exporter_dry_run_accepts_the_shipped_file_and_refuses_a_broken_one() {
    let Some(exporter) = program(EXPORTER, "prometheus-snmp-exporter", "--dry-run") else {
        return;
    };
    let shipped = dir(Flavour::V021).join("snmp.yml");
    let run = |path: &Path| {
        Command::new(&exporter)
            .arg(format!("--config.file={}", path.display()))
            .arg("--dry-run")
            .output()
            .unwrap()
    };
    let out = run(&shipped);
    assert!(out.status.success(), "{}", text(&out));
    let d = tempfile::tempdir().unwrap();
    let broken = d.path().join("snmp.yml");
    let good = std::fs::read_to_string(&shipped).unwrap();
    std::fs::write(
        &broken,
        good.replacen("    type: gauge", "    kind: gauge", 1),
    )
    .unwrap();
    let out = run(&broken);
    assert!(
        !out.status.success(),
        "a broken snmp.yml passed: {}",
        text(&out)
    );
}

/// The 0.28 file by the 0.28 generator's rules; the same walks, lookups
/// and types as the 0.21 file, which the real 0.21 generator accepted.
#[test]
fn the_028_file_keeps_the_rules_of_the_028_generator_source() {
    let new = std::fs::read_to_string(dir(Flavour::V028).join("generator.yml")).unwrap();
    let doc = source_rules::check(&new).unwrap_or_else(|e| panic!("{e}"));
    let old = source_rules::parse(&generate::generator_yml(Flavour::V021)).unwrap();
    assert!(
        source_rules::check(&generate::generator_yml(Flavour::V021)).is_err(),
        "the 0.21 file passed as 0.28's"
    );
    for m in EXPORTER_MODULES {
        let (n, o) = (&doc["modules"][m.name], &old["modules"][m.name]);
        assert_eq!(n["walk"], o["walk"], "{}", m.name);
        assert_eq!(n["lookups"], o["lookups"], "{}", m.name);
        for o2 in objects_of(m) {
            assert_eq!(
                n["overrides"][o2.name]["type"],
                o["overrides"][o2.name]["type"]
            );
        }
    }
    assert_eq!(doc["auths"]["public_v2"]["version"], 2);
    for (what, broken) in [
        ("an unknown key", new.replacen("    walk:", "    walks:", 1)),
        (
            "a type metricType refuses",
            new.replacen("type: gauge", "type: INTEGER", 1),
        ),
        (
            "SNMP version 4",
            new.replacen("version: 2", "version: 4", 1),
        ),
        (
            "auth in a module (0.21's)",
            new.replacen("    walk:", "    auth: {}\n    walk:", 1),
        ),
    ] {
        assert_ne!(broken, new, "{what}: nothing replaced");
        assert!(source_rules::check(&broken).is_err(), "{what} passed");
    }
}

fn promtool(tool: &Path, args: &[&str], file: &Path) -> Output {
    Command::new(tool)
        .args(args)
        .arg(file)
        .output()
        .expect("running promtool")
}

#[test]
fn promtool_checks_and_tests_the_rules_firing_and_clearing() {
    // The series the rules read are the exporter's: names of snmp.yml, and
    // state labels among the metric's named values.
    let metrics = shipped_snmp_yml();
    for (name, state) in generate::rule_series() {
        let m = metrics
            .values()
            .find_map(|mm| mm.get(&name))
            .unwrap_or_else(|| panic!("the rules read {name}, which snmp.yml lacks"));
        if let Some(state) = state {
            assert_eq!(m.ty, "EnumAsStateSet", "{name}");
            assert!(
                m.enum_values.values().any(|v| *v == state),
                "{name} has no state {state}"
            );
        }
    }
    let Some(tool) = program(PROMTOOL, "prometheus", "promtool") else {
        return;
    };
    for flavour in Flavour::ALL {
        let rules = dir(flavour).join("redis-snmp-rules.yml");
        let out = promtool(&tool, &["check", "rules"], &rules);
        assert!(out.status.success(), "{flavour:?}: {}", text(&out));
        let d = tempfile::tempdir().unwrap();
        let tests = d.path().join("tests.yml");
        std::fs::write(&tests, generate::rules_test_yml(flavour, &rules)).unwrap();
        let out = promtool(&tool, &["test", "rules"], &tests);
        assert!(out.status.success(), "{flavour:?}: {}", text(&out));

        // Broken copies: PromQL that does not parse, and a memory alarm
        // without its hysteresis (cleared too early).
        let good = std::fs::read_to_string(&rules).unwrap();
        let broken = d.path().join("broken.yml");
        std::fs::write(&broken, good.replacen(" == 1", " == = 1", 1)).unwrap();
        let out = promtool(&tool, &["check", "rules"], &broken);
        assert!(!out.status.success(), "{flavour:?}: broken PromQL passed");
        let held = "alertstate=\\\"firing\\\"";
        assert!(good.contains(held), "no hysteresis in {}", rules.display());
        std::fs::write(&broken, good.replacen(held, "alertstate=\\\"none\\\"", 1)).unwrap();
        std::fs::write(&tests, generate::rules_test_yml(flavour, &broken)).unwrap();
        let out = promtool(&tool, &["test", "rules"], &tests);
        assert!(
            !out.status.success(),
            "{flavour:?}: rules without hysteresis passed"
        );
    }
}

#[test]
fn the_readme_names_every_shipped_file() {
    let readme = std::fs::read_to_string(repo_root().join("prometheus/README.md")).unwrap();
    for flavour in Flavour::ALL {
        for file in ["generator.yml", "redis-snmp-rules.yml"] {
            let path = format!("{}/{file}", flavour.dir());
            assert!(readme.contains(&path), "README lacks {path}");
        }
    }
    assert!(readme.contains("snmp_exporter-0.21/snmp.yml"));
    for n in NOT_EXPORTED {
        let table = n.why.split_whitespace().next().unwrap();
        assert!(
            readme.contains(table),
            "README does not say why {table} is left out"
        );
    }
}

// ---------------------------------------------------------------------------
// Live.

/// GET of `path` on 127.0.0.1:`port`: the body.
fn http_get(port: u16, path: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connecting to the exporter");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    assert!(
        head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"),
        "{head}"
    );
    body.to_string()
}

/// One sample of the exposition: name, labels, value.
type Sample = (String, BTreeMap<String, String>, f64);

fn parse_exposition(body: &str) -> (BTreeMap<String, String>, Vec<Sample>) {
    let mut types = BTreeMap::new();
    let mut samples = Vec::new();
    for line in body.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (n, t) = rest.split_once(' ').unwrap();
            types.insert(n.to_string(), t.to_string());
            continue;
        }
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').unwrap();
        let (name, labels) = match series.split_once('{') {
            Some((n, l)) => (n, l.trim_end_matches('}')),
            None => (series, ""),
        };
        let mut map = BTreeMap::new();
        let mut rest = labels;
        while let Some((k, after)) = rest.split_once("=\"") {
            let mut v = String::new();
            let mut chars = after.char_indices();
            let mut end = after.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, e)) = chars.next() {
                            v.push(if e == 'n' { '\n' } else { e });
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => v.push(c),
                }
            }
            map.insert(k.trim_start_matches(',').to_string(), v);
            rest = &after[end..];
        }
        samples.push((name.to_string(), map, value.parse().unwrap()));
    }
    (types, samples)
}

/// A numeric walk below `root`: OID → variable.
fn walk(snmpd: &Snmpd, root: &str) -> BTreeMap<String, Var> {
    snmpd
        .numeric_walk(root)
        .into_iter()
        .filter(|v| !v.is_exception())
        .map(|v| (v.name.clone(), v))
        .collect()
}

fn signed(v: &Var) -> Option<f64> {
    let first = v.value.split_whitespace().next()?;
    first
        .parse::<i128>()
        .ok()
        .map(|n| n as f64)
        .or_else(|| v.number().map(|n| n as f64))
}

/// The labels the exporter gives the row `suffix` of `def` (besides a
/// state's or a text's own label), from the index: the instance's name,
/// then the row's own number or names; a PUPPET-AGENT-MIB row its own
/// number alone (no lookup).
fn row_labels(def: &ObjectDef, suffix: &[u32], names: &BTreeMap<u32, String>) -> Option<String> {
    let Some(table) = table_of(def) else {
        return Some(String::new());
    };
    if let RowIndex::Row { object, .. } = table.index {
        return match suffix {
            [n] => Some(format!("{object}={n}")),
            _ => None,
        };
    }
    let name = |bytes: &[u32]| {
        bytes
            .iter()
            .map(|b| char::from(*b as u8))
            .collect::<String>()
    };
    let mut labels = vec![(
        generate::instance_name_label(),
        names.get(&suffix[0])?.clone(),
    )];
    match (table.index, &suffix[1..]) {
        (RowIndex::Instance, []) => {}
        (RowIndex::InstanceAndNumber { object, .. }, [n]) => labels.push((object, n.to_string())),
        (RowIndex::InstanceAndName { object }, [_, bytes @ ..]) => {
            labels.push((object, name(bytes)))
        }
        (RowIndex::InstanceNameAndName { parent, object }, [len, rest @ ..]) => {
            let len = *len as usize;
            labels.push((parent, name(&rest[..len])));
            labels.push((object, name(&rest[len + 1..])));
        }
        _ => return None,
    }
    labels.sort();
    Some(
        labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(","),
    )
}

fn key_of(labels: &BTreeMap<String, String>, own: &str) -> String {
    labels
        .iter()
        .filter(|(k, _)| k.as_str() != own)
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The exporter on a loopback port, reading `config`; stopped when dropped.
struct Exporter {
    proc: Proc,
    port: u16,
}

impl Exporter {
    fn start(exporter: &Path, config: &Path) -> Exporter {
        let port = free_port();
        let proc = Proc::spawn(
            Command::new(exporter)
                .arg(format!("--config.file={}", config.display()))
                .arg(format!("--web.listen-address=127.0.0.1:{port}"))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null()),
            "prometheus-snmp-exporter",
        );
        let listens = wait_until(Duration::from_secs(10), || {
            TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        assert!(listens, "the exporter does not listen on 127.0.0.1:{port}");
        Exporter { proc, port }
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.proc.terminate(Duration::from_secs(5));
    }
}

/// Scrapes every module through `exporter` between two walks of snmpd,
/// and says where a served row is missing from the scrape or comes out
/// with another type or value than the catalogue and snmpd give it. The
/// rows checked, and the problems.
fn scrape_against_walks(exporter: &Exporter, snmpd: &Snmpd) -> (usize, Vec<String>) {
    let layout = Layout::default_layout();
    let metrics = shipped_snmp_yml();
    let mut problems = Vec::new();
    let mut checked = 0;
    let mut unserved = Vec::new();
    for module in EXPORTER_MODULES {
        let root = match module.name {
            "puppet_agent" => layout.puppet().to_string(),
            _ => layout.root().to_string(),
        };
        let before = walk(snmpd, &root);
        let target = format!("127.0.0.1:{}", snmpd.udp_port());
        let body = http_get(
            exporter.port,
            &format!("/snmp?target={target}&module={}", module.name),
        );
        let after = walk(snmpd, &root);
        let (types, samples) = parse_exposition(&body);
        let pdus = samples.iter().find(|s| s.0 == "snmp_scrape_pdus_returned");
        if !pdus.is_some_and(|s| s.2 > 0.0) {
            problems.push(format!("{}: no PDUs returned:\n{body}", module.name));
        }
        // Instance index → name, as the lookup labels rows.
        let name_oid = redis_objects()
            .find(|o| o.name == generate::instance_name_label())
            .map(|o| format!("{}.", layout.object_oid(o)))
            .unwrap();
        let names: BTreeMap<u32, String> = before
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix(&name_oid)?.parse().ok()?, v.text())))
            .collect();
        for def in objects_of(module) {
            let oid = layout.object_oid(def).to_string();
            let below = format!("{oid}.");
            let rows: Vec<(&String, &Var)> = before
                .iter()
                .filter(|(k, _)| k.starts_with(&below))
                .collect();
            if rows.is_empty() {
                unserved.push(def.name); // not by this Redis or this Puppet run
                continue;
            }
            let want_type = match def.syntax {
                Syntax::Counter32 | Syntax::Counter64 => "counter",
                _ => "gauge",
            };
            let got_type = types.get(def.name).map(String::as_str);
            if got_type != Some(want_type) {
                problems.push(format!("{}: TYPE {got_type:?}, not {want_type}", def.name));
            }
            let mine: Vec<&Sample> = samples.iter().filter(|s| s.0 == def.name).collect();
            let enum_values = &metrics[module.name][def.name].enum_values;
            for (k, var) in rows {
                checked += 1;
                let suffix: Vec<u32> = k[below.len()..]
                    .split('.')
                    .map(|a| a.parse().unwrap())
                    .collect();
                let Some(key) = row_labels(def, &suffix, &names) else {
                    problems.push(format!("{k}: a row no label can name"));
                    continue;
                };
                // redisInstanceName is its own row's label too.
                let own = format!("{}=", def.name);
                let own = if key.split(',').any(|kv| kv.starts_with(&own)) {
                    ""
                } else {
                    def.name
                };
                let row: Vec<&&Sample> = mine.iter().filter(|s| key_of(&s.1, own) == key).collect();
                let later = after.get(k);
                if is_state_set(def) {
                    let on: Vec<&str> = row
                        .iter()
                        .filter(|s| s.2 == 1.0)
                        .filter_map(|s| s.1.get(def.name).map(String::as_str))
                        .collect();
                    let want: BTreeSet<&str> = [Some(var), later]
                        .into_iter()
                        .flatten()
                        .filter_map(|v| enum_values.get(&(signed(v)? as i64)))
                        .map(String::as_str)
                        .collect();
                    if row.len() != enum_values.len() || on.len() != 1 || !want.contains(on[0]) {
                        problems.push(format!("{k}: state set {row:?}, snmp {want:?}"));
                    }
                    continue;
                }
                if row.len() != 1 {
                    problems.push(format!("{k} ({key}): {} series: {row:?}", row.len()));
                    continue;
                }
                if matches!(def.syntax, Syntax::DisplayString | Syntax::OctetString) {
                    if var.ty != "STRING" || var.value.contains('\\') {
                        continue; // Hex-STRING or escapes: not the value's own text
                    }
                    let got = row[0].1.get(def.name).cloned().unwrap_or_default();
                    if got != var.text() && later.is_none_or(|l| got != l.text()) {
                        problems.push(format!("{k}: exporter {got:?}, snmp {:?}", var.text()));
                    }
                    continue;
                }
                let got = row[0].2;
                let (Some(a), b) = (signed(var), later.and_then(signed)) else {
                    problems.push(format!("{k}: snmp gave no number: {var}"));
                    continue;
                };
                let b = b.unwrap_or(a);
                // 0.21 divides nothing: the file has no scale.
                let unit = divisor(def, Flavour::V021).map_or(1.0, f64::from);
                let (lo, hi) = (a.min(b) / unit, a.max(b) / unit);
                let slack = hi.abs() * 1e-12;
                if got < lo - slack || got > hi + slack {
                    problems.push(format!("{k}: exporter {got}, snmp {a}..{b}"));
                }
            }
        }
    }
    println!("not served here, so not scraped: {}", unserved.join(" "));
    (checked, problems)
}

#[test]
fn a_live_scrape_gives_every_served_object_its_type_and_snmpgets_value() {
    let (Some(exporter), Some(_)) = (
        program(EXPORTER, "prometheus-snmp-exporter", "live scrape"),
        program("puppet", "puppet", "live scrape"),
    ) else {
        return;
    };
    let dir_ = tempfile::tempdir().unwrap();
    // maxmemory set: redisMemUsedOfMax (hundredths) is served too.
    let redis = Redis::start_with(&["maxmemory 100mb"]);
    let snmpd = Snmpd::start();
    let puppet = PuppetApply::new();
    let t = puppet.target().display().to_string();
    let manifest = format!("file {{ '{t}/a': content => \"a\\n\" }}\n");
    puppet.apply("run1", &manifest, &[]);
    redis.cli(&["SET", "k", "v"]);
    redis.cli(&["GET", "k"]);
    // An ssldir with a real CA certificate and no agent certificate:
    // puppetCertificateTable has a dated row and a missing one.
    let ssl = pki::ssldir_with_ca(dir_.path());
    let _agent = AgentConfig::new(&snmpd)
        .redis("main", &redis.address(), "")
        .puppet(&puppet, &ssl)
        .start(dir_.path());
    let left = puppet_objects()
        .find(|o| o.name == "puppetCertificateSecondsLeft")
        .map(|o| format!("{}.", Layout::default_layout().object_oid(o)))
        .unwrap();
    let ready = wait_until(Duration::from_secs(20), || {
        let s = walk(&snmpd, ".1.3.6.1.4.1.20267");
        s.get(".1.3.6.1.4.1.20267.400.3.1.1.4.1")
            .and_then(Var::number)
            == Some(1)
            && s.keys().any(|k| k.starts_with(&left))
    });
    assert!(ready, "the agent serves no Redis and Puppet data");

    let shipped = dir(Flavour::V021).join("snmp.yml");
    let (checked, problems) = scrape_against_walks(&Exporter::start(&exporter, &shipped), &snmpd);
    println!("{checked} rows checked against snmpbulkwalk");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(checked > 150, "only {checked} rows checked");

    // A copy as the generator makes it without the overrides' types: the
    // memory a counter, the instance's state a plain number.
    let good = std::fs::read_to_string(&shipped).unwrap();
    let mut broken = good.clone();
    for (name, from, to) in [
        ("redisMemUsed", "type: gauge", "type: counter"),
        ("redisInstanceState", "type: EnumAsStateSet", "type: gauge"),
    ] {
        let at = broken.find(&format!("  - name: {name}\n")).unwrap();
        let end = at + broken[at..].find(from).unwrap();
        broken.replace_range(end..end + from.len(), to);
    }
    let d = tempfile::tempdir().unwrap();
    let copy = d.path().join("snmp.yml");
    std::fs::write(&copy, broken).unwrap();
    let (_, problems) = scrape_against_walks(&Exporter::start(&exporter, &copy), &snmpd);
    let said = |name: &str| problems.iter().any(|p| p.contains(name));
    assert!(
        said("redisMemUsed:") && said("400.3.1.1.4.1"),
        "the broken copy passed: {problems:?}"
    );
}
