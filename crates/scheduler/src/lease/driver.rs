//! Runs a [`Replica`] against the KV bucket: follows every key with one
//! watch, and every `renew_every` (by the scheduler's clock, so tests move
//! it) makes the writes the replica asks for, all at once, each bounded by a
//! timeout. The engine learns its grants through a `watch` channel and
//! reports its progress through another.
//!
//! It runs beside the engine, not inside its loop: a database query the
//! engine waits on never delays a renewal.

use super::replica::{EngineProgress, Grants, Key, Op, Outcome, Replica};
use super::{bucket_config, LeaseError, LeaseTiming, BUCKET};
use crate::clock::Clock;
use crate::stats::SchedulerStats;
use async_nats::jetstream::{self, kv};
use bytes::Bytes;
use futures::StreamExt;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// How long one write may take before its outcome counts as unknown.
const WRITE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long the first round waits for the watch to deliver the bucket's keys.
const INITIAL_VIEW_WAIT: Duration = Duration::from_millis(500);
/// How long to wait before retrying after the bucket could not be reached.
const RETRY_MS: i64 = 1_000;

/// The engine's side of the driver.
pub struct LeaseLink {
    pub grants: watch::Receiver<Grants>,
    pub progress: watch::Sender<EngineProgress>,
}

/// The driver's side.
pub struct Driver {
    js: jetstream::Context,
    replicas: usize,
    clock: Clock,
    replica: Replica,
    grants: watch::Sender<Grants>,
    progress: watch::Receiver<EngineProgress>,
    stats: Arc<SchedulerStats>,
    /// Ticked every lease round (`/readyz`: see `uptime_ops::progress`).
    rounds: uptime_ops::Progress,
}

/// A driver for a new replica (a fresh random id) and the engine's link to it.
pub fn new(
    js: jetstream::Context,
    replicas: usize,
    timing: LeaseTiming,
    clock: Clock,
    stats: Arc<SchedulerStats>,
) -> (Driver, LeaseLink) {
    let replica = Replica::new(uuid::Uuid::new_v4().simple().to_string(), timing);
    let (grants, grants_rx) = watch::channel(replica.grants());
    let (progress_tx, progress) = watch::channel(EngineProgress::default());
    (
        Driver {
            js,
            replicas,
            clock,
            replica,
            grants,
            progress,
            stats,
            rounds: uptime_ops::Progress::unwatched(),
        },
        LeaseLink {
            grants: grants_rx,
            progress: progress_tx,
        },
    )
}

/// Creates the bucket, or opens it as it is.
pub async fn bucket(js: &jetstream::Context, replicas: usize) -> Result<kv::Store, LeaseError> {
    match js.create_key_value(bucket_config(replicas)).await {
        Ok(store) => Ok(store),
        // Created by an older release or with other replicas: use it as it is.
        Err(error) => match js.get_key_value(BUCKET).await {
            Ok(store) => Ok(store),
            Err(_) => Err(error.into()),
        },
    }
}

impl Driver {
    /// Ticks `rounds` every lease round.
    pub fn watched_by(mut self, rounds: uptime_ops::Progress) -> Self {
        self.rounds = rounds;
        self
    }

    /// Keeps the leases until `stop`; then gives them all up (the engine has
    /// stopped by then) and removes the member key.
    pub async fn run(mut self, stop: CancellationToken) {
        tracing::info!(replica = self.replica.id(), "scheduler replica joining");
        let mut clock_moves = self.clock.moves();
        'connect: while !stop.is_cancelled() {
            let store = match bucket(&self.js, self.replicas).await {
                Ok(store) => store,
                Err(error) => {
                    tracing::warn!(%error, "lease bucket unavailable; retrying");
                    self.pause(&stop, RETRY_MS).await;
                    continue;
                }
            };
            // Each key's latest value first, then every change.
            let mut watch = match store.watch_with_history(">").await {
                Ok(watch) => watch,
                Err(error) => {
                    tracing::warn!(%error, "cannot watch the lease bucket; retrying");
                    self.pause(&stop, RETRY_MS).await;
                    continue;
                }
            };
            let mut next_tick = self.clock.now_ms();
            // The first round waits for the bucket's current keys (the last
            // of them comes with `delta` 0), or a moment when it is empty:
            // writes from an empty view would only fail their checks.
            let mut caught_up = false;
            let caught_up_by = tokio::time::Instant::now() + INITIAL_VIEW_WAIT;
            loop {
                caught_up |= tokio::time::Instant::now() >= caught_up_by;
                if caught_up {
                    self.tick_if_due(&store, &mut next_tick).await;
                }
                let wait = (next_tick - self.clock.now_ms()).max(0) as u64;
                tokio::select! {
                    biased;
                    _ = stop.cancelled() => {
                        self.leave(&store).await;
                        break 'connect;
                    }
                    entry = watch.next() => match entry {
                        Some(Ok(entry)) => {
                            caught_up |= entry.delta == 0;
                            self.observe(entry);
                        }
                        Some(Err(error)) => {
                            tracing::warn!(%error, "lease watch failed; watching again");
                            continue 'connect;
                        }
                        None => continue 'connect,
                    },
                    _ = clock_moves.changed() => {}
                    _ = tokio::time::sleep(Duration::from_millis(wait)) => {}
                    _ = tokio::time::sleep_until(caught_up_by), if !caught_up => {}
                }
            }
        }
        self.grants.send_replace(Grants {
            generation: u64::MAX,
            shards: Default::default(),
        });
    }

    async fn pause(&self, stop: &CancellationToken, ms: i64) {
        tokio::select! {
            _ = stop.cancelled() => {}
            _ = tokio::time::sleep(Duration::from_millis(ms as u64)) => {}
        }
    }

    fn observe(&mut self, entry: kv::Entry) {
        let Some(key) = Key::parse(&entry.key) else {
            return;
        };
        let now = self.clock.now_ms();
        match entry.operation {
            kv::Operation::Put => {
                self.replica
                    .observe(&key, Some((entry.revision, &entry.value)), now)
            }
            kv::Operation::Delete | kv::Operation::Purge => self.replica.observe(&key, None, now),
        }
    }

    async fn tick_if_due(&mut self, store: &kv::Store, next_tick: &mut i64) {
        let now = self.clock.now_ms();
        if now < *next_tick {
            return;
        }
        let progress = self.progress.borrow().clone();
        let ops = self.replica.tick(now, &progress);
        self.write(store, ops, now).await;
        let grants = self.replica.grants();
        self.grants.send_if_modified(|old| {
            let changed = *old != grants;
            *old = grants;
            changed
        });
        *next_tick = self.clock.now_ms().max(now) + self.replica_timing().renew_every_ms;
        self.stats.record_lease_round();
        self.rounds.tick();
    }

    fn replica_timing(&self) -> LeaseTiming {
        self.replica.timing()
    }

    /// Makes `ops`, all at once, and tells the replica how each ended.
    async fn write(&mut self, store: &kv::Store, ops: Vec<Op>, sent_ms: i64) {
        let id = self.replica.id().to_string();
        let outcomes = futures::future::join_all(ops.iter().map(|op| apply(store, &id, op))).await;
        for (op, outcome) in ops.iter().zip(outcomes) {
            tracing::debug!(?op, ?outcome, "lease write");
            self.replica.applied(op, outcome, sent_ms);
        }
    }

    /// Gives every lease up and deletes the member key.
    async fn leave(&mut self, store: &kv::Store) {
        let progress = self.progress.borrow().clone();
        let releases = self.replica.leave(&progress);
        let now = self.clock.now_ms();
        self.write(store, releases, now).await;
        let member = Key::Member(self.replica.id().to_string()).name();
        if let Ok(Err(error)) = tokio::time::timeout(WRITE_TIMEOUT, store.delete(&member)).await {
            tracing::warn!(%error, "could not remove the member key; it expires");
        }
        tracing::info!(replica = self.replica.id(), "scheduler replica left");
    }
}

async fn apply(store: &kv::Store, id: &str, op: &Op) -> Outcome {
    let result = match op {
        Op::PutMember(value) => {
            let key = Key::Member(id.to_string()).name();
            timed(async { store.put(key, json(value)).await.map_err(|_| false) }).await
        }
        Op::Take {
            shard,
            expected,
            value,
        }
        | Op::Renew {
            shard,
            expected,
            value,
        }
        | Op::Release {
            shard,
            expected,
            value,
        } => {
            let key = Key::Shard(*shard).name();
            timed(async {
                if *expected == 0 {
                    store
                        .create(key, json(value))
                        .await
                        .map_err(|e| e.kind() == kv::CreateErrorKind::AlreadyExists)
                } else {
                    store
                        .update(key, json(value), *expected)
                        .await
                        .map_err(|e| e.kind() == kv::UpdateErrorKind::WrongLastRevision)
                }
            })
            .await
        }
        Op::ForgetMember { id, expected } => {
            let key = Key::Member(id.clone()).name();
            timed(async {
                store
                    .delete_expect_revision(key, Some(*expected))
                    .await
                    .map(|_| 0)
                    .map_err(|_| true)
            })
            .await
        }
    };
    match result {
        Some(Ok(revision)) => Outcome::Stored(revision),
        Some(Err(true)) => Outcome::Conflict,
        Some(Err(false)) | None => Outcome::Unknown,
    }
}

/// `Err(true)`: the revision check failed; `Err(false)`: no answer.
async fn timed(
    write: impl std::future::Future<Output = Result<u64, bool>>,
) -> Option<Result<u64, bool>> {
    tokio::time::timeout(WRITE_TIMEOUT, write).await.ok()
}

fn json<T: serde::Serialize>(value: &T) -> Bytes {
    Bytes::from(serde_json::to_vec(value).unwrap_or_default())
}
