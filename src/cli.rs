//! The command line. It accepts the old Perl tool's options with their
//! meanings, so an old `/etc/default/redis-snmp` keeps working, and adds
//! `-c/--config` for everything else. `-h` is the Redis host, as before;
//! help is `--help` (or `-?`).

use clap::{ArgAction, Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Clone, Default, Parser)]
#[command(
    name = "redis-snmp",
    version,
    about = "Net-SNMP AgentX subagent serving Redis INFO as REDIS-SERVER-MIB",
    disable_help_flag = true,
    disable_help_subcommand = true,
    // An old DAEMON_OPTS may repeat an option (`-n` twice): the last wins,
    // as it did with the Perl tool's Getopt::Long.
    args_override_self = true
)]
pub struct Cli {
    /// What makes the configuration, which the doctor takes too.
    #[command(flatten)]
    pub settings: Settings,

    /// Seconds between two polls of Redis [default: 10].
    #[arg(short = 'r', long, value_name = "SECONDS")]
    pub refresh: Option<u64>,

    /// Stay in the foreground (what systemd wants).
    #[arg(short = 'n', long)]
    pub no_daemon: bool,

    /// Write the daemon's PID to FILE [default: /var/run/redis-snmp.pid].
    #[arg(long = "daemon-pid", alias = "daemon_pid", value_name = "FILE")]
    pub daemon_pid: Option<PathBuf>,

    /// More log output (-v debug, -vv trace).
    #[arg(short = 'v', long, action = ArgAction::Count)]
    pub verbose: u8,

    /// Where logs go: auto (journald under systemd or as a daemon where
    /// journald runs, else stderr), stderr, journald.
    #[arg(long, value_name = "TARGET")]
    pub log: Option<String>,

    /// Check the configuration (file and options), say what is wrong or
    /// that it is fine, and exit without starting.
    #[arg(long)]
    pub check_config: bool,

    /// Print help.
    #[arg(short = '?', long, action = ArgAction::Help)]
    pub help: Option<bool>,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The options that say what the agent serves and where: the agent's, and
/// the doctor's, which checks the agent as these configure it. (How the
/// agent runs, `-n`, `-v`, `--log`…, is the agent's alone: the doctor's
/// help lists only what it uses.)
#[derive(Debug, Clone, Default, Args)]
pub struct Settings {
    /// Redis host to poll (the first instance).
    #[arg(short = 'h', long, value_name = "HOST")]
    pub host: Option<String>,

    /// Redis TCP port (default 6379).
    #[arg(short = 'P', long, value_name = "PORT")]
    pub port: Option<u16>,

    /// Redis password. Visible to other users in `ps` until the agent wipes
    /// it: prefer --password-file or REDIS_SNMP_PASSWORD.
    #[arg(short = 'p', long, value_name = "PASS")]
    pub password: Option<String>,

    /// Read the Redis password from this file (first line).
    #[arg(long, value_name = "FILE")]
    pub password_file: Option<PathBuf>,

    /// OID the 17 legacy scalars hang under; the rest of the MIB is placed
    /// beside it [default: .1.3.6.1.4.1.20267.400.1].
    #[arg(short = 'o', long, value_name = "OID")]
    pub oid: Option<String>,

    /// AgentX master address: /path, unix:/path or tcp:host:port
    /// [default: /var/agentx/master].
    #[arg(short = 'x', long = "agentx-socket", value_name = "ADDRESS")]
    pub agentx_socket: Option<String>,

    /// Configuration file (TOML); command-line options override it.
    #[arg(short = 'c', long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Watch the Puppet agent's run files and its events log
    /// (/var/log/puppet-events/events.jsonl) at Debian's default paths (the
    /// `[puppet]` section of the configuration file says more: events_log,
    /// resource_notifications_per_run, event_rows).
    #[arg(long)]
    pub puppet: bool,

    /// Also poll the redis-server and valkey-server processes listening on
    /// this host, found in /proc (as `[discovery] local = true` in the file).
    #[arg(long)]
    pub discover: bool,
}

impl Settings {
    /// These, each replaced by `over`'s where `over` gives one: the
    /// doctor's own options over those given before `doctor`.
    pub fn overlaid(&self, over: &Settings) -> Settings {
        Settings {
            host: over.host.clone().or_else(|| self.host.clone()),
            port: over.port.or(self.port),
            password: over.password.clone().or_else(|| self.password.clone()),
            password_file: over
                .password_file
                .clone()
                .or_else(|| self.password_file.clone()),
            oid: over.oid.clone().or_else(|| self.oid.clone()),
            agentx_socket: over
                .agentx_socket
                .clone()
                .or_else(|| self.agentx_socket.clone()),
            config: over.config.clone().or_else(|| self.config.clone()),
            puppet: over.puppet || self.puppet,
            discover: over.discover || self.discover,
        }
    }
}

/// What to do instead of serving.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Check the whole path as installed (snmpd, its AgentX socket and
    /// view, each Redis instance and the commands the agent sends, Puppet's
    /// files, trap sinks) and print, for each problem, what to do. Takes
    /// the options that say what the agent serves and where, as the agent
    /// does (-c, -h, -P, -p…); exits 0 only when all is well.
    Doctor(DoctorArgs),
    /// React to the agents' Puppet notifications on a manager, as an
    /// snmptrapd `traphandle` (the lines are in
    /// /usr/share/doc/redis-snmp/examples/snmptrapd-kick.conf).
    ///
    /// A puppetResourceChanged for a Notify titled "kick -> ROLE", sent
    /// from the address of a host configured in the file named by -c
    /// (default /etc/redis-snmp/kick.toml), runs kick_command (an argv, no
    /// shell; ssh and puppet agent --onetime by default) on each host of
    /// ROLE, detached, ended at timeout. snmptrapd runs it only for SNMPv3
    /// notifications with privacy from the agents' user (authUser
    /// log,execute USER priv); no community may execute.
    ///
    /// Loops stop by generation: a notification from a host in a kicked run
    /// (or whose kicked run ended less than window seconds ago) asks for
    /// kicks one generation deeper, and deeper than max_depth is refused. A
    /// host is kicked at most once per window, counted from the end of its
    /// kicked run, and a role at most budget_per_hour times an hour; a kick
    /// these rules hold back is deferred and runs when they allow, later
    /// requests for the host joining it. "kick -> again" runs Puppet again
    /// on the host that asks, once its run has ended, until a run changes
    /// nothing else. The kicked hosts' own puppetRunFinished (with the job
    /// id {kick} gave the run) says how each kick ended, a run that changed
    /// nothing too; --status lists the kicks and refusals kept in
    /// state_dir. A role may give a PQL query instead of hosts (with
    /// puppetdb = "https://HOST:8081" and a client certificate beside it):
    /// a detached resolver asks PuppetDB within puppetdb_timeout and kicks
    /// the certnames it names; a PuppetDB that cannot answer leaves a
    /// refusal with the reason.
    ///
    /// Callbacks on any change: each "on" rule of the file takes the
    /// puppetResourceChanged and puppetResourceFailed of configured hosts
    /// whose resource (its type and title) matches its glob, whose status
    /// is its status (changed, failed or any) and, with from_role, whose
    /// sender has that role; it kicks a configured role (kick = "ROLE"), or
    /// runs a command on the manager (run, an argv with placeholders {host}
    /// {resource} {status} {role} {kick} as whole arguments), judged and
    /// recorded like a kick: generations, window, budget, deferral, retries.
    Kick(KickArgs),
}

#[derive(Debug, Clone, Args)]
#[command(disable_help_flag = true)]
pub struct KickArgs {
    /// The kick configuration [default: /etc/redis-snmp/kick.toml].
    #[arg(short = 'c', long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// More log output (-v debug, -vv trace).
    #[arg(short = 'v', long, action = ArgAction::Count)]
    pub verbose: u8,

    /// List the recent kicks (host, role, cause, generation, start, end,
    /// outcome) and refusals, instead of reading a notification.
    #[arg(long)]
    pub status: bool,

    /// List the inventory: the hosts whose run notifications reached this
    /// manager, with the role their certificate gives them (pp_role, or
    /// their role_fact), the facts their agent serves (its puppet section's
    /// facts) and when each was last heard of; a role without hosts kicks
    /// these, a role's select those whose facts pass it.
    #[arg(long, conflicts_with = "status")]
    pub inventory: bool,

    /// With --inventory: as JSON.
    #[arg(long, requires = "inventory")]
    pub json: bool,

    /// Run one recorded kick (what the handler starts, detached).
    #[arg(long, value_name = "ID", hide = true, conflicts_with = "status")]
    pub supervise: Option<String>,

    /// Ask PuppetDB for the hosts of a role given by a query and kick
    /// them (what the handler starts, detached), for a request from
    /// --source for --resource.
    #[arg(long, value_name = "ROLE", hide = true, conflicts_with_all = ["status", "supervise"], requires_all = ["source", "resource"])]
    pub resolve: Option<String>,

    /// With --resolve: the address the request came from.
    #[arg(long, value_name = "ADDRESS", hide = true, requires = "resolve")]
    pub source: Option<std::net::IpAddr>,

    /// With --resolve: the resource that asked.
    #[arg(
        long,
        value_name = "RESOURCE",
        hide = true,
        requires = "resolve",
        allow_hyphen_values = true
    )]
    pub resource: Option<String>,

    /// Print help.
    #[arg(short = '?', long, action = ArgAction::Help)]
    pub help: Option<bool>,
}

#[derive(Debug, Clone, Args)]
// Its own `-?`/`--help` below, as the top level has: clap's generated
// `--help` would be a second argument named `help` (clap's debug
// assertions refuse that when the whole command is built, as the manual
// page generator does).
#[command(disable_help_flag = true)]
pub struct DoctorArgs {
    /// The agent's configuration, as the agent takes it.
    #[command(flatten)]
    pub settings: Settings,

    /// Print the findings as JSON, for scripts.
    #[arg(long)]
    pub json: bool,

    /// Print help.
    #[arg(short = '?', long, action = ArgAction::Help)]
    pub help: Option<bool>,

    /// snmpd's configuration (files named by its includeDir and
    /// includeFile lines are read too).
    #[arg(long, value_name = "FILE", default_value = "/etc/snmp/snmpd.conf")]
    pub snmpd_conf: PathBuf,

    /// The user the agent runs as, whose access to the AgentX socket and
    /// Puppet's files is checked [default: redis-snmp where that user
    /// exists, else whoever runs the doctor].
    #[arg(long, value_name = "USER")]
    pub user: Option<String>,
}

/// Which options take a value and which carry a secret, as clap reads
/// them: what [`crate::secret::wipe_from_argv`] needs to find the password
/// in argv in every spelling clap accepts.
pub fn arg_shapes() -> crate::secret::ArgShapes {
    use clap::CommandFactory;
    let mut shapes = crate::secret::ArgShapes::default();
    let command = Cli::command();
    // The subcommands' options too: the doctor takes the password as the
    // agent does.
    let arguments = command.get_arguments().chain(
        command
            .get_subcommands()
            .flat_map(|sub| sub.get_arguments()),
    );
    for arg in arguments {
        if !arg.get_action().takes_values() {
            continue;
        }
        let secret = arg.get_id() == "password";
        let shorts: Vec<char> = arg.get_short_and_visible_aliases().unwrap_or_default();
        let longs: Vec<String> = arg
            .get_long_and_visible_aliases()
            .unwrap_or_default()
            .into_iter()
            .chain(arg.get_aliases().unwrap_or_default())
            .map(String::from)
            .collect();
        if secret {
            shapes.secret_short.extend(&shorts);
            shapes.secret_long.extend(longs.iter().cloned());
        }
        shapes.short_with_value.extend(shorts);
        shapes.long_with_value.extend(longs);
    }
    // The doctor's options are the agent's again: each spelling once.
    for list in [&mut shapes.short_with_value, &mut shapes.secret_short] {
        list.sort_unstable();
        list.dedup();
    }
    for list in [&mut shapes.long_with_value, &mut shapes.secret_long] {
        list.sort_unstable();
        list.dedup();
    }
    shapes
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn definition_is_consistent() {
        let command = Cli::command();
        command.clone().debug_assert();
        // The top level's assertions leave subcommands unbuilt; the manual
        // page generator builds each, so check each.
        for sub in command.get_subcommands() {
            sub.clone().debug_assert();
        }
    }

    #[test]
    fn old_perl_options_keep_their_meaning() {
        let cli = Cli::try_parse_from([
            "redis-snmp",
            "-h",
            "db1",
            "-P",
            "6380",
            "-o",
            "1.3.6.1.4.1.20267.400.1",
            "-r",
            "60",
            "-n",
            "--daemon-pid",
            "/run/x.pid",
            "-vv",
        ])
        .unwrap();
        assert_eq!(cli.settings.host.as_deref(), Some("db1"));
        assert_eq!(cli.settings.port, Some(6380));
        assert_eq!(cli.refresh, Some(60));
        assert!(cli.no_daemon);
        assert_eq!(cli.verbose, 2);
        assert_eq!(cli.daemon_pid, Some(PathBuf::from("/run/x.pid")));
    }

    #[test]
    fn the_password_options_are_known_as_clap_reads_them() {
        let shapes = arg_shapes();
        assert_eq!(shapes.secret_short, ['p']);
        assert_eq!(shapes.secret_long, ["password"]);
        assert!(shapes.short_with_value.contains(&'h'));
        assert!(!shapes.short_with_value.contains(&'n'));
        assert!(shapes.long_with_value.iter().any(|l| l == "daemon_pid"));
        // The spellings the wipe handles are all ones clap accepts.
        for args in [
            &["x", "-p=pw"][..],
            &["x", "-npPW"],
            &["x", "-np", "PW"],
            &["x", "-vp", "PW"],
        ] {
            let cli = Cli::try_parse_from(args).unwrap();
            assert!(cli
                .settings
                .password
                .is_some_and(|p| p.ends_with("pw") || p == "PW"));
        }
    }

    #[test]
    fn the_doctor_and_kick_take_only_the_options_they_use() {
        let command = Cli::command();
        let ids = |name: &str| -> Vec<String> {
            let mut ids: Vec<String> = command
                .find_subcommand(name)
                .unwrap()
                .get_arguments()
                .filter(|a| !a.is_hide_set())
                .map(|a| a.get_id().to_string())
                .collect();
            ids.sort();
            ids
        };
        assert_eq!(
            ids("doctor"),
            [
                "agentx_socket",
                "config",
                "discover",
                "help",
                "host",
                "json",
                "oid",
                "password",
                "password_file",
                "port",
                "puppet",
                "snmpd_conf",
                "user"
            ]
        );
        assert_eq!(
            ids("kick"),
            ["config", "help", "inventory", "json", "status", "verbose"]
        );
        // How the agent runs is the agent's: refused after `doctor`.
        for agent_only in [
            "-n",
            "--daemon-pid=/run/x",
            "-v",
            "--log=stderr",
            "--check-config",
            "-r5",
        ] {
            assert!(
                Cli::try_parse_from(["redis-snmp", "doctor", agent_only]).is_err(),
                "{agent_only}"
            );
        }
        // The doctor's options over those given before it.
        let cli = Cli::try_parse_from([
            "redis-snmp",
            "-c",
            "/a",
            "-P",
            "1",
            "doctor",
            "-c",
            "/b",
            "-pPW",
        ])
        .unwrap();
        let Some(Command::Doctor(args)) = &cli.command else {
            panic!("not the doctor");
        };
        let settings = cli.settings.overlaid(&args.settings);
        assert_eq!(settings.config, Some(PathBuf::from("/b")));
        assert_eq!(settings.port, Some(1));
        assert_eq!(settings.password.as_deref(), Some("PW"));
    }

    #[test]
    fn a_repeated_option_is_not_an_error() {
        let cli = Cli::try_parse_from(["redis-snmp", "-n", "-n", "-r", "5", "-r", "300"]).unwrap();
        assert!(cli.no_daemon);
        assert_eq!(cli.refresh, Some(300));
    }
}
