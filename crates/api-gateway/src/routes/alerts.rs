//! Alert delivery around contacts: the verification link of email contacts,
//! the test alert and the delivery log.
//!
//! Registered before `contacts` so that `/alert-contacts/verify/{token}` is
//! not taken for `/alert-contacts/{id}`.

use crate::access::auth::AuthUser;
use crate::api::table::{routes, Routes};
use crate::http::error::{ApiError, ErrorBody};
use crate::http::validation::{list_body, ListBody};
use crate::state::AppState;
use crate::verification;
use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};
use uptime_alerts::{AlertEvent, Channel, Destination, Outgoing, ProviderOptions, Sender};
use uptime_db::deliveries::{
    AlertDelivery, AttemptOutcome, AttemptRecord, CompletedDelivery, DeliveryAttempt, KIND_TEST,
};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// The contact's provider credential, opened for the test alert's request;
/// what goes wrong is said without the credential (502, like a failed send).
fn open_secret(
    state: &AppState,
    contact: &uptime_db::models::AlertContact,
) -> Result<Option<uptime_secrets::Zeroizing<String>>, ApiError> {
    let Some(sealed) = &contact.secret_sealed else {
        return Ok(None);
    };
    let keyring = state.keyring.as_deref().ok_or_else(|| {
        ApiError::DeliveryFailed(
            "the contact's credential cannot be opened: no secrets key is configured".into(),
        )
    })?;
    keyring
        .open(uptime_secrets::Purpose::ALERT_CONTACT_SECRET, sealed)
        .map(Some)
        .map_err(|e| ApiError::DeliveryFailed(format!("the contact's credential: {e}")))
}

/// Upper bound of the test alert's request to the receiver; the caller waits for it.
const TEST_ALERT_HTTP_TIMEOUT: Duration = Duration::from_secs(10);
const DEFAULT_LIMIT: i64 = 20;

pub fn routes() -> Routes {
    routes![verify: PUBLIC,
        send_test: WRITE,
        deliveries: READ,]
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Verified {
    /// Always `verified`.
    #[schema(value_type = crate::routes::values::VerifiedStatus)]
    pub status: String,
    pub contact_id: i64,
}

/// Verify an email contact with the link it was sent. Needs no API key (the
/// token is the credential); a link works once.
#[utoipa::path(get, path = "/api/v1/alert-contacts/verify/{token}", operation_id = "verifyContact", tag = "alert-contacts",
    params(("token" = String, Path, description = "The token from the verification email")),
    responses((status = 200, body = Verified),
        (status = 404, description = "Unknown, expired or already used token", body = ErrorBody)))]
pub async fn verify(
    state: web::Data<AppState>,
    token: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let token = token.into_inner();
    if !verification::well_formed(&token) {
        return Err(ApiError::NotFound);
    }
    // A link is good for `retention.verification_token_hours` (0: for ever).
    let hours = state.settings.retention.verification_token_hours;
    let issued_after = (hours > 0).then(|| Utc::now() - chrono::TimeDelta::hours(i64::from(hours)));
    let mut conn = state.conn().await?;
    let contact_id =
        uptime_db::deliveries::verify_token(&mut conn, &verification::digest(&token), issued_after)
            .await?
            .ok_or(ApiError::NotFound)?;
    tracing::info!(contact_id, "email contact verified");
    Ok(HttpResponse::Ok().json(Verified {
        status: "verified".into(),
        contact_id,
    }))
}

#[derive(Debug, Serialize, ToSchema)]
pub struct TestSent {
    /// Always `sent`.
    #[schema(value_type = crate::routes::values::Sent)]
    pub status: String,
}

/// Send a test alert to the contact now and report whether it was delivered.
/// Logged in the contact's deliveries like any alert.
///
/// Webhooks receive the usual signed body with `event` = `test`, `monitor`,
/// `previous_status`, `status` and `check` null, `occurred_at` and a `message`;
/// email gets the subject `[TEST] Test alert from Uptime`; Slack a message
/// saying it is a test.
#[utoipa::path(post, path = "/api/v1/alert-contacts/{id}/test", operation_id = "sendTestAlert", tag = "alert-contacts",
    params(("id" = i64, Path, description = "Alert contact id")),
    responses((status = 200, body = TestSent),
        (status = 404, description = "No such contact of the caller", body = ErrorBody),
        (status = 409, description = "`contact not verified`", body = ErrorBody),
        (status = 502, description = "`alert delivery failed`, with the cause in `details`", body = ErrorBody)))]
pub async fn send_test(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let mut conn = state.conn().await?;
    let contact = uptime_db::contacts::get(&mut conn, user.org_id, id.into_inner())
        .await?
        .ok_or(ApiError::NotFound)?;
    drop(conn);
    if !contact.verified {
        return Err(ApiError::ContactNotVerified);
    }
    let channel = Channel::parse(&contact.kind)
        .ok_or_else(|| ApiError::Internal(format!("contact type {:?}", contact.kind)))?;
    let sender = Sender::with_providers(
        &state.settings.smtp,
        &state.settings.safety,
        TEST_ALERT_HTTP_TIMEOUT,
        &state.settings.alert_providers,
    )
    .map_err(|e| ApiError::DeliveryFailed(e.to_string()))?;
    let options = ProviderOptions::from_json(&contact.options)
        .map_err(|e| ApiError::Internal(format!("contact {}: {}", contact.id, e.message)))?;
    let secret = open_secret(&state, &contact)?;

    let event = AlertEvent::test(Utc::now());
    let delivery = CompletedDelivery {
        id: Uuid::new_v4(),
        event_id: event.event_id,
        contact_id: contact.id,
        kind: KIND_TEST.into(),
        event_type: event.event.as_str().into(),
        payload: event.to_json(),
    };
    let attempted_at = Utc::now();
    let started = Instant::now();
    let result = sender
        .send(
            Destination::of_contact(
                channel,
                &contact.value,
                contact.signing_secret.as_deref(),
                secret.as_ref().map(|s| s.as_str()),
                &options,
            ),
            Outgoing::Alert {
                delivery_id: delivery.id,
                event: &event,
            },
        )
        .await;
    let attempt = AttemptRecord {
        attempted_at,
        outcome: if result.is_ok() {
            AttemptOutcome::Delivered
        } else {
            AttemptOutcome::Failed
        },
        http_status: match &result {
            Ok(sent) => sent.http_status.map(i32::from),
            Err(e) => e.http_status.map(i32::from),
        },
        error: result.as_ref().err().map(|e| e.message.clone()),
        duration_ms: i32::try_from(started.elapsed().as_millis()).unwrap_or(i32::MAX),
    };
    metrics::counter!("alert_test_deliveries_total", "channel" => channel.as_str(),
        "outcome" => attempt.outcome.as_str())
    .increment(1);
    // The alert went out (or not) already; a log that cannot be written must
    // not turn that answer into an error. A test that was sent is audited
    // with its delivery log; one that failed is a failed write, and leaves
    // no audit entry (its delivery log shows the failure).
    let sent = result.is_ok();
    let logged = async {
        use diesel_async::scoped_futures::ScopedFutureExt;
        use diesel_async::AsyncConnection;
        let mut conn = state.conn().await?;
        conn.transaction::<_, ApiError, _>(|c| {
            async move {
                uptime_db::deliveries::record_completed(c, &delivery, &attempt).await?;
                if sent {
                    crate::audit::record(
                        c,
                        &user,
                        crate::audit::action::TEST,
                        crate::audit::kind::ALERT_CONTACT,
                        Some(delivery.contact_id),
                        serde_json::json!({}),
                    )
                    .await?;
                }
                Ok(())
            }
            .scope_boxed()
        })
        .await
    };
    if let Err(e) = logged.await {
        tracing::warn!(contact_id = contact.id, error = %e, "test alert not logged");
    }
    match result {
        Ok(_) => Ok(HttpResponse::Ok().json(TestSent {
            status: "sent".into(),
        })),
        Err(e) => Err(ApiError::DeliveryFailed(e.message)),
    }
}

#[derive(Debug, Deserialize, IntoParams)]
pub struct DeliveriesQuery {
    /// Deliveries per page, newest first: 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page; omit for the newest.
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AttemptLog {
    pub attempted_at: DateTime<Utc>,
    /// `delivered`, `retry` (failed, tried again later) or `failed` (given up).
    #[schema(value_type = crate::routes::values::AttemptOutcome)]
    pub outcome: String,
    pub http_status: Option<i32>,
    pub error: Option<String>,
    pub duration_ms: i32,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryLog {
    /// Also the `webhook-id` of webhook deliveries.
    pub id: Uuid,
    pub event_id: Uuid,
    /// `alert`, `verification` or `test`.
    #[schema(value_type = crate::routes::values::DeliveryKind)]
    pub kind: String,
    /// `monitor.down`, `monitor.up`, `monitor.degraded`, `ssl.expiring`, `test` or `verification`.
    #[schema(value_type = crate::routes::values::DeliveryEvent)]
    pub event_type: String,
    pub monitor_id: Option<i64>,
    /// `pending`, `delivered` or `failed`.
    #[schema(value_type = crate::routes::values::DeliveryStatus)]
    pub status: String,
    pub attempts: i32,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub delivered_at: Option<DateTime<Utc>>,
    /// When a pending delivery is attempted next.
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub attempts_log: Vec<AttemptLog>,
}

list_body!(older DeliveryList, deliveries: DeliveryLog);

impl DeliveryLog {
    fn from_rows(d: AlertDelivery, attempts: Vec<DeliveryAttempt>) -> Self {
        let pending = d.status == uptime_db::deliveries::STATUS_PENDING;
        Self {
            id: d.id,
            event_id: d.event_id,
            kind: d.kind,
            event_type: d.event_type,
            monitor_id: d.monitor_id,
            status: d.status,
            attempts: d.attempts,
            last_error: d.last_error,
            created_at: d.created_at,
            delivered_at: d.delivered_at,
            next_attempt_at: pending.then_some(d.next_attempt_at),
            attempts_log: attempts
                .into_iter()
                .map(|a| AttemptLog {
                    attempted_at: a.attempted_at,
                    outcome: a.outcome,
                    http_status: a.http_status,
                    error: a.error,
                    duration_ms: a.duration_ms,
                })
                .collect(),
        }
    }
}

/// The contact's deliveries (alerts, verification emails, test alerts),
/// newest first, each with its attempts.
#[utoipa::path(get, path = "/api/v1/alert-contacts/{id}/deliveries", operation_id = "listDeliveries", tag = "alert-contacts",
    params(("id" = i64, Path, description = "Alert contact id"), DeliveriesQuery),
    responses((status = 200, body = DeliveryList),
        (status = 404, description = "No such contact of the caller", body = ErrorBody)))]
pub async fn deliveries(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
    query: web::Query<DeliveriesQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = crate::http::validation::Keyset::parse(
        query.limit,
        query.cursor.as_deref(),
        DEFAULT_LIMIT,
    )?;
    let mut conn = state.conn().await?;
    let contact = uptime_db::contacts::get(&mut conn, user.org_id, id.into_inner())
        .await?
        .ok_or(ApiError::NotFound)?;
    let reach = Some(user.reach());
    DeliveryList::respond(
        page,
        |after, n| uptime_db::deliveries::page_for_contact(&mut conn, contact.id, reach, after, n),
        |(d, _)| (d.created_at, d.id),
        |(d, a)| DeliveryLog::from_rows(d, a),
    )
    .await
}
