//! Issue 14: the access configuration the documentation gives
//! (`debian/examples/snmpd-access.conf`, shown by README and
//! README.Debian), in a real snmpd with the agent serving Redis and
//! Puppet:
//! - the SNMPv2c community reads REDIS-SERVER-MIB and nothing of
//!   PUPPET-AGENT-MIB (error texts, resource titles, the disabled reason);
//! - the SNMPv3 user (SHA-256, AES) reads both, and nothing without its
//!   passphrases or without privacy;
//! - notifications leave as SNMPv3 informs, authenticated and encrypted: a
//!   receiver that accepts only that user with privacy logs them.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::process::Command;
use std::time::Duration;
use testkit::*;

const REDIS_ROOT: &str = ".1.3.6.1.4.1.20267.400";
const PUPPET_ROOT: &str = ".1.3.6.1.4.1.20267.401";

/// The value of `-X`-style options in the example's `trapsess` line.
fn trapsess_option(lines: &[String], option: &str) -> String {
    let line = lines.iter().find(|l| l.starts_with("trapsess")).unwrap();
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == option).unwrap();
    words[at + 1].trim_matches('"').to_string()
}

/// `snmpbulkwalk -v3` as the example's user, numeric, reading no
/// snmp.conf; `level` and the passphrases as given.
fn walk_v3(snmpd: &Snmpd, level: &str, auth: &str, privacy: &str, oid: &str) -> (bool, String) {
    let conf = tempfile::tempdir().unwrap();
    let out = Command::new("snmpbulkwalk")
        .args([
            "-v3", "-u", "snmpmon", "-l", level, "-a", "SHA-256", "-A", auth,
        ])
        .args([
            "-x", "AES", "-X", privacy, "-t", "1", "-r", "1", "-On", "-m", "",
        ])
        .arg(format!("127.0.0.1:{}", snmpd.udp_port()))
        .arg(oid)
        .env("SNMPCONFPATH", conf.path())
        .env("SNMP_PERSISTENT_DIR", conf.path())
        .output()
        .expect("running snmpbulkwalk");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn the_documented_access_keeps_puppet_and_notifications_off_the_community() {
    let example = access_example_lines("MANAGER:162");
    let auth = trapsess_option(&example, "-A");
    let privacy = trapsess_option(&example, "-X");
    // The manager: the example's user, with privacy, and nobody else.
    let create_user = example
        .iter()
        .find(|l| l.starts_with("createUser"))
        .unwrap();
    let trapd = Snmptrapd::start_with_access(&format!("{create_user}\nauthUser log snmpmon priv"));
    let lines = access_example_lines(&format!("127.0.0.1:{}", trapd.port()));
    let mut options = SnmpdOptions::default().without_default_communities();
    for line in &lines {
        options = options.config_line(line);
    }
    let snmpd = Snmpd::start_with(options);

    let mut redis = Redis::start();
    let dir = tempfile::tempdir().unwrap();
    let _agent = AgentConfig::new(&snmpd)
        .redis("main", &format!("127.0.0.1:{}", redis.port()), "")
        .table(&puppet_fixture_section(dir.path(), "c_failed"))
        .start_quiet(dir.path());

    // The community: Redis, up; nothing of Puppet.
    let community = snmpd.numeric();
    let up = wait_until(Duration::from_secs(10), || {
        community.get_one(&instance_oid(4, 1)).value == "1"
    });
    assert!(up, "redisInstanceState.1 over the community is not up(1)");
    let puppet = community.bulkwalk(PUPPET_ROOT);
    assert!(
        !puppet.stdout.contains(&format!("{PUPPET_ROOT}.")),
        "the community reads PUPPET-AGENT-MIB:\n{puppet}"
    );

    // SNMPv3 with privacy: both MIBs.
    let (ok, text) = walk_v3(&snmpd, "authPriv", &auth, &privacy, PUPPET_ROOT);
    assert!(ok && text.contains(&format!("{PUPPET_ROOT}.")), "{text}");
    let (ok, text) = walk_v3(&snmpd, "authPriv", &auth, &privacy, REDIS_ROOT);
    assert!(
        ok && text.contains(&format!("{REDIS_ROOT}.3.1.1.4.1 = INTEGER: 1")),
        "{text}"
    );
    // Without privacy, or with a wrong passphrase: nothing.
    let (_, text) = walk_v3(&snmpd, "authNoPriv", &auth, &privacy, PUPPET_ROOT);
    assert!(!text.contains(&format!("{PUPPET_ROOT}.")), "{text}");
    let (ok, text) = walk_v3(
        &snmpd,
        "authPriv",
        "wrong-pass-phrase",
        &privacy,
        PUPPET_ROOT,
    );
    assert!(!ok && !text.contains(&format!("{PUPPET_ROOT}.")), "{text}");

    // A notification, as an encrypted SNMPv3 inform the manager accepts.
    redis.stop();
    let received = wait_until(Duration::from_secs(20), || {
        !trapd.received("redisInstanceDown").is_empty()
    });
    assert!(
        received,
        "no redisInstanceDown reached the SNMPv3 manager:\n{}\n--- snmpd ---\n{}",
        trapd.log(),
        tail(&snmpd.log(), 20)
    );
}
