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
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Hosts kept at most.
pub const MAX_HOSTS: usize = 10_000;
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
}

impl Inventory {
    /// `host` (from `address`) reported a run, with `role` (its word; kept
    /// only when it is a role name, else as none).
    pub fn saw(&mut self, host: &str, address: &str, role: Option<&str>, now: Millis) {
        let role = role
            .filter(|r| r.len() <= MAX_ROLE && super::settings::is_role_name(r))
            .unwrap_or_default();
        self.hosts.insert(
            host.to_string(),
            Entry {
                role: role.to_string(),
                address: address.to_string(),
                seen: now,
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
}
