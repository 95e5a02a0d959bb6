//! `[ledger]` in kick.toml: the ledger in a Redis (or Valkey) that two
//! managers share, instead of the local `state_dir`. Checked here, at
//! load; the files it names (the password, the key that seals the
//! records) are read when the ledger is opened.

use crate::config::{RedisAddress, TlsFiles};
use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

/// Where the shared ledger is, and how this manager reaches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedLedger {
    /// `redis = "redis://host:port/db"` (`rediss://`, `unix:/path`);
    /// `None` with `sentinels`, which name the master.
    pub address: Option<RedisAddress>,
    /// Sentinels asked for the master `master_name` (host, port), in order.
    pub sentinels: Vec<(String, u16)>,
    pub master_name: Option<String>,
    /// With `sentinels`: the master (and the sentinels) over TLS.
    pub tls: bool,
    pub tls_files: TlsFiles,
    pub database: u32,
    pub username: Option<String>,
    pub password_file: Option<PathBuf>,
    /// The secret that seals every record: a record read from the ledger
    /// whose seal does not hold is refused. Whoever can write the ledger's
    /// Redis but has not this file cannot make a manager run anything.
    pub key_file: PathBuf,
    /// This manager's name, unique among the managers: who runs a kick.
    pub manager: String,
    /// Each call to Redis is answered within this, or fails.
    pub timeout: Duration,
    /// Writes that start a kick wait for this many replicas to hold them
    /// (`WAIT`), so that a failover does not forget a kick already run.
    pub replicas: u32,
    /// Every key of the ledger starts with this.
    pub prefix: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileLedger {
    redis: Option<String>,
    #[serde(default)]
    sentinels: Vec<String>,
    master_name: Option<String>,
    tls: Option<bool>,
    tls_ca_file: Option<PathBuf>,
    tls_cert_file: Option<PathBuf>,
    tls_key_file: Option<PathBuf>,
    tls_server_name: Option<String>,
    database: Option<u32>,
    username: Option<String>,
    password_file: Option<PathBuf>,
    key_file: Option<PathBuf>,
    manager_name: Option<String>,
    /// Milliseconds.
    timeout: Option<u64>,
    replicas: Option<u32>,
    prefix: Option<String>,
}

/// Milliseconds a call to the ledger's Redis may take by default: the
/// handler answers snmptrapd within a second whatever the ledger does.
const DEFAULT_TIMEOUT_MS: u64 = 250;

impl FileLedger {
    pub fn check(self) -> Result<SharedLedger, String> {
        let key = |name: &str| format!("[ledger] {name}");
        let absolute = |name: &str, path: Option<PathBuf>| -> Result<Option<PathBuf>, String> {
            match path {
                Some(p) if !p.is_absolute() => Err(format!(
                    "{} = {:?}: must be an absolute path",
                    key(name),
                    p.display()
                )),
                other => Ok(other),
            }
        };
        let (address, url_user, url_database) = match (&self.redis, self.sentinels.is_empty()) {
            (Some(_), false) => {
                return Err(format!(
                    "{} and {}: give one (the sentinels name the master)",
                    key("redis"),
                    key("sentinels")
                ))
            }
            (None, true) => {
                return Err(format!(
                    "{}: give redis = \"redis://host:port/0\" or sentinels and master_name",
                    key("redis")
                ))
            }
            (Some(url), true) => {
                let (address, user, database) =
                    parse_url(url).map_err(|e| format!("{} = {url:?}: {e}", key("redis")))?;
                (Some(address), user, database)
            }
            (None, false) => (None, None, None),
        };
        let mut sentinels = Vec::new();
        for text in &self.sentinels {
            let address = RedisAddress::parse(text)
                .map_err(|e| format!("{} = {text:?}: {e}", key("sentinels")))?;
            match address {
                RedisAddress::Tcp { host, port } => sentinels.push((host, port)),
                _ => {
                    return Err(format!(
                        "{} = {text:?}: host:port (TLS by tls = true)",
                        key("sentinels")
                    ))
                }
            }
        }
        if sentinels.len() > 16 {
            return Err(format!("{}: at most 16", key("sentinels")));
        }
        let master_name = match (&self.master_name, sentinels.is_empty()) {
            (Some(name), false) if is_plain(name) => Some(name.clone()),
            (Some(name), false) => {
                return Err(format!(
                    "{} = {name:?}: letters, digits, '.', '_' and '-'",
                    key("master_name")
                ))
            }
            (None, false) => return Err(format!("{}: needed with sentinels", key("master_name"))),
            (Some(_), true) => return Err(format!("{}: only with sentinels", key("master_name"))),
            (None, true) => None,
        };
        if self.tls.is_some() && address.is_some() {
            return Err(format!(
                "{}: only with sentinels (else rediss:// says it)",
                key("tls")
            ));
        }
        let uses_tls = matches!(address, Some(RedisAddress::Tls { .. })) || self.tls == Some(true);
        let tls_files = [
            ("tls_ca_file", self.tls_ca_file.is_some()),
            ("tls_cert_file", self.tls_cert_file.is_some()),
            ("tls_key_file", self.tls_key_file.is_some()),
            ("tls_server_name", self.tls_server_name.is_some()),
        ];
        if let Some((name, _)) = tls_files.iter().find(|(_, given)| *given && !uses_tls) {
            return Err(format!(
                "{}: only with rediss:// (or tls = true with sentinels)",
                key(name)
            ));
        }
        let username = match (self.username, url_user) {
            (Some(_), Some(_)) => {
                return Err(format!(
                    "{} and a user in {}: give one",
                    key("username"),
                    key("redis")
                ))
            }
            (a, b) => a.or(b),
        };
        if let Some(user) = &username {
            if !is_plain(user) {
                return Err(format!(
                    "{} = {user:?}: letters, digits, '.', '_' and '-'",
                    key("username")
                ));
            }
        }
        let database = match (self.database, url_database) {
            (Some(_), Some(_)) => {
                return Err(format!(
                    "{} and a database in {}: give one",
                    key("database"),
                    key("redis")
                ))
            }
            (a, b) => a.or(b).unwrap_or(0),
        };
        if database > 15_999 {
            return Err(format!("{} = {database}: from 0 to 15999", key("database")));
        }
        let key_file = absolute("key_file", self.key_file)?.ok_or_else(|| {
            format!(
                "{}: needed: the secret that seals the ledger's records \
                 (the same file on every manager; `head -c 32 /dev/urandom > FILE`)",
                key("key_file")
            )
        })?;
        let manager = match self.manager_name {
            Some(name) => name,
            None => host_name()?,
        };
        if !is_plain(&manager) || manager.len() > 64 {
            return Err(format!(
                "{} = {manager:?}: up to 64 letters, digits, '.', '_' and '-'",
                key("manager_name")
            ));
        }
        let timeout = self.timeout.unwrap_or(DEFAULT_TIMEOUT_MS);
        if !(10..=900).contains(&timeout) {
            return Err(format!(
                "{} = {timeout}: must be from 10 to 900 (milliseconds)",
                key("timeout")
            ));
        }
        let replicas = self
            .replicas
            .unwrap_or(if sentinels.is_empty() { 0 } else { 1 });
        if replicas > 8 {
            return Err(format!(
                "{} = {replicas}: must be from 0 to 8",
                key("replicas")
            ));
        }
        let prefix = self
            .prefix
            .unwrap_or_else(|| "redis-snmp:kick:".to_string());
        if prefix.is_empty()
            || prefix.len() > 64
            || !prefix
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b":._-".contains(&b))
        {
            return Err(format!(
                "{} = {prefix:?}: 1 to 64 letters, digits, ':', '.', '_' and '-'",
                key("prefix")
            ));
        }
        Ok(SharedLedger {
            address,
            sentinels,
            master_name,
            tls: self.tls.unwrap_or(false),
            tls_files: TlsFiles {
                ca_file: absolute("tls_ca_file", self.tls_ca_file)?,
                cert_file: absolute("tls_cert_file", self.tls_cert_file)?,
                key_file: absolute("tls_key_file", self.tls_key_file)?,
                server_name: self.tls_server_name,
            },
            database,
            username,
            password_file: absolute("password_file", self.password_file)?,
            key_file,
            manager,
            timeout: Duration::from_millis(timeout),
            replicas,
            prefix,
        })
    }
}

fn is_plain(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// `redis://[user@]host[:port][/db]`, `rediss://…`, `unix:/path`: the
/// address, the user and the database. A password in it is refused (it
/// would be in the file every manager's operators read; `password_file`).
fn parse_url(url: &str) -> Result<(RedisAddress, Option<String>, Option<u32>), String> {
    if url.starts_with("unix:") {
        return Ok((RedisAddress::parse(url)?, None, None));
    }
    let (scheme, rest) = url
        .split_once("://")
        .ok_or("redis://host:port/db, rediss://… or unix:/path")?;
    let (authority, database) = match rest.split_once('/') {
        Some((a, "")) => (a, None),
        Some((a, db)) => (
            a,
            Some(
                db.parse::<u32>()
                    .map_err(|_| format!("{db:?} is not a database number"))?,
            ),
        ),
        None => (rest, None),
    };
    let (user, hostport) = match authority.rsplit_once('@') {
        Some((user, _)) if user.contains(':') => {
            return Err("a password in the address is refused: use password_file".into())
        }
        Some((user, hostport)) => (Some(user.to_string()).filter(|u| !u.is_empty()), hostport),
        None => (None, authority),
    };
    let address = RedisAddress::parse(&format!("{scheme}://{hostport}"))?;
    Ok((address, user, database))
}

/// This host's name, for `manager_name`'s default.
fn host_name() -> Result<String, String> {
    let mut buf = [0u8; 256];
    // SAFETY: buf is writable for its length; gethostname NUL-terminates
    // what fits.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return Err("[ledger] manager_name: this host has no name; give one".into());
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name = String::from_utf8_lossy(&buf[..end]);
    // The short name: what the managers tell each other apart by.
    Ok(name.split('.').next().unwrap_or_default().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> Result<SharedLedger, String> {
        toml::from_str::<FileLedger>(text)
            .map_err(|e| e.to_string())?
            .check()
    }

    #[test]
    fn a_url_with_user_and_database_or_sentinels() {
        let l = check(
            "redis = \"rediss://kick@ledger.example.net:6380/2\"\n\
             password_file = \"/etc/p\"\nkey_file = \"/etc/k\"\nmanager_name = \"mgr1\"\n",
        )
        .unwrap();
        assert_eq!(
            l.address,
            Some(RedisAddress::Tls {
                host: "ledger.example.net".into(),
                port: 6380
            })
        );
        assert_eq!((l.username.as_deref(), l.database), (Some("kick"), 2));
        assert_eq!((l.replicas, l.manager.as_str()), (0, "mgr1"));
        let l = check(
            "sentinels = [\"10.0.0.1:26379\", \"10.0.0.2\"]\nmaster_name = \"kick-ledger\"\n\
             key_file = \"/etc/k\"\n",
        )
        .unwrap();
        assert_eq!(l.sentinels[1], ("10.0.0.2".to_string(), 6379));
        assert_eq!(l.replicas, 1, "a failover must not forget a kick run");
        assert!(!l.manager.is_empty());
    }

    /// The `[ledger]` debian/conf/kick.toml shows (commented) loads as
    /// written, once uncommented.
    #[test]
    fn the_shipped_example_loads() {
        let shipped = include_str!("../../debian/conf/kick.toml");
        let example = &shipped[shipped.find("# [ledger]\n").unwrap()..];
        let section: String = example
            .lines()
            .skip(1)
            .take_while(|l| l.starts_with("# "))
            .map(|l| format!("{}\n", &l[2..]))
            .collect();
        let l = check(&section).unwrap();
        assert_eq!(l.username.as_deref(), Some("kick"));
        assert!(matches!(
            l.address,
            Some(RedisAddress::Tls { port: 6380, .. })
        ));
    }

    #[test]
    fn what_is_refused_says_why() {
        for (text, says) in [
            ("key_file = \"/k\"\n", "give redis"),
            (
                "redis = \"redis://u:pw@h/0\"\nkey_file = \"/k\"\n",
                "password",
            ),
            ("redis = \"redis://h/0\"\n", "key_file: needed"),
            ("redis = \"redis://h/0\"\nkey_file = \"k\"\n", "absolute"),
            (
                "redis = \"redis://h/x\"\nkey_file = \"/k\"\n",
                "not a database",
            ),
            (
                "sentinels = [\"h:1\"]\nkey_file = \"/k\"\n",
                "master_name: needed",
            ),
            (
                "redis = \"redis://h\"\nsentinels = [\"h:1\"]\nkey_file = \"/k\"\n",
                "give one",
            ),
            (
                "redis = \"redis://h\"\nkey_file = \"/k\"\ntimeout = 5000\n",
                "10 to 900",
            ),
            (
                "redis = \"redis://h\"\nkey_file = \"/k\"\nmanager_name = \"a b\"\n",
                "manager_name",
            ),
            (
                "redis = \"redis://h\"\nkey_file = \"/k\"\nprefix = \"\"\n",
                "prefix",
            ),
            (
                "redis = \"redis://h\"\nkey_file = \"/k\"\ntls_ca_file = \"/ca\"\n",
                "only with rediss://",
            ),
        ] {
            let e = check(text).err().unwrap_or_else(|| panic!("{text} loaded"));
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
