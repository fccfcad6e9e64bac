//! Assertions on real responses (`options.assertions`): each source passing
//! and failing against a loopback target, with the keyword and status rules
//! still in force. The comparisons themselves are unit-tested in
//! `checker::assertions`.

use crate::common::{http_spec, keyword_spec, Harness, RunningChecker};
use uptime_contracts::{
    Assertion, AssertionSource, CheckOutcome, CheckResult, CheckSpec, Comparison, KeywordType,
};
use uptime_testkit::target::TargetServer;

const HEALTH: &str =
    r#"{"status":"degraded","checks":[{"name":"db","ok":true},{"name":"cache","ok":false}]}"#;

fn assertion(
    source: AssertionSource,
    property: Option<&str>,
    comparison: Comparison,
    target: Option<&str>,
) -> Assertion {
    Assertion {
        source,
        property: property.map(Into::into),
        comparison,
        target: target.map(Into::into),
    }
}

fn asserting(mut spec: CheckSpec, assertions: Vec<Assertion>) -> CheckSpec {
    spec.options.assertions = assertions;
    spec
}

/// Publishes each spec and returns their results, in order.
async fn results_of(h: &Harness, specs: Vec<CheckSpec>) -> Vec<CheckResult> {
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
    assertions: Vec<Assertion>,
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
                CheckSpec {
                    expected_status: uptime_contracts::ExpectedStatus::of(503),
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

/// The peak resident memory of this process so far (`VmHWM`), in KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/self/status")
}

/// Issue 19: a JSONPath that would select billions of nodes on a 240-byte
/// body is refused before it runs: the check is down, over its budget, the
/// checker's memory does not follow the path's blow-up, and it goes on
/// answering checks.
#[tokio::test]
async fn a_multiplying_jsonpath_is_over_its_budget_and_the_checker_goes_on() {
    use AssertionSource::JsonBody;
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    // 120 arrays deep: `$..*..*..*` selects some 280,000 nodes of it, and
    // six descendant wildcards billions.
    target.set_body(format!("{}{}", "[".repeat(120), "]".repeat(120)));
    let checker = RunningChecker::start(h.settings("c")).await;
    let before = peak_rss_kib();

    let paths = ["$..*..*..*", "$..*..*..*..*..*..*"];
    let got = verdicts(
        &h,
        &target,
        paths
            .iter()
            .map(|p| assertion(JsonBody, Some(p), Comparison::Equals, Some("x")))
            .collect(),
    )
    .await;
    for (path, verdict) in paths.iter().zip(&got) {
        assert_eq!(
            verdict.as_deref(),
            Some(
                format!(
                    r#"assertion 1 over its budget: json_body {path} equals "x": would visit more than 100000 nodes"#
                )
                .as_str()
            )
        );
    }
    // Unbounded, the first alone took some 300 MiB; this bound is loose
    // on purpose (allocator and runtime noise), not a measurement.
    let grown_mib = peak_rss_kib().saturating_sub(before) / 1024;
    assert!(grown_mib < 64, "the checker grew by {grown_mib} MiB");

    // The same checker still answers, assertions and all.
    target.set_body(HEALTH);
    let got = verdicts(
        &h,
        &target,
        vec![assertion(
            JsonBody,
            Some("$.checks[?@.ok == false].name"),
            Comparison::Equals,
            Some("cache"),
        )],
    )
    .await;
    assert_eq!(got, [None]);
    checker.stop().await;
}

/// Keyword and text assertions read no more than `max_body_bytes`: what
/// lies beyond is neither searched nor held.
#[tokio::test]
async fn keywords_and_text_assertions_see_only_max_body_bytes() {
    use AssertionSource::TextBody;
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    target.set_body(format!("{}needle", "x".repeat(100)));
    let mut settings = h.settings("c");
    settings.checker.max_body_bytes = 100;
    let checker = RunningChecker::start(settings).await;

    let keyword = |k| keyword_spec(&target.url("/"), k, KeywordType::Contains);
    let results = results_of(
        &h,
        vec![
            keyword("xxx"),
            keyword("needle"),
            asserting(
                http_spec(&target.url("/")),
                vec![assertion(
                    TextBody,
                    None,
                    Comparison::Contains,
                    Some("needle"),
                )],
            ),
            asserting(
                http_spec(&target.url("/")),
                vec![assertion(
                    TextBody,
                    None,
                    Comparison::Matches,
                    Some("^x{100}$"),
                )],
            ),
        ],
    )
    .await;
    let errors: Vec<Option<&str>> = results.iter().map(|r| r.error.as_deref()).collect();
    assert_eq!(errors[0], None);
    assert_eq!(errors[1], Some(r#"keyword "needle" not found"#));
    let failed = errors[2].unwrap_or_default();
    assert!(
        failed.starts_with(r#"assertion 1 failed: text_body contains "needle": got "xxxx"#),
        "{failed}"
    );
    assert_eq!(errors[3], None);
    checker.stop().await;
}
