//! `POST /api/v1/monitors/bulk`: up to `bulk_create.max_items` monitors in
//! one request, all or nothing.
//!
//! - Each item is read and validated exactly as `POST /api/v1/monitors`
//!   reads its body ([`super::draft::new_monitor`]); every problem of every
//!   item is answered at once, `400 invalid request body` with `details`
//!   fields prefixed by the item (`monitors[3].target`; `monitors[3]` alone
//!   when the item is not a monitor object at all). A body that is not
//!   `{"monitors": [...]}` is the usual `400`, and so is U+0000 in any
//!   string (the API-wide rule of `validation::Json`, named by its path).
//! - The quotas (monitors, and checks per minute) are checked for the whole
//!   batch in the transaction that inserts, under the same lock of the
//!   user's row as single creates, so concurrent creates of one user (bulk
//!   or not) cannot overshoot them.
//! - The rows and their contact links go in with a few multi-row INSERTs
//!   (uptime-db `monitors::create_many`); after commit each monitor is
//!   announced to the scheduler as a single create announces it, with many
//!   publish acks in flight at once. As for single creates, a lost
//!   announcement is only logged: the rows are committed, and the scheduler
//!   resyncs from the database.
//! - Validation is charged like the work it is, and kept off the threads
//!   that serve everyone: the request costs rate-limit tokens per
//!   monitor and per byte ([`bulk_tokens`]), the bytes' share taken before
//!   the body is read (from `Content-Length`), so a flood of refused
//!   requests costs no parsing; a user's bulk creates queue in a line of
//!   [`BULK_IN_LINE`] (one validated at a time, the rest waiting their turn
//!   with their body read, one more refused with `429 too many requests`);
//!   and the validation (regular expressions compiled, JSONPath
//!   parsed, for every item) runs on a blocking thread, not on an HTTP
//!   worker, so another user's requests are never queued behind it. No
//!   global bound on those threads: it would let one user's validation make
//!   another user's bulk create wait; with the line each user has at most
//!   one of them busy.
//! - A refusal lists at most [`MAX_DETAILS`] problems (a batch of bad items
//!   can hold tens of thousands, each message up to a kilobyte), then one
//!   more entry, field `monitors`, counting those not listed.

use super::batch::{announce_all, insert_batch, Batch};
use super::draft::{new_monitor, Creation};
use super::types::{CreateMonitor, MonitorResponse};
use crate::auth::AuthUser;
use crate::error::{ApiError, ErrorBody, FieldError};
use crate::state::AppState;
use actix_web::{web, FromRequest, HttpRequest, HttpResponse};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// This route's body limit (the others have 64 KiB): a full default batch of
/// monitors without request options (1000 × at most about 3.5 KB) fits;
/// typical monitors are about 200 bytes. Monitors with large request
/// options (headers, body and assertions can take up to about 60 KB) fit
/// fewer to a batch.
pub const BULK_MAX_BODY_BYTES: usize = crate::body_limits::LARGEST_BODY_BYTES;

/// A user's bulk creates in line at once: one validated, the others waiting
/// their turn in arrival order; one more is refused (429). Four, so that a
/// client keeping four in flight (the million benchmark does) is served.
pub const BULK_IN_LINE: usize = 4;

/// Monitors per rate-limit token, beyond the request's own token.
pub const ITEMS_PER_TOKEN: usize = 10;

/// Body bytes per rate-limit token: 1000 typical monitors (about 150 KB)
/// cost more by their number, a batch of monitors with many assertions
/// costs more by its size.
pub const BYTES_PER_TOKEN: usize = 20 * 1024;

/// Problems listed in a refusal at most; one more entry counts the rest.
pub const MAX_DETAILS: usize = 100;

/// The rate-limit tokens a bulk create of `items` monitors in a body of
/// `bytes` costs beyond the one every request takes when it is
/// authenticated: one per 10 monitors or one per 20 KiB, whichever is more
/// (both started), the whole at most half the `burst`. Not the whole burst:
/// a price of a full bucket can only be paid when nothing else of the user's
/// has come for `burst / per_second` seconds, so several such requests in
/// flight at once (each taking its own token first) would keep each other
/// from ever being paid. What validation costs grows with both: parsing
/// with the bytes, the rules with the items, and compiling regular
/// expressions with the bytes of the patterns. A bulk item costs a tenth of
/// a single create: the request's own costs (connection, authentication,
/// the transaction) are shared, its validation is not; that is bounded by
/// the line instead (one at a time per user).
pub fn bulk_tokens(items: usize, bytes: usize, burst: u32) -> u32 {
    let units = items
        .div_ceil(ITEMS_PER_TOKEN)
        .max(bytes.div_ceil(BYTES_PER_TOKEN));
    let total = u32::try_from(units.saturating_add(1)).unwrap_or(u32::MAX);
    total.min((burst / 2).max(1)) - 1
}

/// The body's size as announced: `Content-Length`, or the route's limit
/// when the body comes in chunks of unknown total (charged as the largest).
fn announced_bytes(req: &HttpRequest) -> usize {
    req.headers()
        .get(actix_web::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<usize>().ok())
        .map_or(BULK_MAX_BODY_BYTES, |n| n.min(BULK_MAX_BODY_BYTES))
}

/// `api_bulk_validations_running`: bulk creates being validated, each on a
/// blocking thread, while this lives.
struct Validating;

impl Validating {
    fn start() -> Self {
        metrics::gauge!("api_bulk_validations_running").increment(1.0);
        Self
    }
}

impl Drop for Validating {
    fn drop(&mut self) {
        metrics::gauge!("api_bulk_validations_running").decrement(1.0);
    }
}

/// At most [`MAX_DETAILS`] of `details` (the first, in item order), then one
/// entry counting the others.
fn bounded(mut details: Vec<FieldError>) -> Vec<FieldError> {
    if details.len() > MAX_DETAILS {
        let more = details.len() - MAX_DETAILS;
        details.truncate(MAX_DETAILS);
        details.push(FieldError::new(
            "monitors",
            format!("{more} more problems not listed (the first {MAX_DETAILS} are)"),
        ));
    }
    details
}

/// Many monitors to create at once.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkCreateMonitors {
    /// 1 to 1000 monitors (the deployment's `bulk_create.max_items`, 1000 by
    /// default), each exactly as `POST /api/v1/monitors` takes it.
    #[schema(value_type = Vec<CreateMonitor>, min_items = 1, max_items = 1000)]
    pub monitors: Vec<serde_json::Value>,
}

/// The monitors created, in request order.
#[derive(Debug, Serialize, ToSchema)]
pub struct BulkCreatedMonitors {
    pub monitors: Vec<MonitorResponse>,
}

/// The JSON extractor configuration of this route: the application's, with
/// room for a full batch.
pub(super) fn json_config() -> web::JsonConfig {
    crate::body_limits::json_config(BULK_MAX_BODY_BYTES)
}

/// Each item as the single create validates it, or 400 naming every problem
/// of every item by its index.
fn validate_items(
    org_id: i64,
    items: Vec<serde_json::Value>,
    allow_private_targets: bool,
    regions: &uptime_config::RegionsSettings,
    keyring: Option<&uptime_secrets::Keyring>,
) -> Result<Vec<Creation>, ApiError> {
    let mut details = Vec::new();
    let mut valid = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let req: CreateMonitor = match serde_json::from_value(item) {
            Ok(req) => req,
            Err(e) => {
                details.push(FieldError::new(format!("monitors[{i}]"), e.to_string()));
                continue;
            }
        };
        // Alert rules name other monitors and are rare in an import: they
        // are set per monitor, where `depends_on` is checked for cycles.
        let rules = req.alert_rules.given();
        if !rules.is_empty() {
            for field in rules {
                details.push(FieldError::new(
                    format!("monitors[{i}].{field}"),
                    "alert rules are set per monitor (POST or PATCH /api/v1/monitors)",
                ));
            }
            continue;
        }
        match new_monitor(org_id, req, allow_private_targets, regions, keyring) {
            Ok(creation) => valid.push(creation),
            Err(ApiError::InvalidBody(problems)) => {
                details.extend(
                    problems
                        .into_iter()
                        .map(|p| FieldError::new(format!("monitors[{i}].{}", p.field), p.message)),
                );
            }
            Err(other) => return Err(other),
        }
    }
    if details.is_empty() {
        Ok(valid)
    } else {
        Err(ApiError::InvalidBody(bounded(details)))
    }
}

/// Create many monitors at once, all or nothing.
///
/// Each item is validated as `POST /api/v1/monitors` validates its body; if
/// any is refused, nothing is created and the answer is `400` naming each
/// problem by item (`monitors[3].target`). The whole batch must fit the
/// caller's monitor quota and checks-per-minute budget (else `403`, nothing
/// created). Bodies of this route may have up to 4 MiB.
///
/// The request costs one rate-limit token plus one per 10 monitors or per
/// 20 KiB of body, whichever is more, at most half the burst; the share of
/// the bytes is taken before the body is read. A caller's
/// bulk creates are validated one at a time, in arrival order; while 4 are
/// in line (one validated, three waiting), another is refused with `429 too
/// many requests`. A refusal lists at most 100 problems, then one entry
/// (field `monitors`) counting the rest.
#[utoipa::path(post, path = "/api/v1/monitors/bulk", operation_id = "bulkCreateMonitors", tag = "monitors", request_body = BulkCreateMonitors,
    responses((status = 201, body = BulkCreatedMonitors, description = "every monitor created, in request order",
            headers(("Location" = String, description = "`/api/v1/monitors`: many were created, the location is their list"))),
        (status = 400, body = ErrorBody, description = "`invalid request body`, nothing created: not `{\"monitors\": [...]}`; U+0000 in a string (named by its path, e.g. `monitors[2].name`); no monitors or more than `bulk_create.max_items` (field `monitors`); or items refused by the single create's rules (fields `monitors[<index>].<field>`, or `monitors[<index>]` for an item that is not a monitor; the first 100 problems, then one entry of field `monitors` counting the others)"),
        (status = 403, body = ErrorBody, description = "quota exceeded, nothing created: the batch does not fit the user's monitor quota (`details` field `monitors`), or its active checked monitors would take the user's checks per minute (regions × 60 / interval_secs each) past their budget (field `checks_per_minute`)"),
        (status = 429, body = ErrorBody, description = "nothing created; with `Retry-After`. `rate limit exceeded`: the request costs one token plus one per 10 monitors or per 20 KiB of body, whichever is more (at most half the burst), and the caller's bucket holds fewer; the bytes' share is taken before the body is read (a body without `Content-Length` counts as 4 MiB). `too many requests` (`details` field `monitors`): 4 bulk creates of the caller are in line already (one validated at a time, the others waiting their turn)"),
        (status = 413, body = ErrorBody, description = "`request body too large`: over 4 MiB")))]
pub async fn bulk_create(
    state: web::Data<AppState>,
    user: AuthUser,
    req: HttpRequest,
    payload: web::Payload,
) -> actix_web::Result<HttpResponse> {
    // Charged for its size and in line before the body is read: a refused
    // request costs no parsing.
    let bytes = announced_bytes(&req);
    let paid = bulk_tokens(0, bytes, state.settings.rate_limit.burst);
    state.rate_limiter.check_n(user.org_id, paid)?;
    let place = state
        .rate_limiter
        .join_line(user.org_id, BULK_IN_LINE)
        .ok_or_else(|| ApiError::TooManyRequests {
            retry_after_secs: 1,
            field: "monitors",
            message: format!(
                "at most {BULK_IN_LINE} bulk creates per organisation at a time (one is validated, the \
                 others wait their turn); send this one when one of them has been answered"
            ),
        })?;
    // The body is read before the turn, not after: a body left unread in
    // the socket while earlier bulk creates are validated (tens of seconds)
    // overruns its receive buffer, and the kernel ends up aborting the
    // connection (seen in the fairness benchmark). Each body in memory was
    // paid for by its size, and there are at most 4 per user.
    let body = crate::validation::Json::<BulkCreateMonitors>::from_request(
        &req,
        &mut payload.into_inner(),
    )
    .await?;
    let turn = place.turn().await;
    let items = body.into_inner().monitors;
    // The rest of the price, now that the monitors can be counted.
    let price = bulk_tokens(items.len(), bytes, state.settings.rate_limit.burst);
    let due = price.saturating_sub(paid);
    Ok(create_all(state, user, turn, items, due).await?)
}

/// The bulk create once the caller's turn has come and the body is read.
async fn create_all(
    state: web::Data<AppState>,
    user: AuthUser,
    turn: crate::rate_limit::Turn<i64>,
    items: Vec<serde_json::Value>,
    tokens_due: u32,
) -> Result<HttpResponse, ApiError> {
    let max = state.settings.bulk_create.max_items;
    if items.is_empty() || items.len() > max {
        return Err(ApiError::InvalidBody(vec![FieldError::new(
            "monitors",
            format!("must hold 1 to {max} monitors"),
        )]));
    }
    state.rate_limiter.check_n(user.org_id, tokens_due)?;
    // The turn moves into the blocking task: it passes on when the work
    // ends, even if the client has gone away meanwhile.
    let settings = state.clone();
    let valid = web::block(move || {
        let _turn = turn;
        let _validating = Validating::start();
        validate_items(
            user.org_id,
            items,
            settings.settings.safety.allow_private_targets,
            &settings.settings.regions,
            settings.keyring.as_deref(),
        )
    })
    .await
    .map_err(|e| ApiError::Internal(format!("bulk validation did not finish: {e}")))??;
    // A key with a label selector creates only monitors it can reach.
    if let Some(key) = user.label_selector.as_deref() {
        if let Some(i) = valid.iter().position(|c| !key.selector.matches(&c.labels)) {
            return Err(ApiError::Forbidden {
                field: "labels",
                message: format!(
                    "monitors[{i}]: this key reaches only monitors labelled {}: every monitor's \
                     labels must hold them; nothing was created",
                    key.selector
                ),
            });
        }
    }
    // Labels go into the INSERT only when some monitor has any: a bulk
    // import without labels sends the column's default.
    let any_labels = valid.iter().any(|c| !c.labels.is_empty());
    let mut batch = Batch::default();
    let mut refs: Vec<Option<String>> = Vec::with_capacity(valid.len());
    for creation in valid {
        refs.push(creation.r#ref.clone());
        batch.push(creation, any_labels);
    }

    let quotas = state.settings.quotas.clone();
    let mut conn = state.conn().await?;
    let (rows, contact_ids) = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                let news = batch.news();
                let load = news
                    .iter()
                    .map(|n| crate::quotas::load_of(&n.definition))
                    .sum();
                let count = i64::try_from(news.len()).unwrap_or(i64::MAX);
                crate::quotas::ensure_room_for_monitors(c, &quotas, user.org_id, count, load)
                    .await?;
                insert_batch(c, &user, batch, |i| {
                    format!("monitors[{i}].alert_contact_ids")
                })
                .await
            }
            .scope_boxed()
        })
        .await?;
    drop(conn);

    let ids: Vec<i64> = rows.iter().map(|m| m.id).collect();
    announce_all(&state, &ids, &[]).await;
    let monitors = rows
        .into_iter()
        .zip(contact_ids)
        .zip(refs)
        .map(|((row, ids), r#ref)| {
            MonitorResponse::from_row(row, ids, &state.settings.regions).map(|m| m.with_ref(r#ref))
        })
        .collect::<Result<_, _>>()?;
    // Many were created: the location is their list.
    Ok(HttpResponse::Created()
        .insert_header((actix_web::http::header::LOCATION, "/api/v1/monitors"))
        .json(BulkCreatedMonitors { monitors }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bulk_create_costs_a_token_per_ten_monitors_or_20_kib_at_most_half_the_burst() {
        // Beyond the request's own token.
        assert_eq!(bulk_tokens(1, 200, 100), 1);
        assert_eq!(bulk_tokens(10, 2_000, 100), 1);
        assert_eq!(bulk_tokens(11, 2_000, 100), 2);
        assert_eq!(bulk_tokens(500, 75_000, 200), 50);
        // Few monitors in a big body: the bytes.
        assert_eq!(bulk_tokens(20, 10 * 20 * 1024, 100), 10);
        assert_eq!(bulk_tokens(0, 10 * 20 * 1024 + 1, 100), 11);
        // 101 in all: half the bucket.
        assert_eq!(bulk_tokens(1000, 150_000, 100), 49);
        assert_eq!(bulk_tokens(0, BULK_MAX_BODY_BYTES, 100), 49);
        assert_eq!(bulk_tokens(1000, 150_000, 1), 0);
        assert_eq!(bulk_tokens(1000, 150_000, 0), 0);
    }

    #[test]
    fn refusals_list_the_first_hundred_problems_and_count_the_rest() {
        let details = |n: usize| -> Vec<FieldError> {
            (0..n)
                .map(|i| FieldError::new(format!("monitors[{i}].target"), "bad"))
                .collect()
        };
        assert_eq!(bounded(details(MAX_DETAILS)).len(), MAX_DETAILS);
        let listed = bounded(details(20_000));
        assert_eq!(listed.len(), MAX_DETAILS + 1);
        assert_eq!(listed[99].field, "monitors[99].target");
        assert_eq!(listed[100].field, "monitors");
        assert_eq!(
            listed[100].message,
            "19900 more problems not listed (the first 100 are)"
        );
    }
}
