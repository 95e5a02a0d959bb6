//! Arbitrary bytes as Puppet's run summary, run report and lock files: the
//! readers must return a value or an error, never panic, and what they read
//! must turn into snapshot rows.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redis_snmp::metrics::Layout;
use redis_snmp::puppet::locks::{parse_disabled_lock, RunLock};
use redis_snmp::puppet::objects::puppet_part;
use redis_snmp::puppet::report::parse_report;
use redis_snmp::puppet::summary::parse_summary;
use redis_snmp::puppet::PuppetState;

fuzz_target!(|data: &[u8]| {
    let state = PuppetState {
        summary: parse_summary(data).ok(),
        report: parse_report(data).ok(),
        disabled: Some(parse_disabled_lock(data)),
        run_lock: Some(RunLock::from_content(data)),
        ..PuppetState::default()
    };
    let _ = puppet_part(&state, &Layout::default_layout());
});
