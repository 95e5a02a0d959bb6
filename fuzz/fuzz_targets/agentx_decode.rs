//! Fuzz the AgentX decoder: the bytes snmpd sends are untrusted.
//!
//! Input = a 20-byte header followed by whatever comes after it. The check
//! is `redis_snmp::agentx::pdu::check::round_trip`, the one the unit
//! tests' mutation storm runs: the payload is decoded as given and framed
//! as the session frames it, and whatever decodes is pushed back through
//! `ResponseWriter` and read again, to prove that encoding decoded data
//! never panics and loses nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redis_snmp::agentx::pdu::check::round_trip;

fuzz_target!(|data: &[u8]| {
    if let Err(lost) = round_trip(data) {
        panic!("re-encoding lost data: {lost}");
    }
});
