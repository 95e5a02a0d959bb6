//! What snmptrapd hands a `traphandle` on standard input, read with
//! bounds: its host line, its transport line (`UDP: [10.0.0.1]:4000->
//! [10.0.0.2]:162`), then one `OID VALUE` line per varbind (net-snmp's
//! `command_handler`, format `%B\n%b\n%V\n%v\n`, values in quick-print
//! form). OIDs arrive as numbers or names, depending on the MIBs snmptrapd
//! loaded; both are understood, the names taken from the catalogue.
//!
//! Only the first [`MAX_VARBIND_LINES`] varbinds are looked at, and
//! reading stops looking as soon as `snmpTrapOID.0` says the notification
//! is not one `kick` acts on: a notification with thousands of varbinds
//! costs microseconds.

use crate::metrics::{puppet_objects, PuppetEvent, PuppetRunStatus, SNMP_TRAP_OID};
use std::io::{BufRead, Read};
use std::net::IpAddr;

/// Varbinds looked at: a resource notification carries eight,
/// `puppetRunFinished` eleven and two per fact (at most 32) after them.
pub const MAX_VARBIND_LINES: usize = 96;
/// Facts kept from one notification at most (`puppetFactIndex` is
/// 1..32).
pub const MAX_FACTS: usize = 32;
/// A fact's name and value kept at most, in bytes (the MIB's SIZEs).
const MAX_FACT_NAME: usize = 64;
const MAX_FACT_VALUE: usize = 255;
/// Longest line kept; longer ones are cut (a title is at most 255 bytes
/// in the MIB).
const MAX_LINE: usize = 4096;
/// Bytes read from standard input at most.
pub const MAX_INPUT: usize = 1 << 20;

/// PUPPET-AGENT-MIB's place, as the agent serves it by default.
const PUPPET_ROOT: &[u32] = &[1, 3, 6, 1, 4, 1, 20267, 401];

/// What a notification means to `kick`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// puppetResourceChanged: a resource `resource_type[title]` changed.
    ResourceChanged {
        resource_type: String,
        title: String,
    },
    /// puppetResourceFailed: a resource `resource_type[title]` failed
    /// (`[[on]]` rules with status `failed` or `any` take it).
    ResourceFailed {
        resource_type: String,
        title: String,
    },
    /// A run of the sending host ended: puppetRunFinished says how, and
    /// with which job id; puppetRunFailed is a failure, puppetRunChanged
    /// and puppetRunRecovered a success.
    RunEnded(RunEnd),
    /// Anything else.
    Other,
}

/// What a run-end notification says of the run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunEnd {
    pub failed: bool,
    /// Whether it changed something, when the notification says.
    pub changed: Option<bool>,
    /// `puppetResourcesChanged`, when carried.
    pub resources_changed: Option<u64>,
    /// `puppetLastRunJobId`, when carried and not empty: the sender's
    /// word, compared; it names a kick of another address only for a host
    /// no configuration names (a PuppetDB query's), whose kicked run alone
    /// was given it.
    pub job_id: Option<String>,
    /// From `puppetRunFinished`, which every run sends: a run without a
    /// job id here was given none.
    pub finished: bool,
    /// `puppetLastRunTime`: when the run ended (Unix seconds, whole).
    pub run_end: Option<u64>,
    /// `puppetRole`, when carried and not empty: the sender's role as its
    /// certificate says (the sender's word, like the job id).
    pub role: Option<String>,
    /// The rows of `puppetFactTable` carried after the objects (name,
    /// value), in row order: the sender's word too, bounded.
    pub facts: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trap {
    /// Where the notification came from: the transport address snmptrapd
    /// received it from (never the host line, which the sender can name).
    pub source: Option<IpAddr>,
    pub event: Event,
    /// What tells this request from any other of its sender: a resource
    /// event's resource, time and configuration version, as carried. Two
    /// managers that both hear one notification (an agent sends it to
    /// each) see the same; a shared ledger lets one of them act on it.
    pub request: Option<String>,
}

/// Reads snmptrapd's input from `input` (at most [`MAX_INPUT`] bytes).
/// Reads snmptrapd's input from `input`, line by line, as far as the
/// parser needs (at most [`MAX_INPUT`] bytes).
pub fn read(input: &mut impl Read) -> Trap {
    let lines = std::io::BufReader::new(input.take(MAX_INPUT as u64))
        .split(b'\n')
        .map_while(Result::ok)
        .map(|mut line| {
            line.truncate(MAX_LINE);
            String::from_utf8_lossy(&line).into_owned()
        });
    parse_lines(lines)
}

pub fn parse(text: &str) -> Trap {
    parse_lines(text.split('\n').map(str::to_string))
}

/// The lines are taken one at a time, and no more than needed.
fn parse_lines(lines: impl Iterator<Item = String>) -> Trap {
    let mut lines = lines.map(|mut l| {
        if l.len() > MAX_LINE {
            let mut cut = MAX_LINE;
            while !l.is_char_boundary(cut) {
                cut -= 1;
            }
            l.truncate(cut);
        }
        l
    });
    let _host = lines.next();
    let source = lines.next().and_then(|l| transport_source(&l));
    let mut trap_oid: Option<Vec<u32>> = None;
    let mut resource_type = None;
    let mut title = None;
    let mut status = None;
    let mut resources_changed = None;
    let mut job_id = None;
    let mut run_end = None;
    let mut role = None;
    let mut event_time = None;
    let mut config_version = None;
    let mut facts: std::collections::BTreeMap<u32, (Option<String>, Option<String>)> =
        std::collections::BTreeMap::new();
    let mut uptime = None;
    for line in lines.take(MAX_VARBIND_LINES) {
        let Some((name, value)) = line.trim().split_once(char::is_whitespace) else {
            continue;
        };
        // sysUpTime.0, first of every notification: the sender's clock
        // when it sent it, the same in each copy it sends (one per
        // manager), different for the next.
        if uptime.is_none() && is_sys_up_time(name) {
            uptime = Some(value.trim().chars().take(64).collect::<String>());
            continue;
        }
        let Some(oid) = resolve(name) else { continue };
        // A value of an object snmptrapd knows by name is printed by its
        // DISPLAY-HINT, as it is; one it knows only by number, quoted.
        let by_name = named_object(name);
        if oid == SNMP_TRAP_OID {
            let Some(value) = resolve(value.trim()) else {
                break;
            };
            if event_of(&value).is_none() {
                // Not ours: nothing further is read.
                return Trap {
                    source,
                    event: Event::Other,
                    request: None,
                };
            }
            trap_oid = Some(value);
        } else if let Some((is_name, row)) = fact_cell(&oid) {
            let value = if by_name {
                value.trim().to_string()
            } else {
                unquote(value.trim())
            };
            if facts.len() < MAX_FACTS || facts.contains_key(&row) {
                let cell = facts.entry(row).or_default();
                let slot = if is_name { &mut cell.0 } else { &mut cell.1 };
                slot.get_or_insert(value);
            }
        } else if let Some(column) = carried_column(&oid) {
            let value = if by_name {
                value.trim().to_string()
            } else {
                unquote(value.trim())
            };
            match column {
                Column::Type => resource_type = resource_type.or(Some(value)),
                Column::Title => title = title.or(Some(value)),
                Column::Status => status = status.or_else(|| run_status(&value)),
                Column::ResourcesChanged => {
                    resources_changed = resources_changed.or_else(|| first_number(&value))
                }
                Column::JobId => job_id = job_id.or(Some(value).filter(|v| !v.is_empty())),
                Column::RunEnd => run_end = run_end.or_else(|| first_number(&value)),
                Column::Role => role = role.or(Some(value).filter(|v| !v.is_empty())),
                Column::EventTime => event_time = event_time.or_else(|| first_number(&value)),
                Column::ConfigVersion => config_version = config_version.or(Some(value)),
            }
        }
    }
    let request = match (&resource_type, &title) {
        // Without a clock of the sender's, two runs' events would look
        // the same: no key, then.
        _ if uptime.is_none() && event_time.is_none() => None,
        // The times and version first: a key cut to its length keeps them.
        (Some(resource_type), Some(title)) => Some(format!(
            "{} {} {} {resource_type}[{title}]",
            uptime.as_deref().unwrap_or("-"),
            event_time.map_or("-".to_string(), |t| t.to_string()),
            config_version.as_deref().unwrap_or("-")
        )),
        _ => None,
    };
    let event = match trap_oid.as_deref().and_then(event_of) {
        Some(Kind::ResourceChanged) => match (resource_type, title) {
            (Some(resource_type), Some(title)) => Event::ResourceChanged {
                resource_type,
                title,
            },
            _ => Event::Other,
        },
        Some(Kind::ResourceFailed) => match (resource_type, title) {
            (Some(resource_type), Some(title)) => Event::ResourceFailed {
                resource_type,
                title,
            },
            _ => Event::Other,
        },
        Some(Kind::RunEnded { failed }) => Event::RunEnded(RunEnd {
            failed,
            changed: if failed {
                resources_changed.map(|n| n > 0)
            } else {
                Some(true)
            },
            resources_changed,
            job_id: None,
            finished: false,
            run_end,
            role: None,
            facts: Vec::new(),
        }),
        Some(Kind::RunRecovered) => Event::RunEnded(RunEnd {
            resources_changed,
            run_end,
            ..RunEnd::default()
        }),
        Some(Kind::RunFinished) => Event::RunEnded(RunEnd {
            failed: status == Some(PuppetRunStatus::Failed),
            changed: match status {
                Some(PuppetRunStatus::Changed) => Some(true),
                Some(PuppetRunStatus::Unchanged) => Some(false),
                _ => resources_changed.map(|n| n > 0),
            },
            resources_changed,
            job_id,
            finished: true,
            run_end,
            role,
            facts: facts
                .into_values()
                .filter_map(|(name, value)| fact_pair(name?, value?))
                .collect(),
        }),
        None => Event::Other,
    };
    let request = request.filter(|_| {
        matches!(
            event,
            Event::ResourceChanged { .. } | Event::ResourceFailed { .. }
        )
    });
    Trap {
        source,
        event,
        request,
    }
}

enum Kind {
    ResourceChanged,
    ResourceFailed,
    /// puppetRunFailed (failed) or puppetRunChanged.
    RunEnded {
        failed: bool,
    },
    RunRecovered,
    RunFinished,
}

/// The notifications `kick` reads, as the catalogue types them.
fn event_of(oid: &[u32]) -> Option<Kind> {
    let number = match oid.strip_prefix(PUPPET_ROOT)? {
        [0, number] => *number,
        _ => return None,
    };
    let event = PuppetEvent::ALL.iter().find(|e| e.number() == number)?;
    match event {
        PuppetEvent::ResourceChanged => Some(Kind::ResourceChanged),
        PuppetEvent::ResourceFailed => Some(Kind::ResourceFailed),
        PuppetEvent::RunFailed => Some(Kind::RunEnded { failed: true }),
        PuppetEvent::RunChanged => Some(Kind::RunEnded { failed: false }),
        PuppetEvent::RunRecovered => Some(Kind::RunRecovered),
        PuppetEvent::RunFinished => Some(Kind::RunFinished),
        _ => None,
    }
}

/// The objects `kick` reads from the notifications' varbinds.
enum Column {
    Type,
    Title,
    Status,
    ResourcesChanged,
    JobId,
    RunEnd,
    Role,
    EventTime,
    ConfigVersion,
}

/// Which of the read objects `oid` is an instance of: a cell of
/// puppetEventResourceType or puppetEventTitle, or the scalars a run's
/// end carries.
fn carried_column(oid: &[u32]) -> Option<Column> {
    let rest = oid.strip_prefix(PUPPET_ROOT)?;
    for (name, column) in [
        ("puppetEventResourceType", Column::Type),
        ("puppetEventTitle", Column::Title),
        ("puppetLastRunStatus", Column::Status),
        ("puppetResourcesChanged", Column::ResourcesChanged),
        ("puppetLastRunJobId", Column::JobId),
        ("puppetLastRunTime", Column::RunEnd),
        ("puppetRole", Column::Role),
        ("puppetEventTime", Column::EventTime),
        ("puppetEventConfigVersion", Column::ConfigVersion),
    ] {
        let arcs = puppet_object_arcs(name)?;
        if rest.len() > arcs.len() && rest.starts_with(arcs) {
            return Some(column);
        }
    }
    None
}

/// Whether `oid` is a cell of `puppetFactTable` (`puppetFactName`: true,
/// `puppetFactValue`: false) and of which row.
fn fact_cell(oid: &[u32]) -> Option<(bool, u32)> {
    let rest = oid.strip_prefix(PUPPET_ROOT)?;
    for (name, is_name) in [("puppetFactName", true), ("puppetFactValue", false)] {
        let arcs = puppet_object_arcs(name)?;
        if let Some([row]) = rest.strip_prefix(arcs) {
            return (1..=MAX_FACTS as u32)
                .contains(row)
                .then_some((is_name, *row));
        }
    }
    None
}

/// A fact as carried, if its name is one (facter's shape) and both fit
/// the MIB's sizes; a value is cut at a character boundary.
fn fact_pair(name: String, value: String) -> Option<(String, String)> {
    if !crate::config::valid_fact_name(&name) || name.len() > MAX_FACT_NAME {
        return None;
    }
    let mut cut = value.len().min(MAX_FACT_VALUE);
    while !value.is_char_boundary(cut) {
        cut -= 1;
    }
    Some((name, value[..cut].to_string()))
}

/// puppetLastRunStatus as snmptrapd prints it: `changed`, `changed(2)`
/// or `2`.
fn run_status(value: &str) -> Option<PuppetRunStatus> {
    let word = value.split_whitespace().next()?;
    let label = word.split('(').next()?;
    let number = match label.parse::<i32>() {
        Ok(n) => n,
        Err(_) => return PuppetRunStatus::from_label(label),
    };
    PuppetRunStatus::LABELS
        .iter()
        .find(|(_, n)| *n == number)
        .and_then(|(label, _)| PuppetRunStatus::from_label(label))
}

/// A Gauge32 as snmptrapd prints it: `3`, or `3 resources` with the
/// object's units.
/// Whether a varbind's name is sysUpTime.0, as snmptrapd prints it by
/// number or by name.
fn is_sys_up_time(name: &str) -> bool {
    matches!(
        name,
        ".1.3.6.1.2.1.1.3.0"
            | "iso.3.6.1.2.1.1.3.0"
            | "DISMAN-EVENT-MIB::sysUpTimeInstance"
            | "SNMPv2-MIB::sysUpTime.0"
            | "sysUpTimeInstance"
            | "sysUpTime.0"
    )
}

fn first_number(value: &str) -> Option<u64> {
    value.split_whitespace().next()?.parse().ok()
}

fn puppet_object_arcs(name: &str) -> Option<&'static [u32]> {
    puppet_objects().find(|o| o.name == name).map(|o| o.arcs)
}

/// The source address in a transport line: `UDP: [10.0.0.1]:4000->[…]:162`,
/// `UDP/IPv6: [fd00::1]:4000`, `TCP: [10.0.0.1]:4000->…`.
fn transport_source(line: &str) -> Option<IpAddr> {
    let start = line.find('[')? + 1;
    let end = start + line[start..].find(']')?;
    line[start..end].parse().ok()
}

/// An OID as snmptrapd prints it: `.1.3.6…`, `iso.3.6…`,
/// `SNMPv2-SMI::enterprises.20267…`, `SNMPv2-MIB::snmpTrapOID.0`,
/// `PUPPET-AGENT-MIB::puppetEventTitle.7`. Names other than the few `kick`
/// reads are not resolved.
pub fn resolve(text: &str) -> Option<Vec<u32>> {
    let text = text.rsplit("::").next()?;
    let text = text.strip_prefix('.').unwrap_or(text);
    let (head, rest) = match text.split_once('.') {
        Some((head, rest)) => (head, Some(rest)),
        None => (text, None),
    };
    let mut oid: Vec<u32> = if let Ok(first) = head.parse::<u32>() {
        vec![first]
    } else {
        named(head)?
    };
    if let Some(rest) = rest {
        for arc in rest.split('.') {
            oid.push(arc.parse().ok()?);
        }
    }
    (oid.len() <= 128).then_some(oid)
}

/// Whether `text` names its object (`PUPPET-AGENT-MIB::puppetEventTitle.7`,
/// `puppetEventTitle.7`) rather than numbering it (`.1.3.6…`, `iso.3.6…`,
/// `SNMPv2-SMI::enterprises.20267…`).
fn named_object(text: &str) -> bool {
    let head = text.rsplit("::").next().unwrap_or(text);
    let head = head.split('.').next().unwrap_or(head);
    !head.is_empty() && !matches!(head, "iso" | "enterprises") && head.parse::<u32>().is_err()
}

fn named(name: &str) -> Option<Vec<u32>> {
    let under_root = |arcs: &[u32]| [PUPPET_ROOT, arcs].concat();
    match name {
        "iso" => Some(vec![1]),
        "enterprises" => Some(vec![1, 3, 6, 1, 4, 1]),
        // snmpTrapOID without its instance (the `.0` follows).
        "snmpTrapOID" => Some(SNMP_TRAP_OID[..SNMP_TRAP_OID.len() - 1].to_vec()),
        _ => {
            if let Some(event) = PuppetEvent::from_name(name) {
                return Some(under_root(&[0, event.number()]));
            }
            puppet_object_arcs(name).map(under_root)
        }
    }
}

/// A string value as net-snmp prints it: `"text"`, with `\"` and `\\`
/// escaped; anything else (hex, a bare word) as it stands.
fn unquote(value: &str) -> String {
    let Some(inner) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) else {
        return value.to_string();
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The role a resource event asks to kick: `Notify[kick -> ROLE]`.
pub fn kicked_role(resource_type: &str, title: &str) -> Option<String> {
    if resource_type != "Notify" {
        return None;
    }
    let rest = title.trim().strip_prefix("kick")?;
    let role = rest.trim_start().strip_prefix("->")?.trim();
    Some(role.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As snmptrapd 5.9.3 handed it to a traphandle, with our MIBs loaded
    /// and without (tests/fixtures/snmptrapd/README.md).
    const NAMED: &str = include_str!("../../tests/fixtures/snmptrapd/handler-input-named.txt");
    const NUMERIC: &str = include_str!("../../tests/fixtures/snmptrapd/handler-input-numeric.txt");

    #[test]
    fn a_resource_notification_by_name_and_by_number() {
        // The same notification: by name the title is printed as it is, by
        // number quoted and escaped; both read the same.
        for text in [NAMED, NUMERIC] {
            let trap = parse(text);
            assert_eq!(trap.source, Some("127.0.0.1".parse().unwrap()));
            assert_eq!(
                trap.event,
                Event::ResourceChanged {
                    resource_type: "Notify".into(),
                    title: "kick -> \"haproxy\" \\ x".into()
                },
                "{text}"
            );
            assert_eq!(read(&mut text.as_bytes()), trap);
        }
        // A title that is itself quoted keeps its quotes when named.
        let quoted = NAMED.replace("kick -> \"haproxy\" \\ x", "\"kick -> db\"");
        let Event::ResourceChanged { title, .. } = parse(&quoted).event else {
            panic!()
        };
        assert_eq!(title, "\"kick -> db\"");
    }

    #[test]
    fn a_resource_request_is_known_by_the_senders_clock_and_its_event() {
        // What two managers both hearing one notification agree on.
        let named = parse(NAMED).request.unwrap();
        assert!(named.starts_with("0:2:10:48.44 1795683336 "), "{named}");
        assert!(
            named.ends_with("Notify[kick -> \"haproxy\" \\ x]"),
            "{named}"
        );
        let numeric = parse(NUMERIC).request.unwrap();
        assert!(numeric.starts_with("0:2:10:57.31 1795683336 "), "{numeric}");
        // Another send of the same event is another request.
        assert_ne!(
            named,
            parse(&NAMED.replace("48.44", "48.45")).request.unwrap()
        );
        // Without the sender's clock nor the event's time: none.
        let bare: String = NUMERIC
            .lines()
            .filter(|l| !l.starts_with(".1.3.6.1.2.1.1.3.0") && !l.contains(".401.4.1.2."))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(parse(&bare).request, None);
        assert!(matches!(parse(&bare).event, Event::ResourceChanged { .. }));
    }

    #[test]
    fn run_notifications_and_others() {
        let run = |name: &str| {
            parse(&format!(
                "h\nUDP: [fd00::2]:1->[fd00::1]:162\nSNMPv2-MIB::snmpTrapOID.0 PUPPET-AGENT-MIB::{name}\n"
            ))
        };
        let ended = |event: Event| match event {
            Event::RunEnded(end) => (end.failed, end.changed, end.finished),
            other => panic!("{other:?}"),
        };
        assert_eq!(ended(run("puppetRunFailed").event), (true, None, false));
        assert_eq!(
            ended(run("puppetRunChanged").event),
            (false, Some(true), false)
        );
        assert_eq!(ended(run("puppetRunRecovered").event), (false, None, false));
        assert_eq!(run("puppetAgentStale").event, Event::Other);
        // A failed resource, by number, its row's type and title.
        let failed = parse(
            "h\nUDP: [10.0.0.1]:1->[10.0.0.2]:162\n.1.3.6.1.6.3.1.1.4.1.0 .1.3.6.1.4.1.20267.401.0.10\n\
             .1.3.6.1.4.1.20267.401.4.1.4.3 \"File\"\n.1.3.6.1.4.1.20267.401.4.1.5.3 \"/etc/x\"\n",
        );
        assert_eq!(
            failed.event,
            Event::ResourceFailed {
                resource_type: "File".into(),
                title: "/etc/x".into()
            }
        );
        assert_eq!(
            run("puppetRunFailed").source,
            Some("fd00::2".parse().unwrap())
        );
        let cold = parse(
            "h\nUDP: [10.0.0.1]:1->[10.0.0.2]:162\n.1.3.6.1.6.3.1.1.4.1.0 .1.3.6.1.6.3.1.1.5.1\n",
        );
        assert_eq!(cold.event, Event::Other);
    }

    #[test]
    fn a_run_end_by_name_and_by_number_with_its_job_id() {
        // puppetRunFinished as snmptrapd hands it over with our MIBs
        // loaded (labels, units) and without (numbers, quoted strings).
        let named = "h\nUDP: [10.0.0.7]:1->[10.0.0.2]:162\n\
            SNMPv2-MIB::sysUpTime.0 0:0:01:00.00\n\
            SNMPv2-MIB::snmpTrapOID.0 PUPPET-AGENT-MIB::puppetRunFinished\n\
            PUPPET-AGENT-MIB::puppetLastRunStatus.0 unchanged\n\
            PUPPET-AGENT-MIB::puppetLastRunTime.0 1795683336 seconds\n\
            PUPPET-AGENT-MIB::puppetResourcesChanged.0 0 resources\n\
            PUPPET-AGENT-MIB::puppetLastRunTransaction.0 534e2b3d-255f-42ce-8625-a0d2c93b2b91\n\
            PUPPET-AGENT-MIB::puppetLastRunJobId.0 1795683336000-77-0\n\
            PUPPET-AGENT-MIB::puppetRole.0 haproxy\n\
            PUPPET-AGENT-MIB::puppetFactName.1 hostname\n\
            PUPPET-AGENT-MIB::puppetFactValue.1 web1\n\
            PUPPET-AGENT-MIB::puppetFactName.3 uptime_seconds\n\
            PUPPET-AGENT-MIB::puppetFactValue.3 12\n";
        let numeric = "h\nUDP: [10.0.0.7]:1->[10.0.0.2]:162\n\
            .1.3.6.1.6.3.1.1.4.1.0 .1.3.6.1.4.1.20267.401.0.18\n\
            .1.3.6.1.4.1.20267.401.1.3.0 1\n\
            .1.3.6.1.4.1.20267.401.1.5.0 0\n\
            .1.3.6.1.4.1.20267.401.1.53.0 \"1795683336000-77-0\"\n\
            .1.3.6.1.4.1.20267.401.1.54.0 \"haproxy\"\n\
            .1.3.6.1.4.1.20267.401.6.1.2.1 \"hostname\"\n\
            .1.3.6.1.4.1.20267.401.6.1.3.1 \"web1\"\n\
            .1.3.6.1.4.1.20267.401.6.1.3.3 \"12\"\n\
            .1.3.6.1.4.1.20267.401.6.1.2.3 \"uptime_seconds\"\n\
            .1.3.6.1.4.1.20267.401.6.1.2.4 \"-bad name\"\n\
            .1.3.6.1.4.1.20267.401.6.1.3.4 \"x\"\n\
            .1.3.6.1.4.1.20267.401.6.1.2.5 \"no_value\"\n\
            .1.3.6.1.4.1.20267.401.6.1.2.99 \"out_of_range\"\n\
            .1.3.6.1.4.1.20267.401.6.1.3.99 \"x\"\n";
        for text in [named, numeric] {
            let Event::RunEnded(end) = parse(text).event else {
                panic!("{text}")
            };
            assert_eq!(
                end,
                RunEnd {
                    failed: false,
                    changed: Some(false),
                    resources_changed: Some(0),
                    job_id: Some("1795683336000-77-0".into()),
                    finished: true,
                    run_end: (text == named).then_some(1795683336),
                    role: Some("haproxy".into()),
                    facts: vec![
                        ("hostname".into(), "web1".into()),
                        ("uptime_seconds".into(), "12".into()),
                    ],
                },
                "{text}"
            );
        }
        // A run given no job id: the object is empty.
        let none = numeric
            .replace("\"1795683336000-77-0\"", "\"\"")
            .replace("401.1.3.0 1", "401.1.3.0 3");
        let Event::RunEnded(end) = parse(&none).event else {
            panic!()
        };
        assert_eq!((end.failed, end.job_id), (true, None));
        assert_eq!(run_status("changed(2)"), Some(PuppetRunStatus::Changed));
        assert_eq!(run_status("9"), None);
    }

    #[test]
    fn a_huge_notification_is_cut_not_read() {
        let mut text = String::from("h\nUDP: [10.0.0.1]:1->[10.0.0.2]:162\n");
        text.push_str(".1.3.6.1.6.3.1.1.4.1.0 .1.3.6.1.4.1.20267.401.0.9\n");
        for row in 0..2000 {
            text.push_str(&format!(".1.3.6.1.4.1.20267.401.4.1.6.{row} \"x\"\n"));
        }
        // The type and title come after the first 96 varbinds: ignored.
        text.push_str(".1.3.6.1.4.1.20267.401.4.1.4.1 \"Notify\"\n");
        text.push_str(".1.3.6.1.4.1.20267.401.4.1.5.1 \"kick -> db\"\n");
        assert_eq!(parse(&text).event, Event::Other);
        // No address in the transport line: no source.
        assert_eq!(parse("h\nlocal\n").source, None);
        assert_eq!(parse("").event, Event::Other);
    }

    #[test]
    fn the_role_of_a_kick() {
        assert_eq!(
            kicked_role("Notify", "kick -> haproxy").as_deref(),
            Some("haproxy")
        );
        assert_eq!(kicked_role("Notify", " kick->db ").as_deref(), Some("db"));
        assert_eq!(kicked_role("File", "kick -> db"), None);
        assert_eq!(kicked_role("Notify", "hello"), None);
    }

    #[test]
    fn oids_in_every_spelling() {
        let title = resolve("PUPPET-AGENT-MIB::puppetEventTitle.7").unwrap();
        assert_eq!(title, resolve(".1.3.6.1.4.1.20267.401.4.1.5.7").unwrap());
        assert_eq!(title, resolve("iso.3.6.1.4.1.20267.401.4.1.5.7").unwrap());
        assert_eq!(
            title,
            resolve("SNMPv2-SMI::enterprises.20267.401.4.1.5.7").unwrap()
        );
        assert_eq!(resolve("snmpTrapOID.0").unwrap(), SNMP_TRAP_OID);
        assert_eq!(resolve("nonsense.1"), None);
        assert_eq!(resolve("1.x"), None);
    }
}
