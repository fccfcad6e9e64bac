//! JetStream streams and durable consumers, declared once so that every service
//! creates them identically (creation is idempotent, whoever starts first wins).

use async_nats::jetstream::{self, consumer, stream};
use std::time::Duration;

/// Due checks: a work queue shared by all checker replicas.
pub const CHECKS_STREAM: &str = "UPTIME_CHECKS";
/// Check results: a work queue drained by the recorder.
pub const RESULTS_STREAM: &str = "UPTIME_RESULTS";
/// Monitor changes: a short-lived feed the scheduler follows.
pub const MONITORS_STREAM: &str = "UPTIME_MONITORS";
/// State-change and certificate events: kept for a week, read by the notifier.
pub const EVENTS_STREAM: &str = "UPTIME_EVENTS";

/// The durable consumer all checker replicas pull from.
pub const CHECKER_CONSUMER: &str = "checker";
/// The durable consumer the recorder pulls from.
pub const RECORDER_CONSUMER: &str = "recorder";
/// The durable consumer the notifier pulls from.
pub const NOTIFIER_CONSUMER: &str = "notifier";

/// How long JetStream remembers a `Nats-Msg-Id`: a republish within this window
/// (a scheduler restart, a retried publish) is dropped as a duplicate.
pub const DUPLICATE_WINDOW: Duration = Duration::from_secs(10 * 60);

/// The configuration of every stream, for `replicas` copies of each.
pub fn all(replicas: usize) -> Vec<stream::Config> {
    let base = |name: &str, subjects: &[&str]| stream::Config {
        name: name.to_string(),
        subjects: subjects.iter().map(|s| s.to_string()).collect(),
        num_replicas: replicas.max(1),
        duplicate_window: DUPLICATE_WINDOW,
        storage: stream::StorageType::File,
        ..Default::default()
    };
    vec![
        stream::Config {
            retention: stream::RetentionPolicy::WorkQueue,
            ..base(CHECKS_STREAM, &["uptime.checks.due.>"])
        },
        stream::Config {
            retention: stream::RetentionPolicy::WorkQueue,
            ..base(RESULTS_STREAM, &["uptime.checks.result.>"])
        },
        stream::Config {
            retention: stream::RetentionPolicy::Limits,
            max_age: Duration::from_secs(3600),
            ..base(MONITORS_STREAM, &["uptime.monitors.>"])
        },
        stream::Config {
            retention: stream::RetentionPolicy::Limits,
            max_age: Duration::from_secs(7 * 24 * 3600),
            ..base(EVENTS_STREAM, &["uptime.events.>"])
        },
    ]
}

/// Creates (or confirms) every stream. Safe to call from every service at start.
pub async fn ensure_all(
    js: &jetstream::Context,
    replicas: usize,
) -> Result<(), async_nats::jetstream::context::CreateStreamError> {
    for config in all(replicas) {
        js.get_or_create_stream(config).await?;
    }
    Ok(())
}

/// A durable pull consumer with explicit acks.
pub fn durable_pull(name: &str, ack_wait: Duration, max_deliver: i64) -> consumer::pull::Config {
    consumer::pull::Config {
        durable_name: Some(name.to_string()),
        ack_policy: consumer::AckPolicy::Explicit,
        ack_wait,
        max_deliver,
        max_ack_pending: 20_000,
        ..Default::default()
    }
}
