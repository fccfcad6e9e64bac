//! The workload once the clock starts: the plan's one-off actions at their
//! times (bulk creates and deletes, applies, windows, pauses, a monitor
//! created and deleted, a test alert, a status page notice) and the parts
//! that run throughout (heartbeat jobs, status page and badge viewers,
//! manual checks, API keys issued, used and revoked, metrics and lists, the
//! on-call who acknowledges the escalated incident). Each stops when the
//! plan's changes end; a request the contract does not allow is a finding.

use super::api::id_of;
use super::context::Ctx;
use super::ledger::now_ms;
use super::plan::{self, Ping};
use chrono::{DateTime, Utc};
use reqwest::{Method, StatusCode};
use serde_json::json;
use std::collections::HashSet;
use std::time::Duration;
use tokio::task::JoinSet;

/// One part of the workload, run from the start.
type Part = fn(Ctx) -> futures::future::BoxFuture<'static, anyhow::Result<()>>;

/// Starts every part of the workload; they end by themselves by the plan's
/// last change.
pub fn start(ctx: &Ctx) -> JoinSet<()> {
    let mut tasks = JoinSet::new();
    let parts: Vec<(&'static str, Part)> = vec![
        ("timeline", |c| Box::pin(super::timeline::run(c))),
        ("interval heartbeat", |c| Box::pin(interval_heartbeat(c))),
        ("cron heartbeat", |c| Box::pin(cron_heartbeat(c))),
        ("viewers", |c| Box::pin(viewers(c))),
        ("manual checks", |c| Box::pin(manual_checks(c))),
        ("keys", |c| Box::pin(keys(c))),
        ("reads", |c| Box::pin(reads(c))),
        ("on-call", |c| Box::pin(on_call(c))),
    ];
    for (name, part) in parts {
        let ctx = ctx.clone();
        tasks.spawn(async move {
            if let Err(e) = part(ctx.clone()).await {
                ctx.api.finding(format!("{name}: {e:#}"));
            }
        });
    }
    tasks
}

/// Runs `action` every `every` seconds from `first` until the last change.
async fn every<F, Fut>(ctx: &Ctx, first: f64, every: f64, mut action: F) -> anyhow::Result<()>
where
    F: FnMut(u64) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    let mut n = 0u64;
    loop {
        let t = first + every * n as f64;
        if t > ctx.plan.last_change() {
            return Ok(());
        }
        ctx.at(t).await;
        if let Err(e) = action(n).await {
            ctx.api.finding(format!("{e:#}"));
        }
        n += 1;
    }
}

async fn ping(ctx: &Ctx, name: &'static str, ping: Ping) -> anyhow::Result<()> {
    let (id, token) = {
        let ledger = ctx.ledger();
        (
            ledger.monitor(name),
            ledger.tokens.get(name).cloned().unwrap_or_default(),
        )
    };
    // Every third success reports the job's exit code 0 instead.
    let exit_code = ctx.ledger().pings_sent % 3 == 2;
    let suffix = match ping {
        Ping::Success if exit_code => "/0",
        Ping::Success => "",
        Ping::Start => "/start",
        Ping::Fail => "/fail",
    };
    let sent = now_ms();
    let url = format!("{}/api/v1/heartbeat/{token}{suffix}", ctx.api.base);
    let (status, body) = ctx.api.get_public(&url).await?;
    anyhow::ensure!(
        status == StatusCode::OK,
        "ping {name}{suffix}: {status} {body}"
    );
    let mut ledger = ctx.ledger();
    ledger.pinged(id, sent, ping);
    ledger.pings_sent += 1;
    Ok(())
}

async fn interval_heartbeat(ctx: Ctx) -> anyhow::Result<()> {
    for (t, kind) in ctx.plan.hb_pings.clone() {
        ctx.at(t).await;
        if let Err(e) = ping(&ctx, "hb-interval", kind).await {
            ctx.api.finding(format!("{e:#}"));
        }
    }
    Ok(())
}

async fn cron_heartbeat(ctx: Ctx) -> anyhow::Result<()> {
    let start_unix = ctx.start_wall.timestamp_millis() as f64 / 1000.0;
    for t in plan::cron_pings(&ctx.plan, start_unix) {
        ctx.at(t).await;
        if let Err(e) = ping(&ctx, "hb-cron", Ping::Success).await {
            ctx.api.finding(format!("{e:#}"));
        }
    }
    Ok(())
}

/// The status page, its feed and the badges, as visitors read them.
async fn viewers(ctx: Ctx) -> anyhow::Result<()> {
    every(&ctx, 5.0, 10.0, |_| async {
        for url in &ctx.views {
            let (status, body) = ctx.api.get_public(url).await?;
            anyhow::ensure!(
                status == StatusCode::OK && !body.is_empty(),
                "GET {url}: {status} {body:.200}"
            );
            if url.ends_with("/status/soak") {
                anyhow::ensure!(
                    body.contains("http-flip"),
                    "the status page does not show http-flip"
                );
            }
            ctx.ledger().count("views");
        }
        Ok(())
    })
    .await
}

/// "Check now", on a monitor with a long interval and on others in turn.
async fn manual_checks(ctx: Ctx) -> anyhow::Result<()> {
    const OTHERS: [&str; 5] = ["http-assert", "dns", "tcp", "tls-valid", "icmp"];
    every(&ctx, 7.0, 20.0, |n| {
        let name = if n % 2 == 0 {
            "manual"
        } else {
            OTHERS[(n as usize / 2) % OTHERS.len()]
        };
        let ctx = ctx.clone();
        async move {
            let id = ctx.monitor(name);
            let (status, body) = ctx
                .api
                .call(Method::POST, &format!("/api/v1/monitors/{id}/check"), None)
                .await?;
            anyhow::ensure!(
                status == StatusCode::ACCEPTED,
                "check now {name}: {status} {body}"
            );
            *ctx.ledger().manual_checks.entry(id).or_default() += 1;
            Ok(())
        }
    })
    .await
}

/// A read key issued, used, refused a write, revoked and refused; a key
/// limited by a label selector that sees only its monitors.
async fn keys(ctx: Ctx) -> anyhow::Result<()> {
    every(&ctx, 20.0, 60.0, |n| {
        let ctx = ctx.clone();
        async move {
            let selector = n % 2 == 1;
            let mut body = json!({"name": format!("soak key {n}"), "scope": "read"});
            if selector {
                body["label_selector"] = json!({"page": "public"});
            }
            let issued = ctx.api.post("/api/v1/api-keys", &body).await?;
            let key = issued["key"].as_str().unwrap_or_default().to_string();
            let id = id_of(&issued)?;
            let (status, list) = ctx
                .api
                .call_as(&key, Method::GET, "/api/v1/monitors?limit=100", None)
                .await?;
            anyhow::ensure!(
                status == StatusCode::OK,
                "a new key lists monitors: {status} {list}"
            );
            if selector {
                let names: HashSet<&str> = list["monitors"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|m| m["name"].as_str())
                    .collect();
                anyhow::ensure!(
                    names == HashSet::from(["http-flip"]),
                    "a key for page=public lists {names:?}"
                );
            }
            let write = json!({"name": "refused", "type": "tcp", "target": "127.0.0.1:1"});
            let (status, _) = ctx
                .api
                .call_as(&key, Method::POST, "/api/v1/monitors", Some(&write))
                .await?;
            anyhow::ensure!(
                status == StatusCode::FORBIDDEN,
                "a read key's write: {status}"
            );
            ctx.api
                .expect(
                    Method::DELETE,
                    &format!("/api/v1/api-keys/{id}"),
                    None,
                    StatusCode::NO_CONTENT,
                )
                .await?;
            let (status, _) = ctx
                .api
                .call_as(&key, Method::GET, "/api/v1/monitors", None)
                .await?;
            anyhow::ensure!(
                status == StatusCode::UNAUTHORIZED,
                "a revoked key's next request: {status}"
            );
            ctx.ledger().count("keys revoked");
            Ok(())
        }
    })
    .await
}

/// What dashboards read: metrics, lists filtered by status, open incidents.
async fn reads(ctx: Ctx) -> anyhow::Result<()> {
    every(&ctx, 3.0, 30.0, |_| async {
        let (status, text) = {
            let r = ctx
                .api
                .http
                .get(format!("{}/api/v1/metrics", ctx.api.base))
                .bearer_auth(&ctx.api.key)
                .send()
                .await?;
            (r.status(), r.text().await.unwrap_or_default())
        };
        anyhow::ensure!(
            status == StatusCode::OK && text.contains("uptime_"),
            "metrics: {status}"
        );
        ctx.api
            .get("/api/v1/monitors?status=down&limit=100")
            .await?;
        ctx.api.get("/api/v1/incidents?state=open").await?;
        let flip = ctx.monitor("http-flip");
        let results = ctx
            .api
            .get(&format!("/api/v1/monitors/{flip}/results?limit=5"))
            .await?;
        anyhow::ensure!(
            results["results"].as_array().is_some_and(|r| !r.is_empty()),
            "no results of http-flip: {results}"
        );
        ctx.api
            .get(&format!("/api/v1/monitors/{flip}/uptime/daily?days=2"))
            .await?;
        let audit = ctx
            .api
            .get("/api/v1/audit-log?resource_kind=monitor&limit=20")
            .await?;
        anyhow::ensure!(
            audit["entries"].as_array().is_some_and(|e| !e.is_empty()),
            "an empty audit log: {audit}"
        );
        ctx.ledger().count("reads");
        Ok(())
    })
    .await
}

/// The on-call person: acknowledges each incident of the escalated monitor
/// `ACK_AFTER_SECS` after it opened (after the second step was told, before
/// the policy would start again).
async fn on_call(ctx: Ctx) -> anyhow::Result<()> {
    let id = ctx.monitor("escalated");
    let mut acked: HashSet<String> = HashSet::new();
    while ctx.elapsed() < ctx.plan.last_change() {
        tokio::time::sleep(Duration::from_secs(3)).await;
        let list = match ctx
            .api
            .get(&format!("/api/v1/incidents?monitor_id={id}&state=open"))
            .await
        {
            Ok(list) => list,
            Err(e) => {
                ctx.api.finding(format!("open incidents: {e:#}"));
                continue;
            }
        };
        for incident in list["incidents"].as_array().into_iter().flatten() {
            let Some(incident_id) = incident["id"].as_str() else {
                continue;
            };
            let started: DateTime<Utc> = incident["started_at"]
                .as_str()
                .unwrap_or_default()
                .parse()?;
            let due =
                started + chrono::Duration::milliseconds((plan::ACK_AFTER_SECS * 1000.0) as i64);
            if Utc::now() < due || acked.contains(incident_id) {
                continue;
            }
            let path = format!("/api/v1/incidents/{incident_id}/acknowledge");
            let answer = ctx
                .api
                .expect(Method::POST, &path, Some(&json!({})), StatusCode::OK)
                .await?;
            anyhow::ensure!(answer["state"] == "acknowledged", "acknowledged: {answer}");
            acked.insert(incident_id.to_string());
            ctx.ledger().count("acknowledged");
        }
    }
    Ok(())
}
