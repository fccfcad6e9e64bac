//! The public routes. Each answers from the current snapshot: a map lookup,
//! an ETag comparison and a reference-counted body, in the encoding the
//! client takes (brotli, gzip or none). No route touches PostgreSQL.
//!
//! - `GET /status/{slug}` and `GET /` (by `Host`, for custom domains): the
//!   page; a private one needs `?access_token=`. Unknown (or no token): a
//!   404 page that does not say which.
//! - `GET /badge/{token}/{file}`: a monitor's badge (`status.svg`,
//!   `uptime-{24h,7d,30d,90d}.svg`, `response-time-{24h,7d}.svg`,
//!   `shields.json`), `Cache-Control: max-age=60`.

use crate::methods::Routes;
use crate::rate_limit::RateLimiter;
use crate::refresh::Shared;
use crate::render::badge::{self, Colour};
use crate::render::{Encoding, Rendered};
use crate::snapshot::Snapshot;
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use sha2::{Digest, Sha256};
use std::sync::{Arc, OnceLock};

/// What every handler shares.
pub struct ServeState {
    pub shared: Shared,
    pub limiter: RateLimiter,
    pub trust_forwarded_for: bool,
    /// Subscriptions only ([`crate::subscribe`]): page views never use it.
    pub pool: uptime_db::Pool,
    /// Subscribe requests per client address, on top of `limiter`.
    pub subscribe_limiter: RateLimiter,
    pub public_base_url: String,
    pub max_subscribers_per_page: i64,
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    let on = |path: &str| Routes::on(web::resource(path));
    cfg.service(on("/status/{slug}").get(page_by_slug).done())
        .service(on("/status/{slug}/feed.atom").get(feed_by_slug).done())
        .service(on("/badge/{token}/{file}").get(badge_file).done())
        .service(on("/").get(page_by_host).done());
}

/// Pages are revalidated on every view (a 304 costs nothing), so a state
/// change shows at the next refresh; badges are cached a minute, as
/// image proxies (GitHub's) expect.
const PAGE_CACHE: &str = "public, no-cache";
const PRIVATE_PAGE_CACHE: &str = "private, no-cache";
const BADGE_CACHE: &str = "public, max-age=60";
/// Pages load nothing but their inline style and a logo over https, and
/// post their forms (subscribe, confirm, unsubscribe) to this service only.
pub(crate) const PAGE_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

pub(crate) fn client_address(
    req: &HttpRequest,
    trust_forwarded_for: bool,
) -> Option<std::net::IpAddr> {
    if trust_forwarded_for {
        let forwarded = req
            .headers()
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
            .and_then(|v| v.trim().parse().ok());
        if forwarded.is_some() {
            return forwarded;
        }
    }
    req.peer_addr().map(|a| a.ip())
}

/// `429` when the client is over its rate.
pub(crate) fn limited(req: &HttpRequest, state: &ServeState) -> Option<HttpResponse> {
    let address = client_address(req, state.trust_forwarded_for)?;
    let wait = state.limiter.check(address)?;
    metrics::counter!("status_pages_rate_limited_total").increment(1);
    Some(
        HttpResponse::TooManyRequests()
            .insert_header((header::RETRY_AFTER, wait.to_string()))
            .content_type("text/plain; charset=utf-8")
            .body("Too many requests; retry later.\n"),
    )
}

/// The best encoding of `rendered` the request accepts.
fn encoding_for(req: &HttpRequest, rendered: &Rendered) -> Encoding {
    let accepts = req
        .headers()
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let takes = |name: &str| {
        accepts.split(',').any(|part| {
            let mut pieces = part.split(';');
            let coding = pieces.next().unwrap_or_default().trim();
            let refused = pieces.any(|p| p.trim().replace(' ', "") == "q=0");
            coding.eq_ignore_ascii_case(name) && !refused
        })
    };
    if takes("br") && !rendered.brotli.is_empty() {
        Encoding::Brotli
    } else if takes("gzip") && !rendered.gzip.is_empty() {
        Encoding::Gzip
    } else {
        Encoding::Identity
    }
}

/// Whether `If-None-Match` names `etag` (or is `*`), by the weak
/// comparison RFC 9110 13.1.2 asks for it: `W/"x"` matches `"x"`.
fn none_match(req: &HttpRequest, etag: &str) -> bool {
    let opaque = |tag: &str| {
        let tag = tag.trim();
        tag.strip_prefix("W/").unwrap_or(tag).to_string()
    };
    let ours = opaque(etag);
    req.headers()
        .get_all(header::IF_NONE_MATCH)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|given| given.trim() == "*" || opaque(given) == ours)
}

/// `rendered` in the best encoding the request accepts, or `304` when the
/// client holds that representation already.
fn respond(
    req: &HttpRequest,
    status: StatusCode,
    rendered: &Rendered,
    cache: &'static str,
    policy: Option<&'static str>,
) -> HttpResponse {
    let mut response = HttpResponse::build(status);
    response
        .insert_header((header::CACHE_CONTROL, cache))
        .insert_header((header::VARY, "Accept-Encoding"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"));
    if let Some(policy) = policy {
        response.insert_header((header::CONTENT_SECURITY_POLICY, policy));
    }
    let encoding = encoding_for(req, rendered);
    if status == StatusCode::OK {
        let etag = rendered.etag_for(encoding);
        response.insert_header((header::ETAG, etag));
        if none_match(req, etag) {
            return response.status(StatusCode::NOT_MODIFIED).finish();
        }
    }
    response.content_type(rendered.content_type);
    let coding = match encoding {
        Encoding::Identity => None,
        Encoding::Gzip => Some("gzip"),
        Encoding::Brotli => Some("br"),
    };
    if let Some(coding) = coding {
        response.insert_header((header::CONTENT_ENCODING, HeaderValue::from_static(coding)));
    }
    response.body(rendered.body(encoding))
}

fn not_found_page() -> &'static Rendered {
    static PAGE: OnceLock<Rendered> = OnceLock::new();
    PAGE.get_or_init(|| Rendered::new(crate::snapshot::HTML, crate::render::page::not_found()))
}

fn digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// The page `slug` of `snapshot` for this request: `None` when there is no
/// such page, or it is private and the request lacks its token.
fn page_for(req: &HttpRequest, snapshot: &Arc<Snapshot>, slug: &str) -> Option<HttpResponse> {
    served(req, snapshot, slug, false)
}

/// The page `slug`'s HTML, or its Atom feed (`feed`), for this request.
fn served(
    req: &HttpRequest,
    snapshot: &Arc<Snapshot>,
    slug: &str,
    feed: bool,
) -> Option<HttpResponse> {
    let page = snapshot.pages_by_slug.get(slug)?;
    let cache = match &page.access_token_sha256 {
        None => PAGE_CACHE,
        Some(expected) => {
            let given = web::Query::<AccessQuery>::from_query(req.query_string())
                .ok()
                .and_then(|q| q.into_inner().access_token)?;
            if digest(&given) != *expected {
                return None;
            }
            PRIVATE_PAGE_CACHE
        }
    };
    if feed {
        metrics::counter!("status_pages_views_total", "kind" => "feed").increment(1);
        return Some(respond(req, StatusCode::OK, &page.feed, cache, None));
    }
    metrics::counter!("status_pages_views_total", "kind" => "page").increment(1);
    Some(respond(
        req,
        StatusCode::OK,
        &page.html,
        cache,
        Some(PAGE_POLICY),
    ))
}

#[derive(serde::Deserialize)]
struct AccessQuery {
    access_token: Option<String>,
}

fn not_found(req: &HttpRequest) -> HttpResponse {
    metrics::counter!("status_pages_views_total", "kind" => "not_found").increment(1);
    respond(
        req,
        StatusCode::NOT_FOUND,
        not_found_page(),
        "public, max-age=10",
        Some(PAGE_POLICY),
    )
}

async fn page_by_slug(
    req: HttpRequest,
    state: web::Data<ServeState>,
    slug: web::Path<String>,
) -> HttpResponse {
    by_slug(&req, &state, &slug, false)
}

async fn feed_by_slug(
    req: HttpRequest,
    state: web::Data<ServeState>,
    slug: web::Path<String>,
) -> HttpResponse {
    by_slug(&req, &state, &slug, true)
}

/// The page `slug`'s HTML, or its Atom feed (`feed`), within the client's
/// rate; the 404 page when there is no such page for this request.
fn by_slug(req: &HttpRequest, state: &ServeState, slug: &str, feed: bool) -> HttpResponse {
    if let Some(refused) = limited(req, state) {
        return refused;
    }
    let snapshot = state.shared.get();
    served(req, &snapshot, slug, feed).unwrap_or_else(|| not_found(req))
}

async fn page_by_host(req: HttpRequest, state: web::Data<ServeState>) -> HttpResponse {
    if let Some(refused) = limited(&req, &state) {
        return refused;
    }
    let snapshot = state.shared.get();
    let host = req.connection_info().host().to_ascii_lowercase();
    let host = host
        .rsplit_once(':')
        .filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit()))
        .map_or(host.as_str(), |(name, _)| name)
        .trim_end_matches('.')
        .to_string();
    snapshot
        .slug_by_domain
        .get(&host)
        .and_then(|slug| page_for(&req, &snapshot, slug))
        .unwrap_or_else(|| not_found(&req))
}

async fn badge_file(
    req: HttpRequest,
    state: web::Data<ServeState>,
    path: web::Path<(String, String)>,
) -> HttpResponse {
    if let Some(refused) = limited(&req, &state) {
        return refused;
    }
    let (token, file) = path.into_inner();
    let snapshot = state.shared.get();
    let found = snapshot
        .badges
        .get(&digest(&token))
        .and_then(|files| files.get(file.as_str()));
    match found {
        Some(rendered) => {
            metrics::counter!("status_pages_views_total", "kind" => "badge").increment(1);
            respond(&req, StatusCode::OK, rendered, BADGE_CACHE, None)
        }
        None => {
            metrics::counter!("status_pages_views_total", "kind" => "not_found").increment(1);
            let unknown = if file.ends_with(".json") {
                Rendered::new(
                    crate::snapshot::JSON,
                    badge::shields_endpoint("status", "not found", Colour::LightGrey),
                )
            } else {
                Rendered::new(
                    crate::snapshot::SVG,
                    badge::flat("status", "not found", Colour::LightGrey),
                )
            };
            respond(
                &req,
                StatusCode::NOT_FOUND,
                &unknown,
                "public, max-age=60",
                None,
            )
        }
    }
}
