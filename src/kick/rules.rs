//! `[[on]]` rules as kick.toml gives them: checked and bounded when the
//! file loads (a bad rule refused with its line), and the matcher of
//! their globs. What a matching rule does: [`super::on`].
//!
//! A leaf: what it needs of the settings (the role names, the rule for a
//! role name) is handed in, so that the settings may hold the rules.

use std::time::Duration;

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
    /// A `run` rule's own `budget_per_hour`, when it gives one; the
    /// settings make its pseudo-role `on:LINE` of these.
    pub budget_per_hour: Option<u32>,
}

/// What rules are checked against: the configured roles' names, the rule
/// for a role name, and the name `kick -> again` takes.
pub struct Known<'a> {
    pub roles: &'a [&'a str],
    pub is_role_name: fn(&str) -> bool,
    pub again: &'a str,
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

/// The line of byte `at` of `text` (kick.toml's errors name it).
pub fn line_of(text: &str, at: usize) -> u32 {
    let before = text.get(..at).unwrap_or(text);
    u32::try_from(before.matches('\n').count() + 1).unwrap_or(u32::MAX)
}

/// Checks the file's `[[on]]` rules; `roles`: the configured roles' names.
/// An error names the line of the bad value.
pub fn rules(
    text: &str,
    file: Vec<toml::Spanned<FileRule>>,
    known: &Known,
) -> Result<Vec<Rule>, String> {
    if file.len() > MAX_RULES {
        return Err(format!("more than {MAX_RULES} [[on]] rules"));
    }
    file.into_iter()
        .map(|spanned| {
            // The span of a table of an array starts at its `[[on]]`.
            let line = line_of(text, spanned.span().start);
            rule(text, line, spanned.into_inner(), known)
        })
        .collect()
}

fn rule(text: &str, line: u32, file: FileRule, known: &Known) -> Result<Rule, String> {
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
        Some(r) if !(known.is_role_name)(r.get_ref()) => {
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
            if role == known.again {
                return Err(at(
                    k.span(),
                    "kick = \"again\": a rule kicks a configured role; to run Puppet again \
                     on the host that changed, its manifest says notify { 'kick -> again': }"
                        .to_string(),
                ));
            }
            if !known.roles.contains(&role.as_str()) {
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
        budget_per_hour: budget.map(|b| b as u32),
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
}
