//! `kick.toml`: what `redis-snmp kick` may run, on which hosts, and the
//! limits that stop loops. Read by a program snmptrapd runs as root, so
//! the file must be root's (or the running user's) and writable by nobody
//! else, and every value is bounded.

use super::names::is_host_name;
use super::puppetdb::PuppetDb;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::Read;
use std::net::IpAddr;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where the package puts the file; `-c` names another.
pub const DEFAULT_PATH: &str = "/etc/redis-snmp/kick.toml";
/// Where kicks are recorded; the package makes it, root's, mode 0700.
pub const DEFAULT_STATE_DIR: &str = "/var/lib/redis-snmp/kick";

/// `window`'s default: long enough for a kicked run's own notifications
/// to arrive and be counted as caused by it (they come within a second
/// of its end), short enough that a deferred kick is not held long.
/// Generations, not the window, stop loops.
pub const DEFAULT_WINDOW: u64 = 60;
/// `retry_delay`'s default, seconds.
const DEFAULT_RETRY_DELAY: Duration = Duration::from_secs(30);

/// No configuration is larger; a bigger file is refused, not read.
const MAX_FILE_BYTES: u64 = 1 << 20;
const MAX_ROLES: usize = 1000;
const MAX_HOSTS_PER_ROLE: usize = 1000;
const MAX_ARGS: usize = 64;

/// One argument of `kick_command`: text, or a placeholder that is a whole
/// argument, so that no host or role name is ever spliced into an option
/// or a word a shell would read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    Text(String),
    Host,
    Role,
    /// `{kick}`: the kick's id, for `puppet agent --onetime --job-id
    /// {kick}`, which Puppet writes into the run's report; the kicked
    /// host's `puppetRunFinished` then names the kick exactly.
    Kick,
}

/// A role that kicks the host that asks for it, once its run has ended
/// (`Notify[kick -> again]`): Puppet runs again until a run changes
/// nothing but this notify, or `max_depth` generations.
pub const AGAIN: &str = "again";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Role {
    pub name: String,
    /// The hosts to kick; empty: the inventory's hosts of this role.
    pub hosts: Vec<String>,
    /// Kicks of this role's hosts started within any hour, at most.
    pub budget_per_hour: u32,
    /// Attempts after a kick command that failed (exit code not 0, ssh's
    /// 255 included, or a command that could not start), each after
    /// `retry_delay` and within `budget_per_hour`.
    pub retries: u32,
    pub retry_delay: Duration,
    /// `select`: of the inventory's hosts, those whose facts pass every
    /// expression (`super::select`); empty: no test.
    pub select: Vec<super::select::Expression>,
    /// A PQL query whose answer's certnames are the hosts (`puppetdb`).
    pub query: Option<String>,
    /// `requested_by`: the only hosts that may ask for this role; empty:
    /// any configured host (or of `inventory_from`).
    pub requested_by: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub kick_command: Vec<Arg>,
    /// A host is not kicked again until this long after its kicked run
    /// ended; a notification from a host within it is caused by that kick.
    pub window: Duration,
    /// Kicks caused by kicks: generation 1 is caused by a run nobody
    /// kicked; deeper than this is refused.
    pub max_depth: u32,
    /// A kick command still running this long after it started is ended;
    /// a kicked host that has not reported by then is marked so.
    pub timeout: Duration,
    pub max_parallel: usize,
    pub state_dir: PathBuf,
    pub roles: Vec<Role>,
    /// The `again` role: no hosts of its own (it kicks the sender), the
    /// file's top-level `retries` and `retry_delay`.
    pub again: Role,
    /// Addresses a host's notifications come from, where its name is not
    /// an address itself; names not listed are looked up when needed.
    pub addresses: BTreeMap<String, Vec<IpAddr>>,
    /// Networks whose hosts, configured nowhere else, may enter the
    /// inventory (and ask for kicks) by their address: authenticated by
    /// snmptrapd's SNMPv3 user like every sender.
    pub inventory_from: Vec<Network>,
    /// A host not heard of for this long leaves the inventory.
    pub inventory_expiry: Duration,
    /// `[[on]]` rules, in the file's order.
    pub on: Vec<super::rules::Rule>,
    /// The pseudo-roles `on:LINE` of the `run` rules: their budgets and
    /// retries (super::on).
    on_roles: Vec<Role>,
    /// PuppetDB, for roles that give a `query`.
    pub puppetdb: Option<PuppetDb>,
    /// `[ledger]`: the ledger in a Redis the managers share; `None`: in
    /// `state_dir`.
    pub ledger: Option<super::shared_settings::SharedLedger>,
}

/// An address prefix: `10.0.0.0/8`, `fd00::/64`, or one address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    address: IpAddr,
    prefix: u8,
}

impl Network {
    pub fn parse(text: &str) -> Option<Network> {
        let (address, prefix) = match text.split_once('/') {
            Some((a, p)) => (a.parse::<IpAddr>().ok()?, p.parse::<u8>().ok()?),
            None => {
                let a = text.parse::<IpAddr>().ok()?;
                (a, if a.is_ipv4() { 32 } else { 128 })
            }
        };
        let max = if address.is_ipv4() { 32 } else { 128 };
        (prefix <= max).then_some(Network { address, prefix })
    }

    pub fn contains(&self, address: IpAddr) -> bool {
        let bits = |a: IpAddr| -> (u128, u8) {
            match a.to_canonical() {
                IpAddr::V4(v4) => (u128::from(u32::from(v4)), 32),
                IpAddr::V6(v6) => (u128::from(v6), 128),
            }
        };
        let ((net, width), (addr, other)) = (bits(self.address), bits(address));
        if width != other {
            return false;
        }
        let shift = u32::from(width - self.prefix.min(width));
        let mask = if shift >= 128 {
            0
        } else {
            (!0u128 >> (128 - u32::from(width))) >> shift << shift
        };
        net & mask == addr & mask
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSettings {
    kick_command: Vec<String>,
    window: Option<u64>,
    max_depth: Option<u32>,
    timeout: Option<u64>,
    max_parallel: Option<usize>,
    state_dir: Option<PathBuf>,
    /// The `again` role's attempts and delay (it has no `[[role]]`).
    retries: Option<u32>,
    retry_delay: Option<u64>,
    #[serde(default)]
    inventory_from: Vec<String>,
    inventory_expiry: Option<u64>,
    #[serde(default)]
    addresses: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    role: Vec<FileRole>,
    /// `[[on]]`: callbacks on any change (super::on), with their spans
    /// for their line numbers.
    #[serde(default)]
    on: Vec<toml::Spanned<super::rules::FileRule>>,
    puppetdb: Option<String>,
    puppetdb_cert: Option<PathBuf>,
    puppetdb_key: Option<PathBuf>,
    puppetdb_ca: Option<PathBuf>,
    puppetdb_timeout: Option<u64>,
    /// `[ledger]`: a shared ledger in Redis instead of `state_dir`.
    ledger: Option<super::shared_settings::FileLedger>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRole {
    name: String,
    hosts: Option<Vec<String>>,
    budget_per_hour: Option<u32>,
    retries: Option<u32>,
    retry_delay: Option<u64>,
    /// puppet-kicker's fact expressions, all of which must hold.
    select: Option<toml::Spanned<Vec<String>>>,
    query: Option<String>,
    requested_by: Option<Vec<String>>,
}

/// A role name: a plain word, which is all a `kick -> ROLE` title names.
pub fn is_role_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('-')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
}

fn bounded<T: PartialOrd + std::fmt::Display + Copy>(
    key: &str,
    value: Option<T>,
    default: T,
    min: T,
    max: T,
) -> Result<T, String> {
    let value = value.unwrap_or(default);
    if value < min || value > max {
        return Err(format!("{key} = {value}: must be from {min} to {max}"));
    }
    Ok(value)
}

impl Settings {
    /// Reads and checks `path`: a regular file, not larger than 1 MiB,
    /// owned by root or by the user running us, writable by no one else
    /// (it names the commands run as that user).
    pub fn load(path: &Path) -> Result<Settings, String> {
        let shown = path.display();
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            // A FIFO must not hang snmptrapd.
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(path)
            .map_err(|e| format!("{shown}: {e}"))?;
        let meta = file.metadata().map_err(|e| format!("{shown}: {e}"))?;
        if !meta.is_file() {
            return Err(format!("{shown}: not a regular file"));
        }
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != 0 && meta.uid() != me {
            return Err(format!(
                "{shown}: owned by uid {}, not root: it names the commands kicks run",
                meta.uid()
            ));
        }
        if meta.mode() & 0o022 != 0 {
            return Err(format!(
                "{shown}: writable by group or others (mode {:o}): it names the commands kicks run",
                meta.mode() & 0o7777
            ));
        }
        if meta.len() > MAX_FILE_BYTES {
            return Err(format!("{shown}: larger than {MAX_FILE_BYTES} bytes"));
        }
        let mut text = String::new();
        file.by_ref()
            .take(MAX_FILE_BYTES)
            .read_to_string(&mut text)
            .map_err(|e| format!("{shown}: {e}"))?;
        Settings::parse(&text).map_err(|e| format!("{shown}: {e}"))
    }

    pub fn parse(text: &str) -> Result<Settings, String> {
        let file: FileSettings =
            toml::from_str(text).map_err(|e| crate::config::toml_error(text, &e))?;
        let kick_command = command(&file.kick_command)?;
        let window = bounded("window", file.window, DEFAULT_WINDOW, 1, 7 * 86_400)?;
        let max_depth = bounded("max_depth", file.max_depth, 2, 1, 10)?;
        let timeout = bounded("timeout", file.timeout, 1800, 1, 86_400)?;
        let max_parallel = bounded("max_parallel", file.max_parallel, 4, 1, 64)?;
        let state_dir = file
            .state_dir
            .unwrap_or_else(|| PathBuf::from(DEFAULT_STATE_DIR));
        if !state_dir.is_absolute() {
            return Err(format!(
                "state_dir = {:?}: must be an absolute path",
                state_dir.display()
            ));
        }
        if file.role.len() > MAX_ROLES {
            return Err(format!("more than {MAX_ROLES} roles"));
        }
        let mut roles: Vec<Role> = Vec::with_capacity(file.role.len());
        for role in file.role {
            if !is_role_name(&role.name) {
                return Err(format!(
                    "role name {:?}: a plain word of letters, digits, '_', '.' and '-' is expected",
                    role.name.escape_debug().to_string()
                ));
            }
            if role.name == AGAIN {
                return Err(format!(
                    "role {AGAIN}: the name is taken: kick -> {AGAIN} kicks the host that asks"
                ));
            }
            if roles.iter().any(|r| r.name == role.name) {
                return Err(format!("role {} is defined twice", role.name));
            }
            if role.query.is_some() && role.hosts.is_some() {
                return Err(format!("role {}: hosts or query, not both", role.name));
            }
            if let Some(query) = &role.query {
                super::puppetdb::check_query(query)
                    .map_err(|e| format!("role {} query: {e}", role.name))?;
                if file.puppetdb.is_none() {
                    return Err(format!(
                        "role {}: a query needs puppetdb = \"https://…\"",
                        role.name
                    ));
                }
            }
            let hosts = role.hosts.unwrap_or_default();
            if hosts.len() > MAX_HOSTS_PER_ROLE {
                return Err(format!(
                    "role {}: at most {MAX_HOSTS_PER_ROLE} hosts are expected (none: the inventory's)",
                    role.name
                ));
            }
            if let Some(host) = hosts.iter().find(|h| !is_host_name(h)) {
                return Err(format!(
                    "role {}: host {:?} is not a host name or address",
                    role.name,
                    host.escape_debug().to_string()
                ));
            }
            let budget_per_hour = bounded(
                &format!("role {} budget_per_hour", role.name),
                role.budget_per_hour,
                DEFAULT_BUDGET,
                1,
                10_000,
            )?;
            let (retries, retry_delay) = retry_settings(
                &format!("role {} ", role.name),
                role.retries,
                role.retry_delay,
            )?;
            let select = role_select(text, &role.name, role.select.as_ref())?;
            if !select.is_empty() && !hosts.is_empty() {
                return Err(format!(
                    "role {}: hosts and select together: select chooses among the inventory's hosts",
                    role.name
                ));
            }
            let requested_by = role.requested_by.unwrap_or_default();
            if requested_by.len() > MAX_HOSTS_PER_ROLE {
                return Err(format!(
                    "role {}: requested_by: at most {MAX_HOSTS_PER_ROLE} hosts",
                    role.name
                ));
            }
            if let Some(host) = requested_by.iter().find(|h| !is_host_name(h)) {
                return Err(format!(
                    "role {}: requested_by {:?} is not a host name or address",
                    role.name,
                    host.escape_debug().to_string()
                ));
            }
            roles.push(Role {
                name: role.name,
                hosts,
                budget_per_hour,
                retries,
                retry_delay,
                select,
                query: role.query,
                requested_by,
            });
        }
        let role_names: Vec<&str> = roles.iter().map(|r| r.name.as_str()).collect();
        let known = super::rules::Known {
            roles: &role_names,
            is_role_name,
            again: AGAIN,
        };
        let on = super::rules::rules(text, file.on, &known)?;
        let on_roles = on_roles(&on);
        let puppetdb = puppetdb_settings(
            file.puppetdb,
            [file.puppetdb_cert, file.puppetdb_key, file.puppetdb_ca],
            file.puppetdb_timeout,
        )?;
        let mut addresses = BTreeMap::new();
        for (host, list) in file.addresses {
            if !is_host_name(&host) {
                return Err(format!(
                    "addresses: {:?} is not a host name",
                    host.escape_debug().to_string()
                ));
            }
            let parsed = list
                .iter()
                .map(|a| {
                    a.parse::<IpAddr>()
                        .map_err(|_| format!("addresses.{host}: {a:?} is not an IP address"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            addresses.insert(host, parsed);
        }
        let (again_retries, again_retry_delay) =
            retry_settings("", file.retries, file.retry_delay)?;
        let inventory_from = file
            .inventory_from
            .iter()
            .map(|n| {
                Network::parse(n)
                    .ok_or_else(|| format!("inventory_from: {n:?} is not an address/prefix"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let inventory_expiry = bounded(
            "inventory_expiry",
            file.inventory_expiry,
            86_400,
            60,
            30 * 86_400,
        )?;
        Ok(Settings {
            inventory_from,
            inventory_expiry: Duration::from_secs(inventory_expiry),
            again: Role {
                name: AGAIN.to_string(),
                hosts: Vec::new(),
                budget_per_hour: DEFAULT_BUDGET,
                retries: again_retries,
                retry_delay: again_retry_delay,
                select: Vec::new(),
                query: None,
                requested_by: Vec::new(),
            },
            puppetdb,
            ledger: file.ledger.map(|l| l.check()).transpose()?,
            kick_command,
            window: Duration::from_secs(window),
            max_depth,
            timeout: Duration::from_secs(timeout),
            max_parallel,
            state_dir,
            roles,
            addresses,
            on,
            on_roles,
        })
    }

    /// The role of that name; `again` is every host's own.
    pub fn role(&self, name: &str) -> Option<&Role> {
        if name == AGAIN {
            return Some(&self.again);
        }
        self.roles
            .iter()
            .find(|r| r.name == name)
            .or_else(|| self.on_role(name))
    }

    /// The pseudo-role `on:LINE` of a `run` rule (its budget and retries).
    fn on_role(&self, name: &str) -> Option<&Role> {
        self.on_roles.iter().find(|r| r.name == name)
    }

    /// Every host a role or `[addresses]` names, once, in the order first
    /// named: the hosts a notification may come from (a host that asks
    /// for kicks need not be kicked itself).
    pub fn hosts(&self) -> Vec<&str> {
        let mut hosts: Vec<&str> = Vec::new();
        let named = self.roles.iter().flat_map(|r| &r.hosts);
        for host in named.chain(self.addresses.keys()) {
            if !hosts.contains(&host.as_str()) {
                hosts.push(host);
            }
        }
        hosts
    }

    /// The argv of kick `id` of `host` for `role`.
    pub fn argv(&self, host: &str, role: &str, id: &str) -> Vec<String> {
        self.kick_command
            .iter()
            .map(|arg| match arg {
                Arg::Text(text) => text.clone(),
                Arg::Host => host.to_string(),
                Arg::Role => role.to_string(),
                Arg::Kick => id.to_string(),
            })
            .collect()
    }

    /// Whether the kicked run is given the kick's id (`{kick}`).
    pub fn gives_job_id(&self) -> bool {
        self.kick_command.contains(&Arg::Kick)
    }
}

/// A role's `select`, parsed; a bad expression refused with the line of
/// the file it is on.
fn role_select(
    text: &str,
    role: &str,
    select: Option<&toml::Spanned<Vec<String>>>,
) -> Result<Vec<super::select::Expression>, String> {
    let Some(select) = select else {
        return Ok(Vec::new());
    };
    let line = super::rules::line_of(text, select.span().start);
    super::select::parse_all(select.get_ref())
        .map_err(|e| format!("line {line} (select): role {role}: {e}"))
}

/// The pseudo-roles of the `run` rules (super::on): a rule's budget and
/// retries, or the defaults of a role.
fn on_roles(rules: &[super::rules::Rule]) -> Vec<Role> {
    rules
        .iter()
        .filter(|r| matches!(r.action, super::rules::Action::Run(_)))
        .map(|r| Role {
            name: super::rules::Rule::role_name(r.line),
            hosts: Vec::new(),
            budget_per_hour: r.budget_per_hour.unwrap_or(DEFAULT_BUDGET),
            retries: r.retries.unwrap_or(0),
            retry_delay: r.retry_delay.unwrap_or(DEFAULT_RETRY_DELAY),
            select: Vec::new(),
            query: None,
            requested_by: Vec::new(),
        })
        .collect()
}

/// `puppetdb` and the settings beside it: all three files, absolute, when
/// it is given; none without it.
fn puppetdb_settings(
    url: Option<String>,
    files: [Option<PathBuf>; 3],
    timeout: Option<u64>,
) -> Result<Option<PuppetDb>, String> {
    let names = ["puppetdb_cert", "puppetdb_key", "puppetdb_ca"];
    let Some(url) = url else {
        if let Some(at) = files.iter().position(Option::is_some) {
            return Err(format!("{}: only with puppetdb = \"https://…\"", names[at]));
        }
        if timeout.is_some() {
            return Err("puppetdb_timeout: only with puppetdb = \"https://…\"".to_string());
        }
        return Ok(None);
    };
    let (host, port) = super::puppetdb::parse_url(&url)?;
    let mut paths = Vec::with_capacity(3);
    for (name, file) in names.iter().zip(files) {
        let path = file.ok_or_else(|| {
            format!("puppetdb needs {name} (PuppetDB asks for a client certificate its CA signed)")
        })?;
        if !path.is_absolute() {
            return Err(format!(
                "{name} = {:?}: must be an absolute path",
                path.display()
            ));
        }
        paths.push(path);
    }
    let timeout = bounded("puppetdb_timeout", timeout, 10, 1, 60)?;
    let [cert, key, ca]: [PathBuf; 3] = paths.try_into().expect("three paths");
    Ok(Some(PuppetDb {
        host,
        port,
        cert,
        key,
        ca,
        timeout: Duration::from_secs(timeout),
    }))
}

/// A role's budget per hour by default.
const DEFAULT_BUDGET: u32 = 12;

/// `retries` and `retry_delay` (of a role, or the file's for `again`).
fn retry_settings(
    prefix: &str,
    retries: Option<u32>,
    delay: Option<u64>,
) -> Result<(u32, Duration), String> {
    let retries = bounded(&format!("{prefix}retries"), retries, 0, 0, 10)?;
    let delay = bounded(
        &format!("{prefix}retry_delay"),
        delay,
        DEFAULT_RETRY_DELAY.as_secs(),
        1,
        3600,
    )?;
    Ok((retries, Duration::from_secs(delay)))
}

fn command(words: &[String]) -> Result<Vec<Arg>, String> {
    if words.is_empty() || words.len() > MAX_ARGS {
        return Err(format!(
            "kick_command: from 1 to {MAX_ARGS} arguments are expected"
        ));
    }
    let args: Vec<Arg> = words
        .iter()
        .map(|word| match word.as_str() {
            "{host}" => Ok(Arg::Host),
            "{role}" => Ok(Arg::Role),
            "{kick}" => Ok(Arg::Kick),
            w if ["{host}", "{role}", "{kick}"].iter().any(|p| w.contains(p)) => Err(format!(
                "kick_command: {w:?}: {{host}}, {{role}} and {{kick}} must be whole arguments"
            )),
            w if w.contains('\0') => Err("kick_command: an argument holds a NUL".to_string()),
            w => Ok(Arg::Text(w.to_string())),
        })
        .collect::<Result<_, _>>()?;
    if args[0] != Arg::Text(words[0].clone()) || words[0].is_empty() {
        return Err("kick_command: the first argument must be the program".to_string());
    }
    if !args.contains(&Arg::Host) {
        return Err("kick_command: no argument is {host}".to_string());
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"
kick_command = ["ssh", "-n", "-o", "BatchMode=yes", "{host}", "sudo", "-n", "puppet", "agent", "--onetime", "--no-daemonize"]
window = 600
max_depth = 2
timeout = 1800
max_parallel = 4
state_dir = "/var/lib/redis-snmp/kick"
[addresses]
"lb1.example.net" = ["192.0.2.10", "2001:db8::10"]
[[role]]
name = "haproxy"
hosts = ["lb1.example.net"]
"#;

    #[test]
    fn the_documented_example_loads() {
        let s = Settings::parse(EXAMPLE).unwrap();
        assert_eq!(s.window, Duration::from_secs(600));
        assert_eq!(s.max_depth, 2);
        assert_eq!(s.max_parallel, 4);
        assert_eq!(s.role("haproxy").unwrap().hosts, ["lb1.example.net"]);
        assert_eq!(s.role("haproxy").unwrap().budget_per_hour, 12);
        assert_eq!(s.addresses["lb1.example.net"].len(), 2);
        assert_eq!(
            s.argv("lb1.example.net", "haproxy", "k1")[4..6],
            ["lb1.example.net".to_string(), "sudo".to_string()]
        );
    }

    #[test]
    fn placeholders_are_whole_arguments_and_names_plain() {
        let with = |command: &str, role: &str, host: &str| {
            Settings::parse(&format!(
                "kick_command = {command}\n[[role]]\nname = {role:?}\nhosts = [{host:?}]\n"
            ))
        };
        assert!(with(r#"["ssh", "{host}"]"#, "web", "w1").is_ok());
        let e = with(r#"["ssh", "root@{host}"]"#, "web", "w1").unwrap_err();
        assert!(e.contains("whole arguments"), "{e}");
        let e = with(r#"["ssh", "x"]"#, "web", "w1").unwrap_err();
        assert!(e.contains("no argument is {host}"), "{e}");
        let e = with(r#"["{host}"]"#, "web", "w1").unwrap_err();
        assert!(e.contains("must be the program"), "{e}");
        let e = with(r#"["ssh", "{host}"]"#, "-x", "w1").unwrap_err();
        assert!(e.contains("plain word"), "{e}");
        let e = with(r#"["ssh", "{host}"]"#, "web", "-oProxyCommand=id").unwrap_err();
        assert!(e.contains("not a host name"), "{e}");
        let e = with(r#"["ssh", "{host}"]"#, "web", "a b").unwrap_err();
        assert!(e.contains("not a host name"), "{e}");
    }

    #[test]
    fn limits_are_checked_and_errors_name_the_line() {
        let e = Settings::parse("kick_command = [\"a\", \"{host}\"]\nmax_depth = 0\n").unwrap_err();
        assert!(e.contains("max_depth = 0: must be from 1 to 10"), "{e}");
        let e = Settings::parse("kick_command = [\"a\", \"{host}\"]\nwindow = 0\n").unwrap_err();
        assert!(e.contains("window = 0"), "{e}");
        let e = Settings::parse("kick_command = [\"a\", \"{host}\"]\nsurprise = 1\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("surprise"), "{e}");
        let e = Settings::parse("kick_command = [\"a\", \"{host}\"]\nstate_dir = \"rel\"\n")
            .unwrap_err();
        assert!(e.contains("absolute"), "{e}");
        let twice = "kick_command = [\"a\", \"{host}\"]\n[[role]]\nname = \"r\"\nhosts = [\"h\"]\n[[role]]\nname = \"r\"\nhosts = [\"h\"]\n";
        assert!(Settings::parse(twice).unwrap_err().contains("twice"));
    }

    /// The package's /etc/redis-snmp/kick.toml loads as shipped: the run
    /// given the kick's id, the window and depth it documents; a copy
    /// whose placeholder is spliced into a word is refused.
    #[test]
    fn the_shipped_file_loads() {
        let shipped = include_str!("../../debian/conf/kick.toml");
        let s = Settings::parse(shipped).unwrap();
        assert!(s.gives_job_id());
        assert_eq!(s.window, Duration::from_secs(DEFAULT_WINDOW));
        assert_eq!(s.max_depth, 2);
        let argv = s.argv("lb1", "haproxy", "k-1");
        assert_eq!(
            argv[argv.len() - 2..],
            ["--job-id".to_string(), "k-1".to_string()]
        );
        let broken = shipped.replace("\"{kick}\"", "\"--job-id={kick}\"");
        let e = Settings::parse(&broken).unwrap_err();
        assert!(e.contains("must be whole arguments"), "{e}");
    }

    #[test]
    fn roles_without_hosts_and_the_inventorys_networks() {
        let s = Settings::parse(
            "kick_command = [\"k\", \"{host}\", \"{kick}\"]\ninventory_from = [\"10.77.0.0/24\", \"fd00::/64\", \"192.0.2.9\"]\n\
             [[role]]\nname = \"web\"\nretries = 2\n",
        )
        .unwrap();
        assert!(s.role("web").unwrap().hosts.is_empty());
        assert_eq!(s.role("web").unwrap().retries, 2);
        assert_eq!(s.inventory_expiry, Duration::from_secs(86_400));
        assert!(s.gives_job_id());
        let from = |a: &str| {
            s.inventory_from
                .iter()
                .any(|n| n.contains(a.parse().unwrap()))
        };
        assert!(from("10.77.0.3") && from("::ffff:10.77.0.200") && from("fd00::1"));
        assert!(from("192.0.2.9") && !from("192.0.2.10") && !from("10.77.1.1") && !from("fd01::1"));
        assert!(Network::parse("0.0.0.0/0")
            .unwrap()
            .contains("203.0.113.1".parse().unwrap()));
        for bad in ["10.0.0.0/33", "web", "10.0.0.0/x"] {
            let e = Settings::parse(&format!(
                "kick_command = [\"k\", \"{{host}}\"]\ninventory_from = [\"{bad}\"]\n"
            ))
            .unwrap_err();
            assert!(e.contains("not an address/prefix"), "{e}");
        }
        let e = Settings::parse("kick_command = [\"k\", \"{host}\"]\n[[role]]\nname = \"again\"\n")
            .unwrap_err();
        assert!(e.contains("the name is taken"), "{e}");
    }

    #[test]
    fn a_roles_select_is_parsed_and_a_bad_one_refused_with_its_line() {
        let s = Settings::parse(
            "kick_command = [\"k\", \"{host}\"]\n[[role]]\nname = \"web\"\n\
             select = [\"role=node\", \"uptime_seconds>10\", \"hostname=/^web/\"]\n",
        )
        .unwrap();
        let select = &s.role("web").unwrap().select;
        assert_eq!(select.len(), 3);
        assert_eq!(select[2].fact, "hostname");
        for (bad, why) in [
            ("\"hostname=/(/\"", "not a regular expression"),
            ("\"uptime\"", "is expected"),
            ("\"=x\"", "a fact name"),
        ] {
            let e = Settings::parse(&format!(
                "kick_command = [\"k\", \"{{host}}\"]\n\n[[role]]\nname = \"web\"\nselect = [\"a=1\", {bad}]\n"
            ))
            .unwrap_err();
            assert!(
                e.starts_with("line 5 (select): role web: ") && e.contains(why),
                "{e}"
            );
        }
    }

    #[test]
    fn roles_by_puppetdb_query_need_puppetdb_and_its_certificate() {
        let pdb = "puppetdb = \"https://puppet:8081\"\npuppetdb_cert = \"/etc/c.pem\"\n\
                   puppetdb_key = \"/etc/k.pem\"\npuppetdb_ca = \"/etc/ca.pem\"\n";
        let role = "[[role]]\nname = \"lb\"\nquery = 'inventory[certname] { trusted.extensions.pp_role = \"lb\" }'\n";
        let with = |top: &str, role: &str| {
            Settings::parse(&format!(
                "kick_command = [\"k\", \"{{host}}\"]\n{top}{role}"
            ))
        };
        let s = with(pdb, role).unwrap();
        let db = s.puppetdb.as_ref().unwrap();
        assert_eq!((db.host.as_str(), db.port), ("puppet", 8081));
        assert_eq!(db.timeout, Duration::from_secs(10));
        assert!(s
            .role("lb")
            .unwrap()
            .query
            .as_deref()
            .unwrap()
            .contains("pp_role"));
        assert!(s.role("lb").unwrap().hosts.is_empty());
        let e = with("", role).unwrap_err();
        assert!(e.contains("a query needs puppetdb"), "{e}");
        let e = with(&pdb.replace("puppetdb_key = \"/etc/k.pem\"\n", ""), role).unwrap_err();
        assert!(e.contains("puppetdb needs puppetdb_key"), "{e}");
        let e = with(&pdb.replace("/etc/ca.pem", "ca.pem"), role).unwrap_err();
        assert!(e.contains("puppetdb_ca") && e.contains("absolute"), "{e}");
        let e = with(
            &pdb.replace("https://puppet:8081", "http://puppet:8080"),
            role,
        )
        .unwrap_err();
        assert!(e.contains("https://HOST[:PORT]"), "{e}");
        let e = with(&format!("{pdb}puppetdb_timeout = 0\n"), role).unwrap_err();
        assert!(e.contains("puppetdb_timeout = 0"), "{e}");
        let e = with("puppetdb_cert = \"/etc/c.pem\"\n", "").unwrap_err();
        assert!(e.contains("only with puppetdb"), "{e}");
        let both = role.replace("query =", "hosts = [\"lb1\"]\nquery =");
        assert!(with(pdb, &both)
            .unwrap_err()
            .contains("hosts or query, not both"));
        let e = with(pdb, "[[role]]\nname = \"lb\"\nquery = \"\"\n").unwrap_err();
        assert!(e.contains("role lb query"), "{e}");
        let e = with(pdb, "[[role]]\nname = \"lb\"\nquery = \"a\\u001bb\"\n").unwrap_err();
        assert!(e.contains("control character"), "{e}");
    }

    #[test]
    fn the_file_must_be_roots_or_ours_and_not_writable_by_others() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kick.toml");
        std::fs::write(&path, "kick_command = [\"a\", \"{host}\"]\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(Settings::load(&path).is_ok());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let e = Settings::load(&path).unwrap_err();
        assert!(e.contains("writable by group or others"), "{e}");
        let e = Settings::load(dir.path()).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
    }
}
