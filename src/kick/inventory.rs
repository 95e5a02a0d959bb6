//! The manager's inventory: the hosts whose own authenticated run
//! notifications (`puppetRunFinished`) reached it, each with the role its
//! Puppet certificate gives it (`puppetRole`, the trusted fact `pp_role`)
//! and when it was last heard of. A `[[role]]` without `hosts` kicks the
//! inventory's hosts of that role, as puppet-kicker's `servers_with_role`
//! did from its own records.
//!
//! Pure data and rules; the ledger keeps it in one file. Bounded: at most
//! [`MAX_HOSTS`] hosts, each forgotten `inventory_expiry` after it was last
//! heard of, the oldest first beyond the cap.

use super::record::Millis;
use super::select::{self, Expression};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Hosts kept at most.
pub const MAX_HOSTS: usize = 10_000;
/// Facts kept of one host at most (the MIB's `puppetFactIndex` range).
pub const MAX_FACTS: usize = 32;
/// Bytes of names and values kept of one host at most: with
/// [`MAX_HOSTS`], the inventory stays within some 40 MB at worst.
pub const MAX_FACT_BYTES: usize = 4096;
/// Roles are plain words of at most this length (longer ones are not
/// kept: no `[[role]]` could name them).
const MAX_ROLE: usize = 64;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inventory {
    pub hosts: BTreeMap<String, Entry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The role its certificate gives it; empty when it has none.
    pub role: String,
    /// The transport address its notification came from.
    pub address: String,
    /// When it was last heard of.
    pub seen: Millis,
    /// Its facts, as its last run's `puppetRunFinished` carried them (at
    /// most [`MAX_FACTS`], [`MAX_FACT_BYTES`] together).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub facts: BTreeMap<String, String>,
}

impl Inventory {
    /// `host` (from `address`) reported a run, with `role` (its word; kept
    /// only when it is a role name, else as none).
    pub fn saw(&mut self, host: &str, address: &str, role: Option<&str>, now: Millis) {
        self.saw_with_facts(host, address, role, &[], now);
    }

    /// As [`Self::saw`], with the facts its notification carried: they
    /// replace those kept (a fact the host no longer sends is gone), the
    /// first [`MAX_FACTS`] within [`MAX_FACT_BYTES`] kept.
    pub fn saw_with_facts(
        &mut self,
        host: &str,
        address: &str,
        role: Option<&str>,
        facts: &[(String, String)],
        now: Millis,
    ) {
        let mut kept = BTreeMap::new();
        let mut bytes = 0;
        for (name, value) in facts.iter().take(MAX_FACTS) {
            bytes += name.len() + value.len();
            if bytes > MAX_FACT_BYTES {
                break;
            }
            kept.entry(name.clone()).or_insert_with(|| value.clone());
        }
        let role = role
            .filter(|r| r.len() <= MAX_ROLE && super::settings::is_role_name(r))
            .unwrap_or_default();
        self.hosts.insert(
            host.to_string(),
            Entry {
                role: role.to_string(),
                address: address.to_string(),
                seen: now,
                facts: kept,
            },
        );
    }

    /// Forgets hosts not heard of for `expiry` ms, then the oldest beyond
    /// [`MAX_HOSTS`].
    pub fn prune(&mut self, now: Millis, expiry: Millis) {
        self.hosts
            .retain(|_, e| now.saturating_sub(e.seen) < expiry);
        if self.hosts.len() > MAX_HOSTS {
            let mut ages: Vec<(Millis, String)> = self
                .hosts
                .iter()
                .map(|(h, e)| (e.seen, h.clone()))
                .collect();
            ages.sort();
            let excess = self.hosts.len() - MAX_HOSTS;
            for (_, host) in ages.into_iter().take(excess) {
                self.hosts.remove(&host);
            }
        }
    }

    /// The hosts of `role` heard of within `expiry`, in name order.
    pub fn hosts_of(&self, role: &str, now: Millis, expiry: Millis) -> Vec<String> {
        self.hosts
            .iter()
            .filter(|(_, e)| e.role == role && now.saturating_sub(e.seen) < expiry)
            .map(|(h, _)| h.clone())
            .collect()
    }

    /// The hosts heard of within `expiry` whose facts pass every
    /// expression of `select`, in name order. `role` is each host's role
    /// as the inventory keeps it (`puppetRole`), not a fact it lists.
    pub fn selected(&self, select: &[Expression], now: Millis, expiry: Millis) -> Vec<String> {
        self.hosts
            .iter()
            .filter(|(_, e)| now.saturating_sub(e.seen) < expiry)
            .filter(|(_, e)| {
                select::selects(select, |name| match name {
                    "role" => Some(e.role.as_str()).filter(|r| !r.is_empty()),
                    _ => e.facts.get(name).map(String::as_str),
                })
            })
            .map(|(h, _)| h.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_kept_by_role_forgotten_by_age_and_bounded() {
        let mut inventory = Inventory::default();
        inventory.saw("web1", "10.0.0.1", Some("web"), 1_000);
        inventory.saw("web2", "10.0.0.2", Some("web"), 2_000);
        inventory.saw("lb1", "10.0.0.3", Some("haproxy"), 2_000);
        // A role that no [[role]] could name is kept as none.
        inventory.saw("x1", "10.0.0.4", Some("-oProxyCommand=id"), 2_000);
        assert_eq!(inventory.hosts_of("web", 3_000, 10_000), ["web1", "web2"]);
        assert_eq!(inventory.hosts["x1"].role, "");
        // web1 not heard of for the expiry: not a target, then forgotten.
        assert_eq!(inventory.hosts_of("web", 11_500, 10_000), ["web2"]);
        inventory.prune(11_500, 10_000);
        assert!(!inventory.hosts.contains_key("web1"));
        // web2 says it is a load balancer now: its role follows.
        inventory.saw("web2", "10.0.0.2", Some("haproxy"), 12_000);
        assert!(inventory.hosts_of("web", 12_000, 10_000).is_empty());
        for n in 0..MAX_HOSTS + 10 {
            inventory.saw(&format!("h{n}"), "10.0.0.9", Some("r"), 20_000 + n as u64);
        }
        inventory.prune(30_000, 100_000);
        assert_eq!(inventory.hosts.len(), MAX_HOSTS);
        assert!(!inventory.hosts.contains_key("h0") && inventory.hosts.contains_key("h10"));
    }

    #[test]
    fn facts_are_kept_bounded_and_select_hosts() {
        let fact = |n: &str, v: &str| (n.to_string(), v.to_string());
        let mut inventory = Inventory::default();
        inventory.saw_with_facts(
            "web1",
            "10.0.0.1",
            Some("node"),
            &[fact("hostname", "web1"), fact("uptime_seconds", "300")],
            1_000,
        );
        inventory.saw_with_facts(
            "web2",
            "10.0.0.2",
            Some("node"),
            &[fact("hostname", "web2"), fact("uptime_seconds", "5")],
            1_000,
        );
        // db1 says in a fact that it is a node: its role is its
        // certificate's, not its word.
        inventory.saw_with_facts(
            "db1",
            "10.0.0.3",
            Some("db"),
            &[
                fact("role", "node"),
                fact("hostname", "webdb"),
                fact("uptime_seconds", "900"),
            ],
            1_000,
        );
        inventory.saw("x1", "10.0.0.4", Some("node"), 1_000);
        let select = select::parse_all(&[
            "role=node".into(),
            "uptime_seconds>10".into(),
            "hostname=/^web/".into(),
        ])
        .unwrap();
        assert_eq!(inventory.selected(&select, 2_000, 10_000), ["web1"]);
        assert_eq!(inventory.selected(&[], 2_000, 10_000).len(), 4);
        assert!(
            inventory.selected(&select, 20_000, 10_000).is_empty(),
            "expired"
        );
        // A later run's facts replace the earlier ones.
        inventory.saw_with_facts("web1", "10.0.0.1", Some("node"), &[fact("a", "b")], 3_000);
        assert_eq!(inventory.hosts["web1"].facts.len(), 1);
        // Bounded by count and bytes.
        let many: Vec<_> = (0..100).map(|n| fact(&format!("f{n}"), "v")).collect();
        inventory.saw_with_facts("h", "10.0.0.9", None, &many, 3_000);
        assert_eq!(inventory.hosts["h"].facts.len(), MAX_FACTS);
        let big: Vec<_> = (0..30)
            .map(|n| fact(&format!("f{n}"), &"v".repeat(255)))
            .collect();
        inventory.saw_with_facts("h", "10.0.0.9", None, &big, 3_000);
        let bytes: usize = inventory.hosts["h"]
            .facts
            .iter()
            .map(|(n, v)| n.len() + v.len())
            .sum();
        assert!(
            bytes <= MAX_FACT_BYTES && bytes > MAX_FACT_BYTES - 300,
            "{bytes}"
        );
        // An inventory written before facts were kept still reads.
        let old: Inventory =
            serde_json::from_str(r#"{"hosts":{"a":{"role":"web","address":"10.0.0.1","seen":5}}}"#)
                .unwrap();
        assert!(old.hosts["a"].facts.is_empty());
    }
}
