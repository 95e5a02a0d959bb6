//! Successive runs (issue 13): what one run's files cannot tell. How many
//! runs were seen, how many in a row changed resources, how many ended in
//! the last hour, how long between the last two, and which resources
//! changed in every one of the last K changing runs (the likely loop: an
//! `Exec` that re-triggers Puppet, two nodes that kick each other).
//!
//! [`RunHistory`] is fed every state the watcher publishes and counts a run
//! once, when its end time (`time.last_run` of the summary) is new and its
//! report is in (or waited for long enough). It keeps only what K runs
//! need: the changed resources of at most K runs (each at most
//! [`MAX_LISTED_RESOURCES`] names, the report's listed ones, each cut to
//! [`MAX_LOOP_TEXT`] bytes: at most 1.3 MB at the largest K), and the end
//! times of the last hour (at most [`MAX_RUN_TIMES`]).
//!
//! Whether that is a loop or a storm is the notifier's call
//! ([`crate::notify`]); this module only counts.

use super::report::MAX_LISTED_RESOURCES;
use super::state::PuppetState;
use super::trend::{RunTrend, MAX_LOOP_TEXT};
use super::yaml::truncate;
use crate::config::MAX_CONVERGE_RUNS;
use crate::metrics::PuppetResourceState;
use std::collections::VecDeque;

/// End times kept for `runs in the last hour`: one a second at most.
pub const MAX_RUN_TIMES: usize = 3600;

const HOUR: i64 = 3600;

/// The runs seen, as far as the trend needs them.
#[derive(Debug, Clone)]
pub struct RunHistory {
    converge_runs: usize,
    last_run: Option<i64>,
    observed: u64,
    changing_runs: u32,
    interval: Option<u64>,
    /// End times, oldest first, within an hour of the newest.
    ends: VecDeque<i64>,
    /// The changed resources of the last runs of the current changing
    /// streak, oldest first, at most `converge_runs`; `None` for a run whose
    /// report was not there.
    changed: VecDeque<Option<Vec<String>>>,
}

impl RunHistory {
    /// `converge_runs` is K, capped at [`MAX_CONVERGE_RUNS`].
    pub fn new(converge_runs: usize) -> RunHistory {
        RunHistory {
            converge_runs: converge_runs.min(MAX_CONVERGE_RUNS),
            last_run: None,
            observed: 0,
            changing_runs: 0,
            interval: None,
            ends: VecDeque::new(),
            changed: VecDeque::new(),
        }
    }

    /// Counts the run `state` describes, if it is one not counted yet.
    /// Call it only once the run's report is in (or will not come): the
    /// changed resources are read from the report of the same run. Returns
    /// whether the run was new.
    pub fn observe(&mut self, state: &PuppetState) -> bool {
        let (Some(end), Some(summary)) = (state.last_run(), state.summary.as_ref()) else {
            return false;
        };
        if self.last_run == Some(end) {
            return false;
        }
        if let Some(previous) = self.last_run {
            self.interval = Some(u64::try_from(end.saturating_sub(previous)).unwrap_or(0));
        }
        self.last_run = Some(end);
        self.observed = self.observed.saturating_add(1);
        self.ends.push_back(end);
        while self
            .ends
            .front()
            .is_some_and(|t| end.saturating_sub(*t) >= HOUR)
            || self.ends.len() > MAX_RUN_TIMES
        {
            self.ends.pop_front();
        }
        if summary.resources.changed > 0 {
            self.changing_runs = self.changing_runs.saturating_add(1);
            let names = state.matching_report().map(|r| {
                r.resources
                    .listed
                    .iter()
                    .filter(|e| e.state == PuppetResourceState::Changed)
                    .take(MAX_LISTED_RESOURCES)
                    .map(|e| {
                        // No use keeping more than can be shown.
                        let mut name = e.resource.clone();
                        truncate(&mut name, MAX_LOOP_TEXT);
                        name
                    })
                    .collect()
            });
            self.changed.push_back(names);
            while self.changed.len() > self.converge_runs {
                self.changed.pop_front();
            }
        } else {
            self.changing_runs = 0;
            self.changed.clear();
        }
        true
    }

    /// The trend at `now` (UNIX seconds).
    pub fn trend(&self, now: i64) -> RunTrend {
        let mut trend = RunTrend {
            converge_runs: u32::try_from(self.converge_runs).unwrap_or(u32::MAX),
            observed: self.observed,
            changing_runs: self.changing_runs,
            last_hour: self
                .ends
                .iter()
                .filter(|t| now.saturating_sub(**t) < HOUR)
                .count() as u32,
            interval: self.interval,
            loop_resources: Vec::new(),
        };
        if trend.not_converging() {
            trend.loop_resources = self.loop_resources();
        }
        trend
    }

    /// The resources that changed in each of the kept runs whose report
    /// was read, in the order of the newest of them.
    fn loop_resources(&self) -> Vec<String> {
        let known: Vec<&Vec<String>> = self.changed.iter().flatten().collect();
        let Some((newest, older)) = known.split_last() else {
            return Vec::new();
        };
        newest
            .iter()
            .filter(|name| older.iter().all(|run| run.contains(name)))
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::puppet::report::parse_report;
    use crate::puppet::summary::parse_summary;
    use std::path::Path;

    /// A real run's files, from `tests/fixtures/puppet/<case>`, ended at
    /// `end` (the summary's `last_run`; the report's own time is shifted
    /// the same, so the two stay paired).
    fn run(case: &str, end: i64) -> PuppetState {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/puppet")
            .join(case);
        let summary =
            parse_summary(&std::fs::read(dir.join("last_run_summary.yaml")).unwrap()).unwrap();
        let report =
            parse_report(&std::fs::read(dir.join("last_run_report.yaml")).unwrap()).unwrap();
        let mut state = PuppetState {
            summary: Some(summary),
            report: Some(report),
            ..PuppetState::default()
        };
        let shift = end - state.last_run().unwrap();
        state.summary.as_mut().unwrap().time.last_run = Some(end);
        if let Some(t) = state.report.as_mut().unwrap().time.as_mut() {
            t.unix_seconds += shift;
        }
        assert!(state.matching_report().is_some(), "{case} stays paired");
        state
    }

    #[test]
    fn changing_runs_in_a_row_name_what_changed_every_time() {
        let t = 1_795_336_000;
        let mut h = RunHistory::new(3);
        assert_eq!(
            h.trend(t),
            RunTrend {
                converge_runs: 3,
                ..RunTrend::default()
            }
        );
        assert!(h.observe(&run("b_changed", t)));
        assert!(!h.observe(&run("b_changed", t)), "the same run again");
        assert!(h.observe(&run("b_changed", t + 40)));
        let trend = h.trend(t + 41);
        assert_eq!(trend.changing_runs, 2);
        assert!(!trend.not_converging());
        assert!(trend.loop_resources.is_empty(), "only from K runs on");
        assert_eq!(trend.interval, Some(40));
        assert!(h.observe(&run("b_changed", t + 100)));
        let trend = h.trend(t + 100);
        assert!(trend.not_converging());
        assert_eq!(trend.observed, 3);
        assert_eq!(trend.last_hour, 3);
        // b_changed changed these two files (see its report).
        let changed: Vec<String> = run("b_changed", t)
            .matching_report()
            .unwrap()
            .resources
            .listed
            .iter()
            .filter(|e| e.state == PuppetResourceState::Changed)
            .map(|e| e.resource.clone())
            .collect();
        assert!(!changed.is_empty());
        assert_eq!(trend.loop_resources, changed);
        // A run that changes nothing ends it.
        assert!(h.observe(&run("a_converged", t + 200)));
        let trend = h.trend(t + 200);
        assert_eq!(trend.changing_runs, 0);
        assert!(trend.loop_resources.is_empty());
        // An hour later, the early runs no longer count.
        assert_eq!(h.trend(t + 3600 + 50).last_hour, 2);
        assert_eq!(h.trend(t + 3600 + 201).last_hour, 0);
        assert_eq!(h.trend(t + 3600 + 201).observed, 4);
    }

    #[test]
    fn only_resources_that_changed_every_time_are_the_loop() {
        let t = 1_795_336_000;
        let mut h = RunHistory::new(2);
        // A run that changed other resources than the next one: nothing
        // changed in both.
        let mut other = run("b_changed", t);
        for e in &mut other.report.as_mut().unwrap().resources.listed {
            e.resource = format!("{}-other", e.resource);
        }
        h.observe(&other);
        h.observe(&run("b_changed", t + 10));
        let trend = h.trend(t + 10);
        assert!(trend.not_converging());
        assert!(trend.loop_resources.is_empty(), "{trend:?}");
        h.observe(&run("b_changed", t + 20));
        assert!(!h.trend(t + 20).loop_resources.is_empty());
        // A run whose report is missing does not empty the list.
        let mut no_report = run("b_changed", t + 30);
        no_report.report = None;
        h.observe(&no_report);
        assert!(!h.trend(t + 30).loop_resources.is_empty());
        assert_eq!(h.trend(t + 30).changing_runs, 4);
    }

    #[test]
    fn memory_stays_bounded() {
        let mut h = RunHistory::new(1000);
        assert_eq!(h.converge_runs, MAX_CONVERGE_RUNS);
        let mut base = run("b_changed", 0);
        // Titles as long as the report parser keeps (1 KiB).
        for e in &mut base.report.as_mut().unwrap().resources.listed {
            e.resource = format!("File[/{}]", "d/".repeat(510));
        }
        for i in 0..10_000 {
            let mut s = base.clone();
            s.summary.as_mut().unwrap().time.last_run = Some(i);
            s.report
                .as_mut()
                .unwrap()
                .time
                .as_mut()
                .unwrap()
                .unix_seconds += i;
            h.observe(&s);
        }
        assert!(h.changed.len() <= MAX_CONVERGE_RUNS);
        assert!(
            h.changed.iter().all(Option::is_some),
            "the reports were paired"
        );
        let kept = h.changed.iter().flatten().flatten();
        assert!(kept.clone().all(|n| n.len() <= MAX_LOOP_TEXT));
        let bytes: usize = kept.map(String::len).sum();
        println!("names kept after 10,000 looping runs at K = {MAX_CONVERGE_RUNS}: {bytes} bytes");
        assert!(h.ends.len() <= MAX_RUN_TIMES);
        assert_eq!(h.trend(9_999).last_hour, MAX_RUN_TIMES as u32);
        assert_eq!(h.trend(9_999).observed, 10_000);
    }
}
