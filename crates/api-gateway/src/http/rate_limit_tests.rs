//! The token buckets, charges and lines of `rate_limit.rs`.

use super::*;

#[test]
fn allows_the_burst_then_refuses_with_a_retry_after() {
    let limiter = RateLimiter::new(RateLimitSettings {
        per_second: 1,
        burst: 3,
    });
    for _ in 0..3 {
        limiter.check(7).unwrap();
    }
    match limiter.check(7) {
        Err(ApiError::RateLimited { retry_after_secs }) => assert!(retry_after_secs >= 1),
        other => panic!("expected a rate limit, got {other:?}"),
    }
    limiter.check(8).expect("other keys have their own bucket");
}

#[test]
fn the_allowance_says_what_is_left_and_when_the_bucket_is_full() {
    let limiter = RateLimiter::new(RateLimitSettings {
        per_second: 2,
        burst: 10,
    });
    let first = limiter.check_n(7, 4).unwrap();
    assert_eq!(first.limit, 10);
    assert_eq!(first.remaining, 6);
    assert_eq!(first.reset_secs, 2, "4 tokens back at 2 a second");
    assert_eq!(first.window_secs, 5, "empty to full at 2 a second");
    let refused = match limiter.check_n(7, 8) {
        Err(ApiError::RateLimited { retry_after_secs }) => limiter.refused(retry_after_secs),
        other => panic!("expected a rate limit, got {other:?}"),
    };
    assert_eq!(refused.remaining, 0);
    assert_eq!(refused.reset_secs, 1);
}

#[test]
fn full_buckets_are_swept_but_limits_hold() {
    let limiter = RateLimiter::new(RateLimitSettings {
        per_second: 1,
        burst: 1,
    });
    limiter.check(u64::MAX).unwrap();
    for k in 0..(SWEEP_AT as u64 * 3) {
        limiter.check(k).unwrap();
    }
    assert!(limiter.check(u64::MAX).is_err(), "still limited");
}

#[test]
fn check_n_takes_n_tokens_or_none_and_says_when_n_are_back() {
    let limiter = RateLimiter::new(RateLimitSettings {
        per_second: 1,
        burst: 10,
    });
    limiter.check_n(7, 6).unwrap();
    match limiter.check_n(7, 6) {
        // 4 left, 2 missing at 1 a second.
        Err(ApiError::RateLimited { retry_after_secs }) => assert_eq!(retry_after_secs, 2),
        other => panic!("expected a rate limit, got {other:?}"),
    }
    // The refused request took nothing.
    limiter.check_n(7, 4).unwrap();
    assert!(limiter.check(7).is_err());
}

#[test]
fn a_cost_above_the_burst_takes_a_full_bucket() {
    let limiter = RateLimiter::new(RateLimitSettings {
        per_second: 1,
        burst: 5,
    });
    limiter
        .check_n(7, 50)
        .expect("a full bucket pays for anything");
    assert!(limiter.check(7).is_err(), "and is empty after");
    limiter.check(8).unwrap();
    assert!(
        limiter.check_n(8, 50).is_err(),
        "a bucket short of full does not"
    );
}

/// An apply of 150 resources with a bucket of 100: its own token taken
/// at authentication, then the rest of a full bucket.
#[test]
fn a_charge_above_the_burst_is_served_by_a_full_bucket_and_after_its_wait_otherwise() {
    let limiter = RateLimiter::new(RateLimitSettings {
        per_second: 10,
        burst: 100,
    });
    limiter.check(7).unwrap();
    assert!(
        matches!(limiter.charge(7, 150, 1), Charge::Taken(a) if a.remaining == 0),
        "a full bucket (less the request's own token) pays for it"
    );
    limiter.check(7).expect_err("and is empty after");
    // Refill a little (tests cannot wait): 40 tokens.
    limiter
        .buckets
        .lock()
        .unwrap()
        .map
        .get_mut(&7)
        .unwrap()
        .tokens = 40.0;
    limiter.check(7).unwrap();
    let Charge::Refused {
        retry_after_secs,
        charged,
    } = limiter.charge(7, 150, 1)
    else {
        panic!("a bucket short of full does not pay");
    };
    assert_eq!(charged, 100, "capped at a full bucket");
    assert_eq!(retry_after_secs, 6, "60 tokens short at 10 a second");
    let tokens = limiter.buckets.lock().unwrap().map[&7].tokens;
    assert!(
        (40.0..40.1).contains(&tokens),
        "its token given back: {tokens}"
    );
    // What the wait brings (6 s at 10 a second) is what the retry needs.
    limiter
        .buckets
        .lock()
        .unwrap()
        .map
        .get_mut(&7)
        .unwrap()
        .tokens = tokens + 60.0;
    limiter.check(7).unwrap();
    assert!(matches!(limiter.charge(7, 150, 1), Charge::Taken(_)));
}

fn unlimited() -> RateLimiter<i64> {
    RateLimiter::new(RateLimitSettings {
        per_second: 0,
        burst: 0,
    })
}

#[tokio::test]
async fn a_line_serves_one_at_a_time_in_arrival_order_and_refuses_when_full() {
    let limiter = unlimited();
    let first = limiter.join_line(1, 3).unwrap();
    let second = limiter.join_line(1, 3).unwrap();
    let third = limiter.join_line(1, 3).unwrap();
    assert!(limiter.join_line(1, 3).is_none(), "a fourth is refused");
    assert_eq!(limiter.in_line(&1), 3);
    let other = limiter
        .join_line(2, 3)
        .expect("other keys have lines of their own");
    let other = other.turn().await;

    let first = first.turn().await;
    let mut second = Box::pin(second.turn());
    let mut third = Box::pin(third.turn());
    assert!(futures::poll!(&mut second).is_pending());
    assert!(futures::poll!(&mut third).is_pending());
    drop(first);
    assert!(futures::poll!(&mut third).is_pending(), "second came first");
    let futures::task::Poll::Ready(second) = futures::poll!(&mut second) else {
        panic!("the second's turn after the first");
    };
    assert_eq!(limiter.in_line(&1), 2);
    limiter
        .join_line(1, 3)
        .expect("room again once one left the line");
    drop(second);
    let futures::task::Poll::Ready(third) = futures::poll!(&mut third) else {
        panic!("the third's turn after the second");
    };
    drop((third, other));
    assert_eq!(limiter.in_line(&1), 0);
    assert!(
        limiter.lines.lock().unwrap().is_empty(),
        "empty lines are forgotten"
    );
}

#[tokio::test]
async fn a_request_abandoned_while_waiting_leaves_the_line() {
    let limiter = unlimited();
    let running = limiter.join_line(1, 2).unwrap().turn().await;
    let mut waiting = Box::pin(limiter.join_line(1, 2).unwrap().turn());
    assert!(futures::poll!(&mut waiting).is_pending());
    assert!(limiter.join_line(1, 2).is_none());
    drop(waiting);
    assert_eq!(limiter.in_line(&1), 1);
    let next = limiter.join_line(1, 2).expect("its place is free");
    drop(running);
    let _turn = next.turn().await;
}

#[test]
fn zero_turns_limiting_off() {
    let limiter = RateLimiter::new(RateLimitSettings {
        per_second: 0,
        burst: 0,
    });
    for _ in 0..1000 {
        limiter.check(1).unwrap();
    }
}
