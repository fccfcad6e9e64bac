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

use super::draft::new_monitor;
use super::handlers::{announce, no_such_contacts};
use super::types::{CreateMonitor, MonitorResponse};
use crate::auth::AuthUser;
use crate::error::{ApiError, ErrorBody, FieldError};
use crate::state::AppState;
use actix_web::{web, HttpResponse};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use uptime_contracts::MonitorChange;
use uptime_db::models::NewMonitor;
use utoipa::ToSchema;

/// This route's body limit (the others have 64 KiB): a full default batch of
/// monitors without request options (1000 × at most about 3.5 KB) fits;
/// typical monitors are about 200 bytes. Monitors with large request
/// options (headers, body and assertions can take up to about 60 KB) fit
/// fewer to a batch.
pub const BULK_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Announcements awaiting their publish ack at once.
const ANNOUNCE_IN_FLIGHT: usize = 1024;

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
    crate::startup::json_config(BULK_MAX_BODY_BYTES)
}

/// Each item as the single create validates it, or 400 naming every problem
/// of every item by its index. Contact ids come back sorted, deduplicated.
fn validate_items(
    user_id: i64,
    items: Vec<serde_json::Value>,
    allow_private_targets: bool,
    regions: &uptime_config::RegionsSettings,
    keyring: Option<&uptime_secrets::Keyring>,
) -> Result<Vec<(NewMonitor, Vec<i64>)>, ApiError> {
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
        match new_monitor(user_id, req, allow_private_targets, regions, keyring) {
            Ok((new, mut contact_ids)) => {
                contact_ids.sort_unstable();
                contact_ids.dedup();
                valid.push((new, contact_ids));
            }
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
        Err(ApiError::InvalidBody(details))
    }
}

/// Create many monitors at once, all or nothing.
///
/// Each item is validated as `POST /api/v1/monitors` validates its body; if
/// any is refused, nothing is created and the answer is `400` naming each
/// problem by item (`monitors[3].target`). The whole batch must fit the
/// caller's monitor quota and checks-per-minute budget (else `403`, nothing
/// created). Bodies of this route may have up to 4 MiB.
#[utoipa::path(post, path = "/api/v1/monitors/bulk", tag = "monitors", request_body = BulkCreateMonitors,
    security(("bearer" = [])),
    responses((status = 201, body = BulkCreatedMonitors, description = "every monitor created, in request order"),
        (status = 400, body = ErrorBody, description = "`invalid request body`, nothing created: not `{\"monitors\": [...]}`; U+0000 in a string (named by its path, e.g. `monitors[2].name`); no monitors or more than `bulk_create.max_items` (field `monitors`); or items refused by the single create's rules (fields `monitors[<index>].<field>`, or `monitors[<index>]` for an item that is not a monitor)"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "quota exceeded, nothing created: the batch does not fit the user's monitor quota (`details` field `monitors`), or its active checked monitors would take the user's checks per minute (regions × 60 / interval_secs each) past their budget (field `checks_per_minute`)"),
        (status = 413, body = ErrorBody, description = "`request body too large`: over 4 MiB")))]
pub async fn bulk_create(
    state: web::Data<AppState>,
    user: AuthUser,
    body: crate::validation::Json<BulkCreateMonitors>,
) -> Result<HttpResponse, ApiError> {
    let items = body.into_inner().monitors;
    let max = state.settings.bulk_create.max_items;
    if items.is_empty() || items.len() > max {
        return Err(ApiError::InvalidBody(vec![FieldError::new(
            "monitors",
            format!("must hold 1 to {max} monitors"),
        )]));
    }
    let count = items.len();
    let valid = validate_items(
        user.user_id,
        items,
        state.settings.safety.allow_private_targets,
        &state.settings.regions,
        state.keyring.as_deref(),
    )?;
    let (news, contact_ids): (Vec<NewMonitor>, Vec<Vec<i64>>) = valid.into_iter().unzip();

    let quotas = state.settings.quotas.clone();
    let mut conn = state.conn().await?;
    let (rows, contact_ids) = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                let load = news
                    .iter()
                    .map(|n| crate::quotas::load_of(&n.definition))
                    .sum();
                crate::quotas::ensure_room_for_monitors(
                    c,
                    &quotas,
                    user.user_id,
                    i64::try_from(news.len()).unwrap_or(i64::MAX),
                    load,
                )
                .await?;
                // One query for the contacts of every item (locked, as a
                // single create locks its own).
                let mut wanted: Vec<i64> = contact_ids.iter().flatten().copied().collect();
                wanted.sort_unstable();
                wanted.dedup();
                let owned = uptime_db::contacts::owned_ids_locked(c, user.user_id, &wanted).await?;
                let unknown: Vec<FieldError> = contact_ids
                    .iter()
                    .enumerate()
                    .filter_map(|(i, ids)| {
                        no_such_contacts(ids, &owned).map(|message| {
                            FieldError::new(format!("monitors[{i}].alert_contact_ids"), message)
                        })
                    })
                    .collect();
                if !unknown.is_empty() {
                    return Err(ApiError::InvalidBody(unknown));
                }
                let rows = uptime_db::monitors::create_many(c, news, &contact_ids).await?;
                if rows.len() != count {
                    // Rolled back: all or nothing.
                    return Err(ApiError::Internal(format!(
                        "{} of {count} monitors came back from the insert",
                        rows.len()
                    )));
                }
                Ok((rows, contact_ids))
            }
            .scope_boxed()
        })
        .await?;
    drop(conn);

    futures::stream::iter(rows.iter().map(|m| m.id))
        .for_each_concurrent(ANNOUNCE_IN_FLIGHT, |id| {
            announce(&state, id, MonitorChange::Upserted)
        })
        .await;
    let monitors = rows
        .into_iter()
        .zip(contact_ids)
        .map(|(row, ids)| MonitorResponse::from_row(row, ids, &state.settings.regions))
        .collect::<Result<_, _>>()?;
    Ok(HttpResponse::Created().json(BulkCreatedMonitors { monitors }))
}
