//! The trust boundary: the header parser and the decoder of everything the
//! master sends. See the module documentation of [`super`] for what is
//! checked.

use super::types::*;
use crate::oid::{Oid, MAX_SUBIDS};
use crate::smi::Value;

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

#[cfg(test)]
mod tests {
    use crate::agentx::pdu::test_support::*;
    use crate::agentx::pdu::*;
    use crate::oid::{Oid, MAX_SUBIDS};
    use crate::smi::Value;

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
}
