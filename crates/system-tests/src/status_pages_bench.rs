//! The "status-pages" stage: a status page and a badge under load, each
//! beside nginx serving a static file of the same bytes in the same run,
//! with PostgreSQL's transactions counted across the load (a view must
//! cost none: the service reads the database once per refresh, whatever
//! the traffic).

use anyhow::Context;
use diesel::sql_types::BigInt;
use diesel_async::RunQueryDsl;
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub struct StatusPagesOptions {
    /// Seconds of load per target.
    pub secs: u64,
    /// Concurrent keep-alive connections.
    pub connections: usize,
    /// Monitors on the page.
    pub monitors: usize,
    pub nginx: PathBuf,
}

impl StatusPagesOptions {
    pub fn from_env() -> Self {
        Self {
            secs: crate::env_usize("UPTIME_BENCH_STATUS_PAGES_SECS", 10) as u64,
            connections: crate::env_usize("UPTIME_BENCH_STATUS_PAGES_CONNECTIONS", 32),
            monitors: crate::env_usize("UPTIME_BENCH_STATUS_PAGES_MONITORS", 20),
            nginx: std::env::var("UPTIME_BENCH_NGINX")
                .unwrap_or_else(|_| "/usr/sbin/nginx".into())
                .into(),
        }
    }
}

struct Load {
    requests: usize,
    rate: f64,
    p50_ms: f64,
    p99_ms: f64,
}

/// `connections` clients each sending GET `url` back to back on one
/// keep-alive connection for `secs` (bounded in time and count), every
/// answer checked to be 200 with `bytes` bytes.
async fn load(url: &str, bytes: usize, connections: usize, secs: u64) -> anyhow::Result<Load> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(1)
            .build()?;
        let url = url.to_string();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            while Instant::now() < deadline && latencies.len() < 10_000_000 {
                let sent = Instant::now();
                let res = client.get(&url).send().await?;
                anyhow::ensure!(res.status().is_success(), "{url}: {}", res.status());
                let body = res.bytes().await?;
                anyhow::ensure!(
                    body.len() == bytes,
                    "{url}: {} bytes, not {bytes}",
                    body.len()
                );
                latencies.push(sent.elapsed().as_secs_f64() * 1000.0);
            }
            anyhow::Ok(latencies)
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await??);
    }
    let elapsed = started.elapsed().as_secs_f64();
    all.sort_by(f64::total_cmp);
    Ok(Load {
        requests: all.len(),
        rate: all.len() as f64 / elapsed,
        p50_ms: crate::percentile(&all, 0.5),
        p99_ms: crate::percentile(&all, 0.99),
    })
}

/// nginx serving `files` (name, bytes) from a directory of its own.
async fn nginx(
    binary: &std::path::Path,
    files: &[(&str, &[u8])],
) -> anyhow::Result<(tokio::process::Child, u16, tempfile::TempDir)> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().join("root");
    std::fs::create_dir_all(&root)?;
    for (name, bytes) in files {
        std::fs::write(root.join(name), bytes)?;
    }
    let port = crate::processes::free_port()?;
    let d = dir.path().display();
    // One worker, like the one status-pages worker it is compared with.
    let conf = format!(
        "daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
         events {{ worker_connections 4096; }}\n\
         http {{\n  access_log off;\n  keepalive_requests 1000000;\n\
           client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
           fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
           server {{ listen 127.0.0.1:{port} backlog=4096; root {root}; }}\n}}\n",
        root = root.display()
    );
    let child = crate::processes::start_nginx(binary, dir.path(), conf, port).await?;
    Ok((child, port, dir))
}

#[derive(diesel::QueryableByName)]
struct Commits {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// Transactions committed in the database so far (as the statistics
/// collector last flushed them).
async fn commits(pool: &uptime_db::Pool) -> anyhow::Result<i64> {
    let mut conn = uptime_db::pool::conn(pool).await?;
    diesel::sql_query("SELECT pg_stat_clear_snapshot()")
        .execute(&mut conn)
        .await?;
    let row: Commits = diesel::sql_query(
        "SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()",
    )
    .get_result(&mut conn)
    .await?;
    Ok(row.n)
}

async fn sql(pool: &uptime_db::Pool, statement: &str) -> anyhow::Result<()> {
    let mut conn = uptime_db::pool::conn(pool).await?;
    diesel::sql_query(statement)
        .execute(&mut conn)
        .await
        .with_context(|| statement.to_string())?;
    Ok(())
}

pub async fn run(options: StatusPagesOptions) -> anyhow::Result<()> {
    println!(
        "\n== status-pages: a page and a badge vs nginx serving the same bytes ({} connections, {} s each)",
        options.connections, options.secs
    );
    let db = uptime_testkit::TestDb::create().await;
    let (_, org) = {
        let mut conn = uptime_db::pool::conn(&db.pool).await?;
        uptime_db::organisations::create_user_with_organisation(&mut conn, "bench").await?
    };
    for i in 0..options.monitors {
        sql(
            &db.pool,
            &format!(
                "INSERT INTO monitors (org_id, name, type, target, interval_secs, timeout_secs, expected_status, \
                 confirmation_count, ssl_warn_days, status, labels) \
                 VALUES ({}, 'Service {i}', 'http', 'https://example.com', 60, 10, 200, 1, 14, 'up', '{{\"tier\": \"core\"}}')",
                org.id
            ),
        )
        .await?;
    }
    sql(
        &db.pool,
        "INSERT INTO daily_uptime (monitor_id, day, total_checks, up_checks) \
         SELECT id, current_date - d, 1440, 1440 - (id + d) % 7 FROM monitors, generate_series(0, 89) d",
    )
    .await?;
    sql(
        &db.pool,
        &format!(
            "INSERT INTO status_pages (org_id, slug, title, groups) VALUES ({}, 'bench', 'Bench status', \
             '[{{\"name\": \"Core\", \"selector\": {{\"tier\": \"core\"}}}}]')",
            org.id
        ),
    )
    .await?;
    let token = "bdg_bench";
    sql(
        &db.pool,
        &format!(
            "INSERT INTO monitor_badges (monitor_id, org_id, token_sha256) \
             SELECT min(id), {}, encode(sha256('{token}'), 'hex') FROM monitors",
            org.id
        ),
    )
    .await?;

    let mut settings = status_pages::settings::StatusPagesSettings {
        database: db.settings(),
        ..Default::default()
    };
    settings.ops.listen = "127.0.0.1:0".into();
    settings.status_pages.listen = "127.0.0.1:0".into();
    settings.status_pages.workers = 1;
    settings.status_pages.rate_limit_per_second = 0;
    let service = status_pages::StatusPages::build(settings).await?;
    let base = format!("http://{}", service.addr());
    let shared = service.shared();
    let shutdown = tokio_util::sync::CancellationToken::new();
    tokio::spawn(service.run_until(shutdown.clone()));
    tokio::time::timeout(Duration::from_secs(30), shared.wait_for_generation(1))
        .await
        .context("the first snapshot")?;

    let client = reqwest::Client::new();
    let page_url = format!("{base}/status/bench");
    let badge_url = format!("{base}/badge/{token}/uptime-30d.svg");
    let page = client.get(&page_url).send().await?.bytes().await?;
    let badge = client.get(&badge_url).send().await?.bytes().await?;
    let (_nginx, port, _dir) = nginx(
        &options.nginx,
        &[("page.html", &page), ("badge.svg", &badge)],
    )
    .await?;

    // Statistics of other sessions reach pg_stat_database when they go idle
    // (at most once a second): let the seeding's settle before counting.
    let settled = shared.generation() + 2;
    shared.wait_for_generation(settled).await;
    for (what, url, twin, bytes) in [
        (
            "page",
            page_url.as_str(),
            format!("http://127.0.0.1:{port}/page.html"),
            page.len(),
        ),
        (
            "badge",
            badge_url.as_str(),
            format!("http://127.0.0.1:{port}/badge.svg"),
            badge.len(),
        ),
    ] {
        let generation = shared.generation();
        let before = commits(&db.pool).await?;
        let ours = load(url, bytes, options.connections, options.secs).await?;
        let refreshes = shared.generation() - generation;
        // One more refresh: the last ones' statistics are flushed by then.
        shared.wait_for_generation(shared.generation() + 1).await;
        let after = commits(&db.pool).await?;
        let theirs = load(&twin, bytes, options.connections, options.secs).await?;
        println!(
            "{what} ({bytes} bytes): status-pages {:.0} req/s, p50 {:.2} ms, p99 {:.2} ms ({} requests) | \
             nginx {:.0} req/s, p50 {:.2} ms, p99 {:.2} ms | {:.0}% of nginx's rate",
            ours.rate,
            ours.p50_ms,
            ours.p99_ms,
            ours.requests,
            theirs.rate,
            theirs.p50_ms,
            theirs.p99_ms,
            100.0 * ours.rate / theirs.rate
        );
        println!(
            "  PostgreSQL during the {what} load: {} transactions (one refresh after it included), {refreshes} snapshot refreshes (4 statements each, 2 more each minute), {} views: {:.5} per view",
            after - before,
            ours.requests,
            (after - before) as f64 / ours.requests.max(1) as f64
        );
    }
    shutdown.cancel();
    Ok(())
}
