//! Net-snmp command-line tools.

use crate::*;
use std::fmt;
use std::process::{Command, ExitStatus, Output, Stdio};
use std::time::Duration;

/// Runs net-snmp's tools against a private snmpd:
/// `CMD -v2c -c COMMUNITY -t 1 -r 0 [-On] -M … -m … ARGS… 127.0.0.1:PORT`.
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
    port: u16,
    community: String,
    numeric: bool,
    timeout: Duration,
    opts: Vec<String>,
}

impl SnmpClient {
    pub fn new(port: u16) -> SnmpClient {
        SnmpClient {
            port,
            community: "public".into(),
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
        let mut c = Command::new(cmd);
        c.args(["-v2c", "-c", &self.community]).args([
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
            .arg(format!("127.0.0.1:{}", self.port))
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
