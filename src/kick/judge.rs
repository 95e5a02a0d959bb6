//! Whether a kick is due: pure code over the settings, the ledger's
//! records and the time, so every rule is tested with plain values.
//!
//! Loops stop by generation, whatever a run takes: a notification from a
//! host that is in a kicked run, or whose kicked run ended less than
//! `window` ago, was caused by that kick, so the kicks it asks for are one
//! generation deeper; deeper than `max_depth` is refused. Then, per host:
//! not while it is being kicked, not within `window` of the end of its
//! last kicked run; per role: at most `budget_per_hour` kicks an hour. A
//! cycle of any length and run time thus ends after at most
//! hosts × `max_depth` kicks.

use super::record::{Cause, End, Kick, Millis, Refusal, Refused};
use super::settings::Settings;

const HOUR: Millis = 3_600_000;

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
    Kick {
        host: String,
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

fn millis(d: std::time::Duration) -> Millis {
    Millis::try_from(d.as_millis()).unwrap_or(Millis::MAX)
}

/// The kick that caused `host`'s current or just-ended run, if any: the
/// newest kick of `host` that is active, or ended less than `window` ago.
pub fn causing_kick<'k>(
    settings: &Settings,
    kicks: &'k [Kick],
    host: &str,
    now: Millis,
) -> Option<&'k Kick> {
    let window = millis(settings.window);
    kicks
        .iter()
        .filter(|k| k.host == host)
        .filter(|k| match k.ended_at {
            None => k.active(),
            Some(ended) => now < ended.saturating_add(window),
        })
        .max_by_key(|k| k.queued_at)
}

/// What to do with a request: one decision per host of the role (or one
/// refusal of the whole request).
pub fn judge(settings: &Settings, kicks: &[Kick], request: &Request) -> Vec<Decision> {
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
    if generation > settings.max_depth {
        return refuse_all(Refusal::TooDeep {
            chain: chain(kicks, cause, request),
        });
    }
    let window = millis(settings.window);
    let mut used = kicks
        .iter()
        .filter(|k| k.role == role.name && request.now.saturating_sub(k.queued_at) < HOUR)
        .count() as u32;
    let mut decisions = Vec::new();
    for host in &role.hosts {
        let of_host = || kicks.iter().filter(|k| &k.host == host);
        let why = if let Some(busy) = of_host().find(|k| k.active()) {
            Some(Refusal::Busy {
                kick: busy.id.clone(),
            })
        } else if let Some(ended_at) = of_host()
            .filter_map(|k| k.ended_at)
            .filter(|&ended| request.now < ended.saturating_add(window))
            .max()
        {
            Some(Refusal::Window { ended_at })
        } else if used >= role.budget_per_hour {
            Some(Refusal::Budget { used })
        } else {
            None
        };
        decisions.push(match why {
            Some(why) => Decision::Refuse {
                host: Some(host.clone()),
                generation,
                caused_by: caused_by.clone(),
                why,
            },
            None => {
                used += 1;
                Decision::Kick {
                    host: host.clone(),
                    generation,
                    caused_by: caused_by.clone(),
                }
            }
        });
    }
    decisions
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

/// The kick a run report from `host` belongs to: its newest kick that
/// started, has no report yet, and started less than `timeout` ago.
pub fn kick_reported<'k>(
    settings: &Settings,
    kicks: &'k [Kick],
    host: &str,
    now: Millis,
) -> Option<&'k Kick> {
    let timeout = millis(settings.timeout);
    kicks
        .iter()
        .filter(|k| k.host == host && k.report.is_none())
        .filter(|k| {
            k.started_at
                .is_some_and(|s| s <= now && now < s.saturating_add(timeout))
        })
        .max_by_key(|k| k.started_at)
}

/// What became of a kick, as `kick --status` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Queued,
    Running,
    /// The host reported a run that did not fail.
    Succeeded,
    /// The host reported a failed run.
    Failed,
    /// The command ended; the host may still report.
    AwaitingReport,
    /// The host did not report within `timeout`.
    NoReport,
    TimedOut,
    NotStarted(String),
    Interrupted,
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Queued => f.write_str("queued"),
            Outcome::Running => f.write_str("running"),
            Outcome::Succeeded => f.write_str("succeeded"),
            Outcome::Failed => f.write_str("failed"),
            Outcome::AwaitingReport => f.write_str("awaiting report"),
            Outcome::NoReport => f.write_str("no report"),
            Outcome::TimedOut => f.write_str("timed out"),
            Outcome::NotStarted(why) => write!(f, "not started: {why}"),
            Outcome::Interrupted => f.write_str("interrupted"),
        }
    }
}

pub fn outcome(settings: &Settings, kick: &Kick, now: Millis) -> Outcome {
    if let Some(report) = kick.report {
        return if report.failed {
            Outcome::Failed
        } else {
            Outcome::Succeeded
        };
    }
    match &kick.end {
        None if kick.started_at.is_some() => Outcome::Running,
        None => Outcome::Queued,
        Some(End::TimedOut) => Outcome::TimedOut,
        Some(End::NotStarted(why)) => Outcome::NotStarted(why.clone()),
        Some(End::Interrupted) => Outcome::Interrupted,
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

    fn request<'a>(now: Millis, sender: &'a str, role: &'a str) -> Request<'a> {
        Request {
            now,
            sender,
            role,
            resource: "Notify[kick]",
        }
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
                let id = format!("k{}", kicks.len());
                let cause = Cause {
                    host: sender.into(),
                    resource: "Notify[kick]".into(),
                };
                let mut kick = new_kick(
                    id,
                    host.clone(),
                    role,
                    cause,
                    *generation,
                    caused_by.clone(),
                    now,
                );
                kick.started_at = Some(now);
                kicks.push(kick);
                made += 1;
            }
        }
        made
    }

    /// Judges a request and applies its kicks; how many were made.
    fn step(s: &Settings, kicks: &mut Vec<Kick>, now: Millis, sender: &str, role: &str) -> usize {
        let d = judge(s, kicks, &request(now, sender, role));
        apply(kicks, &d, sender, role, now)
    }

    fn end(kicks: &mut [Kick], host: &str, now: Millis) {
        for k in kicks.iter_mut().filter(|k| k.host == host && k.active()) {
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

    #[test]
    fn generations_count_from_a_run_nobody_kicked() {
        let s = settings();
        let mut kicks = Vec::new();
        let d = judge(&s, &kicks, &request(0, "a1", "b"));
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
        let d = judge(&s, &kicks, &request(S, "b1", "c"));
        assert!(
            matches!(&d[0], Decision::Kick { generation: 2, caused_by: Some(id), .. } if id == "k0")
        );
        apply(&mut kicks, &d, "b1", "c", S);
        // c1 in a generation-2 run asks for a: too deep, with the chain.
        let d = judge(&s, &kicks, &request(2 * S, "c1", "a"));
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
        let d = judge(&s, &kicks, &request(3 * S + 9 * S, "c1", "a"));
        assert!(matches!(
            d[0],
            Decision::Refuse {
                why: Refusal::TooDeep { .. },
                ..
            }
        ));
        let d = judge(&s, &kicks, &request(3 * S + 10 * S, "c1", "a"));
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
        let d = judge(&s, &kicks, &request(50 * S, "c1", "b"));
        assert!(
            matches!(&d[0], Decision::Refuse { why: Refusal::Busy { kick }, .. } if kick == "k0")
        );
        end(&mut kicks, "b1", 60 * S);
        let d = judge(&s, &kicks, &request(69 * S, "c1", "b"));
        assert!(
            matches!(d[0], Decision::Refuse { why: Refusal::Window { ended_at }, .. } if ended_at == 60 * S)
        );
        let d = judge(&s, &kicks, &request(70 * S, "c1", "b"));
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
        let d = judge(&s, &kicks, &request(HOUR + S, "a1", "lb"));
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
            judge(&s, &kicks, &request(0, "a1", "nobody"))[..],
            [Decision::Refuse {
                why: Refusal::UnknownRole,
                host: None,
                ..
            }]
        ));
        step(&s, &mut kicks, 0, "a1", "b");
        assert_eq!(outcome(&s, &kicks[0], S), Outcome::Running);
        assert_eq!(kick_reported(&s, &kicks, "b1", S).unwrap().id, "k0");
        assert!(kick_reported(&s, &kicks, "a1", S).is_none());
        end(&mut kicks, "b1", 2 * S);
        assert_eq!(outcome(&s, &kicks[0], 3 * S), Outcome::AwaitingReport);
        assert_eq!(outcome(&s, &kicks[0], 100 * S), Outcome::NoReport);
        kicks[0].report = Some(Report {
            failed: true,
            at: 3 * S,
        });
        assert_eq!(outcome(&s, &kicks[0], 100 * S), Outcome::Failed);
        assert!(
            kick_reported(&s, &kicks, "b1", 4 * S).is_none(),
            "reported once"
        );
    }
}
