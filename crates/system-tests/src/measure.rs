//! What the benchmarks measure with: counts from the environment, quantiles,
//! request rates, and counting queries in a stack's database.

use crate::Stack;

/// A count from the environment variable `name`, else `default`.
pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The `q` quantile (0 to 1) of `sorted` (ascending); NaN when empty.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * q).round() as usize]
}

/// Requests per second that `client` completes against `url` (answers
/// with a 2xx status), `concurrency` at a time, for `length`.
pub async fn request_rate(
    client: &reqwest::Client,
    url: &str,
    concurrency: usize,
    length: std::time::Duration,
) -> f64 {
    let started = std::time::Instant::now();
    let deadline = started + length;
    let workers = (0..concurrency).map(|_| {
        let (client, url) = (client.clone(), url.to_string());
        tokio::spawn(async move {
            let mut n = 0u64;
            while std::time::Instant::now() < deadline {
                if let Ok(r) = client.get(&url).send().await {
                    let ok = r.status().is_success();
                    if r.bytes().await.is_ok() && ok {
                        n += 1;
                    }
                }
            }
            n
        })
    });
    let total: u64 = futures::future::join_all(workers)
        .await
        .into_iter()
        .map(|r| r.unwrap_or(0))
        .sum();
    total as f64 / started.elapsed().as_secs_f64()
}

/// The plain fresh-connection request rate to `url`: the machine's ceiling
/// for what a checker does per check, 256 at a time for 5 s.
pub async fn fresh_connection_rate(url: &str) -> anyhow::Result<f64> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()?;
    Ok(request_rate(&client, url, 256, std::time::Duration::from_secs(5)).await)
}

/// One `n` column, for the benchmarks' counting queries.
#[derive(diesel::QueryableByName)]
struct N {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub n: i64,
}

/// The `n` that `sql` (one row, one `BIGINT` column named `n`) answers in
/// `stack`'s database.
pub(crate) async fn count(stack: &Stack, sql: &str) -> anyhow::Result<i64> {
    use diesel_async::RunQueryDsl;
    let mut conn = uptime_db::pool::conn(&stack.env.db.pool).await?;
    Ok(diesel::sql_query(sql).get_result::<N>(&mut conn).await?.n)
}

/// Waits until `stored` answers at least `n`, asking at each `every`. An error
/// once 600 s have passed since `started`, which the caller takes before it
/// publishes, so the publishing counts against the limit too.
pub(crate) async fn wait_until_stored(
    n: usize,
    started: std::time::Instant,
    every: std::time::Duration,
    mut stored: impl AsyncFnMut() -> anyhow::Result<i64>,
) -> anyhow::Result<()> {
    loop {
        let stored = stored().await?;
        if stored as usize >= n {
            return Ok(());
        }
        anyhow::ensure!(
            started.elapsed() < std::time::Duration::from_secs(600),
            "only {stored} of {n} stored"
        );
        tokio::time::sleep(every).await;
    }
}
