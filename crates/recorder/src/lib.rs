//! The recorder: drains check results from NATS, stores them, moves each
//! monitor through its state machine, keeps the daily uptime rollup and
//! publishes state-change and certificate events through a transactional
//! outbox. Several replicas may run: they share one durable consumer, and
//! every write is idempotent on the result's `check_id`.
//!
//! - [`consumer`]: batches of messages, acks, naks and dead letters.
//! - [`store`]: the one transaction per batch.
//! - [`plan`] and [`state_machine`]: the decisions, free of I/O;
//!   [`alerting`]: whether a transition alerts, and the incident it opens or
//!   ends, with [`flapping`], [`reminders`] and the facts it reads
//!   ([`alert_facts`]); [`alert_sweep`]: reminders and held alerts released
//!   without a check result to ride on.
//! - [`round`]: deciding a round of several regions by quorum, free of I/O;
//!   [`rounds`]: rounds in the database, and the sweeper of overdue ones.
//! - [`outbox`]: publishing events, and the relay for stranded ones.
//!
//! - [`maintenance`]: the sweep that opens and closes maintenance windows,
//!   marks the monitors they cover and releases held alerts at their end.
//!
//! It also runs retention (`uptime_retention::runner`): old result partitions
//! dropped, everything else that grows pruned, one replica at a time.

pub mod alert_facts;
pub mod alert_sweep;
pub mod alerting;
pub mod consumer;
pub mod flapping;
pub mod maintenance;
pub mod outbox;
pub mod plan;
pub mod reminders;
pub mod round;
pub mod rounds;
pub mod settings;
pub mod state_machine;
pub mod store;

use async_nats::jetstream;
use settings::RecorderSettings;
use std::net::SocketAddr;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use uptime_contracts::streams;

/// JetStream redelivers a result until it is acked; there is no limit, because
/// a result given up on would be a result lost (undecodable ones are
/// dead-lettered).
const UNLIMITED_DELIVERIES: i64 = -1;

#[derive(Debug, thiserror::Error)]
pub enum RecorderError {
    #[error(transparent)]
    Db(#[from] uptime_db::DbError),
    #[error("connecting to NATS: {0}")]
    NatsConnect(#[from] async_nats::ConnectError),
    #[error("setting up JetStream: {0}")]
    JetStream(String),
    #[error("ops server: {0}")]
    Ops(#[from] std::io::Error),
}

/// A recorder connected to its database and broker, with its ops server bound.
pub struct Recorder {
    settings: RecorderSettings,
    pool: uptime_db::Pool,
    nats: async_nats::Client,
    js: jetstream::Context,
    consumer: jetstream::consumer::PullConsumer,
    ops: uptime_ops::OpsServer,
    watchdog: uptime_ops::Watchdog,
}

impl Recorder {
    /// Connects, creates the streams and the durable consumer (idempotent),
    /// and binds the ops listener (port 0 picks a free one).
    pub async fn build(settings: RecorderSettings) -> Result<Self, RecorderError> {
        let pool = uptime_db::connect(&settings.database)?;
        let (nats, js) = uptime_contracts::bus::connect(&settings.nats, "recorder").await?;
        streams::ensure(&js, &settings.nats)
            .await
            .map_err(|e| RecorderError::JetStream(e.to_string()))?;
        let consumer = js
            .get_stream(streams::RESULTS_STREAM)
            .await
            .map_err(|e| RecorderError::JetStream(e.to_string()))?
            // Create or update: a changed ack wait applies to an existing
            // consumer too (an upgrade from a longer one).
            .create_consumer(streams::durable_pull(
                streams::RECORDER_CONSUMER,
                settings.recorder.ack_wait(),
                UNLIMITED_DELIVERIES,
            ))
            .await
            .map_err(|e| RecorderError::JetStream(e.to_string()))?;
        // The consumer's loop and every sweeper's: `/readyz` says when one
        // stops coming round.
        let watchdog = uptime_ops::Watchdog::new(settings.ops.stall_after());
        let ops = uptime_ops::OpsServer::bind(
            &settings.ops.listen,
            uptime_ops::Readiness::new()
                .with_check("postgres", uptime_db::pool::readiness_check(&pool))
                .with_nats(&nats)
                .with_watchdog(&watchdog),
        )?;
        Ok(Self {
            settings,
            pool,
            nats,
            js,
            consumer,
            ops,
            watchdog,
        })
    }

    /// Where `/healthz`, `/readyz` and `/metrics` are served.
    pub fn ops_addr(&self) -> SocketAddr {
        self.ops.addr
    }

    /// Records until `shutdown` is cancelled; the batch in progress is finished first.
    pub async fn run_until(self, shutdown: CancellationToken) -> Result<(), RecorderError> {
        let options = &self.settings.recorder;
        let ops_addr = self.ops.addr;
        let ops = tokio::spawn(self.ops.run(shutdown.clone()));
        let watchdog = &self.watchdog;
        let relay_interval = Duration::from_millis(options.relay_interval_ms.max(10));
        let relay = tokio::spawn(outbox::run_relay(
            self.pool.clone(),
            self.js.clone(),
            outbox::RelayConfig {
                interval: relay_interval,
                min_age: Duration::from_millis(options.relay_min_age_ms),
                batch: 500,
            },
            shutdown.clone(),
            watchdog.register("recorder outbox relay", relay_interval),
        ));
        // Retention rounds, on one replica at a time (a lease); a round in
        // progress stops after its current batch on shutdown.
        let retention = tokio::spawn(uptime_retention::runner::run(
            self.pool.clone(),
            self.settings.retention.clone(),
            shutdown.clone(),
        ));
        // Rounds past their deadline, on every replica (they share the work
        // through row locks).
        let sweeper = tokio::spawn(rounds::run_sweeper(
            self.pool.clone(),
            self.js.clone(),
            Duration::from_secs(self.settings.regions.presence_ttl_secs.max(1)),
            options.round_sweep_interval(),
            i64::from(options.round_sweep_batch.max(1)),
            shutdown.clone(),
            watchdog.register("recorder round sweeper", options.round_sweep_interval()),
        ));
        // Maintenance windows, on one replica at a time (a lock per round).
        let maintenance = tokio::spawn(maintenance::run_sweeper(
            self.pool.clone(),
            self.js.clone(),
            options.maintenance_sweep_interval(),
            shutdown.clone(),
            watchdog.register(
                "recorder maintenance sweeper",
                options.maintenance_sweep_interval(),
            ),
        ));
        // Reminders and held alerts to release, on every replica (they
        // share the work through row locks).
        let alert_sweeper = tokio::spawn(alert_sweep::run(
            self.pool.clone(),
            self.js.clone(),
            options.alert_sweep_interval(),
            i64::from(options.alert_sweep_batch.max(1)),
            shutdown.clone(),
            watchdog.register("recorder alert sweeper", options.alert_sweep_interval()),
        ));
        tracing::info!(ops = %ops_addr, "recorder started");
        consumer::run(
            uptime_consumer::Consumer::new(
                self.js.clone(),
                self.consumer,
                streams::RESULTS_STREAM,
                streams::RECORDER_CONSUMER,
            )
            .watched_by(watchdog),
            consumer::BatchHandler {
                pool: self.pool.clone(),
                js: self.js.clone(),
                retry_delay: options.retry_delay(),
                rounds: rounds::RoundRules {
                    default_regions: self.settings.regions.default.clone(),
                    grace: Duration::from_secs(options.round_grace_secs),
                },
            },
            consumer::Batching {
                max_messages: options.batch_size,
                max_wait: options.batch_wait(),
            },
            shutdown,
        )
        .await;
        let _ = relay.await;
        let _ = retention.await;
        let _ = sweeper.await;
        let _ = maintenance.await;
        let _ = alert_sweeper.await;
        if let Ok(Err(e)) = ops.await {
            tracing::warn!(error = %e, "ops server stopped with an error");
        }
        // Acks and publishes still buffered in the client go out before exit.
        if let Err(e) = self.nats.flush().await {
            tracing::warn!(error = %e, "flushing NATS on shutdown");
        }
        tracing::info!("recorder stopped");
        Ok(())
    }
}

/// Builds and runs a recorder until `shutdown`.
pub async fn run(
    settings: RecorderSettings,
    shutdown: CancellationToken,
) -> Result<(), RecorderError> {
    Recorder::build(settings).await?.run_until(shutdown).await
}
