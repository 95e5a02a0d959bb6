//! Issue 23: snmptt (Debian's `snmptt` 1.5) reads our notifications right.
//!
//! - The MIB text suits line-based converters. `snmpttconvertmib` reads a
//!   MIB line by line (/usr/sbin/snmpttconvertmib, snmptt 1.5): any line
//!   with `NOTIFICATION-TYPE` or `TRAP-TYPE` in it that does not start with
//!   blanks before that word or hold a comma before it is taken for a
//!   definition named by the word before it (a REVISION line "imports of
//!   NOTIFICATION-TYPE and …" once made an event `imports`); a
//!   DESCRIPTION runs to the next line holding `::=`; `--#` lines are its
//!   directives; and an event's FORMAT is the first line of the
//!   DESCRIPTION. So no description line may name those macros, hold `::=`,
//!   start with `--#` or with a clause keyword (`OBJECTS`, `DESCRIPTION`,
//!   … where a converter reading line starts takes it for syntax), and
//!   each notification's DESCRIPTION opens with a
//!   line that is one whole sentence. Checked by those rules, and by the
//!   real `snmpttconvertmib`: exactly one event per notification of the
//!   catalogue, each at its OID, none failed, each FORMAT the sentence; a
//!   copy with the old REVISION line fails both.
//! - `snmptt/redis-snmp.conf` is what the catalogue generates
//!   (`tests/consumers/snmptt_conf.rs`), and its severities are the
//!   catalogue's, as are the OpenNMS events' (one fact, two files).
//! - With servers: a real `snmptt`, run by a real `snmptrapd` as its
//!   `traphandle` (standalone mode, a private ini), translates the agent's
//!   real notifications (Redis killed, Redis back, a failed `puppet
//!   apply`) with the shipped severities and texts; a copy of the file
//!   with a wrong OID leaves the notification unknown.
//!
//! Without `snmptt`/`snmpttconvertmib` the tests that run them say SKIP
//! and pass; scripts/install-test-deps.sh installs them.

// Starts real servers and tools: built only with the `system-tests`
// feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

#[path = "consumers/generated.rs"]
mod generated;
#[path = "consumers/snmptt_conf.rs"]
mod snmptt_conf;

use generated::{check, mib_text, notification_description, repo};
use redis_snmp::metrics::NotificationDef;
use snmptt_conf::{module, notification_oid, notifications, snmptt_conf, summary, REGENERATE};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use testkit::{mib_path, wait_until, AgentConfig, PuppetApply, Redis, Snmpd, Snmptrapd};

const MODULES: [&str; 2] = ["REDIS-SERVER-MIB", "PUPPET-AGENT-MIB"];
const SNMPTT: &str = "/usr/sbin/snmptt";
const CONVERTMIB: &str = "/usr/sbin/snmpttconvertmib";

/// The old REVISION line that made snmpttconvertmib invent an event.
const BOGUS_REVISION_LINE: &str =
    "         imports of NOTIFICATION-TYPE and NOTIFICATION-GROUP, the";

fn skip_without(tool: &str, test: &str) -> bool {
    if Path::new(tool).is_file() {
        return false;
    }
    eprintln!(
        "SKIP {test}: {tool} is missing (Debian package snmptt; scripts/install-test-deps.sh)"
    );
    true
}

// ---------------------------------------------------------------------------
// The MIB text, by snmpttconvertmib's rules

/// The SMIv2 clause and module keywords: a line-based converter that
/// looks at the start of a line (snmpttconvertmib's `OBJECTS`/`VARIABLES`/
/// `ENTERPRISE`/`DESCRIPTION` matches among them) would take a line of
/// text starting with one for syntax.
const CLAUSES: &[&str] = &[
    "IMPORTS",
    "BEGIN",
    "END",
    "DESCRIPTION",
    "OBJECTS",
    "VARIABLES",
    "ENTERPRISE",
    "SYNTAX",
    "STATUS",
    "REVISION",
    "LAST-UPDATED",
    "ORGANIZATION",
    "CONTACT-INFO",
    "MAX-ACCESS",
    "INDEX",
    "AUGMENTS",
    "UNITS",
    "REFERENCE",
    "DEFVAL",
    "DISPLAY-HINT",
    "OBJECT-TYPE",
    "MODULE-IDENTITY",
    "OBJECT-GROUP",
    "NOTIFICATION-GROUP",
    "MODULE-COMPLIANCE",
    "TEXTUAL-CONVENTION",
    "MANDATORY-GROUPS",
    "GROUP",
    "OBJECT",
];

/// What a line-based converter would misread in a MIB's text: quoted text
/// naming a definition macro or holding `::=`, a `--#` directive in it,
/// and a notification whose DESCRIPTION does not open with a line that is
/// one sentence.
fn line_tool_problems(mib: &str, defs: &[&NotificationDef]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut quoted = false;
    for (n, line) in mib.lines().enumerate() {
        // The part of the line inside quotes (a line opening or closing a
        // quoted text holds both kinds; the quoted part is what counts).
        let mut text = String::new();
        for c in line.chars() {
            if c == '"' {
                quoted = !quoted;
            } else if quoted {
                text.push(c);
            }
        }
        for word in ["NOTIFICATION-TYPE", "TRAP-TYPE", "::=", "DEFINITIONS"] {
            if text.contains(word) {
                problems.push(format!("line {}: {word} in quoted text: {line}", n + 1));
            }
        }
        if text.trim_start().starts_with("--#") {
            problems.push(format!(
                "line {}: a --# directive in quoted text: {line}",
                n + 1
            ));
        }
        let first_word = text.split_whitespace().next().unwrap_or("");
        if CLAUSES.contains(&first_word.trim_end_matches([',', '.', ':', ';'])) {
            problems.push(format!(
                "line {}: quoted text starts with the clause {first_word}: {line}",
                n + 1
            ));
        }
    }
    for def in defs {
        let Some(lines) = notification_description(mib, def.name) else {
            problems.push(format!("{}: no DESCRIPTION", def.name));
            continue;
        };
        let first = lines.first().map(String::as_str).unwrap_or("");
        // One sentence: it ends the line, and no other ends before it.
        let sentence = first.ends_with('.') && !first[..first.len() - 1].contains(". ");
        let next_starts_anew = lines
            .get(1)
            .is_none_or(|l| l.is_empty() || l.starts_with(|c: char| c.is_uppercase()));
        if !sentence || !next_starts_anew || first.len() > 72 {
            problems.push(format!(
                "{}: the DESCRIPTION's first line is not one whole sentence: {first:?}",
                def.name
            ));
        }
    }
    problems
}

fn defs_of(module_name: &str) -> Vec<&'static NotificationDef> {
    notifications()
        .filter(|d| module(d) == module_name)
        .collect()
}

#[test]
fn mib_text_reads_right_by_the_converters_rules() {
    for m in MODULES {
        let problems = line_tool_problems(&mib_text(m), &defs_of(m));
        assert!(problems.is_empty(), "{m}:\n{}", problems.join("\n"));
    }
    // The rules catch what misled snmpttconvertmib, and a cut sentence.
    let redis = mib_text("REDIS-SERVER-MIB");
    let defs = defs_of("REDIS-SERVER-MIB");
    let with_old_line = with_bogus_revision_line(&redis);
    let problems = line_tool_problems(&with_old_line, &defs);
    assert!(
        problems
            .iter()
            .any(|p| p.contains("NOTIFICATION-TYPE in quoted text")),
        "{problems:?}"
    );
    let clause = redis.replacen(
        "         notification macros to the imports, the",
        "         OBJECTS and groups were added, the",
        1,
    );
    let problems = line_tool_problems(&clause, &defs);
    assert!(
        problems
            .iter()
            .any(|p| p.contains("starts with the clause OBJECTS")),
        "{problems:?}"
    );
    let first = summary(defs[0]);
    let cut = redis.replacen(
        &format!("\"{first}\n"),
        "\"Sent when a poll of a Redis instance fails after the previous\n",
        1,
    );
    assert_ne!(
        cut, redis,
        "{first:?} is not the first line of its DESCRIPTION"
    );
    let problems = line_tool_problems(&cut, &defs);
    assert!(
        problems.iter().any(|p| p.contains(defs[0].name)),
        "{problems:?}"
    );
}

/// REDIS-SERVER-MIB with its REVISION 202611221610Z text as it was.
fn with_bogus_revision_line(mib: &str) -> String {
    let now = "         notification macros to the imports, the";
    assert!(mib.contains(now), "the reworded REVISION line moved");
    mib.replacen(now, BOGUS_REVISION_LINE, 1)
}

/// Runs snmpttconvertmib on `file` (the module `module_name`), with the
/// base modules and `file`'s directory for Net-SNMP, and checks what it
/// wrote: one event per notification at its OID, none failed, each FORMAT
/// the DESCRIPTION's sentence.
fn convert_and_check(file: &Path, module_name: &str) -> Result<usize, String> {
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("out.conf");
    let dirs = format!("{}:{}", file.parent().unwrap().display(), mib_path());
    let run = Command::new(CONVERTMIB)
        .arg(format!("--in={}", file.display()))
        .arg(format!("--out={}", out.display()))
        .env("MIBDIRS", dirs)
        .output()
        .expect("running snmpttconvertmib");
    let stdout = String::from_utf8_lossy(&run.stdout);
    if !run.status.success() {
        return Err(format!("snmpttconvertmib: {}\n{stdout}", run.status));
    }
    let failed = stdout
        .lines()
        .find_map(|l| l.strip_prefix("Failed translations:"))
        .map(str::trim)
        .ok_or_else(|| format!("no count of failed translations:\n{stdout}"))?;
    let conf = std::fs::read_to_string(&out).unwrap_or_default();
    let mut events: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut last = None;
    for line in conf.lines() {
        if let Some(rest) = line.strip_prefix("EVENT ") {
            let mut words = rest.split_whitespace();
            let name = words.next().unwrap_or("").to_string();
            let oid = words.next().unwrap_or("").to_string();
            if events.insert(name.clone(), (oid, String::new())).is_some() {
                return Err(format!("two events named {name}"));
            }
            last = Some(name);
        } else if let (Some(format), Some(name)) = (line.strip_prefix("FORMAT "), &last) {
            events.get_mut(name).unwrap().1 = format.to_string();
        }
    }
    let mut problems = Vec::new();
    if failed != "0" {
        problems.push(format!("{failed} failed translations"));
    }
    let defs = defs_of(module_name);
    for def in &defs {
        match events.remove(def.name) {
            None => problems.push(format!("no event for {}", def.name)),
            Some((oid, format)) => {
                if oid != notification_oid(def) {
                    problems.push(format!("{} at {oid}", def.name));
                }
                let want = format!("{} $*", summary(def));
                if format != want {
                    problems.push(format!("{}: FORMAT {format:?}, not {want:?}", def.name));
                }
            }
        }
    }
    for name in events.keys() {
        problems.push(format!("an event {name} that is no notification"));
    }
    if problems.is_empty() {
        Ok(defs.len())
    } else {
        Err(format!("{}:\n{}", file.display(), problems.join("\n")))
    }
}

#[test]
fn snmpttconvertmib_makes_one_event_per_notification() {
    if skip_without(
        CONVERTMIB,
        "snmpttconvertmib_makes_one_event_per_notification",
    ) {
        return;
    }
    for m in MODULES {
        let file = repo().join("mibs").join(format!("{m}.txt"));
        let n = convert_and_check(&file, m).unwrap_or_else(|e| panic!("{e}"));
        println!("{m}: {n} events, one per notification");
    }
    // The old REVISION text: a bogus event (or a failed translation).
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("REDIS-SERVER-MIB.txt");
    std::fs::write(
        &copy,
        with_bogus_revision_line(&mib_text("REDIS-SERVER-MIB")),
    )
    .unwrap();
    let err = convert_and_check(&copy, "REDIS-SERVER-MIB").expect_err("the old text converts");
    assert!(
        err.contains("imports") || err.contains("failed translations"),
        "{err}"
    );
    println!("the old REVISION text: {err}");
}

// ---------------------------------------------------------------------------
// The shipped file

fn shipped() -> PathBuf {
    repo().join(snmptt_conf::SHIPPED)
}

#[test]
fn generated_snmptt_conf_is_the_shipped_one() {
    let generated = snmptt_conf();
    check(&shipped(), &generated, true, REGENERATE).unwrap_or_else(|e| panic!("{e}"));
    // A changed severity is caught, with the diff and the way back.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("redis-snmp.conf");
    let from = "EVENT redisInstanceDown .1.3.6.1.4.1.20267.400.0.1 \"Status Events\" Critical";
    assert!(generated.contains(from), "{from} is not generated");
    std::fs::write(
        &copy,
        generated.replacen(from, &from.replace("Critical", "Normal"), 1),
    )
    .unwrap();
    let err = check(&copy, &generated, false, REGENERATE).expect_err("a changed severity");
    assert!(
        err.contains(&format!("+{from}")) && err.contains(REGENERATE),
        "{err}"
    );
}

/// The severity of each OpenNMS event, by its notification's name (the
/// last part of its UEI).
fn opennms_severities(xml: &str) -> BTreeMap<String, String> {
    xml.split("<event>")
        .skip(1)
        .filter_map(|event| {
            let uei = event.split("<uei>").nth(1)?.split("</uei>").next()?;
            let severity = event
                .split("<severity>")
                .nth(1)?
                .split("</severity>")
                .next()?;
            Some((uei.rsplit('/').next()?.to_string(), severity.to_string()))
        })
        .collect()
}

fn severity_mismatches(xml: &str) -> Vec<String> {
    let found = opennms_severities(xml);
    notifications()
        .filter_map(|def| {
            let have = found.get(def.name).map(String::as_str);
            (have != Some(def.severity.name())).then(|| {
                format!(
                    "{}: OpenNMS says {have:?}, the catalogue {}",
                    def.name,
                    def.severity.name()
                )
            })
        })
        .collect()
}

/// One fact, two files: the OpenNMS events carry the catalogue's
/// severities, as snmptt's file does by generation.
#[test]
fn opennms_events_carry_the_catalogues_severities() {
    let path = repo().join("opennms/etc/events/redis-snmp.events.xml");
    let xml = std::fs::read_to_string(&path).unwrap();
    let problems = severity_mismatches(&xml);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let broken = xml.replacen(
        "<severity>Critical</severity>",
        "<severity>Major</severity>",
        1,
    );
    assert_eq!(severity_mismatches(&broken).len(), 1);
}

// ---------------------------------------------------------------------------
// The real snmptt, fed the agent's real notifications

/// A private snmptt ini: standalone mode (one snmptt a notification, run
/// by snmptrapd), the MIBs loaded through Net-SNMP's Perl module (values
/// read as names), logs in `dir`, no syslog, no DNS.
fn snmptt_ini(dir: &Path, conf: &Path) -> PathBuf {
    let ini = dir.join("snmptt.ini");
    std::fs::write(
        &ini,
        format!(
            "[General]\nmode = standalone\nmultiple_event = 1\ndns_enable = 0\n\
             net_snmp_perl_enable = 1\ntranslate_integers = 1\ntranslate_log_trap_oid = 1\n\
             translate_value_oids = 1\ntranslate_varname_oid_format = 1\n\
             ipv6_enable = 0\n\
             [Logging]\nstdout_enable = 0\nlog_enable = 1\nlog_file = {d}/snmptt.log\n\
             log_system_enable = 1\nlog_system_file = {d}/system.log\n\
             unknown_trap_log_enable = 1\nunknown_trap_log_file = {d}/unknown.log\n\
             syslog_enable = 0\nsyslog_system_enable = 0\n\
             [Debugging]\nDEBUGGING = 0\n\
             [TrapFiles]\nsnmptt_conf_files = <<END\n{}\nEND\n",
            conf.display(),
            d = dir.display()
        ),
    )
    .unwrap();
    ini
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The line of snmptt's log for `name`, waiting up to `limit`.
fn logged(log: &Path, name: &str, limit: Duration) -> Option<String> {
    let mut found = None;
    wait_until(limit, || {
        found = read(log)
            .lines()
            .find(|l| l.contains(&format!(" {name} ")))
            .map(String::from);
        found.is_some()
    });
    found
}

#[test]
fn snmptt_translates_the_agents_notifications_with_the_shipped_file() {
    if skip_without(
        SNMPTT,
        "snmptt_translates_the_agents_notifications_with_the_shipped_file",
    ) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let (good, broken) = (work.path().join("shipped"), work.path().join("broken"));
    std::fs::create_dir_all(&good).unwrap();
    std::fs::create_dir_all(&broken).unwrap();
    // The broken copy: redisInstanceDown's OID off by one arc.
    let shipped_text = read(&shipped());
    let down = notification_oid(redis_snmp::metrics::RedisEvent::InstanceDown.def());
    let wrong = shipped_text.replacen(
        &format!("redisInstanceDown {down} "),
        &format!("redisInstanceDown {down}9 "),
        1,
    );
    assert_ne!(wrong, shipped_text);
    std::fs::write(broken.join("redis-snmp.conf"), wrong).unwrap();
    let good_ini = snmptt_ini(&good, &shipped());
    let broken_ini = snmptt_ini(&broken, &broken.join("redis-snmp.conf"));
    // snmptrapd runs each handler with its own environment: Net-SNMP's
    // Perl module in snmptt finds the MIBs through MIBDIRS.
    let handler = |ini: &Path| {
        format!(
            "traphandle default /usr/bin/env MIBDIRS={} MIBS=ALL {SNMPTT} --ini={}",
            mib_path(),
            ini.display()
        )
    };
    let trapd = Snmptrapd::start_with_access(&format!(
        "authCommunity log,execute public\n{}\n{}",
        handler(&good_ini),
        handler(&broken_ini)
    ));
    let snmpd = Snmpd::sending_to(&trapd);
    let mut redis = Redis::start();
    let puppet = PuppetApply::new();
    let dir = tempfile::tempdir().unwrap();
    let _agent = AgentConfig::new(&snmpd)
        .redis("cache", &redis.address(), "")
        .puppet(&puppet, "")
        .start(dir.path());
    std::thread::sleep(Duration::from_millis(1500));
    let log = good.join("snmptt.log");
    let limit = Duration::from_secs(10);

    let killed = Instant::now();
    redis.stop();
    let line = logged(&log, "redisInstanceDown", limit).unwrap_or_else(|| {
        panic!(
            "snmptt logged no redisInstanceDown; snmptt: {}\nsystem: {}\nunknown: {}\nsnmptrapd: {}",
            read(&log),
            read(&good.join("system.log")),
            read(&good.join("unknown.log")),
            trapd.log()
        )
    });
    println!("after {:?}: {line}", killed.elapsed());
    let down_summary = summary(redis_snmp::metrics::RedisEvent::InstanceDown.def());
    for want in [
        " redisInstanceDown Critical ".to_string(),
        format!("{down_summary} Instance cache: "),
        format!("redisInstanceAddress.1:{}", redis.address()),
        "redisInstanceLastError.1:".into(),
    ] {
        assert!(line.contains(&want), "{want:?} not in {line}");
    }

    redis.start_again();
    let line = logged(&log, "redisInstanceUp", limit).expect("redisInstanceUp");
    println!("{line}");
    let up_summary = summary(redis_snmp::metrics::RedisEvent::InstanceUp.def());
    assert!(
        line.contains(" redisInstanceUp Normal ")
            && line.contains(&format!("{up_summary} Instance cache: ")),
        "{line}"
    );

    let t = puppet.target().display().to_string();
    let manifest = format!(
        "exec {{ 'fails': command => '/bin/false' }}\n\
         file {{ '{t}/after.txt': ensure => file, content => \"x\\n\", require => Exec['fails'] }}\n"
    );
    let (code, _) = puppet.apply("failed", &manifest, &[]);
    assert_ne!(code, 0, "the run did not fail");
    let line = logged(&log, "puppetRunFailed", limit).expect("puppetRunFailed");
    println!("{line}");
    let failed_summary = summary(redis_snmp::metrics::PuppetEvent::RunFailed.def());
    for want in [
        " puppetRunFailed Critical ".to_string(),
        format!("{failed_summary} Host "),
        "puppetLastRunStatus.0:failed".into(),
    ] {
        assert!(line.contains(&want), "{want:?} not in {line}");
    }

    // The broken copy knows no redisInstanceDown: snmptt files it as
    // unknown, and translates the rest as the shipped file does.
    let broken_log = read(&broken.join("snmptt.log"));
    assert!(!broken_log.contains(" redisInstanceDown "), "{broken_log}");
    assert!(
        broken_log.contains(" redisInstanceUp Normal "),
        "{broken_log}"
    );
    let unknown = read(&broken.join("unknown.log"));
    assert!(
        unknown.contains("redisInstanceDown") || unknown.contains(&down),
        "the broken copy's unknown log: {unknown}"
    );
    let unknown = read(&good.join("unknown.log"));
    assert!(
        !unknown.contains("REDIS-SERVER-MIB"),
        "the shipped file left some unknown: {unknown}"
    );
}
