//! The `fairness` stage of `just bench`: one user's requests must
//! not delay another's. A reader's `GET /api/v1/monitors` latency, first
//! with nothing else going on, then while another user floods bulk creates
//! that are expensive to validate and refused in the end: `parallel` at a
//! time, back to back, each `items` monitors with `assertions` regular
//! expressions (`matches`) and one invalid item, so nothing is created and
//! no quota spent; only the validation costs. Black-box, before the fix,
//! four such requests froze the API for minutes. Twice: a flood that
//! ignores `Retry-After` (refused before its bodies are read, as it turns
//! out), then the same requests from a user who waits as `Retry-After`
//! says, so that validations do run, one at a time, while the reader asks.
//!
//! The api-gateway is the release binary with its default settings (rate
//! limits, one HTTP worker per core), PostgreSQL and NATS on the same cores,
//! everything on loopback. The reader asks every 100 ms, under its own
//! rate limit.

use crate::million::procstat::{self, Tree};
use crate::percentile;
use crate::processes::{free_port, wait_for_port, ProcessOptions, Processes};
use anyhow::Context;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use uptime_testkit::target::TargetServer;
use uptime_testkit::TestDb;

/// How the stage is sized (`UPTIME_BENCH_FAIRNESS_*`).
#[derive(Debug, Clone)]
pub struct FairnessOptions {
    /// Seconds of the reader alone, then of each flood.
    pub idle_secs: u64,
    pub flood_secs: u64,
    /// Bulk creates of the flooder in flight at once.
    pub parallel: usize,
    /// Valid monitors per bulk create (one invalid item follows them).
    pub items: usize,
    /// `matches` assertions per monitor.
    pub assertions: usize,
    pub bin_dir: PathBuf,
    pub nats_server: PathBuf,
}

/// What the reader saw: latencies (seconds, ascending) of its 200s, and how
/// many answers were something else (or no answer).
struct Reads {
    ok: Vec<f64>,
    other: usize,
}

pub async fn run(opts: FairnessOptions) -> anyhow::Result<()> {
    let ceiling = {
        let target = TargetServer::start().await;
        crate::fresh_connection_rate(&target.url("/")).await?
    };
    let db = TestDb::create().await;
    let mut procs = Processes::start(ProcessOptions {
        bin_dir: opts.bin_dir.clone(),
        nats_server: opts.nats_server.clone(),
        db_url: db.url.clone(),
    })
    .await?;
    let port = free_port()?;
    let api = format!("http://127.0.0.1:{port}");
    procs.start_service(
        "api-gateway",
        &[
            ("UPTIME_HTTP__LISTEN", format!("127.0.0.1:{port}")),
            ("UPTIME_HTTP__PUBLIC_BASE_URL", api.clone()),
        ],
    )?;
    wait_for_port(port).await?;
    let gateway = procs
        .pids()
        .into_iter()
        .find(|(name, _)| *name == "api-gateway")
        .context("no api-gateway process")?
        .1;
    let trees = [Tree {
        name: "api-gateway".into(),
        root: gateway,
    }];
    let user = |name: &'static str| {
        let pool = db.pool.clone();
        async move {
            api_gateway::keys::create_user_with_key(&pool, name)
                .await
                .map(|(_, key)| key)
                .map_err(|e| anyhow::anyhow!("create user {name}: {e}"))
        }
    };
    let flooder = user("flooder").await?;
    let patient = user("patient").await?;
    let reader = user("reader").await?;
    let client = reqwest::Client::new();
    // The reader's list is a full page of monitors.
    let own: Vec<Value> = (0..50).map(|i| monitor(i, 0)).collect();
    let created = client
        .post(format!("{api}/api/v1/monitors/bulk"))
        .bearer_auth(&reader)
        .json(&json!({ "monitors": own }))
        .send()
        .await?;
    anyhow::ensure!(
        created.status().as_u16() == 201,
        "the reader's monitors: {}",
        created.text().await?
    );

    let mut items: Vec<Value> = (0..opts.items)
        .map(|i| monitor(i, opts.assertions))
        .collect();
    items.push(json!({"name": "invalid", "type": "http", "target": "ftp://example.com/"}));
    let body = actix_web::web::Bytes::from(serde_json::to_vec(&json!({ "monitors": items }))?);
    println!(
        "fairness   another user's GET /api/v1/monitors (every 100 ms) idle, then while one user floods POST /api/v1/monitors/bulk \
         ({} at a time, back to back, {} monitors × {} `matches` assertions + 1 invalid item, {:.1} MB each); api-gateway release \
         build, default rate limits; plain fresh-connection requests: {ceiling:.0} req/s",
        opts.parallel,
        opts.items,
        opts.assertions,
        body.len() as f64 / 1e6
    );

    let cpu_before = procstat::read(&trees);
    let idle = reads(&client, &api, &reader, Duration::from_secs(opts.idle_secs)).await;
    let cpu_idle = procstat::read(&trees);
    print_reads("idle", &idle, &cpu_before, &cpu_idle);
    let mut met = true;
    for (label, key, patient) in [
        ("flood, Retry-After ignored", &flooder, false),
        ("flood, Retry-After honoured", &patient, true),
    ] {
        let until = Instant::now() + Duration::from_secs(opts.flood_secs);
        let flood: Vec<_> = (0..opts.parallel)
            .map(|_| {
                tokio::spawn(flood_until(
                    client.clone(),
                    api.clone(),
                    key.clone(),
                    body.clone(),
                    until,
                    patient,
                ))
            })
            .collect();
        let from = procstat::read(&trees);
        let busy = reads(&client, &api, &reader, Duration::from_secs(opts.flood_secs)).await;
        let to = procstat::read(&trees);
        let mut answers: BTreeMap<String, usize> = BTreeMap::new();
        for task in flood {
            for (answer, n) in task.await? {
                *answers.entry(answer).or_default() += n;
            }
        }
        print_reads(label, &busy, &from, &to);
        let listed: Vec<String> = answers.iter().map(|(a, n)| format!("{a} × {n}")).collect();
        println!("    its bulk requests' answers: {}", listed.join(", "));
        met &= percentile(&busy.ok, 0.99) < 0.25 && busy.other == 0;
    }
    println!(
        "  aim: the reader's p99 under 250 ms during both floods ({})",
        if met { "met" } else { "NOT met" }
    );
    Ok(())
}

fn print_reads(label: &str, r: &Reads, from: &procstat::Reading, to: &procstat::Reading) {
    let (gateway_cores, machine) = procstat::cores_between(from, to);
    println!(
        "  reader, {label}: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({} answered 200, {} otherwise); api-gateway {:.2} cores, machine {:.2} busy",
        percentile(&r.ok, 0.5) * 1e3,
        percentile(&r.ok, 0.99) * 1e3,
        r.ok.last().copied().unwrap_or(f64::NAN) * 1e3,
        r.ok.len(),
        r.other,
        gateway_cores[0],
        machine
    );
}

/// An http monitor with `assertions` regular expressions on its body, each
/// different (a Unicode e-mail address pattern, about a millisecond to
/// compile).
fn monitor(i: usize, assertions: usize) -> Value {
    let matches: Vec<Value> = (0..assertions)
        .map(|j| {
            json!({"source": "text_body", "comparison": "matches",
                   "target": format!(r"^[\w.-]+@[\w-]+\.\w{{2,}}$|^id-{j}$")})
        })
        .collect();
    let mut m = json!({"name": format!("m{i}"), "type": "http",
                       "target": format!("https://m{i}.example.com/health")});
    if !matches.is_empty() {
        m["assertions"] = Value::Array(matches);
    }
    m
}

/// The reader's GETs, one every 100 ms (or right after a slower answer).
async fn reads(client: &reqwest::Client, api: &str, key: &str, length: Duration) -> Reads {
    let until = Instant::now() + length;
    let mut out = Reads {
        ok: Vec::new(),
        other: 0,
    };
    while Instant::now() < until {
        let started = Instant::now();
        let answer = client
            .get(format!("{api}/api/v1/monitors"))
            .bearer_auth(key)
            .timeout(Duration::from_secs(60))
            .send()
            .await;
        let ok = match answer {
            Ok(r) => r.status().is_success() && r.bytes().await.is_ok(),
            Err(_) => false,
        };
        if ok {
            out.ok.push(started.elapsed().as_secs_f64());
        } else {
            out.other += 1;
        }
        tokio::time::sleep_until((started + Duration::from_millis(100)).into()).await;
    }
    out.ok.sort_by(f64::total_cmp);
    out
}

/// Bulk creates back to back until `until`, after each 429 waiting its
/// `Retry-After` when `patient`; the answers counted by status and error
/// (`429 rate limit exceeded`, `429 too many requests`, ...).
async fn flood_until(
    client: reqwest::Client,
    api: String,
    key: String,
    body: actix_web::web::Bytes,
    until: Instant,
    patient: bool,
) -> BTreeMap<String, usize> {
    let mut answers = BTreeMap::new();
    while Instant::now() < until {
        let sent = client
            .post(format!("{api}/api/v1/monitors/bulk"))
            .bearer_auth(&key)
            .header("content-type", "application/json")
            .body(body.clone())
            .timeout(Duration::from_secs(300))
            .send()
            .await;
        let answer = match sent {
            Ok(r) => {
                let status = r.status().as_u16();
                let retry_after = r
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
                if let (true, Some(secs)) = (patient, retry_after) {
                    let resume = Instant::now() + Duration::from_secs(secs);
                    tokio::time::sleep_until(resume.min(until).into()).await;
                }
                let error = r
                    .json::<Value>()
                    .await
                    .ok()
                    .and_then(|b| b["error"].as_str().map(str::to_string))
                    .unwrap_or_default();
                format!("{status} {error}")
            }
            Err(e) => {
                // The innermost cause says what happened (reset, closed, timed out).
                let mut cause: &dyn std::error::Error = &e;
                while let Some(inner) = cause.source() {
                    cause = inner;
                }
                format!("no answer ({cause})")
            }
        };
        *answers.entry(answer).or_default() += 1;
    }
    answers
}
