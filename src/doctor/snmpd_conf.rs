//! What snmpd's configuration says about the agent's path, read as
//! net-snmp reads it (snmpd.conf(5), net-snmp 5.9):
//! - one directive a line, `#` starts a comment; `includeFile FILE` and
//!   `includeDir DIR` (its files ending in `.conf`) read more files;
//! - `master agentx` turns the AgentX master on; `agentXSocket`,
//!   `agentXPerms` shape its socket;
//! - `agentAddress` lists the transports snmpd listens on (`udp:161`,
//!   `udp:127.0.0.1:161`, …; default UDP port 161 on every address);
//! - `rocommunity`/`rwcommunity COMMUNITY [SOURCE [OID | -V VIEW]]`, and
//!   `com2sec NAME SOURCE COMMUNITY` of the older VACM lines, name
//!   communities; `view NAME included|excluded SUBTREE [MASK]` defines
//!   views, where the most specific subtree that covers an object decides
//!   (RFC 3415, 3.2; masks are not read here);
//! - `trapsink`, `trap2sink`, `informsink`, `trapsess` send notifications.

use crate::oid::Oid;
use std::path::{Path, PathBuf};

/// Files larger than this are not read: no snmpd.conf is.
const MAX_FILE_BYTES: u64 = 1 << 20;
/// How deep includes may nest.
const MAX_DEPTH: usize = 8;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SnmpdConf {
    /// Every file read, in order.
    pub files: Vec<PathBuf>,
    /// Files named but not read, with why.
    pub unread: Vec<(PathBuf, String)>,
    pub master_agentx: bool,
    pub agentx_socket: Option<String>,
    pub agentx_perms: Option<String>,
    pub agent_addresses: Vec<String>,
    pub communities: Vec<Community>,
    pub views: Vec<ViewLine>,
    /// Lines that send notifications.
    pub trap_sinks: Vec<String>,
}

/// A community and what it may see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Community {
    pub name: String,
    /// Who may use it: absent or `default` means anyone.
    pub source: Option<String>,
    pub access: CommunityView,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommunityView {
    /// Every object.
    All,
    /// The subtree given after the source.
    Subtree(Oid),
    /// The view named with `-V`.
    Named(String),
    /// Decided by `group`/`access` lines (com2sec), not read here.
    Vacm,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewLine {
    pub name: String,
    pub included: bool,
    pub subtree: Oid,
}

impl SnmpdConf {
    /// Reads `path` and what it includes.
    pub fn read(path: &Path) -> Result<SnmpdConf, String> {
        let mut conf = SnmpdConf::default();
        let text = read_limited(path)?;
        conf.files.push(path.to_path_buf());
        conf.parse(&text, 0);
        Ok(conf)
    }

    /// Reads the lines of one file's text.
    pub fn parse(&mut self, text: &str, depth: usize) {
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut words = line.split_whitespace();
            let Some(directive) = words.next() else {
                continue;
            };
            let args: Vec<&str> = words.collect();
            match directive {
                "includeFile" => {
                    if let Some(file) = args.first() {
                        self.include(Path::new(file), depth);
                    }
                }
                "includeDir" => {
                    if let Some(dir) = args.first() {
                        self.include_dir(Path::new(dir), depth);
                    }
                }
                "master" => self.master_agentx = args.iter().any(|a| a.contains("agentx")),
                "agentXSocket" => self.agentx_socket = args.first().map(|s| s.to_string()),
                "agentXPerms" => self.agentx_perms = Some(args.join(" ")),
                "agentAddress" => self
                    .agent_addresses
                    .extend(args.iter().flat_map(|a| a.split(',')).map(String::from)),
                "rocommunity" | "rwcommunity" | "rocommunity6" | "rwcommunity6" => {
                    if let Some(c) = community(&args) {
                        self.communities.push(c);
                    }
                }
                "com2sec" | "com2sec6" => {
                    // com2sec [-Cn CONTEXT] SECNAME SOURCE COMMUNITY
                    let args: Vec<&str> = match args.first() {
                        Some(&"-Cn") => args.iter().skip(2).copied().collect(),
                        _ => args,
                    };
                    if let [_, source, name, ..] = args.as_slice() {
                        self.communities.push(Community {
                            name: name.to_string(),
                            source: Some(source.to_string()),
                            access: CommunityView::Vacm,
                        });
                    }
                }
                "view" => {
                    if let [name, kind, subtree, ..] = args.as_slice() {
                        if let Ok(subtree) = subtree.parse::<Oid>() {
                            self.views.push(ViewLine {
                                name: name.to_string(),
                                included: *kind == "included",
                                subtree,
                            });
                        }
                    }
                }
                "trapsink" | "trap2sink" | "informsink" | "trapsess" => {
                    self.trap_sinks.push(line.to_string())
                }
                _ => {}
            }
        }
    }

    fn include(&mut self, path: &Path, depth: usize) {
        if depth >= MAX_DEPTH {
            self.unread
                .push((path.to_path_buf(), "includes nest too deep".into()));
            return;
        }
        match read_limited(path) {
            Ok(text) => {
                self.files.push(path.to_path_buf());
                self.parse(&text, depth + 1);
            }
            Err(e) => self.unread.push((path.to_path_buf(), e)),
        }
    }

    fn include_dir(&mut self, dir: &Path, depth: usize) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "conf"))
            .collect();
        files.sort();
        for file in files {
            self.include(&file, depth);
        }
    }

    /// Whether `view` shows `object`: the most specific of its lines whose
    /// subtree covers `object` decides.
    pub fn view_shows(&self, view: &str, object: &Oid) -> bool {
        self.views
            .iter()
            .filter(|v| v.name == view && object.starts_with(&v.subtree))
            .max_by_key(|v| v.subtree.len())
            .is_some_and(|v| v.included)
    }

    /// Whether `community` may read `object`, as far as these lines tell
    /// (`None` when `group`/`access` lines decide).
    pub fn community_sees(&self, community: &Community, object: &Oid) -> Option<bool> {
        match &community.access {
            CommunityView::All => Some(true),
            CommunityView::Subtree(subtree) => Some(object.starts_with(subtree)),
            CommunityView::Named(view) => Some(self.view_shows(view, object)),
            CommunityView::Vacm => None,
        }
    }

    /// The communities this host may use (source absent, `default`,
    /// `localhost` or a 127.x address or network).
    pub fn local_communities(&self) -> impl Iterator<Item = &Community> {
        self.communities
            .iter()
            .filter(|c| match c.source.as_deref() {
                None | Some("default") | Some("localhost") => true,
                Some(source) => source.starts_with("127."),
            })
    }

    /// Where to ask snmpd over UDP: the first UDP `agentAddress` (a
    /// wildcard address asked on 127.0.0.1), else 127.0.0.1:161.
    pub fn udp_address(&self) -> (String, u16) {
        for transport in &self.agent_addresses {
            let transport = transport.trim();
            let rest = match transport.split_once(':') {
                Some(("udp", rest)) => rest,
                Some(("tcp" | "tcp6" | "udp6" | "unix" | "dtlsudp" | "tlstcp", _)) => continue,
                _ => transport,
            };
            let (host, port) = match rest.rsplit_once(':') {
                Some((host, port)) => (host, port.parse().unwrap_or(161)),
                None => match rest.parse::<u16>() {
                    Ok(port) => ("", port),
                    Err(_) => (rest, 161),
                },
            };
            let host = match host {
                "" | "0.0.0.0" | "localhost" => "127.0.0.1",
                other => other,
            };
            return (host.to_string(), port);
        }
        ("127.0.0.1".to_string(), 161)
    }
}

/// `rocommunity COMMUNITY [SOURCE [OID | -V VIEW [CONTEXT]]]`
fn community(args: &[&str]) -> Option<Community> {
    let name = args.first()?.to_string();
    let source = args.get(1).map(|s| s.to_string());
    let access = match args.get(2..).unwrap_or_default() {
        ["-V", view, ..] => CommunityView::Named(view.to_string()),
        [oid, ..] => match oid.parse::<Oid>() {
            Ok(oid) => CommunityView::Subtree(oid),
            Err(_) => CommunityView::All,
        },
        [] => CommunityView::All,
    };
    Some(Community {
        name,
        source,
        access,
    })
}

fn read_limited(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!("{} is over {MAX_FILE_BYTES} bytes", path.display()));
    }
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oid(s: &str) -> Oid {
        s.parse().unwrap()
    }

    /// Debian 12's stock snmpd.conf, its access part, and the package's
    /// drop-in.
    const DEBIAN: &str = "\
sysLocation    Sitting on the Dock of the Bay
agentaddress  127.0.0.1,[::1]
view   systemonly  included   .1.3.6.1.2.1.1
view   systemonly  included   .1.3.6.1.2.1.25.1
rocommunity  public default -V systemonly
rocommunity6 public default -V systemonly
rouser authPrivUser authpriv -V systemonly
includeDir /nonexistent/snmpd.conf.d
";

    #[test]
    fn debians_stock_view_does_not_show_the_enterprise_subtree() {
        let mut conf = SnmpdConf::default();
        conf.parse(DEBIAN, 0);
        let redis = oid(".1.3.6.1.4.1.20267.400");
        let public = conf.local_communities().next().unwrap().clone();
        assert_eq!(public.name, "public");
        assert_eq!(conf.community_sees(&public, &redis), Some(false));
        conf.parse("view systemonly included .1.3.6.1.4.1.20267.400\n", 0);
        assert_eq!(conf.community_sees(&public, &redis), Some(true));
        // A more specific exclusion wins.
        conf.parse("view systemonly excluded .1.3.6.1.4.1.20267.400.3\n", 0);
        assert!(!conf.view_shows("systemonly", &oid(".1.3.6.1.4.1.20267.400.3.1")));
        assert!(conf.view_shows("systemonly", &oid(".1.3.6.1.4.1.20267.400.1.1")));
        assert!(conf.trap_sinks.is_empty() && !conf.master_agentx);
    }

    #[test]
    fn addresses_masters_sinks_and_includes() {
        let dir = tempfile::tempdir().unwrap();
        let dropins = dir.path().join("snmpd.conf.d");
        std::fs::create_dir(&dropins).unwrap();
        std::fs::write(
            dropins.join("redis-snmp.conf"),
            "master agentx\nagentXPerms 0660 0755 -1 redis-snmp\n",
        )
        .unwrap();
        std::fs::write(dropins.join("ignored.txt"), "master agentx\n").unwrap();
        let main = dir.path().join("snmpd.conf");
        std::fs::write(
            &main,
            format!(
                "agentAddress udp:127.0.0.1:16161,tcp:1161\n\
                 rocommunity secret 10.0.0.0/8\nrocommunity local 127.0.0.1 .1.3.6.1.4.1\n\
                 trap2sink 192.0.2.1 public\ncom2sec -Cn ctx sec localhost mine\n\
                 includeDir {}\n",
                dropins.display()
            ),
        )
        .unwrap();
        let conf = SnmpdConf::read(&main).unwrap();
        assert_eq!(conf.files.len(), 2);
        assert!(conf.master_agentx);
        assert_eq!(
            conf.agentx_perms.as_deref(),
            Some("0660 0755 -1 redis-snmp")
        );
        assert_eq!(conf.udp_address(), ("127.0.0.1".to_string(), 16161));
        assert_eq!(conf.trap_sinks, ["trap2sink 192.0.2.1 public"]);
        let local: Vec<&str> = conf.local_communities().map(|c| c.name.as_str()).collect();
        assert_eq!(local, ["local", "mine"]);
        let redis = oid(".1.3.6.1.4.1.20267.400");
        let local = conf.local_communities().next().unwrap();
        assert_eq!(conf.community_sees(local, &redis), Some(true));
        let mine = conf.local_communities().nth(1).unwrap();
        assert_eq!(conf.community_sees(mine, &redis), None);
        assert_eq!(SnmpdConf::default().udp_address().1, 161);
    }

    #[test]
    fn includes_that_loop_stop() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.conf");
        std::fs::write(&a, format!("includeFile {}\nmaster agentx\n", a.display())).unwrap();
        let conf = SnmpdConf::read(&a).unwrap();
        assert!(conf.master_agentx);
        assert_eq!(conf.files.len(), MAX_DEPTH + 1);
        assert_eq!(conf.unread.len(), 1);
    }
}
