//! Hostile "Redis" servers (issue 24, review M3): a listener on 127.0.0.1
//! that answers every command with the same crafted reply, and the
//! replies the review measured, each about 4 MiB (`max_reply_bytes`'
//! default), each costing the agent far more once parsed than on the wire
//! when nothing but bytes was counted.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// About the size of each reply: just under the default `max_reply_bytes`.
pub const HOSTILE_REPLY_BYTES: usize = (4 << 20) - 4096;

/// `*N` whose N elements are each `depth` levels of `header` around `:1`,
/// N as large as fits `HOSTILE_REPLY_BYTES`.
fn nested(header: &str, depth: usize) -> Vec<u8> {
    let mut one = header.repeat(depth).into_bytes();
    one.extend(b":1\r\n");
    let n = (HOSTILE_REPLY_BYTES - 16) / one.len();
    let mut reply = format!("*{n}\r\n").into_bytes();
    for _ in 0..n {
        reply.extend(&one);
    }
    reply
}

/// `prefix` then `element` as many times as fit: `*N` of `:1`, `%N` of
/// `:1 :1`.
fn flat(kind: char, per: usize, element: &[u8]) -> Vec<u8> {
    let n = (HOSTILE_REPLY_BYTES - 16) / element.len();
    let mut reply = format!("{kind}{}\r\n", n / per).into_bytes();
    for _ in 0..(n / per) * per {
        reply.extend(element);
    }
    reply
}

/// The hostile replies of the review, by name: one bulk string (what the
/// byte cap already bounded), a flat array, a flat map, 89-deep arrays,
/// sets and maps, 40-deep attributes; and two that stay just within the
/// agent's value and depth limits, the most a reply can cost it now.
pub fn hostile_replies() -> Vec<(&'static str, Vec<u8>)> {
    let mut bulk = format!("${}\r\n", HOSTILE_REPLY_BYTES - 32).into_bytes();
    bulk.resize(bulk.len() + HOSTILE_REPLY_BYTES - 32, b'x');
    bulk.extend(b"\r\n");
    // 99,999 values of 8-deep `*1` (11,111 × 9 values) or of `:1`.
    let mut deep_within = b"*11111\r\n".to_vec();
    for _ in 0..11_111 {
        deep_within.extend(b"*1\r\n".repeat(7));
        deep_within.extend(b":1\r\n");
    }
    let mut flat_within = b"*99999\r\n".to_vec();
    flat_within.extend(b":1\r\n".repeat(99_999));
    vec![
        ("one bulk string", bulk),
        ("*N of :1", flat('*', 1, b":1\r\n")),
        ("%N map of :1 :1", flat('%', 2, b":1\r\n")),
        ("N x 89-deep *1 arrays", nested("*1\r\n", 89)),
        ("N x 89-deep ~1 sets", nested("~1\r\n", 89)),
        ("N x 89-deep %1 maps", nested("%1\r\n:1\r\n", 89)),
        ("N x 40-deep attributes", nested("|1\r\n+a\r\n+b\r\n", 40)),
        ("within the limits: 11,111 x 8-deep *1", deep_within),
        ("within the limits: *99999 of :1", flat_within),
    ]
}

/// A listener on 127.0.0.1 that answers every command with `reply`, until
/// dropped; it counts the connections it served.
pub struct HostileServer {
    port: u16,
    stop: Arc<AtomicBool>,
    served: Arc<AtomicUsize>,
}

impl HostileServer {
    pub fn start(reply: Vec<u8>) -> HostileServer {
        let listener = TcpListener::bind(("127.0.0.1", 0)).expect("binding a hostile server");
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let served = Arc::new(AtomicUsize::new(0));
        let (s, c) = (stop.clone(), served.clone());
        let reply = Arc::new(reply);
        std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(600);
            while !s.load(Ordering::Relaxed) && Instant::now() < deadline {
                let Ok((mut stream, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                };
                c.fetch_add(1, Ordering::Relaxed);
                let reply = reply.clone();
                let stop = s.clone();
                std::thread::spawn(move || {
                    let _ = stream.set_nonblocking(false);
                    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
                    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
                    let mut request = [0u8; 4096];
                    // Each read of a command is answered in full; the agent
                    // closes the connection when a reply is refused.
                    while !stop.load(Ordering::Relaxed) {
                        match stream.read(&mut request) {
                            Ok(0) | Err(_) => break,
                            Ok(_) => {
                                if stream.write_all(&reply).is_err() {
                                    break;
                                }
                            }
                        }
                    }
                });
            }
        });
        HostileServer { port, stop, served }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Connections accepted so far.
    pub fn served(&self) -> usize {
        self.served.load(Ordering::Relaxed)
    }
}

impl Drop for HostileServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_reply_is_about_four_mib_and_well_framed_at_its_start() {
        for (name, reply) in hostile_replies() {
            assert!(reply.len() <= 4 << 20, "{name}: {}", reply.len());
            if !name.starts_with("within") {
                assert!(reply.len() > 3 << 20, "{name}: {}", reply.len());
            }
            assert!(b"$*%".contains(&reply[0]), "{name}");
        }
    }
}
