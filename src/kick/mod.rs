//! `redis-snmp kick`: the reacting half. snmptrapd runs it as a
//! `traphandle` for the agent's Puppet notifications; a resource event
//! `Notify[kick -> ROLE]` from a known host runs the configured command
//! (Puppet, over ssh) on the hosts of ROLE, and the kicked host's own run
//! notifications say whether it worked.
//!
//! - [`settings`]: `kick.toml`, checked and bounded.
//! - [`trap`]: snmptrapd's input, read with bounds.
//! - [`record`]: what the ledger remembers; [`ledger`]: the state
//!   directory, written without following symlinks.
//! - [`judge`]: pure: which kicks are due (generations, windows, budgets).
//! - [`supervise`]: the detached supervisor that runs a kick with a
//!   timeout; [`status`]: `kick --status`.
//!
//! The handler never waits for a kick: it decides, records, starts a
//! detached supervisor and returns, within milliseconds.

pub mod inventory;
pub mod judge;
pub mod ledger;
pub mod puppetdb;
pub mod record;
pub mod settings;
pub mod status;
pub mod supervise;
pub mod trap;

use judge::{millis, Decision, Request};
use ledger::{now, Ledger, Locked};
use record::{Cause, End, Millis, Record, Refusal, Refused};
use settings::Settings;
use status::escaped;
use std::net::{IpAddr, ToSocketAddrs};
use std::path::Path;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tracing::{debug, info, warn};
use trap::{Event, RunEnd};

/// The handler waits this long at most for the ledger's lock, so that
/// snmptrapd is answered within 100 ms.
const HANDLER_LOCK_WAIT: Duration = Duration::from_millis(60);
/// Host names without an address in `[addresses]` are looked up within
/// this time, all at once.
const LOOKUP_WAIT: Duration = Duration::from_millis(25);
/// Lookups made at most per notification.
const MAX_LOOKUPS: usize = 64;
/// A queued kick whose supervisor has not said it runs after this long
/// never will.
const SUPERVISOR_START: Millis = 30_000;

/// What `redis-snmp kick` was asked to do.
pub enum Mode<'a> {
    /// Handle one notification from standard input (snmptrapd).
    Handle,
    /// Print the recent kicks.
    Status,
    /// Print the inventory (as JSON with `true`).
    Inventory(bool),
    /// Run kick `id` (started by the handler, detached).
    Supervise(&'a str),
    /// Ask PuppetDB for the hosts of a role given by `query`, then judge
    /// and start their kicks (started by the handler, detached): the
    /// request's role, sender address and resource.
    Resolve {
        role: &'a str,
        source: IpAddr,
        resource: &'a str,
    },
}

pub fn main(config: &Path, mode: Mode) -> ExitCode {
    // First of all: nothing of snmptrapd's reaches what we start.
    supervise::close_inherited_descriptors();
    let settings = match Settings::load(config) {
        Ok(settings) => settings,
        Err(e) => {
            warn!("kick: {e}");
            eprintln!("redis-snmp kick: {e}");
            return ExitCode::from(2);
        }
    };
    let ledger = match Ledger::open(&settings.state_dir) {
        Ok(ledger) => ledger,
        Err(e) => {
            warn!("kick: {e}");
            eprintln!("redis-snmp kick: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match mode {
        Mode::Handle => handle(config, &settings, &ledger, &mut std::io::stdin().lock()),
        Mode::Status => print_status(&settings, &ledger),
        Mode::Inventory(json) => print_inventory(&settings, &ledger, json),
        Mode::Supervise(id) => supervise::run(&settings, &ledger, id),
        Mode::Resolve {
            role,
            source,
            resource,
        } => resolve(config, &settings, &ledger, role, source, resource),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            warn!("kick: {e}");
            ExitCode::FAILURE
        }
    }
}

fn print_inventory(settings: &Settings, ledger: &Ledger, json: bool) -> Result<(), String> {
    let locked = ledger.lock(Duration::from_secs(5))?;
    let mut inventory = locked.inventory();
    inventory.prune(now(), millis(settings.inventory_expiry));
    print!("{}", status::inventory(&inventory, json));
    Ok(())
}

fn print_status(settings: &Settings, ledger: &Ledger) -> Result<(), String> {
    let locked = ledger.lock(Duration::from_secs(5))?;
    settle(&locked, now())?;
    print!("{}", status::render(settings, &locked.records()?, now()));
    Ok(())
}

/// Marks kicks whose supervisor is gone as interrupted: a killed
/// supervisor must not count as a running kick forever.
fn settle(locked: &Locked, now: Millis) -> Result<(), String> {
    let (kicks, _) = locked.kicks()?;
    for mut kick in kicks.into_iter().filter(|k| k.active()) {
        let gone = match &kick.supervisor {
            Some(s) => !supervise::alive(s),
            None => now.saturating_sub(kick.queued_at) > SUPERVISOR_START,
        };
        if gone {
            kick.ended_at = Some(now);
            kick.end = Some(End::Interrupted);
            locked.write(&Record::Kick(kick))?;
        }
    }
    Ok(())
}

/// One notification from snmptrapd.
pub fn handle(
    config: &Path,
    settings: &Settings,
    ledger: &Ledger,
    input: &mut impl std::io::Read,
) -> Result<(), String> {
    let trap = trap::read(input);
    match &trap.event {
        Event::Other => Ok(()),
        Event::RunEnded(end) => {
            let Some(source) = trap.source else {
                return Ok(());
            };
            let Some(host) = sender_host(settings, source) else {
                return Ok(());
            };
            record_report(
                settings,
                ledger,
                &host,
                &source.to_canonical().to_string(),
                end,
            )
        }
        Event::ResourceChanged {
            resource_type,
            title,
        } => {
            let Some(role) = trap::kicked_role(resource_type, title) else {
                return Ok(());
            };
            let resource = format!("{resource_type}[{title}]");
            if let Some(source) = by_query(settings, trap.source, &role) {
                return resolve_later(config, settings, ledger, source, &role, resource);
            }
            let started = decide(settings, ledger, trap.source, &role, resource, None)?;
            for id in started {
                start(config, ledger, &id);
            }
            Ok(())
        }
    }
}

/// A run of `host` ended: the report of its kick, if it was kicked; and
/// the `kick -> again` kick the run asked for may now start, is not
/// needed, or is too deep.
fn record_report(
    settings: &Settings,
    ledger: &Ledger,
    host: &str,
    address: &str,
    end: &RunEnd,
) -> Result<(), String> {
    let now = now();
    let locked = ledger.lock(HANDLER_LOCK_WAIT)?;
    settle(&locked, now)?;
    if end.finished {
        // Every run says what the host is: the inventory follows.
        let mut inventory = locked.inventory();
        inventory.saw(host, address, end.role.as_deref(), now);
        inventory.prune(now, millis(settings.inventory_expiry));
        locked.write_inventory(&inventory)?;
    }
    let (mut kicks, _) = locked.kicks()?;
    // A kick of the host that asked for it was asked while the asking run
    // went on; that run ends first (Puppet's run lock), and its end is not
    // the kicked run's. `again` kicks mark it as they start.
    if let (None, Some(run_end)) = (&end.job_id, end.run_end) {
        for kick in kicks.iter_mut().filter(|k| {
            k.host == host
                && k.cause.host == host
                && k.role != settings::AGAIN
                && k.asking_run.is_none()
                && k.report.is_none()
                && k.queued_at <= now
        }) {
            kick.asking_run = Some(run_end);
            locked.write(&Record::Kick(kick.clone()))?;
        }
    }
    let reported = judge::kick_reported(settings, &kicks, host, end, now);
    if let Some(kick) = reported {
        let mut kick = kick.clone();
        kick.report = Some(record::Report {
            failed: end.failed,
            at: now,
            changed: end.changed,
            exact: end.job_id.is_some(),
        });
        info!(
            "kick {}: {} reports a {} run{}",
            kick.id,
            escaped(host),
            if end.failed { "failed" } else { "successful" },
            match (end.changed, &end.job_id) {
                (Some(false), _) => " that changed nothing",
                (_, Some(_)) => " (its job id)",
                _ => "",
            }
        );
        locked.write(&Record::Kick(kick))?;
    }
    let waiting = kicks
        .iter()
        .filter(|k| k.host == host && k.pending() && k.after_run && k.queued_at <= now);
    for kick in waiting {
        let mut kick = kick.clone();
        match judge::after_run(settings, &kicks, &kick, end.resources_changed, end.failed) {
            judge::AfterRun::Start => {
                kick.after_run = false;
                kick.asking_run = end.run_end;
                locked.write(&Record::Kick(kick))?;
            }
            judge::AfterRun::NotNeeded => {
                info!(
                    "kick {}: not running Puppet again on {}: the run that asked changed nothing else",
                    kick.id,
                    escaped(host)
                );
                kick.ended_at = Some(now);
                kick.end = Some(End::NotNeeded(
                    "the run that asked changed nothing else".to_string(),
                ));
                locked.write(&Record::Kick(kick))?;
            }
            judge::AfterRun::TooDeep { chain } => {
                // The refusal takes the kick's place (its id), so that its
                // supervisor finds nothing to start.
                let record = kick.refused(now, Refusal::TooDeep { chain });
                warn!("kick: {}", status::refusal_line(&record, settings));
                locked.write(&Record::Refused(record))?;
            }
        }
    }
    Ok(())
}

/// Judges a request for `role` from `source` and records the decisions;
/// the ids of the kicks to start. `resolved`: the hosts PuppetDB named
/// for a role given by a query (see [`resolve`]).
fn decide(
    settings: &Settings,
    ledger: &Ledger,
    source: Option<IpAddr>,
    role: &str,
    resource: String,
    resolved: Option<Vec<String>>,
) -> Result<Vec<String>, String> {
    let now = now();
    let sender = source.and_then(|a| sender_host(settings, a));
    let locked = ledger.lock(HANDLER_LOCK_WAIT)?;
    settle(&locked, now)?;
    let (kicks, refusals) = locked.kicks()?;
    let Some(sender) = sender else {
        let shown = source.map_or_else(|| "an unknown transport".to_string(), |a| a.to_string());
        let cause = Cause {
            host: shown,
            resource,
        };
        let record = refused(now, None, role, cause, 0, None, Refusal::UnknownSender);
        warn!("kick: {}", status::refusal_line(&record, settings));
        locked.write(&Record::Refused(record))?;
        return Ok(Vec::new());
    };
    if !settings::is_role_name(role) {
        warn!(
            "kick: refused {} from {}: not a role name",
            escaped(&resource),
            escaped(&sender)
        );
        return Ok(Vec::new());
    }
    let cause = Cause {
        host: sender.clone(),
        resource,
    };
    let request = Request {
        now,
        sender: &sender,
        role,
        resource: &cause.resource,
    };
    let targets = match settings.role(role) {
        _ if resolved.is_some() => resolved.unwrap_or_default(),
        Some(r) if r.query.is_some() => Vec::new(),
        Some(r) if r.hosts.is_empty() => {
            locked
                .inventory()
                .hosts_of(role, now, millis(settings.inventory_expiry))
        }
        Some(r) => r.hosts.clone(),
        None => Vec::new(),
    };
    let mut started = Vec::new();
    for decision in judge::judge(settings, &kicks, &request, &targets) {
        match decision {
            Decision::Kick {
                host,
                generation,
                caused_by,
            } => {
                let kick = new_kick(settings, now, host, role, &cause, generation, caused_by);
                info!(
                    "kick {}: {} asks for {role} ({}): kicking {}, generation {generation}",
                    kick.id,
                    escaped(&sender),
                    escaped(&cause.resource),
                    kick.host,
                );
                locked.write(&Record::Kick(kick.clone()))?;
                started.push(kick.id);
            }
            Decision::Defer {
                host,
                generation,
                caused_by,
                why,
            } => {
                let mut kick = new_kick(settings, now, host, role, &cause, generation, caused_by);
                kick.after_run = why == Refusal::OwnRun;
                info!(
                    "kick {}: {} asks for {role} ({}): {} is deferred, generation {generation}: {}",
                    kick.id,
                    escaped(&sender),
                    escaped(&cause.resource),
                    kick.host,
                    escaped(&status::why(&why, settings)),
                );
                kick.deferred = Some(why);
                locked.write(&Record::Kick(kick.clone()))?;
                started.push(kick.id);
            }
            Decision::Coalesce {
                into,
                host: _,
                generation,
                caused_by,
            } => {
                let Some(pending) = kicks.iter().find(|k| k.id == into) else {
                    continue;
                };
                let mut kick = pending.clone();
                kick.coalesce(cause.clone());
                // The shallowest cause is the kick's: the run is needed
                // at that depth, and deeper chains stop as before.
                if generation < kick.generation {
                    kick.generation = generation;
                    kick.caused_by = caused_by;
                }
                info!(
                    "kick {}: {} asks for {role} ({}): joins the kick of {} that waits",
                    kick.id,
                    escaped(&sender),
                    escaped(&cause.resource),
                    kick.host,
                );
                locked.write(&Record::Kick(kick))?;
            }
            Decision::Refuse {
                host,
                generation,
                caused_by,
                why,
            } => {
                let deep = matches!(why, Refusal::TooDeep { .. });
                if deep && judge::already_refused(&refusals, caused_by.as_deref(), role) {
                    debug!("kick: {role} from {sender}: refused again (too deep)");
                    continue;
                }
                let record = refused(now, host, role, cause.clone(), generation, caused_by, why);
                warn!("kick: {}", status::refusal_line(&record, settings));
                locked.write(&Record::Refused(record))?;
            }
        }
    }
    let _ = locked.prune(now);
    Ok(started)
}

/// The sender's address when `role`'s hosts are a PuppetDB query's and
/// the sender is a known host (an unknown one is refused by [`decide`] as
/// for every role, without asking PuppetDB anything).
fn by_query(settings: &Settings, source: Option<IpAddr>, role: &str) -> Option<IpAddr> {
    settings.role(role)?.query.as_ref()?;
    let source = source?;
    sender_host(settings, source).map(|_| source)
}

/// The handler's part of a request for a role given by a query: start
/// the resolver, detached, and return (see [`puppetdb`] for why the
/// handler never asks PuppetDB itself). A resolver that cannot start
/// leaves a refusal.
fn resolve_later(
    config: &Path,
    settings: &Settings,
    ledger: &Ledger,
    source: IpAddr,
    role: &str,
    resource: String,
) -> Result<(), String> {
    info!(
        "kick: {} asks for {role} ({}): asking PuppetDB for its hosts",
        source,
        escaped(&resource)
    );
    match supervise::spawn_resolver(config, role, source, &resource) {
        Ok(()) => Ok(()),
        Err(e) => refuse_by_query(settings, ledger, source, role, resource, e),
    }
}

/// Records that a request for a role given by a query kicked nothing:
/// PuppetDB named no host, for `why`.
fn refuse_by_query(
    settings: &Settings,
    ledger: &Ledger,
    source: IpAddr,
    role: &str,
    resource: String,
    why: String,
) -> Result<(), String> {
    let now = now();
    let host = sender_host(settings, source).unwrap_or_else(|| source.to_string());
    let cause = Cause { host, resource };
    let record = refused(now, None, role, cause, 0, None, Refusal::PuppetDb { why });
    warn!("kick: {}", status::refusal_line(&record, settings));
    let locked = ledger.lock(Duration::from_secs(10))?;
    locked.write(&Record::Refused(record))
}

/// The resolver (`kick --resolve ROLE`, detached): asks PuppetDB for the
/// role's hosts within `puppetdb_timeout`, judges the request against
/// them as the handler judges listed hosts, starts their kicks.
fn resolve(
    config: &Path,
    settings: &Settings,
    ledger: &Ledger,
    role: &str,
    source: IpAddr,
    resource: &str,
) -> Result<(), String> {
    let query = settings.role(role).and_then(|r| r.query.as_deref());
    let (Some(query), Some(db)) = (query, &settings.puppetdb) else {
        return Err(format!("role {role} is not given by a PuppetDB query"));
    };
    // Resolvers are started per request: a flood of requests from an
    // authenticated host must not become a flood of queries.
    let Some(_slot) = puppetdb::Slot::take(config) else {
        let why = format!("{} queries are under way already", puppetdb::MAX_RESOLVERS);
        return refuse_by_query(settings, ledger, source, role, resource.to_string(), why);
    };
    let started = Instant::now();
    let answer = puppetdb::certnames(db, query);
    debug!("kick: PuppetDB answered in {:?}", started.elapsed());
    let hosts = match answer {
        Ok(hosts) if hosts.is_empty() => Err("the query names no host".to_string()),
        other => other,
    };
    match hosts {
        Err(why) => refuse_by_query(settings, ledger, source, role, resource.to_string(), why),
        Ok(hosts) => {
            info!(
                "kick: PuppetDB names the hosts of {role}: {}",
                hosts.join(" ")
            );
            let ids = decide(
                settings,
                ledger,
                Some(source),
                role,
                resource.to_string(),
                Some(hosts),
            )?;
            for id in ids {
                start(config, ledger, &id);
            }
            Ok(())
        }
    }
}

/// Starts the supervisor of kick `id`; when it cannot start, the kick is
/// recorded as not started.
fn start(config: &Path, ledger: &Ledger, id: &str) {
    if let Err(e) = supervise::spawn(config, id) {
        warn!("kick {id}: {e}");
        let _ = supervise::update(ledger, id, |k| {
            k.ended_at = Some(now());
            k.end = Some(End::NotStarted(e.clone()));
        });
    }
}

/// A kick decided now, its id given to the run when `{kick}` asks.
fn new_kick(
    settings: &Settings,
    now: Millis,
    host: String,
    role: &str,
    cause: &Cause,
    generation: u32,
    caused_by: Option<String>,
) -> record::Kick {
    let id = ledger::new_id(now);
    let mut kick = judge::new_kick(id, host, role, cause.clone(), generation, caused_by, now);
    if settings.gives_job_id() {
        kick.job_id = Some(kick.id.clone());
    }
    kick
}

fn refused(
    now: Millis,
    host: Option<String>,
    role: &str,
    cause: Cause,
    generation: u32,
    caused_by: Option<String>,
    why: Refusal,
) -> Refused {
    Refused {
        id: ledger::new_id(now),
        at: now,
        host,
        role: role.to_string(),
        cause,
        generation,
        caused_by,
        why,
    }
}

/// The host a notification came from: a configured host whose name is
/// that address, or lists it in `[addresses]`, or (for names with no
/// entry there) resolves to it within `LOOKUP_WAIT` (25 ms); else the
/// address itself when it is in `inventory_from`.
pub fn sender_host(settings: &Settings, address: IpAddr) -> Option<String> {
    let address = address.to_canonical();
    let known = configured_host(settings, address);
    if known.is_some() {
        return known;
    }
    // Configured nowhere, from a network whose hosts may enter the
    // inventory: known by its address.
    settings
        .inventory_from
        .iter()
        .any(|n| n.contains(address))
        .then(|| address.to_string())
}

/// The configured host `address` is: see [`sender_host`].
fn configured_host(settings: &Settings, address: IpAddr) -> Option<String> {
    let hosts = settings.hosts();
    for host in &hosts {
        let named = host.parse::<IpAddr>().ok().map(|a| a.to_canonical());
        let listed = settings
            .addresses
            .get(*host)
            .is_some_and(|list| list.iter().any(|a| a.to_canonical() == address));
        if named == Some(address) || listed {
            return Some(host.to_string());
        }
    }
    let to_look_up: Vec<String> = hosts
        .iter()
        .filter(|h| h.parse::<IpAddr>().is_err() && !settings.addresses.contains_key(**h))
        .take(MAX_LOOKUPS)
        .map(|h| h.to_string())
        .collect();
    if to_look_up.is_empty() {
        return None;
    }
    let (send, receive) = mpsc::channel();
    for host in to_look_up {
        let send = send.clone();
        std::thread::spawn(move || {
            let found = (host.as_str(), 0)
                .to_socket_addrs()
                .map(|addrs| addrs.map(|a| a.ip().to_canonical()).collect::<Vec<_>>())
                .unwrap_or_default();
            let _ = send.send((host, found));
        });
    }
    drop(send);
    let deadline = Instant::now() + LOOKUP_WAIT;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match receive.recv_timeout(left) {
            Ok((host, found)) if found.contains(&address) => return Some(host),
            Ok(_) => continue,
            Err(_) => break,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn senders_are_known_by_address_name_or_lookup() {
        let s = Settings::parse(
            "kick_command = [\"k\", \"{host}\"]\n[addresses]\n\"lb1\" = [\"192.0.2.10\"]\n\
             \"web1\" = [\"192.0.2.11\"]\n\
             [[role]]\nname = \"r\"\nhosts = [\"lb1\", \"192.0.2.20\", \"localhost\", \"nx.invalid\"]\n",
        )
        .unwrap();
        let host = |a: &str| sender_host(&s, a.parse().unwrap());
        assert_eq!(host("192.0.2.10").as_deref(), Some("lb1"));
        // In no role, but listed: it may ask for kicks.
        assert_eq!(host("192.0.2.11").as_deref(), Some("web1"));
        assert_eq!(host("192.0.2.20").as_deref(), Some("192.0.2.20"));
        assert_eq!(host("::ffff:192.0.2.20").as_deref(), Some("192.0.2.20"));
        assert_eq!(host("127.0.0.1").as_deref(), Some("localhost"));
        assert_eq!(host("192.0.2.99"), None);
    }
}
