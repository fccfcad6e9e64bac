//! The NATS side of a consumer service's shell (`uptime_ops::shell` is the
//! rest): connect (retrying until a server answers), create or update the
//! project's streams, create or update the service's durable consumer, and
//! flush what the client still buffers before the process exits.

use crate::{Batching, Consumer, Delivery};
use async_nats::jetstream::{self, consumer::pull, stream::Stream};
use std::future::Future;
use tokio_util::sync::CancellationToken;
use uptime_contracts::{bus, streams};

/// Why a service could not set up its side of the broker.
#[derive(Debug, thiserror::Error)]
pub enum BusError {
    #[error("connecting to NATS: {0}")]
    Connect(#[from] async_nats::ConnectError),
    #[error("creating the streams: {0}")]
    Streams(#[from] streams::StreamsError),
    #[error("opening the stream {stream}: {source}")]
    Stream {
        stream: &'static str,
        source: jetstream::context::GetStreamError,
    },
    #[error("creating the consumer {consumer}: {source}")]
    Consumer {
        consumer: String,
        source: jetstream::stream::ConsumerError,
    },
}

/// A service's connection to NATS, its streams in place.
#[derive(Clone)]
pub struct Bus {
    pub client: async_nats::Client,
    pub js: jetstream::Context,
}

impl Bus {
    /// Connects as `client_name` and creates or updates every stream.
    pub async fn connect(
        settings: &uptime_config::NatsSettings,
        client_name: &str,
    ) -> Result<Self, BusError> {
        let (client, js) = bus::connect(settings, client_name).await?;
        streams::ensure(&js, settings).await?;
        Ok(Self { client, js })
    }

    /// A service's broker side and its shell, in the order they need each
    /// other: connected as `name` with every stream in place, then the ops
    /// server of `name` bound, whose `/readyz` asks `readiness`'s checks and
    /// whether NATS answers.
    pub async fn open_service<E>(
        name: &'static str,
        nats: &uptime_config::NatsSettings,
        ops: &uptime_config::OpsSettings,
        readiness: uptime_ops::Readiness,
    ) -> Result<(Self, uptime_ops::Shell), E>
    where
        E: From<BusError> + From<std::io::Error>,
    {
        let bus = Self::connect(nats, name).await?;
        let shell = uptime_ops::Shell::bind(name, ops, readiness.with_nats(&bus.client))?;
        Ok((bus, shell))
    }

    /// The stream `name`.
    pub async fn stream(&self, name: &'static str) -> Result<Stream, BusError> {
        self.js
            .get_stream(name)
            .await
            .map_err(|source| BusError::Stream {
                stream: name,
                source,
            })
    }

    /// Creates the durable consumer `config` on `stream`, or updates it: a
    /// changed ack wait or filter applies to an existing consumer too (an
    /// upgrade). `label` names it in metrics and dead letters; its loop is
    /// registered with `watchdog` (`/readyz`).
    pub async fn durable(
        &self,
        stream: &'static str,
        config: pull::Config,
        label: &'static str,
        watchdog: &uptime_ops::Watchdog,
    ) -> Result<Consumer, BusError> {
        let consumer = config.durable_name.clone().unwrap_or_default();
        let pull = self
            .stream(stream)
            .await?
            .create_consumer(config)
            .await
            .map_err(|source| BusError::Consumer { consumer, source })?;
        Ok(Consumer::new(self.js.clone(), pull, stream, label).watched_by(watchdog))
    }

    /// The life of a service whose main loop takes `consumer`'s messages in
    /// batches: `shell` runs `handler` on each batch until `shutdown` (the
    /// batch in progress is finished), drains its tasks, and then what the
    /// client still buffers (acks, publishes) goes out before the process
    /// exits.
    pub async fn run_batches<E, H, F>(
        &self,
        shell: uptime_ops::Shell,
        consumer: Consumer,
        batching: Batching,
        handler: H,
        shutdown: CancellationToken,
    ) -> Result<(), E>
    where
        E: From<std::io::Error>,
        H: FnMut(Vec<Delivery>) -> F,
        F: Future<Output = ()>,
    {
        let batches = async {
            consumer
                .run_batches(batching, handler, shutdown.clone())
                .await;
            Ok(())
        };
        shell.run(shutdown.clone(), batches).await?;
        self.flush().await;
        Ok(())
    }

    /// Sends what the client still buffers (acks, publishes): the last step
    /// before the process exits.
    pub async fn flush(&self) {
        if let Err(e) = self.client.flush().await {
            tracing::warn!(error = %e, "flushing NATS on shutdown");
        }
    }
}
