//! The tcp probe: can a connection to `host:port` be opened?
//!
//! - The target is `host:port`: a name, an IPv4 address or a bracketed IPv6
//!   address (`[2001:db8::1]:443`), and a port.
//! - Up when a TCP connection is established within `timeout_secs`; it is
//!   then closed without a byte sent.
//! - A name's addresses (all of them allowed by the address rule, see
//!   [`super::endpoint`]) are tried in the resolver's order until one accepts.
//! - `latency_ms` is the connect time: from the first connection attempt to
//!   the established connection (name resolution excluded). The whole check,
//!   resolution included, must finish within `timeout_secs`.

use super::endpoint::{self, timed_out, Endpoint, Unreachable};
use crate::address::AddressPolicy;
use crate::report::{millis, CheckReport};
use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::net::TcpStream;
use uptime_contracts::CheckSpec;

pub struct TcpProbe {
    policy: AddressPolicy,
}

impl TcpProbe {
    pub fn new(policy: AddressPolicy) -> Self {
        Self { policy }
    }

    /// Runs one check. Never fails: every problem is a failed check with its reason.
    pub async fn check(&self, spec: &CheckSpec) -> CheckReport {
        let endpoint = match endpoint::parse_host_port(&spec.target, None) {
            Ok(endpoint) => endpoint,
            Err(e) => return CheckReport::failed(e.to_string()),
        };
        let timeout_secs = spec.timeout_secs.get();
        let timeout = Duration::from_secs(u64::from(timeout_secs));
        match tokio::time::timeout(timeout, connect(&self.policy, &endpoint)).await {
            Err(_elapsed) => CheckReport::failed(timed_out(timeout_secs)),
            Ok(Err(e)) => CheckReport::failed(e.to_string()),
            // Dropping the stream closes the connection.
            Ok(Ok(connected)) => CheckReport::passed(millis(connected.connect_time)),
        }
    }
}

/// An established connection and how long establishing it took.
pub(crate) struct Connected {
    pub stream: TcpStream,
    pub connect_time: Duration,
}

/// Why no connection was established.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnectError {
    #[error(transparent)]
    Unreachable(#[from] Unreachable),
    #[error("{}", describe_io(.0))]
    Io(io::Error),
}

/// Resolves `endpoint` under `policy` and connects to the first of its
/// allowed addresses that accepts. No timeout of its own: callers bound it.
pub(crate) async fn connect(
    policy: &AddressPolicy,
    endpoint: &Endpoint,
) -> Result<Connected, ConnectError> {
    let addrs = endpoint::resolve(policy, &endpoint.host, endpoint.port).await?;
    let started = Instant::now();
    let stream = connect_any(&addrs).await?;
    Ok(Connected {
        stream,
        connect_time: started.elapsed(),
    })
}

/// The first of `addrs` that accepts; else the first address's error (the
/// resolver's preferred address, the likeliest to explain the failure).
async fn connect_any(addrs: &[SocketAddr]) -> Result<TcpStream, ConnectError> {
    let mut first_error = None;
    for addr in addrs {
        match TcpStream::connect(addr).await {
            Ok(stream) => return Ok(stream),
            Err(e) => {
                tracing::debug!(address = %addr, error = %e, "tcp connect failed");
                first_error.get_or_insert(e);
            }
        }
    }
    Err(ConnectError::Io(first_error.unwrap_or_else(|| {
        io::Error::new(io::ErrorKind::NotFound, "no address to connect to")
    })))
}

/// A failed connection in words a monitor's owner understands.
pub(crate) fn describe_io(error: &io::Error) -> String {
    use io::ErrorKind::*;
    match error.kind() {
        ConnectionRefused => "connection refused".into(),
        ConnectionReset => "connection reset by the target".into(),
        ConnectionAborted => "connection aborted".into(),
        UnexpectedEof => "connection closed by the target".into(),
        HostUnreachable => "host unreachable".into(),
        NetworkUnreachable => "network unreachable".into(),
        TimedOut => "connection timed out".into(),
        _ => format!("connection failed: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_read_like_the_http_checks() {
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(describe_io(&refused), "connection refused");
        let other = io::Error::other("boom");
        assert_eq!(describe_io(&other), "connection failed: boom");
    }

    #[tokio::test]
    async fn a_refused_address_is_never_connected_to() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let strict = AddressPolicy::new(false, vec![]);
        let endpoint = endpoint::parse_host_port(&format!("127.0.0.1:{port}"), None).unwrap();
        let err = connect(&strict, &endpoint).await.err().expect("refused");
        assert_eq!(err.to_string(), "target address 127.0.0.1 is loopback");
        // Nothing reached the listener: a connection made before `connect`
        // returned would be waiting in its backlog, and accepted at once.
        use futures::FutureExt;
        assert!(
            listener.accept().now_or_never().is_none(),
            "a connection arrived"
        );
    }
}
