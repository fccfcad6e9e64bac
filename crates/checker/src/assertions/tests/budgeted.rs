//! Verdicts of assertions over their budget: the bounds of
//! `budget` as a monitor's owner reads them.

use super::*;

/// `[[[…]]]`, 120 arrays deep: 240 bytes.
fn deep_body() -> Vec<u8> {
    format!("{}{}", "[".repeat(120), "]".repeat(120)).into_bytes()
}

#[test]
fn a_multiplying_path_is_over_its_budget_and_not_run() {
    let body = deep_body();
    for path in ["$..*..*..*", "$..*..*..*..*..*..*"] {
        let verdict = verdict_on(&body, &[assertion(JsonBody, Some(path), Equals, Some("x"))]);
        assert_eq!(
            verdict,
            Some(format!(
                r#"assertion 1 over its budget: json_body {path} equals "x": would visit more than 100000 nodes"#
            ))
        );
    }
}

#[test]
fn a_selection_too_large_to_copy_is_over_its_budget() {
    // Within the visits, but every node's subtree selected once per
    // ancestor: some 280,000 nodes to copy.
    let verdict = verdict_on(
        &deep_body(),
        &[assertion(JsonBody, Some("$..*..*"), NotEmpty, None)],
    );
    assert_eq!(
        verdict.as_deref(),
        Some(
            "assertion 1 over its budget: json_body $..*..* not_empty: would select more than 100000 nodes"
        )
    );
}

#[test]
fn the_other_assertions_are_still_judged() {
    let body = deep_body();
    let assertions = [
        assertion(StatusCode, None, Equals, Some("200")),
        assertion(JsonBody, Some("$..*..*..*"), NotEmpty, None),
        assertion(JsonBody, Some("$[0][0]"), NotEmpty, None),
        assertion(TextBody, None, Contains, Some("{")),
    ];
    assert_eq!(
        verdict_on(&body, &assertions).as_deref(),
        Some(
            "assertion 2 over its budget: json_body $..*..*..* not_empty: would visit more than 100000 nodes (also failed: 4)"
        )
    );
}

#[test]
fn regex_functions_are_refused_pointing_at_matches() {
    for (path, name) in [
        ("$.checks[?match(@.name, 'd.*')]", "match"),
        ("$.checks[?search(@.name, 'd')]", "search"),
    ] {
        assert_eq!(
            json(path, NotEmpty, None),
            Some(format!(
                "assertion 1 failed: json_body {path} not_empty: JSONPath function {name}() is not \
                 supported: select the value and use the matches comparison instead"
            ))
        );
    }
}

#[test]
fn a_path_longer_than_allowed_is_not_parsed() {
    let path = format!("$.{}", "a".repeat(JSONPATH_MAX_BYTES));
    let verdict = json(&path, IsEmpty, None).unwrap();
    assert!(
        verdict.starts_with("assertion 1 over its budget: json_body $.aaa")
            && verdict.ends_with(": longer than 1024 bytes"),
        "{verdict}"
    );
}

#[test]
fn paths_nested_deeper_than_allowed_are_not_parsed() {
    // Parsing backtracks through nested filters in exponential time, and
    // recurses: 50 deep would never end (or overflow a thread's stack).
    let nested = |depth: usize| format!("$[?{}@{}]", "@[?".repeat(depth), "]".repeat(depth));
    let verdict = json(&nested(50), NotEmpty, None).unwrap();
    assert!(
        verdict.ends_with(": brackets and parentheses nested more than 8 deep"),
        "{verdict}"
    );
    // As deep as allowed, on a thread with the blocking pool's stack.
    let deepest = nested(JSONPATH_MAX_NESTING - 1);
    let parens = format!("$.checks[?{}@.ok{}]", "(".repeat(7), ")".repeat(7));
    let verdicts = std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || [json(&deepest, IsEmpty, None), json(&parens, NotEmpty, None)])
        .unwrap()
        .join()
        .expect("no stack overflow");
    assert_eq!(verdicts, [None, None]);
}

#[test]
fn common_paths_still_pass() {
    assert_eq!(json("$.checks[*].ok", Contains, Some("true")), None);
    assert_eq!(json("$.checks[?@.ok == false]", NotEmpty, None), None);
    assert_eq!(json("$..ok", Contains, Some("false")), None);
    assert_eq!(json("$.count", GreaterThan, Some("4")), None);
}
