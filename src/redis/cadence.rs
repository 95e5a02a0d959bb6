//! The slow cadence of a poll: which polls read the costly parts
//! (`Schedule`, pure), and what they read (`SlowParts`): `INFO
//! everything` (commandstats and latencystats, served as last read by the
//! plain `INFO` of the polls between), `SLOWLOG LEN`, Valkey's
//! `COMMANDLOG` lengths and `LATENCY LATEST`.

use super::client::{Client, PollError};
use super::info::Info;
use super::readings::Extras;
use super::replies;
use std::collections::HashSet;
use std::time::Duration;

/// When to poll, and which polls read the costly parts: pure, judged on
/// plain values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Schedule {
    pub(super) refresh: Duration,
    /// Polls between two reads of the costly parts (1: every poll).
    slow_every: u32,
    /// Polls since the costly parts were read; `None`: not on this
    /// connection (a new connection may be a new server).
    since_slow: Option<u32>,
}

impl Schedule {
    /// `slow_refresh`: how often the costly parts are read (rounded to a
    /// whole number of refresh intervals, at least one).
    pub(super) fn new(refresh: Duration, slow_refresh: Duration) -> Self {
        Schedule {
            refresh,
            slow_every: slow_every(refresh, slow_refresh),
            since_slow: None,
        }
    }

    /// Whether this poll reads the costly parts.
    pub(super) fn slow_due(&self) -> bool {
        self.since_slow
            .is_none_or(|since| since.saturating_add(1) >= self.slow_every)
    }

    /// A poll was made, reading the costly parts or not.
    pub(super) fn polled(&mut self, slow_read: bool) {
        self.since_slow = Some(match self.since_slow {
            Some(since) if !slow_read => since.saturating_add(1),
            _ => 0,
        });
    }

    /// Whether the last poll read the costly parts.
    pub(super) fn slow_read(&self) -> bool {
        self.since_slow == Some(0)
    }

    /// A new connection: everything read afresh.
    pub(super) fn new_connection(&mut self) {
        self.since_slow = None;
    }
}

/// What the slow cadence read: INFO's sections that plain `INFO` does not
/// return (raw text, `# Section` headers included), and the optional
/// commands' answers.
#[derive(Default)]
pub(super) struct SlowParts {
    sections: Vec<(String, Vec<u8>)>,
    slowlog_len: Option<u64>,
    slowlog_last: Option<replies::SlowlogEntry>,
    large_requests: Option<u64>,
    large_replies: Option<u64>,
    latency: Vec<replies::LatencyEvent>,
}

impl SlowParts {
    /// What the slow cadence read last, for this poll's rows.
    pub(super) fn serve(&self, extras: &mut Extras) {
        extras.slowlog_len = self.slowlog_len;
        extras.slowlog_last = self.slowlog_last;
        extras.large_requests = self.large_requests;
        extras.large_replies = self.large_replies;
        extras.latency = self.latency.clone();
    }

    /// The costly optional commands, on the slow cadence: SLOWLOG, Valkey's
    /// COMMANDLOG lengths, LATENCY LATEST. What a command does not answer
    /// is absent until the next slow read.
    pub(super) async fn read(&mut self, client: &mut Client, info: &Info) {
        self.slowlog_len = None;
        self.slowlog_last = None;
        self.large_requests = None;
        self.large_replies = None;
        self.latency.clear();
        if let Some(reply) = client.optional("SLOWLOG", &["LEN"]).await {
            self.slowlog_len = replies::slowlog_len(&reply);
        }
        // The slow log watch asks SLOWLOG GET 1 on every poll when it is on.
        let instance = client.instance();
        if instance.slowlog_entries && !instance.slow_commands.enabled {
            if let Some(reply) = client.optional("SLOWLOG", &["GET", "1"]).await {
                self.slowlog_last = replies::slowlog_newest(&reply);
            }
        }
        // Valkey 8.1+ logs large requests and replies beside slow
        // commands. Asked only of servers that have COMMANDLOG: on the
        // others the refusal would count in the server's own error
        // statistics (total_error_replies, errorstat_ERR).
        if info.has_commandlog() {
            if let Some(reply) = client
                .optional("COMMANDLOG", &["LEN", "large-request"])
                .await
            {
                self.large_requests = replies::slowlog_len(&reply);
                if let Some(reply) = client.optional("COMMANDLOG", &["LEN", "large-reply"]).await {
                    self.large_replies = replies::slowlog_len(&reply);
                }
            }
        }
        if let Some(reply) = client.optional("LATENCY", &["LATEST"]).await {
            self.latency = replies::latency_latest(&reply);
        }
    }

    /// INFO, with the fields of CLUSTER INFO added on cluster nodes. When
    /// the costly parts are not `slow_due`, plain `INFO`, with the sections
    /// only the richer variant returns added as last read.
    pub(super) async fn read_info(
        &mut self,
        client: &mut Client,
        slow_due: bool,
    ) -> Result<Info, PollError> {
        let richer = client.richer_info();
        let mut text = if slow_due || !richer {
            let text = client.richest_info().await?;
            if richer {
                self.sections = sections(&text);
            }
            text
        } else {
            let text = client.plain_info().await?;
            with_slow_sections(text, &self.sections)
        };
        let info = Info::parse_bytes(&text);
        if info.get("cluster_enabled") != Some("1") {
            return Ok(info);
        }
        // A cluster node: its CLUSTER INFO fields join INFO's, parsed once more.
        let Some(cluster) = client.optional("CLUSTER", &["INFO"]).await else {
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
