//! Issue 7, fault injection: Redis servers that refuse the agent (wrong
//! password, an ACL without INFO, a certificate the agent does not trust),
//! that are paused, killed and restarted, or that are still loading their
//! dataset, each behind one agent next to a healthy instance. What a user
//! sees through snmpd: the healthy instance keeps being served, each faulty
//! one's status objects say what is wrong, no secret shows anywhere, and the
//! agent's log (at its default verbosity) says each fault once, not on every
//! poll.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use testkit::{
    free_port, instance_oid, wait_until, Agent, AgentConfig, Proc, Redis, Snmpd, REDIS_ROOT,
};

/// The right password of the locked server, and the wrong one the agent has.
const RIGHT_PW: &str = "right-Pw-7c1e";
const WRONG_PW: &str = "wrong-Pw-93bd";
/// The password of the ACL user that may not run INFO.
const ACL_PW: &str = "acl-Pw-5f02";

/// `redisInstanceEntry` columns.
const STATE: u32 = 4;
const DATA_AGE: u32 = 5;
const LAST_ERROR: u32 = 7;
const POLLS_OK: u32 = 8;
const POLLS_FAILED: u32 = 9;

/// One `[[redis]]` entry of the agent's configuration.
struct Entry {
    name: &'static str,
    address: String,
    extra: String,
}

impl Entry {
    fn new(name: &'static str, address: String) -> Entry {
        Entry {
            name,
            address,
            extra: String::new(),
        }
    }

    fn with(mut self, key: &str, value: &str) -> Entry {
        self.extra.push_str(&format!("{key} = \"{value}\"\n"));
        self
    }
}

/// The agent with these instances (refresh 1 s, timeout 1 s), at its
/// default verbosity: the log is what an operator reads.
fn start_agent(snmpd: &Snmpd, entries: &[Entry], dir: &Path) -> Agent {
    entries
        .iter()
        .fold(AgentConfig::new(snmpd), |config, e| {
            config.redis(e.name, &e.address, &e.extra)
        })
        .start_quiet(dir)
}

/// A file holding a password, readable by its owner only.
fn password_file(dir: &Path, name: &str, password: &str) -> String {
    let path = dir.join(name);
    testkit::write_file_mode(&path, &format!("{password}\n"), 0o600);
    path.display().to_string()
}

/// A column of instance `n`'s row, as net-snmp prints it with the MIB
/// loaded: `up(1)`, `"text"`, `42 polls` (or noSuchInstance before the
/// first poll).
fn column(snmpd: &Snmpd, col: u32, n: u32) -> testkit::Var {
    snmpd.client().opt("-On").get_one(&instance_oid(col, n))
}

fn state(snmpd: &Snmpd, n: u32) -> String {
    column(snmpd, STATE, n).value
}

fn last_error(snmpd: &Snmpd, n: u32) -> String {
    column(snmpd, LAST_ERROR, n).text()
}

fn counter(snmpd: &Snmpd, col: u32, n: u32) -> u64 {
    column(snmpd, col, n).u64()
}

/// Waits until instance `n`'s state is `expected` (e.g. `down(2)`).
fn expect_state(snmpd: &Snmpd, n: u32, expected: &str, within: Duration) {
    let mut last = String::new();
    let ok = wait_until(within, || {
        last = state(snmpd, n);
        last == expected
    });
    assert!(ok, "redisInstanceState.{n} = {last}, expected {expected}");
}

/// Waits until instance `n` has failed at least `polls` polls.
fn expect_failed_polls(snmpd: &Snmpd, n: u32, polls: u64) {
    assert!(
        wait_until(Duration::from_secs(polls * 2 + 5), || counter(
            snmpd,
            POLLS_FAILED,
            n
        ) >= polls),
        "instance {n} did not fail {polls} polls"
    );
}

/// Lines of the agent's log about instance `name` containing `needle`.
fn log_lines(agent: &Agent, name: &str, needle: &str) -> Vec<String> {
    let tag = format!("instance={name}");
    agent
        .log()
        .lines()
        .filter(|l| l.split_whitespace().any(|w| w == tag) && l.contains(needle))
        .map(str::to_string)
        .collect()
}

/// Asserts that the log says `needle` about `name` exactly `times` times.
fn expect_logged(agent: &Agent, name: &str, needle: &str, times: usize) {
    let lines = log_lines(agent, name, needle);
    assert_eq!(
        lines.len(),
        times,
        "{name}: {needle:?} logged {} times, expected {times}:\n{}",
        lines.len(),
        agent.log()
    );
}

/// The healthy instance 1 is being polled now: polls succeed, its data is
/// fresh, and the legacy scalars (which describe instance 1) are served.
fn expect_healthy(snmpd: &Snmpd) -> u64 {
    assert_eq!(state(snmpd, 1), "up(1)");
    let age = counter(snmpd, DATA_AGE, 1);
    assert!(age <= 3, "instance 1's data is {age} s old");
    let uptime = snmpd.numeric().get_one(&format!("{REDIS_ROOT}.1.16.0"));
    assert_eq!(uptime.ty, "Gauge32", "{uptime}");
    counter(snmpd, POLLS_OK, 1)
}

/// A self-signed certificate for 127.0.0.1 (an end entity, not a CA) and,
/// unrelated to it, a CA the agent is told to trust (EC keys: quick to
/// make).
fn make_untrusted_certificate(dir: &Path) {
    let server: &[&str] = &[
        "subjectAltName=IP:127.0.0.1",
        "basicConstraints=critical,CA:FALSE",
    ];
    let other_ca: &[&str] = &["basicConstraints=critical,CA:TRUE"];
    for (name, subject, extensions) in [
        ("server", "/CN=127.0.0.1", server),
        ("other-ca", "/CN=another CA", other_ca),
    ] {
        let out = Command::new("openssl")
            .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
            .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"])
            .args(["-keyout", &format!("{name}.key")])
            .args(["-out", &format!("{name}.pem")])
            .args(["-subj", subject])
            .args(extensions.iter().flat_map(|e| ["-addext", e]))
            .current_dir(dir)
            .output()
            .expect("openssl");
        assert!(
            out.status.success(),
            "openssl: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Sends a signal to a server the test started.
fn signal(redis: &Redis, sig: libc::c_int) {
    // SAFETY: kill(2) on the PID of the test's own redis-server child.
    unsafe { libc::kill(redis.pid() as libc::pid_t, sig) };
}

#[test]
fn refusals_pauses_and_restarts_beside_a_healthy_instance() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    make_untrusted_certificate(d);
    let snmpd = Snmpd::start();
    let healthy = Redis::start();
    // One locked server: the default user needs RIGHT_PW; "mon" may log in
    // but run nothing (AUTH is always allowed).
    let locked = Redis::start_with(&[
        &format!("requirepass {RIGHT_PW}"),
        &format!("user mon on >{ACL_PW} -@all"),
    ]);
    let tls_port = free_port();
    let _tls = Redis::start_with(&[
        &format!("tls-port {tls_port}"),
        &format!("tls-cert-file {}", d.join("server.pem").display()),
        &format!("tls-key-file {}", d.join("server.key").display()),
        "tls-auth-clients no",
    ]);
    let mut victim = Redis::start();
    let agent = start_agent(
        &snmpd,
        &[
            Entry::new("healthy", healthy.address()),
            Entry::new("wrongpass", locked.address())
                .with("password_file", &password_file(d, "wrong.pw", WRONG_PW)),
            Entry::new("acldenied", locked.address())
                .with("username", "mon")
                .with("password_file", &password_file(d, "acl.pw", ACL_PW)),
            Entry::new("badcert", format!("rediss://127.0.0.1:{tls_port}"))
                .with("tls_ca_file", &d.join("other-ca.pem").display().to_string()),
            Entry::new("victim", victim.address()),
        ],
        d,
    );
    let started = Instant::now();
    expect_state(&snmpd, 1, "up(1)", Duration::from_secs(5));
    expect_state(&snmpd, 5, "up(1)", Duration::from_secs(5));
    let polls_ok_before = expect_healthy(&snmpd);
    for n in 2..=4 {
        expect_state(&snmpd, n, "down(2)", Duration::from_secs(5));
    }

    // The server closes the agent's connection (CLIENT KILL, as an idle
    // timeout or a proxy would): no failed poll, the next one reconnects.
    for _ in 0..3 {
        victim.cli(&["CLIENT", "KILL", "TYPE", "normal"]);
        let polls = counter(&snmpd, POLLS_OK, 5);
        let next = wait_until(Duration::from_secs(3), || {
            counter(&snmpd, POLLS_OK, 5) > polls
        });
        assert!(next, "no poll of the victim after CLIENT KILL");
    }
    assert_eq!(counter(&snmpd, POLLS_FAILED, 5), 0);
    assert_eq!(state(&snmpd, 5), "up(1)");

    // Paused: polls time out; the answer comes back after SIGCONT.
    signal(&victim, libc::SIGSTOP);
    expect_state(&snmpd, 5, "down(2)", Duration::from_secs(5));
    let failed = counter(&snmpd, POLLS_FAILED, 5);
    expect_failed_polls(&snmpd, 5, failed + 2);
    let paused_error = last_error(&snmpd, 5);
    signal(&victim, libc::SIGCONT);
    expect_state(&snmpd, 5, "up(1)", Duration::from_secs(5));
    expect_healthy(&snmpd);

    // Killed, then started again on the same port.
    victim.stop();
    expect_state(&snmpd, 5, "down(2)", Duration::from_secs(5));
    let failed = counter(&snmpd, POLLS_FAILED, 5);
    expect_failed_polls(&snmpd, 5, failed + 3);
    let stopped_error = last_error(&snmpd, 5);
    victim.start_again();
    expect_state(&snmpd, 5, "up(1)", Duration::from_secs(5));

    // Every refusing instance has failed at least 4 polls by now.
    for n in 2..=4 {
        expect_failed_polls(&snmpd, n, 4);
        assert_eq!(state(&snmpd, n), "down(2)");
    }
    let polls_ok_after = expect_healthy(&snmpd);
    let elapsed = started.elapsed().as_secs();
    println!(
        "{elapsed} s: healthy polls {polls_ok_before} -> {polls_ok_after}; \
         paused: {paused_error:?}; stopped: {stopped_error:?}"
    );
    assert!(
        polls_ok_after >= polls_ok_before + elapsed.saturating_sub(3),
        "the healthy instance was polled {polls_ok_before} -> {polls_ok_after} times in {elapsed} s"
    );

    // What the status objects say.
    let wrongpass = last_error(&snmpd, 2);
    assert!(
        wrongpass.to_lowercase().contains("authentication failed"),
        "{wrongpass}"
    );
    let acl = last_error(&snmpd, 3);
    assert!(
        acl.contains("NOPERM") && acl.to_lowercase().contains("info"),
        "{acl}"
    );
    let badcert = last_error(&snmpd, 4);
    assert!(
        badcert.contains("certificate was not accepted") && badcert.contains("tls_ca_file"),
        "{badcert}"
    );
    assert!(
        paused_error.to_lowercase().contains("timed out"),
        "{paused_error}"
    );
    assert!(
        stopped_error.to_lowercase().contains("refused"),
        "{stopped_error}"
    );
    // The refusing instances have no data; the healthy one all of it.
    let walk = snmpd.numeric().bulkwalk(REDIS_ROOT);
    assert!(walk.success(), "{walk}");
    let port_of = |n: u32| walk.var(&format!("{REDIS_ROOT}.3.2.1.5.{n}"));
    assert_eq!(port_of(1).map(|v| v.u64()), Some(u64::from(healthy.port())));
    for n in 2..=4 {
        assert_eq!(port_of(n), None, "instance {n} has data");
    }

    // No password anywhere: not in a value, not in the log.
    let log = agent.log();
    for secret in [RIGHT_PW, WRONG_PW, ACL_PW] {
        assert!(!walk.stdout.contains(secret), "{secret} served:\n{walk}");
        assert!(!log.contains(secret), "{secret} logged:\n{log}");
    }

    // Each fault said once, in words a user can act on.
    expect_logged(&agent, "wrongpass", "cannot poll", 1);
    expect_logged(&agent, "wrongpass", "authentication failed", 1);
    expect_logged(&agent, "acldenied", "cannot poll", 1);
    expect_logged(&agent, "acldenied", "NOPERM", 1);
    expect_logged(&agent, "badcert", "cannot poll", 1);
    expect_logged(&agent, "badcert", "certificate", 1);
    expect_logged(&agent, "victim", "cannot poll", 2);
    expect_logged(&agent, "victim", "answers again", 2);
    expect_logged(&agent, "healthy", "", 0);
}

/// Makes an RDB of `keys` keys with a throw-away server, and returns it.
fn dataset(keys: u32) -> Vec<u8> {
    let maker = Redis::start_with(&["enable-debug-command local"]);
    maker.cli(&["DEBUG", "POPULATE", &keys.to_string()]);
    maker.cli(&["SAVE"]);
    std::fs::read(maker.dir().join("dump.rdb")).expect("dump.rdb")
}

/// A redis-server that loads `rdb` slowly: `key-load-delay` (a hidden
/// setting, in 7.0 microseconds of sleep per key) makes it take seconds,
/// and `loading-process-events-interval-bytes` makes it answer INFO while
/// it loads. A cluster node, so that it gets CLUSTER INFO too, which a
/// loading server refuses with LOADING.
fn start_loading(dir: &Path, port: u16, rdb: &[u8]) -> Proc {
    std::fs::write(dir.join("dump.rdb"), rdb).unwrap();
    let conf = format!(
        "port {port}\nbind 127.0.0.1\ndaemonize no\nsave \"\"\nappendonly no\n\
         dir {d}\nlogfile {d}/redis.log\nkey-load-delay 30\n\
         loading-process-events-interval-bytes 1024\ncluster-enabled yes\n\
         cluster-config-file {d}/nodes.conf\ncluster-port {bus}\n",
        d = dir.display(),
        // The cluster bus is port + 10000 unless told: a port no lock holds.
        bus = free_port(),
    );
    std::fs::write(dir.join("redis.conf"), conf).unwrap();
    let mut cmd = Command::new("redis-server");
    cmd.arg(dir.join("redis.conf"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    Proc::spawn(&mut cmd, "loading redis-server")
}

#[test]
fn a_server_loading_its_dataset_is_reachable_and_says_so() {
    const KEYS: u32 = 50_000;
    let rdb = dataset(KEYS);
    let dir = tempfile::tempdir().unwrap();
    let snmpd = Snmpd::start();
    let healthy = Redis::start();
    let port = free_port();
    let agent = start_agent(
        &snmpd,
        &[
            Entry::new("healthy", healthy.address()),
            Entry::new("loader", format!("127.0.0.1:{port}")),
        ],
        dir.path(),
    );
    expect_state(&snmpd, 1, "up(1)", Duration::from_secs(5));
    expect_state(&snmpd, 2, "down(2)", Duration::from_secs(5));

    let _server = start_loading(dir.path(), port, &rdb);
    let started = Instant::now();
    let loading_seen = wait_until(Duration::from_secs(5), || state(&snmpd, 2) == "loading(3)");
    assert!(
        loading_seen,
        "redisInstanceState.2 = {}, expected loading(3); the loading server's log:\n{}",
        state(&snmpd, 2),
        std::fs::read_to_string(dir.path().join("redis.log")).unwrap_or_default()
    );
    let seen_loading = started.elapsed();
    // Reachable: no error, fresh data, and INFO's objects served, among
    // them redisPstLoading true(1).
    assert_eq!(last_error(&snmpd, 2), "");
    assert!(counter(&snmpd, DATA_AGE, 2) <= 2);
    let loading = snmpd
        .client()
        .get_one(&format!("{REDIS_ROOT}.3.5.1.1.2"))
        .value;
    assert_eq!(loading, "true(1)");
    let version = snmpd.numeric().get_one(&format!("{REDIS_ROOT}.3.2.1.1.2"));
    assert_eq!(version.ty, "STRING", "{version}");
    expect_healthy(&snmpd);
    // The load's progress (revision 202611240040Z), as INFO reports it
    // only while loading: the file's size, the bytes loaded, a share of
    // at most 100.00%, the seconds since it began.
    let pst = |column: u32| {
        snmpd
            .numeric()
            .get_one(&format!("{REDIS_ROOT}.3.5.1.{column}.2"))
    };
    let total = pst(38).u64();
    assert_eq!(total, rdb.len() as u64, "redisPstLoadTotal: the RDB's size");
    assert!(pst(40).u64() <= total, "redisPstLoadBytes");
    assert!(pst(41).u64() <= 10_000, "redisPstLoadPercent {}", pst(41));
    assert!(pst(37).u64() <= 60, "redisPstLoadAge {}", pst(37));
    assert!(!pst(42).is_exception(), "redisPstLoadEta {}", pst(42));

    expect_state(&snmpd, 2, "up(1)", Duration::from_secs(30));
    let loaded = started.elapsed();
    println!("loading(3) seen after {seen_loading:?}, up(1) after {loaded:?}");
    let loading = snmpd
        .client()
        .get_one(&format!("{REDIS_ROOT}.3.5.1.1.2"))
        .value;
    assert_eq!(loading, "false(2)");
    // Loaded: the progress objects are gone with INFO's loading fields,
    // and the last load's count is every key.
    for column in [37, 38, 40, 41, 42] {
        let var = snmpd
            .numeric()
            .get_one(&format!("{REDIS_ROOT}.3.5.1.{column}.2"));
        assert!(var.is_exception(), "redisPersistenceEntry {column}: {var}");
    }
    let loaded_keys = snmpd.numeric().get_one(&format!("{REDIS_ROOT}.3.5.1.31.2"));
    assert_eq!(loaded_keys.u64(), u64::from(KEYS), "redisPstLoadKeys");
    // db0's keys, all loaded; and CLUSTER INFO, refused while loading, is
    // asked again: cluster_known_nodes.
    let keys = snmpd
        .numeric()
        .get_one(&format!("{REDIS_ROOT}.3.10.1.2.2.0"));
    assert_eq!(keys.value, KEYS.to_string());
    let mut nodes = String::new();
    assert!(
        wait_until(Duration::from_secs(3), || {
            nodes = snmpd
                .numeric()
                .get_one(&format!("{REDIS_ROOT}.3.9.1.7.2"))
                .value;
            nodes == "1"
        }),
        "cluster_known_nodes.2 = {nodes}"
    );
    expect_healthy(&snmpd);

    // Logged once each: unreachable, loading, loaded. Never a refusal.
    expect_logged(&agent, "loader", "cannot poll", 1);
    expect_logged(&agent, "loader", "loading its dataset", 1);
    expect_logged(&agent, "loader", "has loaded its dataset", 1);
    expect_logged(&agent, "loader", "refuses", 0);
    expect_logged(&agent, "loader", "LOADING", 0);
}
