//! Stream limits against a real nats-server: an existing stream is brought up
//! to date at start, one that cannot be changed in place is left alone, and a
//! full work queue refuses publishes visibly.

use async_nats::jetstream::{self, stream};
use std::time::Duration;
use uptime_config::NatsSettings;
use uptime_contracts::streams::{self, Ensured};
use uptime_contracts::{bus, CheckSpec, DueCheck, MonitorKind, Trigger};
use uptime_testkit::TestNats;

async fn connect(nats: &TestNats) -> jetstream::Context {
    let client = async_nats::connect(&nats.url).await.expect("connect");
    jetstream::new(client)
}

/// The streams as every release before stream limits created them.
fn unbounded_streams() -> Vec<stream::Config> {
    let base = |name: &str, subject: &str| stream::Config {
        name: name.to_string(),
        subjects: vec![subject.to_string()],
        num_replicas: 1,
        duplicate_window: streams::DUPLICATE_WINDOW,
        storage: stream::StorageType::File,
        ..Default::default()
    };
    vec![
        stream::Config {
            retention: stream::RetentionPolicy::WorkQueue,
            ..base(streams::CHECKS_STREAM, "uptime.checks.due.>")
        },
        stream::Config {
            retention: stream::RetentionPolicy::WorkQueue,
            ..base(streams::RESULTS_STREAM, "uptime.checks.result.>")
        },
        stream::Config {
            retention: stream::RetentionPolicy::Limits,
            max_age: Duration::from_secs(3600),
            ..base(streams::MONITORS_STREAM, "uptime.monitors.>")
        },
        stream::Config {
            retention: stream::RetentionPolicy::Limits,
            max_age: Duration::from_secs(7 * 24 * 3600),
            ..base(streams::EVENTS_STREAM, "uptime.events.>")
        },
    ]
}

async fn config_of(js: &jetstream::Context, name: &str) -> stream::Config {
    js.get_stream(name)
        .await
        .expect("stream exists")
        .cached_info()
        .config
        .clone()
}

async fn messages_in(js: &jetstream::Context, name: &str) -> u64 {
    js.get_stream(name)
        .await
        .expect("stream exists")
        .cached_info()
        .state
        .messages
}

fn due(n: u128) -> DueCheck {
    let check_id = uuid::Uuid::from_u128(n + 1);
    DueCheck {
        check_id,
        monitor_id: 1,
        definition_version: 1,
        interval_secs: 60,
        trigger: Trigger::Manual,
        due_at: chrono::Utc::now(),
        spec: CheckSpec {
            kind: MonitorKind::Http,
            target: "https://example.com/".into(),
            timeout_secs: uptime_contracts::TimeoutSecs::of(5),
            expected_status: uptime_contracts::ExpectedStatus::of(200),
            keyword: None,
            keyword_type: None,
            options: Default::default(),
        },
        region: uptime_contracts::DEFAULT_REGION.into(),
        round_id: check_id,
    }
}

async fn publish_due(
    js: &jetstream::Context,
    msg: &DueCheck,
) -> Result<(), jetstream::context::PublishError> {
    let headers = uptime_telemetry::nats::headers_with_msg_id(&msg.check_id.to_string());
    bus::publish_on(js, msg.subject(), headers, msg)
        .await?
        .await?;
    Ok(())
}

#[tokio::test]
async fn streams_created_without_limits_get_them_at_start_and_keep_their_messages() {
    let nats = TestNats::start().await;
    let js = connect(&nats).await;
    for config in unbounded_streams() {
        js.create_stream(config).await.expect("create old stream");
    }
    publish_due(&js, &due(0))
        .await
        .expect("queued before the upgrade");

    let settings = nats.settings();
    let ensured = streams::ensure(&js, &settings).await.expect("ensure");

    for (name, what) in &ensured {
        if name == streams::DEAD_STREAM {
            // Added after these streams were: an upgrade creates it.
            assert_eq!(*what, Ensured::Created, "{name}");
            continue;
        }
        let Ensured::Updated(changes) = what else {
            panic!("{name} was not updated: {what:?}");
        };
        let fields: Vec<_> = changes.iter().map(|c| c.field).collect();
        assert!(fields.contains(&"max_bytes"), "{name}: {fields:?}");
    }
    let limits = &settings.streams;
    for (name, max_age, max_bytes, discard) in [
        (
            streams::CHECKS_STREAM,
            limits.checks_max_age_secs,
            limits.checks_max_bytes,
            stream::DiscardPolicy::New,
        ),
        (
            streams::RESULTS_STREAM,
            limits.results_max_age_secs,
            limits.results_max_bytes,
            stream::DiscardPolicy::New,
        ),
        (
            streams::MONITORS_STREAM,
            limits.monitors_max_age_secs,
            limits.monitors_max_bytes,
            stream::DiscardPolicy::Old,
        ),
        (
            streams::EVENTS_STREAM,
            limits.events_max_age_secs,
            limits.events_max_bytes,
            stream::DiscardPolicy::Old,
        ),
        (
            streams::DEAD_STREAM,
            limits.dead_max_age_secs,
            limits.dead_max_bytes,
            stream::DiscardPolicy::Old,
        ),
    ] {
        let config = config_of(&js, name).await;
        assert_eq!(config.max_age, Duration::from_secs(max_age), "{name}");
        assert_eq!(config.max_bytes, max_bytes as i64, "{name}");
        assert_eq!(config.discard, discard, "{name}");
    }
    assert_eq!(
        messages_in(&js, streams::CHECKS_STREAM).await,
        1,
        "the queued check survives the update"
    );

    // A second start finds nothing to do (server metadata is not a change).
    let again = streams::ensure(&js, &settings).await.expect("ensure again");
    assert!(
        again.iter().all(|(_, what)| *what == Ensured::Unchanged),
        "{again:?}"
    );

    // A changed setting reaches the existing stream, and only that field.
    let mut smaller = settings.clone();
    smaller.streams.results_max_bytes = 64 << 20;
    let ensured = streams::ensure(&js, &smaller).await.expect("ensure");
    let results = ensured
        .iter()
        .find(|(name, _)| name == streams::RESULTS_STREAM)
        .unwrap();
    match &results.1 {
        Ensured::Updated(changes) => {
            assert_eq!(changes.len(), 1, "{changes:?}");
            assert_eq!(changes[0].field, "max_bytes");
        }
        other => panic!("results stream: {other:?}"),
    }
    assert_eq!(
        config_of(&js, streams::RESULTS_STREAM).await.max_bytes,
        64 << 20
    );
}

#[tokio::test]
async fn a_stream_that_cannot_be_changed_in_place_is_reported_and_left_alone() {
    let nats = TestNats::start().await;
    let js = connect(&nats).await;
    // Someone made the checks stream by hand, as a plain limits stream.
    js.create_stream(stream::Config {
        name: streams::CHECKS_STREAM.into(),
        subjects: vec!["uptime.checks.due.>".into()],
        retention: stream::RetentionPolicy::Limits,
        ..Default::default()
    })
    .await
    .unwrap();

    let ensured = streams::ensure(&js, &nats.settings())
        .await
        .expect("ensure");
    let checks = &ensured
        .iter()
        .find(|(name, _)| name == streams::CHECKS_STREAM)
        .unwrap()
        .1;
    match checks {
        Ensured::Incompatible(differences) => {
            assert_eq!(differences[0].field, "retention", "{differences:?}")
        }
        other => panic!("checks stream: {other:?}"),
    }
    let config = config_of(&js, streams::CHECKS_STREAM).await;
    assert_eq!(config.retention, stream::RetentionPolicy::Limits);
    assert_eq!(config.max_bytes, -1, "not half-updated");
    assert_eq!(
        config_of(&js, streams::RESULTS_STREAM).await.discard,
        stream::DiscardPolicy::New,
        "the other streams are still created"
    );
}

#[tokio::test]
async fn a_full_work_queue_refuses_a_publish_and_counts_it() {
    let metrics = uptime_telemetry::metrics_handle();
    let nats = TestNats::start().await;
    let js = connect(&nats).await;
    let mut settings: NatsSettings = nats.settings();
    settings.streams.checks_max_bytes = 4096;
    streams::ensure(&js, &settings).await.expect("ensure");

    let mut accepted = 0;
    let refusal = loop {
        match publish_due(&js, &due(accepted)).await {
            Ok(()) => accepted += 1,
            Err(e) => break e,
        }
        assert!(accepted < 100, "4 KiB never filled up");
    };
    assert!(accepted > 0, "messages fit until the stream was full");
    assert!(bus::is_refused(&refusal), "{refusal}");
    assert_eq!(
        messages_in(&js, streams::CHECKS_STREAM).await,
        accepted as u64,
        "the refused message was not stored, none was dropped"
    );
    let rendered = metrics.render();
    assert!(
        rendered
            .lines()
            .any(|l| l.starts_with("nats_publish_refused_total{stream=\"UPTIME_CHECKS\"}")),
        "{rendered}"
    );
}
