//! `Idempotency-Key` on every authenticated POST: a client that timed out
//! sends the same request again with the same key and gets the first
//! response, not a second monitor (or a thousand, for a bulk create).
//!
//! What "the same request" is: the method, the path with its query, and the
//! body, digested (SHA-256). The key is the organisation's: any of its keys
//! may retry. The first response is kept `retention.idempotency_hours` (24
//! by default) and replayed with `Idempotent-Replayed: true` and the
//! headers of [`REPLAYED_HEADERS`] it carried; the same key
//! with another request is refused (422, field `Idempotency-Key`); a retry
//! while the first is still running is told to come back (409 with
//! `Retry-After`). Responses that left nothing to replay (5xx, 429) give
//! the key up, so a retry runs again. Requests without the header cost
//! nothing here: no body is buffered and no query is made.
//!
//! The claim is written before the handler runs and the response after it,
//! in statements of their own (`uptime_db::idempotency`): a gateway that
//! dies between the handler's commit and the response's record leaves an
//! in-flight claim, which a retry takes over after
//! `idempotency.abandoned_after_secs` and runs again. docs/api.md says so.

use crate::access::auth::Authenticated;
use crate::http::error::ApiError;
use crate::state::AppState;
use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue, CONTENT_TYPE, RETRY_AFTER};
use actix_web::http::{Method, StatusCode};
use actix_web::middleware::Next;
use actix_web::{web, HttpMessage, HttpResponse, ResponseError};
use futures::StreamExt;
use sha2::{Digest, Sha256};
use std::time::Duration;
use uptime_db::idempotency::{Claim, StoredResponse};

/// The request header.
pub const HEADER: &str = "Idempotency-Key";
/// The longest key accepted (a UUID is 36).
pub const MAX_KEY_LEN: usize = 255;
/// The largest body a keyed request may have: the largest any route takes
/// by default (an apply's); a route's own limit still applies after this.
const MAX_KEYED_BODY: usize = crate::http::body_limits::APPLY_BODY_BYTES;
/// The response header on a replay.
const REPLAYED: &str = "idempotent-replayed";
/// The headers of a first response its replays carry again: what says
/// where the resource is and which version the body shows (`Location`,
/// `ETag`, which the next `If-Match` needs; `Content-Location`,
/// `Last-Modified`), how it may be kept (`Cache-Control`: an answer with a
/// secret in it stays `no-store`), and a deprecated route's notice
/// (`Deprecation`, `Sunset`, `Link`). Not those about the moment of the
/// answer (`Date`, `Retry-After`, the `RateLimit` headers, which the replay
/// gets of its own) nor the transfer (`Content-Length`, `Content-Encoding`).
/// The ETag layer sits inside this one, so the first response's tag is
/// among them, and a replay (which runs no handler) answers it as it was.
pub const REPLAYED_HEADERS: &[&str] = &[
    "location",
    "etag",
    "content-location",
    "last-modified",
    "cache-control",
    "deprecation",
    "sunset",
    "link",
];
/// Responses larger than this are not kept (the claim is dropped, so a
/// retry runs again): a bound on what one key stores.
const MAX_STORED_RESPONSE: usize = 1024 * 1024;

/// The middleware; wraps the `/api/v1` scope inside the key check.
pub async fn idempotency(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let Some(raw_key) = req.headers().get(HEADER).cloned() else {
        return Ok(next.call(req).await?.map_into_boxed_body());
    };
    if req.method() != Method::POST {
        return Ok(next.call(req).await?.map_into_boxed_body());
    }
    let org_id = match req.extensions().get::<Authenticated>() {
        Some(Authenticated(Ok(user))) => Some(user.org_id),
        _ => None,
    };
    // Unauthenticated requests get their 401 (or their public answer) as
    // they would without the header.
    let Some(org_id) = org_id else {
        return Ok(next.call(req).await?.map_into_boxed_body());
    };
    let key = match key_of(&raw_key) {
        Ok(key) => key,
        Err(e) => return Ok(req.error_response(e)),
    };
    let Some(state) = req.app_data::<web::Data<AppState>>().cloned() else {
        return Ok(req.error_response(ApiError::Internal("AppState missing".into())));
    };
    let body = match read_body(&mut req).await {
        Ok(body) => body,
        Err(e) => return Ok(req.error_response(e)),
    };
    let digest = request_digest(&req, &body);
    req.set_payload(actix_web::dev::Payload::from(body));

    let replay_for =
        Duration::from_secs(u64::from(state.settings.retention.idempotency_hours.max(1)) * 3600);
    let abandoned_after = Duration::from_secs(state.settings.idempotency.abandoned_after_secs);
    let claim = async {
        let mut conn = state.conn().await?;
        Ok::<_, ApiError>(
            uptime_db::idempotency::claim(
                &mut conn,
                org_id,
                &key,
                &digest,
                replay_for,
                abandoned_after,
            )
            .await?,
        )
    }
    .await;
    match claim {
        Err(e) => Ok(req.error_response(e)),
        Ok(Claim::Replay(stored)) => Ok(req.into_response(replay(stored))),
        Ok(Claim::Mismatch) => Ok(req.error_response(ApiError::Unprocessable {
            field: HEADER,
            message: "was used for another request (method, path or body) in the last \
                      retention.idempotency_hours; use a new key"
                .into(),
        })),
        Ok(Claim::InFlight) => {
            let mut res = req.error_response(ApiError::ConflictOn {
                field: HEADER,
                message: "a request with this key is still being processed; retry shortly".into(),
            });
            res.headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from_static("1"));
            Ok(res)
        }
        Ok(Claim::Claimed) => {
            let res = next.call(req).await?;
            Ok(record(&state, org_id, &key, res).await)
        }
    }
}

/// The header's value as a key: 1 to [`MAX_KEY_LEN`] visible ASCII characters.
fn key_of(raw: &HeaderValue) -> Result<String, ApiError> {
    let invalid = || {
        ApiError::invalid_field(
            HEADER,
            format!("1 to {MAX_KEY_LEN} visible ASCII characters (a UUID is a good key)"),
        )
    };
    let key = raw.to_str().map_err(|_| invalid())?.trim();
    if key.is_empty() || key.len() > MAX_KEY_LEN || !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(invalid());
    }
    Ok(key.to_string())
}

/// Reads the whole body, refusing past [`MAX_KEYED_BODY`] without reading on.
async fn read_body(req: &mut ServiceRequest) -> Result<web::Bytes, ApiError> {
    let mut payload = req.take_payload();
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|_| ApiError::invalid_field("body", "could not be read"))?;
        if body.len() + chunk.len() > MAX_KEYED_BODY {
            return Err(ApiError::PayloadTooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

fn request_digest(req: &ServiceRequest, body: &[u8]) -> Vec<u8> {
    let mut hasher = Sha256::new();
    hasher.update(req.method().as_str().as_bytes());
    hasher.update(b"\n");
    hasher.update(req.uri().path().as_bytes());
    hasher.update(b"?");
    hasher.update(req.uri().query().unwrap_or("").as_bytes());
    hasher.update(b"\n");
    hasher.update(body);
    hasher.finalize().to_vec()
}

fn replay(stored: StoredResponse) -> HttpResponse {
    let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::OK);
    let mut res = HttpResponse::build(status);
    if let Some(content_type) = stored.content_type {
        res.insert_header((CONTENT_TYPE, content_type));
    }
    for (name, value) in &stored.headers {
        // Only the listed ones were stored; a row edited by hand cannot
        // make a replay answer anything else.
        let listed = REPLAYED_HEADERS.contains(&name.as_str());
        if let (true, Ok(name), Ok(value)) = (
            listed,
            HeaderName::try_from(name.as_str()),
            HeaderValue::from_str(value),
        ) {
            res.append_header((name, value));
        }
    }
    res.insert_header((HeaderName::from_static(REPLAYED), "true"));
    res.body(stored.body)
}

/// Keeps the handler's response for replays (or gives the key up when there
/// is nothing to replay), and answers it.
async fn record(
    state: &AppState,
    org_id: i64,
    key: &str,
    res: ServiceResponse<impl MessageBody + 'static>,
) -> ServiceResponse<BoxBody> {
    let (req, res) = res.into_parts();
    let status = res.status();
    let content_type = res
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let headers = replayed_headers(res.headers());
    let (res, body) = res.into_parts();
    // Bounded: our responses are JSON pages of bounded size; a body that
    // cannot be read is answered as a 500 and the key given up.
    let body = match actix_web::body::to_bytes_limited(body, MAX_STORED_RESPONSE).await {
        Ok(Ok(body)) => Some(body),
        _ => None,
    };
    let keep =
        body.is_some() && !status.is_server_error() && status != StatusCode::TOO_MANY_REQUESTS;
    let outcome = async {
        let mut conn = state.conn().await?;
        match &body {
            Some(body) if keep => {
                let stored = StoredResponse {
                    status: status.as_u16(),
                    content_type,
                    headers,
                    body: body.to_vec(),
                };
                uptime_db::idempotency::complete(&mut conn, org_id, key, &stored).await?
            }
            _ => uptime_db::idempotency::release(&mut conn, org_id, key).await?,
        }
        Ok::<_, ApiError>(())
    }
    .await;
    if let Err(error) = outcome {
        // The request's effect stands and its client gets its answer; a
        // retry finds the claim in flight until it is abandoned.
        tracing::warn!(%error, "recording an idempotent response failed");
    }
    let res = match body {
        Some(body) => res.set_body(BoxBody::new(body)),
        None => ApiError::Internal("response body unreadable".into())
            .error_response()
            .map_into_boxed_body(),
    };
    ServiceResponse::new(req, res)
}

/// The [`REPLAYED_HEADERS`] of a response, as (name, value).
fn replayed_headers(headers: &actix_web::http::header::HeaderMap) -> Vec<(String, String)> {
    REPLAYED_HEADERS
        .iter()
        .flat_map(|name| {
            headers
                .get_all(*name)
                .filter_map(move |value| Some((name.to_string(), value.to_str().ok()?.to_string())))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_short_visible_ascii() {
        assert!(key_of(&HeaderValue::from_static("4f0c-ab")).is_ok());
        assert!(key_of(&HeaderValue::from_static("")).is_err());
        assert!(key_of(&HeaderValue::from_static("a b")).is_err());
        let long = "k".repeat(MAX_KEY_LEN + 1);
        assert!(key_of(&HeaderValue::from_str(&long).unwrap()).is_err());
    }
}
