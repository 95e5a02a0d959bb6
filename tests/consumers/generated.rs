//! What the consumer files generated from the catalogue share: the check
//! that a shipped file is what the generator writes (or, with
//! `REDIS_SNMP_WRITE_DOCS=1`, writing it), and the MIB text the files
//! quote.

use std::path::{Path, PathBuf};

/// The repository's root (the test programs run in it).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `Ok` when `path` holds `generated`; with `REDIS_SNMP_WRITE_DOCS=1`
/// (and `write`) it is written instead. Otherwise the `diff -u` from the
/// shipped file to the generated one, and how to regenerate.
pub fn check(path: &Path, generated: &str, write: bool, regenerate: &str) -> Result<(), String> {
    testkit::generated::check(path, generated, write, regenerate)
}

/// The text of a MIB module of `mibs/`.
pub fn mib_text(module: &str) -> String {
    let path = repo().join("mibs").join(format!("{module}.txt"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The DESCRIPTION of the NOTIFICATION-TYPE `name` in `mib`, one entry a
/// line, each trimmed (the quotes left out); `None` when `mib` defines no
/// such notification.
pub fn notification_description(mib: &str, name: &str) -> Option<Vec<String>> {
    let header = format!("{name} NOTIFICATION-TYPE");
    let mut lines = mib.lines().skip_while(|l| l.trim_end() != header);
    lines.next()?;
    let mut lines = lines.skip_while(|l| l.trim() != "DESCRIPTION");
    lines.next()?;
    let mut text = Vec::new();
    for line in lines {
        let line = line.trim();
        let line = line.strip_prefix('"').unwrap_or(line);
        match line.strip_suffix('"') {
            Some(last) => {
                text.push(last.to_string());
                return Some(text);
            }
            None => text.push(line.to_string()),
        }
    }
    None
}
