//! The operator's configuration (see `uptime-config` for the layering:
//! defaults, the `UPTIME_CONFIG` file, `UPTIME_<SECTION>__<KEY>`).

use crate::plan::Timing;
use serde::Deserialize;
use std::time::Duration;
use uptime_config::{OpsSettings, TelemetrySettings};

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct OperatorSettings {
    pub telemetry: TelemetrySettings,
    pub ops: OpsSettings,
    pub operator: ReconcileSettings,
}

/// Where the API is and how often resources are visited.
#[derive(Clone, Deserialize)]
#[serde(default)]
pub struct ReconcileSettings {
    /// The API's base URL (`UPTIME_OPERATOR__API_URL`), e.g.
    /// `http://uptime-api-gateway:8080`.
    pub api_url: String,
    /// An API key of the organisation the resources belong to, allowed to
    /// write monitors and alert contacts (`UPTIME_OPERATOR__API_KEY`; the
    /// chart takes it from a Secret). Never logged.
    pub api_key: String,
    /// Only this namespace's resources; empty: every namespace.
    pub watch_namespace: String,
    /// Put before `<namespace>.<name>` in every ref: lets several clusters
    /// share one organisation without their refs colliding (e.g. `prod.`).
    pub ref_prefix: String,
    /// A spec is sent again after this long although it did not change:
    /// picks up changed Secrets and undoes edits made through the API.
    pub reapply_secs: u64,
    /// How often a monitor's state, last check and incident are read into
    /// its status.
    pub observe_secs: u64,
    /// The next try of a spec the API refused or that names a missing
    /// Secret (a referenced contact may be created meanwhile).
    pub retry_refused_secs: u64,
    /// The next try when the API could not be reached.
    pub retry_unreachable_secs: u64,
    /// Upper bound of one API request.
    pub http_timeout_secs: u64,
    /// Resources reconciled at the same time, per kind.
    pub concurrency: u16,
}

impl std::fmt::Debug for ReconcileSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReconcileSettings")
            .field("api_url", &self.api_url)
            .field("api_key", &"(secret)")
            .field("watch_namespace", &self.watch_namespace)
            .field("ref_prefix", &self.ref_prefix)
            .field("reapply_secs", &self.reapply_secs)
            .field("observe_secs", &self.observe_secs)
            .finish_non_exhaustive()
    }
}

impl Default for ReconcileSettings {
    fn default() -> Self {
        Self {
            api_url: "http://localhost:8080".into(),
            api_key: String::new(),
            watch_namespace: String::new(),
            ref_prefix: String::new(),
            reapply_secs: 600,
            observe_secs: 60,
            retry_refused_secs: 30,
            retry_unreachable_secs: 10,
            http_timeout_secs: 10,
            concurrency: 4,
        }
    }
}

impl ReconcileSettings {
    pub fn timing(&self) -> Timing {
        let secs = |s: u64| Duration::from_secs(s.max(1));
        Timing {
            reapply_every: secs(self.reapply_secs),
            observe_every: secs(self.observe_secs),
            retry_refused: secs(self.retry_refused_secs),
            retry_unreachable: secs(self.retry_unreachable_secs),
        }
    }

    pub fn http_timeout(&self) -> Duration {
        Duration::from_secs(self.http_timeout_secs.max(1))
    }
}
