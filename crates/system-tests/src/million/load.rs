//! What the "million" stage does through the public interfaces: creates the
//! monitors with the bulk API, reads them back while the pipeline runs, and
//! asks JetStream how far behind each consumer is.

use anyhow::Context;
use futures::{StreamExt, TryStreamExt};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Creates `n` http monitors of `interval_secs`, `batch` per request and
/// `in_flight` requests at a time; monitor `i` checks `target_base/m/i`.
/// Returns their ids.
pub async fn bulk_create(
    api: &str,
    key: &str,
    n: usize,
    batch: usize,
    in_flight: usize,
    interval_secs: u32,
    target_base: &str,
) -> anyhow::Result<Vec<i64>> {
    let client = reqwest::Client::new();
    let batches = (0..n).step_by(batch).map(|start| {
        let items: Vec<Value> = (start..(start + batch).min(n))
            .map(|i| {
                json!({
                    "type": "http",
                    "name": format!("m{i}"),
                    "target": format!("{target_base}/m/{i}"),
                    "interval_secs": interval_secs,
                    "timeout_secs": 10,
                })
            })
            .collect();
        let request = client
            .post(format!("{api}/api/v1/monitors/bulk"))
            .bearer_auth(key)
            .json(&json!({ "monitors": items }));
        async move {
            let response = request.send().await?;
            let status = response.status();
            let body: Value = response.json().await?;
            anyhow::ensure!(
                status.as_u16() == 201,
                "bulk create answered {status}: {body}"
            );
            body["monitors"]
                .as_array()
                .context("no monitors in the answer")?
                .iter()
                .map(|m| m["id"].as_i64().context("a monitor without an id"))
                .collect::<anyhow::Result<Vec<i64>>>()
        }
    });
    let created: Vec<Vec<i64>> = futures::stream::iter(batches)
        .buffered(in_flight)
        .try_collect()
        .await?;
    Ok(created.into_iter().flatten().collect())
}

/// `GET /api/v1/monitors/{id}` latencies in seconds (ascending), `workers`
/// clients each asking for a random monitor every `pause`, until `until`.
pub async fn read_latencies(
    api: &str,
    key: &str,
    ids: &[i64],
    workers: usize,
    pause: Duration,
    until: Instant,
) -> Vec<f64> {
    let client = reqwest::Client::new();
    let tasks = (0..workers).map(|w| {
        let (client, api, key) = (client.clone(), api.to_string(), key.to_string());
        // Spread over the ids without a random number generator: a stride
        // walk from a different start per worker.
        let ids: Vec<i64> = ids.iter().skip(w).step_by(7919).copied().collect();
        tokio::spawn(async move {
            let mut out = Vec::new();
            for id in ids.iter().cycle() {
                if Instant::now() >= until {
                    break;
                }
                let started = Instant::now();
                let ok = client
                    .get(format!("{api}/api/v1/monitors/{id}"))
                    .bearer_auth(&key)
                    .send()
                    .await
                    .is_ok_and(|r| r.status().is_success());
                if ok {
                    out.push(started.elapsed().as_secs_f64());
                }
                tokio::time::sleep(pause).await;
            }
            out
        })
    });
    let mut all: Vec<f64> = futures::future::join_all(tasks)
        .await
        .into_iter()
        .flat_map(|r| r.unwrap_or_default())
        .collect();
    all.sort_by(f64::total_cmp);
    all
}

/// Messages each durable consumer has not finished: `(stream/consumer,
/// pending, delivered but unacknowledged)`.
pub async fn backlogs(nats_url: &str) -> anyhow::Result<Vec<(String, u64, usize)>> {
    let client = async_nats::connect(nats_url).await?;
    let js = async_nats::jetstream::new(client);
    let names: Vec<String> = js.stream_names().try_collect().await?;
    let mut out = Vec::new();
    for name in names {
        let stream = js.get_stream(&name).await?;
        let consumers: Vec<_> = stream.consumers().try_collect().await?;
        for c in consumers {
            out.push((
                format!("{name}/{}", c.name),
                c.num_pending,
                c.num_ack_pending,
            ));
        }
    }
    out.sort();
    Ok(out)
}

/// The sum of a Prometheus counter's samples (every label set) in `/metrics`.
pub async fn counter_sum(metrics_url: &str, name: &str) -> anyhow::Result<f64> {
    let text = reqwest::get(metrics_url).await?.text().await?;
    Ok(text
        .lines()
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum())
}

#[derive(diesel::QueryableByName)]
struct HotRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    relname: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n_tup_upd: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n_tup_hot_upd: i64,
}

/// `(table, row updates, of which heap-only)` for the tables the recorder
/// rewrites per result: a heap-only update adds nothing to any index.
pub async fn hot_updates(pool: &uptime_db::Pool) -> anyhow::Result<Vec<(String, i64, i64)>> {
    use diesel_async::RunQueryDsl;
    let mut conn = uptime_db::pool::conn(pool).await?;
    let rows: Vec<HotRow> = diesel::sql_query(
        "SELECT relname::text AS relname, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables \
         WHERE relname IN ('monitors', 'daily_uptime') ORDER BY relname",
    )
    .load(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| (r.relname, r.n_tup_upd, r.n_tup_hot_upd))
        .collect())
}
