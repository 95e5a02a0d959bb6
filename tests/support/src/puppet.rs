//! Puppet apply.

use crate::{repo_root, Proc};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;
use tempfile::TempDir;

/// A private Puppet: every directory `puppet apply` writes to is under a
/// temporary directory (`--vardir` alone does not move the summary:
/// `--publicdir` must be given too).
pub struct PuppetApply {
    dir: TempDir,
}

impl Default for PuppetApply {
    fn default() -> Self {
        PuppetApply::new()
    }
}

impl PuppetApply {
    pub fn new() -> PuppetApply {
        let dir = tempfile::Builder::new()
            .prefix("redis-snmp-puppet.")
            .tempdir()
            .expect("tempdir");
        PuppetApply::laid_out(dir)
    }

    /// A Puppet under `parent` (not `/tmp`, which a sandbox's `PrivateTmp`
    /// hides), searchable by every user as Puppet's own directories are:
    /// what Puppet writes keeps the modes Puppet gives it.
    pub fn within(parent: &Path) -> PuppetApply {
        let dir = tempfile::Builder::new()
            .prefix("puppet.")
            .tempdir_in(parent)
            .expect("tempdir");
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).expect("chmod");
        PuppetApply::laid_out(dir)
    }

    fn laid_out(dir: TempDir) -> PuppetApply {
        for d in ["conf", "code", "target", "manifests"] {
            fs::create_dir_all(dir.path().join(d)).expect("puppet dirs");
        }
        PuppetApply { dir }
    }

    /// `puppet agent ARGS` with this Puppet's directories (the lock
    /// commands, `--disable` and `--enable`, need no server): whether it
    /// succeeded, and what it said.
    pub fn agent(&self, args: &[&str]) -> (bool, String) {
        let v = |s: &str| self.var().join(s).to_string_lossy().into_owned();
        let confdir = self.dir.path().join("conf").to_string_lossy().into_owned();
        let out = Command::new("puppet")
            .arg("agent")
            .args([
                "--confdir",
                &confdir,
                "--vardir",
                &v(""),
                "--publicdir",
                &v("public"),
            ])
            .args([
                "--logdir",
                &v("log"),
                "--rundir",
                &v("run"),
                "--ssldir",
                &v("ssl"),
            ])
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("running puppet agent: {e}"));
        (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    }

    pub fn var(&self) -> PathBuf {
        self.dir.path().join("var")
    }

    /// Where manifests may create files.
    pub fn target(&self) -> PathBuf {
        self.dir.path().join("target")
    }

    /// `$publicdir` and `$statedir` of this Puppet.
    pub fn public_dir(&self) -> PathBuf {
        self.var().join("public")
    }

    pub fn state_dir(&self) -> PathBuf {
        self.var().join("state")
    }

    /// The arguments of `puppet apply` for `manifest` (written to
    /// `manifests/<name>.pp`) in this Puppet: for [`PuppetApply::apply`],
    /// and for runs a manifest starts itself.
    pub fn apply_args(&self, name: &str, manifest: &str, extra: &[&str]) -> Vec<String> {
        let file = self.dir.path().join("manifests").join(format!("{name}.pp"));
        fs::write(&file, manifest).expect("manifest");
        let d = |s: &str| self.dir.path().join(s).to_string_lossy().into_owned();
        let v = |s: &str| self.var().join(s).to_string_lossy().into_owned();
        let mut args: Vec<String> = vec![
            "apply".into(),
            "--confdir".into(),
            d("conf"),
            "--vardir".into(),
            v(""),
            "--publicdir".into(),
            v("public"),
            "--logdir".into(),
            v("log"),
            "--rundir".into(),
            v("run"),
            "--ssldir".into(),
            v("ssl"),
            "--codedir".into(),
            d("code"),
            "--detailed-exitcodes".into(),
            "--color=false".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        args.push(file.to_string_lossy().into_owned());
        args
    }

    /// The same `puppet apply`, started and left running (its output
    /// discarded), to watch what happens during the run.
    pub fn spawn(&self, name: &str, manifest: &str, extra: &[&str]) -> Proc {
        let args = self.apply_args(name, manifest, extra);
        let mut cmd = Command::new("puppet");
        cmd.args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        Proc::spawn(&mut cmd, "puppet apply")
    }

    /// `puppet apply --detailed-exitcodes` of `manifest`; returns the exit
    /// code and when the process ended.
    pub fn apply(&self, name: &str, manifest: &str, extra: &[&str]) -> (i32, Instant) {
        let args = self.apply_args(name, manifest, extra);
        let out = Command::new("puppet")
            .args(&args)
            .output()
            .unwrap_or_else(|e| {
                panic!("running puppet (is Debian's puppet package installed?): {e}")
            });
        let end = Instant::now();
        let code = out.status.code().expect("puppet exited by a signal");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let relevant: Vec<&str> = stdout.lines().filter(|l| !l.contains("Facter")).collect();
        println!(
            "puppet apply {name}: exit {code}\n  {}",
            relevant.join("\n  ")
        );
        (code, end)
    }
}

/// The run summary and report of a real Puppet run
/// (`tests/fixtures/puppet/CASE`) copied into `dir`, and the agent's
/// `[puppet]` section naming them (the lock files in `dir` too, absent;
/// an empty events log there).
pub fn puppet_fixture_section(dir: &Path, case: &str) -> String {
    let fixtures = repo_root().join("tests/fixtures/puppet").join(case);
    for file in ["last_run_summary.yaml", "last_run_report.yaml"] {
        let from = fixtures.join(file);
        fs::copy(&from, dir.join(file)).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    }
    // The events log too (empty: Puppet has logged nothing since), so the
    // agent follows a file of the test's rather than the machine's.
    let events = dir.join("events.jsonl");
    fs::write(&events, "").expect("events.jsonl");
    fs::set_permissions(&events, fs::Permissions::from_mode(0o644)).expect("chmod events.jsonl");
    format!(
        "[puppet]\nsummary = \"{}\"\nreport = \"{}\"\ndisabled_lock = \"{}\"\nrun_lock = \"{}\"\nevents_log = \"{}\"\n",
        dir.join("last_run_summary.yaml").display(),
        dir.join("last_run_report.yaml").display(),
        dir.join("agent_disabled.lock").display(),
        dir.join("agent_catalog_run.lock").display(),
        events.display(),
    )
}
