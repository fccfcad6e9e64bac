//! The checker's configuration (see `uptime-config` for the layering:
//! defaults → `UPTIME_CONFIG` file → `UPTIME_<SECTION>__<KEY>` variables).

use serde::{Deserialize, Deserializer};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use uptime_config::{
    NatsSettings, OpsSettings, RegionsSettings, SafetySettings, SecretsSettings, TelemetrySettings,
};

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct CheckerSettings {
    pub nats: NatsSettings,
    pub telemetry: TelemetrySettings,
    pub ops: OpsSettings,
    pub safety: SafetySettings,
    pub checker: CheckerSection,
    /// Shared with every service; the checker uses `presence_ttl_secs`.
    pub regions: RegionsSettings,
    /// The keys that open basic-auth passwords. None: a check
    /// carrying a password fails saying so; every other check runs.
    pub secrets: SecretsSettings,
}

/// The `[checker]` section.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct CheckerSection {
    /// Checks this replica runs at once.
    pub concurrency: usize,
    /// Seconds JetStream waits for an ack before redelivering a due check to
    /// another replica. Long checks send progress every third of it.
    pub ack_wait_secs: u64,
    /// Deliveries of one due check before JetStream gives up on it.
    pub max_deliver: i64,
    /// Names this replica in results (`reporter`) and logs. Defaults to the
    /// host name (the pod name in Kubernetes), else a random id.
    pub instance_id: String,
    /// A PEM file of extra CA certificates to trust besides the public roots
    /// (private CAs; tests). Certificates are always verified.
    pub extra_root_ca_pem: Option<PathBuf>,
    /// The `User-Agent` of check requests.
    pub user_agent: String,
    /// Response bytes read for keyword matching; the rest is not read.
    pub max_body_bytes: usize,
    /// Private addresses that may be checked even though
    /// `safety.allow_private_targets` is off, e.g. one internal status page.
    /// A list in the file, or comma-separated in the environment.
    #[serde(deserialize_with = "ip_list")]
    pub private_allowlist: Vec<IpAddr>,
    /// On shutdown, how long in-flight checks may take to finish before they
    /// are handed back to JetStream for another replica.
    pub shutdown_grace_secs: u64,
    /// The region this replica checks from (`UPTIME_CHECKER__REGION`): it
    /// takes only its region's due checks, answers naming the region and
    /// names it in every request's `User-Agent`. A name that is not a valid
    /// region refuses to start.
    pub region: String,
    /// A scheduled check received later than both its interval and this
    /// many seconds after its slot is skipped as stale (acked unrun,
    /// `checks_skipped_stale_total`); a later one within it still runs under
    /// its own slot. The grace is what lets a fault of a few minutes (a NATS
    /// node or a checker lost, PostgreSQL restarted) cost lateness instead of
    /// slots; past it, a long backlog of old slots is dropped so that the
    /// monitors' current ones are not delayed behind it.
    pub stale_grace_secs: u64,
    /// dns checks (`[checker.dns]`).
    pub dns: DnsSection,
}

/// The `[checker.dns]` section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct DnsSection {
    /// The resolvers dns checks naming no `dns_server` ask (`ip` or
    /// `ip:port`, port 53 by default), in place of the checker's own
    /// (`/etc/resolv.conf`): public recursive resolvers that know nothing of
    /// the deployment's internal names, so that tenants cannot read them.
    /// Trusted as the operator's, so not screened. Empty: the checker's own.
    /// A list in the file, or comma-separated in the environment
    /// (`UPTIME_CHECKER__DNS__TENANT_RESOLVERS`).
    #[serde(deserialize_with = "resolver_list")]
    pub tenant_resolvers: Vec<SocketAddr>,
}

impl Default for CheckerSection {
    fn default() -> Self {
        Self {
            concurrency: 256,
            ack_wait_secs: 6,
            max_deliver: 10,
            instance_id: default_instance_id(),
            extra_root_ca_pem: None,
            user_agent: format!("uptime-checker/{}", env!("CARGO_PKG_VERSION")),
            max_body_bytes: 1024 * 1024,
            private_allowlist: Vec::new(),
            shutdown_grace_secs: 30,
            region: uptime_contracts::DEFAULT_REGION.to_string(),
            stale_grace_secs: 300,
            dns: DnsSection::default(),
        }
    }
}

/// The host name if the system tells it, else `checker-<random>`.
fn default_instance_id() -> String {
    let from_env = std::env::var("HOSTNAME").ok();
    let from_file = || {
        std::fs::read_to_string("/etc/hostname")
            .ok()
            .map(|s| s.trim().to_string())
    };
    from_env
        .filter(|h| !h.trim().is_empty())
        .or_else(from_file)
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| {
            format!(
                "checker-{}",
                &uuid::Uuid::new_v4().simple().to_string()[..8]
            )
        })
}

/// Accepts `["10.0.0.5", "fd00::1"]` or `"10.0.0.5, fd00::1"`.
fn ip_list<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<IpAddr>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum ListOrString {
        List(Vec<IpAddr>),
        Text(String),
    }
    match ListOrString::deserialize(deserializer)? {
        ListOrString::List(list) => Ok(list),
        ListOrString::Text(text) => text
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().map_err(serde::de::Error::custom))
            .collect(),
    }
}

/// The port of a dns server named without one.
const DNS_PORT: u16 = 53;

/// `server` as `ip`, `ip:port` or `[ipv6]:port`: a tenant resolver here, a
/// check's `dns_server` in the dns probe.
pub(crate) fn parse_server(server: &str) -> Result<SocketAddr, String> {
    let server = server.trim();
    if let Ok(addr) = server.parse::<SocketAddr>() {
        return Ok(addr);
    }
    server
        .parse::<IpAddr>()
        .map(|ip| SocketAddr::new(ip, DNS_PORT))
        .map_err(|_| format!("dns server {server:?} is not an IP address or ip:port"))
}

/// Accepts `["9.9.9.9", "[2620:fe::fe]:53"]` or `"9.9.9.9, 149.112.112.112:53"`.
fn resolver_list<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<SocketAddr>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum ListOrString {
        List(Vec<String>),
        Text(String),
    }
    let written = match ListOrString::deserialize(deserializer)? {
        ListOrString::List(list) => list,
        ListOrString::Text(text) => text.split(',').map(str::to_string).collect(),
    };
    written
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(|s| parse_server(s).map_err(serde::de::Error::custom))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowlist_accepts_a_list_or_comma_separated_text() {
        let from_list: CheckerSection =
            serde_json::from_str(r#"{"private_allowlist": ["10.0.0.5", "fd00::1"]}"#).unwrap();
        let from_text: CheckerSection =
            serde_json::from_str(r#"{"private_allowlist": "10.0.0.5, fd00::1"}"#).unwrap();
        let expected: Vec<IpAddr> = vec!["10.0.0.5".parse().unwrap(), "fd00::1".parse().unwrap()];
        assert_eq!(from_list.private_allowlist, expected);
        assert_eq!(from_text.private_allowlist, expected);
        assert!(
            serde_json::from_str::<CheckerSection>(r#"{"private_allowlist": "nope"}"#).is_err()
        );
    }

    #[test]
    fn tenant_resolvers_are_ips_with_an_optional_port() {
        let expected: Vec<SocketAddr> = vec![
            "9.9.9.9:53".parse().unwrap(),
            "[2620:fe::fe]:5353".parse().unwrap(),
        ];
        for written in [
            r#"{"dns": {"tenant_resolvers": ["9.9.9.9", "[2620:fe::fe]:5353"]}}"#,
            r#"{"dns": {"tenant_resolvers": " 9.9.9.9 , [2620:fe::fe]:5353 "}}"#,
        ] {
            let section: CheckerSection = serde_json::from_str(written).unwrap();
            assert_eq!(section.dns.tenant_resolvers, expected, "{written}");
        }
        let error = serde_json::from_str::<CheckerSection>(
            r#"{"dns": {"tenant_resolvers": "dns.quad9.net"}}"#,
        )
        .unwrap_err();
        assert!(error.to_string().contains("dns.quad9.net"), "{error}");
        assert!(CheckerSection::default().dns.tenant_resolvers.is_empty());
    }

    #[test]
    fn tenant_resolvers_come_from_the_file_or_the_environment() {
        let file = std::env::temp_dir().join(format!("checker-dns-{}.toml", std::process::id()));
        std::fs::write(&file, "[checker.dns]\ntenant_resolvers = [\"9.9.9.9\"]\n").unwrap();
        let loaded: CheckerSettings = uptime_config::load_from(Some(&file)).unwrap();
        assert_eq!(
            loaded.checker.dns.tenant_resolvers,
            vec!["9.9.9.9:53".parse::<SocketAddr>().unwrap()]
        );

        // The name the Helm chart sets.
        let var = "UPTIME_CHECKER__DNS__TENANT_RESOLVERS";
        std::env::set_var(var, "149.112.112.112:5353, 9.9.9.9");
        let loaded = uptime_config::load_from::<CheckerSettings>(Some(&file));
        std::env::remove_var(var);
        std::fs::remove_file(&file).unwrap();
        let expected: Vec<SocketAddr> = vec![
            "149.112.112.112:5353".parse().unwrap(),
            "9.9.9.9:53".parse().unwrap(),
        ];
        assert_eq!(loaded.unwrap().checker.dns.tenant_resolvers, expected);
    }

    #[test]
    fn defaults_are_usable() {
        let section = CheckerSection::default();
        assert_eq!(section.concurrency, 256);
        assert_eq!(section.ack_wait_secs, 6);
        assert!(!section.instance_id.is_empty());
        assert_eq!(section.region, "default");
    }
}
