//! What a plain `cargo test` leaves out, said in its own output. The
//! integration tests that start real servers and tools (snmpd, snmptrapd,
//! redis-server, valkey-server, puppet, smilint, rrdtool, xmllint, dpkg,
//! lintian, pysnmp; puppet agents against the real Puppet server of
//! `scripts/puppet-server.sh`) or need root are built only with the `system-tests`
//! feature (`scripts/test.sh` turns it on, after installing what they
//! need). Without it the one ignored test below stands for them, so a first
//! `cargo test` on a machine without those programs runs the unit tests and
//! the tests that need nothing installed, and shows what it left out and
//! how to run it. Run on its own (`cargo test --test without_system_tests
//! -- --ignored`) it says which of the Debian packages the integration
//! tests need are missing here. `tests/architecture.rs` checks that every
//! test program that starts a program carries the gate.

#![cfg(not(feature = "system-tests"))]

use std::process::Command;

/// The Debian packages `scripts/install-test-deps.sh` installs for the
/// tests: its `APT_PACKAGES` line, read rather than repeated here.
fn test_packages() -> Vec<String> {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install-test-deps.sh");
    let text = std::fs::read_to_string(&script).expect("scripts/install-test-deps.sh");
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("APT_PACKAGES=\""))
        .expect("APT_PACKAGES=\"…\" in scripts/install-test-deps.sh");
    line.trim_end_matches('"')
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[test]
#[ignore = "the integration tests against real snmpd, redis-server, puppet, … are off: \
            run scripts/test.sh (it installs what they need, as root) or \
            cargo test --features system-tests; \
            run this test with --ignored to see which packages are missing"]
fn integration_tests_need_the_system_tests_feature_and_their_packages() {
    let mut missing = Vec::new();
    for package in test_packages() {
        let installed = Command::new("dpkg-query")
            .args(["-W", "-f=${Status}", &package])
            .output()
            .map(|out| String::from_utf8_lossy(&out.stdout).contains("install ok installed"))
            .unwrap_or(false);
        if !installed {
            missing.push(package);
        }
    }
    assert!(
        missing.is_empty(),
        "not installed (or no dpkg-query here): {}; scripts/install-test-deps.sh installs them",
        missing.join(" ")
    );
}
