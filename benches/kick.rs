//! Benchmark: a resource change on one host to the kick command started on
//! the manager, across hosts (network namespaces, testkit::netns).
//!
//! `cargo bench --bench kick` (or `scripts/bench.sh`; root, and `ip`). Host
//! `web1` runs snmpd (the shipped `trapsess` line: SNMPv3 informs with
//! privacy to `mgr`) and the agent (release build) following web1's Puppet
//! events log; `mgr` runs snmptrapd with the shipped kick lines. Each round,
//! web1 runs `puppet apply` of `notify { 'kick -> probe': }`; role `probe`'s
//! kick command only writes the time it started.
//!
//! - **Kick**: from the time Puppet gives the change in its events log to
//!   the kick command's start on mgr.
//! - **Baseline, same notification, same run**: a traphandle configured
//!   before the kick's that only writes the time (`date`): the path from
//!   Puppet's log through the agent, snmpd, the network and snmptrapd,
//!   without the kick. The difference is what the kick itself costs:
//!   reading the notification, the ledger, the detached supervisor.
//!
//! `KICK_ROUNDS` sets the rounds (default 30; each is a Puppet run of about
//! three seconds). With 30 samples the p99 is the largest but one.

#[path = "support/mod.rs"]
mod support;

use std::time::Duration;
use support::stats;
use testkit::kick::{KickSite, PuppetNode};
use testkit::netns::Network;
use testkit::{wait_until, Snmptrapd};

/// Nanoseconds since the epoch of Puppet's `"time":"2026-11-26T11:20:17.123456789+00:00"`.
fn puppet_time(line: &str) -> Option<u128> {
    let at = line.find("\"time\":\"")? + 8;
    let t = &line[at..];
    let num = |r: std::ops::Range<usize>| t.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let frac = t[20..].split(|c: char| !c.is_ascii_digit()).next()?;
    let nanos: u128 = format!("{frac:0<9}")[..9].parse().ok()?;
    // Days from the civil date (proleptic Gregorian).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if mo > 2 { mo - 3 } else { mo + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + s;
    // Puppet writes UTC (+00:00) here.
    Some(secs as u128 * 1_000_000_000 + nanos)
}

fn last_number(path: &std::path::Path) -> Option<u128> {
    std::fs::read_to_string(path)
        .ok()?
        .lines()
        .last()?
        .trim()
        .parse()
        .ok()
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // test runners asking for tests: this is not one
    }
    let rounds: usize = std::env::var("KICK_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let Some(net) = Network::new_or_skip("bench kick", &["web1", "mgr"]) else {
        return;
    };
    let web1 = net.host("web1");
    let site = KickSite::new(|dir| {
        let script = dir.join("probe.sh");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\ndate +%s%N >> {}\n",
                dir.join("kicked").display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        format!(
            "kick_command = [\"{}\", \"{{host}}\"]\nwindow = 1\n[addresses]\n\"web1\" = [\"{}\"]\n\
             [[role]]\nname = \"probe\"\nhosts = [\"p1\"]\nbudget_per_hour = 10000\n",
            script.display(),
            web1.address()
        )
    });
    let baseline_file = site.dir().join("baseline");
    // snmptrapd runs the handlers of one notification in the order given.
    let baseline = format!(
        "traphandle .1.3.6.1.4.1.20267.401.0.9 date +%s%N >> {}\n",
        baseline_file.display()
    );
    let lines = site.snmptrapd_lines();
    let (head, handlers) = lines.split_at(lines.find("traphandle").unwrap());
    let trapd = Snmptrapd::start_in(net.host("mgr"), &format!("{head}{baseline}{handlers}"));
    let node = PuppetNode::start(Some(web1), &trapd);
    let args = node.apply_args("probe", "notify { 'kick -> probe': }\n");
    let (mut kick, mut base) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let before = std::fs::read_to_string(site.dir().join("kicked"))
            .unwrap_or_default()
            .lines()
            .count();
        let out = web1.command("puppet").args(&args).output().unwrap();
        assert!(matches!(out.status.code(), Some(2)), "{out:?}");
        let started = wait_until(Duration::from_secs(10), || {
            std::fs::read_to_string(site.dir().join("kicked"))
                .unwrap_or_default()
                .lines()
                .count()
                > before
        });
        assert!(started, "round {round}: no kick\n{}", site.status());
        let text = std::fs::read_to_string(node.events()).unwrap();
        let changed = text
            .lines()
            .rfind(|l| l.contains("Notify[kick -> probe]"))
            .and_then(puppet_time)
            .expect("the change in the events log");
        let ns = |t: u128| Duration::from_nanos(t.saturating_sub(changed) as u64);
        kick.push(ns(last_number(&site.dir().join("kicked")).unwrap()));
        base.push(ns(last_number(&baseline_file).unwrap()));
        // The window (1 s) counts from the end of the probe's kick.
        std::thread::sleep(Duration::from_millis(1100));
    }
    let (k, b) = (stats(kick), stats(base));
    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1000.0);
    println!("\nresource change on web1 → on mgr, {rounds} rounds (Puppet's time of the change to the handler's)");
    println!(
        "{:<44} {:>10} {:>10} {:>10}",
        "path", "median", "p99", "max"
    );
    println!(
        "{:<44} {:>10} {:>10} {:>10}",
        "baseline: a traphandle that writes the time",
        ms(b.median),
        ms(b.p99),
        ms(b.max)
    );
    println!(
        "{:<44} {:>10} {:>10} {:>10}",
        "redis-snmp kick: the kick command started",
        ms(k.median),
        ms(k.p99),
        ms(k.max)
    );
    println!(
        "kick ÷ baseline (median): {:.2}x; the kick's own share: {} at the median",
        k.median.as_secs_f64() / b.median.as_secs_f64(),
        ms(k.median.saturating_sub(b.median))
    );
}
