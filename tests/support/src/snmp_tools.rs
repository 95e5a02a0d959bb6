//! Net-snmp command-line tools.

use crate::netns::Host;
use crate::*;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::time::Duration;

/// Runs net-snmp's tools against a private snmpd:
/// `CMD -v2c -c COMMUNITY -t 1 -r 0 [-On] -M … -m … 127.0.0.1:PORT ARGS…`;
/// or as an SNMPv3 user ([`SnmpClient::usm`]), to another address
/// ([`SnmpClient::at`]), from inside a host of a [`crate::netns::Network`]
/// ([`SnmpClient::inside`]), and as `snmptrap`/`snmpinform` to a receiver
/// ([`SnmpClient::trap`], [`SnmpClient::inform`]).
///
/// The tools read no snmp.conf (`SNMPCONFPATH` points to an empty dir), so a
/// developer's ~/.snmp or /etc/snmp/snmp.conf cannot change their output;
/// the MIB list is therefore given in full: `-m SNMPv2-MIB:REDIS-SERVER-MIB`
/// (the latter only while mibs/REDIS-SERVER-MIB.txt exists) rather than `-m
/// +REDIS-SERVER-MIB`, whose result depends on the default list (Debian's
/// snmp.conf empties it; upstream's loads a dozen modules we do not ship and
/// warns about each). The numeric variant loads no MIB at all (`-m ""`).
#[derive(Debug, Clone)]
pub struct SnmpClient {
    address: IpAddr,
    port: u16,
    host: Option<Host>,
    community: String,
    usm: Option<UsmUser>,
    numeric: bool,
    timeout: Duration,
    opts: Vec<String>,
}

impl SnmpClient {
    pub fn new(port: u16) -> SnmpClient {
        SnmpClient {
            address: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port,
            host: None,
            community: "public".into(),
            usm: None,
            numeric: false,
            timeout: Duration::from_secs(1),
            opts: Vec::new(),
        }
    }

    /// Numeric OIDs in the output (`-On`), no MIBs loaded.
    pub fn numeric(mut self) -> SnmpClient {
        self.numeric = true;
        self
    }

    pub fn community(mut self, community: &str) -> SnmpClient {
        self.community = community.into();
        self
    }

    /// SNMPv3 as `user` (authPriv) instead of SNMPv2c with the community.
    pub fn usm(mut self, user: &UsmUser) -> SnmpClient {
        self.usm = Some(user.clone());
        self
    }

    /// The agent's (or receiver's) address instead of 127.0.0.1.
    pub fn at(mut self, address: impl Into<IpAddr>) -> SnmpClient {
        self.address = address.into();
        self
    }

    /// Runs the tools inside `host` ([`Host::command`]): they see its
    /// loopback and its address, and what they send leaves from there.
    pub fn inside(mut self, host: &Host) -> SnmpClient {
        self.host = Some(host.clone());
        self
    }

    /// `-t` (default 1 s; net-snmp takes fractions of a second).
    pub fn timeout(mut self, timeout: Duration) -> SnmpClient {
        self.timeout = timeout;
        self
    }

    /// An extra option before the agent address (e.g. `-On`, `-Cc`).
    pub fn opt(mut self, opt: &str) -> SnmpClient {
        self.opts.push(opt.into());
        self
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `CMD <common options> ARGS...`; ARGS come after the agent address
    /// (OIDs, set triples).
    pub fn run(&self, cmd: &str, args: &[&str]) -> SnmpOutput {
        let conf = shared_tmp("snmp-client-conf");
        let persist = shared_tmp("snmp-client-persist");
        let mut c = match &self.host {
            Some(host) => host.command(cmd),
            None => Command::new(cmd),
        };
        match &self.usm {
            Some(user) => c.args(user.tool_args()),
            None => c.args(["-v2c", "-c", &self.community]),
        };
        c.args([
            "-t",
            &format!("{:.3}", self.timeout.as_secs_f64()),
            "-r",
            "0",
        ]);
        if self.numeric {
            c.args(["-On", "-m", ""]);
        } else {
            let mibs = if redis_mib_file().is_file() {
                "SNMPv2-MIB:REDIS-SERVER-MIB:PUPPET-AGENT-MIB"
            } else {
                "SNMPv2-MIB"
            };
            c.arg("-M").arg(mib_path()).args(["-m", mibs]);
        }
        c.args(&self.opts)
            .arg(SocketAddr::new(self.address, self.port).to_string())
            .args(args)
            .env("SNMPCONFPATH", &conf)
            .env("SNMP_PERSISTENT_DIR", &persist)
            .env_remove("MIBS")
            .env_remove("MIBDIRS")
            .stdin(Stdio::null());
        let out = c.output().unwrap_or_else(|e| {
            panic!("running {cmd} (is net-snmp's snmp package installed?): {e}")
        });
        SnmpOutput::new(format!("{cmd} {}", args.join(" ")), out)
    }

    pub fn get(&self, oids: &[&str]) -> SnmpOutput {
        self.run("snmpget", oids)
    }

    /// snmpget of one OID, expecting exactly one variable back.
    pub fn get_one(&self, oid: &str) -> Var {
        let out = self.get(&[oid]);
        let vars = out.vars();
        assert!(
            out.success() && vars.len() == 1,
            "snmpget {oid}: expected one variable, got:\n{out}"
        );
        vars.into_iter().next().unwrap()
    }

    pub fn walk(&self, oid: &str) -> SnmpOutput {
        self.run("snmpwalk", &[oid])
    }

    pub fn bulkwalk(&self, oid: &str) -> SnmpOutput {
        self.run("snmpbulkwalk", &[oid])
    }

    /// `snmpset OID TYPE VALUE` (TYPE as snmpset takes it: `i`, `u`, `s`…).
    pub fn set(&self, oid: &str, ty: &str, value: &str) -> SnmpOutput {
        self.run("snmpset", &[oid, ty, value])
    }

    /// `snmptrap '' TRAP_OID VARBINDS…` to the receiver at this client's
    /// address and port: an SNMPv2 trap (uptime now), its varbinds as
    /// triples `OID TYPE VALUE`. For an SNMPv3 trap the receiver must know
    /// the sender's engine ID: give it with `.opt("-e").opt(ENGINE)` and
    /// [`UsmUser::create_user_line_for_engine`].
    pub fn trap(&self, trap_oid: &str, varbinds: &[&str]) -> SnmpOutput {
        let mut args = vec!["", trap_oid];
        args.extend_from_slice(varbinds);
        self.run("snmptrap", &args)
    }

    /// Like [`SnmpClient::trap`], as an inform: succeeds only when the
    /// receiver acknowledged it.
    pub fn inform(&self, trap_oid: &str, varbinds: &[&str]) -> SnmpOutput {
        let mut args = vec!["", trap_oid];
        args.extend_from_slice(varbinds);
        self.run("snmpinform", &args)
    }
}

/// What a net-snmp tool printed.
pub struct SnmpOutput {
    pub command: String,
    pub stdout: String,
    pub stderr: String,
    pub status: ExitStatus,
}

impl SnmpOutput {
    fn new(command: String, out: Output) -> SnmpOutput {
        SnmpOutput {
            command,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            status: out.status,
        }
    }

    pub fn success(&self) -> bool {
        self.status.success()
    }

    /// stdout and stderr together (net-snmp prints some errors on either).
    pub fn combined(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }

    pub fn vars(&self) -> Vec<Var> {
        parse_vars(&self.stdout)
    }

    /// The variable with this name (as printed), if any.
    pub fn var(&self, name: &str) -> Option<Var> {
        self.vars().into_iter().find(|v| v.name == name)
    }
}

impl fmt::Display for SnmpOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "$ {} → {}\n{}{}",
            self.command,
            self.status,
            self.stdout,
            if self.stderr.is_empty() {
                String::new()
            } else {
                format!("[stderr]\n{}", self.stderr)
            }
        )
    }
}

impl fmt::Debug for SnmpOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// One `NAME = TYPE: VALUE` line of net-snmp output. `ty` is empty where
/// net-snmp prints no type (`= ""` for an empty string, `= No Such
/// Instance currently exists at this OID`, `= NULL`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Var {
    pub name: String,
    pub ty: String,
    pub value: String,
}

pub const NO_SUCH_INSTANCE: &str = "No Such Instance currently exists at this OID";
pub const NO_SUCH_OBJECT: &str = "No Such Object available on this agent at this OID";
pub const END_OF_MIB: &str = "No more variables left in this MIB View";

/// Type labels net-snmp prints before a value.
pub(crate) const TYPE_LABELS: &[&str] = &[
    "INTEGER",
    "STRING",
    "Hex-STRING",
    "OID",
    "IpAddress",
    "Network Address",
    "Counter32",
    "Gauge32",
    "UInteger32",
    "Timeticks",
    "Opaque",
    "Counter64",
    "BITS",
    "Float",
    "Double",
    "INTEGER64",
    "UNSIGNED64",
];

/// Parses net-snmp's default output (`NAME = TYPE: VALUE`, one per line;
/// lines without ` = ` continue the previous value, as multi-line strings
/// and Hex-STRINGs do).
pub fn parse_vars(text: &str) -> Vec<Var> {
    let mut vars: Vec<Var> = Vec::new();
    for line in text.lines() {
        let head = line.split_once(" = ");
        match head {
            Some((name, rest)) if !name.is_empty() && !name.contains(char::is_whitespace) => {
                let (ty, value) = split_type(rest);
                vars.push(Var {
                    name: name.to_string(),
                    ty,
                    value,
                });
            }
            _ => {
                if let Some(last) = vars.last_mut() {
                    last.value.push('\n');
                    last.value.push_str(line);
                }
            }
        }
    }
    vars
}

pub(crate) fn split_type(rest: &str) -> (String, String) {
    if let Some((ty, value)) = rest.split_once(": ") {
        if TYPE_LABELS.contains(&ty) || ty.starts_with("Wrong Type") {
            return (ty.to_string(), value.to_string());
        }
    }
    if let Some(ty) = rest.strip_suffix(':') {
        if TYPE_LABELS.contains(&ty) {
            return (ty.to_string(), String::new()); // e.g. "STRING:" for ""
        }
    }
    (String::new(), rest.to_string())
}

impl Var {
    /// The value as text: STRING quotes removed, `""` → empty.
    pub fn text(&self) -> String {
        let v = self.value.as_str();
        if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') {
            v[1..v.len() - 1].to_string()
        } else {
            v.to_string()
        }
    }

    /// The numeric value: `42`, `3 clients` (a MIB's UNITS follow the
    /// number) → 3, `up(1)` → 1, `(100) 0:00:01.00` → 100.
    pub fn number(&self) -> Option<u64> {
        let v = self.value.trim();
        if let Some(Ok(n)) = v.split_whitespace().next().map(str::parse) {
            return Some(n);
        }
        let open = v.find('(')?;
        let close = v[open..].find(')')? + open;
        v[open + 1..close].parse().ok()
    }

    /// [`Var::number`], panicking with the variable when there is none.
    pub fn u64(&self) -> u64 {
        self.number()
            .unwrap_or_else(|| panic!("{} has no numeric value: {self}", self.name))
    }

    pub fn is_no_such_instance(&self) -> bool {
        self.ty.is_empty() && self.value == NO_SUCH_INSTANCE
    }

    pub fn is_no_such_object(&self) -> bool {
        self.ty.is_empty() && self.value == NO_SUCH_OBJECT
    }

    /// Whether the value is one of net-snmp's exception texts.
    pub fn is_exception(&self) -> bool {
        self.ty.is_empty()
            && (self.value == NO_SUCH_INSTANCE
                || self.value == NO_SUCH_OBJECT
                || self.value.starts_with(END_OF_MIB))
    }
}

impl fmt::Display for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ty.is_empty() {
            write!(f, "{} = {}", self.name, self.value)
        } else {
            write!(f, "{} = {}: {}", self.name, self.ty, self.value)
        }
    }
}

/// Compares two numeric OIDs (`.1.3.6…`) arc by arc.
pub fn oid_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let arcs = |s: &str| -> Vec<u64> {
        s.trim_start_matches('.')
            .split('.')
            .map(|x| {
                x.parse()
                    .unwrap_or_else(|_| panic!("not a numeric OID: {s}"))
            })
            .collect()
    };
    arcs(a).cmp(&arcs(b))
}
