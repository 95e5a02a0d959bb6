//! Running a kick without holding anything of snmptrapd's: the handler
//! starts a supervisor (this program again, `kick --supervise ID`) in a
//! session of its own, with no descriptor but /dev/null on 0, 1 and 2,
//! and returns at once. The supervisor waits for a free slot
//! (`max_parallel`), runs the kick command in a process group of its own,
//! keeps the tail of what it prints, ends the group at `timeout`, and
//! records how it ended.

use super::judge;
use super::ledger::{now, Ledger, Locked, Slot};
use super::record::{End, Kick, Millis, Record, Refusal, Supervisor};
use super::settings::Settings;
use super::status;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Bytes of the command's output kept in the record.
const OUTPUT_TAIL: usize = 4096;
/// How long the supervisor waits for the ledger's lock.
const LOCK_WAIT: Duration = Duration::from_secs(10);
/// A waiting kick looks this often at what holds it (a file or two).
const MIN_POLL: Duration = Duration::from_millis(200);
/// A kick waiting for a free slot tries again this often (an `flock`, no
/// reading).
const SLOT_POLL: Duration = Duration::from_millis(50);
/// The longest a budget holds a kick back.
const HOUR: Duration = Duration::from_secs(3600);
/// A queued kick with no supervisor recorded after this long never will
/// have one (its handler died between writing it and starting it).
const SUPERVISOR_START: Millis = 30_000;
/// Between SIGTERM and SIGKILL at `timeout`.
const GRACE: Duration = Duration::from_secs(5);
/// The environment a kick command gets: nothing of snmptrapd's.
const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Marks every descriptor above 2 close-on-exec: snmptrapd hands its
/// traphandle its UDP socket and log file, which no child may keep (a kick
/// holding port 162 stops snmptrapd from starting again).
pub fn close_inherited_descriptors() {
    // SAFETY: close_range only changes flags of our own descriptors.
    let done = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    } == 0;
    if done {
        return;
    }
    // Kernels before 5.11: one by one.
    if let Ok(entries) = std::fs::read_dir("/proc/self/fd") {
        let fds: Vec<i32> = entries
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .filter(|&fd| fd > 2)
            .collect();
        for fd in fds {
            // SAFETY: setting FD_CLOEXEC on a descriptor number is harmless
            // even when it was the directory iterator's, now closed.
            unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
        }
    }
}

pub use crate::process::start_ticks;

/// Whether the supervisor recorded for a kick still runs on this host.
pub fn alive(supervisor: &Supervisor) -> bool {
    supervisor.runs_here()
}

/// Every kick, those whose supervisor is gone marked interrupted: a
/// killed supervisor must not count as a running kick forever. A kick
/// that had not started, whose supervisor on another manager is gone
/// (that manager stopped), is left for a handler here to take over
/// ([`orphans`]).
pub fn settle(locked: &Locked, now: Millis) -> Result<Vec<Kick>, String> {
    let mut kicks = locked.kicks()?;
    let supervised: Vec<&Supervisor> = kicks
        .iter()
        .filter(|k| k.active())
        .filter_map(|k| k.supervisor.as_ref())
        .collect();
    let lives = locked.alive_each(&supervised);
    let gone_ones: std::collections::HashSet<(u32, u64, Option<String>)> = supervised
        .iter()
        .zip(lives)
        .filter(|(_, alive)| !alive)
        .map(|(s, _)| (s.pid, s.start_ticks, s.manager.clone()))
        .collect();
    for kick in kicks.iter_mut().filter(|k| k.active()) {
        let gone = match &kick.supervisor {
            Some(s) => gone_ones.contains(&(s.pid, s.start_ticks, s.manager.clone())),
            None => now.saturating_sub(kick.queued_at) > SUPERVISOR_START,
        };
        let remote = kick
            .supervisor
            .as_ref()
            .and_then(|s| s.manager.as_deref())
            .is_some_and(|m| Some(m) != locked.manager());
        if gone && remote && kick.pending() {
            continue;
        }
        if gone {
            kick.ended_at = Some(now);
            kick.end = Some(End::Interrupted);
            locked.write(&Record::Kick(kick.clone()))?;
        }
    }
    Ok(kicks)
}

/// Kicks that have not started whose supervisor, on another manager, is
/// gone: this manager's to supervise (see [`settle`]).
pub fn orphans<'k>(locked: &Locked, kicks: &'k [Kick]) -> Vec<&'k Kick> {
    let Some(me) = locked.manager() else {
        return Vec::new();
    };
    let candidates: Vec<&Kick> = kicks
        .iter()
        .filter(|k| k.pending())
        .filter(|k| {
            k.supervisor
                .as_ref()
                .and_then(|s| s.manager.as_deref())
                .is_some_and(|m| m != me)
        })
        .collect();
    let supervisors: Vec<&Supervisor> = candidates
        .iter()
        .filter_map(|k| k.supervisor.as_ref())
        .collect();
    let lives = locked.alive_each(&supervisors);
    candidates
        .into_iter()
        .zip(lives)
        .filter(|(_, alive)| !alive)
        .map(|(k, _)| k)
        .collect()
}

/// Starts the supervisor of kick `id`, detached; does not wait for it.
/// The caller records who supervises the kick as it writes it.
pub fn spawn(config: &Path, id: &str, manager: Option<&str>) -> Result<Supervisor, String> {
    let child = detached(config, &["--supervise".to_string(), id.to_string()])
        .map_err(|e| format!("cannot start the supervisor: {e}"))?;
    Ok(Supervisor {
        pid: child.id(),
        start_ticks: start_ticks(child.id()).unwrap_or(0),
        manager: manager.map(str::to_string),
    })
}

/// Starts the resolver of a request for `role` (a role given by a
/// PuppetDB query) from `source` for `resource`, detached as a supervisor
/// is; does not wait for it.
pub fn spawn_resolver(
    config: &Path,
    role: &str,
    source: std::net::IpAddr,
    resource: &str,
) -> Result<(), String> {
    // `--opt=VALUE`: a resource title that starts with '-' stays a value.
    let args = [
        format!("--resolve={role}"),
        format!("--source={source}"),
        format!("--resource={resource}"),
    ];
    detached(config, &args)
        .map(drop)
        .map_err(|e| format!("cannot start the resolver: {e}"))
}

/// This program again as `kick -c CONFIG ARGS…`, in a session of its own,
/// with a clean environment and /dev/null on 0, 1 and 2.
fn detached(config: &Path, args: &[String]) -> std::io::Result<std::process::Child> {
    let mut command = Command::new("/proc/self/exe");
    command
        .arg("kick")
        .arg("-c")
        .arg(config)
        .args(args)
        .env_clear()
        .env("PATH", PATH)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.spawn()
}

/// The supervisor's work for kick `id`: wait until it may start, run it,
/// run it again after `retry_delay` while it fails and retries are left
/// (and the role's budget allows), record how it ended.
pub fn run(config: &Path, settings: &Settings, ledger: &Ledger, id: &str) -> Result<(), String> {
    into_own_scope(config, id);
    // Whatever the command starts and leaves (`ssh -f`, `setsid`, a
    // daemon) becomes our child when its parent ends, instead of init's:
    // the timeout and the kick's end reach it ([`sweep`]).
    // SAFETY: prctl with constant arguments on our own process.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    let pid = std::process::id();
    let me = Supervisor {
        pid,
        start_ticks: start_ticks(pid).unwrap_or(0),
        manager: ledger.manager().map(str::to_string),
    };
    // The other managers see that this supervisor lives (a PID of this
    // host tells them nothing) while it does.
    let _alive = ledger.keep_alive(&me)?;
    // The slot is held until this process ends: while the command runs,
    // and while it waits to run again.
    let Some((mut kick, _slot)) = wait_until_due(settings, ledger, id, me)? else {
        return Ok(());
    };
    let (mut retries, mut retry_delay) = settings
        .role(&kick.role)
        .map_or((0, Duration::ZERO), |r| (r.retries, r.retry_delay));
    // An `[[on]]` rule's own retries, and a `run` rule's own command.
    if let Some(on) = &kick.on {
        retries = on.retries.unwrap_or(retries);
        retry_delay = on.retry_delay.map_or(retry_delay, Duration::from_secs);
    }
    loop {
        let argv = match kick.on.as_ref().and_then(|on| on.run.clone()) {
            Some(argv) => argv,
            None => settings.argv(&kick.host, &kick.role, &kick.id),
        };
        tracing::info!(
            "kick {id}: running {} for {} ({}), attempt {}",
            shown_argv(&argv),
            kick.host,
            kick.role,
            kick.attempts
        );
        let (end, output) = run_command(&argv, settings.timeout);
        tracing::info!("kick {id}: {}", describe(&end));
        let failed =
            matches!(end, End::Exited(code) if code != 0) || matches!(end, End::NotStarted(_));
        if failed && kick.attempts <= retries {
            update(ledger, id, |k| {
                k.retrying = true;
                k.output = output.clone();
            })?;
            std::thread::sleep(retry_delay);
            if let Some(again) = begin_retry(settings, ledger, id)? {
                kick = again;
                continue;
            }
        }
        return update(ledger, id, |k| {
            k.ended_at = Some(now());
            k.end = Some(end.clone());
            k.output = output.clone();
            k.retrying = false;
        });
    }
}

/// Counts one more attempt of kick `id` if its role's budget allows it;
/// `None` when it does not (the kick ends as its last attempt did).
fn begin_retry(settings: &Settings, ledger: &Ledger, id: &str) -> Result<Option<Kick>, String> {
    let locked = ledger.lock(LOCK_WAIT)?;
    let kicks = locked.kicks()?;
    let Some(mut kick) = kicks.iter().find(|k| k.id == id).cloned() else {
        return Ok(None);
    };
    if !kick.active() || judge::budget_spent(settings, &kicks, &kick, now()) {
        return Ok(None);
    }
    kick.attempts = kick.attempts.saturating_add(1);
    kick.retrying = false;
    locked.write(&Record::Kick(kick.clone()))?;
    Ok(Some(kick))
}

fn describe(end: &End) -> String {
    match end {
        End::Exited(code) => format!("the command exited with {code}"),
        End::Signalled(sig) => format!("the command was ended by signal {sig}"),
        End::TimedOut => "the command was still running at timeout and was ended".to_string(),
        End::NotStarted(why) => format!("the command could not start: {why}"),
        End::Interrupted => "interrupted".to_string(),
        End::NotNeeded(why) => format!("not needed: {why}"),
    }
}

/// The argv as the log shows it: each argument quoted, controls escaped.
pub fn shown_argv(argv: &[String]) -> String {
    argv.iter()
        .map(|a| format!("{:?}", a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Waits until the rules allow kick `id` ([`judge::may_start`]) and one
/// of the `max_parallel` slots is free, then marks it started; the slot
/// is held while the returned file is. `None` when the record is gone or
/// ended, or it still may not start after the longest any rule holds a
/// kick back (`window` + `timeout` + an hour).
///
/// Waiting reads no more than a file or two: a slot is an `flock` tried
/// every [`SLOT_POLL`]; a kick held back by time sleeps until its
/// `not_before`; one held by an event looks every [`MIN_POLL`] at the one
/// file that tells (the kick it waits for, or its own: the asking run's
/// end); only then does it take the ledger's lock and judge. So a
/// thousand waiting kicks do not hold the lock the handler needs.
fn wait_until_due(
    settings: &Settings,
    ledger: &Ledger,
    id: &str,
    me: Supervisor,
) -> Result<Option<(Kick, Slot)>, String> {
    let deadline = Instant::now() + settings.timeout + settings.window + HOUR;
    // The handler writes the kick just after starting us, under its lock:
    // when it is not there yet, the lock tells when it is.
    let first = match ledger.peek(id) {
        Some(kick) => Some(kick),
        None => ledger.lock(LOCK_WAIT)?.kick(id),
    };
    let Some(mut seen) = first else {
        return Ok(None);
    };
    loop {
        if Instant::now() >= deadline {
            return give_up(settings, ledger, id);
        }
        if still_held(ledger, &seen, now()) {
            std::thread::sleep(MIN_POLL);
            continue;
        }
        let Some(slot) = ledger.try_slot(settings.max_parallel)? else {
            std::thread::sleep(SLOT_POLL);
            continue;
        };
        let locked = ledger.lock(LOCK_WAIT)?;
        let Some(mut kick) = locked.kick(id) else {
            return Ok(None);
        };
        if !kick.pending() {
            return Ok(None);
        }
        // Another manager took it over (this one was thought gone): it is
        // that manager's to run.
        if kick.supervisor.as_ref().is_some_and(|s| *s != me) {
            return Ok(None);
        }
        let now = now();
        // A kick the handler found free to start needs no judging again:
        // it was the host's only pending kick, and counted in the budget.
        let waits = kick.deferred.is_some() || kick.after_run;
        let (held, kicks) = if waits {
            let kicks = settle(&locked, now)?;
            (judge::may_start(settings, &kicks, &kick, now), kicks)
        } else {
            (None, Vec::new())
        };
        let Some(why) = held else {
            kick.started_at = Some(now);
            kick.supervisor = Some(me.clone());
            kick.attempts = kick.attempts.saturating_add(1);
            kick.not_before = None;
            locked.write(&Record::Kick(kick.clone()))?;
            return Ok(Some((kick, slot)));
        };
        // Says why it waits now, and until when at the earliest.
        let not_before = judge::retry_at(settings, &kicks, &kick.role, &why, now);
        if kick.deferred.as_ref() != Some(&why) || kick.not_before != not_before {
            kick.deferred = Some(why);
            kick.not_before = not_before;
            locked.write(&Record::Kick(kick.clone()))?;
        }
        seen = kick;
    }
}

/// Whether what held `kick` back when it was last judged still holds, as
/// far as one file or the clock tells: its time not come, the kick it
/// waits for still running, its asking run not ended.
fn still_held(ledger: &Ledger, kick: &Kick, now: Millis) -> bool {
    if kick.after_run {
        return ledger
            .peek(&kick.id)
            .is_some_and(|k| k.after_run && k.pending());
    }
    if let Some(at) = kick.not_before {
        // Time alone frees it (a look at its own file all the same, for a
        // kick ended some other way). Each kick a little after the others,
        // by its PID's milliseconds: a role's kicks held by one budget do
        // not all take the lock in the same instant.
        let spread = Millis::from(std::process::id() % 1000);
        return now < at.saturating_add(spread)
            && ledger.peek(&kick.id).is_some_and(|k| k.pending());
    }
    match &kick.deferred {
        // Until it ends, or its supervisor is gone (then judging settles
        // it as interrupted).
        Some(Refusal::Busy { kick: busy }) => ledger
            .peek(busy)
            .is_some_and(|k| k.active() && k.supervisor.as_ref().is_some_and(|s| ledger.alive(s))),
        _ => false,
    }
}

/// A kick that waited as long as any rule holds one back: it ends, not
/// started, with the reason.
fn give_up(settings: &Settings, ledger: &Ledger, id: &str) -> Result<Option<(Kick, Slot)>, String> {
    let locked = ledger.lock(LOCK_WAIT)?;
    let Some(mut kick) = locked.kick(id).filter(|k| k.pending()) else {
        return Ok(None);
    };
    kick.ended_at = Some(now());
    kick.end = Some(End::NotStarted(match &kick.deferred {
        Some(why) => format!("still held back: {}", status::why(why, settings)),
        None => format!("{} kicks still running", settings.max_parallel),
    }));
    locked.write(&Record::Kick(kick))?;
    Ok(None)
}

/// Where systemd runs (PID 1), the supervisor leaves the cgroup of
/// whoever started it, snmptrapd's service, whose restart would end every
/// kick, for a scope of its own, `redis-snmp-kick-ID.scope`: `systemd-run
/// --scope` moves this very process there and starts this program again
/// in it, the same PID (the one the ledger records). Tried first with
/// `/bin/true`, so that a systemd that refuses leaves the kick supervised
/// here rather than lost.
fn into_own_scope(config: &Path, id: &str) {
    let unit = format!("redis-snmp-kick-{id}");
    let scoped = std::fs::read_to_string("/proc/self/cgroup").is_ok_and(|c| c.contains(&unit));
    if scoped || !Path::new("/run/systemd/system").is_dir() {
        return;
    }
    let systemd_run = |unit: &str| {
        let mut command = Command::new("systemd-run");
        command.args(["--scope", "--quiet", "--collect", "--unit", unit, "--"]);
        command
    };
    let tried = systemd_run(&format!("{unit}-try"))
        .arg("/bin/true")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !tried.is_ok_and(|s| s.success()) {
        tracing::info!(
            "kick {id}: no scope of its own (systemd-run --scope failed): supervised in place"
        );
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let e = systemd_run(&unit)
        .arg(exe)
        .args(["kick", "-c"])
        .arg(config)
        .args(["--supervise", id])
        .exec();
    tracing::info!("kick {id}: supervised in place: systemd-run: {e}");
}

/// The processes whose parent is this one.
fn children() -> Vec<libc::pid_t> {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                // Field 4, after the name in parentheses.
                stat.rfind(')').and_then(|at| {
                    stat[at + 1..]
                        .split_whitespace()
                        .nth(1)?
                        .parse::<u32>()
                        .ok()
                }) == Some(me)
            })
        })
        .filter_map(|pid| libc::pid_t::try_from(pid).ok())
        .collect()
}

/// Ends everything the kick command left: each child of ours (as a
/// subreaper, orphans of the command's tree are ours), SIGTERM, then
/// SIGKILL after [`GRACE`], until none is left or a bound passes.
fn sweep() {
    let started = Instant::now();
    loop {
        // Reap what has ended, so that it is not counted as left.
        // SAFETY: waitpid on our own children, not blocking.
        while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
        let left = children();
        if left.is_empty() || started.elapsed() > GRACE * 2 {
            return;
        }
        let signal = if started.elapsed() < GRACE {
            libc::SIGTERM
        } else {
            libc::SIGKILL
        };
        for pid in left {
            // SAFETY: signals a child of ours (a PID we have not reaped
            // cannot be another process's).
            unsafe { libc::kill(pid, signal) };
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `argv` in a process group of its own with a clean environment,
/// keeping the tail of its output, ending the group at `timeout`.
fn run_command(argv: &[String], timeout: Duration) -> (End, String) {
    let (mut reader, writer) = match std::io::pipe() {
        Ok(pair) => pair,
        Err(e) => return (End::NotStarted(e.to_string()), String::new()),
    };
    let stderr = match writer.try_clone() {
        Ok(w) => w,
        Err(e) => return (End::NotStarted(e.to_string()), String::new()),
    };
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .env_clear()
        .env("PATH", PATH)
        .env("HOME", home())
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(stderr)
        .process_group(0);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return (End::NotStarted(e.to_string()), String::new()),
    };
    // The writers were moved into the child's setup and are closed here
    // with `command`, so the reader sees the end when the group exits.
    drop(command);
    // The tail is kept where this thread can read it even if something
    // the sweep could not reach still holds the pipe.
    let kept = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
    let (closed, pipe_closed) = std::sync::mpsc::channel::<()>();
    let tail = {
        let kept = kept.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut kept = kept
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > OUTPUT_TAIL {
                    let over = kept.len() - OUTPUT_TAIL;
                    kept.drain(..over);
                }
            }
            let _ = closed.send(());
        })
    };
    let group = child.id() as libc::pid_t;
    let deadline = Instant::now() + timeout;
    let mut end = None;
    while end.is_none() {
        match child.try_wait() {
            Ok(Some(status)) => {
                end = Some(match (status.code(), status.signal()) {
                    (Some(code), _) => End::Exited(code),
                    (None, Some(sig)) => End::Signalled(sig),
                    (None, None) => End::Exited(-1),
                })
            }
            Ok(None) if Instant::now() >= deadline => {
                // SAFETY: signals our own child's process group.
                unsafe { libc::kill(-group, libc::SIGTERM) };
                let grace = Instant::now() + GRACE;
                while Instant::now() < grace && matches!(child.try_wait(), Ok(None)) {
                    std::thread::sleep(Duration::from_millis(50));
                }
                // SAFETY: as above.
                unsafe { libc::kill(-group, libc::SIGKILL) };
                let _ = child.wait();
                end = Some(End::TimedOut);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => end = Some(End::NotStarted(e.to_string())),
        }
    }
    // Whatever of the group is left (a daemon it started) goes too: it
    // would hold the pipe, and the kick is over.
    // SAFETY: as above; ESRCH when the group is empty.
    unsafe { libc::kill(-group, libc::SIGKILL) };
    // And what left the group (`setsid`, `ssh -f`, a daemon): ours as a
    // subreaper once its parent is gone.
    sweep();
    if pipe_closed.recv_timeout(GRACE).is_ok() {
        let _ = tail.join();
    }
    let output = String::from_utf8_lossy(
        &kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    )
    .into_owned();
    (end.unwrap_or(End::Interrupted), output)
}

/// The running user's home (ssh reads its keys there).
fn home() -> String {
    // SAFETY: getpwuid returns a pointer into static storage or null; we
    // copy the string out at once.
    unsafe {
        let pw = libc::getpwuid(libc::geteuid());
        if pw.is_null() || (*pw).pw_dir.is_null() {
            return "/".to_string();
        }
        std::ffi::CStr::from_ptr((*pw).pw_dir)
            .to_string_lossy()
            .into_owned()
    }
}

/// Reads kick `id`, changes it with `change`, writes it back.
pub fn update(ledger: &Ledger, id: &str, change: impl FnOnce(&mut Kick)) -> Result<(), String> {
    let locked = ledger.lock(LOCK_WAIT)?;
    let Some(mut kick) = locked.kick(id) else {
        return Err(format!("kick {id} is not in the ledger"));
    };
    change(&mut kick);
    locked.write(&Record::Kick(kick))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_that_outlives_its_timeout_is_ended_with_its_group() {
        let started = Instant::now();
        let argv: Vec<String> = ["/bin/sh", "-c", "echo hello; sleep 30 & sleep 30"]
            .map(String::from)
            .to_vec();
        let (end, output) = run_command(&argv, Duration::from_millis(300));
        assert_eq!(end, End::TimedOut);
        assert_eq!(output, "hello\n");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }

    /// Security review 2026-11-28 M3: a child that starts its own session
    /// (`setsid`, `ssh -f`, a daemon) held the output pipe, so the
    /// supervisor waited for it forever and the timeout was never
    /// enforced. As the supervisor is, this test process is a subreaper.
    #[test]
    fn what_a_command_leaves_in_a_session_of_its_own_ends_with_it() {
        // SAFETY: prctl with constant arguments on our own process.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("left");
        let alive = |pid: i32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
        };
        for (script, timeout, ends) in [
            // Ends at once, leaving a daemon that holds its output.
            (
                "setsid sh -c 'echo $$ > {pid}; exec sleep 120' & sleep 0.3; echo started",
                Duration::from_secs(60),
                End::Exited(0),
            ),
            // Still running at its timeout, its daemon double-forked away.
            (
                "(setsid sh -c 'echo $$ > {pid}; exec sleep 120' &); sleep 0.3; echo started; sleep 120",
                Duration::from_millis(800),
                End::TimedOut,
            ),
        ] {
            let _ = std::fs::remove_file(&pid_file);
            let script = script.replace("{pid}", &pid_file.display().to_string());
            let argv: Vec<String> = ["/bin/sh", "-c", &script].map(String::from).to_vec();
            let started = Instant::now();
            let (end, output) = run_command(&argv, timeout);
            assert_eq!(end, ends, "{script}");
            assert_eq!(output, "started\n");
            assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
            let left: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
            assert!(!alive(left), "{left} outlived its kick");
        }
    }

    #[test]
    fn exit_codes_output_tails_and_missing_programs() {
        let argv: Vec<String> = ["/bin/sh", "-c", "yes 0123456789 | head -c 100000; exit 3"]
            .map(String::from)
            .to_vec();
        let (end, output) = run_command(&argv, Duration::from_secs(10));
        assert_eq!(end, End::Exited(3));
        assert_eq!(output.len(), OUTPUT_TAIL);
        let (end, _) = run_command(&["/nonexistent/kick".to_string()], Duration::from_secs(1));
        assert!(matches!(end, End::NotStarted(_)), "{end:?}");
    }

    #[test]
    fn the_environment_is_clean() {
        let argv: Vec<String> = ["/usr/bin/env"].map(String::from).to_vec();
        std::env::set_var("REDIS_SNMP_KICK_TEST_SECRET", "x");
        let (end, output) = run_command(&argv, Duration::from_secs(10));
        assert_eq!(end, End::Exited(0));
        let mut names: Vec<&str> = output.lines().filter_map(|l| l.split('=').next()).collect();
        names.sort();
        assert_eq!(names, ["HOME", "LANG", "PATH"]);
    }

    #[test]
    fn start_ticks_tell_a_process_from_a_reused_pid() {
        let me = std::process::id();
        let ticks = start_ticks(me).unwrap();
        assert!(alive(&Supervisor {
            pid: me,
            start_ticks: ticks,
            manager: None,
        }));
        assert!(!alive(&Supervisor {
            pid: me,
            start_ticks: ticks + 1,
            manager: None,
        }));
    }
}
