//! `last_run_summary.yaml`: the small per-run summary Puppet writes at the
//! end of every run that got as far as building a report (Debian 12:
//! `/var/cache/puppet/public/last_run_summary.yaml`, mode 0640).
//!
//! It is plain YAML (no tags), a few hundred bytes, one line per resource
//! type in `time`. It has no run status and no noop or cached-catalog flags:
//! those are only in the report (see [`super::report`]). A missing count
//! reads as 0, a missing time as absent, except `time.last_run` and the
//! `events` section: Puppet writes both in every summary (`events` last),
//! so a summary without them was cut short and is refused rather than
//! taken as a run without a time or events.
//!
//! ```yaml
//! ---
//! version: {config: 1795336206, puppet: 7.23.0}    # config: int | string | null
//! application: {run_mode: user, initial_environment: production, converged_environment: production}
//! resources: {changed: 3, corrective_change: 0, failed: 0, failed_to_restart: 0,
//!             out_of_sync: 3, restarted: 0, scheduled: 0, skipped: 0, total: 11}
//! time: {catalog_application: 0.0438, config_retrieval: 0.155, exec: 0.0104, ...,
//!        total: 0.0458, last_run: 1795336206}
//! changes: {total: 4}
//! events: {failure: 0, success: 4, total: 4}        # noop, audit only when > 0
//! ```

use super::yaml::{self, ConfigVersion, Number, ParseError, Text};
use crate::metrics::PuppetRunMode;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;

/// Largest summary file accepted, in bytes. Real ones are 0.4–0.8 KB and
/// grow by one line per resource type only.
pub const MAX_SUMMARY_BYTES: usize = 1 << 20;

/// Most `time.*` entries kept (one per resource type plus a dozen phases).
pub const MAX_TIME_ENTRIES: usize = 1000;

/// One run's summary, as Puppet wrote it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunSummary {
    /// `version.config`: the applied catalog's version; `None` when no
    /// catalog was applied (agent run that got no catalog), or when the key
    /// is missing. With a cached catalog it is the *old* catalog's version.
    pub config_version: Option<ConfigVersion>,
    /// `version.puppet`, e.g. `7.23.0`.
    pub puppet_version: Option<String>,
    /// `application.*` (Puppet ≥ 7; absent on older agents).
    pub application: Application,
    pub resources: Resources,
    pub events: Events,
    /// `changes.total`: the number of properties changed (a resource can
    /// change several).
    pub changes_total: u64,
    pub time: Times,
}

/// `application`: which Puppet application wrote the run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Application {
    /// `agent` for `puppet agent`, `user` for `puppet apply` (on Debian an
    /// admin's `puppet apply` as root writes the same files as the agent).
    pub run_mode: Option<PuppetRunMode>,
    pub initial_environment: Option<String>,
    pub converged_environment: Option<String>,
}

/// `resources.*`: counts of resources (not of properties or events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Resources {
    /// Includes the 7 built-in resources (6 schedules and a filebucket), so
    /// an empty catalog has 7; 0 means no catalog was applied.
    pub total: u64,
    pub changed: u64,
    pub failed: u64,
    pub failed_to_restart: u64,
    pub out_of_sync: u64,
    pub restarted: u64,
    pub scheduled: u64,
    pub skipped: u64,
    /// Only ever non-zero under `puppet agent`.
    pub corrective_change: u64,
}

/// `events.*`: counts of events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Events {
    pub total: u64,
    pub failure: u64,
    pub success: u64,
    /// Written only when > 0 (noop runs).
    pub noop: u64,
    /// Written only when > 0.
    pub audit: u64,
}

/// `time.*`: seconds per phase and per resource type, and the run's end.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Times {
    /// `time.last_run`: Unix seconds (UTC) when the summary was built, at
    /// the end of the run.
    pub last_run: Option<i64>,
    /// Every other `time.*` key in seconds: phases (`total`,
    /// `config_retrieval`, `catalog_application`, `transaction_evaluation`,
    /// `convert_catalog`, `startup_time`, `fact_generation`, `plugin_sync`,
    /// `node_retrieval`, ...) and lowercased resource types (`file`, `exec`,
    /// ...). Which keys appear depends on the application and the run.
    pub phases: BTreeMap<String, f64>,
}

impl Times {
    /// `time.<key>` in seconds, if present.
    pub fn get(&self, key: &str) -> Option<f64> {
        self.phases.get(key).copied()
    }

    /// `time.total`. Under `puppet apply` it excludes the catalog
    /// compilation; under `puppet agent` it is about start-up + retrieval +
    /// conversion + application.
    pub fn total(&self) -> Option<f64> {
        self.get("total")
    }
}

impl RunSummary {
    /// `application.run_mode`: `agent`, or `user` for `puppet apply`;
    /// `None` when absent or a word Puppet does not write there.
    pub fn run_mode(&self) -> Option<PuppetRunMode> {
        self.application.run_mode
    }

    /// Whether the counts say something failed: a failed resource, a
    /// resource that failed to restart, or a failed event.
    pub fn has_failures(&self) -> bool {
        self.resources.failed > 0 || self.resources.failed_to_restart > 0 || self.events.failure > 0
    }

    /// Whether the summary says no catalog was applied: `version.config` is
    /// null or `resources.total` is 0 (an agent run that got no catalog).
    pub fn no_catalog_applied(&self) -> bool {
        self.config_version.is_none() || self.resources.total == 0
    }
}

/// Parse a `last_run_summary.yaml`.
///
/// Refuses input over [`MAX_SUMMARY_BYTES`] before parsing, empty input,
/// anything that is not a YAML mapping, and a summary without
/// `time.last_run` or `events` (see the module documentation). Unknown keys
/// are ignored; a known key with a value of the wrong type (a count that is
/// not a non-negative integer, a time that is not a number) is an error.
pub fn parse_summary(bytes: &[u8]) -> Result<RunSummary, ParseError> {
    if bytes.len() > MAX_SUMMARY_BYTES {
        return Err(ParseError::TooLarge {
            len: bytes.len() as u64,
            max: MAX_SUMMARY_BYTES as u64,
        });
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ParseError::Empty);
    }
    let raw: RawSummary = yaml::from_slice(bytes, MAX_SUMMARY_BYTES).map_err(ParseError::Yaml)?;
    check_complete(&raw)?;
    let version = raw.version.unwrap_or_default();
    let application = raw.application.unwrap_or_default();
    let r = raw.resources.unwrap_or_default();
    let e = raw.events.unwrap_or_default();
    let time = raw.time.unwrap_or_default();
    Ok(RunSummary {
        config_version: version.config,
        puppet_version: version.puppet.map(|t| t.0),
        application: Application {
            run_mode: application
                .run_mode
                .and_then(|t| PuppetRunMode::from_label(&t.0)),
            initial_environment: application.initial_environment.map(|t| t.0),
            converged_environment: application.converged_environment.map(|t| t.0),
        },
        resources: Resources {
            total: r.total.unwrap_or(0),
            changed: r.changed.unwrap_or(0),
            failed: r.failed.unwrap_or(0),
            failed_to_restart: r.failed_to_restart.unwrap_or(0),
            out_of_sync: r.out_of_sync.unwrap_or(0),
            restarted: r.restarted.unwrap_or(0),
            scheduled: r.scheduled.unwrap_or(0),
            skipped: r.skipped.unwrap_or(0),
            corrective_change: r.corrective_change.unwrap_or(0),
        },
        events: Events {
            total: e.total.unwrap_or(0),
            failure: e.failure.unwrap_or(0),
            success: e.success.unwrap_or(0),
            noop: e.noop.unwrap_or(0),
            audit: e.audit.unwrap_or(0),
        },
        changes_total: raw.changes.and_then(|c| c.total).unwrap_or(0),
        time,
    })
}

/// A truncated summary usually still parses (YAML cut at a line end is
/// YAML): refuse one that lacks what Puppet always writes, so the last good
/// summary is kept and the error shown instead of a run without a time.
fn check_complete(raw: &RawSummary) -> Result<(), ParseError> {
    let missing = if raw.time.as_ref().and_then(|t| t.last_run).is_none() {
        "time.last_run"
    } else if raw.events.is_none() {
        "events"
    } else {
        return Ok(());
    };
    Err(ParseError::Incomplete(format!(
        "no {missing}, which Puppet writes in every summary (cut short?)"
    )))
}

#[derive(Deserialize)]
struct RawSummary {
    version: Option<RawVersion>,
    application: Option<RawApplication>,
    resources: Option<RawResources>,
    time: Option<Times>,
    changes: Option<RawChanges>,
    events: Option<RawEvents>,
}

#[derive(Deserialize, Default)]
struct RawVersion {
    config: Option<ConfigVersion>,
    puppet: Option<Text>,
}

#[derive(Deserialize, Default)]
struct RawApplication {
    run_mode: Option<Text>,
    initial_environment: Option<Text>,
    converged_environment: Option<Text>,
}

#[derive(Deserialize, Default)]
struct RawResources {
    total: Option<u64>,
    changed: Option<u64>,
    failed: Option<u64>,
    failed_to_restart: Option<u64>,
    out_of_sync: Option<u64>,
    restarted: Option<u64>,
    scheduled: Option<u64>,
    skipped: Option<u64>,
    corrective_change: Option<u64>,
}

#[derive(Deserialize)]
struct RawChanges {
    total: Option<u64>,
}

#[derive(Deserialize, Default)]
struct RawEvents {
    total: Option<u64>,
    failure: Option<u64>,
    success: Option<u64>,
    noop: Option<u64>,
    audit: Option<u64>,
}

/// `time`: `last_run` as an integer, everything else as seconds; null
/// values are skipped; at most [`MAX_TIME_ENTRIES`] are kept.
impl<'de> Deserialize<'de> for Times {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Times;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping of times")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Times, A::Error> {
                let mut times = Times::default();
                while let Some(key) = map.next_key::<Text>()? {
                    let value: Option<Number> = map.next_value()?;
                    let Some(Number(v)) = value else { continue };
                    if key.0 == "last_run" {
                        if !(0.0..=i64::MAX as f64).contains(&v) {
                            return Err(de::Error::custom("time.last_run is out of range"));
                        }
                        times.last_run = Some(v as i64);
                    } else if times.phases.len() < MAX_TIME_ENTRIES {
                        times.phases.insert(key.0, v);
                    }
                }
                Ok(times)
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_and_partial_summaries() {
        let s = parse_summary(b"---\ntime:\n  last_run: 12\nevents: {}\n").unwrap();
        assert_eq!(s.time.last_run, Some(12));
        assert_eq!(s.resources, Resources::default());
        assert_eq!(s.config_version, None);
        assert!(s.no_catalog_applied());

        // Unknown keys anywhere are fine.
        let s = parse_summary(
            b"future: {a: [1, 2]}\nresources: {total: 9, shiny_new: 3}\ntime: {last_run: 1}\nevents: {total: 1, noop: 1}\n",
        )
        .unwrap();
        assert_eq!(s.resources.total, 9);
        assert_eq!(s.events.noop, 1);
    }

    #[test]
    fn errors_are_clear() {
        assert_eq!(parse_summary(b""), Err(ParseError::Empty));
        assert_eq!(parse_summary(b"  \n\n"), Err(ParseError::Empty));
        let e = parse_summary(b"resources: {total: many}").unwrap_err();
        assert!(matches!(e, ParseError::Yaml(_)), "{e}");
        assert!(e.to_string().contains("line 1"), "{e}");
        let e = parse_summary(b"resources: {total: -1}").unwrap_err();
        assert!(matches!(e, ParseError::Yaml(_)), "{e}");
        let e = parse_summary(b"time: {total: fast}").unwrap_err();
        assert!(matches!(e, ParseError::Yaml(_)), "{e}");
        let e = parse_summary(b"time: {last_run: -5}").unwrap_err();
        assert!(e.to_string().contains("last_run"), "{e}");
        let e = parse_summary(b"just text").unwrap_err();
        assert!(matches!(e, ParseError::Yaml(_)), "{e}");
        let e = parse_summary(b"- a\n- b\n").unwrap_err();
        assert!(matches!(e, ParseError::Yaml(_)), "{e}");
        let e = parse_summary(b"---\n").unwrap_err();
        assert!(matches!(e, ParseError::Yaml(_)), "{e}");
        let e = parse_summary(b"a: 1\n---\nb: 2\n").unwrap_err();
        assert!(matches!(e, ParseError::Yaml(_)), "{e}");
        let big = vec![b' '; MAX_SUMMARY_BYTES + 1];
        assert!(matches!(
            parse_summary(&big),
            Err(ParseError::TooLarge { .. })
        ));
    }

    #[test]
    fn null_values_read_as_absent() {
        let s = parse_summary(
            b"version: {config: , puppet: }\ntime: {total: , last_run: 7}\nevents: {total: }\n",
        )
        .unwrap();
        assert_eq!(s.config_version, None);
        assert_eq!(s.puppet_version, None);
        assert_eq!(s.time.phases, BTreeMap::new());
        assert_eq!(s.events, Events::default());
    }

    #[test]
    fn a_summary_cut_short_is_refused() {
        let full = include_str!("../../tests/fixtures/puppet/b_changed/last_run_summary.yaml");
        assert!(parse_summary(full.as_bytes()).is_ok());
        // Cut at every line end before the last section: each prefix is
        // valid YAML, and each lacks time.last_run or events.
        let events_at = full.find("\nevents:").unwrap();
        for (end, _) in full[..=events_at].match_indices('\n') {
            let e = parse_summary(&full.as_bytes()[..=end]).unwrap_err();
            assert!(
                matches!(e, ParseError::Incomplete(_)) || matches!(e, ParseError::Yaml(_)),
                "cut at {end}: {e}"
            );
        }
        let e = parse_summary(&full.as_bytes()[..=events_at]).unwrap_err();
        assert!(e.to_string().contains("no events"), "{e}");
        let e = parse_summary(b"{}").unwrap_err();
        assert!(e.to_string().contains("time.last_run"), "{e}");
        assert!(parse_summary(b"time: {last_run: }\nevents: {}\n").is_err());
    }
}
