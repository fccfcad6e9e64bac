//! The reads the core asks for, against PostgreSQL: in chunks of ids, each
//! within a timeout, so that a database that does not answer stalls the
//! loop for seconds at most (the core then works from its cache).

use crate::core::{DbFailed, Read, Rows, RESYNC_PAGE};
use std::time::Duration;
use uptime_db::schedule::{self, CheckConfig, MonitorTiming};
use uptime_db::DbError;

/// Ids per `id = ANY($1)` query.
const IDS_PER_QUERY: usize = 10_000;
/// A query that takes longer counts as failed (and is retried).
const DB_TIMEOUT: Duration = Duration::from_secs(5);

/// Runs one read the core asked for. A failure is logged here, where the
/// error is known; the core only learns that it failed.
pub(super) async fn read_rows(pool: &uptime_db::Pool, read: &Read) -> Result<Rows, DbFailed> {
    let result = match read {
        Read::Changed(ids) | Read::Heartbeats(ids) => {
            timings_by_ids(pool, ids).await.map(Rows::Timings)
        }
        Read::CheckConfigs(ids) => check_configs(pool, ids).await.map(Rows::Configs),
        Read::Page { after_id } => timings_page(pool, *after_id).await.map(Rows::Timings),
    };
    result.map_err(|error| {
        match read {
            Read::Changed(ids) => {
                tracing::warn!(%error, changes = ids.len(), "reading changed monitors failed; retrying")
            }
            Read::CheckConfigs(ids) => {
                tracing::warn!(%error, staged = ids.len(), "reading check configurations failed; retrying")
            }
            Read::Heartbeats(ids) => {
                tracing::warn!(%error, deadlines = ids.len(), "reading heartbeat monitors failed; retrying")
            }
            Read::Page { .. } => {
                tracing::warn!(%error, "reading monitors for the resync failed; retrying")
            }
        }
        DbFailed
    })
}

// Waiting for a connection counts towards the timeout, so a database that
// does not answer stalls nothing for long.
async fn timings_by_ids(
    pool: &uptime_db::Pool,
    ids: &[i64],
) -> Result<Vec<MonitorTiming>, DbError> {
    let mut rows = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(IDS_PER_QUERY) {
        rows.extend(
            with_timeout(async {
                let mut conn = uptime_db::pool::conn(pool).await?;
                schedule::active_timings_by_ids(&mut conn, chunk).await
            })
            .await?,
        );
    }
    Ok(rows)
}

async fn check_configs(pool: &uptime_db::Pool, ids: &[i64]) -> Result<Vec<CheckConfig>, DbError> {
    let mut rows = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(IDS_PER_QUERY) {
        rows.extend(
            with_timeout(async {
                let mut conn = uptime_db::pool::conn(pool).await?;
                schedule::active_check_configs(&mut conn, chunk).await
            })
            .await?,
        );
    }
    Ok(rows)
}

async fn timings_page(
    pool: &uptime_db::Pool,
    after_id: i64,
) -> Result<Vec<MonitorTiming>, DbError> {
    with_timeout(async {
        let mut conn = uptime_db::pool::conn(pool).await?;
        schedule::active_timings_page(&mut conn, after_id, RESYNC_PAGE).await
    })
    .await
}

async fn with_timeout<T>(
    query: impl std::future::Future<Output = Result<T, DbError>>,
) -> Result<T, DbError> {
    tokio::time::timeout(DB_TIMEOUT, query)
        .await
        .map_err(|_| DbError::Pool(format!("query timed out after {DB_TIMEOUT:?}")))?
}
