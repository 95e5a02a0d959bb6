//! Issues 15 and 26: data flows one way, and every file stands on the
//! ones below it.
//!
//! Every file of `src/` is a node. An edge runs from a file to each file
//! whose definitions its code names: through a `use` (`crate::…`,
//! `super::…`, `self::…`, a child module, a name another `use` bound) or
//! a path written out in the code (`crate::smi::unix_now()`). It is read
//! from the source text, comments and strings left out, and each name is
//! followed to the file that defines it. Handing a name on (`pub use`) is
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

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use std::path::Path;

/// The layers, from the ground up. A module names only modules of the
/// layers below its own. `main` is the binary (src/main.rs); src/lib.rs
/// declares the others (`the_layers_place_every_module_of_lib_rs`).
const LAYERS: &[(&str, &[&str])] = &[
    // Values that know nothing of the agent: OIDs, whether a PID runs,
    // passwords.
    ("ground", &["oid", "process", "secret"]),
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
    ("consumers", &["notify", "reload"]),
    // Only the binary reaches them.
    ("wiring", &["hub", "doctor"]),
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
    ("reload", &["agentx", "puppet", "snapshot"], &[]),
];

/// Files that only declare modules and hand names on: what is defined is
/// defined in the files they declare.
const FACES: &[&str] = &[
    "src/redis/mod.rs",
    "src/puppet/mod.rs",
    "src/agentx/mod.rs",
    "src/agentx/pdu/mod.rs",
];

// ---------------------------------------------------------------------------
// Reading a file: its code without comments, strings and lifetimes.

/// `text` with comments, string and character literals and lifetimes
/// blanked out (lines kept), so that nothing but code is read.
fn code_of(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut i = 0;
    while i < c.len() {
        let at = |k: usize| c.get(k).copied().unwrap_or('\0');
        if c[i] == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if ident(c[i]) && !c[i].is_ascii_digit() && (i == 0 || !ident(c[i - 1])) {
            let start = i;
            while i < c.len() && ident(c[i]) {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let hashes = c[i..].iter().take_while(|&&h| h == '#').count();
            if (word == "r" || word == "br") && at(i + hashes) == '"' {
                // A raw string: up to `"` and as many `#`.
                word.chars().for_each(|ch| blank(&mut out, ch));
                let mut k = i + hashes + 1;
                while k < c.len() && !(c[k] == '"' && (1..=hashes).all(|h| at(k + h) == '#')) {
                    k += 1;
                }
                let end = (k + 1 + hashes).min(c.len());
                c[i..end].iter().for_each(|&ch| blank(&mut out, ch));
                i = end;
            } else if word == "b" && (at(i) == '"' || at(i) == '\'') {
                out.push(' ');
            } else {
                out.push_str(&word);
            }
        } else if c[i] == '"' {
            blank(&mut out, c[i]);
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    blank(&mut out, c[i]);
                    i += 1;
                }
                if i < c.len() {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
            if i < c.len() {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '\'' {
            // A character literal ('a', '\n', '\u{1b}') or a lifetime ('a).
            let end = if at(i + 1) == '\\' {
                (i + 3..c.len()).find(|&k| c[k] == '\'').map(|k| k + 1)
            } else if at(i + 2) == '\'' {
                Some(i + 3)
            } else {
                None
            };
            let end = end.unwrap_or_else(|| {
                let mut k = i + 1;
                while k < c.len() && ident(c[k]) {
                    k += 1;
                }
                k
            });
            c[i..end].iter().for_each(|&ch| blank(&mut out, ch));
            i = end;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// Identifiers, `::`, and every other character of code as a token of its
/// own; numbers become `0`.
fn tokens(code: &str) -> Vec<String> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
        } else if ch.is_alphanumeric() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            out.push(if ch.is_ascii_digit() {
                "0".into()
            } else {
                word
            });
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push("::".into());
            i += 2;
        } else {
            out.push(ch.to_string());
            i += 1;
        }
    }
    out
}

fn is_ident(t: &str) -> bool {
    t.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// A `use` of a file, one path each (`use a::{b, c}` is two).
#[derive(Debug, Clone)]
struct Use {
    /// The module it is written in (a file's, or an inline `mod`'s).
    scope: Vec<String>,
    /// Its segments; a glob ends with `*`.
    path: Vec<String>,
    /// The name it binds (the last segment, or what `as` says).
    name: String,
    public: bool,
    /// Written in test code (`#[cfg(test)]`).
    test: bool,
}

/// What the checker reads of one file.
#[derive(Debug, Default)]
struct FileFacts {
    path: String,
    module: Vec<String>,
    /// Module (the file's own, or an inline one) → the names it defines.
    defs: BTreeMap<Vec<String>, BTreeSet<String>>,
    /// Module → the `macro_rules!` macros it defines.
    macros: BTreeMap<Vec<String>, BTreeSet<String>>,
    /// Inline modules (`mod tests { … }`).
    inline: BTreeSet<Vec<String>>,
    /// Modules declared under `#[cfg(test)]`, inline or in a file.
    test_modules: BTreeSet<Vec<String>>,
    uses: Vec<Use>,
    /// Paths written in the code (`crate::smi::unix_now`): the module they
    /// are written in, the segments, and whether in test code.
    paths: Vec<(Vec<String>, Vec<String>, bool)>,
    /// Identifiers the code mentions outside its `use`s: in shipped code,
    /// and in test code.
    mentions: BTreeSet<String>,
    test_mentions: BTreeSet<String>,
    /// Macros called (`name!`): the module they are called in, the name,
    /// and whether in test code. A `macro_rules!` macro is seen by the
    /// modules declared after it, with no `use`.
    macro_calls: BTreeSet<(Vec<String>, String, bool)>,
}

/// The module a file stands for: `src/redis/keys.rs` is `redis::keys`,
/// `src/redis/mod.rs` is `redis`, `src/lib.rs` the crate; `src/main.rs`
/// is the binary, `main`.
fn module_of(path: &str) -> Vec<String> {
    let rel = path.strip_prefix("src/").unwrap_or(path);
    let rel = rel.strip_suffix(".rs").unwrap_or(rel);
    let mut parts: Vec<String> = rel.split('/').map(String::from).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// Parse the `use` tree at `t[i..]` (after `prefix`): the paths it names,
/// each with the name it binds. Returns the index where the tree ends.
fn use_tree(
    t: &[String],
    mut i: usize,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, String)>,
) -> usize {
    let mut path = prefix.to_vec();
    while i < t.len() {
        match t[i].as_str() {
            "::" => i += 1,
            "{" => {
                i += 1;
                loop {
                    i = use_tree(t, i, &path, out);
                    match t.get(i).map(String::as_str) {
                        Some(",") => i += 1,
                        Some("}") => return i + 1,
                        _ => return i,
                    }
                    if t.get(i).map(String::as_str) == Some("}") {
                        return i + 1;
                    }
                }
            }
            "*" => {
                path.push("*".into());
                out.push((path, String::new()));
                return i + 1;
            }
            "self" if !prefix.is_empty() && path.len() == prefix.len() => {
                // `{self, …}`: the module itself.
                let name = path.last().cloned().unwrap_or_default();
                out.push((path, name));
                return i + 1;
            }
            "as" => {
                let name = t.get(i + 1).cloned().unwrap_or_default();
                out.push((path, name));
                return i + 2;
            }
            "," | "}" | ";" => {
                if path.len() > prefix.len() {
                    let name = path.last().cloned().unwrap_or_default();
                    out.push((path, name));
                }
                return i;
            }
            word => {
                path.push(word.to_string());
                i += 1;
            }
        }
    }
    i
}

const ITEM_WORDS: &[&str] = &[
    "struct", "enum", "fn", "const", "static", "type", "trait", "union",
];

/// What a brace opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Brace {
    /// A module-level macro's body (`enumeration! { … }`): what it holds
    /// are the module's items.
    Macro,
    /// An enum's variants: their names are definitions, not mentions.
    Enum,
    Other,
}

/// Whether `t[..i]` ends with `#[cfg(test)]`, `pub` or `pub(crate)` left
/// out: the item at `i` is test code.
fn under_cfg_test(t: &[String], mut i: usize) -> bool {
    if i >= 1 && t[i - 1] == "pub" {
        i -= 1;
    } else if i >= 4 && t[i - 1] == ")" && t[i - 4] == "pub" {
        i -= 4;
    }
    let attr = ["#", "[", "cfg", "(", "test", ")", "]"];
    i >= attr.len() && t[i - attr.len()..i].iter().zip(attr).all(|(a, b)| a == b)
}

/// Whether the brace at `t[i]` opens an enum's variants (`pub enum
/// Name<T> {`).
fn opens_enum(t: &[String], i: usize) -> bool {
    t[..i]
        .iter()
        .rev()
        .take(16)
        .take_while(|w| !matches!(w.as_str(), "{" | "}" | ";"))
        .any(|w| w == "enum")
}

fn read_file(path: &str, text: &str) -> FileFacts {
    let t = tokens(&code_of(text));
    let module = module_of(path);
    let mut facts = FileFacts {
        path: path.to_string(),
        module: module.clone(),
        ..FileFacts::default()
    };
    facts.defs.entry(module.clone()).or_default();
    // The modules the code is in: (module, the brace depth of its items,
    // test code).
    let mut scopes: Vec<(Vec<String>, usize, bool)> = vec![(module, 0, false)];
    let mut braces: Vec<Brace> = Vec::new();
    // Braces open, a macro's left out.
    let mut depth = 0usize;
    let mut i = 0;
    while i < t.len() {
        let (scope, scope_depth, test) = scopes.last().cloned().unwrap();
        let word = t[i].as_str();
        let next = t.get(i + 1).map(String::as_str).unwrap_or("");
        let prev = if i > 0 { t[i - 1].as_str() } else { "" };
        let mut defines = |name: &str| {
            facts
                .defs
                .entry(scope.clone())
                .or_default()
                .insert(name.to_string());
        };
        match word {
            "{" => {
                // `enumeration! { Name { … } }`: a block named at the top
                // of a module-level macro is a type the macro makes.
                if braces.last() == Some(&Brace::Macro) && depth == scope_depth && is_ident(prev) {
                    defines(prev);
                }
                let enum_body = opens_enum(&t, i);
                let brace = if prev == "!" {
                    Brace::Macro
                } else if enum_body {
                    Brace::Enum
                } else {
                    Brace::Other
                };
                braces.push(brace);
                if brace != Brace::Macro {
                    depth += 1;
                }
            }
            "}" => {
                if braces.pop().is_some_and(|b| b != Brace::Macro) {
                    depth = depth.saturating_sub(1);
                }
                while scopes.len() > 1 && scopes.last().unwrap().1 > depth {
                    scopes.pop();
                }
            }
            "use" => {
                let public = prev == "pub" || (prev == ")" && i >= 4 && t[i - 4] == "pub");
                let mut found = Vec::new();
                let mut end = use_tree(&t, i + 1, &[], &mut found);
                while end < t.len() && t[end] != ";" {
                    end += 1;
                }
                for (path, name) in found {
                    facts.uses.push(Use {
                        scope: scope.clone(),
                        path,
                        name,
                        public,
                        test,
                    });
                }
                i = end + 1;
                continue;
            }
            "mod" if is_ident(next) => {
                defines(next);
                let mut inner = scope.clone();
                inner.push(next.to_string());
                let test_module = test || under_cfg_test(&t, i);
                if test_module {
                    facts.test_modules.insert(inner.clone());
                }
                if t.get(i + 2).map(String::as_str) == Some("{") {
                    facts.inline.insert(inner.clone());
                    facts.defs.entry(inner.clone()).or_default();
                    braces.push(Brace::Other);
                    depth += 1;
                    scopes.push((inner, depth, test_module));
                    i += 3;
                    continue;
                }
            }
            "macro_rules" if next == "!" && depth == scope_depth => {
                if let Some(name) = t.get(i + 2) {
                    defines(name);
                    facts
                        .macros
                        .entry(scope.clone())
                        .or_default()
                        .insert(name.clone());
                }
            }
            w if ITEM_WORDS.contains(&w)
                && depth == scope_depth
                && is_ident(next)
                && next != "_"
                && !(w == "const" && matches!(next, "fn" | "unsafe" | "async")) =>
            {
                defines(next);
            }
            _ => {}
        }
        // A path written out: `a::b::c` (not the tail of a longer one).
        if is_ident(word) && next == "::" && prev != "::" {
            let mut segs = vec![word.to_string()];
            let mut k = i + 1;
            while t.get(k).map(String::as_str) == Some("::")
                && t.get(k + 1).is_some_and(|s| is_ident(s))
            {
                segs.push(t[k + 1].clone());
                k += 2;
            }
            if segs.len() >= 2 {
                facts.paths.push((scope.clone(), segs, test));
            }
        }
        if is_ident(word) && next == "!" && prev != "macro_rules" {
            facts
                .macro_calls
                .insert((scope.clone(), word.to_string(), test));
        }
        // A mention: not a field or method (`.x`), not a label or a
        // binding (`x: T`, `let x`), not a definition (an item, a variant).
        let binding = [
            "let", "mut", "fn", "struct", "enum", "trait", "type", "const", "static",
        ];
        let variant = braces.last() == Some(&Brace::Enum) && matches!(prev, "{" | "," | "]");
        if is_ident(word)
            && prev != "."
            && prev != "::"
            && next != ":"
            && !binding.contains(&prev)
            && !variant
        {
            if test {
                facts.test_mentions.insert(word.to_string());
            } else {
                facts.mentions.insert(word.to_string());
            }
        }
        i += 1;
    }
    facts
}

// ---------------------------------------------------------------------------
// The graph of files.

#[derive(Debug, Clone, PartialEq, Eq)]
enum Resolved {
    /// A module: naming it leans on nothing yet.
    Module(Vec<String>),
    /// A definition, and the file that holds it.
    Item(usize, String),
    /// Outside the crate (std, a dependency), or not found.
    Unknown,
}

struct Crate {
    files: Vec<FileFacts>,
    /// Module (a file's or an inline one) → the file that holds it.
    modules: BTreeMap<Vec<String>, usize>,
}

/// `from → to` with the names that tie them.
type Edges = BTreeMap<(usize, usize), BTreeSet<String>>;

impl Crate {
    fn new(sources: &[(String, String)]) -> Crate {
        let files: Vec<FileFacts> = sources.iter().map(|(p, t)| read_file(p, t)).collect();
        let mut modules = BTreeMap::new();
        for (n, f) in files.iter().enumerate() {
            modules.insert(f.module.clone(), n);
            for m in &f.inline {
                modules.insert(m.clone(), n);
            }
        }
        Crate { files, modules }
    }

    fn is_module(&self, m: &[String]) -> bool {
        self.modules.contains_key(m)
    }

    fn resolve_path(
        &self,
        scope: &[String],
        segs: &[String],
        seen: &mut HashSet<(Vec<String>, String)>,
    ) -> Resolved {
        let Some(first) = segs.first() else {
            return Resolved::Unknown;
        };
        let (mut m, mut k) = match first.as_str() {
            // `crate` of the binary is the binary; it names the library
            // as `redis_snmp`.
            "crate" if scope.first().map(String::as_str) == Some("main") => {
                (vec!["main".to_string()], 1)
            }
            "crate" | "redis_snmp" => (Vec::new(), 1),
            "self" => (scope.to_vec(), 1),
            "super" => {
                let mut m = scope.to_vec();
                let mut k = 0;
                while segs.get(k).map(String::as_str) == Some("super") {
                    m.pop();
                    k += 1;
                }
                (m, k)
            }
            name => {
                let mut child = scope.to_vec();
                child.push(name.to_string());
                if self.is_module(&child) {
                    (child, 1)
                } else {
                    match self.resolve_name(scope, name, seen) {
                        Resolved::Module(m) => (m, 1),
                        other => return other,
                    }
                }
            }
        };
        while k < segs.len() {
            let seg = &segs[k];
            if seg == "*" {
                return Resolved::Module(m);
            }
            let mut child = m.clone();
            child.push(seg.clone());
            if self.is_module(&child) {
                m = child;
                k += 1;
                continue;
            }
            // A definition: what follows are its members.
            return self.resolve_name(&m, seg, seen);
        }
        Resolved::Module(m)
    }

    /// Where `name`, as module `m` sees it, is defined: in `m`'s file, or
    /// through a `use` of `m` (a glob too).
    fn resolve_name(
        &self,
        m: &[String],
        name: &str,
        seen: &mut HashSet<(Vec<String>, String)>,
    ) -> Resolved {
        if !seen.insert((m.to_vec(), name.to_string())) {
            return Resolved::Unknown;
        }
        let Some(&f) = self.modules.get(m) else {
            return Resolved::Unknown;
        };
        let file = &self.files[f];
        if file.defs.get(m).is_some_and(|d| d.contains(name)) {
            let mut child = m.to_vec();
            child.push(name.to_string());
            if self.is_module(&child) {
                return Resolved::Module(child);
            }
            return Resolved::Item(f, name.to_string());
        }
        let uses = file.uses.iter().filter(|u| u.scope == m);
        for u in uses.clone().filter(|u| u.name == name) {
            let r = self.resolve_path(m, &u.path, seen);
            if r != Resolved::Unknown {
                return r;
            }
        }
        for u in uses.filter(|u| u.path.last().map(String::as_str) == Some("*")) {
            if let Resolved::Module(g) = self.resolve_path(m, &u.path, seen) {
                let r = self.resolve_name(&g, name, seen);
                if r != Resolved::Unknown {
                    return r;
                }
            }
        }
        Resolved::Unknown
    }

    /// Whether file `n` is test code: declared under `#[cfg(test)]`, or in
    /// a module that is.
    fn is_test_file(&self, n: usize) -> bool {
        let m = &self.files[n].module;
        (1..=m.len()).any(|k| {
            let parent = &m[..k - 1];
            self.modules
                .get(parent)
                .is_some_and(|&p| self.files[p].test_modules.contains(&m[..k]))
        })
    }

    /// Every file → file edge, with the names that make it: of the shipped
    /// code only, or of the test code too.
    fn edges(&self, with_tests: bool) -> Edges {
        let mut edges = Edges::new();
        for (n, f) in self.files.iter().enumerate() {
            let test_file = self.is_test_file(n);
            if test_file && !with_tests {
                continue;
            }
            let counts = |test: bool| with_tests || !(test || test_file);
            let mut add = |r: Resolved| {
                if let Resolved::Item(to, name) = r {
                    if to != n {
                        edges.entry((n, to)).or_default().insert(name);
                    }
                }
            };
            for u in f.uses.iter().filter(|u| counts(u.test)) {
                let mentions: Vec<&String> = if u.test || test_file {
                    f.mentions.iter().chain(&f.test_mentions).collect()
                } else {
                    f.mentions.iter().collect()
                };
                if u.path.last().map(String::as_str) == Some("*") {
                    let Resolved::Module(g) =
                        self.resolve_path(&u.scope, &u.path, &mut HashSet::new())
                    else {
                        continue;
                    };
                    for name in mentions {
                        // A name the file defines or imports by name is not the glob's.
                        let own = f.defs.get(&u.scope).is_some_and(|d| d.contains(name))
                            || f.uses.iter().any(|v| v.scope == u.scope && &v.name == name);
                        if !own {
                            add(self.resolve_name(&g, name, &mut HashSet::new()));
                        }
                    }
                } else if !u.public || mentions.contains(&&u.name) {
                    add(self.resolve_path(&u.scope, &u.path, &mut HashSet::new()));
                }
            }
            for (scope, segs, test) in &f.paths {
                if counts(*test) {
                    add(self.resolve_path(scope, segs, &mut HashSet::new()));
                }
            }
            for (scope, name, test) in &f.macro_calls {
                // The nearest module, this one or one above, that defines it.
                let definer = (0..=scope.len()).rev().find_map(|k| {
                    let m = &scope[..k];
                    let &d = self.modules.get(m)?;
                    self.files[d].macros.get(m)?.contains(name).then_some(d)
                });
                if let (Some(d), true) = (definer, counts(*test)) {
                    add(Resolved::Item(d, name.clone()));
                }
            }
        }
        edges
    }

    /// Paths into the crate (`crate::`, `super::`, `self::`) the checker
    /// could not place: a blind spot to fix here, not a pass.
    fn unplaced(&self) -> Vec<String> {
        let mut out = Vec::new();
        for f in &self.files {
            let written = f
                .uses
                .iter()
                .map(|u| (&u.scope, &u.path))
                .chain(f.paths.iter().map(|(s, p, _)| (s, p)));
            for (scope, path) in written {
                let into = matches!(path[0].as_str(), "crate" | "super" | "self" | "redis_snmp");
                if into && self.resolve_path(scope, path, &mut HashSet::new()) == Resolved::Unknown
                {
                    out.push(format!("{}: {}", f.path, path.join("::")));
                }
            }
        }
        out
    }

    /// The top-level module of file `n` (`redis` for src/redis/keys.rs;
    /// `main` for src/main.rs), `None` for lib.rs.
    fn top(&self, n: usize) -> Option<&str> {
        self.files[n].module.first().map(String::as_str)
    }
}

/// Every circle of the shipped code, each as `a → b (names) → … → a
/// (names)`. A file's tests stand above it: they may use a helper that
/// uses the file (`agentx/pdu/test_support.rs`), so test code is left out.
fn circles(krate: &Crate) -> Vec<String> {
    let edges = &krate.edges(false);
    let n = krate.files.len();
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in edges.keys() {
        out[a].push(b);
    }
    // Tarjan's strongly connected components.
    struct Tarjan<'a> {
        out: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        found: Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.next);
            self.low[v] = self.next;
            self.next += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for &w in &self.out[v] {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(i) if self.on_stack[w] => self.low[v] = self.low[v].min(i),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    self.found.push(component);
                }
            }
        }
    }
    let mut t = Tarjan {
        out: &out,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    let name = |a: usize, b: usize| {
        edges[&(a, b)]
            .iter()
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut described = Vec::new();
    for component in t.found {
        // The shortest way round from the component's first file.
        let inside: BTreeSet<usize> = component.iter().copied().collect();
        let start = *inside.iter().next().unwrap();
        let mut came_from: BTreeMap<usize, usize> = BTreeMap::new();
        let mut queue = VecDeque::from([start]);
        'search: while let Some(v) = queue.pop_front() {
            for &w in &out[v] {
                if !inside.contains(&w) || came_from.contains_key(&w) {
                    continue;
                }
                came_from.insert(w, v);
                if w == start {
                    break 'search;
                }
                queue.push_back(w);
            }
        }
        let mut round = vec![start];
        let mut v = came_from[&start];
        while v != start {
            round.push(v);
            v = came_from[&v];
        }
        round.push(start);
        round.reverse();
        let mut text = krate.files[round[0]].path.clone();
        for pair in round.windows(2) {
            text.push_str(&format!(
                " → {} ({})",
                krate.files[pair[1]].path,
                name(pair[0], pair[1])
            ));
        }
        let others: Vec<&str> = inside
            .iter()
            .filter(|v| !round.contains(v))
            .map(|&v| krate.files[v].path.as_str())
            .collect();
        if !others.is_empty() {
            text.push_str(&format!("; in the same knot: {}", others.join(", ")));
        }
        described.push(text);
    }
    described.sort();
    described
}

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
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
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

// ---------------------------------------------------------------------------
// The checker itself: what it must see, what it must not, and broken trees
// it must fail.

/// The edges of a crate as `from -> to: names`.
fn edge_list(krate: &Crate) -> Vec<String> {
    let mut list: Vec<String> = krate
        .edges(true)
        .iter()
        .map(|((a, b), names)| {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            format!(
                "{} -> {}: {}",
                krate.files[*a].path,
                krate.files[*b].path,
                names.join(", ")
            )
        })
        .collect();
    list.sort();
    list
}

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
