//! dns monitors: a query for the target's records, answered (with the
//! expected values, if any). Their fields `dns_record_type`, `dns_expected`
//! and `dns_server`, rules and stored form (`CheckOptions::dns`).

use super::stored::{merged, Stored};
use crate::routes::monitors::monitor_type::MonitorType;
use crate::validation::Problems;
use serde::{Deserialize, Serialize};
use uptime_contracts::{CheckOptions, DnsQuery};
use utoipa::ToSchema;

/// Most values in `dns_expected`, and the longest of them.
pub const MAX_DNS_EXPECTED: usize = 20;
pub const MAX_DNS_EXPECTED_CHARS: usize = 255;

mirror! {
    /// The DNS record type a dns check asks for.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
    #[serde(rename_all = "UPPERCASE")]
    pub enum DnsRecordType = uptime_contracts::DnsRecordType {
        A,
        Aaaa,
        Cname,
        Mx,
        Txt,
        Ns,
    }
}

crate::routes::monitors::fields::api_fields! {
    /// The fields of a create request.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    pub struct Create;
    /// The fields of a PATCH.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    pub struct Update;
    /// The fields of a response: the query with its defaults on dns monitors,
    /// `null` on the others.
    #[derive(Debug, Default, Serialize, ToSchema)]
    pub struct Shown;


    /// dns monitors: the record type asked for (default `A`).
    dns_record_type: opt DnsRecordType,
        clear /// `null` resets it to `A`.
        => /// dns monitors: the record type asked for; `null` for other types.
        Option<DnsRecordType>;
    /// dns monitors: values that must all be in the answer, at most 20 of 1
    /// to 255 characters (an address, a name, `10 mail.example.com.` for MX,
    /// a TXT record's text). Default none: any answer passes.
    dns_expected: opt Vec<String> [max_items = 20],
        clear /// Replaces the values; `null` or `[]` removes them.
        => /// dns monitors: the values that must be in the answer (`[]` for none);
        /// `null` for other types.
        Option<Vec<String>>;
    /// dns monitors: the server to ask, `ip`, `ip:port` or `[ipv6]:port`
    /// (port 53 unless given), under the same address rules as targets.
    /// Default: the checker's system resolver.
    dns_server: opt String [min_length = 1, max_length = 64],
        clear /// `null`: the system resolver.
        => /// dns monitors: the server asked; `null`: the system resolver.
        Option<String>;
}

/// The query being validated; `None` is "not set" (the default).
#[derive(Debug, Clone, Default)]
pub(crate) struct Draft {
    pub(crate) dns_record_type: Option<DnsRecordType>,
    pub(crate) dns_expected: Option<Vec<String>>,
    pub(crate) dns_server: Option<String>,
}

impl Draft {
    pub(crate) fn from_create(given: Create) -> Self {
        Self {
            dns_record_type: given.dns_record_type,
            dns_expected: given.dns_expected,
            dns_server: given.dns_server,
        }
    }

    /// The stored query with `patch` applied, for a monitor of `kind`.
    pub(crate) fn merge(kind: MonitorType, stored: &Stored<'_>, patch: Update) -> Self {
        let dns = kind == MonitorType::Dns;
        let stored = stored.options.dns.clone().unwrap_or_default();
        Self {
            dns_record_type: merged(patch.dns_record_type, Some(stored.record_type.into()), dns),
            dns_expected: merged(patch.dns_expected, Some(stored.expected), dns),
            dns_server: merged(patch.dns_server, stored.server, dns),
        }
    }

    /// Refuses each field given for a monitor of another kind.
    pub(crate) fn refuse_on_other_kinds(&self, kind: MonitorType, problems: &mut Problems) {
        if kind == MonitorType::Dns {
            return;
        }
        for (field, set) in [
            ("dns_record_type", self.dns_record_type.is_some()),
            ("dns_expected", self.dns_expected.is_some()),
            ("dns_server", self.dns_server.is_some()),
        ] {
            if set {
                problems.add(field, "is only for dns monitors");
            }
        }
    }

    /// Checks the rules of every field given.
    pub(crate) fn validate(&self, problems: &mut Problems, allow_private: bool) {
        if let Some(expected) = &self.dns_expected {
            if expected.len() > MAX_DNS_EXPECTED {
                problems.add(
                    "dns_expected",
                    format!("must hold at most {MAX_DNS_EXPECTED} values"),
                );
            }
            for (i, value) in expected.iter().enumerate() {
                problems.check_len(&format!("dns_expected[{i}]"), value, MAX_DNS_EXPECTED_CHARS);
            }
        }
        if let Some(server) = &self.dns_server {
            problems.check_dns_server("dns_server", server, allow_private);
        }
    }

    /// Adds the query to `options` as stored, without defaults. Only for
    /// dns monitors, after [`Self::validate`] found nothing.
    pub(crate) fn store(self, options: &mut CheckOptions) {
        let query = DnsQuery {
            record_type: self.dns_record_type.map(Into::into).unwrap_or_default(),
            expected: self.dns_expected.unwrap_or_default(),
            server: self.dns_server,
        };
        options.dns = (query != DnsQuery::default()).then_some(query);
    }
}

/// What a response shows of a stored dns monitor: each field with its
/// default filled in.
pub(crate) fn shown(stored: &Stored<'_>) -> Shown {
    let dns = stored.options.dns.clone().unwrap_or_default();
    Shown {
        dns_record_type: Some(dns.record_type.into()),
        dns_expected: Some(dns.expected),
        dns_server: dns.server,
    }
}

/// The target: a domain name.
pub(crate) fn check_target(problems: &mut Problems, target: &str, allow_private: bool) {
    problems.check_domain("target", target, allow_private);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_store_nothing() {
        let defaults = Draft {
            dns_record_type: Some(DnsRecordType::A),
            dns_expected: Some(vec![]),
            ..Default::default()
        };
        let mut options = CheckOptions::default();
        defaults.store(&mut options);
        assert!(options.is_empty(), "{options:?}");
    }
}
