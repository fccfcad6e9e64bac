//! Entity tags: a resource's version, as HTTP carries it.
//!
//! A representation's tag is a digest of its JSON bytes, so it changes
//! whenever anything the client would see changes: an edit, and also a
//! monitor's status (like a Kubernetes `resourceVersion`, which a status
//! update moves too). [`tag_responses`] puts it on every `200`/`201` JSON
//! answer and answers `If-None-Match` with `304`.
//!
//! `If-Match` makes a write conditional: the handlers that honour it
//! ([`CONDITIONAL_ROUTES`]) compare it with the tag of the resource as they
//! read it for update (locked in their transaction), so a write based on a
//! stale read is refused with `412` and nothing changes; the check and the
//! write cannot be split by another writer. Any other write given
//! `If-Match` is refused with `400` rather than silently ignoring it.

use crate::http::error::ApiError;
use actix_web::body::{BodySize, BoxBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderValue, ETAG, IF_MATCH, IF_NONE_MATCH};
use actix_web::http::{Method, StatusCode};
use actix_web::middleware::Next;
use actix_web::{FromRequest, HttpRequest, HttpResponse};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::future::{ready, Ready};

/// The writes that honour `If-Match`: (method, route pattern).
pub const CONDITIONAL_ROUTES: &[(&str, &str)] = &[
    ("PATCH", "/api/v1/monitors/{id}"),
    ("DELETE", "/api/v1/monitors/{id}"),
    ("PATCH", "/api/v1/alert-contacts/{id}"),
    ("DELETE", "/api/v1/alert-contacts/{id}"),
    ("PUT", "/api/v1/monitors/by-ref/{ref}"),
    ("PUT", "/api/v1/alert-contacts/by-ref/{ref}"),
    ("DELETE", "/api/v1/monitors/by-ref/{ref}"),
    ("DELETE", "/api/v1/alert-contacts/by-ref/{ref}"),
    ("PUT", "/api/v1/maintenance-windows/by-ref/{ref}"),
    ("PUT", "/api/v1/status-pages/by-ref/{ref}"),
    ("PUT", "/api/v1/escalation-policies/by-ref/{ref}"),
];

/// Responses larger than this get no tag (none of ours are).
const MAX_TAGGED: usize = 8 * 1024 * 1024;

/// The tag of these response bytes: quoted, 24 hex digits of SHA-256.
pub fn of_bytes(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    format!("\"{}\"", hex::encode(&digest[..12]))
}

/// The tag of `resource` as a handler answers it (`HttpResponse::json`
/// writes the same bytes).
pub fn of_json<T: Serialize>(resource: &T) -> String {
    of_bytes(&serde_json::to_vec(resource).unwrap_or_default())
}

/// Whether an `If-None-Match`/`If-Match` list names `tag` (`*` names any;
/// weak tags compare by their opaque part).
fn listed(header: &str, tag: &str) -> bool {
    header.split(',').map(str::trim).any(|candidate| {
        candidate == "*" || candidate.strip_prefix("W/").unwrap_or(candidate) == tag
    })
}

/// A request's `If-Match`, for the handlers in [`CONDITIONAL_ROUTES`].
#[derive(Debug, Clone, Default)]
pub struct IfMatch(Option<String>);

impl IfMatch {
    /// `Ok` when there is no condition or it names `current`; `412`
    /// otherwise.
    pub fn check(&self, current: &str) -> Result<(), ApiError> {
        match &self.0 {
            Some(header) if !listed(header, current) => Err(ApiError::PreconditionFailed {
                current: current.to_string(),
            }),
            _ => Ok(()),
        }
    }

    /// [`IfMatch::check`] where nothing exists yet (a PUT that would
    /// create): any condition fails, since no version can match.
    pub fn check_absent(&self) -> Result<(), ApiError> {
        match &self.0 {
            Some(_) => Err(ApiError::PreconditionFailed {
                current: String::new(),
            }),
            None => Ok(()),
        }
    }
}

impl FromRequest for IfMatch {
    type Error = actix_web::Error;
    type Future = Ready<Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let header = req
            .headers()
            .get(IF_MATCH)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        ready(Ok(IfMatch(header)))
    }
}

/// Tags `200`/`201` JSON answers, answers a matching `If-None-Match` on a
/// `GET` with `304`, and refuses `If-Match` on writes that cannot honour it.
pub async fn tag_responses(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let method = req.method().clone();
    if req.headers().contains_key(IF_MATCH) && method != Method::GET && method != Method::HEAD {
        let route = req.match_pattern().unwrap_or_default();
        // A method the path does not serve (POST or TRACE on a PUT-only
        // path) is the router's 405, not this refusal.
        let served = crate::api::scopes::access_of(method.as_str(), &route).is_some();
        let honoured = CONDITIONAL_ROUTES
            .iter()
            .any(|(m, r)| *m == method.as_str() && *r == route);
        if served && !honoured {
            return Ok(req.error_response(ApiError::invalid_field(
                "If-Match",
                "this operation does not take If-Match (docs/api.md lists those that do)",
            )));
        }
    }
    let if_none_match = (method == Method::GET)
        .then(|| req.headers().get(IF_NONE_MATCH).cloned())
        .flatten();
    let res = next.call(req).await?;
    let status = res.status();
    let sized =
        matches!(res.response().body().size(), BodySize::Sized(n) if n as usize <= MAX_TAGGED);
    if !(status == StatusCode::OK || status == StatusCode::CREATED)
        || !sized
        || res.headers().contains_key(ETAG)
    {
        return Ok(res.map_into_boxed_body());
    }
    let (req, res) = res.into_parts();
    let (mut res, body) = res.into_parts();
    let bytes = match body.try_into_bytes() {
        Ok(bytes) => bytes,
        Err(body) => {
            return Ok(ServiceResponse::new(
                req,
                res.set_body(body).map_into_boxed_body(),
            ))
        }
    };
    let tag = of_bytes(&bytes);
    let value = HeaderValue::from_str(&tag).expect("hex in quotes is a valid header");
    let not_modified = if_none_match
        .as_ref()
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| listed(v, &tag));
    if not_modified && status == StatusCode::OK {
        let res = HttpResponse::NotModified()
            .insert_header((ETAG, value))
            .finish();
        return Ok(ServiceResponse::new(req, res));
    }
    res.headers_mut().insert(ETAG, value);
    Ok(ServiceResponse::new(req, res.set_body(BoxBody::new(bytes))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_name_tags_by_their_opaque_part_or_star() {
        let tag = of_bytes(b"{}");
        assert!(listed(&tag, &tag));
        assert!(listed(&format!("\"x\", W/{tag}"), &tag));
        assert!(listed("*", &tag));
        assert!(!listed("\"x\"", &tag));
    }

    #[test]
    fn if_match_refuses_a_stale_tag_and_passes_without_one() {
        let current = of_json(&serde_json::json!({"a": 1}));
        assert!(IfMatch(None).check(&current).is_ok());
        assert!(IfMatch(Some(current.clone())).check(&current).is_ok());
        assert!(matches!(
            IfMatch(Some("\"old\"".into())).check(&current),
            Err(ApiError::PreconditionFailed { .. })
        ));
    }
}
