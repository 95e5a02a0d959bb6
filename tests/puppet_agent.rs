//! Issue 4 end to end: real `puppet apply` runs in a private Puppet, the
//! agent watching its files, the values through a real snmpd, and the
//! notifications at a real snmptrapd, decoded by name with our MIBs.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::time::{Duration, Instant};
use testkit::{wait_until, Agent, AgentConfig, PuppetApply, Snmpd, SnmpdOptions, Snmptrapd};

const PUPPET_ROOT: &str = ".1.3.6.1.4.1.20267.401";

struct Stack {
    trapd: Snmptrapd,
    snmpd: Snmpd,
    puppet: PuppetApply,
    _agent: Agent,
    _dir: tempfile::TempDir,
}

fn stack() -> Stack {
    stack_with("")
}

/// The stack, with extra lines for the agent's `[puppet]` section.
fn stack_with(puppet_extra: &str) -> Stack {
    let trapd = Snmptrapd::start();
    let snmpd = Snmpd::start_with(SnmpdOptions::default().config_line(&trapd.trap2sink_line()));
    let puppet = PuppetApply::new();
    let dir = tempfile::tempdir().unwrap();
    // No Redis here: the instance is down, which is fine for this test.
    let agent = AgentConfig::new(&snmpd)
        .redis("main", "127.0.0.1:1", "")
        .puppet(&puppet, puppet_extra)
        .start(dir.path());
    Stack {
        trapd,
        snmpd,
        puppet,
        _agent: agent,
        _dir: dir,
    }
}

fn get(stack: &Stack, suffix: &str) -> String {
    stack
        .snmpd
        .numeric()
        .get_one(&format!("{PUPPET_ROOT}.{suffix}"))
        .value
}

/// Waits for the `nth` (from 1) notification whose line contains `name`.
fn expect_trap(stack: &Stack, name: &str, nth: usize, since: Instant) -> (String, Duration) {
    let mut line = None;
    // Stale takes its threshold to show; the rest well under a second.
    wait_until(Duration::from_secs(8), || {
        line = stack.trapd.received(name).into_iter().nth(nth - 1);
        line.is_some()
    });
    let line =
        line.unwrap_or_else(|| panic!("no {name} #{nth}; snmptrapd log:\n{}", stack.trapd.log()));
    (line, since.elapsed())
}

#[test]
fn runs_show_as_values_and_notifications() {
    let stack = stack();
    let t = stack.puppet.target().display().to_string();

    // A run that changes two resources.
    let manifest = format!(
        "file {{ '{t}/managed.txt': ensure => file, content => \"one\\n\", mode => '0644' }}\n\
         notify {{ 'hello': message => 'hello from the test' }}\n"
    );
    let (code, end) = stack.puppet.apply("changed", &manifest, &[]);
    assert_eq!(code, 2);
    let (line, after) = expect_trap(&stack, "puppetRunChanged", 1, end);
    println!("puppetRunChanged arrived {after:?} after puppet apply exited");
    assert!(after < Duration::from_secs(2), "{after:?}");
    assert!(
        line.contains("puppetLastRunStatus.0 = INTEGER: changed(2)"),
        "{line}"
    );
    assert!(
        line.contains("puppetResourcesChanged.0 = Gauge32: 2"),
        "{line}"
    );
    // The values match the files.
    let summary =
        std::fs::read_to_string(stack.puppet.public_dir().join("last_run_summary.yaml")).unwrap();
    let last_run: u64 = summary
        .lines()
        .find_map(|l| l.trim().strip_prefix("last_run: "))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(get(&stack, "1.1.0"), last_run.to_string());
    assert_eq!(get(&stack, "1.3.0"), "2");
    assert_eq!(get(&stack, "1.5.0"), "2");
    assert_eq!(get(&stack, "1.31.0"), "2"); // run mode user(2): puppet apply
    assert!(get(&stack, "1.2.0").parse::<u64>().unwrap() < 60);

    // A run whose exec fails and whose dependent is skipped.
    let manifest = format!(
        "file {{ '{t}/managed.txt': ensure => file, content => \"one\\n\", mode => '0644' }}\n\
         exec {{ 'fails': command => '/bin/false' }}\n\
         notify {{ 'after': message => 'never', require => Exec['fails'] }}\n"
    );
    let (code, end) = stack.puppet.apply("failed", &manifest, &[]);
    assert_eq!(code, 4);
    let (line, after) = expect_trap(&stack, "puppetRunFailed", 1, end);
    println!("puppetRunFailed arrived {after:?} after puppet apply exited");
    assert!(after < Duration::from_secs(2), "{after:?}");
    assert!(
        line.contains("puppetLastRunStatus.0 = INTEGER: failed(3)"),
        "{line}"
    );
    assert!(
        line.contains("puppetResourcesFailed.0 = Gauge32: 1"),
        "{line}"
    );
    assert!(
        line.contains("/bin/false"),
        "the first failure message: {line}"
    );
    // The failed and skipped resources, failures first.
    assert_eq!(get(&stack, "2.1.3.1"), "\"fails\"");
    assert_eq!(get(&stack, "2.1.4.1"), "1"); // failed(1)
    assert_eq!(get(&stack, "2.1.3.2"), "\"after\"");
    assert_eq!(get(&stack, "2.1.4.2"), "3"); // skipped(3)

    // A noop run that finds drift: unchanged, noop pending, and a recovery.
    std::fs::write(format!("{t}/managed.txt"), "drifted\n").unwrap();
    let manifest = format!(
        "file {{ '{t}/managed.txt': ensure => file, content => \"one\\n\", mode => '0644' }}\n"
    );
    let (code, end) = stack.puppet.apply("noop", &manifest, &["--noop"]);
    assert_eq!(code, 0);
    let (line, _) = expect_trap(&stack, "puppetRunRecovered", 1, end);
    assert!(
        line.contains("puppetLastRunStatus.0 = INTEGER: unchanged(1)"),
        "{line}"
    );
    assert_eq!(get(&stack, "1.28.0"), "1"); // noop: true
    assert_eq!(get(&stack, "1.29.0"), "1"); // noop pending: true
                                            // Only the changed run was "changed"; nothing fired twice.
    assert_eq!(
        stack.trapd.received("puppetRunChanged").len(),
        1,
        "{}",
        stack.trapd.log()
    );
    assert_eq!(
        stack.trapd.received("puppetRunFailed").len(),
        1,
        "{}",
        stack.trapd.log()
    );
}

#[test]
fn disabling_the_agent_is_data_and_a_notification() {
    let stack = stack();
    std::fs::create_dir_all(stack.puppet.state_dir()).unwrap();
    // Let the first read (the baseline) happen.
    assert!(wait_until(Duration::from_secs(5), || get(&stack, "1.33.0") == "2"));
    let lock = stack.puppet.state_dir().join("agent_disabled.lock");
    let written = Instant::now();
    std::fs::write(&lock, r#"{"disabled_message":"maintenance window CHG-42"}"#).unwrap();
    let (line, after) = expect_trap(&stack, "puppetAgentDisabled", 1, written);
    println!("puppetAgentDisabled arrived {after:?} after the lock file was written");
    assert!(line.contains("maintenance window CHG-42"), "{line}");
    assert_eq!(get(&stack, "1.33.0"), "1");
    assert_eq!(get(&stack, "1.34.0"), "\"maintenance window CHG-42\"");
    std::fs::remove_file(&lock).unwrap();
    expect_trap(&stack, "puppetAgentEnabled", 1, Instant::now());
    assert_eq!(get(&stack, "1.33.0"), "2");
}

#[test]
fn a_stale_agent_and_its_recovery() {
    let stack = stack_with("stale_after = 3");
    let t = stack.puppet.target().display().to_string();
    let manifest = format!("file {{ '{t}/f.txt': ensure => file, content => \"x\\n\" }}\n");
    let (_, end) = stack.puppet.apply("first", &manifest, &[]);
    // No run for 3 s: stale (checked every second at this threshold).
    let (line, after) = expect_trap(&stack, "puppetAgentStale", 1, end);
    println!("puppetAgentStale arrived {after:?} after the last run ended");
    assert!(
        // last_run is whole seconds: up to one before the real end.
        after >= Duration::from_secs(2) && after < Duration::from_secs(6),
        "{after:?}"
    );
    assert!(line.contains("puppetLastRunAge.0"), "{line}");
    let (_, end) = stack.puppet.apply("second", &manifest, &[]);
    expect_trap(&stack, "puppetAgentStaleCleared", 1, end);
    assert_eq!(
        stack.trapd.received("puppetAgentStale").len(),
        2,
        "Stale and StaleCleared: {}",
        stack.trapd.log()
    );
}
