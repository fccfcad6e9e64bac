//! The notifier's configuration (see `uptime-config` for the layering).

use serde::Deserialize;
use std::time::Duration;
use uptime_config::{
    AckLinkSettings, AlertProviderSettings, DatabaseSettings, EscalationSettings, NatsSettings,
    OpsSettings, SafetySettings, SecretsSettings, SmtpSettings, TelemetrySettings,
};

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct NotifierSettings {
    pub database: DatabaseSettings,
    pub nats: NatsSettings,
    pub telemetry: TelemetrySettings,
    pub ops: OpsSettings,
    pub safety: SafetySettings,
    pub smtp: SmtpSettings,
    pub notifier: DeliverySettings,
    /// The signed acknowledge link in each down alert (none without a
    /// secret).
    pub ack_links: AckLinkSettings,
    /// Where the alert providers' APIs are (the real ones by default).
    pub alert_providers: AlertProviderSettings,
    /// The keys that open contacts' provider credentials (the api-gateway's
    /// keys: it seals them).
    pub secrets: SecretsSettings,
    /// The escalation sweep (how often, how many at once).
    pub escalation: EscalationSettings,
}

/// How deliveries are attempted and retried.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct DeliverySettings {
    /// Deliveries attempted at the same time by this process.
    pub concurrency: usize,
    /// A delivery still failing this long after its event is marked `failed`.
    pub give_up_after_secs: f64,
    /// The wait after the first failed attempt; it doubles with each attempt.
    pub initial_backoff_secs: f64,
    /// The longest wait between two attempts (a `Retry-After` may ask for more).
    pub max_backoff_secs: f64,
    /// How long a claimed delivery stays reserved for its worker: about one
    /// send attempt (`http_timeout_secs` plus a margin), renewed every third
    /// of it while a send is still in progress. A notifier that dies for good
    /// leaves its deliveries blocked for at most this long; one that restarts
    /// under the same `instance_id` releases them at once.
    pub lease_secs: f64,
    /// This notifier's name on the leases it takes. Must be unique among the
    /// notifiers running at one time and stable across a restart of the same
    /// one (the pod name in Kubernetes, which is the hostname: the default).
    pub instance_id: String,
    /// How often to look for due deliveries when nothing new has arrived.
    pub poll_interval_ms: u64,
    /// Upper bound of one webhook or Slack request.
    pub http_timeout_secs: f64,
    /// How long JetStream waits for an event's ack before redelivering it.
    pub ack_wait_secs: u64,
    /// Delay before a redelivery after a transient database error.
    pub retry_delay_ms: u64,
    /// At most this many events are turned into deliveries together (one
    /// statement for the whole batch).
    pub batch_size: usize,
    /// After a batch's first event, how long to wait for more.
    pub batch_wait_ms: u64,
}

impl Default for DeliverySettings {
    fn default() -> Self {
        Self {
            concurrency: 32,
            give_up_after_secs: 24.0 * 3600.0,
            initial_backoff_secs: 5.0,
            max_backoff_secs: 1800.0,
            lease_secs: 12.0,
            instance_id: default_instance_id(),
            poll_interval_ms: 1000,
            http_timeout_secs: 10.0,
            ack_wait_secs: 6,
            retry_delay_ms: 2000,
            batch_size: 256,
            batch_wait_ms: 20,
        }
    }
}

/// The hostname (a pod's name), else a name of this process alone.
fn default_instance_id() -> String {
    hostname::get()
        .ok()
        .and_then(|h| h.into_string().ok())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| format!("notifier-{}", uuid::Uuid::new_v4()))
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s.max(0.0))
}

impl DeliverySettings {
    pub fn give_up_after(&self) -> Duration {
        secs(self.give_up_after_secs)
    }

    pub fn initial_backoff(&self) -> Duration {
        secs(self.initial_backoff_secs)
    }

    pub fn max_backoff(&self) -> Duration {
        secs(self.max_backoff_secs)
    }

    pub fn lease(&self) -> Duration {
        secs(self.lease_secs)
    }

    pub fn poll_interval(&self) -> Duration {
        Duration::from_millis(self.poll_interval_ms.max(10))
    }

    pub fn http_timeout(&self) -> Duration {
        secs(self.http_timeout_secs.max(0.1))
    }

    pub fn ack_wait(&self) -> Duration {
        Duration::from_secs(self.ack_wait_secs.max(1))
    }

    pub fn retry_delay(&self) -> Duration {
        Duration::from_millis(self.retry_delay_ms)
    }

    pub fn batch_wait(&self) -> Duration {
        Duration::from_millis(self.batch_wait_ms)
    }
}
