//! Issue 16 part 4 end to end: a real Redis with TLS, certificates made by
//! openssl here with short validities, the agent reading the certificate
//! its connection is shown (`redisInstanceCert*`), and, through a real
//! snmpd, a real snmptrapd receiving `redisCertificateExpiring` when Redis
//! is given a certificate that ends within the warning (`CONFIG SET
//! tls-cert-file` reloads it for new connections) and
//! `redisCertificateExpiringCleared` when a renewed one moves it beyond.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::path::Path;
use std::time::{Duration, Instant};
use testkit::{pki, wait_until, Agent, Redis, Snmpd, Snmptrapd, REDIS_ROOT};

const DAY: i64 = 86_400;
/// The warning the agent is configured with: 5 days.
const WARNING_DAYS: i64 = 5;

/// A CA and, for each `(file, days)`, a certificate for `redis.test` of
/// that validity, all for one server key (`server.key`), so that Redis can
/// switch between them.
fn make_certificates(dir: &Path, servers: &[(&str, u32)]) {
    pki::make_ca(dir, "ca", "test CA", 90);
    pki::make_request(dir, "server", "/O=Example/CN=redis.test");
    for (file, days) in servers {
        pki::sign(
            dir,
            "server.csr",
            "ca",
            file,
            *days,
            "subjectAltName=DNS:redis.test",
        );
    }
}

/// What openssl says a certificate's notAfter is, in UNIX seconds.
fn not_after(dir: &Path, file: &str) -> i64 {
    testkit::pki::openssl_date(dir, "x509", "-enddate", file)
}

fn get(snmpd: &Snmpd, column: u32) -> String {
    snmpd
        .numeric()
        .get_one(&format!("{REDIS_ROOT}.3.1.1.{column}.1"))
        .value
}

fn expect_trap(trapd: &Snmptrapd, name: &str, limit: Duration) -> String {
    let mut line = None;
    wait_until(limit, || {
        line = trapd.received(name).into_iter().next();
        line.is_some()
    });
    line.unwrap_or_else(|| panic!("no {name} received; snmptrapd log:\n{}", trapd.log()))
}

#[test]
fn expiring_certificate_is_reported_and_its_renewal_clears_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    make_certificates(
        d,
        &[("month.pem", 30), ("soon.pem", 2), ("renewed.pem", 60)],
    );
    let tls_port = testkit::free_port();
    let mut redis = Redis::start_with(&[
        &format!("tls-port {tls_port}"),
        &format!("tls-cert-file {}/month.pem", d.display()),
        &format!("tls-key-file {}/server.key", d.display()),
        &format!("tls-ca-cert-file {}/ca.pem", d.display()),
        "tls-auth-clients no",
    ]);
    let trapd = Snmptrapd::start();
    let snmpd = Snmpd::sending_to(&trapd);
    let toml = format!(
        "agentx_socket = \"{}\"\nrefresh = 1\n\n[[redis]]\nname = \"tls\"\n\
         address = \"rediss://127.0.0.1:{tls_port}\"\ntimeout = 2.0\n\
         tls_ca_file = \"{}/ca.pem\"\ntls_server_name = \"redis.test\"\n\
         cert_expiry_warning = {}\ncert_check_interval = 1\n",
        snmpd.agentx_address(),
        d.display(),
        WARNING_DAYS * DAY,
    );
    let config = d.join("agent.toml");
    std::fs::write(&config, toml).unwrap();
    let mut agent = Agent::start_raw(&["-n", "-v", "-c", config.to_str().unwrap()], &[]);
    agent.expect_registered(Duration::from_secs(10));

    // What the connection was shown: the month-long certificate.
    let month = not_after(d, "month.pem");
    assert!(
        wait_until(Duration::from_secs(6), || get(&snmpd, 12)
            == month.to_string()),
        "redisInstanceCertNotAfter = {:?}, openssl says {month}\n{}",
        get(&snmpd, 12),
        agent.log()
    );
    assert_eq!(get(&snmpd, 10), "\"CN=redis.test,O=Example\"");
    assert_eq!(get(&snmpd, 11), "\"CN=test CA\"");
    let left: i64 = get(&snmpd, 13).parse().unwrap();
    assert!(
        (month - testkit::pki::unix_now() - 5..=month - testkit::pki::unix_now() + 1)
            .contains(&left),
        "redisInstanceCertExpiresIn = {left}, notAfter {month}"
    );
    // The start-up state is the baseline: nothing was sent.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        trapd.received("redisCertificate").is_empty(),
        "{}",
        trapd.log()
    );

    // A certificate that ends in 2 days, within the 5-day warning.
    let given = Instant::now();
    let reply = redis.command(&[
        "CONFIG",
        "SET",
        "tls-cert-file",
        &format!("{}/soon.pem", d.display()),
    ]);
    assert!(format!("{reply:?}").contains("OK"), "{reply:?}");
    let line = expect_trap(&trapd, "redisCertificateExpiring", Duration::from_secs(8));
    println!(
        "redisCertificateExpiring arrived {:?} after CONFIG SET",
        given.elapsed()
    );
    assert!(line.contains("redisInstanceName.1 = STRING: tls"), "{line}");
    assert!(
        line.contains("redisInstanceCertSubject.1 = STRING: CN=redis.test,O=Example"),
        "{line}"
    );
    let soon = not_after(d, "soon.pem");
    assert!(
        line.contains(&format!("redisInstanceCertNotAfter.1 = Counter64: {soon}")),
        "{line}\nopenssl says {soon}"
    );
    let left = soon - testkit::pki::unix_now();
    assert!(left < WARNING_DAYS * DAY && left > DAY, "{left}");
    assert!(
        line.contains("redisInstanceCertExpiresIn.1 = INTEGER: 17"),
        "about 2 days (17xxxx s): {line}"
    );
    assert!(trapd.received("redisCertificateExpiringCleared").is_empty());

    // Renewed: 60 days, beyond the warning.
    let renewed_at = Instant::now();
    redis
        .command(&[
            "CONFIG",
            "SET",
            "tls-cert-file",
            &format!("{}/renewed.pem", d.display()),
        ])
        .unwrap();
    let line = expect_trap(
        &trapd,
        "redisCertificateExpiringCleared",
        Duration::from_secs(8),
    );
    println!(
        "redisCertificateExpiringCleared arrived {:?} after CONFIG SET",
        renewed_at.elapsed()
    );
    let renewed = not_after(d, "renewed.pem");
    assert!(
        line.contains(&format!(
            "redisInstanceCertNotAfter.1 = Counter64: {renewed}"
        )),
        "{line}"
    );
    assert_eq!(get(&snmpd, 12), renewed.to_string());
    // Sent once each, not on every poll.
    std::thread::sleep(Duration::from_secs(2));
    let expiring = trapd
        .received("redisCertificateExpiring")
        .into_iter()
        .filter(|l| !l.contains("redisCertificateExpiringCleared"))
        .count();
    assert_eq!(expiring, 1, "{}", trapd.log());
    assert_eq!(
        trapd.received("redisCertificateExpiringCleared").len(),
        1,
        "{}",
        trapd.log()
    );
    redis.stop();
}
