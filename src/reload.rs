//! `systemctl reload` (SIGHUP): the configuration read again, with the
//! same command line, and what of it a running agent can take applied
//! without a restart. That is the Redis instances (and the `refresh` and
//! `slow_refresh` they poll at): matched by name, an unchanged one keeps
//! its task, its connection, its row and its data; a changed one is
//! restarted at the same row; a removed one stops and its rows leave the
//! snapshot; a new one gets a row of its own and starts polling. The AgentX
//! session is left alone: no re-registration, no gap in the answers.
//!
//! The agent's own alarms (`[alarms]`, `[[alarm]]`) are applied too,
//! matched by name: one unchanged keeps its state (a raised one stays
//! raised with its row and number, and sends nothing again); one removed or
//! changed is rearmed, with its `redisThresholdRearmed`, if it was raised,
//! and starts again; one added starts fresh
//! ([`crate::alarms::Alarms::reconfigure`]).
//!
//! What cannot change under a running session (the AgentX socket, the
//! roots of the MIB modules, what Puppet is watched and how, the rest of
//! the notification settings (`[notifications]`, which the notifier holds
//! from its start), logging, the PID file) is kept as it was, and the log
//! says a restart is needed for it. A file that does not load is
//! refused whole: the configuration in force stays as it was.
//!
//! This module knows nothing of the hub: it is handed [`Instances`], how
//! to start an instance's task, forget an instance (its parts of the
//! snapshot, what the judge and the notifier remember of it) and put
//! alarms in force; the hub's `Hands` are that.

use crate::alarms::{self, AlarmSpec};
use crate::config::{Config, ConfigError, NotifyConfig, RedisInstance};
use crate::redis::poller::Poller;
use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::time::Duration;
use tokio::task::JoinHandle;
use tracing::{error, info, warn};

/// What one instance's poller runs with: any difference restarts it.
#[derive(Debug, Clone, PartialEq)]
pub struct PollSettings {
    pub instance: RedisInstance,
    pub refresh: Duration,
    pub slow_refresh: Duration,
}

impl PollSettings {
    /// Each instance of `config`, in the file's order.
    pub fn of(config: &Config) -> Vec<PollSettings> {
        config
            .instances
            .iter()
            .map(|instance| PollSettings {
                instance: instance.clone(),
                refresh: config.refresh,
                slow_refresh: instance.slow_refresh.unwrap_or(config.slow_refresh),
            })
            .collect()
    }

    fn name(&self) -> &str {
        &self.instance.name
    }
}

/// What a reload does to one instance, by name; `index` is its row
/// (`redisInstanceIndex`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Kept {
        name: String,
        index: u32,
    },
    Restarted {
        name: String,
        index: u32,
    },
    Removed {
        name: String,
        index: u32,
    },
    Added {
        name: String,
        index: u32,
    },
    /// The same server (by address) under a new name: restarted at its
    /// row, which keeps its history; see [`plan`].
    Renamed {
        from: String,
        name: String,
        index: u32,
    },
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (name, what, index) = match self {
            Change::Kept { name, index } => (name, "kept", index),
            Change::Restarted { name, index } => (name, "restarted", index),
            Change::Removed { name, index } => (name, "removed", index),
            Change::Added { name, index } => (name, "added", index),
            Change::Renamed { from, name, index } => {
                return write!(
                    f,
                    "{from:?} renamed {name:?} (index {index}, the same server)"
                );
            }
        };
        write!(f, "{name:?} {what} (index {index})")
    }
}

/// Matches the instances `wanted` against those `running` (by index) by
/// name. Removals and restarts come first, then additions, which take
/// indexes from `next_index` up, in `wanted`'s order, and advance it.
///
/// An index is never given again once its instance was removed: managers
/// (OpenNMS, an RRD per row, a graph) keep what they collected under the
/// row's index, and a new instance on an old index would continue a
/// removed one's history as if it were the same server.
///
/// A running instance whose name is gone but whose address a new name of
/// `wanted` has is the same server renamed ([`Change::Renamed`]): it keeps
/// its row. That is what turning `[discovery] local` on by a reload does
/// to the default `redis1` (127.0.0.1:6379 comes back as `port6379`);
/// were it removed, row 1, which the 17 legacy scalars describe, would be
/// gone until a restart, and they would answer noSuchInstance.
pub fn plan(
    running: &BTreeMap<u32, PollSettings>,
    wanted: &[PollSettings],
    next_index: &mut u32,
) -> Vec<Change> {
    let mut changes = Vec::new();
    // The names of `wanted` a running instance takes (by name or address).
    let mut taken: Vec<&str> = Vec::new();
    for (&index, settings) in running {
        let name = settings.name().to_string();
        match wanted.iter().find(|w| w.name() == name) {
            None => {
                let renamed = wanted.iter().find(|w| {
                    w.instance.address == settings.instance.address
                        && !taken.contains(&w.name())
                        && !running.values().any(|r| r.name() == w.name())
                });
                match renamed {
                    Some(w) => {
                        taken.push(w.name());
                        changes.push(Change::Renamed {
                            from: name,
                            name: w.name().to_string(),
                            index,
                        });
                    }
                    None => changes.push(Change::Removed { name, index }),
                }
            }
            Some(w) if w != settings => changes.push(Change::Restarted { name, index }),
            Some(_) => changes.push(Change::Kept { name, index }),
        }
    }
    for settings in wanted {
        if !taken.contains(&settings.name())
            && !running.values().any(|r| r.name() == settings.name())
        {
            changes.push(Change::Added {
                name: settings.name().to_string(),
                index: *next_index,
            });
            *next_index = next_index.saturating_add(1);
        }
    }
    changes
}

/// The settings of `loaded` that differ from those `running` and that only
/// a restart applies.
pub fn needing_restart(running: &Config, loaded: &Config) -> Vec<&'static str> {
    let mut differ = Vec::new();
    if running.agentx != loaded.agentx {
        differ.push("agentx_socket");
    }
    if running.layout != loaded.layout {
        differ.push("the MIB roots (oid, puppet.oid)");
    }
    if running.puppet != loaded.puppet || running.puppet_events != loaded.puppet_events {
        differ.push("[puppet]");
    }
    // The alarms are applied by a reload (`Reconfigure`); the rest of
    // the notifier's settings are fixed when it is made.
    let without_alarms = |c: &Config| NotifyConfig {
        alarms: Vec::new(),
        ..c.notifications.clone()
    };
    if without_alarms(running) != without_alarms(loaded) {
        differ.push("[notifications] (and [puppet]'s notification settings)");
    }
    if running.log_target != loaded.log_target {
        differ.push("log");
    }
    if running.pid_file != loaded.pid_file {
        differ.push("daemon_pid");
    }
    differ
}

/// What the running agent does for a reload.
pub trait Instances {
    /// Starts an instance's task.
    fn start(&self, poller: Poller) -> JoinHandle<()>;
    /// Forgets a removed instance, whose task has ended: its parts of the
    /// snapshot, what is remembered of it; its raised alarms rearmed.
    /// Done when the future is.
    fn forget(&self, index: u32) -> impl Future<Output = ()>;
    /// Puts the alarms of the file read again in force (see
    /// [`crate::alarms::Alarms::reconfigure`]). Done when the future is.
    fn reconfigure(&self, specs: &[AlarmSpec]) -> impl Future<Output = ()>;
}

struct Task {
    settings: PollSettings,
    handle: JoinHandle<()>,
}

/// The configuration in force and the Redis instances' tasks.
pub struct Running<I: Instances> {
    config: Config,
    tasks: BTreeMap<u32, Task>,
    /// The index the next added instance gets; see [`plan`].
    next_index: u32,
    instances: I,
}

impl<I: Instances> Running<I> {
    /// Starts a task for each instance of `config`, at indexes 1, 2, … in
    /// the file's order.
    pub fn start(config: Config, instances: I) -> Running<I> {
        let mut running = Running {
            config,
            tasks: BTreeMap::new(),
            next_index: 1,
            instances,
        };
        let wanted = PollSettings::of(&running.config);
        let changes = plan(&BTreeMap::new(), &wanted, &mut running.next_index);
        for change in changes {
            if let Change::Added { name, index } = change {
                running.spawn(index, &name, &wanted);
            }
        }
        running
    }

    /// Applies the file read again (`loaded`); one that did not load is
    /// refused, and logged with the loader's words (file, line, key).
    pub async fn reload(&mut self, loaded: Result<Config, ConfigError>) -> Option<Vec<Change>> {
        let loaded = match loaded {
            Ok(loaded) => loaded,
            Err(e) => {
                error!("reload refused, the configuration in force is unchanged: {e}");
                return None;
            }
        };
        for warning in &loaded.warnings {
            warn!("{warning}");
        }
        for setting in needing_restart(&self.config, &loaded) {
            warn!("reload: {setting} changed in the file; the agent keeps the value it started with until it is restarted");
        }
        let wanted = PollSettings::of(&loaded);
        let running: BTreeMap<u32, PollSettings> = self
            .tasks
            .iter()
            .map(|(index, task)| (*index, task.settings.clone()))
            .collect();
        let changes = plan(&running, &wanted, &mut self.next_index);
        if let Some(Change::Removed { name, .. }) = changes
            .iter()
            .find(|c| matches!(c, Change::Removed { index: 1, .. }))
        {
            // Row 1 is never given again (see `plan`), and the legacy
            // scalars describe no other: say so where the operator who
            // reloaded will look.
            warn!(
                "reload: {name:?} (index 1) is removed; the 17 legacy objects describe index 1 and answer noSuchInstance until the agent is restarted (its first instance then takes index 1)"
            );
        }
        for change in &changes {
            match change {
                Change::Kept { .. } => {}
                Change::Restarted { name, index } | Change::Renamed { name, index, .. } => {
                    self.stop(*index).await;
                    self.spawn(*index, name, &wanted);
                }
                Change::Removed { index, .. } => {
                    self.stop(*index).await;
                    self.instances.forget(*index).await;
                }
                Change::Added { name, index } => self.spawn(*index, name, &wanted),
            }
        }
        // After the instances: a removed instance's alarms were rearmed
        // by `forget`, under the alarms it was raised by.
        let alarm_changes = alarms::changes(
            &self.config.notifications.alarms,
            &loaded.notifications.alarms,
        );
        if !alarm_changes.is_empty() {
            self.instances
                .reconfigure(&loaded.notifications.alarms)
                .await;
        }
        self.config.instances = loaded.instances;
        self.config.refresh = loaded.refresh;
        self.config.slow_refresh = loaded.slow_refresh;
        self.config.notifications.alarms = loaded.notifications.alarms;
        let said: Vec<String> = changes.iter().map(Change::to_string).collect();
        if alarm_changes.is_empty() {
            info!("configuration reloaded: {}", said.join(", "));
        } else {
            info!(
                "configuration reloaded: {}; alarms: {}",
                said.join(", "),
                alarm_changes.join(", ")
            );
        }
        Some(changes)
    }

    /// The instances polled now, as configured (or discovered).
    pub fn instances(&self) -> &[RedisInstance] {
        &self.config.instances
    }

    /// Starts the task of instance `name` of `wanted` at `index`.
    fn spawn(&mut self, index: u32, name: &str, wanted: &[PollSettings]) {
        // Names are unique in a configuration (the loader refuses twice
        // the same), and `plan` took them from `wanted`.
        let Some(settings) = wanted.iter().find(|w| w.name() == name).cloned() else {
            return;
        };
        let poller = Poller::new(
            index,
            settings.instance.clone(),
            self.config.layout.clone(),
            settings.refresh,
            settings.slow_refresh,
        );
        let handle = self.instances.start(poller);
        self.tasks.insert(index, Task { settings, handle });
    }

    /// Ends the task at `index` and waits until it has: it sends no
    /// reading afterwards (what it sent before and the hub has not taken
    /// yet, the hub drops once it has forgotten the instance).
    async fn stop(&mut self, index: u32) {
        if let Some(task) = self.tasks.remove(&index) {
            task.handle.abort();
            let _ = task.handle.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// `text` as the agent loads it with `-c`.
    fn load(dir: &tempfile::TempDir, text: &str) -> Config {
        let path = dir.path().join("redis-snmp.toml");
        std::fs::write(&path, text).unwrap();
        let cli =
            crate::cli::Cli::try_parse_from(["redis-snmp", "-c", path.to_str().unwrap()]).unwrap();
        Config::load(&cli, None).unwrap()
    }

    fn by_index(config: &Config, indexes: &[u32]) -> BTreeMap<u32, PollSettings> {
        indexes
            .iter()
            .copied()
            .zip(PollSettings::of(config))
            .collect()
    }

    fn kept(name: &str, index: u32) -> Change {
        Change::Kept {
            name: name.into(),
            index,
        }
    }

    #[test]
    fn instances_match_by_name_and_new_ones_never_take_an_old_index() {
        let dir = tempfile::tempdir().unwrap();
        let before = load(
            &dir,
            "[[redis]]\nname = \"a\"\naddress = \"10.0.0.1:6379\"\n\
             [[redis]]\nname = \"b\"\naddress = \"10.0.0.2:6379\"\n\
             [[redis]]\nname = \"d\"\naddress = \"10.0.0.4:6379\"\n",
        );
        let running = by_index(&before, &[1, 2, 3]);
        // b removed, d moved to the top of the file and its timeout
        // changed, c added, a as it was.
        let after = load(
            &dir,
            "[[redis]]\nname = \"d\"\naddress = \"10.0.0.4:6379\"\ntimeout = 5.0\n\
             [[redis]]\nname = \"a\"\naddress = \"10.0.0.1:6379\"\n\
             [[redis]]\nname = \"c\"\naddress = \"10.0.0.3:6379\"\n",
        );
        let mut next = 4;
        let changes = plan(&running, &PollSettings::of(&after), &mut next);
        assert_eq!(
            changes,
            [
                kept("a", 1),
                Change::Removed {
                    name: "b".into(),
                    index: 2
                },
                Change::Restarted {
                    name: "d".into(),
                    index: 3
                },
                Change::Added {
                    name: "c".into(),
                    index: 4
                },
            ]
        );
        assert_eq!(next, 5);
        assert_eq!(
            changes.iter().map(Change::to_string).collect::<Vec<_>>(),
            [
                "\"a\" kept (index 1)",
                "\"b\" removed (index 2)",
                "\"d\" restarted (index 3)",
                "\"c\" added (index 4)"
            ]
        );

        // b back under its old name: a new row, not index 2 again.
        let again = load(
            &dir,
            "[[redis]]\nname = \"b\"\naddress = \"10.0.0.2:6379\"\n",
        );
        let running = by_index(&before, &[1]);
        let changes = plan(&running, &PollSettings::of(&again), &mut next);
        assert_eq!(
            changes[1],
            Change::Added {
                name: "b".into(),
                index: 5
            }
        );
    }

    #[test]
    fn turning_discovery_on_keeps_the_default_server_at_row_one_under_its_new_name() {
        let dir = tempfile::tempdir().unwrap();
        // The package's file: no [[redis]], so the default redis1.
        let before = load(&dir, "");
        assert_eq!(before.instances[0].name, "redis1");
        let running = by_index(&before, &[1]);
        // Discovery on: the default is dropped, and what the scan finds
        // is added as discovery adds it (the same address, its own name).
        let mut after = load(&dir, "[discovery]\nlocal = true\n");
        assert!(after.instances.is_empty(), "{:?}", after.instances);
        let mut same = before.instances[0].clone();
        same.name = "port6379".into();
        same.found_running_as = Some(102);
        same.slowlog_entries = false;
        let mut other = same.clone();
        other.name = "port6380".into();
        other.address = crate::config::RedisAddress::parse("127.0.0.1:6380").unwrap();
        after.instances = vec![other, same];
        let mut next = 2;
        let changes = plan(&running, &PollSettings::of(&after), &mut next);
        assert_eq!(
            changes,
            [
                Change::Renamed {
                    from: "redis1".into(),
                    name: "port6379".into(),
                    index: 1
                },
                Change::Added {
                    name: "port6380".into(),
                    index: 2
                },
            ]
        );
        assert_eq!(
            changes[0].to_string(),
            "\"redis1\" renamed \"port6379\" (index 1, the same server)"
        );
        // Another server under a new name is no rename: row 1 goes.
        let mut elsewhere = load(
            &dir,
            "[[redis]]\nname = \"b\"\naddress = \"10.0.0.9:6379\"\n",
        );
        elsewhere.instances[0].slowlog_entries = false;
        let changes = plan(&running, &PollSettings::of(&elsewhere), &mut next);
        assert_eq!(
            changes,
            [
                Change::Removed {
                    name: "redis1".into(),
                    index: 1
                },
                Change::Added {
                    name: "b".into(),
                    index: 3
                },
            ]
        );
    }

    #[test]
    fn the_same_file_changes_nothing_and_global_settings_restart_every_poller() {
        let dir = tempfile::tempdir().unwrap();
        let text = "refresh = 5\n[[redis]]\nname = \"a\"\naddress = \"10.0.0.1:6379\"\n\
                    [[redis]]\nname = \"b\"\naddress = \"unix:/run/redis.sock\"\nslow_refresh = 60\n";
        let before = load(&dir, text);
        let running = by_index(&before, &[1, 2]);
        let mut next = 3;
        let same = plan(&running, &PollSettings::of(&load(&dir, text)), &mut next);
        assert_eq!(same, [kept("a", 1), kept("b", 2)]);
        // refresh is every poller's: both restart; b's own slow_refresh
        // stays, so a changed default slow_refresh restarts only a.
        let faster = load(&dir, &text.replace("refresh = 5", "refresh = 2"));
        let changes = plan(&running, &PollSettings::of(&faster), &mut next);
        assert!(
            changes
                .iter()
                .all(|c| matches!(c, Change::Restarted { .. })),
            "{changes:?}"
        );
        let slower = load(&dir, &format!("slow_refresh = 300\n{text}"));
        let changes = plan(&running, &PollSettings::of(&slower), &mut next);
        assert_eq!(
            changes[0],
            Change::Restarted {
                name: "a".into(),
                index: 1
            }
        );
        assert_eq!(changes[1], kept("b", 2));
        assert_eq!(next, 3);
    }

    #[test]
    fn a_changed_password_file_restarts_its_instance() {
        let dir = tempfile::tempdir().unwrap();
        let password = dir.path().join("a.password");
        std::fs::write(&password, "first\n").unwrap();
        let text = format!(
            "[[redis]]\nname = \"a\"\naddress = \"10.0.0.1:6379\"\npassword_file = \"{}\"\n",
            password.display()
        );
        let running = by_index(&load(&dir, &text), &[1]);
        let mut next = 2;
        let changes = plan(&running, &PollSettings::of(&load(&dir, &text)), &mut next);
        assert_eq!(changes, [kept("a", 1)]);
        std::fs::write(&password, "second\n").unwrap();
        let changes = plan(&running, &PollSettings::of(&load(&dir, &text)), &mut next);
        assert_eq!(
            changes,
            [Change::Restarted {
                name: "a".into(),
                index: 1
            }]
        );
    }

    #[test]
    fn settings_a_session_cannot_change_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let text =
            "agentx_socket = \"tcp:127.0.0.1:705\"\n[[redis]]\naddress = \"10.0.0.1:6379\"\n";
        let before = load(&dir, text);
        assert!(needing_restart(&before, &load(&dir, text)).is_empty());
        // The alarms are a reload's to apply.
        let alarms_off = load(&dir, &format!("{text}[alarms]\nenabled = false\n"));
        assert!(before.notifications.alarms != alarms_off.notifications.alarms);
        assert!(needing_restart(&before, &alarms_off).is_empty());
        let after = load(
            &dir,
            "agentx_socket = \"tcp:127.0.0.1:706\"\noid = \".1.3.6.1.4.1.99.1\"\n\
             [notifications]\nmax_per_minute = 2\n[puppet]\nstale_after = 60\n\
             [[redis]]\naddress = \"10.0.0.2:6379\"\n",
        );
        assert_eq!(
            needing_restart(&before, &after),
            [
                "agentx_socket",
                "the MIB roots (oid, puppet.oid)",
                "[puppet]",
                "[notifications] (and [puppet]'s notification settings)"
            ]
        );
    }
}
