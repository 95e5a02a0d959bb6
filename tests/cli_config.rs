//! The command line and the configuration file, as an operator meets them:
//! mistakes are refused before anything starts, with a message that names
//! the file, the line and the key.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(testkit::agent_bin())
        .args(args)
        .output()
        .expect("running redis-snmp");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_bad_configuration_names_file_line_and_key_and_exits_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("redis-snmp.toml");
    std::fs::write(
        &path,
        "refresh = 10\n\n[[redis]]\naddress = \"redis://127.0.0.1:6379\"\ntimeuot = 2\n",
    )
    .unwrap();
    let (code, _, stderr) = run(&["-n", "-c", path.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("redis-snmp.toml"), "{stderr}");
    assert!(stderr.contains("line 5"), "{stderr}");
    assert!(stderr.contains("timeuot"), "{stderr}");

    std::fs::write(&path, "[[redis]]\naddress = \"redis://127.0.0.1:0\"\n").unwrap();
    let (code, _, stderr) = run(&["-n", "-c", path.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("redis[0].address"), "{stderr}");

    let (code, _, stderr) = run(&["-n", "-c", "/nonexistent/redis-snmp.toml"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("/nonexistent/redis-snmp.toml"), "{stderr}");

    let (code, _, stderr) = run(&["-n", "-x", "udp:localhost:161"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("udp:localhost:161"), "{stderr}");
}

#[test]
fn help_and_version() {
    let (code, stdout, _) = run(&["--help"]);
    assert_eq!(code, 0);
    for option in [
        "--host",
        "--port",
        "--password-file",
        "--oid",
        "--refresh",
        "--no-daemon",
        "--daemon-pid",
        "--agentx-socket",
        "--config",
        "--puppet",
    ] {
        assert!(
            stdout.contains(option),
            "{option} missing from --help:\n{stdout}"
        );
    }
    let (code, stdout, _) = run(&["-V"]);
    assert_eq!(code, 0);
    assert!(stdout.starts_with("redis-snmp "), "{stdout}");
}

#[test]
fn a_password_file_readable_by_all_draws_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let pw = dir.path().join("pw");
    std::fs::write(&pw, "s3cret-pw\n").unwrap();
    std::fs::set_permissions(&pw, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let snmpd = testkit::Snmpd::start();
    let redis = testkit::Redis::start_with(&["requirepass s3cret-pw"]);
    let agent = testkit::Agent::start(&snmpd, &redis, &["--password-file", pw.to_str().unwrap()]);
    let log = agent.log();
    assert!(log.contains("readable by every user"), "{log}");
    assert!(!log.contains("s3cret-pw"), "{log}");
}

#[test]
fn check_config_says_ok_or_what_is_wrong_without_starting() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("redis-snmp.toml");
    std::fs::write(
        &path,
        "refresh = 10\n[[redis]]\naddress = \"unix:///run/redis.sock\"\n",
    )
    .unwrap();
    let (code, stdout, stderr) = run(&["--check-config", "-c", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("configuration OK"), "{stdout}");
    std::fs::write(&path, "refresh = \"often\"\n").unwrap();
    let (code, _, stderr) = run(&["--check-config", "-c", path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("refresh"), "{stderr}");
}
