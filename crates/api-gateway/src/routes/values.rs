//! The values of response fields stored as text, as enums for the OpenAPI
//! document (`#[schema(value_type = ...)]` on the field): generated clients
//! get enum types; the fields themselves keep the stored text.

use serde::Serialize;
use utoipa::ToSchema;

/// A check's outcome: `degraded` passed, but slower than `latency_warn_ms`.
/// Also a round's verdict.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResultStatus {
    Up,
    Degraded,
    Down,
}

/// What made a check: the schedule, a manual check, a heartbeat ping.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResultTrigger {
    Scheduled,
    Manual,
    Heartbeat,
}

/// What started a round.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RoundTrigger {
    Scheduled,
    Manual,
}

/// What a delivery carries.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryKind {
    Alert,
    Verification,
    Test,
}

/// The event a delivery is for.
#[derive(Serialize, ToSchema)]
pub enum DeliveryEvent {
    #[serde(rename = "monitor.down")]
    MonitorDown,
    #[serde(rename = "monitor.up")]
    MonitorUp,
    #[serde(rename = "monitor.degraded")]
    MonitorDegraded,
    #[serde(rename = "ssl.expiring")]
    SslExpiring,
    #[serde(rename = "test")]
    Test,
    #[serde(rename = "verification")]
    Verification,
}

/// Where a delivery stands: `failed` means given up.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    Pending,
    Delivered,
    Failed,
}

/// One attempt's outcome: `retry` failed and is tried again later, `failed`
/// failed and was given up.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttemptOutcome {
    Delivered,
    Retry,
    Failed,
}

/// Always `queued`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Queued {
    Queued,
}

/// Always `ok`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PingAccepted {
    Ok,
}

/// Always `sent`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Sent {
    Sent,
}

/// Always `verified`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum VerifiedStatus {
    Verified,
}
