//! The keys and streams an operator names (`check_keys`, issue 16): each
//! key's type, length, TTL and, if asked, memory; each consumer group of a
//! stream with its consumers, pending entries, lag and largest idle time.
//!
//! What it costs Redis, and how it is bounded:
//! - It runs on its own cadence (`check_keys_interval`), in the poller,
//!   never while an SNMP request waits: the AgentX side reads the snapshot.
//! - Exact names need no SCAN. A pattern is resolved by `SCAN cursor MATCH
//!   pattern COUNT n`, one call per pattern per round (the rounds of all
//!   patterns pipelined), at most `check_keys_scan_calls` calls and
//!   `check_keys_scan_time` per check. A sweep of the keyspace that the
//!   budget cuts short goes on from its cursor at the next check, and
//!   `redisKcScanComplete` says false meanwhile; the keys found so far are
//!   served with those of the last complete sweep, so rows do not flicker.
//! - The keys to show (at most `check_keys_rows`, exact names first) are
//!   asked in three pipelines: TYPE, TTL (and MEMORY USAGE); the length
//!   command of each type and XINFO GROUPS of the streams; XINFO CONSUMERS
//!   of each group (at most `check_keys_groups` per stream). Every reply
//!   counts against `max_reply_bytes`.
//! - Memory: each pattern keeps at most `check_keys_rows` names per sweep;
//!   matches beyond are only counted (`redisKcKeysLeftOut`).
//!
//! A server error about one key or command (NOPERM where an ACL forbids
//! it, WRONGTYPE when a key changed type between two pipelines) is shown
//! in `redisCkError` or `redisKcLastError` and logged once; the
//! connection is kept.
//!
//! Key names can be secrets. With `key_names = "alias"` a key is shown as
//! `e<N>` (the Nth entry of `check_keys`, an exact name) or `e<N>-<hash>`
//! (a key the Nth entry's pattern matched: 64 bits of an HMAC of its name
//! keyed by the installation's secret, `key_alias_secret_file`, stable
//! across checks and restarts), the entry as `entry <N>`, and server
//! errors by their code alone (their texts may quote a name in any form):
//! the name is in no OID, value or log line. Without the secret a guessed
//! name cannot be confirmed from the tree.
//!
//! Bounded per name (issue 24, review L4): a name longer than
//! [`MAX_KEY_NAME_BYTES`], or in name mode one that cannot index a row, is
//! counted as left out, not kept, so junk names do not take the rows of
//! real ones; a reply over the budget (a few huge names) makes the next
//! check wait longer and ask SCAN for fewer names, instead of stopping key
//! checks until a restart.

use super::client::{Client, Lost};
use super::connection::describe;
use super::replies::{fields, items, number, text};
use crate::config::{KeyChecks, KeyNames};
use crate::metrics::{name_fits_index, KeyType, MAX_NAME_INDEX_LEN, MAX_SECOND_NAME_INDEX_LEN};
use redis::Value;
use std::collections::{BTreeSet, HashSet};
use std::time::{Duration, Instant};
use tracing::{debug, info, warn};

/// What the last check found, as served until the next one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyReport {
    pub keys: Vec<KeyRow>,
    /// Matches the row cap (or a name no index can hold) left out.
    pub keys_left_out: u64,
    /// Consumer groups the per-stream cap left out.
    pub groups_left_out: u64,
    /// Whether no pattern's sweep is cut short, waiting for the next check.
    pub scan_complete: bool,
    pub scan_calls: u32,
    pub millis: u32,
    /// Why the check failed in part; empty when it did not.
    pub error: String,
}

/// One row of `redisKeyTable`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRow {
    /// The key's name, or its alias: the row's index.
    pub label: String,
    /// The entry of `check_keys` that named or matched it (or `entry <N>`).
    pub entry: String,
    /// `None` when TYPE failed (see `error`).
    pub kind: Option<KeyType>,
    pub length: Option<u64>,
    pub ttl: Option<i64>,
    pub memory: Option<u64>,
    pub error: String,
    pub groups: Vec<GroupRow>,
}

/// One consumer group of a stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupRow {
    pub name: String,
    pub consumers: u64,
    pub pending: u64,
    /// Redis 7.0+; `None` where the server does not say (or says nil).
    pub lag: Option<u64>,
    pub last_delivered: String,
    /// The largest `idle` of its consumers, ms; `None` when XINFO
    /// CONSUMERS did not answer.
    pub max_idle: Option<u64>,
}

/// Whether an entry of `check_keys` is a glob pattern (SCAN MATCH's
/// syntax: `*`, `?` and `[…]`) rather than a key's exact name.
pub fn is_pattern(entry: &str) -> bool {
    entry.contains(['*', '?', '['])
}

/// One entry of `check_keys`.
struct Entry {
    /// 1-based position in `check_keys`.
    ordinal: usize,
    text: String,
    pattern: bool,
    sweep: Sweep,
}

/// A pattern's walk through the keyspace with SCAN, across checks.
#[derive(Debug, Default)]
pub struct Sweep {
    cursor: u64,
    /// Whether the current sweep has made a call (cursor 0 then means done).
    started: bool,
    found: BTreeSet<Vec<u8>>,
    /// Names beyond the cap the current sweep has seen.
    over: u64,
    /// The names and overflow of the last complete sweep.
    last: Option<(BTreeSet<Vec<u8>>, u64)>,
}

impl Sweep {
    /// The cursor to ask SCAN with.
    pub fn cursor(&self) -> u64 {
        self.cursor
    }

    /// Takes one SCAN reply (the next cursor, the names it returned),
    /// keeping at most `cap` names of those that `shown` can show (the
    /// others are only counted, so that junk names do not take the rows
    /// of real ones); true when the sweep is complete (the next check
    /// starts a new one).
    pub fn take(
        &mut self,
        next: u64,
        names: Vec<Vec<u8>>,
        cap: usize,
        shown: impl Fn(&[u8]) -> bool,
    ) -> bool {
        self.started = true;
        for name in names {
            if self.found.contains(&name) {
                continue; // SCAN may return a name twice
            }
            if self.found.len() < cap && shown(&name) {
                self.found.insert(name);
            } else {
                self.over = self.over.saturating_add(1);
            }
        }
        self.cursor = next;
        if next != 0 {
            return false;
        }
        self.last = Some((std::mem::take(&mut self.found), self.over));
        self.over = 0;
        self.started = false;
        true
    }

    /// Whether a sweep is under way (its budget ran out before its end).
    pub fn midway(&self) -> bool {
        self.started
    }

    /// The names to show: the last complete sweep's and the current one's.
    pub fn names(&self) -> BTreeSet<&[u8]> {
        let last = self.last.iter().flat_map(|(names, _)| names.iter());
        last.chain(self.found.iter()).map(Vec::as_slice).collect()
    }

    /// Matches seen beyond the cap (in the last complete sweep, or the
    /// current one if it has seen more).
    pub fn over(&self) -> u64 {
        let last = self.last.as_ref().map_or(0, |(_, over)| *over);
        last.max(self.over)
    }

    /// A name that no longer exists.
    pub fn forget(&mut self, name: &[u8]) {
        self.found.remove(name);
        if let Some((names, _)) = &mut self.last {
            names.remove(name);
        }
    }
}

/// The SCAN calls and the time one check may still spend.
#[derive(Debug)]
pub struct ScanBudget {
    calls_left: u32,
    deadline: Instant,
    rounds: u32,
}

impl ScanBudget {
    pub fn new(calls: u32, time: Duration, now: Instant) -> Self {
        ScanBudget {
            calls_left: calls,
            deadline: now + time,
            rounds: 0,
        }
    }

    /// How many of `wanted` calls the next round may make: none once the
    /// calls are spent or the time is up (the first round always goes, so
    /// a tiny budget still makes progress).
    pub fn round(&mut self, wanted: usize, now: Instant) -> usize {
        if self.calls_left == 0 || (self.rounds > 0 && now >= self.deadline) {
            return 0;
        }
        let calls = wanted.min(self.calls_left as usize);
        self.calls_left -= calls as u32;
        self.rounds += 1;
        calls
    }
}

/// A SCAN reply: the next cursor and the names.
pub fn scan_reply(reply: &Value) -> Option<(u64, Vec<Vec<u8>>)> {
    let [cursor, names] = items(reply) else {
        return None;
    };
    let cursor = number(cursor)?;
    let names = items(names)
        .iter()
        .filter_map(|name| match name {
            Value::BulkString(bytes) => Some(bytes.clone()),
            Value::SimpleString(s) => Some(s.clone().into_bytes()),
            _ => None,
        })
        .collect();
    Some((cursor, names))
}

fn field<'a>(fields: &'a [(String, &'a Value)], name: &str) -> Option<&'a Value> {
    fields.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
}

/// XINFO GROUPS: each group's name, consumers, pending, last delivered
/// id and lag (Redis 7.0+; nil when Redis cannot tell). A group without a
/// name is left out.
pub fn stream_groups(reply: &Value) -> Vec<GroupRow> {
    items(reply)
        .iter()
        .filter_map(|group| {
            let fields = fields(group);
            let number_of = |name| field(&fields, name).and_then(number);
            Some(GroupRow {
                name: text(field(&fields, "name")?)?,
                consumers: number_of("consumers").unwrap_or(0),
                pending: number_of("pending").unwrap_or(0),
                lag: number_of("lag"),
                last_delivered: field(&fields, "last-delivered-id")
                    .and_then(text)
                    .unwrap_or_default(),
                max_idle: None,
            })
        })
        .collect()
}

/// XINFO CONSUMERS: the largest `idle` (ms); `None` for a reply of
/// another shape, 0 for a group without consumers.
pub fn consumers_max_idle(reply: &Value) -> Option<u64> {
    if !matches!(reply, Value::Array(_) | Value::Set(_)) {
        return None;
    }
    Some(
        items(reply)
            .iter()
            .filter_map(|consumer| field(&fields(consumer), "idle").and_then(number))
            .max()
            .unwrap_or(0),
    )
}

/// The command that measures a key of this type.
fn length_command(kind: KeyType) -> Option<&'static str> {
    Some(match kind {
        KeyType::String => "STRLEN",
        KeyType::List => "LLEN",
        KeyType::Set => "SCARD",
        KeyType::Zset => "ZCARD",
        KeyType::Hash => "HLEN",
        KeyType::Stream => "XLEN",
        KeyType::Other | KeyType::None => return None,
    })
}

/// A key name's alias hash: HMAC-SHA-256 keyed by the installation's
/// secret (`key_alias_secret_file`), its first 64 bits. Stable across
/// checks, restarts and builds; without the secret, a guessed name cannot
/// be hashed to confirm it (an unkeyed hash could, by anyone who reads
/// the tree).
pub(super) fn alias_hash(secret: &[u8], name: &[u8]) -> u64 {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret);
    let tag = ring::hmac::sign(&key, name);
    let mut first = [0u8; 8];
    first.copy_from_slice(&tag.as_ref()[..8]);
    u64::from_be_bytes(first)
}

/// Whether a name a pattern matched can be a row: not too long to keep,
/// and in name mode (`alias` false) one that can index a row as it is.
fn shown(alias: bool, name: &[u8]) -> bool {
    name.len() <= MAX_KEY_NAME_BYTES && (alias || name_fits_index(name, MAX_NAME_INDEX_LEN))
}

/// A server error's code (`NOPERM`, `WRONGTYPE`) when it is one: a word
/// of capitals, as Redis makes them; anything else is a text that could
/// carry a name, and is not shown.
pub(super) fn error_code(e: &redis::RedisError) -> &str {
    match e.code() {
        Some(code)
            if (1..=32).contains(&code.len())
                && code.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') =>
        {
            code
        }
        _ => "(no code)",
    }
}

/// A key to ask about this check.
struct Candidate {
    name: Vec<u8>,
    /// Index into `entries`.
    entry: usize,
    label: String,
}

/// The longest key name a check keeps and asks about: a name is a
/// command's argument and, in alias mode, kept whole between checks. A
/// longer one (Redis allows 512 MB) is counted as left out.
pub const MAX_KEY_NAME_BYTES: usize = 1_024;

/// Commands per pipeline at most (see `KeyCheck::pipeline`).
const PIPELINE_COMMANDS: usize = 256;

/// Checks in a row whose replies went over the budget, at most, that each
/// double the wait before the next (up to 64 intervals) and halve SCAN's
/// COUNT.
const MAX_BACKOFF: u32 = 6;

/// The key checks of one instance: their settings, their sweeps, and what
/// they found last.
pub struct KeyCheck {
    settings: KeyChecks,
    entries: Vec<Entry>,
    asked: Option<Instant>,
    latest: Option<KeyReport>,
    /// Checks in a row that a reply over the budget ended (each ends the
    /// connection): the next waits longer and asks SCAN for fewer names,
    /// rather than key checks stopping for good (one huge key name would
    /// otherwise switch them off).
    over_budget: u32,
    /// SCAN's COUNT is `scan_count` shifted right by this much: halved at
    /// each reply over the budget, since the names it returns are what
    /// grows.
    count_shift: u32,
    /// Errors already logged (bounded).
    said: HashSet<String>,
}

/// The most distinct errors remembered as said; beyond, they go to debug.
const MAX_SAID: usize = 256;

impl KeyCheck {
    pub fn new(settings: &KeyChecks) -> Self {
        let entries = settings
            .entries
            .iter()
            .enumerate()
            .map(|(n, text)| Entry {
                ordinal: n + 1,
                text: text.clone(),
                pattern: is_pattern(text),
                sweep: Sweep::default(),
            })
            .collect();
        KeyCheck {
            settings: settings.clone(),
            entries,
            asked: None,
            latest: None,
            over_budget: 0,
            count_shift: 0,
            said: HashSet::new(),
        }
    }

    /// Whether a check is due at `now`. A tenth of the interval early
    /// counts: checks ride on polls, whose start drifts by a few
    /// milliseconds, and a check 1 ms short of its interval would wait a
    /// whole poll more. After replies over the budget, 2, 4 … 64 intervals.
    pub fn due_at(&self, now: Instant) -> bool {
        let interval = self.settings.interval * (1 << self.over_budget.min(MAX_BACKOFF));
        !self.entries.is_empty()
            && self
                .asked
                .is_none_or(|at| now.saturating_duration_since(at) + interval / 10 >= interval)
    }

    /// SCAN's COUNT now.
    fn scan_count(&self) -> u32 {
        (self.settings.scan_count >> self.count_shift).max(1)
    }

    /// What to serve: `None` when no key is configured.
    pub fn latest(&self) -> Option<KeyReport> {
        self.latest.clone()
    }

    fn alias(&self) -> bool {
        self.settings.names == KeyNames::Alias
    }

    /// How a key is shown: its name, or its alias.
    fn label(&self, entry: &Entry, name: &[u8]) -> Option<String> {
        if self.alias() {
            return Some(if entry.pattern {
                let secret = self.settings.alias_secret.as_ref();
                let secret = secret.map_or(&b""[..], |s| s.expose().as_bytes());
                format!("e{}-{:016x}", entry.ordinal, alias_hash(secret, name))
            } else {
                format!("e{}", entry.ordinal)
            });
        }
        name_fits_index(name, MAX_NAME_INDEX_LEN)
            .then(|| String::from_utf8_lossy(name).into_owned())
    }

    /// How an entry is shown in `redisKeyEntry`.
    fn entry_text(&self, entry: &Entry) -> String {
        if self.alias() {
            format!("entry {}", entry.ordinal)
        } else {
            entry.text.clone()
        }
    }

    /// A server's error about `command`, in words safe to show: in alias
    /// mode without the key's name. Logged once.
    fn error(
        &mut self,
        instance: &str,
        command: &str,
        e: &redis::RedisError,
        key: Option<(&[u8], &str)>,
    ) -> String {
        let mut text = describe(e);
        if self.alias() {
            // A server's text may quote a key's name or a pattern in any
            // form (Redis turns CR and LF into spaces, describe escapes
            // controls, a name may be cut): only its code is shown.
            text = format!("server error {}", error_code(e));
        }
        if let Some((_, label)) = key {
            text = format!("{command} {label}: {text}");
        } else {
            text = format!("{command}: {text}");
        }
        let said = format!("{command} {}", e.code().unwrap_or(""));
        if self.said.len() < MAX_SAID && self.said.insert(said) {
            info!(instance = %instance, "key check: Redis refuses {text}");
        } else {
            debug!(instance = %instance, "key check: {text}");
        }
        text
    }

    /// One check, over `client`: the report to serve, kept for the next
    /// polls. A reply over the budget or a broken connection ends the
    /// check (the last report kept, with the error) and the connection.
    pub async fn ask(&mut self, client: &mut Client) -> Result<(), Lost> {
        let instance = client.instance().name.clone();
        let instance = instance.as_str();
        let started = Instant::now();
        self.asked = Some(started);
        let mut report = KeyReport::default();
        let mut errors: Vec<String> = Vec::new();
        let outcome = self
            .check(instance, client, started, &mut report, &mut errors)
            .await;
        report.millis = u32::try_from(started.elapsed().as_millis()).unwrap_or(u32::MAX);
        report.scan_complete = !self.entries.iter().any(|e| e.sweep.midway());
        match outcome {
            Ok(()) => {
                self.over_budget = 0;
                report.error = errors.first().cloned().unwrap_or_default();
                self.latest = Some(report);
                Ok(())
            }
            Err(mut lost) => {
                if lost.over_budget {
                    lost.text = self.backoff(instance, &lost.text);
                }
                let mut kept = self.latest.take().unwrap_or_default();
                kept.error = lost.text.clone();
                self.latest = Some(kept);
                Err(lost)
            }
        }
    }

    /// A reply went over the budget: the next check waits longer and asks
    /// SCAN for fewer names. The words to show, said once per change.
    fn backoff(&mut self, instance: &str, refusal: &str) -> String {
        self.over_budget = self.over_budget.saturating_add(1);
        self.count_shift = (self.count_shift + 1).min(31);
        let wait = self.settings.interval * (1 << self.over_budget.min(MAX_BACKOFF));
        let text = format!(
            "{refusal}; the next check in {} s asks SCAN for {} names at a time",
            wait.as_secs(),
            self.scan_count()
        );
        warn!(
            instance = %instance,
            "key check: {text} (raise max_reply_bytes, or lower check_keys_rows and check_keys_groups)"
        );
        text
    }

    /// A pipeline's replies, one per command, each a value or the server's
    /// error; `Err` when the connection is gone. Sent in pipelines of at
    /// most [`PIPELINE_COMMANDS`] commands: each has its own reply budget
    /// (values and bytes), which a check's many XINFO CONSUMERS together
    /// could otherwise outgrow.
    async fn pipeline(
        &mut self,
        pipe: &redis::Pipeline,
        client: &mut Client,
    ) -> Result<Vec<redis::RedisResult<Value>>, Lost> {
        if pipe.len() <= PIPELINE_COMMANDS {
            return client.pipeline(pipe).await;
        }
        let commands: Vec<&redis::Cmd> = pipe.cmd_iter().collect();
        let mut replies = Vec::with_capacity(commands.len());
        for chunk in commands.chunks(PIPELINE_COMMANDS) {
            let mut part = redis::pipe();
            part.ignore_errors();
            for command in chunk {
                part.add_command((*command).clone());
            }
            replies.extend(client.pipeline(&part).await?);
        }
        Ok(replies)
    }

    async fn check(
        &mut self,
        instance: &str,
        client: &mut Client,
        started: Instant,
        report: &mut KeyReport,
        errors: &mut Vec<String>,
    ) -> Result<(), Lost> {
        self.scan(instance, client, started, report, errors).await?;
        let (candidates, left_out) = self.candidates();
        report.keys_left_out = left_out;
        if candidates.is_empty() {
            return Ok(());
        }

        // TYPE, TTL (and MEMORY USAGE) of every key.
        let mut pipe = redis::pipe();
        pipe.ignore_errors();
        for c in &candidates {
            pipe.cmd("TYPE").arg(&c.name);
            pipe.cmd("TTL").arg(&c.name);
            if self.settings.memory {
                pipe.cmd("MEMORY").arg("USAGE").arg(&c.name);
            }
        }
        let per_key = if self.settings.memory { 3 } else { 2 };
        let replies = self.pipeline(&pipe, client).await?;
        let mut rows: Vec<(usize, KeyRow)> = Vec::new();
        for (n, c) in candidates.iter().enumerate() {
            let reply = |i: usize| replies.get(n * per_key + i);
            let entry = &self.entries[c.entry];
            let mut row = KeyRow {
                label: c.label.clone(),
                entry: self.entry_text(entry),
                kind: None,
                length: None,
                ttl: None,
                memory: None,
                error: String::new(),
                groups: Vec::new(),
            };
            let pattern = entry.pattern;
            match reply(0) {
                Some(Ok(value)) => {
                    row.kind =
                        text(value).map(|t| KeyType::from_label(&t).unwrap_or(KeyType::Other));
                }
                Some(Err(e)) => {
                    let e = e.clone();
                    row.error = self.error(instance, "TYPE", &e, Some((&c.name, &c.label)));
                }
                None => {}
            }
            if let Some(Ok(value)) = reply(1) {
                row.ttl = match value {
                    Value::Int(n) => Some(*n),
                    _ => None,
                };
            }
            if self.settings.memory {
                match reply(2) {
                    Some(Ok(value)) => row.memory = number(value),
                    Some(Err(e)) if row.error.is_empty() => {
                        let e = e.clone();
                        row.error =
                            self.error(instance, "MEMORY USAGE", &e, Some((&c.name, &c.label)));
                    }
                    _ => {}
                }
            }
            // Gone (TYPE none, or TTL -2 as it went): a matched key's row
            // leaves; a named key stays, as none(8).
            let gone = row.kind == Some(KeyType::None) || row.ttl == Some(-2);
            if gone {
                if pattern {
                    self.entries[c.entry].sweep.forget(&c.name);
                    continue;
                }
                row.kind = Some(KeyType::None);
                row.length = Some(0);
                row.ttl = None;
                row.memory = None;
            }
            rows.push((n, row));
        }

        // The length of each, and the groups of the streams.
        let mut pipe = redis::pipe();
        pipe.ignore_errors();
        let mut asked: Vec<(usize, bool)> = Vec::new(); // (row, is XINFO GROUPS)
        for (i, (n, row)) in rows.iter().enumerate() {
            if let Some(command) = row.kind.and_then(length_command) {
                pipe.cmd(command).arg(&candidates[*n].name);
                asked.push((i, false));
            }
            if row.kind == Some(KeyType::Stream) {
                pipe.cmd("XINFO").arg("GROUPS").arg(&candidates[*n].name);
                asked.push((i, true));
            }
        }
        if !asked.is_empty() {
            let replies = self.pipeline(&pipe, client).await?;
            for ((i, groups), reply) in asked.into_iter().zip(replies) {
                let name = candidates[rows[i].0].name.clone();
                let label = rows[i].1.label.clone();
                match (groups, reply) {
                    (false, Ok(value)) => rows[i].1.length = number(&value),
                    (true, Ok(value)) => {
                        let mut all = stream_groups(&value);
                        all.retain(|g| {
                            name_fits_index(g.name.as_bytes(), MAX_SECOND_NAME_INDEX_LEN)
                        });
                        let listed = items(&value).len() as u64;
                        all.sort_by(|a, b| a.name.cmp(&b.name));
                        all.truncate(self.settings.groups);
                        report.groups_left_out = report
                            .groups_left_out
                            .saturating_add(listed.saturating_sub(all.len() as u64));
                        rows[i].1.groups = all;
                    }
                    (groups, Err(e)) => {
                        let command = if groups { "XINFO GROUPS" } else { "length" };
                        let text = self.error(instance, command, &e, Some((&name, &label)));
                        if rows[i].1.error.is_empty() {
                            rows[i].1.error = text;
                        }
                    }
                }
            }
        }

        // The consumers of each group, for their largest idle time.
        let mut pipe = redis::pipe();
        pipe.ignore_errors();
        let mut asked: Vec<(usize, usize)> = Vec::new();
        for (i, (n, row)) in rows.iter().enumerate() {
            for (g, group) in row.groups.iter().enumerate() {
                pipe.cmd("XINFO")
                    .arg("CONSUMERS")
                    .arg(&candidates[*n].name)
                    .arg(&group.name);
                asked.push((i, g));
            }
        }
        if !asked.is_empty() {
            let replies = self.pipeline(&pipe, client).await?;
            for ((i, g), reply) in asked.into_iter().zip(replies) {
                match reply {
                    Ok(value) => rows[i].1.groups[g].max_idle = consumers_max_idle(&value),
                    Err(e) => {
                        let name = candidates[rows[i].0].name.clone();
                        let label = rows[i].1.label.clone();
                        let text =
                            self.error(instance, "XINFO CONSUMERS", &e, Some((&name, &label)));
                        if rows[i].1.error.is_empty() {
                            rows[i].1.error = text;
                        }
                    }
                }
            }
        }
        report.keys = rows.into_iter().map(|(_, row)| row).collect();
        Ok(())
    }

    /// The SCAN rounds of this check: each round one SCAN per pattern
    /// whose sweep has not ended in this check, pipelined, within the
    /// budget.
    async fn scan(
        &mut self,
        instance: &str,
        client: &mut Client,
        started: Instant,
        report: &mut KeyReport,
        errors: &mut Vec<String>,
    ) -> Result<(), Lost> {
        let mut scan_budget =
            ScanBudget::new(self.settings.scan_calls, self.settings.scan_time, started);
        let mut active: Vec<usize> = (0..self.entries.len())
            .filter(|&i| self.entries[i].pattern)
            .collect();
        let cap = self.settings.rows;
        while !active.is_empty() {
            let calls = scan_budget.round(active.len(), Instant::now());
            if calls == 0 {
                break;
            }
            let round: Vec<usize> = active[..calls].to_vec();
            let mut pipe = redis::pipe();
            pipe.ignore_errors();
            for &i in &round {
                let entry = &self.entries[i];
                pipe.cmd("SCAN")
                    .arg(entry.sweep.cursor())
                    .arg("MATCH")
                    .arg(&entry.text)
                    .arg("COUNT")
                    .arg(self.scan_count());
            }
            let replies = self.pipeline(&pipe, client).await?;
            report.scan_calls = report.scan_calls.saturating_add(calls as u32);
            let mut ended: HashSet<usize> = HashSet::new();
            for (&i, reply) in round.iter().zip(replies) {
                match reply.as_ref().ok().and_then(scan_reply) {
                    Some((next, names)) => {
                        let alias = self.alias();
                        let keep = |name: &[u8]| shown(alias, name);
                        if self.entries[i].sweep.take(next, names, cap, keep) {
                            ended.insert(i);
                        }
                    }
                    None => {
                        // Refused (NOPERM), or garbage: this pattern stops
                        // for this check, its sweep where it was.
                        if let Err(e) = reply {
                            let text = self.error(instance, "SCAN", &e, None);
                            errors.push(text);
                        }
                        ended.insert(i);
                    }
                }
            }
            // Patterns beyond the calls left wait for the next round; the
            // ones asked go to the back, so all advance alike.
            active.retain(|i| !ended.contains(i));
            let (asked, waiting): (Vec<usize>, Vec<usize>) =
                active.iter().partition(|i| round.contains(i));
            active = waiting.into_iter().chain(asked).collect();
        }
        Ok(())
    }

    /// The keys to ask about: the exact names, then each pattern's matches
    /// (in name order, a key once, under the first entry that found it),
    /// at most `check_keys_rows`; and how many were left out.
    fn candidates(&self) -> (Vec<Candidate>, u64) {
        let mut chosen: Vec<Candidate> = Vec::new();
        let mut seen: HashSet<&[u8]> = HashSet::new();
        let mut left_out: u64 = 0;
        let exact = self.entries.iter().enumerate().filter(|(_, e)| !e.pattern);
        let patterns = self.entries.iter().enumerate().filter(|(_, e)| e.pattern);
        for (i, entry) in exact {
            self.consider(
                i,
                entry,
                entry.text.as_bytes(),
                &mut chosen,
                &mut seen,
                &mut left_out,
            );
        }
        for (i, entry) in patterns {
            left_out = left_out.saturating_add(entry.sweep.over());
            for name in entry.sweep.names() {
                self.consider(i, entry, name, &mut chosen, &mut seen, &mut left_out);
            }
        }
        (chosen, left_out)
    }

    fn consider<'a>(
        &self,
        i: usize,
        entry: &Entry,
        name: &'a [u8],
        chosen: &mut Vec<Candidate>,
        seen: &mut HashSet<&'a [u8]>,
        left_out: &mut u64,
    ) {
        if !seen.insert(name) {
            return;
        }
        match self.label(entry, name) {
            Some(label) if chosen.len() < self.settings.rows => chosen.push(Candidate {
                name: name.to_vec(),
                entry: i,
                label,
            }),
            _ => *left_out = left_out.saturating_add(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reply captured from a real server (tests/fixtures/redis/README.md).
    fn fixture(name: &str) -> Value {
        let path = format!("{}/tests/fixtures/redis/{name}", env!("CARGO_MANIFEST_DIR"));
        let bytes = std::fs::read(&path).unwrap();
        redis::parse_redis_value(&bytes).unwrap()
    }

    #[test]
    fn a_real_scan_reply() {
        let (cursor, names) = scan_reply(&fixture("7.0-keys-scan.resp")).unwrap();
        assert_eq!(cursor, 26);
        assert_eq!(names.len(), 9);
        assert!(names.iter().all(|n| n.starts_with(b"queue:")));
        assert_eq!(scan_reply(&Value::Int(3)), None);
        assert_eq!(
            scan_reply(&Value::Array(vec![Value::Nil, Value::Array(vec![])])),
            None
        );
    }

    #[test]
    fn real_xinfo_replies_of_redis_7_0_and_6_2() {
        let groups = stream_groups(&fixture("7.0-keys-xinfo-groups.resp"));
        assert_eq!(
            groups,
            [
                GroupRow {
                    name: "audit".into(),
                    consumers: 0,
                    pending: 0,
                    lag: Some(0),
                    last_delivered: "3-1".into(),
                    max_idle: None,
                },
                GroupRow {
                    name: "billing".into(),
                    consumers: 2,
                    pending: 3,
                    lag: Some(0),
                    last_delivered: "3-1".into(),
                    max_idle: None,
                },
            ]
        );
        // Redis 6.2 has no lag: absent, not 0.
        let old = stream_groups(&fixture("6.2-keys-xinfo-groups.resp"));
        assert_eq!(old.len(), 2);
        assert!(old.iter().all(|g| g.lag.is_none()));
        assert_eq!(old[1].pending, 3);
        assert_eq!(
            consumers_max_idle(&fixture("7.0-keys-xinfo-consumers.resp")),
            Some(1006)
        );
        assert_eq!(consumers_max_idle(&Value::Array(vec![])), Some(0));
        assert_eq!(consumers_max_idle(&Value::Nil), None);
        // Garbage reads as nothing.
        assert!(stream_groups(&Value::Array(vec![Value::Int(1), Value::Nil])).is_empty());
    }

    #[test]
    fn a_real_noperm_names_no_key() {
        let e = match fixture("7.0-keys-noperm.resp") {
            Value::ServerError(e) => redis::RedisError::from(e),
            other => panic!("{other:?}"),
        };
        assert_eq!(e.code(), Some("NOPERM"));
        let mut check = KeyCheck::new(&KeyChecks {
            entries: vec!["jobs".into()],
            names: KeyNames::Alias,
            ..KeyChecks::default()
        });
        let text = check.error("main", "TYPE", &e, Some((b"jobs", "e1")));
        assert_eq!(text, "TYPE e1: server error NOPERM");
        assert!(!text.contains("jobs"));
    }

    #[test]
    fn a_sweep_goes_on_where_its_budget_ended() {
        let mut sweep = Sweep::default();
        let names = |r: std::ops::Range<u32>| r.map(|i| format!("q:{i}").into_bytes()).collect();
        let all = |_: &[u8]| true;
        assert!(!sweep.take(17, names(0..3), 5, all));
        assert!(sweep.midway());
        assert_eq!(sweep.cursor(), 17);
        assert_eq!(sweep.names().len(), 3);
        // Duplicates are not counted twice; beyond the cap, counted only.
        assert!(sweep.take(0, names(2..9), 5, all));
        assert!(!sweep.midway());
        assert_eq!(sweep.names().len(), 5);
        assert_eq!(sweep.over(), 4);
        // The next sweep serves the last one's names with its own.
        assert!(!sweep.take(4, names(20..21), 5, all));
        assert_eq!(sweep.names().len(), 6);
        sweep.forget(b"q:0");
        sweep.forget(b"q:20");
        assert_eq!(sweep.names().len(), 4);
    }

    #[test]
    fn the_scan_budget_counts_calls_and_time() {
        let now = Instant::now();
        let mut budget = ScanBudget::new(5, Duration::from_millis(100), now);
        assert_eq!(budget.round(3, now), 3);
        assert_eq!(budget.round(3, now), 2);
        assert_eq!(budget.round(3, now), 0);
        // Time: the first round always goes, then none once it is up.
        let mut budget = ScanBudget::new(100, Duration::from_millis(10), now);
        let late = now + Duration::from_millis(50);
        assert_eq!(budget.round(2, late), 2);
        assert_eq!(budget.round(2, late), 0);
        let mut budget = ScanBudget::new(0, Duration::from_secs(1), now);
        assert_eq!(budget.round(1, now), 0);
    }

    #[test]
    fn candidates_exact_first_capped_and_aliased() {
        let settings = KeyChecks {
            entries: vec!["q:*".into(), "jobs".into(), "q:1".into()],
            rows: 3,
            ..KeyChecks::default()
        };
        let mut check = KeyCheck::new(&settings);
        let names: Vec<Vec<u8>> = ["q:1", "q:2", "q:3", "q:\x01bad"]
            .iter()
            .map(|n| n.as_bytes().to_vec())
            .collect();
        check.entries[0].sweep.take(0, names, 100, |_| true);
        let (chosen, left_out) = check.candidates();
        let labels: Vec<&str> = chosen.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["jobs", "q:1", "q:2"]);
        // q:3 over the cap, the unprintable name has no index.
        assert_eq!(left_out, 2);
        // q:1 is under its exact entry (the third), found once.
        assert_eq!(chosen[1].entry, 2);

        check.settings.names = KeyNames::Alias;
        check.settings.rows = 100;
        let (chosen, left_out) = check.candidates();
        assert_eq!(left_out, 0);
        let labels: Vec<&str> = chosen.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels[..2], ["e2", "e3"]);
        assert_eq!(labels.len(), 5);
        assert!(labels[2..]
            .iter()
            .all(|l| l.starts_with("e1-") && l.len() == 19));
        assert!(!labels.iter().any(|l| l.contains("q:")));
        assert_eq!(check.entry_text(&check.entries[0]), "entry 1");
    }

    /// Review L4: junk names (unprintable, too long) took the rows of
    /// real keys, and kept their bytes.
    #[test]
    fn junk_names_take_no_row_and_a_huge_name_is_not_kept() {
        let mut sweep = Sweep::default();
        let mut names: Vec<Vec<u8>> = (0..50).map(|i| format!("q:\x01{i}").into_bytes()).collect();
        names.push(vec![b'q'; MAX_KEY_NAME_BYTES + 1]);
        names.extend([b"q:real1".to_vec(), b"q:real2".to_vec()]);
        assert!(sweep.take(0, names.clone(), 3, |n| shown(false, n)));
        let kept: Vec<&[u8]> = sweep.names().into_iter().collect();
        assert_eq!(kept, [&b"q:real1"[..], b"q:real2"]);
        assert_eq!(sweep.over(), 51);
        // In alias mode an unprintable name can be shown; a huge one not.
        let mut sweep = Sweep::default();
        sweep.take(0, names, 1_000, |n| shown(true, n));
        assert_eq!(sweep.names().len(), 52);
        assert!(sweep.names().iter().all(|n| n.len() <= MAX_KEY_NAME_BYTES));
    }

    /// Review L4: Redis turns CR and LF of a name into spaces in its
    /// error texts, so replacing the name as it is left it in the text.
    #[test]
    fn in_alias_mode_no_server_text_reaches_the_error() {
        let mut check = KeyCheck::new(&KeyChecks {
            entries: vec!["acct:*".into()],
            names: KeyNames::Alias,
            ..KeyChecks::default()
        });
        let name = b"acct:alice\nsecret";
        let e = server_error(
            "NOGROUP No such key 'acct:alice secret' or consumer group 'g' in XINFO CONSUMERS",
        );
        let text = check.error("main", "XINFO CONSUMERS", &e, Some((name, "e1-0123")));
        assert_eq!(text, "XINFO CONSUMERS e1-0123: server error NOGROUP");
        // A code that is not a word of capitals is not shown either.
        let e = server_error("acct:alice:secret is gone");
        let text = check.error("main", "TYPE", &e, Some((name, "e1-0123")));
        assert!(!text.contains("alice"), "{text}");
        // In name mode the server's words stay: the name is shown anyway.
        check.settings.names = KeyNames::Name;
        let text = check.error("main", "SCAN", &server_error("ERR odd"), None);
        assert_eq!(text, "SCAN: ERR odd");
    }

    /// Review L4: the alias hash was unkeyed FNV-1a, so a guessed name
    /// could be confirmed by anyone who reads the tree.
    #[test]
    fn aliases_are_keyed_by_the_installations_secret() {
        let keyed = |secret: &str| {
            let check = KeyCheck::new(&KeyChecks {
                entries: vec!["user:*".into()],
                names: KeyNames::Alias,
                alias_secret: Some(crate::secret::Secret::new(secret.into())),
                ..KeyChecks::default()
            });
            check.label(&check.entries[0], b"user:1234:email").unwrap()
        };
        let one = keyed("0123456789abcdef0123456789abcdef");
        assert_eq!(one, keyed("0123456789abcdef0123456789abcdef"), "stable");
        assert_ne!(one, keyed("fedcba9876543210fedcba9876543210"));
        assert!(one.starts_with("e1-") && one.len() == 19, "{one}");
        // Not the unkeyed FNV-1a of the name that was shown before.
        let fnv = b"user:1234:email"
            .iter()
            .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
                (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
            });
        assert_ne!(one, format!("e1-{fnv:016x}"));
        // RFC 4231 test case 2: HMAC-SHA-256("Jefe", …) begins 5bdcc146bf60754e.
        assert_eq!(
            alias_hash(b"Jefe", b"what do ya want for nothing?"),
            0x5bdc_c146_bf60_754e
        );
    }

    #[test]
    fn a_reply_over_the_budget_delays_the_next_check_and_asks_for_fewer_names() {
        let mut check = KeyCheck::new(&KeyChecks {
            entries: vec!["q:*".into()],
            interval: Duration::from_secs(60),
            ..KeyChecks::default()
        });
        let start = Instant::now();
        assert!(check.due_at(start));
        check.asked = Some(start);
        assert!(!check.due_at(start + Duration::from_secs(30)));
        assert!(check.due_at(start + Duration::from_secs(60)));
        let text = check.backoff(
            "main",
            "the reply to a pipeline was over the 1000-byte limit (max_reply_bytes)",
        );
        assert!(
            text.ends_with("the next check in 120 s asks SCAN for 500 names at a time"),
            "{text}"
        );
        assert!(!check.due_at(start + Duration::from_secs(100)));
        assert!(
            check.due_at(start + Duration::from_secs(120)),
            "not switched off"
        );
        for _ in 0..20 {
            check.backoff("main", "over");
        }
        assert_eq!(check.scan_count(), 1);
        assert!(check.due_at(start + Duration::from_secs(64 * 60)));
    }

    /// The error a server's reply `-LINE` becomes.
    fn server_error(line: &str) -> redis::RedisError {
        match redis::parse_redis_value(format!("-{line}\r\n").as_bytes()).unwrap() {
            Value::ServerError(e) => redis::RedisError::from(e),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn patterns_are_told_from_names() {
        assert!(is_pattern("queue:*") && is_pattern("job?") && is_pattern("k[ab]"));
        assert!(!is_pattern("jobs") && !is_pattern("a:b:c"));
    }
}
