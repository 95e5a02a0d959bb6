//! Issue 16 part 2 end to end: a real Redis with clients that name
//! themselves, block and authenticate as different ACL users; the agent
//! names its own connection, and serves CLIENT LIST per name and per user
//! through a real snmpd. A user without `+client|list` gets empty tables
//! and one log line; `client_list = false` asks nothing.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;
use testkit::{name_row, wait_until, Agent, Redis, Snmpd};

/// A raw connection that sends `commands` (RESP) and does not read: a
/// client that names itself and then blocks stays blocked.
fn client(port: u16, commands: &[&[&str]]) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    for args in commands {
        let mut frame = format!("*{}\r\n", args.len());
        for a in *args {
            frame.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        stream.write_all(frame.as_bytes()).unwrap();
    }
    stream
}

/// `instance.len.bytes` of a row named `name`.

#[test]
fn client_list_per_name_and_user_and_the_acl_refusal() {
    let redis = Redis::start_with(&[
        "user app on >app-pw ~* &* +@all",
        "user nolist on >nl-pw -@all +info +ping +client|setname",
    ]);
    let port = redis.port();
    let _workers: Vec<TcpStream> = (0..2)
        .map(|i| {
            let auth: &[&str] = if i == 0 {
                &["AUTH", "app", "app-pw"]
            } else {
                &["PING"]
            };
            client(
                port,
                &[
                    auth,
                    &["CLIENT", "SETNAME", "worker"],
                    &["BLPOP", "queue", "0"],
                ],
            )
        })
        .collect();
    let _web: Vec<TcpStream> = (0..3)
        .map(|_| client(port, &[&["CLIENT", "SETNAME", "web"]]))
        .collect();

    let snmpd = Snmpd::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("nl.pw"), "nl-pw\n").unwrap();
    let toml = format!(
        "agentx_socket = \"{}\"\nrefresh = 1\n\n\
         [[redis]]\nname = \"main\"\naddress = \"{a}\"\nclient_list_interval = 1\n\n\
         [[redis]]\nname = \"nolist\"\naddress = \"{a}\"\nusername = \"nolist\"\npassword_file = \"{}\"\n\n\
         [[redis]]\nname = \"off\"\naddress = \"{a}\"\nclient_list = false\n",
        snmpd.agentx_address(),
        dir.path().join("nl.pw").display(),
        a = redis.address(),
    );
    let config = dir.path().join("agent.toml");
    std::fs::write(&config, toml).unwrap();
    let mut agent = Agent::start_raw(&["-n", "-v", "-c", config.to_str().unwrap()], &[]);
    agent.expect_registered(Duration::from_secs(10));

    // The blocked workers: 2 connections named worker, both blocked.
    let worker = name_row(1, "worker");
    assert!(
        wait_until(Duration::from_secs(6), || snmpd
            .redis_value(&format!("3.19.1.7.{worker}"))
            == "2"),
        "redisCnBlocked.worker = {:?}\n{:?}\n{}",
        snmpd.redis_value(&format!("3.19.1.7.{worker}")),
        snmpd.redis_walk("3.19"),
        agent.log()
    );
    assert_eq!(snmpd.redis_value(&format!("3.19.1.2.{worker}")), "2");
    assert_eq!(
        snmpd.redis_value(&format!("3.19.1.2.{}", name_row(1, "web"))),
        "3"
    );
    assert_eq!(
        snmpd.redis_value(&format!("3.19.1.9.{worker}")),
        "\"main.worker\""
    );
    // The agent's own connections are named, as CLIENT LIST on the real
    // server shows: main's and off's (nolist's too: it may SETNAME).
    let list = redis.cli(&["CLIENT", "LIST"]);
    let agents = list
        .lines()
        .filter(|l| l.contains(" name=redis-snmp "))
        .count();
    assert_eq!(agents, 3, "{list}");
    // As main's CLIENT LIST saw them: the three instances connect at once,
    // and nolist's password waits for the check of who holds the port, so
    // main's first CLIENT LIST may come before nolist's connection; the
    // next one (a second later) counts it.
    let agents_row = format!("3.19.1.2.{}", name_row(1, "redis-snmp"));
    assert!(
        wait_until(Duration::from_secs(5), || snmpd.redis_value(&agents_row)
            == "3"),
        "redisCnCount.redis-snmp = {:?}",
        snmpd.redis_value(&agents_row)
    );
    // Per user: the app worker, and the default user's connections.
    assert_eq!(
        snmpd.redis_value(&format!("3.20.1.2.{}", name_row(1, "app"))),
        "1"
    );
    assert_eq!(
        snmpd.redis_value(&format!("3.20.1.7.{}", name_row(1, "app"))),
        "1"
    );
    let default_count: u64 = snmpd
        .redis_value(&format!("3.20.1.2.{}", name_row(1, "default")))
        .parse()
        .unwrap();
    let default_in_list = list
        .lines()
        .filter(|l| l.contains(" user=default "))
        .count() as u64;
    // The CLIENT LIST of redis-cli itself is one more than the agent saw.
    assert!(
        default_count + 1 >= default_in_list && default_count <= default_in_list,
        "{default_count} vs {default_in_list}\n{list}"
    );

    // nolist may not run CLIENT LIST: no rows, one log line; off asks none.
    std::thread::sleep(Duration::from_millis(2500));
    let rows_of = |instance: u32| {
        snmpd
            .redis_walk("3.19.1.2")
            .into_iter()
            .filter(|l| l.contains(&format!(".3.19.1.2.{instance}.")))
            .count()
    };
    assert_eq!(rows_of(2), 0, "{:?}", snmpd.redis_walk("3.19.1.2"));
    assert_eq!(rows_of(3), 0, "{:?}", snmpd.redis_walk("3.19.1.2"));
    assert!(rows_of(1) >= 3);
    let log = agent.log();
    let refusals = log
        .lines()
        .filter(|l| l.contains("refuses CLIENT LIST"))
        .count();
    assert_eq!(refusals, 1, "{log}");
    assert!(
        log.lines()
            .filter(|l| l.contains("refuses CLIENT LIST"))
            .all(|l| l.contains("nolist")),
        "{log}"
    );
    // The instance answers: the refusal is no failed poll.
    assert_eq!(snmpd.redis_value("3.1.1.4.2"), "1");
    assert!(!log.contains("nl-pw") && !log.contains("app-pw"));
}
