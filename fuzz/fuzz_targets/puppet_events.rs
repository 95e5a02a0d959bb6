//! Fuzz the parser of Puppet's JSON-lines log: every line of it comes from
//! a file another user may write. Each line of the input is parsed; none
//! may panic, and what parses keeps its text within the documented bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redis_snmp::puppet::events_log::{parse_line, MAX_TEXT_BYTES};

fuzz_target!(|data: &[u8]| {
    for line in data.split(|&b| b == b'\n') {
        if let Ok(parsed) = parse_line(line) {
            // The message is cut to the bound, its ellipsis included.
            assert!(parsed.message.len() <= MAX_TEXT_BYTES);
        }
    }
});
