//! Keeping a delivery's lease while its send is in progress.
//!
//! A claim leases a delivery for about one send attempt. While the send is
//! still going the keeper renews the lease every third of its length, so a
//! slow but live send is never taken over, while a notifier that dies stops
//! renewing and its deliveries are free again within one lease.
//!
//! Why no delivery is sent by two notifiers at once: another notifier can
//! claim the delivery only once `locked_until` (database time) has passed.
//! The keeper counts the lease from the moment it *asked* for the claim or
//! renewal (local monotonic time, never later than the database's), and ends
//! the send when it could not renew with a third of the lease still left, or
//! when a renewal finds the lease is no longer its own. The one window left is
//! a request already written to the wire when the send is dropped: its
//! receiver may see it once more under the same `webhook-id`.

use std::time::Duration;
use tokio::time::Instant;
use uptime_db::Pool;
use uuid::Uuid;

/// Why a send was stopped before it finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseLost {
    /// The lease is no longer ours: it ran out and was taken, or the delivery
    /// was settled elsewhere.
    TakenOver,
    /// Renewing failed for so long that the lease is about to run out.
    Expiring,
}

/// Renews one delivery's lease until it is lost; never returns otherwise.
pub struct LeaseKeeper<'a> {
    pub pool: &'a Pool,
    pub holder: &'a str,
    pub lease: Duration,
    pub delivery_id: Uuid,
    /// When the claim that took the lease was sent (the lease counts from then).
    pub claimed_at: Instant,
}

impl LeaseKeeper<'_> {
    pub async fn keep(self) -> LeaseLost {
        let every = self.lease / 3;
        let mut valid_until = self.claimed_at + self.lease;
        let mut next = self.claimed_at + every;
        loop {
            tokio::time::sleep_until(next).await;
            let asked = Instant::now();
            next = asked + every;
            match tokio::time::timeout(every, self.renew()).await {
                Ok(Ok(true)) => valid_until = asked + self.lease,
                Ok(Ok(false)) => return LeaseLost::TakenOver,
                Ok(Err(error)) => tracing::warn!(%error, "renewing a delivery lease failed"),
                Err(_) => tracing::warn!("renewing a delivery lease timed out"),
            }
            if Instant::now() + every >= valid_until {
                return LeaseLost::Expiring;
            }
        }
    }

    async fn renew(&self) -> Result<bool, uptime_db::DbError> {
        let mut conn = uptime_db::pool::conn(self.pool).await?;
        uptime_db::deliveries::renew_lease(
            &mut conn,
            self.delivery_id,
            self.holder,
            self.lease.as_secs_f64(),
        )
        .await
    }
}
