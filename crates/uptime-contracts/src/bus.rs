//! Connecting to NATS and publishing contract messages.

use crate::Message;
use async_nats::jetstream::{self, context::PublishAckFuture};
use async_nats::HeaderMap;

/// Connects (retrying in the background if the server is not up yet) and
/// returns the client and its JetStream context.
pub async fn connect(
    url: &str,
    name: &str,
) -> Result<(async_nats::Client, jetstream::Context), async_nats::ConnectError> {
    let client = async_nats::ConnectOptions::new()
        .name(name)
        .retry_on_initial_connect()
        // The client's default backoff grows to seconds between attempts
        // while the server is away, so a restarted server went unused for
        // seconds after it was back. Reconnecting to one known server is
        // cheap: try every quarter second at most.
        .reconnect_delay_callback(|attempts| {
            std::time::Duration::from_millis((attempts as u64 * 50).min(250))
        })
        .connect(url)
        .await?;
    let js = jetstream::new(client.clone());
    Ok((client, js))
}

/// Publishes `msg` on its subject with `headers` (which should carry
/// `Nats-Msg-Id` and the trace context). Returns once the server has the
/// message in flight; await the returned future for the stream's
/// acknowledgement. Keeping many such futures in flight is what makes
/// publishing fast.
pub async fn publish<M: Message>(
    js: &jetstream::Context,
    headers: HeaderMap,
    msg: &M,
) -> Result<PublishAckFuture, jetstream::context::PublishError> {
    js.publish_with_headers(M::SUBJECT, headers, msg.to_bytes())
        .await
}

/// Publishes and waits for the stream's acknowledgement.
pub async fn publish_acked<M: Message>(
    js: &jetstream::Context,
    headers: HeaderMap,
    msg: &M,
) -> Result<(), jetstream::context::PublishError> {
    publish(js, headers, msg).await?.await?;
    Ok(())
}
