//! Hot keys where the server keeps them (`hot_keys`, issue 25): the reply
//! of `HOTKEYS GET`, which two servers answer in two shapes.
//!
//! - Valkey (valkey-io/valkey#3708, `src/hotkeys.c` at commit
//!   04793915ebcfb512d4c33223354edfe3ef584da1, `hotkeysGetCommand`): with
//!   `hotkeys-top-k` above 0 the server samples key lookups all the time;
//!   `HOTKEYS GET` is an array of entries, each a map (RESP2: a flat
//!   field/value array) of `key` (bulk), `db` (integer) and `qps`
//!   (integer, estimated accesses per second in the last completed
//!   window), hottest first; an empty array when detection is off.
//! - Redis 8.6 (redis/redis `src/hotkeys.c` at commit
//!   1752ce802a1f2353bb7f9e5a36a1709bb516a948, `hotkeysCommand`): tracking
//!   runs only between an operator's `HOTKEYS START` and `STOP`; `HOTKEYS
//!   GET` is nil when none was started, else an array of one map (RESP2:
//!   flat) whose `by-cpu-time-us` and `by-net-bytes` are flat arrays of
//!   key name and integer, largest first, and which names no database. The
//!   agent never starts (nor stops, nor resets) a session: that is the
//!   operator's, and `HOTKEYS START` is `@admin @dangerous`.
//!
//! Asked only with `hot_keys = true`, on the big-key cadence: a server
//! without the command counts the refusal in its error statistics. Where
//! it is refused under an LFU `maxmemory-policy`, `super::big_keys` fills
//! the same table from OBJECT FREQ of the keys it samples. Names are shown
//! as `key_names` says, like the big keys'.

use super::replies::{bytes, fields, items, number};
use crate::metrics::HotKeyField;
use crate::smi::{display_string, Value as SnmpValue};
use redis::Value;

/// The most entries read from one reply (Valkey's `hotkeys-top-k` and
/// Redis's COUNT are at most 64 in their sources; a reply may lie).
pub const MAX_HOT_KEYS: usize = 100;

/// One hot key as the server reported it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HotKey {
    pub name: Vec<u8>,
    /// Valkey's `db`; Redis 8.6 names none.
    pub db: Option<u32>,
    /// Valkey's `qps`.
    pub qps: Option<u64>,
    /// Redis 8.6's `by-cpu-time-us`.
    pub cpu_usec: Option<u64>,
    /// Redis 8.6's `by-net-bytes`.
    pub net_bytes: Option<u64>,
    /// OBJECT FREQ, where the agent samples keys itself (no HOTKEYS, an
    /// LFU `maxmemory-policy`; see `super::big_keys`).
    pub lfu: Option<u64>,
}

/// `HOTKEYS GET` of either server, hottest first, at most
/// [`MAX_HOT_KEYS`]; `None` when the reply is of neither shape (nil: no
/// Redis session; an empty array: Valkey's detection is off, or no window
/// has completed yet, which reads as no rows).
pub fn hot_keys(reply: &Value) -> Option<Vec<HotKey>> {
    let entries = match reply {
        Value::Array(entries) => entries,
        _ => return None,
    };
    if let [only] = entries.as_slice() {
        let fields = fields(only);
        if fields
            .iter()
            .any(|(name, _)| name == "by-cpu-time-us" || name == "by-net-bytes")
        {
            return Some(redis_session(&fields));
        }
    }
    let mut keys = Vec::new();
    for entry in entries.iter().take(MAX_HOT_KEYS) {
        let fields = fields(entry);
        let get = |name: &str| fields.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
        let Some(name) = get("key").and_then(bytes) else {
            continue;
        };
        keys.push(HotKey {
            name,
            db: get("db")
                .and_then(number)
                .and_then(|n| u32::try_from(n).ok()),
            qps: get("qps").and_then(number),
            ..HotKey::default()
        });
    }
    Some(keys)
}

/// Redis 8.6's session: the keys of both lists, a name once, in the order
/// of `by-cpu-time-us` then those only `by-net-bytes` has.
fn redis_session(fields: &[(String, &Value)]) -> Vec<HotKey> {
    let list = |name: &str| -> Vec<(Vec<u8>, u64)> {
        let Some((_, value)) = fields.iter().find(|(n, _)| n == name) else {
            return Vec::new();
        };
        items(value)
            .chunks_exact(2)
            .take(MAX_HOT_KEYS)
            .filter_map(|pair| Some((bytes(&pair[0])?, number(&pair[1])?)))
            .collect()
    };
    let mut keys: Vec<HotKey> = list("by-cpu-time-us")
        .into_iter()
        .map(|(name, usec)| HotKey {
            name,
            cpu_usec: Some(usec),
            ..HotKey::default()
        })
        .collect();
    for (name, bytes) in list("by-net-bytes") {
        if let Some(key) = keys.iter_mut().find(|k| k.name == name) {
            key.net_bytes = Some(bytes);
        } else if keys.len() < MAX_HOT_KEYS {
            keys.push(HotKey {
                name,
                net_bytes: Some(bytes),
                ..HotKey::default()
            });
        }
    }
    keys
}

/// One row of `redisHotKeyTable`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HotKeyRow {
    /// 1-based, hottest first: the row's index.
    pub rank: u32,
    pub label: String,
    pub key: HotKey,
}

impl HotKeyRow {
    pub fn value(&self, field: HotKeyField) -> Option<SnmpValue> {
        Some(match field {
            HotKeyField::Name => display_string(&self.label),
            HotKeyField::Database => SnmpValue::Gauge32(self.key.db?),
            HotKeyField::Qps => SnmpValue::Counter64(self.key.qps?),
            HotKeyField::CpuUsec => SnmpValue::Counter64(self.key.cpu_usec?),
            HotKeyField::NetBytes => SnmpValue::Counter64(self.key.net_bytes?),
            HotKeyField::LfuCounter => SnmpValue::Gauge32(u32::try_from(self.key.lfu?).ok()?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    /// Valkey's reply as `hotkeysGetCommand` writes it (RESP3: maps).
    #[test]
    fn valkey_entries_in_resp3_and_resp2() {
        let entry = |key: &str, db: i64, qps: i64| {
            Value::Map(vec![
                (bulk("key"), bulk(key)),
                (bulk("db"), Value::Int(db)),
                (bulk("qps"), Value::Int(qps)),
            ])
        };
        let reply = Value::Array(vec![entry("user:1", 0, 1200), entry("cart:9", 3, 40)]);
        let keys = hot_keys(&reply).unwrap();
        assert_eq!(
            keys,
            [
                HotKey {
                    name: b"user:1".to_vec(),
                    db: Some(0),
                    qps: Some(1200),
                    ..HotKey::default()
                },
                HotKey {
                    name: b"cart:9".to_vec(),
                    db: Some(3),
                    qps: Some(40),
                    ..HotKey::default()
                },
            ]
        );
        // RESP2: the same fields as a flat array, from the wire.
        let wire =
            b"*1\r\n*6\r\n$3\r\nkey\r\n$6\r\nuser:1\r\n$2\r\ndb\r\n:0\r\n$3\r\nqps\r\n:1200\r\n";
        let reply = redis::parse_redis_value(wire).unwrap();
        assert_eq!(hot_keys(&reply).unwrap(), keys[..1]);
        // Detection off: an empty array, no rows.
        assert_eq!(hot_keys(&Value::Array(vec![])), Some(vec![]));
    }

    /// Redis 8.6's reply, RESP2, as the example of redis/docs
    /// `content/commands/hotkeys-get.md` (commit
    /// 0ad8a81bac322980337f1b5f031d076da1f52c0b) shows it, on the wire.
    #[test]
    fn a_redis_session_from_the_documented_example() {
        let mut wire = String::from("*1\r\n*20\r\n");
        let mut field = |name: &str, value: &str| {
            wire.push_str(&format!("${}\r\n{name}\r\n{value}", name.len()));
        };
        field("tracking-active", ":1\r\n");
        field("sample-ratio", ":1\r\n");
        field("selected-slots", "*0\r\n");
        field("all-commands-all-slots-us", ":220\r\n");
        field("net-bytes-all-commands-all-slots", ":200\r\n");
        field("collection-start-time-unix-ms", ":1769420604522\r\n");
        field("collection-duration-ms", ":6408\r\n");
        field("total-cpu-time-user-ms", ":3\r\n");
        field("total-cpu-time-sys-ms", ":11\r\n");
        field(
            "by-cpu-time-us",
            "*6\r\n$1\r\nx\r\n:104\r\n$1\r\ny\r\n:98\r\n$1\r\nz\r\n:18\r\n",
        );
        let reply = redis::parse_redis_value(wire.as_bytes()).unwrap();
        let keys = hot_keys(&reply).unwrap();
        let shown: Vec<(&[u8], Option<u64>, Option<u32>)> = keys
            .iter()
            .map(|k| (k.name.as_slice(), k.cpu_usec, k.db))
            .collect();
        assert_eq!(
            shown,
            [
                (&b"x"[..], Some(104), None),
                (b"y", Some(98), None),
                (b"z", Some(18), None)
            ]
        );
        // No session: nil, not rows.
        assert_eq!(hot_keys(&Value::Nil), None);
    }

    #[test]
    fn both_redis_lists_join_by_name() {
        let pairs = |list: &[(&str, i64)]| {
            Value::Array(
                list.iter()
                    .flat_map(|(k, n)| [bulk(k), Value::Int(*n)])
                    .collect(),
            )
        };
        let session = Value::Map(vec![
            (bulk("tracking-active"), Value::Int(0)),
            (bulk("by-cpu-time-us"), pairs(&[("a", 29), ("b", 25)])),
            (bulk("by-net-bytes"), pairs(&[("b", 446), ("c", 328)])),
        ]);
        let keys = hot_keys(&Value::Array(vec![session])).unwrap();
        let shown: Vec<(&[u8], Option<u64>, Option<u64>)> = keys
            .iter()
            .map(|k| (k.name.as_slice(), k.cpu_usec, k.net_bytes))
            .collect();
        assert_eq!(
            shown,
            [
                (&b"a"[..], Some(29), None),
                (b"b", Some(25), Some(446)),
                (b"c", None, Some(328))
            ]
        );
    }

    /// What the servers installed here answer (tests/fixtures/redis): an
    /// error, which reads as no rows, never as keys.
    #[test]
    fn the_real_refusals_of_valkey_9_1_and_redis_8_2() {
        for name in ["valkey-9.1-hotkeys-get.resp", "8.2-hotkeys-get.resp"] {
            let path = format!("{}/tests/fixtures/redis/{name}", env!("CARGO_MANIFEST_DIR"));
            let reply = redis::parse_redis_value(&std::fs::read(&path).unwrap()).unwrap();
            assert!(matches!(reply, Value::ServerError(_)), "{reply:?}");
            assert_eq!(hot_keys(&reply), None);
        }
    }

    #[test]
    fn garbage_and_floods_are_bounded() {
        assert_eq!(hot_keys(&Value::Int(3)), None);
        let junk = Value::Array(vec![Value::Nil, Value::Int(1), bulk("key")]);
        assert_eq!(hot_keys(&junk), Some(vec![]));
        let many: Vec<Value> = (0..1000)
            .map(|i| Value::Array(vec![bulk("key"), bulk(&format!("k{i}"))]))
            .collect();
        assert_eq!(hot_keys(&Value::Array(many)).unwrap().len(), MAX_HOT_KEYS);
    }
}
