//! Bearer authentication and per-key rate limiting, as an extractor: a
//! handler that takes an [`AuthUser`] argument is authenticated. The work is
//! done by `middleware::authenticate` before the handler's extractors run.

use crate::error::ApiError;
use crate::keys;
use crate::state::AppState;
use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest};
use futures::future::LocalBoxFuture;

/// The authenticated caller.
#[derive(Debug, Clone, Copy)]
pub struct AuthUser {
    pub user_id: i64,
    pub key_id: i64,
}

impl FromRequest for AuthUser {
    type Error = actix_web::Error;
    type Future = LocalBoxFuture<'static, Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        // Normally `middleware::authenticate` has authenticated the request
        // before any extractor ran, so the body is never read for a caller
        // without a valid key. Without it (a route wrongly listed as public)
        // authenticating here is still correct, only concurrent with the body.
        if let Some(Authenticated(outcome)) = req.extensions_mut().remove::<Authenticated>() {
            return Box::pin(async move { Ok(outcome?) });
        }
        let authenticating = authenticate_request(req);
        Box::pin(async move { Ok(authenticating.await?) })
    }
}

/// The outcome of [`authenticate_request`], left in the request's extensions
/// by `middleware::authenticate` for the [`AuthUser`] extractor.
pub struct Authenticated(pub Result<AuthUser, ApiError>);

/// Checks the request's bearer key and takes a rate-limit token: what every
/// authenticated route runs before anything else.
pub fn authenticate_request(
    req: &HttpRequest,
) -> impl std::future::Future<Output = Result<AuthUser, ApiError>> + 'static {
    let state = req.app_data::<web::Data<AppState>>().cloned();
    let raw = bearer_token(req);
    async move {
        let state = state.ok_or_else(|| ApiError::Internal("AppState missing".into()))?;
        let raw = raw.ok_or(ApiError::Unauthorized)?;
        let user = authenticate(&state, &raw).await?;
        // Per user: every key of theirs draws from the same bucket.
        state.rate_limiter.check(user.user_id)?;
        Ok(user)
    }
}

fn bearer_token(req: &HttpRequest) -> Option<String> {
    let value = req
        .headers()
        .get(actix_web::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim().to_string())
}

async fn authenticate(state: &AppState, raw: &str) -> Result<AuthUser, ApiError> {
    if !keys::well_formed(raw) {
        return Err(ApiError::Unauthorized);
    }
    let digest = keys::digest(raw);
    // A key that matched nothing a moment ago is refused without a query.
    if state.unknown_keys.contains(&digest) {
        return Err(ApiError::Unauthorized);
    }
    let mut conn = uptime_db::pool::conn(&state.pool).await?;
    let Some(key) = uptime_db::api_keys::find_active_by_digest(&mut conn, &digest).await? else {
        state.unknown_keys.remember(digest);
        return Err(ApiError::Unauthorized);
    };
    // The lookup matched on the digest already; comparing again in constant
    // time keeps the check itself free of timing differences.
    if !keys::digests_match(&key.key_sha256, &digest) {
        return Err(ApiError::Unauthorized);
    }
    let now = chrono::Utc::now();
    let stale = key
        .last_used_at
        .is_none_or(|t| now - t > chrono::Duration::seconds(60));
    if stale {
        uptime_db::api_keys::touch(&mut conn, key.id, now, chrono::Duration::seconds(60)).await?;
    }
    Ok(AuthUser {
        user_id: key.user_id,
        key_id: key.id,
    })
}
