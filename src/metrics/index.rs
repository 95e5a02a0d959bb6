//! What a table is: its entry, INDEX or AUGMENTS, the shape and key of
//! its rows ([`RowIndex`], [`RowKey`]) and their OpenNMS resource type
//! ([`TableDef`]). The tables themselves are declared by `table!` in the
//! files of their families, and listed in `tables.rs`.

use super::*;

/// The longest name a string-indexed row may have (`redisCmdName`,
/// `redisErrPrefix`, `redisSntName`, `redisLatEvent`: `SIZE (1..64)`).
pub const MAX_NAME_INDEX_LEN: usize = 64;

/// The longest name of the second string of a two-name index
/// (`redisKgName`: `SIZE (1..32)`): with the first (64) and the table's
/// OID, the row's OID stays within SNMP's 128 sub-identifiers.
pub const MAX_SECOND_NAME_INDEX_LEN: usize = 32;

/// The highest bucket of a key-size histogram (`redisKzBucket`,
/// `Integer32 (0..64)`): bucket 0 holds the keys of size 0, bucket `b` the
/// sizes from 2^(b-1) to 2^b - 1, so 64 buckets cover every `u64` size.
pub const MAX_SIZE_BUCKET: u32 = 64;

/// The largest number an index of `Integer32 (1..2147483647)` may be
/// (`redisInstanceIndex`, `redisRpSlot`, `puppetResourceIndex`…).
pub(super) const MAX_INDEX_NUMBER: u32 = i32::MAX as u32;

enumeration! {
    /// `redisKzType`: the types Redis 8's Keysizes section has a histogram
    /// of, as the line names them (`db0_distrib_<label>_sizes` for strings,
    /// in bytes; `_items` for the others, in elements). Numbered as
    /// [`KeyType`] numbers the same types. A line of a type not here is
    /// no row (counted in redisInstanceRowsLeftOut).
    KeysizesType {
        Strings = 1 => ["strings"],
        Lists = 2 => ["lists"],
        Sets = 3 => ["sets"],
        Zsets = 4 => ["zsets"],
        Hashes = 5 => ["hashes"],
    }
}

/// How a table's rows are told apart: its INDEX, the entry's own or, for
/// an entry that AUGMENTS `redisInstanceEntry`, that entry's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowIndex {
    /// `redisInstanceIndex` alone: one row per configured instance, from 1.
    Instance,
    /// `redisInstanceIndex` and an `Integer32 (min..2147483647)` column of
    /// the entry's own.
    InstanceAndNumber { object: &'static str, min: u32 },
    /// `redisInstanceIndex` and a `DisplayString (SIZE (1..64))` column of
    /// the entry's own, not IMPLIED: its length, then one arc per byte.
    InstanceAndName { object: &'static str },
    /// `redisInstanceIndex`, the name that indexes a row of another table
    /// (`parent`: the row this one belongs to, `DisplayString (SIZE
    /// (1..64))`) and a name of the entry's own (`DisplayString (SIZE
    /// (1..32))`: [`MAX_SECOND_NAME_INDEX_LEN`]), each its length and bytes.
    InstanceNameAndName {
        parent: &'static str,
        object: &'static str,
    },
    /// An `Integer32 (1..max)` column of the entry's own alone
    /// (PUPPET-AGENT-MIB's tables: one agent per host, no instance).
    Row { object: &'static str, max: u32 },
    /// `redisInstanceIndex` and three columns of the entry's own (columns
    /// 1 to 3): a database number (`Integer32 (0..2147483647)`), a
    /// [`KeysizesType`] and a bucket of sizes (`Integer32 (0..64)`:
    /// [`MAX_SIZE_BUCKET`]).
    InstanceDbTypeBucket {
        db: &'static str,
        kind: &'static str,
        bucket: &'static str,
    },
}

/// The key of one row, in the terms of its table's INDEX: what a row
/// builder knows of its row. [`RowIndex::suffix`] makes the arcs from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKey<'a> {
    /// Instance `n`'s row ([`RowIndex::Instance`], and every AUGMENTS).
    Instance(u32),
    /// An instance and a number ([`RowIndex::InstanceAndNumber`]).
    Number(u32, u32),
    /// An instance and a name ([`RowIndex::InstanceAndName`]).
    Name(u32, &'a str),
    /// An instance, its parent row's name and the row's own
    /// ([`RowIndex::InstanceNameAndName`]).
    NameName(u32, &'a str, &'a str),
    /// A number of the row's own ([`RowIndex::Row`]).
    Row(u32),
    /// An instance, a database, a type and a bucket
    /// ([`RowIndex::InstanceDbTypeBucket`]).
    Bucket(u32, u32, KeysizesType, u32),
}

impl RowIndex {
    /// The entry's own index object, if it has one (the first, where it
    /// has several: [`Self::own_objects`]).
    pub fn own_object(self) -> Option<&'static str> {
        self.own_objects().first().copied()
    }

    /// The entry's own index objects, in the INDEX's order: its columns 1,
    /// 2, ... (another table's object, as `parent`, is not its own).
    pub fn own_objects(self) -> Vec<&'static str> {
        match self {
            RowIndex::Instance => Vec::new(),
            RowIndex::InstanceAndNumber { object, .. }
            | RowIndex::InstanceAndName { object }
            | RowIndex::InstanceNameAndName { object, .. }
            | RowIndex::Row { object, .. } => vec![object],
            RowIndex::InstanceDbTypeBucket { db, kind, bucket } => vec![db, kind, bucket],
        }
    }

    /// The arcs after a column's OID for the row `key`, or `None` when the
    /// key is not of this shape or no index can hold it (a name too long
    /// or not printable, a number out of the INDEX's range): the row is
    /// then left out, never served under a made-up index. Every row the
    /// agent serves is made here, so it [`fits`](Self::fits) by
    /// construction (a unit test checks the two agree).
    pub fn suffix(self, key: RowKey<'_>) -> Option<Vec<u32>> {
        let suffix = match (self, key) {
            (RowIndex::Instance, RowKey::Instance(instance))
            | (RowIndex::Row { .. }, RowKey::Row(instance)) => vec![instance],
            (RowIndex::InstanceAndNumber { .. }, RowKey::Number(instance, n)) => vec![instance, n],
            (RowIndex::InstanceAndName { .. }, RowKey::Name(instance, name)) => {
                name_index(instance, name)?
            }
            (RowIndex::InstanceNameAndName { .. }, RowKey::NameName(instance, parent, name)) => {
                if !name_fits_index(name.as_bytes(), MAX_SECOND_NAME_INDEX_LEN) {
                    return None;
                }
                let mut suffix = name_index(instance, parent)?;
                suffix.push(name.len() as u32);
                suffix.extend(name.bytes().map(u32::from));
                suffix
            }
            (RowIndex::InstanceDbTypeBucket { .. }, RowKey::Bucket(instance, db, kind, bucket)) => {
                vec![instance, db, kind.number() as u32, bucket]
            }
            _ => return None,
        };
        self.fits(&suffix).then_some(suffix)
    }

    /// Whether `suffix` (the arcs after a column's OID) is a row of this
    /// shape: every number within its `Integer32` range, every name one
    /// [`name_fits_index`] takes.
    pub fn fits(self, suffix: &[u32]) -> bool {
        let number = |n: u32, min: u32| (min..=MAX_INDEX_NUMBER).contains(&n);
        match (self, suffix) {
            (RowIndex::Instance, [instance]) => number(*instance, 1),
            (RowIndex::Row { max, .. }, [row]) => (1..=max.min(MAX_INDEX_NUMBER)).contains(row),
            (RowIndex::InstanceAndNumber { min, .. }, [instance, n]) => {
                number(*instance, 1) && number(*n, min)
            }
            (RowIndex::InstanceAndName { .. }, [instance, rest @ ..]) => {
                number(*instance, 1) && arcs_are_name(rest, MAX_NAME_INDEX_LEN)
            }
            (RowIndex::InstanceNameAndName { .. }, [instance, len, rest @ ..]) => {
                let len = *len as usize;
                number(*instance, 1)
                    && len < rest.len()
                    && arcs_are_name(&suffix[1..len + 2], MAX_NAME_INDEX_LEN)
                    && arcs_are_name(&rest[len..], MAX_SECOND_NAME_INDEX_LEN)
            }
            (RowIndex::InstanceDbTypeBucket { .. }, [instance, db, kind, bucket]) => {
                number(*instance, 1)
                    && number(*db, 0)
                    && KeysizesType::LABELS
                        .iter()
                        .any(|(_, n)| i64::from(*n) == i64::from(*kind))
                    && *bucket <= MAX_SIZE_BUCKET
            }
            _ => false,
        }
    }
}

/// Whether `arcs` are exactly one name index: its length, then its bytes,
/// a name [`name_fits_index`] takes.
fn arcs_are_name(arcs: &[u32], max_len: usize) -> bool {
    let Some((len, bytes)) = arcs.split_first() else {
        return false;
    };
    let bytes: Option<Vec<u8>> = bytes.iter().map(|b| u8::try_from(*b).ok()).collect();
    matches!(bytes, Some(bytes) if *len as usize == bytes.len() && name_fits_index(&bytes, max_len))
}

/// Whether a name can index a row as it is: 1 to `max_len` bytes of
/// printable ASCII (a `DisplayString (SIZE (1..max_len))` index, written
/// as its bytes). The one statement of the rule: the row builders, the
/// key checks and CLIENT LIST's aggregation all ask it, so a name one of
/// them keeps is one the others can serve.
pub fn name_fits_index(name: &[u8], max_len: usize) -> bool {
    (1..=max_len).contains(&name.len()) && name.iter().all(|b| (0x20..0x7f).contains(b))
}

/// The index `instance.len.b1.b2…` of a row named by a string, or `None`
/// when the name is empty, longer than [`MAX_NAME_INDEX_LEN`] or not
/// printable ASCII (then it is no DisplayString).
pub fn name_index(instance: u32, name: &str) -> Option<Vec<u32>> {
    let bytes = name.as_bytes();
    if !name_fits_index(bytes, MAX_NAME_INDEX_LEN) {
        return None;
    }
    let mut suffix = Vec::with_capacity(bytes.len() + 2);
    suffix.push(instance);
    suffix.push(bytes.len() as u32);
    suffix.extend(bytes.iter().map(|b| u32::from(*b)));
    Some(suffix)
}

/// 64-bit FNV-1a: stable across runs and builds, unlike std's hasher, so
/// a name made from it (a cut row key, a key's alias) stays the same.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The longest row key; a longer one is cut and ends in a hash (see
/// [`row_key`]).
const MAX_KEY_LEN: usize = 255;

/// A row key: the instance's name and the row's string, each with ASCII
/// letters, digits and `-` kept and every other byte written as `_` and two
/// upper-case hex digits, joined by `.` (`sessions` and `config|get` make
/// `sessions.config_7Cget`). Distinct pairs make distinct keys: no escaped
/// part contains `.`, and `_` is always followed by two hex digits. The key
/// is made only of `[A-Za-z0-9._-]`, so a manager may use it as a file name
/// as it is: OpenNMS's SiblingColumnStorageStrategy (which drops non-ASCII
/// characters, turns `/` into `-`, then applies the configured replacements)
/// leaves it unchanged, where the raw `cache-1/get` and `cache/1-get` would
/// share a directory. A key longer than `MAX_KEY_LEN` (255) keeps its first 236
/// characters and ends in `_Z` and the 64-bit FNV-1a hash of the whole key
/// in hex (`Z` never follows `_` in a key that is not cut).
pub fn row_key(instance: &str, row: &str) -> String {
    fn escape(text: &str, out: &mut String) {
        for b in text.bytes() {
            if b.is_ascii_alphanumeric() || b == b'-' {
                out.push(char::from(b));
            } else {
                out.push_str(&format!("_{b:02X}"));
            }
        }
    }
    let mut key = String::new();
    escape(instance, &mut key);
    key.push('.');
    escape(row, &mut key);
    if key.len() <= MAX_KEY_LEN {
        return key;
    }
    let hash = fnv1a(key.as_bytes());
    format!("{}_Z{hash:016X}", &key[..MAX_KEY_LEN - 19])
}

/// A consumer group's row key: the key's row key, `.`, and the group's
/// name escaped alike (`main.events.billing`); distinct rows make distinct
/// keys, as no escaped part holds a `.`. Over `MAX_KEY_LEN`, cut and
/// hashed as [`row_key`] does.
pub fn group_row_key(instance: &str, key: &str, group_name: &str) -> String {
    // row_key("", group_name) is ".", then the group escaped.
    let joined = format!("{}{}", row_key(instance, key), row_key("", group_name));
    if joined.len() <= MAX_KEY_LEN {
        joined
    } else {
        row_key(instance, &format!("{key}\u{0}{group_name}"))
    }
}

/// One conceptual table of a module.
#[derive(Debug, Clone, Copy)]
pub struct TableDef {
    /// `redisKeyspaceTable`.
    pub table: &'static str,
    /// `redisKeyspaceEntry`.
    pub entry: &'static str,
    /// The row it AUGMENTS (`redisInstanceEntry`), or `None` for an entry
    /// with an INDEX of its own.
    pub augments: Option<&'static str>,
    pub index: RowIndex,
    /// Where the rows come from, as the index object's DESCRIPTION names
    /// it (`db<N>`, `cmdstat_<name>`, ...).
    pub rows_from: &'static [&'static str],
    /// The resource type OpenNMS keeps its rows under (`opennms/`): one
    /// per INDEX, so the tables that AUGMENT `redisInstanceEntry` share
    /// `redisInstance`.
    pub resource_type: &'static str,
    /// The served columns (the index objects are not-accessible).
    pub columns: &'static [ObjectDef],
    /// The most rows one source may have in it, where the rows come from
    /// lines a server writes as many of as it likes (INFO's `db<N>`,
    /// `slave<N>`, `cmdstat_`, `errorstat_`): the rest are counted, not
    /// served ([`write_rows`]). `None` where another cap bounds the rows
    /// already (one per instance, a reply's own limit, a setting).
    pub max_rows: Option<usize>,
}

impl TableDef {
    /// What a `table!` leaves unsaid: an entry that AUGMENTS
    /// `redisInstanceEntry` (one row per instance, kept under
    /// `redisInstance`), with no cap of its own. A table with an INDEX of
    /// its own says `augments: None` and the rest.
    pub(super) const AUGMENTING: TableDef = TableDef {
        table: "",
        entry: "",
        augments: Some("redisInstanceEntry"),
        index: RowIndex::Instance,
        rows_from: &[],
        resource_type: "redisInstance",
        columns: &[],
        max_rows: None,
    };

    /// Whether the table AUGMENTS `redisInstanceEntry` and is read from
    /// INFO (and CLUSTER INFO): one row per instance, every column an
    /// INFO field (`INFO_GROUPS`).
    pub const fn is_info_group(&self) -> bool {
        self.augments.is_some() && matches!(self.columns[0].source, Source::Info { .. })
    }
}
