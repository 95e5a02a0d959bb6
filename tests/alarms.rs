//! Issue 16 part 5 end to end: the agent's own thresholds. A real Redis
//! whose maxmemory is set (CONFIG SET) so the memory it uses is above 90 %
//! of it, then between the rearm value and the trigger, then far below;
//! the agent, with its default alarms (memory: 90 % on 2 polls in a row,
//! rearmed at 85 %), sends one `redisThresholdCrossed` through a real
//! snmpd to a real snmptrapd, lists the alarm in `redisAlarmTable`, stays
//! quiet while the value hovers, and sends one `redisThresholdRearmed`
//! when it falls, the row gone. And an alarm of the configuration's own
//! (`[[alarm]]`, the defaults off) on the certificate a `rediss://` server
//! shows, made by openssl in the test: raised at start-up (there is no
//! baseline), quiet between rearm and trigger, rearmed by a renewal. And
//! an instance removed by a reload (SIGHUP) with an alarm raised: rearmed,
//! with its name. And reloads of the alarms themselves: unchanged, a raised
//! alarm stays raised without a second trap; a broken `[[alarm]]` is
//! refused whole; its trigger raised above the value, it is rearmed once.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::time::Duration;
use testkit::{free_port, pki, wait_until, AgentConfig, Redis, Snmpd, Snmptrapd, REDIS_ROOT};

/// `redisAlarmTable`'s entry below the module root.
const ALARM_ENTRY: &str = "3.23.1";

/// The rows of `redisAlarmTable` as `column.instance.number = value`.
fn alarm_rows(snmpd: &Snmpd) -> Vec<String> {
    let prefix = format!("{REDIS_ROOT}.{ALARM_ENTRY}.");
    snmpd
        .numeric()
        .bulkwalk(&format!("{REDIS_ROOT}.{ALARM_ENTRY}"))
        .vars()
        .into_iter()
        // An empty table walks as "No Such Object" at the entry itself.
        .filter_map(|v| {
            let short = v
                .name
                .trim_start_matches('.')
                .strip_prefix(prefix.trim_start_matches('.'))?
                .to_string();
            Some(format!("{short} = {}", v.value.trim_matches('"')))
        })
        .collect()
}

/// The value the agent serves for `redisMemUsedOfMax` of instance 1, in
/// hundredths of a percent.
fn used_of_max(snmpd: &Snmpd) -> Option<u64> {
    snmpd
        .numeric()
        .get_one(&format!("{REDIS_ROOT}.3.4.1.27.1"))
        .value
        .parse()
        .ok()
}

/// The decimal number that follows `label` in `line`.
fn number_after(line: &str, label: &str) -> u32 {
    line.split(label)
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number after {label} in {line}"))
}

/// Some 4 MB of data, so the few kilobytes a connection moves do not move
/// the percentage of maxmemory: noeviction (the default) keeps it all.
fn add_ballast(redis: &Redis) {
    assert_eq!(
        redis.cli(&["SETRANGE", "ballast", "4000000", "x"]),
        "4000001"
    );
}

#[test]
fn memory_above_maxmemory_raises_one_alarm_and_its_fall_rearms_it() {
    let trapd = Snmptrapd::start();
    let snmpd = Snmpd::sending_to(&trapd);
    let redis = Redis::start();
    add_ballast(&redis);
    let dir = tempfile::tempdir().unwrap();
    let _agent = AgentConfig::new(&snmpd)
        .redis("cache", &redis.address(), "")
        .start(dir.path());
    // No maxmemory: redisMemUsedOfMax has no value, nothing is judged.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(alarm_rows(&snmpd).is_empty(), "{:?}", alarm_rows(&snmpd));

    // 95 %: beyond the trigger (9000) at two polls in a row.
    redis.use_percent_of_maxmemory(95);
    let line = &trapd.first("redisThresholdCrossed", Duration::from_secs(8));
    for expected in [
        "redisInstanceName.1 = STRING: cache",
        "redisAlarmName.1.1 = STRING: memory",
        "redisAlarmObjectName.1.1 = STRING: redisMemUsedOfMax",
        "redisAlarmTrigger.1.1 = STRING: 9000",
        "redisAlarmRearm.1.1 = STRING: 8500",
        // The value that raised it: 95 %, give or take what moved.
        "redisAlarmRaisedValue.1.1 = STRING: 9",
    ] {
        assert!(line.contains(expected), "{expected} not in {line}");
    }
    assert!(
        line.contains("redisAlarmObject.1.1 = OID: REDIS-SERVER-MIB::redisMemUsedOfMax.1"),
        "{line}"
    );
    let raised = number_after(line, "redisAlarmRaisedValue.1.1 = STRING: ");
    assert!((9400..=9600).contains(&raised), "{raised}");
    // The row, as a manager walks it.
    let rows = alarm_rows(&snmpd);
    assert!(rows.contains(&"2.1.1 = memory".to_string()), "{rows:?}");
    assert!(
        rows.contains(&"4.1.1 = redisMemUsedOfMax".to_string()),
        "{rows:?}"
    );
    assert!(
        rows.iter()
            .any(|r| r.starts_with("3.1.1 = ") && r.ends_with(".3.4.1.27.1")),
        "{rows:?}"
    );
    assert!(rows.contains(&"7.1.1 = 9000".to_string()), "{rows:?}");

    // 87 %: between the rearm value and the trigger. Three polls later,
    // nothing more was sent, and the row shows the value now.
    redis.use_percent_of_maxmemory(87);
    assert!(wait_until(Duration::from_secs(5), || used_of_max(&snmpd)
        .is_some_and(|v| (8501..=8999).contains(&v))));
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(trapd.received("redisThresholdCrossed").len(), 1);
    assert!(trapd.received("redisThresholdRearmed").is_empty());
    let rows = alarm_rows(&snmpd);
    let now = rows
        .iter()
        .find_map(|r| r.strip_prefix("5.1.1 = ")?.parse::<u32>().ok())
        .unwrap_or_else(|| panic!("no redisAlarmValue in {rows:?}"));
    assert!((8501..=8999).contains(&now), "{rows:?}");

    // 10 %: rearmed, once; the row leaves.
    redis.use_percent_of_maxmemory(10);
    let line = &trapd.first("redisThresholdRearmed", Duration::from_secs(5));
    for expected in [
        "redisInstanceName.1 = STRING: cache",
        "redisAlarmName.1.1 = STRING: memory",
    ] {
        assert!(line.contains(expected), "{expected} not in {line}");
    }
    // The value that rearmed it: 10 %.
    let value = number_after(line, "redisAlarmValue.1.1 = STRING: ");
    assert!((950..=1050).contains(&value), "{value}");
    assert!(alarm_rows(&snmpd).is_empty(), "{:?}", alarm_rows(&snmpd));
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(trapd.received("redisThresholdCrossed").len(), 1);
    assert_eq!(trapd.received("redisThresholdRearmed").len(), 1);
}

/// The seconds `redisInstanceCertExpiresIn` of instance 1 says.
fn cert_expires_in(snmpd: &Snmpd) -> Option<i64> {
    snmpd
        .numeric()
        .get_one(&format!("{REDIS_ROOT}.3.1.1.13.1"))
        .value
        .parse()
        .ok()
}

#[test]
fn a_configured_alarm_on_the_certificate_is_raised_at_start_and_rearmed_by_a_renewal() {
    const DAY: i64 = 86_400;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // One server key, three certificates: 10, 18 and 60 days.
    pki::make_ca(d, "ca", "test CA", 90);
    pki::make_request(d, "server", "/O=Example/CN=redis.test");
    for (file, days) in [("soon.pem", 10), ("later.pem", 18), ("renewed.pem", 60)] {
        pki::sign(
            d,
            "server.csr",
            "ca",
            file,
            days,
            "subjectAltName=DNS:redis.test",
        );
    }
    let tls_port = free_port();
    let redis = Redis::start_with(&[
        &format!("tls-port {tls_port}"),
        &format!("tls-cert-file {}/soon.pem", d.display()),
        &format!("tls-key-file {}/server.key", d.display()),
        &format!("tls-ca-cert-file {}/ca.pem", d.display()),
        "tls-auth-clients no",
    ]);
    let trapd = Snmptrapd::start();
    let snmpd = Snmpd::sending_to(&trapd);
    let _agent = AgentConfig::new(&snmpd)
        .redis(
            "tls",
            &format!("rediss://127.0.0.1:{tls_port}"),
            &format!(
                "tls_ca_file = \"{}/ca.pem\"\ntls_server_name = \"redis.test\"\n\
                 cert_check_interval = 1\ntimeout = 2.0",
                d.display()
            ),
        )
        .table(
            "[alarms]\ndefaults = false\n\n[[alarm]]\nname = \"tls-cert\"\n\
             object = \"redisInstanceCertExpiresIn\"\ndirection = \"below\"\n\
             trigger = 1209600\nrearm = 1814400\ninstances = [\"tls\"]",
        )
        .start(d);

    // 10 days left, under 14: raised at the first poll.
    let line = &trapd.first("redisThresholdCrossed", Duration::from_secs(8));
    for expected in [
        "redisInstanceName.1 = STRING: tls",
        "redisAlarmName.1.1 = STRING: tls-cert",
        "redisAlarmObjectName.1.1 = STRING: redisInstanceCertExpiresIn",
        "redisAlarmTrigger.1.1 = STRING: 1209600",
        "redisAlarmRearm.1.1 = STRING: 1814400",
    ] {
        assert!(line.contains(expected), "{expected} not in {line}");
    }
    let raised = i64::from(number_after(line, "redisAlarmRaisedValue.1.1 = STRING: "));
    assert!((9 * DAY..=10 * DAY).contains(&raised), "{raised}");
    assert!(
        alarm_rows(&snmpd).contains(&"2.1.1 = tls-cert".to_string()),
        "{:?}",
        alarm_rows(&snmpd)
    );

    // 18 days: between the trigger (14) and the rearm value (21).
    redis.cli(&[
        "CONFIG",
        "SET",
        "tls-cert-file",
        &format!("{}/later.pem", d.display()),
    ]);
    assert!(
        wait_until(Duration::from_secs(8), || cert_expires_in(&snmpd)
            .is_some_and(|s| s > 17 * DAY)),
        "redisInstanceCertExpiresIn = {:?}",
        cert_expires_in(&snmpd)
    );
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        trapd.received("redisThresholdRearmed").is_empty(),
        "{}",
        trapd.log()
    );
    assert_eq!(trapd.received("redisThresholdCrossed").len(), 1);

    // Renewed for 60 days: rearmed, the row gone.
    redis.cli(&[
        "CONFIG",
        "SET",
        "tls-cert-file",
        &format!("{}/renewed.pem", d.display()),
    ]);
    let line = &trapd.first("redisThresholdRearmed", Duration::from_secs(8));
    assert!(
        line.contains("redisAlarmName.1.1 = STRING: tls-cert"),
        "{line}"
    );
    let value = i64::from(number_after(line, "redisAlarmValue.1.1 = STRING: "));
    assert!((59 * DAY..=60 * DAY).contains(&value), "{value}");
    assert!(alarm_rows(&snmpd).is_empty(), "{:?}", alarm_rows(&snmpd));
}

#[test]
fn an_instance_removed_by_a_reload_has_its_alarm_rearmed() {
    let trapd = Snmptrapd::start();
    let snmpd = Snmpd::sending_to(&trapd);
    let (kept, removed) = (Redis::start(), Redis::start());
    add_ballast(&removed);
    let dir = tempfile::tempdir().unwrap();
    let mut agent = AgentConfig::new(&snmpd)
        .redis("kept", &kept.address(), "")
        .redis("removed", &removed.address(), "")
        .start(dir.path());
    removed.use_percent_of_maxmemory(95);
    assert!(
        trapd
            .first("redisThresholdCrossed", Duration::from_secs(8))
            .contains("redisAlarmName.2.1 = STRING: memory"),
        "{}",
        trapd.log()
    );
    assert!(alarm_rows(&snmpd).contains(&"2.2.1 = memory".to_string()));

    AgentConfig::new(&snmpd)
        .redis("kept", &kept.address(), "")
        .write(dir.path());
    agent.signal(libc::SIGHUP);
    let line = &trapd.first("redisThresholdRearmed", Duration::from_secs(8));
    for expected in [
        "redisInstanceName.2 = STRING: removed",
        "redisAlarmName.2.1 = STRING: memory",
    ] {
        assert!(line.contains(expected), "{expected} not in {line}");
    }
    assert!(alarm_rows(&snmpd).is_empty(), "{:?}", alarm_rows(&snmpd));
    assert!(agent.is_running(), "{}", agent.log());
}

/// The alarm `memory` as a `[[alarm]]` of the file, with `trigger` and
/// `rearm` (the default's are 9000 and 8500).
fn memory_alarm(trigger: u32, rearm: u32) -> String {
    format!(
        "[[alarm]]\nname = \"memory\"\nobject = \"redisMemUsedOfMax\"\n\
         direction = \"above\"\ntrigger = {trigger}\nrearm = {rearm}\ncount = 2"
    )
}

#[test]
fn a_reload_keeps_an_unchanged_alarm_refuses_a_broken_one_and_rearms_a_changed_one() {
    let trapd = Snmptrapd::start();
    let snmpd = Snmpd::sending_to(&trapd);
    let redis = Redis::start();
    add_ballast(&redis);
    let dir = tempfile::tempdir().unwrap();
    let config = |alarm: &str| {
        AgentConfig::new(&snmpd)
            .redis("cache", &redis.address(), "")
            .table(alarm)
    };
    let mut agent = config(&memory_alarm(9000, 8500)).start(dir.path());
    redis.use_percent_of_maxmemory(95);
    assert!(
        wait_until(Duration::from_secs(8), || !trapd
            .received("redisThresholdCrossed")
            .is_empty()),
        "no redisThresholdCrossed; snmptrapd log:\n{}",
        trapd.log()
    );
    let raised_row = |snmpd: &Snmpd| alarm_rows(snmpd).contains(&"2.1.1 = memory".to_string());
    assert!(raised_row(&snmpd), "{:?}", alarm_rows(&snmpd));

    // The same file again: the alarm is kept, raised, at its row, and
    // nothing is sent (polls go on meanwhile, one a second).
    let said = agent.reload("configuration reloaded");
    assert!(said.contains("\"cache\" kept (index 1)"), "{said}");
    assert!(!said.contains("alarms:"), "{said}");
    std::thread::sleep(Duration::from_secs(3));
    assert!(raised_row(&snmpd), "{:?}", alarm_rows(&snmpd));
    assert_eq!(trapd.received("redisThresholdCrossed").len(), 1);
    assert!(trapd.received("redisThresholdRearmed").is_empty());

    // A broken [[alarm]] (its rearm value above its trigger): the whole
    // file is refused, the alarm in force stays as it was.
    config(&memory_alarm(9000, 9500)).write(dir.path());
    let refused = agent.reload("reload refused");
    assert!(
        refused.contains("alarm[0] (memory)") && refused.contains("rearm 9500"),
        "{refused}"
    );
    std::thread::sleep(Duration::from_secs(2));
    assert!(raised_row(&snmpd), "{:?}", alarm_rows(&snmpd));
    assert_eq!(trapd.received("redisThresholdCrossed").len(), 1);
    assert!(trapd.received("redisThresholdRearmed").is_empty());

    // Its trigger raised to 99 %, above the 95 % used: the raised alarm
    // is rearmed once, with the row it had (trigger 9000), and the row
    // leaves; the changed alarm is not raised again.
    config(&memory_alarm(9900, 9800)).write(dir.path());
    let said = agent.reload("configuration reloaded");
    assert!(said.contains("alarms: \"memory\" changed"), "{said}");
    let line = &trapd.first("redisThresholdRearmed", Duration::from_secs(5));
    for expected in [
        "redisInstanceName.1 = STRING: cache",
        "redisAlarmName.1.1 = STRING: memory",
        "redisAlarmTrigger.1.1 = STRING: 9000",
    ] {
        assert!(line.contains(expected), "{expected} not in {line}");
    }
    assert!(
        wait_until(Duration::from_secs(3), || alarm_rows(&snmpd).is_empty()),
        "{:?}",
        alarm_rows(&snmpd)
    );
    std::thread::sleep(Duration::from_secs(3));
    assert!(alarm_rows(&snmpd).is_empty(), "{:?}", alarm_rows(&snmpd));
    assert_eq!(trapd.received("redisThresholdCrossed").len(), 1);
    assert_eq!(trapd.received("redisThresholdRearmed").len(), 1);
    assert!(agent.is_running(), "{}", agent.log());
}

/// Issue 24 (review M3): a server can make many rows cross at once (the
/// review's 80,000 replicas toggling their lag sent 2,048 notifications in
/// 30 s). Here 40 alarms of the configuration's own cross together on a
/// real Redis: at most `alarm_raises_per_minute` (5) are raised as
/// notifications, the log says the ceiling once, and exactly the rearms
/// of the raises that went are sent when the value falls. The alarms
/// themselves are all judged: every row is in `redisAlarmTable`.
#[test]
fn many_alarms_crossing_together_send_at_most_the_ceiling_and_only_their_rearms() {
    const ALARMS: usize = 40;
    let trapd = Snmptrapd::start();
    let snmpd = Snmpd::sending_to(&trapd);
    let redis = Redis::start();
    add_ballast(&redis);
    let dir = tempfile::tempdir().unwrap();
    let alarms: String = (0..ALARMS)
        .map(|n| {
            format!(
                "\n[[alarm]]\nname = \"memory-{n}\"\nobject = \"redisMemUsedOfMax\"\n\
                 direction = \"above\"\ntrigger = 9000\nrearm = 8500\ncount = 1\n"
            )
        })
        .collect();
    let mut agent = AgentConfig::new(&snmpd)
        .redis("cache", &redis.address(), "")
        .table("[notifications]\nalarm_raises_per_minute = 5")
        .table(&format!("[alarms]\ndefaults = false\n{alarms}"))
        .start(dir.path());

    redis.use_percent_of_maxmemory(95);
    assert!(
        wait_until(Duration::from_secs(8), || alarm_rows(&snmpd)
            .iter()
            .filter(|r| r.starts_with("2.1."))
            .count()
            == ALARMS),
        "{:?}",
        alarm_rows(&snmpd)
    );
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(trapd.received("redisThresholdCrossed").len(), 5);

    redis.use_percent_of_maxmemory(10);
    assert!(
        wait_until(Duration::from_secs(8), || alarm_rows(&snmpd).is_empty()),
        "{:?}",
        alarm_rows(&snmpd)
    );
    std::thread::sleep(Duration::from_secs(2));
    let crossed: Vec<String> = trapd
        .received("redisThresholdCrossed")
        .iter()
        .map(|l| alarm_name(l))
        .collect();
    let mut rearmed: Vec<String> = trapd
        .received("redisThresholdRearmed")
        .iter()
        .map(|l| alarm_name(l))
        .collect();
    rearmed.sort();
    let mut expected = crossed.clone();
    expected.sort();
    assert_eq!(rearmed, expected, "the rearms are those of the raises sent");
    let log = agent.log();
    assert_eq!(
        log.matches("alarm_raises_per_minute): the next").count(),
        1,
        "{log}"
    );
    assert!(agent.is_running(), "{log}");
}

/// The `redisAlarmName` a notification line carries.
fn alarm_name(line: &str) -> String {
    let at = line
        .find("redisAlarmName.")
        .unwrap_or_else(|| panic!("no redisAlarmName in {line}"));
    let value = &line[at..];
    let value = &value[value.find("STRING: ").expect("a string") + 8..];
    value
        .split(|c: char| c.is_whitespace() || c == ',' || c == '\t')
        .next()
        .unwrap_or("")
        .to_string()
}
