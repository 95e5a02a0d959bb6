//! The rules snmp_exporter's generator applies to a `generator.yml`, taken
//! from its source at tag v0.28.0 (github.com/prometheus/snmp_exporter,
//! commit 9f9547f664b61449281ff888fe690c68ef94c9f2), for the 0.28 flavour
//! that no program of Debian 12 can read (bookworm and bookworm-backports
//! carry only 0.21):
//!
//! - `generator/main.go` (line 48) reads the file with
//!   `yaml.UnmarshalStrict`: a key no struct declares is an error;
//! - `generator/config.go`: `Config` has `auths`, `modules`, `version`;
//!   `ModuleConfig` has `walk`, `lookups`, `overrides`, `filters` and,
//!   inline, `config.WalkParams`; `Lookup` has `source_indexes`, `lookup`,
//!   `drop_source_indexes`; `MetricOverrides` has `ignore`,
//!   `regex_extracts`, `datetime_pattern`, `offset`, `scale`, `type`,
//!   `help`, `name`, and its `UnmarshalYAML` refuses a `type` that
//!   `metricType` does not return unchanged;
//! - `config/config.go`: `WalkParams` has `max_repetitions`, `retries`,
//!   `timeout`, `use_unconnected_udp_socket`, `allow_nonincreasing_oids`;
//!   `Auth` has `community`, `security_level`, `username`, `password`,
//!   `auth_protocol`, `priv_protocol`, `priv_password`, `context_name`,
//!   `version`, and its `UnmarshalYAML` refuses a version outside 1..3
//!   (line 289);
//! - `generator/tree.go` `metricType` (line 155) and `combinedTypes`
//!   (line 30): the types an override may name.

use serde_json::Value;

const CONFIG_KEYS: &[&str] = &["auths", "modules", "version"];
const MODULE_KEYS: &[&str] = &[
    "walk",
    "lookups",
    "overrides",
    "filters",
    "max_repetitions",
    "retries",
    "timeout",
    "use_unconnected_udp_socket",
    "allow_nonincreasing_oids",
];
const LOOKUP_KEYS: &[&str] = &["source_indexes", "lookup", "drop_source_indexes"];
const OVERRIDE_KEYS: &[&str] = &[
    "ignore",
    "regex_extracts",
    "datetime_pattern",
    "offset",
    "scale",
    "type",
    "help",
    "name",
];
const AUTH_KEYS: &[&str] = &[
    "community",
    "security_level",
    "username",
    "password",
    "auth_protocol",
    "priv_protocol",
    "priv_password",
    "context_name",
    "version",
];
/// `metricType`'s answers that equal their question, and `combinedTypes`.
const OVERRIDE_TYPES: &[&str] = &[
    "gauge",
    "counter",
    "OctetString",
    "Bits",
    "InetAddressIPv4",
    "PhysAddress48",
    "DisplayString",
    "Float",
    "Double",
    "InetAddressIPv6",
    "DateAndTime",
    "ParseDateAndTime",
    "NTPTimeStamp",
    "EnumAsInfo",
    "EnumAsStateSet",
    "InetAddress",
    "InetAddressMissingSize",
    "LldpPortId",
];

fn map<'a>(v: &'a Value, at: &str) -> Result<&'a serde_json::Map<String, Value>, String> {
    v.as_object().ok_or_else(|| format!("{at}: not a mapping"))
}

fn keys(v: &Value, allowed: &[&str], at: &str) -> Result<(), String> {
    for k in map(v, at)?.keys() {
        if !allowed.contains(&k.as_str()) {
            return Err(format!("{at}: field {k} not found (UnmarshalStrict)"));
        }
    }
    Ok(())
}

/// The YAML document, whatever its keys.
pub fn parse(text: &str) -> Result<Value, String> {
    serde_saphyr::from_str(text).map_err(|e| format!("YAML: {e}"))
}

/// The file as the 0.28 generator would read it: `Ok` with what it reads,
/// or the error it would stop with.
pub fn check(text: &str) -> Result<Value, String> {
    let doc = parse(text)?;
    keys(&doc, CONFIG_KEYS, "top level")?;
    let no_auths = serde_json::Map::new();
    let auths = match doc.get("auths") {
        Some(a) => map(a, "auths")?,
        None => &no_auths,
    };
    for (name, auth) in auths {
        let at = format!("auths.{name}");
        keys(auth, AUTH_KEYS, &at)?;
        // DefaultAuth has version 2.
        let version = auth.get("version").and_then(Value::as_i64).unwrap_or(2);
        if !(1..=3).contains(&version) {
            return Err(format!(
                "{at}: SNMP version must be 1, 2 or 3. Got: {version}"
            ));
        }
    }
    for (name, module) in map(doc.get("modules").unwrap_or(&Value::Null), "modules")? {
        let at = format!("modules.{name}");
        keys(module, MODULE_KEYS, &at)?;
        for (i, lookup) in module
            .get("lookups")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            keys(lookup, LOOKUP_KEYS, &format!("{at}.lookups[{i}]"))?;
        }
        if let Some(overrides) = module.get("overrides") {
            for (object, o) in map(overrides, &format!("{at}.overrides"))? {
                let oat = format!("{at}.overrides.{object}");
                keys(o, OVERRIDE_KEYS, &oat)?;
                if let Some(t) = o.get("type") {
                    let t = t.as_str().unwrap_or("");
                    if !OVERRIDE_TYPES.contains(&t) {
                        return Err(format!("{oat}: invalid metric type override '{t}'"));
                    }
                }
                if let Some(s) = o.get("scale") {
                    s.as_f64()
                        .ok_or_else(|| format!("{oat}: scale is no float64"))?;
                }
            }
        }
    }
    Ok(doc)
}
