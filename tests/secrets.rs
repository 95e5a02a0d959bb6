//! Issue 7, secrets and access: a Redis password never shows in `ps`, in
//! /proc/PID/cmdline or /proc/PID/environ of the agent or of a process it
//! started, in the log at the highest verbosity, in SNMP values, or in
//! error texts; whichever way it was given (password_file in the TOML, the
//! environment, `-p`) and also when the agent runs as a daemon. A password
//! file readable by others draws a warning; a password written into the
//! configuration file is refused without being shown. Every object refuses
//! SET with notWritable.
//!
//! Each test uses its own password, made of the test's name and our PID, so
//! that tests running side by side cannot see each other's.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use testkit::*;

const PUPPET_ROOT: &str = ".1.3.6.1.4.1.20267.401";

fn password(tag: &str) -> String {
    format!("Zq{tag}Pw{}x7", std::process::id())
}

fn wait_instance(snmpd: &Snmpd, n: u32, up: bool) -> (String, String) {
    let want = if up { "1" } else { "2" };
    let mut seen = (String::new(), String::new());
    let ok = wait_until(Duration::from_secs(10), || {
        seen = snmpd.instance_state(n);
        // Down with its reason, once the first poll has failed.
        seen.0 == want && (up || !seen.1.is_empty())
    });
    assert!(ok, "instance {n} is not {want} within 10 s: {seen:?}");
    seen
}

/// The PID and every descendant of it (/proc/PID/task/*/children).
fn family(pid: u32) -> Vec<u32> {
    let mut all = vec![pid];
    let mut i = 0;
    while i < all.len() {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", all[i]));
        for task in tasks.into_iter().flatten().flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            all.extend(
                children
                    .split_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok()),
            );
        }
        i += 1;
    }
    all
}

/// Every place a user could look, as (where, text).
fn places(pid: u32, log: &str, snmpd: &Snmpd) -> Vec<(String, String)> {
    let ps = Command::new("ps")
        .args(["-eo", "pid,args"])
        .output()
        .unwrap();
    let mut out = vec![
        (
            "ps -eo pid,args".to_string(),
            String::from_utf8_lossy(&ps.stdout).into_owned(),
        ),
        ("the log".to_string(), log.to_string()),
    ];
    for p in family(pid) {
        for file in ["cmdline", "environ"] {
            let path = format!("/proc/{p}/{file}");
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            out.push((path, String::from_utf8_lossy(&bytes).into_owned()));
        }
    }
    let walk = snmpd
        .numeric()
        .timeout(Duration::from_secs(5))
        .bulkwalk(ENTERPRISE);
    assert!(walk.success(), "{walk}");
    assert!(
        walk.stdout.contains(&instance_oid(7, 1)),
        "the walk has no redisInstanceLastError:\n{walk}"
    );
    out.push((
        "snmpbulkwalk of .1.3.6.1.4.1.20267".to_string(),
        walk.combined(),
    ));
    out
}

/// Asserts that none of `secrets` shows anywhere [`places`] looks.
fn assert_no_leak(pid: u32, log: &str, snmpd: &Snmpd, secrets: &[&str]) {
    let places = places(pid, log, snmpd);
    assert!(
        places.len() >= 5,
        "{:?}",
        places.iter().map(|p| &p.0).collect::<Vec<_>>()
    );
    for (where_, text) in &places {
        for secret in secrets {
            assert!(
                !text.contains(secret),
                "the password {secret} shows in {where_}:\n{text}"
            );
        }
    }
}

fn write_secret(dir: &Path, name: &str, password: &str, mode: u32) -> PathBuf {
    let path = dir.join(name);
    write_file_mode(&path, &format!("{password}\n"), mode);
    path
}

/// `[[redis]]` entries: (name, address, password file).
fn config(dir: &Path, agentx: &str, instances: &[(&str, String, &Path)]) -> PathBuf {
    instances
        .iter()
        .fold(
            AgentConfig::with_agentx(agentx),
            |config, (name, address, file)| {
                config.redis(
                    name,
                    address,
                    &format!("password_file = \"{}\"", file.display()),
                )
            },
        )
        .write(dir)
}

/// The agent in the foreground at the highest verbosity, on the command
/// line's Redis, the password given by `args` or `env`.
fn start_cli(snmpd: &Snmpd, redis: &Redis, args: &[&str], env: &[(&str, &str)]) -> Agent {
    let shared = agent_args(snmpd, redis, 1);
    let mut all = vec!["-n", "-vvv", "--log", "stderr"];
    all.extend(shared.iter().map(String::as_str));
    all.extend_from_slice(args);
    let mut agent = Agent::start_raw(&all, env);
    agent.expect_registered(Duration::from_secs(10));
    agent
}

#[test]
fn password_file_in_the_config_and_every_error_text() {
    let right = password("File");
    let wrong = password("Wrong");
    let redis = Redis::start_with(&[&format!("requirepass {right}")]);
    let snmpd = Snmpd::start();
    let dir = tempfile::tempdir().unwrap();
    let good = write_secret(dir.path(), "good.pw", &right, 0o600);
    let bad = write_secret(dir.path(), "bad.pw", &wrong, 0o600);
    let config = config(
        dir.path(),
        &snmpd.agentx_address(),
        &[
            ("good", redis.address(), &good),
            ("wrong", redis.address(), &bad),
            // TLS to a server that speaks none, and nobody listening.
            ("tls", format!("rediss://{}", redis.address()), &good),
            ("away", format!("127.0.0.1:{}", free_port()), &good),
        ],
    );
    let mut agent = Agent::start_raw(
        &[
            "-n",
            "-vvv",
            "--log",
            "stderr",
            "-c",
            config.to_str().unwrap(),
        ],
        &[],
    );
    agent.expect_registered(Duration::from_secs(10));
    wait_instance(&snmpd, 1, true);
    let errors: Vec<String> = (2..=4).map(|n| wait_instance(&snmpd, n, false).1).collect();
    println!("redisInstanceLastError 2..4: {errors:#?}");
    assert!(errors[0].to_lowercase().contains("auth"), "{errors:?}");
    // -vvv is the trace filter; nothing of ours logs at trace, debug shows.
    assert!(
        agent.log().contains("DEBUG"),
        "not verbose: {}",
        agent.log()
    );
    assert_no_leak(agent.pid(), &agent.log(), &snmpd, &[&right, &wrong]);
}

#[test]
fn password_in_the_environment() {
    let pw = password("Env");
    let redis = Redis::start_with(&[&format!("requirepass {pw}")]);
    let snmpd = Snmpd::start();
    let agent = start_cli(&snmpd, &redis, &[], &[("REDIS_SNMP_PASSWORD", &pw)]);
    wait_instance(&snmpd, 1, true);
    assert_no_leak(agent.pid(), &agent.log(), &snmpd, &[&pw]);
}

#[test]
fn password_on_the_command_line() {
    let pw = password("Argv");
    let redis = Redis::start_with(&[&format!("requirepass {pw}")]);
    let snmpd = Snmpd::start();
    let agent = start_cli(&snmpd, &redis, &["-p", &pw], &[]);
    wait_instance(&snmpd, 1, true);
    assert_no_leak(agent.pid(), &agent.log(), &snmpd, &[&pw]);
}

#[test]
fn a_wrong_password_on_the_command_line() {
    let right = password("Right");
    let wrong = password("Bad");
    let redis = Redis::start_with(&[&format!("requirepass {right}")]);
    let snmpd = Snmpd::start();
    let agent = start_cli(&snmpd, &redis, &[&format!("--password={wrong}")], &[]);
    let (_, error) = wait_instance(&snmpd, 1, false);
    assert!(error.to_lowercase().contains("auth"), "{error}");
    assert_no_leak(agent.pid(), &agent.log(), &snmpd, &[&right, &wrong]);
}

/// A daemon started by us, killed by its PID when dropped.
struct Daemon(u32);

impl Drop for Daemon {
    fn drop(&mut self) {
        // SAFETY: signalling the daemon this test started, by its PID.
        unsafe { libc::kill(self.0 as libc::pid_t, libc::SIGTERM) };
        if !wait_until(Duration::from_secs(5), || !pid_alive(self.0)) {
            unsafe { libc::kill(self.0 as libc::pid_t, libc::SIGKILL) };
        }
    }
}

#[test]
fn daemonized_with_the_password_on_the_command_line_and_in_the_environment() {
    let pw = password("Daemon");
    let decoy = password("Decoy");
    let redis = Redis::start_with(&[&format!("requirepass {pw}")]);
    let snmpd = Snmpd::start();
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("agent.pid");
    let (port, agentx) = (redis.port().to_string(), snmpd.agentx_address());
    let args = [
        "-vvv",
        "-x",
        &agentx,
        "-h",
        "127.0.0.1",
        "-P",
        &port,
        "-r",
        "1",
        "-p",
        &pw,
        "--daemon-pid",
        pid_file.to_str().unwrap(),
    ];
    // -p wins over the environment; neither may show.
    let mut parent = Agent::start_raw(&args, &[("REDIS_SNMP_PASSWORD", &decoy)]);
    let status = parent
        .wait_exit(Duration::from_secs(10))
        .expect("the parent did not exit");
    assert!(status.success(), "{status}: {}", parent.log());
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _daemon = Daemon(pid);
    assert!(pid_alive(pid), "the daemon {pid} is not running");
    wait_instance(&snmpd, 1, true);
    // The daemon's stderr is /dev/null: what the parent printed is all
    // there is to read.
    assert_no_leak(pid, &parent.log(), &snmpd, &[&pw, &decoy]);
    // Without journald the daemon's log would go nowhere: the parent says
    // so while it still has a terminal (with journald, the log goes there).
    let journald = Path::new("/run/systemd/journal/socket").exists();
    assert_eq!(
        parent.log().contains("nothing will be logged"),
        !journald,
        "journald {journald}, the parent printed:\n{}",
        parent.log()
    );
}

fn check_config(config: &Path) -> (i32, String) {
    let out = Command::new(agent_bin())
        .args(["--check-config", "-c", config.to_str().unwrap()])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn a_password_file_named_in_the_config_and_readable_by_all_draws_a_warning() {
    let pw = password("Mode");
    let dir = tempfile::tempdir().unwrap();
    let file = write_secret(dir.path(), "redis.pw", &pw, 0o644);
    let config = config(
        dir.path(),
        "tcp:127.0.0.1:1",
        &[("r", "127.0.0.1:1".into(), &file)],
    );
    let (code, text) = check_config(&config);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("readable by every user") && text.contains("redis.pw"),
        "{text}"
    );
    assert!(!text.contains(&pw), "{text}");
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o640)).unwrap();
    let (code, text) = check_config(&config);
    assert_eq!(code, 0, "{text}");
    assert!(!text.contains("warning"), "{text}");
}

#[test]
fn a_password_written_into_the_config_is_refused_without_being_shown() {
    let pw = password("Inline");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("agent.toml");
    std::fs::write(
        &config,
        format!("[[redis]]\naddress = \"127.0.0.1:1\"\npassword = \"{pw}\"\n"),
    )
    .unwrap();
    let (code, text) = check_config(&config);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("line 3") && text.contains("password_file"),
        "{text}"
    );
    assert!(!text.contains(&pw), "{text}");
}

/// The group an object belongs to: the legacy scalars, each Redis table,
/// the Puppet scalars, the Puppet resource table.
fn group(oid: &str) -> Option<String> {
    let rest = oid.strip_prefix(ENTERPRISE)?.strip_prefix('.')?;
    let arcs: Vec<&str> = rest.split('.').collect();
    let depth = if arcs.get(..2) == Some(&["400", "3"]) {
        3
    } else {
        2
    };
    matches!(arcs[0], "400" | "401").then(|| arcs[..depth].join("."))
}

#[test]
fn set_is_refused_with_not_writable_in_every_group() {
    let redis = Redis::start();
    redis.cli(&["SET", "k", "v"]);
    let snmpd = Snmpd::start();
    let dir = tempfile::tempdir().unwrap();
    let mut agent = AgentConfig::new(&snmpd)
        .redis("main", &redis.address(), "")
        .table(&puppet_fixture_section(dir.path(), "c_failed"))
        .start_quiet(dir.path());
    wait_instance(&snmpd, 1, true);
    assert!(wait_until(Duration::from_secs(5), || snmpd
        .numeric()
        .get_one(&format!("{PUPPET_ROOT}.2.1.2.1"))
        .ty
        == "STRING"));

    // The first object of each group, as a walk finds them.
    let walk = snmpd
        .numeric()
        .timeout(Duration::from_secs(5))
        .bulkwalk(ENTERPRISE);
    let mut firsts: Vec<(String, Var)> = Vec::new();
    for var in walk.vars() {
        if let Some(g) = group(&var.name) {
            if !firsts.iter().any(|(seen, _)| *seen == g) {
                firsts.push((g, var));
            }
        }
    }
    let groups: Vec<&str> = firsts.iter().map(|(g, _)| g.as_str()).collect();
    println!("groups: {groups:?}");
    for must in ["400.1", "400.3.1", "400.3.10", "401.1", "401.2"] {
        assert!(
            groups.contains(&must),
            "no object of {must} in the walk: {groups:?}"
        );
    }
    let private = snmpd.numeric().community("private");
    for (g, var) in &firsts {
        let (ty, value) = if var.ty == "STRING" {
            ("s", "x")
        } else {
            ("u", "5")
        };
        let out = private.set(&var.name, ty, value);
        assert!(
            !out.success() && out.combined().contains("notWritable"),
            "{g}: {out}"
        );
        let now = snmpd.numeric().get_one(&var.name);
        assert_eq!(now.ty, var.ty, "{g}: {now} after the SET");
    }
    assert!(agent.is_running());
}

/// Issue 24 (review L3): a FIFO put where the password file was made the
/// load wait for a writer: SIGHUP and then SIGTERM went unanswered. Now
/// the reload is refused at once, saying why, the running configuration
/// is kept, and SIGTERM ends the agent. `owner` makes a file the agent's.
fn fifo_password_file_against(
    snmpd: &Snmpd,
    dir: &Path,
    owner: impl Fn(&Path),
    start: impl FnOnce(&Path) -> Agent,
) {
    let pw = password("Fifo");
    let redis = Redis::start_with(&[&format!("requirepass {pw}")]);
    let file = write_secret(dir, "main.pw", &pw, 0o600);
    owner(&file);
    let config = config(
        dir,
        &snmpd.agentx_address(),
        &[("main", redis.address(), &file)],
    );
    owner(&config);
    let mut agent = start(&config);
    wait_instance(snmpd, 1, true);
    std::fs::remove_file(&file).unwrap();
    let c_path = std::ffi::CString::new(file.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    owner(&file);
    let refused = agent.reload("reload refused");
    assert!(
        refused.contains("a FIFO, not a regular file") && refused.contains("main.pw"),
        "{refused}"
    );
    // The running configuration is kept, and served.
    wait_instance(snmpd, 1, true);
    agent.signal(libc::SIGTERM);
    assert!(
        agent.wait_exit(Duration::from_secs(3)).is_some(),
        "SIGTERM did not end the agent:\n{}",
        agent.log()
    );
}

#[test]
fn a_fifo_as_password_file_wedges_neither_reload_nor_stop() {
    let snmpd = Snmpd::start();
    let dir = tempfile::tempdir().unwrap();
    fifo_password_file_against(
        &snmpd,
        dir.path(),
        |_| {},
        |config| {
            let mut agent = Agent::start_raw(
                &[
                    "-n",
                    "-v",
                    "--log",
                    "stderr",
                    "-c",
                    config.to_str().unwrap(),
                ],
                &[],
            );
            agent.expect_registered(Duration::from_secs(10));
            agent
        },
    );
}

/// The same under the package's unit as `testkit::unit` applies it (its
/// user, `/proc` options, read-only system, private /tmp, no capabilities;
/// printed); not applied: `SystemCallFilter`, `RestrictAddressFamilies`
/// and systemd's other machinery.
#[test]
fn a_fifo_as_password_file_under_the_units_sandbox() {
    use testkit::unit::{chown_to, UnitSandbox};
    let sandbox = UnitSandbox::of_the_package();
    eprintln!("{}", sandbox.describe());
    assert!(sandbox.applies("User"), "{}", sandbox.describe());
    // AgentX over TCP: a unix socket in /tmp is hidden by PrivateTmp.
    let snmpd = Snmpd::start_tcp();
    let files = sandbox.files_dir(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let user = sandbox.user().to_string();
    fifo_password_file_against(
        &snmpd,
        files.path(),
        |path| {
            chown_to(path, &user);
        },
        |config| sandbox.start_agent(config),
    );
}
