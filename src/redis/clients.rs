//! `CLIENT LIST`, aggregated per client name and per ACL user: how many
//! connections each has, the oldest, the most idle, the largest output
//! buffer and total memory, and how many are blocked. The reply is one
//! line per connection (`id=3 addr=… name=web age=10 idle=0 flags=b …
//! omem=0 tot-mem=22408 … user=default …`); it is read without trusting
//! it: unknown or garbled fields are skipped, numbers that do not parse
//! count as 0, and the rows are capped.
//!
//! Client names are the clients' own choice (`CLIENT SETNAME`): Redis
//! allows any characters from `!` to `~`, of any length. A name that
//! cannot be a row index (longer than [`MAX_NAME_INDEX_LEN`], or not
//! printable ASCII) is counted in the row [`OTHER_NAMES`], as are the
//! names beyond the row cap: every connection is counted once per table. The
//! rows for "no name" and "the others" have names with a space, which no
//! client name or ACL user name can have, so they never meet a real one.

use crate::config::RedisInstance;
use crate::metrics::{name_fits_index, MAX_NAME_INDEX_LEN};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use tracing::{debug, info, warn};

/// The name the agent gives its own connection (`CLIENT SETNAME`), so that
/// operators tell it apart in CLIENT LIST, and it has its own row here.
pub const AGENT_CLIENT_NAME: &str = "redis-snmp";

/// Names a new connection [`AGENT_CLIENT_NAME`]. A refusal (an ACL user
/// without `+client|setname`) leaves it unnamed and is said once for the
/// agent's life (`refusal_said`), not at every reconnection: a user that
/// may not even run INFO reconnects at every poll. Any other failure (the
/// connection broke, the reply was over the budget) is the caller's: the
/// connection is no good.
pub async fn name_connection(
    connection: &mut redis::aio::MultiplexedConnection,
    instance: &str,
    refusal_said: &mut bool,
) -> Result<(), redis::RedisError> {
    let reply: redis::RedisResult<redis::Value> = redis::cmd("CLIENT")
        .arg("SETNAME")
        .arg(AGENT_CLIENT_NAME)
        .query_async(connection)
        .await;
    match reply {
        Ok(_) => Ok(()),
        Err(e) if e.code().is_some() => {
            if !*refusal_said {
                info!(
                    instance = %instance,
                    "Redis refuses CLIENT SETNAME ({}); the agent's connection is unnamed in CLIENT LIST",
                    e.detail().unwrap_or("")
                );
                *refusal_said = true;
            } else {
                debug!(instance = %instance, "CLIENT SETNAME: {e}");
            }
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// When to ask `CLIENT LIST` (it is O(connections) for the server: every
/// `client_list_interval`, not every poll) and what it said last, served
/// on every poll in between.
pub struct ClientList {
    enabled: bool,
    every: Duration,
    rows: usize,
    asked: Option<Instant>,
    latest: Option<ClientAggregates>,
    /// Replies in a row over the reply budget: each ended the
    /// connection, so the next ask waits 2, 4 … 64 intervals (the
    /// connections may have gone by then) rather than ending it at every
    /// interval, or stopping for good.
    over_budget: u32,
}

/// The longest wait after replies over the budget: 2^6 intervals.
const MAX_BACKOFF_SHIFT: u32 = 6;

impl ClientList {
    pub fn new(instance: &RedisInstance) -> Self {
        ClientList {
            enabled: instance.client_list,
            every: instance.client_list_interval,
            rows: instance.client_list_rows,
            asked: None,
            latest: None,
            over_budget: 0,
        }
    }

    /// The wait before the next ask: the interval, doubled per reply in a
    /// row over the budget.
    fn wait(&self) -> Duration {
        self.every * (1u32 << self.over_budget.min(MAX_BACKOFF_SHIFT))
    }

    /// Whether to ask at `now`.
    pub fn due_at(&self, now: Instant) -> bool {
        self.enabled
            && self
                .asked
                .is_none_or(|at| now.saturating_duration_since(at) >= self.wait())
    }

    /// What the asking gave: a reply, or none because the server refused
    /// the command (the tables empty), the reply went over the budget
    /// (the tables empty, asked again later and later, said each time) or
    /// the server was busy (the last aggregates kept).
    pub fn answered(
        &mut self,
        instance: &str,
        reply: Option<redis::Value>,
        refused: bool,
        over_budget: bool,
    ) {
        self.asked = Some(Instant::now());
        match reply.map(redis::from_redis_value::<Vec<u8>>) {
            Some(Ok(text)) => {
                self.over_budget = 0;
                self.latest = Some(aggregate(&text, self.rows));
            }
            Some(Err(_)) => self.latest = None,
            None if refused => self.latest = None,
            None if over_budget => {
                self.over_budget = self.over_budget.saturating_add(1);
                warn!(
                    instance = %instance,
                    "CLIENT LIST is over max_reply_bytes: the client tables stay empty; asked again in {} s (raise max_reply_bytes, or set client_list = false)",
                    self.wait().as_secs()
                );
                self.latest = None;
            }
            None => {}
        }
    }

    /// The aggregates to serve.
    pub fn latest(&self) -> Option<ClientAggregates> {
        self.latest.clone()
    }
}

/// The row of the connections that set no name.
pub const NO_NAME: &str = "(no name)";
/// The row of the names over the cap or too long to be an index.
pub const OTHER_NAMES: &str = "(other names)";
/// The row of the users over the cap or too long to be an index.
pub const OTHER_USERS: &str = "(other users)";
/// The row of connections whose line names no user (Redis before 6.0).
pub const NO_USER: &str = "(no user)";

/// What a group of connections (one name, or one user) looks like.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientGroup {
    pub count: u64,
    /// The largest `age`: seconds since the oldest connected.
    pub oldest_age: u64,
    /// The largest `idle`, in seconds.
    pub max_idle: u64,
    /// The largest `omem`: bytes waiting in an output list.
    pub max_output_mem: u64,
    /// The largest `tot-mem` (Redis 6.0+): all the memory of a connection.
    pub max_total_mem: u64,
    /// Connections blocked in a command (`b` in `flags`).
    pub blocked: u64,
}

impl ClientGroup {
    fn add(&mut self, other: &ClientGroup) {
        self.count = self.count.saturating_add(other.count);
        self.oldest_age = self.oldest_age.max(other.oldest_age);
        self.max_idle = self.max_idle.max(other.max_idle);
        self.max_output_mem = self.max_output_mem.max(other.max_output_mem);
        self.max_total_mem = self.max_total_mem.max(other.max_total_mem);
        self.blocked = self.blocked.saturating_add(other.blocked);
    }
}

/// The connections of one instance, by name and by user, each list at most
/// the cap long and sorted by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientAggregates {
    pub by_name: Vec<(String, ClientGroup)>,
    pub by_user: Vec<(String, ClientGroup)>,
}

/// Reads a `CLIENT LIST` reply and aggregates it, at most `rows` rows per
/// table (the last of them the others' row when there are more).
pub fn aggregate(reply: &[u8], rows: usize) -> ClientAggregates {
    let mut by_name: BTreeMap<String, ClientGroup> = BTreeMap::new();
    let mut by_user: BTreeMap<String, ClientGroup> = BTreeMap::new();
    let mut other_names = ClientGroup::default();
    let mut other_users = ClientGroup::default();
    for line in reply.split(|b| *b == b'\n') {
        let Some(client) = Client::parse(line) else {
            continue;
        };
        let group = client.group();
        match client.name.as_deref() {
            None => by_name.entry(NO_NAME.to_string()).or_default().add(&group),
            // A name no index can hold (the catalogue's one rule) is counted
            // with the others, never dropped.
            Some(name) if name_fits_index(name.as_bytes(), MAX_NAME_INDEX_LEN) => {
                by_name.entry(name.to_string()).or_default().add(&group)
            }
            Some(_) => other_names.add(&group),
        }
        match client.user.as_deref() {
            None => by_user.entry(NO_USER.to_string()).or_default().add(&group),
            Some(user) if name_fits_index(user.as_bytes(), MAX_NAME_INDEX_LEN) => {
                by_user.entry(user.to_string()).or_default().add(&group)
            }
            Some(_) => other_users.add(&group),
        }
    }
    ClientAggregates {
        by_name: capped(by_name, other_names, OTHER_NAMES, rows),
        by_user: capped(by_user, other_users, OTHER_USERS, rows),
    }
}

/// The `rows` largest groups (by count, then name), the rest added to the
/// others' row, which is there only when it counts a connection.
fn capped(
    groups: BTreeMap<String, ClientGroup>,
    mut other: ClientGroup,
    other_name: &str,
    rows: usize,
) -> Vec<(String, ClientGroup)> {
    let rows = rows.max(1);
    let mut groups: Vec<(String, ClientGroup)> = groups.into_iter().collect();
    let room = if groups.len() > rows || other.count > 0 {
        rows - 1
    } else {
        rows
    };
    if groups.len() > room {
        groups.sort_by(|(a, x), (b, y)| y.count.cmp(&x.count).then_with(|| a.cmp(b)));
        for (_, group) in groups.drain(room..) {
            other.add(&group);
        }
    }
    if other.count > 0 {
        groups.push((other_name.to_string(), other));
    }
    groups.sort_by(|(a, _), (b, _)| a.cmp(b));
    groups
}

/// The fields of one `CLIENT LIST` line the aggregates need.
#[derive(Debug, Default, PartialEq, Eq)]
struct Client {
    name: Option<String>,
    user: Option<String>,
    age: u64,
    idle: u64,
    blocked: bool,
    omem: u64,
    tot_mem: u64,
}

impl Client {
    /// One line: `key=value` pairs separated by spaces; `None` for a line
    /// that is no client's (no `id=`).
    fn parse(line: &[u8]) -> Option<Client> {
        // Bytes that are no UTF-8 become U+FFFD: the connection still counts.
        let line = String::from_utf8_lossy(line);
        let line = line.trim_end_matches('\r');
        let mut client = Client::default();
        let mut has_id = false;
        for pair in line.split(' ') {
            let Some((key, value)) = pair.split_once('=') else {
                continue;
            };
            let number = || value.parse::<u64>().unwrap_or(0);
            match key {
                "id" => has_id = true,
                "name" if !value.is_empty() => client.name = Some(value.to_string()),
                "user" if !value.is_empty() => client.user = Some(value.to_string()),
                "age" => client.age = number(),
                "idle" => client.idle = number(),
                "flags" => client.blocked = value.contains('b'),
                "omem" => client.omem = number(),
                "tot-mem" => client.tot_mem = number(),
                _ => {}
            }
        }
        has_id.then_some(client)
    }

    fn group(&self) -> ClientGroup {
        ClientGroup {
            count: 1,
            oldest_age: self.age,
            max_idle: self.idle,
            max_output_mem: self.omem,
            max_total_mem: self.tot_mem,
            blocked: u64::from(self.blocked),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> Vec<u8> {
        std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/redis/7.0-client-list.txt"
        ))
        .unwrap()
    }

    fn row<'a>(rows: &'a [(String, ClientGroup)], name: &str) -> &'a ClientGroup {
        &rows.iter().find(|(n, _)| n == name).unwrap().1
    }

    /// A reply over the budget (it ended the connection) is asked again
    /// after 2, 4 … 64 intervals, not at every interval nor never; a good
    /// reply brings the interval back.
    #[test]
    fn a_reply_over_the_budget_is_asked_again_later_and_later() {
        let mut list = ClientList {
            enabled: true,
            every: Duration::from_secs(60),
            rows: 50,
            asked: None,
            latest: None,
            over_budget: 0,
        };
        let secs = |s| Duration::from_secs(s);
        for (n, wait) in [(1, 120), (2, 240), (6, 3840), (7, 3840)] {
            while list.over_budget < n {
                list.answered("main", None, false, true);
            }
            let at = list.asked.unwrap();
            assert!(!list.due_at(at + secs(wait - 1)), "{n}");
            assert!(list.due_at(at + secs(wait)), "{n}");
            assert!(list.latest().is_none());
        }
        list.answered(
            "main",
            Some(redis::Value::BulkString(fixture())),
            false,
            false,
        );
        let at = list.asked.unwrap();
        assert!(list.due_at(at + secs(60)) && list.latest().is_some());
    }

    /// A real Redis 7.0's reply (tests/fixtures/redis/README.md says how it
    /// was made): the agent, two blocked workers, three web clients, one
    /// without a name, as user default and user app.
    #[test]
    fn a_real_client_list_per_name_and_user() {
        let clients = aggregate(&fixture(), 50);
        let names: Vec<&str> = clients.by_name.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["(no name)", "redis-snmp", "web", "worker"]);
        let worker = row(&clients.by_name, "worker");
        assert_eq!((worker.count, worker.blocked), (2, 2));
        let web = row(&clients.by_name, "web");
        assert_eq!((web.count, web.blocked), (3, 0));
        assert!(web.max_total_mem > 0);
        assert!(web.max_output_mem > 0, "one web client holds a large reply");
        let users: Vec<&str> = clients.by_user.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(users, ["app", "default"]);
        let total: u64 = clients.by_user.iter().map(|(_, g)| g.count).sum();
        assert_eq!(total, 7);
    }

    #[test]
    fn the_cap_sums_the_rest_in_one_row() {
        let mut reply = String::new();
        for i in 0..10 {
            for _ in 0..=i {
                reply.push_str(&format!(
                    "id={i} name=n{i} age={i} idle=1 flags=N omem=0 tot-mem=10 user=u\n"
                ));
            }
        }
        let long = "x".repeat(MAX_NAME_INDEX_LEN + 1);
        reply.push_str(&format!("id=99 name={long} age=1000 flags=b user=u\n"));
        let clients = aggregate(reply.as_bytes(), 4);
        let names: Vec<&str> = clients.by_name.iter().map(|(n, _)| n.as_str()).collect();
        // The three largest, and the others (n0..n6 and the long name).
        assert_eq!(names, ["(other names)", "n7", "n8", "n9"]);
        let other = row(&clients.by_name, OTHER_NAMES);
        assert_eq!(other.count, (1..=7).sum::<u64>() + 1);
        assert_eq!((other.oldest_age, other.blocked), (1000, 1));
        assert_eq!(
            clients.by_user,
            [(
                "u".to_string(),
                ClientGroup {
                    count: 56,
                    oldest_age: 1000,
                    max_idle: 1,
                    max_output_mem: 0,
                    max_total_mem: 10,
                    blocked: 1,
                }
            )]
        );
    }

    #[test]
    fn garbage_is_skipped_not_trusted() {
        let clients = aggregate(
            b"\xff\xfe\nno pairs here\nid=1 age=x idle=-3 name=\n=\n",
            50,
        );
        assert_eq!(clients.by_name.len(), 1);
        let (name, group) = &clients.by_name[0];
        assert_eq!(name, NO_NAME);
        assert_eq!((group.count, group.oldest_age, group.max_idle), (1, 0, 0));
        assert_eq!(clients.by_user[0].0, NO_USER);
        assert_eq!(aggregate(b"", 50), ClientAggregates::default());
        // Names that cannot index a row are counted with the others.
        let clients = aggregate(
            b"id=1 name=caf\xc3\xa9 user=\x1b[2J\nid=2 name=a\xff user=u\n",
            50,
        );
        let names: Vec<&str> = clients.by_name.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, [OTHER_NAMES]);
        assert_eq!(clients.by_name[0].1.count, 2);
        let users: Vec<&str> = clients.by_user.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(users, [OTHER_USERS, "u"]);
    }
}
