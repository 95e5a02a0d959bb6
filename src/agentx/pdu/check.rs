//! The round trip every decoded PDU must survive: what the master sent is
//! decoded, everything decoded is written back into a Response, and that
//! Response must read back as the same data. The unit tests' mutation storm
//! and the fuzz target (`fuzz/fuzz_targets/agentx_decode.rs`) both run it.

use super::decode::{decode, parse_header};
use super::encode::ResponseWriter;
use super::types::*;

/// Parses `bytes` (a header and what follows it) and decodes the payload
/// twice: as given (a length mismatch must be refused cleanly) and framed
/// as the session frames it (exactly `payload_len` bytes). `Ok(None)` when
/// the input is refused, as most input is; `Ok(Some(pdu))` when it decoded
/// and survived re-encoding; `Err` says what the re-encoding lost.
pub fn round_trip(bytes: &[u8]) -> Result<Option<Incoming>, String> {
    let Some((head, rest)) = bytes.split_first_chunk::<HEADER_LEN>() else {
        return Ok(None);
    };
    let Ok(header) = parse_header(head) else {
        return Ok(None);
    };
    let _ = decode(&header, rest);
    let Some(payload) = usize::try_from(header.payload_len)
        .ok()
        .and_then(|len| rest.get(..len))
    else {
        return Ok(None);
    };
    let Ok(incoming) = decode(&header, payload) else {
        return Ok(None);
    };

    let (sys_uptime, error, index) = match &incoming {
        Incoming::Response {
            sys_uptime,
            error,
            index,
            ..
        } => (*sys_uptime, *error, *index),
        _ => (0, 0, 0),
    };
    let status = ErrorStatus::from_u16(error).unwrap_or(ErrorStatus::GenErr);
    let mut expect: Vec<VarBind> = Vec::new();
    let mut buf = Vec::new();
    {
        let mut w = ResponseWriter::new(&mut buf, header.ids(), sys_uptime, status, index);
        match &incoming {
            Incoming::Get { ranges, .. }
            | Incoming::GetNext { ranges, .. }
            | Incoming::GetBulk { ranges, .. } => {
                for r in ranges {
                    w.varbind(&r.start, VarValue::NoSuchObject, u64::from(sys_uptime));
                    w.varbind(&r.end, VarValue::EndOfMibView, u64::from(sys_uptime));
                    for name in [&r.start, &r.end] {
                        expect.push(VarBind {
                            name: name.clone(),
                            value: None,
                        });
                    }
                }
            }
            Incoming::TestSet { varbinds, .. } | Incoming::Response { varbinds, .. } => {
                for vb in varbinds {
                    let value = vb.value.as_ref().map_or(VarValue::Null, VarValue::Value);
                    w.varbind(&vb.name, value, u64::from(sys_uptime));
                }
                expect.clone_from(varbinds);
            }
            _ => {}
        }
        w.finish();
    }

    let Some((head, rest)) = buf.split_first_chunk::<HEADER_LEN>() else {
        return Err("the response is shorter than a header".into());
    };
    let header = parse_header(head).map_err(|e| format!("our header: {e}"))?;
    match decode(&header, rest).map_err(|e| format!("our payload: {e}"))? {
        Incoming::Response {
            sys_uptime: u,
            error: e,
            index: i,
            varbinds,
        } => {
            if (u, e, i) != (sys_uptime, status as u16, index) {
                return Err(format!(
                    "wrote uptime, error, index {:?}, read {:?}",
                    (sys_uptime, status as u16, index),
                    (u, e, i)
                ));
            }
            if varbinds != expect {
                return Err(format!("wrote {expect:?}, read {varbinds:?}"));
            }
            Ok(Some(incoming))
        }
        other => Err(format!("wrote a Response, read {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agentx::pdu::test_support::*;

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

    /// The shared check; a lost datum fails the test.
    fn exercise(bytes: &[u8]) -> Option<Incoming> {
        round_trip(bytes).unwrap_or_else(|lost| panic!("re-encoding lost data: {lost}"))
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
