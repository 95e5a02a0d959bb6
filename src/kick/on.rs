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
//!   of the first), so a run of a hundred changed files runs the command
//!   at most twice;
//! - `budget_per_hour` is the rule's own, over all senders.

use super::judge::{millis, Request};
use super::ledger::{now, Ledger, Locked};
use super::record::{Callback, Cause, Millis};
use super::settings::{is_role_name, Role, Settings};
use super::status::escaped;
use std::net::IpAddr;
use std::time::Duration;
use tracing::debug;

/// Rules at most: each event is matched against every one.
pub const MAX_RULES: usize = 256;
/// A glob's length at most (a title is at most 255 bytes in the MIB).
const MAX_GLOB: usize = 512;
const MAX_ARGS: usize = 64;

/// Which resource events a rule takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Changed,
    Failed,
    Any,
}

impl Status {
    fn parse(text: &str) -> Option<Status> {
        match text {
            "changed" => Some(Status::Changed),
            "failed" => Some(Status::Failed),
            "any" => Some(Status::Any),
            _ => None,
        }
    }

    /// Whether an event that `failed` or not is one of these.
    pub fn takes(self, failed: bool) -> bool {
        match self {
            Status::Changed => !failed,
            Status::Failed => failed,
            Status::Any => true,
        }
    }
}

/// An event's status as `{status}` and the cause say it.
pub fn status_word(failed: bool) -> &'static str {
    if failed {
        "failed"
    } else {
        "changed"
    }
}

/// One argument of a `run` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunArg {
    Text(String),
    Host,
    Resource,
    Status,
    Role,
    Kick,
}

const PLACEHOLDERS: [(&str, RunArg); 5] = [
    ("{host}", RunArg::Host),
    ("{resource}", RunArg::Resource),
    ("{status}", RunArg::Status),
    ("{role}", RunArg::Role),
    ("{kick}", RunArg::Kick),
];

/// What a rule does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Kick the hosts of this configured role.
    Kick(String),
    /// Run this command on the manager.
    Run(Vec<RunArg>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Its `[[on]]` line in kick.toml: its name in the ledger.
    pub line: u32,
    pub resource: String,
    pub status: Status,
    pub from_role: Option<String>,
    pub action: Action,
    /// `retries` and `retry_delay` of the rule, when it gives them (a
    /// `kick` rule otherwise takes its role's).
    pub retries: Option<u32>,
    pub retry_delay: Option<Duration>,
    /// A `run` rule's own budget, retries and delay, as a pseudo-role
    /// `on:LINE` (see the module's documentation).
    pub role: Role,
}

/// The values the placeholders of a `run` command take.
pub struct Fill<'a> {
    pub host: &'a str,
    pub resource: &'a str,
    pub failed: bool,
    pub role: &'a str,
    pub kick: &'a str,
}

impl Rule {
    /// The pseudo-role of this rule (`on:LINE`).
    pub fn role_name(line: u32) -> String {
        format!("on:{line}")
    }

    /// The target a `run` callback of this rule for `sender` is judged as.
    pub fn target(&self, sender: &str) -> String {
        format!("{sender}/on:{}", self.line)
    }

    /// Whether an event of `resource` (`Type[title]`), failed or not,
    /// from a sender of `roles`, is this rule's.
    pub fn matches(&self, resource: &str, failed: bool, roles: &[String]) -> bool {
        self.status.takes(failed)
            && self
                .from_role
                .as_ref()
                .is_none_or(|want| roles.iter().any(|r| r == want))
            && glob(&self.resource, resource)
    }

    /// The argv of a `run` rule, every placeholder filled (none for a
    /// `kick` rule).
    pub fn argv(&self, fill: &Fill) -> Option<Vec<String>> {
        let Action::Run(args) = &self.action else {
            return None;
        };
        Some(
            args.iter()
                .map(|a| match a {
                    RunArg::Text(t) => t.clone(),
                    RunArg::Host => fill.host.to_string(),
                    RunArg::Resource => fill.resource.to_string(),
                    RunArg::Status => status_word(fill.failed).to_string(),
                    RunArg::Role => fill.role.to_string(),
                    RunArg::Kick => fill.kick.to_string(),
                })
                .collect(),
        )
    }

    /// The rule as the ledger keeps it: `[[on]] line 12: File[/etc/*]
    /// changed from web: kick haproxy`.
    pub fn describe(&self) -> String {
        let status = match self.status {
            Status::Changed => "changed",
            Status::Failed => "failed",
            Status::Any => "changed or failed",
        };
        let from = self
            .from_role
            .as_ref()
            .map(|r| format!(" from {r}"))
            .unwrap_or_default();
        let action = match &self.action {
            Action::Kick(role) => format!("kick {role}"),
            Action::Run(_) => "run".to_string(),
        };
        format!(
            "[[on]] line {}: {} {status}{from}: {action}",
            self.line, self.resource
        )
    }
}

/// A resource as an event names it, when it may match a rule: a Puppet
/// type name (`File`, `Mysql::Db`), then `[title]` without NUL. Anything
/// else (a type starting with `-`, which a program would take for an
/// option) matches nothing.
pub fn matchable(resource_type: &str, title: &str) -> Option<String> {
    let plain = resource_type.split("::").all(|part| {
        part.starts_with(|c: char| c.is_ascii_alphabetic())
            && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    });
    (plain && !title.contains('\0') && resource_type.len() <= 255)
        .then(|| format!("{resource_type}[{title}]"))
}

/// Whether `text` matches `pattern`, whose `*` is any run of characters
/// (`/` included) and `?` any one; everything else, brackets included,
/// stands for itself. Iterative, with one point to go back to: time at
/// most the product of the lengths, no recursion.
pub fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    // The last `*` seen and where in `text` it was taken to end.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(&c) if c == '?' || c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                // The `*` takes one character more.
                Some((sp, st)) => {
                    star = Some((sp, st + 1));
                    pi = sp + 1;
                    ti = st + 1;
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// A resource event of `resource_type[title]`, failed or not, from
/// `source`: each `[[on]]` rule it matches is judged as a request and
/// recorded; the ids of the kicks to start. An event from a sender that
/// is no configured host (nor of `inventory_from`) matches nothing.
pub(super) fn react(
    settings: &Settings,
    ledger: &Ledger,
    source: Option<IpAddr>,
    resource_type: &str,
    title: &str,
    failed: bool,
) -> Result<Vec<String>, String> {
    let Some(resource) = matchable(resource_type, title) else {
        return Ok(Vec::new());
    };
    // Most events match no rule: known before any lookup or lock.
    let candidates: Vec<&Rule> = settings
        .on
        .iter()
        .filter(|r| r.status.takes(failed) && glob(&r.resource, &resource))
        .collect();
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let Some(sender) = source.and_then(|a| super::sender_host(settings, a)) else {
        debug!(
            "kick: {} from an unknown sender matches no [[on]] rule",
            escaped(&resource)
        );
        return Ok(Vec::new());
    };
    let now = now();
    let locked = ledger.lock(super::HANDLER_LOCK_WAIT)?;
    super::settle(&locked, now)?;
    let (mut kicks, refusals) = locked.kicks()?;
    let (own_role, roles) = sender_roles(settings, &locked, &sender, now);
    let mut started = Vec::new();
    for rule in candidates
        .into_iter()
        .filter(|r| r.matches(&resource, failed, &roles))
    {
        let cause = Cause {
            host: sender.clone(),
            resource: format!(
                "{resource} {} ([[on]] line {})",
                status_word(failed),
                rule.line
            ),
        };
        let (role, targets) = match &rule.action {
            Action::Kick(role) => (
                role.clone(),
                super::targets_of(settings, &locked, role, now),
            ),
            Action::Run(_) => (rule.role.name.clone(), vec![rule.target(&sender)]),
        };
        let request = Request {
            now,
            sender: &sender,
            role: &role,
            resource: &cause.resource,
        };
        // `{role}`: the role the rule asked of the sender, else its
        // certificate's, else a role that lists it.
        let sender_role = rule.from_role.as_deref().unwrap_or(&own_role);
        let callback = |id: &str| {
            Some(Callback {
                rule: rule.describe(),
                run: rule.argv(&Fill {
                    host: &sender,
                    resource: &resource,
                    failed,
                    role: sender_role,
                    kick: id,
                }),
                retries: rule.retries,
                retry_delay: rule.retry_delay.map(|d| d.as_secs()),
            })
        };
        started.extend(super::record_decisions(
            settings, &locked, &mut kicks, &refusals, &request, &cause, &targets, &callback,
        )?);
    }
    let _ = locked.prune(now);
    Ok(started)
}

/// The roles of `sender`: the inventory's (its certificate's, as its last
/// `puppetRunFinished` said), then every `[[role]]` that lists it; and
/// the first of them (empty when none), for `{role}`.
fn sender_roles(
    settings: &Settings,
    locked: &Locked,
    sender: &str,
    now: Millis,
) -> (String, Vec<String>) {
    let expiry = millis(settings.inventory_expiry);
    let mut roles: Vec<String> = locked
        .inventory()
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

/// `[[on]]` as the file gives it.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileRule {
    resource: toml::Spanned<String>,
    status: Option<toml::Spanned<String>>,
    from_role: Option<toml::Spanned<String>>,
    kick: Option<toml::Spanned<String>>,
    run: Option<toml::Spanned<Vec<String>>>,
    budget_per_hour: Option<toml::Spanned<u32>>,
    retries: Option<toml::Spanned<u32>>,
    retry_delay: Option<toml::Spanned<u64>>,
}

/// The line of byte `at` of `text`.
fn line_of(text: &str, at: usize) -> u32 {
    let before = text.get(..at).unwrap_or(text);
    u32::try_from(before.matches('\n').count() + 1).unwrap_or(u32::MAX)
}

/// Checks the file's `[[on]]` rules; `roles`: the configured roles' names.
/// An error names the line of the bad value.
pub fn rules(
    text: &str,
    file: Vec<toml::Spanned<FileRule>>,
    roles: &[&str],
) -> Result<Vec<Rule>, String> {
    if file.len() > MAX_RULES {
        return Err(format!("more than {MAX_RULES} [[on]] rules"));
    }
    file.into_iter()
        .map(|spanned| {
            // The span of a table of an array starts at its `[[on]]`.
            let line = line_of(text, spanned.span().start);
            rule(text, line, spanned.into_inner(), roles)
        })
        .collect()
}

fn rule(text: &str, line: u32, file: FileRule, roles: &[&str]) -> Result<Rule, String> {
    let at = |span: std::ops::Range<usize>, message: String| {
        format!("line {}: [[on]] {message}", line_of(text, span.start))
    };
    let resource = file.resource.get_ref();
    if resource.is_empty() || resource.len() > MAX_GLOB || resource.chars().any(char::is_control) {
        return Err(at(
            file.resource.span(),
            format!(
                "resource {:?}: a glob of 1 to {MAX_GLOB} characters on Type[title] is expected",
                resource.escape_debug().to_string()
            ),
        ));
    }
    let status = match &file.status {
        None => Status::Changed,
        Some(s) => Status::parse(s.get_ref()).ok_or_else(|| {
            at(
                s.span(),
                format!(
                    "status {:?}: changed, failed or any is expected",
                    s.get_ref().escape_debug().to_string()
                ),
            )
        })?,
    };
    let from_role = match &file.from_role {
        Some(r) if !is_role_name(r.get_ref()) => {
            return Err(at(
                r.span(),
                format!(
                    "from_role {:?}: a role name is expected",
                    r.get_ref().escape_debug().to_string()
                ),
            ))
        }
        other => other.as_ref().map(|r| r.get_ref().clone()),
    };
    let action = match (&file.kick, &file.run) {
        (Some(k), None) => {
            let role = k.get_ref();
            if role == super::settings::AGAIN {
                return Err(at(
                    k.span(),
                    "kick = \"again\": a rule kicks a configured role; to run Puppet again \
                     on the host that changed, its manifest says notify { 'kick -> again': }"
                        .to_string(),
                ));
            }
            if !roles.contains(&role.as_str()) {
                return Err(at(
                    k.span(),
                    format!(
                        "kick {:?}: no [[role]] has that name",
                        role.escape_debug().to_string()
                    ),
                ));
            }
            Action::Kick(role.clone())
        }
        (None, Some(r)) => Action::Run(run_command(r.get_ref()).map_err(|e| at(r.span(), e))?),
        _ => {
            return Err(format!(
                "line {line}: [[on]] needs either kick (a role) or run (a command), not both"
            ))
        }
    };
    let bounded = |key: &str, value: Option<u64>, min: u64, max: u64, span| match value {
        Some(v) if v < min || v > max => Err(at(
            span,
            format!("{key} = {v}: must be from {min} to {max}"),
        )),
        other => Ok(other),
    };
    let span_of = |s: &Option<toml::Spanned<u32>>| s.as_ref().map_or(0..0, |s| s.span());
    let retries = bounded(
        "retries",
        file.retries.as_ref().map(|r| u64::from(*r.get_ref())),
        0,
        10,
        span_of(&file.retries),
    )?
    .map(|r| r as u32);
    let retry_delay = bounded(
        "retry_delay",
        file.retry_delay.as_ref().map(|r| *r.get_ref()),
        1,
        3600,
        file.retry_delay.as_ref().map_or(0..0, |s| s.span()),
    )?
    .map(Duration::from_secs);
    let budget = bounded(
        "budget_per_hour",
        file.budget_per_hour
            .as_ref()
            .map(|r| u64::from(*r.get_ref())),
        1,
        10_000,
        span_of(&file.budget_per_hour),
    )?;
    if budget.is_some() && matches!(action, Action::Kick(_)) {
        return Err(at(
            span_of(&file.budget_per_hour),
            "budget_per_hour: a kick rule's kicks count in its role's budget".to_string(),
        ));
    }
    Ok(Rule {
        line,
        resource: resource.clone(),
        status,
        from_role,
        role: Role {
            name: Rule::role_name(line),
            hosts: Vec::new(),
            budget_per_hour: budget.map_or(super::settings::DEFAULT_BUDGET, |b| b as u32),
            retries: retries.unwrap_or(0),
            retry_delay: retry_delay.unwrap_or(super::settings::DEFAULT_RETRY_DELAY),
        },
        action,
        retries,
        retry_delay,
    })
}

/// A `run` command: an argv, its placeholders whole arguments.
fn run_command(words: &[String]) -> Result<Vec<RunArg>, String> {
    if words.is_empty() || words.len() > MAX_ARGS {
        return Err(format!("run: from 1 to {MAX_ARGS} arguments are expected"));
    }
    let args = words
        .iter()
        .map(|w| {
            if let Some((_, arg)) = PLACEHOLDERS.iter().find(|(p, _)| p == w) {
                return Ok(arg.clone());
            }
            if let Some((p, _)) = PLACEHOLDERS.iter().find(|(p, _)| w.contains(p)) {
                return Err(format!("run: {w:?}: {p} must be a whole argument"));
            }
            if w.contains('\0') {
                return Err("run: an argument holds a NUL".to_string());
            }
            Ok(RunArg::Text(w.clone()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if !matches!(&args[0], RunArg::Text(p) if !p.is_empty()) {
        return Err("run: the first argument must be the program".to_string());
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kick::settings::Settings;

    const HEAD: &str =
        "kick_command = [\"k\", \"{host}\"]\n[[role]]\nname = \"haproxy\"\nhosts = [\"lb1\"]\n";

    #[test]
    fn globs() {
        assert!(glob(
            "File[/etc/haproxy/*]",
            "File[/etc/haproxy/haproxy.cfg]"
        ));
        // `*` crosses `/`: a glob on the whole Type[title].
        assert!(glob(
            "File[/etc/haproxy/*]",
            "File[/etc/haproxy/conf.d/a.cfg]"
        ));
        assert!(!glob("File[/etc/haproxy/*]", "File[/etc/haproxy.cfg]"));
        assert!(!glob("File[/etc/haproxy/*]", "Exec[/etc/haproxy/x]"));
        assert!(glob("*[/etc/*.cfg]", "Concat[/etc/a/b.cfg]"));
        assert!(!glob("*[/etc/*.cfg]", "Concat[/etc/a/b.cfg.bak]"));
        assert!(glob("Service[?ginx]", "Service[nginx]"));
        assert!(!glob("Service[?ginx]", "Service[ginx]"));
        assert!(glob("*", ""));
        assert!(glob("a**b", "ab"));
        assert!(!glob("", "a"));
        assert!(glob("Файл[*]", "Файл[ü]"));
        // Brackets are themselves, not a character class.
        assert!(!glob("File[[ab]]", "File[a]"));
        assert!(glob("File[[ab]]", "File[[ab]]"));
        // The worst case is quick: no exponential backtracking.
        let text = "a".repeat(255);
        let started = std::time::Instant::now();
        assert!(!glob(&format!("{}b", "*a".repeat(100)), &text));
        assert!(started.elapsed() < Duration::from_millis(100));
    }

    #[test]
    fn resources_that_may_match() {
        assert_eq!(
            matchable("File", "/etc/a b").as_deref(),
            Some("File[/etc/a b]")
        );
        assert!(matchable("Mysql::Db", "x").is_some());
        for bad in ["-x", "", "File ", "a::", "9p"] {
            assert_eq!(matchable(bad, "t"), None, "{bad}");
        }
        assert_eq!(matchable("File", "a\0b"), None);
    }

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
        assert_eq!(run.role.budget_per_hour, 3);
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
