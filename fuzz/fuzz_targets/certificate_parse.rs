//! Arbitrary bytes as the DER certificate a TLS server shows: the reader
//! of its subject, issuer and notAfter must not panic, and its names stay
//! within their bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redis_snmp::x509::{parse, MAX_NAME_LEN};

fuzz_target!(|data: &[u8]| {
    if let Ok(certificate) = parse(data) {
        assert!(certificate.subject.len() <= MAX_NAME_LEN);
        assert!(certificate.issuer.len() <= MAX_NAME_LEN);
        let _ = certificate.seconds_left(u64::MAX);
        let _ = certificate.seconds_left(0);
    }
});
