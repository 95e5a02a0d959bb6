//! Opening the connection to one Redis instance, on our terms:
//!
//! - **One address.** An IP address is used as given; a name is resolved
//!   and only its first address is tried (`localhost` is `127.0.0.1`). A
//!   client that tries every address of a name sends AUTH, password and
//!   all, to whatever listens on the first one that accepts: on a shared
//!   host any user may listen on `[::1]:6379` when Redis binds only
//!   `127.0.0.1`.
//! - **The password only to the server's user.** Over TCP to this host
//!   and over a unix socket, the password (AUTH) is sent only once the
//!   server's end of the connection is seen to be held by the instance's
//!   `server_user` or root ([`super::peer`]): while Redis is down, any
//!   local user may take its port. Nothing at all is sent otherwise.
//! - **Bounded replies.** Every byte read from the server is metered
//!   against a [`ReplyBudget`] renewed before each command: bytes, values
//!   and nesting ([`super::budget`]); a reply over it ends the connection
//!   with an error, so a hostile or impersonated server cannot make the
//!   agent's memory grow with what it sends.
//! - **TLS by rustls**, verified against `tls_ca_file` or the system's
//!   roots (read once), for the name in `tls_server_name` or the host.
//!   The files are read off the runtime's thread, without waiting on a
//!   FIFO put in their place, and must be regular files.
//! - **Errors in stable words.** [`describe`] turns what the server or the
//!   crate said into one line, the same for the same fault on every poll,
//!   control characters escaped; [`is_transient`] tells a server that is
//!   busy for a while from one that refuses. The poller, the key checks
//!   and the doctor all speak of a connection's errors in these words, so
//!   they live with the connection, not with any one of its users.
//!
//! The stream is then handed to the `redis` crate, which does the protocol
//! (AUTH, the reply parser) over it.

use super::peer;
use crate::config::{RedisAddress, RedisInstance, TlsFiles};
use crate::x509::{self as certificate, ServerCertificate};
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, RedisConnectionInfo};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpStream, UnixStream};

use super::budget::Capped;
pub use super::budget::ReplyBudget;

/// Why a connection could not be opened, in words for the log and
/// `redisInstanceLastError`.
#[derive(Debug)]
pub enum ConnectError {
    /// What the `redis` crate said while setting the connection up (AUTH
    /// refused, the server's error): the poller describes it.
    Redis(redis::RedisError),
    /// Our own part: resolving, connecting, TLS.
    Other(String),
}

impl From<String> for ConnectError {
    fn from(text: String) -> Self {
        ConnectError::Other(text)
    }
}

/// Connects to `instance` within its timeout and hands the stream, capped
/// by `budget`, to the `redis` crate. The connection's I/O runs in a task
/// of its own that ends when the connection is dropped.
pub async fn connect(
    instance: &RedisInstance,
    budget: &ReplyBudget,
) -> Result<MultiplexedConnection, ConnectError> {
    connect_seeing_certificate(instance, budget)
        .await
        .map(|connected| connected.connection)
}

/// A connection, and the certificate the server showed in the TLS
/// handshake (`rediss://` only; `None` when it could not be read).
pub struct Connected {
    pub connection: MultiplexedConnection,
    pub certificate: Option<ServerCertificate>,
}

/// [`connect`], keeping the server's certificate.
pub async fn connect_seeing_certificate(
    instance: &RedisInstance,
    budget: &ReplyBudget,
) -> Result<Connected, ConnectError> {
    let seconds = instance.timeout.as_secs_f64();
    match tokio::time::timeout(instance.timeout, open(instance, budget)).await {
        Ok(outcome) => outcome,
        Err(_) => Err(format!("connecting timed out after {seconds} s").into()),
    }
}

/// A TLS handshake with a `rediss://` instance and nothing more (no AUTH,
/// no command), within its timeout: the certificate the server shows a new
/// client now. Redis loads a renewed certificate (`CONFIG SET
/// tls-cert-file`) for new connections only, so the agent's long-lived
/// connection keeps seeing the old one. `Ok(None)`: not a TLS instance, or
/// a certificate that could not be read.
pub async fn probe_certificate(
    instance: &RedisInstance,
) -> Result<Option<ServerCertificate>, String> {
    let RedisAddress::Tls { host, port } = &instance.address else {
        return Ok(None);
    };
    let seconds = instance.timeout.as_secs_f64();
    let handshake = async {
        let tls = handshake(instance, host, *port).await?;
        Ok(server_certificate(&tls))
    };
    match tokio::time::timeout(instance.timeout, handshake).await {
        Ok(outcome) => outcome,
        Err(_) => Err(format!("TLS handshake timed out after {seconds} s")),
    }
}

async fn handshake(
    instance: &RedisInstance,
    host: &str,
    port: u16,
) -> Result<tokio_rustls::client::TlsStream<TcpStream>, String> {
    // Files read off the runtime's thread: a slow disk (or anything
    // planted in a file's place) must not stall the agent's other work.
    let files = instance.tls.clone();
    let config = tokio::task::spawn_blocking(move || tls_config(&files))
        .await
        .map_err(|e| format!("TLS: reading the files: {e}"))??;
    let name = instance.tls.server_name.as_deref().unwrap_or(host);
    let server_name = ServerName::try_from(name.to_string())
        .map_err(|_| format!("{name:?} is not a valid TLS server name"))?;
    let tcp = connect_tcp(host, port).await?;
    tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(server_name, tcp)
        .await
        .map_err(|e| tls_failure(&e))
}

/// The end-entity certificate of a finished handshake, read; one that
/// cannot be read is logged (once per connection) and left out.
fn server_certificate(
    tls: &tokio_rustls::client::TlsStream<TcpStream>,
) -> Option<ServerCertificate> {
    let der = tls.get_ref().1.peer_certificates()?.first()?;
    match certificate::parse(der.as_ref()) {
        Ok(read) => Some(read),
        Err(e) => {
            tracing::warn!("the server's TLS certificate: {e}");
            None
        }
    }
}

/// What the peer check guards on a connection to `instance`, if anything:
/// every byte to a discovered server, the password to a configured one.
fn stake(instance: &RedisInstance) -> Option<peer::Stake> {
    match instance.found_running_as {
        Some(uid) => Some(peer::Stake::Discovered { uid }),
        None => instance.password.as_ref().map(|_| peer::Stake::Password {
            server_user: instance.server_user.clone(),
        }),
    }
}

async fn open(instance: &RedisInstance, budget: &ReplyBudget) -> Result<Connected, ConnectError> {
    budget.renew();
    let without_certificate = |connection| Connected {
        connection,
        certificate: None,
    };
    match &instance.address {
        RedisAddress::Tcp { host, port } => {
            let tcp = connect_tcp(host, *port).await?;
            if let Some(stake) = stake(instance) {
                peer::check_tcp(&tcp, &stake).await?;
            }
            start(instance, tcp, budget).await.map(without_certificate)
        }
        RedisAddress::Unix(path) => {
            let unix = UnixStream::connect(path)
                .await
                .map_err(|e| format!("cannot connect to {}: {e}", path.display()))?;
            if let Some(stake) = stake(instance) {
                peer::check_unix(&unix, &stake).await?;
            }
            start(instance, unix, budget).await.map(without_certificate)
        }
        RedisAddress::Tls { host, port } => {
            let tls = handshake(instance, host, *port).await?;
            let certificate = server_certificate(&tls);
            let connection = start(instance, tls, budget).await?;
            Ok(Connected {
                connection,
                certificate,
            })
        }
    }
}

/// The one address a host stands for: an IP address as given,
/// `localhost` as `127.0.0.1`, a name as its first address.
pub async fn resolve_one(host: &str, port: u16) -> Result<SocketAddr, String> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    if host.eq_ignore_ascii_case("localhost") {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| format!("cannot resolve {host}: {e}"))?
        .next()
        .ok_or_else(|| format!("{host} resolves to no address"))
}

async fn connect_tcp(host: &str, port: u16) -> Result<TcpStream, String> {
    let address = resolve_one(host, port).await?;
    let stream = TcpStream::connect(address)
        .await
        .map_err(|e| format!("cannot connect to {address}: {e}"))?;
    // Commands are small and answered one at a time.
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

async fn start<S>(
    instance: &RedisInstance,
    stream: S,
    budget: &ReplyBudget,
) -> Result<MultiplexedConnection, ConnectError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut settings = RedisConnectionInfo::default().set_skip_set_lib_name();
    if let Some(user) = &instance.username {
        settings = settings.set_username(user);
    }
    if let Some(password) = &instance.password {
        settings = settings.set_password(password.expose());
    }
    let config = AsyncConnectionConfig::new().set_response_timeout(Some(instance.timeout));
    let capped = Capped::new(stream, budget.clone());
    let (connection, driver) = MultiplexedConnection::new_with_config(&settings, capped, config)
        .await
        .map_err(ConnectError::Redis)?;
    tokio::spawn(driver);
    Ok(connection)
}

/// rustls's client configuration for a `rediss://` instance, read from its
/// files now, so renewed certificates count from the next connection on.
fn tls_config(tls: &TlsFiles) -> Result<rustls::ClientConfig, String> {
    // Never waited on, and only a regular file (review L3).
    let read = |path: &std::path::Path| {
        crate::secret::read_regular_file(path, crate::secret::MAX_SECRET_FILE_BYTES)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))
    };
    let mut roots = rustls::RootCertStore::empty();
    match &tls.ca_file {
        Some(path) => {
            for cert in CertificateDer::pem_slice_iter(&read(path)?) {
                let cert =
                    cert.map_err(|e| format!("{}: not a PEM certificate: {e}", path.display()))?;
                roots
                    .add(cert)
                    .map_err(|e| format!("{}: unusable CA certificate: {e}", path.display()))?;
            }
            if roots.is_empty() {
                return Err(format!("{} holds no certificate", path.display()));
            }
        }
        None => {
            // The system's roots, read once; one that fails to load is
            // left out.
            for cert in native_roots() {
                let _ = roots.add(cert.clone());
            }
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_root_certificates(roots);
    match (&tls.cert_file, &tls.key_file) {
        (Some(cert), Some(key)) => {
            let chain = CertificateDer::pem_slice_iter(&read(cert)?)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("{}: not a PEM certificate: {e}", cert.display()))?;
            let key_der = PrivateKeyDer::from_pem_slice(&read(key)?)
                .map_err(|_| format!("{}: no private key in it", key.display()))?;
            builder
                .with_client_auth_cert(chain, key_der)
                .map_err(|e| format!("TLS client certificate: {e}"))
        }
        _ => Ok(builder.with_no_client_auth()),
    }
}

/// The system's CA certificates, read at the first connection that needs
/// them rather than at every one.
fn native_roots() -> &'static [CertificateDer<'static>] {
    static ROOTS: std::sync::OnceLock<Vec<CertificateDer<'static>>> = std::sync::OnceLock::new();
    ROOTS.get_or_init(|| rustls_native_certs::load_native_certs().certs)
}

/// A failed TLS handshake in stable words: a rejected certificate says
/// what to fix.
fn tls_failure(e: &io::Error) -> String {
    let rustls_error = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>());
    match rustls_error {
        Some(rustls::Error::InvalidCertificate(certificate)) => format!(
            "TLS: the server's certificate was not accepted: {}",
            certificate_problem(certificate)
        ),
        Some(other) => format!("TLS: {other}"),
        None => format!("TLS: {e}"),
    }
}

/// A certificate problem in stable words: rustls's own text of some carries
/// the current time, which would make every poll's error new.
pub fn certificate_problem(e: &rustls::CertificateError) -> String {
    use rustls::CertificateError as E;
    match e {
        E::UnknownIssuer => "it is not signed by a CA the agent trusts (tls_ca_file)".to_string(),
        E::Expired | E::ExpiredContext { .. } => "it has expired".to_string(),
        E::NotValidYet | E::NotValidYetContext { .. } => "it is not valid yet".to_string(),
        E::ExpiredRevocationList | E::ExpiredRevocationListContext { .. } => {
            "the certificate revocation list has expired".to_string()
        }
        E::NotValidForName | E::NotValidForNameContext { .. } => {
            "it is not valid for the name checked (tls_server_name sets the name to check)"
                .to_string()
        }
        other => other.to_string(),
    }
}

/// Error codes of a server that is busy for a while, not refusing.
pub fn is_transient(code: &str) -> bool {
    matches!(
        code,
        "LOADING" | "BUSY" | "TRYAGAIN" | "MASTERDOWN" | "CLUSTERDOWN"
    )
}

/// A redis error as one line for logs and `redisInstanceLastError`, in
/// words that say what to fix. The same fault must give the same words on
/// every poll: the log says an error again only when its text changes.
pub fn describe(e: &redis::RedisError) -> String {
    let text = if e.kind() == redis::ErrorKind::AuthenticationFailed {
        // The crate drops the server's reply (WRONGPASS…); say what it means.
        "authentication failed: the server refused the configured username or password".to_string()
    } else if matches!(
        e.kind(),
        redis::ErrorKind::UnexpectedReturnType | redis::ErrorKind::Parse
    ) {
        // The crate's text quotes the whole reply (up to max_reply_bytes of
        // the server's choosing, key names perhaps): not shown.
        "the server's reply was not of the type the command returns".to_string()
    } else if let (Some(code), Some(detail)) = (e.code(), e.detail()) {
        // As the server said it, as redis-cli shows it: "NOPERM this user…".
        format!("{code} {detail}")
    } else {
        e.to_string()
    };
    // A server chooses its error texts, and they go to the log and into
    // SNMP values, where an escape sequence could rewrite a terminal.
    let line = text.lines().next().unwrap_or("").trim();
    // And of any length: a log line and an SNMP value stay short.
    let line = match line.char_indices().nth(MAX_ERROR_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    };
    crate::text::printable(&line)
}

/// The longest error text [`describe`] gives, in characters.
pub const MAX_ERROR_CHARS: usize = 200;

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The error of a TLS handshake that rejected the certificate, as
    /// tokio-rustls returns it.
    fn rejected(e: rustls::CertificateError) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(e),
        )
    }

    #[test]
    fn certificate_problems_are_named_in_the_same_words_every_poll() {
        assert_eq!(
            tls_failure(&rejected(rustls::CertificateError::UnknownIssuer)),
            "TLS: the server's certificate was not accepted: it is not signed by a CA the agent trusts (tls_ca_file)"
        );
        // rustls's text of an expired certificate holds the current time.
        let at = |secs| {
            tls_failure(&rejected(rustls::CertificateError::ExpiredContext {
                time: rustls::pki_types::UnixTime::since_unix_epoch(Duration::from_secs(secs)),
                not_after: rustls::pki_types::UnixTime::since_unix_epoch(Duration::from_secs(1)),
            }))
        };
        assert_eq!(at(100), at(101));
        assert!(at(100).ends_with("it has expired"));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn names_stand_for_one_address() {
        let v4 = resolve_one("127.0.0.1", 6379).await.unwrap();
        assert_eq!(v4.to_string(), "127.0.0.1:6379");
        let v6 = resolve_one("::1", 6380).await.unwrap();
        assert_eq!(v6.to_string(), "[::1]:6380");
        // Not whichever of ::1 and 127.0.0.1 the resolver lists first.
        let local = resolve_one("localhost", 6379).await.unwrap();
        assert_eq!(local.to_string(), "127.0.0.1:6379");
    }

    /// A "server" that answers the first command with an endless bulk
    /// string: the capped stream must end the reply at the limit.
    #[tokio::test(flavor = "current_thread")]
    async fn a_reply_over_the_limit_ends_the_connection() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = [0u8; 256];
            let _ = socket.read(&mut request).await;
            let _ = socket.write_all(b"$1000000000\r\n").await;
            let chunk = vec![b'x'; 64 << 10];
            while socket.write_all(&chunk).await.is_ok() {}
        });
        let instance = RedisInstance {
            name: "big".into(),
            address: RedisAddress::Tcp {
                host: "127.0.0.1".into(),
                port,
            },
            username: None,
            password: None,
            password_file: None,
            server_user: None,
            found_running_as: None,
            timeout: Duration::from_secs(5),
            tls: TlsFiles::default(),
            max_reply_bytes: 1 << 20,
            slowlog_entries: true,
            cert_expiry_warning: Duration::from_secs(86_400),
            cert_check_interval: Duration::from_secs(3_600),
            client_list: true,
            client_list_interval: Duration::from_secs(60),
            client_list_rows: 50,
            slow_refresh: None,
            key_checks: Default::default(),
            slow_commands: Default::default(),
            acl_log: true,
            acl_burst_refusals: 10,
            acl_burst_window: Duration::from_secs(60),
        };
        let budget = ReplyBudget::new(instance.max_reply_bytes);
        let mut connection = match connect(&instance, &budget).await {
            Ok(c) => c,
            Err(e) => panic!("connect: {e:?}"),
        };
        budget.renew();
        let reply: redis::RedisResult<Vec<u8>> =
            redis::cmd("INFO").query_async(&mut connection).await;
        assert!(reply.is_err(), "a reply over the limit was accepted");
        assert!(budget.exceeded());
    }

    /// The error a server's reply `-LINE` becomes.
    fn server_error(line: &str) -> redis::RedisError {
        let value = redis::parse_redis_value(format!("-{line}\r\n").as_bytes()).unwrap();
        value.extract_error().unwrap_err()
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
    fn control_characters_in_server_errors_are_escaped() {
        let e = server_error("ERR \x1b]0;owned\x07\x1b[2Jgone");
        assert_eq!(describe(&e), "ERR \\u{1b}]0;owned\\u{7}\\u{1b}[2Jgone");
        assert!(!describe(&e).chars().any(char::is_control));
    }

    #[test]
    fn a_reply_of_the_wrong_type_or_a_long_error_is_not_quoted_whole() {
        let reply = redis::Value::Array(vec![redis::Value::BulkString(b"acct:alice".to_vec()); 50]);
        let e = redis::from_redis_value::<Vec<u8>>(reply).unwrap_err();
        let e = redis::RedisError::from(e);
        assert_eq!(
            describe(&e),
            "the server's reply was not of the type the command returns"
        );
        let long = server_error(&format!("ERR {}", "x".repeat(5000)));
        let text = describe(&long);
        assert_eq!(text.chars().count(), MAX_ERROR_CHARS + 1, "{text}");
        assert!(text.ends_with('…'));
    }

    #[test]
    fn a_refused_password_says_authentication_failed() {
        let e = redis::RedisError::from((
            redis::ErrorKind::AuthenticationFailed,
            "Password authentication failed",
        ));
        assert!(describe(&e).starts_with("authentication failed:"));
    }
}
