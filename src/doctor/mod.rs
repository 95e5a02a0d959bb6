//! `redis-snmp doctor`: the path from Redis and Puppet to an SNMP manager,
//! checked as installed, with the exact fix for each problem.
//!
//! ```text
//!  snmpd running ─ its config: master agentx, a community that sees .20267.400, trap sinks
//!        │
//!  AgentX socket ─ reachable, and reachable by the agent's user
//!        │
//!  the view ───── snmpd asked over SNMP: is anything served under .400?
//!  Redis ──────── each instance: reachable, authenticated, each command allowed
//!  Puppet ─────── its files readable by the agent's user
//! ```
//!
//! - [`snmpd_conf`]: what snmpd's configuration files say.
//! - [`access`]: whether a user may reach a path (search, read, write).
//! - [`checks`]: the checks themselves, each a [`Finding`].
//! - [`snmp_client`]: the one SNMPv2c GetNext the view check sends.
//!
//! Nothing here prints a secret: findings carry texts the agent already
//! shows (redacted errors), paths and names.

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
        }
    }

    pub fn skipped(check: impl Into<String>, detail: impl Into<String>) -> Finding {
        Finding {
            check: check.into(),
            status: Status::Skipped,
            detail: detail.into(),
            fix: None,
        }
    }
}

/// Whether all is well: no finding is a problem.
pub fn all_well(findings: &[Finding]) -> bool {
    findings.iter().all(|f| f.status != Status::Problem)
}

/// The findings for a person: one line each, the fix indented below a
/// problem, and a last line that sums up.
pub fn render_text(findings: &[Finding]) -> String {
    let mut out = String::new();
    for f in findings {
        let tag = match f.status {
            Status::Ok => "ok  ",
            Status::Problem => "FAIL",
            Status::Skipped => "skip",
        };
        out.push_str(&format!("{tag}  {}: {}\n", f.check, f.detail));
        if let Some(fix) = &f.fix {
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

/// The findings as a JSON document: `{"ok": bool, "findings": [...]}`.
pub fn render_json(findings: &[Finding]) -> String {
    #[derive(Serialize)]
    struct Report<'a> {
        ok: bool,
        findings: &'a [Finding],
    }
    serde_json::to_string_pretty(&Report {
        ok: all_well(findings),
        findings,
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
}
