//! The doctor's checks, in the order a problem upstream hides the ones
//! below it: snmpd, its AgentX socket, its view of our subtree and its
//! trap sinks; then each Redis instance; then Puppet's files.

use super::access::{may, User, Want};
use super::snmpd_conf::{CommunityView, SnmpdConf};
use super::Finding;
use crate::agentx::address::AgentxAddress;
use crate::cli::DoctorArgs;
use crate::config::{Config, RedisInstance};
use crate::oid::Oid;
use crate::puppet::trust::{Trust, Untrusted};
use crate::redis::connection::{self, describe, ConnectError, ReplyBudget};
use crate::redis::info::Info;
use crate::secret;
use std::path::Path;
use std::time::Duration;

/// Where the notification and access examples are, in the package.
const ACCESS_EXAMPLE: &str = "/usr/share/doc/redis-snmp/examples/snmpd-access.conf";

/// The user the package runs the agent as.
const PACKAGE_USER: &str = "redis-snmp";

/// Every check, in order.
pub fn run(config: &Config, args: &DoctorArgs) -> Vec<Finding> {
    let mut findings = Vec::new();
    let user = agent_user(args, &mut findings);
    for warning in &config.warnings {
        findings.push(Finding::problem("configuration", warning, warning));
    }
    findings.push(snmpd_process());
    match SnmpdConf::read(&args.snmpd_conf) {
        Ok(conf) => {
            findings.push(Finding::ok(
                "snmpd.conf",
                format!(
                    "read {} file(s) from {}",
                    conf.files.len(),
                    args.snmpd_conf.display()
                ),
            ));
            for (file, why) in &conf.unread {
                findings.push(Finding::problem(
                    "snmpd.conf",
                    format!("{} is named but not read: {why}", file.display()),
                    "make it readable, or remove the line that names it",
                ));
            }
            findings.push(agentx_master(&conf));
            findings.push(agentx_socket(&config.agentx, &user));
            findings.push(view(&conf, config.layout.root()));
            findings.push(registrations(
                &conf,
                &config.layout.subtrees(config.puppet.is_some()),
            ));
            findings.push(trap_sinks(&conf));
        }
        Err(e) => {
            findings.push(Finding::problem(
                "snmpd.conf",
                format!("cannot read it: {e}"),
                "give its path with --snmpd-conf, or install snmpd (apt install snmpd)",
            ));
            findings.push(agentx_socket(&config.agentx, &user));
        }
    }
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => {
            if config.discovery.local {
                findings.extend(discovery(&crate::discovery::discover(
                    &config.discovery.addresses,
                )));
            }
            for instance in &config.instances {
                findings.extend(instance_files(instance, &user));
                runtime.block_on(redis_instance(instance, &mut findings));
            }
        }
        Err(e) => findings.push(Finding::problem(
            "redis",
            format!("cannot start the runtime: {e}"),
            "(an internal error; please report it)",
        )),
    }
    match &config.puppet {
        Some(paths) => {
            for (what, path) in [("summary", &paths.summary), ("report", &paths.report)] {
                findings.push(puppet_file(what, path, paths, &user));
            }
            findings.push(match &config.puppet_events {
                Some(events) => events_log(
                    &events.path,
                    &Trust::with_owner(events.owner.clone()),
                    &user,
                ),
                None => {
                    Finding::skipped("puppet events log", "off (events_log = false in [puppet])")
                }
            });
        }
        None => findings.push(Finding::skipped(
            "puppet",
            "not watched (no [puppet] section, no --puppet)",
        )),
    }
    findings
}

/// What `[discovery] local` finds on this host (the instances checked
/// below include those of them the configuration does not already poll),
/// and, apart, what it left out: other users' server processes (listed,
/// never connected to) and sockets it would not take, with why.
fn discovery(found: &crate::discovery::Discovery) -> Vec<Finding> {
    let servers: Vec<String> = found
        .found
        .iter()
        .map(|f| format!("{} at {} ({})", f.name, f.address, f.how))
        .collect();
    let mut findings = vec![if !found.unreadable.is_empty() {
        Finding::problem(
            "discovery",
            format!(
                "found {}; cannot read the sockets of server process(es) {:?}",
                if servers.is_empty() {
                    "nothing".to_string()
                } else {
                    servers.join(", ")
                },
                found.unreadable
            ),
            "their TCP ports listening on loopback as user redis or valkey are found anyway; \
             for their unix sockets, name them in a [[redis]] entry",
        )
    } else if servers.is_empty() {
        Finding::problem(
            "discovery",
            "found no redis-server or valkey-server listening on this host",
            "start one, or name the servers to poll in [[redis]] entries",
        )
    } else {
        Finding::ok("discovery", format!("found {}", servers.join(", ")))
    }];
    findings.extend(
        found
            .refusals()
            .into_iter()
            .map(|note| Finding::skipped("discovery", note)),
    );
    findings
}

/// `--user`, else the package's user where it exists, else whoever runs
/// the doctor.
fn agent_user(args: &DoctorArgs, findings: &mut Vec<Finding>) -> User {
    if let Some(name) = &args.user {
        return match User::lookup(name) {
            Some(user) => user,
            None => {
                findings.push(Finding::problem(
                    "agent user",
                    format!("no user {name} on this host"),
                    "give the user the agent runs as with --user",
                ));
                User::current()
            }
        };
    }
    User::lookup(PACKAGE_USER).unwrap_or_else(User::current)
}

fn snmpd_process() -> Finding {
    let running = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .find(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|comm| comm.trim() == "snmpd")
        });
    match running {
        Some(pid) => Finding::ok("snmpd", format!("running (pid {pid})")),
        None => Finding::problem(
            "snmpd",
            "no snmpd process runs",
            "systemctl enable --now snmpd (apt install snmpd if it is missing)",
        ),
    }
}

fn agentx_master(conf: &SnmpdConf) -> Finding {
    if conf.master_agentx {
        Finding::ok("agentx master", "snmpd.conf says master agentx")
    } else {
        Finding::problem(
            "agentx master",
            "snmpd.conf does not turn the AgentX master on",
            "add \"master agentx\" to snmpd.conf and restart snmpd",
        )
    }
}

fn agentx_socket(address: &AgentxAddress, user: &User) -> Finding {
    const CHECK: &str = "agentx socket";
    let path = match address {
        AgentxAddress::Tcp(host, port) => {
            let reached = std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), *port))
                .ok()
                .and_then(|mut addrs| addrs.next())
                .map(|a| std::net::TcpStream::connect_timeout(&a, Duration::from_secs(2)));
            return match reached {
                Some(Ok(_)) => Finding::ok(CHECK, format!("{address} accepts connections")),
                Some(Err(e)) => Finding::problem(
                    CHECK,
                    format!("cannot connect to {address}: {e}"),
                    format!("agentXSocket {address} in snmpd.conf, or agentx_socket in the agent's configuration, must name the same place"),
                ),
                None => Finding::problem(
                    CHECK,
                    format!("{host} resolves to no address"),
                    "correct agentx_socket",
                ),
            };
        }
        AgentxAddress::Unix(path) => path,
    };
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(_) => {
            return Finding::problem(
                CHECK,
                format!("no socket at {}", path.display()),
                format!(
                    "snmpd is not an AgentX master there: \"master agentx\" and \"agentXSocket {}\" in snmpd.conf, then restart snmpd",
                    path.display()
                ),
            )
        }
    };
    if !std::os::unix::fs::FileTypeExt::is_socket(&meta.file_type()) {
        return Finding::problem(
            CHECK,
            format!("{} is not a socket", path.display()),
            "remove it and restart snmpd",
        );
    }
    if let Err(e) = std::os::unix::net::UnixStream::connect(path) {
        return Finding::problem(
            CHECK,
            format!("nothing answers at {}: {e}", path.display()),
            "restart snmpd (a stale socket is replaced)",
        );
    }
    match may(user, path, Want::Write) {
        Ok(()) => Finding::ok(
            CHECK,
            format!("{} answers, and {} may connect", path.display(), user.name),
        ),
        Err(why) => {
            let dir = path.parent().unwrap_or(Path::new("/"));
            Finding::problem(
                CHECK,
                why,
                format!(
                    "\"agentXPerms 0660 0755 -1 {}\" in snmpd.conf, restart snmpd, and chmod 0755 {} (snmpd sets a directory's mode only when it creates it)",
                    user.name,
                    dir.display()
                ),
            )
        }
    }
}

/// Whether a community this host may use sees our subtree, by the
/// configuration and then by asking snmpd.
fn view(conf: &SnmpdConf, root: &Oid) -> Finding {
    const CHECK: &str = "snmpd view";
    let add_view = format!(
        "view redisonly included {root} and rocommunity public localhost -V redisonly in snmpd.conf (or add \"view VIEW included {root}\" to the view your community uses), then restart snmpd; {ACCESS_EXAMPLE} has the lines"
    );
    let locals: Vec<_> = conf.local_communities().collect();
    if locals.is_empty() {
        return Finding::problem(
            CHECK,
            "no community this host may use: the doctor cannot ask snmpd",
            add_view,
        );
    }
    let seeing = locals
        .iter()
        .find(|c| conf.community_sees(c, root) != Some(false));
    let Some(community) = seeing else {
        let mut views: Vec<String> = locals
            .iter()
            .filter_map(|c| match &c.access {
                CommunityView::Named(v) => Some(v.clone()),
                _ => None,
            })
            .collect();
        views.dedup();
        let fix = match views.first() {
            Some(v) => format!("add \"view {v} included {root}\" to snmpd.conf and restart snmpd"),
            None => add_view,
        };
        return Finding::problem(
            CHECK,
            format!(
                "no community this host may use sees {root} (views: {})",
                views.join(", ")
            ),
            fix,
        );
    };
    let (host, port) = conf.udp_address();
    match first_below(&host, port, &community.name, root) {
        Ok(Some(oid)) => Finding::ok(
            CHECK,
            format!("snmpd on udp {host}:{port} serves {root} (first object {oid})"),
        ),
        Ok(None) => Finding::problem(
            CHECK,
            format!("snmpd on udp {host}:{port} answers, but serves nothing under {root}"),
            "the agent is not registered: systemctl status redis-snmp (its log says why), and the agentx socket check above",
        ),
        Err(e) => Finding::problem(
            CHECK,
            format!("snmpd does not answer on udp {host}:{port}: {e}"),
            "agentAddress in snmpd.conf must include udp:127.0.0.1:161 (or the address the doctor should ask)",
        ),
    }
}

/// The first object snmpd serves at or below `root`, asked with GETNEXT.
fn first_below(host: &str, port: u16, community: &str, root: &Oid) -> Result<Option<Oid>, String> {
    let next = super::snmp_client::get_next(host, port, community, root, Duration::from_secs(2))?;
    Ok(next.filter(|oid| oid.starts_with(root)))
}

/// NET-SNMP-AGENT-MIB::nsModuleName: the column of snmpd's nsModuleTable
/// that names the holder of each registration, in rows indexed by context
/// (a length-prefixed string), registration point (a length-prefixed OID)
/// and priority.
const NS_MODULE_NAME: [u32; 12] = [1, 3, 6, 1, 4, 1, 8072, 1, 2, 1, 1, 4];
/// The priority this agent registers with (AgentX's default).
const OUR_PRIORITY: u32 = 127;
/// Bounds of the walk of nsModuleTable: snmpd of Debian 12 has about 400
/// rows.
const MAX_MODULE_ROWS: usize = 20_000;
const MODULE_WALK_TIME: Duration = Duration::from_secs(15);

/// Whether another subagent holds a registration inside our subtrees: snmpd
/// gives a request to the most specific registration (or, at the same
/// point, the higher priority), so such a subagent answers there in this
/// agent's place, and nothing else tells. The Perl agent of the old
/// package, left running, holds .1.3.6.1.4.1.20267.400.1, the 17 legacy
/// objects. Read from snmpd's nsModuleTable, which lists every
/// registration.
fn registrations(conf: &SnmpdConf, subtrees: &[Oid]) -> Finding {
    const CHECK: &str = "registrations";
    let ours = subtrees
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let column = Oid::new(NS_MODULE_NAME.to_vec()).expect("a short OID");
    let Some(community) = conf
        .local_communities()
        .find(|c| conf.community_sees(c, &column) != Some(false))
    else {
        return Finding::skipped(
            CHECK,
            format!(
                "not checked: no community this host may use sees snmpd's nsModuleTable                  ({column}, NET-SNMP-AGENT-MIB), which would show another subagent                  registered inside {ours}; add \"view VIEW included {column}\" for the                  community's view to have it checked"
            ),
        );
    };
    let (host, port) = conf.udp_address();
    let default_context = column.child(&[0]).expect("a short OID");
    let started = std::time::Instant::now();
    let mut rows = Vec::new();
    let mut at = default_context.clone();
    while rows.len() < MAX_MODULE_ROWS && started.elapsed() < MODULE_WALK_TIME {
        match super::snmp_client::get_next_value(
            &host,
            port,
            &community.name,
            &at,
            Duration::from_secs(2),
        ) {
            Ok(Some((oid, name))) if oid.starts_with(&default_context) && oid > at => {
                at = oid.clone();
                rows.push((oid, name));
            }
            Ok(_) => break,
            // The view check above says why snmpd does not answer.
            Err(e) => {
                return Finding::skipped(
                    CHECK,
                    format!("not checked: snmpd on udp {host}:{port}: {e}"),
                )
            }
        }
    }
    if rows.is_empty() {
        return Finding::skipped(
            CHECK,
            format!(
                "not checked: snmpd on udp {host}:{port} shows no nsModuleTable ({column}) to \
                 the community {}: add \"view VIEW included {column}\" for its view to have \
                 it checked",
                community.name
            ),
        );
    }
    let foreign = registered_inside(&default_context, &rows, subtrees);
    if foreign.is_empty() {
        return Finding::ok(
            CHECK,
            format!(
                "no other subagent registered inside {ours} ({} registrations of snmpd read)",
                rows.len()
            ),
        );
    }
    let named: Vec<String> = foreign
        .iter()
        .take(5)
        .map(|(point, priority, name)| {
            let name: String = name.chars().take(120).collect();
            format!("{point} (priority {priority}) by \"{name}\"")
        })
        .collect();
    Finding::problem(
        CHECK,
        format!(
            "{} registration(s) of another subagent inside {ours}, to which snmpd gives the \
             requests there instead of this agent: {}",
            foreign.len(),
            named.join("; ")
        ),
        "stop that subagent: after an upgrade from the Perl redis-snmp, the process running \
         /usr/sbin/redis-snmp with /usr/bin/perl (ps -ww -C perl -o pid,args); its \
         registration ends with it",
    )
}

/// The rows of nsModuleName (`rows`, under `prefix`: the column and the
/// default context) whose registration point lies strictly inside one of
/// `subtrees`, or is one of them at another priority than ours: the
/// point, the priority and the holder's name.
fn registered_inside(
    prefix: &Oid,
    rows: &[(Oid, Vec<u8>)],
    subtrees: &[Oid],
) -> Vec<(Oid, u32, String)> {
    rows.iter()
        .filter_map(|(oid, name)| {
            let index = oid.as_slice().get(prefix.len()..)?;
            let (&len, rest) = index.split_first()?;
            let len = usize::try_from(len).ok()?;
            let (point, priority) = (rest.get(..len)?, rest.get(len..)?);
            let [priority] = *priority else {
                return None;
            };
            let point = Oid::new(point.to_vec()).ok()?;
            subtrees
                .iter()
                .any(|s| {
                    point.starts_with(s) && (point.len() > s.len() || priority != OUR_PRIORITY)
                })
                .then(|| (point, priority, String::from_utf8_lossy(name).into_owned()))
        })
        .collect()
}

fn trap_sinks(conf: &SnmpdConf) -> Finding {
    const CHECK: &str = "trap sinks";
    match conf.trap_sinks.len() {
        0 => Finding::problem(
            CHECK,
            "snmpd.conf has no trapsink, trap2sink, informsink or trapsess line: notifications go nowhere",
            format!("add a trapsess line for your manager ({ACCESS_EXAMPLE} has one, SNMPv3 with privacy)"),
        ),
        n => Finding::ok(CHECK, format!("{n} line(s) send notifications")),
    }
}

/// The commands a poll sends besides INFO, the server roles that get them,
/// and the ACL grant each needs (docs/configuration.md's least-privilege user).
struct Query {
    args: &'static [&'static str],
    grant: &'static str,
    role: Role,
}

#[derive(PartialEq)]
enum Role {
    Any,
    DataNode,
    ClusterNode,
    Sentinel,
    /// A data node whose INFO says Valkey 8.1 or later (COMMANDLOG).
    CommandLogNode,
}

const QUERIES: &[Query] = &[
    Query {
        args: &["PING"],
        grant: "+ping",
        role: Role::Any,
    },
    Query {
        args: &["CLUSTER", "INFO"],
        grant: "+cluster|info",
        role: Role::ClusterNode,
    },
    Query {
        args: &["SLOWLOG", "LEN"],
        grant: "+slowlog|len",
        role: Role::DataNode,
    },
    Query {
        args: &["SLOWLOG", "GET", "1"],
        grant: "+slowlog|get",
        role: Role::DataNode,
    },
    Query {
        args: &["LATENCY", "LATEST"],
        grant: "+latency|latest",
        role: Role::DataNode,
    },
    Query {
        args: &["COMMANDLOG", "LEN", "large-request"],
        grant: "+commandlog|len",
        role: Role::CommandLogNode,
    },
    Query {
        args: &["SENTINEL", "MASTERS"],
        grant: "+sentinel|masters",
        role: Role::Sentinel,
    },
    Query {
        args: &[
            "CLIENT",
            "SETNAME",
            crate::redis::clients::AGENT_CLIENT_NAME,
        ],
        grant: "+client|setname",
        role: Role::Any,
    },
    Query {
        args: &["CLIENT", "LIST"],
        grant: "+client|list",
        role: Role::Any,
    },
    Query {
        args: &["ACL", "LOG", "1"],
        grant: "+acl|log",
        role: Role::Any,
    },
];

/// A Redis error told apart: what went wrong in our words, and what the
/// server said when the error carries its words (an error reply, or a
/// reply that did not read, whose description may quote it). A server
/// of any user may answer "please run: curl … | sudo sh": its words are
/// shown as its own, never as a finding's reason or fix.
fn told_apart(e: &redis::RedisError) -> (String, Option<String>) {
    if e.kind() == redis::ErrorKind::AuthenticationFailed || e.is_io_error() || e.is_timeout() {
        // The crate's words, or the system's (the reply cap's included).
        (describe(e), None)
    } else if e.code() == Some("NOPERM") {
        (
            "the user may not run it (NOPERM)".to_string(),
            Some(describe(e)),
        )
    } else if e.code().is_some() {
        (
            "the server answers with an error".to_string(),
            Some(describe(e)),
        )
    } else {
        ("its reply does not read".to_string(), Some(describe(e)))
    }
}

async fn redis_instance(instance: &RedisInstance, findings: &mut Vec<Finding>) {
    let check = format!("redis {}", instance.name);
    let user = instance.username.as_deref().unwrap_or("default");
    let redact = |text: String| secret::redact(&text, instance.password.as_ref());
    let said = |text: Option<String>| text.map(redact);
    let budget = ReplyBudget::new(instance.max_reply_bytes);
    let mut connection = match connection::connect(instance, &budget).await {
        Ok(c) => c,
        Err(ConnectError::Redis(e)) if e.kind() == redis::ErrorKind::AuthenticationFailed => {
            findings.push(Finding::problem(
                check,
                format!("{}: {}", instance.address, describe(&e)),
                format!("the first line of password_file must be the password of user {user} (username sets the user; ACL SETUSER {user} on >PASSWORD on the server)"),
            ));
            return;
        }
        Err(ConnectError::Redis(e)) => {
            let (what, server_said) = told_apart(&e);
            findings.push(
                Finding::problem(
                    check,
                    format!("{}: setting up the connection failed: {}", instance.address, redact(what)),
                    format!("is what listens at {} the Redis or Valkey server meant? (address in the configuration; bind, port, unixsocket in redis.conf)", instance.address),
                )
                .with_server_said(said(server_said)),
            );
            return;
        }
        Err(ConnectError::Other(text)) => {
            findings.push(Finding::problem(
                check,
                redact(text),
                format!("is Redis running, and listening at {}? (address in the configuration; bind, port, unixsocket in redis.conf)", instance.address),
            ));
            return;
        }
    };
    budget.renew();
    let info: redis::RedisResult<String> = redis::cmd("INFO").query_async(&mut connection).await;
    let info = match info {
        Ok(info) => info,
        Err(e) => {
            let fix = if e.code() == Some("NOPERM") {
                format!("ACL SETUSER {user} +info (docs/configuration.md: the least-privilege Redis user)")
            } else {
                format!(
                    "the agent reads everything it serves from INFO: check that {} is the Redis \
                     or Valkey server meant, and that user {user} may run INFO",
                    instance.address
                )
            };
            let (what, server_said) = told_apart(&e);
            findings.push(
                Finding::problem(check, format!("INFO is refused: {}", redact(what)), fix)
                    .with_server_said(said(server_said)),
            );
            return;
        }
    };
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim)
    };
    let sentinel =
        field("redis_mode") == Some("sentinel") || field("server_mode") == Some("sentinel");
    let cluster = field("cluster_enabled") == Some("1");
    let mut refused = Vec::new();
    for query in QUERIES {
        let applies = match query.role {
            Role::Any => true,
            Role::DataNode => !sentinel,
            Role::ClusterNode => cluster,
            Role::Sentinel => sentinel,
            Role::CommandLogNode => !sentinel && Info::parse(&info).has_commandlog(),
        };
        if !applies
            || (query.grant == "+slowlog|get" && !instance.slowlog_entries)
            || (query.grant == "+client|list" && !instance.client_list)
            || (query.grant == "+acl|log" && !instance.acl_log)
        {
            continue;
        }
        budget.renew();
        let reply: redis::RedisResult<redis::Value> = redis::cmd(query.args[0])
            .arg(&query.args[1..])
            .query_async(&mut connection)
            .await;
        if let Err(e) = reply {
            if e.code().is_some() {
                refused.push((query, told_apart(&e)));
            }
        }
    }
    if refused.is_empty() {
        findings.push(Finding::ok(
            check,
            format!(
                "{} answers; INFO and every command the agent sends are allowed",
                instance.address
            ),
        ));
        return;
    }
    for (query, (what, server_said)) in refused {
        let command = query.args.join(" ");
        let mut fix = format!("ACL SETUSER {user} {}", query.grant);
        if query.grant == "+slowlog|get" {
            fix.push_str(" (it shows command arguments; or set slowlog_entries = false)");
        }
        findings.push(
            Finding::problem(
                check.clone(),
                format!(
                    "{command} is refused ({}): the objects it feeds are absent",
                    redact(what)
                ),
                fix,
            )
            .with_server_said(said(server_said)),
        );
    }
}

/// The files the agent reads for `instance` (its password, TLS files,
/// the aliases' secret): readable by the agent's user, as the kernel
/// says, or the agent fails at start-up or at every connection; the
/// doctor, run as root, reads them whatever their mode.
fn instance_files(instance: &RedisInstance, user: &User) -> Vec<Finding> {
    let check = format!("redis {} files", instance.name);
    let named = [
        ("password_file", &instance.password_file),
        ("tls_ca_file", &instance.tls.ca_file),
        ("tls_cert_file", &instance.tls.cert_file),
        ("tls_key_file", &instance.tls.key_file),
        (
            "key_alias_secret_file",
            &instance.key_checks.alias_secret_file,
        ),
    ];
    let group = crate::process::group_name(user.gid).unwrap_or_else(|| user.gid.to_string());
    let mut readable = Vec::new();
    let mut findings = Vec::new();
    for (setting, path) in named {
        let Some(path) = path else { continue };
        let shown = crate::text::printable(&path.to_string_lossy());
        match std::fs::symlink_metadata(path) {
            Err(e) => findings.push(Finding::problem(
                &check,
                format!("{setting} {shown}: {e}"),
                format!("put the file there, or name the right one in {setting}"),
            )),
            Ok(meta) if !meta.file_type().is_file() => findings.push(Finding::problem(
                &check,
                format!("{setting} {shown} is not a regular file"),
                "the agent reads no link, FIFO or device: name the file itself",
            )),
            Ok(_) => match may(user, path, Want::Read) {
                Ok(()) => readable.push(setting),
                Err(why) => findings.push(Finding::problem(
                    &check,
                    format!("{setting}: {}", crate::text::printable(&why)),
                    format!(
                        "as root: chgrp {group} {shown} && chmod 0640 {shown} \
                         (readable by root and the agent's group only)"
                    ),
                )),
            },
        }
    }
    if findings.is_empty() && !readable.is_empty() {
        findings.push(Finding::ok(
            check,
            format!("{} readable by {}", readable.join(", "), user.name),
        ));
    }
    findings
}

fn puppet_file(
    what: &str,
    path: &Path,
    paths: &crate::config::PuppetPaths,
    user: &User,
) -> Finding {
    let check = format!("puppet {what}");
    match std::fs::symlink_metadata(path) {
        Err(_) => Finding::problem(
            check,
            format!("{} does not exist", path.display()),
            "Puppet writes it at the end of a run: run puppet agent --test once; if Puppet writes it elsewhere, puppet config print lastrunfile lastrunreport gives the paths for [puppet] summary and report",
        ),
        Ok(meta) if !meta.file_type().is_file() => Finding::problem(
            check,
            format!("{} is not a regular file (the agent reads no link, FIFO or device)", path.display()),
            "remove it; Puppet writes a regular file there at its next run",
        ),
        Ok(_) => match may(user, path, Want::Read) {
            Ok(()) => Finding::ok(check, format!("{} is readable by {}", path.display(), user.name)),
            Err(why) => Finding::problem(
                check,
                why,
                crate::puppet::state::permission_advice(paths, path),
            ),
        },
    }
}

/// Puppet's JSON-lines log: there, a regular file, written by no one but
/// root (or `events_log_owner`), and readable by the agent's user.
fn events_log(path: &Path, trust: &Trust, user: &User) -> Finding {
    const CHECK: &str = "puppet events log";
    if let Err(e) = trust.check(path) {
        let fix = match &e {
            Untrusted::Owner { path: p, owner } => format!(
                "whoever may write the log or a directory above it could forge resource events: \
                 keep it where only root may write (as root: install -d -o root -g {g} -m 2750 \
                 /var/log/puppet-events, and --logdest syslog,/var/log/puppet-events/events.jsonl \
                 for Puppet; see README.Debian), or, to trust {owner} as the owner of {}, name it \
                 in events_log_owner of [puppet]",
                p.display(),
                g = crate::process::group_name(user.gid).unwrap_or_else(|| user.gid.to_string()),
            ),
            Untrusted::GroupWritable { path: p, .. } | Untrusted::OtherWritable { path: p, .. } => {
                format!(
                    "as root: chmod go-w {} (whoever may write it could forge resource events)",
                    p.display()
                )
            }
        };
        return Finding::problem(
            CHECK,
            format!("{} is not followed: {e}", path.display()),
            fix,
        );
    }
    match std::fs::symlink_metadata(path) {
        Err(_) => Finding::problem(
            CHECK,
            format!(
                "{} does not exist: no resource events while Puppet runs",
                path.display()
            ),
            format!(
                "start Puppet with PUPPET_EXTRA_OPTS=--logdest syslog,{} in /etc/default/puppet and restart it \
                 (see README.Debian), or set events_log = false in [puppet]",
                path.display()
            ),
        ),
        Ok(meta) if !meta.file_type().is_file() => Finding::problem(
            CHECK,
            format!(
                "{} is not a regular file (the agent follows no link, FIFO or device)",
                path.display()
            ),
            "name the file Puppet writes with --logdest in events_log of [puppet]",
        ),
        Ok(_) => match may(user, path, Want::Read) {
            Ok(()) => Finding::ok(
                CHECK,
                format!("{} is readable by {}", path.display(), user.name),
            ),
            Err(why) => Finding::problem(
                CHECK,
                why,
                format!(
                    "as root: setfacl -m u:{u}:rx {dir}; setfacl -d -m u:{u}:r {dir}; setfacl -m u:{u}:r {file} \
                     (see README.Debian)",
                    u = user.name,
                    dir = path.parent().unwrap_or(Path::new("/")).display(),
                    file = path.display()
                ),
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/configuration.md's least-privilege user grants exactly what the doctor checks
    /// (and INFO), with +sentinel|masters named for sentinels and
    /// +commandlog|len for Valkey 8.1 and later.
    #[test]
    fn the_documented_acl_grants_what_the_doctor_checks() {
        let readme = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/docs/configuration.md"
        ))
        .unwrap();
        let line = readme
            .lines()
            .find(|l| l.starts_with("ACL SETUSER snmp "))
            .unwrap();
        let mut documented: Vec<&str> = line
            .split_whitespace()
            .filter(|w| w.starts_with('+') && *w != "+info")
            .collect();
        assert!(readme.contains("(add `+sentinel|masters` on a sentinel, and `+commandlog|len` on Valkey\n8.1 and later"));
        documented.push("+sentinel|masters");
        documented.push("+commandlog|len");
        documented.sort();
        let mut checked: Vec<&str> = QUERIES.iter().map(|q| q.grant).collect();
        checked.sort();
        assert_eq!(documented, checked);
    }

    /// Rows of nsModuleName as net-snmp 5.9.3's snmpd lists them
    /// (`snmpwalk -v2c -On .1.3.6.1.4.1.8072.1.2.1.1.4`), with the Perl
    /// agent of the old package (a NetSNMP::agent subagent, default -o)
    /// registered beside this one: only its .400.1 is named.
    #[test]
    fn a_registration_inside_our_tree_is_named_and_snmpds_own_are_not() {
        let captured = [
            (
                ".1.3.6.1.4.1.8072.1.2.1.1.4.0.9.1.3.6.1.4.1.2021.101.1.127",
                "ucd-snmp/errormib",
            ),
            (
                ".1.3.6.1.4.1.8072.1.2.1.1.4.0.9.1.3.6.1.4.1.20267.400.1.127",
                "AgentX subagent 5, session 0x56537d004a10, subsession 0x56537d0053c0",
            ),
            (
                ".1.3.6.1.4.1.8072.1.2.1.1.4.0.9.1.3.6.1.6.3.11.2.1.127",
                "snmpMPDStats",
            ),
            (
                ".1.3.6.1.4.1.8072.1.2.1.1.4.0.12.1.3.6.1.6.3.16.1.5.2.1.6.127",
                "mibII/vacm:view",
            ),
        ];
        let ours_row = (
            ".1.3.6.1.4.1.8072.1.2.1.1.4.0.8.1.3.6.1.4.1.20267.400.127",
            "AgentX subagent 6, session 0x56537d0071a0, subsession 0x56537d007a40",
        );
        let rows: Vec<(Oid, Vec<u8>)> = captured
            .iter()
            .chain([&ours_row])
            .map(|(oid, name)| (oid.parse().unwrap(), name.as_bytes().to_vec()))
            .collect();
        let prefix = Oid::new(NS_MODULE_NAME.to_vec())
            .unwrap()
            .child(&[0])
            .unwrap();
        let subtrees = crate::metrics::Layout::default_layout().subtrees(true);
        let found = registered_inside(&prefix, &rows, &subtrees);
        assert_eq!(
            found,
            [(
                ".1.3.6.1.4.1.20267.400.1".parse::<Oid>().unwrap(),
                127,
                captured[1].1.to_string()
            )]
        );
        // Without it, nothing; at our own point but another priority, it is
        // named; a row cut short is skipped.
        assert!(registered_inside(&prefix, &rows[2..], &subtrees).is_empty());
        let higher: Vec<(Oid, Vec<u8>)> = vec![(
            ".1.3.6.1.4.1.8072.1.2.1.1.4.0.8.1.3.6.1.4.1.20267.400.1"
                .parse()
                .unwrap(),
            b"AgentX subagent 9".to_vec(),
        )];
        assert_eq!(registered_inside(&prefix, &higher, &subtrees).len(), 1);
        let cut: Vec<(Oid, Vec<u8>)> = vec![(
            ".1.3.6.1.4.1.8072.1.2.1.1.4.0.9.1.3.6.1.4.1.20267.400"
                .parse()
                .unwrap(),
            Vec::new(),
        )];
        assert!(registered_inside(&prefix, &cut, &subtrees).is_empty());
    }
}
