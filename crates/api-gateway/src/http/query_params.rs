//! Unknown query parameters are refused like unknown body fields: `400
//! invalid query parameters` naming each one, before the handler runs.
//!
//! What an operation takes is read from the OpenAPI document
//! ([`crate::openapi::document`]), so what is served and what is documented
//! cannot drift apart: a route without query parameters refuses any.
//!
//! The token URLs meant for other tools take any query string and ignore it:
//! heartbeat pings (cron jobs add cache busters and run ids, `?rid=...`) and
//! the verification and acknowledge links (mail clients and link checkers
//! add tracking parameters).

use crate::http::error::{ApiError, FieldError};
use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, ResponseError};
use std::collections::HashMap;
use std::sync::OnceLock;

/// Route patterns whose query strings are ignored, not judged.
pub const QUERY_IGNORED_ROUTES: &[&str] = &[
    "/api/v1/heartbeat/{token}",
    "/api/v1/heartbeat/{token}/fail",
    "/api/v1/heartbeat/{token}/start",
    "/api/v1/heartbeat/{token}/{exit_code}",
    "/api/v1/alert-contacts/verify/{token}",
    "/api/v1/incidents/ack/{token}",
];

type Known = HashMap<(String, String), Vec<&'static str>>;

/// (path pattern, lowercase method) -> the query parameters the document
/// gives that operation.
fn known() -> &'static Known {
    static KNOWN: OnceLock<Known> = OnceLock::new();
    KNOWN.get_or_init(|| {
        let mut known = Known::new();
        let doc = crate::openapi::document();
        for (path, item) in doc["paths"].as_object().into_iter().flatten() {
            for (method, op) in item.as_object().into_iter().flatten() {
                let names = op["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|p| p["in"] == "query")
                    .filter_map(|p| p["name"].as_str())
                    .collect();
                known.insert((path.clone(), method.clone()), names);
            }
        }
        known
    })
}

/// The names in `query` that `allowed` does not hold, each once, in order.
pub fn unknown_names(query: &str, allowed: &[&str]) -> Vec<String> {
    let mut unknown: Vec<String> = Vec::new();
    for (name, _) in url::form_urlencoded::parse(query.as_bytes()) {
        if !allowed.contains(&name.as_ref()) && !unknown.iter().any(|u| *u == name) {
            unknown.push(name.into_owned());
        }
    }
    unknown
}

/// Runs inside `middleware::authenticate`: a request whose key was refused
/// is left for its handler's 401, as with bodies.
pub async fn refuse_unknown(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    let refused = if req.query_string().is_empty() {
        None
    } else {
        let pattern = req.match_pattern();
        let method = req.method().as_str().to_ascii_lowercase();
        let key_refused = matches!(
            req.extensions().get::<crate::access::auth::Authenticated>(),
            Some(crate::access::auth::Authenticated(Err(_)))
        );
        match pattern {
            Some(p) if !key_refused && !QUERY_IGNORED_ROUTES.contains(&p.as_str()) => known()
                .get(&(p, method))
                .map(|allowed| unknown_names(req.query_string(), allowed))
                .filter(|unknown| !unknown.is_empty())
                .map(|unknown| (unknown, known_list(&req))),
            _ => None,
        }
    };
    match refused {
        None => Ok(next.call(req).await?.map_into_left_body()),
        Some((unknown, takes)) => {
            let details = unknown
                .into_iter()
                .map(|name| FieldError::new(name, format!("unknown query parameter; {takes}")))
                .collect();
            let res = ApiError::InvalidQuery(details).error_response();
            Ok(req.into_response(res).map_into_right_body())
        }
    }
}

fn known_list(req: &ServiceRequest) -> String {
    let allowed = req
        .match_pattern()
        .and_then(|p| {
            known()
                .get(&(p, req.method().as_str().to_ascii_lowercase()))
                .cloned()
        })
        .unwrap_or_default();
    if allowed.is_empty() {
        "this operation takes none".into()
    } else {
        format!("this operation takes {}", allowed.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_names_are_decoded_and_listed_once() {
        assert_eq!(
            unknown_names(
                "limit=5&so%72t=a&sort=b&cursor=x&&flag",
                &["limit", "cursor"]
            ),
            ["sort", "flag"]
        );
        assert!(unknown_names("limit=1", &["limit"]).is_empty());
    }

    #[test]
    fn every_ignoring_route_is_public() {
        for route in QUERY_IGNORED_ROUTES {
            assert!(crate::authz::public_routes().contains(route), "{route}");
        }
    }
}
