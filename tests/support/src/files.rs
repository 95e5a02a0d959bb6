//! Small file helpers.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

/// Writes `contents` to `path` with the given mode (e.g. 0o600).
pub fn write_file_mode(path: &Path, contents: &str, mode: u32) {
    fs::write(path, contents).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// Runs `openssl` with `args` in `dir`; panics with its stderr when it fails.
pub fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
