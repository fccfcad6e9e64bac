//! The chaos stage's world: a three-node NATS cluster, every service a
//! process of its own on it (streams and buckets at R3), the monitors
//! created through the bulk API, and a few monitors of a target the stage
//! flips, alerting a webhook receiver.

use super::ChaosOptions;
use crate::processes::{free_port, wait_for_port, ProcessOptions, Processes};
use anyhow::Context;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use uptime_db::models::MonitorDefinition;
use uptime_db::schema::monitors;
use uptime_testkit::receiver::WebhookReceiver;
use uptime_testkit::target::TargetServer;
use uptime_testkit::{TestDb, TestNatsCluster, CLUSTER_NODES};

/// The scheduler replicas, each with its own ops port (for its
/// `scheduler_shards_owned`).
pub const SCHEDULERS: [&str; 2] = ["scheduler-a", "scheduler-b"];
/// The checker replicas (one consumer, its messages shared between them).
pub const CHECKERS: [&str; 2] = ["checker-a", "checker-b"];

pub struct World {
    pub db: TestDb,
    pub cluster: TestNatsCluster,
    pub procs: Processes,
    /// What the load's monitors check (answers 200 to everything): kept
    /// here to live as long as the stage.
    pub _target: TargetServer,
    /// What the alerting monitors check: flipped to 503 during each fault.
    pub flip: TargetServer,
    pub hook: WebhookReceiver,
    /// `(label, ops port)` of each scheduler replica.
    pub scheduler_ops: Vec<(&'static str, u16)>,
    /// The ops port of each checker (for `checks_skipped_stale_total`).
    pub checker_ops: Vec<u16>,
}

pub async fn start(opts: &ChaosOptions) -> anyhow::Result<World> {
    let db = TestDb::create().await;
    let cluster = TestNatsCluster::start().await;
    let target = TargetServer::start().await;
    let flip = TargetServer::start().await;
    let hook = WebhookReceiver::start().await;
    let mut procs = Processes::on_nats(
        ProcessOptions {
            bin_dir: opts.bin_dir.clone(),
            nats_server: "nats-server".into(),
            db_url: db.url.clone(),
        },
        cluster.url(),
        &[
            ("UPTIME_NATS__STREAM_REPLICAS", CLUSTER_NODES.to_string()),
            ("UPTIME_NOTIFIER__INSTANCE_ID", "chaos-notifier".to_string()),
        ],
    )?;

    let api_port = free_port()?;
    let api = format!("http://127.0.0.1:{api_port}");
    let checks_per_minute = (opts.monitors * 60 * 2).div_ceil(opts.interval_secs.max(1) as usize);
    procs.start_service(
        "api-gateway",
        &[
            ("UPTIME_HTTP__LISTEN", format!("127.0.0.1:{api_port}")),
            ("UPTIME_HTTP__PUBLIC_BASE_URL", api.clone()),
            ("UPTIME_QUOTAS__MONITORS", (opts.monitors * 2).to_string()),
            (
                "UPTIME_QUOTAS__CHECKS_PER_MINUTE",
                checks_per_minute.to_string(),
            ),
            ("UPTIME_RATE_LIMIT__PER_SECOND", "100000".into()),
            ("UPTIME_RATE_LIMIT__BURST", "100000".into()),
        ],
    )?;
    wait_for_port(api_port).await?;
    let key = crate::processes::create_user(&opts.bin_dir, &db.url, "chaos").await?;
    crate::million::load::bulk_create(
        &api,
        &key,
        opts.monitors,
        500,
        4,
        opts.interval_secs as u32,
        &target.url(""),
    )
    .await?;
    seed_alerting(&db, opts, &flip, &hook).await?;

    // The pipeline starts once every monitor is in the table: the
    // schedulers load them all at once.
    let mut scheduler_ops = Vec::new();
    for label in SCHEDULERS {
        let port = free_port()?;
        procs.start_named(
            label,
            "scheduler",
            &[("UPTIME_OPS__LISTEN", format!("127.0.0.1:{port}"))],
        )?;
        scheduler_ops.push((label, port));
    }
    let mut checker_ops = Vec::new();
    for label in CHECKERS {
        let port = free_port()?;
        procs.start_named(
            label,
            "checker",
            &[("UPTIME_OPS__LISTEN", format!("127.0.0.1:{port}"))],
        )?;
        checker_ops.push(port);
    }
    procs.start_service("recorder", &[])?;
    procs.start_service("notifier", &[])?;
    for port in scheduler_ops.iter().map(|(_, p)| p).chain(&checker_ops) {
        wait_for_port(*port).await?;
    }
    Ok(World {
        db,
        cluster,
        procs,
        _target: target,
        flip,
        hook,
        scheduler_ops,
        checker_ops,
    })
}

/// `opts.alerting` monitors of the flip target, every one alerting one
/// webhook contact, written to the table of the user the load's monitors
/// belong to (before the schedulers start, so they load them too).
async fn seed_alerting(
    db: &TestDb,
    opts: &ChaosOptions,
    flip: &TargetServer,
    hook: &WebhookReceiver,
) -> anyhow::Result<()> {
    if opts.alerting == 0 {
        return Ok(());
    }
    let mut conn = uptime_db::pool::conn(&db.pool).await?;
    let org: i64 = monitors::table
        .select(monitors::org_id)
        .first(&mut *conn)
        .await
        .context("the load's monitors")?;
    let contact = uptime_db::contacts::create(
        &mut conn,
        &uptime_testkit::fixtures::webhook_contact(
            org,
            "chaos receiver".to_string(),
            hook.url("/chaos"),
        ),
    )
    .await?;
    for m in 0..opts.alerting {
        uptime_testkit::fixtures::insert_alerting_monitor(
            &mut conn,
            org,
            MonitorDefinition {
                name: format!("alerting {m}"),
                target: Some(flip.url(&format!("/flip?m={m}"))),
                interval_secs: opts.interval_secs as i32,
                timeout_secs: 5,
                confirmation_count: 1,
                ..uptime_testkit::fixtures::monitor_definition(uptime_contracts::MonitorKind::Http)
            },
            contact.id,
        )
        .await?;
    }
    Ok(())
}
