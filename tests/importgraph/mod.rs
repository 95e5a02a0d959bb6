//! The files of `src/` as a graph: what `tests/architecture.rs` checks.
//!
//! Each file is read as text: comments, strings and lifetimes blanked,
//! then cut into tokens, from which come the names it defines (items,
//! inline modules, `macro_rules!` macros, the types an `enumeration!`
//! call makes), its `use`s, the paths it writes out, the names it
//! mentions and the macros it calls, each marked as test code or not
//! (`#[cfg(test)]`). Then every name is followed, through `use`s and
//! re-exports, to the file that defines it. No parser crate: `syn` would
//! parse more surely but resolves nothing, and what is read here is the
//! small part of Rust the paths need.

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};

// ---------------------------------------------------------------------------
// Reading a file: its code without comments, strings and lifetimes.

/// `text` with comments, string and character literals and lifetimes
/// blanked out (lines kept), so that nothing but code is read.
pub fn code_of(text: &str) -> String {
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
pub struct FileFacts {
    pub path: String,
    pub module: Vec<String>,
    /// Module (the file's own, or an inline one) → the names it defines.
    pub defs: BTreeMap<Vec<String>, BTreeSet<String>>,
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

pub struct Crate {
    pub files: Vec<FileFacts>,
    /// Module (a file's or an inline one) → the file that holds it.
    modules: BTreeMap<Vec<String>, usize>,
}

/// `from → to` with the names that tie them.
pub type Edges = BTreeMap<(usize, usize), BTreeSet<String>>;

impl Crate {
    pub fn new(sources: &[(String, String)]) -> Crate {
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

    pub fn is_module(&self, m: &[String]) -> bool {
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
    pub fn edges(&self, with_tests: bool) -> Edges {
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
    pub fn unplaced(&self) -> Vec<String> {
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
    pub fn top(&self, n: usize) -> Option<&str> {
        self.files[n].module.first().map(String::as_str)
    }
}

/// Every circle of the shipped code, each as `a → b (names) → … → a
/// (names)`. A file's tests stand above it: they may use a helper that
/// uses the file (`agentx/pdu/test_support.rs`), so test code is left out.
pub fn circles(krate: &Crate) -> Vec<String> {
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

/// The edges of a crate as `from -> to: names`.
pub fn edge_list(krate: &Crate) -> Vec<String> {
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
