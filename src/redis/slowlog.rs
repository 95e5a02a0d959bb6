//! Slow commands as they happen (issue 25 item 2): each slow log entry the
//! agent sees arrive becomes a row of `redisSlowCommandTable` (the newest
//! [`SLOW_COMMAND_ROWS`]), and one at or over the instance's
//! `slow_command_threshold` a `redisSlowCommand` notification about that
//! row.
//!
//! What is new is judged on the entries' ids ([`SlowlogWatch`], pure):
//! - The first read is the baseline: the newest id is remembered and
//!   nothing is sent, so a restart of the agent re-sends nothing.
//! - Ids keep increasing across `SLOWLOG RESET` (Redis `src/slowlog.c`:
//!   `slowlogReset` only deletes the list's nodes, `slowlog_entry_id` is
//!   set to 0 in `slowlogInit` alone; Valkey `src/commandlog.c` alike), so
//!   after a RESET only entries with a higher id are new. A restart of
//!   the server starts them at 0 again: a new `run_id` (or, without one,
//!   an id lower than the one remembered) is a new baseline.
//! - Each poll asks `SLOWLOG GET 1` (O(1)); only when its id is beyond
//!   the one remembered does it ask `SLOWLOG GET n` for the new ones, at
//!   most [`MAX_READ`]. Entries beyond those (more arrived between two
//!   polls, or the server trimmed them at `slowlog-max-len`, or a RESET
//!   removed them first) are counted in the row of the first entry read
//!   after them (`redisScSkipped`) and said in the log.
//!
//! Valkey 8.1+ keeps the slow log as the COMMANDLOG of type `slow`:
//! `SLOWLOG GET` reads the very same list (`slowlogCommand` replies with
//! `commandlogGetReply(c, COMMANDLOG_TYPE_SLOW, count)`), deprecated but
//! served (Valkey 9.1.2 answers it byte for byte as `COMMANDLOG GET n
//! slow`: `tests/fixtures/redis/valkey-9.1-*.resp`), so one path reads
//! every server. Valkey's large-request and large-reply logs measure bytes,
//! not time: they are not slow commands.
//!
//! Arguments are shown only with `slow_command_args` (they hold keys and
//! values). With `key_names = "alias"` each argument after the command's
//! name is shown as an alias, `a` and 64 bits of an HMAC keyed by the
//! installation's secret (as `check_keys` aliases a key): a slow log entry
//! does not say which arguments are keys, and a value can be as secret as
//! a key. Redis's own markers (`(redacted)`, `... (N more arguments)`) are
//! kept as they are.

use super::client::Client;
use super::info::Info;
use super::keys::alias_hash;
use super::replies::{self, items, number, SlowlogEntry};
use crate::config::{KeyNames, RedisInstance};
use crate::metrics::{SlowCommandField, SLOW_COMMAND_ROWS};
use crate::smi::{display_string, saturate_u32, Value as SnmpValue};
use crate::text::printable_bytes;
use redis::Value;
use std::collections::VecDeque;
use tracing::{debug, warn};

/// The most entries one read asks for (`SLOWLOG GET n`). Redis logs at
/// most 32 arguments of 128 bytes and a bit for each entry, so a read
/// stays within some 150 KB; 128 is Redis's default `slowlog-max-len`,
/// but a table of [`SLOW_COMMAND_ROWS`] rows shows no more than that
/// many anyway, and the notifications are rate limited below it.
pub const MAX_READ: u64 = SLOW_COMMAND_ROWS as u64;

/// Arguments of an entry kept at most (Redis and Valkey log at most 32,
/// `SLOWLOG_ENTRY_MAX_ARGC`).
const MAX_ARGS: usize = 32;
/// Bytes of one argument kept at most (Redis cuts them at 128 and adds
/// `... (N more bytes)`).
const MAX_ARG_BYTES: usize = 256;

/// One entry of a `SLOWLOG GET` reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlowEntry {
    pub id: u64,
    pub unix_time: u64,
    pub micros: u64,
    /// The command and its arguments, as the server logged them (bounded).
    pub args: Vec<Vec<u8>>,
    /// `ip:port` or the socket's path; absent before Redis 4.0.
    pub client_address: Option<String>,
    /// CLIENT SETNAME's name, empty when none; absent before Redis 4.0.
    pub client_name: Option<String>,
}

/// The entries of a `SLOWLOG GET n` (or `COMMANDLOG GET n slow`) reply,
/// newest first as the server sends them. An entry of an unexpected shape
/// is left out, never guessed.
pub fn entries(reply: &Value) -> Vec<SlowEntry> {
    items(reply).iter().filter_map(entry).collect()
}

fn entry(value: &Value) -> Option<SlowEntry> {
    let fields = items(value);
    let bytes = |value: &Value| match value {
        Value::BulkString(b) => Some(b.clone()),
        Value::SimpleString(s) => Some(s.clone().into_bytes()),
        _ => None,
    };
    let text = |value: Option<&Value>| {
        value
            .and_then(bytes)
            .map(|b| printable_bytes(&b[..b.len().min(MAX_ARG_BYTES)]))
    };
    Some(SlowEntry {
        id: number(fields.first()?)?,
        unix_time: number(fields.get(1)?)?,
        micros: number(fields.get(2)?)?,
        args: items(fields.get(3)?)
            .iter()
            .take(MAX_ARGS)
            .filter_map(bytes)
            .map(|mut b| {
                b.truncate(MAX_ARG_BYTES);
                b
            })
            .collect(),
        client_address: text(fields.get(4)),
        client_name: text(fields.get(5)),
    })
}

/// One row of `redisSlowCommandTable`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlowRow {
    /// `redisScNumber`: the agent's own number for the entry.
    pub number: u32,
    pub id: u64,
    pub unix_time: u64,
    pub micros: u64,
    /// The first argument, lower-cased (`redisCmdName`'s spelling).
    pub command: String,
    pub client_address: Option<String>,
    pub client_name: Option<String>,
    /// `None` unless `slow_command_args`.
    pub args: Option<String>,
    /// Entries before this one the agent did not read.
    pub skipped: u64,
}

impl SlowRow {
    /// The value of one column.
    pub fn value(&self, field: SlowCommandField) -> Option<SnmpValue> {
        Some(match field {
            SlowCommandField::Id => SnmpValue::Counter64(self.id),
            SlowCommandField::Time => SnmpValue::Counter64(self.unix_time),
            SlowCommandField::Duration => SnmpValue::Counter64(self.micros),
            SlowCommandField::Command => display_string(&self.command),
            SlowCommandField::ClientAddress => display_string(self.client_address.as_deref()?),
            SlowCommandField::ClientName => display_string(self.client_name.as_deref()?),
            SlowCommandField::Arguments => display_string(self.args.as_deref()?),
            SlowCommandField::Skipped => SnmpValue::Gauge32(saturate_u32(self.skipped)),
        })
    }
}

/// How the arguments are shown.
#[derive(Clone, PartialEq, Eq)]
enum Args {
    /// Not at all (the default).
    Hidden,
    /// As logged.
    Shown,
    /// Each as its alias, keyed by the installation's secret.
    Aliased(Vec<u8>),
}

impl std::fmt::Debug for Args {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The secret is never printed.
        f.write_str(match self {
            Args::Hidden => "Hidden",
            Args::Shown => "Shown",
            Args::Aliased(_) => "Aliased",
        })
    }
}

/// What was judged of the server's slow log.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    run_id: Option<String>,
    /// The newest id judged; `None`: the log was empty then.
    newest: Option<u64>,
}

/// One instance's watch of its slow log: the baseline, the rows, and the
/// rows due as notifications since the poll took them last.
#[derive(Debug)]
pub struct SlowlogWatch {
    name: String,
    enabled: bool,
    threshold_usec: u64,
    args: Args,
    /// `None` until the first read: the baseline.
    seen: Option<Seen>,
    /// The newest rows, oldest first, at most [`SLOW_COMMAND_ROWS`].
    rows: VecDeque<SlowRow>,
    /// The number the next row gets.
    next_number: u32,
    /// Rows over the threshold not yet taken by [`SlowlogWatch::take_due`].
    due: Vec<u32>,
    /// Whether skipped entries were said at warning level already.
    skip_said: bool,
    /// The newest entry as the last `SLOWLOG GET 1` on this connection
    /// told, for `redisSlowlogTable` (which the slow cadence would
    /// otherwise ask for again).
    newest: Option<SlowlogEntry>,
    /// Whether the last poll was of a data server (a sentinel has no
    /// slow log).
    data_server: bool,
}

impl SlowlogWatch {
    pub fn new(instance: &RedisInstance) -> SlowlogWatch {
        let settings = &instance.slow_commands;
        let keys = &instance.key_checks;
        let args = match (settings.args, keys.names) {
            (false, _) => Args::Hidden,
            (true, KeyNames::Name) => Args::Shown,
            (true, KeyNames::Alias) => Args::Aliased(
                keys.alias_secret
                    .as_ref()
                    .map(|s| s.expose().as_bytes().to_vec())
                    .unwrap_or_default(),
            ),
        };
        SlowlogWatch {
            name: instance.name.clone(),
            // Entries are read only where their arguments may be
            // (`slowlog_entries`: false for discovered servers too).
            enabled: settings.enabled && instance.slowlog_entries,
            threshold_usec: settings.threshold_usec,
            args,
            seen: None,
            rows: VecDeque::new(),
            next_number: 1,
            due: Vec::new(),
            skip_said: false,
            newest: None,
            data_server: false,
        }
    }

    /// Whether the instance's slow log is watched (`slow_commands`).
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// One read, on every poll of a server that is not a sentinel:
    /// `SLOWLOG GET 1`, then the new entries if there are any. A refused
    /// command is said once by the client and changes nothing here.
    /// Returns the `SLOWLOG GET 1` reply, which also feeds
    /// `redisSlowlogTable`'s newest entry (asked once, not twice).
    pub async fn read(&mut self, client: &mut Client, run_id: Option<&str>) -> Option<Value> {
        let reply = client.optional("SLOWLOG", &["GET", "1"]).await?;
        let newest = entries(&reply);
        let newest_id = newest.first().map(|e| e.id);
        let new = match self.count_new(newest_id, run_id) {
            0 => None,
            1 => Some(newest),
            n => match client.optional("SLOWLOG", &["GET", &n.to_string()]).await {
                Some(more) => Some(entries(&more)),
                None if client.over_budget() => {
                    // Asked again, the same reply would end the next
                    // connection too: these entries are passed over.
                    self.pass_over(newest_id);
                    None
                }
                None => None,
            },
        };
        if let Some(new) = new {
            self.take(new);
        }
        Some(reply)
    }

    /// The new entries up to `newest` could not be read (their reply was
    /// over `max_reply_bytes`): they count as skipped, said in the log.
    fn pass_over(&mut self, newest: Option<u64>) {
        let Some(seen) = self.seen.as_mut() else {
            return;
        };
        let (Some(last), Some(now)) = (seen.newest, newest) else {
            return;
        };
        seen.newest = Some(now.max(last));
        warn!(
            instance = %self.name,
            "{} new slow log entries were passed over: their reply was longer than max_reply_bytes",
            now.saturating_sub(last)
        );
    }

    /// How many entries to ask for, now that the newest entry's id is
    /// `newest` (`None`: the log is empty) on the server of `run_id`; 0
    /// when none is new. The first read, and the first of a server that
    /// restarted, is the baseline: its newest id is remembered, nothing
    /// is asked.
    fn count_new(&mut self, newest: Option<u64>, run_id: Option<&str>) -> u64 {
        let run_id = run_id.map(str::to_string);
        let baseline = match &self.seen {
            None => true,
            Some(seen) => {
                let restarted = matches!((&seen.run_id, &run_id), (Some(a), Some(b)) if a != b);
                // Ids only grow while a server runs: lower is a new server.
                let went_back = matches!((seen.newest, newest), (Some(a), Some(b)) if b < a);
                restarted || went_back
            }
        };
        if baseline {
            debug!(instance = %self.name, "slow log baseline: newest id {newest:?}");
            self.seen = Some(Seen { run_id, newest });
            return 0;
        }
        let seen = self.seen.as_mut().expect("judged above");
        if run_id.is_some() {
            seen.run_id = run_id;
        }
        match (seen.newest, newest) {
            (_, None) => 0,
            (Some(last), Some(now)) => now.saturating_sub(last).min(MAX_READ),
            // Empty at the baseline: the ids may start anywhere (a RESET).
            (None, Some(now)) => now.saturating_add(1).min(MAX_READ),
        }
    }

    /// Takes the entries of a read (newest first): those newer than the
    /// newest judged become rows, each over the threshold due.
    fn take(&mut self, read: Vec<SlowEntry>) {
        let Some(seen) = self.seen.as_mut() else {
            return;
        };
        let last = seen.newest;
        let mut new: Vec<SlowEntry> = read
            .into_iter()
            .filter(|e| last.is_none_or(|last| e.id > last))
            .collect();
        new.sort_by_key(|e| e.id);
        new.dedup_by_key(|e| e.id);
        let Some(oldest) = new.first() else {
            return;
        };
        let skipped = last.map_or(0, |last| oldest.id.saturating_sub(last).saturating_sub(1));
        seen.newest = new.last().map(|e| e.id).max(last);
        if skipped > 0 {
            let said = format!(
                "{skipped} slow log entries before id {} were not read (more arrived between two polls than one read takes, {MAX_READ}, or the server dropped them first)",
                oldest.id
            );
            if self.skip_said {
                debug!(instance = %self.name, "{said}");
            } else {
                self.skip_said = true;
                warn!(instance = %self.name, "{said}; the next are counted in redisScSkipped");
            }
        }
        for (n, entry) in new.into_iter().enumerate() {
            let row = self.row(entry, if n == 0 { skipped } else { 0 });
            if row.micros >= self.threshold_usec {
                self.due.push(row.number);
            }
            if self.rows.len() >= SLOW_COMMAND_ROWS {
                self.rows.pop_front();
            }
            self.rows.push_back(row);
        }
    }

    /// A row for `entry`, numbered next.
    fn row(&mut self, entry: SlowEntry, skipped: u64) -> SlowRow {
        let number = self.next_number;
        // redisScNumber is an Integer32 (1..2147483647): after the last,
        // the first again (the rows of that number are long gone).
        self.next_number = if number >= i32::MAX as u32 {
            1
        } else {
            number + 1
        };
        let mut args = entry.args.iter();
        let command = args
            .next()
            .map(|c| printable_bytes(c).to_ascii_lowercase())
            .unwrap_or_default();
        let args = match &self.args {
            Args::Hidden => None,
            Args::Shown => Some(joined(args.map(|a| printable_bytes(a)))),
            Args::Aliased(secret) => Some(joined(args.map(|a| {
                if is_server_marker(a) {
                    printable_bytes(a)
                } else {
                    format!("a{:016x}", alias_hash(secret, a))
                }
            }))),
        };
        SlowRow {
            number,
            id: entry.id,
            unix_time: entry.unix_time,
            micros: entry.micros,
            command,
            client_address: entry.client_address,
            client_name: entry.client_name,
            args,
            skipped,
        }
    }

    /// A poll's read: on a data server (a sentinel has no slow log) with
    /// `slow_commands` on, `SLOWLOG GET 1` and the new entries. On the
    /// slow cadence (`slow`), `redisSlowlogTable`'s newest entry is read
    /// afresh, as the poller's own would be.
    pub async fn poll(&mut self, client: &mut Client, info: &Info, slow: bool) {
        self.data_server = !info.is_sentinel();
        if !self.data_server || !self.enabled {
            return;
        }
        if slow {
            self.newest = None;
        }
        if let Some(reply) = self.read(client, info.get("run_id").map(str::trim)).await {
            self.newest = replies::slowlog_newest(&reply);
        }
    }

    /// Whether the last poll was of a data server.
    pub fn data_server(&self) -> bool {
        self.data_server
    }

    /// The newest entry the last `SLOWLOG GET 1` of this connection told
    /// (`redisSlowlogTable`).
    pub fn newest(&self) -> Option<SlowlogEntry> {
        self.newest
    }

    /// A new connection: the newest entry is asked afresh.
    pub fn new_connection(&mut self) {
        self.newest = None;
    }

    /// The rows to serve, oldest first.
    pub fn rows(&self) -> Vec<SlowRow> {
        self.rows.iter().cloned().collect()
    }

    /// The rows due as notifications since the last call.
    pub fn take_due(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.due)
    }
}

/// Arguments joined by spaces, at most what a DisplayString holds.
fn joined(args: impl Iterator<Item = String>) -> String {
    let mut out = String::new();
    for arg in args {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&arg);
        if out.len() >= 255 {
            break;
        }
    }
    out
}

/// What the server wrote in place of an argument: `(redacted)` (Redis 7+,
/// Valkey: AUTH's password and the like) or `... (N more arguments)`.
fn is_server_marker(arg: &[u8]) -> bool {
    arg == b"(redacted)" || (arg.starts_with(b"... (") && arg.ends_with(b" more arguments)"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{RedisAddress, SlowCommands};
    use crate::secret::Secret;

    /// A raw RESP reply captured from a real server (see the fixtures'
    /// README).
    fn fixture(name: &str) -> Value {
        let path = format!("{}/tests/fixtures/redis/{name}", env!("CARGO_MANIFEST_DIR"));
        redis::parse_redis_value(&std::fs::read(&path).unwrap()).unwrap()
    }

    fn instance(edit: impl FnOnce(&mut RedisInstance)) -> RedisInstance {
        let mut instance = RedisInstance::new(
            "cache".into(),
            RedisAddress::Tcp {
                host: "127.0.0.1".into(),
                port: 6379,
            },
        );
        edit(&mut instance);
        instance
    }

    /// What a poll does: the newest entry's id, then the entries asked
    /// for (the captured reply cut to as many as were asked).
    fn poll(watch: &mut SlowlogWatch, reply: &[SlowEntry], run_id: &str) -> u64 {
        let count = watch.count_new(reply.first().map(|e| e.id), Some(run_id));
        if count > 0 {
            watch.take(reply.iter().take(count as usize).cloned().collect());
        }
        count
    }

    const SERVERS: [&str; 5] = ["6.2", "7.0", "8.2", "valkey-8.0", "valkey-9.1"];

    #[test]
    fn real_replies_of_every_server_read_whole() {
        for server in SERVERS {
            let read = entries(&fixture(&format!("{server}-slowlog-get.resp")));
            // Newest first: the script, the long list, the long value, the
            // hash, the string, CLIENT SETNAME, then the admin's SLOWLOG
            // RESET (which removed the CONFIG SET before it, id 0).
            let ids: Vec<u64> = read.iter().map(|e| e.id).collect();
            assert_eq!(ids, [7, 6, 5, 4, 3, 2, 1], "{server}");
            let script = &read[0];
            assert_eq!(script.args[0], b"EVAL", "{server}");
            assert!(script.micros > 10_000, "{server}: {}", script.micros);
            assert_eq!(
                script.client_name.as_deref(),
                Some("app-worker"),
                "{server}"
            );
            assert!(
                script
                    .client_address
                    .as_deref()
                    .is_some_and(|a| a.starts_with("127.0.0.1:")),
                "{server}"
            );
            // 42 arguments sent: 31 logged and the server's count of the rest.
            let list = &read[1];
            assert_eq!(list.args.len(), 32, "{server}");
            assert_eq!(list.args[31], b"... (11 more arguments)", "{server}");
            let blob = &read[2];
            assert!(
                blob.args[2].ends_with(b"... (172 more bytes)"),
                "{server}: {:?}",
                String::from_utf8_lossy(&blob.args[2])
            );
            assert_eq!(read[6].args[0], b"SLOWLOG", "{server}");
            assert_eq!(read[6].client_name.as_deref(), Some(""), "{server}");
        }
    }

    /// Valkey 9.1 answers SLOWLOG GET and COMMANDLOG GET n slow alike: one
    /// log.
    #[test]
    fn valkeys_commandlog_of_type_slow_is_the_slow_log() {
        assert_eq!(
            entries(&fixture("valkey-9.1-commandlog-get-slow.resp")),
            entries(&fixture("valkey-9.1-slowlog-after-reset.resp"))
        );
    }

    #[test]
    fn the_first_read_is_a_baseline_and_new_entries_are_due_over_the_threshold() {
        let read = entries(&fixture("7.0-slowlog-get.resp"));
        let mut watch = SlowlogWatch::new(&instance(|i| {
            i.slow_commands = SlowCommands {
                threshold_usec: 10_000,
                ..SlowCommands::default()
            }
        }));
        // The agent starts with the log at id 3: nothing is sent.
        assert_eq!(poll(&mut watch, &read[4..], "run-a"), 0);
        assert!(watch.rows().is_empty() && watch.take_due().is_empty());
        // Four arrive: each a row, the script (62 ms) due.
        assert_eq!(poll(&mut watch, &read, "run-a"), 4);
        let rows = watch.rows();
        let commands: Vec<&str> = rows.iter().map(|r| r.command.as_str()).collect();
        assert_eq!(commands, ["hset", "set", "rpush", "eval"]);
        assert_eq!(
            rows.iter().map(|r| r.number).collect::<Vec<_>>(),
            [1, 2, 3, 4]
        );
        assert_eq!(watch.take_due(), [4]);
        assert_eq!(rows[3].client_name.as_deref(), Some("app-worker"));
        assert_eq!(rows[3].skipped, 0);
        assert_eq!(rows[3].args, None, "arguments only when asked for");
        // Nothing new: nothing asked, nothing due.
        assert_eq!(poll(&mut watch, &read, "run-a"), 0);
        assert!(watch.take_due().is_empty());
        assert_eq!(watch.rows().len(), 4);
    }

    /// Ids go on after SLOWLOG RESET (the capture: 0-7, RESET, then 8 and
    /// 9): the entries before it are not new again; a restarted server
    /// (another run_id) is a new baseline.
    #[test]
    fn nothing_old_after_a_reset_and_a_restart_is_a_new_baseline() {
        let before = entries(&fixture("valkey-8.0-slowlog-get.resp"));
        let after = entries(&fixture("valkey-8.0-slowlog-after-reset.resp"));
        let mut watch = SlowlogWatch::new(&instance(|i| i.slow_commands.threshold_usec = 0));
        poll(&mut watch, &before, "run-a");
        assert_eq!(poll(&mut watch, &after, "run-a"), 2);
        let ids: Vec<u64> = watch.rows().iter().map(|r| r.id).collect();
        assert_eq!(ids, [8, 9]);
        assert_eq!(watch.take_due().len(), 2);
        // The log emptied by a RESET: nothing is new.
        assert_eq!(poll(&mut watch, &[], "run-a"), 0);
        // The server restarted: its ids start again, under a new run_id.
        assert_eq!(poll(&mut watch, &before[6..], "run-b"), 0);
        assert!(watch.take_due().is_empty());
        assert_eq!(poll(&mut watch, &before[5..], "run-b"), 1);
        assert_eq!(watch.rows().last().unwrap().id, 2);
        // Without a run_id, an id that went back is a restart too.
        let mut blind = SlowlogWatch::new(&instance(|_| {}));
        assert_eq!(blind.count_new(Some(9), None), 0);
        assert_eq!(blind.count_new(Some(1), None), 0);
        assert_eq!(blind.count_new(Some(3), None), 2);
    }

    /// More arrive between two reads than one read takes: the first one
    /// read says how many were not.
    #[test]
    fn entries_beyond_one_read_are_counted_in_the_first_row_read() {
        let mut watch = SlowlogWatch::new(&instance(|i| i.slow_commands.threshold_usec = 0));
        let template = entries(&fixture("8.2-slowlog-get.resp")).remove(0);
        let log = |newest: u64, count: u64| -> Vec<SlowEntry> {
            (0..count)
                .map(|n| SlowEntry {
                    id: newest - n,
                    ..template.clone()
                })
                .collect()
        };
        poll(&mut watch, &log(100, 1), "r");
        // 200 arrived: the newest MAX_READ are read, the rest counted.
        assert_eq!(poll(&mut watch, &log(300, 128), "r"), MAX_READ);
        let rows = watch.rows();
        assert_eq!(rows.len(), SLOW_COMMAND_ROWS);
        assert_eq!(rows[0].id, 300 - MAX_READ + 1);
        assert_eq!(rows[0].skipped, 200 - MAX_READ);
        assert!(rows[1..].iter().all(|r| r.skipped == 0));
        assert_eq!(watch.take_due().len(), MAX_READ as usize);
        // The table keeps the newest rows only; the numbers go on.
        poll(&mut watch, &log(301, 2), "r");
        let rows = watch.rows();
        assert_eq!(rows.len(), SLOW_COMMAND_ROWS);
        assert_eq!(rows.last().unwrap().number, MAX_READ as u32 + 1);
        assert_eq!(rows.last().unwrap().id, 301);
    }

    /// A read whose reply was over the budget is not asked again: the
    /// entries are passed over, and the next ones read.
    #[test]
    fn entries_whose_reply_was_too_long_are_passed_over() {
        let mut watch = SlowlogWatch::new(&instance(|i| i.slow_commands.threshold_usec = 0));
        assert_eq!(watch.count_new(Some(10), Some("r")), 0);
        assert_eq!(watch.count_new(Some(30), Some("r")), 20);
        watch.pass_over(Some(30));
        assert_eq!(watch.count_new(Some(30), Some("r")), 0);
        assert_eq!(watch.count_new(Some(31), Some("r")), 1);
    }

    #[test]
    fn arguments_are_shown_or_aliased_only_when_asked_for() {
        let read = entries(&fixture("6.2-slowlog-get.resp"));
        let shown = |edit: &dyn Fn(&mut RedisInstance)| {
            let mut watch = SlowlogWatch::new(&instance(|i| {
                i.slow_commands.args = true;
                edit(i);
            }));
            poll(&mut watch, &read[5..], "r");
            poll(&mut watch, &read, "r");
            watch
                .rows()
                .into_iter()
                .map(|r| r.args.unwrap())
                .collect::<Vec<_>>()
        };
        let named = shown(&|_| {});
        // SET user:1001:session s3cr3t-token, then the HSET.
        assert_eq!(named[0], "user:1001:session s3cr3t-token");
        assert_eq!(named[1], "cart:42 sku-1 2 sku-2 1");
        assert!(
            named[3].ends_with("... (11 more arguments)"),
            "{}",
            named[3]
        );
        assert!(named[3].len() <= 255 + 30);
        let alias = |secret: &str| {
            shown(&|i: &mut RedisInstance| {
                i.key_checks.names = KeyNames::Alias;
                i.key_checks.alias_secret = Some(Secret::new(secret.into()));
            })
        };
        let aliased = alias("0123456789abcdef0123456789abcdef");
        for args in &aliased {
            assert!(!args.contains("user:1001"), "{args}");
            assert!(!args.contains("s3cr3t"), "{args}");
        }
        let words: Vec<&str> = aliased[0].split(' ').collect();
        assert_eq!(words.len(), 2);
        assert!(words.iter().all(|w| w.len() == 17 && w.starts_with('a')));
        // Redis's own count of the arguments it left out stays readable
        // (where it fits in the 255 bytes of a DisplayString).
        assert!(is_server_marker(b"... (11 more arguments)"));
        assert!(is_server_marker(b"(redacted)"));
        assert!(!is_server_marker(b"user:1001:session"));
        assert!(aliased[3].len() <= 255 + 17, "{}", aliased[3]);
        // Another installation's secret, other aliases.
        assert_ne!(alias("fedcba9876543210fedcba9876543210")[0], aliased[0]);
        assert_eq!(alias("0123456789abcdef0123456789abcdef")[0], aliased[0]);
    }

    #[test]
    fn no_watch_where_entries_are_not_read() {
        assert!(SlowlogWatch::new(&instance(|_| {})).enabled());
        assert!(!SlowlogWatch::new(&instance(|i| i.slowlog_entries = false)).enabled());
        assert!(!SlowlogWatch::new(&instance(|i| i.slow_commands.enabled = false)).enabled());
    }

    #[test]
    fn replies_of_another_shape_read_as_nothing() {
        let odd = Value::Array(vec![
            Value::Int(5),
            Value::Array(vec![Value::Int(1)]),
            // Redis before 4.0: four fields, no client.
            Value::Array(vec![
                Value::Int(3),
                Value::Int(1_700_000_000),
                Value::Int(12),
                Value::Array(vec![Value::BulkString(b"GET".to_vec())]),
            ]),
            Value::Array(vec![
                Value::Int(-1),
                Value::Int(0),
                Value::Int(0),
                Value::Nil,
            ]),
        ]);
        let read = entries(&odd);
        assert_eq!(read.len(), 1);
        assert_eq!((read[0].id, read[0].client_address.as_ref()), (3, None));
        assert!(entries(&Value::Int(3)).is_empty());
    }
}
