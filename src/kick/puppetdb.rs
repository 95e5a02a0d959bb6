//! The hosts of a role by a PQL `query` to PuppetDB (`puppetdb =
//! "https://…"` in kick.toml, with a client certificate the Puppet CA
//! signed, as PuppetDB asks of its clients).
//!
//! Why the handler never runs it: snmptrapd waits for its traphandle, and
//! must be answered within 100 ms, while PuppetDB may be slow, down, or
//! answer a query over a whole fleet in seconds. The handler checks the
//! sender (its address, as for any role) and starts a detached resolver
//! (`kick --resolve ROLE`, `resolve` in the kick module) as it starts supervisors;
//! the resolver asks PuppetDB, bounded in time and size, then judges the
//! request against the hosts named just as the handler judges a role's
//! listed hosts (deferred, coalesced, generations: the same code), and
//! starts their kicks. No cache: a request is rare (a few an hour), the
//! answer is wanted as PuppetDB has it now (a host just added by its first
//! run is kicked), and a stale cache would kick hosts no longer of the role.
//! A PuppetDB that cannot answer leaves a refusal with the reason in the
//! ledger (`kick --status`), and nothing runs.
//!
//! The client is a single HTTP/1.1 GET over rustls (already used for Redis
//! TLS) on a blocking socket: no HTTP crate for one request. Every step is
//! under one deadline (`puppetdb_timeout`): the name lookup, the connect,
//! the handshake and each read; the answer is at most [`MAX_RESPONSE`]
//! bytes, and its certnames must be host names, at most
//! [`MAX_HOSTS`].

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// The answer's size at most, headers and body: 1000 certnames as
/// `inventory[certname]` gives them take about 50 KiB; a query that
/// projects whole fact sets is refused, not read.
pub const MAX_RESPONSE: usize = 1 << 20;
/// The status line and headers at most.
const MAX_HEAD: usize = 16 * 1024;
/// Hosts one query may name, as a role may list.
pub const MAX_HOSTS: usize = 1000;
/// A PQL query's length at most.
pub const MAX_QUERY: usize = 4096;

/// Resolvers of one configuration asking PuppetDB at once, at most.
pub const MAX_RESOLVERS: usize = 8;

/// One of the [`MAX_RESOLVERS`] places of a running resolver: an abstract
/// unix socket named after the configuration and the place, held while
/// it lives and freed by the kernel however the process ends (no file to
/// leave behind in the ledger's directory).
pub struct Slot(#[allow(dead_code)] std::os::unix::net::UnixListener);

impl Slot {
    /// A free place, or `None` when all are taken.
    pub fn take(config: &std::path::Path) -> Option<Slot> {
        use std::os::linux::net::SocketAddrExt;
        use std::os::unix::ffi::OsStrExt;
        // FNV-1a of the path: the name stays short whatever the path.
        let hash = config
            .as_os_str()
            .as_bytes()
            .iter()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
        (0..MAX_RESOLVERS).find_map(|place| {
            let name = format!("redis-snmp-kick-resolver/{hash:016x}/{place}");
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(name).ok()?;
            std::os::unix::net::UnixListener::bind_addr(&addr)
                .ok()
                .map(Slot)
        })
    }
}

/// Where PuppetDB is and how to prove who we are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PuppetDb {
    /// The host of the URL: a name or an address, checked against
    /// PuppetDB's certificate.
    pub host: String,
    pub port: u16,
    /// The client certificate (PEM), its key (PEM, a secret: read only
    /// when a query is made, never logged), the CA that signed PuppetDB's.
    pub cert: PathBuf,
    pub key: PathBuf,
    pub ca: PathBuf,
    /// The whole query: lookup, connect, TLS, request and answer.
    pub timeout: Duration,
}

/// `https://HOST[:PORT][/]`: PuppetDB's own API paths follow.
pub fn parse_url(url: &str) -> Result<(String, u16), String> {
    let rest = url
        .strip_prefix("https://")
        .ok_or_else(|| format!("puppetdb = {url:?}: https://HOST[:PORT] is expected"))?;
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let bad = || format!("puppetdb = {url:?}: https://HOST[:PORT] is expected, no path");
    let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
        let (host, after) = v6.split_once(']').ok_or_else(bad)?;
        host.parse::<std::net::Ipv6Addr>().map_err(|_| bad())?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or_else(bad)?),
        };
        (host.to_string(), port)
    } else {
        match rest.split_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (rest.to_string(), None),
        }
    };
    let name_ok = !host.is_empty()
        && host.len() <= 253
        && !host.starts_with('-')
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-.:".contains(&b));
    if !name_ok {
        return Err(bad());
    }
    let port = match port {
        None => 8081,
        Some(p) => p.parse::<u16>().ok().filter(|&p| p > 0).ok_or_else(bad)?,
    };
    Ok((host, port))
}

/// A role's query as kick.toml may give it: one line of text, bounded.
pub fn check_query(query: &str) -> Result<(), String> {
    if query.trim().is_empty() || query.len() > MAX_QUERY {
        return Err(format!("from 1 to {MAX_QUERY} bytes are expected"));
    }
    if query.chars().any(char::is_control) {
        return Err("a control character is in it".to_string());
    }
    Ok(())
}

/// The certnames PuppetDB gives for `query` (`/pdb/query/v4`), or why
/// there are none to kick.
pub fn certnames(db: &PuppetDb, query: &str) -> Result<Vec<String>, String> {
    let deadline = Instant::now() + db.timeout;
    let config = tls_config(db)?;
    let name = ServerName::try_from(db.host.clone())
        .map_err(|_| format!("{:?} is not a name TLS can check", db.host))?;
    let tcp = connect(&db.host, db.port, deadline)?;
    let conn =
        rustls::ClientConnection::new(Arc::new(config), name).map_err(|e| format!("TLS: {e}"))?;
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let request = format!(
        "GET /pdb/query/v4?query={} HTTP/1.1\r\nHost: {}\r\nAccept: application/json\r\n\
         User-Agent: redis-snmp-kick\r\nConnection: close\r\n\r\n",
        percent_encoded(query),
        host_header(&db.host, db.port),
    );
    set_timeouts(&tls.sock, deadline)?;
    tls.write_all(request.as_bytes())
        .and_then(|()| tls.flush())
        .map_err(|e| io_error("the TLS handshake or the query", &e, deadline))?;
    let answer = read_bounded(&mut tls, |s| set_timeouts(&s.sock, deadline), deadline)?;
    let body = http_body(&answer)?;
    certnames_of(&body)
}

/// Each read waits at most until the deadline.
fn set_timeouts(sock: &TcpStream, deadline: Instant) -> Result<(), String> {
    let left = deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
        .ok_or_else(|| "no answer within puppetdb_timeout".to_string())?;
    sock.set_read_timeout(Some(left))
        .and_then(|()| sock.set_write_timeout(Some(left)))
        .map_err(|e| format!("socket: {e}"))
}

fn io_error(what: &str, e: &std::io::Error, deadline: Instant) -> String {
    if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) || Instant::now() >= deadline
    {
        format!("{what}: no answer within puppetdb_timeout")
    } else if e.kind() == ErrorKind::InvalidData {
        // rustls's own errors: a certificate refused, or no TLS at all.
        format!("{what}: TLS failed: {e}")
    } else {
        format!("{what}: {e}")
    }
}

/// Resolves and connects within the deadline (a resolver that hangs is
/// left behind: the process ends soon after).
fn connect(host: &str, port: u16, deadline: Instant) -> Result<TcpStream, String> {
    let addrs: Vec<SocketAddr> = match host.parse::<std::net::IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => {
            let (send, receive) = mpsc::channel();
            let name = host.to_string();
            std::thread::spawn(move || {
                let _ = send.send((name.as_str(), port).to_socket_addrs().map(Vec::from_iter));
            });
            let left = deadline.saturating_duration_since(Instant::now());
            match receive.recv_timeout(left) {
                Ok(Ok(addrs)) => addrs,
                Ok(Err(e)) => return Err(format!("looking up {host}: {e}")),
                Err(_) => return Err(format!("looking up {host}: no answer in time")),
            }
        }
    };
    let mut last = format!("{host} has no address");
    for addr in addrs.iter().take(8) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!(
                "connecting to {addr}: no answer within puppetdb_timeout"
            ));
        }
        match TcpStream::connect_timeout(addr, left) {
            Ok(tcp) => return Ok(tcp),
            Err(e) => last = format!("connecting to {addr}: {e}"),
        }
    }
    Err(last)
}

fn host_header(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Everything but unreserved characters (RFC 3986) as `%XX`.
fn percent_encoded(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// rustls's client configuration from the three files, read now (renewed
/// certificates count from the next query on).
fn tls_config(db: &PuppetDb) -> Result<rustls::ClientConfig, String> {
    let read = |path: &std::path::Path| {
        crate::secret::read_regular_file(path, crate::secret::MAX_SECRET_FILE_BYTES)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))
    };
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&read(&db.ca)?) {
        let cert = cert.map_err(|e| format!("{}: not a PEM certificate: {e}", db.ca.display()))?;
        roots
            .add(cert)
            .map_err(|e| format!("{}: unusable CA certificate: {e}", db.ca.display()))?;
    }
    if roots.is_empty() {
        return Err(format!("{} holds no certificate", db.ca.display()));
    }
    let chain = CertificateDer::pem_slice_iter(&read(&db.cert)?)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{}: not a PEM certificate: {e}", db.cert.display()))?;
    if chain.is_empty() {
        return Err(format!("{} holds no certificate", db.cert.display()));
    }
    if let Some(warning) = crate::secret::world_readable_warning(&db.key, "a private key") {
        tracing::warn!("kick: {warning}");
    }
    // The key's text never reaches an error message.
    let key = PrivateKeyDer::from_pem_slice(&read(&db.key)?)
        .map_err(|_| format!("{}: no private key in it", db.key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_root_certificates(roots)
        .with_client_auth_cert(chain, key)
        .map_err(|e| format!("TLS client certificate: {e}"))
}

/// Reads until the peer closes, at most [`MAX_HEAD`] + [`MAX_RESPONSE`]
/// bytes, each read bounded by `before_read` (which sets the socket's
/// timeout to what is left) and the whole by `deadline`: a server that
/// sends a byte a second is cut off like one that sends nothing.
fn read_bounded<R: Read>(
    stream: &mut R,
    before_read: impl Fn(&R) -> Result<(), String>,
    deadline: Instant,
) -> Result<Vec<u8>, String> {
    let mut answer = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        if Instant::now() >= deadline {
            return Err("no whole answer within puppetdb_timeout".to_string());
        }
        before_read(stream)?;
        match stream.read(&mut buf) {
            Ok(0) => return Ok(answer),
            Ok(n) => {
                answer.extend_from_slice(&buf[..n]);
                if answer.len() > MAX_HEAD + MAX_RESPONSE {
                    return Err(format!(
                        "the answer is larger than {MAX_RESPONSE} bytes (ask for inventory[certname] only)"
                    ));
                }
            }
            // A server that closes without TLS's close_notify: what came
            // is judged by its framing (a chunked answer must be whole).
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Ok(answer),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_error("reading the answer", &e, deadline)),
        }
    }
}

/// The body of a whole HTTP/1.1 answer with status 200: by its
/// Content-Length, chunked, or up to the close.
pub fn http_body(answer: &[u8]) -> Result<Vec<u8>, String> {
    let head_end = answer
        .windows(4)
        .take(MAX_HEAD)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| {
            if answer.is_empty() {
                "PuppetDB closed the connection without answering".to_string()
            } else {
                "not an HTTP answer".to_string()
            }
        })?;
    let head = std::str::from_utf8(&answer[..head_end]).map_err(|_| "not an HTTP answer")?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let mut words = status_line.splitn(3, ' ');
    let (version, code) = (words.next(), words.next());
    if !version.is_some_and(|v| v.starts_with("HTTP/1.")) {
        return Err("not an HTTP answer".to_string());
    }
    let code: u16 = code
        .and_then(|c| c.parse().ok())
        .ok_or("not an HTTP answer")?;
    let rest = &answer[head_end + 4..];
    if code != 200 {
        // PuppetDB says why in the body (a PQL parse error): its start,
        // shown escaped.
        let said: String = String::from_utf8_lossy(&rest[..rest.len().min(200)])
            .chars()
            .flat_map(char::escape_debug)
            .take(300)
            .collect();
        return Err(format!("PuppetDB answered {code}: {said}"));
    }
    let mut length = None;
    let mut chunked = false;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            return Err("a malformed HTTP header".to_string());
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            let n: usize = value
                .parse()
                .map_err(|_| "a malformed Content-Length".to_string())?;
            if length.is_some_and(|l| l != n) {
                return Err("two different Content-Lengths".to_string());
            }
            length = Some(n);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            if !value.eq_ignore_ascii_case("chunked") {
                return Err(format!("Transfer-Encoding {value:?} is not read"));
            }
            chunked = true;
        }
    }
    if chunked {
        return dechunked(rest);
    }
    match length {
        Some(n) if n > MAX_RESPONSE => Err(format!(
            "the answer is larger than {MAX_RESPONSE} bytes (ask for inventory[certname] only)"
        )),
        Some(n) if rest.len() < n => Err(format!(
            "the answer was cut short ({} of {n} bytes)",
            rest.len()
        )),
        Some(n) => Ok(rest[..n].to_vec()),
        None => Ok(rest.to_vec()),
    }
}

/// A chunked body, which must end with its last (empty) chunk.
fn dechunked(mut rest: &[u8]) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    loop {
        let line_end = rest
            .windows(2)
            .take(64)
            .position(|w| w == b"\r\n")
            .ok_or("a malformed chunk")?;
        let size_text = std::str::from_utf8(&rest[..line_end]).map_err(|_| "a malformed chunk")?;
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| "a malformed chunk size")?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Ok(body);
        }
        if size > MAX_RESPONSE || body.len() + size > MAX_RESPONSE {
            return Err(format!(
                "the answer is larger than {MAX_RESPONSE} bytes (ask for inventory[certname] only)"
            ));
        }
        if rest.len() < size + 2 {
            return Err("the answer was cut short".to_string());
        }
        body.extend_from_slice(&rest[..size]);
        if &rest[size..size + 2] != b"\r\n" {
            return Err("a malformed chunk".to_string());
        }
        rest = &rest[size + 2..];
    }
}

/// The certnames of a query's JSON answer: an array of objects, each with
/// a `certname` that is a host name; each name once, in PuppetDB's order.
pub fn certnames_of(body: &[u8]) -> Result<Vec<String>, String> {
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| format!("PuppetDB's answer is not JSON: {e}"))?;
    let rows = value
        .as_array()
        .ok_or("PuppetDB's answer is not a list of rows")?;
    if rows.len() > MAX_HOSTS {
        return Err(format!(
            "the query names {} rows, more than {MAX_HOSTS}",
            rows.len()
        ));
    }
    let mut names: Vec<String> = Vec::with_capacity(rows.len());
    for row in rows {
        let name = row
            .get("certname")
            .and_then(|c| c.as_str())
            .ok_or("a row has no certname (ask for inventory[certname])")?;
        if !super::names::is_host_name(name) {
            let shown: String = name.chars().flat_map(char::escape_debug).take(80).collect();
            return Err(format!("certname \"{shown}\" is not a host name"));
        }
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(body: &str) -> Vec<u8> {
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    }

    #[test]
    fn urls_are_https_host_and_port_only() {
        assert_eq!(
            parse_url("https://puppet:8081").unwrap(),
            ("puppet".into(), 8081)
        );
        assert_eq!(parse_url("https://puppetdb.example.net/").unwrap().1, 8081);
        assert_eq!(
            parse_url("https://10.233.47.2:8081").unwrap(),
            ("10.233.47.2".into(), 8081)
        );
        assert_eq!(
            parse_url("https://[2001:db8::1]:9081").unwrap(),
            ("2001:db8::1".into(), 9081)
        );
        for bad in [
            "http://puppet:8080",
            "https://",
            "https://puppet:0",
            "https://puppet:x",
            "https://puppet/pdb",
            "https://-o:1",
            "https://pup pet",
            "https://[zz]:1",
            "https://user@puppet",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn answers_are_read_by_length_by_chunks_or_to_the_close() {
        let rows = r#"[{"certname":"lb1"},{"certname":"lb2.example.net"},{"certname":"lb1"}]"#;
        let names = certnames_of(&http_body(&ok(rows)).unwrap()).unwrap();
        assert_eq!(names, ["lb1", "lb2.example.net"]);
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
            5\r\n[{\"ce\r\nf;x=y\r\nrtname\":\"lb1\"}]\r\n0\r\n\r\n";
        assert_eq!(certnames_of(&http_body(chunked).unwrap()).unwrap(), ["lb1"]);
        let closed = b"HTTP/1.0 200 OK\r\n\r\n[]";
        assert!(certnames_of(&http_body(closed).unwrap())
            .unwrap()
            .is_empty());
    }

    #[test]
    fn hostile_answers_are_refused_with_the_reason() {
        let refused = |answer: &[u8]| {
            http_body(answer)
                .and_then(|b| certnames_of(&b))
                .unwrap_err()
        };
        assert!(refused(b"").contains("without answering"));
        assert!(refused(b"SSH-2.0-OpenSSH\r\n\r\n").contains("not an HTTP answer"));
        assert!(refused(&[0xff; 100]).contains("not an HTTP answer"));
        let e = refused(b"HTTP/1.1 400 Bad Request\r\n\r\nPQL parse error at\x1b[31m line 1");
        assert!(
            e.contains("400") && e.contains("PQL parse error") && !e.contains('\x1b'),
            "{e}"
        );
        assert!(refused(&ok("<html>")).contains("not JSON"));
        assert!(refused(&ok(r#"{"certname":"lb1"}"#)).contains("not a list"));
        assert!(refused(&ok(r#"[{"name":"lb1"}]"#)).contains("no certname"));
        assert!(refused(&ok(r#"[{"certname":7}]"#)).contains("no certname"));
        for name in ["-oProxyCommand=id", "a b", "lb1;reboot", "", "x\u{1b}[2J"] {
            let row = serde_json::json!([{ "certname": name }]).to_string();
            let e = refused(&ok(&row));
            assert!(e.contains("not a host name") && !e.contains('\x1b'), "{e}");
        }
        let many: Vec<_> = (0..=MAX_HOSTS)
            .map(|i| serde_json::json!({ "certname": format!("h{i}") }))
            .collect();
        let e = refused(&ok(&serde_json::Value::Array(many).to_string()));
        assert!(e.contains("more than 1000"), "{e}");
        // Framing: cut short, lying lengths, broken chunks, huge chunks.
        let e = refused(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n[]");
        assert!(e.contains("cut short"), "{e}");
        let e = refused(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n[]");
        assert!(e.contains("two different"), "{e}");
        let e = refused(b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n[]");
        assert!(e.contains("larger than"), "{e}");
        let e = refused(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n[]");
        assert!(e.contains("cut short"), "{e}");
        let e = refused(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n[]");
        assert!(
            e.contains("malformed chunk") || e.contains("cut short"),
            "{e}"
        );
        let e = refused(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffff\r\n[]");
        assert!(e.contains("larger than"), "{e}");
        let e = refused(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n[]");
        assert!(e.contains("chunk size"), "{e}");
        let e = refused(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n[]");
        assert!(e.contains("not read"), "{e}");
        let e = refused(b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n[]");
        assert!(e.contains("malformed HTTP header"), "{e}");
        // A head that never ends is not searched past MAX_HEAD.
        let mut endless = b"HTTP/1.1 200 OK\r\n".to_vec();
        endless.extend(std::iter::repeat_n(b'a', MAX_HEAD * 2));
        assert!(refused(&endless).contains("not an HTTP answer"));
    }

    /// A reader that gives a byte at a time, slowly, forever.
    struct Drip;
    impl Read for Drip {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            std::thread::sleep(Duration::from_millis(20));
            buf[0] = b'x';
            Ok(1)
        }
    }

    /// A reader with no end, fast.
    struct Flood;
    impl Read for Flood {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            buf.fill(b'[');
            Ok(buf.len())
        }
    }

    #[test]
    fn slow_and_endless_answers_are_cut_off() {
        let started = Instant::now();
        let deadline = started + Duration::from_millis(300);
        let e = read_bounded(&mut Drip, |_| Ok(()), deadline).unwrap_err();
        assert!(e.contains("within puppetdb_timeout"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(2));
        let deadline = Instant::now() + Duration::from_secs(30);
        let e = read_bounded(&mut Flood, |_| Ok(()), deadline).unwrap_err();
        assert!(e.contains("larger than"), "{e}");
    }

    /// A server that accepts and never says a word: reading ends at the
    /// deadline with the reason (the whole query against such a server,
    /// TLS included, is tests/kick_puppetdb.rs's).
    #[test]
    fn a_silent_server_is_given_up_at_the_deadline() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let held = std::thread::spawn(move || listener.accept().map(|(s, _)| s));
        let started = Instant::now();
        let deadline = started + Duration::from_millis(400);
        let mut tcp = connect("127.0.0.1", port, deadline).unwrap();
        let e = read_bounded(&mut tcp, |s| set_timeouts(s, deadline), deadline).unwrap_err();
        assert!(e.contains("within puppetdb_timeout"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(2));
        drop(held);
        let e = connect("127.0.0.1", 1, Instant::now() + Duration::from_secs(2)).unwrap_err();
        assert!(e.contains("connecting to 127.0.0.1:1"), "{e}");
    }

    #[test]
    fn at_most_eight_resolvers_ask_at_once() {
        let config = std::path::Path::new("/nonexistent/test-slots/kick.toml");
        let held: Vec<Slot> = (0..MAX_RESOLVERS)
            .map(|_| Slot::take(config).expect("a free place"))
            .collect();
        assert!(Slot::take(config).is_none());
        let other = std::path::Path::new("/nonexistent/test-slots/other.toml");
        assert!(
            Slot::take(other).is_some(),
            "another configuration's places"
        );
        drop(held);
        assert!(Slot::take(config).is_some());
    }

    #[test]
    fn queries_are_encoded_whole() {
        assert_eq!(
            percent_encoded(r#"inventory[certname] { trusted.extensions.pp_role = "lb" }"#),
            "inventory%5Bcertname%5D%20%7B%20trusted.extensions.pp_role%20%3D%20%22lb%22%20%7D"
        );
        assert!(check_query("nodes[certname] {}").is_ok());
        assert!(check_query("").is_err() && check_query("a\nb").is_err());
        assert!(check_query(&"x".repeat(MAX_QUERY + 1)).is_err());
    }
}
