//! Arbitrary bytes as what snmptrapd hands `redis-snmp kick` on standard
//! input (a traphandle's input: host, transport, varbinds): reading it and
//! the role a resource event asks for must not panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redis_snmp::kick::trap::{kicked_role, read, Event};

fuzz_target!(|data: &[u8]| {
    let trap = read(&mut &data[..]);
    if let Event::ResourceChanged {
        resource_type,
        title,
    } = &trap.event
    {
        let _ = kicked_role(resource_type, title);
    }
});
