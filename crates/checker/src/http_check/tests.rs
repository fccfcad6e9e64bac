//! The request built and the verdict of a response, without a network.

use super::*;
use uptime_contracts::{AssertionSource, BasicAuth, Comparison, Header};

fn exchange(status: u16, body: &[u8]) -> Exchange {
    Exchange {
        status,
        headers: Vec::new(),
        body: body.to_vec(),
        body_cut: false,
        ssl_expires_at: None,
    }
}

fn keyword_verdict(
    status: u16,
    keyword: &str,
    keyword_type: KeywordType,
    response: &Exchange,
) -> Option<String> {
    judge(status, Some((keyword, keyword_type)), &[], response, 1, &[])
}

#[test]
fn status_is_judged_before_the_keyword() {
    let response = exchange(503, b"maintenance");
    assert_eq!(
        keyword_verdict(200, "maintenance", KeywordType::Contains, &response).as_deref(),
        Some("expected status 200, got 503")
    );
}

#[test]
fn keywords_match_case_sensitively() {
    let response = exchange(200, b"All Systems Operational");
    let contains = |k| keyword_verdict(200, k, KeywordType::Contains, &response);
    let lacks = |k| keyword_verdict(200, k, KeywordType::NotContains, &response);
    assert_eq!(contains("Operational"), None);
    assert_eq!(
        contains("operational").as_deref(),
        Some("keyword \"operational\" not found")
    );
    assert_eq!(lacks("error"), None);
    assert_eq!(
        lacks("Systems").as_deref(),
        Some("keyword \"Systems\" found")
    );
}

#[test]
fn invalid_utf8_does_not_hide_a_keyword() {
    let response = exchange(200, b"\xff\xfe status: up");
    assert_eq!(
        keyword_verdict(200, "up", KeywordType::Contains, &response),
        None
    );
}

#[test]
fn assertions_are_judged_after_the_status_and_the_keyword() {
    let failing = [Assertion {
        source: AssertionSource::TextBody,
        property: None,
        comparison: Comparison::Contains,
        target: Some("absent".into()),
    }];
    let keyword = Some(("up", KeywordType::Contains));
    let verdict =
        |status, body: &[u8]| judge(200, keyword, &failing, &exchange(status, body), 7, &[]);
    assert_eq!(
        verdict(500, b"up").as_deref(),
        Some("expected status 200, got 500")
    );
    assert_eq!(
        verdict(200, b"down").as_deref(),
        Some("keyword \"up\" not found")
    );
    assert_eq!(
        verdict(200, b"up").as_deref(),
        Some(r#"assertion 1 failed: text_body contains "absent": got "up""#)
    );
    assert_eq!(
        judge(200, keyword, &[], &exchange(200, b"up"), 7, &[]),
        None
    );
}

fn header(name: &str, value: &str) -> Header {
    Header {
        name: name.into(),
        value: value.into(),
    }
}

#[test]
fn no_options_is_a_plain_get() {
    let request = Request::of(None, None).unwrap();
    assert_eq!(request.method, Method::GET);
    assert!(request.headers.is_empty());
    assert_eq!(request.body, None);
    assert!(request.secrets.is_empty());
}

#[test]
fn headers_keep_their_order_and_credentials_are_sensitive() {
    let http = HttpRequest {
        method: HttpMethod::Post,
        headers: vec![
            header("X-Trace", "1"),
            header("Authorization", "Bearer s3cret-token"),
            header("x-trace", "2"),
        ],
        body: Some("{}".into()),
        basic_auth: None,
    };
    let request = Request::of(Some(&http), None).unwrap();
    assert_eq!(request.method, Method::POST);
    let traces: Vec<_> = request.headers.get_all("x-trace").iter().collect();
    assert_eq!(traces, ["1", "2"]);
    let authorization = &request.headers[AUTHORIZATION];
    assert!(authorization.is_sensitive());
    assert!(!format!("{:?}", request.headers).contains("s3cret"));
    assert_eq!(
        request.secrets,
        [
            "Bearer s3cret-token".to_string(),
            "s3cret-token".to_string()
        ]
    );
    assert_eq!(request.body.as_deref(), Some("{}"));
}

#[test]
fn basic_auth_replaces_an_authorization_header() {
    let http = HttpRequest {
        headers: vec![header("authorization", "Bearer other")],
        basic_auth: Some(BasicAuth {
            username: "alice".into(),
            password_sealed: Some("v1.k1.AAAA".into()),
        }),
        ..Default::default()
    };
    let request = Request::of(Some(&http), Some("hunter2")).unwrap();
    let values: Vec<_> = request.headers.get_all(AUTHORIZATION).iter().collect();
    // base64("alice:hunter2")
    assert_eq!(values, ["Basic YWxpY2U6aHVudGVyMg=="]);
    assert!(values[0].is_sensitive());
    assert!(request.secrets.contains(&"hunter2".to_string()));
    assert!(request
        .secrets
        .contains(&"YWxpY2U6aHVudGVyMg==".to_string()));
}

#[test]
fn an_unsendable_header_is_named_without_its_value() {
    let with = |h| {
        let http = HttpRequest {
            headers: vec![header("x-ok", "1"), h],
            ..Default::default()
        };
        Request::of(Some(&http), None).err()
    };
    assert_eq!(
        with(header("bad name", "v")).as_deref(),
        Some("request header 2 has an invalid name")
    );
    assert_eq!(
        with(header("authorization", "secret\nvalue")).as_deref(),
        Some("request header 2 (authorization) has an invalid value")
    );
}

#[test]
fn every_method_maps_to_its_name() {
    for m in HttpMethod::ALL {
        assert_eq!(method(m).as_str(), m.as_str());
    }
}
