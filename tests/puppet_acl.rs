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

    let script = repo_root().join("debian/examples/puppet-acl.sh");
    let out = Command::new("sh")
        .arg(&script)
        .arg(
            // The user by name, as an operator gives it.
            String::from_utf8(
                Command::new("id")
                    .args(["-nu", AGENT_UID])
                    .output()
                    .unwrap()
                    .stdout,
            )
            .unwrap()
            .trim(),
        )
        .env("LASTRUNFILE", &summary)
        .env("LASTRUNREPORT", &report)
        .output()
        .expect("running puppet-acl.sh");
    assert!(
        out.status.success(),
        "puppet-acl.sh failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
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
