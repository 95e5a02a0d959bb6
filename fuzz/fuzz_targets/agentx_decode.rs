//! Fuzz the AgentX decoder: the bytes snmpd sends are untrusted.
//!
//! Input = a 20-byte header followed by whatever comes after it. The header
//! is parsed; the payload is decoded twice, once as given (the length check
//! must refuse a mismatch cleanly) and once framed the way the session
//! frames it (exactly `payload_len` bytes). Whatever decodes is pushed back
//! through `ResponseWriter` and read again, to prove that encoding decoded
//! data never panics and loses nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redis_snmp::agentx::pdu::{
    decode, parse_header, ErrorStatus, Incoming, ResponseWriter, VarBind, VarValue, HEADER_LEN,
};

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_first_chunk::<HEADER_LEN>() else {
        return;
    };
    let Ok(header) = parse_header(head) else {
        return;
    };
    let _ = decode(&header, rest);
    let Some(payload) = usize::try_from(header.payload_len)
        .ok()
        .and_then(|len| rest.get(..len))
    else {
        return;
    };
    let Ok(incoming) = decode(&header, payload) else {
        return;
    };

    // Re-encode what was decoded.
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
                    w.varbind(&vb.name, value, u64::from(sys_uptime));
                }
                expect.clone_from(varbinds);
            }
            _ => {}
        }
        w.finish();
    }

    // Our own output must read back as the same data.
    let (head, rest) = buf
        .split_first_chunk::<HEADER_LEN>()
        .expect("a response is at least a header");
    let header = parse_header(head).expect("our header is valid");
    match decode(&header, rest).expect("our payload decodes") {
        Incoming::Response {
            sys_uptime: u,
            error: e,
            index: i,
            varbinds,
        } => {
            assert_eq!((u, e, i), (sys_uptime, status as u16, index));
            assert_eq!(varbinds, expect);
        }
        other => panic!("we wrote a Response, read back {other:?}"),
    }
});
