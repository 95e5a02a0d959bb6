//! `select = ["role=node", "uptime_seconds>10", "hostname=/^web/"]` of a
//! `[[role]]`: the inventory's hosts whose facts pass every expression.
//!
//! The expressions are puppet-kicker's (`servers_with_facts('uptime>10',
//! 'hostname=/^new$|^old$/')`), which handed them to MCollective's fact
//! filter: `MCollective::Util.parse_fact_string` parses them and
//! `Util.has_fact?` judges them (mcollective `lib/mcollective/util.rb`).
//! Their rules, kept here:
//!
//! - the forms are tried in this order: `fact=>value` (`>=`), `fact=<value`
//!   (`<=`), `fact OP value` with OP one of `<=`, `>=`, `<`, `>`, `!=`,
//!   `==`, `=~`, then `fact=/re/` (a regular expression), then
//!   `fact=value`; blanks around the operator are allowed;
//! - every expression must hold (puppet-kicker's "all the facts
//!   specified"); a host without the fact does not match;
//! - `=` and `==` compare text exactly; `=/re/` and `=~ re` search the
//!   value (not anchored: `^`/`$` anchor);
//! - `<`, `>`, `<=`, `>=`, `!=` compare as whole numbers when both sides
//!   are digits only, as decimals when both are digits `.` digits, and as
//!   text (byte order) otherwise.
//!
//! Two differences, both on the safe side: a regular expression is Rust's
//! `regex` syntax (linear time, no look-around or back-references, which
//! Ruby has), at most [`MAX_PATTERN`] bytes and compiled within a size
//! limit; and MCollective's decimal test `^[0-9]+.[0-9]+$` takes any
//! character for the `.`, where this takes only a dot.
//!
//! The fact `role` is the inventory's role of the host (`puppetRole`,
//! its certificate's `pp_role` where it has one), never a fact of the
//! same name a host lists: it cannot be moved into another role by a
//! file it writes itself.

use regex_automata::meta::Regex;
use std::cmp::Ordering;

/// A pattern's length at most, in bytes.
pub const MAX_PATTERN: usize = 256;
/// An expression's length at most, in bytes.
const MAX_EXPRESSION: usize = 512;
/// Expressions of one role at most.
pub const MAX_EXPRESSIONS: usize = 16;
/// The compiled pattern's size at most (the regex crate's own
/// default is 10 MiB; a pattern of 256 bytes needs far less).
const MAX_COMPILED: usize = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
    Match,
}

/// One expression, parsed.
#[derive(Debug, Clone)]
pub struct Expression {
    /// As written, for messages.
    pub text: String,
    pub fact: String,
    op: Op,
    value: String,
    regex: Option<Regex>,
}

impl PartialEq for Expression {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for Expression {}

/// A fact's name in an expression: what facter names a fact.
fn is_fact_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_.-".contains(c)
}

impl Expression {
    /// Parses one expression (see the module's rules).
    pub fn parse(text: &str) -> Result<Expression, String> {
        let shown = crate::text::quoted(text);
        if text.len() > MAX_EXPRESSION {
            return Err(format!("{shown}: longer than {MAX_EXPRESSION} bytes"));
        }
        let fact_end = text.find(|c: char| !is_fact_char(c)).unwrap_or(text.len());
        let fact = &text[..fact_end];
        if fact.is_empty() || fact.len() > 64 {
            return Err(format!(
                "{shown}: a fact name (letters, digits, '_', '.', '-') is expected first"
            ));
        }
        let rest = text[fact_end..].trim_start_matches(' ');
        // MCollective's order: `=>` and `=<` first, then the two-character
        // operators before the one-character ones, then `=/re/`, then `=`.
        let ops: [(&str, Op); 9] = [
            ("=>", Op::Ge),
            ("=<", Op::Le),
            ("<=", Op::Le),
            (">=", Op::Ge),
            ("!=", Op::Ne),
            ("==", Op::Eq),
            ("=~", Op::Match),
            ("<", Op::Lt),
            (">", Op::Gt),
        ];
        let (op, value) = match ops.iter().find(|(o, _)| rest.starts_with(o)) {
            Some((o, op)) => (*op, rest[o.len()..].trim_start_matches(' ')),
            None => match rest.strip_prefix('=') {
                Some(value) => {
                    let value = value.trim_start_matches(' ');
                    match value
                        .strip_prefix('/')
                        .and_then(|v| v.strip_suffix('/'))
                        .filter(|v| !v.is_empty())
                    {
                        Some(pattern) => (Op::Match, pattern),
                        None => (Op::Eq, value),
                    }
                }
                None => {
                    return Err(format!(
                        "{shown}: fact=value, fact=/regex/, fact>N, fact<N (or >=, <=, !=, ==, =~) is expected"
                    ))
                }
            },
        };
        if value.is_empty() {
            return Err(format!("{shown}: no value after the operator"));
        }
        let regex = if op == Op::Match {
            // `=~ /re/` as MCollective sends it: the slashes are not the
            // pattern's.
            let pattern = value
                .strip_prefix('/')
                .and_then(|v| v.strip_suffix('/'))
                .filter(|v| !v.is_empty())
                .unwrap_or(value);
            Some(compile(pattern).map_err(|e| format!("{shown}: {e}"))?)
        } else {
            None
        };
        Ok(Expression {
            text: text.to_string(),
            fact: fact.to_string(),
            op,
            value: value.to_string(),
            regex,
        })
    }

    /// Whether `fact`'s value passes; a host without the fact does not.
    pub fn holds(&self, fact: Option<&str>) -> bool {
        let Some(fact) = fact else { return false };
        let ordering = || compare(fact, &self.value);
        match self.op {
            Op::Eq => fact == self.value,
            Op::Match => self.regex.as_ref().is_some_and(|r| r.is_match(fact)),
            Op::Ne => ordering() != Ordering::Equal,
            Op::Lt => ordering() == Ordering::Less,
            Op::Gt => ordering() == Ordering::Greater,
            Op::Le => ordering() != Ordering::Greater,
            Op::Ge => ordering() != Ordering::Less,
        }
    }
}

/// A bounded pattern: at most [`MAX_PATTERN`] bytes, nesting and compiled
/// size limited; the engine runs in time linear in the value.
fn compile(pattern: &str) -> Result<Regex, String> {
    if pattern.len() > MAX_PATTERN {
        return Err(format!("the pattern is longer than {MAX_PATTERN} bytes"));
    }
    Regex::builder()
        .syntax(regex_automata::util::syntax::Config::new().nest_limit(32))
        .configure(
            Regex::config()
                .nfa_size_limit(Some(MAX_COMPILED))
                .onepass_size_limit(Some(MAX_COMPILED))
                .dfa_size_limit(Some(MAX_COMPILED))
                .hybrid_cache_capacity(MAX_COMPILED),
        )
        .build(pattern)
        .map_err(|e| format!("not a regular expression: {e}"))
}

/// MCollective's comparison: as whole numbers when both are digits only,
/// as decimals when both are digits, a dot and digits, else as text.
fn compare(fact: &str, value: &str) -> Ordering {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let decimal = |s: &str| {
        s.split_once('.')
            .is_some_and(|(a, b)| digits(a) && digits(b))
    };
    if digits(fact) && digits(value) {
        // Digits only: compare by length, then text (no overflow).
        let (f, v) = (fact.trim_start_matches('0'), value.trim_start_matches('0'));
        return f.len().cmp(&v.len()).then_with(|| f.cmp(v));
    }
    if decimal(fact) && decimal(value) {
        if let (Ok(f), Ok(v)) = (fact.parse::<f64>(), value.parse::<f64>()) {
            return f.partial_cmp(&v).unwrap_or(Ordering::Equal);
        }
    }
    fact.cmp(value)
}

/// A role's `select`: every expression must hold.
pub fn parse_all(texts: &[String]) -> Result<Vec<Expression>, String> {
    if texts.len() > MAX_EXPRESSIONS {
        return Err(format!("at most {MAX_EXPRESSIONS} expressions"));
    }
    texts.iter().map(|t| Expression::parse(t)).collect()
}

/// Whether a host passes every expression, its facts looked up by `fact`.
pub fn selects<'a>(expressions: &[Expression], fact: impl Fn(&str) -> Option<&'a str>) -> bool {
    expressions.iter().all(|e| e.holds(fact(&e.fact)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holds(text: &str, value: Option<&str>) -> bool {
        Expression::parse(text).unwrap().holds(value)
    }

    #[test]
    fn puppet_kickers_examples() {
        // servers_with_facts('hostname=new'), ('hostname=/^new$|^old$/'),
        // ('uptime>10', 'hostname=/lala/').
        assert!(holds("hostname=new", Some("new")));
        assert!(!holds("hostname=new", Some("new2")));
        assert!(holds("hostname=/^new$|^old$/", Some("old")));
        assert!(!holds("hostname=/^new$|^old$/", Some("older")));
        assert!(holds("uptime>10", Some("11")));
        assert!(!holds("uptime>10", Some("10")));
        assert!(!holds("uptime>10", Some("9")));
        assert!(holds("hostname=/lala/", Some("xlalax")), "not anchored");
        // servers_with_role('frontend') is role=frontend.
        assert!(holds("role=frontend", Some("frontend")));
        // A host without the fact never matches, whatever the operator.
        for text in ["a=1", "a!=1", "a>1", "a<1", "a=/x/"] {
            assert!(!holds(text, None), "{text}");
        }
    }

    #[test]
    fn mcollectives_operators_and_comparisons() {
        assert!(holds("n=>10", Some("10")) && holds("n >= 10", Some("11")));
        assert!(holds("n=<10", Some("10")) && !holds("n<=10", Some("11")));
        assert!(holds("n!=10", Some("9")) && !holds("n != 10", Some("10")));
        assert!(holds("n==10", Some("10")) && holds("n = 10", Some("10")));
        assert!(holds("n=~^we", Some("web1")) && holds("n=~/^we/", Some("web1")));
        // Numbers compare as numbers when both are, text otherwise.
        assert!(holds("n>9", Some("10")), "10 > 9 as numbers");
        assert!(holds("n>9", Some("a")), "'a' > '9' as text");
        // Decimals as decimals (1.9 > 1.10), not as versions.
        assert!(holds("v>1.10", Some("1.9")) && !holds("v>1.10", Some("1.05")));
        assert!(holds("n<99999999999999999999999", Some("1")), "no overflow");
        assert!(holds("n>007", Some("8")));
        // Only a value between slashes is a pattern.
        assert!(holds("path=/srv/www", Some("/srv/www")));
        assert!(holds("path=/srv/", Some("/srv/x")));
    }

    #[test]
    fn bad_expressions_are_refused_with_a_reason() {
        for (text, why) in [
            ("", "a fact name"),
            ("=x", "a fact name"),
            ("hostname", "is expected"),
            ("hostname~x", "is expected"),
            ("a=", "no value"),
            ("a>", "no value"),
            ("a=/(/", "not a regular expression"),
            ("a=~(?<=x)y", "not a regular expression"),
        ] {
            let e = Expression::parse(text).unwrap_err();
            assert!(e.contains(why), "{text}: {e}");
        }
        let long = format!("a=/{}/", "x".repeat(MAX_PATTERN + 1));
        assert!(Expression::parse(&long).unwrap_err().contains("longer"));
        // A pattern that would compile huge is refused, not built.
        let e = Expression::parse("a=/\\w{200}\\w{200}/").unwrap_err();
        assert!(e.contains("not a regular expression"), "{e}");
        let many: Vec<String> = (0..MAX_EXPRESSIONS + 1).map(|n| format!("a={n}")).collect();
        assert!(parse_all(&many).is_err());
    }

    #[test]
    fn a_long_value_is_matched_in_linear_time() {
        // A pattern that backtracks exponentially in Ruby.
        let e = Expression::parse("v=/^(a+)+$/").unwrap();
        let value = format!("{}b", "a".repeat(10_000));
        let start = std::time::Instant::now();
        assert!(!e.holds(Some(&value)));
        assert!(start.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn all_must_hold() {
        let all = parse_all(&[
            "role=node".into(),
            "uptime_seconds>10".into(),
            "hostname=/^web/".into(),
        ])
        .unwrap();
        let facts = |role: &'static str, up: &'static str, host: &'static str| {
            move |name: &str| match name {
                "role" => Some(role),
                "uptime_seconds" => Some(up),
                "hostname" => Some(host),
                _ => None,
            }
        };
        assert!(selects(&all, facts("node", "11", "web1")));
        assert!(!selects(&all, facts("node", "5", "web1")));
        assert!(!selects(&all, facts("node", "11", "db1")));
        assert!(!selects(&all, facts("db", "11", "web1")));
        assert!(
            selects(&[], facts("x", "0", "y")),
            "no expression: every host"
        );
    }
}
