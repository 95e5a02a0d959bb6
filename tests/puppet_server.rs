//! Puppet as sites run it: real `puppet agent` runs on this host against a
//! real puppetserver with PuppetDB (Debian 12's packages, in the container
//! `scripts/puppet-server.sh` starts once per test run; testkit's
//! `puppet_server`). Two hosts, web1 (`pp_role` web) and lb1 (`pp_role`
//! haproxy), each with its own directories and a certificate the server's
//! CA signs (`puppet ssl bootstrap`) carrying its role as a trusted fact.
//! web1 exports its balancer member to PuppetDB; lb1 collects it and
//! writes haproxy.cfg: the two hosts share no directory, only the server.
//! A run's `--job-id` is found in its report and in PuppetDB, and PQL finds
//! the hosts of a role. A kick whose command is `puppet agent --job-id
//! {kick}` knows its run's outcome by that id, a run that changed nothing
//! too. Skips, saying why, where the server could not start.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;
use testkit::netns::Network;
use testkit::puppet_server::{balancer_site, AgentHost, AgentRun, Environment, PuppetServer};

/// The site: web1 exports an `haproxy_member` tagged haproxy, lb1 collects
/// every such member into a fragment of `dir` and assembles haproxy.cfg
/// from the fragments (what the concat module does, without the module).
fn site_pp(lb_dir: &Path) -> String {
    balancer_site(
        lb_dir,
        "'haproxy'",
        "  notify { \"${trusted['certname']} has the role ${trusted['extensions']['pp_role']}\": }\n",
    )
}

/// Runs a command; its stdout, or a panic with what it said.
fn run(cmd: &mut Command) -> String {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The DER value of the certificate extension `oid`, as `openssl
/// asn1parse` prints it (the OCTET STRING's hex dump after the OID line).
fn extension_hex(cert: &Path, oid: &str) -> Option<String> {
    let der = tempfile::NamedTempFile::new().expect("tempfile");
    run(Command::new("openssl")
        .args(["x509", "-outform", "DER", "-in"])
        .arg(cert)
        .arg("-out")
        .arg(der.path()));
    let parsed = run(Command::new("openssl")
        .args(["asn1parse", "-inform", "DER", "-i", "-in"])
        .arg(der.path()));
    let mut lines = parsed.lines();
    lines.find(|l| l.contains(&format!(":{oid}")))?;
    let value = lines.next()?;
    Some(value.rsplit_once("[HEX DUMP]:")?.1.trim().to_string())
}

/// The value of a top-level `key: value` line of a YAML report.
fn yaml_field(text: &str, key: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(": "))
        .map(|v| v.trim().trim_matches('"').to_string())
}

/// Waits for web1's export to reach PuppetDB (commands are processed
/// asynchronously), runs lb1, which collects it, and returns the
/// haproxy.cfg it wrote in its own directory.
fn collect(server: &PuppetServer, env: &Environment, lb1: &AgentHost) -> String {
    // In this test's environment: web1's catalog of an earlier run (in
    // another) may still be PuppetDB's for a moment.
    let exported = server.pql_until_found(
        &format!(
            r#"resources[certname, type, title] {{ exported = true and certname = "web1" and type = "Haproxy_member" and environment = "{}" }}"#,
            env.name()
        ),
        Duration::from_secs(60),
    );
    assert!(
        exported.to_string().contains(r#""title":"web1""#),
        "web1's export: {exported}"
    );
    let lb_run = lb1.run(env, None);
    assert_ran("lb1's run", &lb_run, &[2]);
    let cfg_path = lb1.target().join("haproxy.cfg");
    let cfg = std::fs::read_to_string(&cfg_path)
        .unwrap_or_else(|e| panic!("{}: {e}\nlb1's run:\n{}", cfg_path.display(), lb_run.output));
    println!("lb1's haproxy.cfg:\n{cfg}");
    assert!(cfg.starts_with("backend web\n"), "{cfg}");
    cfg
}

fn assert_ran(what: &str, run: &AgentRun, codes: &[i32]) {
    assert!(
        codes.contains(&run.code),
        "{what}: exit {} (expected one of {codes:?}):\n{}",
        run.code,
        run.output
    );
}

#[test]
fn web1_exports_its_member_and_lb1_collects_it_through_puppetdb() {
    let Some(server) = PuppetServer::or_skip("puppet_server") else {
        return;
    };
    let _certnames = server.lock_certnames("web1-lb1");
    let web1 = AgentHost::new(&server, "web1", "web");
    let lb1 = AgentHost::new(&server, "lb1", "haproxy");
    let env = server.environment(&site_pp(&lb1.target()));

    // Certificates signed by the server's CA, with the role in them.
    for (host, role) in [(&web1, "web"), (&lb1, "haproxy")] {
        let boot = host.ssl_bootstrap();
        assert_ran(&format!("{} ssl bootstrap", host.certname()), &boot, &[0]);
        let cert = host.certificate();
        let verified = run(Command::new("openssl")
            .arg("verify")
            .arg("-CAfile")
            .arg(server.ca())
            .arg(&cert));
        assert!(verified.contains(": OK"), "{verified}");
        let subject = run(Command::new("openssl")
            .args(["x509", "-noout", "-subject", "-in"])
            .arg(&cert));
        assert!(
            subject.contains(&format!("CN = {}", host.certname())),
            "{subject}"
        );
        // pp_role: a DER UTF8String (0C, its length, the bytes).
        let want = format!(
            "0C{:02X}{}",
            role.len(),
            role.bytes().map(|b| format!("{b:02X}")).collect::<String>()
        );
        assert_eq!(
            extension_hex(&cert, "1.3.6.1.4.1.34380.1.1.13").as_deref(),
            Some(want.as_str()),
            "pp_role in {}'s certificate",
            host.certname()
        );
    }

    // web1's run, kicked as job K1: the id is in its report (not in the
    // summary) and in PuppetDB with the same run's transaction.
    let web_run = web1.run(&env, Some("K1"));
    assert_ran("web1's run", &web_run, &[2]);
    assert!(
        web_run.output.contains("web1 has the role web"),
        "{}",
        web_run.output
    );
    let report = web_run.report_text();
    assert_eq!(
        yaml_field(&report, "job_id").as_deref(),
        Some("K1"),
        "job_id in {}",
        web_run.report.display()
    );
    let uuid = yaml_field(&report, "transaction_uuid").expect("transaction_uuid in the report");
    let summary = std::fs::read_to_string(&web_run.summary).expect("last_run_summary.yaml");
    assert!(
        !summary.contains("K1"),
        "the summary has no job id:\n{summary}"
    );
    // This run's report (PuppetDB stores it asynchronously; a server
    // reused by an earlier run has other K1s of web1).
    let reports = server.pql_until_found(
        &format!(
            r#"reports[certname, job_id, transaction_uuid, status] {{ transaction_uuid = "{uuid}" }}"#
        ),
        Duration::from_secs(60),
    );
    let stored = &reports[0];
    assert_eq!(stored["certname"], "web1", "{reports}");
    assert_eq!(stored["job_id"], "K1", "{reports}");
    assert_eq!(stored["status"], "changed", "{reports}");
    let k1 = server
        .pql(r#"reports[certname, transaction_uuid] { job_id = "K1" }"#)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        k1.to_string().contains(&uuid),
        "job K1 finds web1's run: {k1}"
    );

    // The hosts of a role, as a PQL inventory query finds them.
    let webs = server.pql_until_found(
        r#"inventory[certname] { trusted.extensions.pp_role = "web" }"#,
        Duration::from_secs(60),
    );
    let names: Vec<&str> = webs
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["certname"].as_str())
        .collect();
    assert!(names.contains(&"web1"), "role web: {webs}");
    assert!(!names.contains(&"lb1"), "role web: {webs}");

    let cfg = collect(&server, &env, &lb1);
    assert!(
        cfg.lines()
            .any(|l| l.trim_start().starts_with("server web1 ") && l.ends_with(":80 check")),
        "haproxy.cfg lists web1:\n{cfg}"
    );
    // A second run of lb1 changes nothing: the member is stable.
    let again = lb1.run(&env, None);
    assert_ran("lb1's second run", &again, &[0]);
}

/// The same site with each host in a network namespace of its own (as
/// `tests/kick_hosts.rs` has them), reaching the server through their
/// switch by the name `puppet`: web1's member carries its own address.
#[test]
fn hosts_in_network_namespaces_reach_the_server_through_their_switch() {
    let test = "puppet_server hosts in namespaces";
    let Some(server) = PuppetServer::or_skip(test) else {
        return;
    };
    let Some(net) = Network::new_or_skip(test, &["web1", "lb1"]) else {
        return;
    };
    let uplink = server.uplink(&net);
    let _certnames = server.lock_certnames("web1-lb1");
    let web1 = AgentHost::in_host(&uplink, net.host("web1"), "web");
    let lb1 = AgentHost::in_host(&uplink, net.host("lb1"), "haproxy");
    let env = server.environment(&site_pp(&lb1.target()));
    for host in [&web1, &lb1] {
        let boot = host.ssl_bootstrap();
        assert_ran(&format!("{} ssl bootstrap", host.certname()), &boot, &[0]);
    }
    let web_run = web1.run(&env, None);
    assert_ran("web1's run", &web_run, &[2]);
    let cfg = collect(&server, &env, &lb1);
    let want = format!("    server web1 {}:80 check", net.host("web1").address());
    assert!(
        cfg.lines().any(|l| l == want),
        "haproxy.cfg lists {want:?}:\n{cfg}"
    );
}

/// Issue 33 item 2 with a real agent and server: the kick gives the run
/// its id (`--job-id {kick}`), Puppet writes it into the report, the
/// host's agent serves it and sends it in `puppetRunFinished`, and the kick
/// shows the run's outcome by it: a run that changed nothing is
/// "succeeded (no change)", and PuppetDB stores the run under the id.
#[test]
fn a_kicked_agent_run_is_known_by_its_job_id() {
    use testkit::kick::{resource_varbinds, KickSite, PuppetNode, RESOURCE_CHANGED};
    use testkit::{wait_until, SnmpClient, Snmptrapd, UsmUser};
    let Some(server) = PuppetServer::or_skip("a_kicked_agent_run_is_known_by_its_job_id") else {
        return;
    };
    let environment = server.environment("node default { }\n");
    let host = AgentHost::new(&server, "jobs1", "web");
    assert_eq!(host.ssl_bootstrap().code, 0);
    let mut argv = host.kick_argv(&environment);
    argv.extend(["--job-id".to_string(), "{kick}".to_string()]);
    let command: Vec<String> = argv.iter().map(|a| format!("{a:?}")).collect();
    let site = KickSite::new(|_| {
        format!(
            "kick_command = [{}]\ntimeout = 300\n[addresses]\n\"jobs1\" = [\"127.0.0.1\"]\n\
             [[role]]\nname = \"web\"\nhosts = [\"jobs1\"]\n",
            command.join(", ")
        )
    });
    let trapd = Snmptrapd::start_with_access(&site.snmptrapd_lines());
    let (public, state) = host.run_file_dirs();
    // A first run, the agent's baseline.
    assert_eq!(host.run(&environment, None).code, 0);
    let _node = PuppetNode::following(&trapd, &public, &state);
    let asked = SnmpClient::new(trapd.port())
        .numeric()
        .opt("--clientaddr=127.0.0.1")
        .usm(&UsmUser::documented())
        .inform(
            RESOURCE_CHANGED,
            &resource_varbinds("Notify", "kick -> web"),
        );
    assert!(asked.status.success(), "{asked:?}");
    let known = wait_until(Duration::from_secs(180), || {
        site.status_lines("jobs1")
            .iter()
            .any(|l| l.contains("succeeded (no change)"))
    });
    assert!(known, "{}\n{}", site.status(), trapd.log());
    // The id the kick gave is the one the run's end carried, and PuppetDB
    // stores that run under it.
    let log = trapd.log();
    let job = log
        .split("puppetLastRunJobId.0 = STRING: ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| c == '|' || c.is_whitespace()).next())
        .filter(|id| !id.is_empty())
        .unwrap_or_else(|| panic!("no job id in a run end: {log}"));
    assert!(
        std::fs::read_to_string(host.run_file_dirs().1.join("last_run_report.yaml"))
            .unwrap()
            .contains(&format!("job_id: {job}")),
        "the report does not name {job}"
    );
    let stored = server.pql_until_found(
        &format!("reports[certname, job_id, status] {{ job_id = \"{job}\" }}"),
        Duration::from_secs(60),
    );
    assert!(stored.to_string().contains("jobs1"), "{stored}");
    println!("{}", site.status());
}
