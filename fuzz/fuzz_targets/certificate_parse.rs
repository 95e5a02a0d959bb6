//! Arbitrary bytes as the DER certificate a TLS server shows (or the
//! Puppet agent's, or its CA's) and as the DER CRL of Puppet's ssldir:
//! neither reader may panic, their names stay within their bound, and
//! nothing of a name acts on a terminal (a subject or an issuer reaches
//! log lines and SNMP values as it is).
#![no_main]

use libfuzzer_sys::fuzz_target;
use redis_snmp::text::is_printable;
use redis_snmp::x509::{parse, parse_crl, MAX_NAME_LEN};

fuzz_target!(|data: &[u8]| {
    if let Ok(certificate) = parse(data) {
        for name in [&certificate.subject, &certificate.issuer] {
            assert!(name.len() <= MAX_NAME_LEN);
            assert!(is_printable(name), "{name:?}");
        }
        let _ = certificate.seconds_left(u64::MAX);
        let _ = certificate.seconds_left(0);
    }
    if let Ok(crl) = parse_crl(data) {
        assert!(crl.issuer.len() <= MAX_NAME_LEN);
        assert!(is_printable(&crl.issuer), "{:?}", crl.issuer);
    }
});
