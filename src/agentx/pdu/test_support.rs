//! For the unit tests: an encoder of what the master sends, written
//! independently of ours, in either byte order, and small helpers.

use super::*;
use crate::oid::Oid;
// ----- an independent encoder for what the master sends, either byte order -----

pub struct W {
    be: bool,
    buf: Vec<u8>,
}

impl W {
    pub fn new(be: bool, ty: u8, flags: u8, sid: u32, tid: u32, pid: u32) -> W {
        let mut w = W {
            be,
            buf: Vec::new(),
        };
        let order = if be { flags::NETWORK_BYTE_ORDER } else { 0 };
        w.buf.extend_from_slice(&[1, ty, flags | order, 0]);
        w.u32(sid);
        w.u32(tid);
        w.u32(pid);
        w.u32(0);
        w
    }
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(b);
        self
    }
    pub fn u16(&mut self, v: u16) -> &mut Self {
        let b = if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.bytes(&b)
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        let b = if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.bytes(&b)
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        let b = if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.bytes(&b)
    }
    /// `prefix` 0 writes the sub-ids plainly, else `subids` follow 1.3.6.1.prefix.
    pub fn oid_raw(&mut self, prefix: u8, subids: &[u32], include: bool) -> &mut Self {
        self.bytes(&[subids.len() as u8, prefix, include as u8, 0]);
        for &s in subids {
            self.u32(s);
        }
        self
    }
    pub fn oid(&mut self, subids: &[u32], include: bool, compress: bool) -> &mut Self {
        match subids {
            [1, 3, 6, 1, p @ 1..=255, rest @ ..] if compress => {
                self.oid_raw(*p as u8, rest, include)
            }
            _ => self.oid_raw(0, subids, include),
        }
    }
    pub fn octets(&mut self, b: &[u8]) -> &mut Self {
        self.u32(b.len() as u32).bytes(b);
        while !self.buf.len().is_multiple_of(4) {
            self.buf.push(0);
        }
        self
    }
    pub fn vb(&mut self, ty: u16, name: &[u32]) -> &mut Self {
        self.u16(ty).u16(0).oid(name, false, true)
    }
    pub fn done(&mut self) -> Vec<u8> {
        let len = (self.buf.len() - HEADER_LEN) as u32;
        let b = if self.be {
            len.to_be_bytes()
        } else {
            len.to_le_bytes()
        };
        self.buf[16..20].copy_from_slice(&b);
        self.buf.clone()
    }
}

pub fn head(bytes: &[u8]) -> Result<Header, PduError> {
    parse_header(bytes[..HEADER_LEN].try_into().unwrap())
}

pub fn parse(bytes: &[u8]) -> Result<Incoming, PduError> {
    decode(&head(bytes)?, &bytes[HEADER_LEN..])
}

pub fn oid(s: &[u32]) -> Oid {
    Oid::new(s.to_vec()).unwrap()
}

pub const REDIS: [u32; 8] = [1, 3, 6, 1, 4, 1, 20267, 400];

pub fn redis(suffix: &[u32]) -> Oid {
    oid(&REDIS).child(suffix).expect("a short test OID")
}

pub fn ids() -> Ids {
    Ids {
        session_id: 7,
        transaction_id: 8,
        packet_id: 9,
    }
}

pub fn response(
    error: ErrorStatus,
    index: u16,
    varbinds: &[(Oid, VarValue<'_>)],
    now: u64,
) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut w = ResponseWriter::new(&mut buf, ids(), 4242, error, index);
    for (name, value) in varbinds {
        w.varbind(name, *value, now);
    }
    w.finish();
    buf
}

pub fn response_varbinds(bytes: &[u8]) -> Vec<VarBind> {
    match parse(bytes) {
        Ok(Incoming::Response { varbinds, .. }) => varbinds,
        other => panic!("not a response: {other:?}"),
    }
}
