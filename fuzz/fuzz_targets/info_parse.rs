//! Arbitrary bytes as an INFO reply: the parser, every accessor and the
//! conversion into snapshot rows must not panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redis_snmp::metrics::Layout;
use redis_snmp::redis::info::Info;
use redis_snmp::redis::readings::{instance_part, Extras};

fuzz_target!(|data: &[u8]| {
    let info = Info::parse_bytes(data);
    let _ = info.version();
    let _ = info.keyspace();
    let _ = info.replicas();
    let _ = info.command_stats();
    let _ = info.error_stats();
    let extras = Extras {
        databases: Some(16),
        ..Extras::default()
    };
    let _ = instance_part(1, "main", &info, &Layout::default_layout(), &extras);
});
