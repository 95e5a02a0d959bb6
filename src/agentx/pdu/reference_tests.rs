//! The `agentx` crate as the reference implementation: for everything it
//! handles correctly, our bytes must be its bytes, and each decoder must
//! read the other's output.

use super::test_support::*;
use super::*;
use crate::oid::Oid;
use crate::smi::Value;
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
