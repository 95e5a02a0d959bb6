//! Arbitrary bytes as what snmptrapd hands `redis-snmp kick` on standard
//! input (a traphandle's input: host, transport, varbinds): reading it,
//! the role a resource event asks for, and matching its resource against
//! `[[on]]` globs must not panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redis_snmp::kick::rules::{glob, matchable};
use redis_snmp::kick::trap::{kicked_role, read, Event};

fuzz_target!(|data: &[u8]| {
    let trap = read(&mut &data[..]);
    if let Event::ResourceChanged {
        resource_type,
        title,
    }
    | Event::ResourceFailed {
        resource_type,
        title,
    } = &trap.event
    {
        let _ = kicked_role(resource_type, title);
        if let Some(resource) = matchable(resource_type, title) {
            // The title as a glob too: any text may be a pattern.
            for pattern in ["File[/etc/*]", "*[*?*]", title.as_str()] {
                let _ = glob(pattern, &resource);
            }
        }
    }
});
