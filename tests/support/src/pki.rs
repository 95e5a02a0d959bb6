//! Certificates for TLS tests, made by `openssl` in a test's directory: a
//! CA, keys with their signing requests, certificates a CA signs.

use crate::openssl;
use std::path::Path;

/// A self-signed CA: `STEM.key` and `STEM.pem`, valid for `days`.
pub fn make_ca(dir: &Path, stem: &str, common_name: &str, days: u32) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            &format!("{stem}.key"),
            "-out",
            &format!("{stem}.pem"),
            "-days",
            &days.to_string(),
            "-subj",
            &format!("/CN={common_name}"),
        ],
    );
}

/// A key and its signing request: `STEM.key` and `STEM.csr` for `subject`
/// (`/O=Example/CN=redis.test`).
pub fn make_request(dir: &Path, stem: &str, subject: &str) {
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            &format!("{stem}.key"),
            "-out",
            &format!("{stem}.csr"),
            "-subj",
            subject,
        ],
    );
}

/// `request` (a `.csr`) signed by the CA `ca` (`ca.pem`, `ca.key`) into
/// `out`, valid for `days`, with the X.509 v3 extensions `extensions`
/// (e.g. `subjectAltName=DNS:redis.test`; an extension also makes it a v3
/// certificate, which rustls requires).
pub fn sign(dir: &Path, request: &str, ca: &str, out: &str, days: u32, extensions: &str) {
    let ext_file = format!("{out}.ext");
    std::fs::write(dir.join(&ext_file), format!("{extensions}\n")).expect("extensions file");
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            request,
            "-CA",
            &format!("{ca}.pem"),
            "-CAkey",
            &format!("{ca}.key"),
            "-CAcreateserial",
            "-out",
            out,
            "-days",
            &days.to_string(),
            "-extfile",
            &ext_file,
        ],
    );
}

/// A date openssl prints of `file` (a certificate with `kind` `x509`, a
/// CRL with `crl`), asked with `option` (`-enddate`, `-nextupdate`), in
/// UNIX seconds as `date` reads it: the tests' reading of the dates is
/// openssl's, not the agent's.
pub fn openssl_date(dir: &Path, kind: &str, option: &str, file: &str) -> i64 {
    let out = std::process::Command::new("openssl")
        .args([kind, "-noout", option, "-in", file])
        .current_dir(dir)
        .output()
        .expect("running openssl");
    let text = String::from_utf8_lossy(&out.stdout);
    let (_, date) = text
        .trim()
        .split_once('=')
        .unwrap_or_else(|| panic!("openssl {kind} {option} {file}: {text}"));
    let out = std::process::Command::new("date")
        .args(["-u", "-d", date, "+%s"])
        .output()
        .expect("running date");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("date +%s")
}

/// Now, in UNIX seconds.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs() as i64
}

/// An ssldir in `dir` with a real CA certificate (openssl, 90 days) and no
/// agent certificate (`puppet apply` needs none), and the `[puppet]` lines
/// that name it: puppetCertificateTable then has a dated row, stored and
/// graphed, and a missing one.
pub fn ssldir_with_ca(dir: &Path) -> String {
    let certs = dir.join("ssl/certs");
    std::fs::create_dir_all(&certs).unwrap();
    make_ca(&certs, "ca", "Puppet CA: puppet.example.test", 90);
    format!(
        "ssldir = \"{}\"\ncertname = \"agent.example.test\"\n",
        dir.join("ssl").display()
    )
}

/// An ssldir in `dir` as a Puppet CA leaves it for agent `certname` whose
/// `csr_attributes.yaml` asked for the trusted fact `pp_role = role`
/// (extension 1.3.6.1.4.1.34380.1.1.13, a UTF8String), and the
/// `[puppet]` lines that name it.
pub fn ssldir_with_role(dir: &Path, certname: &str, role: &str) -> String {
    let certs = dir.join("ssl/certs");
    std::fs::create_dir_all(&certs).unwrap();
    make_ca(&certs, "ca", "Puppet CA: puppet.example.test", 90);
    make_request(&certs, "agent", &format!("/CN={certname}"));
    sign(
        &certs,
        "agent.csr",
        "ca",
        &format!("{certname}.pem"),
        90,
        &format!("subjectAltName=DNS:{certname}\n1.3.6.1.4.1.34380.1.1.13=ASN1:UTF8String:{role}"),
    );
    format!(
        "ssldir = \"{}\"\ncertname = \"{certname}\"\n",
        dir.join("ssl").display()
    )
}
