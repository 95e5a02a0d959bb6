//! The doctor's one question to snmpd: an SNMPv2c GetNext over UDP
//! (RFC 3416 PDUs in the BER of X.690), just enough to learn which object
//! follows an OID in the community's view. Written here rather than taken
//! from an SNMP crate: one request and one answer do not justify a parser
//! and its dependencies in the agent's binary. The answer is read with
//! bounds checks throughout; anything unexpected is an error.

use crate::oid::Oid;
use std::net::UdpSocket;
use std::time::Duration;

/// What follows `start` in the view: `Some(oid)`, or `None` at the end of
/// the view (endOfMibView, noSuchObject).
pub fn get_next(
    host: &str,
    port: u16,
    community: &str,
    start: &Oid,
    timeout: Duration,
) -> Result<Option<Oid>, String> {
    Ok(get_next_value(host, port, community, start, timeout)?.map(|(oid, _)| oid))
}

/// What follows `start` in the view, with its value when that is an
/// OCTET STRING (empty otherwise): `None` at the end of the view.
pub fn get_next_value(
    host: &str,
    port: u16,
    community: &str,
    start: &Oid,
    timeout: Duration,
) -> Result<Option<(Oid, Vec<u8>)>, String> {
    let socket = UdpSocket::bind(if host.contains(':') {
        "[::]:0"
    } else {
        "0.0.0.0:0"
    })
    .map_err(|e| e.to_string())?;
    socket
        .set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    socket
        .connect((host, port))
        .map_err(|e| format!("{host}:{port}: {e}"))?;
    let request_id = i32::try_from(std::process::id() & 0x7fff_ffff).unwrap_or(1);
    socket
        .send(&get_next_request(community, request_id, start))
        .map_err(|e| e.to_string())?;
    let mut buf = vec![0u8; 65_536];
    let n = socket.recv(&mut buf).map_err(|e| match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            format!("no answer within {} s", timeout.as_secs())
        }
        _ => e.to_string(),
    })?;
    read_response_value(&buf[..n], request_id)
}

/// `Message { version 1 (v2c), community, GetNextRequest { id, 0, 0,
/// [ { start, NULL } ] } }`.
pub fn get_next_request(community: &str, request_id: i32, start: &Oid) -> Vec<u8> {
    let varbind = tlv(
        0x30,
        &[tlv(0x06, &oid_content(start)), vec![0x05, 0x00]].concat(),
    );
    let pdu = tlv(
        0xa1,
        &[
            integer(i64::from(request_id)),
            integer(0),
            integer(0),
            tlv(0x30, &varbind),
        ]
        .concat(),
    );
    tlv(
        0x30,
        &[integer(1), tlv(0x04, community.as_bytes()), pdu].concat(),
    )
}

fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = content.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = len.to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(content);
    out
}

fn integer(value: i64) -> Vec<u8> {
    let bytes = value.to_be_bytes();
    // The shortest two's complement form.
    let mut start = 0;
    while start < 7
        && ((bytes[start] == 0 && bytes[start + 1] & 0x80 == 0)
            || (bytes[start] == 0xff && bytes[start + 1] & 0x80 != 0))
    {
        start += 1;
    }
    tlv(0x02, &bytes[start..])
}

fn oid_content(oid: &Oid) -> Vec<u8> {
    let arcs = oid.as_slice();
    let mut out = Vec::new();
    let (first, rest) = match arcs {
        [a, b, rest @ ..] => (a * 40 + b, rest),
        [a] => (a * 40, &[][..]),
        [] => (0, &[][..]),
    };
    for arc in std::iter::once(first).chain(rest.iter().copied()) {
        let mut groups = vec![(arc & 0x7f) as u8];
        let mut v = arc >> 7;
        while v > 0 {
            groups.push((v & 0x7f) as u8 | 0x80);
            v >>= 7;
        }
        out.extend(groups.iter().rev());
    }
    out
}

/// A bounds-checked reader of BER TLVs.
struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    fn tlv(&mut self) -> Result<(u8, &'a [u8]), String> {
        let short = || "the answer is cut short".to_string();
        let (&tag, rest) = self.data.split_first().ok_or_else(short)?;
        let (&first, rest) = rest.split_first().ok_or_else(short)?;
        let (len, rest) = if first & 0x80 == 0 {
            (usize::from(first), rest)
        } else {
            let n = usize::from(first & 0x7f);
            if n == 0 || n > 4 || rest.len() < n {
                return Err("a length the answer cannot have".into());
            }
            let len = rest[..n]
                .iter()
                .fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
            (len, &rest[n..])
        };
        if rest.len() < len {
            return Err(short());
        }
        self.data = &rest[len..];
        Ok((tag, &rest[..len]))
    }

    fn expect(&mut self, tag: u8, what: &str) -> Result<&'a [u8], String> {
        match self.tlv()? {
            (t, content) if t == tag => Ok(content),
            (t, _) => Err(format!("{what}: tag {t:#04x}, not {tag:#04x}")),
        }
    }
}

fn read_integer(content: &[u8]) -> Result<i64, String> {
    if content.is_empty() || content.len() > 8 {
        return Err("an INTEGER of an impossible length".into());
    }
    let negative = content[0] & 0x80 != 0;
    Ok(content
        .iter()
        .fold(if negative { -1i64 } else { 0 }, |acc, b| {
            (acc << 8) | i64::from(*b)
        }))
}

fn read_oid(content: &[u8]) -> Result<Oid, String> {
    let mut arcs = Vec::new();
    let mut value: u64 = 0;
    for (i, b) in content.iter().enumerate() {
        value = (value << 7) | u64::from(b & 0x7f);
        if value > u64::from(u32::MAX) {
            return Err("an OID arc over 2^32".into());
        }
        if b & 0x80 == 0 {
            if arcs.is_empty() {
                let first = value.min(80);
                arcs.push((first / 40) as u32);
                arcs.push((value - (first / 40) * 40) as u32);
            } else {
                arcs.push(value as u32);
            }
            value = 0;
        } else if i + 1 == content.len() {
            return Err("an OID cut inside an arc".into());
        }
    }
    Oid::new(arcs).map_err(|e| format!("{e:?}"))
}

/// The OID of the one varbind of a Response to `request_id`.
#[cfg(test)]
fn read_response(bytes: &[u8], request_id: i32) -> Result<Option<Oid>, String> {
    Ok(read_response_value(bytes, request_id)?.map(|(oid, _)| oid))
}

/// The OID of the one varbind of a Response to `request_id`, and its value
/// when that is an OCTET STRING.
fn read_response_value(bytes: &[u8], request_id: i32) -> Result<Option<(Oid, Vec<u8>)>, String> {
    let mut message = Reader {
        data: Reader { data: bytes }.expect(0x30, "the message")?,
    };
    if read_integer(message.expect(0x02, "the version")?)? != 1 {
        return Err("not an SNMPv2c answer".into());
    }
    message.expect(0x04, "the community")?;
    let mut pdu = Reader {
        data: message.expect(0xa2, "the Response PDU")?,
    };
    if read_integer(pdu.expect(0x02, "the request id")?)? != i64::from(request_id) {
        return Err("an answer to another request".into());
    }
    let status = read_integer(pdu.expect(0x02, "the error status")?)?;
    pdu.expect(0x02, "the error index")?;
    if status == 2 {
        // noSuchName: what an SNMPv1-minded agent says at the end.
        return Ok(None);
    }
    if status != 0 {
        return Err(format!("snmpd answered with error status {status}"));
    }
    let mut list = Reader {
        data: pdu.expect(0x30, "the varbind list")?,
    };
    let mut varbind = Reader {
        data: list.expect(0x30, "the varbind")?,
    };
    let oid = read_oid(varbind.expect(0x06, "the name")?)?;
    match varbind.tlv()? {
        // noSuchObject, noSuchInstance, endOfMibView.
        (0x80..=0x82, _) => Ok(None),
        (0x04, text) => Ok(Some((oid, text.to_vec()))),
        _ => Ok(Some((oid, Vec::new()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oid(text: &str) -> Oid {
        text.parse().unwrap()
    }

    #[test]
    fn the_request_is_the_ber_net_snmp_sends() {
        // The packet of `snmpgetnext -v2c -c public HOST
        // .1.3.6.1.4.1.20267.400` (net-snmp 5.9.3), received by a UDP
        // listener on loopback; its request id was 0x16848593.
        let captured = "302b02010104067075626c6963a11e0204168485930201000201003010300e\
                        060a2b06010401819e2b83100500";
        let expected: Vec<u8> = (0..captured.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&captured[i..i + 2], 16).unwrap())
            .collect();
        let request = get_next_request("public", 0x1684_8593, &oid(".1.3.6.1.4.1.20267.400"));
        assert_eq!(request, expected);
        assert_eq!(integer(128), [0x02, 0x02, 0x00, 0x80]);
        assert_eq!(integer(-1), [0x02, 0x01, 0xff]);
        assert_eq!(tlv(0x04, &[0; 200])[..3], [0x04, 0x81, 200]);
    }

    /// A Response as snmpd sends it, built from the same primitives.
    fn response(request_id: i32, status: i64, name: &Oid, value: &[u8]) -> Vec<u8> {
        let varbind = tlv(
            0x30,
            &[tlv(0x06, &oid_content(name)), value.to_vec()].concat(),
        );
        let pdu = tlv(
            0xa2,
            &[
                integer(i64::from(request_id)),
                integer(status),
                integer(0),
                tlv(0x30, &varbind),
            ]
            .concat(),
        );
        tlv(0x30, &[integer(1), tlv(0x04, b"public"), pdu].concat())
    }

    #[test]
    fn answers_are_read_and_garbage_is_an_error() {
        let next = oid(".1.3.6.1.4.1.20267.400.1.1.0");
        let gauge = [0x42, 0x01, 0x05];
        assert_eq!(
            read_response(&response(7, 0, &next, &gauge), 7),
            Ok(Some(next.clone()))
        );
        assert_eq!(
            read_response_value(&response(7, 0, &next, &tlv(0x04, b"AgentX")), 7),
            Ok(Some((next.clone(), b"AgentX".to_vec())))
        );
        assert_eq!(
            read_response_value(&response(7, 0, &next, &gauge), 7),
            Ok(Some((next.clone(), Vec::new())))
        );
        let end = [0x82, 0x00];
        assert_eq!(read_response(&response(7, 0, &next, &end), 7), Ok(None));
        assert!(read_response(&response(8, 0, &next, &gauge), 7).is_err());
        assert_eq!(read_response(&response(7, 2, &next, &gauge), 7), Ok(None));
        assert!(read_response(&response(7, 5, &next, &gauge), 7).is_err());
        let good = response(7, 0, &next, &gauge);
        for cut in 0..good.len() {
            assert!(read_response(&good[..cut], 7).is_err(), "cut at {cut}");
        }
        for garbage in [
            &b""[..],
            b"\x30\x84\xff\xff\xff\xff",
            b"\x30\x85\x00",
            b"\x02\x01\x01",
        ] {
            assert!(read_response(garbage, 7).is_err());
        }
        assert!(read_oid(&[0xff; 6]).is_err());
        assert!(read_oid(&[0x2b, 0x86]).is_err());
    }
}
