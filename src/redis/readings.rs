//! Turns what a poll learned (INFO, the instance's health) into snapshot
//! parts, following the table in [`crate::metrics`].

use super::big_keys::BigKeyReport;
use super::clients::{ClientAggregates, ClientGroup};
use super::failover::EventRow;
use super::info::{Info, KeyspaceRow};
use super::info_sections;
use super::keys::KeyReport;
use super::replies::{LatencyEvent, SlowlogEntry, WatchedMaster};
use super::slowlog::SlowRow;
use crate::metrics::SENTINEL_EVENT_TABLE;
use crate::metrics::{
    self, write_row, write_rows, write_scalars, Conversion, InfoRead, Layout, RowKey, RowsField,
    TableDef, CLIENT_NAME_TABLE, CLIENT_USER_TABLE, COMMAND_TABLE, ERROR_TABLE, INSTANCE_TABLE,
    KEYSPACE_TABLE, KEY_CHECK_TABLE, KEY_TABLE, LATENCY_TABLE, REPLICA_TABLE, SENTINEL_TABLE,
    SLOWLOG_TABLE, SLOW_COMMAND_TABLE, STREAM_GROUP_TABLE,
};
use crate::metrics::{BIG_KEY_TABLE, HOT_KEY_TABLE};
use crate::metrics::{KEYSIZES_TABLE, MODULE_TABLE, THREAD_TABLE};
use crate::smi::{display_string, saturate_u32, Syntax, Value};
use crate::snapshot::Part;
use crate::x509::ServerCertificate;

/// Where OpenNMS and other managers store a row: kept here too for the
/// callers that knew it here first.
pub use crate::metrics::row_key;

/// The SNMP value of an INFO field as an object reads it, or `None` when
/// this server does not report the field (the object is then absent:
/// noSuchInstance).
pub fn info_value(read: InfoRead, info: &Info) -> Option<Value> {
    let fields = read.fields;
    match read.conversion {
        Conversion::Unsigned => unsigned(read.syntax, info.u64(fields)?),
        Conversion::Signed => {
            let raw = info.i64(fields)?;
            Some(Value::Integer(
                raw.clamp(i32::MIN.into(), i32::MAX.into()) as i32
            ))
        }
        Conversion::Text => Some(display_string(info.first(fields)?)),
        Conversion::Truth => match info.first(fields)?.trim() {
            "1" => Some(Value::Integer(1)),
            "0" => Some(Value::Integer(2)),
            _ => None,
        },
        Conversion::Enum(names) => {
            metrics::enum_number(names, info.first(fields)?.trim()).map(Value::Integer)
        }
        Conversion::Scaled(factor) => Some(Value::Gauge32(saturate_u32(scaled(
            info.f64(fields)?,
            factor,
        )?))),
        Conversion::SecondsToCentiseconds => {
            let centis = scaled(info.f64(fields)?, 100)?;
            // Counter32 semantics: wrap modulo 2^32.
            Some(match read.syntax {
                Syntax::Counter32 => Value::Counter32(centis as u32),
                _ => Value::Counter64(centis),
            })
        }
        Conversion::AgeOf => Some(Value::SecondsSince(info.u64(fields)?)),
        Conversion::PercentOf(whole) => Some(Value::Gauge32(saturate_u32(hundredths_percent(
            info.u64(fields)?,
            info.u64(whole)?,
        )?))),
    }
}

/// `part` of `whole` in hundredths of a percent, rounded half up; `None`
/// when `whole` is 0 (Redis says 0 for "no limit"). In u128, so no
/// product overflows.
fn hundredths_percent(part: u64, whole: u64) -> Option<u64> {
    if whole == 0 {
        return None;
    }
    let whole = u128::from(whole);
    let value = (u128::from(part) * 10_000 + whole / 2) / whole;
    Some(u64::try_from(value).unwrap_or(u64::MAX))
}

/// A non-negative decimal times `factor`, rounded; `None` for negative or
/// not-a-number input (f64 to u64 saturates on overflow).
pub(super) fn scaled(value: f64, factor: u32) -> Option<u64> {
    if value.is_nan() || value < 0.0 {
        return None;
    }
    Some((value * f64::from(factor)).round() as u64)
}

/// An unsigned reading as a value of the given syntax.
fn unsigned(syntax: Syntax, raw: u64) -> Option<Value> {
    Some(match syntax {
        Syntax::Gauge32 => Value::Gauge32(saturate_u32(raw)),
        // Counter32 wraps, as a counter does.
        Syntax::Counter32 => Value::Counter32(raw as u32),
        Syntax::Counter64 | Syntax::Gauge64 => Value::Counter64(raw),
        Syntax::TimeTicks => Value::TimeTicks(raw as u32),
        Syntax::Integer32 | Syntax::Enum => Value::Integer(i32::try_from(raw).unwrap_or(i32::MAX)),
        Syntax::TruthValue
        | Syntax::DisplayString
        | Syntax::OctetString
        | Syntax::ObjectIdentifier => return None,
    })
}

/// The 17 legacy scalars (`.0` instances) for the first instance.
pub fn legacy_part(info: &Info, layout: &Layout) -> Part {
    let mut part = Part::new();
    write_scalars(metrics::LEGACY_SCALARS, layout, &mut part, |read| {
        info_value(read, info)
    });
    part
}

/// Keyspace rows are zero-filled up to this many databases at most, whatever
/// `databases` says: a misconfigured server must not make the agent build
/// millions of rows.
pub const MAX_ZERO_FILLED_DBS: u32 = 1024;

/// What a poll learned from commands other than INFO, each present only
/// when the server allows the command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extras {
    /// The server's `databases` setting (CONFIG GET), to zero-fill keyspace rows.
    pub databases: Option<u32>,
    /// The masters a sentinel watches (SENTINEL MASTERS, or INFO).
    pub sentinel_masters: Vec<WatchedMaster>,
    /// SLOWLOG LEN.
    pub slowlog_len: Option<u64>,
    /// The newest SLOWLOG entry: id, UNIX time, duration in µs.
    pub slowlog_last: Option<SlowlogEntry>,
    /// COMMANDLOG LEN large-request (Valkey 8.1+).
    pub large_requests: Option<u64>,
    /// COMMANDLOG LEN large-reply (Valkey 8.1+).
    pub large_replies: Option<u64>,
    /// LATENCY LATEST: event, UNIX time, latest ms, max ms.
    pub latency: Vec<LatencyEvent>,
    /// CLIENT LIST per name and per user (as last asked).
    pub clients: Option<ClientAggregates>,
    /// The keys `check_keys` names (as last checked).
    pub keys: Option<KeyReport>,
    /// The newest slow log entries seen arriving (`slow_commands`).
    pub slow_commands: Vec<SlowRow>,
    /// The big-key sampler's and HOTKEYS GET's rows (as last asked).
    pub big_keys: Option<BigKeyReport>,
    /// The rows of `redisSentinelEventTable` (a sentinel's, kept by its
    /// failover watch).
    pub sentinel_events: Vec<EventRow>,
    /// ACL LOG aggregated, and the refusals counted.
    pub acl: Option<super::acl_log::AclReport>,
}

/// Everything one poll of instance `index` (configured as `name`) learned:
/// the legacy scalars (for instance 1), its row of every per-instance group,
/// and its table rows, from INFO and from the optional commands' `extras`.
pub fn instance_part(
    index: u32,
    name: &str,
    info: &Info,
    layout: &Layout,
    extras: &Extras,
) -> Part {
    let mut part = if index == 1 {
        legacy_part(info, layout)
    } else {
        Vec::new()
    };
    for table in metrics::TABLES.iter().filter(|t| t.is_info_group()) {
        write_row(table, RowKey::Instance(index), layout, &mut part, |read| {
            info_value(read, info)
        });
    }
    let rows = Rows {
        index,
        name,
        layout,
    };
    let mut left_out = rows.keyspace(info, extras.databases, &mut part);
    let master_offset = info.u64(&["master_repl_offset"]);
    left_out += rows.write(
        &REPLICA_TABLE,
        info.replicas(),
        |r| RowKey::Number(index, r.slot.saturating_add(1)),
        |r, f| r.value(f, master_offset),
        &mut part,
    );
    left_out += rows.write(
        &COMMAND_TABLE,
        info.command_stats(),
        |r| RowKey::Name(index, &r.name),
        |r, f| r.value(f, name),
        &mut part,
    );
    left_out += rows.write(
        &ERROR_TABLE,
        info.error_stats(),
        |r| RowKey::Name(index, &r.prefix),
        |r, f| r.value(f, name),
        &mut part,
    );
    let keysizes = info_sections::keysizes(info);
    left_out += keysizes.unreadable;
    left_out += rows.write(
        &KEYSIZES_TABLE,
        keysizes.rows,
        |r| RowKey::Bucket(index, r.db, r.kind, r.bucket),
        |r, f| r.value(f),
        &mut part,
    );
    left_out += rows.write(
        &THREAD_TABLE,
        info_sections::threads(info),
        |r| RowKey::Number(index, r.thread),
        |r, f| r.value(f),
        &mut part,
    );
    left_out += rows.write(
        &MODULE_TABLE,
        info_sections::modules(info),
        |r| RowKey::Name(index, &r.name),
        |r, f| r.value(f, name),
        &mut part,
    );
    if let Some(acl) = &extras.acl {
        left_out += acl.left_out;
        left_out += rows.write(
            &metrics::ACL_REFUSAL_TABLE,
            &acl.rows,
            |r| RowKey::Number(index, r.number),
            |r, f| r.value(f, name),
            &mut part,
        );
    }
    write_row(
        &INSTANCE_TABLE,
        RowKey::Instance(index),
        layout,
        &mut part,
        |f| match f {
            RowsField::LeftOut => Some(Value::Gauge32(saturate_u32(left_out))),
        },
    );
    rows.extras(extras, &mut part);
    part
}

/// The rows of one instance's tables, through the catalogue's writer.
struct Rows<'a> {
    index: u32,
    /// The configured name (`redisInstanceName`), for the row keys.
    name: &'a str,
    layout: &'a Layout,
}

impl Rows<'_> {
    /// Writes `rows` into `table`; returns how many were left out.
    fn write<R, F: metrics::Column>(
        &self,
        table: &TableDef,
        rows: impl IntoIterator<Item = R>,
        key: impl Fn(&R) -> RowKey<'_>,
        value: impl Fn(&R, F) -> Option<Value>,
        part: &mut Part,
    ) -> u64 {
        write_rows(table, rows, self.layout, part, key, value)
    }

    /// `redisKeyspaceTable`: INFO's `db<N>` lines, and the databases it
    /// does not list zero-filled (up to `databases`, at most
    /// [`MAX_ZERO_FILLED_DBS`]) so that graphs of a database that empties
    /// do not break.
    fn keyspace(&self, info: &Info, databases: Option<u32>, part: &mut Part) -> u64 {
        let mut rows = info.keyspace();
        let known: Vec<u32> = rows.iter().map(|r| r.db).collect();
        for db in 0..databases.unwrap_or(0).min(MAX_ZERO_FILLED_DBS) {
            if known.binary_search(&db).is_err() {
                rows.push(KeyspaceRow {
                    db,
                    keys: 0,
                    expires: 0,
                    avg_ttl: Some(0),
                    subexpiry: None,
                });
            }
        }
        let index = self.index;
        self.write(
            &KEYSPACE_TABLE,
            rows,
            |r| RowKey::Number(index, r.db),
            |r, f| r.value(f),
            part,
        )
    }

    /// The tables of the optional commands' replies, each bounded where it
    /// is read (the reply's own limits, `client_list_rows`, the key
    /// check's caps).
    fn extras(&self, extras: &Extras, part: &mut Part) {
        let (index, name) = (self.index, self.name);
        self.write(
            &SENTINEL_TABLE,
            &extras.sentinel_masters,
            |m| RowKey::Name(index, &m.name),
            |m, f| m.value(f, name),
            part,
        );
        write_row(
            &SLOWLOG_TABLE,
            RowKey::Instance(index),
            self.layout,
            part,
            |f| extras.slowlog_value(f),
        );
        self.write(
            &LATENCY_TABLE,
            &extras.latency,
            |e| RowKey::Name(index, &e.event),
            |e, f| e.value(f, name),
            part,
        );
        if let Some(clients) = &extras.clients {
            for (table, groups) in [
                (&CLIENT_NAME_TABLE, &clients.by_name),
                (&CLIENT_USER_TABLE, &clients.by_user),
            ] {
                self.write(
                    table,
                    groups,
                    |(label, _)| RowKey::Name(index, label),
                    |(label, group): &&(String, ClientGroup), f| group.value(f, label, name),
                    part,
                );
            }
        }
        if let Some(report) = &extras.keys {
            self.keys(report, part);
        }
        self.write(
            &SLOW_COMMAND_TABLE,
            &extras.slow_commands,
            |r| RowKey::Number(index, r.number),
            |r, f| r.value(f),
            part,
        );
        if let Some(report) = &extras.big_keys {
            self.write(
                &BIG_KEY_TABLE,
                &report.rows,
                |r| RowKey::Number(index, r.rank),
                |r, f| r.value(f),
                part,
            );
            self.write(
                &HOT_KEY_TABLE,
                &report.hot,
                |r| RowKey::Number(index, r.rank),
                |r, f| r.value(f),
                part,
            );
        }
        self.write(
            &SENTINEL_EVENT_TABLE,
            &extras.sentinel_events,
            |e| RowKey::Number(index, e.number),
            |e, f| e.value(f),
            part,
        );
    }

    /// The rows of `redisKeyTable`, `redisKeyStreamGroupTable` and the
    /// instance's row of `redisKeyCheckTable`.
    fn keys(&self, report: &KeyReport, part: &mut Part) {
        let (index, name) = (self.index, self.name);
        write_row(
            &KEY_CHECK_TABLE,
            RowKey::Instance(index),
            self.layout,
            part,
            |f| report.value(f),
        );
        self.write(
            &KEY_TABLE,
            &report.keys,
            |k| RowKey::Name(index, &k.label),
            |k, f| k.value(f, name),
            part,
        );
        for key in &report.keys {
            self.write(
                &STREAM_GROUP_TABLE,
                &key.groups,
                |g| RowKey::NameName(index, &key.label, &g.name),
                |g, f| g.value(f, name, &key.label),
                part,
            );
        }
    }
}

/// What the poller knows about an instance's health.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InstanceStatus {
    pub name: String,
    /// Where it connects, without credentials.
    pub address: String,
    pub up: bool,
    /// The server said `loading:1` in the last successful poll.
    pub loading: bool,
    /// UNIX time of the last successful poll, if any.
    pub last_ok_unix: Option<u64>,
    pub poll_millis: u32,
    /// Why the last poll failed (never holds a secret); empty when it did not.
    pub last_error: String,
    pub polls_ok: u32,
    pub polls_failed: u32,
    /// The certificate a `rediss://` server showed last, and the seconds
    /// from the last poll until its end.
    pub certificate: Option<(ServerCertificate, i64)>,
}

/// The instance's row of `redisInstanceTable`.
pub fn status_part(index: u32, status: &InstanceStatus, layout: &Layout) -> Part {
    let mut part = Part::new();
    write_row(
        &INSTANCE_TABLE,
        RowKey::Instance(index),
        layout,
        &mut part,
        |f| status.value(f),
    );
    part
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::name_index;
    use std::path::Path;

    fn fixture(name: &str) -> Info {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/redis")
            .join(name);
        Info::parse(&std::fs::read_to_string(path).unwrap())
    }

    fn legacy_values(info: &Info) -> Vec<(String, Value)> {
        let layout = Layout::default_layout();
        legacy_part(info, &layout)
            .into_iter()
            .map(|(oid, v)| (oid.to_string(), v))
            .collect()
    }

    fn value_of(values: &[(String, Value)], n: u32) -> Option<Value> {
        let oid = format!(".1.3.6.1.4.1.20267.400.1.{n}.0");
        values
            .iter()
            .find(|(o, _)| *o == oid)
            .map(|(_, v)| v.clone())
    }

    #[test]
    fn every_legacy_object_has_a_value_on_every_version() {
        for name in [
            "2.2.12-info.txt",
            "2.4.15-info.txt",
            "2.6.9-info.txt",
            "7.0-master-info.txt",
            "7.0-replica-info.txt",
        ] {
            let values = legacy_values(&fixture(name));
            assert_eq!(values.len(), 17, "{name}: {values:?}");
        }
    }

    #[test]
    fn redis_2_2_values_as_the_old_agent_served_them() {
        let values = legacy_values(&fixture("2.2.12-info.txt"));
        assert_eq!(value_of(&values, 1), Some(Value::Gauge32(2)));
        assert_eq!(value_of(&values, 3), Some(Value::Counter64(28172224)));
        assert_eq!(value_of(&values, 4), Some(Value::Gauge32(3180)));
        assert_eq!(value_of(&values, 5), Some(Value::Counter64(107491639)));
        assert_eq!(value_of(&values, 6), Some(Value::Counter64(693164497)));
        // used_cpu_sys:16364.80 s, used_cpu_user:25923.18 s in centiseconds.
        assert_eq!(value_of(&values, 7), Some(Value::Counter32(1636480)));
        assert_eq!(value_of(&values, 8), Some(Value::Counter32(2592318)));
        assert_eq!(value_of(&values, 11), Some(Value::Counter64(6086313)));
        assert_eq!(value_of(&values, 12), Some(Value::Counter64(435393567)));
        assert_eq!(value_of(&values, 13), Some(Value::Counter64(13329191)));
        assert_eq!(value_of(&values, 16), Some(Value::Gauge32(22084475)));
        assert_eq!(value_of(&values, 17), Some(Value::Counter64(51785728)));
    }

    #[test]
    fn renamed_field_is_found_after_2_6() {
        let values = legacy_values(&fixture("2.6.9-info.txt"));
        assert_eq!(value_of(&values, 4), Some(Value::Gauge32(2)));
    }

    #[test]
    fn missing_and_garbled_fields_are_absent_not_zero() {
        let info =
            Info::parse("connected_clients:abc\r\nblocked_clients:-1\r\nused_cpu_sys:nan\r\n");
        let values = legacy_values(&info);
        assert!(values.is_empty(), "{values:?}");
    }

    #[test]
    fn gauges_saturate_and_counter32_wraps() {
        let info = Info::parse("connected_clients:99999999999\nused_cpu_sys:42949672.97\n");
        let values = legacy_values(&info);
        assert_eq!(value_of(&values, 1), Some(Value::Gauge32(u32::MAX)));
        // 4294967297 centiseconds wrap to 1.
        assert_eq!(value_of(&values, 7), Some(Value::Counter32(1)));
    }

    #[test]
    fn custom_legacy_oid_moves_the_module_beside_it() {
        let layout = Layout::from_legacy_oid("1.3.6.1.4.1.99.7".parse().unwrap()).unwrap();
        let values: Vec<String> = legacy_part(&fixture("2.4.15-info.txt"), &layout)
            .into_iter()
            .map(|(o, _)| o.to_string())
            .collect();
        assert_eq!(values[0], ".1.3.6.1.4.1.99.7.1.0");
        let status = status_part(1, &InstanceStatus::default(), &layout);
        assert!(status[0]
            .0
            .to_string()
            .starts_with(".1.3.6.1.4.1.99.3.1.1."));
        assert_eq!(layout.subtrees(false).len(), 1);
        assert_eq!(layout.subtrees(true).len(), 2);
    }

    const ROOT: &str = ".1.3.6.1.4.1.20267.400";

    fn dbs(databases: u32) -> Extras {
        Extras {
            databases: Some(databases),
            ..Extras::default()
        }
    }

    /// What SLOWLOG and LATENCY LATEST told of a slow `command` event.
    fn slow_command() -> Extras {
        Extras {
            slowlog_len: Some(3),
            slowlog_last: Some(SlowlogEntry {
                id: 14,
                unix_time: 1795362836,
                micros: 250,
            }),
            latency: vec![LatencyEvent {
                event: "command".into(),
                unix_time: 1795362836,
                latest_ms: 12,
                max_ms: 30,
            }],
            ..Extras::default()
        }
    }

    /// Every row the readings build has the shape its table's INDEX
    /// declares in the catalogue (`metrics::TABLES`).
    #[test]
    fn every_row_fits_its_tables_index() {
        let layout = Layout::default_layout();
        let extras = Extras {
            databases: Some(4),
            keys: Some(key_report()),
            ..slow_command()
        };
        let mut checked = 0;
        for (index, file) in [(1, "7.0-master-info.txt"), (2, "7.0-replica-info.txt")] {
            let part = instance_part(index, "main", &fixture(file), &layout, &extras);
            for (oid, _) in &part {
                let Some((def, suffix)) = metrics::redis_objects().find_map(|d| {
                    let base = layout.object_oid(d);
                    oid.starts_with(&base)
                        .then(|| (d, oid.as_slice()[base.len()..].to_vec()))
                }) else {
                    panic!("{oid} is no object's");
                };
                match metrics::table_of(def) {
                    Some(table) => assert!(
                        table.index.fits(&suffix),
                        "{oid}: {suffix:?} is not a row of {}",
                        table.table
                    ),
                    None => assert_eq!(suffix, [0], "{oid}"),
                }
                checked += 1;
            }
        }
        assert!(checked > 200, "only {checked} values");
    }

    /// A key check's report: a stream with a group, a named key gone.
    fn key_report() -> KeyReport {
        use super::super::keys::{GroupRow, KeyRow};
        use crate::metrics::KeyType;
        let row = |label: &str, kind| KeyRow {
            label: label.into(),
            entry: "events*".into(),
            kind: Some(kind),
            length: Some(3),
            ttl: Some(-1),
            memory: None,
            error: String::new(),
            groups: Vec::new(),
        };
        let mut stream = row("events", KeyType::Stream);
        stream.groups.push(GroupRow {
            name: "billing".into(),
            consumers: 2,
            pending: 3,
            lag: None,
            last_delivered: "3-1".into(),
            max_idle: Some(1006),
        });
        KeyReport {
            keys: vec![stream, row("jobs", KeyType::None)],
            keys_left_out: 7,
            scan_complete: false,
            ..KeyReport::default()
        }
    }

    #[test]
    fn key_rows_and_their_stream_groups() {
        let layout = Layout::default_layout();
        let extras = Extras {
            keys: Some(key_report()),
            ..Extras::default()
        };
        let part = instance_part(2, "main", &fixture("7.0-master-info.txt"), &layout, &extras);
        let get = |oid: &str| {
            part.iter()
                .find(|(o, _)| o.to_string() == format!("{ROOT}.{oid}"))
                .map(|(_, v)| v.clone())
        };
        // "events" is 6 bytes: 101.118.101.110.116.115; "billing" 7.
        let events = "2.6.101.118.101.110.116.115";
        assert_eq!(get(&format!("3.21.1.2.{events}")), Some(Value::Integer(6)));
        assert_eq!(get(&format!("3.21.1.4.{events}")), Some(Value::Integer(-1)));
        let group = format!("{events}.7.98.105.108.108.105.110.103");
        assert_eq!(get(&format!("3.22.1.3.{group}")), Some(Value::Counter64(3)));
        assert_eq!(get(&format!("3.22.1.4.{group}")), None, "no lag reported");
        assert_eq!(
            get(&format!("3.22.1.6.{group}")),
            Some(Value::Counter64(1006))
        );
        assert_eq!(
            get(&format!("3.22.1.8.{group}")),
            Some(display_string("main.events.billing"))
        );
        assert_eq!(get("3.24.1.2.2"), Some(Value::Gauge32(7)));
        assert_eq!(get("3.24.1.4.2"), Some(Value::Integer(2)));
        // The named key that is gone: none(8).
        assert_eq!(get("3.21.1.2.2.4.106.111.98.115"), Some(Value::Integer(8)));
    }

    #[test]
    fn sentinel_slowlog_and_latency_rows() {
        let master = WatchedMaster {
            name: "mymaster".into(),
            state: Some(metrics::SentinelState::Sdown),
            flags: Some("s_down,master".into()),
            ip: Some("::1".into()),
            port: Some(6380),
            replicas: Some(2),
            other_sentinels: Some(1),
            quorum: Some(2),
            config_epoch: Some(1),
        };
        let extras = Extras {
            sentinel_masters: vec![master],
            ..slow_command()
        };
        let part = instance_part(
            1,
            "main",
            &Info::default(),
            &Layout::default_layout(),
            &extras,
        );
        let v =
            |suffix: &str| crate::snapshot::value_at(&part, &format!("{ROOT}.{suffix}")).cloned();
        let mymaster = "1.8.109.121.109.97.115.116.101.114";
        assert_eq!(v(&format!("3.14.1.2.{mymaster}")), Some(Value::Integer(2))); // sdown
        assert_eq!(v(&format!("3.14.1.4.{mymaster}")), Some(Value::text("::1")));
        assert_eq!(v(&format!("3.14.1.8.{mymaster}")), Some(Value::Gauge32(2)));
        // The name again, readable beside the index.
        assert_eq!(
            v(&format!("3.14.1.9.{mymaster}")),
            Some(Value::text("mymaster"))
        );
        // The key: the instance's name and the row's, unique on the agent.
        assert_eq!(
            v(&format!("3.14.1.10.{mymaster}")),
            Some(Value::text("main.mymaster"))
        );
        assert_eq!(
            v("3.17.1.6.1.7.99.111.109.109.97.110.100"),
            Some(Value::text("main.command"))
        );
        assert_eq!(v("3.16.1.1.1"), Some(Value::Gauge32(3)));
        assert_eq!(v("3.16.1.4.1"), Some(Value::Counter64(250)));
        assert_eq!(
            v("3.17.1.4.1.7.99.111.109.109.97.110.100"),
            Some(Value::Gauge32(30))
        );
        assert_eq!(
            v("3.17.1.5.1.7.99.111.109.109.97.110.100"),
            Some(Value::text("command"))
        );
    }

    #[test]
    fn a_7_0_master_fills_every_group_and_table() {
        let part = instance_part(
            2,
            "main",
            &fixture("7.0-master-info.txt"),
            &Layout::default_layout(),
            &dbs(16),
        );
        let v =
            |suffix: &str| crate::snapshot::value_at(&part, &format!("{ROOT}.{suffix}")).cloned();
        // Not instance 1: no legacy scalars.
        assert!(v("1.1.0").is_none());
        assert_eq!(v("3.2.1.1.2"), Some(Value::text("7.0.15")));
        assert_eq!(v("3.2.1.2.2"), Some(Value::Integer(1))); // standalone
        assert_eq!(v("3.4.1.12.2"), Some(Value::Gauge32(455))); // fragmentation 4.55
        assert_eq!(v("3.5.1.4.2"), Some(Value::Counter64(1795335937)));
        assert_eq!(v("3.5.1.5.2"), Some(Value::SecondsSince(1795335937)));
        assert_eq!(v("3.5.1.6.2"), Some(Value::Integer(1))); // bgsave ok
        assert_eq!(v("3.5.1.11.2"), Some(Value::Integer(1))); // AOF on: true(1)
        assert_eq!(v("3.7.1.1.2"), Some(Value::Integer(1))); // master
        assert_eq!(v("3.8.1.1.2"), Some(Value::Counter64(6))); // 0.0554 s
        assert_eq!(v("3.9.1.1.2"), Some(Value::Integer(2))); // cluster off: false(2)
                                                             // Keyspace: db0 and db3 from INFO, the other 14 zero-filled.
        assert_eq!(v("3.10.1.2.2.0"), Some(Value::Counter64(105)));
        assert_eq!(v("3.10.1.3.2.0"), Some(Value::Counter64(20)));
        assert_eq!(v("3.10.1.4.2.3"), Some(Value::Counter64(6980247)));
        assert_eq!(v("3.10.1.2.2.15"), Some(Value::Counter64(0)));
        assert!(v("3.10.1.2.2.16").is_none());
        let keyspace_rows = part
            .iter()
            .filter(|(o, _)| o.to_string().starts_with(&format!("{ROOT}.3.10.1.2.2.")))
            .count();
        assert_eq!(keyspace_rows, 16);
        // The replica: slot 1 for slave0, in sync.
        assert_eq!(v("3.11.1.2.2.1"), Some(Value::text("127.0.0.1")));
        assert_eq!(v("3.11.1.3.2.1"), Some(Value::Gauge32(18380)));
        assert_eq!(v("3.11.1.4.2.1"), Some(Value::text("online")));
        assert_eq!(v("3.11.1.6.2.1"), Some(Value::Gauge32(1)));
        assert_eq!(v("3.11.1.7.2.1"), Some(Value::Counter64(0)));
        // config|get is indexed by its name: length 10, then the bytes.
        let config_get = "2.10.99.111.110.102.105.103.124.103.101.116";
        assert_eq!(
            v(&format!("3.12.1.2.{config_get}")),
            Some(Value::Counter64(1))
        );
        assert_eq!(
            v(&format!("3.12.1.4.{config_get}")),
            Some(Value::Gauge32(800))
        ); // 8.00 µs
        assert_eq!(
            v(&format!("3.12.1.7.{config_get}")),
            Some(Value::Gauge32(8031))
        ); // p50 8.031 µs
        assert_eq!(
            v(&format!("3.12.1.10.{config_get}")),
            Some(Value::text("config|get"))
        );
        let commands = part
            .iter()
            .filter(|(o, _)| o.to_string().starts_with(&format!("{ROOT}.3.12.1.2.2.")))
            .count();
        assert_eq!(commands, 32);
        // errorstat_ERR:count=5, indexed by "ERR".
        assert_eq!(v("3.13.1.2.2.3.69.82.82"), Some(Value::Counter64(5)));
        assert_eq!(v("3.13.1.3.2.3.69.82.82"), Some(Value::text("ERR")));
        // Row keys name the instance too ("info" runs on every instance).
        assert_eq!(
            v(&format!("3.12.1.11.{config_get}")),
            Some(Value::text("main.config_7Cget"))
        );
        assert_eq!(v("3.13.1.4.2.3.69.82.82"), Some(Value::text("main.ERR")));
    }

    #[test]
    fn a_replica_reports_its_link() {
        let part = instance_part(
            1,
            "main",
            &fixture("7.0-replica-info.txt"),
            &Layout::default_layout(),
            &Extras::default(),
        );
        let v =
            |suffix: &str| crate::snapshot::value_at(&part, &format!("{ROOT}.{suffix}")).cloned();
        assert_eq!(v("3.7.1.1.1"), Some(Value::Integer(2))); // replica
        assert_eq!(v("3.7.1.5.1"), Some(Value::Integer(1))); // link up
        assert_eq!(v("3.7.1.3.1"), Some(Value::text("127.0.0.1")));
        // Without the databases setting, only the dbs INFO lists.
        assert_eq!(
            part.iter()
                .filter(|(o, _)| o.to_string().starts_with(&format!("{ROOT}.3.10.1.2.1.")))
                .count(),
            2
        );
    }

    #[test]
    fn old_servers_fill_what_they_have() {
        let part = instance_part(
            1,
            "main",
            &fixture("2.2.12-info.txt"),
            &Layout::default_layout(),
            &Extras::default(),
        );
        let v =
            |suffix: &str| crate::snapshot::value_at(&part, &format!("{ROOT}.{suffix}")).cloned();
        assert_eq!(v("3.5.1.2.1"), Some(Value::Counter64(3180))); // changes_since_last_save
        assert_eq!(v("3.7.1.1.1"), Some(Value::Integer(1)));
        assert_eq!(v("3.10.1.2.1.0"), Some(Value::Counter64(71424)));
        assert!(v("3.10.1.4.1.0").is_none(), "2.2 has no avg_ttl");
        assert!(v("3.2.1.2.1").is_none(), "2.2 has no redis_mode");
    }

    #[test]
    fn row_keys_are_file_names_and_distinct() {
        assert_eq!(row_key("sessions", "config|get"), "sessions.config_7Cget");
        assert_eq!(
            row_key("cache-1", "aof-fsync-always"),
            "cache-1.aof-fsync-always"
        );
        assert_eq!(row_key("a.b_c", "x/y"), "a_2Eb_5Fc.x_2Fy");
        assert_eq!(row_key("caf\u{e9}", "get"), "caf_C3_A9.get");
        // Pairs whose raw "instance/row" texts share an OpenNMS directory.
        let pairs = [
            ("cache-1", "get"),
            ("cache", "1-get"),
            ("cache/1", "get"),
            ("a b", "get"),
            ("a_b", "get"),
            ("a", "b.get"),
            ("a.b", "get"),
            ("a_2E", "get"),
            ("a.", "get"),
        ];
        let keys: std::collections::BTreeSet<String> =
            pairs.iter().map(|(i, r)| row_key(i, r)).collect();
        assert_eq!(keys.len(), pairs.len(), "{keys:?}");
        for key in &keys {
            assert!(key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)));
        }
        // Too long: cut, and told apart by the hash.
        let long = "n".repeat(300);
        let (a, b) = (row_key(&long, "get"), row_key(&long, "set"));
        assert_eq!(a.len(), 254);
        assert_ne!(a, b);
        assert!(a.starts_with(&"n".repeat(236)) && a[236..].starts_with("_Z"));
        assert_eq!(
            row_key(&"n".repeat(251), "get"),
            format!("{}.get", "n".repeat(251))
        );
    }

    #[test]
    fn string_indexes_refuse_empty_and_overlong_names() {
        assert_eq!(name_index(1, "ERR"), Some(vec![1, 3, 69, 82, 82]));
        assert_eq!(name_index(1, ""), None);
        assert_eq!(name_index(1, &"x".repeat(65)), None);
        assert_eq!(name_index(1, "caf\u{e9}"), None);
        assert_eq!(name_index(1, "a\tb"), None);
    }

    #[test]
    fn enums_and_truth_values_refuse_unknown_text() {
        let info = Info::parse("role:leader\nloading:2\nrdb_last_bgsave_status:err\n");
        let part = instance_part(
            1,
            "main",
            &info,
            &Layout::default_layout(),
            &Extras::default(),
        );
        let v =
            |suffix: &str| crate::snapshot::value_at(&part, &format!("{ROOT}.{suffix}")).cloned();
        assert!(v("3.7.1.1.1").is_none());
        assert!(v("3.5.1.1.1").is_none());
        assert_eq!(v("3.5.1.6.1"), Some(Value::Integer(2)));
    }

    #[test]
    fn limits_are_shares_of_maxmemory_and_maxclients() {
        let layout = Layout::default_layout();
        let part = |info: &Info| instance_part(1, "main", info, &layout, &Extras::default());
        // A real 7.0 master: 1 client of maxclients 10000 is 0.01 %;
        // maxmemory 0 is no limit, so no share of it.
        let real = part(&fixture("7.0-master-info.txt"));
        let v = |p: &Part, suffix: &str| {
            crate::snapshot::value_at(p, &format!("{ROOT}.{suffix}")).cloned()
        };
        assert_eq!(v(&real, "3.3.1.14.1"), Some(Value::Gauge32(1)));
        assert_eq!(v(&real, "3.4.1.27.1"), None);
        // 90.15 % of 1 GiB, rounded to the hundredth; over the limit shows.
        let near = part(&Info::parse(
            "used_memory:968000000\nmaxmemory:1073741824\nconnected_clients:10001\nmaxclients:10000\n",
        ));
        assert_eq!(v(&near, "3.4.1.27.1"), Some(Value::Gauge32(9015)));
        assert_eq!(v(&near, "3.3.1.14.1"), Some(Value::Gauge32(10001)));
        // Huge values do not overflow; a garbled limit leaves it absent.
        let huge = part(&Info::parse(&format!(
            "used_memory:{}\nmaxmemory:1\nconnected_clients:1\nmaxclients:x\n",
            u64::MAX
        )));
        assert_eq!(v(&huge, "3.4.1.27.1"), Some(Value::Gauge32(u32::MAX)));
        assert_eq!(v(&huge, "3.3.1.14.1"), None);
        assert_eq!(hundredths_percent(1, 3), Some(3333));
        assert_eq!(hundredths_percent(2, 3), Some(6667));
        assert_eq!(hundredths_percent(5, 0), None);
    }

    /// Issue 24 (M3): a server that writes 100,000 `cmdstat_` lines (and
    /// thousands of `errorstat_`, `slave<N>` and `db<N>` lines) gets at
    /// most each table's cap of rows, and the rest counted in
    /// redisInstanceRowsLeftOut.
    #[test]
    fn a_hostile_info_is_capped_and_the_rest_counted() {
        let mut text = String::from("# Commandstats\r\n");
        for n in 0..100_000 {
            text.push_str(&format!(
                "cmdstat_c{n}:calls=1,usec=1,usec_per_call=1.00\r\n"
            ));
        }
        for n in 0..1_000 {
            text.push_str(&format!("errorstat_E{n}:count=1\r\n"));
            text.push_str(&format!(
                "slave{n}:ip=10.0.0.1,port=1,state=online,offset=1,lag=0\r\n"
            ));
        }
        for n in 0..2_000 {
            text.push_str(&format!("db{n}:keys=1,expires=0\r\n"));
        }
        let part = instance_part(
            3,
            "main",
            &Info::parse(&text),
            &Layout::default_layout(),
            &Extras::default(),
        );
        let rows = |column: &str| {
            part.iter()
                .filter(|(o, _)| o.to_string().starts_with(&format!("{ROOT}.{column}.3.")))
                .count()
        };
        assert_eq!(rows("3.12.1.2"), COMMAND_TABLE.max_rows.unwrap());
        assert_eq!(rows("3.13.1.2"), ERROR_TABLE.max_rows.unwrap());
        assert_eq!(rows("3.11.1.2"), REPLICA_TABLE.max_rows.unwrap());
        assert_eq!(rows("3.10.1.2"), KEYSPACE_TABLE.max_rows.unwrap());
        let left_out = (100_000 - 1000) + (1000 - 256) + (1000 - 256) + (2000 - 1024);
        assert_eq!(
            crate::snapshot::value_at(&part, &format!("{ROOT}.3.1.1.14.3")),
            Some(&Value::Gauge32(left_out))
        );
        // A real server leaves nothing out, and says so.
        let real = instance_part(
            1,
            "main",
            &fixture("7.0-master-info.txt"),
            &Layout::default_layout(),
            &dbs(16),
        );
        assert_eq!(
            crate::snapshot::value_at(&real, &format!("{ROOT}.3.1.1.14.1")),
            Some(&Value::Gauge32(0))
        );
    }

    /// A command whose name no index can hold is left out and counted,
    /// never served under a made-up index.
    #[test]
    fn a_name_no_index_holds_is_counted() {
        let long = "x".repeat(65);
        let info = Info::parse(&format!(
            "cmdstat_{long}:calls=1,usec=1\r\ncmdstat_get:calls=1,usec=1\r\n"
        ));
        let part = instance_part(
            1,
            "main",
            &info,
            &Layout::default_layout(),
            &Extras::default(),
        );
        let commands = part
            .iter()
            .filter(|(o, _)| o.to_string().starts_with(&format!("{ROOT}.3.12.1.2.1.")))
            .count();
        assert_eq!(commands, 1);
        assert_eq!(
            crate::snapshot::value_at(&part, &format!("{ROOT}.3.1.1.14.1")),
            Some(&Value::Gauge32(1))
        );
    }

    #[test]
    fn zero_fill_is_capped() {
        let part = instance_part(
            1,
            "main",
            &Info::parse("db0:keys=1,expires=0\n"),
            &Layout::default_layout(),
            &dbs(1_000_000),
        );
        let rows = part
            .iter()
            .filter(|(o, _)| o.to_string().starts_with(&format!("{ROOT}.3.10.1.2.1.")))
            .count();
        assert_eq!(rows, MAX_ZERO_FILLED_DBS as usize);
    }

    #[test]
    fn display_strings_are_short_printable_ascii() {
        let long = "é\n".repeat(300);
        let Value::OctetString(bytes) = display_string(&long) else {
            panic!()
        };
        assert_eq!(bytes.len(), 255);
        assert!(bytes.iter().all(|b| *b == b'?'));
        assert_eq!(display_string("a b:c"), Value::text("a b:c"));
    }

    #[test]
    fn status_row_reports_down_without_data_age() {
        let status = InstanceStatus {
            name: "main".into(),
            address: "127.0.0.1:6379".into(),
            up: false,
            last_error: "connection refused".into(),
            ..Default::default()
        };
        let part = status_part(1, &status, &Layout::default_layout());
        let up = part
            .iter()
            .find(|(o, _)| o.to_string() == ".1.3.6.1.4.1.20267.400.3.1.1.4.1")
            .unwrap();
        assert_eq!(up.1, Value::Integer(2));
        // A failed poll is down, whatever an earlier poll said of loading.
        let loading_then_down = InstanceStatus {
            loading: true,
            ..status.clone()
        };
        assert_eq!(loading_then_down.state().number(), 2);
        assert!(!part
            .iter()
            .any(|(o, _)| o.to_string().starts_with(".1.3.6.1.4.1.20267.400.3.1.1.5.")));
    }

    #[test]
    fn a_server_loading_its_dataset_is_loading_not_up() {
        let mut status = InstanceStatus {
            up: true,
            loading: true,
            ..Default::default()
        };
        assert_eq!(status.state().number(), 3);
        status.loading = false;
        assert_eq!(status.state().number(), 1);
    }
}
