//! Wires the modules together: configuration, logging, the pollers, the
//! AgentX session, shutdown on SIGTERM/SIGINT and reload on SIGHUP.

use clap::Parser;
use redis_snmp::agentx::session::{Session, SessionConfig};
use redis_snmp::alarms::Alarms;
use redis_snmp::cli::{Cli, Command};
use redis_snmp::config::{Config, PASSWORD_ENV};
use redis_snmp::hub::{Hands, Hub};
use redis_snmp::judge::Judge;
use redis_snmp::notify::Notifier;
use redis_snmp::puppet;
use redis_snmp::secret;
use redis_snmp::snapshot::Store;
use redis_snmp::{daemon, discovery, doctor, logging, reload};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio_util::sync::CancellationToken;
use tracing::{error, info, warn};

/// Parts staged within this window of each other become one new snapshot.
const SNAPSHOT_WINDOW: Duration = Duration::from_millis(50);

fn main() -> ExitCode {
    // No core dump and no ptrace by other processes of our user: either
    // would hand out the Redis passwords this process holds.
    daemon::forbid_dumps();
    daemon::ignore_hangup_until_ready();
    let mut cli = Cli::parse();
    // clap has copied the password; out of argv with it, in every spelling.
    secret::wipe_from_argv(&redis_snmp::cli::arg_shapes());
    if let Some(Command::Kick(args)) = &cli.command {
        return run_kick(&cli, args);
    }
    // The doctor's options (`redis-snmp doctor -c FILE`) over the agent's
    // given before it: the configuration it checks.
    if let Some(Command::Doctor(args)) = &cli.command {
        cli.settings = cli.settings.overlaid(&args.settings);
    }
    let env_password = std::env::var(PASSWORD_ENV).ok();
    // Nothing we start needs it: keep it out of any child's environment,
    // and out of /proc/PID/environ (ours and, once forked, the daemon's),
    // which shows the strings we started with whatever remove_var does.
    secret::wipe_from_environ(PASSWORD_ENV);
    std::env::remove_var(PASSWORD_ENV);
    // Kept for a reload (SIGHUP), which loads the configuration as start-up did.
    let config = match Config::load(&cli, env_password.clone()) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("redis-snmp: {e}");
            return ExitCode::from(2);
        }
    };
    // A reload reads the same file, also once the daemon has moved to /.
    cli.settings.config = cli
        .settings
        .config
        .map(|path| std::path::absolute(&path).unwrap_or(path));
    if let Some(Command::Doctor(args)) = &cli.command {
        let (config, _) = discovery::with_discovered(config);
        let findings = doctor::checks::run(&config, args);
        if args.json {
            println!("{}", doctor::render_json(&findings));
        } else {
            print!("{}", doctor::render_text(&findings));
        }
        return if doctor::all_well(&findings) {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    if cli.check_config {
        for warning in &config.warnings {
            eprintln!("redis-snmp: warning: {warning}");
        }
        println!("redis-snmp: configuration OK");
        return ExitCode::SUCCESS;
    }
    if config.daemonize {
        if logging::lost_when_detached(config.log_target) {
            // Said while stderr is still the terminal: once detached, stderr
            // is /dev/null and nothing would tell the operator.
            eprintln!(
                "redis-snmp: warning: as a daemon, with stderr closed and no journald to \
                 log to, nothing will be logged; run with -n under a supervisor instead"
            );
        }
        if let Err(e) = daemon::detach(&config.pid_file) {
            eprintln!("redis-snmp: {e}");
            return ExitCode::FAILURE;
        }
    }
    logging::init(config.verbosity, config.log_target, config.daemonize);
    let daemonize = config.daemonize;
    for warning in &config.warnings {
        warn!("{warning}");
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            error!("cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let pid_file = config.pid_file.clone();
    let code = runtime.block_on(run(config, cli, env_password));
    // A reader stuck in a blocking task must not keep the process alive
    // after SIGTERM.
    runtime.shutdown_timeout(Duration::from_secs(1));
    if daemonize {
        let _ = std::fs::remove_file(&pid_file);
    }
    code
}

/// `redis-snmp kick`: the traphandle, its status, or one kick's supervisor.
fn run_kick(cli: &Cli, args: &redis_snmp::cli::KickArgs) -> ExitCode {
    use redis_snmp::kick;
    // The supervisor runs detached, its stderr /dev/null: it logs to
    // journald where journald runs (the ledger has its outcome anyway).
    let detached = args.supervise.is_some() || args.resolve.is_some();
    logging::init(
        cli.verbose.max(args.verbose),
        redis_snmp::config::LogTarget::Auto,
        detached,
    );
    let config = args
        .config
        .clone()
        .or_else(|| cli.settings.config.clone())
        .unwrap_or_else(|| kick::settings::DEFAULT_PATH.into());
    let mode = match (&args.supervise, args.status, args.inventory) {
        (Some(id), _, _) => kick::Mode::Supervise(id),
        (None, _, _) if args.resolve.is_some() => kick::Mode::Resolve {
            role: args.resolve.as_deref().unwrap_or_default(),
            source: args
                .source
                .unwrap_or(std::net::Ipv4Addr::UNSPECIFIED.into()),
            resource: args.resource.as_deref().unwrap_or_default(),
        },
        (None, true, _) => kick::Mode::Status,
        (None, false, true) => kick::Mode::Inventory(args.json),
        (None, false, false) => kick::Mode::Handle,
    };
    kick::main(&config, mode)
}

/// Serves until SIGTERM or SIGINT; on SIGHUP, loads the configuration
/// again from `cli` and `env_password`, as at start-up. `base` is the
/// configuration as loaded; discovery (when on) adds to it at start-up, on
/// each reload and every `[discovery] interval`.
async fn run(base: Config, cli: Cli, env_password: Option<String>) -> ExitCode {
    let config = discovery::discovered(base.clone(), false).await;
    let Some(signals) = Signals::install() else {
        error!("cannot install signal handlers");
        return ExitCode::FAILURE;
    };
    let store = Arc::new(Store::new(config.layout.object_oids()));
    let shutdown = CancellationToken::new();
    tokio::spawn(
        store
            .clone()
            .run_rebuilds(SNAPSHOT_WINDOW, shutdown.clone()),
    );
    // Notifications wait here while snmpd is away, up to this many.
    let (notify_tx, notify_rx) = tokio::sync::mpsc::channel(256);
    let hub = Hub::new(
        store.clone(),
        Notifier::new(
            config.notifications.clone(),
            config.layout.clone(),
            notify_tx,
        ),
        Judge::of(&config.notifications),
        Alarms::new(&config.notifications.alarms, &config.layout),
    );
    let hands = hub.start(shutdown.clone());
    start_puppet(&config, &hands, &shutdown);
    let running = reload::Running::start(config.clone(), hands);

    let session_config = SessionConfig::new(
        config.agentx.clone(),
        config.layout.subtrees(config.puppet.is_some()),
        config.layout.root().clone(),
    );
    let session = Session::new(session_config, store, notify_rx, shutdown.clone());
    let session_task = tokio::spawn(session.run());
    info!(
        "redis-snmp {} serving {} Redis instance(s) through {}",
        env!("CARGO_PKG_VERSION"),
        config.instances.len(),
        config.agentx
    );
    let supervisor = Supervisor {
        base,
        cli: Arc::new(cli),
        env_password,
        running,
    };
    supervisor.serve(signals).await;
    shutdown.cancel();
    if tokio::time::timeout(Duration::from_secs(2), session_task)
        .await
        .is_err()
    {
        warn!("the AgentX session did not close within 2 s");
    }
    ExitCode::SUCCESS
}

/// Starts the Puppet side, when configured: the watcher of its files and
/// the follower of its events log, each sending on the hub's stream.
fn start_puppet(config: &Config, hands: &Hands, shutdown: &CancellationToken) {
    if let Some(paths) = &config.puppet {
        let options = puppet::WatcherOptions {
            converge_runs: config.notifications.puppet_converge_runs,
            ..Default::default()
        };
        let tick = puppet::watcher::tick_every(
            config.notifications.puppet_stale_after,
            config.notifications.puppet_min_run_interval,
        );
        puppet::watcher::spawn_readings(
            paths.clone(),
            options,
            config.layout.clone(),
            tick,
            hands.readings(),
            shutdown.clone(),
        );
    }
    if let Some(events) = &config.puppet_events {
        if let Err(e) = puppet::events::spawn_events_follower(
            events.clone(),
            config.layout.clone(),
            hands.readings(),
            shutdown.clone(),
        ) {
            error!("cannot start following the Puppet events log: {e}");
        }
    }
}

/// The signals the agent answers.
struct Signals {
    term: Signal,
    int: Signal,
    hup: Signal,
}

impl Signals {
    fn install() -> Option<Signals> {
        Some(Signals {
            term: signal(SignalKind::terminate()).ok()?,
            int: signal(SignalKind::interrupt()).ok()?,
            hup: signal(SignalKind::hangup()).ok()?,
        })
    }
}

/// What a running agent changes without a restart: the Redis instances'
/// tasks and the alarms, on SIGHUP and on discovery's rescans.
struct Supervisor {
    /// The configuration as loaded, before discovery adds to it.
    base: Config,
    cli: Arc<Cli>,
    env_password: Option<String>,
    running: reload::Running<Hands>,
}

impl Supervisor {
    /// Until SIGTERM or SIGINT.
    async fn serve(mut self, mut signals: Signals) {
        let mut rescan = discovery::rescan_timer(&self.base);
        loop {
            tokio::select! {
                _ = discovery::tick(&mut rescan) => {
                    // Applied only when the servers found changed: a reload
                    // that changes nothing would still say so in the log.
                    let wanted = discovery::discovered(self.base.clone(), true).await;
                    if wanted.instances != self.running.instances() {
                        info!("discovery: the servers of this host changed");
                        self.running.reload(Ok(wanted)).await;
                    }
                }
                _ = signals.term.recv() => {
                    info!("SIGTERM received");
                    return;
                }
                _ = signals.int.recv() => {
                    info!("SIGINT received");
                    return;
                }
                _ = signals.hup.recv() => {
                    info!("SIGHUP received: reloading the configuration");
                    if self.reload().await {
                        rescan = discovery::rescan_timer(&self.base);
                    }
                }
            }
        }
    }

    /// Loads the configuration again and applies it; whether it loaded.
    async fn reload(&mut self) -> bool {
        // Files are read off the runtime's thread, which runs the
        // pollers, the hub and the session's reconnects, Pings and
        // notifications.
        let (cli, env_password) = (self.cli.clone(), self.env_password.clone());
        let loaded = tokio::task::spawn_blocking(move || Config::load(&cli, env_password)).await;
        match loaded {
            Ok(Ok(loaded)) => {
                self.base = loaded.clone();
                let wanted = discovery::discovered(loaded, false).await;
                self.running.reload(Ok(wanted)).await;
                true
            }
            Ok(Err(e)) => {
                self.running.reload(Err(e)).await;
                false
            }
            Err(e) => {
                error!("reload refused: reading the configuration failed: {e}");
                false
            }
        }
    }
}
