//! Just enough Markdown for the doc-claim tests (`doc_versions`, `doc_keys`,
//! `doc_tables`): the page's pipe tables, its sections by heading, and the
//! backticked spans of a piece of text. Fenced blocks are never tables.

use std::path::PathBuf;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A file of the repository, by its path from the root.
pub fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("read {path}: {e}"))
}

/// One row of a pipe table: its cells, trimmed, and its line (1-based).
#[derive(Debug, Clone)]
pub struct Row {
    pub line: usize,
    pub cells: Vec<String>,
}

/// A pipe table: its header cells and body rows (the `---` row dropped).
#[derive(Debug, Clone)]
pub struct Table {
    pub line: usize,
    pub header: Vec<String>,
    pub rows: Vec<Row>,
}

impl Table {
    /// Whether the header starts with these cells (case-insensitive).
    pub fn starts_with(&self, header: &[&str]) -> bool {
        header.len() <= self.header.len()
            && header
                .iter()
                .zip(&self.header)
                .all(|(want, have)| want.eq_ignore_ascii_case(have))
    }
}

/// The cells of a table line: split on `|` not escaped (`\|`) and not inside
/// a backticked span.
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|');
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut out = Vec::new();
    let mut cell = String::new();
    let mut in_code = false;
    let mut escaped = false;
    for c in inner.chars() {
        match c {
            '`' if !escaped => in_code = !in_code,
            '|' if !escaped && !in_code => {
                out.push(cell.trim().to_string());
                cell.clear();
                continue;
            }
            _ => {}
        }
        escaped = c == '\\' && !escaped;
        cell.push(c);
    }
    out.push(cell.trim().to_string());
    out
}

/// Every pipe table of `text`, outside fenced blocks.
pub fn tables(text: &str) -> Vec<Table> {
    let mut found = Vec::new();
    let mut fenced = false;
    let mut current: Option<Table> = None;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        let is_row = !fenced && line.trim_start().starts_with('|');
        if !is_row {
            found.extend(current.take());
            continue;
        }
        let row = cells(line);
        match current.as_mut() {
            None => {
                current = Some(Table {
                    line: i + 1,
                    header: row,
                    rows: Vec::new(),
                })
            }
            Some(_) if row.iter().all(|c| c.chars().all(|c| "-: ".contains(c))) => {}
            Some(table) => table.rows.push(Row {
                line: i + 1,
                cells: row,
            }),
        }
    }
    found.extend(current);
    found
}

/// The tables of `text` whose header starts with `header`.
pub fn tables_headed(text: &str, header: &[&str]) -> Vec<Table> {
    tables(text)
        .into_iter()
        .filter(|t| t.starts_with(header))
        .collect()
}

/// The backticked spans of `text` (a cell or a paragraph).
pub fn backticked(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// The lines (1-based, inclusive start, exclusive end) of the section under
/// the heading `heading` (`## Tables`), up to the next heading of the same
/// or a higher level.
pub fn section_lines(text: &str, heading: &str) -> Option<(usize, usize)> {
    let level = heading.chars().take_while(|c| *c == '#').count();
    // A `# comment` in a fenced shell block is no heading.
    let mut fenced = false;
    let headings: Vec<Option<usize>> = text
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("```") {
                fenced = !fenced;
            }
            let hashes = l.chars().take_while(|c| *c == '#').count();
            (!fenced && hashes > 0 && l[hashes..].starts_with(' ')).then_some(hashes)
        })
        .collect();
    let start = text
        .lines()
        .zip(&headings)
        .position(|(l, h)| h.is_some() && l.trim_end() == heading)?;
    let end = headings[start + 1..]
        .iter()
        .position(|h| h.is_some_and(|h| h <= level))
        .map(|i| start + 1 + i)
        .unwrap_or(headings.len());
    Some((start + 1, end + 1))
}

#[test]
fn the_markdown_reader_reads_tables_sections_and_spans() {
    let text = "# A\n\n| a | b |\n| --- | --- |\n| `x \\| y` | `p`, `q` |\n| 1 | 2 |\n\n```\n| not | a table |\n```\n## B\ntext\n### C\n```\n# no heading\n```\n## D\n";
    let tables = tables(text);
    assert_eq!(tables.len(), 1);
    assert!(tables[0].starts_with(&["A", "b"]));
    assert_eq!(tables[0].rows.len(), 2);
    assert_eq!(tables[0].rows[0].cells, ["`x \\| y`", "`p`, `q`"]);
    assert_eq!(tables[0].rows[0].line, 5);
    assert_eq!(backticked(&tables[0].rows[0].cells[1]), ["p", "q"]);
    assert_eq!(section_lines(text, "## B"), Some((11, 17)));
    assert_eq!(section_lines(text, "### C"), Some((13, 17)));
    assert_eq!(section_lines(text, "## Z"), None);
}
