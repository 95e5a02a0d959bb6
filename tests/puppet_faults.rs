//! Issue 7, through the running agent: Puppet's files missing, cut short,
//! garbage, 100 MB, rewritten while being read, and good again, one after
//! the other while one agent keeps running, with a real snmpd and a real
//! redis-server. After each step: what a manager sees with snmpget, what
//! the log says (once), and that the agent keeps answering, Redis included.
//!
//! What the code intends (src/puppet/state.rs, watcher.rs, the MIB): a file
//! that cannot be used does not erase the last good run; puppetReadError
//! says why; a missing file is not an error (Puppet may not have run yet)
//! and also keeps the last good values; files over the size cap are
//! refused from their size, before reading.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use testkit::{instance_oid, status_kib, wait_until, Agent, AgentConfig, Redis, Snmpd};

const PUPPET: &str = ".1.3.6.1.4.1.20267.401.1";
const LAST_RUN_TIME: u32 = 1;
const STATUS: u32 = 3;
const RESOURCES_TOTAL: u32 = 4;
const RESOURCES_CHANGED: u32 = 5;
const EVENTS_TOTAL: u32 = 13;
const CHANGES_TOTAL: u32 = 16;
const READ_ERROR: u32 = 36;
/// puppetLastRunStatus values.
const CHANGED: &str = "2";
const FAILED: &str = "3";
const UNKNOWN: &str = "4";
/// The caps of src/puppet/summary.rs and report.rs.
const SUMMARY_CAP: u64 = 1 << 20;
const REPORT_CAP: u64 = 64 << 20;
/// VmHWM and VmRSS are in KiB.
const MIB_IN_KIB: u64 = 1024;

struct Stack {
    agent: Agent,
    snmpd: Snmpd,
    _redis: Redis,
    dir: tempfile::TempDir,
}

impl Stack {
    fn start() -> Stack {
        let redis = Redis::start();
        let snmpd = Snmpd::start();
        let dir = tempfile::tempdir().unwrap();
        for d in ["public", "state"] {
            std::fs::create_dir(dir.path().join(d)).unwrap();
        }
        let agent = AgentConfig::new(&snmpd)
            .redis("main", &redis.address(), "")
            .puppet_files(&dir.path().join("public"), &dir.path().join("state"), "")
            .start(dir.path());
        Stack {
            agent,
            snmpd,
            _redis: redis,
            dir,
        }
    }

    fn summary(&self) -> PathBuf {
        self.dir.path().join("public/last_run_summary.yaml")
    }

    fn report(&self) -> PathBuf {
        self.dir.path().join("state/last_run_report.yaml")
    }

    /// A Puppet scalar's value as snmpget prints it (numeric, no MIB).
    fn get(&self, column: u32) -> String {
        self.snmpd
            .numeric()
            .get_one(&format!("{PUPPET}.{column}.0"))
            .value
    }

    /// The values a manager compares with the files.
    fn values(&self) -> [String; 6] {
        [
            LAST_RUN_TIME,
            RESOURCES_TOTAL,
            RESOURCES_CHANGED,
            EVENTS_TOTAL,
            CHANGES_TOTAL,
            STATUS,
        ]
        .map(|c| self.get(c))
    }

    fn wait_for(&self, what: &str, mut cond: impl FnMut(&Stack) -> bool) {
        let ok = wait_until(Duration::from_secs(10), || cond(self));
        assert!(
            ok,
            "{what}: not seen within 10 s; puppetReadError={}; values={:?}",
            self.get(READ_ERROR),
            self.values()
        );
    }

    /// The agent answers, Redis included, and has not died or panicked.
    fn check_alive(&mut self) {
        assert!(self.agent.is_running(), "the agent exited");
        let state = self.snmpd.numeric().get_one(&instance_oid(4, 1));
        assert_eq!(
            state.value, "1",
            "redisInstanceState.1 is not up(1): {state}"
        );
        assert!(!self.agent.log().contains("panicked"), "a panic is logged");
    }

    /// Makes the watcher re-read everything a few times (a run lock that
    /// comes and goes is an event on a watched name), so that an error
    /// logged on every read would show.
    fn poke(&self) {
        let lock = self.dir.path().join("state/agent_catalog_run.lock");
        for _ in 0..3 {
            std::fs::write(&lock, "999999999").unwrap();
            std::thread::sleep(Duration::from_millis(300));
            std::fs::remove_file(&lock).unwrap();
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    fn log_count(&self, needle: &str) -> usize {
        self.agent
            .log()
            .lines()
            .filter(|l| l.contains(needle))
            .count()
    }

    fn peak_kib(&self) -> u64 {
        status_kib(self.agent.pid(), "VmHWM:")
    }

    fn rss_kib(&self) -> u64 {
        status_kib(self.agent.pid(), "VmRSS:")
    }
}

fn fixture(case: &str, name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/puppet")
        .join(case)
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// As Puppet does: write a temporary file in the same directory, rename it.
fn put(path: &Path, bytes: &[u8]) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// A file of `len` bytes that takes no disk space (zeros when read).
fn put_sparse(path: &Path, len: u64) {
    let tmp = path.with_extension("tmp");
    std::fs::File::create(&tmp).unwrap().set_len(len).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// `section.key` of a summary, as the file has it (two-space indented).
fn summary_number(summary: &[u8], section: &str, key: &str) -> String {
    let text = String::from_utf8_lossy(summary);
    let mut lines = text
        .lines()
        .skip_while(|l| *l != format!("{section}:"))
        .skip(1);
    lines
        .find_map(|l| l.strip_prefix(&format!("  {key}: ")))
        .unwrap_or_else(|| panic!("no {section}.{key} in the summary"))
        .to_string()
}

/// What the agent must serve for a good summary, in [`Stack::values`]
/// order.
fn expected(summary: &[u8], status: &str) -> [String; 6] {
    [
        summary_number(summary, "time", "last_run"),
        summary_number(summary, "resources", "total"),
        summary_number(summary, "resources", "changed"),
        summary_number(summary, "events", "total"),
        summary_number(summary, "changes", "total"),
        status.to_string(),
    ]
}

/// Deterministic junk: NULs, high bytes, YAML punctuation.
fn garbage(len: usize) -> Vec<u8> {
    let mut x: u32 = 0x9e37_79b9;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

#[test]
fn faulty_puppet_files_through_the_running_agent() {
    let mut stack = Stack::start();
    let good_summary = fixture("b_changed", "last_run_summary.yaml");
    let good_report = fixture("b_changed", "last_run_report.yaml");
    let good = expected(&good_summary, CHANGED);

    // 1. No files yet: status unknown, no run time, no error; logged once.
    stack.wait_for("files missing", |s| s.get(STATUS) == UNKNOWN);
    assert!(stack
        .snmpd
        .numeric()
        .get_one(&format!("{PUPPET}.{LAST_RUN_TIME}.0"))
        .is_no_such_instance());
    assert_eq!(stack.get(READ_ERROR), "\"\"");
    stack.poke();
    assert_eq!(
        stack.log_count("puppet: no summary at"),
        1,
        "{}",
        stack.agent.log()
    );
    stack.check_alive();

    // 2. A good run: the file's numbers.
    put(&stack.summary(), &good_summary);
    put(&stack.report(), &good_report);
    stack.wait_for("good files", |s| s.values() == good);
    assert_eq!(stack.get(READ_ERROR), "\"\"");
    stack.check_alive();

    // 3. The summary cut short at a line end (still YAML): refused, the
    // last good run kept, the error shown and logged once.
    let cut = good_summary
        .windows(6)
        .position(|w| w == b"\ntime:")
        .unwrap()
        + 1;
    put(&stack.summary(), &good_summary[..cut]);
    stack.wait_for("truncated", |s| {
        s.get(READ_ERROR).contains("summary: incomplete")
    });
    assert_eq!(stack.values(), good, "the last good run is kept");
    stack.poke();
    assert_eq!(
        stack.log_count("incomplete: no time.last_run"),
        1,
        "{}",
        stack.agent.log()
    );
    stack.check_alive();

    // 4. Garbage bytes.
    put(&stack.summary(), &garbage(4096));
    stack.wait_for("garbage", |s| {
        let e = s.get(READ_ERROR);
        e.contains("summary: ") && !e.contains("incomplete")
    });
    assert_eq!(stack.values(), good);
    stack.poke();
    assert_eq!(
        stack.log_count("is not usable, keeping the last good one"),
        2,
        "{}",
        stack.agent.log()
    );
    stack.check_alive();

    // 5. 100 MB summary and report: refused from their size, never read.
    let before = stack.peak_kib();
    put_sparse(&stack.summary(), 100_000_000);
    put_sparse(&stack.report(), 100_000_000);
    stack.wait_for("100 MB", |s| {
        let e = s.get(READ_ERROR);
        e.contains(&format!("over the {SUMMARY_CAP}-byte limit"))
            && e.contains(&format!("over the {REPORT_CAP}-byte limit"))
    });
    assert_eq!(stack.values(), good);
    stack.poke();
    let after = stack.peak_kib();
    println!(
        "VmHWM {before} KiB before the 100 MB files, {after} KiB after ({:.3}×)",
        after as f64 / before as f64
    );
    // Reading either file would cost at least its cap (1 MiB, 64 MiB).
    assert!(
        after < before + MIB_IN_KIB,
        "peak RSS grew {} KiB",
        after - before
    );
    assert_eq!(
        stack.log_count("is not usable, keeping the last good one"),
        4
    );
    stack.check_alive();

    // 5b. A report just under its cap is read: the peak is bounded by the
    // cap, and the memory is given back.
    let before_rss = stack.rss_kib();
    put_sparse(&stack.report(), REPORT_CAP - 4096);
    stack.wait_for("report at the cap", |s| {
        !s.get(READ_ERROR)
            .contains(&format!("over the {REPORT_CAP}"))
    });
    stack.wait_for("rss back", |s| s.rss_kib() < before_rss + 8 * MIB_IN_KIB);
    let peak = stack.peak_kib();
    println!(
        "VmHWM {peak} KiB after a report of the cap's size ({:.3}× the first)",
        peak as f64 / before as f64
    );
    assert!(
        peak < before + REPORT_CAP / 1024 + 16 * MIB_IN_KIB,
        "peak RSS grew {} KiB",
        peak - before
    );
    assert_eq!(stack.values(), good);
    stack.check_alive();

    // 6. The summary rewritten in place, slowly, over and over, while the
    // agent reads it: whatever it serves is one of the two runs, never a
    // mix or a made-up value.
    let other_summary = fixture("c_failed", "last_run_summary.yaml");
    let other = expected(&other_summary, FAILED);
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (path, stop) = (stack.summary(), stop.clone());
        let files = [good_summary.clone(), other_summary.clone()];
        std::thread::spawn(move || rewrite_slowly(&path, &files, &stop))
    };
    let deadline = Instant::now() + Duration::from_secs(4);
    let mut seen = std::collections::BTreeSet::new();
    while Instant::now() < deadline {
        let (time, total) = (stack.get(LAST_RUN_TIME), stack.get(RESOURCES_TOTAL));
        assert!(
            (time == good[0] && total == good[1]) || (time == other[0] && total == other[1]),
            "served a run that is neither file: last_run {time}, resources {total}"
        );
        seen.insert(time);
        std::thread::sleep(Duration::from_millis(50));
    }
    stop.store(true, Ordering::Relaxed);
    let rewrites = writer.join().unwrap();
    println!("{rewrites} rewrites; runs served meanwhile: {seen:?}");
    stack.check_alive();

    // 7. Good files again, by rename as Puppet does: the new run, no error.
    put(&stack.summary(), &other_summary);
    put(
        &stack.report(),
        &fixture("c_failed", "last_run_report.yaml"),
    );
    stack.wait_for("good again", |s| {
        s.values() == other && s.get(READ_ERROR) == "\"\""
    });
    stack.check_alive();
    // Each condition of the report logged once: missing, back (2),
    // too large, not YAML, back (7).
    let report_lines = stack.log_count("puppet: the report") + stack.log_count("no report at");
    assert_eq!(report_lines, 5, "{}", stack.agent.log());
    let log = stack.agent.log();
    let back = log
        .lines()
        .filter(|l| l.contains("the report") && l.contains("readable again"));
    assert_eq!(back.count(), 2, "{log}");
    assert_eq!(stack.log_count("puppet: no summary at"), 1);
    assert!(stack.agent.stop().success());
}

/// Truncates the file and writes one of `files` into it 64 bytes per
/// millisecond, then the other, until `stop`; returns how many it wrote.
fn rewrite_slowly(path: &Path, files: &[Vec<u8>; 2], stop: &AtomicBool) -> usize {
    use std::io::Write;
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        let mut f = std::fs::File::create(path).unwrap();
        for chunk in files[n % 2].chunks(64) {
            f.write_all(chunk).unwrap();
            std::thread::sleep(Duration::from_millis(1));
        }
        drop(f);
        // Whole now and then, so that some reads find a whole file.
        std::thread::sleep(Duration::from_millis(20));
        n += 1;
    }
    n
}
