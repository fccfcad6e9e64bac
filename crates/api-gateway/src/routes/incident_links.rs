//! The signed acknowledge link of alerts (`uptime_alerts::ack_link`): a
//! person acknowledges an incident from a phone, with no API key.
//!
//! `GET /api/v1/incidents/ack/{token}` only shows a page with one button;
//! the button POSTs to the same address, and the POST acknowledges. A GET
//! that acknowledged would be "clicked" by every mail scanner and link
//! preview that fetches links, acknowledging incidents nobody looked at; a
//! link that answered POST only would show an error to the person who taps
//! it. The token is the credential (it names the incident and the contact
//! the alert went to, and expires after `ack_links.ttl_secs`, at most 30
//! days): an unknown, forged or expired token, or none configured, is `404`
//! like an unknown verification link. The page shows nothing about the
//! monitor beyond its incident's state, so a forwarded link leaks little.

use crate::api::table::{routes, Routes};
use crate::http::error::{ApiError, ErrorBody};
use crate::state::AppState;
use actix_web::{web, HttpResponse};
use chrono::Utc;
use uptime_alerts::AckClaim;
use uptime_db::incidents::{self as db, Acknowledged, Acknowledger};

pub fn routes() -> Routes {
    routes![confirm_page: PUBLIC, acknowledge_by_link: PUBLIC]
}

/// The pattern of a token: two unpadded base64url parts of 32 bytes.
pub const ACK_TOKEN_PATTERN: &str = "^[A-Za-z0-9_-]{43}\\.[A-Za-z0-9_-]{43}$";
/// The longest token read (anything longer is not one).
const MAX_TOKEN_CHARS: usize = 87;

fn claim_of(state: &AppState, token: &str) -> Result<AckClaim, ApiError> {
    if token.len() > MAX_TOKEN_CHARS {
        return Err(ApiError::NotFound);
    }
    let links = state.ack_links.as_ref().ok_or(ApiError::NotFound)?;
    // Expired or forged alike: the answer says only that the link is not
    // (or no longer) good, and the token is never logged.
    links.verify(token, Utc::now()).map_err(|e| {
        tracing::info!(reason = %e, "acknowledge link refused");
        ApiError::NotFound
    })
}

fn html(title: &str, body: &str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        // Nothing else may load or frame it; no referrer carries the token.
        .insert_header((
            "Content-Security-Policy",
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
        ))
        .insert_header(("Referrer-Policy", "no-referrer"))
        .insert_header(("Cache-Control", "no-store"))
        .body(format!(
            "<!doctype html><html><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>{title}</title></head>\
             <body style=\"font-family: sans-serif; max-width: 30em; margin: 2em auto; padding: 0 1em\">\
             <h1>{title}</h1>{body}</body></html>"
        ))
}

/// The page behind an alert's acknowledge link: what the incident is and a
/// button that acknowledges it. Looking changes nothing.
#[utoipa::path(get, path = "/api/v1/incidents/ack/{token}", operation_id = "showIncidentAcknowledgeLink", tag = "incidents",
    params(("token" = String, Path, description = "The token of the alert's acknowledge link")),
    responses((status = 200, description = "An HTML page with a button that POSTs to the same address", content_type = "text/html", body = String),
        (status = 404, description = "Unknown, forged or expired link", body = ErrorBody)))]
pub async fn confirm_page(
    state: web::Data<AppState>,
    token: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let claim = claim_of(&state, &token)?;
    let mut conn = state.conn().await?;
    let incident = db::get(&mut conn, None, claim.incident_id)
        .await?
        .ok_or(ApiError::NotFound)?;
    let started = incident
        .started_at
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    if incident.acknowledged_at.is_some() {
        return Ok(html(
            "Already acknowledged",
            &format!("<p>The incident that started at {started} was acknowledged already.</p>"),
        ));
    }
    let state_line = if incident.resolved_at.is_some() {
        "It is resolved: the monitor is up again."
    } else {
        "The monitor is still down."
    };
    // The form posts to this very address (the token is in the path).
    Ok(html(
        "Acknowledge incident",
        &format!(
            "<p>An incident started at {started}. {state_line}</p>\
             <form method=\"post\"><button type=\"submit\" style=\"font-size: 1.2em; padding: .5em 1em\">\
             Acknowledge</button></form>"
        ),
    ))
}

/// Acknowledge the incident of an alert's link (the button of its page).
/// The first acknowledgement stands; recorded as `via: link` with the
/// contact the alert was sent to.
#[utoipa::path(post, path = "/api/v1/incidents/ack/{token}", operation_id = "acknowledgeIncidentByLink", tag = "incidents",
    params(("token" = String, Path, description = "The token of the alert's acknowledge link")),
    responses((status = 200, description = "An HTML page saying the incident is acknowledged", content_type = "text/html", body = String),
        (status = 404, description = "Unknown, forged or expired link", body = ErrorBody)))]
pub async fn acknowledge_by_link(
    state: web::Data<AppState>,
    token: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let claim = claim_of(&state, &token)?;
    let mut conn = state.conn().await?;
    let by = Acknowledger::Link {
        contact_id: claim.contact_id,
    };
    // One transaction: the acknowledgement and the deliveries telling the
    // incident's on-call providers commit together.
    let incident_id = claim.incident_id;
    let acknowledged = {
        use diesel_async::scoped_futures::ScopedFutureExt;
        use diesel_async::AsyncConnection;
        conn.transaction::<_, ApiError, _>(|c| {
            async move { Ok(db::acknowledge(c, None, incident_id, &by, Utc::now()).await?) }
                .scope_boxed()
        })
        .await?
    };
    match acknowledged {
        Acknowledged::Now(incident) => {
            tracing::info!(incident_id = %incident.id, contact_id = claim.contact_id,
                "incident acknowledged by link");
            Ok(html(
                "Acknowledged",
                "<p>The incident is acknowledged. Reminders stop.</p>",
            ))
        }
        Acknowledged::Already(_) => Ok(html(
            "Already acknowledged",
            "<p>The incident was acknowledged already.</p>",
        )),
        Acknowledged::NotFound => Err(ApiError::NotFound),
    }
}
