//! Email subscriptions with double opt-in, the only routes of this service
//! that touch PostgreSQL (page views never do):
//!
//! - `POST /status/{slug}/subscriptions`: `email` as a form field (the
//!   page's form, no script) or as JSON `{"email": "..."}`. A new address
//!   gets a pending subscription and a confirmation mail, written in one
//!   transaction (the notifier sends it). An address already subscribed
//!   gets the same answer and no mail, so the answer tells nobody who
//!   subscribed. Public pages only; rate-limited per client address
//!   (`subscribe_rate_limit_per_hour`) and bounded per page
//!   (`max_subscribers_per_page`).
//! - `/subscriptions/confirm?token=`: `GET` shows a button, `POST`
//!   confirms. A mail scanner that opens links cannot confirm for the
//!   reader.
//! - `/subscriptions/unsubscribe?token=`: `GET` shows a button, `POST`
//!   unsubscribes at once: RFC 8058's one-click `POST` from the mail
//!   client (body `List-Unsubscribe=One-Click`) or the button. The row is
//!   deleted, address and all.

use crate::methods::Routes;
use crate::serve::{client_address, limited, ServeState};
use crate::subscribe_pages as pages;
use actix_web::http::header::{self, ContentType};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rand::RngCore;
use serde::Deserialize;
use serde_json::json;
use sha2::{Digest, Sha256};
use std::ops::ControlFlow;
use uptime_db::status_subscriptions::{self as subscriptions, NewSubscription, Subscribed};

/// The longest address taken (RFC 5321's path limit).
pub const MAX_EMAIL_CHARS: usize = 254;
/// A subscribe request's body is an address and little else.
pub const MAX_BODY_BYTES: usize = 4096;
/// URL-safe base64 of 32 random bytes.
const TOKEN_CHARS: usize = 43;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        Routes::on(
            web::resource("/status/{slug}/subscriptions")
                .app_data(web::PayloadConfig::new(MAX_BODY_BYTES)),
        )
        .post(subscribe)
        .done(),
    )
    .service(
        Routes::on(web::resource("/subscriptions/confirm"))
            .get(confirm_form)
            .post(confirm)
            .done(),
    )
    .service(
        Routes::on(
            web::resource("/subscriptions/unsubscribe")
                .app_data(web::PayloadConfig::new(MAX_BODY_BYTES)),
        )
        .get(unsubscribe_form)
        .post(unsubscribe)
        .done(),
    );
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SubscribeRequest {
    email: Option<String>,
}

#[derive(Deserialize)]
struct TokenQuery {
    token: Option<String>,
}

/// A random token of 256 bits.
fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

fn digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// The query's token when it has the shape of one we issue (junk is
/// refused without a query).
fn token_of(req: &HttpRequest) -> Option<String> {
    let token = web::Query::<TokenQuery>::from_query(req.query_string())
        .ok()?
        .into_inner()
        .token?;
    (token.len() == TOKEN_CHARS
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
    .then_some(token)
}

/// `raw` as an address we send to, or why not. Deliberately plain: one
/// `@`, a dotted domain, no spaces, brackets or separators (which could
/// smuggle a second recipient or a header into the mail).
pub fn checked_email(raw: &str) -> Result<String, String> {
    let email = raw.trim();
    if email.is_empty() {
        return Err("must not be empty".into());
    }
    if email.chars().count() > MAX_EMAIL_CHARS {
        return Err(format!("must be at most {MAX_EMAIL_CHARS} characters"));
    }
    let shape = "must be an email address such as name@example.com";
    let Some((local, domain)) = email.split_once('@') else {
        return Err(shape.into());
    };
    let forbidden =
        |c: char| c.is_whitespace() || c.is_control() || "<>()[]{},;:\\\"'`@".contains(c);
    let label_ok = |l: &str| {
        !l.is_empty()
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars().all(|c| c.is_alphanumeric() || c == '-')
    };
    let labels: Vec<&str> = domain.split('.').collect();
    if local.is_empty()
        || local.len() > 64
        || local.chars().any(forbidden)
        || local.starts_with('.')
        || local.ends_with('.')
        || local.contains("..")
        || labels.len() < 2
        || !labels.iter().all(|l| label_ok(l))
    {
        return Err(shape.into());
    }
    Ok(email.to_string())
}

/// Whether the request speaks JSON (else it is the page's form).
fn wants_json(req: &HttpRequest) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim_start()
                .to_ascii_lowercase()
                .starts_with("application/json")
        })
}

/// A JSON error in the api-gateway's shape, naming the field when there is one.
fn json_error(status: StatusCode, error: &str, field: Option<(&str, &str)>) -> HttpResponse {
    let details: Vec<_> = field
        .map(|(field, message)| json!({"field": field, "message": message}))
        .into_iter()
        .collect();
    HttpResponse::build(status).json(json!({"error": error, "details": details}))
}

fn html(status: StatusCode, body: String) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::CONTENT_SECURITY_POLICY, crate::serve::PAGE_POLICY))
        .insert_header(ContentType::html())
        .body(body)
}

async fn subscribe(
    req: HttpRequest,
    state: web::Data<ServeState>,
    slug: web::Path<String>,
    body: web::Bytes,
) -> HttpResponse {
    if let Some(refused) = limited(&req, &state) {
        return refused;
    }
    let json = wants_json(&req);
    let snapshot = state.shared.get();
    let page = snapshot
        .pages_by_slug
        .get(slug.as_str())
        .filter(|p| p.access_token_sha256.is_none());
    let Some(page) = page else {
        return if json {
            json_error(StatusCode::NOT_FOUND, "not found", None)
        } else {
            html(StatusCode::NOT_FOUND, crate::render::page::not_found())
        };
    };
    let parsed = if json {
        serde_json::from_slice::<SubscribeRequest>(&body).map_err(|e| e.to_string())
    } else {
        std::str::from_utf8(&body)
            .map_err(|e| e.to_string())
            .and_then(|text| {
                web::Query::<SubscribeRequest>::from_query(text)
                    .map(web::Query::into_inner)
                    .map_err(|e| e.to_string())
            })
    };
    let email = match parsed {
        Err(e) => Err(format!("the body must be {{\"email\": \"...\"}}: {e}")),
        Ok(SubscribeRequest { email: None }) => Err("is required".into()),
        Ok(SubscribeRequest { email: Some(raw) }) => checked_email(&raw),
    };
    let email = match email {
        Ok(email) => email,
        Err(message) => {
            return if json {
                json_error(
                    StatusCode::BAD_REQUEST,
                    "invalid request body",
                    Some(("email", message.as_str())),
                )
            } else {
                html(
                    StatusCode::BAD_REQUEST,
                    pages::refused(&page.title, &format!("The email address {message}.")),
                )
            };
        }
    };
    if let Some(wait) = client_address(&req, state.trust_forwarded_for)
        .and_then(|address| state.subscribe_limiter.check(address))
    {
        metrics::counter!("status_pages_subscriptions_total", "outcome" => "rate_limited")
            .increment(1);
        let mut response = if json {
            json_error(StatusCode::TOO_MANY_REQUESTS, "too many requests", None)
        } else {
            html(
                StatusCode::TOO_MANY_REQUESTS,
                pages::refused(
                    &page.title,
                    "Too many subscribe requests from your address; try again later.",
                ),
            )
        };
        if let Ok(value) = header::HeaderValue::from_str(&wait.to_string()) {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        return response;
    }
    let base = state.public_base_url.trim_end_matches('/');
    let confirm_token = new_token();
    let unsubscribe_token = new_token();
    let new = NewSubscription {
        page_id: page.id,
        org_id: page.org_id,
        email: &email,
        confirm_token_sha256: &digest(&confirm_token),
        unsubscribe_token: &unsubscribe_token,
        confirmation: json!({
            "page_title": page.title,
            "page_url": format!("{base}/status/{slug}"),
            "links_base": base,
            "confirm_token": confirm_token,
        }),
    };
    let outcome = async {
        let mut conn = uptime_db::pool::conn(&state.pool).await?;
        subscriptions::subscribe(&mut conn, &new, state.max_subscribers_per_page).await
    }
    .await;
    match outcome {
        Ok(done @ (Subscribed::Created { .. } | Subscribed::Existing)) => {
            let label = if done == Subscribed::Existing {
                "existing"
            } else {
                "created"
            };
            metrics::counter!("status_pages_subscriptions_total", "outcome" => label).increment(1);
            if json {
                HttpResponse::Accepted().json(json!({
                    "status": "confirmation_sent",
                    "message": "unless the address is subscribed already, a mail with a confirmation link is on its way",
                }))
            } else {
                html(StatusCode::ACCEPTED, pages::check_inbox(&page.title))
            }
        }
        Ok(Subscribed::Full) => {
            metrics::counter!("status_pages_subscriptions_total", "outcome" => "full").increment(1);
            let message = "this page takes no more subscribers";
            if json {
                json_error(StatusCode::CONFLICT, "conflict", Some(("email", message)))
            } else {
                html(
                    StatusCode::CONFLICT,
                    pages::refused(&page.title, "This page takes no more subscribers."),
                )
            }
        }
        Err(e) => {
            // The address is not logged: personal data.
            tracing::warn!(error = %e, page_id = page.id, "storing a subscription failed");
            if json {
                json_error(StatusCode::SERVICE_UNAVAILABLE, "unavailable", None)
            } else {
                html(
                    StatusCode::SERVICE_UNAVAILABLE,
                    pages::refused(
                        &page.title,
                        "Subscribing is not possible right now; try again later.",
                    ),
                )
            }
        }
    }
}

/// The mailed link's token, once the client is within its rate; else the
/// answer to break off with: `429`, or the unknown-link page for a link
/// without a valid token.
fn linked_token(req: &HttpRequest, state: &ServeState) -> ControlFlow<HttpResponse, String> {
    if let Some(refused) = limited(req, state) {
        return ControlFlow::Break(refused);
    }
    match token_of(req) {
        Some(token) => ControlFlow::Continue(token),
        None => ControlFlow::Break(html(StatusCode::NOT_FOUND, pages::unknown_link())),
    }
}

/// The page a mailed link opens: a button that posts the link's token to
/// `action`, so that a link opened by a mail scanner changes nothing.
fn button_for_link(
    req: &HttpRequest,
    state: &ServeState,
    heading: &str,
    text: &str,
    action: &str,
    label: &str,
) -> HttpResponse {
    match linked_token(req, state) {
        ControlFlow::Continue(token) => html(
            StatusCode::OK,
            pages::button(heading, text, &format!("{action}?token={token}"), label),
        ),
        ControlFlow::Break(answer) => answer,
    }
}

async fn confirm_form(req: HttpRequest, state: web::Data<ServeState>) -> HttpResponse {
    button_for_link(
        &req,
        &state,
        "Confirm your subscription",
        "Confirm that you want notices of this status page by email.",
        "/subscriptions/confirm",
        "Confirm subscription",
    )
}

async fn confirm(req: HttpRequest, state: web::Data<ServeState>) -> HttpResponse {
    let token = match linked_token(&req, &state) {
        ControlFlow::Continue(token) => token,
        ControlFlow::Break(answer) => return answer,
    };
    let confirmed = async {
        let mut conn = uptime_db::pool::conn(&state.pool).await?;
        subscriptions::confirm(&mut conn, &digest(&token)).await
    }
    .await;
    match confirmed {
        Ok(Some(_)) => {
            metrics::counter!("status_pages_subscriptions_total", "outcome" => "confirmed")
                .increment(1);
            html(StatusCode::OK, pages::message("Subscribed", "You will get this status page's notices by email. Every mail has a link to unsubscribe."))
        }
        Ok(None) => html(StatusCode::NOT_FOUND, pages::unknown_link()),
        Err(e) => {
            tracing::warn!(error = %e, "confirming a subscription failed");
            html(
                StatusCode::SERVICE_UNAVAILABLE,
                pages::message(
                    "Try again later",
                    "Confirming is not possible right now; open the link again later.",
                ),
            )
        }
    }
}

async fn unsubscribe_form(req: HttpRequest, state: web::Data<ServeState>) -> HttpResponse {
    button_for_link(
        &req,
        &state,
        "Unsubscribe",
        "Stop getting this status page's notices by email.",
        "/subscriptions/unsubscribe",
        "Unsubscribe",
    )
}

/// RFC 8058: a `POST` to the `List-Unsubscribe` URL unsubscribes, whatever
/// its body (`List-Unsubscribe=One-Click` from mail clients, nothing from
/// the button). Answered `200` when already gone too: a repeated click
/// changes nothing.
async fn unsubscribe(req: HttpRequest, state: web::Data<ServeState>) -> HttpResponse {
    let token = match linked_token(&req, &state) {
        ControlFlow::Continue(token) => token,
        ControlFlow::Break(answer) => return answer,
    };
    let removed = async {
        let mut conn = uptime_db::pool::conn(&state.pool).await?;
        subscriptions::unsubscribe(&mut conn, &token).await
    }
    .await;
    match removed {
        Ok(removed) => {
            if removed {
                metrics::counter!("status_pages_subscriptions_total", "outcome" => "unsubscribed")
                    .increment(1);
            }
            html(
                StatusCode::OK,
                pages::message(
                    "Unsubscribed",
                    "You will get no more mail from this status page.",
                ),
            )
        }
        Err(e) => {
            tracing::warn!(error = %e, "unsubscribing failed");
            html(
                StatusCode::SERVICE_UNAVAILABLE,
                pages::message(
                    "Try again later",
                    "Unsubscribing is not possible right now; open the link again later.",
                ),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_addresses_pass_and_smuggling_ones_do_not() {
        assert_eq!(
            checked_email("  ada@example.com ").unwrap(),
            "ada@example.com"
        );
        assert!(checked_email("a.b+tag@mail.example.co.uk").is_ok());
        for bad in [
            "",
            "ada",
            "ada@",
            "@example.com",
            "ada@example",
            "ada@@example.com",
            "ada@exa mple.com",
            "ada@example.com\r\nBcc: x@y.z",
            "<ada@example.com>",
            "ada@example.com,eve@example.com",
            "a..b@example.com",
            "ada@-x.com",
        ] {
            assert!(checked_email(bad).is_err(), "{bad:?}");
        }
        let long = format!("{}@example.com", "a".repeat(250));
        assert!(checked_email(&long).unwrap_err().contains("254"));
    }

    #[test]
    fn tokens_are_unguessable_and_shaped() {
        let (a, b) = (new_token(), new_token());
        assert_ne!(a, b);
        assert_eq!(a.len(), TOKEN_CHARS);
    }
}
