//! SNMPv3 users, and the documented access configuration they come from.

use crate::*;

/// The lines of `debian/examples/snmpd-access.conf` (the access
/// configuration the README gives), comments and blank lines dropped,
/// with its `MANAGER:162` replaced by `manager` (e.g. `10.77.0.3:20162`).
/// Tests run snmpd with these very lines, so the documentation cannot drift
/// from what was tested.
pub fn access_example_lines(manager: &str) -> Vec<String> {
    let path = repo_root().join("debian/examples/snmpd-access.conf");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.replace("MANAGER:162", manager))
        .collect()
}

/// An SNMPv3 (USM) user that authenticates with SHA-256 and encrypts with
/// AES, at `authPriv`: the only kind the documented access configuration
/// lets read Puppet data or send notifications.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsmUser {
    pub name: String,
    pub auth_pass: String,
    pub priv_pass: String,
}

impl UsmUser {
    pub fn new(name: &str, auth_pass: &str, priv_pass: &str) -> UsmUser {
        UsmUser {
            name: name.into(),
            auth_pass: auth_pass.into(),
            priv_pass: priv_pass.into(),
        }
    }

    /// The user of the documented configuration (its `createUser` line).
    pub fn documented() -> UsmUser {
        let lines = access_example_lines("MANAGER:162");
        let line = lines
            .iter()
            .find(|l| l.starts_with("createUser"))
            .expect("a createUser line in debian/examples/snmpd-access.conf");
        let words: Vec<&str> = line
            .split_whitespace()
            .map(|w| w.trim_matches('"'))
            .collect();
        match words[..] {
            ["createUser", name, "SHA-256", auth, "AES", privacy] => {
                UsmUser::new(name, auth, privacy)
            }
            _ => panic!("not `createUser NAME SHA-256 AUTH AES PRIV`: {line}"),
        }
    }

    /// The same user with other passphrases: what an impostor sends.
    pub fn with_passphrases(&self, auth_pass: &str, priv_pass: &str) -> UsmUser {
        UsmUser::new(&self.name, auth_pass, priv_pass)
    }

    /// `createUser NAME SHA-256 "AUTH" AES "PRIV"`, for snmpd.conf or
    /// snmptrapd.conf: the keys are localised to the reading program's own
    /// engine ID, which is what a receiver of informs needs (the sender
    /// discovers it).
    pub fn create_user_line(&self) -> String {
        format!(
            "createUser {} SHA-256 \"{}\" AES \"{}\"",
            self.name, self.auth_pass, self.priv_pass
        )
    }

    /// `createUser -e ENGINE …`: the user as a trap *sender* with that
    /// engine ID (`-e` of snmptrap) is, which snmptrapd needs to accept
    /// SNMPv3 traps (the sender is the authoritative engine of a trap).
    pub fn create_user_line_for_engine(&self, engine_id: &str) -> String {
        self.create_user_line()
            .replacen("createUser ", &format!("createUser -e {engine_id} "), 1)
    }

    /// The net-snmp tools' options for this user: `-v3 -u NAME -l authPriv
    /// -a SHA-256 -A AUTH -x AES -X PRIV`.
    pub fn tool_args(&self) -> Vec<String> {
        [
            "-v3",
            "-u",
            &self.name,
            "-l",
            "authPriv",
            "-a",
            "SHA-256",
            "-A",
            &self.auth_pass,
            "-x",
            "AES",
            "-X",
            &self.priv_pass,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }
}
