//! The Redis client of one instance: Redis on the agent's terms, apart
//! from when to ask what (the poller's schedule, [`super::poller`]).
//!
//! It owns the connection and its [`ReplyBudget`], renewed before each
//! command (or pipeline); the INFO variant this server understands; the
//! optional commands it refused (not asked again on this connection, and
//! said once in the log: managed and locked-down servers refuse CONFIG,
//! CLUSTER…); what it said of its databases. Its errors are in the words
//! of [`super::connection::describe`], the same for the same fault on
//! every poll.

use super::clients;
use super::connection::{self, describe, is_transient, ConnectError, ReplyBudget};
use super::replies;
use crate::config::RedisInstance;
use crate::x509::ServerCertificate;
use redis::aio::MultiplexedConnection;
use redis::Value;
use std::collections::HashSet;
use tracing::{debug, info, warn};

/// The INFO variants to try, richest first. `everything` exists since 7.0,
/// `all` since 2.8; older servers answer an unknown section with an error or
/// an empty reply, and get plain `INFO`.
const INFO_SECTIONS: &[Option<&str>] = &[Some("everything"), Some("all"), None];

pub struct Client {
    instance: RedisInstance,
    connection: Option<MultiplexedConnection>,
    /// What the reply to the command being asked may still take.
    budget: ReplyBudget,
    /// Which entry of `INFO_SECTIONS` this server understands.
    info_variant: usize,
    databases: Databases,
    /// Optional commands this server refused on this connection.
    refused: HashSet<String>,
    /// Whether a refused CLIENT SETNAME was logged already.
    setname_refusal_said: bool,
}

/// What opening the connection gave.
pub enum Connect {
    /// The connection of the last poll, still open.
    Kept,
    /// A new one (perhaps to a new server), and the certificate it showed
    /// (`rediss://` only).
    New(Option<ServerCertificate>),
}

/// Why a poll failed: the words for the log and `redisInstanceLastError`,
/// and whether a connection that was established broke on the way.
#[derive(Debug)]
pub struct PollError {
    pub text: String,
    pub lost_connection: bool,
}

impl From<String> for PollError {
    fn from(text: String) -> Self {
        PollError {
            text,
            lost_connection: false,
        }
    }
}

impl From<&redis::RedisError> for PollError {
    fn from(e: &redis::RedisError) -> Self {
        PollError {
            text: describe(e),
            // Not a timeout: a hung server would make the retry wait again.
            lost_connection: e.is_connection_dropped() && !e.is_timeout(),
        }
    }
}

/// Why a pipeline has no replies: the connection is gone with it.
#[derive(Debug)]
pub struct Lost {
    pub text: String,
    /// Whether a reply went over the budget (the same pipeline would
    /// again).
    pub over_budget: bool,
}

/// How many databases the server has, as far as it said: its
/// `databases` setting (CONFIG GET, asked once per connection), or else
/// one more than the highest database INFO has listed since the agent
/// started, so that a database that empties keeps its row at zero.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Databases {
    /// `None`: not asked on this connection; `Some(None)`: refused or not
    /// a number.
    configured: Option<Option<u32>>,
    seen: u32,
}

impl Databases {
    /// Whether CONFIG GET databases is still to be asked.
    pub fn ask(&self) -> bool {
        self.configured.is_none()
    }

    /// The answer to CONFIG GET (`None`: refused, or no number).
    pub fn configured(&mut self, databases: Option<u64>) {
        self.configured = Some(databases.and_then(|d| u32::try_from(d).ok()));
    }

    /// INFO listed databases up to `highest` (their numbers): the number
    /// of rows to keep.
    pub fn count(&mut self, highest: Option<u32>) -> Option<u32> {
        let listed = highest.map_or(0, |db| db.saturating_add(1));
        self.seen = self.seen.max(listed);
        self.configured
            .flatten()
            .or((self.seen > 0).then_some(self.seen))
    }

    /// A new connection: perhaps a new server, asked again.
    fn forget_configured(&mut self) {
        self.configured = None;
    }
}

impl Client {
    pub fn new(instance: RedisInstance) -> Self {
        let budget = ReplyBudget::new(instance.max_reply_bytes);
        Client {
            instance,
            connection: None,
            budget,
            info_variant: 0,
            databases: Databases::default(),
            refused: HashSet::new(),
            setname_refusal_said: false,
        }
    }

    pub fn instance(&self) -> &RedisInstance {
        &self.instance
    }

    fn name(&self) -> &str {
        &self.instance.name
    }

    /// Whether a connection is open (it served the last poll).
    pub fn is_connected(&self) -> bool {
        self.connection.is_some()
    }

    /// Drops the connection: the next command connects again.
    pub fn close(&mut self) {
        self.connection = None;
    }

    /// The connection of the last poll, or a new one, named so operators
    /// tell the agent apart in CLIENT LIST.
    pub async fn connect(&mut self) -> Result<Connect, PollError> {
        if self.connection.is_some() {
            return Ok(Connect::Kept);
        }
        let connected = connection::connect_seeing_certificate(&self.instance, &self.budget)
            .await
            .map_err(|e| match e {
                ConnectError::Redis(e) => describe(&e),
                ConnectError::Other(text) => text,
            })?;
        let mut connection = connected.connection;
        self.info_variant = 0;
        self.databases.forget_configured();
        // A fixed ACL or a new server may allow what was refused.
        self.refused.clear();
        self.budget.renew();
        let named = clients::name_connection(
            &mut connection,
            &self.instance.name,
            &mut self.setname_refusal_said,
        )
        .await;
        if let Err(e) = named {
            if self.budget.exceeded() {
                return Err(self.budget.refusal("CLIENT SETNAME").into());
            }
            return Err(PollError::from(&e));
        }
        self.connection = Some(connection);
        Ok(Connect::New(connected.certificate))
    }

    /// Whether the last reply went over the budget.
    pub fn over_budget(&self) -> bool {
        self.budget.exceeded()
    }

    /// Whether this server refused `what` (`"CLIENT LIST"`) on this
    /// connection.
    pub fn refused(&self, what: &str) -> bool {
        self.refused.contains(what)
    }

    /// Whether a richer INFO than plain `INFO` is understood.
    pub fn richer_info(&self) -> bool {
        self.info_variant + 1 < INFO_SECTIONS.len()
    }

    /// An optional command: its reply, or `None` when the server refuses it
    /// (logged once per connection, then not asked again) or fails. A server
    /// that is busy for a while (loading its dataset, running a script)
    /// has not refused: the command is asked again on the next poll.
    pub async fn optional(&mut self, command: &'static str, args: &[&str]) -> Option<Value> {
        let what = match args.first() {
            Some(sub) => format!("{command} {sub}"),
            None => command.to_string(),
        };
        if self.refused.contains(&what) {
            return None;
        }
        let connection = self.connection.as_mut()?;
        self.budget.renew();
        let reply: redis::RedisResult<Value> =
            redis::cmd(command).arg(args).query_async(connection).await;
        match reply {
            Ok(value) => Some(value),
            Err(_) if self.budget.exceeded() => {
                // The connection is gone with the reply: the next poll
                // connects again, and asks again.
                warn!(
                    instance = %self.instance.name,
                    "{}; connection closed",
                    self.budget.refusal(&what)
                );
                self.connection = None;
                None
            }
            Err(e) if e.code().is_some_and(is_transient) => {
                debug!(instance = %self.name(), "{what} not now: {}", describe(&e));
                None
            }
            Err(e) if e.code().is_some() => {
                info!(
                    instance = %self.name(),
                    "Redis refuses {what} ({}); the objects it feeds stay absent",
                    describe(&e)
                );
                self.refused.insert(what);
                None
            }
            Err(e) => {
                debug!(instance = %self.name(), "{what} failed: {}", describe(&e));
                None
            }
        }
    }

    /// The server's databases: its `databases` setting, asked once per
    /// connection, or those INFO listed up to `highest`.
    pub async fn databases(&mut self, highest: Option<u32>) -> Option<u32> {
        if self.databases.ask() {
            let reply = self.optional("CONFIG", &["GET", "databases"]).await;
            // Settled by a reply or a refusal; a transient failure
            // (LOADING…) is asked again next poll.
            if reply.is_some() || self.refused("CONFIG GET") {
                self.databases
                    .configured(reply.as_ref().and_then(replies::config_value));
            }
        }
        self.databases.count(highest)
    }

    /// `INFO [section]`, the budget renewed for its reply: the reply as
    /// the server gave it, or, when it ran over the budget, why not.
    async fn info_reply(
        &mut self,
        section: Option<&str>,
    ) -> Result<redis::RedisResult<Vec<u8>>, PollError> {
        let Some(connection) = self.connection.as_mut() else {
            return Err("not connected".to_string().into());
        };
        let mut command = redis::cmd("INFO");
        if let Some(section) = section {
            command.arg(section);
        }
        self.budget.renew();
        let reply = command.query_async(connection).await;
        if reply.is_err() && self.budget.exceeded() {
            return Err(self.budget.refusal("INFO").into());
        }
        Ok(reply)
    }

    /// Plain `INFO`, its reply checked against the reply budget.
    pub async fn plain_info(&mut self) -> Result<Vec<u8>, PollError> {
        match self.info_reply(None).await? {
            Ok(text) if !text.is_empty() => Ok(text),
            Ok(_) => Err("INFO returned nothing".to_string().into()),
            Err(e) => Err(PollError::from(&e)),
        }
    }

    /// INFO in the richest variant this server understands, trying the
    /// next of `INFO_SECTIONS` when an old server refuses a section.
    pub async fn richest_info(&mut self) -> Result<Vec<u8>, PollError> {
        loop {
            let section = INFO_SECTIONS.get(self.info_variant).copied().flatten();
            let reply = self.info_reply(section).await?;
            let last_variant = !self.richer_info();
            match reply {
                Ok(text) if !text.is_empty() => return Ok(text),
                Ok(_) if !last_variant => self.info_variant += 1,
                Ok(_) => return Err("INFO returned nothing".to_string().into()),
                // A server-side error to a section argument means an old
                // server; an I/O error means the connection is gone.
                Err(e) if !last_variant && e.code() == Some("ERR") => self.info_variant += 1,
                Err(e) => return Err(PollError::from(&e)),
            }
        }
    }

    /// A pipeline's replies, one per command, each a value or the server's
    /// error; `Err` when the connection is gone (closed with it).
    pub async fn pipeline(
        &mut self,
        pipe: &redis::Pipeline,
    ) -> Result<Vec<redis::RedisResult<Value>>, Lost> {
        let Some(connection) = self.connection.as_mut() else {
            return Err(Lost {
                text: "not connected".into(),
                over_budget: false,
            });
        };
        self.budget.renew();
        let replies: redis::RedisResult<Vec<redis::RedisResult<Value>>> =
            pipe.query_async(connection).await;
        match replies {
            Ok(replies) => Ok(replies),
            Err(e) => {
                self.connection = None;
                let over_budget = self.budget.exceeded();
                let text = if over_budget {
                    self.budget.refusal("a pipeline")
                } else {
                    describe(&e)
                };
                Err(Lost { text, over_budget })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error a server's reply `-LINE` becomes.
    fn server_error(line: &str) -> redis::RedisError {
        let value = redis::parse_redis_value(format!("-{line}\r\n").as_bytes()).unwrap();
        value.extract_error().unwrap_err()
    }

    #[test]
    fn a_dropped_connection_is_worth_a_retry_a_timeout_is_not() {
        let dropped = redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert!(PollError::from(&dropped).lost_connection);
        let timeout = redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::TimedOut));
        assert!(!PollError::from(&timeout).lost_connection);
        assert!(!PollError::from(&server_error("ERR no")).lost_connection);
    }

    #[test]
    fn databases_are_the_setting_or_those_seen_since_start() {
        let mut databases = Databases::default();
        assert!(databases.ask());
        // Refused (no CONFIG for the least-privilege user): as listed,
        // and a database that empties keeps its row.
        databases.configured(None);
        assert!(!databases.ask());
        assert_eq!(databases.count(Some(3)), Some(4));
        assert_eq!(databases.count(Some(0)), Some(4));
        assert_eq!(Databases::default().count(None), None);
        // The setting wins once said; a new connection asks again.
        databases.configured(Some(16));
        assert_eq!(databases.count(Some(3)), Some(16));
        databases.forget_configured();
        assert!(databases.ask());
        databases.configured(Some(u64::MAX));
        assert_eq!(databases.count(None), Some(4));
    }
}
