//! Small file helpers.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Writes `contents` to `path` with the given mode (e.g. 0o600).
pub fn write_file_mode(path: &Path, contents: &str, mode: u32) {
    fs::write(path, contents).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}
