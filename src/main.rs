//! Wires the modules together: configuration, logging, the pollers, the
//! AgentX session, shutdown on SIGTERM/SIGINT and reload on SIGHUP.

use clap::Parser;
use redis_snmp::agentx::session::{Session, SessionConfig};
use redis_snmp::cli::{Cli, Command};
use redis_snmp::config::{Config, PASSWORD_ENV};
use redis_snmp::hub::Hub;
use redis_snmp::notify::Notifier;
use redis_snmp::puppet;
use redis_snmp::redis::poller::Poller;
use redis_snmp::secret;
use redis_snmp::snapshot::Store;
use redis_snmp::{daemon, discovery, doctor, logging, reload};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::signal::unix::{signal, SignalKind};
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
    let detached = args.supervise.is_some();
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
    let mode = match (&args.supervise, args.status) {
        (Some(id), _) => kick::Mode::Supervise(id),
        (None, true) => kick::Mode::Status,
        (None, false) => kick::Mode::Handle,
    };
    kick::main(&config, mode)
}

/// Serves until SIGTERM or SIGINT; on SIGHUP, loads the configuration
/// again from `cli` and `env_password`, as at start-up. `base` is the
/// configuration as loaded; discovery (when on) adds to it at start-up, on
/// each reload and every `[discovery] interval`.
async fn run(base: Config, cli: Cli, env_password: Option<String>) -> ExitCode {
    let mut base = base;
    let config = discovery::discovered(base.clone(), false).await;
    let (mut sigterm, mut sigint, mut sighup) = match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    ) {
        (Ok(term), Ok(int), Ok(hup)) => (term, int, hup),
        _ => {
            error!("cannot install signal handlers");
            return ExitCode::FAILURE;
        }
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
    let notifier = Notifier::new(
        config.notifications.clone(),
        config.layout.clone(),
        notify_tx,
    );
    let hub = Arc::new(Hub::new(store.clone(), notifier));

    let (for_start, for_forget, for_alarms, on_shutdown) =
        (hub.clone(), hub.clone(), hub.clone(), shutdown.clone());
    let mut running = reload::Running::start(
        config.clone(),
        Box::new(move |poller: Poller| {
            tokio::spawn(for_start.clone().follow_redis(poller, on_shutdown.clone()))
        }),
        Box::new(move |index| for_forget.forget_redis(index)),
        Box::new(move |specs| for_alarms.reconfigure_alarms(specs)),
    );
    if let Some(paths) = &config.puppet {
        let options = puppet::WatcherOptions {
            converge_runs: config.notifications.puppet_converge_runs,
            ..Default::default()
        };
        let states = puppet::spawn_watcher_with(paths.clone(), options, shutdown.clone());
        tokio::spawn(hub.clone().follow_puppet(
            states,
            config.layout.clone(),
            config.notifications.puppet_stale_after,
            config.notifications.puppet_min_run_interval,
            shutdown.clone(),
        ));
    }
    if let Some(events) = &config.puppet_events {
        match puppet::events::spawn_events_follower(
            events.clone(),
            config.layout.clone(),
            shutdown.clone(),
        ) {
            Ok(readings) => {
                tokio::spawn(hub.clone().follow_puppet_events(readings, shutdown.clone()));
            }
            Err(e) => error!("cannot start following the Puppet events log: {e}"),
        }
    }

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

    let cli = Arc::new(cli);
    let mut rescan = discovery::rescan_timer(&base);
    loop {
        tokio::select! {
            _ = discovery::tick(&mut rescan) => {
                // Applied only when the servers found changed: a reload
                // that changes nothing would still say so in the log.
                let wanted = discovery::discovered(base.clone(), true).await;
                if wanted.instances != running.instances() {
                    info!("discovery: the servers of this host changed");
                    running.reload(Ok(wanted)).await;
                }
            }
            _ = sigterm.recv() => {
                info!("SIGTERM received");
                break;
            }
            _ = sigint.recv() => {
                info!("SIGINT received");
                break;
            }
            _ = sighup.recv() => {
                info!("SIGHUP received: reloading the configuration");
                // Files are read off the runtime's thread, which runs the
                // pollers and the session's reconnects, Pings and notifications.
                let (cli, env_password) = (cli.clone(), env_password.clone());
                let loaded = tokio::task::spawn_blocking(move || Config::load(&cli, env_password)).await;
                match loaded {
                    Ok(Ok(loaded)) => {
                        base = loaded.clone();
                        rescan = discovery::rescan_timer(&base);
                        let wanted = discovery::discovered(loaded, false).await;
                        running.reload(Ok(wanted)).await;
                    }
                    Ok(Err(e)) => {
                        running.reload(Err(e)).await;
                    }
                    Err(e) => error!("reload refused: reading the configuration failed: {e}"),
                }
            }
        }
    }
    shutdown.cancel();
    if tokio::time::timeout(Duration::from_secs(2), session_task)
        .await
        .is_err()
    {
        warn!("the AgentX session did not close within 2 s");
    }
    ExitCode::SUCCESS
}
