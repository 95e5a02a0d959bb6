//! The AgentX session with the master (snmpd): connect, Open, Register,
//! answer requests from the current snapshot, Ping, Close on shutdown, and
//! reconnect with capped, jittered backoff whenever the master goes away.
//!
//! Everything from the master passes through [`pdu::parse_header`] and
//! [`pdu::decode()`]; a bad header breaks the stream's framing and ends the
//! session (we reconnect), a well-framed PDU with a bad body is answered
//! with parseError and the session goes on.

use super::address::AgentxAddress;
use super::answer;
use super::pdu::{self, ErrorStatus, Header, Ids, Incoming, PduError, PduType, ResponseWriter};
use super::transport::{self, MasterReader, MasterWriter};
use crate::oid::Oid;
use crate::smi::unix_now;
use crate::smi::Value;
use crate::snapshot::Store;
use bytes::BytesMut;
use futures_util::StreamExt;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::codec::{Decoder, FramedRead};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

/// A notification's varbinds, starting with sysUpTime.0 and snmpTrapOID.0.
pub type Notification = Vec<(Oid, Value)>;

#[derive(Debug, Clone)]
pub struct SessionConfig {
    pub address: AgentxAddress,
    /// Subtrees to register, e.g. the REDIS-SERVER-MIB root.
    pub subtrees: Vec<Oid>,
    /// Identifies us in the master's session table (the Open PDU's id).
    pub agent_id: Oid,
    pub description: String,
    /// How long to wait for the master's answer to Open and Register; also
    /// sent in Open as the time the master should wait for ours.
    pub timeout: Duration,
    /// How often to Ping the master. A Ping still unanswered when the next
    /// one is due means the session is dead.
    pub ping_interval: Duration,
    /// Largest pause between two connection attempts. Kept under a second so
    /// the subtree is served again within 1 s of snmpd coming back.
    pub backoff_cap: Duration,
}

impl SessionConfig {
    pub fn new(address: AgentxAddress, subtrees: Vec<Oid>, agent_id: Oid) -> Self {
        SessionConfig {
            address,
            subtrees,
            agent_id,
            description: format!("redis-snmp {}", env!("CARGO_PKG_VERSION")),
            timeout: Duration::from_secs(5),
            ping_interval: Duration::from_secs(15),
            backoff_cap: Duration::from_millis(800),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("connection to the master failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("the master sent a bad PDU header: {0}")]
    Framing(#[from] PduError),
    #[error("the master closed the connection")]
    Eof,
    #[error("the master closed the session (reason {0})")]
    ClosedByMaster(u8),
    #[error("the master refused the session: {0:?}")]
    OpenRefused(u16),
    #[error("no answer from the master within {0:?}")]
    Timeout(Duration),
}

/// Why `serve` returned without an error.
enum Ended {
    Shutdown,
}

/// One PDU off the wire: its header, and its body or why the body is bad.
struct Frame {
    header: Header,
    body: Result<Incoming, PduError>,
}

/// Cuts the byte stream into PDUs. Only the header is trusted for framing,
/// after `parse_header` checked version, type and a capped length.
struct FrameDecoder;

impl Decoder for FrameDecoder {
    type Item = Frame;
    type Error = SessionError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, SessionError> {
        let Some(head) = src.get(..pdu::HEADER_LEN) else {
            src.reserve(pdu::HEADER_LEN);
            return Ok(None);
        };
        let mut head_bytes = [0u8; pdu::HEADER_LEN];
        head_bytes.copy_from_slice(head);
        let header = pdu::parse_header(&head_bytes)?;
        let total = pdu::HEADER_LEN + header.payload_len as usize;
        if src.len() < total {
            src.reserve(total - src.len());
            return Ok(None);
        }
        let frame = src.split_to(total);
        let body = pdu::decode(&header, &frame[pdu::HEADER_LEN..]);
        Ok(Some(Frame { header, body }))
    }
}

/// What a packet id we sent is waiting for.
enum Pending {
    Register(Oid),
    Ping,
    Notify,
}

pub struct Session {
    config: SessionConfig,
    store: Arc<Store>,
    notifications: mpsc::Receiver<Notification>,
    shutdown: CancellationToken,
    next_packet_id: u32,
}

impl Session {
    pub fn new(
        config: SessionConfig,
        store: Arc<Store>,
        notifications: mpsc::Receiver<Notification>,
        shutdown: CancellationToken,
    ) -> Self {
        Session {
            config,
            store,
            notifications,
            shutdown,
            next_packet_id: 0,
        }
    }

    /// Run until shutdown: keep a session open, re-establishing it whenever
    /// the master goes away.
    pub async fn run(mut self) {
        let mut attempt: u32 = 0;
        let mut unreachable_logged = false;
        loop {
            if self.shutdown.is_cancelled() {
                return;
            }
            let connecting = tokio::time::timeout(
                self.config.timeout,
                transport::connect(&self.config.address),
            );
            match connecting
                .await
                .unwrap_or_else(|_| Err(std::io::ErrorKind::TimedOut.into()))
            {
                Ok((reader, writer)) => {
                    attempt = 0;
                    unreachable_logged = false;
                    match self.serve(reader, writer).await {
                        Ok(Ended::Shutdown) => return,
                        Err(e) => warn!("AgentX session ended: {e}; reconnecting"),
                    }
                }
                Err(e) => {
                    if !unreachable_logged {
                        let hint = if e.kind() == std::io::ErrorKind::PermissionDenied {
                            " (snmpd's agentXPerms must let this user in: see README, \"Install by hand\")"
                        } else {
                            ""
                        };
                        warn!(
                            "cannot reach the AgentX master at {}: {e}{hint}; retrying until it is back",
                            self.config.address
                        );
                        unreachable_logged = true;
                    }
                }
            }
            let delay = backoff(attempt, self.config.backoff_cap);
            attempt = attempt.saturating_add(1);
            let shutdown = self.shutdown.clone();
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = shutdown.cancelled() => return,
            }
        }
    }

    fn packet_id(&mut self) -> u32 {
        self.next_packet_id = self.next_packet_id.wrapping_add(1);
        self.next_packet_id
    }

    async fn serve(
        &mut self,
        reader: MasterReader,
        writer: MasterWriter,
    ) -> Result<Ended, SessionError> {
        let deadline = self.config.timeout;
        let mut frames = FramedRead::new(reader, FrameDecoder);
        let mut buf = Vec::with_capacity(4096);

        let session_id = self.open(&mut frames, &writer, &mut buf).await?;
        let mut pending: HashMap<u32, Pending> = HashMap::new();
        for subtree in self.config.subtrees.clone() {
            let id = self.packet_id();
            let timeout = timeout_secs(self.config.timeout);
            pdu::encode_register(&mut buf, session_id, id, timeout, 127, &subtree);
            writer.write_all(&buf, deadline).await?;
            pending.insert(id, Pending::Register(subtree));
        }

        let mut ping_timer = tokio::time::interval(self.config.ping_interval);
        ping_timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ping_timer.tick().await; // the first tick is immediate
        let mut ping_outstanding = false;
        // Created once, not per request: each cancelled() future registers
        // itself with the token.
        let shutdown = self.shutdown.clone();
        let mut cancelled = std::pin::pin!(shutdown.cancelled());

        loop {
            tokio::select! {
                // Shutdown first, so a stream of requests cannot delay it.
                biased;
                _ = &mut cancelled => {
                    let id = self.packet_id();
                    pdu::encode_close(&mut buf, session_id, id, CLOSE_REASON_SHUTDOWN);
                    // Best effort: the master drops our registrations anyway
                    // when the socket closes.
                    let _ = writer.write_all(&buf, deadline).await;
                    writer.shutdown();
                    info!("sent Close to the AgentX master, shutting down");
                    return Ok(Ended::Shutdown);
                }
                frame = frames.next() => {
                    let frame = frame.ok_or(SessionError::Eof)??;
                    if self.handle(frame, &mut pending, &mut ping_outstanding, &mut buf)? {
                        writer.write_all(&buf, deadline).await?;
                    }
                }
                _ = ping_timer.tick() => {
                    if ping_outstanding {
                        return Err(SessionError::Timeout(self.config.ping_interval));
                    }
                    let id = self.packet_id();
                    pdu::encode_ping(&mut buf, session_id, id);
                    writer.write_all(&buf, deadline).await?;
                    pending.insert(id, Pending::Ping);
                    ping_outstanding = true;
                }
                Some(varbinds) = self.notifications.recv() => {
                    let id = self.packet_id();
                    pdu::encode_notify(&mut buf, session_id, id, &varbinds, unix_now());
                    writer.write_all(&buf, deadline).await?;
                    pending.insert(id, Pending::Notify);
                }
            }
        }
    }

    /// Send Open and wait for the master's Response; returns the session id.
    async fn open(
        &mut self,
        frames: &mut FramedRead<MasterReader, FrameDecoder>,
        writer: &MasterWriter,
        buf: &mut Vec<u8>,
    ) -> Result<u32, SessionError> {
        let id = self.packet_id();
        let timeout = self.config.timeout;
        pdu::encode_open(
            buf,
            id,
            timeout_secs(timeout),
            &self.config.agent_id,
            &self.config.description,
        );
        writer.write_all(buf, timeout).await?;
        let wait = async {
            loop {
                let frame = frames.next().await.ok_or(SessionError::Eof)??;
                if let Ok(Incoming::Response { error, .. }) = frame.body {
                    if frame.header.packet_id != id {
                        continue;
                    }
                    if error != 0 {
                        return Err(SessionError::OpenRefused(error));
                    }
                    return Ok(frame.header.session_id);
                }
            }
        };
        tokio::time::timeout(timeout, wait)
            .await
            .map_err(|_| SessionError::Timeout(timeout))?
    }

    /// Handle one PDU. Returns whether `buf` holds a response to send.
    fn handle(
        &mut self,
        frame: Frame,
        pending: &mut HashMap<u32, Pending>,
        ping_outstanding: &mut bool,
        buf: &mut Vec<u8>,
    ) -> Result<bool, SessionError> {
        let header = frame.header;
        let ids = Ids {
            session_id: header.session_id,
            transaction_id: header.transaction_id,
            packet_id: header.packet_id,
        };
        let body = match frame.body {
            Ok(body) => body,
            Err(e) => {
                warn!("unparsable {:?} PDU from the master: {e}", header.pdu_type);
                if header.pdu_type == PduType::Response {
                    return Ok(false);
                }
                ResponseWriter::new(buf, ids, 0, ErrorStatus::ParseError, 0).finish();
                return Ok(true);
            }
        };
        let now = unix_now();
        match body {
            Incoming::Get {
                context: None,
                ranges,
            } => {
                let snap = self.store.load();
                let mut out = ResponseWriter::new(buf, ids, 0, ErrorStatus::NoError, 0);
                answer::get(&snap, &ranges, &mut out, now);
                out.finish();
            }
            Incoming::GetNext {
                context: None,
                ranges,
            } => {
                let snap = self.store.load();
                let mut out = ResponseWriter::new(buf, ids, 0, ErrorStatus::NoError, 0);
                answer::get_next(&snap, &ranges, &mut out, now);
                out.finish();
            }
            Incoming::GetBulk {
                context: None,
                non_repeaters,
                max_repetitions,
                ranges,
            } => {
                let snap = self.store.load();
                let mut out = ResponseWriter::new(buf, ids, 0, ErrorStatus::NoError, 0);
                answer::get_bulk(
                    &snap,
                    non_repeaters,
                    max_repetitions,
                    &ranges,
                    &mut out,
                    now,
                );
                out.finish();
            }
            Incoming::Get { .. } | Incoming::GetNext { .. } | Incoming::GetBulk { .. } => {
                // We register in the default context only.
                ResponseWriter::new(buf, ids, 0, ErrorStatus::UnsupportedContext, 0).finish();
            }
            Incoming::TestSet { .. } => {
                // Read-only agent: refuse the first varbind, as SNMP expects.
                ResponseWriter::new(buf, ids, 0, ErrorStatus::NotWritable, 1).finish();
            }
            Incoming::CommitSet | Incoming::UndoSet => {
                ResponseWriter::new(buf, ids, 0, ErrorStatus::NoError, 0).finish();
            }
            // RFC 2741 7.2.4.4: no response to CleanupSet.
            Incoming::CleanupSet => return Ok(false),
            Incoming::Close { reason } => return Err(SessionError::ClosedByMaster(reason)),
            Incoming::Response { error, .. } => {
                self.on_response(header.packet_id, error, pending, ping_outstanding);
                return Ok(false);
            }
            Incoming::Other(kind) => {
                debug!("ignoring {kind:?} PDU: not one a master sends to a subagent");
                ResponseWriter::new(buf, ids, 0, ErrorStatus::ProcessingError, 0).finish();
            }
        }
        Ok(true)
    }

    fn on_response(
        &self,
        packet_id: u32,
        error: u16,
        pending: &mut HashMap<u32, Pending>,
        ping_outstanding: &mut bool,
    ) {
        let status = ErrorStatus::from_u16(error);
        match pending.remove(&packet_id) {
            Some(Pending::Register(subtree)) if error == 0 => {
                info!(
                    "registered {subtree} with the AgentX master at {}",
                    self.config.address
                );
            }
            Some(Pending::Register(subtree)) => {
                warn!("the AgentX master refused to register {subtree}: {status:?} ({error})");
            }
            Some(Pending::Ping) => *ping_outstanding = false,
            Some(Pending::Notify) if error != 0 => {
                warn!("the AgentX master refused a notification: {status:?} ({error})");
            }
            Some(Pending::Notify) => {}
            None => debug!("response to unknown packet {packet_id}"),
        }
    }
}

/// Close reason `shutdown` (RFC 2741 6.2.2).
const CLOSE_REASON_SHUTDOWN: u8 = 5;

fn timeout_secs(d: Duration) -> u8 {
    u8::try_from(d.as_secs()).unwrap_or(u8::MAX)
}

/// Exponential backoff from 25 ms up to `cap`, with "equal jitter": the
/// pause is uniform in [d/2, d], so many agents restarting together spread
/// their reconnects without ever waiting longer than `cap`.
pub fn backoff(attempt: u32, cap: Duration) -> Duration {
    let base = Duration::from_millis(25);
    let full = base
        .checked_mul(1u32 << attempt.min(16))
        .unwrap_or(cap)
        .min(cap);
    let half = full / 2;
    let jitter = rand::random_range(0..=half.as_micros().max(1) as u64);
    half + Duration::from_micros(jitter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_stays_under_the_cap() {
        let cap = Duration::from_millis(800);
        let first = backoff(0, cap);
        assert!(first <= Duration::from_millis(25), "{first:?}");
        for attempt in 0..100 {
            assert!(backoff(attempt, cap) <= cap);
        }
        assert!(backoff(10, cap) >= cap / 2);
    }
}
