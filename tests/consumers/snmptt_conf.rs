//! Issue 23: `snmptt/redis-snmp.conf`, snmptt's translation of every
//! notification of REDIS-SERVER-MIB and PUPPET-AGENT-MIB, written from
//! the catalogue: the name, OID, severity and carried objects of each from
//! `redis_snmp::metrics` (`notifications!`), its one-line summary and its
//! description from the MIB (the first line of the DESCRIPTION is one
//! sentence for this: tests/snmptt.rs checks it).
//!
//! Regenerate after a catalogue or MIB change: [`REGENERATE`].

use super::generated::{mib_text, notification_description};
use redis_snmp::metrics::{
    Layout, Mib, NotificationDef, PUPPET_NOTIFICATIONS, REDIS_NOTIFICATIONS,
};

/// How to regenerate, as a failing check says it.
pub const REGENERATE: &str =
    "REDIS_SNMP_WRITE_DOCS=1 cargo nextest run --features system-tests --test snmptt generated";

/// Where the file is shipped, below the repository.
pub const SHIPPED: &str = "snmptt/redis-snmp.conf";

/// The object every Redis notification carries first: the instance.
pub const INSTANCE_NAME: &str = "redisInstanceName";

/// The MIB module a notification is defined in.
pub fn module(def: &NotificationDef) -> &'static str {
    match def.mib {
        Mib::Redis => "REDIS-SERVER-MIB",
        Mib::Puppet => "PUPPET-AGENT-MIB",
    }
}

/// Every notification, REDIS-SERVER-MIB's first, in the MIB's order.
pub fn notifications() -> impl Iterator<Item = &'static NotificationDef> {
    REDIS_NOTIFICATIONS.iter().chain(PUPPET_NOTIFICATIONS)
}

/// The numeric OID a notification is sent as, with a leading dot (as
/// snmptt's EVENT line and snmptrapd's handler input write it).
pub fn notification_oid(def: &NotificationDef) -> String {
    let oid = Layout::default_layout().notification_oid(def).to_string();
    if oid.starts_with('.') {
        oid
    } else {
        format!(".{oid}")
    }
}

/// The one-sentence summary of a notification: the first line of its
/// DESCRIPTION in the MIB.
pub fn summary(def: &NotificationDef) -> String {
    let text = mib_text(module(def));
    notification_description(&text, def.name)
        .and_then(|lines| lines.into_iter().next())
        .unwrap_or_else(|| panic!("{} has no DESCRIPTION in {}", def.name, module(def)))
}

/// The FORMAT of a notification: its summary, the instance it is about (a
/// Redis notification's first object; snmptt's `$A`, the agent's host, for
/// Puppet's), then every other object it carries as `name.index:value`
/// (`$+N`), so a value stays labelled when the agent leaves out an object
/// the server does not report and the ones after it move up.
pub fn format(def: &NotificationDef) -> String {
    let names = def.object_names();
    let (about, first) = match def.mib {
        Mib::Redis => {
            assert_eq!(
                names.first(),
                Some(&INSTANCE_NAME),
                "{}: a Redis notification names its instance first",
                def.name
            );
            ("Instance $1".to_string(), 2)
        }
        Mib::Puppet => ("Host $A".to_string(), 1),
    };
    let values: Vec<String> = (first..=names.len()).map(|n| format!("$+{n}")).collect();
    let mut line = format!("{} {about}", summary(def));
    if !values.is_empty() {
        line.push_str(": ");
        line.push_str(&values.join("; "));
    }
    line
}

const HEADER: &str = "\
# redis-snmp: snmptt's translation of every notification of REDIS-SERVER-MIB
# (.1.3.6.1.4.1.20267.400.0) and PUPPET-AGENT-MIB (.1.3.6.1.4.1.20267.401.0),
# sent by the redis-snmp AgentX subagent through Net-SNMP's snmpd.
#
# Generated from the agent's catalogue (src/metrics/notifications.rs: names,
# OIDs, objects, severities) and the MIBs' descriptions by
# tests/consumers/snmptt_conf.rs; edit those, not this file.
#
# Install: add this file to snmptt_conf_files in snmptt.ini (see
# snmptt/README.md). The FORMATs name the objects as the MIBs do: load the MIBs
# (net_snmp_perl_enable = 1, with REDIS-SERVER-MIB and PUPPET-AGENT-MIB where
# Net-SNMP finds them) so that values read as names (down, failed) rather
# than numbers. $1 of a Redis notification is the instance's name; $+N is the
# N-th object as name.index:value. The agent leaves out an object the server
# does not report, which moves the ones after it up: $+N stays labelled.
#
# Severities: a whole thing lost or failed (an instance down, a failed save,
# a failed Puppet run) is Critical; a part of one (a replica's link, one
# resource) Major; a return, clearing or recovery Normal; the rest Warning or
# Minor. The OpenNMS events (opennms/etc/events/) carry the same ones.
";

/// The whole of `snmptt/redis-snmp.conf`.
pub fn snmptt_conf() -> String {
    let mut out = String::from(HEADER);
    for def in notifications() {
        let description = notification_description(&mib_text(module(def)), def.name)
            .unwrap_or_else(|| panic!("{} has no DESCRIPTION", def.name));
        out.push_str(&format!(
            "#\nEVENT {} {} \"Status Events\" {}\nFORMAT {}\nSDESC\n",
            def.name,
            notification_oid(def),
            def.severity.name(),
            format(def)
        ));
        for line in description {
            out.push_str(&line);
            out.push('\n');
        }
        out.push_str("Variables:\n");
        for (n, name) in def.object_names().iter().enumerate() {
            out.push_str(&format!("  {}: {name}\n", n + 1));
        }
        out.push_str("EDESC\n");
    }
    out
}
