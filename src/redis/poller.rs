//! One task per Redis instance ([`Poller::run`]): every refresh interval,
//! read INFO (with connect and response timeouts), and send the instance's
//! parts and what the poll observed ([`Polled`]) on the reading stream, as
//! a [`Reading`]. A failed poll publishes "down" and removes the instance's data, so
//! SNMP shows noSuchInstance rather than stale numbers. Errors are logged
//! when they change, not on every poll, so their words must not change
//! while the fault does not (`describe`). A connection the server closed
//! since the last poll is replaced at once, not reported as an outage; a
//! server still loading its dataset is reachable, and reported as loading.
//!
//! What a poll costs Redis: plain `INFO` (its default sections) on every
//! poll; every `slow_refresh` also the costly parts, `INFO everything`
//! (commandstats and latencystats: a line, and percentiles, per command
//! ever run), `SLOWLOG LEN` (and `GET 1`) and `LATENCY LATEST`, which are
//! served as last read in between. `CONFIG GET databases` is asked once
//! per connection, and the connection lives as long as the server keeps it.
//! `CLIENT LIST` and the key checks (`check_keys`, [`super::keys`]) run on
//! cadences of their own. With `slow_commands` (the default), every poll
//! also asks `SLOWLOG GET 1`, and `SLOWLOG GET n` when new entries
//! arrived ([`super::slowlog`]). On a sentinel, each poll asks `SENTINEL MASTERS` and, for each master,
//! `SENTINEL CKQUORUM` (one pipeline; [`super::failover`] judges them).
//! `ACL LOG 1` is asked at every poll, and `ACL LOG 128` only when that
//! newest entry changed ([`super::acl_log`]).
//!
//! The poller reads INFO and the slow cadence ([`super::cadence`]), then
//! runs its watches, a list of one face ([`Watch`]), and names nothing
//! inside them; the asking is the [`Client`]'s (connection, reply budget,
//! refusals, error words).

use super::cadence::{Schedule, SlowParts};
use super::client::{Client, Connect, PollError};
use super::info::Info;
use super::observation::{Polled, RedisObservation};
use super::readings::{instance_part, status_part, Extras, InstanceStatus};
use super::watch::{Poll, Watch};
use crate::config::RedisInstance;
use crate::metrics::Layout;
use crate::secret;
use crate::smi::unix_now;
use crate::snapshot::{PartKey, Reading};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

/// One instance's poll: what is due when, over its [`Client`].
pub struct Poller {
    /// 1-based instance number: the row of `redisInstanceTable`.
    index: u32,
    layout: Layout,
    status: InstanceStatus,
    client: Client,
    schedule: Schedule,
    /// The costly parts as last read.
    slow: SlowParts,
    /// What is read on cadences of its own, each with its own state, in
    /// the order they ask.
    watches: Vec<Box<dyn Watch>>,
}

/// The instance's watches, in the order they ask: each asks on a cadence
/// of its own (or reads what each poll brings) and keeps what it needs to
/// tell the new from the seen. A new watch is a line here.
fn watches(instance: &RedisInstance) -> Vec<Box<dyn Watch>> {
    vec![
        Box::new(super::failover::FailoverWatch::new()),
        Box::new(super::slowlog::SlowlogWatch::new(instance)),
        Box::new(super::clients::ClientList::new(instance)),
        Box::new(super::keys::KeyCheck::new(&instance.key_checks)),
        Box::new(super::big_keys::BigKeyCheck::new(&instance.key_checks)),
        Box::new(super::acl_log::AclWatch::of(instance)),
        Box::new(super::certificate_watch::CertificateWatch::new(instance)),
    ]
}

impl Poller {
    /// `slow_refresh`: how often the costly parts are read (rounded to a
    /// whole number of refresh intervals, at least one).
    pub fn new(
        index: u32,
        instance: RedisInstance,
        layout: Layout,
        refresh: Duration,
        slow_refresh: Duration,
    ) -> Self {
        let status = InstanceStatus {
            name: instance.name.clone(),
            address: instance.address.to_string(),
            ..Default::default()
        };
        Poller {
            index,
            layout,
            status,
            watches: watches(&instance),
            client: Client::new(instance),
            schedule: Schedule::new(refresh, slow_refresh),
            slow: SlowParts::default(),
        }
    }

    /// The instance's number: its row in every table.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// How often to poll.
    pub fn refresh(&self) -> Duration {
        self.schedule.refresh
    }

    /// Polls every refresh interval, each reading sent on `readings` (as
    /// the stream's observation, `O`), until `shutdown` or the stream is
    /// gone.
    pub async fn run<O: From<Polled>>(
        mut self,
        readings: mpsc::Sender<Reading<O>>,
        shutdown: CancellationToken,
    ) {
        let mut timer = tokio::time::interval(self.refresh());
        timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = timer.tick() => {
                    let reading = self.poll().await.into_stream();
                    if readings.send(reading).await.is_err() {
                        return;
                    }
                }
                _ = shutdown.cancelled() => return,
            }
        }
    }

    /// Polls once: the instance's data and status parts, and what was seen.
    pub async fn poll(&mut self) -> Reading<Polled> {
        let started = Instant::now();
        let outcome = self.read().await;
        self.status.poll_millis = u32::try_from(started.elapsed().as_millis()).unwrap_or(u32::MAX);
        let (data, seen) = match outcome {
            Ok((info, mut extras)) => {
                self.run_watches(&info, false).await;
                let seen = self.gather(&info, &mut extras);
                self.answered(&info);
                let data =
                    instance_part(self.index, &self.status.name, &info, &self.layout, &extras);
                (data, seen)
            }
            Err(error) => {
                self.failed(error);
                // No data rather than stale numbers: noSuchInstance.
                (Vec::new(), RedisObservation::down())
            }
        };
        for watch in &self.watches {
            watch.status(&mut self.status);
        }
        let status = status_part(self.index, &self.status, &self.layout);
        Reading {
            parts: vec![
                (PartKey::RedisInstance(self.index), data),
                (PartKey::RedisStatus(self.index), status),
            ],
            observation: Polled {
                index: self.index,
                seen,
            },
        }
    }

    /// The watches' rows, handed to `extras`, and what the poll observed,
    /// INFO's part and theirs.
    fn gather(&mut self, info: &Info, extras: &mut Extras) -> RedisObservation {
        let mut seen = RedisObservation::from_info(info);
        for watch in &mut self.watches {
            watch.serve(extras);
            watch.report(&mut seen);
        }
        seen
    }

    /// A poll that read INFO: the status says so (and the log, when it did
    /// not before).
    fn answered(&mut self, info: &Info) {
        if !self.status.up && self.status.polls_failed > 0 {
            info!(instance = %self.status.name, "Redis at {} answers again", self.status.address);
        }
        self.note_loading(info.get("loading") == Some("1"));
        self.status.up = true;
        self.status.last_error.clear();
        self.status.last_ok_unix = Some(unix_now());
        self.status.polls_ok = self.status.polls_ok.wrapping_add(1);
    }

    /// A poll that failed: said when its words change (never with the
    /// password), the connection closed.
    fn failed(&mut self, error: String) {
        let error = secret::redact(&error, self.client.instance().password.as_ref());
        if error != self.status.last_error || self.status.up || self.status.polls_failed == 0 {
            warn!(instance = %self.status.name, "cannot poll Redis at {}: {error}", self.status.address);
        } else {
            debug!(instance = %self.status.name, "still failing: {error}");
        }
        self.status.up = false;
        self.status.loading = false;
        self.status.last_error = error;
        self.status.polls_failed = self.status.polls_failed.wrapping_add(1);
        self.client.close();
    }

    /// Says once when the server starts and when it stops loading its
    /// dataset (state loading(3)), not on every poll while it does.
    fn note_loading(&mut self, loading: bool) {
        if loading && !self.status.loading {
            info!(instance = %self.status.name, "Redis at {} is loading its dataset", self.status.address);
        } else if !loading && self.status.loading {
            info!(instance = %self.status.name, "Redis at {} has loaded its dataset", self.status.address);
        }
        self.status.loading = loading;
    }

    /// INFO and the optional commands, tried once more on a new connection
    /// when the one that served the last poll was closed since (the server
    /// restarted, closed it as idle, a proxy dropped it): that is no outage,
    /// and reporting it as one would flap the state and the log.
    async fn read(&mut self) -> Result<(Info, Extras), String> {
        let reused = self.client.is_connected();
        match self.read_once().await {
            Err(e) if reused && e.lost_connection => {
                debug!(instance = %self.status.name, "connection lost ({}); connecting again", e.text);
                self.client.close();
                self.read_once().await
            }
            outcome => outcome,
        }
        .map_err(|e| e.text)
    }

    /// INFO (with the fields of CLUSTER INFO on cluster nodes), what the
    /// optional commands this server allows tell, and the watches that
    /// count in the poll's time.
    async fn read_once(&mut self) -> Result<(Info, Extras), PollError> {
        if let Connect::New(certificate) = self.client.connect().await? {
            self.schedule.new_connection();
            self.slow = SlowParts::default();
            for watch in &mut self.watches {
                watch.new_connection(certificate.as_ref());
            }
        }
        let slow_due = self.schedule.slow_due();
        let info = self.slow.read_info(&mut self.client, slow_due).await?;
        let mut extras = Extras::default();
        if !info.is_sentinel() {
            // Without CONFIG GET (the least-privilege user has none: it
            // would read requirepass too), rows are kept for every database
            // seen since the agent started.
            let highest = info.keyspace().iter().map(|row| row.db).max();
            extras.databases = self.client.databases(highest).await;
            if slow_due {
                self.slow.read(&mut self.client, &info).await;
            }
            self.slow.serve(&mut extras);
        }
        self.schedule.polled(slow_due);
        self.run_watches(&info, true).await;
        Ok((info, extras))
    }

    /// The watches that are due, in their order: those `timed` in the
    /// poll's time, or the others after it.
    async fn run_watches(&mut self, info: &Info, timed: bool) {
        let poll = Poll {
            info,
            now: Instant::now(),
            slow: self.schedule.slow_read(),
        };
        for watch in self.watches.iter_mut().filter(|w| w.timed() == timed) {
            if watch.due(&poll) {
                watch.run(&mut self.client, &poll).await;
            }
        }
    }
}
