//! `last_run_report.yaml`: the full report of the last run (Debian 12:
//! `/var/cache/puppet/state/last_run_report.yaml`, mode 0640).
//!
//! It starts with the document's only tag,
//! `--- !ruby/object:Puppet::Transaction::Report`; the rest is plain YAML.
//! The tag is ignored: the mapping under it is read like any other.
//!
//! A report grows with the catalog (about 0.7 MB per 1,000 resources), so
//! this parser keeps only what the subagent shows, while it streams:
//! - the run's flags: `status`, `transaction_completed`, `noop`,
//!   `noop_pending`, `corrective_change`, `cached_catalog_status`, and its
//!   identity: `host`, `time` (the run's *start*), `configuration_version`,
//!   `environment`, `puppet_version`, `transaction_uuid`, `catalog_uuid`;
//! - `metrics` (a few dozen numbers, same as the summary's);
//! - from `logs`: counts per level and the first error-level message;
//! - from `resource_statuses`: counts, and at most
//!   [`MAX_LISTED_RESOURCES`] resources that failed, failed to restart,
//!   were skipped, changed or are out of sync (noop), failures first.
//!
//! Everything else (unchanged resources, event values, tags, containment
//! paths) is skipped as it is parsed.
//!
//! The report does not say which application wrote it: `agent` vs `user`
//! (`puppet apply`) is only in the summary's `application.run_mode`.

use super::yaml::{self, ConfigVersion, Number, ParseError, Text, MAX_TEXT_BYTES};
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::fmt;

/// Largest report file accepted, in bytes: about 90,000 resources. Larger
/// input is refused before parsing.
pub const MAX_REPORT_BYTES: usize = 64 << 20;

/// Most resources kept in [`RunReport::resources`]'s list.
pub const MAX_LISTED_RESOURCES: usize = 100;

/// Most resources whose first warning or error log line is remembered
/// while the logs are read (to describe skipped resources, which have no
/// events).
pub const MAX_LOGGED_RESOURCES: usize = 10_000;

/// Most metric values kept per metric group.
pub const MAX_METRIC_VALUES: usize = 1000;

// A run's outcome (`status`), whether it applied a cached catalog
// (`cached_catalog_status`) and what happened to a listed resource are
// read straight into the catalogue's enumerations (`puppetLastRunStatus`,
// `puppetCachedCatalogStatus`, `puppetResourceState`) by their labels: a
// run's status is unknown(4) when no data says or the word is not
// Puppet's; resource states are ordered as they are listed (failures
// first).
use crate::metrics::{PuppetCachedCatalog, PuppetResourceState, PuppetRunStatus};

/// The report's `time`: the run's start, with the writer's UTC offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportTime {
    /// Unix seconds (UTC).
    pub unix_seconds: i64,
    /// Nanoseconds past `unix_seconds`.
    pub nanos: u32,
    /// The offset the time was written with, in minutes east of UTC.
    pub offset_minutes: i32,
}

impl ReportTime {
    /// Unix time in seconds, with the fraction.
    pub fn as_f64(&self) -> f64 {
        self.unix_seconds as f64 + f64::from(self.nanos) / 1e9
    }

    /// Parse an ISO 8601 date and time as Ruby writes it:
    /// `2026-11-22T08:30:08.498514944+00:00` (`T` or a space between date
    /// and time; fraction optional; offset `Z`, `±HH:MM`, `±HHMM` or `±HH`;
    /// no offset means UTC).
    pub fn parse(s: &str) -> Option<ReportTime> {
        let s = s.trim();
        let b = s.as_bytes();
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            let part = b.get(r)?;
            if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
                return None;
            }
            std::str::from_utf8(part).ok()?.parse().ok()
        };
        if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
            return None;
        }
        if b[13] != b':' || b[16] != b':' {
            return None;
        }
        let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
        if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
            return None;
        }
        if hour > 23 || minute > 59 || second > 60 {
            return None;
        }
        let mut i = 19;
        let mut nanos: u32 = 0;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                if i - start < 9 {
                    nanos = nanos * 10 + u32::from(b[i] - b'0');
                }
                i += 1;
            }
            if i == start {
                return None;
            }
            for _ in (i - start)..9 {
                nanos *= 10;
            }
        }
        let offset_minutes = match &b[i..] {
            [] | [b'Z'] | [b'z'] => 0,
            [sign @ (b'+' | b'-'), rest @ ..] => {
                let digits: Vec<u8> = rest.iter().copied().filter(|c| *c != b':').collect();
                let colon_ok = match rest.len() {
                    2 | 4 => !rest.contains(&b':'),
                    5 => rest[2] == b':',
                    _ => false,
                };
                if !colon_ok
                    || !matches!(digits.len(), 2 | 4)
                    || !digits.iter().all(u8::is_ascii_digit)
                {
                    return None;
                }
                let h = i32::from(digits[0] - b'0') * 10 + i32::from(digits[1] - b'0');
                let m = match digits.len() {
                    4 => i32::from(digits[2] - b'0') * 10 + i32::from(digits[3] - b'0'),
                    _ => 0,
                };
                if h > 23 || m > 59 {
                    return None;
                }
                let total = h * 60 + m;
                if *sign == b'-' {
                    -total
                } else {
                    total
                }
            }
            _ => return None,
        };
        let days = days_from_civil(year, month, day);
        let local = days * 86_400 + hour * 3600 + minute * 60 + second;
        Some(ReportTime {
            unix_seconds: local - i64::from(offset_minutes) * 60,
            nanos,
            offset_minutes,
        })
    }
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (years 0..=9999).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    // Count from 0000-03-01 so that the leap day ends each 4-year cycle.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// A resource that failed, was skipped, changed or is out of sync.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceEntry {
    /// `Type[title]`, e.g. `Exec[will-fail]`.
    pub resource: String,
    /// `Exec`, `File`, `Foo::Bar`.
    pub resource_type: String,
    pub title: String,
    pub state: PuppetResourceState,
    pub corrective_change: bool,
    /// Properties changed.
    pub change_count: u64,
    /// The first failed event's message, else the first event's, else (for
    /// skipped resources, which have no events) the first warning or error
    /// logged for the resource, e.g. `Skipping because of failed
    /// dependencies`.
    pub message: Option<String>,
    /// Manifest file and line that declared the resource.
    pub file: Option<String>,
    pub line: Option<u64>,
}

/// Counts over every entry of `resource_statuses` (not only the listed ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ResourceCounts {
    pub total: u64,
    pub failed: u64,
    pub failed_to_restart: u64,
    pub skipped: u64,
    pub changed: u64,
    pub out_of_sync: u64,
    pub corrective_change: u64,
}

/// The noteworthy resources of the run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResourceDigest {
    /// At most [`MAX_LISTED_RESOURCES`], ordered by state (failures first),
    /// then in the report's order (evaluation order).
    pub listed: Vec<ResourceEntry>,
    /// Noteworthy resources left out of `listed` by the cap.
    pub omitted: u64,
    pub counts: ResourceCounts,
}

/// One log line of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    pub level: String,
    /// `Puppet`, `Facter`, or a resource path like
    /// `/Stage[main]/Main/Exec[will-fail]/returns`.
    pub source: Option<String>,
    pub message: String,
}

/// Counts per level and the first error of `logs`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LogDigest {
    pub total: u64,
    /// Lines at level `err`, `alert`, `emerg` or `crit`.
    pub errors: u64,
    pub warnings: u64,
    /// The first error-level line, for "first failure message". Lines from
    /// `Facter` are passed over when a later error comes from elsewhere:
    /// fact resolution errors (e.g. `Permission denied ... /proc/1/environ`
    /// in containers) come first in agent reports, do not fail the run, and
    /// would hide the error that did.
    pub first_error: Option<LogLine>,
}

/// The parts of one run's report the subagent uses.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunReport {
    /// `host`: the node's certname.
    pub host: Option<String>,
    /// `time`: when the run *started*.
    pub time: Option<ReportTime>,
    pub configuration_version: Option<ConfigVersion>,
    pub transaction_uuid: Option<String>,
    /// `job_id`: the id `puppet agent --job-id` gave the run (a kick's
    /// id); absent or null for other runs. The summary and the JSON log
    /// never carry it: the report is the one place that ties a run to
    /// its kick.
    pub job_id: Option<String>,
    /// Only present when a catalog was applied.
    pub catalog_uuid: Option<String>,
    pub report_format: Option<u64>,
    pub puppet_version: Option<String>,
    /// `status`; [`PuppetRunStatus::Unknown`] when missing or not one of
    /// `unchanged`, `changed`, `failed`.
    pub status: PuppetRunStatus,
    /// `transaction_completed`: false when no catalog was applied or the
    /// transaction could not run (e.g. a dependency cycle).
    pub transaction_completed: Option<bool>,
    pub noop: bool,
    /// Whether a noop run found resources out of sync.
    pub noop_pending: bool,
    /// Only ever true under `puppet agent`.
    pub corrective_change: bool,
    pub cached_catalog_status: Option<PuppetCachedCatalog>,
    pub environment: Option<String>,
    /// `server_used` (`host:port`), agent runs with a server only.
    pub server_used: Option<String>,
    /// `metrics.<group>.values` as `group → key → value`: groups
    /// `resources`, `time`, `changes`, `events`, with the summary's keys.
    pub metrics: BTreeMap<String, BTreeMap<String, f64>>,
    pub logs: LogDigest,
    pub resources: ResourceDigest,
}

impl RunReport {
    /// `metrics.<group>.<key>`.
    pub fn metric(&self, group: &str, key: &str) -> Option<f64> {
        self.metrics.get(group)?.get(key).copied()
    }

    /// When the run ended, as Unix seconds: start `time` plus the `total`
    /// time metric. This is what pairs the report with a summary, whose
    /// `time.last_run` is taken right after (see
    /// [`super::state::pairing`]).
    pub fn end_time(&self) -> Option<f64> {
        Some(self.time?.as_f64() + self.metric("time", "total")?)
    }
}

/// Parse a `last_run_report.yaml`.
///
/// Refuses input over [`MAX_REPORT_BYTES`] before parsing, empty input, and
/// anything whose top level is not a mapping (tagged or not). Unknown keys
/// are ignored; a known key with a value of the wrong shape is an error.
pub fn parse_report(bytes: &[u8]) -> Result<RunReport, ParseError> {
    if bytes.len() > MAX_REPORT_BYTES {
        return Err(ParseError::TooLarge {
            len: bytes.len() as u64,
            max: MAX_REPORT_BYTES as u64,
        });
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ParseError::Empty);
    }
    let raw: RawReport = yaml::from_slice(bytes, MAX_REPORT_BYTES).map_err(ParseError::Yaml)?;
    let logs = raw.logs.unwrap_or_default();
    let mut resources = raw.resources.unwrap_or_default();
    // Skipped resources have no events: describe them by their log line.
    for entry in resources.listed.iter_mut().filter(|e| e.message.is_none()) {
        if let Some(m) = logs.by_resource.get(&entry.resource) {
            entry.message = Some(m.clone());
        }
    }
    let mut first_error = logs.first_error.or(logs.first_facter_error);
    if let Some(line) = &mut first_error {
        yaml::truncate(&mut line.message, MAX_TEXT_BYTES);
    }
    Ok(RunReport {
        host: raw.host.map(|t| t.0),
        time: raw.time.and_then(|t| ReportTime::parse(&t.0)),
        configuration_version: raw.configuration_version,
        transaction_uuid: raw.transaction_uuid.map(|t| t.0),
        job_id: raw.job_id.map(|t| t.0).filter(|j| !j.is_empty()),
        catalog_uuid: raw.catalog_uuid.map(|t| t.0),
        report_format: raw.report_format,
        puppet_version: raw.puppet_version.map(|t| t.0),
        status: raw
            .status
            .and_then(|s| PuppetRunStatus::from_label(&s.0))
            .unwrap_or(PuppetRunStatus::Unknown),
        transaction_completed: raw.transaction_completed,
        noop: raw.noop.unwrap_or(false),
        noop_pending: raw.noop_pending.unwrap_or(false),
        corrective_change: raw.corrective_change.unwrap_or(false),
        cached_catalog_status: raw
            .cached_catalog_status
            .map(|s| PuppetCachedCatalog::from_label(&s.0).unwrap_or(PuppetCachedCatalog::Unknown)),
        environment: raw.environment.map(|t| t.0),
        server_used: raw.server_used.map(|t| t.0),
        metrics: raw.metrics.map(|m| m.0).unwrap_or_default(),
        logs: LogDigest {
            total: logs.total,
            errors: logs.errors,
            warnings: logs.warnings,
            first_error,
        },
        resources: ResourceDigest {
            listed: resources.listed,
            omitted: resources.omitted,
            counts: resources.counts,
        },
    })
}

#[derive(Deserialize)]
struct RawReport {
    host: Option<Text>,
    time: Option<Text>,
    configuration_version: Option<ConfigVersion>,
    transaction_uuid: Option<Text>,
    job_id: Option<Text>,
    catalog_uuid: Option<Text>,
    report_format: Option<u64>,
    puppet_version: Option<Text>,
    status: Option<Text>,
    transaction_completed: Option<bool>,
    noop: Option<bool>,
    noop_pending: Option<bool>,
    corrective_change: Option<bool>,
    cached_catalog_status: Option<Text>,
    environment: Option<Text>,
    server_used: Option<Text>,
    logs: Option<LogsAcc>,
    metrics: Option<MetricsAcc>,
    #[serde(rename = "resource_statuses")]
    resources: Option<ResourcesAcc>,
}

// ---- logs ----

#[derive(Default)]
struct LogsAcc {
    total: u64,
    errors: u64,
    warnings: u64,
    first_error: Option<LogLine>,
    first_facter_error: Option<LogLine>,
    /// `Type[title]` → first warning-or-worse message about it.
    by_resource: HashMap<String, String>,
}

#[derive(Deserialize)]
struct RawLog {
    level: Option<Text>,
    message: Option<Text>,
    source: Option<Text>,
}

fn is_error_level(level: &str) -> bool {
    matches!(level, "err" | "alert" | "emerg" | "crit")
}

/// The resource a log line's source names: `/Stage[main]/Main/File[/a/b]/content`
/// → `File[/a/b]`. Titles may contain `/` and brackets, so this looks for
/// the last `]`, its matching `[`, and the type name before it.
fn resource_of_source(source: &str) -> Option<&str> {
    let end = source.rfind(']')?;
    let b = source.as_bytes();
    let mut depth = 0usize;
    let mut open = None;
    for i in (0..=end).rev() {
        match b[i] {
            b']' => depth += 1,
            b'[' => {
                depth -= 1;
                if depth == 0 {
                    open = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let open = open?;
    let start = source[..open].rfind('/').map_or(0, |i| i + 1);
    let type_name = &source[start..open];
    if type_name.is_empty() || !type_name.starts_with(|c: char| c.is_ascii_uppercase()) {
        return None;
    }
    Some(&source[start..=end])
}

impl<'de> Deserialize<'de> for LogsAcc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LogsAcc;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of log entries")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<LogsAcc, A::Error> {
                let mut acc = LogsAcc::default();
                while let Some(log) = seq.next_element::<RawLog>()? {
                    acc.total += 1;
                    let level = log.level.map(|t| t.0).unwrap_or_default();
                    let is_error = is_error_level(&level);
                    if is_error {
                        acc.errors += 1;
                    } else if level == "warning" {
                        acc.warnings += 1;
                    }
                    if !is_error && level != "warning" {
                        continue;
                    }
                    let message = log.message.map(|t| t.0).unwrap_or_default();
                    let source = log.source.map(|t| t.0);
                    if let Some(r) = source.as_deref().and_then(resource_of_source) {
                        if acc.by_resource.len() < MAX_LOGGED_RESOURCES
                            && !acc.by_resource.contains_key(r)
                        {
                            acc.by_resource.insert(r.to_owned(), message.clone());
                        }
                    }
                    if is_error {
                        let facter = source.as_deref() == Some("Facter");
                        let slot = if facter {
                            &mut acc.first_facter_error
                        } else {
                            &mut acc.first_error
                        };
                        if slot.is_none() {
                            *slot = Some(LogLine {
                                level,
                                source,
                                message,
                            });
                        }
                    }
                }
                Ok(acc)
            }
        }
        d.deserialize_seq(V)
    }
}

// ---- metrics ----

struct MetricsAcc(BTreeMap<String, BTreeMap<String, f64>>);

#[derive(Deserialize)]
struct RawMetricGroup {
    values: Option<MetricValues>,
}

struct MetricValues(BTreeMap<String, f64>);

impl<'de> Deserialize<'de> for MetricsAcc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MetricsAcc;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping of metric groups")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MetricsAcc, A::Error> {
                let mut groups = BTreeMap::new();
                while let Some(name) = map.next_key::<Text>()? {
                    let group: Option<RawMetricGroup> = map.next_value()?;
                    let values = group
                        .and_then(|g| g.values)
                        .map(|v| v.0)
                        .unwrap_or_default();
                    if groups.len() < MAX_METRIC_VALUES {
                        groups.insert(name.0, values);
                    }
                }
                Ok(MetricsAcc(groups))
            }
        }
        d.deserialize_map(V)
    }
}

/// `values: [[key, Label, value], ...]`.
impl<'de> Deserialize<'de> for MetricValues {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MetricValues;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of [key, label, value] lists")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<MetricValues, A::Error> {
                let mut values = BTreeMap::new();
                while let Some((key, _label, value)) =
                    seq.next_element::<(Text, IgnoredAny, Option<Number>)>()?
                {
                    if let Some(Number(v)) = value {
                        if values.len() < MAX_METRIC_VALUES {
                            values.insert(key.0, v);
                        }
                    }
                }
                Ok(MetricValues(values))
            }
        }
        d.deserialize_seq(V)
    }
}

// ---- resource_statuses ----

#[derive(Default)]
struct ResourcesAcc {
    listed: Vec<ResourceEntry>,
    omitted: u64,
    counts: ResourceCounts,
}

#[derive(Deserialize)]
struct RawStatus {
    title: Option<Text>,
    resource: Option<Text>,
    resource_type: Option<Text>,
    file: Option<Text>,
    line: Option<u64>,
    failed: Option<bool>,
    failed_to_restart: Option<bool>,
    changed: Option<bool>,
    out_of_sync: Option<bool>,
    skipped: Option<bool>,
    corrective_change: Option<bool>,
    change_count: Option<u64>,
    events: Option<EventsAcc>,
}

#[derive(Default)]
struct EventsAcc {
    first_failure: Option<String>,
    first: Option<String>,
}

#[derive(Deserialize)]
struct RawEvent {
    status: Option<Text>,
    message: Option<Text>,
}

impl<'de> Deserialize<'de> for EventsAcc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = EventsAcc;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of events")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<EventsAcc, A::Error> {
                let mut acc = EventsAcc::default();
                while let Some(event) = seq.next_element::<RawEvent>()? {
                    let Some(message) = event.message.map(|t| t.0) else {
                        continue;
                    };
                    let failed = event.status.is_some_and(|s| s.0 == "failure");
                    if failed && acc.first_failure.is_none() {
                        acc.first_failure = Some(message.clone());
                    }
                    if acc.first.is_none() {
                        acc.first = Some(message);
                    }
                }
                Ok(acc)
            }
        }
        d.deserialize_seq(V)
    }
}

/// A listed entry in the bounded heap: the greatest (least important) on top.
struct Ranked(usize, ResourceEntry);

impl Ranked {
    fn key(&self) -> (PuppetResourceState, usize) {
        (self.1.state, self.0)
    }
}
impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for Ranked {}
impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

/// `Type[title]` → (`Type`, `title`).
fn split_ref(r: &str) -> Option<(&str, &str)> {
    let open = r.find('[')?;
    let inner = r.strip_suffix(']')?;
    Some((&r[..open], &inner[open + 1..]))
}

impl<'de> Deserialize<'de> for ResourcesAcc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ResourcesAcc;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping of resource statuses")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ResourcesAcc, A::Error> {
                let mut counts = ResourceCounts::default();
                let mut heap: BinaryHeap<Ranked> = BinaryHeap::new();
                let mut noteworthy: u64 = 0;
                let mut seq = 0usize;
                while let Some(key) = map.next_key::<Text>()? {
                    let s: RawStatus = map.next_value()?;
                    counts.total += 1;
                    let flag = |f: Option<bool>| f.unwrap_or(false);
                    let (failed, ftr, skipped) =
                        (flag(s.failed), flag(s.failed_to_restart), flag(s.skipped));
                    let (changed, oos) = (flag(s.changed), flag(s.out_of_sync));
                    let corrective = flag(s.corrective_change);
                    counts.failed += u64::from(failed);
                    counts.failed_to_restart += u64::from(ftr);
                    counts.skipped += u64::from(skipped);
                    counts.changed += u64::from(changed);
                    counts.out_of_sync += u64::from(oos);
                    counts.corrective_change += u64::from(corrective);
                    let state = if failed {
                        PuppetResourceState::Failed
                    } else if ftr {
                        PuppetResourceState::FailedToRestart
                    } else if skipped {
                        PuppetResourceState::Skipped
                    } else if changed {
                        PuppetResourceState::Changed
                    } else if oos {
                        PuppetResourceState::OutOfSync
                    } else {
                        continue;
                    };
                    noteworthy += 1;
                    seq += 1;
                    if heap.len() == MAX_LISTED_RESOURCES
                        && heap.peek().is_some_and(|worst| worst.key() <= (state, seq))
                    {
                        continue;
                    }
                    let resource = s.resource.map_or(key.0, |t| t.0);
                    let (ty, title) = split_ref(&resource).unwrap_or((&resource, ""));
                    let resource_type = s.resource_type.map_or_else(|| ty.to_owned(), |t| t.0);
                    let title = s.title.map_or_else(|| title.to_owned(), |t| t.0);
                    let events = s.events.unwrap_or_default();
                    let mut message = events.first_failure.or(events.first);
                    if let Some(m) = &mut message {
                        yaml::truncate(m, MAX_TEXT_BYTES);
                    }
                    heap.push(Ranked(
                        seq,
                        ResourceEntry {
                            resource,
                            resource_type,
                            title,
                            state,
                            corrective_change: corrective,
                            change_count: s.change_count.unwrap_or(0),
                            message,
                            file: s.file.map(|t| t.0),
                            line: s.line,
                        },
                    ));
                    if heap.len() > MAX_LISTED_RESOURCES {
                        heap.pop();
                    }
                }
                let listed: Vec<ResourceEntry> =
                    heap.into_sorted_vec().into_iter().map(|r| r.1).collect();
                Ok(ResourcesAcc {
                    omitted: noteworthy - listed.len() as u64,
                    listed,
                    counts,
                })
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_time_parses_ruby_iso8601() {
        let t = ReportTime::parse("2026-11-22T08:30:08.498514944+00:00").unwrap();
        assert_eq!(t.unix_seconds, 1_795_336_208);
        assert_eq!(t.nanos, 498_514_944);
        assert_eq!(t.offset_minutes, 0);
        let t = ReportTime::parse("2026-11-22T09:30:08.5+01:00").unwrap();
        assert_eq!(
            (t.unix_seconds, t.nanos, t.offset_minutes),
            (1_795_336_208, 500_000_000, 60)
        );
        let t = ReportTime::parse("2026-11-22 03:00:08-0530").unwrap();
        assert_eq!((t.unix_seconds, t.offset_minutes), (1_795_336_208, -330));
        assert_eq!(
            ReportTime::parse("1970-01-01T00:00:00Z")
                .unwrap()
                .unix_seconds,
            0
        );
        assert_eq!(
            ReportTime::parse("2000-02-29T00:00:00Z")
                .unwrap()
                .unix_seconds,
            951_782_400
        );
        // More than 9 fractional digits are cut, not rounded.
        assert_eq!(
            ReportTime::parse("1970-01-01T00:00:00.1234567891Z")
                .unwrap()
                .nanos,
            123_456_789
        );
        for bad in [
            "",
            "2026-11-22",
            "2026-13-01T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2026-11-22T24:00:00Z",
            "2026-11-22T08:30:08.+00:00",
            "2026-11-22T08:30:08+0",
            "2026-11-22T08:30:08+00:0",
            "2026-11-22T08:30:08 UTC",
            "２026-11-22T08:30:08Z",
            "x026-11-22T08:30:08Z",
        ] {
            assert_eq!(ReportTime::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn resource_of_source_handles_paths_and_brackets() {
        let r = resource_of_source;
        assert_eq!(
            r("/Stage[main]/Main/Exec[will-fail]/returns"),
            Some("Exec[will-fail]")
        );
        assert_eq!(
            r("/Stage[main]/Main/Notify[after-failure]"),
            Some("Notify[after-failure]")
        );
        assert_eq!(
            r("/Stage[main]/Main/File[/srv/a/b.txt]/content"),
            Some("File[/srv/a/b.txt]")
        );
        assert_eq!(
            r("/Stage[main]/Foo::Bar/Foo::Baz[x[1]]"),
            Some("Foo::Baz[x[1]]")
        );
        assert_eq!(r("Puppet"), None);
        assert_eq!(r("Facter"), None);
        assert_eq!(r("]]]"), None);
        assert_eq!(r("/x/[a]"), None);
    }

    #[test]
    fn split_ref_works() {
        assert_eq!(split_ref("File[/a/b]"), Some(("File", "/a/b")));
        assert_eq!(split_ref("Foo::Bar[x[1]]"), Some(("Foo::Bar", "x[1]")));
        assert_eq!(split_ref("nothing"), None);
    }

    #[test]
    fn listing_is_capped_failures_first_in_report_order() {
        let mut y =
            String::from("--- !ruby/object:Puppet::Transaction::Report\nresource_statuses:\n");
        // 150 changed, then 120 failed, then 10 unchanged.
        for i in 0..150 {
            y.push_str(&format!(
                "  File[/c/{i}]:\n    changed: true\n    out_of_sync: true\n"
            ));
        }
        for i in 0..120 {
            y.push_str(&format!(
                "  Exec[f{i}]:\n    failed: true\n    events:\n    - status: success\n      message: ok\n    - status: failure\n      message: boom {i}\n"
            ));
        }
        for i in 0..10 {
            y.push_str(&format!("  Notify[u{i}]:\n    changed: false\n"));
        }
        let r = parse_report(y.as_bytes()).unwrap();
        let d = &r.resources;
        assert_eq!(d.listed.len(), MAX_LISTED_RESOURCES);
        assert_eq!(d.omitted, 270 - MAX_LISTED_RESOURCES as u64);
        assert_eq!(d.counts.total, 280);
        assert_eq!(d.counts.failed, 120);
        assert_eq!(d.counts.changed, 150);
        assert!(d
            .listed
            .iter()
            .all(|e| e.state == PuppetResourceState::Failed));
        assert_eq!(d.listed[0].resource, "Exec[f0]");
        assert_eq!(d.listed[0].resource_type, "Exec");
        assert_eq!(d.listed[0].title, "f0");
        assert_eq!(d.listed[0].message.as_deref(), Some("boom 0"));
        assert_eq!(d.listed[99].resource, "Exec[f99]");
    }

    #[test]
    fn tolerant_of_missing_and_unknown_keys() {
        let r = parse_report(b"--- !ruby/object:Puppet::Transaction::Report\nhost: 12345\nnew_key: [1, {a: b}]\nstatus: exploded\n").unwrap();
        assert_eq!(r.host.as_deref(), Some("12345"));
        assert_eq!(r.status, PuppetRunStatus::Unknown);
        assert_eq!(r.transaction_completed, None);
        assert_eq!(r.cached_catalog_status, None);
        assert_eq!(r.end_time(), None);
        // Untagged works too.
        let r = parse_report(b"status: changed\ncached_catalog_status: whatever\n").unwrap();
        assert_eq!(r.status, PuppetRunStatus::Changed);
        assert_eq!(r.cached_catalog_status, Some(PuppetCachedCatalog::Unknown));
    }

    #[test]
    fn wrong_shapes_are_errors() {
        for bad in [
            &b"--- !ruby/object:Puppet::Transaction::Report\nlogs: 5\n"[..],
            b"logs: [1, 2]\n",
            b"resource_statuses: [a]\n",
            b"resource_statuses: {X[y]: {failed: maybe}}\n",
            b"metrics: {time: {values: [[total, Total, fast]]}}\n",
            b"transaction_completed: {a: 1}\n",
            b"report_format: twelve\n",
            b"- just\n- a list\n",
            b"plain scalar",
            b"{unclosed: [",
        ] {
            let e = parse_report(bad).unwrap_err();
            assert!(
                matches!(e, ParseError::Yaml(_)),
                "{:?} → {e:?}",
                String::from_utf8_lossy(bad)
            );
        }
        assert_eq!(parse_report(b"\n \n"), Err(ParseError::Empty));
    }
}
