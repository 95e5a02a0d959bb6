//! The Puppet watcher against files written the way Puppet writes them
//! (temporary file in the same directory, then `rename()`; summary first,
//! report after), and against real `puppet apply` runs.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use redis_snmp::config::PuppetPaths;
use redis_snmp::puppet::{
    spawn_watcher, spawn_watcher_with, FileStatus, ParseError, PuppetState, ResourceState,
    RunStatus, WatcherOptions,
};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Longest time from a file's rename to the channel showing it.
const PROMPT: Duration = Duration::from_secs(1);

fn fixture(case: &str, file: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/puppet")
        .join(case)
        .join(file);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Write like Puppet: a temporary file next to the target, then rename.
fn put(target: &Path, content: &[u8]) {
    let name = target.file_name().unwrap().to_string_lossy();
    let tmp = target.with_file_name(format!("{name}20261122-4242-1x2y3z"));
    std::fs::write(&tmp, content).unwrap();
    std::fs::rename(&tmp, target).unwrap();
}

struct Sandbox {
    _dir: tempfile::TempDir,
    paths: PuppetPaths,
    shutdown: CancellationToken,
}

impl Sandbox {
    /// `public/` and `state/` in a temporary directory; `create` makes them.
    fn new(create: bool) -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let public = dir.path().join("var/public");
        let state = dir.path().join("var/state");
        if create {
            std::fs::create_dir_all(&public).unwrap();
            std::fs::create_dir_all(&state).unwrap();
        }
        Sandbox {
            paths: PuppetPaths::from_dirs(&public, &state),
            _dir: dir,
            shutdown: CancellationToken::new(),
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// Wait until the channel holds a state that satisfies `pred`; returns it
/// and how long after `since` it was seen, or panics after `limit`.
async fn wait_for(
    rx: &mut watch::Receiver<Arc<PuppetState>>,
    since: Instant,
    limit: Duration,
    what: &str,
    pred: impl Fn(&PuppetState) -> bool,
) -> (Arc<PuppetState>, Duration) {
    loop {
        let current = rx.borrow_and_update().clone();
        if pred(&current) {
            return (current, since.elapsed());
        }
        match tokio::time::timeout_at(since + limit, rx.changed()).await {
            Ok(Ok(())) => continue,
            Ok(Err(_)) => panic!("{what}: the watcher stopped"),
            Err(_) => panic!(
                "{what}: not seen within {limit:?}; last state: {:#?}",
                rx.borrow()
            ),
        }
    }
}

#[tokio::test]
async fn a_run_written_like_puppet_shows_within_a_second() {
    let sb = Sandbox::new(true);
    let mut rx = spawn_watcher(sb.paths.clone(), sb.shutdown.clone());
    let (st, _) = wait_for(&mut rx, Instant::now(), PROMPT, "first read", |s| {
        s.summary_status == FileStatus::Missing
    })
    .await;
    assert_eq!(st.report_status, FileStatus::Missing);
    assert_eq!(st.run_status(), RunStatus::Unknown);

    // Run 1 (b_changed): summary, then the report a second later.
    put(
        &sb.paths.summary,
        &fixture("b_changed", "last_run_summary.yaml"),
    );
    let t = Instant::now();
    let (st, latency) = wait_for(&mut rx, t, PROMPT, "b_changed summary", |s| {
        s.last_run() == Some(1795336206)
    })
    .await;
    println!("summary of a new run seen after {latency:?}");
    assert!(st.report_pending, "waiting for the report");
    assert_eq!(
        st.run_status(),
        RunStatus::Changed,
        "from the summary alone"
    );
    tokio::time::sleep_until(t + Duration::from_secs(1)).await;
    put(
        &sb.paths.report,
        &fixture("b_changed", "last_run_report.yaml"),
    );
    let t = Instant::now();
    let (st, latency) = wait_for(&mut rx, t, PROMPT, "b_changed report", |s| {
        s.matching_report().is_some() && !s.report_pending
    })
    .await;
    println!("its report, renamed 1 s later, seen after {latency:?}");
    assert_eq!(st.run_status(), RunStatus::Changed);
    assert_eq!(st.matching_report().unwrap().resources.listed.len(), 3);

    // Run 2 (c_failed): both files at once, the report renamed twice as
    // `puppet apply` does.
    let t = Instant::now();
    put(
        &sb.paths.summary,
        &fixture("c_failed", "last_run_summary.yaml"),
    );
    put(
        &sb.paths.report,
        &fixture("c_failed", "last_run_report.yaml"),
    );
    put(
        &sb.paths.report,
        &fixture("c_failed", "last_run_report.yaml"),
    );
    let (st, latency) = wait_for(&mut rx, t, PROMPT, "c_failed", |s| {
        s.last_run() == Some(1795336208) && s.matching_report().is_some()
    })
    .await;
    println!("a run whose two files land together seen after {latency:?}");
    assert!(!st.report_pending);
    assert_eq!(st.run_status(), RunStatus::Failed);
    assert_eq!(st.detailed_exit_code(), Some(6));

    // Garbage afterwards: the last good values stay, the error is shown.
    let t = Instant::now();
    put(&sb.paths.summary, b"\x00\x01 this is not YAML: [");
    let (st, latency) = wait_for(&mut rx, t, PROMPT, "garbage summary", |s| {
        matches!(s.summary_status, FileStatus::Invalid(_))
    })
    .await;
    println!("garbage summary seen after {latency:?}: {:?}", st.errors());
    assert_eq!(st.last_run(), Some(1795336208), "last good summary kept");
    assert_eq!(st.run_status(), RunStatus::Failed);
    assert_eq!(st.errors().len(), 1);
    assert!(st.errors()[0].starts_with("summary: "), "{:?}", st.errors());

    let t = Instant::now();
    put(
        &sb.paths.report,
        b"--- !ruby/object:Puppet::Transaction::Report\nlogs: 5\n",
    );
    let (st, _) = wait_for(&mut rx, t, PROMPT, "garbage report", |s| {
        matches!(s.report_status, FileStatus::Invalid(_))
    })
    .await;
    assert_eq!(
        st.report.as_ref().unwrap().status,
        RunStatus::Failed,
        "last good report kept"
    );
    assert_eq!(st.errors().len(), 2);

    let t = Instant::now();
    put(&sb.paths.summary, b"");
    wait_for(&mut rx, t, PROMPT, "empty summary", |s| {
        s.summary_status == FileStatus::Invalid(ParseError::Empty)
    })
    .await;
    let t = Instant::now();
    put(&sb.paths.summary, &vec![b'#'; (1 << 20) + 1]);
    wait_for(&mut rx, t, PROMPT, "huge summary", |s| {
        matches!(
            s.summary_status,
            FileStatus::Invalid(ParseError::TooLarge { .. })
        )
    })
    .await;
    let t = Instant::now();
    std::fs::remove_file(&sb.paths.summary).unwrap();
    let (st, _) = wait_for(&mut rx, t, PROMPT, "summary removed", |s| {
        s.summary_status == FileStatus::Missing
    })
    .await;
    assert_eq!(st.last_run(), Some(1795336208));

    // Recovery: a good pair again (e_noop).
    let t = Instant::now();
    put(
        &sb.paths.summary,
        &fixture("e_noop", "last_run_summary.yaml"),
    );
    put(&sb.paths.report, &fixture("e_noop", "last_run_report.yaml"));
    let (st, _) = wait_for(&mut rx, t, PROMPT, "e_noop", |s| {
        s.summary_status.is_ok() && s.report_status.is_ok() && s.matching_report().is_some()
    })
    .await;
    assert!(st.errors().is_empty());
    assert!(st.matching_report().unwrap().noop_pending);
    assert_eq!(st.run_status(), RunStatus::Unchanged);
}

#[tokio::test]
async fn a_summary_whose_report_never_comes() {
    let sb = Sandbox::new(true);
    put(
        &sb.paths.summary,
        &fixture("a_converged", "last_run_summary.yaml"),
    );
    put(
        &sb.paths.report,
        &fixture("a_converged", "last_run_report.yaml"),
    );
    let options = WatcherOptions {
        report_wait: Duration::from_millis(1500),
        ..Default::default()
    };
    let mut rx = spawn_watcher_with(sb.paths.clone(), options, sb.shutdown.clone());
    wait_for(&mut rx, Instant::now(), PROMPT, "baseline", |s| {
        s.matching_report().is_some()
    })
    .await;
    let t = Instant::now();
    put(
        &sb.paths.summary,
        &fixture("b_changed", "last_run_summary.yaml"),
    );
    let (st, _) = wait_for(&mut rx, t, PROMPT, "pending", |s| s.report_pending).await;
    assert_eq!(st.last_run(), Some(1795336206));
    let (st, waited) = wait_for(&mut rx, t, Duration::from_secs(3), "gave up", |s| {
        !s.report_pending
    })
    .await;
    println!("stopped waiting for the report after {waited:?}");
    assert!(waited >= Duration::from_millis(1500), "{waited:?}");
    // The report is the run before's: not used for the status.
    assert!(st.report.is_some() && st.matching_report().is_none());
    assert_eq!(st.run_status(), RunStatus::Changed);
}

#[tokio::test]
async fn directories_that_appear_later_are_watched() {
    let sb = Sandbox::new(false);
    // Only the fallback could find the files if the watches were not moved
    // to the new directories; make sure it does not run during the test.
    // A long max_delay makes a watcher that keeps re-creating its watches
    // (each removal queues an IN_IGNORED event) miss the deadline.
    let options = WatcherOptions {
        fallback: Duration::from_secs(3600),
        max_delay: Duration::from_secs(5),
        ..Default::default()
    };
    let mut rx = spawn_watcher_with(sb.paths.clone(), options, sb.shutdown.clone());
    wait_for(&mut rx, Instant::now(), PROMPT, "first read", |s| {
        s.summary_status == FileStatus::Missing
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let public = sb.paths.summary.parent().unwrap();
    let state = sb.paths.report.parent().unwrap();
    std::fs::create_dir_all(public).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    std::fs::create_dir_all(state).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let t = Instant::now();
    put(
        &sb.paths.summary,
        &fixture("a_converged", "last_run_summary.yaml"),
    );
    put(
        &sb.paths.report,
        &fixture("a_converged", "last_run_report.yaml"),
    );
    let (st, latency) = wait_for(&mut rx, t, PROMPT, "files in new dirs", |s| {
        s.matching_report().is_some()
    })
    .await;
    println!("files in directories created after start seen after {latency:?}");
    assert_eq!(st.run_status(), RunStatus::Unchanged);
}

#[tokio::test]
async fn lock_files() {
    let sb = Sandbox::new(true);
    let mut rx = spawn_watcher(sb.paths.clone(), sb.shutdown.clone());
    wait_for(&mut rx, Instant::now(), PROMPT, "first read", |s| {
        s.summary_status == FileStatus::Missing
    })
    .await;
    // `puppet agent --disable` creates the lock in place.
    let t = Instant::now();
    std::fs::write(
        &sb.paths.disabled_lock,
        fixture("agent_a8_disabled", "agent_disabled.lock"),
    )
    .unwrap();
    let (_, latency) = wait_for(&mut rx, t, PROMPT, "disabled", |s| {
        s.disabled.as_deref() == Some("maintenance window CHG-42")
    })
    .await;
    println!("agent disabled seen after {latency:?}");
    let t = Instant::now();
    std::fs::remove_file(&sb.paths.disabled_lock).unwrap();
    wait_for(&mut rx, t, PROMPT, "enabled", |s| s.disabled.is_none()).await;

    // A run in progress: a live process named puppet holds the lock.
    let bin = tempfile::tempdir().unwrap();
    let fake = bin.path().join("puppet");
    std::fs::copy("/bin/sleep", &fake).unwrap();
    let mut child = Command::new(&fake).arg("30").spawn().unwrap();
    let t = Instant::now();
    std::fs::write(&sb.paths.run_lock, child.id().to_string()).unwrap();
    wait_for(&mut rx, t, PROMPT, "run in progress", |s| {
        s.run_in_progress()
    })
    .await;
    child.kill().unwrap();
    child.wait().unwrap();
    // The agent died and left its lock: stale once re-read.
    let t = Instant::now();
    put(&sb.paths.run_lock, child.id().to_string().as_bytes());
    let (st, _) = wait_for(&mut rx, t, PROMPT, "stale lock", |s| {
        s.run_lock.is_some_and(|l| l.is_stale())
    })
    .await;
    assert!(!st.run_in_progress());
    let t = Instant::now();
    std::fs::remove_file(&sb.paths.run_lock).unwrap();
    wait_for(&mut rx, t, PROMPT, "lock gone", |s| s.run_lock.is_none()).await;
}

#[tokio::test]
async fn the_watcher_stops_on_shutdown() {
    let sb = Sandbox::new(true);
    let mut rx = spawn_watcher(sb.paths.clone(), sb.shutdown.clone());
    wait_for(&mut rx, Instant::now(), PROMPT, "first read", |s| {
        s.summary_status == FileStatus::Missing
    })
    .await;
    sb.shutdown.cancel();
    let r = tokio::time::timeout(PROMPT, async { while rx.changed().await.is_ok() {} }).await;
    assert!(r.is_ok(), "the sender was not dropped");
}

// ---- a file this process may not read ----

const EACCES_CHILD: &str = "REDIS_SNMP_TEST_EACCES_CHILD";
const EACCES_TEST: &str = "unreadable_files_are_reported_once_with_the_puppet_conf_fix";

/// Mode bits do not stop root (CAP_DAC_OVERRIDE). As root, this test runs
/// itself again as `nobody` (uid/gid 65534) from a copy of the test binary
/// in a world-readable directory, so the EACCES path is the real one.
#[test]
fn unreadable_files_are_reported_once_with_the_puppet_conf_fix() {
    if std::env::var_os(EACCES_CHILD).is_some() || unsafe { libc::geteuid() } != 0 {
        return unreadable_body();
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = dir.path().join("puppet_watcher_test");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = std::os::unix::process::CommandExt::gid(
        std::os::unix::process::CommandExt::uid(
            Command::new(&exe)
                .args([EACCES_TEST, "--exact", "--nocapture", "--test-threads=1"])
                .env(EACCES_CHILD, "1")
                .env("TMPDIR", "/tmp"),
            65534,
        ),
        65534,
    )
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("--- as nobody:\n{stdout}{stderr}---");
    assert!(out.status.success(), "the test as nobody failed");
    assert!(stdout.contains("1 passed"), "it did not run");
}

#[derive(Clone)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn unreadable_body() {
    assert_ne!(unsafe { libc::geteuid() }, 0, "must not run as root");
    let logs = Arc::new(Mutex::new(Vec::new()));
    let sink = Capture(logs.clone());
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || sink.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let sb = Sandbox::new(true);
        let set_mode = |p: &PathBuf, mode: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
        };
        // Puppet's files as a non-root reader sees them (0640 root:root
        // is unreadable to us; 0000 of our own is the same to open()).
        std::fs::write(&sb.paths.summary, fixture_embedded_summary()).unwrap();
        set_mode(&sb.paths.summary, 0o000);
        let mut rx = spawn_watcher(sb.paths.clone(), sb.shutdown.clone());
        let (st, _) = wait_for(&mut rx, Instant::now(), PROMPT, "EACCES", |s| {
            matches!(
                s.summary_status,
                FileStatus::Unreadable {
                    permission: true,
                    ..
                }
            )
        })
        .await;
        assert!(st.summary.is_none());
        assert!(
            st.errors()[0].contains("Permission denied"),
            "{:?}",
            st.errors()
        );
        // Events on the unreadable file (a chmod that still does not allow
        // reading, touching it) re-read it, but log nothing new.
        for _ in 0..3 {
            set_mode(&sb.paths.summary, 0o000);
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        // The fix: mode 0644.
        let t = Instant::now();
        set_mode(&sb.paths.summary, 0o644);
        let (st, latency) =
            wait_for(&mut rx, t, PROMPT, "readable", |s| s.summary_status.is_ok()).await;
        println!("chmod 0644 seen after {latency:?}");
        assert_eq!(st.last_run(), Some(1795336206));
        // The next run resets the mode: the last good values stay.
        let t = Instant::now();
        let tmp = sb.paths.summary.with_extension("tmp");
        std::fs::write(&tmp, fixture_embedded_summary()).unwrap();
        set_mode(&tmp, 0o000);
        std::fs::rename(&tmp, &sb.paths.summary).unwrap();
        let (st, _) = wait_for(&mut rx, t, PROMPT, "EACCES again", |s| {
            !s.summary_status.is_ok()
        })
        .await;
        assert_eq!(st.last_run(), Some(1795336206), "last good summary kept");
        tokio::time::sleep(Duration::from_millis(300)).await;
    });
    let text = String::from_utf8(logs.lock().unwrap().clone()).unwrap();
    println!("logged:\n{text}");
    let advice = "sh /usr/share/doc/redis-snmp/examples/puppet-acl.sh";
    let lines: Vec<&str> = text.lines().filter(|l| l.contains(advice)).collect();
    assert_eq!(lines.len(), 2, "once per time the condition began: {text}");
    assert!(lines[0].contains("WARN"), "{}", lines[0]);
    assert_eq!(text.matches("readable again").count(), 1, "{text}");
}

/// The summary of b_changed, compiled in: the copy of the test binary that
/// runs as `nobody` may not be able to read the source tree.
fn fixture_embedded_summary() -> &'static [u8] {
    include_bytes!("fixtures/puppet/b_changed/last_run_summary.yaml")
}

// ---- real `puppet apply` runs ----

/// The harness's private Puppet, run off the async runtime.
struct PuppetApply(Arc<testkit::PuppetApply>);

impl PuppetApply {
    fn new() -> PuppetApply {
        PuppetApply(Arc::new(testkit::PuppetApply::new()))
    }

    fn target(&self) -> PathBuf {
        self.0.target()
    }

    fn paths(&self) -> PuppetPaths {
        PuppetPaths::from_dirs(&self.0.public_dir(), &self.0.state_dir())
    }

    async fn apply(&self, name: &str, manifest: &str, extra: &[&str]) -> (i32, Instant) {
        let (puppet, name, manifest) = (self.0.clone(), name.to_string(), manifest.to_string());
        let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        let (code, end) = tokio::task::spawn_blocking(move || {
            let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
            puppet.apply(&name, &manifest, &extra)
        })
        .await
        .unwrap();
        (code, Instant::from_std(end))
    }
}

/// Every state the channel held, with when it arrived.
type Seen = Arc<Mutex<Vec<(Instant, Arc<PuppetState>)>>>;

fn record(mut rx: watch::Receiver<Arc<PuppetState>>) -> Seen {
    let seen: Seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    tokio::spawn(async move {
        loop {
            let state = rx.borrow_and_update().clone();
            s.lock().unwrap().push((Instant::now(), state));
            if rx.changed().await.is_err() {
                return;
            }
        }
    });
    seen
}

/// The first state recorded after `after` that satisfies `pred`, waiting
/// up to `PROMPT` past `end`; returns it and its arrival relative to `end`
/// in milliseconds (negative: before the process had exited).
async fn first_after(
    seen: &Seen,
    after: Instant,
    end: Instant,
    what: &str,
    pred: impl Fn(&PuppetState) -> bool,
) -> (Arc<PuppetState>, i128) {
    loop {
        let hit = seen
            .lock()
            .unwrap()
            .iter()
            .find(|(t, s)| *t >= after && pred(s))
            .cloned();
        if let Some((t, s)) = hit {
            let ms = if t >= end {
                (t - end).as_millis() as i128
            } else {
                -((end - t).as_millis() as i128)
            };
            return (s, ms);
        }
        if Instant::now() > end + PROMPT {
            let last = seen.lock().unwrap().last().cloned();
            panic!("{what}: not seen within {PROMPT:?} of puppet's exit; last: {last:#?}");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The run is there: summary and its report, nothing pending, and a
/// transaction the state did not show before.
fn new_run(previous: &Option<String>) -> impl Fn(&PuppetState) -> bool + '_ {
    move |s: &PuppetState| {
        !s.report_pending
            && s.matching_report()
                .is_some_and(|r| r.transaction_uuid.is_some() && r.transaction_uuid != *previous)
    }
}

#[tokio::test]
async fn real_puppet_apply_runs_show_within_a_second() {
    let p = PuppetApply::new();
    let shutdown = CancellationToken::new();
    let _stop = shutdown.clone().drop_guard();
    // The var directory does not exist yet: the first run creates it.
    let seen = record(spawn_watcher(p.paths(), shutdown.clone()));
    let t = p.target().to_string_lossy().into_owned();

    // A run that changes things.
    let start = Instant::now();
    let manifest = format!(
        "file {{ '{t}/managed.txt': ensure => file, content => \"one\\n\", mode => '0644' }}\n\
         notify {{ 'hello': message => 'hello from the test' }}\n"
    );
    let (code, end) = p.apply("changed", &manifest, &[]).await;
    assert_eq!(code, 2);
    let (st, ms) = first_after(&seen, start, end, "changed run", new_run(&None)).await;
    println!("changed run: state {ms} ms after puppet apply exited");
    assert_eq!(st.run_status(), RunStatus::Changed);
    assert_eq!(st.detailed_exit_code(), Some(code));
    assert_eq!(
        st.run_mode(),
        Some(redis_snmp::metrics::PuppetRunMode::User)
    );
    let s = st.summary.as_ref().unwrap();
    assert_eq!(s.resources.changed, 2);
    assert_eq!(s.resources.total, 9, "2 + the 7 built-in resources");
    let r = st.matching_report().unwrap();
    let changed: Vec<&str> = r
        .resources
        .listed
        .iter()
        .map(|e| e.resource.as_str())
        .collect();
    assert_eq!(
        changed,
        [format!("File[{t}/managed.txt]").as_str(), "Notify[hello]"]
    );
    let previous = r.transaction_uuid.clone();

    // A run with a failing resource and a dependent that is skipped.
    let start = Instant::now();
    let manifest = format!(
        "file {{ '{t}/managed.txt': ensure => file, content => \"one\\n\", mode => '0644' }}\n\
         exec {{ 'fails': command => '/bin/false' }}\n\
         notify {{ 'after': message => 'never', require => Exec['fails'] }}\n"
    );
    let (code, end) = p.apply("failed", &manifest, &[]).await;
    assert_eq!(code, 4);
    let (st, ms) = first_after(&seen, start, end, "failed run", new_run(&previous)).await;
    println!("failed run: state {ms} ms after puppet apply exited");
    assert_eq!(st.run_status(), RunStatus::Failed);
    assert_eq!(st.detailed_exit_code(), Some(code));
    let r = st.matching_report().unwrap();
    let listed: Vec<(&str, ResourceState)> = r
        .resources
        .listed
        .iter()
        .map(|e| (e.resource.as_str(), e.state))
        .collect();
    assert_eq!(
        listed,
        [
            ("Exec[fails]", ResourceState::Failed),
            ("Notify[after]", ResourceState::Skipped)
        ]
    );
    let message = r.resources.listed[0].message.as_deref().unwrap();
    assert!(
        message.contains("'/bin/false' returned 1 instead of one of [0]"),
        "{message}"
    );
    assert_eq!(
        r.resources.listed[1].message.as_deref(),
        Some("Skipping because of failed dependencies")
    );
    let first_error = r.logs.first_error.as_ref().unwrap();
    assert!(
        first_error.message.contains("/bin/false"),
        "{first_error:?}"
    );
    let previous = r.transaction_uuid.clone();

    // A noop run that finds drift.
    let start = Instant::now();
    let manifest = format!(
        "file {{ '{t}/managed.txt': ensure => file, content => \"two\\n\", mode => '0644' }}\n"
    );
    let (code, end) = p.apply("noop", &manifest, &["--noop"]).await;
    assert_eq!(code, 0);
    let (st, ms) = first_after(&seen, start, end, "noop run", new_run(&previous)).await;
    println!("noop run: state {ms} ms after puppet apply exited");
    assert_eq!(st.run_status(), RunStatus::Unchanged);
    assert_eq!(st.detailed_exit_code(), Some(code));
    let r = st.matching_report().unwrap();
    assert!(r.noop && r.noop_pending);
    assert_eq!(r.resources.listed.len(), 1);
    assert_eq!(r.resources.listed[0].state, ResourceState::OutOfSync);
    assert_eq!(st.summary.as_ref().unwrap().events.noop, 1);
    assert!(st.errors().is_empty(), "{:?}", st.errors());
    // The files are mode 0640, as the README says.
    let mode = std::fs::metadata(&p.paths().summary)
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o640);
}
