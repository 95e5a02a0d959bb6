//! The kernel's socket tables, `/proc/self/net/tcp` and `tcp6`, as it
//! prints them: what discovery (which servers listen here) and the Redis
//! connection (who holds the server's end before a password is sent) both
//! read. Under the unit's `ProcSubset=pid` `/proc/net` is hidden but
//! `/proc/self/net` is not: same network namespace, same tables.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// `0100007F:18EB`, or 32 hex digits and a port: the kernel's 32-bit words
/// printed in this host's byte order.
pub fn parse_socket_address(text: &str) -> Option<SocketAddr> {
    let (ip, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |hex: &str| u32::from_str_radix(hex, 16).ok().map(u32::to_ne_bytes);
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(ip)?)),
        32 => {
            let mut bytes = [0u8; 16];
            for (i, chunk) in bytes.chunks_mut(4).enumerate() {
                chunk.copy_from_slice(&word(ip.get(i * 8..i * 8 + 8)?)?);
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_as_the_kernel_prints_them() {
        let v4 = format!("{:08X}:18EB", u32::from_ne_bytes([127, 0, 0, 1]));
        assert_eq!(
            parse_socket_address(&v4),
            Some("127.0.0.1:6379".parse().unwrap())
        );
        let mut v6 = String::new();
        for word in Ipv6Addr::LOCALHOST.octets().chunks(4) {
            v6.push_str(&format!(
                "{:08X}",
                u32::from_ne_bytes(word.try_into().unwrap())
            ));
        }
        assert_eq!(
            parse_socket_address(&format!("{v6}:0050")),
            Some("[::1]:80".parse().unwrap())
        );
        assert_eq!(parse_socket_address("0100007F"), None);
        assert_eq!(parse_socket_address("0100:18EB"), None);
        assert_eq!(parse_socket_address("ZZ00007F:18EB"), None);
    }
}
