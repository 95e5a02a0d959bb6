//! SNMP semantics of Get, GetNext and GetBulk over a snapshot (RFC 2741
//! 7.2.3). Pure functions: no I/O, so they are tested without sockets.

use super::pdu::{ResponseWriter, SearchRange, VarValue};
use crate::snapshot::{GetResult, Snapshot};

/// Upper bound on the varbinds of one GetBulk answer, whatever the master
/// asks for: keeps a response (and the time spent on it) bounded.
pub const MAX_BULK_VARBINDS: usize = 2048;

pub fn get(snap: &Snapshot, ranges: &[SearchRange], out: &mut ResponseWriter<'_>, now: u64) {
    for range in ranges {
        let value = match snap.get(&range.start) {
            GetResult::Value(v) => VarValue::Value(v),
            GetResult::NoSuchInstance => VarValue::NoSuchInstance,
            GetResult::NoSuchObject => VarValue::NoSuchObject,
        };
        out.varbind(&range.start, value, now);
    }
}

pub fn get_next(snap: &Snapshot, ranges: &[SearchRange], out: &mut ResponseWriter<'_>, now: u64) {
    for range in ranges {
        next_one(snap, range, out, now);
    }
}

/// One GetNext step; `false` when the range is exhausted (endOfMibView, named
/// by the range's start as RFC 2741 7.2.3.2 asks, so the master moves on to
/// the next subagent or its own objects).
fn next_one(snap: &Snapshot, range: &SearchRange, out: &mut ResponseWriter<'_>, now: u64) -> bool {
    match snap.next(&range.start, range.include, &range.end) {
        Some((oid, value)) => {
            out.varbind(oid, VarValue::Value(value), now);
            true
        }
        None => {
            out.varbind(&range.start, VarValue::EndOfMibView, now);
            false
        }
    }
}

/// GetBulk (RFC 2741 7.2.3.3): the first `non_repeaters` ranges are answered
/// like GetNext, the rest repeatedly, each repetition continuing after the
/// previous answer, until `max_repetitions`, until every repeater reached
/// endOfMibView, or until the varbind cap.
pub fn get_bulk(
    snap: &Snapshot,
    non_repeaters: u16,
    max_repetitions: u16,
    ranges: &[SearchRange],
    out: &mut ResponseWriter<'_>,
    now: u64,
) {
    let split = usize::from(non_repeaters).min(ranges.len());
    let (singles, repeaters) = ranges.split_at(split);
    let mut written = 0usize;
    for range in singles {
        next_one(snap, range, out, now);
        written += 1;
    }
    let mut cursors: Vec<SearchRange> = repeaters.to_vec();
    for _ in 0..max_repetitions {
        if cursors.is_empty() || written + cursors.len() > MAX_BULK_VARBINDS {
            break;
        }
        let mut any_left = false;
        for cursor in cursors.iter_mut() {
            match snap.next(&cursor.start, cursor.include, &cursor.end) {
                Some((oid, value)) => {
                    out.varbind(oid, VarValue::Value(value), now);
                    cursor.start = oid.clone();
                    cursor.include = false;
                    any_left = true;
                }
                None => out.varbind(&cursor.start, VarValue::EndOfMibView, now),
            }
            written += 1;
        }
        if !any_left {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agentx::pdu::{self, ErrorStatus, Ids, Incoming, VarBind};
    use crate::oid::Oid;
    use crate::smi::Value;
    use crate::snapshot::{PartKey, Store};
    use std::sync::Arc;

    fn oid(s: &str) -> Oid {
        s.parse().unwrap()
    }

    fn range(start: &str, include: bool, end: &str) -> SearchRange {
        SearchRange {
            start: oid(start),
            include,
            end: if end.is_empty() {
                Oid::null()
            } else {
                oid(end)
            },
        }
    }

    /// A snapshot with .1.5.1.0 = 1, .1.5.2.0 = 2, .1.5.3.0 = 3.
    fn snapshot() -> Arc<Snapshot> {
        let store = Store::new(vec![oid("1.5.1"), oid("1.5.2"), oid("1.5.3"), oid("1.5.4")]);
        store.publish(
            PartKey::RedisInstance(1),
            (1..=3)
                .map(|n| (oid(&format!("1.5.{n}.0")), Value::Gauge32(n)))
                .collect(),
        );
        store.load()
    }

    /// Run `answer` into a Response PDU and decode it back, as the master would.
    fn respond(answer: impl FnOnce(&mut ResponseWriter<'_>)) -> Vec<VarBind> {
        let mut buf = Vec::new();
        let ids = Ids {
            session_id: 1,
            transaction_id: 2,
            packet_id: 3,
        };
        let mut out = ResponseWriter::new(&mut buf, ids, 0, ErrorStatus::NoError, 0);
        answer(&mut out);
        out.finish();
        let head: [u8; pdu::HEADER_LEN] = buf[..pdu::HEADER_LEN].try_into().unwrap();
        let header = pdu::parse_header(&head).unwrap();
        match pdu::decode(&header, &buf[pdu::HEADER_LEN..]).unwrap() {
            Incoming::Response {
                varbinds, error: 0, ..
            } => varbinds,
            other => panic!("not a clean response: {other:?}"),
        }
    }

    fn shown(varbinds: &[VarBind]) -> Vec<String> {
        varbinds
            .iter()
            .map(|vb| match &vb.value {
                Some(v) => format!("{}={v:?}", vb.name),
                None => format!("{}=exception", vb.name),
            })
            .collect()
    }

    #[test]
    fn get_answers_values_and_both_kinds_of_absence() {
        let snap = snapshot();
        let ranges = [
            range("1.5.2.0", false, ""),
            range("1.5.4.0", false, ""),
            range("1.6", false, ""),
        ];
        let got = respond(|out| get(&snap, &ranges, out, 0));
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].value, Some(Value::Gauge32(2)));
        // noSuchInstance and noSuchObject are both exceptions on the wire;
        // the names stay those asked for.
        assert_eq!(got[1].name, oid("1.5.4.0"));
        assert_eq!(got[2].name, oid("1.6"));
    }

    #[test]
    fn get_next_ends_the_range_with_end_of_mib_view_named_by_the_start() {
        let snap = snapshot();
        let ranges = [
            range("1.5.1.0", false, ""),
            range("1.5.3.0", false, ""),
            range("1.5", false, "1.5.2"),
        ];
        let got = shown(&respond(|out| get_next(&snap, &ranges, out, 0)));
        assert_eq!(
            got,
            [
                ".1.5.2.0=Gauge32: 2",
                ".1.5.3.0=exception",
                ".1.5.1.0=Gauge32: 1"
            ]
        );
    }

    #[test]
    fn get_bulk_repeats_after_the_non_repeaters() {
        let snap = snapshot();
        let ranges = [
            range("1.5.2.0", true, ""),
            range("1.5", false, ""),
            range("1.5.1.0", false, ""),
        ];
        let got = shown(&respond(|out| get_bulk(&snap, 1, 3, &ranges, out, 0)));
        assert_eq!(
            got,
            [
                ".1.5.2.0=Gauge32: 2", // the non-repeater, included
                ".1.5.1.0=Gauge32: 1", // repetition 1
                ".1.5.2.0=Gauge32: 2",
                ".1.5.2.0=Gauge32: 2", // repetition 2
                ".1.5.3.0=Gauge32: 3",
                ".1.5.3.0=Gauge32: 3", // repetition 3: the second repeater ends
                ".1.5.3.0=exception",
            ]
        );
    }

    #[test]
    fn get_bulk_stops_when_every_repeater_is_exhausted_and_at_the_cap() {
        let snap = snapshot();
        let got = respond(|out| get_bulk(&snap, 0, 100, &[range("1.5.2.0", false, "")], out, 0));
        assert_eq!(got.len(), 2, "{:?}", shown(&got)); // .3.0, then endOfMibView
        let many: Vec<SearchRange> = (0..MAX_BULK_VARBINDS + 5)
            .map(|_| range("1.5", false, ""))
            .collect();
        let got = respond(|out| get_bulk(&snap, 0, u16::MAX, &many, out, 0));
        assert!(
            got.is_empty(),
            "a repetition that would pass the cap is not started"
        );
        let got = respond(|out| get_bulk(&snap, u16::MAX, 5, &many, out, 0));
        assert_eq!(
            got.len(),
            many.len(),
            "non-repeaters beyond the ranges are clamped"
        );
    }
}
