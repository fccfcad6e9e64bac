//! The checkers' presence bucket against a real nats-server: announce,
//! list, withdraw, expiry, and the bucket's bounds.

use async_nats::jetstream;
use chrono::Utc;
use std::time::Duration;
use uptime_contracts::{presence, CheckerPresenceV1};
use uptime_testkit::TestNats;

async fn connect(nats: &TestNats) -> jetstream::Context {
    let client = async_nats::connect(&nats.url).await.expect("connect");
    jetstream::new(client)
}

fn checker(region: &str, instance_id: &str) -> CheckerPresenceV1 {
    CheckerPresenceV1 {
        instance_id: instance_id.into(),
        region: region.into(),
        // Whole seconds: the value round-trips through JSON exactly.
        seen_at: chrono::DateTime::from_timestamp(Utc::now().timestamp(), 0).unwrap(),
    }
}

#[tokio::test]
async fn checkers_announce_are_listed_and_withdraw() {
    let nats = TestNats::start().await;
    let js = connect(&nats).await;
    let store = presence::open_or_create(&js, Duration::from_secs(60))
        .await
        .expect("create");
    assert!(
        presence::live(&store).await.expect("empty").is_empty(),
        "a new bucket has no checkers"
    );

    let eu = checker("eu", "checker-1");
    // Dots and colons are not key tokens: the key is sanitised, the value keeps the id.
    let us = checker("us", "pod.ns:8080");
    let us_twin = checker("us", "pod_ns_8080");
    for c in [&eu, &us, &us_twin] {
        presence::announce(&store, c).await.expect("announce");
    }
    // Renewing replaces the entry rather than adding one.
    presence::announce(&store, &eu).await.expect("renew");
    assert_eq!(
        presence::live(&store).await.expect("live"),
        vec![eu.clone(), us.clone(), us_twin.clone()]
    );

    presence::withdraw(&store, "us", "pod.ns:8080")
        .await
        .expect("withdraw");
    // A purged key (by hand) is not live either.
    store
        .purge(presence::key_of("eu", "checker-1"))
        .await
        .expect("purge");
    assert_eq!(presence::live(&store).await.expect("live"), vec![us_twin]);

    // Opening again (another service) reuses the bucket and its entries.
    let again = presence::open_or_create(&js, Duration::from_secs(60))
        .await
        .expect("open");
    assert_eq!(presence::live(&again).await.expect("live").len(), 1);
}

#[tokio::test]
async fn an_entry_not_renewed_expires() {
    let nats = TestNats::start().await;
    let js = connect(&nats).await;
    let store = presence::open_or_create(&js, Duration::from_secs(1))
        .await
        .expect("create");
    let eu = checker("eu", "checker-1");
    presence::announce(&store, &eu).await.expect("announce");
    assert_eq!(presence::live(&store).await.expect("live"), vec![eu]);

    // The server removes it after the TTL; poll rather than time it.
    let mut polls = 0;
    while !presence::live(&store).await.expect("live").is_empty() {
        polls += 1;
        assert!(polls < 200, "the entry never expired");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn the_bucket_is_bounded_and_follows_the_configured_ttl() {
    let nats = TestNats::start().await;
    let js = connect(&nats).await;
    presence::open_or_create(&js, Duration::from_secs(30))
        .await
        .expect("create");
    let config = |js: jetstream::Context| async move {
        js.get_stream(format!("KV_{}", presence::BUCKET))
            .await
            .expect("the bucket's stream")
            .cached_info()
            .config
            .clone()
    };
    let created = config(js.clone()).await;
    assert_eq!(created.max_age, Duration::from_secs(30));
    assert_eq!(created.max_bytes, presence::MAX_BYTES);
    assert!(created.max_bytes > 0, "bounded like every stream");
    assert_eq!(created.max_messages_per_subject, 1, "history 1");
    assert_eq!(created.storage, jetstream::stream::StorageType::File);

    // A changed TTL reaches the existing bucket.
    let store = presence::open_or_create(&js, Duration::from_secs(45))
        .await
        .expect("update");
    assert_eq!(config(js.clone()).await.max_age, Duration::from_secs(45));
    presence::announce(&store, &checker("eu", "a"))
        .await
        .expect("usable after the update");

    let err = presence::open_or_create(&js, Duration::from_millis(10))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("at least one second"), "{err}");
}
