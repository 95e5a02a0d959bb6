//! What the benchmarks share: OIDs for snmp2, pinning, CPU ticks.
#![allow(dead_code)] // each benchmark uses a part

use snmp2::Oid;

/// `.1.3.6…` as arcs.
pub fn arcs(dotted: &str) -> Vec<u64> {
    dotted
        .trim_start_matches('.')
        .split('.')
        .map(|s| s.parse().unwrap())
        .collect()
}

pub fn oid(dotted: &str) -> Oid<'static> {
    Oid::from(arcs(dotted).as_slice()).unwrap()
}

/// Pin a process (every thread it has now) or, with 0, the calling thread
/// to CPU 0, so that the figures do not depend on where the scheduler puts
/// each party. sched_setaffinity acts on one thread: a process's threads
/// started before the call (the agent's AgentX thread is) keep their own
/// affinity unless each is pinned.
pub fn pin(pid: u32) {
    let threads: Vec<u32> = if pid == 0 {
        vec![0]
    } else {
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .map(|tasks| {
                tasks
                    .filter_map(|t| t.ok()?.file_name().to_str()?.parse().ok())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert!(!threads.is_empty(), "no threads for {pid}");
    for tid in threads {
        // SAFETY: plain syscall on a valid cpu_set_t.
        let result = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(0, &mut set);
            libc::sched_setaffinity(
                tid as libc::pid_t,
                std::mem::size_of::<libc::cpu_set_t>(),
                &set,
            )
        };
        let error = std::io::Error::last_os_error();
        // A thread that ended meanwhile has nothing left to pin.
        assert!(
            result == 0 || error.raw_os_error() == Some(libc::ESRCH),
            "sched_setaffinity({tid}) of {pid}: {error}"
        );
    }
}

/// User and system CPU time of a process, in clock ticks (/proc/PID/stat).
pub fn user_sys_ticks(pid: u32) -> (u64, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name, which is in parentheses.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<u64> = rest
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    (fields[11], fields[12])
}

/// Clock ticks per second of /proc/PID/stat (USER_HZ, 100 on Linux).
pub const TICKS_PER_SECOND: f64 = 100.0;

/// The median, 99th percentile and maximum of latency samples.
pub struct Stats {
    pub median: std::time::Duration,
    pub p99: std::time::Duration,
    pub max: std::time::Duration,
}

/// [`Stats`] of `samples` (at least one).
pub fn stats(mut samples: Vec<std::time::Duration>) -> Stats {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize];
    Stats {
        median: at(0.5),
        p99: at(0.99),
        max: *samples.last().unwrap(),
    }
}
