//! One Redis instance's settings: its address, TLS files, limits and key
//! checks, from its `[[redis]]` entry or the defaults.

use crate::secret::{self, Secret};
use serde::Deserialize;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const DEFAULT_TIMEOUT_SECS: f64 = 2.0;

/// Largest reply the agent reads from a Redis, in bytes, unless an
/// instance's `max_reply_bytes` says otherwise. `INFO everything` of a busy
/// server with many databases and commands is tens of kilobytes; a server
/// (or something impersonating one) that sends more is refused, so it
/// cannot make the agent's memory grow with its reply.
pub const DEFAULT_MAX_REPLY_BYTES: u64 = 4 << 20;

/// The host of the first instance when neither the file nor `-h` names one.
/// An address, not `localhost`: a name that resolves to `::1` and
/// `127.0.0.1` would send the password to whichever answers first, and
/// any local user may listen on the address Redis does not use.
pub const DEFAULT_HOST: &str = "127.0.0.1";
/// A `rediss://` server's certificate is "expiring" (and
/// `redisCertificateExpiring` is sent) within this many seconds of its
/// end: 14 days, time for a renewal by hand.
pub const DEFAULT_CERT_EXPIRY_WARNING_SECS: u64 = 14 * 86_400;
/// How often the certificate a new client would see is looked at again (a
/// TLS handshake without a command; the server's renewals show then).
pub const DEFAULT_CERT_CHECK_SECS: u64 = 3_600;
/// How often `CLIENT LIST` is asked (O(clients) for the server).
pub const DEFAULT_CLIENT_LIST_SECS: u64 = 60;
/// Rows of each client aggregate table at most, per instance.
pub const DEFAULT_CLIENT_LIST_ROWS: usize = 50;
/// The most rows `client_list_rows` may ask for.
pub(super) const MAX_CLIENT_LIST_ROWS: usize = 1_000;

/// Key checks (`check_keys`, issue 16): how often they run, in seconds
/// (each is a SCAN per pattern and a few commands per key).
pub const DEFAULT_CHECK_KEYS_SECS: u64 = 60;
/// Rows of `redisKeyTable` at most, per instance.
pub const DEFAULT_CHECK_KEYS_ROWS: usize = 100;
/// Rows of `redisKeyStreamGroupTable` at most, per stream.
pub const DEFAULT_CHECK_KEYS_GROUPS: usize = 20;
/// The COUNT hint of each `SCAN … MATCH … COUNT`: keys Redis looks at per call.
pub const DEFAULT_CHECK_KEYS_SCAN_COUNT: u32 = 1_000;
/// SCAN calls one check may make, all patterns together.
pub const DEFAULT_CHECK_KEYS_SCAN_CALLS: u32 = 100;
/// Milliseconds one check may spend scanning, all patterns together.
pub const DEFAULT_CHECK_KEYS_SCAN_MILLIS: u64 = 100;
/// The most entries `check_keys` may have, and the longest one.
pub(super) const MAX_CHECK_KEYS: usize = 100;
pub(super) const MAX_CHECK_KEY_LEN: usize = 1_024;

/// The big-key sampler (`big_keys`, issue 25): off unless asked; how many
/// of the largest keys it keeps per database, how often it runs (seconds),
/// the SCAN calls and COUNT of one check, and MEMORY USAGE's SAMPLES.
pub const DEFAULT_BIG_KEYS_ROWS: usize = 10;
pub const DEFAULT_BIG_KEYS_SECS: u64 = 300;
pub const DEFAULT_BIG_KEYS_SCAN_CALLS: u32 = 10;
pub const DEFAULT_BIG_KEYS_SCAN_COUNT: u32 = 100;
pub const DEFAULT_BIG_KEYS_SCAN_MILLIS: u64 = 100;
pub const DEFAULT_BIG_KEYS_SAMPLES: u32 = 5;
/// `redisAuthFailureBurst`: more than this many ACL refusals within
/// `acl_burst_window` is a burst. Ten in a minute: more than a client
/// retrying a mistyped password by hand, fewer than a misconfigured pool
/// or a guesser makes.
pub const DEFAULT_ACL_BURST_REFUSALS: u64 = 10;
/// The window of `acl_burst_refusals`, in seconds.
pub const DEFAULT_ACL_BURST_WINDOW_SECS: u64 = 60;

/// Where the secret that keys aliases (`key_names = "alias"`) is read
/// from unless `key_alias_secret_file` says otherwise: one secret per
/// installation, readable by the agent only.
pub const DEFAULT_KEY_ALIAS_SECRET_FILE: &str = "/etc/redis-snmp/key-alias.secret";
/// The fewest characters that secret's first line may have (16 random
/// bytes in hex).
pub const MIN_KEY_ALIAS_SECRET_LEN: usize = 32;

/// A new slow log entry this long or longer is sent as `redisSlowCommand`
/// unless `slow_command_threshold` says otherwise: 100 ms, in µs. The
/// server logs from its own `slowlog-log-slower-than` (10 ms by default);
/// a notification is for the commands that stall every client of the
/// single-threaded server noticeably, and 100 ms is the threshold Redis's
/// own latency monitoring guide takes as its example.
pub const DEFAULT_SLOW_COMMAND_USEC: u64 = 100_000;
/// The largest `slow_command_threshold`: an hour, in µs.
pub(super) const MAX_SLOW_COMMAND_USEC: u64 = 3_600_000_000;

/// Whom a password may go to, when `server_user` names no one: each of
/// these users that exists (Debian's redis-server and valkey-server run as
/// them), and root. See [`RedisInstance::server_user`].
pub const DEFAULT_SERVER_USERS: &[&str] = &["redis", "valkey"];

/// The range `max_reply_bytes` may be set in.
pub(super) const MIN_MAX_REPLY_BYTES: u64 = 64 << 10;
pub(super) const MAX_MAX_REPLY_BYTES: u64 = 1 << 30;

/// How to reach one Redis server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedisAddress {
    Tcp {
        host: String,
        port: u16,
    },
    /// TLS over TCP (`rediss://`).
    Tls {
        host: String,
        port: u16,
    },
    Unix(PathBuf),
}

impl fmt::Display for RedisAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RedisAddress::Tcp { host, port } if host.contains(':') => write!(f, "[{host}]:{port}"),
            RedisAddress::Tcp { host, port } => write!(f, "{host}:{port}"),
            RedisAddress::Tls { host, port } if host.contains(':') => {
                write!(f, "rediss://[{host}]:{port}")
            }
            RedisAddress::Tls { host, port } => write!(f, "rediss://{host}:{port}"),
            RedisAddress::Unix(path) => write!(f, "unix:{}", path.display()),
        }
    }
}

impl RedisAddress {
    /// `redis://host:port`, `host:port`, `[::1]:port`, `unix:///path`,
    /// `unix:/path` or `/path`. Credentials in a URL are refused: they
    /// belong in a password file, not in a string that may be shown.
    pub fn parse(text: &str) -> Result<RedisAddress, String> {
        let text = text.trim();
        if let Some(path) = text
            .strip_prefix("unix://")
            .or_else(|| text.strip_prefix("unix:"))
        {
            return match path {
                "" => Err("unix: address without a path".into()),
                p => Ok(RedisAddress::Unix(PathBuf::from(p))),
            };
        }
        if text.starts_with('/') {
            return Ok(RedisAddress::Unix(PathBuf::from(text)));
        }
        let (tls, hostport) = match text.strip_prefix("rediss://") {
            Some(rest) => (true, rest),
            None => (false, text.strip_prefix("redis://").unwrap_or(text)),
        };
        let hostport = hostport.trim_end_matches('/');
        if hostport.contains('@') {
            return Err(
                "credentials in the address are refused: use password_file (and username)".into(),
            );
        }
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) if !h.is_empty() && (h.starts_with('[') || !h.contains(':')) => (
                h,
                p.parse::<u16>()
                    .map_err(|_| format!("bad port in {text:?}"))?,
            ),
            _ if !hostport.is_empty() && !hostport.contains(':') => (hostport, 6379),
            _ => return Err(format!("cannot read {text:?} as host:port")),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() || port == 0 {
            return Err(format!("cannot read {text:?} as host:port"));
        }
        let host = host.to_string();
        Ok(if tls {
            RedisAddress::Tls { host, port }
        } else {
            RedisAddress::Tcp { host, port }
        })
    }
}

/// TLS settings of a `rediss://` instance. Files are read when connecting,
/// so renewed certificates are picked up on the next reconnect.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsFiles {
    /// CA certificate(s) to verify the server with (PEM); the system's
    /// roots when absent.
    pub ca_file: Option<PathBuf>,
    /// Client certificate and key (PEM), for servers that ask for one.
    pub cert_file: Option<PathBuf>,
    pub key_file: Option<PathBuf>,
    /// The name to verify the server's certificate against, when it is not
    /// the host of the address (e.g. connecting to an IP address).
    pub server_name: Option<String>,
}

/// One Redis server to poll. Compared whole when the configuration is
/// reloaded: any difference restarts its poller.
#[derive(Debug, Clone, PartialEq)]
pub struct RedisInstance {
    pub name: String,
    pub address: RedisAddress,
    pub username: Option<String>,
    pub password: Option<Secret>,
    /// Where the password was read from (`password_file`,
    /// `--password-file`): the doctor checks that the agent's user may
    /// read it.
    pub password_file: Option<PathBuf>,
    /// `server_user`: the user the server runs as. The password is sent
    /// over TCP to this host (a loopback address, or the host's own) or
    /// over a unix socket only once the server's end of the connection is
    /// seen to belong to this user or to root (`redis::peer`); `None`:
    /// each of [`DEFAULT_SERVER_USERS`] that exists, and root. Checked at
    /// load to name a user.
    pub server_user: Option<String>,
    /// Set by discovery: the uid the server was found running as (or
    /// listening as). Then every connection, password or not, is first
    /// checked to be served by that user or root, since a socket path or
    /// port discovery checked once may be another user's after a restart
    /// (`redis::peer`).
    pub found_running_as: Option<u32>,
    /// Connect and response timeout.
    pub timeout: Duration,
    pub tls: TlsFiles,
    /// A reply longer than this ends the connection and fails the poll.
    pub max_reply_bytes: u64,
    /// Whether to read the newest slow log entry (`SLOWLOG GET 1`): it
    /// shows the command's arguments, keys and values included, to the
    /// agent's Redis user. Off, only `SLOWLOG LEN` is asked.
    pub slowlog_entries: bool,
    /// The server's certificate is expiring within this of its end.
    pub cert_expiry_warning: Duration,
    /// How often the certificate is looked at again by a new handshake.
    pub cert_check_interval: Duration,
    /// Whether to ask `CLIENT LIST` for the client aggregate tables.
    pub client_list: bool,
    /// How often to ask it.
    pub client_list_interval: Duration,
    /// Rows of each aggregate table at most; the rest are summed in one.
    pub client_list_rows: usize,
    /// How often to ask the costly parts (INFO's sections beyond the
    /// default ones, SLOWLOG, LATENCY LATEST); `None`: the configuration's
    /// `slow_refresh`. Between two such polls they are served as last read.
    pub slow_refresh: Option<Duration>,
    /// The keys and streams an operator names (`check_keys` and its
    /// settings); no entries: off.
    pub key_checks: KeyChecks,
    /// Whether to read `ACL LOG` (`redisAclRefusalTable`, bursts).
    pub acl_log: bool,
    /// More refusals than this within `acl_burst_window` are a burst.
    pub acl_burst_refusals: u64,
    pub acl_burst_window: Duration,
    /// New slow log entries as rows and notifications (`slow_commands`
    /// and its settings).
    pub slow_commands: SlowCommands,
}

/// The `slow_commands` settings of one instance (issue 25): each new slow
/// log entry becomes a row of `redisSlowCommandTable`, and one over the
/// threshold a `redisSlowCommand` (see `redis::slowlog`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlowCommands {
    /// `slow_commands`: watch the slow log (needs `slowlog_entries`).
    pub enabled: bool,
    /// `slow_command_threshold`: entries at least this long, in µs, are
    /// notified; 0: every entry the server logs.
    pub threshold_usec: u64,
    /// `slow_command_args`: show the arguments (keys and values) after
    /// the command's name; with `key_names = "alias"`, each as its alias.
    pub args: bool,
}

impl Default for SlowCommands {
    fn default() -> Self {
        SlowCommands {
            enabled: true,
            threshold_usec: DEFAULT_SLOW_COMMAND_USEC,
            args: false,
        }
    }
}

/// How `redisKeyTable` shows a key: by its name, or by an alias that
/// tells nothing of it (key names can be sensitive, and a name-indexed
/// row's name is in every OID of the row).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeyNames {
    #[default]
    Name,
    /// `e<N>` for the Nth entry of `check_keys` named exactly, and
    /// `e<N>-<hash>` for a key a pattern matched (see `redis::keys`).
    Alias,
}

/// The `check_keys` settings of one instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyChecks {
    /// Exact names and glob patterns (`*`, `?`, `[` make a pattern), as
    /// configured.
    pub entries: Vec<String>,
    pub interval: Duration,
    /// Rows of `redisKeyTable` at most; the rest are counted.
    pub rows: usize,
    /// Consumer groups per stream at most; the rest are counted.
    pub groups: usize,
    /// SCAN's COUNT hint.
    pub scan_count: u32,
    /// SCAN calls per check at most.
    pub scan_calls: u32,
    /// Time per check for SCAN at most.
    pub scan_time: Duration,
    /// Whether to ask `MEMORY USAGE` of each key (it walks the value).
    pub memory: bool,
    pub names: KeyNames,
    /// The key of the aliases' hash (alias mode only): without it, anyone
    /// who reads the tree could confirm a guessed name by hashing it.
    pub alias_secret: Option<Secret>,
    /// Where that secret was read from.
    pub alias_secret_file: Option<PathBuf>,
    /// The big-key sampler; shows names as `names` says.
    pub big_keys: BigKeys,
}

/// The big-key sampler's settings (`big_keys` and `big_keys_*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BigKeys {
    pub enabled: bool,
    /// The largest keys kept per database.
    pub rows: usize,
    pub interval: Duration,
    pub scan_calls: u32,
    pub scan_count: u32,
    pub scan_time: Duration,
    /// `MEMORY USAGE … SAMPLES n`: nested values looked at per key.
    pub samples: u32,
    /// Whether to ask `HOTKEYS GET` (Valkey with `hotkeys-top-k` set, or
    /// Redis 8.6 after an operator's `HOTKEYS START`).
    pub hot_keys: bool,
}

impl Default for BigKeys {
    fn default() -> Self {
        BigKeys {
            enabled: false,
            rows: DEFAULT_BIG_KEYS_ROWS,
            interval: Duration::from_secs(DEFAULT_BIG_KEYS_SECS),
            scan_calls: DEFAULT_BIG_KEYS_SCAN_CALLS,
            scan_count: DEFAULT_BIG_KEYS_SCAN_COUNT,
            scan_time: Duration::from_millis(DEFAULT_BIG_KEYS_SCAN_MILLIS),
            samples: DEFAULT_BIG_KEYS_SAMPLES,
            hot_keys: false,
        }
    }
}

impl Default for KeyChecks {
    fn default() -> Self {
        KeyChecks {
            entries: Vec::new(),
            interval: Duration::from_secs(DEFAULT_CHECK_KEYS_SECS),
            rows: DEFAULT_CHECK_KEYS_ROWS,
            groups: DEFAULT_CHECK_KEYS_GROUPS,
            scan_count: DEFAULT_CHECK_KEYS_SCAN_COUNT,
            scan_calls: DEFAULT_CHECK_KEYS_SCAN_CALLS,
            scan_time: Duration::from_millis(DEFAULT_CHECK_KEYS_SCAN_MILLIS),
            memory: false,
            names: KeyNames::Name,
            alias_secret: None,
            alias_secret_file: None,
            big_keys: BigKeys::default(),
        }
    }
}

impl RedisInstance {
    /// `name` at `address` with every setting at its default: no user, no
    /// password, no TLS files.
    pub fn new(name: String, address: RedisAddress) -> RedisInstance {
        RedisInstance {
            name,
            address,
            username: None,
            password: None,
            password_file: None,
            server_user: None,
            found_running_as: None,
            timeout: Duration::from_secs_f64(DEFAULT_TIMEOUT_SECS),
            tls: TlsFiles::default(),
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
            slowlog_entries: true,
            cert_expiry_warning: Duration::from_secs(DEFAULT_CERT_EXPIRY_WARNING_SECS),
            cert_check_interval: Duration::from_secs(DEFAULT_CERT_CHECK_SECS),
            client_list: true,
            client_list_interval: Duration::from_secs(DEFAULT_CLIENT_LIST_SECS),
            client_list_rows: DEFAULT_CLIENT_LIST_ROWS,
            slow_refresh: None,
            key_checks: KeyChecks::default(),
            slow_commands: SlowCommands::default(),
            acl_log: true,
            acl_burst_refusals: DEFAULT_ACL_BURST_REFUSALS,
            acl_burst_window: Duration::from_secs(DEFAULT_ACL_BURST_WINDOW_SECS),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileInstance {
    pub(super) name: Option<String>,
    pub(super) address: Option<String>,
    pub(super) username: Option<String>,
    pub(super) password_file: Option<PathBuf>,
    pub(super) server_user: Option<String>,
    pub(super) timeout: Option<f64>,
    pub(super) tls_ca_file: Option<PathBuf>,
    pub(super) tls_cert_file: Option<PathBuf>,
    pub(super) tls_key_file: Option<PathBuf>,
    pub(super) tls_server_name: Option<String>,
    pub(super) max_reply_bytes: Option<u64>,
    pub(super) slowlog_entries: Option<bool>,
    pub(super) cert_expiry_warning: Option<u64>,
    pub(super) cert_check_interval: Option<u64>,
    pub(super) client_list: Option<bool>,
    pub(super) client_list_interval: Option<u64>,
    pub(super) client_list_rows: Option<usize>,
    /// This instance's own `slow_refresh`.
    pub(super) slow_refresh: Option<u64>,
    pub(super) check_keys: Option<Vec<String>>,
    pub(super) check_keys_interval: Option<u64>,
    pub(super) check_keys_rows: Option<usize>,
    pub(super) check_keys_groups: Option<usize>,
    pub(super) check_keys_scan_count: Option<u32>,
    pub(super) check_keys_scan_calls: Option<u32>,
    /// Milliseconds.
    pub(super) check_keys_scan_time: Option<u64>,
    pub(super) check_keys_memory: Option<bool>,
    /// `"name"` or `"alias"`.
    pub(super) key_names: Option<String>,
    pub(super) key_alias_secret_file: Option<PathBuf>,
    pub(super) slow_commands: Option<bool>,
    /// Microseconds.
    pub(super) slow_command_threshold: Option<u64>,
    pub(super) slow_command_args: Option<bool>,
    pub(super) big_keys: Option<bool>,
    pub(super) big_keys_rows: Option<usize>,
    pub(super) big_keys_interval: Option<u64>,
    pub(super) big_keys_scan_calls: Option<u32>,
    pub(super) big_keys_scan_count: Option<u32>,
    /// Milliseconds.
    pub(super) big_keys_scan_time: Option<u64>,
    pub(super) big_keys_samples: Option<u32>,
    pub(super) hot_keys: Option<bool>,
    pub(super) acl_log: Option<bool>,
    pub(super) acl_burst_refusals: Option<u64>,
    pub(super) acl_burst_window: Option<u64>,
}

/// A `slow_refresh`: not more often than the refresh (the costly parts are
/// read by a poll), at most a day.
pub(super) fn check_slow_refresh(key: &str, secs: u64, refresh_secs: u64) -> Result<(), String> {
    if !(refresh_secs..=86_400).contains(&secs) {
        return Err(format!(
            "{key}: {secs} is not between the refresh ({refresh_secs}) and 86400 seconds"
        ));
    }
    Ok(())
}

/// One `[[redis]]` entry, validated; errors are messages that name the key.
pub(super) fn instance_from_file(
    entry: &FileInstance,
    key: &dyn Fn(&str) -> String,
    position: usize,
    warnings: &mut Vec<String>,
) -> Result<RedisInstance, String> {
    let address = match &entry.address {
        Some(text) => RedisAddress::parse(text).map_err(|e| format!("{}: {e}", key("address")))?,
        None => return Err(format!("{}: missing", key("address"))),
    };
    let timeout_secs = entry.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS);
    if !(timeout_secs > 0.0 && timeout_secs <= 300.0) {
        return Err(format!(
            "{}: {timeout_secs} is not between 0 and 300 seconds",
            key("timeout")
        ));
    }
    let password = match &entry.password_file {
        Some(path) => {
            let (secret, warning) = secret::read_password_file(path)
                .map_err(|e| format!("{}: {e}", key("password_file")))?;
            warnings.extend(warning);
            Some(secret)
        }
        None => None,
    };
    let server_user = server_user_from_file(entry, &address, key, warnings)?;
    let tls = tls_from_file(entry, &address, key, warnings)?;
    let max_reply_bytes = entry.max_reply_bytes.unwrap_or(DEFAULT_MAX_REPLY_BYTES);
    if !(MIN_MAX_REPLY_BYTES..=MAX_MAX_REPLY_BYTES).contains(&max_reply_bytes) {
        return Err(format!(
            "{}: {max_reply_bytes} is not between {MIN_MAX_REPLY_BYTES} and {MAX_MAX_REPLY_BYTES} bytes",
            key("max_reply_bytes")
        ));
    }
    let seconds = |name: &str, value: Option<u64>, default: u64| match value {
        Some(0) => Err(format!("{}: must be at least 1 second", key(name))),
        Some(secs) => Ok(Duration::from_secs(secs)),
        None => Ok(Duration::from_secs(default)),
    };
    let cert_expiry_warning = seconds(
        "cert_expiry_warning",
        entry.cert_expiry_warning,
        DEFAULT_CERT_EXPIRY_WARNING_SECS,
    )?;
    let cert_check_interval = seconds(
        "cert_check_interval",
        entry.cert_check_interval,
        DEFAULT_CERT_CHECK_SECS,
    )?;
    let client_list_interval = seconds(
        "client_list_interval",
        entry.client_list_interval,
        DEFAULT_CLIENT_LIST_SECS,
    )?;
    let client_list_rows = entry.client_list_rows.unwrap_or(DEFAULT_CLIENT_LIST_ROWS);
    if !(1..=MAX_CLIENT_LIST_ROWS).contains(&client_list_rows) {
        return Err(format!(
            "{}: {client_list_rows} is not between 1 and {MAX_CLIENT_LIST_ROWS}",
            key("client_list_rows")
        ));
    }
    let key_checks = key_checks_from_file(entry, key, warnings)?;
    let slow_commands = slow_commands_from_file(entry, key)?;
    let acl_burst_window = seconds(
        "acl_burst_window",
        entry.acl_burst_window,
        DEFAULT_ACL_BURST_WINDOW_SECS,
    )?;
    if acl_burst_window > Duration::from_secs(86_400) {
        return Err(format!(
            "{}: more than 86400 seconds",
            key("acl_burst_window")
        ));
    }
    Ok(RedisInstance {
        name: entry
            .name
            .clone()
            .unwrap_or_else(|| format!("redis{}", position + 1)),
        address,
        username: entry.username.clone(),
        password,
        password_file: entry.password_file.as_deref().map(absolute),
        server_user,
        found_running_as: None,
        timeout: Duration::from_secs_f64(timeout_secs),
        tls,
        max_reply_bytes,
        slowlog_entries: entry.slowlog_entries.unwrap_or(true),
        cert_expiry_warning,
        cert_check_interval,
        client_list: entry.client_list.unwrap_or(true),
        client_list_interval,
        client_list_rows,
        slow_refresh: entry.slow_refresh.map(Duration::from_secs),
        key_checks,
        acl_log: entry.acl_log.unwrap_or(true),
        acl_burst_refusals: entry
            .acl_burst_refusals
            .unwrap_or(DEFAULT_ACL_BURST_REFUSALS),
        acl_burst_window,
        slow_commands,
    })
}

/// The `slow_commands` settings of an entry. Reading entries shows their
/// arguments to the agent's user: off with `slowlog_entries = false`,
/// and asking for both is a contradiction, refused.
pub(super) fn slow_commands_from_file(
    entry: &FileInstance,
    key: &dyn Fn(&str) -> String,
) -> Result<SlowCommands, String> {
    let entries = entry.slowlog_entries.unwrap_or(true);
    if entry.slow_commands == Some(true) && !entries {
        return Err(format!(
            "{}: needs slowlog_entries, which is false",
            key("slow_commands")
        ));
    }
    let threshold_usec = entry
        .slow_command_threshold
        .unwrap_or(DEFAULT_SLOW_COMMAND_USEC);
    if threshold_usec > MAX_SLOW_COMMAND_USEC {
        return Err(format!(
            "{}: {threshold_usec} is not between 0 and {MAX_SLOW_COMMAND_USEC} microseconds",
            key("slow_command_threshold")
        ));
    }
    Ok(SlowCommands {
        enabled: entry.slow_commands.unwrap_or(true) && entries,
        threshold_usec,
        args: entry.slow_command_args.unwrap_or(false),
    })
}

/// `server_user`: a user of this host (a name the password database
/// knows now). Of no use with `rediss://`, where the server proves itself
/// by its certificate: said so.
pub(super) fn server_user_from_file(
    entry: &FileInstance,
    address: &RedisAddress,
    key: &dyn Fn(&str) -> String,
    warnings: &mut Vec<String>,
) -> Result<Option<String>, String> {
    let Some(name) = &entry.server_user else {
        return Ok(None);
    };
    if crate::process::uid_of(name).is_none() {
        return Err(format!(
            "{}: there is no user named {name:?}",
            key("server_user")
        ));
    }
    if matches!(address, RedisAddress::Tls { .. }) {
        warnings.push(format!(
            "{}: not checked for a rediss:// address, whose server proves itself by its certificate",
            key("server_user")
        ));
    }
    Ok(Some(name.clone()))
}

/// The `check_keys` keys of an entry, each bounded: the agent's work per
/// check and the rows it keeps grow with them.
pub(super) fn key_checks_from_file(
    entry: &FileInstance,
    key: &dyn Fn(&str) -> String,
    warnings: &mut Vec<String>,
) -> Result<KeyChecks, String> {
    let defaults = KeyChecks::default();
    let entries = entry.check_keys.clone().unwrap_or_default();
    if entries.len() > MAX_CHECK_KEYS {
        return Err(format!(
            "{}: {} entries, at most {MAX_CHECK_KEYS}",
            key("check_keys"),
            entries.len()
        ));
    }
    for (n, name) in entries.iter().enumerate() {
        // The entry's position, not its text: it may be a secret name.
        if name.is_empty() || name.len() > MAX_CHECK_KEY_LEN {
            return Err(format!(
                "{}: entry {} is empty or longer than {MAX_CHECK_KEY_LEN} bytes",
                key("check_keys"),
                n + 1
            ));
        }
        if entries[..n].contains(name) {
            return Err(format!(
                "{}: entry {} repeats an earlier one",
                key("check_keys"),
                n + 1
            ));
        }
    }
    let within = |name: &str,
                  value: Option<u64>,
                  default: u64,
                  range: std::ops::RangeInclusive<u64>,
                  unit: &str| {
        let value = value.unwrap_or(default);
        if range.contains(&value) {
            Ok(value)
        } else {
            Err(format!(
                "{}: {value} is not between {} and {} {unit}",
                key(name),
                range.start(),
                range.end()
            ))
        }
    };
    let interval = within(
        "check_keys_interval",
        entry.check_keys_interval,
        DEFAULT_CHECK_KEYS_SECS,
        1..=86_400,
        "seconds",
    )?;
    let rows = within(
        "check_keys_rows",
        entry.check_keys_rows.map(|n| n as u64),
        defaults.rows as u64,
        1..=1_000,
        "rows",
    )?;
    let groups = within(
        "check_keys_groups",
        entry.check_keys_groups.map(|n| n as u64),
        defaults.groups as u64,
        1..=100,
        "groups",
    )?;
    let scan_count = within(
        "check_keys_scan_count",
        entry.check_keys_scan_count.map(u64::from),
        u64::from(defaults.scan_count),
        10..=100_000,
        "keys",
    )?;
    let scan_calls = within(
        "check_keys_scan_calls",
        entry.check_keys_scan_calls.map(u64::from),
        u64::from(defaults.scan_calls),
        1..=100_000,
        "calls",
    )?;
    let scan_time = within(
        "check_keys_scan_time",
        entry.check_keys_scan_time,
        DEFAULT_CHECK_KEYS_SCAN_MILLIS,
        1..=60_000,
        "milliseconds",
    )?;
    let names = match entry.key_names.as_deref() {
        None | Some("name") => KeyNames::Name,
        Some("alias") => KeyNames::Alias,
        Some(other) => {
            return Err(format!(
                "{}: {other:?} is neither \"name\" nor \"alias\"",
                key("key_names")
            ))
        }
    };
    let (alias_secret, alias_secret_file) = match names {
        KeyNames::Alias => {
            let (secret, path) = alias_secret(entry, key, warnings)?;
            (Some(secret), Some(path))
        }
        KeyNames::Name => (None, None),
    };
    let big_keys = BigKeys {
        enabled: entry.big_keys.unwrap_or(false),
        rows: within(
            "big_keys_rows",
            entry.big_keys_rows.map(|n| n as u64),
            DEFAULT_BIG_KEYS_ROWS as u64,
            1..=100,
            "rows",
        )? as usize,
        interval: Duration::from_secs(within(
            "big_keys_interval",
            entry.big_keys_interval,
            DEFAULT_BIG_KEYS_SECS,
            1..=86_400,
            "seconds",
        )?),
        scan_calls: within(
            "big_keys_scan_calls",
            entry.big_keys_scan_calls.map(u64::from),
            u64::from(DEFAULT_BIG_KEYS_SCAN_CALLS),
            1..=10_000,
            "calls",
        )? as u32,
        scan_count: within(
            "big_keys_scan_count",
            entry.big_keys_scan_count.map(u64::from),
            u64::from(DEFAULT_BIG_KEYS_SCAN_COUNT),
            10..=10_000,
            "keys",
        )? as u32,
        scan_time: Duration::from_millis(within(
            "big_keys_scan_time",
            entry.big_keys_scan_time,
            DEFAULT_BIG_KEYS_SCAN_MILLIS,
            1..=60_000,
            "milliseconds",
        )?),
        // SAMPLES 0 would walk every nested value of a huge key.
        samples: within(
            "big_keys_samples",
            entry.big_keys_samples.map(u64::from),
            u64::from(DEFAULT_BIG_KEYS_SAMPLES),
            1..=1_000,
            "values",
        )? as u32,
        hot_keys: entry.hot_keys.unwrap_or(false),
    };
    Ok(KeyChecks {
        big_keys,
        alias_secret,
        alias_secret_file,
        entries,
        interval: Duration::from_secs(interval),
        rows: rows as usize,
        groups: groups as usize,
        scan_count: scan_count as u32,
        scan_calls: scan_calls as u32,
        scan_time: Duration::from_millis(scan_time),
        memory: entry.check_keys_memory.unwrap_or(false),
        names,
    })
}

/// The secret that keys the aliases: the first line of
/// `key_alias_secret_file` (or [`DEFAULT_KEY_ALIAS_SECRET_FILE`]), at
/// least [`MIN_KEY_ALIAS_SECRET_LEN`] characters.
fn alias_secret(
    entry: &FileInstance,
    key: &dyn Fn(&str) -> String,
    warnings: &mut Vec<String>,
) -> Result<(Secret, PathBuf), String> {
    let path = entry
        .key_alias_secret_file
        .as_deref()
        .unwrap_or(Path::new(DEFAULT_KEY_ALIAS_SECRET_FILE));
    let create =
        "make one with: (umask 027; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n' > FILE), \
                  then chgrp redis-snmp FILE: readable by root and the agent's group only";
    let bytes = secret::read_regular_file(path, secret::MAX_SECRET_FILE_BYTES).map_err(|e| {
        format!(
            "{}: key_names = \"alias\" needs a secret: cannot read {}: {e} ({create})",
            key("key_alias_secret_file"),
            path.display()
        )
    })?;
    let line = String::from_utf8_lossy(&bytes)
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    if line.len() < MIN_KEY_ALIAS_SECRET_LEN {
        return Err(format!(
            "{}: the first line of {} has fewer than {MIN_KEY_ALIAS_SECRET_LEN} characters ({create})",
            key("key_alias_secret_file"),
            path.display()
        ));
    }
    warnings.extend(secret::world_readable_warning(path, "a secret"));
    Ok((Secret::new(line), absolute(path)))
}

/// `path` made absolute against the directory the agent was started in:
/// files read after start-up (TLS certificates at each connection, Puppet's
/// files) must not move when a daemon changes to `/`.
pub(super) fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The `tls_*` keys of an entry: only with a `rediss://` address, a client
/// certificate only with its key, and every file readable now.
pub(super) fn tls_from_file(
    entry: &FileInstance,
    address: &RedisAddress,
    key: &dyn Fn(&str) -> String,
    warnings: &mut Vec<String>,
) -> Result<TlsFiles, String> {
    let tls = TlsFiles {
        ca_file: entry.tls_ca_file.as_deref().map(absolute),
        cert_file: entry.tls_cert_file.as_deref().map(absolute),
        key_file: entry.tls_key_file.as_deref().map(absolute),
        server_name: entry.tls_server_name.clone(),
    };
    if tls != TlsFiles::default() && !matches!(address, RedisAddress::Tls { .. }) {
        return Err(format!(
            "{}: tls_* settings need a rediss:// address",
            key("address")
        ));
    }
    if tls.cert_file.is_some() != tls.key_file.is_some() {
        return Err(format!(
            "{}: give both tls_cert_file and tls_key_file, or neither",
            key("tls_key_file")
        ));
    }
    for (name, path) in [
        ("tls_ca_file", &tls.ca_file),
        ("tls_cert_file", &tls.cert_file),
        ("tls_key_file", &tls.key_file),
    ] {
        if let Some(path) = path {
            // Never waited on (a FIFO), and read as it will be.
            secret::read_regular_file(path, secret::MAX_SECRET_FILE_BYTES)
                .map_err(|e| format!("{}: cannot read {}: {e}", key(name), path.display()))?;
        }
    }
    if let Some(path) = &tls.key_file {
        warnings.extend(secret::world_readable_warning(path, "a private key"));
    }
    Ok(tls)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alias_checks(secret_file: &Path) -> Result<KeyChecks, String> {
        let entry = FileInstance {
            check_keys: Some(vec!["user:*".into()]),
            key_names: Some("alias".into()),
            key_alias_secret_file: Some(secret_file.to_path_buf()),
            ..FileInstance::default()
        };
        key_checks_from_file(&entry, &|k: &str| format!("redis[0].{k}"), &mut Vec::new())
    }

    #[test]
    fn alias_mode_needs_a_secret_of_its_own_read_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("alias.secret");
        let why = alias_checks(&file).unwrap_err();
        assert!(
            why.starts_with("redis[0].key_alias_secret_file: key_names = \"alias\" needs a secret")
                && why.contains("head -c 32 /dev/urandom"),
            "{why}"
        );
        std::fs::write(&file, "short\n").unwrap();
        assert!(alias_checks(&file).unwrap_err().contains("fewer than 32"));
        std::fs::write(&file, "0123456789abcdef0123456789abcdef\nignored\n").unwrap();
        let checks = alias_checks(&file).unwrap();
        assert_eq!(
            checks.alias_secret.as_ref().map(Secret::expose),
            Some("0123456789abcdef0123456789abcdef")
        );
        // A FIFO in its place is refused at once (review L3).
        let fifo = dir.path().join("fifo");
        let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        assert!(alias_checks(&fifo)
            .unwrap_err()
            .contains("a FIFO, not a regular file"));
        // Name mode reads no secret.
        let entry = FileInstance {
            check_keys: Some(vec!["user:*".into()]),
            key_alias_secret_file: Some(fifo),
            ..FileInstance::default()
        };
        let checks = key_checks_from_file(&entry, &|k: &str| k.to_string(), &mut Vec::new());
        assert_eq!(checks.unwrap().alias_secret, None);
    }

    #[test]
    fn a_fifo_as_a_tls_file_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("ca.pem");
        let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let entry = FileInstance {
            tls_ca_file: Some(fifo),
            ..FileInstance::default()
        };
        let address = RedisAddress::parse("rediss://127.0.0.1:6380").unwrap();
        let why =
            tls_from_file(&entry, &address, &|k: &str| k.to_string(), &mut Vec::new()).unwrap_err();
        assert!(
            why.contains("tls_ca_file: cannot read") && why.contains("a FIFO"),
            "{why}"
        );
    }
}
