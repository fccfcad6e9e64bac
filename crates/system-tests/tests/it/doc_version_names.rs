//! How a page names a message version (`state-changed.v4`, its subject
//! `uptime.events.state_changed.v4` or any subject ending in
//! `state_changed.v4`, the type `StateChangedV4`, `state-changed v4`), read
//! for `doc_versions`, with the sentence around a name and the version
//! numbers of a table cell.

use regex::Regex;
use std::collections::BTreeSet;
use uptime_contracts::versions::{WireVersion, VERSIONS};

/// One version of a family named in a page.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Mention {
    pub family: &'static str,
    pub version: u32,
    /// Byte offset in the page.
    pub at: usize,
    /// 1-based.
    pub line: usize,
    pub text: String,
}

/// `check-due` → `CheckDue`.
pub(super) fn camel(family: &str) -> String {
    family
        .split('-')
        .map(|w| w[..1].to_uppercase() + &w[1..])
        .collect()
}

/// For each family, the ways a page names one of its versions: the schema
/// name (`check-due.v5`, `check-due v5`), the subject's last segment
/// (`due.v5`, which every full subject ends in) and the type (`CheckDueV5`).
pub(super) fn name_patterns(versions: &[WireVersion]) -> Vec<(&'static str, Regex)> {
    let mut seen = BTreeSet::new();
    let version_suffix = Regex::new(r"\.v\d+$").unwrap();
    versions
        .iter()
        .filter(|v| seen.insert(v.family))
        .map(|v| {
            let base = version_suffix.replace(v.subject, "");
            let segment = base.rsplit('.').next().unwrap().to_string();
            let pattern = format!(
                r"(?:{}[. ]v|{}\.v|{}V)(\d+)\b",
                regex::escape(v.family),
                regex::escape(&segment),
                regex::escape(&camel(v.family)),
            );
            (v.family, Regex::new(&pattern).unwrap())
        })
        .collect()
}

/// Every version `text` names, in order.
pub(super) fn mentions(text: &str, versions: &[WireVersion]) -> Vec<Mention> {
    let mut found = Vec::new();
    for (family, pattern) in name_patterns(versions) {
        for m in pattern.captures_iter(text) {
            let whole = m.get(0).unwrap();
            // `result.v3` inside `check-result.v3` is the schema name's;
            // `changed.v1` inside `state_changed.v1` is another family's.
            let glued = text[..whole.start()]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if glued {
                continue;
            }
            found.push(Mention {
                family,
                version: m[1].parse().unwrap(),
                at: whole.start(),
                line: text[..whole.start()].matches('\n').count() + 1,
                text: whole.as_str().to_string(),
            });
        }
    }
    found.sort_by_key(|m| m.at);
    found
}

pub(super) fn entry<'a>(
    versions: &'a [WireVersion],
    family: &str,
    version: u32,
) -> Option<&'a WireVersion> {
    versions
        .iter()
        .find(|v| v.family == family && v.version == version)
}

/// The version numbers a cell names: `v5`, and ranges `v1–v3`.
pub(super) fn versions_in(cell: &str) -> BTreeSet<u32> {
    let range = Regex::new(r"\bv(\d+)\s*(?:–|-|to)\s*v?(\d+)\b").unwrap();
    let single = Regex::new(r"\bv(\d+)\b").unwrap();
    let mut found = BTreeSet::new();
    for r in range.captures_iter(cell) {
        let (a, b): (u32, u32) = (r[1].parse().unwrap(), r[2].parse().unwrap());
        found.extend(a..=b);
    }
    let rest = range.replace_all(cell, "");
    found.extend(
        single
            .captures_iter(&rest)
            .map(|c| c[1].parse::<u32>().unwrap()),
    );
    found
}

/// The sentence of `text` around byte `at`: a table row or a line of a
/// fenced block is its own; in prose, from the end of the sentence before
/// (a `.` then white space, or a blank line) to the end of this one.
pub(super) fn sentence_at(text: &str, at: usize) -> &str {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let fenced = text[..line_start]
        .lines()
        .filter(|l| l.trim_start().starts_with("```"))
        .count()
        % 2
        == 1;
    if fenced || text[line_start..].trim_start().starts_with('|') {
        return &text[line_start..line_end];
    }
    let ends = Regex::new(r"\.\s|\n\s*\n").unwrap();
    let start = ends.find_iter(&text[..at]).last().map_or(0, |m| m.end());
    let end = ends
        .find(&text[at..])
        .map_or(text.len(), |m| at + m.start());
    &text[start..end]
}

/// The retired `state-changed` v2: its subject and its type's name.
pub(super) fn retired_state_changed() -> (&'static str, String) {
    let v = entry(VERSIONS, "state-changed", 2).expect("state-changed v2 in the table");
    assert!(!v.status.is_live(), "the controls need a retired version");
    (v.subject, format!("{}V{}", camel(v.family), v.version))
}

#[test]
fn the_name_reader_finds_every_form_and_nothing_else() {
    let (_, retired_type) = retired_state_changed();
    let text = format!(
        "`state-changed.v4`, `uptime.events.state_changed.v3`, `{retired_type}`, \
         state-changed v4, `check-result.v3`, `uptime.monitors.changed.v1`, \
         `CheckResultV10`, `MonitorRefV2`, `proto-schemas/<family>.v<N>.json`"
    );
    let found: Vec<(&str, u32)> = mentions(&text, VERSIONS)
        .iter()
        .map(|m| (m.family, m.version))
        .collect();
    assert_eq!(
        found,
        [
            ("state-changed", 4),
            ("state-changed", 3),
            ("state-changed", 2),
            ("state-changed", 4),
            ("check-result", 3),
            ("monitor-changed", 1),
            ("check-result", 10),
        ]
    );
    assert_eq!(
        versions_in("v4 (2026-11-27), v1–v3 (2026-11-25)"),
        [1, 2, 3, 4].into()
    );
}
