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
//! - [`settings`]: the recorder's configuration (batch size and wait, sweeps).

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

use settings::RecorderSettings;
use std::net::SocketAddr;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use uptime_consumer::Bus;
use uptime_contracts::streams;

/// JetStream redelivers a result until it is acked; there is no limit, because
/// a result given up on would be a result lost (undecodable ones are
/// dead-lettered).
const UNLIMITED_DELIVERIES: i64 = -1;

#[derive(Debug, thiserror::Error)]
pub enum RecorderError {
    #[error(transparent)]
    Db(#[from] uptime_db::DbError),
    #[error(transparent)]
    Bus(#[from] uptime_consumer::BusError),
    #[error("ops server: {0}")]
    Ops(#[from] std::io::Error),
}

/// A recorder connected to its database and broker, with its ops server bound.
pub struct Recorder {
    settings: RecorderSettings,
    pool: uptime_db::Pool,
    bus: Bus,
    consumer: uptime_consumer::Consumer,
    shell: uptime_ops::Shell,
}

impl Recorder {
    /// Connects, creates the streams and the durable consumer (idempotent),
    /// and binds the ops listener (port 0 picks a free one).
    pub async fn build(settings: RecorderSettings) -> Result<Self, RecorderError> {
        let pool = uptime_db::connect(&settings.database)?;
        let postgres = uptime_db::pool::readiness_check(&pool);
        // The consumer's loop and every sweeper's: `/readyz` says when one
        // stops coming round.
        let (bus, shell) = Bus::open_service::<RecorderError>(
            "recorder",
            &settings.nats,
            &settings.ops,
            uptime_ops::Readiness::new().with_check("postgres", postgres),
        )
        .await?;
        let consumer = bus
            .durable(
                streams::RESULTS_STREAM,
                streams::durable_pull(
                    streams::RECORDER_CONSUMER,
                    settings.recorder.ack_wait(),
                    UNLIMITED_DELIVERIES,
                ),
                streams::RECORDER_CONSUMER,
                shell.watchdog(),
            )
            .await?;
        Ok(Self {
            settings,
            pool,
            bus,
            consumer,
            shell,
        })
    }

    /// Where `/healthz`, `/readyz` and `/metrics` are served.
    pub fn ops_addr(&self) -> SocketAddr {
        self.shell.addr()
    }

    /// Records until `shutdown` is cancelled; the batch in progress is finished first.
    pub async fn run_until(self, shutdown: CancellationToken) -> Result<(), RecorderError> {
        let Self {
            settings,
            pool,
            bus,
            consumer,
            mut shell,
        } = self;
        let options = &settings.recorder;
        let js = &bus.js;
        let relay_interval = Duration::from_millis(options.relay_interval_ms.max(10));
        let relay = outbox::run_relay(
            pool.clone(),
            js.clone(),
            outbox::RelayConfig {
                interval: relay_interval,
                min_age: Duration::from_millis(options.relay_min_age_ms),
                batch: 500,
            },
            shutdown.clone(),
            shell.watch("recorder outbox relay", relay_interval),
        );
        shell.spawn("outbox relay", relay);
        // Retention rounds, on one replica at a time (a lease); a round in
        // progress stops after its current batch on shutdown.
        let retention = uptime_retention::runner::run(
            pool.clone(),
            settings.retention.clone(),
            shutdown.clone(),
        );
        shell.spawn("retention", retention);
        // Rounds past their deadline, on every replica (they share the work
        // through row locks).
        let sweeper = rounds::run_sweeper(
            pool.clone(),
            js.clone(),
            Duration::from_secs(settings.regions.presence_ttl_secs.max(1)),
            options.round_sweep_interval(),
            i64::from(options.round_sweep_batch.max(1)),
            shutdown.clone(),
            shell.watch("recorder round sweeper", options.round_sweep_interval()),
        );
        shell.spawn("round sweeper", sweeper);
        // Maintenance windows, on one replica at a time (a lock per round).
        let maintenance = maintenance::run_sweeper(
            pool.clone(),
            js.clone(),
            options.maintenance_sweep_interval(),
            shutdown.clone(),
            shell.watch(
                "recorder maintenance sweeper",
                options.maintenance_sweep_interval(),
            ),
        );
        shell.spawn("maintenance sweeper", maintenance);
        // Reminders and held alerts to release, on every replica (they
        // share the work through row locks).
        let alert_sweeper = alert_sweep::run(
            pool.clone(),
            js.clone(),
            options.alert_sweep_interval(),
            i64::from(options.alert_sweep_batch.max(1)),
            shutdown.clone(),
            shell.watch("recorder alert sweeper", options.alert_sweep_interval()),
        );
        shell.spawn("alert sweeper", alert_sweeper);
        let handler = consumer::BatchHandler {
            pool: pool.clone(),
            js: js.clone(),
            retry_delay: options.retry_delay(),
            rounds: rounds::RoundRules {
                default_regions: settings.regions.default.clone(),
                grace: Duration::from_secs(options.round_grace_secs),
            },
        };
        let batching = uptime_consumer::Batching {
            max_messages: options.batch_size,
            max_wait: options.batch_wait(),
        };
        tracing::info!(ops = %shell.addr(), "recorder started");
        bus.run_batches(
            shell,
            consumer,
            batching,
            |batch| handler.handle(batch),
            shutdown,
        )
        .await
    }
}

/// Builds and runs a recorder until `shutdown`.
pub async fn run(
    settings: RecorderSettings,
    shutdown: CancellationToken,
) -> Result<(), RecorderError> {
    Recorder::build(settings).await?.run_until(shutdown).await
}
