//! Issue 16 part 5 end to end: the agent's own thresholds. A real Redis
//! whose maxmemory is set (CONFIG SET) so the memory it uses is above 90 %
//! of it, then between the rearm value and the trigger, then far below;
//! the agent, with its default alarms (memory: 90 % on 2 polls in a row,
//! rearmed at 85 %), sends one `redisThresholdCrossed` through a real
//! snmpd to a real snmptrapd, lists the alarm in `redisAlarmTable`, stays
//! quiet while the value hovers, and sends one `redisThresholdRearmed`
//! when it falls, the row gone.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::time::Duration;
use testkit::{wait_until, AgentConfig, Redis, Snmpd, SnmpdOptions, Snmptrapd, REDIS_ROOT};

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

/// Sets maxmemory so that what Redis uses now is `percent` of it.
fn use_percent_of_maxmemory(redis: &Redis, percent: u64) -> u64 {
    let used: u64 = redis
        .info_map()
        .get("used_memory")
        .and_then(|v| v.parse().ok())
        .expect("used_memory");
    let max = used * 100 / percent;
    assert_eq!(
        redis.cli(&["CONFIG", "SET", "maxmemory", &max.to_string()]),
        "OK"
    );
    max
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

#[test]
fn memory_above_maxmemory_raises_one_alarm_and_its_fall_rearms_it() {
    let trapd = Snmptrapd::start();
    let snmpd = Snmpd::start_with(SnmpdOptions::default().config_line(&trapd.trap2sink_line()));
    let redis = Redis::start();
    // Some 4 MB of data, so the few kilobytes a connection moves do not
    // move the percentage: noeviction (the default) keeps it all.
    assert_eq!(
        redis.cli(&["SETRANGE", "ballast", "4000000", "x"]),
        "4000001"
    );
    let dir = tempfile::tempdir().unwrap();
    let _agent = AgentConfig::new(&snmpd)
        .redis("cache", &redis.address(), "")
        .start(dir.path());
    // No maxmemory: redisMemUsedOfMax has no value, nothing is judged.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(alarm_rows(&snmpd).is_empty(), "{:?}", alarm_rows(&snmpd));

    // 95 %: beyond the trigger (9000) at two polls in a row.
    use_percent_of_maxmemory(&redis, 95);
    assert!(
        wait_until(Duration::from_secs(8), || !trapd
            .received("redisThresholdCrossed")
            .is_empty()),
        "no redisThresholdCrossed; agent serves {:?}; snmptrapd log:\n{}",
        used_of_max(&snmpd),
        trapd.log()
    );
    let crossed = trapd.received("redisThresholdCrossed");
    let line = &crossed[0];
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
    use_percent_of_maxmemory(&redis, 87);
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
    use_percent_of_maxmemory(&redis, 10);
    assert!(
        wait_until(Duration::from_secs(5), || !trapd
            .received("redisThresholdRearmed")
            .is_empty()),
        "no redisThresholdRearmed; snmptrapd log:\n{}",
        trapd.log()
    );
    let rearmed = trapd.received("redisThresholdRearmed");
    let line = &rearmed[0];
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
