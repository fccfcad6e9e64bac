//! What a dns check may tell a tenant about an answer while private targets
//! are refused (tenant isolation).
//!
//! A dns check reads answers back to whoever wrote the monitor, so without
//! these rules it would map the deployment's network: ask the cluster's
//! resolver for `*.svc.cluster.local` and read the addresses in `error`.
//! Names are no reliable sign of what is internal (any public name can point
//! anywhere), so the rules go by address, with `uptime-netguard`'s classifier
//! and the deployment's allowlist, the same rule http targets get:
//!
//! - an A or AAAA answer holding a non-public address is refused whatever it
//!   was compared with (an expected value must not become an oracle), and the
//!   refusal names no address;
//! - a non-public address written inside anything a failure shows (a TXT
//!   value, a name such as `ip-10-0-0-5.ec2.internal`, a resolver's error) is
//!   replaced by [`REDACTED`];
//! - the values answered by the checker's own resolver (a check naming no
//!   server while no tenant resolver is configured) are compared but never
//!   listed, nor a CNAME chain's names: that resolver knows the deployment's
//!   internal names, and what they point to (an ExternalName's database
//!   host, ...) is no tenant's to read. A tenant resolver or the check's own
//!   server is a resolver that knows nothing internal (the operator's
//!   promise, or the user's own server), so its names are shown.
//!
//! While private targets are allowed (local development, tests) nothing is
//! refused, redacted or withheld.

use crate::address::AddressPolicy;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Stands in for a non-public address in text a failure shows.
pub const REDACTED: &str = "[non-public address]";

/// Characters of the longest textual address: an IPv6 address ending in an
/// IPv4 one (`ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255`).
pub const MAX_ADDRESS_CHARS: usize = 45;

/// The rules for one check's answer.
pub struct Screen<'a> {
    policy: &'a AddressPolicy,
    /// The answer's values are not listed (see the module's documentation).
    withhold: bool,
}

impl<'a> Screen<'a> {
    /// `internal_resolver`: the checker's own resolver is asked.
    pub fn new(policy: &'a AddressPolicy, internal_resolver: bool) -> Self {
        Self {
            policy,
            withhold: internal_resolver && !policy.guard().allows_private(),
        }
    }

    /// Whether the answer's values and names stay out of failures.
    pub fn withholds(&self) -> bool {
        self.withhold
    }

    /// The refusal of an answer holding an address checks may not reach,
    /// e.g. `answer refused: db.example.com resolves to a private address,
    /// which dns checks may not reveal`.
    /// `addresses` are the answer's A and AAAA values: names are judged by
    /// the addresses they resolve to, not here.
    pub fn refused_answer(
        &self,
        target: &str,
        addresses: impl IntoIterator<Item = IpAddr>,
    ) -> Option<String> {
        addresses.into_iter().find_map(|ip| {
            let class = self.policy.guard().refused_class(ip)?;
            // The tenant's message leaves the address out; operators
            // investigating a refusal find it here.
            tracing::info!(
                target_name = %target,
                address = %ip,
                class = ?class,
                "refused a dns answer holding a non-public address"
            );
            Some(format!(
                "answer refused: {target} resolves to {}, which dns checks may not reveal",
                class.noun()
            ))
        })
    }

    /// `text` with every address checks may not reach that is written in
    /// it (dotted or dashed IPv4, IPv6) replaced by [`REDACTED`]. Errs on the
    /// side of redacting: `a10.0.0.5` loses its address too.
    pub fn redact(&self, text: &str) -> String {
        let guard = self.policy.guard();
        if guard.allows_private() {
            return text.to_string();
        }
        redact_with(text, |ip| guard.refused_class(ip).is_some())
    }
}

fn redact_with(text: &str, refused: impl Fn(IpAddr) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    // Bytes of `text` before `copied` are in `out`; none before `next` starts
    // an address (it was inside one already found).
    let mut copied = 0;
    let mut next = 0;
    for (i, c) in text.char_indices() {
        if i < next || !(c.is_ascii_hexdigit() || c == ':') {
            continue;
        }
        if let Some((len, ip)) = address_at(&text[i..]) {
            if refused(ip) {
                out.push_str(&text[copied..i]);
                out.push_str(REDACTED);
                copied = i + len;
            }
            // A public address is skipped whole, so that no address is found
            // inside it (`110.0.0.5` holds no `10.0.0.5`).
            next = i + len;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// The longest address `s` starts with, and its length in bytes.
fn address_at(s: &str) -> Option<(usize, IpAddr)> {
    let run = s
        .bytes()
        .take(MAX_ADDRESS_CHARS)
        .take_while(|b| b.is_ascii_hexdigit() || matches!(b, b':' | b'.' | b'-'))
        .count();
    // The run is ASCII, so every prefix is a `str` boundary.
    (2..=run)
        .rev()
        .find_map(|len| parse_address(&s[..len]).map(|ip| (len, ip)))
}

fn parse_address(s: &str) -> Option<IpAddr> {
    if let Some(v4) = parse_v4(s) {
        return Some(IpAddr::V4(v4));
    }
    // A hex digit at least: `::` alone is punctuation far more often than
    // the unspecified address.
    if s.contains(':') && s.bytes().any(|b| b.is_ascii_hexdigit()) {
        return s.parse::<Ipv6Addr>().ok().map(IpAddr::V6);
    }
    None
}

/// Four decimal octets separated by dots, or by dashes as in the names
/// clouds and Kubernetes give hosts and pods (`ip-10-0-0-5`); leading zeros
/// allowed, since a reader sees the address in `010.000.000.005` all the same.
fn parse_v4(s: &str) -> Option<Ipv4Addr> {
    let separator = if s.contains('.') { '.' } else { '-' };
    let mut octets = [0u8; 4];
    let mut parts = s.split(separator);
    for octet in &mut octets {
        let part = parts.next()?;
        if part.is_empty() || part.len() > 3 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *octet = part.parse().ok()?;
    }
    match parts.next() {
        None => Some(Ipv4Addr::from(octets)),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict() -> AddressPolicy {
        AddressPolicy::new(false, vec![])
    }

    #[test]
    fn non_public_addresses_in_text_are_redacted_in_every_form() {
        let policy = strict();
        let screen = Screen::new(&policy, false);
        for (text, redacted) in [
            (
                "v=spf1 ip4:10.0.0.5 -all",
                "v=spf1 ip4:[non-public address] -all",
            ),
            (
                "ip-10-0-0-5.ec2.internal",
                "ip-[non-public address].ec2.internal",
            ),
            (
                "10-0-0-5.default.pod.cluster.local",
                "[non-public address].default.pod.cluster.local",
            ),
            ("10.0.0.5.nip.io", "[non-public address].nip.io"),
            ("010.000.000.005", "[non-public address]"),
            (
                "connecting to 10.96.0.10:53",
                "connecting to [non-public address]:53",
            ),
            ("[fd00::10]:53 refused", "[[non-public address]]:53 refused"),
            ("fe80::1%eth0", "[non-public address]%eth0"),
            ("::ffff:10.0.0.5", "[non-public address]"),
            ("x:127.0.0.1", "x:[non-public address]"),
            // Public addresses stay, and hide no private one inside them.
            ("1.1.1.1 and 110.0.0.5", "1.1.1.1 and 110.0.0.5"),
            ("2606:4700::1111", "2606:4700::1111"),
            // Not addresses.
            ("v=DKIM1; k=rsa; p=MIGfMA0", "v=DKIM1; k=rsa; p=MIGfMA0"),
            ("proto::op at 12:30:45", "proto::op at 12:30:45"),
            ("10.0.0", "10.0.0"),
            ("1.2.3.4.10.0.0.5", "1.2.3.4.[non-public address]"),
            (
                "bücher 10.0.0.5 ünïcode",
                "bücher [non-public address] ünïcode",
            ),
        ] {
            assert_eq!(screen.redact(text), redacted, "{text}");
        }
    }

    #[test]
    fn allowed_addresses_are_not_redacted() {
        let allowlisted = AddressPolicy::new(false, vec!["10.0.0.5".parse().unwrap()]);
        assert_eq!(
            Screen::new(&allowlisted, false).redact("10.0.0.5 and 10.0.0.6"),
            "10.0.0.5 and [non-public address]"
        );
        let open = AddressPolicy::new(true, vec![]);
        let screen = Screen::new(&open, true);
        assert_eq!(screen.redact("10.0.0.5, ::1"), "10.0.0.5, ::1");
        assert!(!screen.withholds(), "private targets allowed: all is shown");
        assert_eq!(
            screen.refused_answer("db.test", ["10.0.0.5".parse().unwrap()]),
            None
        );
    }

    #[test]
    fn an_answer_with_any_non_public_address_is_refused_without_it() {
        let policy = strict();
        let screen = Screen::new(&policy, false);
        let public: IpAddr = "1.1.1.1".parse().unwrap();
        assert_eq!(screen.refused_answer("one.test", [public]), None);
        let refusal = screen
            .refused_answer(
                "db.test",
                [public, "::ffff:169.254.169.254".parse().unwrap()],
            )
            .unwrap();
        assert_eq!(
            refusal,
            "answer refused: db.test resolves to a cloud metadata address, \
             which dns checks may not reveal"
        );
    }

    #[test]
    fn only_the_internal_resolver_s_answers_are_withheld_and_only_when_strict() {
        let policy = strict();
        assert!(Screen::new(&policy, true).withholds());
        assert!(!Screen::new(&policy, false).withholds());
    }
}
