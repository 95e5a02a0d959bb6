//! Reading the replies of the optional commands (SLOWLOG, LATENCY LATEST,
//! SENTINEL MASTERS, CONFIG GET). Replies come from outside: anything of an
//! unexpected shape reads as "nothing", never as a panic.

use redis::Value;
use std::collections::HashMap;

/// An integer reply, or a number sent as text.
fn number(value: &Value) -> Option<u64> {
    match value {
        Value::Int(n) => u64::try_from(*n).ok(),
        Value::BulkString(bytes) => std::str::from_utf8(bytes).ok()?.trim().parse().ok(),
        Value::SimpleString(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn text(value: &Value) -> Option<String> {
    match value {
        Value::BulkString(bytes) => Some(String::from_utf8_lossy(bytes).into_owned()),
        Value::SimpleString(s) => Some(s.clone()),
        Value::VerbatimString { text, .. } => Some(text.clone()),
        Value::Int(n) => Some(n.to_string()),
        _ => None,
    }
}

fn items(value: &Value) -> &[Value] {
    match value {
        Value::Array(items) | Value::Set(items) => items,
        _ => &[],
    }
}

/// SLOWLOG LEN.
pub fn slowlog_len(reply: &Value) -> Option<u64> {
    number(reply)
}

/// SLOWLOG GET 1: the newest entry's id, UNIX time and duration in µs.
pub fn slowlog_newest(reply: &Value) -> Option<(u64, u64, u64)> {
    let entry = items(items(reply).first()?);
    Some((
        number(entry.first()?)?,
        number(entry.get(1)?)?,
        number(entry.get(2)?)?,
    ))
}

/// LATENCY LATEST: (event, UNIX time, latest ms, max ms) per event.
pub fn latency_latest(reply: &Value) -> Vec<(String, u64, u64, u64)> {
    items(reply)
        .iter()
        .filter_map(|event| {
            let e = items(event);
            Some((
                text(e.first()?)?,
                number(e.get(1)?)?,
                number(e.get(2)?)?,
                number(e.get(3)?)?,
            ))
        })
        .collect()
}

/// SENTINEL MASTERS: one map of fields per master (RESP2 flat arrays of
/// name/value pairs, or RESP3 maps).
pub fn sentinel_masters(reply: &Value) -> Vec<HashMap<String, String>> {
    items(reply)
        .iter()
        .map(|master| match master {
            Value::Map(pairs) => pairs
                .iter()
                .filter_map(|(k, v)| Some((text(k)?, text(v)?)))
                .collect(),
            other => items(other)
                .chunks_exact(2)
                .filter_map(|pair| Some((text(&pair[0])?, text(&pair[1])?)))
                .collect(),
        })
        .filter(|m: &HashMap<String, String>| m.contains_key("name"))
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
            Some((14, 1795362836, 3))
        );
        assert_eq!(slowlog_newest(&Value::Array(vec![])), None);
        assert_eq!(slowlog_len(&Value::Int(3)), Some(3));
        assert_eq!(slowlog_len(&Value::Int(-1)), None);
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
            vec![("command".to_string(), 1795362836, 12, 30)]
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
        assert_eq!(masters[0]["name"], "mymaster");
        assert_eq!(masters[0]["quorum"], "2");
        let map = Value::Array(vec![Value::Map(vec![(bulk("name"), bulk("m2"))])]);
        assert_eq!(sentinel_masters(&map)[0]["name"], "m2");
        assert!(sentinel_masters(&Value::Int(5)).is_empty());
        assert!(sentinel_masters(&Value::Array(vec![Value::Array(vec![bulk("odd")])])).is_empty());
    }
}
