//! The request an http check sends (`options.http`): method, headers in
//! order, body and basic auth arrive at a real loopback target, which keeps
//! what it receives; credentials never reach the published result.

use crate::common::{http_spec, Harness, RunningChecker};
use uptime_contracts::{
    Assertion, AssertionSource, BasicAuth, CheckOutcome, CheckSpec, Comparison, Header, HttpMethod,
    HttpRequest,
};
use uptime_testkit::target::TargetServer;

fn header(name: &str, value: &str) -> Header {
    Header {
        name: name.into(),
        value: value.into(),
    }
}

fn with_request(target: &str, http: HttpRequest) -> CheckSpec {
    let mut spec = http_spec(target);
    spec.options.http = Some(http);
    spec
}

#[tokio::test]
async fn method_headers_and_body_arrive_at_the_target() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    target.record_requests();
    let checker = RunningChecker::start(h.settings("c")).await;

    let spec = with_request(
        &target.url("/orders?probe=1"),
        HttpRequest {
            method: HttpMethod::Post,
            headers: vec![
                header("X-Trace", "first"),
                header("Content-Type", "application/json"),
                header("x-trace", "second"),
                header("User-Agent", "custom-agent/1"),
            ],
            body: Some(r#"{"ping":1}"#.into()),
            basic_auth: None,
        },
    );
    let result = h.result_of(h.publish_due(spec).await.check_id).await;

    assert_eq!(result.outcome, CheckOutcome::Pass, "{result:?}");
    let requests = target.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let request = &requests[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/orders?probe=1");
    assert_eq!(request.header("x-trace"), ["first", "second"]);
    assert_eq!(request.header("content-type"), ["application/json"]);
    // A header given replaces the checker's default one.
    assert_eq!(request.header("user-agent"), ["custom-agent/1"]);
    assert_eq!(request.body, br#"{"ping":1}"#);
    assert!(request.header("authorization").is_empty());
    checker.stop().await;
}

#[tokio::test]
async fn every_method_is_sent_as_asked_and_a_plain_check_is_a_get() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    target.record_requests();
    let checker = RunningChecker::start(h.settings("c")).await;

    // One at a time, so the requests arrive in this order.
    for method in HttpMethod::ALL {
        let http = HttpRequest {
            method,
            ..Default::default()
        };
        let due = h.publish_due(with_request(&target.url("/m"), http)).await;
        let result = h.result_of(due.check_id).await;
        assert_eq!(result.outcome, CheckOutcome::Pass, "{method:?}: {result:?}");
    }
    let due = h.publish_due(http_spec(&target.url("/plain"))).await;
    h.result_of(due.check_id).await;

    let methods: Vec<String> = target.requests().into_iter().map(|r| r.method).collect();
    let mut expected: Vec<&str> = HttpMethod::ALL.iter().map(|m| m.as_str()).collect();
    expected.push("GET");
    assert_eq!(methods, expected);
    checker.stop().await;
}

#[tokio::test]
async fn basic_auth_arrives_and_the_password_never_reaches_the_result() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    target.record_requests();
    // A target that echoes what it was sent: the failing assertion below
    // quotes the body, which holds the password and the encoded credentials.
    let token = "YWxpY2U6aHVudGVyMi1zZWNyZXQ="; // base64("alice:hunter2-secret")
    target.set_body(format!(
        "you sent password=hunter2-secret, Authorization: Basic {token}"
    ));
    let checker = RunningChecker::start(h.settings("c")).await;

    let mut spec = with_request(
        &target.url("/private"),
        HttpRequest {
            headers: vec![header("Authorization", "Bearer replaced-by-basic-auth")],
            basic_auth: Some(BasicAuth {
                username: "alice".into(),
                password_sealed: Some(crate::common::seal("hunter2-secret")),
            }),
            ..Default::default()
        },
    );
    spec.options.assertions = vec![Assertion {
        source: AssertionSource::TextBody,
        property: None,
        comparison: Comparison::Equals,
        target: Some("all good".into()),
    }];
    let due = h.publish_due(spec).await;
    let result = h.result_of(due.check_id).await;

    let requests = target.requests();
    assert_eq!(
        requests[0].header("authorization"),
        [format!("Basic {token}").as_str()]
    );
    assert_eq!(result.outcome, CheckOutcome::Fail);
    assert_eq!(
        result.error.as_deref(),
        Some(
            r#"assertion 1 failed: text_body equals "all good": got "you sent password=[redacted], Authorization: Basic [redacted]""#
        )
    );
    let (_, published) = h
        .raw_results()
        .await
        .into_iter()
        .find(|(_, json)| json["check_id"] == due.check_id.to_string())
        .expect("published result");
    let published = published.to_string();
    for secret in ["hunter2", token, "replaced-by-basic-auth"] {
        assert!(!published.contains(secret), "{secret} in {published}");
    }
    checker.stop().await;
}

#[tokio::test]
async fn a_bearer_token_in_the_headers_is_sent_and_redacted_like_a_password() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    target.record_requests();
    target.set_response_headers(&[("x-echo", "Bearer tok-123456")]);
    let checker = RunningChecker::start(h.settings("c")).await;

    let mut spec = with_request(
        &target.url("/"),
        HttpRequest {
            headers: vec![header("authorization", "Bearer tok-123456")],
            ..Default::default()
        },
    );
    spec.options.assertions = vec![Assertion {
        source: AssertionSource::Header,
        property: Some("X-Echo".into()),
        comparison: Comparison::IsEmpty,
        target: None,
    }];
    let result = h.result_of(h.publish_due(spec).await.check_id).await;

    assert_eq!(
        target.requests()[0].header("authorization"),
        ["Bearer tok-123456"]
    );
    assert_eq!(
        result.error.as_deref(),
        Some(r#"assertion 1 failed: header X-Echo is_empty: got "[redacted]""#)
    );
    checker.stop().await;
}

#[tokio::test]
async fn a_post_redirected_with_302_goes_on_as_a_get_without_its_body() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    target.record_requests();
    let checker = RunningChecker::start(h.settings("c")).await;

    let spec = with_request(
        &target.redirect_url(&target.url("/landing")),
        HttpRequest {
            method: HttpMethod::Post,
            body: Some("form=1".into()),
            ..Default::default()
        },
    );
    let result = h.result_of(h.publish_due(spec).await.check_id).await;

    assert_eq!(result.outcome, CheckOutcome::Pass, "{result:?}");
    let requests = target.requests();
    let seen: Vec<(&str, &str, &[u8])> = requests
        .iter()
        .map(|r| {
            (
                r.method.as_str(),
                r.path.split('?').next().unwrap_or(""),
                &r.body[..],
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("POST", "/redirect-to", &b"form=1"[..]),
            ("GET", "/landing", &b""[..])
        ]
    );
    checker.stop().await;
}

#[tokio::test]
async fn credentials_do_not_follow_a_redirect_to_another_origin() {
    let h = Harness::start().await;
    let first = TargetServer::start().await;
    let second = TargetServer::start().await;
    second.record_requests();
    let checker = RunningChecker::start(h.settings("c")).await;

    let spec = with_request(
        &first.redirect_url(&second.url("/elsewhere")),
        HttpRequest {
            basic_auth: Some(BasicAuth {
                username: "alice".into(),
                password_sealed: Some(crate::common::seal("hunter2")),
            }),
            ..Default::default()
        },
    );
    let result = h.result_of(h.publish_due(spec).await.check_id).await;

    assert_eq!(result.outcome, CheckOutcome::Pass, "{result:?}");
    let requests = second.requests();
    let landed = requests
        .iter()
        .find(|r| r.path == "/elsewhere")
        .expect("the redirect was followed");
    assert!(landed.header("authorization").is_empty(), "{requests:?}");
    checker.stop().await;
}

#[tokio::test]
async fn an_unsendable_header_fails_the_check_without_quoting_its_value() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    let checker = RunningChecker::start(h.settings("c")).await;

    let spec = with_request(
        &target.url("/"),
        HttpRequest {
            headers: vec![header("Authorization", "Bearer secret\r\nX-Injected: 1")],
            ..Default::default()
        },
    );
    let result = h.result_of(h.publish_due(spec).await.check_id).await;

    assert_eq!(result.outcome, CheckOutcome::Fail);
    assert_eq!(
        result.error.as_deref(),
        Some("request header 1 (authorization) has an invalid value")
    );
    assert_eq!(target.hits(), 0, "nothing is sent");
    checker.stop().await;
}
