//! The floor: the fastest AgentX subagent there can be, for the benchmarks.
//!
//! One blocking read and one write per PDU, answers precomputed: it serves
//! a fixed table of (OID, value) pairs (the agent's own answers, read
//! through snmpd before the agent is stopped), encodes each answer once
//! with the crate's `agentx::pdu` codec, and from then on only copies the
//! request's ids into the stored bytes. No tokio, no snapshot, no lock.
//! Whatever an AgentX subagent costs snmpd and the kernel beyond this is
//! the subagent's own doing; what this costs is the protocol's floor.
//!
//! It runs as its own process (the benchmark binary started again with
//! `--floor ADDRESS TABLE`), so its CPU time is read from `/proc/PID/stat`
//! like the agent's.

use redis_snmp::agentx::pdu::{
    decode, encode_open, encode_register, parse_header, ErrorStatus, Ids, Incoming, ResponseWriter,
    SearchRange, VarValue, HEADER_LEN,
};
use redis_snmp::oid::Oid;
use redis_snmp::smi::Value;
use std::collections::HashMap;
use std::io::{Read, Write};

/// The flag telling the benchmark binary to be the floor responder.
pub const FLOOR_FLAG: &str = "--floor";

/// A table line: `1.3.6.1… KIND VALUE`; KIND is i (Integer), s (OctetString,
/// hex), c (Counter32), g (Gauge32), t (TimeTicks), C (Counter64),
/// o (OBJECT IDENTIFIER, dotted), a (IpAddress, dotted).
pub fn table_line(name: &[u64], value: &snmp2::Value<'_>) -> Option<String> {
    use snmp2::Value as V;
    let (kind, text) = match value {
        V::Integer(i) => ("i", i.to_string()),
        V::OctetString(b) => ("s", b.iter().map(|x| format!("{x:02x}")).collect()),
        V::Counter32(n) => ("c", n.to_string()),
        V::Unsigned32(n) => ("g", n.to_string()),
        V::Timeticks(n) => ("t", n.to_string()),
        V::Counter64(n) => ("C", n.to_string()),
        V::ObjectIdentifier(o) => (
            "o",
            o.iter()?
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join("."),
        ),
        V::IpAddress(a) => ("a", a.map(|x| x.to_string()).join(".")),
        _ => return None,
    };
    let name: Vec<String> = name.iter().map(|a| a.to_string()).collect();
    Some(format!("{} {kind} {text}", name.join(".")))
}

fn parse_oid(dotted: &str) -> Oid {
    Oid::new(
        dotted
            .trim_start_matches('.')
            .split('.')
            .map(|s| s.parse().expect("sub-identifier"))
            .collect(),
    )
    .expect("OID")
}

fn parse_line(line: &str) -> (Oid, Value) {
    let mut words = line.split_whitespace();
    let (name, kind, text) = (
        words.next().unwrap(),
        words.next().unwrap(),
        words.next().unwrap_or(""),
    );
    let number = || text.parse::<u64>().expect("number");
    let value = match kind {
        "i" => Value::Integer(text.parse().expect("integer")),
        "s" => Value::OctetString(
            (0..text.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
                .collect(),
        ),
        "c" => Value::Counter32(number() as u32),
        "g" => Value::Gauge32(number() as u32),
        "t" => Value::TimeTicks(number() as u32),
        "C" => Value::Counter64(number()),
        "o" => Value::ObjectIdentifier(parse_oid(text)),
        "a" => {
            let octets: Vec<u8> = text.split('.').map(|s| s.parse().unwrap()).collect();
            Value::IpAddress(octets.try_into().unwrap())
        }
        other => panic!("unknown kind {other}"),
    };
    (parse_oid(name), value)
}

/// Either end of the AgentX socket snmpd listens on.
enum Socket {
    Unix(std::os::unix::net::UnixStream),
    Tcp(std::net::TcpStream),
}

impl Socket {
    fn connect(address: &str) -> Socket {
        if let Some(path) = address.strip_prefix("unix:") {
            Socket::Unix(std::os::unix::net::UnixStream::connect(path).expect("AgentX socket"))
        } else {
            let addr = address.strip_prefix("tcp:").unwrap_or(address);
            let stream = std::net::TcpStream::connect(addr).expect("AgentX socket");
            stream.set_nodelay(true).unwrap();
            Socket::Tcp(stream)
        }
    }
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Socket::Unix(s) => s.read(buf),
            Socket::Tcp(s) => s.read(buf),
        }
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Socket::Unix(s) => s.write(buf),
            Socket::Tcp(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The answer to one search range from the sorted table.
fn lookup<'t>(table: &'t [(Oid, Value)], range: &SearchRange, exact: bool) -> (Oid, VarValue<'t>) {
    if exact {
        return match table.binary_search_by(|(name, _)| name.cmp(&range.start)) {
            Ok(i) => (range.start.clone(), VarValue::Value(&table[i].1)),
            Err(_) => (range.start.clone(), VarValue::NoSuchObject),
        };
    }
    let found = table.iter().find(|(name, _)| {
        (if range.include {
            *name >= range.start
        } else {
            *name > range.start
        }) && (range.end.is_empty() || *name < range.end)
    });
    match found {
        Some((name, value)) => (name.clone(), VarValue::Value(value)),
        None => (range.start.clone(), VarValue::EndOfMibView),
    }
}

/// The Response to a Get or GetNext, with the request's ids.
fn answer(table: &[(Oid, Value)], ids: Ids, request: &Incoming) -> Option<Vec<u8>> {
    let (ranges, exact) = match request {
        Incoming::Get { ranges, .. } => (ranges, true),
        Incoming::GetNext { ranges, .. } => (ranges, false),
        _ => return None,
    };
    let mut buf = Vec::new();
    let mut writer = ResponseWriter::new(&mut buf, ids, 0, ErrorStatus::NoError, 0);
    for range in ranges {
        let (name, value) = lookup(table, range, exact);
        writer.varbind(&name, value, 0);
    }
    writer.finish();
    Some(buf)
}

/// Patch the request's ids into a stored response (little-endian, as the
/// crate's encoder writes them).
fn patch_ids(response: &mut [u8], ids: Ids) {
    response[4..8].copy_from_slice(&ids.session_id.to_le_bytes());
    response[8..12].copy_from_slice(&ids.transaction_id.to_le_bytes());
    response[12..16].copy_from_slice(&ids.packet_id.to_le_bytes());
}

/// The master's Response to an administrative PDU; returns its session id.
fn admin_response(socket: &mut Socket, what: &str) -> u32 {
    let mut head = [0u8; HEADER_LEN];
    socket.read_exact(&mut head).unwrap();
    let header = parse_header(&head).unwrap();
    let mut payload = vec![0u8; header.payload_len as usize];
    socket.read_exact(&mut payload).unwrap();
    match decode(&header, &payload) {
        Ok(Incoming::Response { error: 0, .. }) => header.session_id,
        other => panic!("snmpd refused the floor's {what}: {other:?}"),
    }
}

/// Opens a session, registers `subtree`, then answers until snmpd closes
/// the socket. Never returns normally.
pub fn serve(address: &str, table_file: &str, subtree: &str) {
    let mut table: Vec<(Oid, Value)> = std::fs::read_to_string(table_file)
        .expect("table")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(parse_line)
        .collect();
    table.sort_by(|a, b| a.0.cmp(&b.0));
    let mut socket = Socket::connect(address);
    let mut buf = vec![0u8; 64 * 1024];
    let mut out = Vec::new();

    // Open, then Register: each answered by one Response, which must say noError.
    encode_open(&mut out, 1, 5, &Oid::null(), "redis-snmp floor responder");
    socket.write_all(&out).unwrap();
    let session = admin_response(&mut socket, "Open");
    encode_register(&mut out, session, 2, 5, 127, &parse_oid(subtree));
    socket.write_all(&out).unwrap();
    admin_response(&mut socket, "Register");

    // (PDU type, flags) → payload → the Response, ids to be patched in.
    let mut answers: HashMap<(u8, u8), HashMap<Vec<u8>, Vec<u8>>> = HashMap::new();
    let (mut start, mut end) = (0usize, 0usize);
    loop {
        // One read fetches what snmpd sent (one PDU, as it waits for each answer).
        if end - start < HEADER_LEN || {
            let header = parse_header(buf[start..start + HEADER_LEN].try_into().unwrap()).unwrap();
            end - start < HEADER_LEN + header.payload_len as usize
        } {
            buf.copy_within(start..end, 0);
            end -= start;
            start = 0;
            match socket.read(&mut buf[end..]) {
                Ok(0) | Err(_) => return,
                Ok(n) => end += n,
            }
            continue;
        }
        let header = parse_header(buf[start..start + HEADER_LEN].try_into().unwrap()).unwrap();
        let pdu_end = start + HEADER_LEN + header.payload_len as usize;
        let payload = &buf[start + HEADER_LEN..pdu_end];
        let ids = header.ids();
        let answers = answers
            .entry((header.pdu_type as u8, header.flags))
            .or_default();
        let response = match answers.get_mut(payload) {
            Some(stored) => {
                patch_ids(stored, ids);
                Some(&stored[..])
            }
            None => match decode(&header, payload).ok() {
                Some(Incoming::Close { .. }) => return,
                Some(request) => answer(&table, ids, &request)
                    .map(|bytes| &answers.entry(payload.to_vec()).or_insert(bytes)[..]),
                None => None,
            },
        };
        if let Some(bytes) = response {
            if socket.write_all(bytes).is_err() {
                return;
            }
        }
        start = pdu_end;
    }
}
