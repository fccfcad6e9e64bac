//! Holds the wire to its version policy (`uptime_contracts::versions`): one
//! current and at most one previous version per message family, a committed
//! schema and example for each live version and none for a retired one, and
//! no source file that still names a retired version.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use uptime_contracts::versions::{Status, WireVersion, VERSIONS};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn each_family_has_one_current_and_at_most_one_previous_version() {
    let mut families: BTreeMap<&str, Vec<&WireVersion>> = BTreeMap::new();
    for v in VERSIONS {
        families.entry(v.family).or_default().push(v);
    }
    for (family, versions) in families {
        let current: Vec<u32> = versions
            .iter()
            .filter(|v| v.status == Status::Current)
            .map(|v| v.version)
            .collect();
        let live: Vec<u32> = versions
            .iter()
            .filter(|v| v.status.is_live())
            .map(|v| v.version)
            .collect();
        assert_eq!(current.len(), 1, "{family}: current versions {current:?}");
        assert!(
            live.len() <= 2,
            "{family}: live versions {live:?}; at most the current and the previous may live"
        );
        for v in &versions {
            if matches!(v.status, Status::Previous { .. }) {
                assert!(
                    v.version < current[0],
                    "{family}: previous v{} is newer",
                    v.version
                );
            }
            if v.status == Status::Current {
                assert!(
                    !v.publishers.is_empty(),
                    "{family}: nobody publishes the current version"
                );
            }
            if v.status.is_live() {
                assert!(
                    !v.readers.is_empty(),
                    "{family} v{}: live but read by nobody",
                    v.version
                );
            } else {
                assert!(
                    v.publishers.is_empty() && v.readers.is_empty(),
                    "{family} v{}: retired but still sent or read",
                    v.version
                );
            }
        }
        // Only the newest versions live: a retired version is older than
        // every live one.
        let oldest_live = live.iter().min().copied().unwrap_or(0);
        for v in versions.iter().filter(|v| !v.status.is_live()) {
            assert!(
                v.version < oldest_live,
                "{family}: v{} retired before an older one",
                v.version
            );
        }
    }
}

/// A previous version nobody publishes carries the day it must be gone by,
/// and this fails once that day has passed: retiring it (its type, schema,
/// example and readers) is what makes it pass again.
#[test]
fn no_previous_version_outlives_its_retirement_date() {
    let today = chrono::Utc::now().date_naive();
    for v in VERSIONS {
        let Status::Previous { retire_after } = v.status else {
            continue;
        };
        match retire_after {
            None => assert!(
                !v.publishers.is_empty(),
                "{} v{}: published by nobody, so it needs a retirement date",
                v.family,
                v.version
            ),
            Some(day) => {
                let day = chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d")
                    .unwrap_or_else(|e| panic!("{} v{}: {day:?}: {e}", v.family, v.version));
                assert!(
                    today <= day,
                    "{} v{} was to be retired after {day}: remove its type, schema, example \
                     and readers (uptime_contracts::versions)",
                    v.family,
                    v.version
                );
            }
        }
    }
}

#[test]
fn the_types_are_exactly_the_live_versions() {
    let types: BTreeSet<(String, String)> = uptime_contracts::all_schemas()
        .into_iter()
        .map(|(name, subject, _)| (name.to_string(), subject.to_string()))
        .collect();
    let live: BTreeSet<(String, String)> = VERSIONS
        .iter()
        .filter(|v| v.status.is_live())
        .map(|v| (v.schema_name(), v.subject.to_string()))
        .collect();
    assert_eq!(
        types, live,
        "message types (all_schemas) against the versions table"
    );
}

#[test]
fn proto_schemas_hold_the_live_versions_only() {
    for dir in ["proto-schemas", "proto-schemas/examples"] {
        let files: BTreeSet<String> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter_map(|name| name.strip_suffix(".json").map(str::to_string))
            .collect();
        let live: BTreeSet<String> = VERSIONS
            .iter()
            .filter(|v| v.status.is_live())
            .map(WireVersion::schema_name)
            .collect();
        let retired: Vec<&String> = files.difference(&live).collect();
        let missing: Vec<&String> = live.difference(&files).collect();
        assert!(
            retired.is_empty(),
            "{dir}: schemas of retired or unlisted versions {retired:?}"
        );
        assert!(
            missing.is_empty(),
            "{dir}: no file for live versions {missing:?}"
        );
    }
}

/// `check-due` → `CheckDue`.
fn camel(family: &str) -> String {
    family
        .split('-')
        .map(|w| w[..1].to_uppercase() + &w[1..])
        .collect()
}

/// What code that still handled a retired version would have to name.
fn names_of(v: &WireVersion) -> Vec<String> {
    vec![
        v.subject.to_string(),
        format!(
            "{}_V{}",
            v.family.replace('-', "_").to_uppercase(),
            v.version
        ),
        format!("{}V{}", camel(v.family), v.version),
    ]
}

/// Whether `text` contains `needle` not followed by a character that would
/// make it another name (`FooV1` inside `FooV10`).
fn mentions(text: &str, needle: &str) -> bool {
    text.match_indices(needle).any(|(at, _)| {
        !text[at + needle.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_source_file_names_a_retired_version() {
    let mut files = Vec::new();
    rust_files(&root().join("crates"), &mut files);
    // The table itself spells the retired subjects out.
    let table = root().join("crates/uptime-contracts/src/versions.rs");
    let retired: Vec<(String, String)> = VERSIONS
        .iter()
        .filter(|v| !v.status.is_live())
        .flat_map(|v| names_of(v).into_iter().map(move |n| (v.schema_name(), n)))
        .collect();
    let mut found = Vec::new();
    for file in files.iter().filter(|f| **f != table) {
        let text = std::fs::read_to_string(file).unwrap();
        for (version, name) in &retired {
            if mentions(&text, name) {
                found.push(format!("{} names {name} ({version})", file.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "retired versions still named:\n{}",
        found.join("\n")
    );
}
