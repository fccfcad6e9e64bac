//! The checker: stateless replicas that pull due checks from their region's
//! shared durable JetStream consumer ([`region`]), run them (every kind but
//! heartbeats, see [`probes`]) and publish a result for each. [`worker`]
//! explains the delivery guarantees; [`address`] which targets may be
//! reached; [`presence`] how a region's live checkers are known.
//!
//! Tests run it in-process: [`CheckerService::build`] then
//! [`CheckerService::run_until`] a cancellation token.
//!
//! Also: [`http_check`] (one HTTP or keyword check: request, then judge
//! the answer by its [`assertions`], pure and on a budget), [`report`] (a
//! check's verdict before it becomes a result message), [`metrics`] (its
//! Prometheus names) and [`settings`] (its configuration).

pub mod address;
pub mod assertions;
pub mod due;
pub mod http_check;
pub mod metrics;
pub mod presence;
pub mod probes;
pub mod region;
pub mod report;
pub mod settings;
pub mod worker;

use async_nats::jetstream;
use probes::Probes;
use settings::CheckerSettings;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use uptime_consumer::Bus;
use uptime_contracts::{streams, DEFAULT_REGION};
use worker::Worker;

/// Why the checker could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum CheckerError {
    #[error("{0}")]
    Region(String),
    #[error("secrets: {0}")]
    Secrets(#[from] uptime_secrets::SecretError),
    #[error("reading checker.extra_root_ca_pem {path}: {source}")]
    RootCaFile {
        path: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Client(#[from] http_check::ClientBuildError),
    #[error(transparent)]
    Bus(#[from] uptime_consumer::BusError),
    #[error("giving the default region's checker consumer its filter: {0}")]
    DefaultConsumer(#[source] jetstream::stream::ConsumerUpdateError),
    #[error(transparent)]
    Presence(#[from] uptime_contracts::presence::PresenceError),
    #[error("ops server: {0}")]
    Ops(#[from] std::io::Error),
}

/// A checker connected and ready to run.
pub struct CheckerService {
    worker: Arc<Worker>,
    consumer: uptime_consumer::Consumer,
    presence: presence::Presence,
    /// Ticked every presence renewal (`/readyz`).
    renewals: uptime_ops::Progress,
    region: String,
    shell: uptime_ops::Shell,
}

impl CheckerService {
    /// Builds the check client, connects to NATS, creates the streams, the
    /// region's consumer and the presence bucket, and binds the ops server.
    pub async fn build(settings: CheckerSettings) -> Result<Self, CheckerError> {
        let section = &settings.checker;
        region::validate(&section.region).map_err(CheckerError::Region)?;
        // A wrong key configuration refuses to start; none at all only fails
        // the checks that carry a sealed password.
        let keyring = uptime_secrets::Keyring::from_settings(&settings.secrets)?;
        // Install the recorder now: metrics recorded before it would be lost.
        let _ = uptime_telemetry::metrics_handle();
        metrics::describe();
        let probes = Probes::from_settings(&settings)?;

        let bus = Bus::connect(&settings.nats, &format!("checker {}", section.instance_id)).await?;
        // The consumer's loop and the presence renewals: `/readyz` says
        // when either stops coming round.
        let shell = uptime_ops::Shell::bind(
            "checker",
            &settings.ops,
            uptime_ops::Readiness::new().with_nats(&bus.client),
        )?;
        if section.region != DEFAULT_REGION {
            filter_default_consumer(&bus.stream(streams::CHECKS_STREAM).await?).await?;
        }
        let ack_wait = Duration::from_secs(section.ack_wait_secs.max(1));
        let consumer_name = region::consumer_name(&section.region);
        let mut config = streams::durable_pull(&consumer_name, ack_wait, section.max_deliver);
        config.filter_subjects = region::filter_subjects(&section.region);
        // The scaffold labels metrics with a `&'static str`; one name per
        // process, so leaking it costs a few bytes once.
        let consumer_label: &'static str = if consumer_name == streams::CHECKER_CONSUMER {
            streams::CHECKER_CONSUMER
        } else {
            Box::leak(consumer_name.into_boxed_str())
        };
        // Create or update: the filter too (an upgrade from before regions,
        // when `checker` took all).
        let consumer = bus
            .durable(
                streams::CHECKS_STREAM,
                config,
                consumer_label,
                shell.watchdog(),
            )
            .await?;

        let ttl = Duration::from_secs(settings.regions.presence_ttl_secs.max(1));
        let store = uptime_contracts::presence::open_or_create_replicated(
            &bus.js,
            ttl,
            settings.nats.stream_replicas,
        )
        .await?;
        let presence = presence::Presence::new(
            store,
            section.region.clone(),
            section.instance_id.clone(),
            ttl,
        );
        let renewals = shell.watch("checker presence", presence.renew_every());
        let worker = Arc::new(Worker {
            probes,
            js: bus.js,
            instance_id: section.instance_id.clone(),
            concurrency: section.concurrency,
            shutdown_grace: Duration::from_secs(section.shutdown_grace_secs),
            keyring,
            stale_grace: chrono::TimeDelta::seconds(
                i64::try_from(section.stale_grace_secs).unwrap_or(i64::MAX / 1000),
            ),
        });
        Ok(Self {
            worker,
            consumer,
            presence,
            renewals,
            region: section.region.clone(),
            shell,
        })
    }

    /// Where `/healthz`, `/readyz` and `/metrics` are served.
    pub fn ops_addr(&self) -> SocketAddr {
        self.shell.addr()
    }

    /// Runs checks until `shutdown` is cancelled, then finishes the checks in
    /// flight (see [`Worker::run`]) and returns.
    pub async fn run_until(self, shutdown: CancellationToken) -> Result<(), CheckerError> {
        tracing::info!(
            instance_id = %self.worker.instance_id,
            region = %self.region,
            concurrency = self.worker.concurrency,
            ops = %self.shell.addr(),
            "checker running"
        );
        if let Err(e) = self.presence.announce().await {
            tracing::warn!(error = %e, "announcing this checker failed; retrying at the next renewal");
        }
        let presence = &self.presence;
        let checks = async {
            // Also reports `nats_consumer_pending{consumer="checker"}` (or
            // `checker-<region>`): the signal to add checkers.
            let work = self.worker.run(self.consumer, shutdown.clone());
            let renewing = presence.renew_until(shutdown.clone(), self.renewals);
            tokio::join!(work, renewing);
            // Withdrawn once the checks in flight are done: until then this
            // checker still answers for its region.
            presence.withdraw().await;
            Ok::<_, CheckerError>(())
        };
        self.shell.run(shutdown.clone(), checks).await
    }
}

/// Before regions, the consumer `checker` took every due subject. A work
/// queue refuses a second consumer whose filter overlaps, so a regional
/// checker started beside such a consumer (its default-region checkers not
/// yet upgraded) first gives it the default region's filter, keeping the
/// rest of its configuration. A consumer that has a filter is left alone.
async fn filter_default_consumer(stream: &jetstream::stream::Stream) -> Result<(), CheckerError> {
    let existing = stream
        .get_consumer::<jetstream::consumer::pull::Config>(streams::CHECKER_CONSUMER)
        .await;
    let Ok(consumer) = existing else {
        // Not there (or not readable): nothing can overlap with it.
        return Ok(());
    };
    let current = &consumer.cached_info().config;
    if !current.filter_subject.is_empty() || !current.filter_subjects.is_empty() {
        return Ok(());
    }
    tracing::info!(
        consumer = streams::CHECKER_CONSUMER,
        "the default region's consumer takes every due subject; restricting it to its own"
    );
    // What the default region's checkers create, with the consumer's own
    // ack wait and deliveries.
    let mut config = streams::durable_pull(
        streams::CHECKER_CONSUMER,
        current.ack_wait,
        current.max_deliver,
    );
    config.filter_subjects = region::filter_subjects(DEFAULT_REGION);
    stream
        .update_consumer(config)
        .await
        .map(|_| ())
        .map_err(CheckerError::DefaultConsumer)
}

/// Builds and runs the checker until `shutdown`.
pub async fn run(
    settings: CheckerSettings,
    shutdown: CancellationToken,
) -> Result<(), CheckerError> {
    CheckerService::build(settings)
        .await?
        .run_until(shutdown)
        .await
}
