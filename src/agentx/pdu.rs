//! AgentX PDUs (RFC 2741): the 20-byte header, the decoder for everything the
//! master sends, and the encoders for everything we send.
//!
//! # The trust boundary
//!
//! Every byte snmpd sends passes through [`parse_header`] and [`decode`].
//! Neither panics on any input: all reads go through a bounds-checked cursor,
//! lengths are checked before anything is allocated, OIDs are capped at
//! [`MAX_SUBIDS`] before their `Vec` is made, and no count read from the wire
//! is ever used as a capacity. A payload cannot claim more than
//! [`MAX_PAYLOAD_LEN`], so nothing decoded can be larger than that either.
//!
//! The decoder is strict about structure and lenient about fields the RFC
//! calls reserved: a wrong version, an unknown type, a misaligned or oversized
//! payload, a length that runs past the payload, trailing bytes, an OID longer
//! than 128 sub-identifiers, an unknown value type, an IpAddress that is not
//! four octets or an exception value outside a Response are all errors;
//! reserved bytes, flag bits 5-7, octet-string padding and the `include` byte
//! of OIDs that are not the start of a search range are ignored. Octet strings
//! are raw bytes (no UTF-8 requirement). The payloads of PDU types a master
//! has no business sending to a subagent (Open, Register, Notify, ...) are not
//! interpreted: they decode to [`Incoming::Other`].
//!
//! # Our code and the `agentx` crate
//!
//! Nothing here calls the `agentx` crate at run time. Its 0.1.1 decoder
//! cannot be put at the trust boundary: it overflows `sys_uptime * 10` on a
//! master up for more than 49.7 days, panics re-encoding an OID decoded with
//! a prefix and 251+ sub-identifiers, requires octet strings to be UTF-8, and
//! mis-encodes an IpAddress octet >= 128; it also has no SNMP error codes
//! (notWritable, genErr) and its flag constants are bit numbers, not masks.
//! So the decoder, the Response encoder and the Notify encoder are ours. The
//! administrative PDUs (Open, Register, Ping, Close) could have gone through
//! the crate, but they share every primitive with the Response encoder, so
//! they are encoded here too, into the same reusable buffer.
//!
//! The crate is the reference implementation in the unit tests instead: for
//! everything it handles correctly (Integer, Counter32, Gauge32, TimeTicks,
//! Counter64, ObjectIdentifier, UTF-8 OctetString, Null and the exceptions,
//! and the four administrative PDUs) our bytes must be identical to its bytes,
//! its decoder must read our prefix-compressed OIDs back, and our decoder
//! must read the request PDUs it encodes in either byte order.
//!
//! # What we send
//!
//! Output is always little-endian (`NETWORK_BYTE_ORDER` clear), whatever the
//! request used: RFC 2741 lets every PDU declare its own byte order, net-snmp
//! accepts both, and little-endian is native on the hosts we run on. OIDs
//! starting `1.3.6.1.X` (X in 1..=255) with at least one more sub-identifier
//! are sent prefix-compressed, as net-snmp does; a bare `1.3.6.1.X` is sent
//! plainly so no peer can mistake `n_subid = 0` for the null OID.

use crate::oid::{Oid, MAX_SUBIDS};
use crate::smi::{saturate_u32, Value};

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
const VERSION: u8 = 1;

/// `1.3.6.1`, the "internet" prefix an OID's prefix byte abbreviates.
const INTERNET: [u32; 4] = [1, 3, 6, 1];

/// Value type codes (RFC 2741 5.4).
mod tag {
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

    fn big_endian(&self) -> bool {
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

/// Parse and validate the fixed 20-byte header (version must be 1, type
/// known, payload_len multiple of 4 and <= MAX_PAYLOAD_LEN). Byte order from
/// flags.
pub fn parse_header(bytes: &[u8; HEADER_LEN]) -> Result<Header, PduError> {
    // Destructured, not indexed: nothing here can go out of bounds.
    let [version, pdu_type, flag_bits, _reserved, ids_and_len @ ..] = *bytes;
    let [s0, s1, s2, s3, t0, t1, t2, t3, p0, p1, p2, p3, l0, l1, l2, l3] = ids_and_len;
    if version != VERSION {
        return Err(PduError::BadVersion(version));
    }
    let pdu_type = PduType::from_u8(pdu_type).ok_or(PduError::UnknownType(pdu_type))?;
    let be = flag_bits & flags::NETWORK_BYTE_ORDER != 0;
    let word = |b: [u8; 4]| {
        if be {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    };
    let header = Header {
        pdu_type,
        flags: flag_bits,
        session_id: word([s0, s1, s2, s3]),
        transaction_id: word([t0, t1, t2, t3]),
        packet_id: word([p0, p1, p2, p3]),
        payload_len: word([l0, l1, l2, l3]),
    };
    check_payload_len(header.payload_len)?;
    Ok(header)
}

fn check_payload_len(len: u32) -> Result<(), PduError> {
    if !len.is_multiple_of(4) {
        return Err(PduError::PayloadNotAligned(len));
    }
    if len > MAX_PAYLOAD_LEN {
        return Err(PduError::PayloadTooLarge(len));
    }
    Ok(())
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

/// Decode a payload for a header that [`parse_header`] accepted.
///
/// The payload must be exactly `header.payload_len` bytes and is consumed
/// exactly. See the module documentation for what is checked.
pub fn decode(header: &Header, payload: &[u8]) -> Result<Incoming, PduError> {
    // `Header` has public fields, so do not trust that parse_header made it.
    check_payload_len(header.payload_len)?;
    if u32::try_from(payload.len()).ok() != Some(header.payload_len) {
        return Err(PduError::PayloadLenMismatch {
            declared: header.payload_len,
            actual: payload.len(),
        });
    }
    let mut r = Reader {
        data: payload,
        pos: 0,
        be: header.big_endian(),
    };
    let has_context = header.flags & flags::NON_DEFAULT_CONTEXT != 0;
    let incoming = match header.pdu_type {
        PduType::Get => Incoming::Get {
            context: r.context(has_context)?,
            ranges: r.search_ranges()?,
        },
        PduType::GetNext => Incoming::GetNext {
            context: r.context(has_context)?,
            ranges: r.search_ranges()?,
        },
        PduType::GetBulk => Incoming::GetBulk {
            context: r.context(has_context)?,
            non_repeaters: r.u16("non_repeaters")?,
            max_repetitions: r.u16("max_repetitions")?,
            ranges: r.search_ranges()?,
        },
        PduType::TestSet => Incoming::TestSet {
            context: r.context(has_context)?,
            varbinds: r.varbinds(false)?,
        },
        PduType::CommitSet => Incoming::CommitSet,
        PduType::UndoSet => Incoming::UndoSet,
        PduType::CleanupSet => Incoming::CleanupSet,
        PduType::Close => {
            let [reason, _, _, _] = r.array::<4>("close reason")?;
            Incoming::Close { reason }
        }
        PduType::Response => Incoming::Response {
            sys_uptime: r.u32("sys_uptime")?,
            error: r.u16("error status")?,
            index: r.u16("error index")?,
            varbinds: r.varbinds(true)?,
        },
        other => return Ok(Incoming::Other(other)),
    };
    if r.pos != r.data.len() {
        return Err(PduError::TrailingBytes);
    }
    Ok(incoming)
}

/// A bounds-checked cursor over an untrusted payload.
struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    be: bool,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], PduError> {
        let truncated = PduError::Truncated {
            what,
            offset: self.pos,
        };
        let end = self.pos.checked_add(n).ok_or(truncated.clone())?;
        let bytes = self.data.get(self.pos..end).ok_or(truncated)?;
        self.pos = end;
        Ok(bytes)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], PduError> {
        let offset = self.pos;
        let bytes = self.take(N, what)?;
        <[u8; N]>::try_from(bytes).map_err(|_| PduError::Truncated { what, offset })
    }

    fn at_end(&self) -> bool {
        self.pos >= self.data.len()
    }

    fn u16(&mut self, what: &'static str) -> Result<u16, PduError> {
        let b = self.array(what)?;
        Ok(if self.be {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        })
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, PduError> {
        let b = self.array(what)?;
        Ok(self.word(b))
    }

    fn word(&self, b: [u8; 4]) -> u32 {
        if self.be {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, PduError> {
        let b = self.array(what)?;
        Ok(if self.be {
            u64::from_be_bytes(b)
        } else {
            u64::from_le_bytes(b)
        })
    }

    /// An Object Identifier (RFC 2741 5.1) and its `include` byte.
    fn oid(&mut self, what: &'static str) -> Result<(Oid, bool), PduError> {
        let [n_subid, prefix, include, _reserved] = self.array::<4>(what)?;
        let n_subid = usize::from(n_subid);
        let total = if prefix == 0 { n_subid } else { n_subid + 5 };
        if total > MAX_SUBIDS {
            return Err(PduError::OidTooLong);
        }
        // Check the bytes are there before allocating for them.
        let raw = self.take(n_subid * 4, what)?;
        let mut subids = Vec::with_capacity(total);
        if prefix != 0 {
            subids.extend_from_slice(&INTERNET);
            subids.push(u32::from(prefix));
        }
        for chunk in raw.chunks_exact(4) {
            if let [a, b, c, d] = *chunk {
                subids.push(self.word([a, b, c, d]));
            }
        }
        let oid = Oid::new(subids).map_err(|_| PduError::OidTooLong)?;
        Ok((oid, include != 0))
    }

    /// An Octet String (RFC 2741 5.3): length, octets, padding to 4.
    fn octets(&mut self, what: &'static str) -> Result<&'a [u8], PduError> {
        let offset = self.pos;
        let truncated = PduError::Truncated { what, offset };
        let len = usize::try_from(self.u32(what)?).map_err(|_| truncated.clone())?;
        let padded = len.checked_add(3).ok_or(truncated.clone())? & !3;
        let bytes = self.take(padded, what)?;
        bytes.get(..len).ok_or(truncated)
    }

    fn context(&mut self, present: bool) -> Result<Option<Vec<u8>>, PduError> {
        if present {
            Ok(Some(self.octets("context")?.to_vec()))
        } else {
            Ok(None)
        }
    }

    fn search_ranges(&mut self) -> Result<Vec<SearchRange>, PduError> {
        // Each range is at least 8 bytes, so the payload bounds the count.
        let mut ranges = Vec::new();
        while !self.at_end() {
            let (start, include) = self.oid("search range start")?;
            let (end, _) = self.oid("search range end")?;
            ranges.push(SearchRange {
                start,
                include,
                end,
            });
        }
        Ok(ranges)
    }

    fn varbinds(&mut self, exceptions_allowed: bool) -> Result<Vec<VarBind>, PduError> {
        // Each varbind is at least 8 bytes, so the payload bounds the count.
        let mut varbinds = Vec::new();
        while !self.at_end() {
            varbinds.push(self.varbind(exceptions_allowed)?);
        }
        Ok(varbinds)
    }

    fn varbind(&mut self, exceptions_allowed: bool) -> Result<VarBind, PduError> {
        let ty = self.u16("varbind type")?;
        let _reserved = self.u16("varbind type")?;
        let (name, _) = self.oid("varbind name")?;
        let value = match ty {
            // Two's complement: reinterpret the bits.
            tag::INTEGER => Some(Value::Integer(self.u32("Integer value")? as i32)),
            tag::OCTET_STRING => Some(Value::OctetString(
                self.octets("OctetString value")?.to_vec(),
            )),
            tag::NULL => None,
            tag::OBJECT_IDENTIFIER => Some(Value::ObjectIdentifier(
                self.oid("ObjectIdentifier value")?.0,
            )),
            tag::IP_ADDRESS => {
                let bytes = self.octets("IpAddress value")?;
                let addr = <[u8; 4]>::try_from(bytes)
                    .map_err(|_| PduError::BadIpAddressLen(bytes.len()))?;
                Some(Value::IpAddress(addr))
            }
            tag::COUNTER32 => Some(Value::Counter32(self.u32("Counter32 value")?)),
            tag::GAUGE32 => Some(Value::Gauge32(self.u32("Gauge32 value")?)),
            tag::TIME_TICKS => Some(Value::TimeTicks(self.u32("TimeTicks value")?)),
            tag::OPAQUE => Some(Value::Opaque(self.octets("Opaque value")?.to_vec())),
            tag::COUNTER64 => Some(Value::Counter64(self.u64("Counter64 value")?)),
            tag::NO_SUCH_OBJECT | tag::NO_SUCH_INSTANCE | tag::END_OF_MIB_VIEW => {
                if !exceptions_allowed {
                    return Err(PduError::UnexpectedException(ty));
                }
                None
            }
            other => return Err(PduError::BadValueType(other)),
        };
        Ok(VarBind { name, value })
    }
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

/// Offsets of the fields the encoders patch after the fact.
const PAYLOAD_LEN_AT: usize = 16;
const RESPONSE_ERROR_AT: usize = HEADER_LEN + 4;
const RESPONSE_INDEX_AT: usize = HEADER_LEN + 6;

/// A Response PDU under construction, written straight into `buf` (cleared
/// first), little-endian.
///
/// The header's payload length is patched when the writer is finished or
/// dropped, so the buffer always holds a complete PDU once the writer is
/// gone. A name or OID value longer than [`MAX_SUBIDS`] (only possible
/// through [`Oid::child`]) cannot be sent correctly: the name is cut at
/// `MAX_SUBIDS`, such a value is sent as Null, and the response's error
/// becomes genErr at that varbind unless an error was already set.
pub struct ResponseWriter<'b> {
    buf: &'b mut Vec<u8>,
    count: usize,
    error: ErrorStatus,
}

impl<'b> ResponseWriter<'b> {
    pub fn new(
        buf: &'b mut Vec<u8>,
        ids: Ids,
        sys_uptime: u32,
        error: ErrorStatus,
        index: u16,
    ) -> Self {
        buf.clear();
        put_header(buf, PduType::Response, ids);
        put_u32(buf, sys_uptime);
        put_u16(buf, error as u16);
        put_u16(buf, index);
        ResponseWriter {
            buf,
            count: 0,
            error,
        }
    }

    /// Append one varbind; `SecondsSince` is resolved against `now_unix`.
    pub fn varbind(&mut self, name: &Oid, value: VarValue<'_>, now_unix: u64) {
        self.count = self.count.saturating_add(1);
        if !put_varbind(self.buf, name, value, now_unix) && self.error == ErrorStatus::NoError {
            let index = u16::try_from(self.count).unwrap_or(u16::MAX);
            self.set_error(ErrorStatus::GenErr, index);
        }
    }

    /// Overwrite the error status and index (1-based varbind position, 0 for
    /// none).
    pub fn set_error(&mut self, error: ErrorStatus, index: u16) {
        self.error = error;
        patch(self.buf, RESPONSE_ERROR_AT, &(error as u16).to_le_bytes());
        patch(self.buf, RESPONSE_INDEX_AT, &index.to_le_bytes());
    }

    /// The error status as currently set.
    pub fn error(&self) -> ErrorStatus {
        self.error
    }

    /// How many varbinds have been written.
    pub fn varbind_count(&self) -> usize {
        self.count
    }

    /// Bytes written so far, header included.
    pub fn encoded_len(&self) -> usize {
        self.buf.len()
    }

    /// Patch the payload length in the header (dropping the writer does the
    /// same).
    pub fn finish(self) {}
}

impl Drop for ResponseWriter<'_> {
    fn drop(&mut self) {
        patch_payload_len(self.buf);
    }
}

/// Open PDU (RFC 2741 6.2.1). The session id is 0: the master assigns one.
pub fn encode_open(buf: &mut Vec<u8>, packet_id: u32, timeout_secs: u8, id: &Oid, descr: &str) {
    buf.clear();
    put_header(buf, PduType::Open, ids(0, packet_id));
    buf.extend_from_slice(&[timeout_secs, 0, 0, 0]);
    put_oid(buf, id, false);
    put_octets(buf, descr.as_bytes());
    patch_payload_len(buf);
}

/// Register PDU (RFC 2741 6.2.3) for a whole subtree: no
/// INSTANCE_REGISTRATION flag, range_subid 0, no upper bound, default
/// context.
pub fn encode_register(
    buf: &mut Vec<u8>,
    session_id: u32,
    packet_id: u32,
    timeout_secs: u8,
    priority: u8,
    subtree: &Oid,
) {
    buf.clear();
    put_header(buf, PduType::Register, ids(session_id, packet_id));
    buf.extend_from_slice(&[timeout_secs, priority, 0, 0]);
    put_oid(buf, subtree, false);
    patch_payload_len(buf);
}

/// Ping PDU (RFC 2741 6.2.11), default context.
pub fn encode_ping(buf: &mut Vec<u8>, session_id: u32, packet_id: u32) {
    buf.clear();
    put_header(buf, PduType::Ping, ids(session_id, packet_id));
}

/// Close PDU (RFC 2741 6.2.2); `reason` 1 = reasonOther, 5 = reasonShutdown.
pub fn encode_close(buf: &mut Vec<u8>, session_id: u32, packet_id: u32, reason: u8) {
    buf.clear();
    put_header(buf, PduType::Close, ids(session_id, packet_id));
    buf.extend_from_slice(&[reason, 0, 0, 0]);
    patch_payload_len(buf);
}

/// Notify PDU (RFC 2741 6.2.10), default context. The varbinds must start
/// with sysUpTime.0 and snmpTrapOID.0 (the caller's job). An OID longer than
/// [`MAX_SUBIDS`] is cut at `MAX_SUBIDS` (as a value: sent as Null).
pub fn encode_notify(
    buf: &mut Vec<u8>,
    session_id: u32,
    packet_id: u32,
    varbinds: &[(Oid, Value)],
    now_unix: u64,
) {
    buf.clear();
    put_header(buf, PduType::Notify, ids(session_id, packet_id));
    for (name, value) in varbinds {
        put_varbind(buf, name, VarValue::Value(value), now_unix);
    }
    patch_payload_len(buf);
}

fn ids(session_id: u32, packet_id: u32) -> Ids {
    Ids {
        session_id,
        transaction_id: 0,
        packet_id,
    }
}

fn put_u16(buf: &mut Vec<u8>, v: u16) {
    buf.extend_from_slice(&v.to_le_bytes());
}

fn put_u32(buf: &mut Vec<u8>, v: u32) {
    buf.extend_from_slice(&v.to_le_bytes());
}

/// Header with payload_len 0, little-endian, no flags.
fn put_header(buf: &mut Vec<u8>, pdu_type: PduType, ids: Ids) {
    buf.reserve(64);
    buf.extend_from_slice(&[VERSION, pdu_type as u8, 0, 0]);
    put_u32(buf, ids.session_id);
    put_u32(buf, ids.transaction_id);
    put_u32(buf, ids.packet_id);
    put_u32(buf, 0);
}

fn patch(buf: &mut [u8], at: usize, bytes: &[u8]) {
    let end = at.saturating_add(bytes.len());
    if let Some(slot) = buf.get_mut(at..end) {
        slot.copy_from_slice(bytes);
    }
}

fn patch_payload_len(buf: &mut [u8]) {
    let len = u32::try_from(buf.len().saturating_sub(HEADER_LEN)).unwrap_or(u32::MAX);
    patch(buf, PAYLOAD_LEN_AT, &len.to_le_bytes());
}

/// Encode an OID, prefix-compressed when possible. Returns false when it had
/// to be cut at `MAX_SUBIDS`.
fn put_oid(buf: &mut Vec<u8>, oid: &Oid, include: bool) -> bool {
    let all = oid.as_slice();
    let subids = all.get(..MAX_SUBIDS).unwrap_or(all);
    let (prefix, rest) = match subids {
        [1, 3, 6, 1, p, rest @ ..] if !rest.is_empty() => match u8::try_from(*p) {
            Ok(p) if p != 0 => (p, rest),
            _ => (0, subids),
        },
        _ => (0, subids),
    };
    // rest.len() <= MAX_SUBIDS = 128, so this never saturates.
    let n_subid = u8::try_from(rest.len()).unwrap_or(u8::MAX);
    buf.reserve(4 + 4 * rest.len());
    buf.extend_from_slice(&[n_subid, prefix, u8::from(include), 0]);
    for &subid in rest {
        put_u32(buf, subid);
    }
    subids.len() == all.len()
}

fn put_octets(buf: &mut Vec<u8>, bytes: &[u8]) {
    // A u32 length cannot describe more; unreachable in practice.
    let bytes = bytes.get(..u32::MAX as usize).unwrap_or(bytes);
    let len = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
    let pad = (4 - bytes.len() % 4) % 4;
    buf.reserve(4 + bytes.len() + pad);
    put_u32(buf, len);
    buf.extend_from_slice(bytes);
    buf.extend_from_slice([0u8; 3].get(..pad).unwrap_or(&[]));
}

/// Type, reserved, name. Returns false if the name was cut.
fn put_varbind_head(buf: &mut Vec<u8>, ty: u16, name: &Oid) -> bool {
    put_u16(buf, ty);
    put_u16(buf, 0);
    put_oid(buf, name, false)
}

/// One varbind. Returns false if anything had to be cut (see
/// [`ResponseWriter`]).
fn put_varbind(buf: &mut Vec<u8>, name: &Oid, value: VarValue<'_>, now_unix: u64) -> bool {
    let value = match value {
        VarValue::Value(v) => v,
        VarValue::Null => return put_varbind_head(buf, tag::NULL, name),
        VarValue::NoSuchObject => return put_varbind_head(buf, tag::NO_SUCH_OBJECT, name),
        VarValue::NoSuchInstance => return put_varbind_head(buf, tag::NO_SUCH_INSTANCE, name),
        VarValue::EndOfMibView => return put_varbind_head(buf, tag::END_OF_MIB_VIEW, name),
    };
    let value = value.resolve(now_unix);
    let fixed = |buf: &mut Vec<u8>, ty: u16, data: &[u8]| {
        let ok = put_varbind_head(buf, ty, name);
        buf.extend_from_slice(data);
        ok
    };
    match &*value {
        Value::Integer(v) => fixed(buf, tag::INTEGER, &v.to_le_bytes()),
        Value::Counter32(v) => fixed(buf, tag::COUNTER32, &v.to_le_bytes()),
        Value::Gauge32(v) => fixed(buf, tag::GAUGE32, &v.to_le_bytes()),
        Value::TimeTicks(v) => fixed(buf, tag::TIME_TICKS, &v.to_le_bytes()),
        Value::Counter64(v) => fixed(buf, tag::COUNTER64, &v.to_le_bytes()),
        // `resolve` has already made this a Gauge32; the arm keeps the match total.
        Value::SecondsSince(then) => {
            let age = saturate_u32(now_unix.saturating_sub(*then));
            fixed(buf, tag::GAUGE32, &age.to_le_bytes())
        }
        Value::OctetString(bytes) => {
            let ok = put_varbind_head(buf, tag::OCTET_STRING, name);
            put_octets(buf, bytes);
            ok
        }
        Value::Opaque(bytes) => {
            let ok = put_varbind_head(buf, tag::OPAQUE, name);
            put_octets(buf, bytes);
            ok
        }
        Value::IpAddress(addr) => {
            let ok = put_varbind_head(buf, tag::IP_ADDRESS, name);
            put_octets(buf, addr);
            ok
        }
        Value::ObjectIdentifier(oid) if oid.len() > MAX_SUBIDS => {
            put_varbind_head(buf, tag::NULL, name);
            false
        }
        Value::ObjectIdentifier(oid) => {
            let ok = put_varbind_head(buf, tag::OBJECT_IDENTIFIER, name);
            put_oid(buf, oid, false) && ok
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // ----- an independent encoder for what the master sends, either byte order -----

    struct W {
        be: bool,
        buf: Vec<u8>,
    }

    impl W {
        fn new(be: bool, ty: u8, flags: u8, sid: u32, tid: u32, pid: u32) -> W {
            let mut w = W {
                be,
                buf: Vec::new(),
            };
            let order = if be { flags::NETWORK_BYTE_ORDER } else { 0 };
            w.buf.extend_from_slice(&[1, ty, flags | order, 0]);
            w.u32(sid);
            w.u32(tid);
            w.u32(pid);
            w.u32(0);
            w
        }
        fn bytes(&mut self, b: &[u8]) -> &mut Self {
            self.buf.extend_from_slice(b);
            self
        }
        fn u16(&mut self, v: u16) -> &mut Self {
            let b = if self.be {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            };
            self.bytes(&b)
        }
        fn u32(&mut self, v: u32) -> &mut Self {
            let b = if self.be {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            };
            self.bytes(&b)
        }
        fn u64(&mut self, v: u64) -> &mut Self {
            let b = if self.be {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            };
            self.bytes(&b)
        }
        /// `prefix` 0 writes the sub-ids plainly, else `subids` follow 1.3.6.1.prefix.
        fn oid_raw(&mut self, prefix: u8, subids: &[u32], include: bool) -> &mut Self {
            self.bytes(&[subids.len() as u8, prefix, include as u8, 0]);
            for &s in subids {
                self.u32(s);
            }
            self
        }
        fn oid(&mut self, subids: &[u32], include: bool, compress: bool) -> &mut Self {
            match subids {
                [1, 3, 6, 1, p @ 1..=255, rest @ ..] if compress => {
                    self.oid_raw(*p as u8, rest, include)
                }
                _ => self.oid_raw(0, subids, include),
            }
        }
        fn octets(&mut self, b: &[u8]) -> &mut Self {
            self.u32(b.len() as u32).bytes(b);
            while !self.buf.len().is_multiple_of(4) {
                self.buf.push(0);
            }
            self
        }
        fn vb(&mut self, ty: u16, name: &[u32]) -> &mut Self {
            self.u16(ty).u16(0).oid(name, false, true)
        }
        fn done(&mut self) -> Vec<u8> {
            let len = (self.buf.len() - HEADER_LEN) as u32;
            let b = if self.be {
                len.to_be_bytes()
            } else {
                len.to_le_bytes()
            };
            self.buf[16..20].copy_from_slice(&b);
            self.buf.clone()
        }
    }

    fn head(bytes: &[u8]) -> Result<Header, PduError> {
        parse_header(bytes[..HEADER_LEN].try_into().unwrap())
    }

    fn parse(bytes: &[u8]) -> Result<Incoming, PduError> {
        decode(&head(bytes)?, &bytes[HEADER_LEN..])
    }

    fn oid(s: &[u32]) -> Oid {
        Oid::new(s.to_vec()).unwrap()
    }

    const REDIS: [u32; 8] = [1, 3, 6, 1, 4, 1, 20267, 400];

    fn redis(suffix: &[u32]) -> Oid {
        oid(&REDIS).child(suffix)
    }

    fn ids() -> Ids {
        Ids {
            session_id: 7,
            transaction_id: 8,
            packet_id: 9,
        }
    }

    fn response(
        error: ErrorStatus,
        index: u16,
        varbinds: &[(Oid, VarValue<'_>)],
        now: u64,
    ) -> Vec<u8> {
        let mut buf = Vec::new();
        let mut w = ResponseWriter::new(&mut buf, ids(), 4242, error, index);
        for (name, value) in varbinds {
            w.varbind(name, *value, now);
        }
        w.finish();
        buf
    }

    fn response_varbinds(bytes: &[u8]) -> Vec<VarBind> {
        match parse(bytes) {
            Ok(Incoming::Response { varbinds, .. }) => varbinds,
            other => panic!("not a response: {other:?}"),
        }
    }

    // ----- the header -----

    #[test]
    fn header_fields_in_both_byte_orders() {
        for be in [false, true] {
            let pdu = W::new(
                be,
                5,
                flags::NON_DEFAULT_CONTEXT,
                0x0102_0304,
                0xa0b0_c0d0,
                u32::MAX,
            )
            .bytes(&[0; 8])
            .done();
            let h = head(&pdu).unwrap();
            assert_eq!(h.pdu_type, PduType::Get);
            assert_eq!(h.session_id, 0x0102_0304);
            assert_eq!(h.transaction_id, 0xa0b0_c0d0);
            assert_eq!(h.packet_id, u32::MAX);
            assert_eq!(h.payload_len, 8);
            assert_eq!(
                h.flags & flags::NON_DEFAULT_CONTEXT,
                flags::NON_DEFAULT_CONTEXT
            );
            assert_eq!(h.flags & flags::NETWORK_BYTE_ORDER != 0, be);
            assert_eq!(
                h.ids(),
                Ids {
                    session_id: 0x0102_0304,
                    transaction_id: 0xa0b0_c0d0,
                    packet_id: u32::MAX
                }
            );
        }
    }

    #[test]
    fn header_rejects_bad_version() {
        for v in [0u8, 2, 255] {
            let mut pdu = W::new(false, 5, 0, 1, 2, 3).done();
            pdu[0] = v;
            assert_eq!(head(&pdu), Err(PduError::BadVersion(v)));
        }
    }

    #[test]
    fn header_accepts_every_known_type_and_rejects_the_rest() {
        for t in 0..=255u8 {
            let pdu = W::new(false, t, 0, 1, 2, 3).done();
            match (t, head(&pdu)) {
                (1..=18, Ok(h)) => assert_eq!(h.pdu_type as u8, t),
                (1..=18, Err(e)) => panic!("type {t} refused: {e}"),
                (_, r) => assert_eq!(r, Err(PduError::UnknownType(t))),
            }
        }
    }

    #[test]
    fn header_rejects_unaligned_and_oversized_payloads() {
        for be in [false, true] {
            let mut pdu = W::new(be, 5, 0, 1, 2, 3).done();
            let mut set_len = |len: u32| {
                let b = if be {
                    len.to_be_bytes()
                } else {
                    len.to_le_bytes()
                };
                pdu[16..20].copy_from_slice(&b);
                head(&pdu)
            };
            for bad in [1, 2, 3, 5, 1023, MAX_PAYLOAD_LEN - 1, u32::MAX] {
                assert_eq!(set_len(bad), Err(PduError::PayloadNotAligned(bad)));
            }
            for big in [MAX_PAYLOAD_LEN + 4, u32::MAX - 3] {
                assert_eq!(set_len(big), Err(PduError::PayloadTooLarge(big)));
            }
            assert_eq!(
                set_len(MAX_PAYLOAD_LEN).unwrap().payload_len,
                MAX_PAYLOAD_LEN
            );
            assert_eq!(set_len(0).unwrap().payload_len, 0);
        }
    }

    #[test]
    fn decode_refuses_a_payload_of_the_wrong_length() {
        let pdu = W::new(false, 9, 0, 1, 2, 3).done();
        let h = head(&pdu).unwrap();
        assert_eq!(
            decode(&h, &[0; 4]),
            Err(PduError::PayloadLenMismatch {
                declared: 0,
                actual: 4
            })
        );
        // A hand-made header is re-checked, not trusted.
        let forged = Header {
            payload_len: 6,
            ..h
        };
        assert_eq!(
            decode(&forged, &[0; 6]),
            Err(PduError::PayloadNotAligned(6))
        );
    }

    // ----- decoding what the master sends -----

    #[test]
    fn decodes_get_getnext_getbulk_in_both_byte_orders() {
        let a = redis(&[1, 1, 0]);
        let b = oid(&[1, 3, 6, 1, 2, 1, 1, 3, 0]);
        for be in [false, true] {
            for compress in [false, true] {
                let ranges = vec![
                    SearchRange {
                        start: a.clone(),
                        include: true,
                        end: Oid::null(),
                    },
                    SearchRange {
                        start: b.clone(),
                        include: false,
                        end: redis(&[2]),
                    },
                ];
                let write_ranges = |w: &mut W| {
                    for r in &ranges {
                        w.oid(r.start.as_slice(), r.include, compress);
                        w.oid(r.end.as_slice(), false, compress);
                    }
                };
                let mut w = W::new(be, 5, 0, 1, 2, 3);
                write_ranges(&mut w);
                assert_eq!(
                    parse(&w.done()).unwrap(),
                    Incoming::Get {
                        context: None,
                        ranges: ranges.clone()
                    }
                );
                let mut w = W::new(be, 6, 0, 1, 2, 3);
                write_ranges(&mut w);
                assert_eq!(
                    parse(&w.done()).unwrap(),
                    Incoming::GetNext {
                        context: None,
                        ranges: ranges.clone()
                    }
                );
                let mut w = W::new(be, 7, 0, 1, 2, 3);
                w.u16(1).u16(0x1234);
                write_ranges(&mut w);
                assert_eq!(
                    parse(&w.done()).unwrap(),
                    Incoming::GetBulk {
                        context: None,
                        non_repeaters: 1,
                        max_repetitions: 0x1234,
                        ranges: ranges.clone()
                    }
                );
            }
        }
    }

    #[test]
    fn decodes_testset_values_of_every_type_in_both_byte_orders() {
        for be in [false, true] {
            let pdu = W::new(be, 8, 0, 1, 2, 3)
                .vb(2, &[1, 3, 6, 1, 4, 1, 1])
                .u32(-7i32 as u32)
                .vb(4, &[1, 2])
                .octets(&[0xff, 0xfe, 0, 0x80, 0xc3])
                .vb(5, &[1, 3])
                .vb(6, &[1, 4])
                .oid(&[1, 3, 6, 1, 6, 3, 1, 1, 5, 1], false, true)
                .vb(64, &[1, 5])
                .octets(&[192, 168, 200, 255])
                .vb(65, &[1, 6])
                .u32(u32::MAX)
                .vb(66, &[1, 7])
                .u32(0x8000_0000)
                .vb(67, &[1, 8])
                .u32(123_456)
                .vb(68, &[1, 9])
                .octets(&[0x9f, 0x78, 4, 0x44, 0x33, 0x22, 0x11])
                .vb(70, &[1, 10])
                .u64(0x0102_0304_0506_0708)
                .done();
            let expect = vec![
                (oid(&[1, 3, 6, 1, 4, 1, 1]), Some(Value::Integer(-7))),
                (
                    oid(&[1, 2]),
                    Some(Value::OctetString(vec![0xff, 0xfe, 0, 0x80, 0xc3])),
                ),
                (oid(&[1, 3]), None),
                (
                    oid(&[1, 4]),
                    Some(Value::ObjectIdentifier(oid(&[
                        1, 3, 6, 1, 6, 3, 1, 1, 5, 1,
                    ]))),
                ),
                (oid(&[1, 5]), Some(Value::IpAddress([192, 168, 200, 255]))),
                (oid(&[1, 6]), Some(Value::Counter32(u32::MAX))),
                (oid(&[1, 7]), Some(Value::Gauge32(0x8000_0000))),
                (oid(&[1, 8]), Some(Value::TimeTicks(123_456))),
                (
                    oid(&[1, 9]),
                    Some(Value::Opaque(vec![0x9f, 0x78, 4, 0x44, 0x33, 0x22, 0x11])),
                ),
                (oid(&[1, 10]), Some(Value::Counter64(0x0102_0304_0506_0708))),
            ];
            let expect: Vec<VarBind> = expect
                .into_iter()
                .map(|(name, value)| VarBind { name, value })
                .collect();
            assert_eq!(
                parse(&pdu).unwrap(),
                Incoming::TestSet {
                    context: None,
                    varbinds: expect
                }
            );
        }
    }

    #[test]
    fn decodes_set_phases_close_and_other_types() {
        for be in [false, true] {
            assert_eq!(
                parse(&W::new(be, 9, 0, 1, 2, 3).done()),
                Ok(Incoming::CommitSet)
            );
            assert_eq!(
                parse(&W::new(be, 10, 0, 1, 2, 3).done()),
                Ok(Incoming::UndoSet)
            );
            assert_eq!(
                parse(&W::new(be, 11, 0, 1, 2, 3).done()),
                Ok(Incoming::CleanupSet)
            );
            assert_eq!(
                parse(&W::new(be, 9, 0, 1, 2, 3).bytes(&[0; 4]).done()),
                Err(PduError::TrailingBytes)
            );
            assert_eq!(
                parse(&W::new(be, 2, 0, 1, 2, 3).bytes(&[5, 0, 0, 0]).done()),
                Ok(Incoming::Close { reason: 5 })
            );
            assert!(matches!(
                parse(&W::new(be, 2, 0, 1, 2, 3).done()),
                Err(PduError::Truncated { .. })
            ));
            assert_eq!(
                parse(
                    &W::new(be, 2, 0, 1, 2, 3)
                        .bytes(&[1, 0, 0, 0, 0, 0, 0, 0])
                        .done()
                ),
                Err(PduError::TrailingBytes)
            );
            for (t, ty) in [
                (1, PduType::Open),
                (3, PduType::Register),
                (4, PduType::Unregister),
                (12, PduType::Notify),
                (13, PduType::Ping),
                (14, PduType::IndexAllocate),
                (15, PduType::IndexDeallocate),
                (16, PduType::AddAgentCaps),
                (17, PduType::RemoveAgentCaps),
            ] {
                let pdu = W::new(be, t, 0, 1, 2, 3).bytes(&[0xee; 12]).done();
                assert_eq!(parse(&pdu), Ok(Incoming::Other(ty)));
            }
        }
    }

    #[test]
    fn context_flag_adds_a_context_to_the_pdus_that_carry_one() {
        let ctx = [0xffu8, b'c', 0x00, 0x80, b'x'];
        for be in [false, true] {
            let pdu = W::new(be, 5, flags::NON_DEFAULT_CONTEXT, 1, 2, 3)
                .octets(&ctx)
                .oid(&[1, 3, 6, 1, 4, 1, 1], false, true)
                .oid(&[], false, false)
                .done();
            assert_eq!(
                parse(&pdu).unwrap(),
                Incoming::Get {
                    context: Some(ctx.to_vec()),
                    ranges: vec![SearchRange {
                        start: oid(&[1, 3, 6, 1, 4, 1, 1]),
                        include: false,
                        end: Oid::null()
                    }]
                }
            );
            let pdu = W::new(be, 7, flags::NON_DEFAULT_CONTEXT, 1, 2, 3)
                .octets(b"")
                .u16(0)
                .u16(10)
                .done();
            assert_eq!(
                parse(&pdu).unwrap(),
                Incoming::GetBulk {
                    context: Some(Vec::new()),
                    non_repeaters: 0,
                    max_repetitions: 10,
                    ranges: vec![]
                }
            );
            let pdu = W::new(be, 8, flags::NON_DEFAULT_CONTEXT, 1, 2, 3)
                .octets(b"abcd")
                .vb(5, &[1, 2])
                .done();
            assert_eq!(
                parse(&pdu).unwrap(),
                Incoming::TestSet {
                    context: Some(b"abcd".to_vec()),
                    varbinds: vec![VarBind {
                        name: oid(&[1, 2]),
                        value: None
                    }]
                }
            );
            // The flag says a context follows; without one the PDU is short.
            let pdu = W::new(be, 6, flags::NON_DEFAULT_CONTEXT, 1, 2, 3).done();
            assert!(matches!(parse(&pdu), Err(PduError::Truncated { .. })));
            // PDUs without a context field ignore the flag.
            let pdu = W::new(be, 9, flags::NON_DEFAULT_CONTEXT, 1, 2, 3).done();
            assert_eq!(parse(&pdu), Ok(Incoming::CommitSet));
            let pdu = W::new(be, 18, flags::NON_DEFAULT_CONTEXT, 1, 2, 3)
                .u32(1)
                .u16(0)
                .u16(0)
                .done();
            assert!(matches!(parse(&pdu), Ok(Incoming::Response { .. })));
        }
    }

    #[test]
    fn decodes_a_response_with_the_largest_uptime() {
        for be in [false, true] {
            let pdu = W::new(be, 18, 0, 1, 2, 3)
                .u32(u32::MAX)
                .u16(ErrorStatus::DuplicateRegistration as u16)
                .u16(1)
                .vb(128, &[1, 1])
                .vb(129, &[1, 2])
                .vb(130, &[1, 3])
                .vb(66, &[1, 4])
                .u32(5)
                .done();
            let none = |s: &[u32]| VarBind {
                name: oid(s),
                value: None,
            };
            assert_eq!(
                parse(&pdu).unwrap(),
                Incoming::Response {
                    sys_uptime: u32::MAX,
                    error: 263,
                    index: 1,
                    varbinds: vec![
                        none(&[1, 1]),
                        none(&[1, 2]),
                        none(&[1, 3]),
                        VarBind {
                            name: oid(&[1, 4]),
                            value: Some(Value::Gauge32(5))
                        }
                    ]
                }
            );
        }
    }

    #[test]
    fn refuses_bad_value_types_exceptions_outside_responses_and_bad_ip_lengths() {
        for be in [false, true] {
            for ty in [0u16, 1, 3, 7, 63, 69, 71, 127, 131, 0xffff] {
                let pdu = W::new(be, 8, 0, 1, 2, 3).vb(ty, &[1]).u64(0).done();
                assert_eq!(parse(&pdu), Err(PduError::BadValueType(ty)));
            }
            for ty in [128u16, 129, 130] {
                let pdu = W::new(be, 8, 0, 1, 2, 3).vb(ty, &[1]).done();
                assert_eq!(parse(&pdu), Err(PduError::UnexpectedException(ty)));
            }
            for len in [0usize, 3, 5, 16] {
                let pdu = W::new(be, 8, 0, 1, 2, 3)
                    .vb(64, &[1])
                    .octets(&vec![9; len])
                    .done();
                assert_eq!(parse(&pdu), Err(PduError::BadIpAddressLen(len)));
            }
        }
    }

    #[test]
    fn refuses_lengths_that_run_past_the_payload() {
        for be in [false, true] {
            // An octet string claiming 4 GiB.
            let pdu = W::new(be, 8, 0, 1, 2, 3).vb(4, &[1]).u32(u32::MAX).done();
            assert!(matches!(parse(&pdu), Err(PduError::Truncated { .. })));
            // Padding missing.
            let pdu = W::new(be, 8, 0, 1, 2, 3)
                .vb(4, &[1])
                .u32(5)
                .bytes(&[1, 2, 3, 4])
                .done();
            assert!(matches!(parse(&pdu), Err(PduError::Truncated { .. })));
            // An OID claiming more sub-ids than follow.
            let pdu = W::new(be, 5, 0, 1, 2, 3)
                .bytes(&[100, 0, 0, 0])
                .u32(1)
                .done();
            assert!(matches!(parse(&pdu), Err(PduError::Truncated { .. })));
            // A varbind cut in its value.
            let pdu = W::new(be, 8, 0, 1, 2, 3).vb(70, &[1]).u32(1).done();
            assert!(matches!(parse(&pdu), Err(PduError::Truncated { .. })));
        }
    }

    // ----- OIDs and the prefix byte -----

    #[test]
    fn oid_length_limits_with_and_without_prefix() {
        let body = |n: usize| (0..n as u32).collect::<Vec<_>>();
        for be in [false, true] {
            // prefix + 123 = 128 sub-ids: accepted, and re-encoded without loss.
            let pdu = W::new(be, 6, 0, 1, 2, 3)
                .oid_raw(4, &body(123), true)
                .oid_raw(0, &[], false)
                .done();
            let Ok(Incoming::GetNext { ranges, .. }) = parse(&pdu) else {
                panic!("prefix+123 refused");
            };
            assert_eq!(ranges[0].start.len(), MAX_SUBIDS);
            assert_eq!(&ranges[0].start.as_slice()[..5], &[1, 3, 6, 1, 4]);
            let out = response(
                ErrorStatus::NoError,
                0,
                &[(ranges[0].start.clone(), VarValue::Null)],
                0,
            );
            assert_eq!(response_varbinds(&out)[0].name, ranges[0].start);

            // One more, either way, is refused before anything is allocated.
            for (prefix, n) in [(4u8, 124usize), (1, 251), (255, 255), (0, 129), (0, 255)] {
                let pdu = W::new(be, 6, 0, 1, 2, 3)
                    .oid_raw(prefix, &body(n), false)
                    .oid_raw(0, &[], false)
                    .done();
                assert_eq!(
                    parse(&pdu),
                    Err(PduError::OidTooLong),
                    "prefix {prefix} n {n}"
                );
            }
            // Plain 128 is fine.
            let pdu = W::new(be, 6, 0, 1, 2, 3)
                .oid_raw(0, &body(128), false)
                .oid_raw(0, &[], false)
                .done();
            assert!(parse(&pdu).is_ok());
            // The same limit holds for an OID value.
            let pdu = W::new(be, 18, 0, 1, 2, 3)
                .u32(0)
                .u16(0)
                .u16(0)
                .vb(6, &[1])
                .oid_raw(2, &body(251), false)
                .done();
            assert_eq!(parse(&pdu), Err(PduError::OidTooLong));
        }
    }

    #[test]
    fn prefix_and_plain_encodings_decode_alike() {
        let full = [1, 3, 6, 1, 4, 1, 20267, 400, 1, 1, 0];
        for be in [false, true] {
            let plain = W::new(be, 6, 0, 1, 2, 3)
                .oid_raw(0, &full, false)
                .oid_raw(0, &[], false)
                .done();
            let packed = W::new(be, 6, 0, 1, 2, 3)
                .oid_raw(4, &full[5..], false)
                .oid_raw(0, &[], false)
                .done();
            assert_eq!(parse(&plain).unwrap(), parse(&packed).unwrap());
            // n_subid 0 with a prefix is 1.3.6.1.X, not the null OID.
            let bare = W::new(be, 6, 0, 1, 2, 3)
                .oid_raw(2, &[], false)
                .oid_raw(0, &[], false)
                .done();
            let Ok(Incoming::GetNext { ranges, .. }) = parse(&bare) else {
                panic!()
            };
            assert_eq!(ranges[0].start, oid(&[1, 3, 6, 1, 2]));
        }
    }

    #[test]
    fn encoder_compresses_only_what_it_may() {
        let cases: [(&[u32], u8, usize); 7] = [
            (&[1, 3, 6, 1, 4, 1, 20267], 4, 2),
            (&[1, 3, 6, 1, 255, 9], 255, 1),
            (&[1, 3, 6, 1, 4], 0, 5), // bare prefix: plain, never n_subid 0
            (&[1, 3, 6, 1, 0, 9], 0, 6), // prefix 0 means "no prefix"
            (&[1, 3, 6, 1, 256, 9], 0, 6), // does not fit a byte
            (&[1, 3, 6, 2, 4, 9], 0, 6),
            (&[], 0, 0),
        ];
        for (subids, prefix, n) in cases {
            let mut buf = Vec::new();
            assert!(put_oid(&mut buf, &oid(subids), false));
            assert_eq!(&buf[..4], &[n as u8, prefix, 0, 0], "{subids:?}");
            assert_eq!(buf.len(), 4 + 4 * n);
        }
    }

    #[test]
    fn overlong_oids_from_child_never_panic_and_set_generr() {
        // Oid::child does not enforce MAX_SUBIDS: the encoder must cope.
        let long = oid(&[1, 3, 6, 1, 4, 1]).child(&[7; 300]);
        assert!(long.len() > 255);
        let ok_value = Value::Integer(1);
        let long_value = Value::ObjectIdentifier(long.clone());
        let out = response(
            ErrorStatus::NoError,
            0,
            &[
                (oid(&[1, 1]), VarValue::Value(&ok_value)),
                (long.clone(), VarValue::Value(&ok_value)),
                (oid(&[1, 3]), VarValue::Value(&long_value)),
            ],
            0,
        );
        let Incoming::Response {
            error,
            index,
            varbinds,
            ..
        } = parse(&out).unwrap()
        else {
            panic!()
        };
        assert_eq!((error, index), (ErrorStatus::GenErr as u16, 2));
        assert_eq!(varbinds[1].name.as_slice(), &long.as_slice()[..MAX_SUBIDS]);
        assert_eq!(varbinds[2].value, None);
        // Already-set errors are kept.
        let out = response(
            ErrorStatus::TooBig,
            0,
            &[(oid(&[1]), VarValue::Value(&long_value))],
            0,
        );
        assert!(matches!(
            parse(&out),
            Ok(Incoming::Response {
                error: 1,
                index: 0,
                ..
            })
        ));
        // Notify and Register cut too, and stay decodable.
        let mut buf = Vec::new();
        encode_notify(&mut buf, 1, 2, &[(long.clone(), long_value.clone())], 0);
        assert_eq!(
            head(&buf).unwrap().payload_len as usize,
            buf.len() - HEADER_LEN
        );
        encode_register(&mut buf, 1, 2, 0, 127, &long);
        assert_eq!(
            head(&buf).unwrap().payload_len as usize,
            buf.len() - HEADER_LEN
        );
    }

    // ----- encoding responses -----

    #[test]
    fn response_round_trips_every_value() {
        let values = [
            Value::Integer(i32::MIN),
            Value::Integer(-1),
            Value::OctetString(b"hello".to_vec()),
            Value::ObjectIdentifier(redis(&[9, 9])),
            Value::ObjectIdentifier(Oid::null()),
            Value::IpAddress([10, 0, 0, 1]),
            Value::Counter32(u32::MAX),
            Value::Gauge32(0),
            Value::TimeTicks(u32::MAX),
            Value::Opaque(vec![0x9f, 0x78, 4, 0x3f, 0x80, 0, 0]),
            Value::Counter64(u64::MAX),
        ];
        let mut items: Vec<(Oid, VarValue<'_>)> = values
            .iter()
            .enumerate()
            .map(|(i, v)| (redis(&[1, i as u32 + 1, 0]), VarValue::Value(v)))
            .collect();
        items.push((redis(&[2]), VarValue::Null));
        items.push((redis(&[3]), VarValue::NoSuchObject));
        items.push((redis(&[4]), VarValue::NoSuchInstance));
        items.push((redis(&[5]), VarValue::EndOfMibView));
        let out = response(ErrorStatus::NoError, 0, &items, 0);
        let h = head(&out).unwrap();
        assert_eq!(h.pdu_type, PduType::Response);
        assert_eq!(h.ids(), ids());
        assert_eq!(h.flags, 0);
        assert_eq!(h.payload_len as usize, out.len() - HEADER_LEN);
        let got = response_varbinds(&out);
        assert_eq!(got.len(), items.len());
        for (vb, (name, value)) in got.iter().zip(&items) {
            assert_eq!(&vb.name, name);
            match value {
                VarValue::Value(v) => assert_eq!(vb.value.as_ref(), Some(*v)),
                _ => assert_eq!(vb.value, None),
            }
        }
        // The exception codes are on the wire.
        let tail_types: Vec<u16> = {
            let mut types = Vec::new();
            for (name, value) in &items[items.len() - 4..] {
                let mut b = Vec::new();
                put_varbind(&mut b, name, *value, 0);
                types.push(u16::from_le_bytes([b[0], b[1]]));
            }
            types
        };
        assert_eq!(tail_types, [5, 128, 129, 130]);
    }

    #[test]
    fn seconds_since_is_resolved_as_gauge32() {
        let now = 1_700_000_000;
        let cases = [
            (now - 600, 600u32),
            (now + 5, 0), // clock went back: no underflow
            (0, now as u32),
        ];
        for (then, age) in cases {
            let v = Value::SecondsSince(then);
            let out = response(
                ErrorStatus::NoError,
                0,
                &[(oid(&[1]), VarValue::Value(&v))],
                now,
            );
            assert_eq!(response_varbinds(&out)[0].value, Some(Value::Gauge32(age)));
        }
        let v = Value::SecondsSince(0);
        let out = response(
            ErrorStatus::NoError,
            0,
            &[(oid(&[1]), VarValue::Value(&v))],
            u64::MAX,
        );
        assert_eq!(
            response_varbinds(&out)[0].value,
            Some(Value::Gauge32(u32::MAX))
        );
        let mut buf = Vec::new();
        encode_notify(
            &mut buf,
            1,
            2,
            &[(oid(&[1]), Value::SecondsSince(now - 60))],
            now,
        );
        assert_eq!(&buf[buf.len() - 4..], &60u32.to_le_bytes());
        assert_eq!(u16::from_le_bytes([buf[20], buf[21]]), 66);
    }

    #[test]
    fn octet_strings_are_binary_and_padded() {
        for len in 0..=9usize {
            let bytes: Vec<u8> = (0..len).map(|i| 0xf8u8.wrapping_add(i as u8)).collect();
            assert!(len < 2 || std::str::from_utf8(&bytes).is_err());
            let v = Value::OctetString(bytes.clone());
            let out = response(
                ErrorStatus::NoError,
                0,
                &[(oid(&[1, 2]), VarValue::Value(&v))],
                0,
            );
            // header 20 + fixed 8 + vb head 4 + name 4+8 + length 4 + padded octets
            let padded = len.div_ceil(4) * 4;
            assert_eq!(out.len(), 20 + 8 + 4 + 12 + 4 + padded);
            let at = 20 + 8 + 4 + 12;
            assert_eq!(&out[at..at + 4], &(len as u32).to_le_bytes());
            assert_eq!(&out[at + 4..at + 4 + len], &bytes[..]);
            assert!(
                out[at + 4 + len..].iter().all(|&b| b == 0),
                "padding not zero"
            );
            assert_eq!(response_varbinds(&out)[0].value, Some(v));
        }
        // Non-zero padding from a peer is tolerated.
        let pdu = W::new(false, 8, 0, 1, 2, 3)
            .vb(4, &[1])
            .u32(1)
            .bytes(&[b'a', 0xff, 0xff, 0xff])
            .done();
        let Ok(Incoming::TestSet { varbinds, .. }) = parse(&pdu) else {
            panic!()
        };
        assert_eq!(varbinds[0].value, Some(Value::OctetString(b"a".to_vec())));
    }

    #[test]
    fn ip_address_bytes_are_exact() {
        let v = Value::IpAddress([192, 168, 200, 255]);
        let mut buf = Vec::new();
        assert!(put_varbind(&mut buf, &oid(&[1, 2]), VarValue::Value(&v), 0));
        assert_eq!(
            buf,
            [
                64, 0, 0, 0, // type IpAddress, reserved
                2, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, // name 1.2
                4, 0, 0, 0, 192, 168, 200, 255, // 4 octets
            ]
        );
    }

    #[test]
    fn error_codes_are_on_the_wire() {
        let v = Value::Integer(1);
        let mut buf = Vec::new();
        let mut w = ResponseWriter::new(&mut buf, ids(), 1, ErrorStatus::NotWritable, 1);
        w.varbind(&oid(&[1]), VarValue::Value(&v), 0);
        assert_eq!(w.error(), ErrorStatus::NotWritable);
        assert_eq!(w.varbind_count(), 1);
        drop(w);
        assert_eq!(&buf[24..28], &[17, 0, 1, 0]);
        let mut w = ResponseWriter::new(&mut buf, ids(), 1, ErrorStatus::NoError, 0);
        w.varbind(&oid(&[1]), VarValue::Null, 0);
        w.varbind(&oid(&[2]), VarValue::Null, 0);
        w.set_error(ErrorStatus::GenErr, 2);
        w.finish();
        assert_eq!(&buf[24..28], &[5, 0, 2, 0]);
        assert!(matches!(
            parse(&buf),
            Ok(Incoming::Response {
                error: 5,
                index: 2,
                ..
            })
        ));
        let mut w = ResponseWriter::new(&mut buf, ids(), 1, ErrorStatus::ProcessingError, 0);
        assert_eq!(w.encoded_len(), HEADER_LEN + 8);
        w.set_error(ErrorStatus::ParseError, 0);
        drop(w);
        assert_eq!(&buf[24..26], &266u16.to_le_bytes());
        // from_u16 is the inverse of `as u16`, and knows nothing else.
        let mut known = 0;
        for v in 0..=u16::MAX {
            if let Some(e) = ErrorStatus::from_u16(v) {
                assert_eq!(e as u16, v);
                known += 1;
            }
        }
        assert_eq!(known, 19 + 13);
    }

    #[test]
    fn writer_reuses_the_buffer_and_patches_length_on_drop() {
        let mut buf = vec![0xaa; 1000];
        {
            let mut w = ResponseWriter::new(&mut buf, ids(), 0, ErrorStatus::NoError, 0);
            w.varbind(&oid(&[1, 3, 6, 1, 2, 1, 1, 3, 0]), VarValue::Null, 0);
            // no finish(): drop patches the length
        }
        let h = head(&buf).unwrap();
        assert_eq!(h.payload_len as usize, buf.len() - HEADER_LEN);
        assert_eq!(buf.len(), 20 + 8 + 4 + 4 + 4 * 4);
    }

    // ----- administrative PDUs -----

    #[test]
    fn administrative_pdus_have_the_documented_layout() {
        let mut buf = Vec::new();
        encode_open(&mut buf, 3, 5, &redis(&[]), "redis");
        assert_eq!(
            buf,
            [
                1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 32, 0, 0, 0, // header
                5, 0, 0, 0, // timeout, reserved
                3, 4, 0, 0, 1, 0, 0, 0, 0x2b, 0x4f, 0, 0, 144, 1, 0,
                0, // 1.3.6.1.4.1.20267.400
                5, 0, 0, 0, b'r', b'e', b'd', b'i', b's', 0, 0, 0, // descr
            ]
        );
        encode_register(&mut buf, 0x11, 4, 0, 127, &redis(&[]));
        assert_eq!(
            buf,
            [
                1, 3, 0, 0, 0x11, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 20, 0, 0, 0, // header
                0, 127, 0, 0, // timeout, priority, range_subid 0, reserved
                3, 4, 0, 0, 1, 0, 0, 0, 0x2b, 0x4f, 0, 0, 144, 1, 0, 0,
            ]
        );
        encode_ping(&mut buf, 0x11, 5);
        assert_eq!(
            buf,
            [1, 13, 0, 0, 0x11, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0]
        );
        encode_close(&mut buf, 0x11, 6, 5);
        assert_eq!(
            buf,
            [1, 2, 0, 0, 0x11, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0]
        );
        // Our own Close and Ping decode with our own decoder.
        assert_eq!(parse(&buf), Ok(Incoming::Close { reason: 5 }));
        encode_ping(&mut buf, 0x11, 5);
        assert_eq!(parse(&buf), Ok(Incoming::Other(PduType::Ping)));
    }

    // ----- the agentx crate as reference implementation -----

    mod reference {
        use super::*;
        use agentx::encodings::{
            Context, OctetString, SearchRange as XRange, SearchRangeList, Value as XValue,
            VarBind as XVarBind, VarBindList, ID,
        };
        use agentx::pdu;
        use std::time::Duration;

        fn id(s: &[u32]) -> ID {
            ID::try_from(s.to_vec()).unwrap()
        }

        /// Names the crate and we encode alike: none is prefix-compressible.
        const PLAIN_NAMES: [&[u32]; 6] = [
            &[1, 2, 3],
            &[1, 3, 6, 2, 7, 1],
            &[1, 3, 6, 1, 0, 5],
            &[1, 3, 6, 1, 300, 1],
            &[1, 3, 6, 1, 4],
            &[0],
        ];

        /// Values the crate encodes correctly, ours and its.
        fn values() -> Vec<(Value, XValue)> {
            let mut v = vec![
                (Value::Integer(0), XValue::Integer(0)),
                (Value::Integer(-1), XValue::Integer(-1)),
                (Value::Integer(i32::MIN), XValue::Integer(i32::MIN)),
                (Value::Integer(i32::MAX), XValue::Integer(i32::MAX)),
                (Value::Counter32(0), XValue::Counter32(0)),
                (Value::Counter32(u32::MAX), XValue::Counter32(u32::MAX)),
                (Value::Gauge32(12345), XValue::Gauge32(12345)),
                (Value::Gauge32(u32::MAX), XValue::Gauge32(u32::MAX)),
                (Value::TimeTicks(360_000), XValue::TimeTicks(360_000)),
                // The crate's TimeTicks is an i32; the bits are the same.
                (Value::TimeTicks(u32::MAX), XValue::TimeTicks(-1)),
                (Value::Counter64(0), XValue::Counter64(0)),
                (Value::Counter64(u64::MAX), XValue::Counter64(u64::MAX)),
                (Value::Counter64(1 << 40), XValue::Counter64(1 << 40)),
                (
                    Value::ObjectIdentifier(oid(&[1, 2, 840, 10008])),
                    XValue::ObjectIdentifier(id(&[1, 2, 840, 10008])),
                ),
                (
                    Value::ObjectIdentifier(Oid::null()),
                    XValue::ObjectIdentifier(ID::default()),
                ),
                // An IpAddress whose octets are all ASCII is the one the crate gets right.
                (
                    Value::IpAddress([10, 0, 0, 1]),
                    XValue::IpAddress(OctetString("\u{a}\0\0\u{1}".into())),
                ),
            ];
            for s in [
                "",
                "a",
                "abc",
                "abcd",
                "abcde",
                "héllo wörld",
                "redis_version:7.2.4",
            ] {
                v.push((
                    Value::OctetString(s.as_bytes().to_vec()),
                    XValue::OctetString(OctetString(s.to_string())),
                ));
            }
            v
        }

        fn crate_response(
            uptime: u32,
            error: pdu::ResError,
            index: u16,
            vbs: Vec<XVarBind>,
        ) -> pdu::Response {
            let mut r = pdu::Response::new();
            r.header.session_id = ids().session_id;
            r.header.transaction_id = ids().transaction_id;
            r.header.packet_id = ids().packet_id;
            r.sys_uptime = Duration::from_millis(u64::from(uptime) * 10);
            r.res_error = error;
            r.res_index = index;
            r.vb = Some(VarBindList(vbs));
            r
        }

        #[test]
        fn response_bytes_match_the_crate() {
            let values = values();
            for name in PLAIN_NAMES {
                let mut ours = Vec::new();
                let mut w = ResponseWriter::new(&mut ours, ids(), 4242, ErrorStatus::NoError, 0);
                let mut theirs = Vec::new();
                for (v, xv) in &values {
                    w.varbind(&oid(name), VarValue::Value(v), 0);
                    theirs.push(XVarBind::new(id(name), xv.clone()));
                }
                for (vv, xv) in [
                    (VarValue::Null, XValue::Null),
                    (VarValue::NoSuchObject, XValue::NoSuchObject),
                    (VarValue::NoSuchInstance, XValue::NoSuchInstance),
                    (VarValue::EndOfMibView, XValue::EndOfMibView),
                ] {
                    w.varbind(&oid(name), vv, 0);
                    theirs.push(XVarBind::new(id(name), xv));
                }
                w.finish();
                let expected = crate_response(4242, pdu::ResError::NoAgentXError, 0, theirs)
                    .to_bytes()
                    .unwrap();
                assert_eq!(ours, expected, "name {name:?}");
            }
        }

        #[test]
        fn agentx_error_codes_match_the_crate() {
            let pairs = [
                (ErrorStatus::OpenFailed, pdu::ResError::OpenFailed),
                (ErrorStatus::NotOpen, pdu::ResError::NotOpen),
                (
                    ErrorStatus::UnsupportedContext,
                    pdu::ResError::UnsupportedContext,
                ),
                (
                    ErrorStatus::DuplicateRegistration,
                    pdu::ResError::DuplicateRegistration,
                ),
                (ErrorStatus::ParseError, pdu::ResError::ParseError),
                (ErrorStatus::RequestDenied, pdu::ResError::RequestDenied),
                (ErrorStatus::ProcessingError, pdu::ResError::ProcessingError),
            ];
            for (ours, theirs) in pairs {
                let mut buf = Vec::new();
                ResponseWriter::new(&mut buf, ids(), 0, ours, 3).finish();
                let expected = crate_response(0, theirs, 3, vec![]).to_bytes().unwrap();
                assert_eq!(buf, expected);
            }
        }

        #[test]
        fn the_crate_reads_our_prefix_compressed_oids() {
            let values = values();
            let name = redis(&[1, 5, 0]);
            let mut ours = Vec::new();
            let mut w = ResponseWriter::new(&mut ours, ids(), 77, ErrorStatus::NoError, 0);
            let mut theirs = Vec::new();
            for (v, xv) in &values {
                w.varbind(&name, VarValue::Value(v), 0);
                theirs.push(XVarBind::new(id(name.as_slice()), xv.clone()));
            }
            let packed = Value::ObjectIdentifier(redis(&[9]));
            w.varbind(&name, VarValue::Value(&packed), 0);
            theirs.push(XVarBind::new(
                id(name.as_slice()),
                XValue::ObjectIdentifier(id(redis(&[9]).as_slice())),
            ));
            w.finish();
            assert_eq!(ours[HEADER_LEN + 8 + 5], 4, "name not prefix-compressed");
            let got = pdu::Response::from_bytes(&ours).unwrap();
            assert_eq!(got.vb, Some(VarBindList(theirs)));
            assert_eq!(got.sys_uptime, Duration::from_millis(770));

            let mut buf = Vec::new();
            encode_open(&mut buf, 1, 9, &redis(&[]), "x");
            let open = pdu::Open::from_bytes(&buf).unwrap();
            assert_eq!(open.id, id(&REDIS));
            assert_eq!(open.timeout, Duration::from_secs(9));
            encode_register(&mut buf, 1, 2, 0, 127, &redis(&[]));
            let reg = pdu::Register::from_bytes(&buf).unwrap();
            assert_eq!(
                (reg.subtree, reg.priority, reg.upper_bound),
                (id(&REDIS), 127, None)
            );
        }

        #[test]
        fn administrative_and_notify_bytes_match_the_crate() {
            for name in PLAIN_NAMES {
                let mut buf = Vec::new();
                encode_open(&mut buf, 3, 5, &oid(name), "redis-snmp héllo");
                let mut open = pdu::Open::new(id(name), "redis-snmp héllo");
                open.header.packet_id = 3;
                open.timeout = Duration::from_secs(5);
                assert_eq!(buf, open.to_bytes().unwrap());

                encode_register(&mut buf, 0x1234, 4, 30, 127, &oid(name));
                let mut reg = pdu::Register::new(id(name));
                reg.header.session_id = 0x1234;
                reg.header.packet_id = 4;
                reg.timeout = Duration::from_secs(30);
                reg.priority = 127;
                assert_eq!(buf, reg.to_bytes().unwrap());
            }
            let mut buf = Vec::new();
            encode_ping(&mut buf, 0x1234, 5);
            let mut ping = pdu::Ping::new();
            ping.header.session_id = 0x1234;
            ping.header.packet_id = 5;
            assert_eq!(buf, ping.to_bytes().unwrap());

            for (reason, xreason) in [
                (1, pdu::CloseReason::Other),
                (5, pdu::CloseReason::Shutdown),
            ] {
                encode_close(&mut buf, 0x1234, 6, reason);
                let mut close = pdu::Close::new(xreason);
                close.header.session_id = 0x1234;
                close.header.packet_id = 6;
                assert_eq!(buf, close.to_bytes().unwrap());
            }

            let ours: Vec<(Oid, Value)> = values()
                .into_iter()
                .enumerate()
                .map(|(i, (v, _))| (oid(&[1, 2, i as u32]), v))
                .collect();
            let theirs: Vec<XVarBind> = values()
                .into_iter()
                .enumerate()
                .map(|(i, (_, xv))| XVarBind::new(id(&[1, 2, i as u32]), xv))
                .collect();
            encode_notify(&mut buf, 0x1234, 7, &ours, 0);
            let mut notify = pdu::Notify::new(VarBindList(theirs));
            notify.header.session_id = 0x1234;
            notify.header.packet_id = 7;
            assert_eq!(buf, notify.to_bytes().unwrap());
        }

        fn set_flags(h: &mut pdu::Header, be: bool, ctx: bool) {
            h.session_id = 1;
            h.transaction_id = 2;
            h.packet_id = 3;
            if be {
                h.flags |= 1 << pdu::NETWORK_BYTE_ORDER;
            }
            if ctx {
                h.flags |= 1 << pdu::NON_DEFAULT_CONTEXT;
            }
        }

        #[test]
        fn we_read_what_the_crate_writes_in_both_byte_orders() {
            let start = |s: &[u32], include: bool| {
                let mut i = id(s);
                i.include = u8::from(include);
                i
            };
            let xranges = SearchRangeList(vec![
                XRange::new(start(&REDIS, true), ID::default()),
                XRange::new(
                    start(&[1, 3, 6, 1, 2, 1, 1], false),
                    id(&[1, 3, 6, 1, 2, 1, 2]),
                ),
            ]);
            let ranges = vec![
                SearchRange {
                    start: oid(&REDIS),
                    include: true,
                    end: Oid::null(),
                },
                SearchRange {
                    start: oid(&[1, 3, 6, 1, 2, 1, 1]),
                    include: false,
                    end: oid(&[1, 3, 6, 1, 2, 1, 2]),
                },
            ];
            for be in [false, true] {
                for ctx in [false, true] {
                    let xctx = ctx.then(|| Context(OctetString("ctx-é".into())));
                    let context = ctx.then(|| "ctx-é".as_bytes().to_vec());

                    let mut get = pdu::Get::new(xranges.clone());
                    set_flags(&mut get.header, be, ctx);
                    get.context = xctx.clone();
                    let expect = Incoming::Get {
                        context: context.clone(),
                        ranges: ranges.clone(),
                    };
                    assert_eq!(parse(&get.to_bytes().unwrap()), Ok(expect));

                    let mut next = pdu::GetNext::new(xranges.clone());
                    set_flags(&mut next.header, be, ctx);
                    next.context = xctx.clone();
                    let expect = Incoming::GetNext {
                        context: context.clone(),
                        ranges: ranges.clone(),
                    };
                    assert_eq!(parse(&next.to_bytes().unwrap()), Ok(expect));

                    let mut bulk = pdu::GetBulk::new(xranges.clone());
                    set_flags(&mut bulk.header, be, ctx);
                    bulk.context = xctx.clone();
                    bulk.non_repeaters = 2;
                    bulk.max_repetitions = 300;
                    let expect = Incoming::GetBulk {
                        context: context.clone(),
                        non_repeaters: 2,
                        max_repetitions: 300,
                        ranges: ranges.clone(),
                    };
                    assert_eq!(parse(&bulk.to_bytes().unwrap()), Ok(expect));

                    let (vs, xvs): (Vec<Value>, Vec<XValue>) = values().into_iter().unzip();
                    let xvbs = xvs
                        .into_iter()
                        .map(|xv| XVarBind::new(id(&[1, 3, 6, 1, 4, 1, 5]), xv))
                        .collect();
                    let mut set = pdu::TestSet::new(VarBindList(xvbs));
                    set_flags(&mut set.header, be, ctx);
                    set.context = xctx.clone();
                    let varbinds: Vec<VarBind> = vs
                        .into_iter()
                        .map(|v| VarBind {
                            name: oid(&[1, 3, 6, 1, 4, 1, 5]),
                            value: Some(v),
                        })
                        .collect();
                    let expect = Incoming::TestSet {
                        context: context.clone(),
                        varbinds: varbinds.clone(),
                    };
                    assert_eq!(parse(&set.to_bytes().unwrap()), Ok(expect));

                    let mut commit = pdu::CommitSet::new();
                    set_flags(&mut commit.header, be, false);
                    assert_eq!(parse(&commit.to_bytes().unwrap()), Ok(Incoming::CommitSet));

                    let mut close = pdu::Close::new(pdu::CloseReason::ByManager);
                    set_flags(&mut close.header, be, false);
                    assert_eq!(
                        parse(&close.to_bytes().unwrap()),
                        Ok(Incoming::Close { reason: 6 })
                    );
                }

                // The crate can write the uptime it cannot read back.
                let mut resp = crate_response(u32::MAX, pdu::ResError::ParseError, 0, vec![]);
                set_flags(&mut resp.header, be, false);
                assert_eq!(
                    parse(&resp.to_bytes().unwrap()),
                    Ok(Incoming::Response {
                        sys_uptime: u32::MAX,
                        error: 266,
                        index: 0,
                        varbinds: vec![]
                    })
                );
            }
        }
    }

    // ----- the mutation storm -----

    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    /// Valid PDUs of every type a subagent can receive, in both byte orders.
    fn seeds() -> Vec<Vec<u8>> {
        let mut seeds = Vec::new();
        for be in [false, true] {
            for ctx in [0, flags::NON_DEFAULT_CONTEXT] {
                let mut w = W::new(be, 5, ctx, 1, 2, 3);
                if ctx != 0 {
                    w.octets(b"ctx");
                }
                w.oid(&[1, 3, 6, 1, 4, 1, 20267, 400, 1, 0], true, true)
                    .oid(&[], false, false)
                    .oid(&[1, 2, 3], false, false)
                    .oid(&[1, 3, 6, 1, 2, 1, 2], false, false);
                seeds.push(w.done());

                let mut w = W::new(be, 6, ctx, 1, 2, 3);
                if ctx != 0 {
                    w.octets(&[0xff, 0, 1, 2, 3]);
                }
                w.oid(&[1, 3, 6, 1, 4, 1, 20267], false, true).oid(
                    &[1, 3, 6, 1, 4, 1, 20268],
                    false,
                    true,
                );
                seeds.push(w.done());

                let mut w = W::new(be, 7, ctx, 1, 2, 3);
                if ctx != 0 {
                    w.octets(b"");
                }
                w.u16(1)
                    .u16(10)
                    .oid(&[1, 3, 6, 1, 2, 1, 1, 3], false, true)
                    .oid(&[], false, false)
                    .oid(&REDIS, false, false)
                    .oid(&[], false, false);
                seeds.push(w.done());

                let mut w = W::new(be, 8, ctx, 1, 2, 3);
                if ctx != 0 {
                    w.octets(b"abcd");
                }
                w.vb(2, &REDIS)
                    .u32(5)
                    .vb(4, &[1, 3, 6, 1, 4, 1, 9])
                    .octets(&[0xc3, 0x28, 0xa0])
                    .vb(5, &[1, 1])
                    .vb(6, &[1, 2])
                    .oid(&[1, 3, 6, 1, 6, 3, 1], false, true)
                    .vb(64, &[1, 3])
                    .octets(&[192, 168, 200, 255])
                    .vb(65, &[1, 4])
                    .u32(1)
                    .vb(66, &[1, 5])
                    .u32(2)
                    .vb(67, &[1, 6])
                    .u32(3)
                    .vb(68, &[1, 7])
                    .octets(&[1, 2, 3, 4, 5, 6])
                    .vb(70, &[1, 8])
                    .u64(u64::MAX);
                seeds.push(w.done());
            }
            for t in [9, 10, 11, 13] {
                seeds.push(W::new(be, t, 0, 1, 2, 3).done());
            }
            seeds.push(W::new(be, 2, 0, 1, 2, 3).bytes(&[1, 0, 0, 0]).done());
            seeds.push(
                W::new(be, 18, 0, 1, 2, 3)
                    .u32(u32::MAX)
                    .u16(0)
                    .u16(0)
                    .vb(128, &[1, 1])
                    .vb(129, &[1, 2])
                    .vb(130, &[1, 3])
                    .vb(4, &REDIS)
                    .octets(b"hello")
                    .vb(6, &[1, 4])
                    .oid_raw(4, &[1; 120], false)
                    .done(),
            );
            // An OID with a prefix and 251 sub-ids: refused, but a fine mutation seed.
            seeds.push(
                W::new(be, 6, 0, 1, 2, 3)
                    .oid_raw(4, &[7; 251], false)
                    .oid_raw(0, &[], false)
                    .done(),
            );
        }
        seeds
    }

    /// What the fuzz target does: decode, then push everything decoded back
    /// through the encoder and read it again.
    fn exercise(bytes: &[u8]) -> Option<Incoming> {
        let header: &[u8; HEADER_LEN] = bytes.get(..HEADER_LEN)?.try_into().ok()?;
        let header = parse_header(header).ok()?;
        let rest = bytes.get(HEADER_LEN..)?;
        let _ = decode(&header, rest);
        let payload = rest.get(..header.payload_len as usize)?;
        let incoming = decode(&header, payload).ok()?;
        let mut buf = Vec::new();
        let mut expect: Vec<VarBind> = Vec::new();
        {
            let mut w = ResponseWriter::new(&mut buf, header.ids(), 0, ErrorStatus::NoError, 0);
            match &incoming {
                Incoming::Get { ranges, .. }
                | Incoming::GetNext { ranges, .. }
                | Incoming::GetBulk { ranges, .. } => {
                    for r in ranges {
                        w.varbind(&r.start, VarValue::EndOfMibView, 0);
                        w.varbind(&r.end, VarValue::Null, 0);
                        expect.push(VarBind {
                            name: r.start.clone(),
                            value: None,
                        });
                        expect.push(VarBind {
                            name: r.end.clone(),
                            value: None,
                        });
                    }
                }
                Incoming::TestSet { varbinds, .. } | Incoming::Response { varbinds, .. } => {
                    for vb in varbinds {
                        let value = vb.value.as_ref().map_or(VarValue::Null, VarValue::Value);
                        w.varbind(&vb.name, value, 0);
                    }
                    expect.clone_from(varbinds);
                }
                _ => {}
            }
        }
        assert_eq!(
            response_varbinds(&buf),
            expect,
            "re-encoding changed the data"
        );
        Some(incoming)
    }

    #[test]
    fn every_seed_decodes() {
        let seeds = seeds();
        let refused = seeds.iter().filter(|s| exercise(s).is_none()).count();
        assert_eq!(refused, 2, "only the prefix+251 seeds are refused");
    }

    #[test]
    fn mutation_storm_never_panics() {
        const INTERESTING: [u32; 10] = [0, 1, 3, 4, 127, 128, 251, 255, 0x7fff_ffff, u32::MAX];
        let seeds = seeds();
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        let mut decoded = 0usize;
        const ROUNDS: usize = 200_000;
        for _ in 0..ROUNDS {
            let mut pdu = seeds[rng.below(seeds.len())].clone();
            for _ in 0..1 + rng.below(4) {
                let len = pdu.len();
                if len == 0 {
                    pdu.push(rng.next() as u8);
                    continue;
                }
                match rng.below(7) {
                    0 => {
                        let i = rng.below(len);
                        pdu[i] ^= 1 << rng.below(8);
                    }
                    1 => {
                        let i = rng.below(len);
                        pdu[i] = INTERESTING[rng.below(INTERESTING.len())] as u8;
                    }
                    2 => pdu.truncate(rng.below(len + 1)),
                    3 => {
                        for _ in 0..1 + rng.below(16) {
                            pdu.push(rng.next() as u8);
                        }
                    }
                    4 if len >= 4 => {
                        let i = rng.below(len / 4) * 4;
                        let v = INTERESTING[rng.below(INTERESTING.len())];
                        let b = if rng.below(2) == 0 {
                            v.to_le_bytes()
                        } else {
                            v.to_be_bytes()
                        };
                        pdu[i..i + 4].copy_from_slice(&b);
                    }
                    5 if len >= 8 => {
                        let from = rng.below(len - 4);
                        let chunk = pdu[from..from + 4].to_vec();
                        let at = rng.below(len);
                        pdu.splice(at..at, chunk);
                    }
                    _ => {
                        let i = rng.below(len);
                        pdu[i] = rng.next() as u8;
                    }
                }
            }
            // Half the time, make the header's length agree with the bytes
            // that follow, so the storm gets past the framing checks.
            if rng.below(2) == 0 && pdu.len() >= HEADER_LEN {
                pdu.truncate(HEADER_LEN + (pdu.len() - HEADER_LEN) / 4 * 4);
                let len = (pdu.len() - HEADER_LEN) as u32;
                let b = if pdu[2] & flags::NETWORK_BYTE_ORDER != 0 {
                    len.to_be_bytes()
                } else {
                    len.to_le_bytes()
                };
                pdu[16..20].copy_from_slice(&b);
            }
            if exercise(&pdu).is_some() {
                decoded += 1;
            }
        }
        eprintln!("storm: {decoded} of {ROUNDS} mutants decoded");
        // The storm must reach the deep paths, not just bounce off the header.
        assert!(
            decoded > ROUNDS / 20,
            "only {decoded} of {ROUNDS} mutants decoded"
        );
    }
}
