//! One line of Puppet's JSON-lines log, the file named in
//! `--logdest syslog,/var/log/puppet-events/events.jsonl` (issue 13): resource
//! changes, failures and skips as they happen, and the run's boundaries.
//!
//! [`super::events`] follows the file with [`super::tail`] and parses each
//! line here.
//!
//! Puppet (6.x and later; measured with 7.23) writes one JSON object per line
//! and flushes each one: `{"level","message","source","tags","time"}`, plus
//! `"file"` and `"line"` for resources and more keys on errors (`pos`,
//! `issue_code`, `environment`, `node`, `backtrace`), which are ignored here.
//! - A resource's line has a `source` ending in `Type[title]/property`, or
//!   `Type[title]` alone (a skip: "Skipping because of failed
//!   dependencies"), and `tags` holding the type in lower case (`file`,
//!   `apache::vhost`). Titles can hold `/`, `[` and `]` (file paths), so the
//!   source is not split on `/`, and a reference read from it counts only
//!   when the tags confirm its type: see [`LineKind::Resource`].
//! - Run boundaries come from `source: "Puppet"`: "Applying configuration
//!   version '…'" and "Applied catalog in N seconds". At the default log
//!   level no line marks a run's start.
//! - Facter's errors (`source: "Facter"`) and Puppet's own messages are
//!   [`LineKind::Other`].
//!
//! The report and summary stay the source of truth for a run; these lines
//! only say earlier, and per resource, what is happening.

use super::report::ReportTime;
use super::yaml::truncate;
use serde::Deserialize;
use std::borrow::Cow;

/// Longest line parsed, in bytes (without its newline); longer ones are
/// refused before parsing.
pub const MAX_LINE_BYTES: usize = 64 << 10;

/// Longest message, type, title, property or source kept, in bytes (an SNMP
/// `DisplayString`); longer text is cut at a character boundary, ending `…`.
pub const MAX_TEXT_BYTES: usize = 255;

// A Puppet log level, least severe first, is the catalogue's
// `puppetEventLevel` itself, read from the line's word by its label
// (Puppet's names; anything else is not a level).
use crate::metrics::PuppetEventLevel;

/// What a line is about.
#[derive(Debug, Clone, PartialEq)]
pub enum LineKind {
    /// A resource's event: a change (`notice`), a failure (`err`), a skip
    /// (`warning`, no property). The resource is a `Type[title]` of the
    /// source whose title runs to the source's final `]`; a type is one or
    /// more `::`-separated capitalised names (`Apache::Vhost`). Puppet does
    /// not escape titles, and a title can hold `/Type[` itself: a file
    /// named `Notify[kick -> db` in a directory Puppet manages recursively
    /// is the source `…/File[/srv/up/Notify[kick -> db]/group`. So the
    /// candidates are tried in turn, the `[` that balances the final `]`
    /// first (right for every title whose brackets balance), then each
    /// `/Type[` from the end, and the first whose type, in lower case, is
    /// among the line's `tags` is the resource: Puppet tags every resource
    /// with its type (and with the types of the defined types around it),
    /// so a reference inside a title names a type the line does not carry.
    /// See `resource_of`.
    Resource {
        resource_type: String,
        title: String,
        /// `ensure`, `content`, `returns`… (lower case after the last `]/`).
        property: Option<String>,
        /// The message ends in ` (noop)`: a change that was not made.
        noop: bool,
        /// The message ends in ` (corrective)`: drift was corrected.
        corrective: bool,
    },
    /// "Applying configuration version '…'": the version of the catalog
    /// about to be applied.
    ConfigurationVersion(String),
    /// "Applied catalog in N seconds": the apply ended (the summary and
    /// report are written after it).
    RunEnd { seconds: f64 },
    /// Anything else, with its source (`Puppet`, `Facter`, a class…).
    Other { source: String },
}

/// One parsed line.
#[derive(Debug, Clone, PartialEq)]
pub struct LogLine {
    pub level: PuppetEventLevel,
    /// `time`, when present and a valid ISO 8601 time.
    pub time: Option<ReportTime>,
    pub kind: LineKind,
    /// Control characters replaced by spaces, at most [`MAX_TEXT_BYTES`].
    pub message: String,
}

/// Why a line was not used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    #[error("the line is {len} bytes, over the {max}-byte limit")]
    TooLong { len: usize, max: usize },
    /// Not JSON, or not an object with string `level`, `message` and
    /// `source`: serde_json's message.
    #[error("{0}")]
    Json(String),
    #[error("unknown log level {0:?}")]
    UnknownLevel(String),
}

/// The line's strings borrowed from it where JSON needs no unescaping
/// (most are: a burst of lines is mostly allocation otherwise).
#[derive(Deserialize)]
struct RawLine<'a> {
    #[serde(borrow)]
    level: Cow<'a, str>,
    #[serde(borrow)]
    message: Cow<'a, str>,
    #[serde(borrow)]
    source: Cow<'a, str>,
    #[serde(default, borrow)]
    time: Option<Cow<'a, str>>,
    /// Absent only from lines Puppet did not write (see [`resource_of`]).
    #[serde(default, borrow)]
    tags: Option<Vec<Cow<'a, str>>>,
}

/// Parse one line (without its newline; a trailing `\r` or spaces are
/// fine). Never panics; lines over [`MAX_LINE_BYTES`] are refused unread.
pub fn parse_line(line: &[u8]) -> Result<LogLine, LineError> {
    if line.len() > MAX_LINE_BYTES {
        return Err(LineError::TooLong {
            len: line.len(),
            max: MAX_LINE_BYTES,
        });
    }
    let raw: RawLine = serde_json::from_slice(line).map_err(|e| {
        let mut msg = e.to_string();
        truncate(&mut msg, MAX_TEXT_BYTES);
        LineError::Json(msg)
    })?;
    let level = PuppetEventLevel::from_label(&raw.level).ok_or_else(|| {
        let mut name = clean(&raw.level);
        truncate(&mut name, 32);
        LineError::UnknownLevel(name)
    })?;
    Ok(LogLine {
        level,
        time: raw.time.as_deref().and_then(ReportTime::parse),
        kind: kind_of(&raw.source, &raw.message, raw.tags.as_deref()),
        message: clean(&raw.message),
    })
}

fn kind_of(source: &str, message: &str, tags: Option<&[Cow<'_, str>]>) -> LineKind {
    if source == "Puppet" {
        if let Some(version) = message
            .strip_prefix("Applying configuration version '")
            .and_then(|rest| rest.strip_suffix('\''))
        {
            return LineKind::ConfigurationVersion(clean(version));
        }
        if let Some(seconds) = message
            .strip_prefix("Applied catalog in ")
            .and_then(|rest| rest.strip_suffix(" seconds"))
            .and_then(|n| n.parse::<f64>().ok())
            .filter(|n| n.is_finite() && *n >= 0.0)
        {
            return LineKind::RunEnd { seconds };
        }
    }
    match resource_of(source, tags) {
        Some((resource_type, title, property)) => {
            // Corrective changes were seen as "… (corrective)"; accept the
            // two suffixes in either order.
            let mut rest = message;
            let (mut noop, mut corrective) = (false, false);
            loop {
                if let Some(r) = rest.strip_suffix(" (noop)").filter(|_| !noop) {
                    (rest, noop) = (r, true);
                } else if let Some(r) = rest.strip_suffix(" (corrective)").filter(|_| !corrective) {
                    (rest, corrective) = (r, true);
                } else {
                    break;
                }
            }
            LineKind::Resource {
                resource_type: clean(resource_type),
                title: clean(title),
                property: property.map(clean),
                noop,
                corrective,
            }
        }
        None => LineKind::Other {
            source: clean(source),
        },
    }
}

/// `(type, title, property)` of a resource source, if it is one: the first
/// candidate reference (see [`LineKind::Resource`]) whose type the line's
/// `tags` confirm.
///
/// A line without `tags` takes the first candidate, as before tags were
/// read: Puppet (6 and 7, `to_structured_hash`) writes `tags` on every
/// line, with the level at least, so such a line comes from another writer
/// of the log, and whoever writes the log can write any event anyway (only
/// root may: [`super::trust`]). The
/// tags guard against Puppet's own lines, whose titles come from file names
/// and other text neither Puppet nor the manifest's author controls.
///
/// What the tags cannot tell: a title that names, with an unbalanced `[`,
/// a type among the tags that is not the resource's own, which is only a
/// defined type around the resource (a `Notify` contains nothing) or a
/// tag a manifest gives (`tag => 'notify'`).
fn resource_of<'s>(
    source: &'s str,
    tags: Option<&[Cow<'_, str>]>,
) -> Option<(&'s str, &'s str, Option<&'s str>)> {
    let (body, property) = match source.rsplit_once('/') {
        Some((body, p)) if is_property(p) && body.ends_with(']') => (body, Some(p)),
        _ if source.ends_with(']') => (source, None),
        _ => return None,
    };
    let confirmed = |ty: &str| match tags {
        None => true,
        Some(tags) => tags.iter().any(|t| t.eq_ignore_ascii_case(ty)),
    };
    candidates(body)
        .find(|(ty, _)| confirmed(ty))
        .map(|(ty, title)| (ty, title, property))
}

/// The `Type[title]` readings of `body` (a source up to its final `]`):
/// the `[` that balances the final `]`, then every `/Type[` from the end.
fn candidates(body: &str) -> impl Iterator<Item = (&str, &str)> {
    let b = body.as_bytes();
    // The `[` that balances the final `]`.
    let mut depth = 0usize;
    let mut balancing = None;
    for i in (0..b.len()).rev() {
        match b[i] {
            b']' => depth += 1,
            b'[' => {
                depth -= 1;
                if depth == 0 {
                    balancing = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let from_end = (0..b.len())
        .rev()
        .filter(move |&i| b[i] == b'[' && Some(i) != balancing);
    balancing
        .into_iter()
        .chain(from_end)
        .filter_map(move |i| type_before(body, i))
}

/// The type name ending at the `[` at `open` (after a `/` or at the start),
/// and the title from there to the final `]` of `body`.
fn type_before(body: &str, open: usize) -> Option<(&str, &str)> {
    let start = body[..open].rfind('/').map_or(0, |p| p + 1);
    let ty = &body[start..open];
    let is_type = ty.split("::").all(|seg| {
        let mut chars = seg.chars();
        chars.next().is_some_and(|c| c.is_ascii_uppercase())
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    is_type.then(|| (ty, &body[open + 1..body.len() - 1]))
}

fn is_property(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Control characters replaced by spaces, cut to [`MAX_TEXT_BYTES`].
fn clean(s: &str) -> String {
    let mut out = s.replace(|c: char| c.is_control(), " ");
    truncate(&mut out, MAX_TEXT_BYTES);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn fixture(name: &str) -> Vec<u8> {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/puppet/logdest")
            .join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// Every line of a capture, all of which must parse.
    fn parse_all(name: &str) -> Vec<LogLine> {
        fixture(name)
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| parse_line(l).unwrap_or_else(|e| panic!("{name}: {e}")))
            .collect()
    }

    fn resource(ty: &str, title: &str, property: Option<&str>) -> LineKind {
        LineKind::Resource {
            resource_type: ty.into(),
            title: title.into(),
            property: property.map(Into::into),
            noop: false,
            corrective: false,
        }
    }

    fn other(source: &str) -> LineKind {
        LineKind::Other {
            source: source.into(),
        }
    }

    #[test]
    fn apply_run_with_a_change_a_failure_and_a_skip() {
        let lines = parse_all("log.jsonl");
        assert_eq!(lines.len(), 28);
        // 18 Facter errors first: not resource events.
        assert!(lines[..18]
            .iter()
            .all(|l| l.level == PuppetEventLevel::Err && l.kind == other("Facter")));
        let events: Vec<(PuppetEventLevel, &LineKind, &str)> = lines[18..]
            .iter()
            .map(|l| (l.level, &l.kind, l.message.as_str()))
            .collect();
        let file = resource("File", "/srv/puppetwork/target/logtest.txt", Some("ensure"));
        let failing = resource("Exec", "failing-step", Some("returns"));
        let after = resource("Notify", "after-slow", None);
        assert_eq!(events[0].1, &other("Puppet"));
        assert_eq!(
            (events[1].0, events[1].1),
            (PuppetEventLevel::Notice, &file)
        );
        assert!(events[1]
            .2
            .starts_with("defined content as '{sha256}e160fb32"));
        assert_eq!(events[2].1, &resource("Exec", "slow-step", Some("returns")));
        assert_eq!(
            (events[3].0, events[3].1),
            (PuppetEventLevel::Err, &other("Puppet"))
        );
        assert_eq!(
            events[4],
            (
                PuppetEventLevel::Err,
                &failing,
                "change from 'notrun' to ['0'] failed: '/bin/false' returned 1 instead of one of [0]"
            )
        );
        assert_eq!(
            events[6],
            (
                PuppetEventLevel::Warning,
                &after,
                "Skipping because of failed dependencies"
            )
        );
        assert_eq!(
            events[8].1,
            &resource("Notify", "independent", Some("message"))
        );
        assert_eq!(events[9].1, &LineKind::RunEnd { seconds: 3.02 });
        let end = lines[27].time.unwrap();
        assert_eq!(end.unix_seconds, 1_795_336_307); // 2026-11-22T08:31:47Z
        assert_eq!(end.nanos, 81_847_293);
    }

    #[test]
    fn compile_errors_are_puppet_lines() {
        let lines = parse_all("apply_compile_error.jsonl");
        assert_eq!(lines.len(), 19);
        let last = &lines[18];
        assert_eq!(
            (last.level, &last.kind),
            (PuppetEventLevel::Err, &other("Puppet"))
        );
        assert_eq!(last.message, "Syntax error at 'content'");

        let lines = parse_all("agent_catalog_failure_simulated.jsonl");
        let levels: Vec<PuppetEventLevel> = lines.iter().map(|l| l.level).collect();
        assert_eq!(
            levels,
            [
                PuppetEventLevel::Err,
                PuppetEventLevel::Warning,
                PuppetEventLevel::Err
            ]
        );
        assert!(lines.iter().all(|l| l.kind == other("Puppet")));
        assert_eq!(lines[2].message, "Could not retrieve catalog; skipping run");
    }

    /// The kind of a notice line with `source` and `tags` (`None`: no
    /// `tags` key at all).
    fn tagged(source: &str, tags: Option<&[&str]>, message: &str) -> LineKind {
        let mut line = serde_json::json!({"level": "notice", "message": message,
            "source": source, "time": "2026-11-22T08:31:44+00:00"});
        if let Some(tags) = tags {
            line["tags"] = serde_json::json!(tags);
        }
        parse_line(line.to_string().as_bytes()).unwrap().kind
    }

    /// A notice line of `source` with the tags Puppet gives a file of the
    /// main class.
    fn kind(source: &str, message: &str) -> LineKind {
        tagged(source, Some(&["notice", "file", "class"]), message)
    }

    #[test]
    fn titles_with_slashes_and_brackets() {
        // A notice of `source`, tagged as Puppet tags a resource of type
        // `ty` in the main class.
        let k = |source, ty| tagged(source, Some(&["notice", ty, "class"]), "changed");
        assert_eq!(
            k("/Stage[main]/Main/File[/srv/a/b.txt]/mode", "file"),
            resource("File", "/srv/a/b.txt", Some("mode"))
        );
        // A title holding `/Type[…]` and `]`: brackets that balance.
        assert_eq!(
            k("/Stage[main]/Main/File[/srv/x/Foo[bar]]/content", "file"),
            resource("File", "/srv/x/Foo[bar]", Some("content"))
        );
        // Unbalanced: the last `/Type[`.
        assert_eq!(
            k("/Stage[main]/Main/Exec[echo a]b]/returns", "exec"),
            resource("Exec", "echo a]b", Some("returns"))
        );
        assert_eq!(
            k("/Stage[main]/Main/Exec[x[]", "exec"),
            resource("Exec", "x[", None)
        );
        let k = |s| kind(s, "changed");
        // Not resources: classes, bare words, lower-case "types".
        assert_eq!(k("/Stage[main]/Main"), other("/Stage[main]/Main"));
        assert_eq!(k("Facter"), other("Facter"));
        assert_eq!(k("/Stage[main]/Main/file"), other("/Stage[main]/Main/file"));
        assert_eq!(
            k("/Stage[main]/Main/File[x]/Ensure"),
            other("/Stage[main]/Main/File[x]/Ensure")
        );
        assert_eq!(k(""), other(""));
    }

    /// Issue 22 item 5, review L1: a file an unprivileged user names
    /// `Notify[kick -> db` in a directory Puppet manages recursively is a
    /// File, whose title holds the whole name; the genuine Notify of the
    /// same run is a Notify. Both lines as `puppet apply --logdest …jsonl`
    /// (Puppet 7.23) wrote them for such a directory.
    #[test]
    fn a_file_named_like_a_resource_is_a_file() {
        let forged = br#"{"level":"notice","message":"group changed 'root' to 'daemon'","source":"/Stage[main]/Main/File[/tmp/pexp/up/Notify[kick -> db]/group","tags":["notice","file","class"],"time":"2026-11-26T10:55:58.111537282+00:00"}"#;
        assert_eq!(
            parse_line(forged).unwrap().kind,
            resource("File", "/tmp/pexp/up/Notify[kick -> db", Some("group"))
        );
        let genuine = br#"{"level":"notice","message":"defined 'message' as 'kick -> db'","source":"/Stage[main]/Main/Notify[kick -> db]/message","tags":["notice","notify","class"],"time":"2026-11-26T10:55:58.112207898+00:00","file":"/tmp/pexp/site.pp","line":5}"#;
        assert_eq!(
            parse_line(genuine).unwrap().kind,
            resource("Notify", "kick -> db", Some("message"))
        );
        // The review's line (its title shortened there with `…`), and
        // other titles of a File: with brackets that balance, a skip (no
        // property), a title that closes early and opens again.
        let file = |source| tagged(source, Some(&["notice", "file", "class"]), "m");
        assert_eq!(
            file("/Stage[main]/Main/File[/…/upload/Notify[kick -> db]/group"),
            resource("File", "/…/upload/Notify[kick -> db", Some("group"))
        );
        assert_eq!(
            file("/Stage[main]/Main/File[/srv/up/Notify[kick -> db]]"),
            resource("File", "/srv/up/Notify[kick -> db]", None)
        );
        assert_eq!(
            file("/Stage[main]/Main/File[/srv/up/a]/Exec[b[c]/mode"),
            resource("File", "/srv/up/a]/Exec[b[c", Some("mode"))
        );
        assert_eq!(
            file("/Stage[main]/Main/File[/srv/up/]x[/Notify[y]]]/owner"),
            resource("File", "/srv/up/]x[/Notify[y]]", Some("owner"))
        );
        assert_eq!(
            file("/Stage[main]/Main/File[/srv/up/Notify[a]/Notify[b]/owner"),
            resource("File", "/srv/up/Notify[a]/Notify[b", Some("owner"))
        );
    }

    /// Resources inside defined types: the line carries the defined type's
    /// tags too, and the innermost reference the tags confirm is the
    /// resource. The first line is Puppet 7.23's, for a `foo::bar` whose
    /// title and whose file's title do not balance.
    #[test]
    fn resources_in_defined_types() {
        let line = br#"{"level":"notice","message":"defined content as '{sha256}ca97'","source":"/Stage[main]/Web/Foo::Bar[one]x[]/File[/tmp/pexp/var/df-one]x[]/ensure","tags":["notice","file","foo::bar","foo","bar","class","web"],"time":"2026-11-26T10:55:58.139042748+00:00","file":"/tmp/pexp/site.pp","line":1}"#;
        assert_eq!(
            parse_line(line).unwrap().kind,
            resource("File", "/tmp/pexp/var/df-one]x[", Some("ensure"))
        );
        let vhost = [
            "notice",
            "concat_fragment",
            "x",
            "apache::vhost",
            "apache",
            "vhost",
            "class",
        ];
        assert_eq!(
            tagged(
                "/Stage[main]/Profile::Web/Apache::Vhost[site/a]/Concat_fragment[x]/ensure",
                Some(&vhost),
                "m"
            ),
            resource("Concat_fragment", "x", Some("ensure"))
        );
        assert_eq!(
            tagged(
                "/Stage[main]/Apache/Apache::Vhost[default]",
                Some(&[
                    "warning",
                    "apache::vhost",
                    "apache",
                    "vhost",
                    "default",
                    "class"
                ]),
                "m"
            ),
            resource("Apache::Vhost", "default", None)
        );
    }

    /// A reference whose type is not among the tags is not the resource;
    /// with no reference confirmed the line is about nothing known. Only a
    /// line without `tags` (not Puppet's shape) is read from the source
    /// alone.
    #[test]
    fn the_tags_confirm_the_type() {
        let src = "/Stage[main]/Main/File[/srv/up/Notify[kick -> db]/group";
        assert_eq!(tagged(src, Some(&["notice", "class"]), "m"), other(src));
        assert_eq!(tagged(src, Some(&[]), "m"), other(src));
        // Case as Puppet writes tags: lower; the type's case in the source.
        assert_eq!(
            tagged(
                "/Stage[main]/Main/Notify[n]/message",
                Some(&["notice", "notify"]),
                "m"
            ),
            resource("Notify", "n", Some("message"))
        );
        assert_eq!(
            tagged(src, None, "m"),
            resource("Notify", "kick -> db", Some("group"))
        );
        assert_eq!(
            tagged("/Stage[main]/Main/Exec[echo a]b]/returns", None, "m"),
            resource("Exec", "echo a]b", Some("returns"))
        );
        // Tags that are not strings: not a line of Puppet's.
        let bad = br#"{"level":"notice","message":"m","source":"/Stage[main]/Main/Notify[n]","tags":[1]}"#;
        assert!(matches!(parse_line(bad), Err(LineError::Json(_))));
    }

    #[test]
    fn noop_corrective_and_run_boundaries() {
        let src = "/Stage[main]/Main/File[/srv/x]/content";
        let flags = |m| match kind(src, m) {
            LineKind::Resource {
                noop, corrective, ..
            } => (noop, corrective),
            k => panic!("{k:?}"),
        };
        assert_eq!(
            flags("current_value 'a', should be 'b' (noop)"),
            (true, false)
        );
        assert_eq!(
            flags("content changed 'a' to 'b' (corrective)"),
            (false, true)
        );
        assert_eq!(flags("x (noop) (corrective)"), (true, true));
        assert_eq!(flags("x (noop) trailing"), (false, false));
        assert_eq!(
            kind("Puppet", "Applying configuration version '1795336303'"),
            LineKind::ConfigurationVersion("1795336303".into())
        );
        assert_eq!(
            kind("Puppet", "Applied catalog in 0.01 seconds"),
            LineKind::RunEnd { seconds: 0.01 }
        );
        // Only from Puppet itself, and only with a number.
        assert_eq!(
            kind("Facter", "Applied catalog in 1 seconds"),
            other("Facter")
        );
        assert_eq!(
            kind("Puppet", "Applied catalog in NaN seconds"),
            other("Puppet")
        );
        assert_eq!(
            kind("Puppet", "Applied catalog in -1 seconds"),
            other("Puppet")
        );
    }

    #[test]
    fn text_is_cleaned_and_cut() {
        let long = "é".repeat(300);
        let line = serde_json::json!({"level": "err", "message": format!("a\u{1b}[31mb\n{long}"),
            "source": format!("/Stage[main]/Main/Notify[{long}]")});
        let parsed = parse_line(line.to_string().as_bytes()).unwrap();
        assert!(parsed.message.starts_with("a [31mb é"));
        assert!(parsed.message.len() <= MAX_TEXT_BYTES && parsed.message.ends_with('…'));
        assert_eq!(parsed.time, None);
        match parsed.kind {
            LineKind::Resource { title, .. } => assert!(title.len() <= MAX_TEXT_BYTES),
            k => panic!("{k:?}"),
        }
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let ok = br#"{"level":"notice","message":"m","source":"Puppet","tags":[]}"#;
        assert!(parse_line(ok).is_ok());
        assert!(
            parse_line(b"{\"level\":\"notice\",\"message\":\"m\",\"source\":\"Puppet\"}\r").is_ok()
        );
        let json_err = |l: &[u8]| matches!(parse_line(l), Err(LineError::Json(_)));
        assert!(json_err(b""));
        assert!(json_err(b"\x00\xff\xfe garbage"));
        assert!(json_err(&ok[..ok.len() - 5]));
        assert!(json_err(b"[1,2,3]"));
        assert!(json_err(br#"{"level":"notice","message":"m"}"#));
        assert!(json_err(
            br#"{"level":"notice","message":42,"source":"Puppet"}"#
        ));
        assert!(json_err(
            b"{\"level\":\"notice\",\"message\":\"\xff\xfe\",\"source\":\"P\"}"
        ));
        // Deep nesting: skipped without recursion in an ignored key (the
        // line cap bounds it), refused in a read one.
        let deep = |key: &str| {
            format!(
                r#"{{"level":"err","source":"P","{key}":{}{}}}"#,
                "[".repeat(30_000),
                "]".repeat(30_000)
            )
        };
        let ignored = deep("backtrace").replace("\"P\",", "\"P\",\"message\":\"m\",");
        assert!(parse_line(ignored.as_bytes()).is_ok());
        assert!(json_err(&ignored.as_bytes()[..40_000]));
        assert!(json_err(deep("message").as_bytes()));
        assert_eq!(
            parse_line(br#"{"level":"fatal","message":"m","source":"Puppet"}"#),
            Err(LineError::UnknownLevel("fatal".into()))
        );
        let mut huge = br#"{"level":"err","source":"Puppet","message":""#.to_vec();
        huge.resize(1 << 20, b'a');
        huge.extend_from_slice(b"\"}");
        assert_eq!(
            parse_line(&huge),
            Err(LineError::TooLong {
                len: huge.len(),
                max: MAX_LINE_BYTES
            })
        );
        // Every prefix of a real line: no panic.
        let real = fixture("log.jsonl");
        let first = real.split(|&b| b == b'\n').nth(19).unwrap();
        for n in 0..first.len() {
            let _ = parse_line(&first[..n]);
        }
    }
}
