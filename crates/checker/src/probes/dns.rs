//! The dns probe: one query, its answer compared with the expected values
//! ([`answer`] for the forms compared).
//!
//! Up when the query is answered NOERROR with at least one record of the
//! queried type and every expected value is among them. `latency_ms` is the
//! query's time, including the follow-up queries of a CNAME chain.
//!
//! Whom it asks:
//! - a check that names a server (`ip` or `ip:port`) asks that server only,
//!   and the server's address passes the same rule as http targets
//!   ([`AddressPolicy::check_ip`]): a user must not make checkers probe the
//!   deployment's own network. Its resolver is built for the check (cheap:
//!   no connection until the query) and dropped after it.
//! - otherwise the tenant resolvers (`checker.dns.tenant_resolvers`) when
//!   the operator names some, else the system resolver (`/etc/resolv.conf`),
//!   built once. Either is the deployment's own, so it is not screened.
//!
//! Either way the resolver may ask the *same* server again for a CNAME's
//! target (as any stub resolver does), never another one. Nothing answered
//! is connected to, but answers are read back to the monitor's owner, so
//! while private targets are refused what a check reports of them follows
//! [`screen`]: no non-public address in an answer or a message, and nothing
//! of what the system resolver (which knows the cluster's internal names)
//! answered beyond the verdict. Names are asked as written and fully
//! qualified: no search domains, no hosts file. Nothing is cached: a
//! monitoring check must ask every time.

mod answer;
mod screen;

use crate::address::AddressPolicy;
use crate::report::{millis, CheckReport};
use crate::settings::{parse_server, DnsSection};
use answer::Value;
use hickory_resolver::config::{NameServerConfigGroup, ResolveHosts, ResolverConfig, ResolverOpts};
use hickory_resolver::lookup::Lookup;
use hickory_resolver::name_server::TokioConnectionProvider;
use hickory_resolver::proto::op::ResponseCode;
use hickory_resolver::proto::rr::{RData, RecordType};
use hickory_resolver::proto::ProtoErrorKind;
use hickory_resolver::{Name, ResolveError, TokioResolver};
use screen::Screen;
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};
use uptime_contracts::{CheckSpec, DnsRecordType};

pub struct DnsProbe {
    policy: AddressPolicy,
    /// The resolver of checks without a server, or why there is none (no
    /// readable `/etc/resolv.conf`): those checks then fail saying so.
    shared: Result<Shared, String>,
}

/// The resolver of checks without a server.
struct Shared {
    resolver: TokioResolver,
    /// It is the system's, which knows the deployment's internal names (a
    /// tenant resolver is one that does not).
    internal: bool,
}

impl DnsProbe {
    /// Asks the tenant resolvers `settings` name, else the system's, whose
    /// configuration is read once, now.
    pub fn new(policy: AddressPolicy, settings: &DnsSection) -> Self {
        Self::choosing(policy, &settings.tenant_resolvers, || {
            hickory_resolver::system_conf::read_system_conf()
                .map_err(|e| format!("reading the system resolver configuration: {e}"))
        })
    }

    /// A probe whose system resolver asks `config`'s servers instead of
    /// `/etc/resolv.conf`'s (tests).
    pub fn with_system_config(
        policy: AddressPolicy,
        config: ResolverConfig,
        options: ResolverOpts,
        tenant_resolvers: &[SocketAddr],
    ) -> Self {
        Self::choosing(policy, tenant_resolvers, || Ok((config, options)))
    }

    fn choosing(
        policy: AddressPolicy,
        tenant_resolvers: &[SocketAddr],
        system: impl FnOnce() -> Result<(ResolverConfig, ResolverOpts), String>,
    ) -> Self {
        if !tenant_resolvers.is_empty() {
            let shared = Shared {
                resolver: tenant_resolver(tenant_resolvers),
                internal: false,
            };
            return Self {
                policy,
                shared: Ok(shared),
            };
        }
        let shared = system().map(|(config, options)| Shared {
            resolver: build_resolver(config, options, None),
            internal: true,
        });
        match &shared {
            Err(e) => tracing::warn!(error = %e, "dns checks without a server will fail"),
            // Its answers are screened and withheld, but a tenant's check
            // still tells an internal name that exists from one that does not.
            Ok(_) if !policy.guard().allows_private() => tracing::warn!(
                "dns checks without a server ask the checker's own resolver, which \
                 answers for the deployment's internal names; name public resolvers in \
                 checker.dns.tenant_resolvers"
            ),
            Ok(_) => {}
        }
        Self { policy, shared }
    }

    /// Runs the check; every problem is a failed check with its reason.
    pub async fn check(&self, spec: &CheckSpec) -> CheckReport {
        let query = spec.options.dns.clone().unwrap_or_default();
        let record_type = query.record_type;
        let target = spec.target.trim();
        if target.is_empty() {
            return CheckReport::failed("the dns check has no name to query");
        }
        let name = match Name::from_utf8(target) {
            Ok(mut name) => {
                // Asked as written: no search domains.
                name.set_fqdn(true);
                name
            }
            Err(e) => return CheckReport::failed(format!("{target:?} is not a DNS name: {e}")),
        };
        let expected = match answer::parse_expected(record_type, &query.expected) {
            Ok(expected) => expected,
            Err(e) => return CheckReport::failed(e.to_string()),
        };
        let timeout = Duration::from_secs(u64::from(spec.timeout_secs.get()));
        let (resolver, internal) = match &query.server {
            Some(server) => match self.server_resolver(server, timeout) {
                Ok(resolver) => (resolver, false),
                Err(reason) => return CheckReport::failed(reason),
            },
            None => match &self.shared {
                Ok(shared) => (shared.resolver.clone(), shared.internal),
                Err(reason) => return CheckReport::failed(reason.clone()),
            },
        };

        let asked = Asked {
            record_type,
            target,
            name: &name,
            timeout,
            screen: Screen::new(&self.policy, internal),
        };
        let started = Instant::now();
        let outcome = tokio::time::timeout(
            timeout,
            resolver.lookup(name.clone(), wire_type(record_type)),
        )
        .await;
        let latency_ms = millis(started.elapsed());
        let lookup = match outcome {
            Err(_elapsed) => return CheckReport::failed(asked.timed_out()),
            Ok(Err(e)) => return asked.failure(&e, latency_ms),
            Ok(Ok(lookup)) => lookup,
        };
        let seen = values_of(&lookup, wire_type(record_type));
        if seen.is_empty() {
            return answered_but_failed(asked.no_records(&name), latency_ms);
        }
        // Before any comparison: an expected value must not tell a tenant
        // whether a refused address is in the answer.
        if let Some(refusal) = asked
            .screen
            .refused_answer(target, seen.iter().filter_map(Value::address))
        {
            return answered_but_failed(refusal, latency_ms);
        }
        match answer::compare(record_type, target, &expected, &seen, &asked.screen) {
            Ok(()) => CheckReport::passed(latency_ms),
            Err(reason) => answered_but_failed(reason, latency_ms),
        }
    }

    /// A resolver asking `server` only, if the policy lets checks reach it.
    fn server_resolver(&self, server: &str, timeout: Duration) -> Result<TokioResolver, String> {
        let addr = parse_server(server)?;
        self.policy
            .check_ip(addr.ip())
            .map_err(|e| format!("dns server refused: {e}"))?;
        let config = ResolverConfig::from_parts(
            None,
            vec![],
            // UDP, and TCP when an answer is truncated.
            NameServerConfigGroup::from_ips_clear(&[addr.ip()], addr.port(), true),
        );
        let mut options = ResolverOpts::default();
        // One try within the check's timeout: a retry would outlive it.
        options.attempts = 1;
        Ok(build_resolver(config, options, Some(timeout)))
    }
}

/// A resolver asking the operator's tenant resolvers (trusted: not screened).
fn tenant_resolver(servers: &[SocketAddr]) -> TokioResolver {
    let mut group = NameServerConfigGroup::with_capacity(servers.len() * 2);
    for server in servers {
        // UDP, and TCP when an answer is truncated.
        group.merge(NameServerConfigGroup::from_ips_clear(
            &[server.ip()],
            server.port(),
            true,
        ));
    }
    let config = ResolverConfig::from_parts(None, vec![], group);
    build_resolver(config, ResolverOpts::default(), None)
}

/// A resolver that never answers from a cache, nor from the hosts file.
fn build_resolver(
    config: ResolverConfig,
    mut options: ResolverOpts,
    timeout: Option<Duration>,
) -> TokioResolver {
    options.cache_size = 0;
    // Belt and braces: should anything still be stored, it is stale at once.
    options.positive_max_ttl = Some(Duration::ZERO);
    options.negative_max_ttl = Some(Duration::ZERO);
    options.use_hosts_file = ResolveHosts::Never;
    // The chain's CNAME records are dropped by type anyway; keeping them
    // costs nothing and keeps the lookup whole for debugging.
    options.preserve_intermediates = true;
    if let Some(timeout) = timeout {
        options.timeout = timeout;
    }
    TokioResolver::builder_with_config(config, TokioConnectionProvider::default())
        .with_options(options)
        .build()
}

fn wire_type(record_type: DnsRecordType) -> RecordType {
    match record_type {
        DnsRecordType::A => RecordType::A,
        DnsRecordType::Aaaa => RecordType::AAAA,
        DnsRecordType::Cname => RecordType::CNAME,
        DnsRecordType::Mx => RecordType::MX,
        DnsRecordType::Txt => RecordType::TXT,
        DnsRecordType::Ns => RecordType::NS,
    }
}

/// The values of the answer's records of the queried type (a CNAME chain's
/// records and glue are not the answer).
fn values_of(lookup: &Lookup, wanted: RecordType) -> Vec<Value> {
    lookup
        .records()
        .iter()
        .filter(|record| record.record_type() == wanted)
        .filter_map(|record| match record.data() {
            RData::A(a) => Some(Value::Addr(IpAddr::V4(a.0))),
            RData::AAAA(aaaa) => Some(Value::Addr(IpAddr::V6(aaaa.0))),
            RData::CNAME(cname) => Some(Value::Name(wire_name(&cname.0))),
            RData::NS(ns) => Some(Value::Name(wire_name(&ns.0))),
            RData::MX(mx) => Some(Value::Mx {
                preference: mx.preference(),
                exchange: wire_name(mx.exchange()),
            }),
            RData::TXT(txt) => {
                let joined: Vec<u8> = txt
                    .txt_data()
                    .iter()
                    .flat_map(|s| s.iter())
                    .copied()
                    .collect();
                Some(Value::Txt(String::from_utf8_lossy(&joined).into_owned()))
            }
            _ => None,
        })
        .collect()
}

fn wire_name(name: &Name) -> String {
    answer::normalise_name(&name.to_ascii())
}

/// A failed check whose query was answered: its time is known.
fn answered_but_failed(reason: String, latency_ms: u32) -> CheckReport {
    CheckReport {
        latency_ms: Some(latency_ms),
        ..CheckReport::failed(reason)
    }
}

/// What a check asked, to word its failures.
struct Asked<'a> {
    record_type: DnsRecordType,
    /// As the user wrote it.
    target: &'a str,
    name: &'a Name,
    timeout: Duration,
    /// What may be told of the answer.
    screen: Screen<'a>,
}

impl Asked<'_> {
    fn timed_out(&self) -> String {
        format!(
            "the {} query for {} timed out after {} s",
            self.record_type.as_str(),
            self.target,
            self.timeout.as_secs()
        )
    }

    /// The target, and the name actually answered about when that is a
    /// CNAME's target (and may be told).
    fn subject(&self, answered: &Name) -> String {
        if answered == self.name || answered.is_root() {
            self.target.to_string()
        } else if self.screen.withholds() {
            format!("{} (via CNAME)", self.target)
        } else {
            format!(
                "{} (via CNAME, {})",
                self.target,
                self.screen
                    .redact(&answer::normalise_name(&answered.to_ascii()))
            )
        }
    }

    fn no_records(&self, answered: &Name) -> String {
        format!(
            "{} has no {} records (NOERROR, empty answer)",
            self.subject(answered),
            self.record_type.as_str()
        )
    }

    fn failure(&self, error: &ResolveError, latency_ms: u32) -> CheckReport {
        let Some(proto) = error.proto() else {
            return CheckReport::failed(self.failed_with(error));
        };
        match proto.kind() {
            ProtoErrorKind::NoRecordsFound {
                query,
                response_code,
                ..
            } => {
                let subject = self.subject(query.name());
                let reason = match *response_code {
                    ResponseCode::NXDomain => format!("{subject} does not exist (NXDOMAIN)"),
                    ResponseCode::NoError => self.no_records(query.name()),
                    code => format!(
                        "the {} query for {subject} failed: the server answered {}",
                        self.record_type.as_str(),
                        rcode_name(code)
                    ),
                };
                answered_but_failed(reason, latency_ms)
            }
            ProtoErrorKind::Timeout => CheckReport::failed(self.timed_out()),
            _ => CheckReport::failed(self.failed_with(error)),
        }
    }

    fn failed_with(&self, error: &ResolveError) -> String {
        // The resolver's words may hold an address (the cluster resolver's
        // own, say).
        format!(
            "the {} query for {} failed: {}",
            self.record_type.as_str(),
            self.target,
            self.screen.redact(&error.to_string())
        )
    }
}

/// A response code as dig and RFCs write it.
fn rcode_name(code: ResponseCode) -> String {
    match code {
        ResponseCode::ServFail => "SERVFAIL".into(),
        ResponseCode::Refused => "REFUSED".into(),
        ResponseCode::FormErr => "FORMERR".into(),
        ResponseCode::NotImp => "NOTIMP".into(),
        ResponseCode::NotAuth => "NOTAUTH".into(),
        ResponseCode::NotZone => "NOTZONE".into(),
        ResponseCode::YXDomain => "YXDOMAIN".into(),
        ResponseCode::YXRRSet => "YXRRSET".into(),
        ResponseCode::NXRRSet => "NXRRSET".into(),
        code => format!("response code {}", u16::from(code)),
    }
}

#[cfg(test)]
mod tests;
