//! What a reply from Redis may cost the agent (issue 24, review M3).
//!
//! Counting bytes is not enough: the `redis` crate turns a reply into a
//! tree of `Value`s, and a reply of small nested aggregates (`*1` 89 deep,
//! repeated; `%1` maps, `~1` sets) costs 15 to 60 times its size once
//! parsed: 4 MiB on the wire took the agent to 250 MB. So the bytes are
//! metered on their way to the crate's parser, by a reader that follows
//! the RESP framing without keeping anything ([`Meter`]): every value is
//! counted, aggregates may not nest deeper than [`MAX_REPLY_DEPTH`], a
//! reply may not hold more than [`MAX_REPLY_VALUES`] values, and a length
//! announced in a header that cannot fit what is left is refused at the
//! header, before the crate sees it (and before it could reserve room for
//! it). What goes over ends the read with an error, and so the
//! connection: the parser never holds more than the limits allow.
//!
//! The agent's replies need little: INFO and CLIENT LIST are one bulk
//! string; the deepest, `SLOWLOG GET 1`, nests 3 levels (the entries, an
//! entry, its arguments); SCAN, XINFO and SENTINEL MASTERS 2.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Aggregates (arrays, maps, sets, attributes, pushes) nested in one
/// another at most. The agent's replies nest 3 deep; a RESP3 attribute
/// may add one around any value.
pub const MAX_REPLY_DEPTH: usize = 8;

/// Values (each element of an aggregate, nested ones included, and the
/// aggregate itself) the reply to one command, or one pipeline, may hold.
/// A parsed value costs the agent some 50 to 100 bytes beside its text:
/// this keeps a reply's tree under about 10 MiB. A key check's largest
/// pipelines (SCAN of up to `check_keys_scan_count` names per pattern,
/// XINFO of the streams' consumers) hold a few thousand.
pub const MAX_REPLY_VALUES: u64 = 100_000;

/// Why a reply was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overrun {
    /// More bytes than `max_reply_bytes`.
    Bytes,
    /// More values than [`MAX_REPLY_VALUES`].
    Values,
    /// Aggregates nested deeper than [`MAX_REPLY_DEPTH`].
    Depth,
    /// Not RESP: a type byte or a header the protocol does not have.
    Malformed,
}

impl Overrun {
    fn code(self) -> u8 {
        match self {
            Overrun::Bytes => 1,
            Overrun::Values => 2,
            Overrun::Depth => 3,
            Overrun::Malformed => 4,
        }
    }

    fn from_code(code: u8) -> Option<Overrun> {
        Some(match code {
            1 => Overrun::Bytes,
            2 => Overrun::Values,
            3 => Overrun::Depth,
            4 => Overrun::Malformed,
            _ => return None,
        })
    }
}

/// What the reply to the command being asked may still take, in bytes and
/// in values. Shared by the client, which renews it before each command,
/// and the connection's stream, which spends it as bytes arrive.
#[derive(Clone, Debug)]
pub struct ReplyBudget(Arc<Budget>);

#[derive(Debug)]
struct Budget {
    max: u64,
    left: AtomicU64,
    values_left: AtomicU64,
    /// 0, or the [`Overrun`] that ended the last reply.
    overrun: AtomicU8,
}

impl ReplyBudget {
    pub fn new(max: u64) -> Self {
        ReplyBudget(Arc::new(Budget {
            max,
            left: AtomicU64::new(max),
            values_left: AtomicU64::new(MAX_REPLY_VALUES),
            overrun: AtomicU8::new(0),
        }))
    }

    /// The limit, in bytes.
    pub fn max(&self) -> u64 {
        self.0.max
    }

    /// A new command: its reply may take `max` bytes and
    /// [`MAX_REPLY_VALUES`] values again.
    pub fn renew(&self) {
        self.0.left.store(self.0.max, Ordering::Relaxed);
        self.0
            .values_left
            .store(MAX_REPLY_VALUES, Ordering::Relaxed);
        self.0.overrun.store(0, Ordering::Relaxed);
    }

    /// Whether the last reply went over a limit (and so ended the
    /// connection).
    pub fn exceeded(&self) -> bool {
        self.overrun().is_some()
    }

    /// Which limit the last reply went over.
    pub fn overrun(&self) -> Option<Overrun> {
        Overrun::from_code(self.0.overrun.load(Ordering::Relaxed))
    }

    /// Why the reply to `what` was refused, in the same words on every
    /// poll (the log says an error again only when its text changes).
    pub fn refusal(&self, what: &str) -> String {
        match self.overrun().unwrap_or(Overrun::Bytes) {
            Overrun::Bytes => format!(
                "the reply to {what} was over the {}-byte limit (max_reply_bytes)",
                self.max()
            ),
            Overrun::Values => format!(
                "the reply to {what} held more than {MAX_REPLY_VALUES} values, more than the agent reads"
            ),
            Overrun::Depth => format!(
                "the reply to {what} nested deeper than {MAX_REPLY_DEPTH} levels, more than the agent reads"
            ),
            Overrun::Malformed => format!("the reply to {what} was not RESP"),
        }
    }

    fn refuse(&self, why: Overrun) {
        self.0.left.store(0, Ordering::Relaxed);
        self.0.overrun.store(why.code(), Ordering::Relaxed);
    }

    /// Spends `n` bytes; false when that goes over the limit.
    fn spend(&self, n: u64) -> bool {
        let left = self.0.left.load(Ordering::Relaxed);
        if n > left {
            self.refuse(Overrun::Bytes);
            return false;
        }
        self.0.left.store(left - n, Ordering::Relaxed);
        true
    }

    /// Bytes still allowed.
    fn bytes_left(&self) -> u64 {
        self.0.left.load(Ordering::Relaxed)
    }

    /// Spends one value; false when none is left.
    fn spend_value(&self) -> bool {
        let left = self.0.values_left.load(Ordering::Relaxed);
        if left == 0 {
            return false;
        }
        self.0.values_left.store(left - 1, Ordering::Relaxed);
        true
    }

    fn values_left(&self) -> u64 {
        self.0.values_left.load(Ordering::Relaxed)
    }
}

/// Where the meter stands in the RESP stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// At the type byte of a value.
    Start,
    /// In the length line of `$ ! =` (a string) or `* ~ > % |` (an
    /// aggregate): its sign and digits so far.
    Header {
        kind: u8,
        negative: bool,
        value: u64,
        digits: u8,
    },
    /// In a line value (`+ - : _ # , (`), up to its `\n`.
    Line,
    /// In a string's bytes and their `\r\n`: how many are left.
    Payload(u64),
}

/// Follows the RESP framing of what a server sends, keeping only where it
/// stands and how many values each open aggregate still has to come: its
/// memory is fixed ([`MAX_REPLY_DEPTH`] counts).
#[derive(Debug)]
pub struct Meter {
    state: State,
    /// Values still to come in each open aggregate, the innermost last.
    open: Vec<u64>,
}

impl Default for Meter {
    fn default() -> Self {
        Meter {
            state: State::Start,
            open: Vec::with_capacity(MAX_REPLY_DEPTH),
        }
    }
}

/// The most digits a length may have (`i64::MAX` has 19).
const MAX_DIGITS: u8 = 19;

impl Meter {
    /// Follows `bytes`, spending `budget` (bytes and values); the limit it
    /// went over, if any. After an overrun the stream is not followed any
    /// more: the connection ends with it.
    pub fn feed(&mut self, bytes: &[u8], budget: &ReplyBudget) -> Result<(), Overrun> {
        if !budget.spend(bytes.len() as u64) {
            return Err(Overrun::Bytes);
        }
        let mut rest = bytes;
        while let Some((&byte, after)) = rest.split_first() {
            match self.state {
                State::Payload(left) => {
                    let take = left.min(rest.len() as u64);
                    rest = &rest[take as usize..];
                    self.state = if take == left {
                        self.value_done();
                        State::Start
                    } else {
                        State::Payload(left - take)
                    };
                    continue;
                }
                State::Start => {
                    if !budget.spend_value() {
                        return self.refuse(budget, Overrun::Values);
                    }
                    self.state = match byte {
                        b'+' | b'-' | b':' | b'_' | b'#' | b',' | b'(' => State::Line,
                        b'$' | b'!' | b'=' | b'*' | b'~' | b'>' | b'%' | b'|' => State::Header {
                            kind: byte,
                            negative: false,
                            value: 0,
                            digits: 0,
                        },
                        _ => return self.refuse(budget, Overrun::Malformed),
                    };
                }
                State::Line => {
                    if byte == b'\n' {
                        self.state = State::Start;
                        self.value_done();
                    }
                }
                State::Header {
                    kind,
                    negative,
                    value,
                    digits,
                } => match byte {
                    b'-' if digits == 0 && !negative => {
                        self.state = State::Header {
                            kind,
                            negative: true,
                            value,
                            digits,
                        }
                    }
                    b'0'..=b'9' if digits < MAX_DIGITS => {
                        self.state = State::Header {
                            kind,
                            negative,
                            value: value * 10 + u64::from(byte - b'0'),
                            digits: digits + 1,
                        }
                    }
                    b'\r' => {}
                    b'\n' if digits > 0 => {
                        // What may still come: the rest of this piece (paid
                        // for already) and what the budget has left.
                        let unread = budget.bytes_left().saturating_add(after.len() as u64);
                        if let Err(why) = self.header(kind, negative, value, budget, unread) {
                            return self.refuse(budget, why);
                        }
                    }
                    _ => return self.refuse(budget, Overrun::Malformed),
                },
            }
            rest = after;
        }
        Ok(())
    }

    fn refuse(&mut self, budget: &ReplyBudget, why: Overrun) -> Result<(), Overrun> {
        budget.refuse(why);
        Err(why)
    }

    /// A header line ended: a string's bytes follow, an aggregate opens,
    /// or (a null, an empty aggregate) the value is whole.
    fn header(
        &mut self,
        kind: u8,
        negative: bool,
        length: u64,
        budget: &ReplyBudget,
        unread: u64,
    ) -> Result<(), Overrun> {
        self.state = State::Start;
        if negative {
            // `$-1`, `*-1`: RESP2's nulls; no other negative length exists.
            if length != 1 {
                return Err(Overrun::Malformed);
            }
            self.value_done();
            return Ok(());
        }
        let children = match kind {
            b'$' | b'!' | b'=' => {
                // Refused at the header: what cannot fit is not waited for.
                let with_crlf = length.saturating_add(2);
                if with_crlf > unread {
                    return Err(Overrun::Bytes);
                }
                self.state = State::Payload(with_crlf);
                return Ok(());
            }
            // A map's and an attribute's entries are pairs; an attribute
            // comes before the value it describes, which stands in its
            // place in the enclosing aggregate: counted as its last child.
            b'%' => length.saturating_mul(2),
            b'|' => length.saturating_mul(2).saturating_add(1),
            _ => length,
        };
        if children > budget.values_left() {
            return Err(Overrun::Values);
        }
        if children == 0 {
            self.value_done();
            return Ok(());
        }
        if self.open.len() >= MAX_REPLY_DEPTH {
            return Err(Overrun::Depth);
        }
        self.open.push(children);
        Ok(())
    }

    /// A value is whole: one fewer to come in the aggregate around it, and
    /// so on outwards for each aggregate that it completes.
    fn value_done(&mut self) {
        while let Some(left) = self.open.last_mut() {
            *left -= 1;
            if *left > 0 {
                return;
            }
            self.open.pop();
        }
    }

    /// Whether the stream stands between two whole replies.
    #[cfg(test)]
    fn between_replies(&self) -> bool {
        self.state == State::Start && self.open.is_empty()
    }
}

/// A stream whose reads are metered against a [`ReplyBudget`]; once a
/// reply goes over it, every read fails.
pub struct Capped<S> {
    inner: S,
    budget: ReplyBudget,
    meter: Meter,
}

impl<S> Capped<S> {
    pub fn new(inner: S, budget: ReplyBudget) -> Self {
        Capped {
            inner,
            budget,
            meter: Meter::default(),
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Capped<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.budget.exceeded() {
            return Poll::Ready(Err(over_limit(&this.budget)));
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        // On an error the bytes are not handed on (the reader advances its
        // buffer on success only).
        if this
            .meter
            .feed(&buf.filled()[before..], &this.budget)
            .is_err()
        {
            return Poll::Ready(Err(over_limit(&this.budget)));
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Capped<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

fn over_limit(budget: &ReplyBudget) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, budget.refusal("a command"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reply captured from a real server (tests/fixtures/redis/README.md).
    fn fixture(name: &str) -> Vec<u8> {
        let path = format!("{}/tests/fixtures/redis/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&path).unwrap()
    }

    /// Feeds `bytes` in pieces of `step` bytes to a fresh meter.
    fn meter(bytes: &[u8], step: usize, budget: &ReplyBudget) -> (Meter, Result<(), Overrun>) {
        let mut meter = Meter::default();
        for piece in bytes.chunks(step) {
            if let Err(why) = meter.feed(piece, budget) {
                return (meter, Err(why));
            }
        }
        (meter, Ok(()))
    }

    #[test]
    fn real_replies_pass_whole_in_any_pieces() {
        let mut all = Vec::new();
        for name in [
            "7.0-keys-scan.resp",
            "7.0-keys-xinfo-groups.resp",
            "6.2-keys-xinfo-groups.resp",
            "7.0-keys-xinfo-consumers.resp",
            "7.0-keys-noperm.resp",
        ] {
            all.extend(fixture(name));
        }
        let info = fixture("7.0-master-info.txt");
        all.extend(format!("${}\r\n", info.len()).as_bytes());
        all.extend(&info);
        all.extend(b"\r\n");
        // SLOWLOG GET 1, 3 levels deep; RESP3 nulls, maps, sets, doubles.
        all.extend(b"*1\r\n*6\r\n:5\r\n:1700000000\r\n:12\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n$15\r\n127.0.0.1:50000\r\n$0\r\n\r\n");
        all.extend(
            b"$-1\r\n*-1\r\n_\r\n%1\r\n+a\r\n~2\r\n,1.5\r\n#t\r\n*0\r\n|1\r\n+ttl\r\n:3\r\n:7\r\n",
        );
        for step in [1, 2, 7, 4096, all.len()] {
            let budget = ReplyBudget::new(1 << 20);
            let (meter, outcome) = meter(&all, step, &budget);
            assert_eq!(outcome, Ok(()), "in pieces of {step}");
            assert!(meter.between_replies(), "in pieces of {step}: {meter:?}");
        }
    }

    #[test]
    fn deep_nesting_is_refused_at_the_ninth_level() {
        let deep = |levels: usize| {
            let mut bytes = b"*1\r\n".repeat(levels);
            bytes.extend(b":1\r\n");
            bytes
        };
        let budget = ReplyBudget::new(4 << 20);
        assert_eq!(meter(&deep(MAX_REPLY_DEPTH), 3, &budget).1, Ok(()));
        budget.renew();
        assert_eq!(meter(&deep(89), 3, &budget).1, Err(Overrun::Depth));
        assert_eq!(budget.overrun(), Some(Overrun::Depth));
        // Sets, maps and attributes alike.
        for header in ["~1\r\n", "%1\r\n:1\r\n", "|1\r\n+a\r\n+b\r\n"] {
            budget.renew();
            let bytes = header.repeat(40);
            assert_eq!(meter(bytes.as_bytes(), 5, &budget).1, Err(Overrun::Depth));
        }
        assert!(budget
            .refusal("INFO")
            .contains("nested deeper than 8 levels"));
    }

    #[test]
    fn too_many_values_are_refused_at_the_header_or_as_they_come() {
        let budget = ReplyBudget::new(64 << 20);
        // Announced: refused before a single element arrives.
        let (_, outcome) = meter(b"*100001\r\n", 64, &budget);
        assert_eq!(outcome, Err(Overrun::Values));
        budget.renew();
        assert_eq!(meter(b"%50001\r\n", 64, &budget).1, Err(Overrun::Values));
        // Many small aggregates, each within the limit.
        budget.renew();
        let bytes = b"*2\r\n:1\r\n:1\r\n".repeat(40_000);
        assert_eq!(meter(&bytes, 4096, &budget).1, Err(Overrun::Values));
        assert!(budget
            .refusal("SCAN")
            .starts_with("the reply to SCAN held more than 100000 values"));
        // A new command, a new allowance.
        budget.renew();
        assert_eq!(meter(&bytes[..13 * 30_000], 4096, &budget).1, Ok(()));
    }

    #[test]
    fn a_string_longer_than_what_is_left_is_refused_at_its_header() {
        let budget = ReplyBudget::new(1000);
        assert_eq!(meter(b"$1000\r\n", 64, &budget).1, Err(Overrun::Bytes));
        assert!(budget
            .refusal("INFO")
            .contains("over the 1000-byte limit (max_reply_bytes)"));
        budget.renew();
        assert_eq!(meter(b"$10\r\n0123456789\r\n", 64, &budget).1, Ok(()));
        // Exactly the budget, in one piece or in many.
        let mut exact = b"$992\r\n".to_vec();
        exact.extend([b'x'; 992]);
        exact.extend(b"\r\n");
        assert_eq!(exact.len(), 1000);
        for step in [1, 7, 1000] {
            budget.renew();
            assert_eq!(
                meter(&exact, step, &budget).1,
                Ok(()),
                "in pieces of {step}"
            );
        }
        budget.renew();
        assert_eq!(meter(&exact[..999], 999, &budget).1, Ok(()));
        assert_eq!(meter(b"\r\n", 2, &budget).1, Err(Overrun::Bytes));
    }

    #[test]
    fn what_is_not_resp_is_refused() {
        for bytes in [
            &b"hello\r\n"[..],
            b"*x\r\n",
            b"$-2\r\n",
            b"*99999999999999999999\r\n",
        ] {
            let budget = ReplyBudget::new(1000);
            assert_eq!(
                meter(bytes, 64, &budget).1,
                Err(Overrun::Malformed),
                "{bytes:?}"
            );
        }
    }

    #[test]
    fn a_budget_refuses_what_goes_over_it_until_renewed() {
        let budget = ReplyBudget::new(10);
        assert!(budget.spend(4) && budget.spend(6));
        assert!(!budget.exceeded());
        assert!(!budget.spend(1));
        assert!(budget.exceeded());
        budget.renew();
        assert!(!budget.exceeded() && budget.spend(10));
    }
}
