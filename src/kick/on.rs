//! `[[on]]` rules: callbacks on any change. A resource event of an
//! authenticated sender (`puppetResourceChanged`, `puppetResourceFailed`)
//! whose `Type[title]` matches a rule's glob, whose status is the rule's,
//! and whose sender has the rule's `from_role`, asks for what the rule
//! says: a kick of a configured role, or a command run on the manager.
//!
//! Either is judged exactly like a `kick -> ROLE` (generation from the
//! sender's kicked run, window, budget, deferral and coalescing, retries)
//! and recorded in the ledger; the cause names the rule by its line
//! (`File[/etc/haproxy/haproxy.cfg] changed ([[on]] line 12)`).
//!
//! A `run` callback kicks no host, so it is judged as a kick of a target
//! of its own, `SENDER/on:LINE` (never a host name: `/` is in none), for
//! the pseudo-role `on:LINE` (never a role name: `:` is in none):
//!
//! - its generation is the sender's, one deeper, so a callback asked by a
//!   run that is too deep in a chain of kicks is refused like a kick;
//! - it never causes anything in turn: no host's run is counted as its
//!   doing. A command that makes hosts run Puppet should be a `kick`
//!   rule (a role), which generations follow;
//! - `window` and the busy rule apply per rule and sender: one run at a
//!   time, not again within `window` of its end; what comes meanwhile
//!   waits as one pending run (the causes listed, the placeholders those
//!   of the first): a burst of changes runs the command twice, not once a
//!   change;
//! - `budget_per_hour` is the rule's own, over all senders.
//!
//! This file is pure (what a rule asks, given the settings, the sender
//! and the inventory); [`super::rules`] checks the rules when the file
//! loads; the handler (`on_rules` in the kick's module) takes the lock,
//! finds the sender and records the decisions.

use super::inventory::Inventory;
use super::judge::millis;
use super::record::{Callback, Cause, Millis};
use super::rules::{glob, status_word, Action, Fill, Rule};
use super::settings::Settings;

/// The rules an event of `resource` (`Type[title]`, as
/// [`super::rules::matchable`] gives it), failed or not, may match,
/// whoever sent it: most events match none, known before any lookup or
/// lock.
pub fn candidates<'s>(settings: &'s Settings, resource: &str, failed: bool) -> Vec<&'s Rule> {
    settings
        .on
        .iter()
        .filter(|r| r.status.takes(failed) && glob(&r.resource, resource))
        .collect()
}

/// The roles of `sender`: the inventory's (its certificate's, as its last
/// `puppetRunFinished` said), then every `[[role]]` that lists it; and
/// the first of them (empty when none), for `{role}`.
pub fn sender_roles(
    settings: &Settings,
    inventory: &Inventory,
    sender: &str,
    now: Millis,
) -> (String, Vec<String>) {
    let expiry = millis(settings.inventory_expiry);
    let mut roles: Vec<String> = inventory
        .hosts
        .get(sender)
        .filter(|e| !e.role.is_empty() && now.saturating_sub(e.seen) < expiry)
        .map(|e| e.role.clone())
        .into_iter()
        .collect();
    for role in &settings.roles {
        if role.hosts.iter().any(|h| h == sender) && !roles.contains(&role.name) {
            roles.push(role.name.clone());
        }
    }
    (roles.first().cloned().unwrap_or_default(), roles)
}

/// What a matching rule asks of `sender`'s event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    /// The role judged: the rule's `kick`, or its pseudo-role `on:LINE`.
    pub role: String,
    /// The cause, naming the rule: `File[/a] changed ([[on]] line 12)`.
    pub cause: Cause,
    /// A `run` rule's target, `SENDER/on:LINE`; none for a kick (the
    /// role's hosts).
    pub target: Option<String>,
}

pub fn asked(rule: &Rule, sender: &str, resource: &str, failed: bool) -> Asked {
    let cause = Cause {
        host: sender.to_string(),
        resource: format!(
            "{resource} {} ([[on]] line {})",
            status_word(failed),
            rule.line
        ),
    };
    match &rule.action {
        Action::Kick(role) => Asked {
            role: role.clone(),
            cause,
            target: None,
        },
        Action::Run(_) => Asked {
            role: Rule::role_name(rule.line),
            cause,
            target: Some(rule.target(sender)),
        },
    }
}

/// What the ledger keeps of the rule in kick `id`: the rule, a `run`
/// rule's command with its placeholders filled, its retries. `{role}` is
/// the role the rule asked of the sender, else `own_role` (see
/// [`sender_roles`]).
pub fn callback(
    rule: &Rule,
    sender: &str,
    resource: &str,
    failed: bool,
    own_role: &str,
    id: &str,
) -> Callback {
    Callback {
        rule: rule.describe(),
        run: rule.argv(&Fill {
            host: sender,
            resource,
            failed,
            role: rule.from_role.as_deref().unwrap_or(own_role),
            kick: id,
        }),
        retries: rule.retries,
        retry_delay: rule.retry_delay.map(|d| d.as_secs()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kick::rules::{Action, Fill};

    const HEAD: &str =
        "kick_command = [\"k\", \"{host}\"]\n[[role]]\nname = \"haproxy\"\nhosts = [\"lb1\"]\n";

    #[test]
    fn rules_load_with_their_line() {
        let s = Settings::parse(&format!(
            "{HEAD}\n[[on]]\nresource = \"File[/etc/haproxy/*]\"\nstatus = \"changed\"\n\
             from_role = \"web\"\nkick = \"haproxy\"\nretries = 2\n\
             [[on]]\nresource = \"*\"\nstatus = \"any\"\n\
             run = [\"/usr/local/sbin/x\", \"{{host}}\", \"{{resource}}\", \"{{status}}\", \"{{role}}\", \"{{kick}}\"]\n\
             budget_per_hour = 3\n"
        ))
        .unwrap();
        assert_eq!(s.on.len(), 2);
        let (kick, run) = (&s.on[0], &s.on[1]);
        assert_eq!((kick.line, run.line), (6, 12));
        assert_eq!(kick.action, Action::Kick("haproxy".into()));
        assert_eq!(kick.retries, Some(2));
        assert_eq!(kick.retry_delay, None);
        assert_eq!(
            kick.describe(),
            "[[on]] line 6: File[/etc/haproxy/*] changed from web: kick haproxy"
        );
        let web = ["web".to_string()];
        assert!(kick.matches("File[/etc/haproxy/haproxy.cfg]", false, &web));
        assert!(!kick.matches("File[/etc/haproxy/haproxy.cfg]", true, &web));
        assert!(!kick.matches("File[/etc/haproxy/haproxy.cfg]", false, &[]));
        assert!(!kick.matches("File[/etc/nginx/x]", false, &web));
        assert!(run.matches("Exec[x]", true, &[]) && run.matches("Exec[x]", false, &[]));
        assert_eq!(run.budget_per_hour, Some(3));
        assert_eq!(s.role("on:12").map(|r| r.budget_per_hour), Some(3));
        assert_eq!(
            run.argv(&Fill {
                host: "web1",
                resource: "File[/a]",
                failed: true,
                role: "",
                kick: "k-1",
            })
            .unwrap(),
            ["/usr/local/sbin/x", "web1", "File[/a]", "failed", "", "k-1"]
        );
        assert_eq!(run.target("web1"), "web1/on:12");
    }

    #[test]
    fn what_a_rule_asks_of_a_sender() {
        let s = Settings::parse(&format!(
            "{HEAD}[[role]]\nname = \"web\"\nhosts = [\"web1\"]\n\
             [[on]]\nresource = \"File[*]\"\nkick = \"haproxy\"\n\
             [[on]]\nresource = \"File[*]\"\nstatus = \"any\"\nrun = [\"/bin/x\", \"{{role}}\", \"{{kick}}\"]\n"
        ))
        .unwrap();
        let mut inventory = Inventory::default();
        inventory.saw("web1", "192.0.2.1", Some("frontend"), 1_000);
        // The certificate's role first, then the roles that list it; an
        // entry past inventory_expiry counts no more.
        let (own, roles) = sender_roles(&s, &inventory, "web1", 2_000);
        assert_eq!(
            (own.as_str(), roles),
            ("frontend", vec!["frontend".to_string(), "web".to_string()])
        );
        let (own, _) = sender_roles(&s, &inventory, "web1", 1_000 + 86_400_000);
        assert_eq!(own, "web");
        assert_eq!(
            sender_roles(&s, &inventory, "db1", 2_000).1,
            Vec::<String>::new()
        );
        assert_eq!(candidates(&s, "File[/a]", true).len(), 1);
        assert_eq!(candidates(&s, "File[/a]", false).len(), 2);
        assert!(candidates(&s, "Exec[/a]", false).is_empty());
        let kick = asked(&s.on[0], "web1", "File[/a]", false);
        assert_eq!((kick.role.as_str(), kick.target), ("haproxy", None));
        assert_eq!(kick.cause.resource, "File[/a] changed ([[on]] line 8)");
        let run = asked(&s.on[1], "web1", "File[/a]", true);
        assert_eq!(run.role, "on:11");
        assert_eq!(run.target.as_deref(), Some("web1/on:11"));
        assert_eq!(run.cause.resource, "File[/a] failed ([[on]] line 11)");
        let c = callback(&s.on[1], "web1", "File[/a]", true, "frontend", "k-1");
        assert_eq!(c.run.unwrap(), ["/bin/x", "frontend", "k-1"]);
        assert_eq!(
            callback(&s.on[0], "web1", "File[/a]", false, "", "k-2").run,
            None
        );
    }

    /// The rules debian/conf/kick.toml shows (commented) load as written.
    #[test]
    fn the_shipped_examples_load() {
        let shipped = include_str!("../../debian/conf/kick.toml");
        let examples = &shipped[shipped.find("# [[on]]").unwrap()..];
        let rules: String = examples
            .lines()
            .map(|l| l.trim_start_matches('#').trim_start())
            .map(|l| format!("{l}\n"))
            .collect();
        let s = Settings::parse(&format!("{HEAD}{rules}")).unwrap();
        assert_eq!(s.on.len(), 2);
        assert_eq!(s.on[0].action, Action::Kick("haproxy".into()));
        assert!(s.on[1].matches("Service[nginx]", true, &[]));
        assert_eq!(s.on[1].retries, Some(2));
    }

    #[test]
    fn a_bad_rule_is_refused_with_its_line() {
        let refused = |rule: &str| Settings::parse(&format!("{HEAD}[[on]]\n{rule}")).unwrap_err();
        let cases = [
            (
                "resource = \"\"\nkick = \"haproxy\"\n",
                "line 6: [[on]] resource",
            ),
            (
                "resource = \"File[*]\"\nstatus = \"maybe\"\nkick = \"haproxy\"\n",
                "line 7: [[on]] status \"maybe\": changed, failed or any",
            ),
            (
                "resource = \"File[*]\"\nkick = \"nginx\"\n",
                "line 7: [[on]] kick \"nginx\": no [[role]] has that name",
            ),
            (
                "resource = \"File[*]\"\nkick = \"again\"\n",
                "line 7: [[on]] kick = \"again\"",
            ),
            (
                "resource = \"File[*]\"\n",
                "line 5: [[on]] needs either kick (a role) or run (a command)",
            ),
            (
                "resource = \"File[*]\"\nkick = \"haproxy\"\nrun = [\"x\"]\n",
                "line 5: [[on]] needs either kick",
            ),
            (
                "resource = \"File[*]\"\nrun = [\"/bin/x\", \"--host={host}\"]\n",
                "line 7: [[on]] run: \"--host={host}\": {host} must be a whole argument",
            ),
            (
                "resource = \"File[*]\"\nrun = [\"{resource}\"]\n",
                "line 7: [[on]] run: the first argument must be the program",
            ),
            (
                "resource = \"File[*]\"\nrun = []\n",
                "line 7: [[on]] run: from 1 to 64 arguments",
            ),
            (
                "resource = \"File[*]\"\nfrom_role = \"-x\"\nkick = \"haproxy\"\n",
                "line 7: [[on]] from_role \"-x\"",
            ),
            (
                "resource = \"File[*]\"\nkick = \"haproxy\"\nretries = 11\n",
                "line 8: [[on]] retries = 11: must be from 0 to 10",
            ),
            (
                "resource = \"File[*]\"\nkick = \"haproxy\"\nbudget_per_hour = 5\n",
                "line 8: [[on]] budget_per_hour: a kick rule's kicks count in its role's",
            ),
            (
                "resource = \"File[*]\"\nkick = \"haproxy\"\nsurprise = 1\n",
                "line 8",
            ),
        ];
        for (rule, expected) in cases {
            let e = refused(rule);
            assert!(e.contains(expected), "{rule}: {e}");
        }
        let many = format!(
            "{HEAD}{}",
            "[[on]]\nresource = \"*\"\nrun = [\"x\"]\n".repeat(257)
        );
        let e = Settings::parse(&many).unwrap_err();
        assert!(e.contains("more than 256 [[on]] rules"), "{e}");
    }
}
