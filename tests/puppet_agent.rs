//! Issue 4 end to end: real `puppet apply` runs in a private Puppet, the
//! agent watching its files, the values through a real snmpd, and the
//! notifications at a real snmptrapd, decoded by name with our MIBs.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::time::{Duration, Instant};
use testkit::{wait_until, Agent, AgentConfig, PuppetApply, Snmpd, Snmptrapd};

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
    let snmpd = Snmpd::sending_to(&trapd);
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

/// The notifications named exactly `name` (not those whose name only
/// starts with it: puppetRunStorm and puppetRunStormCleared).
fn traps(stack: &Stack, name: &str) -> Vec<String> {
    let exact = format!("PUPPET-AGENT-MIB::{name}");
    stack
        .trapd
        .received(name)
        .into_iter()
        .filter(|l| {
            l.match_indices(&exact).any(|(at, m)| {
                !l[at + m.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphanumeric())
            })
        })
        .collect()
}

/// Waits up to `timeout` for the first notification named exactly `name`.
fn expect_exact(stack: &Stack, name: &str, timeout: Duration) -> String {
    let mut line = None;
    wait_until(timeout, || {
        line = traps(stack, name).into_iter().next();
        line.is_some()
    });
    line.unwrap_or_else(|| panic!("no {name}; snmptrapd log:\n{}", stack.trapd.log()))
}

/// Processes a manifest started in the background: stopped by PID (from
/// the file the manifest writes them to) when the test ends.
struct Spawned(std::path::PathBuf);

impl Drop for Spawned {
    fn drop(&mut self) {
        for pid in std::fs::read_to_string(&self.0).unwrap_or_default().lines() {
            if let Ok(pid) = pid.trim().parse::<i32>() {
                // SAFETY: kill(2) on a PID this test's manifest started.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
        }
    }
}

#[test]
fn an_exec_that_reruns_puppet_is_not_converging_until_it_stops() {
    let stack = stack_with("converge_runs = 3");
    let t = stack.puppet.target().display().to_string();
    let _spawned = Spawned(stack.puppet.target().join("pids"));
    // The manifest's own `puppet apply`, for the exec to start again.
    let rerun = stack.puppet.apply_args("rerun", "", &[]).join(" ");
    // The exec counts its runs and starts the next `puppet apply` once the
    // run that started it has ended (its shell's parent is that Puppet), as
    // a "re-run Puppet until it converges" exec does. It stops after three:
    // the fourth run changes nothing.
    let manifest = format!(
        "file {{ '{t}/stable.txt': ensure => file, content => \"stable\\n\" }}\n\
         exec {{ 'rerun-puppet':\n\
           provider => shell,\n\
           unless => 'test \"$(cat {t}/count 2>/dev/null | wc -l)\" -ge 3',\n\
           command => 'echo run >> {t}/count; (while kill -0 $PPID 2>/dev/null; do sleep 0.2; done; \
                       puppet {rerun} > {t}/rerun.log 2>&1; echo $? >> {t}/exits) </dev/null >/dev/null 2>&1 & \
                       echo $! >> {t}/pids',\n\
         }}\n"
    );
    let (code, _) = stack.puppet.apply("rerun", &manifest, &[]);
    assert_eq!(code, 2, "the first run changes the file and runs the exec");

    let line = expect_exact(&stack, "puppetNotConverging", Duration::from_secs(90));
    println!("{line}");
    assert!(line.contains("puppetChangingRuns.0 = Gauge32: 3"), "{line}");
    assert!(line.contains("puppetConvergeRuns.0 = Gauge32: 3"), "{line}");
    assert!(
        line.contains("puppetLoopResourceCount.0 = Gauge32: 1"),
        "{line}"
    );
    // The exec changed every time; the file only in the first run.
    assert!(line.contains("Exec[rerun-puppet]"), "{line}");
    assert!(!line.contains("stable.txt"), "{line}");

    let line = expect_exact(&stack, "puppetConverged", Duration::from_secs(60));
    assert!(line.contains("puppetChangingRuns.0 = Gauge32: 0"), "{line}");
    // The fourth run's `puppet apply` exits just after writing its files.
    let exits = || std::fs::read_to_string(format!("{t}/exits")).unwrap_or_default();
    wait_until(Duration::from_secs(30), || exits().lines().count() == 3);
    let exits = exits();
    assert_eq!(
        exits.lines().collect::<Vec<_>>(),
        ["2", "2", "0"],
        "runs 2 and 3 ran the exec, run 4 changed nothing"
    );
    assert_eq!(get(&stack, "1.45.0"), "4", "runs observed");
    assert_eq!(get(&stack, "1.46.0"), "0", "changing runs in a row");
    assert_eq!(get(&stack, "1.50.0"), "\"\"", "no loop any more");
    assert_eq!(traps(&stack, "puppetNotConverging").len(), 1, "sent once");
}

#[test]
fn manifests_that_kick_each_other_are_a_loop_and_a_run_storm() {
    // Quick runs: closer than 30 s. The test's runs follow each other at
    // the pace of `puppet apply` (3 to 10 s here), as a kick loop does.
    let stack = stack_with("converge_runs = 3\nmin_run_interval = 30");
    let t = stack.puppet.target().display().to_string();
    // Node A's run kicks B's, whose run kicks A's, on one shared file: each
    // run puts its own content back. Played here as alternate runs on the
    // same run files.
    let node = |me: &str, other: &str| {
        format!(
            "file {{ '{t}/shared.conf': ensure => file, content => \"written by {me}\\n\" }}\n\
             notify {{ 'kick -> {other}': }}\n"
        )
    };
    for (name, me, other) in [("a", "A", "B"), ("b", "B", "A"), ("a", "A", "B")] {
        let (code, _) = stack.puppet.apply(name, &node(me, other), &[]);
        assert_eq!(code, 2);
    }
    let line = expect_exact(&stack, "puppetNotConverging", Duration::from_secs(10));
    println!("{line}");
    // The file changed in every run; each notify in every other one only.
    assert!(line.contains(&format!("File[{t}/shared.conf]")), "{line}");
    assert!(!line.contains("Notify["), "{line}");
    assert!(
        line.contains("puppetLoopResourceCount.0 = Gauge32: 1"),
        "{line}"
    );
    let line = expect_exact(&stack, "puppetRunStorm", Duration::from_secs(10));
    println!("{line}");
    let interval: u64 = get(&stack, "1.48.0").parse().unwrap();
    assert!(interval < 30, "{interval}");
    assert!(
        line.contains(&format!("puppetRunInterval.0 = Gauge32: {interval}")),
        "{line}"
    );
    assert!(line.contains("puppetRunsLastHour.0 = Gauge32: 3"), "{line}");
    assert_eq!(get(&stack, "1.47.0"), "3", "runs in the last hour");

    // The kicks stop: a run that leaves the file as it is and kicks nobody.
    let settled =
        format!("file {{ '{t}/shared.conf': ensure => file, content => \"written by A\\n\" }}\n");
    let (code, end) = stack.puppet.apply("settled", &settled, &[]);
    assert_eq!(code, 0);
    expect_exact(&stack, "puppetConverged", Duration::from_secs(10));
    assert!(
        traps(&stack, "puppetRunStormCleared").is_empty(),
        "still quick"
    );
    // Quiet for min_run_interval: the storm is over.
    let line = expect_exact(&stack, "puppetRunStormCleared", Duration::from_secs(60));
    let after = end.elapsed();
    println!("puppetRunStormCleared {after:?} after the last run ended");
    // last_run is whole seconds, and the check runs every 7.5 s.
    assert!(after >= Duration::from_secs(28), "{after:?}");
    assert!(line.contains("puppetRunsLastHour.0 = Gauge32: 4"), "{line}");
    assert_eq!(traps(&stack, "puppetRunStorm").len(), 1, "sent once");
}
