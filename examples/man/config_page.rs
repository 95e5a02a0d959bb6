//! `redis-snmp.toml(5)`, written from the package's annotated
//! configuration file (`debian/conf/redis-snmp.toml`, installed as
//! `/etc/redis-snmp/redis-snmp.toml`). That file shows every setting the
//! agent accepts, commented out, exactly once, with what it does above it
//! (`tests/debian_package.rs` holds it to the configuration's own types),
//! so the page says the same and cannot say less.
//!
//! The file's shape, which the page follows: paragraphs of `# ` comments
//! separated by blank lines; a paragraph may end with a table's header
//! (`#[puppet]`, `#[[redis]]`), which opens a section of the page, and
//! with settings (`#key = value`: its default, or an example).

use clap_mangen::roff::{bold, italic, roman, Roff};

/// The annotated configuration, as shipped.
const ANNOTATED: &str = include_str!("../../debian/conf/redis-snmp.toml");

/// One paragraph of the file.
#[derive(Debug, Default)]
struct Paragraph {
    /// Its comment lines, joined.
    text: String,
    /// The table header it ends with, `[puppet]` or `[[redis]]`.
    header: Option<String>,
    /// Its settings, `key = value`, as written.
    settings: Vec<String>,
}

fn paragraphs(file: &str) -> Vec<Paragraph> {
    let mut all = Vec::new();
    let mut current = Paragraph::default();
    for line in file.lines().map(str::trim_end) {
        if line.trim().is_empty() {
            if !current.text.is_empty() || current.header.is_some() || !current.settings.is_empty()
            {
                all.push(std::mem::take(&mut current));
            }
            continue;
        }
        let Some(rest) = line.strip_prefix('#') else {
            // Nothing is set in the shipped file (the package test says
            // so); a line that is not a comment is shown as a setting.
            current.settings.push(line.to_string());
            continue;
        };
        if rest.starts_with('[') {
            current.header = Some(rest.to_string());
        } else if rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
            current.settings.push(rest.to_string());
        } else {
            let text = rest.strip_prefix(' ').unwrap_or(rest);
            if !current.text.is_empty() {
                current.text.push(' ');
            }
            current.text.push_str(text);
        }
    }
    if !current.text.is_empty() || current.header.is_some() || !current.settings.is_empty() {
        all.push(current);
    }
    all
}

/// The page, its date `date` (`YYYY-MM-DD`).
pub fn render(date: &str) -> String {
    let mut r = Roff::new();
    r.control(
        "TH",
        [
            "REDIS-SNMP.TOML",
            "5",
            date,
            "redis-snmp",
            "File Formats Manual",
        ],
    );
    r.control("SH", ["NAME"]);
    r.text([roman(
        "redis-snmp.toml - configuration file of the redis-snmp SNMP subagent",
    )]);
    r.control("SH", ["SYNOPSIS"]);
    r.text([italic("/etc/redis-snmp/redis-snmp.toml")]);

    let mut paragraphs = paragraphs(ANNOTATED).into_iter();
    r.control("SH", ["DESCRIPTION"]);
    if let Some(intro) = paragraphs.next() {
        r.control("PP", []);
        r.text([roman(intro.text)]);
    }
    r.control("PP", []);
    r.text([
        roman("The settings follow, table by table, as the file shows them: "),
        bold("key = value"),
        roman(" is the default, or an example where there is none."),
    ]);
    r.control("SH", ["SETTINGS"]);
    r.control("SS", ["Top level"]);
    for paragraph in paragraphs {
        let settings_first = paragraph.header.is_none() && !paragraph.settings.is_empty();
        if let Some(header) = &paragraph.header {
            // A table: what it is, then its settings.
            r.control("SS", [header.as_str()]);
        }
        if !settings_first && !paragraph.text.is_empty() {
            r.control("PP", []);
            r.text([roman(paragraph.text.as_str())]);
        }
        if !paragraph.settings.is_empty() {
            r.control("PP", []);
            r.control("nf", []);
            for setting in &paragraph.settings {
                r.text([bold(setting.as_str())]);
            }
            r.control("fi", []);
        }
        // Settings: each group, then what it does, indented below it.
        if settings_first && !paragraph.text.is_empty() {
            r.control("RS", []);
            r.text([roman(paragraph.text.as_str())]);
            r.control("RE", []);
        }
    }
    r.control("SH", ["FILES"]);
    r.control("TP", []);
    r.text([bold("/etc/redis-snmp/redis-snmp.toml")]);
    r.text([roman(
        "The file, read by redis-snmp.service as the redis-snmp user at \
         start-up and on SIGHUP (systemctl reload).",
    )]);
    r.control("SH", ["SEE ALSO"]);
    r.text([
        bold("redis-snmp"),
        roman("(8), "),
        bold("snmpd.conf"),
        roman("(5), and "),
        italic("/usr/share/doc/redis-snmp/README.Debian"),
        roman("."),
    ]);
    r.render()
}
