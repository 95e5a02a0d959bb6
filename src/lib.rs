//! redis-snmp: a Net-SNMP AgentX subagent that serves Redis (and Puppet)
//! metrics from an in-memory snapshot.
//!
//! # Map of the modules
//!
//! Data flows one way, from the sources to the AgentX session:
//!
//! ```text
//!  redis::poller ──INFO──▶ redis::readings ─┐  (rows of metrics, the table)
//!  puppet::watcher ─files─▶ puppet::objects ─┴─▶ snapshot::Store ──swap──▶ Snapshot
//!         │ observations                                                     │ reads
//!         └──────────▶ notify::Notifier ──Notify──▶ agentx::session ◀──AgentX──▶ snmpd
//! ```
//!
//! - [`oid`], [`smi`]: object identifiers and SMIv2 values.
//! - [`metrics`]: the one declarative table of every served object: name,
//!   OID, syntax and source, and where each module's objects sit
//!   ([`metrics::Layout`]). The MIB files and the OpenNMS files are tested
//!   against it.
//! - [`snapshot`]: the immutable, sorted view the agent answers from, and the
//!   store that merges the sources' parts into it.
//! - [`agentx`]: the RFC 2741 protocol: framing and PDUs ([`agentx::pdu`]),
//!   the master's address ([`agentx::address`]), Get/GetNext/GetBulk
//!   semantics ([`agentx::answer`]), the socket ([`agentx::transport`]) and
//!   the session that connects, registers, answers and reconnects
//!   ([`agentx::session`]).
//! - [`redis`]: the INFO parser ([`redis::info`]), the replies of the
//!   optional commands ([`redis::replies`]), INFO to snapshot rows
//!   ([`redis::readings`]) and the poller, one task per instance
//!   ([`redis::poller`]).
//! - [`puppet`]: Puppet's run summary, run report and lock files, read
//!   safely, watched with inotify, and turned into PUPPET-AGENT-MIB rows
//!   ([`puppet::objects`]).
//! - [`notify`]: which transitions of a source become which notification,
//!   with a baseline, rate limits and switches.
//! - [`config`]: the TOML file and the command line merged into one
//!   validated configuration; [`cli`] holds the clap definition.
//! - [`doctor`]: `redis-snmp doctor`, the whole path checked as
//!   installed, each problem with its fix; it reads the configuration and
//!   uses the Redis connection, and nothing imports it.
//! - [`secret`]: passwords: where they come from, and keeping them out of
//!   argv, logs and errors.
//! - [`logging`]: tracing to stderr or journald; [`daemon`]: detaching
//!   from the terminal when not run with `-n`, the PID file, no core
//!   dumps; [`process`]: whether a PID runs, even one `/proc` hides.
//!
//! `main.rs` only wires these together.

pub mod agentx;
pub mod cli;
pub mod config;
pub mod daemon;
pub mod doctor;
pub mod hub;
pub mod logging;
pub mod metrics;
pub mod notify;
pub mod oid;
pub mod process;
pub mod puppet;
pub mod redis;
pub mod secret;
pub mod smi;
pub mod snapshot;
