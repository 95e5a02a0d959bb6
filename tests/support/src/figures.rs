//! Process figures, for benchmarks.

use crate::*;
use std::fs::{self};
use std::path::Path;

/// Nanoseconds a process's threads spent on a CPU (/proc/PID/task/*/schedstat).
pub fn cpu_ns(pid: u32) -> u64 {
    fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .filter_map(|t| fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
                .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
                .sum()
        })
        .unwrap_or(0)
}

/// A `kB` field of /proc/PID/status (`VmRSS:`, `VmHWM:`), in KiB.
pub fn status_kib(pid: u32, field: &str) -> u64 {
    fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// The run summary and report of a real Puppet run
/// (`tests/fixtures/puppet/CASE`) copied into `dir`, and the agent's
/// `[puppet]` section naming them (the lock files in `dir` too, absent).
pub fn puppet_fixture_section(dir: &Path, case: &str) -> String {
    let fixtures = repo_root().join("tests/fixtures/puppet").join(case);
    for file in ["last_run_summary.yaml", "last_run_report.yaml"] {
        let from = fixtures.join(file);
        fs::copy(&from, dir.join(file)).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    }
    format!(
        "[puppet]\nsummary = \"{}\"\nreport = \"{}\"\ndisabled_lock = \"{}\"\nrun_lock = \"{}\"\n",
        dir.join("last_run_summary.yaml").display(),
        dir.join("last_run_report.yaml").display(),
        dir.join("agent_disabled.lock").display(),
        dir.join("agent_catalog_run.lock").display(),
    )
}
