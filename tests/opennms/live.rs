//! The live stack of tests/opennms.rs: Redis through redis-cli, walks of
//! the agent through snmpd, why an object is absent, where OpenNMS stores a
//! row, and the RRD files written the way OpenNMS writes them.

use super::files::*;
use redis_snmp::metrics::{
    Column, CommandField, KeysizesField, KeyspaceField, ModuleField, ObjectDef, PuppetField,
    ReplicaField, SlowlogField, Source, StatusField, StreamGroupField, ThreadField,
};
use std::collections::BTreeMap;
use std::io::{ErrorKind, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use testkit::{Snmpd, Var};

/// Sends commands, one per line, through one redis-cli connection.
pub fn redis_pipe(port: u16, commands: &str) {
    let mut child = Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("running redis-cli (Debian's redis-tools)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(commands.as_bytes())
        .unwrap();
    child.wait().unwrap();
}

pub fn redis_cli_text(port: u16, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .output()
        .expect("running redis-cli");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Some work for the master, different in each round: writes, hits and
/// misses, expiring keys in two databases, errors, a message, and now and
/// then a 20 ms command (a latency event and a slow log entry).
pub fn load(port: u16, round: usize) {
    let mut c = String::new();
    let n = 40 + 35 * (round % 4);
    for i in 0..n {
        c.push_str(&format!("SET key:{i} value-{round}-{i}\nGET key:{i}\n"));
        if i % 3 == 0 {
            c.push_str(&format!("GET missing:{round}:{i}\n"));
        }
        if i % 5 == 0 {
            c.push_str(&format!(
                "SET tmp:{round}:{i} x PX 200\nEXPIRE key:{i} 3600\n"
            ));
        }
    }
    c.push_str("INCR key:0\nLPUSH key:1 x\nPUBLISH news hello\n");
    c.push_str(&format!(
        "SELECT 3\nSET other:{round} y EX 600\nHSET h:{round} f v\nSELECT 0\n"
    ));
    if round % 3 == 1 {
        c.push_str("DEBUG SLEEP 0.02\n");
    }
    redis_pipe(port, &c);
}

pub type Sample = BTreeMap<String, Var>;

pub fn walk(snmpd: &Snmpd, root: &str) -> Vec<Var> {
    snmpd.numeric_walk(root)
}

pub fn sample(snmpd: &Snmpd) -> Sample {
    walk(snmpd, ".1.3.6.1.4.1.20267.400")
        .into_iter()
        .chain(walk(snmpd, ".1.3.6.1.4.1.20267.401"))
        .filter(|v| !v.is_exception())
        .map(|v| (v.name.clone(), v))
        .collect()
}

/// The entries of a sample below `oid.`, with their index suffix.
pub fn below<'a>(sample: &'a Sample, oid: &str) -> impl Iterator<Item = (&'a str, &'a Var)> + 'a {
    let prefix = format!("{oid}.");
    let skip = prefix.len();
    sample
        .range(prefix.clone()..)
        .take_while(move |(k, _)| k.starts_with(&prefix))
        .map(move |(k, v)| (&k[skip..], v))
}

/// Why an object no server of this machine could have served, if that is
/// the case: INFO (and CLUSTER INFO) of every instance lacks its fields, or
/// the Puppet summary lacks its phase, or the master answers COMMANDLOG
/// LEN with an error (`commandlog` is its reply).
pub fn why_absent(def: &ObjectDef, info: &str, summary: &str, commandlog: &str) -> Option<String> {
    match def.source {
        Source::Info { fields, .. } => {
            let reported = fields.iter().any(|f| {
                info.lines()
                    .any(|l| l.trim().strip_prefix(f).is_some_and(|r| r.starts_with(':')))
            });
            (!reported).then(|| format!("no server here reports {fields:?}"))
        }
        _ if KeyspaceField::of(def) == Some(KeyspaceField::Subexpiry) => (!info
            .contains("subexpiry="))
        .then(|| "no keyspace line here has subexpiry (Redis 7.4+)".into()),
        _ if matches!(
            CommandField::of(def),
            Some(CommandField::P50 | CommandField::P99 | CommandField::P999)
        ) =>
        {
            (!info.contains("latency_percentiles_usec_"))
                .then(|| "no server here reports latencystats (Redis 7.0+)".into())
        }
        _ if ReplicaField::of(def) == Some(ReplicaField::Kind) => {
            let typed = info
                .lines()
                .any(|l| l.starts_with("slave") && l.contains(",type="));
            (!typed).then(|| "no slave<N> line here has type= (Valkey)".into())
        }
        _ if matches!(
            SlowlogField::of(def),
            Some(SlowlogField::LargeRequests | SlowlogField::LargeReplies)
        ) =>
        {
            (commandlog.trim().parse::<u64>().is_err()).then(|| {
                format!(
                    "the servers here refuse COMMANDLOG LEN (Valkey 8.1+): {}",
                    commandlog.trim()
                )
            })
        }
        // XINFO GROUPS has a lag field since Redis 7.0 (Valkey 8.0 says
        // redis_version:7.2.4).
        _ if StreamGroupField::of(def) == Some(StreamGroupField::Lag) => info
            .contains("redis_version:6.")
            .then(|| "XINFO GROUPS has no lag before Redis 7.0".into()),
        // This stack has no rediss:// instance; tests/certificates.rs
        // reads these columns from a real TLS server.
        Source::Status(
            StatusField::CertSubject
            | StatusField::CertIssuer
            | StatusField::CertNotAfter
            | StatusField::CertExpiresIn,
        ) => Some("no rediss:// instance in this stack (tests/certificates.rs serves them)".into()),
        Source::Puppet(PuppetField::Phase(name)) => {
            let reported = summary
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{name}:")));
            (!reported)
                .then(|| format!("`puppet apply` writes no {name} time (an agent's run does)"))
        }
        // Redis 8's sections, and modules (none loaded here before Redis 8).
        _ if KeysizesField::of(def).is_some() => (!info.contains("_distrib_"))
            .then(|| "no server here has INFO's Keysizes section (Redis 8+)".into()),
        _ if ThreadField::of(def).is_some() => (!info.contains("io_thread_"))
            .then(|| "no server here has INFO's Threads section (Redis 8+)".into()),
        _ if ModuleField::of(def).is_some() => (!info.lines().any(|l| l.starts_with("module:")))
            .then(|| "no server here has a module loaded".into()),
        _ => None,
    }
}

/// The directory SiblingColumnStorageStrategy makes of a value: non-ASCII
/// dropped, `/` to `-`, then the `replace-all` of the resource type (this
/// test knows the one the file uses).
pub fn sibling_dir(value: &str, replace_all: &str, index: &str) -> String {
    assert_eq!(
        replace_all, "s/[^A-Za-z0-9._-]/_/",
        "the test emulates this replacement only"
    );
    let name: String = value
        .chars()
        .filter(char::is_ascii)
        .map(|c| if c == '/' { '-' } else { c })
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() {
        index.to_string()
    } else {
        name
    }
}

/// The samples of one data source: its RRD type (GAUGE, COUNTER) and
/// (time, value) pairs.
pub type Series = (&'static str, Vec<(u64, String)>);

#[derive(Default)]
pub struct Resource {
    pub index: String,
    /// alias → samples
    pub series: BTreeMap<String, Series>,
    pub strings: BTreeMap<String, String>,
}

pub fn rrdtool_batch(commands: &[String]) {
    let mut child = match Command::new("rrdtool")
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            panic!("rrdtool is missing: install Debian's rrdtool package")
        }
        Err(e) => panic!("running rrdtool: {e}"),
    };
    let mut stdin = child.stdin.take().unwrap();
    let input = commands.join("\n") + "\n";
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let errors: Vec<&str> = text.lines().filter(|l| l.starts_with("ERROR")).collect();
    assert!(errors.is_empty(), "rrdtool: {}", errors.join("\n"));
    assert_eq!(
        text.lines().filter(|l| l.starts_with("OK")).count(),
        commands.len(),
        "rrdtool did not run every command"
    );
}

pub fn create_rrd(path: &Path, alias: &str, ds: &str, start: u64) -> String {
    let rows = SAMPLES + 10;
    format!(
        "create {} --start {start} --step {STEP} DS:{alias}:{ds}:{}:U:U \
         RRA:AVERAGE:0.5:1:{rows} RRA:MIN:0.5:1:{rows} RRA:MAX:0.5:1:{rows}",
        path.display(),
        2 * STEP
    )
}
