//! `redis-snmp kick`: the reacting half. snmptrapd runs it as a
//! `traphandle` for the agent's Puppet notifications; a resource event
//! `Notify[kick -> ROLE]` from a known host runs the configured command
//! (Puppet, over ssh) on the hosts of ROLE, and the kicked host's own run
//! notifications say whether it worked. Any other resource event of a
//! known host may match an `[[on]]` rule, which kicks a role or runs a
//! command on the manager.
//!
//! - [`settings`]: `kick.toml`, checked and bounded; [`rules`]: its
//!   `[[on]]` rules; [`select`]: a role's fact expressions; [`names`]:
//!   what a host name may be.
//! - [`trap`]: snmptrapd's input, read with bounds.
//! - [`inventory`]: the hosts heard of, their roles and facts.
//! - [`puppetdb`]: a role's hosts by a PQL query, asked by a detached
//!   resolver, never by the handler.
//! - [`record`]: what the ledger remembers; [`ledger`]: where it is
//!   kept, bounded, no flood rewriting what the rules judge by: a local
//!   directory written without following symlinks, or (`[ledger]`,
//!   [`shared_settings`]) a Redis two managers share, its records sealed,
//!   each request claimed by one manager.
//! - [`judge`]: pure: which kicks are due (generations, windows, budgets).
//! - [`on`]: `[[on]]` rules, callbacks on any change: which resource
//!   events ask for a kick or a command, judged like a kick.
//! - [`supervise`]: the detached supervisor that runs a kick with a
//!   timeout; [`status`]: `kick --status`.
//!
//! The handler never waits for a kick: it decides, records, starts a
//! detached supervisor and returns, within milliseconds.

pub mod inventory;
pub mod judge;
pub mod ledger;
pub mod names;
pub mod on;
pub mod puppetdb;
pub mod record;
pub mod rules;
pub mod select;
pub mod settings;
pub mod shared_settings;
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
/// A shared ledger's lock is waited for longer: the other manager holds
/// it while it acts on the same notification, waiting for the replicas.
const SHARED_LOCK_WAIT: Duration = Duration::from_millis(500);

fn handler_wait(ledger: &Ledger) -> Duration {
    if ledger.manager().is_some() {
        SHARED_LOCK_WAIT
    } else {
        HANDLER_LOCK_WAIT
    }
}

/// The handler's calls to a shared ledger end within this, all told.
const HANDLER_DEADLINE: Duration = Duration::from_millis(900);
/// Host names without an address in `[addresses]` are looked up within
/// this time, all at once.
const LOOKUP_WAIT: Duration = Duration::from_millis(25);
/// Lookups made at most per notification.
const MAX_LOOKUPS: usize = 64;

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
    let ledger = match Ledger::of(&settings) {
        Ok(ledger) => ledger,
        Err(e) => {
            warn!("kick: {e}");
            eprintln!("redis-snmp kick: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match mode {
        Mode::Handle => {
            // snmptrapd waits for us: a shared ledger that does not answer
            // is a refusal within a second, never a hang.
            ledger.set_deadline(HANDLER_DEADLINE);
            handle(config, &settings, &ledger, &mut std::io::stdin().lock())
        }
        Mode::Status => print_status(&settings, &ledger),
        Mode::Inventory(json) => print_inventory(&settings, &ledger, json),
        Mode::Supervise(id) => supervise::run(config, &settings, &ledger, id),
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
    let kicks = supervise::settle(&locked, now())?;
    let refusals = locked.refusals()?;
    drop(locked);
    print!("{}", status::render(settings, &kicks, &refusals, now()));
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
            let address = source.to_canonical().to_string();
            match sender_host(settings, source) {
                Some(host) => record_report(config, settings, ledger, &host, &address, end),
                None => report_by_job_id(settings, ledger, &address, end),
            }
        }
        Event::ResourceChanged {
            resource_type,
            title,
        } => on_resource(config, settings, ledger, &trap, resource_type, title, false),
        Event::ResourceFailed {
            resource_type,
            title,
        } => on_resource(config, settings, ledger, &trap, resource_type, title, true),
    }
}

/// A resource event: its `kick -> ROLE` request (a change) and the
/// `[[on]]` rules it matches, decided under one lock. With a shared
/// ledger, the managers that both heard it agree by a claim on the
/// request, written with the decisions: the first acts, the others see it
/// taken and do nothing.
fn on_resource(
    config: &Path,
    settings: &Settings,
    ledger: &Ledger,
    trap: &trap::Trap,
    resource_type: &str,
    title: &str,
    failed: bool,
) -> Result<(), String> {
    let kicked = if failed {
        None
    } else {
        trap::kicked_role(resource_type, title)
    };
    let matchable = rules::matchable(resource_type, title);
    let rules_may_match = matchable
        .as_ref()
        .is_some_and(|r| !on::candidates(settings, r, failed).is_empty());
    if kicked.is_none() && !rules_may_match {
        return Ok(());
    }
    let claim = trap
        .source
        .zip(trap.request.as_deref())
        .map(|(source, request)| claim_key(source, request));
    let taken = |by: String| {
        info!(
            "kick: {}[{}] from {}: taken by manager {by}",
            escaped(resource_type),
            escaped(title),
            trap.source.map_or_else(String::new, |s| s.to_string())
        );
    };
    // Taken already (the other manager was first): seen without the lock,
    // which that manager's supervisors wait for; asked again under it,
    // where it counts.
    let key = claim.as_deref();
    if let Some(by) = key.map(|k| ledger.taken_by(k)).transpose()?.flatten() {
        taken(by);
        return Ok(());
    }
    let locked = ledger.lock(handler_wait(ledger))?;
    if let Some(by) = key.map(|k| locked.taken_by(k)).transpose()?.flatten() {
        taken(by);
        return Ok(());
    }
    if let Some(role) = kicked {
        let resource = format!("{resource_type}[{title}]");
        match by_query(settings, trap.source, &role) {
            Some(source) => resolve_later(config, settings, &locked, source, &role, resource)?,
            None => decide_in(
                config,
                settings,
                &locked,
                trap.source,
                &role,
                resource,
                None,
            )?,
        }
    }
    if let Some(resource) = matchable.filter(|_| rules_may_match) {
        on_rules_in(config, settings, &locked, trap.source, &resource, failed)?;
    }
    if let Some(key) = &claim {
        locked.claim(key)?;
    }
    // Before the lock goes, and with it the supervisors' wait: what they
    // will run is held by the replicas a failover would promote.
    ledger.wait_for_replicas();
    Ok(())
}

/// A request's key for the claim: its sender and its own words, cut to a
/// bounded length (the time and version first, so they stay).
fn claim_key(source: IpAddr, request: &str) -> String {
    let mut key = format!("{} {request}", source.to_canonical());
    if key.len() > 1024 {
        let mut cut = 1024;
        while !key.is_char_boundary(cut) {
            cut -= 1;
        }
        key.truncate(cut);
    }
    key
}

/// A run of `host` ended: the report of its kick, if it was kicked; and
/// the `kick -> again` kick the run asked for may now start, is not
/// needed, or is too deep.
fn record_report(
    config: &Path,
    settings: &Settings,
    ledger: &Ledger,
    host: &str,
    address: &str,
    end: &RunEnd,
) -> Result<(), String> {
    let now = now();
    let locked = ledger.lock(handler_wait(ledger))?;
    let mut kicks = settled(config, &locked, now)?;
    if end.finished {
        // Every run says what the host is: the inventory follows.
        let mut inventory = locked.inventory();
        inventory.saw_with_facts(host, address, end.role.as_deref(), &end.facts, now);
        inventory.prune(now, millis(settings.inventory_expiry));
        locked.write_inventory(&inventory)?;
    }
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
    if let Some(kick) = judge::kick_reported(settings, &kicks, host, end, now) {
        write_report(&locked, kick.clone(), host, end, now)?;
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

/// `kick`'s report: the end of the run `host` says was its kicked one.
fn write_report(
    locked: &Locked,
    mut kick: record::Kick,
    host: &str,
    end: &RunEnd,
    now: Millis,
) -> Result<(), String> {
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
    locked.write(&Record::Kick(kick))
}

/// A run's end from an address no configured host has. A host that a
/// role's PuppetDB query named is kicked without being configured; its
/// kicked run's end names the kick's job id, which that run alone was
/// given (`{kick}` in its command), so it reports that kick, and nothing
/// more: it enters no inventory and finishes no `again`; a run end
/// without a job id from such an address is ignored as before, and a
/// configured host's kick is reported from its own addresses only.
fn report_by_job_id(
    settings: &Settings,
    ledger: &Ledger,
    address: &str,
    end: &RunEnd,
) -> Result<(), String> {
    let Some(job) = end.job_id.as_deref() else {
        return Ok(());
    };
    let now = now();
    let locked = ledger.lock(handler_wait(ledger))?;
    let kicks = supervise::settle(&locked, now)?;
    let configured = settings.hosts();
    let kick = kicks.into_iter().find(|k| {
        k.job_id.as_deref() == Some(job)
            && !configured.contains(&k.host.as_str())
            && !k.runs_callback()
            && !k.report.is_some_and(|r| r.exact)
    });
    let Some(kick) = kick else {
        debug!("kick: a run end from {address} names no kick's job id");
        return Ok(());
    };
    let host = kick.host.clone();
    info!("kick {}: its job id came back from {address}", kick.id);
    write_report(&locked, kick, &host, end, now)
}

/// Judges a request for `role` from `source`, starts the supervisors of
/// the kicks it makes and records the decisions. `resolved`: the hosts
/// PuppetDB named for a role given by a query (see [`resolve`]).
fn decide(
    config: &Path,
    settings: &Settings,
    ledger: &Ledger,
    source: Option<IpAddr>,
    role: &str,
    resource: String,
    resolved: Option<Vec<String>>,
) -> Result<(), String> {
    let locked = ledger.lock(handler_wait(ledger))?;
    decide_in(config, settings, &locked, source, role, resource, resolved)?;
    ledger.wait_for_replicas();
    Ok(())
}

/// [`decide`], the ledger locked.
fn decide_in(
    config: &Path,
    settings: &Settings,
    locked: &Locked,
    source: Option<IpAddr>,
    role: &str,
    resource: String,
    resolved: Option<Vec<String>>,
) -> Result<(), String> {
    let now = now();
    let sender = source.and_then(|a| sender_host(settings, a));
    let Some(sender) = sender else {
        let shown = source.map_or_else(|| "an unknown transport".to_string(), |a| a.to_string());
        let cause = Cause {
            host: shown,
            resource,
        };
        let record = refused(now, None, role, cause, 0, None, Refusal::UnknownSender);
        warn!("kick: {}", status::refusal_line(&record, settings));
        locked.write(&Record::Refused(record))?;
        locked.prune_refusals(now)?;
        return Ok(());
    };
    if !settings::is_role_name(role) {
        warn!(
            "kick: refused {} from {}: not a role name",
            escaped(&resource),
            escaped(&sender)
        );
        return Ok(());
    }
    let kicks = settled(config, locked, now)?;
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
    let targets = match resolved {
        Some(hosts) => hosts,
        None => targets_of(settings, locked, role, now),
    };
    let mut kicks = kicks;
    record_decisions(
        config,
        settings,
        locked,
        &mut kicks,
        &request,
        &cause,
        &targets,
        &|_| None,
    )?;
    let _ = locked.prune(&kicks, now, |k| judge::needed(settings, k, now));
    Ok(())
}

/// A resource event `resource`, failed or not, from `source`, the ledger
/// locked: each `[[on]]` rule it matches ([`on`]) is judged as a
/// request, recorded, and its kicks started. An event from a sender that
/// is no configured host (nor of `inventory_from`) matches nothing, and
/// leaves nothing in the ledger.
fn on_rules_in(
    config: &Path,
    settings: &Settings,
    locked: &Locked,
    source: Option<IpAddr>,
    resource: &str,
    failed: bool,
) -> Result<(), String> {
    let candidates = on::candidates(settings, resource, failed);
    let Some(sender) = source.and_then(|a| sender_host(settings, a)) else {
        debug!(
            "kick: {} from an unknown sender matches no [[on]] rule",
            escaped(resource)
        );
        return Ok(());
    };
    let now = now();
    let mut kicks = settled(config, locked, now)?;
    let (own_role, roles) = on::sender_roles(settings, &locked.inventory(), &sender, now);
    for rule in candidates
        .into_iter()
        .filter(|r| r.matches(resource, failed, &roles))
    {
        let asked = on::asked(rule, &sender, resource, failed);
        let targets = match asked.target {
            Some(target) => vec![target],
            None => targets_of(settings, locked, &asked.role, now),
        };
        let request = Request {
            now,
            sender: &sender,
            role: &asked.role,
            resource: &asked.cause.resource,
        };
        let callback =
            |id: &str| Some(on::callback(rule, &sender, resource, failed, &own_role, id));
        record_decisions(
            config,
            settings,
            locked,
            &mut kicks,
            &request,
            &asked.cause,
            &targets,
            &callback,
        )?;
    }
    let _ = locked.prune(&kicks, now, |k| judge::needed(settings, k, now));
    Ok(())
}

/// The hosts a kick of `role` targets: its own, or the inventory's (those
/// whose facts pass its `select`, when it has one).
fn targets_of(settings: &Settings, locked: &Locked, role: &str, now: Millis) -> Vec<String> {
    match settings.role(role) {
        Some(r) if r.hosts.is_empty() && !r.select.is_empty() => {
            locked
                .inventory()
                .selected(&r.select, now, millis(settings.inventory_expiry))
        }
        // Named by PuppetDB, by the resolver only.
        Some(r) if r.query.is_some() => Vec::new(),
        Some(r) if r.hosts.is_empty() => {
            locked
                .inventory()
                .hosts_of(role, now, millis(settings.inventory_expiry))
        }
        Some(r) => r.hosts.clone(),
        None => Vec::new(),
    }
}

/// Records what `judge` decides of `request` for `targets` (kicks,
/// deferrals, coalescing, refusals) and keeps `kicks` as the ledger now
/// has them, so that the next request of the same notification is judged
/// with these; each kick's supervisor is started as it is recorded. `on`:
/// the `[[on]]` rule that asked, given the new kick's id.
#[allow(clippy::too_many_arguments)]
fn record_decisions(
    config: &Path,
    settings: &Settings,
    locked: &Locked,
    kicks: &mut Vec<record::Kick>,
    request: &Request,
    cause: &Cause,
    targets: &[String],
    on: &dyn Fn(&str) -> Option<record::Callback>,
) -> Result<(), String> {
    let (now, sender, role) = (request.now, request.sender, request.role);
    let decisions = judge::judge(settings, kicks, request, targets);
    for decision in decisions {
        match decision {
            Decision::Kick {
                host,
                generation,
                caused_by,
            } => {
                let mut kick = new_kick(settings, now, host, role, cause, generation, caused_by);
                kick.on = on(&kick.id).map(Box::new);
                let kick = supervised(config, locked, kick, now);
                locked.write(&Record::Kick(kick.clone()))?;
                // Said once it is written: a ledger that cannot be written
                // (a full disk) kicks nothing, and says so instead.
                info!(
                    "kick {}: {} asks for {role} ({}): kicking {}, generation {generation}",
                    kick.id,
                    escaped(sender),
                    escaped(&cause.resource),
                    kick.host,
                );
                kicks.push(kick);
            }
            Decision::Defer {
                host,
                generation,
                caused_by,
                why,
            } => {
                let mut kick = new_kick(settings, now, host, role, cause, generation, caused_by);
                kick.on = on(&kick.id).map(Box::new);
                kick.after_run = why == Refusal::OwnRun;
                let said = format!(
                    "kick {}: {} asks for {role} ({}): {} is deferred, generation {generation}: {}",
                    kick.id,
                    escaped(sender),
                    escaped(&cause.resource),
                    kick.host,
                    escaped(&status::why(&why, settings)),
                );
                kick.not_before = judge::retry_at(settings, kicks, role, &why, now);
                kick.deferred = Some(why);
                let kick = supervised(config, locked, kick, now);
                locked.write(&Record::Kick(kick.clone()))?;
                info!("{said}");
                kicks.push(kick);
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
                    escaped(sender),
                    escaped(&cause.resource),
                    kick.host,
                );
                locked.write(&Record::Kick(kick.clone()))?;
                if let Some(known) = kicks.iter_mut().find(|k| k.id == kick.id) {
                    *known = kick;
                }
            }
            Decision::Refuse {
                host,
                generation,
                caused_by,
                why,
            } => {
                let deep = matches!(why, Refusal::TooDeep { .. });
                let earlier = || locked.refusals_from(sender).kept;
                if deep && judge::already_refused(&earlier(), caused_by.as_deref(), role) {
                    debug!("kick: {role} from {sender}: refused again (too deep)");
                    continue;
                }
                let record = refused(now, host, role, cause.clone(), generation, caused_by, why);
                warn!("kick: {}", status::refusal_line(&record, settings));
                locked.write(&Record::Refused(record))?;
            }
        }
    }
    Ok(())
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
    locked: &Locked,
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
        Err(e) => {
            let record = query_refusal(settings, source, role, resource, e);
            locked.write(&Record::Refused(record))
        }
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
    let record = query_refusal(settings, source, role, resource, why);
    let locked = ledger.lock(Duration::from_secs(10))?;
    locked.write(&Record::Refused(record))
}

/// The refusal of a request whose PuppetDB query named no host, logged.
fn query_refusal(
    settings: &Settings,
    source: IpAddr,
    role: &str,
    resource: String,
    why: String,
) -> Refused {
    let host = sender_host(settings, source).unwrap_or_else(|| source.to_string());
    let cause = Cause { host, resource };
    let record = refused(now(), None, role, cause, 0, None, Refusal::PuppetDb { why });
    warn!("kick: {}", status::refusal_line(&record, settings));
    record
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
            decide(
                config,
                settings,
                ledger,
                Some(source),
                role,
                resource.to_string(),
                Some(hosts),
            )
        }
    }
}

/// The ledger's kicks, settled ([`supervise::settle`]); with a shared
/// ledger, the kicks not started of a manager that is gone are
/// supervised here from now on.
fn settled(config: &Path, locked: &Locked, now: Millis) -> Result<Vec<record::Kick>, String> {
    let mut kicks = supervise::settle(locked, now)?;
    let orphans: Vec<String> = supervise::orphans(locked, &kicks)
        .iter()
        .map(|k| k.id.clone())
        .collect();
    for kick in kicks.iter_mut().filter(|k| orphans.contains(&k.id)) {
        let gone = kick
            .supervisor
            .as_ref()
            .and_then(|s| s.manager.clone())
            .unwrap_or_default();
        let taken = supervised(config, locked, kick.clone(), now);
        info!(
            "kick {}: its supervisor on {} is gone; supervised here now",
            kick.id,
            escaped(&gone)
        );
        *kick = taken;
        locked.write(&Record::Kick(kick.clone()))?;
    }
    Ok(kicks)
}

/// `kick` with its supervisor started (it waits for the ledger's lock,
/// which the handler holds until the kick is written), or ended as not
/// started when the supervisor cannot start. Recording the supervisor
/// here spares each of a role's thousand supervisors taking the lock to
/// say it lives.
fn supervised(config: &Path, locked: &Locked, mut kick: record::Kick, now: Millis) -> record::Kick {
    match supervise::spawn(config, &kick.id, locked.manager()) {
        Ok(supervisor) => {
            // A shared ledger's other managers see it live from now.
            if let Err(e) = locked.announce(&supervisor) {
                warn!("kick {}: {e}", kick.id);
            }
            kick.supervisor = Some(supervisor)
        }
        Err(e) => {
            warn!("kick {}: {e}", kick.id);
            kick.ended_at = Some(now);
            kick.end = Some(End::NotStarted(e));
        }
    }
    kick
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

/// The configured host `address` is: see [`sender_host`]. Asked once
/// per address and run: a notification looked at by several rules costs
/// one round of lookups, not one each (review 2026-11-28 I-2; better
/// still, `[addresses]` spares them all).
fn configured_host(settings: &Settings, address: IpAddr) -> Option<String> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    // Keyed by the settings too: a process holds one, but tests many.
    type Seen = HashMap<(usize, IpAddr), Option<String>>;
    static SEEN: OnceLock<Mutex<Seen>> = OnceLock::new();
    let key = (settings as *const Settings as usize, address);
    let seen = SEEN.get_or_init(Default::default);
    if let Some(known) = seen.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return known;
    }
    let found = look_up_host(settings, address);
    if let Ok(mut m) = seen.lock() {
        m.insert(key, found.clone());
    }
    found
}

fn look_up_host(settings: &Settings, address: IpAddr) -> Option<String> {
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
    fn a_job_id_reports_the_kick_of_a_host_only_puppetdb_names() {
        let s = Settings::parse(
            "kick_command = [\"k\", \"{host}\", \"{kick}\"]\n\
             [[role]]\nname = \"lb\"\nhosts = [\"lb1.example.net\"]\n",
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(&dir.path().join("state")).unwrap();
        let cause = Cause {
            host: "web1".into(),
            resource: "Notify[kick -> lb]".into(),
        };
        for (id, host) in [("1-1-0", "lb1.example.net"), ("2-1-0", "lb9.example.net")] {
            let mut kick = judge::new_kick(id.into(), host.into(), "lb", cause.clone(), 1, None, 1);
            kick.job_id = Some(id.into());
            kick.started_at = Some(1);
            kick.ended_at = Some(2);
            kick.end = Some(End::Exited(0));
            let locked = ledger.lock(Duration::from_millis(50)).unwrap();
            locked.write(&Record::Kick(kick)).unwrap();
        }
        let end = |job: Option<&str>| RunEnd {
            failed: false,
            changed: Some(true),
            resources_changed: Some(3),
            job_id: job.map(String::from),
            finished: true,
            run_end: Some(3),
            role: None,
            facts: Vec::new(),
        };
        let report = |id: &str| {
            let locked = ledger.lock(Duration::from_millis(50)).unwrap();
            locked.kick(id).unwrap().report
        };
        // No job id, or another one: nothing.
        report_by_job_id(&s, &ledger, "192.0.2.9", &end(None)).unwrap();
        report_by_job_id(&s, &ledger, "192.0.2.9", &end(Some("9-9-9"))).unwrap();
        assert_eq!((report("1-1-0"), report("2-1-0")), (None, None));
        // A configured host's kick: from its own addresses only.
        report_by_job_id(&s, &ledger, "192.0.2.9", &end(Some("1-1-0"))).unwrap();
        assert_eq!(report("1-1-0"), None);
        // A host only PuppetDB named: its job id reports its kick.
        report_by_job_id(&s, &ledger, "192.0.2.9", &end(Some("2-1-0"))).unwrap();
        let got = report("2-1-0").unwrap();
        assert!(
            got.exact && got.changed == Some(true) && !got.failed,
            "{got:?}"
        );
        let locked = ledger.lock(Duration::from_millis(50)).unwrap();
        assert!(
            locked.inventory().hosts.is_empty(),
            "it enters no inventory"
        );
    }

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
