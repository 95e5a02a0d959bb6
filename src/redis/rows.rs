//! What each row a poll reads is worth in each column of its table: one
//! `value(field)` per row type, beside nothing else. The catalogue's row
//! writer ([`crate::metrics::write_rows`]) asks it for the columns its
//! table has and places the answers; `readings` only says which rows go
//! in which table.

use super::clients::ClientGroup;
use super::info::{CommandStatRow, ErrorStatRow, KeyspaceRow, ReplicaRow};
use super::info_sections::{KeysizesRow, ModuleRow, ThreadRow};
use super::keys::{GroupRow, KeyReport, KeyRow};
use super::readings::{scaled, Extras, InstanceStatus};
use super::replies::{LatencyEvent, WatchedMaster};
use crate::metrics::{
    group_row_key, row_key, ClientField, CommandField, ErrorField, InstanceState, KeyCheckField,
    KeyField, KeysizesField, KeyspaceField, LatencyField, ModuleField, ReplicaField, SentinelField,
    SlowlogField, StatusField, StreamGroupField, ThreadField,
};
use crate::smi::{display_string, saturate_u32, Value};

/// A count as a Gauge32, latched at its maximum.
pub(super) fn gauge(n: u64) -> Value {
    Value::Gauge32(saturate_u32(n))
}

/// SNMPv2-TC's TruthValue: true(1), false(2).
pub(super) fn truth(b: bool) -> Value {
    Value::Integer(if b { 1 } else { 2 })
}

/// The row key column of a row named `row` of instance `instance` (see
/// [`row_key`]).
fn key(instance: &str, row: &str) -> Value {
    display_string(&row_key(instance, row))
}

impl KeyspaceRow {
    pub fn value(&self, field: KeyspaceField) -> Option<Value> {
        let n = match field {
            KeyspaceField::Keys => self.keys,
            KeyspaceField::Expires => self.expires,
            KeyspaceField::AvgTtl => self.avg_ttl?,
            KeyspaceField::Subexpiry => self.subexpiry?,
        };
        Some(Value::Counter64(n))
    }
}

impl ReplicaRow {
    /// `master_offset` is the master's `master_repl_offset`, to tell how
    /// far behind the replica is.
    pub fn value(&self, field: ReplicaField, master_offset: Option<u64>) -> Option<Value> {
        Some(match field {
            ReplicaField::Address => display_string(&self.ip),
            ReplicaField::Port => Value::Gauge32(u32::from(self.port)),
            ReplicaField::State => display_string(&self.state),
            ReplicaField::Kind => display_string(self.kind.as_deref()?),
            ReplicaField::Offset => Value::Counter64(self.offset?),
            ReplicaField::LagSeconds => gauge(self.lag?),
            ReplicaField::LagBytes => Value::Counter64(master_offset?.saturating_sub(self.offset?)),
        })
    }
}

impl CommandStatRow {
    /// `instance` is the configured name, for the row key.
    pub fn value(&self, field: CommandField, instance: &str) -> Option<Value> {
        let micros = |v: Option<f64>| Some(gauge(scaled(v?, field.scale())?));
        match field {
            CommandField::Name => Some(display_string(&self.name)),
            CommandField::Key => Some(key(instance, &self.name)),
            CommandField::Calls => Some(Value::Counter64(self.calls)),
            CommandField::Usec => Some(Value::Counter64(self.usec)),
            CommandField::UsecPerCall => micros(self.usec_per_call),
            CommandField::Rejected => self.rejected_calls.map(Value::Counter64),
            CommandField::Failed => self.failed_calls.map(Value::Counter64),
            CommandField::P50 => micros(self.p50_usec),
            CommandField::P99 => micros(self.p99_usec),
            CommandField::P999 => micros(self.p999_usec),
        }
    }
}

impl ErrorStatRow {
    pub fn value(&self, field: ErrorField, instance: &str) -> Option<Value> {
        Some(match field {
            ErrorField::Name => display_string(&self.prefix),
            ErrorField::Key => key(instance, &self.prefix),
            ErrorField::Count => Value::Counter64(self.count),
        })
    }
}

impl WatchedMaster {
    pub fn value(&self, field: SentinelField, instance: &str) -> Option<Value> {
        Some(match field {
            SentinelField::Name => display_string(&self.name),
            SentinelField::Key => key(instance, &self.name),
            SentinelField::State => Value::Integer(self.state?.number()),
            SentinelField::Flags => display_string(self.flags.as_deref()?),
            SentinelField::Address => display_string(self.ip.as_deref()?),
            SentinelField::Port => gauge(self.port?),
            SentinelField::Replicas => gauge(self.replicas?),
            SentinelField::OtherSentinels => gauge(self.other_sentinels?),
            SentinelField::Quorum => gauge(self.quorum?),
        })
    }
}

impl LatencyEvent {
    pub fn value(&self, field: LatencyField, instance: &str) -> Option<Value> {
        Some(match field {
            LatencyField::Name => display_string(&self.event),
            LatencyField::Key => key(instance, &self.event),
            LatencyField::LastTime => Value::Counter64(self.unix_time),
            LatencyField::LastMs => gauge(self.latest_ms),
            LatencyField::MaxMs => gauge(self.max_ms),
        })
    }
}

impl ClientGroup {
    /// `name` is the group's (the client name or the ACL user).
    pub fn value(&self, field: ClientField, name: &str, instance: &str) -> Option<Value> {
        Some(match field {
            ClientField::Label => display_string(name),
            ClientField::Key => key(instance, name),
            ClientField::Count => gauge(self.count),
            ClientField::OldestAge => gauge(self.oldest_age),
            ClientField::MaxIdle => gauge(self.max_idle),
            ClientField::MaxOutputMem => Value::Counter64(self.max_output_mem),
            ClientField::MaxTotalMem => Value::Counter64(self.max_total_mem),
            ClientField::Blocked => gauge(self.blocked),
        })
    }
}

impl KeyRow {
    pub fn value(&self, field: KeyField, instance: &str) -> Option<Value> {
        Some(match field {
            KeyField::Label => display_string(&self.label),
            KeyField::Key => key(instance, &self.label),
            KeyField::Type => Value::Integer(self.kind?.number()),
            KeyField::Length => Value::Counter64(self.length?),
            KeyField::Ttl => Value::Integer(self.ttl?.clamp(-1, i64::from(i32::MAX)) as i32),
            KeyField::Memory => Value::Counter64(self.memory?),
            KeyField::Entry => display_string(&self.entry),
            KeyField::Error => display_string(&self.error),
        })
    }
}

impl GroupRow {
    /// `key` is the label of the stream's row.
    pub fn value(&self, field: StreamGroupField, instance: &str, key: &str) -> Option<Value> {
        Some(match field {
            StreamGroupField::Label => display_string(&self.name),
            StreamGroupField::Key => display_string(&group_row_key(instance, key, &self.name)),
            StreamGroupField::Consumers => gauge(self.consumers),
            StreamGroupField::Pending => Value::Counter64(self.pending),
            StreamGroupField::Lag => Value::Counter64(self.lag?),
            StreamGroupField::LastDeliveredId => display_string(&self.last_delivered),
            StreamGroupField::MaxIdle => Value::Counter64(self.max_idle?),
        })
    }
}

impl KeyReport {
    /// The instance's row of `redisKeyCheckTable`.
    pub fn value(&self, field: KeyCheckField) -> Option<Value> {
        Some(match field {
            KeyCheckField::Keys => gauge(self.keys.len() as u64),
            KeyCheckField::KeysLeftOut => gauge(self.keys_left_out),
            KeyCheckField::GroupsLeftOut => gauge(self.groups_left_out),
            KeyCheckField::ScanComplete => truth(self.scan_complete),
            KeyCheckField::ScanCalls => gauge(u64::from(self.scan_calls)),
            KeyCheckField::CheckTime => gauge(u64::from(self.millis)),
            KeyCheckField::LastError => display_string(&self.error),
        })
    }
}

impl Extras {
    /// The instance's row of `redisSlowlogTable`, where SLOWLOG (and
    /// COMMANDLOG) answered.
    pub fn slowlog_value(&self, field: SlowlogField) -> Option<Value> {
        Some(match field {
            SlowlogField::Length => gauge(self.slowlog_len?),
            SlowlogField::LastId => Value::Counter64(self.slowlog_last?.id),
            SlowlogField::LastTime => Value::Counter64(self.slowlog_last?.unix_time),
            SlowlogField::LastUsec => Value::Counter64(self.slowlog_last?.micros),
            SlowlogField::LargeRequests => gauge(self.large_requests?),
            SlowlogField::LargeReplies => gauge(self.large_replies?),
        })
    }
}

impl InstanceStatus {
    /// `redisInstanceState`: down when the last poll failed, loading when
    /// it succeeded on a server still loading its dataset, up otherwise.
    pub fn state(&self) -> InstanceState {
        match (self.up, self.loading) {
            (false, _) => InstanceState::Down,
            (true, true) => InstanceState::Loading,
            (true, false) => InstanceState::Up,
        }
    }

    /// The instance's row of `redisInstanceTable`.
    pub fn value(&self, field: StatusField) -> Option<Value> {
        let certificate = || self.certificate.as_ref();
        Some(match field {
            StatusField::Name => display_string(&self.name),
            StatusField::Address => display_string(&self.address),
            StatusField::Up => Value::Integer(self.state().number()),
            StatusField::DataAge => Value::SecondsSince(self.last_ok_unix?),
            StatusField::PollDuration => Value::Gauge32(self.poll_millis),
            StatusField::LastError => display_string(&self.last_error),
            StatusField::PollsOk => Value::Counter32(self.polls_ok),
            StatusField::PollsFailed => Value::Counter32(self.polls_failed),
            StatusField::CertSubject => display_string(&certificate()?.0.subject),
            StatusField::CertIssuer => display_string(&certificate()?.0.issuer),
            StatusField::CertNotAfter => {
                Value::Counter64(u64::try_from(certificate()?.0.not_after).unwrap_or(0))
            }
            StatusField::CertExpiresIn => {
                let left = certificate()?.1;
                Value::Integer(left.clamp(i32::MIN.into(), i32::MAX.into()) as i32)
            }
        })
    }
}

impl KeysizesRow {
    pub fn value(&self, field: KeysizesField) -> Option<Value> {
        Some(match field {
            KeysizesField::Keys => Value::Counter64(self.keys),
            KeysizesField::MinSize => Value::Counter64(self.min_size),
            KeysizesField::Label => display_string(&self.label),
        })
    }
}

impl ThreadRow {
    pub fn value(&self, field: ThreadField) -> Option<Value> {
        Some(match field {
            ThreadField::Clients => gauge(self.clients?),
            ThreadField::Reads => Value::Counter64(self.reads?),
            ThreadField::Writes => Value::Counter64(self.writes?),
        })
    }
}

impl ModuleRow {
    pub fn value(&self, field: ModuleField, instance: &str) -> Option<Value> {
        Some(match field {
            ModuleField::Name => display_string(&self.name),
            ModuleField::Key => key(instance, &self.name),
            ModuleField::Version => Value::Integer(self.version?),
            ModuleField::Api => Value::Integer(self.api?),
            ModuleField::Filters => gauge(self.filters?),
            ModuleField::UsedBy => display_string(self.used_by.as_deref()?),
            ModuleField::Using => display_string(self.using.as_deref()?),
            ModuleField::Options => display_string(self.options.as_deref()?),
        })
    }
}
