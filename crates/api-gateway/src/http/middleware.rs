//! Per-request span, log line and latency histogram; authentication ahead
//! of the handlers. Both are plain async functions wrapped with actix-web's
//! `middleware::from_fn`.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::HttpMessage;
use tracing::Instrument;

/// Wraps every request: `http_requests_total` and `http_request_duration_seconds`
/// by method, matched route and status, and a `request` span.
pub async fn request_metrics(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let method = req.method().to_string();
    let route = req.match_pattern().unwrap_or_else(|| "unmatched".into());
    let span = tracing::info_span!("request", %method, %route);
    let started = std::time::Instant::now();
    let res = next.call(req).instrument(span.clone()).await?;
    let status = res.status().as_u16().to_string();
    let elapsed = started.elapsed();
    let labels = [("method", method), ("route", route), ("status", status)];
    metrics::counter!("http_requests_total", &labels).increment(1);
    metrics::histogram!("http_request_duration_seconds", &labels).record(elapsed.as_secs_f64());
    span.in_scope(|| {
        tracing::debug!(
            status = res.status().as_u16(),
            elapsed_ms = elapsed.as_millis() as u64,
            "request served"
        )
    });
    Ok(res)
}

/// Authenticates every request to a route of the wrapped scope that the
/// route table does not declare public (`crate::authz::public_routes`:
/// their path or body carries its own credential) before the handler's extractors run, checks the
/// key's scope against the route's ([`crate::authz::ROUTES`]), and leaves
/// the outcome for the [`crate::access::auth::AuthUser`] extractor.
///
/// Why a middleware: actix-web polls a handler's extractors together, so a
/// JSON body was read and judged while the key lookup still waited for the
/// database, and an unknown key with a bad body got 400 instead of 401. The
/// outcome is left for the extractor rather than answered here so that a
/// wrong method stays 405 whoever asks (the scope routes by method after
/// this), and unknown paths stay 404.
pub async fn authenticate(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let route = req.match_pattern();
    let needs_key = route.as_deref().is_some_and(crate::api::scopes::needs_key);
    if let (true, Some(route)) = (needs_key, route) {
        let method = req.method().as_str().to_string();
        // The key's scope is judged here, for every route alike, and left
        // for the extractor like a bad key: a 403 comes before the body is
        // read, and a method the route does not serve stays 405.
        let outcome = crate::access::auth::authenticate_request(req.request())
            .await
            .and_then(|principal| crate::api::scopes::authorise(&method, &route, principal));
        req.extensions_mut()
            .insert(crate::access::auth::Authenticated(outcome));
    }
    next.call(req).await
}

/// Adds the organisation's rate-limit allowance, as the authentication left
/// it, to every authenticated response (refusals included), so a client can
/// pace itself: `RateLimit-Policy` and `RateLimit` as in the IETF httpapi
/// draft (`limit`, `remaining`, `reset` in seconds; the policy's window is
/// the time an empty bucket takes to fill), and the older `X-RateLimit-*`
/// trio that many clients read. Routes without a key carry none.
pub async fn rate_limit_headers(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    use actix_web::http::header::{HeaderName, HeaderValue};
    let mut res = next.call(req).await?;
    let allowance = res
        .request()
        .extensions()
        .get::<crate::http::rate_limit::Allowance>()
        .copied();
    if let Some(mut a) = allowance {
        // Any refusal to come back later says so in these headers too:
        // nothing left until its `Retry-After`, whichever limit refused
        // (the key check's token, a handler's larger charge, a line).
        if res.status() == actix_web::http::StatusCode::TOO_MANY_REQUESTS {
            let retry_after = res
                .headers()
                .get(actix_web::http::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
            if let Some(retry_after) = retry_after {
                a.remaining = 0;
                a.reset_secs = retry_after;
            }
        }
        let headers = res.headers_mut();
        let mut set = |name: &'static str, value: String| {
            if let Ok(value) = HeaderValue::from_str(&value) {
                headers.insert(HeaderName::from_static(name), value);
            }
        };
        set(
            "ratelimit-policy",
            format!("{};w={}", a.limit, a.window_secs.max(1)),
        );
        set(
            "ratelimit",
            format!(
                "limit={}, remaining={}, reset={}",
                a.limit, a.remaining, a.reset_secs
            ),
        );
        set("x-ratelimit-limit", a.limit.to_string());
        set("x-ratelimit-remaining", a.remaining.to_string());
        set("x-ratelimit-reset", a.reset_secs.to_string());
    }
    Ok(res)
}
