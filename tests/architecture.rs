//! Issue 15: data flows one way, and no module imports back up. Read from
//! the source files (code only, comments left out): which top-level
//! modules of the crate each module names with `crate::`.
//!
//! ```text
//!  base:      oid, smi, process, metrics (the catalogue), snapshot
//!  settings:  secret, cli, config, discovery, logging, daemon
//!  sources:   redis, puppet            (produce readings; know no consumer)
//!  protocol:  agentx                   (serves snapshots; knows no source)
//!  consumers: notify ─▶ hub            (notify judges, hub wires readings)
//!  reload:    config ─▶ redis pollers   (SIGHUP; knows no hub: main.rs wires it)
//!  tools:     doctor                   (reads everything; nothing reads it)
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// For each module, the modules it must not name.
const FORBIDDEN: &[(&str, &[&str])] = &[
    (
        "oid",
        &[
            "smi", "metrics", "snapshot", "config", "redis", "puppet", "notify", "hub", "agentx",
            "doctor",
        ],
    ),
    (
        "smi",
        &[
            "metrics", "snapshot", "config", "redis", "puppet", "notify", "hub", "agentx", "doctor",
        ],
    ),
    (
        "process",
        &[
            "config", "redis", "puppet", "notify", "hub", "agentx", "doctor",
        ],
    ),
    (
        "metrics",
        &[
            "snapshot", "config", "cli", "redis", "puppet", "notify", "hub", "agentx", "doctor",
        ],
    ),
    (
        "snapshot",
        &[
            "metrics", "config", "redis", "puppet", "notify", "hub", "agentx", "doctor",
        ],
    ),
    ("config", &["redis", "notify", "hub", "doctor", "snapshot"]),
    (
        "discovery",
        &[
            "redis", "puppet", "notify", "hub", "agentx", "doctor", "snapshot",
        ],
    ),
    ("redis", &["puppet", "notify", "hub", "agentx", "doctor"]),
    (
        "puppet",
        &["redis", "notify", "hub", "agentx", "doctor", "config"],
    ),
    (
        "agentx",
        &[
            "metrics", "config", "redis", "puppet", "notify", "hub", "doctor",
        ],
    ),
    ("notify", &["hub", "doctor", "snapshot"]),
    // The agent's own thresholds judge values as the catalogue places
    // them; the notifier runs them, the configuration builds them.
    (
        "alarms",
        &[
            "snapshot", "config", "redis", "puppet", "notify", "hub", "agentx", "doctor",
        ],
    ),
    ("hub", &["doctor", "agentx", "config"]),
    (
        "reload",
        &["doctor", "agentx", "notify", "puppet", "snapshot"],
    ),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a source file belongs to (`src/redis/poller.rs`:
/// `redis`), `None` for lib.rs and main.rs.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib" && name != "main").then(|| name.to_string())
}

/// The crate's modules a file's code names (`crate::X`), comments left out.
fn named_modules(text: &str) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                named.insert(name);
            }
            rest = after;
        }
    }
    named
}

/// Module → the modules it names, with the file that names each.
fn imports() -> BTreeMap<String, BTreeMap<String, String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut imports: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for file in files {
        let Some(module) = module_of(&src, &file) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        for named in named_modules(&text) {
            if named != module {
                imports
                    .entry(module.clone())
                    .or_default()
                    .entry(named)
                    .or_insert_with(|| file.display().to_string());
            }
        }
    }
    imports
}

#[test]
fn no_module_imports_back_up() {
    let imports = imports();
    let mut problems = Vec::new();
    for (module, forbidden) in FORBIDDEN {
        assert!(
            imports.contains_key(*module) || *module == "oid" || *module == "process",
            "no module {module} found: update FORBIDDEN"
        );
        for (named, file) in imports.get(*module).into_iter().flatten() {
            if forbidden.contains(&named.as_str()) {
                problems.push(format!("{module} names {named} ({file})"));
            }
        }
    }
    // Only main.rs wires the hub and runs the doctor.
    for (module, named) in &imports {
        for target in ["hub", "doctor"] {
            if let Some(file) = named.get(target) {
                problems.push(format!("{module} names {target} ({file})"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "imports that go back up:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_reader_finds_imports_and_skips_comments() {
    let text = "use crate::redis::poller::Poller;\n// see crate::hub\nlet x = crate::smi::unix_now(); /// crate::doctor\n";
    let named: Vec<String> = named_modules(text).into_iter().collect();
    assert_eq!(named, ["redis", "smi"]);
    // And the real tree has imports to check.
    assert!(imports()
        .get("hub")
        .is_some_and(|n| n.contains_key("notify")));
}

/// Every test program that starts a program (through `Command`, or the
/// harness `testkit` (tests/support) or tests/mibtool, which do) is built only with
/// the `system-tests` feature, so a plain `cargo test` on a machine without
/// snmpd, redis-server, … runs the rest and lists these as left out
/// (tests/without_system_tests.rs).
#[test]
fn test_programs_that_start_programs_carry_the_system_tests_gate() {
    const GATE: &str = "#![cfg(feature = \"system-tests\")]";
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut ungated = Vec::new();
    let mut gated = 0;
    for entry in std::fs::read_dir(&tests).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let starts_programs = text.lines().any(|l| {
            let l = l.trim_start();
            l.contains("testkit::") || l.starts_with("mod mibtool;") || l.contains("Command::new")
        });
        let has_gate = text.lines().any(|l| l.trim() == GATE);
        // This file names the markers it looks for; the gate's stand-in
        // is the one program that must build without the feature.
        let exempt = ["architecture.rs", "without_system_tests.rs"];
        if starts_programs && !has_gate && !exempt.iter().any(|f| path.ends_with(f)) {
            ungated.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
        gated += usize::from(has_gate);
    }
    assert!(
        gated > 10,
        "only {gated} gated test programs found in {}",
        tests.display()
    );
    assert!(
        ungated.is_empty(),
        "start programs but lack `{GATE}`: {ungated:?}"
    );
}
