//! Every subject the services publish on. All live under `uptime.`, so
//! `uptimectl tap 'uptime.>'` (`just tap`) shows the whole system at work.

/// The outcome of one check, for a definition version, without region or
/// round (the previous version; read by the recorder).
pub const CHECK_RESULT_V2: &str = "uptime.checks.result.v2";
/// The prefix of the per-region due checks, version 5 (secrets sealed):
/// `uptime.checks.due.v5.<region>` (scheduler and api-gateway → the region's checkers).
pub const CHECK_DUE_V5_PREFIX: &str = "uptime.checks.due.v5";
/// The outcome of one check in one region, naming its round (checker, api-gateway and scheduler → recorder).
pub const CHECK_RESULT_V3: &str = "uptime.checks.result.v3";
/// A monitor was created, changed, paused, resumed or deleted (api-gateway → scheduler).
pub const MONITOR_CHANGED_V1: &str = "uptime.monitors.changed.v1";
/// A monitor's certificate entered its warning window, for any monitor kind (recorder → notifier).
pub const SSL_EXPIRING_V2: &str = "uptime.events.ssl_expiring.v2";
/// A monitor's status changed, with the round of regions that changed it (recorder → notifier).
pub const STATE_CHANGED_V3: &str = "uptime.events.state_changed.v3";
/// A monitor's status changed or its incident needs saying again, with the
/// incident and how the alert decision treated it (recorder → notifier).
pub const STATE_CHANGED_V4: &str = "uptime.events.state_changed.v4";
/// An API key was revoked (api-gateway → every api-gateway replica; core
/// NATS, no stream).
pub const API_KEY_REVOKED_V1: &str = "uptime.keys.revoked.v1";
/// An audit entry was recorded (api-gateway, through the outbox the recorder relays → people, a SIEM; stream `UPTIME_EVENTS`).
pub const AUDIT_RECORDED_V1: &str = "uptime.events.audit_recorded.v1";

/// The subject of `region`'s due checks (version 5).
pub fn due_v5(region: &str) -> String {
    format!("{CHECK_DUE_V5_PREFIX}.{region}")
}
