//! What we send: the Response writer and the administrative and Notify
//! PDUs, little-endian, OIDs prefix-compressed where they may be.

use super::types::*;
use crate::oid::{Oid, MAX_SUBIDS};
use crate::smi::{saturate_u32, Value};

/// Offsets of the fields the encoders patch after the fact.
const PAYLOAD_LEN_AT: usize = 16;
const RESPONSE_ERROR_AT: usize = HEADER_LEN + 4;
const RESPONSE_INDEX_AT: usize = HEADER_LEN + 6;

/// A Response PDU under construction, written straight into `buf` (cleared
/// first), little-endian.
///
/// The header's payload length is patched when the writer is finished or
/// dropped, so the buffer always holds a complete PDU once the writer is
/// gone. Every OID fits the encoding: [`Oid`] holds at most
/// [`MAX_SUBIDS`] (128) sub-identifiers however it is built, and the
/// count is one byte.
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
        put_varbind(self.buf, name, value, now_unix);
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
/// with sysUpTime.0 and snmpTrapOID.0 (the caller's job).
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

/// Encode an OID, prefix-compressed when possible.
fn put_oid(buf: &mut Vec<u8>, oid: &Oid, include: bool) {
    let subids = oid.as_slice();
    let (prefix, rest) = match subids {
        [1, 3, 6, 1, p, rest @ ..] if !rest.is_empty() => match u8::try_from(*p) {
            Ok(p) if p != 0 => (p, rest),
            _ => (0, subids),
        },
        _ => (0, subids),
    };
    // An Oid holds at most MAX_SUBIDS = 128 sub-identifiers (Oid::new and
    // Oid::child refuse more), so the count always fits its byte.
    const _: () = assert!(MAX_SUBIDS <= u8::MAX as usize);
    let n_subid = u8::try_from(rest.len()).unwrap_or(u8::MAX);
    buf.reserve(4 + 4 * rest.len());
    buf.extend_from_slice(&[n_subid, prefix, u8::from(include), 0]);
    for &subid in rest {
        put_u32(buf, subid);
    }
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

/// Type, reserved, name.
fn put_varbind_head(buf: &mut Vec<u8>, ty: u16, name: &Oid) {
    put_u16(buf, ty);
    put_u16(buf, 0);
    put_oid(buf, name, false)
}

/// One varbind.
fn put_varbind(buf: &mut Vec<u8>, name: &Oid, value: VarValue<'_>, now_unix: u64) {
    let value = match value {
        VarValue::Value(v) => v,
        VarValue::Null => return put_varbind_head(buf, tag::NULL, name),
        VarValue::NoSuchObject => return put_varbind_head(buf, tag::NO_SUCH_OBJECT, name),
        VarValue::NoSuchInstance => return put_varbind_head(buf, tag::NO_SUCH_INSTANCE, name),
        VarValue::EndOfMibView => return put_varbind_head(buf, tag::END_OF_MIB_VIEW, name),
    };
    let value = value.resolve(now_unix);
    let fixed = |buf: &mut Vec<u8>, ty: u16, data: &[u8]| {
        put_varbind_head(buf, ty, name);
        buf.extend_from_slice(data);
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
            put_varbind_head(buf, tag::OCTET_STRING, name);
            put_octets(buf, bytes);
        }
        Value::Opaque(bytes) => {
            put_varbind_head(buf, tag::OPAQUE, name);
            put_octets(buf, bytes);
        }
        Value::IpAddress(addr) => {
            put_varbind_head(buf, tag::IP_ADDRESS, name);
            put_octets(buf, addr);
        }
        Value::ObjectIdentifier(oid) => {
            put_varbind_head(buf, tag::OBJECT_IDENTIFIER, name);
            put_oid(buf, oid, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{put_oid, put_varbind};
    use crate::agentx::pdu::test_support::*;
    use crate::agentx::pdu::*;
    use crate::oid::{Oid, MAX_SUBIDS};
    use crate::smi::Value;

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
            put_oid(&mut buf, &oid(subids), false);
            assert_eq!(&buf[..4], &[n as u8, prefix, 0, 0], "{subids:?}");
            assert_eq!(buf.len(), 4 + 4 * n);
        }
    }

    #[test]
    fn the_longest_oid_there_can_be_round_trips() {
        // Oid::new and Oid::child both stop at MAX_SUBIDS, so this is the
        // longest name or value the encoder ever meets.
        let base = oid(&[1, 3, 6, 1, 4, 1]);
        assert!(base.child(&[7; MAX_SUBIDS]).is_err());
        let longest = base.child(&vec![7; MAX_SUBIDS - 6]).unwrap();
        let value = Value::ObjectIdentifier(longest.clone());
        let out = response(
            ErrorStatus::NoError,
            0,
            &[(longest.clone(), VarValue::Value(&value))],
            0,
        );
        let Incoming::Response {
            error, varbinds, ..
        } = parse(&out).unwrap()
        else {
            panic!()
        };
        assert_eq!(error, 0);
        assert_eq!(varbinds[0].name, longest);
        assert_eq!(varbinds[0].value, Some(value));
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
        put_varbind(&mut buf, &oid(&[1, 2]), VarValue::Value(&v), 0);
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
}
