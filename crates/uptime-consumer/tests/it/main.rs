//! The consumer scaffold against a real nats-server: one work-queue stream
//! `TEST_WORK` on `work.>` and its durable consumer `worker`, with the
//! project's streams (`UPTIME_DEAD` among them) created as every service does.

mod dead;
mod flow;
mod receive_errors;
mod traces;

use async_nats::jetstream::{self, consumer, stream};
use std::time::Duration;
use uptime_consumer::Consumer;
use uptime_contracts::streams;
use uptime_testkit::TestNats;

pub const STREAM: &str = "TEST_WORK";
pub const CONSUMER: &str = "worker";

pub struct Harness {
    pub js: jetstream::Context,
    /// The client behind `js` (its statistics count what it sends).
    pub client: async_nats::Client,
    _nats: TestNats,
}

impl Harness {
    pub async fn start() -> Self {
        let nats = TestNats::start().await;
        let (client, js) = nats.jetstream().await;
        js.create_stream(stream::Config {
            name: STREAM.into(),
            subjects: vec!["work.>".into()],
            retention: stream::RetentionPolicy::WorkQueue,
            ..Default::default()
        })
        .await
        .expect("create the test stream");
        Self {
            js,
            client,
            _nats: nats,
        }
    }

    /// The durable consumer with this ack wait and delivery limit (-1: none).
    pub async fn consumer(&self, ack_wait: Duration, max_deliver: i64) -> Consumer {
        let pull = self
            .js
            .get_stream(STREAM)
            .await
            .unwrap()
            .create_consumer(streams::durable_pull(CONSUMER, ack_wait, max_deliver))
            .await
            .expect("create the consumer");
        Consumer::new(self.js.clone(), pull, STREAM, CONSUMER)
    }

    pub async fn publish(&self, subject: &str, headers: async_nats::HeaderMap, payload: &str) {
        self.js
            .publish_with_headers(subject.to_string(), headers, payload.to_string().into())
            .await
            .unwrap()
            .await
            .expect("published");
    }

    pub async fn consumer_info(&self) -> consumer::Info {
        let stream = self.js.get_stream(STREAM).await.unwrap();
        let mut consumer: consumer::PullConsumer = stream.get_consumer(CONSUMER).await.unwrap();
        consumer.info().await.unwrap().clone()
    }

    /// Waits until every message was delivered and settled.
    pub async fn wait_until_idle(&self) -> consumer::Info {
        let mut last = None;
        for _ in 0..200 {
            let info = self.consumer_info().await;
            if info.num_pending == 0 && info.num_ack_pending == 0 {
                return info;
            }
            last = Some(info);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("consumer never went idle: {last:?}");
    }
}

/// Polls `condition` every 20 ms for up to 10 s.
pub async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    for _ in 0..500 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("timed out waiting for: {what}");
}
