//! The certificate of a `rediss://` instance over time: the one its
//! connection showed, looked at again every `cert_check_interval` by a
//! handshake of its own (Redis shows a renewed certificate to new
//! connections only, and the agent's connection lives long), and whether
//! it ends within `cert_expiry_warning`.

use super::connection;
use crate::config::{RedisAddress, RedisInstance};
use crate::x509::ServerCertificate;
use std::time::{Duration, Instant};
use tracing::{debug, info};

pub struct CertificateWatch {
    name: String,
    seen: Option<ServerCertificate>,
    checked: Option<Instant>,
    every: Duration,
    warning: Duration,
}

impl CertificateWatch {
    pub fn new(instance: &RedisInstance) -> Self {
        CertificateWatch {
            name: instance.name.clone(),
            seen: None,
            checked: None,
            every: instance.cert_check_interval,
            warning: instance.cert_expiry_warning,
        }
    }

    /// The instance it watches.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What a new connection's handshake showed.
    pub fn connected(&mut self, name: &str, certificate: Option<ServerCertificate>) {
        if let Some(certificate) = certificate {
            self.see(name, certificate);
        }
    }

    /// Looks again, with a handshake of its own, when `cert_check_interval`
    /// has passed since the last look (TLS instances only). A failed look
    /// keeps what was seen: the poll says why the server cannot be reached.
    pub async fn refresh(&mut self, instance: &RedisInstance) {
        if !matches!(instance.address, RedisAddress::Tls { .. })
            || self.checked.is_some_and(|at| at.elapsed() < self.every)
        {
            return;
        }
        match connection::probe_certificate(instance).await {
            Ok(Some(certificate)) => self.see(&instance.name, certificate),
            Ok(None) => self.checked = Some(Instant::now()),
            Err(e) => {
                debug!(instance = %instance.name, "looking at the TLS certificate again: {e}");
                self.checked = Some(Instant::now());
            }
        }
    }

    fn see(&mut self, name: &str, certificate: ServerCertificate) {
        if self.seen.as_ref() != Some(&certificate) {
            info!(
                instance = %name,
                "the server's TLS certificate: subject {}, issuer {}, notAfter {} (UNIX time)",
                certificate.subject, certificate.issuer, certificate.not_after
            );
        }
        self.seen = Some(certificate);
        self.checked = Some(Instant::now());
    }

    /// The certificate seen last and the seconds from `now` (UNIX seconds)
    /// until its end.
    pub fn certificate(&self, now: u64) -> Option<(ServerCertificate, i64)> {
        let seen = self.seen.as_ref()?;
        Some((seen.clone(), seen.seconds_left(now)))
    }

    /// Whether it ends within `cert_expiry_warning` of `now` (or has
    /// ended); `None` without a certificate.
    pub fn expiring(&self, now: u64) -> Option<bool> {
        let left = self.seen.as_ref()?.seconds_left(now);
        let warning = i64::try_from(self.warning.as_secs()).unwrap_or(i64::MAX);
        Some(left < warning)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TlsFiles;

    fn instance(address: RedisAddress) -> RedisInstance {
        RedisInstance {
            name: "tls".into(),
            address,
            username: None,
            password: None,
            password_file: None,
            server_user: None,
            found_running_as: None,
            timeout: Duration::from_secs(1),
            tls: TlsFiles::default(),
            max_reply_bytes: 1 << 20,
            slowlog_entries: true,
            cert_expiry_warning: Duration::from_secs(1000),
            cert_check_interval: Duration::from_secs(3600),
            client_list: true,
            client_list_interval: Duration::from_secs(60),
            client_list_rows: 50,
            slow_refresh: None,
            key_checks: Default::default(),
            slow_commands: Default::default(),
            acl_log: true,
            acl_burst_refusals: 10,
            acl_burst_window: Duration::from_secs(60),
        }
    }

    #[test]
    fn expiring_within_the_warning_and_not_before() {
        let tcp = instance(RedisAddress::Tcp {
            host: "127.0.0.1".into(),
            port: 1,
        });
        let mut watch = CertificateWatch::new(&tcp);
        assert_eq!(watch.expiring(0), None);
        assert_eq!(watch.certificate(0), None);
        watch.connected(
            "tls",
            Some(ServerCertificate {
                subject: "CN=a".into(),
                issuer: "CN=ca".into(),
                not_after: 10_000,
                puppet_role: None,
            }),
        );
        assert_eq!(watch.expiring(8_999), Some(false));
        assert_eq!(watch.expiring(9_001), Some(true));
        assert_eq!(watch.expiring(20_000), Some(true));
        assert_eq!(watch.certificate(9_500).map(|(_, left)| left), Some(500));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn only_tls_instances_are_looked_at() {
        let tcp = instance(RedisAddress::Tcp {
            host: "127.0.0.1".into(),
            port: 1,
        });
        let mut watch = CertificateWatch::new(&tcp);
        watch.refresh(&tcp).await;
        assert!(watch.checked.is_none());
    }
}
