//! Issue 25 item 6 end to end: a Puppet agent's ssldir laid out as Puppet
//! lays it out (`certs/<certname>.pem`, `certs/ca.pem`, `crl.pem`), made by
//! `openssl` against a throw-away CA with short validities; the agent
//! serving `puppetCertificateTable` through a real snmpd; a real snmptrapd
//! receiving `puppetCertificateExpiring` for an agent certificate that is
//! already within the warning when the agent starts, and
//! `puppetCertificateExpiringCleared` once the certificate is replaced (by
//! rename, as Puppet replaces its files) with a renewed one. A CRL taken
//! away is a row state, not a notification.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use testkit::{openssl, pki, wait_until, Agent, Snmpd, Snmptrapd, PUPPET_ROOT};

const DAY: i64 = 86_400;
/// `certificate_warning_days` the agent is given.
const WARNING_DAYS: i64 = 5;
const CERTNAME: &str = "agent.example.test";

/// The CA's `openssl ca` settings for its CRL.
const CA_CNF: &str = "[ca]\ndefault_ca = throwaway\n[throwaway]\ndir = .\n\
database = index.txt\ncrlnumber = crlnumber\ndefault_md = sha256\n";

/// A CA (`ca.pem`), an agent key with its request, agent certificates of
/// `days` each, and a CRL of the CA with a nextUpdate `crl_days` ahead.
fn make_ssl(work: &Path, agents: &[(&str, u32)], crl_days: u32) {
    pki::make_ca(work, "ca", "Puppet CA: puppet.example.test", 90);
    pki::make_request(work, "agent", &format!("/CN={CERTNAME}"));
    for (file, days) in agents {
        pki::sign(
            work,
            "agent.csr",
            "ca",
            file,
            *days,
            &format!("subjectAltName=DNS:{CERTNAME}"),
        );
    }
    std::fs::write(work.join("ca.cnf"), CA_CNF).unwrap();
    std::fs::write(work.join("index.txt"), "").unwrap();
    std::fs::write(work.join("crlnumber"), "01\n").unwrap();
    openssl(
        work,
        &[
            "ca",
            "-config",
            "ca.cnf",
            "-gencrl",
            "-keyfile",
            "ca.key",
            "-cert",
            "ca.pem",
            "-crldays",
            &crl_days.to_string(),
            "-out",
            "crl.pem",
        ],
    );
}

/// puppetCertificateTable as snmpwalk shows it: `column.row` to value.
fn table(snmpd: &Snmpd) -> BTreeMap<String, String> {
    let prefix = format!("{PUPPET_ROOT}.5.1.");
    snmpd
        .numeric_walk(&format!("{PUPPET_ROOT}.5"))
        .into_iter()
        .filter_map(|v| {
            let key = v.name.strip_prefix(&prefix)?.to_string();
            Some((key, v.value))
        })
        .collect()
}

fn cell(snmpd: &Snmpd, column: u32, row: u32) -> String {
    table(snmpd)
        .get(&format!("{column}.{row}"))
        .cloned()
        .unwrap_or_default()
}

/// Puts `from` at `to` as Puppet does: a new file renamed into place.
fn replace(from: &Path, to: &Path) {
    let tmp = to.with_extension("pem.tmp");
    std::fs::copy(from, &tmp).unwrap();
    std::fs::rename(&tmp, to).unwrap();
}

#[test]
fn an_expiring_agent_certificate_is_said_at_start_and_cleared_when_renewed() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let ssldir = dir.path().join("ssl");
    let state = dir.path().join("state");
    for d in [&work, &ssldir.join("certs"), &state] {
        std::fs::create_dir_all(d).unwrap();
    }
    make_ssl(&work, &[("soon.pem", 2), ("renewed.pem", 60)], 30);
    let agent_pem = ssldir.join(format!("certs/{CERTNAME}.pem"));
    replace(&work.join("soon.pem"), &agent_pem);
    replace(&work.join("ca.pem"), &ssldir.join("certs/ca.pem"));
    replace(&work.join("crl.pem"), &ssldir.join("crl.pem"));

    let trapd = Snmptrapd::start();
    let snmpd = Snmpd::sending_to(&trapd);
    let s = state.display();
    let toml = format!(
        "agentx_socket = \"{}\"\nrefresh = 1\n\n[puppet]\n\
         summary = \"{s}/last_run_summary.yaml\"\nreport = \"{s}/last_run_report.yaml\"\n\
         disabled_lock = \"{s}/agent_disabled.lock\"\nrun_lock = \"{s}/agent_catalog_run.lock\"\n\
         events_log = false\nssldir = \"{}\"\ncertname = \"{CERTNAME}\"\n\
         certificate_warning_days = {WARNING_DAYS}\n",
        snmpd.agentx_address(),
        ssldir.display(),
    );
    let config = dir.path().join("agent.toml");
    std::fs::write(&config, toml).unwrap();
    let mut agent = Agent::start_raw(&["-n", "-v", "-c", config.to_str().unwrap()], &[]);
    agent.expect_registered(Duration::from_secs(10));

    // The three rows, with the dates openssl reads.
    let soon = testkit::pki::openssl_date(&work, "x509", "-enddate", "soon.pem");
    let ca_end = testkit::pki::openssl_date(&work, "x509", "-enddate", "ca.pem");
    let crl_next = testkit::pki::openssl_date(&work, "crl", "-nextupdate", "crl.pem");
    assert!(
        wait_until(Duration::from_secs(10), || cell(&snmpd, 5, 1)
            == soon.to_string()),
        "puppetCertificateNotAfter.1 = {:?}, openssl says {soon}\n{:?}\n{}",
        cell(&snmpd, 5, 1),
        table(&snmpd),
        agent.log()
    );
    let t = table(&snmpd);
    assert_eq!(t["2.1"], "1", "kind agent(1)");
    assert_eq!(t["2.2"], "2", "kind ca(2)");
    assert_eq!(t["2.3"], "3", "kind crl(3)");
    assert_eq!(t["3.1"], format!("\"{}\"", agent_pem.display()));
    assert_eq!(
        t["3.3"],
        format!("\"{}\"", ssldir.join("crl.pem").display())
    );
    assert_eq!(t["4.1"], "2", "the agent's, 2 days left, is expiring(2)");
    assert_eq!(t["4.2"], "1", "the CA's, 90 days, is valid(1)");
    assert_eq!(t["4.3"], "1", "the CRL's, 30 days, is valid(1)");
    assert_eq!(t["5.2"], ca_end.to_string());
    assert_eq!(t["5.3"], crl_next.to_string());
    let left: i64 = t["6.1"].parse().unwrap();
    assert!(
        (soon - testkit::pki::unix_now() - 5..=soon - testkit::pki::unix_now() + 1).contains(&left),
        "puppetCertificateSecondsLeft.1 = {left}, notAfter {soon}"
    );
    assert!(left < WARNING_DAYS * DAY, "2 days is within the warning");
    assert_eq!(t["7.1"], format!("\"CN={CERTNAME}\""));
    assert_eq!(t["7.3"], "\"CN=Puppet CA: puppet.example.test\"");
    assert_eq!(t["8.1"], "\"\"");

    // Already expiring when the agent started: said, about row 1.
    let line = trapd.first("puppetCertificateExpiring", Duration::from_secs(10));
    assert!(
        line.contains("puppetCertificateKind.1 = INTEGER: agent(1)"),
        "{line}"
    );
    assert!(
        line.contains(&format!("puppetCertificateNotAfter.1 = Gauge32: {soon}")),
        "{line}"
    );
    assert!(
        line.contains("puppetCertificateState.1 = INTEGER: expiring(2)"),
        "{line}"
    );
    assert!(
        line.contains(&format!(
            "puppetCertificateSubject.1 = STRING: CN={CERTNAME}"
        )),
        "{line}"
    );

    // Renewed by rename, as Puppet writes it: cleared, once.
    replace(&work.join("renewed.pem"), &agent_pem);
    let renewed = testkit::pki::openssl_date(&work, "x509", "-enddate", "renewed.pem");
    let line = trapd.first("puppetCertificateExpiringCleared", Duration::from_secs(10));
    assert!(
        line.contains(&format!("puppetCertificateNotAfter.1 = Gauge32: {renewed}")),
        "{line}"
    );
    assert!(
        line.contains("puppetCertificateState.1 = INTEGER: valid(1)"),
        "{line}"
    );
    assert_eq!(cell(&snmpd, 4, 1), "1");

    // The CRL taken away: a row state, no notification.
    std::fs::remove_file(ssldir.join("crl.pem")).unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || cell(&snmpd, 4, 3) == "4"),
        "puppetCertificateState.3 = {:?}, not missing(4)",
        cell(&snmpd, 4, 3)
    );
    assert!(
        !table(&snmpd).contains_key("5.3"),
        "no date without the file"
    );
    std::thread::sleep(Duration::from_secs(2));
    let expiring: Vec<String> = trapd
        .received("puppetCertificateExpiring")
        .into_iter()
        .filter(|l| !l.contains("puppetCertificateExpiringCleared"))
        .collect();
    assert_eq!(expiring.len(), 1, "{}", trapd.log());
    assert_eq!(
        trapd.received("puppetCertificateExpiringCleared").len(),
        1,
        "{}",
        trapd.log()
    );
    let log = agent.log();
    let crl_lines: Vec<&str> = log.lines().filter(|l| l.contains("no CRL at")).collect();
    assert_eq!(
        crl_lines.len(),
        1,
        "the missing CRL logged more than once: {crl_lines:#?}"
    );
}
