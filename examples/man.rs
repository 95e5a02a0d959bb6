//! Writes the manual page `redis-snmp(8)` from the command-line definition
//! (`redis_snmp::cli::Cli`), so the OPTIONS section can never drift from what
//! the binary accepts. The sections clap does not know about (configuration
//! file, environment, files, exit status, see also) are added here.
//!
//! Usage: `cargo run --example man -- OUTPUT` (e.g. `redis-snmp.8`; `-`
//! writes to standard output), and `… -- --config-file OUTPUT` for
//! `redis-snmp.toml(5)`, written from the annotated configuration file
//! (`man/config_page.rs`). debian/rules runs both at build time.

use clap::CommandFactory;
use clap_mangen::roff::{bold, italic, roman, Inline, Roff};
use clap_mangen::Man;
use redis_snmp::cli::Cli;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[path = "man/config_page.rs"]
mod config_page;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (page, output) = match (args.next(), args.next(), args.next()) {
        (Some(output), None, None) => (render(), output),
        (Some(flag), Some(output), None) if flag == "--config-file" => {
            (config_page::render(&page_date()), output)
        }
        _ => {
            eprintln!(
                "usage: man [--config-file] OUTPUT  (the roff of redis-snmp(8), or with \
                 --config-file of redis-snmp.toml(5); - for stdout)"
            );
            return ExitCode::from(2);
        }
    };
    let written = if output == "-" {
        std::io::stdout().write_all(page.as_bytes())
    } else {
        let path = PathBuf::from(&output);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if let Err(e) = std::fs::create_dir_all(dir) {
                eprintln!("man: cannot create {}: {e}", dir.display());
                return ExitCode::FAILURE;
            }
        }
        std::fs::write(&path, page)
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("man: cannot write {}: {e}", output.to_string_lossy());
            ExitCode::FAILURE
        }
    }
}

/// The whole page: clap_mangen's title, NAME, SYNOPSIS, DESCRIPTION and
/// OPTIONS, then our sections, then clap_mangen's VERSION.
fn render() -> String {
    let man = Man::new(Cli::command())
        .title("REDIS-SNMP")
        .section("8")
        .date(page_date())
        .manual("System Manager's Manual");
    let mut generated = Vec::new();
    man.render(&mut generated)
        .expect("rendering into memory cannot fail");
    let generated = String::from_utf8(generated).expect("clap_mangen writes UTF-8");

    // Every Roff starts with the same preamble (apostrophe handling); an
    // empty one is exactly that preamble, which clap_mangen's part has
    // already written.
    let preamble = Roff::new().render();
    let extra = extra_sections().render();
    let extra = extra.strip_prefix(&preamble).unwrap_or(&extra);

    // clap_mangen lists subcommands as pages of their own
    // (redis-snmp-doctor(8)); we ship one page, so the subcommand is a
    // section of it, its options rendered from the same definition.
    let generated = match generated.find("\n.SH SUBCOMMANDS") {
        Some(start) => {
            let end = generated[start + 1..]
                .find("\n.SH ")
                .map_or(generated.len(), |e| start + 1 + e);
            format!(
                "{}\n{}{}{}",
                &generated[..start],
                subcommand_section("doctor"),
                subcommand_section("kick"),
                &generated[end + 1..]
            )
        }
        None => generated,
    };

    match generated.find("\n.SH VERSION") {
        Some(at) => format!("{}\n{}{}", &generated[..at], extra, &generated[at + 1..]),
        None => format!("{generated}{extra}"),
    }
}

/// A subcommand (`redis-snmp doctor`, `redis-snmp kick`) as a section of
/// the page: what it does (its own help text) and its options.
fn subcommand_section(name: &str) -> String {
    let command = Cli::command();
    let sub = command
        .find_subcommand(name)
        .unwrap_or_else(|| panic!("the CLI has a {name} subcommand"));
    let mut out = format!(
        ".SH {}\n.PP\n\\fBredis\\-snmp {name}\\fR [\\fIOPTIONS\\fR]\n.PP\n",
        name.to_uppercase()
    );
    let about = sub
        .get_long_about()
        .or(sub.get_about())
        .map(|a| a.to_string())
        .unwrap_or_default();
    // Paragraphs of the help text stay paragraphs.
    let about = about.replace('-', "\\-").replace('\'', "\\*(Aq");
    out.push_str(&about.replace("\n\n", "\n.PP\n"));
    out.push('\n');
    let mut options = Vec::new();
    Man::new(sub.clone())
        .render_options_section(&mut options)
        .expect("rendering into memory cannot fail");
    let options = String::from_utf8(options).expect("clap_mangen writes UTF-8");
    // Its own heading is OPTIONS; these are the subcommand's.
    out.push_str(&options.replacen(".SH OPTIONS", &format!(".SS \"Options of {name}\""), 1));
    out
}

/// The page's date, `YYYY-MM-DD`: from `SOURCE_DATE_EPOCH` when it is set
/// (dpkg-buildpackage sets it to the changelog's date, which makes the page
/// reproducible), otherwise today.
fn page_date() -> String {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0)
        });
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    format!("{y:04}-{m:02}-{d:02}")
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day), after
/// Howard Hinnant's `civil_from_days`.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn section(roff: &mut Roff, title: &str) {
    roff.control("SH", [title]);
}

fn paragraph(roff: &mut Roff, inlines: impl Into<Vec<Inline>>) {
    roff.control("PP", []);
    roff.text(inlines);
}

/// A tagged paragraph: `tag` in bold, then `text`.
fn item(roff: &mut Roff, tag: &str, text: impl Into<Vec<Inline>>) {
    roff.control("TP", []);
    roff.text([bold(tag)]);
    roff.text(text);
}

fn extra_sections() -> Roff {
    let mut r = Roff::new();

    section(&mut r, "OPERATION");
    paragraph(
        &mut r,
        [roman(
            "redis-snmp connects to the AgentX master (normally snmpd(8)), \
             registers REDIS-SERVER-MIB (.1.3.6.1.4.1.20267.400) and answers \
             requests from an in-memory snapshot that background pollers \
             refresh from the Redis INFO command every refresh interval. An \
             SNMP request never waits for Redis. When Redis cannot be reached, \
             redisInstanceUp says down(2) and redisInstanceLastError says why; \
             when the master goes away, the agent reconnects.",
        )],
    );
    paragraph(
        &mut r,
        [
            roman("Without "),
            bold("-n"),
            roman(" the agent detaches from the terminal and writes its PID to the "),
            bold("--daemon-pid"),
            roman(
                " file, as the Perl agent it replaces did. Under systemd it runs \
                 with ",
            ),
            bold("-n"),
            roman(" and logs to the journal."),
        ],
    );

    section(&mut r, "CONFIGURATION FILE");
    paragraph(
        &mut r,
        [
            roman("The file named by "),
            bold("-c"),
            roman(
                " is TOML. Every key is optional; an unknown key is an error \
                 that names the file, the line and the key. Options given on \
                 the command line win over the file. Every setting is in ",
            ),
            bold("redis-snmp.toml"),
            roman("(5)."),
        ],
    );

    section(&mut r, "ENVIRONMENT");
    item(
        &mut r,
        "REDIS_SNMP_PASSWORD",
        [roman(
            "Password of the first Redis instance; removed from the \
             environment at start-up. Preferred over -p, which other users \
             can see in ps(1) until the agent wipes it.",
        )],
    );
    item(
        &mut r,
        "RUST_LOG",
        [roman("Log filter (e.g. debug); when set it wins over -v.")],
    );
    item(
        &mut r,
        "DAEMON_OPTS",
        [roman(
            "Not read by the agent: the systemd unit of the Debian package \
             passes it on the command line after its own options, from \
             /etc/default/redis-snmp, as the init script of the Perl agent did.",
        )],
    );

    section(&mut r, "FILES");
    item(
        &mut r,
        "/etc/redis-snmp/redis-snmp.toml",
        [roman(
            "The configuration file of the Debian package (every setting is \
             there, commented out).",
        )],
    );
    item(
        &mut r,
        "/etc/default/redis-snmp",
        [roman(
            "Optional; DAEMON_OPTS, kept from the Perl agent's package.",
        )],
    );
    item(
        &mut r,
        "/etc/redis-snmp/kick.toml",
        [roman(
            "redis-snmp kick: the roles, their hosts, the kick command and its \
             limits; root's, mode 0600 (refused when group or others may write it).",
        )],
    );
    item(
        &mut r,
        "/var/lib/redis-snmp/kick",
        [roman(
            "redis-snmp kick: the recent kicks and refusals, one file each; root's, \
             mode 0700 (refused when anyone else may enter it).",
        )],
    );
    item(
        &mut r,
        "/var/agentx/master",
        [roman("The default AgentX socket of snmpd.")],
    );
    item(
        &mut r,
        "/usr/share/snmp/mibs/REDIS-SERVER-MIB.txt",
        [roman("The MIB module describing what the agent serves.")],
    );

    section(&mut r, "SIGNALS");
    paragraph(
        &mut r,
        [roman(
            "SIGTERM and SIGINT close the AgentX session and end the agent. \
             SIGHUP (systemctl reload) reads the configuration again and applies \
             its Redis instances without leaving the AgentX session: unchanged \
             ones keep their index and data, changed ones restart at their index, \
             removed ones leave the tables, new ones take an index never used \
             before; a file that does not load is refused and the running \
             configuration kept. With [discovery] local, the host is scanned \
             again too. Other settings need a restart, as the log says.",
        )],
    );

    section(&mut r, "EXIT STATUS");
    paragraph(
        &mut r,
        [roman(
            "0 after SIGTERM or SIGINT; 2 when the command line or the \
             configuration is invalid; 1 on any other failure to start.",
        )],
    );

    section(&mut r, "SEE ALSO");
    paragraph(
        &mut r,
        [
            bold("redis-snmp.toml"),
            roman("(5), "),
            bold("snmpd"),
            roman("(8), "),
            bold("snmpd.conf"),
            roman("(5), "),
            bold("snmpwalk"),
            roman("(1), "),
            bold("redis-server"),
            roman("(1), and "),
            italic("/usr/share/doc/redis-snmp/README.Debian"),
            roman(" for the AgentX socket permissions."),
        ],
    );
    r
}
