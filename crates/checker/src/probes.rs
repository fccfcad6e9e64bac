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
pub mod endpoint;
pub mod icmp;
pub mod tcp;
pub mod tls;

use crate::address::AddressPolicy;
use crate::http_check::{HttpChecker, HttpCheckerOptions};
use crate::report::CheckReport;
use crate::settings::CheckerSettings;
use crate::CheckerError;
use uptime_contracts::{CheckSpec, MonitorKind};

/// Every probe, built once per process and shared by all check tasks.
pub struct Probes {
    pub http: HttpChecker,
    pub tcp: tcp::TcpProbe,
    pub tls: tls::TlsProbe,
    pub dns: dns::DnsProbe,
    pub icmp: icmp::IcmpProbe,
}

impl Probes {
    /// Every probe, as `settings` configure them: one address policy for
    /// all, and the extra root CAs for https and tls.
    pub fn from_settings(settings: &CheckerSettings) -> Result<Self, CheckerError> {
        let section = &settings.checker;
        let extra_root_ca_pem = match &section.extra_root_ca_pem {
            None => None,
            Some(path) => Some(
                std::fs::read(path).map_err(|source| CheckerError::RootCaFile {
                    path: path.display().to_string(),
                    source,
                })?,
            ),
        };
        let policy = AddressPolicy::new(
            settings.safety.allow_private_targets,
            section.private_allowlist.clone(),
        );
        let http = HttpChecker::new(
            policy.clone(),
            HttpCheckerOptions {
                user_agent: crate::region::user_agent(&section.user_agent, &section.region),
                extra_root_ca_pem: extra_root_ca_pem.clone(),
                max_body_bytes: section.max_body_bytes.max(1),
            },
        )?;
        Ok(Self {
            http,
            tcp: tcp::TcpProbe::new(policy.clone()),
            tls: tls::TlsProbe::new(policy.clone(), extra_root_ca_pem.as_deref()),
            dns: dns::DnsProbe::new(policy.clone(), &section.dns),
            icmp: icmp::IcmpProbe::new(policy),
        })
    }

    /// Runs the check `spec` describes with the probe of its kind;
    /// `password`: its basic auth's, opened.
    pub async fn check(&self, spec: &CheckSpec, password: Option<&str>) -> CheckReport {
        match spec.kind {
            MonitorKind::Http | MonitorKind::Keyword => self.http.check(spec, password).await,
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
