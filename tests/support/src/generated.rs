//! Files generated from the catalogue and shipped (the OpenNMS data
//! collection, the snmp_exporter and Icinga/snmptt files, the object
//! reference): the one check that a shipped file is what its generator
//! writes, or, with `REDIS_SNMP_WRITE_DOCS=1`, writing it.

use std::path::Path;
use std::process::Command;

/// `Ok` when `path` holds `generated`; with `REDIS_SNMP_WRITE_DOCS` set
/// (and `write`) it is written instead, its directory made. Otherwise the
/// `diff -u` from the shipped file (empty when there is none) to the
/// generated one, and `regenerate`: how to make it anew.
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
