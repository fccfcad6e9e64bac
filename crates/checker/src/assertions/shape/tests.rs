//! Reading the shape of paths the crate accepted.

use super::*;

fn one_segment(descendant: bool, selectors: Vec<Selector>) -> Segment {
    Segment {
        descendant,
        selectors,
    }
}

#[test]
fn segments_and_selectors() {
    let q = shape_of("$.a ['b', 0,*, 1:3]..c..*..[?@.x]").unwrap();
    assert!(q.absolute);
    let filter = Filter {
        queries: vec![Query {
            absolute: false,
            segments: vec![one_segment(false, vec![Selector::One])],
        }],
        ..Filter::default()
    };
    assert_eq!(
        q.segments,
        [
            one_segment(false, vec![Selector::One]),
            one_segment(
                false,
                vec![Selector::One, Selector::One, Selector::Many, Selector::Many]
            ),
            one_segment(true, vec![Selector::One]),
            one_segment(true, vec![Selector::Many]),
            one_segment(true, vec![Selector::Filter(filter)]),
        ]
    );
}

#[test]
fn string_literals_hide_their_contents() {
    let q = shape_of(r#"$['a..b[?', "]\"..*"][?@.x == 'y)]..*']"#).unwrap();
    assert_eq!(q.segments.len(), 2);
    assert!(q.segments.iter().all(|s| !s.descendant));
    let Selector::Filter(filter) = &q.segments[1].selectors[0] else {
        panic!("{q:?}");
    };
    assert_eq!(filter.queries.len(), 1);
    assert_eq!(filter.steps, 1);
    assert!(filter.deep_comparisons.is_empty());
}

#[test]
fn filters_collect_their_queries_comparisons_and_functions() {
    let q = shape_of(
        "$[?(@.a == $.b || !@.c) && count(@..d[?@.e]) > 1 && value(@.f) != @.g && length(@) < 3]",
    )
    .unwrap();
    let Selector::Filter(filter) = &q.segments[0].selectors[0] else {
        panic!("{q:?}");
    };
    let kinds: Vec<bool> = filter.queries.iter().map(|q| q.absolute).collect();
    assert_eq!(kinds, [false, true, false, false, false, false, false]);
    // Four comparisons and three function calls.
    assert_eq!(filter.steps, 7);
    // `@.a == $.b` and `value(@.f) != @.g`, both with a relative side.
    assert_eq!(filter.deep_comparisons, [true, true]);
    // The filter inside `count()` is read too.
    let count_arg = &filter.queries[3];
    assert!(count_arg.segments[0].descendant);
    assert!(matches!(
        count_arg.segments[1].selectors[0],
        Selector::Filter(_)
    ));
}

#[test]
fn nesting_counts_brackets_and_parentheses_outside_strings() {
    assert_eq!(nesting("$.a"), 0);
    assert_eq!(nesting("$[0][1]"), 1);
    assert_eq!(nesting("$[?(@.a[?@.b] || (@.c))]"), 3);
    assert_eq!(nesting(r#"$['[[[(', "\"[[["][?@ == ']]]']"#), 1);
}

#[test]
fn regex_functions_are_refused() {
    for (path, name) in [
        ("$[?match(@.a, 'x.*')]", "match"),
        ("$.a[?@.b && search(@.c, '[a-z]')]", "search"),
        ("$[?count(@[?match(@, 'a')]) > 0]", "match"),
    ] {
        assert_eq!(
            shape_of(path),
            Err(ShapeError::RegexFunction(name)),
            "{path}"
        );
    }
    // A member named match is not a call.
    assert!(shape_of("$.match[?@.search == 'x']").is_ok());
}

#[test]
fn every_rfc_example_path_is_read() {
    // The queries of RFC 9535's examples (sections 1.5 and 2.3–2.5).
    for path in [
        "$",
        "$.store.book[*].author",
        "$..author",
        "$.store.*",
        "$.store..price",
        "$..book[2]",
        "$..book[2].author",
        "$..book[2].publisher",
        "$..book[-1]",
        "$..book[0,1]",
        "$..book[:2]",
        "$..book[?@.isbn]",
        "$..book[?@.price<10]",
        "$..*",
        "$.o['j j']['k.k']",
        "$.o[\"j j\"][\"k.k\"]",
        "$[\"'\"][\"@\"]",
        "$[1:3]",
        "$[5:]",
        "$[1:5:2]",
        "$[5:1:-2]",
        "$[::-1]",
        "$.a[?@.b == 'kilo']",
        "$.a[?(@.b == 'kilo')]",
        "$.a[?@>3.5]",
        "$.a[?@.b]",
        "$[?@.*]",
        "$[?@[?@.b]]",
        "$.o[?@<3, ?@<3]",
        "$.a[?@<2 || @.b == \"k\"]",
        "$.o[?@>1 && @<4]",
        "$.o[?@.u || @.x]",
        "$.a[?@.b == $.x]",
        "$.a[?@ == @]",
        "$[?length(@.authors) >= 5]",
        "$[?count(@.*.author) >= 5]",
        "$[?value(@..color) == \"red\"]",
        "$[?!@.a]",
        "$[?!(@.a == 1)]",
        "$.a[?@.b==-1.5e3]",
        "$.a[?@.b == true && @.c != null]",
        "$ .a [0] .b",
        "$.ünïcödé._x1",
    ] {
        assert!(serde_json_path::JsonPath::parse(path).is_ok(), "{path}");
        assert!(shape_of(path).is_ok(), "{path}: {:?}", shape_of(path));
    }
}
