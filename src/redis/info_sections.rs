//! The INFO sections whose lines are rows of tables of their own:
//! Redis 8's `Keysizes` (`redisKeysizesTable`) and `Threads`
//! (`redisThreadTable`), and `Modules` (`redisModuleTable`).
//!
//! What the lines look like, from Redis's own source and binary:
//!
//! - `module:name=%S,ver=%i,api=%i,filters=%i,usedby=%S,using=%S,options=%S`
//!   (src/module.c, `genModulesInfoString`; the lists in brackets, their
//!   items joined by `|`), one line per loaded module, all named `module`
//!   ([`Info::every`] keeps each).
//! - `io_thread_%d:clients=%d,reads=%lld,writes=%lld` (the format string of
//!   Redis 8.2.3's `redis-server`), one line per I/O thread, the main
//!   thread being 0.
//! - `db<N>_distrib_strings_sizes:` and `db<N>_distrib_<type>_items:` for
//!   the types `lists`, `sets`, `zsets` and `hashes` (the names Redis
//!   8.2.3's binary holds), each a list of `bucket=count`: a bucket is the
//!   smallest size it counts, 0 or a power of two, with the binary
//!   suffixes `K`, `M`, `G`, `T`, `P`, `E` (`1K` is 1024; Redis's INFO
//!   documentation shows `1K` to `1M`, its tests/unit/info-keysizes.tcl
//!   says bin i counts the sizes from 2^i to 2^(i+1)-1). A string's size
//!   is its length in bytes, another type's its number of elements.
//!
//! Parsing is total: a line or item that does not read is counted as left
//! out (`redisInstanceRowsLeftOut`), never a made-up row.

use super::info::{parse_kv_list, Info};
use crate::metrics::{KeysizesType, MAX_SIZE_BUCKET};

/// One bucket of one type's histogram in one database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeysizesRow {
    pub db: u32,
    pub kind: KeysizesType,
    /// 0 for the keys of size 0, `b` for the sizes from 2^(b-1) to 2^b - 1.
    pub bucket: u32,
    /// The smallest size of the bucket: 0, or 2^(bucket-1).
    pub min_size: u64,
    /// The bucket as Redis wrote it (`4M`).
    pub label: String,
    pub keys: u64,
}

/// The Keysizes section: its rows, sorted by database, type and bucket,
/// and how many buckets could not be rows (a type this agent does not
/// know, a bucket or count that does not read).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keysizes {
    pub rows: Vec<KeysizesRow>,
    pub unreadable: u64,
}

/// One `io_thread_<N>` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadRow {
    pub thread: u32,
    pub clients: Option<u64>,
    pub reads: Option<u64>,
    pub writes: Option<u64>,
}

/// One `module` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleRow {
    pub name: String,
    pub version: Option<i32>,
    pub api: Option<i32>,
    pub filters: Option<u64>,
    pub used_by: Option<String>,
    pub using: Option<String>,
    pub options: Option<String>,
}

/// The rows of the Keysizes section of `info`.
pub fn keysizes(info: &Info) -> Keysizes {
    let mut out = Keysizes::default();
    for (rest, value) in info.with_prefix("db") {
        let Some((db, kind)) = rest.split_once("_distrib_") else {
            continue;
        };
        let Some(db) = number(db) else {
            continue;
        };
        // The unit is in the name: bytes for strings, elements otherwise.
        let kind = kind
            .strip_suffix("_sizes")
            .or_else(|| kind.strip_suffix("_items"));
        let kind = kind.and_then(KeysizesType::from_label);
        for (label, count) in value.split(',').filter_map(|item| item.split_once('=')) {
            let (label, count) = (label.trim(), count.trim());
            let row = kind.and_then(|kind| {
                let min_size = size(label)?;
                Some(KeysizesRow {
                    db,
                    kind,
                    bucket: bucket_of(min_size)?,
                    min_size,
                    label: label.to_owned(),
                    keys: count.parse().ok()?,
                })
            });
            match row {
                Some(row) => out.rows.push(row),
                None => out.unreadable += 1,
            }
        }
    }
    out.rows.sort_by_key(|r| (r.db, r.kind, r.bucket));
    out
}

/// The rows of the Threads section of `info`, sorted by thread.
pub fn threads(info: &Info) -> Vec<ThreadRow> {
    let mut rows: Vec<ThreadRow> = info
        .with_prefix("io_thread_")
        .filter_map(|(n, value)| {
            let kv = parse_kv_list(value);
            let get = |key: &str| kv.iter().find(|(k, _)| *k == key)?.1.parse().ok();
            Some(ThreadRow {
                thread: number(n)?,
                clients: get("clients"),
                reads: get("reads"),
                writes: get("writes"),
            })
        })
        .collect();
    rows.sort_by_key(|r| r.thread);
    rows
}

/// The rows of the Modules section of `info`, in the order Redis wrote
/// them; a line without a name is no row.
pub fn modules(info: &Info) -> Vec<ModuleRow> {
    info.every("module")
        .filter_map(|value| {
            let kv = parse_kv_list(value);
            let get = |key: &str| kv.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
            let name = get("name").filter(|n| !n.is_empty())?;
            Some(ModuleRow {
                name: name.to_owned(),
                version: get("ver").and_then(|v| v.parse().ok()),
                api: get("api").and_then(|v| v.parse().ok()),
                filters: get("filters").and_then(|v| v.parse().ok()),
                used_by: get("usedby").map(str::to_owned),
                using: get("using").map(str::to_owned),
                options: get("options").map(str::to_owned),
            })
        })
        .collect()
}

/// A database or thread number: ASCII digits only, fitting a `u32`.
fn number(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// A bucket's label as a size: digits, then at most one binary suffix.
fn size(label: &str) -> Option<u64> {
    let (digits, shift) = match label.as_bytes().last()? {
        b'K' => (&label[..label.len() - 1], 10),
        b'M' => (&label[..label.len() - 1], 20),
        b'G' => (&label[..label.len() - 1], 30),
        b'T' => (&label[..label.len() - 1], 40),
        b'P' => (&label[..label.len() - 1], 50),
        b'E' => (&label[..label.len() - 1], 60),
        _ => (label, 0),
    };
    let n: u64 = u64::from(number(digits)?);
    n.checked_mul(1_u64 << shift)
        .filter(|size| size.checked_shr(shift) == Some(n))
}

/// The bucket of a bucket's smallest size: 0 for 0, `b` for 2^(b-1);
/// `None` for a size that is no bucket's (not a power of two).
fn bucket_of(min_size: u64) -> Option<u32> {
    let bucket = match min_size {
        0 => 0,
        n if n.is_power_of_two() => n.trailing_zeros() + 1,
        _ => return None,
    };
    (bucket <= MAX_SIZE_BUCKET).then_some(bucket)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `INFO everything` of the real Redis 8.2.3 the tests run.
    const MASTER_82: &str = include_str!("../../tests/fixtures/redis/8.2-master-info.txt");

    #[test]
    fn redis_82_capture() {
        let info = Info::parse(MASTER_82);
        let k = keysizes(&info);
        assert_eq!(k.unreadable, 0);
        let rows: Vec<(u32, KeysizesType, u32, u64)> = k
            .rows
            .iter()
            .map(|r| (r.db, r.kind, r.bucket, r.keys))
            .collect();
        assert_eq!(
            rows,
            [
                (0, KeysizesType::Strings, 1, 2),
                (0, KeysizesType::Hashes, 2, 1),
                (2, KeysizesType::Strings, 1, 1),
            ]
        );
        assert_eq!(
            threads(&info),
            [ThreadRow {
                thread: 0,
                clients: Some(3),
                reads: Some(37),
                writes: Some(24)
            }]
        );
        assert_eq!(
            modules(&info),
            [ModuleRow {
                name: "vectorset".into(),
                version: Some(1),
                api: Some(1),
                filters: Some(0),
                used_by: Some("[]".into()),
                using: Some("[]".into()),
                options: Some("[handle-io-errors|handle-repl-async-load]".into()),
            }]
        );
    }

    #[test]
    fn buckets_with_suffixes() {
        // As Redis 8.2.3 wrote it for "", "x", "xxxxx", a 16-byte and a
        // 5,000,001-byte string.
        let info = Info::parse(
            "# Keysizes\r\ndb0_distrib_strings_sizes:0=1,1=1,4=1,16=1,4M=1\r\n\
             db10_distrib_lists_items:1K=2,8E=1\r\n",
        );
        let k = keysizes(&info);
        assert_eq!(k.unreadable, 0);
        let got: Vec<(u32, u32, u64, &str)> = k
            .rows
            .iter()
            .map(|r| (r.db, r.bucket, r.min_size, r.label.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (0, 0, 0, "0"),
                (0, 1, 1, "1"),
                (0, 3, 4, "4"),
                (0, 5, 16, "16"),
                (0, 23, 4 << 20, "4M"),
                (10, 11, 1024, "1K"),
                (10, 64, 1 << 63, "8E"),
            ]
        );
    }

    #[test]
    fn what_does_not_read_is_counted_not_made_up() {
        let info = Info::parse(
            "db0_distrib_streams_items:1=4,2=1\n\
             db0_distrib_strings_sizes:3=1,16E=1,1X=1,K=1,4=x,8=2,=3\n\
             dbx_distrib_sets_items:1=1\n\
             db0:keys=1,expires=0\n",
        );
        let k = keysizes(&info);
        // streams (2), 3, 16E, 1X, K, 4=x, =3.
        assert_eq!(k.unreadable, 8);
        assert_eq!(k.rows.len(), 1);
        assert_eq!((k.rows[0].bucket, k.rows[0].keys), (4, 2));
    }

    #[test]
    fn threads_and_modules_take_what_reads() {
        let info = Info::parse(
            "io_thread_2:clients=1,reads=x\nio_thread_0:clients=7,reads=48677,writes=44861\n\
             io_thread_x:clients=1\n\
             module:name=vectorset,ver=1,api=1,filters=0,usedby=[],using=[],options=[]\n\
             module:ver=3\n\
             module:name=ReJSON,ver=81000,api=1,filters=0,usedby=[search],using=[],options=[handle-io-errors]\n",
        );
        let t = threads(&info);
        assert_eq!(t.len(), 2);
        assert_eq!((t[0].thread, t[0].reads), (0, Some(48677)));
        assert_eq!((t[1].thread, t[1].reads, t[1].writes), (2, None, None));
        let m = modules(&info);
        let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["vectorset", "ReJSON"]);
        assert_eq!(m[1].version, Some(81000));
        assert_eq!(m[1].used_by.as_deref(), Some("[search]"));
    }
}
