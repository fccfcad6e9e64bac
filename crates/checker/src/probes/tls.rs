//! The tls probe: does `host:port` complete a TLS handshake with a valid
//! certificate for the name?
//!
//! - The target is `host:port`, `host` (port 443) or an `https://` URL (port
//!   443 unless given; the path is ignored). Its addresses obey the address
//!   rule like every check's (see [`super::endpoint`]).
//! - Up when the handshake succeeds: the chain leads to a trusted root (the
//!   public webpki roots, as for http checks, plus the checker's
//!   `extra_root_ca_pem`), the certificate is valid for the name (or the IP
//!   address) and neither it nor the chain has expired or is not yet valid.
//! - With a pinned `fingerprint_sha256` (SHA-256 of the leaf's DER, hex),
//!   any other leaf certificate fails the check, however valid.
//! - `ssl_expires_at` is the leaf's `notAfter` (whenever the handshake
//!   succeeded), from which the recorder raises `ssl.expiring`.
//! - `latency_ms` is connect plus handshake (name resolution excluded); the
//!   whole check must finish within `timeout_secs`.
//! - Every check makes a full handshake: session resumption is off, or a
//!   resumed session would skip the very certificate checks monitored here.
//!   Nothing is sent after the handshake but `close_notify`.

use super::endpoint::{self, timed_out, Endpoint};
use super::tcp::{self as tcp_probe, describe_io};
use crate::address::AddressPolicy;
use crate::http_check::certificate_not_after;
use crate::report::{millis, CheckReport};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{CertificateError, ClientConfig, RootCertStore};
use sha2::{Digest, Sha256};
use std::io;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio_rustls::TlsConnector;
use uptime_contracts::CheckSpec;
use url::Host;

/// How long the polite `close_notify` may take after the verdict.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

pub struct TlsProbe {
    policy: AddressPolicy,
    connector: TlsConnector,
}

impl TlsProbe {
    /// `extra_root_ca_pem`: PEM certificates trusted besides the public
    /// roots. The http client refuses to start on a file without any
    /// certificate, so a certificate only rustls cannot use is logged and
    /// skipped rather than failing a second time here.
    pub fn new(policy: AddressPolicy, extra_root_ca_pem: Option<&[u8]>) -> Self {
        let mut roots = RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        for certificate in extra_root_ca_pem
            .map(CertificateDer::pem_slice_iter)
            .into_iter()
            .flatten()
        {
            let added = certificate
                .map_err(|e| e.to_string())
                .and_then(|c| roots.add(c).map_err(|e| e.to_string()));
            if let Err(error) = added {
                tracing::warn!(%error, "skipped an extra root CA certificate");
            }
        }
        let mut config =
            ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                // ring provides every default protocol version: cannot fail.
                .expect("the ring provider supports the default TLS versions")
                .with_root_certificates(roots)
                .with_no_client_auth();
        config.resumption = rustls::client::Resumption::disabled();
        Self {
            policy,
            connector: TlsConnector::from(Arc::new(config)),
        }
    }

    /// Runs one check. Never fails: every problem is a failed check with its reason.
    pub async fn check(&self, spec: &CheckSpec) -> CheckReport {
        let endpoint = match endpoint::parse_https_or_host_port(&spec.target) {
            Ok(endpoint) => endpoint,
            Err(e) => return CheckReport::failed(e.to_string()),
        };
        let pinned = spec
            .options
            .tls
            .as_ref()
            .and_then(|tls| tls.fingerprint_sha256.as_deref());
        let pinned = match pinned.map(parse_fingerprint).transpose() {
            Ok(pinned) => pinned,
            Err(e) => return CheckReport::failed(e),
        };
        let server_name = match server_name(&endpoint.host) {
            Ok(name) => name,
            Err(e) => return CheckReport::failed(e),
        };
        let timeout_secs = spec.timeout_secs.get();
        let timeout = Duration::from_secs(u64::from(timeout_secs));
        let handshake = self.handshake(&endpoint, server_name);
        let (mut stream, latency, leaf) = match tokio::time::timeout(timeout, handshake).await {
            Err(_elapsed) => return CheckReport::failed(timed_out(timeout_secs)),
            Ok(Err(e)) => return CheckReport::failed(e),
            Ok(Ok(done)) => done,
        };
        let report = judge(&leaf, pinned.as_deref(), latency);
        // After the verdict, and bounded, so a peer that never reads cannot
        // turn a pass into a timeout.
        let _ = tokio::time::timeout(CLOSE_GRACE, stream.shutdown()).await;
        report
    }

    /// Connects and completes a handshake: the stream, connect plus
    /// handshake time, and the leaf certificate.
    async fn handshake(
        &self,
        endpoint: &Endpoint,
        server_name: ServerName<'static>,
    ) -> Result<(TlsStream, Duration, CertificateDer<'static>), String> {
        let connected = tcp_probe::connect(&self.policy, endpoint)
            .await
            .map_err(|e| e.to_string())?;
        let handshake_started = Instant::now();
        let stream = self
            .connector
            .connect(server_name, connected.stream)
            .await
            .map_err(|e| describe_handshake(&e))?;
        let latency = connected.connect_time + handshake_started.elapsed();
        let leaf = stream
            .get_ref()
            .1
            .peer_certificates()
            .and_then(|chain| chain.first())
            .cloned()
            .ok_or_else(|| "TLS handshake failed: the target sent no certificate".to_string())?;
        Ok((stream, latency, leaf))
    }
}

type TlsStream = tokio_rustls::client::TlsStream<tokio::net::TcpStream>;

/// The verdict on a completed handshake with `leaf`.
fn judge(leaf: &[u8], pinned: Option<&str>, latency: Duration) -> CheckReport {
    let mut report = CheckReport::passed(millis(latency));
    report.ssl_expires_at = certificate_not_after(leaf);
    if let Some(pinned) = pinned {
        let actual = fingerprint(leaf);
        if actual != pinned {
            report.outcome = uptime_contracts::CheckOutcome::Fail;
            report.error = Some(format!(
                "certificate fingerprint {actual} does not match the pinned fingerprint {pinned}"
            ));
        }
    }
    report
}

/// SHA-256 of a DER certificate, 64 lowercase hex digits.
pub fn fingerprint(der: &[u8]) -> String {
    hex::encode(Sha256::digest(der))
}

/// A pinned fingerprint as compared: 64 hex digits, lower case.
fn parse_fingerprint(pinned: &str) -> Result<String, String> {
    let normalised = pinned.trim().to_ascii_lowercase();
    if normalised.len() == 64 && normalised.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(normalised)
    } else {
        Err(format!(
            "pinned certificate fingerprint {pinned:?} is not a SHA-256 (64 hex digits)"
        ))
    }
}

/// The name the certificate must be valid for: the DNS name (also sent as
/// SNI), or the IP address (checked against the certificate's IP SANs).
fn server_name(host: &Host<String>) -> Result<ServerName<'static>, String> {
    match host {
        Host::Domain(name) => ServerName::try_from(name.clone())
            .map_err(|_| format!("{name:?} is not a valid TLS server name")),
        Host::Ipv4(v4) => Ok(ServerName::IpAddress(IpAddr::V4(*v4).into())),
        Host::Ipv6(v6) => Ok(ServerName::IpAddress(IpAddr::V6(*v6).into())),
    }
}

/// A failed handshake in words a monitor's owner understands.
fn describe_handshake(error: &io::Error) -> String {
    let text = match error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    {
        Some(tls) => describe_tls(tls),
        None => describe_io(error),
    };
    format!("TLS handshake failed: {text}")
}

fn describe_tls(error: &rustls::Error) -> String {
    let at = |time: &rustls::pki_types::UnixTime| {
        i64::try_from(time.as_secs())
            .ok()
            .and_then(|secs| chrono::DateTime::from_timestamp(secs, 0))
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
            .unwrap_or_else(|| format!("{} (UNIX)", time.as_secs()))
    };
    match error {
        rustls::Error::InvalidCertificate(CertificateError::ExpiredContext {
            not_after, ..
        }) => format!("certificate expired at {}", at(not_after)),
        rustls::Error::InvalidCertificate(CertificateError::NotValidYetContext {
            not_before,
            ..
        }) => format!("certificate not valid before {}", at(not_before)),
        rustls::Error::InvalidCertificate(CertificateError::Expired) => {
            "certificate expired".into()
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::pki_types::UnixTime;
    use uptime_contracts::CheckOutcome;

    const PIN: &str = "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9";

    #[test]
    fn fingerprints_are_sha256_in_lowercase_hex() {
        // SHA-256("hello world").
        assert_eq!(fingerprint(b"hello world"), PIN);
    }

    #[test]
    fn pinned_fingerprints_must_be_64_hex_digits() {
        assert_eq!(parse_fingerprint(PIN).as_deref(), Ok(PIN));
        assert_eq!(
            parse_fingerprint(&PIN.to_uppercase()).as_deref(),
            Ok(PIN),
            "compared in lower case"
        );
        for bad in ["", "abc", &PIN[1..], &format!("{}g", &PIN[1..])] {
            let err = parse_fingerprint(bad).unwrap_err();
            assert!(err.contains("is not a SHA-256 (64 hex digits)"), "{err}");
        }
    }

    #[test]
    fn a_pin_fails_any_other_certificate_and_names_both() {
        let latency = Duration::from_millis(12);
        let matching = judge(b"hello world", Some(PIN), latency);
        assert_eq!(matching.outcome, CheckOutcome::Pass);
        assert_eq!(matching.latency_ms, Some(12));

        let other = judge(b"another certificate", Some(PIN), latency);
        assert_eq!(other.outcome, CheckOutcome::Fail);
        let error = other.error.unwrap();
        assert!(
            error.contains(PIN) && error.contains(&fingerprint(b"another certificate")),
            "{error}"
        );
        assert_eq!(
            judge(b"anything", None, latency).outcome,
            CheckOutcome::Pass
        );
    }

    #[test]
    fn server_names_are_dns_names_or_addresses() {
        assert!(matches!(
            server_name(&Host::Domain("example.com".into())),
            Ok(ServerName::DnsName(_))
        ));
        assert!(matches!(
            server_name(&Host::Ipv4("127.0.0.1".parse().unwrap())),
            Ok(ServerName::IpAddress(_))
        ));
    }

    #[test]
    fn expiry_errors_give_the_date() {
        let expired = rustls::Error::InvalidCertificate(CertificateError::ExpiredContext {
            time: UnixTime::since_unix_epoch(Duration::from_secs(1_700_000_000)),
            not_after: UnixTime::since_unix_epoch(Duration::from_secs(1_600_000_000)),
        });
        assert_eq!(
            describe_tls(&expired),
            "certificate expired at 2020-09-13T12:26:40Z"
        );
        let io = io::Error::new(io::ErrorKind::InvalidData, expired);
        assert_eq!(
            describe_handshake(&io),
            "TLS handshake failed: certificate expired at 2020-09-13T12:26:40Z"
        );
        let eof = io::Error::from(io::ErrorKind::UnexpectedEof);
        assert_eq!(
            describe_handshake(&eof),
            "TLS handshake failed: connection closed by the target"
        );
    }
}
