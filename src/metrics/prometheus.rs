//! What Prometheus's snmp_exporter is given of the catalogue: one exporter
//! module per MIB module, the objects each walks, and what neither walks
//! and why. `prometheus/` (its `generator.yml` files, the `snmp.yml` the
//! generator makes of them, the alert rules) is written from these lists,
//! the objects' syntaxes and scales and the agent's default alarms by
//! `tests/prometheus/generate.rs`, and a test diffs it against the shipped
//! files. A new array of objects goes into one module here, or into
//! [`NOT_EXPORTED`] with its reason.

use super::*;

/// One module of the exporter's configuration (`/snmp?module=NAME`).
#[derive(Debug, Clone, Copy)]
pub struct ExporterModule {
    /// The module's name, which users' scrape configurations name: keep it.
    pub name: &'static str,
    /// The comment above the module in the generator's file.
    pub about: &'static str,
    /// The arrays of the catalogue it walks, in this order: scalars each by
    /// name, a table's columns by the table's name.
    pub objects: &'static [&'static [ObjectDef]],
}

/// The exporter's modules, in the files' order. REDIS-SERVER-MIB and
/// PUPPET-AGENT-MIB apart: a host runs Puppet without Redis, or Redis
/// without Puppet, and a module that walks both would send a request for
/// nothing to each.
#[rustfmt::skip]
pub const EXPORTER_MODULES: &[ExporterModule] = &[
    ExporterModule {
        name: "redis_snmp",
        about: "REDIS-SERVER-MIB: the 17 legacy scalars (the first configured instance) and every table of the instances, labelled by the instance's name",
        objects: &[
            LEGACY_SCALARS, INSTANCE_COLUMNS, SERVER_COLUMNS, CLIENT_COLUMNS, MEMORY_COLUMNS,
            PERSISTENCE_COLUMNS, STATS_COLUMNS, REPLICATION_COLUMNS, CPU_COLUMNS, CLUSTER_COLUMNS,
            SENTINEL_COLUMNS, TLS_COLUMNS, KEYSPACE_COLUMNS, REPLICA_COLUMNS, COMMAND_COLUMNS,
            ERROR_COLUMNS, SENTINEL_MASTER_COLUMNS, SLOWLOG_COLUMNS, LATENCY_COLUMNS,
            CLIENT_NAME_COLUMNS, CLIENT_USER_COLUMNS, KEY_COLUMNS, STREAM_GROUP_COLUMNS,
            KEY_CHECK_COLUMNS, ACL_REFUSAL_COLUMNS,
            KEYSIZES_COLUMNS, THREAD_COLUMNS, MODULE_COLUMNS,
        ],
    },
    ExporterModule {
        name: "puppet_agent",
        about: "PUPPET-AGENT-MIB: the last Puppet run, the agent's state, the events log, successive runs, and the agent's certificate, CA and CRL (puppetCertificateTable, labelled by its own index, puppetCertificateIndex, the number of its puppetCertificateKind)",
        objects: &[PUPPET_SCALARS, PUPPET_EVENT_SCALARS, PUPPET_RUN_SCALARS, PUPPET_CERTIFICATE_COLUMNS],
    },
];

/// What the exporter's modules leave out, and why (as `prometheus/README.md`
/// says it).
#[rustfmt::skip]
pub const NOT_EXPORTED: &[NotCollected] = &[
    NotCollected {
        objects: PUPPET_RESOURCE_COLUMNS,
        why: "puppetResourceTable (.401.2), the resources of the last Puppet run: its rows are renumbered on every run, so a series per row would mix unrelated resources; puppetFirstError and the resource counts say what a run did.",
    },
    NotCollected {
        objects: PUPPET_EVENT_COLUMNS,
        why: "puppetEventTable (.401.4), the last resource events of the events log: each row is one event, seen once, and text; puppetEventsSeen counts them.",
    },
    NotCollected {
        objects: PUPPET_FACT_COLUMNS,
        why: "puppetFactTable (.401.6), the facts the host's configuration lets the agent serve: each value is text, the host's own word, for a manager's inventory and its select expressions; a series per fact would be a label carrying a string.",
    },
    NotCollected {
        objects: ALARM_COLUMNS,
        why: "redisAlarmTable (.400.3.23), the agent's own alarms raised now: each row is gone once rearmed, and its values are text; the shipped alert rules evaluate the same thresholds on the exporter's series instead.",
    },
    NotCollected {
        objects: SLOW_COMMAND_COLUMNS,
        why: "redisSlowCommandTable (.400.3.28), the newest slow log entries the agent saw arrive: each row is one entry, seen once, and mostly text; redisSlowlogLen and redisSlowlogLastUsec give the series.",
    },
    NotCollected {
        objects: BIG_KEY_COLUMNS,
        why: "redisBigKeyTable (.400.3.31), the largest keys the big-key sampler has seen: its rows are ranks, which another key takes as sizes change, so a series per row would mix keys (and a series per key name would grow without bound).",
    },
    NotCollected {
        objects: HOT_KEY_COLUMNS,
        why: "redisHotKeyTable (.400.3.32), the keys HOTKEYS GET reports: its rows are ranks, which another key takes from one window to the next, so a series per row would mix keys.",
    },
    NotCollected {
        objects: SENTINEL_EVENT_COLUMNS,
        why: "redisSentinelEventTable (.400.3.30), what a sentinel's masters did (failovers, down and up, quorum): each row is one event, seen once, and mostly text; redisSntState and redisSntAddress are the series, the notifications the events.",
    },
];
