//! The watcher: keeps a `tokio::sync::watch` channel of [`PuppetState`]
//! current, within a fraction of a second of a Puppet run's end.
//!
//! Puppet replaces its files by `rename()` of a temporary file in the same
//! directory (summary first, then the report, which `puppet apply` renames
//! into place twice), so the watcher watches the **directories** with
//! inotify, not the files, and reacts to events that name one of the four
//! files (`IN_MOVED_TO`, `IN_CLOSE_WRITE`, `IN_CREATE`, `IN_DELETE`,
//! `IN_MOVED_FROM`, `IN_ATTRIB` for a chmod). Then:
//!
//! 1. it waits for the events to settle ([`WatcherOptions::debounce`],
//!    200 ms, but never more than [`WatcherOptions::max_delay`] after the
//!    first event) and re-reads on tokio's blocking pool: only files whose
//!    inode, size or mtime changed are parsed again;
//! 2. if the summary is newer than the report (the report of its run is
//!    not there yet), it publishes the new summary at once with
//!    [`PuppetState::report_pending`] set, and re-checks until the report
//!    arrives or [`WatcherOptions::report_wait`] (3 s) has passed;
//! 3. it counts each new run in a [`RunHistory`] (once its report is in,
//!    or was waited for) and sets [`PuppetState::runs`];
//! 4. it publishes only states that differ from the last one.
//!
//! A directory that does not exist yet is covered by a watch on its
//! nearest existing ancestor, and the watches are set up again when it
//! appears. Whatever inotify misses (no inotify, watch limits reached) is
//! caught by a slow re-read ([`WatcherOptions::fallback`], 60 s).
//!
//! Read failures never erase the last good summary or report (see
//! [`super::state`]), and each condition is logged once when it starts
//! and once when it clears, not on every read. A file this process may
//! not read (Puppet writes both files mode 0640 root) is logged as one
//! warning that says what to set in `puppet.conf`.
//!
//! # For the consumer
//!
//! The channel's first value is an empty state (`FileStatus::NotRead`
//! everywhere); the first read follows immediately. A new run is a change
//! of [`PuppetState::last_run`]; compare successive states to find
//! transitions, and wait for `report_pending` to clear before using the
//! report of a new run (or act on the summary alone if it stays unpaired).
//! Runs from before the subagent started show up in the first read: take
//! that as the baseline rather than as a new run. The task stops when the
//! cancellation token fires or every receiver is dropped; the sender is
//! then dropped, so `changed()` returns an error.

use super::certificates;
use super::observation::PuppetSeen;
use super::runs::RunHistory;
use super::state::{permission_advice, FileStatus, Pairing, PuppetReader, PuppetState};
use crate::config::{CertificateSettings, PuppetPaths, DEFAULT_CONVERGE_RUNS};
use crate::metrics::{Layout, PuppetCertificateKind};
use crate::snapshot::Reading;
use futures_util::StreamExt;
use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

/// UNIX seconds, signed as Puppet's run times are.
fn unix_now() -> i64 {
    i64::try_from(crate::smi::unix_now()).unwrap_or(i64::MAX)
}

/// The watcher's timings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatcherOptions {
    /// Quiet time after the last event before re-reading.
    pub debounce: Duration,
    /// Longest a stream of events may postpone the re-read.
    pub max_delay: Duration,
    /// How long to wait for the report of a summary newer than the report.
    pub report_wait: Duration,
    /// How often to re-check while waiting for the report (inotify
    /// normally answers first).
    pub report_poll: Duration,
    /// Re-read this often whatever inotify says. Also how late, at most,
    /// [`super::trend::RunTrend::last_hour`] drops a run older than an hour.
    pub fallback: Duration,
    /// K of [`super::runs::RunHistory`]: changing runs in a row that are
    /// not converging.
    pub converge_runs: usize,
}

impl Default for WatcherOptions {
    fn default() -> Self {
        WatcherOptions {
            debounce: Duration::from_millis(200),
            max_delay: Duration::from_secs(1),
            report_wait: Duration::from_secs(3),
            report_poll: Duration::from_millis(250),
            fallback: Duration::from_secs(60),
            converge_runs: DEFAULT_CONVERGE_RUNS,
        }
    }
}

/// [`spawn_watcher_with`] with the default timings.
pub fn spawn_watcher(
    paths: PuppetPaths,
    shutdown: CancellationToken,
) -> watch::Receiver<Arc<PuppetState>> {
    spawn_watcher_with(paths, WatcherOptions::default(), shutdown)
}

/// Start the watcher task on the current tokio runtime (which must have
/// the I/O and time drivers enabled) and return the channel it keeps
/// current. See the module documentation.
pub fn spawn_watcher_with(
    paths: PuppetPaths,
    options: WatcherOptions,
    shutdown: CancellationToken,
) -> watch::Receiver<Arc<PuppetState>> {
    let (tx, rx) = watch::channel(Arc::new(PuppetState::default()));
    tokio::spawn(run(paths, options, tx, shutdown));
    rx
}

/// How often the time passing is sent: a quarter of the shorter of the
/// staleness and run-storm thresholds, 1 to 30 s.
pub fn tick_every(stale_after: Duration, min_run_interval: Duration) -> Duration {
    (stale_after.min(min_run_interval) / 4).clamp(Duration::from_secs(1), Duration::from_secs(30))
}

/// Starts the watcher and sends its readings on `readings` (as the
/// stream's observation, `O`): each new state as Puppet's part and its
/// observation, and a [`PuppetSeen::Tick`] every `tick` meanwhile.
pub fn spawn_readings<O>(
    paths: PuppetPaths,
    options: WatcherOptions,
    layout: Layout,
    tick: Duration,
    readings: mpsc::Sender<Reading<O>>,
    shutdown: CancellationToken,
) where
    O: From<PuppetSeen> + Send + 'static,
{
    let states = spawn_watcher_with(paths, options, shutdown.clone());
    tokio::spawn(send_readings(states, layout, tick, readings, shutdown));
}

async fn send_readings<O: From<PuppetSeen>>(
    mut states: watch::Receiver<Arc<PuppetState>>,
    layout: Layout,
    tick: Duration,
    readings: mpsc::Sender<Reading<O>>,
    shutdown: CancellationToken,
) {
    let mut tick = tokio::time::interval(tick);
    // The channel's initial "nothing read yet" value counts as seen, so
    // the first change is the first real read: the judge's baseline.
    loop {
        let reading = tokio::select! {
            changed = states.changed() => {
                if changed.is_err() {
                    return;
                }
                let state = states.borrow_and_update().clone();
                let reading = super::objects::reading(&state, &layout);
                Reading {
                    parts: reading.parts,
                    observation: PuppetSeen::State { seen: reading.observation, now: unix_now() },
                }
            }
            _ = tick.tick() => {
                // The certificates' seconds left and states change with
                // time alone: their rows are written again.
                let state = states.borrow().clone();
                let parts = if state.certificates.has_dates() {
                    super::objects::reading(&state, &layout).parts
                } else {
                    Vec::new()
                };
                Reading { parts, observation: PuppetSeen::Tick { now: unix_now() } }
            }
            _ = shutdown.cancelled() => return,
        };
        if readings.send(reading.into_stream()).await.is_err() {
            return;
        }
    }
}

async fn run(
    paths: PuppetPaths,
    options: WatcherOptions,
    tx: watch::Sender<Arc<PuppetState>>,
    shutdown: CancellationToken,
) {
    let mut dirs = DirWatch::new(&paths);
    dirs.setup().await;
    let mut conditions = Conditions::default();
    let mut history = RunHistory::new(options.converge_runs);
    let mut reader = Some(PuppetReader::new(paths.clone()));
    // Read at once.
    let mut read_at: Option<Instant> = Some(Instant::now());
    let mut first_event: Option<Instant> = None;
    // While waiting for a summary's report: its last_run and the deadline.
    let mut waiting: Option<(i64, Instant)> = None;
    let mut fallback =
        tokio::time::interval_at(Instant::now() + options.fallback, options.fallback);
    fallback.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);

    loop {
        let sleep_until = read_at.unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tx.closed() => return,
            event = dirs.next() => {
                let now = Instant::now();
                match event {
                    DirEvent::Relevant => {}
                    DirEvent::Rewatch => dirs.setup().await,
                    DirEvent::Irrelevant => continue,
                }
                // Trailing-edge debounce, capped at max_delay after the
                // first event of the burst.
                let first = *first_event.get_or_insert(now);
                read_at = Some((now + options.debounce).min(first + options.max_delay));
            }
            _ = tokio::time::sleep_until(sleep_until), if read_at.is_some() => {
                read_at = None;
                first_event = None;
                let mut state = match read(&mut reader, &paths).await {
                    Some(s) => s,
                    None => continue,
                };
                // The report of a newer summary may not be there yet.
                let summary_newer = match state.pairing() {
                    Pairing::NotPaired { summary_newer, .. } => summary_newer,
                    Pairing::Unknown => state.summary.is_some() && state.report.is_none(),
                    Pairing::Paired => false,
                };
                let last_run = state.last_run().unwrap_or(i64::MIN);
                if summary_newer {
                    let now = Instant::now();
                    let deadline = match waiting {
                        Some((lr, d)) if lr == last_run => d,
                        _ => now + options.report_wait,
                    };
                    waiting = Some((last_run, deadline));
                    if now < deadline {
                        state.report_pending = true;
                        read_at = Some((now + options.report_poll).min(deadline));
                    }
                } else {
                    waiting = None;
                }
                // A run counts once its report is in, or was waited for.
                if !state.report_pending {
                    history.observe(&state);
                }
                state.runs = history.trend(unix_now());
                conditions.observe(&paths, &state);
                tx.send_if_modified(|current| {
                    if **current == state {
                        false
                    } else {
                        *current = Arc::new(state);
                        true
                    }
                });
            }
            _ = fallback.tick() => {
                if !dirs.complete() {
                    dirs.setup().await;
                }
                read_at = Some(Instant::now());
            }
        }
    }
}

/// Re-read on the blocking pool. The reader goes there and comes back; if
/// the blocking task fails (it should not: nothing in it panics), a fresh
/// reader replaces it and the last good values are lost.
async fn read(slot: &mut Option<PuppetReader>, paths: &PuppetPaths) -> Option<PuppetState> {
    let mut reader = slot
        .take()
        .unwrap_or_else(|| PuppetReader::new(paths.clone()));
    match tokio::task::spawn_blocking(move || {
        let state = reader.refresh();
        (reader, state)
    })
    .await
    {
        Ok((reader, state)) => {
            *slot = Some(reader);
            Some(state)
        }
        Err(e) => {
            warn!("puppet: reading the run files failed: {e}");
            None
        }
    }
}

/// Logs each file's condition when it changes.
#[derive(Default)]
struct Conditions {
    last: BTreeMap<&'static str, String>,
}

impl Conditions {
    fn observe(&mut self, paths: &PuppetPaths, state: &PuppetState) {
        for line in self.changes(paths, state) {
            match line {
                (Level::Warn, l) => warn!("{l}"),
                (Level::Info, l) => info!("{l}"),
            }
        }
    }

    /// The lines to log for this state: one per file whose condition
    /// changed since the last call.
    fn changes(&mut self, paths: &PuppetPaths, state: &PuppetState) -> Vec<(Level, String)> {
        let mut out = Vec::new();
        for (what, path, status) in [
            ("summary", &paths.summary, &state.summary_status),
            ("report", &paths.report, &state.report_status),
        ] {
            let key = match status {
                FileStatus::NotRead => continue,
                FileStatus::Ok => "ok".to_owned(),
                FileStatus::Missing => "missing".to_owned(),
                FileStatus::Unreadable {
                    permission: true, ..
                } => "permission".to_owned(),
                FileStatus::Unreadable { error, .. } => format!("unreadable {error}"),
                FileStatus::Invalid(e) => format!("invalid {e}"),
            };
            let previous = self.last.insert(what, key.clone());
            if previous.as_deref() == Some(key.as_str()) {
                continue;
            }
            let p = path.display();
            let line = match status {
                FileStatus::NotRead => continue,
                FileStatus::Ok if previous.is_none() => continue,
                FileStatus::Ok => (
                    Level::Info,
                    format!("puppet: the {what} {p} is readable again"),
                ),
                FileStatus::Missing => (
                    Level::Info,
                    format!("puppet: no {what} at {p} (has Puppet run yet? is the path right?)"),
                ),
                FileStatus::Unreadable {
                    error,
                    permission: true,
                } => (
                    Level::Warn,
                    format!(
                        "puppet: cannot read the {what}: {error}; {}",
                        permission_advice(paths, path)
                    ),
                ),
                FileStatus::Unreadable { error, .. } => (
                    Level::Warn,
                    format!("puppet: cannot read the {what}: {error}"),
                ),
                FileStatus::Invalid(e) => (
                    Level::Warn,
                    format!("puppet: the {what} {p} is not usable, keeping the last good one: {e}"),
                ),
            };
            out.push(line);
        }
        // The certificates: each file's state logged when it changes,
        // never on every read.
        for file in &state.certificates.files {
            let what = match file.kind {
                PuppetCertificateKind::Agent => "agent certificate",
                PuppetCertificateKind::Ca => "CA certificate",
                PuppetCertificateKind::Crl => "CRL",
            };
            let key = format!("{} {}", file.status.kind(), file.path.display());
            let previous = self.last.insert(what, key.clone());
            if previous.as_deref() == Some(key.as_str()) {
                continue;
            }
            let p = crate::text::printable(&file.path.display().to_string());
            let error = crate::text::printable(&certificates::status_error(&file.status));
            match &file.status {
                FileStatus::NotRead => {}
                FileStatus::Ok => out.push((
                    Level::Info,
                    format!(
                        "puppet: the {what} {p} ends at {:?} (UNIX time)",
                        file.not_after
                    ),
                )),
                FileStatus::Missing => out.push((
                    Level::Info,
                    format!("puppet: no {what} at {p} (set ssldir or certname in [puppet]?)"),
                )),
                _ => out.push((Level::Warn, format!("puppet: the {what} {p}: {error}"))),
            }
        }
        // The facts files refused or unreadable: said when what is said
        // changes, never on every read.
        let key = state.facts.errors.join("\n");
        let previous = self.last.insert("facts", key.clone());
        if previous.as_deref() != Some(key.as_str()) {
            for error in &state.facts.errors {
                out.push((
                    Level::Warn,
                    format!("puppet: facts: {}", crate::text::printable(error)),
                ));
            }
        }
        out
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Warn,
    Info,
}

enum DirEvent {
    /// One of the files changed.
    Relevant,
    /// A watched directory went away or a missing one may have appeared.
    Rewatch,
    Irrelevant,
}

/// What a watch descriptor is for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A directory holding one of the files.
    Target,
    /// The nearest existing ancestor of a missing target directory.
    Ancestor,
}

/// The inotify watches on the files' directories.
struct DirWatch {
    stream: Option<inotify::EventStream<Vec<u8>>>,
    targets: Vec<PathBuf>,
    names: HashSet<OsString>,
    /// The certificates' names are matched by their own rule.
    certificates: CertificateSettings,
    watched: HashMap<WatchDescriptor, Role>,
    complete: bool,
    /// The last setup failure logged, to log each once.
    last_error: Option<String>,
}

const TARGET_MASK: WatchMask = WatchMask::MOVED_TO
    .union(WatchMask::MOVED_FROM)
    .union(WatchMask::CLOSE_WRITE)
    .union(WatchMask::CREATE)
    .union(WatchMask::DELETE)
    .union(WatchMask::ATTRIB)
    .union(WatchMask::DELETE_SELF)
    .union(WatchMask::MOVE_SELF)
    .union(WatchMask::ONLYDIR);

const ANCESTOR_MASK: WatchMask = WatchMask::CREATE
    .union(WatchMask::MOVED_TO)
    .union(WatchMask::DELETE_SELF)
    .union(WatchMask::MOVE_SELF)
    .union(WatchMask::ONLYDIR);

impl DirWatch {
    fn new(paths: &PuppetPaths) -> DirWatch {
        let files = [
            &paths.summary,
            &paths.report,
            &paths.disabled_lock,
            &paths.run_lock,
        ];
        let mut targets: Vec<PathBuf> = certificates::directories(&paths.certificates);
        let mut names = HashSet::new();
        for f in files {
            let dir = match f.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            };
            if !targets.contains(&dir) {
                targets.push(dir);
            }
            if let Some(n) = f.file_name() {
                names.insert(n.to_os_string());
            }
        }
        let mut w = DirWatch {
            stream: None,
            targets,
            names,
            certificates: paths.certificates.clone(),
            watched: HashMap::new(),
            complete: false,
            last_error: None,
        };
        match Inotify::init().and_then(|i| i.into_event_stream(vec![0u8; 4096])) {
            Ok(s) => w.stream = Some(s),
            Err(e) => warn!("puppet: inotify is not available ({e}); re-reading the run files on the fallback timer only"),
        }
        w
    }

    fn complete(&self) -> bool {
        self.complete
    }

    /// (Re)create the watches: each target directory, or for a missing one
    /// its nearest existing ancestor. The `stat`s and `inotify_add_watch`
    /// calls run on the blocking pool.
    async fn setup(&mut self) {
        let Some(stream) = &self.stream else { return };
        let watches = stream.watches();
        let old: Vec<WatchDescriptor> = self.watched.drain().map(|(wd, _)| wd).collect();
        let targets = self.targets.clone();
        let done = tokio::task::spawn_blocking(move || add_watches(watches, old, &targets)).await;
        let (watched, complete, errors) = match done {
            Ok(r) => r,
            Err(e) => (
                HashMap::new(),
                false,
                vec![format!("setting up the watches: {e}")],
            ),
        };
        self.watched = watched;
        self.complete = complete;
        let error = (!errors.is_empty()).then(|| errors.join("; "));
        if error != self.last_error {
            if let Some(e) = &error {
                warn!("puppet: cannot watch {e}; re-reading the run files on the fallback timer");
            }
            self.last_error = error;
        }
        debug!(
            "puppet: watching {} directories (complete: {})",
            self.watched.len(),
            self.complete
        );
    }

    /// The next event that matters; pending forever without inotify.
    async fn next(&mut self) -> DirEvent {
        let Some(stream) = &mut self.stream else {
            return std::future::pending().await;
        };
        match stream.next().await {
            Some(Ok(event)) => {
                if event.mask.contains(EventMask::Q_OVERFLOW) {
                    return DirEvent::Relevant;
                }
                // Events of watches removed by `setup` (IN_IGNORED follows
                // every removal) are not news.
                let Some(role) = self.watched.get(&event.wd) else {
                    return DirEvent::Irrelevant;
                };
                if event
                    .mask
                    .intersects(EventMask::IGNORED | EventMask::DELETE_SELF | EventMask::MOVE_SELF)
                {
                    return DirEvent::Rewatch;
                }
                match (role, &event.name) {
                    (Role::Ancestor, _) => DirEvent::Rewatch,
                    (Role::Target, Some(n))
                        if self.names.contains(n)
                            || certificates::is_watched_name(&self.certificates, n) =>
                    {
                        DirEvent::Relevant
                    }
                    // A directory on the way to another target was created
                    // in a target (a publicdir inside the statedir...).
                    (Role::Target, Some(_))
                        if !self.complete && event.mask.contains(EventMask::ISDIR) =>
                    {
                        DirEvent::Rewatch
                    }
                    _ => DirEvent::Irrelevant,
                }
            }
            Some(Err(e)) => {
                warn!("puppet: inotify read failed ({e}); re-reading on the fallback timer only");
                self.stream = None;
                self.complete = false;
                DirEvent::Relevant
            }
            None => {
                self.stream = None;
                self.complete = false;
                DirEvent::Relevant
            }
        }
    }
}

/// Remove the `old` watches and add one per target directory (or for a
/// missing one, its nearest existing ancestor). Returns the new watches,
/// whether every target is watched directly, and the errors.
fn add_watches(
    mut watches: inotify::Watches,
    old: Vec<WatchDescriptor>,
    targets: &[PathBuf],
) -> (HashMap<WatchDescriptor, Role>, bool, Vec<String>) {
    for wd in old {
        let _ = watches.remove(wd);
    }
    let mut wanted: BTreeMap<PathBuf, (WatchMask, Role)> = BTreeMap::new();
    let mut complete = true;
    for t in targets {
        if t.is_dir() {
            let e = wanted
                .entry(t.clone())
                .or_insert((WatchMask::empty(), Role::Target));
            e.0 |= TARGET_MASK;
            e.1 = Role::Target;
        } else {
            complete = false;
            if let Some(a) = t.ancestors().skip(1).find(|a| a.is_dir()) {
                let e = wanted
                    .entry(a.to_path_buf())
                    .or_insert((WatchMask::empty(), Role::Ancestor));
                e.0 |= ANCESTOR_MASK;
            }
        }
    }
    let mut watched = HashMap::new();
    let mut errors = Vec::new();
    for (dir, (mask, role)) in wanted {
        match watches.add(&dir, mask) {
            Ok(wd) => {
                watched.insert(wd, role);
            }
            Err(e) => {
                complete = false;
                errors.push(format!("{}: {e}", dir.display()));
            }
        }
    }
    (watched, complete, errors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puppet::yaml::ParseError;
    use std::path::Path;

    fn paths() -> PuppetPaths {
        PuppetPaths::from_dirs(Path::new("/p"), Path::new("/s"))
    }

    #[test]
    fn conditions_log_once_per_change() {
        let p = paths();
        let mut c = Conditions::default();
        let mut st = PuppetState {
            summary_status: FileStatus::Ok,
            report_status: FileStatus::Ok,
            ..Default::default()
        };
        assert!(c.changes(&p, &st).is_empty(), "first Ok is not news");
        st.summary_status = FileStatus::Unreadable {
            error: "reading /p/last_run_summary.yaml: Permission denied (os error 13)".into(),
            permission: true,
        };
        let lines = c.changes(&p, &st);
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].0, Level::Warn);
        assert!(lines[0].1.contains("Permission denied"), "{}", lines[0].1);
        assert!(
            lines[0]
                .1
                .contains("(lastrunfile) mode 0640 anew at every run"),
            "{}",
            lines[0].1
        );
        for _ in 0..5 {
            assert!(c.changes(&p, &st).is_empty(), "logged again");
        }
        st.report_status = FileStatus::Unreadable {
            error: "x".into(),
            permission: true,
        };
        let lines = c.changes(&p, &st);
        assert_eq!(lines.len(), 1);
        assert!(lines[0]
            .1
            .contains("(lastrunreport) mode 0640 anew at every run"));
        st.summary_status = FileStatus::Ok;
        let lines = c.changes(&p, &st);
        assert_eq!(lines.len(), 1);
        assert!(lines[0].1.contains("readable again"));
        st.summary_status = FileStatus::Invalid(ParseError::Empty);
        assert_eq!(c.changes(&p, &st).len(), 1);
        assert!(c.changes(&p, &st).is_empty());
        st.summary_status = FileStatus::Invalid(ParseError::Yaml("line 1 column 1: x".into()));
        assert_eq!(c.changes(&p, &st).len(), 1, "a different error is news");
    }
}
