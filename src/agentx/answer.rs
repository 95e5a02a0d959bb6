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
