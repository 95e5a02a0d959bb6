//! The AgentX header, PDU types, what the decoder produces, the values a
//! response carries, and the errors of the trust boundary.

use crate::oid::{Oid, MAX_SUBIDS};
use crate::smi::Value;

pub const HEADER_LEN: usize = 20;
/// Largest payload we accept (a PDU claiming more is a protocol error, not an allocation).
pub const MAX_PAYLOAD_LEN: u32 = 256 * 1024;

/// Header flag masks (RFC 2741 6.1): masks, not bit numbers.
pub mod flags {
    pub const INSTANCE_REGISTRATION: u8 = 0x01;
    pub const NEW_INDEX: u8 = 0x02;
    pub const ANY_INDEX: u8 = 0x04;
    pub const NON_DEFAULT_CONTEXT: u8 = 0x08;
    pub const NETWORK_BYTE_ORDER: u8 = 0x10;
}

/// The only protocol version there is.
pub(super) const VERSION: u8 = 1;

/// `1.3.6.1`, the "internet" prefix an OID's prefix byte abbreviates.
pub(super) const INTERNET: [u32; 4] = [1, 3, 6, 1];

/// Value type codes (RFC 2741 5.4).
pub(super) mod tag {
    pub const INTEGER: u16 = 2;
    pub const OCTET_STRING: u16 = 4;
    pub const NULL: u16 = 5;
    pub const OBJECT_IDENTIFIER: u16 = 6;
    pub const IP_ADDRESS: u16 = 64;
    pub const COUNTER32: u16 = 65;
    pub const GAUGE32: u16 = 66;
    pub const TIME_TICKS: u16 = 67;
    pub const OPAQUE: u16 = 68;
    pub const COUNTER64: u16 = 70;
    pub const NO_SUCH_OBJECT: u16 = 128;
    pub const NO_SUCH_INSTANCE: u16 = 129;
    pub const END_OF_MIB_VIEW: u16 = 130;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PduType {
    Open = 1,
    Close,
    Register,
    Unregister,
    Get,
    GetNext,
    GetBulk,
    TestSet,
    CommitSet,
    UndoSet,
    CleanupSet,
    Notify,
    Ping,
    IndexAllocate,
    IndexDeallocate,
    AddAgentCaps,
    RemoveAgentCaps,
    Response,
}

impl PduType {
    pub fn from_u8(v: u8) -> Option<Self> {
        use PduType::*;
        Some(match v {
            1 => Open,
            2 => Close,
            3 => Register,
            4 => Unregister,
            5 => Get,
            6 => GetNext,
            7 => GetBulk,
            8 => TestSet,
            9 => CommitSet,
            10 => UndoSet,
            11 => CleanupSet,
            12 => Notify,
            13 => Ping,
            14 => IndexAllocate,
            15 => IndexDeallocate,
            16 => AddAgentCaps,
            17 => RemoveAgentCaps,
            18 => Response,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub pdu_type: PduType,
    pub flags: u8,
    pub session_id: u32,
    pub transaction_id: u32,
    pub packet_id: u32,
    pub payload_len: u32,
}

impl Header {
    /// The ids a Response to this PDU must carry.
    pub fn ids(&self) -> Ids {
        Ids {
            session_id: self.session_id,
            transaction_id: self.transaction_id,
            packet_id: self.packet_id,
        }
    }

    pub(super) fn big_endian(&self) -> bool {
        self.flags & flags::NETWORK_BYTE_ORDER != 0
    }
}

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum PduError {
    #[error("AgentX version {0} is not supported (only version 1 exists)")]
    BadVersion(u8),
    #[error("unknown AgentX PDU type {0}")]
    UnknownType(u8),
    #[error("payload length {0} is not a multiple of 4")]
    PayloadNotAligned(u32),
    #[error("payload length {0} exceeds the {MAX_PAYLOAD_LEN}-byte limit")]
    PayloadTooLarge(u32),
    #[error("header declares a {declared}-byte payload but {actual} bytes were given")]
    PayloadLenMismatch { declared: u32, actual: usize },
    #[error("payload truncated: {what} at offset {offset} runs past its end")]
    Truncated { what: &'static str, offset: usize },
    #[error("OID has more than {MAX_SUBIDS} sub-identifiers")]
    OidTooLong,
    #[error("payload has trailing bytes after the last field")]
    TrailingBytes,
    #[error("unknown varbind value type {0}")]
    BadValueType(u16),
    #[error("IpAddress value is {0} octets long, not 4")]
    BadIpAddressLen(usize),
    #[error("exception value type {0} is only valid in a Response")]
    UnexpectedException(u16),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchRange {
    pub start: Oid,
    pub include: bool,
    /// `Oid::null()` when the range is open-ended.
    pub end: Oid,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarBind {
    pub name: Oid,
    /// `None` for Null and the exceptions (noSuchObject, noSuchInstance,
    /// endOfMibView); exceptions are only accepted inside a Response.
    pub value: Option<Value>,
}

/// A PDU that can arrive at a subagent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incoming {
    Get {
        context: Option<Vec<u8>>,
        ranges: Vec<SearchRange>,
    },
    GetNext {
        context: Option<Vec<u8>>,
        ranges: Vec<SearchRange>,
    },
    GetBulk {
        context: Option<Vec<u8>>,
        non_repeaters: u16,
        max_repetitions: u16,
        ranges: Vec<SearchRange>,
    },
    TestSet {
        context: Option<Vec<u8>>,
        varbinds: Vec<VarBind>,
    },
    CommitSet,
    UndoSet,
    CleanupSet,
    Close {
        reason: u8,
    },
    Response {
        /// Raw centiseconds, exactly as sent.
        sys_uptime: u32,
        /// Raw error status; see [`ErrorStatus::from_u16`].
        error: u16,
        index: u16,
        varbinds: Vec<VarBind>,
    },
    /// Any other valid type (a master should not send it; the session
    /// answers or ignores it). Its payload is not interpreted.
    Other(PduType),
}

/// Error-status values: SNMP ones (RFC 3416) and AgentX ones (RFC 2741
/// 6.2.16 / 7.2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum ErrorStatus {
    NoError = 0,
    TooBig = 1,
    NoSuchName = 2,
    BadValue = 3,
    ReadOnly = 4,
    GenErr = 5,
    NoAccess = 6,
    WrongType = 7,
    WrongLength = 8,
    WrongEncoding = 9,
    WrongValue = 10,
    NoCreation = 11,
    InconsistentValue = 12,
    ResourceUnavailable = 13,
    CommitFailed = 14,
    UndoFailed = 15,
    AuthorizationError = 16,
    NotWritable = 17,
    InconsistentName = 18,
    OpenFailed = 256,
    NotOpen = 257,
    IndexWrongType = 258,
    IndexAlreadyAllocated = 259,
    IndexNoneAvailable = 260,
    IndexNotAllocated = 261,
    UnsupportedContext = 262,
    DuplicateRegistration = 263,
    UnknownRegistration = 264,
    UnknownAgentCaps = 265,
    ParseError = 266,
    RequestDenied = 267,
    ProcessingError = 268,
}

impl ErrorStatus {
    pub fn from_u16(v: u16) -> Option<Self> {
        use ErrorStatus::*;
        Some(match v {
            0 => NoError,
            1 => TooBig,
            2 => NoSuchName,
            3 => BadValue,
            4 => ReadOnly,
            5 => GenErr,
            6 => NoAccess,
            7 => WrongType,
            8 => WrongLength,
            9 => WrongEncoding,
            10 => WrongValue,
            11 => NoCreation,
            12 => InconsistentValue,
            13 => ResourceUnavailable,
            14 => CommitFailed,
            15 => UndoFailed,
            16 => AuthorizationError,
            17 => NotWritable,
            18 => InconsistentName,
            256 => OpenFailed,
            257 => NotOpen,
            258 => IndexWrongType,
            259 => IndexAlreadyAllocated,
            260 => IndexNoneAvailable,
            261 => IndexNotAllocated,
            262 => UnsupportedContext,
            263 => DuplicateRegistration,
            264 => UnknownRegistration,
            265 => UnknownAgentCaps,
            266 => ParseError,
            267 => RequestDenied,
            268 => ProcessingError,
            _ => return None,
        })
    }
}

/// What goes into one response varbind.
#[derive(Debug, Clone, Copy)]
pub enum VarValue<'a> {
    Value(&'a Value),
    Null,
    NoSuchObject,
    NoSuchInstance,
    EndOfMibView,
}

/// Ids copied from the request into a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ids {
    pub session_id: u32,
    pub transaction_id: u32,
    pub packet_id: u32,
}
