//! Connecting to NATS and publishing contract messages.

use crate::Message;
use async_nats::jetstream::context::{PublishAckFuture, PublishError};
use async_nats::jetstream::{self, publish::PublishAck, ErrorCode};
use async_nats::HeaderMap;
use std::future::{Future, IntoFuture};
use std::pin::Pin;

/// Counter of publishes JetStream refused to store, by `stream`: a work
/// queue at its `max_bytes` (or the server out of storage). Each one is also
/// logged as a warning naming the stream.
pub const PUBLISH_REFUSED_TOTAL: &str = "nats_publish_refused_total";

/// Connects to `settings.url` (retrying in the background if the server is
/// not up yet), with the credentials file if one is configured, and returns
/// the client and its JetStream context. An unreadable credentials file is
/// an error at once: a service must not start and then fail every publish.
pub async fn connect(
    settings: &uptime_config::NatsSettings,
    name: &str,
) -> Result<(async_nats::Client, jetstream::Context), async_nats::ConnectError> {
    let mut options = async_nats::ConnectOptions::new();
    if let Some(path) = &settings.credentials_file {
        options = options.credentials_file(path).await?;
    }
    // `url` may name every node of a cluster, comma separated: the client
    // then starts from any one that answers (the servers tell it the rest).
    let urls: Vec<&str> = settings
        .url
        .split(',')
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .collect();
    let client = options
        .name(name)
        .retry_on_initial_connect()
        // The client's default backoff grows to seconds between attempts
        // while the server is away, so a restarted server went unused for
        // seconds after it was back. Reconnecting to one known server is
        // cheap: try every quarter second at most.
        .reconnect_delay_callback(|attempts| {
            std::time::Duration::from_millis((attempts as u64 * 50).min(250))
        })
        // The client's own event lines are filtered to `warn` (one per
        // reconnect attempt at `info`, see `uptime_telemetry::log_filter`):
        // the loss and the return of the connection are said once each here.
        .event_callback(|event| async move {
            match event {
                async_nats::Event::Disconnected => {
                    tracing::warn!("NATS connection lost; reconnecting")
                }
                async_nats::Event::Connected => tracing::info!("NATS connection established"),
                async_nats::Event::LameDuckMode
                | async_nats::Event::SlowConsumer(_)
                | async_nats::Event::ServerError(_) => tracing::warn!(%event, "NATS event"),
                // A failed attempt while reconnecting: already said above.
                async_nats::Event::ClientError(_)
                | async_nats::Event::Draining
                | async_nats::Event::Closed => tracing::debug!(%event, "NATS event"),
            }
        })
        .connect(urls)
        .await?;
    let js = jetstream::new(client.clone());
    Ok((client, js))
}

/// Publishes `msg` on its subject with `headers` (which should carry
/// `Nats-Msg-Id` and the trace context). Returns once the server has the
/// message in flight; await the returned future for the stream's
/// acknowledgement (a refusal is counted and logged, see
/// [`note_failed_publish`]). Keeping many such futures in flight is what
/// makes publishing fast.
pub async fn publish<M: Message>(
    js: &jetstream::Context,
    headers: HeaderMap,
    msg: &M,
) -> Result<AckFuture, PublishError> {
    let inner = js
        .publish_with_headers(M::SUBJECT, headers, msg.to_bytes())
        .await?;
    Ok(AckFuture {
        inner,
        subject: M::SUBJECT,
    })
}

/// Like [`publish`], on `subject` instead of the message type's own: for
/// messages with a subject per region ([`crate::DueCheck::subject`]).
pub async fn publish_on<M: Message>(
    js: &jetstream::Context,
    subject: String,
    headers: HeaderMap,
    msg: &M,
) -> Result<AckFuture, PublishError> {
    let inner = js
        .publish_with_headers(subject, headers, msg.to_bytes())
        .await?;
    Ok(AckFuture {
        inner,
        subject: M::SUBJECT,
    })
}

/// The stream's acknowledgement of one publish; await it.
#[derive(Debug)]
pub struct AckFuture {
    inner: PublishAckFuture,
    subject: &'static str,
}

impl IntoFuture for AckFuture {
    type Output = Result<PublishAck, PublishError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move {
            let acked = self.inner.await;
            if let Err(e) = &acked {
                note_failed_publish(self.subject, e);
            }
            acked
        })
    }
}

/// Whether JetStream refused to store the message because a bound was hit:
/// the stream is full (`discard: new` at `max_bytes`), or the server's or
/// account's storage is. Retrying helps only once consumers made room.
pub fn is_refused(err: &PublishError) -> bool {
    std::error::Error::source(err)
        .and_then(|source| source.downcast_ref::<jetstream::Error>())
        .is_some_and(|e| {
            matches!(
                e.error_code(),
                ErrorCode::STREAM_STORE_FAILED
                    | ErrorCode::INSUFFICIENT_RESOURCES
                    | ErrorCode::STORAGE_RESOURCES_EXCEEDED
                    | ErrorCode::ACCOUNT_RESOURCES_EXCEEDED
                    | ErrorCode::MEMORY_RESOURCES_EXCEEDED
            )
        })
}

/// Call with every failed publish on `subject` (done for you by [`publish`]
/// and [`publish_acked`]): a refusal by a full stream is counted in
/// [`PUBLISH_REFUSED_TOTAL`] and logged. Other failures (timeouts, no
/// server) are the caller's to report. Returns whether it was a refusal.
pub fn note_failed_publish(subject: &str, err: &PublishError) -> bool {
    if !is_refused(err) {
        return false;
    }
    let stream = crate::streams::stream_of(subject).unwrap_or("unknown");
    metrics::counter!(PUBLISH_REFUSED_TOTAL, "stream" => stream).increment(1);
    tracing::warn!(
        stream,
        subject,
        error = %err,
        "publish refused: the stream is full (its consumers are down or behind); \
         see docs/operations.md, stream limits"
    );
    true
}

/// Publishes and waits for the stream's acknowledgement.
pub async fn publish_acked<M: Message>(
    js: &jetstream::Context,
    headers: HeaderMap,
    msg: &M,
) -> Result<(), PublishError> {
    publish(js, headers, msg).await?.await?;
    Ok(())
}
