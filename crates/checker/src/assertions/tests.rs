use super::*;
use AssertionSource::*;
use Comparison::*;

const BODY: &str = r#"{"status":"ok","count":5,"checks":[{"ok":true},{"ok":false}],
    "empty":[],"nothing":null,"name":"","object":{}}"#;

fn headers() -> Vec<(String, String)> {
    [
        ("content-type", "application/json"),
        ("x-multi", "a"),
        ("X-Multi", "b"),
    ]
    .into_iter()
    .map(|(n, v)| (n.to_string(), v.to_string()))
    .collect()
}

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

/// The verdict of `assertions` on a 200 with [`BODY`] after 120 ms.
fn verdict_on(body: &[u8], assertions: &[Assertion]) -> Option<String> {
    let headers = headers();
    let secrets = vec!["hunter2".to_string()];
    let view = ResponseView {
        status: 200,
        headers: &headers,
        body,
        body_cut: false,
        latency_ms: 120,
        secrets: &secrets,
    };
    evaluate(assertions, &view)
}

fn verdict(assertions: &[Assertion]) -> Option<String> {
    verdict_on(BODY.as_bytes(), assertions)
}

/// The verdict of one assertion.
fn one(
    source: AssertionSource,
    property: Option<&str>,
    comparison: Comparison,
    target: Option<&str>,
) -> Option<String> {
    verdict(&[assertion(source, property, comparison, target)])
}

fn json(path: &str, comparison: Comparison, target: Option<&str>) -> Option<String> {
    one(JsonBody, Some(path), comparison, target)
}

#[test]
fn no_assertions_pass() {
    assert_eq!(verdict(&[]), None);
}

#[test]
fn status_code_compares_as_a_number() {
    assert_eq!(one(StatusCode, None, Equals, Some("200")), None);
    assert_eq!(one(StatusCode, None, Equals, Some("200.0")), None);
    assert_eq!(one(StatusCode, None, GreaterThan, Some("199")), None);
    assert_eq!(one(StatusCode, None, NotEquals, Some("500")), None);
    assert_eq!(
        one(StatusCode, None, Equals, Some("201")).as_deref(),
        Some(r#"assertion 1 failed: status_code equals "201": got 200"#)
    );
    assert_eq!(
        one(StatusCode, None, LessThan, Some("200")).as_deref(),
        Some(r#"assertion 1 failed: status_code less_than "200": got 200"#)
    );
}

#[test]
fn response_time_is_the_latency_in_milliseconds() {
    assert_eq!(one(ResponseTime, None, LessThan, Some("500")), None);
    assert_eq!(
        one(ResponseTime, None, LessThan, Some("100")).as_deref(),
        Some(r#"assertion 1 failed: response_time less_than "100": got 120 ms"#)
    );
}

#[test]
fn headers_are_named_case_insensitively_and_repeated_values_joined() {
    assert_eq!(
        one(Header, Some("Content-Type"), Contains, Some("json")),
        None
    );
    assert_eq!(one(Header, Some("x-multi"), Equals, Some("a, b")), None);
    assert_eq!(
        one(Header, Some("X-MULTI"), Equals, Some("a")).as_deref(),
        Some(r#"assertion 1 failed: header X-MULTI equals "a": got "a, b""#)
    );
}

#[test]
fn an_absent_header_is_missing_which_reads_as_empty() {
    assert_eq!(
        one(Header, Some("x-absent"), Equals, Some("1")).as_deref(),
        Some(r#"assertion 1 failed: header x-absent equals "1": got nothing (no such header)"#)
    );
    assert_eq!(one(Header, Some("x-absent"), IsEmpty, None), None);
    assert_eq!(one(Header, Some("x-absent"), NotContains, Some("a")), None);
    assert_eq!(one(Header, Some("x-absent"), NotEquals, Some("a")), None);
    assert_eq!(
        one(Header, Some("x-absent"), NotEmpty, None).as_deref(),
        Some("assertion 1 failed: header x-absent not_empty: got nothing (no such header)")
    );
    assert_eq!(
        one(Header, Some("x-absent"), GreaterThan, Some("1")).as_deref(),
        Some(
            r#"assertion 1 failed: header x-absent greater_than "1": got nothing (no such header), not a number"#
        )
    );
}

#[test]
fn text_body_is_the_body_as_text() {
    assert_eq!(
        one(TextBody, None, Contains, Some(r#""status":"ok""#)),
        None
    );
    assert_eq!(one(TextBody, None, NotContains, Some("degraded")), None);
    assert_eq!(one(TextBody, None, Matches, Some(r#"count":\d+"#)), None);
    assert_eq!(one(TextBody, None, NotEmpty, None), None);
    let failed = one(TextBody, None, Contains, Some("degraded")).unwrap();
    assert!(
        failed
            .starts_with(r#"assertion 1 failed: text_body contains "degraded": got "{\"status\":"#),
        "{failed}"
    );
    // Invalid UTF-8 is replaced, not fatal.
    let bytes = b"\xff status: up";
    let check =
        |comparison, target| verdict_on(bytes, &[assertion(TextBody, None, comparison, target)]);
    assert_eq!(check(Contains, Some("status: up")), None);
    assert_eq!(check(Matches, Some("^\u{fffd} status")), None);
    assert_eq!(
        verdict_on(b"", &[assertion(TextBody, None, IsEmpty, None)]),
        None
    );
}

#[test]
fn the_example_of_the_brief_reads_as_promised() {
    let body = br#"{"status":"degraded"}"#;
    assert_eq!(
        verdict_on(
            body,
            &[
                assertion(StatusCode, None, Equals, Some("200")),
                assertion(JsonBody, Some("$.status"), Equals, Some("ok")),
            ]
        )
        .as_deref(),
        Some(r#"assertion 2 failed: json_body $.status equals "ok": got "degraded""#)
    );
}

#[test]
fn json_strings_compare_without_quotes_and_other_values_as_compact_json() {
    assert_eq!(json("$.status", Equals, Some("ok")), None);
    assert!(json("$.status", Equals, Some(r#""ok""#)).is_some());
    assert_eq!(json("$.status", Contains, Some("o")), None);
    assert_eq!(json("$.checks[0].ok", Equals, Some("true")), None);
    assert_eq!(
        json("$.checks[1].ok", Equals, Some("true")).as_deref(),
        Some(r#"assertion 1 failed: json_body $.checks[1].ok equals "true": got false"#)
    );
    assert_eq!(json("$.nothing", Equals, Some("null")), None);
    assert_eq!(json("$.checks[0]", Equals, Some(r#"{"ok":true}"#)), None);
    assert_eq!(
        json("$.checks", Equals, Some("[]")).as_deref(),
        Some(
            r#"assertion 1 failed: json_body $.checks equals "[]": got [{"ok":true},{"ok":false}]"#
        )
    );
}

#[test]
fn json_numbers_compare_numerically() {
    assert_eq!(json("$.count", Equals, Some("5")), None);
    assert_eq!(json("$.count", Equals, Some("5.0")), None);
    assert!(json("$.count", NotEquals, Some("5.0")).is_some());
    assert_eq!(json("$.count", GreaterThan, Some("4.5")), None);
    assert_eq!(json("$.count", LessThan, Some("1e1")), None);
    assert_eq!(
        json("$.count", GreaterThan, Some("5")).as_deref(),
        Some(r#"assertion 1 failed: json_body $.count greater_than "5": got 5"#)
    );
    // A string of digits is a number too.
    let body = br#"{"version":"10"}"#;
    let check = |comparison, target| {
        verdict_on(
            body,
            &[assertion(
                JsonBody,
                Some("$.version"),
                comparison,
                Some(target),
            )],
        )
    };
    assert_eq!(check(GreaterThan, "9"), None);
    assert_eq!(check(Equals, "10.0"), None);
}

#[test]
fn several_matches_are_an_array_of_them() {
    assert_eq!(json("$.checks[*].ok", Equals, Some("[true,false]")), None);
    assert_eq!(json("$.checks[*].ok", Contains, Some("false")), None);
    assert_eq!(json("$..ok", NotEmpty, None), None);
}

#[test]
fn a_path_without_match_is_missing() {
    assert_eq!(
        json("$.absent", Equals, Some("ok")).as_deref(),
        Some(r#"assertion 1 failed: json_body $.absent equals "ok": got nothing (no match)"#)
    );
    assert_eq!(json("$.absent", IsEmpty, None), None);
    assert_eq!(json("$.checks[7].ok", IsEmpty, None), None);
}

#[test]
fn empty_json_values_are_empty() {
    for path in ["$.empty", "$.nothing", "$.name", "$.object"] {
        assert_eq!(json(path, IsEmpty, None), None, "{path}");
        assert!(json(path, NotEmpty, None).is_some(), "{path}");
    }
    for path in ["$.status", "$.count", "$.checks", "$.checks[1].ok"] {
        assert_eq!(json(path, NotEmpty, None), None, "{path}");
        assert!(json(path, IsEmpty, None).is_some(), "{path}");
    }
}

#[test]
fn a_body_that_is_not_json_fails_the_assertion_saying_so() {
    assert_eq!(
        verdict_on(
            b"<html>",
            &[assertion(JsonBody, Some("$.status"), Equals, Some("ok"))]
        )
        .as_deref(),
        Some(
            r#"assertion 1 failed: json_body $.status equals "ok": body is not JSON: expected value at line 1 column 1"#
        )
    );
    // A body cut at max_body_bytes says so.
    let headers = headers();
    let view = ResponseView {
        status: 200,
        headers: &headers,
        body: br#"{"status":"o"#,
        body_cut: true,
        latency_ms: 1,
        secrets: &[],
    };
    let failed = evaluate(
        &[assertion(JsonBody, Some("$.status"), IsEmpty, None)],
        &view,
    )
    .unwrap();
    assert!(
        failed.contains("body is not JSON (only its first 12 bytes were read): EOF"),
        "{failed}"
    );
}

#[test]
fn malformed_assertions_fail_with_a_reason() {
    assert_eq!(
        json("status", Equals, Some("ok")).as_deref(),
        Some(
            r#"assertion 1 failed: json_body status equals "ok": invalid JSONPath: it must start with $"#
        )
    );
    let failed = json("$.checks[", Equals, Some("ok")).unwrap();
    assert!(
        failed.starts_with(
            r#"assertion 1 failed: json_body $.checks[ equals "ok": invalid JSONPath: at position "#
        ),
        "{failed}"
    );
    assert_eq!(
        one(JsonBody, None, Equals, Some("ok")).as_deref(),
        Some(r#"assertion 1 failed: json_body equals "ok": json_body needs a property"#)
    );
    assert_eq!(
        one(Header, Some(""), IsEmpty, None).as_deref(),
        Some("assertion 1 failed: header is_empty: header needs a property")
    );
    assert_eq!(
        one(StatusCode, None, Equals, None).as_deref(),
        Some("assertion 1 failed: status_code equals: equals needs a target")
    );
    assert_eq!(
        one(TextBody, None, Matches, Some("(unclosed")).as_deref(),
        Some(
            r#"assertion 1 failed: text_body matches "(unclosed": invalid regular expression: unclosed group"#
        )
    );
    assert_eq!(
        one(StatusCode, None, GreaterThan, Some("abc")).as_deref(),
        Some(r#"assertion 1 failed: status_code greater_than "abc": target "abc" is not a number"#)
    );
    assert_eq!(
        json("$.status", LessThan, Some("3")).as_deref(),
        Some(r#"assertion 1 failed: json_body $.status less_than "3": got "ok", not a number"#)
    );
}

#[test]
fn regular_expressions_are_bounded_in_size() {
    let long = "a".repeat(MAX_PATTERN_BYTES + 1);
    let failed = one(TextBody, None, Matches, Some(&long)).unwrap();
    assert!(
        failed.ends_with("regular expression longer than 1024 bytes"),
        "{failed}"
    );
    // Short to write, huge once compiled.
    let failed = one(TextBody, None, Matches, Some(r"(\w{100}){100}")).unwrap();
    assert!(
        failed.contains("invalid regular expression: ") && failed.contains("size limit"),
        "{failed}"
    );
    assert_eq!(
        patterns::compiled(&"a".repeat(MAX_PATTERN_BYTES)).map(|_| ()),
        Ok(())
    );
}

#[test]
fn only_finite_numbers_are_numbers() {
    assert_eq!(number(" 42 "), Some(42.0));
    assert_eq!(number("-1.5e3"), Some(-1500.0));
    for text in ["", "inf", "-infinity", "NaN", "1e999", "12abc", "0x10"] {
        assert_eq!(number(text), None, "{text}");
    }
    // So "inf" is compared as text.
    assert!(one(StatusCode, None, LessThan, Some("inf")).is_some());
}

#[test]
fn every_assertion_is_judged_and_the_first_failure_named() {
    let failing = assertion(StatusCode, None, Equals, Some("500"));
    let passing = assertion(StatusCode, None, Equals, Some("200"));
    assert_eq!(
        verdict(&[
            passing.clone(),
            failing.clone(),
            passing.clone(),
            failing.clone()
        ])
        .as_deref(),
        Some(r#"assertion 2 failed: status_code equals "500": got 200 (also failed: 4)"#)
    );
    let many = vec![failing; 13];
    assert_eq!(
        verdict(&many).as_deref(),
        Some(
            r#"assertion 1 failed: status_code equals "500": got 200 (also failed: 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, and 2 more)"#
        )
    );
}

#[test]
fn what_was_seen_is_quoted_at_most_200_characters() {
    let body = "é".repeat(500);
    let failed = verdict_on(
        body.as_bytes(),
        &[assertion(TextBody, None, Equals, Some("x"))],
    )
    .unwrap();
    let expected = format!(
        r#"assertion 1 failed: text_body equals "x": got "{}"…"#,
        "é".repeat(200)
    );
    assert_eq!(failed, expected);
    // Control characters are escaped: a verdict is one line.
    let failed = verdict_on(b"a\nb", &[assertion(TextBody, None, IsEmpty, None)]).unwrap();
    assert!(failed.ends_with(r#"got "a\nb""#), "{failed}");
}

#[test]
fn secrets_never_appear_in_a_verdict() {
    // The target echoes the password across the 200-character cut: were
    // it redacted after cutting, its first characters would stay.
    let body = format!("{}password=hunter2 and more", "x".repeat(187));
    let failed = verdict_on(body.as_bytes(), &[assertion(TextBody, None, IsEmpty, None)]).unwrap();
    assert!(!failed.contains("hunt"), "{failed}");
    assert!(failed.ends_with("password=[red\"…"), "{failed}");
    let failed = json("$.status", Equals, Some("hunter2")).unwrap();
    assert_eq!(
        failed,
        r#"assertion 1 failed: json_body $.status equals "[redacted]": got "ok""#
    );
}

mod budgeted;
