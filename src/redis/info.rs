//! The parser of Redis `INFO` replies.
//!
//! Input is the payload of the RESP bulk string a Redis server sends for
//! `INFO` (any section selection, any server from 2.x to 7.x, Valkey too):
//!
//! ```text
//! # Server
//! redis_version:7.0.15
//! ...
//!
//! # Keyspace
//! db0:keys=105,expires=20,avg_ttl=1085197
//! ```
//!
//! Parsing is total: every input gives an [`Info`], and nothing here panics.
//! Lines are split on `\n` with a trailing `\r` (and any surrounding
//! whitespace) removed, so CRLF and LF give the same result. A line is
//!
//! - blank: ignored;
//! - a comment (`#` first): `# Name` records a section name, nothing else;
//! - a field `name:value`: split on the **first** colon, so values may hold
//!   colons (`executable:/a:b`, IPv6 addresses);
//! - anything else (no colon, or nothing before it): counted in
//!   [`Info::unreadable_lines`] and otherwise ignored.
//!
//! If a field name occurs twice, the first occurrence wins, except for
//! the names in [`REPEATED`], which Redis writes once per thing: every one
//! is kept, in order ([`Info::every`]).
//!
//! # Storage
//!
//! An `Info` is read every 10 s for up to 100 instances, so it is built with
//! three allocations: one string holding every name and value back to back,
//! in name order, an index of offsets into it (binary-searched by
//! [`Info::get`]), and the list of section names. Because the string is built
//! in name order, two replies with the same fields compare equal whatever
//! their line endings or line order.
//!
//! The typed accessors ([`Info::u64`], [`Info::keyspace`], …) parse values on
//! demand; a field or row that does not parse is reported absent, never an
//! error.

use std::borrow::Cow;
use std::fmt;

/// Field names a server writes on several lines, one per thing: `module`
/// (one line per loaded module, src/module.c `genModulesInfoString`).
pub const REPEATED: &[&str] = &["module"];

/// A parsed `INFO` reply.
#[derive(Clone, Default, PartialEq)]
pub struct Info {
    /// Every field name and value, concatenated, in name order.
    buf: String,
    /// One entry per field, sorted by name (the order of `buf`).
    index: Vec<Span>,
    /// Section names in order of appearance (`# Server` gives "Server").
    sections: Vec<String>,
    /// Lines that were neither field, comment nor blank.
    unreadable: usize,
}

/// Where a field is in `Info::buf`: the name is `start..mid`, the value
/// `mid..end`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Span {
    start: usize,
    mid: usize,
    end: usize,
}

/// One `db<N>:` line of the Keyspace section.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyspaceRow {
    pub db: u32,
    pub keys: u64,
    pub expires: u64,
    /// Absent before Redis 2.6.
    pub avg_ttl: Option<u64>,
    /// Keys with hash-field expirations (Redis 7.4+ `subexpiry`, Valkey
    /// 9.0+ `keys_with_volatile_items`).
    pub subexpiry: Option<u64>,
}

/// One `slave<N>:` line of the Replication section of a master.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicaRow {
    /// The `<N>`: a position in the current list, not a stable identity
    /// (replicas renumber when they reconnect).
    pub slot: u32,
    /// As Redis wrote it; may be an IPv6 address.
    pub ip: String,
    pub port: u16,
    pub state: String,
    /// Absent before Redis 2.8.
    pub offset: Option<u64>,
    /// Absent before Redis 2.8.
    pub lag: Option<u64>,
    /// Valkey's kind of connection (`type=`, 8.0 and later): `replica`, or during a
    /// dual-channel full sync `rdb-channel` and `main-channel` (two lines
    /// for one replica). Absent on older servers.
    pub kind: Option<String>,
}

/// One `cmdstat_<name>:` line, joined with its
/// `latency_percentiles_usec_<name>:` line (Redis 7.0+) when there is one.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandStatRow {
    /// The command, lower case; subcommands as `config|get`.
    pub name: String,
    pub calls: u64,
    pub usec: u64,
    pub usec_per_call: Option<f64>,
    /// Redis 6.2+.
    pub rejected_calls: Option<u64>,
    /// Redis 6.2+.
    pub failed_calls: Option<u64>,
    pub p50_usec: Option<f64>,
    pub p99_usec: Option<f64>,
    pub p999_usec: Option<f64>,
}

/// One `errorstat_<PREFIX>:` line (Redis 6.2+).
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorStatRow {
    /// The error code, e.g. `ERR`, `WRONGTYPE`.
    pub prefix: String,
    pub count: u64,
}

impl Info {
    /// Parses the text of an `INFO` reply. Never fails: what cannot be read
    /// is skipped and counted in [`Info::unreadable_lines`].
    pub fn parse(text: &str) -> Info {
        let mut fields: Vec<(&str, &str)> = Vec::new();
        let mut sections = Vec::new();
        let mut unreadable = 0usize;

        for line in text.split('\n') {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            if let Some(comment) = line.strip_prefix('#') {
                let name = comment.trim();
                if !name.is_empty() {
                    sections.push(name.to_owned());
                }
                continue;
            }
            match line.split_once(':') {
                Some((name, value)) => {
                    let name = name.trim_end();
                    if name.is_empty() {
                        unreadable += 1;
                    } else {
                        fields.push((name, value.trim_start()));
                    }
                }
                None => unreadable += 1,
            }
        }

        // Stable sort, then keep the first of equal names.
        fields.sort_by(|a, b| a.0.cmp(b.0));
        fields.dedup_by(|later, earlier| later.0 == earlier.0 && !REPEATED.contains(&later.0));

        let total = fields.iter().fold(0usize, |n, (k, v)| {
            n.saturating_add(k.len()).saturating_add(v.len())
        });
        let mut buf = String::with_capacity(total);
        let mut index = Vec::with_capacity(fields.len());
        for (name, value) in fields {
            let start = buf.len();
            buf.push_str(name);
            let mid = buf.len();
            buf.push_str(value);
            index.push(Span {
                start,
                mid,
                end: buf.len(),
            });
        }

        Info {
            buf,
            index,
            sections,
            unreadable,
        }
    }

    /// Parses raw reply bytes; invalid UTF-8 becomes U+FFFD first.
    pub fn parse_bytes(bytes: &[u8]) -> Info {
        match String::from_utf8_lossy(bytes) {
            Cow::Borrowed(text) => Info::parse(text),
            Cow::Owned(text) => Info::parse(&text),
        }
    }

    fn name_of(&self, span: &Span) -> &str {
        self.buf.get(span.start..span.mid).unwrap_or("")
    }

    fn value_of(&self, span: &Span) -> &str {
        self.buf.get(span.mid..span.end).unwrap_or("")
    }

    /// The raw value of a field, e.g. `"connected_clients"`.
    pub fn get(&self, field: &str) -> Option<&str> {
        self.index
            .binary_search_by(|span| self.name_of(span).cmp(field))
            .ok()
            .and_then(|i| self.index.get(i))
            .map(|span| self.value_of(span))
    }

    /// The values of every line named `name`, in the reply's order: the
    /// lines of a [`REPEATED`] name (for another name, its one value).
    pub fn every<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.with_prefix(name)
            .filter(|(rest, _)| rest.is_empty())
            .map(|(_, value)| value)
    }

    /// Whether a field is present.
    pub fn contains(&self, field: &str) -> bool {
        self.get(field).is_some()
    }

    /// The value of the first of several alias names that is present
    /// (fields renamed across versions, newest name first by convention).
    pub fn first(&self, names: &[&str]) -> Option<&str> {
        names.iter().find_map(|name| self.get(name))
    }

    /// Unsigned integer value of the first present alias; `None` if none is
    /// present or its value is not a `u64` (`"-1"`, `"1.5"`, overflow).
    pub fn u64(&self, names: &[&str]) -> Option<u64> {
        self.first(names).and_then(parse_u64)
    }

    /// Whether the server is a sentinel, which has no keyspace, slow log or
    /// ACL LOG of the kind a data server has.
    pub fn is_sentinel(&self) -> bool {
        self.first(&["redis_mode", "server_mode"]) == Some("sentinel")
    }

    /// Whether the server has COMMANDLOG: Valkey 8.1 and later, by its own
    /// version (`valkey_version`; Redis has no COMMANDLOG). The poller and
    /// the doctor send COMMANDLOG LEN only then: on other servers a
    /// refused command would count in the server's own error statistics.
    pub fn has_commandlog(&self) -> bool {
        let Some(version) = self.get("valkey_version") else {
            return false;
        };
        let mut parts = version
            .trim()
            .split('.')
            .map(|p| p.parse::<u32>().unwrap_or(0));
        let major = parts.next().unwrap_or(0);
        let minor = parts.next().unwrap_or(0);
        (major, minor) >= (8, 1)
    }

    /// Signed integer value of the first present alias (for fields where
    /// `-1` means "none").
    pub fn i64(&self, names: &[&str]) -> Option<i64> {
        self.first(names).and_then(|v| v.parse().ok())
    }

    /// Decimal value of the first present alias, such as `"16364.80"` or
    /// `"1.84"`; `None` if absent, unparsable or not finite.
    pub fn f64(&self, names: &[&str]) -> Option<f64> {
        self.first(names).and_then(parse_f64)
    }

    /// Section names in order of appearance, as written (`"Server"`,
    /// `"Clients"`, …); empty for INFO of servers before 2.6.
    pub fn sections(&self) -> &[String] {
        &self.sections
    }

    /// Number of fields (distinct, but for the lines of a [`REPEATED`] name).
    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Lines that were neither field, comment nor blank.
    pub fn unreadable_lines(&self) -> usize {
        self.unreadable
    }

    /// Every `(name, value)`, sorted by name.
    pub fn fields(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.index
            .iter()
            .map(|span| (self.name_of(span), self.value_of(span)))
    }

    /// The fields whose name starts with `prefix`, with the prefix removed,
    /// sorted by name.
    pub fn with_prefix<'a>(
        &'a self,
        prefix: &'a str,
    ) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        let from = self
            .index
            .partition_point(|span| self.name_of(span) < prefix);
        self.index
            .get(from..)
            .unwrap_or(&[])
            .iter()
            .map_while(move |span| {
                let rest = self.name_of(span).strip_prefix(prefix)?;
                Some((rest, self.value_of(span)))
            })
    }

    /// The server version `(major, minor, patch)` from `redis_version`, or
    /// from `valkey_version` when there is no `redis_version` (Valkey also
    /// reports a Redis-compatible `redis_version`, which is preferred since
    /// it tells which Redis fields to expect). A missing patch level reads
    /// as 0 and a pre-release suffix (`7.2.0-rc1`) is ignored; `None` if
    /// absent or garbled.
    pub fn version(&self) -> Option<(u32, u32, u32)> {
        parse_version(self.first(&["redis_version", "valkey_version"])?)
    }

    /// Rows of `db<N>:keys=..,expires=..[,avg_ttl=..][,subexpiry=..]` (or
    /// Valkey's `keys_with_volatile_items=..` for `subexpiry`), sorted
    /// by db number. A line without `keys` or `expires` is skipped.
    pub fn keyspace(&self) -> Vec<KeyspaceRow> {
        let mut rows: Vec<KeyspaceRow> = self
            .with_prefix("db")
            .filter_map(|(n, value)| {
                let db = parse_index(n)?;
                let kv = parse_kv_list(value);
                Some(KeyspaceRow {
                    db,
                    keys: kv_u64(&kv, "keys")?,
                    expires: kv_u64(&kv, "expires")?,
                    avg_ttl: kv_u64(&kv, "avg_ttl"),
                    // Valkey 9's name for the same count.
                    subexpiry: kv_u64(&kv, "subexpiry")
                        .or_else(|| kv_u64(&kv, "keys_with_volatile_items")),
                })
            })
            .collect();
        rows.sort_by_key(|row| row.db);
        rows
    }

    /// Rows of `slave<N>:ip=..,port=..,state=..,offset=..,lag=..` (2.8+) or
    /// `slave<N>:<ip>,<port>,<state>` (before 2.8), sorted by `N`. The ip
    /// may be IPv6. A line without ip, port or state is skipped.
    pub fn replicas(&self) -> Vec<ReplicaRow> {
        let mut rows: Vec<ReplicaRow> = self
            .with_prefix("slave")
            .filter_map(|(n, value)| parse_replica(parse_index(n)?, value))
            .collect();
        rows.sort_by_key(|row| row.slot);
        rows
    }

    /// Rows of `cmdstat_<name>:calls=..,usec=..,usec_per_call=..,
    /// rejected_calls=..,failed_calls=..`, with the
    /// `latency_percentiles_usec_<name>:p50=..,p99=..,p99.9=..` values joined
    /// in when present; sorted by name. A line without `calls` or `usec` is
    /// skipped.
    pub fn command_stats(&self) -> Vec<CommandStatRow> {
        // Sorted by name, like the cmdstat_ rows: looked up by binary search.
        let latencies: Vec<(&str, &str)> = self.with_prefix("latency_percentiles_usec_").collect();
        self.with_prefix("cmdstat_")
            .filter(|(name, _)| !name.is_empty())
            .filter_map(|(name, value)| {
                let kv = parse_kv_list(value);
                let mut row = CommandStatRow {
                    name: name.to_owned(),
                    calls: kv_u64(&kv, "calls")?,
                    usec: kv_u64(&kv, "usec")?,
                    usec_per_call: kv_f64(&kv, "usec_per_call"),
                    rejected_calls: kv_u64(&kv, "rejected_calls"),
                    failed_calls: kv_u64(&kv, "failed_calls"),
                    p50_usec: None,
                    p99_usec: None,
                    p999_usec: None,
                };
                if let Ok(i) = latencies.binary_search_by(|(n, _)| (*n).cmp(name)) {
                    let kv = parse_kv_list(latencies.get(i).map_or("", |(_, v)| *v));
                    row.p50_usec = kv_f64(&kv, "p50");
                    row.p99_usec = kv_f64(&kv, "p99");
                    row.p999_usec = kv_f64(&kv, "p99.9");
                }
                Some(row)
            })
            .collect()
    }

    /// Rows of `errorstat_<PREFIX>:count=..`, sorted by prefix. A line
    /// without `count` is skipped.
    pub fn error_stats(&self) -> Vec<ErrorStatRow> {
        self.with_prefix("errorstat_")
            .filter(|(prefix, _)| !prefix.is_empty())
            .filter_map(|(prefix, value)| {
                Some(ErrorStatRow {
                    prefix: prefix.to_owned(),
                    count: kv_u64(&parse_kv_list(value), "count")?,
                })
            })
            .collect()
    }
}

impl fmt::Debug for Info {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Fields<'a>(&'a Info);
        impl fmt::Debug for Fields<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_map().entries(self.0.fields()).finish()
            }
        }
        f.debug_struct("Info")
            .field("sections", &self.sections)
            .field("unreadable_lines", &self.unreadable)
            .field("fields", &Fields(self))
            .finish()
    }
}

/// Parses `"a=1,b=x,c=2.5"` into pairs. Items are split on the first `=`
/// (values may hold `=`), trimmed; empty items and items without `=` are
/// skipped.
pub fn parse_kv_list(s: &str) -> Vec<(&str, &str)> {
    s.split(',')
        .filter_map(|item| {
            let (k, v) = item.split_once('=')?;
            let k = k.trim();
            (!k.is_empty()).then_some((k, v.trim()))
        })
        .collect()
}

fn kv_get<'a>(kv: &[(&str, &'a str)], key: &str) -> Option<&'a str> {
    kv.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

fn kv_u64(kv: &[(&str, &str)], key: &str) -> Option<u64> {
    kv_get(kv, key).and_then(parse_u64)
}

fn kv_f64(kv: &[(&str, &str)], key: &str) -> Option<f64> {
    kv_get(kv, key).and_then(parse_f64)
}

fn parse_u64(s: &str) -> Option<u64> {
    s.parse().ok()
}

fn parse_f64(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// The `<N>` of `db<N>` / `slave<N>`: ASCII digits only (so `slave_repl_offset`
/// or `dbfoo` are not rows), fitting a `u32`.
fn parse_index(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn parse_replica(slot: u32, value: &str) -> Option<ReplicaRow> {
    let kv = parse_kv_list(value);
    if kv.is_empty() {
        // Before 2.8: "<ip>,<port>,<state>".
        let mut parts = value.split(',').map(str::trim);
        let (ip, port, state) = (parts.next()?, parts.next()?, parts.next()?);
        if ip.is_empty() || state.is_empty() || parts.next().is_some() {
            return None;
        }
        return Some(ReplicaRow {
            slot,
            ip: ip.to_owned(),
            port: port.parse().ok()?,
            state: state.to_owned(),
            offset: None,
            lag: None,
            kind: None,
        });
    }
    let ip = kv_get(&kv, "ip").filter(|ip| !ip.is_empty())?;
    let state = kv_get(&kv, "state").filter(|s| !s.is_empty())?;
    Some(ReplicaRow {
        slot,
        ip: ip.to_owned(),
        port: kv_get(&kv, "port")?.parse().ok()?,
        state: state.to_owned(),
        // 2.8 development versions briefly wrote "repl_offset".
        offset: kv_u64(&kv, "offset").or_else(|| kv_u64(&kv, "repl_offset")),
        lag: kv_u64(&kv, "lag"),
        kind: kv_get(&kv, "type")
            .filter(|t| !t.is_empty())
            .map(str::to_owned),
    })
}

fn parse_version(s: &str) -> Option<(u32, u32, u32)> {
    let s = s.trim();
    let s = s.split_once('-').map_or(s, |(v, _)| v);
    let mut parts = s.split('.');
    let number = |p: Option<&str>| -> Option<u32> {
        let p = p?;
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        p.parse().ok()
    };
    let major = number(parts.next())?;
    let minor = number(parts.next())?;
    let patch = match parts.next() {
        None => 0,
        some => number(some)?,
    };
    if parts.next().is_some() {
        return None;
    }
    Some((major, minor, patch))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MASTER_70: &str = include_str!("../../tests/fixtures/redis/7.0-master-info.txt");
    const REPLICA_70: &str = include_str!("../../tests/fixtures/redis/7.0-replica-info.txt");
    const V2_2_12: &str = include_str!("../../tests/fixtures/redis/2.2.12-info.txt");
    const V2_4_15: &str = include_str!("../../tests/fixtures/redis/2.4.15-info.txt");
    const V2_6_9: &str = include_str!("../../tests/fixtures/redis/2.6.9-info.txt");
    const ALL: [&str; 5] = [MASTER_70, REPLICA_70, V2_2_12, V2_4_15, V2_6_9];

    fn approx(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-9)
    }

    /// COMMANDLOG is asked of Valkey 8.1+ only, by the version INFO says
    /// (the real captures of tests/fixtures/redis).
    #[test]
    fn commandlog_is_asked_of_valkey_8_1_and_later_only() {
        let capture = |name: &str| {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/redis")
                .join(name);
            Info::parse(&std::fs::read_to_string(path).unwrap())
        };
        for (name, has) in [
            ("6.2-master-info.txt", false),
            ("7.0-master-info.txt", false),
            ("valkey-8.0-master-info.txt", false),
            ("valkey-9.1-master-info.txt", true),
        ] {
            assert_eq!(capture(name).has_commandlog(), has, "{name}");
        }
        assert!(Info::parse("valkey_version:8.1.0\n").has_commandlog());
        assert!(Info::parse("valkey_version:10.0.0\n").has_commandlog());
        assert!(!Info::parse("valkey_version:8.0.9\n").has_commandlog());
        assert!(!Info::parse("valkey_version:garbage\n").has_commandlog());
    }

    #[test]
    fn fixtures_have_the_line_endings_the_readme_says() {
        assert!(MASTER_70.contains("\r\n"));
        assert!(REPLICA_70.contains("\r\n"));
        for text in [V2_2_12, V2_4_15, V2_6_9] {
            assert!(!text.contains('\r'));
        }
    }

    #[test]
    fn master_70_scalars() {
        let info = Info::parse(MASTER_70);
        assert_eq!(info.unreadable_lines(), 0);
        assert_eq!(info.get("redis_version"), Some("7.0.15"));
        assert_eq!(info.version(), Some((7, 0, 15)));
        assert_eq!(info.u64(&["connected_clients"]), Some(1));
        assert_eq!(info.u64(&["used_memory"]), Some(1_721_568));
        assert_eq!(
            info.u64(&["rdb_changes_since_last_save", "changes_since_last_save"]),
            Some(33)
        );
        assert_eq!(
            info.u64(&["client_recent_max_input_buffer", "client_biggest_input_buf"]),
            Some(20480)
        );
        assert_eq!(info.get("role"), Some("master"));
        assert_eq!(info.u64(&["total_error_replies"]), Some(9));
        assert!(approx(info.f64(&["mem_fragmentation_ratio"]), 4.55));
        assert!(approx(info.f64(&["used_cpu_sys"]), 0.0554));
        // -1 means "none": absent as u64, present as i64.
        assert_eq!(info.u64(&["rdb_current_bgsave_time_sec"]), None);
        assert_eq!(info.i64(&["rdb_current_bgsave_time_sec"]), Some(-1));
        assert_eq!(info.i64(&["second_repl_offset"]), Some(-1));
        // Values with spaces and colons are whole.
        assert_eq!(info.get("monotonic_clock"), Some("POSIX clock_gettime"));
        assert_eq!(info.get("used_memory_peak_perc"), Some("100.11%"));
        assert_eq!(info.f64(&["used_memory_peak_perc"]), None);
        // Rows are fields too.
        assert_eq!(
            info.get("slave0"),
            Some("ip=127.0.0.1,port=18380,state=online,offset=5022,lag=1")
        );
        assert_eq!(info.get("nonexistent_field"), None);
        assert_eq!(info.u64(&["nonexistent_field"]), None);
    }

    #[test]
    fn master_70_sections() {
        let info = Info::parse(MASTER_70);
        let expected = [
            "Server",
            "Clients",
            "Memory",
            "Persistence",
            "Stats",
            "Replication",
            "CPU",
            "Modules",
            "Commandstats",
            "Errorstats",
            "Latencystats",
            "Cluster",
            "Keyspace",
        ];
        assert_eq!(info.sections(), expected);
        assert!(!info.is_empty());
        // Every non-blank, non-comment line of the capture is a distinct field.
        let lines = MASTER_70
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .count();
        assert_eq!(info.len(), lines);
        assert_eq!(info.fields().count(), lines);
        let names: Vec<&str> = info.fields().map(|(k, _)| k).collect();
        assert!(names.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn master_70_keyspace() {
        let info = Info::parse(MASTER_70);
        assert_eq!(
            info.keyspace(),
            vec![
                KeyspaceRow {
                    db: 0,
                    keys: 105,
                    expires: 20,
                    avg_ttl: Some(1_085_197),
                    subexpiry: None,
                },
                KeyspaceRow {
                    db: 3,
                    keys: 4,
                    expires: 2,
                    avg_ttl: Some(6_980_247),
                    subexpiry: None,
                },
            ]
        );
    }

    #[test]
    fn master_70_replicas() {
        let info = Info::parse(MASTER_70);
        assert_eq!(
            info.replicas(),
            vec![ReplicaRow {
                slot: 0,
                ip: "127.0.0.1".into(),
                port: 18380,
                state: "online".into(),
                offset: Some(5022),
                lag: Some(1),
                kind: None,
            }]
        );
        assert_eq!(info.u64(&["connected_slaves"]), Some(1));
    }

    #[test]
    fn master_70_command_stats() {
        let info = Info::parse(MASTER_70);
        let rows = info.command_stats();
        assert_eq!(rows.len(), 32);
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert!(names.windows(2).all(|w| w[0] < w[1]), "sorted: {names:?}");
        for name in [
            "config|get",
            "acl|setuser",
            "client|setname",
            "latency|latest",
        ] {
            assert!(names.contains(&name), "{name} missing");
        }
        let find = |name: &str| rows.iter().find(|r| r.name == name).cloned().unwrap();

        let subscribe = find("subscribe");
        assert_eq!(subscribe.calls, 0);
        assert_eq!(subscribe.usec, 0);
        assert_eq!(subscribe.rejected_calls, Some(1));
        assert_eq!(subscribe.failed_calls, Some(0));
        assert_eq!(
            (subscribe.p50_usec, subscribe.p99_usec, subscribe.p999_usec),
            (None, None, None)
        );
        let debug = find("debug");
        assert_eq!(
            (debug.calls, debug.rejected_calls, debug.p50_usec),
            (0, Some(1), None)
        );

        let set = find("set");
        assert_eq!((set.calls, set.usec), (103, 382));
        assert!(approx(set.usec_per_call, 3.71));
        assert_eq!((set.rejected_calls, set.failed_calls), (Some(2), Some(0)));
        assert!(approx(set.p50_usec, 3.007));
        assert!(approx(set.p99_usec, 8.031));
        assert!(approx(set.p999_usec, 9.023));

        let config_get = find("config|get");
        assert_eq!((config_get.calls, config_get.usec), (1, 8));
        assert!(approx(config_get.p50_usec, 8.031));

        let lpush = find("lpush");
        assert_eq!(lpush.failed_calls, Some(1));
        assert!(approx(lpush.p99_usec, 6.015));

        // 30 latency lines, joined to the 30 commands that were called.
        let with_latency = rows.iter().filter(|r| r.p50_usec.is_some()).count();
        assert_eq!(with_latency, 30);
        assert_eq!(info.with_prefix("latency_percentiles_usec_").count(), 30);
    }

    #[test]
    fn master_70_error_stats() {
        let info = Info::parse(MASTER_70);
        let rows = info.error_stats();
        let got: Vec<(&str, u64)> = rows.iter().map(|r| (r.prefix.as_str(), r.count)).collect();
        assert_eq!(
            got,
            [
                ("ERR", 5),
                ("NOPERM", 2),
                ("WRONGPASS", 1),
                ("WRONGTYPE", 1)
            ]
        );
        let total: u64 = rows.iter().map(|r| r.count).sum();
        assert_eq!(info.u64(&["total_error_replies"]), Some(total));
    }

    #[test]
    fn replica_70() {
        let info = Info::parse(REPLICA_70);
        assert_eq!(info.unreadable_lines(), 0);
        assert_eq!(info.get("role"), Some("slave"));
        assert_eq!(info.get("master_link_status"), Some("up"));
        assert_eq!(info.u64(&["slave_repl_offset"]), Some(5022));
        assert_eq!(info.u64(&["aof_enabled"]), Some(0));
        assert_eq!(info.u64(&["connected_slaves"]), Some(0));
        // slave_repl_offset, slave_priority, … are not replica rows.
        assert!(info.replicas().is_empty());
        let keyspace: Vec<(u32, u64, u64)> = info
            .keyspace()
            .iter()
            .map(|r| (r.db, r.keys, r.expires))
            .collect();
        assert_eq!(keyspace, [(0, 105, 20), (3, 4, 2)]);
        assert_eq!(info.version(), Some((7, 0, 15)));
        assert!(info.sections().iter().any(|s| s == "Modules"));
    }

    #[test]
    fn redis_2_2_12() {
        let info = Info::parse(V2_2_12);
        assert!(info.sections().is_empty());
        assert_eq!(info.unreadable_lines(), 0);
        assert_eq!(info.version(), Some((2, 2, 12)));
        assert_eq!(
            info.u64(&["rdb_changes_since_last_save", "changes_since_last_save"]),
            Some(3180)
        );
        assert_eq!(
            info.first(&["rdb_changes_since_last_save", "changes_since_last_save"]),
            Some("3180")
        );
        assert_eq!(
            info.u64(&["rdb_bgsave_in_progress", "bgsave_in_progress"]),
            Some(0)
        );
        assert_eq!(
            info.u64(&["client_recent_max_input_buffer", "client_biggest_input_buf"]),
            Some(0)
        );
        assert!(approx(info.f64(&["used_cpu_sys"]), 16364.80));
        assert!(approx(info.f64(&["used_cpu_user"]), 25923.18));
        assert!(approx(info.f64(&["mem_fragmentation_ratio"]), 1.84));
        assert_eq!(info.u64(&["total_commands_processed"]), Some(693_164_497));
        assert_eq!(
            info.keyspace(),
            vec![KeyspaceRow {
                db: 0,
                keys: 71424,
                expires: 71414,
                avg_ttl: None,
                subexpiry: None,
            }]
        );
        assert!(info.command_stats().is_empty());
        assert!(info.error_stats().is_empty());
        assert!(info.replicas().is_empty());
    }

    #[test]
    fn redis_2_4_15() {
        let info = Info::parse(V2_4_15);
        assert!(info.sections().is_empty());
        assert_eq!(info.unreadable_lines(), 0);
        assert_eq!(info.version(), Some((2, 4, 15)));
        assert_eq!(
            info.u64(&["rdb_changes_since_last_save", "changes_since_last_save"]),
            Some(0)
        );
        assert_eq!(info.get("mem_allocator"), Some("libc"));
        assert!(approx(info.f64(&["used_cpu_sys"]), 0.0));
        assert!(approx(info.f64(&["mem_fragmentation_ratio"]), 1.94));
        let keyspace: Vec<(u32, u64, u64)> = info
            .keyspace()
            .iter()
            .map(|r| (r.db, r.keys, r.expires))
            .collect();
        assert_eq!(keyspace, [(0, 16, 0)]);
    }

    #[test]
    fn redis_2_6_9() {
        let info = Info::parse(V2_6_9);
        assert_eq!(info.unreadable_lines(), 0);
        assert_eq!(info.version(), Some((2, 6, 9)));
        assert_eq!(
            info.sections(),
            [
                "Server",
                "Clients",
                "Memory",
                "Persistence",
                "Stats",
                "Replication",
                "CPU",
                "Keyspace"
            ]
        );
        assert_eq!(
            info.u64(&["rdb_changes_since_last_save", "changes_since_last_save"]),
            Some(2)
        );
        assert_eq!(info.get("os"), Some("Darwin 10.8.0 x86_64"));
        assert_eq!(info.i64(&["rdb_last_bgsave_time_sec"]), Some(-1));
        assert_eq!(info.u64(&["rdb_last_bgsave_time_sec"]), None);
        assert!(approx(info.f64(&["used_cpu_sys"]), 0.94));
        let keyspace: Vec<(u32, u64, u64)> = info
            .keyspace()
            .iter()
            .map(|r| (r.db, r.keys, r.expires))
            .collect();
        assert_eq!(keyspace, [(0, 2, 0)]);
    }

    #[test]
    fn crlf_and_lf_parse_the_same() {
        for text in ALL {
            let lf = text.replace("\r\n", "\n");
            let crlf = lf.replace('\n', "\r\n");
            let a = Info::parse(&lf);
            let b = Info::parse(&crlf);
            assert_eq!(a, b);
            assert_eq!(a, Info::parse(text));
            assert_eq!(a.keyspace(), b.keyspace());
            assert_eq!(a.command_stats(), b.command_stats());
            assert_eq!(Info::parse_bytes(crlf.as_bytes()), a);
        }
        // No final newline, and a lone CR line ending on the last line.
        assert_eq!(Info::parse("a:1\nb:2"), Info::parse("a:1\r\nb:2\r\n"));
        assert_eq!(Info::parse("a:1\r"), Info::parse("a:1"));
    }

    #[test]
    fn values_split_on_first_colon() {
        let info = Info::parse("executable:/a:b\r\nconfig_file:\r\nx::y\r\n");
        assert_eq!(info.get("executable"), Some("/a:b"));
        assert_eq!(info.get("config_file"), Some(""));
        assert_eq!(info.get("x"), Some(":y"));
        assert_eq!(info.u64(&["config_file"]), None);
        assert_eq!(info.unreadable_lines(), 0);
    }

    #[test]
    fn first_takes_the_first_present_alias() {
        let info = Info::parse("old:1\nnew:2\nbad:x\n");
        assert_eq!(info.first(&["new", "old"]), Some("2"));
        assert_eq!(info.first(&["missing", "old"]), Some("1"));
        assert_eq!(info.first(&["missing"]), None);
        assert_eq!(info.first(&[]), None);
        // The first present alias decides, even if it does not parse.
        assert_eq!(info.u64(&["bad", "old"]), None);
        assert_eq!(info.u64(&["missing", "old"]), Some(1));
    }

    #[test]
    fn ipv6_replica() {
        let info = Info::parse(
            "# Replication\r\nrole:master\r\nconnected_slaves:2\r\n\
             slave1:ip=2001:db8::7,port=6381,state=wait_bgsave,offset=0,lag=-1\r\n\
             slave0:ip=::1,port=6380,state=online,offset=10,lag=0\r\n",
        );
        assert_eq!(
            info.replicas(),
            vec![
                ReplicaRow {
                    slot: 0,
                    ip: "::1".into(),
                    port: 6380,
                    state: "online".into(),
                    offset: Some(10),
                    lag: Some(0),
                    kind: None,
                },
                ReplicaRow {
                    slot: 1,
                    ip: "2001:db8::7".into(),
                    port: 6381,
                    state: "wait_bgsave".into(),
                    offset: Some(0),
                    lag: None,
                    kind: None,
                },
            ]
        );
    }

    #[test]
    fn replica_rows_sort_numerically_and_skip_bad_lines() {
        let info = Info::parse(
            "slave10:ip=h10,port=1,state=online\n\
             slave2:ip=h2,port=2,state=online\n\
             slave3:ip=h3,port=70000,state=online\n\
             slave4:port=4,state=online\n\
             slave5:ip=h5,state=online\n\
             slave_priority:100\n\
             slave:ip=x,port=1,state=online\n\
             slave99999999999:ip=x,port=1,state=online\n",
        );
        let rows = info.replicas();
        let got: Vec<(u32, &str)> = rows.iter().map(|r| (r.slot, r.ip.as_str())).collect();
        assert_eq!(got, [(2, "h2"), (10, "h10")]);
    }

    #[test]
    fn pre_2_8_replica_format() {
        let info = Info::parse("slave0:10.0.0.2,6379,online\nslave1:::1,6380,send_bulk\n");
        let rows = info.replicas();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[0],
            ReplicaRow {
                slot: 0,
                ip: "10.0.0.2".into(),
                port: 6379,
                state: "online".into(),
                offset: None,
                lag: None,
                kind: None,
            }
        );
        assert_eq!((rows[1].ip.as_str(), rows[1].port), ("::1", 6380));
    }

    #[test]
    fn keyspace_with_subexpiry_and_bad_rows() {
        let info = Info::parse(
            "# Keyspace\n\
             db12:keys=7,expires=0,avg_ttl=0,subexpiry=3\n\
             db0:keys=105,expires=20,avg_ttl=1085197,subexpiry=0\n\
             db2:expires=1,avg_ttl=0\n\
             db4:keys=x,expires=1\n\
             dbfoo:keys=1,expires=1\n\
             db:keys=1,expires=1\n\
             db5:keys=9,expires=1,future_field=42,avg_ttl=\n",
        );
        assert_eq!(
            info.keyspace(),
            vec![
                KeyspaceRow {
                    db: 0,
                    keys: 105,
                    expires: 20,
                    avg_ttl: Some(1_085_197),
                    subexpiry: Some(0),
                },
                KeyspaceRow {
                    db: 5,
                    keys: 9,
                    expires: 1,
                    avg_ttl: None,
                    subexpiry: None,
                },
                KeyspaceRow {
                    db: 12,
                    keys: 7,
                    expires: 0,
                    avg_ttl: Some(0),
                    subexpiry: Some(3),
                },
            ]
        );
    }

    #[test]
    fn old_command_stats_and_bad_rows() {
        let info = Info::parse(
            "cmdstat_get:calls=5,usec=10,usec_per_call=2.00\n\
             cmdstat_set:usec=10\n\
             cmdstat_:calls=1,usec=1\n\
             cmdstat_del:calls=1,usec=1,usec_per_call=nan\n\
             latency_percentiles_usec_del:p50=1.0,p99=inf,p99.9=x\n\
             latency_percentiles_usec_orphan:p50=1.0\n\
             errorstat_ERR:count=3\n\
             errorstat_BAD:cnt=3\n\
             errorstat_:count=1\n",
        );
        let rows = info.command_stats();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[1],
            CommandStatRow {
                name: "get".into(),
                calls: 5,
                usec: 10,
                usec_per_call: Some(2.0),
                rejected_calls: None,
                failed_calls: None,
                p50_usec: None,
                p99_usec: None,
                p999_usec: None,
            }
        );
        assert_eq!(rows[0].name, "del");
        assert_eq!(rows[0].usec_per_call, None);
        assert_eq!(
            (rows[0].p50_usec, rows[0].p99_usec, rows[0].p999_usec),
            (Some(1.0), None, None)
        );
        assert_eq!(
            info.error_stats(),
            vec![ErrorStatRow {
                prefix: "ERR".into(),
                count: 3
            }]
        );
    }

    #[test]
    fn garbage_lines_are_counted() {
        let info = Info::parse(
            "# Server\r\n\
             redis_version:7.2.4\r\n\
             this line has no colon\r\n\
             :value without a name\r\n\
             \r\n\
             \t \r\n\
             #\r\n\
             # Modules\r\n\
             \r\n\
             # Clients\r\n\
             connected_clients:3\r\n\
             $1234\r\n",
        );
        assert_eq!(info.unreadable_lines(), 3);
        assert_eq!(info.len(), 2);
        assert_eq!(info.sections(), ["Server", "Modules", "Clients"]);
        assert_eq!(info.u64(&["connected_clients"]), Some(3));
        assert_eq!(info.version(), Some((7, 2, 4)));
    }

    #[test]
    fn duplicate_fields_keep_the_first() {
        let info = Info::parse("a:1\nb:2\na:3\n");
        assert_eq!(info.get("a"), Some("1"));
        assert_eq!(info.len(), 2);
    }

    #[test]
    fn empty_and_blank_input() {
        for text in ["", "\n", "\r\n\r\n", "   ", "#", "# Server\r\n"] {
            let info = Info::parse(text);
            assert!(info.is_empty(), "{text:?}");
            assert_eq!(info.len(), 0);
            assert_eq!(info.unreadable_lines(), 0);
            assert_eq!(info.version(), None);
            assert!(info.keyspace().is_empty());
            assert!(info.replicas().is_empty());
            assert!(info.command_stats().is_empty());
            assert!(info.error_stats().is_empty());
        }
        assert_eq!(Info::parse(""), Info::default());
        assert_eq!(Info::parse_bytes(b""), Info::default());
    }

    #[test]
    fn numbers_at_and_past_the_limits() {
        let info = Info::parse(
            "max:18446744073709551615\n\
             over:18446744073709551616\n\
             huge:99999999999999999999999999999999999999\n\
             neg:-1\n\
             imin:-9223372036854775808\n\
             iover:-9223372036854775809\n\
             frac:1.5\n\
             exp:1e3\n\
             nan:nan\n\
             NaN:NaN\n\
             inf:inf\n\
             ninf:-inf\n\
             infinity:infinity\n\
             bigf:1e400\n\
             empty:\n\
             spaced: 42 \n",
        );
        assert_eq!(info.u64(&["max"]), Some(u64::MAX));
        assert_eq!(info.u64(&["over"]), None);
        assert_eq!(info.i64(&["over"]), None);
        assert_eq!(info.u64(&["huge"]), None);
        assert!(info.f64(&["huge"]).is_some());
        assert_eq!(info.u64(&["neg"]), None);
        assert_eq!(info.i64(&["neg"]), Some(-1));
        assert_eq!(info.f64(&["neg"]), Some(-1.0));
        assert_eq!(info.i64(&["imin"]), Some(i64::MIN));
        assert_eq!(info.i64(&["iover"]), None);
        assert_eq!(info.u64(&["frac"]), None);
        assert_eq!(info.f64(&["frac"]), Some(1.5));
        assert_eq!(info.f64(&["exp"]), Some(1000.0));
        for name in ["nan", "NaN", "inf", "ninf", "infinity", "bigf", "empty"] {
            assert_eq!(info.f64(&[name]), None, "{name}");
        }
        assert_eq!(info.u64(&["empty"]), None);
        assert_eq!(info.u64(&["spaced"]), Some(42));
    }

    #[test]
    fn versions() {
        let v = |s: &str| Info::parse(s).version();
        assert_eq!(v("redis_version:7.4.1"), Some((7, 4, 1)));
        assert_eq!(v("redis_version:7.2.0-rc1"), Some((7, 2, 0)));
        assert_eq!(v("redis_version:6.2"), Some((6, 2, 0)));
        assert_eq!(v("redis_version:255.255.255"), Some((255, 255, 255)));
        assert_eq!(v("valkey_version:8.0.1"), Some((8, 0, 1)));
        assert_eq!(
            v("redis_version:7.2.4\nvalkey_version:8.0.1"),
            Some((7, 2, 4))
        );
        for bad in [
            "redis_version:",
            "redis_version:7",
            "redis_version:x.y.z",
            "redis_version:1.2.3.4",
            "redis_version:1..3",
            "redis_version:-1.2.3",
            "redis_version:+1.2.3",
            "redis_version:99999999999.0.0",
            "other:1.2.3",
        ] {
            assert_eq!(v(bad), None, "{bad}");
        }
    }

    #[test]
    fn kv_lists() {
        assert_eq!(
            parse_kv_list("a=1,b=x,c=2.5"),
            [("a", "1"), ("b", "x"), ("c", "2.5")]
        );
        assert_eq!(parse_kv_list("a=1,,b=2,"), [("a", "1"), ("b", "2")]);
        assert_eq!(parse_kv_list("a=b=c,d="), [("a", "b=c"), ("d", "")]);
        assert_eq!(parse_kv_list("noequals,=nokey,x=1"), [("x", "1")]);
        assert_eq!(
            parse_kv_list("ip=::1,port=6380"),
            [("ip", "::1"), ("port", "6380")]
        );
        assert!(parse_kv_list("").is_empty());
        assert!(parse_kv_list(",,,").is_empty());
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        let mut bytes = b"connected_clients:5\r\nname:\xff\xfeok\r\n\xc3:x\r\n".to_vec();
        bytes.extend_from_slice(b"used_memory:100\r\n");
        let info = Info::parse_bytes(&bytes);
        assert_eq!(info.u64(&["connected_clients"]), Some(5));
        assert_eq!(info.get("name"), Some("\u{fffd}\u{fffd}ok"));
        assert_eq!(info.get("\u{fffd}"), Some("x"));
        assert_eq!(info.u64(&["used_memory"]), Some(100));
    }

    #[test]
    fn with_prefix_is_a_range() {
        let info = Info::parse(MASTER_70);
        let errors: Vec<(&str, &str)> = info.with_prefix("errorstat_").collect();
        assert_eq!(errors.len(), 4);
        assert_eq!(errors[0], ("ERR", "count=5"));
        assert_eq!(info.with_prefix("zzz").count(), 0);
        assert_eq!(info.with_prefix("").count(), info.len());
    }

    #[test]
    fn debug_output_lists_fields() {
        let text = format!("{:?}", Info::parse("# S\nb:2\na:1\nbad\n"));
        assert_eq!(
            text,
            r#"Info { sections: ["S"], unreadable_lines: 1, fields: {"a": "1", "b": "2"} }"#
        );
    }

    /// xorshift64*: deterministic, no extra crates.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.0 = x;
            x.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: usize) -> usize {
            if n == 0 {
                0
            } else {
                (self.next() % n as u64) as usize
            }
        }
    }

    /// Bytes that matter to the grammar, plus a few that break UTF-8.
    const SPECIAL: &[u8] = b":=,#\r\n|-.0123456789 \t\xff\xc3\x80\xe2";

    fn random_byte(rng: &mut Rng) -> u8 {
        if rng.next().is_multiple_of(2) {
            SPECIAL[rng.below(SPECIAL.len())]
        } else {
            rng.next() as u8
        }
    }

    fn mutate(rng: &mut Rng, data: &mut Vec<u8>) {
        match rng.below(4) {
            0 if !data.is_empty() => {
                let at = rng.below(data.len());
                if let Some(b) = data.get_mut(at) {
                    *b = random_byte(rng);
                }
            }
            1 => {
                let at = rng.below(data.len() + 1);
                let b = random_byte(rng);
                data.insert(at, b);
            }
            2 if !data.is_empty() => {
                let at = rng.below(data.len());
                data.remove(at);
            }
            _ if !data.is_empty() => {
                // Cut a run of up to 64 bytes (drops line ends, halves fields).
                let at = rng.below(data.len());
                let len = rng.below(64).min(data.len() - at);
                data.drain(at..at + len);
            }
            _ => data.push(random_byte(rng)),
        }
    }

    /// Calls every accessor: the typed ones on every field when `all_fields`,
    /// else on a few picked at random (a full sweep is ~300 lookups).
    /// Returns a number derived from all answers so none is optimised away.
    fn exercise(info: &Info, rng: &mut Rng, all_fields: bool) -> usize {
        let mut n = info.len() + info.unreadable_lines() + info.sections().len();
        n += usize::from(info.is_empty());
        let check = |name: &str, value: &str| {
            assert_eq!(info.get(name), Some(value));
            usize::from(info.u64(&[name]).is_some())
                + usize::from(info.i64(&["missing", name]).is_some())
                + usize::from(info.f64(&[name]).is_some())
                + parse_kv_list(value).len()
        };
        if all_fields {
            for (name, value) in info.fields() {
                n += check(name, value);
            }
        } else {
            let fields: Vec<(&str, &str)> = info.fields().collect();
            for _ in 0..8 {
                if let Some(&(name, value)) = fields.get(rng.below(fields.len())) {
                    n += check(name, value);
                }
            }
        }
        for name in ["connected_clients", "used_memory", "used_cpu_sys", "role"] {
            n += usize::from(info.get(name).is_some());
            n += usize::from(info.u64(&[name]).is_some());
            n += usize::from(info.i64(&[name]).is_some());
            n += usize::from(info.f64(&[name]).is_some());
        }
        n += usize::from(
            info.first(&["rdb_changes_since_last_save", "changes_since_last_save"])
                .is_some(),
        );
        n += usize::from(info.version().is_some());
        n += info.keyspace().len();
        n += info.replicas().len();
        n += info.command_stats().len();
        n += info.error_stats().len();
        n
    }

    /// 100k mutated inputs: each one is the previous input with one more
    /// random byte replaced, inserted or deleted (or a run cut), starting
    /// again every 16 inputs from a fresh capture or a window of one.
    #[test]
    fn random_mutations_never_panic() {
        const INPUTS: usize = 100_000;
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut data = Vec::new();
        let mut total = 0usize;
        for i in 0..INPUTS {
            if i % 16 == 0 {
                // The whole of a capture, or (to keep the test quick) a
                // random window of one, cut anywhere, even inside a line.
                let capture = ALL[rng.below(ALL.len())].as_bytes();
                data = if rng.below(4) == 0 {
                    capture.to_vec()
                } else {
                    let from = rng.below(capture.len());
                    let len = 1 + rng.below(1500);
                    capture.iter().skip(from).take(len).copied().collect()
                };
            }
            mutate(&mut rng, &mut data);
            let info = Info::parse_bytes(&data);
            total = total.wrapping_add(exercise(&info, &mut rng, i % 64 == 0));
            if i % 64 == 1 {
                // Parsing is a function of the text alone.
                assert_eq!(Info::parse_bytes(&data), info);
            }
        }
        assert!(total > 0);
    }
}
