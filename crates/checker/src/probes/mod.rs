//! One probe per monitor kind, and the dispatch from a due check's kind to
//! its probe. Every probe applies the same address-safety rule
//! ([`crate::address`]) to every address it would reach, after resolution,
//! and never fails: every problem is a failed check with its reason.
//!
//! - http, keyword: [`crate::http_check`];
//! - tcp: [`tcp`], a connection to `host:port`;
//! - tls: [`tls`], a handshake with a valid certificate for the name;
//! - dns: [`dns`], a query, its answer compared with the expected values;
//! - icmp: [`icmp`], echo requests over an unprivileged ICMP socket.

pub mod dns;
pub mod icmp;
pub mod tcp;
pub mod tls;

use crate::http_check::HttpChecker;
use crate::report::CheckReport;
use uptime_contracts::{CheckSpecV2, MonitorKind};

/// Every probe, built once per process and shared by all check tasks.
pub struct Probes {
    pub http: HttpChecker,
    pub tcp: tcp::TcpProbe,
    pub tls: tls::TlsProbe,
    pub dns: dns::DnsProbe,
    pub icmp: icmp::IcmpProbe,
}

impl Probes {
    /// Runs the check `spec` describes with the probe of its kind.
    pub async fn check(&self, spec: &CheckSpecV2) -> CheckReport {
        match spec.kind {
            MonitorKind::Http | MonitorKind::Keyword => self.http.check(spec).await,
            MonitorKind::Tcp => self.tcp.check(spec).await,
            MonitorKind::Tls => self.tls.check(spec).await,
            MonitorKind::Dns => self.dns.check(spec).await,
            MonitorKind::Icmp => self.icmp.check(spec).await,
            // The worker dead-letters these before they get here.
            MonitorKind::Heartbeat => {
                CheckReport::failed("heartbeat monitors have no check to run")
            }
        }
    }
}
