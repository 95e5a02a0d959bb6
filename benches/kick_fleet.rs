//! Benchmark: the kick handler at fleet size, run as snmptrapd runs it (the
//! built binary, one process per notification, its input on stdin in
//! snmptrapd's traphandle format), against a ledger of its own.
//!
//! `cargo bench --bench kick_fleet`. Two sizes, each from an empty ledger:
//! 1 host, and `FLEET_HOSTS` hosts (default 1,000) in `FLEET_ROLES` roles
//! (default 100), every host known by its address (127.0.x.y, in
//! `inventory_from`), every role without `hosts` (the inventory's). It
//! measures, each with its median, 99th percentile and largest:
//!
//! - **run end**: one `puppetRunFinished` per host (the inventory grows to
//!   every host);
//! - **request**: `kick -> ROLE` from a host of another role, for every
//!   role in turn (each kicks that role's hosts: their supervisors start,
//!   detached, and run a command that writes when it started);
//! - **change → command started**: from the request handed to the handler
//!   to each kick command's start (`max_parallel` 4: a role's ten kicks
//!   queue for the slots, as they would);
//! - **run end → outcome in the ledger**: each kicked host's
//!   `puppetRunFinished` naming its kick's job id; the handler has written
//!   the outcome when it returns;
//! - **status**: `kick --status` and `kick --inventory` once filled;
//! - **flood**: 10,000 refusals tried (`FLEET_FLOOD`: half unknown roles
//!   from known hosts, half from strangers), then every role's request
//!   again: what a request costs with a full ledger.
//!
//! A handler that finds the ledger locked for longer than it may wait
//! (60 ms, so that snmptrapd is answered at once) drops the notification
//! and exits 1: those are counted as `failed`.
//!
//! Nothing is sent on a network: the addresses are only what the handler
//! reads in its input's transport line.

#[path = "support/mod.rs"]
mod support;

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use support::stats;
use testkit::kick::{trap_input as input, KickSite};

const RUN_FINISHED: &str = ".1.3.6.1.4.1.20267.401.0.18";
const RESOURCE_CHANGED: &str = ".1.3.6.1.4.1.20267.401.0.9";
const RUN_TIME: &str = ".1.3.6.1.4.1.20267.401.1.1.0";
const JOB_ID: &str = ".1.3.6.1.4.1.20267.401.1.53.0";

fn address(n: usize) -> String {
    format!("127.0.{}.{}", 1 + n / 250, 1 + n % 250)
}

fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// The handler's time for `text`, and whether it succeeded (it fails,
/// dropping the notification, when the ledger stays locked longer than
/// it may wait: 60 ms).
fn timed(site: &KickSite, text: &str) -> (Duration, bool) {
    let (out, took) = site.handle(text);
    (took, out.status.success())
}

fn show(what: &str, samples: Vec<(Duration, bool)>) {
    let n = samples.len();
    if n == 0 {
        println!("  {what:<34} no samples");
        return;
    }
    let failed = samples.iter().filter(|(_, ok)| !ok).count();
    let s = stats(samples.into_iter().map(|(t, _)| t).collect());
    println!(
        "  {what:<34} n={n:<5} median {:>8.2?}  p99 {:>8.2?}  max {:>8.2?}  failed {failed}",
        s.median, s.p99, s.max
    );
}

fn run_end(from: &str, role: &str, job: Option<&str>) -> String {
    let role = format!("\"{role}\"");
    let time = (now_ns() / 1_000_000_000).to_string();
    let job = job.map(|j| format!("\"{j}\""));
    let mut varbinds = vec![
        (".1.3.6.1.4.1.20267.401.1.3.0", "1"),
        (RUN_TIME, time.as_str()),
        (".1.3.6.1.4.1.20267.401.1.5.0", "0"),
        (".1.3.6.1.4.1.20267.401.1.54.0", role.as_str()),
    ];
    if let Some(job) = &job {
        varbinds.push((JOB_ID, job.as_str()));
    }
    input(from, RUN_FINISHED, &varbinds)
}

fn request(from: &str, title: &str) -> String {
    let title = format!("\"{title}\"");
    input(
        from,
        RESOURCE_CHANGED,
        &[
            (".1.3.6.1.4.1.20267.401.4.1.4.1", "\"Notify\""),
            (".1.3.6.1.4.1.20267.401.4.1.5.1", &title),
        ],
    )
}

/// The kicks whose command has started: (host, kick id, when in ns).
fn started(dir: &Path) -> Vec<(String, String, u128)> {
    std::fs::read_dir(dir.join("started"))
        .map(|entries| {
            entries
                .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
                .filter_map(|text| {
                    let mut words = text.split_whitespace();
                    let host = words.next()?.to_string();
                    let id = words.next()?.to_string();
                    Some((host, id, words.next()?.parse().ok()?))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn fleet(hosts: usize, roles: usize, flood: usize) {
    let site = KickSite::new(|dir| {
        std::fs::create_dir_all(dir.join("started")).unwrap();
        let script = dir.join("started.sh");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\necho \"$1 $2 $(date +%s%N)\" > {}/started/$2\n",
                dir.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut text = format!(
            "kick_command = [\"{}\", \"{{host}}\", \"{{kick}}\"]\n\
             inventory_from = [\"127.0.0.0/16\"]\nwindow = 1\n",
            script.display()
        );
        for r in 0..roles {
            text.push_str(&format!(
                "[[role]]\nname = \"r{r}\"\nbudget_per_hour = 10000\n"
            ));
        }
        text
    });
    println!("{hosts} hosts in {roles} roles:");
    let mut ends = Vec::new();
    for n in 0..hosts {
        ends.push(timed(
            &site,
            &run_end(&address(n), &format!("r{}", n % roles), None),
        ));
    }
    show("run end (inventory grows)", ends);
    let mut requests = Vec::new();
    // When each role was asked for (ns), and each request in turn.
    let mut asked = std::collections::HashMap::new();
    let mut asks = Vec::new();
    // With one host, rounds a window apart; with many, each role once.
    let rounds = if roles == 1 { 10 } else { roles };
    for round in 0..rounds {
        let r = round % roles;
        // From a host of the next role, asking for role r.
        let from = address((r + 1) % roles);
        let at = now_ns();
        requests.push(timed(&site, &request(&from, &format!("kick -> r{r}"))));
        asked.insert(format!("r{r}"), at);
        asks.push(at);
        if roles == 1 {
            // Past the kick's window (1 s), counted from its end.
            std::thread::sleep(Duration::from_millis(1_300));
        }
    }
    show("request (kicks a role's hosts)", requests);
    // Every command started (or the wait gives up).
    let expected = if roles == 1 { rounds } else { hosts };
    let deadline = Instant::now() + Duration::from_secs(120);
    while started(site.dir()).len() < expected && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let commands = started(site.dir());
    let since = |t: u128, a: u128| (Duration::from_nanos(t.saturating_sub(a) as u64), true);
    let starts: Vec<(Duration, bool)> = if roles == 1 {
        // Round k's kick is the k-th to start.
        let mut times: Vec<u128> = commands.iter().map(|c| c.2).collect();
        times.sort();
        times.iter().zip(asks).map(|(&t, a)| since(t, a)).collect()
    } else {
        let inventory = site.inventory(true);
        commands
            .iter()
            .filter_map(|(host, _, t)| Some(since(*t, *asked.get(&role_of(&inventory, host)?)?)))
            .collect()
    };
    show("change → command started", starts);
    println!("  commands started: {} of {expected}", commands.len());
    // Each kicked host reports its kicked run, by its job id.
    let inventory = site.inventory(true);
    let mut outcomes = Vec::new();
    for (host, id, _) in &commands {
        let role = role_of(&inventory, host).unwrap_or_default();
        outcomes.push(timed(&site, &run_end(host, &role, Some(id))));
    }
    show("run end → outcome in the ledger", outcomes);
    let status = site.status();
    let known = status
        .lines()
        .filter(|l| l.contains("succeeded (no change)"))
        .count();
    println!("  outcomes known: {known} of {}", commands.len());
    let started_at = Instant::now();
    let status = site.status();
    println!(
        "  kick --status                      {:>8.2?}  ({} lines)",
        started_at.elapsed(),
        status.lines().count()
    );
    let started_at = Instant::now();
    let inventory = site.inventory(false);
    println!(
        "  kick --inventory                   {:>8.2?}  ({} hosts)",
        started_at.elapsed(),
        inventory.lines().count().saturating_sub(1)
    );
    if flood == 0 {
        return;
    }
    let mut tried = Vec::new();
    for n in 0..flood {
        let text = if n % 2 == 0 {
            request(&address(n % hosts), &format!("kick -> nosuchrole{n}"))
        } else {
            let stranger = format!("127.1.{}.{}", n / 250 % 250, 1 + n % 250);
            request(&stranger, &format!("kick -> r{}", n % roles))
        };
        tried.push(timed(&site, &text));
    }
    show("flood: each refusal", tried);
    std::thread::sleep(Duration::from_millis(1_500));
    let mut after = Vec::new();
    for r in 0..roles {
        let from = address((r + 1) % roles);
        after.push(timed(&site, &request(&from, &format!("kick -> r{r}"))));
    }
    show("request after the flood", after);
    let bytes: u64 = std::fs::read_dir(site.state_dir())
        .unwrap()
        .filter_map(|e| e.ok()?.metadata().ok())
        .map(|m| m.len())
        .sum();
    println!("  ledger after the flood: {} KiB", bytes / 1024);
}

/// The role the inventory (`--json`) gives `host`.
fn role_of(inventory_json: &str, host: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(inventory_json).ok()?;
    Some(value["hosts"][host]["role"].as_str()?.to_string())
}

fn main() {
    let number = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let hosts = number("FLEET_HOSTS", 1000);
    let roles = number("FLEET_ROLES", 100).clamp(1, hosts);
    let flood = number("FLEET_FLOOD", 10_000);
    fleet(1, 1, 0);
    fleet(hosts, roles, flood);
}
