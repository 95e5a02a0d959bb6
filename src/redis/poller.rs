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
//! The poller decides what is due; the asking is the [`Client`]'s
//! (connection, reply budget, refusals, error words).

use super::acl_log::AclWatch;
use super::big_keys::BigKeyCheck;
use super::certificate_watch::CertificateWatch;
use super::client::{Client, Connect, PollError};
use super::clients::ClientList;
use super::failover::{quorum_reply, FailoverWatch, MasterSeen, Quorum, MAX_QUORUM_CHECKS};
use super::info::Info;
use super::keys::KeyCheck;
use super::observation::RedisObservation;
use super::readings::{instance_part, status_part, Extras, InstanceStatus};
use super::replies;
use super::slowlog::SlowlogWatch;
use crate::config::RedisInstance;
use crate::metrics::Layout;
use crate::secret;
use crate::smi::unix_now;
use crate::snapshot::{PartKey, Reading};
use std::collections::HashSet;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

/// What a poll of one instance observed: the instance's number and what
/// it saw, judged against the poll before.
#[derive(Debug, Clone, PartialEq)]
pub struct Polled {
    pub index: u32,
    pub seen: RedisObservation,
}

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
    /// What is read on cadences of its own, each with its own state.
    watches: Watches,
}

/// The instance's watches: each asks on a cadence of its own (or reads
/// what each poll brings) and keeps what it needs to tell the new from
/// the seen. Grouped so that the poller holds what decides the polls.
struct Watches {
    /// The server's TLS certificate (`rediss://` only).
    certificate: CertificateWatch,
    /// CLIENT LIST, on its own cadence.
    clients: ClientList,
    /// The keys an operator names (`check_keys`), on their own cadence.
    keys: KeyCheck,
    /// New slow log entries (`slow_commands`), read on every poll.
    slowlog: SlowlogWatch,
    /// The big-key sampler and HOTKEYS GET (`big_keys`, `hot_keys`).
    big_keys: BigKeyCheck,
    /// A sentinel's masters as the polls saw them: failover events.
    failover: FailoverWatch,
    /// ACL LOG, at every poll (issue 25 item 4).
    acl: AclWatch,
}

/// When to poll, and which polls read the costly parts: pure, judged on
/// plain values.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Schedule {
    refresh: Duration,
    /// Polls between two reads of the costly parts (1: every poll).
    slow_every: u32,
    /// Polls since the costly parts were read; `None`: not on this
    /// connection (a new connection may be a new server).
    since_slow: Option<u32>,
}

impl Schedule {
    /// `slow_refresh`: how often the costly parts are read (rounded to a
    /// whole number of refresh intervals, at least one).
    fn new(refresh: Duration, slow_refresh: Duration) -> Self {
        Schedule {
            refresh,
            slow_every: slow_every(refresh, slow_refresh),
            since_slow: None,
        }
    }

    /// Whether this poll reads the costly parts.
    fn slow_due(&self) -> bool {
        self.since_slow
            .is_none_or(|since| since.saturating_add(1) >= self.slow_every)
    }

    /// A poll was made, reading the costly parts or not.
    fn polled(&mut self, slow_read: bool) {
        self.since_slow = Some(match self.since_slow {
            Some(since) if !slow_read => since.saturating_add(1),
            _ => 0,
        });
    }

    /// A new connection: everything read afresh.
    fn new_connection(&mut self) {
        self.since_slow = None;
    }
}

/// What the slow cadence read: INFO's sections that plain `INFO` does not
/// return (raw text, `# Section` headers included), and the optional
/// commands' answers.
#[derive(Default)]
struct SlowParts {
    sections: Vec<(String, Vec<u8>)>,
    slowlog_len: Option<u64>,
    slowlog_last: Option<replies::SlowlogEntry>,
    large_requests: Option<u64>,
    large_replies: Option<u64>,
    latency: Vec<replies::LatencyEvent>,
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
            watches: Watches {
                certificate: CertificateWatch::new(&instance),
                clients: ClientList::new(&instance),
                keys: KeyCheck::new(&instance.key_checks),
                slowlog: SlowlogWatch::new(&instance),
                big_keys: BigKeyCheck::new(&instance.key_checks),
                failover: FailoverWatch::new(),
                acl: AclWatch::new(
                    instance.acl_log,
                    instance.acl_burst_refusals,
                    instance.acl_burst_window,
                ),
            },
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
        // Not in the poll's time: an hourly handshake would spike its graph.
        if outcome.is_ok() {
            self.watches
                .certificate
                .refresh(self.client.instance())
                .await;
        }
        let now = unix_now();
        self.status.certificate = self.watches.certificate.status(now);
        let observation = match &outcome {
            Ok((info, extras)) => RedisObservation {
                certificate_expiring: self.watches.certificate.expiring(now),
                slow_commands: self.watches.slowlog.take_due(),
                sentinel_events: extras.sentinel_news.clone(),
                acl_burst: self.watches.acl.burst(),
                acl_newest_row: self.watches.acl.newest_row(),
                ..RedisObservation::from_info(info)
            },
            Err(_) => RedisObservation::down(),
        };
        let data = match outcome {
            Ok((info, extras)) => {
                if !self.status.up && self.status.polls_failed > 0 {
                    info!(instance = %self.status.name, "Redis at {} answers again", self.status.address);
                }
                self.note_loading(info.get("loading") == Some("1"));
                self.status.up = true;
                self.status.last_error.clear();
                self.status.last_ok_unix = Some(unix_now());
                self.status.polls_ok = self.status.polls_ok.wrapping_add(1);
                instance_part(self.index, &self.status.name, &info, &self.layout, &extras)
            }
            Err(error) => {
                let error = secret::redact(&error, self.client.instance().password.as_ref());
                if error != self.status.last_error
                    || self.status.up
                    || self.status.polls_failed == 0
                {
                    warn!(instance = %self.status.name, "cannot poll Redis at {}: {error}", self.status.address);
                } else {
                    debug!(instance = %self.status.name, "still failing: {error}");
                }
                self.status.up = false;
                self.status.loading = false;
                self.status.last_error = error;
                self.status.polls_failed = self.status.polls_failed.wrapping_add(1);
                self.client.close();
                // No data rather than stale numbers: noSuchInstance.
                Vec::new()
            }
        };
        let status = status_part(self.index, &self.status, &self.layout);
        Reading {
            parts: vec![
                (PartKey::RedisInstance(self.index), data),
                (PartKey::RedisStatus(self.index), status),
            ],
            observation: Polled {
                index: self.index,
                seen: observation,
            },
        }
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

    /// INFO (with the fields of CLUSTER INFO on cluster nodes) and what the
    /// optional commands this server allows tell.
    async fn read_once(&mut self) -> Result<(Info, Extras), PollError> {
        if let Connect::New(certificate) = self.client.connect().await? {
            self.watches
                .certificate
                .connected(&self.status.name, certificate);
            self.schedule.new_connection();
            self.watches.failover.new_connection();
            self.slow = SlowParts::default();
        }
        let slow_due = self.schedule.slow_due();
        let info = self.read_info(slow_due).await?;
        let mut extras = Extras::default();
        if info.first(&["redis_mode", "server_mode"]) == Some("sentinel") {
            // A user that may not run SENTINEL MASTERS still sees INFO's
            // masterN lines: fewer fields, the same masters.
            extras.sentinel_masters = match self.client.optional("SENTINEL", &["MASTERS"]).await {
                Some(reply) => replies::sentinel_masters(&reply),
                None => replies::masters_from_info(&info),
            };
            let quorum = self.ask_quorum(&extras.sentinel_masters).await;
            let seen: Vec<MasterSeen> = extras
                .sentinel_masters
                .iter()
                .zip(quorum.into_iter().chain(std::iter::repeat(None)))
                .map(|(master, quorum)| MasterSeen::of(master, quorum))
                .collect();
            extras.sentinel_news = self.watches.failover.observe(&seen, unix_now());
            extras.sentinel_events = self.watches.failover.rows();
        } else {
            // Without CONFIG GET (the least-privilege user has none: it
            // would read requirepass too), rows are kept for every database
            // seen since the agent started.
            let highest = info.keyspace().iter().map(|row| row.db).max();
            extras.databases = self.client.databases(highest).await;
            if slow_due {
                self.read_slow_commands(&info).await;
            }
            // New slow log entries on every poll, not on the slow cadence:
            // SLOWLOG GET 1 is O(1), and a notification a slow_refresh late
            // is late (the cost: docs/configuration.md). Its reply is the
            // newest entry the slow cadence would otherwise ask for again.
            if self.watches.slowlog.enabled() {
                let newest = self
                    .watches
                    .slowlog
                    .read(&mut self.client, info.get("run_id").map(str::trim))
                    .await;
                if let Some(reply) = newest {
                    self.slow.slowlog_last = replies::slowlog_newest(&reply);
                }
            }
            extras.slow_commands = self.watches.slowlog.rows();
            let slow = &self.slow;
            extras.slowlog_len = slow.slowlog_len;
            extras.slowlog_last = slow.slowlog_last;
            extras.large_requests = slow.large_requests;
            extras.large_replies = slow.large_replies;
            extras.latency = slow.latency.clone();
        }
        self.schedule.polled(slow_due);
        let now = Instant::now();
        if self.watches.clients.due(now) {
            let reply = self.client.optional("CLIENT", &["LIST"]).await;
            let refused = self.client.refused("CLIENT LIST");
            let over_budget = reply.is_none() && self.client.over_budget();
            self.watches
                .clients
                .answered(&self.status.name, reply, refused, over_budget);
        }
        extras.clients = self.watches.clients.latest();
        // Not on a connection an over-long reply ended in this poll.
        if self.watches.keys.due(now) && self.client.is_connected() {
            if let Err(lost) = self.watches.keys.run(&mut self.client).await {
                // INFO was read: the poll stands; the next connects again.
                debug!(instance = %self.status.name, "key check: {}; connecting again at the next poll", lost.text);
            }
        }
        extras.keys = self.watches.keys.latest();
        if self.watches.big_keys.due(Instant::now()) && self.client.is_connected() {
            let dbs: Vec<u32> = info.keyspace().iter().map(|row| row.db).collect();
            let lfu = info
                .get("maxmemory_policy")
                .is_some_and(|policy| policy.contains("lfu"));
            if let Err(lost) = self.watches.big_keys.run(&mut self.client, &dbs, lfu).await {
                debug!(instance = %self.status.name, "big keys: {}; connecting again at the next poll", lost.text);
            }
        }
        extras.big_keys = self.watches.big_keys.latest();
        if self.client.is_connected() {
            let now_ms = unix_now().saturating_mul(1000);
            self.watches.acl.read(&mut self.client, now_ms).await;
        }
        extras.acl = self.watches.acl.report();
        Ok((info, extras))
    }

    /// SENTINEL CKQUORUM of each master (the first [`MAX_QUORUM_CHECKS`]),
    /// in one pipeline, each answer in the masters' order (`None`: not
    /// known). A refusal (an ACL without `+sentinel|ckquorum`) is said
    /// once and not asked again on this connection.
    async fn ask_quorum(&mut self, masters: &[replies::WatchedMaster]) -> Vec<Option<Quorum>> {
        if !self.watches.failover.ask_quorum() || masters.is_empty() {
            return Vec::new();
        }
        // Each answer on its own: NOQUORUM is an error reply, and an answer.
        let mut pipe = redis::pipe();
        pipe.ignore_errors();
        for master in masters.iter().take(MAX_QUORUM_CHECKS) {
            pipe.cmd("SENTINEL").arg("CKQUORUM").arg(&master.name);
        }
        let replies = match self.client.pipeline(&pipe).await {
            Ok(replies) => replies,
            Err(lost) => {
                debug!(instance = %self.status.name, "SENTINEL CKQUORUM: {}; connecting again at the next poll", lost.text);
                return Vec::new();
            }
        };
        let mut answers = Vec::with_capacity(replies.len());
        for reply in &replies {
            match quorum_reply(reply) {
                Ok(answer) => answers.push(answer),
                Err(refusal) => {
                    if self.watches.failover.quorum_refused() {
                        info!(
                            instance = %self.status.name,
                            "Redis refuses SENTINEL CKQUORUM ({}); no quorum notifications from it, the other events still come",
                            crate::text::printable(&refusal)
                        );
                    }
                    return Vec::new();
                }
            }
        }
        answers
    }

    /// The costly optional commands, on the slow cadence: SLOWLOG, Valkey's
    /// COMMANDLOG lengths, LATENCY LATEST. What a command does not answer
    /// is absent until the next slow read.
    async fn read_slow_commands(&mut self, info: &Info) {
        let slow = &mut self.slow;
        slow.slowlog_len = None;
        slow.slowlog_last = None;
        slow.large_requests = None;
        slow.large_replies = None;
        slow.latency.clear();
        if let Some(reply) = self.client.optional("SLOWLOG", &["LEN"]).await {
            self.slow.slowlog_len = replies::slowlog_len(&reply);
        }
        // The slow log watch asks SLOWLOG GET 1 on every poll when it is on.
        if self.client.instance().slowlog_entries && !self.watches.slowlog.enabled() {
            if let Some(reply) = self.client.optional("SLOWLOG", &["GET", "1"]).await {
                self.slow.slowlog_last = replies::slowlog_newest(&reply);
            }
        }
        // Valkey 8.1+ logs large requests and replies beside slow
        // commands. Asked only of servers that have COMMANDLOG: on the
        // others the refusal would count in the server's own error
        // statistics (total_error_replies, errorstat_ERR).
        if info.has_commandlog() {
            if let Some(reply) = self
                .client
                .optional("COMMANDLOG", &["LEN", "large-request"])
                .await
            {
                self.slow.large_requests = replies::slowlog_len(&reply);
                if let Some(reply) = self
                    .client
                    .optional("COMMANDLOG", &["LEN", "large-reply"])
                    .await
                {
                    self.slow.large_replies = replies::slowlog_len(&reply);
                }
            }
        }
        if let Some(reply) = self.client.optional("LATENCY", &["LATEST"]).await {
            self.slow.latency = replies::latency_latest(&reply);
        }
    }

    /// INFO, with the fields of CLUSTER INFO added on cluster nodes. When
    /// the costly parts are not `slow_due`, plain `INFO`, with the sections
    /// only the richer variant returns added as last read.
    async fn read_info(&mut self, slow_due: bool) -> Result<Info, PollError> {
        let richer = self.client.richer_info();
        let mut text = if slow_due || !richer {
            let text = self.client.richest_info().await?;
            if richer {
                self.slow.sections = sections(&text);
            }
            text
        } else {
            let text = self.client.plain_info().await?;
            with_slow_sections(text, &self.slow.sections)
        };
        let info = Info::parse_bytes(&text);
        if info.get("cluster_enabled") != Some("1") {
            return Ok(info);
        }
        // A cluster node: its CLUSTER INFO fields join INFO's, parsed once more.
        let Some(cluster) = self.client.optional("CLUSTER", &["INFO"]).await else {
            return Ok(info);
        };
        match redis::from_redis_value::<Vec<u8>>(cluster) {
            Ok(bytes) => {
                text.extend_from_slice(b"\r\n# Cluster info\r\n");
                text.extend_from_slice(&bytes);
                Ok(Info::parse_bytes(&text))
            }
            Err(_) => Ok(info),
        }
    }
}

/// Polls per read of the costly parts: `slow_refresh` in refresh intervals,
/// rounded to the nearest, at least 1.
fn slow_every(refresh: Duration, slow_refresh: Duration) -> u32 {
    let refresh = refresh.as_secs_f64().max(0.001);
    let polls = (slow_refresh.as_secs_f64() / refresh).round();
    if polls.is_finite() && polls >= 1.0 {
        polls.min(f64::from(u32::MAX)) as u32
    } else {
        1
    }
}

/// An INFO reply cut into its sections: (lower-case name, raw text with
/// its `# Name` header).
fn sections(text: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut sections: Vec<(String, Vec<u8>)> = Vec::new();
    for line in text.split(|&b| b == b'\n') {
        if let Some(name) = line.strip_prefix(b"# ") {
            let name = String::from_utf8_lossy(name).trim().to_ascii_lowercase();
            sections.push((name, Vec::new()));
        }
        if let Some((_, body)) = sections.last_mut() {
            body.extend_from_slice(line);
            body.push(b'\n');
        }
    }
    sections
}

/// `fast` (a plain `INFO` reply) with the sections of the last rich reply
/// that it lacks (commandstats, latencystats, whatever else the server
/// leaves out of its default set), as they were then.
fn with_slow_sections(mut fast: Vec<u8>, slow: &[(String, Vec<u8>)]) -> Vec<u8> {
    let present: HashSet<String> = sections(&fast).into_iter().map(|(name, _)| name).collect();
    for (name, body) in slow {
        if !present.contains(name) {
            fast.extend_from_slice(b"\r\n");
            fast.extend_from_slice(body);
        }
    }
    fast
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real `INFO everything` of Redis 7.0.
    const EVERYTHING_70: &str = include_str!("../../tests/fixtures/redis/7.0-master-info.txt");

    /// What plain `INFO` of the same server returns: the same text without
    /// the two sections Redis 7.0 leaves out of its default set.
    fn plain_info(everything: &str) -> String {
        sections(everything.as_bytes())
            .into_iter()
            .filter(|(name, _)| name != "commandstats" && name != "latencystats")
            .map(|(_, body)| String::from_utf8(body).unwrap())
            .collect()
    }

    #[test]
    fn a_fast_poll_serves_the_slow_sections_as_last_read() {
        let slow = sections(EVERYTHING_70.as_bytes());
        let fast = plain_info(EVERYTHING_70)
            .replace("total_commands_processed:", "total_commands_processed:9");
        let merged = Info::parse_bytes(&with_slow_sections(fast.into_bytes(), &slow));
        let full = Info::parse(EVERYTHING_70);
        assert_eq!(merged.command_stats(), full.command_stats());
        assert!(!merged.command_stats().is_empty());
        // latencystats lines land in the same rows (percentiles).
        assert_eq!(
            merged.get("latency_percentiles_usec_lpush"),
            full.get("latency_percentiles_usec_lpush")
        );
        // The fast reply's own sections win, and none is there twice.
        assert_eq!(
            merged.get("total_commands_processed"),
            Some(format!("9{}", full.get("total_commands_processed").unwrap()).as_str())
        );
        assert_eq!(merged.keyspace(), full.keyspace());
        assert_eq!(merged.error_stats(), full.error_stats());
    }

    #[test]
    fn an_info_reply_splits_into_its_sections() {
        let names: Vec<String> = sections(EVERYTHING_70.as_bytes())
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(
            names,
            [
                "server",
                "clients",
                "memory",
                "persistence",
                "stats",
                "replication",
                "cpu",
                "modules",
                "commandstats",
                "errorstats",
                "latencystats",
                "cluster",
                "keyspace"
            ]
        );
    }

    #[test]
    fn slow_refresh_counts_in_whole_polls() {
        let s = Duration::from_secs;
        assert_eq!(slow_every(s(10), s(50)), 5);
        assert_eq!(slow_every(s(1), s(1)), 1);
        assert_eq!(slow_every(s(10), s(14)), 1);
        assert_eq!(slow_every(s(10), s(16)), 2);
        assert_eq!(slow_every(s(10), s(86_400)), 8_640);
    }

    #[test]
    fn the_costly_parts_are_due_every_slow_every_polls_and_on_a_new_connection() {
        let s = Duration::from_secs;
        let mut schedule = Schedule::new(s(10), s(30));
        assert!(schedule.slow_due());
        let mut read = Vec::new();
        for _ in 0..7 {
            let due = schedule.slow_due();
            read.push(due);
            schedule.polled(due);
        }
        assert_eq!(read, [true, false, false, true, false, false, true]);
        schedule.new_connection();
        assert!(schedule.slow_due());
        let mut every_poll = Schedule::new(s(10), s(1));
        for _ in 0..3 {
            assert!(every_poll.slow_due());
            every_poll.polled(true);
        }
        assert_eq!(every_poll.refresh, s(10));
    }
}
