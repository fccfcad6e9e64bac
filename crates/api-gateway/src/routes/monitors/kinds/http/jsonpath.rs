//! How costly a JSONPath may be: the rules read from its text before it is
//! parsed, for the `property` of a `json_body` assertion.

/// Most descendant segments (`..`) in a JSONPath, filters included: each
/// one can multiply the nodes a check visits by the body's size.
pub const MAX_JSONPATH_DESCENDANTS: usize = 2;
/// Deepest nesting of filters in a JSONPath (`$.a[?@.b[?@.c]]` is 2): a
/// filter runs its queries once per node it tests.
pub const MAX_JSONPATH_FILTER_NESTING: usize = 2;
/// Deepest nesting of brackets and parentheses in a JSONPath: the JSONPath
/// parser backtracks through nested filters in time exponential in their
/// depth (50 deep, in 150 characters, would never finish), so a path is
/// measured before it is parsed. The checker's bound
/// (`checker::assertions::JSONPATH_MAX_NESTING`).
pub const MAX_JSONPATH_NESTING: usize = 8;

/// The parts of a JSONPath that make its cost unbounded, read from its
/// text outside string literals, before it is parsed: nesting, descendant
/// segments, nested filters and the regular-expression functions. The
/// checker bounds every path's cost on the body it gets (and refuses
/// `match()`/`search()` too); these rules refuse early, with the field,
/// what is never sound on any body.
pub(crate) fn check_jsonpath_cost(path: &str) -> Result<(), String> {
    let mut descendants = 0;
    let mut nesting = 0;
    // One entry per open `[` or `(`: whether it is a bracket whose current
    // selector is a filter.
    let mut open: Vec<(char, bool)> = Vec::new();
    let mut filters = 0usize;
    let mut deepest = 0usize;
    let mut chars = path.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            '\'' | '"' => {
                // A string literal: skip to its closing quote.
                while let Some((_, inner)) = chars.next() {
                    if inner == '\\' {
                        chars.next();
                    } else if inner == c {
                        break;
                    }
                }
            }
            '.' if chars.peek().is_some_and(|&(_, next)| next == '.') => {
                chars.next();
                descendants += 1;
            }
            '[' | '(' => {
                open.push((c, false));
                nesting = nesting.max(open.len());
                if nesting > MAX_JSONPATH_NESTING {
                    return Err(format!(
                        "must nest brackets and parentheses at most {MAX_JSONPATH_NESTING} deep"
                    ));
                }
            }
            '?' => {
                if let Some(top) = open.last_mut() {
                    top.1 = true;
                }
                filters += 1;
                deepest = deepest.max(filters);
            }
            ',' | ']' => {
                // A comma in a bracket ends its selector, and `]` the
                // bracket; a comma between function arguments does neither.
                if let Some(&('[', true)) = open.last() {
                    filters = filters.saturating_sub(1);
                    if let Some(top) = open.last_mut() {
                        top.1 = false;
                    }
                }
                if c == ']' {
                    open.pop();
                }
            }
            ')' => {
                open.pop();
            }
            'a'..='z' => {
                let start = at;
                let mut end = at + 1;
                while let Some(&(i, next)) = chars.peek() {
                    if next.is_ascii_alphanumeric() || next == '_' {
                        chars.next();
                        end = i + 1;
                    } else {
                        break;
                    }
                }
                let word = &path[start..end];
                let called = path[end..].starts_with('(');
                if called && (word == "match" || word == "search") {
                    return Err(format!(
                        "must not call the JSONPath function {word}(): select the value and \
                         compare it with the matches comparison instead"
                    ));
                }
            }
            _ => {}
        }
    }
    if descendants > MAX_JSONPATH_DESCENDANTS {
        return Err(format!(
            "must have at most {MAX_JSONPATH_DESCENDANTS} descendant segments (..), filters \
             included: each may multiply the nodes a check visits"
        ));
    }
    if deepest > MAX_JSONPATH_FILTER_NESTING {
        return Err(format!(
            "must nest filters at most {MAX_JSONPATH_FILTER_NESTING} deep"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::assertions::MAX_PROPERTY_CHARS;
    use super::*;

    #[test]
    fn jsonpath_costs_are_bounded_outside_string_literals() {
        for path in [
            "$.a.b",
            "$.items[*].status",
            "$.items[?@.status == 'down']",
            "$..id",
            "$..items[?@.id > 1]..name",
            "$['a..b..c']..x",
            "$[?@.a[?@.b]]",
            "$[?@['[?'] == '?]']",
            "$.match[?@.search == 'match(']",
            "$[?length(@.a) > 0 && count(@.*) > 1]",
            "$[?@.a, ?@.b, ?@.c]",
            "$[?(((((((@.a)))))))]",
        ] {
            assert!(serde_json_path::JsonPath::parse(path).is_ok(), "{path}");
            assert_eq!(check_jsonpath_cost(path), Ok(()), "{path}");
        }
        for (path, says) in [
            ("$..*..*..*", "at most 2 descendant segments"),
            ("$..a[?@..b..c]", "at most 2 descendant segments"),
            ("$[?@.a[?@.b[?@.c]]]", "nest filters at most 2 deep"),
            (
                "$[?match(@.a, 'x')]",
                "must not call the JSONPath function match()",
            ),
            ("$[?search(@.a, 'x')]", "function search()"),
            (
                "$[?((((((((@.a))))))))]",
                "nest brackets and parentheses at most 8 deep",
            ),
        ] {
            assert!(serde_json_path::JsonPath::parse(path).is_ok(), "{path}");
            let refused = check_jsonpath_cost(path).unwrap_err();
            assert!(refused.contains(says), "{path}: {refused}");
        }
    }

    #[test]
    fn deep_nesting_is_refused_before_the_parser_sees_it() {
        // 50 nested filters: the parser would backtrack for hours.
        let path = format!("$[?{}@{}]", "@[?".repeat(50), "]".repeat(50));
        assert!(path.chars().count() <= MAX_PROPERTY_CHARS);
        let refused = check_jsonpath_cost(&path).unwrap_err();
        assert!(refused.contains("at most 8 deep"), "{refused}");
        // Even when it is not a JSONPath at all.
        assert!(check_jsonpath_cost(&"[".repeat(200)).is_err());
    }
}
