//! Where the AgentX master listens, in net-snmp's syntax (`agentXSocket`).

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// net-snmp's default master socket.
pub const DEFAULT_AGENTX_SOCKET: &str = "/var/agentx/master";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentxAddress {
    Unix(PathBuf),
    /// Host name or address, and port (AgentX's registered port is 705).
    Tcp(String, u16),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("AgentX address {0:?} is not one of /path, unix:/path, tcp:host:port")]
pub struct AddressError(String);

impl FromStr for AgentxAddress {
    type Err = AddressError;

    /// Accepts `/path`, `unix:/path`, `tcp:host:port`, `tcp6:[::1]:port`
    /// and `tcp:port` (net-snmp reads a lone port as localhost).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || AddressError(s.to_string());
        let s = s.trim();
        if s.starts_with('/') {
            return Ok(AgentxAddress::Unix(PathBuf::from(s)));
        }
        if let Some(path) = s.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(bad());
            }
            return Ok(AgentxAddress::Unix(PathBuf::from(path)));
        }
        let rest = s
            .strip_prefix("tcp:")
            .or_else(|| s.strip_prefix("tcp6:"))
            .ok_or_else(bad)?;
        let (host, port) = match rest.rsplit_once(':') {
            Some((host, port)) => (host, port),
            None => ("localhost", rest),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let port: u16 = port.parse().map_err(|_| bad())?;
        if host.is_empty() || port == 0 {
            return Err(bad());
        }
        Ok(AgentxAddress::Tcp(host.to_string(), port))
    }
}

impl fmt::Display for AgentxAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentxAddress::Unix(path) => write!(f, "unix:{}", path.display()),
            AgentxAddress::Tcp(host, port) if host.contains(':') => {
                write!(f, "tcp:[{host}]:{port}")
            }
            AgentxAddress::Tcp(host, port) => write!(f, "tcp:{host}:{port}"),
        }
    }
}

impl Default for AgentxAddress {
    fn default() -> Self {
        AgentxAddress::Unix(PathBuf::from(DEFAULT_AGENTX_SOCKET))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> AgentxAddress {
        s.parse().unwrap()
    }

    #[test]
    fn net_snmp_forms() {
        assert_eq!(parse("/var/agentx/master"), AgentxAddress::default());
        assert_eq!(
            parse("unix:/tmp/x.sock"),
            AgentxAddress::Unix("/tmp/x.sock".into())
        );
        assert_eq!(
            parse("tcp:localhost:705"),
            AgentxAddress::Tcp("localhost".into(), 705)
        );
        assert_eq!(
            parse("tcp:705"),
            AgentxAddress::Tcp("localhost".into(), 705)
        );
        assert_eq!(
            parse("tcp6:[::1]:705"),
            AgentxAddress::Tcp("::1".into(), 705)
        );
        assert_eq!(parse("tcp6:[::1]:705").to_string(), "tcp:[::1]:705");
    }

    #[test]
    fn refuses_what_it_cannot_use() {
        for bad in [
            "",
            "unix:",
            "udp:localhost:161",
            "tcp:host:",
            "tcp:host:0",
            "tcp:h:99999",
            "x",
        ] {
            assert!(bad.parse::<AgentxAddress>().is_err(), "{bad:?} accepted");
        }
    }
}
