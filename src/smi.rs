//! SMIv2 data types: the syntax an object is declared with in the MIB, and the
//! value the agent serves for it.

use crate::oid::Oid;
use std::fmt;

/// The SYNTAX of an object as the MIB declares it. Textual conventions are
/// named separately where they change how a value must be produced (a
/// `CounterBasedGauge64` is sent as Counter64 on the wire, but is a gauge).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Syntax {
    Integer32,
    /// An INTEGER with named values; the enumeration lives in the MIB.
    Enum,
    /// SNMPv2-TC's TruthValue: true(1), false(2).
    TruthValue,
    Gauge32,
    Counter32,
    Counter64,
    /// A 64-bit gauge: Counter64 on the wire, gauge semantics in the MIB
    /// (the legacy `REDISUnsigned64`, and HCNUM-TC's `CounterBasedGauge64`).
    Gauge64,
    TimeTicks,
    DisplayString,
    OctetString,
    ObjectIdentifier,
}

impl Syntax {
    /// The ASN.1 base type that goes on the wire for this syntax.
    pub fn wire_type(self) -> WireType {
        match self {
            Syntax::Integer32 | Syntax::Enum | Syntax::TruthValue => WireType::Integer,
            Syntax::Gauge32 => WireType::Gauge32,
            Syntax::Counter32 => WireType::Counter32,
            Syntax::Counter64 | Syntax::Gauge64 => WireType::Counter64,
            Syntax::TimeTicks => WireType::TimeTicks,
            Syntax::DisplayString | Syntax::OctetString => WireType::OctetString,
            Syntax::ObjectIdentifier => WireType::ObjectIdentifier,
        }
    }
}

/// ASN.1 base types as net-snmp tools print them (`Gauge32: 5`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireType {
    Integer,
    OctetString,
    ObjectIdentifier,
    IpAddress,
    Counter32,
    Gauge32,
    TimeTicks,
    Opaque,
    Counter64,
}

impl WireType {
    /// The type name `snmpget` prints in front of a value.
    pub fn net_snmp_label(self) -> &'static str {
        match self {
            WireType::Integer => "INTEGER",
            WireType::OctetString => "STRING",
            WireType::ObjectIdentifier => "OID",
            WireType::IpAddress => "IpAddress",
            WireType::Counter32 => "Counter32",
            WireType::Gauge32 => "Gauge32",
            WireType::TimeTicks => "Timeticks",
            WireType::Opaque => "Opaque",
            WireType::Counter64 => "Counter64",
        }
    }
}

/// A value the agent serves.
#[derive(Clone, PartialEq, Eq)]
pub enum Value {
    Integer(i32),
    OctetString(Vec<u8>),
    ObjectIdentifier(Oid),
    IpAddress([u8; 4]),
    Counter32(u32),
    Gauge32(u32),
    TimeTicks(u32),
    Opaque(Vec<u8>),
    Counter64(u64),
    /// Seconds elapsed since a UNIX time, served as Gauge32 and computed when
    /// asked, so an "age" never goes stale between two polls.
    SecondsSince(u64),
}

impl Value {
    pub fn wire_type(&self) -> WireType {
        match self {
            Value::Integer(_) => WireType::Integer,
            Value::OctetString(_) => WireType::OctetString,
            Value::ObjectIdentifier(_) => WireType::ObjectIdentifier,
            Value::IpAddress(_) => WireType::IpAddress,
            Value::Counter32(_) => WireType::Counter32,
            Value::Gauge32(_) | Value::SecondsSince(_) => WireType::Gauge32,
            Value::TimeTicks(_) => WireType::TimeTicks,
            Value::Opaque(_) => WireType::Opaque,
            Value::Counter64(_) => WireType::Counter64,
        }
    }

    pub fn text(s: impl Into<String>) -> Value {
        Value::OctetString(s.into().into_bytes())
    }

    /// Resolve values computed at answer time (`SecondsSince`) against `now`
    /// (UNIX seconds); every other value is returned as is.
    pub fn resolve(&self, now_unix: u64) -> std::borrow::Cow<'_, Value> {
        match self {
            Value::SecondsSince(then) => {
                let age = now_unix.saturating_sub(*then);
                std::borrow::Cow::Owned(Value::Gauge32(saturate_u32(age)))
            }
            other => std::borrow::Cow::Borrowed(other),
        }
    }
}

/// The current UNIX time in seconds (0 if the clock is before 1970): what
/// [`Value::resolve`] measures ages against.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Clamp to the Gauge32 range: RFC 2578 gauges latch at their maximum.
pub fn saturate_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Integer(v) => write!(f, "INTEGER: {v}"),
            Value::OctetString(v) => write!(f, "STRING: {:?}", String::from_utf8_lossy(v)),
            Value::ObjectIdentifier(v) => write!(f, "OID: {v}"),
            Value::IpAddress(a) => write!(f, "IpAddress: {}.{}.{}.{}", a[0], a[1], a[2], a[3]),
            Value::Counter32(v) => write!(f, "Counter32: {v}"),
            Value::Gauge32(v) => write!(f, "Gauge32: {v}"),
            Value::TimeTicks(v) => write!(f, "Timeticks: {v}"),
            Value::Opaque(v) => write!(f, "Opaque: {v:02x?}"),
            Value::Counter64(v) => write!(f, "Counter64: {v}"),
            Value::SecondsSince(t) => write!(f, "Gauge32: seconds since {t}"),
        }
    }
}

/// A DisplayString (RFC 2579): at most 255 octets of printable ASCII.
/// Error texts can be longer or carry other bytes; they are cut and
/// replaced here so managers never see a malformed value.
pub fn display_string(text: &str) -> Value {
    let cleaned: Vec<u8> = text
        .chars()
        .map(|c| {
            if c == ' ' || c.is_ascii_graphic() {
                c as u8
            } else {
                b'?'
            }
        })
        .take(255)
        .collect();
    Value::OctetString(cleaned)
}
