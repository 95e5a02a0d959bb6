//! Arbitrary bytes as an entry of a shared kick ledger, as a Redis that
//! nobody trusts hands it back: the entry's name (up to the first
//! newline), then its value. The seal is checked first; then, past it as
//! if a manager had sealed the bytes, the record readers (a kick, a
//! sender's refusals, the inventory) take them. Neither may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redis_snmp::kick::ledger::read_entry;
use redis_snmp::kick::ledger::seal::Seal;

fuzz_target!(|data: &[u8]| {
    let seal = Seal::new(b"a fuzzing key of more than sixteen bytes").expect("a key");
    let (name, value) = match data.iter().position(|&b| b == b'\n') {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (&data[..0], data),
    };
    let name = String::from_utf8_lossy(name);
    if let Ok(json) = seal.open(&name, value) {
        let _ = read_entry(&name, json);
    }
    let sealed = seal.seal(&name, value);
    let json = seal.open(&name, &sealed).expect("what was sealed opens");
    let _ = read_entry(&name, json);
});
