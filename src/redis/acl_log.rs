//! Who the server refuses: `ACL LOG`, aggregated per reason, user and
//! client address (`redisAclRefusalTable`), and bursts of refusals
//! (`redisAuthFailureBurst` and its clear), judged by pure code.
//!
//! What the servers send, from their own source (redis/redis `src/acl.c`
//! at 4f8cdc2a, `aclCommand`'s `log` branch and `addACLLogEntry`;
//! valkey-io/valkey `src/acl.c` at 55bbbe09, the same): `ACL LOG <n>` is
//! an array of the newest `n` entries, newest first, each a map (an array
//! of name, value pairs in RESP2) of `count`, `reason` (`command`, `key`,
//! `channel`, `auth`, else `unknown`), `context` (`toplevel`, `multi`,
//! `lua`, `module`), `object` (the command, key or channel; `AUTH` for a
//! failed authentication), `username` (for a failed AUTH, the name the
//! client gave: any bytes), `age-seconds` (a double, since the last
//! update), `client-info` (the CLIENT LIST line of the last client, with
//! `addr=`), and since Redis 7.2 `entry-id`, `timestamp-created` and
//! `timestamp-last-updated` (UNIX milliseconds). Redis 6.2 and 7.0 send the
//! first seven only (tests/fixtures/redis/*-acl-log.resp).
//!
//! Redis merges a refusal into an entry of the same reason, context,
//! object and user last updated within 60 s (`ACLLogMatchEntry`,
//! `ACL_LOG_GROUPING_MAX_TIME_DELTA`, among the 10 newest entries): the
//! entry's `count` grows, its `timestamp-last-updated` and `client-info`
//! become the new ones, and it moves to the head. A new entry takes the
//! next `entry-id` (a counter of the server's life that `ACL LOG RESET`
//! does not reset). So every new refusal changes the head entry, which is
//! what the cheap probe (`ACL LOG 1`, every poll) looks at before the
//! whole log (`ACL LOG 128`, the default `acllog-max-len`) is read.
//!
//! New refusals between two reads ([`Arrivals`]) are count deltas per
//! entry: per (`entry-id`, `timestamp-created`) where the server sends
//! them, else per (reason, context, object, user), summed over that
//! kind's entries (Redis before 7.2: a reset, or an entry trimmed off the
//! log, hides new refusals until the sum passes the old one; never a
//! false count). The first read is the baseline: an agent that starts
//! counts nothing of what the log already holds.

use super::client::Client;
use super::clients::AGENT_CLIENT_NAME;
use super::observation::AclRefusals;
use super::replies::{bytes, fields, items, number, text};
use crate::config::RedisInstance;
use crate::metrics::{fnv1a, row_key, AclField, AclReason, ACL_REFUSAL_TABLE};
use crate::smi::{display_string, saturate_u32, Value as SnmpValue};
use redis::Value;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Entries asked for at most: Redis's and Valkey's default
/// `acllog-max-len`, so the whole log of a server left at its default.
pub const LOG_ENTRIES: usize = 128;
/// The longest user name or address a row shows (longer ones are cut; the
/// row is still the whole name's).
pub const MAX_TEXT_LEN: usize = 64;

/// One entry of `ACL LOG`, as far as the agent needs it. Text from the
/// server is kept bounded and printable; identities are hashes of the
/// whole bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub count: u64,
    pub reason: AclReason,
    /// The user, escaped and cut to [`MAX_TEXT_LEN`].
    pub user: String,
    /// The client's host (`addr=` without its port), escaped and cut.
    pub address: String,
    /// Milliseconds since the entry was last updated (`age-seconds`).
    pub age_ms: u64,
    /// `entry-id` and `timestamp-created` (Redis 7.2+, Valkey).
    pub id: Option<(u64, u64)>,
    /// `timestamp-last-updated`, UNIX milliseconds (Redis 7.2+, Valkey).
    pub updated_ms: Option<u64>,
    /// The entry's kind: reason, context, object and user, hashed whole.
    kind: u64,
    /// The row it counts in: reason, user and address, hashed whole.
    row: u64,
    /// Everything but the age, hashed: changes with every new refusal
    /// that lands on this entry (the probe's signature).
    signature: u64,
    /// Whether the last refused client was the agent itself (its
    /// connection's name, `redis-snmp`): its own refusals (a grant left
    /// out, asked once per connection) are served but never counted.
    own: bool,
}

/// `text` made printable and at most [`MAX_TEXT_LEN`] bytes.
fn bounded(text: &str) -> String {
    let text = crate::text::printable(text);
    if text.len() <= MAX_TEXT_LEN {
        return text;
    }
    let mut end = MAX_TEXT_LEN;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

/// The host of a CLIENT LIST `addr=` (`127.0.0.1:5000`, `[::1]:5000`,
/// `/run/redis.sock:0`): the text before its last `:`, brackets removed.
fn host_of(addr: &str) -> &str {
    let host = addr.rsplit_once(':').map_or(addr, |(host, _)| host);
    host.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
}

/// The value of `name=` in a CLIENT LIST line.
fn client_field<'a>(info: &'a str, name: &str) -> Option<&'a str> {
    info.split(' ')
        .find_map(|pair| pair.split_once('=').filter(|(k, _)| *k == name))
        .map(|(_, v)| v)
}

/// Seconds with a fraction (a RESP3 double, or its text) in milliseconds.
fn millis(value: &Value) -> Option<u64> {
    let secs = match value {
        Value::Double(d) => *d,
        other => text(other)?.trim().parse::<f64>().ok()?,
    };
    (secs.is_finite() && secs >= 0.0).then(|| (secs * 1000.0).min(u64::MAX as f64) as u64)
}

fn hash(parts: &[&[u8]]) -> u64 {
    let mut joined = Vec::new();
    for part in parts {
        joined.extend_from_slice(&(part.len() as u64).to_le_bytes());
        joined.extend_from_slice(part);
    }
    fnv1a(&joined)
}

impl Entry {
    /// One entry; `None` for one without a count or a reason.
    fn parse(value: &Value) -> Option<Entry> {
        let (mut count, mut reason) = (None, None);
        let (mut context, mut object, mut user, mut info) = (vec![], vec![], vec![], vec![]);
        let (mut age_ms, mut entry_id, mut created, mut updated) = (0, None, None, None);
        // User names and objects may be any bytes: kept raw until shown.
        let raw = |value| bytes(value).unwrap_or_default();
        for (name, value) in fields(value) {
            match name.as_str() {
                "count" => count = number(value),
                "reason" => reason = Some(raw(value)),
                "context" => context = raw(value),
                "object" => object = raw(value),
                "username" => user = raw(value),
                "age-seconds" => age_ms = millis(value).unwrap_or(0),
                "client-info" => info = raw(value),
                "entry-id" => entry_id = number(value),
                "timestamp-created" => created = number(value),
                "timestamp-last-updated" => updated = number(value),
                _ => {}
            }
        }
        let (count, reason_bytes) = (count?, reason?);
        let reason = AclReason::from_label(&String::from_utf8_lossy(&reason_bytes))
            .unwrap_or(AclReason::Unknown);
        let info_text = String::from_utf8_lossy(&info);
        let addr = client_field(&info_text, "addr").map(host_of).unwrap_or("");
        let id = entry_id.zip(created);
        let mut signature = vec![count.to_le_bytes().to_vec(), info.clone()];
        if let Some((i, c)) = id {
            signature.push(i.to_le_bytes().to_vec());
            signature.push(c.to_le_bytes().to_vec());
        }
        signature.push(updated.unwrap_or(0).to_le_bytes().to_vec());
        let kind = hash(&[&reason_bytes, &context, &object, &user]);
        signature.push(kind.to_le_bytes().to_vec());
        let signature: Vec<&[u8]> = signature.iter().map(Vec::as_slice).collect();
        Some(Entry {
            count,
            reason,
            user: bounded(&String::from_utf8_lossy(&user)),
            address: bounded(addr),
            age_ms,
            id,
            updated_ms: updated,
            kind,
            row: hash(&[&reason_bytes, &user, addr.as_bytes()]),
            signature: hash(&signature),
            own: client_field(&info_text, "name") == Some(AGENT_CLIENT_NAME),
        })
    }

    /// When it was last updated, in UNIX seconds, `now_ms` being now.
    fn last_seen(&self, now_ms: u64) -> u64 {
        self.updated_ms
            .unwrap_or(now_ms.saturating_sub(self.age_ms))
            / 1000
    }
}

/// The entries of an `ACL LOG` reply, at most [`LOG_ENTRIES`], newest
/// first; anything of another shape is skipped.
pub fn parse(reply: &Value) -> Vec<Entry> {
    items(reply)
        .iter()
        .take(LOG_ENTRIES)
        .filter_map(Entry::parse)
        .collect()
}

/// One row of `redisAclRefusalTable`: the refusals the log holds for one
/// reason, user and client address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusalRow {
    /// The row's index: the hash of its reason, user and address, in
    /// `1..=2147483647`, the same at every read and after a restart.
    pub number: u32,
    pub reason: AclReason,
    pub user: String,
    pub address: String,
    /// The counts of its entries, summed.
    pub count: u64,
    /// The newest update of its entries, UNIX seconds.
    pub last_seen: u64,
}

impl RefusalRow {
    pub fn value(&self, field: AclField, instance: &str) -> Option<SnmpValue> {
        Some(match field {
            AclField::Reason => SnmpValue::Integer(self.reason.number()),
            AclField::User => display_string(&self.user),
            AclField::Address => display_string(&self.address),
            AclField::Count => SnmpValue::Gauge32(saturate_u32(self.count)),
            AclField::LastSeen => SnmpValue::Counter64(self.last_seen),
            AclField::Key => display_string(&row_key(instance, &self.number.to_string())),
        })
    }
}

/// The row number of a row hash: `1..=2147483647`.
fn row_number(row: u64) -> u32 {
    (row % (i32::MAX as u64)) as u32 + 1
}

/// The entries aggregated per row, newest first, at most `max_rows`; and
/// how many rows were left out (over the cap, or sharing a row number
/// with another row: a hash collision, counted rather than merged).
pub fn aggregate(entries: &[Entry], max_rows: usize, now_ms: u64) -> (Vec<RefusalRow>, u64) {
    let mut rows: Vec<(u64, RefusalRow)> = Vec::new();
    let mut left_out = 0;
    for entry in entries {
        let number = row_number(entry.row);
        match rows.iter_mut().find(|(_, r)| r.number == number) {
            Some((row, r)) if *row == entry.row => {
                r.count = r.count.saturating_add(entry.count);
                r.last_seen = r.last_seen.max(entry.last_seen(now_ms));
            }
            Some(_) => left_out += 1,
            None => rows.push((
                entry.row,
                RefusalRow {
                    number,
                    reason: entry.reason,
                    user: entry.user.clone(),
                    address: entry.address.clone(),
                    count: entry.count,
                    last_seen: entry.last_seen(now_ms),
                },
            )),
        }
    }
    let mut rows: Vec<RefusalRow> = rows.into_iter().map(|(_, r)| r).collect();
    rows.sort_by(|a, b| b.last_seen.cmp(&a.last_seen).then(a.number.cmp(&b.number)));
    if rows.len() > max_rows {
        left_out += (rows.len() - max_rows) as u64;
        rows.truncate(max_rows);
    }
    (rows, left_out)
}

/// What the last read of the log held, to tell new refusals from old.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Known {
    /// Counts per (`entry-id`, `timestamp-created`).
    ById(HashMap<(u64, u64), u64>),
    /// Counts per kind of entry, summed (servers without `entry-id`).
    ByKind(HashMap<u64, u64>),
}

impl Known {
    fn of(entries: &[Entry]) -> Known {
        if !entries.is_empty() && entries.iter().all(|e| e.id.is_some()) {
            Known::ById(
                entries
                    .iter()
                    .filter_map(|e| Some((e.id?, e.count)))
                    .collect(),
            )
        } else {
            let mut sums: HashMap<u64, u64> = HashMap::new();
            for e in entries {
                let sum = sums.entry(e.kind).or_default();
                *sum = sum.saturating_add(e.count);
            }
            Known::ByKind(sums)
        }
    }
}

/// New refusals between reads of the log. Pure: fed the parsed entries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Arrivals {
    /// `None` until the first read: the baseline.
    known: Option<Known>,
}

impl Arrivals {
    /// The refusals `entries` (a whole read of the log) hold that the
    /// last read did not. The first read counts none. An empty log (after
    /// `ACL LOG RESET`) counts none and is the new baseline.
    pub fn arrived(&mut self, entries: &[Entry]) -> u64 {
        let others: Vec<Entry> = entries.iter().filter(|e| !e.own).cloned().collect();
        let now = Known::of(&others);
        let new = match (&self.known, &now) {
            (Some(Known::ById(before)), Known::ById(after)) => after
                .iter()
                .map(|(id, count)| count.saturating_sub(before.get(id).copied().unwrap_or(0)))
                .fold(0u64, u64::saturating_add),
            // An empty baseline (a reset, or a quiet server): every count is new.
            (Some(Known::ByKind(before)), Known::ById(after)) if before.is_empty() => {
                after.values().fold(0u64, |a, c| a.saturating_add(*c))
            }
            (Some(Known::ByKind(before)), Known::ByKind(after)) => after
                .iter()
                .map(|(kind, sum)| sum.saturating_sub(before.get(kind).copied().unwrap_or(0)))
                .fold(0u64, u64::saturating_add),
            // The first read, or the server changed its kind of reply.
            _ => 0,
        };
        self.known = Some(now);
        new
    }
}

/// What the agent serves of the ACL log of one instance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AclReport {
    /// Newest first.
    pub rows: Vec<RefusalRow>,
    /// Rows the cap (or a row-number collision) left out: counted in
    /// `redisInstanceRowsLeftOut`.
    pub left_out: u64,
}

/// The ACL log of one instance, asked at every poll: `ACL LOG 1` (one
/// entry), and the whole log only when its head changed.
pub struct AclWatch {
    enabled: bool,
    arrivals: Arrivals,
    /// `acl_burst_refusals` and `acl_burst_window`, for the judge.
    threshold: u64,
    window: Duration,
    /// The refusals that arrived in the last read, until reported.
    arrived: Option<(u64, Instant)>,
    /// The head entry's signature at the last whole read.
    head: Option<u64>,
    report: Option<AclReport>,
    /// Refusals counted since the agent started.
    counted: u64,
}

impl AclWatch {
    /// The instance's ACL LOG, as `acl_log` and the burst settings say.
    pub fn of(instance: &RedisInstance) -> Self {
        AclWatch::new(
            instance.acl_log,
            instance.acl_burst_refusals,
            instance.acl_burst_window,
        )
    }

    pub fn new(enabled: bool, threshold: u64, window: Duration) -> Self {
        AclWatch {
            enabled,
            arrivals: Arrivals::default(),
            threshold,
            window,
            arrived: None,
            head: None,
            report: None,
            counted: 0,
        }
    }

    /// Reads what changed in the log. A server that refuses `ACL LOG`
    /// (no `+acl|log`) is said once per connection by the client; the
    /// objects stay absent and nothing is judged.
    pub async fn read(&mut self, client: &mut Client, now_unix_ms: u64) {
        if !self.enabled {
            return;
        }
        let Some(probe) = client.optional("ACL", &["LOG", "1"]).await else {
            if client.refused("ACL LOG") || !client.is_connected() {
                self.report = None;
            }
            return;
        };
        let head = parse(&probe).first().map(|e| e.signature);
        let entries = if head == self.head && self.report.is_some() {
            None
        } else {
            let limit = LOG_ENTRIES.to_string();
            match client.optional("ACL", &["LOG", limit.as_str()]).await {
                Some(reply) => Some(parse(&reply)),
                None => {
                    self.report = None;
                    return;
                }
            }
        };
        self.observe(entries, now_unix_ms);
    }

    /// A read: the whole log when it changed (`None`: its head did not).
    fn observe(&mut self, entries: Option<Vec<Entry>>, now_unix_ms: u64) {
        let mut report = self.report.take().unwrap_or_default();
        let mut new = 0;
        if let Some(entries) = entries {
            self.head = entries.first().map(|e| e.signature);
            new = self.arrivals.arrived(&entries);
            let max_rows = ACL_REFUSAL_TABLE.max_rows.unwrap_or(LOG_ENTRIES);
            (report.rows, report.left_out) = aggregate(&entries, max_rows, now_unix_ms);
        }
        self.counted = self.counted.saturating_add(new);
        let before = self.arrived.map_or(0, |(n, _)| n);
        self.arrived = Some((before.saturating_add(new), Instant::now()));
        self.report = Some(report);
    }

    /// Refusals counted since the agent started, and in the last read.
    pub fn counts(&self) -> (u64, u64) {
        (self.counted, self.arrived.map_or(0, |(new, _)| new))
    }

    /// The `redisArNumber` of the newest row, if any.
    pub fn newest_row(&self) -> Option<u32> {
        self.report.as_ref()?.rows.first().map(|r| r.number)
    }

    /// What to serve: `None` where the log is not read.
    pub fn latest(&self) -> Option<AclReport> {
        self.report.clone()
    }

    /// The refusals that arrived in the reads since the last call, for
    /// the judge (`None`: the log was not read since).
    pub fn take_refusals(&mut self) -> Option<AclRefusals> {
        let (new, at) = self.arrived.take()?;
        Some(AclRefusals {
            new,
            at,
            threshold: self.threshold,
            window: self.window,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Value {
        let path = format!(
            "{}/tests/fixtures/redis/{name}-acl-log.resp",
            env!("CARGO_MANIFEST_DIR")
        );
        redis::parse_redis_value(&std::fs::read(path).unwrap()).unwrap()
    }

    const ALL: [&str; 5] = ["6.2", "7.0", "8.2", "valkey-8.0", "valkey-9.1"];

    /// The captures (tests/fixtures/redis/README.md): three failed AUTHs
    /// as `app` (merged in one entry), one as `mallory`, a refused SET, a
    /// refused key read twice (merged) and a refused channel.
    #[test]
    fn real_acl_logs_of_every_server() {
        for server in ALL {
            let entries = parse(&fixture(server));
            let summary: Vec<(AclReason, &str, u64)> = entries
                .iter()
                .map(|e| (e.reason, e.user.as_str(), e.count))
                .collect();
            assert_eq!(
                summary,
                [
                    (AclReason::Channel, "app", 1),
                    (AclReason::Key, "app", 2),
                    (AclReason::Command, "app", 1),
                    (AclReason::Auth, "mallory", 1),
                    (AclReason::Auth, "app", 3),
                ],
                "{server}"
            );
            assert!(entries.iter().all(|e| e.address == "127.0.0.1"), "{server}");
            let with_ids = !server.starts_with("6.") && !server.starts_with("7.");
            assert_eq!(entries.iter().all(|e| e.id.is_some()), with_ids, "{server}");
            if with_ids {
                let ids: Vec<u64> = entries.iter().map(|e| e.id.unwrap().0).collect();
                assert_eq!(ids, [4, 3, 2, 1, 0], "{server}");
                // The merged entries were updated after their creation.
                let key = &entries[1];
                assert!(key.updated_ms.unwrap() > key.id.unwrap().1, "{server}");
            }
            let (rows, left_out) = aggregate(&entries, 100, 1_800_000_000_000);
            assert_eq!((rows.len(), left_out), (5, 0), "{server}");
            let (rows, left_out) = aggregate(&entries, 2, 1_800_000_000_000);
            assert_eq!((rows.len(), left_out), (2, 3), "{server}");
        }
    }

    #[test]
    fn rows_are_per_reason_user_and_host_and_keep_their_number() {
        let entry = |reason: &str, user: &str, addr: &str, count: i64, updated: i64| {
            Value::Array(vec![
                Value::BulkString(b"count".to_vec()),
                Value::Int(count),
                Value::BulkString(b"reason".to_vec()),
                Value::BulkString(reason.into()),
                Value::BulkString(b"username".to_vec()),
                Value::BulkString(user.into()),
                Value::BulkString(b"client-info".to_vec()),
                Value::BulkString(format!("id=1 addr={addr} laddr=x").into_bytes()),
                Value::BulkString(b"timestamp-last-updated".to_vec()),
                Value::Int(updated),
            ])
        };
        let reply = Value::Array(vec![
            entry("auth", "app", "10.0.0.1:5000", 2, 9_000),
            entry("auth", "app", "10.0.0.1:6000", 3, 5_000),
            entry("auth", "app", "[::1]:6000", 1, 4_000),
            entry("weird", "\u{1b}[2Jx", "/run/redis.sock:0", 1, 3_000),
        ]);
        let (rows, _) = aggregate(&parse(&reply), 10, 0);
        let seen: Vec<(AclReason, &str, &str, u64, u64)> = rows
            .iter()
            .map(|r| {
                (
                    r.reason,
                    r.user.as_str(),
                    r.address.as_str(),
                    r.count,
                    r.last_seen,
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                (AclReason::Auth, "app", "10.0.0.1", 5, 9),
                (AclReason::Auth, "app", "::1", 1, 4),
                (AclReason::Unknown, "\\u{1b}[2Jx", "/run/redis.sock", 1, 3),
            ]
        );
        let (again, _) = aggregate(&parse(&reply), 10, 0);
        assert_eq!(rows, again);
        assert!(rows
            .iter()
            .all(|r| (1..=i32::MAX as u32).contains(&r.number)));
        // A user name of any length is cut to a bounded one.
        let long = Value::Array(vec![entry("auth", &"u".repeat(10_000), "h:1", 1, 0)]);
        assert_eq!(parse(&long)[0].user.len(), MAX_TEXT_LEN);
        // Garbage is skipped, not trusted.
        let junk = Value::Array(vec![Value::Int(3), Value::Array(vec![Value::Nil])]);
        assert!(parse(&junk).is_empty());
        assert!(parse(&Value::Nil).is_empty());
    }

    /// Entry `id` of count `count`, updated at `updated` (7.2+ shape).
    fn with_id(id: u64, count: u64) -> Entry {
        let mut e = parse(&fixture("8.2"))[0].clone();
        e.id = Some((id, 1_000 + id));
        e.count = count;
        e
    }

    #[test]
    fn new_refusals_are_count_deltas_and_the_first_read_is_the_baseline() {
        let mut arrivals = Arrivals::default();
        // An agent that starts counts nothing of the log as it is.
        assert_eq!(arrivals.arrived(&[with_id(0, 50), with_id(1, 7)]), 0);
        assert_eq!(arrivals.arrived(&[with_id(0, 50), with_id(1, 7)]), 0);
        // Entry 1 merged 3 more refusals, entry 2 is new with 2.
        assert_eq!(
            arrivals.arrived(&[with_id(2, 2), with_id(1, 10), with_id(0, 50)]),
            5
        );
        // ACL LOG RESET: nothing new, and an empty baseline.
        assert_eq!(arrivals.arrived(&[]), 0);
        // After the reset, ids go on from the server's counter: all new.
        assert_eq!(arrivals.arrived(&[with_id(3, 4)]), 4);
        // A restarted server reuses ids with another creation time: new.
        let mut restarted = with_id(3, 1);
        restarted.id = Some((3, 99_999));
        assert_eq!(arrivals.arrived(&[restarted.clone()]), 1);
        // The agent's own refusals (its connection named redis-snmp) are
        // not counted.
        let mut own = with_id(4, 9);
        own.own = true;
        assert_eq!(arrivals.arrived(&[own, restarted]), 0);
    }

    #[test]
    fn without_ids_refusals_are_sums_per_kind() {
        let entries = parse(&fixture("7.0"));
        let mut arrivals = Arrivals::default();
        assert_eq!(arrivals.arrived(&entries), 0);
        let mut more = entries.clone();
        more[4].count += 6; // three failed AUTHs became nine
        assert_eq!(arrivals.arrived(&more), 6);
        // A reset counts nothing, nor does a log that shrank.
        assert_eq!(arrivals.arrived(&more[..2]), 0);
        assert_eq!(arrivals.arrived(&[]), 0);
        assert_eq!(arrivals.arrived(&entries[4..]), 3);
    }

    #[test]
    fn the_watch_serves_rows_and_reports_new_refusals_from_deltas() {
        let mut watch = AclWatch::new(true, 2, Duration::from_secs(60));
        assert_eq!(watch.take_refusals(), None);
        let entries = parse(&fixture("8.2"));
        watch.observe(Some(entries.clone()), 0);
        let report = watch.latest().unwrap();
        assert_eq!((report.rows.len(), watch.counts()), (5, (0, 0)));
        let first = watch.take_refusals().unwrap();
        assert_eq!((first.new, first.threshold), (0, 2));
        // The head unchanged: nothing read, nothing new, rows as they were.
        watch.observe(None, 0);
        assert_eq!(watch.latest().unwrap().rows, report.rows);
        let mut more = entries;
        more[4].count += 3;
        watch.observe(Some(more), 0);
        assert_eq!(watch.counts(), (3, 3));
        assert_eq!(watch.take_refusals().map(|r| r.new), Some(3));
        assert_eq!(watch.take_refusals(), None);
        assert_eq!(
            watch.newest_row(),
            Some(watch.latest().unwrap().rows[0].number)
        );
    }
}
