//! The Puppet agent's own certificates (issue 25): the agent certificate
//! (`hostcert`), the CA's (`localcacert`) and the CRL (`hostcrl`) of
//! Puppet's `ssldir`, each as a row of `puppetCertificateTable`, and what
//! the judge needs to say `puppetCertificateExpiring` and its clear.
//!
//! When any of the three ends, every run stops: the agent can no longer
//! authenticate (its certificate), verify the server (the CA), or pass
//! the revocation check Puppet makes by default (`certificate_revocation =
//! chain`: a CRL past its nextUpdate is refused like a missing one).
//! Puppet warns only in its own log, on the agent, during a run.
//!
//! Where the files are is Puppet's own layout (`puppet config print
//! ssldir certdir localcacert hostcert hostcrl`, Debian 12's Puppet 7.23):
//!
//! ```text
//! $ssldir/certs/$certname.pem   hostcert
//! $ssldir/certs/ca.pem          localcacert (the CA chain: the soonest end counts)
//! $ssldir/crl.pem               hostcrl (the CRL chain: the soonest nextUpdate counts)
//! ```
//!
//! `ssldir` is `/var/lib/puppet/ssl` in Debian's package and
//! `/etc/puppetlabs/puppet/ssl` in Puppet's and OpenVox's AIO packages
//! ([`SSLDIRS`]); `certname` defaults in Puppet to the host's FQDN, which
//! this agent does not guess: without `[puppet] certname`, the agent
//! certificate is the one `certs/*.pem` that is not `ca.pem` (an agent's
//! `certdir` holds just those two), and several are a clear state asking
//! for `certname`.
//!
//! The files are read as the run files are (`super::state`'s
//! `read_capped`: no symbolic link followed, non-blocking, regular files
//! only, at most [`MAX_PEM_BYTES`]), on the blocking pool with them, and
//! parsed with the bounded DER reader [`crate::x509`]. A missing or
//! unreadable file is a row state (`missing`, `unreadable`, `invalid`)
//! logged once by the watcher when it changes, never an error per read.

use super::files::{read_capped, FileStatus, Outcome};
use super::observation::{expiring, CertificateDates};
use crate::config::{CertificateSettings, SSLDIRS};
use crate::metrics::{PuppetCertificateField, PuppetCertificateKind, PuppetCertificateState};
use crate::smi::{display_string, saturate_u32, Value};
use crate::x509;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, CertificateRevocationListDer};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A PEM file larger than this is refused before it is read. Puppet's CRL
/// grows with every revoked certificate (about 40 bytes each in DER, 55 in
/// PEM): 4 MiB is some 70,000 revocations.
pub const MAX_PEM_BYTES: usize = 4 << 20;

/// Certificates (or CRLs) read from one file at most: a CA chain is a few.
pub const MAX_PEM_OBJECTS: usize = 16;

/// Files of `certs/` looked at at most when looking for the agent's.
pub const MAX_CERTDIR_ENTRIES: usize = 1_000;

/// One file as the latest read found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertificateFile {
    pub kind: PuppetCertificateKind,
    /// The file read (for the agent certificate without `certname`, the
    /// `certs/` directory when no single file was found).
    pub path: PathBuf,
    pub status: FileStatus,
    /// The subject (a CRL's issuer) of the certificate whose end counts.
    pub subject: String,
    /// notAfter (a CRL's nextUpdate) in UNIX seconds: the soonest of the
    /// file's chain.
    pub not_after: Option<i64>,
    /// The agent certificate's trusted fact `pp_role`, when it has one.
    pub role: Option<String>,
}

impl CertificateFile {
    fn new(kind: PuppetCertificateKind, path: PathBuf) -> CertificateFile {
        CertificateFile {
            kind,
            path,
            status: FileStatus::NotRead,
            subject: String::new(),
            not_after: None,
            role: None,
        }
    }

    /// Seconds from `now` (UNIX seconds) to its end; negative once past.
    pub fn seconds_left(&self, now: i64) -> Option<i64> {
        Some(self.not_after?.saturating_sub(now))
    }

    /// Its state at `now` with `warning` as the edge of `expiring`.
    pub fn state(&self, now: i64, warning: Duration) -> PuppetCertificateState {
        match &self.status {
            FileStatus::Missing | FileStatus::NotRead => PuppetCertificateState::Missing,
            FileStatus::Unreadable { .. } => PuppetCertificateState::Unreadable,
            FileStatus::Invalid(_) => PuppetCertificateState::Invalid,
            FileStatus::Ok => match self.seconds_left(now) {
                Some(left) if left <= 0 => PuppetCertificateState::Expired,
                Some(left) if expiring(left, warning) => PuppetCertificateState::Expiring,
                Some(_) => PuppetCertificateState::Valid,
                // A CRL without nextUpdate never goes stale by date.
                None => PuppetCertificateState::Valid,
            },
        }
    }

    /// Its value in a column of `puppetCertificateTable`, at `now`.
    pub fn value(
        &self,
        field: PuppetCertificateField,
        now: i64,
        warning: Duration,
    ) -> Option<Value> {
        Some(match field {
            PuppetCertificateField::Kind => Value::Integer(self.kind.number()),
            PuppetCertificateField::Path => display_string(&self.path.display().to_string()),
            PuppetCertificateField::State => Value::Integer(self.state(now, warning).number()),
            PuppetCertificateField::NotAfter => {
                Value::Gauge32(saturate_u32(u64::try_from(self.not_after?).unwrap_or(0)))
            }
            PuppetCertificateField::SecondsLeft => {
                let left = self.seconds_left(now)?;
                Value::Integer(left.clamp(i32::MIN.into(), i32::MAX.into()) as i32)
            }
            PuppetCertificateField::Subject => display_string(&self.subject),
            PuppetCertificateField::Error => display_string(&status_error(&self.status)),
        })
    }
}

/// Why a file could not be used, empty when it could.
pub fn status_error(status: &FileStatus) -> String {
    match status {
        FileStatus::NotRead | FileStatus::Ok => String::new(),
        FileStatus::Missing => "missing".to_owned(),
        FileStatus::Unreadable { error, .. } => error.clone(),
        FileStatus::Invalid(e) => e.to_string(),
    }
}

/// The three files as the latest read found them, with the warning.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Certificates {
    /// In [`super::observation::KINDS`] order; empty before the first read.
    pub files: Vec<CertificateFile>,
    pub warning: Duration,
}

impl Certificates {
    /// The role the agent certificate's trusted facts give (`pp_role`).
    pub fn role(&self) -> Option<&str> {
        self.files
            .iter()
            .find(|f| f.kind == PuppetCertificateKind::Agent && f.status == FileStatus::Ok)?
            .role
            .as_deref()
    }

    /// What the judge needs: each kind's end, when known.
    pub fn dates(&self) -> CertificateDates {
        let mut dates = CertificateDates::default();
        for f in &self.files {
            if f.status.is_ok() {
                dates.0[row_slot(f.kind)] = f.not_after;
            }
        }
        dates
    }

    /// Whether any file has an end date (its seconds left change with time).
    pub fn has_dates(&self) -> bool {
        self.files.iter().any(|f| f.not_after.is_some())
    }
}

fn row_slot(kind: PuppetCertificateKind) -> usize {
    (kind.number() - 1) as usize
}

/// Where the three files are for `settings`: `ssldir` as set, or the first
/// of [`SSLDIRS`] that is a directory (Debian's when none is).
pub fn ssldir(settings: &CertificateSettings) -> PathBuf {
    if let Some(dir) = &settings.ssldir {
        return dir.clone();
    }
    SSLDIRS
        .iter()
        .map(Path::new)
        .find(|d| d.is_dir())
        .unwrap_or(Path::new(SSLDIRS[0]))
        .to_path_buf()
}

/// The directories the files are in, for the watcher.
pub fn directories(settings: &CertificateSettings) -> Vec<PathBuf> {
    let ssldir = ssldir(settings);
    vec![ssldir.join("certs"), ssldir]
}

/// The file names the watcher reacts to (the agent's: any `.pem` when no
/// `certname` is set).
pub fn is_watched_name(settings: &CertificateSettings, name: &std::ffi::OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    match &settings.certname {
        Some(c) => name == "ca.pem" || name == "crl.pem" || name.strip_suffix(".pem") == Some(c),
        None => name.ends_with(".pem"),
    }
}

/// The agent certificate's path: `certs/<certname>.pem`, or the one
/// `certs/*.pem` besides `ca.pem`; `Err` with the state when there is no
/// single one.
fn agent_path(certdir: &Path, certname: Option<&str>) -> Result<PathBuf, FileStatus> {
    if let Some(name) = certname {
        return Ok(certdir.join(format!("{name}.pem")));
    }
    let entries = match std::fs::read_dir(certdir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(FileStatus::Missing),
        Err(e) => {
            return Err(FileStatus::Unreadable {
                error: format!("listing {}: {e}", certdir.display()),
                permission: e.kind() == std::io::ErrorKind::PermissionDenied,
            })
        }
    };
    let mut found: Vec<PathBuf> = Vec::new();
    for entry in entries.take(MAX_CERTDIR_ENTRIES).flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.ends_with(".pem") && name != "ca.pem" {
            found.push(entry.path());
        }
    }
    match found.len() {
        0 => Err(FileStatus::Missing),
        1 => Ok(found.remove(0)),
        n => Err(FileStatus::Unreadable {
            error: format!(
                "{n} certificates in {} besides ca.pem: set [puppet] certname",
                certdir.display()
            ),
            permission: false,
        }),
    }
}

/// Reads the three files now (blocking file I/O).
pub fn read_certificates(settings: &CertificateSettings) -> Certificates {
    let ssldir = ssldir(settings);
    let certdir = ssldir.join("certs");
    let mut files = Vec::with_capacity(3);
    let agent = match agent_path(&certdir, settings.certname.as_deref()) {
        Ok(path) => read_file(PuppetCertificateKind::Agent, path),
        Err(status) => CertificateFile {
            status,
            ..CertificateFile::new(PuppetCertificateKind::Agent, certdir.clone())
        },
    };
    files.push(agent);
    files.push(read_file(PuppetCertificateKind::Ca, certdir.join("ca.pem")));
    files.push(read_file(
        PuppetCertificateKind::Crl,
        ssldir.join("crl.pem"),
    ));
    Certificates {
        files,
        warning: settings.warning,
    }
}

fn read_file(kind: PuppetCertificateKind, path: PathBuf) -> CertificateFile {
    let mut file = CertificateFile::new(kind, path);
    match read_capped(&file.path, MAX_PEM_BYTES, None) {
        Some(Outcome::Content(bytes, _)) => match parse_pem(kind, &bytes) {
            Ok((subject, not_after)) => {
                file.status = FileStatus::Ok;
                file.subject = subject;
                file.not_after = not_after;
                if kind == PuppetCertificateKind::Agent {
                    file.role = agent_role(&bytes);
                }
            }
            Err(e) => file.status = FileStatus::Invalid(crate::puppet::ParseError::Yaml(e)),
        },
        Some(Outcome::Missing) => file.status = FileStatus::Missing,
        Some(Outcome::Failed(status)) => file.status = status,
        // Not asked to skip an unchanged file: never here.
        None => {}
    }
    file
}

/// The `pp_role` of the first certificate of a PEM file.
pub fn agent_role(pem: &[u8]) -> Option<String> {
    let cert = CertificateDer::pem_slice_iter(pem).next()?.ok()?;
    x509::parse(cert.as_ref()).ok()?.puppet_role
}

/// The subject (a CRL's issuer) and end of the PEM file of `kind`: the
/// first certificate of the agent's; the soonest-ending certificate of
/// the CA chain; the CRL with the soonest nextUpdate.
pub fn parse_pem(kind: PuppetCertificateKind, pem: &[u8]) -> Result<(String, Option<i64>), String> {
    let mut soonest: Option<(String, Option<i64>)> = None;
    let mut keep = |subject: String, end: Option<i64>| {
        let sooner = match (&soonest, end) {
            (None, _) => true,
            (Some((_, None)), Some(_)) => true,
            (Some((_, Some(a))), Some(b)) => b < *a,
            _ => false,
        };
        if sooner {
            soonest = Some((subject, end));
        }
    };
    let mut seen = 0;
    if kind == PuppetCertificateKind::Crl {
        for crl in CertificateRevocationListDer::pem_slice_iter(pem).take(MAX_PEM_OBJECTS) {
            let crl = crl.map_err(|e| format!("not PEM: {e}"))?;
            let crl = x509::parse_crl(crl.as_ref()).map_err(|e| e.to_string())?;
            keep(crl.issuer, crl.next_update);
            seen += 1;
        }
    } else {
        for cert in CertificateDer::pem_slice_iter(pem).take(MAX_PEM_OBJECTS) {
            let cert = cert.map_err(|e| format!("not PEM: {e}"))?;
            let cert = x509::parse(cert.as_ref()).map_err(|e| e.to_string())?;
            keep(cert.subject, Some(cert.not_after));
            seen += 1;
            if kind == PuppetCertificateKind::Agent {
                break;
            }
        }
    }
    if seen == 0 {
        let what = if kind == PuppetCertificateKind::Crl {
            "X509 CRL"
        } else {
            "CERTIFICATE"
        };
        return Err(format!("no {what} in the file"));
    }
    soonest.ok_or_else(|| "nothing read".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400;
    const WARNING: Duration = Duration::from_secs(30 * 86_400);
    /// tests/fixtures/puppet-ssl/README.md.
    const AGENT_NOT_AFTER: i64 = 1_953_394_315;
    const CA_NOT_AFTER: i64 = 2_268_754_315;
    const CRL_NEXT_UPDATE: i64 = 1_798_306_315;

    fn fixture_settings() -> CertificateSettings {
        CertificateSettings {
            ssldir: Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/puppet-ssl")),
            ..CertificateSettings::default()
        }
    }

    #[test]
    fn a_real_ssldir_reads_as_openssl_reads_it() {
        let read = read_certificates(&fixture_settings());
        let [agent, ca, crl] = read.files.as_slice() else {
            panic!("{read:?}")
        };
        assert!(agent.path.ends_with("certs/agent.example.test.pem"));
        assert_eq!(agent.status, FileStatus::Ok);
        assert_eq!(agent.subject, "CN=agent.example.test");
        assert_eq!(agent.not_after, Some(AGENT_NOT_AFTER));
        assert_eq!(ca.subject, "CN=Puppet CA: puppet.example.test");
        assert_eq!(ca.not_after, Some(CA_NOT_AFTER));
        assert_eq!(crl.not_after, Some(CRL_NEXT_UPDATE));
        assert_eq!(crl.subject, ca.subject, "a CRL shows its issuer");
        // With certname set, the same file.
        let named = read_certificates(&CertificateSettings {
            certname: Some("agent.example.test".into()),
            ..fixture_settings()
        });
        assert_eq!(named.files[0], *agent);
        // The states at a few moments, and the columns.
        let now = CRL_NEXT_UPDATE - 10 * DAY;
        assert_eq!(agent.state(now, WARNING), PuppetCertificateState::Valid);
        assert_eq!(crl.state(now, WARNING), PuppetCertificateState::Expiring);
        assert_eq!(
            crl.state(CRL_NEXT_UPDATE + 1, WARNING),
            PuppetCertificateState::Expired
        );
        assert_eq!(
            crl.value(PuppetCertificateField::SecondsLeft, now, WARNING),
            Some(Value::Integer((10 * DAY) as i32))
        );
        assert_eq!(
            crl.value(
                PuppetCertificateField::SecondsLeft,
                CRL_NEXT_UPDATE + 5,
                WARNING
            ),
            Some(Value::Integer(-5))
        );
        assert_eq!(
            ca.value(PuppetCertificateField::Kind, now, WARNING),
            Some(Value::Integer(2))
        );
        assert_eq!(
            agent.value(PuppetCertificateField::Error, now, WARNING),
            Some(Value::text(""))
        );
    }

    #[test]
    fn missing_ambiguous_broken_and_hostile_files_are_states() {
        let dir = tempfile::tempdir().unwrap();
        let settings = CertificateSettings {
            ssldir: Some(dir.path().to_path_buf()),
            ..CertificateSettings::default()
        };
        // Nothing at all: three missing rows.
        let read = read_certificates(&settings);
        assert!(read.files.iter().all(|f| f.status == FileStatus::Missing));
        assert_eq!(read.dates(), CertificateDates::default());
        let certs = dir.path().join("certs");
        std::fs::create_dir(&certs).unwrap();
        let fixtures = fixture_settings().ssldir.unwrap();
        let agent_pem = std::fs::read(fixtures.join("certs/agent.example.test.pem")).unwrap();
        std::fs::write(certs.join("a.pem"), &agent_pem).unwrap();
        std::fs::write(certs.join("b.pem"), &agent_pem).unwrap();
        let read = read_certificates(&settings);
        let FileStatus::Unreadable { error, .. } = &read.files[0].status else {
            panic!("{:?}", read.files[0])
        };
        assert!(error.contains("set [puppet] certname"), "{error}");
        // A CRL where the CA should be, garbage as the CRL, a FIFO.
        std::fs::copy(fixtures.join("crl.pem"), certs.join("ca.pem")).unwrap();
        std::fs::write(
            dir.path().join("crl.pem"),
            b"-----BEGIN X509 CRL-----\nAAAA\n-----END X509 CRL-----\n",
        )
        .unwrap();
        let read = read_certificates(&CertificateSettings {
            certname: Some("a".into()),
            ..settings.clone()
        });
        assert_eq!(read.files[0].status, FileStatus::Ok);
        assert!(
            matches!(read.files[1].status, FileStatus::Invalid(_)),
            "{:?}",
            read.files[1]
        );
        assert!(
            matches!(read.files[2].status, FileStatus::Invalid(_)),
            "{:?}",
            read.files[2]
        );
        assert_eq!(
            read.files[1].state(0, WARNING),
            PuppetCertificateState::Invalid
        );
        std::fs::remove_file(dir.path().join("crl.pem")).unwrap();
        let fifo =
            std::ffi::CString::new(dir.path().join("crl.pem").as_os_str().as_encoded_bytes())
                .unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let read = read_certificates(&settings);
        assert_eq!(
            read.files[2].state(0, WARNING),
            PuppetCertificateState::Unreadable
        );
        assert!(!status_error(&read.files[2].status).is_empty());
    }

    #[test]
    fn a_chain_counts_its_soonest_end() {
        let fixtures = fixture_settings().ssldir.unwrap();
        let agent = std::fs::read(fixtures.join("certs/agent.example.test.pem")).unwrap();
        let ca = std::fs::read(fixtures.join("certs/ca.pem")).unwrap();
        let chain = [ca.clone(), agent.clone()].concat();
        assert_eq!(
            parse_pem(PuppetCertificateKind::Ca, &chain).unwrap().1,
            Some(AGENT_NOT_AFTER)
        );
        // The agent's file: its first certificate only.
        assert_eq!(
            parse_pem(PuppetCertificateKind::Agent, &chain).unwrap().1,
            Some(CA_NOT_AFTER)
        );
        assert!(parse_pem(PuppetCertificateKind::Crl, &ca).is_err());
        assert!(parse_pem(PuppetCertificateKind::Ca, b"").is_err());
    }
}
