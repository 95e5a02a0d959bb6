//! redis-snmp: a Net-SNMP AgentX subagent that serves Redis (and Puppet)
//! metrics from an in-memory snapshot.
//!
//! # Map of the modules
//!
//! Data flows one way, from the sources to the AgentX session. The modules
//! stand in layers, each naming only the layers below its own: the values
//! (`oid`, `smi`, …) at the bottom, then the catalogue and the snapshot,
//! the protocol and the thresholds, the settings, the sources, the
//! consumers, and the hub and the doctor that only `main.rs` reaches; and
//! no two files import each other, directly or round a circle.
//! `tests/architecture.rs` states the order and checks both for every
//! file.
//!
//! ```text
//!  Redis ──INFO…──▶ redis::poller ─┐ one stream: Reading { parts, observation }
//!  Puppet files ──▶ puppet::watcher ┤ (each source runs its own loop)
//!  events.jsonl ──▶ puppet::events ─┴──────────▶ hub ─stage──▶ snapshot::Store ─swap─▶ Snapshot
//!                                  (one task)    │ judge, alarms                          │ reads
//!                                                 └─due?─▶ notify ─Notify─▶ agentx::session ◀─AgentX─▶ snmpd
//!             metrics: the catalogue every step reads (objects, tables, enumerations, notifications)
//! ```
//!
//! - [`oid`], [`smi`]: object identifiers and SMIv2 values.
//! - [`metrics`]: the catalogue: every served object (name, OID, syntax,
//!   source), every table (INDEX or AUGMENTS, the shape of its rows, its
//!   OpenNMS resource type), the enumerations as typed enums, the
//!   notifications as typed enums too ([`metrics::RedisEvent`],
//!   [`metrics::PuppetEvent`]: each declared once with its number, its
//!   objects placed at their instances, and its rate limit), what OpenNMS
//!   collects (groups, aliases, resource types), and where each module's
//!   objects sit ([`metrics::Layout`]). The
//!   MIB files are tested against it; the OpenNMS data collection is
//!   generated from it.
//! - [`snapshot`]: the immutable, sorted view the agent answers from, the
//!   store that merges the sources' parts into it, and [`snapshot::Reading`],
//!   what a source produces.
//! - [`agentx`]: the RFC 2741 protocol: PDUs ([`agentx::pdu`]: types,
//!   decode, encode, the round-trip check), the master's address
//!   ([`agentx::address`]), Get/GetNext/GetBulk semantics
//!   ([`agentx::answer`]), the socket ([`agentx::transport`]) and the
//!   session that connects, registers, answers and reconnects
//!   ([`agentx::session`]: a task on the runtime connects, Pings, forwards
//!   notifications and stops it; each connection is answered by a blocking
//!   thread of its own, reading the snapshot lock-free).
//! - [`redis`]: the connection on our terms ([`redis::connection`]: one
//!   address, bounded replies, its errors in stable words; the password
//!   only to a server of the expected user, [`redis::peer`]), the INFO
//!   parser ([`redis::info`]; Redis 8's Keysizes, Threads and Modules
//!   lines in [`redis::info_sections`]), the
//!   replies of the optional commands ([`redis::replies`]), INFO to
//!   snapshot rows ([`redis::readings`]), what a poll observed
//!   ([`redis::observation`]), the poller ([`redis::poller`]: its own
//!   loop sending on the reading stream; INFO and the slow cadence,
//!   [`redis::cadence`], then its watches, each of one face,
//!   [`redis::watch`]), CLIENT LIST
//!   per name and user ([`redis::clients`]), the keys and streams an
//!   operator names ([`redis::keys`]: bounded SCAN, pipelined checks,
//!   aliases), the events a poll finds besides its values, each a watch
//!   with its own baseline (new slow log entries, [`redis::slowlog`];
//!   ACL refusals and their bursts, [`redis::acl_log`]; a sentinel's
//!   failovers, [`redis::failover`]), the opt-in big-key sampler and hot
//!   keys ([`redis::big_keys`], [`redis::hot_keys`]), and the server's TLS
//!   certificate (read with [`x509`];
//!   [`redis::certificate_watch`]: looked at again, and how near its end).
//! - [`puppet`]: Puppet's run summary, run report and lock files, read
//!   safely, watched with inotify, and turned into PUPPET-AGENT-MIB rows
//!   ([`puppet::objects`]) and observations, sent on the reading stream
//!   with the time passing between changes ([`puppet::watcher`]); successive runs and their
//!   convergence ([`puppet::runs`]); its events log (`--logdest …jsonl`)
//!   parsed line by line ([`puppet::events_log`]), tailed across rotation
//!   and truncation ([`puppet::tail`]) while only root may write it
//!   ([`puppet::trust`]) and followed on a thread of its own
//!   ([`puppet::events`]); and the agent's own certificate, CA and CRL
//!   ([`puppet::certificates`], with [`x509`]).
//! - [`judge`]: which transitions of a source are due as which typed
//!   notification, with a baseline; [`judge::Observation`], what the
//!   reading stream carries of every source. Sources report facts (counts,
//!   ids, times, states, and the baselines only they can keep), in the
//!   observation types beside their faces ([`redis::observation`],
//!   [`puppet::observation`]); the judge names every notification (Redis's
//!   rules in [`judge::redis`], Puppet's in [`judge::puppet`]). Pure: no
//!   lock, no channel, no I/O.
//! - [`notify`]: sending a notification as its definition says
//!   (switches, rate limits in `notify::limits`, varbinds), keyed by the
//!   typed notification, never by its name; it names no source.
//! - [`alarms`]: the agent's own thresholds (`[[alarm]]`): each value a
//!   poll produced judged against a trigger, a count and a rearm value,
//!   the raised ones the rows of `redisAlarmTable`; the hub runs it.
//! - [`hub`]: one task takes the reading stream in turn: stages each
//!   reading's parts, has the judge and the alarms say what is due, and
//!   sends it with the reading's own values; it owns the judge, the alarms
//!   and the notifier, and forgets a removed instance (its readings still
//!   on the stream dropped). Its [`hub::Hands`] start the pollers for
//!   [`reload`].
//! - [`config`]: the TOML file and the command line merged into one
//!   validated configuration; [`cli`] holds the clap definition. Every
//!   settings type lives here, the sources' too (`[[redis]]`,
//!   [`config::PuppetPaths`] and the events log's, `[discovery]`'s), so the
//!   configuration names no source: the sources read it.
//! - [`discovery`]: `[discovery] local`: the redis-server and
//!   valkey-server processes of this host and their listening sockets,
//!   read from `/proc` (`/proc/self/net` for the tables, which the unit's
//!   `ProcSubset=pid` leaves), added to the configured instances under
//!   stable names (at start-up, on each reload, every `interval`); trusted
//!   with no password, and refusing what another user can plant
//!   ([`discovery::trust`]: their processes, a link for a socket, an
//!   address that is not loopback).
//! - [`reload`]: SIGHUP: the configuration read again and its Redis
//!   instances matched by name (kept, restarted, removed, added at a new
//!   index) and its alarms put in force (kept, or rearmed and started
//!   again) without touching the AgentX session; what needs a restart is
//!   said in the log. It is handed [`reload::Instances`] (the hub's
//!   `Hands`); `main.rs`'s supervisor runs it on SIGHUP and on discovery's
//!   rescans.
//! - [`kick`]: `redis-snmp kick`, the reacting half, run by snmptrapd as
//!   a traphandle on the manager: a `Notify[kick -> ROLE]` event from a
//!   known host runs Puppet on ROLE's hosts, detached, with loops stopped
//!   by generation ([`kick::judge`], pure) and every kick recorded
//!   ([`kick::ledger`]: a local directory written without following
//!   symlinks, or a Redis two managers share, reached by the agent's own
//!   connection to Redis); it reads the catalogue's typed notifications
//!   and nothing else of the agent; only `main.rs` uses it.
//! - [`doctor`]: `redis-snmp doctor`, the whole path checked as
//!   installed, each problem with its fix; only `main.rs` uses it.
//! - [`secret`]: passwords: where they come from, and keeping them out of
//!   argv, logs and errors; [`text`]: what others wrote (a socket's path,
//!   a server's error) made printable before a terminal or a log sees it;
//!   [`x509`]: the bounded DER reader of certificates (notAfter, names)
//!   and CRLs (nextUpdate), for a Redis server's TLS certificate and the
//!   Puppet agent's own.
//! - [`logging`]: tracing to stderr or journald; [`daemon`]: detaching
//!   from the terminal when not run with `-n`, the PID file, no core
//!   dumps; [`process`]: whether a PID runs, even one `/proc` hides, and
//!   users by name and uid; [`proc_net`]: the kernel's socket addresses
//!   as `/proc/self/net/tcp` prints them (discovery, and the owner check
//!   before a password is sent).
//!
//! `main.rs` only wires these together.

pub mod agentx;
pub mod alarms;
pub mod cli;
pub mod config;
pub mod daemon;
pub mod discovery;
pub mod doctor;
pub mod hub;
pub mod judge;
pub mod kick;
pub mod logging;
pub mod metrics;
pub mod notify;
pub mod oid;
pub mod proc_net;
pub mod process;
pub mod puppet;
pub mod redis;
pub mod reload;
pub mod secret;
pub mod smi;
pub mod snapshot;
pub mod text;
pub mod x509;
