//! The package's systemd unit (`debian/redis-snmp.service`) as a sandbox
//! for a test's agent, where no systemd runs to start it: its settings are
//! read from the unit itself, so that a change to the unit changes what
//! the tests run under, and those that can be applied by hand are, by
//! `unshare -m` (a mount namespace of the agent's own), mounts in it and
//! `setpriv`. What is applied and what is not is said by
//! [`UnitSandbox::applied`] and [`UnitSandbox::not_applied`], and a test
//! names the settings it depends on.
//!
//! Applied:
//!
//! - `User=`, `Group=`: the agent runs as them (no supplementary groups).
//!   The unit's user may not exist on the test host (the package makes
//!   it): then as `nobody`, which is as much a stranger to every other
//!   process and file.
//! - `ProtectProc=`, `ProcSubset=`: `/proc` mounted anew with
//!   `hidepid=` and `subset=pid`, what systemd does for them.
//! - `ProtectSystem=strict`: every mount remounted read-only but `/dev`,
//!   `/proc` and `/sys`. `ProtectHome=yes`: `/home`, `/root` and
//!   `/run/user` empty and unreadable. `PrivateTmp=yes`: `/tmp` and
//!   `/var/tmp` empty and the agent's own (so the files a sandboxed agent
//!   reads must be elsewhere: [`UnitSandbox::files_dir`]).
//! - `NoNewPrivileges=`, `CapabilityBoundingSet=` (empty: none),
//!   `AmbientCapabilities=` (empty), `UMask=`, `LimitCORE=`.
//! - `PrivateMounts=yes`: the mount namespace all this is done in.
//! - The working directory `/`, as for every system service.
//!
//! Not applied (systemd's own machinery: seccomp, device and cgroup
//! setup): every other setting of `[Service]`, among them
//! `RestrictAddressFamilies=`, `SystemCallFilter=`, `MemoryMax=`,
//! `PrivateDevices=`, `ProtectKernel*=`, `MemoryDenyWriteExecute=`.
//! Settings that start or stop the service (`ExecStart=`, `Restart=`…)
//! are the test's to choose.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// The settings of `[Service]` that only say how the service is started,
/// stopped or ordered: no sandbox.
const NOT_SANDBOX: &[&str] = &[
    "Type",
    "EnvironmentFile",
    "ExecStart",
    "ExecReload",
    "Restart",
    "RestartSec",
    "RestartPreventExitStatus",
];

/// The uid and primary gid of the user `name`.
pub fn user_ids(name: &str) -> Option<(u32, u32)> {
    let c_name = CString::new(name).ok()?;
    // SAFETY: getpwnam returns a pointer into static storage or null; it
    // is read at once (the tests call it from one thread at a time at
    // worst, and only read two integers).
    let pw = unsafe { libc::getpwnam(c_name.as_ptr()) };
    if pw.is_null() {
        return None;
    }
    // SAFETY: not null, see above.
    Some(unsafe { ((*pw).pw_uid, (*pw).pw_gid) })
}

/// The unit's sandbox, as far as it is applied by hand.
pub struct UnitSandbox {
    /// Each setting of `[Service]`, every value it is given in order.
    settings: BTreeMap<String, Vec<String>>,
    user: String,
    group: String,
    applied: Vec<String>,
    not_applied: Vec<String>,
    script: String,
}

impl UnitSandbox {
    /// The package's unit, `debian/redis-snmp.service`.
    pub fn of_the_package() -> UnitSandbox {
        let path = crate::repo_root().join("debian/redis-snmp.service");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        UnitSandbox::from_unit(&text)
    }

    /// A unit's text.
    pub fn from_unit(text: &str) -> UnitSandbox {
        let mut settings: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut section = String::new();
        for line in text.lines().map(str::trim) {
            if line.starts_with('#') || line.is_empty() {
                continue;
            }
            if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                section = name.to_string();
                continue;
            }
            if section != "Service" {
                continue;
            }
            if let Some((key, value)) = line.split_once('=') {
                settings
                    .entry(key.trim().to_string())
                    .or_default()
                    .push(value.trim().to_string());
            }
        }
        let last = |key: &str| settings.get(key).and_then(|v| v.last()).map(String::as_str);
        let yes = |key: &str| matches!(last(key), Some("yes" | "true" | "on" | "1"));
        let mut applied = Vec::new();
        let mut taken: Vec<&str> = Vec::new();
        let mut take = |key: &'static str, how: String| {
            applied.push(format!("{key}={} ({how})", last(key).unwrap_or("")));
            taken.push(key);
        };

        let wanted_user = last("User").unwrap_or("root").to_string();
        let (user, group) = if user_ids(&wanted_user).is_some() {
            (
                wanted_user.clone(),
                last("Group").unwrap_or(&wanted_user).to_string(),
            )
        } else {
            ("nobody".to_string(), "nogroup".to_string())
        };
        if settings.contains_key("User") {
            take("User", format!("as {user}"));
        }
        if settings.contains_key("Group") {
            take("Group", format!("as {group}"));
        }

        // unshare --mount --propagation private: what PrivateMounts=yes
        // is (and what every mount below needs).
        if yes("PrivateMounts") {
            take("PrivateMounts", "a mount namespace of its own".into());
        }
        let mut steps: Vec<String> = vec!["set -e".into()];
        // /proc first: what follows reads /proc/self/mountinfo.
        let mut proc_options = Vec::new();
        if let Some(hide) = last("ProtectProc").filter(|v| *v != "default") {
            proc_options.push(format!("hidepid={hide}"));
            take("ProtectProc", format!("hidepid={hide}"));
        }
        if last("ProcSubset") == Some("pid") {
            proc_options.push("subset=pid".into());
            take("ProcSubset", "subset=pid".into());
        }
        if !proc_options.is_empty() {
            steps.push(format!(
                "mount -t proc -o {} proc /proc",
                proc_options.join(",")
            ));
        }
        if last("ProtectSystem") == Some("strict") {
            steps.push(
                "for m in $(awk '{print $5}' /proc/self/mountinfo); do \
                 case $m in /proc|/proc/*|/dev|/dev/*|/sys|/sys/*) continue;; esac; \
                 mount -o remount,bind,ro \"$m\" 2>/dev/null || true; done"
                    .into(),
            );
            take(
                "ProtectSystem",
                "every mount read-only but /dev, /proc, /sys".into(),
            );
        }
        if yes("ProtectHome") {
            steps.push(
                "for d in /home /root /run/user; do \
                 [ -d \"$d\" ] && mount -t tmpfs -o ro,mode=000 tmpfs \"$d\"; done; true"
                    .into(),
            );
            take("ProtectHome", "empty, unreadable".into());
        }
        if yes("PrivateTmp") {
            steps.push(
                "for d in /tmp /var/tmp; do mount -t tmpfs -o mode=1777 tmpfs \"$d\"; done".into(),
            );
            take("PrivateTmp", "empty tmpfs".into());
        }
        if let Some(mask) = last("UMask") {
            steps.push(format!("umask {mask}"));
            take("UMask", "umask".into());
        }
        if let Some(limit) = last("LimitCORE") {
            steps.push(format!("ulimit -c {limit}"));
            take("LimitCORE", "ulimit -c".into());
        }
        steps.push("cd /".into());
        let mut setpriv = vec![
            "exec setpriv".to_string(),
            format!("--reuid={user}"),
            format!("--regid={group}"),
            "--clear-groups".into(),
        ];
        if yes("NoNewPrivileges") {
            setpriv.push("--no-new-privs".into());
            take("NoNewPrivileges", "setpriv --no-new-privs".into());
        }
        if last("CapabilityBoundingSet") == Some("") {
            setpriv.push("--bounding-set=-all".into());
            take("CapabilityBoundingSet", "none".into());
        }
        if last("AmbientCapabilities") == Some("") {
            setpriv.push("--inh-caps=-all".into());
            take("AmbientCapabilities", "none, nor inheritable".into());
        }
        setpriv.push("--".into());
        setpriv.push("\"$@\"".into());
        steps.push(setpriv.join(" "));

        let not_applied = settings
            .keys()
            .filter(|k| !taken.contains(&k.as_str()) && !NOT_SANDBOX.contains(&k.as_str()))
            .cloned()
            .collect();
        UnitSandbox {
            settings,
            user,
            group,
            applied,
            not_applied,
            script: steps.join("\n"),
        }
    }

    /// The last value of a `[Service]` setting.
    pub fn setting(&self, key: &str) -> Option<&str> {
        self.settings
            .get(key)
            .and_then(|v| v.last())
            .map(String::as_str)
    }

    /// The user the sandboxed program runs as.
    pub fn user(&self) -> &str {
        &self.user
    }

    pub fn group(&self) -> &str {
        &self.group
    }

    /// The settings applied, each with how (`ProcSubset=pid (subset=pid)`).
    pub fn applied(&self) -> &[String] {
        &self.applied
    }

    /// Whether `key` is among the settings applied.
    pub fn applies(&self, key: &str) -> bool {
        self.applied
            .iter()
            .any(|a| a.starts_with(&format!("{key}=")))
    }

    /// The sandbox settings of the unit left out.
    pub fn not_applied(&self) -> &[String] {
        &self.not_applied
    }

    /// What is applied and what is not, for a test's messages.
    pub fn describe(&self) -> String {
        format!(
            "the unit's sandbox, applied: {}; not applied: {}",
            self.applied.join(", "),
            self.not_applied.join(", ")
        )
    }

    /// A launcher for [`crate::Agent::start_through`] (or any program and
    /// its arguments, which follow it): the program runs in the sandbox.
    pub fn launcher(&self) -> Vec<String> {
        vec![
            "unshare".into(),
            "--mount".into(),
            "--propagation".into(),
            "private".into(),
            "--".into(),
            "sh".into(),
            "-c".into(),
            self.script.clone(),
            "unit-sandbox".into(),
        ]
    }

    /// `program` with `args`, in the sandbox, to completion: its exit
    /// status and output (stdout then stderr).
    pub fn run(&self, program: &str, args: &[&str]) -> (bool, String) {
        let launcher = self.launcher();
        let out = std::process::Command::new(&launcher[0])
            .args(&launcher[1..])
            .arg(program)
            .args(args)
            .output()
            .expect("running unshare");
        (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    }

    /// The agent, in the sandbox, on the configuration file `config`
    /// (made readable by all: it is in [`UnitSandbox::files_dir`]), in the
    /// foreground and verbose, once it has registered with the master.
    pub fn start_agent(&self, config: &Path) -> crate::Agent {
        set_mode(config, 0o644);
        let launcher = self.launcher();
        let launcher: Vec<&str> = launcher.iter().map(String::as_str).collect();
        let mut agent = crate::Agent::start_through(
            &launcher,
            &["-n", "-v", "-c", config.to_str().expect("a UTF-8 path")],
            &[],
        );
        agent.expect_registered(std::time::Duration::from_secs(10));
        agent
    }

    /// A directory for the files a sandboxed program reads (its
    /// configuration): under `base` (a test's `CARGO_TARGET_TMPDIR`, which
    /// neither `PrivateTmp` nor `ProtectHome` hides), searchable by all;
    /// files written into it must be made readable by the sandbox's user.
    pub fn files_dir(&self, base: &Path) -> TempDir {
        std::fs::create_dir_all(base).expect("creating the base directory");
        let dir = tempfile::Builder::new()
            .prefix("unit-sandbox.")
            .tempdir_in(base)
            .expect("tempdir");
        set_mode(dir.path(), 0o755);
        dir
    }
}

/// `chmod`.
pub fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .unwrap_or_else(|e| panic!("chmod {mode:o} {}: {e}", path.display()));
}

/// `chown` to `user` and its primary group.
pub fn chown_to(path: &Path, user: &str) -> PathBuf {
    let (uid, gid) = user_ids(user).unwrap_or_else(|| panic!("no user {user} on this host"));
    std::os::unix::fs::chown(path, Some(uid), Some(gid))
        .unwrap_or_else(|e| panic!("chown {user} {}: {e}", path.display()));
    path.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_units_settings_become_the_launchers_steps() {
        let unit =
            "[Unit]\nDescription=x\n[Service]\nUser=no-such-user-here\nProtectProc=invisible\n\
                    ProcSubset=pid\nPrivateTmp=yes\nRestrictAddressFamilies=AF_UNIX AF_INET\n\
                    CapabilityBoundingSet=\nExecStart=/bin/true\n[Install]\nWantedBy=x\n";
        let sandbox = UnitSandbox::from_unit(unit);
        assert_eq!(sandbox.user(), "nobody");
        let script = sandbox.launcher()[7].clone();
        assert!(script.contains("mount -t proc -o hidepid=invisible,subset=pid proc /proc"));
        assert!(script.contains("tmpfs"));
        assert!(script.contains("--bounding-set=-all"));
        assert!(sandbox.applies("ProcSubset") && sandbox.applies("User"));
        assert_eq!(sandbox.not_applied(), ["RestrictAddressFamilies"]);
        assert_eq!(sandbox.setting("ExecStart"), Some("/bin/true"));
    }
}
