//! Layered configuration shared by every service.
//!
//! Each service describes its settings as a `serde` struct whose fields carry
//! defaults (`#[serde(default)]`). [`load`] then layers, lowest first:
//!
//! 1. those defaults,
//! 2. an optional TOML file named by `UPTIME_CONFIG` (or passed explicitly),
//! 3. environment variables `UPTIME_<SECTION>__<KEY>`, e.g.
//!    `UPTIME_DATABASE__URL` or `UPTIME_CHECKER__CONCURRENCY`.
//!
//! The sections every service shares ([`DatabaseSettings`], [`NatsSettings`],
//! [`TelemetrySettings`], [`OpsSettings`], [`SecretsSettings`]) live here so that one variable name
//! means the same thing to every binary and to the Helm chart.
//!
//! The sections two services must read alike have a module each:
//!
//! - `ack_links`: [`AckLinkSettings`], the signed acknowledge links (the
//!   notifier signs them, the api-gateway checks them).
//! - `escalation`: [`EscalationSettings`], escalation bounds and the
//!   notifier's sweep (the api-gateway refuses what the sweep could not run).
//! - `providers`: [`AlertProviderSettings`], where the alert providers'
//!   APIs are.
//! - `secrets`: [`SecretsSettings`], the keys that seal secrets kept for
//!   users.
//! - `streams`: [`StreamLimits`], the JetStream streams' bounds, so the
//!   first service to start creates them as the others would.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::path::Path;

mod ack_links;
mod escalation;
mod providers;
mod secrets;
mod streams;
pub use ack_links::{AckLinkSettings, MAX_ACK_LINK_TTL_SECS};
pub use escalation::{EscalationSettings, MAX_STEP_DELAY_SECS};
pub use providers::AlertProviderSettings;
pub use secrets::SecretsSettings;
pub use streams::StreamLimits;

/// The environment variable that names an optional configuration file.
pub const CONFIG_FILE_ENV: &str = "UPTIME_CONFIG";

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("configuration file {path}: {source}")]
    File {
        path: String,
        source: config::ConfigError,
    },
    #[error("invalid configuration: {0}")]
    Invalid(#[from] config::ConfigError),
}

/// Loads `T` from defaults, the file named by `UPTIME_CONFIG` (if set) and the
/// `UPTIME_*` environment.
pub fn load<T: DeserializeOwned>() -> Result<T, ConfigError> {
    let file = std::env::var(CONFIG_FILE_ENV)
        .ok()
        .filter(|p| !p.is_empty());
    load_from(file.as_deref().map(Path::new))
}

/// Like [`load`], with an explicit file instead of `UPTIME_CONFIG`.
pub fn load_from<T: DeserializeOwned>(file: Option<&Path>) -> Result<T, ConfigError> {
    let mut builder = config::Config::builder();
    if let Some(path) = file {
        builder = builder.add_source(config::File::from(path).required(true));
    }
    let built = builder
        .add_source(
            config::Environment::with_prefix("UPTIME")
                .prefix_separator("_")
                .separator("__")
                .try_parsing(true),
        )
        .build()
        .map_err(|source| ConfigError::File {
            path: file.map(|p| p.display().to_string()).unwrap_or_default(),
            source,
        })?;
    Ok(built.try_deserialize()?)
}

/// PostgreSQL connection settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct DatabaseSettings {
    /// `postgres://user:password@host:port/database`
    pub url: String,
    /// Upper bound of pooled connections.
    pub max_connections: usize,
    /// How long a request waits for a free pooled connection (or for a new
    /// one to open) before giving up; the API answers 503 then instead of
    /// hanging while the pool is exhausted.
    pub pool_wait_timeout_ms: u64,
}

impl Default for DatabaseSettings {
    fn default() -> Self {
        Self {
            url: "postgres://uptime@127.0.0.1:55432/uptime".into(),
            max_connections: 16,
            pool_wait_timeout_ms: 5000,
        }
    }
}

/// NATS connection settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct NatsSettings {
    /// One or more server URLs, comma separated.
    pub url: String,
    /// Replicas of each JetStream stream this deployment creates (1 locally, 3 in a cluster).
    pub stream_replicas: usize,
    /// How large and old each stream may grow (`UPTIME_NATS__STREAMS__*`).
    /// Every service applies these at start, so all must be given the same.
    pub streams: StreamLimits,
    /// A NATS credentials file (user JWT and NKey seed, as `nsc` writes
    /// them; `UPTIME_NATS__CREDENTIALS_FILE`). None: connect without
    /// authentication. The file is read at start; its contents are never
    /// logged.
    pub credentials_file: Option<std::path::PathBuf>,
}

impl Default for NatsSettings {
    fn default() -> Self {
        Self {
            url: "nats://127.0.0.1:4222".into(),
            stream_replicas: 1,
            streams: StreamLimits::default(),
            credentials_file: None,
        }
    }
}

/// Logging and tracing settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct TelemetrySettings {
    /// An `EnvFilter` directive, e.g. `info` or `info,checker=debug`.
    pub log_level: String,
    /// `json` for machines, `pretty` for people.
    pub log_format: LogFormat,
    /// OTLP/gRPC endpoint for traces, e.g. `http://otel-collector:4317`; empty = off.
    pub otlp_endpoint: String,
}

impl Default for TelemetrySettings {
    fn default() -> Self {
        Self {
            log_level: "info".into(),
            log_format: LogFormat::Json,
            otlp_endpoint: String::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Json,
    Pretty,
}

/// The operational HTTP endpoint (`/healthz`, `/readyz`, `/metrics`) of
/// services that have no API of their own.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct OpsSettings {
    pub listen: String,
    /// `/readyz` is 503 once a main loop of the service (a scheduling
    /// round, a consumer's pull, a sweep) has not come round for this long
    /// (or three of its own periods, if longer): `uptime_ops::Watchdog`.
    pub stall_after_secs: u64,
}

impl OpsSettings {
    pub fn stall_after(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.stall_after_secs.max(1))
    }
}

impl Default for OpsSettings {
    fn default() -> Self {
        Self {
            listen: "0.0.0.0:9090".into(),
            stall_after_secs: 120,
        }
    }
}

/// Which target addresses checks and webhooks may reach.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct SafetySettings {
    /// Allow loopback, private, link-local and metadata addresses. Off in
    /// production; on for local development and tests.
    pub allow_private_targets: bool,
}

/// How email leaves: an SMTP relay (alert emails and verification emails).
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct SmtpSettings {
    /// The relay's host name; empty switches email off (email deliveries fail).
    pub host: String,
    /// 587 for STARTTLS submission, 465 for implicit TLS, 25 for plain relays.
    pub port: u16,
    pub tls: SmtpTls,
    /// Empty = no authentication.
    pub username: String,
    pub password: String,
    /// The `From` of every email, e.g. `Uptime <alerts@example.com>`.
    pub from: String,
    /// Upper bound of one delivery (connect, dialogue and data).
    pub timeout_secs: u64,
}

impl Default for SmtpSettings {
    fn default() -> Self {
        Self {
            host: "127.0.0.1".into(),
            port: 587,
            tls: SmtpTls::Starttls,
            username: String::new(),
            password: String::new(),
            from: "Uptime <alerts@localhost>".into(),
            timeout_secs: 10,
        }
    }
}

/// How the SMTP connection is protected.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SmtpTls {
    /// Plain text (local relays and tests only).
    None,
    /// Plain connection upgraded with STARTTLS, which is required.
    Starttls,
    /// TLS from the first byte (port 465).
    Tls,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, Default)]
    #[serde(default)]
    struct Sample {
        database: DatabaseSettings,
        nats: NatsSettings,
        safety: SafetySettings,
    }

    #[test]
    fn environment_overrides_file_which_overrides_defaults() {
        let dir = std::env::temp_dir().join(format!("uptime-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("c.toml");
        std::fs::write(
            &file,
            "[database]\nurl = \"postgres://file/db\"\nmax_connections = 3\n[nats]\nurl = \"nats://file:4222\"\n",
        )
        .unwrap();
        // Only this test touches these variables.
        std::env::set_var("UPTIME_NATS__URL", "nats://env:4222");
        std::env::set_var("UPTIME_SAFETY__ALLOW_PRIVATE_TARGETS", "true");
        let loaded: Sample = load_from(Some(&file)).unwrap();
        std::env::remove_var("UPTIME_NATS__URL");
        std::env::remove_var("UPTIME_SAFETY__ALLOW_PRIVATE_TARGETS");

        assert_eq!(loaded.database.url, "postgres://file/db");
        assert_eq!(loaded.database.max_connections, 3);
        assert_eq!(loaded.nats.url, "nats://env:4222");
        assert_eq!(loaded.nats.stream_replicas, 1, "default kept");
        assert!(loaded.safety.allow_private_targets);
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let err = load_from::<Sample>(Some(Path::new("/nonexistent/uptime.toml"))).unwrap_err();
        assert!(
            err.to_string().contains("/nonexistent/uptime.toml"),
            "{err}"
        );
    }
}

/// The deployment's regions, the same for every service that
/// reads them (api-gateway, scheduler, recorder). A region is a group of
/// checkers (`checker.region`); a monitor is checked from its `regions`, or
/// from `default` when it names none (`uptime_contracts::placement`).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct RegionsSettings {
    /// Every region monitors may name (`UPTIME_REGIONS__KNOWN=eu,us,ap`).
    #[serde(deserialize_with = "name_list")]
    pub known: Vec<String>,
    /// The regions of a monitor that names none (`UPTIME_REGIONS__DEFAULT`);
    /// each must be in `known`.
    #[serde(deserialize_with = "name_list")]
    pub default: Vec<String>,
    /// How long a checker's announcement lives unless renewed: a region with
    /// no announcement younger than this is `offline`.
    pub presence_ttl_secs: u64,
}

impl Default for RegionsSettings {
    fn default() -> Self {
        Self {
            known: vec!["default".into()],
            default: vec!["default".into()],
            presence_ttl_secs: 30,
        }
    }
}

/// Accepts `["eu", "us"]` or `"eu, us"`.
fn name_list<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum ListOrString {
        List(Vec<String>),
        Text(String),
    }
    Ok(match ListOrString::deserialize(deserializer)? {
        ListOrString::List(list) => list,
        ListOrString::Text(text) => text
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
    })
}
