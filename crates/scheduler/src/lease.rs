//! Leadership: a PostgreSQL session advisory lock on a dedicated connection.
//!
//! Whoever holds the lock schedules; the others retry every few seconds. The
//! lock belongs to the session, so it is released when the leader's process
//! or connection dies, and the leader learns of a dead connection by pinging
//! it; it then stops scheduling at once. Between the server dropping a dead
//! session and the old leader noticing, two replicas may publish for a
//! moment: harmless, because both publish the same slots under the same
//! message ids.

use diesel_async::{AsyncConnection, AsyncPgConnection};
use std::time::Duration;
use uptime_db::schedule;

/// How long connecting or a liveness ping may take before the lease counts as lost.
const DB_TIMEOUT: Duration = Duration::from_secs(3);

#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error("connecting for the leader lock: {0}")]
    Connect(#[from] diesel::ConnectionError),
    #[error("taking the leader lock: {0}")]
    Query(#[from] uptime_db::DbError),
    #[error("the database did not answer within {0:?}")]
    TimedOut(Duration),
}

/// The held leader lock.
pub struct Lease {
    conn: AsyncPgConnection,
}

impl Lease {
    /// Takes the lock if nobody holds it; `None` when another replica does.
    pub async fn try_acquire(database_url: &str) -> Result<Option<Lease>, LeaseError> {
        let mut conn = within(AsyncPgConnection::establish(database_url)).await??;
        within(schedule::detect_dead_peer_quickly(&mut conn)).await??;
        if within(schedule::try_leader_lock(&mut conn)).await?? {
            Ok(Some(Lease { conn }))
        } else {
            Ok(None)
        }
    }

    /// Whether the session holding the lock still answers.
    pub async fn still_held(&mut self) -> bool {
        match within(schedule::ping_connection(&mut self.conn)).await {
            Ok(Ok(())) => true,
            Ok(Err(error)) => {
                tracing::warn!(%error, "leader connection failed");
                false
            }
            Err(error) => {
                tracing::warn!(%error, "leader connection stalled");
                false
            }
        }
    }

    /// Gives the lock up at once, so a standby takes over without waiting for
    /// the session to time out.
    pub async fn release(mut self) {
        if let Ok(Err(error)) = within(schedule::release_leader_lock(&mut self.conn)).await {
            tracing::warn!(%error, "releasing the leader lock failed; closing the session releases it");
        }
    }
}

async fn within<T>(fut: impl std::future::Future<Output = T>) -> Result<T, LeaseError> {
    tokio::time::timeout(DB_TIMEOUT, fut)
        .await
        .map_err(|_| LeaseError::TimedOut(DB_TIMEOUT))
}
