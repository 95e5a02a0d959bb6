//! The ledger in a Redis (or Valkey) that two managers share: the same
//! entries as the local directory's files, under one key prefix.
//!
//! - `PREFIX kicks`: a hash, kick id → sealed record; `PREFIX state`: a
//!   hash of the rest (each sender's refusals, the inventory), their
//!   write times in the sorted set `PREFIX touched`.
//! - `PREFIX lock`: the lock, a lease (`SET NX PX`) with a token of
//!   ours. Every write checks in the same script that the lock is still
//!   ours, so a manager that lost it (paused past the lease) writes
//!   nothing.
//! - `PREFIX slot:N`, `PREFIX alive:MANAGER:PID:TICKS`: leases that a
//!   running supervisor renews: a slot of `max_parallel`, and the sign
//!   that it lives, which the other manager reads (a PID of another host
//!   tells nothing).
//! - `PREFIX claim:SENDER REQUEST`: which manager acted on a request that
//!   both heard.
//!
//! Every call has a deadline (`[ledger] timeout`, and the handler's one
//! second in all); a reply is bounded in bytes and values like the
//! agent's; a value is believed only when its seal holds ([`super::seal`]).
//! A connection that fails is dropped and the master found again (by the
//! sentinels) at the next call.

use super::seal::Seal;
use crate::config::{RedisAddress, RedisInstance};
use crate::kick::record::Millis;
use crate::kick::shared_settings::SharedLedger;
use crate::redis::connection::{self, ConnectError, ReplyBudget};
use crate::secret::Secret;
use redis::aio::MultiplexedConnection;
use redis::Value;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// The lock's lease: a manager that dies holding it holds it no longer.
const LOCK_LEASE: Duration = Duration::from_secs(2);
/// A slot's and a supervisor's lease, renewed a third of it apart.
pub const LEASE: Duration = Duration::from_secs(15);
/// How long a claim on a request is kept: far longer than the same
/// notification takes to reach both managers.
const CLAIM_KEEP: Duration = Duration::from_secs(3600);
/// A reply's bytes at most: every kick of a full ledger, each of a few
/// KiB, fits.
const MAX_REPLY_BYTES: u64 = 64 << 20;
/// No key file is read beyond this.
const MAX_KEY_FILE_BYTES: u64 = 4096;

/// Writes only while the lock (KEYS[1]) holds our token (ARGV[1]):
/// ARGV[2] `set` puts ARGV[4] in hash KEYS[2] as field ARGV[3] and its
/// time ARGV[5] in the set KEYS[3]; `del` removes both; `claim` sets
/// KEYS[2] to ARGV[3] for ARGV[4] ms unless it exists (1: set).
const FENCED: &str = r#"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('LOCKLOST the ledger lock is no longer ours')
end
if ARGV[2] == 'set' then
  redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
  redis.call('ZADD', KEYS[3], ARGV[5], ARGV[3])
elseif ARGV[2] == 'del' then
  redis.call('HDEL', KEYS[2], ARGV[3])
  redis.call('ZREM', KEYS[3], ARGV[3])
elseif ARGV[2] == 'claim' then
  if redis.call('SET', KEYS[2], ARGV[3], 'NX', 'PX', ARGV[4]) then return 1 end
  return 0
end
return 1
"#;

/// Ends (`del`) or renews (`renew`, ARGV[3] ms) lease KEYS[1] if it is
/// still ours (ARGV[1]); a lease a failover forgot (it is nobody's) is
/// ours again on renewal.
const LEASED: &str = r#"
local holder = redis.call('GET', KEYS[1])
if ARGV[2] == 'del' then
  if holder == ARGV[1] then return redis.call('DEL', KEYS[1]) end
  return 0
end
if holder == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
if not holder then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
  return 1
end
return 0
"#;

enum Ask<'a> {
    One(&'a redis::Cmd),
    Many(&'a redis::Pipeline),
}

pub struct Shared {
    runtime: tokio::runtime::Runtime,
    connection: Mutex<Option<MultiplexedConnection>>,
    settings: SharedLedger,
    password: Option<Secret>,
    seal: Seal,
    budget: ReplyBudget,
    /// No call is made after this (the handler's answer to snmptrapd).
    deadline: Mutex<Option<Instant>>,
    /// Leases this process holds and renews (key, token).
    leases: Mutex<Vec<(String, String)>>,
    beating: Mutex<bool>,
}

/// A lease held until dropped (then ended at once, not left to expire).
pub struct Lease {
    shared: Weak<Shared>,
    key: String,
    token: String,
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.upgrade() {
            shared.end_lease(&self.key, &self.token);
        }
    }
}

fn token() -> String {
    format!("{:032x}", rand::random::<u128>())
}

fn failed(e: ConnectError) -> String {
    match e {
        ConnectError::Redis(e) => connection::describe(&e),
        ConnectError::Other(text) => text,
    }
}

impl Shared {
    /// Reads the password and the key; connects at the first call.
    pub fn open(settings: &SharedLedger) -> Result<Arc<Shared>, String> {
        let password = match &settings.password_file {
            Some(path) => {
                let (secret, warning) = crate::secret::read_password_file(path)
                    .map_err(|e| format!("[ledger] password_file: {e}"))?;
                if let Some(w) = warning {
                    tracing::warn!("kick: {w}");
                }
                Some(secret)
            }
            None => None,
        };
        let key = crate::secret::read_regular_file(&settings.key_file, MAX_KEY_FILE_BYTES)
            .map_err(|e| format!("[ledger] key_file {}: {e}", settings.key_file.display()))?;
        if let Some(w) = crate::secret::world_readable_warning(&settings.key_file, "a key") {
            tracing::warn!("kick: {w}");
        }
        let seal = Seal::new(&key)
            .map_err(|e| format!("[ledger] key_file {}: {e}", settings.key_file.display()))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("the ledger's runtime: {e}"))?;
        Ok(Arc::new(Shared {
            runtime,
            connection: Mutex::new(None),
            settings: settings.clone(),
            password,
            seal,
            budget: ReplyBudget::new(MAX_REPLY_BYTES),
            deadline: Mutex::new(None),
            leases: Mutex::new(Vec::new()),
            beating: Mutex::new(false),
        }))
    }

    pub fn manager(&self) -> &str {
        &self.settings.manager
    }

    /// No call after `within` from now: the handler's bound.
    pub fn set_deadline(&self, within: Duration) {
        *lock(&self.deadline) = Some(Instant::now() + within);
    }

    fn key(&self, name: &str) -> String {
        format!("{}{name}", self.settings.prefix)
    }

    /// The instance of `address`, with the ledger's user, password and TLS.
    fn instance(&self, address: RedisAddress, with_password: bool) -> RedisInstance {
        let mut instance = RedisInstance::new("ledger".to_string(), address);
        if with_password {
            instance.username = self.settings.username.clone();
            instance.password = self.password.clone();
        }
        instance.tls = self.settings.tls_files.clone();
        instance.timeout = self.settings.timeout;
        instance.max_reply_bytes = MAX_REPLY_BYTES;
        instance
    }

    fn address(&self, host: String, port: u16) -> RedisAddress {
        if self.settings.tls {
            RedisAddress::Tls { host, port }
        } else {
            RedisAddress::Tcp { host, port }
        }
    }

    /// The master: as configured, or as the first sentinel that knows it
    /// says.
    async fn master(&self) -> Result<RedisAddress, String> {
        if let Some(address) = &self.settings.address {
            return Ok(address.clone());
        }
        let name = self.settings.master_name.as_deref().unwrap_or_default();
        let mut said = Vec::new();
        for (host, port) in &self.settings.sentinels {
            let sentinel = self.instance(self.address(host.clone(), *port), false);
            let asked = async {
                let mut c = connection::connect(&sentinel, &self.budget)
                    .await
                    .map_err(failed)?;
                self.budget.renew();
                let reply: Value = redis::cmd("SENTINEL")
                    .arg("GET-MASTER-ADDR-BY-NAME")
                    .arg(name)
                    .query_async(&mut c)
                    .await
                    .map_err(|e| connection::describe(&e))?;
                match reply {
                    Value::Array(pair) if pair.len() == 2 => {
                        let text = |v: &Value| match v {
                            Value::BulkString(b) => String::from_utf8(b.clone()).ok(),
                            _ => None,
                        };
                        let host = text(&pair[0]).filter(|h| h.len() <= 255);
                        let port = text(&pair[1]).and_then(|p| p.parse::<u16>().ok());
                        match (host, port) {
                            (Some(h), Some(p)) if p != 0 => Ok(self.address(h, p)),
                            _ => Err("its answer is not a host and a port".to_string()),
                        }
                    }
                    Value::Nil => Err(format!("it knows no master {name:?}")),
                    _ => Err("its answer is not a host and a port".to_string()),
                }
            };
            match tokio::time::timeout(self.settings.timeout, asked).await {
                Ok(Ok(address)) => return Ok(address),
                Ok(Err(e)) => said.push(format!("{host}:{port}: {e}")),
                Err(_) => said.push(format!("{host}:{port}: no answer in time")),
            }
        }
        Err(format!(
            "no sentinel named the master {name:?} ({})",
            crate::text::printable(&said.join("; "))
        ))
    }

    async fn connect(&self) -> Result<MultiplexedConnection, String> {
        let address = self.master().await?;
        let instance = self.instance(address.clone(), true);
        let mut c = connection::connect(&instance, &self.budget)
            .await
            .map_err(|e| format!("{address}: {}", failed(e)))?;
        if self.settings.database != 0 {
            self.budget.renew();
            redis::cmd("SELECT")
                .arg(self.settings.database)
                .query_async::<()>(&mut c)
                .await
                .map_err(|e| format!("{address}: {}", connection::describe(&e)))?;
        }
        Ok(c)
    }

    /// Runs `cmd` within the call's deadline, connecting first if need
    /// be. A failed connection is dropped: the next call finds the master
    /// again.
    pub fn query(&self, cmd: &redis::Cmd) -> Result<Value, String> {
        self.ask(Ask::One(cmd))
    }

    fn ask(&self, ask: Ask<'_>) -> Result<Value, String> {
        let mut held = lock(&self.connection);
        let within = match *lock(&self.deadline) {
            Some(at) => at.saturating_duration_since(Instant::now()),
            None => Duration::MAX,
        };
        if within.is_zero() {
            return Err("the ledger: no time left to ask it".to_string());
        }
        // A connection may first ask each sentinel in turn (a dead one
        // costs its timeout), then the master; the command its own.
        let asked = u32::try_from(self.settings.sentinels.len()).unwrap_or(16);
        let bound = within.min(self.settings.timeout * (2 + asked));
        let outcome = self.runtime.block_on(async {
            tokio::time::timeout(bound, async {
                if held.is_none() {
                    *held = Some(self.connect().await.map_err(|e| (true, e))?);
                }
                let c = held.as_mut().expect("just connected");
                self.budget.renew();
                let answer = match ask {
                    Ask::One(cmd) => cmd.query_async::<Value>(c).await,
                    Ask::Many(pipe) => pipe.query_async::<Value>(c).await,
                };
                answer.map_err(|e| {
                    let ours = e.code() == Some("LOCKLOST");
                    (!ours, connection::describe(&e))
                })
            })
            .await
        });
        let (drop_connection, e) = match outcome {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err((drop_connection, e))) => (drop_connection, e),
            Err(_) => (true, format!("no answer within {} ms", bound.as_millis())),
        };
        if drop_connection {
            *held = None;
        }
        Err(format!("the ledger: {e}"))
    }

    /// Takes the lock within `wait`: the token to write with.
    pub fn lock(&self, wait: Duration) -> Result<String, String> {
        let token = token();
        let deadline = Instant::now() + wait;
        let mut last;
        loop {
            let mut set = redis::cmd("SET");
            set.arg(self.key("lock"))
                .arg(&token)
                .arg("NX")
                .arg("PX")
                .arg(LOCK_LEASE.as_millis() as u64);
            match self.query(&set) {
                Ok(Value::Okay) => return Ok(token),
                Ok(_) => last = "held by another".to_string(),
                Err(e) => last = e,
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "the ledger's lock was not had within {wait:?} ({last})"
                ));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    pub fn unlock(&self, token: &str) {
        self.end_lease(&self.key("lock"), token);
    }

    fn fenced(&self, token: &str, args: &[&[u8]], keys: [&str; 2]) -> Result<Value, String> {
        let mut eval = redis::cmd("EVAL");
        eval.arg(FENCED)
            .arg(3)
            .arg(self.key("lock"))
            .arg(keys[0])
            .arg(keys[1])
            .arg(token);
        for a in args {
            eval.arg(*a);
        }
        self.query(&eval)
    }

    fn hash_of(&self, name: &str) -> String {
        self.key(if is_kick(name) { "kicks" } else { "state" })
    }

    /// Puts `json` as entry `name`, sealed, while the lock is ours.
    pub fn replace(&self, token: &str, name: &str, json: &[u8], now: Millis) -> Result<(), String> {
        let value = self.seal.seal(name, json);
        let at = now.to_string();
        let (hash, touched) = (self.hash_of(name), self.key("touched"));
        self.fenced(
            token,
            &[b"set", name.as_bytes(), &value, at.as_bytes()],
            [&hash, &touched],
        )
        .map(drop)
    }

    pub fn unlink(&self, token: &str, name: &str) -> Result<(), String> {
        let (hash, touched) = (self.hash_of(name), self.key("touched"));
        self.fenced(token, &[b"del", name.as_bytes()], [&hash, &touched])
            .map(drop)
    }

    /// Entry `name`'s JSON, if it is there, fits `max` and its seal holds.
    pub fn read(&self, name: &str, max: u64) -> Option<Vec<u8>> {
        let mut get = redis::cmd("HGET");
        get.arg(self.hash_of(name)).arg(name);
        match self.query(&get) {
            Ok(Value::BulkString(value)) => self.opened(name, &value, max),
            Ok(Value::Nil) => None,
            Ok(_) => {
                tracing::warn!("kick: the ledger's {}: not a string", escaped(name));
                None
            }
            Err(e) => {
                tracing::warn!("kick: reading {}: {e}", escaped(name));
                None
            }
        }
    }

    fn opened(&self, name: &str, value: &[u8], max: u64) -> Option<Vec<u8>> {
        if value.len() as u64 > max + 64 {
            tracing::warn!(
                "kick: the ledger's {} is refused: {} bytes, more than {max}",
                escaped(name),
                value.len()
            );
            return None;
        }
        match self.seal.open(name, value) {
            Ok(json) => Some(json.to_vec()),
            Err(why) => {
                tracing::warn!("kick: the ledger's {} is refused: {why}", escaped(name));
                None
            }
        }
    }

    /// Every kick entry (name, JSON) whose seal holds and that fits
    /// `max`; the others are named in the log and left out.
    pub fn kicks(&self, max: u64) -> Result<Vec<(String, Vec<u8>)>, String> {
        let mut all = redis::cmd("HGETALL");
        all.arg(self.key("kicks"));
        let reply = self.query(&all)?;
        let Value::Array(items) = reply else {
            return Err("the ledger's kicks: not a hash".to_string());
        };
        let mut kicks = Vec::with_capacity(items.len() / 2);
        for pair in items.chunks(2) {
            let [Value::BulkString(name), Value::BulkString(value)] = pair else {
                continue;
            };
            let Ok(name) = String::from_utf8(name.clone()) else {
                tracing::warn!("kick: the ledger holds a kick whose name is not UTF-8");
                continue;
            };
            if let Some(json) = self.opened(&name, value, max) {
                kicks.push((name, json));
            }
        }
        Ok(kicks)
    }

    /// The names of the entries that are not kicks, with when each was
    /// last written.
    pub fn touched(&self) -> Result<Vec<(String, Millis)>, String> {
        let mut range = redis::cmd("ZRANGE");
        range
            .arg(self.key("touched"))
            .arg(0)
            .arg(-1)
            .arg("WITHSCORES");
        let Value::Array(items) = self.query(&range)? else {
            return Err("the ledger's times: not a sorted set".to_string());
        };
        Ok(items
            .chunks(2)
            .filter_map(|pair| match pair {
                [Value::BulkString(name), score] => {
                    let name = String::from_utf8(name.clone()).ok()?;
                    let at = match score {
                        Value::BulkString(s) => std::str::from_utf8(s).ok()?.parse::<f64>().ok()?,
                        Value::Double(d) => *d,
                        _ => return None,
                    };
                    Some((name, at.max(0.0) as Millis))
                }
                _ => None,
            })
            .filter(|(name, _)| !is_kick(name))
            .collect())
    }

    /// A free slot of `slots`, held while the lease is.
    pub fn try_slot(self: &Arc<Self>, slots: usize) -> Result<Option<Lease>, String> {
        for n in 0..slots {
            if let Some(lease) = self.take_lease(&format!("slot:{n}"))? {
                return Ok(Some(lease));
            }
        }
        Ok(None)
    }

    /// Lease `name`, if nobody holds it, renewed while this process lives
    /// and ended when dropped.
    pub fn take_lease(self: &Arc<Self>, name: &str) -> Result<Option<Lease>, String> {
        self.lease(name, true, true)
    }

    /// Whether lease `name` is held by anyone.
    pub fn held(&self, name: &str) -> Result<bool, String> {
        let mut exists = redis::cmd("EXISTS");
        exists.arg(self.key(name));
        Ok(self.query(&exists)? == Value::Int(1))
    }

    /// Whether each lease of `names` is held by anyone, asked at once.
    pub fn held_each(&self, names: &[String]) -> Result<Vec<bool>, String> {
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for name in names {
            pipe.cmd("EXISTS").arg(self.key(name));
        }
        match self.ask(Ask::Many(&pipe))? {
            Value::Array(answers) if answers.len() == names.len() => {
                Ok(answers.iter().map(|a| *a != Value::Int(0)).collect())
            }
            _ => Err("the ledger: EXISTS answered something else".to_string()),
        }
    }

    /// Sets lease `name` to a token of ours for [`LEASE`], whoever held it
    /// (a supervisor takes over what its handler announced), renewed
    /// while `renew` and this process live.
    pub fn set_lease(self: &Arc<Self>, name: &str, renew: bool) -> Result<Option<Lease>, String> {
        self.lease(name, false, renew)
    }

    /// Lease `name` for [`LEASE`]: `exclusive`, only if nobody holds it;
    /// with `renew`, renewed while the returned lease lives.
    fn lease(
        self: &Arc<Self>,
        name: &str,
        exclusive: bool,
        renew: bool,
    ) -> Result<Option<Lease>, String> {
        let (key, token) = (self.key(name), token());
        let mut set = redis::cmd("SET");
        set.arg(&key).arg(&token);
        if exclusive {
            set.arg("NX");
        }
        set.arg("PX").arg(LEASE.as_millis() as u64);
        if self.query(&set)? != Value::Okay || !renew {
            return Ok(None);
        }
        lock(&self.leases).push((key.clone(), token.clone()));
        self.beat();
        Ok(Some(Lease {
            shared: Arc::downgrade(self),
            key,
            token,
        }))
    }

    fn end_lease(&self, key: &str, token: &str) {
        lock(&self.leases).retain(|(k, _)| k != key);
        let mut eval = redis::cmd("EVAL");
        eval.arg(LEASED).arg(1).arg(key).arg(token).arg("del");
        // A lease not ended expires by itself.
        let _ = self.query(&eval);
    }

    /// Renews this process' leases every third of [`LEASE`], on a thread
    /// of its own, for as long as the ledger is open.
    fn beat(self: &Arc<Self>) {
        let mut beating = lock(&self.beating);
        if *beating {
            return;
        }
        *beating = true;
        let shared = Arc::downgrade(self);
        let spawned = std::thread::Builder::new()
            .name("ledger-leases".into())
            .spawn(move || loop {
                std::thread::sleep(LEASE / 3);
                let Some(shared) = shared.upgrade() else {
                    return;
                };
                let leases = lock(&shared.leases).clone();
                for (key, token) in leases {
                    let mut eval = redis::cmd("EVAL");
                    eval.arg(LEASED)
                        .arg(1)
                        .arg(&key)
                        .arg(&token)
                        .arg("renew")
                        .arg(LEASE.as_millis() as u64);
                    if let Err(e) = shared.query(&eval) {
                        tracing::warn!("kick: renewing {}: {e}", escaped(&key));
                    }
                }
            });
        if spawned.is_err() {
            *beating = false;
        }
    }

    /// The manager that claimed request `name`, if one did.
    pub fn taken_by(&self, name: &str) -> Result<Option<String>, String> {
        let mut get = redis::cmd("GET");
        get.arg(self.key(&format!("claim:{name}")));
        Ok(match self.query(&get)? {
            Value::BulkString(by) => Some(crate::text::printable(&String::from_utf8_lossy(&by))),
            _ => None,
        })
    }

    /// Claims the request `name` for this manager while the lock is ours:
    /// `None` when it is ours now, else the manager that had it.
    pub fn claim(&self, token: &str, name: &str) -> Result<Option<String>, String> {
        let key = self.key(&format!("claim:{name}"));
        let keep = CLAIM_KEEP.as_millis().to_string();
        let taken = self.fenced(
            token,
            &[b"claim", self.settings.manager.as_bytes(), keep.as_bytes()],
            [&key, &key],
        )?;
        if taken == Value::Int(1) {
            return Ok(None);
        }
        let mut get = redis::cmd("GET");
        get.arg(&key);
        Ok(Some(match self.query(&get)? {
            Value::BulkString(by) => crate::text::printable(&String::from_utf8_lossy(&by)),
            _ => "another manager".to_string(),
        }))
    }

    /// Waits until the replicas the settings ask for hold what was
    /// written, within the call's deadline; says so when they do not.
    pub fn wait_for_replicas(&self) {
        let wanted = self.settings.replicas;
        if wanted == 0 {
            return;
        }
        let mut wait = redis::cmd("WAIT");
        wait.arg(wanted)
            .arg(self.settings.timeout.as_millis() as u64);
        match self.query(&wait) {
            Ok(Value::Int(n)) if n >= i64::from(wanted) => {}
            Ok(Value::Int(n)) => tracing::warn!(
                "kick: {n} of the ledger's replicas hold the last write, not {wanted}: \
                 a failover now could forget it"
            ),
            Ok(_) => tracing::warn!("kick: the ledger's WAIT answered something else"),
            Err(e) => tracing::warn!("kick: {e}"),
        }
    }
}

fn is_kick(name: &str) -> bool {
    name.ends_with(".json")
}

fn escaped(name: &str) -> String {
    crate::text::printable(name)
}

/// A poisoned lock is still the data: nothing here is left half-changed.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
