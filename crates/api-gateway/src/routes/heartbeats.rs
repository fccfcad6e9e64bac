//! `/api/v1/heartbeat/{token}`: pings from the jobs heartbeat monitors watch.
//! No API key: the token is the credential, so these handlers take no
//! `AuthUser`; instead each token has its own rate limit (`heartbeat_limit`,
//! by default 1 ping a second with bursts of 10): a ping beyond it answers
//! 429 with `Retry-After` and records nothing.
//!
//! A ping stores `last_heartbeat_at` at once and publishes a check result,
//! which the recorder applies to the monitor's status like any other check
//! (a paused monitor's pings are accepted and recorded, its status kept).

use crate::error::{ApiError, ErrorBody};
use crate::startup::MAX_BODY_BYTES;
use crate::state::AppState;
use actix_web::http::Method;
use actix_web::{web, HttpRequest, HttpResponse};
use chrono::Utc;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use futures::StreamExt;
use serde::Serialize;
use uptime_contracts::{CheckOutcome, CheckResultV2, Trigger};
use utoipa::ToSchema;
use uuid::Uuid;

/// Who reports heartbeat results, in `CheckResultV2::reporter`.
pub const REPORTER: &str = "api-gateway";
/// The error of an explicit failure report without a body.
pub const CLIENT_FAILURE: &str = "failure reported by the client";
/// At most this much of a failure report's body is kept as the error.
pub const MAX_FAILURE_MESSAGE_CHARS: usize = 1000;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/heartbeat/{token}")
            .route(web::get().to(ping))
            .route(web::head().to(ping))
            .route(web::post().to(ping)),
    )
    .service(
        web::resource("/heartbeat/{token}/fail")
            .route(web::get().to(fail))
            .route(web::head().to(fail))
            .route(web::post().to(fail)),
    );
}

#[derive(Debug, Serialize, ToSchema)]
pub struct HeartbeatAccepted {
    #[schema(example = "ok")]
    pub status: &'static str,
}

/// Record a ping of the heartbeat monitor with this token. `HEAD` answers
/// without a body. An unknown token answers 404.
#[utoipa::path(method(get, head, post), path = "/api/v1/heartbeat/{token}", tag = "heartbeats",
    params(("token" = String, Path, description = "The monitor's heartbeat_token (`hb_` + 32 hex)")),
    responses((status = 200, body = HeartbeatAccepted), (status = 404, body = ErrorBody),
        (status = 429, body = ErrorBody, description = "more pings than the token's rate limit; see `Retry-After`")))]
pub async fn ping(
    state: web::Data<AppState>,
    req: HttpRequest,
    token: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    record(&state, &req, &token, CheckOutcome::Pass, None).await
}

/// Report that the watched job failed: counts as a failed check at once. A
/// short text body (up to 1000 characters are kept) becomes the result's
/// `error`.
#[utoipa::path(method(get, head, post), path = "/api/v1/heartbeat/{token}/fail", tag = "heartbeats",
    params(("token" = String, Path, description = "The monitor's heartbeat_token (`hb_` + 32 hex)")),
    request_body(content = Option<String>, content_type = "text/plain", description = "Optional: what went wrong"),
    responses((status = 200, body = HeartbeatAccepted), (status = 404, body = ErrorBody),
        (status = 413, body = ErrorBody),
        (status = 429, body = ErrorBody, description = "more pings than the token's rate limit; see `Retry-After`")))]
pub async fn fail(
    state: web::Data<AppState>,
    req: HttpRequest,
    token: web::Path<String>,
    body: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let text = read_text(body).await?;
    let error = match text.trim() {
        "" => CLIENT_FAILURE.to_string(),
        reported => format!(
            "{CLIENT_FAILURE}: {}",
            reported
                .chars()
                .take(MAX_FAILURE_MESSAGE_CHARS)
                .collect::<String>()
        ),
    };
    record(&state, &req, &token, CheckOutcome::Fail, Some(error)).await
}

/// The body as text (lossy: invalid UTF-8 and U+0000, which PostgreSQL
/// cannot store, become U+FFFD), refusing more than the API's body limit.
async fn read_text(mut body: web::Payload) -> Result<String, ApiError> {
    let mut bytes = web::BytesMut::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|_| ApiError::invalid_field("body", "could not be read"))?;
        if bytes.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(ApiError::PayloadTooLarge);
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&bytes).replace('\0', "\u{FFFD}"))
}

async fn record(
    state: &AppState,
    req: &HttpRequest,
    token: &str,
    outcome: CheckOutcome,
    error: Option<String>,
) -> Result<HttpResponse, ApiError> {
    // A token that cannot exist is not worth a query.
    if !well_formed(token) {
        return Err(ApiError::NotFound);
    }
    // Throttled per token before anything is written: a refused ping
    // touches neither the database nor NATS.
    state.heartbeat_limiter.check(token.to_string())?;
    let now = Utc::now();
    // The ping is written and published together: the row's update commits
    // only once JetStream has acknowledged the result, so a ping refused
    // with 503 (a full queue, NATS down) moves no deadline. A commit that
    // fails after the publish loses nothing: recording the result sets
    // `last_heartbeat_at` too.
    let check_id = Uuid::new_v4();
    let mut conn = state.conn().await?;
    let (pinged, result) = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                let pinged = uptime_db::recording::record_heartbeat(c, token, now)
                    .await?
                    .ok_or(ApiError::NotFound)?;
                let result = CheckResultV2 {
                    check_id,
                    monitor_id: pinged.monitor_id,
                    definition_version: pinged.definition_version,
                    trigger: Trigger::Heartbeat,
                    due_at: None,
                    checked_at: now,
                    outcome,
                    latency_ms: None,
                    http_status: None,
                    error,
                    ssl_expires_at: None,
                    reporter: REPORTER.to_string(),
                };
                state.publish(&check_id.to_string(), &result).await?;
                Ok((pinged, result))
            }
            .scope_boxed()
        })
        .await?;
    drop(conn);
    let (monitor_id, active) = (pinged.monitor_id, pinged.active);
    debug_assert_eq!(result.check_id, check_id);
    let outcome_label = match outcome {
        CheckOutcome::Pass => "pass",
        CheckOutcome::Fail => "fail",
    };
    metrics::counter!("heartbeat_pings_total", "outcome" => outcome_label).increment(1);
    tracing::debug!(
        monitor_id,
        active,
        outcome = outcome_label,
        "heartbeat recorded"
    );
    if req.method() == Method::HEAD {
        // The headers a GET would have, without the body.
        Ok(HttpResponse::Ok().content_type("application/json").finish())
    } else {
        Ok(HttpResponse::Ok().json(HeartbeatAccepted { status: "ok" }))
    }
}

/// `hb_` followed by 32 lowercase hex characters.
fn well_formed(token: &str) -> bool {
    token.strip_prefix("hb_").is_some_and(|hex| {
        hex.len() == 32 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

#[cfg(test)]
mod tests {
    use super::well_formed;

    #[test]
    fn tokens_are_hb_and_32_lowercase_hex() {
        assert!(well_formed(&format!("hb_{}", "0a".repeat(16))));
        assert!(!well_formed(&format!("hb_{}", "0A".repeat(16))));
        assert!(!well_formed(&format!("hb_{}", "0a".repeat(15))));
        assert!(!well_formed(&format!("xx_{}", "0a".repeat(16))));
        assert!(!well_formed("hb_"));
    }
}
