//! `redis-snmp kick --status`: the recent kicks, newest first, with what
//! caused each and what became of it, then the recent refusals. Every
//! name shown came from a notification or a file: controls are escaped.

use super::inventory::Inventory;
use super::judge::{outcome, Outcome};
use super::record::{End, Kick, Millis, Refusal, Refused, SenderRefusals};
use super::settings::Settings;
use std::fmt::Write;

/// A name from a notification or a file, as a terminal may show it (every
/// name the status and the log show goes through it).
pub use crate::text::printable as escaped;

/// `at` as `2026-11-26T10:50:22Z`.
pub fn utc(at: Millis) -> String {
    let secs = (at / 1000) as i64;
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// Why a kick was refused, in words: the one statement of each reason,
/// for the log and for `--status`.
pub fn why(refusal: &Refusal, settings: &Settings) -> String {
    match refusal {
        Refusal::UnknownSender => "sent from an address no configured host has".to_string(),
        Refusal::UnknownRole => "no such role".to_string(),
        Refusal::NotRequester => "the role's requested_by does not name the sender".to_string(),
        Refusal::TooDeep { chain } => format!(
            "deeper than max_depth {}: {}",
            settings.max_depth,
            chain.join(" → ")
        ),
        Refusal::Busy { kick } => format!("being kicked (kick {kick})"),
        Refusal::Window { ended_at } => format!(
            "its kicked run ended at {}, less than window ({} s) before",
            utc(*ended_at),
            settings.window.as_secs()
        ),
        Refusal::Budget { used } => format!("the role's budget per hour is spent ({used} kicks)"),
        Refusal::OwnRun => "the run that asked is going on".to_string(),
        Refusal::Full { kicks } => {
            format!("the ledger holds {kicks} kicks its rules still need, as many as it may")
        }
        Refusal::PuppetDb { why } => format!("PuppetDB: {why}"),
    }
}

/// A refusal as the log says it: `not kicking HOST for ROLE from SENDER
/// RESOURCE: WHY`, every name escaped.
pub fn refusal_line(r: &Refused, settings: &Settings) -> String {
    format!(
        "not kicking {} for {} from {} {}: {}",
        r.host
            .as_deref()
            .map_or_else(|| "any host".to_string(), escaped),
        escaped(&r.role),
        escaped(&r.cause.host),
        escaped(&r.cause.resource),
        escaped(&why(&r.why, settings)),
    )
}

/// `kick --inventory`: the hosts heard of, with their role and when, or
/// the same as one JSON object (`--json`).
pub fn inventory(inventory: &Inventory, json: bool) -> String {
    if json {
        return serde_json::to_string_pretty(inventory).unwrap_or_default() + "\n";
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<20}  {:<32}  {:<16}  {:<39}  FACTS",
        "SEEN", "HOST", "ROLE", "ADDRESS"
    );
    for (host, entry) in &inventory.hosts {
        let facts: Vec<String> = entry
            .facts
            .iter()
            .map(|(name, value)| format!("{}={}", escaped(name), crate::text::quoted(value)))
            .collect();
        let _ = writeln!(
            out,
            "{:<20}  {:<32}  {:<16}  {:<39}  {}",
            utc(entry.seen),
            escaped(host),
            if entry.role.is_empty() {
                "-"
            } else {
                entry.role.as_str()
            },
            escaped(&entry.address),
            if facts.is_empty() {
                "-".to_string()
            } else {
                facts.join(" ")
            },
        );
    }
    out
}

/// The report `kick --status` prints: the kicks, newest first, then each
/// sender's refusals (the senders heard of last first).
pub fn render(
    settings: &Settings,
    kicks: &[Kick],
    refusals: &[SenderRefusals],
    now: Millis,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<20}  {:<24}  {:<12}  {:>3}  {:<26}  {:<20}  CAUSE",
        "STARTED", "HOST", "ROLE", "GEN", "OUTCOME", "ENDED"
    );
    for k in kicks.iter().rev() {
        let outcome = outcome(settings, k, now);
        let mut shown = match &k.end {
            Some(End::Exited(code)) => format!("{outcome} (exit {code})"),
            _ => outcome.to_string(),
        };
        if k.attempts > 1 {
            let _ = write!(shown, " ({} attempts)", k.attempts);
        }
        // With a shared ledger: which manager runs (or ran) it.
        if let Some(manager) = k.supervisor.as_ref().and_then(|s| s.manager.as_deref()) {
            let _ = write!(shown, " on {}", escaped(manager));
        }
        let mut cause = format!("{} {}", escaped(&k.cause.host), escaped(&k.cause.resource));
        for c in &k.coalesced {
            let _ = write!(cause, ", {} {}", escaped(&c.host), escaped(&c.resource));
        }
        if k.coalesced_more > 0 {
            let _ = write!(cause, " and {} more", k.coalesced_more);
        }
        if let Outcome::Deferred(held) = &outcome {
            let _ = write!(cause, " (waits: {})", escaped(&why(held, settings)));
        }
        let _ = writeln!(
            out,
            "{:<20}  {:<24}  {:<12}  {:>3}  {:<26}  {:<20}  {cause}",
            utc(k.started_at.unwrap_or(k.queued_at)),
            escaped(&k.host),
            escaped(&k.role),
            k.generation,
            shown,
            k.ended_at.map(utc).unwrap_or_else(|| "-".to_string()),
        );
    }
    if refusals
        .iter()
        .any(|s| !s.kept.is_empty() || s.not_kept > 0)
    {
        let _ = writeln!(out, "\nREFUSED");
    }
    for sender in refusals {
        for r in sender.kept.iter().rev() {
            let _ = writeln!(
                out,
                "{:<20}  {:<24}  {:<12}  {:>3}  from {} {}: {}",
                utc(r.at),
                r.host.as_deref().map(escaped).unwrap_or_else(|| "-".into()),
                escaped(&r.role),
                r.generation,
                escaped(&r.cause.host),
                escaped(&r.cause.resource),
                escaped(&why(&r.why, settings)),
            );
        }
        if sender.not_kept > 0 {
            let from = if sender.sender.is_empty() {
                "senders no longer kept".to_string()
            } else {
                escaped(&sender.sender)
            };
            let _ = writeln!(out, "{:<20}  and {} more from {from}", "", sender.not_kept);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_escapes() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(1_795_683_336_000), "2026-11-26T08:55:36Z");
        assert_eq!(utc(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(escaped("a\u{1b}[32mok"), "a\\u{1b}[32mok");
    }

    /// A host's facts are the sender's words: shown quoted, escaped, on
    /// the host's own line.
    #[test]
    fn the_inventory_shows_facts_quoted_and_escaped() {
        let mut inventory = Inventory::default();
        let facts = [
            ("hostname".to_string(), "web1".to_string()),
            ("motd".to_string(), "a \"b\"\n\u{1b}[2Jx".to_string()),
        ];
        inventory.saw_with_facts("web1", "10.0.0.1", Some("node"), &facts, 1_000);
        inventory.saw("db1", "10.0.0.2", Some("db"), 1_000);
        let text = inventory_text(&inventory);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0].ends_with("FACTS"), "{text}");
        let web1 = lines.iter().find(|l| l.contains("web1")).unwrap();
        assert!(
            web1.ends_with("hostname=\"web1\" motd=\"a \\\"b\\\"\\u{a}\\u{1b}[2Jx\""),
            "{web1}"
        );
        assert!(lines.iter().any(|l| l.contains("db1") && l.ends_with(" -")));
        let json: serde_json::Value = serde_json::from_str(&inventory_json(&inventory)).unwrap();
        assert_eq!(json["hosts"]["web1"]["facts"]["hostname"], "web1");
        assert!(json["hosts"]["db1"].get("facts").is_none());
    }

    fn inventory_text(inventory: &Inventory) -> String {
        super::inventory(inventory, false)
    }

    fn inventory_json(inventory: &Inventory) -> String {
        super::inventory(inventory, true)
    }
}
