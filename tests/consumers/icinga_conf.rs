//! Issue 23: the Icinga 2 configuration (`icinga/redis-snmp.conf`) and the
//! same checks as Nagios commands (`icinga/nagios/redis-snmp.cfg`),
//! written from the catalogue: each check's OID, its wire type (a 64-bit
//! value needs check_snmp told how to read it), its scale (hundredths),
//! units and enumeration labels from `redis_snmp::metrics`, the memory
//! and clients thresholds from the agent's default alarms
//! (`redis_snmp::alarms::AlarmSpec::defaults`) and Puppet's staleness from
//! the agent's default `stale_after`. Which checks there are is [`CHECKS`].
//!
//! check_snmp (monitoring-plugins 2.3.3) facts the files follow, from its
//! source (plugins/check_snmp.c) and tried here:
//! - without `-P` it speaks SNMPv1, which cannot carry a Counter64:
//!   every 64-bit object is `noSuchName`, the service UNKNOWN. The files
//!   say `-P 2c`;
//! - it reads the type word snmpget prints and appends `c` (a counter) to
//!   the perfdata of every `Counter64:` value, gauges included. `-d 64:`
//!   (the delimiter the value follows) makes it read past `Counter64:`,
//!   so the type is not seen and no `c` is written; a threshold must then
//!   be set, or the value is printed as text (`0:` never alerts);
//! - with a threshold it compares the number, after `-M` (the multiplier:
//!   0.01 for hundredths, so thresholds are in percent); a range `N`
//!   alerts above N, `@A:B` inside A..B, `A:B` outside it;
//! - an object with no instance (no maxmemory: no `redisMemUsedOfMax`) is
//!   UNKNOWN: such checks are applied only where the host says the object
//!   applies.
//!
//! Regenerate: [`REGENERATE`].

use redis_snmp::alarms::{AlarmSpec, Direction};
use redis_snmp::config::NotifyConfig;
use redis_snmp::metrics::{
    puppet_objects, redis_objects, Conversion, Layout, ObjectDef, Source, INSTANCE_STATE,
    PUPPET_STATUS,
};
use redis_snmp::smi::Syntax;

/// How to regenerate, as a failing check says it.
pub const REGENERATE: &str =
    "REDIS_SNMP_WRITE_DOCS=1 cargo nextest run --features system-tests --test icinga generated";

/// Where the files are shipped, below the repository.
pub const ICINGA_FILE: &str = "icinga/redis-snmp.conf";
pub const NAGIOS_FILE: &str = "icinga/nagios/redis-snmp.cfg";

/// The SNMP version every command speaks: v1 cannot carry our 64-bit
/// objects.
pub const SNMP_VERSION: &str = "2c";

/// How a check judges its value.
#[derive(Clone, Copy)]
pub enum Judge {
    /// As the agent's default alarm of this name: WARNING from its rearm
    /// value, CRITICAL from its trigger.
    Alarm(&'static str),
    /// An enumeration: OK for these labels, CRITICAL for those, WARNING
    /// for the rest.
    States {
        ok: &'static [&'static str],
        critical: &'static [&'static str],
    },
    /// CRITICAL above Puppet's default staleness (seconds).
    Stale,
    /// Never alerts: a value for the graphs.
    Measure,
}

/// Where a check applies.
#[derive(Clone, Copy, PartialEq)]
pub enum Applies {
    /// Every instance of `host.vars.redis_snmp_instances`.
    EveryInstance,
    /// The instances whose entry sets this key true (the object has no
    /// instance elsewhere: no maxmemory, not a replica).
    InstanceWith(&'static str),
    /// Hosts with `vars.redis_snmp_puppet = true`.
    Puppet,
}

pub struct Check {
    /// The service name (a prefix to the instance's name for Redis).
    pub service: &'static str,
    /// The MIB object read.
    pub object: &'static str,
    /// The perfdata label.
    pub label: &'static str,
    pub judge: Judge,
    pub applies: Applies,
}

/// The checks, as the issue lists them: memory and clients of their
/// limits, instance state, replication, Puppet's last run; and the memory
/// used, a 64-bit gauge, for the graphs.
pub const CHECKS: &[Check] = &[
    Check {
        service: "redis-state",
        object: "redisInstanceState",
        label: "state",
        judge: Judge::States {
            ok: &["up"],
            critical: &["down"],
        },
        applies: Applies::EveryInstance,
    },
    Check {
        service: "redis-memory",
        object: "redisMemUsedOfMax",
        label: "memory_of_maxmemory",
        judge: Judge::Alarm("memory"),
        applies: Applies::InstanceWith("maxmemory"),
    },
    Check {
        service: "redis-clients",
        object: "redisCliUsedOfMax",
        label: "clients_of_maxclients",
        judge: Judge::Alarm("clients"),
        applies: Applies::EveryInstance,
    },
    Check {
        service: "redis-memory-used",
        object: "redisMemUsed",
        label: "used_memory",
        judge: Judge::Measure,
        applies: Applies::EveryInstance,
    },
    Check {
        service: "redis-replication",
        object: "redisReplLinkStatus",
        label: "master_link",
        judge: Judge::States {
            ok: &["up"],
            critical: &["down"],
        },
        applies: Applies::InstanceWith("replica"),
    },
    Check {
        service: "puppet-last-run",
        object: "puppetLastRunStatus",
        label: "last_run_status",
        judge: Judge::States {
            ok: &["unchanged", "changed"],
            critical: &["failed"],
        },
        applies: Applies::Puppet,
    },
    Check {
        service: "puppet-last-run-age",
        object: "puppetLastRunAge",
        label: "last_run_age",
        judge: Judge::Stale,
        applies: Applies::Puppet,
    },
];

/// The catalogue's object named `name`.
pub fn object(name: &str) -> &'static ObjectDef {
    redis_objects()
        .chain(puppet_objects())
        .find(|d| d.name == name)
        .unwrap_or_else(|| panic!("no object {name} in the catalogue"))
}

/// Its numeric OID, without the instance.
pub fn oid(def: &ObjectDef) -> String {
    let oid = Layout::default_layout().object_oid(def).to_string();
    oid.trim_start_matches('.').to_string()
}

/// The labels of an enumerated object.
fn labels(def: &ObjectDef) -> &'static [(&'static str, i32)] {
    match def.source {
        Source::Info {
            conversion: Conversion::Enum(labels),
            ..
        } => labels,
        _ => match def.name {
            "redisInstanceState" => INSTANCE_STATE,
            "puppetLastRunStatus" => PUPPET_STATUS,
            other => panic!("{other}: no enumeration known to the generator"),
        },
    }
}

/// The numbers of `names` among `labels`, as one range `lo:hi` (they must
/// be consecutive).
fn range(def: &ObjectDef, names: &[&str]) -> (i32, i32) {
    let mut numbers: Vec<i32> = names
        .iter()
        .map(|n| {
            labels(def)
                .iter()
                .find(|(l, _)| l == n)
                .unwrap_or_else(|| panic!("{}: no label {n}", def.name))
                .1
        })
        .collect();
    numbers.sort_unstable();
    let (lo, hi) = (numbers[0], numbers[numbers.len() - 1]);
    assert_eq!(
        (hi - lo + 1) as usize,
        numbers.len(),
        "{}: {names:?} are not consecutive",
        def.name
    );
    (lo, hi)
}

/// What a value is divided by to be in its units (hundredths of a
/// percent to percent).
fn divisor(def: &ObjectDef) -> u32 {
    match def.source {
        Source::Info {
            conversion: Conversion::PercentOf(_),
            ..
        } => 100,
        Source::Info {
            conversion: Conversion::Scaled(n),
            ..
        } => n,
        _ => 1,
    }
}

fn alarm(name: &str) -> AlarmSpec {
    AlarmSpec::defaults()
        .into_iter()
        .find(|a| a.name == name)
        .unwrap_or_else(|| panic!("no default alarm {name}"))
}

/// A threshold in the object's units: check_snmp's `N` alerts above N, so
/// "at or above `at`" is one step of the raw value below it.
fn at_or_above(at: i64, divisor: u32) -> String {
    if divisor == 1 {
        (at - 1).to_string()
    } else {
        let digits = divisor.ilog10() as usize;
        format!("{:.*}", digits, (at - 1) as f64 / f64::from(divisor))
    }
}

/// The check_snmp options of a check, beside host, port, version and
/// community: (flag, value) in order.
pub fn options(check: &Check) -> Vec<(&'static str, String)> {
    let def = object(check.object);
    assert_eq!(def.name, check.object);
    let mut opts = vec![("-l", check.label.to_string())];
    let wide = def.syntax.wire_type() == Syntax::Counter64.wire_type();
    if wide {
        opts.push(("-d", "64:".into()));
    }
    let div = divisor(def);
    if div != 1 {
        opts.push(("-M", format!("{}", 1.0 / f64::from(div))));
    }
    let units = match (div, def.units) {
        (1, Some(u)) => Some(u.to_string()),
        (_, Some("percent")) => Some("%".into()),
        (_, Some(u)) => Some(u.to_string()),
        (_, None) => None,
    };
    if let Some(u) = units {
        opts.push(("-u", u));
    }
    match check.judge {
        Judge::Alarm(name) => {
            let a = alarm(name);
            assert_eq!(
                a.object, check.object,
                "alarm {name} watches another object"
            );
            assert!(
                matches!(a.direction, Direction::Above),
                "alarm {name} is not an upper limit"
            );
            opts.push(("-w", at_or_above(a.rearm, div)));
            opts.push(("-c", at_or_above(a.trigger, div)));
        }
        Judge::States { ok, critical } => {
            let (lo, hi) = range(def, ok);
            let (clo, chi) = range(def, critical);
            opts.push(("-w", format!("{lo}:{hi}")));
            opts.push(("-c", format!("@{clo}:{chi}")));
        }
        Judge::Stale => {
            let secs = NotifyConfig::default().puppet_stale_after.as_secs();
            opts.push(("-c", secs.to_string()));
        }
        Judge::Measure => {
            assert!(
                wide,
                "{}: a measure needs no threshold unless 64-bit",
                def.name
            );
            opts.push(("-w", "0:".into()));
        }
    }
    opts
}

/// The Icinga 2 variable each check_snmp option is set through.
fn icinga_var(flag: &str) -> &'static str {
    match flag {
        "-l" => "snmp_label",
        "-d" => "redis_snmp_delimiter",
        "-M" => "redis_snmp_multiplier",
        "-u" => "snmp_units",
        "-w" => "snmp_warn",
        "-c" => "snmp_crit",
        other => panic!("no variable for {other}"),
    }
}

/// The instance suffix of a check's OID: `.<index>` of the instance, or
/// `.0` for a Puppet scalar.
fn is_per_instance(check: &Check) -> bool {
    check.applies != Applies::Puppet
}

const ICINGA_HEADER: &str = "\
/*
 * redis-snmp: Icinga 2 checks of Redis instances and Puppet through the
 * redis-snmp AgentX subagent (REDIS-SERVER-MIB, PUPPET-AGENT-MIB), with
 * check_snmp of monitoring-plugins.
 *
 * Generated from the agent's catalogue (src/metrics/: OIDs, types, units,
 * enumerations; src/alarms.rs: the default thresholds) by
 * tests/consumers/icinga_conf.rs; edit those, not this file.
 *
 * SNMPv2c: SNMPv1 cannot carry the 64-bit objects (check_snmp speaks v1
 * unless told otherwise, and every such object is then UNKNOWN).
 * Numeric OIDs: no MIB is needed where Icinga runs.
 *
 * Install: copy to /etc/icinga2/conf.d/ (or a zone's directory), and give
 * each host the agent runs on (see icinga/README.md):
 *
 *   vars.snmp_community = \"public\"        // and vars.snmp_port if not 161
 *   vars.redis_snmp_instances[\"main\"] = { index = 1, maxmemory = true }
 *   vars.redis_snmp_instances[\"cache\"] = { index = 2, replica = true }
 *   vars.redis_snmp_puppet = true
 *
 * index: the instance's place in the agent's configuration, from 1
 * (redisInstanceIndex). maxmemory = true where maxmemory is set (no limit:
 * no redisMemUsedOfMax, the check would be UNKNOWN); replica = true on
 * replicas (redisReplLinkStatus exists only there).
 * vars.redis_snmp_check_interval sets the hosts' check interval (1m).
 */
";

/// The whole of `icinga/redis-snmp.conf`.
pub fn icinga_conf() -> String {
    let mut out = String::from(ICINGA_HEADER);
    out.push_str(&format!(
        "
object CheckCommand \"redis-snmp\" {{
  import \"snmp\"

  arguments += {{
    \"-d\" = {{
      value = \"$redis_snmp_delimiter$\"
      description = \"Read the value after this text: 64: for 64-bit gauges, so that check_snmp does not append the counter unit c\"
    }}
    \"-M\" = {{
      value = \"$redis_snmp_multiplier$\"
      description = \"Multiply the value: 0.01 for hundredths of a percent\"
    }}
  }}

  vars.snmp_version = \"{SNMP_VERSION}\"
}}
"
    ));
    for check in CHECKS {
        let def = object(check.object);
        let oid = oid(def);
        out.push('\n');
        out.push_str(&format!("/* {}: {} */\n", check.service, def.name));
        if is_per_instance(check) {
            out.push_str(&format!(
                "apply Service \"{}-\" for (name => instance in host.vars.redis_snmp_instances) {{\n",
                check.service
            ));
        } else {
            out.push_str(&format!("apply Service \"{}\" {{\n", check.service));
        }
        out.push_str("  check_command = \"redis-snmp\"\n");
        out.push_str("  check_interval = 1m\n  retry_interval = 30s\n");
        out.push_str(
            "  if (host.vars.redis_snmp_check_interval) {\n    \
             check_interval = host.vars.redis_snmp_check_interval\n    \
             retry_interval = host.vars.redis_snmp_check_interval\n  }\n",
        );
        if is_per_instance(check) {
            out.push_str(&format!("  vars.snmp_oid = \"{oid}.\" + instance.index\n"));
        } else {
            out.push_str(&format!("  vars.snmp_oid = \"{oid}.0\"\n"));
        }
        for (flag, value) in options(check) {
            out.push_str(&format!("  vars.{} = \"{value}\"\n", icinga_var(flag)));
        }
        match check.applies {
            Applies::EveryInstance => {}
            Applies::InstanceWith(key) => {
                out.push_str(&format!("  assign where instance.{key} == true\n"));
            }
            Applies::Puppet => out.push_str("  assign where host.vars.redis_snmp_puppet == true\n"),
        }
        out.push_str("}\n");
    }
    out
}

const NAGIOS_HEADER: &str = "\
# redis-snmp: Nagios commands for Redis instances and Puppet through the
# redis-snmp AgentX subagent (REDIS-SERVER-MIB, PUPPET-AGENT-MIB): the checks
# of icinga/redis-snmp.conf as plain check_snmp command lines.
#
# Generated from the agent's catalogue by tests/consumers/icinga_conf.rs;
# edit that, not this file.
#
# SNMPv2c (-P 2c): SNMPv1 cannot carry the 64-bit objects. The host gives its
# community and port as custom variables, the service the instance's index
# (its place in the agent's configuration, from 1) as $ARG1$:
#
#   define host {
#       host_name        redis1
#       address          192.0.2.10
#       _SNMP_COMMUNITY  public
#       _SNMP_PORT       161
#       ...
#   }
#   define service {
#       host_name            redis1
#       service_description  redis-memory-main
#       check_command        check_redis_snmp_memory!1
#       ...
#   }
#
# check_redis_snmp_memory only where maxmemory is set, and
# check_redis_snmp_replication only on replicas: elsewhere the object has no
# instance and the check is UNKNOWN.
";

/// A check's `command_name`.
pub fn nagios_command(check: &Check) -> String {
    format!(
        "check_redis_snmp_{}",
        check.service.trim_start_matches("redis-").replace('-', "_")
    )
}

/// A check's `command_line`.
pub fn nagios_command_line(check: &Check) -> String {
    let def = object(check.object);
    let instance = if is_per_instance(check) {
        "$ARG1$"
    } else {
        "0"
    };
    let mut line = format!(
        "$USER1$/check_snmp -H $HOSTADDRESS$ -p $_HOSTSNMP_PORT$ -P {SNMP_VERSION} -C $_HOSTSNMP_COMMUNITY$ -o {}.{instance}",
        oid(def)
    );
    for (flag, value) in options(check) {
        line.push_str(&format!(" {flag} '{value}'"));
    }
    line
}

/// The whole of `icinga/nagios/redis-snmp.cfg`.
pub fn nagios_cfg() -> String {
    let mut out = String::from(NAGIOS_HEADER);
    for check in CHECKS {
        out.push_str(&format!(
            "\n# {}: {}\ndefine command {{\n    command_name    {}\n    command_line    {}\n}}\n",
            check.service,
            check.object,
            nagios_command(check),
            nagios_command_line(check)
        ));
    }
    out
}
