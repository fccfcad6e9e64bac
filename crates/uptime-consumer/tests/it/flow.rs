//! Flow control and settling: bounded pulls, progress, nak with a delay.

use crate::{eventually, Harness};
use async_nats::HeaderMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use uptime_consumer::Concurrency;

fn concurrency(max_in_flight: usize) -> Concurrency {
    Concurrency {
        max_in_flight,
        shutdown_grace: Duration::from_secs(5),
    }
}

#[tokio::test]
async fn only_as_many_messages_are_pulled_as_there_are_free_slots() {
    let h = Harness::start().await;
    for i in 0..6 {
        h.publish(&format!("work.{i}"), HeaderMap::new(), "x").await;
    }
    let consumer = h.consumer(Duration::from_secs(30), -1).await;
    let started = Arc::new(AtomicUsize::new(0));
    let release = Arc::new(Semaphore::new(0));
    let shutdown = CancellationToken::new();
    let run = {
        let (started, release) = (started.clone(), release.clone());
        let consumer = consumer.clone();
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            consumer
                .run_each(
                    concurrency(2),
                    move |delivery| {
                        let (started, release) = (started.clone(), release.clone());
                        async move {
                            started.fetch_add(1, Ordering::SeqCst);
                            release.acquire().await.unwrap().forget();
                            delivery.ack().await;
                        }
                    },
                    shutdown,
                )
                .await
        })
    };

    eventually("two handlers running", || {
        started.load(Ordering::SeqCst) == 2
    })
    .await;
    // Both slots are busy: the other four are still on the server, not in
    // a client buffer where their ack deadline would run.
    let info = h.consumer_info().await;
    assert_eq!(info.num_ack_pending, 2, "{info:?}");
    assert_eq!(info.num_pending, 4, "{info:?}");
    assert_eq!(started.load(Ordering::SeqCst), 2);

    release.add_permits(6);
    eventually("all six handled", || started.load(Ordering::SeqCst) == 6).await;
    let info = h.wait_until_idle().await;
    assert_eq!(info.num_redelivered, 0);
    shutdown.cancel();
    run.await.unwrap();
}

#[tokio::test]
async fn progress_keeps_a_message_longer_than_its_ack_wait_from_redelivery() {
    let h = Harness::start().await;
    h.publish("work.slow", HeaderMap::new(), "x").await;
    // An ack wait of 3 s, progress every second: a redelivery would need the
    // progress task to stall for two seconds, which a loaded CI machine
    // does not do (with 1 s it would need only 0.7 s).
    let consumer = h.consumer(Duration::from_secs(3), -1).await;
    let deliveries = Arc::new(Mutex::new(Vec::new()));
    let shutdown = CancellationToken::new();
    let run = {
        let deliveries = deliveries.clone();
        let consumer = consumer.clone();
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            consumer
                .run_each(
                    concurrency(4),
                    move |delivery| {
                        let deliveries = deliveries.clone();
                        async move {
                            deliveries.lock().unwrap().push(delivery.delivered());
                            // Well over two ack waits of work.
                            tokio::time::sleep(Duration::from_millis(7_000)).await;
                            delivery.ack().await;
                        }
                    },
                    shutdown,
                )
                .await
        })
    };
    eventually("the message handled", || {
        !deliveries.lock().unwrap().is_empty()
    })
    .await;
    let info = h.wait_until_idle().await;
    assert_eq!(info.num_redelivered, 0, "{info:?}");
    assert_eq!(*deliveries.lock().unwrap(), vec![1], "delivered once");
    shutdown.cancel();
    run.await.unwrap();
}

#[tokio::test]
async fn a_nak_with_a_delay_redelivers_after_the_delay() {
    let h = Harness::start().await;
    h.publish("work.retry", HeaderMap::new(), "x").await;
    let consumer = h.consumer(Duration::from_secs(30), -1).await;
    let seen: Arc<Mutex<Vec<(i64, Instant)>>> = Arc::default();
    let shutdown = CancellationToken::new();
    let delay = Duration::from_millis(1_500);
    let run = {
        let seen = seen.clone();
        let consumer = consumer.clone();
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            consumer
                .run_each(
                    concurrency(4),
                    move |delivery| {
                        let seen = seen.clone();
                        async move {
                            let n = delivery.delivered();
                            seen.lock().unwrap().push((n, Instant::now()));
                            if n == 1 {
                                delivery.nak(Some(delay)).await;
                            } else {
                                delivery.ack().await;
                            }
                        }
                    },
                    shutdown,
                )
                .await
        })
    };
    eventually("redelivered", || seen.lock().unwrap().len() == 2).await;
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[1].0, 2, "the second delivery");
    // A lower bound the server guarantees, not a timing race.
    assert!(
        seen[1].1 - seen[0].1 >= delay,
        "redelivered after {:?}, before the delay",
        seen[1].1 - seen[0].1
    );
    h.wait_until_idle().await;
    shutdown.cancel();
    run.await.unwrap();
}
