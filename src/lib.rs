//! redis-snmp: a Net-SNMP AgentX subagent that serves Redis (and Puppet)
//! metrics from an in-memory snapshot.
//!
//! # Map of the modules
//!
//! Data flows one way, from the sources to the AgentX session:
//!
//! ```text
//!  redis::poller ──INFO──▶ redis::info ──▶ metrics (the table) ──▶ snapshot::Store
//!                                                                      │ atomic swap
//!  snmpd ◀──AgentX──▶ agentx::session ── reads ─────────────────────────┘
//! ```
//!
//! - [`oid`], [`smi`]: object identifiers and SMIv2 values.
//! - [`metrics`]: the one declarative table of every served object: name,
//!   OID, syntax and source. The MIB files are tested against it.
//! - [`snapshot`]: the immutable, sorted view the agent answers from, and the
//!   store that rebuilds it when a source publishes.
//! - [`agentx`]: the RFC 2741 protocol: framing and PDUs ([`agentx::pdu`]),
//!   the master's address ([`agentx::address`]), and the session that
//!   connects, registers, answers and reconnects ([`agentx::session`]).
//! - [`redis`]: the INFO parser ([`redis::info`]) and the poller that turns
//!   one instance's INFO into snapshot parts ([`redis::poller`]).
//! - [`config`]: the TOML file and the command line merged into one
//!   validated configuration; [`cli`] holds the clap definition.
//! - [`secret`]: passwords: where they come from, and keeping them out of
//!   argv, logs and errors.
//! - [`puppet`]: Puppet run state: run file readers and an inotify watcher.
//! - [`logging`]: tracing to stderr or journald; [`daemon`]: detaching
//!   from the terminal when not run with `-n`.
//!
//! `main.rs` only wires these together.

pub mod agentx;
pub mod cli;
pub mod config;
pub mod daemon;
pub mod logging;
pub mod metrics;
pub mod notify;
pub mod oid;
pub mod puppet;
pub mod redis;
pub mod secret;
pub mod smi;
pub mod snapshot;
