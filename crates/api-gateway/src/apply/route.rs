//! `POST /api/v1/apply`: a whole desired set of monitors, alert contacts,
//! escalation policies, maintenance windows and status pages, answered with a plan and, unless a dry run, carried out in one
//! transaction (the pure core and the bodies are `crate::apply`'s; `run` the
//! transaction).
//!
//! - The body is read here, bounded by `apply.max_body_bytes` (413 past
//!   it), and holds at most `apply.max_resources` resources (400 naming
//!   `resources`). The request costs one rate-limit token per resource
//!   (the first is the request's own), at most a full bucket: a bucket
//!   that is full pays for any apply, one that is not answers 429 with the
//!   wait until it is (`crate::rate_limit::RateLimiter::charge`).
//! - A key limited by a label selector cannot apply (403): an apply manages
//!   every resource of the organisation that carries a ref, and prunes them.
//! - Every resource is validated, every problem answered at once (400,
//!   `errors` naming each by index, kind, ref and field); nothing is then
//!   written.

use crate::api::table::{routes, Routes};
use crate::apply::request::{ApplyRefusal, ApplyRequest, ApplyResponse, ResourceError};
use crate::auth::AuthUser;
use crate::error::{ApiError, ErrorBody, FieldError};
use crate::state::AppState;
use actix_web::{web, HttpRequest, HttpResponse};
use futures::StreamExt;

/// Problems listed in a refusal at most.
pub const MAX_ERRORS: usize = 1000;

pub fn routes() -> Routes {
    routes![apply: WRITE]
}

/// Apply a desired set of monitors, alert contacts, escalation policies,
/// maintenance windows and status pages, named by their refs.
///
/// Answers the plan: each resource's `create`, `update` (with the changed
/// fields), `unchanged`, then the `delete` of each of the organisation's
/// resources that carries a ref and is absent from the set (`pruned:
/// true` only with `prune`; resources without a ref are never touched).
/// Not a dry run: the plan is carried out in one transaction, all or
/// nothing, the quotas checked for the end state (a dry run does the same
/// and rolls back, so it is refused as the apply would be); an update keeps the
/// resource's id and history. At most `apply.max_resources` (10,000)
/// resources and `apply.max_body_bytes` (32 MiB) of body; one rate-limit
/// token per resource, at most a full bucket.
#[utoipa::path(post, path = "/api/v1/apply", operation_id = "apply", tag = "apply", request_body = ApplyRequest,
    responses((status = 200, body = ApplyResponse, description = "the plan; `applied` when it was carried out"),
        (status = 400, body = ApplyRefusal, description = "`invalid request body`, nothing written: the body is not an apply; more than `apply.max_resources` resources (field `resources`); or resources refused, each problem in `errors` (index, kind, ref, field) and in `details` (`resources[<index>].<field>`)"),
        (status = 403, body = ErrorBody, description = "quota exceeded by the end state (nothing written; a dry run answers the same); or the key is limited by a label selector (`labels`)"),
        (status = 409, body = ErrorBody, description = "a concurrent write took a ref of the set (`ref`); nothing written"),
        (status = 413, body = ErrorBody, description = "the body exceeds `apply.max_body_bytes`"),
        (status = 429, body = ErrorBody, description = "the rate limit: one token per resource, the request's own included, at most a full bucket (`rate_limit.burst`); the bucket is short of that now, and the same request is served after `Retry-After` if nothing else is spent meanwhile (field `resources` names the cost and the maximum)")))]
pub async fn apply(
    state: web::Data<AppState>,
    user: AuthUser,
    req: HttpRequest,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    if user.label_selector.is_some() {
        return Err(ApiError::Forbidden {
            field: "labels",
            message: "a key limited by a label selector cannot apply: an apply manages (and \
                      prunes) every resource of the organisation that carries a ref"
                .into(),
        });
    }
    let limits = state.settings.apply.clone();
    let body: ApplyRequest = read_body(&req, payload, limits.max_body_bytes).await?;
    if body.resources.len() > limits.max_resources {
        return Err(ApiError::invalid_field(
            "resources",
            format!("at most {} resources per apply", limits.max_resources),
        ));
    }
    // One token per resource, at most a full bucket, the request's own
    // (taken when it was authenticated) among them.
    let cost = u32::try_from(body.resources.len()).unwrap_or(u32::MAX);
    let what = format!("an apply of {cost} resources");
    crate::auth::charge_request(
        &req,
        &state,
        user.org_id,
        cost,
        "resources",
        (&what, "resource"),
    )?;
    match super::run::apply(&state, &user, body).await? {
        Ok(response) => Ok(HttpResponse::Ok().json(response)),
        Err(errors) => Ok(refusal(errors)),
    }
}

/// The 400 listing every problem (the first [`MAX_ERRORS`]).
fn refusal(mut errors: Vec<ResourceError>) -> HttpResponse {
    errors.truncate(MAX_ERRORS);
    let details = errors
        .iter()
        .map(|e| FieldError::new(format!("resources[{}].{}", e.index, e.field), &e.message))
        .collect();
    HttpResponse::BadRequest().json(ApplyRefusal {
        error: ApiError::InvalidBody(Vec::new()).to_string(),
        details,
        errors,
    })
}

/// Reads the body, refusing past `limit` bytes (413) without reading on,
/// then parses it by the API's JSON rules.
async fn read_body(
    req: &HttpRequest,
    mut payload: web::Payload,
    limit: usize,
) -> Result<ApplyRequest, ApiError> {
    let announced = req
        .headers()
        .get(actix_web::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    if announced.is_some_and(|n| n > limit) {
        return Err(ApiError::PayloadTooLarge);
    }
    let mut bytes = web::BytesMut::with_capacity(announced.unwrap_or(0).min(limit));
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|_| ApiError::invalid_field("body", "could not be read"))?;
        if bytes.len() + chunk.len() > limit {
            return Err(ApiError::PayloadTooLarge);
        }
        bytes.extend_from_slice(&chunk);
    }
    let value: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::invalid_field("json", e.to_string()))?;
    crate::validation::checked(value)
}
