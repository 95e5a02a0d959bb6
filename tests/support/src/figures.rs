//! Process figures, for benchmarks.

use std::fs;

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
