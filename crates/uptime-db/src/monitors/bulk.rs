//! Creating many monitors in one transaction, set-based: a few statements
//! whatever the number of monitors (ids, then the rows in chunks, then the
//! contact links in chunks), never one round trip per monitor.

use crate::models::{Monitor, NewMonitor};
use crate::schema::{monitor_alert_contacts, monitors};
use crate::DbResult;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use std::collections::HashMap;

/// Rows per INSERT: about 25 parameters each, well under PostgreSQL's 65,535.
const MONITORS_PER_INSERT: usize = 1000;
/// Links per INSERT: 2 parameters each.
const LINKS_PER_INSERT: usize = 10_000;

#[derive(QueryableByName)]
struct ReservedId {
    #[diesel(sql_type = diesel::sql_types::Int8)]
    id: i64,
}

/// Inserts `news` and returns the rows in the same order, each with the
/// contacts of the same index in `contact_ids` linked (the caller has checked
/// they are the owner's; each list without duplicates).
///
/// The ids are taken from the monitors' sequence first and inserted
/// explicitly, so each row is matched to its request by id: PostgreSQL does
/// not promise that `RETURNING` lists rows in `VALUES` order.
pub async fn create_many(
    conn: &mut AsyncPgConnection,
    news: Vec<NewMonitor>,
    contact_ids: &[Vec<i64>],
) -> DbResult<Vec<Monitor>> {
    create_many_labelled(conn, news, contact_ids, &[]).await
}

/// [`create_many`], each monitor with the labels of the same index in
/// `labels` (JSON objects; a monitor past its end has none). Labels travel
/// in the same INSERT as the rest of the row.
pub async fn create_many_labelled(
    conn: &mut AsyncPgConnection,
    news: Vec<NewMonitor>,
    contact_ids: &[Vec<i64>],
    labels: &[serde_json::Value],
) -> DbResult<Vec<Monitor>> {
    if news.is_empty() {
        return Ok(Vec::new());
    }
    let count = i32::try_from(news.len()).unwrap_or(i32::MAX);
    let ids: Vec<i64> = diesel::sql_query(
        "SELECT nextval(pg_get_serial_sequence('monitors', 'id')) AS id \
         FROM generate_series(1, $1)",
    )
    .bind::<diesel::sql_types::Int4, _>(count)
    .load::<ReservedId>(conn)
    .await?
    .into_iter()
    .map(|r| r.id)
    .collect();

    let rows: Vec<_> = ids
        .iter()
        .zip(news)
        .enumerate()
        .map(|(i, (&id, new))| {
            let labels = labels.get(i).cloned().unwrap_or_else(super::no_labels);
            (
                monitors::id.eq(id),
                monitors::org_id.eq(new.org_id),
                monitors::labels.eq(labels),
                new.definition,
            )
        })
        .collect();
    let mut by_id: HashMap<i64, Monitor> = HashMap::with_capacity(rows.len());
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let chunk: Vec<_> = rows.by_ref().take(MONITORS_PER_INSERT).collect();
        let inserted: Vec<Monitor> = diesel::insert_into(monitors::table)
            .values(chunk)
            .returning(Monitor::as_returning())
            .get_results(conn)
            .await?;
        by_id.extend(inserted.into_iter().map(|m| (m.id, m)));
    }

    let links: Vec<_> = ids
        .iter()
        .zip(contact_ids)
        .flat_map(|(&monitor_id, contacts)| {
            contacts.iter().map(move |&contact_id| {
                (
                    monitor_alert_contacts::monitor_id.eq(monitor_id),
                    monitor_alert_contacts::contact_id.eq(contact_id),
                )
            })
        })
        .collect();
    for chunk in links.chunks(LINKS_PER_INSERT) {
        diesel::insert_into(monitor_alert_contacts::table)
            .values(chunk.to_vec())
            .on_conflict_do_nothing()
            .execute(conn)
            .await?;
    }

    let mut created: Vec<Monitor> = ids.iter().filter_map(|id| by_id.remove(id)).collect();
    // Only a label selector can already cover a new id (see
    // `maintenance::markers`); one statement for the whole batch.
    if !labels.is_empty() {
        crate::maintenance::markers::mark_joined_rows(conn, &mut created).await?;
    }
    Ok(created)
}
