//! Events: how OpenNMS matches an SNMPv2 notification to an event and
//! expands its alarm keys.

use super::*;

// ---------------------------------------------------------------------------
// Events

/// TrapIdentity(snmpTrapOID, ...) for a notification that is not one of
/// the six standard traps
/// (core/snmp/api/src/main/java/org/opennms/netmgt/snmp/TrapIdentity.java):
/// generic 6, specific the last sub-identifier, enterprise the OID without
/// it, and without the one before it too when that one is 0.
fn trap_identity(oid: &str) -> (String, u32, String) {
    let (rest, last) = oid.rsplit_once('.').expect("an OID");
    let (before, next_to_last) = rest.rsplit_once('.').expect("an OID");
    let enterprise = if next_to_last == "0" { before } else { rest };
    (enterprise.to_string(), 6, last.to_string())
}

/// Maskelement.constructMatcher
/// (opennms-config-model/src/main/java/org/opennms/netmgt/xml/eventconf/Maskelement.java):
/// a value starting with `~` is a regular expression, one ending with `%`
/// matches by prefix, any other matches exactly; several values are or-ed.
fn mask_value_matches(value: &str, field: &str) -> bool {
    assert!(
        !value.starts_with('~'),
        "mask value {value}: regexes are not emulated"
    );
    match value.strip_suffix('%') {
        Some(prefix) => field.starts_with(prefix),
        None => field == value,
    }
}

#[derive(Debug)]
struct EventRule {
    uei: String,
    mask: Vec<(String, Vec<String>)>,
    reduction_key: Option<String>,
    alarm_type: Option<u32>,
    clear_key: Option<String>,
}

fn event_rules(text: &str) -> Vec<EventRule> {
    let root = parse_xml(text);
    assert_eq!(root.name, "events");
    root.all("event")
        .map(|e| {
            let alarm = e.child("alarm-data");
            EventRule {
                uei: e.text_of("uei").expect("an event without uei"),
                mask: e
                    .child("mask")
                    .map(|m| {
                        // Mask.constructMatcher also ands varbind matchers;
                        // these files use none, and this test reads none.
                        assert!(
                            m.child("varbind").is_none(),
                            "varbind masks are not emulated"
                        );
                        m.all("maskelement")
                            .map(|me| {
                                (
                                    me.text_of("mename").unwrap_or_default(),
                                    me.all("mevalue")
                                        .map(|v| v.text.trim().to_string())
                                        .collect(),
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                reduction_key: alarm.map(|a| a.req("reduction-key").to_string()),
                alarm_type: alarm.and_then(|a| a.attr("alarm-type")?.parse().ok()),
                clear_key: alarm.and_then(|a| a.attr("clear-key").map(String::from)),
            }
        })
        .collect()
}

/// Whether an event's mask matches a trap with this identity: every mask
/// element must match its field (EventMatchers.and of the elements,
/// opennms-config-model/src/main/java/org/opennms/netmgt/xml/eventconf/Mask.java).
fn mask_matches(rule: &EventRule, (enterprise, generic, specific): &(String, u32, String)) -> bool {
    !rule.mask.is_empty()
        && rule.mask.iter().all(|(name, values)| {
            let field = match name.as_str() {
                "id" => enterprise.clone(),
                "generic" => generic.to_string(),
                "specific" => specific.clone(),
                other => panic!("mask element {other} is not emulated"),
            };
            values.iter().any(|v| mask_value_matches(v, &field))
        })
}

/// The pairs of a Down notification and the Up that clears its alarm.
const CLEARS: &[(&str, &str)] = super::super::CLEARED_BY;

pub(crate) fn event_problems(text: &str) -> Vec<String> {
    let rules = event_rules(text);
    let mut problems = Vec::new();
    let notifications: Vec<&NotificationDef> = REDIS_NOTIFICATIONS
        .iter()
        .chain(PUPPET_NOTIFICATIONS)
        .collect();
    let mut event_of: BTreeMap<&str, &EventRule> = BTreeMap::new();
    for n in &notifications {
        let identity = trap_identity(&notification_oid(n));
        let matching: Vec<&EventRule> = rules
            .iter()
            .filter(|r| mask_matches(r, &identity))
            .collect();
        match matching.as_slice() {
            [one] => {
                event_of.insert(n.name, one);
            }
            other => problems.push(format!(
                "{} ({identity:?}) is matched by {} events",
                n.name,
                other.len()
            )),
        }
    }
    for r in &rules {
        if !event_of.values().any(|e| e.uei == r.uei) {
            problems.push(format!("{}: matches no notification of the agent", r.uei));
        }
    }
    // Alarm keys: %uei% in a reduction key is the event's own UEI
    // (EventUtil expansion of the alarm-data keys,
    // opennms-services/src/main/java/org/opennms/netmgt/eventd/AbstractEventUtil.java);
    // a resolution (type 2) clears the problem (type 1) whose expanded
    // reduction key equals its clear-key.
    for (down, up) in CLEARS {
        let (Some(d), Some(u)) = (event_of.get(down), event_of.get(up)) else {
            problems.push(format!("{down}/{up}: no event"));
            continue;
        };
        let raised = d
            .reduction_key
            .as_deref()
            .map(|k| k.replace("%uei%", &d.uei));
        if d.alarm_type != Some(1) || u.alarm_type != Some(2) {
            problems.push(format!(
                "{down}/{up}: alarm types {:?}/{:?}",
                d.alarm_type, u.alarm_type
            ));
        }
        if raised.is_none() || u.clear_key != raised {
            problems.push(format!(
                "{up} clears {:?}, {down} raises {raised:?}",
                u.clear_key
            ));
        }
    }
    problems
}

#[test]
fn events_match_notifications_as_opennms_maps_them() {
    let problems = event_problems(&read_opennms(EVENTS_FILE));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The mapping itself, on a notification of REDIS-SERVER-MIB.
    assert_eq!(
        trap_identity(".1.3.6.1.4.1.20267.400.0.1"),
        (".1.3.6.1.4.1.20267.400".to_string(), 6, "1".to_string())
    );
    assert_eq!(
        trap_identity(".1.3.6.1.4.1.20267.400.5.1"),
        (".1.3.6.1.4.1.20267.400.5".to_string(), 6, "1".to_string())
    );
}

#[test]
fn broken_event_copies_fail() {
    let text = read_opennms(EVENTS_FILE);
    for (from, to, expect) in [
        // The enterprise with the 0 OpenNMS strips.
        (
            "<mevalue>.1.3.6.1.4.1.20267.400</mevalue>",
            "<mevalue>.1.3.6.1.4.1.20267.400.0</mevalue>",
            "matched by 0 events",
        ),
        // The trap OID's last arc as generic.
        (
            "<mevalue>6</mevalue>",
            "<mevalue>1</mevalue>",
            "matched by 0 events",
        ),
        // A prefix mask that swallows the Puppet notifications.
        (
            "<mevalue>.1.3.6.1.4.1.20267.400</mevalue>",
            "<mevalue>.1.3.6.1.4.1.20267.40%</mevalue>",
            "matched by 2 events",
        ),
        // An Up whose clear-key names another UEI.
        (
            "clear-key=\"uei.opennms.org/vendor/daysofwonder/traps/redisInstanceDown:",
            "clear-key=\"uei.opennms.org/vendor/daysofwonder/traps/redisInstanceUp:",
            "clears",
        ),
        // The Down as a resolution.
        (
            r#"alarm-type="1" auto-clean="false"/>"#,
            r#"alarm-type="2" auto-clean="false"/>"#,
            "alarm types",
        ),
    ] {
        let copy = broken(&text, from, to);
        let problems = event_problems(&copy);
        assert!(
            problems.iter().any(|p| p.contains(expect)),
            "{from} -> {to}: expected {expect:?}, got {problems:?}"
        );
    }
}
