//! The budget of a `json_body` assertion: how much work its JSONPath may
//! make the checker do on the body, decided before it runs.
//!
//! A JSONPath's cost is not its length: each descendant segment (`..`)
//! visits every node below every node it starts from, so on a body 120
//! arrays deep (240 bytes) `$..*..*..*` selects some 280,000 nodes and
//! `$..*..*..*..*..*..*` billions; `serde_json_path` builds every
//! intermediate node list in memory, and the verdict used to clone what was
//! selected. Nothing in the crate can stop a query half way (its parsed
//! query is private), so the bound is computed from the path's shape
//! ([`super::shape`]) and the body's size before the query runs, and a path
//! over it is not run at all: the checker never allocates in proportion to
//! a path's blow-up, only to the body it read.
//!
//! The bound follows node lists through the path as (size, multiplicity):
//! how many entries a list may have and how often one node of the body may
//! appear in it (a list holds each node at most `multiplicity` times, so at
//! most `multiplicity × nodes` entries):
//! - a name or index selects at most one child per entry; a wildcard, a
//!   slice or a filter at most every child, each once per entry of its
//!   parent (`multiplicity × nodes`); the selectors of one bracket add up
//!   (`[*,*]` selects every child twice);
//! - a descendant segment first walks each entry's subtree: a node is
//!   reached once per entry that is itself or one of its ancestors, so at
//!   most `multiplicity × (depth + 1)` times (and never more often than the
//!   list has entries): from the root, once;
//! - a filter runs its relative (`@`) queries as the continuation of the
//!   list of children it tests (their total over all children is what
//!   counts), each absolute (`$`) query once per child, one step per
//!   comparison or function call, and for a comparison of two values that
//!   may be arrays or objects (queries, `value()`), the subtrees compared.
//!
//! The cost is every node the walk reaches plus every entry selected,
//! summed over the segments. It may visit
//! `max(JSONPATH_NODE_BUDGET, JSONPATH_DOCUMENT_PASSES × nodes)`: a
//! constant for small bodies, and a few passes per node of large ones, so a
//! path that goes through the body once per segment is never refused
//! (`$.a.b` costs 3, `$.items[*].status` and `$..id` about two per node,
//! `$.items[?@.status == 'down']` about three), only one whose lists
//! multiply. The same allowance bounds the copy of what the path selected
//! (a node, or 32 bytes of a string or key, weighing one), counted with an
//! early stop before anything is copied.
//!
//! The bound is an upper bound: exact for paths from the root without
//! descendant segments, loose by at most a factor of the depth after
//! several of them, which is where refusing is right anyway.

use super::shape::{Filter, Query, Segment, Selector};
use serde_json::Value as Json;
use std::time::Duration;

/// Nodes a JSONPath may visit on any body, and the weight of what it may
/// select (see the module documentation): 100,000 entries of 8 bytes for
/// the lists and about 3 MiB for a copy, whatever the path.
pub const JSONPATH_NODE_BUDGET: u64 = 100_000;
/// Visits per node of the body a JSONPath may make on large bodies, when
/// that is more than [`JSONPATH_NODE_BUDGET`]: memory in proportion to the
/// body read (itself at most `max_body_bytes`), never to the path.
pub const JSONPATH_DOCUMENT_PASSES: u64 = 8;
/// Wall-clock time all the assertions of one check may take to evaluate
/// (parsing the body, the JSONPaths, the regular expressions) once they
/// start; past it the check fails as over its budget.
pub const ASSERTION_TIME_BUDGET: Duration = Duration::from_millis(2_000);
/// Longest JSONPath run, in bytes: the API takes at most 256 characters
/// (4 bytes each at most). Also bounds the parser's recursion on nested
/// parentheses and filters.
pub const JSONPATH_MAX_BYTES: usize = 1024;
/// Deepest nesting of brackets and parentheses in a JSONPath run (see
/// `shape::nesting`: parsing is exponential in it): filters 2 deep with
/// parentheses and function calls in each fit.
pub const JSONPATH_MAX_NESTING: usize = 8;
/// Bytes of a string or key that weigh as much as one node in a copy (a
/// `serde_json::Value` is 32 bytes).
const STRING_BYTES_PER_NODE: u64 = 32;

/// Why an assertion was not (fully) evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OverBudget {
    #[error("would visit more than {limit} nodes")]
    Visits { limit: u64 },
    #[error("would select more than {limit} nodes")]
    Selection { limit: u64 },
    #[error("longer than {JSONPATH_MAX_BYTES} bytes")]
    PathLength,
    #[error("brackets and parentheses nested more than {JSONPATH_MAX_NESTING} deep")]
    PathNesting,
    #[error("took longer than {} ms", .budget.as_millis())]
    Time { budget: Duration },
}

/// What the bound needs to know of a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Document {
    /// Values in it, the root included.
    pub(super) nodes: u64,
    /// Nesting of the deepest value (the root is at 0).
    pub(super) depth: u64,
    /// Its weight as a copy: see [`weight_of`].
    pub(super) weight: u64,
}

impl Document {
    pub(super) fn of(root: &Json) -> Self {
        let mut document = Self {
            nodes: 0,
            depth: 0,
            weight: 0,
        };
        let mut pending = vec![(root, 0u64)];
        while let Some((value, depth)) = pending.pop() {
            document.nodes += 1;
            document.depth = document.depth.max(depth);
            document.weight += own_weight(value);
            match value {
                Json::Array(items) => pending.extend(items.iter().map(|v| (v, depth + 1))),
                Json::Object(members) => {
                    pending.extend(members.values().map(|v| (v, depth + 1)));
                }
                _ => {}
            }
        }
        document
    }

    /// Nodes a query may visit on this body.
    pub(super) fn visit_limit(&self) -> u64 {
        JSONPATH_NODE_BUDGET.max(JSONPATH_DOCUMENT_PASSES.saturating_mul(self.nodes))
    }

    /// Weight a query's selection may have on this body.
    pub(super) fn selection_limit(&self) -> u64 {
        JSONPATH_NODE_BUDGET.max(JSONPATH_DOCUMENT_PASSES.saturating_mul(self.weight))
    }
}

/// Refuses `query` when running it on `document` could cost more than the
/// document's allowance.
pub(super) fn check_query(query: &Query, document: &Document) -> Result<(), OverBudget> {
    let limit = document.visit_limit();
    if cost(query, document) > limit {
        Err(OverBudget::Visits { limit })
    } else {
        Ok(())
    }
}

/// Refuses a selection whose copy would weigh more than `limit`, looking
/// at no more of it than that.
pub(super) fn check_selection(selected: &[&Json], limit: u64) -> Result<(), OverBudget> {
    let mut weight = 0u64;
    let mut pending: Vec<&Json> = Vec::new();
    for &node in selected {
        pending.push(node);
        while let Some(value) = pending.pop() {
            weight += own_weight(value);
            if weight > limit {
                return Err(OverBudget::Selection { limit });
            }
            match value {
                Json::Array(items) => pending.extend(items),
                Json::Object(members) => pending.extend(members.values()),
                _ => {}
            }
        }
    }
    Ok(())
}

/// One for the value, plus its string's bytes or its keys' bytes in nodes.
fn own_weight(value: &Json) -> u64 {
    let bytes = match value {
        Json::String(s) => s.len(),
        Json::Object(members) => members.keys().map(String::len).sum(),
        _ => 0,
    };
    1 + u64::try_from(bytes).unwrap_or(u64::MAX) / STRING_BYTES_PER_NODE
}

/// A node list: at most `size` entries, none of the body's nodes more than
/// `multiplicity` times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct List {
    size: u64,
    multiplicity: u64,
}

/// The list a query starts from: the root, or the node a filter tests.
const ONE_NODE: List = List {
    size: 1,
    multiplicity: 1,
};

/// An upper bound of the nodes `query` visits and selects on `document`.
pub(super) fn cost(query: &Query, document: &Document) -> u64 {
    let mut cost = 1;
    follow(&query.segments, ONE_NODE, document, &mut cost);
    cost
}

/// The list `segments` make of `list`, adding their cost to `cost`.
fn follow(segments: &[Segment], mut list: List, document: &Document, cost: &mut u64) -> List {
    let nodes = document.nodes;
    for segment in segments {
        let from = if segment.descendant {
            // Each node once per entry that is itself or an ancestor.
            let multiplicity = list
                .multiplicity
                .saturating_mul(document.depth + 1)
                .min(list.size);
            let walked = List {
                size: multiplicity.saturating_mul(nodes),
                multiplicity,
            };
            *cost = cost.saturating_add(walked.size);
            walked
        } else {
            list
        };
        let children = List {
            size: from.multiplicity.saturating_mul(nodes),
            multiplicity: from.multiplicity,
        };
        let mut next = List {
            size: 0,
            multiplicity: 0,
        };
        for selector in &segment.selectors {
            let selected = match selector {
                Selector::One => from,
                Selector::Many => children,
                Selector::Filter(filter) => {
                    *cost = cost.saturating_add(filter_cost(filter, children, document));
                    children
                }
            };
            *cost = cost.saturating_add(selected.size);
            next.size = next.size.saturating_add(selected.size);
            next.multiplicity = next.multiplicity.saturating_add(selected.multiplicity);
        }
        next.size = next.size.min(next.multiplicity.saturating_mul(nodes));
        list = next;
    }
    list
}

/// What `filter` costs to test every entry of `tested`.
fn filter_cost(filter: &Filter, tested: List, document: &Document) -> u64 {
    let mut cost = tested.size.saturating_mul(filter.steps);
    for query in &filter.queries {
        if query.absolute {
            // Run again from the root for every node tested.
            cost = cost.saturating_add(tested.size.saturating_mul(self::cost(query, document)));
        } else {
            follow(&query.segments, tested, document, &mut cost);
        }
    }
    let nodes = document.nodes;
    for &relative in &filter.deep_comparisons {
        // Comparing two values walks at most the smaller one. With a side
        // inside the tested node's subtree, all the comparisons together
        // walk at most those subtrees: each node lies in the subtrees of
        // `depth + 1` nodes, each tested `multiplicity` times.
        let each = tested.size.saturating_mul(nodes);
        let compared = if relative {
            each.min(
                tested
                    .multiplicity
                    .saturating_mul(document.depth + 1)
                    .saturating_mul(nodes),
            )
        } else {
            each
        };
        cost = cost.saturating_add(compared);
    }
    cost
}

#[cfg(test)]
mod tests;
