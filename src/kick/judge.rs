//! Whether a kick is due: pure code over the settings, the ledger's
//! records and the time, so every rule is tested with plain values.
//!
//! Loops stop by generation, whatever a run takes: a notification from a
//! host that is in a kicked run, or whose kicked run ended less than
//! `window` ago, was caused by that kick, so the kicks it asks for are one
//! generation deeper; deeper than `max_depth` is refused. A cycle of any
//! length and run time thus ends after at most hosts × `max_depth` kicks.
//!
//! Then, per host: not while it is being kicked, not within `window` of
//! the end of its last kicked run; per role: at most `budget_per_hour`
//! kicks an hour. A kick these rules hold back is deferred, not refused:
//! it waits, keeping its generation, and starts as soon as they allow
//! ([`may_start`]); while it waits, later requests for the host join it
//! (one pending kick per host).

use super::record::{Cause, End, Kick, Millis, Refusal, Refused};
use super::settings::{Role, Settings, AGAIN};
use super::trap::RunEnd;

const HOUR: Millis = 3_600_000;

/// Kicks the rules may still need ([`horizon`]) kept at most: beyond, new
/// kicks are refused ([`Refusal::Full`]); forgetting one would let the
/// window, the budget and the depth be bypassed.
pub const MAX_LIVE_KICKS: usize = 10_000;

/// How long after its end (or start) a kick still counts for a rule: the
/// window, the budget's hour, the wait for its report, whichever is
/// longest. Kicks older than this are history only.
pub fn horizon(settings: &Settings) -> Millis {
    millis(settings.window)
        .max(millis(settings.timeout))
        .max(HOUR)
}

/// Whether `kick` may still count for a rule at `now`.
pub fn needed(settings: &Settings, kick: &Kick, now: Millis) -> bool {
    kick.active()
        || now.saturating_sub(kick.ended_at.unwrap_or(kick.queued_at)) <= horizon(settings)
}

/// A notification asking to kick `role`, from the host `sender`.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub now: Millis,
    pub sender: &'a str,
    pub role: &'a str,
    /// The resource that changed on the sender, `Type[title]`.
    pub resource: &'a str,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Start a kick of `host` now.
    Kick {
        host: String,
        generation: u32,
        caused_by: Option<String>,
    },
    /// A kick of `host` that waits until the rules allow (`why` they do
    /// not now).
    Defer {
        host: String,
        generation: u32,
        caused_by: Option<String>,
        why: Refusal,
    },
    /// The request joins kick `into`, pending for `host`.
    Coalesce {
        host: String,
        into: String,
        generation: u32,
        caused_by: Option<String>,
    },
    Refuse {
        host: Option<String>,
        generation: u32,
        caused_by: Option<String>,
        why: Refusal,
    },
}

/// A duration of the settings in the ledger's unit.
pub fn millis(d: std::time::Duration) -> Millis {
    Millis::try_from(d.as_millis()).unwrap_or(Millis::MAX)
}

/// The kick that caused `host`'s current or just-ended run, if any: the
/// newest kick of `host` that is running, or ended less than `window` ago.
pub fn causing_kick<'k>(
    settings: &Settings,
    kicks: &'k [Kick],
    host: &str,
    now: Millis,
) -> Option<&'k Kick> {
    let window = millis(settings.window);
    kicks
        .iter()
        .filter(|k| k.host == host && k.started_at.is_some())
        .filter(|k| match k.ended_at {
            None => k.active(),
            Some(ended) => now < ended.saturating_add(window),
        })
        .max_by_key(|k| k.started_at)
}

/// When `kick` counts against its role's budget from: its start, or, for
/// one queued to start at once, when it was queued; `None` for a kick
/// that waits (it counts once it starts).
fn budget_time(kick: &Kick) -> Option<Millis> {
    match (kick.started_at, &kick.deferred) {
        (Some(at), _) => Some(at),
        (None, None) if kick.active() && !kick.after_run => Some(kick.queued_at),
        _ => None,
    }
}

/// Kicks of `role` counted against its budget at `now`: each attempt of a
/// kick started (or starting at once) within the last hour.
fn budget_used(kicks: &[Kick], role: &str, now: Millis, except: Option<&str>) -> u32 {
    kicks
        .iter()
        .filter(|k| k.role == role && Some(k.id.as_str()) != except)
        .filter(|k| budget_time(k).is_some_and(|at| now.saturating_sub(at) < HOUR))
        .map(|k| k.attempts.max(1))
        .sum()
}

/// Why a kick of `host` for `role` may not start at `now` (`except`: the
/// kick itself), or `None` when it may: being kicked, within `window` of
/// its last kicked run's end, or the role's budget spent.
fn held_back(
    settings: &Settings,
    kicks: &[Kick],
    host: &str,
    role: &Role,
    now: Millis,
    except: Option<&str>,
) -> Option<Refusal> {
    let window = millis(settings.window);
    let of_host = || {
        kicks
            .iter()
            .filter(move |k| k.host == host && Some(k.id.as_str()) != except)
    };
    if let Some(busy) = of_host().find(|k| k.active() && k.started_at.is_some()) {
        return Some(Refusal::Busy {
            kick: busy.id.clone(),
        });
    }
    if let Some(ended_at) = of_host()
        .filter(|k| k.started_at.is_some())
        .filter_map(|k| k.ended_at)
        .filter(|&ended| now < ended.saturating_add(window))
        .max()
    {
        return Some(Refusal::Window { ended_at });
    }
    let used = budget_used(kicks, &role.name, now, except);
    (used >= role.budget_per_hour).then_some(Refusal::Budget { used })
}

/// Whether pending kick `kick` may start now, else why it waits. Its own
/// run's end (`kick -> again`) first, then the rules of `held_back`.
pub fn may_start(settings: &Settings, kicks: &[Kick], kick: &Kick, now: Millis) -> Option<Refusal> {
    if kick.after_run {
        return Some(Refusal::OwnRun);
    }
    let role = settings.role(&kick.role)?;
    match held_back(settings, kicks, &kick.host, role, now, Some(&kick.id)) {
        // `again` runs once the asking run has ended: a kicked one's
        // window is for other hosts' requests.
        Some(Refusal::Window { .. }) if role.name == AGAIN => None,
        other => other,
    }
}

/// Whether `kick`'s role has spent its budget of the hour (for one more
/// attempt of it).
pub fn budget_spent(settings: &Settings, kicks: &[Kick], kick: &Kick, now: Millis) -> bool {
    settings
        .role(&kick.role)
        .is_some_and(|role| budget_used(kicks, &role.name, now, None) >= role.budget_per_hour)
}

/// When a kick held back for `why` at `now` may next start, at the
/// earliest: the end of the window, or the end of the hour of the oldest
/// kick its role's budget counts (or of `now`, when the kicks that spent
/// it are being made with this one); `None` when only another event (a
/// kick's or a run's end) tells.
pub fn retry_at(
    settings: &Settings,
    kicks: &[Kick],
    role: &str,
    why: &Refusal,
    now: Millis,
) -> Option<Millis> {
    match why {
        Refusal::Window { ended_at } => Some(ended_at.saturating_add(millis(settings.window))),
        Refusal::Budget { .. } => Some(
            kicks
                .iter()
                .filter(|k| k.role == role)
                .filter_map(budget_time)
                .filter(|&at| now.saturating_sub(at) < HOUR)
                .min()
                .unwrap_or(now)
                .saturating_add(HOUR),
        ),
        _ => None,
    }
}

/// What to do with a request: one decision per host of `targets` (the
/// role's hosts, or the inventory's of that role), or one refusal of the
/// whole request.
pub fn judge(
    settings: &Settings,
    kicks: &[Kick],
    request: &Request,
    targets: &[String],
) -> Vec<Decision> {
    let cause = causing_kick(settings, kicks, request.sender, request.now);
    let generation = cause.map_or(0, |k| k.generation).saturating_add(1);
    let caused_by = cause.map(|k| k.id.clone());
    let refuse_all = |why| {
        vec![Decision::Refuse {
            host: None,
            generation,
            caused_by: caused_by.clone(),
            why,
        }]
    };
    let Some(role) = settings.role(request.role) else {
        return refuse_all(Refusal::UnknownRole);
    };
    if !role.requested_by.is_empty() && !role.requested_by.iter().any(|h| h == request.sender) {
        return refuse_all(Refusal::NotRequester);
    }
    let live = kicks
        .iter()
        .filter(|k| needed(settings, k, request.now))
        .count();
    if live >= MAX_LIVE_KICKS {
        return refuse_all(Refusal::Full { kicks: live });
    }
    let again = role.name == AGAIN;
    // `again` is judged for depth when the asking run has ended
    // ([`after_run`]): a run that changed nothing else needs no kick, and
    // is no loop to refuse.
    if generation > settings.max_depth && !again {
        return refuse_all(Refusal::TooDeep {
            chain: chain(kicks, cause, request),
        });
    }
    let hosts: Vec<String> = if again {
        vec![request.sender.to_string()]
    } else {
        targets.to_vec()
    };
    let mut starting = Vec::new();
    let mut decisions = Vec::new();
    for host in hosts {
        let pending = kicks.iter().find(|k| k.host == host && k.pending());
        if let Some(pending) = pending {
            decisions.push(Decision::Coalesce {
                host,
                into: pending.id.clone(),
                generation,
                caused_by: caused_by.clone(),
            });
            continue;
        }
        let why = if again {
            Some(Refusal::OwnRun)
        } else {
            held_back(settings, kicks, &host, role, request.now, None).or_else(|| {
                // The kicks decided now count against the budget too.
                let used =
                    budget_used(kicks, &role.name, request.now, None) + starting.len() as u32;
                (used >= role.budget_per_hour).then_some(Refusal::Budget { used })
            })
        };
        decisions.push(match why {
            Some(why) => Decision::Defer {
                host,
                generation,
                caused_by: caused_by.clone(),
                why,
            },
            None => {
                starting.push(host.clone());
                Decision::Kick {
                    host,
                    generation,
                    caused_by: caused_by.clone(),
                }
            }
        });
    }
    decisions
}

/// What becomes of a pending `kick -> again` kick once the run that asked
/// for it ended, having changed `changed` resources (`None`: not said)
/// and failed or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterRun {
    /// The run changed nothing but the notify that asked: converged.
    NotNeeded,
    /// Deeper than `max_depth`: refused, with the chain.
    TooDeep { chain: Vec<String> },
    /// It may start (once the other rules allow).
    Start,
}

pub fn after_run(
    settings: &Settings,
    kicks: &[Kick],
    kick: &Kick,
    changed: Option<u64>,
    failed: bool,
) -> AfterRun {
    let only_again = std::iter::once(&kick.cause)
        .chain(&kick.coalesced)
        .all(|c| c.host == kick.host)
        && kick.role == AGAIN;
    // A Notify is a changed resource in every run that has it: the run
    // that changed nothing else changed exactly one.
    if only_again && !failed && changed.is_some_and(|n| n <= 1) {
        return AfterRun::NotNeeded;
    }
    if kick.generation > settings.max_depth {
        let causing = kick
            .caused_by
            .as_deref()
            .and_then(|id| kicks.iter().find(|k| k.id == id));
        let request = Request {
            now: kick.queued_at,
            sender: &kick.cause.host,
            role: &kick.role,
            resource: &kick.cause.resource,
        };
        return AfterRun::TooDeep {
            chain: chain(kicks, causing, &request),
        };
    }
    AfterRun::Start
}

/// The chain that led to a request, oldest first: `web1 Notify[kick ->
/// haproxy] → lb1 (haproxy, generation 1) → …`.
fn chain<'k>(kicks: &'k [Kick], mut kick: Option<&'k Kick>, request: &Request) -> Vec<String> {
    let mut links = vec![format!(
        "{} {} (asks for {})",
        request.sender, request.resource, request.role
    )];
    // Bounded: a ledger edited by hand could hold a circle of ids.
    for _ in 0..32 {
        let Some(k) = kick else { break };
        links.push(format!(
            "{} {} → {} ({}, generation {})",
            k.cause.host, k.cause.resource, k.host, k.role, k.generation
        ));
        kick = k
            .caused_by
            .as_deref()
            .and_then(|id| kicks.iter().find(|c| c.id == id));
    }
    links.reverse();
    links
}

/// Whether a refusal of this depth for this role was already recorded for
/// the same causing kick: a run that asks twice is said once.
pub fn already_refused(refusals: &[Refused], caused_by: Option<&str>, role: &str) -> bool {
    refusals.iter().any(|r| {
        matches!(r.why, Refusal::TooDeep { .. })
            && r.role == role
            && r.caused_by.as_deref() == caused_by
            && caused_by.is_some()
    })
}

/// The kick a run report from `host` belongs to. With a job id, the kick
/// of that id (the id is the sender's word: only a kick of `host` counts),
/// even one reported by time already; a run with another job id is none
/// of ours. Without one, by time: the newest kick of `host` that started
/// less than `timeout` ago and has no report, unless its run was given
/// its id (its own `puppetRunFinished` will name it), or `finished` says
/// the report came from a run given none.
///
/// A run that ended (`run_end`, whole seconds) in a second before the
/// kick started, or is the run that asked for this kick, is not its run.
pub fn kick_reported<'k>(
    settings: &Settings,
    kicks: &'k [Kick],
    host: &str,
    end: &RunEnd,
    now: Millis,
) -> Option<&'k Kick> {
    if let Some(job) = end.job_id.as_deref() {
        return kicks
            .iter()
            .find(|k| k.host == host && k.job_id.as_deref() == Some(job))
            .filter(|k| !k.report.is_some_and(|r| r.exact));
    }
    let timeout = millis(settings.timeout);
    kicks
        .iter()
        .filter(|k| k.host == host && k.report.is_none())
        .filter(|k| !(end.finished && k.job_id.is_some()))
        .filter(|k| end.run_end.is_none() || k.asking_run != end.run_end)
        .filter(|k| {
            k.started_at.is_some_and(|s| {
                s <= now
                    && now < s.saturating_add(timeout)
                    && end.run_end.is_none_or(|t| t >= s / 1000)
            })
        })
        .max_by_key(|k| k.started_at)
}

/// What became of a kick, as `kick --status` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Queued,
    /// Held back by the rules (why), to start when they allow.
    Deferred(Refusal),
    Running,
    /// The command failed; it runs again after `retry_delay`.
    Retrying,
    /// The host reported a run that did not fail; whether it changed
    /// something, when it said.
    Succeeded(Option<bool>),
    /// The host reported a failed run.
    Failed,
    /// The command ended; the host may still report.
    AwaitingReport,
    /// The host did not report within `timeout`.
    NoReport,
    TimedOut,
    NotStarted(String),
    Interrupted,
    NotNeeded(String),
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Queued => f.write_str("queued"),
            Outcome::Deferred(_) => f.write_str("deferred"),
            Outcome::Running => f.write_str("running"),
            Outcome::Retrying => f.write_str("retrying"),
            Outcome::Succeeded(None) => f.write_str("succeeded"),
            Outcome::Succeeded(Some(true)) => f.write_str("succeeded (changed)"),
            Outcome::Succeeded(Some(false)) => f.write_str("succeeded (no change)"),
            Outcome::Failed => f.write_str("failed"),
            Outcome::AwaitingReport => f.write_str("awaiting report"),
            Outcome::NoReport => f.write_str("no report"),
            Outcome::TimedOut => f.write_str("timed out"),
            Outcome::NotStarted(why) => write!(f, "not started: {why}"),
            Outcome::Interrupted => f.write_str("interrupted"),
            Outcome::NotNeeded(why) => write!(f, "not needed: {why}"),
        }
    }
}

pub fn outcome(settings: &Settings, kick: &Kick, now: Millis) -> Outcome {
    // A `run` callback is over when its command is: its exit code says.
    if let (true, Some(End::Exited(code))) = (kick.runs_callback(), &kick.end) {
        return if *code == 0 {
            Outcome::Succeeded(None)
        } else {
            Outcome::Failed
        };
    }
    if let Some(report) = kick.report {
        return if report.failed {
            Outcome::Failed
        } else {
            Outcome::Succeeded(report.changed)
        };
    }
    match &kick.end {
        None if kick.started_at.is_some() && kick.retrying => Outcome::Retrying,
        None if kick.started_at.is_some() => Outcome::Running,
        None => match &kick.deferred {
            Some(why) => Outcome::Deferred(why.clone()),
            None => Outcome::Queued,
        },
        Some(End::TimedOut) => Outcome::TimedOut,
        Some(End::NotStarted(why)) => Outcome::NotStarted(why.clone()),
        Some(End::Interrupted) => Outcome::Interrupted,
        Some(End::NotNeeded(why)) => Outcome::NotNeeded(why.clone()),
        Some(End::Exited(_) | End::Signalled(_)) => {
            let started = kick.started_at.unwrap_or(kick.queued_at);
            if now < started.saturating_add(millis(settings.timeout)) {
                Outcome::AwaitingReport
            } else {
                Outcome::NoReport
            }
        }
    }
}

/// A kick decided now, ready for the ledger.
pub fn new_kick(
    id: String,
    host: String,
    role: &str,
    cause: Cause,
    generation: u32,
    caused_by: Option<String>,
    now: Millis,
) -> Kick {
    Kick {
        id,
        host,
        role: role.to_string(),
        cause,
        generation,
        caused_by,
        queued_at: now,
        started_at: None,
        ended_at: None,
        end: None,
        report: None,
        supervisor: None,
        output: String::new(),
        job_id: None,
        deferred: None,
        coalesced: Vec::new(),
        coalesced_more: 0,
        after_run: false,
        attempts: 0,
        retrying: false,
        asking_run: None,
        not_before: None,
        on: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kick::record::Report;

    const S: Millis = 1000;

    fn settings() -> Settings {
        Settings::parse(
            "kick_command = [\"kick\", \"{host}\"]\nwindow = 10\nmax_depth = 2\ntimeout = 100\n\
             [[role]]\nname = \"a\"\nhosts = [\"a1\"]\n\
             [[role]]\nname = \"b\"\nhosts = [\"b1\"]\n\
             [[role]]\nname = \"c\"\nhosts = [\"c1\"]\n\
             [[role]]\nname = \"lb\"\nhosts = [\"lb1\", \"lb2\"]\nbudget_per_hour = 3\n",
        )
        .unwrap()
    }

    /// Judges with the role's configured hosts as targets.
    fn judge_of(s: &Settings, kicks: &[Kick], request: &Request) -> Vec<Decision> {
        let targets = s
            .role(request.role)
            .map(|r| r.hosts.clone())
            .unwrap_or_default();
        judge(s, kicks, request, &targets)
    }

    fn request<'a>(now: Millis, sender: &'a str, role: &'a str) -> Request<'a> {
        Request {
            now,
            sender,
            role,
            resource: "Notify[kick]",
        }
    }

    /// A kick of `host` asked by `sender`'s `Notify[kick]`, numbered after
    /// the ones in `kicks`.
    fn test_kick(
        kicks: &[Kick],
        host: &str,
        sender: &str,
        role: &str,
        generation: u32,
        caused_by: &Option<String>,
        now: Millis,
    ) -> Kick {
        let cause = Cause {
            host: sender.into(),
            resource: "Notify[kick]".into(),
        };
        let id = format!("k{}", kicks.len());
        new_kick(
            id,
            host.to_string(),
            role,
            cause,
            generation,
            caused_by.clone(),
            now,
        )
    }

    /// Applies the kick decisions as the handler would, queued at `now`.
    fn apply(
        kicks: &mut Vec<Kick>,
        decisions: &[Decision],
        sender: &str,
        role: &str,
        now: Millis,
    ) -> usize {
        let mut made = 0;
        for d in decisions {
            if let Decision::Kick {
                host,
                generation,
                caused_by,
            } = d
            {
                let mut kick = test_kick(kicks, host, sender, role, *generation, caused_by, now);
                kick.started_at = Some(now);
                kicks.push(kick);
                made += 1;
            }
        }
        made
    }

    /// Judges a request and applies its kicks; how many were made.
    fn step(s: &Settings, kicks: &mut Vec<Kick>, now: Millis, sender: &str, role: &str) -> usize {
        let d = judge_of(s, kicks, &request(now, sender, role));
        apply(kicks, &d, sender, role, now)
    }

    fn end(kicks: &mut [Kick], host: &str, now: Millis) {
        let running = |k: &Kick| k.host == host && k.active() && k.started_at.is_some();
        for k in kicks.iter_mut().filter(|k| running(k)) {
            k.ended_at = Some(now);
            k.end = Some(End::Exited(0));
        }
    }

    /// A cycle of roles whose kicked runs take `run` ms, the kick asked
    /// for `ask` ms into the run; counts the kicks over `span` ms.
    fn cycle(roles: &[(&str, &str)], run: Millis, ask: Millis, span: Millis) -> usize {
        let s = settings();
        let mut kicks = Vec::new();
        // A run nobody kicked on the first host asks for the next role.
        let mut made = step(&s, &mut kicks, 0, roles[0].1, roles[1 % roles.len()].0);
        let mut t = 0;
        // Each kicked run asks for the next role in the cycle.
        while t < span {
            t += ask;
            let running: Vec<(String, String)> = kicks
                .iter()
                .filter(|k| k.active())
                .map(|k| (k.host.clone(), k.id.clone()))
                .collect();
            for (host, _) in &running {
                let at = roles.iter().position(|(_, h)| h == host).unwrap();
                let next = roles[(at + 1) % roles.len()].0;
                made += step(&s, &mut kicks, t, host, next);
            }
            t += run - ask;
            for (host, _) in &running {
                end(&mut kicks, host, t);
            }
        }
        made
    }

    #[test]
    fn cycles_stop_at_the_depth_whatever_the_run_time() {
        // Window 10 s; runs of 6 s (> window/2, the old handler's
        // perpetual case), 30 s and 300 s (longer than the window).
        for run in [6 * S, 30 * S, 300 * S] {
            let two = cycle(&[("a", "a1"), ("b", "b1")], run, run / 2, 100 * run);
            assert!(two <= 2 * 2, "two roles, runs of {run} ms: {two} kicks");
            assert_eq!(two, 2, "the chain runs to the depth, then stops");
            let three = cycle(
                &[("a", "a1"), ("b", "b1"), ("c", "c1")],
                run,
                run / 2,
                100 * run,
            );
            assert!(
                three <= 3 * 2,
                "three roles, runs of {run} ms: {three} kicks"
            );
        }
    }

    /// Security review 2026-11-28 I-1: any configured host could ask for
    /// any role; a role's `requested_by` names the only hosts that may.
    #[test]
    fn only_the_hosts_a_role_names_may_ask_for_it() {
        let s = Settings::parse(
            "kick_command = [\"kick\", \"{host}\"]\n\
             [[role]]\nname = \"db\"\nhosts = [\"db1\"]\nrequested_by = [\"app1\", \"app2\"]\n",
        )
        .unwrap();
        let d = judge_of(&s, &[], &request(0, "web1", "db"));
        assert!(
            matches!(
                &d[..],
                [Decision::Refuse {
                    host: None,
                    why: Refusal::NotRequester,
                    ..
                }]
            ),
            "{d:?}"
        );
        let d = judge_of(&s, &[], &request(0, "app2", "db"));
        assert!(matches!(&d[..], [Decision::Kick { .. }]), "{d:?}");
        let e = Settings::parse(
            "kick_command = [\"kick\", \"{host}\"]\n[[role]]\nname = \"db\"\nhosts = [\"db1\"]\nrequested_by = [\"-oProxy\"]\n",
        )
        .unwrap_err();
        assert!(e.contains("requested_by"), "{e}");
    }

    #[test]
    fn generations_count_from_a_run_nobody_kicked() {
        let s = settings();
        let mut kicks = Vec::new();
        let d = judge_of(&s, &kicks, &request(0, "a1", "b"));
        assert_eq!(
            d,
            [Decision::Kick {
                host: "b1".into(),
                generation: 1,
                caused_by: None
            }]
        );
        apply(&mut kicks, &d, "a1", "b", 0);
        // b1 is in its kicked run: what it asks for is generation 2.
        let d = judge_of(&s, &kicks, &request(S, "b1", "c"));
        assert!(
            matches!(&d[0], Decision::Kick { generation: 2, caused_by: Some(id), .. } if id == "k0")
        );
        apply(&mut kicks, &d, "b1", "c", S);
        // c1 in a generation-2 run asks for a: too deep, with the chain.
        let d = judge_of(&s, &kicks, &request(2 * S, "c1", "a"));
        let Decision::Refuse {
            why: Refusal::TooDeep { chain },
            generation: 3,
            ..
        } = &d[0]
        else {
            panic!("{d:?}")
        };
        assert_eq!(chain.len(), 3, "{chain:?}");
        assert!(
            chain[0].contains("a1") && chain[2].contains("c1 Notify[kick] (asks for a)"),
            "{chain:?}"
        );
        // Once c1's run ended and the window passed, c1 is a fresh start.
        end(&mut kicks, "c1", 3 * S);
        let d = judge_of(&s, &kicks, &request(3 * S + 9 * S, "c1", "a"));
        assert!(matches!(
            d[0],
            Decision::Refuse {
                why: Refusal::TooDeep { .. },
                ..
            }
        ));
        let d = judge_of(&s, &kicks, &request(3 * S + 10 * S, "c1", "a"));
        assert!(
            matches!(d[0], Decision::Kick { generation: 1, .. }),
            "{d:?}"
        );
    }

    #[test]
    fn a_host_is_kicked_once_per_window_counted_from_the_end() {
        let s = settings();
        let mut kicks = Vec::new();
        step(&s, &mut kicks, 0, "a1", "b");
        let d = judge_of(&s, &kicks, &request(50 * S, "c1", "b"));
        assert!(
            matches!(&d[0], Decision::Defer { why: Refusal::Busy { kick }, .. } if kick == "k0")
        );
        end(&mut kicks, "b1", 60 * S);
        let d = judge_of(&s, &kicks, &request(69 * S, "c1", "b"));
        assert!(
            matches!(d[0], Decision::Defer { why: Refusal::Window { ended_at }, .. } if ended_at == 60 * S)
        );
        let d = judge_of(&s, &kicks, &request(70 * S, "c1", "b"));
        assert!(matches!(d[0], Decision::Kick { .. }));
    }

    #[test]
    fn a_role_has_a_budget_per_hour() {
        let s = settings();
        let mut kicks = Vec::new();
        let mut t = 0;
        let mut made = 0;
        for _ in 0..10 {
            made += step(&s, &mut kicks, t, "a1", "lb");
            t += 5 * S;
            end(&mut kicks, "lb1", t);
            end(&mut kicks, "lb2", t);
            t += 20 * S;
        }
        assert_eq!(made, 3, "budget_per_hour = 3");
        let d = judge_of(&s, &kicks, &request(HOUR + S, "a1", "lb"));
        assert!(
            d.iter().any(|d| matches!(d, Decision::Kick { .. })),
            "an hour later: {d:?}"
        );
    }

    #[test]
    fn unknown_roles_and_reports() {
        let s = settings();
        let mut kicks = Vec::new();
        assert!(matches!(
            judge_of(&s, &kicks, &request(0, "a1", "nobody"))[..],
            [Decision::Refuse {
                why: Refusal::UnknownRole,
                host: None,
                ..
            }]
        ));
        step(&s, &mut kicks, 0, "a1", "b");
        assert_eq!(outcome(&s, &kicks[0], S), Outcome::Running);
        let by_time = |kicks: &[Kick], host, now| {
            kick_reported(&s, kicks, host, &RunEnd::default(), now).map(|k| k.id.clone())
        };
        assert_eq!(by_time(&kicks, "b1", S).as_deref(), Some("k0"));
        assert!(by_time(&kicks, "a1", S).is_none());
        end(&mut kicks, "b1", 2 * S);
        assert_eq!(outcome(&s, &kicks[0], 3 * S), Outcome::AwaitingReport);
        assert_eq!(outcome(&s, &kicks[0], 100 * S), Outcome::NoReport);
        kicks[0].report = Some(Report {
            failed: true,
            at: 3 * S,
            changed: None,
            exact: false,
        });
        assert_eq!(outcome(&s, &kicks[0], 100 * S), Outcome::Failed);
        assert!(by_time(&kicks, "b1", 4 * S).is_none(), "reported once");
    }

    #[test]
    fn a_kicked_run_is_matched_by_its_job_id_where_it_has_one() {
        let s = settings();
        let mut kicks = Vec::new();
        step(&s, &mut kicks, 0, "a1", "b");
        kicks[0].job_id = Some("k0".into());
        let reported = |kicks: &[Kick], host, job: Option<&str>, finished| {
            let end = RunEnd {
                job_id: job.map(String::from),
                finished,
                ..RunEnd::default()
            };
            kick_reported(&s, kicks, host, &end, S).map(|k| k.id.clone())
        };
        // The end of a run given no job id (a scheduled run during the
        // kick) is not the kicked run's.
        assert_eq!(reported(&kicks, "b1", None, true), None);
        // puppetRunChanged carries no job id: by time, for now.
        assert_eq!(reported(&kicks, "b1", None, false).as_deref(), Some("k0"));
        // The id is the sender's word: another host cannot report it.
        assert_eq!(reported(&kicks, "a1", Some("k0"), true), None);
        assert_eq!(reported(&kicks, "b1", Some("other"), true), None);
        assert_eq!(
            reported(&kicks, "b1", Some("k0"), true).as_deref(),
            Some("k0")
        );
        // A report matched by time is replaced by the exact one, once.
        kicks[0].report = Some(Report {
            failed: false,
            at: S,
            changed: Some(true),
            exact: false,
        });
        assert!(reported(&kicks, "b1", Some("k0"), true).is_some());
        kicks[0].report = Some(Report {
            failed: false,
            at: S,
            changed: Some(false),
            exact: true,
        });
        assert_eq!(reported(&kicks, "b1", Some("k0"), true), None);
        assert_eq!(
            outcome(&s, &kicks[0], 2 * S).to_string(),
            "succeeded (no change)"
        );
        // By time: not a run that ended before the kick started, nor the
        // run that asked for it.
        kicks[0].report = None;
        kicks[0].started_at = Some(100 * S + 500);
        let ended = |t: u64| RunEnd {
            run_end: Some(t),
            ..RunEnd::default()
        };
        assert!(kick_reported(&s, &kicks, "b1", &ended(99), 101 * S).is_none());
        assert!(kick_reported(&s, &kicks, "b1", &ended(100), 101 * S).is_some());
        kicks[0].asking_run = Some(100);
        assert!(kick_reported(&s, &kicks, "b1", &ended(100), 101 * S).is_none());
        assert!(kick_reported(&s, &kicks, "b1", &ended(101), 101 * S).is_some());
    }

    /// Records a deferred kick as the handler does (not started).
    fn defer(kicks: &mut Vec<Kick>, decisions: &[Decision], sender: &str, role: &str, now: Millis) {
        for d in decisions {
            if let Decision::Defer {
                host,
                generation,
                caused_by,
                why,
            } = d
            {
                let mut kick = test_kick(kicks, host, sender, role, *generation, caused_by, now);
                kick.after_run = *why == Refusal::OwnRun;
                kick.deferred = Some(why.clone());
                kicks.push(kick);
            }
        }
    }

    #[test]
    fn a_held_back_kick_waits_and_later_requests_join_it() {
        let s = settings();
        let mut kicks = Vec::new();
        step(&s, &mut kicks, 0, "a1", "b");
        // While b1 is kicked, c1 asks for b: deferred, generation 1.
        let d = judge_of(&s, &kicks, &request(5 * S, "c1", "b"));
        defer(&mut kicks, &d, "c1", "b", 5 * S);
        let pending = kicks[1].clone();
        assert_eq!((pending.generation, pending.pending()), (1, true));
        // a1 asks again: it joins the pending kick, one per host.
        let d = judge_of(&s, &kicks, &request(6 * S, "a1", "b"));
        assert!(
            matches!(&d[..], [Decision::Coalesce { into, .. }] if into == "k1"),
            "{d:?}"
        );
        // It may not start while b1's kick runs, nor within the window
        // of its end; then it may.
        let held = |kicks: &[Kick], now| may_start(&s, kicks, &kicks[1], now);
        assert!(matches!(held(&kicks, 7 * S), Some(Refusal::Busy { .. })));
        end(&mut kicks, "b1", 20 * S);
        let why = held(&kicks, 25 * S).unwrap();
        assert_eq!(why, Refusal::Window { ended_at: 20 * S });
        assert_eq!(retry_at(&s, &kicks, "b", &why, 25 * S), Some(30 * S));
        assert_eq!(held(&kicks, 30 * S), None);
        assert!(matches!(
            outcome(&s, &kicks[1], 25 * S),
            Outcome::Deferred(Refusal::Busy { .. })
        ));
    }

    #[test]
    fn a_spent_budget_defers_until_its_hour_is_over() {
        let s = settings();
        let mut kicks = Vec::new();
        let mut t = 0;
        for _ in 0..2 {
            step(&s, &mut kicks, t, "a1", "lb");
            t += 5 * S;
            end(&mut kicks, "lb1", t);
            end(&mut kicks, "lb2", t);
            t += 20 * S;
        }
        // Four kicks of lb this hour, budget 3: both hosts wait.
        let d = judge_of(&s, &kicks, &request(t, "a1", "lb"));
        assert!(
            d.iter().all(|d| matches!(
                d,
                Decision::Defer {
                    why: Refusal::Budget { .. },
                    ..
                }
            )),
            "{d:?}"
        );
        defer(&mut kicks, &d, "a1", "lb", t);
        let last = kicks.len() - 1;
        let why = may_start(&s, &kicks, &kicks[last], t).unwrap();
        assert_eq!(retry_at(&s, &kicks, "lb", &why, t), Some(HOUR));
        // Spent by kicks being made now (none started yet): an hour on.
        assert_eq!(retry_at(&s, &[], "lb", &why, t), Some(t + HOUR));
        assert_eq!(may_start(&s, &kicks, &kicks[last], HOUR + 25 * S + S), None);
    }

    #[test]
    fn again_runs_until_a_run_changes_nothing_else_or_too_deep() {
        let s = settings();
        let mut kicks = Vec::new();
        // a1's own run asks for again: it waits for that run to end.
        let d = judge_of(&s, &kicks, &request(0, "a1", AGAIN));
        assert!(
            matches!(&d[..], [Decision::Defer { host, why: Refusal::OwnRun, generation: 1, .. }] if host == "a1"),
            "{d:?}"
        );
        defer(&mut kicks, &d, "a1", AGAIN, 0);
        assert_eq!(may_start(&s, &kicks, &kicks[0], S), Some(Refusal::OwnRun));
        // The run changed three resources: run again.
        assert_eq!(
            after_run(&s, &kicks, &kicks[0], Some(3), false),
            AfterRun::Start
        );
        // It changed only the notify that asked: converged.
        assert_eq!(
            after_run(&s, &kicks, &kicks[0], Some(1), false),
            AfterRun::NotNeeded
        );
        // A failed run is run again, within the depth.
        assert_eq!(
            after_run(&s, &kicks, &kicks[0], Some(1), true),
            AfterRun::Start
        );
        // Its kicked run (generation 1) asks again: generation 2, then 3,
        // which is deeper than max_depth 2 unless that run converged.
        kicks[0].after_run = false;
        kicks[0].started_at = Some(2 * S);
        let d = judge_of(&s, &kicks, &request(3 * S, "a1", AGAIN));
        defer(&mut kicks, &d, "a1", AGAIN, 3 * S);
        assert_eq!(kicks[1].generation, 2);
        end(&mut kicks, "a1", 4 * S);
        kicks[1].after_run = false;
        kicks[1].started_at = Some(5 * S);
        let d = judge_of(&s, &kicks, &request(6 * S, "a1", AGAIN));
        defer(&mut kicks, &d, "a1", AGAIN, 6 * S);
        assert_eq!(kicks[2].generation, 3);
        assert_eq!(
            after_run(&s, &kicks, &kicks[2], Some(1), false),
            AfterRun::NotNeeded
        );
        let AfterRun::TooDeep { chain } = after_run(&s, &kicks, &kicks[2], Some(2), false) else {
            panic!()
        };
        assert_eq!(chain.len(), 3, "{chain:?}");
        // Again kicks the host that asks, and waits for no window.
        assert_eq!(kicks[2].host, "a1");
    }
}
