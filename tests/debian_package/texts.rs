//! Reading the package's texts: the shipped configuration's commented
//! settings, the config structs' keys, and dpkg's reading of a changelog.

use super::system::run;
use std::collections::BTreeSet;
use std::path::Path;

/// Removes the `#` of every commented-out setting: a line whose `#` is
/// followed by something other than a space or another `#` (prose
/// comments are `# text`).
pub fn uncomment_settings(text: &str) -> String {
    text.lines()
        .map(|line| match line.strip_prefix('#') {
            Some(rest) if !rest.is_empty() && !rest.starts_with([' ', '#']) => rest,
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// Field names of a `struct NAME { ... }` in src/config/: the keys the
/// agent accepts (its file structs deny unknown fields).
pub fn struct_fields(source: &str, name: &str) -> BTreeSet<String> {
    let start = source
        .find(&format!("struct {name} {{"))
        .unwrap_or_else(|| panic!("src/config/ has no struct {name}"));
    let body = &source[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find("\n}").unwrap()];
    body.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("//") && !l.starts_with("#["))
        .map(|l| l.strip_prefix("pub(super) ").unwrap_or(l))
        .filter_map(|l| l.split_once(':').map(|(k, _)| k.trim()))
        .filter(|k| !k.is_empty() && !k.contains(' '))
        .map(String::from)
        .collect()
}

/// What dpkg's own parser says of a changelog-format file: its versions,
/// and its warnings (`badly formatted trailer line`, …).
pub fn parse_changelog(path: &Path) -> (Vec<String>, String) {
    let out = run(
        "dpkg-parsechangelog",
        &["-l", path.to_str().unwrap(), "--all", "-S", "Version"],
    );
    assert!(
        out.status.success(),
        "dpkg-parsechangelog {}",
        path.display()
    );
    let versions = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(String::from)
        .collect();
    (versions, String::from_utf8_lossy(&out.stderr).into_owned())
}
