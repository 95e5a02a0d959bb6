//! What the ledger remembers of each kick and each refusal: plain data,
//! one JSON file per record in the state directory.

use serde::{Deserialize, Serialize};

/// Milliseconds since the Unix epoch.
pub type Millis = u64;

/// Who caused a kick: the host whose notification asked for it, and the
/// resource that changed there.
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
/// taken for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Supervisor {
    pub pid: u32,
    pub start_ticks: u64,
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

/// One file of the ledger.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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

    /// When it happened, for ordering and pruning.
    pub fn at(&self) -> Millis {
        match self {
            Record::Kick(k) => k.ended_at.unwrap_or(k.queued_at),
            Record::Refused(r) => r.at,
        }
    }
}
