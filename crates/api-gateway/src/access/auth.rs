//! Bearer authentication and per-key rate limiting, as an extractor: a
//! handler that takes an [`AuthUser`] argument is authenticated. The work is
//! done by `middleware::authenticate` before the handler's extractors run.

use crate::access::auth_cache::{KnownKey, Link, TOUCH_GAP_SECS};
use crate::access::keys;
use crate::http::error::ApiError;
use crate::state::AppState;
use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpMessage, HttpRequest};
use futures::future::LocalBoxFuture;
use std::sync::Arc;

pub use crate::access::principal::{AuthUser, KeyPrefix};

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
    let address = req.peer_addr().map(|a| a.ip());
    // Cheap (a reference count): the allowance goes into its extensions for
    // the `RateLimit` headers (`middleware::rate_limit_headers`).
    let req = req.clone();
    async move {
        let state = state.ok_or_else(|| ApiError::Internal("AppState missing".into()))?;
        let raw = raw.ok_or(ApiError::Unauthorized)?;
        let user = authenticate(&state, &raw, address).await?;
        // Per organisation: every key of its members draws from the same
        // bucket.
        let allowance = match state.rate_limiter.check(user.org_id) {
            Ok(allowance) => allowance,
            Err(ApiError::RateLimited { retry_after_secs }) => {
                req.extensions_mut()
                    .insert(state.rate_limiter.refused(retry_after_secs));
                return Err(ApiError::RateLimited { retry_after_secs });
            }
            Err(other) => return Err(other),
        };
        req.extensions_mut().insert(allowance);
        Ok(user)
    }
}

/// Charges a request of organisation `org_id` that costs `cost` tokens in
/// all, its own (taken by [`authenticate_request`]) included: at most a
/// full bucket ([`crate::http::rate_limit::RateLimiter::charge`]). Where the
/// bucket stands after is left for the `RateLimit` headers; a refusal
/// names `field`, the request (`what`, costing one token per `unit`), the
/// charge and the maximum.
pub fn charge_request(
    req: &HttpRequest,
    state: &AppState,
    org_id: i64,
    cost: u32,
    field: &'static str,
    (what, unit): (&str, &str),
) -> Result<(), ApiError> {
    use crate::http::rate_limit::Charge;
    match state.rate_limiter.charge(org_id, cost, 1) {
        Charge::Taken(allowance) => {
            req.extensions_mut().insert(allowance);
            Ok(())
        }
        Charge::Refused {
            retry_after_secs,
            charged,
        } => {
            req.extensions_mut()
                .insert(state.rate_limiter.refused(retry_after_secs));
            let max = state.rate_limiter.max_charge();
            Err(ApiError::RateLimitedFor {
                retry_after_secs,
                field,
                message: format!(
                    "{what} costs {cost} rate-limit tokens (one per {unit}); no request is \
                     charged more than a full bucket (rate_limit.burst: {max}), so it is charged \
                     {charged}, which the organisation's bucket holds again in \
                     {retry_after_secs} s if nothing else is spent meanwhile"
                ),
            })
        }
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

/// The key's principal, from `address`.
async fn authenticate(
    state: &AppState,
    raw: &str,
    address: Option<std::net::IpAddr>,
) -> Result<AuthUser, ApiError> {
    if !keys::well_formed(raw) {
        return Err(ApiError::Unauthorized);
    }
    let digest = keys::digest(raw);
    let link = Link::of(&state.nats);
    // A key that was valid a moment ago, and has not been revoked since, is
    // accepted without a query.
    if let Some(known) = state.known_keys.get(&digest, link) {
        let principal = AuthUser {
            address,
            ..known.principal.clone()
        };
        touch_later(state, known.clone(), principal.clone());
        return Ok(principal);
    }
    // A key that matched nothing a moment ago is refused without a query.
    if state.unknown_keys.contains(&digest) {
        return Err(ApiError::Unauthorized);
    }
    // Taken before the query: a revocation that lands while it runs keeps
    // its answer out of the cache.
    let ticket = state.known_keys.ticket();
    let mut conn = uptime_db::pool::conn(&state.pool).await?;
    let Some(key) = uptime_db::api_keys::find_active_by_digest(&mut conn, &digest).await? else {
        state.unknown_keys.remember(digest);
        return Err(ApiError::Unauthorized);
    };
    // The lookup matched on the digest already; comparing again in constant
    // time keeps the check itself free of timing differences.
    if !keys::digests_match(&key.key.key_sha256, &digest) {
        return Err(ApiError::Unauthorized);
    }
    let principal = AuthUser {
        address,
        ..AuthUser::of(&key)
    };
    let known = KnownKey::new(principal.clone(), key.key.last_used_at);
    let now = chrono::Utc::now();
    if let Some(previous) = known.claim_touch(now) {
        // On a miss the connection is at hand: write now.
        if let Err(e) = crate::access::key_use::touch(&mut conn, &principal, now, touch_gap()).await
        {
            known.unclaim_touch(now, previous);
            return Err(e);
        }
    }
    state.known_keys.remember(ticket, digest, known, link);
    Ok(principal)
}

fn touch_gap() -> chrono::Duration {
    chrono::Duration::seconds(TOUCH_GAP_SECS)
}

/// Writes `last_used_at` (and the audit entry of a use after an idle
/// spell, `crate::access::key_use`) for a key accepted from the cache, at most once
/// a minute per key, off the request's path: the request does not wait for
/// it. A failed write is retried by the key's next use.
fn touch_later(state: &AppState, known: Arc<KnownKey>, principal: AuthUser) {
    let now = chrono::Utc::now();
    let Some(previous) = known.claim_touch(now) else {
        return;
    };
    let pool = state.pool.clone();
    tokio::spawn(async move {
        let written = async {
            let mut conn = uptime_db::pool::conn(&pool).await?;
            crate::access::key_use::touch(&mut conn, &principal, now, touch_gap()).await
        }
        .await;
        if let Err(e) = written {
            tracing::warn!(key_id = known.principal.key_id, error = %e, "could not record an API key's last use");
            known.unclaim_touch(now, previous);
        }
    });
}
