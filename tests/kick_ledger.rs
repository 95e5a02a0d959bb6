//! The kick ledger under floods, through the handler as snmptrapd runs it
//! (the binary, one notification on its standard input): no number of
//! refusals makes it forget a kick that the window, the budget or a
//! chain's depth still judge by, and what it keeps stays bounded (security
//! review 2026-11-28, M1 and M2, whose reproductions these follow).

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::time::Duration;
use testkit::kick::*;
use testkit::wait_until;

const WEB1: &str = "127.0.0.1";

/// Handles `Notify[TITLE]` changed on `from`; whether the handler took it
/// (one that found the ledger locked too long drops it: exit 1, said in
/// its log).
fn request(site: &KickSite, from: &str, title: &str) -> bool {
    let title = format!("\"{title}\"");
    let text = trap_input(
        from,
        RESOURCE_CHANGED,
        &[(EVENT_TYPE, "\"Notify\""), (EVENT_TITLE, &title)],
    );
    let (out, _) = site.handle(&text);
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    }
    out.status.success()
}

/// The sum of the ledger's file sizes.
fn ledger_bytes(site: &KickSite) -> u64 {
    std::fs::read_dir(site.state_dir())
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

/// M1, attack 1: 500 refusals used to evict the kicks, and the next
/// request was granted inside the window and over the budget. M2: every
/// refusal of an unknown sender was kept and read by every request.
#[test]
fn a_flood_of_refusals_bypasses_no_rule() {
    let site = KickSite::new(|dir| {
        format!(
            "{}window = 3600\n[addresses]\n\"web1.example.net\" = [\"{WEB1}\"]\n\
             [[role]]\nname = \"db\"\nhosts = [\"db1.example.net\"]\nbudget_per_hour = 1\n",
            recording_command(dir, 0)
        )
    });
    assert!(request(&site, WEB1, "kick -> db"));
    assert!(wait_until(Duration::from_secs(10), || site.kicked().len() == 1));
    for n in 0..600 {
        request(&site, WEB1, &format!("kick -> nosuchrole{n}"));
    }
    // 1,100 strangers, with 4 KiB titles: more senders than the ledger
    // keeps, each refusal cut to what shows what it was.
    let long = "x".repeat(4_000);
    for n in 0..1_100 {
        let stranger = format!("127.0.{}.{}", 10 + n / 250, 1 + n % 250);
        request(&site, &stranger, &format!("kick -> db{long}"));
    }
    assert!(request(&site, WEB1, "kick -> db"));
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        site.kicked(),
        ["db1.example.net db"],
        "inside the window and over the budget: not kicked again\n{}",
        site.status()
    );
    let status = site.status();
    let db1: Vec<&str> = status
        .lines()
        .filter(|l| l.contains("db1.example.net"))
        .collect();
    assert_eq!(db1.len(), 2, "the kick and the one deferred:\n{status}");
    assert!(db1[0].contains("deferred"), "{status}");
    assert!(
        status.contains("and 580 more from web1.example.net"),
        "the refusals past the cap counted:\n{status}"
    );
    assert!(
        status.contains("more from senders no longer kept"),
        "{status}"
    );
    let bytes = ledger_bytes(&site);
    assert!(bytes < 4 << 20, "the ledger holds {bytes} bytes");
}

/// M1, attack 2, with no attacker: a role of more than 250 hosts wrote a
/// refusal per host not kicked, and the next request's pruning evicted
/// the kicks, so the budget was spent again and again within the hour.
#[test]
fn a_role_of_many_hosts_keeps_its_budget() {
    let hosts: Vec<String> = (1..=260)
        .map(|n| format!("\"node{n}.example.net\""))
        .collect();
    let site = KickSite::new(|dir| {
        format!(
            "{}window = 3600\nmax_parallel = 8\n[addresses]\n\"web1.example.net\" = [\"{WEB1}\"]\n\
             [[role]]\nname = \"db\"\nhosts = [{}]\nbudget_per_hour = 12\n",
            recording_command(dir, 0),
            hosts.join(", ")
        )
    });
    for _ in 0..3 {
        assert!(request(&site, WEB1, "kick -> db"));
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(wait_until(Duration::from_secs(20), || site.kicked().len() >= 12));
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(site.kicked().len(), 12, "{}", site.status());
    let status = site.status();
    let waiting = status
        .lines()
        .filter(|l| l.contains("budget per hour is spent"))
        .count();
    assert_eq!(waiting, 248, "every other host waits, once:\n{status}");
}
