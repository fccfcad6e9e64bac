//! The one place where errors become HTTP responses. Every error body is
//! `{"error": "<fixed message>", "details": [{"field", "message"}]?}`.

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;
use utoipa::ToSchema;

/// The checks-per-minute budget's name, as it appears in a 403's
/// `details[].field` (the other quotas' names are `crate::quotas::name`).
pub const CHECKS_PER_MINUTE: &str = "checks_per_minute";

/// One problem with one field of the input.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// The error body.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// A fixed message per kind of error: `invalid request body`, `unauthorized`, `not found`, ...
    pub error: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<FieldError>,
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("invalid request body")]
    InvalidBody(Vec<FieldError>),
    #[error("invalid query parameters")]
    InvalidQuery(Vec<FieldError>),
    #[error("unauthorized")]
    Unauthorized,
    #[error("not found")]
    NotFound,
    /// Nothing has what `field` names (a ref no resource carries); `message`
    /// repeats it, so a caller need not guess which lookup failed.
    #[error("not found")]
    NotFoundOn {
        field: &'static str,
        message: String,
    },
    #[error("method not allowed")]
    MethodNotAllowed,
    #[error("request body too large")]
    PayloadTooLarge,
    #[error("contact not verified")]
    ContactNotVerified,
    /// The caller may not do this: `field` says what is short (`scope`: the
    /// key's scope or its holder's role; `crate::authz`), `message` how.
    #[error("forbidden")]
    Forbidden {
        field: &'static str,
        message: String,
    },
    /// The request conflicts with the resource's kind or state; the fixed
    /// message says how (e.g. `heartbeat monitors are checked by pings`).
    #[error("{0}")]
    Conflict(&'static str),
    /// The request conflicts with the state of what it names; `field` says
    /// which input, `message` why (the last owner cannot leave, ...).
    #[error("conflict")]
    ConflictOn {
        field: &'static str,
        message: String,
    },
    /// The request is well formed but names something that cannot be used
    /// for it (an `Idempotency-Key` sent before with another request).
    #[error("unprocessable request")]
    Unprocessable {
        field: &'static str,
        message: String,
    },
    /// `If-Match` names another version than `current`, the resource's.
    #[error("precondition failed")]
    PreconditionFailed { current: String },
    #[error("rate limit exceeded")]
    RateLimited { retry_after_secs: u64 },
    /// A request that costs more than one token (an apply) finds the
    /// organisation's bucket short; `message`, under `field`, says what it
    /// costs and the most any request is charged.
    #[error("rate limit exceeded")]
    RateLimitedFor {
        retry_after_secs: u64,
        field: &'static str,
        message: String,
    },
    /// A verification-email limit holds; `message` names it.
    #[error("rate limit exceeded")]
    MailLimited {
        retry_after_secs: u64,
        message: String,
    },
    /// The caller already has as many requests of one kind running or
    /// waiting as they may (bulk creates: one validated at a time, a few in
    /// line); `message`, under `field`, says which.
    #[error("too many requests")]
    TooManyRequests {
        retry_after_secs: u64,
        field: &'static str,
        message: String,
    },
    /// Creating one more would pass one of the organisation's quotas.
    #[error("quota exceeded")]
    QuotaExceeded { quota: &'static str, limit: i64 },
    /// The change would raise the organisation's checks per minute past its
    /// budget of `limit` (`crate::quotas`); the load it would make is in
    /// thousandths of a check per minute.
    #[error("quota exceeded")]
    CheckLoadExceeded { limit: i64, would_make_millis: i64 },
    #[error("alert delivery failed")]
    DeliveryFailed(String),
    /// A dependency (database, NATS) is unreachable: retry later.
    #[error("service unavailable")]
    Unavailable(String),
    /// A bug: logged with its cause, never shown.
    #[error("internal error")]
    Internal(String),
}

impl ApiError {
    pub fn invalid_field(field: &str, message: impl Into<String>) -> Self {
        ApiError::InvalidBody(vec![FieldError::new(field, message)])
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::InvalidBody(_) | ApiError::InvalidQuery(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::NotFound | ApiError::NotFoundOn { .. } => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::ContactNotVerified | ApiError::Conflict(_) | ApiError::ConflictOn { .. } => {
                StatusCode::CONFLICT
            }
            ApiError::Unprocessable { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::PreconditionFailed { .. } => StatusCode::PRECONDITION_FAILED,
            ApiError::RateLimited { .. }
            | ApiError::RateLimitedFor { .. }
            | ApiError::MailLimited { .. }
            | ApiError::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::QuotaExceeded { .. }
            | ApiError::CheckLoadExceeded { .. }
            | ApiError::Forbidden { .. } => StatusCode::FORBIDDEN,
            ApiError::DeliveryFailed(_) => StatusCode::BAD_GATEWAY,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let details = match self {
            ApiError::InvalidBody(d) | ApiError::InvalidQuery(d) => d.clone(),
            ApiError::DeliveryFailed(cause) => vec![FieldError::new("delivery", cause.clone())],
            ApiError::PreconditionFailed { .. } => vec![FieldError::new(
                "If-Match",
                "the resource changed since that version was read; read it again (its ETag is the current version)",
            )],
            ApiError::MailLimited { message, .. } => {
                vec![FieldError::new("verification_email", message.clone())]
            }
            ApiError::Forbidden { field, message }
            | ApiError::NotFoundOn { field, message }
            | ApiError::ConflictOn { field, message }
            | ApiError::Unprocessable { field, message } => {
                vec![FieldError::new(*field, message.clone())]
            }
            ApiError::TooManyRequests { field, message, .. }
            | ApiError::RateLimitedFor { field, message, .. } => {
                vec![FieldError::new(*field, message.clone())]
            }
            ApiError::QuotaExceeded { quota, limit } => vec![FieldError::new(
                *quota,
                format!(
                    "at most {limit} {} per organisation",
                    quota.replace('_', " ")
                ),
            )],
            ApiError::CheckLoadExceeded {
                limit,
                would_make_millis,
            } => vec![FieldError::new(
                CHECKS_PER_MINUTE,
                format!(
                    "at most {limit} checks per minute per organisation; this change would make {}",
                    // Thousandths, shown as the shortest decimal (1012.5).
                    *would_make_millis as f64 / 1000.0
                ),
            )],
            ApiError::Unavailable(cause) => {
                tracing::warn!(%cause, "dependency unavailable");
                vec![]
            }
            ApiError::Internal(cause) => {
                tracing::error!(%cause, "internal error");
                vec![]
            }
            _ => vec![],
        };
        let mut response = HttpResponse::build(self.status_code());
        match self {
            ApiError::Unauthorized => {
                response.insert_header((header::WWW_AUTHENTICATE, "Bearer"));
            }
            ApiError::RateLimited { retry_after_secs }
            | ApiError::RateLimitedFor {
                retry_after_secs, ..
            }
            | ApiError::MailLimited {
                retry_after_secs, ..
            }
            | ApiError::TooManyRequests {
                retry_after_secs, ..
            } => {
                response.insert_header((header::RETRY_AFTER, retry_after_secs.to_string()));
            }
            ApiError::Unavailable(_) => {
                response.insert_header((header::RETRY_AFTER, "5"));
            }
            // Empty when nothing exists (a PUT by ref that would create).
            ApiError::PreconditionFailed { current } if !current.is_empty() => {
                response.insert_header((header::ETAG, current.clone()));
            }
            _ => {}
        }
        response.json(ErrorBody {
            error: self.to_string(),
            details,
        })
    }
}

impl From<uptime_db::DbError> for ApiError {
    fn from(e: uptime_db::DbError) -> Self {
        // Every pooled connection stayed busy for `pool_wait_timeout_ms`:
        // answer 503 with `Retry-After` rather than queueing without bound.
        if let uptime_db::DbError::PoolTimeout(_) = e {
            return ApiError::Unavailable(e.to_string());
        }
        if e.is_transient() {
            ApiError::Unavailable(e.to_string())
        } else {
            ApiError::Internal(e.to_string())
        }
    }
}

impl From<diesel::result::Error> for ApiError {
    fn from(e: diesel::result::Error) -> Self {
        uptime_db::DbError::from(e).into()
    }
}

/// Turns actix's extractor errors (bad JSON, bad path, bad query, too large)
/// into our JSON errors. Installed on every extractor config in `startup`.
pub mod extractors {
    use super::{ApiError, FieldError};
    use actix_web::error::{JsonPayloadError, PathError, QueryPayloadError};
    use actix_web::HttpRequest;

    pub fn json(err: JsonPayloadError, _: &HttpRequest) -> actix_web::Error {
        match err {
            JsonPayloadError::Overflow { .. } | JsonPayloadError::OverflowKnownLength { .. } => {
                ApiError::PayloadTooLarge.into()
            }
            JsonPayloadError::Deserialize(e) => {
                let field = if e.is_data() { "body" } else { "json" };
                ApiError::InvalidBody(vec![FieldError::new(field, e.to_string())]).into()
            }
            other => ApiError::InvalidBody(vec![FieldError::new("body", other.to_string())]).into(),
        }
    }

    /// A path that does not parse (`/monitors/abc`) names nothing that exists.
    pub fn path(_: PathError, _: &HttpRequest) -> actix_web::Error {
        ApiError::NotFound.into()
    }

    pub fn query(err: QueryPayloadError, _: &HttpRequest) -> actix_web::Error {
        ApiError::InvalidQuery(vec![FieldError::new("query", err.to_string())]).into()
    }
}
