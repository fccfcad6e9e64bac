//! Publishing outbox events to NATS: right after the batch commits, and again
//! from a relay for rows a crash left unpublished. Publishing twice is
//! harmless: `Nats-Msg-Id` is the event id, so JetStream drops the second copy
//! (and the notifier delivers each event to each contact once).

use async_nats::jetstream;
use chrono::Utc;
use futures::stream::{FuturesUnordered, StreamExt};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use uptime_db::recording::{self, NewOutboxEvent};
use uptime_db::{DbError, Pool};
use uuid::Uuid;

/// The event as published: the JSON stored in the outbox.
fn payload_bytes(payload: &serde_json::Value) -> Vec<u8> {
    // A JSON value always serialises.
    serde_json::to_vec(payload).expect("JSON value serialises")
}

/// Publishes `events` with many acknowledgements in flight and returns the
/// ids the stream acknowledged. Failures are logged; those rows stay
/// unpublished for the relay.
pub async fn publish(js: &jetstream::Context, events: &[NewOutboxEvent]) -> Vec<Uuid> {
    let mut in_flight = FuturesUnordered::new();
    for event in events {
        let headers = uptime_telemetry::nats::headers_with_msg_id(&event.id.to_string());
        let payload = payload_bytes(&event.payload);
        match js
            .publish_with_headers(event.subject.clone(), headers, payload.into())
            .await
        {
            Ok(ack) => {
                let id = event.id;
                let subject = event.subject.as_str();
                in_flight.push(async move { (id, subject, ack.await) });
            }
            Err(e) => tracing::warn!(event_id = %event.id, error = %e, "publishing event failed"),
        }
    }
    let mut acked = Vec::with_capacity(events.len());
    while let Some((id, subject, result)) = in_flight.next().await {
        match result {
            Ok(_) => acked.push(id),
            Err(e) => {
                uptime_contracts::bus::note_failed_publish(subject, &e);
                tracing::warn!(event_id = %id, error = %e, "event not acknowledged");
            }
        }
    }
    metrics::counter!("outbox_events_published_total").increment(acked.len() as u64);
    acked
}

/// Publishes `events` and marks the acknowledged ones as published.
pub async fn publish_and_mark(pool: &Pool, js: &jetstream::Context, events: &[NewOutboxEvent]) {
    if events.is_empty() {
        return;
    }
    let acked = publish(js, events).await;
    if let Err(e) = mark(pool, &acked).await {
        // Published but not marked: the relay publishes them again, and
        // JetStream drops the copies.
        tracing::warn!(error = %e, "marking events published failed");
    }
}

async fn mark(pool: &Pool, ids: &[Uuid]) -> Result<(), DbError> {
    let mut conn = uptime_db::pool::conn(pool).await?;
    recording::mark_published(&mut conn, ids).await
}

/// How the relay runs.
#[derive(Debug, Clone, Copy)]
pub struct RelayConfig {
    /// Time between sweeps.
    pub interval: Duration,
    /// Rows younger than this are left to the batch that wrote them.
    pub min_age: Duration,
    /// Rows per sweep.
    pub batch: i64,
}

/// Sweeps the outbox until `shutdown`.
pub async fn run_relay(
    pool: Pool,
    js: jetstream::Context,
    config: RelayConfig,
    shutdown: CancellationToken,
    progress: uptime_ops::Progress,
) {
    uptime_ops::shell::every(config.interval, &shutdown, &progress, || async {
        match relay_once(&pool, &js, config).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(republished = n, "outbox relay published stranded events"),
            Err(e) => tracing::warn!(error = %e, "outbox relay sweep failed"),
        }
    })
    .await
}

/// One sweep: publishes unpublished rows older than `min_age`; returns how many
/// were acknowledged. The rows stay locked while they are published, so two
/// recorders never sweep the same rows at once.
pub async fn relay_once(
    pool: &Pool,
    js: &jetstream::Context,
    config: RelayConfig,
) -> Result<usize, DbError> {
    use diesel_async::scoped_futures::ScopedFutureExt;
    use diesel_async::AsyncConnection;
    let cutoff = Utc::now()
        - chrono::Duration::from_std(config.min_age).unwrap_or(chrono::Duration::seconds(5));
    let mut conn = uptime_db::pool::conn(pool).await?;
    conn.transaction::<_, DbError, _>(|conn| {
        async move {
            let rows = recording::lock_unpublished(conn, cutoff, config.batch).await?;
            if rows.is_empty() {
                return Ok(0);
            }
            let events: Vec<NewOutboxEvent> = rows
                .into_iter()
                .map(|r| NewOutboxEvent {
                    id: r.id,
                    monitor_id: r.monitor_id,
                    subject: r.subject,
                    payload: r.payload,
                })
                .collect();
            let acked = publish(js, &events).await;
            recording::mark_published(conn, &acked).await?;
            Ok(acked.len())
        }
        .scope_boxed()
    })
    .await
}
