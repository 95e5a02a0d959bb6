//! Targets by PuppetDB, against the real server (testkit's
//! `puppet_server`: Debian 12's puppetserver and PuppetDB, started once
//! per test run by `scripts/puppet-server.sh`):
//!
//! - a `[[role]]` that gives a PQL `query` (with `puppetdb = "https://…"`
//!   and a client certificate the Puppet CA signed) kicks exactly the
//!   hosts PuppetDB names by their certificates' `pp_role`; the handler
//!   answers at once, the query is made off its path; a PuppetDB that is
//!   silent or speaks no TLS leaves a refusal with the reason, and nothing
//!   runs;
//! - the seeds' scenario, every part real: web1 (its own network
//!   namespace, `pp_role` web) runs `puppet agent` against the server,
//!   exports its balancer member and asks `kick -> haproxy`; its
//!   redis-snmp agent's notification reaches the manager's snmptrapd and
//!   `redis-snmp kick`, which asks PuppetDB for the role's hosts and runs
//!   `puppet agent --onetime --job-id {kick}` in lb1 (`pp_role` lb, its
//!   own namespace); lb1 collects web1's member into haproxy.cfg and
//!   `kick --status` shows the kick succeeded (changed), matched by the
//!   job id.
//!
//! Skips, saying why, where the server could not start.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};
use testkit::kick::{
    recording_command, KickSite, PuppetNode, EVENT_TITLE, EVENT_TYPE, RESOURCE_CHANGED,
};
use testkit::netns::Network;
use testkit::puppet_server::{balancer_site, AgentHost, PuppetServer, UPLINK_ADDRESS};
use testkit::{wait_until, Snmptrapd};

/// kick.toml's PuppetDB lines: `url`, and `manager`'s certificate, key
/// and CA as the client's.
fn puppetdb_lines(url: &str, manager: &AgentHost, timeout: u64) -> String {
    format!(
        "puppetdb = \"{url}\"\npuppetdb_cert = \"{}\"\npuppetdb_key = \"{}\"\n\
         puppetdb_ca = \"{}\"\npuppetdb_timeout = {timeout}\n",
        manager.certificate().display(),
        manager.private_key().display(),
        manager.ca_certificate().display()
    )
}

/// A `kick -> ROLE` notification from 127.0.0.1 as snmptrapd hands it to
/// the handler.
fn asks_for(role: &str) -> String {
    format!(
        "sender\nUDP: [127.0.0.1]:40000->[127.0.0.1]:162\n\
         .1.3.6.1.6.3.1.1.4.1.0 {RESOURCE_CHANGED}\n\
         {EVENT_TYPE} \"Notify\"\n{EVENT_TITLE} \"kick -> {role}\"\n"
    )
}

/// Bootstraps each host's certificate (in parallel: each takes seconds).
fn bootstrap(hosts: &[&AgentHost]) {
    std::thread::scope(|s| {
        for host in hosts {
            s.spawn(move || {
                let boot = host.ssl_bootstrap();
                assert_eq!(boot.code, 0, "{}: {}", host.certname(), boot.output);
            });
        }
    });
}

#[test]
fn a_role_by_query_kicks_the_hosts_puppetdb_names_by_their_role() {
    let test = "a_role_by_query_kicks_the_hosts_puppetdb_names_by_their_role";
    let Some(server) = PuppetServer::or_skip(test) else {
        return;
    };
    // Names of this run only: PuppetDB keeps the hosts of earlier runs.
    let run = std::process::id();
    let (lb, other) = (format!("lb{run}"), format!("db{run}"));
    let lb_a = AgentHost::new(&server, &format!("pdbq-a-{run}"), &lb);
    let lb_b = AgentHost::new(&server, &format!("pdbq-b-{run}"), &lb);
    let db = AgentHost::new(&server, &format!("pdbq-c-{run}"), &other);
    let manager = AgentHost::new(&server, &format!("kick-manager-{run}"), "manager");
    bootstrap(&[&lb_a, &lb_b, &db, &manager]);
    // One run each puts the host, its trusted facts with them, into
    // PuppetDB's inventory.
    let env = server.environment("node default { }\n");
    std::thread::scope(|s| {
        for host in [&lb_a, &lb_b, &db] {
            let env = &env;
            s.spawn(move || {
                let ran = host.run(env, None);
                assert!(matches!(ran.code, 0 | 2), "{}", ran.output);
            });
        }
    });
    let query = format!("inventory[certname] {{ trusted.extensions.pp_role = \"{lb}\" }}");
    let both = wait_until(Duration::from_secs(60), || {
        server
            .pql(&query)
            .is_ok_and(|a| a.as_array().is_some_and(|rows| rows.len() == 2))
    });
    assert!(both, "PuppetDB: {:?}", server.pql(&query));

    let pdb = format!("https://{}:8081", server.address());
    let site = KickSite::new(|dir| {
        format!(
            "{}{}[addresses]\n\"sender\" = [\"127.0.0.1\"]\n\
             [[role]]\nname = \"lb\"\nquery = '{query}'\n\
             [[role]]\nname = \"nobody\"\nquery = 'inventory[certname] {{ trusted.extensions.pp_role = \"none{run}\" }}'\n",
            recording_command(dir, 0),
            puppetdb_lines(&pdb, &manager, 10),
        )
    });
    // The handler answers snmptrapd without waiting for PuppetDB.
    let (out, took) = site.handle(&asks_for("lb"));
    assert!(out.status.success(), "{out:?}");
    println!("the handler of a role by query returned in {took:?}");
    assert!(took < Duration::from_millis(100), "{took:?}");
    let kicked = wait_until(Duration::from_secs(30), || site.kicked().len() >= 2);
    assert!(kicked, "{:?}\n{}", site.kicked(), site.status());
    let mut want = vec![
        format!("{} lb", lb_a.certname()),
        format!("{} lb", lb_b.certname()),
    ];
    want.sort();
    assert_eq!(site.kicked(), want, "{}", site.status());
    // A query that names no host kicks nothing, and says so.
    let (out, _) = site.handle(&asks_for("nobody"));
    assert!(out.status.success(), "{out:?}");
    let said = wait_until(Duration::from_secs(30), || {
        site.status_lines("nobody")
            .iter()
            .any(|l| l.contains("PuppetDB: the query names no host"))
    });
    assert!(said, "{}", site.status());
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(site.kicked(), want, "{}", site.status());
    println!("{}", site.status());
}

/// A PuppetDB that accepts and says nothing, and one that speaks no TLS:
/// each request ends in a refusal naming why, within puppetdb_timeout,
/// and kicks nothing.
#[test]
fn a_silent_or_garbled_puppetdb_kicks_nothing_and_says_why() {
    let test = "a_silent_or_garbled_puppetdb_kicks_nothing_and_says_why";
    let Some(server) = PuppetServer::or_skip(test) else {
        return;
    };
    let manager = AgentHost::new(
        &server,
        &format!("kick-manager-{}", std::process::id()),
        "manager",
    );
    bootstrap(&[&manager]);
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let garbled = TcpListener::bind("127.0.0.1:0").unwrap();
    let ports = [
        silent.local_addr().unwrap().port(),
        garbled.local_addr().unwrap().port(),
    ];
    let _held = std::thread::spawn(move || {
        let mut kept = Vec::new();
        while let Ok((s, _)) = silent.accept() {
            kept.push(s);
        }
    });
    std::thread::spawn(move || {
        use std::io::Write;
        while let Ok((mut s, _)) = garbled.accept() {
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n[]");
        }
    });
    for (port, reason) in ports.iter().zip(["within puppetdb_timeout", "TLS failed"]) {
        let site = KickSite::new(|dir| {
            format!(
                "{}{}[addresses]\n\"sender\" = [\"127.0.0.1\"]\n\
                 [[role]]\nname = \"lb\"\nquery = 'inventory[certname] {{ trusted.extensions.pp_role = \"lb\" }}'\n",
                recording_command(dir, 0),
                puppetdb_lines(&format!("https://127.0.0.1:{port}"), &manager, 2),
            )
        });
        let started = Instant::now();
        let (out, took) = site.handle(&asks_for("lb"));
        assert!(out.status.success(), "{out:?}");
        assert!(took < Duration::from_millis(100), "{took:?}");
        let refused = wait_until(Duration::from_secs(10), || {
            site.status_lines("PuppetDB:")
                .iter()
                .any(|l| l.contains(reason))
        });
        assert!(refused, "{}", site.status());
        println!(
            "PuppetDB at port {port}: refused after {:?}: {}",
            started.elapsed(),
            site.status_lines("PuppetDB:").join("")
        );
        assert!(site.kicked().is_empty(), "{:?}", site.kicked());
    }
}

/// The site: web1 exports an `haproxy_member` tagged for this
/// environment and asks `kick -> haproxy` once its web server (here a
/// pause: PuppetDB stores web1's catalog, exports included, a moment
/// after it was compiled) is up; lb1 collects every such member into a
/// fragment of `lb_dir` and assembles haproxy.cfg from the fragments
/// (what the concat module does, without the module).
fn site_pp(lb_dir: &Path) -> String {
    balancer_site(
        lb_dir,
        "\"haproxy_${server_facts['environment']}\"",
        "  exec { 'start the web server': command => '/bin/sleep 3' }\n  -> notify { 'kick -> haproxy': }\n",
    )
}

#[test]
fn web1s_run_kicks_lb1_found_by_puppetdb_and_lb1_collects_web1() {
    let test = "web1s_run_kicks_lb1_found_by_puppetdb_and_lb1_collects_web1";
    let Some(server) = PuppetServer::or_skip(test) else {
        return;
    };
    let Some(net) = Network::new_or_skip(test, &["web1", "lb1", "mgr"]) else {
        return;
    };
    let uplink = server.uplink(&net);
    // The manager reaches PuppetDB and nothing else beyond the network:
    // with a default route into the switch, snmptrapd's look-up of each
    // sender's name would wait for a name server it cannot reach (seconds
    // per notification, informs sent again and again); without one it
    // fails at once, as in the other tests' networks.
    let mgr = net.host("mgr").netns();
    let via = UPLINK_ADDRESS.to_string();
    let to_server = format!("{}/32", server.address());
    for args in [
        vec!["-n", mgr, "route", "del", "default"],
        vec!["-n", mgr, "route", "add", &to_server, "via", &via],
    ] {
        let done = std::process::Command::new("ip").args(&args).status();
        assert!(done.is_ok_and(|s| s.success()), "ip {}", args.join(" "));
    }
    let _certnames = server.lock_certnames("web1-lb1");
    let web1 = AgentHost::in_host(&uplink, net.host("web1"), "web");
    let lb1 = AgentHost::in_host(&uplink, net.host("lb1"), "lb");
    let manager = AgentHost::new(&server, "kick-manager", "manager");
    bootstrap(&[&web1, &lb1, &manager]);
    let env = server.environment(&site_pp(&lb1.target()));
    // web1's first run, elsewhere: its plugins synced (hundreds of files
    // that would each be an event of the run that matters).
    let plain = server.environment("node default { }\n");
    let synced = web1.run(&plain, None);
    assert!(matches!(synced.code, 0 | 2), "{}", synced.output);
    // lb1's first run: its role into PuppetDB, no member yet.
    let first = lb1.run(&env, None);
    assert_eq!(first.code, 2, "{}", first.output);
    let cfg_path = lb1.target().join("haproxy.cfg");
    let listed = |cfg: &str| {
        let want = format!("    server web1 {}:80 check", net.host("web1").address());
        cfg.lines().any(|l| l == want)
    };
    assert!(!listed(
        &std::fs::read_to_string(&cfg_path).unwrap_or_default()
    ));
    let lbs = server.pql_until_found(
        r#"inventory[certname] { trusted.extensions.pp_role = "lb" }"#,
        Duration::from_secs(60),
    );
    println!("PuppetDB's hosts of role lb: {lbs}");

    // The manager: PuppetDB reached at the address its certificate names
    // (through the network's uplink), the kick running lb1's agent in
    // lb1's namespace with the kick's id as the run's job id.
    let mut argv = lb1.kick_argv(&env);
    argv.extend(["--job-id".to_string(), "{kick}".to_string()]);
    let command: Vec<String> = argv.iter().map(|a| format!("{a:?}")).collect();
    let pdb = format!("https://{}:8081", server.address());
    let site = KickSite::new(|_| {
        format!(
            // lb1 is no configured host: PuppetDB names it, and its
            // kicked run's end is known by the job id it carries.
            "kick_command = [{}]\ntimeout = 300\n{}[addresses]\n\
             \"web1\" = [\"{}\"]\n\
             [[role]]\nname = \"haproxy\"\n\
             query = 'inventory[certname] {{ trusted.extensions.pp_role = \"lb\" }}'\n",
            command.join(", "),
            puppetdb_lines(&pdb, &manager, 10),
            net.host("web1").address(),
        )
    });
    let trapd = Snmptrapd::start_in(net.host("mgr"), &site.snmptrapd_lines());
    let (web_public, web_state) = web1.run_file_dirs();
    let web_node = PuppetNode::in_host_following(net.host("web1"), &trapd, &web_public, &web_state);
    let (lb_public, lb_state) = lb1.run_file_dirs();
    let lb_node = PuppetNode::in_host_following(net.host("lb1"), &trapd, &lb_public, &lb_state);

    let changed = Instant::now();
    let web_run = web1.run_logging(&env, None, Some(web_node.events()));
    assert_eq!(web_run.code, 2, "{}", web_run.output);
    let collected = wait_until(Duration::from_secs(180), || {
        listed(&std::fs::read_to_string(&cfg_path).unwrap_or_default())
    });
    assert!(
        collected,
        "haproxy.cfg: {:?}\n{}\n{}",
        std::fs::read_to_string(&cfg_path),
        site.status(),
        trapd.log()
    );
    println!(
        "web1's run began → lb1's haproxy.cfg lists web1: {:?}\n{}",
        changed.elapsed(),
        std::fs::read_to_string(&cfg_path).unwrap()
    );
    let known = wait_until(Duration::from_secs(60), || {
        site.status_lines("lb1").iter().any(|l| {
            l.contains("succeeded (changed)") && l.contains("web1 Notify[kick -> haproxy]")
        })
    });
    if !known {
        // Whether lb1's agent saw the kicked run's end (its Redis
        // instance is a placeholder: its complaints are left out).
        for line in lb_node
            .agent_log()
            .lines()
            .filter(|l| !l.contains("instance=main"))
        {
            println!("lb1's agent: {line}");
        }
    }
    assert!(known, "{}\n{}", site.status(), trapd.log());
    let status = site.status();
    println!("{status}");
    let kicks: Vec<&str> = status
        .split("\nREFUSED")
        .next()
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .collect();
    assert_eq!(kicks.len(), 1, "only lb1 is kicked: {status}");
    assert_eq!(kicks[0].split_whitespace().nth(1), Some("lb1"), "{status}");
    // Matched by the job id: the id lb1's run end carried is the one its
    // report has, which the kick gave it.
    let log = trapd.log();
    let job = log
        .split("puppetLastRunJobId.0 = STRING: ")
        .skip(1)
        .filter_map(|rest| {
            rest.split(|c: char| c == '|' || c.is_whitespace() || c == '"')
                .find(|w| !w.is_empty())
        })
        .last()
        .unwrap_or_else(|| panic!("no job id in a run end: {log}"));
    let report = std::fs::read_to_string(lb_state.join("last_run_report.yaml")).unwrap();
    assert!(
        report.contains(&format!("job_id: {job}")),
        "lb1's report does not name {job}"
    );
    let stored = server.pql_until_found(
        &format!("reports[certname, job_id, status] {{ job_id = \"{job}\" }}"),
        Duration::from_secs(60),
    );
    assert!(stored.to_string().contains("\"lb1\""), "{stored}");
}
