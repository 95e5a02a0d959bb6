//! Issue 25 item 4 end to end: a real Redis with ACL users, clients whose
//! AUTH fails, the agent reading `ACL LOG` as the documented
//! least-privilege user (docs/configuration.md's line, `+acl|log`
//! included), a real snmpd whose walk shows `redisAclRefusalTable`, and a
//! real snmptrapd receiving `redisAuthFailureBurst` and then
//! `redisAuthFailureBurstCleared`. The refusals already in the log when
//! the agent starts are its baseline; `ACL LOG RESET` sends nothing; a
//! user without `+acl|log` is refused once, said once, and the rest of
//! the instance is still served.

// Starts real servers and tools: built only with the `system-tests`
// feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::time::{Duration, Instant};
use testkit::redis::RespConn;
use testkit::servers::ServerKind;
use testkit::{repo_root, wait_until, Agent, Redis, Snmpd, Snmptrapd, REDIS_ROOT};

/// `redisAclRefusalEntry`: `redisObjects 29 1`.
const ENTRY: &str = "3.29.1";

/// The ACL line docs/configuration.md tells operators to run, for user
/// `name` with password `password`.
fn documented_acl(name: &str, password: &str) -> Vec<String> {
    let doc = std::fs::read_to_string(repo_root().join("docs/configuration.md")).unwrap();
    let line = doc
        .lines()
        .find(|l| l.starts_with("ACL SETUSER snmp "))
        .expect("docs/configuration.md documents the agent's ACL user");
    assert!(line.contains("+acl|log"), "{line}");
    line.split_whitespace()
        .map(|w| match w {
            "snmp" => name.to_string(),
            ">CHANGE-ME" => format!(">{password}"),
            other => other.to_string(),
        })
        .collect()
}

/// AUTH as `user` with a wrong password, `times` times, each on a
/// connection of its own (as a client retrying would).
fn fail_auth(redis: &Redis, user: &str, times: usize) {
    for _ in 0..times {
        let mut conn = RespConn::connect(redis.port()).unwrap();
        let reply = conn.call(&["AUTH", user, "wrong"]);
        assert!(format!("{reply:?}").contains("WRONGPASS"), "{reply:?}");
    }
}

/// The rows of `redisAclRefusalTable` of instance 1: (user, address,
/// count), from a numeric walk.
fn rows(snmpd: &Snmpd) -> Vec<(String, String, u64)> {
    let vars = snmpd.numeric_walk(&format!("{REDIS_ROOT}.{ENTRY}"));
    let column = |n: u32| -> Vec<(String, String)> {
        let prefix = format!(".{}.{ENTRY}.{n}.1.", REDIS_ROOT.trim_start_matches('.'));
        vars.iter()
            .filter_map(|v| {
                let name = format!(".{}", v.name.trim_start_matches('.'));
                name.strip_prefix(&prefix)
                    .map(|row| (row.to_string(), v.text()))
            })
            .collect()
    };
    let (users, addresses, counts) = (column(3), column(4), column(5));
    let mut rows: Vec<(String, String, u64)> = users
        .iter()
        .map(|(row, user)| {
            let find = |list: &[(String, String)]| {
                list.iter()
                    .find(|(r, _)| r == row)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            };
            let count = find(&counts)
                .split_whitespace()
                .next()
                .unwrap_or("0")
                .parse()
                .unwrap_or(0);
            (user.clone(), find(&addresses), count)
        })
        .collect();
    rows.sort();
    rows
}

/// Debian's Redis 7.0: entries without `entry-id`, counted per kind.
#[test]
fn refusals_are_tabled_and_a_burst_is_sent_then_cleared() {
    refusals_tabled_burst_and_clear(ServerKind::Redis70);
}

/// Redis 8.2: entries with `entry-id`, counted per entry.
#[test]
fn refusals_are_tabled_and_a_burst_is_sent_then_cleared_on_redis_8_2() {
    refusals_tabled_burst_and_clear(ServerKind::Redis82);
}

fn refusals_tabled_burst_and_clear(kind: ServerKind) {
    let Some(binary) = kind.binary_or_skip("refusals_are_tabled_and_a_burst_is_sent_then_cleared")
    else {
        return;
    };
    let redis = Redis::start_binary(&binary, &[]);
    let mut acl = vec!["ACL".to_string()];
    acl.extend(documented_acl("snmp", "snmp-pw").into_iter().skip(1));
    let args: Vec<&str> = acl.iter().map(String::as_str).collect();
    redis.command(&args).unwrap();
    redis
        .command(&[
            "ACL", "SETUSER", "app", "on", ">app-pw", "-@all", "+get", "~cache:*",
        ])
        .unwrap();
    // A user without +acl|log, on a server of its own (its refusals of
    // the commands it lacks would be in the first server's log, from an
    // unnamed connection): refused once, the rest still served.
    let other = Redis::start_binary(&binary, &[]);
    other
        .command(&[
            "ACL",
            "SETUSER",
            "noacl",
            "on",
            ">noacl-pw",
            "-@all",
            "+info",
            "+ping",
        ])
        .unwrap();
    // Refusals before the agent starts: its baseline, never a burst.
    fail_auth(&redis, "app", 2);

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("snmp.pw"), "snmp-pw\n").unwrap();
    std::fs::write(dir.path().join("noacl.pw"), "noacl-pw\n").unwrap();
    let trapd = Snmptrapd::start();
    let snmpd = Snmpd::sending_to(&trapd);
    let toml = format!(
        "agentx_socket = \"{}\"\nrefresh = 1\n\n\
         [[redis]]\nname = \"main\"\naddress = \"{}\"\nusername = \"snmp\"\n\
         password_file = \"{}\"\nacl_burst_refusals = 5\nacl_burst_window = 4\n\n\
         [[redis]]\nname = \"noacl\"\naddress = \"{}\"\nusername = \"noacl\"\n\
         password_file = \"{}\"\n",
        snmpd.agentx_address(),
        redis.address(),
        dir.path().join("snmp.pw").display(),
        other.address(),
        dir.path().join("noacl.pw").display(),
    );
    let config = dir.path().join("agent.toml");
    std::fs::write(&config, toml).unwrap();
    let mut agent = Agent::start_raw(&["-n", "-v", "-c", config.to_str().unwrap()], &[]);
    agent.expect_registered(Duration::from_secs(10));

    // The log as it is: the two failed AUTHs of app, from this host, and
    // the agent's own CONFIG GET (the documented user has no CONFIG),
    // served but never counted.
    let want = vec![
        ("app".to_string(), "127.0.0.1".to_string(), 2),
        ("snmp".to_string(), "127.0.0.1".to_string(), 1),
    ];
    assert!(
        wait_until(Duration::from_secs(8), || rows(&snmpd) == want),
        "rows {:?}\n{}",
        rows(&snmpd),
        agent.log()
    );
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        trapd.received("redisAuthFailureBurst").is_empty(),
        "the baseline sent a burst: {}",
        trapd.log()
    );

    // Eight failed AUTHs of app (one entry of Redis's, its count
    // growing), then one of a user that does not exist: more than 5.
    let started = Instant::now();
    fail_auth(&redis, "app", 8);
    fail_auth(&redis, "mallory", 1);
    let line = trapd.first("redisAuthFailureBurst", Duration::from_secs(8));
    println!(
        "redisAuthFailureBurst arrived {:?} after the first failed AUTH",
        started.elapsed()
    );
    assert!(
        line.contains("redisInstanceName.1 = STRING: main"),
        "{line}"
    );
    // The newest row when the burst was judged: who was refused last
    // (app, or mallory if the poll came after its AUTH), from where.
    assert!(
        line.contains("STRING: app") || line.contains("STRING: mallory"),
        "{line}"
    );
    assert!(line.contains("redisArUser.1."), "{line}");
    assert!(line.contains("refusals"), "{line}");
    assert!(line.contains("STRING: 127.0.0.1"), "{line}");
    assert!(line.contains("redisArReason.1."), "{line}");
    assert!(line.contains("auth(1)"), "{line}");
    assert!(
        wait_until(Duration::from_secs(4), || rows(&snmpd)
            == vec![
                ("app".to_string(), "127.0.0.1".to_string(), 10),
                ("mallory".to_string(), "127.0.0.1".to_string(), 1),
                ("snmp".to_string(), "127.0.0.1".to_string(), 1),
            ]),
        "rows {:?}",
        rows(&snmpd)
    );

    // Quiet for the window: the burst clears, once.
    let line = trapd.first("redisAuthFailureBurstCleared", Duration::from_secs(10));
    println!(
        "redisAuthFailureBurstCleared arrived {:?} after the first failed AUTH",
        started.elapsed()
    );
    assert!(
        line.contains("redisInstanceName.1 = STRING: main"),
        "{line}"
    );

    // ACL LOG RESET empties the table and sends nothing.
    redis.command(&["ACL", "LOG", "RESET"]).unwrap();
    assert!(
        wait_until(Duration::from_secs(5), || rows(&snmpd).is_empty()),
        "rows {:?}",
        rows(&snmpd)
    );
    fail_auth(&redis, "app", 2);
    std::thread::sleep(Duration::from_secs(3));
    let bursts = trapd
        .received("redisAuthFailureBurst")
        .into_iter()
        .filter(|l| !l.contains("redisAuthFailureBurstCleared"))
        .count();
    assert_eq!(bursts, 1, "{}", trapd.log());
    assert_eq!(
        trapd.received("redisAuthFailureBurstCleared").len(),
        1,
        "{}",
        trapd.log()
    );

    // The user without +acl|log: said once, its instance still served.
    let log = agent.log();
    let refusals = log
        .lines()
        .filter(|l| l.contains("refuses ACL LOG") && l.contains("noacl"))
        .count();
    assert_eq!(refusals, 1, "{log}");
    let state = snmpd
        .numeric()
        .get_one(&format!("{REDIS_ROOT}.3.1.1.4.2"))
        .value;
    assert_eq!(state, "1", "instance 2 up(1)\n{log}");
    assert!(
        !log.contains("refuses ACL LOG") || log.contains("noacl"),
        "{log}"
    );
    // No secret of the agent's in its log.
    assert!(
        !log.contains("snmp-pw") && !log.contains("noacl-pw"),
        "{log}"
    );
}
