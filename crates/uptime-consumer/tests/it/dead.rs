//! Dead letters: a message that can never succeed goes to `UPTIME_DEAD` with
//! its reason and origin in headers, and is not redelivered.

use crate::{eventually, Harness, CONSUMER, STREAM};
use async_nats::jetstream::{self, consumer};
use async_nats::HeaderMap;
use futures::StreamExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use uptime_consumer::{Concurrency, DeadReason};
use uptime_contracts::streams::{self, dead};

/// Every message in the dead-letter stream, read from its start.
pub async fn dead_letters(js: &jetstream::Context) -> Vec<async_nats::jetstream::Message> {
    let stream = js.get_stream(streams::DEAD_STREAM).await.unwrap();
    let count = stream.cached_info().state.messages as usize;
    if count == 0 {
        return Vec::new();
    }
    let reader = stream
        .create_consumer(consumer::pull::Config {
            deliver_policy: consumer::DeliverPolicy::All,
            ..Default::default()
        })
        .await
        .unwrap();
    let mut messages = reader.fetch().max_messages(count).messages().await.unwrap();
    let mut out = Vec::new();
    while let Some(message) = messages.next().await {
        out.push(message.unwrap());
    }
    out
}

fn header<'a>(message: &'a async_nats::jetstream::Message, name: &str) -> &'a str {
    message
        .headers
        .as_ref()
        .and_then(|h| h.get(name))
        .map(|v| v.as_str())
        .unwrap_or_else(|| panic!("no {name} header in {:?}", message.headers))
}

async fn dead_count(js: &jetstream::Context) -> u64 {
    js.get_stream(streams::DEAD_STREAM)
        .await
        .unwrap()
        .cached_info()
        .state
        .messages
}

#[tokio::test]
async fn an_undecodable_message_is_dead_lettered_with_its_reason_and_not_redelivered() {
    let h = Harness::start().await;
    let mut headers = HeaderMap::new();
    headers.insert("Nats-Msg-Id", "m-1");
    headers.insert(
        "traceparent",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    );
    h.publish("work.bad", headers, "{not json").await;
    let consumer = h.consumer(Duration::from_secs(2), -1).await;
    let calls = Arc::new(AtomicUsize::new(0));
    let shutdown = CancellationToken::new();
    let run = {
        let calls = calls.clone();
        let consumer = consumer.clone();
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            consumer
                .run_each(
                    Concurrency {
                        max_in_flight: 4,
                        shutdown_grace: Duration::from_secs(5),
                    },
                    move |delivery| {
                        calls.fetch_add(1, Ordering::SeqCst);
                        async move {
                            delivery
                                .dead_letter(DeadReason::Undecodable, "expected value at line 1")
                                .await
                        }
                    },
                    shutdown,
                )
                .await
        })
    };

    let mut count = 0;
    for _ in 0..500 {
        count = dead_count(&h.js).await;
        if count > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(count, 1, "one dead letter");
    let letters = dead_letters(&h.js).await;
    let letter = &letters[0];
    assert_eq!(letter.subject.as_str(), "uptime.dead.work.bad");
    assert_eq!(&letter.payload[..], b"{not json", "the payload, verbatim");
    assert_eq!(header(letter, dead::REASON_HEADER), "undecodable");
    assert_eq!(
        header(letter, dead::DETAIL_HEADER),
        "expected value at line 1"
    );
    assert_eq!(header(letter, dead::ORIGINAL_SUBJECT_HEADER), "work.bad");
    assert_eq!(header(letter, dead::STREAM_HEADER), STREAM);
    assert_eq!(header(letter, dead::SEQUENCE_HEADER), "1");
    assert_eq!(header(letter, dead::CONSUMER_HEADER), CONSUMER);
    assert_eq!(header(letter, dead::DELIVERED_HEADER), "1");
    assert_eq!(header(letter, dead::ORIGINAL_MSG_ID_HEADER), "m-1");
    let msg_id = letter.headers.as_ref().unwrap();
    let msg_id = msg_id.get(async_nats::header::NATS_MESSAGE_ID).unwrap();
    assert_eq!(
        msg_id.as_str(),
        "TEST_WORK:1",
        "one dead letter per original"
    );
    assert_eq!(
        header(letter, "traceparent"),
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "the dead letter stays in the message's trace"
    );

    // Terminated: settled (not left to its ack wait) and gone from the
    // work queue, so there is nothing to redeliver.
    let info = h.wait_until_idle().await;
    assert_eq!(info.num_redelivered, 0, "{info:?}");
    let left =
        h.js.get_stream(STREAM)
            .await
            .unwrap()
            .cached_info()
            .state
            .messages;
    assert_eq!(left, 0, "the original is out of its work queue");
    assert_eq!(calls.load(Ordering::SeqCst), 1, "handled once");
    assert_eq!(dead_count(&h.js).await, 1);
    shutdown.cancel();
    run.await.unwrap();
}

#[tokio::test]
async fn a_nak_on_the_last_allowed_delivery_is_dead_lettered() {
    let h = Harness::start().await;
    h.publish("work.flaky", HeaderMap::new(), "x").await;
    let consumer = h.consumer(Duration::from_secs(30), 2).await;
    let calls = Arc::new(AtomicUsize::new(0));
    let shutdown = CancellationToken::new();
    let run = {
        let calls = calls.clone();
        let consumer = consumer.clone();
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            consumer
                .run_each(
                    Concurrency {
                        max_in_flight: 1,
                        shutdown_grace: Duration::from_secs(5),
                    },
                    move |delivery| {
                        calls.fetch_add(1, Ordering::SeqCst);
                        async move { delivery.nak(None).await }
                    },
                    shutdown,
                )
                .await
        })
    };
    eventually("delivered twice", || calls.load(Ordering::SeqCst) == 2).await;
    h.wait_until_idle().await;
    let letters = dead_letters(&h.js).await;
    assert_eq!(letters.len(), 1, "one dead letter");
    assert_eq!(header(&letters[0], dead::REASON_HEADER), "max_deliveries");
    assert_eq!(header(&letters[0], dead::DELIVERED_HEADER), "2");
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    shutdown.cancel();
    run.await.unwrap();
}
