//! The cost bound, pure: on bodies as large as a checker reads, common
//! paths are never refused and multiplying ones always are; and the bound
//! is never below what a query really selects.

use super::*;
use crate::assertions::shape::shape_of;
use serde_json::json;
use serde_json_path::JsonPath;

/// `[[[…]]]`, `levels` arrays deep (`2 × levels` bytes).
fn nested(levels: usize) -> Json {
    let text = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
    serde_json::from_str(&text).unwrap()
}

/// About `bytes` of a typical API answer: items with an id and a status.
fn items(bytes: usize) -> Json {
    let item = |n: usize| json!({"id": n, "status": if n % 7 == 1 { "down" } else { "up" }});
    let count = bytes / item(100_000).to_string().len();
    json!({"a": {"b": 1}, "items": (0..count).map(item).collect::<Vec<_>>()})
}

/// About `bytes` of the most nodes per byte JSON has: `[0,0,0,…]`.
fn zeros(bytes: usize) -> Json {
    Json::Array(vec![json!(0); bytes / 2])
}

/// `Err` when the path is over its budget on `body`.
fn judged(path: &str, body: &Json) -> Result<(), OverBudget> {
    check_query(&shape_of(path).unwrap(), &Document::of(body))
}

const MIB: usize = 1024 * 1024;

#[test]
fn documents_are_measured() {
    let body = json!({"ab": [1, "x".repeat(64)], "c": null});
    assert_eq!(
        Document::of(&body),
        Document {
            nodes: 5,
            depth: 2,
            // Five nodes, 64 bytes of string (2 nodes), 3 bytes of keys (0).
            weight: 7,
        }
    );
    let deep = Document::of(&nested(120));
    assert_eq!((deep.nodes, deep.depth), (120, 119));
}

#[test]
fn common_paths_are_never_refused_up_to_the_largest_bodies() {
    let paths = [
        "$.a.b",
        "$.items[*].status",
        "$.items[?@.status == 'down']",
        "$..id",
        "$.items[0].id",
        "$.items[-1:]",
        "$..items[*].id",
        "$..status",
        "$.items[?@.id > 10 && @.status != 'up'].id",
        "$[?count(@.*) > 1]",
    ];
    // The default max_body_bytes (1 MiB) and a checker configured at 8.
    let bodies = [
        items(MIB),
        items(8 * MIB),
        zeros(8 * MIB),
        nested(127),
        json!({}),
    ];
    for body in &bodies {
        for path in paths {
            assert_eq!(judged(path, body), Ok(()), "{path}");
        }
    }
}

#[test]
fn multiplying_paths_are_refused_before_they_run() {
    let deep = nested(120);
    for path in [
        "$..*..*..*",
        "$..*..*..*..*..*..*",
        "$..[*,*,*,*]..[*,*,*,*]..[*,*,*,*]",
        // Filters: a descendant query per node of a descendant walk.
        "$..*[?@..*..*]",
        "$..*[?count(@..*..*) > 0]",
        // An absolute query rerun for every node tested.
        "$..*[?$..*..*]",
    ] {
        assert_eq!(
            judged(path, &deep),
            Err(OverBudget::Visits { limit: 100_000 }),
            "{path}"
        );
    }
    // The same paths on a large body: the allowance grows with it, the
    // cost faster.
    let large = items(MIB);
    let limit = Document::of(&large).visit_limit();
    assert!(limit > JSONPATH_NODE_BUDGET);
    for path in ["$..*..*..*", "$..*[?$..*]", "$[*,*,*,*,*,*,*,*,*]"] {
        assert_eq!(
            judged(path, &large),
            Err(OverBudget::Visits { limit }),
            "{path}"
        );
    }
}

#[test]
fn the_bound_is_never_below_what_a_query_selects() {
    let bodies = [
        nested(12),
        items(2_000),
        json!({"a": [{"b": [1, {"b": 2}]}, {"b": {"b": [3, 4]}}], "x": "b"}),
        json!([[1, [2, [3]]], {"k": {"k": {"k": 1}}}]),
    ];
    let paths = [
        "$",
        "$..*",
        "$..*..*",
        "$..*..*..*",
        "$..b..b",
        "$..[*,*]",
        "$.*[*,0,*]..*",
        "$..[?@.b]..*",
        "$..*[?@ == @]",
        "$..[0:2]..[::-1]",
        "$..k..k..k",
    ];
    for body in &bodies {
        let document = Document::of(body);
        for path in paths {
            let selected = JsonPath::parse(path).unwrap().query(body).all().len();
            let bound = cost(&shape_of(path).unwrap(), &document);
            assert!(
                u64::try_from(selected).unwrap() <= bound,
                "{path} on {body}: {selected} selected, bound {bound}"
            );
        }
    }
}

#[test]
fn the_copy_of_a_selection_is_bounded_with_an_early_stop() {
    let big = json!("s".repeat(320));
    let list: Vec<&Json> = vec![&big; 3];
    // 11 each (one node, 320 bytes of string).
    assert_eq!(check_selection(&list, 33), Ok(()));
    assert_eq!(
        check_selection(&list, 32),
        Err(OverBudget::Selection { limit: 32 })
    );
    // A selection far larger than its limit is refused all the same (the
    // walk stops at the limit: this one would weigh some 10^9).
    let deep = nested(120);
    let whole: Vec<&Json> = vec![&deep; 100_000];
    assert_eq!(
        check_selection(&whole, 1_000),
        Err(OverBudget::Selection { limit: 1_000 })
    );
    // The allowance: the node budget, or passes over a large body.
    assert_eq!(Document::of(&deep).selection_limit(), JSONPATH_NODE_BUDGET);
    let large = Document::of(&zeros(MIB));
    assert_eq!(
        large.selection_limit(),
        JSONPATH_DOCUMENT_PASSES * large.weight
    );
}
