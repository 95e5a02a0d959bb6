//! Reading the replies of the optional commands (SLOWLOG, LATENCY LATEST,
//! SENTINEL MASTERS, CONFIG GET). Replies come from outside: anything of an
//! unexpected shape reads as "nothing", never as a panic.

use crate::metrics::SentinelState;
use redis::Value;
use std::collections::HashMap;

/// The newest entry of the slow log (SLOWLOG GET 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlowlogEntry {
    pub id: u64,
    pub unix_time: u64,
    pub micros: u64,
}

/// One event of LATENCY LATEST.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatencyEvent {
    pub event: String,
    pub unix_time: u64,
    pub latest_ms: u64,
    pub max_ms: u64,
}

/// A master a sentinel watches, from SENTINEL MASTERS or, where that is
/// refused, from INFO's `masterN:` lines (which have no flags and no
/// quorum).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchedMaster {
    pub name: String,
    pub state: Option<SentinelState>,
    pub flags: Option<String>,
    pub ip: Option<String>,
    pub port: Option<u64>,
    pub replicas: Option<u64>,
    /// Sentinels watching it besides this one.
    pub other_sentinels: Option<u64>,
    pub quorum: Option<u64>,
    /// `config-epoch`: bumped by each failover (SENTINEL MASTERS only).
    pub config_epoch: Option<u64>,
}

/// A watched master's state from its flags: objectively down beats
/// subjectively down beats ok.
fn state_from_flags(flags: &str) -> SentinelState {
    let has = |flag: &str| flags.split(',').any(|f| f.trim() == flag);
    if has("o_down") {
        SentinelState::Odown
    } else if has("s_down") {
        SentinelState::Sdown
    } else {
        SentinelState::Ok
    }
}

/// An integer reply, or a number sent as text.
pub(super) fn number(value: &Value) -> Option<u64> {
    match value {
        Value::Int(n) => u64::try_from(*n).ok(),
        Value::BulkString(bytes) => std::str::from_utf8(bytes).ok()?.trim().parse().ok(),
        Value::SimpleString(s) => s.trim().parse().ok(),
        _ => None,
    }
}

pub(super) fn text(value: &Value) -> Option<String> {
    match value {
        Value::BulkString(bytes) => Some(String::from_utf8_lossy(bytes).into_owned()),
        Value::SimpleString(s) => Some(s.clone()),
        Value::VerbatimString { text, .. } => Some(text.clone()),
        Value::Int(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The raw bytes of a text reply (names a server keeps may be any bytes).
pub(super) fn bytes(value: &Value) -> Option<Vec<u8>> {
    match value {
        Value::BulkString(bytes) => Some(bytes.clone()),
        other => text(other).map(String::into_bytes),
    }
}

pub(super) fn items(value: &Value) -> &[Value] {
    match value {
        Value::Array(items) | Value::Set(items) => items,
        _ => &[],
    }
}

/// The fields of a reply element that is a map: a RESP3 map, or a RESP2
/// flat name/value array (XINFO GROUPS and CONSUMERS, HOTKEYS GET).
pub(super) fn fields(value: &Value) -> Vec<(String, &Value)> {
    match value {
        Value::Map(pairs) => pairs
            .iter()
            .filter_map(|(k, v)| Some((text(k)?, v)))
            .collect(),
        other => items(other)
            .chunks_exact(2)
            .filter_map(|pair| Some((text(&pair[0])?, &pair[1])))
            .collect(),
    }
}

/// SLOWLOG LEN, and COMMANDLOG LEN (the same integer reply).
pub fn slowlog_len(reply: &Value) -> Option<u64> {
    number(reply)
}

/// SLOWLOG GET 1: the newest entry's id, UNIX time and duration in µs.
pub fn slowlog_newest(reply: &Value) -> Option<SlowlogEntry> {
    let entry = items(items(reply).first()?);
    Some(SlowlogEntry {
        id: number(entry.first()?)?,
        unix_time: number(entry.get(1)?)?,
        micros: number(entry.get(2)?)?,
    })
}

/// LATENCY LATEST: each event's name, UNIX time, latest and highest ms.
pub fn latency_latest(reply: &Value) -> Vec<LatencyEvent> {
    items(reply)
        .iter()
        .filter_map(|event| {
            let e = items(event);
            Some(LatencyEvent {
                event: text(e.first()?)?,
                unix_time: number(e.get(1)?)?,
                latest_ms: number(e.get(2)?)?,
                max_ms: number(e.get(3)?)?,
            })
        })
        .collect()
}

/// SENTINEL MASTERS: the fields of each master (RESP2 flat arrays of
/// name/value pairs, or RESP3 maps); one without a name is left out.
pub fn sentinel_masters(reply: &Value) -> Vec<WatchedMaster> {
    items(reply)
        .iter()
        .filter_map(|master| {
            let fields: HashMap<String, String> = match master {
                Value::Map(pairs) => pairs
                    .iter()
                    .filter_map(|(k, v)| Some((text(k)?, text(v)?)))
                    .collect(),
                other => items(other)
                    .chunks_exact(2)
                    .filter_map(|pair| Some((text(&pair[0])?, text(&pair[1])?)))
                    .collect(),
            };
            let number = |key: &str| fields.get(key).and_then(|v| v.trim().parse::<u64>().ok());
            let flags = fields.get("flags").cloned();
            Some(WatchedMaster {
                name: fields.get("name")?.clone(),
                state: flags.as_deref().map(state_from_flags),
                ip: fields.get("ip").cloned(),
                port: number("port"),
                replicas: number("num-slaves"),
                other_sentinels: number("num-other-sentinels"),
                quorum: number("quorum"),
                config_epoch: number("config-epoch"),
                flags,
            })
        })
        .collect()
}

/// A sentinel's `masterN:name=..,status=..,address=ip:port,slaves=..,
/// sentinels=..` INFO lines, for a user that may not run SENTINEL MASTERS.
/// `sentinels` counts this sentinel too.
pub fn masters_from_info(info: &super::info::Info) -> Vec<WatchedMaster> {
    info.with_prefix("master")
        .filter(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .filter_map(|(_, value)| {
            let kv = super::info::parse_kv_list(value);
            let get = |key: &str| kv.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
            let number = |key: &str| get(key).and_then(|v| v.trim().parse::<u64>().ok());
            let (ip, port) = match get("address").and_then(|a| a.rsplit_once(':')) {
                Some((ip, port)) => (Some(ip.to_string()), port.parse().ok()),
                None => (None, None),
            };
            Some(WatchedMaster {
                name: get("name")?.to_string(),
                state: get("status").and_then(SentinelState::from_label),
                flags: None,
                ip,
                port,
                replicas: number("slaves"),
                other_sentinels: number("sentinels").map(|n| n.saturating_sub(1)),
                quorum: None,
                config_epoch: None,
            })
        })
        .collect()
}

/// CONFIG GET databases: `["databases", "16"]` (or a RESP3 map).
pub fn config_value(reply: &Value) -> Option<u64> {
    match reply {
        Value::Map(pairs) => number(&pairs.first()?.1),
        other => number(items(other).get(1)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    #[test]
    fn slowlog_replies_as_redis_7_sends_them() {
        // SLOWLOG GET 1 on Redis 7.0: id, time, µs, args, client, name.
        let entry = Value::Array(vec![
            Value::Int(14),
            Value::Int(1795362836),
            Value::Int(3),
            Value::Array(vec![bulk("set"), bulk("a"), bulk("b")]),
            bulk("127.0.0.1:49472"),
            bulk(""),
        ]);
        assert_eq!(
            slowlog_newest(&Value::Array(vec![entry])),
            Some(SlowlogEntry {
                id: 14,
                unix_time: 1795362836,
                micros: 3
            })
        );
        assert_eq!(slowlog_newest(&Value::Array(vec![])), None);
        assert_eq!(slowlog_len(&Value::Int(3)), Some(3));
        assert_eq!(slowlog_len(&Value::Int(-1)), None);
    }

    #[test]
    fn a_sentinels_masters_from_its_info_lines() {
        for file in [
            "6.2-sentinel-info.txt",
            "7.0-sentinel-info.txt",
            "valkey-9.1-sentinel-info.txt",
        ] {
            let text = std::fs::read_to_string(format!(
                "{}/tests/fixtures/redis/{file}",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap();
            let masters = masters_from_info(&super::super::info::Info::parse(&text));
            assert_eq!(masters.len(), 1, "{file}");
            let m = &masters[0];
            assert_eq!(m.name, "mymaster", "{file}");
            assert_eq!(m.state, Some(SentinelState::Ok), "{file}");
            assert_eq!(m.ip.as_deref(), Some("127.0.0.1"), "{file}");
            assert!(m.port.is_some_and(|p| p > 0), "{file}");
            assert_eq!(
                (m.replicas, m.other_sentinels),
                (Some(1), Some(0)),
                "{file}"
            );
            assert_eq!((m.flags.as_deref(), m.quorum), (None, None), "{file}");
        }
        let odd = super::super::info::Info::parse(
            "master0:name=a,status=odown,address=[::1]:6380,slaves=0,sentinels=3\r\nmaster1:status=ok\r\nmasterx:name=b\r\n",
        );
        let masters = masters_from_info(&odd);
        assert_eq!(masters.len(), 1);
        assert_eq!(masters[0].state, Some(SentinelState::Odown));
        assert_eq!(masters[0].ip.as_deref(), Some("[::1]"));
        assert_eq!(masters[0].other_sentinels, Some(2));
    }

    #[test]
    fn latency_and_config_replies() {
        let reply = Value::Array(vec![
            Value::Array(vec![
                bulk("command"),
                Value::Int(1795362836),
                Value::Int(12),
                Value::Int(30),
            ]),
            Value::Array(vec![bulk("broken")]),
        ]);
        assert_eq!(
            latency_latest(&reply),
            vec![LatencyEvent {
                event: "command".to_string(),
                unix_time: 1795362836,
                latest_ms: 12,
                max_ms: 30
            }]
        );
        assert_eq!(
            config_value(&Value::Array(vec![bulk("databases"), bulk("16")])),
            Some(16)
        );
        assert_eq!(
            config_value(&Value::Map(vec![(bulk("databases"), bulk("4"))])),
            Some(4)
        );
        assert_eq!(config_value(&Value::Array(vec![])), None);
    }

    #[test]
    fn sentinel_masters_in_both_protocols_and_garbage() {
        let flat = Value::Array(vec![Value::Array(vec![
            bulk("name"),
            bulk("mymaster"),
            bulk("quorum"),
            bulk("2"),
        ])]);
        let masters = sentinel_masters(&flat);
        assert_eq!(masters[0].name, "mymaster");
        assert_eq!(masters[0].quorum, Some(2));
        let map = Value::Array(vec![Value::Map(vec![
            (bulk("name"), bulk("m2")),
            (bulk("flags"), bulk("s_down,o_down,master")),
        ])]);
        assert_eq!(sentinel_masters(&map)[0].name, "m2");
        assert_eq!(sentinel_masters(&map)[0].state, Some(SentinelState::Odown));
        assert!(sentinel_masters(&Value::Int(5)).is_empty());
        assert!(sentinel_masters(&Value::Array(vec![Value::Array(vec![bulk("odd")])])).is_empty());
    }
}
