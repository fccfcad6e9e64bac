//! Assertions on real responses (`options.assertions`): each source passing
//! and failing against a loopback target, with the keyword and status rules
//! still in force. The comparisons themselves are unit-tested in
//! `checker::assertions`.

use crate::common::{http_spec, keyword_spec, Harness, RunningChecker};
use uptime_contracts::{
    AssertionSource, AssertionV1, CheckOutcome, CheckResultV1, CheckSpecV2, Comparison, KeywordType,
};
use uptime_testkit::target::TargetServer;

const HEALTH: &str =
    r#"{"status":"degraded","checks":[{"name":"db","ok":true},{"name":"cache","ok":false}]}"#;

fn assertion(
    source: AssertionSource,
    property: Option<&str>,
    comparison: Comparison,
    target: Option<&str>,
) -> AssertionV1 {
    AssertionV1 {
        source,
        property: property.map(Into::into),
        comparison,
        target: target.map(Into::into),
    }
}

fn asserting(mut spec: CheckSpecV2, assertions: Vec<AssertionV1>) -> CheckSpecV2 {
    spec.options.assertions = assertions;
    spec
}

/// Publishes each spec and returns their results, in order.
async fn results_of(h: &Harness, specs: Vec<CheckSpecV2>) -> Vec<CheckResultV1> {
    let mut ids = Vec::new();
    for spec in specs {
        ids.push(h.publish_due(spec).await.check_id);
    }
    let mut results = Vec::new();
    for id in ids {
        results.push(h.result_of(id).await);
    }
    results
}

/// The verdict of each single assertion on `target`'s answer: `None` passed.
async fn verdicts(
    h: &Harness,
    target: &TargetServer,
    assertions: Vec<AssertionV1>,
) -> Vec<Option<String>> {
    let specs = assertions
        .into_iter()
        .map(|a| asserting(http_spec(&target.url("/health")), vec![a]))
        .collect();
    results_of(h, specs)
        .await
        .into_iter()
        .map(|r| {
            // Failing or passing, the status is reported.
            assert_eq!(r.http_status, Some(200), "{r:?}");
            assert_eq!(r.outcome == CheckOutcome::Pass, r.error.is_none(), "{r:?}");
            r.error
        })
        .collect()
}

#[tokio::test]
async fn status_code_and_response_time_assertions() {
    use AssertionSource::{ResponseTime, StatusCode};
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    let checker = RunningChecker::start(h.settings("c")).await;

    let got = verdicts(
        &h,
        &target,
        vec![
            assertion(StatusCode, None, Comparison::Equals, Some("200")),
            assertion(StatusCode, None, Comparison::GreaterThan, Some("299")),
            assertion(ResponseTime, None, Comparison::GreaterThan, Some("-1")),
            assertion(ResponseTime, None, Comparison::LessThan, Some("0")),
        ],
    )
    .await;

    assert_eq!(got[0], None);
    assert_eq!(
        got[1].as_deref(),
        Some(r#"assertion 1 failed: status_code greater_than "299": got 200"#)
    );
    assert_eq!(got[2], None);
    let failed = got[3].as_deref().unwrap_or_default();
    assert!(
        failed.starts_with(r#"assertion 1 failed: response_time less_than "0": got "#)
            && failed.ends_with(" ms"),
        "{failed}"
    );
    checker.stop().await;
}

#[tokio::test]
async fn header_assertions() {
    use AssertionSource::Header;
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    target.set_response_headers(&[
        ("content-type", "application/json"),
        ("x-version", "2.4.1"),
        ("x-region", "eu"),
        ("x-region", "us"),
    ]);
    let checker = RunningChecker::start(h.settings("c")).await;

    let got = verdicts(
        &h,
        &target,
        vec![
            assertion(
                Header,
                Some("Content-Type"),
                Comparison::Contains,
                Some("json"),
            ),
            assertion(
                Header,
                Some("X-Version"),
                Comparison::Matches,
                Some(r"^2\.\d+"),
            ),
            assertion(Header, Some("x-region"), Comparison::Equals, Some("eu")),
            assertion(Header, Some("x-missing"), Comparison::NotEmpty, None),
        ],
    )
    .await;

    assert_eq!(got[0], None);
    assert_eq!(got[1], None);
    assert_eq!(
        got[2].as_deref(),
        Some(r#"assertion 1 failed: header x-region equals "eu": got "eu, us""#)
    );
    assert_eq!(
        got[3].as_deref(),
        Some("assertion 1 failed: header x-missing not_empty: got nothing (no such header)")
    );
    checker.stop().await;
}

#[tokio::test]
async fn json_body_assertions() {
    use AssertionSource::JsonBody;
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    target.set_body(HEALTH);
    let checker = RunningChecker::start(h.settings("c")).await;

    let got = verdicts(
        &h,
        &target,
        vec![
            assertion(
                JsonBody,
                Some("$.checks[0].ok"),
                Comparison::Equals,
                Some("true"),
            ),
            assertion(JsonBody, Some("$.status"), Comparison::Equals, Some("ok")),
            assertion(
                JsonBody,
                Some("$.checks[*].name"),
                Comparison::Contains,
                Some("cache"),
            ),
            assertion(
                JsonBody,
                Some("$.checks[?@.ok == false]"),
                Comparison::IsEmpty,
                None,
            ),
            assertion(JsonBody, Some("status"), Comparison::Equals, Some("ok")),
        ],
    )
    .await;

    assert_eq!(got[0], None);
    assert_eq!(
        got[1].as_deref(),
        Some(r#"assertion 1 failed: json_body $.status equals "ok": got "degraded""#)
    );
    assert_eq!(got[2], None);
    assert_eq!(
        got[3].as_deref(),
        Some(
            r#"assertion 1 failed: json_body $.checks[?@.ok == false] is_empty: got {"name":"cache","ok":false}"#
        )
    );
    // A bad path is a failed check with the reason, and the checker goes on.
    let bad_path = got[4].as_deref().unwrap_or_default();
    assert!(
        bad_path
            .starts_with(r#"assertion 1 failed: json_body status equals "ok": invalid JSONPath: "#),
        "{bad_path}"
    );

    target.set_body("<html>not json</html>");
    let got = verdicts(
        &h,
        &target,
        vec![assertion(
            JsonBody,
            Some("$.status"),
            Comparison::NotEmpty,
            None,
        )],
    )
    .await;
    assert_eq!(
        got[0].as_deref(),
        Some(
            "assertion 1 failed: json_body $.status not_empty: body is not JSON: expected value at line 1 column 1"
        )
    );
    checker.stop().await;
}

#[tokio::test]
async fn text_body_assertions() {
    use AssertionSource::TextBody;
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    target.set_body("All Systems Operational (build 1234)");
    let checker = RunningChecker::start(h.settings("c")).await;

    let got = verdicts(
        &h,
        &target,
        vec![
            assertion(TextBody, None, Comparison::Matches, Some(r"build \d+\)$")),
            assertion(TextBody, None, Comparison::NotContains, Some("Operational")),
            assertion(TextBody, None, Comparison::Matches, Some("(unclosed")),
        ],
    )
    .await;

    assert_eq!(got[0], None);
    assert_eq!(
        got[1].as_deref(),
        Some(
            r#"assertion 1 failed: text_body not_contains "Operational": got "All Systems Operational (build 1234)""#
        )
    );
    assert_eq!(
        got[2].as_deref(),
        Some(
            r#"assertion 1 failed: text_body matches "(unclosed": invalid regular expression: unclosed group"#
        )
    );
    checker.stop().await;
}

#[tokio::test]
async fn status_keyword_and_assertions_must_all_hold_and_the_first_failure_is_named() {
    use AssertionSource::{JsonBody, StatusCode};
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    target.set_body(HEALTH);
    let checker = RunningChecker::start(h.settings("c")).await;

    let keyword = |k| keyword_spec(&target.url("/"), k, KeywordType::Contains);
    let db_ok = assertion(
        JsonBody,
        Some("$.checks[0].ok"),
        Comparison::Equals,
        Some("true"),
    );
    let is_ok = assertion(JsonBody, Some("$.status"), Comparison::Equals, Some("ok"));
    let is_201 = assertion(StatusCode, None, Comparison::Equals, Some("201"));
    let results = results_of(
        &h,
        vec![
            asserting(keyword("degraded"), vec![db_ok.clone()]),
            asserting(keyword("absent"), vec![is_ok.clone()]),
            asserting(keyword("degraded"), vec![db_ok, is_ok, is_201.clone()]),
            asserting(
                CheckSpecV2 {
                    expected_status: 503,
                    ..http_spec(&target.url("/"))
                },
                vec![is_201],
            ),
        ],
    )
    .await;

    assert_eq!(results[0].outcome, CheckOutcome::Pass, "{:?}", results[0]);
    let errors: Vec<Option<&str>> = results.iter().map(|r| r.error.as_deref()).collect();
    assert_eq!(
        errors,
        [
            None,
            Some(r#"keyword "absent" not found"#),
            Some(
                r#"assertion 2 failed: json_body $.status equals "ok": got "degraded" (also failed: 3)"#
            ),
            Some("expected status 503, got 200"),
        ]
    );
    checker.stop().await;
}
