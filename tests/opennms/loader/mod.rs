//! `opennms/` loaded the way OpenNMS loads it.
//!
//! Each rule below is taken from OpenNMS's own code (the public repository
//! OpenNMS/opennms); the file it comes from is named next to it. The rules
//! are re-stated here, not copied: what the Java does, done in Rust on the
//! files of `opennms/`.
//!
//! - Data collection: the `include-collection` lines of an snmp-collection
//!   pull in system definitions and their groups, and register resource
//!   types; a `mibObj` whose `instance` is no registered resource type makes
//!   the whole data collection configuration fail to load.
//! - Resource types: every class named exists in OpenNMS, with the
//!   parameters it accepts; the sibling column is a string of the same type;
//!   the directory OpenNMS makes of a row's sibling value, and the label the
//!   web UI makes of the directory name.
//! - Aliases: RRD data source names.
//! - Graphs: which reports OpenNMS loads from an included properties file,
//!   and which it offers on a resource.
//! - Events: the enterprise, generic and specific OpenNMS derives from an
//!   SNMPv2 notification's OID, how a mask matches them, and how alarm keys
//!   are expanded.
//! - Thresholds (issue 16): each `ds-type` is `node` or a resource type of the
//!   collection, each `ds-name`, expression variable and `ds-label` an alias
//!   collected for it, values in the collected units, and the package selects
//!   the collected nodes for collectd's SNMP service.
//!
//! Every rule is also run against a deliberately broken copy of the file it
//! checks, which must fail: the tests test themselves.
//!
//! One file per rule family, in the order above: `collection` (data
//! collection and the OpenNMS classes it names), `resource_types`
//! (folders and labels), `graphs`, `events` and `thresholds`; each holds
//! its rules and the tests that run them on our files and broken copies.

use super::{
    notification_oid, object_at, parse_properties, parse_xml, read_opennms, resource_label,
    sibling_dir, Element, EVENTS_FILE, GRAPH_FILE, GROUP_FILE, NODE, THRESHD_FILE, THRESHOLDS_FILE,
};
use redis_snmp::metrics::{NotificationDef, PUPPET_NOTIFICATIONS, REDIS_NOTIFICATIONS};
use std::collections::{BTreeMap, BTreeSet};

mod collection;
mod events;
mod graphs;
mod resource_types;
mod thresholds;

pub(super) use collection::*;
pub(super) use graphs::*;
pub(super) use resource_types::*;

/// The system definitions of `opennms/etc/datacollection/redis-snmp.xml`.
const REDIS_SYSTEM_DEF: &str = "Net-SNMP with redis-snmp: Redis";
const PUPPET_SYSTEM_DEF: &str = "Net-SNMP with redis-snmp: Puppet agent";

/// The one line the README tells to add to `datacollection-config.xml`.
pub(crate) const INSTALL_LINE: &str = r#"<include-collection dataCollectionGroup="redis-snmp"/>"#;

pub(crate) fn our_group_file() -> String {
    read_opennms(GROUP_FILE)
}

pub(crate) fn load_ours(includes: &str) -> Result<LoadedCollection, String> {
    validates(&config_with(includes));
    load_datacollection(&config_with(includes), &[&our_group_file()])
}

/// A copy of `text` with `from` replaced by `to`; `from` must be there.
pub(crate) fn broken(text: &str, from: &str, to: &str) -> String {
    assert!(
        text.contains(from),
        "the broken copy needs {from:?} in the file"
    );
    text.replacen(from, to, 1)
}
