//! The YAML plumbing shared by the summary and report parsers: the parser's
//! limits, one-line error messages, [`ParseError`] (what either parser
//! returns when a file cannot be used), and lenient scalar types for values
//! that Puppet writes with more than one YAML type.
//!
//! Everything here deserializes straight from the parser's event stream
//! (`serde-saphyr` builds no intermediate tree), so what a parse keeps in
//! memory is only what the target types keep.

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;

/// Why a file's content could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Refused before parsing.
    #[error("the file is {len} bytes, over the {max}-byte limit")]
    TooLarge { len: u64, max: u64 },
    #[error("the file is empty")]
    Empty,
    /// Not YAML, or not the expected shape: the parser's message, with the
    /// line and column.
    #[error("{0}")]
    Yaml(String),
    /// Valid YAML, but without a key Puppet always writes: most likely a
    /// file cut short (a YAML prefix cut at a line end still parses).
    #[error("incomplete: {0}")]
    Incomplete(String),
}

/// Longest message, title or other free text kept from a file, in bytes.
/// Longer text is cut at a character boundary and ends with `…`.
pub const MAX_TEXT_BYTES: usize = 1024;

/// The parser's options for files of at most `max_bytes` bytes.
///
/// Puppet writes no anchors or aliases, so their limits are tight: an alias
/// bomb stops after [`MAX_REPLAYED_EVENTS`] replayed events instead of
/// expanding. Event, node and scalar-byte limits scale with the input size
/// cap (a real report has about one event per 12 bytes), so a large but
/// honest report is never refused by them; the size cap is what bounds it.
pub(crate) fn options(max_bytes: usize) -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_reader_input_bytes: Some(max_bytes),
            max_events: max_bytes.max(1024),
            max_nodes: max_bytes.max(1024),
            max_total_scalar_bytes: max_bytes.max(1024),
            max_aliases: 100_000,
            max_anchors: 10_000,
            max_recorded_anchor_events: 20_000,
            max_recorded_anchor_bytes: 4 << 20,
            max_depth: 64,
            max_documents: 1,
            max_merge_keys: 100,
        },
        alias_limits: serde_saphyr::alias_limits! {
            max_total_replayed_events: MAX_REPLAYED_EVENTS,
            max_replay_stack_depth: 16,
        },
        with_snippet: false,
        // Puppet never repeats a key. A repeated key is an error (the
        // default): "last wins", as in Ruby, would make the parser buffer
        // whole mappings, resource_statuses included.
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::Error,
    }
}

/// Most events that aliases may replay in one file.
pub const MAX_REPLAYED_EVENTS: usize = 100_000;

/// Deserialize `T` from `bytes`, turning the parser's error into one line.
pub(crate) fn from_slice<'de, T: Deserialize<'de>>(
    bytes: &'de [u8],
    max_bytes: usize,
) -> Result<T, String> {
    serde_saphyr::from_slice_with_options(bytes, options(max_bytes)).map_err(|e| one_line(&e))
}

/// The error as one line: the parser's message may span lines (alias
/// errors say where the anchor was defined).
fn one_line(e: &serde_saphyr::Error) -> String {
    let text = e.without_snippet().to_string();
    let mut out = String::with_capacity(text.len());
    for part in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if !out.is_empty() {
            out.push_str("; ");
        }
        out.push_str(part.strip_prefix("error: ").unwrap_or(part));
    }
    truncate(&mut out, MAX_TEXT_BYTES);
    out
}

/// Cut `s` to at most `max` bytes at a character boundary, marking the cut.
pub(crate) fn truncate(s: &mut String, max: usize) {
    if s.len() <= max {
        return;
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s.push('…');
}

/// Any YAML scalar, kept as its text: Puppet writes some strings unquoted
/// (`puppet: 7.23.0`, a numeric certname), and a number or a boolean in
/// such a place is still the text the user wrote. Null reads as `None`
/// through `Option<Text>`; a sequence or mapping is an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Text(pub String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
                let mut s = v.to_owned();
                truncate(&mut s, MAX_TEXT_BYTES);
                Ok(Text(s))
            }
            fn visit_string<E: de::Error>(self, mut v: String) -> Result<Text, E> {
                truncate(&mut v, MAX_TEXT_BYTES);
                Ok(Text(v))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
        }
        d.deserialize_string(V)
    }
}

/// A YAML number, integer or float, as f64. Used for times and metric
/// values, which Ruby writes as `0.0123`, `3.1746e-05` or `0`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Number(pub f64);

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Number;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Number, E> {
                Ok(Number(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Number, E> {
                Ok(Number(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Number, E> {
                if v.is_finite() {
                    Ok(Number(v))
                } else {
                    Err(E::custom("a number that is not finite"))
                }
            }
        }
        d.deserialize_f64(V)
    }
}

/// A catalog's configuration version: epoch seconds of the compilation by
/// default (an integer), or any string a server's `config_version` script
/// prints. `null` (no catalog was applied) is `None` around it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigVersion {
    Number(i64),
    Text(String),
}

impl fmt::Display for ConfigVersion {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            ConfigVersion::Number(n) => write!(f, "{n}"),
            ConfigVersion::Text(s) => f.write_str(s),
        }
    }
}

impl<'de> Deserialize<'de> for ConfigVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ConfigVersion;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer or a string")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ConfigVersion, E> {
                Ok(ConfigVersion::Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ConfigVersion, E> {
                Ok(match i64::try_from(v) {
                    Ok(n) => ConfigVersion::Number(n),
                    Err(_) => ConfigVersion::Text(v.to_string()),
                })
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<ConfigVersion, E> {
                Ok(ConfigVersion::Text(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<ConfigVersion, E> {
                Ok(ConfigVersion::Text(v.to_string()))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ConfigVersion, E> {
                let mut s = v.to_owned();
                truncate(&mut s, MAX_TEXT_BYTES);
                Ok(ConfigVersion::Text(s))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_keeps_char_boundaries() {
        let mut s = "é".repeat(10);
        truncate(&mut s, 8);
        assert!(s.len() <= 8, "{s}");
        assert!(s.ends_with('…'));
        let mut short = String::from("abc");
        truncate(&mut short, 8);
        assert_eq!(short, "abc");
    }

    #[test]
    fn config_version_takes_every_scalar() {
        #[derive(Deserialize)]
        struct V {
            config: Option<ConfigVersion>,
        }
        let v = |s: &str| from_slice::<V>(s.as_bytes(), 1 << 20).unwrap().config;
        assert_eq!(
            v("config: 1795336206"),
            Some(ConfigVersion::Number(1795336206))
        );
        assert_eq!(
            v("config: 'abc123'"),
            Some(ConfigVersion::Text("abc123".into()))
        );
        assert_eq!(
            v("config: '1795336206'"),
            Some(ConfigVersion::Text("1795336206".into()))
        );
        assert_eq!(
            v("config: git-5f3a"),
            Some(ConfigVersion::Text("git-5f3a".into()))
        );
        assert_eq!(v("config:"), None);
        assert_eq!(v("config: ~"), None);
        assert!(from_slice::<V>(b"config: [1]", 1 << 20).is_err());
    }
}
