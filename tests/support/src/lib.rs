//! The integration-test harness: real `redis-server`, real `snmpd`, the real
//! agent binary and the real net-snmp command-line tools, all private to one
//! test.
//!
//! Every integration test program uses it as the dev-dependency `testkit`. Each server binds only to
//! 127.0.0.1 (or a unix socket in its own temp dir), or to an address of a
//! host in a private network namespace ([`netns`]), on a port from
//! [`free_port`], and is owned by a guard that kills it and reaps it by PID
//! when dropped, also when the test panics. When a test panics, the guards
//! print the tail of their logs to stderr, which the test runner shows with
//! the failure.
//!
//! Nothing here uses system paths: no port 161/6379, no `/var/agentx`, no
//! `/var/lib/snmp` (see [`Snmpd`] and [`SnmpClient`] for how net-snmp is kept
//! away from its defaults).
//!
//! One server is shared by the whole run instead: the real Puppet server
//! ([`puppet_server`]: puppetserver, PuppetDB and PostgreSQL in a systemd
//! container that `scripts/puppet-server.sh` starts once per run, at
//! `10.233.47.2`), which tests reach with real `puppet agent` runs in
//! directories of their own, each test with a Puppet environment of its
//! own, and skip, saying why, without.

pub mod agent;
pub mod agent_config;
pub mod debian_build;
pub mod figures;
pub mod files;
pub mod generated;
pub mod guest;
pub mod hostile;
pub mod kick;
pub mod ledger;
pub mod netns;
pub mod oids;
pub mod paths;
pub mod pki;
pub mod ports;
pub mod process;
pub mod puppet;
pub mod puppet_server;
pub mod redis;
pub mod servers;
pub mod snmp_tools;
pub mod snmpd;
pub mod snmptrapd;
pub mod sockets;
pub mod unit;
pub mod usm;

pub use agent::*;
pub use agent_config::AgentConfig;
pub use figures::*;
pub use files::*;
pub use hostile::{hostile_replies, HostileServer};
pub use oids::*;
pub use paths::*;
pub use ports::*;
pub use process::*;
pub use puppet::*;
pub use redis::*;
pub use snmp_tools::*;
pub use snmpd::*;
pub use snmptrapd::*;
pub use sockets::*;
pub use usm::*;
