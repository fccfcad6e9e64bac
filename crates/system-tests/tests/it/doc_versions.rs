//! What the docs say about message versions, held to the version table in
//! code (`uptime_contracts::versions::VERSIONS`), so a new version (or a
//! retired one) makes every page that still states the old ones fail:
//!
//! - the "Live today" tables (`| family | current | previous | retired |`
//!   in docs/architecture.md and proto-schemas/README.md): each family once,
//!   its current version, its previous one (at most one: at most two live)
//!   with the day it must be gone by, and its retired ones with their days;
//! - docs/architecture.md's subjects table: a row per live version, said
//!   `current` or `previous` as the table says, no row for a retired one;
//! - prose: a version named outside those tables (`state-changed.v4`,
//!   `uptime.events.state_changed.v4`, `StateChangedV4`, `state-changed v4`)
//!   is the current one in the pages that describe the system as it is
//!   (architecture, README, API, runbook, proto-schemas); in
//!   docs/operations.md, outside its upgrade notes ("Deploying"), an older
//!   one only in a sentence that calls it `previous` or `retired`;
//! - and nowhere a version the table does not have.

use super::doc_markdown::{backticked, read, section_lines, tables_headed, Table};
use super::doc_version_names::{entry, mentions, retired_state_changed, sentence_at, versions_in};
use std::collections::{BTreeMap, BTreeSet};
use uptime_contracts::versions::{Status, WireVersion, VERSIONS};

/// Pages whose prose names only current versions.
const DESCRIBE_THE_PRESENT: [&str; 5] = [
    "docs/architecture.md",
    "README.md",
    "docs/api.md",
    "docs/runbook.md",
    "proto-schemas/README.md",
];
/// Pages that must have a "Live today" table.
const WITH_VERSION_TABLE: [&str; 2] = ["docs/architecture.md", "proto-schemas/README.md"];
const VERSION_TABLE: [&str; 4] = ["family", "current", "previous", "retired"];
const SUBJECTS_TABLE: [&str; 2] = ["subject", "message"];

/// Where a "Live today" table (one of `tables`) disagrees with `versions`.
fn version_table_problems(page: &str, table: &Table, versions: &[WireVersion]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut families: BTreeMap<&str, Vec<&WireVersion>> = BTreeMap::new();
    for v in versions {
        families.entry(v.family).or_default().push(v);
    }
    let mut described = BTreeSet::new();
    for row in &table.rows {
        let at = format!("{page}:{}", row.line);
        let Some(family) = row
            .cells
            .first()
            .and_then(|c| backticked(c).first().copied())
        else {
            problems.push(format!("{at}: a row without a `family`"));
            continue;
        };
        let Some(known) = families.get(family) else {
            problems.push(format!(
                "{at}: `{family}` is no message family of versions.rs"
            ));
            continue;
        };
        if !described.insert(family) {
            problems.push(format!("{at}: `{family}` described twice"));
        }
        let cell = |i: usize| row.cells.get(i).map(String::as_str).unwrap_or("");
        let of = |wanted: fn(&Status) -> bool| -> Vec<&WireVersion> {
            known
                .iter()
                .copied()
                .filter(|v| wanted(&v.status))
                .collect()
        };
        let current = of(|s| *s == Status::Current);
        let previous = of(|s| matches!(s, Status::Previous { .. }));
        let retired = of(|s| matches!(s, Status::Retired { .. }));
        let numbers = |vs: &[&WireVersion]| vs.iter().map(|v| v.version).collect::<BTreeSet<_>>();
        for (column, cell, want) in [
            ("current", cell(1), numbers(&current)),
            ("previous", cell(2), numbers(&previous)),
            ("retired", cell(3), numbers(&retired)),
        ] {
            let said = versions_in(cell);
            if said != want {
                problems.push(format!(
                    "{at}: `{family}` {column}: the page says {said:?}, versions.rs {want:?}"
                ));
            }
        }
        if versions_in(cell(1)).len() > 1 || versions_in(cell(2)).len() > 1 {
            problems.push(format!(
                "{at}: `{family}`: at most two versions live, one current and one previous"
            ));
        }
        for v in &previous {
            if let Status::Previous {
                retire_after: Some(day),
            } = v.status
            {
                if !cell(2).contains(day) {
                    problems.push(format!(
                        "{at}: `{family}` v{}: the page does not say it goes after {day}",
                        v.version
                    ));
                }
            }
        }
        for v in &retired {
            if let Status::Retired { since } = v.status {
                if !cell(3).contains(since) {
                    problems.push(format!(
                        "{at}: `{family}` v{}: the page does not say it was retired on {since}",
                        v.version
                    ));
                }
            }
        }
    }
    for family in families.keys().filter(|f| !described.contains(*f)) {
        problems.push(format!("{page}:{}: no row for `{family}`", table.line));
    }
    problems
}

/// Where a subjects table (`| subject | message | ...`) disagrees with
/// `versions`: every live version has a row, which says `current` or
/// `previous` as it is; no row for a retired one; a row names no other
/// version of its family.
fn subjects_table_problems(page: &str, table: &Table, versions: &[WireVersion]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut rows_of = BTreeSet::new();
    for row in &table.rows {
        let at = format!("{page}:{}", row.line);
        let Some(subject) = row
            .cells
            .first()
            .and_then(|c| backticked(c).first().copied())
        else {
            continue;
        };
        let Some(v) = versions.iter().find(|v| {
            subject == v.subject
                || subject
                    .strip_prefix(v.subject)
                    .is_some_and(|rest| rest.starts_with('.'))
        }) else {
            continue;
        };
        rows_of.insert((v.family, v.version));
        let message = row.cells.get(1).map(String::as_str).unwrap_or("");
        let (says_current, says_previous) =
            (message.contains("current"), message.contains("previous"));
        match v.status {
            Status::Retired { since } => problems.push(format!(
                "{at}: `{subject}` was retired on {since}: no row for it"
            )),
            Status::Current if !says_current || says_previous => problems.push(format!(
                "{at}: `{subject}` is the current version of {}: its row must say `current`",
                v.family
            )),
            Status::Previous { .. } if !says_previous || says_current => problems.push(format!(
                "{at}: `{subject}` is the previous version of {}: its row must say `previous`",
                v.family
            )),
            _ => {}
        }
        let whole_row = row.cells.join(" | ");
        for m in mentions(&whole_row, versions) {
            if m.family == v.family && m.version != v.version {
                problems.push(format!(
                    "{at}: the row of {} v{} names `{}`",
                    v.family, v.version, m.text
                ));
            }
        }
    }
    for v in versions.iter().filter(|v| v.status.is_live()) {
        if !rows_of.contains(&(v.family, v.version)) {
            problems.push(format!(
                "{page}:{}: no row for `{}` ({} v{}, live)",
                table.line, v.subject, v.family, v.version
            ));
        }
    }
    problems
}

/// The lines the checked tables of `text` take (their claims are checked
/// by their own rules).
fn table_lines(text: &str) -> BTreeSet<usize> {
    let mut lines = BTreeSet::new();
    for header in [&VERSION_TABLE[..], &SUBJECTS_TABLE[..]] {
        for t in tables_headed(text, header) {
            lines.insert(t.line);
            lines.extend(t.rows.iter().map(|r| r.line));
        }
    }
    lines
}

/// A version the table does not have, named anywhere in the page.
fn unknown_problems(page: &str, text: &str, versions: &[WireVersion]) -> Vec<String> {
    mentions(text, versions)
        .into_iter()
        .filter(|m| entry(versions, m.family, m.version).is_none())
        .map(|m| {
            format!(
                "{page}:{}: `{}`: versions.rs has no {} v{}",
                m.line, m.text, m.family, m.version
            )
        })
        .collect()
}

/// Prose (outside the checked tables) that names a version other than the
/// current one of its family.
fn not_current_problems(page: &str, text: &str, versions: &[WireVersion]) -> Vec<String> {
    let exempt = table_lines(text);
    mentions(text, versions)
        .into_iter()
        .filter(|m| !exempt.contains(&m.line))
        .filter_map(|m| {
            let v = entry(versions, m.family, m.version)?;
            let current = versions
                .iter()
                .find(|c| c.family == m.family && c.status == Status::Current)?;
            (v.status != Status::Current).then(|| {
                format!(
                    "{page}:{}: `{}` is not current ({} v{} is): say the current version, \
                     or leave the older one to the version tables",
                    m.line, m.text, m.family, current.version
                )
            })
        })
        .collect()
}

/// In operations.md (outside the upgrade notes of `## Deploying`): an
/// older live version only in a sentence calling it `previous`, a retired
/// one only in a sentence calling it `retired`.
fn operations_problems(page: &str, text: &str, versions: &[WireVersion]) -> Vec<String> {
    let history = section_lines(text, "## Deploying").unwrap_or((0, 0));
    let exempt = table_lines(text);
    mentions(text, versions)
        .into_iter()
        .filter(|m| !(history.0..history.1).contains(&m.line) && !exempt.contains(&m.line))
        .filter_map(|m| {
            let v = entry(versions, m.family, m.version)?;
            let sentence = sentence_at(text, m.at);
            let word = match v.status {
                Status::Current => return None,
                Status::Previous { .. } => "previous",
                Status::Retired { .. } => "retired",
            };
            (!sentence.to_lowercase().contains(word)).then(|| {
                format!(
                    "{page}:{}: `{}` is {word}, and its sentence does not say so: {:?}",
                    m.line,
                    m.text,
                    sentence.trim()
                )
            })
        })
        .collect()
}

fn assert_none(problems: Vec<String>) {
    assert!(
        problems.is_empty(),
        "the docs disagree with crates/uptime-contracts/src/versions.rs:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_live_today_tables_are_the_version_table() {
    let mut problems = Vec::new();
    for page in WITH_VERSION_TABLE {
        let text = read(page);
        let tables = tables_headed(&text, &VERSION_TABLE);
        if tables.len() != 1 {
            problems.push(format!(
                "{page}: {} tables headed {VERSION_TABLE:?}, one wanted",
                tables.len()
            ));
        }
        for table in &tables {
            problems.extend(version_table_problems(page, table, VERSIONS));
        }
    }
    assert_none(problems);
}

#[test]
fn the_subjects_table_has_each_live_version_as_current_or_previous() {
    let page = "docs/architecture.md";
    let text = read(page);
    let tables = tables_headed(&text, &SUBJECTS_TABLE);
    assert_eq!(tables.len(), 1, "{page}: one subjects table");
    assert_none(subjects_table_problems(page, &tables[0], VERSIONS));
}

#[test]
fn prose_names_current_versions_only() {
    let mut problems = Vec::new();
    for page in DESCRIBE_THE_PRESENT {
        let text = read(page);
        problems.extend(unknown_problems(page, &text, VERSIONS));
        problems.extend(not_current_problems(page, &text, VERSIONS));
    }
    assert_none(problems);
}

#[test]
fn operations_md_calls_older_versions_previous_or_retired() {
    let page = "docs/operations.md";
    let text = read(page);
    let mut problems = unknown_problems(page, &text, VERSIONS);
    problems.extend(operations_problems(page, &text, VERSIONS));
    assert_none(problems);
}

// Positive controls: each rule sees the drift it is for (these are the
// very sentences the pages had before the rules). A retired version's
// subject and type are spelled from the table, since the contracts test
// (`no_source_file_names_a_retired_version`) keeps them out of source.

#[test]
fn a_stale_live_today_row_is_refused() {
    let text = "| family | current | previous | retired |\n| --- | --- | --- | --- |\n\
                | `state-changed` | v3 (recorder, one per change) | v2 (read by the notifier; gone after 2027-01-31) | v1 (retired 2026-11-25) |\n";
    let table = &tables_headed(text, &VERSION_TABLE)[0];
    let problems = version_table_problems("old", table, VERSIONS).join("\n");
    assert!(
        problems.contains("`state-changed` current: the page says {3}, versions.rs {4}"),
        "{problems}"
    );
    assert!(
        problems.contains("previous: the page says {2}, versions.rs {3}"),
        "{problems}"
    );
    assert!(problems.contains("no row for `check-due`"), "{problems}");
}

#[test]
fn stale_prose_and_subject_rows_are_refused() {
    let (retired_subject, retired_type) = retired_state_changed();
    let old = format!(
        "transition (a `StateChange`, `state-changed.v3`) and per certificate\n\
         warning (an `SslWarning`, `ssl-expiring.v2`).\n\n\
         into the unversioned type (`CheckResultV2`, `{retired_type}`).\n"
    );
    let problems = not_current_problems("old", &old, VERSIONS);
    assert_eq!(problems.len(), 3, "{problems:#?}");
    let rows = format!(
        "| subject | message |\n| --- | --- |\n\
         | `uptime.events.state_changed.v4` | `StateChange` (schema `StateChangedV4`; previous) |\n\
         | `{retired_subject}` | `{retired_type}` (previous) |\n"
    );
    let problems =
        subjects_table_problems("old", &tables_headed(&rows, &SUBJECTS_TABLE)[0], VERSIONS)
            .join("\n");
    assert!(problems.contains("must say `current`"), "{problems}");
    assert!(problems.contains("was retired on 2026-11-27"), "{problems}");
    assert!(
        problems.contains("no row for `uptime.checks.due.v5`"),
        "{problems}"
    );
}

#[test]
fn an_operations_sentence_must_say_previous_or_retired() {
    let old = "```sh\nuptimectl tap uptime.events.state_changed.v3      # every status change, once\n```\n\n\
               Roll out the checkers. The previous version, `check-result.v2`, is still read. \
               Dead letters of the retired `check-due.v4` expire.\n";
    let problems = operations_problems("old", old, VERSIONS);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(problems[0].contains("state_changed.v3"), "{problems:#?}");
}
