//! The checker: stateless replicas that pull due checks from one shared
//! durable JetStream consumer, run them (every kind but heartbeats, see
//! [`probes`]) and publish a result for each. [`worker`] explains the
//! delivery guarantees; [`address`] which targets may be reached.
//!
//! Tests run it in-process: [`CheckerService::build`] then
//! [`CheckerService::run_until`] a cancellation token.

pub mod address;
pub mod assertions;
pub mod due;
pub mod http_check;
pub mod metrics;
pub mod probes;
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
use uptime_contracts::{bus, streams};
use worker::Worker;

/// Why the checker could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum CheckerError {
    #[error("reading checker.extra_root_ca_pem {path}: {source}")]
    RootCaFile {
        path: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Client(#[from] http_check::ClientBuildError),
    #[error("connecting to NATS: {0}")]
    Connect(#[from] async_nats::ConnectError),
    #[error("creating streams: {0}")]
    Streams(#[from] streams::StreamsError),
    #[error("opening the checks stream: {0}")]
    Stream(#[from] jetstream::context::GetStreamError),
    #[error("creating the checker consumer: {0}")]
    Consumer(#[from] jetstream::stream::ConsumerError),
    #[error("ops server: {0}")]
    Ops(#[source] std::io::Error),
}

/// A checker connected and ready to run.
pub struct CheckerService {
    worker: Arc<Worker>,
    consumer: uptime_consumer::Consumer,
    ops: uptime_ops::OpsServer,
}

impl CheckerService {
    /// Builds the check client, connects to NATS, creates the streams and the
    /// shared consumer, and binds the ops server.
    pub async fn build(settings: CheckerSettings) -> Result<Self, CheckerError> {
        // Install the recorder now: metrics recorded before it would be lost.
        let _ = uptime_telemetry::metrics_handle();
        metrics::describe();
        let section = &settings.checker;
        let probes = Probes::from_settings(&settings)?;

        let (client, js) = bus::connect(
            &settings.nats.url,
            &format!("checker {}", section.instance_id),
        )
        .await?;
        streams::ensure(&js, &settings.nats).await?;
        let ack_wait = Duration::from_secs(section.ack_wait_secs.max(1));
        let consumer = js
            .get_stream(streams::CHECKS_STREAM)
            .await?
            // Create or update: a changed ack wait applies to an existing
            // consumer too (an upgrade from a longer one).
            .create_consumer(streams::durable_pull(
                streams::CHECKER_CONSUMER,
                ack_wait,
                section.max_deliver,
            ))
            .await?;

        let readiness = uptime_ops::Readiness::new().with_nats(&client);
        let ops = uptime_ops::OpsServer::bind(&settings.ops.listen, readiness)
            .map_err(CheckerError::Ops)?;

        let consumer = uptime_consumer::Consumer::new(
            js.clone(),
            consumer,
            streams::CHECKS_STREAM,
            streams::CHECKER_CONSUMER,
        );
        let worker = Arc::new(Worker {
            probes,
            js,
            instance_id: section.instance_id.clone(),
            concurrency: section.concurrency,
            shutdown_grace: Duration::from_secs(section.shutdown_grace_secs),
        });
        Ok(Self {
            worker,
            consumer,
            ops,
        })
    }

    /// Where `/healthz`, `/readyz` and `/metrics` are served.
    pub fn ops_addr(&self) -> SocketAddr {
        self.ops.addr
    }

    /// Runs checks until `shutdown` is cancelled, then finishes the checks in
    /// flight (see [`Worker::run`]) and returns.
    pub async fn run_until(self, shutdown: CancellationToken) -> Result<(), CheckerError> {
        tracing::info!(
            instance_id = %self.worker.instance_id,
            concurrency = self.worker.concurrency,
            ops = %self.ops.addr,
            "checker running"
        );
        let ops = tokio::spawn(self.ops.run(shutdown.clone()));
        // Also reports `nats_consumer_pending{consumer="checker"}`: the
        // signal to add checkers.
        self.worker.run(self.consumer, shutdown).await;
        match ops.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(CheckerError::Ops(e)),
            Err(e) => tracing::error!(error = %e, "ops server task failed"),
        }
        tracing::info!("checker stopped");
        Ok(())
    }
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
