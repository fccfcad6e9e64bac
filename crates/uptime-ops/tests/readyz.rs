//! `/readyz` over real HTTP: answers are cached, so probes do not cost a
//! dependency query each.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use uptime_ops::{OpsServer, Readiness};

/// An ops server whose one check counts its runs.
async fn serve(readiness: impl FnOnce(Readiness) -> Readiness) -> (String, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = runs.clone();
    let readiness = readiness(Readiness::new().with_check("dependency", move || {
        counter.fetch_add(1, Ordering::SeqCst);
        async { Ok(()) }
    }));
    let server = OpsServer::bind("127.0.0.1:0", readiness).unwrap();
    let base = format!("http://{}", server.addr);
    let shutdown = CancellationToken::new();
    tokio::spawn(server.run(shutdown.clone()));
    // Dropping the token would not stop the server; the test process ends.
    std::mem::forget(shutdown);
    (base, runs)
}

async fn readyz(base: &str) -> serde_json::Value {
    let res = reqwest::get(format!("{base}/readyz")).await.unwrap();
    assert_eq!(res.status(), 200);
    res.json().await.unwrap()
}

#[tokio::test]
async fn repeated_probes_reuse_one_evaluation() {
    let (base, runs) = serve(|r| r.with_cache_ttl(Duration::from_secs(3600))).await;
    for _ in 0..5 {
        let body = readyz(&base).await;
        assert_eq!(body["status"], "ready");
        assert_eq!(body["checks"]["dependency"], "ok");
    }
    let concurrent = futures::future::join_all((0..5).map(|_| readyz(&base))).await;
    assert_eq!(concurrent.len(), 5);
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the checks ran once");
}

#[tokio::test]
async fn a_zero_ttl_evaluates_every_probe() {
    let (base, runs) = serve(|r| r.with_cache_ttl(Duration::ZERO)).await;
    for _ in 0..3 {
        readyz(&base).await;
    }
    assert_eq!(runs.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_stalled_loop_makes_readyz_503_naming_it_until_it_comes_round() {
    use std::sync::atomic::AtomicU64;
    use uptime_ops::{MonotonicClock, Watchdog};
    let now = Arc::new(AtomicU64::new(0));
    let watchdog =
        Watchdog::with_clock(Duration::from_secs(60), MonotonicClock::manual(now.clone()));
    let engine = watchdog.register("scheduler engine", Duration::from_secs(10));
    let (base, _) = serve(|r| r.with_cache_ttl(Duration::ZERO).with_watchdog(&watchdog)).await;
    let body = readyz(&base).await;
    assert_eq!(body["checks"]["progress"], "ok");

    now.store(61_000, Ordering::SeqCst);
    let res = reqwest::get(format!("{base}/readyz")).await.unwrap();
    assert_eq!(res.status(), 503);
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body["status"], "not ready");
    assert_eq!(
        body["checks"]["progress"],
        "scheduler engine has made no progress for 61 s (stalled after 60 s)"
    );
    assert_eq!(body["checks"]["dependency"], "ok", "the others still pass");
    // `/healthz` is the process, not its loops: a restart is the
    // supervisor's call, not a probe's.
    let health = reqwest::get(format!("{base}/healthz")).await.unwrap();
    assert_eq!(health.status(), 200);

    engine.tick();
    assert_eq!(readyz(&base).await["checks"]["progress"], "ok");
}
