//! `[discovery]` (and `--discover`): whether the Redis and Valkey servers
//! of this host are polled without being named, how often they are looked
//! for, and which addresses are taken; as written, by default, and
//! validated. `src/discovery.rs` reads the settings; the configuration
//! names nothing of it.

use crate::cli::Cli;
use serde::Deserialize;
use std::time::Duration;

/// How discovery is set in the configuration.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DiscoverySettings {
    /// `[discovery] local`.
    pub local: bool,
    /// `[discovery] interval`: scan again this often (besides each
    /// reload); `None` only at start-up and reload.
    pub interval: Option<Duration>,
    /// `[discovery] addresses`: patterns (`*` any text) a found server's
    /// address must match, as shown in `redisInstanceAddress`
    /// (`127.0.0.1:6379`, `unix:/run/redis/*`); empty: every server.
    pub addresses: Vec<String>,
}

/// `[discovery]`: poll the Redis and Valkey servers of this host without
/// naming them.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileDiscovery {
    local: Option<bool>,
    /// Seconds between two scans; 0: only at start-up and reload.
    interval: Option<u64>,
    /// Patterns the addresses of found servers must match.
    addresses: Option<Vec<String>>,
}

/// `[discovery] interval` by default: a scan reads a few small files per
/// process of the host; every 5 minutes a server started since shows
/// without a reload.
pub const DEFAULT_DISCOVERY_INTERVAL_SECS: u64 = 300;

/// `[discovery]` and `--discover`, validated.
pub(super) fn discovery_settings(
    cli: &Cli,
    file: Option<&FileDiscovery>,
) -> Result<DiscoverySettings, String> {
    let local = cli.settings.discover || file.and_then(|f| f.local).unwrap_or(false);
    let secs = file
        .and_then(|f| f.interval)
        .unwrap_or(DEFAULT_DISCOVERY_INTERVAL_SECS);
    if secs > 86_400 || (secs != 0 && secs < 10) {
        return Err(format!(
            "discovery.interval: {secs} is not 0 (no periodic scan) or between 10 and 86400 seconds"
        ));
    }
    let addresses = file.and_then(|f| f.addresses.clone()).unwrap_or_default();
    if addresses.iter().any(|a| a.trim().is_empty()) {
        return Err("discovery.addresses: an empty pattern (\"*\" is every address)".into());
    }
    Ok(DiscoverySettings {
        local,
        interval: (secs > 0).then(|| Duration::from_secs(secs)),
        addresses,
    })
}
