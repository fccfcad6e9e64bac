//! A consumer whose pulls fail at once (its durable consumer gone, a
//! stream without a leader) pauses between attempts instead of pulling
//! again at once: a tight loop wrote 1,227 notifier log lines in one chaos
//! run, and as many pull requests.

use crate::{eventually, Harness, CONSUMER, STREAM};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use uptime_consumer::Batching;

/// Requests counted after the first failed pull.
const PULLS_WATCHED: u64 = 5;
/// The least time they take: the first four pauses (one request may be
/// the lag refresh's, not a pull).
const FLOOR: Duration = Duration::from_millis(100 + 200 + 400 + 800);

/// Messages the test's client has sent so far: every pull is one request.
fn sent(h: &Harness) -> u64 {
    h.client.statistics().out_messages.load(Ordering::SeqCst)
}

#[tokio::test]
async fn pulls_that_fail_at_once_are_retried_after_a_growing_pause() {
    let h = Harness::start().await;
    let consumer = h.consumer(Duration::from_secs(30), -1).await;
    let shutdown = CancellationToken::new();
    let run = tokio::spawn({
        let shutdown = shutdown.clone();
        async move {
            consumer
                .run_batches(
                    Batching {
                        max_messages: 10,
                        max_wait: Duration::from_millis(50),
                    },
                    |batch| async move {
                        for delivery in batch {
                            delivery.ack().await;
                        }
                    },
                    shutdown,
                )
                .await
        }
    });
    // The loop has its first pull open (waiting for work) once the server
    // counts a waiting request.
    let mut waiting = 0;
    for _ in 0..250 {
        waiting = h.consumer_info().await.num_waiting;
        if waiting > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(waiting > 0, "the consumer never pulled");

    // Deleted under the loop: every pull from now on fails at once (no
    // responders), as while a stream has no leader.
    h.js.get_stream(STREAM)
        .await
        .unwrap()
        .delete_consumer(CONSUMER)
        .await
        .expect("delete the consumer");
    let before = sent(&h);
    eventually("a pull after the deletion", || sent(&h) > before).await;
    // Five more requests after the first failed one. With pauses of 0.1,
    // 0.2, 0.4, 0.8 and 1.6 s between failing pulls they take at least
    // 1.5 s even if one of them is the lag refresh's request (one every
    // 15 s); a loop without a pause sends them within milliseconds. The
    // bound is a floor, so a slow machine only makes it easier to meet.
    let (from, at) = (sent(&h), Instant::now());
    eventually("five more requests while every pull fails", || {
        sent(&h) >= from + PULLS_WATCHED
    })
    .await;
    let took = at.elapsed();
    assert!(
        took >= FLOOR,
        "{PULLS_WATCHED} requests in {took:?} while every pull failed"
    );
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("the loop stops on shutdown during a pause")
        .unwrap();
}
