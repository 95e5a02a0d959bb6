//! One task per Redis instance: every refresh interval, read INFO (with
//! connect and response timeouts), and publish the instance's parts to the
//! store. A failed poll publishes "down" and removes the instance's data, so
//! SNMP shows noSuchInstance rather than stale numbers. Errors are logged
//! when they change, not on every poll, so their words must not change
//! while the fault does not (`describe`). A connection the server closed
//! since the last poll is replaced at once, not reported as an outage; a
//! server still loading its dataset is reachable, and reported as loading.

use super::info::Info;
use super::readings::{instance_part, status_part, Extras, InstanceStatus};
use super::replies;
use crate::config::{RedisAddress, RedisInstance, TlsFiles};
use crate::metrics::Layout;
use crate::notify::{Notifier, RedisObservation};
use crate::secret;
use crate::smi::unix_now;
use crate::snapshot::{PartKey, Store};
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, ConnectionAddr, IntoConnectionInfo, RedisConnectionInfo};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

/// The INFO variants to try, richest first. `everything` exists since 7.0,
/// `all` since 2.8; older servers answer an unknown section with an error or
/// an empty reply, and get plain `INFO`.
const INFO_SECTIONS: &[Option<&str>] = &[Some("everything"), Some("all"), None];

pub struct Poller {
    /// 1-based instance number: the row of `redisInstanceTable`.
    index: u32,
    instance: RedisInstance,
    store: Arc<Store>,
    notifier: Arc<Notifier>,
    layout: Layout,
    refresh: Duration,
    status: InstanceStatus,
    connection: Option<MultiplexedConnection>,
    /// Which entry of `INFO_SECTIONS` this server understands.
    info_variant: usize,
    /// The server's `databases` setting, asked once per connection.
    databases: Option<Option<u32>>,
    /// Optional commands this server refused: not asked again on this
    /// connection, and said once in the log (managed and locked-down servers
    /// refuse CONFIG, CLUSTER…).
    refused: HashSet<String>,
}

impl Poller {
    pub fn new(
        index: u32,
        instance: RedisInstance,
        store: Arc<Store>,
        notifier: Arc<Notifier>,
        layout: Layout,
        refresh: Duration,
    ) -> Self {
        let status = InstanceStatus {
            name: instance.name.clone(),
            address: instance.address.to_string(),
            ..Default::default()
        };
        Poller {
            index,
            instance,
            store,
            notifier,
            layout,
            refresh,
            status,
            connection: None,
            info_variant: 0,
            databases: None,
            refused: HashSet::new(),
        }
    }

    pub async fn run(mut self, shutdown: CancellationToken) {
        let mut timer = tokio::time::interval(self.refresh);
        timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = timer.tick() => self.poll().await,
                _ = shutdown.cancelled() => return,
            }
        }
    }

    /// Poll once and publish the outcome.
    pub async fn poll(&mut self) {
        let started = Instant::now();
        let outcome = self.read().await;
        self.status.poll_millis = u32::try_from(started.elapsed().as_millis()).unwrap_or(u32::MAX);
        let observation = match &outcome {
            Ok((info, _)) => RedisObservation::from_info(info),
            Err(_) => RedisObservation::down(),
        };
        match outcome {
            Ok((info, extras)) => {
                if !self.status.up && self.status.polls_failed > 0 {
                    info!(instance = %self.status.name, "Redis at {} answers again", self.status.address);
                }
                self.note_loading(info.get("loading") == Some("1"));
                self.status.up = true;
                self.status.last_error.clear();
                self.status.last_ok_unix = Some(unix_now());
                self.status.polls_ok = self.status.polls_ok.wrapping_add(1);
                let data =
                    instance_part(self.index, &self.status.name, &info, &self.layout, &extras);
                self.store.stage(PartKey::RedisInstance(self.index), data);
            }
            Err(error) => {
                let error = secret::redact(&error, self.instance.password.as_ref());
                if error != self.status.last_error
                    || self.status.up
                    || self.status.polls_failed == 0
                {
                    warn!(instance = %self.status.name, "cannot poll Redis at {}: {error}", self.status.address);
                } else {
                    debug!(instance = %self.status.name, "still failing: {error}");
                }
                self.status.up = false;
                self.status.loading = false;
                self.status.last_error = error;
                self.status.polls_failed = self.status.polls_failed.wrapping_add(1);
                self.connection = None;
                self.store
                    .stage(PartKey::RedisInstance(self.index), Vec::new());
            }
        }
        let status = status_part(self.index, &self.status, &self.layout);
        self.store.stage(PartKey::RedisStatus(self.index), status);
        self.notifier.redis_observed(self.index, &observation);
    }

    /// Says once when the server starts and when it stops loading its
    /// dataset (state loading(3)), not on every poll while it does.
    fn note_loading(&mut self, loading: bool) {
        if loading && !self.status.loading {
            info!(instance = %self.status.name, "Redis at {} is loading its dataset", self.status.address);
        } else if !loading && self.status.loading {
            info!(instance = %self.status.name, "Redis at {} has loaded its dataset", self.status.address);
        }
        self.status.loading = loading;
    }

    /// INFO and the optional commands, tried once more on a new connection
    /// when the one that served the last poll was closed since (the server
    /// restarted, closed it as idle, a proxy dropped it): that is no outage,
    /// and reporting it as one would flap the state and the log.
    async fn read(&mut self) -> Result<(Info, Extras), String> {
        let reused = self.connection.is_some();
        match self.read_once().await {
            Err(e) if reused && e.lost_connection => {
                debug!(instance = %self.status.name, "connection lost ({}); connecting again", e.text);
                self.connection = None;
                self.read_once().await
            }
            outcome => outcome,
        }
        .map_err(|e| e.text)
    }

    /// INFO (with the fields of CLUSTER INFO on cluster nodes) and what the
    /// optional commands this server allows tell.
    async fn read_once(&mut self) -> Result<(Info, Extras), PollError> {
        if self.connection.is_none() {
            self.connection = Some(self.connect().await?);
            self.info_variant = 0;
            self.databases = None;
            // A fixed ACL or a new server may allow what was refused.
            self.refused.clear();
        }
        let info = self.read_info().await?;
        let mut extras = Extras::default();
        if info.get("redis_mode") == Some("sentinel") {
            if let Some(reply) = self.optional_query("SENTINEL", &["MASTERS"]).await {
                extras.sentinel_masters = replies::sentinel_masters(&reply);
            }
        } else {
            if self.databases.is_none() {
                let reply = self.optional_query("CONFIG", &["GET", "databases"]).await;
                let databases = reply.as_ref().and_then(replies::config_value);
                // Settled by a reply or a refusal; a transient failure
                // (LOADING…) is asked again next poll.
                if reply.is_some() || self.refused.contains("CONFIG GET") {
                    self.databases = Some(databases.and_then(|d| u32::try_from(d).ok()));
                }
            }
            extras.databases = self.databases.flatten();
            if let Some(reply) = self.optional_query("SLOWLOG", &["LEN"]).await {
                extras.slowlog_len = replies::slowlog_len(&reply);
            }
            if let Some(reply) = self.optional_query("SLOWLOG", &["GET", "1"]).await {
                extras.slowlog_last = replies::slowlog_newest(&reply);
            }
            if let Some(reply) = self.optional_query("LATENCY", &["LATEST"]).await {
                extras.latency = replies::latency_latest(&reply);
            }
        }
        Ok((info, extras))
    }

    /// INFO, with the fields of CLUSTER INFO added on cluster nodes.
    async fn read_info(&mut self) -> Result<Info, PollError> {
        let mut text = self.read_info_text().await?;
        let info = Info::parse_bytes(&text);
        if info.get("cluster_enabled") != Some("1") {
            return Ok(info);
        }
        // A cluster node: its CLUSTER INFO fields join INFO's, parsed once more.
        let Some(cluster) = self.optional_query("CLUSTER", &["INFO"]).await else {
            return Ok(info);
        };
        match redis::from_redis_value::<Vec<u8>>(cluster) {
            Ok(bytes) => {
                text.extend_from_slice(b"\r\n# Cluster info\r\n");
                text.extend_from_slice(&bytes);
                Ok(Info::parse_bytes(&text))
            }
            Err(_) => Ok(info),
        }
    }

    /// An optional command: its reply, or `None` when the server refuses it
    /// (logged once per instance, then not asked again) or fails. A server
    /// that is busy for a while (loading its dataset, running a script)
    /// has not refused: the command is asked again on the next poll.
    async fn optional_query(
        &mut self,
        command: &'static str,
        args: &[&str],
    ) -> Option<redis::Value> {
        let what = match args.first() {
            Some(sub) => format!("{command} {sub}"),
            None => command.to_string(),
        };
        if self.refused.contains(&what) {
            return None;
        }
        let connection = self.connection.as_mut()?;
        let reply: redis::RedisResult<redis::Value> =
            redis::cmd(command).arg(args).query_async(connection).await;
        match reply {
            Ok(value) => Some(value),
            Err(e) if e.code().is_some_and(is_transient) => {
                debug!(instance = %self.status.name, "{what} not now: {}", describe(&e));
                None
            }
            Err(e) if e.code().is_some() => {
                info!(
                    instance = %self.status.name,
                    "Redis refuses {what} ({}); the objects it feeds stay absent",
                    describe(&e)
                );
                self.refused.insert(what);
                None
            }
            Err(e) => {
                debug!(instance = %self.status.name, "{what} failed: {}", describe(&e));
                None
            }
        }
    }

    async fn read_info_text(&mut self) -> Result<Vec<u8>, PollError> {
        let Some(connection) = self.connection.as_mut() else {
            return Err("not connected".to_string().into());
        };
        loop {
            let section = INFO_SECTIONS.get(self.info_variant).copied().flatten();
            let mut command = redis::cmd("INFO");
            if let Some(section) = section {
                command.arg(section);
            }
            let reply: redis::RedisResult<Vec<u8>> = command.query_async(connection).await;
            let last_variant = self.info_variant + 1 >= INFO_SECTIONS.len();
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

    async fn connect(&self) -> Result<MultiplexedConnection, String> {
        let tls = &self.instance.tls;
        let mut resolver = None;
        let addr = match &self.instance.address {
            RedisAddress::Tcp { host, port } => ConnectionAddr::Tcp(host.clone(), *port),
            RedisAddress::Unix(path) => ConnectionAddr::Unix(path.clone()),
            RedisAddress::Tls { host, port } => {
                // The redis crate verifies the certificate against the host it
                // connects to; to verify another name, connect "to" that name
                // and resolve it to the configured host ourselves.
                let name = match &tls.server_name {
                    Some(name) if name != host => {
                        resolver = Some(FixedResolver { host: host.clone() });
                        name.clone()
                    }
                    _ => host.clone(),
                };
                ConnectionAddr::TcpTls {
                    host: name,
                    port: *port,
                    insecure: false,
                    tls_params: None,
                }
            }
        };
        let mut settings = RedisConnectionInfo::default().set_skip_set_lib_name();
        if let Some(user) = &self.instance.username {
            settings = settings.set_username(user);
        }
        if let Some(password) = &self.instance.password {
            settings = settings.set_password(password.expose());
        }
        let info = addr
            .into_connection_info()
            .map_err(|e| describe(&e))?
            .set_redis_settings(settings);
        let client = match &self.instance.address {
            RedisAddress::Tls { .. } => {
                install_crypto_provider();
                redis::Client::build_with_tls(info, tls_certificates(tls)?)
            }
            _ => redis::Client::open(info),
        }
        .map_err(|e| describe(&e))?;
        let mut config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.instance.timeout))
            .set_response_timeout(Some(self.instance.timeout));
        if let Some(resolver) = resolver {
            config = config.set_dns_resolver(resolver);
        }
        client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|e| describe(&e))
    }
}

/// Reads the PEM files of a TLS instance.
fn tls_certificates(tls: &TlsFiles) -> Result<redis::TlsCertificates, String> {
    let read = |path: &std::path::Path| {
        std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    };
    let root_cert = tls.ca_file.as_deref().map(read).transpose()?;
    let client_tls = match (&tls.cert_file, &tls.key_file) {
        (Some(cert), Some(key)) => Some(redis::ClientTlsConfig {
            client_cert: read(cert)?,
            client_key: read(key)?,
        }),
        _ => None,
    };
    Ok(redis::TlsCertificates {
        client_tls,
        root_cert,
    })
}

/// rustls needs one process-wide crypto provider; we use ring.
fn install_crypto_provider() {
    // Err only means a provider is installed already.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Resolves any name to one configured host: lets TLS verify a server name
/// other than the address connected to.
struct FixedResolver {
    host: String,
}

impl redis::io::AsyncDNSResolver for FixedResolver {
    fn resolve<'a, 'b: 'a>(
        &'a self,
        _name: &'b str,
        port: u16,
    ) -> redis::RedisFuture<'a, Box<dyn Iterator<Item = std::net::SocketAddr> + Send + 'a>> {
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((self.host.as_str(), port)).await?;
            Ok(Box::new(addrs.collect::<Vec<_>>().into_iter())
                as Box<dyn Iterator<Item = _> + Send>)
        })
    }
}

/// Why a poll failed: the words for the log and `redisInstanceLastError`,
/// and whether a connection that was established broke on the way.
struct PollError {
    text: String,
    lost_connection: bool,
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

/// Error codes of a server that is busy for a while, not refusing.
fn is_transient(code: &str) -> bool {
    matches!(
        code,
        "LOADING" | "BUSY" | "TRYAGAIN" | "MASTERDOWN" | "CLUSTERDOWN"
    )
}

/// A redis error as one line for logs and `redisInstanceLastError`, in
/// words that say what to fix. The same fault must give the same words on
/// every poll: the log says an error again only when its text changes.
fn describe(e: &redis::RedisError) -> String {
    let text = if let Some(certificate) = certificate_error(e) {
        format!(
            "TLS: the server's certificate was not accepted: {}",
            certificate_problem(certificate)
        )
    } else if e.kind() == redis::ErrorKind::AuthenticationFailed {
        // The crate drops the server's reply (WRONGPASS…); say what it means.
        "authentication failed: the server refused the configured username or password".to_string()
    } else if let (Some(code), Some(detail)) = (e.code(), e.detail()) {
        // As the server said it, as redis-cli shows it: "NOPERM this user…".
        format!("{code} {detail}")
    } else {
        e.to_string()
    };
    text.lines().next().unwrap_or("").trim().to_string()
}

/// The certificate problem of a failed TLS handshake: rustls's error, inside
/// the I/O error tokio-rustls returns, inside the redis error.
fn certificate_error(e: &redis::RedisError) -> Option<&rustls::CertificateError> {
    match io_error(e)?.get_ref()?.downcast_ref::<rustls::Error>()? {
        rustls::Error::InvalidCertificate(certificate) => Some(certificate),
        _ => None,
    }
}

/// The I/O error a redis error wraps. The crate keeps it in an `Arc`, and
/// `source()` hands out the `Arc` itself.
fn io_error(e: &redis::RedisError) -> Option<&std::io::Error> {
    type Shared = std::sync::Arc<dyn std::error::Error + Send + Sync>;
    let source = std::error::Error::source(e)?;
    match source.downcast_ref::<Shared>() {
        Some(shared) => shared.downcast_ref(),
        None => source.downcast_ref(),
    }
}

/// A certificate problem in stable words: rustls's own text of some carries
/// the current time, which would make every poll's error new.
fn certificate_problem(e: &rustls::CertificateError) -> String {
    use rustls::CertificateError as E;
    match e {
        E::UnknownIssuer => "it is not signed by a CA the agent trusts (tls_ca_file)".to_string(),
        E::Expired | E::ExpiredContext { .. } => "it has expired".to_string(),
        E::NotValidYet | E::NotValidYetContext { .. } => "it is not valid yet".to_string(),
        E::ExpiredRevocationList | E::ExpiredRevocationListContext { .. } => {
            "the certificate revocation list has expired".to_string()
        }
        E::NotValidForName | E::NotValidForNameContext { .. } => {
            format!("{e} (tls_server_name sets the name to check)")
        }
        other => other.to_string(),
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

    /// The error of a TLS handshake that rejected the certificate, wrapped
    /// as tokio-rustls and the redis crate wrap it.
    fn certificate_failure(e: rustls::CertificateError) -> redis::RedisError {
        let io = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(e),
        );
        io.into()
    }

    #[test]
    fn server_errors_read_as_the_server_said_them() {
        let e = server_error("NOPERM this user has no permissions to run the 'info' command");
        assert_eq!(
            describe(&e),
            "NOPERM this user has no permissions to run the 'info' command"
        );
        let e = server_error("LOADING Redis is loading the dataset in memory");
        assert_eq!(
            describe(&e),
            "LOADING Redis is loading the dataset in memory"
        );
        assert!(is_transient(e.code().unwrap()));
        assert!(!is_transient("NOPERM") && !is_transient("ERR"));
    }

    #[test]
    fn a_refused_password_says_authentication_failed() {
        let e = redis::RedisError::from((
            redis::ErrorKind::AuthenticationFailed,
            "Password authentication failed",
        ));
        assert!(describe(&e).starts_with("authentication failed:"));
    }

    #[test]
    fn certificate_problems_are_named_in_the_same_words_every_poll() {
        let e = certificate_failure(rustls::CertificateError::UnknownIssuer);
        assert_eq!(
            describe(&e),
            "TLS: the server's certificate was not accepted: it is not signed by a CA the agent trusts (tls_ca_file)"
        );
        // rustls's text of an expired certificate holds the current time.
        let at = |secs| {
            certificate_failure(rustls::CertificateError::ExpiredContext {
                time: rustls::pki_types::UnixTime::since_unix_epoch(Duration::from_secs(secs)),
                not_after: rustls::pki_types::UnixTime::since_unix_epoch(Duration::from_secs(1)),
            })
        };
        assert_eq!(describe(&at(100)), describe(&at(101)));
        assert!(describe(&at(100)).ends_with("it has expired"));
        assert!(!PollError::from(&e).lost_connection);
    }

    #[test]
    fn a_dropped_connection_is_worth_a_retry_a_timeout_is_not() {
        let dropped = redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert!(PollError::from(&dropped).lost_connection);
        let timeout = redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::TimedOut));
        assert!(!PollError::from(&timeout).lost_connection);
        assert!(!PollError::from(&server_error("ERR no")).lost_connection);
    }
}
