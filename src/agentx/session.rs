//! The AgentX session with the master (snmpd): connect, Open, Register,
//! answer requests from the current snapshot, Ping, Close on shutdown, and
//! reconnect with capped, jittered backoff whenever the master goes away.
//!
//! Two halves. Connecting, backoff, shutdown, Pings and notifications run
//! as a task on the runtime ([`Session::run`]). Each connection is then
//! served by a dedicated OS thread (the `Responder`): Open, Register, and
//! from then on a blocking read of the master's PDUs (no timeout), each
//! answered from the snapshot (loaded lock-free from the store's
//! `ArcSwap`) by one blocking write. No reactor, no task wake-up between
//! the request and its answer: that is what the floor benchmark
//! (benches/snmp.rs, docs/benchmarks.md "Against the floor") measured the agent's extra
//! microseconds as. The task stops the thread by shutting the socket's
//! reading side (the thread reads end of file, sends Close and ends); Pings
//! and notifications are written from the runtime's blocking pool through
//! the same `Link`, whose lock keeps PDUs whole; the thread reads their
//! Responses. A Ping still unanswered when the next is due ends the
//! connection.
//!
//! Everything from the master passes through [`pdu::parse_header`] and
//! [`pdu::decode()`]; a bad header breaks the stream's framing and ends the
//! session (we reconnect), a well-framed PDU with a bad body is answered
//! with parseError and the session goes on. The read buffer grows only up
//! to the largest PDU the header check lets through.

use super::address::AgentxAddress;
use super::answer;
use super::pdu::{self, ErrorStatus, Header, Ids, Incoming, PduError, PduType, ResponseWriter};
use super::transport::{self, MasterSocket};
use crate::oid::Oid;
use crate::smi::unix_now;
use crate::smi::Value;
use crate::snapshot::Store;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};
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
    #[error("the session's thread stopped unexpectedly")]
    ResponderLost,
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

/// What a blocking read of the master's stream gave.
enum Read {
    Frame(Frame),
    /// The socket's read timeout passed with no whole PDU.
    Idle,
    /// The master closed the connection, or we shut its reading side.
    End,
}

/// Room for the master's usual PDUs; grows for a bigger one, up to
/// `HEADER_LEN + MAX_PAYLOAD_LEN` (what `parse_header` lets through).
const INITIAL_READ_BUFFER: usize = 8 * 1024;

/// Cuts the byte stream into PDUs. Only the header is trusted for framing,
/// after `parse_header` checked version, type and a capped length.
struct FrameReader {
    buf: Vec<u8>,
    /// `buf[start..end]` is received and not yet handed out.
    start: usize,
    end: usize,
}

impl FrameReader {
    fn new() -> Self {
        FrameReader {
            buf: vec![0; INITIAL_READ_BUFFER],
            start: 0,
            end: 0,
        }
    }

    /// The next whole PDU, reading (blocking) as much as it needs.
    fn next(&mut self, socket: &MasterSocket) -> Result<Read, SessionError> {
        loop {
            let received = &self.buf[self.start..self.end];
            let needed = match received.first_chunk::<{ pdu::HEADER_LEN }>() {
                Some(head) => {
                    let header = pdu::parse_header(head)?;
                    let total = pdu::HEADER_LEN + header.payload_len as usize;
                    if let Some(whole) = received.get(..total) {
                        let body = pdu::decode(&header, &whole[pdu::HEADER_LEN..]);
                        self.start += total;
                        return Ok(Read::Frame(Frame { header, body }));
                    }
                    total
                }
                None => pdu::HEADER_LEN,
            };
            // Snmpd waits for each answer, so this is nearly always an
            // empty range moved to the front.
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.buf.len() < needed {
                // Bounded: `needed` passed parse_header's length cap.
                self.buf.resize(needed, 0);
            }
            match socket.read(&mut self.buf[self.end..]) {
                Ok(0) => return Ok(Read::End),
                Ok(n) => self.end += n,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    return Ok(Read::Idle)
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// PDUs of ours awaiting their Response, at most (notifications are rate
/// limited, Pings one at a time: a healthy master keeps this near zero).
const MAX_PENDING: usize = 1024;

/// What a packet id we sent is waiting for.
enum Pending {
    Register(Oid),
    Ping,
    Notify,
}

/// One connection's socket as both halves use it: every PDU is written
/// whole under the lock, which also holds what our packets wait for.
struct Link {
    socket: MasterSocket,
    pending: Mutex<HashMap<u32, Pending>>,
    /// Shared by every connection of the session.
    packet_ids: Arc<AtomicU32>,
    /// A Ping was sent (by the task) and its Response not yet read (by the
    /// thread).
    ping_outstanding: AtomicBool,
}

impl Link {
    fn packet_id(&self) -> u32 {
        self.packet_ids
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_add(1)
    }

    fn pending(&self) -> MutexGuard<'_, HashMap<u32, Pending>> {
        // A writer that panicked left the map as it was: still usable.
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Write one PDU; `awaiting` is what its packet id waits for. A master
    /// that never answers must not make the map grow: past
    /// [`MAX_PENDING`] a PDU is sent unrecorded (its Response, if one comes,
    /// is then only an unknown packet in the debug log).
    fn send(&self, bytes: &[u8], awaiting: Option<(u32, Pending)>) -> std::io::Result<()> {
        let mut pending = self.pending();
        if let Some((id, what)) = awaiting {
            if pending.len() < MAX_PENDING {
                pending.insert(id, what);
            }
        }
        self.socket.write_all(bytes)
    }

    /// Encode and send a Ping (on the runtime's blocking pool).
    fn ping(&self, session_id: u32) -> std::io::Result<()> {
        let id = self.packet_id();
        let mut buf = Vec::new();
        pdu::encode_ping(&mut buf, session_id, id);
        self.ping_outstanding.store(true, Ordering::Relaxed);
        self.send(&buf, Some((id, Pending::Ping)))
    }

    /// Encode and send a Notify (on the runtime's blocking pool).
    fn notify(&self, session_id: u32, varbinds: &[(Oid, Value)]) -> std::io::Result<()> {
        let id = self.packet_id();
        let mut buf = Vec::new();
        pdu::encode_notify(&mut buf, session_id, id, varbinds, unix_now());
        self.send(&buf, Some((id, Pending::Notify)))
    }
}

pub struct Session {
    config: SessionConfig,
    store: Arc<Store>,
    notifications: mpsc::Receiver<Notification>,
    shutdown: CancellationToken,
    packet_ids: Arc<AtomicU32>,
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
            packet_ids: Arc::new(AtomicU32::new(0)),
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
                Ok(socket) => {
                    attempt = 0;
                    unreachable_logged = false;
                    match self.serve(socket).await {
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

    /// Serve one connection: the responder thread answers the master; this
    /// task stops it on shutdown and forwards notifications once the
    /// session is open.
    async fn serve(&mut self, socket: MasterSocket) -> Result<Ended, SessionError> {
        let link = Arc::new(Link {
            socket,
            pending: Mutex::new(HashMap::new()),
            packet_ids: self.packet_ids.clone(),
            ping_outstanding: AtomicBool::new(false),
        });
        let (opened_tx, mut opened_rx) = oneshot::channel();
        let (ended_tx, mut ended_rx) = oneshot::channel();
        let responder = Responder {
            config: self.config.clone(),
            store: self.store.clone(),
            link: link.clone(),
            shutdown: self.shutdown.clone(),
        };
        std::thread::Builder::new()
            .name("agentx".into())
            .spawn(move || {
                let _ = ended_tx.send(responder.serve(opened_tx));
            })?;
        // What the thread returned; its sender dropped unsent would mean it
        // panicked.
        let outcome = |ended: Result<Result<Ended, SessionError>, oneshot::error::RecvError>| {
            ended.unwrap_or(Err(SessionError::ResponderLost))
        };
        let shutdown = self.shutdown.clone();
        let mut cancelled = std::pin::pin!(shutdown.cancelled());
        let mut session_id = None;
        let mut ping_timer = tokio::time::interval(self.config.ping_interval);
        ping_timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                // Shutdown first, so a stream of notifications cannot delay it.
                biased;
                _ = &mut cancelled => {
                    // The thread reads end of file, sends Close and ends.
                    link.socket.shutdown_read();
                    return outcome(ended_rx.await);
                }
                ended = &mut ended_rx => return outcome(ended),
                opened = &mut opened_rx, if session_id.is_none() => match opened {
                    Ok(id) => {
                        session_id = Some(id);
                        ping_timer.reset(); // the first Ping one interval from now
                    }
                    // The thread ended before the session opened; ended_rx says why.
                    Err(_) => return outcome(ended_rx.await),
                },
                // The Ping is the task's, so that the thread's reads need
                // no timeout: a read with one arms a kernel timer each time
                // it sleeps, measured as about half a microsecond per request.
                _ = ping_timer.tick(), if session_id.is_some() => {
                    if link.ping_outstanding.load(Ordering::Relaxed) {
                        link.socket.shutdown();
                        let _ = ended_rx.await;
                        return Err(SessionError::Timeout(self.config.ping_interval));
                    }
                    let (sender, id) = (link.clone(), session_id.unwrap_or_default());
                    if let Err(e) = off_runtime(move || sender.ping(id)).await {
                        link.socket.shutdown();
                        let _ = ended_rx.await;
                        return Err(e.into());
                    }
                }
                Some(varbinds) = self.notifications.recv(), if session_id.is_some() => {
                    let (sender, id) = (link.clone(), session_id.unwrap_or_default());
                    if let Err(e) = off_runtime(move || sender.notify(id, &varbinds)).await {
                        // The thread must end too: the master sees the
                        // connection go, and so does the thread.
                        link.socket.shutdown();
                        let _ = ended_rx.await;
                        return Err(e.into());
                    }
                }
            }
        }
    }
}

/// A blocking write to the master, on the runtime's blocking pool: the
/// socket is blocking (for the thread's sake), and a full one must not
/// stall the runtime's thread.
async fn off_runtime(
    write: impl FnOnce() -> std::io::Result<()> + Send + 'static,
) -> std::io::Result<()> {
    tokio::task::spawn_blocking(write)
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e)))
}

/// The session's thread: Open, Register, then answer the master until the
/// connection ends or the task shuts its reading side.
struct Responder {
    config: SessionConfig,
    store: Arc<Store>,
    link: Arc<Link>,
    shutdown: CancellationToken,
}

impl Responder {
    fn serve(self, opened: oneshot::Sender<u32>) -> Result<Ended, SessionError> {
        let socket = &self.link.socket;
        socket.set_write_timeout(self.config.timeout)?;
        let mut frames = FrameReader::new();
        let mut buf = Vec::with_capacity(4096);

        let Some(session_id) = self.open(&mut frames, &mut buf)? else {
            return Ok(Ended::Shutdown);
        };
        for subtree in &self.config.subtrees {
            let id = self.link.packet_id();
            let timeout = timeout_secs(self.config.timeout);
            pdu::encode_register(&mut buf, session_id, id, timeout, 127, subtree);
            self.link
                .send(&buf, Some((id, Pending::Register(subtree.clone()))))?;
        }
        let _ = opened.send(session_id);

        // From now on a read waits as long as the master is silent: the
        // task Pings it, and stops us by shutting the socket's reading side.
        socket.set_read_timeout(None)?;
        loop {
            match frames.next(socket)? {
                Read::Frame(frame) => {
                    if self.handle(frame, &mut buf)? {
                        self.link.send(&buf, None)?;
                    }
                }
                Read::Idle => {}
                Read::End if self.shutdown.is_cancelled() => {
                    let id = self.link.packet_id();
                    pdu::encode_close(&mut buf, session_id, id, CLOSE_REASON_SHUTDOWN);
                    // Best effort: the master drops our registrations anyway
                    // when the socket closes.
                    let _ = self.link.send(&buf, None);
                    socket.shutdown();
                    info!("sent Close to the AgentX master, shutting down");
                    return Ok(Ended::Shutdown);
                }
                Read::End => return Err(SessionError::Eof),
            }
        }
    }

    /// Send Open and wait for the master's Response; returns the session
    /// id, or None when shut down meanwhile.
    fn open(
        &self,
        frames: &mut FrameReader,
        buf: &mut Vec<u8>,
    ) -> Result<Option<u32>, SessionError> {
        let id = self.link.packet_id();
        let timeout = self.config.timeout;
        pdu::encode_open(
            buf,
            id,
            timeout_secs(timeout),
            &self.config.agent_id,
            &self.config.description,
        );
        self.link.send(buf, None)?;
        let started = Instant::now();
        loop {
            let left = timeout.saturating_sub(started.elapsed());
            if left.is_zero() {
                return Err(SessionError::Timeout(timeout));
            }
            self.link.socket.set_read_timeout(Some(left))?;
            match frames.next(&self.link.socket)? {
                Read::Frame(frame) => {
                    if let Ok(Incoming::Response { error, .. }) = frame.body {
                        if frame.header.packet_id != id {
                            continue;
                        }
                        if error != 0 {
                            return Err(SessionError::OpenRefused(error));
                        }
                        return Ok(Some(frame.header.session_id));
                    }
                }
                Read::Idle => {}
                Read::End if self.shutdown.is_cancelled() => return Ok(None),
                Read::End => return Err(SessionError::Eof),
            }
        }
    }

    /// Handle one PDU. Returns whether `buf` holds a response to send.
    fn handle(&self, frame: Frame, buf: &mut Vec<u8>) -> Result<bool, SessionError> {
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
                self.on_response(header.packet_id, error);
                return Ok(false);
            }
            Incoming::Other(kind) => {
                debug!("ignoring {kind:?} PDU: not one a master sends to a subagent");
                ResponseWriter::new(buf, ids, 0, ErrorStatus::ProcessingError, 0).finish();
            }
        }
        Ok(true)
    }

    fn on_response(&self, packet_id: u32, error: u16) {
        let status = ErrorStatus::from_u16(error);
        let awaited = self.link.pending().remove(&packet_id);
        match awaited {
            Some(Pending::Register(subtree)) if error == 0 => {
                info!(
                    "registered {subtree} with the AgentX master at {}",
                    self.config.address
                );
            }
            Some(Pending::Register(subtree)) => {
                warn!("the AgentX master refused to register {subtree}: {status:?} ({error})");
            }
            Some(Pending::Ping) => self.link.ping_outstanding.store(false, Ordering::Relaxed),
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
    use std::io::Write;
    use std::os::unix::net::UnixStream;

    /// A Ping PDU's bytes with its payload length set to `len` (bytes
    /// 16..20, little-endian as our encoder writes) and `len` zero bytes
    /// after the header.
    fn pdu_with_payload(len: u32) -> Vec<u8> {
        let mut bytes = Vec::new();
        pdu::encode_ping(&mut bytes, 1, 2);
        bytes.truncate(pdu::HEADER_LEN);
        bytes[16..20].copy_from_slice(&len.to_le_bytes());
        bytes.resize(pdu::HEADER_LEN + len as usize, 0);
        bytes
    }

    fn frames_of(bytes: &[u8], chunk: usize) -> (Vec<Header>, Result<(), SessionError>, usize) {
        let (ours, mut master) = UnixStream::pair().unwrap();
        let socket = MasterSocket::from_unix(ours);
        let bytes = bytes.to_vec();
        let writer = std::thread::spawn(move || {
            for (i, piece) in bytes.chunks(chunk).enumerate() {
                master.write_all(piece).unwrap();
                // The first pieces arrive one by one, inside the header.
                if i < 64 {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        });
        let mut reader = FrameReader::new();
        let mut headers = Vec::new();
        let end = loop {
            match reader.next(&socket) {
                Ok(Read::Frame(frame)) => headers.push(frame.header),
                Ok(Read::Idle) => continue,
                Ok(Read::End) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        writer.join().unwrap();
        (headers, end, reader.buf.len())
    }

    #[test]
    fn frames_are_cut_whole_however_the_bytes_arrive() {
        let mut stream = Vec::new();
        pdu::encode_ping(&mut stream, 7, 1);
        let one = stream.clone();
        stream.extend_from_slice(&one);
        // Bigger than the initial buffer: it grows to what the header says.
        stream.extend_from_slice(&pdu_with_payload(20 * 1024));
        for chunk in [1, 7, stream.len()] {
            let (headers, end, buffer) = frames_of(&stream, chunk);
            assert!(end.is_ok(), "chunks of {chunk}: {end:?}");
            let lengths: Vec<u32> = headers.iter().map(|h| h.payload_len).collect();
            assert_eq!(lengths, [0, 0, 20 * 1024], "chunks of {chunk}");
            assert_eq!(buffer, pdu::HEADER_LEN + 20 * 1024);
        }
    }

    #[test]
    fn a_length_over_the_cap_ends_the_stream_without_allocating_it() {
        let mut bytes = pdu_with_payload(0);
        bytes[16..20].copy_from_slice(&(pdu::MAX_PAYLOAD_LEN + 4).to_le_bytes());
        let (headers, end, buffer) = frames_of(&bytes, bytes.len());
        assert!(headers.is_empty());
        assert!(matches!(end, Err(SessionError::Framing(_))), "{end:?}");
        assert_eq!(buffer, INITIAL_READ_BUFFER);
    }

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
