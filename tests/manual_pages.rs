//! Issue 23: the configuration file's manual page, `redis-snmp.toml(5)`,
//! written from the package's annotated configuration
//! (`debian/conf/redis-snmp.toml`) by `examples/man/config_page.rs`, read
//! by `man` itself: clean under `man --warnings` (groff's warnings, which
//! lintian reports too), a deliberately broken copy not; and every setting
//! and table of the file on the page as a reader sees it. (The agent's own
//! page, redis-snmp(8), is checked the same way by lintian and `man` in
//! tests/debian_package.rs, from the built package.)

// Runs man(1) (man-db, with groff): built only with the `system-tests`
// feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

#[path = "../examples/man/config_page.rs"]
mod config_page;

use std::path::Path;
use std::process::Command;

/// `man --warnings -l PAGE`: what a reader sees, and groff's warnings.
fn man(page: &Path) -> Option<(String, String)> {
    let out = match Command::new("man")
        .args(["--warnings", "-l", "-Tutf8", "-P", "cat"])
        .arg(page)
        .env("MANWIDTH", "80")
        .env("LC_ALL", "C.UTF-8")
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            eprintln!("SKIP: no man(1) to read the page with (package man-db): {e}");
            return None;
        }
    };
    assert!(out.status.success(), "man failed: {out:?}");
    Some((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

#[test]
fn the_configuration_page_reads_clean_and_shows_every_setting() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("redis-snmp.toml.5");
    let roff = config_page::render("2026-11-26");
    std::fs::write(&page, &roff).unwrap();
    let Some((shown, warnings)) = man(&page) else {
        return;
    };
    assert_eq!(warnings, "", "man --warnings on redis-snmp.toml(5)");
    // groff marks bold by overstriking unless told not to; plain text.
    let shown = shown.chars().fold(String::new(), |mut plain, c| {
        if c == '\u{8}' {
            plain.pop();
        } else {
            plain.push(c);
        }
        plain
    });
    assert!(shown.starts_with("REDIS-SNMP.TOML(5)"), "{shown}");

    let annotated =
        std::fs::read_to_string(testkit::repo_root().join("debian/conf/redis-snmp.toml")).unwrap();
    let mut settings = 0;
    for line in annotated.lines() {
        let Some(rest) = line.strip_prefix('#') else {
            continue;
        };
        if rest.starts_with('[') || rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
            settings += 1;
            let on_page = shown
                .lines()
                .any(|l| l.trim() == rest.trim() || l.trim() == rest.trim_matches(['[', ']']));
            assert!(on_page, "{rest:?} is not on the page:\n{shown}");
        }
    }
    assert!(settings > 60, "only {settings} settings and tables read");

    // A broken copy: a macro groff does not know, and a font change left
    // open. man --warnings must say so.
    let broken = dir.path().join("broken.5");
    std::fs::write(
        &broken,
        roff.replacen(".SH SETTINGS", ".SH SETTINGS\n.XY oops\n\\fBopen", 1),
    )
    .unwrap();
    let (_, warnings) = man(&broken).unwrap();
    assert!(
        warnings.contains("XY"),
        "no warning for a broken page: {warnings:?}"
    );
}
