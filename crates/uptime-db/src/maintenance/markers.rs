//! Which monitors an open maintenance span covers, written onto the monitor
//! row as its marker (`maintenance_effect`, `_since`, `_until`), which the
//! scheduler and the recorder read with the row they already read.
//!
//! Two writers share one definition of "covered" ([`desired_markers_cte`]):
//! the recorder's sweep ([`super::sweep::refresh_markers`]) for every
//! monitor each round, and the api-gateway for the monitors a request
//! creates or relabels ([`mark_joined`]), in that request's transaction.
//! Without the second, a monitor created inside a `pause` window that
//! selects it by labels would get its first check before the next sweep
//! marked it; with it, the scheduler never sees it unmarked. Because both
//! compute the same tuple, the next sweep finds nothing to change.

use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::sql_types::{Array, BigInt, Nullable, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// The `covered` and `desired` CTEs (without `WITH`): `desired` holds one
/// row `(id, effect, since, until)` per monitor an open span covers, by id
/// or by labels holding the span's selector. A `pause` wins over a
/// `silence`; `since` is the earliest covering span's start.
/// `monitor_filter` is an SQL predicate on `m` (the monitors joined).
pub(crate) fn desired_markers_cte(monitor_filter: &str) -> String {
    format!(
        "covered AS (
             SELECT m.id, s.effect, s.starts_at, s.ends_at
               FROM maintenance_spans s
               JOIN monitors m ON m.org_id = s.org_id AND m.id = ANY (s.monitor_ids)
              WHERE s.closed_at IS NULL AND ({monitor_filter})
             UNION ALL
             SELECT m.id, s.effect, s.starts_at, s.ends_at
               FROM maintenance_spans s
               JOIN monitors m ON m.org_id = s.org_id AND m.labels <> '{{}}'
                              AND m.labels @> s.label_selector
              WHERE s.closed_at IS NULL AND s.label_selector IS NOT NULL
                AND ({monitor_filter})
         ), desired AS (
             SELECT DISTINCT ON (id) id, effect,
                    min(starts_at) OVER (PARTITION BY id) AS since, ends_at AS until
               FROM covered
              ORDER BY id, (effect = 'pause') DESC, ends_at DESC
         )"
    )
}

/// A marker [`mark_joined`] wrote.
#[derive(Debug, Clone, PartialEq, Eq, diesel::QueryableByName)]
pub struct JoinedMarker {
    #[diesel(sql_type = BigInt)]
    pub monitor_id: i64,
    #[diesel(sql_type = Nullable<Text>)]
    pub effect: Option<String>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub since: Option<DateTime<Utc>>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub until: Option<DateTime<Utc>>,
}

/// Marks those of `monitor_ids` (monitors of `org_id` just created or
/// relabelled, in the caller's transaction) that an open span covers and
/// that carry no marker yet. One statement; when the organisation has no
/// open span (the common case) it reads the open spans' partial index and
/// writes nothing. A marker is never cleared here: leaving a window is the
/// sweep's, which also releases the alerts it held.
pub async fn mark_joined(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    monitor_ids: &[i64],
) -> DbResult<Vec<JoinedMarker>> {
    if monitor_ids.is_empty() {
        return Ok(Vec::new());
    }
    let query = format!(
        "WITH {desired}
         UPDATE monitors m
            SET maintenance_effect = d.effect,
                maintenance_since = d.since,
                maintenance_until = d.until
           FROM desired d
          WHERE m.id = d.id AND m.maintenance_effect IS NULL
         RETURNING m.id AS monitor_id, m.maintenance_effect AS effect,
                   m.maintenance_since AS since, m.maintenance_until AS until",
        desired = desired_markers_cte("m.org_id = $1 AND m.id = ANY ($2)"),
    );
    Ok(diesel::sql_query(query)
        .bind::<BigInt, _>(org_id)
        .bind::<Array<BigInt>, _>(monitor_ids)
        .load(conn)
        .await?)
}

/// Runs [`mark_joined`] for `rows` (monitors of one organisation just
/// written) and puts the markers it wrote into them, so the caller answers
/// with what is stored.
pub async fn mark_joined_rows(
    conn: &mut AsyncPgConnection,
    rows: &mut [crate::models::Monitor],
) -> DbResult<()> {
    let Some(org_id) = rows.iter().next().map(|m| m.org_id) else {
        return Ok(());
    };
    let ids: Vec<i64> = rows.iter().map(|m| m.id).collect();
    let marks = mark_joined(conn, org_id, &ids).await?;
    for mark in marks {
        if let Some(row) = rows.iter_mut().find(|m| m.id == mark.monitor_id) {
            row.maintenance = crate::models::MaintenanceMarker {
                effect: mark.effect,
                since: mark.since,
                until: mark.until,
            };
        }
    }
    Ok(())
}
