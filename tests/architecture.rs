//! Issues 15 and 26: data flows one way, and every file stands on the
//! ones below it.
//!
//! Every file of `src/` is a node. An edge runs from a file to each file
//! whose definitions its code names: through a `use` (`crate::…`,
//! `super::…`, `self::…`, a child module, a name another `use` bound) or
//! a path written out in the code (`crate::smi::unix_now()`). It is read
//! from the source text, comments and strings left out, and each name is
//! followed to the file that defines it (tests/importgraph). Handing a name on (`pub use`) is
//! no edge: a face (`puppet/mod.rs`) re-exports its files, and whoever
//! names a type through the face leans on the file that defines it. A glob
//! (`use super::*`) is an edge to each file that defines a name the code
//! mentions.
//!
//! Three rules hold for that graph:
//!
//! - no circle between files. A circle is a type in the file of its
//!   consumer, and a check of whole modules cannot see one inside a folder
//!   (`config` ⇄ `discovery`, `puppet/runs` ⇄ `puppet/state` and
//!   `redis/keys → poller → readings → keys` were three). Test code is left
//!   out here: a file's tests stand above the file and may use a helper
//!   that uses it (`agentx/pdu/test_support.rs`);
//! - no import up the layers ([`LAYERS`], the one statement of the order,
//!   in the words of src/lib.rs's map): a file names files of its own
//!   module or of a module in a lower layer; two modules of one layer
//!   stand apart. Test code included;
//! - what the layers allow but the design does not ([`NEVER`]).
//!
//! Each rule is also run on small broken trees that it must fail, so the
//! test can fail.

mod importgraph;

use importgraph::{circles, code_of, edge_list, Crate};
use std::path::Path;

/// The layers, from the ground up. A module names only modules of the
/// layers below its own. `main` is the binary (src/main.rs); src/lib.rs
/// declares the others (`the_layers_place_every_module_of_lib_rs`).
const LAYERS: &[(&str, &[&str])] = &[
    // Others' text made printable: what acts on a terminal is defined
    // once, and every reader of outside text (certificates' names
    // included) escapes by it.
    ("printable text", &["text"]),
    // Values that know nothing of the agent: OIDs, whether a PID runs,
    // passwords, certificates' names and dates.
    ("ground", &["oid", "process", "proc_net", "secret", "x509"]),
    // SMIv2 values, the command line, detaching from the terminal.
    ("values and the command line", &["smi", "cli", "daemon"]),
    // The catalogue every step reads, and the snapshot the agent answers
    // from; neither knows the other.
    ("catalogue and snapshot", &["metrics", "snapshot"]),
    // The protocol serves snapshots and knows no source; the thresholds
    // judge values as the catalogue places them. The settings name both
    // (the master's address, `[[alarm]]`).
    ("protocol and thresholds", &["agentx", "alarms"]),
    // Every settings type, the sources' too: it names no source.
    ("settings", &["config"]),
    // Stand on the settings and know no consumer: the sources of readings,
    // discovery (instances of this host) and logging.
    ("sources", &["redis", "puppet", "discovery", "logging"]),
    // Judge and send what the sources produce; restart them on SIGHUP.
    ("consumers", &["judge", "notify", "reload"]),
    // Only the binary reaches them. `kick` is the manager's half (run by
    // snmptrapd), beside the agent rather than in its flow.
    ("wiring", &["hub", "doctor", "kick"]),
    ("binary", &["main"]),
];

/// What the layers allow but the design does not: `(module, the modules
/// it never names, the files of those it may name all the same)`. A file
/// is written `module::file` (`config::puppet`: src/config/puppet.rs).
const NEVER: &[(&str, &[&str], &[&str])] = &[
    // The catalogue describes; it parses no command line.
    ("metrics", &["cli"], &[]),
    ("config", &["snapshot"], &[]),
    ("discovery", &["agentx", "snapshot"], &[]),
    ("redis", &["agentx"], &[]),
    // The Puppet readers take their own settings, not the agent's whole
    // configuration.
    ("puppet", &["agentx", "config"], &["config::puppet"]),
    // The protocol knows no catalogue: it serves OIDs and values.
    ("agentx", &["metrics"], &[]),
    ("notify", &["snapshot"], &[]),
    ("alarms", &["snapshot"], &[]),
    ("hub", &["agentx", "config"], &[]),
    // The judge reads what the sources report, in the observation types
    // beside their faces, never a runner: sources report facts, the judge
    // names every notification.
    (
        "judge",
        &["redis", "puppet"],
        &["redis::observation", "puppet::observation"],
    ),
    ("reload", &["agentx", "puppet", "snapshot"], &[]),
    // The kick reads the catalogue's notification names and nothing of
    // the agent's running parts; a shared ledger is reached by the agent's
    // own connection to Redis (its TLS, its peer check, its bounded
    // replies), not by its poller.
    (
        "kick",
        &[
            "agentx",
            "snapshot",
            "redis",
            "puppet",
            "notify",
            "hub",
            "alarms",
            "discovery",
        ],
        &["redis::connection", "redis::budget"],
    ),
];

/// Files that only declare modules and hand names on: what is defined is
/// defined in the files they declare.
const FACES: &[&str] = &[
    "src/redis/mod.rs",
    "src/puppet/mod.rs",
    "src/agentx/mod.rs",
    "src/agentx/pdu/mod.rs",
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

/// Every edge that runs up the layers or across one, or that a [`NEVER`]
/// rule forbids; test code included.
fn layer_problems(krate: &Crate) -> Vec<String> {
    let shipped = krate.edges(false);
    let mut problems = Vec::new();
    for ((a, b), names) in &krate.edges(true) {
        let (Some(from), Some(to)) = (krate.top(*a), krate.top(*b)) else {
            continue;
        };
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let what = format!(
            "{} names {} ({}){}",
            krate.files[*a].path,
            krate.files[*b].path,
            names.join(", "),
            if shipped.contains_key(&(*a, *b)) {
                ""
            } else {
                " in test code"
            }
        );
        if from == to {
            continue;
        }
        match (layer_of(from), layer_of(to)) {
            (None, _) => problems.push(format!("{what}: place {from} in LAYERS")),
            (_, None) => problems.push(format!("{what}: place {to} in LAYERS")),
            (Some(lf), Some(lt)) if lt > lf => problems.push(format!(
                "{what}: up the layers, from {from} ({}) to {to} ({})",
                LAYERS[lf].0, LAYERS[lt].0
            )),
            (Some(lf), Some(lt)) if lt == lf => problems.push(format!(
                "{what}: {from} and {to} share the layer {:?} and stand apart",
                LAYERS[lf].0
            )),
            _ => {}
        }
        let target = &krate.files[*b].module;
        let file = format!("{to}::{}", target.get(1).map_or("mod", String::as_str));
        for (module, never, but) in NEVER {
            if *module == from && never.contains(&to) && !but.contains(&file.as_str()) {
                problems.push(format!("{what}: {from} never names {to}"));
            }
        }
    }
    problems.sort();
    problems
}

/// The faces that define something besides their modules.
fn faces_with_definitions(krate: &Crate) -> Vec<String> {
    let mut problems = Vec::new();
    for f in &krate.files {
        if !FACES.contains(&f.path.as_str()) {
            continue;
        }
        for name in &f.defs[&f.module] {
            let mut child = f.module.clone();
            child.push(name.clone());
            if !krate.is_module(&child) {
                problems.push(format!("{} defines {name}", f.path));
            }
        }
    }
    problems.sort();
    problems
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `src/**/*.rs`, as `(src/…, text)`.
fn the_sources() -> Vec<(String, String)> {
    rust_files_under("src")
}

/// Every `DIR/**/*.rs` of the repository, as `(DIR/…, text)`, sorted.
fn rust_files_under(dir: &str) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join(dir), &mut files);
    files.sort();
    files
        .iter()
        .map(|p| {
            let rel = p
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, std::fs::read_to_string(p).unwrap())
        })
        .collect()
}

fn sources(files: &[(&str, &str)]) -> Vec<(String, String)> {
    files
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect()
}

// ---------------------------------------------------------------------------
// The tree.

#[test]
fn no_file_leans_on_itself_round_a_circle() {
    let krate = Crate::new(&the_sources());
    let circles = circles(&krate);
    assert!(
        circles.is_empty(),
        "import circles between files:\n{}",
        circles.join("\n")
    );
}

#[test]
fn no_import_runs_up_the_layers() {
    let krate = Crate::new(&the_sources());
    let problems = layer_problems(&krate);
    assert!(
        problems.is_empty(),
        "imports against the layers:\n{}",
        problems.join("\n")
    );
}

#[test]
fn every_path_into_the_crate_is_placed() {
    let krate = Crate::new(&the_sources());
    let unplaced = krate.unplaced();
    assert!(
        unplaced.is_empty(),
        "paths the checker cannot place:\n{}",
        unplaced.join("\n")
    );
}

/// The layers place every module src/lib.rs declares, each once, and no
/// other (and `main`, the binary).
#[test]
fn the_layers_place_every_module_of_lib_rs() {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let mut declared: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod ")?.strip_suffix(';'))
        .collect();
    declared.push("main");
    declared.sort();
    let mut placed: Vec<&str> = LAYERS.iter().flat_map(|(_, m)| m.iter().copied()).collect();
    placed.sort();
    assert_eq!(
        placed, declared,
        "LAYERS against src/lib.rs's `pub mod` lines"
    );
    for (module, never, but) in NEVER {
        assert!(
            layer_of(module).is_some(),
            "NEVER names {module}, which LAYERS does not place"
        );
        for target in never.iter().chain(*but) {
            let top = target.split("::").next().unwrap();
            assert!(
                layer_of(top).is_some(),
                "NEVER names {target}, which LAYERS does not place"
            );
        }
    }
}

#[test]
fn faces_only_declare() {
    let krate = Crate::new(&the_sources());
    let problems = faces_with_definitions(&krate);
    assert!(
        problems.is_empty(),
        "faces with definitions of their own:\n{}",
        problems.join("\n")
    );
}

/// Where a table is declared: each table its module lists
/// (`src/metrics/tables.rs`) is a `table!` of a family's file
/// (`pub const NAME = (`), no `TableDef` is written out by hand but the
/// macro's and its base's, and no family's file writes an OID of three or
/// more arcs (a column's OID is its entry's arcs, once per table, and its
/// own arc).
fn table_problems(files: &[(String, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    let code = |text: &str| -> Vec<String> {
        text.lines()
            .map(|l| l.split("//").next().unwrap_or("").to_string())
            .collect()
    };
    let mut declared = std::collections::BTreeSet::new();
    let mut listed = std::collections::BTreeSet::new();
    for (path, text) in files {
        let Some(file) = path.strip_prefix("src/metrics/") else {
            continue;
        };
        let lines = code(text);
        if file == "tables.rs" {
            for word in lines
                .join(" ")
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            {
                if word.ends_with("_TABLE") {
                    listed.insert(word.to_string());
                }
            }
            continue;
        }
        let family = text.contains("table! {");
        for (n, line) in lines.iter().enumerate() {
            let line = line.trim();
            if family {
                if let Some((name, _)) = line
                    .strip_prefix("pub const ")
                    .and_then(|rest| rest.split_once(" = (\""))
                {
                    declared.insert(name.to_string());
                }
                let mut rest = line;
                while let Some(at) = rest.find("&[") {
                    rest = &rest[at + 2..];
                    let inside = rest.split(']').next().unwrap_or("");
                    let arcs: Vec<&str> = inside.split(',').map(str::trim).collect();
                    if arcs.len() >= 3 && arcs.iter().all(|a| a.parse::<u32>().is_ok()) {
                        problems.push(format!(
                            "{path}:{}: an OID written out ({inside}): a table's column gives its own arc",
                            n + 1
                        ));
                    }
                }
            }
            if line.contains("TableDef {") && !matches!(file, "index.rs" | "table.rs") {
                problems.push(format!(
                    "{path}:{}: a TableDef written by hand: declare the table with table!",
                    n + 1
                ));
            }
        }
    }
    for name in listed.difference(&declared) {
        problems.push(format!("{name} is listed but no table! declares it"));
    }
    problems
}

#[test]
fn each_table_is_declared_once_by_table_macro() {
    let problems = table_problems(&the_sources());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_column_with_its_entrys_arcs_or_a_table_by_hand_fails_the_table_check() {
    let tree = sources(&[
        ("src/metrics/tables.rs", "pub const TABLES: &[TableDef] = &[ACL_TABLE, KEY_TABLE];\n"),
        (
            "src/metrics/redis_events.rs",
            "table! {\n    pub const ACL_TABLE = (\"redisAclTable\", \"redisAclEntry\", [3, 29, 1]) {}\n    pub const ACL_COLUMNS = enum AclField as Acl {\n        Count(\"redisArCount\", 5, Gauge32),\n    }\n}\nconst C: &[ObjectDef] = &[column(\"redisArUser\", &[3, 29, 1, 3], DisplayString, S)];\n",
        ),
        ("src/metrics/redis_keys.rs", "pub const KEY_TABLE: TableDef = TableDef { table: \"redisKeyTable\" };\n"),
    ]);
    assert_eq!(
        table_problems(&tree),
        [
            "src/metrics/redis_events.rs:7: an OID written out (3, 29, 1, 3): a table's column gives its own arc",
            "src/metrics/redis_keys.rs:1: a TableDef written by hand: declare the table with table!",
            "KEY_TABLE is listed but no table! declares it",
        ]
    );
}

/// The longest a test program's file may be, and a function of the tests.
const MAX_TEST_FILE_LINES: usize = 1200;
const MAX_TEST_FN_LINES: usize = 200;

/// Every `tests/**/*.rs`, as `(tests/…, text)`.
fn the_tests() -> Vec<(String, String)> {
    rust_files_under("tests")
}

/// The functions of `text`, as `(name, first line, lines)`: from the line
/// of `fn` to the `}` at the same indentation. A function whose body is
/// on its first line, or that has none (a trait's), is one line.
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let code = line.trim_start();
        let indent = &line[..line.len() - code.len()];
        let Some(at) = code.find("fn ") else {
            continue;
        };
        let before = &code[..at];
        let item = before.split_whitespace().all(|w| {
            w == "pub" || w.starts_with("pub(") || ["async", "const", "unsafe"].contains(&w)
        });
        let name: String = code[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !item || name.is_empty() || code.starts_with("//") {
            continue;
        }
        let end = if code.trim_end().ends_with('}') || code.trim_end().ends_with(';') {
            i
        } else {
            let close = format!("{indent}}}");
            (i + 1..lines.len())
                .find(|&j| lines[j] == close)
                .unwrap_or(i)
        };
        out.push((name, i + 1, end - i + 1));
    }
    out
}

/// Test files over [`MAX_TEST_FILE_LINES`], and test functions over
/// [`MAX_TEST_FN_LINES`].
fn size_problems(files: &[(String, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    for (path, text) in files {
        let lines = text.lines().count();
        if lines > MAX_TEST_FILE_LINES {
            problems.push(format!(
                "{path}: {lines} lines, over {MAX_TEST_FILE_LINES}: split it along its headings"
            ));
        }
        for (name, at, len) in functions(text) {
            if len > MAX_TEST_FN_LINES {
                problems.push(format!(
                    "{path}:{at}: {name} is {len} lines, over {MAX_TEST_FN_LINES}: make it named steps"
                ));
            }
        }
    }
    problems
}

#[test]
fn test_files_and_functions_stay_short() {
    let problems = size_problems(&the_tests());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_long_file_or_function_fails_the_size_check() {
    let long_body = "    step();\n".repeat(MAX_TEST_FN_LINES);
    let tree = sources(&[
        ("tests/big.rs", &"// a line\n".repeat(MAX_TEST_FILE_LINES + 1)),
        (
            "tests/long.rs",
            &format!("#[test]\nfn long() {{\n{long_body}}}\n\nfn short() {{}}\ntrait T {{\n    fn f();\n}}\n"),
        ),
    ]);
    assert_eq!(
        size_problems(&tree),
        [
            format!(
                "tests/big.rs: {} lines, over 1200: split it along its headings",
                MAX_TEST_FILE_LINES + 1
            ),
            format!(
                "tests/long.rs:2: long is {} lines, over 200: make it named steps",
                MAX_TEST_FN_LINES + 2
            ),
        ]
    );
}

// ---------------------------------------------------------------------------
// The checker itself: what it must see, what it must not, and broken trees
// it must fail.

#[test]
fn the_reader_finds_imports_and_skips_comments_and_strings() {
    let krate = Crate::new(&sources(&[
        ("src/lib.rs", "pub mod hub;\npub mod oid;\npub mod redis;\npub mod smi;\n"),
        ("src/oid.rs", "pub struct Oid;\n"),
        ("src/smi.rs", "pub fn unix_now() -> u64 { 0 }\npub enum Value { Int(i64) }\n"),
        ("src/hub.rs", "/// see crate::oid::Oid\nuse crate::redis::poller::Poller;\n// crate::redis::keys::KeyCheck\nfn f(p: Poller) -> &'static str { let x = crate::smi::unix_now(); redis!(); \"crate::oid::Oid\" }\n"),
        ("src/redis/mod.rs", "pub mod keys;\npub mod poller;\npub use poller::Poller;\n"),
        ("src/redis/keys.rs", "pub struct KeyCheck;\n#[cfg(test)]\nmod tests {\n    use super::*;\n    mod inner { use super::super::KeyCheck; }\n}\n"),
        ("src/redis/poller.rs", "use super::{keys::{self, KeyCheck}};\nuse crate::smi::*;\npub struct Poller(KeyCheck, Value);\nfn g() { keys::KeyCheck; }\n"),
    ]));
    assert_eq!(
        edge_list(&krate),
        [
            "src/hub.rs -> src/redis/poller.rs: Poller",
            "src/hub.rs -> src/smi.rs: unix_now",
            "src/redis/poller.rs -> src/redis/keys.rs: KeyCheck",
            "src/redis/poller.rs -> src/smi.rs: Value",
        ],
        "a face's `pub use` is no edge; a test module's `use super::*` is its own file; \
         a macro named like a module is not the module"
    );
    assert!(krate.unplaced().is_empty(), "{:?}", krate.unplaced());
    // And the real tree has edges to check.
    let real = Crate::new(&the_sources());
    let edges = edge_list(&real);
    assert!(
        edges
            .iter()
            .any(|e| e.starts_with("src/hub.rs -> src/notify.rs")),
        "{edges:#?}"
    );
}

#[test]
fn a_circle_between_files_fails_the_checker() {
    // The Redis circle as it was: keys borrowed the poller's error words.
    let krate = Crate::new(&sources(&[
        ("src/lib.rs", "pub mod redis;\n"),
        ("src/redis/mod.rs", "pub mod keys;\npub mod poller;\npub mod readings;\n"),
        ("src/redis/keys.rs", "use super::poller::describe;\npub struct KeyReport;\npub struct KeyCheck;\nfn f() -> String { describe() }\n"),
        ("src/redis/poller.rs", "use super::keys::KeyCheck;\nuse super::readings::instance_part;\npub fn describe() -> String { String::new() }\n"),
        ("src/redis/readings.rs", "pub fn instance_part(r: &super::keys::KeyReport) {}\n"),
    ]));
    assert_eq!(
        circles(&krate),
        [
            "src/redis/keys.rs → src/redis/poller.rs (describe) → src/redis/keys.rs (KeyCheck); \
          in the same knot: src/redis/readings.rs"
        ]
    );
    // Through a glob and a face: config/mod.rs and a file it declares.
    let krate = Crate::new(&sources(&[
        ("src/lib.rs", "pub mod config;\n"),
        ("src/config/mod.rs", "mod instance;\npub use instance::*;\npub fn absolute() {}\npub struct Config { pub instances: Vec<RedisInstance> }\n"),
        ("src/config/instance.rs", "use super::*;\npub struct RedisInstance;\nfn f() { absolute() }\n"),
    ]));
    assert_eq!(
        circles(&krate),
        ["src/config/mod.rs → src/config/instance.rs (RedisInstance) → src/config/mod.rs (absolute)"]
    );
    // No circles: an enum's variant that shares a type's name is not a
    // mention of the type; a macro-made type is found where the macro is
    // called; a file's tests may use a helper that uses the file.
    let krate = Crate::new(&sources(&[
        ("src/lib.rs", "pub mod agentx;\npub mod metrics;\n"),
        ("src/metrics/mod.rs", "macro_rules! enumeration { ($name:ident { $($v:ident,)+ }) => { pub enum $name { $($v,)+ } }; }\nmod opennms;\nmod redis_server;\npub use opennms::*;\npub use redis_server::*;\npub struct ObjectDef;\npub enum PuppetField {\n    #[default]\n    ResourceType,\n    Other(u8),\n}\n"),
        ("src/metrics/opennms.rs", "use super::*;\npub struct ResourceType;\nfn f(d: &ObjectDef) {}\n"),
        ("src/metrics/redis_server.rs", "enumeration! {\n    Role { Master, Replica, }\n}\n"),
        ("src/agentx/mod.rs", "pub mod pdu;\n"),
        ("src/agentx/pdu/mod.rs", "pub mod decode;\n#[cfg(test)]\nmod test_support;\n"),
        ("src/agentx/pdu/decode.rs", "pub fn parse_header() {}\nfn g(r: crate::metrics::Role) {}\n#[cfg(test)]\nmod tests {\n    use crate::agentx::pdu::test_support::head;\n    fn t() { head() }\n}\n"),
        ("src/agentx/pdu/test_support.rs", "use super::decode::parse_header;\npub fn head() { parse_header() }\n"),
    ]));
    assert_eq!(circles(&krate), Vec::<String>::new());
    assert_eq!(
        edge_list(&krate),
        [
            "src/agentx/pdu/decode.rs -> src/agentx/pdu/test_support.rs: head",
            "src/agentx/pdu/decode.rs -> src/metrics/redis_server.rs: Role",
            "src/agentx/pdu/test_support.rs -> src/agentx/pdu/decode.rs: parse_header",
            "src/metrics/opennms.rs -> src/metrics/mod.rs: ObjectDef",
            "src/metrics/redis_server.rs -> src/metrics/mod.rs: enumeration",
        ]
    );
    // But test code is held to the layers (agentx never names metrics).
    assert_eq!(
        layer_problems(&krate),
        ["src/agentx/pdu/decode.rs names src/metrics/redis_server.rs (Role): agentx never names metrics"]
    );
}

#[test]
fn an_import_up_the_layers_fails_the_checker() {
    let krate = Crate::new(&sources(&[
        (
            "src/lib.rs",
            "pub mod config;\npub mod discovery;\npub mod oid;\npub mod hub;\n",
        ),
        (
            "src/oid.rs",
            "pub struct Oid;\nfn f(h: &crate::hub::Hub) {}\n",
        ),
        ("src/hub.rs", "pub struct Hub(crate::oid::Oid);\n"),
        (
            "src/config/mod.rs",
            "use crate::discovery::DiscoverySettings;\npub struct Config;\n",
        ),
        ("src/discovery.rs", "pub struct DiscoverySettings;\n"),
    ]));
    assert_eq!(
        layer_problems(&krate),
        [
            "src/config/mod.rs names src/discovery.rs (DiscoverySettings): up the layers, from config (settings) to discovery (sources)",
            "src/oid.rs names src/hub.rs (Hub): up the layers, from oid (ground) to hub (wiring)",
        ]
    );
    assert_eq!(
        circles(&krate),
        ["src/oid.rs → src/hub.rs (Hub) → src/oid.rs (Oid)"]
    );
    // Across a layer, and against a NEVER rule.
    let krate = Crate::new(&sources(&[
        (
            "src/lib.rs",
            "pub mod config;\npub mod puppet;\npub mod redis;\n",
        ),
        ("src/redis/mod.rs", "pub struct Poller;\n"),
        (
            "src/puppet/mod.rs",
            "fn f(p: crate::redis::Poller, c: crate::config::Config, d: crate::config::PuppetPaths) {}\n",
        ),
        (
            "src/config/mod.rs",
            "mod puppet;\npub use puppet::*;\npub struct Config;\n",
        ),
        ("src/config/puppet.rs", "pub struct PuppetPaths;\n"),
    ]));
    assert_eq!(
        layer_problems(&krate),
        [
            "src/puppet/mod.rs names src/config/mod.rs (Config): puppet never names config",
            "src/puppet/mod.rs names src/redis/mod.rs (Poller): puppet and redis share the layer \"sources\" and stand apart",
        ]
    );
    assert_eq!(
        faces_with_definitions(&krate),
        [
            "src/puppet/mod.rs defines f",
            "src/redis/mod.rs defines Poller"
        ]
    );
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

/// The graph itself, for a person: `cargo test --test architecture --
/// --ignored --nocapture the_graph` prints every edge with its names.
#[test]
#[ignore = "prints the graph; run by hand"]
fn the_graph() {
    for edge in edge_list(&Crate::new(&the_sources())) {
        println!("{edge}");
    }
}

// ---------------------------------------------------------------------------
// Sources report facts; the poller is a list of watches.

/// The notifications' typed names (the catalogue's): a source never names
/// one, the judge does.
const NOTIFICATION_TYPES: &[&str] = &["RedisEvent", "PuppetEvent"];

/// The folders of the sources, whose files report facts.
const SOURCES: &[&str] = &["src/redis/", "src/puppet/"];

/// Each source file that names a notification type in its code (comments
/// and strings aside), with the line.
fn sources_naming_notifications(files: &[(String, String)]) -> Vec<String> {
    let mut found = Vec::new();
    for (path, text) in files {
        if !SOURCES.iter().any(|dir| path.starts_with(dir)) {
            continue;
        }
        for (n, line) in code_of(text).lines().enumerate() {
            let words = line.split(|c: char| !(c.is_alphanumeric() || c == '_'));
            if let Some(name) = words.into_iter().find(|w| NOTIFICATION_TYPES.contains(w)) {
                found.push(format!("{path}:{}: names {name}", n + 1));
            }
        }
    }
    found
}

/// Each function of `text` (its code, comments and strings aside, before
/// the tests) and its length in lines, from `fn` to its closing brace.
fn function_lengths(text: &str) -> Vec<(String, usize)> {
    let code = code_of(text);
    let code = code.split("#[cfg(test)]").next().unwrap_or("");
    let lines: Vec<&str> = code.lines().collect();
    let mut found = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let Some(at) = line.find("fn ") else {
            continue;
        };
        if at > 0 && !line[..at].ends_with(' ') {
            continue;
        }
        let name: String = line[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // The body: from the first `{` after the name to its match (a
        // declaration without a body, ending in `;`, has none).
        let mut depth = 0usize;
        let mut opened = false;
        'body: for (end, text) in lines.iter().enumerate().skip(start) {
            let from = if end == start { at } else { 0 };
            for c in text[from..].chars() {
                match c {
                    ';' if !opened => break 'body,
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' if opened => {
                        depth -= 1;
                        if depth == 0 {
                            found.push((name.clone(), end - start + 1));
                            break 'body;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    found
}

/// Lines of code of `text` before its tests: neither blank nor comment.
fn code_lines(text: &str) -> usize {
    let code = code_of(text);
    let code = code.split("#[cfg(test)]").next().unwrap_or("");
    code.lines().filter(|l| !l.trim().is_empty()).count()
}

/// The poller's limits: under this many lines of code, no function longer.
const POLLER_MAX_CODE_LINES: usize = 400;
const POLLER_MAX_FUNCTION_LINES: usize = 50;

/// What keeps the poller a list of watches: its size, its functions'
/// lengths, each watch named on one line of it (its place in the list),
/// and no watch's command asked by it.
fn poller_problems(files: &[(String, String)]) -> Vec<String> {
    let text = |path: &str| {
        files
            .iter()
            .find(|(p, _)| p == path)
            .map_or("", |(_, t)| t.as_str())
    };
    let poller = text("src/redis/poller.rs");
    let mut problems = Vec::new();
    let lines = code_lines(poller);
    if lines >= POLLER_MAX_CODE_LINES {
        problems.push(format!(
            "poller.rs has {lines} lines of code (under {POLLER_MAX_CODE_LINES})"
        ));
    }
    for (name, length) in function_lengths(poller) {
        if length > POLLER_MAX_FUNCTION_LINES {
            problems.push(format!(
                "poller.rs: fn {name} has {length} lines (at most {POLLER_MAX_FUNCTION_LINES})"
            ));
        }
    }
    let mut watches = Vec::new();
    for (path, source) in files.iter().filter(|(p, _)| p.starts_with("src/redis/")) {
        for line in code_of(source).lines() {
            if let Some(rest) = line.trim().strip_prefix("impl Watch for ") {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                watches.push((path.clone(), name));
            }
        }
    }
    if watches.is_empty() {
        problems.push("no `impl Watch for` under src/redis".into());
    }
    let poller_code = code_of(poller);
    for (path, watch) in &watches {
        let naming = poller_code
            .lines()
            .filter(|l| {
                l.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|w| w == watch)
            })
            .count();
        if naming != 1 {
            problems.push(format!(
                "poller.rs names the watch {watch} ({path}) on {naming} lines: one, its place in the list"
            ));
        }
    }
    for command in ["\"CLIENT\"", "\"CKQUORUM\"", "\"ACL\""] {
        if poller.contains(command) {
            problems.push(format!("poller.rs asks {command}: a watch's to ask"));
        }
    }
    problems
}

#[test]
fn no_source_names_a_notification() {
    let found = sources_naming_notifications(&the_sources());
    assert!(
        found.is_empty(),
        "sources report facts; the judge names the notifications:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_poller_is_a_list_of_watches() {
    let problems = poller_problems(&the_sources());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_source_naming_a_notification_and_a_long_poller_fail_the_checks() {
    let named = sources(&[
        (
            "src/redis/failover.rs",
            "// RedisEvent in a comment\nuse crate::metrics::RedisEvent;\nfn f() -> &'static str { \"PuppetEvent\" }\n",
        ),
        ("src/judge/redis.rs", "use crate::metrics::RedisEvent;\n"),
    ]);
    assert_eq!(
        sources_naming_notifications(&named),
        ["src/redis/failover.rs:2: names RedisEvent"]
    );
    let long_fn = format!(
        "fn long() {{\n{}}}\n",
        "    let _ = 1;\n".repeat(POLLER_MAX_FUNCTION_LINES)
    );
    let listed = "fn watches() { vec![Box::new(super::acl_log::AclWatch::of(i))] }\nfn again() { AclWatch::of(i); }\nfn ask() { client.optional(\"CLIENT\", &[\"LIST\"]); }\n";
    let broken = sources(&[
        ("src/redis/poller.rs", format!("{long_fn}{listed}").as_str()),
        (
            "src/redis/watch.rs",
            "impl Watch for AclWatch {}\nimpl Watch for KeyCheck {}\n",
        ),
    ]);
    assert_eq!(
        poller_problems(&broken),
        [
            format!("poller.rs: fn long has {} lines (at most {POLLER_MAX_FUNCTION_LINES})", POLLER_MAX_FUNCTION_LINES + 2),
            "poller.rs names the watch AclWatch (src/redis/watch.rs) on 2 lines: one, its place in the list".to_string(),
            "poller.rs names the watch KeyCheck (src/redis/watch.rs) on 0 lines: one, its place in the list".to_string(),
            "poller.rs asks \"CLIENT\": a watch's to ask".to_string(),
        ]
    );
    let many = "fn f() {}\n".repeat(POLLER_MAX_CODE_LINES);
    let big = sources(&[("src/redis/poller.rs", many.as_str())]);
    assert!(poller_problems(&big)
        .iter()
        .any(|p| p.starts_with(&format!("poller.rs has {POLLER_MAX_CODE_LINES} lines"))));
}
