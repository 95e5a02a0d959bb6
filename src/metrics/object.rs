//! The object model of the catalogue: one object of a MIB ([`ObjectDef`]),
//! where its value comes from ([`Source`]) and how an INFO value becomes
//! an SNMP value ([`Conversion`]), with the constructors the tables and
//! scalars are written with.

use crate::smi::Syntax;

/// How an INFO value becomes an SNMP value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conversion {
    /// A non-negative integer, as is: gauges latch at their maximum,
    /// Counter32 wraps.
    Unsigned,
    /// A signed integer, where Redis says `-1` for "none" (Integer32,
    /// clamped to its range).
    Signed,
    /// Text, as a DisplayString.
    Text,
    /// `0`/`1` as a TruthValue: true(1), false(2).
    Truth,
    /// Text mapped to a named number; unknown text leaves the object absent.
    Enum(&'static [(&'static str, i32)]),
    /// A decimal times a factor, as an integer gauge (`1.84` × 100 = 184):
    /// the MIB's DISPLAY-HINT puts the point back.
    Scaled(u32),
    /// Seconds with a fraction (`16364.80`) to centiseconds; a Counter32
    /// wraps, a Counter64 does not need to.
    SecondsToCentiseconds,
    /// A UNIX time, served as the seconds elapsed since, computed when asked.
    AgeOf,
    /// The field as a share of another field (the first present of these
    /// names), in hundredths of a percent (`used_memory` of `maxmemory`:
    /// 9015 is 90.15 %), rounded; absent when the other field is absent or
    /// 0 (no limit), never a division by zero. Not capped at 100 %: a
    /// server over its limit shows by how much.
    PercentOf(&'static [&'static str]),
}

/// Values the poller knows about an instance itself, not read from INFO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusField {
    Name,
    Address,
    /// up(1) / down(2) / loading(3): [`InstanceState`](super::InstanceState).
    Up,
    /// Seconds since the last successful poll.
    DataAge,
    /// Milliseconds the last poll took.
    PollDuration,
    /// Why the last poll failed, empty when it did not.
    LastError,
    /// Successful polls since the agent started.
    PollsOk,
    /// Failed polls since the agent started.
    PollsFailed,
    /// The subject of the certificate a `rediss://` server showed.
    CertSubject,
    /// Its issuer.
    CertIssuer,
    /// Its notAfter, in UNIX seconds.
    CertNotAfter,
    /// Seconds from the poll until its notAfter; negative once passed.
    CertExpiresIn,
}

/// Where an object's value comes from. Written out (`{:?}`) as the object
/// reference shows it: a table's column as its source's name and field
/// (`Acl(Reason)`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// An INFO field. Several names are aliases across Redis versions; the
    /// first one present wins.
    Info {
        fields: &'static [&'static str],
        conversion: Conversion,
    },
    Status(StatusField),
    /// An object of PUPPET-AGENT-MIB (below the Puppet root), from the
    /// agent's run summary, run report and lock files.
    Puppet(PuppetField),
    /// What the row writer made of a poll's tables ([`write_rows`](super::write_rows)).
    Rows(RowsField),
    /// A column of a table declared by `table!` with a field type of its
    /// own: which field of which type its rows give it.
    Column(Cell),
}

/// The field a column of a `table!` reads: the field type's name and the
/// field's place in it. A field type asks it through its
/// [`Column`](super::Column), so no list of every table's source is kept
/// here: a new table brings its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    /// The field type's name (`AclField`).
    pub fields: &'static str,
    /// The field's place among its variants.
    pub field: u8,
    /// What the object reference calls the source (`Acl`).
    pub source: &'static str,
    /// The field's name (`Reason`).
    pub name: &'static str,
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Info { fields, conversion } => f
                .debug_struct("Info")
                .field("fields", fields)
                .field("conversion", conversion)
                .finish(),
            Source::Status(field) => f.debug_tuple("Status").field(field).finish(),
            Source::Puppet(field) => f.debug_tuple("Puppet").field(field).finish(),
            Source::Rows(field) => f.debug_tuple("Rows").field(field).finish(),
            Source::Column(cell) => write!(f, "{}({})", cell.source, cell.name),
        }
    }
}

/// What the row writer tells of the rows of one poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowsField {
    /// Rows of the tables read from INFO (keyspace, replicas, commands,
    /// errors) that the tables' caps, or a name no index can hold, left
    /// out: a hostile or broken server's thousands of lines show as a
    /// number, not as rows that slow every walk.
    LeftOut,
}

/// What a PUPPET-AGENT-MIB object reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PuppetField {
    LastRunTime,
    LastRunAge,
    /// unchanged(1), changed(2), failed(3), unknown(4)
    Status,
    ResourcesTotal,
    ResourcesChanged,
    ResourcesFailed,
    ResourcesFailedToRestart,
    ResourcesSkipped,
    ResourcesOutOfSync,
    ResourcesRestarted,
    ResourcesScheduled,
    ResourcesCorrective,
    EventsTotal,
    EventsFailure,
    EventsSuccess,
    ChangesTotal,
    /// A phase of `time:` in the summary, in milliseconds.
    Phase(&'static str),
    ConfigVersion,
    PuppetVersion,
    /// notUsed(1), explicitlyRequested(2), onFailure(3), unknown(4)
    CachedCatalog,
    Noop,
    NoopPending,
    CorrectiveChange,
    /// agent(1), user(2): `puppet agent` or an ad-hoc `puppet apply`.
    RunMode,
    FirstError,
    Disabled,
    DisabledMessage,
    RunInProgress,
    /// Why the files could not be read, empty when they could.
    ReadError,
    /// `transaction_uuid` of the last run's report: the run's own id.
    TransactionUuid,
    /// `job_id` of the last run's report: the id a `--job-id` gave it
    /// (a kick's), empty for a run nobody gave one.
    JobId,
    /// The host's role: the trusted fact `pp_role` of the agent's
    /// certificate, else the configured external fact (`role_fact`),
    /// empty without either.
    Role,
    /// Columns of `puppetFactTable`: an allowlisted fact's name and value.
    FactName,
    FactValue,
    /// Columns of `puppetResourceTable`.
    ResourceType,
    ResourceTitle,
    ResourceState,
    ResourceMessage,
    /// Successive runs (`puppet::runs`): runs seen since the subagent
    /// started, counted.
    RunsObserved,
    /// The last runs that each changed resources, in a row.
    ChangingRuns,
    /// Runs that ended within the last hour.
    RunsLastHour,
    /// Seconds between the ends of the last two runs.
    RunInterval,
    /// `converge_runs` of the configuration.
    ConvergeRuns,
    /// The resources that changed in each of the last `converge_runs` runs.
    LoopResources,
    /// How many those are (the text may be cut).
    LoopResourceCount,
    /// The events log (`--logdest …/events.jsonl`): its state
    /// and counts (`puppet.1.37`…), and the columns of `puppetEventTable`.
    Events(PuppetEventField),
    /// The columns of `puppetCertificateTable`.
    Certificate(PuppetCertificateField),
}

/// What a column of `puppetCertificateTable` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PuppetCertificateField {
    /// agent(1), ca(2), crl(3): [`PuppetCertificateKind`](super::PuppetCertificateKind).
    Kind,
    /// The file read.
    Path,
    /// [`PuppetCertificateState`](super::PuppetCertificateState).
    State,
    /// notAfter (a CRL's nextUpdate), UNIX seconds.
    NotAfter,
    /// Seconds from the reading to NotAfter; negative once past.
    SecondsLeft,
    /// The certificate's subject (a CRL's issuer).
    Subject,
    /// Why the file could not be used, empty when it could.
    Error,
}

/// What an object of the events log reports (scalars and the columns of
/// `puppetEventTable`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PuppetEventField {
    /// following(1), missing(2), unreadable(3): [`PuppetEventsLogStatus`](super::PuppetEventsLogStatus).
    LogStatus,
    /// Why the log cannot be followed, empty when it can.
    LogError,
    /// Resource events read since the agent started.
    Seen,
    /// Lines that were not usable: not JSON, over-long, unknown level.
    Refused,
    /// Resource notifications held back in the current run.
    HeldBack,
    /// The configuration version of the current run, from the log.
    RunVersion,
    /// Columns of `puppetEventTable`.
    Time,
    Level,
    ResourceType,
    Title,
    Property,
    Message,
    ConfigVersion,
}

/// One object of the MIB.
#[derive(Debug, Clone, Copy)]
pub struct ObjectDef {
    /// The MIB descriptor, e.g. `redisConnectedClients`.
    pub name: &'static str,
    /// OID below the module root, without instance suffix.
    pub arcs: &'static [u32],
    pub syntax: Syntax,
    pub source: Source,
    /// The MIB's UNITS clause, when the value has one (`bytes`, `seconds`,
    /// `clients`…): what a manager shows beside the number.
    pub units: Option<&'static str>,
    /// The OpenNMS alias (RRD file and data source name), where the name
    /// does not fit in its 19 characters or an older alias is kept: set
    /// once, as users' RRD files are named after it. See [`Self::opennms_alias`].
    pub alias: Option<&'static str>,
    /// The enumeration of an `INTEGER { name(n), … }` object: every label
    /// with its number (an `enumeration!`'s `LABELS`). Set for every
    /// object of [`Syntax::Enum`] and none other (a unit test checks it),
    /// so whoever needs an object's named numbers (the INFO reader, the
    /// MIB and OpenNMS tests) reads them here rather than linking them
    /// again.
    pub enumeration: Option<&'static [(&'static str, i32)]>,
}

impl ObjectDef {
    /// This object with a UNITS clause.
    pub(super) const fn units(self, units: &'static str) -> ObjectDef {
        ObjectDef {
            units: Some(units),
            ..self
        }
    }

    /// This object with its enumeration (an `enumeration!`'s `LABELS`).
    pub(super) const fn enumerated(self, labels: &'static [(&'static str, i32)]) -> ObjectDef {
        ObjectDef {
            enumeration: Some(labels),
            ..self
        }
    }

    /// This object with an OpenNMS alias other than its name.
    pub(super) const fn alias(self, alias: &'static str) -> ObjectDef {
        ObjectDef {
            alias: Some(alias),
            ..self
        }
    }

    /// What OpenNMS collects this object as: its alias, or its name.
    pub fn opennms_alias(&self) -> &'static str {
        self.alias.unwrap_or(self.name)
    }
}

pub(super) const fn info(
    name: &'static str,
    arcs: &'static [u32],
    syntax: Syntax,
    fields: &'static [&'static str],
) -> ObjectDef {
    field(name, arcs, syntax, Conversion::Unsigned, fields)
}

pub(super) const fn field(
    name: &'static str,
    arcs: &'static [u32],
    syntax: Syntax,
    conversion: Conversion,
    fields: &'static [&'static str],
) -> ObjectDef {
    ObjectDef {
        name,
        arcs,
        syntax,
        source: Source::Info { fields, conversion },
        units: None,
        alias: None,
        // An INFO word read through an enumeration is that enumeration's
        // object: stated once, in the conversion.
        enumeration: match conversion {
            Conversion::Enum(labels) => Some(labels),
            _ => None,
        },
    }
}

/// Seconds with a fraction, served in centiseconds (UNITS "centiseconds"):
/// Counter32 for the legacy scalars, Counter64 in the tables.
pub(super) const fn centiseconds(
    name: &'static str,
    arcs: &'static [u32],
    syntax: Syntax,
    fields: &'static [&'static str],
) -> ObjectDef {
    field(
        name,
        arcs,
        syntax,
        Conversion::SecondsToCentiseconds,
        fields,
    )
    .units("centiseconds")
}

pub(super) const fn column(
    name: &'static str,
    arcs: &'static [u32],
    syntax: Syntax,
    source: Source,
) -> ObjectDef {
    ObjectDef {
        name,
        arcs,
        syntax,
        source,
        units: None,
        alias: None,
        enumeration: None,
    }
}

pub(super) const fn status(
    name: &'static str,
    arcs: &'static [u32],
    syntax: Syntax,
    field: StatusField,
) -> ObjectDef {
    ObjectDef {
        name,
        arcs,
        syntax,
        source: Source::Status(field),
        units: None,
        alias: None,
        enumeration: None,
    }
}

/// The number a named value has in one of the enumerations above.
pub fn enum_number(names: &[(&str, i32)], name: &str) -> Option<i32> {
    names.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}
