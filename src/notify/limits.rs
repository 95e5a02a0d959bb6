//! Counting what the notifier sends and drops, so that a flood is bounded
//! and said in the log once, with a count, rather than one line a drop
//! (review M3, L5: 2,203 WARN lines for one forged burst).
//!
//! - [`Ceiling`]: at most so many in any [`RATE_WINDOW`]; the rest are
//!   dropped and counted. The notifier keeps one per (notification,
//!   source) for `max_per_minute`, and one for all the resource
//!   notifications of the events log.
//! - [`Drops`]: notifications the AgentX session did not take (its queue
//!   full, or no session).
//!
//! Each says what to log as it goes ([`Admit`], [`Drops::dropped`],
//! [`Drops::taken`]): the first drop of an episode, then the count once
//! the episode is over (one passes again, or [`Ceiling::settle`] finds
//! the window has room).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The window of every [`Ceiling`].
pub const RATE_WINDOW: Duration = Duration::from_secs(60);

/// What [`Ceiling::admit`] decided, and what to log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Send it; `dropped` were dropped since the last one passed (log the
    /// count when not 0).
    Pass { dropped: u64 },
    /// Drop it, the first of an episode (log that the ceiling is reached).
    FirstDrop,
    /// Drop it, counted (log nothing).
    Drop,
}

/// At most `max` passes in any [`RATE_WINDOW`].
#[derive(Debug, Default)]
pub struct Ceiling {
    sent: VecDeque<Instant>,
    dropped: u64,
}

impl Ceiling {
    /// One more at `now`, under a ceiling of `max`.
    pub fn admit(&mut self, max: usize, now: Instant) -> Admit {
        self.expire(now);
        if self.sent.len() >= max {
            self.dropped += 1;
            return if self.dropped == 1 {
                Admit::FirstDrop
            } else {
                Admit::Drop
            };
        }
        self.sent.push_back(now);
        Admit::Pass {
            dropped: std::mem::take(&mut self.dropped),
        }
    }

    /// The count of an episode that is over (the window has room again at
    /// `now`) and not said yet: for a tick, so that a flood that simply
    /// stopped is counted in the log too.
    pub fn settle(&mut self, max: usize, now: Instant) -> Option<u64> {
        self.expire(now);
        (self.dropped > 0 && self.sent.len() < max).then(|| std::mem::take(&mut self.dropped))
    }

    fn expire(&mut self, now: Instant) {
        while self
            .sent
            .front()
            .is_some_and(|t| now.duration_since(*t) >= RATE_WINDOW)
        {
            self.sent.pop_front();
        }
    }
}

/// Notifications the AgentX session did not take.
#[derive(Debug, Default)]
pub struct Drops {
    count: u64,
}

impl Drops {
    /// One dropped: true when it is the first since the session last took
    /// one (log it then, and only then).
    pub fn dropped(&mut self) -> bool {
        self.count += 1;
        self.count == 1
    }

    /// The session took one: how many were dropped before it (log the
    /// count when not 0).
    pub fn taken(&mut self) -> u64 {
        std::mem::take(&mut self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ceiling_passes_max_a_window_and_counts_the_rest_once() {
        let start = Instant::now();
        let at = |s: u64| start + Duration::from_secs(s);
        let mut c = Ceiling::default();
        assert_eq!(c.admit(3, at(0)), Admit::Pass { dropped: 0 });
        assert_eq!(c.admit(3, at(1)), Admit::Pass { dropped: 0 });
        assert_eq!(c.admit(3, at(2)), Admit::Pass { dropped: 0 });
        assert_eq!(c.admit(3, at(2)), Admit::FirstDrop);
        for _ in 0..1000 {
            assert_eq!(c.admit(3, at(30)), Admit::Drop);
        }
        // Still full at 59 s; nothing to settle yet.
        assert_eq!(c.settle(3, at(59)), None);
        // The first one is a minute old: one passes, with the count.
        assert_eq!(c.admit(3, at(60)), Admit::Pass { dropped: 1001 });
        assert_eq!(c.admit(3, at(60)), Admit::FirstDrop);
        // A flood that stopped: the tick says the count once.
        assert_eq!(c.settle(3, at(61)), Some(1));
        assert_eq!(c.settle(3, at(200)), None);
        assert_eq!(c.admit(3, at(200)), Admit::Pass { dropped: 0 });
    }

    #[test]
    fn drops_are_said_first_and_counted_when_taken_again() {
        let mut d = Drops::default();
        assert_eq!(d.taken(), 0);
        assert!(d.dropped());
        assert!(!d.dropped());
        assert!(!d.dropped());
        assert_eq!(d.taken(), 3);
        assert_eq!(d.taken(), 0);
        assert!(d.dropped());
    }
}
