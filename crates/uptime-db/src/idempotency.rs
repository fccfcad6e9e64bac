//! `Idempotency-Key`: the first response to an organisation's key, kept so a
//! retry of the same request gets it again instead of a second effect.
//!
//! A request claims its key before its handler runs ([`claim`]): the row is
//! inserted in flight (no response). The handler's outcome is then either
//! stored ([`complete`]) or, when it made no lasting effect the client must
//! not be stuck with (a 5xx, a 429), the claim is dropped ([`release`]) so
//! a retry runs again. A claim still in flight after `abandoned_after`
//! belonged to a gateway that died mid-request: the next retry takes it
//! over and runs the request again. That is the one case a request can run
//! twice, and it is documented (docs/api.md).

use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::sql_types::{BigInt, Bytea, Double, Jsonb, Nullable, SmallInt, Text};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use std::time::Duration;

/// A stored first response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    pub status: u16,
    pub content_type: Option<String>,
    /// The headers a replay answers again (`Location`, `ETag`, ...: the
    /// gateway chooses), as (name, value) in the order answered; empty for
    /// responses kept before they were (`response_headers` NULL).
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// What claiming a key found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The key is this request's: run it, then [`complete`] or [`release`].
    Claimed,
    /// The same request was answered before: replay this.
    Replay(StoredResponse),
    /// The key was used for a different request.
    Mismatch,
    /// The same request is running now (another connection).
    InFlight,
}

#[derive(QueryableByName)]
struct Existing {
    #[diesel(sql_type = Bytea)]
    request_sha256: Vec<u8>,
    #[diesel(sql_type = Nullable<SmallInt>)]
    response_status: Option<i16>,
    #[diesel(sql_type = Nullable<Text>)]
    response_content_type: Option<String>,
    #[diesel(sql_type = Nullable<Jsonb>)]
    response_headers: Option<serde_json::Value>,
    #[diesel(sql_type = Nullable<Bytea>)]
    response_body: Option<Vec<u8>>,
}

/// `response_headers` as stored: `[[name, value], ...]`.
fn headers_of(stored: Option<serde_json::Value>) -> Vec<(String, String)> {
    stored
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default()
}

/// Claims `key` of `org_id` for the request digested as `request_sha256`.
/// A row older than `replay_for` is as good as absent (it is pruned later);
/// an in-flight row older than `abandoned_after` is taken over. One
/// statement for the common case (a fresh key), two when the key exists.
pub async fn claim(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    key: &str,
    request_sha256: &[u8],
    replay_for: Duration,
    abandoned_after: Duration,
) -> DbResult<Claim> {
    // Insert, or take over a row that expired or was abandoned; a row that
    // is live is left alone and read below.
    let taken: Vec<Existing> = diesel::sql_query(
        "INSERT INTO idempotency_keys AS k (org_id, idempotency_key, request_sha256)
         VALUES ($1, $2, $3)
         ON CONFLICT (org_id, idempotency_key) DO UPDATE
            SET request_sha256 = EXCLUDED.request_sha256, created_at = now(),
                response_status = NULL, response_content_type = NULL,
                response_headers = NULL, response_body = NULL
          WHERE k.created_at < now() - make_interval(secs => $4)
             OR (k.response_status IS NULL
                 AND k.created_at < now() - make_interval(secs => $5)
                 AND k.request_sha256 = EXCLUDED.request_sha256)
         RETURNING request_sha256, response_status, response_content_type, response_headers,
                   response_body",
    )
    .bind::<BigInt, _>(org_id)
    .bind::<Text, _>(key)
    .bind::<Bytea, _>(request_sha256)
    .bind::<Double, _>(replay_for.as_secs_f64())
    .bind::<Double, _>(abandoned_after.as_secs_f64())
    .load(conn)
    .await?;
    if !taken.is_empty() {
        return Ok(Claim::Claimed);
    }
    let existing: Vec<Existing> = diesel::sql_query(
        "SELECT request_sha256, response_status, response_content_type, response_headers,
                response_body
           FROM idempotency_keys WHERE org_id = $1 AND idempotency_key = $2",
    )
    .bind::<BigInt, _>(org_id)
    .bind::<Text, _>(key)
    .load(conn)
    .await?;
    Ok(match existing.into_iter().next() {
        // Pruned between the two statements: nobody holds it, but claiming
        // again here could race another retry; asking to retry is safe.
        None => Claim::InFlight,
        Some(row) if row.request_sha256 != request_sha256 => Claim::Mismatch,
        Some(Existing {
            response_status: Some(status),
            response_content_type,
            response_headers,
            response_body,
            ..
        }) => Claim::Replay(StoredResponse {
            status: status as u16,
            content_type: response_content_type,
            headers: headers_of(response_headers),
            body: response_body.unwrap_or_default(),
        }),
        Some(_) => Claim::InFlight,
    })
}

/// Stores the response of the request that claimed `key`.
pub async fn complete(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    key: &str,
    response: &StoredResponse,
) -> DbResult<()> {
    diesel::sql_query(
        "UPDATE idempotency_keys
            SET response_status = $3, response_content_type = $4, response_body = $5,
                response_headers = $6
          WHERE org_id = $1 AND idempotency_key = $2 AND response_status IS NULL",
    )
    .bind::<BigInt, _>(org_id)
    .bind::<Text, _>(key)
    .bind::<SmallInt, _>(response.status as i16)
    .bind::<Nullable<Text>, _>(response.content_type.as_deref())
    .bind::<Bytea, _>(&response.body)
    .bind::<Jsonb, _>(serde_json::json!(response.headers))
    .execute(conn)
    .await?;
    Ok(())
}

/// Gives up the claim on `key`: the request left no effect to replay.
pub async fn release(conn: &mut AsyncPgConnection, org_id: i64, key: &str) -> DbResult<()> {
    diesel::sql_query(
        "DELETE FROM idempotency_keys
          WHERE org_id = $1 AND idempotency_key = $2 AND response_status IS NULL",
    )
    .bind::<BigInt, _>(org_id)
    .bind::<Text, _>(key)
    .execute(conn)
    .await?;
    Ok(())
}

/// Retention: removes at most `limit` keys created before `before`.
pub async fn delete_created_before(
    conn: &mut AsyncPgConnection,
    before: DateTime<Utc>,
    limit: i64,
) -> DbResult<u64> {
    let n = diesel::sql_query(
        "DELETE FROM idempotency_keys WHERE ctid IN (
           SELECT ctid FROM idempotency_keys WHERE created_at < $1 LIMIT $2)",
    )
    .bind::<diesel::sql_types::Timestamptz, _>(before)
    .bind::<BigInt, _>(limit)
    .execute(conn)
    .await?;
    Ok(n as u64)
}
