//! Announcing this checker in its region's presence (the `uptime_checkers`
//! bucket, see `uptime_contracts::presence`): an entry at start, renewed
//! every third of the TTL so that one or two lost renewals do not make the
//! region look offline, and withdrawn on a graceful shutdown. A killed
//! checker's entry simply expires after the TTL.

use async_nats::jetstream::kv;
use chrono::Utc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use uptime_contracts::{presence, CheckerPresenceV1};

/// This replica's entry in the presence bucket.
pub struct Presence {
    store: kv::Store,
    region: String,
    instance_id: String,
    ttl: Duration,
}

impl Presence {
    pub fn new(store: kv::Store, region: String, instance_id: String, ttl: Duration) -> Self {
        Self {
            store,
            region,
            instance_id,
            ttl,
        }
    }

    /// Puts (or renews) the entry, as seen now.
    pub async fn announce(&self) -> Result<(), presence::PresenceError> {
        presence::announce(
            &self.store,
            &CheckerPresenceV1 {
                instance_id: self.instance_id.clone(),
                region: self.region.clone(),
                seen_at: Utc::now(),
            },
        )
        .await
    }

    /// How often the entry is renewed: a third of the TTL.
    pub fn renew_every(&self) -> Duration {
        (self.ttl / 3).max(Duration::from_millis(100))
    }

    /// Renews the entry until `shutdown` (a failed renewal is logged and
    /// retried at the next tick: NATS may be briefly away), ticking
    /// `renewals` at each.
    pub async fn renew_until(&self, shutdown: CancellationToken, renewals: uptime_ops::Progress) {
        let mut ticks = tokio::time::interval(self.renew_every());
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // The first tick is immediate; the entry was put at start.
        ticks.tick().await;
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = ticks.tick() => {
                    renewals.tick();
                    if let Err(e) = self.announce().await {
                        tracing::warn!(error = %e, region = %self.region,
                            "renewing this checker's presence failed; retrying at the next renewal");
                    }
                }
            }
        }
    }

    /// Deletes the entry: the region loses this checker at once rather
    /// than after the TTL.
    pub async fn withdraw(&self) {
        match presence::withdraw(&self.store, &self.region, &self.instance_id).await {
            Ok(()) => tracing::info!(region = %self.region, "checker presence withdrawn"),
            Err(e) => tracing::warn!(error = %e, region = %self.region,
                "withdrawing this checker's presence failed; it expires after the TTL"),
        }
    }
}
