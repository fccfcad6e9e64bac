//! [`Ctx`]: what every part of the workload shares, the one-off actions of
//! the timeline as much as the parts that run throughout: the API, the
//! plan, the clocks the plan's times are read on, and the ledger of what
//! the driver did.

use super::api::Api;
use super::ledger::Ledger;
use super::plan::Plan;
use chrono::{DateTime, Utc};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Clone)]
pub struct Ctx {
    pub api: Api,
    pub plan: Plan,
    /// The workload's start, monotonic and on the wall clock.
    pub start: Instant,
    pub start_wall: DateTime<Utc>,
    pub ledger: Arc<Mutex<Ledger>>,
    /// The healthy target's base URL (bulk and applied monitors).
    pub steady_url: String,
    /// Where the applied contact receives.
    pub applied_url: String,
    pub applied_receiver: String,
    /// Status page, feed and badge URLs.
    pub views: Vec<String>,
}

impl Ctx {
    pub(super) async fn at(&self, secs: f64) {
        tokio::time::sleep_until((self.start + Duration::from_secs_f64(secs.max(0.0))).into())
            .await;
    }

    pub(super) fn wall(&self, secs: f64) -> DateTime<Utc> {
        self.start_wall + chrono::Duration::milliseconds((secs * 1000.0) as i64)
    }

    pub(super) fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    pub(super) fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger.lock().expect("ledger")
    }

    pub(super) fn monitor(&self, name: &str) -> i64 {
        self.ledger().monitor(name)
    }
}
