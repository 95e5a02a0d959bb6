//! The one face of the cadenced parts of a poll ([`Watch`]): the TLS
//! certificate, CLIENT LIST, the key checks, new slow log entries, the
//! big-key sampler, a sentinel's masters and ACL LOG each decide when they
//! ask, ask over the poll's [`Client`], keep what they need to tell the new
//! from the seen, and hand the poll their rows and their facts. The poller
//! runs them in a list and names nothing inside them, as redis_exporter's
//! `scrapeRedisHost` is a list of extracts.
//!
//! Each watch's file keeps its state and its asking; the faces are here,
//! beside the trait: the rows they hand on are the files' own types, which
//! `readings` names, so a face in a watch's file would lean on `readings`
//! round a circle.

use super::acl_log::AclWatch;
use super::big_keys::BigKeyCheck;
use super::certificate_watch::CertificateWatch;
use super::client::Client;
use super::clients::ClientList;
use super::failover::FailoverWatch;
use super::info::Info;
use super::keys::KeyCheck;
use super::observation::RedisObservation;
use super::readings::{Extras, InstanceStatus};
use super::slowlog::SlowlogWatch;
use crate::smi::unix_now;
use crate::x509::ServerCertificate;
use futures_util::future::BoxFuture;
use std::time::Instant;
use tracing::debug;

/// What a watch is told of the poll it runs in.
pub struct Poll<'a> {
    /// The INFO this poll read (with CLUSTER INFO's fields on a cluster
    /// node).
    pub info: &'a Info,
    /// When the poll began its watches.
    pub now: Instant,
    /// Whether this poll reads the costly parts (`slow_refresh`).
    pub slow: bool,
}

/// A cadenced part of a poll. Each method but [`Watch::run`] is optional:
/// a watch says only what it has.
pub trait Watch: Send {
    /// Whether it asks in this poll (a cadence of its own; by default,
    /// every poll).
    fn due(&self, _poll: &Poll<'_>) -> bool {
        true
    }

    /// Whether its asking counts in the poll's time (`redisPollMillis`).
    /// One that opens a connection of its own now and then does not: it
    /// would spike the graph. Those run after a successful poll is timed.
    fn timed(&self) -> bool {
        true
    }

    /// Asks the server over `client` what it watches. A connection lost
    /// on the way is the watch's to say; the poll stands, as INFO was read,
    /// and the next poll connects again.
    fn run<'a>(&'a mut self, client: &'a mut Client, poll: &'a Poll<'a>) -> BoxFuture<'a, ()>;

    /// Hands its rows to the poll's `extras`, which the catalogue's writer
    /// turns into the instance's part (`readings::instance_part`).
    fn serve(&self, _extras: &mut Extras) {}

    /// Reports its facts to what the poll observed, for the judge.
    fn report(&mut self, _seen: &mut RedisObservation) {}

    /// What it adds to the instance's row of `redisInstanceTable`, served
    /// even when the poll failed.
    fn status(&self, _status: &mut InstanceStatus) {}

    /// A new connection (perhaps to a new server, with a new ACL), and the
    /// certificate its handshake showed (`rediss://` only).
    fn new_connection(&mut self, _certificate: Option<&ServerCertificate>) {}
}

/// TLS (`rediss://`) only: looked at again every `cert_check_interval` by a
/// handshake of its own.
impl Watch for CertificateWatch {
    /// An hourly handshake in the poll's time would spike its graph.
    fn timed(&self) -> bool {
        false
    }

    fn run<'a>(&'a mut self, client: &'a mut Client, _poll: &'a Poll<'a>) -> BoxFuture<'a, ()> {
        Box::pin(self.refresh(client.instance()))
    }

    fn report(&mut self, seen: &mut RedisObservation) {
        seen.certificate_expiring = self.expiring(unix_now());
    }

    fn status(&self, status: &mut InstanceStatus) {
        status.certificate = self.certificate(unix_now());
    }

    fn new_connection(&mut self, certificate: Option<&ServerCertificate>) {
        let name = self.name().to_string();
        self.connected(&name, certificate.cloned());
    }
}

/// CLIENT LIST every `client_list_interval`: O(connections) for the server.
impl Watch for ClientList {
    fn due(&self, poll: &Poll<'_>) -> bool {
        self.due_at(poll.now)
    }

    fn run<'a>(&'a mut self, client: &'a mut Client, _poll: &'a Poll<'a>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let reply = client.optional("CLIENT", &["LIST"]).await;
            let refused = client.refused("CLIENT LIST");
            let over_budget = reply.is_none() && client.over_budget();
            let name = client.instance().name.clone();
            self.answered(&name, reply, refused, over_budget);
        })
    }

    fn serve(&self, extras: &mut Extras) {
        extras.clients = self.latest();
    }
}

/// The keys `check_keys` names, every `check_keys_interval`.
impl Watch for KeyCheck {
    fn due(&self, poll: &Poll<'_>) -> bool {
        self.due_at(poll.now)
    }

    fn run<'a>(&'a mut self, client: &'a mut Client, _poll: &'a Poll<'a>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            // Not on a connection an over-long reply ended in this poll.
            if !client.is_connected() {
                return;
            }
            if let Err(lost) = self.ask(client).await {
                debug!(instance = %client.instance().name, "key check: {}; connecting again at the next poll", lost.text);
            }
        })
    }

    fn serve(&self, extras: &mut Extras) {
        extras.keys = self.latest();
    }
}

/// The big-key sampler and HOTKEYS GET, on their interval.
impl Watch for BigKeyCheck {
    fn due(&self, _poll: &Poll<'_>) -> bool {
        self.due_at(Instant::now())
    }

    fn run<'a>(&'a mut self, client: &'a mut Client, poll: &'a Poll<'a>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if !client.is_connected() {
                return;
            }
            let dbs: Vec<u32> = poll.info.keyspace().iter().map(|row| row.db).collect();
            let lfu = poll
                .info
                .get("maxmemory_policy")
                .is_some_and(|policy| policy.contains("lfu"));
            if let Err(lost) = self.ask(client, &dbs, lfu).await {
                debug!(instance = %client.instance().name, "big keys: {}; connecting again at the next poll", lost.text);
            }
        })
    }

    fn serve(&self, extras: &mut Extras) {
        extras.big_keys = self.latest();
    }
}

/// New slow log entries on every poll, not on the slow cadence: SLOWLOG
/// GET 1 is O(1), and a notification a `slow_refresh` late is late (the
/// cost: docs/configuration.md).
impl Watch for SlowlogWatch {
    fn run<'a>(&'a mut self, client: &'a mut Client, poll: &'a Poll<'a>) -> BoxFuture<'a, ()> {
        Box::pin(self.poll(client, poll.info, poll.slow))
    }

    fn serve(&self, extras: &mut Extras) {
        if !self.data_server() {
            return;
        }
        extras.slow_commands = self.rows();
        // Its SLOWLOG GET 1 stands for the slow cadence's.
        if self.enabled() {
            extras.slowlog_last = self.newest();
        }
    }

    fn report(&mut self, seen: &mut RedisObservation) {
        seen.slow_commands = self.take_due();
    }

    fn new_connection(&mut self, _certificate: Option<&ServerCertificate>) {
        SlowlogWatch::new_connection(self);
    }
}

/// A sentinel's masters, every poll: SENTINEL MASTERS and one pipeline of
/// SENTINEL CKQUORUM.
impl Watch for FailoverWatch {
    fn run<'a>(&'a mut self, client: &'a mut Client, poll: &'a Poll<'a>) -> BoxFuture<'a, ()> {
        Box::pin(self.poll(client, poll.info))
    }

    fn serve(&self, extras: &mut Extras) {
        if let Some(listed) = self.listed() {
            extras.sentinel_masters = listed.to_vec();
            extras.sentinel_events = self.rows();
        }
    }

    fn report(&mut self, seen: &mut RedisObservation) {
        seen.sentinel_events = self.take_news();
    }

    /// Perhaps a new ACL: CKQUORUM is asked again.
    fn new_connection(&mut self, _certificate: Option<&ServerCertificate>) {
        FailoverWatch::new_connection(self);
    }
}

/// `ACL LOG 1` every poll, the whole log when its head changed.
impl Watch for AclWatch {
    fn run<'a>(&'a mut self, client: &'a mut Client, _poll: &'a Poll<'a>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if client.is_connected() {
                self.read(client, unix_now().saturating_mul(1000)).await;
            }
        })
    }

    fn serve(&self, extras: &mut Extras) {
        extras.acl = self.latest();
    }

    fn report(&mut self, seen: &mut RedisObservation) {
        seen.acl_refusals = self.take_refusals();
        seen.acl_newest_row = self.newest_row();
    }
}
