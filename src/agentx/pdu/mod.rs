//! AgentX PDUs (RFC 2741): the 20-byte header, the decoder for everything the
//! master sends, and the encoders for everything we send.
//!
//! # The trust boundary
//!
//! Every byte snmpd sends passes through [`parse_header`] and [`decode()`].
//! Neither panics on any input: all reads go through a bounds-checked cursor,
//! lengths are checked before anything is allocated, OIDs are capped at
//! [`MAX_SUBIDS`](crate::oid::MAX_SUBIDS) before their `Vec` is made, and no count read from the wire
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
//!
//! # The files
//!
//! - [`types`]: the header, the PDU types, what is decoded, error-status
//!   values, and the errors of the trust boundary;
//! - [`mod@decode`]: the header parser and the decoder (the trust boundary);
//! - [`encode`]: the Response writer and the encoders of the PDUs we send;
//! - [`check`]: the round trip every decoded PDU must survive, shared by
//!   the unit tests and the fuzz target.

pub mod check;
pub mod decode;
pub mod encode;
pub mod types;

#[cfg(test)]
mod reference_tests;
#[cfg(test)]
mod test_support;

pub use decode::{decode, parse_header};
pub use encode::{
    encode_close, encode_notify, encode_open, encode_ping, encode_register, ResponseWriter,
};
pub use types::*;
