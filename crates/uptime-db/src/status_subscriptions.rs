//! Email subscribers of status pages (migration 2026-11-28-000048): made
//! and confirmed by the status-pages service ([`subscribe`], [`confirm`],
//! [`unsubscribe`]), listed and removed by the page's owner through the
//! api-gateway ([`list`], [`delete`]), and mailed through
//! [`crate::status_page_mails`]. Retention deletes the subscriptions nobody
//! confirmed in time ([`delete_pending_before`]).
//!
//! The address is personal data: [`Subscriber`]'s `Debug` leaves it out,
//! so it cannot reach a log through a debug print.

use crate::owned_rows::OwnedTable;
use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::sql_types::{BigInt, Jsonb, Nullable, Text, Timestamptz};
use diesel::{QueryResult, QueryableByName};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

#[derive(Clone, PartialEq, QueryableByName)]
pub struct Subscriber {
    #[diesel(sql_type = BigInt)]
    pub id: i64,
    #[diesel(sql_type = BigInt)]
    pub page_id: i64,
    #[diesel(sql_type = BigInt)]
    pub org_id: i64,
    #[diesel(sql_type = Text)]
    pub email: String,
    #[diesel(sql_type = Timestamptz)]
    pub created_at: DateTime<Utc>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub confirmed_at: Option<DateTime<Utc>>,
}

impl std::fmt::Debug for Subscriber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscriber")
            .field("id", &self.id)
            .field("page_id", &self.page_id)
            .field("confirmed_at", &self.confirmed_at)
            .finish_non_exhaustive()
    }
}

const SUBSCRIBER: &str = "id, page_id, org_id, email, created_at, confirmed_at";

/// A page's subscribers, by id.
const SUBSCRIBERS: OwnedTable = OwnedTable {
    table: "status_page_subscribers",
    owner: "page_id",
    columns: SUBSCRIBER,
};

/// What a subscribe request did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subscribed {
    /// A new pending subscription; its confirmation mail is queued.
    Created { subscriber_id: i64 },
    /// The address already has a subscription to the page (pending or
    /// confirmed): nothing changed and nothing is sent.
    Existing,
    /// The page has `max_per_page` subscriptions already.
    Full,
}

/// A new subscription as the status-pages service makes it.
pub struct NewSubscription<'a> {
    pub page_id: i64,
    pub org_id: i64,
    pub email: &'a str,
    pub confirm_token_sha256: &'a str,
    pub unsubscribe_token: &'a str,
    /// The confirmation mail's payload.
    pub confirmation: serde_json::Value,
}

#[derive(QueryableByName)]
struct Id {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// Adds a pending subscription and queues its confirmation mail, unless the
/// address has one already or the page is full, in one transaction: the
/// page's row is locked so that concurrent requests cannot overshoot
/// `max_per_page`, and the subscriber and its mail are written together.
pub async fn subscribe(
    conn: &mut AsyncPgConnection,
    new: &NewSubscription<'_>,
    max_per_page: i64,
) -> DbResult<Subscribed> {
    Ok(conn
        .transaction::<_, diesel::result::Error, _>(|c| {
            async move { subscribe_in(c, new, max_per_page).await }.scope_boxed()
        })
        .await?)
}

async fn subscribe_in(
    conn: &mut AsyncPgConnection,
    new: &NewSubscription<'_>,
    max_per_page: i64,
) -> QueryResult<Subscribed> {
    diesel::sql_query("SELECT id FROM status_pages WHERE id = $1 FOR UPDATE")
        .bind::<BigInt, _>(new.page_id)
        .load::<Id>(conn)
        .await?;
    let existing: Vec<Id> = diesel::sql_query(
        "SELECT id FROM status_page_subscribers WHERE page_id = $1 AND lower(email) = lower($2)",
    )
    .bind::<BigInt, _>(new.page_id)
    .bind::<Text, _>(new.email)
    .load(conn)
    .await?;
    if !existing.is_empty() {
        return Ok(Subscribed::Existing);
    }
    let count: Count =
        diesel::sql_query("SELECT count(*) AS n FROM status_page_subscribers WHERE page_id = $1")
            .bind::<BigInt, _>(new.page_id)
            .get_result(conn)
            .await?;
    if count.n >= max_per_page {
        return Ok(Subscribed::Full);
    }
    let created: Id = diesel::sql_query(
        "INSERT INTO status_page_subscribers \
           (page_id, org_id, email, confirm_token_sha256, unsubscribe_token) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind::<BigInt, _>(new.page_id)
    .bind::<BigInt, _>(new.org_id)
    .bind::<Text, _>(new.email)
    .bind::<Text, _>(new.confirm_token_sha256)
    .bind::<Text, _>(new.unsubscribe_token)
    .get_result(conn)
    .await?;
    diesel::sql_query(
        "INSERT INTO status_page_mails (subscriber_id, kind, payload) VALUES ($1, 'confirmation', $2)",
    )
    .bind::<BigInt, _>(created.id)
    .bind::<Jsonb, _>(&new.confirmation)
    .execute(conn)
    .await?;
    Ok(Subscribed::Created {
        subscriber_id: created.id,
    })
}

/// Confirms the pending subscription whose confirmation token has this
/// digest (the token works once); its id, or `None` for an unknown, used or
/// expired (pruned) token.
pub async fn confirm(
    conn: &mut AsyncPgConnection,
    confirm_token_sha256: &str,
) -> DbResult<Option<i64>> {
    let rows: Vec<Id> = diesel::sql_query(
        "UPDATE status_page_subscribers SET confirmed_at = now(), confirm_token_sha256 = NULL \
         WHERE confirm_token_sha256 = $1 RETURNING id",
    )
    .bind::<Text, _>(confirm_token_sha256)
    .load(conn)
    .await?;
    Ok(rows.into_iter().next().map(|r| r.id))
}

/// Ends the subscription of this unsubscribe token: the row (and its
/// queued mails) are deleted at once. `false`: no such subscription (an
/// earlier click already ended it).
pub async fn unsubscribe(conn: &mut AsyncPgConnection, unsubscribe_token: &str) -> DbResult<bool> {
    let n = diesel::sql_query("DELETE FROM status_page_subscribers WHERE unsubscribe_token = $1")
        .bind::<Text, _>(unsubscribe_token)
        .execute(conn)
        .await?;
    Ok(n > 0)
}

// `list` and `delete` (a subscriber goes with its queued mails).
crate::owned_rows::owned_table_fns!(SUBSCRIBERS, Subscriber; page list, delete);

/// Queues one mail of `notice_update_id` to each confirmed subscriber of the
/// page, in one statement: call it in the transaction that writes the
/// update, so the update and its mails exist together or not at all. The
/// unique (update, subscriber) key makes a repeat a no-op. How many were
/// queued.
pub async fn queue_notice_mails(
    conn: &mut AsyncPgConnection,
    page_id: i64,
    notice_update_id: i64,
    payload: &serde_json::Value,
) -> DbResult<u64> {
    let n = diesel::sql_query(
        "INSERT INTO status_page_mails (subscriber_id, kind, notice_update_id, payload) \
         SELECT id, 'notice', $2, $3 FROM status_page_subscribers \
          WHERE page_id = $1 AND confirmed_at IS NOT NULL \
         ON CONFLICT (notice_update_id, subscriber_id) WHERE notice_update_id IS NOT NULL DO NOTHING",
    )
    .bind::<BigInt, _>(page_id)
    .bind::<BigInt, _>(notice_update_id)
    .bind::<Jsonb, _>(payload)
    .execute(conn)
    .await?;
    Ok(n as u64)
}

crate::retention::delete_batch_fn! {
    /// Retention: deletes up to `limit` subscriptions still unconfirmed that
    /// were made before `before` (their confirmation links stop working).
    pub fn delete_pending_before(before): "status_page_subscribers"
        where "confirmed_at IS NULL AND created_at < $1"
}
