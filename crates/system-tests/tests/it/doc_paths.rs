//! docs/architecture.md names files in backticks (`crates/uptime-db/...`,
//! `core/catchup.rs`, `options.rs` in a paragraph about its folder): each
//! must exist, so the map stays true when files move. A name is looked for
//! as the end of a path in the repository (at a `/` boundary), since the
//! page often names a file relative to the crate or folder it is writing
//! about.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file and folder under `dir`, as paths relative to the root with
/// `/` separators, skipping build output and version control.
fn paths(dir: &Path, root: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy();
        if name == "target" || name.starts_with('.') {
            continue;
        }
        let relative = path.strip_prefix(root).unwrap().to_string_lossy();
        out.push(relative.replace('\\', "/"));
        if path.is_dir() {
            paths(&path, root, out);
        }
    }
}

/// Whether `token` (a backticked span) names a file or folder of ours.
fn is_path(token: &str) -> bool {
    const EXTENSIONS: [&str; 7] = [".rs", ".md", ".toml", ".json", ".yaml", ".sql", ".sh"];
    const ROOTS: [&str; 5] = [
        "crates/",
        "docs/",
        "proto-schemas",
        "deploy/",
        "migrations/",
    ];
    let plain = token
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c));
    plain
        && !token.contains("://")
        && (EXTENSIONS.iter().any(|e| token.ends_with(e))
            || ROOTS.iter().any(|r| token.starts_with(r)))
}

/// The backticked spans of `text` (inline code; fenced blocks skipped).
fn backticked(text: &str) -> Vec<&str> {
    let mut spans = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        spans.extend(line.split('`').skip(1).step_by(2));
    }
    spans
}

#[test]
fn every_file_docs_architecture_names_exists() {
    let root = root();
    let text = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let mut all = Vec::new();
    paths(&root, &root, &mut all);
    let missing: Vec<&str> = backticked(&text)
        .into_iter()
        .filter(|t| is_path(t))
        .map(|t| t.trim_end_matches('/'))
        .filter(|t| !all.iter().any(|p| p == t || p.ends_with(&format!("/{t}"))))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/architecture.md names files that do not exist: {missing:?}"
    );
}

#[test]
fn the_path_reader_finds_what_it_should() {
    let text = "see `crates/a.rs`, `x::y`, `nats sub 'uptime.>'`, `proto-schemas/`\n```\n`in/fence.rs`\n```";
    let found: Vec<&str> = backticked(text)
        .into_iter()
        .filter(|t| is_path(t))
        .collect();
    assert_eq!(found, ["crates/a.rs", "proto-schemas/"]);
}
