//! One task per Redis instance: every refresh interval, read INFO (with
//! connect and response timeouts), and hand the instance's parts and what
//! the poll observed to the hub, as a [`Reading`]. A failed poll publishes "down" and removes the instance's data, so
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
//! cadences of their own.

use super::certificate_watch::CertificateWatch;
use super::clients::{self, ClientList};
use super::connection::{self, describe, is_transient, ConnectError, ReplyBudget};
use super::info::Info;
use super::keys::KeyCheck;
use super::observation::RedisObservation;
use super::readings::{instance_part, status_part, Extras, InstanceStatus};
use super::replies;
use crate::config::RedisInstance;
use crate::metrics::Layout;
use crate::secret;
use crate::smi::unix_now;
use crate::snapshot::{PartKey, Reading};
use redis::aio::MultiplexedConnection;
use std::collections::HashSet;
use std::time::{Duration, Instant};
use tracing::{debug, info, warn};

/// The INFO variants to try, richest first. `everything` exists since 7.0,
/// `all` since 2.8; older servers answer an unknown section with an error or
/// an empty reply, and get plain `INFO`.
const INFO_SECTIONS: &[Option<&str>] = &[Some("everything"), Some("all"), None];

pub struct Poller {
    /// 1-based instance number: the row of `redisInstanceTable`.
    index: u32,
    instance: RedisInstance,
    layout: Layout,
    refresh: Duration,
    status: InstanceStatus,
    connection: Option<MultiplexedConnection>,
    /// What the reply to the command being asked may still take.
    budget: ReplyBudget,
    /// Which entry of `INFO_SECTIONS` this server understands.
    info_variant: usize,
    /// The server's `databases` setting, asked once per connection.
    databases: Option<Option<u32>>,
    /// One more than the highest database number INFO has listed since the
    /// agent started: keyspace rows are kept up to there.
    databases_seen: u32,
    /// Optional commands this server refused: not asked again on this
    /// connection, and said once in the log (managed and locked-down servers
    /// refuse CONFIG, CLUSTER…).
    refused: HashSet<String>,
    /// The server's TLS certificate (`rediss://` only).
    certificate: CertificateWatch,
    /// CLIENT LIST, on its own cadence.
    clients: ClientList,
    /// The keys an operator names (`check_keys`), on their own cadence.
    keys: KeyCheck,
    /// Whether a refused CLIENT SETNAME was logged already.
    setname_refusal_said: bool,
    /// Polls between two reads of the costly parts (1: every poll).
    slow_every: u32,
    /// The costly parts as last read, and the polls since.
    slow: Option<SlowParts>,
    polls_since_slow: u32,
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
        let budget = ReplyBudget::new(instance.max_reply_bytes);
        let certificate = CertificateWatch::new(&instance);
        let clients = ClientList::new(&instance);
        let keys = KeyCheck::new(&instance.key_checks);
        Poller {
            index,
            instance,
            layout,
            refresh,
            status,
            connection: None,
            budget,
            info_variant: 0,
            databases: None,
            databases_seen: 0,
            refused: HashSet::new(),
            certificate,
            clients,
            keys,
            setname_refusal_said: false,
            slow_every: slow_every(refresh, slow_refresh),
            slow: None,
            polls_since_slow: 0,
        }
    }

    /// The instance's number: its row in every table.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// How often to poll.
    pub fn refresh(&self) -> Duration {
        self.refresh
    }

    /// Polls once: the instance's data and status parts, and what was seen.
    pub async fn poll(&mut self) -> Reading<RedisObservation> {
        let started = Instant::now();
        let outcome = self.read().await;
        self.status.poll_millis = u32::try_from(started.elapsed().as_millis()).unwrap_or(u32::MAX);
        // Not in the poll's time: an hourly handshake would spike its graph.
        if outcome.is_ok() {
            self.certificate.refresh(&self.instance).await;
        }
        let now = unix_now();
        self.status.certificate = self.certificate.status(now);
        let observation = match &outcome {
            Ok((info, _)) => RedisObservation {
                certificate_expiring: self.certificate.expiring(now),
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
                let error = secret::redact(&error, self.instance.password.as_ref());
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
                self.connection = None;
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
            observation,
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
        let reused = self.connection.is_some();
        match self.read_once().await {
            Err(e) if reused && e.lost_connection => {
                debug!(instance = %self.status.name, "connection lost ({}); connecting again", e.text);
                self.connection = None;
                self.read_once().await
            }
            outcome => outcome,
        }
        .map_err(|e| e.text)
    }

    /// INFO (with the fields of CLUSTER INFO on cluster nodes) and what the
    /// optional commands this server allows tell.
    async fn read_once(&mut self) -> Result<(Info, Extras), PollError> {
        if self.connection.is_none() {
            let connected = connection::connect_seeing_certificate(&self.instance, &self.budget)
                .await
                .map_err(|e| match e {
                    ConnectError::Redis(e) => describe(&e),
                    ConnectError::Other(text) => text,
                })?;
            self.certificate
                .connected(&self.instance.name, connected.certificate);
            self.connection = Some(connected.connection);
            self.info_variant = 0;
            self.databases = None;
            // A fixed ACL or a new server may allow what was refused.
            self.refused.clear();
            // A new connection may be a new server: everything read afresh.
            self.slow = None;
            // Named, so operators tell the agent apart in CLIENT LIST.
            if let Some(connection) = self.connection.as_mut() {
                self.budget.renew();
                let named = clients::name_connection(
                    connection,
                    &self.status.name,
                    &mut self.setname_refusal_said,
                )
                .await;
                if let Err(e) = named {
                    self.connection = None;
                    if self.budget.exceeded() {
                        return Err(self.over_budget("CLIENT SETNAME"));
                    }
                    return Err(PollError::from(&e));
                }
            }
        }
        let slow_due = self.slow.is_none() || self.polls_since_slow + 1 >= self.slow_every;
        let info = self.read_info(slow_due).await?;
        let mut extras = Extras::default();
        if info.first(&["redis_mode", "server_mode"]) == Some("sentinel") {
            // A user that may not run SENTINEL MASTERS still sees INFO's
            // masterN lines: fewer fields, the same masters.
            extras.sentinel_masters = match self.optional_query("SENTINEL", &["MASTERS"]).await {
                Some(reply) => replies::sentinel_masters(&reply),
                None => replies::masters_from_info(&info),
            };
        } else {
            if self.databases.is_none() {
                let reply = self.optional_query("CONFIG", &["GET", "databases"]).await;
                let databases = reply.as_ref().and_then(replies::config_value);
                // Settled by a reply or a refusal; a transient failure
                // (LOADING…) is asked again next poll.
                if reply.is_some() || self.refused.contains("CONFIG GET") {
                    self.databases = Some(databases.and_then(|d| u32::try_from(d).ok()));
                }
            }
            // Without CONFIG GET (the least-privilege user has none: it
            // would read requirepass too), rows are kept for every database
            // seen since the agent started, so one that empties keeps its
            // row at zero instead of vanishing.
            let highest = info
                .keyspace()
                .iter()
                .map(|row| row.db.saturating_add(1))
                .max();
            self.databases_seen = self.databases_seen.max(highest.unwrap_or(0));
            extras.databases = self
                .databases
                .flatten()
                .or((self.databases_seen > 0).then_some(self.databases_seen));
            if slow_due {
                self.read_slow_commands(&info).await;
            }
            if let Some(slow) = &self.slow {
                extras.slowlog_len = slow.slowlog_len;
                extras.slowlog_last = slow.slowlog_last;
                extras.large_requests = slow.large_requests;
                extras.large_replies = slow.large_replies;
                extras.latency = slow.latency.clone();
            }
        }
        self.polls_since_slow = if slow_due {
            0
        } else {
            self.polls_since_slow.saturating_add(1)
        };
        if self.clients.due() {
            let reply = self.optional_query("CLIENT", &["LIST"]).await;
            let refused = self.refused.contains("CLIENT LIST");
            let over_budget = reply.is_none() && self.budget.exceeded();
            self.clients
                .answered(&self.status.name, reply, refused, over_budget);
        }
        extras.clients = self.clients.latest();
        if self.keys.due() {
            if let Some(connection) = self.connection.as_mut() {
                if let Err(lost) = self
                    .keys
                    .run(&self.status.name, connection, &self.budget)
                    .await
                {
                    // INFO was read: the poll stands; the next connects again.
                    debug!(instance = %self.status.name, "key check: {}; connecting again at the next poll", lost.0);
                    self.connection = None;
                }
            }
        }
        extras.keys = self.keys.latest();
        Ok((info, extras))
    }

    /// The costly optional commands, on the slow cadence: SLOWLOG, Valkey's
    /// COMMANDLOG lengths, LATENCY LATEST. What a command does not answer
    /// is absent until the next slow read.
    async fn read_slow_commands(&mut self, info: &Info) {
        let slow = self.slow_parts();
        slow.slowlog_len = None;
        slow.slowlog_last = None;
        slow.large_requests = None;
        slow.large_replies = None;
        slow.latency.clear();
        if let Some(reply) = self.optional_query("SLOWLOG", &["LEN"]).await {
            self.slow_parts().slowlog_len = replies::slowlog_len(&reply);
        }
        if self.instance.slowlog_entries {
            if let Some(reply) = self.optional_query("SLOWLOG", &["GET", "1"]).await {
                self.slow_parts().slowlog_last = replies::slowlog_newest(&reply);
            }
        }
        // Valkey 8.1+ logs large requests and replies beside slow
        // commands. Asked only of servers that have COMMANDLOG: on the
        // others the refusal would count in the server's own error
        // statistics (total_error_replies, errorstat_ERR).
        if info.has_commandlog() {
            if let Some(reply) = self
                .optional_query("COMMANDLOG", &["LEN", "large-request"])
                .await
            {
                self.slow_parts().large_requests = replies::slowlog_len(&reply);
                if let Some(reply) = self
                    .optional_query("COMMANDLOG", &["LEN", "large-reply"])
                    .await
                {
                    self.slow_parts().large_replies = replies::slowlog_len(&reply);
                }
            }
        }
        if let Some(reply) = self.optional_query("LATENCY", &["LATEST"]).await {
            self.slow_parts().latency = replies::latency_latest(&reply);
        }
    }

    fn slow_parts(&mut self) -> &mut SlowParts {
        self.slow.get_or_insert_with(SlowParts::default)
    }

    /// INFO, with the fields of CLUSTER INFO added on cluster nodes. When
    /// the costly parts are not `slow_due`, plain `INFO`, with the sections
    /// only the richer variant returns added as last read.
    async fn read_info(&mut self, slow_due: bool) -> Result<Info, PollError> {
        let richer = self.info_variant + 1 < INFO_SECTIONS.len();
        let mut text = if slow_due || !richer {
            let text = self.read_info_text().await?;
            if richer {
                self.slow_parts().sections = sections(&text);
            }
            text
        } else {
            let text = self.query_info(None).await?;
            match &self.slow {
                Some(slow) => with_slow_sections(text, &slow.sections),
                None => text,
            }
        };
        let info = Info::parse_bytes(&text);
        if info.get("cluster_enabled") != Some("1") {
            return Ok(info);
        }
        // A cluster node: its CLUSTER INFO fields join INFO's, parsed once more.
        let Some(cluster) = self.optional_query("CLUSTER", &["INFO"]).await else {
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

    /// An optional command: its reply, or `None` when the server refuses it
    /// (logged once per instance, then not asked again) or fails. A server
    /// that is busy for a while (loading its dataset, running a script)
    /// has not refused: the command is asked again on the next poll.
    async fn optional_query(
        &mut self,
        command: &'static str,
        args: &[&str],
    ) -> Option<redis::Value> {
        let what = match args.first() {
            Some(sub) => format!("{command} {sub}"),
            None => command.to_string(),
        };
        if self.refused.contains(&what) {
            return None;
        }
        let connection = self.connection.as_mut()?;
        self.budget.renew();
        let reply: redis::RedisResult<redis::Value> =
            redis::cmd(command).arg(args).query_async(connection).await;
        match reply {
            Ok(value) => Some(value),
            Err(_) if self.budget.exceeded() => {
                // The connection is gone with the reply: the next poll
                // connects again, and asks again.
                warn!(
                    instance = %self.status.name,
                    "the reply to {what} was over the {}-byte limit (max_reply_bytes); connection closed",
                    self.budget.max()
                );
                self.connection = None;
                None
            }
            Err(e) if e.code().is_some_and(is_transient) => {
                debug!(instance = %self.status.name, "{what} not now: {}", describe(&e));
                None
            }
            Err(e) if e.code().is_some() => {
                info!(
                    instance = %self.status.name,
                    "Redis refuses {what} ({}); the objects it feeds stay absent",
                    describe(&e)
                );
                self.refused.insert(what);
                None
            }
            Err(e) => {
                debug!(instance = %self.status.name, "{what} failed: {}", describe(&e));
                None
            }
        }
    }

    /// `INFO [section]`, the budget renewed for its reply: the reply as
    /// the server gave it, or, when it ran over the budget, why not.
    async fn info_reply(
        &mut self,
        section: Option<&str>,
    ) -> Result<redis::RedisResult<Vec<u8>>, PollError> {
        let Some(connection) = self.connection.as_mut() else {
            return Err("not connected".to_string().into());
        };
        let mut command = redis::cmd("INFO");
        if let Some(section) = section {
            command.arg(section);
        }
        self.budget.renew();
        let reply = command.query_async(connection).await;
        if reply.is_err() && self.budget.exceeded() {
            return Err(self.over_budget("INFO"));
        }
        Ok(reply)
    }

    /// One `INFO [section]`, its reply checked against the reply budget.
    async fn query_info(&mut self, section: Option<&str>) -> Result<Vec<u8>, PollError> {
        match self.info_reply(section).await? {
            Ok(text) if !text.is_empty() => Ok(text),
            Ok(_) => Err("INFO returned nothing".to_string().into()),
            Err(e) => Err(PollError::from(&e)),
        }
    }

    /// INFO in the richest variant this server understands, trying the
    /// next of `INFO_SECTIONS` when an old server refuses a section.
    async fn read_info_text(&mut self) -> Result<Vec<u8>, PollError> {
        loop {
            let section = INFO_SECTIONS.get(self.info_variant).copied().flatten();
            let reply = self.info_reply(section).await?;
            let last_variant = self.info_variant + 1 >= INFO_SECTIONS.len();
            match reply {
                Ok(text) if !text.is_empty() => return Ok(text),
                Ok(_) if !last_variant => self.info_variant += 1,
                Ok(_) => return Err("INFO returned nothing".to_string().into()),
                // A server-side error to a section argument means an old
                // server; an I/O error means the connection is gone.
                Err(e) if !last_variant && e.code() == Some("ERR") => self.info_variant += 1,
                Err(e) => return Err(PollError::from(&e)),
            }
        }
    }

    /// Why a poll failed when the reply to `what` ran over the budget
    /// (the connection ends with it).
    fn over_budget(&self, what: &str) -> PollError {
        format!(
            "the reply to {what} was over the {}-byte limit (max_reply_bytes)",
            self.budget.max()
        )
        .into()
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

/// Why a poll failed: the words for the log and `redisInstanceLastError`,
/// and whether a connection that was established broke on the way.
struct PollError {
    text: String,
    lost_connection: bool,
}

impl From<String> for PollError {
    fn from(text: String) -> Self {
        PollError {
            text,
            lost_connection: false,
        }
    }
}

impl From<&redis::RedisError> for PollError {
    fn from(e: &redis::RedisError) -> Self {
        PollError {
            text: describe(e),
            // Not a timeout: a hung server would make the retry wait again.
            lost_connection: e.is_connection_dropped() && !e.is_timeout(),
        }
    }
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

    /// The error a server's reply `-LINE` becomes.
    fn server_error(line: &str) -> redis::RedisError {
        let value = redis::parse_redis_value(format!("-{line}\r\n").as_bytes()).unwrap();
        value.extract_error().unwrap_err()
    }

    #[test]
    fn a_dropped_connection_is_worth_a_retry_a_timeout_is_not() {
        let dropped = redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert!(PollError::from(&dropped).lost_connection);
        let timeout = redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::TimedOut));
        assert!(!PollError::from(&timeout).lost_connection);
        assert!(!PollError::from(&server_error("ERR no")).lost_connection);
    }
}
