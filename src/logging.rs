//! Logging with tracing: to journald when systemd started us (or when asked),
//! otherwise to stderr, with colours only on a terminal.

use crate::config::LogTarget;
use std::io::IsTerminal;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::EnvFilter;

/// `RUST_LOG` wins over `-v` when set.
pub fn init(verbosity: u8, target: LogTarget) {
    let level = match verbosity {
        0 => "info",
        1 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    // systemd sets JOURNAL_STREAM when our stderr is connected to the journal.
    let journald = match target {
        LogTarget::Journald => true,
        LogTarget::Auto => std::env::var_os("JOURNAL_STREAM").is_some(),
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
