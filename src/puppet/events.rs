//! Follows Puppet's events log (issue 13): each resource event the moment
//! Puppet writes it, as rows of `puppetEventTable` and readings for the
//! hub.
//!
//! ```text
//!  events.jsonl ──inotify/poll──▶ tail::Tail ──lines──▶ events_log::parse_line
//!      ──▶ EventTable (last N rows, counts, the run's version, the per-run budget)
//!      ──▶ Reading { PartKey::PuppetEvents, EventsObservation } ──channel──▶ hub
//! ```
//!
//! The follower is a thread of its own ([`spawn_events_follower`]): the
//! reads are blocking file I/O, and a run of thousands of resources must
//! not hold the runtime that answers snmpd. It waits on inotify (the
//! **directory** of the log, as the watcher does for the run files, so a
//! rotation or a log created later is seen), or [`FALLBACK`] at most, then
//! reads what is new with [`Tail`].
//!
//! Readings are cut so that every event of a reading is still a row of its
//! part (at most `rows` events a reading), and after a run boundary whose
//! run held notifications back, so the notifications carry the values a
//! GET returns at that moment.
//!
//! Flood control, decided here and nowhere else: at most
//! `notifications_per_run` resource events of a run become items for a
//! notification ([`EventItem::Resource`]); the rest are counted, and the run boundary (a new "Applying
//! configuration version" or "Applied catalog" line) reports how many
//! ([`EventItem::RunBoundary`]).
//!
//! Trouble (no file, garbage lines, over-long lines, rotation, truncation,
//! an unreadable file) is logged once per kind, when it first happens; the
//! follower keeps going and loses no complete line.

use super::events_log::{parse_line, LineError, LineKind, LogLine};
use super::observation::{EventItem, EventsObservation};
use super::tail::{Tail, TailLimits, TailRead, TailStatus};
use super::trust::{Trust, Untrusted};
use crate::config::EventsConfig;
use crate::metrics::{
    write_row, write_scalars, Layout, PuppetEventField, PuppetEventLevel, PuppetEventsLogStatus,
    RowKey, PUPPET_EVENT_SCALARS, PUPPET_EVENT_TABLE,
};
use crate::oid::Oid;
use crate::smi::{display_string, saturate_u32, Value};
use crate::snapshot::{Part, PartKey, Reading};
use std::collections::VecDeque;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

/// Re-read this often whatever inotify says.
pub const FALLBACK: Duration = Duration::from_secs(5);

/// One row of `puppetEventTable`: its values at their OIDs, in column
/// order (a column without a value has none), built once when the event
/// is read, since every reading serves every row again.
#[derive(Debug, Clone, PartialEq)]
struct EventRow {
    cells: Vec<(Oid, Value)>,
}

/// The values of one event, by column.
struct EventValues {
    index: u32,
    time: Option<u32>,
    level: PuppetEventLevel,
    resource_type: String,
    title: String,
    property: String,
    message: String,
    config_version: String,
}

impl EventValues {
    /// Its value in a column of `puppetEventTable`.
    fn value(&self, field: PuppetEventField) -> Option<Value> {
        Some(match field {
            PuppetEventField::Time => Value::Gauge32(self.time?),
            PuppetEventField::Level => Value::Integer(self.level.number()),
            PuppetEventField::ResourceType => display_string(&self.resource_type),
            PuppetEventField::Title => display_string(&self.title),
            PuppetEventField::Property => display_string(&self.property),
            PuppetEventField::Message => display_string(&self.message),
            PuppetEventField::ConfigVersion => display_string(&self.config_version),
            _ => return None,
        })
    }
}

impl EventRow {
    fn new(v: EventValues, layout: &Layout) -> EventRow {
        let mut cells = Vec::with_capacity(PUPPET_EVENT_TABLE.columns.len());
        // An index the table cannot hold (past 2147483647 events) writes
        // no cells: the row is not served.
        write_row(
            &PUPPET_EVENT_TABLE,
            RowKey::Row(v.index),
            layout,
            &mut cells,
            |f| v.value(f),
        );
        EventRow { cells }
    }
}

/// The state the log's lines build: the last rows, the counts, the run's
/// version and budget, and the log's status.
pub struct EventTable {
    config: EventsConfig,
    rows: VecDeque<EventRow>,
    next_index: u32,
    seen: u64,
    refused: u64,
    /// Resource events of the current run that would be notified.
    notifiable_in_run: u64,
    /// Held back in the current run (in the last one, once it ended).
    held_back: u64,
    run_version: String,
    status: PuppetEventsLogStatus,
    error: String,
    /// The first unusable line of the last read, for the log.
    garbage: Option<LineError>,
}

impl EventTable {
    pub fn new(config: EventsConfig) -> EventTable {
        EventTable {
            rows: VecDeque::with_capacity(config.rows.min(1024)),
            config,
            next_index: 1,
            seen: 0,
            refused: 0,
            notifiable_in_run: 0,
            held_back: 0,
            run_version: String::new(),
            status: PuppetEventsLogStatus::Missing,
            error: String::new(),
            garbage: None,
        }
    }

    /// The readings for one read of the log: at least one (the status may
    /// have changed), more when many events came at once.
    pub fn readings(
        &mut self,
        read: &TailRead,
        layout: &Layout,
    ) -> Vec<Reading<EventsObservation>> {
        self.refused += read.too_long as u64;
        (self.status, self.error) = match &read.status {
            TailStatus::Following => (PuppetEventsLogStatus::Following, String::new()),
            TailStatus::Missing => (
                PuppetEventsLogStatus::Missing,
                format!("no file at {}", self.config.path.display()),
            ),
            TailStatus::Refused(e) | TailStatus::Failed(e) => {
                (PuppetEventsLogStatus::Unreadable, e.clone())
            }
            // Refused as a FIFO is: unreadable(3), by the agent's choice.
            TailStatus::Untrusted(e) => (
                PuppetEventsLogStatus::Unreadable,
                format!(
                    "not trusted: {e}; only root (or events_log_owner) may write the log \
                     and the directories above it"
                ),
            ),
        };
        let mut out = Vec::new();
        let mut items = Vec::new();
        let mut in_chunk = 0usize;
        for line in &read.lines {
            match parse_line(line) {
                Ok(parsed) => {
                    let cut = self.apply(parsed, layout, &mut items, &mut in_chunk);
                    if cut || in_chunk >= self.config.rows {
                        out.push(self.reading(std::mem::take(&mut items), layout));
                        in_chunk = 0;
                    }
                }
                Err(e) => {
                    self.refused += 1;
                    self.garbage.get_or_insert(e);
                }
            }
        }
        if out.is_empty() || !items.is_empty() {
            out.push(self.reading(items, layout));
        }
        out
    }

    /// One parsed line; true when the reading must end here (a boundary
    /// that reports held-back notifications).
    fn apply(
        &mut self,
        line: LogLine,
        layout: &Layout,
        items: &mut Vec<EventItem>,
        in_chunk: &mut usize,
    ) -> bool {
        match line.kind {
            LineKind::ConfigurationVersion(version) => {
                let cut = self.boundary(items);
                self.run_version = version;
                self.held_back = 0;
                cut
            }
            LineKind::RunEnd { .. } => self.boundary(items),
            LineKind::Other { .. } => false,
            LineKind::Resource {
                resource_type,
                title,
                property,
                noop,
                ..
            } => {
                let index = self.next_index;
                self.next_index = match self.next_index.checked_add(1) {
                    Some(n) if n <= i32::MAX as u32 => n,
                    // After 2^31 - 1 events: start again, with an empty
                    // table so the rows stay in order.
                    _ => {
                        self.rows.clear();
                        1
                    }
                };
                self.seen += 1;
                let time = line
                    .time
                    .and_then(|t| u64::try_from(t.unix_seconds).ok())
                    .map(saturate_u32);
                // A change names its property ("Dependency … has
                // failures" is a notice about the resource, not a change).
                let notifiable = match line.level {
                    PuppetEventLevel::Notice if !noop && property.is_some() => Some(false),
                    PuppetEventLevel::Err
                    | PuppetEventLevel::Crit
                    | PuppetEventLevel::Alert
                    | PuppetEventLevel::Emerg => Some(true),
                    _ => None,
                };
                if let Some(failed) = notifiable {
                    self.notifiable_in_run += 1;
                    let within_budget =
                        self.notifiable_in_run <= self.config.notifications_per_run as u64;
                    if within_budget {
                        items.push(EventItem::Resource { index, failed });
                    } else {
                        self.held_back += 1;
                    }
                }
                if self.rows.len() >= self.config.rows {
                    self.rows.pop_front();
                }
                let values = EventValues {
                    index,
                    time,
                    level: line.level,
                    resource_type,
                    title,
                    property: property.unwrap_or_default(),
                    message: line.message,
                    config_version: self.run_version.clone(),
                };
                self.rows.push_back(EventRow::new(values, layout));
                *in_chunk += 1;
                false
            }
        }
    }

    /// A run boundary: the budget starts again.
    fn boundary(&mut self, items: &mut Vec<EventItem>) -> bool {
        let held_back = self
            .notifiable_in_run
            .saturating_sub(self.config.notifications_per_run as u64);
        self.notifiable_in_run = 0;
        if held_back > 0 {
            items.push(EventItem::RunBoundary { held_back });
            true
        } else {
            false
        }
    }

    fn reading(&self, items: Vec<EventItem>, layout: &Layout) -> Reading<EventsObservation> {
        Reading {
            parts: vec![(PartKey::PuppetEvents, self.part(layout))],
            observation: EventsObservation { items },
        }
    }

    /// The scalars (`.0`) and the rows, sorted by OID (column by column).
    pub fn part(&self, layout: &Layout) -> Part {
        let mut part = Part::with_capacity(PUPPET_EVENT_SCALARS.len() + 7 * self.rows.len());
        write_scalars(PUPPET_EVENT_SCALARS, layout, &mut part, |field| {
            Some(match field {
                PuppetEventField::LogStatus => Value::Integer(self.status.number()),
                PuppetEventField::LogError => display_string(&self.error),
                PuppetEventField::Seen => Value::Counter32(self.seen as u32),
                PuppetEventField::Refused => Value::Counter32(self.refused as u32),
                PuppetEventField::HeldBack => Value::Gauge32(saturate_u32(self.held_back)),
                PuppetEventField::RunVersion => display_string(&self.run_version),
                _ => return None,
            })
        });
        // The part is column by column (the scalars, `.1`, sort before the
        // table, `.4`). Rows come in the order of their index, so taking
        // each column from every row in turn (a cursor per row) gives that
        // order without a sort: a sort of every cell on each event cost
        // some 50 µs of CPU per event at 200 rows (benches/puppet_events.rs).
        let column = |oid: &Oid| oid.as_slice().get(oid.len().wrapping_sub(2)).copied();
        let mut cursors = vec![0usize; self.rows.len()];
        let scalars = part.len();
        // The catalogue's column order is the order each row wrote its
        // cells in, so every cursor finds its next cell on the first pass
        // of that column; were that order not the OIDs', the check below
        // sorts.
        for number in PUPPET_EVENT_TABLE
            .columns
            .iter()
            .filter_map(|def| def.arcs.last().copied())
        {
            for (row, at) in self.rows.iter().zip(cursors.iter_mut()) {
                if let Some(cell) = row
                    .cells
                    .get(*at)
                    .filter(|(oid, _)| column(oid) == Some(number))
                {
                    part.push(cell.clone());
                    *at += 1;
                }
            }
        }
        // Indexes wrap after 2147483647: only then is the order not theirs.
        // (Nor were the catalogue's columns out of order.)
        if !part[scalars..].is_sorted_by(|a, b| a.0 < b.0) {
            part[scalars..].sort_unstable_by(|a, b| a.0.cmp(&b.0));
        }
        part
    }
}

/// Start following `config.path` on a thread of its own; the readings are
/// sent on `readings` (as the stream's observation, `O`). The thread stops
/// when `shutdown` fires (it looks at least every [`FALLBACK`]) or the
/// stream is gone.
pub fn spawn_events_follower<O>(
    config: EventsConfig,
    layout: Layout,
    readings: mpsc::Sender<Reading<O>>,
    shutdown: CancellationToken,
) -> std::io::Result<()>
where
    O: From<EventsObservation> + Send + 'static,
{
    std::thread::Builder::new()
        .name("puppet-events".into())
        .spawn(move || follow(config, layout, readings, shutdown))?;
    Ok(())
}

fn follow<O: From<EventsObservation>>(
    config: EventsConfig,
    layout: Layout,
    tx: mpsc::Sender<Reading<O>>,
    shutdown: CancellationToken,
) {
    let path = config.path.clone();
    let mut tail = Tail::trusting(
        &path,
        TailLimits::default(),
        Trust::with_owner(config.owner.clone()),
    );
    let mut table = EventTable::new(config);
    let mut troubles = Troubles::default();
    let mut watch = LogWatch::new(&path);
    let mut last_status: Option<TailStatus> = None;
    loop {
        if shutdown.is_cancelled() {
            return;
        }
        let read = tail.read_new();
        // Nothing new (a fallback wake-up, another file of the directory):
        // no reading, the snapshot stays as it is.
        let quiet = read.lines.is_empty()
            && read.too_long == 0
            && read.incomplete == 0
            && !read.truncated
            && !read.rotated
            && last_status.as_ref() == Some(&read.status);
        last_status = Some(read.status.clone());
        if quiet {
            watch.wait();
            continue;
        }
        let readings = table.readings(&read, &layout);
        for line in troubles.news(&path, &read, table.garbage.take()) {
            match line {
                (true, l) => warn!("{l}"),
                (false, l) => info!("{l}"),
            }
        }
        if read.rotated || read.status != TailStatus::Following {
            // The directory may have come or gone.
            watch.setup();
        }
        for reading in readings {
            if tx.blocking_send(reading.into_stream()).is_err() {
                return;
            }
        }
        if read.more {
            continue;
        }
        watch.wait();
    }
}

/// Logs each kind of trouble once, and the status when it changes.
#[derive(Default)]
struct Troubles {
    status: Option<TailStatus>,
    garbage: bool,
    too_long: bool,
    rotated: bool,
    truncated: bool,
    incomplete: bool,
}

impl Troubles {
    /// The lines to log for this read: `(warning, text)`.
    fn news(
        &mut self,
        path: &Path,
        read: &TailRead,
        garbage: Option<LineError>,
    ) -> Vec<(bool, String)> {
        let p = path.display();
        let mut out = Vec::new();
        if self.status.as_ref() != Some(&read.status) {
            let first = self.status.is_none();
            match &read.status {
                TailStatus::Following if first => {
                    debug!("puppet: following the events log {p}")
                }
                TailStatus::Following => out.push((false, format!("puppet: following the events log {p} again"))),
                TailStatus::Missing => out.push((true, format!(
                    "puppet: no events log at {p}: resource events come only once Puppet writes it; \
                     add --logdest syslog,{p} to Puppet's options (PUPPET_EXTRA_OPTS in /etc/default/puppet), \
                     or set events_log = false in [puppet]"
                ))),
                TailStatus::Refused(e) | TailStatus::Failed(e) => out.push((true, format!(
                    "puppet: cannot follow the events log: {e}; the agent's user must be able to read {p} \
                     (see README.Debian)"
                ))),
                TailStatus::Untrusted(e) => {
                    let fix = match e {
                        Untrusted::Owner { .. } => "keep the log where only root may write, such as \
                            /var/log/puppet-events (see README.Debian), or, to trust that owner, name \
                            it in events_log_owner of [puppet]",
                        _ => "take that write permission away",
                    };
                    out.push((true, format!(
                        "puppet: not following the events log {p}: {e}; whoever may write the log or a \
                         directory above it could forge resource events, and the notifications they \
                         cause: {fix}. It is followed again, from its end, once fixed"
                    )))
                }
            }
            self.status = Some(read.status.clone());
        }
        if let Some(e) = garbage {
            if !std::mem::replace(&mut self.garbage, true) {
                out.push((true, format!(
                    "puppet: a line of the events log {p} is not one of Puppet's ({e}); such lines are skipped and counted in puppetEventsRefused (said once)"
                )));
            }
        }
        let once = [
            (read.too_long > 0, &mut self.too_long, format!(
                "puppet: a line of the events log {p} is over {} bytes; such lines are skipped and counted in puppetEventsRefused (said once)",
                TailLimits::default().max_line
            )),
            (read.rotated, &mut self.rotated, format!(
                "puppet: the events log {p} was rotated or replaced; reading the new file from its start (said once)"
            )),
            (read.truncated, &mut self.truncated, format!(
                "puppet: the events log {p} was truncated; reading it from its start (said once)"
            )),
            (read.incomplete > 0, &mut self.incomplete, format!(
                "puppet: an unfinished last line of the events log {p} was dropped when the file was truncated or replaced (said once)"
            )),
        ];
        for (happened, said, line) in once {
            if happened && !std::mem::replace(said, true) {
                out.push((false, line));
            }
        }
        out
    }
}

/// inotify on the log's directory (or, while it is missing, its nearest
/// existing ancestor), waited on with `poll` and a timeout.
struct LogWatch {
    inotify: Option<inotify::Inotify>,
    path: PathBuf,
    name: Option<std::ffi::OsString>,
    watched: Option<(inotify::WatchDescriptor, bool)>,
    buffer: Vec<u8>,
}

impl LogWatch {
    fn new(path: &Path) -> LogWatch {
        let inotify = match inotify::Inotify::init() {
            Ok(i) => Some(i),
            Err(e) => {
                warn!(
                    "puppet: inotify is not available ({e}); reading the events log every {} s",
                    FALLBACK.as_secs()
                );
                None
            }
        };
        let mut w = LogWatch {
            inotify,
            path: path.to_path_buf(),
            name: path.file_name().map(|n| n.to_os_string()),
            watched: None,
            buffer: vec![0u8; 4096],
        };
        w.setup();
        w
    }

    /// Watch the directory, or its nearest existing ancestor.
    fn setup(&mut self) {
        use inotify::WatchMask as M;
        let Some(inotify) = &mut self.inotify else {
            return;
        };
        let dir = match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let (target, direct) = if dir.is_dir() {
            (dir, true)
        } else {
            match dir.ancestors().skip(1).find(|a| a.is_dir()) {
                Some(a) => (a.to_path_buf(), false),
                None => return,
            }
        };
        if let Some((_, was_direct)) = self.watched {
            if was_direct == direct && direct {
                return;
            }
        }
        if let Some((wd, _)) = self.watched.take() {
            let _ = inotify.watches().remove(wd);
        }
        let mask = if direct {
            M::MODIFY
                | M::CLOSE_WRITE
                | M::CREATE
                | M::MOVED_TO
                | M::MOVED_FROM
                | M::DELETE
                | M::ATTRIB
                | M::DELETE_SELF
                | M::MOVE_SELF
                | M::ONLYDIR
        } else {
            M::CREATE | M::MOVED_TO | M::DELETE_SELF | M::MOVE_SELF | M::ONLYDIR
        };
        match inotify.watches().add(&target, mask) {
            Ok(wd) => self.watched = Some((wd, direct)),
            Err(e) => debug!("puppet: cannot watch {}: {e}", target.display()),
        }
    }

    /// Until something happened to the log (or its directory), or the
    /// fallback time passed.
    fn wait(&mut self) {
        let timeout = if self.watched.is_some() {
            FALLBACK
        } else {
            Duration::from_secs(1)
        };
        let Some(fd) = self.inotify.as_ref().map(|i| i.as_raw_fd()) else {
            std::thread::sleep(timeout);
            return;
        };
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return;
            }
            let mut fds = [libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            }];
            let ms = left.as_millis().min(i32::MAX as u128) as i32;
            // SAFETY: one valid pollfd for the duration of the call.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), 1, ms.max(1)) };
            if n <= 0 {
                // Timeout, or EINTR: read anyway.
                return;
            }
            let Some(inotify) = self.inotify.as_mut() else {
                return;
            };
            let events: Vec<(inotify::EventMask, Option<std::ffi::OsString>)> =
                match inotify.read_events(&mut self.buffer) {
                    Ok(events) => events
                        .map(|e| (e.mask, e.name.map(|n| n.to_os_string())))
                        .collect(),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Vec::new(),
                    Err(e) => {
                        warn!(
                            "puppet: inotify read failed ({e}); reading the events log every {} s",
                            FALLBACK.as_secs()
                        );
                        self.inotify = None;
                        self.watched = None;
                        return;
                    }
                };
            let direct = self.watched.as_ref().is_some_and(|(_, d)| *d);
            let mut relevant = false;
            let mut rewatch = false;
            for (mask, name) in events {
                if !direct
                    || mask.intersects(
                        inotify::EventMask::IGNORED
                            | inotify::EventMask::DELETE_SELF
                            | inotify::EventMask::MOVE_SELF
                            | inotify::EventMask::Q_OVERFLOW,
                    )
                {
                    rewatch = true;
                    relevant = true;
                } else if name == self.name {
                    relevant = true;
                }
            }
            if rewatch {
                if let (Some(inotify), Some((wd, _))) = (self.inotify.as_mut(), self.watched.take())
                {
                    let _ = inotify.watches().remove(wd);
                }
                self.setup();
            }
            if relevant {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture_lines(name: &str) -> Vec<Vec<u8>> {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/puppet/logdest")
            .join(name);
        std::fs::read(&path)
            .unwrap()
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    }

    fn read_of(lines: Vec<Vec<u8>>) -> TailRead {
        TailRead {
            lines,
            ..TailRead::default()
        }
    }

    fn value(part: &Part, suffix: &str) -> Option<Value> {
        crate::snapshot::value_at(part, &format!(".1.3.6.1.4.1.20267.401.{suffix}")).cloned()
    }

    #[test]
    fn a_real_run_becomes_rows_items_and_a_version() {
        let layout = Layout::default_layout();
        let mut table = EventTable::new(EventsConfig::default());
        let readings = table.readings(&read_of(fixture_lines("log.jsonl")), &layout);
        assert_eq!(readings.len(), 1);
        let items = &readings[0].observation.items;
        // The file's change (notice) and the failing exec (err); the
        // skip (warning) is a row only.
        let resources: Vec<(u32, bool)> = items
            .iter()
            .filter_map(|i| match i {
                EventItem::Resource { index, failed } => Some((*index, *failed)),
                _ => None,
            })
            .collect();
        assert!(resources.contains(&(1, false)), "{items:?}");
        assert!(resources.iter().any(|(_, failed)| *failed), "{items:?}");
        let part = &readings[0].parts[0].1;
        assert_eq!(value(part, "4.1.4.1"), Some(Value::text("File")));
        assert_eq!(
            value(part, "4.1.5.1"),
            Some(Value::text("/srv/puppetwork/target/logtest.txt"))
        );
        assert_eq!(value(part, "4.1.6.1"), Some(Value::text("ensure")));
        assert_eq!(value(part, "4.1.3.1"), Some(Value::Integer(3))); // notice(3)
                                                                     // At Puppet's default level (notice) no line gives the version.
        assert_eq!(value(part, "1.42.0"), Some(Value::text("")));
        assert_eq!(value(part, "1.37.0"), Some(Value::Integer(1))); // following
                                                                    // File, slow exec, failing exec, the dependency notice and the
                                                                    // skip of after-slow, the independent notify.
        assert_eq!(value(part, "1.39.0"), Some(Value::Counter32(6)));
        assert_eq!(resources.len(), 4, "{items:?}");
        // The run's end with nothing held back: no boundary item.
        assert!(items
            .iter()
            .all(|i| matches!(i, EventItem::Resource { .. })));
    }

    /// The budget: a run of many changes gives `notifications_per_run`
    /// items within budget, and its end says how many were held back; no
    /// reading has more events than the table has rows.
    #[test]
    fn flood_control_and_readings_cut_to_the_table() {
        let real = fixture_lines("log.jsonl");
        let template = real
            .iter()
            .find(|l| String::from_utf8_lossy(l).contains("File["))
            .unwrap();
        // Written at level info (`--verbose`), in the shape of the others.
        let start = br#"{"level":"info","message":"Applying configuration version '1795336303'","source":"Puppet","tags":["info"],"time":"2026-11-22T08:31:44.041125550+00:00"}"#.to_vec();
        let end = real
            .iter()
            .find(|l| String::from_utf8_lossy(l).contains("Applied catalog in"))
            .unwrap();
        let mut lines = vec![start.clone()];
        assert_eq!(table_version(&start), "1795336303");
        for n in 0..1000 {
            let text =
                String::from_utf8_lossy(template).replace("logtest.txt", &format!("flood-{n}.txt"));
            lines.push(text.into_bytes());
        }
        lines.push(b"not json at all".to_vec());
        lines.push(end.clone());
        let config = EventsConfig {
            notifications_per_run: 7,
            rows: 30,
            ..EventsConfig::default()
        };
        let layout = Layout::default_layout();
        let mut table = EventTable::new(config);
        let readings = table.readings(&read_of(lines), &layout);
        let mut within = 0;
        let mut held = Vec::new();
        for r in &readings {
            let part = &r.parts[0].1;
            for item in &r.observation.items {
                match item {
                    EventItem::Resource { index, .. } => {
                        within += 1;
                        assert!(
                            value(part, &format!("4.1.5.{index}")).is_some(),
                            "row {index} aged out before its reading"
                        );
                    }
                    EventItem::RunBoundary { held_back } => {
                        held.push(*held_back);
                        assert_eq!(
                            value(part, "1.41.0"),
                            Some(Value::Gauge32(*held_back as u32))
                        );
                    }
                }
            }
        }
        assert_eq!(within, 7);
        assert_eq!(held, [993]);
        let last = &readings.last().unwrap().parts[0].1;
        let rows = last
            .iter()
            .filter(|(o, _)| o.to_string().starts_with(".1.3.6.1.4.1.20267.401.4.1.5."))
            .count();
        assert_eq!(rows, 30);
        assert_eq!(
            value(last, "4.1.5.1000"),
            Some(Value::text("/srv/puppetwork/target/flood-999.txt"))
        );
        assert_eq!(value(last, "1.40.0"), Some(Value::Counter32(1))); // the garbage line
        assert_eq!(value(last, "1.39.0"), Some(Value::Counter32(1000)));
        // The next run starts with a fresh budget.
        assert_eq!(value(last, "4.1.8.1000"), Some(Value::text("1795336303")));
        let again = table.readings(&read_of(vec![start.clone(), real[19].clone()]), &layout);
        assert_eq!(
            value(&again[0].parts[0].1, "1.41.0"),
            Some(Value::Gauge32(0))
        );
    }

    fn table_version(line: &[u8]) -> String {
        match parse_line(line).unwrap().kind {
            LineKind::ConfigurationVersion(v) => v,
            k => panic!("{k:?}"),
        }
    }

    #[test]
    fn troubles_are_said_once() {
        let mut t = Troubles::default();
        let path = Path::new("/var/log/puppet-events/events.jsonl");
        let missing = TailRead {
            status: TailStatus::Missing,
            ..TailRead::default()
        };
        let said = t.news(path, &missing, None);
        assert_eq!(said.len(), 1);
        assert!(
            said[0]
                .1
                .contains("--logdest syslog,/var/log/puppet-events/events.jsonl"),
            "{said:?}"
        );
        assert!(t.news(path, &missing, None).is_empty());
        let bad = TailRead {
            too_long: 2,
            rotated: true,
            ..TailRead::default()
        };
        let garbage = || parse_line(b"garbage").err();
        let said = t.news(path, &bad, garbage());
        assert_eq!(said.len(), 4, "{said:?}"); // following again, garbage, too long, rotated
        assert!(t.news(path, &bad, garbage()).is_empty());
    }
}
