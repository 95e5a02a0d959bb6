//! Issue 14: the way README.Debian gives to let the agent's user read
//! Puppet's run files (`debian/examples/puppet-acl.sh`: a default ACL on
//! Puppet's directories) survives Puppet's own rewrites, tried with real
//! `puppet apply` runs: before it, another user cannot read the files;
//! after it, and after two more runs that replace both files, that user
//! can, the files are still mode 0640, and a third user still cannot.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use testkit::*;

/// The agent's user in this test (any user but root will do).
const AGENT_UID: &str = "65534";
/// Somebody else.
const OTHER_UID: &str = "65533";

/// Whether `uid` can read `path` (cat, as that user, with no groups).
fn readable_by(uid: &str, path: &Path) -> bool {
    Command::new("setpriv")
        .args([
            &format!("--reuid={uid}"),
            &format!("--regid={uid}"),
            "--clear-groups",
        ])
        .arg("cat")
        .arg(path)
        .output()
        .expect("setpriv (util-linux)")
        .status
        .success()
}

#[test]
fn the_documented_acl_survives_puppets_rewrites_and_lets_only_the_agent_read() {
    let puppet = PuppetApply::new();
    let manifest = |n: u32| format!("notify {{ 'run {n}': }}\n");
    puppet.apply("first", &manifest(1), &[]);
    let summary = puppet.public_dir().join("last_run_summary.yaml");
    let report = puppet.state_dir().join("last_run_report.yaml");
    for file in [&summary, &report] {
        assert!(file.is_file(), "{} was not written", file.display());
        assert!(
            !readable_by(AGENT_UID, file),
            "{} is readable before",
            file.display()
        );
    }

    let (ran, said) = run_script(&summary, &report);
    assert!(ran, "puppet-acl.sh failed: {said}");
    for file in [&summary, &report] {
        assert!(
            readable_by(AGENT_UID, file),
            "{} right after",
            file.display()
        );
    }

    // Puppet replaces both files at every run.
    let inode = |p: &Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
    let before = (inode(&summary), inode(&report));
    puppet.apply("second", &manifest(2), &[]);
    puppet.apply("third", &manifest(3), &[]);
    assert_ne!(
        before,
        (inode(&summary), inode(&report)),
        "Puppet did not replace the files"
    );
    for file in [&summary, &report] {
        let mode = std::fs::metadata(file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o007, 0, "{} is mode {mode:o}", file.display());
        assert!(
            readable_by(AGENT_UID, file),
            "{} after two runs",
            file.display()
        );
        assert!(
            !readable_by(OTHER_UID, file),
            "{} is readable by anyone",
            file.display()
        );
    }
    let text = std::fs::read_to_string(&report).unwrap();
    assert!(text.contains("run 3"), "the report is not the last run's");
}

/// Runs the script as root, as its usage says, on the two paths, for the
/// agent's user by name (as an operator gives it): whether it succeeded,
/// and what it said (stdout then stderr).
fn run_script(summary: &Path, report: &Path) -> (bool, String) {
    let user = String::from_utf8(
        Command::new("id")
            .args(["-nu", AGENT_UID])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let out = Command::new("sh")
        .arg(repo_root().join("debian/examples/puppet-acl.sh"))
        .arg(user.trim())
        .env("LASTRUNFILE", summary)
        .env("LASTRUNREPORT", report)
        .output()
        .expect("running puppet-acl.sh");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// getfacl's entries of `path` (without its comments), as getfacl reads
/// the ACL the kernel holds.
fn acl_of(path: &Path) -> String {
    let out = Command::new("getfacl")
        .args(["-c", "-p"])
        .arg(path)
        .output()
        .expect("getfacl (acl)");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The entries beyond the mode bits: named users and groups, the mask,
/// and every default entry.
fn granted(acl: &str) -> Vec<String> {
    acl.lines()
        .filter(|l| {
            let fields: Vec<&str> = l.split(':').collect();
            l.starts_with("default:")
                || l.starts_with("mask:")
                || fields.get(1).is_some_and(|name| !name.is_empty())
        })
        .map(String::from)
        .collect()
}

/// Review L6: the script runs as root on paths the puppet user may write,
/// so a symlink put there must not have root grant the ACL elsewhere. A
/// report that is a symlink to another file, and a directory that is a
/// symlink to another directory, are refused, saying so, and their
/// targets get no ACL entry (getfacl); the files stay unreadable to the
/// agent's user.
#[test]
fn symlinks_in_puppets_directories_are_refused_and_their_targets_untouched() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let secret = dir.path().join("secret");
    write_file_mode(&secret, "not for the agent\n", 0o600);
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    let public = dir.path().join("public");
    std::fs::create_dir(&public).unwrap();
    let summary = public.join("last_run_summary.yaml");
    write_file_mode(&summary, "---\n", 0o640);
    let report = state.join("last_run_report.yaml");
    std::os::unix::fs::symlink(&secret, &report).unwrap();

    let (ran, text) = run_script(&summary, &report);
    assert!(
        !ran && text.contains("is a symbolic link"),
        "a report that is a symlink was not refused:\n{text}"
    );
    assert_eq!(
        granted(&acl_of(&secret)),
        Vec::<String>::new(),
        "the symlink's target got an ACL entry"
    );
    assert!(
        !readable_by(AGENT_UID, &secret),
        "the symlink's target is readable by the agent's user"
    );

    // A directory that is a link to another one.
    let private = dir.path().join("private");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    let linked = dir.path().join("linked");
    std::os::unix::fs::symlink(&private, &linked).unwrap();
    std::fs::remove_file(&report).unwrap();
    write_file_mode(&report, "---\n", 0o640);
    let (ran, text) = run_script(&linked.join("last_run_summary.yaml"), &report);
    assert!(
        !ran && text.contains("is a symbolic link"),
        "a directory that is a symlink was not refused:\n{text}"
    );
    assert_eq!(
        granted(&acl_of(&private)),
        Vec::<String>::new(),
        "the linked directory got an ACL entry"
    );

    // Without links, the same paths are taken.
    let (ran, said) = run_script(&summary, &report);
    assert!(ran, "{said}");
    assert!(readable_by(AGENT_UID, &report) && readable_by(AGENT_UID, &summary));
}
