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
//!   detached, and run `/bin/true`);
//! - **status**: `kick --status` and `kick --inventory` once filled.
//!
//! A handler that finds the ledger locked for longer than it may wait
//! (60 ms, so that snmptrapd is answered at once) drops the notification
//! and exits 1: those are counted as `failed`.
//!
//! Nothing is sent on a network: the addresses are only what the handler
//! reads in its input's transport line.

#[path = "support/mod.rs"]
mod support;

use std::time::{Duration, Instant};
use support::stats;
use testkit::kick::{trap_input as input, KickSite};

const RUN_FINISHED: &str = ".1.3.6.1.4.1.20267.401.0.18";
const RESOURCE_CHANGED: &str = ".1.3.6.1.4.1.20267.401.0.9";

fn address(n: usize) -> String {
    format!("127.0.{}.{}", 1 + n / 250, 1 + n % 250)
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
    let failed = samples.iter().filter(|(_, ok)| !ok).count();
    let s = stats(samples.into_iter().map(|(t, _)| t).collect());
    println!(
        "  {what:<34} n={n:<5} median {:>8.2?}  p99 {:>8.2?}  max {:>8.2?}  failed {failed}",
        s.median, s.p99, s.max
    );
}

fn fleet(hosts: usize, roles: usize) {
    let site = KickSite::new(|_| {
        let mut text = String::from(
            "kick_command = [\"/bin/true\", \"{host}\", \"{kick}\"]\n\
             inventory_from = [\"127.0.0.0/8\"]\nwindow = 1\n",
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
        let role = format!("\"r{}\"", n % roles);
        let text = input(
            &address(n),
            RUN_FINISHED,
            &[
                (".1.3.6.1.4.1.20267.401.1.3.0", "1"),
                (".1.3.6.1.4.1.20267.401.1.1.0", "1795868000"),
                (".1.3.6.1.4.1.20267.401.1.5.0", "0"),
                (".1.3.6.1.4.1.20267.401.1.54.0", &role),
            ],
        );
        ends.push(timed(&site, &text));
    }
    show("run end (inventory grows)", ends);
    let mut requests = Vec::new();
    for r in 0..roles {
        // From a host of the next role, asking for role r.
        let from = address((r + 1) % roles);
        let title = format!("\"kick -> r{r}\"");
        let text = input(
            &from,
            RESOURCE_CHANGED,
            &[
                (".1.3.6.1.4.1.20267.401.4.1.4.1", "\"Notify\""),
                (".1.3.6.1.4.1.20267.401.4.1.5.1", &title),
            ],
        );
        requests.push(timed(&site, &text));
    }
    show("request (kicks a role's hosts)", requests);
    let started = Instant::now();
    let status = site.status();
    let took = started.elapsed();
    println!(
        "  kick --status                      {took:>8.2?}  ({} lines)",
        status.lines().count()
    );
    let started = Instant::now();
    let inventory = site.inventory(false);
    println!(
        "  kick --inventory                   {:>8.2?}  ({} hosts)",
        started.elapsed(),
        inventory.lines().count().saturating_sub(1)
    );
    let kicked = status.lines().filter(|l| l.contains(" r")).count();
    println!("  kicks recorded: {kicked} (of {hosts} asked)");
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
    fleet(1, 1);
    fleet(hosts, roles);
}
