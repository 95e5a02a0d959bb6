//! The host's facts the agent serves (`puppetFactTable`, and after the
//! objects of `puppetRunFinished`), and the external fact that gives the
//! host's role when its certificate carries none, known cheaply and
//! without running anything (facter takes seconds and runs code):
//!
//! - facter's external facts (`facts.d`): `key=value` lines of `*.txt`,
//!   the top-level scalars of a `*.yaml` (`*.yml`) or `*.json` mapping.
//!   Executable facts (any other file) are never run, not even read.
//!   Directories are read in the configured order, files in the byte
//!   order of their names; the first file that gives a fact wins (a fact
//!   given twice is said in [`Facts::errors`]).
//! - two built-ins: `hostname` (the kernel's host name up to its first
//!   `.`, as facter's `hostname`) and `uptime_seconds` (whole seconds of
//!   `/proc/uptime`, as facter's `system_uptime.seconds`), as of the read.
//!   An external fact of the same name wins, as in facter.
//!
//! Every file is judged as the events log is (`super::trust`: root's, the
//! directories above it too, writable by no group or other), opened
//! without following a symbolic link and without blocking (a FIFO), read
//! only if it is a regular file of at most [`MAX_FILE_BYTES`]; at most
//! [`MAX_FILES`] files a directory. A file that fails is skipped and said
//! once in [`Facts::errors`]; the others still count. Names are
//! lower-cased (facter does); values are cut to [`MAX_VALUE_BYTES`] at a
//! character boundary, and a value that is not UTF-8 is not kept.

use super::trust::Trust;
use crate::config::{valid_fact_name, FactSettings};
use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// A facts file larger than this is not read.
pub const MAX_FILE_BYTES: u64 = 64 * 1024;
/// Files looked at in one directory at most (the rest are said, once).
pub const MAX_FILES: usize = 256;
/// A fact's value at most, in bytes (`puppetFactValue`'s SIZE).
pub const MAX_VALUE_BYTES: usize = 255;
/// Errors kept from one read.
const MAX_ERRORS: usize = 16;

/// The facts the agent knows without facter.
pub const BUILT_IN: &[&str] = &["hostname", "uptime_seconds"];

/// What one read found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// The allowlist's facts that have a value, in the allowlist's order,
    /// each with its row number (its place in the allowlist, from 1).
    pub served: Vec<(u32, String, String)>,
    /// The value of `role_fact`, when it has one that is a role name.
    pub role: Option<String>,
    /// Files refused or unreadable, facts given twice.
    pub errors: Vec<String>,
}

/// Reads the facts `settings` asks for; nothing when it asks for none.
pub fn read_facts(settings: &FactSettings) -> Facts {
    let mut facts = Facts::default();
    if !settings.wanted() {
        return facts;
    }
    let mut wanted: Vec<&str> = settings.names.iter().map(String::as_str).collect();
    if let Some(role) = &settings.role_fact {
        wanted.push(role);
    }
    let mut found: BTreeMap<String, String> = BTreeMap::new();
    let trust = Trust::default();
    for dir in &settings.dirs {
        read_dir(dir, &trust, &wanted, &mut found, &mut facts.errors);
    }
    for name in BUILT_IN {
        if wanted.contains(name) && !found.contains_key(*name) {
            if let Some(value) = built_in(name) {
                found.insert(name.to_string(), value);
            }
        }
    }
    facts.served = settings
        .names
        .iter()
        .zip(1..)
        .filter_map(|(name, row)| Some((row, name.clone(), found.get(name)?.clone())))
        .collect();
    facts.role = settings
        .role_fact
        .as_ref()
        .and_then(|name| found.get(name))
        .filter(|role| is_role_word(role))
        .cloned();
    facts.errors.truncate(MAX_ERRORS);
    facts
}

/// A role is a plain word (what a `[[role]]` of kick.toml can name).
fn is_role_word(role: &str) -> bool {
    (1..=64).contains(&role.len())
        && !role.starts_with('-')
        && role
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
}

fn read_dir(
    dir: &Path,
    trust: &Trust,
    wanted: &[&str],
    found: &mut BTreeMap<String, String>,
    errors: &mut Vec<String>,
) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        // No such directory: no facts there, nothing wrong.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            errors.push(format!("{}: {e}", dir.display()));
            return;
        }
    };
    let mut names: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .take(MAX_FILES + 1)
        .collect();
    if names.len() > MAX_FILES {
        errors.push(format!(
            "{}: more than {MAX_FILES} files, the rest not read",
            dir.display()
        ));
        names.truncate(MAX_FILES);
    }
    names.sort();
    for name in names {
        let path = dir.join(&name);
        let Some(kind) = Kind::of(&path) else {
            // An executable fact, or not a fact: never run, never read.
            continue;
        };
        let bytes = match read_trusted(&path, trust) {
            Ok(bytes) => bytes,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        let pairs = match kind {
            Kind::Text => Ok(parse_txt(&bytes)),
            Kind::Yaml => parse_yaml(&bytes),
            Kind::Json => parse_json(&bytes),
        };
        let pairs = match pairs {
            Ok(pairs) => pairs,
            Err(e) => {
                errors.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        for (key, value) in pairs {
            if !wanted.contains(&key.as_str()) {
                continue;
            }
            if found.contains_key(&key) {
                errors.push(format!(
                    "{}: {key} is given by an earlier file too, which wins",
                    path.display()
                ));
                continue;
            }
            found.insert(key, value);
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Yaml,
    Json,
}

impl Kind {
    fn of(path: &Path) -> Option<Kind> {
        match path.extension()?.to_str()? {
            "txt" => Some(Kind::Text),
            "yaml" | "yml" => Some(Kind::Yaml),
            "json" => Some(Kind::Json),
            _ => None,
        }
    }
}

/// The file's bytes, if it and the directories above it are trusted and
/// it is a regular file of at most [`MAX_FILE_BYTES`]: opened without
/// following a link and without blocking, judged by its descriptor.
pub fn read_trusted(path: &Path, trust: &Trust) -> Result<Vec<u8>, String> {
    let shown = path.display();
    trust
        .check(path)
        .map_err(|e| format!("{shown}: not read: {e}"))?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => format!("{shown}: a symbolic link, not read"),
            _ => format!("{shown}: {e}"),
        })?;
    let meta = file.metadata().map_err(|e| format!("{shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{shown}: not a regular file, not read"));
    }
    trust
        .check_file(path, &meta)
        .map_err(|e| format!("{shown}: not read: {e}"))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{shown}: {} bytes, over the {MAX_FILE_BYTES}-byte limit",
            meta.len()
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{shown}: {e}"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "{shown}: grew over the {MAX_FILE_BYTES}-byte limit"
        ));
    }
    Ok(bytes)
}

/// A fact's name as facter keeps it (lower case), if it may be one.
fn name_of(key: &str) -> Option<String> {
    let key = key.trim().to_ascii_lowercase();
    valid_fact_name(&key).then_some(key)
}

/// A value cut to [`MAX_VALUE_BYTES`] at a character boundary.
fn bounded(value: &str) -> String {
    let mut cut = value.len().min(MAX_VALUE_BYTES);
    while !value.is_char_boundary(cut) {
        cut -= 1;
    }
    value[..cut].to_string()
}

/// facter's `.txt` external facts: `key=value` lines (split at the first
/// `=`, both sides trimmed); lines without `=`, with a key that is no
/// fact name, or not UTF-8, are skipped.
pub fn parse_txt(bytes: &[u8]) -> Vec<(String, String)> {
    bytes
        .split(|b| *b == b'\n')
        .filter_map(|line| {
            let line = std::str::from_utf8(line).ok()?;
            let (key, value) = line.split_once('=')?;
            Some((name_of(key)?, bounded(value.trim())))
        })
        .collect()
}

/// A scalar of a YAML or JSON facts file, as text; structured facts
/// (mappings, lists) are not served.
#[derive(Debug, serde::Deserialize)]
#[serde(untagged)]
enum Scalar {
    Text(String),
    Integer(i64),
    Float(f64),
    Bool(bool),
    Other(serde::de::IgnoredAny),
}

fn scalars(map: BTreeMap<String, Scalar>) -> Vec<(String, String)> {
    map.into_iter()
        .filter_map(|(key, value)| {
            let text = match value {
                Scalar::Text(t) => t,
                Scalar::Integer(n) => n.to_string(),
                Scalar::Float(f) => f.to_string(),
                Scalar::Bool(b) => b.to_string(),
                Scalar::Other(_) => return None,
            };
            Some((name_of(&key)?, bounded(&text)))
        })
        .collect()
}

/// A `.yaml` file's top-level mapping (the parser's limits as for
/// Puppet's own files).
pub fn parse_yaml(bytes: &[u8]) -> Result<Vec<(String, String)>, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Vec::new());
    }
    super::yaml::from_slice::<BTreeMap<String, Scalar>>(bytes, MAX_FILE_BYTES as usize).map(scalars)
}

/// A `.json` file's top-level object.
pub fn parse_json(bytes: &[u8]) -> Result<Vec<(String, String)>, String> {
    serde_json::from_slice::<BTreeMap<String, Scalar>>(bytes)
        .map(scalars)
        .map_err(|e| e.to_string())
}

/// A built-in fact, read now.
fn built_in(name: &str) -> Option<String> {
    let small = |path: &str| -> Option<String> {
        let mut text = String::new();
        std::fs::File::open(path)
            .ok()?
            .take(4096)
            .read_to_string(&mut text)
            .ok()?;
        Some(text)
    };
    match name {
        "hostname" => {
            let text = small("/proc/sys/kernel/hostname")?;
            let short = text.trim().split('.').next()?.to_string();
            (!short.is_empty()).then(|| bounded(&short))
        }
        "uptime_seconds" => {
            let text = small("/proc/uptime")?;
            let seconds: f64 = text.split_whitespace().next()?.parse().ok()?;
            Some((seconds as u64).to_string())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;

    fn settings(dirs: &[&Path], names: &[&str], role: Option<&str>) -> FactSettings {
        FactSettings {
            names: names.iter().map(|s| s.to_string()).collect(),
            role_fact: role.map(str::to_string),
            dirs: dirs.iter().map(|d| d.to_path_buf()).collect(),
        }
    }

    /// A directory as an administrator makes it: root's (the tests run as
    /// root), mode 0755, under a temporary directory.
    fn facts_dir() -> (tempfile::TempDir, PathBuf) {
        let top = tempfile::tempdir().unwrap();
        std::fs::set_permissions(top.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let dir = top.path().join("facts.d");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        (top, dir)
    }

    fn write(path: &Path, text: &[u8], mode: u32) {
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    fn is_root() -> bool {
        // SAFETY: geteuid has no preconditions.
        unsafe { libc::geteuid() == 0 }
    }

    #[test]
    fn the_three_formats_as_facter_reads_them() {
        let txt =
            b"# a comment\nrole=node\n Datacenter = dc1 \nno equals sign\nbad key=1\nempty=\n";
        assert_eq!(
            parse_txt(txt),
            [
                ("role".into(), "node".into()),
                ("datacenter".into(), "dc1".into()),
                ("empty".into(), String::new()),
            ]
        );
        let yaml =
            b"role: web\nweight: 3\nratio: 0.5\nenabled: true\nnested:\n  a: 1\nlist: [1, 2]\n";
        let mut got = parse_yaml(yaml).unwrap();
        got.sort();
        assert_eq!(
            got,
            [
                ("enabled".into(), "true".into()),
                ("ratio".into(), "0.5".into()),
                ("role".into(), "web".into()),
                ("weight".into(), "3".into()),
            ]
        );
        let json = br#"{"role": "db", "rack": 12, "tags": ["a"], "x": {"y": 1}}"#;
        assert_eq!(
            parse_json(json).unwrap(),
            [("rack".into(), "12".into()), ("role".into(), "db".into())]
        );
        assert!(parse_json(b"[1, 2]").is_err());
        assert!(parse_yaml(b"- a\n- b\n").is_err());
        assert!(parse_yaml(b"").unwrap().is_empty());
        // A value is cut to 255 bytes at a character boundary.
        let long = format!("k={}", "é".repeat(200));
        let (_, value) = &parse_txt(long.as_bytes())[0];
        assert!(value.len() <= MAX_VALUE_BYTES && value.len() >= MAX_VALUE_BYTES - 1);
    }

    #[test]
    fn allowlisted_facts_from_the_directories_in_order_and_built_ins() {
        let (_top, dir) = facts_dir();
        let other = dir.parent().unwrap().join("second");
        std::fs::create_dir(&other).unwrap();
        std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o755)).unwrap();
        write(
            &dir.join("a.txt"),
            b"role=web\ndatacenter=dc1\nsecret=x\n",
            0o644,
        );
        write(&dir.join("b.yaml"), b"datacenter: dc9\nrack: 4\n", 0o644);
        write(
            &other.join("c.json"),
            br#"{"rack": 7, "tier": "front"}"#,
            0o644,
        );
        // An executable fact is never run (nor read).
        write(
            &dir.join("run.sh"),
            b"#!/bin/sh\ntouch /tmp/ran\necho tier=x\n",
            0o755,
        );
        let s = settings(
            &[&dir, &other, Path::new("/nonexistent/facts.d")],
            &[
                "datacenter",
                "rack",
                "tier",
                "hostname",
                "uptime_seconds",
                "absent",
            ],
            Some("role"),
        );
        let facts = read_facts(&s);
        let served: Vec<(u32, &str, &str)> = facts
            .served
            .iter()
            .map(|(r, n, v)| (*r, n.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            served[..3],
            [
                (1, "datacenter", "dc1"),
                (2, "rack", "4"),
                (3, "tier", "front")
            ]
        );
        assert_eq!(served[3].1, "hostname");
        assert!(!served[3].2.contains('.') && !served[3].2.is_empty());
        assert_eq!(served[4].1, "uptime_seconds");
        assert!(served[4].2.parse::<u64>().unwrap() > 0);
        assert_eq!(
            served.len(),
            5,
            "absent has no row; secret is not allowlisted"
        );
        assert_eq!(facts.role.as_deref(), Some("web"));
        // datacenter given twice: said, the first file's kept.
        assert!(
            facts.errors.iter().any(|e| e.contains("datacenter")),
            "{:?}",
            facts.errors
        );
        // An external fact overrides a built-in, as in facter.
        write(&dir.join("h.txt"), b"hostname=from-file\n", 0o644);
        let facts = read_facts(&s);
        assert!(facts
            .served
            .iter()
            .any(|(_, n, v)| n == "hostname" && v == "from-file"));
        // Nothing asked: nothing read.
        assert_eq!(read_facts(&settings(&[&dir], &[], None)), Facts::default());
    }

    #[test]
    fn hostile_files_are_refused_and_the_rest_still_read() {
        let (_top, dir) = facts_dir();
        write(&dir.join("good.txt"), b"tier=front\n", 0o644);
        // Too large: refused from its size, not read.
        let huge = vec![b'a'; MAX_FILE_BYTES as usize + 1];
        write(&dir.join("huge.txt"), &huge, 0o644);
        // A FIFO would block a reader forever.
        let fifo = dir.join("fifo.txt");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        // A symbolic link to a file the agent may read and others not.
        write(
            &dir.parent().unwrap().join("shadow"),
            b"role=root-only\n",
            0o600,
        );
        std::os::unix::fs::symlink(dir.parent().unwrap().join("shadow"), dir.join("link.txt"))
            .unwrap();
        // Writable by others: anyone could make the host a load balancer.
        write(&dir.join("open.txt"), b"rack=9\n", 0o666);
        // Not UTF-8: the line is skipped, the others kept.
        write(&dir.join("bytes.txt"), b"bad=\xff\xfe\nzone=z1\n", 0o644);
        // Bad YAML.
        write(&dir.join("bad.yaml"), b"role: [unclosed\n", 0o644);
        let s = settings(&[&dir], &["tier", "rack", "zone", "bad", "a"], Some("role"));
        let facts = read_facts(&s);
        let names: Vec<&str> = facts.served.iter().map(|(_, n, _)| n.as_str()).collect();
        assert_eq!(names, ["tier", "zone"]);
        assert_eq!(facts.role, None);
        let said = facts.errors.join("\n");
        for expected in ["huge.txt", "fifo.txt", "link.txt", "bad.yaml"] {
            assert!(said.contains(expected), "{expected}: {said}");
        }
        assert!(
            said.contains("open.txt") && said.contains("writable by all"),
            "{said}"
        );
        // A directory anyone may write: nothing in it is believed.
        if is_root() {
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
            let facts = read_facts(&s);
            assert!(facts.served.is_empty(), "{:?}", facts.served);
            // A file owned by another user is refused too.
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
            let c = std::ffi::CString::new(dir.join("good.txt").to_str().unwrap()).unwrap();
            // SAFETY: a valid C string.
            assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
            let facts = read_facts(&s);
            assert!(!facts.served.iter().any(|(_, n, _)| n == "tier"));
        }
        // A role that is not a plain word is no role.
        write(&dir.join("r.txt"), b"role=-oProxyCommand=id\n", 0o644);
        assert_eq!(read_facts(&s).role, None);
    }

    #[test]
    fn many_files_are_bounded() {
        let (_top, dir) = facts_dir();
        for n in 0..MAX_FILES + 5 {
            write(
                &dir.join(format!("f{n:04}.txt")),
                format!("k{n}=v\n").as_bytes(),
                0o644,
            );
        }
        let facts = read_facts(&settings(&[&dir], &["k0"], None));
        assert!(
            facts.errors.iter().any(|e| e.contains("more than")),
            "{:?}",
            facts.errors
        );
    }
}
