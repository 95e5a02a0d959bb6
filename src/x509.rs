//! The few fields of an X.509 certificate the agent reports (subject,
//! issuer, notAfter), read from the DER bytes rustls hands over after the
//! TLS handshake or from a PEM file (the Puppet agent's certificate and
//! its CA), and the nextUpdate of a CRL (the Puppet agent's `crl.pem`).
//!
//! rustls and webpki verify certificates but give no access to these
//! fields, and a general X.509 crate would be a new dependency with its own
//! licence files for three fields, so this is a small DER walk
//! (ITU-T X.690) over RFC 5280's layout:
//!
//! ```text
//! Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signature }
//! TBSCertificate ::= SEQUENCE {
//!     version [0] EXPLICIT OPTIONAL, serialNumber INTEGER,
//!     signature AlgorithmIdentifier, issuer Name,
//!     validity SEQUENCE { notBefore Time, notAfter Time },
//!     subject Name, ... }
//! Name ::= SEQUENCE OF SET OF SEQUENCE { type OID, value ANY }
//! Time ::= UTCTime | GeneralizedTime
//!
//! CertificateList ::= SEQUENCE { tbsCertList, signatureAlgorithm, signature }
//! TBSCertList ::= SEQUENCE {
//!     version INTEGER OPTIONAL, signature AlgorithmIdentifier,
//!     issuer Name, thisUpdate Time, nextUpdate Time OPTIONAL, ... }
//! ```
//!
//! The bytes come from the network: every length is checked against what
//! is left before it is used, nothing recurses, no index is taken on trust,
//! and the names are cut at [`MAX_NAME_LEN`] characters. A certificate that
//! does not parse is an error, never a panic (`tests` mutate real
//! certificates; `fuzz/fuzz_targets/certificate_parse.rs` goes further).

use std::fmt::Write as _;

/// Names longer than this are cut (SNMP shows at most 255 octets anyway).
pub const MAX_NAME_LEN: usize = 512;

/// What the agent reports of a server's certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCertificate {
    /// The subject, as RFC 4514 writes a distinguished name
    /// (`CN=redis.test,O=Example`: the last RDN first).
    pub subject: String,
    /// The issuer, the same way.
    pub issuer: String,
    /// The end of the validity period, in UNIX seconds.
    pub not_after: i64,
    /// Puppet's trusted fact `pp_role` (extension
    /// 1.3.6.1.4.1.34380.1.1.13, which the Puppet CA signs into an agent's
    /// certificate from its `csr_attributes.yaml`), when it carries one.
    pub puppet_role: Option<String>,
}

impl ServerCertificate {
    /// Seconds from `now` (UNIX seconds) until the certificate expires;
    /// negative once it has.
    pub fn seconds_left(&self, now: u64) -> i64 {
        self.not_after
            .saturating_sub(i64::try_from(now).unwrap_or(i64::MAX))
    }
}

/// Why a certificate could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unreadable certificate: {0}")]
pub struct CertificateError(&'static str);

type Result<T> = std::result::Result<T, CertificateError>;

const SEQUENCE: u8 = 0x30;
const SET: u8 = 0x31;
const INTEGER: u8 = 0x02;
const OID: u8 = 0x06;
const UTC_TIME: u8 = 0x17;
const GENERALIZED_TIME: u8 = 0x18;
const VERSION: u8 = 0xa0;

/// Reads the subject, issuer and notAfter of a DER certificate.
pub fn parse(der: &[u8]) -> Result<ServerCertificate> {
    let mut outer = Reader::new(der);
    let certificate = outer.expect(SEQUENCE, "not a SEQUENCE")?;
    let mut certificate = Reader::new(certificate);
    let tbs = certificate.expect(SEQUENCE, "no tbsCertificate")?;
    let mut tbs = Reader::new(tbs);
    if tbs.peek_tag() == Some(VERSION) {
        tbs.next()?;
    }
    tbs.expect(INTEGER, "no serial number")?;
    tbs.expect(SEQUENCE, "no signature algorithm")?;
    let issuer = name(tbs.expect(SEQUENCE, "no issuer")?)?;
    let mut validity = Reader::new(tbs.expect(SEQUENCE, "no validity")?);
    validity.next()?;
    let (tag, not_after) = validity.next()?;
    let not_after = time(tag, not_after)?;
    let subject = name(tbs.expect(SEQUENCE, "no subject")?)?;
    tbs.expect(SEQUENCE, "no subject public key")?;
    // issuerUniqueID [1] and subjectUniqueID [2], then extensions [3].
    let mut puppet_role = None;
    while let Ok((tag, content)) = tbs.next() {
        if tag == EXTENSIONS {
            puppet_role = extension(content, PP_ROLE)?
                .and_then(|value| {
                    let (tag, text) = Reader::new(value).next().ok()?;
                    string_value(tag, text)
                })
                .map(|role| role.chars().take(MAX_NAME_LEN).collect());
        }
    }
    Ok(ServerCertificate {
        subject,
        issuer,
        not_after,
        puppet_role,
    })
}

/// `[3] EXPLICIT Extensions`.
const EXTENSIONS: u8 = 0xa3;
const OCTET_STRING: u8 = 0x04;
const BOOLEAN: u8 = 0x01;
/// 1.3.6.1.4.1.34380.1.1.13 (Puppet's `pp_role`), DER-encoded.
const PP_ROLE: &[u8] = &[
    0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x8c, 0x4c, 0x01, 0x01, 0x0d,
];

/// The extnValue of extension `oid` in the content of `[3]`
/// (`SEQUENCE OF Extension { extnID, critical DEFAULT FALSE, extnValue }`).
fn extension<'a>(content: &'a [u8], oid: &[u8]) -> Result<Option<&'a [u8]>> {
    let mut outer = Reader::new(content);
    let mut list = Reader::new(outer.expect(SEQUENCE, "extensions are no SEQUENCE")?);
    while !list.is_empty() {
        let mut one = Reader::new(list.expect(SEQUENCE, "an extension is no SEQUENCE")?);
        let id = one.expect(OID, "an extension has no id")?;
        if one.peek_tag() == Some(BOOLEAN) {
            one.next()?;
        }
        let value = one.expect(OCTET_STRING, "an extension has no value")?;
        if id == oid {
            return Ok(Some(value));
        }
    }
    Ok(None)
}

/// What the agent reports of a CRL (RFC 5280 5.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevocationList {
    /// The issuer, as [`ServerCertificate::issuer`].
    pub issuer: String,
    /// `thisUpdate`, in UNIX seconds.
    pub this_update: i64,
    /// `nextUpdate`, in UNIX seconds: after it a verifier that checks the
    /// CRL (Puppet's agent does, `certificate_revocation = chain`) refuses
    /// every connection until it has a newer one. `None` when the CRL has
    /// none (RFC 5280 requires it, OpenSSL may omit it).
    pub next_update: Option<i64>,
}

/// Reads the issuer, thisUpdate and nextUpdate of a DER CRL.
pub fn parse_crl(der: &[u8]) -> Result<RevocationList> {
    let mut outer = Reader::new(der);
    let list = outer.expect(SEQUENCE, "not a SEQUENCE")?;
    let mut list = Reader::new(list);
    let tbs = list.expect(SEQUENCE, "no tbsCertList")?;
    let mut tbs = Reader::new(tbs);
    // version is optional: present (v2) when it is an INTEGER.
    if tbs.peek_tag() == Some(INTEGER) {
        tbs.next()?;
    }
    tbs.expect(SEQUENCE, "no signature algorithm")?;
    let issuer = name(tbs.expect(SEQUENCE, "no issuer")?)?;
    let (tag, this_update) = tbs.next()?;
    let this_update = time(tag, this_update)?;
    let next_update = match tbs.peek_tag() {
        Some(UTC_TIME | GENERALIZED_TIME) => {
            let (tag, value) = tbs.next()?;
            Some(time(tag, value)?)
        }
        _ => None,
    };
    Ok(RevocationList {
        issuer,
        this_update,
        next_update,
    })
}

/// A cursor over DER elements, one level deep.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Reader { rest: bytes }
    }

    fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    fn peek_tag(&self) -> Option<u8> {
        self.rest.first().copied()
    }

    /// The next element: its tag and its content. Only single-byte tags
    /// and definite lengths of at most four octets (DER's rules; no
    /// certificate needs more).
    fn next(&mut self) -> Result<(u8, &'a [u8])> {
        let (&tag, rest) = self
            .rest
            .split_first()
            .ok_or(CertificateError("truncated"))?;
        if tag & 0x1f == 0x1f {
            return Err(CertificateError("multi-byte tag"));
        }
        let (&first, mut rest) = rest.split_first().ok_or(CertificateError("truncated"))?;
        let len = if first < 0x80 {
            usize::from(first)
        } else {
            let octets = usize::from(first & 0x7f);
            if octets == 0 || octets > 4 {
                return Err(CertificateError("unsupported length"));
            }
            let (bytes, after) = split(rest, octets)?;
            rest = after;
            bytes.iter().fold(0usize, |n, b| (n << 8) | usize::from(*b))
        };
        let (content, after) = split(rest, len)?;
        self.rest = after;
        Ok((tag, content))
    }

    /// The next element's content, which must have tag `tag`.
    fn expect(&mut self, tag: u8, missing: &'static str) -> Result<&'a [u8]> {
        match self.next() {
            Ok((t, content)) if t == tag => Ok(content),
            _ => Err(CertificateError(missing)),
        }
    }
}

fn split(bytes: &[u8], at: usize) -> Result<(&[u8], &[u8])> {
    if at > bytes.len() {
        return Err(CertificateError("length past the end"));
    }
    Ok(bytes.split_at(at))
}

/// A Name as RFC 4514 writes it, in the order of `openssl x509 -nameopt
/// RFC2253`: the RDNs last first, joined by `,`; the attributes of one RDN
/// last first too, joined by `+`; each `type=value`.
fn name(content: &[u8]) -> Result<String> {
    let mut rdns = Vec::new();
    let mut sequence = Reader::new(content);
    while !sequence.is_empty() {
        let mut set = Reader::new(sequence.expect(SET, "a name part is not a SET")?);
        let mut attributes = Vec::new();
        while !set.is_empty() {
            let mut pair = Reader::new(set.expect(SEQUENCE, "a name attribute is no SEQUENCE")?);
            let kind = pair.expect(OID, "a name attribute has no type")?;
            let (tag, value) = pair.next()?;
            let mut text = attribute_name(kind);
            text.push('=');
            match string_value(tag, value) {
                Some(value) => escape_value(&value, &mut text),
                None => {
                    // RFC 4514 2.4: a value of another type as # and the hex
                    // of its whole DER encoding (content cut to the bound).
                    let _ = write!(text, "#{tag:02x}");
                    for b in value.iter().take(MAX_NAME_LEN / 2) {
                        let _ = write!(text, "{b:02x}");
                    }
                }
            }
            attributes.push(text);
        }
        // OpenSSL's RFC 2253 output reverses the attributes of an RDN as
        // well; operators compare with it.
        attributes.reverse();
        rdns.push(attributes.join("+"));
    }
    rdns.reverse();
    let mut joined = rdns.join(",");
    if joined.len() > MAX_NAME_LEN {
        let mut cut = MAX_NAME_LEN;
        while !joined.is_char_boundary(cut) {
            cut -= 1;
        }
        joined.truncate(cut);
    }
    Ok(joined)
}

/// The short name RFC 4514 (and OpenSSL) gives an attribute type, or its
/// dotted OID.
fn attribute_name(oid: &[u8]) -> String {
    const KNOWN: &[(&[u8], &str)] = &[
        (&[0x55, 0x04, 0x03], "CN"),
        (&[0x55, 0x04, 0x05], "serialNumber"),
        (&[0x55, 0x04, 0x06], "C"),
        (&[0x55, 0x04, 0x07], "L"),
        (&[0x55, 0x04, 0x08], "ST"),
        (&[0x55, 0x04, 0x09], "STREET"),
        (&[0x55, 0x04, 0x0a], "O"),
        (&[0x55, 0x04, 0x0b], "OU"),
        (
            &[0x09, 0x92, 0x26, 0x89, 0x93, 0xf2, 0x2c, 0x64, 0x01, 0x19],
            "DC",
        ),
        (
            &[0x09, 0x92, 0x26, 0x89, 0x93, 0xf2, 0x2c, 0x64, 0x01, 0x01],
            "UID",
        ),
        (
            &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x01],
            "emailAddress",
        ),
    ];
    if let Some((_, short)) = KNOWN.iter().find(|(der, _)| *der == oid) {
        return (*short).to_string();
    }
    dotted(oid).unwrap_or_else(|| "unknown".to_string())
}

/// An OID's content octets as `2.5.4.3`; `None` when malformed.
fn dotted(oid: &[u8]) -> Option<String> {
    let mut arcs: Vec<u64> = Vec::new();
    let mut value: u64 = 0;
    for (i, b) in oid.iter().enumerate() {
        if value == 0 && *b == 0x80 {
            return None; // not minimal
        }
        value = value.checked_mul(128)? | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            if arcs.is_empty() {
                let first = (value / 40).min(2);
                arcs.push(first);
                arcs.push(value - first * 40);
            } else {
                arcs.push(value);
            }
            value = 0;
        } else if i + 1 == oid.len() {
            return None; // truncated arc
        }
        if arcs.len() > 64 {
            return None;
        }
    }
    if arcs.is_empty() {
        return None;
    }
    Some(
        arcs.iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join("."),
    )
}

/// A directory string's text: the string types X.520 allows in names.
fn string_value(tag: u8, value: &[u8]) -> Option<String> {
    match tag {
        // UTF8String, PrintableString, TeletexString (in practice Latin-1
        // or ASCII: read as UTF-8, lossily), IA5String, VisibleString.
        0x0c | 0x13 | 0x14 | 0x16 | 0x1a => Some(String::from_utf8_lossy(value).into_owned()),
        // BMPString: UTF-16, big-endian.
        0x1e if value.len().is_multiple_of(2) => {
            let units = value
                .chunks_exact(2)
                .map(|c| u16::from_be_bytes([c[0], c[1]]));
            Some(
                char::decode_utf16(units)
                    .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
                    .collect(),
            )
        }
        // UniversalString: UTF-32, big-endian.
        0x1c if value.len().is_multiple_of(4) => Some(
            value
                .chunks_exact(4)
                .map(|c| {
                    char::from_u32(u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
                        .unwrap_or(char::REPLACEMENT_CHARACTER)
                })
                .collect(),
        ),
        _ => None,
    }
}

/// A value with RFC 4514's escapes: the characters that would end it or
/// change its meaning get a backslash; those that would act on a terminal
/// rather than show (control characters, and the bidirectional and
/// zero-width ones that reorder or hide what an operator reads, as
/// `text::is_printable` defines them) the hex of their UTF-8, as `openssl
/// x509 -nameopt RFC2253` writes them. Subjects and issuers reach log
/// lines and SNMP values as they are, so this is their only escaping.
fn escape_value(value: &str, out: &mut String) {
    let last = value.chars().count().saturating_sub(1);
    let mut buf = [0u8; 4];
    for (i, c) in value.chars().enumerate() {
        if out.len() > MAX_NAME_LEN {
            return;
        }
        let special = matches!(c, '"' | '+' | ',' | ';' | '<' | '>' | '\\')
            || (i == 0 && (c == '#' || c == ' '))
            || (i == last && c == ' ');
        if special {
            out.push('\\');
            out.push(c);
        } else if !crate::text::is_printable(c.encode_utf8(&mut buf)) {
            for b in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, "\\{b:02X}");
            }
        } else {
            out.push(c);
        }
    }
}

/// A UTCTime (`YYMMDDHHMMSSZ`, 1950 to 2049) or GeneralizedTime
/// (`YYYYMMDDHHMMSSZ`) as UNIX seconds. DER writes both in UTC with
/// seconds and without fractions (RFC 5280 4.1.2.5); nothing else is read.
fn time(tag: u8, value: &[u8]) -> Result<i64> {
    let bad = CertificateError("bad time");
    let digits = |range: std::ops::Range<usize>| -> Result<i64> {
        let part = value.get(range).ok_or(bad.clone())?;
        if !part.iter().all(u8::is_ascii_digit) {
            return Err(bad.clone());
        }
        Ok(part.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let (year, rest) = match (tag, value.len()) {
        (UTC_TIME, 13) => {
            let yy = digits(0..2)?;
            (if yy >= 50 { 1900 + yy } else { 2000 + yy }, 2)
        }
        (GENERALIZED_TIME, 15) => (digits(0..4)?, 4),
        _ => return Err(CertificateError("unsupported time format")),
    };
    if value.last() != Some(&b'Z') {
        return Err(bad);
    }
    let month = digits(rest..rest + 2)?;
    let day = digits(rest + 2..rest + 4)?;
    let hour = digits(rest + 4..rest + 6)?;
    let minute = digits(rest + 6..rest + 8)?;
    let second = digits(rest + 8..rest + 10)?;
    // Only days the calendar has: `Feb 31` would otherwise roll into
    // March, a date that no CA wrote and that OpenSSL refuses.
    if !(1..=12).contains(&month)
        || !(1..=days_in_month(year, month)).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return Err(bad);
    }
    Ok(days_from_civil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second)
}

/// The days of `month` (1 to 12) of `year` in the proleptic Gregorian
/// calendar.
fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (the well-known
/// era-based calculation: 400-year eras of 146097 days).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;

    fn fixture(name: &str) -> Vec<u8> {
        let path = format!(
            "{}/tests/fixtures/certificates/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let pem = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        CertificateDer::from_pem_slice(&pem)
            .unwrap_or_else(|e| panic!("{path}: {e}"))
            .as_ref()
            .to_vec()
    }

    /// What `openssl x509 -noout -subject -issuer -enddate -dates -nameopt
    /// RFC2253` says of each fixture, and `date -d … +%s` of its notAfter
    /// (tests/fixtures/certificates/README.md).
    #[test]
    fn real_certificates_read_as_openssl_reads_them() {
        let server = parse(&fixture("server.pem")).unwrap();
        assert_eq!(
            server.subject,
            "CN=redis.test,OU=Cache,O=Example\\, Inc.,C=FR"
        );
        assert_eq!(server.issuer, "CN=test CA");
        // notAfter=Nov 24 00:51:02 2027 GMT, a UTCTime.
        assert_eq!(server.not_after, 1_827_017_462);
        let ca = parse(&fixture("ca.pem")).unwrap();
        assert_eq!(ca.subject, "CN=test CA");
        assert_eq!(ca.subject, ca.issuer);
        // notAfter=Jul 16 00:51:02 2051 GMT: a GeneralizedTime from 2050 on.
        assert_eq!(ca.not_after, 2_573_081_462);
        let utf8 = parse(&fixture("utf8.pem")).unwrap();
        assert_eq!(utf8.subject, "UID=42+CN=caf\u{e9},DC=example,DC=net");
        assert_eq!(utf8.not_after, 1_798_073_462);
        assert_eq!(server.seconds_left(1_827_016_462), 1000);
        assert_eq!(server.seconds_left(1_827_018_462), -1000);
    }

    /// A subject that reorders or hides what an operator reads (a
    /// right-to-left override, zero-width characters, isolates, a
    /// byte-order mark), made by `openssl req -utf8`
    /// (tests/fixtures/certificates/README.md): every such character is
    /// written as `openssl x509 -nameopt RFC2253` writes it, and nothing
    /// of the subject acts on a terminal or an SNMP manager's screen.
    #[test]
    fn bidi_and_zero_width_characters_in_a_subject_are_escaped() {
        let bidi = parse(&fixture("bidi.pem")).unwrap();
        assert_eq!(
            bidi.subject,
            "CN=admin\\E2\\80\\AEgnp.exe\\E2\\80\\8B\\E2\\81\\A6x\\E2\\81\\A9\\EF\\BB\\BF,\
             O=Ex\\E2\\80\\8Dample"
        );
        assert_eq!(bidi.issuer, bidi.subject);
        assert!(crate::text::is_printable(&bidi.subject), "{}", bidi.subject);
        // What text::printable escapes, a name escapes too; the rest of
        // Unicode stays as it is.
        for c in ['\u{61c}', '\u{200e}', '\u{2028}', '\u{2060}', '\u{2064}'] {
            let mut out = String::new();
            escape_value(&format!("a{c}b"), &mut out);
            assert!(crate::text::is_printable(&out), "{out}");
        }
        let mut out = String::new();
        escape_value("café ±", &mut out);
        assert_eq!(out, "café ±");
    }

    /// Dates that no calendar has, in real certificates whose notAfter was
    /// rewritten in place (OpenSSL refuses to write them): `Feb 31` in a
    /// UTCTime and `Feb 29` of a common year in a GeneralizedTime.
    #[test]
    fn only_calendar_dates_are_read() {
        let rewritten = |name: &str, from: &[u8], to: &[u8]| {
            let mut der = fixture(name);
            let at = der
                .windows(from.len())
                .position(|w| w == from)
                .unwrap_or_else(|| panic!("{name}: no notAfter"));
            der[at..at + to.len()].copy_from_slice(to);
            der
        };
        let feb_31 = rewritten("server.pem", b"271124005102Z", b"270231005102Z");
        assert_eq!(parse(&feb_31), Err(CertificateError("bad time")));
        let feb_28 = rewritten("server.pem", b"271124005102Z", b"270228005102Z");
        assert_eq!(parse(&feb_28).unwrap().not_after, 1_803_775_862);
        let feb_29 = rewritten("ca.pem", b"20510716005102Z", b"20510229005102Z");
        assert_eq!(parse(&feb_29), Err(CertificateError("bad time")));
        for bad in [&b"270431000000Z"[..], b"230229000000Z", b"270100000000Z"] {
            assert!(time(UTC_TIME, bad).is_err(), "{bad:?}");
        }
        for bad in [
            &b"21000229000000Z"[..],
            b"19000229000000Z",
            b"20240631000000Z",
        ] {
            assert!(time(GENERALIZED_TIME, bad).is_err(), "{bad:?}");
        }
        // Leap days of leap years, and every month's last day.
        assert!(time(UTC_TIME, b"240229000000Z").is_ok());
        assert!(time(GENERALIZED_TIME, b"24000229000000Z").is_ok());
        for (month, last) in [
            (1, 31),
            (3, 31),
            (4, 30),
            (6, 30),
            (9, 30),
            (11, 30),
            (12, 31),
        ] {
            let text = format!("2027{month:02}{last:02}235959Z");
            assert!(time(GENERALIZED_TIME, text.as_bytes()).is_ok(), "{text}");
        }
    }

    #[test]
    fn every_cut_and_every_flipped_byte_is_an_error_or_a_value_never_a_panic() {
        let der = fixture("server.pem");
        for len in 0..der.len() {
            assert!(parse(&der[..len]).is_err(), "cut at {len} parsed");
        }
        for i in 0..der.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut mutated = der.clone();
                mutated[i] ^= flip;
                if let Ok(c) = parse(&mutated) {
                    assert!(c.subject.len() <= MAX_NAME_LEN && c.issuer.len() <= MAX_NAME_LEN);
                }
            }
        }
    }

    /// The trusted fact a Puppet CA signs into an agent's certificate
    /// (tests/fixtures/puppet-role/README.md); certificates without one
    /// have none, and a cut or flipped certificate never panics.
    #[test]
    fn puppets_role_is_read_from_its_extension() {
        use rustls::pki_types::{pem::PemObject, CertificateDer};
        let read = |path: &str| {
            let path = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
            let pem = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            CertificateDer::from_pem_slice(&pem)
                .unwrap()
                .as_ref()
                .to_vec()
        };
        let der = read("puppet-role/lb1.example.test.pem");
        let cert = parse(&der).unwrap();
        assert_eq!(cert.puppet_role.as_deref(), Some("haproxy"));
        assert_eq!(cert.subject, "CN=lb1.example.test");
        let plain = parse(&read("puppet-ssl/certs/agent.example.test.pem")).unwrap();
        assert_eq!(plain.puppet_role, None);
        for i in 0..der.len() {
            let mut mutated = der.clone();
            mutated[i] ^= 0xff;
            if let Ok(c) = parse(&mutated) {
                assert!(c
                    .puppet_role
                    .is_none_or(|r| r.chars().count() <= MAX_NAME_LEN));
            }
        }
    }

    /// tests/fixtures/puppet-ssl/README.md.
    const CRL_ISSUER: &str = "CN=Puppet CA: puppet.example.test";
    const CRL_THIS_UPDATE: i64 = 1_795_714_315;
    const CRL_NEXT_UPDATE: i64 = 1_798_306_315;

    fn crl_fixture(name: &str) -> Vec<u8> {
        use rustls::pki_types::CertificateRevocationListDer;
        let path = format!(
            "{}/tests/fixtures/puppet-ssl/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let pem = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        CertificateRevocationListDer::from_pem_slice(&pem)
            .unwrap_or_else(|e| panic!("{path}: {e}"))
            .as_ref()
            .to_vec()
    }

    /// What `openssl crl -noout -issuer -lastupdate -nextupdate -nameopt
    /// RFC2253` says of the CRL a throw-away CA made
    /// (tests/fixtures/puppet-ssl/README.md).
    #[test]
    fn a_real_crl_reads_as_openssl_reads_it() {
        let crl = parse_crl(&crl_fixture("crl.pem")).unwrap();
        assert_eq!(crl.issuer, CRL_ISSUER);
        assert_eq!(crl.this_update, CRL_THIS_UPDATE);
        assert_eq!(crl.next_update, Some(CRL_NEXT_UPDATE));
        let der = crl_fixture("crl.pem");
        for len in 0..der.len() {
            assert!(parse_crl(&der[..len]).is_err(), "cut at {len} parsed");
        }
        for i in 0..der.len() {
            let mut mutated = der.clone();
            mutated[i] ^= 0xff;
            let _ = parse_crl(&mutated);
        }
        // A certificate is no CRL, nor a CRL a certificate.
        assert!(parse_crl(&fixture("ca.pem")).is_err());
        assert!(parse(&der).is_err());
    }

    /// The CRLs `openssl ca -gencrl` writes (fuzz/seeds/certificate_parse,
    /// the fuzzer's seeds; fuzz/README.md): v1 without a version, with and
    /// without revoked entries, with CRL extensions, and a nextUpdate past
    /// 2049 (a GeneralizedTime). What `openssl crl -noout -issuer
    /// -lastupdate -nextupdate -nameopt RFC2253` says of each.
    #[test]
    fn crls_openssl_writes_read_as_it_reads_them() {
        let seed = |name: &str| {
            let path = format!(
                "{}/fuzz/seeds/certificate_parse/{name}",
                env!("CARGO_MANIFEST_DIR")
            );
            std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
        };
        for (name, this_update, next_update) in [
            ("crl-puppet.der", CRL_THIS_UPDATE, CRL_NEXT_UPDATE),
            ("crl-v1-empty.der", 1_795_893_251, 1_798_485_251),
            (
                "crl-revoked-entry-extensions.der",
                1_795_893_251,
                1_798_485_251,
            ),
            ("crl-v2-revoked.der", 1_795_893_247, 1_798_485_247),
            (
                "crl-v2-revoked-generalized.der",
                1_795_893_247,
                2_659_893_247,
            ),
        ] {
            let crl = parse_crl(&seed(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(
                crl,
                RevocationList {
                    issuer: CRL_ISSUER.to_string(),
                    this_update,
                    next_update: Some(next_update),
                },
                "{name}"
            );
        }
    }

    #[test]
    fn lengths_and_times_are_checked() {
        // A length of four octets pointing far past the end.
        assert!(parse(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(parse(&[0x30, 0x80, 0x00, 0x00]).is_err());
        assert!(parse(&[]).is_err());
        assert_eq!(time(UTC_TIME, b"700101000000Z"), Ok(0));
        assert_eq!(time(UTC_TIME, b"491231235959Z"), Ok(2_524_607_999));
        assert_eq!(time(GENERALIZED_TIME, b"20000229120000Z"), Ok(951_825_600));
        assert!(time(UTC_TIME, b"701301000000Z").is_err());
        assert!(time(UTC_TIME, b"7001010000+0Z").is_err());
        assert!(time(GENERALIZED_TIME, b"20000229120000+0100").is_err());
        assert_eq!(dotted(&[0x55, 0x04, 0x03]).as_deref(), Some("2.5.4.3"));
        assert_eq!(
            dotted(&[0x2b, 0x06, 0x01, 0x04, 0x01, 0x81, 0xe6, 0x1b]).as_deref(),
            Some("1.3.6.1.4.1.29467")
        );
        assert_eq!(dotted(&[0x55, 0x84]), None);
    }

    #[test]
    fn values_are_escaped_and_names_bounded() {
        let mut out = String::new();
        escape_value(" #a,b+c\u{1b} ", &mut out);
        assert_eq!(out, "\\ #a\\,b\\+c\\1B\\ ");
        let long = "x".repeat(4 * MAX_NAME_LEN);
        // SEQUENCE { SET { SEQUENCE { OID CN, UTF8String long } } }
        let utf8 = [
            &[0x0c, 0x82][..],
            &(long.len() as u16).to_be_bytes(),
            long.as_bytes(),
        ]
        .concat();
        let attr = [&[0x06, 0x03, 0x55, 0x04, 0x03][..], &utf8].concat();
        let seq = [&[0x30, 0x82][..], &(attr.len() as u16).to_be_bytes(), &attr].concat();
        let set = [&[0x31, 0x82][..], &(seq.len() as u16).to_be_bytes(), &seq].concat();
        assert!(name(&set).unwrap().len() <= MAX_NAME_LEN);
    }
}
