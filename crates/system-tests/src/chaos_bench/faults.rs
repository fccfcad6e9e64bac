//! The faults the chaos stage injects, one at a time, and how each is undone
//! at the end of its window.

use super::setup::World;
use super::ChaosOptions;
use anyhow::Context;

#[derive(Debug, Clone, Copy)]
pub enum Fault {
    /// SIGKILL of a NATS node; started again on its store after the window.
    KillNode(usize),
    /// SIGKILL of the node leading `UPTIME_CHECKS` (the due checks).
    KillChecksLeader,
    /// The node leading `UPTIME_CHECKS` cut off from the other two (its
    /// routes dropped and refused), healed after the window.
    PartitionChecksLeader,
    /// SIGKILL of the scheduler replica holding the most shards.
    KillBusiestScheduler,
    KillRecorder,
    /// PostgreSQL stopped in immediate mode (a crash), started after the window.
    RestartPostgres,
}

impl Fault {
    pub fn name(self) -> String {
        match self {
            Fault::KillNode(i) => format!("SIGKILL NATS node n{i}"),
            Fault::KillChecksLeader => "SIGKILL the UPTIME_CHECKS leader".into(),
            Fault::PartitionChecksLeader => "partition the UPTIME_CHECKS leader".into(),
            Fault::KillBusiestScheduler => "SIGKILL the busiest scheduler".into(),
            Fault::KillRecorder => "SIGKILL the recorder".into(),
            Fault::RestartPostgres => "PostgreSQL immediate stop, start".into(),
        }
    }
}

/// What a fault did, so its window's end can undo it.
pub enum Injected {
    Node(usize),
    Partition,
    Service(String),
    Postgres,
}

/// Injects `fault`; returns what to undo and a word on what was hit.
pub async fn inject(
    world: &mut World,
    opts: &ChaosOptions,
    fault: Fault,
) -> anyhow::Result<(Injected, String)> {
    Ok(match fault {
        Fault::KillNode(node) => {
            world.cluster.kill(node).await;
            (Injected::Node(node), format!("n{node}"))
        }
        Fault::KillChecksLeader => {
            let node = checks_leader(world).await?;
            world.cluster.kill(node).await;
            (Injected::Node(node), format!("n{node}"))
        }
        Fault::PartitionChecksLeader => {
            let node = checks_leader(world).await?;
            world.cluster.partition(node);
            (Injected::Partition, format!("n{node}"))
        }
        Fault::KillBusiestScheduler => {
            let (label, shards) = busiest_scheduler(world).await?;
            world.procs.kill(label).await?;
            (
                Injected::Service(label.to_string()),
                format!("{label}, {shards:.0} shards"),
            )
        }
        Fault::KillRecorder => {
            world.procs.kill("recorder").await?;
            (Injected::Service("recorder".into()), String::new())
        }
        Fault::RestartPostgres => {
            pg(opts, "crash").await?;
            (Injected::Postgres, String::new())
        }
    })
}

pub async fn recover(
    world: &mut World,
    opts: &ChaosOptions,
    injected: Injected,
) -> anyhow::Result<()> {
    match injected {
        Injected::Node(node) => world.cluster.restart(node).await,
        Injected::Partition => world.cluster.heal(),
        Injected::Service(label) => world.procs.restart(&label).await?,
        Injected::Postgres => pg(opts, "start").await?,
    }
    Ok(())
}

/// The index of the node leading `UPTIME_CHECKS` now.
async fn checks_leader(world: &World) -> anyhow::Result<usize> {
    let (_client, js) = world.cluster.jetstream().await;
    let mut stream = js
        .get_stream(uptime_contracts::streams::CHECKS_STREAM)
        .await?;
    let info = stream.info().await?;
    let leader = info
        .cluster
        .as_ref()
        .and_then(|c| c.leader.clone())
        .context("the stream has no leader")?;
    world
        .cluster
        .index_of(&leader)
        .with_context(|| format!("no node named {leader}"))
}

/// The scheduler replica holding the most shard leases, by its
/// `scheduler_shards_owned`.
async fn busiest_scheduler(world: &World) -> anyhow::Result<(&'static str, f64)> {
    let mut busiest: Option<(&'static str, f64)> = None;
    for (label, port) in &world.scheduler_ops {
        let metrics = format!("http://127.0.0.1:{port}/metrics");
        let shards = crate::million::load::counter_sum(&metrics, "scheduler_shards_owned").await?;
        if busiest.is_none_or(|(_, most)| shards > most) {
            busiest = Some((label, shards));
        }
    }
    busiest.context("no scheduler replicas")
}

/// `scripts/pg.sh <action> <cluster> <port>` on the bench's cluster.
async fn pg(opts: &ChaosOptions, action: &str) -> anyhow::Result<()> {
    let (cluster, port) = opts
        .pg_cluster
        .clone()
        .context("the PostgreSQL fault needs UPTIME_BENCH_PG_CLUSTER (set by just bench)")?;
    let status = tokio::process::Command::new(&opts.pg_script)
        .args([action, &cluster, &port.to_string()])
        .status()
        .await?;
    anyhow::ensure!(status.success(), "pg.sh {action} failed");
    Ok(())
}

/// Counters that say why a slot was not stored by design, summed over the
/// replicas: the checkers' `checks_skipped_stale_total` (a due check later
/// than both its interval and the stale grace is skipped) and the
/// schedulers' `scheduler_catchup_superseded_total` (an overdue slot
/// replaced by a later one before it went out).
#[derive(Debug, Clone, Copy, Default)]
pub struct SkipCounters {
    pub stale: f64,
    pub superseded: f64,
}

impl SkipCounters {
    /// Read from every replica; one that is down (or restarted, its
    /// counters back at zero) counts as zero.
    pub async fn read(world: &World) -> Self {
        let metric = |port: u16, name: &'static str| async move {
            let url = format!("http://127.0.0.1:{port}/metrics");
            crate::million::load::counter_sum(&url, name)
                .await
                .unwrap_or(0.0)
        };
        let mut out = Self::default();
        for port in &world.checker_ops {
            out.stale += metric(*port, "checks_skipped_stale_total").await;
        }
        for (_, port) in &world.scheduler_ops {
            out.superseded += metric(*port, "scheduler_catchup_superseded_total").await;
        }
        out
    }

    /// What grew since `before` (never below zero: a restart resets).
    pub fn since(self, before: Self) -> Self {
        Self {
            stale: (self.stale - before.stale).max(0.0),
            superseded: (self.superseded - before.superseded).max(0.0),
        }
    }
}
