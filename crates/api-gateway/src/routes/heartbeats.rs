//! `/api/v1/heartbeat/{token}`: pings from the jobs heartbeat monitors watch.
//! No API key: the token is the credential, so these handlers take no
//! `AuthUser`; instead each token has its own rate limit (`heartbeat_limit`,
//! by default 1 ping a second with bursts of 10): a ping beyond it answers
//! 429 with `Retry-After` and records nothing.
//!
//! A ping stores `last_heartbeat_at` at once and publishes a check result,
//! which the recorder applies to the monitor's status like any other check
//! (a paused monitor's pings are accepted and recorded, its status kept).
//!
//! - `/heartbeat/{token}`: success.
//! - `/heartbeat/{token}/fail`: failure; a text body becomes the error.
//! - `/heartbeat/{token}/{exit_code}` (0-255): the job's exit status. 0 is a
//!   success ping; anything else a failure whose error is `exit code N`
//!   (and the body's text, as with `/fail`). Any other last segment (`256`,
//!   `-1`, `abc`) is `404 not found`, like any path the API does not serve,
//!   and touches nothing.
//! - `/heartbeat/{token}/start`: the job started a run. Stores
//!   `heartbeat_started_at` and publishes no result (a start is neither up
//!   nor down); it announces a monitor change instead, so the scheduler
//!   re-reads the row and fails the run if no success, failure or exit-code
//!   ping follows within the grace (`timeout_secs`). The ping that ends the
//!   run clears the start and carries the run's duration (ping time minus
//!   start) as its result's `latency_ms`: check-result.v3 has no other field
//!   for it, and so a monitor's `latency_warn_ms` marks a run that took too
//!   long as degraded.
//!
//! All of them share the token's rate limit.

use crate::api::table::{routes, Routes};
use crate::http::body_limits::MAX_BODY_BYTES;
use crate::http::error::{ApiError, ErrorBody};
use crate::state::AppState;
use actix_web::http::Method;
use actix_web::{web, HttpRequest, HttpResponse};
use chrono::{DateTime, Utc};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use futures::StreamExt;
use serde::Serialize;
use uptime_contracts::{
    CheckOutcome, CheckResult, MonitorChange, MonitorChangedV1, Trigger, DEFAULT_REGION,
};
use utoipa::ToSchema;
use uuid::Uuid;

/// Who reports heartbeat results, in `CheckResult::reporter`.
pub const REPORTER: &str = "api-gateway";
/// The error of an explicit failure report without a body.
pub const CLIENT_FAILURE: &str = "failure reported by the client";
/// At most this much of a failure report's body is kept as the error.
pub const MAX_FAILURE_MESSAGE_CHARS: usize = 1000;

/// Each ping URL answers GET, HEAD and POST alike (its annotation says
/// so): cron jobs and monitoring agents use whichever their tool sends.
pub fn routes() -> Routes {
    routes![ping: PUBLIC,
        fail: PUBLIC,
        start: PUBLIC,
        // After `fail` and `start`: resources match in the order they are added.
        exit_code: PUBLIC,]
}

#[derive(Debug, Serialize, ToSchema)]
pub struct HeartbeatAccepted {
    #[schema(value_type = crate::routes::values::PingAccepted)]
    pub status: &'static str,
}

/// Record a ping of the heartbeat monitor with this token. `HEAD` answers
/// without a body. An unknown token answers 404.
#[utoipa::path(method(get, head, post), path = "/api/v1/heartbeat/{token}", operation_id = "pingHeartbeat", tag = "heartbeats",
    params(("token" = String, Path, description = "The monitor's heartbeat_token (`hb_` + 32 hex)")),
    responses((status = 200, body = HeartbeatAccepted),
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
#[utoipa::path(method(get, head, post), path = "/api/v1/heartbeat/{token}/fail", operation_id = "failHeartbeat", tag = "heartbeats",
    params(("token" = String, Path, description = "The monitor's heartbeat_token (`hb_` + 32 hex)")),
    request_body(content = Option<String>, content_type = "text/plain", description = "Optional: what went wrong"),
    responses((status = 200, body = HeartbeatAccepted),
        (status = 429, body = ErrorBody, description = "more pings than the token's rate limit; see `Retry-After`")))]
pub async fn fail(
    state: web::Data<AppState>,
    req: HttpRequest,
    token: web::Path<String>,
    body: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let text = read_text(body).await?;
    let error = with_report(CLIENT_FAILURE.to_string(), &text);
    record(&state, &req, &token, CheckOutcome::Fail, Some(error)).await
}

/// `error`, followed by the client's report when it sent one (up to 1000
/// characters of it).
fn with_report(error: String, text: &str) -> String {
    match text.trim() {
        "" => error,
        reported => format!(
            "{error}: {}",
            reported
                .chars()
                .take(MAX_FAILURE_MESSAGE_CHARS)
                .collect::<String>()
        ),
    }
}

/// Report the watched job's exit status: 0 is a success ping, 1-255 a
/// failed check whose error is `exit code N`, followed by the text body if
/// there is one (up to 1000 characters are kept). Any other value is 404.
#[utoipa::path(method(get, head, post), path = "/api/v1/heartbeat/{token}/{exit_code}", operation_id = "reportHeartbeatExitCode", tag = "heartbeats",
    params(("token" = String, Path, description = "The monitor's heartbeat_token (`hb_` + 32 hex)"),
        ("exit_code" = u8, Path, description = "The job's exit status, 0-255; another value is 404")),
    request_body(content = Option<String>, content_type = "text/plain", description = "Optional: what went wrong (ignored for 0)"),
    responses((status = 200, body = HeartbeatAccepted),
        (status = 429, body = ErrorBody, description = "more pings than the token's rate limit; see `Retry-After`")))]
pub async fn exit_code(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<(String, String)>,
    body: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let (token, code) = path.into_inner();
    let code = parse_exit_code(&code).ok_or(ApiError::NotFound)?;
    if code == 0 {
        return record(&state, &req, &token, CheckOutcome::Pass, None).await;
    }
    let text = read_text(body).await?;
    let error = with_report(format!("exit code {code}"), &text);
    record(&state, &req, &token, CheckOutcome::Fail, Some(error)).await
}

/// `0` to `255` in plain decimal digits (no sign, no spaces).
fn parse_exit_code(segment: &str) -> Option<u8> {
    if segment.is_empty() || segment.len() > 3 || !segment.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    segment.parse().ok()
}

/// Report that the watched job started a run. Publishes no result; the
/// next success, failure or exit-code ping ends the run and records its
/// duration as `latency_ms`. A run that sends none within the monitor's
/// grace (`timeout_secs`) counts as failed. A second start replaces the
/// first.
#[utoipa::path(method(get, head, post), path = "/api/v1/heartbeat/{token}/start", operation_id = "startHeartbeat", tag = "heartbeats",
    params(("token" = String, Path, description = "The monitor's heartbeat_token (`hb_` + 32 hex)")),
    responses((status = 200, body = HeartbeatAccepted),
        (status = 429, body = ErrorBody, description = "more pings than the token's rate limit; see `Retry-After`")))]
pub async fn start(
    state: web::Data<AppState>,
    req: HttpRequest,
    token: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    if !well_formed(&token) {
        return Err(ApiError::NotFound);
    }
    state.heartbeat_limiter.check(token.to_string())?;
    let now = Utc::now();
    let mut conn = state.conn().await?;
    let started = uptime_db::recording::record_heartbeat_start(&mut conn, &token, now)
        .await?
        .ok_or(ApiError::NotFound)?;
    drop(conn);
    // The scheduler holds the period's deadline; told of the start, it
    // re-reads the row and holds the run's (earlier) one too. Without the
    // event the run still fails, at the period's deadline or the next
    // resync; so a failed publish is logged, not refused.
    let change = MonitorChangedV1 {
        monitor_id: started.monitor_id,
        change: MonitorChange::Upserted,
        changed_at: now,
    };
    let msg_id = format!("monitor-{}-{}", started.monitor_id, Uuid::new_v4());
    if let Err(error) = state.publish(&msg_id, &change).await {
        tracing::warn!(
            monitor_id = started.monitor_id,
            ?error,
            "heartbeat start not announced; the scheduler finds it at the period's deadline"
        );
    }
    metrics::counter!("heartbeat_pings_total", "outcome" => "start").increment(1);
    tracing::debug!(
        monitor_id = started.monitor_id,
        active = started.active,
        "heartbeat run started"
    );
    Ok(accepted(&req))
}

fn accepted(req: &HttpRequest) -> HttpResponse {
    if req.method() == Method::HEAD {
        // The headers a GET would have, without the body.
        HttpResponse::Ok().content_type("application/json").finish()
    } else {
        HttpResponse::Ok().json(HeartbeatAccepted { status: "ok" })
    }
}

/// The run's duration in milliseconds, from its start ping to `end`.
fn run_duration_ms(started: Option<DateTime<Utc>>, end: DateTime<Utc>) -> Option<u32> {
    let ms = (end - started?).num_milliseconds();
    // A start stored after this ping (clocks of two replicas) is no run.
    (ms >= 0).then(|| u32::try_from(ms.min(i64::from(i32::MAX))).unwrap_or(u32::MAX))
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
                let result = CheckResult {
                    check_id,
                    monitor_id: pinged.monitor_id,
                    definition_version: pinged.definition_version,
                    trigger: Trigger::Heartbeat,
                    due_at: None,
                    checked_at: now,
                    outcome,
                    latency_ms: run_duration_ms(pinged.run_started_at, now),
                    http_status: None,
                    error,
                    ssl_expires_at: None,
                    reporter: REPORTER.to_string(),
                    // Pings arrive where the gateway runs: no regions, no round.
                    region: DEFAULT_REGION.to_string(),
                    round_id: None,
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
    Ok(accepted(req))
}

/// `hb_` followed by 32 lowercase hex characters.
fn well_formed(token: &str) -> bool {
    token.strip_prefix("hb_").is_some_and(|hex| {
        hex.len() == 32 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

#[cfg(test)]
mod tests {
    use super::{parse_exit_code, run_duration_ms, well_formed};
    use chrono::{Duration, Utc};

    #[test]
    fn exit_codes_are_0_to_255_in_plain_digits() {
        assert_eq!(parse_exit_code("0"), Some(0));
        assert_eq!(parse_exit_code("3"), Some(3));
        assert_eq!(parse_exit_code("255"), Some(255));
        for refused in ["256", "-1", "+3", "abc", "", " 3", "1000", "3.0"] {
            assert_eq!(parse_exit_code(refused), None, "{refused:?}");
        }
    }

    #[test]
    fn a_run_lasts_from_its_start_to_the_ping_that_ends_it() {
        let end = Utc::now();
        assert_eq!(run_duration_ms(None, end), None);
        assert_eq!(
            run_duration_ms(Some(end - Duration::milliseconds(1500)), end),
            Some(1500)
        );
        assert_eq!(run_duration_ms(Some(end + Duration::seconds(1)), end), None);
        assert_eq!(
            run_duration_ms(Some(end - Duration::days(40)), end),
            Some(i32::MAX as u32),
            "capped at what the results table's INTEGER holds"
        );
    }

    #[test]
    fn tokens_are_hb_and_32_lowercase_hex() {
        assert!(well_formed(&format!("hb_{}", "0a".repeat(16))));
        assert!(!well_formed(&format!("hb_{}", "0A".repeat(16))));
        assert!(!well_formed(&format!("hb_{}", "0a".repeat(15))));
        assert!(!well_formed(&format!("xx_{}", "0a".repeat(16))));
        assert!(!well_formed("hb_"));
    }
}
