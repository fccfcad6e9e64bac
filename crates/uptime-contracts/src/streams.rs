//! JetStream streams and durable consumers, declared once so that every service
//! creates them identically: [`ensure`] creates a missing stream and brings an
//! existing one up to date, whoever starts first.
//!
//! Every stream is bounded by age and size (`nats.streams`, see
//! [`uptime_config::StreamLimits`] and docs/operations.md). The work queues
//! refuse a publish once full (`discard: new`) rather than drop work they
//! already accepted: the publisher sees the error (the API answers 503, the
//! services retry) and `nats_publish_refused_total` counts it (see
//! [`crate::bus`]). The other streams drop their oldest messages.

use async_nats::jetstream::{consumer, stream};
use std::time::Duration;
use uptime_config::{NatsSettings, StreamLimits};

pub mod dead;
mod update;
pub use update::{ensure, Ensured, FieldChange, StreamsError};

/// Due checks: a work queue shared by all checker replicas.
pub const CHECKS_STREAM: &str = "UPTIME_CHECKS";
/// Check results: a work queue drained by the recorder.
pub const RESULTS_STREAM: &str = "UPTIME_RESULTS";
/// Monitor changes: a short-lived feed the scheduler follows.
pub const MONITORS_STREAM: &str = "UPTIME_MONITORS";
/// State-change and certificate events: kept for a week, read by the notifier.
pub const EVENTS_STREAM: &str = "UPTIME_EVENTS";
/// Dead letters: messages a consumer can never handle, with the reason in
/// headers (see [`dead`]). Read by people, not by services.
pub const DEAD_STREAM: &str = "UPTIME_DEAD";

/// The durable consumer all checker replicas pull from.
pub const CHECKER_CONSUMER: &str = "checker";
/// The durable consumer the recorder pulls from.
pub const RECORDER_CONSUMER: &str = "recorder";
/// The durable consumer the notifier pulls from.
pub const NOTIFIER_CONSUMER: &str = "notifier";

/// How long JetStream remembers a `Nats-Msg-Id`: a republish within this window
/// (a scheduler restart, a retried publish) is dropped as a duplicate. No
/// stream may keep messages for less (JetStream refuses such a stream).
pub const DUPLICATE_WINDOW: Duration = Duration::from_secs(10 * 60);

/// Each stream's name and the subjects it captures.
const SUBJECTS: [(&str, &str); 5] = [
    (CHECKS_STREAM, "uptime.checks.due.>"),
    (RESULTS_STREAM, "uptime.checks.result.>"),
    (MONITORS_STREAM, "uptime.monitors.>"),
    (EVENTS_STREAM, "uptime.events.>"),
    (DEAD_STREAM, dead::SUBJECTS),
];

/// The stream that captures `subject`, for metrics and logs.
pub fn stream_of(subject: &str) -> Option<&'static str> {
    SUBJECTS
        .iter()
        .find(|(_, pattern)| subject.starts_with(pattern.trim_end_matches('>')))
        .map(|(name, _)| *name)
}

/// The configuration of every stream as `settings` asks for it, or which
/// setting is out of range.
pub fn configs(settings: &NatsSettings) -> Result<Vec<stream::Config>, StreamsError> {
    let limits = &settings.streams;
    validate(limits)?;
    let replicas = settings.stream_replicas.max(1);
    let secs = Duration::from_secs;
    // Validated to fit an i64.
    let bytes = |b: u64| b as i64;
    let base = |name: &str, subjects: &str, max_age: Duration, max_bytes: i64| stream::Config {
        name: name.to_string(),
        subjects: vec![subjects.to_string()],
        num_replicas: replicas,
        duplicate_window: DUPLICATE_WINDOW,
        storage: stream::StorageType::File,
        max_age,
        max_bytes,
        // Spelled out as the server reports them, so that an up-to-date
        // stream compares equal (the server turns 0 into -1).
        max_messages: -1,
        ..Default::default()
    };
    let [checks, results, monitors, events, dead] = SUBJECTS;
    Ok(vec![
        stream::Config {
            retention: stream::RetentionPolicy::WorkQueue,
            discard: stream::DiscardPolicy::New,
            ..base(
                checks.0,
                checks.1,
                secs(limits.checks_max_age_secs),
                bytes(limits.checks_max_bytes),
            )
        },
        stream::Config {
            retention: stream::RetentionPolicy::WorkQueue,
            discard: stream::DiscardPolicy::New,
            ..base(
                results.0,
                results.1,
                secs(limits.results_max_age_secs),
                bytes(limits.results_max_bytes),
            )
        },
        // Read from "now" by the scheduler: old changes are of no use to anyone.
        stream::Config {
            retention: stream::RetentionPolicy::Limits,
            discard: stream::DiscardPolicy::Old,
            ..base(
                monitors.0,
                monitors.1,
                secs(limits.monitors_max_age_secs),
                bytes(limits.monitors_max_bytes),
            )
        },
        // Events stay after the notifier read them, so a full stream must
        // make room (`discard: new` would refuse every new alert until a
        // week-old event expired); the notifier reads within seconds, so
        // what is dropped was delivered long ago.
        stream::Config {
            retention: stream::RetentionPolicy::Limits,
            discard: stream::DiscardPolicy::Old,
            ..base(
                events.0,
                events.1,
                secs(limits.events_max_age_secs),
                bytes(limits.events_max_bytes),
            )
        },
        // Kept for people to read and replay; a flood of dead letters must
        // not stop new ones from being kept, so the oldest make room.
        stream::Config {
            retention: stream::RetentionPolicy::Limits,
            discard: stream::DiscardPolicy::Old,
            ..base(
                dead.0,
                dead.1,
                secs(limits.dead_max_age_secs),
                bytes(limits.dead_max_bytes),
            )
        },
    ])
}

fn validate(limits: &StreamLimits) -> Result<(), StreamsError> {
    for (name, value) in limits.named() {
        let invalid =
            |why: &str| StreamsError::Invalid(format!("nats.streams.{name} = {value}: {why}"));
        if value == 0 {
            return Err(invalid("must be at least 1 (every stream is bounded)"));
        }
        if name.ends_with("_age_secs") && value < DUPLICATE_WINDOW.as_secs() {
            return Err(invalid(&format!(
                "must be at least {} (the deduplication window)",
                DUPLICATE_WINDOW.as_secs()
            )));
        }
        if i64::try_from(value).is_err() {
            return Err(invalid("too large"));
        }
    }
    Ok(())
}

/// Every stream with the default limits, for `replicas` copies of each.
pub fn all(replicas: usize) -> Vec<stream::Config> {
    configs(&NatsSettings {
        stream_replicas: replicas,
        ..NatsSettings::default()
    })
    .expect("the default stream limits are valid")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_queues_refuse_when_full_and_feeds_drop_the_oldest() {
        for config in all(1) {
            let expected = match config.retention {
                stream::RetentionPolicy::WorkQueue => stream::DiscardPolicy::New,
                _ => stream::DiscardPolicy::Old,
            };
            assert_eq!(config.discard, expected, "{}", config.name);
            assert!(config.max_bytes > 0, "{} is bounded in size", config.name);
            assert!(config.max_age >= DUPLICATE_WINDOW, "{}", config.name);
        }
    }

    #[test]
    fn limits_come_from_the_settings() {
        let mut settings = NatsSettings::default();
        settings.streams.results_max_bytes = 12_345;
        settings.streams.events_max_age_secs = 3600;
        let configs = configs(&settings).unwrap();
        let by_name = |n: &str| configs.iter().find(|c| c.name == n).unwrap().clone();
        assert_eq!(by_name(RESULTS_STREAM).max_bytes, 12_345);
        assert_eq!(by_name(EVENTS_STREAM).max_age, Duration::from_secs(3600));
        let dead = by_name(DEAD_STREAM);
        assert_eq!(dead.max_age, Duration::from_secs(7 * 24 * 3600));
        assert_eq!(dead.max_bytes, 256 << 20);
        assert_eq!(dead.retention, stream::RetentionPolicy::Limits);
    }

    #[test]
    fn unbounded_or_too_short_limits_are_refused_naming_the_setting() {
        let mut settings = NatsSettings::default();
        settings.streams.checks_max_bytes = 0;
        let err = configs(&settings).unwrap_err().to_string();
        assert!(err.contains("nats.streams.checks_max_bytes"), "{err}");

        let mut settings = NatsSettings::default();
        settings.streams.monitors_max_age_secs = 60;
        let err = configs(&settings).unwrap_err().to_string();
        assert!(err.contains("nats.streams.monitors_max_age_secs"), "{err}");
        assert!(err.contains("600"), "{err}");
    }

    #[test]
    fn every_subject_has_its_stream() {
        assert_eq!(stream_of("uptime.checks.due.v5.eu"), Some(CHECKS_STREAM));
        assert_eq!(stream_of("uptime.checks.result.v2"), Some(RESULTS_STREAM));
        assert_eq!(
            stream_of("uptime.monitors.changed.v1"),
            Some(MONITORS_STREAM)
        );
        assert_eq!(
            stream_of("uptime.events.ssl_expiring.v2"),
            Some(EVENTS_STREAM)
        );
        assert_eq!(
            stream_of(&dead::subject_for("uptime.checks.due.v5.eu")),
            Some(DEAD_STREAM),
            "a dead letter is not captured by its original stream"
        );
        assert_eq!(stream_of("uptime.other"), None);
    }
}
