//! The password goes only to Redis's user on the kernels Debian users run,
//! not only on this machine's: Debian 12's Linux 6.1 and Debian 13's 6.12,
//! each booted under QEMU with a busybox initramfs that holds the agent.
//!
//! Before Linux 6.17 the kernel's socket table shows a connection that no
//! one has accepted yet as root's (uid 0, no inode), and a check of the
//! server's end alone takes a local user who listens on Redis's port while
//! it is down, and delays `accept()`, for root. In the guest, each while
//! the agent polls:
//!
//! - `nobody` listens on 127.0.0.1:6379, on `[::]` for IPv4 too, on
//!   `[::1]`, and at a unix socket path in a directory of its own, and
//!   accepts nothing for 4 s; then it reads all that was queued. It must
//!   hear nothing, and the agent must say whose the port is;
//! - `redis` listens the same way on 127.0.0.1:6382 (a Redis slow to
//!   accept): it must get AUTH, the check is not a refusal of everything;
//! - a server that discovery found (listening as `redis` on
//!   127.0.0.1:6383) stops, and `nobody` takes its port the same way: it
//!   must hear nothing at all (a discovered server is sent no password,
//!   but not even INFO goes to another user).
//!
//! The guest also prints how its kernel shows the queued connections:
//! on these kernels uid 0, which is what made the attack work.
//!
//! Without QEMU (`qemu-system-x86`), busybox (`busybox-static`) or a
//! kernel in the cache (`scripts/test-kernels.sh`), a test says SKIP and
//! why. `REDIS_SNMP_QEMU_ACCEL=kvm` boots with KVM; TCG is the default.

// Starts real servers and tools (or needs root): built only with the
// `system-tests` feature, which scripts/test.sh turns on.
#![cfg(feature = "system-tests")]

use std::path::Path;
use std::time::Duration;
use testkit::guest::{self, Initramfs, Kernel};

const PASSWORD: &str = "Guest-S3cret-pw";
const NOBODY: u32 = 65534;
const REDIS: u32 = 101;
const AGENT: u32 = 102;
/// What each listener does, in the guest: name, user, where; the agent's
/// instance of the same name polls it.
const LISTENERS: &[(&str, u32, &str, &str)] = &[
    ("thief-v4", NOBODY, "tcp:127.0.0.1:6379", "127.0.0.1:6379"),
    ("thief-dual", NOBODY, "tcp:[::]:6380", "127.0.0.1:6380"),
    ("thief-v6", NOBODY, "tcp:[::1]:6381", "[::1]:6381"),
    (
        "thief-unix",
        NOBODY,
        "unix:/run/shared/redis.sock",
        "unix:///run/shared/redis.sock",
    ),
    ("slow-redis", REDIS, "tcp:127.0.0.1:6382", "127.0.0.1:6382"),
];
/// Seconds a listener accepts nothing, then reads what was queued.
const DELAY: u32 = 4;
const OPEN: u32 = 3;

/// The guest's /init: the listeners, the agent as its own user with the
/// password, then what each heard and the agent's warnings.
fn init_script() -> String {
    let mut listeners = String::new();
    for (name, uid, place, _) in LISTENERS {
        listeners.push_str(&format!(
            "/bin/listener {name} {uid} {place} {DELAY} {OPEN} >/tmp/{name}.out 2>&1 &\nwaits=\"$waits $!\"\n"
        ));
    }
    format!(
        r#"#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t devtmpfs dev /dev
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t tmpfs tmp /tmp
mount -t tmpfs run /run
ip link set lo up
echo "GUEST KERNEL $(uname -r)"
echo "GUEST UP $(cut -d' ' -f1 /proc/uptime)"
mkdir -p /run/shared && chown {NOBODY}:{NOBODY} /run/shared
# A server discovery finds (its listener redis's), that stops; then
# nobody takes its port and delays accept.
( /bin/listener found-redis {REDIS} tcp:127.0.0.1:6383 0 4+ >/tmp/found-redis.out 2>&1
  /bin/listener found-thief {NOBODY} tcp:127.0.0.1:6383 {DELAY} {OPEN} >/tmp/found-thief.out 2>&1 ) &
waits=$!
sleep 0.5
/bin/listener as {AGENT} /usr/bin/redis-snmp -n -c /etc/redis-snmp/agent.toml >/tmp/agent.log 2>&1 &
agent=$!
# The others once the agent polls (a slow guest takes seconds to start
# it), the unix socket writable by the agent.
n=0
until grep -q serving /tmp/agent.log || [ $n -ge 150 ]; do sleep 0.2; n=$((n+1)); done
umask 000
{listeners}wait $waits
kill $agent
cat /tmp/*.out
tail -n 100 /tmp/agent.log | sed 's/^/GUEST AGENT /'
echo "GUEST DONE"
poweroff -f
"#
    )
}

fn agent_config() -> String {
    let mut text = String::from(
        "agentx_socket = \"/run/no-snmpd/master\"\nrefresh = 1\n\n[discovery]\nlocal = true\n",
    );
    for (name, _, _, address) in LISTENERS {
        text.push_str(&format!(
            "\n[[redis]]\nname = \"{name}\"\naddress = \"{address}\"\ntimeout = 1.0\npassword_file = \"/etc/redis-snmp/password\"\n"
        ));
    }
    text
}

/// The initramfs: busybox (with its libraries where it is not
/// busybox-static's), the listener, the agent and its libraries, users,
/// the configuration and the password file (the agent's, 0600).
fn initramfs(dir: &Path) -> Result<std::path::PathBuf, String> {
    let busybox = guest::tool("busybox", "busybox-static")?;
    // rustc is here (it built this test): a failure to build is the
    // test's, not a reason to skip.
    let listener = guest::static_program(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/listener.rs"),
    )
    .unwrap_or_else(|e| panic!("the guest's listener: {e}"));
    let agent = guest::stripped(&testkit::agent_bin(), dir);
    let mut image = Initramfs::default();
    image
        .dir("proc")
        .dir("sys")
        .dir("tmp")
        .dir("run")
        .dir("dev")
        .program_with_libraries("bin/busybox", &busybox)
        .program("bin/listener", &listener)
        .program_with_libraries("usr/bin/redis-snmp", &agent)
        .file("init", init_script().as_bytes(), 0o755, 0)
        .file(
            "etc/passwd",
            format!(
                "root:x:0:0:root:/root:/bin/sh\nredis:x:{REDIS}:{REDIS}::/:/bin/false\n\
                 redis-snmp:x:{AGENT}:{AGENT}::/:/bin/false\nnobody:x:{NOBODY}:{NOBODY}::/:/bin/false\n"
            )
            .as_bytes(),
            0o644,
            0,
        )
        .file(
            "etc/group",
            format!("root:x:0:\nredis:x:{REDIS}:\nredis-snmp:x:{AGENT}:\nnogroup:x:{NOBODY}:\n")
                .as_bytes(),
            0o644,
            0,
        )
        .file(
            "etc/nsswitch.conf",
            b"passwd: files\ngroup: files\n",
            0o644,
            0,
        )
        .file(
            "etc/redis-snmp/agent.toml",
            agent_config().as_bytes(),
            0o644,
            0,
        )
        .file(
            "etc/redis-snmp/password",
            format!("{PASSWORD}\n").as_bytes(),
            0o600,
            AGENT,
        );
    let path = dir.join("initramfs.cpio");
    image.write(&path);
    Ok(path)
}

/// `GUEST NAME connections N heard TEXT` of `name`: N and TEXT.
fn heard<'a>(console: &'a str, name: &str) -> Option<(usize, &'a str)> {
    let prefix = format!("GUEST {name} connections ");
    console.lines().find_map(|line| {
        let rest = line.strip_prefix(&prefix)?;
        let (n, text) = rest.split_once(" heard ")?;
        Some((n.parse().ok()?, text))
    })
}

fn check_on(release: &str) {
    let skip = |why: String| println!("SKIP Linux {release}: {why}");
    let kernel: Kernel = match guest::kernel(release)
        .and_then(|k| guest::tool("qemu-system-x86_64", "qemu-system-x86").map(|_| k))
    {
        Ok(kernel) => kernel,
        Err(why) => return skip(why),
    };
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let image = match initramfs(dir.path()) {
        Ok(image) => image,
        Err(why) => return skip(why),
    };
    println!(
        "the initramfs made in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let boot = guest::boot(&kernel, &image, Duration::from_secs(240))
        .unwrap_or_else(|e| panic!("Linux {release} ({}): {e}", kernel.package));
    // The guest's own lines, without what the firmware's terminal codes
    // put before the first.
    let said: Vec<&str> = boot
        .console
        .lines()
        .filter_map(|l| l.find("GUEST ").map(|at| l[at..].trim_end()))
        .collect();
    let console = &said.join("\n");
    let up = said
        .iter()
        .find_map(|l| l.strip_prefix("GUEST UP "))
        .unwrap_or("?");
    println!(
        "Linux {release} ({}): QEMU started, booted (the kernel up for {up} s at /init), \
         ran the scenario and powered off in {:.1} s",
        kernel.package,
        boot.took.as_secs_f64()
    );
    println!("{}", boot.console);
    assert!(
        console.contains("GUEST DONE"),
        "the guest did not finish:\n{console}"
    );
    let running = said
        .iter()
        .find_map(|l| l.strip_prefix("GUEST KERNEL "))
        .unwrap_or("?");
    assert!(
        running.starts_with(&format!("{release}.")),
        "the guest runs {running}, not {release}"
    );
    // The condition under test: this kernel shows the connections that
    // wait in a listener's queue, redis's and the thieves', as root's; and
    // the agent's connections did wait there.
    let tcp = LISTENERS
        .iter()
        .filter(|l| l.2.starts_with("tcp:"))
        .map(|l| l.0);
    for name in tcp.chain(["found-thief"]) {
        let prefix = format!("GUEST {name} queued st ");
        assert!(
            said.iter()
                .any(|l| l.starts_with(&prefix) && l.ends_with(" uid 0")),
            "Linux {release}: no connection waited in {name}'s queue shown as uid 0:\n{console}"
        );
    }
    for (name, uid, _, _) in LISTENERS {
        let (connections, text) =
            heard(console, name).unwrap_or_else(|| panic!("{name} said nothing:\n{console}"));
        assert!(
            connections >= 1,
            "the agent never connected to {name}:\n{console}"
        );
        if *uid == REDIS {
            assert!(
                text.contains("AUTH") && text.contains(PASSWORD),
                "Linux {release}: redis's own listener, slow to accept, was not sent AUTH: {text}"
            );
        } else {
            assert_eq!(
                text, "-",
                "Linux {release}: {name} (uid {uid}) heard the agent over {connections} connection(s)"
            );
        }
    }
    for (name, uid, place, _) in LISTENERS.iter().filter(|l| l.1 == NOBODY) {
        let what = if place.starts_with("unix:") {
            "socket"
        } else {
            "port"
        };
        let said = format!("{what} held by uid {uid} (nobody), not by redis or root");
        assert!(
            console
                .lines()
                .any(|l| l.starts_with("GUEST AGENT ") && l.contains(&said)),
            "Linux {release}: the agent did not say {said:?} of {name}:\n{console}"
        );
    }
    // Discovered: the agent talked to the server it found, then sent
    // nothing to the thief on its port.
    let (_, text) = heard(console, "found-redis")
        .unwrap_or_else(|| panic!("found-redis said nothing:\n{console}"));
    assert!(
        text != "-" && !text.contains(PASSWORD),
        "the discovered server heard {text}:\n{console}"
    );
    let (connections, text) = heard(console, "found-thief")
        .unwrap_or_else(|| panic!("found-thief said nothing:\n{console}"));
    assert!(
        connections >= 1 && text == "-",
        "Linux {release}: the thief on a discovered server's port heard {text} over {connections} connection(s)"
    );
    assert!(
        console.lines().any(|l| l.starts_with("GUEST AGENT ")
            && l.contains(
                "port held by uid 65534 (nobody), not by redis or root: nothing was sent"
            )),
        "Linux {release}: the agent did not say whose the discovered server's port is:\n{console}"
    );
    assert!(
        !console
            .lines()
            .any(|l| l.starts_with("GUEST AGENT ") && l.contains(PASSWORD)),
        "the password is in the agent's log"
    );
}

#[test]
fn on_debian_12s_linux_6_1_a_port_thief_that_delays_accept_gets_no_password() {
    check_on("6.1");
}

#[test]
fn on_debian_13s_linux_6_12_a_port_thief_that_delays_accept_gets_no_password() {
    check_on("6.12");
}
