//! Debian's own tests of the package, for tests/debian_package.rs:
//! autopkgtest (debian/tests/control, run on this host with the null
//! runner) and piuparts (install, purge, and the upgrade from the stand-in
//! of the Perl agent's package, in a fresh bookworm chroot). Both are slow;
//! each says how long it took, and skips, saying why, where its tool or
//! (for piuparts) a Debian mirror is missing.

use super::*;
use std::fs::{self};
use std::path::Path;
use std::time::{Duration, Instant};

fn have(program: &str) -> bool {
    ["/usr/bin", "/usr/sbin", "/bin", "/sbin"]
        .iter()
        .any(|dir| Path::new(dir).join(program).exists())
}

/// debian/tests/legacy-objects's list of the 17 objects and their types,
/// as "N TYPE" lines.
pub fn autopkgtest_expected_types() -> Vec<String> {
    let script = fs::read_to_string(repo_root().join("debian/tests/legacy-objects")).unwrap();
    let start = script
        .find("expected='")
        .expect("expected= in legacy-objects")
        + 10;
    let end = start + script[start..].find('\'').unwrap();
    script[start..end].lines().map(String::from).collect()
}

/// `autopkgtest PACKAGE.deb SOURCE.dsc -- null`: the tests of
/// debian/tests/control on this host, as the package's user would run
/// them; then the package (which autopkgtest leaves installed) is purged
/// and nothing may be left.
pub fn autopkgtest_on_this_host() {
    if !have("autopkgtest") {
        println!("SKIP autopkgtest: not installed (apt-get install autopkgtest)");
        return;
    }
    let system = take_system();
    let pkg = package();
    let _purge = PurgeOnDrop;
    let out_dir = tempfile::Builder::new()
        .prefix("redis-snmp-autopkgtest.")
        .tempdir()
        .unwrap();
    step("SLOW STEP: autopkgtest redis-snmp.deb redis-snmp.dsc -- null");
    let started = Instant::now();
    let out = Command::new("autopkgtest")
        .arg("--output-dir")
        .arg(out_dir.path().join("out"))
        .arg(&pkg.deb)
        .arg(&pkg.dsc)
        .args(["--", "null"])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdin(Stdio::null())
        .output()
        .expect("running autopkgtest");
    let took = started.elapsed();
    let text = show("autopkgtest -- null", &out);
    println!("{}", tail(&text, 60));
    step(&format!("autopkgtest took {:.0?}", took));
    let summary = fs::read_to_string(out_dir.path().join("out/summary")).unwrap_or_default();
    assert!(
        out.status.success() && summary.contains("legacy-objects       PASS"),
        "autopkgtest failed (exit {:?}); summary:\n{summary}\n{}",
        out.status.code(),
        tail(&text, 80)
    );
    assert_eq!(package_state().as_deref(), Some("ii 0.3.0-1"));
    purge_and_check(&system, &[]);
}

/// The mirror the host's apt uses for Debian (deb822 or one-line
/// sources), or Debian's own.
fn debian_mirror() -> String {
    let mut texts = vec![fs::read_to_string("/etc/apt/sources.list").unwrap_or_default()];
    if let Ok(entries) = fs::read_dir("/etc/apt/sources.list.d") {
        for e in entries.flatten() {
            texts.push(fs::read_to_string(e.path()).unwrap_or_default());
        }
    }
    for text in texts {
        for line in text.lines().map(str::trim) {
            let uri = line.strip_prefix("URIs:").map(str::trim).or_else(|| {
                line.strip_prefix("deb ")
                    .and_then(|rest| rest.split_whitespace().find(|w| w.contains("://")))
            });
            if let Some(uri) = uri.and_then(|u| u.split_whitespace().next()) {
                if uri.ends_with("/debian") || uri.ends_with("/debian/") {
                    return uri.trim_end_matches('/').to_string();
                }
            }
        }
    }
    "http://deb.debian.org/debian".to_string()
}

/// Whether the mirror's bookworm Release file can be fetched (debootstrap
/// needs it); the reason when not.
fn mirror_reachable(mirror: &str) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("/usr/lib/apt/apt-helper")
        .arg("download-file")
        .arg(format!("{mirror}/dists/bookworm/Release"))
        .arg(dir.path().join("Release"))
        .stdin(Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(String::from_utf8_lossy(&o.stderr).trim().to_string()),
        Err(e) => Err(format!("apt-helper: {e}")),
    }
}

/// The warnings of a piuparts log: its own (ERROR, WARN, which carry
/// adequate's tags, FAIL) and those of the tools it ran (dpkg's
/// "warning:", apt's W: and E:, invoke-rc.d). policy-rc.d's refusals are
/// piuparts' own set-up.
pub fn piuparts_warnings(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| {
            let lower = l.to_ascii_lowercase();
            (l.contains(" ERROR: ")
                || l.contains(" WARN: ")
                || l.contains("FAIL:")
                || lower.contains("warning:")
                || l.trim_start().starts_with("W: ")
                || l.trim_start().starts_with("E: ")
                || lower.contains("unknown initscript"))
                && !l.contains("policy-rc.d denied execution")
                // debootstrap's note on piuparts' own --no-merged-usr
                // chroot, and apt-cache asked about a package that is only
                // a file (piuparts then says it cannot test an upgrade
                // from the archive).
                && !l.contains("non-merged-/usr environments")
                && l.trim() != "E: No packages found"
                // piuparts' purge of everything it installed, some already
                // gone.
                && !l.contains("which isn't installed")
                // snmpd's own postinst (net-snmp 5.9.3-2), whose
                // Debian-snmp user gets the existing /var/lib/snmp.
                && !l.contains("home directory `/var/lib/snmp' does not belong")
                && !l.contains("'.' should be ':': 'Debian-snmp.Debian-snmp'")
        })
        .map(String::from)
        .collect()
}

/// piuparts in a fresh bookworm chroot (debootstrap from the host's
/// mirror), with recommends (snmpd): install and purge of the package, then, with the stand-in of
/// the Perl agent's package offered through a local repository, its
/// installation (with snmpd, which it depends on), the upgrade to ours and
/// the purge. PASS, with no warning.
pub fn piuparts_in_a_fresh_chroot() {
    for tool in ["piuparts", "debootstrap"] {
        if !have(tool) {
            println!(
                "SKIP piuparts: {tool} is not installed (apt-get install piuparts debootstrap)"
            );
            return;
        }
    }
    let mirror = debian_mirror();
    if let Err(why) = mirror_reachable(&mirror) {
        println!("SKIP piuparts: no Debian mirror for debootstrap ({mirror}: {why})");
        return;
    }
    let pkg = package();
    let work = tempfile::Builder::new()
        .prefix("redis-snmp-piuparts.")
        .tempdir()
        .unwrap();
    // The local repository: the old package and its Packages file.
    let repo = work.path().join("repo");
    fs::create_dir(&repo).unwrap();
    let old = old_package(work.path(), OldBuild::Today, true);
    fs::copy(&old, repo.join(old.file_name().unwrap())).unwrap();
    let packages = Command::new("dpkg-scanpackages")
        .arg(".")
        .current_dir(&repo)
        .output()
        .expect("dpkg-scanpackages (dpkg-dev)");
    assert!(packages.status.success());
    fs::write(repo.join("Packages"), &packages.stdout).unwrap();

    step(&format!(
        "SLOW STEP: piuparts -d bookworm -m {mirror} (install, purge, upgrade from the old package)"
    ));
    // debootstrap takes most of the time (3 of 4 minutes for a plain run
    // on 2 cores): its chroot is kept as a tarball for the next local run
    // (CI starts clean). Remove it to start from a fresh debootstrap.
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("piuparts-bookworm.tgz");
    let base_option = if base.is_file() {
        println!(
            "reusing the chroot {} (remove it for a fresh one)",
            base.display()
        );
        "-b"
    } else {
        "-s"
    };
    let started = Instant::now();
    let out = Command::new("piuparts")
        .args(["-d", "bookworm", "-m", &mirror])
        .arg(base_option)
        .arg(&base)
        // With snmpd, which the package recommends (and apt installs by
        // default): apt may configure this package before snmpd, and
        // piuparts purges snmpd first; neither may draw a warning.
        .arg("--install-recommends")
        .arg("--tmpdir")
        .arg(work.path())
        .arg("--bindmount")
        .arg(&repo)
        .arg("--extra-repo")
        .arg(format!("deb [trusted=yes] file://{} ./", repo.display()))
        .arg(&pkg.deb)
        .stdin(Stdio::null())
        .output()
        .expect("running piuparts");
    let took = started.elapsed();
    let text = show("piuparts", &out);
    step(&format!("piuparts took {:.0?}", took));
    let warnings = piuparts_warnings(&text);
    println!("{}", tail(&text, 40));
    assert!(
        out.status.success() && text.contains("PASS: Installation, upgrade and purging tests."),
        "piuparts failed (exit {:?}):\n{}",
        out.status.code(),
        tail(&text, 120)
    );
    assert!(
        warnings.is_empty(),
        "piuparts passed with warnings:\n{}",
        warnings.join("\n")
    );
    assert!(took < Duration::from_secs(20 * 60));
}
