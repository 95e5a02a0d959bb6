//! What the ledger remembers of each kick and each refusal: plain data.
//! The ledger keeps one file per kick, and one per sender for its
//! refusals (the newest kept, the rest counted).

use serde::{Deserialize, Serialize};

/// Milliseconds since the Unix epoch.
pub type Millis = u64;

/// Who caused a kick: the host whose notification asked for it, and the
/// resource that changed there (with an `[[on]]` rule's, its status and
/// the rule's line: `File[/etc/haproxy/a.cfg] changed ([[on]] line 12)`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cause {
    pub host: String,
    pub resource: String,
}

/// How a kick command ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum End {
    /// It exited with this code.
    Exited(i32),
    /// A signal ended it (not ours).
    Signalled(i32),
    /// Still running at `timeout`: ended by us.
    TimedOut,
    /// It could not be started (the reason).
    NotStarted(String),
    /// Its supervisor is gone (killed, or the machine restarted) before
    /// it ended.
    Interrupted,
    /// It waited and was found not needed (why): a `kick -> again` whose
    /// asking run changed nothing else.
    NotNeeded(String),
}

/// What the kicked host itself said of its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub failed: bool,
    pub at: Millis,
    /// Whether the run changed something, when the host said
    /// (`puppetRunFinished` does; `puppetRunFailed` and
    /// `puppetRunChanged` imply it).
    #[serde(default)]
    pub changed: Option<bool>,
    /// Matched by the run's job id (`{kick}`), not by time alone.
    #[serde(default)]
    pub exact: bool,
}

/// The process supervising a kick: its PID and its start time in clock
/// ticks since boot, so that a PID used again by another process is not
/// taken for it; and, with a shared ledger, the manager it runs on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Supervisor {
    pub pid: u32,
    pub start_ticks: u64,
    #[serde(default)]
    pub manager: Option<String>,
}

impl Supervisor {
    /// Whether this process still runs on this host (its PID with the
    /// same start time).
    pub fn runs_here(&self) -> bool {
        crate::process::start_ticks(self.pid) == Some(self.start_ticks)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kick {
    pub id: String,
    pub host: String,
    pub role: String,
    pub cause: Cause,
    /// 1 for a kick caused by a run nobody kicked; one more for each kick
    /// in the chain before it.
    pub generation: u32,
    /// The kick of the causing host, when that run was itself kicked.
    pub caused_by: Option<String>,
    pub queued_at: Millis,
    pub started_at: Option<Millis>,
    pub ended_at: Option<Millis>,
    pub end: Option<End>,
    pub report: Option<Report>,
    pub supervisor: Option<Supervisor>,
    /// The last lines the command printed (at most a few KiB).
    #[serde(default)]
    pub output: String,
    /// The id the kicked run was given (`{kick}` in `kick_command`):
    /// its report is then matched by it, not by time.
    #[serde(default)]
    pub job_id: Option<String>,
    /// Why it could not start when it was asked for: it waits (deferred)
    /// and starts as soon as the rules allow. `None` for a kick that
    /// could start at once.
    #[serde(default)]
    pub deferred: Option<Refusal>,
    /// Requests that arrived while it waited, coalesced into it: their
    /// causes (the first is `cause`), at most [`MAX_COALESCED`].
    #[serde(default)]
    pub coalesced: Vec<Cause>,
    /// Requests coalesced beyond [`MAX_COALESCED`], counted only.
    #[serde(default)]
    pub coalesced_more: u32,
    /// `kick -> again`: it waits for the end of the host's run that asked
    /// for it (a run end reported at or after `queued_at`).
    #[serde(default)]
    pub after_run: bool,
    /// Command attempts made (retries included).
    #[serde(default)]
    pub attempts: u32,
    /// When the run that asked for it ended (`puppetLastRunTime`), for a
    /// kick of the host that asked (`kick -> again` among them): that
    /// run's end notifications are not this kick's report.
    #[serde(default)]
    pub asking_run: Option<u64>,
    /// Its command failed and it waits `retry_delay` to run it again.
    #[serde(default)]
    pub retrying: bool,
    /// A deferred kick held back by time alone (the window, the budget's
    /// hour): the earliest the rules may let it start, so that its
    /// supervisor sleeps until then without reading the ledger.
    #[serde(default)]
    pub not_before: Option<Millis>,
    /// Asked by an `[[on]]` rule: which, and what it runs.
    #[serde(default)]
    pub on: Option<Box<Callback>>,
}

/// The `[[on]]` rule that asked for a kick, as it was when it matched (a
/// file edited since changes nothing already decided).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Callback {
    /// `[[on]] line 12: File[/etc/haproxy/*] changed from web: kick haproxy`.
    pub rule: String,
    /// A `run` rule's command, its placeholders filled: run on the
    /// manager instead of `kick_command` (`host` is then `SENDER/on:LINE`,
    /// no host).
    #[serde(default)]
    pub run: Option<Vec<String>>,
    /// The rule's `retries` and `retry_delay` (seconds), when it gives
    /// them; else the role's.
    #[serde(default)]
    pub retries: Option<u32>,
    #[serde(default)]
    pub retry_delay: Option<u64>,
}

impl Kick {
    /// A `run` callback: its outcome is its command's exit code (no host
    /// reports a run for it).
    pub fn runs_callback(&self) -> bool {
        self.on.as_ref().is_some_and(|c| c.run.is_some())
    }
}

/// Causes of coalesced requests kept in a kick, at most.
pub const MAX_COALESCED: usize = 16;

impl Kick {
    /// Queued or running: not ended.
    pub fn active(&self) -> bool {
        self.end.is_none()
    }

    /// Waiting to start: active and not started.
    pub fn pending(&self) -> bool {
        self.active() && self.started_at.is_none()
    }

    /// This kick refused at `at` for `why`, under its own id (the refusal
    /// takes its place in the ledger).
    pub fn refused(&self, at: Millis, why: Refusal) -> Refused {
        Refused {
            id: self.id.clone(),
            at,
            host: Some(self.host.clone()),
            role: self.role.clone(),
            cause: self.cause.clone(),
            generation: self.generation,
            caused_by: self.caused_by.clone(),
            why,
        }
    }

    /// One more request joins this pending kick.
    pub fn coalesce(&mut self, cause: Cause) {
        if self.coalesced.len() < MAX_COALESCED {
            self.coalesced.push(cause);
        } else {
            self.coalesced_more = self.coalesced_more.saturating_add(1);
        }
    }
}

/// Why a kick was not made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    /// The notification came from an address no configured host has.
    UnknownSender,
    /// No role of that name.
    UnknownRole,
    /// The role's `requested_by` does not name the sender.
    NotRequester,
    /// The chain of kicks that led here is longer than `max_depth`.
    TooDeep { chain: Vec<String> },
    /// The host is being kicked now.
    Busy { kick: String },
    /// The host's kicked run ended less than `window` ago.
    Window { ended_at: Millis },
    /// The role's kicks of the last hour reached its budget.
    Budget { used: u32 },
    /// `kick -> again`: the host's own run that asked is going on.
    OwnRun,
    /// The ledger holds as many kicks that its rules still need as it
    /// may: new ones are refused rather than older ones forgotten.
    Full { kicks: usize },
    /// The role's hosts are a PuppetDB query's, and PuppetDB named none:
    /// it could not answer (why), or its answer was refused (why), or the
    /// query matched no host.
    PuppetDb { why: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refused {
    pub id: String,
    pub at: Millis,
    /// The host that would have been kicked (none when the whole
    /// notification was refused).
    pub host: Option<String>,
    pub role: String,
    pub cause: Cause,
    pub generation: u32,
    /// The kick of the causing host, when that run was itself kicked.
    pub caused_by: Option<String>,
    pub why: Refusal,
}

/// Longest text of a notification kept in a refusal (a title may be
/// 4 KiB; what it was is clear from its start).
pub const REFUSED_TEXT: usize = 256;

impl Refused {
    /// The refusal as kept: its texts from notifications cut to
    /// [`REFUSED_TEXT`] bytes, so that a flood of long titles costs a
    /// bounded ledger.
    pub fn bounded(mut self) -> Refused {
        for text in [
            &mut self.role,
            &mut self.cause.host,
            &mut self.cause.resource,
        ] {
            cut(text, REFUSED_TEXT);
        }
        self
    }
}

/// `text` cut to at most `max` bytes at a character boundary, ending in
/// `…` when cut.
fn cut(text: &mut String, max: usize) {
    if text.len() <= max {
        return;
    }
    let mut end = max - '…'.len_utf8();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push('…');
}

/// One sender's refusals: the newest kept, the rest only counted, so
/// that no sender's flood costs more than a few KiB, nor pushes out what
/// another sender did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SenderRefusals {
    pub sender: String,
    /// Oldest first, at most [`KEPT_PER_SENDER`].
    pub kept: Vec<Refused>,
    /// Refusals of this sender no longer kept.
    pub not_kept: u64,
}

/// Refusals kept per sender.
pub const KEPT_PER_SENDER: usize = 20;

impl SenderRefusals {
    /// Keeps `refused`, counting the oldest beyond the cap.
    pub fn add(&mut self, refused: Refused) {
        self.kept.push(refused.bounded());
        if self.kept.len() > KEPT_PER_SENDER {
            let over = self.kept.len() - KEPT_PER_SENDER;
            self.kept.drain(..over);
            self.not_kept = self.not_kept.saturating_add(over as u64);
        }
    }

    /// When it last refused.
    pub fn last_at(&self) -> Millis {
        self.kept.iter().map(|r| r.at).max().unwrap_or(0)
    }
}

/// One file of the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
// A kick is larger than a refusal, and a ledger holds a few hundred of
// each: boxing every kick would cost more allocations than the bytes it
// saves.
#[allow(clippy::large_enum_variant)]
pub enum Record {
    Kick(Kick),
    Refused(Refused),
}

impl Record {
    pub fn id(&self) -> &str {
        match self {
            Record::Kick(k) => &k.id,
            Record::Refused(r) => &r.id,
        }
    }
}
