//! PUPPET-AGENT-MIB's objects: the last run's scalars, the resource and
//! event tables, and their enumerations.

use super::*;
use crate::smi::Syntax;

use Syntax::*;

const fn puppet(
    name: &'static str,
    arcs: &'static [u32],
    syntax: Syntax,
    field: PuppetField,
) -> ObjectDef {
    ObjectDef {
        name,
        arcs,
        syntax,
        source: Source::Puppet(field),
        units: None,
        alias: None,
        enumeration: None,
    }
}

/// PUPPET-AGENT-MIB's scalars (`puppet.1.N`, served with `.0`): the last run
/// of the Puppet agent, and the agent's state now. Arcs are below the
/// Puppet root, not the Redis one.
#[rustfmt::skip]
pub const PUPPET_SCALARS: &[ObjectDef] = &[
    puppet("puppetLastRunTime", &[1, 1], Gauge32, PuppetField::LastRunTime).units("seconds"),
    puppet("puppetLastRunAge", &[1, 2], Gauge32, PuppetField::LastRunAge).units("seconds"),
    puppet("puppetLastRunStatus", &[1, 3], Enum, PuppetField::Status).enumerated(PuppetRunStatus::LABELS),
    puppet("puppetResourcesTotal", &[1, 4], Gauge32, PuppetField::ResourcesTotal).units("resources").alias("puppetResTotal"),
    puppet("puppetResourcesChanged", &[1, 5], Gauge32, PuppetField::ResourcesChanged).units("resources").alias("puppetResChanged"),
    puppet("puppetResourcesFailed", &[1, 6], Gauge32, PuppetField::ResourcesFailed).units("resources").alias("puppetResFailed"),
    puppet("puppetResourcesFailRestart", &[1, 7], Gauge32, PuppetField::ResourcesFailedToRestart).units("resources").alias("puppetResFailRestrt"),
    puppet("puppetResourcesSkipped", &[1, 8], Gauge32, PuppetField::ResourcesSkipped).units("resources").alias("puppetResSkipped"),
    puppet("puppetResourcesOutOfSync", &[1, 9], Gauge32, PuppetField::ResourcesOutOfSync).units("resources").alias("puppetResOutOfSync"),
    puppet("puppetResourcesRestarted", &[1, 10], Gauge32, PuppetField::ResourcesRestarted).units("resources").alias("puppetResRestarted"),
    puppet("puppetResourcesScheduled", &[1, 11], Gauge32, PuppetField::ResourcesScheduled).units("resources").alias("puppetResScheduled"),
    puppet("puppetResourcesCorrective", &[1, 12], Gauge32, PuppetField::ResourcesCorrective).units("resources").alias("puppetResCorrective"),
    puppet("puppetEventsTotal", &[1, 13], Gauge32, PuppetField::EventsTotal).units("events"),
    puppet("puppetEventsFailure", &[1, 14], Gauge32, PuppetField::EventsFailure).units("events"),
    puppet("puppetEventsSuccess", &[1, 15], Gauge32, PuppetField::EventsSuccess).units("events"),
    puppet("puppetChangesTotal", &[1, 16], Gauge32, PuppetField::ChangesTotal).units("changes"),
    puppet("puppetTimeTotal", &[1, 17], Gauge32, PuppetField::Phase("total")).units("milliseconds"),
    puppet("puppetTimeConfigRetrieval", &[1, 18], Gauge32, PuppetField::Phase("config_retrieval")).units("milliseconds").alias("puppetTimeConfig"),
    puppet("puppetTimeCatalogApply", &[1, 19], Gauge32, PuppetField::Phase("catalog_application")).units("milliseconds").alias("puppetTimeCatApply"),
    puppet("puppetTimeFactGeneration", &[1, 20], Gauge32, PuppetField::Phase("fact_generation")).units("milliseconds").alias("puppetTimeFacts"),
    puppet("puppetTimePluginSync", &[1, 21], Gauge32, PuppetField::Phase("plugin_sync")).units("milliseconds").alias("puppetTimePlugins"),
    puppet("puppetTimeTransaction", &[1, 22], Gauge32, PuppetField::Phase("transaction_evaluation")).units("milliseconds").alias("puppetTimeTransact"),
    puppet("puppetTimeConvertCatalog", &[1, 23], Gauge32, PuppetField::Phase("convert_catalog")).units("milliseconds").alias("puppetTimeConvert"),
    puppet("puppetTimeNodeRetrieval", &[1, 24], Gauge32, PuppetField::Phase("node_retrieval")).units("milliseconds").alias("puppetTimeNode"),
    puppet("puppetConfigVersion", &[1, 25], DisplayString, PuppetField::ConfigVersion),
    puppet("puppetVersion", &[1, 26], DisplayString, PuppetField::PuppetVersion),
    puppet("puppetCachedCatalogStatus", &[1, 27], Enum, PuppetField::CachedCatalog).enumerated(PuppetCachedCatalog::LABELS).alias("puppetCachedCatalog"),
    puppet("puppetNoop", &[1, 28], TruthValue, PuppetField::Noop),
    puppet("puppetNoopPending", &[1, 29], TruthValue, PuppetField::NoopPending),
    puppet("puppetCorrectiveChange", &[1, 30], TruthValue, PuppetField::CorrectiveChange).alias("puppetCorrective"),
    puppet("puppetRunMode", &[1, 31], Enum, PuppetField::RunMode).enumerated(PuppetRunMode::LABELS),
    puppet("puppetFirstError", &[1, 32], DisplayString, PuppetField::FirstError),
    puppet("puppetDisabled", &[1, 33], TruthValue, PuppetField::Disabled),
    puppet("puppetDisabledMessage", &[1, 34], DisplayString, PuppetField::DisabledMessage).alias("puppetDisabledMsg"),
    puppet("puppetRunInProgress", &[1, 35], TruthValue, PuppetField::RunInProgress),
    puppet("puppetReadError", &[1, 36], DisplayString, PuppetField::ReadError),
    puppet("puppetLastRunTransaction", &[1, 52], DisplayString, PuppetField::TransactionUuid).alias("puppetTransaction"),
    puppet("puppetLastRunJobId", &[1, 53], DisplayString, PuppetField::JobId),
    puppet("puppetRole", &[1, 54], DisplayString, PuppetField::Role),
];

/// PUPPET-AGENT-MIB's scalars about successive runs (`puppet.1.45`…,
/// served with `.0`): convergence and run storms.
#[rustfmt::skip]
pub const PUPPET_RUN_SCALARS: &[ObjectDef] = &[
    puppet("puppetRunsObserved", &[1, 45], Counter32, PuppetField::RunsObserved).units("runs"),
    puppet("puppetChangingRuns", &[1, 46], Gauge32, PuppetField::ChangingRuns).units("runs"),
    puppet("puppetRunsLastHour", &[1, 47], Gauge32, PuppetField::RunsLastHour).units("runs"),
    puppet("puppetRunInterval", &[1, 48], Gauge32, PuppetField::RunInterval).units("seconds"),
    puppet("puppetConvergeRuns", &[1, 49], Gauge32, PuppetField::ConvergeRuns).units("runs"),
    puppet("puppetLoopResources", &[1, 50], DisplayString, PuppetField::LoopResources),
    puppet("puppetLoopResourceCount", &[1, 51], Gauge32, PuppetField::LoopResourceCount).units("resources").alias("puppetLoopResCount"),
];

table! {
    /// `puppetResourceTable`: the last run's listed resources, at most
    /// [`MAX_PUPPET_RESOURCES`].
    pub const PUPPET_RESOURCE_TABLE = ("puppetResourceTable", "puppetResourceEntry", [2, 1]) {
        augments: None,
        index: RowIndex::Row { object: "puppetResourceIndex", max: MAX_PUPPET_RESOURCES as u32, },
        // The index is a position in the run's list; its DESCRIPTION names
        // no source.
        rows_from: &[],
        resource_type: "puppetResource",
        max_rows: Some(MAX_PUPPET_RESOURCES),
    }
    /// `puppetResourceTable` (`puppet.2`), INDEX { puppetResourceIndex }: the
    /// last run's failed, skipped and changed resources (failures first), at
    /// most `MAX_PUPPET_RESOURCES` rows.
    pub const PUPPET_RESOURCE_COLUMNS = [
        puppet("puppetResourceType", 2, DisplayString, PuppetField::ResourceType),
        puppet("puppetResourceTitle", 3, DisplayString, PuppetField::ResourceTitle),
        puppet("puppetResourceState", 4, Enum, PuppetField::ResourceState).enumerated(PuppetResourceState::LABELS),
        puppet("puppetResourceMessage", 5, DisplayString, PuppetField::ResourceMessage),
    ]
}

/// Rows of `puppetResourceTable` at most.
pub const MAX_PUPPET_RESOURCES: usize = 100;

/// The events log's scalars (`puppet.1.37`…, served with `.0`), served
/// when the log is followed (`events_log` of `[puppet]`).
#[rustfmt::skip]
pub const PUPPET_EVENT_SCALARS: &[ObjectDef] = &[
    puppet("puppetEventsLogStatus", &[1, 37], Enum, PuppetField::Events(PuppetEventField::LogStatus)).enumerated(PuppetEventsLogStatus::LABELS).alias("puppetEvLogStatus"),
    puppet("puppetEventsLogError", &[1, 38], DisplayString, PuppetField::Events(PuppetEventField::LogError)).alias("puppetEvLogError"),
    puppet("puppetEventsSeen", &[1, 39], Counter32, PuppetField::Events(PuppetEventField::Seen)).units("events"),
    puppet("puppetEventsRefused", &[1, 40], Counter32, PuppetField::Events(PuppetEventField::Refused)).units("lines"),
    puppet("puppetEventsHeldBack", &[1, 41], Gauge32, PuppetField::Events(PuppetEventField::HeldBack)).units("notifications").alias("puppetEvHeldBack"),
    puppet("puppetEventsRunVersion", &[1, 42], DisplayString, PuppetField::Events(PuppetEventField::RunVersion)).alias("puppetEvRunVersion"),
];

table! {
    /// `puppetEventTable`: the events log's last rows (the log's own cap,
    /// `max_rows` of `[puppet]`, bounds them).
    pub const PUPPET_EVENT_TABLE = ("puppetEventTable", "puppetEventEntry", [4, 1]) {
        augments: None,
        index: RowIndex::Row { object: "puppetEventIndex", max: MAX_INDEX_NUMBER, },
        // The index numbers the events as read; its DESCRIPTION names no
        // source.
        rows_from: &[],
        resource_type: "puppetEvent",
        max_rows: None,
    }
    /// `puppetEventTable` (`puppet.4`), INDEX { puppetEventIndex }: the last
    /// resource events of the log, numbered in the order they were read (the
    /// index grows by one per event, so rows age out at the low end).
    pub const PUPPET_EVENT_COLUMNS = [
        puppet("puppetEventTime", 2, Gauge32, PuppetField::Events(PuppetEventField::Time)).units("seconds"),
        puppet("puppetEventLevel", 3, Enum, PuppetField::Events(PuppetEventField::Level)).enumerated(PuppetEventLevel::LABELS),
        puppet("puppetEventResourceType", 4, DisplayString, PuppetField::Events(PuppetEventField::ResourceType)),
        puppet("puppetEventTitle", 5, DisplayString, PuppetField::Events(PuppetEventField::Title)),
        puppet("puppetEventProperty", 6, DisplayString, PuppetField::Events(PuppetEventField::Property)),
        puppet("puppetEventMessage", 7, DisplayString, PuppetField::Events(PuppetEventField::Message)),
        puppet("puppetEventConfigVersion", 8, DisplayString, PuppetField::Events(PuppetEventField::ConfigVersion)),
    ]
}

enumeration! {
    /// `puppetEventsLogStatus`: whether the events log is being followed.
    PuppetEventsLogStatus {
        Following = 1 => ["following"],
        Missing = 2 => ["missing"],
        Unreadable = 3 => ["unreadable"],
    }
}

enumeration! {
    /// `puppetEventLevel`: Puppet's log levels, least severe first.
    PuppetEventLevel {
        Debug = 1 => ["debug"],
        Info = 2 => ["info"],
        Notice = 3 => ["notice"],
        Warning = 4 => ["warning"],
        Err = 5 => ["err"],
        Crit = 6 => ["crit"],
        Alert = 7 => ["alert"],
        Emerg = 8 => ["emerg"],
    }
}

enumeration! {
    /// `puppetLastRunStatus`.
    PuppetRunStatus {
        Unchanged = 1 => ["unchanged"],
        Changed = 2 => ["changed"],
        Failed = 3 => ["failed"],
        Unknown = 4 => ["unknown"],
    }
}

/// A run whose status is not known yet (nothing read, a status this
/// parser does not know) is unknown(4).
impl Default for PuppetRunStatus {
    fn default() -> Self {
        PuppetRunStatus::Unknown
    }
}

enumeration! {
    /// `puppetCachedCatalogStatus`.
    PuppetCachedCatalog {
        NotUsed = 1 => ["not_used"],
        ExplicitlyRequested = 2 => ["explicitly_requested"],
        OnFailure = 3 => ["on_failure"],
        Unknown = 4 => ["unknown"],
    }
}

enumeration! {
    /// `puppetRunMode`: `puppet agent` or an ad-hoc `puppet apply`.
    PuppetRunMode {
        Agent = 1 => ["agent"],
        User = 2 => ["user"],
    }
}

enumeration! {
    /// `puppetResourceState`.
    PuppetResourceState {
        Failed = 1 => ["failed"],
        FailedToRestart = 2 => ["failed_to_restart"],
        Skipped = 3 => ["skipped"],
        Changed = 4 => ["changed"],
        OutOfSync = 5 => ["out_of_sync"],
    }
}

table! {
    /// `puppetCertificateTable`: the Puppet agent's certificate, CA and CRL,
    /// one row each, indexed by their kind.
    pub const PUPPET_CERTIFICATE_TABLE = ("puppetCertificateTable", "puppetCertificateEntry", [5, 1]) {
        augments: None,
        index: RowIndex::Row { object: "puppetCertificateIndex", max: 3, },
        // The index is the kind's number; its DESCRIPTION names no source.
        rows_from: &[],
        resource_type: "puppetCertificate",
        max_rows: Some(3),
    }
    /// `puppetCertificateTable` (`puppet.5`), INDEX { puppetCertificateIndex }:
    /// the agent's own certificate, its CA and its CRL from Puppet's `ssldir`,
    /// one row each, numbered by [`PuppetCertificateKind`].
    pub const PUPPET_CERTIFICATE_COLUMNS = [
        puppet("puppetCertificateKind", 2, Enum, PuppetField::Certificate(PuppetCertificateField::Kind)).enumerated(PuppetCertificateKind::LABELS).alias("puppetCertKind"),
        puppet("puppetCertificatePath", 3, DisplayString, PuppetField::Certificate(PuppetCertificateField::Path)).alias("puppetCertPath"),
        puppet("puppetCertificateState", 4, Enum, PuppetField::Certificate(PuppetCertificateField::State)).enumerated(PuppetCertificateState::LABELS).alias("puppetCertState"),
        puppet("puppetCertificateNotAfter", 5, Gauge32, PuppetField::Certificate(PuppetCertificateField::NotAfter)).units("seconds").alias("puppetCertNotAfter"),
        puppet("puppetCertificateSecondsLeft", 6, Integer32, PuppetField::Certificate(PuppetCertificateField::SecondsLeft)).units("seconds").alias("puppetCertSecsLeft"),
        puppet("puppetCertificateSubject", 7, DisplayString, PuppetField::Certificate(PuppetCertificateField::Subject)).alias("puppetCertSubject"),
        puppet("puppetCertificateError", 8, DisplayString, PuppetField::Certificate(PuppetCertificateField::Error)).alias("puppetCertError"),
    ]
}

enumeration! {
    /// `puppetCertificateKind`: which file of Puppet's `ssldir` a row of
    /// `puppetCertificateTable` is (its number is the row's index).
    PuppetCertificateKind {
        /// `hostcert`, `$certdir/$certname.pem`.
        Agent = 1 => ["agent"],
        /// `localcacert`, `$certdir/ca.pem`.
        Ca = 2 => ["ca"],
        /// `hostcrl`, `$ssldir/crl.pem`.
        Crl = 3 => ["crl"],
    }
}

enumeration! {
    /// `puppetCertificateState`: what the latest read of the file found,
    /// and how near its end it is.
    PuppetCertificateState {
        Valid = 1 => ["valid"],
        /// Fewer seconds left than `[puppet] certificate_warning_days`.
        Expiring = 2 => ["expiring"],
        /// Past notAfter (a CRL: past nextUpdate).
        Expired = 3 => ["expired"],
        Missing = 4 => ["missing"],
        Unreadable = 5 => ["unreadable"],
        /// Read but not a certificate (a CRL) this reader understands.
        Invalid = 6 => ["invalid"],
    }
}

table! {
    /// `puppetFactTable`: the allowlisted facts (`[puppet] facts`), each row
    /// numbered by its fact's place in that list.
    pub const PUPPET_FACT_TABLE = ("puppetFactTable", "puppetFactEntry", [6, 1]) {
        augments: None,
        index: RowIndex::Row { object: "puppetFactIndex", max: MAX_FACT_ROWS as u32, },
        // The index is the fact's place in `facts`; its DESCRIPTION says so.
        rows_from: &[],
        resource_type: "puppetFact",
        max_rows: Some(MAX_FACT_ROWS),
    }
    /// `puppetFactTable` (`puppet.6`), INDEX { puppetFactIndex }: the facts
    /// of `[puppet] facts` that have a value, each at its place in that list.
    pub const PUPPET_FACT_COLUMNS = [
        puppet("puppetFactName", 2, DisplayString, PuppetField::FactName),
        puppet("puppetFactValue", 3, DisplayString, PuppetField::FactValue),
    ]
}

/// Rows of `puppetFactTable` at most (`puppetFactIndex`, `Integer32
/// (1..32)`): the facts `[puppet] facts` may name.
pub const MAX_FACT_ROWS: usize = 32;

/// PUPPET-AGENT-MIB's scalars, each served with `.0`.
pub const PUPPET_SCALAR_LISTS: &[&[ObjectDef]] =
    &[PUPPET_SCALARS, PUPPET_RUN_SCALARS, PUPPET_EVENT_SCALARS];
