//! Methods and validators as browsers, caches and monitors use them: `HEAD`
//! wherever `GET` is served (RFC 9110 9.3.2: the GET's headers, no body), a
//! method a route does not serve is `405` with `Allow`, and `ETag`s that
//! `If-None-Match` matches by weak comparison, one per encoding.

use crate::common::{sha256, spawn, Service};
use reqwest::{Method, StatusCode};

async fn request(
    service: &Service,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
) -> reqwest::Response {
    let mut req = service.client.request(method, service.url(path));
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    req.send().await.unwrap()
}

async fn a_page_with_a_badge(service: &Service) {
    let org = service.organisation("acme").await;
    let api = service.monitor(org, "API", "up", "{}").await;
    service
        .page(
            org,
            "acme",
            &format!(r#"[{{"name": "Core", "monitor_ids": [{api}]}}]"#),
        )
        .await;
    service
        .sql("UPDATE status_pages SET custom_domain = 'status.acme.example' WHERE slug = 'acme'")
        .await;
    service
        .sql(&format!(
            "INSERT INTO monitor_badges (monitor_id, org_id, token_sha256) VALUES ({api}, {org}, '{}')",
            sha256("bdg_token")
        ))
        .await;
    service.refreshed().await;
}

#[tokio::test]
async fn head_answers_wherever_get_does_with_its_headers_and_no_body() {
    let service = spawn().await;
    a_page_with_a_badge(&service).await;
    for (path, host) in [
        ("/status/acme", None),
        ("/status/acme/feed.atom", None),
        ("/badge/bdg_token/status.svg", None),
        ("/badge/bdg_token/shields.json", None),
        ("/", Some("status.acme.example")),
        ("/subscriptions/confirm?token=x", None),
        ("/subscriptions/unsubscribe?token=x", None),
        ("/status/unknown", None),
    ] {
        let headers: Vec<(&str, &str)> = host.map(|h| ("host", h)).into_iter().collect();
        let get = request(&service, Method::GET, path, &headers).await;
        let head = request(&service, Method::HEAD, path, &headers).await;
        assert_eq!(head.status(), get.status(), "HEAD {path}");
        for name in ["content-type", "etag", "cache-control", "content-length"] {
            assert_eq!(
                head.headers().get(name),
                get.headers().get(name),
                "HEAD {path}: {name}"
            );
        }
        assert!(
            head.bytes().await.unwrap().is_empty(),
            "HEAD {path} has a body"
        );
    }
    // The product's own `method: HEAD` monitor of a status page sees it up.
    let head = request(&service, Method::HEAD, "/status/acme", &[]).await;
    assert_eq!(head.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_method_a_route_does_not_serve_is_405_naming_those_it_does() {
    let service = spawn().await;
    a_page_with_a_badge(&service).await;
    for (method, path, allow) in [
        (Method::POST, "/status/acme", "GET, HEAD"),
        (Method::DELETE, "/status/acme/feed.atom", "GET, HEAD"),
        (Method::PUT, "/badge/bdg_token/status.svg", "GET, HEAD"),
        (Method::PATCH, "/", "GET, HEAD"),
        (Method::GET, "/status/acme/subscriptions", "POST"),
        (Method::PUT, "/subscriptions/confirm", "GET, HEAD, POST"),
        (
            Method::DELETE,
            "/subscriptions/unsubscribe",
            "GET, HEAD, POST",
        ),
    ] {
        let res = request(&service, method.clone(), path, &[]).await;
        assert_eq!(
            res.status(),
            StatusCode::METHOD_NOT_ALLOWED,
            "{method} {path}"
        );
        assert_eq!(res.headers()["allow"], allow, "{method} {path}");
    }
    // A path nobody serves stays a 404.
    let res = request(&service, Method::POST, "/nowhere", &[]).await;
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn each_encoding_has_its_own_etag_and_if_none_match_compares_weakly() {
    let service = spawn().await;
    a_page_with_a_badge(&service).await;
    for path in [
        "/status/acme",
        "/status/acme/feed.atom",
        "/badge/bdg_token/status.svg",
    ] {
        let mut tags = Vec::new();
        for encoding in ["identity", "gzip", "br"] {
            let res = request(
                &service,
                Method::GET,
                path,
                &[("accept-encoding", encoding)],
            )
            .await;
            assert_eq!(res.status(), StatusCode::OK, "{path} {encoding}");
            let tag = res.headers()["etag"].to_str().unwrap().to_string();
            // Strong, and another representation's tag is another tag.
            assert!(
                tag.starts_with('"') && !tags.contains(&tag),
                "{path} {encoding}: {tag} vs {tags:?}"
            );
            for given in [
                tag.clone(),
                format!("W/{tag}"),
                format!("\"other\", W/{tag}"),
                "*".into(),
            ] {
                let again = request(
                    &service,
                    Method::GET,
                    path,
                    &[("accept-encoding", encoding), ("if-none-match", &given)],
                )
                .await;
                assert_eq!(
                    again.status(),
                    StatusCode::NOT_MODIFIED,
                    "{path} {encoding} If-None-Match: {given}"
                );
                assert_eq!(again.headers()["etag"].to_str().unwrap(), tag);
            }
            tags.push(tag);
        }
        // The identity body's tag does not validate a gzip one.
        let res = request(
            &service,
            Method::GET,
            path,
            &[("accept-encoding", "gzip"), ("if-none-match", &tags[0])],
        )
        .await;
        assert_eq!(res.status(), StatusCode::OK, "{path}");
    }
}
