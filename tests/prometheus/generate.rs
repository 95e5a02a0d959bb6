//! Issue 23: the files of `prometheus/` written from the catalogue, as the
//! OpenNMS data collection is (`tests/opennms/collection.rs`): the
//! exporter's modules from `redis_snmp::metrics` (`src/metrics/prometheus.rs`),
//! each object's type from its syntax, its scale from its source
//! (`mibtool::modules::scale`, which the MIB's DISPLAY-HINTs are checked
//! against), the alert rules from the agent's default alarms
//! (`AlarmSpec::defaults`) and notification settings (`NotifyConfig`).
//! The prose is here.
//!
//! Regenerate after a catalogue change:
//! `REDIS_SNMP_WRITE_DOCS=1 cargo nextest run --features system-tests --test prometheus generated`
//! (the 0.21 `snmp.yml` is then written by Debian's own generator).

use super::modules::scale;
use redis_snmp::alarms::{AlarmSpec, Direction};
use redis_snmp::config::{NotifyConfig, DEFAULT_CERTIFICATE_WARNING_DAYS, DEFAULT_REFRESH_SECS};
use redis_snmp::metrics::{
    puppet_objects, redis_objects, table_of, ExporterModule, InstanceState, ObjectDef,
    PuppetCertificateField, PuppetCertificateKind, PuppetField, PuppetRunStatus, RowIndex, Source,
    StatusField, EXPORTER_MODULES, NOT_EXPORTED,
};
use redis_snmp::smi::Syntax;
use std::path::Path;

/// How to regenerate, as a failing check says it.
pub const REGENERATE: &str =
    "REDIS_SNMP_WRITE_DOCS=1 cargo nextest run --features system-tests --test prometheus generated";

/// The two generations of snmp_exporter whose files differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// Debian 12's prometheus-snmp-exporter 0.21: `auth` and `version` in
    /// each module; no `scale` or `help` override (its generator refuses
    /// the keys).
    V021,
    /// snmp_exporter 0.28 and later: `auths:` apart from the modules,
    /// `scale` (0.25+) and `help` (0.27+) overrides.
    V028,
}

impl Flavour {
    pub const ALL: [Flavour; 2] = [Flavour::V021, Flavour::V028];

    /// The directory of its files under `prometheus/`.
    pub fn dir(self) -> &'static str {
        match self {
            Flavour::V021 => "snmp_exporter-0.21",
            Flavour::V028 => "snmp_exporter-0.28",
        }
    }

    fn scales(self) -> bool {
        self == Flavour::V028
    }
}

/// The objects a module walks.
pub fn objects_of(module: &ExporterModule) -> impl Iterator<Item = &'static ObjectDef> {
    module.objects.iter().flat_map(|a| a.iter())
}

/// Whether the exporter gives the object as a state set: one series per
/// named number, 1 for the one the object has.
pub fn is_state_set(def: &ObjectDef) -> bool {
    matches!(def.syntax, Syntax::Enum | Syntax::TruthValue)
}

/// What the exporter divides the served integer by, where the flavour can.
pub fn divisor(def: &ObjectDef, flavour: Flavour) -> Option<u32> {
    scale(def).filter(|_| flavour.scales())
}

fn hundredths(factor: u32) -> &'static str {
    match factor {
        100 => "hundredths",
        1000 => "thousandths",
        other => panic!("no words for a scale of {other}"),
    }
}

/// A decimal for YAML and PromQL: `0.01`, `90`, `1209600`.
fn decimal(value: f64) -> String {
    let text = format!("{value:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A YAML string in double quotes.
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

fn comment(out: &mut String, indent: &str, text: &str) {
    let mut line = format!("{indent}#");
    for word in text.split_whitespace() {
        if line.len() + 1 + word.len() > 88 && line.len() > indent.len() + 1 {
            out.push_str(&line);
            out.push('\n');
            line = format!("{indent}#");
        }
        line.push(' ');
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
}

const HEADER: &[&str] = &[
    "redis-snmp: what Prometheus's snmp_exporter reads of REDIS-SERVER-MIB \
     (.1.3.6.1.4.1.20267.400) and PUPPET-AGENT-MIB (.1.3.6.1.4.1.20267.401), \
     served by the redis-snmp AgentX subagent through Net-SNMP's snmpd. SNMPv2c \
     (or v3): SNMPv1 cannot carry the 64-bit objects.",
    "Generated from the agent's catalogue (src/metrics/) by \
     tests/prometheus/generate.rs; edit those, not this file. See prometheus/README.md.",
    "Every REDISUnsigned64 object is a 64-bit gauge carried as a Counter64 (SMIv2 has no \
     64-bit gauge); the generator types every Counter64 as a counter, so each is \
     overridden to a gauge here. Enumerations and TruthValues are state sets: one \
     series per named value, 1 for the one the object has. Rows of the instances' tables \
     are labelled by the instance's name (redisInstanceName) and by their own string or \
     number index; PUPPET-AGENT-MIB's certificate rows by their own index alone.",
];

fn scaling_note(flavour: Flavour) -> &'static str {
    match flavour {
        Flavour::V021 => {
            "snmp_exporter 0.21 has no scale override: values of RedisHundredths and \
             RedisThousandths objects (ratios, percentages, command latencies) arrive as the \
             integer count of hundredths or thousandths, as served (9000 is 90.00 %)."
        }
        Flavour::V028 => {
            "RedisHundredths and RedisThousandths objects are scaled back to their decimal \
             value (scale 0.01 and 0.001: 90.00 %, not 9000), their help says so."
        }
    }
}

fn how_to_run(flavour: Flavour) -> &'static str {
    match flavour {
        Flavour::V021 => {
            "Debian 12: MIBDIRS=<SNMPv2-SMI, -TC, -CONF, -MIB and mibs/> \
             prometheus-snmp-generator --fail-on-parse-errors generate (in this directory) \
             writes snmp.yml, shipped beside this file."
        }
        Flavour::V028 => {
            "snmp_exporter 0.28 or later: snmp_exporter's generator generate -m <SNMPv2-SMI, \
             -TC, -CONF, -MIB and mibs/> writes snmp.yml. Change the community in auths \
             (or use an SNMPv3 user) to the one snmpd grants."
        }
    }
}

/// The walk of a module: scalars each by name, tables by their name.
fn walk(module: &ExporterModule) -> Vec<&'static str> {
    module
        .objects
        .iter()
        .flat_map(|array| match array.first().and_then(|o| table_of(o)) {
            Some(table) => vec![table.table],
            None => array.iter().map(|o| o.name).collect(),
        })
        .collect()
}

/// `prometheus/<flavour>/generator.yml`, whole.
pub fn generator_yml(flavour: Flavour) -> String {
    let mut out = String::new();
    for (i, p) in HEADER.iter().enumerate() {
        if i > 0 {
            out.push_str("#\n");
        }
        comment(&mut out, "", p);
    }
    out.push_str("#\n");
    comment(&mut out, "", scaling_note(flavour));
    out.push_str("#\n");
    comment(&mut out, "", how_to_run(flavour));
    out.push_str("#\n# Not walked:\n");
    for n in NOT_EXPORTED {
        comment(&mut out, "", &format!("- {}", n.why));
    }
    if flavour == Flavour::V028 {
        out.push_str("auths:\n  public_v2:\n    community: public\n    version: 2\n");
    }
    out.push_str("modules:\n");
    for module in EXPORTER_MODULES {
        comment(&mut out, "  ", module.about);
        out.push_str(&format!("  {}:\n    walk:\n", module.name));
        for w in walk(module) {
            out.push_str(&format!("    - {w}\n"));
        }
        // The lookup replaces redisInstanceIndex, which only the instances'
        // tables have; PUPPET-AGENT-MIB's rows keep their own index.
        let by_instance = objects_of(module).any(is_by_instance);
        if by_instance {
            let name = instance_name_object();
            out.push_str(&format!(
                "    lookups:\n    - source_indexes: [{}]\n      lookup: {}\n      drop_source_indexes: true\n",
                instance_index_label(),
                name
            ));
        }
        out.push_str("    overrides:\n");
        for o in objects_of(module) {
            let mut lines = Vec::new();
            if o.syntax == Syntax::Gauge64 {
                lines.push("type: gauge".to_string());
            }
            if is_state_set(o) {
                lines.push("type: EnumAsStateSet".to_string());
            }
            if let Some(factor) = divisor(o, flavour) {
                lines.push(format!("scale: {}", decimal(1.0 / f64::from(factor))));
                let units = o.units.map_or(String::new(), |u| format!(" in {u}"));
                lines.push(format!(
                    "help: {}",
                    quoted(&format!(
                        "{}{units}, as a decimal: the agent serves {} of it, the exporter divides",
                        o.name,
                        hundredths(factor)
                    ))
                ));
            }
            if !lines.is_empty() {
                out.push_str(&format!("      {}:\n", o.name));
                for l in lines {
                    out.push_str(&format!("        {l}\n"));
                }
            }
        }
        if flavour == Flavour::V021 {
            out.push_str("    version: 2\n    auth:\n      community: public\n");
        }
    }
    out
}

/// Whether the object is a column of a table indexed by the Redis instance
/// first (every table of REDIS-SERVER-MIB, not PUPPET-AGENT-MIB's).
pub fn is_by_instance(def: &ObjectDef) -> bool {
    table_of(def).is_some_and(|t| !matches!(t.index, RowIndex::Row { .. }))
}

/// `redisInstanceName`: the catalogue's object of the instance's name.
fn instance_name_object() -> &'static str {
    status_object(StatusField::Name)
}

/// The label the lookup gives every row of the instances' tables.
pub fn instance_name_label() -> &'static str {
    instance_name_object()
}

fn status_object(field: StatusField) -> &'static str {
    redis_objects()
        .find(|o| o.source == Source::Status(field))
        .unwrap_or_else(|| panic!("no object of {field:?}"))
        .name
}

fn puppet_object(field: PuppetField) -> &'static str {
    puppet_objects()
        .find(|o| o.source == Source::Puppet(field))
        .unwrap_or_else(|| panic!("no object of {field:?}"))
        .name
}

/// The index every table of the instances has first.
pub fn instance_index_label() -> &'static str {
    "redisInstanceIndex"
}

/// One alert: its rule, and a promtool test that makes it fire and clear.
struct Alert {
    name: String,
    expr: String,
    for_secs: u64,
    severity: &'static str,
    summary: String,
    /// The input series of its test, each `(series, values)`.
    series: Vec<(String, String)>,
    /// Labels of the alert that fires, beside `alertname` and `severity`.
    labels: Vec<(String, String)>,
    /// Minutes at which it fires and at which it does not.
    firing_at: Vec<u32>,
    quiet_at: Vec<u32>,
}

const JOB: &str = "job=\"redis_snmp\",instance=\"db1.example.net\"";

fn labels_text(labels: &[(String, String)]) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{v}\""))
        .collect::<Vec<_>>()
        .join(",")
}

/// `RedisAlarmMemory`, `RedisAlarmReplicaLag`: the agent's alarm name in
/// the alert's.
fn alarm_alert_name(alarm: &str) -> String {
    let mut name = String::from("RedisAlarm");
    for part in alarm.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            name.push(first.to_ascii_uppercase());
            name.extend(chars);
        }
    }
    name
}

/// The alert of one of the agent's default alarms, with its rearm value as
/// hysteresis: firing from the trigger on, held until the value is back
/// beyond the rearm value, as the agent raises and rearms it.
fn alarm_alert(spec: &AlarmSpec, flavour: Flavour) -> Alert {
    let def = redis_objects()
        .find(|o| o.name == spec.object)
        .unwrap_or_else(|| panic!("alarm {} watches no object", spec.name));
    let unit = divisor(def, flavour).map_or(1.0, f64::from);
    let value = |raw: i64| raw as f64 / unit;
    let (trigger, rearm) = (value(spec.trigger), value(spec.rearm));
    let (raise_op, hold_op) = match spec.direction {
        Direction::Above => (">=", ">"),
        Direction::Below => ("<=", "<"),
    };
    let name = alarm_alert_name(&spec.name);
    let x = def.name;
    let expr = format!(
        "{x} {raise_op} {t} or ({x} {hold_op} {r} and ignoring(alertname, alertstate, severity) \
         ALERTS{{alertname=\"{name}\", alertstate=\"firing\"}})",
        t = decimal(trigger),
        r = decimal(rearm)
    );
    // Instance, then the row's own index where the table has one.
    let mut labels = vec![(instance_name_object().to_string(), "cache".to_string())];
    if let Some(own) = table_of(def).and_then(|t| t.index.own_object()) {
        labels.push((own.to_string(), "1".to_string()));
    }
    let other = {
        let mut l = labels.clone();
        l[0].1 = "sessions".into();
        l
    };
    // Beyond the rearm value, at the trigger, between the two (held),
    // back at the rearm value (cleared); the other row only ever between.
    let (calm, between) = match spec.direction {
        Direction::Above => (rearm - (trigger - rearm), (trigger + rearm) / 2.0),
        Direction::Below => (rearm + (rearm - trigger), (trigger + rearm) / 2.0),
    };
    let v = |x: f64| decimal(x);
    let values = format!(
        "{c} {c} {t} {t} {b} {b} {r} {r} {r}",
        c = v(calm),
        t = v(trigger),
        b = v(between),
        r = v(rearm)
    );
    let other_values = format!(
        "{c} {b} {b} {b} {b} {b} {b} {b} {b}",
        c = v(calm),
        b = v(between)
    );
    let units = def.units.map_or(String::new(), |u| format!(" {u}"));
    // Served hundredths the exporter does not divide: said, with the value.
    let said = |raw: i64, value: f64| match scale(def).filter(|_| !flavour.scales()) {
        Some(factor) => format!(
            "{} {} ({}{units})",
            decimal(value),
            hundredths(factor),
            decimal(raw as f64 / f64::from(factor))
        ),
        None => format!("{}{units}", decimal(value)),
    };
    Alert {
        summary: format!(
            "{x} of {{{{ $labels.{n} }}}} is {} {} (the agent's default alarm \"{}\"; cleared at {})",
            if spec.direction == Direction::Above { "at or above" } else { "at or below" },
            said(spec.trigger, trigger),
            spec.name,
            said(spec.rearm, rearm),
            n = instance_name_object(),
        ),
        name,
        expr,
        for_secs: u64::from(spec.count - 1) * DEFAULT_REFRESH_SECS,
        severity: "warning",
        series: vec![
            (format!("{x}{{{JOB},{}}}", labels_text(&labels)), values),
            (format!("{x}{{{JOB},{}}}", labels_text(&other)), other_values),
        ],
        labels,
        firing_at: vec![3, 5],
        quiet_at: vec![1, 7],
    }
}

/// A state set's two series for a test: the state `bad` at minutes 2 and
/// 3, `good` before and after.
fn state_series(object: &str, extra: &str, good: &str, bad: &str) -> Vec<(String, String)> {
    vec![
        (
            format!("{object}{{{JOB}{extra},{object}=\"{bad}\"}}"),
            "0 0 1 1 0 0".into(),
        ),
        (
            format!("{object}{{{JOB}{extra},{object}=\"{good}\"}}"),
            "1 1 0 0 1 1".into(),
        ),
    ]
}

fn alerts(flavour: Flavour) -> Vec<Alert> {
    let state = status_object(StatusField::Up);
    let up = label_of(InstanceState::LABELS, InstanceState::Up.number());
    let down = label_of(InstanceState::LABELS, InstanceState::Down.number());
    let n = instance_name_object();
    let mut all = vec![Alert {
        name: "RedisInstanceDown".into(),
        expr: format!("{state}{{{state}=\"{down}\"}} == 1"),
        for_secs: 0,
        severity: "critical",
        summary: format!(
            "Redis instance {{{{ $labels.{n} }}}} is down: the agent's last poll of it failed (redisInstanceDown)"
        ),
        series: state_series(state, &format!(",{n}=\"cache\""), up, down),
        labels: vec![(n.into(), "cache".into()), (state.into(), down.into())],
        firing_at: vec![2, 3],
        quiet_at: vec![1, 4],
    }];
    all.extend(
        NotifyConfig::default()
            .alarms
            .iter()
            .map(|spec| alarm_alert(spec, flavour)),
    );
    let status = puppet_object(PuppetField::Status);
    let unchanged = label_of(PuppetRunStatus::LABELS, PuppetRunStatus::Unchanged.number());
    let failed = label_of(PuppetRunStatus::LABELS, PuppetRunStatus::Failed.number());
    all.push(Alert {
        name: "PuppetRunFailed".into(),
        expr: format!("{status}{{{status}=\"{failed}\"}} == 1"),
        for_secs: 0,
        severity: "critical",
        summary: "The last Puppet run on {{ $labels.instance }} failed (puppetRunFailed)".into(),
        series: state_series(status, "", unchanged, failed),
        labels: vec![(status.into(), failed.into())],
        firing_at: vec![2, 3],
        quiet_at: vec![1, 4],
    });
    let age = puppet_object(PuppetField::LastRunAge);
    let stale = NotifyConfig::default().puppet_stale_after.as_secs();
    all.push(Alert {
        name: "PuppetAgentStale".into(),
        expr: format!("{age} > {stale}"),
        for_secs: 0,
        severity: "warning",
        summary: format!(
            "No Puppet run ended on {{{{ $labels.instance }}}} for over {stale} seconds (puppetAgentStale)"
        ),
        series: vec![(
            format!("{age}{{{JOB}}}"),
            format!("60 {} {} {} 60 60", stale, stale + 60, stale + 120),
        )],
        labels: vec![],
        firing_at: vec![2, 3],
        quiet_at: vec![1, 4],
    });
    let changing = puppet_object(PuppetField::ChangingRuns);
    let converge = puppet_object(PuppetField::ConvergeRuns);
    let k = NotifyConfig::default().puppet_converge_runs;
    all.push(Alert {
        name: "PuppetNotConverging".into(),
        expr: format!("{changing} >= {converge} and {converge} > 0"),
        for_secs: 0,
        severity: "warning",
        summary: format!("The last {converge} Puppet runs on {{{{ $labels.instance }}}} each changed resources: {changing} reached it (puppetNotConverging)"),
        series: vec![
            (
                format!("{changing}{{{JOB}}}"),
                format!("0 {} {k} {} 0 0", k - 1, k + 1),
            ),
            (format!("{converge}{{{JOB}}}"), format!("{k}x5")),
        ],
        labels: vec![],
        firing_at: vec![2, 3],
        quiet_at: vec![1, 4],
    });
    let left = puppet_object(PuppetField::Certificate(
        PuppetCertificateField::SecondsLeft,
    ));
    let index = puppet_certificate_index();
    let days = DEFAULT_CERTIFICATE_WARNING_DAYS;
    let warning = days * 86_400;
    let kinds = PuppetCertificateKind::LABELS
        .iter()
        .map(|(l, n)| format!("{n} {l}"))
        .collect::<Vec<_>>()
        .join(", ");
    let agent = PuppetCertificateKind::Agent.number().to_string();
    let ca = PuppetCertificateKind::Ca.number().to_string();
    all.push(Alert {
        name: "PuppetCertificateExpiring".into(),
        expr: format!("{left} < {warning}"),
        for_secs: 0,
        severity: "warning",
        summary: format!(
            "Puppet certificate {{{{ $labels.{index} }}}} ({kinds}) on {{{{ $labels.instance }}}} ends in under {days} days, the agent's default certificate_warning_days (puppetCertificateExpiring)"
        ),
        // The agent's certificate a day either side of the warning, then
        // past its end; the CA years away throughout.
        series: vec![
            (
                format!("{left}{{{JOB},{index}=\"{agent}\"}}"),
                format!(
                    "{} {} {} {} {} {}",
                    warning + 86_400,
                    warning + 86_400,
                    warning - 86_400,
                    -60,
                    warning + 86_400 * 365,
                    warning + 86_400 * 365
                ),
            ),
            (
                format!("{left}{{{JOB},{index}=\"{ca}\"}}"),
                format!("{}x5", warning * 100),
            ),
        ],
        labels: vec![(index.into(), agent)],
        firing_at: vec![2, 3],
        quiet_at: vec![1, 4],
    });
    all
}

/// `puppetCertificateIndex`: the label of each row of the certificate
/// table, its own index.
fn puppet_certificate_index() -> &'static str {
    let left = puppet_objects()
        .find(|o| {
            o.source
                == Source::Puppet(PuppetField::Certificate(
                    PuppetCertificateField::SecondsLeft,
                ))
        })
        .expect("puppetCertificateSecondsLeft is in the catalogue");
    table_of(left)
        .and_then(|t| t.index.own_object())
        .expect("the certificate table has an index of its own")
}

fn label_of(labels: &[(&'static str, i32)], number: i32) -> &'static str {
    labels
        .iter()
        .find(|(_, n)| *n == number)
        .map(|(l, _)| *l)
        .expect("every named number has a label")
}

/// The metric names and state-set labels the rules read, for the tests to
/// hold against the exporter's file: `(metric, state label value)`.
pub fn rule_series() -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for a in alerts(Flavour::V021) {
        for (series, _) in &a.series {
            let name = series.split('{').next().unwrap().to_string();
            let state = series
                .split(&format!(",{name}=\""))
                .nth(1)
                .map(|rest| rest.split('"').next().unwrap().to_string());
            out.push((name, state));
        }
    }
    out
}

/// `prometheus/<flavour>/redis-snmp-rules.yml`, whole.
pub fn rules_yml(flavour: Flavour) -> String {
    let mut out = String::new();
    comment(
        &mut out,
        "",
        "redis-snmp: Prometheus alert rules that mirror the agent's default alarms ([alarms]: \
         raised at the trigger, held until the rearm value) and its notifications (instance \
         down, Puppet run failed, stale, not converging, certificate expiring), on the series snmp_exporter emits \
         with the generator.yml beside this file. Generated from the catalogue by \
         tests/prometheus/generate.rs; edit those, not this file.",
    );
    comment(&mut out, "", scaling_note(flavour));
    out.push_str("groups:\n- name: redis-snmp\n  rules:\n");
    for a in alerts(flavour) {
        out.push_str(&format!(
            "  - alert: {}\n    expr: {}\n",
            a.name,
            quoted(&a.expr)
        ));
        if a.for_secs > 0 {
            out.push_str(&format!("    for: {}s\n", a.for_secs));
        }
        out.push_str(&format!(
            "    labels:\n      severity: {}\n    annotations:\n      summary: {}\n",
            a.severity,
            quoted(&a.summary)
        ));
    }
    out
}

/// A promtool test file for the rules of `flavour` at `rules`: each alert
/// fed its series, firing where it must and quiet where it must not.
pub fn rules_test_yml(flavour: Flavour, rules: &Path) -> String {
    let mut out = format!(
        "rule_files:\n- {}\nevaluation_interval: 1m\ntests:\n",
        quoted(&rules.display().to_string())
    );
    for a in alerts(flavour) {
        out.push_str("- interval: 1m\n  input_series:\n");
        for (series, values) in &a.series {
            out.push_str(&format!(
                "  - series: {}\n    values: {}\n",
                quoted(series),
                quoted(values)
            ));
        }
        out.push_str("  alert_rule_test:\n");
        for m in &a.quiet_at {
            out.push_str(&format!(
                "  - eval_time: {m}m\n    alertname: {}\n    exp_alerts: []\n",
                a.name
            ));
        }
        for m in &a.firing_at {
            out.push_str(&format!(
                "  - eval_time: {m}m\n    alertname: {}\n    exp_alerts:\n    - exp_labels:\n        severity: {}\n        job: redis_snmp\n        instance: db1.example.net\n",
                a.name, a.severity
            ));
            for (k, v) in &a.labels {
                out.push_str(&format!("        {k}: {}\n", quoted(v)));
            }
            let mut summary = a
                .summary
                .replace("{{ $labels.instance }}", "db1.example.net");
            for (k, v) in &a.labels {
                summary = summary.replace(&format!("{{{{ $labels.{k} }}}}"), v);
            }
            out.push_str(&format!(
                "      exp_annotations:\n        summary: {}\n",
                quoted(&summary)
            ));
        }
    }
    out
}

/// Whether the file at `path` is `generated`; if not, the difference
/// (`diff -u`) and how to regenerate. With `write` (and
/// `REDIS_SNMP_WRITE_DOCS` set) the file is rewritten instead.
pub fn check(path: &Path, generated: &str, write: bool) -> Result<(), String> {
    testkit::generated::check(path, generated, write, REGENERATE)
}
