//! Logging with tracing: to journald when systemd started us, when we detach
//! from the terminal on a system that has journald, or when asked; otherwise
//! to stderr, with colours only on a terminal.

use crate::config::LogTarget;
use std::io::IsTerminal;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::EnvFilter;

/// Where journald takes log entries.
const JOURNALD_SOCKET: &str = "/run/systemd/journal/socket";

fn journald_runs() -> bool {
    std::path::Path::new(JOURNALD_SOCKET).exists()
}

/// Whether `auto` means journald: under systemd (it sets JOURNAL_STREAM when
/// our stderr is the journal), or once detached, when stderr is /dev/null
/// and journald is there to take what would otherwise be lost.
fn auto_is_journald(detached: bool) -> bool {
    std::env::var_os("JOURNAL_STREAM").is_some() || (detached && journald_runs())
}

/// Whether a daemon (stderr on /dev/null) logging to `target` would log
/// nothing at all.
pub fn lost_when_detached(target: LogTarget) -> bool {
    match target {
        LogTarget::Stderr => true,
        LogTarget::Auto | LogTarget::Journald => !journald_runs(),
    }
}

/// `RUST_LOG` wins over `-v` when set. `detached`: running as a daemon.
pub fn init(verbosity: u8, target: LogTarget, detached: bool) {
    let level = match verbosity {
        0 => "info",
        1 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    let journald = match target {
        LogTarget::Journald => true,
        LogTarget::Auto => auto_is_journald(detached),
        LogTarget::Stderr => false,
    };
    if journald {
        if let Ok(layer) = tracing_journald::layer() {
            let layer = layer.with_syslog_identifier("redis-snmp".to_string());
            tracing_subscriber::registry()
                .with(filter)
                .with(layer)
                .init();
            return;
        }
    }
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .init();
}
