//! What the consumer files generated from the catalogue share: the check
//! that a shipped file is what the generator writes (or, with
//! `REDIS_SNMP_WRITE_DOCS=1`, writing it), and the MIB text the files
//! quote.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's root (the test programs run in it).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `Ok` when `path` holds `generated`; with `REDIS_SNMP_WRITE_DOCS=1`
/// (and `write`) it is written instead. Otherwise the `diff -u` from the
/// shipped file to the generated one, and how to regenerate.
pub fn check(path: &Path, generated: &str, write: bool, regenerate: &str) -> Result<(), String> {
    let shipped = std::fs::read_to_string(path).unwrap_or_default();
    if shipped == generated {
        return Ok(());
    }
    if write && std::env::var_os("REDIS_SNMP_WRITE_DOCS").is_some() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::write(path, generated).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("wrote {}", path.display());
        return Ok(());
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let new = dir.path().join("generated");
    std::fs::write(&new, generated).map_err(|e| e.to_string())?;
    let diff = Command::new("diff")
        .arg("-u")
        .arg(path)
        .arg(&new)
        .output()
        .map_err(|e| format!("running diff: {e}"))?;
    Err(format!(
        "{} is not what the catalogue generates:\n{}\nIf the catalogue is right, regenerate: {regenerate}",
        path.display(),
        String::from_utf8_lossy(&diff.stdout)
    ))
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
