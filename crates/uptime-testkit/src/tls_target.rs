//! A bare TLS server on loopback for tls checks: it completes handshakes
//! with a certificate the test chooses (names, validity period), then waits
//! for the client to close. It serves nothing over the connection.
//!
//! The leaf is signed by a CA generated for this server alone, valid from a
//! year ago to a year ahead; a client trusts it with [`TlsTarget::ca_pem`].
//! The server counts the connections it accepts and the handshakes that
//! succeed, so tests can tell a refused target was never contacted.

use chrono::{DateTime, DurationRound, Utc};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose, SanType,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

/// The leaf certificate a [`TlsTarget`] presents.
#[derive(Debug, Clone)]
pub struct LeafOptions {
    /// DNS names in the subjectAltName.
    pub dns_names: Vec<String>,
    /// IP addresses in the subjectAltName.
    pub ip_addresses: Vec<IpAddr>,
    pub not_before: DateTime<Utc>,
    /// X.509 keeps whole seconds; sub-second parts are dropped.
    pub not_after: DateTime<Utc>,
}

impl LeafOptions {
    /// Valid for `localhost` and `127.0.0.1`, from a day ago to `not_after`.
    pub fn expiring_at(not_after: DateTime<Utc>) -> Self {
        Self {
            dns_names: vec!["localhost".into()],
            ip_addresses: vec![IpAddr::V4(Ipv4Addr::LOCALHOST)],
            not_before: Utc::now() - chrono::Duration::days(1),
            not_after,
        }
    }

    /// Valid for `localhost` and `127.0.0.1` for 90 days more.
    pub fn valid() -> Self {
        Self::expiring_at(Utc::now() + chrono::Duration::days(90))
    }
}

struct Counters {
    connections: AtomicU64,
    handshakes: AtomicU64,
}

/// A running TLS server on 127.0.0.1; it stops (with its connections) when
/// dropped.
pub struct TlsTarget {
    addr: SocketAddr,
    ca_pem: String,
    leaf_der: Vec<u8>,
    not_after: DateTime<Utc>,
    counters: Arc<Counters>,
    server: tokio::task::JoinHandle<()>,
}

impl TlsTarget {
    /// A server presenting [`LeafOptions::valid`].
    pub async fn start_valid() -> Self {
        Self::start(LeafOptions::valid()).await
    }

    pub async fn start(leaf: LeafOptions) -> Self {
        let (config, ca_pem, leaf_der, not_after) = server_config(&leaf);
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("bind TLS target on 127.0.0.1");
        let addr = listener.local_addr().expect("TLS target address");
        let counters = Arc::new(Counters {
            connections: AtomicU64::new(0),
            handshakes: AtomicU64::new(0),
        });
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let server = tokio::spawn(accept_loop(listener, acceptor, counters.clone()));
        Self {
            addr,
            ca_pem,
            leaf_der,
            not_after,
            counters,
            server,
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `127.0.0.1:PORT`.
    pub fn host_port(&self) -> String {
        self.addr.to_string()
    }

    /// `host:PORT` for another host name, e.g. `localhost`.
    pub fn host_port_with(&self, host: &str) -> String {
        format!("{host}:{}", self.addr.port())
    }

    /// The PEM of the CA that signed the leaf.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The leaf certificate, DER.
    pub fn leaf_der(&self) -> &[u8] {
        &self.leaf_der
    }

    /// The leaf's `notAfter`, to the second.
    pub fn not_after(&self) -> DateTime<Utc> {
        self.not_after
    }

    /// TCP connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.counters.connections.load(Ordering::SeqCst)
    }

    /// Handshakes completed so far.
    pub fn handshakes(&self) -> u64 {
        self.counters.handshakes.load(Ordering::SeqCst)
    }
}

impl Drop for TlsTarget {
    fn drop(&mut self) {
        // Aborting the accept loop drops its JoinSet, which aborts every connection.
        self.server.abort();
    }
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    counters: Arc<Counters>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                counters.connections.fetch_add(1, Ordering::SeqCst);
                let acceptor = acceptor.clone();
                let counters = counters.clone();
                connections.spawn(async move {
                    // A client that refuses the certificate ends here.
                    let Ok(mut tls) = acceptor.accept(stream).await else { return };
                    counters.handshakes.fetch_add(1, Ordering::SeqCst);
                    // Until the client closes; whatever it sends is dropped.
                    let mut sink = [0u8; 1024];
                    while matches!(tls.read(&mut sink).await, Ok(n) if n > 0) {}
                });
            }
            // Reap finished connections so the set does not grow without bound.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

fn to_time(t: DateTime<Utc>) -> time::OffsetDateTime {
    time::OffsetDateTime::from_unix_timestamp(t.timestamp()).expect("timestamp in range")
}

/// A fresh CA, a leaf as `leaf` says signed by it, and the server config:
/// (config, CA PEM, leaf DER, leaf notAfter).
pub(crate) fn server_config(
    leaf: &LeafOptions,
) -> (rustls::ServerConfig, String, Vec<u8>, DateTime<Utc>) {
    let not_after = leaf
        .not_after
        .duration_trunc(chrono::Duration::seconds(1))
        .expect("truncate to seconds");

    let ca_key = KeyPair::generate().expect("CA key");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "uptime-testkit TLS target CA");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    ca_params.not_before = to_time(Utc::now() - chrono::Duration::days(365));
    // Outlives the leaf, however far ahead the test put its expiry.
    ca_params.not_after = to_time(not_after.max(Utc::now()) + chrono::Duration::days(365));
    let ca_cert = ca_params.self_signed(&ca_key).expect("self-sign CA");

    let leaf_key = KeyPair::generate().expect("leaf key");
    let mut params = CertificateParams::new(leaf.dns_names.clone()).expect("leaf params");
    for ip in &leaf.ip_addresses {
        params.subject_alt_names.push(SanType::IpAddress(*ip));
    }
    params.distinguished_name.push(
        DnType::CommonName,
        leaf.dns_names
            .first()
            .cloned()
            .unwrap_or_else(|| "uptime-testkit TLS target".into()),
    );
    params.is_ca = IsCa::NoCa;
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.not_before = to_time(leaf.not_before);
    params.not_after = to_time(not_after);
    let leaf_cert = params
        .signed_by(&leaf_key, &ca_cert, &ca_key)
        .expect("sign leaf");

    let chain: Vec<CertificateDer<'static>> = vec![leaf_cert.der().clone(), ca_cert.der().clone()];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .expect("server certificate");
    (config, ca_cert.pem(), leaf_cert.der().to_vec(), not_after)
}
